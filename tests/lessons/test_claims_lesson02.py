"""Lesson 02's headline claims hold for its own code, run with fixed seeds.

The lesson says (section 3, "What to expect"): on Taxi, learning online and also from 8
transitions replayed per step out of a 1000-transition buffer (its
``play_and_train_with_replay``) learns faster early than online Q-learning alone, and
after 1000 episodes its greedy policy solves more of the 300 start states, although five
seeds cannot tell the training returns of the two apart at the end.

The runs are the notebook's: its source cells (experiments and tests skipped) rebuilt by
``namespace_for``, its agent settings, buffer, 1000 episodes and seeds 0-4, so these are
the runs whose numbers the lesson quotes. About 12 seconds on one core.

Why the assertions cannot flip by chance: everything random is seeded (environment,
agent, buffer), so each run is a fixed computation and gives the same numbers every
time. The margins are there for the day the random streams change (a new numpy or
gymnasium, or a correct but differently written buffer): each comment gives the values
measured over seeds 0-9, every "ahead by" margin is about half the smallest per-seed
gap among them (the one "alike" check allows 2.5 points where 1.7 was the most
measured), and every assertion holds on every seed, not only on the mean.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from course.plotting import mean_and_band  # noqa: E402
from course.qtables import qtable_from_agent  # noqa: E402
from course.taxi import N_STATES, evaluate_qtable  # noqa: E402
from tests.support.in_process import namespace_for  # noqa: E402
from tests.support.seed_sets import seed_sets  # noqa: E402

SEEDS = {"notebook": range(5), "fresh": range(100, 105)}  # the notebook's SEEDS: range(5)
EPISODES, EARLY, CAPACITY, REPLAYED = 1000, 100, 1000, 8  # the notebook's set-up
SETTINGS = dict(alpha=0.5, epsilon=0.25, discount=0.99)


@pytest.fixture(scope="module", params=seed_sets("02"))
def runs(request):
    """``{"no replay" | "replay": [(returns, greedy evaluation after the last episode),
    one per seed]}``, trained as the notebook's experiment trains them."""
    lesson = namespace_for("02_replay_buffer")
    results = {"no replay": [], "replay": []}
    for seed in SEEDS[request.param]:
        for method in results:
            env = lesson["make_taxi"](seed)
            agent = lesson["QLearningAgent"](
                **SETTINGS, get_legal_actions=lambda state: range(lesson["N_ACTIONS"]),
                seed=seed)
            buffer = (lesson["ReplayBuffer"](CAPACITY, seed=seed) if method == "replay"
                      else None)
            play = lesson["play_and_train_with_replay"]
            returns = lesson["train_agent"](
                env, agent,
                lambda env, agent: play(env, agent, buffer, replay_batch_size=REPLAYED),
                EPISODES, epsilon_decay=0.99, progress=False)
            qtable = qtable_from_agent(agent, N_STATES, lesson["N_ACTIONS"])
            greedy = evaluate_qtable(qtable)
            results[method].append((returns, greedy))
    return results


def test_replay_is_not_worse_than_online_learning_early(runs):
    # Mean return over the first 100 episodes, measured on seeds 0-9: no replay -270.5
    # to -292.0, replay -156.9 to -174.2; replay ahead by at least 98 on every seed. The
    # lesson claims "not worse"; asking for 50 points more on every seed is still half
    # the smallest gap measured.
    online = np.array([returns[:EARLY].mean() for returns, _ in runs["no replay"]])
    replayed = np.array([returns[:EARLY].mean() for returns, _ in runs["replay"]])
    assert np.all(replayed - online >= 50), (
        f"first {EARLY} episodes: replay {replayed.round(1)}, no replay {online.round(1)}")


def test_replay_solves_more_start_states_at_the_end(runs):
    # Share of the 300 start states the final greedy policy solves, seeds 0-9: no replay
    # 93.0% to 97.7% (a few rarely visited states still unlearned), replay 99.7% to 100%;
    # replay ahead on every seed by at least 2 points (6 start states). The margin asked
    # is 1 point (3 start states) on every seed.
    online = np.array([greedy.success_rate for _, greedy in runs["no replay"]])
    replayed = np.array([greedy.success_rate for _, greedy in runs["replay"]])
    assert np.all(replayed - online >= 0.01), (
        f"start states solved after {EPISODES} episodes: replay {replayed}, "
        f"no replay {online}")
    # the lesson's "nearly all" (seeds 0-9: never below 99.7%)
    assert replayed.min() >= 0.99, replayed


def test_five_seeds_cannot_tell_the_final_training_returns_apart(runs):
    # The last 100 episodes average 6.5 to 8.2 with replay and 6.9 to 8.4 without on seeds
    # 0-9, both near the optimum of 7.9; the largest per-seed gap measured is 1.7 points
    # (seed 5), the most allowed 2.5. Paired by seed, replay minus no replay: -0.2 +- 0.8
    # on seeds 0-4, -0.4 +- 0.8 on 100-104 (and +0.1 +- 0.4 on 200-204): the lesson says
    # five seeds cannot tell them apart, so the 95% t-interval must hold 0 on both sets.
    online = np.array([returns[-100:].mean() for returns, _ in runs["no replay"]])
    replayed = np.array([returns[-100:].mean() for returns, _ in runs["replay"]])
    assert np.all(np.abs(replayed - online) <= 2.5), (replayed.round(2), online.round(2))
    mean, half = mean_and_band((replayed - online)[:, None])
    assert abs(mean[0]) < half[0], (mean[0], half[0])
