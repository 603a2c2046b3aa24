"""Gradebooks that a learning-management system imports as they are.

Every format has the same stable columns: every lesson of the course (or of ``--only``),
whatever a student submitted. A lesson a student did not submit is *blank*, never 0
(a real zero is a submission that earned nothing), and every lesson's maximum is the
same for every student. A roster (``--roster``: a CSV with a ``folder`` column, the name
of the student's folder, and optionally ``name``, ``id``, ``sis_user_id``,
``sis_login_id``, ``email``, ``section``) joins identities: students in it who submitted
nothing get a row. For an LMS's download (Canvas's files name each student's user id,
Gradescope's metadata each submitter's e-mail) a row matches by that ``id`` or ``email``
as well, so a roster may give no folder, and a Canvas gradebook fills ``ID`` from the
file's user id when no roster gives one. Nobody is dropped silently: a generic or Canvas gradebook keeps a row
for a submission with no roster entry (and the grader reports it); a Moodle gradebook
cannot hold a row without the identity Moodle matches by, so such a student is left out
and reported, one line each (:func:`gradebook_warnings`).

Every format writes a lesson's score after a person's grades and any late penalty
(:mod:`grader.outputs.manual_grades`, :mod:`grader.outputs.late_work`); an excused lesson is
``EX`` (Canvas's own mark, in no total) in generic and Canvas gradebooks, and blank in
Moodle's, which has no such mark (its feedback column says so).

- ``generic``: student (the folder), the roster's columns, one column per lesson, total.
- ``canvas``: Canvas's gradebook import (``lib/gradebook_importer.rb``): the header starts
  ``Student, ID, SIS User ID, SIS Login ID`` and ends student information with
  ``Section``; assignment columns are titled ``Title (id)`` when their Canvas ids are
  given (``--assignments``), else by exact title; a ``Points Possible`` row; no total
  column (Canvas would make it an assignment called "total").
- ``moodle``: Moodle's grade import: an identity column (``Email address``, or ``ID
  number`` when more of the class has an id than an e-mail; e-mails kept exactly as written,
  since Moodle compares them case-sensitively), then per lesson its grade and, with
  feedback, a feedback column right after it, never one without its grade.
"""

import csv
import io
from dataclasses import dataclass, field

from grader.results import NotebookStatus, WrittenStatus
from grader.safe_text import printable, spreadsheet_safe

FORMATS = ("generic", "canvas", "moodle")
ROSTER_COLUMNS = ("folder", "name", "id", "sis_user_id", "sis_login_id", "email", "section")


CANVAS_ID_KEY = "\0canvas id "  # the key of a roster row with an id and no folder

# roster columns no two students share (a name may repeat: two students can share one)
UNIQUE_COLUMNS = ("id", "sis_user_id", "sis_login_id", "email")


class GradebookError(Exception):
    """The gradebook cannot be written as asked; the message says why, in one line."""


@dataclass
class Roster:
    people: dict = field(default_factory=dict)  # folder -> {column: value}
    # (unique column, value as compared) -> the key in people of the row that holds it
    by_identity: dict = field(default_factory=dict)

    @classmethod
    def read(cls, path):
        try:
            with open(path, newline="", encoding="utf-8-sig") as handle:
                rows = list(csv.DictReader(handle))
        except OSError as error:
            raise GradebookError(f"--roster {path}: cannot read it ({error.strerror})") from None
        except (csv.Error, UnicodeDecodeError) as error:
            raise GradebookError(f"--roster {path}: not a CSV file ({error})") from None
        if not rows or not {"folder", "id"} & set(rows[0]):
            raise GradebookError(f"--roster {path}: needs a header with a 'folder' column, "
                                 "or an 'id' column for a Canvas download (and any of "
                                 f"{', '.join(ROSTER_COLUMNS[1:])})")
        roster, first_line = cls(), {}
        for number, row in enumerate(rows, start=2):
            person = {column: (row.get(column) or "").strip()
                      for column in ROSTER_COLUMNS if column in row}
            folder = person.get("folder", "")
            if not folder and not person.get("id"):
                raise GradebookError(f"--roster {path}: line {number} has no folder"
                                     + (" and no id" if "id" in row else ""))
            # one person per row: a repeated folder or identity would send one student's
            # grades out under another's name (the last row winning, silently)
            # a row with an id only is matched to a Canvas download's student by that id
            own = folder or f"{CANVAS_ID_KEY}{person['id']}"
            for column, value in (("folder", folder), *((column, person.get(column, ""))
                                                        for column in UNIQUE_COLUMNS)):
                key = _compared(column, value)
                if value and key in first_line:
                    raise GradebookError(f"--roster {path}: line {number} repeats the "
                                         f"{column} {printable(value)!r} of line "
                                         f"{first_line[key]}; each student has one row")
                first_line.setdefault(key, number)
                if value and column != "folder":
                    roster.by_identity[key] = own
            roster.people[own] = person
        return roster

    def key_of(self, submission):
        """The roster's key for ``submission``'s student: its folder, else (a student of an
        LMS's download) the row with the id or e-mail the download named; None when no row
        names it."""
        if submission.student in self.people:
            return submission.student
        return next((self.by_identity[_compared(column, value)]
                     for column, value in submission.identity.items()
                     if value and _compared(column, value) in self.by_identity), None)

    @property
    def columns(self):
        present = set().union(*(person.keys() for person in self.people.values())) \
            if self.people else set()
        return [column for column in ROSTER_COLUMNS[1:] if column in present]


