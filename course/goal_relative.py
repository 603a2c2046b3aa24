"""Bit flipping with a goal-relative Q-table, Q[state XOR goal, action] (lesson 04).

A (state, goal) table must learn each of the 2^(2n) pairs on its own. In bit flipping
only *which bits differ* matters: flipping bit i from state s towards goal g does the
same as from s XOR g towards 0. A table indexed by ``state XOR goal`` has that symmetry
built in, the one the paper's DQN had to learn, so it has 2^n rows instead of 2^(2n)
and reproduces the paper's shape (plain learning collapses as n grows, HER does not)
in seconds.

The replay buffer and the episode loop are the lesson's: ``train_goal_relative`` takes
the ``HindsightReplayBuffer`` class and the ``play_and_learn_with_her`` function, so the
relabelling and the loop are whatever the student's (or the course's) do. The agent
takes the loop's updates one row at a time and applies each batch at once, in one numpy
step (:class:`BatchedUpdates`).

The module also has the exact greedy evaluation both kinds of table share
(:func:`greedy_reaches`) and the coverage split of a (state, goal) table
(:func:`coverage`): which pairs were ever updated, and which of those the greedy
policy solves.
"""

import numpy as np

from course.bit_flipping import BitFlippingEnv
from course.experiments import train_agent


class GoalRelativeAgent:
    """Q-learning on Q[state XOR goal, action]: states and goals are bits_to_int numbers.

    Unseen Q-values are ``initial_value`` (pessimistic, as in the lesson: below any
    path's return). ``update_batch`` applies a whole batch in one numpy step: every
    target is computed from the Q-values before the batch, and where the batch holds a
    (difference, action) twice, one of its updates is kept.
    """

    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):
        self.n_bits, self.alpha, self.epsilon, self.discount = n_bits, alpha, epsilon, discount
        self.initial_value = initial_value
        self.qvalues = np.full((2 ** n_bits, n_bits), float(initial_value))
        self.rng = np.random.default_rng(seed)

    def get_action(self, state, goal):
        """Epsilon-greedy flip for ``state`` towards ``goal``, ties broken at random (as
        lesson 01's agent does: in rows never updated, every flip ties)."""
        if self.rng.random() < self.epsilon:
            return int(self.rng.integers(self.n_bits))
        row = self.qvalues[state ^ goal]
        best = np.flatnonzero(row == row.max())
        return int(best[self.rng.integers(best.size)]) if best.size > 1 else int(best[0])

    def update_batch(self, states, actions, rewards, next_states, terminated, goals):
        """One Q-learning step on each transition of a batch of integer arrays."""
        differences, next_differences = states ^ goals, next_states ^ goals
        future = np.where(terminated, 0.0, self.qvalues[next_differences].max(axis=1))
        targets = rewards + self.discount * future
        old = self.qvalues[differences, actions]
        self.qvalues[differences, actions] = old + self.alpha * (targets - old)


class BatchedUpdates:
    """A :class:`GoalRelativeAgent` as lesson 04's ``play_and_learn_with_her`` sees its
    agent: ``get_action((state, goal))``, and ``update((state, goal), action, reward,
    (next_state, goal), done)`` once per replayed transition. The updates wait until
    :meth:`apply`, which makes them one ``update_batch``."""

    def __init__(self, agent):
        self.agent = agent
        self.rows = []

    def get_action(self, state_and_goal):
        state, goal = state_and_goal
        return self.agent.get_action(int(state), int(goal))

    def update(self, state_and_goal, action, reward, next_state_and_goal, done):
        (state, goal), (next_state, _) = state_and_goal, next_state_and_goal
        self.rows.append((state, action, reward, next_state, done, goal))

    def apply(self):
        if self.rows:
            states, actions, rewards, next_states, dones, goals = zip(*self.rows)
            self.agent.update_batch(
                np.asarray(states, dtype=np.int64), np.asarray(actions, dtype=np.int64),
                np.asarray(rewards, dtype=np.float64), np.asarray(next_states, dtype=np.int64),
                np.asarray(dones, dtype=bool), np.asarray(goals, dtype=np.int64))
        self.rows = []


