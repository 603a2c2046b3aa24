"""Checks for lesson 08: n-step returns and their replay buffer, frame stacks stored once,
and the on-policy rollout buffer with generalised advantage estimation.

Every expected value comes from the judge's references (grader/judge/references/
lesson08.py), never from code here: these checks ship with the student edition.
"""

import numpy as np

from checks.contracts import INPUTS_UNTOUCHED, Contract, array, constructor, tuple_of
from checks.expected import expected as reference
from checks.held_arrays import held_arrays
from checks.framework import (Callee, Check, LessonChecks, attempted, call_student,
                              call_student_repeatedly, failed, fill_in_place, kept_with,
                              outcome_of, parts_of, passed, result_by_reference,
                              value_error_problem, wrong_amount)
from checks.operation_sequences import first_difference, observed, sequences, shown
from checks.requirements import Rule
from checks.sampler_fit import (batches_for, distribution_problem, fill_and_batch_cases,
                                row_order_problem)

LESSON = "08_nstep_replay"

# --- the rules: what the lesson tells the student, each tagged beside its sentence -------

# test_n_step_return
N_STEP_SUM = Rule("n-step-sum", "returns is the discounted sum of a row's rewards up to and "
                  "including the first step that ends its episode (all n if none does), and "
                  "steps is how many steps that is, as an integer array.")
STOPS_AT_END = Rule("stops-at-episode-end", "Steps after the first end of an episode in a "
                    "row belong to another episode: they never count.")
TERMINATED_ZERO = Rule("terminated-bootstraps-zero", "Where the last step used terminated, "
                       "nothing follows: the discount to bootstrap with is 0.")
TRUNCATED_BOOTSTRAPS = Rule("truncated-bootstraps", "Where the last step used was truncated "
                            "by the time limit, or the window did not end, the discount is "
                            "discount**m: the state reached still has a value.")
ANY_DISCOUNT = Rule("any-discount", "Any discount in [0, 1] is valid, 0 and 1 included.")
# test_nstep_records
BAD_ARGUMENTS = Rule("bad-arguments-raise", "NStepReplayBuffer with a capacity or an n below "
                     "1 or not whole, or a discount outside [0, 1], raises ValueError; any "
                     "other is valid, capacity 1, n 1 and discounts 0 and 1 included.")
RECORDS_KEEP_TYPES = Rule("records-keep-types", "The record arrays are shaped and typed like "
                          "the first record's fields: integer actions stay integers, float32 "
                          "observations float32.")
RECORD_WHEN_KNOWN = Rule("record-when-known", "A transition becomes a record once n "
                         "transitions of its episode are in from it on, or as soon as its "
                         "episode ends; an add that ends the episode completes every waiting "
                         "transition, oldest first.")
RECORDS_ARE_N_STEP = Rule("records-are-n-step", "A record is (observation, action, return, "
                          "discount, bootstrap observation) from n_step_return on the window "
                          "of up to n steps starting at the transition; the bootstrap "
                          "observation is the next observation of the last step used.")
ADD_COPIES = Rule("add-copies", "add keeps copies: the caller may reuse its arrays.")
FIFO_RECORDS = Rule("fifo-records", "Once the buffer holds capacity records, a new record "
                    "replaces the oldest.")
LEN_COUNTS_RECORDS = Rule("len-counts-records", "len(buffer) is the number of records held; "
                          "transitions still waiting for their return are not counted.")
# test_nstep_sample
SAMPLE_UNIFORM = Rule("sample-uniform", "sample returns the five fields of batch_size "
                      "records as new arrays, each row one record, drawn uniformly with "
                      "replacement from self.rng.")
SAMPLE_ERRORS = Rule("sample-errors", "sample with a batch_size below 1, or on a buffer "
                     "holding no record, raises ValueError.")
# test_frame_stacks
FRAME_ARGUMENTS = Rule("frame-arguments", "FrameStackReplay needs whole numbers with "
                       "capacity > stack >= 1, and an add before any start_episode, raise "
                       "ValueError.")
FRAMES_ONCE = Rule("frames-once", "Each frame is stored once, in one ring of capacity frames: "
                   "nbytes, a Python int at any time, counts every array the buffer holds, its "
                   "frames and the arrays of actions, rewards and flags beside them.")
FRAME_SAMPLE_UNIFORM = Rule("frame-sample-uniform", "sample returns new arrays of transitions "
                            "drawn uniformly with replacement from self.rng among those whose "
                            "two stacks are still whole in the ring.")
STACKS_REBUILT = Rule("stacks-rebuilt", "A stack holds stack frames, oldest first, and ends "
                      "with the transition's own frame (its next frame for next_stacks).")
STACK_WITHIN_EPISODE = Rule("stack-within-episode", "A stack never reaches across the start "
                            "of its episode: the episode's first frame is repeated instead.")
# test_gae
GAE_RECURSION = Rule("gae-recursion", "delta_t = r_t + discount * V(s'_t) (0 where step t "
                     "terminated) - V(s_t); A_t = delta_t + discount * lam * A_(t+1), "
                     "restarted where step t ended its episode and 0 after the last step; "
                     "returns = A + values.")
GAE_ANY_SHAPE = Rule("gae-any-shape", "gae works along the first axis of arrays of any "
                     "further shape, each column a rollout of its own, and returns float "
                     "arrays of the rewards' shape.")
# test_rollout_buffer
ROLLOUT_FULL = Rule("rollout-full", "Adding to a full rollout, or get() before it is full, "
                    "raises ValueError; a refused get() keeps the steps it holds.")
USED_ONCE = Rule("used-once", "get() returns the rollout's observations, actions, and gae's "
                 "advantages and returns, and empties the buffer: each step is used once.")
ROLLOUT_COPIES = Rule("rollout-copies", "add keeps copies of what it is given: the caller may "
                      "reuse its observation arrays.")


def _close(got, want, tolerance=1e-9):
    try:
        return bool(np.allclose(np.asarray(got, dtype=np.float64),
                                np.asarray(want, dtype=np.float64),
                                rtol=tolerance, atol=tolerance))
    except (TypeError, ValueError):
        return False


def _listed(values, digits=4):
    return "[" + ", ".join(f"{value:.{digits}g}" if isinstance(value, float) else str(value)
                           for value in values) + "]"


# --- n_step_return ---------------------------------------------------------------------------

def _window_case(rng, rows, n, discount):
    """Windows of n steps with ends placed where mistakes show: an end on the first step, a
    truncation alone, an end followed by a later one (the next episode's), both flags on
    one step, and rows that do not end."""
    rewards = np.round(rng.uniform(-2.0, 3.0, size=(rows, n)), 3)
    terminated = rng.random((rows, n)) < 0.2
    truncated = (rng.random((rows, n)) < 0.15) & ~terminated
    if n >= 2:
        terminated[0, :], truncated[0, :] = False, False
        terminated[0, 0] = True                      # ends at once
        terminated[1, :], truncated[1, :] = False, False
        truncated[1, n - 2] = True                   # cut by the time limit
        terminated[2, :], truncated[2, :] = False, False
        terminated[2, 0] = True
        truncated[2, n - 1] = True                   # the next episode's end: never counted
        terminated[3, :], truncated[3, :] = False, False
        terminated[3, 1], truncated[3, 1] = True, True  # both at once: terminated
        terminated[4, :], truncated[4, :] = False, False  # no end in the window
    return {"rewards": rewards.tolist(), "terminated": terminated.tolist(),
            "truncated": truncated.tolist(), "discount": discount}


def _n_step_inputs(rng):
    discount = round(float(rng.uniform(0.8, 0.99)), 3)
    long_n = int(rng.integers(3, 7))
    cases = {"windows": _window_case(rng, int(rng.integers(8, 13)), long_n, discount),
             "one_step": _window_case(rng, int(rng.integers(5, 9)), 1, discount),
             "two_steps": _window_case(rng, int(rng.integers(6, 9)), 2, discount)}
    # 0 and 1 as a caller writes them, Python ints: the discounts are floats all the same
    cases["discount_zero"] = {**cases["windows"], "discount": 0}
    cases["discount_one"] = {**cases["windows"], "discount": 1}
    return {"cases": cases}


def _returned_parts(got):
    """The three arrays n_step_return returned, as lists (the contract holds their types)."""
    returns, discounts, steps = got
    return {"returns": np.asarray(returns).tolist(), "discounts": np.asarray(discounts).tolist(),
            "steps": np.asarray(steps).tolist()}


def _n_step_call(n_step_return, case, integer_rewards=False):
    rewards = np.array(case["rewards"])
    if integer_rewards:
        rewards = np.round(rewards).astype(np.int64)
    description = (f"n_step_return(rewards, terminated, truncated, {case['discount']}) on "
                   f"windows of shape {rewards.shape}"
                   + (" with integer rewards" if integer_rewards else ""))
    got = call_student(description, n_step_return, rewards,
                       np.array(case["terminated"], dtype=bool),
                       np.array(case["truncated"], dtype=bool), case["discount"])
    return _returned_parts(got)


def _n_step_probe(inputs, n_step_return):
    returned = {name: _n_step_call(n_step_return, case)
                for name, case in inputs["cases"].items()}
    # integer rewards (CartPole's +1 as int): still float returns (the contract holds it)
    _n_step_call(n_step_return, inputs["cases"]["windows"], integer_rewards=True)
    return returned


