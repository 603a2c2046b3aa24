"""Find what to grade under a path: one notebook, one student's folder, or a class folder.

- ``alice/02_replay_buffer.ipynb``: one notebook of student "alice" (its folder's name).
  Any file name will do: a renamed notebook is matched to its lesson by its metadata or
  its cells (:func:`grader.lessons.lesson_of`).
- ``alice/``: one student's folder: the notebooks in it, and in its subfolders named like
  a lesson or a notebook (nbgrader's ``<student>/<lesson>/`` layout, an unzipped
  ``02_replay_buffer.ipynb/``).
- an LMS's download: Canvas's flat folder, Gradescope's export, Moodle's folders
  (:mod:`grader.class_run.lms_downloads`).
- ``class/``: a folder with other subfolders that hold notebooks is a class. Every such
  subfolder is one student's (all the notebooks below it are theirs, nbgrader's
  ``submitted/<student>/<lesson>/`` layout included), and every subfolder is a student
  with a row in the report, even one that holds no notebook. A notebook lying at the top
  of a class folder belongs to no student: it is skipped, with a note.

Of several notebooks of one lesson in a student's folder, the grader grades the one
holding the student's work, judged by content: the one with the most answer cells changed
from the released notebook, then the most lines of code of the student's own in them;
only when the contents tie, the latest saved (an unzip may set that time). A student
who finished a renamed copy and left the released file untouched is graded on the copy;
the others are named, with the reason, in the report and on the student's feedback page.

Every file that is not graded is named with the reason, in one line: not a lesson, a
symbolic link, not a regular file (a named pipe would hang a reader), a notebook that
cannot be read (not JSON, no cells), or another notebook of a lesson graded from another
file. The walk never follows links, so a link to ``solutions/`` is never graded as a
submission.
"""

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from grader.judge.submission_file import UnreadableSubmission, read_submission
from grader.lessons import UnknownLesson, all_lessons, answer_stubs, lesson_of
from grader.safe_text import printable


class CannotGrade(Exception):
    """The grader itself cannot run on this path; the message is the one-line reason."""


@dataclass(frozen=True)
class NotebookJob:
    student: str
    path: Path
    lesson: str
    # why this file was graded when the student's folder held other notebooks of its
    # lesson (a note on the lesson's entry in the report), else None
    choice: str | None = None


@dataclass(frozen=True)
class Skipped:
    student: str | None  # None: the file belongs to no student
    reason: str  # one line: the file and why it was not graded
    lesson: str | None = None  # the lesson the file would have been graded as
    # set when no other file of the lesson was graded: what the lesson's entry says
    lesson_note: str | None = None

    def __str__(self):
        return self.reason


@dataclass
class Found:
    jobs: list  # NotebookJob, in the order to grade them
    skipped: list  # Skipped
    students: list  # every student found, with or without a notebook to grade
    # {student: {roster column: value}} when the folder is an LMS's download (Canvas: the
    # user id; Gradescope: the e-mail): a roster row matches the student by it too
    identities: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Candidate:
    """A readable notebook of a lesson in a student's folder."""

    path: Path
    shown: str  # its path inside the student's folder, printable
    changed: int  # answer cells that differ from the released notebook
    written: int  # lines of code of the student's own in the answer cells
    saved: int  # its modification time, in nanoseconds


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


def part_of_a_students_folder(folder):
    """A folder named like a lesson (nbgrader's assignment folders) or like a notebook is
    never a student of its own: it belongs to the student whose folder holds it."""
    name = Path(folder).name
    return name in all_lessons() or name.endswith(".ipynb")


def _shown(path, root):
    try:
        return printable(Path(path).relative_to(root))
    except ValueError:
        return printable(path)


