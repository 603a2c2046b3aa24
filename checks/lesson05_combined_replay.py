"""Checks for lesson 05: combined experience replay and the CartPole discretiser."""

import math

import numpy as np

from checks.contracts import (INT, NUMBER, NUMPY_SCALARS, RESULT_TYPES, Contract, array,
                              constructor, tuple_of)
from checks.expected import expected as reference
from checks.framework import (Callee, Check, LessonChecks, attempted, call_student, comparison,
                              failed, fill_in_place, kept_with, outcome_of, parts_of, passed,
                              result_by_reference, value_error_problem, wrong_amount)
from checks.lesson01_qlearning import AGENT
from checks.lesson02_replay_buffer import (
    AT_MOST_T_MAX, BATCH_SIZE_POSITIVE, BUFFER, DONE_IS_TERMINATED, EMPTY_SAMPLE_RAISES,
    ENDS_WITH_EPISODE, RETURNS_TOTAL, SAMPLE_NEW_ARRAYS, STORE_EVERY_STEP, STORE_THEN_SAMPLE,
    episode_end_rule)
from checks.numbered_transitions import (MARKER, batch_fields, draws_by_seed, generator_inputs,
                                         generator_problem, probability_of_a_repeat,
                                         sampled_id_batches, sampled_ids, transition,
                                         transition_ids, unseeded_numbered_problem,
                                         unseeded_numbered_runs)
from checks.replay_loops import (LOOP_REWARDS, RecordingBuffer, call_replay_loop, driven_by,
                                 replay_loop_inputs, sampled_before_storing,
                                 stored_transitions_problem)
from checks.requirements import Rule
from checks.sampler_fit import (batches_for, distribution_problem, fill_and_batch_cases,
                                row_order_problem)
from checks.statistics import FALSE_FAILURE_RATE
from checks.stub_envs import (corridor_play, counting_buffer, episode_cases, episode_ends,
                              episode_ends_problem, lent_corridor, plays_as_lesson_01,
                              retyped_problem, scripted_agent, t_max_zero_problem, timeline,
                              timelines_problem)

LESSON = "05_combined_replay"

# --- the rules: what the lesson tells the student, each tagged beside its sentence -------
# (the buffer's errors, the copies it hands out and the loop's steps are lesson 02's rules)

# test_cer_newest_exactly_once
NEWEST_ONCE = Rule("newest-exactly-once", "Every batch holds the newest transition exactly "
                   "once, also after the buffer is full and drops its oldest.")
BATCH_SIZE_ROWS = Rule("batch-size-rows", "A batch has batch_size rows: the newest and "
                       "batch_size - 1 others, in five arrays shaped as lesson 02's sample "
                       "shapes them (the batch first, then the shape of one stored item).")
ONLY_STORED = Rule("only-stored", "Every row of a batch is a transition the buffer holds now, "
                   "its fields together.")
SAMPLE_LEAVES_BUFFER = Rule("sample-leaves-buffer", "sample leaves the buffer as it was: the "
                            "newest, set aside, is put back in its place, so len(buffer) and "
                            "the next batch's newest are unchanged.")
REST_WITH_REPLACEMENT = Rule("rest-with-replacement", "The other rows are drawn with "
                             "replacement: they may repeat a transition, and a batch may be "
                             "larger than what is stored.")
# test_cer_rest_uniform
REST_UNIFORM = Rule("rest-uniform-over-older", "The other rows are drawn uniformly from the "
                    "transitions stored before the newest.")
OWN_GENERATOR = Rule("own-generator", "The other rows come from the buffer's own generator "
                     "self.rng, seeded by CombinedReplayBuffer(size, seed): the same seed gives "
                     "the same batches whatever numpy's global generator holds, another seed "
                     "others.")
# test_cer_single_transition
ONLY_NEWEST_STORED = Rule("only-newest-stored", "When the newest is the only transition "
                          "stored, the batch is that one transition, once, whatever "
                          "batch_size asks.")
BATCH_OF_ONE = Rule("batch-of-one-is-newest", "sample(1) is valid: the newest transition "
                    "alone.")
# test_replay_only_loop
ONE_BATCH_PER_STEP = Rule("one-batch-per-step", "Each step samples one batch of batch_size "
                          "transitions.")
LEARN_ONLY_FROM_BATCH = Rule("learn-only-from-batch", "The agent is updated on each row of "
                             "the sampled batch, in order, and on nothing else.")
# test_discretize_edges, test_discretize_clipping, test_discretize_bins
# a result type the lesson states: held on every call (checks.contracts)
RETURNS_ONE_INT = RESULT_TYPES
PLAYS_AS_LESSON_01 = plays_as_lesson_01("play_and_train_from_replay")
INNER_EDGE_BIN_ABOVE = Rule("inner-edge-bin-above", "A value on an inner bin edge belongs to "
                            "the bin above it, and the lower bound to the first bin, with the "
                            "formula computed itself, not through a rounded bin width (an edge "
                            "written as a decimal too).")
UPPER_BOUND_LAST_BIN = Rule("upper-bound-last-bin", "The upper bound belongs to the last bin.")
CLIP_INTO_RANGE = Rule("clip-into-range", "A value outside [low, high] is clipped into it "
                       "first, so it falls in the first or last bin.")
EQUAL_BINS = Rule("equal-bins", "Each dimension's [low, high] is cut into bins equal bins: "
                  "floor((x - low) / (high - low) * bins), in float64 even for a float32 "
                  "observation.")
ROW_MAJOR = Rule("row-major-cells", "Cells are numbered row-major, the last dimension fastest "
                 "(np.ravel_multi_index).")
# test_cer_learning
CER_BEATS_UNIFORM = Rule("cer-beats-uniform", "Driven by the course's loop with a "
                         "100,000-transition buffer, CER makes Taxi's reference agent solve at "
                         "least 20 points more start states than uniform replay after 100 "
                         "episodes.")


def _new_buffer(CombinedReplayBuffer, capacity, seed):
    return call_student(f"CombinedReplayBuffer({capacity})", CombinedReplayBuffer, capacity,
                        seed=seed)


def _add(buffer, k):
    call_student("add(obs_t, action, reward, obs_tp1, done)", buffer.add, *transition(k))


# --- the newest transition, exactly once ---------------------------------------------------

def _newest_inputs(rng):
    capacity = int(rng.integers(5, 30))
    return {"capacity": capacity, "additions": capacity + int(rng.integers(1, 2 * capacity)),
            "batch_size": int(rng.integers(2, 40)), "seed": int(rng.integers(2**31))}


def _len(buffer):
    return call_student("len(buffer)", len, buffer)


def sampled_or_refused(buffer, batch_size, count, stored):
    """:func:`sampled_id_batches` of ``count`` batches; when the batch is larger than the
    ``stored`` transitions (which drawing with replacement allows), a refusal is data,
    ``{"raised": what}``, for the verdict to name its rule."""
    if batch_size <= stored:
        return sampled_id_batches(buffer, batch_size, count)
    outcome = attempted(sampled_id_batches, buffer, batch_size, count)
    return outcome["value"] if "value" in outcome else outcome


def _newest_probe(inputs, CombinedReplayBuffer):
    buffer = _new_buffer(CombinedReplayBuffer, inputs["capacity"], inputs["seed"])
    batches, lengths = [], []
    for k in range(inputs["additions"]):
        _add(buffer, k)
        if k >= 1:  # from two stored transitions on: two batches, one after the other
            stored = min(k + 1, inputs["capacity"])
            batches.append(sampled_or_refused(buffer, inputs["batch_size"], 2, stored))
            if isinstance(batches[-1], dict):
                break
            lengths.append(_len(buffer))
    return {"batches": batches, "lengths": lengths}


def _batch_problem(ids, newest, capacity, batch):
    """What is wrong with one batch sampled after adding 0..newest, as (feedback, rule);
    None if nothing."""
    stored = min(newest + 1, capacity)
    if len(ids) != batch:
        return (f"with {stored} transitions stored, sample({batch}) returned {len(ids)} rows; "
                "a batch has batch_size rows.", BATCH_SIZE_ROWS)
    count = ids.count(newest)
    if count != 1:
        situation = (f"after adding transitions 0..{newest} to CombinedReplayBuffer("
                     f"{capacity}), sample({batch}) held the newest, {newest}, ")
        return (situation + ("not at all: put the newest transition in every batch."
                             if count == 0 else
                             f"{count} times: exactly once, and draw the other "
                             f"{batch - 1} from the transitions stored before it."), NEWEST_ONCE)
    kept = range(max(0, newest + 1 - capacity), newest + 1)
    strays = [i for i in ids if i not in kept]
    if strays:
        held = "a mixed-up row" if strays[0] == -1 else f"transition {strays[0]}"
        return (f"after adding 0..{newest} to CombinedReplayBuffer({capacity}), a batch held "
                f"{held}, which is not stored.", ONLY_STORED)
    return None


