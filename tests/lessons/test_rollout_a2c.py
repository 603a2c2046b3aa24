"""course.rollout_a2c: the gae it is given sees each rollout once, as collected, and a run
does not depend on the runs beside it."""

import numpy as np
import pytest

from course.rollout_a2c import A2CSettings, BadGAE, train_a2c

SMALL = A2CSettings(steps=700, rollout=64)


def gae_by_loop(rewards, values, next_values, terminated, truncated, discount, lam):
    """Generalised advantage estimation (Schulman et al. 2016), column by column."""
    advantages = np.zeros(values.shape)
    for column in range(values.shape[1]):
        following = 0.0
        for t in reversed(range(len(rewards))):
            bootstrap = 0.0 if terminated[t, column] else next_values[t, column]
            delta = rewards[t, column] + discount * bootstrap - values[t, column]
            if terminated[t, column] or truncated[t, column]:
                following = 0.0
            following = delta + discount * lam * following
            advantages[t, column] = following
    return advantages, advantages + values


def test_a_run_learns_the_same_alone_and_beside_others():
    alone = train_a2c([5], 2, SMALL, gae_by_loop)[0]
    beside = train_a2c([8, 5, 1], 2, SMALL, gae_by_loop)[1]
    assert (alone.episode_returns, alone.episode_ends, alone.greedy_return) == (
        beside.episode_returns, beside.episode_ends, beside.greedy_return)


def test_gae_sees_every_step_once_in_rollouts_of_the_buffers_size():
    seen = []

    def recording(rewards, values, next_values, terminated, truncated, discount, lam):
        seen.append((rewards.shape, int(terminated.sum() + truncated.sum())))
        assert (discount, lam) == (SMALL.discount, SMALL.gae_lambda)
        return gae_by_loop(rewards, values, next_values, terminated, truncated, discount, lam)

    result = train_a2c([0, 1], 1, SMALL, recording)[0]
    assert [shape for shape, _ in seen] == [(64, 2)] * 10 + [(60, 2)]  # 700 = 10 * 64 + 60
    assert sum(ends for _, ends in seen) >= len(result.episode_ends)


def test_an_unusable_gae_is_refused_in_one_sentence():
    def one_value(rewards, values, next_values, terminated, truncated, discount, lam):
        return rewards.sum(), rewards

    with pytest.raises(BadGAE, match="must return advantages and returns of that shape"):
        train_a2c([0], 1, SMALL, one_value)
