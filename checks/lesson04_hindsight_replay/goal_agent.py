"""Lesson 04's check of GoalConditionedAgent: its legal actions, initial values, update
and seeded random choices (exploring, epsilon's coin, greedy ties)."""

import math

import numpy as np

from checks.contracts import INPUTS_UNTOUCHED, NUMPY_SCALARS, numpy_form
from checks.expected import expected as reference
from checks.statistics import FALSE_FAILURE_RATE, fits
from checks.framework import (NotWrittenYet, ProbeError, call_student,
                              call_student_repeatedly, failed,
                              fill_in_place, passed, reseed_global_generators,
                              result_by_reference, wrong_amount)
from checks.lesson04_hindsight_replay.driving import LESSON
from checks.requirements import Rule


# --- the rules the checks test, grouped by check (the lesson's text tags each one) -------------

# test_goal_agent
AGENT_LEGAL_ACTIONS = Rule("agent-legal-actions", "The legal actions of every (state, goal) "
                           "pair are the n_bits flips 0 .. n_bits - 1.")
AGENT_INITIAL_VALUE = Rule("agent-initial-value", "A Q-value never set is initial_value.")
INITIAL_VALUE_ZERO = Rule("initial-value-zero", "0.0 is a value like any other, not a "
                          "missing one: initial_value=0.0 starts unseen Q-values at 0.0, not "
                          "at the default, and a Q-value set to 0.0 reads back as 0.0.")
AGENT_DEFAULT_INITIAL_VALUE = Rule("agent-default-initial-value", "Without initial_value, "
                                   "unseen Q-values start at -10.0.")
AGENT_UPDATE = Rule("agent-update", "update follows lesson 01's rule and changes only the "
                    "Q-value of the pair and action it updates.")
AGENT_TIES = Rule("agent-greedy-ties-at-random", "Lesson 01's greedy choice holds for pairs "
                  "too: among flips of equal largest Q-value, one at random.")
AGENT_SEEDED = Rule("agent-seeded", "The agent's random choices come from lesson 01's agent's "
                    "own generator, seeded with seed: equal seeds (0 included) give equal "
                    "actions.")


# --- the goal-conditioned agent --------------------------------------------------------------

def _agent_inputs(rng):
    n_bits = int(rng.integers(3, 7))
    pairs = [[int(rng.integers(2 ** n_bits)), int(rng.integers(2 ** n_bits))] for _ in range(6)]
    updates = [[p, int(rng.integers(n_bits)), -1.0, q, False] for p, q in zip(pairs, pairs[1:])]
    # the first pair again with another action: its first update's Q-value must stay
    first = updates[0]
    updates.append([first[0], (first[1] + 1 + int(rng.integers(n_bits - 1))) % n_bits, -1.0,
                    first[3], False])
    # an int, as a caller may write it (-10): the table still holds floats after updates
    inputs = {"n_bits": n_bits, "initial_value": -int(rng.integers(2, 20)),
              "alpha": round(float(rng.uniform(0.2, 0.8)), 2), "discount": 0.9,
              "pairs": pairs, "updates": updates, "seed": int(rng.integers(2**31))}
    # then two terminal updates in a row (a success: reward 0.0, nothing after it to
    # bootstrap from), so that one gets Python's True and the other np.bool_(True)
    # (_numpy_update). Their next pairs were updated before: every Q-value of theirs is
    # below 0, so a terminal update that bootstraps from them lands elsewhere
    for pair, next_pair in ((pairs[3], pairs[0]), (pairs[4], pairs[1])):
        updates.append([pair, int(rng.integers(n_bits)), 0.0, next_pair, True])
    return inputs


def _numpy_update(index, flipped=False):
    """Whether update ``index`` (0-based) of the inputs is passed with numpy scalars: every
    other one, the second, fourth, ... (``flipped``: the first, third, ...), as the
    framework passes a method's numbers on every other call (checks.contracts:
    GoalConditionedAgent.update's contract). The probe passes them so itself, the pairs'
    numbers too, so the verdict knows which were."""
    return index % 2 == (0 if flipped else 1)


