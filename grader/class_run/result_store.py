"""Results on disk the moment each notebook is graded (``--out DIR``), so a run survives.

::

    DIR/manifest.jsonl            one line per notebook graded, appended as it is graded
    DIR/results/<key>.json        what grading that notebook gave (a NotebookResult's data:
                                  its entry in the report, grader.results)
    DIR/baselines/<course version>/<salt hash>.json   the learning checks' baselines

A notebook's key is a hash of its student, its lesson, the hash of the notebook's bytes,
the salt's hash, the course version and the grading settings (isolation, limits,
``--only``): a result is reused only where all of them match, so an unchanged
re-submission is never graded twice and anything that could change a grade grades again.
Each manifest line also names the graded notebook's absolute path, outside the key (a
class folder moved elsewhere still resumes), so that ``python -m grader similarity DIR``
can read the answers that were graded (:func:`latest_graded`).
The salt itself is never written here, only a hash of it (:mod:`grader.salts`); a run
resumed with another salt is refused before it grades anything, since none of the stored
results would be reused.

A result file is written whole (through a temporary file) before its manifest line is
appended and flushed to disk, so a grader killed at any moment leaves a manifest whose
every complete line names a complete result; a torn last line is ignored. A notebook
whose grading broke down (its workers died) is stored too, so the reports show it, but
it does not count as graded: ``--resume`` tries it again.
"""

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from grader.outputs.report import write_atomically
from grader.results import NotebookResult
from grader.safe_text import printable
from grader.salts import salt_hash

MANIFEST = "manifest.jsonl"


class StoreError(Exception):
    """The folder cannot hold this run's results; the message says why, in one line."""


def manifest_entries(folder):
    """Every complete line of ``folder``'s manifest, in order, as data (a line torn by a
    kill is left out); read without the store's lock, so a resume can be refused early."""
    try:
        with open(Path(folder) / MANIFEST) as handle:
            lines = handle.readlines()
    except (FileNotFoundError, NotADirectoryError):
        return []
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("key"), str):
            entries.append(entry)
    return entries


def read_manifest(folder):
    """``{key: entry}`` of every complete line of ``folder``'s manifest (the last line for
    a key wins)."""
    return {entry["key"]: entry for entry in manifest_entries(folder)}


@dataclass(frozen=True)
class GradedNotebook:
    """A notebook a manifest line names: whose, which lesson, where it was, what it held."""

    student: str
    lesson: str
    path: str | None  # absolute; None in a manifest written before paths were recorded
    notebook_sha256: str


def latest_graded(folder):
    """The notebook graded last for each (student, lesson) in ``folder``'s manifest, in
    the order of those last lines: a resubmission graded later replaces the earlier one."""
    latest = {}
    for entry in manifest_entries(folder):
        latest.pop((entry.get("student"), entry.get("lesson")), None)  # keep line order
        latest[entry.get("student"), entry.get("lesson")] = entry
    return [GradedNotebook(entry["student"], entry["lesson"], entry.get("path"),
                           entry.get("notebook_sha256", ""))
            for entry in latest.values()
            if isinstance(entry.get("student"), str) and isinstance(entry.get("lesson"), str)]


def salt_hashes_in(folder):
    """The hashes of the salts the results stored in ``folder`` were graded with."""
    return {entry.get("salt_sha256") for entry in read_manifest(folder).values()} - {None}


class ResultStore:
    """The results of one class in a folder; one grader at a time uses it (a lock)."""

    def __init__(self, folder):
        self.folder = Path(folder)
        try:
            (self.folder / "results").mkdir(parents=True, exist_ok=True)
            self._lock = open(self.folder / ".lock", "w")
        except OSError as error:
            raise StoreError(f"{printable(self.folder)}: cannot write there "
                             f"({printable(error.strerror or error)})") from None
        try:  # a POSIX lock: forked worker processes do not inherit it, as they would flock's
            fcntl.lockf(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise StoreError(f"{printable(self.folder)} is in use by another grader "
                             "(wait for it to finish, or choose another folder)") from None
        self.entries = self._read_manifest()

    def close(self):
        self._lock.close()

    # --- the manifest ------------------------------------------------------------------
    def _read_manifest(self):
        return read_manifest(self.folder)

    def manifest_lines(self):
        """Every complete line of the manifest, in order (one per notebook graded)."""
        try:
            lines = (self.folder / MANIFEST).read_text().splitlines()
        except FileNotFoundError:
            return []
        complete = []
        for line in lines:
            try:
                complete.append(json.loads(line))
            except ValueError:
                continue
        return complete

    @staticmethod
    def entry_for(job, content_hash, salt, version, settings):
        """The manifest entry ``job`` would have; its ``key`` names its result. The
        notebook's path is recorded beside the key, not in it: where a class folder lies
        changes no grade."""
        entry = {"student": job.student, "lesson": job.lesson, "notebook_sha256": content_hash,
                 "salt_sha256": salt_hash(salt), "course_version": version,
                 "settings": settings}
        text = json.dumps(entry, sort_keys=True)
        return {"key": hashlib.sha256(text.encode()).hexdigest()[:32], **entry,
                "path": os.path.abspath(job.path)}

    def graded(self, key):
        """True when a result for ``key`` is stored and its grading did not break down."""
        entry = self.entries.get(key)
        return bool(entry and entry.get("graded") and (self.folder / entry["file"]).exists())

    def has(self, key):
        entry = self.entries.get(key)
        return bool(entry and (self.folder / entry["file"]).exists())

    def load(self, key):
        entry = self.entries[key]
        return NotebookResult.from_data(json.loads((self.folder / entry["file"]).read_text()))

    def save(self, entry, result, graded=True, seconds=None):
        """Write ``result`` for ``entry`` and append its manifest line, flushed to disk."""
        entry = {**entry, "graded": graded, "file": f"results/{entry['key']}.json",
                 "seconds": None if seconds is None else round(seconds, 3)}
        write_atomically(self.folder / entry["file"], json.dumps(result.to_data()) + "\n")
        line = json.dumps(entry, sort_keys=True) + "\n"
        with open(self.folder / MANIFEST, "a+b") as handle:
            end = handle.seek(0, os.SEEK_END)
            if end and os.pread(handle.fileno(), 1, end - 1) != b"\n":
                line = "\n" + line  # a kill tore the last line: this one must not join it
            handle.write(line.encode())
            handle.flush()
            os.fsync(handle.fileno())
        self.entries[entry["key"]] = entry

    # --- baselines ---------------------------------------------------------------------
    def _baselines_path(self, salt, version):
        return self.folder / "baselines" / version / f"{salt_hash(salt)}.json"

    def baselines(self, salt, version):
        """``{"lesson/check": answers}`` trained for this salt and course version."""
        try:
            return json.loads(self._baselines_path(salt, version).read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def save_baseline(self, salt, version, name, answers):
        path = self._baselines_path(salt, version)
        path.parent.mkdir(parents=True, exist_ok=True)
        known = self.baselines(salt, version)
        known[name] = answers
        write_atomically(path, json.dumps(known) + "\n")
