"""Check definitions shared by the notebooks' visible tests and the grader.

``checks_for_lesson("02_replay_buffer")`` returns the checks of one lesson; see
:mod:`checks.framework` for what a check is.
"""

import importlib

LESSON_MODULES = {
    "01_qlearning": "checks.lesson01_qlearning",
    "02_replay_buffer": "checks.lesson02_replay_buffer",
    "03_prioritized_replay": "checks.lesson03_prioritized_replay",
    "04_hindsight_replay": "checks.lesson04_hindsight_replay",
    "05_combined_replay": "checks.lesson05_combined_replay",
    "06_capstone": "checks.lesson06_capstone",
    "07_neural_replay": "checks.lesson07_neural_replay",
}


def checks_for_lesson(lesson):
    """The :class:`~checks.framework.LessonChecks` of ``lesson``, e.g. "01_qlearning"."""
    if lesson not in LESSON_MODULES:
        raise KeyError(f"unknown lesson {lesson!r}; known: {', '.join(LESSON_MODULES)}")
    return importlib.import_module(LESSON_MODULES[lesson]).CHECKS
