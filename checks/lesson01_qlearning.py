"""Checks for lesson 01: the tabular Q-learning agent and its training loop on Taxi."""

import math

import numpy as np

from checks.contracts import INT, NUMBER, Contract, constructor
from checks.expected import expected as reference
from checks.framework import (Callee, Check, LessonChecks, attempted, call_student,
                              call_student_repeatedly, comparison, failed, kept_with,
                              passed, reseed_global_generators,
                              student_process_of, wrong_amount)
from checks.lending import mirrored
from checks.operation_sequences import first_difference, observed, sequences, shown
from checks.requirements import Rule
from checks.statistics import FALSE_FAILURE_RATE, describe_counts, fits
from checks.stub_envs import (call_training_loop, lent_corridor, play_order_problem,
                              retyped_problem, scripted_agent, timeline)
from course.corridor import runaway_limit

LESSON = "01_qlearning"

# --- the rules: what the lesson tells a student, each tested by the checks below ---------

# shared by the agent's checks
LEGAL_ONLY = Rule("legal-actions-only", "The agent chooses only among the actions "
                  "get_legal_actions(state) returns.")
OWN_GENERATOR = Rule("own-generator", "Every random choice of the agent is drawn from its "
                     "own generator self.rng, so two agents made with the same seed behave "
                     "identically whatever the global generators hold.")
LEGAL_ANY_SEQUENCE = Rule("legal-actions-any-sequence", "get_legal_actions(state) may return "
                          "any sequence of int actions (a list, tuple, range or 1-D numpy "
                          "array), even the caller's own list: the agent works with each "
                          "form, calls it as often as it needs, and never changes what it "
                          "returns.")
UNSET_IS_ZERO = Rule("unset-qvalue-is-zero", "A legal action whose Q-value was never set "
                     "counts, with the Q-value 0.0 that get_qvalue gives it.")
# test_value_and_best_action
VALUE_IS_LEGAL_MAX = Rule("value-is-legal-max", "get_value returns the largest Q-value over "
                          "the state's legal actions, also when all of them are negative.")
BEST_ACTION_IS_ARGMAX = Rule("best-action-is-argmax", "get_best_action returns a legal action "
                             "with the largest Q-value.")
# test_best_action_ties
TIES_UNIFORM = Rule("ties-uniform", "Actions that tie for the largest Q-value (all of them, "
                    "before anything is learned) are chosen among uniformly at random.")
# test_epsilon_greedy
EPSILON_GREEDY = Rule("epsilon-greedy", "get_action takes a uniformly random legal action "
                      "with probability epsilon (the best one included) and the best action "
                      "otherwise: always the best at epsilon 0, uniform at epsilon 1.")
GREEDY_IS_BEST_ACTION = Rule("greedy-is-best-action", "When it does not explore, get_action "
                             "returns get_best_action(state), ties broken at random as there.")
EPSILON_EACH_CALL = Rule("epsilon-read-each-call", "get_action reads self.epsilon at every "
                         "call, since training loops change it.")
# test_update
Q_LEARNING_RULE = Rule("q-learning-rule", "update sets Q(s, a) to (1 - alpha) Q(s, a) + "
                       "alpha (r + discount V(s')).")
TERMINAL_TARGET = Rule("terminal-target-is-reward", "With terminated=True the target is the "
                       "reward alone: a terminal state has no future to bootstrap from.")
# test_play_and_train
LOOP_STEPS = Rule("loop-steps", "play_and_train resets the environment once, with "
                  "env.reset() and no seed, then at each step asks the agent once for an "
                  "action for the state the environment is in, steps the environment with it "
                  "and calls agent.update once, before it asks again.")
UPDATE_OWN_TRANSITION = Rule("update-own-transition", "Each agent.update gets the step just "
                             "played: the state the action was chosen in, that action, its "
                             "reward and the next state.")
STOPS_AT_END = Rule("stops-on-terminated-or-truncated", "The episode stops when it is "
                    "terminated or truncated, and not before.")
T_MAX_CAP = Rule("t-max-cap", "play_and_train takes at most t_max steps, 10,000 by default.")
RETURNS_TOTAL = Rule("returns-total-reward", "play_and_train returns the episode's total "
                     "reward.")
UPDATE_GETS_TERMINATED = Rule("update-gets-terminated", "update is told terminated, not "
                              "truncated nor terminated or truncated: a time limit is not a "
                              "terminal state.")
# test_learning
LOOP_LEARNS = Rule("loop-learns-taxi", "Driven by your play_and_train, the reference agent "
                   "learns Taxi about as well as with the reference loop.")


def _legal_actions_table(rng, n_states, n_actions, min_legal=2):
    """Each state (a list index) gets its own random, sorted subset of legal actions."""
    return [sorted(rng.choice(n_actions, size=rng.integers(min_legal, n_actions + 1),
                              replace=False).tolist())
            for _ in range(n_states)]


def _make_agent(QLearningAgent, legal, seed, alpha=0.5, epsilon=0.0, discount=0.9,
                get_legal_actions=None):
    """An agent whose ``get_legal_actions`` is the course's LegalActions on ``legal`` (a
    tuple per state), or ``get_legal_actions`` itself when given (_lent_rows)."""
    from course.legal_actions import LegalActions

    if get_legal_actions is None:
        get_legal_actions = mirrored(LegalActions, legal)
    return call_student("QLearningAgent(alpha, epsilon, discount, get_legal_actions, seed)",
                        QLearningAgent, alpha=alpha, epsilon=epsilon, discount=discount,
                        get_legal_actions=get_legal_actions, seed=seed)


def _set_qvalues(agent, qvalues):
    """``qvalues[state]`` is a list of (action, value) pairs."""
    for state, row in enumerate(qvalues):
        for action, value in row:
            call_student(f"set_qvalue({state}, {action}, {value})", agent.set_qvalue,
                         state, action, value)


def _as_number(value):
    """A float for number-like results; a description of anything else."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return f"{type(value).__name__} {value!r}"[:80]


def _as_action(value):
    """An int for action-like results; a description of anything else."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    return f"{type(value).__name__} {value!r}"[:80]


def _describe_row(state, row):
    return ", ".join(f"Q({state},{action})={value:g}" for action, value in row)


# --- get_legal_actions in each form the text allows -------------------------------------
#
# The text says get_legal_actions(state) returns a sequence of int actions (a list, tuple,
# range or 1-D numpy array), maybe the caller's own list, to be read and never changed. The
# course's LegalActions hands out tuples (and Taxi's AllActions a range); these probes lend
# the other forms: the rows of a table themselves, as a function that indexes a table does
# (``table.__getitem__``), lists in one agent and 1-D numpy arrays in another. The table is
# placed where the agent runs (in the grader: the student's process), so the probe can read
# it back afterwards and see whether the agent changed a row.

FORM_WORDS = {"list": "a list", "array": "a 1-D numpy array"}


def _lent_rows(rows, near):
    """(get_legal_actions, table): ``table`` holds ``rows`` where the student's code
    ``near`` runs, and get_legal_actions(state) is ``table[state]``, the row itself."""
    table = kept_with(rows, near)
    process = student_process_of(table)
    if process is None:
        return table.__getitem__, table
    return process.apply("getattr", table, "__getitem__", by_ref=True), table


def _rows_now(table):
    """The rows of a lent table as they are now, as lists of actions (a row that is no
    longer a sequence of ints is described)."""
    process = student_process_of(table)
    rows = list(table) if process is None else process.apply("list", table)
    described = []
    for row in rows:
        if isinstance(row, (list, tuple, np.ndarray)):
            described.append([_as_action(action) for action in list(row)])
        else:
            described.append(f"{type(row).__name__} {row!r}"[:80])
    return described


