"""The grader's side of a student's process (grader/judge/student_process.py): the
student's objects are driven across the channel and only plain values come back, the
student's exceptions arrive as exceptions a probe can catch (never one that would stop
the grader), a call past its budget is interrupted and the process lives on, and a
process that dies is lost, stopped, and can be started again.

The processes here run without the sandbox's namespaces (``isolate=False``): what the
sandbox confines is tested in tests/threats/test_grader_sandbox.py and
tests/judge/test_sandbox_resources.py; here it is the channel and the proxies.
"""

import numpy as np
import pytest

from grader.judge.sandbox import make_scratch, remove_scratch
from grader.judge.student_process import (StudentException, StudentInterrupted, StudentObject,
                                          StudentProcess, StudentProcessLost,
                                          rebuilt_exception)
from grader.lessons import all_lessons
from support.student_processes import student_process

BUDGET = 30.0  # CPU seconds: far more than any request here takes
STUDENT_CODE = '''
import numpy as np


class NotEnough(Exception):
    pass


class Buffer:
    def __init__(self):
        self.items = []
        self.name = "mine"

    def add(self, item):
        self.items.append(item)

    def __len__(self):
        return len(self.items)

    def __contains__(self, item):
        return item in self.items

    def __iter__(self):
        return iter(self.items)

    def sample(self, n):
        if n > len(self.items):
            raise ValueError(f"only {len(self.items)} items")
        return np.asarray(self.items[-n:], dtype=np.float32)

    def sample_more(self, n):
        raise NotEnough(f"{n} is too many")

    def leave(self):
        raise SystemExit(3)

    def end_iteration(self):
        raise StopIteration


buffer = Buffer()
'''


def started(isolate=False):
    scratch = make_scratch(all_lessons()["01_qlearning"])
    process = StudentProcess(scratch, memory_mb=1024, disk_mb=16, isolate=isolate)
    process.start()
    return process, scratch


@pytest.fixture(scope="module")
def process():
    with student_process("01_qlearning", STUDENT_CODE, BUDGET) as process:
        yield process


@pytest.fixture
def buffer(process):
    with process.budget(BUDGET):
        process.run_cell("buffer = Buffer()")
        yield process.lookup(["buffer"])["buffer"]
        process.forget()


def test_a_cell_gives_ok_or_its_exception_and_the_process_goes_on(process):
    with process.budget(BUDGET):
        assert process.run_cell("total = sum(range(10))") == {"status": "ok"}
        assert process.run_cell("1 / 0") == {"status": "error", "type": "ZeroDivisionError",
                                             "message": "division by zero"}
        assert process.lookup(["total", "nowhere"]) == {"total": 45}


def test_the_students_objects_are_driven_across_and_plain_values_come_back(process, buffer):
    with process.budget(BUDGET):
        assert isinstance(buffer, StudentObject)
        assert repr(buffer) == "<Buffer in the student's process>"
        for item in (1.5, 2.5, 3.5):
            assert buffer.add(item) is None
        assert len(buffer) == 3 and 2.5 in buffer and 9.0 not in buffer
        assert list(buffer) == [1.5, 2.5, 3.5]
        sampled = buffer.sample(2)
        assert type(sampled) is np.ndarray and sampled.dtype == np.float32
        np.testing.assert_array_equal(sampled, [2.5, 3.5])
        items = buffer.items  # a copy, here: changing it changes nothing there
        items.append(99.0)
        assert len(buffer) == 3
        buffer.name = "renamed"
        assert buffer.name == "renamed"


def test_the_students_exceptions_are_ones_a_probe_can_catch(process, buffer):
    with process.budget(BUDGET):
        with pytest.raises(ValueError, match="only 0 items"):
            buffer.sample(1)
        with pytest.raises(StudentException, match="4 is too many") as own:
            buffer.sample_more(4)
        assert type(own.value).__name__ == "NotEnough" and not isinstance(own.value, ValueError)
        # what would stop the grader or a generator is an ordinary exception here
        for method in (buffer.leave, buffer.end_iteration):
            with pytest.raises(StudentException) as caught:
                method()
            assert type(caught.value).__name__ in ("SystemExit", "StopIteration")
        assert len(buffer) == 0  # the process lives on


def test_a_copy_kept_in_the_students_process_is_the_students_to_change(process):
    with process.budget(BUDGET):
        mine = {"scores": [1, 2]}
        kept = process.keep(mine)
        assert isinstance(kept, StudentObject) and kept["scores"] == [1, 2]
        kept["scores"] = [3]
        assert kept["scores"] == [3] and mine == {"scores": [1, 2]}