def _newest_verdict(inputs, data):
    capacity, batch = inputs["capacity"], inputs["batch_size"]
    batches = data["batches"]
    if batches and isinstance(batches[-1], dict):  # refused a batch larger than the buffer
        newest = len(batches)
        return failed(f"after adding transitions 0..{newest} to CombinedReplayBuffer("
                      f"{capacity}), {batches[-1].get('raised')}. The other rows are drawn "
                      "with replacement, so a batch may be larger than what is stored.",
                      rule=REST_WITH_REPLACEMENT)
    problem = (wrong_amount("pairs of batches", batches, inputs["additions"] - 1,
                            rule=BATCH_SIZE_ROWS)
               or wrong_amount("lengths", data["lengths"], inputs["additions"] - 1,
                               rule=SAMPLE_LEAVES_BUFFER))
    for pair in batches if not problem else []:
        problem = problem or wrong_amount("batches", pair, 2, rule=BATCH_SIZE_ROWS)
    if problem:
        return problem
    for newest, ((first, second), length) in enumerate(zip(batches, data["lengths"]), start=1):
        problem = _batch_problem(first, newest, capacity, batch)
        if problem:
            return failed(problem[0], rule=problem[1])
        stored = min(newest + 1, capacity)
        if length != stored:
            return failed(f"after adding 0..{newest} to CombinedReplayBuffer({capacity}) and "
                          f"sampling, len(buffer) is {length}, not {stored}: sample must "
                          "leave the buffer as it was (put the newest back).",
                          rule=SAMPLE_LEAVES_BUFFER)
        problem = _batch_problem(second, newest, capacity, batch)
        if problem and problem[1] is ONLY_STORED:  # a stray is a stray, first batch or not
            return failed(problem[0], rule=ONLY_STORED)
        if problem:
            return failed(f"a second sample({batch}) right after the first went wrong: "
                          f"{problem[0]} The first was right, so sample changed the buffer: "
                          "put the newest back in its place (append, not appendleft), "
                          "whatever happens.", rule=SAMPLE_LEAVES_BUFFER)
    return passed("every batch holds the newest transition exactly once, also after the "
                  "buffer is full, and sampling leaves the buffer as it was.")


# --- the rest of the batch, uniform ------------------------------------------------------------

def _rest_inputs(rng):
    # partly filled and wrapped around, batches smaller than, equal to and larger than
    # what is stored (from 2 rows on: a batch of one is the newest alone)
    return {"cases": fill_and_batch_cases(rng, fewest_stored=4, smallest_batch=2),
            "seed": int(rng.integers(2**31)), **generator_inputs(rng)}


def _rest_probe(inputs, CombinedReplayBuffer):
    runs = []
    for case in inputs["cases"]:
        buffer = _new_buffer(CombinedReplayBuffer, case["capacity"], inputs["seed"])
        for k in range(case["additions"]):
            _add(buffer, k)
        stored = min(case["additions"], case["capacity"])
        newest = case["additions"] - 1
        # about DRAWS_PER_SLOT rows of each older transition in the rest of the batches
        count = batches_for(stored - 1, case["batch_size"] - 1)
        batches = sampled_or_refused(buffer, case["batch_size"], count, stored)
        if isinstance(batches, dict):
            return {"refused": batches.get("raised"), "case": case}
        rests = []
        for ids in batches:
            if newest in ids:
                ids.remove(newest)  # the one that must be there; the test above checks it
            rests.append(ids)
        runs.append(rests)
    seeded = draws_by_seed(lambda seed: _new_buffer(CombinedReplayBuffer, GENERATOR_CAPACITY,
                                                    seed),
                           _add, CombinedReplayBuffer, inputs)
    # one transition added three times in a row (Taxi repeats an illegal move): each add
    # stores it, so the older copies count in the rest of the batch as every transition does
    repeated = _new_buffer(CombinedReplayBuffer, GENERATOR_CAPACITY, inputs["seed"])
    for k in REPEATED_ADDS:
        _add(repeated, k)
    rests = sampled_or_refused(repeated, REPEATED_BATCH, REPEATED_BATCHES, len(REPEATED_ADDS))
    return {"runs": runs, **seeded,
            "repeated": {"len": call_student("len(buffer)", len, repeated),
                         "rests": rests if isinstance(rests, list) else []},
            "unseeded_globals": _unseeded_draws(CombinedReplayBuffer, inputs)}


def _unseeded_draws(CombinedReplayBuffer, inputs):
    """Unseeded buffers' draws. Besides the newest, every row is drawn among 19 older
    transitions: two independent generators agree on all of them by chance with
    probability 19^-45."""
    return unseeded_numbered_runs(UNSEEDED_OPENING, CombinedReplayBuffer, GENERATOR_CAPACITY,
                                  _add, inputs)


REPEATED_ADDS = (0, 1, 1, 1)  # the newest is 1; before it 0 and 1 twice: 1 is 2/3 of the rest
REPEATED_BATCH, REPEATED_BATCHES = 4, 20  # 60 rows of the rest: all 0 with chance 3**-60


GENERATOR_CAPACITY = 100  # holds every transition draws_by_seed adds
UNSEEDED_OPENING = f"CombinedReplayBuffer({GENERATOR_CAPACITY}"  # how unseeded ones are made


def _rest_verdict(inputs, data):
    from scipy import stats  # here: scipy takes a second to import

    cases = inputs["cases"]
    if "refused" in data:
        case = data.get("case") or cases[0]
        return failed(f"with {min(case['additions'], case['capacity'])} transitions stored, "
                      f"{data['refused']}. The other rows are drawn with replacement, so a "
                      "batch may be larger than what is stored.", rule=REST_WITH_REPLACEMENT)
    problem = wrong_amount("sampling runs", data.get("runs"), len(cases), rule=BATCH_SIZE_ROWS)
    if problem:
        return problem
    for case, rests in zip(cases, data["runs"]):
        batch, newest = case["batch_size"], case["additions"] - 1
        others = list(range(max(0, case["additions"] - case["capacity"]), newest))
        where = (f"after adding transitions 0..{newest} to CombinedReplayBuffer("
                 f"{case['capacity']}) ({case['label']}), sample({batch})")
        count = batches_for(len(others), batch - 1)
        if len(rests) != count or any(len(ids) != batch - 1 for ids in rests):
            return failed(f"{where} should return {batch - 1} rows besides the newest in each "
                          f"of {count} batches; got {sorted({len(ids) for ids in rests})} "
                          f"in {len(rests)}.", rule=BATCH_SIZE_ROWS)
        rest = [i for ids in rests for i in ids]
        strays = [i for i in rest if i not in others]
        if strays:
            again = strays[0] == newest
            held = "the newest again" if again else f"transition {strays[0]}"
            return failed(f"{where} held {held} in the rest of a batch: draw the other rows "
                          f"from the {len(others)} transitions stored before the newest.",
                          rule=NEWEST_ONCE if again else ONLY_STORED)
        problem = distribution_problem(rest, {i: 1 / len(others) for i in others}, len(cases),
                                       lambda i: f"transition {i}")
        if problem:
            return failed(f"{where} should draw the rest of each batch uniformly from the "
                          f"{len(others)} older transitions, but over {len(rest)} rows it "
                          f"{problem}.", rule=REST_UNIFORM)
        problem = row_order_problem(rests, len(others), len(cases))
        if problem:  # each row uniform in its own place: not sorted
            return failed(f"{where}, besides the newest, {problem}.", rule=REST_UNIFORM)
        # drawn with replacement, batch - 1 rows from the older ones repeat one of them this
        # often; too few batches with a repeat means drawing without replacement
        p_repeat = probability_of_a_repeat(len(others), batch - 1)
        with_repeats = sum(len(set(ids)) < len(ids) for ids in rests)
        if p_repeat > 0 and stats.binom.cdf(with_repeats, len(rests), p_repeat) \
                < FALSE_FAILURE_RATE / len(cases):
            return failed(f"{where}: drawing the other {batch - 1} rows with replacement "
                          f"from {len(others)} older transitions repeats one in about "
                          f"{p_repeat:.0%} of batches, but only {with_repeats} of your "
                          f"{len(rests)} did: draw each with replacement.",
                          rule=REST_WITH_REPLACEMENT)
    problem = generator_problem(inputs, data, "CombinedReplayBuffer", OWN_GENERATOR)
    if problem:
        return problem
    problem = unseeded_numbered_problem(data.get("unseeded_globals"), UNSEEDED_OPENING,
                                        inputs, OWN_GENERATOR)
    if problem:
        return problem
    repeated = data.get("repeated") or {}
    rest = []  # each batch without the newest (1), wherever it stands
    for ids in repeated.get("rests") or []:
        ids = list(ids)
        if 1 in ids:
            ids.remove(1)
        rest += ids
    if repeated.get("len") != len(REPEATED_ADDS) or 1 not in rest:
        return failed(f"after adding transitions {list(REPEATED_ADDS)} (the same transition "
                      f"three times in a row, as Taxi repeats a move into a wall), len(buffer) "
                      f"is {repeated.get('len')} and the rest of sample({REPEATED_BATCH}) held "
                      f"transition 1 {rest.count(1)} times in {len(rest)} rows: every add "
                      "stores its transition, a repeat too, and the older copies are drawn "
                      "like any other stored transition (here 1 is two thirds of the rest).",
                      rule=REST_UNIFORM)
    return passed(f"besides the newest, batches are uniform over the older transitions in "
                  f"{len(cases)} cases (partly filled and wrapped around, batches smaller "
                  f"than, equal to and larger than what is stored; chi-square, rejection rate "
                  f"{FALSE_FAILURE_RATE:g} in all), drawn with replacement from the buffer's "
                  "own seeded generator; unseeded buffers draw apart and leave np.random and "
                  "random as they were.")


