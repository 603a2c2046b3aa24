"""How reliable and how fast grading is: three sets of figures in one run.

    python benchmarks/grading.py [--salts 200] [--learning-salts 20] [--repeats 1]
                                 [--skip-false-failures] [--skip-timing]

1. False failures: every check of every lesson run in-process on the lesson's reference
   module (``qlearning``, ``replay_buffer``, ...) over many salts. A reference solution must
   never fail (goal: 0); statistical checks state a false-failure rate of 1e-6.
2. Time to grade one complete submission (``examples/submissions/ada_complete``, every
   lesson) with ``python -m grader grade`` and with ``nbgrader autograde``, in the same
   run, both verified to give full marks (goals: <= 60 s, and <= 0.3x nbgrader's time).
3. Speed-up of ``--workers 2`` over ``--workers 1`` on the example class (goal >= 1.7x),
   whose two JSON reports must be identical; the complete student must get full marks
   and the student who submitted the fresh notebooks 0.
4. The grader's overhead, lesson by lesson: the seconds (wall and CPU) the grader takes
   for the complete student's notebook (rebuilt, run in a sandbox, every check probed
   from outside) against the floor, the same answers' cells run and the same checks
   judged in a fresh interpreter without isolation (counted once it has imported what
   the sandbox template holds, which no sandbox forked from it pays for), and their
   ratio; with each lesson's round trips across the sandbox's channel, its fixed cost
   (the sandbox and the cells, no check), and the projection for a class of 2,000.

"Full marks" counts the automatic checks: a written answer's points wait for a person.
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from scipy import stats  # noqa: E402
from summary import load_average, print_summary  # noqa: E402

import checks  # noqa: E402
from checks.statistics import FALSE_FAILURE_RATE  # noqa: E402

from grader.lessons import all_lessons  # noqa: E402
from grader.outputs.report import graded_content  # noqa: E402

REFERENCE_MODULES = {name: lesson.reference_module for name, lesson in all_lessons().items()}
LEARNING_CHECKS = {check.name for lesson in REFERENCE_MODULES
                   for check in checks.checks_for_lesson(lesson) if check.learning}
SUBMISSIONS = REPOSITORY / "examples" / "submissions"
COMPLETE_STUDENT = "ada_complete"
TIMING_SALT = "bench"
GOAL_SECONDS = 60.0
GOAL_RATIO = 0.3
GOAL_SPEEDUP = 1.7
FRESH_STUDENT = "ben_empty"  # the released notebooks, unanswered: must score 0
WORKERS = 2  # the machine's cores


# --- 1. false failures of the reference solutions ------------------------------------

def run_checks_on_reference(lesson, salt, check_names):
    """``[(check name, passed, feedback)]`` for the reference module of ``lesson``.

    Runs in a worker process. Each probe starts from the global seeds the grader's kernel
    sets, so a failure found here is one the grader would report for that salt.
    """
    import importlib

    namespace = vars(importlib.import_module(REFERENCE_MODULES[lesson]))
    lesson_checks = checks.checks_for_lesson(lesson)
    outcomes = []
    for name in check_names:
        try:
            outcome = lesson_checks.judged(name, namespace, salt)
            outcomes.append((name, outcome.passed, outcome.feedback))
        except Exception as error:  # a reference that raises is a false failure too
            outcomes.append((name, False, f"raised {type(error).__name__}: {error}"))
    return outcomes


def states_false_failure_rate(check):
    """True for checks whose verdict is a statistical test at FALSE_FAILURE_RATE."""
    return bool({"fits", "FALSE_FAILURE_RATE"} & set(check.verdict.__code__.co_names))


def upper_bound_95(failures, trials):
    """Clopper-Pearson 95% upper bound on the failure rate: what `trials` can show."""
    return 1.0 if failures >= trials else float(stats.beta.ppf(0.95, failures + 1,
                                                               trials - failures))


def false_failure_jobs(salts, learning_salts):
    """``[(lesson, salt, check names)]``: quick checks together, learning checks alone."""
    jobs = []
    for lesson in REFERENCE_MODULES:
        names = [check.name for check in checks.checks_for_lesson(lesson)]
        quick = [name for name in names if name not in LEARNING_CHECKS]
        jobs += [(lesson, f"benchmark-{i}", quick) for i in range(salts)]
        jobs += [(lesson, f"benchmark-{i}", [name])
                 for name in names if name in LEARNING_CHECKS for i in range(learning_salts)]
    # learning jobs first, so the two workers finish at about the same time
    return sorted(jobs, key=lambda job: job[2][0] not in LEARNING_CHECKS)


def count_false_failures(salts, learning_salts):
    """``{(lesson, check): (salts run, [(salt, feedback) of each failure])}``."""
    trials, failures = Counter(), {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=WORKERS) as pool:
        futures = {pool.submit(run_checks_on_reference, *job): job
                   for job in false_failure_jobs(salts, learning_salts)}
        for future in concurrent.futures.as_completed(futures):
            lesson, salt, _ = futures[future]
            for name, passed, feedback in future.result():
                trials[lesson, name] += 1
                failures.setdefault((lesson, name), [])
                if not passed:
                    failures[lesson, name].append((salt, feedback))
                    print(f"  false failure: {lesson} {name} salt {salt!r}", flush=True)
    return {key: (trials[key], sorted(failures[key])) for key in trials}


def print_false_failure_table(results):
    print(f"{'lesson':<17} {'check':<30} {'salts':>5} {'false failures':>14} "
          f"{'stated rate':>11} {'95% bound':>9}")
    for lesson in REFERENCE_MODULES:
        for check in checks.checks_for_lesson(lesson):
            runs, failed = results.get((lesson, check.name), (0, []))
            stated = f"{FALSE_FAILURE_RATE:g}" if states_false_failure_rate(check) else "-"
            print(f"{lesson:<17} {check.name:<30} {runs:>5} {len(failed):>14} {stated:>11} "
                  f"{upper_bound_95(len(failed), runs):>9.2%}")
    print("(95% bound: the largest failure rate still consistent with what was seen; "
          "a few hundred salts can show a gross error, not a rate of 1e-6.)")
    for (lesson, name), (_, failed) in sorted(results.items()):
        for salt, feedback in failed:
            print(f"FAILED {lesson} {name} with salt {salt!r}: {feedback}")


def benchmark_false_failures(salts, learning_salts):
    print(f"\n== 1. False failures of the reference solutions ({salts} salts; the learning "
          f"checks {', '.join(sorted(LEARNING_CHECKS))} take seconds each, so only "
          f"{learning_salts} salts) ==", flush=True)
    print(f"In-process on {', '.join(m + '.py' for m in REFERENCE_MODULES.values())}, "
          f"{WORKERS} worker processes. "
          "For lesson 01 the reference agent is the baseline, so test_learning compares "
          "two identical trainings: it is deterministic given the seeds.", flush=True)
    started = time.perf_counter()
    results = count_false_failures(salts, learning_salts)
    print_false_failure_table(results)
    total = sum(len(failed) for _, failed in results.values())
    runs = sum(runs for runs, _ in results.values())
    print(f"{total} false failure(s) in {runs} check runs, "
          f"{time.perf_counter() - started:.0f} s (goal: 0)", flush=True)
    return [f"false failures of the reference solutions: {total} in {runs} check runs "
            f"({salts} salts, {learning_salts} for learning checks) (goal 0): "
            + ("OK" if total == 0 else "NOT MET")]


# --- 2. one complete submission: our grader versus nbgrader ---------------------------

def run_timed(argv, cwd=REPOSITORY, env=None):
    """Wall-clock seconds of a subprocess; raise with its stderr if it fails."""
    started = time.perf_counter()
    finished = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if finished.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {finished.returncode}:\n"
                           f"{finished.stderr[-3000:]}")
    return seconds


def grade_with_ours(path, report, workers=1):
    """Seconds for ``python -m grader grade`` (interpreter startup included)."""
    return run_timed([sys.executable, "-m", "grader", "grade", str(path), "--salt",
                      TIMING_SALT, "--quiet", "--workers", str(workers), "--json",
                      str(report)])


def best_of(repeats, measure):
    return min(measure() for _ in range(repeats))


def short_of_full_marks(graded, lessons):
    """``[(lesson, score, max)]`` of each lesson graded below full marks, or not at all;
    ``graded`` is ``{lesson: (score, max)}``."""
    return [(lesson, *graded.get(lesson, ("not graded", None))) for lesson in lessons
            if lesson not in graded or graded[lesson][1] <= 0
            or graded[lesson][0] != graded[lesson][1]]


def ours_short_of_full_marks(report, lessons):
    graded = {notebook["name"]: (notebook["score"],
                                 notebook["max_score"] - written_points(notebook["name"]))
              for submission in json.loads(Path(report).read_text())["submissions"]
              for notebook in submission["notebooks"] if notebook.get("submitted", True)}
    return short_of_full_marks(graded, lessons)


def nbgrader(*arguments):
    return [sys.executable, "-m", "nbgrader", *arguments]


def nbgrader_environment():
    """The hidden tests read the salt from here (the same inputs as ours); nbgrader runs
    `alembic` from PATH, so the interpreter's bin folder goes first."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**os.environ, "GRADER_SALT": TIMING_SALT, "PATH": path}


