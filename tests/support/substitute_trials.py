"""Does a lesson's check pass when something else stands in for the student's answer?

Each trial puts one object (a course helper, a reference module's class, found by its
dotted name) in place of one name in the released, unanswered notebook's namespace, and
runs checks on it in a forked process under a sandbox's limits: a stand-in that hangs,
eats memory or breaks the interpreter scores nothing and takes nothing down with it. The
trials of one stand-in run in turn in one child, each on its own copy of the namespace.

The forks are made by a small server process (``python -m tests.support.substitute_trials``)
that imported only the course and keeps each lesson's empty namespace: forking it costs
about 7 ms, where forking a pytest-xdist worker, which holds hundreds of MB of page
tables, costs 12-22 ms, and tests/threats/test_reachable_answers.py makes thousands of
trials.
"""

import importlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]

CALL_TIME_LIMIT = 10  # seconds one check may take on a stand-in (most fail at once)
MEMORY_LIMIT = 2 * 2**30  # bytes: a stand-in may build huge arrays (a sandbox caps them)


def empty_notebook_namespace(lesson):
    """What the student's process holds for the released, unanswered notebook."""
    from grader.judge.rebuild import cells_to_run, rebuild
    from grader.nbgrader_cells import nbgrader_meta

    namespace = {"__name__": "__main__"}
    for cell in cells_to_run(rebuild(lesson.source(), None).notebook):
        try:
            exec(compile(cell.source, nbgrader_meta(cell).get("grade_id", "cell"), "exec"),
                 namespace)  # noqa: S102 - the course's own cells and its stubs
        except NotImplementedError:
            pass
    return namespace


def resolved(dotted_name):
    """The object a dotted name (``module.name``, the module possibly dotted) names."""
    module_name, name = dotted_name.rsplit(".", 1)
    return getattr(importlib.import_module(module_name), name)


class TooSlow(Exception):
    pass


@contextmanager
def time_limit(seconds):
    def stop(signum, frame):
        raise TooSlow()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _passes(lesson_checks, name, namespace):
    try:
        with time_limit(CALL_TIME_LIMIT):
            lesson_checks.run(name, namespace)
    except (AssertionError, TooSlow):
        return False
    except Exception:  # the stand-in broke the probe: no points either
        return False
    return True


def trials_in_a_fork(lesson_checks, trials, namespace):
    """Whether any check of each trial ``(name, stand-in object, check names)`` passes on
    ``namespace`` with the stand-in in place of the name (none for a name of None), all
    run in turn in one forked child (a fork costs several times a trial): each trial
    gets its own copy of the namespace, and a trial that kills the child fails, the next
    one going on in a new child."""
    outcomes = []
    while len(outcomes) < len(trials):
        remaining = trials[len(outcomes):]
        read_end, write_end = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(read_end)
            _run_trials(lesson_checks, remaining, namespace, write_end)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as reported:
            done = [byte == ord("1") for byte in reported.read()]
        os.waitpid(child, 0)
        outcomes += done[:len(remaining)]
        if len(done) < len(remaining):
            outcomes.append(False)  # it ended the child: no points
    return outcomes


def _run_trials(lesson_checks, trials, namespace, report):
    """In the forked child: one byte per trial to ``report``, then exit."""
    try:
        quiet = os.open(os.devnull, os.O_WRONLY)  # what it prints, even below Python,
        os.dup2(quiet, 1)                         # must not reach the server's replies
        os.dup2(quiet, 2)
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        for name, stand_in, check_names in trials:
            # a backstop for the alarm: SIGXCPU ends the child
            used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
            cpu = int(used) + CALL_TIME_LIMIT * len(check_names) + 5
            resource.setrlimit(resource.RLIMIT_CPU, (min(cpu, hard) if hard >= 0 else cpu,
                                                     hard))
            trial = dict(namespace)
            if name is not None:
                trial[name] = stand_in
            with redirect_stdout(io.StringIO()):
                passed = any(_passes(lesson_checks, check, dict(trial))
                             for check in check_names)
            os.write(report, b"1" if passed else b"0")
    finally:
        os._exit(0)


def serve(requests, replies):
    """Answer each request line ``{"lesson", "trials": [[name, stand-in, [checks]]]}``
    with a line ``{"passed": [bool per trial]}``: a trial with no name runs the empty
    notebook itself. The trials of one stand-in share a child."""
    from checks import checks_for_lesson
    from grader.lessons import all_lessons

    namespaces = {}
    for line in requests:
        request = json.loads(line)
        lesson = request["lesson"]
        if lesson not in namespaces:
            namespaces[lesson] = empty_notebook_namespace(all_lessons()[lesson])
        by_stand_in = {}
        for index, trial in enumerate(request["trials"]):
            by_stand_in.setdefault(trial[1], []).append(index)
        passed = [False] * len(request["trials"])
        for origin, indexes in by_stand_in.items():
            stand_in = None if origin is None else resolved(origin)  # imported once, here
            outcomes = trials_in_a_fork(checks_for_lesson(lesson),
                                         [(request["trials"][index][0], stand_in,
                                           request["trials"][index][2]) for index in indexes],
                                         namespaces[lesson])
            for index, outcome in zip(indexes, outcomes):
                passed[index] = outcome
        replies.write(json.dumps({"passed": passed}) + "\n")
        replies.flush()


class TrialServer:
    """The server, started in its own process; ``passed(lesson, trials)`` asks it."""

    def __init__(self):
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.substitute_trials"], cwd=REPOSITORY,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def passed(self, lesson, trials):
        """[bool per trial (name or None, the stand-in's dotted name, [check names])]."""
        self._process.stdin.write(json.dumps({"lesson": lesson, "trials": trials}) + "\n")
        self._process.stdin.flush()
        reply = self._process.stdout.readline()
        if not reply:
            raise RuntimeError(f"the trial server ended (status {self._process.wait()})")
        return json.loads(reply)["passed"]

    def close(self):
        self._process.stdin.close()
        self._process.wait(30)


if __name__ == "__main__":
    # replies go out on a copy of stdout; what the course's cells print goes nowhere
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    serve(sys.stdin, replies)