def _compared(column, value):
    """A roster cell as rows are told apart and matched by: e-mails in any case."""
    return column, value.lower() if column == "email" else value


def read_assignments(path):
    """``{lesson: (title, canvas id)}`` from a CSV with columns lesson, title, canvas_id."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise GradebookError(f"--assignments {path}: cannot read it ({error.strerror})") \
            from None
    if not rows or "lesson" not in rows[0]:
        raise GradebookError(f"--assignments {path}: needs columns lesson, title, canvas_id")
    return {(row.get("lesson") or "").strip(): ((row.get("title") or "").strip(),
                                                (row.get("canvas_id") or "").strip())
            for row in rows if (row.get("lesson") or "").strip()}


def lesson_columns(report):
    """The lessons of the gradebook, in course order, with their maximum points."""
    return list(report.lessons.items())


def _students(report, roster):
    """``[(folder, identity dict, submission or None)]``: the class and the roster's rows
    that match no student (a row without a folder shown by its name or id)."""
    rows, matched = [], set()
    for submission in report.submissions:
        key = roster.key_of(submission) if roster else None
        matched.add(key)
        rows.append((submission.student, roster.people[key] if key else {}, submission))
    for key, person in (roster.people.items() if roster else ()):
        if key not in matched:
            shown = person.get("folder") or person.get("name") or f"id {person['id']}"
            rows.append((shown, person, None))
    return sorted(rows, key=lambda row: row[0])


def unrostered(report, roster):
    """Students no roster row names, by folder or (a Canvas download) by user id."""
    if roster is None:
        return []
    return sorted(submission.student for submission in report.submissions
                  if roster.key_of(submission) is None)


EXCUSED_MARK = "EX"  # Canvas's mark for an excused assignment: in no total


def _score(submission, lesson, excused=EXCUSED_MARK):
    """The lesson's cell: its score after a person's grades and any late penalty, blank
    when not handed in, ``excused`` when a person excused it."""
    notebook = submission.notebook(lesson) if submission else None
    if notebook is None:
        return ""
    if notebook.excused:
        return excused
    if not notebook.submitted:
        return ""
    return _number(notebook.score)


def _feedback(submission, lesson):
    notebook = submission.notebook(lesson) if submission else None
    if notebook is None:
        return ""
    if notebook.excused:
        return " ".join(["Excused.", printable(notebook.excused_comment or "", 400)]).strip()
    if not notebook.submitted:  # a file that could not be graded says why
        return " ".join(["Not graded:", *(printable(note, 400) for note in notebook.notes)]
                        ) if notebook.notes else ""
    failed = [check for check in notebook.checks if not check.passed and not check.override]
    lines = [f"{notebook.score:g} / {notebook.max_score:g}."]
    if notebook.late and notebook.late.late:
        lines.append(printable(notebook.late.explanation, 400))
    lines += [f"{check.id} regraded: {check.override.points:g} / {check.max_score:g}. "
              f"{printable(check.override.comment, 400)}".strip()
              for check in notebook.checks if check.override]
    lines += [f"{answer.id}: {answer.score:g} / {answer.max_score:g}. "
              f"{printable(answer.comment or '', 400)}".strip()
              for answer in notebook.written if answer.status == WrittenStatus.GRADED]
    lines += [printable(check.feedback, 400) for check in failed[:3]]
    if len(failed) > 3:
        lines.append(f"({len(failed) - 3} more checks not passed: see the feedback page)")
    return " ".join(lines)


def _number(value):
    return f"{value:g}"


def _csv(rows):
    """The rows as CSV, no cell of which a spreadsheet would run as a formula."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(
        [spreadsheet_safe(cell) if isinstance(cell, str) else cell for cell in row]
        for row in rows)
    return buffer.getvalue()


def generic(report, roster=None):
    lessons = lesson_columns(report)
    identity = roster.columns if roster else []
    rows = [["student", *identity, *(lesson for lesson, _ in lessons), "total"]]
    for folder, person, submission in _students(report, roster):
        scores = [_score(submission, lesson) for lesson, _ in lessons]
        total = "" if submission is None else _number(submission.score)  # excused: not in it
        rows.append([printable(folder, 200), *(person.get(column, "") for column in identity),
                     *scores, total])
    return _csv(rows)


