"""Nothing a sandbox holds answers its lesson: a submission that imports or copies it in
place of an answer scores what the empty notebook scores, zero, on every check.

For every lesson, every class and function defined in a module its sandbox exposes (the
course's helpers it may import, the reference modules of earlier lessons) is put in the
place of every name the lesson's checks take from the notebook, in the otherwise empty
notebook; no check may pass. Importing a module, `from m import *` and copying its
source with `inspect.getsource` all come to one of these substitutions.
"""

import importlib
import inspect
import os

import pytest

from checks import checks_for_lesson
from grader.judge.sandbox import make_scratch, remove_scratch
from grader.lessons import all_lessons
from support.substitute_trials import TrialServer, empty_notebook_namespace, trials_in_a_fork


def exposed_modules(lesson):
    """The importable module names a lesson's sandbox holds (besides its runtime)."""
    scratch = make_scratch(lesson)
    try:
        names = [f"course.{path.stem}" for path in (scratch.lib / "course").glob("*.py")
                 if path.stem != "__init__"]
        names += [path.stem for path in scratch.lib.glob("*.py")]
    finally:
        remove_scratch(scratch)
    return sorted(names)


def substitutes(lesson):
    """The dotted names of every class and function defined in those modules."""
    found = []
    for module_name in exposed_modules(lesson):
        module = importlib.import_module(module_name)
        for name, value in inspect.getmembers(module):
            if callable(value) and getattr(value, "__module__", None) == module.__name__ \
                    and not name.startswith("_"):
                found.append(f"{module_name}.{name}")
    return found


@pytest.fixture(scope="module")
def trials():
    """Runs each trial in a fork of a small server (tests/support/substitute_trials.py)."""
    server = TrialServer()
    yield server
    server.close()


@pytest.mark.parametrize("lesson_name", sorted(all_lessons()))
def test_nothing_the_sandbox_holds_stands_in_for_an_answer(lesson_name, trials):
    lesson = all_lessons()[lesson_name]
    quick = [check for check in checks_for_lesson(lesson_name) if not check.learning]
    assert trials.passed(lesson_name, [[None, None, [check.name for check in quick]]]) == [
        False]
    candidates = substitutes(lesson)
    assert len(candidates) > 20  # the course's helpers at least
    needed = sorted({name for check in quick for name in check.needs})
    pairs = [(name, origin) for name in needed for origin in candidates]
    outcomes = trials.passed(lesson_name, [
        [name, origin, [check.name for check in quick if name in check.needs]]
        for name, origin in pairs])
    assert [f"{name} = {origin}" for (name, origin), passed in zip(pairs, outcomes)
            if passed] == []


def test_a_real_answer_in_the_same_place_would_be_caught(trials):
    """The substitution above can fail: lesson 02's own reference module, which its
    sandbox does not hold, passes lesson 02's checks when put in the same place."""
    lesson = all_lessons()["02_replay_buffer"]
    checks = [check.name for check in checks_for_lesson(lesson.name)
              if not check.learning and "ReplayBuffer" in check.needs]
    assert trials.passed(lesson.name,
                         [["ReplayBuffer", "replay_buffer.ReplayBuffer", checks]]) == [True]
    assert "replay_buffer" not in exposed_modules(lesson)



def ends_its_process(*args, **kwargs):
    os._exit(1)


def test_a_stand_in_that_ends_its_process_scores_nothing_and_the_next_is_still_tried():
    """Trials that share a child: the one that ends it fails, the next runs in a new one."""
    from replay_buffer import ReplayBuffer

    lesson = all_lessons()["02_replay_buffer"]
    checks = [check.name for check in checks_for_lesson(lesson.name)
              if not check.learning and "ReplayBuffer" in check.needs]
    trials = [("ReplayBuffer", ends_its_process, checks), ("ReplayBuffer", ReplayBuffer, checks)]
    assert trials_in_a_fork(checks_for_lesson(lesson.name), trials,
                            empty_notebook_namespace(lesson)) == [False, True]
