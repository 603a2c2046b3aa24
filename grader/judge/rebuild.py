"""Rebuild a submission from the source notebook: only the answer cells are the student's.

Every other cell (setup, given code, tests) and all metadata (points, grade ids) come
from ``solutions/``, so a student who edits a test, its points or its metadata changes
nothing. Answer cells are matched by nbgrader ``grade_id``; a missing one is taken from
the released stub, so it counts as unanswered. Written answers (nbgrader's manually
graded markdown cells) are carried over the same way, for a person to grade.
"""

from dataclasses import dataclass, field

import nbformat

from grader.judge.student_notebook import student_version
from grader.judge.submission_file import Submission
from grader.nbgrader_cells import is_answer, is_manually_graded, is_test, nbgrader_meta
from grader.results import WrittenAnswer

EXPERIMENT_TAG = "experiment"  # given cells the grader skips: plots, long experiments
VISIBLE_TESTS_TAG = "visible-tests"  # the cell that loads the checks: never in a sandbox


@dataclass
class Rebuilt:
    notebook: nbformat.NotebookNode
    unanswered: list = field(default_factory=list)  # grade_ids left as the stub or missing
    missing: list = field(default_factory=list)  # grade_ids not found in the submission
    written: list = field(default_factory=list)  # WrittenAnswer, for manual grading


def rebuild(source, submission, stubs=None):
    """The notebook to grade: ``source`` with the submission's answer cells put in.

    ``submission`` is a :class:`~grader.judge.submission_file.Submission`, a notebook, or
    None (nothing readable was submitted). ``stubs`` (``{grade_id: source}`` of the answer
    cells as released, :func:`grader.lessons.answer_stubs`) saves making the student
    version of ``source`` again."""
    if submission is not None and not isinstance(submission, Submission):
        submission = Submission.from_notebook(submission)
    if stubs is None:
        stubs = {nbgrader_meta(c)["grade_id"]: c.source for c in student_version(source).cells
                 if is_answer(c) or is_manually_graded(c)}
    answers = submission.code if submission is not None else {}
    written = submission.written if submission is not None else {}
    notebook = nbformat.from_dict(source)  # a deep copy
    result = Rebuilt(notebook)
    for cell in notebook.cells:
        if not (is_answer(cell) or is_manually_graded(cell)):
            continue
        grade_id = nbgrader_meta(cell)["grade_id"]
        sent = answers if is_answer(cell) else written
        if grade_id not in sent:
            result.missing.append(grade_id)
        cell.source = sent.get(grade_id, stubs[grade_id])
        answered = cell.source.strip() != stubs[grade_id].strip()
        if not answered:
            result.unanswered.append(grade_id)
        if is_manually_graded(cell):
            result.written.append(WrittenAnswer(grade_id, float(nbgrader_meta(cell).get(
                "points", 0)), cell.source, answered))
    return result


def cells_to_run(notebook):
    """The code cells a student's process runs, in order: everything but tests,
    experiments and the cell that loads the visible tests.

    Test cells are replaced by probes run from outside, experiments only make plots for
    the student, and the checks are the grader's business: they are not in the sandbox.
    """
    return [cell for cell in notebook.cells
            if cell.cell_type == "code" and not is_test(cell)
            and not {EXPERIMENT_TAG, VISIBLE_TESTS_TAG} & set(cell.metadata.get("tags", []))]
