"""Find what to grade under a path: one notebook, one student's folder, or a class folder.

- ``alice/02_replay_buffer.ipynb``: one notebook of student "alice" (its folder's name);
- ``alice/``: a folder with notebooks in it (or in subfolders, as nbgrader's
  ``submitted/alice/ps1/`` layout has) is one student's;
- ``class/``: a folder whose subfolders hold the notebooks is a class, one student each.
"""

from dataclasses import dataclass
from pathlib import Path

from grader.lessons import UnknownLesson, lesson_of


class CannotGrade(Exception):
    """The grader itself cannot run on this path; the message is the one-line reason."""


@dataclass(frozen=True)
class NotebookJob:
    student: str
    path: Path
    lesson: str


def _notebooks_under(folder):
    return sorted(path for path in Path(folder).rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in path.parts)


def find_jobs(path):
    """The notebooks to grade under ``path``, and notes on files that were skipped."""
    path = Path(path)
    if not path.exists():
        raise CannotGrade(f"no such file or folder: {path}")
    if path.is_file():
        if path.suffix != ".ipynb":
            raise CannotGrade(f"not a notebook (.ipynb): {path}")
        try:
            lesson = lesson_of(path)
        except UnknownLesson as error:
            raise CannotGrade(str(error)) from None
        return [NotebookJob(path.resolve().parent.name, path, lesson.name)], []
    direct = sorted(path.glob("*.ipynb"))
    student_folders = [path] if direct else sorted(
        folder for folder in path.iterdir()
        if folder.is_dir() and not folder.name.startswith(".") and _notebooks_under(folder))
    if not student_folders:
        raise CannotGrade(f"no notebooks found under {path}")
    jobs, skipped = [], []
    for folder in student_folders:
        for notebook in _notebooks_under(folder):
            try:
                jobs.append(NotebookJob(folder.resolve().name, notebook,
                                        lesson_of(notebook).name))
            except UnknownLesson:
                skipped.append(f"{notebook}: not a lesson of this course, skipped")
    if not jobs:
        raise CannotGrade(f"none of the notebooks under {path} is a lesson of this course")
    return jobs, skipped
