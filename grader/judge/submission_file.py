"""Read a submitted notebook as untrusted data: what the grader takes from it, and why not.

The grader takes only three things from a submission: the source of each answer cell and
of each written answer (by nbgrader ``grade_id``), and the lesson named in its metadata.
They are read from the raw JSON, cell by cell, so that a cell with odd metadata (``null``,
a list, a number where text belongs) costs that cell and nothing else. The file is
opened as a regular file and never through a link, so a submission that points at
``solutions/`` or at a named pipe is refused, with its reason, instead of graded or
waited on.
"""

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field

import nbformat

MAX_NOTEBOOK_BYTES = 64 * 2**20


class UnreadableSubmission(Exception):
    """The file cannot be graded as a notebook; the message says why, in one line."""


@dataclass
class Submission:
    code: dict = field(default_factory=dict)  # grade_id -> source of an answer cell
    written: dict = field(default_factory=dict)  # grade_id -> text of a written answer
    lesson: str | None = None  # the notebook's metadata.course.lesson, if it names one
    problems: list = field(default_factory=list)  # cells that could not be read, and why

    @classmethod
    def from_notebook(cls, notebook):
        """The submission a notebook (a dict or an ``nbformat`` node) amounts to."""
        submission = cls()
        metadata = notebook.get("metadata") if isinstance(notebook, dict) else None
        course = metadata.get("course") if isinstance(metadata, dict) else None
        lesson = course.get("lesson") if isinstance(course, dict) else None
        submission.lesson = lesson if isinstance(lesson, str) else None
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        if not isinstance(cells, list):
            submission.problems.append("the notebook has no list of cells")
            return submission
        for number, cell in enumerate(cells, 1):
            submission._take(number, cell)
        return submission

    def answers_changed(self, stubs):
        """How many answer cells differ from their released ``stubs`` (``{grade_id:
        source}``): how much of the student's work this notebook holds."""
        sent = {**self.written, **self.code}
        return sum(grade_id in sent and sent[grade_id].strip() != stub.strip()
                   for grade_id, stub in stubs.items())

    def lines_written(self, stubs):
        """How many lines of code of the student's own the answer cells hold: their lines
        (stripped, not blank) that their released ``stubs`` do not. Between two notebooks
        whose answer cells all changed, the one holding more of the student's code."""
        sent = {**self.written, **self.code}
        total = 0
        for grade_id, stub in stubs.items():
            given = {line.strip() for line in stub.splitlines()}
            total += sum(1 for line in sent.get(grade_id, "").splitlines()
                         if line.strip() and line.strip() not in given)
        return total

    def _take(self, number, cell):
        if not isinstance(cell, dict):
            self.problems.append(f"cell {number} is not a cell")
            return
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
        if not isinstance(grade_id, str) or not grade_id:
            return  # not an answer cell: the grader does not use it
        kind = {"code": self.code, "markdown": self.written}.get(cell.get("cell_type"))
        if kind is None or grade_id in kind:
            return  # the first cell with an id wins
        source = cell.get("source")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            self.problems.append(f"cell '{grade_id}' has a source that is not text, so it "
                                 "counts as unanswered")
            return
        kind[grade_id] = source


def read_notebook_bytes(path):
    """The bytes of the notebook file at ``path``, opened as a regular file and never
    through a link; raises :class:`UnreadableSubmission` with a one-line reason."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if os.path.islink(path):
            raise UnreadableSubmission("it is a symbolic link; submit the notebook file "
                                       "itself") from None
        raise UnreadableSubmission(f"it cannot be opened ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableSubmission("it is not a regular file")
        if info.st_size > MAX_NOTEBOOK_BYTES:
            raise UnreadableSubmission(f"it is {info.st_size / 2**20:.0f} MB, over the limit "
                                       f"of {MAX_NOTEBOOK_BYTES // 2**20} MB")
        return handle.read(MAX_NOTEBOOK_BYTES + 1)


def parse_submission(data):
    """The :class:`Submission` in a notebook file's bytes; raises
    :class:`UnreadableSubmission` with a one-line reason."""
    if not data.strip():
        raise UnreadableSubmission("the file is empty")
    try:
        notebook = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise UnreadableSubmission(f"it is not JSON ({str(error)[:120]})") from None
    if isinstance(notebook, dict) and "worksheets" in notebook and "cells" not in notebook:
        try:  # an nbformat 3 notebook: nbformat knows the conversion
            notebook = nbformat.reads(data.decode("utf-8", "replace"), as_version=4)
        except Exception as error:  # nbformat's many ways to fail on a broken file
            raise UnreadableSubmission(f"it is an old notebook that cannot be converted "
                                       f"({type(error).__name__})") from None
    if not isinstance(notebook, dict):
        raise UnreadableSubmission("it is not a notebook (its JSON is not an object)")
    if not isinstance(notebook.get("cells"), list):  # nothing in it could be graded
        raise UnreadableSubmission("its JSON has no list of cells, so it is not a notebook")
    return Submission.from_notebook(notebook)


def read_submission(path):
    """The :class:`Submission` in the file at ``path``; raises
    :class:`UnreadableSubmission` with a one-line reason."""
    return parse_submission(read_notebook_bytes(path))


def read_once(path):
    """``(content hash, what the file holds)``, reading the file once: what it holds is a
    :class:`Submission` or the :class:`UnreadableSubmission` that says why not. The hash
    is of the very bytes that will be graded (a file changed later is not mixed in)."""
    try:
        data = read_notebook_bytes(path)
    except UnreadableSubmission as error:
        return f"unreadable: {error}", error
    digest = hashlib.sha256(data).hexdigest()
    try:
        return digest, parse_submission(data)
    except UnreadableSubmission as error:
        return digest, error


def notebook_hash(path):
    """The hash :func:`read_once` would give, without parsing the notebook."""
    try:
        return hashlib.sha256(read_notebook_bytes(path)).hexdigest()
    except UnreadableSubmission as error:
        return f"unreadable: {error}"
