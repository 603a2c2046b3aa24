"""How long the grader's command line takes before it does anything.

    python benchmarks/cli_startup.py [--repeats 5]

Each command runs ``--repeats`` times in a fresh interpreter; the benchmark prints the
median wall time and CPU time (user + system) of each, and its ratio to a bare
``python -c pass`` measured in the same run, so that a loaded machine shows as a slow
baseline rather than a slow grader. Goals (this 2-core machine, quiet): ``--help`` under
0.3 s, a one-line argument error (a mistyped path, a bad number) under 1 s. On a loaded
machine read the CPU column: wall time there is mostly waiting for a CPU.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

from summary import load_average, print_summary  # noqa: E402

BASELINE = ["-c", "pass"]
COMMANDS = {  # name: (arguments after python, goal in seconds)
    "--help": (["-m", "grader", "--help"], 0.3),
    "grade, mistyped path": (["-m", "grader", "grade", "no-such-folder"], 1.0),
    "grade, bad --workers": (["-m", "grader", "grade", "x", "--workers", "0"], 1.0),
    "check, mistyped path": (["-m", "grader", "check", "no-such.ipynb"], 1.0),
    "export, missing report": (["-m", "grader", "export", "no-such.json", "--csv", "x.csv"],
                               1.0),
}


def timed(arguments):
    """``(wall seconds, CPU seconds)`` of one run of ``python ARGUMENTS``."""
    before = os.times()
    started = time.perf_counter()
    subprocess.run([sys.executable, *arguments], cwd=REPOSITORY, capture_output=True)
    wall = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return wall, cpu


def median_times(arguments, repeats):
    runs = [timed(arguments) for _ in range(repeats)]
    return (statistics.median(wall for wall, _ in runs),
            statistics.median(cpu for _, cpu in runs))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"load average at start: {load_average()} on {os.cpu_count()} cores")
    timed(["-m", "grader", "--help"])  # a first run fills the file cache and .pyc files
    base_wall, base_cpu = median_times(BASELINE, args.repeats)
    print(f"{'command':<26} {'wall s':>7} {'CPU s':>7} {'x python':>9} {'goal s':>7}")
    print(f"{'python -c pass':<26} {base_wall:7.3f} {base_cpu:7.3f} {1:9.1f}")
    summary, met = [], True
    for name, (arguments, goal) in COMMANDS.items():
        wall, cpu = median_times(arguments, args.repeats)
        print(f"{name:<26} {wall:7.3f} {cpu:7.3f} {wall / base_wall:9.1f} {goal:7.1f}")
        # on a loaded machine wall time is mostly waiting: judge CPU time there
        judged = cpu if os.getloadavg()[0] > os.cpu_count() else wall
        met &= judged < goal
        summary.append(f"{name}: {wall:.3f} s wall, {cpu:.3f} s CPU, {wall / base_wall:.1f}x "
                       f"a bare python ({'within' if judged < goal else 'OVER'} {goal} s)")
    print_summary(summary, started)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
