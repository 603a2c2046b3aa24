"""What a check is, and how a notebook's visible test runs one.

A check has three parts:

- ``make_inputs(rng)``: the inputs (capacities, seeds, transitions...) drawn from a
  generator seeded by a salt. Visible tests use a public salt; the grader a secret one.
- ``probe(inputs, **student_objects)``: runs where the student's code lives (their
  kernel), drives their objects with the inputs and returns plain data only: numbers,
  strings, lists, dicts and numpy arrays. It never decides pass or fail.
- ``verdict(inputs, data)``: a pure function of the inputs and the probe's data that
  returns a :class:`Verdict`. The grader calls it in its own process, so nothing the
  student's code does to its kernel (patched numpy, swallowed exceptions) reaches it.

A visible test cell runs all three in the notebook. The grader runs the probe and the
verdict in its own process, with the student's objects in another: the probe then holds
proxies (:class:`StudentObjectBase`) whose calls cross to the student's process and
whose answers come back as plain data, and the objects it hands to student code are
lent (:mod:`checks.lending`). One definition, two uses, one verdict: a test cell lends
the student's code the same objects, seeds the same global generators, and reports the
same status and points (:meth:`LessonChecks.outcome`).

A failure that comes from other code says so: an error raised by notebook code other
than the code called names it and its lesson (:func:`failure_of`), and a check that
declares the student's code its code calls (:class:`Callee`) names those whose own
checks fail too (:func:`callee_note`).
"""

import base64
import binascii
import contextlib
import dataclasses
import hashlib
import json
import os
import random
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from checks.contracts import (INPUTS_UNTOUCHED, LENT_AS_STATED, NUMPY_SCALARS, RESULT_TYPES,
                              lending_refused, numpy_forms, numpy_keyword_forms,
                              rows_problem)
from checks.lending import (forget_mirrored, from_student_code, kept_here, lent_in_notebook,
                            take_refusal, to_student_code)
from checks.requirements import TAG, Rule, tagged
from checks.status import Status
from course.add_to_class import lost_methods
from course.unchanged_arguments import (EARLIER_RESULT, EarlierResults, aliased, changed, same,
                                       snapshot)
from course.your_work import library_that_raised, where_raised, written_in_a_notebook

VISIBLE_SALT = "visible"
# Used when no salt is given. Not secret: instructors pass --salt or set GRADER_SALT.
DEFAULT_HIDDEN_SALT = "default-salt-not-secret"


@dataclass(frozen=True)
class Verdict:
    """The share of a check's points earned (0 to 1) and feedback a student can act on.

    ``figure``, for learning checks, is what a feedback page plots: the run judged next
    to the baseline it was compared with (see :func:`comparison`)."""

    fraction: float
    feedback: str
    figure: dict | None = None
    rule: Rule | None = None  # the requirement a failure found broken (checks.requirements)

    @property
    def passed(self):
        return self.fraction >= 1.0


def passed(feedback="passed", figure=None):
    return Verdict(1.0, feedback, figure)


def failed(feedback, fraction=0.0, figure=None, *, rule):
    """A verdict short of full marks; ``rule`` is the :class:`~checks.requirements.Rule` the
    student's code broke, named at the end of the feedback (``[rule: name]``)."""
    return Verdict(float(fraction), tagged(feedback, rule), figure, rule)


def comparison(title, ylabel, groups, series, higher_is_better=True):
    """A figure as plain data: bars of each series (``{name: [value per group]}``) over
    ``groups`` (seeds, checkpoints...). Feedback pages draw it."""
    return {"title": title, "ylabel": ylabel, "groups": [str(g) for g in groups],
            "series": {name: [None if v is None else float(v) for v in values]
                       for name, values in series.items()},
            "higher_is_better": bool(higher_is_better)}


class ProbeError(Exception):
    """The student's code raised while a probe drove it; carries what to tell them.

    ``origin``, when known, is ``(function, lesson)`` of the notebook code that raised,
    when that is not the code the probe called (see :func:`failure_of`)."""

    origin = None


class NotWrittenYet(ProbeError):
    """The student's code still raises ``NotImplementedError``: work not done, not a bug."""


class ContractBroken(Exception):
    """A call of the student's code broke what every call of the lesson promises
    (:mod:`checks.contracts`): a failure of the check, naming ``rule``. Not a
    :class:`ProbeError`, so that no probe that takes an error of the student's code for
    an answer (a refusal, a raise it expects) can take it for one: it ends the probe."""

    origin = None

    def __init__(self, message, rule):
        super().__init__(message)
        self.rule = rule


class StudentObjectBase:
    """Base of the grader's proxies for objects that live in a student's process.

    In a notebook no object is one; the helpers below then act on plain objects."""

    __slots__ = ()


def student_process_of(value):
    """The student process that holds ``value``, or None for an object right here."""
    if isinstance(value, StudentObjectBase):
        return object.__getattribute__(value, "_student_process_")
    return None


def reseed_global_generators(seed, near):
    """Seed ``random`` and ``np.random`` where the student's code ``near`` runs."""
    process = student_process_of(near)
    if process is not None:
        process.seed(seed)
        return
    import random

    random.seed(seed)
    np.random.seed(seed % 2**32)


def kept_with(value, near):
    """``value`` placed where ``near`` lives, so the student's code and the probe share
    it: a probe that changes it afterwards changes what the student's code holds."""
    process = student_process_of(near)
    return kept_here(value) if process is None else process.keep(value)


def lent_where(value, near):
    """The check's object ``value`` as the student's code ``near`` is lent it, for the
    probe to read where that code leaves its work: in the grader, the object in the
    student's process (its mirror's copy there); in a notebook, the view that code gets
    (:mod:`checks.lending`); the object itself when that code is given it as it is (code
    not written in a notebook, such as a reference module's)."""
    process = student_process_of(near)
    if process is not None:
        return process.keep(value)
    return lent_in_notebook(value) if _lends(near) else value


