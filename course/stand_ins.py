"""Stand-ins that the loop tests hand to a training loop in place of an agent or a buffer.

They decide nothing a lesson asks students to write: an agent that always plays one
action and learns nothing, and buffers that count what is added and hand out one made-up
transition, so that a test can run a loop for 10,000 steps cheaply and count them. The
grader builds the same objects in the student's process (they are lent by mirroring,
``checks.lending``), which is why they live here, with the public helpers.
"""

import operator

import numpy as np

MAX_BATCH = 1_024  # rows per sample call: loops ask for 1 to 32


def _batch_size(batch_size):
    """``batch_size`` as an int in [1, MAX_BATCH], or ValueError before anything is made."""
    try:
        size = operator.index(batch_size)
    except TypeError:
        raise ValueError(f"the test's buffer takes a whole number as batch_size, not "
                         f"{type(batch_size).__name__}") from None
    if not 1 <= size <= MAX_BATCH:
        raise ValueError(f"the test's buffer hands out 1 to {MAX_BATCH:,} transitions per "
                         f"sample call, not {size}")
    return size


class FixedActionAgent:
    """Always plays ``action`` and learns nothing; ``epsilon`` is there for loops that
    read or decay it (an agent's own business: it says nothing of how this one chooses)."""

    def __init__(self, action, epsilon=0.0):
        self.action = action
        self.epsilon = epsilon

    def get_action(self, state):
        return self.action

    def update(self, state, action, reward, next_state, terminated):
        return None


class CountingBuffer:
    """Counts the transitions added; every batch is ``batch_size`` copies of one made-up
    transition (state 0, action 0, reward -1, next state 0, not done)."""

    def __init__(self):
        self.adds = 0

    def __len__(self):
        return self.adds

    def add(self, obs_t, action, reward, obs_tp1, done):
        self.adds += 1

    def sample(self, batch_size):
        size = _batch_size(batch_size)
        return tuple(np.full(size, value) for value in (0, 0, -1.0, 0, False))


class CountingPrioritizedBuffer(CountingBuffer):
    """CountingBuffer for prioritized loops: weights 1 and slots 0 in every batch, and the
    priorities it is given are ignored."""

    def sample(self, batch_size, beta):
        size = _batch_size(batch_size)
        return (*super().sample(size), np.ones(size), np.zeros(size, dtype=np.int64))

    def update_priorities(self, slots, td_errors):
        return None
