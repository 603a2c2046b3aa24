"""Faults in a submission cost only the checks they touch, with feedback that says so."""

import resource
from pathlib import Path

import nbformat
import pytest

import grader.judge.grade_notebook as grade_notebook_module
from attacks import OBJECT_HEAVY_FRAME, OVERSIZED_FRAME
from grader.nbgrader_cells import is_test, nbgrader_meta
from submission_factory import (QUICK_CHECKS, as_json, feedback, grade, solution_answers,
                                statuses, write_submission)

LESSON_01_QUICK = QUICK_CHECKS["01_qlearning"]


def all_passed_except(result, *failing):
    return {name for name, status in statuses(result).items() if status != "passed"} == \
        set(failing)


def test_instructors_answers_get_full_marks_on_the_quick_checks(tmp_path):
    result = grade(write_submission(tmp_path, "01_qlearning"))
    assert result.score == result.max_score == 10.0
    assert all_passed_except(result)


def test_a_syntax_error_costs_only_the_checks_that_need_its_cell(tmp_path):
    broken = "#| export\n@add_to_class(QLearningAgent)\ndef get_action(self, state)\n    return 0"
    result = grade(write_submission(tmp_path, "01_qlearning", {"get_action": broken}))
    assert all_passed_except(result, "test_epsilon_greedy")
    assert "SyntaxError" in feedback(result, "test_epsilon_greedy")
    assert any("get_action" in note and "SyntaxError" in note for note in result.notes)


def test_an_infinite_loop_at_the_top_of_a_cell_is_stopped_and_reported(tmp_path):
    looping = ("#| export\n@add_to_class(QLearningAgent)\ndef get_value(self, state):\n"
               "    return max(self.get_qvalue(state, a) for a in self.get_legal_actions(state))"
               "\n\nwhile True:\n    pass")
    result = grade(write_submission(tmp_path, "01_qlearning", {"get_value": looping}),
                   cell_time_limit=3.0)
    assert all_passed_except(result)  # the function was defined before the loop began
    assert any("used its whole budget of 3 s of CPU time" in note for note in result.notes)


def test_an_infinite_loop_inside_a_method_times_out_that_check_only(tmp_path):
    looping = ("#| export\ndef play_and_train(env, agent, t_max=10_000):\n"
               "    while True:\n        pass")
    result = grade(write_submission(tmp_path, "01_qlearning", {"play_and_train": looping}),
                   check_time_limit=3.0)
    assert statuses(result)["test_play_and_train"] == "timeout", \
        (feedback(result, "test_play_and_train"), result.notes)
    assert all_passed_except(result, "test_play_and_train")
    assert "used its whole budget of 3 s of CPU time" in feedback(result, "test_play_and_train")


def test_a_notebook_that_loops_in_every_check_stops_at_its_total_budget(tmp_path,
                                                                      monkeypatch):
    # each check within its own budget, the notebook as a whole within its total: what
    # one notebook can cost is a number, however many checks it makes spend their budget
    # 5 s: the cells and the first looping check spend more than 3, so test_update, the
    # second, is given less than its own 3 s or nothing, whatever the machine's speed
    monkeypatch.setattr(grade_notebook_module, "NOTEBOOK_CPU_LIMIT", 5.0)
    looping = ("#| export\n@add_to_class(QLearningAgent)\ndef get_value(self, state):\n"
               "    while True:\n        pass")
    result = grade(write_submission(tmp_path, "01_qlearning", {"get_value": looping}),
                   check_time_limit=3.0)
    said = [(check.status, check.usage, check.feedback[:120]) for check in result.checks]
    assert said[0][0] == "timeout", said  # its own 3 s first
    # a check is given what is left of the total, not its own 3 s, and once nothing is
    # left the checks after it are not attempted
    cut = [check for check in result.checks if check.feedback.startswith(
        "not graded: the notebook used its whole budget (5 s of CPU time") or (
        check.status == "timeout" and check.usage["cpu_seconds"] < 2.9)]
    assert cut, said
    used = sum(check.usage["cpu_seconds"] for check in result.checks if check.usage)
    assert used <= 5.0 + 0.5, said  # within the total (a budget is checked as it is spent)


def test_a_memory_bomb_hits_the_cap_and_costs_its_check(tmp_path):
    bomb = ("#| export\n@add_to_class(QLearningAgent)\n"
            "def get_best_action(self, state):\n"
            "    hoard = [bytearray(2**28) for _ in range(64)]  # 16 GiB\n"
            "    return 0")
    result = grade(write_submission(tmp_path, "01_qlearning", {"get_best_action": bomb}),
                   memory_mb=2048)
    assert all_passed_except(result, "test_value_and_best_action", "test_best_action_ties",
                             "test_epsilon_greedy")
    assert "MemoryError" in feedback(result, "test_value_and_best_action")
    assert statuses(result)["test_update"] == "passed"


