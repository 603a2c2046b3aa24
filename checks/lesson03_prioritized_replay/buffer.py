"""Lesson 03's checks of PrioritizedReplayBuffer: new transitions at the maximal priority,
sampling in proportion to p^alpha and stratified, the importance-sampling weights,
update_priorities, overwriting when full, and never a slot that holds nothing."""

import math

import numpy as np

from checks.contracts import INPUTS_UNTOUCHED, NUMPY_SCALARS, RESULT_TYPES
from checks.expected import expected as reference
from checks.framework import (attempted, call_student, failed, kept_with, lend_to, outcome_of,
                              passed, reseed_global_generators, result_by_reference,
                              wrong_amount)
from checks.lending import Served
from checks.lent_generators import GENERATOR_LIMITS
from checks.lesson02_replay_buffer import FIELDS
from checks.lesson03_prioritized_replay.driving import (
    LESSON, _attempt, _batch_data, _close, _fill, _max_priority, _new_buffer, _new_tree,
    _priorities, _sample, _sampled_ids, _samples, _tree_total, _unless_raised,
    _update_priorities)
from checks.requirements import Rule
from checks.numbered_transitions import FRESH_DRAWS, fresh_generator_draws
from checks.statistics import FALSE_FAILURE_RATE, chi_square_pvalue, describe_counts, fits
from checks.unseeded_buffers import (made_without_seed, unseeded_call,
                                      unseeded_problem, unseeded_runs, unseeded_words)
from course.ring_buffer import NumpyRingBuffer


# --- the rules: what the lesson tells a student, as its checks test it ---------------------

# test_new_transitions_max_priority
NEW_AT_MAX_PRIORITY = Rule("new-at-max-priority", "add gives a new transition the priority "
                           "max_priority ** alpha, where max_priority is 1 at first and then "
                           "the largest p = |delta| + epsilon given so far.")
MAX_PRIORITY_NEVER_DECREASES = Rule("max-priority-never-decreases", "max_priority never goes "
                                    "down: after every priority is lowered, new transitions "
                                    "still get the largest priority ever given.")
# test_sampling_follows_priorities (and the other checks that read sample's rows)
SAMPLING_PROPORTIONAL = Rule("sampling-proportional", "sample draws transition i with "
                             "probability P(i) = p_i^alpha / sum_k p_k^alpha.")
# a result type the lesson states: held on every call (checks.contracts)
SAMPLE_RETURNS = RESULT_TYPES
# test_stratified_sampling
STRATIFIED = Rule("stratified", "sample cuts [0, total) into batch_size equal slices and draws "
                  "one mass in each, so equal priorities give each of batch_size transitions "
                  "exactly once.")
SLICES_INDEPENDENT = Rule("slices-independent", "Each slice's mass is its own uniform draw, "
                          "independent of the other slices'.")
BATCH_STAYS_ITS_OWN = Rule("batch-stays-its-own", "A batch sample returned stays the "
                          "caller's: no later call of the buffer changes it, weights and "
                          "slots included.")
OWN_GENERATOR = Rule("own-generator", "sample draws only from the buffer's own generator "
                     "self.rng, made once from seed: the same seed gives the same batches "
                     "whatever the global generators hold, and successive batches differ.")
# test_importance_weights
WEIGHTS_FORMULA = Rule("weights-formula", "The weights are w_i = (N P(i))^-beta with "
                       "N = len(self), divided by the batch's largest.")
WEIGHTS_DIVIDED_BY_MAX = Rule("weights-divided-by-max", "The weights are divided by the "
                              "batch's largest weight: they lie in (0, 1] and the largest "
                              "is 1.")
WEIGHTS_BETA_ENDS = Rule("weights-beta-ends", "beta = 0 gives every weight 1 and beta = 1 the "
                         "full correction: 0 is a value of beta, not a missing one.")
ALPHA_ZERO_UNIFORM = Rule("alpha-zero-uniform", "alpha = 0 is uniform replay: the buffer "
                          "accepts it, every priority is p^0 = 1 and every weight 1.")
BATCH_LARGER_THAN_BUFFER = Rule("batch-larger-than-buffer", "A batch may be larger than the "
                                "number of transitions stored: a buffer of one returns it in "
                                "every row, with weight 1.")
# test_priority_updates
PRIORITY_FORMULA = Rule("priority-formula", "update_priorities stores p^alpha with "
                        "p = |delta| + epsilon for each slot it is given, and leaves the other "
                        "slots alone.")
EPSILON_ADDED = Rule("epsilon-added", "epsilon is added to |delta|: a TD error of 0 leaves the "
                     "priority epsilon^alpha, never 0.")
BUFFER_PARAMETERS = Rule("buffer-parameters", "The buffer uses the capacity, alpha and "
                         "epsilon it is given: its tree self.tree is a SumTree(capacity), with "
                         "the same slots as its ring, and alpha = 0.6, epsilon = 1e-6 when they "
                         "are not given.")
REPEATED_SLOTS = Rule("repeated-slots", "update_priorities accepts a slot given twice in one "
                      "call (a batch can hold a transition twice): the slot gets one of its "
                      "priorities and the total stays the sum of the priorities.")
# update_priorities leaves its arrays as they were: held on every call (checks.contracts)
UPDATE_LEAVES_INPUTS = INPUTS_UNTOUCHED
# test_wraparound
OVERWRITES_OLDEST = Rule("overwrites-oldest", "When full, add overwrites the oldest "
                         "transition: the buffer holds the newest capacity transitions.")
OVERWRITTEN_SLOT_PRIORITY = Rule("overwritten-slot-priority", "An overwritten slot gets the new "
                                 "transition's priority, max_priority ** alpha, not the old "
                                 "transition's.")
LEN_AFTER_WRAP = Rule("len-after-wrap", "len(buffer) counts the transitions held now (capacity "
                      "once full), and update_priorities accepts every one of their slots.")
# test_no_empty_or_out_of_range_samples
SAMPLE_FILLED_SLOTS = Rule("sample-filled-slots", "sample returns only filled slots: empty "
                           "slots keep priority 0 and the slots found are clamped to "
                           "len(self) - 1.")


EPSILON = 1e-6  # the buffer's default: p = |delta| + epsilon
DEFAULT_ALPHA = 0.6  # the signature's default
INITIAL_MAX_PRIORITY = 1.0


# --- the buffer: new transitions get the maximal priority ---------------------------------

def _max_priority_inputs(rng):
    first = int(rng.integers(3, 8))
    positive = float(rng.uniform(2, 6))
    raised = rng.choice(first, size=2, replace=False).tolist()
    return {"capacity": int(rng.integers(20, 60)), "first": first,
            "alpha": round(float(rng.uniform(0.4, 0.9)), 2),
            # the negative TD error is the larger in size: the maximum is of |delta|
            "raised": raised,
            "raised_errors": [positive, -positive - float(rng.uniform(0.5, 3))],
            "lowered_errors": rng.uniform(0.0, 0.5, size=first + 1).round(3).tolist(),
            "seed": int(rng.integers(2**31))}


def _max_priority_probe(inputs, PrioritizedReplayBuffer):
    first = inputs["first"]
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(buffer, range(first))
    initial = _priorities(buffer, range(first))
    _update_priorities(buffer, inputs["raised"], inputs["raised_errors"])
    _fill(buffer, [first])
    after_raise = _priorities(buffer, [first])[0]
    held_after_raise = _max_priority(buffer)
    _update_priorities(buffer, list(range(first + 1)), inputs["lowered_errors"])
    _fill(buffer, [first + 1])
    after_lowering = _priorities(buffer, [first + 1])[0]
    return {"initial": initial, "after_raise": after_raise, "after_lowering": after_lowering,
            "max_priority": [held_after_raise, _max_priority(buffer)]}



def _max_priority_verdict(inputs, data):
    alpha = inputs["alpha"]
    problem = wrong_amount("priorities", data["initial"], inputs["first"],
                           rule=NEW_AT_MAX_PRIORITY)
    if problem:
        return problem
    raised, lowered = inputs["raised_errors"], inputs["lowered_errors"]
    moments = (("after update_priorities raised two priorities", data["after_raise"],
                [raised]),
               ("after later updates lowered every priority again", data["after_lowering"],
                [raised, lowered]))
    # the priority a new transition should get after these calls of update_priorities,
    # and without the power alpha (a common bug); all asked for up front, so that the
    # published answers hold the hints' values too
    initial = reference(LESSON, "new_transition_priority", [], alpha)
    wants = [reference(LESSON, "new_transition_priority", updates, alpha)
             for _, _, updates in moments]
    unpowered = [reference(LESSON, "new_transition_priority", updates, 1.0)
                 for _, _, updates in moments]
    if not all(_close(p, initial) for p in data["initial"]):
        return failed(f"the first transitions added to a fresh buffer should get the "
                      f"priority max_priority^alpha = 1, but the tree holds "
                      f"{data['initial']}. Start self.max_priority at 1.",
                      rule=NEW_AT_MAX_PRIORITY)
    # the largest p the buffer would hold if it took the largest signed TD error
    signed = (max(raised) + EPSILON) ** alpha
    for number, ((moment, got, _), want, without_alpha) in enumerate(
            zip(moments, wants, unpowered)):
        if not _close(got, want):
            reason = ""
            if _close(got, 0.0):
                reason = " A transition at priority 0 is never sampled."
            elif _close(got, without_alpha):
                reason = " Store max_priority ** alpha, as update_priorities does."
            elif _close(got, signed):
                reason = (f" The largest TD error in size was {min(raised)}: max_priority "
                          "follows p = |delta| + epsilon.")
            # right after the raise but not after the lowering: max_priority went down
            rule = MAX_PRIORITY_NEVER_DECREASES if number else NEW_AT_MAX_PRIORITY
            return failed(f"{moment}, a new transition should get the largest priority "
                          f"given so far, (|delta| + epsilon)^alpha = {want:.6g} "
                          f"(alpha={alpha}), but it got {got!r}.{reason}", rule=rule)
    # self.max_priority holds p itself, the largest |delta| + epsilon given (1 at first),
    # not p^alpha: the tree holds the powers
    largest = max(1.0, max(abs(error) + EPSILON for error in raised))
    held = data.get("max_priority") or [None, None]
    if len(held) != 2 or not all(isinstance(h, float) and math.isclose(h, largest, rel_tol=1e-9)
                                 for h in held):
        return failed(f"after update_priorities with TD errors {raised} (epsilon "
                      f"{EPSILON:g}) and later smaller ones, self.max_priority should be "
                      f"{largest!r}, the largest p = |delta| + epsilon given so far (p itself, "
                      f"not p^alpha), but it held {held[0]!r} and then {held[1]!r}.",
                      rule=MAX_PRIORITY_NEVER_DECREASES)
    return passed("new transitions get the largest priority given so far, which never "
                  "decreases.")


