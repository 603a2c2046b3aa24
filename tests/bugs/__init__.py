"""Buggy student answers, each of which a named check must catch.

A :class:`Bug` replaces one or more answer cells of a lesson's notebook (by nbgrader
``grade_id``) with code a student could plausibly write. The check named by ``check``
must fail on it, with the visible salt and with a hidden one, naming the ``rule`` it breaks
(:mod:`checks.requirements`); every other quick check of the lesson must pass, except
those listed in ``also_fails`` (kept as short as the truth allows: a bug that breaks
``sample`` can legitimately fail several sampling checks). Each bug names its ``kind``,
from the catalogue of mistakes students make (:mod:`tests.bugs.kinds`).

A bug that changes a line or two of an instructors' answer is written as that edit,
``edited(lesson, grade_id, (old, new), ...)``, so the rest of the cell follows the
solution; a bug that is a different implementation is written out in full, or as an
edit of such an implementation (``edited_text``): the training loops of lessons 02, 03
and 05 reuse lesson 01's loop, and their loop bugs are edits of a loop written out in
full, as a student who does not reuse it writes it.
"""

import functools
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY / "examples") not in sys.path:
    sys.path.insert(0, str(REPOSITORY / "examples"))  # make_submissions

from make_submissions import solution_answers  # noqa: E402

from grader.lessons import all_lessons  # noqa: E402

LESSONS = tuple(all_lessons())


@lru_cache(maxsize=None)
def _solution_answers(lesson):
    return solution_answers(lesson)


def edited(lesson, grade_id, *replacements):
    """The instructors' answer cell ``grade_id`` of ``lesson``, with each ``(old, new)``
    of ``replacements`` applied in turn; ``old`` must occur exactly once, so a change to
    the solution that a bug's edit no longer fits fails here, loudly."""
    return edited_text(f"{lesson}:{grade_id}: the solution cell",
                       _solution_answers(lesson)[grade_id], *replacements)


def edited_text(what, source, *replacements):
    """``source`` (``what`` names it) with each ``(old, new)`` of ``replacements``
    applied in turn; ``old`` must occur exactly once."""
    for old, new in replacements:
        count = source.count(old)
        if count != 1:
            found = "does not occur" if count == 0 else f"occurs {count} times"
            raise ValueError(f"{what}: the text a bug edits {found} in it (expected "
                             f"exactly once): {old!r}")
        source = source.replace(old, new)
    return source


def edits_of(lesson):
    """``edited`` for one lesson: ``_edit = edits_of(LESSON)`` in a lesson's bug module."""
    return functools.partial(edited, lesson)


@dataclass(frozen=True)
class Bug:
    name: str
    lesson: str  # "01_qlearning", "02_replay_buffer", ...
    check: str  # the check that names this bug and must fail on it
    answers: dict = field(hash=False)  # grade_id -> full source of the answer cell
    also_fails: tuple = ()  # other checks that legitimately fail too
    description: str = ""
    rule: str = ""  # the rule of ``check`` it breaks (checks.requirements): its failure names it
    kind: str = ""  # what kind of mistake it is (tests/bugs/kinds.py)

    def __post_init__(self):
        if self.lesson not in LESSONS:
            raise ValueError(f"{self.name}: unknown lesson {self.lesson!r}")
        if self.check in self.also_fails:
            raise ValueError(f"{self.name}: {self.check} is listed in also_fails too")
        for grade_id, source in self.answers.items():
            if not source.startswith("#| export\n"):
                raise ValueError(f"{self.name}: answer {grade_id!r} must keep its first "
                                 "line, '#| export'")


def _collect():
    from .lesson01 import BUGS as LESSON01
    from .lesson02 import BUGS as LESSON02
    from .lesson03 import BUGS as LESSON03
    from .lesson04 import BUGS as LESSON04
    from .lesson05 import BUGS as LESSON05
    from .lesson06 import BUGS as LESSON06
    from .lesson07 import BUGS as LESSON07
    from .lesson08 import BUGS as LESSON08

    bugs = [*LESSON01, *LESSON02, *LESSON03, *LESSON04, *LESSON05, *LESSON06,
            *LESSON07, *LESSON08]
    names = [bug.name for bug in bugs]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise ValueError(f"bug names must be unique: {duplicated}")
    return tuple(bugs)


ALL_BUGS = _collect()
