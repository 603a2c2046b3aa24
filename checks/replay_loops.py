"""Training loops with replay under test (lessons 02 and 05): what a probe lends them, and
what their runs say.

A loop is lent a :class:`RecordingBuffer`, which records what it stores and hands out
transitions in a pattern, so that the verdict can tell replayed updates from the step's
own; :func:`sampled_before_storing` reads from its records whether the loop sampled before
it stored. A learning check's buffer is driven by the course's loop or, in the student
edition, by the student's own: :func:`driven_by` says which.
"""

import numpy as np

from checks.framework import NotWrittenYet, ProbeError
from checks.lending import STAND_IN_BATCH, Served
from checks.records import Record
from checks.stub_envs import call_training_loop


class RecordingBuffer:
    """Stands in for a replay buffer: records adds, and hands out older transitions, in a
    pattern, so the verdict can tell replayed updates from updates on the new step.
    Served to the student's loop: ``sample`` and ``len`` answer across, ``add`` is queued.
    """

    __lending__ = Served(remote=("sample", "__len__"), deferred=("add",),
                         limits={"sample": {"batch_size": STAND_IN_BATCH}})

    def __init__(self, newest_alone_first=False, size=None):
        # newest_alone_first: with one transition stored, a batch is that one alone (a
        # combined buffer's, lesson 05): a loop learns from the rows it gets, not
        # batch_size of them. size: len stops growing there, as a full buffer's does
        self.newest_alone_first, self.size = newest_alone_first, size
        self.added = Record("add")
        self.flags_not_bool = Record("add")  # each done given that is not a bool, shown
        self.returned = Record("sample")  # the rows of each sampled batch
        self.held_when_sampled = Record("sample")  # len(self) at each sample call

    @property
    def sampled_empty(self):
        """Whether the last sample call found nothing stored (and refused it)."""
        return bool(self.held_when_sampled) and self.held_when_sampled[-1] == 0

    def __len__(self):
        return len(self.added) if self.size is None else min(self.size, len(self.added))

    def add(self, obs_t, action, reward, obs_tp1, done):
        if not isinstance(done, (bool, np.bool_)):
            self.flags_not_bool.append(f"{done!r} ({type(done).__name__})")
        self.added.append([int(obs_t), int(action), float(reward), int(obs_tp1), bool(done)])

    def sample(self, batch_size):
        self.held_when_sampled.append(len(self.added))
        if not self.added:
            raise ValueError("sample() on an empty buffer: add the transition first")
        start = 3 * len(self.returned)
        count = 1 if self.newest_alone_first and len(self.added) == 1 else batch_size
        rows = [self.added[(start + j) % len(self.added)] for j in range(count)]
        self.returned.append(rows)
        return tuple(np.array(column) for column in zip(*rows))


# The corridor's rewards in the replay loops' checks: fractions, so that a loop that casts
# a reward or the total (int(...)), or a replayed row's, is caught
LOOP_REWARDS = {"step_reward": -0.75, "goal_reward": 10.25}


def replay_loop_inputs(rng):
    """A corridor, its time limit and a batch size: for lesson 02's loop and for lesson
    05's, which learns only from replay."""
    length = int(rng.integers(3, 7))
    return {"length": length, "time_limit": int(rng.integers(length + 2, length + 8)),
            "batch_size": int(rng.integers(2, 9))}


def call_replay_loop(description, loop, env, agent, buffer, *args, **kwargs):
    """:func:`~checks.stub_envs.call_training_loop` for a loop lent a
    :class:`RecordingBuffer`: a loop that samples before it stores fails on the first
    step, when the buffer refuses to sample nothing; that returns ``{"sampled_empty":
    what}``, for the verdict to name the rule, instead of stopping the check."""
    try:
        return call_training_loop(description, loop, env, agent, buffer, *args, **kwargs)
    except NotWrittenYet:
        raise
    except ProbeError as error:
        if not (isinstance(buffer, RecordingBuffer) and buffer.sampled_empty):
            raise
        return {"sampled_empty": str(error)}


def sampled_before_storing(run, steps, returned="returned"):
    """Feedback when a loop's run (a :class:`RecordingBuffer`'s ``held_when_sampled``, and
    what :func:`call_replay_loop` returned under ``returned``) sampled before storing the
    step's transition; None if it never did."""
    if isinstance(run.get(returned), dict) and "sampled_empty" in run[returned]:
        return (f"{run[returned]['sampled_empty']}: the first step sampled the buffer "
                "before storing its transition. Store the step's transition, then sample.")
    for step, held in enumerate(run.get("held_when_sampled", [])[:steps], start=1):
        if held < step:
            return (f"step {step} sampled the buffer while it held {held} transition(s), "
                    f"before storing the step's own: store the step's transition, then "
                    "sample.")
    return None


def driven_by(data):
    """Whose loop drove the buffer, as the feedback and the figure say it."""
    return ("your buffer, driven by your own loop" if data.get("loop") == "yours"
            else "your buffer, driven by the course's loop")


def stored_transitions_problem(added, length, goal_reward=10.0, step_reward=-1.0):
    """What is wrong with the transitions ``added`` (rows a :class:`RecordingBuffer`
    recorded) that a loop stored while playing one episode of a corridor of ``length``
    from its start, in words, or None: each must be the step's own (state, action,
    reward, next state), in order (whether done is terminated is judged apart)."""
    state = 0
    for step, row in enumerate(added, 1):
        action = row[1]
        following = min(length, state + action)
        reward = goal_reward if following == length else step_reward
        want = [state, action, reward, following]
        if list(row[:4]) != want:
            return (f"step {step} stored (state, action, reward, next_state) = "
                    f"{tuple(row[:4])}, but that step of the corridor went "
                    f"{tuple(want)}: store each step's own transition, the state it started "
                    "from and the one it reached.")
        state = following
    return None

