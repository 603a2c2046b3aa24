"""Lesson 03's check of bad input: the errors sample, update_priorities and SumTree.update
raise."""

import numpy as np

from checks.framework import (attempted, failed, outcome_of, passed, value_error_problem,
                              wrong_amount)
from checks.lesson03_prioritized_replay.driving import (_fill, _max_priority, _new_buffer,
                                                       _new_tree, _priorities, _tree_get,
                                                       _tree_update)
from checks.requirements import Rule


# --- the rules: what the lesson tells a student, as its checks test it ---------------------

# test_errors
SAMPLE_REFUSES = Rule("sample-refuses-bad-input", "sample raises ValueError with a message on "
                      "an empty buffer and for a batch_size <= 0.")
UPDATE_REFUSES = Rule("update-refuses-bad-input", "update_priorities raises ValueError with a "
                      "message for NaN or infinite TD errors and for slots outside "
                      "[0, len(self)), not only outside the capacity, and a refused call "
                      "changes nothing.")
TREE_REFUSES = Rule("tree-refuses-bad-input", "SumTree.update and SumTree.get raise ValueError "
                    "with a message for slots outside [0, capacity), and update for negative "
                    "or NaN priorities; a refused call changes nothing.")


# --- errors ---------------------------------------------------------------------------------

def _errors_inputs(rng):
    return {"capacity": int(rng.integers(8, 20)), "stored": int(rng.integers(2, 6)),
            "bad_batch": -int(rng.integers(1, 10)), "seed": int(rng.integers(2**31))}


def _errors_probe(inputs, PrioritizedReplayBuffer, SumTree):
    capacity, stored = inputs["capacity"], inputs["stored"]
    empty = _new_buffer(PrioritizedReplayBuffer, capacity, 0.6, inputs["seed"])
    filled = _new_buffer(PrioritizedReplayBuffer, capacity, 0.6, inputs["seed"])
    _fill(filled, range(stored))
    # alpha 0: nan ** 0 and inf ** 0 are 1, so only the buffer's own check refuses them
    # (a buffer that refuses alpha 0 altogether is judged by its own rule, not here: these
    # two calls are then left out)
    flat = attempted(_new_buffer, PrioritizedReplayBuffer, capacity, 0.0, inputs["seed"])
    flat = flat.get("value")
    if flat is not None:
        _fill(flat, range(stored))
    at_alpha_zero = {} if flat is None else {
        "update_priorities([0], [nan]) with alpha=0": outcome_of(
            flat.update_priorities, np.array([0]), np.array([np.nan])),
        "update_priorities([0], [inf]) with alpha=0": outcome_of(
            flat.update_priorities, np.array([0]), np.array([np.inf]))}
    # a full buffer: -1 and capacity are no slots, not ring positions that wrap round
    full = _new_buffer(PrioritizedReplayBuffer, capacity, 0.6, inputs["seed"])
    _fill(full, range(capacity))
    tree = _new_tree(SumTree, capacity)
    held_before = _max_priority(filled)
    _tree_update(tree, np.arange(capacity), np.arange(1.0, capacity + 1.0))  # not all zero
    held = [_priorities(filled, range(capacity)), _tree_get(tree, range(capacity))]
    outcomes = list({
        "sample(1, 0.4) on an empty buffer": outcome_of(empty.sample, 1, 0.4),
        "sample(0, 0.4)": outcome_of(filled.sample, 0, 0.4),
        f"sample({inputs['bad_batch']}, 0.4)": outcome_of(filled.sample,
                                                          inputs["bad_batch"], 0.4),
        "update_priorities([0], [nan])": outcome_of(filled.update_priorities,
                                                     np.array([0]), np.array([np.nan])),
        f"update_priorities([{stored}], [1.0]) with {stored} transitions stored":
            outcome_of(filled.update_priorities, np.array([stored]), np.array([1.0])),
        "update_priorities([-1], [1.0])": outcome_of(filled.update_priorities,
                                                      np.array([-1]), np.array([1.0])),
        f"update_priorities([{stored + 1}], [1.0]) with {stored} transitions stored "
        f"(capacity {capacity})": outcome_of(filled.update_priorities, np.array([stored + 1]),
                                             np.array([1.0])),
        "SumTree.update([0], [-1.0])": outcome_of(tree.update, np.array([0]),
                                                  np.array([-1.0])),
        "SumTree.update([0], [nan])": outcome_of(tree.update, np.array([0]),
                                                 np.array([np.nan])),
        "update_priorities([0], [inf])": outcome_of(filled.update_priorities,
                                                     np.array([0]), np.array([np.inf])),
        f"SumTree({capacity}).update([{capacity}], [1.0])": outcome_of(
            tree.update, np.array([capacity]), np.array([1.0])),
        # get reads a leaf: an index out of range would read an inner node or padding
        f"SumTree({capacity}).get([{capacity}])": outcome_of(tree.get, np.array([capacity])),
        f"SumTree({capacity}).get([-1])": outcome_of(tree.get, np.array([-1])),
        # the bad item last in a batch: a call that checks and writes item by item has
        # written the good ones before it refuses
        "SumTree.update([0, 1, 2], [2.5, 3.5, nan])": outcome_of(
            tree.update, np.array([0, 1, 2]), np.array([2.5, 3.5, np.nan])),
        "update_priorities([0, 1], [0.5, nan])": outcome_of(
            filled.update_priorities, np.array([0, 1]), np.array([0.5, np.nan])),
        f"update_priorities([0, {stored}], [7.5, 1.0]) with {stored} transitions stored":
            outcome_of(filled.update_priorities, np.array([0, stored]), np.array([7.5, 1.0])),
        # slots as a Python list, as a caller may give them: the same refusal
        f"update_priorities([{stored}], [1.0]) as lists, with {stored} transitions stored":
            outcome_of(filled.update_priorities, [stored], [1.0]),
        f"update_priorities([-1], [1.0]) on a full buffer of capacity {capacity}":
            outcome_of(full.update_priorities, np.array([-1]), np.array([1.0])),
        f"update_priorities([{capacity}], [1.0]) on a full buffer of capacity {capacity}":
            outcome_of(full.update_priorities, np.array([capacity]), np.array([1.0])),
        **at_alpha_zero,
    }.items())
    # refused calls change nothing: max_priority and the trees' priorities are what they
    # were before them
    return {"outcomes": outcomes, "alpha_zero_built": flat is not None,
            "max_priority": [held_before, _max_priority(filled)],
            "priorities": [held, [_priorities(filled, range(capacity)),
                                  _tree_get(tree, range(capacity))]]}


