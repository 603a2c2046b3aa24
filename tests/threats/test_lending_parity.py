"""A notebook's test cell and the grader give the same verdict on the same inputs.

Each lesson's reference answers, every correct variant and every bug of ``tests/bugs`` are
judged twice with the same hidden salt: in this process, as a notebook's test cell judges
them (``LessonChecks.outcome``: the grader's objects lent through the views of
``checks/lending.py``), and through the grader's sandbox (the student's process holds the
code, the lent objects cross the channel). The two must agree check by check, on the
status and the points.

To stay within CI's time, one sandbox per lesson grades every version of its answers in
turn (``NotebookGrading.load``). The reference is compared on every quick check, and a
correct variant on the quick checks whose code runs its changed cells: those that need a
name the cells define, or call it (``Callee``). A bug is compared where its verdict is
the catalogue's point: the check that names it and those it is known to fail too (its
points there, partial credit included, must be the same in both), and its own check must
fail by the bug's rule (test_bugs_in_process.py holds it to that with the visible salt).
That the bug costs no other check is ``test_bugs_in_process.py``'s to show, in the
notebook; what a lent object does on passing code, the reference's and the variants'
comparisons show. Learning checks (seconds to minutes each) are left to
``test_bugs_in_process.py`` and the graded example class.
"""

import pytest

from bugs import ALL_BUGS, LESSONS, edited
from bugs.correct_variants import CORRECT_VARIANTS
from checks import checks_for_lesson
from grader.judge.grade_notebook import NotebookGrading
from grader.judge.rebuild import rebuild
from grader.judge.sandbox import (DEFAULT_DISK_MB, DEFAULT_MEMORY_MB, make_scratch,
                                  remove_scratch)
from grader.lessons import all_lessons, answer_stubs
from grader.nbgrader_cells import autograded_cells, nbgrader_meta
from support.in_process import checks_running, fake_submission, namespace_for
from test_bugs_in_process import BUG_SUITE_SALT

TIME_LIMIT = 10.0  # CPU seconds per cell and per check, as the other grading tests allow


# Code that uses what a lent object does not offer, though the class it stands for has
# it: a notebook's test refuses it as the grader does (before, only the grader did).
BEYOND_THE_LENDING = {"07_neural_replay": {
    "targets_from_the_networks_private_layers": {"td_targets": edited(
        "07_neural_replay", "td_targets", (
            "target_network.predict(next_observations)",
            "target_network._layers(next_observations)[-1]"))},
    "step_predicting_through_the_optimizers_network": {"dqn_step": edited(
        "07_neural_replay", "dqn_step", (
            "q_values = online.predict(observations)",
            "q_values = optimizer.network.predict(observations)"))},
}}


def versions(lesson):
    """(name, answers, checks compared, the bug or None) of the lesson's reference,
    correct variants and bugs, and of code that uses more than the lent objects offer."""
    return [("reference", {}, checks_running(lesson, {}), None),
            *((variant.name, variant.answers, checks_running(lesson, variant.answers), None)
              for variant in CORRECT_VARIANTS if variant.lesson == lesson),
            *((bug.name, bug.answers, compared_on(bug), bug) for bug in ALL_BUGS
              if bug.lesson == lesson),
            *((name, answers, checks_running(lesson, answers), None)
              for name, answers in BEYOND_THE_LENDING.get(lesson, {}).items())]


def compared_on(bug):
    """The quick checks a bug is compared on: its own and those it is known to fail
    (learning checks are test_bugs_in_process.py's)."""
    learning = {check.name for check in checks_for_lesson(bug.lesson) if check.learning}
    names = [name for name in checks_running(bug.lesson, bug.answers)
             if name == bug.check or name in bug.also_fails if name not in learning]
    assert bug.check in learning or bug.check in names, (bug.name, names)
    return names


def in_the_notebook(lesson, answers, names):
    lesson_checks, namespace = checks_for_lesson(lesson), namespace_for(lesson, answers)
    points = {nbgrader_meta(cell)["grade_id"]: float(nbgrader_meta(cell).get("points", 0))
              for cell in autograded_cells(all_lessons()[lesson].source())}
    outcomes = {name: lesson_checks.outcome(name, namespace, BUG_SUITE_SALT) for name in names}
    return {name: (outcome.status, round(points[name] * outcome.fraction, 6))
            for name, outcome in outcomes.items()}, outcomes


def in_the_grader(grading, rebuilt, names):
    grading.load(rebuilt)
    cells = {nbgrader_meta(cell)["grade_id"]: cell for cell in autograded_cells(rebuilt.notebook)}
    results = [grading.grade_check(cells[name]) for name in names]
    return {result.id: (result.status, result.score) for result in results}


# buggy code may compute NaNs: its numpy warnings are part of the bug, not of the test
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("lesson", LESSONS)
def test_the_notebook_and_the_grader_agree_on_every_version(lesson):
    info = all_lessons()[lesson]
    source = info.source()
    scratch = make_scratch(info)
    stubs = answer_stubs(lesson)  # as released: made once, not for every version
    grading = NotebookGrading(info, rebuild(source, None, stubs), scratch, BUG_SUITE_SALT,
                              DEFAULT_MEMORY_MB, DEFAULT_DISK_MB, True,
                              cell_time_limit=TIME_LIMIT, check_time_limit=TIME_LIMIT)
    disagreements, missed, compared = {}, {}, 0
    try:
        for name, answers, names, bug in versions(lesson):
            if not names:  # a learning check's bug that fails no quick check
                continue
            rebuilt = rebuild(source, fake_submission(source, answers), stubs)
            graded = in_the_grader(grading, rebuilt, names)
            judged, outcomes = in_the_notebook(lesson, answers, names)
            compared += len(names)
            disagreements.update({(name, check): {"grader": graded[check],
                                                  "notebook": judged[check]}
                                  for check in names if graded[check] != judged[check]})
            if bug is not None and bug.check in outcomes:  # its own check, hidden inputs
                own = outcomes[bug.check]
                if own.passed or own.rule is None or own.rule.name != bug.rule \
                        or "Traceback" in own.feedback:
                    missed[name] = own.feedback
    finally:
        grading.close()
        remove_scratch(scratch)
    quick = [check.name for check in checks_for_lesson(lesson) if not check.learning]
    assert versions(lesson)[0][2] == quick  # the reference, on every quick check
    assert compared > len(quick)
    assert not disagreements
    assert not missed, "bugs that do not fail their own check by its rule with the " \
        f"hidden salt: {missed}"


def test_what_a_lent_object_does_not_offer_fails_in_the_notebook_too():
    # a lent object refuses what its lending does not offer, and the refusal is a failure
    # of the rule lent-as-stated (checks.contracts), with no points
    lesson = "07_neural_replay"
    lesson_checks = checks_for_lesson(lesson)
    for name, answers in BEYOND_THE_LENDING[lesson].items():
        namespace = namespace_for(lesson, answers)
        for check in checks_running(lesson, answers):
            outcome = lesson_checks.outcome(check, namespace, BUG_SUITE_SALT)
            assert outcome.status == "failed" and outcome.fraction == 0, (name, check, outcome)
            assert outcome.rule is not None and outcome.rule.name == "lent-as-stated", (
                name, check, outcome.feedback)
