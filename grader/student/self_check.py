"""``python -m grader check NOTEBOOK``: what the grader will give this notebook, before
it is handed in.

The notebook is graded exactly as the instructor's grader grades it (rebuilt from the
course with only its answer cells kept, run in the sandbox, probed from outside), with the
public salt unless another is given. Learning checks take a minute or more, so they are
listed as skipped unless ``--learning`` is given. Besides each check's result, the report
says what the rebuild ignored: code the student wrote outside answer cells, which works in
their notebook but is not graded.
"""

import json
import textwrap

import nbformat

from checks import checks_for_lesson
from checks.framework import VISIBLE_SALT
from grader.judge.grade_notebook import grade_notebook
from grader.judge.submission_file import (UnreadableSubmission, parse_submission,
                                          read_notebook_bytes)
from grader.lessons import lesson_of
from grader.nbgrader_cells import is_answer, is_manually_graded, nbgrader_meta
from grader.outputs.spec import asks_of
from grader.results import Status
from grader.safe_text import printable

STATUS_WORDS = {Status.PASSED: "\u2713 passed", Status.FAILED: "\u2717 failed",
                Status.NOT_WRITTEN: "\u2026 not written yet", Status.ERROR: "\u2717 error",
                Status.TIMEOUT: "\u2717 timed out"}


def self_check(path, salt=VISIBLE_SALT, learning=False, isolate=True):
    """(the notebook's :class:`~grader.results.NotebookResult`, as in the class report;
    names of learning checks skipped; what the rebuild ignored, in words). The file is
    read once: what is graded is what was looked at."""
    try:
        data = read_notebook_bytes(path)
        submission = parse_submission(data)
    except UnreadableSubmission as error:
        data, submission = None, error  # grade_notebook reports it
    readable = not isinstance(submission, UnreadableSubmission)
    lesson = lesson_of(path, submission if readable else None)  # the name may still say it
    checks = checks_for_lesson(lesson.name)
    skipped = [] if learning else [check.name for check in checks if check.learning]
    only = None if learning else {check.name for check in checks if not check.learning}
    result = grade_notebook(path, salt, isolate=isolate, only=only, lesson=lesson,
                            submission=submission)
    return result, skipped, ignored_by_rebuild(lesson, data)


def ignored_by_rebuild(lesson, data):
    """Code in the submitted notebook (its file's bytes) that grading does not use: cells
    the student added and changes to the course's own cells. Empty if the notebook cannot
    be read (the check's notes say why)."""
    try:
        submitted = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception:  # unreadable: grade_notebook has already said so in the notes
        return []
    course_cells = {nbgrader_meta(cell).get("grade_id"): cell for cell in lesson.source().cells
                    if nbgrader_meta(cell).get("grade_id")}
    ignored = []
    for number, cell in enumerate(submitted.cells, start=1):
        if cell.get("cell_type") != "code" or not str(cell.get("source", "")).strip():
            continue
        grade_id = nbgrader_meta(cell).get("grade_id")
        first_line = printable(str(cell.source).strip().splitlines()[0], 60)
        if grade_id not in course_cells:
            ignored.append(f"cell {number} (`{first_line}`) is a cell you added: its code is "
                           "not graded; move what the answers need into their answer cells")
            continue
        course_cell = course_cells[grade_id]
        if is_answer(course_cell) or is_manually_graded(course_cell):
            continue
        if str(cell.source).strip() != course_cell.source.strip():
            ignored.append(f"cell {number} ('{printable(grade_id, 60)}') is the course's: "
                           "your changes to it are not graded, the course's version runs")
    return ignored


WIDTH = 88  # a terminal's or a notebook output's width: messages wrap, never run on
# how to ask for the learning checks, in the words of the way the self-check was called
LEARNING_HINTS = {"terminal": "add --learning to run it",
                  "cell": "run check_my_notebook(..., learning=True) to run it"}


def _wrapped(text, indent="    "):
    """``text`` wrapped at WIDTH under ``indent``, its own line breaks kept."""
    return [wrapped for paragraph in str(text).splitlines() or [""]
            for wrapped in textwrap.wrap(paragraph, WIDTH, initial_indent=indent,
                                         subsequent_indent=indent + "  ") or [indent]]


def printed_report(notebook, skipped, ignored, salt, called_from="terminal"):
    """The self-check (a :class:`~grader.results.NotebookResult`) as a student reads it in
    a terminal (``called_from`` "terminal") or under the lesson's last cell ("cell"): the
    score first, a line per check passed, and for each check not passed what it asks and
    what it found, wrapped."""
    lines = [f"Self-check of {notebook.name}: {notebook.automatic_score:g} / "
             f"{notebook.automatic_max_score:g} from the checks run"
             + (f" ({len(skipped)} learning check(s) skipped)" if skipped else ""),
             *_wrapped(f"(graded as the grader does: rebuilt from the course, answer cells "
                       f"only; isolation: {notebook.isolation['level']}; salt {salt!r})", ""),
             ""]
    for check in notebook.checks:
        lines.append(f"{STATUS_WORDS[check.status]:<18} {check.id} "
                     f"({check.score:g}/{check.max_score:g})")
        if check.status == Status.PASSED:
            continue
        asks = asks_of(notebook.name, check.id)
        if asks:
            lines += _wrapped(f"asks: {asks}")
        lines += _wrapped(check.feedback)
    for name in skipped:
        lines.append(f"{'- skipped':<18} {name}")
        lines += _wrapped(f"a learning check, a minute or more: {LEARNING_HINTS[called_from]}")
    for note in notebook.notes:
        lines += _wrapped(f"note: {note}", "")
    for answer in notebook.written:
        state = "graded by a person" if answer.answered else "NOT ANSWERED yet"
        lines.append(f"written answer {answer.id} ({answer.max_score:g} pts): {state}")
    for what in ignored:
        lines += _wrapped(f"ignored: {what}", "")
    return "\n".join(lines)


def write_self_check_json(notebook, skipped, ignored, path):
    with open(path, "w") as out:
        json.dump({"notebook": notebook.to_data(), "skipped": skipped, "ignored": ignored},
                  out, indent=2)
