"""Lesson 06's CartPole comparison of the replay kinds, paired by seed, on sets of seeds.

    python benchmarks/capstone_seed_sets.py [--sets 0 10 20] [--size 10]

Runs the capstone's own study code (the source notebook's ``run_setting``, ``SETTINGS``
and ``ENVIRONMENTS``) on discretised CartPole for no replay, uniform replay, CER and PER,
each learning only from replay and with the online update, 300 episodes, on each set of
``--size`` seeds starting at each of ``--sets``. Prints, per set, each setting's early
(episodes 1-150) and late (201-300) mean return, and the paired differences (same seed)
the lesson's sentences rest on, as mean [95% t-interval]: each replay kind against no
replay early, and no replay against the others late.

Measured (2026-11-29; 6.5 s of CPU per seed), sets 0-9 (the notebook's) / 10-19 / 20-29:
- early, uniform + online minus no replay: +17 [11, 23] / +16 [6, 25] / +22 [11, 33];
  PER minus no replay +8 [-1, 16] / +10 [-2, 21] / +27 [17, 38]; PER + online +5
  [-0.2, 9] / -2 [-10, 7] / +11 [3, 18];
- late, no replay minus uniform + online: +34 [-49, 117] / +35 [-52, 122] / +131
  [39, 223]; PER + online minus uniform + online -63 [-93, -32] / -71 [-96, -45] / -45
  [-89, -1].
So the lesson says that ten seeds cannot tell no replay from replay late: the two sets it
quotes cannot, and a third put no replay ahead.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from tests.support.in_process import namespace_for

ENVIRONMENT = "CartPole"
SETTINGS = ("no replay", "uniform", "uniform + online", "CER", "CER + online", "PER",
            "PER + online")


def interval(differences):
    """Mean and 95% t-interval over seeds, as the lesson prints them."""
    values = np.asarray(differences, dtype=np.float64)
    half = stats.sem(values) * stats.t.ppf(0.975, values.size - 1)
    mean = values.mean()
    return f"{mean:+.1f} [{mean - half:+.1f}, {mean + half:+.1f}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, nargs="+", default=[0, 10, 20],
                        help="the first seed of each set (default: 0 10 20)")
    parser.add_argument("--size", type=int, default=10, help="seeds per set (default: 10)")
    args = parser.parse_args(argv)
    study = namespace_for("06_capstone")
    environment = study["ENVIRONMENTS"][ENVIRONMENT]
    episodes = environment["episodes"]
    windows = {part: environment[part] for part in ("early", "late")}
    started = time.process_time()
    for first in args.sets:
        seeds = range(first, first + args.size)
        means = {part: {name: [] for name in SETTINGS} for part in windows}
        for seed in seeds:
            for name in SETTINGS:
                returns = study["run_setting"](ENVIRONMENT, study["SETTINGS"][name], seed,
                                               episodes)["returns"]
                for part, (start, end) in windows.items():
                    means[part][name].append(float(returns[start - 1:end].mean()))
        print(f"== seeds {seeds.start}-{seeds.stop - 1}")
        for name in SETTINGS:
            print(f"  {name:18} early {np.mean(means['early'][name]):6.1f}   "
                  f"late {np.mean(means['late'][name]):6.1f}")
        early, late = means["early"], means["late"]
        for name in SETTINGS[1:]:
            print(f"  early, {name} minus no replay: "
                  f"{interval(np.subtract(early[name], early['no replay']))}")
        for name in SETTINGS[1:]:
            print(f"  late, no replay minus {name}: "
                  f"{interval(np.subtract(late['no replay'], late[name]))}")
        print(f"  late, PER + online minus uniform + online: "
              f"{interval(np.subtract(late['PER + online'], late['uniform + online']))}")
    print(f"{time.process_time() - started:.0f} s of CPU")


if __name__ == "__main__":
    main()
