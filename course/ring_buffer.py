"""A replay buffer's storage as preallocated numpy arrays, written round a ring.

Lesson 02 measures why real buffers look like this; lesson 03's prioritized buffer keeps
its transitions in one. Transition number t goes to slot ``t % size``, so when the ring
is full the oldest transition is the one overwritten.
"""

import numpy as np


class NumpyRingBuffer:
    """Preallocated arrays and a write position: O(1) add, O(batch) sample."""

    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size, self.position, self.count = size, 0, 0
        self.rng = np.random.default_rng(seed)
        self.fields = None  # allocated on the first add, when shapes and dtypes are known

    def __len__(self):
        return self.count

    def add(self, *transition):
        """Write one transition (copied into the arrays); return the slot it went to."""
        if self.fields is None:
            self.fields = [np.empty((self.size, *np.shape(x)), dtype=np.asarray(x).dtype)
                           for x in transition]
        slot = self.position
        for field, value in zip(self.fields, transition):
            field[slot] = value
        self.position = (slot + 1) % self.size
        self.count = min(self.count + 1, self.size)
        return slot

    def __getitem__(self, slots):
        """The transitions in ``slots`` (an array of slot numbers), one array per field.

        Fancy indexing copies, so changing a batch never changes the storage.
        """
        return tuple(field[slots] for field in self.fields)

    def sample(self, batch_size):
        """``batch_size`` transitions drawn uniformly with replacement."""
        if self.count == 0:
            raise ValueError("cannot sample from an empty buffer: add transitions first")
        return self[self.rng.integers(self.count, size=batch_size)]