def _row_words(case, row):
    ends = [("terminated" if te and not tr else "terminated and truncated" if te
             else "truncated" if tr else "-")
            for te, tr in zip(case["terminated"][row], case["truncated"][row])]
    return (f"row {row}: rewards {case['rewards'][row]}, per step {ends}, discount "
            f"{case['discount']}")


def _n_step_row_problem(case, row, got, want, any_discount):
    rewards, discount = case["rewards"][row], case["discount"]
    terminated, truncated = case["terminated"][row], case["truncated"][row]
    n, m = len(rewards), want["steps"]
    situation = _row_words(case, row)
    rule = ANY_DISCOUNT if any_discount else None
    if got["steps"] != m:
        return failed(f"{situation}: steps is {got['steps']}, expected {m}"
                      + (": the sum stops at the first step that ends the episode (that step "
                         "included); later steps are the next episode's."
                         if m < n else ": no step of this window ends the episode, so all "
                         f"{n} count."), rule=rule or (STOPS_AT_END if m < n else N_STEP_SUM))
    if not _close(got["returns"], want["returns"]):
        whole = sum(discount ** k * r for k, r in enumerate(rewards))
        past_end = m < n and _close(got["returns"], whole)
        return failed(f"{situation}: the return is {got['returns']:.6g}, expected "
                      f"{want['returns']:.6g}, the sum of discount**k * reward over the first "
                      f"{m} step(s)"
                      + (": it summed past the end of the episode." if past_end else "."),
                      rule=rule or (STOPS_AT_END if past_end else N_STEP_SUM))
    if not _close(got["discounts"], want["discounts"]):
        last = m - 1
        if terminated[last]:
            return failed(f"{situation}: the discount to bootstrap with is "
                          f"{got['discounts']:.6g}, expected 0: step {last} terminated"
                          + (" (and was truncated too: a termination wins)"
                             if truncated[last] else "") + ", so nothing follows it.",
                          rule=rule or TERMINATED_ZERO)
        why = (f"step {last} was truncated by the time limit, not terminated: the state "
               "reached still has a value" if truncated[last]
               else "no step of this window ends the episode")
        return failed(f"{situation}: the discount to bootstrap with is {got['discounts']:.6g}, "
                      f"expected discount**{m} = {want['discounts']:.6g}: {why}.",
                      rule=rule or TRUNCATED_BOOTSTRAPS)
    return None


def _n_step_verdict(inputs, data):
    wanted = reference(LESSON, "n_step_parts", inputs["cases"])
    for name, case in inputs["cases"].items():
        got, want = data.get(name), wanted[name]
        rows = len(case["rewards"])
        for part in ("returns", "discounts", "steps"):
            problem = wrong_amount(f"{part} for {rows} windows ({name})",
                                   (got or {}).get(part), rows, rule=N_STEP_SUM)
            if problem:
                return problem
        for row in range(rows):
            problem = _n_step_row_problem(
                case, row, {part: got[part][row] for part in got},
                {part: want[part][row] for part in want},
                any_discount=name in ("discount_zero", "discount_one"))
            if problem:
                return problem
    return passed("the returns, discounts and steps of windows of 1, 2 and "
                  f"{len(inputs['cases']['windows']['rewards'][0])} steps, with discounts "
                  f"{inputs['cases']['windows']['discount']}, 0 and 1, are right.")


# --- NStepReplayBuffer: records ---------------------------------------------------------------

CONTENT_DRAWS = 600  # a record held among at most 8 is missed with probability < 1e-33
# transition k: observation (k, k + 0.5), action k % 3, next observation (k + 0.25, k + 0.75):
# every field names its transition, and a next observation is no other transition's start
NEXT_OFFSET = 0.25


def _observation(k):
    return np.array([float(k), k + 0.5])


def _next_observation(k):
    return np.array([k + NEXT_OFFSET, k + 0.5 + NEXT_OFFSET])


def _draw_record_operation(rng, position, sequence):
    if position > 0 and rng.random() < 0.25:
        return ["contents"]
    reward = round(float(rng.uniform(-1.0, 2.0)), 3)
    terminated = bool(rng.random() < 0.15)
    truncated = bool(rng.random() < 0.1) and not terminated
    return ["add", reward, terminated, truncated]


# the two longest sequences take the edges of [0, 1] as discount (values like any other,
# never "missing"), with n >= 2 so that a record's return shows the discount
EDGE_DISCOUNTS = {5: 0.0, 6: 1.0}


def _records_inputs(rng):
    drawn = sequences(rng, _draw_record_operation)
    found = [{"capacity": int(rng.integers(3, 9)), "n": int(rng.integers(1, 5)),
              "discount": round(float(rng.uniform(0.5, 0.95)), 3),
              "seed": int(rng.integers(2**31)), "operations": operations}
             for operations in drawn]
    for index, discount in EDGE_DISCOUNTS.items():
        found[index]["discount"] = discount
        found[index]["n"] = max(2, found[index]["n"])
    return {"sequences": found}


def _new_nstep_buffer(NStepReplayBuffer, capacity, n, discount, seed):
    return call_student(f"NStepReplayBuffer({capacity}, {n}, {discount}, seed={seed})",
                        NStepReplayBuffer, capacity, n, discount, seed=seed)


def _record_rows(batch):
    """Distinct (observation id, action, return, discount, bootstrap id) of a batch."""
    try:
        observations, actions, returns, discounts, bootstraps = (np.asarray(field)
                                                                 for field in batch)
    except (TypeError, ValueError):
        return "not five arrays"
    rows = set()
    for observation, action, value, discount, bootstrap in zip(
            observations.reshape(len(observations), -1), actions.reshape(-1),
            returns.reshape(-1), discounts.reshape(-1),
            bootstraps.reshape(len(bootstraps), -1)):
        rows.add((round(float(observation[0]), 6), int(action), round(float(value), 6),
                  round(float(discount), 6), round(float(bootstrap[0]), 6)))
    return [list(row) for row in sorted(rows)]  # as plain data: lists, as the channel gives


def _record_operations(buffer):
    """Applies one operation of a sequence to ``buffer``; the caller's arrays, placed with
    the student's code, are refilled in place for every add (as an environment loop
    reuses its own), so what add keeps must be a copy."""
    added = 0
    observation = kept_with(_observation(0), near=buffer)
    next_observation = kept_with(_next_observation(0), near=buffer)

    def apply(operation):
        nonlocal added
        if operation[0] == "contents":
            got = attempted(call_student, f"sample({CONTENT_DRAWS})", buffer.sample,
                            CONTENT_DRAWS)
            return "raised" if "raised" in got else _record_rows(got["value"])
        _, reward, terminated, truncated = operation
        fill_in_place(observation, _observation(added))
        fill_in_place(next_observation, _next_observation(added))
        call_student(f"add(observation, {added % 3}, {reward}, next_observation, "
                     f"{terminated}, {truncated})", buffer.add, observation, added % 3,
                     reward, next_observation, terminated, truncated)
        added += 1
        return call_student("len(buffer)", len, buffer)
    return apply


# the rewards of one 3-step window that does not end: its record shows the discount
EDGE_REWARDS = (1.0, 2.0, 4.0)


def _edge_record(NStepReplayBuffer, discount):
    """(return, discount) of the one record a 3-step buffer with ``discount`` holds after
    three steps that do not end."""
    buffer = _new_nstep_buffer(NStepReplayBuffer, 4, len(EDGE_REWARDS), discount, 0)
    for k, reward in enumerate(EDGE_REWARDS):
        call_student(f"add(observation, 0, {reward}, next_observation, False, False)",
                     buffer.add, _observation(k), 0, reward, _next_observation(k), False, False)
    batch = call_student("sample(1)", buffer.sample, 1)
    try:
        _, _, returns, discounts, _ = batch
        return [float(np.asarray(returns).reshape(-1)[0]),
                float(np.asarray(discounts).reshape(-1)[0])]
    except (TypeError, ValueError, IndexError):
        return None  # not five fields of one row: the sequences' samples say more


def _records_probe(inputs, NStepReplayBuffer, n_step_return):
    # n_step_return is the notebook's, which the class calls itself
    return {"sequences": [observed(sequence["operations"], _record_operations(
        _new_nstep_buffer(NStepReplayBuffer, sequence["capacity"], sequence["n"],
                          sequence["discount"], sequence["seed"])))
        for sequence in inputs["sequences"]],
        "edges": {str(discount): attempted(_edge_record, NStepReplayBuffer, discount)
                  for discount in (0.0, 1.0)}}


def _operation_words(operation):
    if operation[0] == "contents":
        return f"sample({CONTENT_DRAWS})"
    _, reward, terminated, truncated = operation
    return f"add(reward={reward}, terminated={terminated}, truncated={truncated})"


def _record_words(record):
    observation, action, value, discount, bootstrap = record
    source = int(round(bootstrap - NEXT_OFFSET))
    return (f"(transition {int(observation)}: return {value:.6g}, discount {discount:.6g}, "
            f"bootstrapping from transition {source}'s next observation)")


# rows are rounded to 6 decimals to be read and compared as sets; two sums of the same
# rewards added in another order (a correct variant) may round apart by one last digit
ROUNDED_APART = 1.5e-6


