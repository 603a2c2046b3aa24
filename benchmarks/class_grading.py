"""Grading a class on Dask: overhead, speed-up, throughput and resuming, in one run.

    nice -n 10 python benchmarks/class_grading.py [--students 100] [--resume-students 20]
                                                 [--skip-engines] [--skip-class]

1. Engines, on the example class (``examples/submissions``): ``--workers 2`` on Dask
   against ``--workers 2`` on the process pool this grader had before (checked out from
   git into a temporary folder), and ``--workers 1`` on Dask. Goals: Dask's overhead
   <= 5 %, and 2 workers >= 1.8x one worker on this 2-core machine; both reports equal.
2. A synthetic class of ``--students`` complete submissions (all six lessons), each
   lesson taken, seeded, from an example student who handed it in: time per notebook
   (from the result store's manifest), per lesson, and throughput.
3. Resuming: a class of ``--resume-students`` graded in full, then graded again into a
   new folder, killed (SIGKILL) once about half its notebooks are stored, and resumed.
   Goal: the resumed run takes <= 60 % of the full run, and its report equals it.

Every run is ``python -m grader grade`` in a subprocess: start-up, Dask's cluster and
baseline training are included, as an instructor would see them the first time (the
baselines this machine kept from earlier runs are not used: GRADER_BASELINE_CACHE=off).
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from summary import load_average, print_summary

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
from grader.outputs.report import graded_content  # noqa: E402

EXAMPLES = REPOSITORY / "examples" / "submissions"
# every run trains its baselines, as a first run does (the subprocesses inherit this)
os.environ["GRADER_BASELINE_CACHE"] = "off"
SALT = "bench-class"
WORKERS = 2  # the machine's cores
GOAL_OVERHEAD = 0.05
GOAL_SPEEDUP = 1.8
GOAL_RESUME = 0.60
NOT_COMPLETE = {"ben_empty"}  # the unanswered notebooks: not a complete submission
SEED = 14


def grade(folder, *options, cwd=REPOSITORY, report=None):
    """Wall-clock seconds of ``python -m grader grade folder``; raises if it fails."""
    argv = [sys.executable, "-m", "grader", "grade", str(folder), "--salt", SALT, "--quiet",
            *options]
    if report is not None:
        argv += ["--json", str(report)]
    started = time.perf_counter()
    finished = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if finished.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {finished.returncode}:\n"
                           f"{finished.stderr[-3000:]}")
    return seconds


# --- 1. engines ------------------------------------------------------------------------

def last_process_pool_revision():
    """The last commit whose grader graded on a local process pool."""
    removal = subprocess.run(["git", "log", "-n1", "--format=%H", "-S", 'get_context("fork")',
                              "--", "grader/class_run/grade_class.py"], cwd=REPOSITORY,
                             capture_output=True, text=True, check=True).stdout.strip()
    return f"{removal}^"


def checkout(revision, folder):
    archive = subprocess.run(["git", "archive", revision], cwd=REPOSITORY,
                             capture_output=True, check=True).stdout
    folder.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def benchmark_engines(scratch):
    revision = last_process_pool_revision()
    print(f"\n== 1. Engines on the example class ({len(list(EXAMPLES.iterdir()))} students, "
          f"{len(list(EXAMPLES.rglob('*.ipynb')))} notebooks) ==", flush=True)
    pool_checkout = checkout(revision, scratch / "process-pool")
    reports = {name: scratch / f"{name}.json" for name in ("pool2", "dask2", "dask1")}
    seconds = {
        "pool2": grade(EXAMPLES, "--workers", str(WORKERS), cwd=pool_checkout,
                       report=reports["pool2"]),
        "dask2": grade(EXAMPLES, "--workers", str(WORKERS), report=reports["dask2"]),
        "dask1": grade(EXAMPLES, "--workers", "1", report=reports["dask1"]),
    }
    for name, label in (("pool2", f"process pool ({revision[:9]}), 2 workers"),
                        ("dask2", "Dask LocalCluster, 2 workers"),
                        ("dask1", "Dask LocalCluster, 1 worker")):
        print(f"{label:<40} {seconds[name]:7.1f} s", flush=True)
    overhead = seconds["dask2"] / seconds["pool2"] - 1
    speedup = seconds["dask1"] / seconds["dask2"]
    loaded = {name: graded_content(json.loads(path.read_text()))
              for name, path in reports.items()}
    same = loaded["pool2"] == loaded["dask2"] == loaded["dask1"]
    for name in ("dask2", "dask1"):
        for line in differences(loaded["pool2"], loaded[name]):
            print(f"  {name} differs from pool2: {line}", flush=True)
    print(f"Dask overhead against the pool: {overhead:+.1%} (goal <= {GOAL_OVERHEAD:.0%}); "
          f"speed-up of 2 workers: {speedup:.2f}x (goal >= {GOAL_SPEEDUP}x); "
          f"reports identical: {'yes' if same else 'NO'}", flush=True)
    return [f"engines: pool {seconds['pool2']:.1f} s, Dask {seconds['dask2']:.1f} s "
            f"(overhead {overhead:+.1%}, goal <= {GOAL_OVERHEAD:.0%}: "
            f"{'OK' if overhead <= GOAL_OVERHEAD else 'NOT MET'}); Dask 1 worker "
            f"{seconds['dask1']:.1f} s, speed-up {speedup:.2f}x (goal >= {GOAL_SPEEDUP}x: "
            f"{'OK' if speedup >= GOAL_SPEEDUP else 'NOT MET'}); reports identical: "
            f"{'yes' if same else 'NO'}"]


def differences(first, second):
    """A line per check whose status or score differs between two reports."""
    def outcomes(report):
        return {(s["student"], n["name"], c["id"]): (c["status"], c["score"])
                for s in report["submissions"] for n in s["notebooks"] for c in n["checks"]}
    a, b = outcomes(first), outcomes(second)
    return [f"{' '.join(key)}: {a.get(key)} / {b.get(key)}"
            for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]


# --- 2. a synthetic class ----------------------------------------------------------------

def synthetic_class(folder, students, seed=SEED):
    """``students`` complete submissions, each lesson copied from an example student who
    handed it in (seeded): correct work mixed with the examples' bugs."""
    handed_in = defaultdict(list)
    for notebook in sorted(EXAMPLES.rglob("*.ipynb")):
        if notebook.parent.name not in NOT_COMPLETE:
            handed_in[notebook.stem].append(notebook)
    rng = random.Random(seed)
    for number in range(students):
        student = folder / f"student_{number:04d}"
        student.mkdir(parents=True)
        for lesson, sources in sorted(handed_in.items()):
            shutil.copyfile(rng.choice(sources), student / f"{lesson}.ipynb")
    return folder


