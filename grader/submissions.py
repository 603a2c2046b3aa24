"""Find what to grade under a path: one notebook, one student's folder, or a class folder.

- ``alice/02_replay_buffer.ipynb``: one notebook of student "alice" (its folder's name);
- ``alice/``: a folder with notebooks directly in it is one student's;
- ``class/``: a folder whose subfolders hold notebooks is a class, one student each
  (nbgrader's ``submitted/<student>/<assignment>/`` layout included). A notebook lying
  at the top of a class folder belongs to no student: it is skipped, with a note.

Every file that is not graded is named with the reason, in one line: not a lesson, a
symbolic link, not a regular file (a named pipe would hang a reader), a folder named
like a notebook, or a second copy of a lesson the student already submitted (the one
graded is the file named exactly like the lesson, else the most recently changed). The
walk never follows links, so a link to ``solutions/`` is never graded as a submission.
"""

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.lessons import UnknownLesson, lesson_of
from grader.safe_text import printable
from grader.submission_file import UnreadableSubmission, read_submission


class CannotGrade(Exception):
    """The grader itself cannot run on this path; the message is the one-line reason."""


@dataclass(frozen=True)
class NotebookJob:
    student: str
    path: Path
    lesson: str


@dataclass(frozen=True)
class Skipped:
    student: str | None  # None: the file belongs to no student
    reason: str  # one line: the file and why it was not graded

    def __str__(self):
        return self.reason


@dataclass
class Found:
    jobs: list  # NotebookJob, in the order to grade them
    skipped: list  # Skipped
    students: list  # every student found, with or without a notebook to grade


def _kind(path):
    """What sort of entry ``path`` is, without following a link."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    return "special"


def _lesson_of_file(path):
    """The lesson of a notebook file, by its name or else by its metadata."""
    try:
        return lesson_of(path).name
    except UnknownLesson:
        pass
    try:
        named = read_submission(path).lesson
    except UnreadableSubmission:
        named = None
    return lesson_of(path, named).name  # raises UnknownLesson when neither says


def _notebooks_under(folder, skipped, student=None):
    """The notebook files under ``folder`` (links not followed), noting what is skipped."""
    found = []
    for top, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders
                            if not name.startswith(".") and name != "__pycache__")
        for name in list(folders):  # os.walk lists links to folders but never enters them
            if _kind(Path(top) / name) == "link":
                folders.remove(name)
                skipped.append(Skipped(student, f"{printable(Path(top) / name)}: a "
                                                "symbolic link to a folder, not followed"))
        for name in sorted(files) + [f for f in folders if f.endswith(".ipynb")]:
            if not name.endswith(".ipynb"):
                continue
            path = Path(top) / name
            kind = _kind(path)
            if kind == "file":
                found.append(path)
            else:
                reason = {"link": "a symbolic link (submit the notebook itself)",
                          "folder": "a folder, not a notebook",
                          "special": "not a regular file",
                          "missing": "gone while the class was read"}[kind]
                skipped.append(Skipped(student, f"{printable(path)}: {reason}, skipped"))
    return found


def _keep_one_per_lesson(student, notebooks, skipped):
    """``[(path, lesson)]`` with at most one notebook per lesson."""
    by_lesson = {}
    for path, lesson in notebooks:
        by_lesson.setdefault(lesson, []).append(path)
    kept = []
    for lesson, paths in sorted(by_lesson.items()):
        paths.sort(key=lambda p: (p.stem != lesson, -p.stat().st_mtime_ns, str(p)))
        kept.append((paths[0], lesson))
        for extra in paths[1:]:
            skipped.append(Skipped(student, f"{printable(extra)}: {printable(student)} "
                                            f"already submitted {lesson} as "
                                            f"{printable(paths[0])}; this copy is skipped"))
    return kept


def _jobs_of_student(student, folder_or_files, skipped):
    notebooks = []
    for path in folder_or_files:
        try:
            notebooks.append((path, _lesson_of_file(path)))
        except UnknownLesson:
            skipped.append(Skipped(student, f"{printable(path)}: not a lesson of this "
                                            "course, skipped"))
    return [NotebookJob(student, path, lesson)
            for path, lesson in _keep_one_per_lesson(student, notebooks, skipped)]


def find_jobs(path):
    """What to grade under ``path``: a :class:`Found` (jobs, skipped files, students)."""
    path = Path(path)
    kind = _kind(path)
    if kind == "missing":
        raise CannotGrade(f"no such file or folder: {printable(path)}")
    if kind == "link":
        path = path.resolve()  # a link given on the command line is the instructor's own
        kind = _kind(path)
    if kind in ("file", "special"):
        if path.suffix != ".ipynb" or kind == "special":
            raise CannotGrade(f"not a notebook file (.ipynb): {printable(path)}")
        try:
            lesson = _lesson_of_file(path)
        except UnknownLesson as error:
            raise CannotGrade(printable(error)) from None
        student = path.resolve().parent.name
        return Found([NotebookJob(student, path, lesson)], [], [student])
    top_skips, direct = [], []
    for entry in sorted(path.iterdir()):
        if entry.name.endswith(".ipynb"):
            kind = _kind(entry)
            if kind == "file":
                direct.append(entry)
            else:
                top_skips.append(entry)
    subfolders = sorted(folder for folder in path.iterdir()
                        if _kind(folder) == "folder" and not folder.name.startswith(".")
                        and not folder.name.endswith(".ipynb") and folder.name != "__pycache__")
    inner_skips = {folder: [] for folder in subfolders}
    found = {folder: _notebooks_under(folder, inner_skips[folder], folder.name)
             for folder in subfolders}
    students = [folder for folder in subfolders if found[folder] or inner_skips[folder]]
    if not students:  # one student's folder
        name = path.resolve().name
        skipped = []
        _notebooks_under(path, skipped, name)  # the notes on links and special files
        jobs, names = _jobs_of_student(name, direct, skipped), [name]
    else:
        skipped = [Skipped(None, f"{printable(stray)}: a notebook at the top of a class "
                                 "folder belongs to no student, skipped (put it in the "
                                 "student's folder)") for stray in direct]
        skipped += [Skipped(None, f"{printable(entry)}: not a notebook file, skipped")
                    for entry in top_skips]
        jobs, names = [], [folder.name for folder in students]
        for folder in students:
            skipped += inner_skips[folder]
            jobs += _jobs_of_student(folder.name, found[folder], skipped)
    if not jobs and not skipped:
        raise CannotGrade(f"no notebooks found under {printable(path)}")
    if not jobs:
        raise CannotGrade(f"none of the notebooks under {printable(path)} can be graded "
                          f"({printable(skipped[0])})")
    return Found(jobs, skipped, names)
