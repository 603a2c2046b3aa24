"""Run a lesson's notebook code in this process, with some answer cells replaced.

``namespace_for(lesson, answers)`` is what a student's kernel would hold after running
their notebook top to bottom (tests and experiments skipped): the source notebook's
cells, rebuilt by the grader with ``answers`` (grade_id -> cell source) put in place of
the instructors' answers. Checks then run on it directly with ``LessonChecks.run``,
which is much faster than grading through a kernel.
"""

import ast
import sys
from pathlib import Path

import nbformat

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from checks import checks_for_lesson  # noqa: E402
from grader.judge.rebuild import cells_to_run, rebuild  # noqa: E402
from grader.lessons import all_lessons, answer_stubs  # noqa: E402
from grader.nbgrader_cells import is_answer, nbgrader_meta  # noqa: E402


def answer_cells(notebook):
    """``{grade_id: cell}`` of the notebook's answer cells."""
    return {nbgrader_meta(cell)["grade_id"]: cell for cell in notebook.cells
            if is_answer(cell)}


def fake_submission(source, answers):
    """The source notebook with the sources of the answer cells in ``answers`` replaced."""
    submission = nbformat.from_dict(source)  # a deep copy
    cells = answer_cells(submission)
    unknown = sorted(set(answers) - set(cells))
    if unknown:
        raise KeyError(f"no answer cells with grade_id {unknown}; the notebook has "
                       f"{sorted(cells)}")
    for grade_id, text in answers.items():
        cells[grade_id].source = text
    return submission


def namespace_for(lesson_name, answers=None):
    """The globals of the lesson's notebook after running it with ``answers`` put in."""
    source = all_lessons()[lesson_name].source()
    rebuilt = rebuild(source, fake_submission(source, answers or {}), answer_stubs(lesson_name))
    if rebuilt.unanswered:
        raise ValueError(f"answers left as the released stub: {rebuilt.unanswered}")
    namespace = {"__name__": "__main__"}
    for index, cell in enumerate(cells_to_run(rebuilt.notebook)):
        grade_id = nbgrader_meta(cell).get("grade_id", f"cell {index}")
        code = compile(cell.source, f"<{lesson_name}:{grade_id}>", "exec")
        exec(code, namespace)  # noqa: S102 - the course's own code and our test answers
    return namespace


def solution_answer(lesson_name, grade_id):
    """The instructors' source of one answer cell, a starting point for a variant."""
    return answer_cells(all_lessons()[lesson_name].source())[grade_id].source


def defined_names(source):
    """The names a cell defines: its functions, classes, assignments and imports, and the
    classes it adds methods to with ``@add_to_class``."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
            names.update(decorator.args[0].id for decorator in node.decorator_list
                         if isinstance(decorator, ast.Call) and decorator.args
                         and isinstance(decorator.args[0], ast.Name))
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def checks_running(lesson, answers):
    """The quick checks whose code runs the cells ``answers`` changes (all for none): those
    that need a name the cells define, stand one in, or call it. Any other quick check runs
    only the reference's code, so it gives the reference's outcome."""
    quick = [check for check in checks_for_lesson(lesson) if not check.learning]
    if not answers:
        return [check.name for check in quick]
    changed = set().union(*map(defined_names, answers.values()))
    return [check.name for check in quick
            if changed & {*check.needs, *check.stand_ins,
                          *(callee.defined_as for callee in check.calls)}]
