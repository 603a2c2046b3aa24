"""Generators a check lends to a student's buffer as its ``rng``, served by the grader.

A lesson's buffer draws from its own generator, ``self.rng``: a check can put one of these
in its place and see the buffer's draws arrive (:class:`CountingGenerator`), or steer them
(lesson 03's ``TopOfTheRange``). The grader keeps the generator and serves each draw across
the boundary, so the sizes a call may ask for are bounded here.
"""

import numpy as np

from checks.lending import AtMost, Served

# What student code may draw from the grader's generator in one call: the buffers under
# test draw one number per row of a batch, or one per stored transition; 65,536 is
# thousands of times that, and numpy draws it in milliseconds. The bounds of a range may
# be arrays (one per row) that numpy broadcasts together: 256 numbers each.
DRAWS = AtMost(65_536, "draws at most {limit:,} numbers per call", shape=True)
POPULATION = AtMost(65_536, "draws from at most {limit:,} items")
BOUNDS = AtMost(256, "takes at most {limit:,} numbers for each bound of a range", values=True)
GENERATOR_LIMITS = {"random": {"size": DRAWS},
                    "uniform": {"low": BOUNDS, "high": BOUNDS, "size": DRAWS},
                    "integers": {"low": BOUNDS, "high": BOUNDS, "size": DRAWS},
                    "choice": {"a": POPULATION, "size": DRAWS},
                    "permutation": {"x": POPULATION}}


class CountingGenerator(np.random.Generator):
    """numpy's generator, counting the calls drawn from it (``draws``)."""

    __lending__ = Served(remote=tuple(GENERATOR_LIMITS), limits=GENERATOR_LIMITS)

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.draws = 0

    def random(self, size=None, dtype=np.float64, out=None):
        self.draws += 1
        return super().random(size, dtype, out)

    def uniform(self, low=0.0, high=1.0, size=None):
        self.draws += 1
        return super().uniform(low, high, size)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        self.draws += 1
        return super().integers(low, high, size, dtype, endpoint)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        self.draws += 1
        return super().choice(a, size, replace, p, axis, shuffle)

    def permutation(self, x, axis=0):
        self.draws += 1
        return super().permutation(x, axis)
