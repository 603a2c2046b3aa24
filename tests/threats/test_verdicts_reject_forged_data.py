"""A verdict must never pass data that is missing or cut short.

Probes run in the student's kernel, so their data could be forged. Forging *correct*
data means computing correct results, which is the assignment; forging *empty* data must
not be an easier way. Each verdict here gets real probe data from the reference modules
with every list emptied, and with every list truncated to one item.
"""

import importlib

import pytest

from checks import checks_for_lesson
from grader.lessons import all_lessons

REFERENCE = {name: vars(importlib.import_module(lesson.reference_module))
             for name, lesson in all_lessons().items()}
CASES = [(lesson, check.name) for lesson in REFERENCE
         for check in checks_for_lesson(lesson) if not check.learning]


def shrink(data, keep):
    """``data`` with every list cut to its first ``keep`` items, recursively."""
    if isinstance(data, list):
        return [shrink(item, keep) for item in data[:keep]]
    if isinstance(data, dict):
        return {key: shrink(value, keep) for key, value in data.items()}
    return data


def judge(check, inputs, data):
    try:
        return check.verdict(inputs, data).passed
    except Exception:  # the grader reports this as an error worth 0 points
        return False


@pytest.mark.parametrize("lesson, name", CASES)
def test_verdict_rejects_emptied_and_truncated_data(lesson, name):
    checks = checks_for_lesson(lesson)
    check = checks[name]
    inputs = checks.inputs(name, "forgery-test")
    data = check.probe(inputs, **{n: REFERENCE[lesson][n] for n in check.needs})
    assert check.verdict(inputs, data).passed, "the reference must pass its own check"
    for keep in (0, 1):
        assert not judge(check, inputs, shrink(data, keep)), \
            f"{lesson}/{name} passed data whose lists were cut to {keep} item(s)"


@pytest.mark.parametrize("lesson, name, data", [
    ("01_qlearning", "test_learning", {"qtables": []}),
    ("01_qlearning", "test_learning", {"qtables": [[[0.0] * 6] * 500]}),
    ("02_replay_buffer", "test_replay_learning", {"snapshots": []}),
    ("03_prioritized_replay", "test_cliffwalk_learning", {"slots": []}),
    ("03_prioritized_replay", "test_cliffwalk_learning", {"slots": [[], [], []]}),
    ("03_prioritized_replay", "test_cliffwalk_learning", {"slots": [[-1] * 10] * 3}),
    ("04_hindsight_replay", "test_her_learning", {"qtables": []}),
    ("04_hindsight_replay", "test_her_learning",
     {"qtables": [{"shape": [2, 2, 1], "dtype": "float32", "base64": "AAAAAAAAAAAAAAAAAAAAAA=="}] * 2}),
    ("04_hindsight_replay", "test_her_learning", {"qtables": [[[0.0]]] * 2}),
    ("07_neural_replay", "test_dqn_learning", {"parameters": []}),
    ("07_neural_replay", "test_dqn_learning",
     {"parameters": [[{"shape": [1], "dtype": "float64", "base64": "AAAAAAAAAAA="}]] * 2}),
])
def test_learning_verdicts_reject_missing_qtables(lesson, name, data):
    checks = checks_for_lesson(lesson)
    inputs = checks.inputs(name, "forgery-test")
    assert not judge(checks[name], inputs, data)
