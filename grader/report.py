"""What grading produced, as the JSON report, the gradebook CSV and a printed table."""

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from grader.safe_text import printable


def submissions_report(results_by_student, skipped=()):
    """``{student: [NotebookResult, ...]}`` -> the JSON-ready report dict. ``skipped``
    (:class:`~grader.submissions.Skipped`) become each student's notes, and the notes
    of the class for files that belong to no student."""
    submissions = []
    for student in sorted(results_by_student):
        notebooks = sorted(results_by_student[student], key=lambda result: result.name)
        submissions.append({
            "student": student,
            "notes": [entry.reason for entry in skipped if entry.student == student],
            "score": round(sum(n.score for n in notebooks), 6),
            "max_score": round(sum(n.max_score for n in notebooks), 6),
            "notebooks": [{"name": n.name, "score": round(n.score, 6),
                           "max_score": round(n.max_score, 6), "isolation": n.isolation,
                           "notes": list(n.notes),
                           "checks": [asdict(check) for check in n.checks],
                           "manual": [{**asdict(answer), "status": "awaiting manual grading"}
                                      for answer in n.written]}
                          for n in notebooks],
        })
    report = {"submissions": submissions}
    unowned = [entry.reason for entry in skipped if entry.student is None]
    if unowned:
        report["notes"] = unowned
    return report


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


def gradebook(report):
    """One row per student, one column per lesson (0 where not submitted), and a total."""
    rows = {submission["student"]: {notebook["name"]: notebook["score"]
                                    for notebook in submission["notebooks"]}
            for submission in report["submissions"]}
    table = pd.DataFrame.from_dict(rows, orient="index").sort_index(axis=1).fillna(0.0)
    table["total"] = table.sum(axis=1)
    table.index.name = "student"
    return table.sort_index()


def summary_table(report):
    """The table printed after grading: student, lesson, score / max, checks passed."""
    lines = []
    for submission in report["submissions"]:
        if not submission["notebooks"]:
            lines.append({"student": printable(submission["student"], 60), "lesson": "-",
                          "score": "-", "checks passed": "-", "manual": "",
                          "problems": "nothing graded (see notes)"})
        for notebook in submission["notebooks"]:
            checks = notebook["checks"]
            passed = sum(check["status"] == "passed" for check in checks)
            problems = sorted({check["status"] for check in checks} - {"passed", "failed"})
            manual = sum(answer["max_score"] for answer in notebook.get("manual", []))
            lines.append({"student": printable(submission["student"], 60),
                          "lesson": notebook["name"],
                          "score": f"{notebook['score']:g} / {notebook['max_score']:g}",
                          "checks passed": f"{passed}/{len(checks)}",
                          "manual": f"{manual:g} pts pending" if manual else "",
                          "problems": ", ".join(problems)})
    table = pd.DataFrame(lines)
    if "manual" in table and not table["manual"].any():
        table = table.drop(columns="manual")
    return table.to_string(index=False)