def prepare_nbgrader_course(directory, lessons, student="ada"):
    """A course directory with generated assignments and the student's submissions."""
    run_timed([sys.executable, "-m", "grader", "nbgrader-course", str(directory)])
    for lesson in lessons:
        run_timed(nbgrader("generate_assignment", lesson, "--force"), cwd=directory,
                  env=nbgrader_environment())
        submitted = directory / "submitted" / student / lesson / f"{lesson}.ipynb"
        submitted.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SUBMISSIONS / COMPLETE_STUDENT / f"{lesson}.ipynb", submitted)


def autograde_with_nbgrader(directory, lessons):
    return sum(run_timed(nbgrader("autograde", lesson, "--force"), cwd=directory,
                         env=nbgrader_environment())
               for lesson in lessons)


def nbgrader_short_of_full_marks(directory, lessons):
    """Like ``ours_short_of_full_marks``, from ``nbgrader export``'s CSV."""
    import pandas as pd

    run_timed(nbgrader("export", "--to", str(directory / "grades.csv")), cwd=directory,
              env=nbgrader_environment())
    grades = pd.read_csv(directory / "grades.csv")
    # both count written answers in max_score, which wait for a person to grade them:
    # compare the automatic points only
    graded = {row.assignment: (row.score, row.max_score - written_points(row.assignment))
              for row in grades.itertuples()}
    return short_of_full_marks(graded, lessons)


