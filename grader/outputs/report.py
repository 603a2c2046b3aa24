"""What grading produced, as the JSON report, the gradebook CSV and a printed table."""

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from grader.safe_text import printable


def lesson_maxima(only=None):
    """``{lesson: points}`` of every lesson of the course (or of the lessons that hold a
    check of ``only``), in course order: the gradebook's stable columns. A lesson's points
    are its automatic checks' (with ``only``, just those) and its written answers'
    (graded by a person, as nbgrader counts them)."""
    from grader.judge.rebuild import is_manually_graded, nbgrader_meta, test_cells
    from grader.lessons import all_lessons

    maxima = {}
    for name, lesson in all_lessons().items():
        source = lesson.source()
        cells = [cell for cell in test_cells(source)
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


AWAITING = "awaiting manual grading"  # a written answer no person has graded yet
GRADED_BY_A_PERSON = "graded by a person"
UNANSWERED = "unanswered"  # a written answer left as the stub: 0 points, nobody to grade it


def graded_notebook_report(notebook):
    """One graded notebook's entry in the report (a :class:`NotebookResult` as data).

    Its ``max_score`` counts the written answers' points beside the checks'; its
    ``score`` holds the checks' points until a person grades the written answers
    (:mod:`grader.outputs.manual_grades`), and ``raw_score`` is the score before any late
    penalty (:mod:`grader.outputs.late_work`)."""
    entry = {"name": notebook.name, "submitted": True, "status": "graded",
             "score": round(notebook.score, 6), "raw_score": round(notebook.score, 6),
             "max_score": round(notebook.max_score
                                + sum(answer.max_score for answer in notebook.written), 6),
             "isolation": notebook.isolation, "notes": list(notebook.notes),
             "checks": [asdict(check) for check in notebook.checks],
             "manual": [{**asdict(answer), "status": AWAITING if answer.answered else UNANSWERED,
                         "score": None if answer.answered else 0.0}
                        for answer in notebook.written]}
    return entry


def rescore(report):
    """Set every score of ``report`` (in place) from its parts, and return it: a lesson's
    ``raw_score`` is its checks' points (a person's regrade in place of the check's, when
    there is one) plus the written answers a person graded; its ``score`` is that less
    any late penalty; an excused lesson counts in no total. Idempotent: the parts are
    kept, never the sums, so manual grades and a late policy can be applied again."""
    for submission in report["submissions"]:
        counted = []
        for notebook in submission["notebooks"]:
            if not notebook["submitted"]:
                continue
            raw = sum(check["override"]["points"] if check.get("override") else check["score"]
                      for check in notebook["checks"])
            raw += sum(answer["score"] or 0.0 for answer in notebook.get("manual", []))
            notebook["raw_score"] = round(raw, 6)
            late = notebook.get("late") or {}
            notebook["score"] = round(raw * (1 - late.get("penalty_fraction", 0.0)), 6)
            if not notebook.get("excused"):
                counted.append(notebook)
        excused = sum(report["lessons"].get(notebook["name"], 0.0)
                      for notebook in submission["notebooks"] if notebook.get("excused"))
        submission["score"] = round(sum(n["score"] for n in counted), 6)
        submission["max_score_handed_in"] = round(sum(n["max_score"] for n in counted), 6)
        submission["max_score"] = round(sum(report["lessons"].values()) - excused, 6)
    return report


def _not_submitted(lesson, maximum, notes=()):
    """A lesson without a graded notebook: not handed in, or handed in as a file that
    could not be graded (``notes`` say why)."""
    return {"name": lesson, "submitted": False,
            "status": "not graded" if notes else "not submitted", "score": None,
            "raw_score": None, "max_score": maximum, "isolation": None, "notes": list(notes), "checks": [],
            "manual": []}


def submissions_report(results_by_student, skipped=(), lessons=None):
    """``{student: [NotebookResult, ...]}`` -> the JSON-ready report dict.

    Every student lists every lesson of ``lessons`` (``{lesson: max points}``, default
    the whole course). A lesson without a graded notebook has ``"submitted": false`` and
    no score, never 0, and the same maximum as everyone's; its ``status`` is "not
    submitted", or "not graded" when the student handed in a file of it that could not
    be graded (its notes say why). ``skipped``
    (:class:`~grader.class_run.submissions.Skipped`) become each student's notes, and the
    notes of the class for files that belong to no student. A student's ``score`` is out
    of ``max_score_handed_in`` (the lessons graded) and of ``max_score`` (the whole
    course)."""
    lessons = lesson_maxima() if lessons is None else lessons
    submissions = []
    for student in sorted(results_by_student):
        graded = {result.name: result for result in results_by_student[student]}
        mine = [entry for entry in skipped if entry.student == student]
        notebooks = [graded_notebook_report(graded[lesson]) if lesson in graded
                     else _not_submitted(lesson, maximum,
                                         [entry.lesson_note for entry in mine
                                          if entry.lesson == lesson and entry.lesson_note])
                     for lesson, maximum in lessons.items()]
        notebooks += [graded_notebook_report(graded[name]) for name in sorted(set(graded) - set(lessons))]
        submissions.append({"student": student, "notes": [entry.reason for entry in mine],
                            "score": None, "max_score_handed_in": None, "max_score": None,
                            "notebooks": notebooks})
    report = {"lessons": dict(lessons), "submissions": submissions}
    unowned = [entry.reason for entry in skipped if entry.student is None]
    if unowned:
        report["notes"] = unowned
    return rescore(report)


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
    write_atomically(path, json.dumps(report, indent=2) + "\n")


def summary_table(report):
    """The table printed after grading: student, lesson, score / max, checks passed, and
    a row for each lesson handed in that could not be graded, with the reason."""
    lines = []
    for submission in report["submissions"]:
        student = printable(submission["student"], 60)
        shown = [notebook for notebook in submission["notebooks"]
                 if notebook["submitted"] or notebook.get("status") == "not graded"]
        if not shown:
            lines.append({"student": student, "lesson": "-", "score": "-",
                          "checks passed": "-", "manual": "",
                          "problems": "nothing graded (see notes)"})
        for notebook in shown:
            if not notebook["submitted"]:  # handed in, yet without a score: say why, here
                lines.append({"student": student, "lesson": notebook["name"], "score": "-",
                              "checks passed": "-", "manual": "",
                              "problems": "NOT GRADED: " + "; ".join(
                                  printable(note, 100) for note in notebook["notes"])})
                continue
            checks = notebook["checks"]
            passed = sum(check["status"] == "passed" for check in checks)
            problems = sorted({check["status"] for check in checks} - {"passed", "failed"})
            manual = sum(answer["max_score"] for answer in notebook.get("manual", [])
                         if answer["status"] == AWAITING)
            unanswered = sum(answer["status"] == UNANSWERED
                             for answer in notebook.get("manual", []))
            lines.append({"student": student, "lesson": notebook["name"],
                          "score": f"{notebook['score']:g} / {notebook['max_score']:g}",
                          "checks passed": f"{passed}/{len(checks)}",
                          "manual": ", ".join(
                              ([f"{manual:g} pts pending"] if manual else [])
                              + ([f"{unanswered} unanswered"] if unanswered else [])),
                          "problems": ", ".join(problems)})
    import pandas as pd  # here: the commands that print no table do not pay for it

    table = pd.DataFrame(lines)
    if "manual" in table and not table["manual"].any():
        table = table.drop(columns="manual")
    return table.to_string(index=False)