def notebooks_under(folder, skipped, student=None):
    """The notebook files under ``folder`` (links not followed), noting what is skipped."""
    found, named_like_notebooks = [], []
    for top, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders
                            if not name.startswith(".") and name != "__pycache__")
        for name in list(folders):  # os.walk lists links to folders but never enters them
            if _kind(Path(top) / name) == "link":
                folders.remove(name)
                skipped.append(Skipped(student, f"{printable(Path(top) / name)}: a "
                                                "symbolic link to a folder, not followed"))
        named_like_notebooks += [Path(top) / name for name in folders
                                 if name.endswith(".ipynb")]
        for name in sorted(files):
            if not name.endswith(".ipynb"):
                continue
            path = Path(top) / name
            kind = _kind(path)
            if kind == "file":
                found.append(path)
            else:
                reason = {"link": "a symbolic link (submit the notebook itself)",
                          "special": "not a regular file",
                          "missing": "gone while the class was read"}[kind]
                skipped.append(Skipped(student, f"{printable(path)}: {reason}, skipped"))
    for odd in named_like_notebooks:  # looked into like any folder: say so
        inside = sum(path.is_relative_to(odd) for path in found)
        skipped.append(Skipped(student, f"{printable(odd)}: a folder, not a notebook; "
                               + (f"the {inside} notebook(s) in it were considered like "
                                  "any other" if inside else "it holds no notebook, skipped")))
    return found


def _reasons_chosen(chosen, other, total):
    if chosen.changed > other.changed:
        return (f"it holds more of the student's work ({chosen.changed} of {total} answer "
                f"cells changed from the released notebook, {other.changed} here)")
    if chosen.written > other.written:
        return (f"it holds more of the student's code (both have {chosen.changed} of {total} "
                f"answer cells changed; {chosen.written} lines of their own in them, "
                f"{other.written} here)")
    if chosen.saved > other.saved:
        return (f"it was saved later (both have {chosen.changed} of {total} answer cells "
                f"changed from the released notebook and {chosen.written} lines of code of "
                "their own: the contents cannot tell them apart)")
    return (f"both have {chosen.changed} of {total} answer cells changed and the same "
            "time of saving, and its name comes first")


def choose_notebook(lesson, candidates):
    """The candidate holding the student's work, and the others: by content, the most
    answer cells changed from the released notebook, then the most lines of code of the
    student's own in them; only when the contents tie, the latest saved (a copy or an
    unzip may change that time), then the first by name."""
    ranked = sorted(candidates, key=lambda c: (-c.changed, -c.written, -c.saved, c.shown))
    return ranked[0], ranked[1:]


def candidate(path, root, lesson, submission):
    try:
        saved = os.lstat(path).st_mtime_ns
    except OSError:
        saved = 0
    stubs = answer_stubs(lesson)
    return Candidate(Path(path), _shown(path, root), submission.answers_changed(stubs),
                     submission.lines_written(stubs), saved)


def jobs_of_student(student, root, paths, skipped):
    """The jobs of one student's notebooks ``paths`` (under ``root``): one per lesson."""
    readable, unreadable = {}, []
    for path in paths:
        try:
            submission = read_submission(path)
        except UnreadableSubmission as error:
            try:
                lesson = lesson_of(path).name
            except UnknownLesson:
                lesson = None
            unreadable.append((path, lesson, printable(error, 300)))
            continue
        try:
            lesson = lesson_of(path, submission).name
        except UnknownLesson:
            skipped.append(Skipped(student, f"{printable(path)}: not a lesson of this "
                                            "course (its name, its metadata and its cells "
                                            "name none), skipped"))
            continue
        readable.setdefault(lesson, []).append(candidate(path, root, lesson, submission))
    jobs = []
    for lesson, candidates in sorted(readable.items()):
        chosen, others = choose_notebook(lesson, candidates)
        total = len(answer_stubs(lesson))
        for other in others:
            skipped.append(Skipped(student, f"{printable(other.path)}: not graded: "
                                            f"{printable(student)}'s {lesson} was graded "
                                            f"from {chosen.shown}, since "
                                            + _reasons_chosen(chosen, other, total),
                                   lesson))
        unread = [(_shown(path, root), why) for path, of, why in unreadable if of == lesson]
        choice = None
        if others or unread:
            not_graded = [f"{other.shown} ({other.changed} changed)" for other in others]
            not_graded += [f"{shown} (it cannot be read)" for shown, _ in unread]
            choice = (f"Your folder held {1 + len(not_graded)} notebooks of this lesson: "
                      f"{chosen.shown} was graded ({chosen.changed} of {total} answer cells "
                      f"changed from the released notebook), not {', '.join(not_graded)}. "
                      "The grader grades the one with the most answer cells changed, then "
                      "the most code of your own in them, then the latest saved.")
        jobs.append(NotebookJob(student, chosen.path, lesson, choice))
    for path, lesson, why in unreadable:
        if lesson in readable:
            skipped.append(Skipped(student, f"{printable(path)}: cannot be read as a "
                                            f"notebook ({why}); {lesson} was graded from "
                                            "another file", lesson))
        elif lesson is not None:
            skipped.append(Skipped(student, f"{printable(path)}: not graded: it cannot be "
                                            f"read as a notebook ({why})", lesson,
                                   f"{_shown(path, root)} could not be read: {why}"))
        else:
            skipped.append(Skipped(student, f"{printable(path)}: cannot be read as a "
                                            f"notebook ({why}), and its name names no "
                                            "lesson, skipped"))
    return jobs


