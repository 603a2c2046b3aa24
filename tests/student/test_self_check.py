"""Students first: the self-check grades as the grader does, Run All shows every test, and
the notebook's own patterns have no traps (a re-run class cell, a skipped setup cell)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from checks import checks_for_lesson
from checks.framework import VISIBLE_SALT
from grader.outputs.report import graded_content
from submission_factory import REPOSITORY
from tests.support.run_all import cell_stdout, code_cells, name_of, stderr_in
from tests.support.in_process import namespace_for

pytestmark = pytest.mark.xdist_group("self-check")

EXAMPLES = REPOSITORY / "examples" / "submissions"
LESSON = "02_replay_buffer"
STUDENTS = ("ada_complete", "cy_buggy_buffer", "ben_empty")
QUICK = sorted(check.name for check in checks_for_lesson(LESSON) if not check.learning)
sys.path.insert(0, str(REPOSITORY / "examples"))
from make_submissions import solution_answers  # noqa: E402


def grader(*arguments):
    completed = subprocess.run([sys.executable, "-m", "grader", *arguments], cwd=REPOSITORY,
                               capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


@pytest.fixture(scope="module")
def class_report(tmp_path_factory):
    """The instructor's grader on the three students' lesson 02, with the public salt."""
    folder = tmp_path_factory.mktemp("class")
    for student in STUDENTS:
        (folder / student).mkdir()
        shutil.copy(EXAMPLES / student / f"{LESSON}.ipynb", folder / student)
    out = folder / "report.json"
    grader("grade", str(folder), "--salt", VISIBLE_SALT, "--only", ",".join(QUICK),
           "--workers", "2", "--quiet", "--json", str(out))
    return json.loads(out.read_text())


@pytest.mark.parametrize("student", STUDENTS)
def test_the_self_check_reports_what_the_grader_reports(class_report, student, tmp_path):
    out = tmp_path / "check.json"
    printed = grader("check", str(EXAMPLES / student / f"{LESSON}.ipynb"), "--json", str(out))
    mine = json.loads(out.read_text())
    graded = next(n for s in class_report["submissions"] if s["student"] == student
                  for n in s["notebooks"] if n["name"] == LESSON)
    assert graded_content(mine["notebook"]) == graded_content(graded)
    assert mine["skipped"] == ["test_replay_learning"] and "add --learning" in printed
    lines = printed.splitlines()
    # the score first; a line per check passed; what a check not passed asks and found
    assert lines[0] == (f"Self-check of {LESSON}: {mine['notebook']['score']:g} / "
                        f"{sum(c['max_score'] for c in graded['checks']):g} from the checks "
                        "run (1 learning check(s) skipped)")
    assert max(len(line) for line in lines) <= 88 + 20  # wrapped (a long word may stick out)
    unwrapped = " ".join(printed.split())
    for check in graded["checks"]:
        assert f"{check['id']} ({check['score']:g}/{check['max_score']:g})" in printed
        asks = f"asks: {' '.join(checks_for_lesson(LESSON)[check['id']].asks.split())}"
        assert (asks in unwrapped) is (check["status"] != "passed"), check["id"]
        if check["status"] != "passed":
            assert " ".join(check["feedback"].split()) in unwrapped
    if student == "ben_empty":  # a stub is not a bug: its own status, in words
        assert {c["status"] for c in graded["checks"]} == {"not written"}
        assert "not written yet" in printed and "\u2717" not in printed


def test_the_self_check_names_code_the_rebuild_ignores(tmp_path):
    notebook = nbformat.read(EXAMPLES / "ada_complete" / f"{LESSON}.ipynb", as_version=4)
    tests = [cell for cell in notebook.cells if name_of(cell) == "test_fifo_eviction"]
    tests[0].source += "\nprint('I changed a test')"
    helper = nbformat.v4.new_code_cell("def my_helper():\n    return 42")
    notebook.cells.insert(5, helper)
    path = tmp_path / f"{LESSON}.ipynb"
    nbformat.write(notebook, path)
    printed = grader("check", str(path))
    assert "cell 6 (`def my_helper():`) is a cell you added" in printed, printed
    assert "('test_fifo_eviction') is the course's" in printed, printed
    assert "\u2713 passed" in printed and "\u2717" not in printed, printed


def test_a_missing_notebook_gets_one_line_not_a_traceback(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "grader", "check",
                                str(tmp_path / "02_replay_buffer.ipynb")], cwd=REPOSITORY,
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2
    assert "no such notebook" in completed.stderr and "Traceback" not in completed.stderr


def test_run_all_of_a_half_done_notebook_runs_every_cell_and_shows_each_test(tmp_path,
                                                                              monkeypatch):
    # the buffer written, the replay loop not: Run All stops at the first error, so the
    # notebook must have none, and every test must say how it went
    answers = solution_answers(LESSON)
    notebook = nbformat.read(REPOSITORY / "notebooks" / f"{LESSON}.ipynb", as_version=4)
    for cell in notebook.cells:
        if name_of(cell) in ("buffer_class", "buffer_add", "buffer_sample"):
            cell.source = answers[name_of(cell)]
    path = tmp_path / f"{LESSON}.ipynb"
    nbformat.write(notebook, path)
    monkeypatch.setenv("PYTHONPATH", str(REPOSITORY))  # the kernel runs outside the course
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))  # as Jupyter tells its kernels
    NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=False,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()  # raises on error
    results = {name_of(cell): (cell_stdout(cell), stderr_in(cell))
               for cell in code_cells(notebook) if name_of(cell).startswith("test_")}
    # the learning test drives the buffer with the course's own loop: it needs no loop
    buffer_tests = [name for name in QUICK if name != "test_replay_loop"]
    for name in buffer_tests + ["test_replay_learning"]:
        assert "\u2713" in results[name][0], (name, results[name])
    assert "\u2717" in results["test_replay_loop"][1], results["test_replay_loop"]
    assert "not written yet" in results["test_replay_loop"][1], results["test_replay_loop"]
    report = cell_stdout(code_cells(notebook)[-1])
    assert any("not written yet" in line and "test_replay_loop" in line
               for line in report.splitlines()), report


def test_re_running_a_class_cell_gets_a_message_that_says_what_to_re_run():
    namespace = namespace_for(LESSON)
    class_cell = solution_answers(LESSON)["buffer_class"]
    exec(compile(class_cell, "<buffer_class again>", "exec"), namespace)  # noqa: S102
    with pytest.raises(AssertionError) as failure:
        checks_for_lesson(LESSON).run("test_fifo_eviction", namespace)
    message = str(failure.value)
    assert "ReplayBuffer was defined again" in message and "add, sample" in message
    assert "Run Selected Cell and All Below" in message and "AttributeError" not in message


def test_skipping_the_setup_cell_names_it_as_the_cause():
    notebook = nbformat.read(REPOSITORY / "notebooks" / f"{LESSON}.ipynb", as_version=4)
    imports = next(cell for cell in notebook.cells if name_of(cell) == "imports")
    with pytest.raises(RuntimeError, match="setup cell"):
        exec(compile(imports.source, "<imports>", "exec"), {})  # noqa: S102


# --- the self-check cell checks the notebook it runs in, whatever its name ------------------

def renamed_copy_beside_the_release(folder):
    """A student's folder: the finished work in ``my_homework.ipynb``, and the released
    notebook, never touched, beside it (saved later)."""
    folder.mkdir(parents=True, exist_ok=True)
    finished = folder / "my_homework.ipynb"
    shutil.copy(EXAMPLES / "ada_complete" / f"{LESSON}.ipynb", finished)
    shutil.copy(REPOSITORY / "notebooks" / f"{LESSON}.ipynb", folder)
    return finished


def test_the_self_check_cell_checks_the_renamed_copy_it_runs_in(tmp_path, monkeypatch):
    finished = renamed_copy_beside_the_release(tmp_path / "work")
    notebook = nbformat.read(finished, as_version=4)
    # the cells a student runs: the setup cell, the visible tests' cell, the self-check
    wanted = [cell for cell in code_cells(notebook)
              if name_of(cell) in ("setup", "self-check")
              or "visible-tests" in cell.metadata.get("tags", [])]
    assert len(wanted) == 3
    notebook.cells = wanted
    # a kernel started as Jupyter starts the kernel of my_homework.ipynb: in its folder,
    # told its path
    monkeypatch.setenv("PYTHONPATH", str(REPOSITORY))
    monkeypatch.setenv("JPY_SESSION_NAME", str(finished))
    NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=False,
                   resources={"metadata": {"path": str(finished.parent)}}).execute()
    printed = cell_stdout(notebook.cells[-1])
    assert f"Checking {finished}" in printed, printed
    for name in QUICK:  # the finished copy's work, not the untouched release's stubs
        assert any(line.startswith("\u2713 passed") and name in line
                   for line in printed.splitlines()), printed
    assert "not written" not in printed
    # its words are a cell's: how to ask for the learning checks there
    assert "check_my_notebook(..., learning=True)" in printed and "--learning" not in printed


def test_where_the_editor_does_not_say_the_cell_says_so_in_one_line(tmp_path, monkeypatch,
                                                                  capsys):
    from course.self_check_cell import check_my_notebook

    renamed_copy_beside_the_release(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    check_my_notebook(LESSON)
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert line.startswith(f"Cannot tell which of {LESSON}.ipynb, my_homework.ipynb this "
                           "notebook is"), line
    assert "python -m grader check path/to/your_notebook.ipynb" in line


def test_the_notebook_running_here_as_each_editor_tells_it(tmp_path):
    from course.self_check_cell import notebook_running_here

    finished = renamed_copy_beside_the_release(tmp_path / "course" / "work")
    released = finished.with_name(f"{LESSON}.ipynb")
    folder = finished.parent

    def running(namespace=None, environ=None):
        return notebook_running_here(LESSON, namespace or {}, environ or {}, folder)

    # VS Code names the file in the kernel's namespace
    assert running({"__vsc_ipynb_file__": str(finished)}) == (finished, None)
    # ipykernel's __session__, and JPY_SESSION_NAME absolute or relative to the server's
    # root, a folder above the kernel's
    assert running({"__session__": str(finished)}) == (finished, None)
    assert running(environ={"JPY_SESSION_NAME": "work/my_homework.ipynb"}) == (finished, None)
    # renamed after the kernel started: the old name is not guessed at
    path, problem = running(environ={"JPY_SESSION_NAME": str(folder / "Untitled.ipynb")})
    assert path is None and "restart the kernel" in problem
    # no editor says, one notebook of the lesson in the folder: that one
    finished.unlink()
    assert running() == (released, None)