ERROR_CASES = 21


def _refusal_rule(call):
    """The rule a bad-input case of :func:`_errors_probe` tests, read from its call."""
    if str(call).startswith("SumTree"):
        return TREE_REFUSES
    return UPDATE_REFUSES if str(call).startswith("update_priorities") else SAMPLE_REFUSES


def _errors_verdict(inputs, data):
    cases = ERROR_CASES if data.get("alpha_zero_built", True) else ERROR_CASES - 2
    problem = wrong_amount("outcomes", data["outcomes"], cases, rule=SAMPLE_REFUSES)
    if problem:
        return problem
    for call, outcome in data["outcomes"]:
        problem = value_error_problem(call, outcome, " (a NaN or an index out of range in "
                                      "the tree corrupts every later sample, silently)",
                                      rule=_refusal_rule(call))
        if problem:
            return problem
    before, after = (data.get("max_priority") or [None, None])[:2]
    if after != before:
        return failed(f"update_priorities refused NaN and infinite TD errors and slots out of "
                      f"range, but max_priority went from {before!r} to {after!r}: a refused "
                      "call changes nothing. Check the whole call before changing anything.",
                      rule=UPDATE_REFUSES)
    before, after = (data.get("priorities") or [None, None])[:2]
    for where, rule, was, now in (("the buffer's tree", UPDATE_REFUSES, before[0], after[0]),
                                  (f"a SumTree({inputs['capacity']})", TREE_REFUSES,
                                   before[1], after[1])):
        if was != now:
            changed = next(k for k, (a, b) in enumerate(zip(was, now)) if a != b) if len(
                was) == len(now) else 0
            return failed(f"after the refused calls, {where} holds other priorities than "
                          f"before them (slot {changed}: {was[changed]!r} became "
                          f"{now[changed]!r}): a refused call changes nothing. Check the "
                          "whole call before writing the tree.", rule=rule)
    return passed("empty buffers, bad batch sizes, NaN and infinite TD errors, slots out of "
                  "range and negative or NaN priorities raise ValueError.")
