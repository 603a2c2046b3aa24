"""Checks for lesson 03: the sum tree, prioritized replay, and PER on the Blind Cliffwalk."""

import math

import numpy as np

from checks.expected import expected as reference
from checks.framework import (Callee, Check, LessonChecks, NotWrittenYet, ProbeError, call_later,
                              call_student, call_student_repeatedly, comparison, failed,
                              kept_with, lend_to, outcome_of, passed,
                              reseed_global_generators, value_error_problem, wrong_amount)
from checks.lending import STAND_IN_BATCH, STAND_IN_PRIORITIES, AtMost, Served, mirrored
from checks.lesson01_qlearning import AGENT
from checks.numbered_transitions import transition, transition_ids
from checks.records import Record
from checks.requirements import Rule
from checks.statistics import FALSE_FAILURE_RATE, chi_square_pvalue, describe_counts, fits
from checks.stub_envs import (call_training_loop, counting_buffer, episode_cases,
                              episode_ends, episode_ends_problem, lent_corridor)

LESSON = "03_prioritized_replay"
EPSILON = 1e-6  # the buffer's default: p = |delta| + epsilon
DEFAULT_ALPHA = 0.6  # the signature's default
INITIAL_MAX_PRIORITY = 1.0


# --- the rules: what the lesson tells a student, as its checks test it ---------------------

# test_sumtree_totals
TREE_TOTAL = Rule("tree-total", "tree.total is the sum of the priorities the tree holds after "
                  "any batches of updates, a slot given twice or two slots under one parent "
                  "in one batch included: each parent is recomputed from its two children.")
TREE_FLOAT64 = Rule("tree-float64", "The tree holds priorities and sums in float64: get returns "
                    "exactly what update set, and sums do not drift.")
TREE_LAYOUT = Rule("tree-layout", "nodes is one float64 array of length 2L, L the smallest power "
                   "of two >= capacity, with the root at node 1 and slot i at node L + i.")
# test_sumtree_prefix_sum
SEARCH_INTERVAL = Rule("search-interval", "find_prefix_sum(m) returns the slot i with "
                       "p_0 + ... + p_(i-1) <= m < p_0 + ... + p_i.")
SEARCH_TIE_GOES_RIGHT = Rule("search-tie-goes-right", "A mass equal to a running sum "
                             "p_0 + ... + p_i belongs to the next slot: go right when m >= "
                             "the left child's sum, which also skips slots of priority 0.")
SEARCH_CLAMPED = Rule("search-clamped", "Masses are clamped into [0, total) and slots to "
                      "capacity - 1, so every search returns a slot that exists, even for a "
                      "mass a hair below the total.")
SEARCH_LEAVES_MASSES = Rule("search-leaves-masses", "find_prefix_sum does not change the array "
                            "of masses it is given.")
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
SAMPLE_RETURNS = Rule("sample-returns", "sample returns (obs_t, action, reward, obs_tp1, done, "
                      "weights, slots) with batch_size rows, each row the transition stored "
                      "in its slot.")
# test_stratified_sampling
STRATIFIED = Rule("stratified", "sample cuts [0, total) into batch_size equal slices and draws "
                  "one mass in each, so equal priorities give each of batch_size transitions "
                  "exactly once.")
SLICES_INDEPENDENT = Rule("slices-independent", "Each slice's mass is its own uniform draw, "
                          "independent of the other slices'.")
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
BUFFER_PARAMETERS = Rule("buffer-parameters", "The buffer uses the alpha and epsilon it is "
                         "given, and alpha = 0.6, epsilon = 1e-6 when they are not given.")
REPEATED_SLOTS = Rule("repeated-slots", "update_priorities accepts a slot given twice in one "
                      "call (a batch can hold a transition twice): the slot gets one of its "
                      "priorities and the total stays the sum of the priorities.")
UPDATE_LEAVES_INPUTS = Rule("update-leaves-inputs", "update_priorities does not change the "
                            "arrays of slots and TD errors it is given.")
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
# test_errors
SAMPLE_REFUSES = Rule("sample-refuses-bad-input", "sample raises ValueError with a message on "
                      "an empty buffer and for a batch_size <= 0.")
UPDATE_REFUSES = Rule("update-refuses-bad-input", "update_priorities raises ValueError with a "
                      "message for NaN or infinite TD errors and for slots outside "
                      "[0, len(self)), not only outside the capacity.")
TREE_REFUSES = Rule("tree-refuses-bad-input", "SumTree.update raises ValueError with a message "
                    "for slots outside [0, capacity) and for negative or NaN priorities.")
# test_beta_schedule
BETA_LINEAR = Rule("beta-linear", "annealed_beta rises linearly from beta_start at step 0 to 1 "
                   "at total_steps, for any beta_start, 0 included.")
BETA_STAYS_AT_ONE = Rule("beta-stays-at-one", "Past total_steps, beta stays at 1.")
BETA_START_DEFAULT = Rule("beta-start-default", "beta_start defaults to 0.4, the PER paper's "
                          "value.")
