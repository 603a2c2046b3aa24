"""What every graded call promises, held by the framework on every call a probe makes.

A lesson states once, near its top, what all its functions promise, and each function's
docstring or text states what it returns. The framework holds every call of a student's
code that a probe makes (:func:`checks.framework.call_student` and its relatives) to
that, whatever the check is about:

- **inputs untouched** (:data:`INPUTS_UNTOUCHED`): no array, list, tuple or dict argument
  is changed by the call (``course/unchanged_arguments.py`` compares them);
- **exact result types** (:data:`RESULT_TYPES`): a result is the type the lesson states,
  Python ``float``/``int``/``bool`` where it says so (not a numpy scalar, not a
  one-element array), arrays of the stated dtype kind and dimensions, tuples of the stated
  parts (:class:`Returns`);
- **lent objects used as stated** (:data:`LENT_AS_STATED`): a lent object refuses a use
  its lending does not allow (checks/lending.py); the refusal is a failure naming the rule;
- **numpy scalars accepted** (:data:`NUMPY_SCALARS`): where the text allows a number or a
  flag from a numpy array (a replayed row's ``np.bool_`` ``terminated``), the framework
  passes numpy scalars on every other call (:func:`numpy_forms`), so code that tests a
  flag with ``is True`` gives wrong results that the check's own verdict then finds.

A lesson declares its :class:`Contract` per callable, named as the lesson names it
(``"td_targets"``, ``"ReplayBuffer.sample"``, ``"ReplayBuffer"`` for the constructor);
the framework learns each object's name from the name the check looks it up by, and an
instance's from the class that made it, never from the student's process.
"""

from dataclasses import dataclass

import numpy as np

from checks.requirements import Rule

INPUTS_UNTOUCHED = Rule("inputs-untouched", "No function or method changes the arrays, lists "
                        "or dicts it is given, or returns one of them (or a view of one): a "
                        "caller's data is the same after the call, and stays its own, as does "
                        "every result returned: a later call never refills it.")
RESULT_TYPES = Rule("result-types", "Every result has exactly the type the lesson states: a "
                    "Python float, int or bool where it says so (not a numpy scalar or a "
                    "one-element array), numpy arrays of the stated dtype and dimensions.")
NUMPY_SCALARS = Rule("numpy-scalars", "Where a number or a flag is expected, numpy scalars "
                     "(np.int64, np.float64, np.bool_, as a row of a numpy batch holds) work "
                     "exactly as Python's do.")

LENT_AS_STATED = Rule("lent-as-stated", "Code uses the objects a test lends it (environments, "
                      "agents, buffers, networks) only as the lesson lists: the methods it "
                      "may call and the attributes it may read, and sets nothing else.")

CONTRACT_RULES = (INPUTS_UNTOUCHED, RESULT_TYPES, NUMPY_SCALARS, LENT_AS_STATED)


def lending_refused(error):
    """Whether ``error`` is a lent object's refusal of a use the lesson does not list (an
    attribute set or read that its lending does not allow), in a notebook's views and in
    the grader's sandbox alike (checks/lending.py, grader/judge/sandbox_runtime)."""
    return isinstance(error, AttributeError) and "the grader lent" in str(error)


