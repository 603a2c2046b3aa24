"""Lesson 01's claim holds for its own code, on its seed and on seeds it never uses.

The lesson says ("What to expect"): after 1000 episodes of Q-learning on Taxi (alpha 0.5,
epsilon 0.25 decaying by 0.99 per episode, discount 0.99) the greedy policy solves
roughly 95-98% of the 300 start states, not all of them, and where it solves one it is
usually optimal (its return equals the optimal policy's).

The run is the notebook's experiment cell's, with its agent and loop rebuilt by
``namespace_for``: seed 0 (the notebook's SEED) and seeds 100-102. Under a second each.

Why the assertions cannot flip by chance: the environment, the agent's exploration and
its tie-breaking are seeded, so each run is a fixed computation. Measured: solved 94.7%,
97.7%, 95.0%, 96.0%, 97.7% on seeds 0-4 and 97.3%, 97.3%, 96.0%, 97.3%, 95.3% on seeds
100-104; optimal where solved 88% (seed 2) to 99%. The bounds leave room for a change of
random streams that keeps the behaviour.
"""

import numpy as np
import pytest

from course.qtables import qtable_from_agent
from course.taxi import N_ACTIONS, N_STATES, evaluate_qtable, make_taxi, optimal_evaluation
from tests.support.in_process import namespace_for
from tests.support.seed_sets import each_seed

SEEDS = {"notebook": (0,), "fresh": (100, 101, 102)}  # the notebook's SEED = 0


@pytest.fixture(scope="module")
def lesson():
    return namespace_for("01_qlearning")


@each_seed("01", SEEDS)
def test_after_1000_episodes_the_greedy_policy_solves_most_start_states_mostly_optimally(
        lesson, seed):
    agent = lesson["QLearningAgent"](alpha=0.5, epsilon=0.25, discount=0.99,
                                     get_legal_actions=lambda state: range(N_ACTIONS),
                                     seed=seed)
    lesson["train_agent"](make_taxi(seed=seed), agent, lesson["play_and_train"],
                          n_episodes=1000, epsilon_decay=0.99, progress=False)
    greedy = evaluate_qtable(qtable_from_agent(agent, N_STATES, N_ACTIONS))
    assert 0.93 <= greedy.success_rate < 1.0, greedy.success_rate  # 0.947 to 0.977
    optimal = optimal_evaluation().returns[greedy.solved]
    assert np.mean(greedy.returns[greedy.solved] == optimal) >= 0.85  # 0.88 to 0.99
