"""Taxi-v4: making it, its start states, and judging a greedy policy on every one of them.

Taxi's default dynamics are deterministic, so the environment is read once into three
arrays (next state, reward, terminated) and a policy is rolled out from all 300 start
states at once with numpy. That takes milliseconds, which is what lets the lessons and
the grader evaluate many Q-tables.
"""

from dataclasses import dataclass
from functools import lru_cache

import gymnasium as gym
import numpy as np

ENV_ID = "Taxi-v4"  # Taxi-v3 raises DeprecatedEnv in gymnasium >= 1.3; same dynamics
N_STATES = 500
N_ACTIONS = 6
STEP_LIMIT = 200  # the registered TimeLimit: episodes are truncated after 200 steps


def make_taxi(seed=None):
    """A Taxi-v4 environment whose resets and action sampling follow ``seed``."""
    env = gym.make(ENV_ID)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env


@dataclass(frozen=True)
class TaxiModel:
    """Taxi's dynamics as arrays indexed by [state, action]."""

    next_state: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    start_states: np.ndarray


@lru_cache(maxsize=1)
def taxi_model():
    """Read the transition table out of Taxi-v4 (it is deterministic by default)."""
    env = gym.make(ENV_ID).unwrapped
    shape = (N_STATES, N_ACTIONS)
    next_state = np.zeros(shape, dtype=np.int64)
    reward = np.zeros(shape, dtype=np.float64)
    terminated = np.zeros(shape, dtype=bool)
    for state in range(N_STATES):
        for action in range(N_ACTIONS):
            ((probability, s_next, r, done),) = env.P[state][action]
            next_state[state, action], reward[state, action] = s_next, r
            terminated[state, action] = done
    start_states = np.flatnonzero(env.initial_state_distrib)
    env.close()
    return TaxiModel(next_state, reward, terminated, start_states)


@dataclass(frozen=True)
class GreedyEvaluation:
    """How a fixed policy does from every start state, one episode each."""

    returns: np.ndarray  # undiscounted return from each start state
    solved: np.ndarray  # True where the passenger was delivered within the step limit

    @property
    def mean_return(self):
        return float(self.returns.mean())

    @property
    def success_rate(self):
        return float(self.solved.mean())

    def __str__(self):
        return (f"solved {self.solved.sum()}/{self.solved.size} start states "
                f"({self.success_rate:.1%}), mean return {self.mean_return:.2f}")


def evaluate_policy(policy, step_limit=STEP_LIMIT):
    """Roll out ``policy`` (an array: state -> action) from all start states at once."""
    model = taxi_model()
    policy = np.asarray(policy)
    state = model.start_states.copy()
    returns = np.zeros(state.size)
    running = np.ones(state.size, dtype=bool)
    solved = np.zeros(state.size, dtype=bool)
    for _ in range(step_limit):
        action = policy[state]
        returns += np.where(running, model.reward[state, action], 0.0)
        done = model.terminated[state, action]
        solved |= running & done
        running &= ~done
        state = model.next_state[state, action]
        if not running.any():
            break
    return GreedyEvaluation(returns=returns, solved=solved)


def evaluate_qtable(qtable, step_limit=STEP_LIMIT):
    """Evaluate the greedy policy of a (500, 6) Q-table; ties go to the lowest action."""
    return evaluate_policy(np.asarray(qtable).argmax(axis=1), step_limit)


@lru_cache(maxsize=1)
def optimal_evaluation():
    """The best any policy can do: undiscounted value iteration over the step limit."""
    model = taxi_model()
    value = np.zeros(N_STATES)
    for _ in range(STEP_LIMIT):
        q = model.reward + np.where(model.terminated, 0.0, value[model.next_state])
        value = q.max(axis=1)
    return evaluate_policy(q.argmax(axis=1))