# --- one transition stored; errors ------------------------------------------------------------

def _single_inputs(rng):
    return {"batch_size": int(rng.integers(2, 20)), "bad_size": -int(rng.integers(0, 5)),
            "seed": int(rng.integers(2**31))}


def _single_probe(inputs, CombinedReplayBuffer):
    empty = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    one = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    _add(one, 7)
    tiny = _new_buffer(CombinedReplayBuffer, 1, inputs["seed"])
    for k in range(3):
        _add(tiny, k)
    several = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    for k in range(5):
        _add(several, k)
    batch_of_one = attempted(call_student, "sample(1)", result_by_reference, several.sample, 1)
    after_changing_it = None
    if "value" in batch_of_one:
        batch = batch_of_one["value"]
        batch_of_one = attempted(batch_fields, batch, 1)  # five fields, or what is wrong
    if "value" in batch_of_one:
        batch_of_one = {"value": transition_ids(list(batch)),
                        "shapes": [list(np.shape(field)) for field in list(batch)]}
        for field in parts_of(batch):  # a learner may change its batch in place
            try:
                fill_in_place(field, MARKER)
            except Exception:  # read-only batches cannot leak: nothing to try
                pass
        after_changing_it = sampled_ids(several, 1)
    # a batch the learner keeps, read before and after the buffer samples again
    kept_batch = call_student("sample(8)", result_by_reference, several.sample, 8)
    kept_before = transition_ids(batch_fields(kept_batch, 8))
    sampled_ids(several, 8)
    kept_after = transition_ids(batch_fields(kept_batch, 8))
    errors = [["sample(1) on an empty buffer", outcome_of(empty.sample, 1)],
              [f"sample({inputs['bad_size']})", outcome_of(one.sample, inputs["bad_size"])]]
    # a refused call leaves the buffer as it was: the newest still there, nothing lost
    kept = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    for k in range(5):
        _add(kept, k)
    for _ in range(2):
        outcome_of(kept.sample, inputs["bad_size"])
    # equal transitions: the newest is set aside once, not every stored copy equal to it,
    # and the buffer's order (which one is oldest) is what it was
    twins = _new_buffer(CombinedReplayBuffer, 3, inputs["seed"])
    for k in TWINS:
        _add(twins, k)
    rests = []
    for ids in sampled_id_batches(twins, 4, TWIN_BATCHES):
        if TWINS[-1] in ids:
            ids.remove(TWINS[-1])  # the newest, once
        rests.extend(ids)
    _add(twins, TWIN_EVICTS)
    after = sorted({i for ids in sampled_id_batches(twins, 4, TWIN_BATCHES) for i in ids})
    # the caller reuses its observation arrays after add: the newest row is what was stored
    held = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    observation = kept_with(np.full(3, 1.0), near=held)
    following = kept_with(np.full(3, 2.0), near=held)
    call_student("add(obs_t, action, reward, obs_tp1, done)", held.add, observation, 0, 0.0,
                 following, False)
    fill_in_place(observation, MARKER)
    fill_in_place(following, MARKER)
    # one transition stored: any batch is that one alone
    newest_row = np.asarray(batch_fields(call_student("sample(2)", held.sample, 2), 2)[0])[0]
    # observations that are 2-d float32 arrays: a batch stacks them, it does not flatten
    shaped = _new_buffer(CombinedReplayBuffer, 10, inputs["seed"])
    for k in range(3):
        call_student("add(obs_t, action, reward, obs_tp1, done)", shaped.add,
                     np.full(SHAPED, k, dtype=np.float32), k, SHAPED_REWARDS[k],
                     np.full(SHAPED, k + 1, dtype=np.float32), False)
    shaped_batch = attempted(call_student, f"sample({inputs['batch_size']})", shaped.sample,
                             inputs["batch_size"])
    shapes = (shaped_batch if "raised" in shaped_batch else
              [[list(np.shape(field)), str(np.asarray(field).dtype)]
               for field in list(shaped_batch["value"])[:5]])
    data = {"shapes": shapes, "one": attempted(sampled_ids, one, inputs["batch_size"]),
            "batch_of_one": batch_of_one, "after_changing_it": after_changing_it,
            "kept_batch": [kept_before, kept_after],
            "capacity_one": sampled_ids(tiny, inputs["batch_size"]), "errors": errors,
            "after_refusals": {"len": _len(kept), "ids": sampled_ids(kept, 2)},
            "twins": {"rests": rests, "after": after},
            "newest_after_caller_reuse": newest_row.reshape(-1).tolist(),
            "shaped_rows": _numbers_and_rewards(shaped_batch)}
    # last, so that every call above is made as before: the calls whose answer is fixed
    # again, with the batch size as np.int64 (a size read from an array is one): the batch
    # of one, one stored, capacity 1, and the refusals (random batches get numpy sizes on
    # every other call, as the contract has it)
    batch = inputs["batch_size"]
    data["numpy_sizes"] = {
        "batch_of_one": _numpy_batch(several, 1), "one": _numpy_batch(one, batch),
        "capacity_one": _numpy_batch(tiny, batch),
        "errors": [["sample(np.int64(1)) on an empty buffer",
                    outcome_of(empty.sample, np.int64(1))],
                   [f"sample(np.int64({inputs['bad_size']}))",
                    outcome_of(one.sample, np.int64(inputs["bad_size"]))]]}
    return data


def _numpy_batch(buffer, size):
    """What sample(np.int64(size)) returned, as data: ``{"ids", "shapes"}`` of its batch
    (``ids`` None when its fields are not rows of one batch), or ``{"raised": what}``.
    Called as sample(1) is above (its result as it is), so that the verdict, not the
    contract, names what is wrong with it."""
    called = f"np.int64({size})"
    outcome = attempted(call_student, f"sample({called})", result_by_reference,
                        buffer.sample, np.int64(size))
    if "value" in outcome:
        outcome = attempted(batch_fields, outcome["value"], called)
    if "value" not in outcome:
        return outcome
    fields = outcome["value"]
    shapes = [list(np.shape(field)) for field in fields]
    try:
        ids = transition_ids(fields)
    except (TypeError, ValueError, IndexError):
        ids = None  # fields of different lengths: the shapes say what is wrong
    return {"ids": ids, "shapes": shapes}


