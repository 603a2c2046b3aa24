"""Checks for lesson 03: the sum tree, prioritized replay, and PER on the Blind Cliffwalk."""

import math

import numpy as np

from checks.expected import expected as reference
from checks.framework import (Callee, Check, LessonChecks, ProbeError, call_later, call_student,
                              call_student_repeatedly,
                              comparison, failed, lend_to, outcome_of, passed,
                              value_error_problem, wrong_amount)
from checks.lending import STAND_IN_BATCH, STAND_IN_PRIORITIES, AtMost, Served, mirrored
from checks.lesson01_qlearning import AGENT
from checks.lesson02_replay_buffer import transition, transition_ids
from checks.records import Record
from checks.statistics import FALSE_FAILURE_RATE, chi_square_pvalue, describe_counts, fits
from checks.stub_envs import (call_training_loop, counting_buffer, episode_cases,
                              episode_ends, episode_ends_problem, lent_corridor)

LESSON = "03_prioritized_replay"
EPSILON = 1e-6  # the buffer's default: p = |delta| + epsilon
DEFAULT_ALPHA = 0.6  # the signature's default
INITIAL_MAX_PRIORITY = 1.0


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
    call_student("tree.update(slots, priorities)", tree.update,
                 np.asarray(slots, dtype=np.int64), np.asarray(priorities, dtype=np.float64))


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


# --- the sum tree: totals ----------------------------------------------------------------

def _totals_inputs(rng):
    power = 2 ** int(rng.integers(7, 12))
    return {"capacity": power + int(rng.integers(1, power)),  # never a power of two
            "batches": 300, "seed": int(rng.integers(2**31))}


def update_batches(inputs):
    """The batches of (slots, priorities) both the probe and the verdict replay: slots
    repeat within a batch (with one priority each) and share parents; priorities span
    twelve orders of magnitude, where float32 sums drift."""
    rng = np.random.default_rng(inputs["seed"])
    batches = []
    for _ in range(inputs["batches"]):
        size = int(rng.integers(1, 65))
        base = int(rng.integers(inputs["capacity"]))
        slots = (base + rng.integers(0, 8, size=size)) % inputs["capacity"]  # neighbours
        values = np.exp(rng.uniform(-14, 14, size=inputs["capacity"]))
        batches.append((slots, values[slots]))  # a repeated slot gets one priority
    return batches


def _totals_probe(inputs, SumTree):
    tree = _new_tree(SumTree, inputs["capacity"])
    totals = []
    for slots, priorities in update_batches(inputs):
        _tree_update(tree, slots, priorities)
        totals.append(_tree_total(tree))
    # the layout the lesson prescribes: one float64 array `nodes` of length 2L, also
    # when the capacity is itself a power of two (then L = capacity)
    exact = _new_tree(SumTree, LAYOUT_POWER)
    exact_nodes = getattr(exact, "nodes", None)
    nodes = getattr(tree, "nodes", None)
    layout = (None if nodes is None else
              {"length": int(np.size(nodes)), "dtype": str(np.asarray(nodes).dtype),
               "leaves": np.asarray(nodes, dtype=np.float64).reshape(-1)[
                   _power_of_two(inputs["capacity"]):][:inputs["capacity"]].tolist(),
               "root": float(np.asarray(nodes, dtype=np.float64).reshape(-1)[1])})
    return {"totals": totals, "leaves": _tree_get(tree, list(range(inputs["capacity"]))),
            "layout": layout, "power_length": None if exact_nodes is None
            else int(np.size(exact_nodes))}


LAYOUT_POWER = 16


def _power_of_two(capacity):
    """L, the smallest power of two >= capacity: the number of leaves."""
    return 1 << (capacity - 1).bit_length()


def _totals_verdict(inputs, data):
    batches = inputs["batches"]
    problem = (wrong_amount("totals", data["totals"], batches)
               or wrong_amount("priorities from get()", data["leaves"], inputs["capacity"]))
    if problem:
        return problem
    expected = reference(LESSON, "tree_totals", inputs)
    for number, (got, want) in enumerate(zip(data["totals"], expected["totals"]), 1):
        if not _close(got, want):
            error = abs(got - want) / want if isinstance(got, (int, float)) else float("nan")
            return failed(
                f"in a SumTree({inputs['capacity']}), after {number} batch(es) of updates "
                f"total is {got!r} but the priorities it holds sum to {want!r} (relative "
                f"error {error:.1e}; float64 sums stay within 1e-9). "
                + ("A float32 tree drifts like this: keep the nodes in float64."
                   if 1e-9 < error < 1e-5 else
                   "When one batch updates two slots under the same parent, or one slot "
                   "twice, `nodes[parents] += change` applies only one change per node: "
                   "recompute each parent from its two children instead."))
    for slot, (got, want) in enumerate(zip(data["leaves"], expected["leaves"])):
        if got != want:
            return failed(f"tree.get([{slot}]) returned {got!r} but the last update set it to "
                          f"{want!r}: store priorities exactly (float64).")
    capacity, leaves = inputs["capacity"], _power_of_two(inputs["capacity"])
    layout = data.get("layout")
    want = f"a float64 array of length 2L = {2 * leaves}"
    if not layout:
        return failed(f"SumTree({capacity}) has no attribute `nodes`: keep the tree in one "
                      f"array, {want}, as the lesson's Layout paragraph says.")
    if layout["length"] != 2 * leaves or layout["dtype"] != "float64":
        return failed(f"SumTree({capacity}).nodes is a {layout['dtype']} array of length "
                      f"{layout['length']}; the layout is {want} (L = {leaves}, the smallest "
                      f"power of two >= {capacity}).")
    if layout["leaves"] != expected["leaves"] or not _close(layout["root"], data["totals"][-1]):
        return failed(f"in SumTree({capacity}).nodes, slot i should be node L + i = {leaves} "
                      "+ i and the root node 1 (the total), but the priorities set by update "
                      "are not there.")
    if data.get("power_length") != 2 * LAYOUT_POWER:
        return failed(f"SumTree({LAYOUT_POWER}).nodes has length {data.get('power_length')}; "
                      f"with a capacity that is a power of two, L = {LAYOUT_POWER} and nodes "
                      f"has length 2L = {2 * LAYOUT_POWER}.")
    return passed(f"the total matches the sum of {inputs['capacity']} priorities after "
                  f"{batches} batches of updates spanning 28 orders of magnitude, "
                  "repeated slots included; nodes has the lesson's layout.")


# --- the sum tree: prefix-sum search -------------------------------------------------------

