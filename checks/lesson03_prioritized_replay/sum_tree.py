"""Lesson 03's checks of SumTree: its totals and layout after batched updates, and its
prefix-sum search."""

import math

import numpy as np

from checks.contracts import INPUTS_UNTOUCHED, NUMPY_SCALARS
from checks.expected import expected as reference
from checks.framework import (attempted, call_student, failed, fill_in_place, kept_with,
                              passed, result_by_reference, wrong_amount)
from checks.lesson03_prioritized_replay.driving import (
    LESSON, _attempt, _close, _new_tree, _numbers, _tree_find, _tree_get, _tree_total,
    _tree_update)
from checks.requirements import Rule


# --- the rules: what the lesson tells a student, as its checks test it ---------------------

# test_sumtree_totals
TREE_TOTAL = Rule("tree-total", "tree.total is the sum of the priorities the tree holds after "
                  "any batches of updates, a slot given twice or two slots under one parent "
                  "in one batch included: each parent is recomputed from its two children.")
TREE_FLOAT64 = Rule("tree-float64", "The tree holds priorities and sums in float64: get returns "
                    "exactly what update set, and sums do not drift.")
TREE_LAYOUT = Rule("tree-layout", "nodes is one float64 array of length 2L, L the smallest power "
                   "of two >= capacity, with the root at node 1, slot i at node L + i and "
                   "node 0 unused.")
# test_sumtree_prefix_sum
SEARCH_INTERVAL = Rule("search-interval", "find_prefix_sum(m) returns the slot i with "
                       "p_0 + ... + p_(i-1) <= m < p_0 + ... + p_i.")
SEARCH_TIE_GOES_RIGHT = Rule("search-tie-goes-right", "A mass equal to a running sum "
                             "p_0 + ... + p_i belongs to the next slot: go right when m >= "
                             "the left child's sum, which also skips slots of priority 0.")
SEARCH_CLAMPED = Rule("search-clamped", "Masses are clamped into [0, total) and slots to "
                      "capacity - 1, so every search returns a slot that exists, even for a "
                      "mass a hair below the total.")
# find_prefix_sum leaves its masses as they were: held on every call (checks.contracts)
SEARCH_LEAVES_MASSES = INPUTS_UNTOUCHED
# what get returns stays the caller's, never a view of nodes (test_sumtree_totals)
GET_RESULT_ITS_OWN = INPUTS_UNTOUCHED


# --- the sum tree: totals ----------------------------------------------------------------

def _totals_inputs(rng):
    power = 2 ** int(rng.integers(7, 12))
    return {"capacity": power + int(rng.integers(1, power)),  # never a power of two
            "batches": 300, "seed": int(rng.integers(2**31)),
            "root_capacity": int(rng.integers(100, 200)), "root_seed": int(rng.integers(2**31))}


ROOT_BATCHES = 40  # a sum of the leaves in another order equals the root about 2 times
# in 3 (measured on 200 trees of 20 to 200 uniform priorities): all 40 alike, 1e-7


def root_batches(inputs):
    """Batches of uniform priorities for every slot of a tree of ``root_capacity``: sums
    made in another order than the tree's differ from its root in the last digits."""
    rng = np.random.default_rng(inputs["root_seed"])
    return rng.uniform(0.0, 1.0, size=(ROOT_BATCHES, inputs["root_capacity"]))