def written_points(lesson):
    """Points of the lesson's manually graded answers."""
    from grader.nbgrader_cells import is_manually_graded, nbgrader_meta
    from grader.lessons import all_lessons

    return sum(float(nbgrader_meta(cell).get("points", 0))
               for cell in all_lessons()[lesson].source().cells if is_manually_graded(cell))


def benchmark_one_submission(repeats, scratch):
    lessons = sorted(path.stem for path in (SUBMISSIONS / COMPLETE_STUDENT).glob("*.ipynb"))
    print(f"\n== 2. Grading one complete submission ({COMPLETE_STUDENT}: "
          f"{', '.join(lessons)}), best of {repeats} ==", flush=True)
    report = scratch / "ours.json"
    ours = best_of(repeats, lambda: grade_with_ours(SUBMISSIONS / COMPLETE_STUDENT, report))
    ours_short = ours_short_of_full_marks(report, lessons)
    print(f"ours:     {ours:6.1f} s   python -m grader grade (startup included); "
          f"full marks: {'yes' if not ours_short else f'NO {ours_short}'}", flush=True)

    course = scratch / "nbgrader-course"
    prepare_nbgrader_course(course, lessons)
    theirs = best_of(repeats, lambda: autograde_with_nbgrader(course, lessons))
    theirs_short = nbgrader_short_of_full_marks(course, lessons)
    print(f"nbgrader: {theirs:6.1f} s   nbgrader autograde of {len(lessons)} lessons "
          f"(runs every cell); full marks: "
          f"{'yes' if not theirs_short else f'NO {theirs_short}'}", flush=True)
    ratio = ours / theirs
    print(f"ratio ours / nbgrader: {ratio:.2f}x (goal <= {GOAL_RATIO}x); "
          f"ours {ours:.1f} s (goal <= {GOAL_SECONDS:.0f} s)", flush=True)
    verified = not ours_short and not theirs_short
    return [f"one complete submission: ours {ours:.1f} s (goal <= {GOAL_SECONDS:.0f} s: "
            f"{'OK' if ours <= GOAL_SECONDS else 'NOT MET'}), nbgrader {theirs:.1f} s, "
            f"ratio {ratio:.2f}x (goal <= {GOAL_RATIO}x: "
            f"{'OK' if ratio <= GOAL_RATIO else 'NOT MET'}); both full marks: "
            f"{'yes' if verified else 'NO'}"]