def _numpy_sizes_problem(inputs, data):
    """A failed verdict (numpy-scalars) when a batch size given as np.int64 is not treated
    as the same Python int is (each such call with a Python int has passed by then);
    None if every one is."""
    batch = inputs["batch_size"]
    sizes = data.get("numpy_sizes") or {}
    treat = (" A batch size may arrive as a numpy integer (np.int64, as a size read from an "
             "array is): treat it exactly as the same Python int, compare it with == and <, "
             "never with `is` (np.int64(1) is not 1), and refuse nothing for its type.")
    cases = (("batch_of_one", 1, "a buffer holding transitions 0 to 4", [4],
              "the newest transition, 4, alone, in fields of shape (1,)"),
             ("one", batch, "a buffer holding only transition 7", [7],
              "that one transition, once"),
             ("capacity_one", batch, "a CombinedReplayBuffer(1) holding only transition 2", [2],
              "that one transition, once"))
    for key, size, holding, wanted, asked in cases:
        got = sizes.get(key) or {"raised": "returned nothing"}
        called = f"on {holding}, sample(np.int64({size}))"
        if "raised" in got:
            raised = str(got["raised"]).rstrip()
            raised += "" if raised.endswith(".") else "."
            return failed(f"on {holding}, {raised} The same call with the Python "
                          f"int {size} returns {asked}, and so must this one." + treat,
                          rule=NUMPY_SCALARS)
        ids, shapes = got.get("ids"), got.get("shapes") or []
        batched = all(shape[:1] == [len(wanted)] for shape in shapes)
        if ids != wanted or not batched:
            what = (f"transitions {ids[:8]}" if ids is not None and batched
                    else f"fields of shapes {[tuple(shape) for shape in shapes]}")
            return failed(f"{called} returned {what}; the same call with the Python int "
                          f"{size} returns {asked}, and so must this one." + treat,
                          rule=NUMPY_SCALARS)
    for call, outcome in sizes.get("errors") or []:
        raised = outcome.get("raised") if isinstance(outcome, dict) else None
        if raised != "ValueError" or not str(outcome.get("message", "")).strip():
            what = ("returned normally" if raised is None else
                    "raised ValueError without a message" if raised == "ValueError" else
                    f"raised {raised}")
            return failed(f"{call} {what}; with a Python int it raises ValueError with a "
                          "message, as lesson 02's buffer does, and so must it with a numpy "
                          "integer." + treat, rule=NUMPY_SCALARS)
    return None


def _numbers_and_rewards(attempt):
    """[observation number, reward] of each row of a sampled batch of the shaped buffer
    (whose observation k is full of k), or [] when its shapes do not allow (those are
    judged first)."""
    if "raised" in attempt:
        return []
    fields = list(attempt["value"])
    try:
        observations = np.asarray(fields[0], dtype=np.float64)
        rewards = np.asarray(fields[2], dtype=np.float64).reshape(-1)
    except (TypeError, ValueError, IndexError):
        return []  # not numbers in rows: the batch's shapes and dtypes are judged first
    if rewards.size == 0 or observations.size % rewards.size:
        return []
    numbers = observations.reshape(rewards.size, -1)[:, 0]
    return np.column_stack([numbers, rewards]).tolist()


# a CombinedReplayBuffer(3) given transition 3, 5 and 3 again (equal to the first), then 7;
# in 50 batches of 4 the older 3 is missed with probability 2^-150
TWINS, TWIN_EVICTS, TWIN_BATCHES = (3, 5, 3), 7, 50


SHAPED = (2, 3)  # the shape of the observations of the shaped buffer
# its rewards: floats with fractions, then the newest an int (a batch holds them together
# as floats, as np.stack and np.concatenate promote them; none is cut to an int)
SHAPED_REWARDS = (0.5, 1.5, 2)


def _single_verdict(inputs, data):
    judged = _single_verdict_before_shapes(inputs, data)
    if not judged.passed:
        return judged
    batch, shapes = inputs["batch_size"], data.get("shapes") or []
    made = (f"after adding three transitions whose observations are float32 arrays of shape "
            f"{SHAPED}, sample({batch})")
    if isinstance(shapes, dict):
        return failed(f"{made}: {shapes.get('raised')}. A batch stacks array observations "
                      "as it stacks numbers.", rule=BATCH_SIZE_ROWS)
    for index, name in ((0, "obs_t"), (3, "obs_tp1")):
        if index < len(shapes) and shapes[index] != [[batch, *SHAPED], "float32"]:
            return failed(f"{made} returned {name} of shape {tuple(shapes[index][0])} and "
                          f"dtype {shapes[index][1]}; expected ({batch}, {SHAPED[0]}, "
                          f"{SHAPED[1]}), float32: stack the rows, batch first (np.append "
                          "without an axis flattens them).", rule=BATCH_SIZE_ROWS)
    # the other fields were stored as Python ints, floats and bools: their dtypes follow
    stored = {1: ("action", np.array([0]).dtype), 2: ("reward", np.array([0.0]).dtype),
              4: ("done", np.array([False]).dtype)}
    for index, (name, dtype) in stored.items():
        if index < len(shapes) and shapes[index] != [[batch], str(dtype)]:
            return failed(f"{made} returned {name} of shape {tuple(shapes[index][0])} and "
                          f"dtype {shapes[index][1]}; expected ({batch},), {dtype}, as lesson "
                          f"02's sample returns it: each field keeps the type it was stored "
                          "with (Python ints, floats and bools here), nothing is cast.",
                          rule=BATCH_SIZE_ROWS)
    rows = data.get("shaped_rows") or []
    if len(rows) != batch:
        return failed(f"{made} returned {len(rows)} rows; expected {batch}.",
                      rule=BATCH_SIZE_ROWS)
    for number, reward in rows:
        if number not in (0.0, 1.0, 2.0) or reward != SHAPED_REWARDS[int(number)]:
            return failed(f"{made} (rewards {list(SHAPED_REWARDS)}: the newest an int) "
                          f"returned a row whose observation is {number:g} and whose reward "
                          f"is {reward!r}; transition {number:g} holds reward "
                          f"{SHAPED_REWARDS[int(number)] if number in (0.0, 1.0, 2.0) else '?'}"
                          ". Every row is a stored transition: build the batch so that numpy "
                          "promotes the types (np.concatenate), not in the newest row's dtype.",
                          rule=BATCH_SIZE_ROWS)
    return _numpy_sizes_problem(inputs, data) or judged


def _single_verdict_before_shapes(inputs, data):
    batch = inputs["batch_size"]
    one = data["one"]
    if "raised" in one:
        return failed(f"with one transition stored, {one['raised']}: the batch is the newest "
                      "transition, once (there is nothing older to draw).",
                      rule=ONLY_NEWEST_STORED)
    if one["value"] != [7]:
        return failed(f"with one transition stored, sample({batch}) returned transitions "
                      f"{one['value'][:6]}: the batch is the newest transition, once, and "
                      "nothing else (there is nothing older to draw).", rule=ONLY_NEWEST_STORED)
    if data["capacity_one"] != [2]:
        return failed(f"a CombinedReplayBuffer(1) holding only transition 2 returned "
                      f"{data['capacity_one'][:6]} for sample({batch}): with capacity 1, CER "
                      "is online learning, one update on the newest transition.",
                      rule=ONLY_NEWEST_STORED)
    batch_of_one = data["batch_of_one"]
    if "raised" in batch_of_one:
        return failed(f"on a buffer holding transitions 0 to 4, {batch_of_one['raised']}. "
                      "batch_size=1 is valid: the newest transition alone.", rule=BATCH_OF_ONE)
    if batch_of_one["value"] != [4]:
        return failed(f"sample(1) on a buffer holding transitions 0 to 4 returned "
                      f"{batch_of_one['value'][:6]}; a batch of one is the newest transition, "
                      "4, alone (batch_size=1 is valid).", rule=BATCH_OF_ONE)
    shapes = batch_of_one.get("shapes") or []
    if any(shape != [1] for shape in shapes):
        return failed(f"on a buffer holding transitions 0 to 4 (each field one number), "
                      f"sample(1) returned fields of shapes {[tuple(s) for s in shapes]}; a "
                      "batch of one has one row, as any batch: shape (1,) for a field of "
                      "numbers.", rule=BATCH_OF_ONE)
    if data["after_changing_it"] != [4]:
        return failed("overwriting the arrays sample(1) returned changed what the buffer "
                      f"stores: the next sample(1) returned {data['after_changing_it']} (-1: "
                      "a row no longer intact). Return new arrays, not views of the stored "
                      "transition.", rule=SAMPLE_NEW_ARRAYS)
    kept_before, kept_after = data["kept_batch"]
    if kept_before != kept_after:
        return failed(f"a batch that sample(8) returned (transitions {kept_before}) changed "
                      f"when sample was called again (to {kept_after}): each call hands out "
                      "arrays of its own, never refills the ones it returned before (a "
                      "learner keeps batches).", rule=SAMPLE_NEW_ARRAYS)
    problem = wrong_amount("outcomes", data["errors"], 2, rule=EMPTY_SAMPLE_RAISES)
    if problem:
        return problem
    for (call, outcome), rule in zip(data["errors"], (EMPTY_SAMPLE_RAISES, BATCH_SIZE_POSITIVE)):
        problem = value_error_problem(call, outcome, ", as lesson 02's buffer does", rule=rule)
        if problem:
            return problem
    if data.get("newest_after_caller_reuse") != [1.0, 1.0, 1.0]:
        return failed("after add(obs, ...), the caller wrote over its obs array, and sample(1) "
                      f"returned the newest row as {data.get('newest_after_caller_reuse')}, not "
                      "the [1.0, 1.0, 1.0] stored: the batch's newest row is the transition the "
                      "buffer holds (a copy), not the caller's arrays.", rule=ONLY_STORED)
    twins = data.get("twins") or {}
    rests = twins.get("rests") or []
    if TWINS[0] not in rests or len(rests) != 3 * TWIN_BATCHES:
        return failed(f"a CombinedReplayBuffer(3) holding transitions {list(TWINS)} (the first "
                      f"and the newest equal) returned, besides the newest once, {len(rests)} "
                      f"rows in {TWIN_BATCHES} batches of 4 and drew the older {TWINS[0]} "
                      f"{rests.count(TWINS[0])} times: set the newest aside itself, once (not "
                      "every transition equal to it), and draw the rest from all the older "
                      "ones.", rule=REST_UNIFORM)
    if twins.get("after") != sorted({*TWINS[1:], TWIN_EVICTS}):
        return failed(f"after sampling, a CombinedReplayBuffer(3) holding transitions "
                      f"{list(TWINS)} was given transition {TWIN_EVICTS}, which replaces the "
                      f"oldest ({TWINS[0]}, the first one); it then drew {twins.get('after')}, "
                      f"not {sorted({*TWINS[1:], TWIN_EVICTS})}: sample must leave the buffer "
                      "as it was, its order included.", rule=SAMPLE_LEAVES_BUFFER)
    after = data.get("after_refusals") or {}
    if after.get("len") != 5 or 4 not in (after.get("ids") or []):
        return failed(f"a buffer holding transitions 0 to 4 refused sample({inputs['bad_size']}) "
                      f"twice; afterwards it should still hold all five, the newest (4) "
                      f"included, but len was {after.get('len')} and sample(2) returned "
                      f"{after.get('ids')}. Refuse a bad call before setting anything aside (or "
                      "put it back whatever happens: try/finally).", rule=SAMPLE_LEAVES_BUFFER)
    return passed("one stored transition gives a batch of one, sample(1) hands out new "
                  "arrays, bad calls raise ValueError and leave the buffer as it was.")


