"""A probe's repeated draws (``call_student_repeatedly``) cross to the student's process in
one round trip, and are what the same calls one by one would be: the same results in the
same order, each call with its own copy of the arguments, and the first error reported
as the call that raised, with what ran before it kept."""

import pytest

from checks.framework import ProbeError, call_student, call_student_repeatedly
from grader.judge.sandbox import make_scratch, remove_scratch
from grader.judge.student_process import StudentProcess
from grader.lessons import all_lessons

STUDENT_CODE = '''
class Counter:
    def __init__(self):
        self.calls = 0

    def draw(self, seen):
        self.calls += 1
        seen.append(self.calls)  # a call that changes its argument: the next gets a fresh copy
        if self.calls == 5:
            raise KeyError("the fifth call")
        return self.calls * 10 + len(seen)


counter = Counter()
'''


@pytest.fixture
def counter_in_a_sandbox():
    scratch = make_scratch(all_lessons()["01_qlearning"])
    process = StudentProcess(scratch, memory_mb=1024, disk_mb=16)
    try:
        process.start()
        with process.budget(60):
            assert process.run_cell(STUDENT_CODE)["status"] == "ok"
            yield process, process.lookup(["counter"])["counter"]
    finally:
        process.stop()
        remove_scratch(scratch)


def test_repeated_calls_give_what_calls_one_by_one_give(counter_in_a_sandbox):
    process, counter = counter_in_a_sandbox
    requests = []
    original = process._request
    process._request = lambda message: requests.append(message["op"]) or original(message)
    assert call_student_repeatedly("draw(seen)", counter.draw, 3, []) == [11, 21, 31]
    # one round trip for the three calls (after the one that looked up counter.draw)
    assert requests.count("call_repeatedly") == 1 and "call" not in requests
    assert call_student("draw(seen)", counter.draw, []) == 41  # the same object, called on


def test_the_first_error_ends_the_calls_and_names_the_call(counter_in_a_sandbox):
    process, counter = counter_in_a_sandbox
    with pytest.raises(ProbeError, match=r"draw\(seen\) raised KeyError: .*the fifth call"):
        call_student_repeatedly("draw(seen)", counter.draw, 10, [])
    # the four calls before it ran, as they would have one by one, and none after it
    assert call_student("draw(seen)", counter.draw, []) == 61


def test_in_a_notebook_the_calls_are_made_one_by_one():
    calls = []

    def draw(seen):
        calls.append(list(seen))
        seen.append(1)
        return len(calls)

    assert call_student_repeatedly("draw(seen)", draw, 3, []) == [1, 2, 3]
    assert calls == [[], [1], [1, 1]]  # here the caller's own list: Python's own semantics