# Floating-point mass at the very top of the tree: with these priorities (found by search)
# a float64 sum tree laid out as the class docstring says sums its nodes so that a mass
# just below the total, searched top-down, runs past the last slot into the padding
# leaves (to slot 15 of 16): only clamping the slot to capacity - 1 keeps it in range.
TOP_OF_THE_TREE = [0.000934, 0.000973, 0.010482, 0.032462, 0.00067, 1e-06, 0.763872, 8e-06,
                   6.827131]
# the same with an even capacity (22: the search runs to slot 31 of 32)
TOP_OF_THE_EVEN_TREE = [0.039947, 5.5e-05, 4.723152, 0.00069, 1.460463, 0.006306, 0.003843,
                        0.49863, 0.000533, 1.281473, 0.003625, 0.840088, 0.380518, 36.526451,
                        0.001858, 0.000619, 90.915626, 0.013514, 0.002227, 0.403507, 0.0001,
                        45.920424]


def _search_inputs(rng):
    cases = []
    for capacity in (int(rng.integers(3, 8)) * 2 + 1, int(rng.integers(20, 60)),
                     int(rng.integers(100, 250))):
        priorities = rng.integers(0, 7, size=capacity).astype(float)
        priorities[rng.random(capacity) < 0.2] = 0.0  # runs of empty slots
        priorities[int(rng.integers(capacity))] = float(rng.integers(1, 7))
        if rng.random() < 0.5:
            priorities[-1] = 0.0  # an empty last slot: where clamping must not land
        cumulative = np.cumsum(priorities)
        total = float(cumulative[-1])
        masses = [0.0, *cumulative[:-1].tolist(),  # every boundary: belongs to the next slot
                  *(rng.random(40) * total).tolist(),
                  -1.0, total, total + 3.0, float(np.nextafter(total, 0.0))]
        cases.append({"priorities": priorities.tolist(), "masses": masses})
    # the first case scaled by 1/64 (exact in binary): a total below 1, where "the largest
    # float below the total" is not the largest float below 1
    small = cases[0]
    cases.append({"priorities": [p / 64 for p in small["priorities"]],
                  "masses": [m / 64 for m in small["masses"]]})
    for top in (TOP_OF_THE_TREE, TOP_OF_THE_EVEN_TREE):
        total = math.fsum(top)
        cases.append({"priorities": top,
                      "masses": [total, float(np.nextafter(total, 0.0)), total * (1 - 1e-16),
                                 float(np.nextafter(np.nextafter(total, 0.0), 0.0)),
                                 2 * total]})
    return {"cases": cases}


def _search_probe(inputs, SumTree):
    found = []
    for case in inputs["cases"]:
        tree = _new_tree(SumTree, len(case["priorities"]))
        _tree_update(tree, list(range(len(case["priorities"]))), case["priorities"])
        found.append(_tree_find(tree, case["masses"]))
    return {"found": found}


def _search_verdict(inputs, data):
    problem = wrong_amount("searches", data["found"], len(inputs["cases"]))
    if problem:
        return problem
    for case, found in zip(inputs["cases"], data["found"]):
        priorities, masses = case["priorities"], case["masses"]
        problem = wrong_amount("slots", found, len(masses))
        if problem:
            return problem
        expected = reference(LESSON, "brute_force_prefix_search", priorities, masses)
        cumulative = np.concatenate([[0.0], np.cumsum(priorities)])  # for the feedback only
        total = cumulative[-1]
        for mass, got, want in zip(masses, found, expected):
            if got == want:
                continue
            shown = ", ".join(f"{p:g}" for p in priorities[:12])
            more = ", ..." if len(priorities) > 12 else ""
            where = (f"in a SumTree({len(priorities)}) holding priorities [{shown}{more}] "
                     f"(total {total:g}), find_prefix_sum({mass:g}) returned slot {got}")
            if not isinstance(got, int) or not 0 <= got < len(priorities):
                hint = ("which does not exist. Masses at or past the total must be clamped "
                        "to just below it, and slots to capacity - 1."
                        if mass >= total else "which does not exist.")
                return failed(f"{where}, {hint}")
            if priorities[got] == 0:
                return failed(f"{where}, whose priority is 0: the search must never land on "
                              f"an empty slot. The mass belongs to slot {want}. Clamp masses "
                              "into [0, total), and never go right into an empty subtree.")
            hint = ""
            if mass in cumulative[1:-1]:
                hint = (" A mass equal to a running sum p_0 + ... + p_i belongs to the next "
                        "slot: go right when mass >= the left child's sum.")
            elif mass < 0 or mass >= total:
                hint = " Masses outside [0, total) must be clamped into it first."
            return failed(f"{where} (priority {priorities[got]:g}, covering "
                          f"[{cumulative[got]:g}, {cumulative[got + 1]:g})), but the mass "
                          f"lies in slot {want}'s interval [{cumulative[want]:g}, "
                          f"{cumulative[want + 1]:g}).{hint}")
    sizes = ", ".join(str(len(case["priorities"])) for case in inputs["cases"])
    return passed(f"every search agrees with a brute-force running sum, boundaries, empty "
                  f"slots and out-of-range masses included (capacities {sizes}).")


# --- the buffer: new transitions get the maximal priority ---------------------------------

def _max_priority_inputs(rng):
    first = int(rng.integers(3, 8))
    raised = rng.choice(first, size=2, replace=False).tolist()
    return {"capacity": int(rng.integers(20, 60)), "first": first,
            "alpha": round(float(rng.uniform(0.4, 0.9)), 2),
            "raised": raised, "raised_errors": [float(rng.uniform(2, 6)),
                                                -float(rng.uniform(2, 6))],
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
    _update_priorities(buffer, list(range(first + 1)), inputs["lowered_errors"])
    _fill(buffer, [first + 1])
    after_lowering = _priorities(buffer, [first + 1])[0]
    return {"initial": initial, "after_raise": after_raise, "after_lowering": after_lowering}


def _max_priority_verdict(inputs, data):
    alpha = inputs["alpha"]
    problem = wrong_amount("priorities", data["initial"], inputs["first"])
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
                      f"{data['initial']}. Start self.max_priority at 1.")
    for (moment, got, _), want, without_alpha in zip(moments, wants, unpowered):
        if not _close(got, want):
            reason = ""
            if _close(got, 0.0):
                reason = " A transition at priority 0 is never sampled."
            elif _close(got, without_alpha):
                reason = " Store max_priority ** alpha, as update_priorities does."
            return failed(f"{moment}, a new transition should get the largest priority "
                          f"given so far, (|delta| + epsilon)^alpha = {want:.6g} "
                          f"(alpha={alpha}), but it got {got!r}.{reason}")
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
    problem = wrong_amount("sampled transitions", data["ids"], inputs["draws"])
    if problem:
        return problem
    strays = [i for i in data["ids"] if not (isinstance(i, int) and 0 <= i < stored)]
    if strays:
        return failed(f"with transitions 0..{stored - 1} stored, sample returned "
                      f"{'a row whose fields do not belong together' if -1 in strays else f'transition {strays[0]}'}: "
                      "return the transitions stored in the slots you drew.")
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
                      "priorities to the power alpha before storing them. " + detail)
    if chi_square_pvalue(counts, np.full(stored, 1 / stored)) >= FALSE_FAILURE_RATE:
        return failed(situation + "your buffer samples uniformly: the priorities set by "
                      "update_priorities do not change what is drawn. " + detail)
    return failed(situation + "the draws do not follow P(i) = p_i^alpha / sum p^alpha: "
                  + detail + ".")


