"""Grade a class on Dask: every notebook one task, every result on disk as it comes.

- **One engine.** The tasks run on a Dask cluster (:mod:`grader.class_run.dask_cluster`): a
  LocalCluster of ``--workers`` processes, or any cluster given by ``--scheduler``,
  through this same code. Each notebook is read here, once: its bytes' hash keys its
  result and what it holds travels with its task, so workers need no shared files.
- **Faults cost one notebook.** A task whose worker dies is retried once by the
  scheduler; a notebook that kills a second worker is reported as not graded, alone.
  At most as many tasks are handed to the scheduler as the workers have threads, because
  Dask counts a worker's death against every task it held, not only the running one.
  Every sandbox gets a parent-death signal (:mod:`grader.judge.sandbox`), so it dies with
  the worker running it, whether that worker was killed, restarted or shut down.
- **Results survive** (:mod:`grader.class_run.result_store`): each notebook's result is
  written the moment it comes back, and a notebook whose result is stored is not graded
  again.
- **Baselines once** (:mod:`grader.class_run.baselines`): learning checks' baselines are
  trained as tasks of their own, in parallel, stored, and handed to every grading task of
  their lesson; notebooks of lessons that need none are graded meanwhile.
"""

import sys
import time
import uuid
from collections import deque
from dataclasses import dataclass, field

from distributed import KilledWorker, get_worker, wait

from grader.class_run.baseline_cache import baseline_cache
from grader.class_run.baselines import (baseline_name, install_baselines, needed_baselines,
                                        train_baseline)
from grader.class_run.class_progress import ClassProgress
from grader.class_run.dask_cluster import ClusterError, worker_threads
from grader.course_version import course_version
from grader.judge.grade_notebook import CELL_TIME_LIMIT, grade_notebook
from grader.judge.sandbox import (DEFAULT_DISK_MB, DEFAULT_MEMORY_MB, isolation_level,
                                  remove_stale_scratch)
from grader.judge.sandbox_resources import remove_stale_groups
from grader.judge.submission_file import notebook_hash, read_once
from grader.lessons import all_lessons
from grader.nbgrader_cells import autograded_cells, nbgrader_meta
from grader.results import CheckResult, NotebookResult, Status
from grader.safe_text import printable

WAIT_SLICE = 1.0  # seconds between redraws of the progress bars while tasks run
WORKER_DIED = ("its worker process died twice while grading it (the grader crashed on it, "
               "or grading it took more memory than a worker may use)")


@dataclass
class ClassRun:
    results: dict = field(default_factory=dict)  # student -> [NotebookResult], job order
    graded: int = 0  # notebooks graded in this run
    reused: int = 0  # notebooks whose result an earlier run had stored
    failed: int = 0  # notebooks that could not be graded in this run


def failed_notebook(lesson, reason):
    """The result of a notebook whose grading broke down: every check, 0, with the reason."""
    result = NotebookResult(lesson)
    for cell in autograded_cells(all_lessons()[lesson].source()):
        meta = nbgrader_meta(cell)
        result.add(CheckResult(meta["grade_id"], 0.0, float(meta.get("points", 0)), Status.ERROR,
                               f"not graded: {reason}"))
    result.notes.append(f"This notebook was not graded: {reason}.")
    return result


def grading_settings(options):
    """Everything besides the notebook, salt and course that can change a grade."""
    only = options.get("only")
    return {"isolation": isolation_level(options.get("isolate", True)),
            "memory_mb": options.get("memory_mb", DEFAULT_MEMORY_MB),
            "disk_mb": options.get("disk_mb", DEFAULT_DISK_MB),
            "only": sorted(only) if only else None,
            "cell_time_limit": options.get("cell_time_limit", CELL_TIME_LIMIT),
            "check_time_limit": options.get("check_time_limit")}


# --- on a worker ------------------------------------------------------------------------

TASK_SWEEP_SECONDS = 0.2  # how long a task waits for a dead worker's groups to go


def grade_task(key, job, submission, salt, options, baselines, version, topic, grade=None):
    """Grade one notebook on a Dask worker: ``(NotebookResult, seconds, problem or None)``."""
    if course_version() != version:
        raise ClusterError("this worker imports another version of the course than the "
                           "grader")
    install_baselines(baselines)
    # a worker killed mid-notebook (its task is retried here) leaves its sandbox's groups
    # and scratch: gone at once, not at the next run (a short wait: a stuck group is named
    # and left for the run's own sweep)
    remove_stale_groups(within=TASK_SWEEP_SECONDS)
    remove_stale_scratch()
    worker = get_worker()

    def progress(done, total):
        worker.log_event(topic, {"key": key, "done": done, "total": total})

    started, problem = time.monotonic(), None
    try:
        result = (grade or grade_notebook)(job.path, salt, lesson=job.lesson,
                                           submission=submission, progress=progress,
                                           **options)
    except Exception as error:  # a grader bug must not lose the rest of the class
        problem = f"the grader failed on it ({type(error).__name__}: {printable(error, 300)})"
        result = failed_notebook(job.lesson, problem)
    return result, time.monotonic() - started, problem