def _same_row(got, wanted):
    """Whether a sampled row is a record: ids and action exact, the numbers to rounding."""
    return got[0] == wanted[0] and got[1] == wanted[1] and all(
        abs(a - b) <= ROUNDED_APART for a, b in zip(got[2:], wanted[2:]))


def _observation_agrees(got, wanted):
    """A len, or a sample's distinct rows, as the reference's."""
    if isinstance(got, list) and isinstance(wanted, list):
        return len(got) == len(wanted) and all(
            isinstance(row, list) and len(row) == 5 and _same_row(row, record)
            for row, record in zip(sorted(got), sorted(wanted)))
    return got == wanted


def _contents_problem(got, wanted, start, completed_at):
    """The rule and words of a sample whose records are not the reference's;
    ``completed_at``: the operation at which each transition became a record."""
    if got == "raised":
        return (RECORD_WHEN_KNOWN, f"{start} raised: the buffer then holds the records of "
                f"transitions {[int(r[0]) for r in wanted]}")
    if not isinstance(got, list):
        return (SAMPLE_UNIFORM, f"{start} did not return five arrays")
    got_rows, wanted_rows = {tuple(r) for r in got}, {tuple(r) for r in wanted}
    if wanted == []:
        return (RECORD_WHEN_KNOWN, f"{start} returned records, but no transition's return is "
                "known yet: sample raises ValueError on a buffer holding no record")
    got_ids, wanted_ids = {r[0] for r in got_rows}, {r[0] for r in wanted_rows}
    if len(got_ids) == 1 and len(wanted_ids) > 1:
        return (ADD_COPIES, f"{start} returned records whose observations are all "
                f"{_record_words(next(iter(got_rows)))}'s: the caller reuses its observation "
                "arrays for every add, so keep copies")
    # a row whose action, return and discount are one record's, but whose observation is
    # another transition's: the buffer kept the caller's array, which the caller refilled
    by_values = {record[1:4]: record for record in wanted_rows}
    for row in sorted(got_rows):
        record = by_values.get(row[1:4])
        if record is not None and row[0] != record[0] and row[0] > record[0]:
            return (ADD_COPIES, f"{start} returned {_record_words(record)} with the observation "
                    f"of transition {int(row[0])}, a later one: the caller refills its "
                    "observation arrays for every add, so add keeps copies")
    for record in sorted(wanted_rows):
        same = [r for r in got_rows if r[0] == record[0]]
        if same and not any(_same_row(row, record) for row in same):
            return (RECORDS_ARE_N_STEP, f"{start} returned {_record_words(same[0])}; its record "
                    f"is {_record_words(record)}")
    stale = sorted(got_ids - wanted_ids)
    missing = sorted(wanted_ids - got_ids)
    held = sorted(int(i) for i in wanted_ids)
    flushed_together = {completed_at.get(str(int(i))) for i in stale + missing}
    if stale and missing and len(flushed_together) == 1 and None not in flushed_together:
        return (RECORD_WHEN_KNOWN, f"{start} returned the record of transition "
                f"{int(stale[0])} but not that of {int(missing[0])}; both became records at "
                f"the same add, which ended their episode: complete the waiting transitions "
                f"oldest first, so the newer record is the one kept (the buffer holds "
                f"transitions {held})")
    if stale and missing and max(stale) < min(missing):
        return (FIFO_RECORDS, f"{start} returned the record of transition {int(stale[0])}, which "
                f"a newer record replaced; the buffer holds transitions {held}")
    if stale:
        return (RECORD_WHEN_KNOWN, f"{start} returned the record of transition "
                f"{int(stale[0])}, whose return is not known yet (or whose record a newer one "
                f"replaced); the buffer holds the records of transitions {held}")
    if missing:
        return (RECORD_WHEN_KNOWN, f"{start} never returned the record of transition "
                f"{int(missing[0])} in {CONTENT_DRAWS} draws; the buffer holds the records "
                f"of transitions {held}: a record is written when n transitions are in, or as "
                "soon as its episode ends")
    extra = [row for row in sorted(got_rows)
             if not any(_same_row(row, record) for record in wanted_rows)] or sorted(got_rows)
    return (RECORDS_ARE_N_STEP, f"{start} returned a row {extra[0]} (observation, action, "
            f"return, discount, bootstrap observation) that is no record the buffer holds "
            f"(an empty slot?); it holds the records of transitions {held}")


def _records_verdict(inputs, data):
    problem = wrong_amount("sequences", data.get("sequences"), len(inputs["sequences"]),
                           rule=RECORD_WHEN_KNOWN)
    if problem:
        return problem
    wanted_all = reference(LESSON, "record_sequences", inputs["sequences"])
    for sequence, got_all, expected_run in zip(inputs["sequences"], data["sequences"],
                                               wanted_all):
        wanted_all_ops = expected_run["shown"]
        found = first_difference([sequence["operations"]], [got_all],
                                 lambda _, shown_ops=wanted_all_ops: shown_ops,
                                 lambda g, w, _: _observation_agrees(g, w))
        if not found:
            continue
        operations, position, got, wanted = found
        calls = shown(operations, position, _operation_words)
        start = (f"on NStepReplayBuffer({sequence['capacity']}, n={sequence['n']}, "
                 f"discount={sequence['discount']}), the calls {calls} (the k-th add storing "
                 "transition k, from 0)")
        if operations[position][0] == "add":
            before = next((shown_len for shown_len in reversed(wanted_all_ops[:position])
                           if isinstance(shown_len, int)), 0)
            ends = operations[position][2] or operations[position][3]
            if isinstance(got, int) and before <= got < wanted:
                return failed(f"{start} left len(buffer) at {got}; it should be {wanted}: "
                              + ("this add ended the episode, so every transition still "
                                 "waiting becomes a record now (its return stops at the end)."
                                 if ends else "n transitions are in from the oldest waiting "
                                 "one, so its return is known: it becomes a record now."),
                              rule=RECORD_WHEN_KNOWN)
            return failed(f"{start} left len(buffer) at {got!r}; it should be {wanted}: len "
                          "counts the records held, not the transitions still waiting for "
                          "their return, and never more than the capacity.",
                          rule=LEN_COUNTS_RECORDS)
        rule, words = _contents_problem(got, wanted, start + " ended with a sample that",
                                        expected_run["completed_at"])
        return failed(words + ".", rule=rule)
    for discount, got in data["edges"].items():
        want = [sum(float(discount) ** k * r for k, r in enumerate(EDGE_REWARDS)),
                float(discount) ** len(EDGE_REWARDS)]
        if "raised" in got or got["value"] is None or not _close(got["value"], want):
            said = (f"failed: {got['raised']}" if "raised" in got else
                    "sampled no five fields of one record" if got["value"] is None else
                    f"held return {got['value'][0]:.6g} and discount {got['value'][1]:.6g}")
            return failed(f"NStepReplayBuffer(4, 3, {discount}) given three steps with rewards "
                          f"{list(EDGE_REWARDS)}, none ending the episode, {said}; its record "
                          f"has return {want[0]:g} and discount {want[1]:g}: a discount of "
                          f"{discount} is used as given.", rule=RECORDS_ARE_N_STEP)
    return passed(f"adds, lens and samples agree with the reference over "
                  f"{len(inputs['sequences'])} sequences (n from 1 to 4, episodes ending by "
                  "termination and truncation, rings that wrap, discounts 0 and 1).")


# --- NStepReplayBuffer: sampling --------------------------------------------------------------

# small batches from few records: rows drawn independently repeat a record within a batch
# and in neighbouring rows (checks.sampler_fit.row_order_problem)
SMALL_STORED, SMALL_BATCH, SMALL_BATCHES = 5, 4, 300
VALID_CONSTRUCTIONS = ((1, 1, 0), (3, 2, 1), (2, 3, 0.0), (1, 4, 1.0))
BAD_CONSTRUCTIONS = ((0, 2, 0.9), (-3, 2, 0.9), (2.5, 2, 0.9), (4, 0, 0.9), (4, 1.5, 0.9),
                     (4, 2, -0.1), (4, 2, 1.5))


def _sample_inputs(rng):
    return {"cases": fill_and_batch_cases(rng), "seed": int(rng.integers(2**31)),
            "other_seed": int(rng.integers(2**31)), "discount": 0.9,
            "batch": int(rng.integers(4, 9))}


def _filled_one_step(NStepReplayBuffer, capacity, additions, seed, discount=0.9):
    """A buffer with n=1, each add a record at once: transition k's record holds k."""
    buffer = _new_nstep_buffer(NStepReplayBuffer, capacity, 1, discount, seed)
    for k in range(additions):
        call_student("add(observation, action, reward, next_observation, False, False)",
                     buffer.add, _observation(k), k % 3, float(k), _next_observation(k),
                     False, False)
    return buffer


# batches fetched per round trip: a batch of one row is five small arrays, each with its own
# header on the wire, so thousands of them in one message would pass the channel's 1 MiB
CHUNK_BATCHES = 200


def _sampled_batches(buffer, batch_size, count):
    """``count`` batches sampled one after another, at most CHUNK_BATCHES per round trip."""
    batches = []
    while len(batches) < count:
        batches += call_student_repeatedly(f"sample({batch_size})", buffer.sample,
                                           min(CHUNK_BATCHES, count - len(batches)),
                                           batch_size)
    return batches