def canvas(report, roster=None, assignments=None):
    lessons = lesson_columns(report)
    assignments = assignments or {}
    titles = []
    for lesson, _ in lessons:
        title, canvas_id = assignments.get(lesson, ("", ""))
        title = title or lesson
        titles.append(f"{title} ({canvas_id})" if canvas_id else title)
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *titles],
            ["Points Possible", "", "", "", "", *(_number(maximum) for _, maximum in lessons)]]
    for folder, person, submission in _students(report, roster):
        canvas_id = submission.identity.get("id") if submission else None
        rows.append([person.get("name") or printable(folder, 200),
                     person.get("id") or canvas_id or "",
                     person.get("sis_user_id", ""), person.get("sis_login_id", ""),
                     person.get("section", ""),
                     *(_score(submission, lesson) for lesson, _ in lessons)])
    return _csv(rows)


def moodle_identity(report, roster):
    """The roster column Moodle matches rows by: ``email``, unless more of the class has
    an ``id`` than an e-mail (a Moodle import maps one column for every row)."""
    if roster is None or not ({"email", "id"} & set(roster.columns)):
        raise GradebookError("--format moodle needs --roster with an email or id column: "
                             "Moodle matches students by e-mail or ID number")
    people = [person for _, person, _ in _students(report, roster)]
    having = {column: sum(bool(person.get(column)) for person in people)
              for column in ("email", "id") if column in roster.columns}
    return max(having, key=lambda column: (having[column], column == "email"))


def moodle(report, roster=None, with_feedback=False):
    key_column = moodle_identity(report, roster)
    identity = "Email address" if key_column == "email" else "ID number"
    lessons = lesson_columns(report)
    header = [identity, "Full name"]
    for lesson, _ in lessons:
        header.append(lesson)
        if with_feedback:  # right after its grade: a feedback column alone wipes grades
            header.append(f"{lesson} (feedback)")
    rows = [header]
    for folder, person, submission in _students(report, roster):
        key = person.get(key_column, "")
        if not key:
            continue  # Moodle cannot place a row without its identity: left_out() says so
        row = [key, person.get("name", "") or printable(folder, 200)]
        for lesson, _ in lessons:
            row.append(_score(submission, lesson, excused=""))  # Moodle cannot excuse
            if with_feedback:
                row.append(_feedback(submission, lesson))
        rows.append(row)
    return _csv(rows)


def left_out(report, roster, gradebook_format):
    """Students a gradebook of ``gradebook_format`` has no row for: in a Moodle one, those
    without the identity Moodle matches rows by (generic and Canvas gradebooks keep a row
    for every student)."""
    if gradebook_format != "moodle":
        return []
    key = moodle_identity(report, roster)
    return [folder for folder, person, _ in _students(report, roster) if not person.get(key)]


def gradebook_warnings(report, roster, gradebook_format):
    """One line for each student whose gradebook row lacks what the LMS matches it by,
    or who has no row at all, and what to do: nobody is left out silently. And one for
    each notebook handed in that could not be graded: its cell is blank, and why."""
    lines = _not_graded_lines(report)
    if gradebook_format == "moodle":
        key = moodle_identity(report, roster)
        words = "e-mail" if key == "email" else "id"
        missing = left_out(report, roster, gradebook_format)
        not_in_roster = set(unrostered(report, roster))
        for folder in missing:
            why = ("is not in the roster" if folder in not_in_roster
                   else f"has no {words} in the roster")
            lines.append(f"{printable(folder)} {why}: LEFT OUT of the Moodle gradebook "
                         f"(Moodle matches rows by {words}); add it to the roster, then "
                         "write the gradebook again with python -m grader export")
        if missing:
            lines.append(f"{len(missing)} student(s) have no row in the Moodle gradebook "
                         "(named above); their grades are in the JSON report and the "
                         "generic gradebook")
        return lines
    canvas_ids = {s.student for s in report.submissions if s.identity.get("id")}
    for folder in unrostered(report, roster):
        if gradebook_format == "canvas" and folder in canvas_ids:
            continue  # its row has the Canvas user id its file named: Canvas matches it
        if gradebook_format == "canvas":
            lines.append(f"{printable(folder)} is not in the roster: its row has the folder "
                         "name as Student and no ID, so Canvas can match it by name only "
                         "(add it to the roster)")
        else:
            lines.append(f"{printable(folder)} is not in the roster: its row keeps the "
                         "folder name, with blank identity columns")
    return lines


def _not_graded_lines(report):
    lines = []
    for submission in report.submissions:
        for notebook in submission.notebooks:
            if notebook.status == NotebookStatus.NOT_GRADED:
                why = printable(" ".join(notebook.notes), 200) or "no reason recorded"
                lines.append(f"{printable(submission.student)}'s {notebook.name} was handed in "
                             f"but could not be graded, so its cell is blank: {why}")
    return lines


def gradebook_text(report, gradebook_format="generic", roster=None, assignments=None,
                   with_feedback=False):
    if gradebook_format == "generic":
        return generic(report, roster)
    if gradebook_format == "canvas":
        return canvas(report, roster, assignments)
    if gradebook_format == "moodle":
        return moodle(report, roster, with_feedback)
    raise GradebookError(f"unknown format {gradebook_format!r}; known: {', '.join(FORMATS)}")
