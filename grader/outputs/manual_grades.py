"""Grades given by a person: written answers scored, checks regraded, lessons excused.

The instructor keeps one CSV file (``--manual FILE`` of ``grade`` and ``export``), a row
per grade::

    student,lesson,item,points,comment,max_points,answer
    ada,06_capstone,conclusion,2.5,Right trend; quote the interval too,3,"CER helps ..."
    ben,03_prioritized_replay,test_sum_tree,4,regraded: the test's edge case was unfair,4,
    cy,05_combined_replay,*,excused,medical leave,,

- ``item`` is a written answer's id (``points`` is the person's grade for it), an
  automatic check's id (``points`` replace what the check gave: a regrade), or ``*``, the
  whole lesson, whose only value is ``excused`` (it then counts in no total; Canvas shows
  ``EX``). ``lesson`` may be the lesson's number (``06``).
- ``points`` left blank: not graded yet. ``comment`` reaches the student's page and the
  Moodle feedback column. ``max_points`` and ``answer`` are written by the grader for
  the person grading, and ignored when the file is read.

The grader adds a row (points blank, the student's text beside it) for every written
answer that awaits a person and has no row yet, appending to the file and never
rewriting a row already there: grading again, or a class graded in parts, never loses a
grade. A row that cannot be right (an unknown student, lesson or item, points outside
0 to the item's maximum, a second row for the same item) is a one-line error naming the
file and line.
"""

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from grader.outputs.report import write_atomically
from grader.results import Override, WrittenStatus
from grader.safe_text import from_spreadsheet, printable, spreadsheet_safe

COLUMNS = ("student", "lesson", "item", "points", "comment", "max_points", "answer")
REQUIRED = COLUMNS[:4]
WHOLE_LESSON = "*"
EXCUSED = "excused"


class ManualGradesError(Exception):
    """The manual grades file cannot be used as it is; the message names the line."""


@dataclass(frozen=True)
class ManualGrade:
    line: int
    student: str
    lesson: str
    item: str
    points: object  # a float, EXCUSED, or None (not graded yet)
    comment: str


def _lesson_name(text, lessons):
    """The full lesson name for ``text`` ("06" or "06_capstone"), or None."""
    from grader.lessons import lesson_called

    return lesson_called(text, list(lessons))


