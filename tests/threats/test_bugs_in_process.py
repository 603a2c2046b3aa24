"""Every known student bug costs points on the check that names it, and only there.

The notebooks' code runs in this process (``tests/support/in_process.py``), rebuilt by the
grader from the source notebook with a bug's answer cells put in, and the checks run on
it directly, with the visible salt and with a hidden one. Grading through kernels is
tested elsewhere; here the question is only whether the checks tell right from wrong.

Learning checks take 5 to 20 seconds each, so they run only for the reference solution
and for bugs that they are meant to catch, and a bug's run uses the hidden salt only (the
reference runs them with the visible one too, in the solution notebooks' test cells).
A bug's own quick check runs here with the visible salt: test_lending_parity.py judges it
with the hidden one, in the notebook and in the grader, and requires it to fail by its
rule there. The checks a bug is known to fail too run with both salts; the checks it must
not cost, with the hidden one. A correct variant runs, with both salts, every quick check
that runs its code (any other runs the reference's code alone).
"""

import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from checks import checks_for_lesson  # noqa: E402
from checks.framework import VISIBLE_SALT  # noqa: E402
from grader.lessons import all_lessons  # noqa: E402
from tests.bugs import ALL_BUGS, LESSONS  # noqa: E402
from tests.bugs.correct_variants import CORRECT_VARIANTS  # noqa: E402
from tests.support.in_process import answer_cells, checks_running, namespace_for  # noqa: E402

# A hidden salt for the bug suite; the reference is also graded with two more.
BUG_SUITE_SALT = "bug-suite-hidden-salt"
REFERENCE_HIDDEN_SALTS = (BUG_SUITE_SALT, "second-hidden-salt", "third-hidden-salt")
SALTS = (VISIBLE_SALT, BUG_SUITE_SALT)
LEARNING_CHECKS = {check.name for lesson in LESSONS for check in checks_for_lesson(lesson)
                   if check.learning}
# The issues ask for at least this many bugs per lesson.
MINIMUM_BUGS = {"01_qlearning": 8, "02_replay_buffer": 12, "03_prioritized_replay": 10,
                "04_hindsight_replay": 10, "05_combined_replay": 8, "06_capstone": 6,
                 "07_neural_replay": 10, "08_nstep_replay": 12}
# Tests are collected slowest first, so pytest-xdist starts the learning runs early.
SLOWEST_FIRST = sorted(ALL_BUGS, key=lambda bug: bug.check not in LEARNING_CHECKS)


def feedback_if_failed(lesson, check, namespace, salt, monkeypatch):
    """Run one check as a notebook test cell would; its failure message, or None.

    Anything but an AssertionError (a crash inside the check) propagates and errors the
    test: checks must turn every fault of the student's code into feedback.
    """
    checks = checks_for_lesson(lesson)
    if salt == VISIBLE_SALT:  # the public inputs only (with GRADER_SALT set, run() would
        monkeypatch.delenv("GRADER_SALT", raising=False)  # run them twice)
    else:
        monkeypatch.setenv("GRADER_SALT", salt)
    try:
        checks.run(check, namespace, hidden=salt != VISIBLE_SALT)
    except AssertionError as failure:
        return str(failure)
    return None


def quick_checks(lesson):
    return [check.name for check in checks_for_lesson(lesson)
            if check.name not in LEARNING_CHECKS]


def bug_id(bug):
    return bug.name


# --- correct code -----------------------------------------------------------------------

@pytest.mark.parametrize("salt", (VISIBLE_SALT, *REFERENCE_HIDDEN_SALTS))
@pytest.mark.parametrize("lesson", LESSONS)
def test_reference_solution_passes_every_check(lesson, salt, monkeypatch):
    """Learning checks (seconds each) run with the bug suite's hidden salt here (the
    solution notebooks' test cells run them with the visible one); the rest with all
    four. benchmarks/grading.py runs every check over hundreds of salts."""
    namespace = namespace_for(lesson)
    failures = {check.name: text for check in checks_for_lesson(lesson)
                if salt == BUG_SUITE_SALT or not check.learning
                if (text := feedback_if_failed(lesson, check.name, namespace, salt,
                                               monkeypatch))}
    assert not failures