def update_batches(inputs):
    """The batches of (slots, priorities) both the probe and the verdict replay: slots
    repeat within a batch (with one priority each) and share parents; priorities span
    twelve orders of magnitude, where float32 sums drift. One batch in six gives a single
    priority (a Python float) for all its slots, as the lesson allows; one in six gives
    integer priorities (in turn an int64 array, a list of Python ints and a list of
    np.int64 scalars), and one in six a single Python int, as the lesson's own example
    tree does: a priority is any number."""
    rng = np.random.default_rng(inputs["seed"])
    batches = []
    for number in range(inputs["batches"]):
        size = int(rng.integers(1, 65))
        base = int(rng.integers(inputs["capacity"]))
        slots = (base + rng.integers(0, 8, size=size)) % inputs["capacity"]  # neighbours
        values = np.exp(rng.uniform(-14, 14, size=inputs["capacity"]))
        if number % 6 == 5:
            batches.append((slots, float(values[base])))  # one priority for every slot
        elif number % 6 == 2:
            whole = np.round(values[slots]).astype(np.int64)
            form = number // 6 % 3
            batches.append((slots, whole if form == 0 else whole.tolist() if form == 1
                            else list(whole)))  # list(): np.int64 scalars
        elif number % 6 == 3:
            batches.append((slots, int(round(values[base]))))
        else:
            batches.append((slots, values[slots]))  # a repeated slot gets one priority
    return batches


def priorities_form(priorities):
    """How a batch of :func:`update_batches` gives its priorities, in words."""
    if isinstance(priorities, (int, float)):
        return f"one Python {type(priorities).__name__} for every slot"
    if isinstance(priorities, np.ndarray):
        return f"{'an' if priorities.dtype.name[0] in 'aeiou' else 'a'} {priorities.dtype} array"
    if priorities and isinstance(priorities[0], np.generic):
        return f"a list of np.{type(priorities[0]).__name__} scalars"
    return "a list of Python ints"


def _totals_probe(inputs, SumTree):
    tree = _new_tree(SumTree, inputs["capacity"])
    totals = []
    for number, (slots, priorities) in enumerate(update_batches(inputs), 1):
        _, refused = _attempt(_tree_update, tree, slots, priorities)
        if refused:  # a valid batch refused: the verdict says which form of priorities
            return {"refused": {"batch": number, "form": priorities_form(priorities),
                                "slots": np.asarray(slots).tolist(),
                                "priorities": np.asarray(priorities).reshape(-1).tolist(),
                                "why": refused}}
        totals.append(_tree_total(tree))
    # the layout the lesson prescribes: one float64 array `nodes` of length 2L, also
    # when the capacity is itself a power of two (then L = capacity)
    exact = _new_tree(SumTree, LAYOUT_POWER)
    exact_nodes = getattr(exact, "nodes", None)
    # and at capacity 1: L = 1, two nodes (node 0 unused, the root is the only leaf)
    single = _new_tree(SumTree, 1)
    single_nodes = getattr(single, "nodes", None)
    if single_nodes is not None:
        _tree_update(single, [0], SINGLE_PRIORITY)
    nodes = getattr(tree, "nodes", None)
    flat = None if nodes is None else np.asarray(nodes, dtype=np.float64).reshape(-1)
    layout = (None if nodes is None else
              {"length": int(np.size(nodes)), "dtype": str(np.asarray(nodes).dtype),
               "leaves": flat[_power_of_two(inputs["capacity"]):][:inputs["capacity"]].tolist(),
               "root": float(flat[1]), "node_zero": float(flat[0])})
    # the total read against the root node, after each of many batches
    rooted = _new_tree(SumTree, inputs["root_capacity"])
    roots = []
    for priorities in root_batches(inputs) if hasattr(rooted, "nodes") else ():
        _tree_update(rooted, np.arange(inputs["root_capacity"]), priorities)
        # the root read first, right after the update: the sums are made by update itself
        root = float(np.asarray(rooted.nodes, dtype=np.float64).reshape(-1)[1])
        roots.append([_tree_total(rooted), root])
    return {"roots": roots,
            "totals": totals, "leaves": _tree_get(tree, list(range(inputs["capacity"]))),
            # one slot alone: still a 1-d array of one priority
            "last_leaf": _tree_get(tree, [inputs["capacity"] - 1]),
            "layout": layout, "power_length": None if exact_nodes is None
            else int(np.size(exact_nodes)),
            "single": None if single_nodes is None else
            {"length": int(np.size(single.nodes)), "total": _tree_total(single)},
            "gets_kept": _gets_kept(SumTree, inputs)}


# --- the sum tree: what get returns stays the caller's --------------------------------------

GET_WRITTEN = -7.25  # what the probe writes into the results it keeps (no priority is negative)


