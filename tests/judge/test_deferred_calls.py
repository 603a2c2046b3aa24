"""A call deferred to the next request (``StudentProcess.defer``): with a description, what
it raises is a ProbeError naming it; without one, the very exception the call would have
raised, so that a caller that defers a call sees what it saw when it made the call itself
(lesson 04's HER loop, checks/lesson04_hindsight_replay/her_learning.py)."""

import pytest

from checks.framework import ProbeError
from support.student_processes import student_process

BUFFER = '''
class Buffer:
    def __init__(self):
        self.stored = []

    def store(self, value):
        if value == 3:
            raise ValueError("no threes")
        self.stored.append(value)

    def sample(self):
        return list(self.stored)
'''


@pytest.fixture(scope="module")
def process():
    with student_process("04_hindsight_replay", BUFFER) as process:
        yield process


def test_a_deferred_call_without_a_description_raises_as_the_call_would(process):
    with process.budget(30.0):
        buffer = process.lookup(["Buffer"])["Buffer"]()
        with pytest.raises(Exception) as direct:
            buffer.store(3)
        buffer.store(1)
        process.defer(None, buffer, (2,), {}, method="store")
        assert buffer.sample() == [1, 2]  # made before the request it rode with
        process.defer(None, buffer, (3,), {}, method="store")
        with pytest.raises(Exception) as deferred:
            buffer.sample()
        assert type(deferred.value) is type(direct.value)
        assert not isinstance(deferred.value, ProbeError)
        assert str(deferred.value) == str(direct.value) == "no threes"
        process.defer("store(3)", buffer, (3,), {}, method="store")
        with pytest.raises(ProbeError, match=r"store\(3\) raised ValueError: no threes"):
            buffer.sample()
    process.forget()
