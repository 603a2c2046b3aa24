"""Does a loaded machine change any grade? The example class, quiet and beside busy processes.

    python benchmarks/grading_under_load.py [--per-core 12] [--workers 2] [--salt under-load]

1. Grades the example class (``examples/submissions``: ``ada_complete`` holds the
   reference solutions of all seven lessons, the others known bugs, an infinite loop and
   a tamperer) with ``python -m grader grade --workers 2`` on the machine as it is.
2. Starts ``--per-core`` busy processes per core, each in a session of its own (shell
   loops that never sleep; they are not part of the class), and grades the same class
   with the same salt again.
3. Prints both times, the load average seen while grading, each run's CPU time, the
   reference solutions' score under load (goal: full marks), every check whose outcome
   differs between the runs (goal: none) and, over all checks, the most CPU any check
   used against its budget, and the most wall time against its CPU budget (how far the
   load stretched it).

It takes long: at twelve busy processes per core, grading waits for the CPU about
thirteen times as long as it uses it (about 30 minutes on 2 cores).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "tests"))

from summary import load_average, print_summary  # noqa: E402

from checks import checks_for_lesson  # noqa: E402
from grader.report import graded_content  # noqa: E402
from support.busy_machine import machine_load  # noqa: E402

CLASS = REPOSITORY / "examples" / "submissions"
REFERENCE_STUDENT = "ada_complete"


class LoadSampler(threading.Thread):
    """The 1-minute load average, every few seconds, while a run lasts."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples, self.done = [], threading.Event()

    def run(self):
        while not self.done.wait(5.0):
            self.samples.append(os.getloadavg()[0])

    def stop(self):
        self.done.set()
        self.join()
        return (min(self.samples), max(self.samples)) if self.samples else (None, None)


def grade(report, workers, salt):
    """``(wall seconds, CPU seconds of the grader and everything it started)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    completed = subprocess.run([sys.executable, "-m", "grader", "grade", str(CLASS), "--salt",
                                salt, "--workers", str(workers), "--quiet", "--json",
                                str(report)], cwd=REPOSITORY, capture_output=True, text=True)
    wall = time.monotonic() - started
    if completed.returncode != 0:
        raise SystemExit(f"the grader failed:\n{completed.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def checks_of(report):
    """``{(student, lesson, check): check entry}``."""
    return {(submission["student"], notebook["name"], check["id"]): check
            for submission in report["submissions"] for notebook in submission["notebooks"]
            for check in notebook["checks"]}


def budgets():
    """``{(lesson, check): CPU seconds}`` of every check."""
    from grader.lessons import all_lessons

    return {(lesson, check.name): check.time_limit for lesson in all_lessons()
            for check in checks_for_lesson(lesson)}


def stretch(report):
    """The largest CPU / budget and wall / budget over the report's checks, with where."""
    limits, cpu, wall = budgets(), (0.0, None), (0.0, None)
    for (student, lesson, name), check in checks_of(report).items():
        usage = check.get("usage")
        if not usage:
            continue
        limit = limits[lesson, name]
        cpu = max(cpu, (usage["cpu_seconds"] / limit, f"{student} {lesson} {name}"))
        wall = max(wall, (usage["wall_seconds"] / limit, f"{student} {lesson} {name}"))
    return cpu, wall


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-core", type=int, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--salt", default="under-load")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"load average at start: {load_average()} on {os.cpu_count()} cores", flush=True)
    runs = {}
    with tempfile.TemporaryDirectory(prefix="grading-under-load-") as scratch:
        for name in ("quiet", "loaded"):
            report = Path(scratch) / f"{name}.json"
            sampler = LoadSampler()
            sampler.start()
            if name == "loaded":
                # the loaded run takes about 35 min at 12 per core: 3 h covers it
                with machine_load(args.per_core, lifetime=3 * 3600) as busy:
                    print(f"started {len(busy)} busy processes", flush=True)
                    wall, cpu = grade(report, args.workers, args.salt)
            else:
                wall, cpu = grade(report, args.workers, args.salt)
            low, high = sampler.stop()
            runs[name] = {"wall": wall, "cpu": cpu, "load": (low, high),
                          "report": json.loads(report.read_text())}
            print(f"{name}: {wall:.0f} s wall, {cpu:.0f} s CPU, load average "
                  f"{low} - {high}", flush=True)
    quiet, loaded = (graded_content(runs[name]["report"]) for name in ("quiet", "loaded"))
    a, b = checks_of(quiet), checks_of(loaded)
    differing = sorted(key for key in set(a) | set(b) if a.get(key) != b.get(key))
    for key in differing:
        print(f"  differs: {' '.join(key)}\n    quiet:  {a.get(key)}\n    loaded: {b.get(key)}")
    reference = next(s for s in loaded["submissions"] if s["student"] == REFERENCE_STUDENT)
    full = reference["score"] == reference["max_score"]
    (cpu_ratio, cpu_where), (wall_ratio, wall_where) = stretch(runs["loaded"]["report"])
    summary = [
        f"quiet: {runs['quiet']['wall']:.0f} s wall, {runs['quiet']['cpu']:.0f} s CPU (load "
        f"{runs['quiet']['load'][0]} - {runs['quiet']['load'][1]}); loaded with "
        f"{args.per_core} busy processes per core: {runs['loaded']['wall']:.0f} s wall, "
        f"{runs['loaded']['cpu']:.0f} s CPU (load {runs['loaded']['load'][0]} - "
        f"{runs['loaded']['load'][1]})",
        f"{REFERENCE_STUDENT} (the reference solutions, seven lessons) under load: "
        f"{reference['score']:g} / {reference['max_score']:g} "
        f"({'full marks' if full else 'NOT full marks'})",
        f"checks whose outcome differs between the quiet and the loaded run: "
        f"{len(differing)} of {len(a)} (goal: 0)",
        f"under load, the most CPU a check used: {cpu_ratio:.0%} of its budget ({cpu_where}); "
        f"the most wall time: {wall_ratio:.1f}x its CPU budget ({wall_where})",
    ]
    print_summary(summary, started)
    return 0 if full and not differing else 1


if __name__ == "__main__":
    sys.exit(main())