def _kept_gets(inputs):
    """The reads of :func:`_gets_kept`, as ``(words, slots)``: every shape of slots a fast
    path could answer with a slice of ``nodes`` (a view): a run of consecutive slots, all
    of them in order, every other slot, a single slot; and slots in no order."""
    capacity = inputs["root_capacity"]
    start = capacity // 3
    return [("a run of consecutive slots", list(range(start, start + 6))),
            ("every slot in order", list(range(capacity))),
            ("every other slot", list(range(1, capacity, 2))),
            ("a single slot", [capacity - 1]),
            ("slots in no order", [5, 2, capacity - 2, 0, 9])]


def _get_priorities(inputs):
    """The priorities of the tree :func:`_gets_kept` reads (0.5, 1, 1.5, ...), then those a
    later update gives it (each + 100), and those of a second tree (in reverse order)."""
    first = 0.5 * np.arange(1, inputs["root_capacity"] + 1)
    return first, first + 100.0, first[::-1].copy()


def _later_gets(inputs):
    """The calls made after the reads of :func:`_kept_gets`, as words (see _gets_kept)."""
    capacity = inputs["root_capacity"]
    return ["tree.get(slots) of every slot in reverse order on the same tree",
            "tree.update(every slot, new priorities) on the same tree",
            (f"tree.get(slots) of the same slots on a second SumTree({capacity}) holding "
             "other priorities")]


def _gets_kept(SumTree, inputs):
    """Results of tree.get kept where the student's code returned them: read right after
    each call, again after each later call of :func:`_later_gets` (until one changes
    them), then written into by the caller, after which the tree's priorities and total
    are read: a result that is a view of ``nodes`` changes with the tree, and the tree with
    it."""
    capacity = inputs["root_capacity"]
    first, updated, other = _get_priorities(inputs)
    tree = _new_tree(SumTree, capacity)
    _tree_update(tree, np.arange(capacity), first)
    kept, before = [], []
    for _, slots in _kept_gets(inputs):
        result = call_student("tree.get(slots)", result_by_reference, tree.get,
                              np.asarray(slots, dtype=np.int64))
        kept.append(result)
        before.append(_numbers(list(result), "tree.get(slots)", len(slots)))
    changed = None

    def reread(then):
        nonlocal changed
        if changed is None:
            for number, (result, was) in enumerate(zip(kept, before)):
                now = _numbers(list(result), "what an earlier tree.get(slots) returned",
                               len(was))
                if now != was:
                    changed = {"read": number, "then": then, "after": now}
                    return

    call_student("tree.get(slots)", tree.get, np.arange(capacity - 1, -1, -1))
    reread(0)
    _tree_update(tree, np.arange(capacity), updated)
    reread(1)
    second = _new_tree(SumTree, capacity)
    _tree_update(second, np.arange(capacity), other)
    for _, slots in _kept_gets(inputs):
        call_student("tree.get(slots)", second.get, np.asarray(slots, dtype=np.int64))
    reread(2)
    written = []  # the results the caller could write into (a read-only copy is fine)
    for number, result in enumerate(kept):
        try:
            fill_in_place(result, GET_WRITTEN)
            written.append(number)
        except Exception:  # read-only: nothing can leak through it
            pass
    return {"before": before, "changed": changed, "written": written,
            "leaves": _tree_get(tree, list(range(capacity))), "total": _tree_total(tree)}


