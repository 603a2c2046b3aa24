"""A Gradescope autograder bundle for one lesson, and the grading it runs there.

``python -m grader gradescope LESSON OUT.zip`` writes what Gradescope's "Zip file upload"
takes (its autograder contract: ``setup.sh`` and ``run_autograder`` at the top of the
zip, unpacked into ``/autograder/source``; the student's files in
``/autograder/submission``; results in ``/autograder/results/results.json``):

- ``setup.sh`` makes a virtual environment and installs the grader's requirements;
- ``run_autograder`` runs ``python -m grader gradescope-run``, which finds the submitted
  notebook (by name, metadata or cells; of several, the one holding the student's work,
  as :mod:`grader.class_run.submissions` chooses), grades it twice: with the public salt
  (the inputs of the notebook's own visible tests: shown at once, worth no points) and with
  the bundle's secret salt (the grade: shown after the due date), and writes
  ``results.json`` with a test per check, its feedback as markdown, the execution time,
  and a leaderboard entry (the lesson's score).

Gradescope gives each submission a container of its own (768 MB, 10 minutes by
default). Where the container forbids Linux namespaces, grading runs without the
sandbox, and the results say so. The bundle holds the course's solutions and the secret
salt: it is for Gradescope's autograder settings, never for students.
"""

import json
import os
import secrets
import time
import zipfile
from pathlib import Path

from grader.lessons import REPOSITORY

BUNDLED = ("grader", "checks", "course", "solutions", "requirements.txt",
           "nbgrader_config.py")
CONFIG = "gradescope_config.json"
SETUP = """#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder's image.
set -euo pipefail
cd /autograder/source
if ! command -v python3 >/dev/null; then
    apt-get update && apt-get install -y python3 python3-venv python3-pip
fi
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --quiet --upgrade pip
/autograder/venv/bin/python -m pip install --quiet -r requirements.txt
"""
RUN = """#!/usr/bin/env bash
# Gradescope runs this for every submission.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
cd "$ROOT/source"
exec "$PYTHON" -m grader gradescope-run --root "$ROOT"
"""


def build_bundle(lesson, out, salt=None):
    """Write the zip for ``lesson`` (a name); return the salt it grades with."""
    from grader.lessons import all_lessons

    salt = salt or secrets.token_hex(16)
    files = {"setup.sh": SETUP, "run_autograder": RUN,
             CONFIG: json.dumps({"lesson": lesson, "salt": salt}, indent=2) + "\n"}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, text in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o755 << 16  # executable where it matters
            bundle.writestr(info, text)
        for item in BUNDLED:
            path = REPOSITORY / item
            paths = [path] if path.is_file() else sorted(
                p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
            for file in paths:
                bundle.write(file, file.relative_to(REPOSITORY).as_posix())
        for other in all_lessons().values():  # the judge's baselines train with them
            if other.exports_to:
                bundle.write(REPOSITORY / other.exports_to, other.exports_to)
    return salt


def find_submission(folder, lesson):
    """The submitted notebook of ``lesson`` in ``folder`` (matched by name, metadata or
    cells) and a note naming the others when there were several: chosen as the class
    grader chooses in a student's folder (:func:`grader.class_run.submissions.jobs_of_student`:
    the one holding the student's work), with the same note."""
    from grader.class_run.submissions import jobs_of_student, notebooks_under

    ignored = []  # what is not graded, and why: the note of the chosen job says what matters
    jobs = jobs_of_student("the submission", Path(folder), notebooks_under(folder, ignored),
                           ignored)
    job = next((job for job in jobs if job.lesson == lesson), None)
    return (None, None) if job is None else (job.path, job.choice)


def _tests(result, visibility, graded):
    tests = []
    for number, check in enumerate(result.checks, start=1):
        tests.append({
            "name": check.id + ("" if graded else " (your notebook's visible inputs)"),
            "number": f"{number}{'' if graded else 'v'}",
            "score": check.score if graded else 0.0,
            "max_score": check.max_score if graded else 0.0,
            "status": "passed" if check.passed else "failed",  # Gradescope's two words
            "output": check.feedback.replace("\n", "  \n"),
            "output_format": "md",
            "visibility": visibility,
        })
    return tests


def grade_for_gradescope(root, lesson=None, salt=None):
    """Grade the submission under ``root`` and write ``results/results.json``."""
    from checks.framework import VISIBLE_SALT
    from grader.judge.grade_notebook import grade_notebook
    from grader.judge.sandbox import ISOLATED

    root = Path(root)
    started = time.monotonic()
    config = json.loads((root / "source" / CONFIG).read_text())
    lesson, salt = lesson or config["lesson"], salt or config["salt"]
    (root / "results").mkdir(parents=True, exist_ok=True)
    path, choice = find_submission(root / "submission", lesson)
    if path is None:
        results = {"score": 0.0, "output": f"No notebook of lesson {lesson} was found in "
                   "your submission: upload the .ipynb file.", "output_format": "md",
                   "tests": [], "execution_time": round(time.monotonic() - started, 1)}
    else:
        visible = grade_notebook(path, VISIBLE_SALT, lesson=lesson)
        graded = grade_notebook(path, salt, lesson=lesson)
        notes = ([choice] if choice else []) + list(dict.fromkeys(visible.notes
                                                                  + graded.notes))
        if graded.isolation.get("level") != ISOLATED:
            notes.append("Graded without the namespace sandbox: this container does not "
                         "allow it (each submission has a container of its own).")
        results = {
            "score": graded.score,
            "execution_time": round(time.monotonic() - started, 1),
            "output": "\n\n".join(["Checks marked *visible inputs* use your notebook's own "
                                   "test inputs and are worth no points; the graded checks "
                                   "use hidden inputs and appear after the due date.",
                                   *notes]),
            "output_format": "md",
            "stdout_visibility": "hidden",
            "tests": _tests(visible, "visible", graded=False)
            + _tests(graded, "after_due_date", graded=True),
            "leaderboard": [{"name": lesson, "value": graded.score, "order": "desc"}],
        }
    (root / "results" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


def unpack_for_test(bundle, root):
    """Lay a bundle out as Gradescope would (``root/source``); for tests and trials."""
    root = Path(root)
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        os.chmod(root / "source" / name, 0o755)
    (root / "submission").mkdir(parents=True, exist_ok=True)
    return root
