"""How a check's own objects (environments, agents, recorders) reach the student's code.

In a notebook, a check hands its objects to the student's functions directly. When the
grader checks a submission, the student's code runs in another process, and the check's
objects stay with the grader: they are *lent*, in one of two ways.

- **Mirrored**: the student's process builds its own copy from a recipe (a public
  factory and plain arguments) and uses it at full speed. Calls to the copy's *logged*
  methods, and sets of its *settable* attributes, are written to a transcript that the
  grader replays, in order, on its original, checking that every result is the one the
  copy gave. The original's state is therefore exactly what the student's calls made of
  it, and a copy that was tampered with is caught at its first differing answer. The
  grader may change *pushed* attributes of its original between calls (a training loop
  decays epsilon); they are sent along with the next call.
- **Served**: nothing is copied. The student's process holds a proxy whose *remote*
  methods call the original across the channel, whose *deferred* methods (those that
  return nothing) are queued in the transcript, and whose *readable* attributes are
  read across.

A check declares the way with :func:`mirrored` (per object: the recipe is its
constructor call) or a class attribute ``__lending__ = Served(...)``. In a notebook the
declarations are inert.

A served object's methods run in the grader, with arguments the student's code chose, so
a served declaration also bounds how large those arguments may be (``limits``: per
method and argument, an :class:`AtMost`; every other argument gets
:data:`DEFAULT_LIMIT`). The grader refuses a call that asks for more before running it
(:func:`oversized`), so that no one call can run long or take much memory in the
grader; the check's budget is looked at after every call.
"""

import inspect
import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Mirrored:
    module: str
    name: str  # a qualified name in ``module``: what the student's process calls
    args: tuple
    kwargs: dict
    logged: tuple = ()
    settable: tuple = ()
    pushed: tuple = ()


@dataclass(frozen=True)
class AtMost:
    """How large one argument of a served method may be: at most ``limit``, where an int
    counts as its value (it may be a batch size or a count of draws), an array by its
    elements and a list, tuple or dict by the numbers in it. With ``shape``, a list,
    tuple or 1-d array of ints counts as a shape: the product of its sizes (numpy takes
    one wherever it takes a size: declare it for every size that reaches numpy).
    ``says`` finishes the refusal "the grader's <type> ...".

    With ``values``, an int is a value, never a size (the bounds of ``integers(low,
    high)``): only the numbers in a container are counted. Two arguments that a method
    broadcasts together (``low`` and ``high``, a state and a goal) can ask for the product
    of their sizes: bound each by the square root of what the method may compute.
    """

    limit: int
    says: str = "takes at most {limit:,} numbers in one argument"
    shape: bool = False
    values: bool = False


# Student code's arguments to the grader's objects: at most this many numbers in any
# one argument, and no int over it (an int may be used as a size), unless a declaration
# says otherwise. The largest argument a correct answer passes to a served method is
# a CartPole network's 4,610 parameters (lesson 07's step and load_parameters), every
# other is a batch of at most 64 rows or a state: 65,536 is 14 times the largest, and a
# served method given it runs in well under a second (tests/test_served_limits.py).
DEFAULT_LIMIT = AtMost(65_536, "takes at most {limit:,} numbers in one argument, and no int "
                                "over {limit:,} (it could be a size)")

# A check's stand-in buffer (recording, counting, or handing out the check's batches)
# serves at most this many transitions per sample call. Loop checks ask for 1 to 11, and
# for 32 through lesson 02's default replay_batch_size: 1,024 is 32 times the largest.
STAND_IN_BATCH = AtMost(1_024, "serves at most {limit:,} transitions per call", shape=True)
# ... and takes at most this many priorities per update_priorities call (one per row).
STAND_IN_PRIORITIES = AtMost(1_024, "takes at most {limit:,} priorities per call")


@dataclass(frozen=True)
class Served:
    remote: tuple = ()
    deferred: tuple = ()
    readable: tuple = ()
    settable: tuple = ()
    # method -> {argument name: AtMost}; arguments not named get DEFAULT_LIMIT
    limits: dict = field(default_factory=dict, hash=False)

    def __post_init__(self):
        unknown = set(self.limits) - set(self.remote) - set(self.deferred)
        if unknown:
            raise ValueError(f"limits for methods that are not served: {sorted(unknown)}")


_MIRRORED = {}  # id(object) -> (object, Mirrored); cleared after each check