def _gets_kept_problem(inputs, data):
    """A failed verdict when an earlier result of get changed with a later call, or the
    tree changed when the caller wrote into what get returned (see _gets_kept); None when
    every result stayed the caller's."""
    if data is None:
        return None
    capacity = inputs["root_capacity"]
    _, updated, _ = _get_priorities(inputs)
    reads, later = _kept_gets(inputs), _later_gets(inputs)
    advice = ("What get returns stays the caller's: return a new array on every call "
              "(fancy indexing, nodes[L + slots], makes one; a slice such as nodes[a:b] is a "
              "view of the tree, whatever the slots), never a view of nodes nor an array "
              "the tree keeps and fills again.")
    before, changed = data.get("before") or [], data.get("changed")
    if changed:
        read, then = changed.get("read"), changed.get("then")
        words, slots = reads[read] if isinstance(read, int) and 0 <= read < len(reads) else (
            "some slots", [])
        was = before[read] if isinstance(read, int) and read < len(before) else []
        now = changed.get("after") or []
        entry = next((i for i, (a, b) in enumerate(zip(was, now)) if a != b), 0)
        what = later[then] if isinstance(then, int) and 0 <= then < len(later) else (
            "later calls")
        shown = ", ".join(str(slot) for slot in slots[:6]) + (", ..." if len(slots) > 6
                                                              else "")
        return failed(f"in a SumTree({capacity}) holding priorities 0.5, 1, 1.5, ..., "
                      f"tree.get([{shown}]) ({words}) returned "
                      f"{[round(value, 6) for value in was[:6]]}; after a later "
                      f"{what}, that earlier result held {(now + [None] * (entry + 1))[entry]!r} "
                      f"where it had returned {(was + [None] * (entry + 1))[entry]!r} "
                      f"(entry #{entry}). {advice}", rule=GET_RESULT_ITS_OWN)
    written = data.get("written") or []
    leaves, total = data.get("leaves") or [], data.get("total")
    if written and (leaves != updated.tolist() or not _close(total, math.fsum(updated))):
        slot = next((i for i, (got, want) in enumerate(zip(leaves, updated)) if got != want),
                    None)
        words, slots = reads[written[0]]
        held = (f"slot {slot} held {leaves[slot]!r} where the tree had been given "
                f"{float(updated[slot])!r}" if slot is not None else
                f"total was {total!r} where the priorities sum to {math.fsum(updated)!r}")
        return failed(f"in a SumTree({capacity}), after the caller wrote {GET_WRITTEN} into "
                      f"the arrays tree.get(slots) had returned ({words} and others), the "
                      f"tree itself had changed: {held}. Changing a result must not change "
                      f"the tree. {advice}", rule=GET_RESULT_ITS_OWN)
    return None


LAYOUT_POWER = 16
SINGLE_PRIORITY = 2.5  # the one priority of a SumTree(1)


def _power_of_two(capacity):
    """L, the smallest power of two >= capacity: the number of leaves."""
    return 1 << (capacity - 1).bit_length()


def _refused_batch_problem(inputs, refused):
    """The failed verdict for a valid batch of updates ``refused`` (see _totals_probe)."""
    numpy = refused["form"].startswith("a list of np.")

    def shown(values):
        return ", ".join(repr(value) for value in values[:6]) + (", ..." if len(values) > 6
                                                                 else "")

    return failed(f"in a SumTree({inputs['capacity']}), update batch {refused['batch']} of "
                  f"{inputs['batches']}, tree.update(slots, priorities) with slots "
                  f"[{shown(refused['slots'])}] and the priorities as {refused['form']} "
                  f"({shown(refused['priorities'])}) failed: {refused['why']}. "
                  + ("Numbers may arrive as numpy scalars (np.int64, np.float64), as a row "
                     "of a numpy batch holds them: treat them exactly as Python's numbers "
                     "(np.asarray(priorities, dtype=np.float64) takes them all)."
                     if numpy else
                     "A priority is any finite number >= 0, whole or not, 0 included (the "
                     "lesson's own example tree holds 3, 1, 2, 0, ...), given as an array "
                     "or a list of them or as one number for every slot: take them all as "
                     "float64 and refuse only negative or NaN priorities."),
                  rule=NUMPY_SCALARS if numpy else TREE_TOTAL)


