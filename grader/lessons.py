"""The lessons the course has, read from the source notebooks in ``solutions/``.

A lesson is named by its notebook's stem ("02_replay_buffer"), which is also the
``course.lesson`` entry of the notebook's metadata. A submitted notebook is matched to a
lesson by its file name first (students rarely rename: "Copy of 02_replay_buffer",
"02_replay_buffer-Copy1" name it too), then by that metadata entry, then by its cells:
each lesson's cells carry nbgrader ids no other lesson uses, and they survive a rename
and an editor that drops the notebook's metadata.
"""

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import nbformat

REPOSITORY = Path(__file__).resolve().parent.parent
SOURCE_DIR = "solutions"  # the source notebooks, with answers and hidden tests
STUDENT_DIR = "notebooks"  # their student versions, as released

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
        """The source notebook: read once per process (again if the file changes), and a
        copy each time, so a caller may change it."""
        info = self.source_path.stat()
        return nbformat.from_dict(_read_notebook(self.source_path, info.st_mtime_ns,
                                                 info.st_size))

    @property
    def stubs(self):
        """``{grade_id: source}`` of the answer cells as released (:func:`answer_stubs`)."""
        return answer_stubs(self.name)


@lru_cache(maxsize=32)
def _read_notebook(path, mtime_ns, size):
    return nbformat.read(path, as_version=4)


def source_notebooks(root=REPOSITORY):
    return sorted((Path(root) / SOURCE_DIR).glob("[0-9][0-9]_*.ipynb"))


@lru_cache(maxsize=None)
def all_lessons(root=REPOSITORY):
    lessons = {}
    for path in source_notebooks(root):
        metadata = nbformat.read(path, as_version=4).metadata.get("course", {})
        lessons[path.stem] = Lesson(path.stem, path, metadata.get("exports_to"))
    return lessons


class UnknownLesson(ValueError):
    pass


def lesson_named(name):
    """The lesson called ``name`` ("02_replay_buffer"); UnknownLesson if there is none."""
    lessons = all_lessons()
    if name not in lessons:
        raise UnknownLesson(f"{name}: not a lesson of this course (the lessons are "
                            f"{', '.join(sorted(lessons))})")
    return lessons[name]


def _cell_ids(lesson):
    return {cell.metadata["nbgrader"]["grade_id"] for cell in lesson.source().cells
            if isinstance(cell.metadata.get("nbgrader"), dict)
            and isinstance(cell.metadata["nbgrader"].get("grade_id"), str)}


@lru_cache(maxsize=None)
def distinctive_cell_ids():
    """``{lesson name: the nbgrader ids of its cells that no other lesson uses}``."""
    ids = {name: _cell_ids(lesson) for name, lesson in all_lessons().items()}
    return {name: frozenset(own - set().union(*(other for key, other in ids.items()
                                                 if key != name)))
            for name, own in ids.items()}


@lru_cache(maxsize=None)
def answer_stubs(name):
    """``{grade_id: source}`` of lesson ``name``'s answer cells (code and written) as
    released to students: what an answer cell holds before a student works in it. Read
    from the released notebook (a test keeps it equal to what a release makes), else
    made again (importing nbgrader: a second of CPU in every grader run)."""
    from grader.nbgrader_cells import is_answer, is_manually_graded, nbgrader_meta

    released = REPOSITORY / STUDENT_DIR / f"{name}.ipynb"
    if released.is_file():
        notebook = nbformat.read(released, as_version=4)
    else:
        from grader.judge.student_notebook import student_version
        notebook = student_version(all_lessons()[name].source())
    return {nbgrader_meta(cell)["grade_id"]: cell.source for cell in notebook.cells
            if is_answer(cell) or is_manually_graded(cell)}


def solution_answers(name):
    """``{grade_id: text}`` of lesson ``name``'s answer cells (code, and written answers)
    with the instructors' answers, as a student would have typed them: the source's cells
    without their ``### BEGIN SOLUTION`` / ``### END SOLUTION`` marker lines."""
    from grader.nbgrader_cells import is_answer, is_manually_graded, nbgrader_meta

    markers = ("### BEGIN SOLUTION", "### END SOLUTION")
    return {nbgrader_meta(cell)["grade_id"]:
            "\n".join(line for line in cell.source.splitlines() if line.strip() not in markers)
            for cell in all_lessons()[name].source().cells
            if is_answer(cell) or is_manually_graded(cell)}


def lesson_called(text, names=None):
    """The name of the lesson ``text`` stands for (``01``, ``1`` or ``01_qlearning``) among
    ``names`` (default: the course's), or None."""
    names = list(all_lessons()) if names is None else names
    return next((name for name in names if text in (name, name[:2], str(int(name[:2])))),
                None)


def lesson_named_in(file_name):
    """The lesson whose name the file name holds, or None (none, or several)."""
    lessons = all_lessons()
    stem = re.sub(r"[-\s]+", "_", Path(file_name).stem.lower())
    named = [name for name in lessons if name in stem]
    if len(named) == 1:
        return lessons[named[0]]
    match = LESSON_NAME.search(stem)
    return lessons.get(match.group(1)) if match else None


def lesson_holding(cell_ids):
    """The lesson whose own cells (by nbgrader id) these are, or None."""
    counts = {name: len(own & set(cell_ids)) for name, own in distinctive_cell_ids().items()}
    best = max(counts.values(), default=0)
    winners = [name for name, count in counts.items() if count == best]
    return all_lessons()[winners[0]] if best > 0 and len(winners) == 1 else None


def lesson_of(notebook_path, submission=None):
    """The lesson a submitted notebook belongs to: the one its file name names, else the
    one its metadata names, else the one whose cells it holds. ``submission`` is what the
    file holds (a :class:`~grader.judge.submission_file.Submission`), or None when it was
    not read; raises :class:`UnknownLesson` with a one-line reason."""
    lessons = all_lessons()
    by_name = lesson_named_in(notebook_path)
    if by_name is not None:
        return by_name
    if submission is not None:
        if isinstance(submission.lesson, str) and submission.lesson in lessons:
            return lessons[submission.lesson]
        by_cells = lesson_holding([*submission.code, *submission.written])
        if by_cells is not None:
            return by_cells
    looked_at = ("its name, its metadata (course.lesson) and its cells name no lesson"
                 if submission is not None else "its name names no lesson")
    raise UnknownLesson(f"{Path(notebook_path).name}: not a lesson of this course "
                        f"({looked_at}; the lessons are {', '.join(sorted(lessons))})")


def earlier_reference_modules(lesson):
    """Reference modules a lesson's kernel may import: those of the lessons before it."""
    return [other.exports_to for other in all_lessons().values()
            if other.number < lesson.number and other.exports_to]