# --- the loop that learns only from replay -------------------------------------------------------

DEFAULT_T_MAX = 10_000  # the default the signature gives


def _loop_probe(inputs, play_and_train_from_replay):
    outcome = {}
    limit = inputs["time_limit"]
    # and the goal reached on the step the time limit ends: terminated and truncated at
    # once, and the step is terminal all the same
    cases = {**episode_cases(limit, DEFAULT_T_MAX),
             "goal_at_the_limit": (1, inputs["length"], None)}
    for case, (action, time_limit, t_max) in cases.items():
        long_run = case == "default_t_max"
        events = None if long_run else timeline()  # 10,000 steps: not noted
        env = lent_corridor(inputs["length"], time_limit, events, **LOOP_REWARDS)
        agent = scripted_agent(action, events)
        # where t_max stops the episode, a buffer that is full after two transitions (its
        # len stops growing): the loop counts its steps itself
        buffer = counting_buffer() if long_run else RecordingBuffer(
            newest_alone_first=True, size=2 if case == "stopped_by_t_max" else None)
        batch_size = 1 if long_run else inputs["batch_size"]
        extra = {} if t_max is None else {"t_max": t_max}
        total = call_replay_loop(
            f"play_and_train_from_replay(env, agent, replay, {batch_size}"
            + ("" if t_max is None else f", t_max={t_max}") + ")",
            play_and_train_from_replay, env, agent, buffer, batch_size, **extra)
        if case == "default_t_max":  # 10,000 steps: only how many
            outcome[case] = {**corridor_play(env)}
            continue
        outcome[case] = {**corridor_play(env), "updates": agent.updates,
                         "retyped": agent.retyped, "order": list(events),
                         "flags_not_bool": buffer.flags_not_bool, "added": buffer.added, "returned": buffer.returned,
                         "held_when_sampled": buffer.held_when_sampled,
                         "total": (total if isinstance(total, dict) else float(total)
                                   if isinstance(total, (int, float)) else None)}
    # t_max=0: no step at all (the count is checked before each step)
    env = lent_corridor(inputs["length"], limit, **LOOP_REWARDS)
    agent, buffer = scripted_agent(1), RecordingBuffer(newest_alone_first=True)
    call_replay_loop(f"play_and_train_from_replay(env, agent, replay, {inputs['batch_size']}, "
                     "t_max=0)", play_and_train_from_replay, env, agent, buffer,
                     inputs["batch_size"], t_max=0)
    outcome["no_steps"] = {**corridor_play(env), "add_count": len(buffer.added),
                           "update_count": len(agent.updates)}
    # terminated as Python's bool, as Taxi gives it: the episode ends at the goal all the same
    env = lent_corridor(inputs["length"], limit, python_flags=True, **LOOP_REWARDS)
    call_replay_loop(f"play_and_train_from_replay(env, agent, replay, {inputs['batch_size']}) "
                     "on a corridor whose flags are Python bools", play_and_train_from_replay,
                     env, scripted_agent(1), RecordingBuffer(newest_alone_first=True),
                     inputs["batch_size"])
    outcome["python_flags"] = corridor_play(env)
    # one agent for two episodes, each given a buffer of its own: each call stores into
    # the buffer it is given (nothing kept from the call before)
    env, agent = lent_corridor(inputs["length"], limit, **LOOP_REWARDS), scripted_agent(1)
    buffers = [RecordingBuffer(newest_alone_first=True) for _ in range(2)]
    for buffer in buffers:
        call_replay_loop(f"play_and_train_from_replay(env, agent, replay, "
                         f"{inputs['batch_size']}) with the same agent, another buffer",
                         play_and_train_from_replay, env, agent, buffer, inputs["batch_size"])
    outcome["two_buffers"] = {"added": [len(buffer.added) for buffer in buffers]}
    return outcome