def public_where(function, near):
    """The course's public ``function`` (a ``course.`` module's), to be called where the
    student's code ``near`` runs, as that code is: in the grader, in the student's process
    (a proxy: the check's objects it is given cross as they cross to student code, and its
    calls on mirrored ones come back as a transcript, replayed on the originals); in a
    notebook, here, given the views the student's code gets, and refused as the grader
    refuses (:mod:`checks.lending`). A check runs the course's own loop this way when
    the loop would otherwise make a round trip for every step."""
    process = student_process_of(near)
    if process is not None:
        return process.public(function)
    if not _lends(near):
        return function

    def on_lent_views(*args, **kwargs):
        try:
            result = function(*to_student_code(args), **to_student_code(kwargs))
        except Exception:
            _raise_refusal(True)
            raise
        _raise_refusal(True)
        return result
    on_lent_views.__name__ = on_lent_views.__qualname__ = function.__name__
    on_lent_views.__module__ = function.__module__
    return on_lent_views


def lend_to(owner, name, value):
    """Give the student's object ``owner`` the check's ``value`` as its attribute ``name``
    (a buffer's generator), lent as the grader lends it: in the grader ``value`` crosses
    to the student's process; in a notebook ``owner`` gets its view."""
    setattr(owner, name, value if student_process_of(owner) is not None
            else to_student_code(value))


def parts_of(sequence):
    """The items of a sequence the student's code returned, each left where it lives
    (proxies when it lives in the student's process), so a probe can change them."""
    process = student_process_of(sequence)
    if process is None:
        return list(sequence)
    return [process.apply("getitem", sequence, index, by_ref=True)
            for index in range(len(sequence))]


def fill_in_place(array, value):
    """``array[...] = value`` where the array (or list) lives (raises if it cannot be
    written)."""
    process = student_process_of(array)
    if process is None and isinstance(array, list) and array and all(
            isinstance(item, np.ndarray) for item in array):
        for item in array:  # a list of frames: the caller reuses the arrays themselves
            item[...] = value
    elif process is None and isinstance(array, list):
        array[:] = [value] * len(array)
    elif process is None:
        array[...] = value
    else:
        process.apply("fill", array, value)


def result_by_reference(function, *args, **kwargs):
    """``function(*args, **kwargs)``, its result left where the function ran, so that a
    probe can change it in place (a proxy when the function is the student's)."""
    process = student_process_of(function)
    if process is None:
        if written_in_a_notebook(function):
            args, kwargs = to_student_code(args), to_student_code(kwargs)
        return function(*args, **kwargs)
    owner = object.__getattribute__(function, "_owner") if hasattr(
        type(function), "_owner") else function
    method = object.__getattribute__(function, "_name") if owner is not function else None
    return process.call(owner, args, kwargs, method=method, by_ref=True)


@dataclass(frozen=True)
class Callee:
    """Code of the student's that the code a check runs calls, and the checks that judge
    it on its own. When the check fails and one of those fails too, its feedback names
    it (:func:`callee_note`): the failure may come from there.

    ``name`` is how feedback names it (a function, a class); its first part is the name a
    notebook defines it by. ``graded=False`` when the grader runs other code in its place
    (the course's reference agent, say), so that only a notebook names it."""

    name: str
    lesson: str  # whose notebook it is written in: "07_neural_replay", "01_qlearning"
    checks: tuple  # the checks of that lesson that judge it
    graded: bool = True

    @property
    def defined_as(self):
        return self.name.split(".")[0]


@dataclass(frozen=True)
class Check:
    """One graded behaviour; ``name`` is the grade_id of the test cell that runs it.

    ``asks`` is what it asks of the student's code, in one sentence: a release writes it
    as the comment of the check's test cell, and feedback pages and ``grader spec`` show
    it. ``rules`` are the requirements (:class:`~checks.requirements.Rule`) it tests; each
    failed verdict names one of them."""

    name: str
    title: str
    needs: tuple  # names the probe takes from the student's notebook
    make_inputs: Callable[[np.random.Generator], dict]
    probe: Callable[..., Any]
    verdict: Callable[[dict, Any], Verdict]
    asks: str = ""
    rules: tuple = ()
    # CPU seconds the probe may spend (grader.judge.budgets; ~100x its need)
    time_limit: float = 15.0
    learning: bool = False  # trains agents: seconds, not milliseconds (tests run it less)
    # Optional: precompute what the verdict needs for these inputs (a baseline agent's
    # results), so parallel graders inherit it instead of each training it again.
    prepare: Callable[[dict], Any] | None = None
    # Names the probe takes from a notebook only, standing in for course code that the
    # student edition does not ship (the course's own training loop, which is an
    # answer). The grader never asks for them: it has the course's code.
    stand_ins: tuple = ()
    # The student's code that the code under test calls (Callee): named in the feedback
    # when its own checks fail too. In a notebook only what the student wrote is named
    # (an earlier lesson's module made from their notebook, not the course's reference).
    calls: tuple = ()
    # {name: checks.contracts.Contract} of the lesson's callables, held on every call the
    # probe makes (LessonChecks gives every check its lesson's table)
    contracts: Any = None
    # for a check that tests a sampler against its exact distribution: which, where, how
    # (``grader spec`` lists it beside the rules)
    distribution: str = ""

    def graded_callees(self, lesson):
        """The callees the grader runs the student's own code of: this lesson's, not
        stood in for by the course's code."""
        return [callee for callee in self.calls if callee.graded and callee.lesson == lesson
                and callee.defined_as not in self.stand_ins]


@dataclass(frozen=True)
class Outcome:
    """What a check said: its :class:`~checks.status.Status`, the share of its points earned, and the feedback after the
    check's title. ``origin`` names the code that raised, when a probe's call failed in
    code it calls (see :class:`ProbeError`); ``figure`` and ``rule`` are the verdict's."""

    status: Status
    fraction: float
    title: str
    detail: str
    origin: tuple | None = None
    figure: dict | None = None
    rule: Rule | None = None

    @property
    def passed(self):
        return self.status == Status.PASSED

    @property
    def feedback(self):
        return f"{self.title}: {self.detail}"


