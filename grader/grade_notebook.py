"""Grade one submitted notebook: rebuild it, run it in a sandboxed kernel, probe, judge.

The order inside the kernel: the grader's bootstrap (before any student code), then the
rebuilt notebook's setup, given and answer cells (tests and experiments are skipped),
then one probe per test cell. Each probe's data comes back as JSON and its verdict runs
here, in the grader's process. A fault costs only what it touches: a cell that raises or
loops is reported and skipped, and a kernel that dies is restarted for the next check.
"""

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from checks import checks_for_lesson
from checks.framework import seed_for
from grader.kernel_session import KernelSession
from grader.lessons import lesson_of
from grader.rebuild import cells_to_run, is_answer, nbgrader_meta, rebuild, test_cells
from grader.sandbox import (DEFAULT_MEMORY_MB, kernel_argv, kernel_env, make_scratch,
                            namespaces_available, probe_modules)
from checks import LESSON_MODULES

CELL_TIME_LIMIT = 30.0  # seconds for one cell of the notebook itself
BOOTSTRAP = (Path(__file__).parent / "in_kernel.py").read_text()
MAX_RESTARTS = 8  # past this many kernel deaths, the remaining checks are not attempted


@dataclass
class CheckResult:
    id: str
    score: float
    max_score: float
    status: str  # "passed" | "failed" | "error" | "timeout"
    feedback: str


@dataclass
class NotebookResult:
    name: str
    score: float = 0.0
    max_score: float = 0.0  # automatic points only: written answers are graded by people
    checks: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    written: list = field(default_factory=list)  # rebuild.WrittenAnswer, awaiting a person

    def add(self, result):
        self.checks.append(result)
        self.score += result.score
        self.max_score += result.max_score


class NotebookGrading:
    """The state of grading one notebook: its kernel and what went wrong so far."""

    def __init__(self, lesson, rebuilt, scratch, salt, memory_mb, isolate,
                 cell_time_limit=CELL_TIME_LIMIT, check_time_limit=None):
        self.lesson, self.rebuilt, self.salt = lesson, rebuilt, salt
        self.cell_time_limit = cell_time_limit
        self.check_time_limit = check_time_limit  # overrides every check's own limit
        self.checks = checks_for_lesson(lesson.name)
        self.memory_mb = memory_mb
        self.session = KernelSession(kernel_argv(scratch, memory_mb, isolate), scratch.workdir,
                                     kernel_env(scratch), connection_dir=scratch.root)
        self.skipped_cells = set()  # cells that killed or hung the kernel: not run again
        self.cell_problems = {}  # grade_id -> what happened when it ran
        self.tampering = set()  # IPython hooks the student's code changed (and we undid)

    def start(self):
        self.session.start()
        self._prepare_kernel()

    def _prepare_kernel(self):
        install = (BOOTSTRAP + "\n_course_grader_run_probe = _course_grader_install("
                   f"{LESSON_MODULES[self.lesson.name]!r}, {probe_modules(self.lesson)!r})"
                   "\ndel _course_grader_install\n")
        outcome = self.session.execute(install, 60)
        if outcome.status != "ok":
            raise RuntimeError(f"the grader could not prepare the kernel: {outcome.status} "
                               f"{outcome.error_name}: {outcome.error_value}")
        for cell in cells_to_run(self.rebuilt.notebook):
            grade_id = nbgrader_meta(cell).get("grade_id", cell.get("id", "?"))
            if grade_id in self.skipped_cells:
                continue
            outcome = self.session.execute(cell.source, self.cell_time_limit)
            if outcome.status == "ok":
                continue
            if not is_answer(cell):
                raise RuntimeError(f"the course's own cell {grade_id!r} failed: "
                                   f"{outcome.status} {outcome.error_name}: "
                                   f"{outcome.error_value} (a kernel needs about 1.2 GB of "
                                   f"address space; --memory-mb is {self.memory_mb})")
            self.cell_problems[grade_id] = self._describe_cell_fault(outcome)
            if outcome.status in ("died", "timeout"):
                self.skipped_cells.add(grade_id)
                if outcome.status == "died" or outcome.error_name == "unresponsive":
                    self.session.restart()
                    return self._prepare_kernel()

    def _describe_cell_fault(self, outcome):
        if outcome.status == "error":
            return f"raised {outcome.error_name}: {outcome.error_value}"[:300]
        if outcome.status == "timeout":
            return (f"did not finish within {self.cell_time_limit:.0f} s and was stopped "
                    "(an infinite loop at the top level of the cell?)")
        return (f"made the kernel die (os._exit, a crash, or over the {self.memory_mb} MB "
                "memory cap); it was skipped")

    def cell_notes(self):
        return [f"Your answer cell '{grade_id}' {problem}."
                for grade_id, problem in self.cell_problems.items()]

    def grade_check(self, cell):
        name = nbgrader_meta(cell)["grade_id"]
        points = float(nbgrader_meta(cell).get("points", 0))
        check = self.checks[name]
        inputs = self.checks.inputs(name, self.salt)
        request = json.dumps({"check": name, "inputs": inputs,
                              "global_seed": seed_for(self.salt, self.lesson.name, name)})
        time_limit = self.check_time_limit or check.time_limit
        outcome = self.session.evaluate(f"_course_grader_run_probe({request!r})", time_limit)
        status, fraction, feedback = self._judge(check, inputs, outcome, time_limit)
        if outcome.status == "died" or outcome.error_name == "unresponsive":
            if self.session.restarts >= MAX_RESTARTS:
                raise RuntimeError("the kernel died too often")
            self.session.restart()
            self._prepare_kernel()
        if status != "passed" and self.cell_problems:
            feedback += " Note: " + " ".join(self.cell_notes())
        return CheckResult(name, round(points * fraction, 6), points, status, feedback)

    def _judge(self, check, inputs, outcome, time_limit):
        """(status, fraction of points, feedback) from a probe's execution."""
        if outcome.status == "timeout":
            return ("timeout", 0.0, f"{check.title}: your code did not finish within "
                    f"{time_limit:.0f} s and was stopped (an infinite loop?).")
        if outcome.status == "died":
            return ("error", 0.0, f"{check.title}: the kernel died while checking your code "
                    f"(os._exit, a crash, or more than the {self.memory_mb} MB memory cap). "
                    "It was restarted for the remaining checks.")
        if not outcome.payloads:
            what = (f"{outcome.error_name}: {outcome.error_value}"[:300]
                    if outcome.status == "error" else "no result")
            return ("error", 0.0, f"{check.title}: the check could not run ({what}).")
        result = outcome.payloads[-1]
        notice = ""
        self.tampering.update(result.get("tampering", []))
        if result.get("tampering"):
            notice = (" (Your notebook changed " + ", ".join(result["tampering"])
                      + "; the grader undid it before this check.)")
        if result.get("status") == "missing":
            names = ", ".join(result.get("names", []))
            return ("error", 0.0, f"{check.title}: {names} is not defined. Its answer cell "
                    "did not run to the end, or the name was changed." + notice)
        if result.get("status") != "ok":
            return ("error", 0.0, f"{check.title}: {result.get('message', 'no result')}"
                    + notice)
        try:
            verdict = check.verdict(inputs, result["data"])
        except Exception as error:  # data of the wrong shape: the student's objects lied
            return ("error", 0.0, f"{check.title}: your code's results could not be "
                    f"judged ({type(error).__name__}).{notice}")
        status = "passed" if verdict.passed else "failed"
        fraction = min(1.0, max(0.0, verdict.fraction))
        return (status, fraction, f"{check.title}: {verdict.feedback}{notice}")

    def close(self):
        self.session.shutdown()