# --- the buffer: sampling frequencies ---------------------------------------------------

MIN_EXPECTED_COUNT = 80


def _frequency_inputs(rng):
    stored = int(rng.integers(5, 11))
    errors = (np.geomspace(0.05, 4.0, stored) * rng.choice([-1, 1], size=stored))
    alpha = round(float(rng.uniform(0.45, 0.8)), 2)
    # only sizes the sample: without epsilon the rarest transition's share comes out a
    # hair smaller, never larger, so the draws never fall short of MIN_EXPECTED_COUNT
    shares = np.abs(errors) ** alpha
    probabilities = shares / shares.sum()
    return {"capacity": stored + int(rng.integers(0, 20)), "alpha": alpha,
            "td_errors": rng.permutation(errors).round(4).tolist(), "batch_size": 32,
            "draws": int(math.ceil(MIN_EXPECTED_COUNT / probabilities.min() / 32)) * 32,
            "seed": int(rng.integers(2**31))}


def _frequency_probe(inputs, PrioritizedReplayBuffer):
    stored = len(inputs["td_errors"])
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(buffer, range(stored))
    _update_priorities(buffer, list(range(stored)), inputs["td_errors"])
    ids = _sampled_ids(buffer, inputs["batch_size"], inputs["draws"])
    return {"ids": ids[:inputs["draws"]]}


def _frequency_verdict(inputs, data):
    errors, alpha = inputs["td_errors"], inputs["alpha"]
    stored = len(errors)
    problem = wrong_amount("sampled transitions", data["ids"], inputs["draws"],
                           rule=SAMPLE_RETURNS)
    if problem:
        return problem
    strays = [i for i in data["ids"] if not (isinstance(i, int) and 0 <= i < stored)]
    if strays:
        return failed(f"with transitions 0..{stored - 1} stored, sample returned "
                      f"{'a row whose fields do not belong together' if -1 in strays else f'transition {strays[0]}'}: "
                      "return the transitions stored in the slots you drew.",
                      rule=SAMPLE_RETURNS)
    counts = np.bincount(data["ids"], minlength=stored)
    expected = reference(LESSON, "sampling_probabilities", errors, alpha)
    # asked for before the verdict, so that the published answers hold the hint's too
    ignoring_alpha = reference(LESSON, "sampling_probabilities", errors, 1.0)
    if fits(counts, expected):
        return passed(f"sampling frequencies fit P(i) = p_i^alpha / sum p^alpha with "
                      f"alpha={alpha} over {inputs['draws']} draws (chi-square, rejection "
                      f"rate {FALSE_FAILURE_RATE:g}).")
    situation = (f"with TD errors {[round(e, 3) for e in errors]} set by "
                 f"update_priorities and alpha={alpha}, ")
    labels = [f"#{i} (|delta| {abs(e):.3g})" for i, e in enumerate(errors)]
    detail = describe_counts(counts, expected, labels)
    if chi_square_pvalue(counts, ignoring_alpha) >= FALSE_FAILURE_RATE:
        return failed(situation + "your frequencies follow p_i, not p_i^alpha: raise "
                      "priorities to the power alpha before storing them. " + detail,
                      rule=SAMPLING_PROPORTIONAL)
    if chi_square_pvalue(counts, np.full(stored, 1 / stored)) >= FALSE_FAILURE_RATE:
        return failed(situation + "your buffer samples uniformly: the priorities set by "
                      "update_priorities do not change what is drawn. " + detail,
                      rule=SAMPLING_PROPORTIONAL)
    return failed(situation + "the draws do not follow P(i) = p_i^alpha / sum p^alpha: "
                  + detail + ".", rule=SAMPLING_PROPORTIONAL)


# --- the buffer: stratified sampling ------------------------------------------------------

def _stratified_inputs(rng):
    return {"batch_sizes": [int(rng.integers(4, 12)), int(rng.integers(20, 60))],
            "batches": 5, "pair_batch": int(rng.integers(8, 17)), "pair_batches": 40,
            "seed": int(rng.integers(2**31)),
            # two buffers of one seed, the global generators seeded apart before each
            "generator": {"batch": int(rng.integers(6, 12)), "per_slice": 4, "batches": 4,
                          "global_seeds": rng.choice(2**31, size=2, replace=False).tolist()}}


STRATIFIED_ALPHAS = (0.0, 0.6)  # alpha = 0 makes every p^alpha 1: sampling stays stratified


def _stratified_probe(inputs, PrioritizedReplayBuffer):
    batches = []
    # alpha 0 for the first (uniform priorities, still drawn slice by slice), 0.6 for the next
    for size, alpha in zip(inputs["batch_sizes"], STRATIFIED_ALPHAS):
        buffer = _new_buffer(PrioritizedReplayBuffer, size + 7, alpha, inputs["seed"])
        _fill(buffer, range(size))
        batches.append([batch["ids"] for batch in _samples(buffer, size, 0.4, inputs["batches"])])
    # twice as many transitions as the batch: each slice of the total holds two of them,
    # and the draws in different slices must be independent of each other
    size = inputs["pair_batch"]
    buffer = _new_buffer(PrioritizedReplayBuffer, 2 * size + 3, 0.6, inputs["seed"])
    _fill(buffer, range(2 * size))
    pairs = [batch["ids"] for batch in _samples(buffer, size, 0.4, inputs["pair_batches"])]
    return {"batches": batches, "pairs": pairs,
            "same_seed": _same_seed_batches(PrioritizedReplayBuffer, inputs),
            "seed_zero": _seed_zero_batches(PrioritizedReplayBuffer, inputs),
            "unseeded_globals": _unseeded_batches(PrioritizedReplayBuffer, inputs)}


def _same_seed_batches(PrioritizedReplayBuffer, inputs):
    """The transitions of two buffers made with the same seed and filled alike, each sampled
    after the global generators (``random``, ``np.random``) were seeded differently:
    a buffer drawing from its own generator draws the same batches both times."""
    case = inputs["generator"]
    stored = case["batch"] * case["per_slice"]  # several transitions in each slice
    # the buffer's own generator, read right after it is made: default_rng(seed) itself
    runs = [fresh_generator_draws(_new_buffer(PrioritizedReplayBuffer, stored, 0.6,
                                              inputs["seed"]))]
    for global_seed in case["global_seeds"]:
        buffer = _new_buffer(PrioritizedReplayBuffer, stored, 0.6, inputs["seed"])
        _fill(buffer, range(stored))
        reseed_global_generators(global_seed, near=buffer)
        runs.append([batch["ids"] for batch in _samples(buffer, case["batch"], 0.4,
                                                        case["batches"])])
    return runs


# Seed 0, a seed like any other (`if seed:` and `seed or None` take it for no seed), given
# as Python's int and as numpy's (np.int64, as an array of seeds holds it): the same seed
ZERO_SEEDS = (0, np.int64(0))


def _seed_zero_batches(PrioritizedReplayBuffer, inputs):
    """:func:`_same_seed_batches` for seed 0: the fresh draws of a buffer made with each
    form of it, then the batches of two buffers filled alike, one made with each form,
    sampled after the global generators were seeded differently."""
    case = inputs["generator"]
    stored = case["batch"] * case["per_slice"]
    fresh = [fresh_generator_draws(_new_buffer(PrioritizedReplayBuffer, stored, 0.6, seed))
             for seed in ZERO_SEEDS]
    runs = []
    for seed, global_seed in zip(ZERO_SEEDS, case["global_seeds"]):
        buffer = _new_buffer(PrioritizedReplayBuffer, stored, 0.6, seed)
        _fill(buffer, range(stored))
        reseed_global_generators(global_seed, near=buffer)
        runs.append([batch["ids"] for batch in _samples(buffer, case["batch"], 0.4,
                                                        case["batches"])])
    return {"fresh": fresh, "runs": runs}


def _unseeded_opening(stored):
    """The constructor call of an unseeded buffer, up to its closing bracket."""
    return f"PrioritizedReplayBuffer({stored}, alpha=0.6"


def _unseeded_batches(PrioritizedReplayBuffer, inputs):
    """:func:`~checks.lesson02_replay_buffer.unseeded_runs` for this buffer: two made with
    the seed omitted and two with seed=None, filled alike (several transitions in each
    slice), sampled with the global generators seeded alike before each buffer and each
    sample; and whether any of them moved the global generators."""
    case = inputs["generator"]
    stored = case["batch"] * case["per_slice"]

    return unseeded_runs(made_without_seed(_unseeded_opening(stored), PrioritizedReplayBuffer,
                                           stored, alpha=0.6), lambda buffer: _fill(buffer, range(stored)),
                         lambda buffer: _sample(buffer, case["batch"], 0.4)["ids"],
                         PrioritizedReplayBuffer, case["global_seeds"][0], case["batches"])


def _unseeded_problem(inputs, data):
    """A failed verdict when two unseeded buffers drew the same batches with the global
    generators seeded alike, or one of them changed those generators' states; else None.
    With four transitions of equal priority in each slice, two independent generators
    draw the same batch of 6 or more with probability at most 4^-6, the same
    case["batches"] = 4 batches at most 4^-24 (2 pairs: below 1e-14)."""
    case = inputs["generator"]
    stored = case["batch"] * case["per_slice"]

    def call_of(form):
        return (f"{unseeded_call(_unseeded_opening(stored), form)}{unseeded_words(form)} "
                f"holding transitions "
                f"0..{stored - 1} at equal priority")

    return unseeded_problem(data, call_of,
                            f"sample({case['batch']}, 0.4) {case['batches']} times",
                            case["batches"], case["global_seeds"][0], OWN_GENERATOR)


