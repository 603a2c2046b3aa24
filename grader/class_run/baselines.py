"""The baselines learning checks compare against: trained once, anywhere, then handed out.

A learning check's verdict compares the student's run with the grader's own baseline
(``check.prepare``), which depends only on the check's inputs, so on the salt and the
course version. Each one is trained once, as a task of its own, and what it computed (a
few hundred bytes of :func:`checks.expected.expected` answers) is stored with the
results and given by value to every grading task, which installs it before grading: no
worker trains a baseline another one already has.
"""

from checks import checks_for_lesson
from checks.expected import recording, remember


def needed_baselines(lessons, only=None):
    """``[(lesson, check name)]`` of the checks with a baseline in ``lessons``."""
    return [(lesson, check.name) for lesson in sorted(lessons)
            for check in checks_for_lesson(lesson)
            if check.prepare is not None and (only is None or check.name in only)]


def baseline_name(lesson, check):
    return f"{lesson}/{check}"


def train_baseline(lesson, check_name, salt):
    """Train one check's baseline here; the answers it gave, ``{key: value}``."""
    checks = checks_for_lesson(lesson)
    with recording() as answers:
        checks[check_name].prepare(checks.inputs(check_name, salt))
    return dict(answers)


def install_baselines(answers):
    """Make answers trained elsewhere this process's own (see :func:`train_baseline`)."""
    remember(answers)