# test_weighted_update
WEIGHTED_STEP = Rule("weighted-step", "prioritized_q_update sets Q(s, a) to "
                     "Q + alpha * w * delta, with the agent's alpha, through set_qvalue.")
TD_ERROR_BEFORE_UPDATE = Rule("td-error-before-update", "prioritized_q_update returns "
                              "delta = r + gamma max_a' Q(s', a') - Q(s, a), computed before "
                              "the update.")
NO_BOOTSTRAP_WHEN_DONE = Rule("no-bootstrap-when-done", "When done, the target is the reward "
                              "alone: no bootstrap from the next state.")
# test_per_loop
LOOP_EPISODE_ENDS = Rule("loop-episode-ends", "play_and_train_with_per plays one episode, "
                         "ending it when the environment terminates or truncates or after "
                         "t_max steps (10,000 by default), and returns its total reward.")
LOOP_STORES_EACH_STEP = Rule("loop-stores-each-step", "Each step's transition is stored once, "
                             "after the online update.")
LOOP_STORES_TERMINATED = Rule("loop-stores-terminated", "A transition is stored with "
                              "done = terminated, not terminated or truncated.")
LOOP_ONE_BATCH_PER_STEP = Rule("loop-one-batch-per-step", "Each step samples one batch, after "
                               "storing its transition, with the batch_size and beta the loop "
                               "is given (beta = 0 included).")
LOOP_FEEDS_BACK_TD_ERRORS = Rule("loop-feeds-back-td-errors", "After each batch the loop "
                                 "applies prioritized_q_update to each replayed transition in "
                                 "order, with its weight, and passes the TD errors it returns "
                                 "to update_priorities with the batch's slots.")
LOOP_ONLINE_THEN_REPLAY = Rule("loop-online-then-replay", "The agent's Q-values are those of "
                               "an online update per step followed by the weighted updates of "
                               "its replayed batch.")
# test_cliffwalk_learning
PER_BEATS_UNIFORM = Rule("per-beats-uniform", "On unseen Blind Cliffwalks your buffer solves "
                         "the Q-values within the budget, needing at most half the updates "
                         "uniform replay needs (median).")


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
    problem = (wrong_amount("totals", data["totals"], batches, rule=TREE_TOTAL)
               or wrong_amount("priorities from get()", data["leaves"], inputs["capacity"],
                               rule=TREE_FLOAT64))
    if problem:
        return problem
    expected = reference(LESSON, "tree_totals", inputs)
    for number, (got, want) in enumerate(zip(data["totals"], expected["totals"]), 1):
        if not _close(got, want):
            error = abs(got - want) / want if isinstance(got, (int, float)) else float("nan")
            drifts = 1e-9 < error < 1e-5
            return failed(
                f"in a SumTree({inputs['capacity']}), after {number} batch(es) of updates "
                f"total is {got!r} but the priorities it holds sum to {want!r} (relative "
                f"error {error:.1e}; float64 sums stay within 1e-9). "
                + ("A float32 tree drifts like this: keep the nodes in float64."
                   if drifts else
                   "When one batch updates two slots under the same parent, or one slot "
                   "twice, `nodes[parents] += change` applies only one change per node: "
                   "recompute each parent from its two children instead."),
                rule=TREE_FLOAT64 if drifts else TREE_TOTAL)
    for slot, (got, want) in enumerate(zip(data["leaves"], expected["leaves"])):
        if got != want:
            return failed(f"tree.get([{slot}]) returned {got!r} but the last update set it to "
                          f"{want!r}: store priorities exactly (float64).", rule=TREE_FLOAT64)
    capacity, leaves = inputs["capacity"], _power_of_two(inputs["capacity"])
    layout = data.get("layout")
    want = f"a float64 array of length 2L = {2 * leaves}"
    if not layout:
        return failed(f"SumTree({capacity}) has no attribute `nodes`: keep the tree in one "
                      f"array, {want}, as the lesson's Layout paragraph says.", rule=TREE_LAYOUT)
    if layout["length"] != 2 * leaves or layout["dtype"] != "float64":
        return failed(f"SumTree({capacity}).nodes is a {layout['dtype']} array of length "
                      f"{layout['length']}; the layout is {want} (L = {leaves}, the smallest "
                      f"power of two >= {capacity}).", rule=TREE_LAYOUT)
    if layout["leaves"] != expected["leaves"] or not _close(layout["root"], data["totals"][-1]):
        return failed(f"in SumTree({capacity}).nodes, slot i should be node L + i = {leaves} "
                      "+ i and the root node 1 (the total), but the priorities set by update "
                      "are not there.", rule=TREE_LAYOUT)
    if data.get("power_length") != 2 * LAYOUT_POWER:
        return failed(f"SumTree({LAYOUT_POWER}).nodes has length {data.get('power_length')}; "
                      f"with a capacity that is a power of two, L = {LAYOUT_POWER} and nodes "
                      f"has length 2L = {2 * LAYOUT_POWER}.", rule=TREE_LAYOUT)
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
    return {"found": found, "kept": _masses_kept(SumTree, inputs["cases"][1])}


