"""What probes hand to the student's training loops, and how loop checks judge an episode.

The corridor, the scripted agent and the counting buffers are lent by mirroring (see
:mod:`checks.lending`): the student's process builds its own copies (public classes of
``course``), so a 10,000-step episode never waits for the grader, and the corridor's and
the agent's calls are replayed here on the grader's own objects, whose records the
verdicts read. The counting buffers' calls are not replayed: the long run only counts
steps, which the corridor records."""

from checks.framework import ProbeError, call_student
from checks.lending import mirrored
from checks.records import Record
from course.corridor import make_corridor  # noqa: F401 - the loop checks' environment
from course.stand_ins import CountingBuffer, CountingPrioritizedBuffer, FixedActionAgent


class ScriptedAgent(FixedActionAgent):
    """The grader's side of a lent :class:`~course.stand_ins.FixedActionAgent`: it also
    records every ``update`` call as plain data."""

    def __init__(self, action):
        super().__init__(action)
        self.updates = Record("update")

    def update(self, state, action, reward, next_state, terminated):
        self.updates.append([int(state), int(action), float(reward), int(next_state),
                             bool(terminated)])


def scripted_agent(action):
    """An agent that always plays ``action``, lent by mirroring: its ``get_action`` and
    ``update`` calls are replayed on the :class:`ScriptedAgent` returned. Nothing of it may
    be set: a loop reads the agent and calls those two (the lessons' lending sentences)."""
    return mirrored(FixedActionAgent, action, logged=("get_action", "update"),
                    original=ScriptedAgent(action))


def counting_buffer(prioritized=False):
    """A buffer for the 10,000-step episode, lent by mirroring and never replayed."""
    return mirrored(CountingPrioritizedBuffer if prioritized else CountingBuffer)


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