def play_and_learn_goal_relative(env, agent, replay, batch_size, play_and_learn):
    """One episode of the lesson's ``play_and_learn(env, agent, replay, batch_size)``
    (``play_and_learn_with_her``) with ``agent``, a :class:`GoalRelativeAgent`, whose
    updates from the replayed batch are applied together. True if the goal was reached."""
    batched = BatchedUpdates(agent)
    reached = play_and_learn(env, batched, replay, batch_size)
    batched.apply()
    return bool(reached)


def train_goal_relative(replay_class, play_and_learn, n_bits, episodes, strategy="future",
                        k=4, batch_size=None, seed=0, initial_value=-10.0, **settings):
    """Train a :class:`GoalRelativeAgent` on ``n_bits``-bit flipping for ``episodes``
    episodes of the lesson's ``play_and_learn`` (``play_and_learn_with_her``), each
    replaying one batch of ``batch_size`` (default 16 n) from
    ``replay_class(env, episodes, n_bits, strategy=strategy, k=k, seed=seed)``; k = 0 is
    plain replay. ``settings``: alpha, epsilon, discount. Returns (success of each
    training episode, the greedy policy's success rate over all pairs state != goal)."""
    env = BitFlippingEnv(n_bits)
    env.reset(seed=seed)
    agent = GoalRelativeAgent(n_bits, **settings, initial_value=initial_value, seed=seed)
    replay = replay_class(env, episodes, n_bits, strategy=strategy, k=k, seed=seed)
    batch_size = 16 * n_bits if batch_size is None else batch_size
    successes = train_agent(
        env, agent,
        lambda env, agent: play_and_learn_goal_relative(env, agent, replay, batch_size,
                                                        play_and_learn),
        episodes, progress=False)
    return successes, relative_greedy_success_rate(agent.qvalues)


def greedy_reaches(qvalues_of, states, goals, n_bits):
    """Roll the greedy policy out from every (state, goal) at once for n flips, ties to
    the lowest bit, as ``course.bit_flipping.greedy_success_rate`` does for a full table;
    ``qvalues_of(states, goals)`` gives their rows of Q-values, whatever the table's
    layout. Returns which starts reached their goal."""
    states, goals = np.asarray(states), np.asarray(goals)
    reached = states == goals
    for _ in range(n_bits):
        flips = qvalues_of(states, goals).argmax(axis=1)
        states = np.where(reached, states, states ^ (1 << (n_bits - 1 - flips)))
        reached |= states == goals
    return reached


def relative_greedy_success_rate(qvalues):
    """The share of pairs, state != goal, the greedy policy of Q[state XOR goal] solves.

    Exact: every pair with the same difference d = state XOR goal behaves like (d, 0),
    and each d != 0 stands for the same number of pairs."""
    qvalues = np.asarray(qvalues)
    differences = np.arange(1, qvalues.shape[0])
    return float(greedy_reaches(lambda states, goals: qvalues[states ^ goals], differences,
                                np.zeros_like(differences), qvalues.shape[1]).mean())


def coverage(qtable, initial_value):
    """Of a (state, goal) Q-table Q[state, goal, action] (e.g. ``goal_qtable``), over the
    pairs state != goal: the share ever updated (some Q-value moved off
    ``initial_value``), the greedy success rate among those and among the rest."""
    qtable = np.asarray(qtable)
    size, _, n_bits = qtable.shape
    states, goals = np.divmod(np.arange(size * size), size)
    keep = states != goals
    states, goals = states[keep], goals[keep]
    updated = (qtable[states, goals] != initial_value).any(axis=1)
    reached = greedy_reaches(lambda s, g: qtable[s, g], states, goals, n_bits)

    def share(flags):  # nan, not a warning, for an empty group
        return float(flags.mean()) if flags.size else float("nan")

    return {"pairs updated": share(updated),
            "solved among updated": share(reached[updated]),
            "solved among never updated": share(reached[~updated]),
            "solved overall": share(reached)}