# --- the buffer: stratified sampling ------------------------------------------------------

def _stratified_inputs(rng):
    return {"batch_sizes": [int(rng.integers(4, 12)), int(rng.integers(20, 60))],
            "batches": 5, "pair_batch": int(rng.integers(8, 17)), "pair_batches": 40,
            "seed": int(rng.integers(2**31))}


def _stratified_probe(inputs, PrioritizedReplayBuffer):
    batches = []
    for size in inputs["batch_sizes"]:
        buffer = _new_buffer(PrioritizedReplayBuffer, size + 7, 0.6, inputs["seed"])
        _fill(buffer, range(size))
        batches.append([batch["ids"] for batch in _samples(buffer, size, 0.4, inputs["batches"])])
    # twice as many transitions as the batch: each slice of the total holds two of them,
    # and the draws in different slices must be independent of each other
    size = inputs["pair_batch"]
    buffer = _new_buffer(PrioritizedReplayBuffer, 2 * size + 3, 0.6, inputs["seed"])
    _fill(buffer, range(2 * size))
    pairs = [batch["ids"] for batch in _samples(buffer, size, 0.4, inputs["pair_batches"])]
    return {"batches": batches, "pairs": pairs}


def _stratified_verdict(inputs, data):
    from scipy import stats  # here: scipy takes a second to import
    problem = wrong_amount("batch sizes", data["batches"], len(inputs["batch_sizes"]))
    if problem:
        return problem
    for size, batches in zip(inputs["batch_sizes"], data["batches"]):
        problem = wrong_amount("batches", batches, inputs["batches"])
        if problem:
            return problem
        for ids in batches:
            if sorted(ids) != list(range(size)):
                repeats = len(ids) - len(set(ids))
                return failed(f"with {size} transitions of equal priority, sample({size}) "
                              f"should draw one mass from each of {size} equal slices of the "
                              f"total, which picks every transition exactly once; a batch held "
                              f"{repeats} repeat(s). Draw mass k uniformly from "
                              "[k total / batch_size, (k + 1) total / batch_size).")
    size, count = inputs["pair_batch"], inputs["pair_batches"]
    problem = wrong_amount("batches from the buffer of two transitions per slice",
                           data.get("pairs", []), count)
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
                          f"transitions {sorted(ids)}.")
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
                      "for each slice (rng.random(batch_size)), not one for the whole batch.")
    return passed("sampling is stratified: one draw from each equal slice of the total, "
                  "independently in each slice (binomial test on neighbouring slices, "
                  f"rejection rate {FALSE_FAILURE_RATE:g}).")


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
    return {"samples": [_samples(buffer, inputs["batch_size"], beta, inputs["batches"])
                        for beta in inputs["betas"]],
            "single": _sample(single, 3, inputs["betas"][1]), "uniform": _uniform_weights(
                PrioritizedReplayBuffer, inputs)}


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


def _weights_verdict(inputs, data):
    errors, alpha = inputs["td_errors"], inputs["alpha"]
    stored = len(errors)
    problem = wrong_amount("betas", data["samples"], len(inputs["betas"]))
    if problem:
        return problem
    for beta, batches in zip(inputs["betas"], data["samples"]):
        problem = wrong_amount("batches", batches, inputs["batches"])
        if problem:
            return problem
        # every slot's weight, and with the exponent's sign flipped (a common bug)
        table = reference(LESSON, "importance_weights", errors, alpha, beta)
        flipped = reference(LESSON, "importance_weights", errors, alpha, -beta)
        for batch in batches:
            ids, weights = batch["ids"], batch["weights"]
            problem = wrong_amount("weights", weights, inputs["batch_size"])
            if problem:
                return problem
            if any(not (isinstance(i, int) and 0 <= i < stored) for i in ids):
                return failed("sample returned a transition that is not stored; see "
                              "test_sampling_follows_priorities.")
            want, unnormalised = _batch_weights(table, ids)
            if np.allclose(weights, want, rtol=1e-6, atol=1e-12):
                continue
            where = (f"with beta={beta}, alpha={alpha} and {stored} transitions stored, "
                     f"sample returned weights {np.round(weights[:5], 4).tolist()}... for "
                     f"transitions {ids[:5]}...; expected {np.round(want[:5], 4).tolist()}..., "
                     "that is (N P(i))^-beta divided by the batch's largest weight.")
            if np.allclose(weights, unnormalised, rtol=1e-6):
                return failed(where + " Yours are not divided by their maximum: the "
                              "largest weight in a batch must be 1.")
            if np.allclose(weights, _batch_weights(flipped, ids)[0], rtol=1e-6):
                return failed(where + " The exponent is -beta: rare transitions get the "
                              "largest weights.")
            return failed(where)
    single = data.get("single") or {}
    if single.get("ids") != [0, 0, 0] or len(single.get("weights", [])) != 3 or \
            not all(_close(w, 1.0) for w in single["weights"]):
        return failed(f"with one transition stored (TD error {errors[0]}), sample(3, "
                      f"beta={inputs['betas'][1]}) should return it three times with weights "
                      f"(1 * 1)^-beta = 1; it returned transitions {single.get('ids')} with "
                      f"weights {single.get('weights')}.")
    uniform = data.get("uniform") or []
    if len(uniform) != inputs["batch_size"] or not all(_close(w, 1.0) for w in uniform):
        return failed(f"with alpha=0 every priority is p^0 = 1, so sampling is uniform and "
                      f"sample({inputs['batch_size']}, beta=1.0) should give every weight 1; "
                      f"it gave {np.round(uniform, 4).tolist()}.")
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
    return {"capacity": stored + int(rng.integers(0, 10)), "stored": stored,
            "alpha": round(float(rng.uniform(0.4, 0.9)), 2), "rounds": rounds,
            "seed": int(rng.integers(2**31))}


