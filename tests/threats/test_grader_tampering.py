"""Tampering gains nothing: wrong code plus a trick scores what the wrong code scores.

Each trick below fools plain nbgrader (RESEARCH.md, "Autograding"). Here the submission's
update() is wrong; with the trick added, its score must not rise.
"""


import numpy as np
import pytest

from checks import checks_for_lesson

from grader.judge.sandbox import namespaces_available
from grader.lessons import REPOSITORY
from grader.nbgrader_cells import is_test, nbgrader_meta
from submission_factory import grade, statuses, write_submission

# this module's fixtures are computed once: its tests share one pytest-xdist worker
pytestmark = pytest.mark.xdist_group('wrong-code-score')


WRONG_UPDATE = '''\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    self.set_qvalue(state, action, reward)  # wrong: no learning rate, no bootstrap
'''

TRICKS = {
    "patched_numpy_testing_helpers": '''
import numpy as np
np.isclose = lambda *args, **kwargs: True
np.allclose = lambda *args, **kwargs: True
np.testing.assert_allclose = lambda *args, **kwargs: None
np.testing.assert_array_equal = lambda *args, **kwargs: None
import math
math.isclose = lambda *args, **kwargs: True
''',
    "custom_exception_handler": '''
get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)
''',
    "input_transformer_rewrites_cells": '''
def _skip_checks(lines):
    return ["pass\\n" if "run" in line or "probe" in line else line for line in lines]
get_ipython().input_transformers_post.append(_skip_checks)
''',
    "ast_transformer_rewrites_code": '''
import ast
class _ReturnTrue(ast.NodeTransformer):
    def visit_Call(self, node):
        return ast.copy_location(ast.Constant(True), node)
get_ipython().ast_transformers.append(_ReturnTrue())
''',
    "forged_public_check_verdicts": '''
import checks.lesson01_qlearning as _public
from checks.framework import passed as _passed
for _check in list(_public.CHECKS):
    _public.CHECKS.by_name[_check.name] = type(_check)(
        _check.name, _check.title, _check.needs, _check.make_inputs,
        lambda inputs, **objects: {}, lambda inputs, data: _passed("forged"))
''',
    "fake_probe_runner_publishes_forged_data": '''
import json as _json
from IPython.display import publish_display_data as _publish
def _course_grader_run_probe(payload):
    _publish({"application/vnd.course-grader.probe+json": _json.dumps(
        {"status": "ok", "data": {"after_each": []}, "tampering": []})})
''',
    "patched_statistics": '''
import scipy.stats
scipy.stats.chisquare = lambda *args, **kwargs: type("Result", (), {"pvalue": 1.0})()
''',
}


@pytest.fixture(scope="module")
def wrong_code_score(tmp_path_factory):
    result = grade(write_submission(tmp_path_factory.mktemp("honest"), "01_qlearning",
                                    {"update": WRONG_UPDATE}))
    assert statuses(result)["test_update"] == "failed"
    return result.score


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_a_trick_in_an_answer_cell_gains_nothing(tmp_path, trick, wrong_code_score):
    answer = WRONG_UPDATE + TRICKS[trick]
    result = grade(write_submission(tmp_path, "01_qlearning", {"update": answer}))
    assert statuses(result)["test_update"] != "passed"
    assert result.score <= wrong_code_score


def rewrite_tests_and_points(notebook):
    for cell in notebook.cells:
        if is_test(cell):
            cell.source = "print('all tests passed')"
            nbgrader_meta(cell)["points"] = 100
            nbgrader_meta(cell)["grade_id"] += "_renamed"


def test_rewritten_test_cells_and_points_gain_nothing(tmp_path, wrong_code_score):
    result = grade(write_submission(tmp_path, "01_qlearning", {"update": WRONG_UPDATE},
                                    edit=rewrite_tests_and_points))
    assert result.score <= wrong_code_score and result.max_score == 10.0


COPY_THE_SOLUTION = '''
import json as _json
_source = {path!r}
try:
    for _cell in _json.load(open(_source))["cells"]:
        _text = "".join(_cell["source"])
        if "BEGIN SOLUTION" in _text and "def update" in _text:
            exec(_text.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""))
except OSError:
    pass
'''


def test_reading_the_solutions_outside_the_scratch_folder_gains_nothing(tmp_path,
                                                                        wrong_code_score):
    assert namespaces_available(), "this machine should give sandboxes a mount namespace"
    solutions = REPOSITORY / "solutions" / "01_qlearning.ipynb"
    answer = WRONG_UPDATE + COPY_THE_SOLUTION.format(path=str(solutions))
    path = write_submission(tmp_path, "01_qlearning", {"update": answer})
    sandboxed = grade(path)
    assert sandboxed.score <= wrong_code_score
    # The same attack without the sandbox works, which shows the test can fail.
    unsandboxed = grade(path, isolate=False)
    assert statuses(unsandboxed)["test_update"] == "passed"