def _update_arguments(update, numpy):
    """The arguments of ``update``: (pair, action, reward, next_pair, terminated), in numpy's
    forms (np.int64, np.float64, np.bool_) when ``numpy``."""
    pair, action, reward, next_pair, done = update
    arguments = (tuple(pair), action, reward, tuple(next_pair), done)
    if not numpy:
        return arguments
    return tuple(tuple(numpy_form(number) for number in argument)
                 if isinstance(argument, tuple) else numpy_form(argument)
                 for argument in arguments)


def _update_words(update, numpy):
    """How ``update`` was called, in words (numpy's forms shown as such)."""
    shown = []
    for argument in _update_arguments(update, numpy):
        if isinstance(argument, tuple):
            shown.append("(" + ", ".join(_number_words(number) for number in argument) + ")")
        else:
            shown.append(_number_words(argument))
    return f"update({', '.join(shown)})"


def _number_words(number):
    """A number as a caller writes it: numpy's as np.int64(3), np.float64(-1.0), np.bool_(True)."""
    if isinstance(number, np.bool_):
        return f"np.bool_({bool(number)!r})"
    if isinstance(number, np.generic):
        return f"np.{type(number).__name__}({number.item()!r})"
    return repr(number)


def _first_wrong(after, history):
    """The index of the first Q-value of ``after`` that is not the reference's (``history``),
    or None."""
    for index, (got, want) in enumerate(zip(after, history)):
        if not (isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=1e-9,
                                                               abs_tol=1e-9)):
            return index
    return None


def _updates_run(inputs, agent, flipped):
    """Q(pair, action) read after each of the inputs' updates of ``agent``, every other one
    given numpy scalars (_numpy_update); {"numpy update refused": [index, flipped, error]}
    when one given numpy scalars raised (those before it worked)."""
    after = []
    for index, update in enumerate(inputs["updates"]):
        numpy = _numpy_update(index, flipped)
        try:
            call_student(_update_words(update, numpy), agent.update,
                         *_update_arguments(update, numpy))
        except NotWrittenYet:
            raise
        except ProbeError as error:
            if not numpy:
                raise
            return {"numpy update refused": [index, flipped, str(error)]}
        pair, action = tuple(update[0]), update[1]
        after.append(float(call_student("get_qvalue", agent.get_qvalue, pair, action)))
    return after


