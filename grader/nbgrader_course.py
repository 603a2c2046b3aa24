"""Lay out an nbgrader course directory for these lessons.

``source/<lesson>/<lesson>.ipynb`` for each lesson, and an ``nbgrader_config.py`` that
points nbgrader at that directory and loads the repository's ``nbgrader_config.py``.
Then nbgrader's own commands work: ``generate_assignment``, ``autograde``,
``generate_feedback``, ``export``.
"""

import shutil
from pathlib import Path

from grader.release import REPOSITORY, source_notebooks

CONFIG_TEMPLATE = '''\
# Made by `python -m grader nbgrader-course`: nbgrader settings for this course directory.
c = get_config()  # noqa: F821
c.CourseDirectory.root = {root!r}
load_subconfig({shared!r})  # noqa: F821 (the course's settings: timeouts, PYTHONPATH)
'''


def make_course_directory(directory):
    """Create or refresh ``directory``; return the lesson (assignment) names."""
    directory = Path(directory).resolve()
    lessons = []
    for path in source_notebooks():
        target = directory / "source" / path.stem / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        lessons.append(path.stem)
    (directory / "nbgrader_config.py").write_text(CONFIG_TEMPLATE.format(
        root=str(directory), shared=str(REPOSITORY / "nbgrader_config.py")))
    return lessons
