"""Samplers against their exact distribution, at every fill level and batch size.

A buffer's ``sample`` is tested over a grid of cases (:func:`fill_and_batch_cases`):
before its ring wraps and after, each with a batch smaller than what is stored, equal to
it and larger. A sampler that draws only from the oldest ``batch_size`` transitions, or
only from the first ``capacity`` slots, or never the newest, is right in some cells of
that grid and wrong in others, so every cell is tested, each with a goodness-of-fit test
over every stored slot (:func:`distribution_problem`). The cases share the check's
false-failure rate (Bonferroni: each rejects at ``FALSE_FAILURE_RATE / cases``).
"""

import itertools

import numpy as np

from checks.statistics import FALSE_FAILURE_RATE, chi_square_pvalue

DRAWS_PER_SLOT = 200  # expected draws of each stored transition in each case


def fill_and_batch_cases(rng, smallest=6, largest=16, fewest_stored=3, smallest_batch=1):
    """``[{"capacity", "additions", "batch_size", "label"}]``: a buffer of a random
    capacity filled part way (before the wrap) and past it, sampled with a batch below,
    equal to and above the number stored."""
    capacity = int(rng.integers(smallest, largest + 1))
    partly = int(rng.integers(fewest_stored, capacity))  # stored before the wrap
    wrapped = capacity + int(rng.integers(1, 2 * capacity))  # additions past the wrap
    cases = []
    for additions, stored, fill in ((partly, partly, "partly filled"),
                                    (wrapped, capacity, "wrapped around")):
        for batch_size, relation in ((int(rng.integers(smallest_batch, stored)),
                                      "smaller than"),
                                     (stored, "equal to"),
                                     (stored + int(rng.integers(1, 2 * stored + 1)),
                                      "larger than")):
            cases.append({"capacity": capacity, "additions": additions,
                          "batch_size": batch_size,
                          "label": f"{fill}, batch {relation} the {stored} stored"})
    return cases


def batches_for(stored, batch_size, draws_per_slot=DRAWS_PER_SLOT):
    """How many batches give each of ``stored`` slots about ``draws_per_slot`` draws."""
    return -(-stored * draws_per_slot // batch_size)


def distribution_problem(drawn, expected, cases, describe=str):
    """Why the draws ``drawn`` (a list of ids) do not fit ``expected`` (``{id:
    probability}``, every stored slot), in words, or None. ``cases``: how many such tests
    the check makes (each rejects at FALSE_FAILURE_RATE / cases). ``describe(id)`` names a
    slot. Names the slots drawn that are not stored, the stored ones never drawn, and the
    ones drawn most too often or too rarely."""
    ids = list(expected)
    strays = sorted({i for i in drawn if i not in expected}, key=str)
    if strays:
        return (f"drew {describe(strays[0])}, which is not stored"
                + (f" (and {len(strays) - 1} more)" if len(strays) > 1 else ""))
    counts = np.array([drawn.count(i) for i in ids], dtype=np.float64)
    probabilities = np.array([expected[i] for i in ids], dtype=np.float64)
    never = [i for i, count, p in zip(ids, counts, probabilities)
             if count == 0 and p * len(drawn) >= 30]  # never, by chance: below e^-30
    if never:
        shown = ", ".join(describe(i) for i in never[:4])
        return (f"never drew {shown}" + (f" and {len(never) - 4} more" if len(never) > 4
                                         else "")
                + f" in {len(drawn)} draws (each expected about "
                + f"{len(drawn) * probabilities[ids.index(never[0])]:.0f} times)")
    if chi_square_pvalue(counts, probabilities) >= FALSE_FAILURE_RATE / cases:
        return None
    wanted = probabilities * counts.sum()
    order = np.argsort(-np.abs(counts - wanted) / np.sqrt(wanted))[:3]
    return "drew " + "; ".join(
        f"{describe(ids[k])} {counts[k]:.0f} times (expected about {wanted[k]:.0f})"
        for k in order)


def row_order_problem(batches, stored, tests):
    """Why the rows of ``batches`` (lists of ids numbered by age, oldest lowest) are not
    in random order, in words, or None. Rows drawn independently and uniformly from
    ``stored`` slots put the older transition first as often as the newer: the first row
    is no newer than the last with probability (1 + 1/stored) / 2 (a tie has probability
    1/stored). A batch drawn and then sorted, or the whole buffer handed out in order,
    has it almost always; and neighbouring rows are the same transition with probability
    1/stored, which a batch that groups each drawn transition's repeats exceeds (binomial
    tests, ``tests`` calls sharing the rate)."""
    from scipy import stats  # here: scipy takes a second to import

    pairs = [(batch[0], batch[-1]) for batch in batches if len(batch) >= 2]
    if not pairs:
        return None
    # two tests share the rate: first against last row, and neighbouring rows equal
    in_order = sum(first <= last for first, last in pairs)
    expected = (1 + 1 / stored) / 2
    if stats.binomtest(in_order, len(pairs), expected).pvalue < FALSE_FAILURE_RATE / (2 * tests):
        return (f"put a transition no newer than its last row in its first row in "
                f"{in_order} of {len(pairs)} batches (rows drawn independently do that in "
                f"about {expected * len(pairs):.0f}): each row is its own draw, in the order "
                "drawn, not sorted")
    # each row its own draw: a row equals the one before it with probability 1/stored (a
    # batch that hands out each drawn transition's repeats together does it far more)
    neighbours = [pair for batch in batches for pair in itertools.pairwise(batch)]
    same = sum(a == b for a, b in neighbours)
    if stats.binomtest(same, len(neighbours), 1 / stored).pvalue < FALSE_FAILURE_RATE / (2 * tests):
        return (f"put the same transition in two neighbouring rows {same} times in "
                f"{len(neighbours)} pairs of neighbours (rows drawn independently from "
                f"{stored} do that about {len(neighbours) / stored:.0f} times): each row is "
                "its own draw, in the order drawn")
    return None
