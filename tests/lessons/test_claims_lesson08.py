"""Lesson 08's claims hold on the notebook's seeds and on twenty it never used.

The lesson's "What to expect" sections say, over 20 seeds per setting, as paired 95%
t-intervals of the mean training return (the area under the learning curve):

- capacity x n (DQN at replay ratio 0.25, 20,000 steps, capacities 1,000 / 4,500 / 20,000):
  with 1-step targets a larger buffer helps (20,000 and 4,500 each beat 1,000); with
  3-step targets 20,000 beats 1,000 too, and 20 seeds cannot tell whether 3-step targets
  change that gain (the interaction's interval holds 0); with 5-step targets the 1,000 to
  4,500 gain is smaller than with 1-step, and 20 seeds cannot tell whether 5-step DQN
  gains from 20,000 over 1,000;
- the replay ratio (n = 3, capacity 4,500): 2 updates per step beat 0.25;
- A2C's rollouts replayed without correction: at learning rate 0.01, 4 and 8 uses cost
  (training return, and 4 uses the greedy return too); at 0.001, 4 uses help, and 20 seeds
  cannot tell what they do to the greedy return; 4 uses at 0.001 and 1 use at 0.01
  cannot be told apart.

Each is checked on the notebook's seeds 0-19 and the fresh seeds 1000-1019, with the
notebook's code: its ``n_step_return`` and ``gae`` (the solution notebook's answers) in the
course's trainers ``course.nstep_dqn.train`` and ``course.rollout_a2c.train_a2c``, with the
notebook's settings.

Why the assertions cannot flip by chance: every run is a fixed computation of its seed
(environment, initial weights, exploration and batches come from generators of the
seed, and a run does not depend on the runs beside it), so the intervals are fixed
numbers; they change only when the code or numpy's random streams do. Measured when this
test was written (notebook seeds / fresh seeds), mean [95% t-interval]: n=1, 20,000 minus
1,000: +37 [20, 55] / +45 [18, 71]; n=1, 4,500 minus 1,000: +37 [25, 49] / +27 [10, 45];
n=3, 20,000 minus 1,000: +40 [6, 74] / +46 [16, 77]; interaction at n=3: 2 [-35, 40] /
2 [-33, 36]; interaction at n=5, 1,000 to 4,500: -37 [-60, -15] / -24 [-43, -5]; n=5,
20,000 minus 1,000: 17 [-13, 47] / 25 [-7, 57]; ratio 2 minus 0.25: +59 [13, 106] /
+79 [29, 130]; A2C at 0.01, 4 uses minus 1: -91 [-123, -59] / -94 [-120, -69] (greedy
-142 [-213, -70] / -155 [-234, -77]), 8 uses: -107 [-132, -82] / -114 [-137, -92]; at
0.001, 4 uses: +66 [51, 81] / +55 [41, 69] (greedy -19 [-103, 66] / -29 [-164, 106]);
4 uses at 0.001 minus 1 use at 0.01: +3 [-22, 28] / -9 [-32, 13].
The runs (about 60 s of CPU per seed set) are read from
``tests/lessons/records/lesson08_<set>.json`` once each study's first and last seed,
trained again here, give the record's numbers to the last bit; otherwise they are all
trained here (tests/support/run_records.py). Each set's DQN grid, ratio runs and A2C runs
are xdist groups of their own.
"""

from functools import cache, lru_cache

import numpy as np
import pytest

from course.nstep_dqn import Run, Settings, train
from course.plotting import mean_and_band
from course.rollout_a2c import A2CSettings, train_a2c
from tests.support.in_process import namespace_for
from tests.support.run_records import RunRecord
from tests.support.seed_sets import SET_NAMES

SEED_SETS = {"notebook": range(20), "fresh": range(1000, 1020)}  # the notebook's: range(20)
SETTINGS = Settings()  # the notebook's SETTINGS
NS, CAPACITIES = (1, 3, 5), (1_000, 4_500, 20_000)
A2C = A2CSettings()  # the notebook's A2C


def in_group(kind):
    """Parametrize ``seed_set`` over both sets, each set's ``kind`` runs in an xdist group."""
    return pytest.mark.parametrize("seed_set", [
        pytest.param(name, id=name, marks=pytest.mark.xdist_group(f"claims-08-{kind}-{name}"))
        for name in SET_NAMES])


@lru_cache(maxsize=1)
def lesson():
    return namespace_for("08_nstep_replay")


def recorded(seed_set, key, compute):
    """``compute(seeds)`` on all the set's seeds: from the set's record once its first and
    last seeds' runs, made again here, match it (tests/support/run_records.py)."""
    return RunRecord(f"lesson08_{seed_set}").per_seed(key, SEED_SETS[seed_set], compute)


