"""Record lesson 06's study on its two seed sets, for the test of its ten-seed sentences.

    python benchmarks/capstone_record.py [--jobs 2]

Runs the capstone's own study code (the source notebook's ``run_setting``, ``SETTINGS``
and ``ENVIRONMENTS``) for every setting on both environments, 300 episodes, on the
notebook's seeds 0-9, on the fresh seeds 10-19 and on 20-29 (two sentences quote them), and
writes each run's early and late
mean return to ``tests/lessons/records/lesson06_study.json``.

``tests/lessons/test_claims_lesson06_intervals.py`` reads it: every interval the lesson's
sentences quote must be the record's, and say only what both sets resolve. That test
also reruns, at no extra cost, the runs the claims test computes anyway (three seeds of
each set) and requires the record to hold exactly their numbers; when the study code
changes, it fails and asks for this script to be run again. About 6 minutes of CPU.
"""

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from tests.support.in_process import namespace_for  # noqa: E402

RECORD = REPOSITORY / "tests" / "lessons" / "records" / "lesson06_study.json"
# the notebook's seeds, the fresh set its sentences quote after a slash, and ten more
SEED_SETS = {"notebook": list(range(10)), "fresh": list(range(10, 20)),
             "more": list(range(20, 30))}


def study():
    return namespace_for("06_capstone")


def windows_of(run, environment):
    """{"early": mean, "late": mean} of one run, over the notebook's windows, as the
    notebook's ``window_mean`` computes them."""
    return {part: float(np.mean(run["returns"][first - 1:last]))
            for part in ("early", "late") for first, last in [environment[part]]}


def one_seed(seed):
    """{environment: {setting: {"early": ..., "late": ...}}} of every run of ``seed``."""
    code = study()
    found = {}
    for name_of_environment, environment in code["ENVIRONMENTS"].items():
        found[name_of_environment] = {
            name: windows_of(code["run_setting"](name_of_environment, setting, seed,
                                                 environment["episodes"]), environment)
            for name, setting in code["SETTINGS"].items()}
    return seed, found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    args = parser.parse_args(argv)
    started = time.time()
    seeds = [seed for chosen in SEED_SETS.values() for seed in chosen]
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            by_seed = dict(pool.map(one_seed, seeds))
    else:
        by_seed = dict(map(one_seed, seeds))
    code = study()
    runs = {environment: {name: {str(seed): by_seed[seed][environment][name] for seed in seeds}
                          for name in code["SETTINGS"]}
            for environment in code["ENVIRONMENTS"]}
    record = {"made_by": "python benchmarks/capstone_record.py",
              "episodes": {environment: code["ENVIRONMENTS"][environment]["episodes"]
                           for environment in code["ENVIRONMENTS"]},
              "seed_sets": SEED_SETS, "runs": runs}
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {RECORD.relative_to(REPOSITORY)}: {len(seeds)} seeds, "
          f"{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