# --- here -------------------------------------------------------------------------------

def label_of(job):
    return f"{job.student}/{job.path.name}"


class ClassGrading:
    """One run over a class: what is pending, in flight and done."""

    def __init__(self, jobs, salt, store, options, grade):
        self.jobs, self.salt, self.store = jobs, salt, store
        self.client = None  # the Dask client, once there is something to grade
        self.options, self.grade = options, grade
        self.progress = None  # a ClassProgress, once the counts are known
        self.version = course_version()
        self.settings = grading_settings(options)
        self.run_id = uuid.uuid4().hex[:8]
        self.topic = f"grader-progress-{self.run_id}"
        self.entries = [store.entry_for(job, notebook_hash(job.path), salt, self.version,
                                        self.settings) for job in jobs]
        self.todo = [index for index, entry in enumerate(self.entries)
                     if not store.graded(entry["key"])]
        lessons = {jobs[index].lesson for index in self.todo}
        self.needed = needed_baselines(lessons, options.get("only"))
        self.baselines = store.baselines(salt, self.version)
        self.cache = baseline_cache()  # baselines this machine trained in earlier runs
        self._reuse_cached_baselines()
        self.untrained = [pair for pair in self.needed
                          if baseline_name(*pair) not in self.baselines]
        self.held = {}  # lesson -> notebooks waiting for its baselines
        self.in_flight = {}  # Dask future -> ("baseline", (lesson, check)) | ("notebook", i)
        self.run = ClassRun(reused=len(jobs) - len(self.todo))

    def _reuse_cached_baselines(self):
        """Take the needed baselines this machine's cache holds for this salt, course
        version and libraries (written into the run's store too, which stays whole)."""
        if self.cache is None:
            return
        kept = self.cache.baselines(self.salt, self.version)
        for pair in self.needed:
            name = baseline_name(*pair)
            if name not in self.baselines and name in kept:
                self.baselines[name] = kept[name]
                self.store.save_baseline(self.salt, self.version, name, kept[name])

    def lesson_ready(self, lesson):
        return all(baseline_name(*pair) in self.baselines
                   for pair in self.needed if pair[0] == lesson)

    def lesson_baselines(self, lesson):
        answers = {}
        for pair in self.needed:
            if pair[0] == lesson:
                answers.update(self.baselines.get(baseline_name(*pair), {}))
        return answers

    def grade_all(self, client):
        self.client = client
        pending = deque(self.todo)
        untrained = deque(self.untrained)
        capacity, capacity_read = worker_threads(self.client), time.monotonic()
        self.progress.set_workers(capacity)
        self.client.subscribe_topic(self.topic, self._on_progress)
        try:
            while pending or untrained or self.in_flight:
                if time.monotonic() - capacity_read > 5:  # workers come and go
                    capacity, capacity_read = worker_threads(self.client), time.monotonic()
                while len(self.in_flight) < capacity and untrained:
                    self._submit_baseline(untrained.popleft())
                while len(self.in_flight) < capacity and pending:
                    index = pending.popleft()
                    lesson = self.jobs[index].lesson
                    if self.lesson_ready(lesson):
                        self._submit_notebook(index)
                    else:
                        self.held.setdefault(lesson, []).append(index)
                if not self.in_flight:
                    continue
                try:
                    done = wait(list(self.in_flight), timeout=WAIT_SLICE,
                                return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    done = ()
                for future in done:
                    kind, what = self.in_flight.pop(future)
                    if kind == "baseline":
                        pending.extendleft(reversed(self._baseline_done(future, what)))
                    else:
                        self._notebook_done(future, what)
                self.progress.tick()
        finally:
            self.client.unsubscribe_topic(self.topic)
            if self.in_flight:
                self.client.cancel(list(self.in_flight))
        return self.results()

    def _on_progress(self, event):
        _, message = event
        self.progress.check_done(message["key"], message["done"], message["total"])

    def _submit_baseline(self, pair):
        future = self.client.submit(train_baseline, *pair, self.salt, pure=False,
                                    key=f"baseline-{pair[0]}-{pair[1]}-{self.run_id}")
        self.in_flight[future] = ("baseline", pair)

    def _baseline_done(self, future, pair):
        """Store a trained baseline; the notebooks it held back, now free to go."""
        name = baseline_name(*pair)
        answers = self._outcome(future, name)
        if isinstance(answers, BaseException):  # the grading tasks will train it themselves
            print(f"grader: the baseline of {name} could not be trained "
                  f"({type(answers).__name__}); its notebooks train it as they need it",
                  file=sys.stderr)
            answers = {}
        else:
            self.store.save_baseline(self.salt, self.version, name, answers)
            if self.cache is not None:
                self.cache.save(self.salt, self.version, name, answers)
        self.baselines[name] = answers
        self.progress.baseline_trained()
        return self.held.pop(pair[0], []) if self.lesson_ready(pair[0]) else []

    def _submit_notebook(self, index):
        job = self.jobs[index]
        content_hash, submission = read_once(job.path)  # the bytes graded are the bytes keyed
        entry = self.store.entry_for(job, content_hash, self.salt, self.version,
                                     self.settings)
        self.entries[index] = entry
        future = self.client.submit(
            grade_task, entry["key"], job, submission, self.salt, self.options,
            self.lesson_baselines(job.lesson), self.version, self.topic, self.grade,
            pure=False, key=f"grade-{job.lesson}-{entry['key'][:12]}-{self.run_id}")
        self.in_flight[future] = ("notebook", index)

    def _notebook_done(self, future, index):
        job, entry = self.jobs[index], self.entries[index]
        outcome = self._outcome(future, label_of(job))
        if isinstance(outcome, tuple):
            result, seconds, problem = outcome
        else:
            seconds = None
            problem = WORKER_DIED if isinstance(outcome, KilledWorker) else (
                f"the grader failed on it ({type(outcome).__name__}: "
                f"{printable(outcome, 300)})")
            result = failed_notebook(job.lesson, problem)
        self.store.save(entry, result, graded=problem is None, seconds=seconds)
        self.run.graded += problem is None
        self.run.failed += problem is not None
        self.progress.notebook_done(entry["key"], label_of(job), problem)

    def _outcome(self, future, what):
        """A finished task's value, or the exception it ended with."""
        if future.status == "finished":
            return future.result()
        if future.status == "error":
            return future.exception()
        raise ClusterError(f"the Dask scheduler dropped the task of {printable(what)} (it "
                           "was stopped or restarted); the results so far are kept")

    def results(self):
        for job, entry in zip(self.jobs, self.entries):
            result = self.store.load(entry["key"])
            if job.choice:  # which of the student's notebooks of this lesson was graded
                result.notes.insert(0, job.choice)
            self.run.results.setdefault(job.student, []).append(result)
        return self.run


def grade_class(jobs, salt, store, cluster, quiet=True, grade=None, stream=sys.stderr,
                **options):
    """Grade ``jobs`` (:class:`~grader.class_run.submissions.NotebookJob`), keeping every
    result in ``store`` (:class:`~grader.class_run.result_store.ResultStore`) and grading
    only what it lacks, on the Dask client ``cluster()`` gives (a context manager, entered
    only when there is something to grade): a :class:`ClassRun`. ``options`` go to
    :func:`~grader.judge.grade_notebook.grade_notebook` (memory_mb, disk_mb, isolate, only,
    ...); ``grade`` replaces that function (tests inject faults with it)."""
    from grader.class_run.class_cpu_share import remove_stale_class_groups

    remove_stale_groups()  # what a grader killed with SIGKILL could not remove itself
    remove_stale_class_groups()
    remove_stale_scratch()
    grading = ClassGrading(jobs, salt, store, options, grade)
    grading.progress = ClassProgress(
        len(jobs), grading.run.reused, len(grading.untrained), quiet=quiet, stream=stream,
        lessons_to_grade=[jobs[index].lesson for index in grading.todo])
    try:
        if not grading.todo:
            return grading.results()
        with cluster() as client:
            return grading.grade_all(client)
    finally:
        grading.progress.close()


def grade_jobs(jobs, salt, workers=1, scheduler=None, out=None, quiet=True, grade=None,
               **options):
    """``{student: [NotebookResult]}`` for ``jobs``, on a LocalCluster of ``workers`` (or
    the cluster at ``scheduler``), results kept in ``out`` (default: a temporary folder)."""
    import tempfile

    from grader.class_run.dask_cluster import grading_cluster
    from grader.class_run.result_store import ResultStore

    with tempfile.TemporaryDirectory(prefix="grader-results-") as temporary:
        store = ResultStore(out or temporary)
        try:
            return grade_class(jobs, salt, store,
                               lambda: grading_cluster(workers, scheduler,
                                                       options.get("isolate", True)),
                               quiet=quiet, grade=grade, **options).results
        finally:
            store.close()
