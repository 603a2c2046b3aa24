"""Lay out an nbgrader course directory for these lessons.

``source/<lesson>/<lesson>.ipynb`` for each lesson, and an ``nbgrader_config.py`` that
points nbgrader at that directory and loads the repository's ``nbgrader_config.py``.
Then nbgrader's own commands work: ``generate_assignment``, ``autograde``,
``generate_feedback``, ``export``.
"""

import shutil
import subprocess
from pathlib import Path

from grader.lessons import REPOSITORY, source_notebooks

CONFIG_TEMPLATE = '''\
# Made by `python -m grader nbgrader-course`: nbgrader settings for this course directory.
c = get_config()  # noqa: F821
c.CourseDirectory.root = {root!r}
load_subconfig({shared!r})  # noqa: F821 (the course's settings: timeouts, PYTHONPATH)
'''


class InsideTheRepository(ValueError):
    """The course directory would land in the repository, where git would see it."""


def inside_the_repository(directory):
    """True when ``directory`` is in the repository and git does not ignore it."""
    directory = Path(directory).resolve()
    if not directory.is_relative_to(REPOSITORY):
        return False
    ignored = subprocess.run(["git", "check-ignore", "-q", str(directory)], cwd=REPOSITORY,
                             capture_output=True)
    return ignored.returncode != 0


def make_course_directory(directory):
    """Create or refresh ``directory``; return the lesson (assignment) names. It must lie
    outside the repository, or in a folder git ignores: nbgrader's database, submissions
    and feedback are the instructor's, not the course's."""
    if inside_the_repository(directory):
        raise InsideTheRepository(f"{directory} is inside the course repository: choose a "
                                  "folder outside it (e.g. ../er-nbgrader) or one that "
                                  ".gitignore lists")
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
