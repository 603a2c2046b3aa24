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
  read across. A *predicted* remote method's answer may also come ahead of its call:
  with the answer to one call the grader sends what the original would answer to the
  next ones if the student's code went on as an honest loop does (the original's
  ``answers_ahead``), and the proxy answers a later call from them only when that call,
  and every call logged since the last answer, are exactly the ones foreseen. Each such
  answer is written to the transcript, and the grader replays it on its original like
  any call: an answer the original would not give is refused. A loop that goes its own
  way only waits for its answers again.

A check declares the way with :func:`mirrored` (per object: the recipe is its
constructor call) or a class attribute ``__lending__ = Served(...)``. In a notebook the
student's code gets views of the objects that allow, refuse and copy what the grader's
lending does (the end of this module), so that a visible test and the grader agree.

A served object's methods run in the grader, with arguments the student's code chose, so
a served declaration also bounds how large those arguments may be (``limits``: per
method and argument, an :class:`AtMost`; every other argument gets
:data:`DEFAULT_LIMIT`). The grader refuses a call that asks for more before running it
(:func:`oversized`), so that no one call can run long or take much memory in the
grader; the check's budget is looked at after every call.
"""

import importlib
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
    # the methods code may call besides the logged ones; None: any (a call of another
    # method, read from the copy, is refused as a use the lesson does not list)
    calls: tuple = None


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
# served method given it runs in well under a second (tests/threats/test_served_limits.py).
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
    # remote methods whose answers may be sent ahead (the object has answers_ahead)
    predicted: tuple = ()

    def __post_init__(self):
        unknown = set(self.limits) - set(self.remote) - set(self.deferred)
        if unknown:
            raise ValueError(f"limits for methods that are not served: {sorted(unknown)}")
        if set(self.predicted) - set(self.remote):
            raise ValueError(f"predicted methods that are not remote: "
                             f"{sorted(set(self.predicted) - set(self.remote))}")


_MIRRORED = {}  # id(object) -> (object, Mirrored); cleared after each check
# id(object) -> the factory of its recipe, for a notebook's copy: in a student edition the
# factory may live in a module made from an earlier notebook, which no import finds
_FACTORIES = {}


def mirrored(factory, *args, logged=(), settable=(), pushed=(), calls=None, original=None,
             **kwargs):
    """``factory(*args, **kwargs)``, declared as lent by mirroring. ``calls``: the methods
    besides the ``logged`` ones that code may call (None: any).

    ``original``, if given, is what the grader keeps and replays the transcript on
    instead of the factory's result (a wrapper that checks the calls it receives); the
    student's copy is still built from the recipe.
    """
    made = factory(*args, **kwargs) if original is None else original
    _FACTORIES[id(made)] = factory
    _MIRRORED[id(made)] = (made, Mirrored(factory.__module__, factory.__qualname__, args,
                                          kwargs, tuple(logged), tuple(settable),
                                          tuple(pushed),
                                          None if calls is None else tuple(calls)))
    return made


def lending_of(value):
    """The :class:`Mirrored` or :class:`Served` declaration of ``value``, or None."""
    entry = _MIRRORED.get(id(value))
    if entry is not None and entry[0] is value:
        return entry[1]
    declaration = getattr(type(value), "__lending__", None)
    return declaration if isinstance(declaration, Served) else None


def forget_mirrored():
    """Forget a check's lending: its declarations, and in a notebook its views, kept
    values and refusals (below)."""
    _MIRRORED.clear()
    _FACTORIES.clear()
    _VIEWS.clear()
    _KEPT.clear()
    _REFUSED.clear()


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
    if isinstance(value, (list, tuple, dict)) and numbers_in(value, 40) > 40:
        # never the repr of a batch or of a network's parameters: it costs more than the
        # call it describes, and 40 characters cannot hold it anyway
        return f"<{type(value).__name__} of {len(value):,} items>"
    text = repr(value)
    if len(text) <= 40:
        return text
    if isinstance(value, (list, tuple, dict)):
        return f"<{type(value).__name__} of {len(value):,} items>"
    return text[:37] + "..."


# --- in a notebook: the same objects, lent the same way ---------------------------------------
#
# A notebook's test cell runs the student's code in the process of the check, so nothing
# needs to cross. The student's code is still given the objects the grader would lend it,
# with what crosses the channel copied as the channel copies it, so that what a visible
# test allows, refuses and judges is what the grader does (tests/threats/test_lending_parity.py):
#
# - a served object is a :class:`ServedView`: its remote and deferred methods, its
#   readable attributes (read as copies) and its settable ones, nothing else; a deferred
#   method's failure, and a call the grader refuses, cost the check even if the code
#   catches what it raised;
# - a mirrored object is a :class:`MirrorView` of a copy built from the recipe, as the
#   student's process builds it: everything of the copy can be read and called, only
#   settable attributes set; logged calls and sets are replayed on the original, and a
#   replay the original refuses or answers otherwise costs the check, as in the grader
#   (so a copy changed by hand is caught in a notebook too);
# - plain data given to the student's code, and returned by it, are copies, as the
#   channel makes them (except what :func:`~checks.framework.kept_with` placed with it).

_SCALARS_CROSSING = frozenset((type(None), bool, int, float, str))
# numpy's numbers, of the kinds that cross
_NUMPY_NUMBERS = frozenset(np.dtype(code).type for code in
                           "?" + np.typecodes["AllInteger"] + np.typecodes["AllFloat"])
_CROSS_AS_THEY_ARE = (_SCALARS_CROSSING - {str}) | _NUMPY_NUMBERS  # strings cross as new objects
# numpy dtype kinds that cross the channel (grader/judge/sandbox_runtime/wire.py)
_ARRAY_KINDS = "biufc"
_VIEWS = {}  # id(original) -> (original, its view): one view of each object per check
_KEPT = {}  # id(value) -> value: placed with the student's code (kept_with), not copied
_REFUSED = []  # what the grader would refuse, in order: the first one costs the check


class NotPlainData(TypeError):
    """Student code gave a grader's object something that cannot cross the channel."""


