"""What an honest loop does next on Taxi: the answers the grader sends ahead of lesson
01's served agent.

Lesson 01's learning check serves the grader's reference agent to the student's
``play_and_train`` (it is the lesson's answer: it never enters the student's process),
so each ``agent.get_action`` would wait for the grader. After answering one, the grader
foresees the rest of the episode as the lesson's own loop plays it (step with the action,
update on the step's own transition, ask for the next action) on a shadow of its agent
and on Taxi's transition table, and sends those answers ahead (checks/lending.py:
predicted methods). The student's process uses one only if its loop made exactly the
foreseen calls; the grader replays every call on its real agent and environment, so a
foreseen answer that was wrong would be refused, never believed. Nothing here decides a
grade: it only saves waits.
"""

import copy
from collections import defaultdict

MOST_STEPS_AHEAD = 256  # more than an episode holds (Taxi's time limit is 200 steps)


def taxi_steps_ahead(witness, state, action, most=MOST_STEPS_AHEAD):
    """[(calls before, args, kwargs, answer)] of the get_action calls the lesson's loop
    makes after ``get_action(state)`` answered ``action``, up to the episode's end; each
    call before is (object, method, args, kwargs, what it returns or None)."""
    from qlearning import QLearningAgent  # the grader's: a student edition lacks it

    env = witness.env
    limited = env.env  # the TimeLimit that gym.make put around Taxi
    taxi = limited.unwrapped
    if type(witness.agent) is not QLearningAgent or type(state) is not int \
            or state != taxi.s or env._observation != state:
        return []
    agent = shadow_of(witness.agent)
    elapsed, limit = limited._elapsed_steps, limited._max_episode_steps
    ahead = []
    while len(ahead) < most:
        transitions = taxi.P[state].get(action) if type(action) is int else None
        if not transitions or len(transitions) != 1:
            return ahead  # a random transition: nothing to foresee past it
        probability, following, reward, terminated = transitions[0]
        elapsed += 1
        truncated = elapsed >= limit
        result = (int(following), reward, terminated, truncated,
                  {"prob": probability, "action_mask": taxi.action_mask(following)})
        before = [(env, "step", (action,), {}, result),
                  (witness, "update", (state, action, reward, int(following), terminated),
                   {}, None)]
        if terminated or truncated:
            return ahead  # the loop returns: the next call is the grader's
        agent.update(state, action, reward, int(following), terminated)
        state, action = int(following), agent.get_action(int(following))
        ahead.append((before, (state,), {}, action))
    return ahead


def shadow_of(agent):
    """A copy of the reference agent that foresees without changing it: the generator's
    state copied, Q-values read through to the agent's and written apart (copying the
    whole table would cost more than the waits it saves)."""
    shadow = copy.copy(agent)
    shadow.rng = copy.deepcopy(agent.rng)
    shadow._qvalues = _ReadThrough(agent._qvalues)
    return shadow


class _ReadThrough(dict):
    """Rows of Q-values copied from ``table`` when first used, then written here."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def __missing__(self, state):
        row = self[state] = defaultdict(float, self.table.get(state, {}))
        return row