def _seed_name(seed):
    return f"np.int64({seed})" if isinstance(seed, np.integer) else repr(seed)


def _stratified_verdict(inputs, data):
    from scipy import stats  # here: scipy takes a second to import
    problem = wrong_amount("batch sizes", data["batches"], len(inputs["batch_sizes"]),
                           rule=SAMPLE_RETURNS)
    if problem:
        return problem
    for size, alpha, batches in zip(inputs["batch_sizes"], STRATIFIED_ALPHAS,
                                    data["batches"]):
        problem = wrong_amount("batches", batches, inputs["batches"], rule=SAMPLE_RETURNS)
        if problem:
            return problem
        for ids in batches:
            if sorted(ids) != list(range(size)):
                repeats = len(ids) - len(set(ids))
                return failed(f"with {size} transitions of equal priority (alpha={alpha}), "
                              f"sample({size}) "
                              f"should draw one mass from each of {size} equal slices of the "
                              f"total, which picks every transition exactly once; a batch held "
                              f"{repeats} repeat(s). Draw mass k uniformly from "
                              "[k total / batch_size, (k + 1) total / batch_size).",
                              rule=STRATIFIED)
    size, count = inputs["pair_batch"], inputs["pair_batches"]
    problem = wrong_amount("batches from the buffer of two transitions per slice",
                           data.get("pairs", []), count, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    situation = (f"with {2 * size} transitions of equal priority, sample({size}) should draw "
                 f"one mass from each of {size} equal slices of the total, each slice "
                 "holding two transitions (2k and 2k + 1)")
    agreements = 0
    for ids in data["pairs"]:
        slices = sorted(i // 2 for i in ids if isinstance(i, int))
        if slices != list(range(size)):
            return failed(f"{situation}, so a batch holds one of each pair; one held "
                          f"transitions {sorted(ids)}.", rule=STRATIFIED)
        sides = [i % 2 for i in sorted(ids)]  # 0: the first of its slice, 1: the second
        agreements += sum(a == b for a, b in zip(sides, sides[1:]))
    # independent fair draws: neighbouring slices pick the same side half the time
    pairs_seen = count * (size - 1)
    low = stats.binom.cdf(agreements, pairs_seen, 0.5)
    high = stats.binom.sf(agreements - 1, pairs_seen, 0.5)
    if min(low, high) < FALSE_FAILURE_RATE / 2:
        return failed(f"{situation}. Draws in different slices must be independent, so "
                      f"neighbouring slices pick the same side of their pair half the time; "
                      f"in {count} batches they did {agreements} times of {pairs_seen} "
                      f"(expected about {pairs_seen // 2}). Draw a separate uniform number "
                      "for each slice (rng.random(batch_size)), not one for the whole batch.",
                      rule=SLICES_INDEPENDENT)
    problem = (_generator_problem(inputs, data.get("same_seed"))
               or _seed_zero_problem(inputs, data.get("seed_zero"))
               or _unseeded_problem(inputs, data.get("unseeded_globals")))
    if problem:
        return problem
    return passed("sampling is stratified: one draw from each equal slice of the total, "
                  "independently in each slice (binomial test on neighbouring slices, "
                  f"rejection rate {FALSE_FAILURE_RATE:g}), from the buffer's own generator "
                  "(seed 0 too; unseeded buffers draw apart and leave np.random and random "
                  "as they were).")


def _generator_problem(inputs, runs):
    """A failed verdict unless both runs of :func:`_same_seed_batches` drew the same
    batches, and successive batches differ (with four transitions in each slice, a
    buffer that draws afresh repeats a batch of 6 or more once in 4^6 times)."""
    case = inputs["generator"]
    problem = wrong_amount("runs of the same seed", runs, 3, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    stored = case["batch"] * case["per_slice"]
    fresh, *runs = runs
    wanted = np.random.default_rng(inputs["seed"]).random(FRESH_DRAWS).tolist()
    if fresh != wanted:
        return failed(f"right after PrioritizedReplayBuffer({stored}, seed={inputs['seed']}) "
                      f"was made, buffer.rng.random({FRESH_DRAWS}) gave {fresh!r}; "
                      f"np.random.default_rng({inputs['seed']}).random({FRESH_DRAWS}) gives "
                      f"{wanted}: make self.rng = np.random.default_rng(seed) in __init__, "
                      "from the seed itself (not a generator derived from it, nor one made "
                      "on the first sample).", rule=OWN_GENERATOR)
    situation = (f"two PrioritizedReplayBuffer({stored}, seed={inputs['seed']}) filled alike "
                 f"drew sample({case['batch']}, 0.4) {case['batches']} times each, after "
                 f"np.random and random were seeded with {case['global_seeds'][0]} before "
                 f"the first and {case['global_seeds'][1]} before the second")
    first, second = runs
    if first != second:
        return failed(f"{situation}; their batches differ (first batches {first[0]} and "
                      f"{second[0]}). A buffer draws only from its own generator, self.rng = "
                      "np.random.default_rng(seed), made once in __init__: not from np.random "
                      "or random, and not from a new unseeded one.", rule=OWN_GENERATOR)
    if len(first) > 1 and all(batch == first[0] for batch in first):
        return failed(f"{situation}; every batch was the same, {first[0]}: a generator "
                      "made anew from the seed at each call repeats its draws. Make "
                      "self.rng once, in __init__, and draw from it.", rule=OWN_GENERATOR)
    return None


def _seed_zero_problem(inputs, data):
    """A failed verdict unless buffers made with seed 0 (Python's int and numpy's) seed
    their generators with it, as any other seed: np.random.default_rng(0)'s draws first,
    and equal batches from two of them whatever the global generators hold."""
    case = inputs["generator"]
    stored = case["batch"] * case["per_slice"]
    data = data if isinstance(data, dict) else {}
    fresh, runs = data.get("fresh") or [], data.get("runs") or []
    problem = (wrong_amount("fresh generators of seed 0", fresh, len(ZERO_SEEDS),
                            rule=SAMPLE_RETURNS)
               or wrong_amount("runs of seed 0", runs, len(ZERO_SEEDS), rule=SAMPLE_RETURNS))
    if problem:
        return problem
    zero = ("0 is a seed like any other, not a missing one: pass seed on to "
            "np.random.default_rng as it is (`if seed:`, `seed or None` and `seed or <a "
            "default>` take 0 for no seed; only None means none).")
    numpy = ("np.int64(0), numpy's int (as an array of seeds holds it), is the same seed "
             "as 0: treat numpy's numbers exactly as Python's and pass seed on to "
             "np.random.default_rng as it is (no isinstance(seed, int) test).")
    wanted = np.random.default_rng(0).random(FRESH_DRAWS).tolist()
    for seed, draws in zip(ZERO_SEEDS, fresh):
        if draws != wanted:
            return failed(f"right after PrioritizedReplayBuffer({stored}, "
                          f"seed={_seed_name(seed)}) was made, "
                          f"buffer.rng.random({FRESH_DRAWS}) gave {draws!r}; "
                          f"np.random.default_rng(0).random({FRESH_DRAWS}) gives {wanted}. "
                          "The text makes self.rng once in __init__ from seed: "
                          + (zero if seed is ZERO_SEEDS[0] else numpy), rule=OWN_GENERATOR)
    first, second = runs
    if first != second:
        return failed(f"two PrioritizedReplayBuffer({stored}) made with the same seed 0, one "
                      f"with seed={_seed_name(ZERO_SEEDS[0])} and one with "
                      f"seed={_seed_name(ZERO_SEEDS[1])}, filled alike, drew "
                      f"sample({case['batch']}, 0.4) {case['batches']} times each (np.random "
                      f"and random seeded with {case['global_seeds'][0]} before the first and "
                      f"{case['global_seeds'][1]} before the second); their batches differ "
                      f"(first batches {first[:1]} and {second[:1]}). The text says two "
                      "buffers made with the same seed draw the same batches: " + zero,
                      rule=OWN_GENERATOR)
    return None


# --- the buffer: importance-sampling weights --------------------------------------------------

def _weights_inputs(rng):
    stored = int(rng.integers(6, 20))
    return {"capacity": stored + int(rng.integers(0, 30)),
            "alpha": round(float(rng.uniform(0.4, 0.9)), 2),
            "td_errors": rng.uniform(-3, 3, size=stored).round(3).tolist(),
            "betas": [0.0, round(float(rng.uniform(0.2, 0.8)), 2), 1.0],
            "batch_size": int(rng.integers(8, 24)), "batches": 3,
            "seed": int(rng.integers(2**31))}


def _weights_probe(inputs, PrioritizedReplayBuffer):
    stored = len(inputs["td_errors"])
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(buffer, range(stored))
    _update_priorities(buffer, list(range(stored)), inputs["td_errors"])
    # one transition holding the whole total: P = 1, so every weight is 1
    single = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(single, [0])
    _update_priorities(single, [0], [inputs["td_errors"][0]])
    # the beta in between first, as any sample is: then beta = 0 and 1, the ends, whose
    # refusal (an error from `if beta:`, say) the verdict names as such
    middle, larger_refused = (_attempt if inputs["batch_size"] > stored else _unless_raised)(
        _samples, buffer, inputs["batch_size"], inputs["betas"][1], inputs["batches"])
    if larger_refused:
        return {"larger_refused": larger_refused}
    ends = {beta: _attempt(_samples, buffer, inputs["batch_size"], beta, inputs["batches"])
            for beta in (inputs["betas"][0], inputs["betas"][2])}
    samples = [ends[inputs["betas"][0]], (middle, None), ends[inputs["betas"][2]]]
    # the ends as whole numbers too (Python's int, and np.int64 on every other call)
    whole = [_attempt(_samples, buffer, inputs["batch_size"], beta, inputs["batches"])
             for beta in WHOLE_BETAS]
    single, single_refused = _attempt(_sample, single, 3, inputs["betas"][1])
    uniform, uniform_refused = _attempt(_uniform_weights, PrioritizedReplayBuffer, inputs)
    return {"samples": [batches for batches, _ in samples],
            "refused": [why for _, why in samples],
            "whole_samples": [batches for batches, _ in whole],
            "whole_refused": [why for _, why in whole], "single": single,
            "single_refused": single_refused, "uniform": uniform,
            "uniform_refused": uniform_refused}


# beta's ends as the lesson writes them, whole numbers: "beta = 0 gives every weight 1 and
# beta = 1 the full correction"; the same weights as 0.0 and 1.0 give
WHOLE_BETAS = (0, 1)


def _uniform_weights(PrioritizedReplayBuffer, inputs):
    """alpha = 0: every priority p^0 = 1, so sampling is uniform and every weight is 1."""
    stored = len(inputs["td_errors"])
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], 0.0, inputs["seed"])
    _fill(buffer, range(stored))
    _update_priorities(buffer, list(range(stored)), inputs["td_errors"])
    return _sample(buffer, inputs["batch_size"], 1.0)["weights"]


def _batch_weights(table, ids):
    """The weights a batch of ``ids`` should get, from a table of the reference's
    ``importance_weights``: relative to the batch's largest weight."""
    unnormalised = np.asarray(table["unnormalised"])[ids]
    heaviest = ids[int(np.argmax(unnormalised))]
    return np.asarray(table["relative_to"][heaviest])[ids], unnormalised


def _beta_batches_problem(inputs, beta, batches, refused):
    """A failed verdict unless ``batches``, sampled with ``beta`` (None: ``refused`` says
    why not), hold the weights (N P(i))^-beta / max; None when they do. A whole-number
    beta (Python's int, np.int64 on every other call) gives the weights its float gives."""
    errors, alpha = inputs["td_errors"], inputs["alpha"]
    stored = len(errors)
    whole = type(beta) is int
    said = (f"beta={beta} (the whole number {beta}: Python's int, and np.int64 on every "
            "other call)" if whole else f"beta={beta}")
    same = (f" A whole-number beta is a value of beta like any other: it gives the weights "
            f"beta={float(beta)} gives (numbers may arrive as Python's or numpy's ints)."
            if whole else "")
    if refused:
        return failed(f"sample({inputs['batch_size']}, {said}) failed where "
                      f"sample({inputs['batch_size']}, beta={inputs['betas'][1]}) worked: "
                      f"{refused}. beta = {beta:g} is a value of beta ("
                      + ("no correction: every weight is 1" if beta == 0 else
                         "the full correction") + "), not a missing one." + same,
                      rule=WEIGHTS_BETA_ENDS)
    problem = wrong_amount("batches", batches, inputs["batches"], rule=SAMPLE_RETURNS)
    if problem:
        return problem
    # every slot's weight, and with the exponent's sign flipped (a common bug)
    table = reference(LESSON, "importance_weights", errors, alpha, float(beta))
    flipped = reference(LESSON, "importance_weights", errors, alpha, -float(beta))
    for batch in batches:
        ids, weights = batch["ids"], batch["weights"]
        problem = wrong_amount("weights", weights, inputs["batch_size"],
                               rule=SAMPLE_RETURNS)
        if problem:
            return problem
        if any(not (isinstance(i, int) and 0 <= i < stored) for i in ids):
            return failed("sample returned a transition that is not stored; see "
                          "test_sampling_follows_priorities.", rule=SAMPLE_RETURNS)
        want, unnormalised = _batch_weights(table, ids)
        if np.allclose(weights, want, rtol=1e-6, atol=1e-12):
            continue
        where = (f"with {said}, alpha={alpha} and {stored} transitions stored, "
                 f"sample returned weights {np.round(weights[:5], 4).tolist()}... for "
                 f"transitions {ids[:5]}...; expected {np.round(want[:5], 4).tolist()}..., "
                 "that is (N P(i))^-beta divided by the batch's largest weight.")
        if np.allclose(weights, unnormalised, rtol=1e-6):
            return failed(where + " Yours are not divided by their maximum: the "
                          "largest weight in a batch must be 1.",
                          rule=WEIGHTS_DIVIDED_BY_MAX)
        if np.allclose(weights, _batch_weights(flipped, ids)[0], rtol=1e-6):
            return failed(where + " The exponent is -beta: rare transitions get the "
                          "largest weights.", rule=WEIGHTS_FORMULA)
        if beta == 0:
            return failed(where + " With beta = 0 every weight is (N P(i))^0 = 1: "
                          "0 is a value of beta, not a missing one." + same,
                          rule=WEIGHTS_BETA_ENDS)
        if whole:
            return failed(where + same, rule=WEIGHTS_BETA_ENDS)
        return failed(where, rule=WEIGHTS_FORMULA)
    return None


def _weights_verdict(inputs, data):
    errors = inputs["td_errors"]
    stored = len(errors)
    if data.get("larger_refused"):
        return failed(f"with {stored} transitions stored, sample({inputs['batch_size']}, "
                      f"beta={inputs['betas'][1]}) failed: {data['larger_refused']}. A batch may "
                      "be larger than the buffer: transitions then come up more than once.",
                      rule=BATCH_LARGER_THAN_BUFFER)
    problem = wrong_amount("betas", data.get("samples"), len(inputs["betas"]),
                           rule=SAMPLE_RETURNS)
    if problem:
        return problem
    for beta, batches, refused in zip(inputs["betas"], data["samples"],
                                      data.get("refused") or [None] * len(inputs["betas"])):
        problem = _beta_batches_problem(inputs, beta, batches, refused)
        if problem:
            return problem
    single = data.get("single") or {}
    if data.get("single_refused"):
        return failed(f"with one transition stored, sample(3, beta={inputs['betas'][1]}) "
                      f"failed: {data['single_refused']}. A batch may be larger than the "
                      "buffer: every slice of the total then falls on the one transition.",
                      rule=BATCH_LARGER_THAN_BUFFER)
    if single.get("ids") != [0, 0, 0] or len(single.get("weights", [])) != 3 or \
            not all(_close(w, 1.0) for w in single["weights"]):
        return failed(f"with one transition stored (TD error {errors[0]}), sample(3, "
                      f"beta={inputs['betas'][1]}) should return it three times with weights "
                      f"(1 * 1)^-beta = 1; it returned transitions {single.get('ids')} with "
                      f"weights {single.get('weights')}.", rule=BATCH_LARGER_THAN_BUFFER)
    problem = wrong_amount("whole-number betas", data.get("whole_samples"), len(WHOLE_BETAS),
                           rule=SAMPLE_RETURNS)
    if problem:
        return problem
    for beta, batches, refused in zip(WHOLE_BETAS, data["whole_samples"],
                                      data.get("whole_refused") or [None] * len(WHOLE_BETAS)):
        problem = _beta_batches_problem(inputs, beta, batches, refused)
        if problem:
            return problem
    if data.get("uniform_refused"):
        return failed(f"with alpha=0 the buffer failed: {data['uniform_refused']}. alpha = 0 "
                      "is uniform replay, the other end of the scale, not an error.",
                      rule=ALPHA_ZERO_UNIFORM)
    uniform = data.get("uniform") or []
    if len(uniform) != inputs["batch_size"] or not all(_close(w, 1.0) for w in uniform):
        return failed(f"with alpha=0 every priority is p^0 = 1, so sampling is uniform and "
                      f"sample({inputs['batch_size']}, beta=1.0) should give every weight 1; "
                      f"it gave {np.round(uniform, 4).tolist()}.", rule=ALPHA_ZERO_UNIFORM)
    return passed("weights equal (N P(i))^-beta / max, for beta 0 (all 1), in between, "
                  "and 1, and are 1 for a buffer of one transition and with alpha=0.")


# --- the buffer: update_priorities ------------------------------------------------------------

def _updates_inputs(rng):
    stored = int(rng.integers(6, 15))
    rounds = []
    for _ in range(3):
        slots = rng.choice(stored, size=int(rng.integers(2, stored)), replace=False)
        errors = rng.uniform(-2, 2, size=slots.size)
        errors[0] = 0.0  # a transition that is learned perfectly keeps a priority
        rounds.append({"slots": slots.tolist(), "td_errors": errors.round(4).tolist()})
    twice = int(rng.integers(stored))
    return {"capacity": stored + int(rng.integers(0, 10)), "stored": stored,
            "alpha": round(float(rng.uniform(0.4, 0.9)), 2), "rounds": rounds,
            "seed": int(rng.integers(2**31)),
            # a buffer given epsilon: a TD error of 0 then leaves epsilon^alpha
            "epsilon": float(10.0 ** rng.integers(-4, -1)),
            # one call with a slot twice (two TD errors) among others
            "repeated": {"slots": [twice, (twice + 1) % stored, twice],
                         "td_errors": rng.uniform(0.1, 3, size=3).round(4).tolist()},
            # the arrays of one call, which the caller keeps
            "kept": {"slots": rng.choice(stored, size=3, replace=False).tolist(),
                     "td_errors": (-rng.uniform(0.1, 3, size=3)).round(4).tolist()},
            # TD errors that are whole numbers (0 among them), in each integer form
            "whole": {"slots": rng.choice(stored, size=3, replace=False).tolist(),
                      "td_errors": [0, -int(rng.integers(1, 6)), int(rng.integers(1, 6))]}}


SINGLE_PRECISION_ERRORS = (50.25, -75.5, 0.0)  # exact in float32; epsilon is not, beside them


def _updates_probe(inputs, PrioritizedReplayBuffer, SumTree):
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(buffer, range(inputs["stored"]))
    after = []
    for number, update in enumerate(inputs["rounds"]):
        if number == 1:  # slots and TD errors as Python lists, as a caller may give them
            call_student("update_priorities(slots, td_errors) with lists",
                         buffer.update_priorities, list(update["slots"]),
                         list(update["td_errors"]))
        else:
            _update_priorities(buffer, update["slots"], update["td_errors"])
        after.append(_priorities(buffer, range(inputs["stored"])))
    # alpha and epsilon by default: 0.6 and 1e-6
    default = call_student("PrioritizedReplayBuffer(capacity)", PrioritizedReplayBuffer,
                           inputs["capacity"], seed=inputs["seed"])
    _fill(default, [0, 1])
    _update_priorities(default, [0, 1], [0.5, 0.0])
    given = call_student(f"PrioritizedReplayBuffer(capacity, alpha={inputs['alpha']}, "
                         f"epsilon={inputs['epsilon']})", PrioritizedReplayBuffer,
                         inputs["capacity"], alpha=inputs["alpha"], epsilon=inputs["epsilon"],
                         seed=inputs["seed"])
    _fill(given, [0, 1])
    _update_priorities(given, [0, 1], [0.5, 0.0])
    # a network's TD errors, float32: p = |delta| + epsilon still holds to float64's
    # precision (computed in float32, epsilon is lost beside |delta| = 50.25)
    single = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(single, range(len(SINGLE_PRECISION_ERRORS)))
    call_student("update_priorities(slots, td_errors) with float32 TD errors",
                 single.update_priorities, np.arange(len(SINGLE_PRECISION_ERRORS)),
                 np.asarray(SINGLE_PRECISION_ERRORS, dtype=np.float32))
    # a batch of no slots: nothing to store, nothing to refuse
    held = _priorities(single, range(len(SINGLE_PRECISION_ERRORS)))
    empty = attempted(call_student, "update_priorities(slots, td_errors) with no slots",
                      single.update_priorities, np.zeros(0, dtype=np.int64),
                      np.zeros(0, dtype=np.float64))
    return {"after_each_round": after, "by_default": _priorities(default, [0, 1]),
            "given_epsilon": _priorities(given, [0, 1]),
            "single_precision": held,
            "no_slots": {"raised": empty["raised"]} if "raised" in empty else {
                "changed": _priorities(single, range(len(SINGLE_PRECISION_ERRORS))) != held},
            "repeated": _repeated_slots(PrioritizedReplayBuffer, inputs),
            "kept": _inputs_kept(PrioritizedReplayBuffer, inputs),
            "whole": [_whole_td_errors(PrioritizedReplayBuffer, inputs, form)
                      for form, _ in WHOLE_NUMBER_FORMS],
            "overwritten": _overwritten_since_sampled(PrioritizedReplayBuffer, inputs),
            "tree_slots": _tree_slots(PrioritizedReplayBuffer, SumTree, inputs),
            "text_alphas": [_text_alpha_priorities(PrioritizedReplayBuffer, inputs, alpha)
                            for alpha in TEXT_ALPHAS]}


# The alphas the lesson has a student try on the Blind Cliffwalk ("Try alpha = 0, 0.3, 1
# and 2"), as it writes them, past the range the other buffers are given: alpha is any
# exponent >= 0, and one above 1 prioritizes more sharply than proportional. (alpha = 0,
# uniform replay, is test_importance_weights'.)
TEXT_ALPHAS = (0.3, 1, 2)
TEXT_ALPHA_ERRORS = (0.5, -1.5)  # fed back for slots 0 and 1


def _text_alpha_priorities(PrioritizedReplayBuffer, inputs, alpha):
    """``{"priorities": [slot 0's, slot 1's]}`` of a buffer made with ``alpha`` after
    update_priorities([0, 1], TEXT_ALPHA_ERRORS), or ``{"refused": what it raised}``."""
    def priorities():
        buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], alpha,
                             inputs["seed"])
        _fill(buffer, [0, 1])
        _update_priorities(buffer, [0, 1], list(TEXT_ALPHA_ERRORS))
        return _priorities(buffer, [0, 1])

    held, refused = _attempt(priorities)
    return {"refused": refused} if refused else {"priorities": held}


