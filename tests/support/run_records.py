"""Records of a claims test's runs, proven current by two runs made again every time.

A claims test of lessons 07 and 08 needs every run of a 20-seed study on two seed sets
(minutes of CPU) to check the intervals its lesson quotes. Its per-seed results are kept
in ``tests/lessons/records/<name>.json``, and :meth:`RunRecord.per_seed` uses them only
after making again, from the code as it is now, the runs of the set's first and last
seeds and finding the record's numbers there to the last bit. A run depends on its seed
alone (never on the runs trained beside it), so those two stand for the code that made
the whole record: a change to the training code, the lesson's answers or numpy's random
streams changes them.

When they differ (the code changed, or this machine's arithmetic is not the one that
made the record), the test makes every run itself, as it would with no record, and warns
that the record is stale: a verdict never rests on numbers the code does not give.

To write the records again, run the claims tests with the variable set, in one process:

    GRADER_RECORD_RUNS=1 .venv/bin/python -m pytest -n 0 \\
        tests/lessons/test_claims_lesson07.py tests/lessons/test_claims_lesson08.py
"""

import json
import os
import warnings
from pathlib import Path

import numpy as np

RECORDS = Path(__file__).resolve().parents[1] / "lessons" / "records"
RECORDING = "GRADER_RECORD_RUNS"  # "1": make every run and write it to the record


class StaleRecord(UserWarning):
    """A record whose spot-checked runs are not what the code gives here."""


class RunRecord:
    """``{key: {"seeds": [...], "values": {measure: [one per seed]}}}`` in one file."""

    def __init__(self, name, folder=RECORDS):
        self.path = Path(folder) / f"{name}.json"
        self.entries = json.loads(self.path.read_text()) if self.path.exists() else {}

    def per_seed(self, key, seeds, compute):
        """``{measure: array over seeds}``, as ``compute(seeds)`` gives it (a tuple of
        seeds in, a dict of arrays out, one value per seed and measure): from the record
        once the first and last seeds' runs, made again, match it; else computed."""
        seeds = tuple(seeds)
        if os.environ.get(RECORDING) == "1":
            if os.environ.get("PYTEST_XDIST_WORKER"):  # groups of one file on two workers
                raise RuntimeError(f"{RECORDING}=1 writes records from one process only: "
                                   "run pytest with -n 0")
            return self._record(key, seeds, compute(seeds))
        entry = self.entries.get(key)
        if entry is not None and entry["seeds"] == list(seeds):
            checked = (seeds[0], seeds[-1])
            made = compute(checked)
            stored = entry["values"]
            if set(made) == set(stored) and all(
                    np.asarray(made[measure]).tolist() == [stored[measure][0],
                                                           stored[measure][-1]]
                    for measure in made):
                return {measure: np.array(values) for measure, values in stored.items()}
            warnings.warn(StaleRecord(
                f"{self.path.name} [{key}]: seeds {checked} give {made}, the record "
                f"{ {m: [v[0], v[-1]] for m, v in stored.items()} }; every run is made "
                f"here instead (write the record again: see tests/support/run_records.py)"))
        else:
            warnings.warn(StaleRecord(f"{self.path.name} has no [{key}] for seeds {seeds}: "
                                      "every run is made here"))
        return compute(seeds)

    def _record(self, key, seeds, values):
        self.entries[key] = {"seeds": list(seeds),
                             "values": {measure: np.asarray(array).tolist()
                                        for measure, array in values.items()}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.entries, indent=1, sort_keys=True) + "\n")
        return values
