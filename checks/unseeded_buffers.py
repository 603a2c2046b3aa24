"""Buffers made without a seed: a generator of their own, the global ones left alone.

Lessons 02, 03 and 05 (and 04, in its own words) hold a buffer made without a seed to
the same rule as a seeded one: every draw comes from self.rng, here
np.random.default_rng(None), fresh entropy. Two buffers of each way of leaving the seed
out (omitted, and seed=None), filled alike, are made and sampled with numpy's and
Python's global generators seeded with the same number before each is made and before
each sample: they must not draw the same batches (one whose self.rng is the np.random
module, or a generator seeded from it, or a fixed stand-in seed, does), and making,
filling and sampling them must leave the global generators' states as they were.
"""

import importlib

import numpy as np

from checks.framework import (call_student, failed, kept_with, reseed_global_generators,
                              wrong_amount)
from checks.lending import mirrored

UNSEEDED_FORMS = ("omitted", "None")  # the seed left out of the call, and given as None
GLOBAL_GENERATORS = (("random", "random", "getstate"),  # module, its name, the state getter
                     ("numpy.random", "np.random", "get_state"))


def unseeded_words(form):
    """What a buffer's call does not show of how its seed was left out: " (seed omitted)"
    for the omitted form, nothing for seed=None."""
    return " (seed omitted)" if form == "omitted" else ""


def _global_generators(near):
    """(name, state getter) of Python's ``random`` and numpy's ``np.random`` where the
    student's code ``near`` runs: in the grader, the student's process's own modules (lent
    by importing them there), whose states cross as plain data."""
    return [(name, getattr(kept_with(mirrored(importlib.import_module, module), near), getter))
            for module, name, getter in GLOBAL_GENERATORS]


def _same_state(first, second):
    """Whether two global generator states (tuples of numbers, strings and arrays) agree."""
    if isinstance(first, np.ndarray) or isinstance(second, np.ndarray):
        return (isinstance(first, np.ndarray) and isinstance(second, np.ndarray)
                and np.array_equal(first, second))
    if isinstance(first, (tuple, list)) and isinstance(second, (tuple, list)):
        return len(first) == len(second) and all(map(_same_state, first, second))
    return type(first) is type(second) and first == second


def unseeded_runs(new_buffer, fill, draw, near, global_seed, batches):
    """Two buffers for each way of leaving the seed out (:data:`UNSEEDED_FORMS`; made by
    ``new_buffer(form)``), each filled by ``fill(buffer)`` and sampled ``batches`` times by
    ``draw(buffer)`` (one batch's transition numbers), with the global generators seeded
    with ``global_seed`` (where ``near`` runs) before it is made and before each sample.
    Returns their batches (``runs``: per form, two lists of batches) and, per buffer, the
    first moment at which a global generator's state was not the one seeding left
    (``moved``: form, which buffer, when, which generators)."""
    generators = _global_generators(near)
    reseed_global_generators(global_seed, near=near)
    seeded = [getter() for _, getter in generators]

    def moved_generators():
        return [name for (name, getter), state in zip(generators, seeded)
                if not _same_state(getter(), state)]

    runs, moved = {}, []
    for form in UNSEEDED_FORMS:
        runs[form] = []
        for number in range(2):
            reseed_global_generators(global_seed, near=near)
            buffer = new_buffer(form)
            fill(buffer)
            changed, when = moved_generators(), "while it was made and filled"
            drawn = []
            for index in range(batches):
                reseed_global_generators(global_seed, near=near)
                drawn.append(draw(buffer))
                if not changed:
                    changed, when = moved_generators(), f"by its sample call #{index + 1}"
            runs[form].append(drawn)
            if changed:
                moved.append({"form": form, "buffer": number + 1, "when": when,
                              "generators": changed})
    return {"runs": runs, "moved": moved}


def unseeded_problem(data, call_of, sampling, batches, global_seed, rule):
    """A failed verdict (breaking ``rule``) when :func:`unseeded_runs`'s buffers drew the
    same batches as their twin, or changed a global generator's state; else None.
    ``call_of(form)`` words the constructor call of a form, ``sampling`` the ``batches``
    sample calls ("sample(16) 3 times")."""
    data = data if isinstance(data, dict) else {}
    runs, moved = data.get("runs"), data.get("moved")
    if not (isinstance(runs, dict) and sorted(runs) == sorted(UNSEEDED_FORMS)
            and isinstance(moved, list)
            and all(isinstance(pair, list) and len(pair) == 2 for pair in runs.values())):
        return failed("expected the batches of two buffers made without a seed for each of "
                      f"{', '.join(UNSEEDED_FORMS)} from your code, got something else.",
                      rule=rule)
    for pair in runs.values():
        for run in pair:
            problem = wrong_amount("batches of a buffer made without a seed", run, batches,
                                   rule=rule)
            if problem:
                return problem
    seeding = (f"np.random and random seeded with {global_seed} before each buffer was "
               "made and again before each sample")
    fresh = ("With no seed, self.rng = np.random.default_rng(None) takes fresh entropy, so "
             "unseeded buffers sample differently whatever np.random and random hold")
    for form in UNSEEDED_FORMS:
        first, second = runs[form]
        if first == second:
            shown = repr(first[0] if first else [])
            shown = shown if len(shown) <= 120 else shown[:117] + "..."
            return failed(f"two {call_of(form)} each drew {sampling}, {seeding}: both "
                          f"drew the same {len(first)} batches (the first {shown}). "
                          f"{fresh}; a buffer whose draws "
                          "follow the global generators (self.rng = np.random, np.random.* or "
                          "random.* calls, a generator seeded from them), or a fixed "
                          "stand-in seed, makes them all alike.", rule=rule)
    for entry in moved:
        if not isinstance(entry, dict):
            continue
        names = " and ".join(str(name) for name in entry.get("generators", []))
        return failed(f"buffer {entry.get('buffer')} of two {call_of(entry.get('form'))} "
                      f"(each sampled with {sampling}, {seeding}) changed the state of "
                      f"{names} {entry.get('when')}: it was no longer the state seeding with "
                      f"{global_seed} leaves. Every draw comes from "
                      "self.rng (with no seed, np.random.default_rng(None): fresh entropy), "
                      "so making, filling and sampling a buffer leave numpy's and Python's "
                      "global generators as they were: no self.rng = np.random, no "
                      "np.random.* or random.* calls, no reseeding them.", rule=rule)
    return None


def unseeded_call(opening, form):
    """A constructor call as the feedback shows it: ``opening`` (the call up to its
    closing bracket, "ReplayBuffer(20") with the seed left out or given as None."""
    return opening + (")" if form == "omitted" else ", seed=None)")


def made_without_seed(opening, buffer_class, *args, **kwargs):
    """``new_buffer(form)`` for :func:`unseeded_runs`: the student's
    ``buffer_class(*args, **kwargs)`` with the seed left out or None (``opening``: the call
    as the feedback shows it, see :func:`unseeded_call`)."""
    def new_buffer(form):
        seed = {} if form == "omitted" else {"seed": None}
        return call_student(unseeded_call(opening, form), buffer_class, *args, **kwargs,
                            **seed)
    return new_buffer