def _form_rows(form, row):
    """``row`` (a list of ints) in ``form``: a new list, or a 1-D int64 numpy array."""
    return list(row) if form == "list" else np.asarray(row, dtype=np.int64)


def _shown_row(form, row):
    return repr(row) if form == "list" else f"np.array({row!r})"


def _refused(result):
    """A refusal attempted() found (the ProbeError's words), as plain data."""
    return {"raised": str(result["raised"])[:300]}


def _forms_problem(inputs, forms, expected, counts, turns):
    """The failed verdict (LEGAL_ANY_SEQUENCE) for what an agent did with legal actions
    lent as lists or numpy arrays (``inputs["forms_legal"][form]``), or None.
    ``forms[form]``: {"calls": [[call, state, {"value"|"raised": ...}],
    ...], "after": {call: the rows after that call's turn}}; ``counts[form]``: how many
    calls a probe that raised nowhere makes; ``turns``: the calls with a turn each;
    ``expected(call, state)``: the right results (a set), or None when any result is."""
    for form in ("list", "array"):
        lent = inputs["forms_legal"][form]
        made = forms.get(form) if isinstance(forms, dict) else None
        calls = made.get("calls") if isinstance(made, dict) else None
        for call, state, result in calls if isinstance(calls, list) else []:
            if "raised" not in result:
                continue
            raised = result["raised"]
            if not raised.startswith(f"{call}("):  # words that do not name the call
                raised = f"{call}({state}) raised {raised}"
            return failed(f"{raised.rstrip('.')}, where get_legal_actions({state}) returned "
                          f"{FORM_WORDS[form]}, {_shown_row(form, lent[state])}. Any "
                          "sequence of actions may come back (a list, tuple, range or 1-D "
                          "numpy array of ints): use only what every sequence has (iterate "
                          "over it, len(), index it), not its truth value or a list's "
                          "methods.", rule=LEGAL_ANY_SEQUENCE)
        after = made.get("after") if isinstance(made, dict) else None
        problem = wrong_amount(f"calls with legal actions lent as {form}s", calls,
                               counts[form], rule=LEGAL_ANY_SEQUENCE) or wrong_amount(
            f"turns of calls with legal actions lent as {form}s", after, len(turns),
            rule=LEGAL_ANY_SEQUENCE)
        for turn in turns if not problem else []:
            problem = problem or wrong_amount(f"rows read back after {turn}",
                                              after.get(turn), len(lent),
                                              rule=LEGAL_ANY_SEQUENCE)
        if problem:
            return problem
        for call, state, result in calls:
            wanted = expected(call, state)
            if wanted is not None and "value" in result and result["value"] not in wanted:
                said = (f"{min(wanted):g}" if call == "get_value" else
                        str(min(wanted)) if len(wanted) == 1 else f"one of {sorted(wanted)}")
                return failed(f"{call}({state}) returned {result['value']!r} where "
                              f"get_legal_actions({state}) returned {FORM_WORDS[form]}, "
                              f"{_shown_row(form, lent[state])}; it should be {said}, as "
                              "when the same actions come as a tuple. Treat every sequence "
                              "of actions alike.", rule=LEGAL_ANY_SEQUENCE)
        for call in turns:
            for state, (before, now) in enumerate(zip(lent, after[call])):
                if now != before:
                    return failed(f"get_legal_actions({state}) returned {FORM_WORDS[form]} "
                                  "of the caller's own (a row of its table, as it is), "
                                  f"{_shown_row(form, before)}; after {call}({state}) that "
                                  f"row held {now}: your agent changed it in place. Read the "
                                  "sequence get_legal_actions returns, never change it: to "
                                  "shuffle or sort, work on a copy (list(actions)).",
                                  rule=LEGAL_ANY_SEQUENCE)
    return None


# --- values and best action ------------------------------------------------------------

def _values_inputs(rng):
    # action numbers past Taxi's six (the agent takes any set of legal actions), and a
    # state with a single legal action: its value is that action's Q-value
    n_states, n_actions = 8, int(rng.integers(7, 10))
    legal = _legal_actions_table(rng, n_states, n_actions)
    legal[2] = [int(rng.choice(legal[2]))]
    qvalues, unset = [], []
    for state, actions in enumerate(legal):
        # distinct values, all negative in half of the states: a max that starts at 0 is wrong
        low, high = (-20.0, -0.5) if state % 2 else (-10.0, 10.0)
        draws = rng.choice(np.linspace(low, high, 400), size=len(actions), replace=False)
        pairs = [[a, round(float(q), 3)] for a, q in zip(actions, draws)]
        # in the last two all-negative states one legal action is never set: its Q-value
        # is 0, the largest, though the agent's table holds no entry for it
        left_out = [pairs.pop(int(rng.integers(len(pairs))))[0]] if state >= 4 and state % 2 else []
        qvalues.append(pairs)
        unset.append(left_out)
    inputs = {"legal": legal, "qvalues": qvalues, "unset": unset,
              "seed": int(rng.integers(2**31)),
              "epsilon": round(float(rng.uniform(0.1, 0.5)), 2),
              "near_tie": [int(a) for a in rng.choice(legal[0], size=2, replace=False)],
              # set and query in turn, on few states: an answer cached and not refreshed
              # after a later set_qvalue is seen by the next query
              "sequences": sequences(rng, lambda rng, _, __: _draw_operation(rng, legal))}
    # the same legal actions lent as the caller's own lists, and as numpy arrays, each row
    # in an order of its own (not sorted: sorting it in place changes it too)
    inputs["forms_legal"] = {form: [rng.permutation(row).tolist() for row in legal]
                             for form in ("list", "array")}
    return inputs


SEQUENCE_STATES = 3  # the states a sequence works on: each comes up again and again
NEAR, NEAR_TIE_CALLS = 1e-9, 60  # noise added to break ties picks the smaller ~half the time


def _draw_operation(rng, legal):
    state = int(rng.integers(SEQUENCE_STATES))
    kind = rng.choice(["set", "set", "value", "best"])
    if kind == "set":  # values on a coarse grid, so that ties happen, and near-ties too
        near = 1e-9 * int(rng.integers(1, 4)) if rng.random() < 0.3 else 0.0
        return ["set", state, int(rng.choice(legal[state])),
                float(rng.integers(-4, 5)) / 2 + near]
    return [str(kind), state]


def _values_probe(inputs, QLearningAgent):
    # an exploring agent: get_value and get_best_action do not depend on epsilon
    agent = _make_agent(QLearningAgent, inputs["legal"], inputs["seed"],
                        epsilon=inputs["epsilon"])
    _set_qvalues(agent, inputs["qvalues"])
    states = range(len(inputs["qvalues"]))

    def apply(operation, agent):
        if operation[0] == "set":
            _, state, action, value = operation
            call_student(f"set_qvalue({state}, {action}, {value})", agent.set_qvalue, state,
                         action, value)
            return None
        if operation[0] == "value":
            return _as_number(call_student(f"get_value({operation[1]})", agent.get_value,
                                           operation[1]))
        return _as_action(call_student(f"get_best_action({operation[1]})",
                                       agent.get_best_action, operation[1]))

    # a near-tie: two actions 1e-9 apart, the larger one is the best every time (no
    # tolerance, no noise added to break ties)
    near = _make_agent(QLearningAgent, inputs["legal"], inputs["seed"],
                       epsilon=inputs["epsilon"])
    low, high = inputs["near_tie"]
    call_student(f"set_qvalue(0, {low}, 1.0)", near.set_qvalue, 0, low, 1.0)
    call_student(f"set_qvalue(0, {high}, {1.0 + NEAR:g})", near.set_qvalue, 0, high, 1.0 + NEAR)
    near_tie = [_as_action(action) for action in call_student_repeatedly(
        "get_best_action(0)", near.get_best_action, NEAR_TIE_CALLS, 0)]
    return {
        "near_tie": near_tie,
        "values": [_as_number(call_student(f"get_value({s})", agent.get_value, s))
                   for s in states],
        "best_actions": [_as_action(call_student(f"get_best_action({s})",
                                                 agent.get_best_action, s))
                         for s in states],
        "sequences": [observed(sequence, lambda operation, fresh=fresh: apply(operation, fresh))
                      for sequence, fresh in
                      ((sequence, _make_agent(QLearningAgent, inputs["legal"], inputs["seed"],
                                              epsilon=inputs["epsilon"]))
                       for sequence in inputs["sequences"])],
        # last: what earlier calls of the probe judge comes first
        "forms": _values_forms_probe(inputs, QLearningAgent),
    }


