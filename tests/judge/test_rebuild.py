"""The notebook the grader grades is the source notebook with the submission's answer cells
put in (grader/judge/rebuild.py): nothing else a student edits reaches it, an answer cell
missing from the submission is the released stub and counts as unanswered, written
answers are carried over for a person to grade, and the cells a student's process runs
leave out the tests, the experiments and the cell that loads the checks.

Submissions are the released student notebooks with the instructors' answers filled in
(tests/submission_factory.py), edited as a student's editor might edit them.
"""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.judge.rebuild import cells_to_run, rebuild
from grader.judge.submission_file import read_submission
from grader.lessons import all_lessons, answer_stubs, solution_answers
from grader.nbgrader_cells import (autograded_cells, is_answer, is_manually_graded, is_test,
                                   nbgrader_meta)
from grader.results import WrittenAnswer
from submission_factory import submission, write_submission

LESSON = "02_replay_buffer"
WRITTEN_LESSON = "06_capstone"  # its conclusion is a written answer, graded by a person
# submission(lesson, None): the instructors' answers in every answer cell
MY_SAMPLE = ("def sample(self, batch_size):\n"
             "    return self._storage[-batch_size:]  # the student's own, wrong, answer\n")


def source(lesson=LESSON):
    return all_lessons()[lesson].source()


def grade_id(cell):
    return nbgrader_meta(cell).get("grade_id")


def cell(notebook, name):
    (found,) = [cell for cell in notebook.cells if grade_id(cell) == name]
    return found


def answer_ids(notebook):
    return [grade_id(cell) for cell in notebook.cells if is_answer(cell)]


def rebuilt(notebook, lesson=LESSON):
    return rebuild(source(lesson), notebook, stubs=answer_stubs(lesson))


def test_only_the_answer_cells_come_from_the_submission():
    mine = submission(LESSON, {"buffer_sample": MY_SAMPLE})
    test = cell(mine, "test_fifo_eviction")
    test.source = "pass  # tests removed"
    test.metadata.nbgrader["points"] = 100
    cell(mine, "setup").source = "import os; os.environ['GRADER_SALT'] = 'guessed'"
    mine.cells.insert(0, new_code_cell("print('a cell of my own')"))
    del mine.cells[-1]  # the self-check
    original = source()
    result = rebuilt(mine)
    assert result.unanswered == [] and result.missing == [] and result.written == []
    assert len(result.notebook.cells) == len(original.cells)
    answers = solution_answers(LESSON)
    for given, graded in zip(original.cells, result.notebook.cells):
        assert graded.cell_type == given.cell_type and graded.metadata == given.metadata
        if is_answer(given):
            name = grade_id(given)
            assert graded.source == (MY_SAMPLE if name == "buffer_sample" else answers[name])
        else:
            assert graded.source == given.source


def test_a_test_cell_dressed_as_an_answer_in_the_submission_changes_nothing():
    mine = submission(LESSON, None)
    test = cell(mine, "test_fifo_eviction")
    test.metadata.nbgrader.update(solution=True, grade=False, points=0)
    test.source = "pass"
    result = rebuilt(mine)
    assert cell(result.notebook, "test_fifo_eviction") == cell(source(), "test_fifo_eviction")
    assert result.unanswered == [] and "test_fifo_eviction" not in result.missing


def test_the_source_notebook_is_left_as_it_was():
    original = source()
    before = nbformat.writes(original)
    rebuild(original, submission(LESSON, {"buffer_sample": MY_SAMPLE}), answer_stubs(LESSON))
    unchanged = nbformat.writes(original) == before  # (a diff of two notebooks is slow)
    assert unchanged, "rebuild changed the source notebook it was given"


def test_a_missing_answer_cell_is_the_released_stub_and_counts_as_unanswered():
    mine = submission(LESSON, None)
    mine.cells.remove(cell(mine, "buffer_sample"))
    cell(mine, "buffer_add").source = "\n" + answer_stubs(LESSON)["buffer_add"] + "\n\n"
    result = rebuilt(mine)
    assert result.missing == ["buffer_sample"]
    assert result.unanswered == ["buffer_add", "buffer_sample"]  # in the notebook's order
    assert cell(result.notebook, "buffer_sample").source == answer_stubs(LESSON)["buffer_sample"]
    assert "### BEGIN SOLUTION" not in "".join(cell.source for cell in result.notebook.cells
                                                if is_answer(cell))


def test_nothing_readable_submitted_is_every_answer_unanswered():
    result = rebuilt(None)
    names = answer_ids(source())
    assert result.missing == names and result.unanswered == names
    stubs = answer_stubs(LESSON)
    assert all(cell(result.notebook, name).source == stubs[name] for name in names)