def probe_and_judge(check, inputs, objects, title, metered=contextlib.nullcontext,
                    after_probe=None, strict=True):
    """The one way a check is run, in a notebook, a benchmark and the grader: the probe
    drives ``objects`` (the student's, or the grader's proxies for them) with ``inputs``,
    then the verdict judges the plain data it returned. Returns an :class:`Outcome`.

    What the student's code raised is an "error" (or "not written") outcome. ``metered()``
    wraps the probe (the grader's CPU budget); ``after_probe()`` runs once the probe is
    over, unless it was stopped (the grader forgets the check's objects). ``strict``: a
    probe or verdict that breaks by itself raises (a bug in the check: a notebook and the
    tests show it); with ``strict=False`` (the grader) it is put down to the student's
    objects, which a probe trusts to behave like the lesson's, and costs the check.
    """
    problem = None
    _IN_FORCE.begin(check.contracts, objects)
    try:
        with metered():
            data = check.probe(inputs, **objects)
            _IN_FORCE.settle()  # what the last calls (deferred ones) did to their arguments
            data = as_plain_data(data)
    except ContractBroken as error:  # a broken promise is a failure, not an error
        problem = Outcome(Status.FAILED, 0.0, title, tagged(str(error), error.rule),
                          error.origin, rule=error.rule)
    except NotWrittenYet as error:  # a stub, not a bug: its own status and words
        problem = Outcome(Status.NOT_WRITTEN, 0.0, title, str(error), error.origin)
    except ProbeError as error:
        problem = Outcome(Status.ERROR, 0.0, title, str(error), error.origin)
    except Exception as error:
        if strict:
            raise
        problem = Outcome(Status.ERROR, 0.0, title, f"checking your code raised "
                          f"{type(error).__name__}: {_shortened(error, 300)}")
    finally:
        _IN_FORCE.end()
        forget_mirrored()  # a check's lending ends with it
    if after_probe is not None:
        after_probe()
    if problem is not None:
        return problem
    try:
        verdict = check.verdict(inputs, data)
    except Exception as error:
        if strict:
            raise
        return Outcome(Status.ERROR, 0.0, title, f"your code's results could not be judged "
                       f"({type(error).__name__}).")
    return Outcome(Status.PASSED if verdict.passed else Status.FAILED,
                   min(1.0, max(0.0, verdict.fraction)), title, verdict.feedback,
                   figure=verdict.figure, rule=verdict.rule)


def with_notes(feedback, notes):
    """``feedback`` with ``notes`` (callee notes) added before the rule tag it ends with, so
    that it still ends with the rule its verdict found broken (notebook and grader alike)."""
    feedback, rule_tag = feedback.rstrip(), ""
    tags = list(TAG.finditer(feedback))
    if tags and tags[-1].end() == len(feedback):
        feedback, rule_tag = feedback[:tags[-1].start()].rstrip(), tags[-1].group(0)
    return " ".join([feedback, *notes, rule_tag]).rstrip()


def callee_note(callee, failures, lesson):
    """The sentence a failed check's feedback ends with when ``callee``'s own checks fail
    too: ``failures`` is [(title, feedback)] of those checks; ``lesson`` is the failed
    check's."""
    where = "of this lesson" if callee.lesson == lesson else f"of lesson {callee.lesson[:2]}"
    listed = "; ".join(f"'{title}': {_shortened(detail)}" for title, detail in failures)
    return (f"This may come from {callee.name} {where}, which this code calls: its own "
            f"{'test fails' if len(failures) == 1 else 'tests fail'} ({listed}).")


def _shortened(text, limit=160):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def names_callee(origin, callee):
    """Whether ``origin`` (function, lesson) is code of ``callee``: feedback that already
    says the failure comes from there needs no note that it may."""
    return origin is not None and (origin[0] == callee.name or
                                   origin[0].startswith(callee.defined_as + "."))


def as_plain_data(value):
    """``value`` as it arrives after crossing from a kernel to the grader: JSON.

    Visible tests pass inputs and data through this too, so a check behaves the same
    in a notebook as in the grader (tuples become lists, dict keys become strings).

    Data that is plain already (the built-in types themselves, string keys, ints JSON
    writes, at most ``_PLAIN_DEPTH`` deep) is copied without writing and reading the
    text, which is what a learning check's data cost most; anything else goes through
    JSON itself, which converts it or refuses it in its own words.
    """
    try:
        return _plain_copy(value, 0)
    except _NotPlain:
        return json.loads(json.dumps(value, allow_nan=True))


class _NotPlain(Exception):
    """A value that only a JSON round trip can say what becomes of."""


_PLAIN_DEPTH = 100  # deeper (or circular): JSON's own round trip decides
_LARGEST_PLAIN_INT_BITS = 4_000  # well within the digits Python writes an int with


