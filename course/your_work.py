"""Your own earlier lessons, as modules later lessons import.

Lesson 02 imports lesson 01's ``QLearningAgent`` with ``from qlearning import ...``. In the
full course ``qlearning.py`` is the course's reference. In a student edition whose
instructor has not released it yet, ``qlearning.py`` is a two-line module that calls
:func:`exports_of`: it is made from *your* notebook ``notebooks/01_qlearning.ipynb``,
from the cells that start with ``#| export``, as you last saved them. Save the earlier
notebook after you change an answer, then restart the later lesson's kernel.

When a test fails because code of yours raised, :func:`where_raised` says which code, and
in which lesson's notebook, so that a later lesson's test names your earlier lesson's
method rather than the loop that called it.
"""

import json
import re
from pathlib import Path

from course.add_to_class import add_to_class
from course.export_mark import is_exported
EDITION = Path(__file__).resolve().parent.parent


def exports_of(lesson, notebooks=None):
    """The names the ``#| export`` cells of your notebook of ``lesson`` define."""
    path = Path(notebooks or EDITION / "notebooks") / f"{lesson}.ipynb"
    try:
        cells = json.loads(path.read_text())["cells"]
    except FileNotFoundError:
        raise ImportError(f"lesson {lesson[:2]}'s module is made from your notebook {path}, "
                          "which is not there: keep the notebooks in the course's "
                          "notebooks/ folder") from None
    except (ValueError, KeyError, TypeError):
        raise ImportError(f"{path} is not a notebook this course can read") from None
    namespace = {"__name__": lesson, "add_to_class": add_to_class}
    for cell in cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") == "code" and is_exported(source):
            exec(compile(source, f"{path}", "exec"), namespace)  # noqa: S102 - your own code
    return {name: value for name, value in namespace.items()
            if not name.startswith("_") and name != "add_to_class"}


# --- whose code raised -----------------------------------------------------------------------

LESSON_MODULE = re.compile(r"\d\d_[a-z0-9_]+")
NOTEBOOK_MODULE = "__main__"  # the module of the code a notebook's cells define


def lesson_of_module(module):
    """Whose notebook the code of module ``module`` (a ``__module__`` or a frame's
    ``__name__``) was written in: ``""`` for the notebook being run (its cells' code),
    the lesson for an earlier lesson's module made by :func:`exports_of` ("01_qlearning"),
    or None for code that is in no notebook (the course's, a reference's, a library's)."""
    if module == NOTEBOOK_MODULE:
        return ""
    if isinstance(module, str) and LESSON_MODULE.fullmatch(module):
        return module
    return None


def written_in_a_notebook(value):
    """Whether ``value`` (a function, method, class or object) is code a student wrote in a
    notebook: this one's cells, or an earlier lesson's made by :func:`exports_of`."""
    try:
        module = getattr(value, "__module__", None)
    except Exception:  # an object whose attributes raise is not one of ours to name
        return False
    return lesson_of_module(module) is not None


def _notebook_lesson(frame):
    names = frame.f_globals
    if "__file__" in names:  # a module of a file (the course, a library, a server script)
        return None
    return lesson_of_module(names.get("__name__"))


def _function_name(frame):
    """``Class.method`` for a method (found on the class of its first argument, so that
    methods added with ``@add_to_class`` are named too), else the function's name."""
    code = frame.f_code
    if code.co_argcount:
        first = frame.f_locals.get(code.co_varnames[0])
        owner = first if isinstance(first, type) else type(first)
        for klass in getattr(owner, "__mro__", ()):
            for attribute in vars(klass).values():
                function = getattr(attribute, "__func__", attribute)
                if getattr(function, "__code__", None) is code:
                    return f"{klass.__name__}.{code.co_name}"
    return code.co_qualname


def _code_of(called):
    """The code object that runs when ``called`` is called (a function, a bound method, a
    class's ``__init__``), or None."""
    function = getattr(called, "__func__", called)
    if isinstance(function, type):
        function = getattr(function, "__init__", None)
    function = getattr(function, "__func__", function)
    return getattr(function, "__code__", None)


def where_raised(error, called=None):
    """``(function, lesson)`` of the notebook code that raised ``error`` (the innermost in
    its traceback), when that is not ``called``, the code that was called; else None.
    Without ``called`` (or when its code is unknown) the code called is taken to be the
    outermost notebook code in the traceback. ``lesson`` is as :func:`lesson_of_module`
    says: "" for the notebook being run.

    So a training loop that is written, calling an agent's ``update`` that still raises
    ``NotImplementedError``, is not said to be unwritten: ``update`` is named instead."""
    frames, traceback = [], getattr(error, "__traceback__", None)
    while traceback is not None:
        lesson = _notebook_lesson(traceback.tb_frame)
        if lesson is not None:
            frames.append((traceback.tb_frame, lesson))
        traceback = traceback.tb_next
    if not frames:
        return None
    frame, lesson = frames[-1]
    code = _code_of(called)
    if code is None:
        code = frames[0][0].f_code if len(frames) > 1 else frame.f_code
    if frame.f_code is code:
        return None
    return _function_name(frame), lesson


def library_that_raised(error):
    """The module whose code raised ``error`` (the innermost frame of its traceback) when
    that code is a library's (numpy's ``integers`` refusing ``high <= 0``, say), else None:
    code in a notebook, in the course's helpers or in an earlier lesson's module is the
    course's own. A ValueError a lesson asks for is one your code raises, with words that
    tell the caller what they did wrong."""
    traceback = getattr(error, "__traceback__", None)
    if traceback is None:
        return None
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    frame = traceback.tb_frame
    if _notebook_lesson(frame) is not None or _the_courses_module(frame.f_globals):
        return None
    module = frame.f_globals.get("__name__")
    return module if isinstance(module, str) else "a library"


def _the_courses_module(names):
    """Whether a frame's globals ``names`` are those of one of the course's modules: its
    helpers (``course/``) or a lesson's reference module, beside them."""
    try:
        path = Path(names["__file__"]).resolve()
    except (KeyError, TypeError, OSError):
        return False
    return path.parent == EDITION or path.is_relative_to(EDITION / "course")
