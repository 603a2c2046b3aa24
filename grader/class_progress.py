"""What an instructor sees while a class is graded: two bars and a line per crash.

- ``baselines``: learning checks' baselines trained so far (they come first, in parallel
  with the notebooks that need none), so a slow start is visibly busy;
- ``grading``: notebooks done, counting each notebook's checks as they finish (workers
  report them), so the estimate of the time left appears within the first checks; the
  bar shows elapsed time and that estimate, how many notebooks came from an earlier run
  and how many could not be graded, counted as they happen.

A notebook that could not be graded gets a line of its own above the bars.
"""

import sys
import threading

from tqdm import tqdm

from grader.safe_text import printable

FORMAT = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]"


class ClassProgress:
    def __init__(self, notebooks, reused, baselines, quiet=False, stream=sys.stderr):
        self.total, self.reused, self.finished, self.failed = notebooks, reused, 0, 0
        self.stream, self.quiet = stream, quiet
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

    def _show(self):
        with self._lock:
            partial = sum(self._partial.values())
        self.bar.n = self.reused + self.finished + partial
        failed = f", {self.failed} not graded" if self.failed else ""
        reused = f", {self.reused} from an earlier run" if self.reused else ""
        self.bar.set_postfix_str(f"{self.reused + self.finished}/{self.total} notebooks"
                                 f"{reused}{failed}", refresh=False)
        self.bar.refresh()

    def close(self):
        if self.baseline_bar is not None:
            self.baseline_bar.close()
        self.bar.close()