def _plain_copy(value, depth):
    """What ``json.loads(json.dumps(value))`` gives, for plain data; raises _NotPlain."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is float:
        return value if value == value else _NAN  # JSON gives its one NaN back
    if kind is int:
        if value.bit_length() > _LARGEST_PLAIN_INT_BITS:
            raise _NotPlain
        return value
    if depth >= _PLAIN_DEPTH:
        raise _NotPlain
    if kind is list or kind is tuple:  # the common items kept in line, for speed
        return [item if type(item) in _KEPT_AS_THEY_ARE or (type(item) is float and
                                                           item == item)
                else _plain_copy(item, depth + 1) for item in value]
    if kind is dict:
        copied = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            copied[key] = _plain_copy(item, depth + 1)
        return copied
    raise _NotPlain


_KEPT_AS_THEY_ARE = frozenset((str, bool, type(None)))


_NAN = json.loads("NaN")


def packed(array, dtype="float32"):
    """A large numeric array as plain data: its shape, dtype and bytes in base64. A
    (256, 256, 8) Q-table is 2.8 MB this way, against 10 MB as JSON lists."""
    array = np.ascontiguousarray(array, dtype=dtype)
    return {"shape": list(array.shape), "dtype": str(array.dtype),
            "base64": base64.b64encode(array.tobytes()).decode("ascii")}


def unpacked(data, shape=None):
    """The array :func:`packed` made; ValueError if the data is not one (forged or cut)
    or, given ``shape``, has another shape."""
    try:
        dtype = np.dtype(data["dtype"])
        if dtype.kind not in "fiu":
            raise ValueError(f"not a numeric dtype: {dtype}")
        array = np.frombuffer(base64.b64decode(data["base64"], validate=True), dtype=dtype)
        array = array.reshape([int(size) for size in data["shape"]])
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        raise ValueError(f"not a packed array: {error}") from None
    if shape is not None and array.shape != tuple(shape):
        raise ValueError(f"expected an array of shape {tuple(shape)}, got {array.shape}")
    return array.astype(np.float64)


def wrong_amount(what, got, expected, *, rule):
    """A failed verdict when a probe's data holds the wrong number of results, else None.

    Verdicts call this before reading data, so results that are missing (or forged
    short) can never pass by leaving a loop with nothing to check.
    """
    try:
        count = len(got)
    except TypeError:
        count = None
    if count != expected:
        return failed(f"expected {expected} {what} from your code, got "
                      f"{count if count is not None else 'something else'}.", rule=rule)
    return None


def seed_for(salt, lesson, check_name):
    """A 64-bit seed from the salt, so each (lesson, check) gets its own inputs."""
    digest = hashlib.sha256(f"{salt}\0{lesson}\0{check_name}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def hidden_salt():
    return os.environ.get("GRADER_SALT") or DEFAULT_HIDDEN_SALT


class LessonChecks:
    """The checks of one lesson, looked up by the grade_id of their test cell."""

    def __init__(self, lesson, checks, contracts=None, inputs_untouched=True, lends=True,
                 distributions=None):
        self.lesson = lesson
        self.contracts = contracts or {}
        distributions = distributions or {}
        unknown = set(distributions) - {check.name for check in checks}
        if unknown:
            raise ValueError(f"distribution tests of unknown checks: {sorted(unknown)}")
        # every check that calls the student's code holds the lesson's contracts
        checks = [dataclasses.replace(
            check, contracts=self.contracts,
            distribution=distributions.get(check.name, check.distribution),
            rules=check.rules + tuple(rule for rule in _contract_rules(self.contracts)
                                      if rule not in check.rules and check.needs
                                      and (inputs_untouched or rule != INPUTS_UNTOUCHED)
                                      and (lends or rule != LENT_AS_STATED)))
            for check in checks]
        self.by_name = {check.name: check for check in checks}
        if len(self.by_name) != len(checks):
            raise ValueError(f"duplicate check names in lesson {lesson}")

    def __getitem__(self, name):
        return self.by_name[name]

    def __iter__(self):
        return iter(self.by_name.values())

    def inputs(self, name, salt):
        seed = seed_for(salt, self.lesson, name)
        return self[name].make_inputs(np.random.default_rng(seed))

    def _seed_global_generators(self, name, salt):
        global_seed = seed_for(salt, self.lesson, name)
        random.seed(global_seed)
        np.random.seed(global_seed % 2**32)

    def run(self, name, namespace, hidden=False):
        """Run check ``name`` on the objects in ``namespace`` (a notebook's ``globals()``).

        Prints a \u2713 line when it passes. When it does not, the feedback is raised as
        an ``AssertionError`` (under nbgrader, which scores a test cell by its error, and
        outside Jupyter) or, in a student's own kernel, printed as a \u2717 line on stderr
        so that Run All goes on and shows every test (otter's ``grader.check`` model).

        The inputs are the public ones; when ``GRADER_SALT`` is set (an instructor grading
        with nbgrader) the check runs again on the hidden inputs, so test cells need no
        hidden region and nbgrader's checksums of released and source cells agree.
        ``hidden=True`` runs the hidden inputs only. Returns None: a test cell's last line
        calls this, and a value would be shown under its \u2713/\u2717 lines as Out[].
        """
        runs = ([(hidden_salt(), HIDDEN_RUN)] if hidden
                else [(VISIBLE_SALT, "")] + ([(hidden_salt(), HIDDEN_RUN)]
                                             if os.environ.get("GRADER_SALT") else []))
        for salt, which in runs:
            outcome = self.outcome(name, namespace, salt, which)
            if outcome.passed:
                print(f"\u2713 {outcome.feedback}")
                continue
            if failures_stop_the_cell():
                raise AssertionError(outcome.feedback)
            print(f"\u2717 {outcome.feedback}", file=sys.stderr)
            return  # None: a test cell shows its ✓/✗ lines and no Out[] value

    def outcome(self, name, namespace, salt, which=""):
        """The :class:`Outcome` of check ``name`` on the objects in ``namespace`` (a
        notebook's globals) with the inputs of ``salt``, as its test cell judges it: the
        global generators seeded as the grader seeds a student's kernel, the grader's
        objects lent as the grader lends them (:mod:`checks.lending`), and, when it
        fails, the code it calls named if their own checks fail too (``which`` follows
        the title: which inputs)."""
        check = self[name]
        outcome = self.judged(name, namespace, salt, which)
        if outcome.passed or (outcome.status == Status.NOT_WRITTEN and outcome.origin):
            return outcome  # passed, or the unwritten code that raised is named: no guesses
        notes = []
        for callee in check.calls:
            if names_callee(outcome.origin, callee) or not written_in_a_notebook(
                    namespace.get(callee.defined_as)):
                continue  # named already, or not the student's own code (a reference)
            failures = _failures_of(callee, namespace, salt)
            if failures:
                notes.append(callee_note(callee, failures, self.lesson))
        if not notes:
            return outcome
        return dataclasses.replace(outcome, detail=with_notes(outcome.detail, notes))

    def judged(self, name, namespace, salt, which=""):
        """The :class:`Outcome` of check ``name`` on the objects in ``namespace`` with the
        inputs of ``salt``, run in this process with the global generators seeded as the
        grader seeds a student's kernel, without the notes on callees that
        :meth:`outcome` adds (benchmarks and in-process tests judge code this way)."""
        check = self[name]
        title = f"{check.title} ({which})" if which else check.title
        missing = [needed for needed in check.needs if needed not in namespace]
        if missing:
            return Outcome(Status.ERROR, 0.0, title, f"{', '.join(missing)} is not defined yet. "
                           "Run the cells above this one first.")
        objects = {needed: namespace[needed] for needed in check.needs}
        objects.update({name: namespace[name] for name in check.stand_ins if name in namespace})
        lost = methods_lost_by_redefinition(objects)
        if lost:
            return Outcome(Status.ERROR, 0.0, title, lost)
        self._seed_global_generators(check.name, salt)
        inputs = as_plain_data(self.inputs(check.name, salt))
        return probe_and_judge(check, inputs, objects, title)


def _failures_of(callee, namespace, salt):
    """[(title, feedback)] of ``callee``'s own checks that do not pass on ``namespace``;
    a check that cannot run here (an earlier lesson's answers not published with this
    edition) says nothing."""
    from checks import checks_for_lesson

    lesson_checks = checks_for_lesson(callee.lesson)
    failures = []
    for name in callee.checks:
        try:
            outcome = lesson_checks.judged(name, namespace, salt)
        except Exception:  # noqa: BLE001 - a note is a courtesy, never a crash
            continue
        if not outcome.passed:
            failures.append((outcome.title, outcome.detail))
    return failures


HIDDEN_RUN = "on the grader's hidden inputs"


def failures_stop_the_cell():
    """Whether a failed check raises. nbgrader (which sets ``NBGRADER_EXECUTION``) scores
    a test cell by its error, and scripts and the course's own tests expect one; in a
    student's Jupyter kernel (one with a ``kernel``, Colab's included) a failure is
    printed instead, so that the cells below it still run."""
    if os.environ.get("NBGRADER_EXECUTION"):
        return True
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return getattr(shell, "kernel", None) is None


def methods_lost_by_redefinition(objects):
    """What went wrong, in words, if one of ``objects`` is a class defined again after
    ``@add_to_class`` cells below its cell added methods to the earlier definition (a
    re-run class cell makes a new class without them); else None."""
    for name, value in objects.items():
        lost = lost_methods(value) if isinstance(value, type) else []
        if lost:
            listed = ", ".join(lost)
            return (f"the class {name} was defined again (its cell was run again) after "
                    f"{listed} had been added to it by the @add_to_class cells below it; the "
                    f"new class does not have them. Run the cells from the class's cell down "
                    f"to this one again (Run > Run Selected Cell and All Below).")
    return None


# --- contracts: what every call promises (checks.contracts) -------------------------------

def _contract_rules(contracts):
    """The contract rules a lesson's table can find broken."""
    rules = [INPUTS_UNTOUCHED, LENT_AS_STATED]
    if any(contract.returns.kind != "any" for contract in contracts.values()):
        rules.append(RESULT_TYPES)
    if any(contract.numpy_scalars or contract.numpy_keywords
           for contract in contracts.values()):
        rules.append(NUMPY_SCALARS)
    rules += [contract.rows_rule for contract in contracts.values()
              if contract.rows_rule is not None and contract.rows_rule not in rules]
    return rules


class _ContractsInForce:
    """The contracts of the check whose probe is running, and the names of the objects it
    drives: each looked-up object by the name the check asked for, each instance by the
    class that made it (never a name the student's process gives)."""

    def __init__(self):
        self.table, self.names, self.calls, self.active = {}, {}, {}, False
        self.earlier_results = EarlierResults()  # in a notebook: each function's last result

    def begin(self, table, objects):
        self.table, self.names, self.calls = dict(table or {}), {}, {}
        self.earlier_results.clear()
        self.active = True
        for name, value in objects.items():
            self.name(value, name)

    def end(self):
        self.table, self.names, self.active = {}, {}, False
        self.earlier_results.clear()

    def name(self, value, name):
        self.names[id(value)] = (value, name)

    def name_of(self, function):
        """The lesson's name of ``function`` (``td_targets``, ``ReplayBuffer.sample``), or
        None for a callable the check did not get from the student."""
        entry = self.names.get(id(function))
        if entry is not None and entry[0] is function:
            return entry[1]
        if isinstance(function, StudentObjectBase):
            try:
                owner = object.__getattribute__(function, "_owner")
                method = object.__getattribute__(function, "_name")
            except AttributeError:
                return None
        else:
            owner = getattr(function, "__self__", None)
            method = getattr(function, "__name__", None)
        entry = self.names.get(id(owner)) if owner is not None else None
        if entry is None or entry[0] is not owner or not isinstance(method, str):
            return None
        return f"{entry[1]}.{method}"

    def contract_of(self, function):
        """(name, Contract) of ``function``, or (name, None) when the table has none."""
        if not self.table:
            return None, None
        name = self.name_of(function)
        return name, self.table.get(name)

    def next_form(self, contract):
        """Whether this call passes numpy scalars: every other call of each contract that
        allows them (counted per contract, so that calls of two callables in turn do not
        leave one of them always with Python's)."""
        if contract is None or not (contract.numpy_scalars or contract.numpy_keywords):
            return False
        self.calls[id(contract)] = self.calls.get(id(contract), 0) + 1
        return self.calls[id(contract)] % 2 == 0

    def settle(self, near=None, description="one of the calls to your code"):
        """Raise :class:`ContractBroken` if a call in the student's process changed its
        arguments (the process tells; ``near``: an object of it, else every one named;
        ``description``: the call just made)."""
        processes = {student_process_of(value) for value, _ in self.names.values()}
        if near is not None:
            processes = {student_process_of(near)}
        # an earlier result changed counts for a pure function only (a probe may write
        # into what a method returned, to see whether the object changes with it)
        pure = near is not None and getattr(self.contract_of(near)[1], "pure", False)
        for process in processes - {None}:
            for deferred, where in process.take_changed_arguments():
                if where == EARLIER_RESULT and not pure:
                    continue
                if self.active:  # held on the calls of a lesson check's probe only
                    raise ContractBroken(_changed_words(deferred or description, where),
                                         INPUTS_UNTOUCHED)

    def held(self, description, name, contract, result, taken=None, function=None, args=()):
        """Hold one call's ``result`` (and, in a notebook, its arguments' snapshot
        ``taken``) to its contract; name an instance a class made."""
        if taken:
            moved = changed([(where, value, state[:2]) for where, value, state in taken]) or [
                f"returned {where}" for where, _, state in taken if state[2]]
            if moved:
                raise ContractBroken(_changed_words(description, moved[0]), INPUTS_UNTOUCHED)
        elif function is not None and self.active and student_process_of(function) is not None:
            self.settle(near=function, description=description)
        if contract is None:
            return
        if contract.makes:
            self.name(result, name)
            return
        problem = contract.returns.problem(result)
        if problem:
            raise ContractBroken(f"{description} {problem}"
                                 + (f": {contract.returns.says}" if contract.returns.says
                                    else "") + ".", RESULT_TYPES)
        problem = rows_problem(contract, args, result)
        if problem:
            raise ContractBroken(f"{description} {problem}.",
                                 contract.rows_rule or RESULT_TYPES)


_IN_FORCE = _ContractsInForce()


def _changed_words(description, where):
    if where == EARLIER_RESULT:
        return (f"{description} changed an array that an earlier call of it returned or "
                "was given: both stay the caller's. Make a new array in every call; never "
                "keep a result or the caller's array to refill on a later call.")
    if isinstance(where, str) and where.startswith("returned "):
        where = where[len("returned "):]
        which = f"argument {int(where) + 1}" if where.isdigit() else f"argument {where!r}"
        return (f"{description} returned its {which} itself (or a view of it): the caller's "
                "array would change with the result. Return a new array (np.array(x), "
                "x.copy()).")
    which = f"argument {where + 1}" if isinstance(where, int) else f"argument {where!r}"
    return (f"{description} changed its {which} in place: a function must leave the arrays "
            "and lists it is given as they were (work on a copy: np.array(x), x.copy(), "
            "list(x)).")


def _numpy_scalars_problem(description, function, args, kwargs, result):
    """For a pure function that allows numpy scalars: the same call with them must give
    the same result; a ContractBroken when it does not."""
    name, contract = _IN_FORCE.contract_of(function)
    if contract is None or not contract.pure or not contract.numpy_scalars:
        return
    forms = numpy_forms(args, contract.numpy_scalars)
    if all(same(a, b) for a, b in zip(forms, args)):
        return  # nothing to change: the arguments are numpy's already
    lend = _lends(function)
    try:
        again = function(*(to_student_code(forms) if lend else forms),
                          **(to_student_code(kwargs) if lend else kwargs))
    except Exception as error:  # noqa: BLE001 - what it raised is the answer
        _raise_refusal(lend)
        if isinstance(error, ContractBroken):
            raise
        raise ContractBroken(f"{description} works, but with numpy scalars for its numbers "
                             f"and flags it raised {type(error).__name__}: {error}",
                             NUMPY_SCALARS) from None
    _raise_refusal(lend)
    problem = contract.returns.problem(again)
    if problem:  # the type the lesson states holds whatever form the numbers came in
        raise ContractBroken(f"{description} with numpy scalars ({_short(forms)}) {problem}"
                             + (f": {contract.returns.says}" if contract.returns.says
                                else "") + ".", RESULT_TYPES)
    if not same(_comparable(again), _comparable(result)):
        raise ContractBroken(f"{description} gives {_short(result)}, but the same call with "
                             f"numpy scalars ({_short(forms)}) gives {_short(again)}: treat "
                             "np.int64, np.float64 and np.bool_ as Python's numbers (test a "
                             "flag with `if terminated:`, never `is True`).", NUMPY_SCALARS)


def _numpy_scalars_refused(description, function, args, kwargs, error):
    """A call that raised with numpy scalars: made again with Python's numbers, and a
    ContractBroken naming numpy-scalars when that one works (else the failure stands)."""
    lend = _lends(function)
    try:
        function(*(to_student_code(args) if lend else args),
                 **(to_student_code(kwargs) if lend else kwargs))
    except Exception:  # noqa: BLE001 - it fails with Python's numbers too: its own failure
        _raise_refusal(lend)
        return
    _raise_refusal(lend)
    raise ContractBroken(f"{description} raised {type(error).__name__}: "
                         f"{_shortened(error, 160)}, but the same call with Python's numbers "
                         "works: treat np.int64, np.float64 and np.bool_ as Python's numbers "
                         "(no isinstance(x, int) or type checks that refuse them).",
                         NUMPY_SCALARS)


def _comparable(value):
    """A result as a value: numpy scalars as Python's, containers as lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_comparable(item) for item in value]
    return value


def _short(value):
    return _shortened(repr(value), 80)


def call_later(description, function, *args):
    """Call the student's ``function`` for its effect only (a buffer's ``add``): in the
    grader the call goes with the next request to the student's process, ahead of it,
    which saves a round trip, and what it raises is raised by that request, worded as
    :func:`call_student` words it. In a notebook it is called at once."""
    process = student_process_of(function)
    if process is None:
        call_student(description, function, *args)
        return
    owner, method, args, _ = _call_target(function, args)
    process.defer(description, owner, args, {}, method=method)


@dataclasses.dataclass(frozen=True)
class PlannedCall:
    """A call of the student's code planned now and made later, in a sequence
    (:func:`call_in_sequence`): its description, the function, and its arguments in the
    form :func:`call_student` would have chosen for it at this point."""

    description: str
    function: object
    args: tuple
    name: str | None
    contract: object
    effect_only: bool = False  # made for its effect (call_later's): its result is not kept


def planned_call(description, function, *args, effect_only=False):
    """Plan a call of the student's ``function`` as :func:`call_student` (or, with
    ``effect_only``, :func:`call_later`) would make it now: the numpy or Python form of
    its arguments is chosen here, in the order calls are planned."""
    if effect_only:
        return PlannedCall(description, function, args, None, None, effect_only=True)
    name, contract = _IN_FORCE.contract_of(function)
    description, args, _ = _numpy_call(description, args, {}, contract,
                                       _IN_FORCE.next_form(contract))
    return PlannedCall(description, function, tuple(args), name, contract)


class CallsUnsettled(ProbeError):
    """A sequence of calls did not go as planned: a call raised, broke its contract or
    answered otherwise than foreseen. The caller makes the calls again one by one, where
    each is reported as it would have been."""


def call_in_sequence(planned, foresee=None):
    """Make the ``planned`` calls (:func:`planned_call`, all in one student process) one
    after another in one round trip: ``(results, foreseen)``, the results of the planned
    calls that are not for their effect only, each held to its contract, and what the
    ``foresee`` request asked a foresight of the student's process for (a list of arrays,
    or None: ``StudentProcess.call_sequence``). Raises :class:`CallsUnsettled` if a call
    raised or broke its contract."""
    process = student_process_of(planned[0].function)
    keep = [which for which, call in enumerate(planned) if not call.effect_only]
    results, foreseen = process.call_sequence(
        [_call_target(call.function, call.args) for call in planned], keep, foresee)
    if len(results) != len(keep) or any(type(result) is dict and "raised" in result
                                        for result in results):
        raise CallsUnsettled("a call in the sequence raised")
    try:
        _IN_FORCE.settle(near=planned[0].function, description=planned[-1].description)
        for which, result in zip(keep, results):
            call = planned[which]
            if call.contract is not None:
                _IN_FORCE.held(call.description, call.name, call.contract, result,
                               args=call.args)
    except ContractBroken as broken:
        raise CallsUnsettled(str(broken)) from None
    return results, foreseen


def _call_target(function, args):
    """(target, method, args, kwargs) of a call of a student process's ``function``."""
    if hasattr(type(function), "_owner"):
        return (object.__getattribute__(function, "_owner"),
                object.__getattribute__(function, "_name"), args, {})
    return function, None, args, {}