def _text_alphas_problem(inputs, found):
    """A failed verdict unless each buffer of :data:`TEXT_ALPHAS` was made and holds
    (|delta| + epsilon)^alpha with its alpha; None when all do."""
    for alpha, outcome in zip(TEXT_ALPHAS, found or []):
        call = f"PrioritizedReplayBuffer({inputs['capacity']}, alpha={alpha})"
        if outcome.get("refused"):
            return failed(f"with alpha={alpha}: {outcome['refused']}. The lesson has you "
                          "try alpha = 0, 0.3, 1 and 2 on the Blind Cliffwalk: alpha is any "
                          "exponent >= 0 (above 1 it prioritizes more sharply than "
                          "proportional), so refuse only a negative alpha.",
                          rule=BUFFER_PARAMETERS)
        want = [(abs(error) + EPSILON) ** alpha for error in TEXT_ALPHA_ERRORS]
        got = outcome.get("priorities") or []
        if len(got) != 2 or not all(_close(g, w) for g, w in zip(got, want)):
            return failed(f"{call}, after update_priorities([0, 1], "
                          f"{list(TEXT_ALPHA_ERRORS)}), should hold (|delta| + 1e-6)^{alpha} "
                          f"= {want[0]:.6g} and {want[1]:.6g}; it holds {got}: use the alpha "
                          "the buffer is given, whatever its size (the lesson tries 0, 0.3, 1 "
                          "and 2).",
                          rule=BUFFER_PARAMETERS)
    return None