@dataclass(frozen=True)
class Returns:
    """A stated result type. ``kind``: ``"float"``, ``"int"``, ``"bool"`` (exactly Python's),
    ``"number"`` (one real number: a Python or numpy int or float, never a bool or an array),
    ``"none"``, ``"array"`` (a numpy array, with ``dtype`` a dtype kind string such as
    ``"f"`` or ``"iu"`` or an exact dtype name such as ``"float64"``, and ``ndim``),
    ``"tuple"`` (``parts``, each a Returns), ``"optional"`` (``parts[0]`` or None),
    ``"any"``. ``says`` is how the lesson words it, for feedback."""

    kind: str
    says: str = ""
    dtype: str | None = None
    ndim: int | None = None
    parts: tuple = ()

    def problem(self, value):
        """Why ``value`` is not of this type, in words, or None when it is."""
        kind = self.kind
        if kind == "any":
            return None
        if kind == "optional":
            return None if value is None else self.parts[0].problem(value)
        if kind == "none":
            return None if value is None else f"returned {described(value)}, not None"
        if kind == "number":
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
                    value, (bool, np.bool_)):
                return None
            return f"returned {described(value)}, not a number (a float or an int)"
        if kind in ("float", "int", "bool"):
            if type(value) is {"float": float, "int": int, "bool": bool}[kind]:
                return None
            hint = {"float": "float(...)", "int": "int(...)", "bool": "bool(...)"}[kind]
            return f"returned {described(value)}, not a Python {kind} (convert with {hint})"
        if kind == "array":
            if type(value) is not np.ndarray:
                return f"returned {described(value)}, not a numpy array"
            if self.ndim is not None and value.ndim != self.ndim:
                return f"returned a {value.ndim}-d array, not {self.ndim}-d"
            if self.dtype is not None and not _dtype_fits(value.dtype, self.dtype):
                return f"returned an array of dtype {value.dtype}, not {_dtype_words(self.dtype)}"
            return None
        if kind == "tuple":
            if type(value) is not tuple:
                return f"returned {described(value)}, not a tuple of {len(self.parts)}"
            if len(value) != len(self.parts):
                return f"returned a tuple of {len(value)} items, not {len(self.parts)}"
            for index, (part, item) in enumerate(zip(self.parts, value)):
                problem = part.problem(item)
                if problem:
                    return f"returned a tuple whose item {index} is {problem[len('returned '):]}"
            return None
        raise ValueError(f"unknown result kind {kind!r}")


    def words(self):
        """This type as the spec says it: ``a Python int``, ``a tuple of 5 numpy arrays``."""
        kind = self.kind
        if kind in ("float", "int", "bool"):
            return f"a Python {kind}"
        if kind == "number":
            return "one number (an int or a float, Python's or numpy's)"
        if kind == "none":
            return "None"
        if kind == "optional":
            return f"{self.parts[0].words()} or None"
        if kind == "array":
            dims = f"{self.ndim}-d " if self.ndim is not None else ""
            dtype = f" of {_dtype_words(self.dtype)}" if self.dtype else ""
            return f"a {dims}numpy array{dtype}"
        if kind == "tuple":
            parts = [part.words() for part in self.parts]
            if len(set(parts)) == 1:
                return f"a tuple of {len(parts)} {parts[0].replace('a ', '', 1)}s"
            return "a tuple of (" + ", ".join(parts) + ")"
        return "anything"


def _dtype_fits(dtype, wanted):
    return dtype.name == wanted if len(wanted) > 2 else dtype.kind in wanted


def _dtype_words(wanted):
    if len(wanted) > 2:
        return wanted
    return " or ".join({"f": "float", "i": "signed integer", "u": "unsigned integer",
                        "b": "bool"}[kind] for kind in wanted)


def described(value):
    """``a numpy.int64 (3)``, ``a float (0.5)``, ``an array of shape (1,)``."""
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"a {name} ({shown})"


FLOAT = Returns("float")
INT = Returns("int")
BOOL = Returns("bool")
NUMBER = Returns("number")
NONE = Returns("none")
ANY = Returns("any")


def array(dtype=None, ndim=None):
    return Returns("array", dtype=dtype, ndim=ndim)


def tuple_of(*parts):
    return Returns("tuple", parts=tuple(parts))


def optional(part):
    return Returns("optional", parts=(part,))