# observations of each dtype and shape: the records keep both (a frame stays a frame)
KEPT_OBSERVATIONS = {"float32": (2,), "float64": (3, 2), "uint8": (2, 2, 3)}
RECORDS_SAMPLED = 3
# a batch kept while two more are drawn: one refilled in place would change (4 records, 16
# rows: the same draws again by chance with probability 4**-16)
KEPT_BATCH = 16


def _batch_values(batch):
    return [np.asarray(part).tolist() for part in parts_of(batch)]


def _kept_across_calls(sample, batch_size, values):
    """(values of a batch as handed out, the same batch's values after two more samples):
    the batch is read where sample left it, as a learner that keeps it reads it."""
    kept = call_student(f"sample({batch_size})", result_by_reference, sample, batch_size)
    before = values(kept)
    for _ in range(2):
        call_student(f"sample({batch_size})", sample, batch_size)
    return before, values(kept)


def _kept_batch_problem(kept_batch, rule):
    """The failed verdict when a kept batch changed under later samples, or None."""
    before, after = kept_batch
    if before != after:
        return failed(f"a batch of sample({KEPT_BATCH}) changed when two more batches were "
                      "drawn: sample returns new arrays each time, never arrays it refills.",
                      rule=rule)
    return None


def _shaped_observation(k, kind, shape):
    return (np.arange(int(np.prod(shape))).reshape(shape) + k).astype(kind)


def _ids_of(batch):
    return np.asarray(batch[0], dtype=np.float64).reshape(len(batch[0]), -1)[:, 0].astype(
        np.int64).tolist()


def _sample_probe(inputs, NStepReplayBuffer, n_step_return):
    drawn = []
    for case in inputs["cases"]:
        buffer = _filled_one_step(NStepReplayBuffer, case["capacity"], case["additions"],
                                  inputs["seed"])
        stored = min(case["additions"], case["capacity"])
        batches = _sampled_batches(buffer, case["batch_size"],
                                   batches_for(stored, case["batch_size"]))
        drawn.append([k for batch in batches for k in _ids_of(batch)])
    # the buffer's own generator: the same seed draws the same batches, another seed others
    same = [_ids_of(call_student(f"sample({inputs['batch']})",
                                 _filled_one_step(NStepReplayBuffer, 20, 20, seed).sample,
                                 inputs["batch"]))
            for seed in (inputs["seed"], inputs["seed"], inputs["other_seed"], 0, 0)]
    # what the records hold keeps its type: observations of each dtype, integer actions
    dtypes = {}
    for kind, shape in KEPT_OBSERVATIONS.items():
        typed = _new_nstep_buffer(NStepReplayBuffer, 6, 2, 0.9, inputs["seed"])
        for k in range(4):
            call_student(f"add({kind} observation of shape {shape}, int action, reward, "
                         f"{kind} next_observation, {k == 3}, False)", typed.add,
                         _shaped_observation(k, kind, shape), k % 3, 1.0,
                         _shaped_observation(k + 1, kind, shape), k == 3, False)
        fields = call_student(f"sample({RECORDS_SAMPLED})", typed.sample, RECORDS_SAMPLED)
        dtypes[kind] = [[np.asarray(field).dtype.str, list(np.shape(field))]
                        for field in fields]
    valid = {f"NStepReplayBuffer({capacity}, {n}, {discount})": outcome_of(
        NStepReplayBuffer, capacity, n, discount)
        for capacity, n, discount in VALID_CONSTRUCTIONS}
    # a batch changed in place (a learner may normalise one) changes nothing stored
    buffer = _filled_one_step(NStepReplayBuffer, 4, 4, inputs["seed"])
    batch = call_student("sample(64)", result_by_reference, buffer.sample, 64)
    for field in parts_of(batch):
        try:
            fill_in_place(field, -1)
        except Exception:  # read-only batches cannot leak: nothing to try
            pass
    after = _ids_of(call_student("sample(64)", buffer.sample, 64))
    kept_batch = _kept_across_calls(buffer.sample, KEPT_BATCH, _batch_values)
    # rows drawn one by one, with replacement: small batches from few records
    small = _filled_one_step(NStepReplayBuffer, SMALL_STORED, SMALL_STORED, inputs["seed"])
    small_batches = [_ids_of(batch) for batch in _sampled_batches(small, SMALL_BATCH,
                                                                  SMALL_BATCHES)]
    errors = {"sample(0)": outcome_of(buffer.sample, 0), "sample(-2)": outcome_of(buffer.sample, -2)}
    empty = _new_nstep_buffer(NStepReplayBuffer, 4, 3, 0.9, inputs["seed"])
    errors["sample(1) on an empty buffer"] = outcome_of(empty.sample, 1)
    for k in range(2):  # two transitions waiting for a 3-step return: still no record
        call_student("add(observation, action, reward, next_observation, False, False)",
                     empty.add, _observation(k), 0, 1.0, _next_observation(k), False, False)
    errors["sample(1) while two transitions wait for their 3-step return"] = outcome_of(
        empty.sample, 1)
    for capacity, n, discount in BAD_CONSTRUCTIONS:
        errors[f"NStepReplayBuffer({capacity}, {n}, {discount})"] = outcome_of(
            NStepReplayBuffer, capacity, n, discount)
    return {"drawn": drawn, "same_seed": same, "after_changing_a_batch": sorted(set(after)),
            "kept_batch": kept_batch,
            "small_batches": small_batches, "errors": errors, "dtypes": dtypes, "valid": valid}


def _sample_verdict(inputs, data):
    cases = inputs["cases"]
    problem = wrong_amount("cases", data.get("drawn"), len(cases), rule=SAMPLE_UNIFORM)
    if problem:
        return problem
    for case, drawn in zip(cases, data["drawn"]):
        stored = min(case["additions"], case["capacity"])
        held = range(case["additions"] - stored, case["additions"])
        words = distribution_problem(drawn, {k: 1 / stored for k in held}, len(cases),
                                     describe=lambda k: f"transition {k}")
        if words:
            return failed(f"a buffer of capacity {case['capacity']} given {case['additions']} "
                          f"one-step transitions ({case['label']}), sampled with batches of "
                          f"{case['batch_size']}, {words}; it holds transitions "
                          f"{held.start}..{held.stop - 1}, each to be drawn with probability "
                          f"1/{stored}.", rule=SAMPLE_UNIFORM)
    problem = wrong_amount("small batches", data.get("small_batches"), SMALL_BATCHES,
                           rule=SAMPLE_UNIFORM)
    if problem:
        return problem
    words = row_order_problem(data["small_batches"], SMALL_STORED, 1)
    if words:
        return failed(f"a buffer holding {SMALL_STORED} one-step records, sampled {SMALL_BATCHES} "
                      f"times with batches of {SMALL_BATCH}, {words} (with replacement: a "
                      "record may come twice in a batch).", rule=SAMPLE_UNIFORM)
    first, again, other, zero, zero_again = data["same_seed"]
    if first != again or zero != zero_again:
        seed = inputs["seed"] if first != again else 0
        return failed(f"two buffers made with seed={seed} and filled alike sampled "
                      f"{first if first != again else zero} and "
                      f"{again if first != again else zero_again}: draw from the buffer's own "
                      "self.rng, made from its seed (0 is a seed like any other).",
                      rule=SAMPLE_UNIFORM)
    if first == other:
        return failed(f"buffers made with two different seeds sampled the same batch {first}: "
                      "draw from self.rng = np.random.default_rng(seed).", rule=SAMPLE_UNIFORM)
    if data["after_changing_a_batch"] != [0, 1, 2, 3]:
        return failed("after a batch was overwritten with zeros in place, the buffer holding "
                      f"transitions 0..3 sampled transitions {data['after_changing_a_batch']}: "
                      "sample returns new arrays, never views of what is stored.",
                      rule=SAMPLE_UNIFORM)
    problem = _kept_batch_problem(data["kept_batch"], SAMPLE_UNIFORM)
    if problem:
        return problem
    for call, outcome in data["valid"].items():
        if outcome.get("raised"):
            return failed(f"{call} raised {outcome['raised']}: {outcome.get('message', '')}; "
                          "it is a valid buffer (capacity and n from 1, any discount in "
                          "[0, 1], 0 and 1 included).", rule=BAD_ARGUMENTS)
    for kind, shape in KEPT_OBSERVATIONS.items():
        (observation, observed_shape), (action, _), _, _, (bootstrap, bootstrap_shape) = (
            data["dtypes"][kind] + [[None, None]] * 5)[:5]
        given = np.dtype(kind).str
        if observation != given or bootstrap != given or action is None or \
                np.dtype(action).kind not in "iu":
            return failed(f"a buffer given {kind} observations and int actions sampled "
                          f"observations of dtype {observation and np.dtype(observation)}, "
                          f"actions of {action and np.dtype(action)} and bootstrap observations "
                          f"of {bootstrap and np.dtype(bootstrap)}: keep each field's type "
                          "(allocate the record arrays with the dtype of the first record's "
                          "fields).", rule=RECORDS_KEEP_TYPES)
        batch_shape = [RECORDS_SAMPLED, *shape]
        if observed_shape != batch_shape or bootstrap_shape != batch_shape:
            return failed(f"a buffer given observations of shape {shape} sampled "
                          f"sample({RECORDS_SAMPLED}) observations of shape "
                          f"{tuple(observed_shape or ())} and bootstrap observations of shape "
                          f"{tuple(bootstrap_shape or ())}, not {tuple(batch_shape)}: keep each "
                          "observation's shape (allocate the record arrays shaped like the "
                          "first record's fields).", rule=RECORDS_KEEP_TYPES)
    for call, outcome in data["errors"].items():
        rule = BAD_ARGUMENTS if call.startswith("NStepReplayBuffer") else SAMPLE_ERRORS
        problem = value_error_problem(call, outcome, rule=rule)
        if problem:
            return problem
    return passed(f"sample is uniform with replacement in {len(cases)} cases (before and after "
                  "the ring wraps, batches below, equal to and above the records held), "
                  "follows the seed, returns new arrays, and bad arguments raise ValueError.")