BEST_ACTION_CALLS = 3  # per state, with legal actions lent in each form


def _values_forms_probe(inputs, QLearningAgent):
    """get_value and get_best_action with get_legal_actions returning the caller's own
    lists, then 1-D numpy arrays (an action comes back as a Python int either way: the
    contract holds each result), and the rows read back after each."""
    states = range(len(inputs["qvalues"]))
    forms = {}
    for form, rows in inputs["forms_legal"].items():
        get_legal_actions, table = _lent_rows([_form_rows(form, row) for row in rows],
                                              QLearningAgent)
        agent = _make_agent(QLearningAgent, None, inputs["seed"], epsilon=inputs["epsilon"],
                            get_legal_actions=get_legal_actions)
        _set_qvalues(agent, inputs["qvalues"])
        calls, after = [], {}
        for state in states:
            made = attempted(call_student, f"get_value({state})", agent.get_value, state)
            calls.append(["get_value", state, {"value": _as_number(made["value"])}
                          if "value" in made else _refused(made)])
        after["get_value"] = _rows_now(table)
        for state in states:
            made = attempted(call_student_repeatedly, f"get_best_action({state})",
                             agent.get_best_action, BEST_ACTION_CALLS, state)
            calls += ([["get_best_action", state, {"value": _as_action(action)}]
                       for action in made["value"]] if "value" in made
                      else [["get_best_action", state, _refused(made)]])
        after["get_best_action"] = _rows_now(table)
        forms[form] = {"calls": calls, "after": after}
    return forms


def _sequence_model(legal):
    """What a correct agent answers to each operation of a sequence: None for a set, the
    value, or the set of best actions (any of them is right: ties are random)."""
    def model(sequence):
        table, answers = {}, []
        for operation in sequence:
            state = operation[1]
            if operation[0] == "set":
                table[state, operation[2]] = operation[3]
                answers.append(None)
                continue
            row = {action: table.get((state, action), 0.0) for action in legal[state]}
            top = max(row.values())
            answers.append(top if operation[0] == "value"
                           else {action for action, value in row.items() if value == top})
        return answers
    return model


def _agrees(got, wanted, operation):
    if operation[0] == "set":
        return True
    if operation[0] == "value":
        return isinstance(got, float) and got == wanted
    return got in wanted


def _operation_words(operation):
    if operation[0] == "set":
        return f"set_qvalue({operation[1]}, {operation[2]}, {operation[3]!r})"
    return f"get_{'value' if operation[0] == 'value' else 'best_action'}({operation[1]})"


def _values_verdict(inputs, data):
    n_states = len(inputs["qvalues"])
    problem = (wrong_amount("values", data["values"], n_states, rule=VALUE_IS_LEGAL_MAX)
               or wrong_amount("best actions", data["best_actions"], n_states,
                               rule=BEST_ACTION_IS_ARGMAX))
    if problem:
        return problem
    for state, (set_row, unset) in enumerate(zip(inputs["qvalues"], inputs["unset"])):
        legal = inputs["legal"][state]
        row = set_row + [[action, 0.0] for action in unset]
        expected_action, expected_value = max(row, key=lambda pair: pair[1])
        got_value = data["values"][state]
        described = _describe_row(state, set_row) + "".join(
            f", Q({state},{action}) never set" for action in unset)
        if not isinstance(got_value, float) or not math.isclose(got_value, expected_value,
                                                                 abs_tol=1e-9):
            if unset and isinstance(got_value, float) and math.isclose(
                    got_value, max(value for _, value in set_row), abs_tol=1e-9):
                return failed(f"state {state} has legal actions {legal} with {described}; "
                              f"get_value should be {expected_value:g} but returned "
                              f"{got_value}, the largest of the Q-values that were set. An "
                              "action never tried is legal too, with Q-value 0: go over "
                              "get_legal_actions(state) and read each with get_qvalue.",
                              rule=UNSET_IS_ZERO)
            hint = (" Every legal Q-value here is negative: did your maximum start at 0, or "
                    "include actions that are not legal here (never set, so 0)?"
                    if expected_value < 0 and got_value == 0 else "")
            return failed(f"state {state} has legal actions {legal} with "
                          f"{described}; get_value should be "
                          f"{expected_value:g} (the largest of them) but returned "
                          f"{got_value}.{hint}", rule=VALUE_IS_LEGAL_MAX)
        got_action = data["best_actions"][state]
        if got_action != expected_action:
            if isinstance(got_action, int) and 0 <= got_action < len(legal) and (
                    legal[got_action] == expected_action):
                return failed(f"state {state} has legal actions {legal} with {described}; "
                              f"get_best_action should return {expected_action} but returned "
                              f"{got_action}, its position in the list of legal actions. "
                              "Return the action itself.", rule=BEST_ACTION_IS_ARGMAX)
            if isinstance(got_action, int) and got_action not in legal:
                return failed(f"state {state} has {described}; get_best_action returned "
                              f"{got_action}, which is not legal in this state: use "
                              "get_legal_actions(state).", rule=LEGAL_ONLY)
            if expected_action in unset:
                return failed(f"state {state} has legal actions {legal} with {described}; "
                              f"get_best_action should return {expected_action} (never set, "
                              f"so its Q-value 0 is the largest) but returned {got_action}. "
                              "Go over get_legal_actions(state), not the Q-values stored.",
                              rule=UNSET_IS_ZERO)
            return failed(f"state {state} has {described}; get_best_action "
                          f"should return {expected_action} but returned {got_action}.",
                          rule=BEST_ACTION_IS_ARGMAX)
    problem = wrong_amount("sequences", data.get("sequences"), len(inputs["sequences"]),
                           rule=VALUE_IS_LEGAL_MAX)
    if problem:
        return problem
    low, high = inputs["near_tie"]
    wrong = [action for action in data.get("near_tie") or [None] if action != high]
    if wrong or len(data["near_tie"]) != NEAR_TIE_CALLS:
        return failed(f"in state 0, Q(0,{high}) = {1 + NEAR!r} is larger than Q(0,{low}) = 1.0 "
                      f"(the others unset, 0), so get_best_action(0) should return {high} "
                      f"every time, but over {NEAR_TIE_CALLS} calls it returned {wrong[0]!r}: "
                      "compare the Q-values exactly (no tolerance, no noise added to break "
                      "ties).", rule=BEST_ACTION_IS_ARGMAX)
    found = first_difference(inputs["sequences"], data["sequences"],
                             _sequence_model(inputs["legal"]), _agrees)
    if found:
        sequence, position, got, wanted = found
        operation = sequence[position]
        said = (f"should be {wanted:g}" if operation[0] == "value" else
                f"should be one of {sorted(wanted)}" if isinstance(wanted, set) else "")
        return failed(f"on a new agent (states with the same legal actions as above), the "
                      f"calls {shown(sequence, position, _operation_words)} ended with "
                      f"{_operation_words(operation)} returning {got}; it {said}. Compute "
                      "it from the Q-values as they are now: an answer kept from before a "
                      "later set_qvalue is out of date.",
                      rule=VALUE_IS_LEGAL_MAX if operation[0] == "value"
                      else BEST_ACTION_IS_ARGMAX)
    n_calls = len(inputs["qvalues"]) * (1 + BEST_ACTION_CALLS)
    problem = _forms_problem(inputs, data.get("forms"), _values_expected(inputs),
                             {"list": n_calls, "array": n_calls},
                             ("get_value", "get_best_action"))
    if problem:
        return problem
    return passed(f"get_value and get_best_action agree on {len(inputs['qvalues'])} states, "
                  f"and after every set_qvalue of {len(inputs['sequences'])} sequences of "
                  "calls, with legal actions lent as tuples, lists and numpy arrays.")


