"""The student edition: answers stay with the instructor, and every lesson still works.

Lessons 01-03 are published into a fresh folder, as an instructor starting a course
would, and the edition is read and run the way a student would use it.
"""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from grader.lessons import all_lessons
from grader.publish import CannotPublish, plan, student_notebook
from grader.rebuild import is_answer, is_test, nbgrader_meta
from test_notebooks_execute import (code_cells, describe_error, errors_in, is_experiment,
                                    run_all_problems)

pytestmark = [pytest.mark.xdist_group('edition'), pytest.mark.notebooks]

REPO = Path(__file__).resolve().parent.parent
PUBLISHED = ("01_qlearning", "02_replay_buffer", "03_prioritized_replay")
URL = "https://github.com/an-instructor/experience-replay-students"
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.DOTALL)
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.DOTALL)


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("edition") / "students"
    completed = subprocess.run([sys.executable, "-m", "grader", "publish", str(out),
                                "--lessons", ",".join(name[:2] for name in PUBLISHED),
                                "--repository-url", URL],
                               cwd=REPO, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr
    return out


def lines_of(text):
    return {line.strip() for line in text.splitlines() if line.strip()}


def function_bodies(module_path):
    """The lines of every function's body in a module, docstrings left out."""
    source = module_path.read_text()
    tree = ast.parse(source)
    body_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            statements = node.body
            if (statements and isinstance(statements[0], ast.Expr)
                    and isinstance(statements[0].value, ast.Constant)):
                statements = statements[1:]
            for statement in statements:
                body_lines |= lines_of(ast.get_source_segment(source, statement) or "")
    return body_lines


def public_code():
    """Lines any student may see anyway: the course's helpers and checks, the released
    student notebooks (given code, stubs, visible tests), and the code of lessons this
    edition does not ask for."""
    seen = set()
    for path in [*(REPO / "course").glob("*.py"), *(REPO / "checks").glob("*.py")]:
        seen |= lines_of(path.read_text())
    for lesson in all_lessons().values():
        student = nbformat.read(REPO / "notebooks" / f"{lesson.name}.ipynb", as_version=4)
        for cell in student.cells:
            seen |= lines_of(cell.source)
        if lesson.name not in PUBLISHED:
            for cell in lesson.source().cells:
                seen |= lines_of(cell.source)
        if lesson.exports_to and lesson.name not in PUBLISHED:
            seen |= lines_of((REPO / lesson.exports_to).read_text())
    return seen


def secret_lines():
    """What must not be in the edition: the lines of the published lessons' solution
    regions, hidden tests and reference functions that are not public anyway."""
    secrets = set()
    for name in PUBLISHED:
        lesson = all_lessons()[name]
        for cell in lesson.source().cells:
            for region in SOLUTION.findall(cell.source) + HIDDEN.findall(cell.source):
                secrets |= lines_of(region)
        secrets |= function_bodies(REPO / lesson.exports_to)
    return {line for line in secrets - public_code()
            if len(line) > 12 and not line.startswith("#")}


def test_the_edition_holds_no_answer_of_a_published_lesson(edition):
    secrets = secret_lines()
    assert len(secrets) > 60  # the test has something to look for (solution regions and
    # reference bodies: test cells have no hidden regions any more)
    found = {}
    for path in edition.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            if path.suffix == ".ipynb":  # cell sources are JSON strings there
                text = "\n".join("".join(cell["source"])
                                 for cell in json.loads(text)["cells"])
            leaked = secrets & lines_of(text)
            if leaked:
                found[str(path.relative_to(edition))] = sorted(leaked)[:3]
    assert found == {}


def test_the_edition_holds_no_grader_solutions_tests_or_examples(edition):
    top = sorted(path.name for path in edition.iterdir())
    for private in ("solutions", "grader", "tests", "examples", "benchmarks", ".ci"):
        assert private not in top
    assert not list(edition.rglob("published_references.json"))[0].read_text().count(
        "BEGIN SOLUTION")
    # lesson 01-03's modules load the student's own notebooks; 04-06's are released
    for name in PUBLISHED:
        module = edition / all_lessons()[name].exports_to
        assert "exports_of" in module.read_text() and len(module.read_text()) < 600
    for name in ("04_hindsight_replay", "05_combined_replay"):
        module = all_lessons()[name].exports_to
        assert (edition / module).read_text() == (REPO / module).read_text()


def execute_in(notebook, folder):
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "GRADER_SALT")}
    client = NotebookClient(notebook, kernel_name="python3", timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    client.execute(env=environment)  # the kernel finds the course from its folder only
    return notebook


WHERE_FROM = nbformat.v4.new_code_cell(
    "import checks, course, qlearning, importlib.util\n"
    "print(checks.__file__, course.__file__, qlearning.__file__, "
    "importlib.util.find_spec('grader'))")


def imported_from(notebook):
    return "".join(output.get("text", "") for output in notebook.cells[-1].outputs)


@pytest.mark.parametrize("name", PUBLISHED)
def test_every_published_notebook_fails_only_where_work_is_missing(edition, name):
    notebook = nbformat.read(edition / "notebooks" / f"{name}.ipynb", as_version=4)
    notebook.cells.append(WHERE_FROM)
    execute_in(notebook, edition / "notebooks")
    origin = imported_from(notebook)
    assert origin.count(str(edition)) == 3 and "None" in origin, origin
    problems = run_all_problems(notebook)
    assert not problems, "\n\n".join(problems)
    # the edition has no grader: its self-check cell says so instead of failing
    assert "does not include" in "".join(
        output.get("text", "") for output in code_cells(notebook)[-2].outputs)


def completed(name):
    """The published notebook with the instructors' answers typed in, experiments left
    out (they only draw), as a student who finished the lesson would have saved it."""
    sys.path.insert(0, str(REPO / "examples"))
    from make_submissions import solution_answers

    answers = solution_answers(name)
    notebook = nbformat.read(REPO / "notebooks" / f"{name}.ipynb", as_version=4)
    notebook.cells = [cell for cell in notebook.cells if not is_experiment(cell)]
    for cell in notebook.cells:
        if is_answer(cell):
            cell.source = answers[nbgrader_meta(cell)["grade_id"]]
    return notebook


def test_completed_notebooks_pass_every_visible_test_in_the_edition(edition, tmp_path):
    folder = edition / "notebooks"
    for name in PUBLISHED:  # in order: each later lesson imports the earlier ones' work
        nbformat.write(completed(name), folder / f"{name}.ipynb")
    problems = []
    for name in PUBLISHED:
        notebook = nbformat.read(folder / f"{name}.ipynb", as_version=4)
        notebook.cells.append(WHERE_FROM)
        execute_in(notebook, folder)
        assert imported_from(notebook).count(str(edition)) == 3
        for cell in code_cells(notebook)[:-1]:
            problems += [f"{name}: {describe_error(cell, error)}"
                         for error in errors_in(cell)]
            if is_test(cell):
                printed = "".join(output.get("text", "") for output in cell.outputs)
                if "\u2713" not in printed:
                    problems.append(f"{name}: {nbgrader_meta(cell)['grade_id']} printed no "
                                    "\u2713 line")
    assert not problems, "\n\n".join(problems)


def test_a_later_lesson_names_the_unfinished_earlier_lesson_it_runs(edition, tmp_path):
    # lesson 01 as published (every answer a stub), lesson 02 finished: lesson 02's
    # learning test runs the student's own lesson 01 agent, and says that is what is
    # unfinished, not the loop it called
    copy = tmp_path / "students"
    shutil.copytree(edition, copy)
    folder = copy / "notebooks"
    nbformat.write(student_notebook(all_lessons()["01_qlearning"], URL),
                   folder / "01_qlearning.ipynb")
    notebook = execute_in(completed("02_replay_buffer"), folder)
    cell = next(cell for cell in code_cells(notebook)
                if nbgrader_meta(cell).get("grade_id") == "test_replay_learning")
    printed = "".join(output.get("text", "") for output in cell.outputs)
    assert ("play_and_train_with_replay(env, agent, replay, 8) did not run to the end: the "
            "NotImplementedError comes from QLearningAgent.get_action of lesson 01, which is "
            "not written yet.") in printed, printed


def test_a_lesson_that_needs_an_unanswered_lessons_module_is_refused():
    with pytest.raises(CannotPublish, match="--release-references 01"):
        plan(["02"], release_references=[])
    published, released = plan(["02"], release_references=["01"])
    assert [lesson.name for lesson in released] == ["01_qlearning"]
    published, released = plan(["02"])  # by default what is not published is released
    assert "01_qlearning" in [lesson.name for lesson in released]