def read_manual_grades(path, lessons):
    """The grades in the CSV file ``path`` (rows with points blank are skipped), checked
    for form: known lessons, numbers, one row per item. ``lessons``: the report's."""
    shown = printable(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            rows = [(reader.line_num, row) for row in reader]
    except FileNotFoundError:
        return []
    except OSError as error:
        raise ManualGradesError(f"{shown}: cannot read it ({error.strerror})") from None
    except (csv.Error, UnicodeDecodeError) as error:
        raise ManualGradesError(f"{shown}: not a CSV file ({printable(error)})") from None
    missing = [column for column in REQUIRED if column not in header]
    if missing:
        raise ManualGradesError(f"{shown}: the header lacks {', '.join(missing)} (columns: "
                                f"{', '.join(COLUMNS)})")
    grades, seen = [], {}
    for line, row in rows:
        def field_of(column):
            return (row.get(column) or "").strip()

        where = f"{shown} line {line}"
        student, item, points = (from_spreadsheet(field_of("student")), field_of("item"),
                                 field_of("points"))
        if not (student or field_of("lesson") or item or points):
            continue  # a blank line
        lesson = _lesson_name(field_of("lesson"), lessons)
        if lesson is None:
            raise ManualGradesError(f"{where}: no lesson {printable(field_of('lesson'))!r} in "
                                    f"this course (lessons: {', '.join(lessons)})")
        if not student or not item:
            raise ManualGradesError(f"{where}: needs a student and an item (a written "
                                    f"answer's or a check's id, or {WHOLE_LESSON} for the lesson)")
        if not points:
            continue  # awaiting a person
        if points.lower() == EXCUSED:
            if item != WHOLE_LESSON:
                raise ManualGradesError(f"{where}: only a whole lesson (item {WHOLE_LESSON}) "
                                        f"can be excused, not {printable(item)}")
            value = EXCUSED
        else:
            if item == WHOLE_LESSON:
                raise ManualGradesError(f"{where}: a whole lesson (item {WHOLE_LESSON}) "
                                        f"can only be {EXCUSED}; give points to its items")
            try:
                value = float(points)
            except ValueError:
                raise ManualGradesError(f"{where}: points {printable(points)!r} is not a "
                                        f"number (or {EXCUSED})") from None
            if not 0 <= value < float("inf"):
                raise ManualGradesError(f"{where}: points {printable(points)} must be 0 or more")
        key = (student, lesson, item)
        if key in seen:
            raise ManualGradesError(f"{where}: a second grade for {printable(item)} of "
                                    f"{printable(student)}'s {lesson} (first on line "
                                    f"{seen[key]})")
        seen[key] = line
        grades.append(ManualGrade(line, student, lesson, item, value, field_of("comment")))
    return grades


def course_items(lessons):
    """``{lesson: {item: points}}``: the written answers and checks a person may grade in
    each of ``lessons``, from the course's source notebooks."""
    from grader.nbgrader_cells import is_manually_graded, is_test, nbgrader_meta
    from grader.lessons import all_lessons

    return {name: {nbgrader_meta(cell)["grade_id"]: float(nbgrader_meta(cell).get("points", 0))
                   for cell in all_lessons()[name].source().cells
                   if is_test(cell) or is_manually_graded(cell)}
            for name in lessons}


def check_manual_grades(grades, students, items, path):
    """Raise ManualGradesError for the first grade naming a student not in ``students``,
    an item not in ``items`` (:func:`course_items`) or more points than the item's: done
    before grading, so a typo costs seconds, not a class's run."""
    shown = printable(path)
    for grade in grades:
        where = f"{shown} line {grade.line}"
        if grade.student not in students:
            raise ManualGradesError(f"{where}: no student {printable(grade.student)!r} in the "
                                    "class (a student is their folder's name)")
        if grade.lesson not in items:
            raise ManualGradesError(f"{where}: {grade.lesson} is not graded in this run")
        if grade.item == WHOLE_LESSON:
            continue
        worth = items[grade.lesson].get(grade.item)
        if worth is None:
            raise ManualGradesError(f"{where}: {grade.lesson} has no written answer or check "
                                    f"{printable(grade.item)!r} (it has "
                                    f"{', '.join(items[grade.lesson])})")
        if grade.points > worth:
            raise ManualGradesError(f"{where}: {grade.points:g} points for "
                                    f"{printable(grade.item)}, which is worth {worth:g}")


def _clear(notebook):
    """``notebook`` (a NotebookResult) without any person's grade: what grading gave."""
    notebook.excused, notebook.excused_comment = False, None
    for check in notebook.checks:
        check.override = None
    for answer in notebook.written:
        answer.ungrade()


def _notebook(report, grade, where):
    """The report's NotebookResult ``grade`` is for; ManualGradesError when there is none."""
    submission = report.student(grade.student)
    if submission is None:
        raise ManualGradesError(f"{where}: no student {printable(grade.student)!r} in the "
                                "report (the student is their folder's name)")
    notebook = submission.notebook(grade.lesson)
    if notebook is None:  # a report of --only some checks holds only their lessons
        raise ManualGradesError(f"{where}: this report does not hold {grade.lesson} "
                                f"(it holds {', '.join(report.lessons)})")
    return notebook


def apply_manual_grades(report, grades, path):
    """Put ``grades`` into ``report`` (a ClassReport, in place, after clearing any applied
    before; its scores follow from the parts); return the lines of grades that cannot
    apply yet (a lesson the student did not hand in, or that could not be graded):
    warnings, kept in the file."""
    shown = printable(path)
    for _, notebook in report.notebooks():
        _clear(notebook)
    waiting = []
    for grade in grades:
        where = f"{shown} line {grade.line}"
        notebook = _notebook(report, grade, where)
        if grade.points == EXCUSED:
            notebook.excused, notebook.excused_comment = True, grade.comment
            continue
        answers = {answer.id: answer for answer in notebook.written}
        checks = {check.id: check for check in notebook.checks}
        if not notebook.submitted:
            waiting.append(f"{where}: {printable(grade.student)}'s {grade.lesson} was "
                           f"{notebook.status}: its grade for {printable(grade.item)} "
                           "waits until it is graded")
            continue
        item = answers.get(grade.item) or checks.get(grade.item)
        if item is None:
            known = ", ".join(list(answers) + list(checks))
            raise ManualGradesError(f"{where}: {grade.lesson} has no written answer or check "
                                    f"{printable(grade.item)!r} (it has {known})")
        if grade.points > item.max_score:
            raise ManualGradesError(f"{where}: {grade.points:g} points for "
                                    f"{printable(grade.item)}, which is worth "
                                    f"{item.max_score:g}")
        if grade.item in answers:
            item.grade(grade.points, grade.comment)
        else:
            item.override = Override(grade.points, grade.comment)
    return waiting


def awaiting_rows(report, grades):
    """Template rows for the written answers awaiting a person that no row of ``grades``
    (nor a blank row already in the file) names."""
    rows = [{"student": submission.student, "lesson": notebook.name, "item": answer.id,
             "points": "", "comment": "", "max_points": f"{answer.max_score:g}",
             "answer": printable(answer.answer, 20_000)}
            for submission, notebook in report.notebooks() for answer in notebook.written
            if answer.status == WrittenStatus.AWAITING]
    named = {(grade.student, grade.lesson, grade.item) for grade in grades}
    return [row for row in rows if (row["student"], row["lesson"], row["item"]) not in named]


def _rows_in_file(path, lessons):
    """``(student, lesson, item)`` of every row of the file, graded or blank."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            return {(from_spreadsheet((row.get("student") or "").strip()),
                     _lesson_name((row.get("lesson") or "").strip(), lessons),
                     (row.get("item") or "").strip()) for row in csv.DictReader(handle)}
    except FileNotFoundError:
        return set()


def add_awaiting_rows(report, grades, path):
    """Append a row to the file for each written answer awaiting a person that has none
    (the file is made, with its header, if there is none); rows already there are kept
    byte for byte. Returns how many rows were added."""
    path = Path(path)
    present = _rows_in_file(path, report.lessons)
    rows = [row for row in awaiting_rows(report, grades)
            if (row["student"], row["lesson"], row["item"]) not in present]
    if not rows:
        return 0
    existing = path.read_text(encoding="utf-8-sig") if path.exists() else ""
    header = next(csv.reader([existing.splitlines()[0]])) if existing.strip() else list(COLUMNS)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, extrasaction="ignore",
                            lineterminator="\n")
    if not existing.strip():
        writer.writeheader()
    elif not existing.endswith("\n"):
        buffer.write("\n")
    writer.writerows({column: spreadsheet_safe(value) for column, value in row.items()}
                     for row in rows)
    write_atomically(path, existing + buffer.getvalue())
    return len(rows)