def contract_calls_made():
    """What the contracts in force have counted so far (the numpy and Python forms
    alternate by it), to be put back by :func:`restore_contract_calls`."""
    return dict(_IN_FORCE.calls)


def restore_contract_calls(counted):
    _IN_FORCE.calls = dict(counted)


def outcome_of(function, *args):
    """What calling the student's ``function`` did, as data: the exception's class name
    and message (``{"raised": None}`` if it returned). For checks of error handling."""
    lend = _lends(function)
    try:
        function(*(to_student_code(args) if lend else args))
    except NotImplementedError as error:  # not an answer to judge: the work is not done yet
        _raise_refusal(lend)
        raise failure_of(getattr(function, "__name__", "your code"), error, function) from None
    except Exception as error:  # what the student's code raised is the data
        _raise_refusal(lend)
        outcome = {"raised": type(error).__name__, "message": str(error)[:200]}
        library = _raised_in_library(error, function)
        if library:
            outcome["library"] = library
        return outcome
    _raise_refusal(lend)
    return {"raised": None}


def _raised_in_library(error, function):
    """The library whose code raised ``error``, if no notebook's or course's code did: as
    the student's process told it (an exception rebuilt in the grader carries it, however
    the student's code was reached), or read from the traceback (in a notebook)."""
    if hasattr(error, "raised_in_library") or student_process_of(function) is not None:
        return getattr(error, "raised_in_library", None)
    return library_that_raised(error)