def manifest(out):
    return [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]


def benchmark_class(scratch, students):
    print(f"\n== 2. A synthetic class of {students} complete submissions, "
          f"--workers {WORKERS} ==", flush=True)
    folder = synthetic_class(scratch / "class", students)
    out = scratch / "class-results"
    seconds = grade(folder, "--workers", str(WORKERS), "--out", str(out))
    entries = manifest(out)
    per_lesson = defaultdict(list)
    for entry in entries:
        per_lesson[entry["lesson"]].append(entry["seconds"])
    for lesson, times in sorted(per_lesson.items()):
        print(f"{lesson:<24} {len(times):4d} notebooks, {statistics.mean(times):6.1f} s each "
              f"(median {statistics.median(times):.1f}, max {max(times):.1f})", flush=True)
    busy = sum(sum(times) for times in per_lesson.values())
    per_notebook = busy / len(entries)
    per_student = busy / students
    throughput = len(entries) / seconds * 3600
    print(f"{len(entries)} notebooks in {seconds:.0f} s: {per_notebook:.1f} s of a worker per "
          f"notebook, {per_student:.0f} s per complete submission, {throughput:.0f} "
          f"notebooks an hour on {WORKERS} workers ({busy / seconds / WORKERS:.0%} of "
          "their time spent grading)", flush=True)
    return [f"synthetic class: {students} students, {len(entries)} notebooks in "
            f"{seconds:.0f} s on {WORKERS} workers; {per_notebook:.1f} s per notebook, "
            f"{per_student:.0f} s per complete submission, {throughput:.0f} notebooks/hour"]


