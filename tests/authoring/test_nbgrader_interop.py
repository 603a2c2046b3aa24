"""nbgrader's own workflow works on these lessons: generate_assignment and autograde."""

import json
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from grader.authoring.nbgrader_course import make_course_directory
from grader.lessons import all_lessons
from submission_factory import REPOSITORY

# this module's fixtures are computed once: its tests share one pytest-xdist worker
pytestmark = pytest.mark.xdist_group('nbgrader-course')

EXAMPLES = REPOSITORY / "examples" / "submissions"


def nbgrader(course, *arguments, salt=None):
    # nbgrader runs `alembic` from PATH, as it would in an activated virtual environment
    env = {**os.environ,
           "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])}
    env.pop("GRADER_SALT", None)
    if salt:  # an instructor's salt: each test cell also runs the check on hidden inputs
        env["GRADER_SALT"] = salt
    completed = subprocess.run([sys.executable, "-m", "nbgrader", *arguments], cwd=course,
                               capture_output=True, text=True, timeout=900, env=env)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    directory = tmp_path_factory.mktemp("course")
    assert make_course_directory(directory) == list(all_lessons())
    # every lesson in one nbgrader process (an assignment id is a glob): nbgrader's start
    # is paid once, not once per lesson
    nbgrader(directory, "generate_assignment", "*", "--force")
    return directory


def notebook_text(folder):
    return "".join(json.dumps(cell.get("outputs", []))
                   for path in folder.glob("*.ipynb")
                   for cell in json.loads(path.read_text())["cells"])


def cell_sources(path):
    return [cell["source"] for cell in json.loads(path.read_text())["cells"]]


@pytest.mark.parametrize("lesson", list(all_lessons()))
def test_generate_assignment_releases_what_grader_release_commits(course, lesson):
    released = course / "release" / lesson / f"{lesson}.ipynb"
    assert cell_sources(released) == cell_sources(REPOSITORY / "notebooks" / f"{lesson}.ipynb")


def test_autograde_gives_full_marks_to_a_complete_submission_and_none_to_an_empty_one(course):
    for student, folder in (("ada", "ada_complete"), ("ben", "ben_empty")):
        target = course / "submitted" / student / "01_qlearning"
        target.mkdir(parents=True)
        shutil.copy(EXAMPLES / folder / "01_qlearning.ipynb", target)
    graded = nbgrader(course, "autograde", "01_qlearning", "--force", salt="interop-salt")
    # Test cells are released unchanged (no hidden regions), so nbgrader's checksums of
    # the released cells match its source: no false "checksum has changed!" warnings.
    assert "checksum has changed" not in graded.stdout + graded.stderr
    assert "hidden inputs" in notebook_text(course / "autograded" / "ada" / "01_qlearning")
    nbgrader(course, "export", "--to", str(course / "grades.csv"))
    grades = pd.read_csv(course / "grades.csv")
    grades = grades[grades["assignment"] == "01_qlearning"].set_index("student_id")
    assert grades.loc["ada", "score"] == grades.loc["ada", "max_score"] == 12
    assert grades.loc["ben", "score"] == 0


def test_the_course_directory_is_never_made_inside_the_repository(tmp_path):
    from grader.authoring.nbgrader_course import InsideTheRepository, inside_the_repository

    assert inside_the_repository(REPOSITORY / "my-course")
    assert not inside_the_repository(tmp_path / "course")
    with pytest.raises(InsideTheRepository, match="outside"):
        make_course_directory(REPOSITORY / "my-course")
    assert not (REPOSITORY / "my-course").exists()