# --- 3. --workers 2 on the example class ---------------------------------------------

def report_entries(report):
    """``{(student, lesson, check or "notes"): what the report says about it}``."""
    entries = {}
    for submission in report["submissions"]:
        for notebook in submission["notebooks"]:
            key = (submission["student"], notebook["name"])
            entries[(*key, "notes")] = notebook["notes"]
            for check in notebook["checks"]:
                entries[(*key, check["id"])] = check
    return entries


def report_differences(first, second):
    """Lines naming each entry that differs between two reports, with both versions."""
    a, b = report_entries(graded_content(first)), report_entries(graded_content(second))
    return [f"{' '.join(key)}:\n    workers 1: {a.get(key)}\n    workers 2: {b.get(key)}"
            for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]


def benchmark_workers(repeats, scratch):
    print(f"\n== 3. The example class ({SUBMISSIONS.relative_to(REPOSITORY)}) with "
          f"--workers 1 and --workers 2, best of {repeats} ==", flush=True)
    seconds, reports = {}, {}
    for workers in (1, 2):
        report = scratch / f"class-workers-{workers}.json"
        seconds[workers] = best_of(repeats, lambda: grade_with_ours(SUBMISSIONS, report,
                                                                    workers))
        reports[workers] = json.loads(report.read_text())
        print(f"--workers {workers}: {seconds[workers]:6.1f} s", flush=True)
    speedup = seconds[1] / seconds[2]
    identical = graded_content(reports[1]) == graded_content(reports[2])
    print(f"speed-up: {speedup:.2f}x (goal >= {GOAL_SPEEDUP}x); JSON reports identical: "
          f"{'yes' if identical else 'NO'}", flush=True)
    for difference in report_differences(reports[1], reports[2]):
        print(f"  differs: {difference}", flush=True)
    written = sum(written_points(lesson) for lesson in all_lessons())
    totals = {submission["student"]: (submission["score"], submission["max_score"] - written)
              for submission in reports[2]["submissions"]}
    complete_full = totals[COMPLETE_STUDENT][0] == totals[COMPLETE_STUDENT][1] > 0
    fresh_zero = totals[FRESH_STUDENT][0] == 0
    print(f"{COMPLETE_STUDENT}: {totals[COMPLETE_STUDENT][0]:g} / "
          f"{totals[COMPLETE_STUDENT][1]:g}; {FRESH_STUDENT} (fresh notebooks): "
          f"{totals[FRESH_STUDENT][0]:g}", flush=True)
    return [f"example class: --workers 1 {seconds[1]:.1f} s, --workers 2 {seconds[2]:.1f} s, "
            f"speed-up {speedup:.2f}x (goal >= {GOAL_SPEEDUP}x: "
            f"{'OK' if speedup >= GOAL_SPEEDUP else 'NOT MET'}); reports identical: "
            f"{'yes' if identical else 'NO'}; complete student full marks: "
            f"{'yes' if complete_full else 'NO'}; fresh notebooks 0: "
            f"{'yes' if fresh_zero else 'NO'}"]


