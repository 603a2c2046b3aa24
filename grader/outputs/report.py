"""The class report: every student's lessons made from their notebooks' results
(:mod:`grader.results`), written as JSON and printed as a table after grading.
(Gradebooks for an LMS are :mod:`grader.outputs.gradebooks`.)"""

import json
import os
import tempfile
from pathlib import Path

from grader.results import (ClassReport, NotebookResult, NotebookStatus, Status,
                            StudentResult, WrittenStatus)
from grader.safe_text import printable


def lesson_maxima(only=None):
    """``{lesson: points}`` of every lesson of the course (or of the lessons that hold a
    check of ``only``), in course order: the gradebook's stable columns. A lesson's points
    are its automatic checks' (with ``only``, just those) and its written answers'
    (graded by a person, as nbgrader counts them)."""
    from grader.nbgrader_cells import autograded_cells, is_manually_graded, nbgrader_meta
    from grader.lessons import all_lessons

    maxima = {}
    for name, lesson in all_lessons().items():
        source = lesson.source()
        cells = [cell for cell in autograded_cells(source)
                 if only is None or nbgrader_meta(cell)["grade_id"] in only]
        if cells:
            cells += [cell for cell in source.cells if is_manually_graded(cell)]
            maxima[name] = float(sum(float(nbgrader_meta(cell).get("points", 0))
                                     for cell in cells))
    return maxima


MEASURED = "usage"  # a check's CPU and wall seconds: measured, so they vary run to run


def graded_content(data):
    """``data`` (a report, a notebook's entry, a check, or lists of them) without what is
    measured rather than judged: what two gradings of the same submission and salt must
    agree on, check by check, whatever the machine's load."""
    if isinstance(data, dict):
        return {key: graded_content(value) for key, value in data.items() if key != MEASURED}
    if isinstance(data, list):
        return [graded_content(item) for item in data]
    return data


def class_report(results_by_student, skipped=(), lessons=None, identities=None):
    """``{student: [NotebookResult, ...]}`` -> the :class:`~grader.results.ClassReport`.

    Every student lists every lesson of ``lessons`` (``{lesson: max points}``, default
    the whole course). A lesson without a graded notebook is not submitted and has no
    score, never 0, and the same maximum as everyone's; its status is "not submitted",
    or "not graded" when the student handed in a file of it that could not be graded (its
    notes say why). ``skipped`` (:class:`~grader.class_run.submissions.Skipped`) become
    each student's notes, and the notes of the class for files that belong to no
    student. A student's score is out of the lessons graded and of the whole course.
    ``identities`` (``{student: {roster column: value}}``, what an LMS's download named
    of each student) go with them."""
    lessons = lesson_maxima() if lessons is None else lessons
    submissions = []
    for student in sorted(results_by_student):
        graded = {result.name: result for result in results_by_student[student]}
        mine = [entry for entry in skipped if entry.student == student]
        notebooks = [graded[lesson] if lesson in graded
                     else NotebookResult.not_submitted(
                         lesson, maximum, [entry.lesson_note for entry in mine
                                           if entry.lesson == lesson and entry.lesson_note])
                     for lesson, maximum in lessons.items()]
        notebooks += [graded[name] for name in sorted(set(graded) - set(lessons))]
        submissions.append(StudentResult(student, notebooks,
                                         [entry.reason for entry in mine],
                                         dict((identities or {}).get(student, {}))))
    return ClassReport(dict(lessons), submissions,
                       [entry.reason for entry in skipped if entry.student is None])


def check_writable(path):
    """Raise OSError (with the reason) unless a file can be written at ``path``; checked
    before grading, so a finished run is never lost to a typo in an output path."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder")
    existed = path.exists()
    with open(path, "a"):
        pass
    if not existed:
        path.unlink()


def write_atomically(path, text):
    """Write ``text`` to ``path`` through a temporary file beside it, so a reader never
    sees half a report."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(report, path):
    """Write ``report`` (a ClassReport) as the JSON report."""
    write_atomically(path, json.dumps(report.to_data(), indent=2) + "\n")


def summary_table(report):
    """The table printed after grading (``report``, a ClassReport): student, lesson,
    score / max, checks passed, and a row for each lesson handed in that could not be
    graded, with the reason."""
    lines = []
    for submission in report.submissions:
        student = printable(submission.student, 60)
        shown = [notebook for notebook in submission.notebooks
                 if notebook.submitted or notebook.status == NotebookStatus.NOT_GRADED]
        if not shown:
            lines.append({"student": student, "lesson": "-", "score": "-",
                          "checks passed": "-", "manual": "",
                          "problems": "nothing graded (see notes)"})
        for notebook in shown:
            if not notebook.submitted:  # handed in, yet without a score: say why, here
                lines.append({"student": student, "lesson": notebook.name, "score": "-",
                              "checks passed": "-", "manual": "",
                              "problems": "NOT GRADED: " + "; ".join(
                                  printable(note, 100) for note in notebook.notes)})
                continue
            checks = notebook.checks
            passed = sum(check.passed for check in checks)
            problems = sorted({check.status for check in checks}
                              - {Status.PASSED, Status.FAILED})
            manual = notebook.awaiting_points
            unanswered = sum(answer.status == WrittenStatus.UNANSWERED
                             for answer in notebook.written)
            lines.append({"student": student, "lesson": notebook.name,
                          "score": f"{notebook.score:g} / {notebook.max_score:g}",
                          "late": _late_mark(notebook),
                          "checks passed": f"{passed}/{len(checks)}",
                          "manual": ", ".join(
                              ([f"{manual:g} pts pending"] if manual else [])
                              + ([f"{unanswered} unanswered"] if unanswered else [])),
                          "problems": ", ".join(problems)})
    import pandas as pd  # here: the commands that print no table do not pay for it

    table = pd.DataFrame(lines)
    for optional in ("manual", "late"):
        if optional in table and not table[optional].fillna("").any():
            table = table.drop(columns=optional)
    return table.to_string(index=False)


def _late_mark(notebook):
    """The late column: the raw score a penalty cut, or that a late lesson kept it."""
    if not (notebook.late and notebook.late.late):
        return ""
    if notebook.score < notebook.raw_score:
        return f"late: {notebook.raw_score:g} before the penalty"
    return "late, not cut"