def _updates_probe(inputs, PrioritizedReplayBuffer):
    buffer = _new_buffer(PrioritizedReplayBuffer, inputs["capacity"], inputs["alpha"],
                         inputs["seed"])
    _fill(buffer, range(inputs["stored"]))
    after = []
    for update in inputs["rounds"]:
        _update_priorities(buffer, update["slots"], update["td_errors"])
        after.append(_priorities(buffer, range(inputs["stored"])))
    # alpha and epsilon by default: 0.6 and 1e-6
    default = call_student("PrioritizedReplayBuffer(capacity)", PrioritizedReplayBuffer,
                           inputs["capacity"], seed=inputs["seed"])
    _fill(default, [0, 1])
    _update_priorities(default, [0, 1], [0.5, 0.0])
    return {"after_each_round": after, "by_default": _priorities(default, [0, 1])}


def _updates_verdict(inputs, data):
    alpha, rounds, stored = inputs["alpha"], inputs["rounds"], inputs["stored"]
    problem = wrong_amount("rounds", data["after_each_round"], len(rounds))
    if problem:
        return problem
    expected = reference(LESSON, "priorities_after_rounds", rounds, stored, alpha)
    # the same without the power alpha (a common bug)
    unpowered = reference(LESSON, "priorities_after_rounds", rounds, stored, 1.0)
    for number, (update, got, leaves, without_alpha) in enumerate(
            zip(rounds, data["after_each_round"], expected, unpowered), 1):
        problem = wrong_amount("priorities", got, inputs["stored"])
        if problem:
            return problem
        for slot, (value, want) in enumerate(zip(got, leaves)):
            if _close(value, want):
                continue
            errors = dict(zip(update["slots"], update["td_errors"]))
            message = (f"after update_priorities round {number}, slot {slot} holds "
                       f"{value!r} but should hold (|delta| + epsilon)^alpha = {want:.6g} "
                       f"(alpha={alpha}, epsilon={EPSILON:g})")
            error = errors.get(slot)
            if error == 0.0 and _close(value, 0.0):
                message += (": its TD error was 0, and a priority of 0 means it is never "
                            "replayed again; epsilon keeps it in play.")
            elif error is not None and error < 0 and isinstance(value, float) \
                    and value != value:
                message += ": its TD error was negative; use |delta|."
            elif error is not None and _close(value, without_alpha[slot]):
                message += ": raise p to the power alpha before storing it."
            elif error is None:
                message += ": it was not in this round's slots, so it must not change."
            return failed(message + ".")
    want = [(0.5 + EPSILON) ** DEFAULT_ALPHA, EPSILON ** DEFAULT_ALPHA]
    got = data.get("by_default") or []
    if len(got) != 2 or not all(_close(g, w) for g, w in zip(got, want)):
        return failed(f"PrioritizedReplayBuffer(capacity) without alpha and epsilon, after "
                      f"update_priorities([0, 1], [0.5, 0.0]), should hold (|delta| + 1e-6)^0.6 "
                      f"= {want[0]:.6g} and {want[1]:.6g} (the defaults alpha=0.6, "
                      f"epsilon=1e-6); it holds {got}.")
    return passed("update_priorities stores (|delta| + epsilon)^alpha in the tree, for "
                  "negative and zero TD errors too, and leaves other slots alone; alpha and "
                  "epsilon default to 0.6 and 1e-6.")


# --- the buffer: wrap-around ------------------------------------------------------------------

WRAP_TD_ERROR = 0.01  # lowers every priority below the initial maximum before overwriting


def _wrap_inputs(rng):
    capacity = int(rng.integers(5, 16))
    return {"capacity": capacity, "extra": int(rng.integers(1, capacity)),
            "alpha": round(float(rng.uniform(0.4, 0.9)), 2), "draws": 60 * capacity,
            "seed": int(rng.integers(2**31))}


def _wrap_probe(inputs, PrioritizedReplayBuffer):
    capacity, extra = inputs["capacity"], inputs["extra"]
    buffer = _new_buffer(PrioritizedReplayBuffer, capacity, inputs["alpha"], inputs["seed"])
    _fill(buffer, range(capacity))
    _update_priorities(buffer, list(range(capacity)), [WRAP_TD_ERROR] * capacity)
    _fill(buffer, range(capacity, capacity + extra))
    priorities = _priorities(buffer, range(capacity))
    # equal priorities from here on, so every stored transition is as likely to come up
    _update_priorities(buffer, list(range(capacity)), [1.0] * capacity)
    ids = _sampled_ids(buffer, 32, inputs["draws"])
    # the smallest buffer: one slot, overwritten by every add
    one = _new_buffer(PrioritizedReplayBuffer, 1, inputs["alpha"], inputs["seed"])
    _fill(one, [0, 1])
    return {"length": call_student("len(buffer)", len, buffer), "priorities": priorities,
            "ids": ids,
            "one": _sample(one, 3, 0.5), "one_length": call_student("len(buffer)", len, one)}


def _wrap_verdict(inputs, data):
    capacity, extra, alpha = inputs["capacity"], inputs["extra"], inputs["alpha"]
    situation = (f"after adding transitions 0..{capacity + extra - 1} to a "
                 f"PrioritizedReplayBuffer({capacity})")
    if data["length"] != capacity:
        return failed(f"{situation}, len(buffer) is {data['length']}; it should stay "
                      f"{capacity}.")
    problem = wrong_amount("priorities", data["priorities"], capacity)
    if problem:
        return problem
    overwritten = range(extra)
    want = reference(LESSON, "new_transition_priority", [[WRAP_TD_ERROR] * capacity], alpha)
    for slot in overwritten:
        got = data["priorities"][slot]
        if not _close(got, want):
            return failed(f"{situation}, slot {slot} holds the new transition "
                          f"{capacity + slot}, whose priority should be the maximal one "
                          f"(1^alpha = 1), but it is {got!r}: an overwritten slot must not "
                          "keep its old transition's priority.")
    kept = set(range(extra, capacity + extra))
    seen = set(data["ids"])
    stale = sorted(i for i in seen if i not in kept)
    if stale:
        what = ("rows whose fields do not belong together" if stale[0] == -1
                else f"transition {stale[0]}")
        return failed(f"{situation}, the buffer should hold {extra}..{capacity + extra - 1}, "
                      f"but sample returned {what}. When full, overwrite the oldest slot.")
    missing = sorted(kept - seen)
    if missing:
        return failed(f"{situation}, transition {missing[0]} never came up in "
                      f"{len(data['ids'])} draws: is it stored?")
    one = data.get("one") or {}
    if data.get("one_length") != 1 or one.get("ids") != [1, 1, 1] or \
            len(one.get("weights", [])) != 3 or not all(_close(w, 1.0) for w in one["weights"]):
        return failed("after adding transitions 0 and 1 to a PrioritizedReplayBuffer(1), "
                      f"len(buffer) should be 1 (it is {data.get('one_length')}) and "
                      f"sample(3, 0.5) should return transition 1 three times with weight 1; "
                      f"it returned {one.get('ids')} with weights {one.get('weights')}.")
    return passed(f"{situation}, the newest {capacity} are stored and the overwritten slots "
                  "got the maximal priority; a buffer of capacity 1 keeps the newest.")


