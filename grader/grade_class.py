"""Grade many notebooks, one kernel each, on several worker processes."""

import concurrent.futures
import multiprocessing
from collections import defaultdict

from checks import checks_for_lesson
from grader.grade_notebook import CheckResult, NotebookResult, grade_notebook


def prepare_verdicts(lessons, salt):
    """Train the baselines the verdicts compare against, once, before workers fork."""
    for lesson in sorted(lessons):
        checks = checks_for_lesson(lesson)
        for check in checks:
            if check.prepare is not None:
                check.prepare(checks.inputs(check.name, salt))


def _grade_job(job, salt, submissions_root, memory_mb, isolate):
    try:
        return grade_notebook(job.path, salt, submissions_root=submissions_root,
                              memory_mb=memory_mb, isolate=isolate)
    except Exception as error:  # a grader bug must not lose the rest of the class
        result = NotebookResult(job.lesson)
        result.add(CheckResult("grading", 0.0, 0.0, "error",
                               f"the grader failed on this notebook: "
                               f"{type(error).__name__}: {error}"))
        return result


def grade_jobs(jobs, salt, submissions_root=None, workers=1, memory_mb=3072, isolate=True,
               progress=None):
    """``{student: [NotebookResult]}`` for ``jobs``; ``progress(job)`` after each one."""
    prepare_verdicts({job.lesson for job in jobs}, salt)
    results = defaultdict(list)
    arguments = (salt, submissions_root, memory_mb, isolate)
    if workers <= 1:
        for job in jobs:
            results[job.student].append(_grade_job(job, *arguments))
            if progress:
                progress(job)
        return dict(results)
    context = multiprocessing.get_context("fork")  # workers inherit the trained baselines
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {pool.submit(_grade_job, job, *arguments): job for job in jobs}
        for future in concurrent.futures.as_completed(futures):
            job = futures[future]
            results[job.student].append(future.result())
            if progress:
                progress(job)
    return dict(results)