def crossing(value, objects, depth=0):
    """``value`` as the channel delivers it: scalars as they are (strings as new objects
    of the same text: code that compares them with ``is`` fails as it does in the
    grader), lists, tuples (named ones as tuples) and dicts rebuilt, numpy arrays of
    numbers copied, numpy numbers as they are; ``objects(value)`` for anything else."""
    kind = type(value)
    if kind in _CROSS_AS_THEY_ARE:
        return value
    if kind is str:
        return value[:1] + value[1:] if len(value) > 1 else value  # new, as read from the channel
    if id(value) in _KEPT:
        return value
    if depth > 64:
        raise NotPlainData("value nested too deeply")
    # items that cross as they are skip the call: argument lists are mostly numbers
    if kind is list:
        return [item if type(item) in _CROSS_AS_THEY_ARE else crossing(item, objects, depth + 1)
                for item in value]
    if kind is tuple or (isinstance(value, tuple) and hasattr(kind, "_fields")):
        return tuple([item if type(item) in _CROSS_AS_THEY_ARE
                      else crossing(item, objects, depth + 1) for item in value])
    if kind is dict:
        return {crossing(key, objects, depth + 1): crossing(item, objects, depth + 1)
                for key, item in value.items()}
    if kind is np.ndarray and value.dtype.kind in _ARRAY_KINDS:
        return value.copy(order="C")
    if isinstance(value, np.generic) and value.dtype.kind in _ARRAY_KINDS:
        return value
    return objects(value)


def _only_plain(value):
    raise NotPlainData(f"only plain data (numbers, strings, lists, numpy arrays) can be "
                       f"passed to the grader's objects, not {type(value).__name__}")


def to_the_grader(value):
    """What student code passes a lent object's method, as the grader's object gets it."""
    return crossing(value, _only_plain)


def to_student_code(value):
    """What a check passes the student's code: lent objects as their views, plain data
    copied, the student's own objects (and kept values) as they are."""
    return crossing(value, lent_in_notebook)


def from_student_code(value):
    """What the student's code returned, as a check receives it: plain data copied."""
    return crossing(value, lambda other: other)


def kept_here(value):
    """Mark ``value`` as placed with the student's code: passed to it as it is, not copied
    (``kept_with`` in a notebook: the check changes it later, and the code must see it)."""
    _KEPT[id(value)] = value
    return value