def grade_notebook(path, salt, submissions_root=None, memory_mb=DEFAULT_MEMORY_MB,
                   isolate=True, only=None, cell_time_limit=CELL_TIME_LIMIT,
                   check_time_limit=None):
    """Grade the notebook at ``path``.

    ``only`` restricts grading to some check names, and ``check_time_limit`` replaces
    every check's own limit: both let tests grade quickly.
    """
    path = Path(path)
    notes = []
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as error:  # a corrupt file is the submission's problem, reported
        submission = None
        notes.append(f"The notebook could not be read ({type(error).__name__}: "
                     f"{str(error)[:200]}); every answer counts as missing.")
    lesson = lesson_of(path, submission)
    source = lesson.source()
    rebuilt = rebuild(source, submission)
    result = NotebookResult(lesson.name, notes=notes, written=rebuilt.written)
    if rebuilt.missing and submission is not None:
        result.notes.append("Answer cells missing from the submission (graded as "
                            "unanswered): " + ", ".join(rebuilt.missing) + ".")
    if not (isolate and namespaces_available()):
        result.notes.append("Graded without a filesystem sandbox (Linux namespaces are not "
                            "available here).")
    tests = [cell for cell in test_cells(rebuilt.notebook)
             if only is None or nbgrader_meta(cell)["grade_id"] in only]
    scratch = make_scratch(lesson, path, submissions_root)
    grading = NotebookGrading(lesson, rebuilt, scratch, salt, memory_mb, isolate,
                              cell_time_limit, check_time_limit)
    try:
        grading.start()
        for cell in tests:
            result.add(grading.grade_check(cell))
    except RuntimeError as error:  # the grader cannot go on with this notebook
        done = {check.id for check in result.checks}
        for cell in tests:
            meta = nbgrader_meta(cell)
            if meta["grade_id"] not in done:
                result.add(CheckResult(meta["grade_id"], 0.0, float(meta.get("points", 0)),
                                       "error", f"not graded: {error}"))
    finally:
        grading.close()
        shutil.rmtree(scratch.root, ignore_errors=True)
    result.notes.extend(grading.cell_notes())
    if grading.tampering:
        result.notes.append("Your notebook changed " + ", ".join(sorted(grading.tampering))
                            + "; the grader undid it before checking your code.")
    return result