# --- FrameStackReplay -------------------------------------------------------------------------

FRAME_DRAWS = 3000  # stacks of up to 4 int64 pairs: well inside the channel's 1 MiB
FRAME_SMALL_BATCH, FRAME_SMALL_BATCHES = 3, 300
LARGE_FRAME, LARGE_CAPACITY = (84, 84), 40  # Atari's frames: stored twice would show


def _frame(k):
    """Frame k: two numbers that name it (int64, so no frame wraps around as uint8 would)."""
    return np.array([k, -k], dtype=np.int64)


def _frames_inputs(rng):
    stack = int(rng.integers(2, 5))
    capacity = stack + int(rng.integers(5, 10))
    episodes, frames = [], 0
    while frames < 2 * capacity + 3:  # past the wrap, twice
        length = int(rng.integers(1, 6))
        episodes.append({"length": length, "terminated": bool(rng.random() < 0.7)})
        frames += length + 1
    # and one episode longer than the ring: its oldest transitions' stacks reach frames
    # already overwritten, which no stack may hold
    long_episode = {"length": capacity + int(rng.integers(2, 5)), "terminated": True}
    return {"capacity": capacity, "stack": stack, "episodes": episodes,
            "long_episode": long_episode, "checkpoint": int(rng.integers(1, len(episodes))),
            "seed": int(rng.integers(2**31)), "other_seed": int(rng.integers(2**31))}


def frame_fills(inputs):
    """{fill: episodes} of the check's three fills (the references fill theirs alike)."""
    return {"first": inputs["episodes"][:1],  # no wrap: its first stack clamped at frame 0
            "early": inputs["episodes"][:inputs["checkpoint"]], "full": inputs["episodes"],
            "long": [*inputs["episodes"], inputs["long_episode"]]}


def _transition_rows(batch):
    """Each row of a sample as [stack frame numbers, action, reward, next stack, terminated],
    or None when the batch is not five arrays of matching rows."""
    try:
        stacks, actions, rewards, next_stacks, terminated = batch
        return [[np.asarray(stacks[row])[:, 0].tolist(), int(actions[row]), float(rewards[row]),
                 np.asarray(next_stacks[row])[:, 0].tolist(), bool(terminated[row])]
                for row in range(len(actions))]
    except (TypeError, ValueError, IndexError):
        return None


def _filled_frames(FrameStackReplay, inputs, seed, episodes, empty=None):
    """A FrameStackReplay given ``episodes``; ``empty(buffer)`` is called before its first
    frame."""
    buffer = call_student(f"FrameStackReplay({inputs['capacity']}, {inputs['stack']}, "
                          f"seed={seed})", FrameStackReplay, inputs["capacity"],
                          inputs["stack"], seed=seed)
    if empty is not None:
        empty(buffer)
    frame = 0
    for episode in episodes:
        call_student(f"start_episode(frame {frame})", buffer.start_episode, _frame(frame))
        for step in range(episode["length"]):
            ends = episode["terminated"] and step == episode["length"] - 1
            call_student(f"add({frame % 4}, {frame / 2}, frame {frame + 1}, {ends})",
                         buffer.add, frame % 4, frame / 2, _frame(frame + 1), ends)
            frame += 1
        frame += 1
    return buffer


def _sampled(buffer, batch_size):
    got = attempted(call_student, f"sample({batch_size})", buffer.sample, batch_size)
    return {"raised": got["raised"]} if "raised" in got else _transition_rows(got["value"])


def _nbytes(buffer):
    got = attempted(call_student, "nbytes", getattr, buffer, "nbytes")
    if "raised" in got:  # a refusal is data: the verdict names the rule it breaks
        return {"python_int": False, "value": None, "type": f"refusal ({got['raised']})"}
    value = got["value"]
    number = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    return {"python_int": type(value) is int, "value": int(value) if number else None,
            "type": type(value).__name__, "held": held_arrays(buffer)}


def _frames_probe(inputs, FrameStackReplay):
    sampled = {name: _sampled(_filled_frames(FrameStackReplay, inputs, inputs["seed"],
                                             episodes), FRAME_DRAWS)
               for name, episodes in frame_fills(inputs).items()}
    # nbytes at any time: asked before the first frame, then again once the ring is full
    empty_nbytes = []
    full = _filled_frames(FrameStackReplay, inputs, inputs["seed"], inputs["episodes"],
                          empty=lambda buffer: empty_nbytes.append(_nbytes(buffer)))
    kept_batch = _kept_across_calls(full.sample, KEPT_BATCH, _batch_values)
    small = [rows and [row[0][-1] for row in rows] for rows in (
        _transition_rows(batch) for batch in _sampled_batches(full, FRAME_SMALL_BATCH,
                                                              FRAME_SMALL_BATCHES))]
    seeds = [_sampled(_filled_frames(FrameStackReplay, inputs, seed, inputs["episodes"]), 8)
             for seed in (inputs["seed"], inputs["seed"], inputs["other_seed"])]
    large = call_student(f"FrameStackReplay({LARGE_CAPACITY}, 4)", FrameStackReplay,
                         LARGE_CAPACITY, 4, seed=0)
    empty_nbytes.append(_nbytes(large))
    call_student("start_episode(an 84 x 84 frame)", large.start_episode,
                 np.zeros(LARGE_FRAME, dtype=np.uint8))
    for step in range(3):  # a few transitions: whatever the buffer keeps for them exists
        call_student("add(0, 1.0, an 84 x 84 frame, False)", large.add, 0, 1.0,
                     np.full(LARGE_FRAME, step + 1, dtype=np.uint8), False)
    # frames of another dtype: nbytes counts their bytes, not their elements
    wide = call_student(f"FrameStackReplay({LARGE_CAPACITY}, 4)", FrameStackReplay,
                        LARGE_CAPACITY, 4, seed=0)
    call_student("start_episode(an 84 x 84 float32 frame)", wide.start_episode,
                 np.zeros(LARGE_FRAME, dtype=np.float32))
    call_student("add(0, 1.0, an 84 x 84 float32 frame, False)", wide.add, 0, 1.0,
                 np.ones(LARGE_FRAME, dtype=np.float32), False)
    # the smallest rings the text allows, capacity = stack + 1: built, filled and sampled
    smallest = {}
    for stack in SMALLEST_RING_STACKS:
        smallest[f"FrameStackReplay({stack + 1}, {stack})"] = attempted(
            _smallest_ring_sample, FrameStackReplay, stack)
    # stacks of one frame still have their stack axis: (batch, 1, *frame shape)
    single = call_student("FrameStackReplay(6, 1)", FrameStackReplay, 6, 1, seed=0)
    call_student("start_episode(frame 0)", single.start_episode, _frame(0))
    for frame in range(1, 4):
        call_student(f"add(0, 1.0, frame {frame}, False)", single.add, 0, 1.0, _frame(frame),
                     False)
    single_batch = call_student("sample(5)", single.sample, 5)
    single_shapes = [list(np.shape(part)) for part in single_batch]
    errors = {}
    for capacity, stack in ((4, 4), (3, 5), (6, 0), (6.5, 2)):
        errors[f"FrameStackReplay({capacity}, {stack})"] = outcome_of(FrameStackReplay,
                                                                      capacity, stack)
    fresh = call_student("FrameStackReplay(8, 2)", FrameStackReplay, 8, 2, seed=0)
    errors["add(...) before any start_episode"] = outcome_of(fresh.add, 0, 1.0, _frame(1), False)
    return {"sampled": sampled, "small": small, "seeds": seeds, "nbytes": _nbytes(full),
            "large_nbytes": _nbytes(large), "empty_nbytes": empty_nbytes,
            "wide_nbytes": _nbytes(wide), "smallest": smallest,
            "single_shapes": single_shapes, "errors": errors, "kept_batch": kept_batch}


SMALLEST_RING_STACKS = (1, 2, 4)


def _uncounted_arrays_problem(said, which):
    """Failed when ``nbytes`` (``said``, from :func:`_nbytes`) is less than the bytes of the
    arrays the buffer holds (:func:`~checks.held_arrays.held_arrays`)."""
    held = said.get("held") or {}
    total = sum(held.values())
    if said["value"] is None or said["value"] >= total:
        return None
    arrays = ", ".join(f"{where} ({size:,} bytes)" for where, size in held.items())
    return failed(f"{which} says nbytes = {said['value']:,}, but the arrays it holds take "
                  f"{total:,} bytes: {arrays[:400]}. nbytes counts every array "
                  "the buffer holds.", rule=FRAMES_ONCE)