def lent_in_notebook(value):
    """The view the student's code is given of ``value`` in a notebook, or ``value``
    itself when it is not lent (the student's own objects, or undeclared ones)."""
    entry = _VIEWS.get(id(value))
    if entry is not None and entry[0] is value:
        if isinstance(entry[1], MirrorView):
            _push(entry[1])
        return entry[1]
    if isinstance(value, LentView):
        return value
    declaration = lending_of(value)
    if declaration is None:
        return value
    view = (ServedView if isinstance(declaration, Served) else MirrorView)(value, declaration)
    _VIEWS[id(value)] = (value, view)
    return view


def refuse_in_notebook(reason):
    """Record what the grader refuses; the check fails with the first (take_refusal)."""
    _REFUSED.append(str(reason))


def take_refusal():
    """The first refusal since the last call, or None; forgets them all."""
    first = _REFUSED[0] if _REFUSED else None
    _REFUSED.clear()
    return first


def _shown_arguments(args):
    text = ", ".join(_shown(arg) for arg in args)
    return text if len(text) <= 120 else text[:117] + "..."


class LentView:
    """Base of the views a notebook's student code gets of a check's lent objects."""

    __slots__ = ()


def _lent_of(view):
    return object.__getattribute__(view, "_lent")


class ServedView(LentView):
    """A served object as the student's process sees it: only what its declaration
    serves, with copies of what crosses (checks/lending.py,
    grader/judge/sandbox_runtime)."""

    __slots__ = ("_lent",)

    def __init__(self, original, declaration):
        object.__setattr__(self, "_lent", (original, declaration))

    def __getattr__(self, name):
        original, declaration = _lent_of(self)
        if name in declaration.remote:
            return lambda *args, **kwargs: _served_call(original, declaration, name, args,
                                                        kwargs)
        if name in declaration.deferred:
            def deferred(*args, **kwargs):
                _deferred_call(original, declaration, name, args, kwargs)
            return deferred
        if name in declaration.readable:
            _stopped_if_refused()
            return crossing(getattr(original, name), _only_plain)
        raise AttributeError(f"the {type(original).__name__} the grader lent has no attribute "
                             f"{name!r} that code may use")

    def __setattr__(self, name, value):
        original, declaration = _lent_of(self)
        if name not in declaration.settable:
            raise AttributeError(f"code may not set {name!r} on the {type(original).__name__} "
                                 "the grader lent it")
        value = to_the_grader(value)
        if _REFUSED:
            return  # the grader replays nothing after a refusal
        try:
            setattr(original, name, value)
        except Exception as error:  # the grader's replay of the set refuses it
            refuse_in_notebook(f"your code set {type(original).__name__}.{name}, which "
                               f"raised {type(error).__name__}: {error}")

    def __len__(self):
        original, declaration = _lent_of(self)
        if "__len__" not in declaration.remote:
            raise TypeError(f"object of type {type(original).__name__} has no len()")
        return _served_call(original, declaration, "__len__", (), {})

    def __repr__(self):
        return f"<{type(_lent_of(self)[0]).__name__} lent by the grader>"


def _stopped_if_refused():
    if _REFUSED:  # as the grader answers every call after a refusal, until the reply
        raise RuntimeError(f"the grader stopped this call: {_REFUSED[0]}")


def _served_call(original, declaration, name, args, kwargs):
    args, kwargs = to_the_grader(list(args)), to_the_grader(dict(kwargs))
    _stopped_if_refused()
    refusal = oversized(declaration, original, name, args, kwargs)
    if refusal is None:
        try:
            if name == "__len__":
                return len(original)
            return to_the_grader(getattr(original, name)(*args, **kwargs))
        except Exception as error:
            if not _is_refusal(error):
                raise  # the grader's object raised: student code sees the error
            refusal = str(error)
    refuse_in_notebook(refusal)
    raise RuntimeError(refusal)


def _deferred_call(original, declaration, name, args, kwargs):
    args, kwargs = to_the_grader(list(args)), to_the_grader(dict(kwargs))
    if _REFUSED:
        return  # the grader replays nothing after a refusal
    refusal = oversized(declaration, original, name, args, kwargs)
    if refusal is None:
        try:
            getattr(original, name)(*args, **kwargs)
            return
        except Exception as error:
            refusal = str(error) if _is_refusal(error) else (
                f"{type(original).__name__}.{name}({_shown_arguments(args)}) raised "
                f"{type(error).__name__}: {error}")
    refuse_in_notebook(refusal)


def _is_refusal(error):
    """A check's own refusal (a ProbeError: a witness's, a recorder's), by its class's
    ancestry, so that this module needs nothing from checks.framework."""
    return any(kind.__name__ == "ProbeError" for kind in type(error).__mro__)