@dataclass(frozen=True)
class Contract:
    """What one callable of a lesson promises. ``returns``: its result's type (checked on
    results that cross by value). ``numpy_scalars``: the positions of arguments a caller
    may pass as numpy scalars (the framework passes them so on every other call, or,
    for a ``pure`` function, calls it both ways and compares); ``numpy_keywords``: the
    same for arguments a probe passes by keyword (a loop's ``t_max``).
    ``makes``: for a class, calling it makes an instance whose methods are named
    ``"<name>.<method>"``."""

    returns: Returns = ANY
    numpy_scalars: tuple = ()
    numpy_keywords: tuple = ()
    makes: bool = False
    # the position of the argument that says how many rows every array of the result has
    # (a batch size): each then has a first axis of exactly that length (rows_rule names
    # what a wrong count breaks; RESULT_TYPES when None)
    rows: int | None = None
    rows_rule: Rule | None = None
    # every array of the result keeps a first (batch) axis, however many rows it holds
    batch_axis: bool = False
    # a function of its arguments alone: called again with the numpy forms of its
    # numpy_scalars it must give the same result (checked on each call)
    pure: bool = False


CLASS = Contract(makes=True)


def constructor(*positions, keywords=()):
    """A class (as CLASS) whose constructor takes numpy scalars for the numbers at
    ``positions`` and the keyword arguments ``keywords`` (a buffer's size, an agent's
    alpha): its calls pass them so on every other call, as a method's do."""
    return Contract(makes=True, numpy_scalars=tuple(positions), numpy_keywords=tuple(keywords))


def contract_words(contract):
    """What ``contract`` promises, in the spec's words."""
    said = (["a class: its instances' methods are held to their own contracts"]
            if contract.makes else [])
    if contract.returns.kind != "any":
        said.append(f"returns {contract.returns.words()}")
    if contract.rows is not None:
        said.append(f"every array with one row per argument {contract.rows + 1} asks for")
    elif contract.batch_axis:
        said.append("every array with a batch axis")
    if contract.numpy_scalars or contract.numpy_keywords:
        positions = ", ".join([str(index + 1) for index in contract.numpy_scalars]
                              + list(contract.numpy_keywords))
        said.append(f"numpy scalars accepted as argument(s) {positions} ("
                    + ("each call made again with them and compared" if contract.pure
                       else "passed on every other call") + ")")
    return "; ".join(said) or "inputs untouched only"


def rows_problem(contract, args, result):
    """Why the arrays of ``result`` do not each hold the batch its ``rows`` argument asks
    for, in words, or None."""
    wanted = None
    if contract.rows is not None and contract.rows < len(args):
        try:
            wanted = int(args[contract.rows])
        except (TypeError, ValueError):
            wanted = None
    if wanted is None and not contract.batch_axis:
        return None
    parts = result if type(result) is tuple else (result,)
    for index, part in enumerate(parts):
        if type(part) is not np.ndarray:
            continue
        where = f"item {index} of its tuple" if type(result) is tuple else "its array"
        if part.ndim == 0:
            return (f"returned {where} as a 0-d array: a batch keeps its first axis, even "
                    "for a batch of one (no squeeze)")
        if wanted is not None and len(part) != wanted:
            return f"returned {where} with {len(part)} rows, not the {wanted} asked for"
    return None


def numpy_form(value):
    """``value`` as a numpy scalar of the same value (Python bool -> np.bool_, int ->
    np.int64, float -> np.float64); anything else as it is."""
    if type(value) is bool:
        return np.bool_(value)
    if type(value) is int and -2**63 <= value < 2**63:
        return np.int64(value)
    if type(value) is float:
        return np.float64(value)
    return value


def numpy_forms(args, positions):
    """``args`` with the arguments at ``positions`` in their numpy forms."""
    return tuple(numpy_form(arg) if index in positions else arg
                 for index, arg in enumerate(args))


def numpy_keyword_forms(kwargs, names):
    """``kwargs`` with the arguments named in ``names`` in their numpy forms."""
    return {name: numpy_form(value) if name in names else value
            for name, value in kwargs.items()}