def test_an_answer_read_from_the_file_is_the_one_rebuilt(tmp_path):
    path = write_submission(tmp_path, LESSON, {"buffer_sample": MY_SAMPLE})
    from_file = rebuilt(read_submission(path))
    assert cell(from_file.notebook, "buffer_sample").source == MY_SAMPLE
    assert from_file.notebook == rebuilt(nbformat.read(path, as_version=4)).notebook


def test_the_stubs_are_made_from_the_source_when_not_given():
    mine = submission(LESSON, {"buffer_add": answer_stubs(LESSON)["buffer_add"]})
    mine.cells.remove(cell(mine, "buffer_sample"))
    made, given = rebuild(source(), mine), rebuilt(mine)
    assert made.notebook == given.notebook
    assert (made.unanswered, made.missing) == (given.unanswered, given.missing) == (
        ["buffer_add", "buffer_sample"], ["buffer_sample"])


@pytest.mark.parametrize("text, answered", [
    ("Replay helps through reuse: the same transitions teach many updates.", True),
    (None, False),  # left as released
], ids=["written", "as released"])
def test_a_written_answer_is_carried_over_for_a_person(text, answered):
    lesson = WRITTEN_LESSON
    stub = answer_stubs(lesson)["conclusion"]
    mine = submission(lesson, {"conclusion": text if text is not None else stub})
    result = rebuilt(mine, lesson)
    points = float(nbgrader_meta(cell(source(lesson), "conclusion"))["points"])
    assert result.written == [WrittenAnswer("conclusion", points, text or stub, answered)]
    graded = cell(result.notebook, "conclusion")
    assert graded.cell_type == "markdown" and graded.source == (text or stub)
    assert ("conclusion" in result.unanswered) is not answered


def test_a_written_answer_missing_from_the_submission_awaits_a_person_unanswered():
    lesson = WRITTEN_LESSON
    mine = submission(lesson, None)
    mine.cells.remove(cell(mine, "conclusion"))
    result = rebuilt(mine, lesson)
    assert result.missing == ["conclusion"] and result.unanswered == ["conclusion"]
    (written,) = result.written
    assert written.id == "conclusion" and not written.answered
    assert written.answer == answer_stubs(lesson)["conclusion"]


def a_notebook_of_every_kind_of_cell():
    def graded(cell, **nbgrader):
        cell.metadata["nbgrader"] = nbgrader
        return cell

    return new_notebook(cells=[
        new_markdown_cell("# A lesson"),
        graded(new_code_cell("import numpy"), grade_id="setup", locked=True),
        new_code_cell("from checks import lesson_checks", metadata={"tags": ["visible-tests"]}),
        graded(new_code_cell("def f(): ..."), grade_id="answer", solution=True, grade=False),
        graded(new_code_cell("lesson_checks.run('test_f')"), grade_id="test_f", grade=True,
               points=2),
        new_code_cell("plot(f)", metadata={"tags": ["experiment", "other"]}),
        graded(new_markdown_cell("Why?"), grade_id="why", solution=True, grade=True,
               points=3),
        graded(new_code_cell("x = f()"), grade_id="given"),
        new_code_cell("y = 1", metadata={"nbgrader": None}),  # odd metadata: plain code
        new_code_cell("z = 2", metadata={"nbgrader": ["solution"]}),
    ])


def test_the_cells_a_students_process_runs_leave_out_tests_experiments_and_the_checks():
    notebook = a_notebook_of_every_kind_of_cell()
    assert [cell.source for cell in cells_to_run(notebook)] == [
        "import numpy", "def f(): ...", "x = f()", "y = 1", "z = 2"]
    assert [cell.source for cell in autograded_cells(notebook)] == [
        "lesson_checks.run('test_f')"]


def test_each_cell_is_one_kind_only():
    kinds = [(is_answer(cell), is_test(cell), is_manually_graded(cell))
             for cell in a_notebook_of_every_kind_of_cell().cells]
    assert kinds == [(False, False, False), (False, False, False), (False, False, False),
                     (True, False, False), (False, True, False), (False, False, False),
                     (False, False, True), (False, False, False), (False, False, False),
                     (False, False, False)]


@pytest.mark.parametrize("lesson", sorted(all_lessons()))
def test_every_lessons_answers_run_and_its_tests_never_do(lesson):
    notebook = source(lesson)
    runs = cells_to_run(notebook)
    tests = autograded_cells(notebook)
    assert tests and set(answer_ids(notebook)) <= {grade_id(cell) for cell in runs}
    running = {id(cell) for cell in runs}
    assert not any(id(cell) in running for cell in tests)
    assert all("experiment" not in cell.metadata.get("tags", []) for cell in runs)
    assert [cell for cell in notebook.cells if id(cell) in running] == runs  # in order
