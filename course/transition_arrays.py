"""A fixed memory of transitions kept as five numpy arrays, one row per transition:
what the Blind Cliffwalk and the lottery replay from."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TransitionArrays:
    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray

    def __len__(self):
        return self.obs.size

    def rows(self):
        """The transitions one by one, as ``(obs, action, reward, next_obs, terminated)``."""
        return zip(self.obs.tolist(), self.actions.tolist(), self.rewards.tolist(),
                   self.next_obs.tolist(), self.terminated.tolist())