def _agent_probe(inputs, GoalConditionedAgent):
    n_bits = inputs["n_bits"]
    agent = call_student("GoalConditionedAgent(...)", GoalConditionedAgent, n_bits,
                         alpha=inputs["alpha"], epsilon=0.0, discount=inputs["discount"],
                         initial_value=inputs["initial_value"], seed=inputs["seed"])
    pairs = [tuple(pair) for pair in inputs["pairs"]]
    initial = [[float(call_student("get_qvalue", agent.get_qvalue, pair, action))
                for action in range(n_bits)] for pair in pairs]
    legal = sorted(int(a) for a in call_student("get_legal_actions", agent.get_legal_actions,
                                                pairs[0]))
    # every other update with numpy scalars for its numbers and flag (_numpy_update), as a
    # replayed row of a numpy batch holds them, terminal ones included; then the same
    # updates of a new agent, each in the other form: an update wrong in numpy's form only
    # is numpy's doing, one wrong in Python's the update's own
    after = _updates_run(inputs, agent, flipped=False)
    twin = call_student("GoalConditionedAgent(...)", GoalConditionedAgent, n_bits,
                        alpha=inputs["alpha"], epsilon=0.0, discount=inputs["discount"],
                        initial_value=inputs["initial_value"], seed=inputs["seed"])
    # one update of another agent, on a pair of no state of n_bits bits, in between: the
    # framework's every other call (numpy's) then falls on the other updates
    spare = call_student("GoalConditionedAgent(...)", GoalConditionedAgent, n_bits,
                         alpha=inputs["alpha"], epsilon=0.0, discount=inputs["discount"],
                         initial_value=inputs["initial_value"], seed=inputs["seed"])
    call_student("update", spare.update, (2 ** n_bits, 0), 0, -1.0, (2 ** n_bits, 1), False)
    after_flipped = _updates_run(inputs, twin, flipped=True)
    # an update that raised given numpy scalars (its form in the other run worked, or the
    # other run would have raised above)
    for run in (after, after_flipped):
        if isinstance(run, dict):
            return run
    # every Q-value of each updated pair: an update changes its own action's only. Read
    # with the pair's numbers as numpy scalars (as a row of a batch holds them): the same
    # pair as the Python ints it was updated with
    rows = [[float(call_student("get_qvalue with numpy scalars", agent.get_qvalue,
                                tuple(np.int64(number) for number in pair), action))
             for action in range(n_bits)] for pair, *_ in inputs["updates"]]
    # a pair whose every Q-value is set below initial_value: its value is their largest
    # (lesson 01's get_value), not initial_value
    below = (2 ** n_bits + 1, 0)  # no state of n_bits bits: a pair of its own
    for action in range(n_bits):
        call_student("set_qvalue", agent.set_qvalue, below, action,
                     float(inputs["initial_value"] - 1 - action))
    value_below = float(call_student("get_value", agent.get_value, below))
    # Q-values set to 0.0 (a learned success: reward 0), in each form a number may come
    # in: read back, each is 0.0, not taken for a missing one (initial_value)
    for pair, action, value in _zero_settings(n_bits):
        call_student("set_qvalue", agent.set_qvalue, pair, action, value)
    set_to_zero = [float(call_student("get_qvalue", agent.get_qvalue, pair, action))
                   for pair, action, _ in _zero_settings(n_bits)]
    default = call_student("GoalConditionedAgent(n_bits, alpha, epsilon, discount)",
                           GoalConditionedAgent, n_bits, alpha=inputs["alpha"], epsilon=0.0,
                           discount=inputs["discount"], seed=inputs["seed"])
    by_default = float(call_student("get_qvalue", default.get_qvalue, pairs[0], 0))
    zero = call_student("GoalConditionedAgent(..., initial_value=0.0)", GoalConditionedAgent,
                        n_bits, alpha=inputs["alpha"], epsilon=0.0,
                        discount=inputs["discount"], initial_value=0.0, seed=inputs["seed"])
    from_zero = float(call_student("get_qvalue", zero.get_qvalue, pairs[0], 0))
    # two agents of one seed, exploring, with the global generators seeded apart: equal
    # actions unless the draws come from somewhere other than the agent's own generator
    # (and two of seed 0, a seed like any other: `seed or None` leaves them unseeded)
    explored = []
    for seed in _explorer_seeds(inputs):
        for offset in (0, 1):
            explorer = call_student(f"GoalConditionedAgent(..., epsilon=1.0, seed={seed})",
                                    GoalConditionedAgent, n_bits, alpha=inputs["alpha"],
                                    epsilon=1.0, discount=inputs["discount"],
                                    initial_value=inputs["initial_value"], seed=seed)
            reseed_global_generators(inputs["seed"] + offset, near=explorer)
            explored.append([int(action) for action in call_student_repeatedly(
                f"get_action({pairs[0]})", explorer.get_action, EXPLORING_DRAWS, pairs[0])])
    # greedy choices (epsilon 0) in a pair never seen, whose flips all tie, and in the
    # first updated pair, whose other flips tie below or above the updated one
    greedy = call_student(f"GoalConditionedAgent(..., epsilon=0.0, seed={inputs['seed']})",
                          GoalConditionedAgent, n_bits, alpha=inputs["alpha"], epsilon=0.0,
                          discount=inputs["discount"], initial_value=inputs["initial_value"],
                          seed=inputs["seed"])
    unseen = (2 ** n_bits, 2 ** n_bits)  # no state of n_bits bits: a pair never updated
    tied = [int(action) for action in call_student_repeatedly(
        f"get_action({unseen})", greedy.get_action, GREEDY_DRAWS_PER_FLIP * n_bits, unseen)]
    # every random choice is the agent's own generator's, whatever the global generators
    # hold: two agents of one seed, `random` and `np.random` seeded apart before each
    # (_twin_agents), act alike when greedy on tied flips and when ε-greedy's coin decides
    greedy_twins, mixed_twins = _twin_agents(inputs, GoalConditionedAgent)
    # a new agent's legal actions, refilled by the caller that was given them
    keeper = call_student("GoalConditionedAgent(...)", GoalConditionedAgent, n_bits,
                          alpha=inputs["alpha"], epsilon=0.0, discount=inputs["discount"],
                          initial_value=inputs["initial_value"], seed=inputs["seed"])
    refilled = _legal_actions_after_refill(keeper, pairs)
    return {"initial": initial, "legal": legal, "refilled": refilled, "after": after,
            "after_flipped": after_flipped,
            "rows": rows, "value_below": value_below, "set_to_zero": set_to_zero,
            "by_default": by_default, "from_zero": from_zero, "explored": explored,
            "tied": tied, "greedy_twins": greedy_twins, "mixed_twins": mixed_twins}