def _totals_verdict(inputs, data):
    batches = inputs["batches"]
    if data.get("refused"):
        return _refused_batch_problem(inputs, data["refused"])
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
    last = inputs["capacity"] - 1
    leaves = [*zip(range(inputs["capacity"]), data["leaves"], expected["leaves"]),
              (last, (data.get("last_leaf") or [None])[0], expected["leaves"][last])]
    for slot, got, want in leaves:
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
    for total, root in data.get("roots") or []:  # exactly: searches walk from the root
        if total != root:
            return failed(f"after updating every slot of a SumTree("
                          f"{inputs['root_capacity']}) with uniform priorities, total is "
                          f"{total!r} but the root node nodes[1] held {root!r} right after the "
                          "update: update recomputes every sum above the slots it sets, and "
                          "total is the root, read from it (a sum of the leaves made in another "
                          "order rounds differently, and a search for a mass near the total then "
                          "walks past the last priority).", rule=TREE_LAYOUT)
    if layout.get("node_zero") != 0.0:
        return failed(f"after the updates SumTree({capacity}).nodes[0] holds "
                      f"{layout.get('node_zero')!r}: node 0 is unused (the root is node 1), so "
                      "it stays 0; a climb to the parents that goes one level past the root "
                      "writes there.", rule=TREE_LAYOUT)
    if data.get("power_length") != 2 * LAYOUT_POWER:
        return failed(f"SumTree({LAYOUT_POWER}).nodes has length {data.get('power_length')}; "
                      f"with a capacity that is a power of two, L = {LAYOUT_POWER} and nodes "
                      f"has length 2L = {2 * LAYOUT_POWER}.", rule=TREE_LAYOUT)
    single = data.get("single") or {}
    if single.get("length") != 2 or single.get("total") != SINGLE_PRIORITY:
        return failed(f"SumTree(1).nodes has length {single.get('length')} and, after "
                      f"update([0], {SINGLE_PRIORITY}), total is {single.get('total')!r}; with "
                      "capacity 1, L = 1 (2**0 is a power of two), so nodes has length 2 and "
                      "node 1 is both the root and slot 0's leaf.", rule=TREE_LAYOUT)
    problem = _gets_kept_problem(inputs, data.get("gets_kept"))
    if problem:
        return problem
    return passed(f"the total matches the sum of {inputs['capacity']} priorities after "
                  f"{batches} batches of updates spanning 28 orders of magnitude, "
                  "repeated slots included; nodes has the lesson's layout; what get returns "
                  "stays the caller's.")


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
    # and scaled by 2^-60 and 2^50 (exact too): a clamp with a fixed margin (total - 1e-12)
    # is below 0 for the first and rounds back to the total for the second
    for scale in (2.0 ** -60, 2.0 ** 50):
        cases.append({"priorities": [p * scale for p in small["priorities"]],
                      "masses": [m * scale for m in small["masses"]]})
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
    # masses as an integer array (whole numbers are masses too): the same slots
    case = inputs["cases"][0]
    tree = _new_tree(SumTree, len(case["priorities"]))
    _tree_update(tree, list(range(len(case["priorities"]))), case["priorities"])
    whole = _whole_masses(case)
    slots = attempted(call_student, "tree.find_prefix_sum(masses) with integer masses",
                      tree.find_prefix_sum, np.asarray(whole, dtype=np.int64))
    # no masses at all: no slots, still a 1-d integer array (the contract holds its type)
    call_student("tree.find_prefix_sum(masses) with no masses", tree.find_prefix_sum,
                 np.zeros(0, dtype=np.float64))
    return {"found": found, "kept": _masses_kept(SumTree, inputs["cases"][1]),
            "earlier": _earlier_slots_kept(SumTree, inputs["cases"][1]),
            "whole": slots if "raised" in slots else _numbers(
                slots["value"], "tree.find_prefix_sum(masses)", len(whole), integers=True)}


def _whole_masses(case):
    """The whole numbers among ``case``'s masses (its boundaries, -1, the total, past it)."""
    return [int(mass) for mass in case["masses"] if float(mass).is_integer()]


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