# --- the buffer: never an empty slot or a slot out of range ------------------------------------

# What student code may draw from the grader's generator in one call: the buffers under
# test draw one number per row of a batch (7 here), or one per stored transition (14);
# 65,536 is thousands of times that, and numpy draws it in milliseconds. The bounds of a
# range may be arrays (one per row) that numpy broadcasts together: 256 numbers each.
DRAWS = AtMost(65_536, "draws at most {limit:,} numbers per call", shape=True)
POPULATION = AtMost(65_536, "draws from at most {limit:,} items")
BOUNDS = AtMost(256, "takes at most {limit:,} numbers for each bound of a range", values=True)


class TopOfTheRange(np.random.Generator):
    """numpy's generator, except that ``random`` and ``uniform`` return the largest value
    below the top of their range: every stratum's mass at the top of its slice, the
    last one a hair below the total (where floating-point sums go astray)."""

    # The grader keeps it and serves the student's buffer its draws across the boundary.
    __lending__ = Served(
        remote=("random", "uniform", "integers", "choice", "permutation"),
        limits={"random": {"size": DRAWS},
                "uniform": {"low": BOUNDS, "high": BOUNDS, "size": DRAWS},
                "integers": {"low": BOUNDS, "high": BOUNDS, "size": DRAWS},
                "choice": {"a": POPULATION, "size": DRAWS},
                "permutation": {"x": POPULATION}})

    def random(self, size=None, dtype=np.float64, out=None):
        return np.full(() if size is None else size, np.nextafter(1.0, 0.0))[()]

    def uniform(self, low=0.0, high=1.0, size=None):
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
    top = inputs["top"]
    buffer = _new_buffer(PrioritizedReplayBuffer, top["capacity"], top["alpha"], inputs["seed"])
    stored = len(top["td_errors"])
    _fill(buffer, range(stored))
    _update_priorities(buffer, list(range(stored)), top["td_errors"])
    lend_to(buffer, "rng", TopOfTheRange(np.random.PCG64(inputs["seed"])))  # its generator
    at_the_top = _sample(buffer, top["batch_size"], 1.0)
    return {"slots": slots, "ids": ids, "weights": weights, "top": at_the_top}


def _range_verdict(inputs, data):
    stored, capacity = inputs["stored"], inputs["capacity"]
    draws = inputs["rounds"] * inputs["batch_size"]
    problem = (wrong_amount("slots", data["slots"], draws)
               or wrong_amount("transitions", data["ids"], draws)
               or wrong_amount("weights", data["weights"], draws))
    if problem:
        return problem
    situation = (f"with {stored} transitions in a PrioritizedReplayBuffer({capacity}) and "
                 f"priorities from 1e-9 to 1e4")
    bad_slots = [s for s in data["slots"] if not (isinstance(s, int) and 0 <= s < stored)]
    if bad_slots:
        return failed(f"{situation}, sample returned slot {bad_slots[0]}, which holds "
                      f"nothing: only slots 0..{stored - 1} are filled. Draw masses from "
                      "[0, total), keep empty slots at priority 0, and clamp slots to "
                      "len(self) - 1.")
    if any(i != s for i, s in zip(data["ids"], data["slots"])):
        return failed(f"{situation}, the transitions sample returned are not the ones in the "
                      "slots it returned: read the storage at the slots you drew.")
    if not all(isinstance(w, float) and 0 < w <= 1 for w in data["weights"]):
        bad = next(w for w in data["weights"] if not (isinstance(w, float) and 0 < w <= 1))
        return failed(f"{situation}, sample returned a weight of {bad!r}; weights lie in "
                      "(0, 1].")
    top, at_the_top = inputs["top"], data.get("top") or {}
    stored = len(top["td_errors"])
    slots = at_the_top.get("slots", [])
    problem = wrong_amount("slots of the batch drawn at the top", slots, top["batch_size"])
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
                      f"past the last filled slot: clamp slots to len(self) - 1 = {stored - 1}.")
    return passed(f"{situation}, {draws} draws all came from filled slots, with weights in "
                  "(0, 1], and so did a batch drawn at the very top of the total.")


# --- errors ---------------------------------------------------------------------------------

def _errors_inputs(rng):
    return {"capacity": int(rng.integers(8, 20)), "stored": int(rng.integers(2, 6)),
            "bad_batch": -int(rng.integers(1, 10)), "seed": int(rng.integers(2**31))}


def _errors_probe(inputs, PrioritizedReplayBuffer, SumTree):
    capacity, stored = inputs["capacity"], inputs["stored"]
    empty = _new_buffer(PrioritizedReplayBuffer, capacity, 0.6, inputs["seed"])
    filled = _new_buffer(PrioritizedReplayBuffer, capacity, 0.6, inputs["seed"])
    _fill(filled, range(stored))
    tree = _new_tree(SumTree, capacity)
    return {"outcomes": list({
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
    }.items())}


ERROR_CASES = 11


def _errors_verdict(inputs, data):
    problem = wrong_amount("outcomes", data["outcomes"], ERROR_CASES)
    if problem:
        return problem
    for call, outcome in data["outcomes"]:
        problem = value_error_problem(call, outcome, " (a NaN or an index out of range in "
                                      "the tree corrupts every later sample, silently)")
        if problem:
            return problem
    return passed("empty buffers, bad batch sizes, NaN and infinite TD errors, slots out of "
                  "range and negative or NaN priorities raise ValueError.")


# --- beta annealing ----------------------------------------------------------------------------

