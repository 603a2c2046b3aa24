"""Run the notebooks in a real Jupyter kernel, as students and instructors will.

- A source notebook (``solutions/``) runs from top to bottom with no error and nothing on
  stderr: nbgrader scores a graded cell that writes to stderr as zero.
- A student notebook (``notebooks/``), untouched, fails only where work is missing, and
  says so: answer and experiment cells raise ``NotImplementedError``, every test cell
  fails with a readable "not implemented yet" message, and the setup runs.
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


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_notebook_runs_without_errors_or_stderr(path):
    notebook = execute(nbformat.read(path, as_version=4), path.parent)
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


def unexpected_error(cell, error, earlier_experiment_failed=False):
    """Why ``error`` in a fresh student notebook is wrong, or None if it is expected.

    An experiment that uses an earlier experiment's results (a summary table of its runs)
    fails with NameError when that experiment could not run: that is expected too.
    """
    if is_answer(cell) or is_experiment(cell):
        cascade = is_experiment(cell) and earlier_experiment_failed and error.ename == "NameError"
        if error.ename != "NotImplementedError" and not cascade:
            return "only NotImplementedError may come from unwritten code here"
    elif is_test(cell):
        if error.ename != "AssertionError" or "not implemented yet" not in error.evalue:
            return "a test must fail with AssertionError saying 'not implemented yet'"
        if "Traceback" in error.evalue:
            return "the test's message must be a sentence, not a traceback"
    else:
        return "given code must run before the student writes anything"
    return None


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.stem)
def test_student_notebook_fails_only_where_work_is_missing(path):
    notebook = execute(nbformat.read(path, as_version=4), path.parent)
    cells = code_cells(notebook)
    names = [name_of(cell) for cell in cells]
    assert SETUP_CELL_ID in names and IMPORTS_CELL_ID in names, names
    problems = []
    experiment_failed = False
    for cell in cells:
        for error in errors_in(cell):
            reason = unexpected_error(cell, error, experiment_failed)
            if reason:
                problems.append(f"{reason}; {describe_error(cell, error)}")
        experiment_failed |= is_experiment(cell) and bool(errors_in(cell))
        if is_test(cell) and not errors_in(cell):
            problems.append(f"test cell {name_of(cell)!r} passed on an empty notebook: "
                            f"students would see a pass for work not done")
    assert not problems, f"{path.name}:\n\n" + "\n\n".join(problems)


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.stem)
def test_setup_and_imports_run_with_jupyter_started_at_the_repository_root(path):
    cells = {name_of(cell): cell for cell in nbformat.read(path, as_version=4).cells}
    notebook = nbformat.v4.new_notebook(cells=[cells[SETUP_CELL_ID], cells[IMPORTS_CELL_ID]])
    execute(notebook, REPO)
    problems = [describe_error(cell, error) for cell in notebook.cells
                for error in errors_in(cell)]
    assert not problems, f"{path.name} from the repository root:\n\n" + "\n\n".join(problems)
