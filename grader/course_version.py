"""Which version of the course graded a notebook: a hash of every file that decides a grade.

A stored result is reused only for the same course version, so changing a lesson, a
check, a reference or the grading code grades every notebook again, while changing how
reports are printed does not. Workers of a Dask cluster compute it too: a worker that
runs another checkout of the course is refused instead of grading differently.

What is hashed is found by folder, never listed by hand: the source notebooks, the
reference modules, the checks, the course's helpers, the judge (``grader/judge/``, which
grades a notebook) and every other grader module these import, found by reading their
imports (so a module is hashed the day grading starts to import it). The authoring
tools, the class run and the outputs only make, arrange or print what the judge decides,
and are not part of the version unless the judge imports them.
"""

import ast
import functools
import hashlib
from pathlib import Path

from grader.lessons import REPOSITORY

# the folders that grade a notebook: the judge, the lessons' checks and the course's helpers
GRADING_FOLDERS = ("grader/judge", "checks", "course")


def _grader_imports(path, root):
    """The files of the ``grader`` modules that the Python file at ``path`` imports
    (anywhere in it: a function's own imports too), with their packages' ``__init__.py``."""
    try:
        names = _grader_modules_named(path.read_bytes())
    except SyntaxError as error:
        error.filename = str(path)
        raise
    found = set()
    for name in names:
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):  # the packages it runs on the way
            folder = root.joinpath(*parts[:depth])
            candidates = (folder / "__init__.py", folder.with_suffix(".py"))
            found |= {file for file in candidates if file.is_file()}
    return found


@functools.lru_cache(maxsize=4096)
def _grader_modules_named(source):
    """The dotted names a Python source imports that may be ``grader`` modules (what
    ``from grader.x import y`` imports may be the module ``grader.x.y``). Kept per
    source: parsing is most of the version's cost, and a copy of the course has the
    same files."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return tuple(name for name in names if name.split(".")[0] == "grader")


def grading_code(root=REPOSITORY):
    """The Python files grading runs: every file of :data:`GRADING_FOLDERS` and, followed
    import by import, every grader module they reach."""
    root = Path(root)
    todo = {path for folder in GRADING_FOLDERS for path in (root / folder).rglob("*.py")}
    todo.add(root / "grader" / "__init__.py")
    done = set()
    while todo:
        path = todo.pop()
        done.add(path)
        todo |= _grader_imports(path, root) - done
    return done


def grading_files(root=REPOSITORY):
    """The files the course version is made of, sorted: the source notebooks, the
    reference modules and the grading code (:func:`grading_code`)."""
    from grader.lessons import all_lessons

    root = Path(root)
    files = set((root / "solutions").glob("*.ipynb")) | grading_code(root)
    files |= {root / lesson.exports_to for lesson in all_lessons(root).values()
              if lesson.exports_to}
    return sorted(path for path in files if "__pycache__" not in path.parts)


@functools.lru_cache(maxsize=None)
def course_version(root=REPOSITORY):
    """16 hex digits that change whenever one of :func:`grading_files` changes."""
    digest = hashlib.sha256()
    for path in grading_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]