def _student_of_file(path):
    """The student a notebook given alone belongs to: its folder, or the folder above
    when its folder is a lesson's (nbgrader's ``<student>/<lesson>/<notebook>``)."""
    folder = path.resolve().parent
    return folder.parent.name if part_of_a_students_folder(folder) else folder.name


def _one_notebook(path, kind):
    if path.suffix != ".ipynb" or kind == "special":
        raise CannotGrade(f"not a notebook file (.ipynb): {printable(path)}")
    try:
        submission = read_submission(path)
    except UnreadableSubmission as error:
        raise CannotGrade(f"{printable(path)}: cannot be graded: "
                          f"{printable(error, 300)}") from None
    try:
        lesson = lesson_of(path, submission).name
    except UnknownLesson as error:
        raise CannotGrade(printable(error)) from None
    student = _student_of_file(path)
    return Found([NotebookJob(student, path, lesson)], [], [student])


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
        return _one_notebook(path, kind)
    entries = sorted(path.iterdir())
    direct = [entry for entry in entries if entry.name.endswith(".ipynb")
              and _kind(entry) == "file"]
    subfolders = [entry for entry in entries if _kind(entry) == "folder"
                  and not entry.name.startswith(".") and entry.name != "__pycache__"]
    inner_skips = {folder: [] for folder in subfolders}
    found = {folder: notebooks_under(folder, inner_skips[folder], folder.name)
             for folder in subfolders}
    is_class = any((found[folder] or inner_skips[folder])
                   and not part_of_a_students_folder(folder) for folder in subfolders)
    from grader.class_run.lms_downloads import (canvas_download, gradescope_export,
                                                moodle_students)

    for layout in (gradescope_export, canvas_download):
        download = layout(path, direct, subfolders, found, inner_skips)
        if download is not None:
            return download
    if not is_class:  # one student's folder
        name = path.resolve().name
        if part_of_a_students_folder(path.resolve()):  # <student>/<lesson>/ given
            name = path.resolve().parent.name
        skipped = []
        notebooks = notebooks_under(path, skipped, name)
        jobs, names = jobs_of_student(name, path, notebooks, skipped), [name]
        if not notebooks and not skipped:
            raise CannotGrade(f"no notebooks found under {printable(path)}")
        return Found(jobs, skipped, names)
    students = [folder for folder in subfolders if not part_of_a_students_folder(folder)]
    skipped = [Skipped(None, f"{printable(stray)}: a notebook at the top of a class folder "
                             "belongs to no student, skipped (put it in the student's "
                             "folder)") for stray in direct]
    skipped += [Skipped(None, f"{printable(entry)}: not a notebook file, skipped")
                for entry in entries if entry.name.endswith(".ipynb")
                and _kind(entry) not in ("file", "folder")]
    skipped += [Skipped(None, f"{printable(entry)}: a symbolic link, not followed, skipped")
                for entry in entries if _kind(entry) == "link"
                and not entry.name.endswith(".ipynb")]
    skipped += [Skipped(None, f"{printable(folder)}: a folder named like a lesson or a "
                              "notebook at the top of a class folder belongs to no "
                              "student, skipped (put it in the student's folder)")
                for folder in subfolders if part_of_a_students_folder(folder)]
    jobs = []
    # a student's folders: one each, but Moodle's download gives a student one per plugin
    folders_of = moodle_students(students)
    for student, folders in folders_of.items():
        for folder in folders:
            skipped += inner_skips[folder]
        notebooks = [notebook for folder in folders for notebook in found[folder]]
        if not notebooks and not any(inner_skips[folder] for folder in folders):
            skipped.append(Skipped(student, f"{printable(folders[0])}: no notebook (.ipynb) "
                                            "in this student's folder, nothing graded"))
        root = folders[0] if len(folders) == 1 else path
        jobs += jobs_of_student(student, root, notebooks, skipped)
    return Found(jobs, skipped, list(folders_of))

