"""A student's object driven beside a model of it by salted sequences of operations.

Checks that call one method at a time miss what only a sequence shows: an answer cached
and not refreshed after a later change, a sum not propagated on the second update of a
slot, a counter that drifts after the ring wraps. So a check also draws sequences of
operations from its salt (:func:`sequences`), *shortest first*; the probe applies each
operation to the student's object and records what it observed (:func:`observed`); the
verdict replays the same operations on a model (the lesson's own definitions, or the
judge's reference) and compares every observation (:func:`first_difference`). The first
failing sequence, cut at its first differing operation, is the shortest failing one among
those tried, and the feedback shows it whole (:func:`shown`).

This is Hypothesis's stateful testing made small and deterministic: the operations come
from the check's salt, so the grader and the notebook try the same ones, and the
shrinking is done by trying short sequences before long ones.
"""

LENGTHS = (2, 3, 5, 8, 13, 21, 34)  # the sequences tried, shortest first


def sequences(rng, draw_operation, lengths=LENGTHS):
    """``[[operation, ...], ...]``: one sequence of each length, each operation drawn by
    ``draw_operation(rng, position, sequence_so_far)`` as plain data (a list whose first
    item names the method)."""
    drawn = []
    for length in lengths:
        sequence = []
        for position in range(length):
            sequence.append(draw_operation(rng, position, sequence))
        drawn.append(sequence)
    return drawn


def observed(sequence, apply):
    """What ``apply(operation)`` returned for each operation of ``sequence`` (the probe's
    side: ``apply`` calls the student's object)."""
    return [apply(operation) for operation in sequence]


def first_difference(sequences_, observations, model, agrees):
    """``(sequence, position, got, wanted)`` of the first operation, over the sequences in
    order, whose observation does not agree with the model's, or None. ``model(sequence)``
    gives the model's observations; ``agrees(got, wanted, operation)`` says whether one
    observation is right (a set of allowed answers, a tolerance)."""
    for sequence, got_all in zip(sequences_, observations):
        wanted_all = model(sequence)
        if len(got_all) != len(sequence):
            return sequence, min(len(got_all), len(sequence)), None, None
        for position, (operation, got, wanted) in enumerate(zip(sequence, got_all,
                                                                  wanted_all)):
            if not agrees(got, wanted, operation):
                return sequence, position, got, wanted
    return None


def shown(sequence, position, describe):
    """The operations of ``sequence`` up to ``position``, one per line: what the feedback
    shows of the shortest failing sequence."""
    return "; ".join(describe(operation) for operation in sequence[:position + 1])
