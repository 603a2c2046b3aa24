"""The lessons the course has, read from the source notebooks in ``solutions/``.

A lesson is named by its notebook's stem ("02_replay_buffer"), which is also the
``course.lesson`` entry of the notebook's metadata. Submissions are matched to lessons by
file name first (students rarely rename), then by that metadata entry.
"""

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import nbformat

from grader.release import REPOSITORY, source_notebooks

LESSON_NAME = re.compile(r"(\d\d_[a-z0-9_]+)")


@dataclass(frozen=True)
class Lesson:
    name: str  # "02_replay_buffer"
    source_path: Path
    exports_to: str | None  # the reference module this lesson's solutions become

    @property
    def number(self):
        return int(self.name[:2])

    @property
    def reference_module(self):
        """The importable name of the module this lesson exports ("qlearning"), or None."""
        return Path(self.exports_to).stem if self.exports_to else None

    def source(self):
        return nbformat.read(self.source_path, as_version=4)


@lru_cache(maxsize=None)
def all_lessons(root=REPOSITORY):
    lessons = {}
    for path in source_notebooks(root):
        metadata = nbformat.read(path, as_version=4).metadata.get("course", {})
        lessons[path.stem] = Lesson(path.stem, path, metadata.get("exports_to"))
    return lessons


class UnknownLesson(ValueError):
    pass


def lesson_of(notebook_path, named_in_metadata=None):
    """The lesson a submitted notebook belongs to, from its file name or else from the
    lesson its metadata names (``named_in_metadata``)."""
    lessons = all_lessons()
    match = LESSON_NAME.search(Path(notebook_path).stem.lower())
    if match and match.group(1) in lessons:
        return lessons[match.group(1)]
    if isinstance(named_in_metadata, str) and named_in_metadata in lessons:
        return lessons[named_in_metadata]
    raise UnknownLesson(f"{notebook_path}: not a lesson of this course (expected a name "
                        f"like {', '.join(sorted(lessons))})")


def earlier_reference_modules(lesson):
    """Reference modules a lesson's kernel may import: those of the lessons before it."""
    return [other.exports_to for other in all_lessons().values()
            if other.number < lesson.number and other.exports_to]