def test_a_kernel_that_exits_is_restarted_for_the_remaining_checks(tmp_path):
    exits = ("#| export\n@add_to_class(QLearningAgent)\n"
             "def update(self, state, action, reward, next_state, terminated):\n"
             "    import os\n    os._exit(3)")
    result = grade(write_submission(tmp_path, "01_qlearning", {"update": exits}))
    assert all_passed_except(result, "test_update")
    assert "process died" in feedback(result, "test_update")
    assert statuses(result)["test_play_and_train"] == "passed"  # graded after the restart


def remove_test_cells_and_inflate_points(notebook):
    notebook.cells = [cell for cell in notebook.cells if not is_test(cell)]
    for cell in notebook.cells:
        if "nbgrader" in cell.metadata:
            cell.metadata["nbgrader"]["points"] = 1000
            cell.metadata["nbgrader"]["grade"] = True


def test_deleted_tests_and_edited_metadata_change_nothing(tmp_path):
    result = grade(write_submission(tmp_path, "01_qlearning",
                                    edit=remove_test_cells_and_inflate_points))
    assert result.max_score == 10.0 and result.score == 10.0


def test_a_missing_answer_cell_counts_as_unanswered(tmp_path):
    def drop_update(notebook):
        notebook.cells = [cell for cell in notebook.cells
                          if nbgrader_meta(cell).get("grade_id") != "update"]

    result = grade(write_submission(tmp_path, "01_qlearning", edit=drop_update))
    assert all_passed_except(result, "test_update")
    assert "not written yet" in feedback(result, "test_update")
    assert any("missing" in note and "update" in note for note in result.notes)


def test_an_unreadable_notebook_scores_zero_with_a_reason(tmp_path):
    path = Path(tmp_path) / "student" / "01_qlearning.ipynb"
    path.parent.mkdir()
    path.write_text("{ this is not a notebook")
    result = grade(path)
    assert result.score == 0 and result.max_score == 10.0
    assert any("could not be read" in note for note in result.notes)


def test_an_empty_notebook_file_says_it_is_empty(tmp_path):
    path = Path(tmp_path) / "student" / "01_qlearning.ipynb"
    path.parent.mkdir()
    path.write_bytes(b"")
    result = grade(path)
    assert result.score == 0
    assert "The notebook could not be read: the file is empty." in result.notes, result.notes


def test_warnings_on_stderr_cost_nothing(tmp_path):
    noisy = ("#| export\n@add_to_class(QLearningAgent)\ndef get_value(self, state):\n"
             "    import sys, warnings\n"
             "    warnings.warn('a noisy but correct answer')\n"
             "    print('debugging output', file=sys.stderr)\n"
             "    return max(self.get_qvalue(state, a) for a in self.get_legal_actions(state))")
    result = grade(write_submission(tmp_path, "01_qlearning", {"get_value": noisy}))
    assert all_passed_except(result)


def test_the_same_submission_and_salt_give_the_same_report(tmp_path):
    path = write_submission(tmp_path, "02_replay_buffer")
    assert as_json(grade(path)) == as_json(grade(path))


def test_unanswered_notebook_scores_zero_and_every_check_says_why(tmp_path):
    path = Path(tmp_path) / "student" / "02_replay_buffer.ipynb"
    path.parent.mkdir()
    fresh = nbformat.read(Path(__file__).resolve().parents[2] / "notebooks" / path.name, 4)
    nbformat.write(fresh, path)
    result = grade(path)
    assert result.score == 0
    assert all("not written yet" in check.feedback for check in result.checks)


@pytest.mark.parametrize("lesson", sorted(QUICK_CHECKS))
def test_student_added_cells_are_not_run(tmp_path, lesson):
    def add_a_cell_that_breaks_everything(notebook):
        notebook.cells.append(nbformat.v4.new_code_cell("raise SystemExit('gone')"))
        notebook.cells.insert(3, nbformat.v4.new_code_cell("import os; os._exit(1)"))

    result = grade(write_submission(tmp_path, lesson, edit=add_a_cell_that_breaks_everything))
    assert result.score == result.automatic_max_score


# --- answers and frames too large for the grader ------------------------------------------

def sample_that_runs(code):
    """Lesson 02's sample, which runs ``code`` (a block ending in a return or not) when
    asked for one transition from a buffer of one: only test_sample_errors asks that."""
    honest = solution_answers("02_replay_buffer")["buffer_sample"]
    block = "\n".join("        " + line for line in code.strip().splitlines())
    return (f"{honest}\n\n_honest_sample = ReplayBuffer.sample\n\n\n"
            f"def _sample(self, batch_size):\n    if batch_size == 1 and len(self) == 1:\n"
            f"{block}\n    return _honest_sample(self, batch_size)\n\n\n"
            "ReplayBuffer.sample = _sample\n")


