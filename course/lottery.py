"""A sure thing and a lottery: the smallest problem where PER's importance weights matter.

One state, two actions, episodes of one step. The sure thing (action 0) pays 1. The
lottery (action 1) pays ``PRIZE`` = 10 with probability ``PRIZE_PROBABILITY`` = 1/20 and
nothing otherwise: it is worth 0.5 on average, half the sure thing.

The same (state, action) has two targets here, 0 and 10, so *how often* each one is
replayed decides what Q(lottery) settles at. Replayed uniformly, Q approaches the memory's
average reward. Prioritized by |TD error|, the rare prizes (|delta| near 10) are replayed
far more often than their share of the memory, and without importance weights Q settles
well above 0.5, above the sure thing's 1 (lesson 03 measures by how much). In a
deterministic table every (state, action) has one target, and this cannot happen.

As with the Blind Cliffwalk, the memory is filled once (every action played the same
number of times, in a shuffled order) and the values are learned only by replaying it.
"""

from dataclasses import dataclass

import numpy as np

from course.transition_arrays import TransitionArrays

STATE = 0  # the only state; every episode ends after one step
SURE, LOTTERY = 0, 1  # the two actions
SURE_REWARD = 1.0
PRIZE = 10.0
PRIZE_PROBABILITY = 0.05
TRUE_QVALUES = np.array([SURE_REWARD, PRIZE * PRIZE_PROBABILITY])  # [1.0, 0.5]


@dataclass(frozen=True)
class LotteryMemory(TransitionArrays):
    """Every transition played (one row each); all of them terminate."""

    def average_reward(self, action):
        """The mean reward of ``action`` in this memory: what uniform replay learns."""
        return float(self.rewards[self.actions == action].mean())


def lottery_memory(plays_per_action, seed=0):
    """Play each action ``plays_per_action`` times, in an order shuffled by ``seed``."""
    if plays_per_action < 1:
        raise ValueError(f"play each action at least once, got {plays_per_action}")
    rng = np.random.default_rng(seed)
    actions = rng.permutation(np.repeat([SURE, LOTTERY], plays_per_action))
    prizes = rng.random(actions.size) < PRIZE_PROBABILITY
    rewards = np.where(actions == SURE, SURE_REWARD, np.where(prizes, PRIZE, 0.0))
    states = np.full(actions.size, STATE, dtype=np.int64)
    return LotteryMemory(states, actions.astype(np.int64), rewards, states.copy(),
                         np.ones(actions.size, dtype=bool))