def _smallest_ring_sample(FrameStackReplay, stack):
    """A FrameStackReplay(stack + 1, stack) given one episode of stack + 3 steps (the ring
    wraps), sampled: the frame numbers ending the stacks drawn."""
    buffer = call_student(f"FrameStackReplay({stack + 1}, {stack})", FrameStackReplay,
                          stack + 1, stack, seed=0)
    call_student("start_episode(frame 0)", buffer.start_episode, _frame(0))
    for frame in range(1, stack + 4):
        call_student(f"add(0, 1.0, frame {frame}, False)", buffer.add, 0, 1.0, _frame(frame),
                     False)
    rows = _transition_rows(call_student("sample(8)", buffer.sample, 8))
    return None if rows is None else sorted({row[0][-1] for row in rows})


def _transition_words(transition):
    stack, action, reward, next_stack, terminated = transition
    return (f"stack {stack} -> next stack {next_stack} (action {action}, reward {reward}, "
            f"terminated={terminated})")


def _frames_sample_problem(got, wanted, situation):
    """The failed verdict of one fill's sample, or None. Each row is told by its reward
    (transition f has reward f / 2): first which transitions are drawn, how often; then
    whether each row's stacks are that transition's."""
    if isinstance(got, dict):
        return failed(f"{situation}, sample({FRAME_DRAWS}) raised: {got['raised']}; the "
                      f"transitions from frames {wanted['ends']} have whole stacks.",
                      rule=FRAME_SAMPLE_UNIFORM)
    if got is None or len(got) != FRAME_DRAWS:
        return failed(f"{situation}, sample({FRAME_DRAWS}) did not return (stacks, actions, "
                      "rewards, next_stacks, terminated) with one row per draw.",
                      rule=STACKS_REBUILT)
    ends = [round(2 * row[2]) for row in got]
    def describe(end):
        return f"the transition from frame {end}"

    if len(wanted["ends"]) == 1:  # one transition: every row is it (no test of fit needed)
        strays = sorted(set(ends) - set(wanted["ends"]))
        words = f"drew {describe(strays[0])}, which is not stored" if strays else None
    else:
        words = distribution_problem(ends, {end: 1 / len(wanted["ends"])
                                            for end in wanted["ends"]},
                                     len(FRAME_FILLS), describe=describe)
    if words:
        return failed(f"{situation}, sample({FRAME_DRAWS}) {words}: it draws, each with equal "
                      "probability, the transitions whose two stacks are whole in the ring "
                      f"(those from frames {wanted['ends']}).", rule=FRAME_SAMPLE_UNIFORM)
    right = {t[0][-1]: t for t in wanted["transitions"]}
    starts = dict(zip(wanted["ends"], wanted["starts"]))
    for row, end in zip(got, ends):
        if row == right[end]:
            continue
        crossed = any(f < starts[end] for f in row[0] + row[3])
        return failed(f"{situation}, sample returned {_transition_words(row)}; that transition "
                      f"is {_transition_words(right[end])}"
                      + (": a stack repeats its episode's first frame rather than reach into "
                         "the previous episode" if crossed else "") + ".",
                      rule=STACK_WITHIN_EPISODE if crossed else STACKS_REBUILT)
    return None


FRAME_FILLS = ("first", "early", "full", "long")


def _nbytes_problem(said, frames, frame_bytes, strict):
    if not said["python_int"]:
        return failed(f"nbytes is a {said['type']}, not a Python int.", rule=FRAMES_ONCE)
    problem = _uncounted_arrays_problem(said, f"A FrameStackReplay of capacity {frames}")
    if problem:
        return problem
    # the frames, and at least a byte a slot for each of the actions, rewards and flags
    value, least = said["value"], frames * frame_bytes + 3 * frames
    most = frames * frame_bytes * 1.5 + 64 * frames if strict else \
        2 * frames * frame_bytes + 64 * frames
    if not least <= value < most:
        return failed(f"a FrameStackReplay of capacity {frames} with frames of {frame_bytes:,} "
                      f"bytes says nbytes = {value:,}; its frames take "
                      f"{frames * frame_bytes:,} bytes stored once, and the arrays of actions, "
                      "rewards and flags beside them a few bytes a slot: store each frame once "
                      "and count every array.", rule=FRAMES_ONCE)
    return None


def _frames_verdict(inputs, data):
    wanted = reference(LESSON, "frame_transitions", inputs)
    counts = {"first": 1, "early": inputs["checkpoint"], "full": len(inputs["episodes"]),
              "long": len(inputs["episodes"]) + 1}
    for name in FRAME_FILLS:
        situation = (f"FrameStackReplay({inputs['capacity']}, {inputs['stack']}) given "
                     f"{counts[name]} episode(s) of frames numbered 0, 1, 2, ... in the order "
                     "stored" + (f", the last {inputs['long_episode']['length']} steps long"
                                 if name == "long" else ""))
        problem = _frames_sample_problem((data.get("sampled") or {}).get(name), wanted[name],
                                         situation)
        if problem:
            return problem
    small = data.get("small")
    if not isinstance(small, list) or any(not batch for batch in small):
        return failed(f"sample({FRAME_SMALL_BATCH}) did not return rows of transitions.",
                      rule=STACKS_REBUILT)
    words = row_order_problem(small, len(wanted["full"]["ends"]), 1)
    if words:
        return failed(f"sampled {FRAME_SMALL_BATCHES} times with batches of {FRAME_SMALL_BATCH} "
                      f"from {len(wanted['full']['ends'])} transitions, the buffer {words} (each "
                      "row its own draw, with replacement).", rule=FRAME_SAMPLE_UNIFORM)
    first, again, other = data["seeds"]
    if first != again or first == other:
        return failed("buffers filled alike sampled "
                      + ("different transitions with the same seed" if first != again
                         else "the same transitions with different seeds")
                      + ": draw from self.rng = np.random.default_rng(seed), and nothing else.",
                      rule=FRAME_SAMPLE_UNIFORM)
    for empty in data["empty_nbytes"]:
        if not empty["python_int"]:
            return failed(f"nbytes of a FrameStackReplay that holds no frame yet is a "
                          f"{empty['type']}, not a Python int: nbytes counts the arrays it "
                          "holds at any time (none of frames yet).", rule=FRAMES_ONCE)
        problem = _uncounted_arrays_problem(empty, "A FrameStackReplay that holds no frame "
                                                   "yet")
        if problem:
            return problem
    if data["single_shapes"][:1] + data["single_shapes"][3:4] != [[5, 1, 2], [5, 1, 2]]:
        return failed(f"FrameStackReplay(6, 1), sampled with sample(5) after frames of shape "
                      f"(2,), returned stacks and next stacks of shapes "
                      f"{data['single_shapes'][:1] + data['single_shapes'][3:4]}: a stack of "
                      "one frame keeps its stack axis, (batch, 1, 2).", rule=STACKS_REBUILT)
    problem = (_nbytes_problem(data["nbytes"], inputs["capacity"], 16, strict=False)
               or _nbytes_problem(data["large_nbytes"], LARGE_CAPACITY,
                                  int(np.prod(LARGE_FRAME)), strict=True)
               or _nbytes_problem(data["wide_nbytes"], LARGE_CAPACITY,
                                  4 * int(np.prod(LARGE_FRAME)), strict=True))
    if problem:
        return problem
    for call, got in data["smallest"].items():
        stack = int(call.split(", ")[1].rstrip(")"))
        # after stack + 3 adds the ring holds frames 3..stack+3: the one transition whose
        # two stacks are whole (the episode's start is gone) is from the newest but one
        if "raised" in got or got.get("value") != [stack + 2]:
            said = (f"failed: {got['raised']}" if "raised" in got else
                    f"drew the transitions from frames {got.get('value')}")
            return failed(f"{call} given one episode of {stack + 3} steps and sampled {said}; "
                          f"capacity = stack + 1 is a valid ring, and only the transition from "
                          f"frame {stack + 2} has both stacks whole in it.",
                          rule=FRAME_ARGUMENTS if "raised" in got else FRAME_SAMPLE_UNIFORM)
    problem = _kept_batch_problem(data["kept_batch"], FRAME_SAMPLE_UNIFORM)
    if problem:
        return problem
    for call, outcome in data["errors"].items():
        problem = value_error_problem(call, outcome, rule=FRAME_ARGUMENTS)
        if problem:
            return problem
    return passed(f"stacks of {inputs['stack']} are rebuilt right, within their episodes, and "
                  "sampled uniformly with replacement among the whole ones, before and after "
                  "the ring wraps; nbytes counts frames stored once.")


# --- gae ------------------------------------------------------------------------------------

def _rollout(rng, steps, columns=None):
    shape = (steps,) if columns is None else (steps, columns)
    terminated = rng.random(shape) < 0.15
    truncated = (rng.random(shape) < 0.1) & ~terminated
    return {"rewards": np.round(rng.uniform(-1.0, 2.0, shape), 3).tolist(),
            "values": np.round(rng.uniform(-2.0, 2.0, shape), 3).tolist(),
            "next_values": np.round(rng.uniform(-2.0, 2.0, shape), 3).tolist(),
            "terminated": terminated.tolist(), "truncated": truncated.tolist()}


