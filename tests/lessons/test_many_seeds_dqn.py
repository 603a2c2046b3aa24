"""course/many_seeds_dqn.py trains each seed exactly as the one-seed loop does.

The one-seed loop is ``course.dqn.train_dqn`` driven by lesson 07's reference answers
(``dqn_step`` and ``sync_target``, from the solution notebook), or, for the squared-error
loss, by the same step with the error itself as the loss's gradient; its buffer is the
course's uniform ring, its window of the newest transitions, lesson 05's reference
``CombinedReplayBuffer`` or lesson 03's reference ``PrioritizedReplayBuffer``. The runner
is given the same lesson's ``td_targets`` and ``huber_loss_gradient``. Runs of 1,200
steps (700 learning steps, a target sync at step 1,000) on a few seeds: the same
episodes, end for end, and the same parameters (equal to 1e-9; on this machine they are
equal bit for bit, the stacked products computing each seed's slice as the one-seed
product does).
"""

import numpy as np
import pytest

from course.dqn import DQNSettings, RecentTransitions, UniformReplay, train_dqn
from course.many_seeds_dqn import LOSSES, train_dqn_on_seeds
from tests.support.in_process import namespace_for

SEEDS = (3, 11, 12)
SETTINGS = DQNSettings(steps=1200)


@pytest.fixture(scope="module")
def lesson():
    return namespace_for("07_neural_replay")


def squared_error_step(lesson):
    """The reference dqn_step with half the squared error as its loss (uniform replay)."""
    def step(online, target, optimizer, replay, batch_size, discount, beta=None):
        observations, actions, rewards, next_observations, terminated = \
            replay.sample(batch_size)
        actions = np.asarray(actions, dtype=np.int64)
        targets = lesson["td_targets"](target, rewards, next_observations, terminated,
                                       discount)
        q_values = online.predict(observations)
        rows = np.arange(len(actions))
        gradient = np.zeros_like(q_values)
        gradient[rows, actions] = (q_values[rows, actions] - targets) / len(rows)
        optimizer.step(online.gradients(observations, gradient))
    return step


BUFFERS = {  # the runner's replay argument -> the one-seed loop's buffer for a seed
    "uniform": lambda lesson, seed: UniformReplay(SETTINGS.capacity, seed),
    "recent": lambda lesson, seed: RecentTransitions(SETTINGS.batch_size, seed),
    "cer": lambda lesson, seed: lesson["CombinedReplayBuffer"](SETTINGS.capacity, seed=seed),
    "prioritized": lambda lesson, seed: lesson["PrioritizedReplayBuffer"](
        SETTINGS.capacity, alpha=0.6, seed=seed),
}


def one_seed_runs(lesson, kind, loss, prioritized_beta=None):
    learn = lesson["dqn_step"] if loss == "huber" else squared_error_step(lesson)
    return [train_dqn(learn, lesson["sync_target"], BUFFERS[kind](lesson, seed), seed,
                      SETTINGS, prioritized=kind == "prioritized",
                      prioritized_beta=prioritized_beta)
            for seed in SEEDS]


def many_seed_runs(lesson, kind, loss="huber", prioritized_beta=None, workers=1):
    replay = kind if kind in ("uniform", "recent") else (
        lambda seed: BUFFERS[kind](lesson, seed))
    return train_dqn_on_seeds(SEEDS, SETTINGS, lesson["td_targets"],
                              lesson["huber_loss_gradient"], replay=replay, loss=loss,
                              prioritized=kind == "prioritized",
                              prioritized_beta=prioritized_beta, workers=workers)


def assert_same_runs(many, alone):
    for seed, one, other in zip(SEEDS, alone, many):
        assert other.episode_ends == one.episode_ends, seed
        assert other.episode_returns == one.episode_returns, seed
        for network in ("online", "target"):
            for mine, theirs in zip(getattr(other, network).parameters(),
                                    getattr(one, network).parameters()):
                np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-9)


@pytest.mark.parametrize("kind, loss, beta", [
    ("uniform", "huber", None), ("recent", "huber", None), ("cer", "huber", None),
    ("uniform", "squared", None), ("recent", "squared", None),
    ("prioritized", "huber", None), ("prioritized", "huber", 0.0)])
def test_each_seed_learns_as_the_one_seed_loop_does(lesson, kind, loss, beta):
    assert_same_runs(many_seed_runs(lesson, kind, loss, beta),
                     one_seed_runs(lesson, kind, loss, beta))


def test_seeds_trained_in_threads_learn_as_the_one_seed_loop_does(lesson):
    # two groups (3 and 11, then 12): a seed's run does not depend on the seeds beside it
    assert_same_runs(many_seed_runs(lesson, "uniform", workers=2),
                     one_seed_runs(lesson, "uniform", "huber"))


def test_the_runner_trains_the_functions_it_is_given(lesson):
    # a td_targets that never bootstraps learns something else: the runner uses its
    # arguments, it has no answers of its own
    def rewards_only(target_network, rewards, next_observations, terminated, discount):
        return np.asarray(rewards, dtype=np.float64)

    given = train_dqn_on_seeds(SEEDS[:1], SETTINGS, rewards_only,
                               lesson["huber_loss_gradient"])[0]
    reference = many_seed_runs(lesson, "uniform")[0]
    assert not np.array_equal(given.online.parameters()[0], reference.online.parameters()[0])


def test_the_loss_changes_the_runs(lesson):
    firsts = [many_seed_runs(lesson, "uniform", loss)[0].online.parameters()[0]
              for loss in LOSSES]
    assert not np.array_equal(*firsts)


@pytest.mark.parametrize("arguments, message", [
    (dict(seeds=[]), "give at least one seed"),
    (dict(seeds=[1], replay="per"),
     "replay must be one of ('uniform', 'recent') or a function of the seed that makes its "
     "buffer, got 'per'"),
    (dict(seeds=[1], loss="l1"), "loss must be one of ('huber', 'squared')"),
    (dict(seeds=[1], prioritized=True),
     "prioritized replay needs a function that makes each seed's buffer, not 'uniform'"),
    (dict(seeds=[1], prioritized_beta=0.0), "prioritized_beta is for prioritized=True"),
    (dict(seeds=[1], workers=0), "workers must be a whole number of at least 1, got 0"),
])
def test_a_wrong_argument_is_refused_in_one_line(lesson, arguments, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        train_dqn_on_seeds(settings=SETTINGS, td_targets=lesson["td_targets"],
                           loss_gradient=lesson["huber_loss_gradient"], **arguments)


def test_a_td_targets_that_reads_more_than_predict_is_told_what_the_runner_offers(lesson):
    def from_weights(target_network, rewards, next_observations, terminated, discount):
        return target_network.weights  # the one-seed loop's QNetwork has them

    with pytest.raises(AttributeError, match=r"has predict\(\) only .* not 'weights'"):
        train_dqn_on_seeds(SEEDS[:1], SETTINGS, from_weights, lesson["huber_loss_gradient"])
