"""Run a lesson's notebook code in this process, with some answer cells replaced.

``namespace_for(lesson, answers)`` is what a student's kernel would hold after running
their notebook top to bottom (tests and experiments skipped): the source notebook's
cells, rebuilt by the grader with ``answers`` (grade_id -> cell source) put in place of
the instructors' answers. Checks then run on it directly with ``LessonChecks.run``,
which is much faster than grading through a kernel.
"""

import sys
from pathlib import Path

import nbformat

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from grader.lessons import all_lessons  # noqa: E402
from grader.rebuild import cells_to_run, is_answer, nbgrader_meta, rebuild  # noqa: E402


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
    rebuilt = rebuild(source, fake_submission(source, answers or {}))
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