def _gae_inputs(rng):
    discount, lam = round(float(rng.uniform(0.8, 0.99)), 3), round(float(rng.uniform(0.5, 0.97)), 3)
    one = _rollout(rng, int(rng.integers(8, 14)))
    one["terminated"][2], one["truncated"][2] = True, False
    one["terminated"][5], one["truncated"][5] = False, True
    return {"cases": {"one rollout": {**one, "discount": discount, "lam": lam},
                      "rollouts side by side": {**_rollout(rng, int(rng.integers(6, 10)),
                                                           int(rng.integers(2, 5))),
                                                "discount": discount, "lam": lam},
                      "discount 0": {**one, "discount": 0.0, "lam": lam},
                      "discount 1, lam 1": {**one, "discount": 1.0, "lam": 1.0},
                      "lam 0": {**one, "discount": discount, "lam": 0.0}}}


def _gae_arguments(case):
    return (np.array(case["rewards"]), np.array(case["values"]), np.array(case["next_values"]),
            np.array(case["terminated"], dtype=bool), np.array(case["truncated"], dtype=bool),
            case["discount"], case["lam"])


def _gae_probe(inputs, gae):
    returned = {}
    for name, case in inputs["cases"].items():
        arguments = _gae_arguments(case)
        got = attempted(call_student, f"gae(rewards, values, next_values, terminated, "
                        f"truncated, {case['discount']}, {case['lam']}) on a rollout of shape "
                        f"{arguments[0].shape} ({name})", gae, *arguments)
        if "raised" in got:  # a refusal is data: the verdict names the rule it breaks
            returned[name] = got
            continue
        advantages, returns = got["value"]
        returned[name] = {"advantages": np.asarray(advantages).tolist(),
                          "returns": np.asarray(returns).tolist(),
                          "shapes": [list(np.shape(advantages)), list(np.shape(returns))]}
    # CartPole's rewards and values as integers (+1 a step): still float advantages and
    # returns (the contract holds their types)
    case = inputs["cases"]["one rollout"]
    integers = (np.round(np.array(case["rewards"])).astype(np.int64),
                np.round(np.array(case["values"])).astype(np.int64),
                np.round(np.array(case["next_values"])).astype(np.int64))
    call_student(f"gae(rewards, values, next_values, terminated, truncated, "
                 f"{case['discount']}, {case['lam']}) with integer rewards and values", gae,
                 *integers, *_gae_arguments(case)[3:])
    return returned


def _gae_verdict(inputs, data):
    wanted = reference(LESSON, "gae_parts", inputs["cases"])
    for name, case in inputs["cases"].items():
        got, want = data.get(name) or {}, wanted[name]
        shape = list(np.shape(case["rewards"]))
        if got.get("raised"):
            return failed(f"{got['raised']}; gae works along the first axis of arrays of any "
                          "further shape (each column a rollout), as numpy's elementwise "
                          "operations do.", rule=GAE_ANY_SHAPE if len(shape) > 1
                          else GAE_RECURSION)
        if got.get("shapes") != [shape, shape]:
            return failed(f"gae on a rollout of shape {tuple(shape)} ({name}) returned "
                          f"advantages and returns of shapes {got.get('shapes')}; both have "
                          "the rewards' shape, the steps along the first axis.",
                          rule=GAE_ANY_SHAPE)
        advantages = np.asarray(got["advantages"], dtype=np.float64)
        expected = np.asarray(want["advantages"])
        if not _close(advantages, expected):
            wrong = np.argwhere(~np.isclose(advantages, expected, rtol=1e-9, atol=1e-9))
            at = tuple(int(i) for i in wrong[-1])
            step = at[0]
            flags = np.asarray(case["terminated"])[at], np.asarray(case["truncated"])[at]
            hint = ""
            if _close(advantages[at], want["no_restart"][at[0]] if len(at) == 1
                      else np.asarray(want["no_restart"])[at]):
                hint = (" It carried the next step's advantage across an end of episode: "
                        "A restarts where an episode ended.")
            elif flags[1] and _close(advantages[at], np.asarray(want["truncation_as_end"])[at]):
                hint = (f" Step {step} was truncated, not terminated: it still bootstraps "
                        "from V(s'), and only the advantage restarts.")
            return failed(f"gae ({name}, discount {case['discount']}, lam {case['lam']}): the "
                          f"advantage at step {step}{'' if len(at) == 1 else f', column {at[1]}'}"
                          f" is {advantages[at]:.6g}, expected {expected[at]:.6g} (step "
                          f"{step}: terminated={bool(flags[0])}, truncated={bool(flags[1])})."
                          + hint, rule=GAE_ANY_SHAPE if name == "rollouts side by side"
                          and _close(got["advantages"][0], want["advantages"][0])
                          else GAE_RECURSION)
        if not _close(got["returns"], want["returns"]):
            return failed(f"gae ({name}): the returns are not the advantages plus the values "
                          f"(first: {got['returns'][0]!r}, expected {want['returns'][0]!r}).",
                          rule=GAE_RECURSION)
    return passed("advantages and returns are right for one rollout and for rollouts side by "
                  "side, with discount 0 and 1 and lam 0 and 1.")


# --- RolloutBuffer -----------------------------------------------------------------------------

def _rollout_inputs(rng):
    size = int(rng.integers(5, 10))
    discount, lam = round(float(rng.uniform(0.8, 0.99)), 3), round(float(rng.uniform(0.5, 0.97)), 3)
    return {"size": size, "discount": discount, "lam": lam,
            "first": _rollout(rng, size), "second": _rollout(rng, size)}


def _add_steps(buffer, rollout, first_step=0):
    """Adds the rollout's steps; the caller's one observation array, placed with the
    student's code, is refilled in place for every step (as an environment loop does)."""
    observation = kept_with(np.array([float(first_step), 0.5]), near=buffer)
    for t in range(len(rollout["rewards"])):
        fill_in_place(observation, np.array([first_step + t, 0.5]))
        call_student("add(observation, action, reward, value, next_value, terminated, "
                     "truncated)", buffer.add, observation, (first_step + t) % 2,
                     rollout["rewards"][t], rollout["values"][t], rollout["next_values"][t],
                     rollout["terminated"][t], rollout["truncated"][t])


def _handed_out(got):
    observations, actions, advantages, returns = list(got)
    return {"observations": np.asarray(observations).tolist(),
            "actions": np.asarray(actions).tolist(),
            "advantages": np.asarray(advantages).tolist(), "returns": np.asarray(returns).tolist()}


def _rollout_probe(inputs, RolloutBuffer, gae):
    size = inputs["size"]
    buffer = call_student(f"RolloutBuffer({size}, {inputs['discount']}, {inputs['lam']})",
                          RolloutBuffer, size, inputs["discount"], inputs["lam"])
    early = outcome_of(buffer.get)
    partial, completed = _partial_get(RolloutBuffer, inputs)
    # discount and lam at their edges (0 and 1 are values like any other)
    edges = {}
    for discount, lam in _edge_settings(inputs):
        edge = call_student(f"RolloutBuffer({size}, {discount}, {lam})", RolloutBuffer, size,
                            discount, lam)
        edges[f"{discount},{lam}"] = _added_then_got(edge, inputs["first"])
    _add_steps(buffer, inputs["first"])
    full_len = call_student("len(buffer)", len, buffer)
    over = outcome_of(buffer.add, np.array([-1.0, 0.5]), 0, 0.0, 0.0, 0.0, False, False)
    kept = call_student("get()", result_by_reference, buffer.get)  # as a learner keeps it
    first = _handed_out(kept)
    emptied = call_student("len(buffer)", len, buffer)
    again = outcome_of(buffer.get)
    refilled = attempted(_add_steps, buffer, inputs["second"], 100)
    if "raised" in refilled:
        return {"early": early, "partial": partial, "full_len": full_len, "over": over,
                "first": first, "emptied": emptied, "again": again,
                "refill_refused": refilled["raised"], "completed": completed, "edges": edges}
    second = _handed_out(call_student("get()", buffer.get))
    return {"early": early, "partial": partial, "full_len": full_len, "over": over,
            "first": first, "emptied": emptied, "again": again, "second": second,
            "first_afterwards": _handed_out(kept), "completed": completed, "edges": edges}


def _edge_settings(inputs):
    return ((inputs["discount"], 0.0), (0.0, 1.0), (1.0, inputs["lam"]))


def _partial_get(RolloutBuffer, inputs):
    """(what get() does on a rollout one step short of full (a fresh buffer), what it hands
    out once the last step is added): a refused get() keeps the steps."""
    size = inputs["size"]
    buffer = call_student(f"RolloutBuffer({size}, {inputs['discount']}, {inputs['lam']})",
                          RolloutBuffer, size, inputs["discount"], inputs["lam"])
    short = {key: value[:-1] for key, value in inputs["first"].items()}
    last = {key: value[-1:] for key, value in inputs["first"].items()}
    _add_steps(buffer, short)
    refused = outcome_of(buffer.get)
    return refused, _added_then_got(buffer, last, size - 1)


def _added_then_got(buffer, rollout, first_step=0):
    """What get() hands out once ``rollout``'s steps are added, or ``{"raised": ...}``
    where adding or get() failed."""
    got = attempted(_add_steps, buffer, rollout, first_step)
    if "raised" not in got:
        got = attempted(lambda: _handed_out(call_student("get()", buffer.get)))
    return got.get("value") or {"raised": got["raised"]}


