"""``python -m grader grade``: exit codes, the printed table, the JSON report, the CSV."""

import csv
import html
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import nbformat
import pandas as pd
import pytest

from grader.lessons import all_lessons
from grader.outputs.report import graded_content
from submission_factory import REPOSITORY, make_submissions, write_submission

# this module's fixtures are computed once: its tests share one pytest-xdist worker
pytestmark = pytest.mark.xdist_group('example-class')

EXAMPLES = REPOSITORY / "examples" / "submissions"


def run_grader(*arguments, cwd=REPOSITORY):
    return subprocess.run([sys.executable, "-m", "grader", *arguments], cwd=cwd,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("make_path, reason", [
    (lambda tmp: tmp / "nowhere", "no such file or folder"),
    (lambda tmp: (tmp / "essay.txt").write_text("hi") and tmp / "essay.txt", "not a notebook"),
    (lambda tmp: (tmp / "99_unknown.ipynb").write_text(nbformat.writes(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])))
     and tmp / "99_unknown.ipynb", "not a lesson of this course"),
    (lambda tmp: (tmp / "02_replay_buffer.ipynb").write_text("{}")
     and tmp / "02_replay_buffer.ipynb", "no list of cells"),
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


def one_term(folder):
    """The README's "One term, step by step": ``{step: (arguments, environment)}`` of its
    commands, ``term/`` put in ``folder`` and the README's Python this one."""
    readme = (REPOSITORY / "README.md").read_text()
    block = readme.split("<!-- one-term -->\n```bash\n", 1)[1].split("```", 1)[0]
    lines = [line.split(" #")[0].rstrip() for line in block.replace("\\\n", " ").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    environment, steps = dict(without_salt_in_environment()), {}
    for line in lines:
        if line.startswith("mkdir -p "):
            for made in shlex.split(line.replace("term", f"{folder}/term"))[2:]:
                os.makedirs(made, exist_ok=True)
            continue
        if line.startswith("export "):
            name, value = line[len("export "):].split("=", 1)
            environment[name] = shlex.split(value)[0]
            continue
        arguments = shlex.split(line.replace("term/", f"{folder}/term/"))
        assert arguments[:3] == [".venv/bin/python", "-m", "grader"], line
        steps[arguments[3]] = ([sys.executable, *arguments[1:]], environment)
    assert list(steps) == ["publish", "grade", "export", "similarity"]
    return steps


def run_step(step):
    arguments, environment = step
    return subprocess.run(arguments, cwd=REPOSITORY, capture_output=True, text=True,
                          timeout=900, env=environment)


@pytest.fixture(scope="module")
def example_class(tmp_path_factory):
    """The README's term, step 3: grade the example class on two workers, with the late
    policy, the LMS's hand-in times and a manual grades file (written here)."""
    folder = tmp_path_factory.mktemp("term")
    steps = one_term(folder)
    completed = run_step(steps["grade"])
    assert completed.returncode == 0, completed.stderr
    out = folder / "term"
    report = json.loads((out / "report.json").read_text())
    return (completed.stdout, report, pd.read_csv(out / "gradebook.csv", index_col="student"),
            steps, out)


def checks_of(report, student, lesson):
    submission = next(s for s in report["submissions"] if s["student"] == student)
    notebook = next(n for n in submission["notebooks"] if n["name"] == lesson)
    return {check["id"]: check for check in notebook["checks"]}


def test_the_report_has_the_documented_shape(example_class):
    _, report, *_ = example_class
    for submission in report["submissions"]:
        assert set(submission) == {"student", "notes", "score", "max_score_handed_in",
                                   "max_score", "notebooks"}
        handed_in = [n for n in submission["notebooks"] if n["submitted"]]
        assert submission["score"] == pytest.approx(sum(n["score"] for n in handed_in))
        assert submission["max_score_handed_in"] == pytest.approx(
            sum(n["max_score"] for n in handed_in))
        # A lesson not handed in has no score (not a zero) and no checks.
        for notebook in submission["notebooks"]:
            if not notebook["submitted"]:
                assert notebook["score"] is None and notebook["checks"] == []
                assert notebook["status"] == "not submitted"
            else:
                assert notebook["status"] == "graded"
        for notebook in submission["notebooks"]:
            assert {"name", "submitted", "score", "max_score", "checks",
                    "isolation"} <= set(notebook)
            if notebook["submitted"]:
                assert notebook["isolation"]["level"] in {"namespaces", "none"}
                assert {"syscalls", "memory", "tasks", "cpu_time",
                        "cpu_share"} <= set(notebook["isolation"])
            for check in notebook["checks"]:
                assert set(check) == {"id", "score", "max_score", "status", "feedback",
                                      "figure", "usage"}
                if check["usage"] is not None:  # None: the check's probe never ran
                    assert set(check["usage"]) == {"cpu_seconds", "wall_seconds"}
                assert check["status"] in {"passed", "failed", "not written", "error", "timeout"}
                assert check["feedback"].strip()


def test_each_example_student_gets_what_their_work_deserves(example_class):
    _, report, book, *_ = example_class
    ada = next(s for s in report["submissions"] if s["student"] == "ada_complete")
    assert len(ada["notebooks"]) == len(all_lessons())
    assert len({s["max_score"] for s in report["submissions"]}) == 1  # one course maximum
    automatic = sum(check["max_score"] for notebook in ada["notebooks"]
                    for check in notebook["checks"])
    written = sum(answer["max_score"] for notebook in ada["notebooks"]
                  for answer in notebook["manual"])
    # every check passed; the written conclusion's points wait for a person
    assert book.loc["ada_complete", "total"] == ada["score"] == automatic
    assert ada["max_score"] == automatic + written and written == 3
    assert book.loc["ben_empty", "total"] == 0
    cy = checks_of(report, "cy_buggy_buffer", "02_replay_buffer")
    assert cy["test_fifo_eviction"]["status"] == "failed"
    assert "evicted" in cy["test_fifo_eviction"]["feedback"]
    assert cy["test_replay_loop"]["status"] == "passed"  # only the buffer is wrong
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
    stdout, report, *_ = example_class
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
    stdout, _, book, *_ = example_class
    assert list(book.columns) == [*all_lessons(), "total"]
    assert sorted(book.index) == sorted(p.name for p in EXAMPLES.iterdir())
    assert pd.isna(book.loc["eli_infinite_loop", "02_replay_buffer"])  # not submitted: blank
    assert book.loc["ben_empty", "02_replay_buffer"] == 0  # submitted, earned nothing
    assert "ada_complete" in stdout and "12 / 12" in stdout and "19 / 19" in stdout


def test_one_worker_and_two_workers_give_the_same_report(example_class, tmp_path):
    _, report, _, steps, _ = example_class
    students = tmp_path / "class"
    for student in ("hal_her_off_by_one",):  # one notebook, a learning check, a failure
        (students / student).mkdir(parents=True)
        for notebook in (EXAMPLES / student).glob("*.ipynb"):
            (students / student / notebook.name).write_bytes(notebook.read_bytes())
    arguments, environment = steps["grade"]
    policy = arguments[arguments.index("--policy"):arguments.index("--policy") + 2]
    times = arguments[arguments.index("--handed-in"):arguments.index("--handed-in") + 2]
    completed = run_step(([sys.executable, "-m", "grader", "grade", str(students),
                           "--workers", "1", "--json", str(tmp_path / "one.json"), *policy,
                           *times], environment))
    assert completed.returncode == 0, completed.stderr
    sequential = json.loads((tmp_path / "one.json").read_text())["submissions"]
    parallel = [s for s in report["submissions"] if s["student"] == "hal_her_off_by_one"]
    assert graded_content(sequential) == graded_content(parallel)


def test_one_term_as_the_readme_walks_it(example_class):
    """Publish, grade (step 3: the fixture), grade the written answers, export, look for
    copies: every command of the README's term runs, and does what it says."""
    _, report, _, steps, out = example_class
    published = run_step(steps["publish"])
    assert published.returncode == 0, published.stderr
    edition_readme = (out / "edition" / "README.md").read_text()
    assert "https://hub.example.edu/hub/user-redirect/git-pull?repo=" in edition_readme
    assert "01_qlearning.ipynb" in edition_readme and "03_prioritized" not in edition_readme
    # step 3's late policy: fay's lesson 03 came 29 hours late (2 days begun, 10% each);
    # hal's lesson 04 a day and a half late, within a two-day extension
    fay = next(s for s in report["submissions"] if s["student"] == "fay_float32_tree")
    fay03 = next(n for n in fay["notebooks"] if n["name"] == "03_prioritized_replay")
    assert fay03["handed_in"]["source"] == "the hand-in times file"
    assert fay03["late"]["penalty_fraction"] == 0.2 and fay03["late"]["floor_fraction"] == 0.5
    # Canvas's rule: 20% of the lesson's points off, the score never taken below half of them
    raw, maximum = fay03["raw_score"], fay03["max_score"]
    assert fay03["score"] == pytest.approx(raw - min(0.2 * maximum,
                                                     max(raw - 0.5 * maximum, 0)))
    hal = next(s for s in report["submissions"] if s["student"] == "hal_her_off_by_one")
    hal04 = next(n for n in hal["notebooks"] if n["name"] == "04_hindsight_replay")
    assert hal04["late"]["extended"] and not hal04["late"]["late"]
    # the written answer awaiting a person got its row; the instructor fills it in
    manual = out / "manual.csv"
    rows = list(csv.DictReader(manual.open()))
    assert [(row["student"], row["item"], row["points"]) for row in rows] == [
        ("ada_complete", "conclusion", "")]
    assert "decorrelation" in rows[0]["answer"]
    manual.write_text(manual.read_text().replace("ada_complete,06_capstone,conclusion,,",
                                                 "ada_complete,06_capstone,conclusion,3,"
                                                 "Well argued"))
    exported = run_step(steps["export"])
    assert exported.returncode == 0, exported.stderr
    canvas = list(csv.reader((out / "canvas.csv").open()))
    ada = next(row for row in canvas if row[0] == "Ada Lovelace")
    assert ada[canvas[0].index("06_capstone")] == "8"  # 5 of checks + 3 from a person
    final = json.loads((out / "final.json").read_text())
    assert next(s for s in final["submissions"]
                if s["student"] == "ada_complete")["score"] == sum(final["lessons"].values())
    assert "graded by a person: 3 / 3 points" in (out / "feedback" / "ada_complete.html"
                                                  ).read_text()
    similar = run_step(steps["similarity"])
    assert similar.returncode == 0, similar.stderr
    # ada handed in the released solutions themselves, which the page lists first
    assert "match the released solution: ada_complete (01_qlearning, 100%)" in similar.stdout
    assert "Answers that match the released solution" in (out / "similarity.html").read_text()
    assert final == json.loads((out / "final.json").read_text())  # no grade changed


# --- a class as students hand it in --------------------------------------------------------
# One grading run (quick checks of lessons 01 and 02) of a class holding what a user study
# found: a finished renamed copy beside the untouched release, a malformed notebook, folders
# named like notebooks, a student missing from the roster; then the same folder resumed.

QUICK = "test_value_and_best_action,test_fifo_eviction"
SALT = "hand-in-salt"
ROSTER = """folder,name,id,email
amy,Amy Ample,201,amy@uni.example
bob,Bob Renamer,202,bob@uni.example
cy,Cy Unzipper,203,cy@uni.example
hal,Hal Folder,204,hal@uni.example
"""


# A person regraded hal's lesson 01 check; lesson 01 was due long before anyone handed it
# in (whatever the files' times), so its late work keeps the floor of 60%.
MANUAL = "student,lesson,item,points,comment\nhal,01,test_value_and_best_action,1,regraded\n"
POLICY = """[penalty]
percent = 10
floor = 60
[due]
01_qlearning = 2001-01-01T00:00:00Z
"""


def by_people(root):
    # no LMS times here: the files' own, as the instructor allows with --file-times
    return ("--manual", str(root / "manual.csv"), "--policy", str(root / "policy.toml"),
            "--file-times")


def without_salt_in_environment():
    return {name: value for name, value in os.environ.items() if name != "GRADER_SALT"}


def run_without_salt_variable(*arguments):
    return subprocess.run([sys.executable, "-m", "grader", *arguments], cwd=REPOSITORY,
                          capture_output=True, text=True, timeout=900,
                          env=without_salt_in_environment())


@pytest.fixture(scope="module")
def handed_in(tmp_path_factory):
    root = tmp_path_factory.mktemp("handed-in")
    folder = root / "class"
    # bob finished a renamed copy, then opened the released notebook and saved it untouched
    finished = write_submission(root / "work", "02_replay_buffer", student="bob")
    (folder / "bob").mkdir(parents=True)
    finished.rename(folder / "bob" / "my_homework.ipynb")
    shutil.copy(REPOSITORY / "notebooks" / "02_replay_buffer.ipynb", folder / "bob")
    os.utime(folder / "bob" / "my_homework.ipynb", (1_700_000_000, 1_700_000_000))
    # amy handed in lesson 01, and a lesson 02 file that is not a notebook
    write_submission(folder, "01_qlearning", student="amy")
    (folder / "amy" / "02_replay_buffer.ipynb").write_text("\x00\x01 my notes")
    # hal has an empty folder named like a notebook; cy unzipped theirs into one
    write_submission(folder, "01_qlearning", student="hal")
    (folder / "hal" / "02_replay_buffer.ipynb").mkdir()
    unzipped = write_submission(root / "zip", "02_replay_buffer", student="cy")
    (folder / "cy" / "02_replay_buffer.ipynb").mkdir(parents=True)
    unzipped.rename(folder / "cy" / "02_replay_buffer.ipynb" / "02_replay_buffer.ipynb")
    write_submission(folder, "02_replay_buffer", student="zed")  # not in the roster
    (root / "roster.csv").write_text(ROSTER)
    (root / "manual.csv").write_text(MANUAL)
    (root / "policy.toml").write_text(POLICY)
    out = root / "out"
    out.mkdir()
    completed = run_without_salt_variable(
        "grade", str(folder), "--only", QUICK, "--workers", "2", "--salt", SALT, "--quiet",
        "--out", str(out / "results"), "--json", str(out / "report.json"),
        "--feedback", str(out / "feedback"), "--csv", str(out / "moodle.csv"),
        "--format", "moodle", "--roster", str(root / "roster.csv"), "--moodle-feedback",
        *by_people(root))
    assert completed.returncode == 0, completed.stderr
    report = json.loads((out / "report.json").read_text())
    return {"root": root, "folder": folder, "out": out, "completed": completed,
            "report": report, "students": {s["student"]: s for s in report["submissions"]}}


def lesson_entry(submission, lesson):
    return next(n for n in submission["notebooks"] if n["name"] == lesson)


def feedback_text(handed_in, student):
    page = (handed_in["out"] / "feedback" / f"{student}.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_a_finished_renamed_copy_is_graded_not_the_untouched_release(handed_in):
    bob = handed_in["students"]["bob"]
    graded = lesson_entry(bob, "02_replay_buffer")
    assert graded["status"] == "graded" and graded["score"] == graded["max_score"] > 0
    assert "my_homework.ipynb was graded (4 of 4 answer cells changed" in graded["notes"][0]
    assert "not 02_replay_buffer.ipynb (0 changed)" in graded["notes"][0]
    (other,) = bob["notes"]  # the untouched file is named, with the reason
    assert other.endswith("since it holds more of the student's work (4 of 4 answer cells "
                          "changed from the released notebook, 0 here)")
    assert "bob/02_replay_buffer.ipynb: not graded" in other
    assert "bob/02_replay_buffer.ipynb: not graded" in handed_in["completed"].stderr
    page = feedback_text(handed_in, "bob")
    assert "Files that were not graded" in page and "my_homework.ipynb was graded" in page


def test_a_malformed_notebook_is_not_graded_and_says_why_everywhere(handed_in):
    amy = handed_in["students"]["amy"]
    broken = lesson_entry(amy, "02_replay_buffer")
    assert broken["status"] == "not graded" and broken["score"] is None
    assert not broken["submitted"] and "could not be read: it is not JSON" in broken["notes"][0]
    assert lesson_entry(amy, "01_qlearning")["status"] == "graded"
    row = next(line for line in handed_in["completed"].stdout.splitlines()
               if line.split()[:2] == ["amy", "02_replay_buffer"])
    assert "NOT GRADED" in row and "it is not JSON" in row
    assert "amy/02_replay_buffer.ipynb: not graded" in handed_in["completed"].stderr
    book = {row["Email address"]: row for row in
            csv.DictReader(io.StringIO((handed_in["out"] / "moodle.csv").read_text()))}
    assert book["amy@uni.example"]["02_replay_buffer"] == ""  # blank, not a zero
    assert book["amy@uni.example"]["02_replay_buffer (feedback)"].startswith("Not graded:")
    page = feedback_text(handed_in, "amy")
    assert "Not graded" in page and "02_replay_buffer.ipynb could not be read" in page


def test_a_folder_named_like_a_notebook_costs_nobody_their_row(handed_in):
    students = handed_in["students"]
    assert set(students) == {p.name for p in handed_in["folder"].iterdir()}
    hal = students["hal"]
    assert lesson_entry(hal, "01_qlearning")["status"] == "graded"
    assert any("02_replay_buffer.ipynb: a folder, not a notebook; it holds no notebook"
               in note for note in hal["notes"])
    cy = lesson_entry(students["cy"], "02_replay_buffer")  # the notebook inside is cy's
    assert cy["status"] == "graded" and cy["score"] == cy["max_score"]
    stdout = handed_in["completed"].stdout
    assert all(any(line.split()[:1] == [student] for line in stdout.splitlines())
               for student in students)


def test_resume_without_the_salt_is_refused_with_the_stored_salts_fingerprint(handed_in):
    from grader.salts import fingerprint

    results = str(handed_in["out"] / "results")
    forgotten = run_without_salt_variable("grade", str(handed_in["folder"]), "--only", QUICK,
                                          "--out", results, "--resume", "--quiet")
    assert forgotten.returncode == 2 and "Traceback" not in forgotten.stderr
    (line,) = forgotten.stderr.strip().splitlines()
    assert f"the salt of fingerprint {fingerprint(SALT)}" in line
    assert "--salt" in line and "GRADER_SALT" in line and "public default salt" in line
    resumed = run_without_salt_variable("grade", str(handed_in["folder"]), "--only", QUICK,
                                        "--out", results, "--resume", "--quiet", "--salt",
                                        SALT, "--workers", "2", "--json",
                                        str(handed_in["root"] / "resumed.json"),
                                        *by_people(handed_in["root"]))
    assert resumed.returncode == 0, resumed.stderr
    assert "graded 0 notebook(s)" in resumed.stdout and "5 taken from an earlier run" \
        in resumed.stdout
    again = json.loads((handed_in["root"] / "resumed.json").read_text())
    assert graded_content(again) == graded_content(handed_in["report"])


def test_a_persons_grades_and_the_late_policy_reach_the_report_and_the_pages(handed_in):
    students, stdout = handed_in["students"], handed_in["completed"].stdout
    amy = lesson_entry(students["amy"], "01_qlearning")
    assert amy["handed_in"]["source"] == "the file's modification time"
    # years late: all the points off, but the penalty takes no score below 60% of them
    assert amy["late"]["late"] and amy["late"]["penalty_fraction"] == 1.0
    assert amy["raw_score"] > 0.6 * amy["max_score"]
    assert amy["score"] == pytest.approx(0.6 * amy["max_score"])
    hal = lesson_entry(students["hal"], "01_qlearning")
    (regraded,) = [check for check in hal["checks"] if check.get("override")]
    assert regraded["override"] == {"points": 1.0, "comment": "regraded"}
    assert hal["raw_score"] == 1.0 and hal["score"] == 1.0  # already below the floor
    assert not lesson_entry(students["bob"], "02_replay_buffer").get("late", {}).get("late")
    assert "manual grades: 1 from" in stdout and "late policy: 2 lesson(s) handed in late, " \
        "1 penalised" in stdout
    book = {row["Email address"]: row for row in
            csv.DictReader(io.StringIO((handed_in["out"] / "moodle.csv").read_text()))}
    assert float(book["hal@uni.example"]["01_qlearning"]) == pytest.approx(1.0)
    assert "100% of the lesson's points off the score, never below 60% of them" in \
        feedback_text(handed_in, "amy")
    assert "Regraded by a person: 1 / " in feedback_text(handed_in, "hal")


def test_every_student_keeps_a_row_or_is_reported_loudly(handed_in):
    stderr = handed_in["completed"].stderr
    book = list(csv.DictReader(io.StringIO((handed_in["out"] / "moodle.csv").read_text())))
    assert {row["Full name"] for row in book} == {"Amy Ample", "Bob Renamer", "Cy Unzipper",
                                                  "Hal Folder"}
    assert "zed is not in the roster: LEFT OUT of the Moodle gradebook" in stderr
    assert "1 student(s) have no row in the Moodle gradebook" in stderr
    report = str(handed_in["out"] / "report.json")
    roster = str(handed_in["root"] / "roster.csv")
    for gradebook in ("generic", "canvas"):
        written = handed_in["root"] / f"{gradebook}.csv"
        exported = run_grader("export", report, "--format", gradebook, "--roster", roster,
                              "--csv", str(written))
        assert exported.returncode == 0, exported.stderr
        rows = list(csv.reader(io.StringIO(written.read_text())))
        first = [row[0] for row in rows[1:] if row[0] != "Points Possible"]
        assert "zed" in first and len(first) == 5  # every student, rostered or not
        assert "zed is not in the roster" in exported.stderr
    assert "Canvas can match it by name only" in exported.stderr


def test_a_renamed_notebook_given_alone_is_graded_as_its_lesson(tmp_path):
    def drop_metadata(notebook):  # an editor that keeps cells but not the metadata
        notebook.metadata.pop("course")

    path = write_submission(tmp_path, "02_replay_buffer", edit=drop_metadata, student="eve")
    renamed = path.rename(path.with_name("my_homework.ipynb"))
    completed = run_grader("grade", str(renamed), "--only", "test_fifo_eviction", "--quiet",
                           "--salt", SALT, "--json", str(tmp_path / "report.json"))
    assert completed.returncode == 0, completed.stderr
    (eve,) = json.loads((tmp_path / "report.json").read_text())["submissions"]
    graded = lesson_entry(eve, "02_replay_buffer")
    assert eve["student"] == "eve" and graded["score"] == graded["max_score"] > 0


@pytest.mark.parametrize("option, value, reason", [
    ("--memory-mb", "50", "--memory-mb 50 is too little for a sandbox: grading a lesson "
                          "needs at least"),
    ("--memory-mb", "0", "is too little for a sandbox"),
    ("--memory-mb", "99999999999", "is more than 1048576 MB"),
    ("--disk-mb", "0", "needs a budget of at least 1 MB"),
    ("--disk-mb", "-5", "needs a budget of at least 1 MB"),
    ("--workers", "0", "at least 1 worker is needed"),
    ("--workers", "100000", "each local worker needs at least"),
    ("--cpu-weight", "0", "--cpu-weight 0: give a whole number of ordinary processes from 1 "
                          "to 256"),
    ("--cpu-weight", "257", "from 1 to 256"),
    ("--salt", "", "--salt is empty"),
    ("--only", ",", "--only names no check"),
])
def test_an_odd_option_is_refused_in_one_line_before_grading(option, value, reason):
    notebook = EXAMPLES / "ada_complete" / "01_qlearning.ipynb"
    completed = run_grader("grade", str(notebook), f"{option}={value}")
    assert completed.returncode == 2 and "Traceback" not in completed.stderr
    (line,) = completed.stderr.strip().splitlines()
    assert reason in line, line


def test_the_least_memory_the_grader_accepts_grades_a_correct_notebook(tmp_path):
    from grader.judge.sandbox_resources import MIN_MEMORY_MB

    # lesson 06 imports scipy, the first import that failed with too little memory
    notebook = EXAMPLES / "ada_complete" / "06_capstone.ipynb"
    completed = run_grader("grade", str(notebook), "--memory-mb", str(MIN_MEMORY_MB),
                           "--only", "test_confidence_interval,test_autocorrelation",
                           "--quiet", "--json", str(tmp_path / "report.json"))
    assert completed.returncode == 0, completed.stderr
    (ada,) = json.loads((tmp_path / "report.json").read_text())["submissions"]
    graded = lesson_entry(ada, "06_capstone")
    # both checks passed; the written conclusion (3 points) waits for a person
    assert graded["score"] == graded["max_score"] - 3 > 0, graded


def test_ctrl_c_ends_grading_in_one_line_without_a_workers_traceback(tmp_path):
    """Ctrl-C reaches the terminal's whole foreground process group, Dask's workers too:
    the grader says in one line what it kept, and no worker prints a traceback."""
    import signal
    import time

    def as_a_terminal_starts_it():
        # a foreground job starts with Ctrl-C at its default, nothing blocked, whatever
        # this test process has (a process that ignores SIGINT hands that on to its
        # children: the grader then grades on, as a job started with `&` rightly does)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])

    here = (f"this test process: SIGINT {signal.getsignal(signal.SIGINT)!r}, blocked "
            f"{sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))}")
    grading = subprocess.Popen(
        [sys.executable, "-m", "grader", "grade", str(EXAMPLES), "--workers", "2",
         "--salt", "ctrl-c", "--out", str(tmp_path / "kept")],
        cwd=REPOSITORY, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own group, as a terminal's foreground job
        preexec_fn=as_a_terminal_starts_it)  # noqa: PLW1509 - signal state only, no threads
    seen = ""
    while "grading:" not in seen:  # the cluster is up and grading
        character = grading.stderr.read(1)
        assert character, f"the grader ended before grading: {seen[-2000:]}"
        seen += character
    time.sleep(3)
    os.killpg(grading.pid, signal.SIGINT)
    _, rest = grading.communicate(timeout=120)
    stderr = seen + rest
    assert grading.returncode == 130, (here, stderr[-2000:])
    assert "grader: interrupted; " in stderr and "--resume" in stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-3000:]


def test_a_notebook_without_a_hand_in_time_is_refused_before_grading(tmp_path):
    """With a policy, a notebook with no row in --handed-in and no nbgrader timestamp.txt
    is refused in one line, before anything is graded, unless --file-times allows the
    file's modification time (a copy or an unzip changes it)."""
    for student in ("amy", "bob"):
        write_submission(tmp_path / "class", "01_qlearning", student=student)
    (tmp_path / "policy.toml").write_text(POLICY)
    (tmp_path / "times.csv").write_text("student,lesson,time\namy,01,2000-12-31T12:00:00Z\n")
    refused = run_without_salt_variable(
        "grade", str(tmp_path / "class"), "--only", "test_update", "--policy",
        str(tmp_path / "policy.toml"), "--handed-in", str(tmp_path / "times.csv"))
    assert refused.returncode == 2, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "no hand-in time for 1 notebook(s) (bob's 01_qlearning)" in line
    assert "--file-times" in line and "graded" not in refused.stdout
