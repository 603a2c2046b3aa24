"""Check definitions shared by the notebooks' visible tests and the grader.

``checks_for_lesson("02_replay_buffer")`` returns the checks of one lesson; see
:mod:`checks.framework` for what a check is.
"""

import importlib
import pkgutil
import re

# {lesson: module}, read from the modules' names ("lesson02_replay_buffer" holds the checks
# of "02_replay_buffer"): the checks ship to students without the grader, so they cannot
# import its lesson registry; tests/test_lessons.py holds the two to the same lessons.
LESSON_MODULES = {match.group(1): f"{__name__}.{module.name}"
                  for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
                  if (match := re.fullmatch(r"lesson(\d\d_[a-z0-9_]+)", module.name))}


def checks_for_lesson(lesson):
    """The :class:`~checks.framework.LessonChecks` of ``lesson``, e.g. "01_qlearning"."""
    if lesson not in LESSON_MODULES:
        raise KeyError(f"unknown lesson {lesson!r}; known: {', '.join(LESSON_MODULES)}")
    return importlib.import_module(LESSON_MODULES[lesson]).CHECKS