def attempted(function, *args):
    """``{"value": function(*args)}``, or ``{"raised": what}`` when the student's code raised
    (a ProbeError's words), so that a verdict can name the rule a refusal breaks (a valid
    call refused); work not written yet still stops the check."""
    try:
        return {"value": function(*args)}
    except NotWrittenYet:
        raise
    except ProbeError as error:
        return {"raised": str(error)}


def value_error_problem(call, outcome, why="", *, rule):
    """A failed verdict (breaking ``rule``) unless ``outcome`` (from :func:`outcome_of`) is
    a ValueError with a message; None when it is. ``why`` says what the error protects
    against."""
    raised = outcome.get("raised") if isinstance(outcome, dict) else None
    if raised != "ValueError":
        what = "returned normally" if raised is None else f"raised {raised}"
        return failed(f"{call} {what}; it should raise ValueError with a message that says "
                      f"what is wrong{why}.", rule=rule)
    if not str(outcome.get("message", "")).strip():
        return failed(f"{call} raised ValueError without a message: say what is wrong.",
                      rule=rule)
    if outcome.get("library"):
        return failed(f"{call} raised ValueError inside {outcome['library']} "
                      f"({outcome.get('message', '')!r}), not in your code: a library's words "
                      "do not tell the caller what they did wrong. Check the case yourself "
                      "and raise ValueError with a message that says what is wrong.",
                      rule=rule)
    return None


