"""References for lesson 02's checks: the no-replay baseline of the learning check."""

import numpy as np


def no_replay_success(seeds, checkpoints, settings):
    """The share of Taxi's start states the reference agent's greedy policy solves after
    each number of episodes in ``checkpoints``, trained without replay (mean over seeds)."""
    from checks.taxi_training import train_on_taxi
    from course.taxi import evaluate_qtable
    from qlearning import play_and_train

    rates = [[evaluate_qtable(q).success_rate
              for q in train_on_taxi(play_and_train, seed, checkpoints, **settings)]
             for seed in seeds]
    return np.mean(rates, axis=0).tolist()