def _values_expected(inputs):
    """expected(call, state) for _forms_problem: the value, the best action."""
    rows = [set_row + [[action, 0.0] for action in unset]
            for set_row, unset in zip(inputs["qvalues"], inputs["unset"])]

    def expected(call, state):
        top = max(value for _, value in rows[state])
        if call == "get_value":
            return {top}
        return None if call != "get_best_action" else {
            action for action, value in rows[state] if value == top}
    return expected


# --- ties ----------------------------------------------------------------------------

TIE_DRAWS = 300  # with 3 tied actions each is expected 100 times


def _ties_inputs(rng):
    n_actions = int(rng.integers(4, 7))
    qvalues = []
    for state in range(4):
        tied = rng.choice(n_actions, size=2 + state % 2, replace=False).tolist()
        top = round(float(rng.uniform(-5, 5)), 2)
        qvalues.append([[a, top if a in tied else round(top - float(rng.uniform(0.5, 3)), 2)]
                        for a in range(n_actions)])
    # one more state, never updated: its 2 or 3 legal actions all tie at 0
    fresh = sorted(rng.choice(n_actions, size=int(rng.integers(2, 4)), replace=False).tolist())
    qvalues.append([])
    return {"n_actions": n_actions, "qvalues": qvalues, "fresh_legal": fresh,
            "seed": int(rng.integers(2**31)),
            "global_seeds": rng.integers(2**31, size=2).tolist()}


def _ties_probe(inputs, QLearningAgent):
    legal = [list(range(inputs["n_actions"]))] * (len(inputs["qvalues"]) - 1)
    legal = legal + [inputs["fresh_legal"]]

    def choices(global_seed):
        # an agent with its own generator must not care
        reseed_global_generators(global_seed, near=QLearningAgent)
        agent = _make_agent(QLearningAgent, legal, inputs["seed"])
        _set_qvalues(agent, inputs["qvalues"])
        return [[_as_action(action) for action in call_student_repeatedly(
                    f"get_best_action({state})", agent.get_best_action, TIE_DRAWS, state)]
                for state in range(len(inputs["qvalues"]))]

    first, second = (choices(seed) for seed in inputs["global_seeds"])
    return {"first": first, "second": second}


def _ties_verdict(inputs, data):
    for run in ("first", "second"):
        problem = wrong_amount("states' draws", data[run], len(inputs["qvalues"]),
                               rule=TIES_UNIFORM)
        for drawn in data[run] if not problem else []:
            problem = problem or wrong_amount("tie-breaking draws", drawn, TIE_DRAWS,
                                              rule=TIES_UNIFORM)
        if problem:
            return problem
    for state, row in enumerate(inputs["qvalues"]):
        if row:
            top = max(value for _, value in row)
            tied = [action for action, value in row if value == top]
            situation = f"in state {state} actions {tied} share the highest Q-value"
        else:
            tied = inputs["fresh_legal"]
            situation = (f"in state {state}, whose Q-values were never set, the legal "
                         f"actions {tied} all tie at 0")
        drawn = data["first"][state]
        wrong = [a for a in drawn if a not in tied]
        if wrong:
            legal = range(inputs["n_actions"]) if row else tied
            illegal = isinstance(wrong[0], int) and wrong[0] not in legal
            return failed(f"{situation}, but get_best_action returned {wrong[0]}"
                          + (", which is not legal there." if illegal else "."),
                          rule=LEGAL_ONLY if illegal else BEST_ACTION_IS_ARGMAX)
        counts = [drawn.count(a) for a in tied]
        if not fits(counts, [1 / len(tied)] * len(tied)):
            return failed(
                f"{situation}; over {TIE_DRAWS} calls get_best_action returned "
                + ", ".join(f"{a} {c} times" for a, c in zip(tied, counts))
                + ". Ties must be broken uniformly at random with the agent's generator "
                "(self.rng), not always towards the same action.", rule=TIES_UNIFORM)
    if data["first"] != data["second"]:
        return failed("two agents built with the same seed broke ties differently after "
                      "Python's and numpy's global generators were reseeded. Draw from the "
                      "agent's own generator (self.rng), so runs reproduce.", fraction=0.5,
                      rule=OWN_GENERATOR)
    return passed(f"ties are broken uniformly (rejection rate {FALSE_FAILURE_RATE:g}) and "
                  "reproducibly with the agent's seed.")


# --- epsilon-greedy -------------------------------------------------------------------

RARE_DRAWS = 10_000  # at epsilon ~0.003: ~23 non-best choices; 1% would give ~75, none 0


def _epsilon_inputs(rng):
    n_actions = 6
    legal = sorted(rng.choice(n_actions, size=int(rng.integers(3, 6)), replace=False).tolist())
    # distinct Q-values: a tie for the best would make the greedy choice random (a false
    # failure of the epsilon = 0 case, 1 salt in 200 when values were drawn independently)
    distinct = rng.choice(np.arange(-300, 301), size=len(legal), replace=False) / 100
    qvalues = [[a, float(q)] for a, q in zip(legal, distinct)]
    epsilon = round(float(rng.uniform(0.15, 0.6)), 2)
    # every expected count is at least 150, where the chi-square approximation is sound
    draws = int(math.ceil(150 * len(legal) / epsilon))
    # state 1 has the same legal actions, two of them tied for the best: greedy choices
    # there are get_best_action's, ties broken at random
    tied = rng.choice(legal, size=2, replace=False).tolist()
    top = float(rng.integers(-300, 301)) / 100
    tie_qvalues = [[a, top if a in tied else top - float(rng.integers(50, 300)) / 100]
                   for a in legal]
    # a small epsilon, not a multiple of 1/100: a coin drawn as an integer percent (or
    # any coarse grid) explores at another rate, which RARE_DRAWS calls show
    rare_epsilon = round(float(rng.uniform(0.002, 0.004)), 5)
    # state 2 has other legal actions (some of those of state 0 missing): an agent that
    # keeps the legal actions of the first state it saw explores state 0 among them
    others = sorted(set(range(n_actions)) - set(legal))
    other_legal = sorted(others + rng.choice(legal, size=1).tolist())
    inputs = {"legal": legal, "qvalues": qvalues, "epsilon": epsilon, "draws": draws,
              "rare_epsilon": rare_epsilon, "other_legal": other_legal,
              "tie_qvalues": tie_qvalues, "seed": int(rng.integers(2**31)),
              "global_seeds": rng.integers(2**31, size=2).tolist()}
    # states 0 to 2 again, their legal actions lent as the caller's own lists and as numpy
    # arrays, each row in an order of its own
    inputs["forms_legal"] = {form: [rng.permutation(row).tolist()
                                    for row in (legal, legal, other_legal)]
                             for form in ("list", "array")}
    return inputs