def call_student(description, function, *args, **kwargs):
    """Call the student's code; turn any exception into a ProbeError that names the call
    (:func:`failure_of`), and hold the call to its contract (:mod:`checks.contracts`:
    :class:`ContractBroken` when it breaks it).

    In a notebook, the check's objects it is given are lent as the grader lends them,
    and the plain data it is given and returns are copies (:mod:`checks.lending`); what
    the grader would refuse (a refused or failed call on a lent object, even one the code
    caught) is raised here.
    """
    name, contract = _IN_FORCE.contract_of(function)
    return _call_once(description, function, args, kwargs, name, contract,
                      _IN_FORCE.next_form(contract))


def _numpy_call(description, args, kwargs, contract, with_numpy_scalars):
    """``(description, args, kwargs)`` of a call that passes numpy scalars where the
    contract allows them (a pure function's are compared after the call instead)."""
    if not with_numpy_scalars or contract.pure:
        return description, args, kwargs
    return (description + " (with numpy scalars)", numpy_forms(args, contract.numpy_scalars),
            numpy_keyword_forms(kwargs, contract.numpy_keywords))


def _call_once(description, function, args, kwargs, name, contract, with_numpy_scalars):
    plain_args, plain_kwargs = args, kwargs
    description, args, kwargs = _numpy_call(description, args, kwargs, contract,
                                            with_numpy_scalars)
    lend = _lends(function)
    if lend:
        args, kwargs = to_student_code(args), to_student_code(kwargs)
    # inputs untouched: held on the calls of a lesson check's probe
    in_notebook = _IN_FORCE.active and student_process_of(function) is None
    taken = snapshot(args, kwargs) if in_notebook else None
    keeps_earlier = (in_notebook and contract is not None and contract.pure
                     and type(function) is types.FunctionType)
    if keeps_earlier:
        _IN_FORCE.earlier_results.before_call(function)
    try:
        result = function(*args, **kwargs)
    except Exception as error:  # the student's bug, reported rather than propagated
        _raise_refusal(lend)
        if isinstance(error, (ProbeError, ContractBroken)):
            raise
        failure = failure_of(description, error, function)
        if with_numpy_scalars and not contract.pure and not isinstance(failure, NotWrittenYet):
            _numpy_scalars_refused(description, function, plain_args, plain_kwargs, error)
        raise failure from None
    _raise_refusal(lend)
    # a pure function's earlier result, changed by this call (as the student's process
    # notes it in the grader: grader/judge/sandbox_runtime/student_server.py)
    if keeps_earlier and _IN_FORCE.earlier_results.changed_by(function, result, taken):
        raise ContractBroken(_changed_words(description, EARLIER_RESULT), INPUTS_UNTOUCHED)
    if taken:  # handed back before the copy the channel makes: which argument it is
        taken = [(where, value, (before, writeable, aliased([(where, value, None)], result)))
                 for where, value, (before, writeable) in taken]
    result = from_student_code(result) if lend else result
    _IN_FORCE.held(description, name, contract, result, taken, function, args)
    if contract is not None and contract.pure:
        _numpy_scalars_problem(description, function, plain_args, kwargs, result)
    return result


