"""What grading produced, as the JSON report, the gradebook CSV and a printed table."""

import json
from dataclasses import asdict

import pandas as pd


def submissions_report(results_by_student):
    """``{student: [NotebookResult, ...]}`` -> the JSON-ready report dict."""
    submissions = []
    for student in sorted(results_by_student):
        notebooks = sorted(results_by_student[student], key=lambda result: result.name)
        submissions.append({
            "student": student,
            "score": round(sum(n.score for n in notebooks), 6),
            "max_score": round(sum(n.max_score for n in notebooks), 6),
            "notebooks": [{"name": n.name, "score": round(n.score, 6),
                           "max_score": round(n.max_score, 6), "notes": list(n.notes),
                           "checks": [asdict(check) for check in n.checks],
                           "manual": [{**asdict(answer), "status": "awaiting manual grading"}
                                      for answer in n.written]}
                          for n in notebooks],
        })
    return {"submissions": submissions}


def write_json(report, path):
    with open(path, "w") as handle:
        json.dump(report, handle, indent=2)
        handle.write("\n")


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
        for notebook in submission["notebooks"]:
            checks = notebook["checks"]
            passed = sum(check["status"] == "passed" for check in checks)
            problems = sorted({check["status"] for check in checks} - {"passed", "failed"})
            manual = sum(answer["max_score"] for answer in notebook.get("manual", []))
            lines.append({"student": submission["student"], "lesson": notebook["name"],
                          "score": f"{notebook['score']:g} / {notebook['max_score']:g}",
                          "checks passed": f"{passed}/{len(checks)}",
                          "manual": f"{manual:g} pts pending" if manual else "",
                          "problems": ", ".join(problems)})
    table = pd.DataFrame(lines)
    if "manual" in table and not table["manual"].any():
        table = table.drop(columns="manual")
    return table.to_string(index=False)