def _beta_inputs(rng):
    total = int(rng.integers(50, 500))
    return {"total_steps": total, "beta_start": round(float(rng.uniform(0.2, 0.6)), 2),
            "steps": [0, total // 4, total // 2, total - 1, total, 2 * total]}


def _beta_probe(inputs, annealed_beta):
    values = [_numbers(call_student(f"annealed_beta({step}, {inputs['total_steps']}, "
                                    f"{inputs['beta_start']})", annealed_beta, step,
                                    inputs["total_steps"], inputs["beta_start"]),
                       "annealed_beta", 1)[0] for step in inputs["steps"]]
    total = inputs["total_steps"]
    defaults = [_numbers(call_student(f"annealed_beta({step}, {total})", annealed_beta, step,
                                      total), "annealed_beta", 1)[0]
                for step in (0, total // 2, total)]
    return {"values": values, "default_start": defaults[0], "defaults": defaults}


def _beta_verdict(inputs, data):
    problem = wrong_amount("values", data["values"], len(inputs["steps"]))
    if problem:
        return problem
    total, start = inputs["total_steps"], inputs["beta_start"]
    expected = reference(LESSON, "beta_schedule", inputs["steps"], total, start)
    for step, got, want in zip(inputs["steps"], data["values"], expected):
        if not _close(got, want, rel=1e-9):
            hint = (" Past total_steps beta stays at 1." if step > total else
                    " beta goes linearly from beta_start at step 0 to 1 at total_steps.")
            return failed(f"annealed_beta({step}, {total}, beta_start={start}) returned "
                          f"{got!r}; expected {want:.6g}.{hint}")
    if not _close(data["default_start"], 0.4):
        return failed(f"annealed_beta(0, {total}) returned {data['default_start']!r}: "
                      "beta_start defaults to 0.4, the PER paper's value.")
    steps = (0, total // 2, total)
    want = reference(LESSON, "beta_schedule", list(steps), total, 0.4)
    for step, got, expected in zip(steps, data.get("defaults", []), want):
        if not _close(got, expected, rel=1e-9):
            return failed(f"annealed_beta({step}, {total}) (beta_start by default, 0.4) "
                          f"returned {got!r}; expected {expected:.6g}.")
    return passed("beta rises linearly from beta_start to 1 and stays there.")


# --- the weighted Q-learning update ------------------------------------------------------------

def _weighted_inputs(rng):
    n_states, n_actions = 5, 3
    transitions = [[int(rng.integers(n_states)), int(rng.integers(n_actions)),
                    float(rng.choice([-1.0, 0.0, 1.0, 2.5, 10.0])),
                    int(rng.integers(n_states)), bool(rng.random() < 0.3),
                    round(float(rng.uniform(0.05, 1.0)), 3)] for _ in range(30)]
    return {"n_states": n_states, "n_actions": n_actions, "transitions": transitions,
            "alpha": round(float(rng.uniform(0.1, 0.9)), 2),
            "discount": round(float(rng.uniform(0.5, 0.99)), 2),
            "seed": int(rng.integers(2**31))}


# what code may do to the reference agent it is lent: its Q-values change by set_qvalue
# (and update); reads come from the student process's copy, which the grader checks
AGENT_WRITES = ("set_qvalue", "update")


def _weighted_probe(inputs, prioritized_q_update):
    from course.legal_actions import AllActions
    from qlearning import QLearningAgent

    agent = mirrored(QLearningAgent, alpha=inputs["alpha"], epsilon=0.0,
                     discount=inputs["discount"],
                     get_legal_actions=mirrored(AllActions, inputs["n_actions"]),
                     seed=inputs["seed"], logged=AGENT_WRITES)
    results = []
    for state, action, reward, next_state, done, weight in inputs["transitions"]:
        td_error = call_student("prioritized_q_update(agent, ...)", prioritized_q_update,
                                agent, state, action, reward, next_state, done, weight)
        results.append([_numbers(td_error, "prioritized_q_update", 1)[0],
                        float(agent.get_qvalue(state, action))])
    return {"results": results}


def _weighted_verdict(inputs, data):
    problem = wrong_amount("updates", data["results"], len(inputs["transitions"]))
    if problem:
        return problem
    expected = reference(LESSON, "weighted_q_learning", inputs)
    for number, (got, want, row) in enumerate(zip(data["results"], expected,
                                                  inputs["transitions"]), 1):
        state, action, reward, next_state, done, weight = row
        situation = (f"update #{number} (state {state}, action {action}, reward {reward}, "
                     f"next state {next_state}, done={done}, weight {weight}; alpha="
                     f"{inputs['alpha']}, discount={inputs['discount']})")
        if not isinstance(got, list) or len(got) != 2:
            return failed(f"{situation} gave no result.")
        td_error, qvalue = got
        if not _close(td_error, want[0], rel=1e-7) and not (abs(want[0]) < 1e-12
                                                            and abs(td_error) < 1e-12):
            return failed(f"{situation} returned TD error {td_error!r}; expected "
                          f"{want[0]:.6g} = target - Q(s, a) before the update"
                          + (", with no bootstrap when done" if done else "") + ".")
        if not _close(qvalue, want[1], rel=1e-7) and not (abs(want[1]) < 1e-12
                                                          and abs(qvalue) < 1e-12):
            return failed(f"after {situation} Q({state},{action}) is {qvalue!r}; expected "
                          f"{want[1]:.6g} = Q + alpha * weight * delta.")
    return passed(f"{len(inputs['transitions'])} weighted updates match "
                  "Q <- Q + alpha w delta and return delta.")


# --- the training loop with prioritized replay -----------------------------------------------

class RecordingPrioritizedBuffer:
    """Stands in for a prioritized buffer: records adds, samples and priority updates,
    and hands out older transitions with known weights, so the verdict can replay it.
    Served to the student's loop (``sample`` and ``len`` across, the rest queued)."""

    __lending__ = Served(remote=("sample", "__len__"), deferred=("add", "update_priorities"),
                         limits={"sample": {"batch_size": STAND_IN_BATCH},
                                 "update_priorities": {"slots": STAND_IN_PRIORITIES,
                                                       "td_errors": STAND_IN_PRIORITIES}})

    def __init__(self):
        self.added, self.samples = Record("add"), Record("sample")
        self.priority_updates = Record("update_priorities")

    def __len__(self):
        return len(self.added)

    def add(self, obs_t, action, reward, obs_tp1, done):
        self.added.append([int(obs_t), int(action), float(reward), int(obs_tp1), bool(done)])

    def sample(self, batch_size, beta):
        if not self.added:
            raise ValueError("sample() on an empty buffer: add the transition first")
        start = 2 * len(self.samples)
        slots = [(start + j) % len(self.added) for j in range(batch_size)]
        weights = [round(0.25 + 0.75 * ((start + 3 * j) % 5) / 4, 4) for j in range(batch_size)]
        self.samples.append({"batch_size": batch_size, "beta": float(beta), "slots": slots,
                             "weights": weights})
        rows = [self.added[slot] for slot in slots]
        fields = [np.array(column) for column in zip(*rows)]
        return (*fields, np.array(weights), np.array(slots))

    def update_priorities(self, slots, td_errors):
        self.priority_updates.append({"slots": np.asarray(slots).astype(int).tolist(),
                                      "td_errors": np.asarray(td_errors, float).tolist()})


DEFAULT_T_MAX = 10_000  # the default the signature gives


def _loop_inputs(rng):
    length = int(rng.integers(3, 7))
    return {"length": length, "time_limit": int(rng.integers(length + 2, length + 6)),
            "batch_size": int(rng.integers(2, 7)), "beta": round(float(rng.uniform(0.3, 1)), 2),
            "alpha": 0.5, "discount": 0.9, "seed": int(rng.integers(2**31))}


def _loop_probe(inputs, play_and_train_with_per):
    from course.legal_actions import AllActions
    from course.scripted_agents import scripted_q_agent

    outcome = {}
    limit = inputs["time_limit"]
    for case, (action, time_limit, t_max) in episode_cases(limit, DEFAULT_T_MAX).items():
        env = lent_corridor(inputs["length"], time_limit)
        agent = mirrored(scripted_q_agent, action, alpha=inputs["alpha"], epsilon=0.0,
                         discount=inputs["discount"],
                         get_legal_actions=mirrored(AllActions, 2), seed=inputs["seed"],
                         logged=AGENT_WRITES, settable=("epsilon",))
        long_run = case == "default_t_max"
        buffer = counting_buffer(prioritized=True) if long_run else RecordingPrioritizedBuffer()
        batch_size = 1 if long_run else inputs["batch_size"]
        extra = {} if t_max is None else {"t_max": t_max}
        total = call_training_loop(
            f"play_and_train_with_per(env, agent, replay, {batch_size}, beta"
            + ("" if t_max is None else f", t_max={t_max}") + ")",
            play_and_train_with_per, env, agent, buffer, batch_size, inputs["beta"], **extra)
        total = float(total) if isinstance(total, (int, float, np.floating)) else repr(total)[:60]
        if long_run:  # 10,000 steps: only how many
            outcome[case] = {"steps": env.unwrapped.steps_taken}
            continue
        outcome[case] = {
            "total": total, "steps": env.unwrapped.steps_taken, "added": buffer.added,
            "samples": buffer.samples, "priority_updates": buffer.priority_updates,
            "qtable": [[float(agent.get_qvalue(s, a)) for a in (0, 1)]
                       for s in range(inputs["length"] + 1)]}
    return outcome


def _loop_verdict(inputs, data):
    length, limit = inputs["length"], inputs["time_limit"]
    problem = episode_ends_problem(length, data, episode_ends(length, limit, DEFAULT_T_MAX))
    if problem:
        return failed(problem)
    for case in ("reaches_goal", "runs_out_of_time", "stopped_by_t_max"):
        run = data[case]
        steps = run["steps"]
        if len(run["added"]) != steps:
            return failed(f"the episode took {steps} steps but replay.add was called "
                          f"{len(run['added'])} times: store every transition once.")
        calls = [(s["batch_size"], s["beta"]) for s in run["samples"]]
        if calls != [(inputs["batch_size"], inputs["beta"])] * steps:
            return failed(f"expected one replay.sample({inputs['batch_size']}, beta="
                          f"{inputs['beta']}) per step, after storing the step's transition; "
                          f"got {calls[:4]}...")
        if [u["slots"] for u in run["priority_updates"]] != [s["slots"]
                                                           for s in run["samples"]]:
            return failed("after each batch, call replay.update_priorities once with the "
                          "slots that sample returned (in the same order).")
        # the grader's recording of what its buffer handed out, not the student's results
        recorded = {"added": run["added"], "samples": run["samples"]}
        expected = reference(LESSON, "per_loop_expectation", inputs, recorded)
        expected_errors, expected_q = expected["td_errors"], expected["qtable"]
        for number, (update, want) in enumerate(zip(run["priority_updates"], expected_errors)):
            if not np.allclose(update["td_errors"], want, rtol=1e-7, atol=1e-9):
                return failed(f"at step {number + 1} update_priorities got TD errors "
                              f"{np.round(update['td_errors'], 4).tolist()}, expected "
                              f"{np.round(want, 4).tolist()}: after the online update, apply "
                              "prioritized_q_update to each replayed transition in order, "
                              "with its weight, and pass the TD errors it returns.")
        if not np.allclose(run["qtable"], expected_q, rtol=1e-7, atol=1e-9):
            return failed("the agent's final Q-values differ from an online update per step "
                          "followed by weighted updates on each replayed batch.")
    if not data["reaches_goal"]["added"][-1][4]:
        return failed("the last transition reached the goal (terminated=True) but was stored "
                      "with done=False.")
    if any(row[4] for row in data["runs_out_of_time"]["added"]):
        return failed("an episode cut by the time limit was stored with done=True: store "
                      "`terminated`, not `terminated or truncated`.")
    return passed("each step updates online, stores the transition, replays one weighted "
                  "batch and feeds its TD errors back as priorities.")


# --- learning on the Blind Cliffwalk -------------------------------------------------------------

# updates the probe may use per run; the reference needs about a quarter of it (median)
CLIFFWALK_BUDGET = {7: 2500, 8: 4000, 9: 7000}
UNIFORM_FACTOR = 2.0  # PER's median must be at least twice as fast as uniform replay's


def _cliffwalk_inputs(rng):
    n = int(rng.choice(sorted(CLIFFWALK_BUDGET)))
    return {"n": n, "budget": CLIFFWALK_BUDGET[n], "seeds": rng.integers(2**31, size=3).tolist()}


class BufferUnderTest:
    """The student's buffer as the course's Blind Cliffwalk loop uses it: ``sample``
    answers at once; ``update_priorities``, whose result the loop does not need, goes
    to the student's process with the next ``sample`` (one round trip per update)."""

    def __init__(self, buffer):
        self.buffer = buffer

    def sample(self, batch_size, beta):
        return call_student(f"sample({batch_size}, beta={beta})", self.buffer.sample,
                            batch_size, beta)

    def update_priorities(self, slots, td_errors):
        call_later("update_priorities(slots, td_errors)", self.buffer.update_priorities,
                   slots, td_errors)


def _cliffwalk_probe(inputs, PrioritizedReplayBuffer):
    """The student's buffer, driven by the course's replay loop (learn_from_replay, run
    here), learns the walk; the verdict replays the slots it drew."""
    from course.blind_cliffwalk import learn_from_replay, replay_memory

    runs = []
    for seed in inputs["seeds"]:
        memory = replay_memory(inputs["n"], seed)
        buffer = _new_buffer(PrioritizedReplayBuffer, len(memory), 0.6, seed)
        for row in memory.rows():
            call_later("add(obs_t, action, reward, obs_tp1, done)", buffer.add, *row)
        run = call_student("learning the Blind Cliffwalk from your buffer", learn_from_replay,
                           BufferUnderTest(buffer), memory, inputs["budget"], 0.4)
        runs.append(run.slots)
    return {"slots": runs}


def _cliffwalk_baseline(inputs):
    """What uniform replay needs on the same memories (the grader's own baseline)."""
    return reference(LESSON, "uniform_updates_to_solve", inputs["n"], inputs["seeds"])


def _cliffwalk_verdict(inputs, data):
    from course.blind_cliffwalk import replay_memory, updates_to_solve_from_slots

    n, budget = inputs["n"], inputs["budget"]
    problem = wrong_amount("runs", data["slots"], len(inputs["seeds"]))
    if problem:
        return problem
    yours = []
    for seed, slots in zip(inputs["seeds"], data["slots"]):
        memory = replay_memory(n, seed)
        if (not isinstance(slots, list) or len(slots) > budget
                or not all(isinstance(s, int) and 0 <= s < len(memory) for s in slots)):
            return failed(f"a run on the Blind Cliffwalk returned slots outside the memory of "
                          f"{len(memory)} transitions (or more than {budget} of them).")
        yours.append(updates_to_solve_from_slots(memory, slots))
    uniform = _cliffwalk_baseline(inputs)
    shown = ", ".join("not solved" if u is None else str(u) for u in yours)
    summary = (f"on Blind Cliffwalks of n={n} states (memory {2 ** (n + 1) - 2} transitions), "
               f"replaying with your buffer solved the Q-values (MSE < 1e-3) after {shown} "
               f"updates; uniform replay needs {', '.join(map(str, uniform))}")
    figure = comparison(f"Blind Cliffwalk, n={n}: updates to solve (fewer is better; an "
                        "unsolved run is not drawn)", "updates",
                        [f"seed {number}" for number in range(1, len(yours) + 1)],
                        {"your buffer": yours, "uniform replay": uniform},
                        higher_is_better=False)
    if any(u is None for u in yours):
        return failed(summary + f" (budget {budget} updates). Check that the priorities "
                      "you store follow the TD errors you are given.", figure=figure)
    if np.median(yours) * UNIFORM_FACTOR > np.median(uniform):
        return failed(summary + ". Prioritized replay should need at most half as many "
                      "(median).", figure=figure)
    return passed(summary + ".", figure=figure)


# The buffer samples and updates through the student's SumTree: its checks are named when
# a buffer check fails and they fail too.
SUM_TREE = Callee("SumTree", LESSON, ("test_sumtree_totals", "test_sumtree_prefix_sum"))

CHECKS = LessonChecks(LESSON, [
    Check("test_sumtree_totals", "sum tree totals", ("SumTree",),
          _totals_inputs, _totals_probe, _totals_verdict,
          asks="The total and every priority stay exact after many batched updates."),
    Check("test_sumtree_prefix_sum", "sum tree prefix-sum search", ("SumTree",),
          _search_inputs, _search_probe, _search_verdict,
          asks="Find_prefix_sum agrees with a brute-force running sum, boundaries and empty slots included."),
    Check("test_new_transitions_max_priority", "new transitions at maximal priority",
          ("PrioritizedReplayBuffer",),
          _max_priority_inputs, _max_priority_probe, _max_priority_verdict,
          calls=(SUM_TREE,),
          asks="New transitions get max_priority ** alpha; max_priority never decreases."),
    Check("test_sampling_follows_priorities", "sampling follows p^alpha",
          ("PrioritizedReplayBuffer",),
          _frequency_inputs, _frequency_probe, _frequency_verdict,
          calls=(SUM_TREE,),
          asks="Draw frequencies follow p_i^alpha / sum p^alpha (chi-square)."),
    Check("test_stratified_sampling", "stratified sampling", ("PrioritizedReplayBuffer",),
          _stratified_inputs, _stratified_probe, _stratified_verdict,
          calls=(SUM_TREE,),
          asks="One draw per equal slice of the total: equal priorities give each transition exactly once."),
    Check("test_importance_weights", "importance-sampling weights",
          ("PrioritizedReplayBuffer",), _weights_inputs, _weights_probe, _weights_verdict,
          calls=(SUM_TREE,),
          asks="Weights are (N P(i))^-beta divided by the batch's largest."),
    Check("test_priority_updates", "update_priorities", ("PrioritizedReplayBuffer",),
          _updates_inputs, _updates_probe, _updates_verdict,
          calls=(SUM_TREE,),
          asks="Update_priorities stores (|delta| + epsilon)^alpha."),
    Check("test_wraparound", "overwriting when full", ("PrioritizedReplayBuffer",),
          _wrap_inputs, _wrap_probe, _wrap_verdict,
          calls=(SUM_TREE,),
          asks="When full, the oldest slot is overwritten and gets the maximal priority."),
    Check("test_no_empty_or_out_of_range_samples", "no empty or out-of-range samples",
          ("PrioritizedReplayBuffer",), _range_inputs, _range_probe, _range_verdict,
          calls=(SUM_TREE,),
          asks="No draw from an empty slot after many random priority updates."),
    Check("test_errors", "errors for bad input", ("PrioritizedReplayBuffer", "SumTree"),
          _errors_inputs, _errors_probe, _errors_verdict,
          calls=(SUM_TREE,),
          asks="ValueError for empty buffers, bad batch sizes, NaN TD errors, slots out of range, negative priorities."),
    Check("test_beta_schedule", "annealing beta", ("annealed_beta",),
          _beta_inputs, _beta_probe, _beta_verdict,
          asks="Linear from beta_start to 1, then flat."),
    Check("test_weighted_update", "weighted Q-learning update", ("prioritized_q_update",),
          _weighted_inputs, _weighted_probe, _weighted_verdict,
          calls=(AGENT,),
          asks="Fixed transitions with weights: Q <- Q + alpha w delta, returning delta."),
    Check("test_per_loop", "play_and_train_with_per", ("play_and_train_with_per",),
          _loop_inputs, _loop_probe, _loop_verdict,
          asks="Online update, store with done=terminated, one weighted batch per step, TD errors back to the buffer."),
    Check("test_cliffwalk_learning", "PER on the Blind Cliffwalk",
          ("PrioritizedReplayBuffer",), _cliffwalk_inputs, _cliffwalk_probe,
          _cliffwalk_verdict, time_limit=60.0, learning=True, prepare=_cliffwalk_baseline,
          calls=(SUM_TREE,),
          asks="Your PER against uniform replay on unseen Blind Cliffwalks, judged by replaying the slots it drew."),
])