def grid_cells(seeds, settings=SETTINGS, cells=None):
    """{"n=N capacity=C": mean training return over ``seeds``} of the grid's cells."""
    cells = cells or [(n, capacity) for n in NS for capacity in CAPACITIES]
    results = train([Run(seed, capacity, n) for n, capacity in cells for seed in seeds],
                    settings, lesson()["n_step_return"])
    found = {(r.run.n, r.run.capacity, r.run.seed): r.mean_training_return(settings.steps)
             for r in results}
    return {f"n={n} capacity={capacity}": np.array([found[n, capacity, seed] for seed in seeds])
            for n, capacity in cells}


@cache
def grid(seed_set):
    """{(n, capacity, seed): mean training return} of the notebook's grid."""
    cells = recorded(seed_set, "grid", grid_cells)
    return {(n, capacity, seed): cells[f"n={n} capacity={capacity}"][index]
            for n in NS for capacity in CAPACITIES
            for index, seed in enumerate(SEED_SETS[seed_set])}


@cache
def reuse(seed_set, rate, uses):
    """{measure: array over the seeds} of A2C at ``rate`` with each rollout used ``uses``
    times."""
    def runs(seeds):
        results = train_a2c(seeds, uses, A2C.with_(learning_rate=rate), lesson()["gae"])
        return {"mean": np.array([r.mean_training_return(A2C.steps) for r in results]),
                "greedy": np.array([r.greedy_return for r in results])}

    return recorded(seed_set, f"a2c rate={rate} uses={uses}", runs)


def interval(values):
    """(low, high): the 95% t-interval of the mean, as the notebook's with_interval."""
    mean, half = mean_and_band(np.asarray(values, dtype=np.float64)[:, None])
    return mean[0] - half[0], mean[0] + half[0]


def capacity_gain(seed_set, n, capacity):
    runs, seeds = grid(seed_set), SEED_SETS[seed_set]
    return np.array([runs[n, capacity, s] - runs[n, 1_000, s] for s in seeds])


@in_group("dqn")
@pytest.mark.parametrize("n, capacity", [(1, 20_000), (1, 4_500), (3, 20_000)])
def test_a_larger_buffer_helps_with_1_and_3_step_targets(seed_set, n, capacity):
    low, _ = interval(capacity_gain(seed_set, n, capacity))
    assert low > 0, low


@in_group("dqn")
def test_20_seeds_cannot_tell_whether_3_step_targets_change_what_capacity_buys(seed_set):
    low, high = interval(capacity_gain(seed_set, 3, 20_000) - capacity_gain(seed_set, 1, 20_000))
    assert low < 0 < high, (low, high)


@in_group("dqn")
def test_with_5_step_targets_growing_to_4500_buys_less_than_with_1_step(seed_set):
    _, high = interval(capacity_gain(seed_set, 5, 4_500) - capacity_gain(seed_set, 1, 4_500))
    assert high < 0, high


@in_group("dqn")
def test_20_seeds_cannot_tell_whether_5_step_dqn_gains_from_20000_over_1000(seed_set):
    low, high = interval(capacity_gain(seed_set, 5, 20_000))
    assert low < 0 < high, (low, high)


@in_group("ratio")
def test_two_updates_per_step_beat_a_quarter(seed_set):
    def at_each_ratio(seeds):
        return {f"ratio {ratio}": grid_cells(seeds, SETTINGS.with_(replay_ratio=ratio),
                                             [(3, 4_500)])["n=3 capacity=4500"]
                for ratio in (2.0, SETTINGS.replay_ratio)}

    ratios = recorded(seed_set, "ratio", at_each_ratio)
    low, _ = interval(ratios["ratio 2.0"] - ratios[f"ratio {SETTINGS.replay_ratio}"])
    assert low > 0, low


@in_group("a2c")
@pytest.mark.parametrize("uses", [4, 8])
def test_replaying_a2c_rollouts_costs_at_its_good_learning_rate(seed_set, uses):
    _, high = interval(reuse(seed_set, 0.01, uses)["mean"] - reuse(seed_set, 0.01, 1)["mean"])
    assert high < 0, high


@in_group("a2c")
def test_four_uses_cost_greedy_return_at_the_good_rate_and_cannot_be_told_at_the_slow_one(
        seed_set):
    _, high = interval(reuse(seed_set, 0.01, 4)["greedy"] - reuse(seed_set, 0.01, 1)["greedy"])
    assert high < 0, high
    low, high = interval(reuse(seed_set, 0.001, 4)["greedy"] - reuse(seed_set, 0.001, 1)["greedy"])
    assert low < 0 < high, (low, high)


@in_group("a2c")
def test_reuse_helps_where_a2c_steps_are_too_small(seed_set):
    low, _ = interval(reuse(seed_set, 0.001, 4)["mean"] - reuse(seed_set, 0.001, 1)["mean"])
    assert low > 0, low


@in_group("a2c")
def test_20_seeds_cannot_tell_the_best_reuse_from_plain_a2c_at_its_best_rate(seed_set):
    low, high = interval(reuse(seed_set, 0.001, 4)["mean"] - reuse(seed_set, 0.01, 1)["mean"])
    assert low < 0 < high, (low, high)
