"""A tiny deterministic environment in which an episode ends exactly when a test wants.

States 0..length; action 1 steps right, action 0 stays. Reaching the end terminates;
the ``TimeLimit`` around it truncates an agent that dawdles. The checks of the training
loops use it to tell *terminated* from *truncated*.

A loop that ignores both would step forever; the corridor refuses to go far past its time
limit (:class:`RunawayEpisode`), so such a loop is stopped after the same number of steps
on every machine and judged by them, instead of by whichever budget runs out first.
"""

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec


class RunawayEpisode(RuntimeError):
    """An episode went on far past the end its time limit gave it."""


class Corridor(gym.Env):
    """Each step costs ``step_reward``; arriving at the end pays ``goal_reward`` instead.

    With ``runaway_after``, a step after that many in one episode raises
    :class:`RunawayEpisode` (and is not taken) and ``ran_away`` becomes True."""

    def __init__(self, length, step_reward=-1.0, goal_reward=10.0, runaway_after=None,
                 python_flags=False):
        self.length = length
        self.python_flags = python_flags  # Python's bool for terminated, as Taxi gives it
        self.step_reward = step_reward
        self.goal_reward = goal_reward
        self.runaway_after = runaway_after
        self.episode_steps = 0
        self.ran_away = False
        self.observation_space = spaces.Discrete(length + 1)
        self.action_space = spaces.Discrete(2)
        self.position = 0
        self.steps_taken = 0
        self.resets = 0
        self.seeded_resets = 0  # resets given a seed: a training loop gives none

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = 0
        self.episode_steps = 0
        self.resets += 1
        self.seeded_resets += seed is not None
        return self.position, {}

    def step(self, action):
        if self.runaway_after is not None and self.episode_steps >= self.runaway_after:
            self.ran_away = True
            raise RunawayEpisode(f"this episode has taken {self.episode_steps:,} steps, far "
                                 "past its time limit; the corridor takes no more")
        self.steps_taken += 1
        self.episode_steps += 1
        self.position = min(self.length, self.position + int(action))
        # numpy's bool, as many environments (and every vectorised one) return it: a loop
        # that tests the flag with `is True` never sees the episode end; or Python's, on
        # which array idioms (`~terminated` is -1 or -2, both true) go wrong
        terminated = (bool if self.python_flags else np.bool_)(self.position == self.length)
        reward = self.goal_reward if terminated else self.step_reward
        return self.position, reward, terminated, False, {}


def runaway_limit(time_limit):
    """How many steps an episode may take before the corridor refuses more: its time limit
    and a tenth more, at least 100 more (no correct loop goes past the time limit)."""
    return time_limit + max(100, time_limit // 10)


def make_corridor(length, time_limit, **rewards):
    corridor = Corridor(length, runaway_after=runaway_limit(time_limit), **rewards)
    # a spec, as gym.make gives Taxi one (its max_episode_steps is the time limit): a loop
    # that takes its step cap from the spec instead of from t_max shows it here too
    corridor.spec = EnvSpec("course/Corridor-v0", entry_point=Corridor,
                            kwargs={"length": length, **rewards},
                            max_episode_steps=time_limit)
    return gym.wrappers.TimeLimit(corridor, max_episode_steps=time_limit)
