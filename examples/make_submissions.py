"""Write ``examples/submissions/``: a small class of students, one per kind of submission.

Run ``python examples/make_submissions.py`` after a release; a test fails when the
committed examples differ from what this script writes. Each student's notebooks start
from the released student notebooks, with some answer cells filled in.
"""

import sys
from pathlib import Path

import nbformat

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from grader.nbgrader_cells import is_answer, is_manually_graded, nbgrader_meta  # noqa: E402
from grader.lessons import all_lessons, solution_answers  # noqa: E402

OUTPUT = REPOSITORY / "examples" / "submissions"
LESSONS = tuple(all_lessons())


def solution_with(lesson, grade_id, old, new):
    """The instructors' answer cell ``grade_id`` with ``old`` replaced by ``new``."""
    source = solution_answers(lesson)[grade_id]
    if source.count(old) != 1:
        raise ValueError(f"{lesson}:{grade_id} no longer holds {old!r} exactly once")
    return source.replace(old, new)


# A buffer on a list that evicts from the wrong end: when full, pop() drops the newest.
WRONG_END_EVICTION = '''\
#| export
from collections import deque

import numpy as np

from course.with_update import WithUpdate
from qlearning import play_and_train


class ReplayBuffer:
    """A FIFO store of transitions (obs_t, action, reward, obs_tp1, done)."""

    def __init__(self, size, seed=None):
        self.size = size
        self._storage = []
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self._storage)'''

WRONG_END_ADD = '''\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    """Store one transition, evicting the oldest if the buffer is full. Copies arrays."""
    if len(self._storage) == self.size:
        self._storage.pop()  # bug: pops the newest, not the oldest
    self._storage.append(tuple(np.array(x) for x in (obs_t, action, reward, obs_tp1, done)))'''

IGNORES_TERMINATED = '''\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    """One Q-learning step towards reward + discount * V(next_state)."""
    target = reward + self.discount * self.get_value(next_state)  # bug: always bootstraps
    old = self.get_qvalue(state, action)
    self.set_qvalue(state, action, (1 - self.alpha) * old + self.alpha * target)'''

# Stops only on `terminated`: in an environment where the agent never reaches the goal,
# the episode never ends. A classic bug with gymnasium's five-value step API.
LOOPS_FOREVER = '''\
#| export
def play_and_train(env, agent, t_max=10_000):
    """Play one episode, updating ``agent`` after every step; return the total reward."""
    total_reward = 0.0
    state, _ = env.reset()
    terminated = False
    while not terminated:  # bug: ignores truncated and t_max
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
    return total_reward'''

# Wrong update code, plus every trick that fools plain nbgrader. None of it should help.
TAMPERING_UPDATE = '''\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    """Does nothing useful: the tricks below are meant to pass the tests anyway."""
    self.set_qvalue(state, action, reward)


import numpy as _np
import IPython as _ipython
_np.isclose = lambda *args, **kwargs: True                 # 1. patched numpy helpers
_np.allclose = lambda *args, **kwargs: True
_np.testing.assert_allclose = lambda *args, **kwargs: None
_shell = _ipython.get_ipython()
_shell.set_custom_exc((Exception,), lambda *args, **kwargs: None)   # 2. swallow errors


def _neuter_tests(lines):                                   # 3. rewrite checks as they run
    return ["pass\\n" if ("run(" in line or "probe" in line) else line for line in lines]


_shell.input_transformers_post.append(_neuter_tests)

import checks.lesson01_qlearning as _checks                 # 4. patch the public checks
from checks.framework import passed as _passed
for _check in list(_checks.CHECKS):
    _checks.CHECKS.by_name[_check.name] = type(_check)(
        _check.name, _check.title, _check.needs, _check.make_inputs, _check.probe,
        lambda inputs, data: _passed("forged"))

import glob as _glob, json as _json                         # 5. read the instructor's files
for _path in (_glob.glob("/*/*/solutions/01_qlearning.ipynb")       # the repository
              + _glob.glob("/proc/*/cwd/solutions/01_qlearning.ipynb")  # via the grader
              + _glob.glob("/proc/*/root/*/*/solutions/01_qlearning.ipynb")
              + _glob.glob("/tmp/*/solutions/01_qlearning.ipynb")       # stray copies
              + ["../../solutions/01_qlearning.ipynb", "../solutions/01_qlearning.ipynb"]):
    try:
        _cells = _json.load(open(_path))["cells"]
    except (OSError, ValueError):
        continue
    for _cell in _cells:
        if "BEGIN SOLUTION" in "".join(_cell["source"]):
            exec("".join(_cell["source"]))'''

# A sum tree in float32: its sums drift and its priorities lose digits.
FLOAT32_TREE = solution_with("03_prioritized_replay", "sumtree_class",
                             "dtype=np.float64)", "dtype=np.float32)")

# HER's `future` goals taken from the step before the transition (SB3 issue 847).
FUTURE_FROM_THE_CURRENT_STEP = solution_with("04_hindsight_replay", "hindsight_goal_steps",
                                             "first = steps + 1", "first = steps")

STUDENTS = {
    # student folder: {lesson: {grade_id: code}}, None meaning "the instructors' answers"
    "ada_complete": {lesson: None for lesson in LESSONS},
    "ben_empty": {lesson: {} for lesson in LESSONS},
    # the others hand in the lessons where they went wrong (a learning check of lessons
    # 01 and 02 costs 10-15 s of CPU: answers graded as ada's already would only repeat it)
    "cy_buggy_buffer": {"02_replay_buffer": {"buffer_class": WRONG_END_EVICTION,
                                             "buffer_add": WRONG_END_ADD}},
    "dee_ignores_terminated": {"01_qlearning": {"update": IGNORES_TERMINATED}},
    "eli_infinite_loop": {"01_qlearning": {"play_and_train": LOOPS_FOREVER}},
    "fay_float32_tree": {"03_prioritized_replay": {"sumtree_class": FLOAT32_TREE}},
    "gus_tampers": {"01_qlearning": {"update": TAMPERING_UPDATE}},
    "hal_her_off_by_one": {"04_hindsight_replay": {
        "hindsight_goal_steps": FUTURE_FROM_THE_CURRENT_STEP}},
}


def submission(lesson, answers):
    notebook = nbformat.read(REPOSITORY / "notebooks" / f"{lesson}.ipynb", as_version=4)
    filled = dict(solution_answers(lesson))
    if answers is not None:
        filled = {**filled, **answers} if answers else {}
    for cell in notebook.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if (is_answer(cell) or is_manually_graded(cell)) and grade_id in filled:
            cell.source = filled[grade_id]
    return notebook


def tamper_with_tests(notebook):
    """What a tamperer also does outside answer cells: gut the tests, raise the points."""
    for cell in notebook.cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade"):
            cell.source = "pass  # tests removed"
            meta["points"] = 100
    return notebook


def main(output=OUTPUT):
    for student, lessons in STUDENTS.items():
        for lesson, answers in lessons.items():
            notebook = submission(lesson, answers)
            if student == "gus_tampers":
                tamper_with_tests(notebook)
            path = Path(output) / student / f"{lesson}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, path)
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