def _same_slots_capacity(inputs):
    """The capacity of the buffer whose tree :func:`_tree_slots` compares with a
    SumTree of it: odd and above 1, so never a power of two (a tree sized to the leaf
    count has other slots too)."""
    return 2 * inputs["stored"] + 1


def _tree_slots(PrioritizedReplayBuffer, SumTree, inputs):
    """The buffer's tree beside a SumTree(capacity) of the student's class: what get([capacity])
    does in each (slot capacity is outside the ring's slots) and the length of each nodes."""
    capacity = _same_slots_capacity(inputs)
    buffer = _new_buffer(PrioritizedReplayBuffer, capacity, inputs["alpha"], inputs["seed"])
    _fill(buffer, range(inputs["stored"]))
    _priorities(buffer, [0])  # the buffer has a tree (or the probe stops, saying so)
    tree = call_student("buffer.tree", lambda: buffer.tree)
    own = _new_tree(SumTree, capacity)

    def length(held):
        nodes = getattr(held, "nodes", None)
        return None if nodes is None else int(np.size(nodes))

    return {"buffer": {"past_the_end": outcome_of(tree.get, np.array([capacity])),
                       "length": length(tree)},
            "own": {"past_the_end": outcome_of(own.get, np.array([capacity])),
                    "length": length(own)}}


def _tree_slots_problem(inputs, slots):
    """A failed verdict when the buffer's tree has other slots than a SumTree(capacity):
    it accepts slot ``capacity`` where SumTree(capacity) refuses it, or its nodes has
    another length; None when they agree (see _tree_slots)."""
    if not slots:
        return None
    capacity = _same_slots_capacity(inputs)
    buffer, own = slots.get("buffer") or {}, slots.get("own") or {}
    differences = []
    accepted = (buffer.get("past_the_end") or {}).get("raised") is None
    if accepted and (own.get("past_the_end") or {}).get("raised") is not None:
        differences.append(f"buffer.tree.get([{capacity}]) returned normally where "
                           f"SumTree({capacity}).get([{capacity}]) raises "
                           f"{own['past_the_end']['raised']} (a buffer of capacity "
                           f"{capacity} has slots 0..{capacity - 1} only)")
    lengths = buffer.get("length"), own.get("length")
    if all(isinstance(n, int) for n in lengths) and lengths[0] != lengths[1]:
        differences.append(f"buffer.tree.nodes has length {lengths[0]} where "
                           f"SumTree({capacity}).nodes has length {lengths[1]}")
    if not differences:
        return None
    return failed(f"in a PrioritizedReplayBuffer({capacity}) holding {inputs['stored']} "
                  f"transitions, {', and '.join(differences)}: the buffer's tree is not a "
                  f"SumTree({capacity}). Priorities live in a SumTree with the same slots as "
                  "the ring, both of the capacity the buffer is given: self.tree = "
                  "SumTree(capacity) (the tree pads its leaves to a power of two itself and "
                  "keeps its inner nodes: it needs no slot of its own for them).",
                  rule=BUFFER_PARAMETERS)


OVERWRITTEN_ERRORS = (2.5, 0.75)  # fed back for slots 0 and 1, slot 0 overwritten meanwhile


def _overwritten_since_sampled(PrioritizedReplayBuffer, inputs):
    """A full buffer sampled, then given one more transition (slot 0, the oldest's, is
    overwritten), then TD errors for slots 0 and 1: the priorities they hold after it.
    update_priorities stores p^alpha for every slot given, whatever happened between."""
    capacity = inputs["stored"]
    buffer = _new_buffer(PrioritizedReplayBuffer, capacity, inputs["alpha"], inputs["seed"])
    _fill(buffer, range(capacity))
    call_student("sample(2, beta=0.4)", buffer.sample, 2, 0.4)  # its batch is not judged here
    _fill(buffer, [capacity])
    _update_priorities(buffer, [0, 1], list(OVERWRITTEN_ERRORS))
    return _priorities(buffer, [0, 1])


def _repeated_slots(PrioritizedReplayBuffer, inputs):
    """update_priorities with one slot given twice: the priorities and the total after
    it, or what the call raised."""
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(buffer, range(inputs["stored"]))
    update = inputs["repeated"]
    _, refused = _attempt(_update_priorities, buffer, update["slots"], update["td_errors"])
    if refused:
        return {"refused": refused}
    # every slot's priority, the empty ones' too: the total is the sum of them all
    return {"priorities": _priorities(buffer, range(inputs["capacity"])),
            "total": _tree_total(buffer.tree)}


