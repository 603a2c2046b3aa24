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
"""

from dataclasses import dataclass


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
class Served:
    remote: tuple = ()
    deferred: tuple = ()
    readable: tuple = ()
    settable: tuple = ()


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