class MirrorView(LentView):
    """A mirrored object as the student's process sees it: its own copy, built from the
    recipe as the student's process builds it, that reads and calls at will; only
    settable attributes may be set. Calls of logged methods and sets go to the copy and
    are then replayed on the original, as the grader replays its transcript: a replay
    that the original refuses, or that answers otherwise than the copy did (the code
    changed its copy by another way than a logged call), costs the check."""

    __slots__ = ("_lent",)

    def __init__(self, original, declaration):
        copy = _built_from_recipe(declaration, _FACTORIES.get(id(original)))
        object.__setattr__(self, "_lent", (original, declaration, copy))
        _push(self)

    @property
    def __class__(self):  # isinstance(env, gym.Env) holds, as for the sandbox's copy
        return type(_lent_of(self)[2])

    def __getattr__(self, name):
        original, declaration, copy = _lent_of(self)
        value = getattr(copy, name)
        refusal = _refused_call(declaration, copy, name, value)
        if refusal is not None:
            raise refusal
        if name in declaration.logged and callable(value):
            return lambda *args, **kwargs: _logged_call(original, name, value, args, kwargs)
        return value

    def __setattr__(self, name, value):
        original, declaration, copy = _lent_of(self)
        if name not in declaration.settable:
            raise AttributeError(f"code may not set {name!r} on the {_made_by(declaration)} "
                                 "the grader lent it")
        sent = to_the_grader(value)  # what cannot be written to the transcript is refused
        setattr(copy, name, value)
        if _REFUSED:
            return  # the grader replays nothing after a refusal
        try:
            setattr(original, name, sent)
        except Exception as error:  # the copy took it; the grader's replay refuses it
            refuse_in_notebook(str(error) if _is_refusal(error) else
                               f"your code set {_made_by(declaration)}.{name}, which raised "
                               f"{type(error).__name__}: {error}")

    def __call__(self, *args, **kwargs):
        original, declaration, copy = _lent_of(self)
        if "__call__" in declaration.logged:
            return _logged_call(original, "__call__", copy, args, kwargs)
        return copy(*args, **kwargs)

    def __len__(self):
        return len(_lent_of(self)[2])

    def __repr__(self):
        return repr(_lent_of(self)[2])


def _refused_call(declaration, copy, name, value):
    """The refusal (an AttributeError) of reading method ``name`` (``value``) of a mirrored
    object's ``copy`` to call it, when its declaration lists the methods code may call and
    ``name`` is not one of them; else None. As the sandbox's copies refuse it (``Mirror``
    in grader/judge/sandbox_runtime/student_server.py)."""
    calls, logged = declaration.calls, declaration.logged
    if calls is None or name in logged or name in calls or not callable(value):
        return None
    allowed = ", ".join(f"{method}()" for method in (*logged, *calls))
    return AttributeError(f"code may call only {allowed} of the {type(copy).__name__} the "
                          f"grader lent it, not {name}()")


def _built_from_recipe(declaration, factory=None):
    """The student's process's copy of a mirrored object: the recipe's factory (``factory``
    when the check gave it here, else imported by name) called with the recipe's
    arguments as they cross (lent objects as their views)."""
    if factory is None:
        factory = importlib.import_module(declaration.module)
        for part in declaration.name.split("."):
            factory = getattr(factory, part)
    return factory(*to_student_code(list(declaration.args)),
                   **to_student_code(dict(declaration.kwargs)))


def _push(view):
    """The original's pushed attributes, set on the view's copy, as the grader sends them
    along with each call that passes the object."""
    original, declaration, copy = _lent_of(view)
    for name in declaration.pushed:
        setattr(copy, name, to_student_code(getattr(original, name)))


def _made_by(declaration):
    return declaration.name.rsplit(".", 1)[-1]


def _logged_call(original, name, method, args, kwargs):
    """``method`` (the copy's) called as the student's code called it, then the call
    replayed on ``original`` with the arguments as they cross, unless the grader refused
    something already; the copy's answer (or error) is what the code gets."""
    sent_args, sent_kwargs = to_the_grader(list(args)), to_the_grader(dict(kwargs))
    try:
        result, raised = method(*args, **kwargs), None
    except Exception as error:
        result, raised = None, error
    if not _REFUSED:
        _replay(original, name, sent_args, sent_kwargs, result, raised)
    if raised is not None:
        raise raised
    return result


