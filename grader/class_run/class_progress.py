"""What an instructor sees while a class is graded: two bars and a line per crash.

- ``baselines``: learning checks' baselines trained so far (they come first, in parallel
  with the notebooks that need none), so a slow start is visibly busy;
- ``grading``: notebooks done, counting each notebook's checks as they finish (workers
  report them); the bar shows elapsed time, the time left, how many notebooks came from
  an earlier run and how many could not be graded, counted as they happen. Until the
  first check finishes, the time left is estimated from typical grading times per lesson
  (marked ``~``); from then on, from the rate measured in this run.

A notebook that could not be graded gets a line of its own above the bars.
"""

import sys
import threading
import time

from tqdm import tqdm

from grader.safe_text import printable

# tqdm puts ", " before the postfix: "[01:33 elapsed, 01:57 left, 3/10 notebooks]"
FORMAT = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed} elapsed{postfix}]"

# Seconds one worker takes to grade a complete notebook of each lesson, learning checks
# and the sandbox's start included (`python -m grader check --learning` on
# examples/submissions/ada_complete, idle machine, 2026-11-23; lesson 08 on 2026-11-30,
# 3.8 s where lesson 06 took 3.0 s): the estimate shown before this run has measured
# anything of its own.
TYPICAL_SECONDS = {"01_qlearning": 15, "02_replay_buffer": 12, "03_prioritized_replay": 7,
                   "04_hindsight_replay": 13, "05_combined_replay": 14, "06_capstone": 5,
                   "07_neural_replay": 19, "08_nstep_replay": 6}
UNKNOWN_LESSON_SECONDS = 15


class ClassProgress:
    def __init__(self, notebooks, reused, baselines, quiet=False, stream=sys.stderr,
                 lessons_to_grade=(), workers=1):
        self.total, self.reused, self.finished, self.failed = notebooks, reused, 0, 0
        self.stream, self.quiet = stream, quiet
        self.workers = max(workers, 1)
        self.typical_seconds = sum(TYPICAL_SECONDS.get(lesson, UNKNOWN_LESSON_SECONDS)
                                   for lesson in lessons_to_grade)
        self.clock = time.monotonic
        self.started = self.clock()
        self._partial = {}  # key of a notebook being graded -> fraction of its checks done
        self._lock = threading.Lock()  # progress events arrive on Dask's thread
        self.baseline_bar = None
        if baselines:
            self.baseline_bar = tqdm(total=baselines, desc="baselines", unit="baseline",
                                     file=stream, disable=quiet, position=1, leave=False,
                                     bar_format="{desc}: {n}/{total} trained [{elapsed}]")
        self.bar = tqdm(total=notebooks, initial=reused, desc="grading", unit="notebook",
                        file=stream, disable=quiet, position=0, bar_format=FORMAT)
        self._show()

    def check_done(self, key, done, total):
        """A worker finished check ``done`` of ``total`` of the notebook ``key``."""
        with self._lock:
            self._partial[key] = done / max(total, 1)

    def baseline_trained(self):
        if self.baseline_bar is not None:
            self.baseline_bar.update()

    def notebook_done(self, key, label, problem=None):
        """Notebook ``key`` is finished; ``problem`` says why it could not be graded."""
        with self._lock:
            self._partial.pop(key, None)
        self.finished += 1
        if problem is not None:
            self.failed += 1
            line = f"grader: {printable(label)}: not graded: {problem}"
            if self.quiet:
                print(line, file=self.stream)
            else:
                self.bar.write(line, file=self.stream)
        self._show()

    def tick(self):
        """Redraw, so elapsed time moves while a long notebook is graded."""
        self._show()

    def set_workers(self, workers):
        """The cluster's size, once it is known (it divides the first estimate)."""
        self.workers = max(workers, 1)

    def time_left(self, done):
        """``done`` notebooks' worth graded in this run: the time left, as text."""
        to_grade = self.total - self.reused
        if done >= to_grade:
            return "00:00"
        if done <= 0:
            if not self.typical_seconds:
                return "?"
            return "~" + tqdm.format_interval(self.typical_seconds / self.workers)
        elapsed = self.clock() - self.started
        return tqdm.format_interval(elapsed / done * (to_grade - done))

    def _show(self):
        with self._lock:
            partial = sum(self._partial.values())
        self.bar.n = self.reused + self.finished + partial
        failed = f", {self.failed} not graded" if self.failed else ""
        reused = f", {self.reused} from an earlier run" if self.reused else ""
        self.bar.set_postfix_str(f"{self.time_left(self.finished + partial)} left, "
                                 f"{self.reused + self.finished}/{self.total} notebooks"
                                 f"{reused}{failed}", refresh=False)
        self.bar.refresh()

    def close(self):
        if self.baseline_bar is not None:
            self.baseline_bar.close()
        self.bar.close()