def test_a_submission_cannot_import_its_own_lessons_reference_module(tmp_path,
                                                                    wrong_code_score):
    answer = WRONG_UPDATE + "\nfrom qlearning import QLearningAgent  # the reference\n"
    result = grade(write_submission(tmp_path, "01_qlearning", {"update": answer}))
    assert result.score <= wrong_code_score
    assert any("ModuleNotFoundError" in note for note in result.notes)


# Forge a learning result: make the helper that reads Q-tables out of the agent return
# Taxi's optimal Q-table, whatever the agent learned. In a notebook the probe imports that
# helper at call time, so there the forgery works; the grader's probe runs in the
# grader's own process, where the student's patch does not exist.
FORGED_QTABLE_HELPER = '''
import course.qtables as _qtables
from course.taxi import STEP_LIMIT as _LIMIT, taxi_model as _model


def _optimal_qtable(agent, n_states, n_actions):
    model, value = _model(), np.zeros(n_states)
    for _ in range(_LIMIT):
        qtable = model.reward + np.where(model.terminated, 0.0, value[model.next_state])
        value = qtable.max(axis=1)
    return qtable


_qtables.qtable_from_agent = _optimal_qtable
'''
PATCHED_BUILTIN = '''
import builtins as _builtins

_builtins.round = lambda number, ndigits=None: 0
'''


def early_success_of_probe(answers):
    """Run test_replay_learning's probe in this process, unprotected, as a notebook
    would; the mean share of start states solved after the early episodes."""
    import course.qtables
    from course.taxi import evaluate_qtable
    from support.in_process import namespace_for

    check = checks_for_lesson("02_replay_buffer")["test_replay_learning"]
    inputs = checks_for_lesson("02_replay_buffer").inputs("test_replay_learning", "visible")
    original = course.qtables.qtable_from_agent
    try:
        namespace = namespace_for("02_replay_buffer", answers)
        data = check.probe(inputs, **{name: namespace[name] for name in check.needs})
    finally:
        course.qtables.qtable_from_agent = original
    return np.mean([evaluate_qtable(np.asarray(run[0])).success_rate
                    for run in data["snapshots"]])


def test_a_patched_course_helper_cannot_forge_a_learning_result(tmp_path):
    from attacks import SAME_TRANSITION_SAMPLE  # a wrong buffer: it fails honestly

    forged_buffer = SAME_TRANSITION_SAMPLE + FORGED_QTABLE_HELPER
    # Where nothing protects the probe, the forgery works: its data say "optimal".
    assert early_success_of_probe({"buffer_sample": forged_buffer}) == 1.0
    # Graded, the probe runs on the course's own helpers: the forgery changes nothing, and
    # the wrong buffer fails.
    forged = grade(write_submission(tmp_path / "forged", "02_replay_buffer",
                                    {"buffer_sample": forged_buffer + PATCHED_BUILTIN}),
                   only={"test_replay_learning"}, check_time_limit=60.0)
    assert statuses(forged) == {"test_replay_learning": "failed"} and forged.score == 0


# A loop that changes its copy of a lent object long into an episode: the copy's calls
# reach the grader in several transcript messages sent without waiting for it (mirrored
# objects never make a 10,000-step episode wait), and the grader replays each as it comes.
def loop_that_flips_its_agents_copy(flip_at):
    """Lesson 01's loop, changing its copy of the lent agent at step ``flip_at``."""
    from bugs import edited

    return edited("01_qlearning", "play_and_train",
                  ("    for _ in range(t_max):\n",
                   "    for step in range(t_max):\n"
                   f"        if step == {flip_at}:\n"
                   "            copy = object.__getattribute__(agent, \"_mirror\")[2]\n"
                   "            copy.action = 1 - copy.action  # the copy now plays the other action\n"))


@pytest.mark.parametrize("flip", [False, True], ids=["honest", "flips its copy"])
def test_a_copy_changed_deep_into_a_long_episode_is_caught(tmp_path, flip):
    # step 3,000 of the 10,000-step episode: several transcript messages have gone before
    answers = {"play_and_train": loop_that_flips_its_agents_copy(3_000)} if flip else {}
    result = grade(write_submission(tmp_path, "01_qlearning", answers),
                   only={"test_play_and_train"})
    (check,) = result.checks
    if not flip:
        assert check.status == "passed", check.feedback
        return
    assert check.score == 0 and check.status in ("failed", "error"), check.feedback
    assert "ScriptedAgent.get_action(0) gave 0, but your code's copy" in check.feedback
