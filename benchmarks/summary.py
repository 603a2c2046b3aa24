"""What every grading benchmark prints around its figures: the machine's load, and the
summary lines at the end (timings on a shared machine mean little without the load)."""

import os
import time


def load_average():
    return ", ".join(f"{load:.2f}" for load in os.getloadavg())


def print_summary(lines, started):
    """The summary ``lines``, the load at the end and the time since ``started``
    (a ``time.perf_counter()`` reading)."""
    print("\n== Summary ==")
    for line in lines:
        print(f"- {line}")
    print(f"load average at end: {load_average()}; benchmark took "
          f"{time.perf_counter() - started:.0f} s")
