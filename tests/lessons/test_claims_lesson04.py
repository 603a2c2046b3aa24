"""Lesson 04's claims, rerun with the notebook's settings, on its seeds and on fresh ones.

The headline (section 6): on bit flipping, a goal-relative table Q[state XOR goal, a]
(``course/goal_relative.py``) fed by the lesson's own ``HindsightReplayBuffer`` solves
every pair at 8 bits with and without HER, and at 16 bits plain replay solves nothing
while HER solves a large share. The explanation (end of section 5): at 8 bits the
(state, goal) table with HER updates more pairs than without, and solves most of the
pairs it updated, while plain replay solves almost none of its own.

Why no assertion can flip by chance: every run is deterministic. The environment (reset
with the seed), the agent and the buffer each draw from a numpy generator seeded with
the run's seed, and nothing else is random, so each run gives the same numbers every
time with the same numpy. The thresholds leave wide margins (the values measured are
beside each assertion) so that a change of numpy or platform that moves a float here
and there cannot flip them either; only a change in what the lesson's code does can.
"""

import numpy as np
import pytest

from course.bit_flipping import greedy_success_rate
from course.goal_relative import coverage, relative_greedy_success_rate, train_goal_relative
from tests.support.in_process import namespace_for
from tests.support.seed_sets import each_seed

SEEDS = {"notebook": (0, 1, 2), "fresh": (100, 101, 102)}  # the notebook's SEEDS: range(3)
RELATIVE_EPISODES = 2000  # the notebook's RELATIVE_EPISODES: one budget at every n


@pytest.fixture(scope="module")
def lesson():
    """The source notebook's namespace: its buffer, agent, SETTINGS and training loop."""
    return namespace_for("04_hindsight_replay")


def goal_relative_success(lesson, n_bits, k, seed):
    """Greedy success over all pairs of the goal-relative table, as the notebook runs it."""
    _, greedy = train_goal_relative(lesson["HindsightReplayBuffer"],
                                    lesson["play_and_learn_with_her"], n_bits, RELATIVE_EPISODES,
                                    k=k, seed=seed, initial_value=lesson["INITIAL_VALUE"],
                                    **lesson["SETTINGS"])
    return greedy


@each_seed("04", SEEDS)
def test_at_16_bits_plain_replay_collapses_and_her_still_solves_many_pairs(lesson, seed):
    her = goal_relative_success(lesson, 16, k=4, seed=seed)
    plain = goal_relative_success(lesson, 16, k=0, seed=seed)
    # measured: HER 0.361 to 0.366 on seeds 0-2; without HER 0.000 to 0.001
    assert her >= 0.25, f"seed {seed}: HER solved {her:.3f} of the pairs at 16 bits"
    assert plain <= 0.05, f"seed {seed}: plain replay solved {plain:.3f} at 16 bits"
    assert her - plain >= 0.25, f"seed {seed}: HER {her:.3f} vs plain {plain:.3f}"


@each_seed("04", SEEDS)
def test_at_8_bits_both_solve_every_pair(lesson, seed):
    # measured: 1.000 for both on seeds 0-2
    for k in (0, 4):
        success = goal_relative_success(lesson, 8, k=k, seed=seed)
        assert success >= 0.95, f"seed {seed}, k = {k}: solved {success:.3f} at 8 bits"


@each_seed("04", {"notebook": (0,), "fresh": (100,)})
def test_state_goal_table_at_8_bits_is_capped_by_coverage_not_by_her(lesson, seed):
    # the notebook's coverage table, seed 0 of its 8-bit runs (4000 episodes)
    split = {}
    for k in (0, 4):
        _, qtable = lesson["train_bit_flipping"](8, 4000, "future", k, seed=seed)
        split[k] = coverage(qtable, lesson["INITIAL_VALUE"])
    plain, her = split[0], split[4]
    # measured (seed 0): pairs ever updated 0.313 without HER, 0.481 with; both far from 1
    assert plain["pairs updated"] + 0.1 <= her["pairs updated"] <= 0.7, split
    # measured (seed 0): solved among updated 0.038 without HER, 0.688 with
    assert plain["solved among updated"] <= 0.15 and her["solved among updated"] >= 0.5, split


def test_goal_relative_success_rate_is_exact_over_all_state_goal_pairs():
    # the notebook's claim that 2^n - 1 differences stand for all 2^n (2^n - 1) pairs:
    # expand a random Q[d, a] to Q[s, g, a] = Q[s XOR g, a] and roll out every pair
    rng = np.random.default_rng(0)
    n_bits = 5
    qvalues = rng.integers(-3, 1, size=(2 ** n_bits, n_bits)).astype(float)  # many ties
    states, goals = np.meshgrid(np.arange(2 ** n_bits), np.arange(2 ** n_bits), indexing="ij")
    full = qvalues[states ^ goals]
    assert relative_greedy_success_rate(qvalues) == greedy_success_rate(full)
    assert coverage(full, -3.0)["solved overall"] == greedy_success_rate(full)