# The integer forms a caller may give whole-number TD errors (and their slots) in, with the
# rule a refusal breaks: a TD error is a number, whole or not (a reward of -1 with Q-values
# still 0 gives delta = -1), and numbers may arrive as numpy scalars, as a row of a numpy
# batch holds them.
WHOLE_NUMBER_FORMS = (
    ("lists of Python ints", PRIORITY_FORMULA),
    ("int64 arrays", PRIORITY_FORMULA),
    ("lists of np.int64 scalars", NUMPY_SCALARS),
)


def _whole_number_form(form, numbers):
    """``numbers`` (Python ints) in the form :data:`WHOLE_NUMBER_FORMS` names."""
    if form == "int64 arrays":
        return np.asarray(numbers, dtype=np.int64)
    if form == "lists of np.int64 scalars":
        return [np.int64(number) for number in numbers]
    return list(numbers)


def _whole_td_errors(PrioritizedReplayBuffer, inputs, form):
    """update_priorities with whole-number TD errors (and slots) in ``form``, on a fresh
    buffer: ``{"priorities": every stored slot's}`` after it, or ``{"refused": why}``."""
    def priorities():
        buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                             inputs["seed"])
        _fill(buffer, range(inputs["stored"]))
        whole = inputs["whole"]
        call_student(f"update_priorities(slots, td_errors) with {form}",
                     buffer.update_priorities, _whole_number_form(form, whole["slots"]),
                     _whole_number_form(form, whole["td_errors"]))
        return _priorities(buffer, range(inputs["stored"]))

    held, refused = _attempt(priorities)
    return {"refused": refused} if refused else {"priorities": held}


def _whole_td_errors_problem(inputs, found):
    """A failed verdict unless update_priorities stored exactly what the same TD errors
    as floats give, in every form of :data:`WHOLE_NUMBER_FORMS`; None when it did."""
    whole, alpha, stored = inputs["whole"], inputs["alpha"], inputs["stored"]
    (want,) = reference(LESSON, "priorities_after_rounds", [whole], stored, alpha)
    floats = [float(error) for error in whole["td_errors"]]
    for (form, rule), outcome in zip(WHOLE_NUMBER_FORMS, found or []):
        call = (f"update_priorities({whole['slots']}, {whole['td_errors']}) with slots and "
                f"TD errors as {form}")
        expected = (f"the same as update_priorities({whole['slots']}, {floats}) stores: "
                    f"(|delta| + epsilon)^alpha = "
                    f"{[round(want[slot], 6) for slot in whole['slots']]} for slots "
                    f"{whole['slots']} (alpha={alpha}, epsilon={EPSILON:g}), the other slots "
                    "unchanged")
        why = ("A TD error is a number, and a whole number is one (a reward of -1 with "
               "Q-values still 0 gives delta = -1): compute p = |delta| + epsilon in "
               "float64 whatever type the TD errors come in, and refuse only NaN or "
               "infinite ones." if rule is PRIORITY_FORMULA else
               "Numbers may arrive as numpy scalars (np.int64, np.float64), as a row of a "
               "numpy batch holds them: treat them exactly as Python's numbers "
               "(np.asarray(td_errors, dtype=np.float64) takes them all).")
        if outcome.get("refused"):
            return failed(f"{call} failed: {outcome['refused']}. It should store {expected}. "
                          + why, rule=rule)
        got = outcome.get("priorities") or []
        if len(got) != stored or not all(_close(g, w) for g, w in zip(got, want)):
            return failed(f"after {call} the {stored} stored slots hold "
                          f"{[round(g, 6) if isinstance(g, float) else g for g in got]}; "
                          f"they should hold {expected}. " + why, rule=rule)
    return None


def _inputs_kept(PrioritizedReplayBuffer, inputs):
    """What the caller's arrays of slots and TD errors hold after update_priorities was
    given them (arrays where the student's code runs, as the caller keeps them)."""
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(buffer, range(inputs["stored"]))
    slots = kept_with(np.asarray(inputs["kept"]["slots"], dtype=np.int64), near=buffer)
    td_errors = kept_with(np.asarray(inputs["kept"]["td_errors"], dtype=np.float64),
                          near=buffer)
    call_student("update_priorities(slots, td_errors)", buffer.update_priorities, slots,
                 td_errors)
    return {"slots": slots.tolist(), "td_errors": td_errors.tolist()}


def _updates_verdict(inputs, data):
    alpha, rounds, stored = inputs["alpha"], inputs["rounds"], inputs["stored"]
    problem = wrong_amount("rounds", data["after_each_round"], len(rounds),
                           rule=PRIORITY_FORMULA)
    if problem:
        return problem
    expected = reference(LESSON, "priorities_after_rounds", rounds, stored, alpha)
    # the same without the power alpha (a common bug)
    unpowered = reference(LESSON, "priorities_after_rounds", rounds, stored, 1.0)
    for number, (update, got, leaves, without_alpha) in enumerate(
            zip(rounds, data["after_each_round"], expected, unpowered), 1):
        problem = wrong_amount("priorities", got, inputs["stored"], rule=PRIORITY_FORMULA)
        if problem:
            return problem
        for slot, (value, want) in enumerate(zip(got, leaves)):
            if _close(value, want):
                continue
            rule = PRIORITY_FORMULA
            errors = dict(zip(update["slots"], update["td_errors"]))
            message = (f"after update_priorities round {number}, slot {slot} holds "
                       f"{value!r} but should hold (|delta| + epsilon)^alpha = {want:.6g} "
                       f"(alpha={alpha}, epsilon={EPSILON:g})")
            error = errors.get(slot)
            if error == 0.0 and _close(value, 0.0):
                message += (": its TD error was 0, and a priority of 0 means it is never "
                            "replayed again; epsilon keeps it in play.")
                rule = EPSILON_ADDED
            elif error is not None and error < 0 and isinstance(value, float) \
                    and value != value:
                message += ": its TD error was negative; use |delta|."
            elif error is not None and error != 0.0 and _close(value, abs(error) ** alpha):
                message += ": epsilon must be added to |delta| before the power alpha."
                rule = EPSILON_ADDED
            elif error is not None and _close(value, without_alpha[slot]):
                message += ": raise p to the power alpha before storing it."
            elif error is None:
                message += ": it was not in this round's slots, so it must not change."
            return failed(message + ".", rule=rule)
    want = [(0.5 + EPSILON) ** DEFAULT_ALPHA, EPSILON ** DEFAULT_ALPHA]
    got = data.get("by_default") or []
    if len(got) != 2 or not all(_close(g, w) for g, w in zip(got, want)):
        return failed(f"PrioritizedReplayBuffer(capacity) without alpha and epsilon, after "
                      f"update_priorities([0, 1], [0.5, 0.0]), should hold (|delta| + 1e-6)^0.6 "
                      f"= {want[0]:.6g} and {want[1]:.6g} (the defaults alpha=0.6, "
                      f"epsilon=1e-6); it holds {got}.", rule=BUFFER_PARAMETERS)
    alpha, epsilon = inputs["alpha"], inputs["epsilon"]
    want = [(0.5 + epsilon) ** alpha, epsilon ** alpha]
    got = data.get("given_epsilon") or []
    if len(got) != 2 or not all(_close(g, w) for g, w in zip(got, want)):
        return failed(f"PrioritizedReplayBuffer(capacity, alpha={alpha}, epsilon={epsilon:g}), "
                      f"after update_priorities([0, 1], [0.5, 0.0]), should hold "
                      f"(|delta| + {epsilon:g})^{alpha} = {want[0]:.6g} and {want[1]:.6g}; it "
                      f"holds {got}: use the epsilon the buffer is given (self.epsilon).",
                      rule=BUFFER_PARAMETERS)
    want = [(abs(error) + EPSILON) ** alpha for error in SINGLE_PRECISION_ERRORS]
    got = data.get("single_precision") or []
    if len(got) != len(want) or not all(_close(g, w) for g, w in zip(got, want)):
        return failed(f"after update_priorities(slots, td_errors) with the float32 TD errors "
                      f"{list(SINGLE_PRECISION_ERRORS)} (as a network computes them), the "
                      f"priorities should be (|delta| + {EPSILON:g})^{alpha} = "
                      f"{[f'{w:.12g}' for w in want]}, but they are "
                      f"{[f'{g:.12g}' if isinstance(g, float) else g for g in got]}: compute "
                      "p in float64 (float32 loses epsilon beside |delta| = 50.25).",
                      rule=PRIORITY_FORMULA)
    no_slots = data.get("no_slots") or {"changed": True}
    if "raised" in no_slots or no_slots.get("changed") is not False:
        what = no_slots.get("raised") or "it changed the priorities it was not given"
        return failed(f"update_priorities with empty arrays of slots and TD errors: {what}. "
                      "A batch of no slots is a batch: there is nothing to store, and nothing "
                      "changes.", rule=PRIORITY_FORMULA)
    problem = _repeated_problem(inputs, data.get("repeated") or {})
    if problem:
        return problem
    want = [(abs(error) + EPSILON) ** inputs["alpha"] for error in OVERWRITTEN_ERRORS]
    got = data.get("overwritten") or []
    if len(got) != 2 or not all(_close(value, wanted) for value, wanted in zip(got, want)):
        return failed(f"a full PrioritizedReplayBuffer({inputs['stored']}) was sampled, then "
                      "given one more transition (into slot 0), then "
                      f"update_priorities([0, 1], {list(OVERWRITTEN_ERRORS)}): slots 0 and 1 "
                      f"hold {got}, not (|delta| + epsilon)^alpha = "
                      f"{[round(value, 6) for value in want]}. Store p^alpha for every slot "
                      "given, whatever was added since the batch was drawn.",
                      rule=PRIORITY_FORMULA)
    kept, given = data.get("kept") or {}, inputs["kept"]
    if kept.get("slots") != given["slots"] or kept.get("td_errors") != given["td_errors"]:
        return failed(f"update_priorities(slots, td_errors) changed the caller's arrays: "
                      f"slots {given['slots']} and TD errors {given['td_errors']} held "
                      f"{kept.get('slots')} and {kept.get('td_errors')} afterwards. The "
                      "caller may still need them: compute |delta| + epsilon into a new "
                      "array (np.abs(td_errors) + self.epsilon), not in place.",
                      rule=UPDATE_LEAVES_INPUTS)
    problem = _tree_slots_problem(inputs, data.get("tree_slots"))
    if problem:
        return problem
    problem = _text_alphas_problem(inputs, data.get("text_alphas"))
    if problem:
        return problem
    problem = _whole_td_errors_problem(inputs, data.get("whole"))
    if problem:
        return problem
    return passed("update_priorities stores (|delta| + epsilon)^alpha in the tree, for "
                  "negative, zero and whole-number TD errors (lists, int64 arrays, np.int64 "
                  "scalars) and a slot given twice too, leaves other "
                  "slots and its inputs alone, and uses the alpha and epsilon given (0.6 and "
                  "1e-6 by default; alpha 0.3, 1 and 2 too) and a tree with the ring's "
                  "slots.")


