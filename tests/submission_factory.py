"""Write student submissions for grader tests, and grade them quickly.

A submission is the released student notebook with answer cells filled in: the
instructors' answers by default, some replaced by the test's own code.
"""

import json
import sys
from pathlib import Path

import nbformat

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY / "examples"))  # make_submissions

import make_submissions  # noqa: E402
from make_submissions import solution_answers, submission  # noqa: E402

from checks import checks_for_lesson  # noqa: E402
from grader.judge.grade_notebook import grade_notebook  # noqa: E402
from grader.lessons import all_lessons  # noqa: E402

TEST_SALT = "grader-tests"
# Non-learning checks of each lesson: grading them takes seconds, not tens of seconds.
QUICK_CHECKS = {lesson: {check.name for check in checks_for_lesson(lesson) if not check.learning}
                for lesson in all_lessons()}


def write_submission(folder, lesson, answers=None, edit=None, student="student"):
    """``folder/student/lesson.ipynb`` with the instructors' answers, ``answers`` replacing
    some of them, and ``edit(notebook)`` applied last; returns its path."""
    notebook = submission(lesson, {**solution_answers(lesson), **(answers or {})})
    if edit is not None:
        edit(notebook)
    path = Path(folder) / student / f"{lesson}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def grade(path, only=None, **options):
    """Grade with the test salt; ``only`` defaults to the lesson's quick checks."""
    lesson = Path(path).stem
    options.setdefault("check_time_limit", 10.0)
    options.setdefault("cell_time_limit", 10.0)
    return grade_notebook(path, TEST_SALT, only=only or QUICK_CHECKS[lesson], **options)


def statuses(result):
    return {check.id: check.status for check in result.checks}


def feedback(result, check_id):
    return next(check.feedback for check in result.checks if check.id == check_id)


def as_json(result):
    from grader.outputs.report import graded_content

    return json.dumps(graded_content([check.to_data() for check in result.checks]
                                     + [result.notes]),
                      sort_keys=True)
