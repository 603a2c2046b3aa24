"""What a verdict compares with: the judge's references, or the answers they published.

Where a verdict needs what a reference implementation says (the Q-values the update
rule gives, the bin a point falls in, how well a baseline learns), it asks
:func:`expected` for it, by lesson and name, as a function of the check's inputs only.

- In the full course and in the grader, the judge's references compute it: the modules
  ``grader/judge/references/lessonNN.py``, which never enter a student's sandbox and are
  never published in the student edition (they answer graded questions).
- In the student edition they are absent. There a visible test reads the answers the
  references gave for the public salt's inputs, published with the edition in
  ``checks/published_references.json`` (as CS188's ``.solution`` files hold the expected
  output of each test case). Hidden salts cannot be answered there, and need not be.
"""

import contextlib
import hashlib
import importlib
import json
from pathlib import Path

import numpy as np

from checks.framework import ProbeError

REFERENCE_PACKAGE = "grader.judge.references"
PUBLISHED = Path(__file__).with_name("published_references.json")
_cache = {}  # key -> value: baselines are trained once per process
_recording = None  # while publishing: key -> value of every answer given


class NoReference(ProbeError):
    """Neither the references nor the published answers know these inputs."""


def plain(value):
    """``value`` as JSON data: numpy arrays and scalars as lists and numbers, tuples as
    lists (what the published answers hold, and what a verdict receives)."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return plain(value.tolist())
    return value


def key_of(lesson, name, args):
    text = json.dumps([lesson, name, plain(args)], sort_keys=True, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _references(lesson):
    """The judge's reference module of ``lesson``, or None where it is not shipped."""
    module = f"{REFERENCE_PACKAGE}.lesson{lesson[:2]}"
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name and module.startswith(error.name):
            return None
        raise


def _published():
    try:
        return json.loads(PUBLISHED.read_text())
    except FileNotFoundError:
        return {}


def expected(lesson, name, *args):
    """The reference's answer ``name(*args)`` for ``lesson``, as plain data."""
    key = key_of(lesson, name, args)
    if key not in _cache:
        references = _references(lesson)
        if references is not None:
            _cache[key] = plain(getattr(references, name)(*args))
        else:
            published = _published()
            if key not in published:
                raise NoReference(
                    "this test compares your results with the reference's answers for its "
                    "own inputs, and yours led it to inputs it has no answer for: the "
                    "results before this point already differ from the reference's.")
            _cache[key] = published[key]
    if _recording is not None:
        _recording[key] = _cache[key]
    return _cache[key]


def reference_code(lesson, name):
    """The judge's reference ``name`` of ``lesson`` as code to run, not an answer to
    compare with: the course's own training loop that a learning check drives a
    student's buffer with. None where the references are not shipped (the student
    edition, whose notebooks stand their own code in for it)."""
    references = _references(lesson)
    return None if references is None else getattr(references, name)


def remember(answers):
    """Take answers computed elsewhere (``{key: value}``, as :func:`recording` collects
    them): a grading worker is handed the baselines another one trained."""
    _cache.update(answers)


@contextlib.contextmanager
def recording():
    """Collect every answer :func:`expected` gives inside: ``{key: value}``."""
    global _recording
    previous, _recording = _recording, {}
    try:
        yield _recording
    finally:
        _recording = previous
