"""Grading a class: one worker process per notebook, so a worker that dies costs only
the notebook it was grading."""

import os
from pathlib import Path

import pytest

import grader.grade_class as grade_class
from grader.submissions import NotebookJob
from submission_factory import QUICK_CHECKS, TEST_SALT, write_submission

LESSON = "01_qlearning"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_that_dies_costs_only_its_own_notebook(tmp_path, monkeypatch, workers):
    paths = [write_submission(tmp_path, LESSON, student=name) for name in ("amy", "bo", "cat")]
    real = grade_class.grade_notebook

    def dies_on_bo(path, salt, **options):  # what a grader crash looks like to the class
        if Path(path).parent.name == "bo":
            os._exit(9)
        return real(path, salt, **options)

    monkeypatch.setattr(grade_class, "grade_notebook", dies_on_bo)
    jobs = [NotebookJob(path.parent.name, path, LESSON) for path in paths]
    results = grade_class.grade_jobs(jobs, TEST_SALT, workers=workers,
                                     only=QUICK_CHECKS[LESSON], check_time_limit=10.0)
    assert sorted(results) == ["amy", "bo", "cat"]
    for student in ("amy", "cat"):
        (result,) = results[student]
        assert result.score == result.max_score > 0
    (died,) = results["bo"]
    assert died.score == 0 and died.checks
    assert all(check.status == "error" and "grading process died" in check.feedback
               for check in died.checks)
