"""The learning checks' baselines, kept on this machine between class runs.

A baseline depends only on the check's inputs (so on the salt), on the course version and
on the libraries that compute it (their random streams), so a class graded again with the
same salt, a batch of late hand-ins, or another run of the same term need not train it
again: 13 CPU-s for the whole course. The cache is the grader's own folder, never an
instructor's file and never in a sandbox's view:

    $GRADER_BASELINE_CACHE (default $XDG_CACHE_HOME or ~/.cache, then
    experience-replay-grader/baselines)/<course version>-<libraries>/<salt hash>.json

Only the salt's hash is written (:mod:`grader.salts`). A file that cannot be read whole as
a JSON object of baselines counts as empty (its baselines are trained again); a folder
that cannot be written is skipped in silence: the cache only saves time, a grade never
depends on it. ``GRADER_BASELINE_CACHE=off`` turns it off (benchmarks that time the
training do).
"""

import hashlib
import importlib.metadata
import json
import os
import sys
from pathlib import Path

from grader.outputs.report import write_atomically
from grader.salts import salt_hash

CACHE_VARIABLE = "GRADER_BASELINE_CACHE"
OFF = "off"


def cache_folder():
    """The folder baselines are kept in, or None when the cache is off."""
    chosen = os.environ.get(CACHE_VARIABLE, "")
    if chosen.strip().lower() == OFF:
        return None
    if chosen:
        return Path(chosen)
    try:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    except (RuntimeError, KeyError):  # no home directory to be found: no cache
        return None
    return Path(base) / "experience-replay-grader" / "baselines"


LIBRARIES = ("numpy", "scipy", "gymnasium")  # what the checks train with


def libraries_key():
    """A short hash of what else decides a baseline's numbers: Python's version and those
    of the libraries the checks train with (read from their metadata: nothing imported)."""
    versions = "|".join([sys.version, *(_version(name) for name in LIBRARIES)])
    return hashlib.sha256(versions.encode()).hexdigest()[:16]


def _version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "none"


class BaselineCache:
    """Baselines kept per course version, libraries and salt, in ``folder``."""

    def __init__(self, folder):
        self.folder = Path(folder)

    def _path(self, salt, version):
        return self.folder / f"{version}-{libraries_key()}" / f"{salt_hash(salt)}.json"

    def baselines(self, salt, version):
        """``{"lesson/check": answers}`` kept for this salt and version; {} if none are,
        or if the file is not whole baselines: a JSON object of names, each with the
        object of answers its training recorded."""
        try:
            kept = json.loads(self._path(salt, version).read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(kept, dict) or not all(
                isinstance(name, str) and isinstance(answers, dict)
                for name, answers in kept.items()):
            return {}
        return kept

    def save(self, salt, version, name, answers):
        """Keep one trained baseline (beside those already kept); False if it could not be
        written."""
        path = self._path(salt, version)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, json.dumps({**self.baselines(salt, version),
                                               name: answers}) + "\n")
        except (OSError, TypeError, ValueError):
            return False
        return True


def baseline_cache():
    """This machine's :class:`BaselineCache`, or None when it is turned off."""
    folder = cache_folder()
    return None if folder is None else BaselineCache(folder)
