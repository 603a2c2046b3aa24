"""Buggy implementations, graded by the real grader, lose points on their check.

``test_bugs_in_process.py`` runs every bug through the checks in this process, which is
fast; this runs one bug per lesson through a sandboxed kernel, JSON and all, as an
instructor's grading would, restricted to the check that names the bug. (Every check
also passes through a kernel when the example class is graded, and a learning check
fails through one in ``test_grader_tampering.py``.)
"""

import pytest

from bugs import ALL_BUGS
from checks import checks_for_lesson
from submission_factory import grade, write_submission


# the first bug of each lesson whose check is not a learning check (seconds, not minutes)
ONE_BUG_PER_LESSON = list({bug.lesson: bug for bug in reversed(ALL_BUGS)
                           if not checks_for_lesson(bug.lesson)[bug.check].learning}.values())


@pytest.mark.parametrize("bug", ONE_BUG_PER_LESSON, ids=lambda bug: bug.name)
def test_the_grader_takes_points_off_the_check_that_names_the_bug(tmp_path, bug):
    path = write_submission(tmp_path, bug.lesson, bug.answers)
    result = grade(path, only={bug.check})
    (check,) = result.checks
    assert check.score < check.max_score, f"{bug.name}: {check.feedback}"
    assert check.status in ("failed", "error", "timeout")
    assert check.feedback.strip() and "Traceback" not in check.feedback
