"""The course's Taxi loop foresees the samples of a student's buffer (checks/foreseen_samples.py):
a round trip per few hundred steps instead of one per step, and exactly what a round trip
per step gives, whatever the buffer does.

Each buffer below is trained twice in a student's process: foreseen, and the ordinary way
(``near=None``: the run made one call at a time). The Q-tables must be equal to the bit, and
a run that fails must fail with the same words. A buffer whose choices depend on what it
stores is foreseen wrongly, and its run is redone the ordinary way, with the global
generators put back as they were when it began.
"""

import numpy as np
import pytest

from checks.framework import ProbeError, call_student
from checks.taxi_training import train_buffer_on_taxi
from support.student_processes import requests_counted, student_process

BUDGET = 60.0  # CPU seconds: far more than a run here takes
EPISODES = 6
SETTINGS = dict(alpha=0.5, epsilon=0.25, discount=0.99, epsilon_decay=0.99)

BUFFERS = '''
import numpy as np


class Uniform:
    """Uniform with replacement, from its own generator."""

    def __init__(self, size, seed=None):
        self.size, self.storage, self.rng = size, [], np.random.default_rng(seed)

    def add(self, *transition):
        self.storage = (self.storage + [transition])[-self.size:]

    def sample(self, batch_size):
        rows = [self.storage[i] for i in self.rng.integers(len(self.storage), size=batch_size)]
        return tuple(np.array(field) for field in zip(*rows))


class GlobalGenerator(Uniform):
    """Draws from numpy's global generator: the fork has its own copy of it."""

    def sample(self, batch_size):
        rows = [self.storage[i] for i in np.random.randint(len(self.storage), size=batch_size)]
        return tuple(np.array(field) for field in zip(*rows))


class Picky(Uniform):
    """Draws from the global generator, and draws again for a row of an illegal move
    (reward -10): what it stores decides what it returns, so it is foreseen wrongly."""

    def sample(self, batch_size):
        rows = []
        for _ in range(batch_size):
            row = self.storage[np.random.randint(len(self.storage))]
            if row[2] == -10:
                row = self.storage[np.random.randint(len(self.storage))]
            rows.append(row)
        return tuple(np.array(field) for field in zip(*rows))


class Breaks(Uniform):
    """Refuses to sample once it holds 150 transitions."""

    def sample(self, batch_size):
        if len(self.storage) >= 150:
            raise ValueError("the buffer is tired")
        return super().sample(batch_size)
'''


@pytest.fixture(scope="module")
def process():
    with student_process("02_replay_buffer", BUFFERS, BUDGET) as process:
        yield process


