"""Bounded records: what the grader's stand-ins keep of the calls student code makes.

A recorder (a scripted agent, a recording buffer, a recording optimizer) keeps every call
it receives so that the verdict can read them. Lent to student code, it runs in the
grader, so a loop that calls it without end would fill the grader's memory. A
:class:`Record` is the list it keeps them in: past ``calls`` entries, or past ``numbers``
numbers in them all, it refuses the call (a :class:`~checks.framework.ProbeError`, which
costs the check) instead of growing. :class:`RecordSet` does the same for a set of
distinct entries.

The bounds are far above what any check's correct run records: the longest run is a
10,000-step episode whose loop updates the agent once per step (10,000 entries of five
numbers); every other run records at most a few hundred calls. 100,000 entries and
2,000,000 numbers (some 80 MB of Python objects at most, per record) leave ten times
that and more.
"""

from checks.framework import ProbeError
from checks.lending import numbers_in

MAX_CALLS = 100_000
MAX_NUMBERS = 2_000_000


class _Bounded:
    def _bound(self, method, calls, numbers):
        self.method, self.calls, self.numbers, self.held = method, calls, numbers, 0

    def _make_room(self, entry):
        if len(self) >= self.calls:
            raise ProbeError(self._too_many())
        self.held += numbers_in(entry, self.numbers)
        if self.held > self.numbers:
            raise ProbeError(f"your code's calls of {self.method} gave the grader more than "
                             f"{self.numbers:,} numbers to record in one check")


class Record(_Bounded, list):
    """A list of calls to ``method``, refusing more than ``calls`` of them or ``numbers``
    numbers in all. Plain data to a verdict (it is a list)."""

    def __init__(self, method, calls=MAX_CALLS, numbers=MAX_NUMBERS):
        super().__init__()
        self._bound(method, calls, numbers)

    def _too_many(self):
        return f"your code called {self.method} more than {self.calls:,} times in one check"

    def append(self, entry):
        self._make_room(entry)
        super().append(entry)


class RecordSet(_Bounded, set):
    """A set of the distinct ``what`` that calls to ``method`` produced, refusing to hold
    more than ``calls`` of them or ``numbers`` numbers in all."""

    def __init__(self, method, what, calls=MAX_CALLS, numbers=MAX_NUMBERS):
        super().__init__()
        self._bound(method, calls, numbers)
        self.what = what

    def _too_many(self):
        return (f"your code's calls of {self.method} produced more than {self.calls:,} "
                f"distinct {self.what} in one check")

    def add(self, entry):
        if entry not in self:
            self._make_room(entry)
            super().add(entry)
