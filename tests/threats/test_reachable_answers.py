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
import io
import os
import resource
import signal
from contextlib import contextmanager, redirect_stdout

import pytest

from checks import checks_for_lesson
from grader.judge.rebuild import cells_to_run, rebuild
from grader.judge.sandbox import make_scratch, remove_scratch
from grader.lessons import all_lessons
from grader.nbgrader_cells import nbgrader_meta

CALL_TIME_LIMIT = 10  # seconds one check may take on a substitute (most fail at once)
MEMORY_LIMIT = 2 * 2**30  # bytes: a substitute may build huge arrays (a sandbox caps them)


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
    """``(module.name, object)`` for every class and function defined in those modules."""
    found = []
    for module_name in exposed_modules(lesson):
        module = importlib.import_module(module_name)
        for name, value in inspect.getmembers(module):
            if callable(value) and getattr(value, "__module__", None) == module.__name__ \
                    and not name.startswith("_"):
                found.append((f"{module_name}.{name}", value))
    return found


def empty_notebook_namespace(lesson):
    """What the student's process holds for the released, unanswered notebook."""
    namespace = {"__name__": "__main__"}
    for cell in cells_to_run(rebuild(lesson.source(), None).notebook):
        try:
            exec(compile(cell.source, nbgrader_meta(cell).get("grade_id", "cell"), "exec"),
                 namespace)  # noqa: S102 - the course's own cells and its stubs
        except NotImplementedError:
            pass
    return namespace


class TooSlow(Exception):
    pass


@contextmanager
def time_limit(seconds):
    def stop(signum, frame):
        raise TooSlow()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def passes(lesson_checks, check, namespace):
    try:
        with time_limit(CALL_TIME_LIMIT):
            lesson_checks.run(check.name, namespace)
    except (AssertionError, TooSlow):
        return False
    except Exception:  # the substitute broke the probe: no points either
        return False
    return True


def passes_in_a_child(lesson_checks, checks, namespace):
    """Whether any of ``checks`` passes, run in a forked process under the time and
    memory limits a sandbox sets: a substitute that hangs or eats memory scores nothing
    (and must not take the test run down with it)."""
    child = os.fork()
    if child == 0:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
            with redirect_stdout(io.StringIO()):
                passed = any(passes(lesson_checks, check, dict(namespace))
                             for check in checks)
            os._exit(3 if passed else 0)
        except BaseException:
            os._exit(0)
    _, status = os.waitpid(child, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3


@pytest.mark.parametrize("lesson_name", sorted(all_lessons()))
def test_nothing_the_sandbox_holds_stands_in_for_an_answer(lesson_name):
    lesson = all_lessons()[lesson_name]
    lesson_checks = checks_for_lesson(lesson_name)
    quick = [check for check in lesson_checks if not check.learning]
    namespace = empty_notebook_namespace(lesson)
    assert not passes_in_a_child(lesson_checks, quick, namespace)
    candidates = substitutes(lesson)
    assert len(candidates) > 20  # the course's helpers at least
    needed = sorted({name for check in quick for name in check.needs})
    passing = [f"{name} = {origin}" for name in needed for origin, value in candidates
               if passes_in_a_child(lesson_checks,
                                    [check for check in quick if name in check.needs],
                                    {**namespace, name: value})]
    assert passing == []


def test_a_real_answer_in_the_same_place_would_be_caught():
    """The substitution above can fail: lesson 02's own reference module, which its
    sandbox does not hold, passes lesson 02's checks when put in the same place."""
    from replay_buffer import ReplayBuffer

    lesson = all_lessons()["02_replay_buffer"]
    lesson_checks = checks_for_lesson(lesson.name)
    checks = [check for check in lesson_checks
              if not check.learning and "ReplayBuffer" in check.needs]
    namespace = {**empty_notebook_namespace(lesson), "ReplayBuffer": ReplayBuffer}
    assert passes_in_a_child(lesson_checks, checks, namespace)
    assert "replay_buffer" not in exposed_modules(lesson)
