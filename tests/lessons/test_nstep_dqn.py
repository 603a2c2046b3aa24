"""course.nstep_dqn: the records it replays are the n-step returns the lesson defines, made
by the n_step_return it is given, and a run does not depend on the runs beside it.

The n_step_return here is the definition written as a plain loop, one window at a time
(the lesson's answer is tested by its checks); the records are compared with it for
every transition of runs with n = 1, 3 and 5 on CartPole, whose episodes end by
termination and, with a short time limit, by truncation.
"""

import numpy as np
import pytest

from course.nstep_dqn import BadNStepReturn, NStepRecords, Run, Settings, train
from course.vector_cartpole import VectorCartPole

DISCOUNT = 0.9


def n_step_return_by_loop(rewards, terminated, truncated, discount):
    """The definition, row by row: sum discount**k * r_k up to and including the first
    step that ends the episode (n steps if none does); bootstrap with discount**m, or 0
    when that step terminated."""
    returns, discounts, steps = [], [], []
    for row_rewards, row_terminated, row_truncated in zip(rewards, terminated, truncated):
        total, m = 0.0, len(row_rewards)
        for k, reward in enumerate(row_rewards):
            total += discount ** k * reward
            if row_terminated[k] or row_truncated[k]:
                m = k + 1
                break
        returns.append(total)
        discounts.append(0.0 if row_terminated[m - 1] else discount ** m)
        steps.append(m)
    return np.array(returns), np.array(discounts), np.array(steps)


def filled_records(ns, steps=400, time_limit=12):
    """NStepRecords of random play on CartPole with a time limit of ``time_limit``, one
    run per n, rewards made to vary so that a wrong sum shows."""
    runs = len(ns)
    env, rng = VectorCartPole(range(runs), time_limit=time_limit), np.random.default_rng(0)
    memory = NStepRecords(steps, runs)
    groups = [(n, np.array([index])) for index, n in enumerate(ns)]
    for _ in range(steps):
        observations = env.observations
        actions = rng.integers(2, size=runs)
        final, _, terminated, truncated = env.step(actions)
        memory.add(observations, actions, rng.normal(size=runs), final, terminated, truncated)
        memory.complete(groups, DISCOUNT, n_step_return_by_loop)
    return memory


@pytest.mark.parametrize("ns", [(1, 3, 5)])
def test_each_record_holds_its_transitions_n_step_return(ns):
    memory = filled_records(ns)
    ended = memory.terminated | memory.truncated
    assert memory.terminated.sum() > 10 and memory.truncated.sum() > 10
    for run, n in enumerate(ns):
        for t in range(memory.count - n + 1):
            total, m = 0.0, n
            for k in range(n):
                total += DISCOUNT ** k * memory.rewards[t + k, run]
                if ended[t + k, run]:
                    m = k + 1
                    break
            discount = 0.0 if memory.terminated[t + m - 1, run] else DISCOUNT ** m
            record = memory.records[t, run]
            assert record[memory.RETURN] == np.float32(total), (run, t)
            assert record[memory.DISCOUNT] == np.float32(discount), (run, t)
            assert np.array_equal(record[memory.BOOTSTRAP],
                                  memory.next_observations[t + m - 1, run])
            assert np.array_equal(record[memory.OBSERVATION], memory.observations[t, run])
            assert record[memory.ACTION] == memory.actions[t, run]
        assert not memory.records[memory.count - n + 1:, run].any()  # not complete yet


def test_a_one_step_record_is_lesson_07s_target_parts():
    memory = filled_records((1,))
    records = memory.records[:memory.count, 0]
    assert np.array_equal(records[:, memory.RETURN], memory.rewards[:, 0].astype(np.float32))
    assert np.array_equal(records[:, memory.DISCOUNT],
                          np.where(memory.terminated[:, 0], 0.0, DISCOUNT).astype(np.float32))
    assert np.array_equal(records[:, memory.BOOTSTRAP], memory.next_observations[:, 0])


SMALL = Settings(steps=1_200, learning_starts=300, exploration_steps=600)


def test_a_run_learns_the_same_alone_and_beside_others():
    alone = train([Run(3, 500, 3)], SMALL, n_step_return_by_loop)[0]
    beside = train([Run(7, 1_000, 1), Run(3, 500, 3), Run(3, 200, 5)], SMALL,
                   n_step_return_by_loop)[1]
    assert alone.episode_returns == beside.episode_returns
    assert alone.episode_ends == beside.episode_ends
    assert alone.greedy_return == beside.greedy_return
    assert sum(alone.episode_returns) <= SMALL.steps


def test_an_unusable_n_step_return_is_refused_in_one_sentence():
    def wrong_shape(rewards, terminated, truncated, discount):
        return rewards.sum(axis=1), np.ones(3), np.ones(len(rewards), dtype=np.int64)

    with pytest.raises(BadNStepReturn, match=r"three arrays of shape \(2,\)"):
        train([Run(0, 100, 2), Run(1, 100, 2)], SMALL, wrong_shape)


def test_the_settings_count_updates_and_the_oldest_policys_age():
    settings = Settings()
    assert settings.updates_by(settings.learning_starts - 1) == 0
    assert settings.updates_by(settings.steps) == 4_750  # ratio 0.25 after 1,000 steps
    assert settings.oldest_policy_age(1_000) == 250
    assert settings.oldest_policy_age(20_000) == 4_750
