"""The course version: what grading runs is hashed, and what only prints results is not.

A stored result is reused only for the same course version, so a grader file that decides
a grade but is missing from the version would let results graded by old code pass as
current. The files hashed are found by folder and by following the judge's imports; these
tests grade a real notebook to see which grader modules grading loads, and change copies
of files to see which changes make a new version.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from grader.course_version import course_version, grading_files
from grader.lessons import REPOSITORY, all_lessons

EXAMPLES = REPOSITORY / "examples" / "submissions"

# grade one check of a complete submission in a fresh interpreter and list the grader
# modules loaded meanwhile (only grading: the script itself imports nothing else of ours)
LOADED_BY_GRADING = """
import json, sys
from grader.judge.grade_notebook import grade_notebook
from grader.lessons import all_lessons
from grader.nbgrader_cells import autograded_cells, nbgrader_meta

first = autograded_cells(all_lessons()["01_qlearning"].source())[0]
result = grade_notebook(sys.argv[1], "course-version-test", lesson="01_qlearning",
                        only={nbgrader_meta(first)["grade_id"]})
assert [check.status for check in result.checks] == ["passed"], result.checks
print(json.dumps(sorted(module.__file__ for name, module in sys.modules.items()
                        if name.split(".")[0] == "grader")))
"""


def test_every_grader_module_that_grading_loads_is_in_the_course_version():
    submission = EXAMPLES / "ada_complete" / "01_qlearning.ipynb"
    completed = subprocess.run([sys.executable, "-c", LOADED_BY_GRADING, str(submission)],
                               cwd=REPOSITORY, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    files = json.loads(completed.stdout.splitlines()[-1])
    loaded = {Path(file).resolve() for file in files}
    hashed = set(grading_files())
    assert loaded - hashed == set(), "grading ran grader modules the version does not hash"
    rooms = {path.relative_to(REPOSITORY / "grader").parts[0] for path in loaded}
    assert not rooms & {"authoring", "class_run", "outputs", "student"}, \
        "grading one notebook should need nothing but the judge and the shared modules"
    assert {REPOSITORY / "grader" / "lessons.py", REPOSITORY / "grader" / "safe_text.py",
            REPOSITORY / "grader" / "judge" / "sandbox_runtime" / "wire.py"} <= loaded


def copy_of_the_course(folder):
    for name in ("solutions", "checks", "course", "grader"):
        shutil.copytree(REPOSITORY / name, folder / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for lesson in all_lessons().values():
        if lesson.exports_to:
            shutil.copy2(REPOSITORY / lesson.exports_to, folder / lesson.exports_to)
    return folder


def version_after(root, relative, added):
    path = root / relative
    before = path.read_text() if path.exists() else None
    path.write_text((before or "") + added)
    try:
        return course_version.__wrapped__(root)  # not the cached value
    finally:
        if before is None:
            path.unlink()
        else:
            path.write_text(before)


def test_the_version_changes_with_what_grades_and_not_with_what_prints(tmp_path):
    root = copy_of_the_course(tmp_path)
    version = course_version.__wrapped__(root)
    assert version == course_version(), "a copy of the course has the course's own version"
    for unchanged in ("grader/outputs/report.py", "grader/authoring/release.py",
                      "grader/class_run/grade_class.py", "grader/student/self_check.py",
                      "grader/cli.py"):
        assert version_after(root, unchanged, "\n# a comment\n") == version, unchanged
    for changed in ("grader/judge/rebuild.py", "grader/judge/sandbox_runtime/wire.py",
                    "grader/judge/references/lesson02.py", "grader/lessons.py",
                    "grader/safe_text.py", "grader/__init__.py", "checks/framework.py",
                    "course/corridor.py"):
        assert version_after(root, changed, "\n# a comment\n") != version, changed
    source = root / "solutions" / "01_qlearning.ipynb"
    notebook = json.loads(source.read_text())
    notebook["cells"][-1]["source"] = "# changed\n"
    source.write_text(json.dumps(notebook))
    assert course_version.__wrapped__(root) != version, "a source notebook changed"


def test_a_module_the_judge_starts_importing_joins_the_version_unlisted(tmp_path):
    root = copy_of_the_course(tmp_path)
    helper = root / "grader" / "outputs" / "new_helper.py"
    helper.write_text("LIMIT = 1\n")
    version = course_version.__wrapped__(root)
    assert version_after(root, "grader/outputs/new_helper.py", "LIMIT = 2\n") == version
    judge = root / "grader" / "judge" / "budgets.py"
    judge.write_text(judge.read_text() + "\n\ndef limit():\n"
                     "    from grader.outputs.new_helper import LIMIT\n    return LIMIT\n")
    imported = course_version.__wrapped__(root)
    assert imported != version
    assert version_after(root, "grader/outputs/new_helper.py", "LIMIT = 2\n") != imported
