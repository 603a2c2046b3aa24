"""course.vector_cartpole steps as gymnasium's CartPole-v1 does, seed for seed."""

import gymnasium as gym
import numpy as np

from course.vector_cartpole import TIME_LIMIT, VectorCartPole


def test_each_environment_steps_as_gymnasiums_cartpole_with_its_seed():
    seeds, rng = (0, 7, 1003), np.random.default_rng(123)
    envs = [gym.make("CartPole-v1") for _ in seeds]
    observations = np.stack([env.reset(seed=seed)[0] for env, seed in zip(envs, seeds)])
    vector = VectorCartPole(seeds)
    assert np.array_equal(observations, vector.observations)
    ends = 0
    for _ in range(1500):
        actions = rng.integers(2, size=len(seeds))
        final, rewards, terminated, truncated = vector.step(actions)
        for index, env in enumerate(envs):
            observation, reward, term, trunc, _ = env.step(int(actions[index]))
            assert np.array_equal(observation, final[index])
            assert (reward, term, trunc) == (rewards[index], terminated[index], truncated[index])
            if term or trunc:
                observation, _ = env.reset()
                ends += 1
            assert np.array_equal(observation, vector.observations[index])
    assert ends > 50  # random actions end an episode every 20 steps or so


def test_a_balanced_pole_is_truncated_at_the_time_limit_and_a_fresh_episode_starts():
    vector = VectorCartPole([5], time_limit=3)
    for step in range(1, 4):
        _, _, terminated, truncated = vector.step([step % 2])
        assert not terminated[0] and truncated[0] == (step == 3)
    assert vector.elapsed[0] == 0
    assert TIME_LIMIT == 500


def test_an_environment_does_not_depend_on_those_beside_it():
    alone, together = VectorCartPole([4], sticky=0.25), VectorCartPole([9, 4, 2], sticky=0.25)
    rng = np.random.default_rng(0)
    for _ in range(800):
        actions = rng.integers(2, size=3)
        first = alone.step(actions[1:2])
        second = together.step(actions)
        for mine, theirs in zip(first, second):
            assert np.array_equal(mine[0], theirs[1])


def test_sticky_actions_repeat_the_previous_action_about_as_often_as_asked():
    vector = VectorCartPole(range(200), sticky=0.25, time_limit=10**6)
    vector.state[:] = 0.0  # upright and still: no episode ends in the few steps below
    vector.step(np.zeros(200, dtype=np.int64))
    vector.step(np.ones(200, dtype=np.int64))
    repeated = np.mean(vector.previous == 0)
    # binomial(200, 0.25): below 0.10 or above 0.40 with probability under 1e-5
    assert 0.10 < repeated < 0.40
