"""References for lesson 02's checks: the loop the learning check drives a buffer with,
and its no-replay baseline."""

import numpy as np


def training_loop(env, agent, replay, batch_size):
    """One episode of the course's loop with replay (this lesson's answer): lesson 02's
    learning check trains the reference agent with it and the student's buffer."""
    from replay_buffer import play_and_train_with_replay

    return play_and_train_with_replay(env, agent, replay, batch_size)


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
