"""Agents that probes hand to the student's training loops: they record what the loop
does with them. They stay in the grader's process and are served to the student's code
(see :mod:`checks.lending`): ``get_action`` answers across the channel, ``update`` is
queued, and the loop may read and set ``epsilon``."""

from checks.lending import Served
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
        self.updates = []

    def get_action(self, state):
        return self.action

    def update(self, state, action, reward, next_state, terminated):
        self.updates.append([int(state), int(action), float(reward), int(next_state),
                             bool(terminated)])


def lent_corridor(length, time_limit, **rewards):
    """A corridor lent to the student's loop by mirroring: its resets and steps are
    replayed on the grader's own corridor, whose counters the verdicts read."""
    from checks.lending import mirrored

    return mirrored(make_corridor, length, time_limit, logged=("reset", "step"), **rewards)