def _epsilon_probe(inputs, QLearningAgent):
    legal = [inputs["legal"], inputs["legal"], inputs["other_legal"]]

    def actions(epsilon, draws, set_after_construction=False, state=0, first_elsewhere=False):
        start = 0.9 if set_after_construction else epsilon
        agent = _make_agent(QLearningAgent, legal, inputs["seed"], epsilon=start)
        _set_qvalues(agent, [inputs["qvalues"], inputs["tie_qvalues"]])
        if first_elsewhere:  # a few choices in state 2 first, whose legal actions differ
            call_student_repeatedly("get_action(2)", agent.get_action, 5, 2)
        if set_after_construction:
            # an agent that copies epsilon on its first call is caught
            call_student_repeatedly("get_action(state)", agent.get_action, 20, state)
            agent.epsilon = epsilon  # training loops decay epsilon through this attribute
        return [_as_action(action) for action in
                call_student_repeatedly(f"get_action({state})", agent.get_action, draws,
                                        state)]

    def reseeded(global_seed):
        # an agent that explores with its own generator does not care what these hold
        reseed_global_generators(global_seed, near=QLearningAgent)
        return actions(inputs["epsilon"], inputs["draws"])

    first, second = (reseeded(seed) for seed in inputs["global_seeds"])
    return {"exploring": first, "exploring_again": second,
            "greedy": actions(0.0, 200, set_after_construction=True),
            "random": actions(1.0, 150 * len(inputs["legal"]), first_elsewhere=True),
            "greedy_ties": actions(0.0, TIE_DRAWS, state=1),
            "rare": actions(inputs["rare_epsilon"], RARE_DRAWS),
            # last: what earlier calls of the probe judge comes first
            "forms": _epsilon_forms_probe(inputs, QLearningAgent)}


FORM_EXPLORING_CALLS = {"list": 30, "array": 30}  # per state, in one round trip each


def _epsilon_forms_probe(inputs, QLearningAgent):
    """get_action at epsilon 1 (exploring every time: get_best_action's own handling is
    test_value_and_best_action's) with get_legal_actions returning the caller's own
    lists, then 1-D numpy arrays (an action comes back as a Python int either way), and
    the rows read back afterwards."""
    forms = {}
    for form, rows in inputs["forms_legal"].items():
        get_legal_actions, table = _lent_rows([_form_rows(form, row) for row in rows],
                                              QLearningAgent)
        agent = _make_agent(QLearningAgent, None, inputs["seed"], epsilon=1.0,
                            get_legal_actions=get_legal_actions)
        _set_qvalues(agent, [inputs["qvalues"], inputs["tie_qvalues"]])
        calls, times = [], FORM_EXPLORING_CALLS[form]
        for state in (0, 2):
            made = attempted(call_student_repeatedly, f"get_action({state})",
                             agent.get_action, times, state)
            calls += ([["get_action", state, {"value": _as_action(action)}]
                       for action in made["value"]] if "value" in made
                      else [["get_action", state, _refused(made)]])
        forms[form] = {"calls": calls, "after": {"get_action": _rows_now(table)}}
    return forms


def _pairs_problem(choices, probabilities):
    """Why consecutive ``choices`` (taken in pairs: first and second, third and fourth,
    ...) are not independent draws with the ``probabilities`` given, or None."""
    pairs = list(zip(choices[::2], choices[1::2]))
    cells = [(a, b) for a in probabilities for b in probabilities
             if probabilities[a] * probabilities[b] > 0]
    expected = [probabilities[a] * probabilities[b] for a, b in cells]
    counts = [pairs.count(cell) for cell in cells]
    if sum(counts) == len(pairs) and fits(counts, expected):
        return None
    return (f"the pairs of consecutive choices over {len(choices)} calls do not fit "
            "independent draws (each pair as likely as its two choices alone make it): "
            + describe_counts(counts, expected, [f"{a} then {b}" for a, b in cells]))


def _epsilon_verdict(inputs, data):
    legal, epsilon = inputs["legal"], inputs["epsilon"]
    best, _ = max(inputs["qvalues"], key=lambda pair: pair[1])
    expected_draws = {"exploring": inputs["draws"], "exploring_again": inputs["draws"],
                      "greedy": 200, "random": 150 * len(legal), "greedy_ties": TIE_DRAWS,
                      "rare": RARE_DRAWS}
    for label, count in expected_draws.items():
        problem = wrong_amount("actions", data[label], count, rule=EPSILON_GREEDY)
        if problem:
            return problem
    for label in expected_draws:
        illegal = [a for a in data[label] if a not in legal]
        if illegal:
            elsewhere = (f" (this agent had first chosen 5 times in state 2, whose legal "
                         f"actions are {inputs['other_legal']}: ask get_legal_actions for the "
                         "state at hand)" if label == "random" else "")
            return failed(f"get_action(0) returned {illegal[0]!r}, but the legal actions in "
                          f"state 0 are {legal}{elsewhere}. Explore among "
                          "get_legal_actions(state) only.", rule=LEGAL_ONLY)
    k = len(legal)
    for label, eps in (("exploring", epsilon), ("random", 1.0)):
        counts = [data[label].count(a) for a in legal]
        expected = [(1 - eps) * (a == best) + eps / k for a in legal]
        if not fits(counts, expected):
            return failed(
                f"with epsilon={eps} and legal actions {legal} (best {best}), get_action's "
                f"choices over {len(data[label])} calls do not fit the epsilon-greedy rule "
                f"(best action with probability 1 - eps + eps/{k}, every other with eps/{k}): "
                + describe_counts(counts, expected, [f"action {a}" for a in legal]) + ".",
                rule=EPSILON_GREEDY)
    # each call draws afresh: pairs of consecutive choices fit the product of the single
    # choices' probabilities (an agent that deals actions out like cards, or explores on a
    # schedule rather than by a coin, makes too few or too many of some pairs)
    for label, eps in (("random", 1.0), ("exploring", epsilon)):
        single = {a: (1 - eps) * (a == best) + eps / k for a in legal}
        choices = data[label]
        if label == "exploring":  # best or not: every pair then expected 9 times at least
            single = {"the best": single[best], "another": 1 - single[best]}
            choices = ["the best" if a == best else "another" for a in choices]
        problem = _pairs_problem(choices, single)
        if problem:
            return failed(f"with epsilon={eps} and legal actions {legal} (best {best}), "
                          f"{problem}. Draw each call's coin and exploring action afresh, "
                          "whatever earlier calls chose.", rule=EPSILON_GREEDY)
    rare, k_rare = inputs["rare_epsilon"], len(legal)
    explored = sum(action != best for action in data["rare"])
    p_other = rare * (k_rare - 1) / k_rare  # a non-best action: exploring, and not the best
    from scipy import stats  # here: scipy takes a second to import
    if stats.binomtest(explored, RARE_DRAWS, p_other).pvalue < FALSE_FAILURE_RATE:
        return failed(f"with epsilon={rare}, get_action should return an action other than "
                      f"the best about {RARE_DRAWS * p_other:.0f} times in {RARE_DRAWS} calls "
                      f"(probability epsilon x {k_rare - 1}/{k_rare}), but did {explored} times."
                      " Compare a uniform draw in [0, 1) with epsilon itself "
                      "(self.rng.random() < self.epsilon), not a rounded or scaled version.",
                      rule=EPSILON_GREEDY)
    # the agents above were built with their epsilon; this one had it lowered to 0 later
    not_best = [a for a in data["greedy"] if a != best]
    if not_best:
        return failed(f"with agent.epsilon set to 0 after construction, get_action returned "
                      f"{not_best[0]} instead of the best action {best}. Read self.epsilon "
                      "each call: training loops change it.", rule=EPSILON_EACH_CALL)
    top = max(value for _, value in inputs["tie_qvalues"])
    tied = [action for action, value in inputs["tie_qvalues"] if value == top]
    counts = [data["greedy_ties"].count(a) for a in tied]
    if sum(counts) != TIE_DRAWS or not fits(counts, [1 / len(tied)] * len(tied)) or \
            _pairs_problem(data["greedy_ties"], dict.fromkeys(tied, 1 / len(tied))):
        others = [a for a in data["greedy_ties"] if a not in tied]
        return failed(
            f"with epsilon 0, in a state where actions {tied} tie for the highest Q-value, "
            f"get_action returned over {TIE_DRAWS} calls "
            + ", ".join(f"{a} {c} times" for a, c in zip(tied, counts))
            + (f" and {others[0]} (not one of the best)" if others else "")
            + ". When it does not explore, get_action returns get_best_action(state), whose "
            "ties are broken uniformly at random.", rule=GREEDY_IS_BEST_ACTION)
    if data["exploring"] != data["exploring_again"]:
        return failed(f"two agents built with the same seed (epsilon={epsilon}) chose "
                      "different actions after Python's and numpy's global generators were "
                      "reseeded differently. Draw every random number, the coin and the "
                      "exploring action alike, from the agent's own generator self.rng.",
                      fraction=0.5, rule=OWN_GENERATOR)
    problem = _forms_problem(inputs, data.get("forms"),
                             lambda call, state: set(inputs["forms_legal"]["list"][state]),
                             {form: 2 * times for form, times in FORM_EXPLORING_CALLS.items()},
                             ("get_action",))
    if problem:
        return problem
    return passed(f"action frequencies fit epsilon-greedy at epsilon 0, {epsilon} and 1 "
                  f"(rejection rate {FALSE_FAILURE_RATE:g}), greedy ties are broken at random, "
                  "the choices reproduce with the agent's seed, and legal actions lent as "
                  "lists and numpy arrays are explored and left as they were.")