TWIN_DRAWS = 40  # per pair: independent choices agree on at most 2**-40 of runs
MIXED_EPSILON = 0.5  # the coin matters: greedy takes the one best flip, exploring any


def _twin_pairs(inputs):
    """The pairs twin agents are asked about, and the flips they set above initial_value:
    [(pair, best flips)] for the pair never seen (every flip ties), one whose two best flips
    tie, and one with a single best flip. Pairs of no state of n_bits bits: their own."""
    n_bits, seed = inputs["n_bits"], inputs["seed"]
    first = seed % n_bits
    second = (first + 1 + (seed // n_bits) % (n_bits - 1)) % n_bits
    return [((2 ** n_bits, 2 ** n_bits), list(range(n_bits))),
            ((2 ** n_bits + 8, 1), sorted([first, second])),
            ((2 ** n_bits + 9, 1), [first])]


def _twin_agent(inputs, GoalConditionedAgent, epsilon, offset):
    """A GoalConditionedAgent of the inputs' seed at ``epsilon``, its _twin_pairs' best flips
    set one above initial_value, with the global generators then seeded at seed + offset."""
    agent = call_student(f"GoalConditionedAgent(..., epsilon={epsilon}, seed={inputs['seed']})",
                         GoalConditionedAgent, inputs["n_bits"], alpha=inputs["alpha"],
                         epsilon=epsilon, discount=inputs["discount"],
                         initial_value=inputs["initial_value"], seed=inputs["seed"])
    for pair, best in _twin_pairs(inputs)[1:]:
        for action in best:
            call_student("set_qvalue", agent.set_qvalue, pair, action,
                         float(inputs["initial_value"] + 1))
    reseed_global_generators(inputs["seed"] + offset, near=agent)
    return agent


def _twin_agents(inputs, GoalConditionedAgent):
    """(greedy, mixed): for two agents of one seed at epsilon 0, each one's TWIN_DRAWS
    actions in every _twin_pairs pair; for two at MIXED_EPSILON, each one's actions in the
    pair with one best flip. The global generators are seeded apart for the two of each."""
    greedy, mixed = [], []
    for offset in (0, 1):
        agent = _twin_agent(inputs, GoalConditionedAgent, 0.0, offset)
        greedy.append([[int(action) for action in call_student_repeatedly(
            f"get_action({pair})", agent.get_action, TWIN_DRAWS, pair)]
            for pair, _ in _twin_pairs(inputs)])
    for offset in (0, 1):
        agent = _twin_agent(inputs, GoalConditionedAgent, MIXED_EPSILON, offset)
        pair = _twin_pairs(inputs)[-1][0]
        mixed.append([int(action) for action in call_student_repeatedly(
            f"get_action({pair})", agent.get_action, TWIN_DRAWS, pair)])
    return greedy, mixed


# the forms of a Q-value of 0.0 set_qvalue is given (one action each): Python's float, its
# negative zero, numpy's float (a batch's row holds it) and an int 0
ZERO_VALUES = (0.0, -0.0, np.float64(0.0), 0)


def _zero_settings(n_bits):
    """(pair, action, value) of each Q-value set to a form of 0.0: pairs of no state of
    n_bits bits, pairs of their own, each with one action set."""
    return [((2 ** n_bits + 2 + index, 0), index % n_bits, value)
            for index, value in enumerate(ZERO_VALUES)]


REFILL = -1  # what the caller writes into the legal actions it was given: no flip


def _explorer_seeds(inputs):
    """The seeds of the pairs of exploring agents: the inputs' own, and 0."""
    return (inputs["seed"], 0)


def _legal_actions_after_refill(agent, pairs):
    """[the legal actions of pairs[1], those of pairs[0] again], read after the caller
    overwrote what get_legal_actions(pairs[0]) gave it (kept where it was made) with
    REFILL, as a caller may reuse a list it was given: later calls must not see the
    change. None when the result cannot be written (a range, a tuple): it is the
    caller's anyway."""
    given = call_student(f"get_legal_actions({tuple(pairs[0])})", result_by_reference,
                         agent.get_legal_actions, pairs[0])
    try:
        fill_in_place(given, REFILL)
    except ProbeError:
        raise
    except (TypeError, ValueError, AttributeError, IndexError):
        return None  # not writable: nothing the caller does to it reaches the agent
    later = [pairs[1], pairs[0]]
    return [sorted(int(a) for a in call_student(f"get_legal_actions({tuple(pair)})",
                                                agent.get_legal_actions, pair))
            for pair in later]


GREEDY_DRAWS_PER_FLIP = 40  # flip 0 always chosen: chi-square p ~ 1e-30 or less at 3 bits


EXPLORING_DRAWS = 40  # two honest agents agree on all; two independent ones on 3**-40 of runs


def _agent_verdict(inputs, data):
    n_bits, start = inputs["n_bits"], inputs["initial_value"]
    if data.get("numpy update refused"):
        error = (list(data["numpy update refused"]) + ["", "", ""])[2]
        return failed(f"{str(error).rstrip('.')}, though the same update with Python's numbers "
                      "works. Numbers and flags may come as numpy scalars, as a row of a numpy "
                      "batch holds them: treat np.int64, np.float64 and np.bool_ exactly as "
                      "Python's (no isinstance(x, int) or type checks that refuse them).",
                      rule=NUMPY_SCALARS)
    problem = wrong_amount("rows of Q-values", data["initial"], len(inputs["pairs"]),
                           rule=AGENT_INITIAL_VALUE)
    if problem:
        return problem
    if data["legal"] != list(range(n_bits)):
        return failed(f"with {n_bits} bits the legal actions of every (state, goal) pair "
                      f"are the flips 0..{n_bits - 1}; get_legal_actions gave {data['legal']}.",
                      rule=AGENT_LEGAL_ACTIONS)
    refilled = data.get("refilled")
    if refilled is not None:
        problem = wrong_amount("lists of legal actions after the refill", refilled, 2,
                               rule=INPUTS_UNTOUCHED)
        if problem:
            return problem
        pairs = inputs["pairs"]
        for pair, got in zip((pairs[1], pairs[0]), refilled):
            if got != list(range(n_bits)):
                return failed(
                    f"the caller set every item of what get_legal_actions"
                    f"({tuple(pairs[0])}) returned to {REFILL} (a caller may reuse what it "
                    f"is given), and then get_legal_actions({tuple(pair)}) gave {got}, not "
                    f"the flips {list(range(n_bits))}: every call hands out the same list "
                    "(or array), the agent's own. What a call returns stays the caller's: "
                    "return a new list (or a range) on every call.", rule=INPUTS_UNTOUCHED)
    for pair, row in zip(inputs["pairs"], data["initial"]):
        if row != [start] * n_bits:
            return failed(f"a new GoalConditionedAgent(initial_value={start}) should give "
                          f"every Q-value of pair {tuple(pair)} as {start}; it gave {row}.",
                          rule=AGENT_INITIAL_VALUE)
    if data.get("from_zero") != 0.0:
        return failed("GoalConditionedAgent(..., initial_value=0.0) should start every "
                      f"Q-value at 0.0; get_qvalue({tuple(inputs['pairs'][0])}, 0) gave "
                      f"{data.get('from_zero')!r}. 0.0 is a value, not a missing one: keep "
                      "initial_value as given (`initial_value or -10.0` makes 0.0 -10.0).",
                      rule=INITIAL_VALUE_ZERO)
    problem = wrong_amount("Q-values read back after setting them to 0.0",
                           data.get("set_to_zero"), len(ZERO_VALUES), rule=INITIAL_VALUE_ZERO)
    if problem:
        return problem
    for (pair, action, value), got in zip(_zero_settings(n_bits), data["set_to_zero"]):
        if got != 0.0:
            return failed(f"in a GoalConditionedAgent(initial_value={start}), after "
                          f"set_qvalue({pair}, {action}, {value!r}) (a Q-value learned to be "
                          f"0.0: a success), get_qvalue({pair}, {action}) gave {got!r}, not "
                          "0.0. 0.0 is a value like any other, not a missing one: test "
                          "whether a Q-value was set with `is None` or `in`, never with "
                          "`value or initial_value` or `if not value`.", rule=INITIAL_VALUE_ZERO)
    if data["by_default"] != -10.0:
        return failed("GoalConditionedAgent(n_bits, alpha, epsilon, discount) without "
                      "initial_value should start every Q-value at the default -10.0; "
                      f"get_qvalue({tuple(inputs['pairs'][0])}, 0) gave {data['by_default']!r}.",
                      rule=AGENT_DEFAULT_INITIAL_VALUE)
    problem = wrong_amount("updates", data["after"], len(inputs["updates"]), rule=AGENT_UPDATE)
    if problem:
        return problem
    history = reference(LESSON, "goal_qvalues_after_updates", inputs)
    runs = [(False, data["after"]), (True, data.get("after_flipped"))]
    for _, after in runs[1:]:
        problem = wrong_amount("updates of the second agent", after, len(inputs["updates"]),
                               rule=AGENT_UPDATE)
        if problem:
            return problem
    firsts = [(flipped, _first_wrong(after, history)) for flipped, after in runs]
    # the first wrong update of a run, whose updates before it were right: given Python's
    # numbers, the update's own fault; given numpy's only (in its run, and right or never
    # reached in the other, where it came in Python's), numpy's
    for flipped, index in sorted(firsts, key=lambda first: first[1] is None
                                 or _numpy_update(first[1], first[0])):
        if index is None:
            continue
        update, got, want = inputs["updates"][index], runs[flipped][1][index], history[index]
        pair, action, done = tuple(update[0]), update[1], update[4]
        numpy = _numpy_update(index, flipped)
        said = (f"after {_update_words(update, numpy)}, get_qvalue({pair}, {action}) gave "
                f"{got!r}; expected {want:.6g}")
        terminal = (" It was a terminal update (terminated true): its target is the reward "
                    "alone, with nothing bootstrapped from the next pair." if done else "")
        if numpy:
            return failed(f"{said}, what it gives with Python's numbers: the updates before "
                          "it came out right, and a second agent given the same updates, each "
                          "in the other form, first went wrong where it got numpy scalars "
                          f"too, if at all.{terminal} The numbers and the flag came as numpy "
                          "scalars, "
                          "as a row of a numpy batch holds them: treat np.int64, np.float64 "
                          "and np.bool_ exactly as Python's: test a flag with `if "
                          "terminated:`, never `terminated is True`, `is False` or "
                          "isinstance(..., bool), and key the table by the pair itself (a "
                          "tuple of numpy ints finds the same entry as Python's; a key such as "
                          "str(pair) tells them apart).", rule=NUMPY_SCALARS)
        return failed(f"{said}.{terminal} The update is lesson 01's, with unseen Q-values at "
                      "initial_value.", rule=AGENT_UPDATE)
    final = {}  # (pair, action) -> its value after all the updates
    for (pair, action, *_), value in zip(inputs["updates"], history):
        final[(tuple(pair), action)] = value
    problem = wrong_amount("rows of updated pairs", data.get("rows", []),
                           len(inputs["updates"]), rule=AGENT_UPDATE)
    if problem:
        return problem
    for (pair, *_), row in zip(inputs["updates"], data["rows"]):
        want = [final.get((tuple(pair), action), start) for action in range(n_bits)]
        # a Q-value never set is initial_value exactly (no noise added to new rows)
        unset_moved = any(value != start for action, value in enumerate(row)
                          if (tuple(pair), action) not in final)
        if unset_moved or not np.allclose(row, want, rtol=1e-9, atol=1e-9):
            why = (". The pair was read back with its numbers as np.int64, as a batch's row "
                   "holds them, and was not found: the table must find a pair whatever kind "
                   "of int its numbers are (a key such as str(pair) tells them apart)."
                   if all(value == start for value in row) else
                   ": setting one action's Q-value leaves the pair's other actions as they "
                   "were.")
            return failed(f"after the updates, the Q-values of pair {tuple(pair)} are {row}; "
                          f"expected {[round(v, 6) for v in want]}" + why, rule=AGENT_UPDATE)
    wanted_value = float(start - 1)
    if data.get("value_below") != wanted_value:
        return failed(f"with every Q-value of a pair set below initial_value={start} (the "
                      f"largest {wanted_value}), get_value returned {data.get('value_below')!r}: "
                      "a pair's value is the largest of its Q-values (lesson 01's get_value), "
                      "whatever initial_value is.", rule=AGENT_UPDATE)
    tied = data.get("tied") or []
    problem = wrong_amount("greedy choices", tied, GREEDY_DRAWS_PER_FLIP * n_bits,
                           rule=AGENT_TIES)
    if problem:
        return problem
    counts = [tied.count(flip) for flip in range(n_bits)]
    if sum(counts) != len(tied) or not fits(counts, [1 / n_bits] * n_bits):
        return failed(f"a GoalConditionedAgent at epsilon 0, asked {len(tied)} times for the "
                      f"action of a pair it has never seen (all {n_bits} flips tie at "
                      f"initial_value), chose the flips {counts} times (rejection rate "
                      f"{FALSE_FAILURE_RATE:g}): lesson 01's get_best_action breaks ties at "
                      "random, and the goal-conditioned agent keeps it (override how Q-values "
                      "are stored, not how the best is chosen).", rule=AGENT_TIES)
    explored = data.get("explored") or []
    seeds = _explorer_seeds(inputs)
    problem = wrong_amount("runs of exploring actions", explored, 2 * len(seeds),
                           rule=AGENT_SEEDED)
    if problem:
        return problem
    for seed, first, second in zip(seeds, explored[::2], explored[1::2]):
        if first != second:
            return failed(f"two GoalConditionedAgent(..., epsilon=1.0, seed={seed}) explored "
                          f"differently: {first[:8]}... and {second[:8]}... Pass seed on to "
                          "lesson 01's agent, whose own generator makes every random choice "
                          "(not numpy's global one, nor a new unseeded one)"
                          + (": 0 is a seed like any other, not a missing one (`seed or "
                             "None`, `if seed:` take it for no seed)." if seed == 0 else "."),
                          rule=AGENT_SEEDED)
    problem = _twins_problem(inputs, data)
    if problem:
        return problem
    return passed(f"unseen pairs start at {start} (0.0 and the default -10.0 too), Q-values "
                  f"set to 0.0 read back as 0.0, actions are the {n_bits} flips (the caller's "
                  "to keep), updates follow lesson 01's rule (terminal ones too, and numpy "
                  "scalars count as Python's numbers), and equal seeds (0 too) explore "
                  "alike, break greedy ties alike and toss epsilon's coin alike, whatever the "
                  "global generators hold.")


def _twins_problem(inputs, data):
    """Why twin agents of one seed (_twin_agents) broke the greedy choice or acted apart."""
    seed, start = inputs["seed"], inputs["initial_value"]
    pairs = _twin_pairs(inputs)
    greedy, mixed = data.get("greedy_twins") or [], data.get("mixed_twins") or []
    problem = (wrong_amount("greedy twin agents", greedy, 2, rule=AGENT_SEEDED)
               or wrong_amount("exploring twin agents", mixed, 2, rule=AGENT_SEEDED))
    if problem:
        return problem
    for runs in greedy:
        problem = wrong_amount("pairs asked of a greedy twin agent", runs, len(pairs),
                               rule=AGENT_SEEDED)
        if problem:
            return problem
        for (pair, best), actions in zip(pairs[1:], runs[1:]):
            if len(actions) != TWIN_DRAWS or any(action not in best for action in actions):
                wrong = sorted({action for action in actions if action not in best})
                return failed(
                    f"a GoalConditionedAgent(..., epsilon=0.0, initial_value={start}), after "
                    + " and ".join(f"set_qvalue({pair}, {flip}, {float(start + 1)})"
                                   for flip in best)
                    + f", asked {TWIN_DRAWS} times for get_action({pair}), chose flips "
                    f"{wrong} too, of Q-value {start}: at epsilon 0 the agent is greedy "
                    f"and takes a flip of the largest Q-value ({best}). 0 is an epsilon "
                    "like any other, not a missing one (`epsilon or 0.1` explores).",
                    rule=AGENT_TIES)
    names = ["a pair it has never seen (all its flips tie)",
             f"pair {pairs[1][0]}, whose flips {pairs[1][1]} tie for the largest Q-value"]
    for (pair, _), name, first, second in zip(pairs, names, greedy[0], greedy[1]):
        if first != second:
            return failed(
                f"two GoalConditionedAgent(..., epsilon=0.0, seed={seed}), with Python's "
                "`random` and numpy's global generator seeded differently before each, "
                f"asked {TWIN_DRAWS} times each for get_action({pair}) on {name}, broke "
                f"the tie differently: {first[:8]}... and {second[:8]}... Breaking greedy "
                "ties is a random choice of the agent too: make it with the agent's own "
                "generator, self.rng (lesson 01's get_best_action does), not np.random or "
                "random, so two agents of one seed act alike.", rule=AGENT_SEEDED)
    if mixed[0] != mixed[1]:
        pair, best = pairs[-1]
        return failed(
            f"two GoalConditionedAgent(..., epsilon={MIXED_EPSILON}, seed={seed}), with "
            "Python's `random` and numpy's global generator seeded differently before each, "
            f"asked {TWIN_DRAWS} times each for get_action({pair}) (flip {best[0]} the best), "
            f"acted differently: {mixed[0][:8]}... and {mixed[1][:8]}... Whether to explore "
            "(epsilon's coin), which flip to explore and how to break ties are all random "
            "choices of the agent: make each with its own generator, self.rng, not "
            "np.random or random, so two agents of one seed act alike.", rule=AGENT_SEEDED)
    return None