def mirrored(factory, *args, logged=(), settable=(), pushed=(), original=None, **kwargs):
    """``factory(*args, **kwargs)``, declared as lent by mirroring.

    ``original``, if given, is what the grader keeps and replays the transcript on
    instead of the factory's result (a wrapper that checks the calls it receives); the
    student's copy is still built from the recipe.
    """
    made = factory(*args, **kwargs) if original is None else original
    _MIRRORED[id(made)] = (made, Mirrored(factory.__module__, factory.__qualname__, args,
                                          kwargs, tuple(logged), tuple(settable),
                                          tuple(pushed)))
    return made


def lending_of(value):
    """The :class:`Mirrored` or :class:`Served` declaration of ``value``, or None."""
    entry = _MIRRORED.get(id(value))
    if entry is not None and entry[0] is value:
        return entry[1]
    declaration = getattr(type(value), "__lending__", None)
    return declaration if isinstance(declaration, Served) else None


def forget_mirrored():
    _MIRRORED.clear()


# --- how large a served call's arguments are ------------------------------------------------

_SIGNATURES = {}  # (class, method name) -> its signature, or None when it has none


def oversized(declaration, original, name, args, kwargs):
    """Why the call ``original.name(*args, **kwargs)`` asks more than ``declaration``
    allows (a sentence naming the method, the argument and the limit), or None.

    Arguments that do not fit the method's signature are not judged: the call raises
    TypeError before it does anything."""
    limits = declaration.limits.get(name, {})
    if not limits and all(map(_small_scalar, args)) and all(map(_small_scalar,
                                                                kwargs.values())):
        return None  # an agent's states, actions and rewards: thousands of calls an episode
    signature = _signature(original, name)
    if signature is None:
        named = [(f"argument {number + 1}", value) for number, value in enumerate(args)]
        named += list(kwargs.items())
    else:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return None
        named = []
        for argument, value in bound.arguments.items():
            kind = signature.parameters[argument].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                named += [(argument, item) for item in value]
            elif kind is inspect.Parameter.VAR_KEYWORD:
                named += list(value.items())
            else:
                named.append((argument, value))
    for argument, value in named:
        limit = limits.get(argument, DEFAULT_LIMIT)
        if _too_large(limit, value):
            return (f"{name}({argument}={_shown(value)}): the grader's "
                    f"{type(original).__name__} {limit.says.format(limit=limit.limit)}")
    return None


def _signature(original, name):
    key = (type(original), name)
    if key not in _SIGNATURES:
        try:
            _SIGNATURES[key] = inspect.signature(getattr(original, name))
        except (TypeError, ValueError, AttributeError):
            _SIGNATURES[key] = None
    return _SIGNATURES[key]


def _too_large(limit, value):
    if _is_int(value):
        return not limit.values and abs(int(value)) > limit.limit
    if limit.shape and _is_shape(value):
        size = 1
        for dimension in (value.tolist() if isinstance(value, np.ndarray) else value):
            size *= abs(int(dimension))
            if size > limit.limit:
                return True
        return False
    return numbers_in(value, limit.limit) > limit.limit


def _small_scalar(value):
    kind = type(value)
    if kind is int:
        return abs(value) <= DEFAULT_LIMIT.limit
    return kind is float or kind is bool or value is None


def _is_int(value):
    """An int, a numpy integer, or a 0-d array of one (range() takes each as a size)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_shape(value):
    if isinstance(value, np.ndarray):
        return value.ndim == 1 and value.dtype.kind in "iu" and value.size <= 64
    return isinstance(value, (list, tuple)) and len(value) <= 64 and all(map(_is_int, value))


_SCALARS = frozenset((int, float, bool, type(None)))


def numbers_in(value, cap=math.inf):
    """How many numbers ``value`` holds: an array's elements, the leaves of lists, tuples
    and dicts (keys included), one per scalar, one per 8 characters of a string. Counting
    stops once past ``cap``."""
    if type(value) in _SCALARS:
        return 1
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, str):
        return 1 + len(value) // 8
    if isinstance(value, dict):
        value = [item for pair in value.items() for item in pair]
    elif isinstance(value, (set, frozenset)):
        value = list(value)
    if not isinstance(value, (list, tuple)):
        return 1
    total = 0
    for item in value:
        total += 1 if type(item) in _SCALARS else numbers_in(item, cap - total)
        if total > cap:
            break
    return total


def _shown(value):
    if isinstance(value, np.ndarray):
        return f"array({value.item()!r})" if value.ndim == 0 else \
            f"<array of shape {value.shape}>"
    text = repr(value)
    if len(text) <= 40:
        return text
    if isinstance(value, (list, tuple, dict)):
        return f"<{type(value).__name__} of {len(value):,} items>"
    return text[:37] + "..."