def _masses_kept(SumTree, case):
    """The masses of ``case`` searched twice from one float64 array the caller keeps (the
    array where the student's code runs): what the array holds afterwards, and the slots
    of the second search."""
    tree = _new_tree(SumTree, len(case["priorities"]))
    _tree_update(tree, list(range(len(case["priorities"]))), case["priorities"])
    masses = kept_with(np.asarray(case["masses"], dtype=np.float64), near=tree)
    call_student("tree.find_prefix_sum(masses)", tree.find_prefix_sum, masses)
    second = _numbers(call_student("tree.find_prefix_sum(masses)", tree.find_prefix_sum,
                                   masses), "tree.find_prefix_sum(masses)",
                      len(case["masses"]), integers=True)
    return {"masses": masses.tolist(), "second": second}


def _search_verdict(inputs, data):
    problem = wrong_amount("searches", data["found"], len(inputs["cases"]),
                           rule=SEARCH_INTERVAL)
    if problem:
        return problem
    wrong = {SEARCH_INTERVAL: [], SEARCH_TIE_GOES_RIGHT: [], SEARCH_CLAMPED: []}
    for case, found in zip(inputs["cases"], data["found"]):
        priorities, masses = case["priorities"], case["masses"]
        problem = wrong_amount("slots", found, len(masses), rule=SEARCH_INTERVAL)
        if problem:
            return problem
        expected = reference(LESSON, "brute_force_prefix_search", priorities, masses)
        cumulative = np.concatenate([[0.0], np.cumsum(priorities)])  # for the feedback only
        for mass, got, want in zip(masses, found, expected):
            if got != want:
                wrong[_search_rule(mass, got, priorities, cumulative)].append(
                    (priorities, cumulative, mass, got, want))
    # the most basic requirement broken first: a mass inside a slot's interval, then one
    # on a boundary, then masses and slots out of range
    for rule, mistakes in wrong.items():
        if mistakes:
            return _search_failure(rule, *mistakes[0])
    kept, case = data.get("kept") or {}, inputs["cases"][1]
    if kept.get("masses") != case["masses"]:
        changed = next((i for i, (got, mass) in enumerate(zip(kept.get("masses") or [],
                                                               case["masses"]))
                        if got != mass), 0)
        return failed(f"tree.find_prefix_sum(masses) changed the caller's array of masses: "
                      f"mass #{changed} was {case['masses'][changed]:g} before the search and "
                      f"{(kept.get('masses') or [None] * (changed + 1))[changed]!r} after. Work "
                      "on a copy (np.clip returns one; `masses -= ...` on the array you were "
                      "given does not).", rule=SEARCH_LEAVES_MASSES)
    if kept.get("second") != data["found"][1]:
        return failed("searching the same masses twice from one array gave different slots "
                      "the second time: find_prefix_sum must leave the masses it is given as "
                      "they were.", rule=SEARCH_LEAVES_MASSES)
    sizes = ", ".join(str(len(case["priorities"])) for case in inputs["cases"])
    return passed(f"every search agrees with a brute-force running sum, boundaries, empty "
                  f"slots and out-of-range masses included (capacities {sizes}), and leaves "
                  "the masses it is given unchanged.")


def _search_rule(mass, got, priorities, cumulative):
    """The rule a wrong slot for ``mass`` breaks (see _search_verdict)."""
    if not isinstance(got, int) or not 0 <= got < len(priorities) or not \
            0 <= mass < cumulative[-1]:
        return SEARCH_CLAMPED
    return SEARCH_TIE_GOES_RIGHT if mass in cumulative[1:-1] else SEARCH_INTERVAL


def _search_failure(rule, priorities, cumulative, mass, got, want):
    total = cumulative[-1]
    shown = ", ".join(f"{p:g}" for p in priorities[:12])
    more = ", ..." if len(priorities) > 12 else ""
    where = (f"in a SumTree({len(priorities)}) holding priorities [{shown}{more}] "
             f"(total {total:g}), find_prefix_sum({mass:g}) returned slot {got}")
    if not isinstance(got, int) or not 0 <= got < len(priorities):
        hint = ("which does not exist. Masses at or past the total must be clamped to just "
                "below it, and slots to capacity - 1." if mass >= total else
                "which does not exist: clamp the slot to capacity - 1 (and masses into "
                "[0, total)).")
        return failed(f"{where}, {hint}", rule=rule)
    hint = {SEARCH_TIE_GOES_RIGHT: " A mass equal to a running sum p_0 + ... + p_i belongs "
                                   "to the next slot: go right when mass >= the left child's "
                                   "sum (which also skips slots of priority 0).",
            SEARCH_CLAMPED: " Masses outside [0, total) must be clamped into it first.",
            SEARCH_INTERVAL: ""}[rule]
    if priorities[got] == 0:
        return failed(f"{where}, whose priority is 0: the search must never land on an empty "
                      f"slot. The mass belongs to slot {want}.{hint}", rule=rule)
    return failed(f"{where} (priority {priorities[got]:g}, covering [{cumulative[got]:g}, "
                  f"{cumulative[got + 1]:g})), but the mass lies in slot {want}'s interval "
                  f"[{cumulative[want]:g}, {cumulative[want + 1]:g}).{hint}", rule=rule)


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
    _update_priorities(buffer, list(range(first + 1)), inputs["lowered_errors"])
    _fill(buffer, [first + 1])
    after_lowering = _priorities(buffer, [first + 1])[0]
    return {"initial": initial, "after_raise": after_raise, "after_lowering": after_lowering}


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
    return {"batches": batches, "pairs": pairs,
            "same_seed": _same_seed_batches(PrioritizedReplayBuffer, inputs)}


