"""What probes hand to the student's training loops, and how loop checks judge an episode.

The scripted agent and the counting buffer record what a loop does with them. They stay in
the grader's process and are served to the student's code (see :mod:`checks.lending`):
``get_action`` and ``sample`` answer across the channel, ``update`` and ``add`` are queued,
and the loop may read and set ``epsilon``. The corridor is lent by mirroring."""

import numpy as np

from checks.framework import ProbeError, call_student
from checks.lending import STAND_IN_BATCH, Served
from checks.records import Record
from course.corridor import make_corridor  # noqa: F401 - the loop checks' environment


class ScriptedAgent:
    """Always plays ``action``; records every ``update`` call as plain data.

    ``epsilon`` exists because training loops decay it.
    """

    __lending__ = Served(remote=("get_action",), deferred=("update",),
                         readable=("epsilon",), settable=("epsilon",))

    def __init__(self, action):
        self.action = action
        self.epsilon = 0.0
        self.updates = Record("update")

    def get_action(self, state):
        return self.action

    def update(self, state, action, reward, next_state, terminated):
        self.updates.append([int(state), int(action), float(reward), int(next_state),
                             bool(terminated)])


class CountingBuffer:
    """A stand-in buffer for the 10,000-step episode: counts adds and hands out one fixed
    transition, so the long run stays cheap (a recording buffer keeps every row)."""

    __lending__ = Served(remote=("sample", "__len__"), deferred=("add",),
                         limits={"sample": {"batch_size": STAND_IN_BATCH}})

    def __init__(self):
        self.adds = 0

    def __len__(self):
        return self.adds

    def add(self, obs_t, action, reward, obs_tp1, done):
        self.adds += 1

    def sample(self, batch_size):
        return tuple(np.array([value] * batch_size) for value in (0, 0, -1.0, 0, False))


def lent_corridor(length, time_limit, **rewards):
    """A corridor lent to the student's loop by mirroring: its resets and steps are
    replayed on the grader's own corridor, whose counters the verdicts read."""
    from checks.lending import mirrored

    return mirrored(make_corridor, length, time_limit, logged=("reset", "step"), **rewards)


def episode_ends_problem(length, runs, expected, walks_to_goal=("reaches_goal",),
                         total_key="total"):
    """What a training loop got wrong about when a corridor episode ends and what it
    returns, as feedback; None if nothing.

    ``expected`` maps each case to (steps the episode must last, why); ``runs[case]``
    holds the steps the loop took and, under ``total_key`` when the probe recorded it,
    what the loop returned. The corridor pays -1 a step and +10 instead on the step that
    reaches the goal, which only the cases in ``walks_to_goal`` do (an agent walking left
    may be stopped after exactly ``length`` steps without arriving).
    """
    for case, (steps, why) in expected.items():
        run, situation = runs[case], f"in a corridor of length {length} ({case.replace('_', ' ')})"
        if run["steps"] != steps:
            return f"{situation} the loop took {run['steps']} steps; expected {steps}: {why}."
        if total_key not in run:
            continue
        total = 10 - (length - 1) if case in walks_to_goal else -steps
        if run[total_key] != total:
            return (f"{situation} the rewards of the episode's {steps} steps sum to "
                    f"{total:g}, but the loop returned {run[total_key]}: return the "
                    "episode's total reward.")
    return None


def call_training_loop(description, loop, env, *args, **kwargs):
    """:func:`~checks.framework.call_student` for a training loop played on a corridor. A
    loop that the corridor stopped for running far past the episode's end (a
    :class:`~course.corridor.RunawayEpisode`) returns None: the steps it took are on the
    corridor, and its verdict judges them like any other loop's."""
    try:
        return call_student(description, loop, env, *args, **kwargs)
    except ProbeError:
        if not env.unwrapped.ran_away:
            raise
        return None


def episode_cases(time_limit, default_t_max):
    """The episodes a loop check plays: case -> (the scripted action, 1 walks to the goal;
    the corridor's time limit; t_max given, or None). t_max ends episodes that the time
    limit does not end first; the last case's time limit is past the default t_max."""
    return {"reaches_goal": (1, time_limit, None), "runs_out_of_time": (0, time_limit, None),
            "stopped_by_t_max": (0, time_limit, time_limit - 2),
            "default_t_max": (0, default_t_max + 5, None)}


def episode_ends(length, time_limit, default_t_max):
    """The ends every loop check expects: (steps, why) by case."""
    return {"reaches_goal": (length, "the episode ends when the goal is reached (terminated)"),
            "runs_out_of_time": (time_limit, f"the time limit of {time_limit} steps truncates "
                                             "the episode (truncated ends it too)"),
            "stopped_by_t_max": (time_limit - 2, f"t_max={time_limit - 2} allows no more "
                                                 "steps"),
            "default_t_max": (default_t_max, f"called without t_max, its default "
                                             f"t_max={default_t_max:,} must stop an episode "
                                             "whose time limit is longer")}
