"""Run the notebooks in a real Jupyter kernel, as students and instructors will.

- A source notebook (``solutions/``) runs from top to bottom with no error and nothing on
  stderr: nbgrader scores a graded cell that writes to stderr as zero. Its experiments
  run with two seeds each (``SEEDS = range(10)`` becomes ``range(2)``): the same code,
  a fifth of the time. What the full runs show is measured on the notebooks' own seeds
  by ``tests/test_claims_*.py``, and ``benchmarks/notebook_runtime.py`` runs them whole.
  Its last cell, the self-check, is left out: it grades these same answers as the
  example class's ``ada_complete``, which other tests grade and self-check.
- A student notebook (``notebooks/``), untouched, runs to its last cell as "Run All" would
  (no cell raises: an error would stop it), every test cell shows a readable ✗ "not
  written yet" line, experiments say they are skipped, and the last cell's self-check
  reports the notebook as the grader would. A half-done notebook does the same, with ✓
  for what is written.
- The setup cell finds the course whether Jupyter starts in ``notebooks/`` or at the root.

One test per notebook, so ``pytest -n 2`` spreads the kernels over both cores.
"""

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from grader.setup_cell import SETUP_CELL_ID

pytestmark = pytest.mark.notebooks

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((REPO / "solutions").glob("[0-9][0-9]_*.ipynb"))
STUDENT_NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
IMPORTS_CELL_ID = "imports"  # the grade_id of every lesson's imports cell
EXPERIMENT_TAG = "experiment"
SELF_CHECK_ID = "self-check"
SMOKE_SEEDS = 2
SEEDS_LINE = re.compile(r"^(\s*\w*SEEDS = range\()(\d+)(\))", re.MULTILINE)
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def test_there_are_notebooks_to_run():
    # the parametrized tests below would silently vanish on an empty glob
    assert SOLUTIONS and [p.name for p in SOLUTIONS] == [p.name for p in STUDENT_NOTEBOOKS]


def execute(notebook, cwd):
    """Run every cell of ``notebook`` in place, in a kernel started in ``cwd``."""
    client = NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return notebook


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


def name_of(cell):
    return nbgrader_meta(cell).get("grade_id") or cell.get("id")


def code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def errors_in(cell):
    return [output for output in cell.get("outputs", []) if output.output_type == "error"]


def stderr_in(cell):
    return "".join(output.text for output in cell.get("outputs", [])
                   if output.output_type == "stream" and output.name == "stderr")


def cell_stdout(cell):
    return "".join(output.text for output in cell.get("outputs", [])
                   if output.output_type == "stream" and output.name == "stdout")


def describe_error(cell, error):
    traceback = ANSI_ESCAPE.sub("", "\n".join(error.traceback))
    return f"cell {name_of(cell)!r}: {error.ename}: {error.evalue}\n{traceback}"


def is_answer(cell):
    return nbgrader_meta(cell).get("solution", False) and not nbgrader_meta(cell).get("grade")


def is_test(cell):
    return nbgrader_meta(cell).get("grade", False)


def is_experiment(cell):
    return EXPERIMENT_TAG in cell.metadata.get("tags", [])


def with_fewer_seeds(notebook):
    """``notebook`` with each experiment's ``...SEEDS = range(n)`` cut to SMOKE_SEEDS."""
    for cell in code_cells(notebook):
        if is_experiment(cell):
            cell.source = SEEDS_LINE.sub(
                lambda line: f"{line[1]}{min(int(line[2]), SMOKE_SEEDS)}{line[3]}", cell.source)
    return notebook


def test_the_smoke_run_cuts_the_seeds_of_the_slow_experiments():
    for lesson in ("03_prioritized_replay", "06_capstone", "07_neural_replay"):
        notebook = with_fewer_seeds(nbformat.read(REPO / "solutions" / f"{lesson}.ipynb",
                                                  as_version=4))
        sources = "\n".join(cell.source for cell in code_cells(notebook) if is_experiment(cell))
        assert f"SEEDS = range({SMOKE_SEEDS})" in sources, lesson
        assert not re.search(rf"SEEDS = range\((?!{SMOKE_SEEDS}\))", sources), lesson


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_notebook_runs_without_errors_or_stderr(path):
    notebook = with_fewer_seeds(nbformat.read(path, as_version=4))
    # Its last cell, the self-check, grades the saved notebook in a sandbox: the example
    # class's ada_complete (these answers) is graded so by tests/test_grader_cli.py, and
    # tests/test_self_check.py runs the self-check on it.
    assert name_of(code_cells(notebook)[-1]) == SELF_CHECK_ID
    notebook.cells.remove(code_cells(notebook)[-1])
    execute(notebook, path.parent)
    problems = []
    for cell in code_cells(notebook):
        problems += [describe_error(cell, error) for error in errors_in(cell)]
        if stderr_in(cell):
            problems.append(f"cell {name_of(cell)!r} wrote to stderr "
                            f"(a graded cell would score 0):\n{stderr_in(cell)}")
    assert not problems, f"{path.name}:\n\n" + "\n\n".join(problems)
    # a test cell that passes without printing ran no check at all
    silent = [name_of(cell) for cell in code_cells(notebook)
              if is_test(cell) and "\u2713" not in cell_stdout(cell)]
    assert not silent, f"{path.name}: test cells that printed no \u2713 line: {silent}"


def run_all_problems(notebook):
    """What a student who ran every cell of an untouched ``notebook`` would find wrong: a
    cell that raised (it would stop "Run All"), a test that passed on work not done or
    did not say the work is not written, a traceback where a sentence belongs."""
    problems = []
    for cell in code_cells(notebook):
        problems += [f"Run All would stop here: {describe_error(cell, error)}"
                     for error in errors_in(cell)]
        if not is_test(cell):
            continue
        shown, failure = cell_stdout(cell), stderr_in(cell)
        if "\u2713" in shown:
            problems.append(f"test cell {name_of(cell)!r} passed on an empty notebook: "
                            "students would see a pass for work not done")
        if "\u2717" not in failure or "not written yet" not in failure:
            problems.append(f"test cell {name_of(cell)!r} must show a \u2717 line saying "
                            f"'not written yet'; it showed {shown + failure!r}")
        if "Traceback" in failure:
            problems.append(f"test cell {name_of(cell)!r}: a traceback, not a sentence")
    return problems


def self_check_output(notebook):
    return cell_stdout(code_cells(notebook)[-1])


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.stem)
def test_run_all_of_a_fresh_notebook_reaches_every_test_and_the_self_check(path):
    notebook = execute(nbformat.read(path, as_version=4), path.parent)
    names = [name_of(cell) for cell in code_cells(notebook)]
    assert SETUP_CELL_ID in names and IMPORTS_CELL_ID in names, names
    problems = run_all_problems(notebook)
    assert not problems, f"{path.name}:\n\n" + "\n\n".join(problems)
    report = self_check_output(notebook)
    assert "Self-check of " + path.stem in report and "not written yet" in report, report
    assert "\u2713 passed" not in report, report


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.stem)
def test_setup_and_imports_run_with_jupyter_started_at_the_repository_root(path):
    cells = {name_of(cell): cell for cell in nbformat.read(path, as_version=4).cells}
    notebook = nbformat.v4.new_notebook(cells=[cells[SETUP_CELL_ID], cells[IMPORTS_CELL_ID]])
    execute(notebook, REPO)
    problems = [describe_error(cell, error) for cell in notebook.cells
                for error in errors_in(cell)]
    assert not problems, f"{path.name} from the repository root:\n\n" + "\n\n".join(problems)