def _same_seed_batches(PrioritizedReplayBuffer, inputs):
    """The transitions of two buffers made with the same seed and filled alike, each sampled
    after the global generators (``random``, ``np.random``) were seeded differently:
    a buffer drawing from its own generator draws the same batches both times."""
    case = inputs["generator"]
    stored = case["batch"] * case["per_slice"]  # several transitions in each slice
    runs = []
    for global_seed in case["global_seeds"]:
        buffer = _new_buffer(PrioritizedReplayBuffer, stored, 0.6, inputs["seed"])
        _fill(buffer, range(stored))
        reseed_global_generators(global_seed, near=buffer)
        runs.append([batch["ids"] for batch in _samples(buffer, case["batch"], 0.4,
                                                        case["batches"])])
    return runs


def _stratified_verdict(inputs, data):
    from scipy import stats  # here: scipy takes a second to import
    problem = wrong_amount("batch sizes", data["batches"], len(inputs["batch_sizes"]),
                           rule=SAMPLE_RETURNS)
    if problem:
        return problem
    for size, batches in zip(inputs["batch_sizes"], data["batches"]):
        problem = wrong_amount("batches", batches, inputs["batches"], rule=SAMPLE_RETURNS)
        if problem:
            return problem
        for ids in batches:
            if sorted(ids) != list(range(size)):
                repeats = len(ids) - len(set(ids))
                return failed(f"with {size} transitions of equal priority, sample({size}) "
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
    problem = _generator_problem(inputs, data.get("same_seed"))
    if problem:
        return problem
    return passed("sampling is stratified: one draw from each equal slice of the total, "
                  "independently in each slice (binomial test on neighbouring slices, "
                  f"rejection rate {FALSE_FAILURE_RATE:g}), from the buffer's own generator.")


def _generator_problem(inputs, runs):
    """A failed verdict unless both runs of :func:`_same_seed_batches` drew the same
    batches, and successive batches differ (with four transitions in each slice, a
    buffer that draws afresh repeats a batch of 6 or more once in 4^6 times)."""
    case = inputs["generator"]
    problem = wrong_amount("runs of the same seed", runs, 2, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    stored = case["batch"] * case["per_slice"]
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
    single, single_refused = _attempt(_sample, single, 3, inputs["betas"][1])
    uniform, uniform_refused = _attempt(_uniform_weights, PrioritizedReplayBuffer, inputs)
    return {"samples": [batches for batches, _ in samples],
            "refused": [why for _, why in samples], "single": single,
            "single_refused": single_refused, "uniform": uniform,
            "uniform_refused": uniform_refused}


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
        if refused:
            return failed(f"sample({inputs['batch_size']}, beta={beta}) failed where "
                          f"sample({inputs['batch_size']}, beta={inputs['betas'][1]}) worked: "
                          f"{refused}. beta = {beta:g} is a value of beta ("
                          + ("no correction: every weight is 1" if beta == 0 else
                             "the full correction") + "), not a missing one.",
                          rule=WEIGHTS_BETA_ENDS)
        problem = wrong_amount("batches", batches, inputs["batches"], rule=SAMPLE_RETURNS)
        if problem:
            return problem
        # every slot's weight, and with the exponent's sign flipped (a common bug)
        table = reference(LESSON, "importance_weights", errors, alpha, beta)
        flipped = reference(LESSON, "importance_weights", errors, alpha, -beta)
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
            where = (f"with beta={beta}, alpha={alpha} and {stored} transitions stored, "
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
                              "0 is a value of beta, not a missing one.",
                              rule=WEIGHTS_BETA_ENDS)
            return failed(where, rule=WEIGHTS_FORMULA)
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
                     "td_errors": (-rng.uniform(0.1, 3, size=3)).round(4).tolist()}}


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
    given = call_student(f"PrioritizedReplayBuffer(capacity, alpha={inputs['alpha']}, "
                         f"epsilon={inputs['epsilon']})", PrioritizedReplayBuffer,
                         inputs["capacity"], alpha=inputs["alpha"], epsilon=inputs["epsilon"],
                         seed=inputs["seed"])
    _fill(given, [0, 1])
    _update_priorities(given, [0, 1], [0.5, 0.0])
    return {"after_each_round": after, "by_default": _priorities(default, [0, 1]),
            "given_epsilon": _priorities(given, [0, 1]),
            "repeated": _repeated_slots(PrioritizedReplayBuffer, inputs),
            "kept": _inputs_kept(PrioritizedReplayBuffer, inputs)}


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
    problem = _repeated_problem(inputs, data.get("repeated") or {})
    if problem:
        return problem
    kept, given = data.get("kept") or {}, inputs["kept"]
    if kept.get("slots") != given["slots"] or kept.get("td_errors") != given["td_errors"]:
        return failed(f"update_priorities(slots, td_errors) changed the caller's arrays: "
                      f"slots {given['slots']} and TD errors {given['td_errors']} held "
                      f"{kept.get('slots')} and {kept.get('td_errors')} afterwards. The "
                      "caller may still need them: compute |delta| + epsilon into a new "
                      "array (np.abs(td_errors) + self.epsilon), not in place.",
                      rule=UPDATE_LEAVES_INPUTS)
    return passed("update_priorities stores (|delta| + epsilon)^alpha in the tree, for "
                  "negative and zero TD errors and a slot given twice too, leaves other "
                  "slots and its inputs alone, and uses the alpha and epsilon given (0.6 and "
                  "1e-6 by default).")


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
    capacity = int(rng.integers(5, 16))
    return {"capacity": capacity, "extra": int(rng.integers(1, capacity)),
            "alpha": round(float(rng.uniform(0.4, 0.9)), 2), "draws": 60 * capacity,
            "seed": int(rng.integers(2**31))}


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
            "one": _sample(one, 3, 0.5), "one_length": call_student("len(buffer)", len, one)}