def _later_searches(case):
    """The searches made after the one whose slots are kept (see _earlier_slots_kept):
    ``(words, priorities of the tree searched or None for the same tree, masses)``. Each
    finds other slots than the kept search: the masses in reverse order, as many and then
    half as many (a buffer kept on the tree and grown when needed is refilled by either),
    and the same masses in a second tree holding the priorities in reverse order (a buffer
    shared by every tree)."""
    masses = case["masses"]
    backwards = masses[::-1]
    return [("the same masses in reverse order on the same tree", None, backwards),
            (f"the first {len(masses) // 2} of those on the same tree", None,
             backwards[:len(masses) // 2]),
            ("the same masses on a second SumTree holding the priorities in reverse order",
             case["priorities"][::-1], masses)]


def _earlier_slots_kept(SumTree, case):
    """The slots of one search of ``case``'s masses, kept where the student's code returned
    them: read right after the search and again after each later search of
    :func:`_later_searches`, until one changes them."""
    tree = _new_tree(SumTree, len(case["priorities"]))
    _tree_update(tree, list(range(len(case["priorities"]))), case["priorities"])
    count = len(case["masses"])
    kept = call_student("tree.find_prefix_sum(masses)", result_by_reference,
                        tree.find_prefix_sum, np.asarray(case["masses"], dtype=np.float64))
    before = _numbers(list(kept), "tree.find_prefix_sum(masses)", count, integers=True)
    after = before
    for number, (_, priorities, masses) in enumerate(_later_searches(case)):
        searched = tree
        if priorities is not None:
            searched = _new_tree(SumTree, len(priorities))
            _tree_update(searched, list(range(len(priorities))), priorities)
        call_student("tree.find_prefix_sum(masses)", searched.find_prefix_sum,
                     np.asarray(masses, dtype=np.float64))
        after = _numbers(list(kept), "the slots an earlier tree.find_prefix_sum(masses) "
                         "returned", count, integers=True)
        if after != before:
            return {"before": before, "after": after, "then": number}
    return {"before": before, "after": after, "then": None}


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
    first = inputs["cases"][0]
    whole = _whole_masses(first)
    expected = reference(LESSON, "brute_force_prefix_search", first["priorities"], whole)
    got = data.get("whole")
    if got != list(expected):
        what = got["raised"] if isinstance(got, dict) and "raised" in got else (
            f"returned slots {got}")
        return failed(f"tree.find_prefix_sum(masses) given the masses {whole} as an integer "
                      f"array: {what}; as floats they are in slots "
                      f"{list(expected)}. Whole numbers are masses too: work on a float copy "
                      "(np.asarray(masses, dtype=np.float64)).", rule=SEARCH_INTERVAL)
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
    problem = _earlier_slots_problem(inputs["cases"][1], data.get("earlier"))
    if problem:
        return problem
    sizes = ", ".join(str(len(case["priorities"])) for case in inputs["cases"])
    return passed(f"every search agrees with a brute-force running sum, boundaries, empty "
                  f"slots and out-of-range masses included (capacities {sizes}), and leaves "
                  "the masses it is given unchanged.")


def _earlier_slots_problem(case, earlier):
    """A failed verdict when a later search changed the slots an earlier one returned
    (see _earlier_slots_kept); None when they stayed as returned."""
    earlier = earlier or {}
    before, after = earlier.get("before"), earlier.get("after")
    if before == after and before is not None:
        return None
    then = earlier.get("then")
    later = _later_searches(case)
    what = later[then][0] if isinstance(then, int) and 0 <= then < len(later) else (
        "later searches")
    changed = next((i for i, (was, now) in enumerate(zip(before or [], after or []))
                    if was != now), 0)
    shown = ", ".join(str(slot) for slot in (before or [])[:8])
    return failed(f"in a SumTree({len(case['priorities'])}), tree.find_prefix_sum(masses) of "
                  f"{len(case['masses'])} masses returned the slots [{shown}, ...]; after a "
                  f"later search of {what}, that earlier result held "
                  f"{(after or [None] * (changed + 1))[changed]!r} where it had returned "
                  f"{(before or [None] * (changed + 1))[changed]!r} (entry #{changed}). "
                  "The slots a search returns stay the caller's: return a new array on every "
                  "call, never one the tree (or the class) keeps and fills again on the next "
                  "search, nor a view of one.", rule=SEARCH_LEAVES_MASSES)


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
