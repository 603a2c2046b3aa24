"""A run the grader has refused is stopped (StudentProcess._refused, the student server's
``stop_if_told``): once a transcript of calls on mirrored objects is refused, the student's
process raises in the student's code at its next transcript, so a refused loop does not
run on to its end, and whatever the code does with that error, the check is refused as
before."""

import pytest

from checks.framework import ProbeError
from checks.lending import forget_mirrored, mirrored
from course.stand_ins import CountingBuffer
from grader.judge.student_process import TranscriptMismatch
from support.student_processes import student_process

CALLS = 100_000
LOOPS = '''
made = []


def fills(buffer, times):
    for step in range(times):
        buffer.add(step, 0, -1.0, step + 1, False)
        made.append(step)


def fills_whatever_it_is_told(buffer, times):
    for step in range(times):
        try:
            buffer.add(step, 0, -1.0, step + 1, False)
        except RuntimeError:
            pass
        made.append(step)
'''


class RefusesAfter(CountingBuffer):
    """The grader's original: refuses the ``limit``-th add."""

    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def add(self, *transition):
        super().add(*transition)
        if self.adds >= self.limit:
            raise ProbeError(f"add number {self.adds} is one too many")


@pytest.fixture(scope="module")
def process():
    with student_process("02_replay_buffer", LOOPS) as process:
        yield process


@pytest.mark.parametrize("loop", ["fills", "fills_whatever_it_is_told"])
def test_a_refused_loop_stops_soon_and_is_refused(process, loop):
    buffer = mirrored(CountingBuffer, logged=("add",), original=RefusesAfter(1_000))
    try:
        with process.budget(60.0):
            process.run_cell("made.clear()")
            with pytest.raises(TranscriptMismatch, match="add number 1000 is one too many"):
                process.lookup([loop])[loop](buffer, CALLS)
            made = process.lookup(["made"])["made"]
    finally:
        forget_mirrored()
        process.forget()
    if loop == "fills":  # stopped a few transcripts after the refusal, not 100,000 calls on
        # how many depends on how far the student's process ran ahead while the grader
        # replayed: at most what the channel's buffer holds (208 KB here, about 3,000
        # adds) and a transcript or two more, however the machine is loaded
        assert 1_000 <= len(made) < 10_000
    else:  # it goes on, but every call raises, and the check is refused all the same
        assert len(made) == CALLS


def test_an_honest_loop_runs_to_its_end(process):
    buffer = mirrored(CountingBuffer, logged=("add",), original=RefusesAfter(10 * CALLS))
    try:
        with process.budget(60.0):
            process.run_cell("made.clear()")
            process.lookup(["fills"])["fills"](buffer, CALLS)
            assert len(process.lookup(["made"])["made"]) == CALLS
    finally:
        forget_mirrored()
        process.forget()
    assert buffer.adds == CALLS