def _wrap_verdict(inputs, data):
    capacity, extra, alpha = inputs["capacity"], inputs["extra"], inputs["alpha"]
    situation = (f"after adding transitions 0..{capacity + extra - 1} to a "
                 f"PrioritizedReplayBuffer({capacity})")
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
    kept = set(range(extra, capacity + extra))
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
    top, at_the_top = inputs["top"], data.get("top") or {}
    stored = len(top["td_errors"])
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


def _refusal_rule(call):
    """The rule a bad-input case of :func:`_errors_probe` tests, read from its call."""
    if str(call).startswith("SumTree"):
        return TREE_REFUSES
    return UPDATE_REFUSES if str(call).startswith("update_priorities") else SAMPLE_REFUSES


def _errors_verdict(inputs, data):
    problem = wrong_amount("outcomes", data["outcomes"], ERROR_CASES, rule=SAMPLE_REFUSES)
    if problem:
        return problem
    for call, outcome in data["outcomes"]:
        problem = value_error_problem(call, outcome, " (a NaN or an index out of range in "
                                      "the tree corrupts every later sample, silently)",
                                      rule=_refusal_rule(call))
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
    # beta_start = 0: from no correction at all to the full one
    from_zero = [_numbers(call_student(f"annealed_beta({step}, {total}, 0.0)", annealed_beta,
                                       step, total, 0.0), "annealed_beta", 1)[0]
                 for step in (0, total // 2)]
    return {"values": values, "default_start": defaults[0], "defaults": defaults,
            "from_zero": from_zero}


def _beta_verdict(inputs, data):
    problem = wrong_amount("values", data["values"], len(inputs["steps"]), rule=BETA_LINEAR)
    if problem:
        return problem
    total, start = inputs["total_steps"], inputs["beta_start"]
    expected = reference(LESSON, "beta_schedule", inputs["steps"], total, start)
    for step, got, want in zip(inputs["steps"], data["values"], expected):
        if not _close(got, want, rel=1e-9):
            hint, rule = ((" Past total_steps beta stays at 1.", BETA_STAYS_AT_ONE)
                          if step > total else
                          (" beta goes linearly from beta_start at step 0 to 1 at "
                           "total_steps.", BETA_LINEAR))
            return failed(f"annealed_beta({step}, {total}, beta_start={start}) returned "
                          f"{got!r}; expected {want:.6g}.{hint}", rule=rule)
    if not _close(data["default_start"], 0.4):
        return failed(f"annealed_beta(0, {total}) returned {data['default_start']!r}: "
                      "beta_start defaults to 0.4, the PER paper's value.",
                      rule=BETA_START_DEFAULT)
    steps = (0, total // 2, total)
    want = reference(LESSON, "beta_schedule", list(steps), total, 0.4)
    for step, got, expected in zip(steps, data.get("defaults", []), want):
        if not _close(got, expected, rel=1e-9):
            return failed(f"annealed_beta({step}, {total}) (beta_start by default, 0.4) "
                          f"returned {got!r}; expected {expected:.6g}.",
                          rule=BETA_START_DEFAULT)
    # from 0: beta is step / total_steps (0 exactly at step 0)
    for step, got in zip((0, total // 2), data.get("from_zero") or [None, None]):
        if not (got == 0.0 if step == 0 else _close(got, step / total, rel=1e-9)):
            return failed(f"annealed_beta({step}, {total}, beta_start=0.0) returned {got!r}; "
                          f"expected {step / total:.6g}. beta_start = 0 is a value (no "
                          "correction at first), not a missing one.", rule=BETA_LINEAR)
    return passed("beta rises linearly from beta_start (0 included) to 1 and stays there.")


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
        # what the agent held before: names the rule a wrong TD error breaks (read with
        # get_qvalue alone: a student's own get_value is lesson 01's work, maybe unwritten)
        before = [float(agent.get_qvalue(state, action)),
                  max(float(agent.get_qvalue(next_state, other))
                      for other in range(inputs["n_actions"]))]
        td_error = call_student("prioritized_q_update(agent, ...)", prioritized_q_update,
                                agent, state, action, reward, next_state, done, weight)
        results.append([_numbers(td_error, "prioritized_q_update", 1)[0],
                        float(agent.get_qvalue(state, action)), *before])
    return {"results": results}


def _weighted_verdict(inputs, data):
    problem = wrong_amount("updates", data["results"], len(inputs["transitions"]),
                           rule=TD_ERROR_BEFORE_UPDATE)
    if problem:
        return problem
    expected = reference(LESSON, "weighted_q_learning", inputs)
    for number, (got, want, row) in enumerate(zip(data["results"], expected,
                                                  inputs["transitions"]), 1):
        state, action, reward, next_state, done, weight = row
        situation = (f"update #{number} (state {state}, action {action}, reward {reward}, "
                     f"next state {next_state}, done={done}, weight {weight}; alpha="
                     f"{inputs['alpha']}, discount={inputs['discount']})")
        if not isinstance(got, list) or len(got) != 4:
            return failed(f"{situation} gave no result.", rule=TD_ERROR_BEFORE_UPDATE)
        td_error, qvalue, q_before, value_before = got
        if not _close(td_error, want[0], rel=1e-7) and not (abs(want[0]) < 1e-12
                                                            and abs(td_error) < 1e-12):
            # every update before this one was right, so what the agent held is the
            # reference's: a bootstrapped target on a terminal step shows as that
            bootstrapped = (done and isinstance(q_before, float)
                            and isinstance(value_before, float) and value_before != 0 and
                            _close(td_error, reward + inputs["discount"] * value_before
                                   - q_before, rel=1e-7))
            return failed(f"{situation} returned TD error {td_error!r}; expected "
                          f"{want[0]:.6g} = target - Q(s, a) before the update"
                          + (", with no bootstrap when done: the target is the reward alone"
                             if done else "") + ".",
                          rule=NO_BOOTSTRAP_WHEN_DONE if bootstrapped else TD_ERROR_BEFORE_UPDATE)
        if not _close(qvalue, want[1], rel=1e-7) and not (abs(want[1]) < 1e-12
                                                          and abs(qvalue) < 1e-12):
            return failed(f"after {situation} Q({state},{action}) is {qvalue!r}; expected "
                          f"{want[1]:.6g} = Q + alpha * weight * delta.", rule=WEIGHTED_STEP)
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
        beta = _loop_beta(inputs, case)
        total = call_training_loop(
            f"play_and_train_with_per(env, agent, replay, {batch_size}, beta={beta}"
            + ("" if t_max is None else f", t_max={t_max}") + ")",
            play_and_train_with_per, env, agent, buffer, batch_size, beta, **extra)
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


def _loop_beta(inputs, case):
    """The beta a case's run is given: 0 (no correction, PER without weights, as the
    lesson's Taxi runs use it) when the time limit ends the episode."""
    return 0.0 if case == "runs_out_of_time" else inputs["beta"]


def _loop_verdict(inputs, data):
    length, limit = inputs["length"], inputs["time_limit"]
    problem = episode_ends_problem(length, data, episode_ends(length, limit, DEFAULT_T_MAX))
    if problem:
        return failed(problem, rule=LOOP_EPISODE_ENDS)
    for case in ("reaches_goal", "runs_out_of_time", "stopped_by_t_max"):
        run = data[case]
        steps = run["steps"]
        if len(run["added"]) != steps:
            return failed(f"the episode took {steps} steps but replay.add was called "
                          f"{len(run['added'])} times: store every transition once.",
                          rule=LOOP_STORES_EACH_STEP)
        calls = [(s["batch_size"], s["beta"]) for s in run["samples"]]
        beta = _loop_beta(inputs, case)
        if calls != [(inputs["batch_size"], beta)] * steps:
            zero = (" beta = 0 is a value (no importance correction), not a missing one."
                    if beta == 0 else "")
            return failed(f"play_and_train_with_per(env, agent, replay, {inputs['batch_size']}"
                          f", beta={beta}): expected one replay.sample({inputs['batch_size']}, "
                          f"beta={beta}) per step, after storing the step's transition; "
                          f"got {calls[:4]}...{zero}", rule=LOOP_ONE_BATCH_PER_STEP)
        if [u["slots"] for u in run["priority_updates"]] != [s["slots"]
                                                           for s in run["samples"]]:
            return failed("after each batch, call replay.update_priorities once with the "
                          "slots that sample returned (in the same order).",
                          rule=LOOP_FEEDS_BACK_TD_ERRORS)
        # the grader's recording of what its buffer handed out, not the student's results
        recorded = {"added": run["added"], "samples": run["samples"]}
        expected = reference(LESSON, "per_loop_expectation", inputs, recorded)
        expected_errors, expected_q = expected["td_errors"], expected["qtable"]
        # the learning first: TD errors follow from it (a loop that skips the online update
        # feeds back other errors too)
        if not np.allclose(run["qtable"], expected_q, rtol=1e-7, atol=1e-9):
            return failed("the agent's final Q-values differ from an online update per step "
                          "followed by weighted updates on each replayed batch.",
                          rule=LOOP_ONLINE_THEN_REPLAY)
        for number, (update, want) in enumerate(zip(run["priority_updates"], expected_errors)):
            if not np.allclose(update["td_errors"], want, rtol=1e-7, atol=1e-9):
                return failed(f"at step {number + 1} update_priorities got TD errors "
                              f"{np.round(update['td_errors'], 4).tolist()}, expected "
                              f"{np.round(want, 4).tolist()}: after the online update, apply "
                              "prioritized_q_update to each replayed transition in order, "
                              "with its weight, and pass the TD errors it returns.",
                              rule=LOOP_FEEDS_BACK_TD_ERRORS)
    if not data["reaches_goal"]["added"][-1][4]:
        return failed("the last transition reached the goal (terminated=True) but was stored "
                      "with done=False.", rule=LOOP_STORES_TERMINATED)
    if any(row[4] for row in data["runs_out_of_time"]["added"]):
        return failed("an episode cut by the time limit was stored with done=True: store "
                      "`terminated`, not `terminated or truncated`.",
                      rule=LOOP_STORES_TERMINATED)
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
    problem = wrong_amount("runs", data["slots"], len(inputs["seeds"]), rule=PER_BEATS_UNIFORM)
    if problem:
        return problem
    yours = []
    for seed, slots in zip(inputs["seeds"], data["slots"]):
        memory = replay_memory(n, seed)
        if (not isinstance(slots, list) or len(slots) > budget
                or not all(isinstance(s, int) and 0 <= s < len(memory) for s in slots)):
            return failed(f"a run on the Blind Cliffwalk returned slots outside the memory of "
                          f"{len(memory)} transitions (or more than {budget} of them).",
                          rule=SAMPLE_FILLED_SLOTS)
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
                      "you store follow the TD errors you are given.", figure=figure,
                      rule=PER_BEATS_UNIFORM)
    if np.median(yours) * UNIFORM_FACTOR > np.median(uniform):
        return failed(summary + ". Prioritized replay should need at most half as many "
                      "(median).", figure=figure, rule=PER_BEATS_UNIFORM)
    return passed(summary + ".", figure=figure)


# The buffer samples and updates through the student's SumTree: its checks are named when
# a buffer check fails and they fail too.
SUM_TREE = Callee("SumTree", LESSON, ("test_sumtree_totals", "test_sumtree_prefix_sum"))

CHECKS = LessonChecks(LESSON, [
    Check("test_sumtree_totals", "sum tree totals", ("SumTree",),
          _totals_inputs, _totals_probe, _totals_verdict,
          asks="After hundreds of batched updates (repeated slots included) tree.total and "
               "tree.get are exact, and nodes is a float64 array of the lesson's layout.",
          rules=(TREE_TOTAL, TREE_FLOAT64, TREE_LAYOUT)),
    Check("test_sumtree_prefix_sum", "sum tree prefix-sum search", ("SumTree",),
          _search_inputs, _search_probe, _search_verdict,
          asks="find_prefix_sum finds the slot a brute-force running sum finds, at "
               "boundaries, past empty slots and for masses outside [0, total), and leaves "
               "the masses it is given unchanged.",
          rules=(SEARCH_INTERVAL, SEARCH_TIE_GOES_RIGHT, SEARCH_CLAMPED,
                 SEARCH_LEAVES_MASSES)),
    Check("test_new_transitions_max_priority", "new transitions at maximal priority",
          ("PrioritizedReplayBuffer",),
          _max_priority_inputs, _max_priority_probe, _max_priority_verdict,
          calls=(SUM_TREE,),
          asks="add gives each new transition max_priority ** alpha, where max_priority "
               "starts at 1, follows the largest |delta| + epsilon and never decreases.",
          rules=(NEW_AT_MAX_PRIORITY, MAX_PRIORITY_NEVER_DECREASES)),
    Check("test_sampling_follows_priorities", "sampling follows p^alpha",
          ("PrioritizedReplayBuffer",),
          _frequency_inputs, _frequency_probe, _frequency_verdict,
          calls=(SUM_TREE,),
          asks="sample draws each stored transition with probability p_i^alpha / sum "
               "p^alpha (a chi-square test).",
          rules=(SAMPLING_PROPORTIONAL, SAMPLE_RETURNS)),
    Check("test_stratified_sampling", "stratified sampling", ("PrioritizedReplayBuffer",),
          _stratified_inputs, _stratified_probe, _stratified_verdict,
          calls=(SUM_TREE,),
          asks="sample draws one mass from each equal slice of the total, independently, "
               "from the buffer's own seeded generator self.rng.",
          rules=(STRATIFIED, SLICES_INDEPENDENT, OWN_GENERATOR, SAMPLE_RETURNS)),
    Check("test_importance_weights", "importance-sampling weights",
          ("PrioritizedReplayBuffer",), _weights_inputs, _weights_probe, _weights_verdict,
          calls=(SUM_TREE,),
          asks="sample's weights are (N P(i))^-beta divided by the batch's largest, for "
               "beta 0, in between and 1, with alpha = 0 and with one transition stored.",
          rules=(WEIGHTS_FORMULA, WEIGHTS_DIVIDED_BY_MAX, WEIGHTS_BETA_ENDS,
                 ALPHA_ZERO_UNIFORM, BATCH_LARGER_THAN_BUFFER, SAMPLE_RETURNS)),
    Check("test_priority_updates", "update_priorities", ("PrioritizedReplayBuffer",),
          _updates_inputs, _updates_probe, _updates_verdict,
          calls=(SUM_TREE,),
          asks="update_priorities stores (|delta| + epsilon)^alpha with the buffer's alpha "
               "and epsilon, for zero, negative and repeated entries too, and changes "
               "neither other slots nor its inputs.",
          rules=(PRIORITY_FORMULA, EPSILON_ADDED, BUFFER_PARAMETERS, REPEATED_SLOTS,
                 UPDATE_LEAVES_INPUTS)),
    Check("test_wraparound", "overwriting when full", ("PrioritizedReplayBuffer",),
          _wrap_inputs, _wrap_probe, _wrap_verdict,
          calls=(SUM_TREE,),
          asks="Once full, add overwrites the oldest transition and gives its slot the "
               "maximal priority, and len stays at the capacity.",
          rules=(OVERWRITES_OLDEST, OVERWRITTEN_SLOT_PRIORITY, LEN_AFTER_WRAP,
                 BATCH_LARGER_THAN_BUFFER, SAMPLE_RETURNS)),
    Check("test_no_empty_or_out_of_range_samples", "no empty or out-of-range samples",
          ("PrioritizedReplayBuffer",), _range_inputs, _range_probe, _range_verdict,
          calls=(SUM_TREE,),
          asks="sample never returns an empty slot, not after many random priority updates "
               "and not for a mass a hair below the total, and its weights lie in (0, 1].",
          rules=(SAMPLE_FILLED_SLOTS, SAMPLE_RETURNS, WEIGHTS_DIVIDED_BY_MAX)),
    Check("test_errors", "errors for bad input", ("PrioritizedReplayBuffer", "SumTree"),
          _errors_inputs, _errors_probe, _errors_verdict,
          calls=(SUM_TREE,),
          asks="sample, update_priorities and SumTree.update raise ValueError with a message "
               "for empty buffers, batch sizes <= 0, NaN or infinite TD errors, slots out of "
               "range and negative or NaN priorities.",
          rules=(SAMPLE_REFUSES, UPDATE_REFUSES, TREE_REFUSES)),
    Check("test_beta_schedule", "annealing beta", ("annealed_beta",),
          _beta_inputs, _beta_probe, _beta_verdict,
          asks="annealed_beta rises linearly from beta_start (0.4 by default, 0 allowed) to "
               "1 at total_steps and stays at 1.",
          rules=(BETA_LINEAR, BETA_STAYS_AT_ONE, BETA_START_DEFAULT)),
    Check("test_weighted_update", "weighted Q-learning update", ("prioritized_q_update",),
          _weighted_inputs, _weighted_probe, _weighted_verdict,
          calls=(AGENT,),
          asks="prioritized_q_update sets Q to Q + alpha * weight * delta and returns delta, "
               "computed before the update, with no bootstrap when done.",
          rules=(WEIGHTED_STEP, TD_ERROR_BEFORE_UPDATE, NO_BOOTSTRAP_WHEN_DONE)),
    Check("test_per_loop", "play_and_train_with_per", ("play_and_train_with_per",),
          _loop_inputs, _loop_probe, _loop_verdict,
          asks="Each step updates online, stores the transition with done=terminated, "
               "replays one weighted batch with the beta given (0 included) and feeds its TD "
               "errors back; the episode ends as lesson 01's does.",
          rules=(LOOP_EPISODE_ENDS, LOOP_STORES_EACH_STEP, LOOP_STORES_TERMINATED,
                 LOOP_ONE_BATCH_PER_STEP, LOOP_FEEDS_BACK_TD_ERRORS,
                 LOOP_ONLINE_THEN_REPLAY)),
    Check("test_cliffwalk_learning", "PER on the Blind Cliffwalk",
          ("PrioritizedReplayBuffer",), _cliffwalk_inputs, _cliffwalk_probe,
          _cliffwalk_verdict, time_limit=60.0, learning=True, prepare=_cliffwalk_baseline,
          calls=(SUM_TREE,),
          asks="On Blind Cliffwalks you have not seen, your buffer needs at most half the "
               "updates uniform replay needs (median), judged by replaying the slots it drew.",
          rules=(PER_BEATS_UNIFORM, SAMPLE_FILLED_SLOTS)),
])