def _rollout_verdict(inputs, data):
    size = inputs["size"]
    for call, outcome in ((f"get() on a RolloutBuffer({size}) holding no step", data["early"]),
                          (f"get() on a RolloutBuffer({size}) holding {size - 1} steps",
                           data["partial"]),
                          (f"add(...) to a RolloutBuffer({size}) holding {size} steps",
                           data["over"])):
        problem = value_error_problem(call, outcome, rule=ROLLOUT_FULL)
        if problem:
            return problem
    if data["full_len"] != size:
        return failed(f"after {size} adds, len(buffer) is {data['full_len']!r}, not {size}.",
                      rule=USED_ONCE)
    if data.get("refill_refused"):
        return failed(f"after get() handed out the first rollout, adding the next one's steps "
                      f"raised: {data['refill_refused']}; get() empties the buffer, so the next "
                      "rollout fills it again.", rule=USED_ONCE)
    observations = data["first"]["observations"]
    if size > 1 and all(row == observations[-1] for row in observations):
        return failed(f"get() handed out {size} observations all equal to the last one added, "
                      f"{observations[-1]}: the caller refills one observation array for every "
                      "step, so add keeps a copy.", rule=ROLLOUT_COPIES)
    wanted = reference(LESSON, "rollouts", inputs)
    for name, first_step in (("first", 0), ("second", 100)):
        got, want = data[name], wanted[name]
        if got["observations"] != [[first_step + t, 0.5] for t in range(size)] or \
                got["actions"] != [t % 2 for t in range(size)]:
            return failed(f"get() on the {name} rollout returned observations "
                          f"{got['observations'][:3]}... and actions {got['actions'][:6]}...; "
                          f"expected the {size} steps of that rollout, in the order added"
                          + (", none of the first rollout's: get() empties the buffer"
                             if name == "second" else "") + ".", rule=USED_ONCE)
        for part in ("advantages", "returns"):
            if not _close(got[part], want[part]):
                return failed(f"get() on the {name} rollout returned {part} "
                              f"{_listed(got[part][:4])}..., expected "
                              f"{_listed(want[part][:4])}...: gae on the whole rollout, with "
                              f"discount {inputs['discount']} and lam {inputs['lam']}.",
                              rule=USED_ONCE)
    for discount, lam in _edge_settings(inputs):
        got = data["edges"][f"{discount},{lam}"]
        want = reference(LESSON, "rollouts", {**inputs, "discount": discount, "lam": lam})
        if "raised" in got:
            return failed(f"RolloutBuffer({size}, {discount}, {lam}) given a full rollout "
                          f"failed: {got['raised']}; discounts and lams of 0 and 1 are valid.",
                          rule=USED_ONCE)
        for part in ("advantages", "returns"):
            if not _close(got[part], want["first"][part]):
                return failed(f"RolloutBuffer({size}, {discount}, {lam}) handed out {part} "
                              f"{_listed(got[part][:4])}..., expected "
                              f"{_listed(want['first'][part][:4])}...: gae with discount "
                              f"{discount} and lam {lam}, as given (0 is a value, not a "
                              "missing one).", rule=USED_ONCE)
    completed = data["completed"]
    if completed != data["first"]:
        said = (f"failed: {completed['raised']}" if "raised" in completed else
                f"handed out observations {completed['observations'][:3]}... and advantages "
                f"{_listed(completed['advantages'][:4])}...")
        return failed(f"get() on a RolloutBuffer({size}) holding {size - 1} steps raised, as it "
                      f"should; then, the last step added, get() {said}; a refused get() keeps "
                      f"the steps, so the full rollout is handed out as a rollout added in one "
                      "go would be.", rule=ROLLOUT_FULL)
    if data["first_afterwards"] != data["first"]:
        return failed("the arrays get() handed out for the first rollout changed when the next "
                      "rollout was added and handed out: return new arrays, never the buffer's "
                      "own storage, which the next rollout refills.", rule=INPUTS_UNTOUCHED)
    if data["emptied"] != 0:
        return failed(f"after get(), len(buffer) is {data['emptied']!r}: get() empties the "
                      "buffer, so each step is used once.", rule=USED_ONCE)
    problem = value_error_problem("get() right after get() (an empty rollout)", data["again"],
                                  rule=ROLLOUT_FULL)
    if problem:
        return problem
    return passed(f"two rollouts of {size} steps are handed out once each with gae's "
                  "advantages and returns; a full rollout refuses adds and get() waits for it "
                  "to be full.")


N_STEP_RETURN = Callee("n_step_return", LESSON, ("test_n_step_return",))
GAE = Callee("gae", LESSON, ("test_gae",))

# What every call of this lesson's code promises (checks.contracts).
CONTRACTS = {
    "n_step_return": Contract(tuple_of(array("f", 1), array("f", 1), array("iu", 1)),
                              numpy_scalars=(3,), pure=True),
    "NStepReplayBuffer": constructor(0, 1, 2),
    "NStepReplayBuffer.add": Contract(numpy_scalars=(1, 2, 4, 5)),
    "NStepReplayBuffer.sample": Contract(tuple_of(array(), array(), array("f", 1),
                                                  array("f", 1), array()),
                                         numpy_scalars=(0,), rows=0),
    "FrameStackReplay": constructor(0, 1),
    "FrameStackReplay.add": Contract(numpy_scalars=(0, 1, 3)),
    "FrameStackReplay.sample": Contract(tuple_of(array(), array(), array(), array(), array()),
                                        numpy_scalars=(0,), rows=0),
    "gae": Contract(tuple_of(array("f"), array("f")), numpy_scalars=(5, 6), pure=True),
    "RolloutBuffer": constructor(0, 1, 2),
    "RolloutBuffer.add": Contract(numpy_scalars=(1, 2, 3, 4, 5, 6)),
    "RolloutBuffer.get": Contract(tuple_of(array(), array(), array("f", 1), array("f", 1))),
}

CHECKS = LessonChecks(LESSON, [
    Check("test_n_step_return", "n-step returns and their bootstrap discounts",
          ("n_step_return",), _n_step_inputs, _n_step_probe, _n_step_verdict,
          asks="n_step_return sums the discounted rewards of each row up to and including the "
               "first step that ends its episode, and gives the discount to bootstrap with (0 "
               "after a termination, discount**m otherwise) and m, for windows of any n, "
               "discount 0 and 1 included.",
          rules=(N_STEP_SUM, STOPS_AT_END, TERMINATED_ZERO, TRUNCATED_BOOTSTRAPS, ANY_DISCOUNT)),
    Check("test_nstep_records", "the n-step buffer's records",
          ("NStepReplayBuffer", "n_step_return"), _records_inputs, _records_probe,
          _records_verdict, calls=(N_STEP_RETURN,),
          asks="NStepReplayBuffer writes each transition's n-step record when it is known (n "
               "transitions in, or the episode over), the bootstrap observation of the last "
               "step its return used, keeps the newest capacity records and counts them with "
               "len.",
          rules=(RECORD_WHEN_KNOWN, RECORDS_ARE_N_STEP, ADD_COPIES, FIFO_RECORDS,
                 LEN_COUNTS_RECORDS)),
    Check("test_nstep_sample", "sampling n-step records", ("NStepReplayBuffer", "n_step_return"),
          _sample_inputs, _sample_probe, _sample_verdict, calls=(N_STEP_RETURN,),
          asks="sample draws records uniformly with replacement from self.rng, each row one "
               "record, as new arrays; bad arguments raise ValueError.",
          rules=(SAMPLE_UNIFORM, SAMPLE_ERRORS, BAD_ARGUMENTS, RECORDS_KEEP_TYPES),
          distribution="uniform over the records held, with replacement: every record held, "
                       "before and after the ring wraps, batches below, equal to and above "
                       "the number held"),
    Check("test_frame_stacks", "frame stacks stored once", ("FrameStackReplay",),
          _frames_inputs, _frames_probe, _frames_verdict,
          asks="FrameStackReplay rebuilds each sampled transition's stacks from frames stored "
               "once, oldest first, repeating an episode's first frame rather than reaching "
               "into the previous episode, and samples only transitions whose frames are all "
               "still in the ring.",
          rules=(FRAME_ARGUMENTS, FRAMES_ONCE, FRAME_SAMPLE_UNIFORM, STACKS_REBUILT,
                 STACK_WITHIN_EPISODE),
          distribution="uniform over the transitions whose two stacks are whole in the ring, "
                       "before and after it wraps"),
    Check("test_gae", "generalised advantage estimation", ("gae",), _gae_inputs, _gae_probe,
          _gae_verdict,
          asks="gae computes the advantages backwards from the rollout's end, restarting at "
               "every end of episode and bootstrapping with 0 after a termination, for "
               "rollouts side by side.",
          rules=(GAE_RECURSION, GAE_ANY_SHAPE)),
    Check("test_rollout_buffer", "the rollout buffer, used once", ("RolloutBuffer", "gae"),
          _rollout_inputs, _rollout_probe, _rollout_verdict, calls=(GAE,),
          asks="RolloutBuffer hands out a full rollout once, with gae's advantages and "
               "returns, and is empty afterwards; adding to a full one, or get() before it is "
               "full, raises ValueError.",
          rules=(ROLLOUT_FULL, USED_ONCE, ROLLOUT_COPIES)),
], contracts=CONTRACTS, lends=False)  # it lends no object: the checks pass plain data