def _repeated_problem(inputs, repeated):
    """A failed verdict unless the slot given twice holds the priority of one of its
    two TD errors, the other slots theirs, and the total is the sum of them all."""
    update, alpha, capacity = inputs["repeated"], inputs["alpha"], inputs["capacity"]
    twice, other = update["slots"][0], update["slots"][1]
    call = (f"update_priorities({update['slots']}, {update['td_errors']}) (slot {twice} "
            "given twice)")
    if repeated.get("refused"):
        return failed(f"{call} failed: {repeated['refused']}. A batch can hold a transition "
                      "twice (its priority spans two slices), and the loop passes the batch's "
                      "slots as they are: accept a slot given twice.", rule=REPEATED_SLOTS)
    got = repeated.get("priorities") or []
    problem = wrong_amount("priorities", got, capacity, rule=REPEATED_SLOTS)
    if problem:
        return problem
    options = [(abs(update["td_errors"][i]) + EPSILON) ** alpha for i in (0, 2)]
    want_other = (abs(update["td_errors"][1]) + EPSILON) ** alpha
    total = repeated.get("total")
    summed = math.fsum(value for value in got if isinstance(value, float))
    if not any(_close(got[twice], option) for option in options) or \
            not _close(got[other], want_other) or not _close(total, summed):
        return failed(f"after {call} slot {twice} holds {got[twice]!r} (it should hold "
                      f"{options[0]:.6g} or {options[1]:.6g}), slot {other} {got[other]!r} "
                      f"(should be {want_other:.6g}) and the total is {total!r} where the "
                      f"priorities sum to {summed:.6g}.", rule=REPEATED_SLOTS)
    return None


# --- the buffer: wrap-around ------------------------------------------------------------------

WRAP_TD_ERROR = 0.01  # lowers every priority below the initial maximum before overwriting


def _wrap_inputs(rng):
    # odd and never a power of two (5, 7, ..., 15): a ring sized to the tree's leaf count,
    # or rounded up to any even size, holds more than the capacity and keeps the oldest
    capacity = int(rng.integers(2, 8)) * 2 + 1
    return {"capacity": capacity, "extra": int(rng.integers(1, capacity)),
            "alpha": round(float(rng.uniform(0.4, 0.9)), 2), "draws": 60 * capacity,
            "seed": int(rng.integers(2**31))}


# Transitions as environments give them: each sampled row must be the transition stored
# in its slot, as the course's ring stores it, dtype and value (a reward of 0.1 that
# comes back as float32's 0.10000000149, or done as 1.0, is another transition)
AS_GIVEN = {
    "Taxi-like (Python ints and bools, rewards with decimals)":
        lambda k: (k, k % 6, -1.0 + k / 10, k + 1, k % 2 == 0),
    "CartPole-like (float32 vectors, numpy scalars)":
        lambda k: (np.full(4, k / 10, dtype=np.float32), np.int64(k % 2), np.float64(1.0),
                   np.full(4, (k + 1) / 10, dtype=np.float32), np.bool_(k % 3 == 0)),
}
AS_GIVEN_STORED, AS_GIVEN_BATCH = 3, 6


def _rows_as_stored(PrioritizedReplayBuffer, inputs):
    """For each kind of :data:`AS_GIVEN` transitions: the five fields of one batch from a
    buffer that stored three of them, as dtypes and values, and the batch's slots."""
    rows = {}
    for kind, make in AS_GIVEN.items():
        buffer = _new_buffer(PrioritizedReplayBuffer, AS_GIVEN_STORED + 2, inputs["alpha"],
                             inputs["seed"])
        for k in range(AS_GIVEN_STORED):
            call_student("add(obs_t, action, reward, obs_tp1, done)", buffer.add, *make(k))
        batch = call_student(f"sample({AS_GIVEN_BATCH}, beta=0.5)", buffer.sample,
                             AS_GIVEN_BATCH, 0.5)
        fields = [np.asarray(field) for field in list(batch)]  # seven: the contract's
        rows[kind] = {"fields": [{"dtype": str(field.dtype), "values": field.tolist()}
                                 for field in fields[:5]],
                      "slots": fields[6].reshape(-1).tolist()}
    return rows


def _rows_as_stored_problem(rows):
    """Feedback when a batch's rows are not the transitions stored in its slots, as the
    course's ring stores them (dtype and value); None when they are."""
    for kind, make in AS_GIVEN.items():
        ring = NumpyRingBuffer(AS_GIVEN_STORED + 2)
        for k in range(AS_GIVEN_STORED):
            ring.add(*make(k))
        slots, fields = rows[kind]["slots"], rows[kind]["fields"]
        if len(slots) != AS_GIVEN_BATCH or len(fields) != len(FIELDS):
            return (f"sample({AS_GIVEN_BATCH}, beta=0.5) with {AS_GIVEN_STORED} {kind} "
                    f"transitions stored returned {len(slots)} slots and {len(fields)} "
                    f"fields; it returns {AS_GIVEN_BATCH} rows of the five fields.")
        if not all(isinstance(slot, int) and 0 <= slot < AS_GIVEN_STORED for slot in slots):
            continue  # a slot that holds nothing: test_no_empty_or_out_of_range_samples's
        for name, got, want in zip(FIELDS, fields, ring[np.asarray(slots, dtype=np.int64)]):
            values = np.asarray(got["values"], dtype=want.dtype)
            if got["dtype"] != str(want.dtype) or not np.array_equal(values, want):
                shown = np.asarray(got["values"]).reshape(-1)[:3].tolist()
                return (f"with {AS_GIVEN_STORED} {kind} transitions stored, sample returned "
                        f"{name} as {got['dtype']} {shown}, but the transitions stored in "
                        f"those slots hold {want.dtype} {want.reshape(-1)[:3].tolist()}: "
                        "return each row as the transition stored in its slot (no "
                        "conversion on the way in or out).")
    return None


def _wrap_probe(inputs, PrioritizedReplayBuffer):
    capacity, extra = inputs["capacity"], inputs["extra"]
    buffer = _new_buffer(PrioritizedReplayBuffer, capacity, inputs["alpha"], inputs["seed"])
    _fill(buffer, range(capacity))
    # every slot of a full buffer holds a transition, the ones from the next write on too
    _, refused = _attempt(_update_priorities, buffer, list(range(capacity)),
                          [WRAP_TD_ERROR] * capacity)
    if refused:
        return {"length": call_student("len(buffer)", len, buffer), "refused": refused,
                "full_after": capacity}
    _fill(buffer, range(capacity, capacity + extra))
    priorities = _priorities(buffer, range(capacity))
    # equal priorities from here on, so every stored transition is as likely to come up
    _, refused = _attempt(_update_priorities, buffer, list(range(capacity)), [1.0] * capacity)
    if refused:
        return {"length": call_student("len(buffer)", len, buffer), "refused": refused,
                "full_after": capacity + extra}
    ids = _sampled_ids(buffer, 32, inputs["draws"])
    # the smallest buffer: one slot, overwritten by every add
    one = _new_buffer(PrioritizedReplayBuffer, 1, inputs["alpha"], inputs["seed"])
    _fill(one, [0, 1])
    return {"length": call_student("len(buffer)", len, buffer), "priorities": priorities,
            "ids": ids,
            "one": _sample(one, 3, 0.5), "one_length": call_student("len(buffer)", len, one),
            "as_stored": _rows_as_stored(PrioritizedReplayBuffer, inputs)}