def _loop_verdict(inputs, data):
    batch, length, limit = inputs["batch_size"], inputs["length"], inputs["time_limit"]
    replayed = ("reaches_goal", "runs_out_of_time", "stopped_by_t_max")
    for case in replayed:  # a loop stopped at its first step by sampling an empty buffer
        problem = sampled_before_storing(data[case], 0, "total")
        if problem:
            return failed(problem, rule=STORE_THEN_SAMPLE)
    problem = timelines_problem(data, only_played=True)
    if problem:
        return failed(problem, rule=PLAYS_AS_LESSON_01)
    ends = episode_ends(length, limit, DEFAULT_T_MAX)
    problem = episode_ends_problem(length, data, ends, **LOOP_REWARDS)
    if problem:
        return failed(problem, rule=episode_end_rule(data, ends))
    problem = t_max_zero_problem(
        data["no_steps"], f"play_and_train_from_replay(env, agent, replay, {batch}, t_max=0)")
    if problem:
        return failed(problem, rule=AT_MOST_T_MAX)
    steps = data["python_flags"]["steps"]
    if steps != inputs["length"]:
        return failed(f"on a corridor of {inputs['length']} steps whose terminated flag is "
                      f"Python's bool (as Taxi's is), walking to the goal took {steps} steps: "
                      "end the episode when terminated or truncated is true, tested as a "
                      "truth value (`if terminated or truncated:`), never with numpy's ~ "
                      "(~True is -2, which is true too).", rule=ENDS_WITH_EPISODE)
    stored = data["two_buffers"]["added"]
    if stored != [length, length]:
        return failed(f"one agent played two {length}-step episodes, each call given a buffer "
                      f"of its own; the buffers got {stored} transitions, not {[length] * 2}: "
                      "each call stores into the buffer it is given (nothing kept from an "
                      "earlier call, such as an agent wrapped once).", rule=STORE_EVERY_STEP)
    for case in replayed:
        run = data[case]
        steps = run["steps"]
        if len(run["added"]) != steps:
            return failed(f"the episode took {steps} steps but replay.add was called "
                          f"{len(run['added'])} times: store every transition once.",
                          rule=STORE_EVERY_STEP)
        problem = stored_transitions_problem(run["added"], length,
                                             LOOP_REWARDS["goal_reward"],
                                             LOOP_REWARDS["step_reward"])
        if problem:
            return failed(problem, rule=STORE_EVERY_STEP)
        problem = sampled_before_storing(run, steps, "total")
        if problem:
            return failed(problem, rule=STORE_THEN_SAMPLE)
        # a combined buffer's first batch holds the one transition stored, alone
        if [len(rows) for rows in run["returned"]] != [1] + [batch] * (steps - 1):
            return failed(f"expected one replay.sample({batch}) per step, after storing the "
                          f"step's transition, {steps} in this {steps}-step episode; got "
                          f"{len(run['returned'])} batch(es) of sizes "
                          f"{[len(rows) for rows in run['returned']]}.",
                          rule=ONE_BATCH_PER_STEP)
        expected = [row for rows in run["returned"] for row in rows]
        if run["updates"] != expected:
            extra = len(run["updates"]) - len(expected)
            return failed("the agent should learn only from the sampled batches, one update "
                          "per row, in order" + (f"; it made {extra} update(s) more, as if "
                                                 "it also learned online from each step: "
                                                 "with CER the newest transition is already "
                                                 "in the batch." if extra > 0 else "."),
                          rule=LEARN_ONLY_FROM_BATCH)
    problem = retyped_problem(data)
    if problem:
        return failed(problem, rule=LEARN_ONLY_FROM_BATCH)
    if not data["reaches_goal"]["added"][-1][4]:
        return failed("the last transition reached the goal but was stored with done=False.",
                      rule=DONE_IS_TERMINATED)
    if any(row[4] for row in data["runs_out_of_time"]["added"]):
        return failed("an episode cut by the time limit was stored with done=True: store "
                      "`terminated`.", rule=DONE_IS_TERMINATED)
    if any(row[4] for row in data["stopped_by_t_max"]["added"]):
        return failed("an episode that t_max stopped (the environment neither terminated nor "
                      "truncated it) was stored with done=True on its last step: store "
                      "`terminated`, whatever stops the loop.", rule=DONE_IS_TERMINATED)
    at_limit = data["goal_at_the_limit"]["added"]
    if at_limit and not at_limit[-1][4]:
        return failed(f"with a time limit of {length} steps the goal is reached on the last "
                      "one (terminated=True and truncated=True at once), but that transition "
                      "was stored with done=False: store `terminated` as it is, whatever the "
                      "time limit says.", rule=DONE_IS_TERMINATED)
    for run in data.values():
        shown = run.get("flags_not_bool") or []
        if shown:
            return failed(f"the loop stored done={shown[0]}: store `terminated` itself, the "
                          "flag the environment returned, not a number made of it.",
                          rule=DONE_IS_TERMINATED)
    problem = timelines_problem(data)
    if problem:
        return failed(problem, rule=PLAYS_AS_LESSON_01)
    return passed("each step stores the transition and learns only from one sampled batch.")


# --- the discretiser ---------------------------------------------------------------------------

def _discretiser_inputs(rng):
    # dyadic bounds and bin widths: every edge is exact in binary floating point
    bins = [int(b) for b in rng.choice([1, 2, 4, 8], size=3)]
    lows = [float(-2 ** int(e)) for e in rng.integers(0, 3, size=3)]
    highs = [float(2 ** int(e)) for e in rng.integers(0, 3, size=3)]
    return {"bins": bins, "lows": lows, "highs": highs,
            "points": rng.uniform(-6, 6, size=(60, 3)).round(3).tolist(),
            "decimal": _decimal_edges(rng), "single": _single_precision_edges(rng)}


def _single_precision_edges(rng):
    """Float32 observations (as CartPole's are) just below inner edges, where the formula
    computed in float32 rounds onto the edge and gives the bin above; in float64 (the
    value exact) they are in the bin below. ``{"lows", "highs", "bins", "points"}``, the
    points' values exact float32 numbers."""
    for _ in range(200):
        bins = int(rng.integers(3, 13))
        high = float(rng.choice([0.5, 1.0, 2.4, 3.0, math.radians(12), 4.8]))
        low = -high  # CartPole's bounds are symmetric
        below = []
        for k in range(1, bins):
            edge = low + k * (high - low) / bins
            x = np.float32(edge)
            if float(x) >= edge:
                x = np.nextafter(x, np.float32(-np.inf))
            exact = math.floor((float(x) - low) / (high - low) * bins)
            single = math.floor(float((x - np.float32(low)) / np.float32(high - low)
                                      * np.float32(bins)))
            if exact == k - 1 and single == k:
                below.append(float(x))
        if below:
            middle = 0.0
            return {"lows": [low, low], "highs": [high, high], "bins": [bins, 2],
                    "points": [[x, middle] for x in below[:3]]}
    return {"lows": [-1.0, -1.0], "highs": [1.0, 1.0], "bins": [6, 2],
            "points": [[float(np.float32(0.66666663)), 0.0]]}  # bin 4 exactly, 5 in float32


