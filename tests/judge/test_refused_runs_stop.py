"""A run the grader has refused is stopped (StudentProcess._refused, the student server's
``stop_if_told``): once a transcript of calls on mirrored objects is refused, the student's
process raises in the student's code at its next transcript, so a refused loop does not
run on to its end, and whatever the code does with that error, the check is refused as
before."""

import re
import socket

import pytest

from checks.framework import ProbeError
from checks.lending import forget_mirrored, mirrored
from course.stand_ins import CountingBuffer
from grader.judge.sandbox import RUNTIME_SOURCE
from grader.judge.student_process import TranscriptMismatch
from support.student_processes import student_process

CALLS = 100_000
# entries the student's process sends in one transcript (its server's TRANSCRIPT_BATCH)
TRANSCRIPT_BATCH = int(re.search(r"^TRANSCRIPT_BATCH = (\d+)", (
    RUNTIME_SOURCE / "student_server.py").read_text(), re.MULTILINE).group(1))
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


def most_run_past_a_refusal():
    """How many adds a loop can make before it learns of a refusal at the 1,000th, however
    the machine is loaded: the student's process runs ahead of the grader's replay only
    as far as the channel's buffer lets it (its sends then wait), and it looks for the
    stop at each transcript it sends. So: the refused transcript and the one before,
    what the buffer holds (an add's entry is over 60 bytes), and two transcripts more."""
    sender, receiver = socket.socketpair()
    with sender, receiver:
        buffered = sender.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    return 4 * TRANSCRIPT_BATCH + buffered // 60


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
        assert 1_000 <= len(made) < most_run_past_a_refusal()
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