def peak_memory_growth(grading):
    """(the result of ``grading()``, how far it raised this process's peak RSS, in MB)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = grading()
    return result, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024


@pytest.mark.parametrize("answer", ["return [[]] * 10**7",  # refused before it is copied
                                    "return [[[]] * 1000] * 1000"])  # refused once written
def test_an_answer_too_large_for_the_grader_costs_only_its_check(tmp_path, answer):
    """The student's server does not send what the grader would refuse: it replies with
    an error that says why, and the process lives on."""
    path = write_submission(tmp_path, "02_replay_buffer",
                            {"buffer_sample": sample_that_runs(answer)})
    result, growth = peak_memory_growth(lambda: grade(path))
    assert all_passed_except(result, "test_sample_errors"), statuses(result)
    assert "too large to send" in feedback(result, "test_sample_errors")
    assert growth < 100, f"the grader's peak memory grew by {growth:.0f} MB"


@pytest.mark.parametrize("attack", ["oversized", "object_heavy"])
def test_a_frame_the_grader_cannot_afford_is_refused_unbuilt(tmp_path, attack):
    """A frame announcing 200 MB is refused after its header; one of 1 MB that would
    become hundreds of thousands of lists, before it is parsed. Either breaks the
    protocol: the check it came in loses, and the next check gets a fresh process."""
    code = {"oversized": OVERSIZED_FRAME, "object_heavy": OBJECT_HEAVY_FRAME}[attack]
    path = write_submission(tmp_path, "02_replay_buffer",
                            {"buffer_sample": code + sample_that_runs("_attack()")})
    # the fresh process imports gymnasium in the next check's time: slow on a busy machine
    result, growth = peak_memory_growth(lambda: grade(path, check_time_limit=30.0))
    assert all_passed_except(result, "test_sample_errors"), statuses(result)
    assert "could not read (a message of" in feedback(result, "test_sample_errors")
    assert ("bytes or more is refused unread" if attack == "oversized" else
            "items (lists, dicts and their elements) is refused unparsed") in \
        feedback(result, "test_sample_errors")
    assert growth < 100, f"the grader's peak memory grew by {growth:.0f} MB"


# A buffer's add goes to the student's process with the next sample (one round trip per
# step): an add that raises is still named as the call that failed.
ADD_FAILS_AT_THE_100TH = '''\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    if len(self._storage) == 99:
        raise ValueError("no room for the 100th")
    self._storage.append(tuple(np.array(x) for x in (obs_t, action, reward, obs_tp1, done)))
'''
ADD_NOT_WRITTEN = '''\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    raise NotImplementedError()
'''


@pytest.mark.parametrize("answer, status, words", [
    (ADD_FAILS_AT_THE_100TH, "error",
     "add(obs_t, action, reward, obs_tp1, done) raised ValueError: no room for the 100th"),
    (ADD_NOT_WRITTEN, "not written",
     "add(obs_t, action, reward, obs_tp1, done) is not written yet")])
def test_a_deferred_call_that_raises_is_reported_as_itself(tmp_path, answer, status, words):
    result = grade(write_submission(tmp_path, "02_replay_buffer", {"buffer_add": answer}),
                   only={"test_replay_learning"}, check_time_limit=60.0)
    assert statuses(result) == {"test_replay_learning": status}
    assert words in feedback(result, "test_replay_learning")
    assert "sample(" not in feedback(result, "test_replay_learning")


# Code that breaks the machinery the grader's own requests run on in the sandbox (a cell's
# run, the seeding before each check): the student's process is stopped as one that broke
# the exchange (a cell that fails so is skipped), and the notebook is graded, never "the
# grader failed on it".
BREAKS_THE_CELL_RUNNER = ("\nimport IPython.core.interactiveshell as _shell\n"
                          "_shell.InteractiveShell.run_cell = lambda self, *args, **kw: {}\n")
BREAKS_THE_SEEDING = "\nimport random as _random\n_random.seed = lambda *args, **kw: 1 / 0\n"


@pytest.mark.parametrize("breaker, words", [
    (BREAKS_THE_CELL_RUNNER, "running a cell failed in there: AttributeError"),
    (BREAKS_THE_SEEDING, "seeding failed in there: ZeroDivisionError")],
    ids=["cell_runner", "seeding"])
def test_code_that_breaks_the_servers_machinery_costs_only_its_notebook(tmp_path, breaker,
                                                                         words):
    update = solution_answers("01_qlearning")["update"] + breaker
    result = grade(write_submission(tmp_path, "01_qlearning", {"update": update}),
                   only={"test_update", "test_epsilon_greedy"})
    assert result.isolation["level"] in {"namespaces", "none"}
    assert len(result.checks) == 2
    said = " ".join([*result.notes, *(check.feedback for check in result.checks)])
    assert words in said and "grader failed" not in said, said