@pytest.mark.parametrize("variant", CORRECT_VARIANTS, ids=lambda variant: variant.name)
def test_correct_variant_passes_every_quick_check_that_runs_its_code(variant, monkeypatch):
    namespace = namespace_for(variant.lesson, variant.answers)
    checks = checks_running(variant.lesson, variant.answers)
    assert checks, f"{variant.name} changes no code a quick check runs"
    failures = {(check, salt): text for check in checks for salt in SALTS
                if (text := feedback_if_failed(variant.lesson, check, namespace, salt,
                                               monkeypatch))}
    assert not failures


# --- bugs -------------------------------------------------------------------------------

# buggy code may compute NaNs: its numpy warnings are part of the bug, not of the test
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("bug", SLOWEST_FIRST, ids=bug_id)
def test_bug_fails_the_check_that_names_it(bug, monkeypatch):
    namespace = namespace_for(bug.lesson, bug.answers)
    # a quick check's hidden salt: test_lending_parity.py's, in the notebook and the grader
    for salt in (BUG_SUITE_SALT,) if bug.check in LEARNING_CHECKS else (VISIBLE_SALT,):
        feedback = feedback_if_failed(bug.lesson, bug.check, namespace, salt, monkeypatch)
        assert feedback is not None, (
            f"{bug.name} ({bug.description}) passed {bug.check} with salt {salt!r}")
        assert feedback.split(":", 1)[-1].strip(), f"{bug.check} failed without feedback"
        assert "Traceback" not in feedback, feedback
        assert feedback.rstrip().endswith(f"[rule: {bug.rule}]"), (
            f"{bug.name} should fail {bug.check} by its rule {bug.rule!r}: {feedback}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("bug", ALL_BUGS, ids=bug_id)
def test_bug_costs_no_other_check(bug, monkeypatch):
    """Other quick checks pass; those in ``also_fails`` do fail (so the list stays true).

    Only the quick checks that run the bug's cells are run: any other runs the reference's
    code alone, and test_reference_solution_passes_every_check passes it."""
    namespace = namespace_for(bug.lesson, bug.answers)
    others = [name for name in checks_running(bug.lesson, bug.answers) if name != bug.check]
    others += [name for name in bug.also_fails if name not in others]
    for check in others:
        outcomes = {salt: feedback_if_failed(bug.lesson, check, namespace, salt, monkeypatch)
                    for salt in (SALTS if check in bug.also_fails else (BUG_SUITE_SALT,))}
        if check in bug.also_fails:
            assert any(outcomes.values()), (
                f"{bug.name}: {check} is listed in also_fails but passes with every salt")
        else:
            failures = {salt: text for salt, text in outcomes.items() if text}
            assert not failures, f"{bug.name} also fails {check}: {failures}"


# --- the suite itself -------------------------------------------------------------------

def test_the_suite_covers_every_lesson():
    assert set(MINIMUM_BUGS) == set(LESSONS)
    for lesson, minimum in MINIMUM_BUGS.items():
        assert len([bug for bug in ALL_BUGS if bug.lesson == lesson]) >= minimum, lesson


@pytest.mark.parametrize("bug", ALL_BUGS, ids=bug_id)
def test_bug_names_real_checks_and_answer_cells(bug):
    names = {check.name for check in checks_for_lesson(bug.lesson)}
    assert {bug.check, *bug.also_fails} <= names
    answers = answer_cells(all_lessons()[bug.lesson].source())
    assert set(bug.answers) <= set(answers)
    for grade_id, source in bug.answers.items():
        decorator = next((line for line in answers[grade_id].source.splitlines()
                          if line.startswith("@add_to_class(")), None)
        if decorator is not None:
            assert decorator in source.splitlines(), f"{grade_id}: keep {decorator}"


def test_a_test_cell_also_runs_the_hidden_inputs_when_the_instructor_sets_a_salt(
        monkeypatch, capsys):
    # nbgrader's route: released test cells call run(name, globals()) only; the hidden
    # inputs come from GRADER_SALT in the grading environment.
    lesson = "02_replay_buffer"
    checks, namespace = checks_for_lesson(lesson), namespace_for(lesson)
    check = quick_checks(lesson)[0]
    monkeypatch.delenv("GRADER_SALT", raising=False)
    checks.run(check, namespace)
    student_sees = capsys.readouterr().out.splitlines()
    monkeypatch.setenv("GRADER_SALT", BUG_SUITE_SALT)
    checks.run(check, namespace)
    instructor_sees = capsys.readouterr().out.splitlines()
    assert len(student_sees) == 1 and "hidden" not in student_sees[0]
    assert len(instructor_sees) == 2 and "hidden inputs" in instructor_sees[1]
