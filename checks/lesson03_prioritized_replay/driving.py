"""What every module of lesson 03's checks uses: the lesson's name, and how a probe drives
the student's SumTree and PrioritizedReplayBuffer and reads what they return as plain data."""

import math

import numpy as np

from checks.framework import NotWrittenYet, ProbeError, call_student, call_student_repeatedly
from checks.numbered_transitions import transition, transition_ids


LESSON = "03_prioritized_replay"


def _unless_raised(call, *args, **kwargs):
    """``(call(...), None)``: :func:`_attempt` for calls whose error is an error."""
    return call(*args, **kwargs), None


def _attempt(call, *args, **kwargs):
    """``(call(...), None)``, or ``(None, what it raised)`` when the student's code raised:
    for calls the lesson says must work (alpha = 0, a batch larger than the buffer), whose
    refusal the verdict names by its rule. Unwritten code is not a refusal."""
    try:
        return call(*args, **kwargs), None
    except NotWrittenYet:
        raise
    except ProbeError as error:
        return None, str(error)[:300]


# --- driving the student's objects ------------------------------------------------------

def _numbers(value, what, count=None, integers=False):
    """``value`` (an array or sequence from the student's code) as a flat list."""
    try:
        array = np.asarray(value, dtype=np.int64 if integers else np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ProbeError(f"{what} returned {type(value).__name__}, not an array of "
                         "numbers.") from None
    if count is not None and array.size != count:
        raise ProbeError(f"{what} returned {array.size} value(s); expected {count}.")
    return array.tolist()


def _new_tree(SumTree, capacity):
    return call_student(f"SumTree({capacity})", SumTree, capacity)


def _tree_update(tree, slots, priorities):
    """``tree.update`` with the slots as an int64 array and the priorities as given where
    they are a Python number or integers (a priority is any number: the lesson's own
    example passes ints), else as a float64 array."""
    if not isinstance(priorities, (int, float)) and np.asarray(priorities).dtype.kind != "i":
        priorities = np.asarray(priorities, dtype=np.float64)
    call_student("tree.update(slots, priorities)", tree.update,
                 np.asarray(slots, dtype=np.int64), priorities)


def _tree_total(tree):
    (total,) = _numbers(call_student("tree.total", lambda: tree.total), "tree.total", 1)
    return total


def _tree_find(tree, masses):
    return _numbers(call_student("tree.find_prefix_sum(masses)", tree.find_prefix_sum,
                                 np.asarray(masses, dtype=np.float64)),
                    "tree.find_prefix_sum(masses)", len(masses), integers=True)


def _tree_get(tree, slots):
    return _numbers(call_student("tree.get(slots)", tree.get, np.asarray(slots)),
                    "tree.get(slots)", len(slots))


def _new_buffer(PrioritizedReplayBuffer, capacity, alpha, seed):
    return call_student(f"PrioritizedReplayBuffer({capacity}, alpha={alpha})",
                        PrioritizedReplayBuffer, capacity, alpha=alpha, seed=seed)


def _fill(buffer, numbers):
    for k in numbers:
        call_student("add(obs_t, action, reward, obs_tp1, done)", buffer.add, *transition(k))


def _priorities(buffer, slots):
    """The priorities p^alpha the buffer's tree holds for ``slots``."""
    tree = getattr(buffer, "tree", None)
    if tree is None:
        raise ProbeError("the buffer has no attribute `tree`: keep the priorities in "
                         "self.tree, a SumTree, as the class docstring says.")
    return _tree_get(tree, list(slots))


def _max_priority(buffer):
    """What the buffer's attribute max_priority holds (a number, or its description)."""
    held = call_student("buffer.max_priority", lambda: buffer.max_priority)
    return float(held) if isinstance(held, (int, float, np.integer, np.floating)) else repr(
        held)[:60]


def _update_priorities(buffer, slots, td_errors):
    call_student("update_priorities(slots, td_errors)", buffer.update_priorities,
                 np.asarray(slots, dtype=np.int64), np.asarray(td_errors, dtype=np.float64))


def _sample(buffer, batch_size, beta):
    """One batch as plain data: the transitions' numbers, weights and slots."""
    batch = call_student(f"sample({batch_size}, beta={beta})", buffer.sample, batch_size, beta)
    return _batch_data(batch, batch_size)


def _samples(buffer, batch_size, beta, count):
    """:func:`_sample` ``count`` times, one after another (in the grader, in one round
    trip)."""
    return [_batch_data(batch, batch_size) for batch in call_student_repeatedly(
        f"sample({batch_size}, beta={beta})", buffer.sample, count, batch_size, beta)]


def _sampled_ids(buffer, batch_size, draws):
    """At least ``draws`` transition numbers from batches sampled with beta 0.4: as many
    batches as that takes when they are as long as asked for, then more if they fall
    short."""
    ids = []
    while len(ids) < draws:
        for batch in _samples(buffer, batch_size, 0.4, -(-(draws - len(ids)) // batch_size)):
            ids.extend(batch["ids"])
    return ids


def _batch_data(batch, batch_size):
    try:
        fields = list(batch)
    except TypeError:
        raise ProbeError(f"sample({batch_size}, beta) returned {type(batch).__name__}, not "
                         "seven arrays (obs_t, action, reward, obs_tp1, done, weights, "
                         "slots).") from None
    if len(fields) != 7:
        raise ProbeError(f"sample({batch_size}, beta) returned {len(fields)} items; expected "
                         "seven arrays (obs_t, action, reward, obs_tp1, done, weights, slots).")
    ids = transition_ids(fields[:5])
    return {"ids": ids,
            "weights": _numbers(fields[5], "the weights of sample()", len(ids)),
            "slots": _numbers(fields[6], "the slots of sample()", len(ids), integers=True)}


def _close(got, want, rel=1e-9):
    return isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=rel, abs_tol=1e-300)
