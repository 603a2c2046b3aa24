"""How many times per second an operation runs: the median of several timed runs."""

import statistics
import time

MIN_SECONDS = 0.2  # each timed run lasts at least this long


def calls_per_second(operation, repeats):
    """Median over ``repeats`` runs, each of enough calls to take ``MIN_SECONDS``."""
    calls = 1
    while True:  # find a call count that takes long enough to time well
        started = time.perf_counter()
        for _ in range(calls):
            operation()
        elapsed = time.perf_counter() - started
        if elapsed >= MIN_SECONDS:
            break
        calls *= 2
    rates = [calls / elapsed]
    for _ in range(repeats - 1):
        started = time.perf_counter()
        for _ in range(calls):
            operation()
        rates.append(calls / (time.perf_counter() - started))
    return statistics.median(rates)
