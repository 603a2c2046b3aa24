"""The Gradescope bundle, run as Gradescope runs it, in an /autograder-shaped folder."""

import json
import os
import subprocess
import sys
import zipfile

import pytest

from grader.outputs.gradescope import CONFIG, build_bundle, unpack_for_test
from submission_factory import REPOSITORY, write_submission

pytestmark = pytest.mark.xdist_group('gradescope')

LESSON = "06_capstone"
TEST_FIELDS = {"score": float, "max_score": float, "status": str, "name": str,
               "output": str, "output_format": str, "visibility": str}
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gradescope")
    bundle = folder / "autograder.zip"
    build_bundle(LESSON, bundle, salt="bundle-secret")
    root = unpack_for_test(bundle, folder / "autograder")
    assert os.access(root / "source" / "setup.sh", os.X_OK)
    submitted = write_submission(folder / "upload", LESSON)
    renamed = root / "submission" / "my homework.ipynb"  # found by its metadata
    renamed.write_bytes(submitted.read_bytes())
    os.utime(renamed, (1_700_000_000, 1_700_000_000))
    # uploaded beside it, saved later: the released notebook, untouched
    released = root / "submission" / f"{LESSON}.ipynb"
    released.write_bytes((REPOSITORY / "notebooks" / f"{LESSON}.ipynb").read_bytes())
    completed = subprocess.run([str(root / "source" / "run_autograder")],
                               env={**os.environ, "AUTOGRADER_ROOT": str(root),
                                    "AUTOGRADER_PYTHON": sys.executable},
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


def test_results_follow_gradescopes_specification(results):
    assert isinstance(results["score"], float) and isinstance(results["execution_time"], float)
    assert results["output_format"] == "md" and results["tests"]
    for test in results["tests"]:
        for name, kind in TEST_FIELDS.items():
            assert isinstance(test[name], kind), (name, test)
        assert test["status"] in {"passed", "failed"} and test["visibility"] in VISIBILITIES
        assert test["output_format"] == "md" and 0 <= test["score"] <= test["max_score"]
    (entry,) = results["leaderboard"]
    assert set(entry) == {"name", "value", "order"} and entry["order"] in {"asc", "desc"}


def test_visible_inputs_show_at_once_and_the_grade_after_the_due_date(results):
    visible = [test for test in results["tests"] if test["visibility"] == "visible"]
    graded = [test for test in results["tests"] if test["visibility"] == "after_due_date"]
    assert visible and graded and len(visible) == len(graded)
    assert all(test["max_score"] == 0 for test in visible)
    assert results["score"] == sum(test["score"] for test in graded) == \
        sum(test["max_score"] for test in graded) > 0  # the instructors' answers
    assert "bundle-secret" not in json.dumps(results)


def test_of_two_uploaded_notebooks_the_one_with_the_work_is_graded_and_named(results):
    # the full score above is the renamed copy's; the output says which file was graded
    assert "my homework.ipynb was graded" in results["output"]
    assert f"not {LESSON}.ipynb (0 changed)" in results["output"]


def bundle_message(tmp_path, *arguments, environment=None):
    env = {name: value for name, value in os.environ.items() if name != "GRADER_SALT"}
    completed = subprocess.run([sys.executable, "-m", "grader", "gradescope", "02",
                                str(tmp_path / "bundle.zip"), *arguments], cwd=REPOSITORY,
                               env={**env, **(environment or {})}, capture_output=True,
                               text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    with zipfile.ZipFile(tmp_path / "bundle.zip") as bundle:
        salt = json.loads(bundle.read(CONFIG))["salt"]
    return completed.stdout, salt


def test_the_bundle_says_which_salt_it_grades_with_and_shows_no_secret(tmp_path):
    from grader.salts import fingerprint

    said, salt = bundle_message(tmp_path, "--salt", "course-secret")
    assert salt == "course-secret" and "course-secret" not in said and "'given'" not in said
    assert f"the salt given with --salt (fingerprint {fingerprint(salt)})" in said
    said, salt = bundle_message(tmp_path, environment={"GRADER_SALT": "from-environment"})
    assert salt == "from-environment" and salt not in said
    assert f"GRADER_SALT (fingerprint {fingerprint(salt)})" in said
    said, salt = bundle_message(tmp_path)  # a random salt: shown, to grade the same locally
    assert f"a random salt made for this bundle, {salt}" in said
    assert f"grade locally with --salt {salt}" in said