def _replay(original, name, args, kwargs, copy_result, copy_raised):
    """One logged call replayed on the original, refused as the grader refuses it: the
    original refused it, or answered otherwise than the copy did."""
    what = f"{type(original).__name__}.{name}"
    try:
        target = original if name == "__call__" else getattr(original, name)
        result, raised = target(*args, **kwargs), None
    except Exception as error:
        if _is_refusal(error):
            refuse_in_notebook(str(error))
            return
        result, raised = None, error
    if raised is None and copy_raised is None and _loosely_equal(result, copy_result):
        return  # the usual case: nothing to report, so nothing to describe
    shown = f"{what}({_shown_arguments(args)})"
    if raised is not None and type(raised) is not type(copy_raised):
        refuse_in_notebook(f"{shown} raised {type(raised).__name__} for the grader, but "
                           "your code's copy of it did not: did your code change its copy?")
    elif raised is None and copy_raised is not None:
        refuse_in_notebook(f"your code's copy of {shown} raised {type(copy_raised).__name__}"
                           ", but the grader's did not: did your code change its copy?")
    elif raised is None and not _loosely_equal(result, copy_result):
        refuse_in_notebook(f"the grader's {shown} gave {repr(result)[:120]}, but your code's "
                           "copy of it answered otherwise: did your code change the copy (or "
                           "its random generator) instead of calling it?")


_NOT_PLAIN = object()


def _loose(value, depth=0):
    """``value`` with numpy numbers and arrays as Python numbers and lists, and tuples as
    lists: how the grader compares a copy's answer with its own; _NOT_PLAIN for what is
    not plain data."""
    if type(value) in _SCALARS_CROSSING:
        return value
    if depth > 64:
        return _NOT_PLAIN
    if isinstance(value, (list, tuple)):
        items = [_loose(item, depth + 1) for item in value]
        return _NOT_PLAIN if any(item is _NOT_PLAIN for item in items) else items
    if type(value) is dict:
        items = {str(key): _loose(item, depth + 1) for key, item in value.items()}
        return _NOT_PLAIN if any(item is _NOT_PLAIN for item in items.values()) else items
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in _ARRAY_KINDS:
        return value.tolist()
    return _NOT_PLAIN


def _loosely_equal(mine, theirs):
    """Whether two answers are equal as the grader compares them (NaN equals NaN)."""
    kind = type(mine)
    if kind is type(theirs):  # the usual case, compared without converting either
        if kind in _EXACT_SCALARS:
            return mine == theirs
        if kind is float:
            return mine == theirs or (math.isnan(mine) and math.isnan(theirs))
        if kind is tuple or kind is list:
            return len(mine) == len(theirs) and all(map(_loosely_equal, mine, theirs))
        if kind in _NUMPY_NUMBERS:
            return bool(mine == theirs) or (mine.dtype.kind == "f" and bool(np.isnan(mine))
                                            and bool(np.isnan(theirs)))
        if (kind is dict and mine.keys() == theirs.keys()
                and all(type(key) is str for key in mine)):
            return all(_loosely_equal(item, theirs[key]) for key, item in mine.items())
        if (kind is np.ndarray and mine.dtype == theirs.dtype
                and mine.dtype.kind in _EXACT_KINDS):
            return mine.shape == theirs.shape and bool(
                np.array_equal(mine, theirs, equal_nan=mine.dtype.kind == "f"))
    mine, theirs = _loose(mine), _loose(theirs)
    if mine is _NOT_PLAIN or theirs is _NOT_PLAIN:
        return False
    return _equal_with_nans(mine, theirs)


_EXACT_SCALARS = frozenset((type(None), bool, int, str))
_EXACT_KINDS = "biuf"  # array kinds whose elements compare as their Python numbers do


def _equal_with_nans(mine, theirs):
    if isinstance(mine, float) and isinstance(theirs, float):
        return mine == theirs or (math.isnan(mine) and math.isnan(theirs))
    if isinstance(mine, list) and isinstance(theirs, list):
        return len(mine) == len(theirs) and all(map(_equal_with_nans, mine, theirs))
    if isinstance(mine, dict) and isinstance(theirs, dict):
        return mine.keys() == theirs.keys() and all(
            _equal_with_nans(mine[key], theirs[key]) for key in mine)
    return mine == theirs
