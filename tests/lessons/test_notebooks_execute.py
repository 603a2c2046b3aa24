"""Run the notebooks in a real Jupyter kernel, as students and instructors will.

- A source notebook (``solutions/``) runs from top to bottom with no error and nothing on
  stderr: nbgrader scores a graded cell that writes to stderr as zero. Every figure it
  shows shows all its data: no legend over it, no line hidden under another, no empty
  axes (measured by tests/support/figures.py as the kernel displays it). Its experiments
  run small: two seeds each (``SEEDS = range(10)`` becomes ``range(2)``) and, in the
  slowest, fewer episodes or steps (``SMOKE_SIZES``): the same code, a fraction of the
  time. What the full runs show is measured on the notebooks' own seeds by
  ``tests/lessons/test_claims_*.py``, and ``benchmarks/notebook_runtime.py`` runs them whole.
  Its last cell, the self-check, is left out: it grades these same answers as the
  example class's ``ada_complete``, which other tests grade and self-check.
- A student notebook (``notebooks/``), untouched, runs to its last cell as "Run All" would
  (no cell raises: an error would stop it), every test cell shows a readable ✗ "not
  written yet" line, experiments say they are skipped, and the last cell's self-check
  reports the notebook as the grader would. A half-done notebook does the same, with ✓
  for what is written.
- Run All reads cleanly whatever the answers: an experiment that a wrong answer makes
  raise says in one line which function raised what, and one that needs unwritten code
  says it is skipped; a later cell that needs the results it never made is skipped in
  one line; no traceback, no empty figure under such a line, and a test cell shows its
  ✓/✗ lines only (no ``True``/``False`` value as Out[]).
- The setup cell finds the course whether Jupyter starts in ``notebooks/`` or at the root.

One test per notebook, so ``pytest -n 2`` spreads the kernels over both cores.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from grader.authoring.setup_cell import SETUP_CELL_ID
from submission_factory import solution_answers
from tests.support.run_all import (NOT_RUN, cell_stdout, code_cells, describe_error, errors_in,
                                   figure_problems_in, is_experiment, is_test, name_of,
                                   nbgrader_meta, readability_problems, run_all_problems,
                                   shown_values, stderr_in)

pytestmark = pytest.mark.notebooks

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((REPO / "solutions").glob("[0-9][0-9]_*.ipynb"))
STUDENT_NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
IMPORTS_CELL_ID = "imports"  # the grade_id of every lesson's imports cell
SELF_CHECK_ID = "self-check"
SMOKE_SEEDS = 2
SEEDS_LINE = re.compile(r"^(\s*\w*SEEDS = range\()(\d+)(\))", re.MULTILINE)
# The slowest experiments' sizes in the smoke run: {lesson: {text: replacement}}, each
# text found exactly once in the lesson's experiment cells or the course's cells that set
# them up (never an answer or a test; a test says so)
SMOKE_SIZES = {
    "03_prioritized_replay": {"EPISODES = 200\nCHECKPOINTS = [25, 50, 100, 200]":
                              "EPISODES = 30\nCHECKPOINTS = [15, 30]",
                              "CAPACITIES = [1_000, 10_000, 100_000]":
                              "CAPACITIES = [1_000, 10_000]"},
    "04_hindsight_replay": {"BITS = {4: 1000, 6: 3000, 8: 4000}": "BITS = {4: 300, 6: 300, 8: 300}",
                            "RELATIVE_EPISODES = 2000": "RELATIVE_EPISODES = 200"},
    "05_combined_replay": {"EPISODES, BATCH, EARLY = 200, 8, 50":
                           "EPISODES, BATCH, EARLY = 16, 8, 10",
                           "def cartpole_run(seed, episodes=300)":
                           "def cartpole_run(seed, episodes=150)"},
    "06_capstone": {"episodes=300, early=(1, 50), late=(201, 300), threshold=0.0":
                    "episodes=60, early=(1, 30), late=(31, 60), threshold=0.0",
                    "episodes=300, early=(1, 150), late=(201, 300), threshold=195.0":
                    "episodes=60, early=(1, 30), late=(31, 60), threshold=195.0"},
    "07_neural_replay": {"SETTINGS = DQNSettings()": "SETTINGS = DQNSettings(steps=1000)"},
    "08_nstep_replay": {"SETTINGS = Settings()":
                        "SETTINGS = Settings(steps=2_000, learning_starts=500, "
                        "exploration_steps=1_000)",
                        "A2C = A2CSettings()": "A2C = A2CSettings(steps=1_000)",
                        "FRAME, STACK, CAPACITY = (84, 84), 4, 10_000":
                        "FRAME, STACK, CAPACITY = (84, 84), 4, 1_000"},
}
FIGURE_CHECKS = REPO / "tests" / "support" / "figures.py"


def test_there_are_notebooks_to_run():
    # the parametrized tests below would silently vanish on an empty glob
    assert SOLUTIONS and [p.name for p in SOLUTIONS] == [p.name for p in STUDENT_NOTEBOOKS]


def execute(notebook, cwd):
    """Run every cell of ``notebook`` in place, in a kernel started in ``cwd``."""
    client = NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return notebook


def is_answer(cell):
    return nbgrader_meta(cell).get("solution", False) and not nbgrader_meta(cell).get("grade")


def smoke_sized(notebook, lesson):
    """``notebook`` with each experiment's ``...SEEDS = range(n)`` cut to SMOKE_SEEDS, and
    the sizes of ``SMOKE_SIZES[lesson]`` put in."""
    for cell in code_cells(notebook):
        if is_experiment(cell):
            cell.source = SEEDS_LINE.sub(
                lambda line: f"{line[1]}{min(int(line[2]), SMOKE_SEEDS)}{line[3]}", cell.source)
        if not (is_answer(cell) or is_test(cell)):
            for text, smaller in SMOKE_SIZES.get(lesson, {}).items():
                cell.source = cell.source.replace(text, smaller)
    return notebook


def with_figure_checks(notebook):
    """``notebook`` with a cell after its imports that makes the kernel print a line for
    each problem of every figure it displays (tests/support/figures.py)."""
    checks = nbformat.v4.new_code_cell(
        "import importlib.util\n"
        f"_spec = importlib.util.spec_from_file_location('figure_checks', {str(FIGURE_CHECKS)!r})\n"
        "_figure_checks = importlib.util.module_from_spec(_spec)\n"
        "_spec.loader.exec_module(_figure_checks)\n"
        "_figure_checks.report_figure_problems()")
    imports = next(index for index, cell in enumerate(notebook.cells)
                   if name_of(cell) == IMPORTS_CELL_ID)
    notebook.cells.insert(imports + 1, checks)
    return notebook


def experiment_sources(notebook):
    return "\n".join(cell.source for cell in code_cells(notebook) if is_experiment(cell))


def course_sources(notebook):
    """The code of the cells the smoke run may resize: neither answers nor tests."""
    return "\n".join(cell.source for cell in code_cells(notebook)
                     if not (is_answer(cell) or is_test(cell)))


def test_the_smoke_run_cuts_the_seeds_and_sizes_of_the_slow_experiments():
    for lesson in ("03_prioritized_replay", "06_capstone", "07_neural_replay"):
        sources = experiment_sources(smoke_sized(
            nbformat.read(REPO / "solutions" / f"{lesson}.ipynb", as_version=4), lesson))
        assert f"SEEDS = range({SMOKE_SEEDS})" in sources, lesson
        assert not re.search(rf"SEEDS = range\((?!{SMOKE_SEEDS}\))", sources), lesson
    for lesson, sizes in SMOKE_SIZES.items():
        notebook = nbformat.read(REPO / "solutions" / f"{lesson}.ipynb", as_version=4)
        full = course_sources(notebook)
        assert all(full.count(text) == 1 for text in sizes), (lesson, sizes)
        small = course_sources(smoke_sized(notebook, lesson))
        assert not any(text in small for text in sizes), lesson


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_notebook_runs_cleanly_and_its_figures_show_all_their_data(path):
    notebook = with_figure_checks(smoke_sized(nbformat.read(path, as_version=4), path.stem))
    # Its last cell, the self-check, grades the saved notebook in a sandbox: the example
    # class's ada_complete (these answers) is graded so by tests/test_grader_cli.py, and
    # tests/student/test_self_check.py runs the self-check on it.
    assert name_of(code_cells(notebook)[-1]) == SELF_CHECK_ID
    notebook.cells.remove(code_cells(notebook)[-1])
    execute(notebook, path.parent)
    problems = []
    for cell in code_cells(notebook):
        problems += [describe_error(cell, error) for error in errors_in(cell)]
        if stderr_in(cell):
            problems.append(f"cell {name_of(cell)!r} wrote to stderr "
                            f"(a graded cell would score 0):\n{stderr_in(cell)}")
        problems += [f"cell {name_of(cell)!r}: {problem}" for problem in figure_problems_in(cell)]
        if is_test(cell) and shown_values(cell):
            problems.append(f"test cell {name_of(cell)!r} shows a value as Out[]")
    assert not problems, f"{path.name}:\n\n" + "\n\n".join(problems)
    # a test cell that passes without printing ran no check at all
    silent = [name_of(cell) for cell in code_cells(notebook)
              if is_test(cell) and "\u2713" not in cell_stdout(cell)]
    assert not silent, f"{path.name}: test cells that printed no \u2713 line: {silent}"


def self_check_output(notebook):
    return cell_stdout(code_cells(notebook)[-1])


# experiment cells that run only the course's code, so they run before any answer is written
COURSE_CODE_DEMOS = {"ring-buffer", "cliffwalk-env", "bit-flipping-demo", "correlation-figure"}


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.stem)
def test_run_all_of_a_fresh_notebook_reaches_every_test_and_the_self_check(path):
    notebook = execute(with_figure_checks(nbformat.read(path, as_version=4)), path.parent)
    names = [name_of(cell) for cell in code_cells(notebook)]
    assert SETUP_CELL_ID in names and IMPORTS_CELL_ID in names, names
    problems = run_all_problems(notebook)
    assert not problems, f"{path.name}:\n\n" + "\n\n".join(problems)
    report = self_check_output(notebook)
    assert "Self-check of " + path.stem in report and "not written yet" in report, report
    assert "\u2713 passed" not in report, report
    # with nothing written, no experiment shows results (not even of an agent made and
    # never trained): each says Skipped, but the demonstrations of the course's own code
    shown = [name_of(cell) for cell in code_cells(notebook)
             if "experiment" in cell.metadata.get("tags", []) and name_of(cell) != SELF_CHECK_ID
             and not stderr_in(cell).startswith("Skipped: ")]
    assert set(shown) <= COURSE_CODE_DEMOS, shown


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.stem)
def test_setup_and_imports_run_with_jupyter_started_at_the_repository_root(path):
    cells = {name_of(cell): cell for cell in nbformat.read(path, as_version=4).cells}
    notebook = nbformat.v4.new_notebook(cells=[cells[SETUP_CELL_ID], cells[IMPORTS_CELL_ID]])
    execute(notebook, REPO)
    problems = [describe_error(cell, error) for cell in notebook.cells
                for error in errors_in(cell)]
    assert not problems, f"{path.name} from the repository root:\n\n" + "\n\n".join(problems)


@dataclass(frozen=True)
class WrongAnswer:
    """A student notebook with the instructors' answers in the cells ``written`` (all if
    None), one of them made wrong (``old`` became ``new``) and the others left unwritten;
    and what its experiments must say after Run All."""

    lesson: str
    written: tuple | None
    wrong_cell: str
    old: str
    new: str
    function: str  # the function of the wrong answer, named where it raised
    error: str
    stopped: tuple  # the experiments that run the wrong answer
    skipped: dict  # {experiment: None (it needs unwritten code) or (name, experiment) it
    #                 needs and that experiment, which never made it}

    def notebook(self):
        answers = solution_answers(self.lesson)
        assert answers[self.wrong_cell].count(self.old) == 1, (self.lesson, self.old)
        answers[self.wrong_cell] = answers[self.wrong_cell].replace(self.old, self.new)
        notebook = nbformat.read(REPO / "notebooks" / f"{self.lesson}.ipynb", as_version=4)
        for cell in notebook.cells:
            if is_answer(cell) and (self.written is None or name_of(cell) in self.written):
                cell.source = answers[name_of(cell)]
        return notebook


WRONG_ANSWERS = [
    # a buffer that draws without replacement: numpy refuses 8 draws from 1 transition
    WrongAnswer(
        "02_replay_buffer", written=None, wrong_cell="buffer_sample",
        old="self.rng.integers(len(self._storage), size=batch_size)",
        new="self.rng.choice(len(self._storage), size=batch_size, replace=False)",
        function="sample", error="raised ValueError inside numpy: Cannot take a larger "
                                 "sample than population when replace is False.",
        stopped=("replay-experiment",),
        skipped={"replay-summary": ("SEEDS", "replay-experiment")}),
    # half done: the sum tree and a prioritized buffer whose sample divides the priorities
    # by the largest, not their sum; the weighted update and the loop not written yet
    WrongAnswer(
        "03_prioritized_replay",
        written=("sumtree_class", "sumtree_update", "sumtree_find_prefix_sum", "per_class",
                 "per_sample", "per_update_priorities"),
        wrong_cell="per_sample",
        old="    masses = (np.arange(batch_size) + self.rng.random(batch_size)) * "
            "(total / batch_size)\n"
            "    slots = np.minimum(self.tree.find_prefix_sum(masses), len(self) - 1)\n",
        new="    priorities = self.tree.get(np.arange(len(self)))\n"
            "    slots = self.rng.choice(len(self), size=batch_size,\n"
            "                            p=priorities / self.max_priority)\n",
        function="sample",
        error="raised ValueError inside numpy: Probabilities do not sum to 1.",
        stopped=("cliffwalk-experiment", "lottery-experiment"),
        skipped={"cliffwalk-plot": ("SEEDS", "cliffwalk-experiment"),
                 "taxi-experiment": None,
                 "taxi-summary": ("METHODS", "taxi-experiment"),
                 "lottery-summary": ("lottery_q", "lottery-experiment")}),
]


@pytest.mark.parametrize("wrong", WRONG_ANSWERS, ids=lambda wrong: wrong.lesson)
def test_run_all_with_a_wrong_answer_says_in_one_line_what_did_not_run_and_why(wrong):
    notebook = with_figure_checks(smoke_sized(wrong.notebook(), wrong.lesson))
    # the self-check would grade the untouched notebook saved in notebooks/, not this one
    assert name_of(code_cells(notebook)[-1]) == SELF_CHECK_ID
    notebook.cells.remove(code_cells(notebook)[-1])
    execute(notebook, REPO / "notebooks")
    problems = readability_problems(notebook)
    assert not problems, f"{wrong.lesson}:\n\n" + "\n\n".join(problems)
    cells = {name_of(cell): cell for cell in code_cells(notebook)}
    said = {name: stderr_in(cell).strip() for name, cell in cells.items()
            if stderr_in(cell).startswith(NOT_RUN)}
    assert set(said) == set(wrong.stopped) | set(wrong.skipped), said
    answer = f"cell In[{cells[wrong.wrong_cell].execution_count}]"
    for name in wrong.stopped:
        assert said[name].startswith(f"Stopped: {wrong.function} ({answer}, line "), said[name]
        assert wrong.error in said[name], said[name]
    for name, needs in wrong.skipped.items():
        if needs is None:
            assert said[name].startswith("Skipped: this experiment needs code that is not "
                                         "written yet"), said[name]
            continue
        needed, maker = needs
        assert said[name].startswith(
            f"Skipped: this cell needs {needed}, which the experiment in cell "
            f"In[{cells[maker].execution_count}] did not make"), said[name]
