"""References for lesson 04's checks: the goal-conditioned update and HER's baseline."""

import numpy as np


def goal_qvalues_after_updates(inputs):
    """Q(pair, action) after each of the inputs' updates, by lesson 01's rule, with
    unseen Q-values at ``initial_value``."""
    n_bits, start = inputs["n_bits"], inputs["initial_value"]
    q, history = {}, []
    for pair, action, reward, next_pair, done in inputs["updates"]:
        old = q.get((tuple(pair), action), start)
        future = 0.0 if done else max(q.get((tuple(next_pair), a), start)
                                      for a in range(n_bits))
        value = old + inputs["alpha"] * (reward + inputs["discount"] * future - old)
        q[(tuple(pair), action)] = value
        history.append(value)
    return history


def without_her(seeds, settings):
    """The greedy success rate the reference agent and loop reach replaying from the
    reference buffer without relabelling (k = 0), mean over seeds."""
    from checks.lesson04_hindsight_replay.her_learning import train_with_buffer
    from course.bit_flipping import greedy_success_rate
    from hindsight_replay import HindsightReplayBuffer

    settings = {**settings, "k": 0}
    return float(np.mean([greedy_success_rate(train_with_buffer(
        HindsightReplayBuffer, seed, **settings)) for seed in seeds]))
