"""``python -m grader grade``: exit codes, the printed table, the JSON report, the CSV."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from grader.lessons import all_lessons
from grader.report import graded_content
from submission_factory import REPOSITORY, make_submissions

# this module's fixtures are computed once: its tests share one pytest-xdist worker
pytestmark = pytest.mark.xdist_group('example-class')

EXAMPLES = REPOSITORY / "examples" / "submissions"


def run_grader(*arguments, cwd=REPOSITORY):
    return subprocess.run([sys.executable, "-m", "grader", *arguments], cwd=cwd,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("make_path, reason", [
    (lambda tmp: tmp / "nowhere", "no such file or folder"),
    (lambda tmp: (tmp / "essay.txt").write_text("hi") and tmp / "essay.txt", "not a notebook"),
    (lambda tmp: (tmp / "99_unknown.ipynb").write_text("{}") and tmp / "99_unknown.ipynb",
     "not a lesson of this course"),
    (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "no notebooks found"),
])
def test_the_grader_exits_2_with_one_line_when_it_cannot_run(tmp_path, make_path, reason):
    completed = run_grader("grade", str(make_path(tmp_path)))
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0] and "Traceback" not in completed.stderr


@pytest.mark.parametrize("option, make_path", [
    ("--json", lambda tmp: tmp / "missing-folder" / "report.json"),
    ("--csv", lambda tmp: tmp),  # a folder
])
def test_an_unwritable_output_is_refused_before_grading_starts(tmp_path, option, make_path):
    notebook = EXAMPLES / "ada_complete" / "01_qlearning.ipynb"
    completed = run_grader("grade", str(notebook), option, str(make_path(tmp_path)))
    assert completed.returncode == 2
    assert "cannot write there" in completed.stderr and "Traceback" not in completed.stderr
    assert "grading" not in completed.stderr  # refused before any notebook was graded


def test_require_sandbox_refuses_to_grade_without_one(tmp_path):
    notebook = EXAMPLES / "ada_complete" / "01_qlearning.ipynb"
    completed = run_grader("grade", str(notebook), "--no-sandbox", "--require-sandbox")
    assert completed.returncode == 2 and "--require-sandbox" in completed.stderr


def test_the_committed_example_class_is_what_the_script_writes(tmp_path):
    make_submissions.main(tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.ipynb"))
    committed = sorted(p.relative_to(EXAMPLES) for p in EXAMPLES.rglob("*.ipynb"))
    assert written == committed
    for relative in written:
        assert (tmp_path / relative).read_text() == (EXAMPLES / relative).read_text(), \
            f"examples/submissions/{relative} is stale: run python examples/make_submissions.py"


@pytest.fixture(scope="module")
def example_class(tmp_path_factory):
    """The README's main job: grade the example class on two workers."""
    out = tmp_path_factory.mktemp("reports")
    completed = run_grader("grade", str(EXAMPLES), "--workers", "2", "--salt", "cli-test",
                           "--json", str(out / "report.json"), "--csv", str(out / "book.csv"))
    assert completed.returncode == 0, completed.stderr
    report = json.loads((out / "report.json").read_text())
    return completed.stdout, report, pd.read_csv(out / "book.csv", index_col="student")


def checks_of(report, student, lesson):
    submission = next(s for s in report["submissions"] if s["student"] == student)
    notebook = next(n for n in submission["notebooks"] if n["name"] == lesson)
    return {check["id"]: check for check in notebook["checks"]}


def test_the_report_has_the_documented_shape(example_class):
    _, report, _ = example_class
    for submission in report["submissions"]:
        assert set(submission) == {"student", "notes", "score", "max_score", "notebooks"}
        handed_in = [n for n in submission["notebooks"] if n["submitted"]]
        assert submission["score"] == pytest.approx(sum(n["score"] for n in handed_in))
        # A lesson not handed in has no score (not a zero) and no checks.
        for notebook in submission["notebooks"]:
            if not notebook["submitted"]:
                assert notebook["score"] is None and notebook["checks"] == []
        for notebook in submission["notebooks"]:
            assert {"name", "submitted", "score", "max_score", "checks",
                    "isolation"} <= set(notebook)
            if notebook["submitted"]:
                assert notebook["isolation"]["level"] in {"namespaces", "none"}
                assert {"memory", "tasks", "cpu_time", "cpu_share"} <= set(notebook["isolation"])
            for check in notebook["checks"]:
                assert set(check) == {"id", "score", "max_score", "status", "feedback",
                                      "figure", "usage"}
                if check["usage"] is not None:  # None: the check's probe never ran
                    assert set(check["usage"]) == {"cpu_seconds", "wall_seconds"}
                assert check["status"] in {"passed", "failed", "not written", "error", "timeout"}
                assert check["feedback"].strip()