# --- 4. the grader's overhead, lesson by lesson -----------------------------------------

def cpu_seconds():
    """CPU time of this process and of its children that have ended (the sandboxes)."""
    import resource

    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(work):
    """``(wall seconds, CPU seconds, value)`` of ``work()``."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    value = work()
    return time.perf_counter() - wall, cpu_seconds() - cpu, value


class SandboxCpu:
    """The CPU time of every sandbox stopped while it is entered, as the sandbox's own
    counters say (its cgroup, or its process tree): a sandbox forked from the template is
    the template's child, and its time reaches this process's children's only once the
    template ends."""

    def __init__(self):
        self.seconds = 0.0

    def __enter__(self):
        from grader.judge.student_process import StudentProcess

        self._original = stop = StudentProcess.stop
        counter = self

        def counted_stop(process):
            before = process._cpu_retired
            stop(process)
            counter.seconds += process._cpu_retired - before

        StudentProcess.stop = counted_stop
        return self

    def __exit__(self, *exc):
        from grader.judge.student_process import StudentProcess

        StudentProcess.stop = self._original


def timed_in_sandboxes(work):
    """``(wall seconds, CPU seconds, value)`` of ``work()``, which grades in sandboxes:
    the CPU of this process and of the sandboxes (never of any other child)."""
    import resource

    def own():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    with SandboxCpu() as sandboxes:
        wall, cpu = time.perf_counter(), own()
        value = work()
        wall, cpu = time.perf_counter() - wall, own() - cpu
    return wall, cpu + sandboxes.seconds, value


def in_process_floor(lesson, notebook):
    """Run the notebook's answer cells in the course's cells here, as a kernel would,
    then judge every check on the result: what grading costs with no isolation."""
    import nbformat

    from grader.lessons import answer_stubs
    from grader.judge.rebuild import cells_to_run, rebuild

    source = all_lessons()[lesson].source()
    rebuilt = rebuild(source, nbformat.read(notebook, as_version=4), answer_stubs(lesson))
    namespace = {"__name__": "__main__"}
    for cell in cells_to_run(rebuilt.notebook):
        exec(compile(cell.source, f"<{lesson}>", "exec"), namespace)  # noqa: S102
    lesson_checks = checks.checks_for_lesson(lesson)
    return sum(lesson_checks.judged(check.name, namespace, TIMING_SALT).passed
               for check in lesson_checks)


def floor_in_a_fresh_process(lesson, notebook, baselines):
    """:func:`in_process_floor` in a fresh interpreter of its own (spawned, not forked from
    this process): ``(wall, CPU, passed, whole-process CPU)``. The CPU is counted after
    the interpreter has imported what the sandbox template holds (the sandbox pays for
    neither its interpreter's start nor those imports); the whole-process CPU counts
    them, as a sandbox started afresh would."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(timed_floor, lesson, notebook, baselines).result()


def timed_floor(lesson, notebook, baselines):
    import contextlib
    import importlib
    import io
    import resource

    from grader.class_run.baselines import install_baselines
    from grader.judge.sandbox_template import PRELOADED

    install_baselines(baselines)  # trained once per class, as the grader's are
    for name in PRELOADED:  # as the sandbox template has: counted on neither side
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.redirect_stdout(io.StringIO()):  # what the notebook's cells print
        wall, cpu, passed = timed(lambda: in_process_floor(lesson, notebook))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return wall, cpu, passed, usage.ru_utime + usage.ru_stime


class RoundTrips:
    """Counts the messages that wait for an answer across the sandbox's channel while
    it is entered: the grader's requests and the callbacks it answers (a served method
    called from the student's code). Deferred calls and transcripts ride on these."""

    def __init__(self):
        self.requests = self.callbacks = 0

    def __enter__(self):
        from grader.judge.student_process import StudentProcess

        self._originals = StudentProcess._request, StudentProcess._answer_callback
        request, answer = self._originals
        counter = self

        def counted_request(process, message):
            counter.requests += 1
            return request(process, message)

        def counted_answer(process, incoming, poisoned):
            counter.callbacks += 1
            return answer(process, incoming, poisoned)

        StudentProcess._request, StudentProcess._answer_callback = counted_request, counted_answer
        return self

    def __exit__(self, *exc):
        from grader.judge.student_process import StudentProcess

        StudentProcess._request, StudentProcess._answer_callback = self._originals

    @property
    def total(self):
        return self.requests + self.callbacks


def graded_in_a_sandbox(lesson, notebook, only=None):
    """``(checks passed, checks run, round trips)`` of grading ``notebook`` (``only``: the
    checks to run; an empty set runs the cells alone, the fixed cost)."""
    from grader.judge.grade_notebook import grade_notebook

    with RoundTrips() as trips:
        result = grade_notebook(notebook, TIMING_SALT, lesson=lesson, only=only)
    return sum(check.status == "passed" for check in result.checks), len(result.checks), \
        trips.total


def template_start_cpu():
    """CPU seconds a sandbox template takes to start (its imports) and end: paid once per
    grader process, whatever it grades."""
    from grader.judge.sandbox_forks import SandboxTemplate
    import resource

    def children():
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    before, template = children(), SandboxTemplate()
    template.start()
    template.close()
    return children() - before


CLASS_SIZE, CLASS_CORES = 2000, 64  # issue 40's projection: a class on a large machine


def benchmark_overhead(repeats):
    lessons = sorted(path.stem for path in (SUBMISSIONS / COMPLETE_STUDENT).glob("*.ipynb"))
    print(f"\n== 4. The grader's overhead per lesson ({COMPLETE_STUDENT}'s notebooks, best "
          f"of {repeats}; CPU counts the sandbox's processes) ==", flush=True)
    print("(CPU is what to compare on a busy machine: a check that makes a round trip per "
          "step waits for the CPU far longer than it works, and wall time shows the load.\n"
          " floor: the same cells and checks run in a fresh interpreter, no isolation, its "
          "CPU counted once the interpreter has started and imported what the sandbox "
          "template holds (a sandbox forked from the template pays for neither: counted on "
          "neither side); cold: against the floor's whole interpreter, start and imports "
          "included. fixed: the sandbox started and the notebook's cells run, no check. "
          "round trips: requests and callbacks across the channel. The learning checks' "
          "baselines are trained first, once, as a class run trains them once for every "
          "submission (grader/class_run/baselines.py), and both sides have them)")
    from grader.class_run.baselines import install_baselines, needed_baselines, train_baseline

    baselines, baseline_cpu = {}, 0.0
    for lesson, check in needed_baselines(lessons):
        _, cpu, answers = timed(lambda: train_baseline(lesson, check, TIMING_SALT))
        baselines.update(answers)
        baseline_cpu += cpu
    install_baselines(baselines)
    print(f"the learning checks' baselines: {baseline_cpu:.1f} CPU-s, once per class")
    print(f"{'lesson':<22} {'grader wall':>11} {'grader CPU':>10} {'fixed CPU':>9} "
          f"{'round trips':>11} {'floor wall':>10} {'floor CPU':>9} {'ratio CPU':>9} "
          f"{'(cold)':>7} {'checks passed':>13}", flush=True)
    ratios, cold_ratios = {}, {}
    totals = {"grader": 0.0, "floor": 0.0, "fixed": 0.0}
    for lesson in lessons:
        notebook = SUBMISSIONS / COMPLETE_STUDENT / f"{lesson}.ipynb"
        graded = min((timed_in_sandboxes(lambda: graded_in_a_sandbox(lesson, notebook))
                      for _ in range(repeats)), key=lambda run: run[1])
        fixed = min((timed_in_sandboxes(lambda: graded_in_a_sandbox(lesson, notebook,
                                                                    only=set()))
                     for _ in range(repeats)), key=lambda run: run[1])
        floor = min((floor_in_a_fresh_process(lesson, notebook, baselines)
                     for _ in range(repeats)),
                    key=lambda run: run[1])
        passed, total, trips = graded[2]
        ratios[lesson] = graded[1] / floor[1]
        cold_ratios[lesson] = graded[1] / floor[3]
        totals["grader"] += graded[1]
        totals["floor"] += floor[1]
        totals["fixed"] += fixed[1]
        print(f"{lesson:<22} {graded[0]:>10.1f}s {graded[1]:>9.1f}s {fixed[1]:>8.1f}s "
              f"{trips:>11} {floor[0]:>9.1f}s {floor[1]:>8.1f}s {ratios[lesson]:>8.2f}x "
              f"{cold_ratios[lesson]:>6.2f}x {passed:>6}/{total} (floor {floor[2]}/{total})",
              flush=True)
    template = template_start_cpu()
    minutes = (CLASS_SIZE * totals["grader"] + baseline_cpu) / CLASS_CORES / 60
    print(f"the sandbox template: {template:.1f} CPU-s to start, once per grader process")
    return ["grader overhead per lesson (grader CPU / floor CPU, the public packages' "
            "imports counted on neither side): " + ", ".join(
                f"{lesson[:2]} {ratio:.2f}x" for lesson, ratio in ratios.items()),
            f"one complete submission: {totals['grader']:.1f} CPU-s graded (of which "
            f"{totals['fixed']:.1f} s fixed: sandboxes and cells), against a floor of "
            f"{totals['floor']:.1f} CPU-s (goals: each lesson <= 1.5x, a submission <= 20 "
            "CPU-s)",
            f"{CLASS_SIZE:,} submissions on {CLASS_CORES} cores: {minutes:.1f} minutes of "
            f"CPU-bound grading, the baselines' {baseline_cpu:.1f} CPU-s included (goal <= 10), "
            f"plus {template:.1f} CPU-s per worker for its template"]


# --- the command line -----------------------------------------------------------------

def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--salts", type=int, default=200,
                        help="salts for the quick checks (default 200)")
    parser.add_argument("--learning-salts", type=int, default=20,
                        help="salts for the learning checks, several seconds each (default 20)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="timings are the best of this many runs (default 1)")
    parser.add_argument("--skip-false-failures", action="store_true")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_arguments(argv)
    print(f"load average (1, 5, 15 min) at start: {load_average()} on {os.cpu_count()} cores",
          flush=True)
    started = time.perf_counter()
    summary = []
    if not args.skip_false_failures:
        summary += benchmark_false_failures(args.salts, args.learning_salts)
    if not args.skip_timing:
        with tempfile.TemporaryDirectory(prefix="grading-benchmark-") as scratch:
            summary += benchmark_one_submission(args.repeats, Path(scratch))
            summary += benchmark_workers(args.repeats, Path(scratch))
    if not args.skip_overhead:
        summary += benchmark_overhead(args.repeats)
    print_summary(summary, started)


if __name__ == "__main__":
    main()
