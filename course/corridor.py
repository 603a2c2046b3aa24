"""A tiny deterministic environment in which an episode ends exactly when a test wants.

States 0..length; action 1 steps right, action 0 stays. Reaching the end terminates;
the ``TimeLimit`` around it truncates an agent that dawdles. The checks of the training
loops use it to tell *terminated* from *truncated*.
"""

import gymnasium as gym
from gymnasium import spaces


class Corridor(gym.Env):
    """Each step costs ``step_reward``; arriving at the end pays ``goal_reward`` instead."""

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
