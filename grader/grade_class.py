"""Grade many notebooks, each in a worker process of its own, several at a time.

Each notebook is graded by a forked worker that sends its result back over a pipe and
exits. A worker that dies (killed, out of memory, a grader bug that takes the process
down) costs only its own notebook, which is reported as not graded; the other workers
and the rest of the class go on. Verdict baselines are trained once, before any worker
starts, so every worker inherits them.
"""

import multiprocessing
import os
import pickle
import signal
import time
from collections import defaultdict
from multiprocessing.connection import wait

from checks import checks_for_lesson
from grader.grade_notebook import CheckResult, NotebookResult, grade_notebook
from grader.lessons import all_lessons
from grader.rebuild import nbgrader_meta, test_cells


def prepare_verdicts(lessons, salt, only=None):
    """Train the baselines the verdicts compare against, once, before workers fork."""
    for lesson in sorted(lessons):
        checks = checks_for_lesson(lesson)
        for check in checks:
            if check.prepare is not None and (only is None or check.name in only):
                check.prepare(checks.inputs(check.name, salt))


def failed_notebook(lesson, reason):
    """The result of a notebook whose grading broke down: every check, 0, with the reason."""
    result = NotebookResult(lesson)
    for cell in test_cells(all_lessons()[lesson].source()):
        meta = nbgrader_meta(cell)
        result.add(CheckResult(meta["grade_id"], 0.0, float(meta.get("points", 0)), "error",
                               f"not graded: {reason}"))
    result.notes.append(f"This notebook was not graded: {reason}.")
    return result


def _grade_job(job, salt, options):
    try:
        return grade_notebook(job.path, salt, lesson=job.lesson, **options)
    except Exception as error:  # a grader bug must not lose the rest of the class
        return failed_notebook(job.lesson, f"the grader failed on it "
                                           f"({type(error).__name__}: {error})")


def die_with_parent():
    """Ask the kernel to kill this process when its parent dies (Linux), so a grader
    that is killed takes its workers, and through them their sandboxes, along."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the workers end with their notebook
        pass


PR_SET_PDEATHSIG = 1


def _worker(connection, job, salt, options, parent):
    die_with_parent()
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    os.setpgrp()  # its own group: the parent can end it and whatever it started
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    result = _grade_job(job, salt, options)
    connection.send_bytes(pickle.dumps(result))
    connection.close()
    os._exit(0)


def grade_jobs(jobs, salt, workers=1, progress=None, **options):
    """``{student: [NotebookResult]}`` for ``jobs``, graded ``workers`` at a time, each
    in a process of its own; ``progress(job)`` after each one. ``options`` go to
    :func:`grade_notebook` (memory_mb, disk_mb, isolate, ...)."""
    prepare_verdicts({job.lesson for job in jobs}, salt, options.get("only"))
    results = defaultdict(list)

    def finished(job, result):
        results[job.student].append(result)
        if progress:
            progress(job)

    context = multiprocessing.get_context("fork")  # workers inherit the trained baselines
    pending, running = list(jobs), {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                job = pending.pop(0)
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(target=_worker, daemon=True,
                                          args=(sender, job, salt, options, os.getpid()))
                process.start()
                sender.close()
                running[receiver] = (job, process)
            for receiver in wait(list(running)):
                job, process = running.pop(receiver)
                try:
                    result = pickle.loads(receiver.recv_bytes())
                except (EOFError, OSError, pickle.UnpicklingError):
                    process.join(5)
                    result = failed_notebook(job.lesson, "its grading process died (exit "
                                                         f"code {process.exitcode})")
                receiver.close()
                process.join()
                finished(job, result)
    finally:
        for job, process in running.values():
            _end(process)
    return dict(results)


def _end(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 5
    while process.is_alive() and time.monotonic() < deadline:
        process.join(0.1)
