"""Tiny deterministic environments and a recording agent that probes drive code with.

They make the terminated-versus-truncated case happen exactly when a check wants it.
"""

import gymnasium as gym
from gymnasium import spaces


class Corridor(gym.Env):
    """States 0..length; action 1 steps right, action 0 stays. Reaching the end terminates.

    Each step costs ``step_reward``; arriving at the end pays ``goal_reward`` instead.
    Wrapped in a ``TimeLimit`` by :func:`make_corridor`, so an agent that dawdles is
    truncated, not terminated.
    """

    def __init__(self, length, step_reward=-1.0, goal_reward=10.0):
        self.length = length
        self.step_reward = step_reward
        self.goal_reward = goal_reward
        self.observation_space = spaces.Discrete(length + 1)
        self.action_space = spaces.Discrete(2)
        self.position = 0
        self.steps_taken = 0
        self.resets = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = 0
        self.resets += 1
        return self.position, {}

    def step(self, action):
        self.steps_taken += 1
        self.position = min(self.length, self.position + int(action))
        terminated = self.position == self.length
        reward = self.goal_reward if terminated else self.step_reward
        return self.position, reward, terminated, False, {}


def make_corridor(length, time_limit, **rewards):
    return gym.wrappers.TimeLimit(Corridor(length, **rewards), max_episode_steps=time_limit)


class ScriptedAgent:
    """Always plays ``action``; records every ``update`` call as plain data.

    ``epsilon`` exists because training loops decay it.
    """

    def __init__(self, action):
        self.action = action
        self.epsilon = 0.0
        self.updates = []

    def get_action(self, state):
        return self.action

    def update(self, state, action, reward, next_state, terminated):
        self.updates.append([int(state), int(action), float(reward), int(next_state),
                             bool(terminated)])
