"""References for lesson 05's checks: the CartPole bins, the loop the learning check
drives a buffer with, and its uniform-replay baseline."""

import math

import numpy as np


def bins_of(points, lows, highs, bins):
    """The cell of each point: per dimension, clip into [low, high], then floor((x - low)
    / width) with the top edge in the last bin; cells numbered row-major."""
    cells = []
    for point in points:
        index = 0
        for x, low, high, count in zip(point, lows, highs, bins):
            x = min(max(x, low), high)
            b = min(int(math.floor((x - low) / (high - low) * count)), count - 1)
            index = index * count + b
        cells.append(index)
    return cells


def training_loop(env, agent, replay, batch_size):
    """One episode of the course's loop that learns only from replay (this lesson's
    answer): lesson 05's learning check trains the reference agent with it and the
    student's buffer."""
    from combined_replay import play_and_train_from_replay

    return play_and_train_from_replay(env, agent, replay, batch_size)


def uniform_success(seeds, settings):
    """The greedy success rate of the reference agent trained on Taxi by the course's
    loop that learns only from replay, with uniform replay (mean over seeds)."""
    from checks.lesson05_combined_replay import train_taxi_from_replay
    from course.taxi import evaluate_qtable
    from replay_buffer import ReplayBuffer

    settings = dict(settings)
    capacity = settings.pop("capacity")
    return float(np.mean([evaluate_qtable(train_taxi_from_replay(
        lambda: ReplayBuffer(capacity, seed=seed), training_loop, seed, **settings)).success_rate
        for seed in seeds]))