def trained(process, name, foreseen):
    """``(Q-tables or the words of the ProbeError the run raised, round trips)`` of a run
    of the course's loop on Taxi with the student's buffer ``name``."""
    from replay_buffer import play_and_train_with_replay

    try:
        with requests_counted(process) as trips, process.budget(BUDGET):
            process.seed(11)
            made_by = process.lookup([name])[name]
            try:
                tables = train_buffer_on_taxi(
                    lambda: call_student(f"{name}(1000, 3)", made_by, 1000, 3),
                    play_and_train_with_replay, 7, [EPISODES // 2, EPISODES], 8, 1, **SETTINGS,
                    near=made_by if foreseen else None)
            except ProbeError as error:
                return str(error), len(trips)
        return [table.tolist() for table in tables], len(trips)
    finally:
        process.forget()


@pytest.mark.parametrize("name", ["Uniform", "GlobalGenerator"])
def test_a_buffer_that_stores_blindly_is_foreseen_to_the_bit(process, name):
    foreseen, trips = trained(process, name, foreseen=True)
    ordinary, ordinary_trips = trained(process, name, foreseen=False)
    assert foreseen == ordinary and not isinstance(foreseen, str)
    assert ordinary_trips > 500 and trips < ordinary_trips / 20


def test_a_buffer_that_looks_at_what_it_stores_is_redone_the_ordinary_way(process):
    foreseen, trips = trained(process, "Picky", foreseen=True)
    ordinary, ordinary_trips = trained(process, "Picky", foreseen=False)
    assert foreseen == ordinary and not isinstance(foreseen, str)
    assert trips > ordinary_trips  # the foreseen run's few, then the ordinary run's


def test_a_run_that_fails_fails_with_the_same_words(process):
    foreseen, _ = trained(process, "Breaks", foreseen=True)
    ordinary, _ = trained(process, "Breaks", foreseen=False)
    assert isinstance(foreseen, str) and foreseen == ordinary
    assert "the buffer is tired" in foreseen


def test_the_fork_that_plays_ahead_ends_with_the_check(process):
    trained(process, "Uniform", foreseen=True)  # forgets the check's objects at the end
    server = process._server_pid()
    with open(f"/proc/{server}/task/{server}/children") as children:
        assert children.read().split() == []


def test_placeholders_are_never_taxi_states():
    from checks.foreseen_samples import FIRST, PLACEHOLDER, STEP
    from course.taxi import N_STATES

    assert PLACEHOLDER >= N_STATES and FIRST[0] == FIRST[3] == PLACEHOLDER
    assert np.all(np.array(STEP[:4]) >= 0) and STEP[0] == STEP[3] == 1


# --- the Blind Cliffwalk: the whole loop is the course's, so the fork runs it -------------

PRIORITIZED = '''
import os

import numpy as np


class Proportional:
    """Samples in proportion to priorities (|TD error| + 0.01), from its own generator."""

    def __init__(self, size, seed=None):
        self.rows, self.priorities = [], []
        self.rng, self.born = np.random.default_rng(seed), os.getpid()

    def add(self, *transition):
        self.rows.append(transition)
        self.priorities.append(max(self.priorities, default=1.0))

    def sample(self, batch_size, beta):
        p = np.array(self.priorities) / sum(self.priorities)
        slots = self.rng.choice(len(self.rows), size=batch_size, p=p)
        fields = [np.array(field) for field in zip(*(self.rows[s] for s in slots))]
        return (*fields, np.ones(batch_size), slots)

    def update_priorities(self, slots, td_errors):
        for slot, error in zip(slots, td_errors):
            self.priorities[slot] = abs(error) + 0.01


class KnowsItsFork(Proportional):
    """Samples otherwise in a process that is not the one it was made in: its fork's
    answers are wrong, and its run is redone."""

    def sample(self, batch_size, beta):
        if os.getpid() != self.born:
            self.rng.random()
        return super().sample(batch_size, beta)


class TiresOfPriorities(Proportional):
    def update_priorities(self, slots, td_errors):
        if len(self.rows) and sum(1 for p in self.priorities if p != 1.0) > 40:
            raise RuntimeError("enough priorities")
        super().update_priorities(slots, td_errors)
'''


@pytest.fixture(scope="module")
def prioritized():
    with student_process("03_prioritized_replay", PRIORITIZED, BUDGET) as process:
        yield process


def cliffwalk_slots(process, name, foreseen):
    """``(slots drawn or the words of the ProbeError the run raised, round trips)``."""
    from checks.foreseen_samples import ForeseenLoop, foreseen_or_redone
    from checks.framework import call_later
    from checks.lesson03_prioritized_replay.cliffwalk_learning import BufferUnderTest
    from course.blind_cliffwalk import learn_from_replay, learn_from_replay_of, replay_memory

    memory = replay_memory(5, 3)

    def learned(foreseen):
        buffer = call_student(f"{name}()", made_by, len(memory), 3)
        for row in memory.rows():
            call_later("add", buffer.add, *row)
        replay = (ForeseenLoop(buffer, learn_from_replay_of, 5, 3, 400, 0.4) if foreseen
                  else BufferUnderTest(buffer))
        run = call_student("learning", learn_from_replay, replay, memory, 400, 0.4)
        if foreseen:
            replay.finish()
        return run.slots

    try:
        with requests_counted(process) as trips, process.budget(BUDGET):
            process.seed(11)
            made_by = process.lookup([name])[name]
            try:
                return foreseen_or_redone(made_by if foreseen else None, learned), len(trips)
            except ProbeError as error:
                return str(error), len(trips)
    finally:
        process.forget()


def test_the_course_loop_run_on_a_fork_foresees_a_prioritized_buffer(prioritized):
    foreseen, trips = cliffwalk_slots(prioritized, "Proportional", foreseen=True)
    ordinary, ordinary_trips = cliffwalk_slots(prioritized, "Proportional", foreseen=False)
    assert foreseen == ordinary and isinstance(foreseen, list) and len(foreseen) > 100
    assert trips < ordinary_trips / 20


def test_a_buffer_that_answers_its_fork_otherwise_is_redone(prioritized):
    foreseen, trips = cliffwalk_slots(prioritized, "KnowsItsFork", foreseen=True)
    ordinary, ordinary_trips = cliffwalk_slots(prioritized, "KnowsItsFork", foreseen=False)
    assert foreseen == ordinary and isinstance(foreseen, list)
    assert trips > ordinary_trips


def test_a_loop_whose_buffer_fails_fails_with_the_same_words(prioritized):
    foreseen, _ = cliffwalk_slots(prioritized, "TiresOfPriorities", foreseen=True)
    ordinary, _ = cliffwalk_slots(prioritized, "TiresOfPriorities", foreseen=False)
    assert isinstance(foreseen, str) and foreseen == ordinary
    assert "enough priorities" in foreseen
