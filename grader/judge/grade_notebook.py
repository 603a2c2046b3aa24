"""Grade one submitted notebook: rebuild it, run it in a sandbox, probe it from outside.

The student's process runs the rebuilt notebook's setup, given and answer cells (tests
and experiments are skipped). Then, for each test cell, the check's probe runs *here*,
in the grader's process, driving the student's objects across the boundary
(:mod:`grader.judge.student_process`), and its verdict judges what came back. A fault costs
only what it touches: a cell that raises or loops is reported and skipped, and a
process that dies, hangs or breaks the protocol is replaced for the next check.
"""

import contextlib
import time
from pathlib import Path

from checks import checks_for_lesson
from checks.framework import (Outcome, as_plain_data, callee_note, names_callee,
                              probe_and_judge, seed_for, with_notes)
from grader.judge.rebuild import cells_to_run, rebuild
from grader.judge.sandbox import (DEFAULT_DISK_MB, DEFAULT_MEMORY_MB, isolation,
                                  make_scratch, remove_scratch)
from grader.judge.student_process import StudentProcess, StudentProcessLost
from grader.judge.submission_file import UnreadableSubmission, read_submission
from grader.lessons import lesson_named, lesson_of
from grader.nbgrader_cells import autograded_cells, is_answer, nbgrader_meta
from grader.results import CheckResult, NotebookResult, Status
from grader.safe_text import printable

# Budgets are CPU seconds of the sandbox and of the grader's work for it
# (grader.judge.budgets): the machine's load changes how long they take, never whether
# they are enough.
CELL_TIME_LIMIT = 30.0  # CPU seconds for one answer cell of the notebook itself
COURSE_CELL_TIME_LIMIT = 60.0  # the course's own cells (imports, helpers): never tighter
HOUSEKEEPING_TIME_LIMIT = 10.0  # CPU seconds for seeding, looking names up, forgetting
MAX_RESTARTS = 8  # past this many lost processes, the remaining checks are not attempted
# What one notebook may cost in all, every cell, check and restart together: CPU seconds
# (a complete lesson costs 10-50) and, as a backstop for code that sleeps, wall seconds.
# Past either, the checks not yet graded are reported as not graded.
NOTEBOOK_CPU_LIMIT = 900.0
NOTEBOOK_WALL_LIMIT = 7200.0


class CannotGoOn(Exception):
    """Grading of this notebook stops; the remaining checks are reported as not graded."""


