"""The lesson registry (grader/lessons.py): one list of lessons, read from solutions/, that
the checks' own registry (shipped without the grader) agrees with, and a Lesson that reads
its source once per process without handing out a notebook two callers share."""

import os
import shutil

import nbformat
import pytest

from checks import LESSON_MODULES, checks_for_lesson
from grader.lessons import Lesson, UnknownLesson, all_lessons, lesson_named
from grader.nbgrader_cells import autograded_cells, nbgrader_meta


def test_the_checks_and_the_grader_know_the_same_lessons_in_the_same_order():
    assert list(LESSON_MODULES) == list(all_lessons())


@pytest.mark.parametrize("lesson", list(all_lessons()))
def test_every_test_cell_of_a_lesson_is_one_of_its_checks_and_every_check_has_one(lesson):
    cells = [nbgrader_meta(cell)["grade_id"]
             for cell in autograded_cells(all_lessons()[lesson].source())]
    assert sorted(cells) == sorted(check.name for check in checks_for_lesson(lesson))


def test_a_lesson_is_found_by_its_exact_name_only():
    assert lesson_named("02_replay_buffer").number == 2
    for wrong in ("02", "02_replay_buffer.ipynb", "replay_buffer", ""):
        with pytest.raises(UnknownLesson, match="not a lesson of this course") as refused:
            lesson_named(wrong)
        assert "\n" not in str(refused.value)


def test_a_lessons_source_is_a_copy_each_time_and_read_again_when_the_file_changes(tmp_path):
    original = all_lessons()["06_capstone"]
    path = tmp_path / "06_capstone.ipynb"
    shutil.copy(original.source_path, path)
    lesson = Lesson("06_capstone", path, original.exports_to)
    first = lesson.source()
    first.cells[0].source = "changed by one caller"
    assert lesson.source().cells[0].source != "changed by one caller"
    edited = nbformat.read(path, as_version=4)
    edited.cells[0].source = "# A new title"
    nbformat.write(edited, path)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a later edit
    assert lesson.source().cells[0].source == "# A new title"


def test_a_lessons_stubs_are_its_released_answer_cells():
    lesson = all_lessons()["02_replay_buffer"]
    released = nbformat.read(lesson.source_path.parent.parent / "notebooks"
                             / "02_replay_buffer.ipynb", as_version=4)
    stubs = {nbgrader_meta(cell)["grade_id"]: cell.source for cell in released.cells
             if nbgrader_meta(cell).get("solution")}
    assert lesson.stubs == stubs and "YOUR CODE HERE" in "".join(stubs.values())