# --- 3. resuming after a kill ----------------------------------------------------------

def kill_when_half_stored(folder, out, total):
    """Start the grader, SIGKILL it once half the notebooks are stored; (seconds, stored)."""
    argv = [sys.executable, "-m", "grader", "grade", str(folder), "--salt", SALT, "--quiet",
            "--workers", str(WORKERS), "--out", str(out)]
    started = time.perf_counter()
    grader = subprocess.Popen(argv, cwd=REPOSITORY, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    while grader.poll() is None:
        if (out / "manifest.jsonl").exists() and len(manifest(out)) >= total / 2:
            grader.kill()
            break
        time.sleep(0.2)
    grader.wait()
    time.sleep(2)  # its workers notice their parent is gone and leave
    return time.perf_counter() - started, len(manifest(out))


def benchmark_resume(scratch, students):
    print(f"\n== 3. Resuming: a class of {students} complete submissions, killed half-way ==",
          flush=True)
    folder = synthetic_class(scratch / "resume-class", students, seed=SEED + 1)
    total = len(list(folder.rglob("*.ipynb")))
    full = grade(folder, "--workers", str(WORKERS), "--out", str(scratch / "full"),
                 report=scratch / "full.json")
    killed_after, stored = kill_when_half_stored(folder, scratch / "killed", total)
    resumed = grade(folder, "--workers", str(WORKERS), "--out", str(scratch / "killed"),
                    "--resume", report=scratch / "resumed.json")
    lines = manifest(scratch / "killed")
    same = graded_content(json.loads((scratch / "full.json").read_text())) == graded_content(
        json.loads((scratch / "resumed.json").read_text()))
    twice = len(lines) - len({entry["key"] for entry in lines})
    ratio = resumed / full
    print(f"full run {full:.0f} s; killed after {killed_after:.0f} s with {stored} of {total} "
          f"notebooks stored; the resumed run took {resumed:.0f} s = {ratio:.0%} of a full "
          f"run (goal <= {GOAL_RESUME:.0%}); report equal to the full run's: "
          f"{'yes' if same else 'NO'}; notebooks graded twice: {twice}", flush=True)
    return [f"resume: killed with {stored}/{total} stored, resumed in {resumed:.0f} s = "
            f"{ratio:.0%} of a full run ({full:.0f} s) (goal <= {GOAL_RESUME:.0%}: "
            f"{'OK' if ratio <= GOAL_RESUME else 'NOT MET'}); reports equal: "
            f"{'yes' if same else 'NO'}; graded twice: {twice}"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--resume-students", type=int, default=20)
    parser.add_argument("--skip-engines", action="store_true")
    parser.add_argument("--skip-class", action="store_true")
    parser.add_argument("--skip-resume", action="store_true")
    args = parser.parse_args(argv)
    print(f"load average (1, 5, 15 min) at start: {load_average()} on {os.cpu_count()} cores "
          "(the machine is shared: ratios within this run are what count)", flush=True)
    started, summary = time.perf_counter(), []
    with tempfile.TemporaryDirectory(prefix="class-grading-benchmark-") as scratch:
        scratch = Path(scratch)
        if not args.skip_engines:
            summary += benchmark_engines(scratch)
        if not args.skip_class:
            summary += benchmark_class(scratch, args.students)
        if not args.skip_resume:
            summary += benchmark_resume(scratch, args.resume_students)
    print_summary(summary, started)


if __name__ == "__main__":
    main()