def call_student_repeatedly(description, function, times, *args, **kwargs):
    """``[call_student(description, function, *args, **kwargs) for _ in range(times)]``:
    the same calls, the same errors; in the grader they cross to the student's process in
    one round trip instead of ``times``. Numpy scalars (checks.contracts) are passed to all
    of them or to none."""
    name, contract = _IN_FORCE.contract_of(function)
    with_numpy_scalars = _IN_FORCE.next_form(contract)
    process = student_process_of(function)
    if process is None:
        return [_call_once(description, function, args, kwargs, name, contract,
                           with_numpy_scalars) for _ in range(times)]
    plain_args, plain_kwargs = args, kwargs
    description, args, kwargs = _numpy_call(description, args, kwargs, contract,
                                            with_numpy_scalars)
    try:
        results = process.call_repeatedly(function, times, args, kwargs)
    except Exception as error:  # the student's bug, reported rather than propagated
        if isinstance(error, ProbeError):
            raise
        failure = failure_of(description, error, function)
        if with_numpy_scalars and not contract.pure and not isinstance(failure, NotWrittenYet):
            _numpy_scalars_refused(description, function, plain_args, plain_kwargs, error)
        raise failure from None
    if not isinstance(results, list) or len(results) != times:  # a forged reply
        raise ProbeError(f"{description} gave {type(results).__name__} where {times} "
                         "results were expected")
    _IN_FORCE.settle(near=function, description=description)
    for result in results if contract is not None else ():
        _IN_FORCE.held(description, name, contract, result, args=args)
    return results


def _lends(function):
    """Whether a call of ``function`` here gives it lent views: it is the student's code,
    called in their notebook (in the grader, the student's process lends them)."""
    return student_process_of(function) is None and written_in_a_notebook(function)


def _raise_refusal(lend):
    refusal = take_refusal() if lend else None
    if refusal is not None:
        raise ProbeError(refusal)


def failure_of(description, error, called=None):
    """The ProbeError that says what calling the student's ``description`` (``called``)
    raised: :class:`NotWrittenYet` for ``NotImplementedError``, and a
    :class:`ContractBroken` naming ``lent-as-stated`` for a lent object's refusal of a use
    the lesson does not list (checks.contracts). When notebook code other
    than the code called raised it (a loop that is written, calling an ``update`` that is
    not), that code is named, with its lesson."""
    origin = origin_of(error, called)
    who = origin_words(origin) if origin else None
    if lending_refused(error):  # a use of a lent object the lesson does not list
        broken = ContractBroken(f"{description} used an object the test lent it in a way the "
                                f"lesson does not list: {error}. Use lent objects only as the "
                                "lesson says.", LENT_AS_STATED)
        broken.origin = origin
        return broken
    if isinstance(error, NotImplementedError):
        failure = NotWrittenYet(
            f"{description} did not run to the end: the NotImplementedError comes from "
            f"{who}, which is not written yet." if who else
            f"{description} is not written yet (it still raises NotImplementedError).")
    else:
        failure = ProbeError(f"{description} raised {type(error).__name__}: {error}"
                             + (f" (raised by {who}, which it calls)" if who else ""))
    failure.origin = origin
    return failure


def origin_of(error, called=None):
    """``(function, lesson)`` of the notebook code that raised ``error``, when that is not
    ``called``: what the student's process said (``student_origin``, in the grader), or
    else read from the traceback (in a notebook). None when unknown."""
    told = getattr(error, "student_origin", None)
    if told is not None or student_process_of(called) is not None:
        return told
    return where_raised(error, called)


def origin_words(origin):
    """``QLearningAgent.update of lesson 01``, or ``td_targets of this lesson``."""
    function, lesson = origin
    return f"{function} of lesson {lesson[:2]}" if lesson else f"{function} of this lesson"
