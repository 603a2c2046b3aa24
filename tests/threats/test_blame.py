"""A failure caused by other code says so: the code that raised, or whose own checks fail.

- In a student edition a later lesson imports the student's *own* earlier work (its module
  is made from their notebook by ``course/your_work.py``). When that work is unfinished or
  wrong, a later lesson's test names it, with its lesson, instead of the code it called.
- Within a lesson, a failure that comes from another of the student's functions names it,
  in a notebook and in the grader alike (``checks.framework.Callee``, ``failure_of``).
"""

import sys
import types
from pathlib import Path

import nbformat
import pytest

from bugs import edited
from bugs.lesson07 import GRADIENT_SIGN_FLIPPED, TD_ERRORS_AFTER_THE_STEP
from checks import checks_for_lesson
from checks.framework import VISIBLE_SALT
from course.your_work import exports_of
from grader.lessons import all_lessons
from submission_factory import TEST_SALT, grade, write_submission
from support.in_process import fake_submission, namespace_for

REPOSITORY = Path(__file__).resolve().parents[2]

TD_TARGETS_NOT_WRITTEN = '''\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    """Not written yet."""
    raise NotImplementedError("td_targets")
'''


@pytest.fixture
def own_lesson_01(monkeypatch, tmp_path):
    """Install ``qlearning`` as a student edition makes it: from a lesson 01 notebook of
    the student's (``answers`` put into the solution; None: the released stubs)."""
    def install(answers=None):
        if answers is None:
            folder = REPOSITORY / "notebooks"  # the student version: every answer a stub
        else:
            folder = tmp_path / "notebooks"
            folder.mkdir(exist_ok=True)
            source = all_lessons()["01_qlearning"].source()
            nbformat.write(fake_submission(source, answers), folder / "01_qlearning.ipynb")
        module = types.ModuleType("qlearning")
        module.__dict__.update(exports_of("01_qlearning", notebooks=folder))
        monkeypatch.setitem(sys.modules, "qlearning", module)
        return module
    return install


def released_stubs(lesson, grade_ids):
    """``{grade_id: source}`` of those answer cells as the student version releases them."""
    student = nbformat.read(REPOSITORY / "notebooks" / f"{lesson}.ipynb", as_version=4)
    stubs = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell.source
             for cell in student.cells}
    return {grade_id: stubs[grade_id] for grade_id in grade_ids}


AGENT_METHODS = ("get_value", "get_best_action", "get_action", "update")


@pytest.mark.parametrize("written, named", [
    # the released lesson 01: lesson 02's loop hands lesson 01's play_and_train its agent
    ((), "play_and_train of lesson 01"),
    # lesson 01's loop written, its agent not: the first agent method the loop reaches
    (("play_and_train",), "QLearningAgent.get_action of lesson 01"),
], ids=["nothing written", "loop written"])
def test_a_later_lesson_names_the_earlier_lessons_unwritten_code(own_lesson_01, monkeypatch,
                                                                 written, named):
    # lesson 02 complete on top of the student's own, unfinished lesson 01; the edition
    # has no course loop, so its learning test drives the buffer with the student's loop
    own_lesson_01(None if not written else released_stubs("01_qlearning", AGENT_METHODS))
    monkeypatch.setattr("checks.taxi_training.reference_code", lambda lesson, name: None)
    namespace = namespace_for("02_replay_buffer")
    outcome = checks_for_lesson("02_replay_buffer").outcome("test_replay_learning",
                                                            namespace, VISIBLE_SALT)
    assert outcome.status == "not written"
    assert ("play_and_train_with_replay(env, agent, replay, 8) did not run to the end: the "
            f"NotImplementedError comes from {named}, which is not written yet.") \
        in outcome.detail, outcome.detail
    assert "play_and_train_with_replay(env, agent, replay, 8) is not written" not in \
        outcome.detail
    # the cause is known: no guesses about other code beside it
    assert "This may come from" not in outcome.detail, outcome.detail


VALUE_FROM_THE_FIRST_ACTION = edited("01_qlearning", "get_value", (
    "return max(self.get_qvalue(state, action) for action in self.get_legal_actions(state))",
    "return self.get_qvalue(state, next(iter(self.get_legal_actions(state))))"))


def test_a_later_lesson_names_the_earlier_lessons_failing_checks(own_lesson_01):
    own_lesson_01({"get_value": VALUE_FROM_THE_FIRST_ACTION})
    namespace = namespace_for("03_prioritized_replay")
    lesson_checks = checks_for_lesson("03_prioritized_replay")
    outcome = lesson_checks.outcome("test_weighted_update", namespace, VISIBLE_SALT)
    assert outcome.status == "failed"
    note = outcome.detail.split(" This may come from ", 1)[-1]
    assert note.startswith("QLearningAgent of lesson 01, which this code calls: its own tests "
                           "fail ('get_value and get_best_action': state "), outcome.detail
    assert "'update on fixed transitions': " in note  # update bootstraps with get_value
    # with the course's own lesson 01 (the full course, and every grading) nothing is named
    sys.modules.pop("qlearning")
    reference = namespace_for("03_prioritized_replay")
    assert lesson_checks.outcome("test_weighted_update", reference, VISIBLE_SALT).passed


def graded_and_in_notebook(tmp_path, answers, only):
    """{check: (grader's status, feedback)} and {check: (notebook's status, feedback)} of
    a lesson 07 notebook with ``answers``, on the same inputs."""
    result = grade(write_submission(tmp_path, "07_neural_replay", answers), only=only)
    lesson_checks, namespace = checks_for_lesson("07_neural_replay"), \
        namespace_for("07_neural_replay", answers)
    in_notebook = {name: lesson_checks.outcome(name, namespace, TEST_SALT) for name in only}
    return ({check.id: (check.status, check.feedback) for check in result.checks},
            {name: (outcome.status, outcome.feedback) for name, outcome in in_notebook.items()})


def test_a_step_that_calls_unwritten_targets_names_them_in_both(tmp_path):
    graded, in_notebook = graded_and_in_notebook(
        tmp_path, {"td_targets": TD_TARGETS_NOT_WRITTEN}, {"test_td_targets", "test_dqn_step"})
    assert graded == in_notebook
    status, feedback = graded["test_dqn_step"]
    assert status == "not written"
    assert feedback.endswith("dqn_step(online, target, optimizer, replay, batch_size, discount, "
                             "beta) did not run to the end: the NotImplementedError comes from "
                             "td_targets of this lesson, which is not written yet."), feedback


def test_a_failed_step_names_the_failing_gradient_it_calls_in_both(tmp_path):
    graded, in_notebook = graded_and_in_notebook(
        tmp_path, {"huber_loss_gradient": GRADIENT_SIGN_FLIPPED,
                   "dqn_step": TD_ERRORS_AFTER_THE_STEP},
        {"test_huber_gradient", "test_dqn_step"})
    assert graded == in_notebook
    status, feedback = graded["test_dqn_step"]
    assert status == "failed"
    assert "This may come from huber_loss_gradient of this lesson, which this code calls: its " \
           "own test fails ('its gradient, against finite differences': batch #1" in feedback
    assert "td_targets" not in feedback.split("This may come from")[1]  # its test passes
