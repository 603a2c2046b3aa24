"""What a check, a cell or a request may spend: CPU time first, wall-clock time as a backstop.

A grade must not depend on how busy the machine is. So a budget counts **CPU time**: that
of every process and thread of the student's sandbox (:mod:`grader.judge.sandbox_resources`)
plus the grader's own work for the check (decoding replies, replaying transcripts,
serving calls: the grading thread's CPU time). On a machine loaded ten times over a
correct answer spends about the same CPU time as on an idle one; it only waits longer.

Two wall-clock backstops catch code that spends no CPU and never ends (a sleep, a
deadlock, a process that stopped itself):

- **idle**: less than ``IDLE_SHARE`` of one CPU used over ``IDLE_WINDOW`` seconds;
- **wall**: ``WALL_FACTOR`` times the CPU budget (at least ``MIN_WALL_SECONDS``), for code
  that trickles CPU just above the idle share.

Neither counts time spent *waiting for the CPU*: the kernel's run-queue delay of the
sandbox's tasks and of the grading thread (``/proc/<pid>/task/<tid>/schedstat``). A check
that makes a round trip per step is mostly such waiting on a loaded machine (at twelve busy
processes per core, each side of a round trip waits tens of milliseconds for its turn, and
the check gets about 1% of a CPU), which is neither sleeping nor trickling. Where the
kernel keeps no such account, the backstops count wall time alone.

Each way of running out has its own words (:meth:`BudgetSpent.words`), so feedback never
calls a sleep "an infinite loop".
"""

import os
import time
from dataclasses import dataclass

IDLE_WINDOW = 30.0  # wall seconds
IDLE_SHARE = 0.01  # of one CPU: under it, the code is waiting, not working
WALL_FACTOR = 20.0
MIN_WALL_SECONDS = 60.0
CHECK_INTERVAL = 0.02  # wall seconds between readings of the CPU clocks
WAIT_LOOK_INTERVAL = 1.0  # wall seconds between readings of the run-queue waits


def run_queue_wait(pid, tid=None):
    """Seconds the task ``tid`` of ``pid`` (every task of ``pid`` if None) has waited
    on a run queue for a CPU, or 0 where the kernel does not say."""
    tasks = [tid] if tid is not None else _tasks(pid)
    waited = 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as handle:
                waited += int(handle.read().split()[1])  # ns: run time, run delay, slices
        except (OSError, IndexError, ValueError):
            pass
    return waited / 1e9


def _tasks(pid):
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


@dataclass(frozen=True)
class Budget:
    cpu_seconds: float
    wall_seconds: float | None = None  # the wall backstop; by default from the CPU budget

    @property
    def wall_limit(self):
        if self.wall_seconds is not None:
            return self.wall_seconds
        return max(MIN_WALL_SECONDS, WALL_FACTOR * self.cpu_seconds)


class BudgetSpent(Exception):
    """A budget ran out; ``kind`` is "cpu", "idle" or "wall"."""

    def __init__(self, kind, budget, cpu_seconds, wall_seconds):
        super().__init__(kind)
        self.kind, self.budget = kind, budget
        self.cpu_seconds, self.wall_seconds = cpu_seconds, wall_seconds

    def words(self):
        """What happened, for feedback: a clause that follows "your code"."""
        if self.kind == "cpu":
            return (f"used its whole budget of {self.budget.cpu_seconds:g} s of CPU time (all "
                    "its processes and threads together) and was stopped: an infinite loop, "
                    "or far more work than the task needs?")
        if self.kind == "idle":
            return (f"waited {self.wall_seconds:.0f} s without using the CPU (sleeping, or "
                    "waiting for something that never comes) and was stopped")
        return (f"ran for {self.wall_seconds:.0f} s of wall-clock time while using only "
                f"{self.cpu_seconds:.1f} s of CPU (mostly waiting) and was stopped")


class BudgetMeter:
    """Measures one budget while it is spent. ``clock()`` gives CPU seconds used so far
    (the sandbox's and the grader's own, together); ``waits()`` the seconds they have
    waited on run queues so far (it lists tasks: read at the start, when the idle mark
    moves, and at most every ``WAIT_LOOK_INTERVAL`` otherwise)."""

    def __init__(self, budget, clock, waits=lambda: 0.0):
        self.budget, self.clock, self.waits = budget, clock, waits
        self.start_wall = self.last_look = time.monotonic()
        self.start_cpu = self.cpu = clock()
        self.idle_since, self.cpu_at_idle_mark = self.start_wall, self.start_cpu
        self.start_waits = self.waits_at_idle_mark = self.last_waits = waits()
        self.last_wait_look = self.start_wall
        self.stopped_at = None

    def _waited(self, now):
        """Run-queue seconds since the start, read at most every ``WAIT_LOOK_INTERVAL``."""
        if now - self.last_wait_look >= WAIT_LOOK_INTERVAL:
            self.last_wait_look, self.last_waits = now, self.waits()
        return self.last_waits

    def check(self, force=False):
        """Raise :class:`BudgetSpent` when the budget is spent. Looks at the clocks at most
        every ``CHECK_INTERVAL`` unless ``force``."""
        now = time.monotonic()
        if not force and now - self.last_look < CHECK_INTERVAL:
            return
        self.last_look, self.cpu = now, self.clock()
        cpu, wall = self.cpu - self.start_cpu, now - self.start_wall
        if cpu > self.budget.cpu_seconds:
            raise BudgetSpent("cpu", self.budget, cpu, wall)
        if self.cpu - self.cpu_at_idle_mark >= IDLE_SHARE * IDLE_WINDOW:
            self.idle_since, self.cpu_at_idle_mark = now, self.cpu
            self.waits_at_idle_mark = self.waits()  # once per IDLE_SHARE of CPU work at most
        elif now - self.idle_since >= IDLE_WINDOW:
            self._idle_or_waiting(now, cpu)
        if wall > self.budget.wall_limit:
            # wall time spent waiting for a CPU is the machine's load, not the code's
            working_wall = wall - (self._waited(now) - self.start_waits)
            if working_wall > self.budget.wall_limit:
                raise BudgetSpent("wall", self.budget, cpu, wall)

    def _idle_or_waiting(self, now, cpu):
        """The idle window ended with almost no CPU used: idle, unless the code was
        waiting on run queues for a CPU (then the window starts again)."""
        waits = self.waits()
        self.last_wait_look, self.last_waits = now, waits
        wanted = (self.cpu - self.cpu_at_idle_mark) + (waits - self.waits_at_idle_mark)
        if wanted < IDLE_SHARE * IDLE_WINDOW:
            raise BudgetSpent("idle", self.budget, cpu, now - self.idle_since)
        self.idle_since, self.cpu_at_idle_mark, self.waits_at_idle_mark = now, self.cpu, waits

    def wall_deadline(self):
        """The ``time.monotonic()`` past which the wall backstop ends the budget (later
        by the run-queue waits so far, read at most every ``WAIT_LOOK_INTERVAL``: every
        message sent asks)."""
        waited = self._waited(time.monotonic()) - self.start_waits
        return self.start_wall + self.budget.wall_limit + max(0.0, waited)

    def stop(self):
        if self.stopped_at is None:
            self.stopped_at = (time.monotonic(), self.clock())

    def used(self):
        """``(cpu seconds, wall seconds)`` spent, up to :meth:`stop` or now."""
        wall, cpu = self.stopped_at or (time.monotonic(), self.clock())
        return max(0.0, cpu - self.start_cpu), wall - self.start_wall
