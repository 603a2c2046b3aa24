"""Which of the course's helper modules (``checks/``, ``course/``) an edition ships: only
those its lessons reach through imports, never a later lesson's checks or helpers.

An edition for lessons 01-02 used to copy both packages whole, and with them, for one,
lesson 06's checks (whose judge computes the autocorrelation lesson 06 asks for) and
``course/many_seeds_dqn.py`` (a vectorised form of lesson 07's ``dqn_step``). Now the
files shipped are the closure of the imports of: each published lesson's notebook, its
checks module (found by name by ``checks.checks_for_lesson``), the modules students
export from its notebook, and each released reference module; every package on the way
ships its ``__init__.py``. Modules a shipped file imports by a name in a string
(``importlib.import_module``) are followed where the string is written out in the file.
"""

import ast
import re
from pathlib import Path

from grader.lessons import REPOSITORY

HELPER_PACKAGES = ("checks", "course")


def module_file(name):
    """The file of module ``name`` ("checks.framework") among the helper packages, else
    None (a module of the standard library, numpy, a lesson's reference module...)."""
    if name.split(".")[0] not in HELPER_PACKAGES:
        return None
    path = REPOSITORY.joinpath(*name.split("."))
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return None


def _package_of(path):
    """The dotted package a helper file belongs to ("checks.lesson03_prioritized_replay")."""
    return ".".join(path.relative_to(REPOSITORY).parts[:-1])


def imported_names(source, package=""):
    """Every dotted name ``source`` imports (``from a import b`` gives ``a`` and ``a.b``,
    which may be a module), relative imports resolved against ``package``, and the helper
    module names it writes out as strings (for ``importlib.import_module``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a stub or a cell magic: it imports nothing we could follow
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and re.fullmatch(r"(checks|course)(\.\w+)+", node.value):
            names.add(node.value)
    return names


def shipped_helpers(roots):
    """The helper files (paths relative to the repository) reached from the dotted names
    ``roots`` through imports, each package's ``__init__.py`` included."""
    shipped, waiting = set(), list(roots)
    while waiting:
        name = waiting.pop()
        parts = name.split(".")
        for end in range(1, len(parts) + 1):  # a module's packages run their __init__ too
            path = module_file(".".join(parts[:end]))
            if path is None or path in shipped:
                continue
            shipped.add(path)
            waiting += imported_names(path.read_text(), _package_of(path))
    return sorted(path.relative_to(REPOSITORY) for path in shipped)


def checks_module(lesson):
    """The dotted name of ``lesson``'s checks ("checks.lesson02_replay_buffer")."""
    return f"checks.lesson{lesson.name}"