class NotebookGrading:
    """The state of grading one notebook: its student process and what went wrong."""

    def __init__(self, lesson, rebuilt, scratch, salt, memory_mb, disk_mb, isolate,
                 cell_time_limit=CELL_TIME_LIMIT, check_time_limit=None):
        self.lesson, self.rebuilt, self.salt = lesson, rebuilt, salt
        self.cell_time_limit = cell_time_limit
        self.check_time_limit = check_time_limit  # overrides every check's own limit
        self.checks = checks_for_lesson(lesson.name)
        self.memory_mb = memory_mb
        self.process = StudentProcess(scratch, memory_mb, disk_mb, isolate)
        self.skipped_cells = set()  # cells that killed or hung the process: not run again
        self.cell_problems = {}  # grade_id -> what happened when it ran
        self.broken = None  # why the remaining checks cannot be graded, once they cannot
        self.results = {}  # grade_id -> CheckResult of the checks graded so far
        self.origin = None  # (function, lesson) that raised in the last check, if known
        self.cpu_spent = 0.0  # of NOTEBOOK_CPU_LIMIT, by every budget so far
        self.started = time.monotonic()  # for NOTEBOOK_WALL_LIMIT

    @contextlib.contextmanager
    def _budget(self, cpu_seconds):
        """The student process's budget of ``cpu_seconds``, no more than what is left of
        the notebook's (CannotGoOn once that is spent); what it used is counted."""
        left = NOTEBOOK_CPU_LIMIT - self.cpu_spent
        if left <= 0 or time.monotonic() - self.started > NOTEBOOK_WALL_LIMIT:
            raise CannotGoOn(f"the notebook used its whole budget ({NOTEBOOK_CPU_LIMIT:g} s of "
                             f"CPU time, or {NOTEBOOK_WALL_LIMIT / 3600:g} hours, for all its "
                             "cells and checks together)")
        with self.process.budget(min(cpu_seconds, round(max(left, 0.01), 2))) as meter:
            try:
                yield meter
            finally:
                self.cpu_spent += meter.used()[0]

    def start(self):
        if self.process.restarts >= MAX_RESTARTS:
            raise CannotGoOn("the student's process died too often")
        self.process.stop()
        try:
            self.process.start()
        except RuntimeError as error:
            raise CannotGoOn(str(error)) from None
        return self._run_cells()

    def load(self, rebuilt):
        """Run another rebuilt notebook of the lesson in the student's process (started if
        it is not running), to grade it next: tests grade many versions of a lesson's
        answers one after another this way, without a new sandbox for each."""
        self.rebuilt, self.skipped_cells, self.cell_problems = rebuilt, set(), {}
        self.results, self.broken = {}, None
        if not self.process.alive():
            return self.start()
        return self._run_cells()

    def _run_cells(self):
        for cell in cells_to_run(self.rebuilt.notebook):
            grade_id = nbgrader_meta(cell).get("grade_id", cell.get("id", "?"))
            if grade_id in self.skipped_cells:
                continue
            limit = (self.cell_time_limit if is_answer(cell)
                     else max(self.cell_time_limit, COURSE_CELL_TIME_LIMIT))
            try:
                with self._budget(limit):
                    outcome = self.process.run_cell(cell.source)
            except StudentProcessLost as lost:
                if not is_answer(cell):
                    raise CannotGoOn(f"the course's own cell {grade_id!r} did not run "
                                     f"({lost})") from None
                self.cell_problems[grade_id] = self._describe_lost_cell(lost)
                self.skipped_cells.add(grade_id)
                if lost.alive:  # interrupted: what it defined before the loop stays
                    continue
                return self.start()
            self.process.end_strays()
            if outcome["status"] == "ok":
                continue
            if not is_answer(cell):
                raise CannotGoOn(f"the course's own cell {grade_id!r} failed: "
                                 f"{outcome.get('type')}: {outcome.get('message')} "
                                 f"(the course's cells need about 500 MB of the sandbox's "
                                 f"memory; --memory-mb is {self.memory_mb})")
            self.cell_problems[grade_id] = (f"raised {outcome.get('type')}: "
                                            f"{outcome.get('message')}")[:300]
        return None

    def _describe_lost_cell(self, lost):
        if lost.reason == "timeout":
            return f"{_spent_words(lost)}; it was skipped"
        if lost.reason == "protocol":
            why = f" ({printable(lost.detail, 200)})" if lost.detail else ""
            return (f"broke the student's process's exchange with the grader{why}, so it "
                    "was restarted; the cell was skipped")
        return f"made the student's process end ({_death_words(lost, self.memory_mb)}); it was skipped"

    def cell_notes(self):
        return [f"Your answer cell '{grade_id}' {problem}."
                for grade_id, problem in self.cell_problems.items()]

    def grade_check(self, cell):
        name = nbgrader_meta(cell)["grade_id"]
        points = float(nbgrader_meta(cell).get("points", 0))
        check = self.checks[name]
        inputs = as_plain_data(self.checks.inputs(name, self.salt))
        time_limit = self.check_time_limit or check.time_limit
        self.probe_usage, self.origin, figure = None, None, None
        try:
            outcome = self._probe_and_judge(check, inputs, time_limit)
            status, fraction, figure = outcome.status, outcome.fraction, outcome.figure
            said = (outcome.detail if outcome.status in (Status.PASSED, Status.FAILED)
                    else printable(outcome.detail, 1000))  # what the student's code raised
            feedback = f"{check.title}: {said}"
            self.origin = outcome.origin
        except StudentProcessLost as lost:
            status, fraction, feedback = self._describe_lost_check(check, lost)
            self._recover(lost)
        if status != Status.PASSED and not (status == Status.NOT_WRITTEN and self.origin):
            # (the unwritten code that raised is named: no guesses, as in a notebook)
            feedback = with_notes(feedback, self._callee_notes(check))
        if status != Status.PASSED and self.cell_problems:
            feedback += " Note: " + " ".join(self.cell_notes())
        result = CheckResult(name, round(points * fraction, 6), points, status, feedback,
                             figure, self.probe_usage)
        self.results[name] = result
        return result

    def _callee_notes(self, check):
        """What the feedback of a failed check adds about the student's code it calls
        whose own checks failed in this grading (checks.framework.Callee)."""
        notes = []
        for callee in check.graded_callees(self.lesson.name):
            if names_callee(self.origin, callee):
                continue
            failures = [(self.checks[name].title,
                         _after_title(self.results[name].feedback, self.checks[name].title))
                        for name in callee.checks
                        if name in self.results and not self.results[name].passed]
            if failures:
                notes.append(callee_note(callee, failures, self.lesson.name))
        return notes

    def _recover(self, lost):
        """After a lost check: forget its objects if the process lives, else start anew."""
        if lost.alive:
            try:
                with self._budget(HOUSEKEEPING_TIME_LIMIT):
                    self.process.forget()
                self.process.end_strays()
                return
            except StudentProcessLost as again:
                lost = again
        try:
            self.start()  # a fresh process for the checks that follow
        except CannotGoOn as error:
            self.broken = str(error)

    def _probe_and_judge(self, check, inputs, time_limit):
        """The check's :class:`~checks.framework.Outcome` on the student's objects, the
        probe within ``time_limit`` CPU seconds; raises StudentProcessLost."""
        with self._budget(HOUSEKEEPING_TIME_LIMIT):
            self.process.seed(seed_for(self.salt, self.lesson.name, check.name))
            objects = self.process.lookup(check.needs)
        missing = [name for name in check.needs if name not in objects]
        if missing:
            return Outcome(Status.ERROR, 0.0, check.title,
                           f"{', '.join(missing)} is not defined. Its answer cell did not "
                           "run to the end, or the name was changed.")
        return probe_and_judge(check, inputs, objects, check.title,
                               metered=lambda: self._metered(time_limit),
                               after_probe=self._forget_check_objects, strict=False)

    @contextlib.contextmanager
    def _metered(self, time_limit):
        """The probe's budget; what it spent goes to the report, however it ended."""
        with self._budget(time_limit) as meter:
            try:
                yield
            finally:
                cpu, wall = meter.used()
                self.probe_usage = {"cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 2)}

    def _forget_check_objects(self):
        with self._budget(HOUSEKEEPING_TIME_LIMIT):
            self.process.forget()
        self.process.end_strays()

    def _describe_lost_check(self, check, lost):
        if lost.reason == "timeout":
            return (Status.TIMEOUT, 0.0, f"{check.title}: {_spent_words(lost)}.")
        if lost.reason == "died":
            return (Status.ERROR, 0.0, f"{check.title}: the student's process died while your "
                    f"code was checked ({_death_words(lost, self.memory_mb)}). It was restarted "
                    "for the remaining checks.")
        why = f" ({printable(lost.detail, 200)})" if lost.detail else ""
        return (Status.ERROR, 0.0, f"{check.title}: your notebook's process sent the grader "
                f"something it could not read{why}, so this check was stopped.")

    def close(self):
        self.process.stop()


def _after_title(feedback, title):
    prefix = f"{title}: "
    return feedback[len(prefix):] if feedback.startswith(prefix) else feedback


def _spent_words(lost):
    """What a budget that ran out says: the student's code "..." (which budget, how)."""
    if lost.spent is None:
        return "your code did not answer in time and was stopped"
    return "your code " + lost.spent.words()


def _death_words(lost, memory_mb):
    if lost.why:
        return lost.why
    return (f"os._exit, a crash, or a single process over the {memory_mb} MB memory "
            "budget")


def not_graded(result, tests, reason):
    done = {check.id for check in result.checks}
    for cell in tests:
        meta = nbgrader_meta(cell)
        if meta["grade_id"] not in done:
            result.add(CheckResult(meta["grade_id"], 0.0, float(meta.get("points", 0)),
                                   Status.ERROR, f"not graded: {reason}"))


def grade_notebook(path, salt, memory_mb=DEFAULT_MEMORY_MB, disk_mb=DEFAULT_DISK_MB,
                   isolate=True, only=None, cell_time_limit=CELL_TIME_LIMIT,
                   check_time_limit=None, lesson=None, submission=None, progress=None):
    """Grade the notebook at ``path`` (as ``lesson``, a :class:`~grader.lessons.Lesson` or
    its name, when given; else as the lesson the file is).

    ``only`` restricts grading to some check names, and ``check_time_limit`` replaces
    every check's own limit: both let tests grade quickly. ``submission``, when given,
    is what the file held, read beforehand (:func:`~grader.judge.submission_file.read_once`:
    a ``Submission`` or the ``UnreadableSubmission`` saying why not), so the file itself
    need not be on this machine. ``progress(done, total)`` is called after each check.
    """
    path = Path(path)
    if submission is None:
        try:
            submission = read_submission(path)
        except UnreadableSubmission as error:
            submission = error
    if isinstance(submission, UnreadableSubmission):
        submission, unreadable = None, str(submission)
    else:
        unreadable = None
    if lesson is None:
        lesson = lesson_of(path, submission)
    elif isinstance(lesson, str):
        lesson = lesson_named(lesson)
    rebuilt = rebuild(lesson.source(), submission, lesson.stubs)
    result = NotebookResult(lesson.name, written=rebuilt.written,
                            isolation=isolation(isolate, memory_mb))
    tests = [cell for cell in autograded_cells(rebuilt.notebook)
             if only is None or nbgrader_meta(cell)["grade_id"] in only]
    if unreadable is not None:
        result.notes.append(f"The notebook could not be read: {unreadable}.")
        not_graded(result, tests, f"the notebook could not be read ({unreadable})")
        return result
    result.notes.extend(f"In your notebook, {problem}." for problem in submission.problems)
    if rebuilt.missing:
        result.notes.append("Answer cells missing from the submission (graded as "
                            "unanswered): " + ", ".join(rebuilt.missing) + ".")
    scratch = make_scratch(lesson)
    grading = NotebookGrading(lesson, rebuilt, scratch, salt, memory_mb, disk_mb, isolate,
                              cell_time_limit, check_time_limit)
    try:
        grading.start()
        for done, cell in enumerate(tests, 1):
            if grading.broken:
                raise CannotGoOn(grading.broken)
            result.add(grading.grade_check(cell))
            if progress is not None:
                progress(done, len(tests))
    except CannotGoOn as error:
        not_graded(result, tests, str(error))
    finally:
        grading.close()
        remove_scratch(scratch)
    if grading.process.budgets_held is not None:  # what held them, not what would have
        result.isolation = {"level": result.isolation["level"],
                            "syscalls": result.isolation.get("syscalls"),
                            **grading.process.budgets_held}
    result.notes.extend(grading.cell_notes())
    return result