def _formula_bins(x, low, high, bins):
    """The bin of ``x`` by the lesson's formula in its two orders, then the bins that
    rounding otherwise gives: divided by a rounded bin width (with / and with //), and the
    formula's product floor-divided (//) by the range."""
    width = (high - low) / bins
    return (math.floor((x - low) / (high - low) * bins),
            math.floor((x - low) * bins / (high - low)),
            [math.floor((x - low) / width), math.floor((x - low) // width),
             math.floor((x - low) * bins // (high - low))])


def _decimal_edges(rng):
    """Bounds with one decimal (not exact in binary) and values written as decimals on
    their inner edges, where the lesson's formula floor((x - low) / (high - low) * bins),
    in either order of its last two operations, gives another bin than each way of
    rounding otherwise (:func:`_formula_bins`) does, at least one edge for each way that
    any edge tells apart: ``{"lows", "highs", "bins", "points"}``."""
    best = None
    for _ in range(200):
        bins = int(rng.integers(3, 13))
        low = round(float(rng.uniform(-2, 1)), 1)
        high = round(low + float(rng.uniform(0.5, 3)), 1)
        edges = [round(low + k * (high - low) / bins, 6) for k in range(1, bins)]
        telling = [[], [], []]  # per way of rounding: the edges where it gives another bin
        for x in edges:
            formula, other_order, rounded = _formula_bins(x, low, high, bins)
            for way, bin_ in enumerate(rounded):
                if formula == other_order != bin_:
                    telling[way].append(x)
        chosen = sorted({x for xs in telling for x in xs[:2]})
        told = sum(bool(xs) for xs in telling)
        if chosen and (best is None or told > best[0]):
            middle = round((low + high) / 2, 1)
            best = (told, {"lows": [low, low], "highs": [high, high], "bins": [bins, 2],
                           "points": [[x, middle] for x in chosen]})
        if told == len(telling):
            break
    if best is not None:
        return best[1]
    return {"lows": [0.0, 0.0], "highs": [1.0, 1.0], "bins": [10, 2],  # 0.3: 3, and 2
            "points": [[0.3, 0.5]]}


def _edge_points(inputs):
    """Observations exactly on every bin edge of each dimension (others at the middle)."""
    lows, highs, bins = (np.array(inputs[key], dtype=float) for key in ("lows", "highs", "bins"))
    middle = (lows + highs) / 2
    points = []
    for dim in range(len(bins)):
        for k in range(int(bins[dim]) + 1):
            point = middle.copy()
            point[dim] = lows[dim] + k * (highs[dim] - lows[dim]) / bins[dim]
            points.append(point.tolist())
    return points


# far outside too: a bin number computed before clipping overflows an integer there
OUTSIDE = [[-100.0, 0.0, 100.0], [100.0, -100.0, 0.0], [1e20, -1e20, 0.0], [0.0, 1e300, -1e300]]


def _points(case, inputs):
    return {"edges": _edge_points(inputs), "scaled": _edge_points(SCALED),
            "random": inputs["points"],
            "outside": OUTSIDE, "top": [[float(np.nextafter(high, -np.inf))
                                         for high in TOP["highs"]]],
            "decimal": inputs["decimal"]["points"], "single": inputs["single"]["points"],
            "huge": HUGE["points"]}[case]


# bounds as CartPole's are (low = -high): the largest value below each upper bound has a
# fraction of its range that rounds up to 1 (x - low rounds to high - low), and it is still
# in the last bin, not one past it
TOP = {"lows": [-4.0, -1.0, -math.radians(12)], "highs": [4.0, 1.0, math.radians(12)],
       "bins": [3, 5, 6]}
TOP_TEXT = ("A value just below the upper bound is in the last bin, even where the formula's "
            "fraction rounds up to 1: keep every bin number below bins.")


def _bounds(case, inputs):
    """(lows, highs, bins) of the points of ``case``."""
    held = {"decimal": inputs["decimal"], "scaled": SCALED, "top": TOP, "huge": HUGE,
            "single": inputs["single"]}.get(case, inputs)
    return held["lows"], held["highs"], held["bins"]


# bounds of very different scales (dyadic, so every edge is exact): a range 2**-30 wide, one
# 2**31 wide, and [-1, 1]; an answer that clips a fixed distance below high (high - 1e-9)
# fails the first and does nothing in the second
SCALED = {"lows": [0.0, -2.0 ** 30, -1.0], "highs": [2.0 ** -30, 2.0 ** 30, 1.0],
          "bins": [4, 8, 2]}
SCALED_EDGES = ("The bins split [low, high] whatever its width: the upper bound is in the "
                "last bin, each inner edge in the bin above, with no fixed margin (a "
                "distance such as 1e-9 is most of a tiny range and nothing in a wide one).")


def _discretiser_probe_for(*cases):
    """A probe that discretises only the points of ``cases``, so a crash on one kind of
    point costs only its own check."""
    def probe(inputs, discretize):
        data = {}
        for case in cases:
            lows, highs, bins = (np.array(bound) for bound in _bounds(case, inputs))
            if case == "random":  # as the lesson's DiscretizedObservation passes them
                bins = tuple(int(count) for count in bins)
            values = []
            for point in _points(case, inputs):
                # a point it refuses, or anything but one integer, is data for the verdict
                # to name the rule of (an upper bound refused breaks another rule than a
                # tuple)
                observation = np.array(point, dtype=np.float32 if case == "single" else None)
                outcome = attempted(call_student, f"discretize({point}, lows, highs, bins)"
                                    + (" of a float32 observation" if case == "single" else ""),
                                    discretize, observation, lows, highs, bins)
                value = outcome.get("value")
                values.append(outcome if "raised" in outcome else int(value)
                              if isinstance(value, (int, np.integer))
                              else {"type": type(value).__name__})
            data[case] = values
        return data
    return probe


def _edge_rules(inputs):
    """The rule each of :func:`_edge_points` tests: the upper bound's, or an inner edge's
    (the lower bound among them)."""
    return [UPPER_BOUND_LAST_BIN if k == bins else INNER_EDGE_BIN_ABOVE
            for bins in inputs["bins"] for k in range(int(bins) + 1)]


def _point_rule(case, inputs, index, point, got, want):
    """The rule broken when ``discretize(point)`` returned ``got`` instead of ``want``."""
    lows, highs, bins = inputs["lows"], inputs["highs"], inputs["bins"]
    if case == "decimal":  # inner edges written as decimals
        return INNER_EDGE_BIN_ABOVE
    if case == "single":  # float32 values just below inner edges
        return EQUAL_BINS
    if case == "huge":  # cell numbers past 2**53
        return ROW_MAJOR
    if case in ("edges", "scaled"):
        return _edge_rules(inputs if case == "edges" else SCALED)[index]
    if case == "top":  # just below the upper bound: still the last bin
        return UPPER_BOUND_LAST_BIN
    if case == "outside" or any(not low <= x <= high for x, low, high in zip(point, lows,
                                                                            highs)):
        return CLIP_INTO_RANGE
    cells = np.unravel_index(want, bins)
    column_major = int(np.ravel_multi_index(cells, bins, order="F"))
    return ROW_MAJOR if got == column_major and got != want else EQUAL_BINS


# a grid of 2**54 cells: its cell numbers are exact as ints, not as floats (past 2**53 a
# float64 holds only even integers)
HUGE = {"lows": [0.0, 0.0], "highs": [1.0, 1.0], "bins": [2 ** 27, 2 ** 27],
        "points": [[0.5, 0.0 + 3 / 2 ** 27], [1.0, 1.0], [0.25, 1 - 2 ** -26]]}
HUGE_TEXT = ("The cell number is an exact int however many cells the grid has: a number "
             "computed in floating point is rounded past 2**53 (np.ravel_multi_index, or "
             "integer arithmetic, keeps it exact).")
SINGLE_PRECISION = ("This observation is float32, as CartPole's are, and its value lies just "
                    "below an inner edge: computed in float32, the formula rounds it onto the "
                    "edge; compute in float64 (np.asarray(observation, dtype=np.float64)).")
DECIMAL_EDGES = ("On an inner edge written as a decimal (not exact in binary), compute the "
                 "lesson's formula, floor((x - low) / (high - low) * bins) (the division "
                 "and the multiplication in either order): dividing by a bin width "
                 "(high - low) / bins rounded first can put the value in the bin below.")


def _discretiser_verdict_for(case, explanation, success, then=()):
    """The verdict on the points of ``case``, then on those of each (case, explanation)
    of ``then`` in turn."""
    def verdict(inputs, data):
        for judged_case, words in ((case, explanation), *then):
            judged = _one_verdict(judged_case, words, success, inputs, data)
            if not judged.passed:
                return judged
        return judged
    return verdict


def _one_verdict(case, explanation, success, inputs, data):
    lows, highs, bins = _bounds(case, inputs)
    points = _points(case, inputs)
    problem = wrong_amount("indices", data.get(case, []), len(points),
                           rule=RETURNS_ONE_INT)
    if problem:
        return problem
    not_int = next((got for got in data[case]
                    if not isinstance(got, int) and "raised" not in got), None)
    if not_int is not None:
        return failed(f"discretize returned a {not_int.get('type', 'value')}; return one "
                      "int, the number of the observation's cell.", rule=RETURNS_ONE_INT)
    wanted = reference(LESSON, "bins_of", points, lows, highs, bins)
    # a point within the bounds first: its failure says more than a clipped one's
    order = sorted(range(len(points)), key=lambda i: not all(
        low <= x <= high for x, low, high in zip(points[i], lows, highs)))
    for index in order:
        point, got, want = points[index], data[case][index], wanted[index]
        if isinstance(got, dict):  # refused: "discretize(...) raised ..."
            return failed(f"with lows {lows}, highs {highs} and bins {bins}, "
                          f"{got.get('raised')}; expected {want}. " + explanation,
                          rule=_point_rule(case, inputs, index, point, got, want))
        if got != want:
            return failed(f"with lows {lows}, highs {highs} and bins {bins}, "
                          f"discretize({point}) returned {got}; expected {want}. "
                          + explanation,
                          rule=_point_rule(case, inputs, index, point, got, want))
    return passed(success)


# --- learning: CER does not collapse with a large buffer ----------------------------------------

LEARNING = dict(capacity=100_000, batch_size=8, episodes=100, alpha=0.5, epsilon=0.25,
                discount=0.99, epsilon_decay=0.99)
MIN_GAIN = 0.2  # reference CER ~0.82 vs uniform ~0.35 after 100 episodes


def _learning_inputs(rng):
    return {"seeds": rng.integers(2**31, size=2).tolist(), **LEARNING}


def train_taxi_from_replay(new_buffer, loop, seed, episodes, batch_size, alpha, epsilon,
                           discount, epsilon_decay,
                           called="the course's loop that learns from replay", near=None):
    """The reference agent's Q-table after ``episodes`` of Taxi, trained by ``loop(env,
    agent, buffer, batch_size)``, which learns only from the batches of the buffer
    ``new_buffer()`` (made in the student's process of ``near``, if any)."""
    from checks.taxi_training import train_buffer_on_taxi

    return train_buffer_on_taxi(new_buffer, loop, seed, [episodes], batch_size, 0, alpha,
                                epsilon, discount, epsilon_decay, called=called, near=near)[0]


def _learning_probe(inputs, CombinedReplayBuffer, play_and_train_from_replay=None):
    """The student's buffer, driven by the course's loop that learns only from replay,
    trains the grader's reference agent on the grader's Taxi (the student's loop is
    judged by test_replay_only_loop; only a notebook of the student edition, which lacks
    the course's loop, runs its own here)."""
    from checks.taxi_training import course_loop

    loop, whose = course_loop(LESSON, play_and_train_from_replay, "play_and_train_from_replay")
    settings = {k: inputs[k] for k in LEARNING if k != "capacity"}
    called = ("the course's loop that learns from replay" if whose == "course" else
              f"play_and_train_from_replay(env, agent, replay, {inputs['batch_size']})")
    return {"qtables": [train_taxi_from_replay(
        lambda: _new_buffer(CombinedReplayBuffer, inputs["capacity"], seed), loop, seed,
        **settings, called=called, near=CombinedReplayBuffer).tolist()
        for seed in inputs["seeds"]], "loop": whose}


def _learning_baseline(inputs):
    return reference(LESSON, "uniform_success", inputs["seeds"],
                     {k: inputs[k] for k in LEARNING})


def _learning_verdict(inputs, data):
    from course.taxi import evaluate_qtable

    problem = wrong_amount("Q-tables", data["qtables"], len(inputs["seeds"]),
                           rule=CER_BEATS_UNIFORM)
    if problem or {np.shape(q) for q in data["qtables"]} != {(500, 6)}:
        return problem or failed("expected one (500, 6) Q-table per seed.",
                                 rule=CER_BEATS_UNIFORM)
    yours = float(np.mean([evaluate_qtable(np.asarray(q, dtype=np.float64)).success_rate
                           for q in data["qtables"]]))
    uniform = _learning_baseline(inputs)
    summary = (f"after {inputs['episodes']} Taxi episodes with a buffer of "
               f"{inputs['capacity']:,} transitions, learning only from replay, the greedy "
               f"policy solves {yours:.0%} of the start states with {driven_by(data)} against "
               f"{uniform:.0%} with uniform replay (mean of {len(inputs['seeds'])} seeds)")
    figure = comparison(f"Taxi start states solved greedily after {inputs['episodes']} "
                        f"episodes, replay only, buffer {inputs['capacity']:,}", "share solved",
                        [f"mean of {len(inputs['seeds'])} seeds"],
                        {driven_by(data).replace("your buffer", "your CER"): [yours],
                         "uniform replay": [uniform]})
    if yours < uniform + MIN_GAIN:
        return failed(summary + f". CER should be at least {MIN_GAIN:.0%} ahead: every new "
                      "transition is learned from at once, however large the buffer.",
                      figure=figure, rule=CER_BEATS_UNIFORM)
    return passed(summary + ".", figure=figure)


# What every call of this lesson's code promises (checks.contracts): exact result types,
# numpy scalars accepted where the text allows them; inputs untouched holds for all.
CONTRACTS = {
    "CombinedReplayBuffer": constructor(0),
    "CombinedReplayBuffer.add": Contract(numpy_scalars=(0, 1, 2, 3, 4)),
    "CombinedReplayBuffer.sample": Contract(tuple_of(*[array()] * 5), numpy_scalars=(0,),
                                             batch_axis=True),
    "play_and_train_from_replay": Contract(NUMBER, numpy_scalars=(3, 4),
                                           numpy_keywords=("batch_size", "t_max")),
    "discretize": Contract(INT, pure=True),
}

DISTRIBUTIONS = {
    "test_cer_rest_uniform": "the rows besides the newest: uniform over the older "
                             "transitions, partly filled and wrapped around, batches smaller "
                             "than, equal to and larger than what is stored (chi-square per "
                             "case), and repeats as often as drawing with replacement gives "
                             "(binomial); rejection rate 1e-6 in all",
}

CHECKS = LessonChecks(LESSON, [
    Check("test_cer_newest_exactly_once", "the newest transition in every batch",
          ("CombinedReplayBuffer",), _newest_inputs, _newest_probe, _newest_verdict,
          calls=(BUFFER,),
          rules=(NEWEST_ONCE, BATCH_SIZE_ROWS, ONLY_STORED, SAMPLE_LEAVES_BUFFER,
                 REST_WITH_REPLACEMENT),
          asks="Every batch of batch_size rows holds the newest transition exactly once, from "
               "two stored transitions to past the capacity, and sampling leaves the buffer "
               "as it was."),
    Check("test_cer_rest_uniform", "the rest of the batch is uniform",
          ("CombinedReplayBuffer",), _rest_inputs, _rest_probe, _rest_verdict,
          calls=(BUFFER,),
          rules=(REST_UNIFORM, REST_WITH_REPLACEMENT, OWN_GENERATOR, NEWEST_ONCE, ONLY_STORED,
                 BATCH_SIZE_ROWS),
          asks="The other rows are drawn uniformly (chi-square) and with replacement from the "
               "older transitions, partly filled and wrapped around, with batches smaller "
               "than, equal to and larger than what is stored, by the buffer's own seeded "
               "generator."),
    Check("test_cer_single_transition", "one stored transition, and errors",
          ("CombinedReplayBuffer",), _single_inputs, _single_probe, _single_verdict,
          calls=(BUFFER,),
          rules=(ONLY_NEWEST_STORED, BATCH_OF_ONE, SAMPLE_NEW_ARRAYS, EMPTY_SAMPLE_RAISES,
                 BATCH_SIZE_POSITIVE, SAMPLE_LEAVES_BUFFER, REST_UNIFORM, ONLY_STORED,
                 BATCH_SIZE_ROWS),
          asks="One stored transition gives a batch of one, sample(1) is the newest alone in "
               "new arrays, and sampling an empty buffer or batch_size <= 0 raises "
               "ValueError."),
    Check("test_replay_only_loop", "play_and_train_from_replay",
          ("play_and_train_from_replay",), replay_loop_inputs, _loop_probe, _loop_verdict,
          rules=(ENDS_WITH_EPISODE, AT_MOST_T_MAX, RETURNS_TOTAL, STORE_EVERY_STEP,
                 DONE_IS_TERMINATED, STORE_THEN_SAMPLE, ONE_BATCH_PER_STEP,
                 LEARN_ONLY_FROM_BATCH, PLAYS_AS_LESSON_01),
          asks="Each step stores its transition with done=terminated, then samples one batch "
               "and updates the agent on its rows only, in episodes that end by goal, time "
               "limit or t_max."),
    Check("test_discretize_edges", "discretiser: bin edges", ("discretize",),
          _discretiser_inputs, _discretiser_probe_for("edges", "decimal", "scaled", "single"),
          _discretiser_verdict_for(
              "edges", "A value on an inner edge belongs to the bin above it (floor), the "
              "lower bound to bin 0 and the upper bound to the last bin.",
              "values on every bin edge (exact in binary, and written as decimals) and on "
              "both bounds land in the right bins, over ranges from 1e-9 to 2e9 wide too.",
              then=(("decimal", DECIMAL_EDGES), ("scaled", SCALED_EDGES),
                    ("single", SINGLE_PRECISION))),
          rules=(INNER_EDGE_BIN_ABOVE, EQUAL_BINS, UPPER_BOUND_LAST_BIN, RETURNS_ONE_INT),
          asks="Values on inner bin edges go to the bin above, the lower bound to the first "
               "bin and the upper bound to the last."),
    Check("test_discretize_clipping", "discretiser: clipping", ("discretize",),
          _discretiser_inputs, _discretiser_probe_for("outside", "top"),
          _discretiser_verdict_for(
              "outside", "Values outside [low, high] are clipped into it first, so they "
              "fall in the first or last bin.",
              "values beyond the bounds are clipped into the first or last bin, and values "
              "just below the upper bound are in the last.", then=(("top", TOP_TEXT),)),
          rules=(CLIP_INTO_RANGE, UPPER_BOUND_LAST_BIN, RETURNS_ONE_INT),
          asks="Values outside the bounds are clipped into the first or last bin."),
    Check("test_discretize_bins", "discretiser: combining bins", ("discretize",),
          _discretiser_inputs, _discretiser_probe_for("random", "huge"),
          _discretiser_verdict_for(
              "random", "Per dimension b = floor((x - low) / (high - low) * bins); the cells "
              "are numbered row-major, the last dimension fastest (np.ravel_multi_index).",
              "random observations get the right row-major cell numbers, exact in a grid "
              "of 2**54 cells too.", then=(("huge", HUGE_TEXT),)),
          rules=(EQUAL_BINS, ROW_MAJOR, CLIP_INTO_RANGE, RETURNS_ONE_INT),
          asks="Random observations get the cell of their equal-width bins, numbered "
               "row-major as one int."),
    Check("test_cer_learning", "CER with a large buffer on Taxi", ("CombinedReplayBuffer",),
          _learning_inputs, _learning_probe, _learning_verdict, time_limit=60.0,
          learning=True, prepare=_learning_baseline,
          stand_ins=("play_and_train_from_replay",),
          calls=(BUFFER, AGENT,
                 Callee("play_and_train_from_replay", LESSON, ("test_replay_only_loop",))),
          rules=(CER_BEATS_UNIFORM,),
          asks="Your CER, driven by the course's loop, trains the reference agent with a "
               "100,000-transition buffer clearly faster than uniform replay."),
], contracts=CONTRACTS, distributions=DISTRIBUTIONS)