def _wrap_verdict(inputs, data):
    capacity, extra, alpha = inputs["capacity"], inputs["extra"], inputs["alpha"]
    situation = (f"after adding transitions 0..{capacity + extra - 1} to a "
                 f"PrioritizedReplayBuffer({capacity})")
    kept = set(range(extra, capacity + extra))
    stale = sorted(i for i in set(data.get("ids") or []) if 0 <= i < extra)
    if stale and isinstance(data["length"], int) and data["length"] > capacity:
        return failed(f"{situation}, len(buffer) is {data['length']} and sample returned "
                      f"transition {stale[0]}, which the buffer should have overwritten: "
                      f"it holds more than the {capacity} transitions it was made for. The "
                      f"ring holds exactly `capacity` transitions (NumpyRingBuffer(capacity), "
                      f"not the tree's {1 << (capacity - 1).bit_length()} leaves or any size "
                      f"rounded up), and once it has {capacity} it overwrites the oldest.",
                      rule=OVERWRITES_OLDEST)
    if data["length"] != capacity:
        return failed(f"{situation}, len(buffer) is {data['length']}; it should stay "
                      f"{capacity}: it counts the transitions held now, not every one "
                      "added.", rule=LEN_AFTER_WRAP)
    if data.get("refused"):
        return failed(f"after adding transitions 0..{data.get('full_after', 0) - 1} to a "
                      f"PrioritizedReplayBuffer({capacity}), update_priorities(slots "
                      f"0..{capacity - 1}, ...) failed: {data['refused']}. Once the buffer is "
                      "full every slot holds a transition, also those from the next one to be "
                      "overwritten on: accept slots in [0, len(self)).", rule=LEN_AFTER_WRAP)
    seen = set(data["ids"])
    stale = sorted(i for i in seen if i not in kept)
    if stale:
        what = ("rows whose fields do not belong together" if stale[0] == -1
                else f"transition {stale[0]}")
        return failed(f"{situation}, the buffer should hold {extra}..{capacity + extra - 1}, "
                      f"but sample returned {what}. When full, overwrite the oldest slot.",
                      rule=SAMPLE_RETURNS if stale[0] == -1 else OVERWRITES_OLDEST)
    missing = sorted(kept - seen)
    if missing:
        return failed(f"{situation}, transition {missing[0]} never came up in "
                      f"{len(data['ids'])} draws: is it stored?", rule=OVERWRITES_OLDEST)
    problem = wrong_amount("priorities", data["priorities"], capacity,
                           rule=OVERWRITTEN_SLOT_PRIORITY)
    if problem:
        return problem
    want = reference(LESSON, "new_transition_priority", [[WRAP_TD_ERROR] * capacity], alpha)
    for slot in range(extra):  # the overwritten slots
        got = data["priorities"][slot]
        if not _close(got, want):
            return failed(f"{situation}, slot {slot} holds the new transition "
                          f"{capacity + slot}, whose priority should be the maximal one "
                          f"(1^alpha = 1), but it is {got!r}: an overwritten slot must not "
                          "keep its old transition's priority.", rule=OVERWRITTEN_SLOT_PRIORITY)
    one = data.get("one") or {}
    if data.get("one_length") != 1:
        return failed("after adding transitions 0 and 1 to a PrioritizedReplayBuffer(1), "
                      f"len(buffer) should be 1; it is {data.get('one_length')}.",
                      rule=LEN_AFTER_WRAP)
    if one.get("ids") != [1, 1, 1] or \
            len(one.get("weights", [])) != 3 or not all(_close(w, 1.0) for w in one["weights"]):
        return failed("after adding transitions 0 and 1 to a PrioritizedReplayBuffer(1), "
                      f"sample(3, 0.5) should return transition 1 three times with weight 1; "
                      f"it returned {one.get('ids')} with weights {one.get('weights')}.",
                      rule=OVERWRITES_OLDEST if one.get("ids") != [1, 1, 1]
                      else BATCH_LARGER_THAN_BUFFER)
    problem = _rows_as_stored_problem(data["as_stored"])
    if problem:
        return failed(problem, rule=SAMPLE_RETURNS)
    return passed(f"{situation}, the newest {capacity} are stored and the overwritten slots "
                  "got the maximal priority; a buffer of capacity 1 keeps the newest; rows "
                  "come back as stored, dtype and value.")


# --- the buffer: never an empty slot or a slot out of range ------------------------------------

class TopOfTheRange(np.random.Generator):
    """numpy's generator, except that ``random`` and ``uniform`` return the largest value
    below the top of their range: every stratum's mass at the top of its slice, the
    last one a hair below the total (where floating-point sums go astray)."""

    # The grader keeps it and serves the student's buffer its draws across the boundary.
    __lending__ = Served(remote=tuple(GENERATOR_LIMITS), limits=GENERATOR_LIMITS)

    draws = 0  # calls of random and uniform: a buffer that kept the generator it was
    # built with (a bound method looked up once) never draws from this one

    def random(self, size=None, dtype=np.float64, out=None):
        self.draws += 1
        return np.full(() if size is None else size, np.nextafter(1.0, 0.0))[()]

    def uniform(self, low=0.0, high=1.0, size=None):
        self.draws += 1
        low, high = np.broadcast_arrays(np.asarray(low, dtype=np.float64),
                                        np.asarray(high, dtype=np.float64))
        top = np.nextafter(high, low)
        return (top if size is None else np.broadcast_to(top, size).copy())[()]


# With these TD errors (alpha 0.6, found by search) in a PrioritizedReplayBuffer(28) holding
# 14 transitions, the top mass of sample(7) searched down a float64 sum tree runs past the
# 14 filled slots into empty ones: the slots must be clamped to len(self) - 1.
TOP_BUFFER = {"capacity": 28, "batch_size": 7, "alpha": 0.6,
              "td_errors": [2.8492, 0.0027, 0.0002, 0.2851, 0.009, 0.0256, 0.0005, 1.4086,
                            19.918, 2.8544, 0.0007, 0.0043, 0.0015, 87.8793]}


def _range_inputs(rng):
    capacity = int(rng.integers(60, 500)) * 2 + 1
    return {"capacity": capacity, "stored": int(rng.integers(capacity // 4, capacity - 1)),
            "rounds": 40, "batch_size": 256, "seed": int(rng.integers(2**31)),
            "top": TOP_BUFFER}


def _range_probe(inputs, PrioritizedReplayBuffer):
    rng = np.random.default_rng(inputs["seed"])
    stored = inputs["stored"]
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], 0.6, inputs["seed"])
    _fill(buffer, range(stored))
    slots, ids, weights = [], [], []
    for _ in range(inputs["rounds"]):
        chosen = rng.choice(stored, size=min(stored, 64), replace=False)
        _update_priorities(buffer, chosen, 10.0 ** rng.uniform(-9, 4, size=chosen.size))
        batch = _sample(buffer, inputs["batch_size"], 1.0)
        slots.extend(batch["slots"])
        ids.extend(batch["ids"])
        weights.extend(batch["weights"])
    # a batch the learner keeps, read before and after the buffer samples again
    kept = call_student(f"sample({inputs['batch_size']}, beta=1.0)", result_by_reference,
                        buffer.sample, inputs["batch_size"], 1.0)
    kept_before = _batch_data(kept, inputs["batch_size"])
    _sample(buffer, inputs["batch_size"], 1.0)
    kept_after = _batch_data(kept, inputs["batch_size"])
    top = inputs["top"]
    buffer = _new_buffer(PrioritizedReplayBuffer, top["capacity"], top["alpha"], inputs["seed"])
    stored = len(top["td_errors"])
    _fill(buffer, range(stored))
    _update_priorities(buffer, list(range(stored)), top["td_errors"])
    generator = TopOfTheRange(np.random.PCG64(inputs["seed"]))
    lend_to(buffer, "rng", generator)  # its generator, swapped in after construction
    at_the_top = _sample(buffer, top["batch_size"], 1.0)
    return {"slots": slots, "ids": ids, "weights": weights, "top": at_the_top,
            "swapped_generator_draws": generator.draws, "kept": [kept_before, kept_after]}


def _range_verdict(inputs, data):
    stored, capacity = inputs["stored"], inputs["capacity"]
    draws = inputs["rounds"] * inputs["batch_size"]
    problem = (wrong_amount("slots", data["slots"], draws, rule=SAMPLE_RETURNS)
               or wrong_amount("transitions", data["ids"], draws, rule=SAMPLE_RETURNS)
               or wrong_amount("weights", data["weights"], draws, rule=SAMPLE_RETURNS))
    if problem:
        return problem
    situation = (f"with {stored} transitions in a PrioritizedReplayBuffer({capacity}) and "
                 f"priorities from 1e-9 to 1e4")
    bad_slots = [s for s in data["slots"] if not (isinstance(s, int) and 0 <= s < stored)]
    if bad_slots:
        return failed(f"{situation}, sample returned slot {bad_slots[0]}, which holds "
                      f"nothing: only slots 0..{stored - 1} are filled. Draw masses from "
                      "[0, total), keep empty slots at priority 0, and clamp slots to "
                      "len(self) - 1.", rule=SAMPLE_FILLED_SLOTS)
    if any(i != s for i, s in zip(data["ids"], data["slots"])):
        return failed(f"{situation}, the transitions sample returned are not the ones in the "
                      "slots it returned: read the storage at the slots you drew.",
                      rule=SAMPLE_RETURNS)
    if not all(isinstance(w, float) and 0 < w <= 1 for w in data["weights"]):
        bad = next(w for w in data["weights"] if not (isinstance(w, float) and 0 < w <= 1))
        return failed(f"{situation}, sample returned a weight of {bad!r}; weights lie in "
                      "(0, 1].", rule=WEIGHTS_DIVIDED_BY_MAX)
    kept_before, kept_after = data.get("kept") or [None, None]
    if kept_before != kept_after:
        changed = next(name for name in ("ids", "weights", "slots")
                       if kept_before[name] != kept_after[name])
        return failed(f"a batch that sample({inputs['batch_size']}, beta=1.0) returned "
                      f"changed its {changed} when sample was called again: each call must "
                      "hand out arrays of its own, never refill ones it returned before (a "
                      "learner keeps batches).", rule=BATCH_STAYS_ITS_OWN)
    top, at_the_top = inputs["top"], data.get("top") or {}
    stored = len(top["td_errors"])
    if not data.get("swapped_generator_draws"):
        return failed("after a generator of the test's own was put in self.rng, sample drew "
                      "nothing from it: it still draws from the generator the buffer was "
                      "built with. Look self.rng up at every draw (self.rng.random(...)), "
                      "never keep its methods or a copy of it.", rule=OWN_GENERATOR)
    slots = at_the_top.get("slots", [])
    problem = wrong_amount("slots of the batch drawn at the top", slots, top["batch_size"],
                           rule=SAMPLE_RETURNS)
    if problem:
        return problem
    if any(not (isinstance(s, int) and 0 <= s < stored) for s in slots) or \
            at_the_top.get("ids") != slots:
        return failed(f"with TD errors {top['td_errors']} for the {stored} transitions of a "
                      f"PrioritizedReplayBuffer({top['capacity']}, alpha={top['alpha']}) and "
                      f"every uniform draw of self.rng at the top of its range (the last mass "
                      f"a hair below the total), sample({top['batch_size']}) returned slots "
                      f"{slots} holding transitions {at_the_top.get('ids')}. Summed in "
                      "floating point, a search for a mass that close to the total can run "
                      f"past the last filled slot: clamp slots to len(self) - 1 = {stored - 1}.",
                      rule=SAMPLE_FILLED_SLOTS)
    return passed(f"{situation}, {draws} draws all came from filled slots, with weights in "
                  "(0, 1], and so did a batch drawn at the very top of the total.")
