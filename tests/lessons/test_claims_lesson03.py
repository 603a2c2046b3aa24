"""Lesson 03's headline claims hold for its own code, on its seeds and on fresh ones.

The lesson says:
- Blind Cliffwalk (section 6): PER needs far fewer updates than uniform replay to learn
  the Q-values (medians over ten walks; at n = 8: 6,792 against 932).
- Taxi (section 7, online + 8 replayed per step, 10,000-transition buffer, seeds 0-4):
  PER without importance weights (beta = 0) is ahead of uniform replay on average after
  100 episodes, by a margin five seeds do not pin down; PER as the paper runs it (beta
  annealed 0.4 -> 1 over 200 episodes) is not better than uniform; and the weights are
  what holds PER back (beta = 0 ahead of the annealed run on every seed). With Taxi's
  rewards unclipped, the largest priority ends near 20.
- Sure thing or lottery (section 8, ten seeds): without weights PER learns the lottery's
  value (true 0.5) far too high, above the sure thing's 1; with beta = 1 it is unbiased,
  and closer to the truth than the unweighted estimate on every seed.
Each is checked on the notebook's seeds and on seeds it never uses (100 on: three Taxi
runs, five walks, ten lotteries).

The runs are the notebook's: its source cells (experiments and tests skipped) rebuilt by
``namespace_for``, driven here the way its experiment cells drive them, with the same
settings and seeds, so these are runs whose numbers the lesson quotes. The Taxi runs
stop at episode 100: nothing after it changes the first 100 (beta's schedule is still
computed over 200 episodes). About 25 seconds on one core per set of seeds.

Why the assertions cannot flip by chance: everything random is seeded (environments,
agents, buffers, memories), so each run is a fixed computation that gives the same
numbers every time. The margins are there for the day the random streams change (a new
numpy or gymnasium, or a correct but differently written buffer); each comment gives the
values measured, over more seeds than the test runs where that was cheap.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from course.blind_cliffwalk import (UniformMemoryReplay, learn_from_replay,  # noqa: E402
                                    replay_memory)
from course.legal_actions import AllActions  # noqa: E402
from course.lottery import LOTTERY, STATE, SURE, TRUE_QVALUES, lottery_memory  # noqa: E402
from course.qtables import qtable_from_agent  # noqa: E402
from course.taxi import N_ACTIONS, N_STATES, evaluate_qtable, make_taxi  # noqa: E402
from tests.support.in_process import namespace_for  # noqa: E402
from tests.support.seed_sets import each_seed_set, seed_sets  # noqa: E402

# Taxi, as in the notebook's taxi-experiment cell (its seeds, and five it never uses)
TAXI_SEEDS = {"notebook": range(5), "fresh": range(100, 103)}
SCHEDULE_EPISODES, EPISODES, CAPACITY, REPLAYED = 200, 100, 10_000, 8
SETTINGS = dict(alpha=0.5, epsilon=0.25, discount=0.99)
TAXI_METHODS = ("uniform", "PER, beta annealed", "PER, beta = 0")
# Blind Cliffwalk, as in the cliffwalk-experiment cell (one of its sizes)
WALK_N, WALK_SEEDS = 8, {"notebook": range(10), "fresh": range(100, 105)}
# the lottery, as in the lottery-experiment cell
LOTTERY_SEEDS = {"notebook": range(10), "fresh": range(100, 110)}
PLAYS, BATCHES, BATCH_SIZE, STEP_SIZE = 500, 300, 16, 0.1


@pytest.fixture(scope="module")
def lesson():
    return namespace_for("03_prioritized_replay")


@pytest.fixture(scope="module", params=seed_sets("03"))
def taxi(lesson, request):
    """``{method: [(% of the 300 start states solved after 100 episodes, buffer), one per
    seed]}``."""
    results = {method: [] for method in TAXI_METHODS}
    for seed in TAXI_SEEDS[request.param]:
        for method in TAXI_METHODS:
            env = make_taxi(seed)
            agent = lesson["QLearningAgent"](
                **SETTINGS, get_legal_actions=lambda state: range(N_ACTIONS), seed=seed)
            if method == "uniform":
                buffer = lesson["ReplayBuffer"](CAPACITY, seed=seed)
                play = lambda env, agent, buffer=buffer: (
                    lesson["play_and_train_with_replay"](env, agent, buffer, REPLAYED))
            else:
                buffer = lesson["PrioritizedReplayBuffer"](CAPACITY, alpha=0.6, seed=seed)
                episode = iter(range(SCHEDULE_EPISODES))
                if method == "PER, beta = 0":
                    beta = lambda: 0.0
                else:
                    beta = lambda episode=episode: lesson["annealed_beta"](
                        next(episode), SCHEDULE_EPISODES)
                play = lambda env, agent, buffer=buffer, beta=beta: (
                    lesson["play_and_train_with_per"](env, agent, buffer, REPLAYED, beta()))
            lesson["train_agent"](env, agent, play, EPISODES, epsilon_decay=0.99,
                                  progress=False)
            greedy = evaluate_qtable(qtable_from_agent(agent, N_STATES, N_ACTIONS))
            results[method].append((100 * greedy.success_rate, buffer))
    return results


def solved(taxi, method):
    return np.array([percent for percent, _ in taxi[method]])


def test_per_without_weights_is_not_behind_uniform_on_taxi(taxi):
    # % solved after 100 episodes, seeds 0-4: uniform 70 / 89 / 83 / 83 / 86, PER beta = 0
    # 97 / 92 / 93 / 95 / 95 (ahead by 12.0 on average); seeds 100-102: uniform 90.3 /
    # 86.7 / 87.0, beta = 0 92.3 / 85.3 / 90.7 (ahead by 1.4, behind on one seed by 1.3;
    # on 100-104, ahead by 1.2). The lesson says "ahead on average, by margins five seeds
    # do not pin down": asked, ahead on average, and nowhere behind by 5 points or more.
    uniform, unweighted = solved(taxi, "uniform"), solved(taxi, "PER, beta = 0")
    assert (unweighted - uniform).mean() > 0, (unweighted.round(1), uniform.round(1))
    assert np.all(unweighted - uniform > -5), (unweighted.round(1), uniform.round(1))


def test_per_as_the_paper_runs_it_is_not_better_than_uniform_on_taxi(taxi):
    # Annealed beta minus uniform after 100 episodes, seeds 0-9: -6.3, -16.6, -10.0,
    # -0.7, -10.7, +0.6, -8.4, -12.4, -10.3, -13.0 points (mean -8.9 on seeds 0-4). The
    # lesson says "not better": asked, a mean difference at or below 0.
    uniform, annealed = solved(taxi, "uniform"), solved(taxi, "PER, beta annealed")
    assert (annealed - uniform).mean() <= 0, (annealed.round(1), uniform.round(1))


def test_the_weights_are_what_holds_per_back_on_taxi(taxi):
    # beta = 0 minus annealed beta after 100 episodes, seeds 0-9: 10.0 to 33.0 points.
    # Asked: 5 points on every seed.
    annealed, unweighted = solved(taxi, "PER, beta annealed"), solved(taxi, "PER, beta = 0")
    assert np.all(unweighted - annealed >= 5), (unweighted.round(1), annealed.round(1))


def test_unclipped_rewards_leave_the_largest_priority_near_twenty(taxi):
    # Rewards of -10 and +20 make TD errors of 10 to 20 once deliveries begin, and the
    # largest priority never goes down: after 100 episodes (and still after 200) it stood
    # at 16.7 to 19.8 on seeds 0-4. Asked: between 15 and 25 on every PER run.
    for method in ("PER, beta annealed", "PER, beta = 0"):
        largest = np.array([buffer.max_priority for _, buffer in taxi[method]])
        assert np.all((largest >= 15) & (largest <= 25)), (method, largest.round(1))


@each_seed_set("03")
def test_per_learns_the_blind_cliffwalk_in_fewer_updates(lesson, seed_set):
    # n = 8 (a memory of 510), seeds 0-9: medians 6,792 (uniform) and 932 (PER), 7.3
    # times fewer. Asked: PER's median at most a third of uniform's.
    uniform, prioritized = [], []
    for seed in WALK_SEEDS[seed_set]:
        memory = replay_memory(WALK_N, seed)
        uniform.append(learn_from_replay(UniformMemoryReplay(memory, seed=seed), memory,
                                         1_000_000).updates_to_solve)
        buffer = lesson["PrioritizedReplayBuffer"](len(memory), alpha=0.6, seed=seed)
        for transition in memory.rows():
            buffer.add(*transition)
        prioritized.append(learn_from_replay(buffer, memory, 1_000_000).updates_to_solve)
    assert None not in uniform + prioritized, (uniform, prioritized)
    assert np.median(prioritized) * 3 <= np.median(uniform), (prioritized, uniform)


def learn_lottery(lesson, seed, alpha, beta):
    """The lottery-experiment cell's run: (Q(lottery) averaged over the second half of
    the batches, Q(sure thing) at the end)."""
    memory = lottery_memory(PLAYS, seed)
    buffer = lesson["PrioritizedReplayBuffer"](len(memory), alpha=alpha, seed=seed)
    for transition in memory.rows():
        buffer.add(*transition)
    agent = lesson["QLearningAgent"](alpha=STEP_SIZE, epsilon=0.0, discount=0.99,
                                     get_legal_actions=AllActions(2), seed=seed)
    qvalues = []
    for _ in range(BATCHES):
        *transitions, weights, slots = buffer.sample(BATCH_SIZE, beta)
        td_errors = [lesson["prioritized_q_update"](agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        buffer.update_priorities(slots, td_errors)
        qvalues.append(agent.get_qvalue(STATE, LOTTERY))
    return np.mean(qvalues[BATCHES // 2:]), agent.get_qvalue(STATE, SURE)


@each_seed_set("03")
def test_importance_weights_remove_the_bias_of_a_noisy_reward(lesson, seed_set):
    # Seeds 0-9, true value 0.5: without weights Q(lottery) = 1.13 to 1.87 (mean 1.54,
    # bias +1.04, 95% interval [0.85, 1.22]); with beta = 1, 0.30 to 0.72 (mean 0.51,
    # bias +0.01 [-0.10, 0.12]); Q(sure thing) = 1.00 in every run.
    true_value = TRUE_QVALUES[LOTTERY]
    unweighted = [learn_lottery(lesson, seed, 0.6, 0.0) for seed in LOTTERY_SEEDS[seed_set]]
    weighted = [learn_lottery(lesson, seed, 0.6, 1.0) for seed in LOTTERY_SEEDS[seed_set]]
    biased = np.array([lottery for lottery, _ in unweighted])
    corrected = np.array([lottery for lottery, _ in weighted])
    # the weighted estimate is the closer one on every seed
    assert np.all(np.abs(corrected - true_value) < np.abs(biased - true_value)), (
        corrected.round(2), biased.round(2))
    # unbiased with weights: the mean within 0.15 of the truth (its interval is +-0.11)
    assert abs(corrected.mean() - true_value) <= 0.15, corrected.round(2)
    # biased without: by more than 0.6 on average (measured 1.04, interval from 0.85)
    assert biased.mean() - true_value >= 0.6, biased.round(2)
    # ... enough to rank the lottery above the sure thing on every seed (lowest: 1.13
    # against 1.00), where the weighted runs never do (highest: 0.72)
    assert all(lottery > sure for lottery, sure in unweighted), unweighted
    assert all(lottery < sure for lottery, sure in weighted), weighted