def test_a_call_past_its_budget_is_interrupted_and_the_process_keeps_its_state(process):
    with process.budget(BUDGET):
        process.run_cell("before = 'kept'")
    with process.budget(0.3):
        with pytest.raises(StudentInterrupted) as interrupted:
            process.run_cell("while True:\n    pass")
    assert interrupted.value.alive and interrupted.value.reason == "timeout"
    assert interrupted.value.spent.kind == "cpu" and interrupted.value.spent.cpu_seconds >= 0.3
    assert process.alive()
    with process.budget(BUDGET):
        assert process.lookup(["before"]) == {"before": "kept"}


def test_a_process_that_dies_is_lost_stopped_and_can_be_started_again():
    process, scratch = started()
    try:
        with process.budget(BUDGET):
            with pytest.raises(StudentProcessLost) as lost:
                process.run_cell("import os\nos._exit(3)")
            assert lost.value.reason == "died" and not lost.value.alive
            assert not isinstance(lost.value, Exception)  # probes' `except Exception` miss it
            assert not process.alive()
            with pytest.raises(StudentProcessLost, match="the process is not running"):
                process.run_cell("x = 1")
        process.start()
        with process.budget(BUDGET):
            assert process.run_cell("x = 1") == {"status": "ok"}
            assert process.lookup(["x"]) == {"x": 1}
        assert process.restarts == 1
    finally:
        process.stop()
        remove_scratch(scratch)


def test_what_cannot_cross_is_refused_before_anything_is_sent(process):
    never_started = StudentProcess(None, memory_mb=1024, disk_mb=16)
    with pytest.raises(TypeError, match="cannot lend its object to student code"):
        never_started.keep(object())  # with no lending declaration
    elsewhere = StudentObject(process, 1, False, "Buffer")  # another student's object
    with pytest.raises(ValueError, match="an object of another student's process"):
        never_started.keep(elsewhere)
    # protocol lookups (numpy's, copy's) never go across: this one would raise
    # StudentProcessLost, since the process was never started
    proxy = StudentObject(never_started, 1, False, "Buffer")
    assert getattr(proxy, "__array_interface__", None) is None
    with pytest.raises(StudentProcessLost, match="the process is not running"):
        proxy.items


@pytest.mark.parametrize("told, kind, name", [
    ({"type": "KeyError", "message": "'x'"}, KeyError, "KeyError"),
    ({"type": "NotEnough", "message": "m"}, StudentException, "NotEnough"),
    ({"type": "KeyboardInterrupt", "message": "m"}, StudentException, "KeyboardInterrupt"),
    ({"type": "GeneratorExit", "message": "m"}, StudentException, "GeneratorExit"),
    ({"type": "not a name", "message": "m"}, Exception, "Exception"),
    ({"type": "A" * 81, "message": "m"}, Exception, "Exception"),
    ({"type": ["ValueError"], "message": "m"}, Exception, "Exception"),
    ("not even a dict", Exception, "Exception"),
], ids=["builtin", "own class", "KeyboardInterrupt", "GeneratorExit", "not a name", "too long",
        "not text", "not a dict"])
def test_an_exception_told_by_the_student_process_is_never_one_that_stops_the_grader(
        told, kind, name):
    exception = rebuilt_exception(told)
    assert isinstance(exception, kind) and isinstance(exception, Exception)
    assert type(exception).__name__ == name


def test_the_same_student_exception_name_is_the_same_class_and_its_origin_is_kept_short():
    first = rebuilt_exception({"type": "NotEnough", "message": "a\x1b[31m\nb",
                               "origin": ["sample", "02_replay_buffer"]})
    second = rebuilt_exception({"type": "NotEnough", "message": "c"})
    assert type(first) is type(second)
    assert first.student_origin == ("sample", "02_replay_buffer")
    assert "\x1b" not in str(first)
    for origin in (["sample"], ["", "02_replay_buffer"], [1, 2], "sample", None):
        assert rebuilt_exception({"type": "ValueError", "message": "m",
                                  "origin": origin}).student_origin is None
    long = rebuilt_exception({"type": "ValueError", "origin": ["f" * 500, "02_replay_buffer"]})
    assert len(long.student_origin[0]) <= 80


def test_the_library_that_raised_is_kept_as_short_printable_words_or_not_at_all():
    told = rebuilt_exception({"type": "ValueError", "message": "high <= 0",
                              "library": "numpy.random\x1b[2J" + "x" * 500})
    assert told.raised_in_library.startswith("numpy.random?")
    assert len(told.raised_in_library) <= 80
    for library in (None, 7, ["numpy"]):
        assert rebuilt_exception({"type": "ValueError", "message": "m",
                                  "library": library}).raised_in_library is None
