"""Whether a call changed the arrays and lists it was given, or handed one of them back.

Every function and method of the lessons leaves its inputs as they were. The checks hold
each call of a student's code to that: they copy its plain-data arguments (numpy arrays,
lists, tuples and dicts of them) before the call and compare after it. In the grader the
call runs in the student's process, so that process compares and says which changed
(``grader/judge/sandbox_runtime/student_server.py``); in a notebook the checks compare.
"""

import collections
import math

import numpy as np

_PLAIN_SCALARS = (type(None), bool, int, float, complex, str, bytes, np.generic)


def _plain(value, depth=0):
    """Whether ``value`` is plain data all the way down (no objects with behaviour)."""
    if depth > 32:
        return False
    if isinstance(value, _PLAIN_SCALARS):
        return True
    if type(value) is np.ndarray:
        return value.dtype.kind in "biufcSU"
    if type(value) in (list, tuple):
        return all(_plain(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(_plain(item, depth + 1) for item in value.values())
    return False


def _copied(value):
    """A deep copy of plain data (``_plain``): arrays copied whole, containers rebuilt,
    scalars (immutable) shared; what ``copy.deepcopy`` gives, at a fraction of its cost."""
    kind = type(value)
    if kind is np.ndarray:
        return value.copy()
    if kind is list:
        return [_copied(item) for item in value]
    if kind is tuple:
        return tuple(_copied(item) for item in value)
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    return value


def snapshot(args, kwargs):
    """``[(where, copy)]`` of the mutable plain-data arguments (arrays, lists, dicts, and
    tuples holding them): ``where`` is a position or a keyword's name."""
    taken = []
    for where, value in [*enumerate(args), *kwargs.items()]:
        if isinstance(value, (np.ndarray, list, tuple, dict)) and _plain(value):
            taken.append((where, value, (_copied(value), _writeable(value))))
    return taken


def as_returned(value):
    """``value`` as a call returned it: a copy of plain data, so that a later call that
    refills the same arrays cannot change what this one gave (as a separate call's reply
    would have carried it); anything else as it is."""
    if isinstance(value, (np.ndarray, list, tuple, dict)) and _plain(value):
        return _copied(value)
    return value


class EarlierResults:
    """The last EARLIER_CALLS calls of each function (not method): their plain-data
    results and arguments, with copies of them. A function that keeps its result, or the
    caller's array, and refills it on a later call (one array reused "to save time")
    changes what its caller already holds. What a call returned or was given stays the
    caller's. (More than one call: a check may call again in between, with the same
    numbers as numpy scalars.)"""

    def __init__(self):
        self._kept = {}  # function -> deque of its last calls' plain-data values
        self._copies = {}  # function -> [(value, its copy)], taken right before this call

    def before_call(self, function):
        """Copy ``function``'s earlier results and arguments as they are now, right before
        it is called again: what its caller did to them in between is the caller's own
        business (a check may perturb its own array between calls)."""
        self._copies[function] = [(value, _copied(value))
                                  for call in self._kept.get(function, ()) for value in call]

    def changed_by(self, function, result, taken=()):
        """Whether one of ``function``'s earlier results or arguments no longer equals its
        copy from :meth:`before_call` (this call changed it); then this call's ``result``
        and arguments ``taken`` (from :func:`snapshot`) are kept with them."""
        moved = any(not same(value, before) for value, before in self._copies.pop(function, ()))
        kept = [value for _, value, _ in taken or ()]
        if isinstance(result, (np.ndarray, list, tuple, dict)) and _plain(result):
            kept.append(result)
        self._kept.setdefault(function, collections.deque(maxlen=EARLIER_CALLS)).append(kept)
        return moved

    def clear(self):
        self._kept.clear()
        self._copies.clear()


EARLIER_CALLS = 4  # how many calls of one function are kept to compare
EARLIER_RESULT = "an earlier result"  # what a call changed: an earlier call's result or argument


def _writeable(value):
    """Whether an array argument may be written (a call that freezes a caller's array
    changes it too); None for anything else."""
    return bool(value.flags.writeable) if isinstance(value, np.ndarray) else None


def changed(taken):
    """The ``where`` of each argument in ``taken`` (from :func:`snapshot`) that no longer
    equals its copy, or whose array was made read-only."""
    return [where for where, value, (before, writeable) in taken
            if not same(value, before) or _writeable(value) != writeable]


def aliased(taken, result):
    """The ``where`` of each array argument in ``taken`` (from :func:`snapshot`) that the
    ``result`` hands back, itself or a view of it (a caller's input must stay its own:
    changing the result would change it)."""
    arrays = [result] if isinstance(result, np.ndarray) else [
        item for item in result if isinstance(item, np.ndarray)] if isinstance(
        result, (tuple, list)) else []
    return [where for where, value, _ in taken if isinstance(value, np.ndarray)
            and any(np.may_share_memory(value, array) for array in arrays)]


def same(value, other):
    """Equal in type, shape, dtype and every element (NaN equal to NaN)."""
    if type(value) is not type(other):
        return False
    if isinstance(value, np.ndarray):
        if value.dtype != other.dtype or value.shape != other.shape:
            return False
        if value.tobytes() == other.tobytes():  # the same bits: equal, NaN or not
            return True
        if value.dtype.kind in "fc":
            return bool(np.array_equal(value, other, equal_nan=True))
        return bool(np.array_equal(value, other))
    if isinstance(value, (list, tuple)):
        return len(value) == len(other) and all(map(same, value, other))
    if isinstance(value, dict):
        return value.keys() == other.keys() and all(same(value[k], other[k]) for k in value)
    if isinstance(value, float) and math.isnan(value):
        return math.isnan(other)
    if isinstance(value, np.floating) and np.isnan(value):
        return bool(np.isnan(other))
    return bool(value == other)