# --- update on fixed transitions --------------------------------------------------------

def _update_inputs(rng):
    n_states, n_actions, n_transitions = 5, 4, 40
    # each state its own legal actions: V(s') is the maximum over those of s', and an
    # illegal action's Q-value (never set: 0) would beat the legal ones' negative values
    legal = _legal_actions_table(rng, n_states, n_actions)
    # states 0 and 1 allow disjoint actions, and every action of state 0 is given a
    # negative value first (terminal steps): the next update, from state 1 into state 0,
    # bootstraps from a negative V(0), which no maximum over other actions gives (the
    # actions never set are 0)
    legal[0] = sorted(rng.choice(n_actions, size=n_actions // 2, replace=False).tolist())
    legal[1] = [action for action in range(n_actions) if action not in legal[0]]
    transitions = [[0, action, float(rng.choice([-1.0, -0.5])), int(rng.integers(n_states)),
                    True] for action in legal[0]]
    transitions.append([1, int(rng.choice(legal[1])), 1.0, 0, False])
    states = rng.integers(n_states, size=n_transitions - len(transitions)).tolist()
    transitions += [[state, int(rng.choice(legal[state])),
                     float(rng.choice([-1.0, -0.5, 0.0, 1.0, 2.5, 10.0])),
                     int(rng.integers(n_states)), bool(rng.random() < 0.3)]
                    for state in states]
    return {"n_states": n_states, "n_actions": n_actions, "legal": legal,
            "transitions": transitions,
            # away from 0.5, where a swapped alpha and 1 - alpha would look right
            "alpha": round(float(rng.choice([rng.uniform(0.1, 0.4), rng.uniform(0.6, 0.9)])),
                           2),
            "discount": round(float(rng.uniform(0.5, 0.99)), 2),
            "seed": int(rng.integers(2**31))}


def _update_probe(inputs, QLearningAgent):
    legal = dict(enumerate(inputs["legal"]))
    # exploring (epsilon > 0): an update that bootstraps from the action the agent would
    # take rather than from the best one shows here
    agent = _make_agent(QLearningAgent, legal, inputs["seed"], alpha=inputs["alpha"],
                        epsilon=0.5, discount=inputs["discount"])
    after_each = []
    for state, action, reward, next_state, terminated in inputs["transitions"]:
        call_student(f"update({state}, {action}, {reward}, {next_state}, {terminated})",
                     agent.update, state, action, reward, next_state, terminated)
        after_each.append(_as_number(call_student("get_qvalue", agent.get_qvalue,
                                                  state, action)))
    return {"after_each": after_each}


def _update_verdict(inputs, data):
    expected = reference(LESSON, "qvalues_after_updates", inputs)
    ignoring_terminated = reference(LESSON, "qvalues_after_updates", inputs, True)
    problem = wrong_amount("Q-values", data["after_each"], len(expected), rule=Q_LEARNING_RULE)
    if problem:
        return problem
    for index, (got, want) in enumerate(zip(data["after_each"], expected)):
        if isinstance(got, float) and math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-9):
            continue
        state, action, reward, next_state, terminated = inputs["transitions"][index]
        rule = Q_LEARNING_RULE
        message = (f"with alpha={inputs['alpha']} and discount={inputs['discount']}, after "
                   f"update #{index + 1} (state {state}, action {action}, reward {reward}, "
                   f"next state {next_state}, terminated={terminated}) Q({state},{action}) "
                   f"should be {want:.6g} but is {got}. The legal actions of next state "
                   f"{next_state} are {inputs['legal'][next_state]}: V(s') is the largest "
                   "Q-value among them.")
        if terminated and isinstance(got, float) and math.isclose(
                got, ignoring_terminated[index], rel_tol=1e-7, abs_tol=1e-9):
            message += (" That is what bootstrapping from the next state gives: when "
                        "terminated is True there is no future, so the target is the reward.")
            rule = TERMINAL_TARGET
        elif index == 0:
            message += (" The rule is Q(s,a) <- (1 - alpha) Q(s,a) + "
                        "alpha (r + discount max_a' Q(s',a')).")
        return failed(message, rule=rule)
    return passed(f"all {len(expected)} updates match the Q-learning rule, "
                  "terminal transitions included.")


# --- the training loop: terminated versus truncated ------------------------------------

def _loop_inputs(rng):
    length = int(rng.integers(3, 8))
    return {"length": length, "time_limit": int(rng.integers(length + 2, length + 10)),
            # fractions (x.25 or x.75 in total), so a loop that casts the total is caught
            "step_reward": -0.5, "goal_reward": float(rng.integers(5, 20)) + 0.25}


DEFAULT_T_MAX = 10_000  # the default the signature gives


def _loop_probe(inputs, play_and_train):
    outcome = {}
    for case, action in (("reaches_goal", 1), ("runs_out_of_time", 0)):
        events = timeline()
        env = lent_corridor(inputs["length"], inputs["time_limit"], events,
                            step_reward=inputs["step_reward"],
                            goal_reward=inputs["goal_reward"])
        agent = scripted_agent(action, events)
        total = call_training_loop("play_and_train(env, agent)", play_and_train, env, agent)
        outcome[case] = {"returned": _as_number(total), "updates": agent.updates,
                         "retyped": agent.retyped, "steps": env.unwrapped.steps_taken,
                         "resets": env.unwrapped.resets, "order": list(events)}
    # the goal reached on the very step the time limit ends: terminated and truncated at
    # once, and the step is terminal all the same
    env = lent_corridor(inputs["length"], inputs["length"], step_reward=inputs["step_reward"],
                        goal_reward=inputs["goal_reward"])
    agent = scripted_agent(1)
    call_training_loop("play_and_train(env, agent)", play_and_train, env, agent)
    outcome["goal_at_the_limit"] = {"updates": agent.updates,
                                    "steps": env.unwrapped.steps_taken}
    # t_max ends an episode that no time limit ends first: given, and by its default
    for case, t_max, limit in (("stopped_by_t_max", inputs["time_limit"] - 2,
                                inputs["time_limit"]),
                               ("no_steps", 0, inputs["time_limit"]),  # t_max=0: none
                               ("default_t_max", None, DEFAULT_T_MAX + 5)):
        events = timeline()  # where t_max cuts the episode, the loop asks for no more
        env = lent_corridor(inputs["length"], limit, events if t_max else None,
                            step_reward=inputs["step_reward"],
                            goal_reward=inputs["goal_reward"])
        agent = scripted_agent(0, events if t_max else None)
        if t_max is None:
            call_training_loop("play_and_train(env, agent)", play_and_train, env, agent)
        elif t_max == 0:  # what it raises is data: the other cases' rules come first
            made = attempted(lambda: call_training_loop(
                "play_and_train(env, agent, t_max=0)", play_and_train, env, agent, t_max=0))
            if "raised" in made:
                outcome[case] = {"steps": None, "raised": made["raised"]}
                continue
        else:
            call_training_loop(f"play_and_train(env, agent, t_max={t_max})", play_and_train,
                               env, agent, t_max=t_max)
        outcome[case] = {"steps": env.unwrapped.steps_taken, "t_max": t_max,
                         "order": list(events)}
        if case == "stopped_by_t_max":  # the flags it told update (the default's 10,000
            outcome[case]["updates"] = list(agent.updates)  # updates are not read)
    return outcome


def _loop_verdict(inputs, data):
    length, limit = inputs["length"], inputs["time_limit"]
    goal = data["reaches_goal"]
    timeout = data["runs_out_of_time"]
    for case in (goal, timeout):
        if case["resets"] < 1:
            return failed("play_and_train never called env.reset() to start the episode.",
                          rule=LOOP_STEPS)
        if len(case["updates"]) != case["steps"]:
            return failed(f"the episode took {case['steps']} steps but agent.update was called "
                          f"{len(case['updates'])} times: update once per step.",
                          rule=LOOP_STEPS)
    for case in (goal, timeout):  # the actions played are the agent's
        problem = play_order_problem(case["order"], only_played=True)
        if problem:
            return failed(problem, rule=LOOP_STEPS)
    if goal["steps"] != length:
        return failed(f"in a corridor the agent finishes in {length} steps, but the episode "
                      f"ran {goal['steps']} steps: stop when terminated is True.",
                      rule=STOPS_AT_END)
    if not goal["updates"][-1][4]:
        return failed("the last step reached the goal (terminated=True), but agent.update "
                      "was told terminated=False.", rule=UPDATE_GETS_TERMINATED)
    expected_total = (length - 1) * inputs["step_reward"] + inputs["goal_reward"]
    if goal["returned"] != expected_total:
        return failed(f"play_and_train should return the episode's total reward "
                      f"{expected_total:g} but returned {goal['returned']}.",
                      rule=RETURNS_TOTAL)
    if timeout["steps"] > limit:
        stopped = " (where the grader stopped it)" if timeout["steps"] >= runaway_limit(
            limit) else ""
        return failed(f"the time limit is {limit} steps but the episode went on for "
                      f"{timeout['steps']}{stopped}: stop when truncated is True too.",
                      rule=STOPS_AT_END)
    if timeout["steps"] < limit:
        return failed(f"the episode stopped after {timeout['steps']} steps, before the time "
                      f"limit of {limit}, though it neither terminated nor was truncated.",
                      rule=STOPS_AT_END)
    for case, wanted in (("stopped_by_t_max", limit - 2), ("no_steps", 0),
                         ("default_t_max", DEFAULT_T_MAX)):
        if "raised" in data.get(case, {}):
            return failed(f"{data[case]['raised']}; with t_max={wanted} the loop takes "
                          f"{wanted} steps and returns the total of none.", rule=T_MAX_CAP)
        steps = data.get(case, {}).get("steps")
        if steps != wanted:
            call = ("play_and_train(env, agent)" if case == "default_t_max" else
                    f"play_and_train(env, agent, t_max={wanted})")
            return failed(f"{call} on an episode that neither terminates nor is truncated "
                          f"before step {wanted} ran {steps} steps; t_max (default "
                          f"{DEFAULT_T_MAX:,}) is the most steps it may take.",
                          rule=T_MAX_CAP)
    if any(update[4] for update in timeout["updates"]):
        return failed("the episode was cut by the time limit (truncated=True, "
                      "terminated=False), but agent.update was told terminated=True. A time "
                      "limit is not a terminal state: the future still has value, so pass "
                      "`terminated`, not `terminated or truncated` (Pardo et al., 2018).",
                      rule=UPDATE_GETS_TERMINATED)
    capped = data["stopped_by_t_max"]
    if any(update[4] for update in capped.get("updates") or []):
        return failed(f"play_and_train(env, agent, t_max={capped['t_max']}) stopped an "
                      "episode that neither terminated nor was truncated, and told "
                      "agent.update terminated=True on its last step. Where t_max stops the "
                      "loop the state still has a future, as at a time limit: pass the "
                      "environment's `terminated` as it is.", rule=UPDATE_GETS_TERMINATED)
    at_limit = data["goal_at_the_limit"]
    if len(at_limit["updates"]) != at_limit["steps"]:
        return failed(f"with an agent whose epsilon is 0, the episode took {at_limit['steps']} "
                      f"steps but agent.update was called {len(at_limit['updates'])} times: "
                      "update once per step, whatever epsilon holds.", rule=LOOP_STEPS)
    if at_limit["updates"] and not at_limit["updates"][-1][4]:
        return failed(f"with a time limit of {length} steps the goal is reached on the last "
                      "one: the step is terminated=True and truncated=True at once, but "
                      "agent.update was told terminated=False. The goal is terminal whatever "
                      "the time limit says: pass `terminated` as it is.",
                      rule=UPDATE_GETS_TERMINATED)
    problem = (_transitions_problem(inputs, goal["updates"], timeout["updates"])
               or retyped_problem(data))
    if problem:
        return failed(problem, rule=UPDATE_OWN_TRANSITION)
    for case in (goal, timeout, data["stopped_by_t_max"]):  # reset, then get_action, step
        problem = play_order_problem(case["order"])  # and update in turn
        if problem:
            return failed(problem, rule=LOOP_STEPS)
    return passed("episodes end on terminated or truncated, and only terminated reaches "
                  "update; one reset without a seed, then get_action, step and update in "
                  "turn.")


def _transitions_problem(inputs, goal_updates, timeout_updates):
    """What the loop told agent.update that is not the step it played, or None. The
    corridor is deterministic: walking right, step i goes from position i to i + 1;
    standing still, every step stays at 0."""
    length, step, goal = inputs["length"], inputs["step_reward"], inputs["goal_reward"]
    played = {"walking to the goal": (goal_updates, [
        [i, 1, goal if i + 1 == length else step, i + 1, i + 1 == length]
        for i in range(length)]),
        "standing still until the time limit": (timeout_updates, [
            [0, 0, step, 0, False]] * len(timeout_updates))}
    for case, (told, steps) in played.items():
        for number, (got, want) in enumerate(zip(told, steps), start=1):
            if [int(got[0]), int(got[1]), float(got[2]), int(got[3]), bool(got[4])] != want:
                names = ("state", "action", "reward", "next_state", "terminated")
                return (f"in the corridor ({case}), step {number} went from state {want[0]} "
                        f"with action {want[1]} to state {want[3]}, reward {want[2]:g}, but "
                        "agent.update was told " + ", ".join(
                            f"{name}={value}" for name, value in zip(names, got))
                        + ". Update on the step just played: the state the action was chosen "
                        "in (then move on: state = next_state), that action, its reward and "
                        "its next state.")
    return None


# --- learning on Taxi -----------------------------------------------------------------

LEARNING_EPISODES = 300  # most of the steps: a reference agent solves about half by then
LEARNING = dict(alpha=0.5, epsilon=0.25, discount=0.99, epsilon_decay=0.99)
SUCCESS_TOLERANCE = 0.10  # the run's mean success rate may trail the baseline's by this
RETURN_TOLERANCE = 25.0   # and its mean return by this much (a failure costs about -200)


def _learning_inputs(rng):
    return {"seeds": rng.integers(2**31, size=2).tolist(), "episodes": LEARNING_EPISODES,
            **LEARNING}


def _learning_probe(inputs, QLearningAgent, play_and_train):
    from checks.taxi_training import train_on_taxi

    # graded, the agent is the grader's reference (this lesson's answer: served, never
    # copied); in the student's own notebook it is their agent, run right there
    own_agent = QLearningAgent if student_process_of(QLearningAgent) is None else None

    settings = {k: v for k, v in inputs.items() if k not in ("seeds", "episodes")}

    def play_episode(env, agent):
        call_student("play_and_train(env, agent)", play_and_train, env, agent)

    return {"qtables": [train_on_taxi(play_episode, seed, [inputs["episodes"]], **settings,
                                      lent=True, agent_class=own_agent)[0].tolist()
                        for seed in inputs["seeds"]]}


def _learning_baseline(inputs):
    settings = {k: v for k, v in inputs.items() if k not in ("seeds", "episodes")}
    return reference(LESSON, "learning_baseline", inputs["seeds"], inputs["episodes"],
                     settings)


def _learning_verdict(inputs, data):
    from course.taxi import evaluate_qtable

    baseline = _learning_baseline(inputs)
    problem = wrong_amount("Q-tables", data["qtables"], len(inputs["seeds"]), rule=LOOP_LEARNS)
    shapes = {np.shape(q) for q in data["qtables"]}
    if problem or shapes != {(500, 6)}:
        return problem or failed(f"expected Q-tables of shape (500, 6), got {shapes}.",
                                 rule=LOOP_LEARNS)
    trained = [evaluate_qtable(np.asarray(q, dtype=np.float64)) for q in data["qtables"]]
    success = np.mean([e.success_rate for e in trained])
    base_success = np.mean([e["success_rate"] for e in baseline])
    mean_return = np.mean([e.mean_return for e in trained])
    base_return = np.mean([e["mean_return"] for e in baseline])
    summary = (f"after {inputs['episodes']} Taxi episodes on {len(trained)} seeds, the agent "
               f"your play_and_train trained (when graded: the course's reference agent) "
               f"solves {success:.1%} of the 300 start states greedily, with mean return "
               f"{mean_return:.2f}; the reference agent and loop: {base_success:.1%}, "
               f"{base_return:.2f}")
    figure = comparison(
        f"Taxi start states solved greedily after {inputs['episodes']} episodes", "share solved",
        [f"seed {number}" for number in range(1, len(trained) + 1)],
        {"your loop": [e.success_rate for e in trained],
         "reference loop": [e["success_rate"] for e in baseline]})
    if success < base_success - SUCCESS_TOLERANCE or mean_return < base_return - RETURN_TOLERANCE:
        return failed(summary + ". It learns clearly worse: the tests above say which part "
                      "(update, get_best_action, play_and_train) to look at.", figure=figure,
                      rule=LOOP_LEARNS)
    return passed(summary + ".", figure=figure)


# The agent's checks: what later lessons name when their checks fail and the agent is the
# student's own (in a student edition, lesson 01's module is made from their notebook).
AGENT = Callee("QLearningAgent", LESSON, ("test_value_and_best_action", "test_best_action_ties",
                                          "test_epsilon_greedy", "test_update"))

# What every call of this lesson's code promises (checks.contracts): exact result types,
# numpy scalars accepted where the text allows them; inputs untouched holds for all.
CONTRACTS = {
    "QLearningAgent": constructor(keywords=("alpha", "epsilon", "discount")),
    "QLearningAgent.get_qvalue": Contract(NUMBER, numpy_scalars=(0, 1)),
    "QLearningAgent.get_value": Contract(NUMBER, numpy_scalars=(0,)),
    "QLearningAgent.get_best_action": Contract(INT, numpy_scalars=(0,)),
    "QLearningAgent.get_action": Contract(INT, numpy_scalars=(0,)),
    "QLearningAgent.update": Contract(numpy_scalars=(0, 1, 2, 3, 4)),
    "play_and_train": Contract(NUMBER, numpy_scalars=(2,), numpy_keywords=("t_max",)),
}

DISTRIBUTIONS = {
    "test_best_action_ties": "ties broken uniformly among the tied legal actions "
                             "(chi-square over every tied action, rejection rate 1e-6)",
    "test_epsilon_greedy": "get_action's choices against epsilon-greedy's exact "
                           "probabilities at epsilon 0, one drawn in [0.15, 0.6], 1, and a "
                           "small one in [0.002, 0.004] (chi-square and a binomial test, "
                           "rejection rate 1e-6 each)",
}

CHECKS = LessonChecks(LESSON, [
    Check("test_value_and_best_action", "get_value and get_best_action", ("QLearningAgent",),
          _values_inputs, _values_probe, _values_verdict,
          asks="get_value and get_best_action give the largest Q-value over a state's legal "
               "actions and an action that has it, with negative and never-set Q-values.",
          rules=(VALUE_IS_LEGAL_MAX, BEST_ACTION_IS_ARGMAX, UNSET_IS_ZERO, LEGAL_ONLY,
                 LEGAL_ANY_SEQUENCE)),
    Check("test_best_action_ties", "ties in get_best_action", ("QLearningAgent",),
          _ties_inputs, _ties_probe, _ties_verdict,
          asks="get_best_action breaks ties uniformly at random, also in a state never "
               "updated, and reproducibly with the agent's own seeded generator.",
          rules=(TIES_UNIFORM, OWN_GENERATOR, BEST_ACTION_IS_ARGMAX, LEGAL_ONLY)),
    Check("test_epsilon_greedy", "epsilon-greedy get_action", ("QLearningAgent",),
          _epsilon_inputs, _epsilon_probe, _epsilon_verdict,
          asks="get_action's choices fit epsilon-greedy at epsilon 0, 1 and in between (a "
               "chi-square test a correct agent fails once in a million runs), break greedy "
               "ties at random, and reproduce with the agent's seed.",
          rules=(EPSILON_GREEDY, GREEDY_IS_BEST_ACTION, EPSILON_EACH_CALL, OWN_GENERATOR,
                 LEGAL_ONLY, LEGAL_ANY_SEQUENCE)),
    Check("test_update", "update on fixed transitions", ("QLearningAgent",),
          _update_inputs, _update_probe, _update_verdict,
          asks="update follows the Q-learning rule on a fixed list of transitions, with the "
               "reward alone as the target of terminal ones.",
          rules=(Q_LEARNING_RULE, TERMINAL_TARGET)),
    Check("test_play_and_train", "play_and_train: terminated versus truncated",
          ("play_and_train",), _loop_inputs, _loop_probe, _loop_verdict,
          asks="play_and_train plays a corridor episode to its goal (terminated) or its time "
               "limit (truncated), updating on each step's transition and returning the total "
               "reward.",
          rules=(LOOP_STEPS, UPDATE_OWN_TRANSITION, STOPS_AT_END, T_MAX_CAP, RETURNS_TOTAL,
                 UPDATE_GETS_TERMINATED)),
    Check("test_learning", "learning on Taxi", ("QLearningAgent", "play_and_train"),
          _learning_inputs, _learning_probe, _learning_verdict, time_limit=60.0,
          learning=True, prepare=_learning_baseline,
          # graded, the agent is the course's reference: only the loop is the student's
          calls=(Callee(AGENT.name, LESSON, AGENT.checks, graded=False),
                 Callee("play_and_train", LESSON, ("test_play_and_train",))),
          asks="Your play_and_train trains the course's reference agent on Taxi about as well "
               "as the reference loop does.",
          rules=(LOOP_LEARNS,)),
], contracts=CONTRACTS, distributions=DISTRIBUTIONS, inputs_untouched=False)
