"""Does a loaded machine change any grade? The example class, quiet and beside busy processes.

    python benchmarks/grading_under_load.py [--per-core 12] [--workers 2] [--salt under-load]
                                            [--attackers]

1. Grades the example class (``examples/submissions``: ``ada_complete`` holds the
   reference solutions of all eight lessons, the others known bugs, a loop that never
   ends a truncated episode and a tamperer) with ``python -m grader grade --workers 2``
   on the machine as it is. With ``--attackers``, students who attack the budgets join
   the class (``tests/attacks.py``: busy processes in sessions of their own, a thread
   swarm, a multi-process memory hog, System V shared memory left for a later sandbox),
   graded beside their correct classmates.
2. Starts ``--per-core`` busy processes per core, each in a session of its own (shell
   loops that never sleep; they are not part of the class), and grades the same class
   with the same salt again.
3. Prints both times, the load average seen while grading, each run's CPU time, the
   reference solutions' score under load (goal: full marks), every check whose outcome
   differs between the runs (goal: none) and, over all checks, the most CPU any check
   used against its budget, and the most wall time against its CPU budget (how far the
   load stretched it); and what either run left on the machine (sandbox cgroups, System V
   shared memory segments, sandbox processes; goal: nothing).

Measured on 2 cores (the example class, ``--workers 2``): quiet 93 s wall, 180 s CPU;
beside 24 busy processes (load up to 28) 143 s wall, 186 s CPU, the reference solutions
89/89 and no check's outcome different. The class's cgroup is what makes this possible
(:mod:`grader.class_run.class_cpu_share`): as one ordinary session among 24 busy ones the
same run had not finished after 2 h 28 min, each side of every round trip waiting its turn.
"""

import argparse
import json
import os
import resource
import shutil
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
from grader.class_run.class_cpu_share import class_groups  # noqa: E402
from grader.judge.sandbox_resources import sandbox_groups  # noqa: E402
from grader.outputs.report import graded_content  # noqa: E402
from support.busy_machine import machine_load  # noqa: E402
from support.host import host_segments, processes_running  # noqa: E402

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


def class_with_attackers(folder):
    """A copy of the example class in ``folder``, with the budget attackers of
    tests/attacks.py beside it (each on lesson 02's wrong buffer, as the attack tests
    grade them; the shared-memory writer on lesson 06)."""
    from attacks import BUDGET_ATTACKS, SHARED_MEMORY_WRITER, wrong_buffer_answers
    from submission_factory import solution_answers, write_submission

    shutil.copytree(CLASS, folder)
    for name, code in BUDGET_ATTACKS.items():
        write_submission(folder, "02_replay_buffer", wrong_buffer_answers(code),
                         student=f"attack_{name}")
    write_submission(folder, "06_capstone", {"autocorrelation": solution_answers(
        "06_capstone")["autocorrelation"] + SHARED_MEMORY_WRITER},
        student="attack_shared_memory_writer")
    return folder


def left_on_the_machine():
    """What sandboxes could leave behind: their cgroups and the class's (sandboxes' groups
    are made inside it), System V shared memory segments (all of the host's), and
    processes running the sandbox's server."""
    return {"cgroups": len(sandbox_groups()) + len(class_groups()),
            "shared memory segments": len(host_segments()),
            "sandbox processes": len(processes_running("student_server"))}


def grade(students, report, workers, salt):
    """``(wall seconds, CPU seconds of the grader and everything it started)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    completed = subprocess.run([sys.executable, "-m", "grader", "grade", str(students), "--salt",
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
    limits, cpu, wall = budgets(), (0.0, ""), (0.0, "")  # "": a tie at 0 compares text
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
    parser.add_argument("--attackers", action="store_true",
                        help="grade budget attackers in the class too")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"load average at start: {load_average()} on {os.cpu_count()} cores", flush=True)
    runs, left_before = {}, left_on_the_machine()
    with tempfile.TemporaryDirectory(prefix="grading-under-load-") as scratch:
        students = (class_with_attackers(Path(scratch) / "class") if args.attackers
                    else CLASS)
        for name in ("quiet", "loaded"):
            report = Path(scratch) / f"{name}.json"
            sampler = LoadSampler()
            sampler.start()
            if name == "loaded":
                # the loaded run takes hours at 12 per core (see above): 6 h covers it
                with machine_load(args.per_core, lifetime=6 * 3600) as busy:
                    print(f"started {len(busy)} busy processes", flush=True)
                    wall, cpu = grade(students, report, args.workers, args.salt)
            else:
                wall, cpu = grade(students, report, args.workers, args.salt)
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
    # full marks of the checks: a written answer's points wait for a person
    waiting = sum(answer["max_score"] for notebook in reference["notebooks"]
                  for answer in notebook.get("manual", []) if answer["score"] is None)
    full = reference["score"] == reference["max_score"] - waiting
    (cpu_ratio, cpu_where), (wall_ratio, wall_where) = stretch(runs["loaded"]["report"])
    left_after = left_on_the_machine()
    left = {what: left_after[what] - count for what, count in left_before.items()
            if left_after[what] != count}
    summary = [
        f"quiet: {runs['quiet']['wall']:.0f} s wall, {runs['quiet']['cpu']:.0f} s CPU (load "
        f"{runs['quiet']['load'][0]} - {runs['quiet']['load'][1]}); loaded with "
        f"{args.per_core} busy processes per core: {runs['loaded']['wall']:.0f} s wall, "
        f"{runs['loaded']['cpu']:.0f} s CPU (load {runs['loaded']['load'][0]} - "
        f"{runs['loaded']['load'][1]})",
        f"{REFERENCE_STUDENT} (the reference solutions, eight lessons) under load: "
        f"{reference['score']:g} / {reference['max_score']:g} "
        f"({'full marks' if full else 'NOT full marks'} of the checks; {waiting:g} "
        "points of written answers await a person)",
        f"checks whose outcome differs between the quiet and the loaded run: "
        f"{len(differing)} of {len(a)} (goal: 0)",
        f"under load, the most CPU a check used: {cpu_ratio:.0%} of its budget ({cpu_where}); "
        f"the most wall time: {wall_ratio:.1f}x its CPU budget ({wall_where})",
        "left on the machine after both runs: " + (", ".join(
            f"{count:+d} {what}" for what, count in left.items()) or "nothing"),
    ]
    if args.attackers:
        summary.insert(2, "attackers (lesson 02 on a wrong buffer, graded beside their "
                          "classmates), score / max: " + ", ".join(
                              f"{s['student']} {s['score']:g}/{s['max_score']:g}"
                              for s in loaded["submissions"]
                              if s["student"].startswith("attack_")))
    print_summary(summary, started)
    return 0 if full and not differing and not left else 1


if __name__ == "__main__":
    sys.exit(main())