def test_each_example_student_gets_what_their_work_deserves(example_class):
    _, report, book = example_class
    ada = next(s for s in report["submissions"] if s["student"] == "ada_complete")
    assert len(ada["notebooks"]) == len(all_lessons())
    assert len({s["max_score"] for s in report["submissions"]}) == 1  # one course maximum
    assert book.loc["ada_complete", "total"] == ada["max_score"] == sum(
        check["max_score"] for notebook in ada["notebooks"] for check in notebook["checks"])
    assert book.loc["ben_empty", "total"] == 0
    cy = checks_of(report, "cy_buggy_buffer", "02_replay_buffer")
    assert cy["test_fifo_eviction"]["status"] == "failed"
    assert "evicted" in cy["test_fifo_eviction"]["feedback"]
    dee = checks_of(report, "dee_ignores_terminated", "01_qlearning")
    assert {name for name, c in dee.items() if c["status"] != "passed"} == {"test_update"}
    assert "terminated" in dee["test_update"]["feedback"]
    eli = checks_of(report, "eli_infinite_loop", "01_qlearning")
    # eli's loop would never end an episode that is truncated: the corridor stops it after
    # the same number of steps on any machine, and the check says why
    assert eli["test_play_and_train"]["status"] == "failed"
    assert "stop when truncated is True" in eli["test_play_and_train"]["feedback"]
    fay = checks_of(report, "fay_float32_tree", "03_prioritized_replay")
    assert fay["test_sumtree_totals"]["status"] == "failed"
    assert "float32" in fay["test_sumtree_totals"]["feedback"]
    gus = checks_of(report, "gus_tampers", "01_qlearning")
    assert gus["test_update"]["status"] == "failed"
    assert book.loc["gus_tampers", "total"] < 12


def test_written_answers_await_a_person_outside_the_score(example_class):
    stdout, report, _ = example_class
    manual = {submission["student"]: [answer for notebook in submission["notebooks"]
                                      for answer in notebook["manual"]]
              for submission in report["submissions"]}
    (ada,) = manual["ada_complete"]
    assert ada["id"] == "conclusion" and ada["status"] == "awaiting manual grading"
    assert ada["answered"] and "decorrelation" in ada["answer"] and ada["max_score"] == 3
    (ben,) = manual["ben_empty"]
    assert not ben["answered"] and "YOUR ANSWER HERE" in ben["answer"]
    assert ben["status"] == "unanswered"  # a blank answer is not work awaiting a person
    capstone = checks_of(report, "ada_complete", "06_capstone")
    assert "conclusion" not in capstone  # not an automatic check, not in the score
    assert "await manual grading" in stdout and "3 pts pending" in stdout
    assert "1 unanswered" in stdout
    # unwritten work has its own status, in the JSON and in the printed table
    assert {c["status"] for c in checks_of(report, "ben_empty", "02_replay_buffer").values()} \
        == {"not written"}
    assert "not written" in next(line for line in stdout.splitlines()
                                 if line.lstrip().startswith("ben_empty"))


def test_the_gradebook_has_a_row_per_student_and_a_column_per_lesson(example_class):
    stdout, _, book = example_class
    assert list(book.columns) == [*all_lessons(), "total"]
    assert sorted(book.index) == sorted(p.name for p in EXAMPLES.iterdir())
    assert pd.isna(book.loc["eli_infinite_loop", "02_replay_buffer"])  # not submitted: blank
    assert book.loc["ben_empty", "02_replay_buffer"] == 0  # submitted, earned nothing
    assert "ada_complete" in stdout and "12 / 12" in stdout and "19 / 19" in stdout


def test_one_worker_and_two_workers_give_the_same_report(example_class, tmp_path):
    _, report, _ = example_class
    students = tmp_path / "class"
    for student in ("hal_her_off_by_one",):  # one notebook, a learning check, a failure
        (students / student).mkdir(parents=True)
        for notebook in (EXAMPLES / student).glob("*.ipynb"):
            (students / student / notebook.name).write_bytes(notebook.read_bytes())
    completed = run_grader("grade", str(students), "--workers", "1", "--salt", "cli-test",
                           "--json", str(tmp_path / "one.json"))
    assert completed.returncode == 0, completed.stderr
    sequential = json.loads((tmp_path / "one.json").read_text())["submissions"]
    parallel = [s for s in report["submissions"] if s["student"] == "hal_her_off_by_one"]
    assert graded_content(sequential) == graded_content(parallel)
