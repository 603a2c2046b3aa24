"""Checks for lesson 02: the FIFO replay buffer and training with replay on Taxi."""

import numpy as np

from checks.contracts import (NUMBER, NUMPY_SCALARS, RESULT_TYPES, Contract, array,
                              constructor, tuple_of)
from checks.expected import expected as reference
from checks.framework import (Callee, Check, LessonChecks, attempted, call_student, comparison,
                              failed, fill_in_place, kept_with, outcome_of, parts_of, passed,
                              reseed_global_generators, result_by_reference,
                              value_error_problem, wrong_amount)
from checks.lesson01_qlearning import AGENT
from checks.numbered_transitions import (FRESH_DRAWS, GENERATOR_BATCH, GENERATOR_BATCHES,
                                         GENERATOR_STORED, MARKER, batch_fields, draws_by_seed,
                                         fresh_generator_draws, generator_inputs,
                                         generator_problem,
                                         probability_of_a_repeat, sampled_fields,
                                         sampled_id_batches, sampled_ids, transition,
                                         unseeded_numbered_problem, unseeded_numbered_runs)
from checks.operation_sequences import first_difference, observed, sequences, shown
from checks.replay_loops import (LOOP_REWARDS, RecordingBuffer, call_replay_loop, driven_by,
                                 replay_loop_inputs, sampled_before_storing,
                                 stored_transitions_problem)
from checks.requirements import Rule
from checks.sampler_fit import (batches_for, distribution_problem, fill_and_batch_cases,
                                row_order_problem)
from checks.statistics import FALSE_FAILURE_RATE
from checks.stub_envs import (corridor_play, episode_ends, episode_ends_problem, lent_corridor,
                              plays_as_lesson_01, reset_once_unseeded, retyped_problem,
                              scripted_agent, t_max_zero_problem, timeline, timelines_problem)

LESSON = "02_replay_buffer"
FIELDS = ("obs_t", "action", "reward", "obs_tp1", "done")

# --- the rules: what the lesson tells the student, each tagged beside its sentence -------

# test_len_never_above_capacity
LEN_COUNTS_STORED = Rule("len-counts-stored", "len(buffer) is the number of transitions the "
                         "buffer holds now: one more after each add until it is full.")
LEN_AT_MOST_SIZE = Rule("len-at-most-size", "The buffer never holds more than its size: once "
                        "full, len(buffer) stays at size.")
SIZE_ONE_VALID = Rule("size-one-valid", "ReplayBuffer(1) is a valid buffer: it holds the newest "
                      "transition.")
# test_fifo_eviction (and the sampling checks, which see the same faults)
FIFO_DROPS_OLDEST = Rule("fifo-drops-oldest", "When the buffer is full, adding a transition "
                         "drops the oldest one, so it holds the newest size transitions.")
TRANSITION_INTACT = Rule("transition-intact", "Each sampled row is one stored transition: its "
                         "five fields belong together.")
SAMPLE_REACHES_ALL = Rule("sample-reaches-every-transition", "sample can draw every stored "
                          "transition, the newest included.")
# test_sample_types
# a result type the lesson states: held on every call (checks.contracts)
SAMPLE_FIVE_ARRAYS = RESULT_TYPES
BATCH_SHAPE = Rule("batch-shape", "Each sampled array holds batch_size rows, the batch as its "
                   "first axis, then the shape of one stored item.")
DTYPES_FOLLOW_STORED = Rule("dtypes-follow-stored", "The sampled arrays keep the dtypes of what "
                            "was stored: integer states as integers, float32 vectors as "
                            "float32, done flags as bool, and every value as given.")
# test_no_aliasing
ADD_COPIES = Rule("add-copies", "add stores copies: changing the caller's arrays afterwards does "
                  "not change what the buffer holds.")
SAMPLE_NEW_ARRAYS = Rule("sample-new-arrays", "sample returns new arrays, not views of the "
                         "storage nor arrays it returned before: changing a batch in place "
                         "does not change the buffer, and sampling again does not change a "
                         "batch.")
# test_uniform_sampling
SAMPLE_UNIFORM = Rule("sample-uniform", "Each row of a batch is its own draw, in the order "
                      "drawn: every stored transition with equal probability, in a full "
                      "buffer and in a partly filled one.")
OWN_GENERATOR = Rule("own-generator", "sample draws from the buffer's own generator self.rng, "
                     "made from ReplayBuffer(size, seed)'s seed: the same seed gives the same "
                     "batches whatever numpy's global generator holds, another seed others.")
# test_with_replacement
WITH_REPLACEMENT = Rule("with-replacement", "sample draws with replacement: a transition may "
                        "come twice in a batch, and a batch may be larger than the buffer.")
# test_sample_errors
EMPTY_SAMPLE_RAISES = Rule("empty-sample-raises", "sample on an empty buffer raises ValueError "
                           "with a message that says so.")
BATCH_SIZE_POSITIVE = Rule("batch-size-positive", "sample(batch_size) with batch_size <= 0 "
                           "raises ValueError with a message that says so.")
SIZE_AT_LEAST_ONE = Rule("size-at-least-one", "ReplayBuffer(size) with size below 1 raises "
                         "ValueError with a message that says so.")
BATCH_OF_ONE = Rule("batch-of-one-valid", "sample(1) is valid: a batch of one transition.")
# test_replay_loop (lesson 05's loop is held to the rules it shares with this one)
NO_REPLAY_IS_PLAIN = Rule("no-replay-is-plain", "With replay=None the loop is lesson 01's: one "
                          "update per step and nothing replayed.")
ENDS_WITH_EPISODE = Rule("ends-with-episode", "The loop plays one episode, from one "
                         "env.reset() without a seed, as lesson 01's does, and it ends on the "
                         "step that terminates or truncates it.")
AT_MOST_T_MAX = Rule("at-most-t-max", "The loop plays at most t_max steps (10,000 when not "
                     "given).")
RETURNS_TOTAL = Rule("returns-total-reward", "The loop returns the episode's total reward.")
STORE_EVERY_STEP = Rule("store-every-step", "Each step stores its transition in the buffer, "
                        "once.")
DONE_IS_TERMINATED = Rule("done-is-terminated", "A transition is stored with done=terminated, "
                          "never truncated.")
STORE_THEN_SAMPLE = Rule("store-then-sample", "Each step stores its transition before it "
                         "samples, so the batch is drawn from a buffer that holds it.")
ONE_BATCH_PER_STEP = Rule("one-batch-per-step", "Each step samples one batch of "
                          "replay_batch_size transitions (32 when not given).")
UPDATES_NEW_AND_BATCH = Rule("update-new-and-batch", "Each step updates the agent on the new "
                             "transition and on each sampled one: 1 + replay_batch_size "
                             "updates.")
# test_replay_learning
PLAYS_AS_LESSON_01 = plays_as_lesson_01("play_and_train_with_replay")
REPLAY_LEARNS_FASTER = Rule("replay-learns-faster", "Driven by the course's loop, the buffer "
                            "makes Taxi's reference agent solve clearly more start states "
                            "early than without replay, and no fewer at the end.")


def _new_buffer(ReplayBuffer, capacity, seed):
    return call_student(f"ReplayBuffer({capacity})", ReplayBuffer, capacity,
                        seed=seed)


def _add(buffer, *fields):
    call_student("add(obs_t, action, reward, obs_tp1, done)", buffer.add, *fields)


def _len(buffer):
    return call_student("len(buffer)", len, buffer)


# --- length and FIFO eviction ----------------------------------------------------------

def _filling_inputs(rng):
    capacity = int(rng.integers(3, 25))
    inputs = {"capacity": capacity, "additions": int(rng.integers(capacity + 1, 3 * capacity)),
              "seed": int(rng.integers(2**31))}
    # adds, lens and samples in turn on a small buffer, shortest first: what only the
    # second or third call shows (a batch kept from before a later add, after wrap-around)
    inputs["sequence_size"] = int(rng.integers(2, 5))
    inputs["sequences"] = sequences(rng, _draw_buffer_operation)
    return inputs


def _draw_buffer_operation(rng, _, sequence):
    kind = rng.choice(["add", "add", "sample", "sample", "len"])
    if kind == "sample" and any(operation == ["add"] for operation in sequence):
        return ["sample", int(rng.integers(2, 8))]  # sample(1): test_sample_errors's
    return ["len"] if kind == "len" else ["add"]


def _buffer_operation_words(operation):
    return f"{operation[0]}({operation[1]})" if operation[0] == "sample" else (
        "add(...)" if operation[0] == "add" else "len(buffer)")


def _buffer_sequence_model(size):
    """What a FIFO buffer of ``size`` holds at each operation of a sequence: None after an
    add, the length, or the set of transitions a sample may draw from. Transition k is
    the sequence's k-th add."""
    def model(sequence):
        added, answers = 0, []
        for operation in sequence:
            if operation[0] == "add":
                added += 1
                answers.append(None)
            elif operation[0] == "len":
                answers.append(min(added, size))
            else:
                answers.append(set(range(max(0, added - size), added)))
        return answers
    return model


def _buffer_answer_agrees(got, wanted, operation):
    if operation[0] != "sample":
        return got == wanted
    return isinstance(got, list) and len(got) == operation[1] and set(got) <= wanted


def _len_probe(inputs, ReplayBuffer):
    buffer = _new_buffer(ReplayBuffer, inputs["capacity"], inputs["seed"])
    lengths = [_len(buffer)]
    for k in range(inputs["additions"]):
        # every third transition equals the one before it: a buffer stores what it is
        # given, an equal transition again as a new one
        _add(buffer, *transition(k - 1 if k % 3 == 2 else k))
        lengths.append(_len(buffer))
    # the smallest buffer there is: size 1 must work, and hold one transition
    made = attempted(_new_buffer, ReplayBuffer, 1, inputs["seed"])
    if "raised" in made:
        return {"lengths": lengths, "smallest_refused": made["raised"]}
    smallest = made["value"]
    smallest_lengths = [_len(smallest)]
    for k in range(3):
        _add(smallest, *transition(k))
        smallest_lengths.append(_len(smallest))
    return {"lengths": lengths, "smallest": smallest_lengths}


def _len_verdict(inputs, data):
    capacity = inputs["capacity"]
    if "smallest_refused" in data:
        return failed(f"{data['smallest_refused']}. A buffer of size 1 is valid: it holds the "
                      "newest transition.", rule=SIZE_ONE_VALID)
    problem = (wrong_amount("lengths", data["lengths"], inputs["additions"] + 1,
                            rule=LEN_COUNTS_STORED)
               or wrong_amount("lengths of ReplayBuffer(1)", data.get("smallest"), 4,
                               rule=LEN_COUNTS_STORED))
    if problem:
        return problem
    for size, lengths in ((capacity, data["lengths"]), (1, data["smallest"])):
        for added, got in enumerate(lengths):
            want = min(added, size)
            if got != want:
                too_many = isinstance(got, int) and got > size
                again = (" (every third one equal to the one before it: an equal "
                         "transition added again is stored again)"
                         if size == capacity and added >= 3 else "")
                return failed(f"after adding {added} transition(s){again} to "
                              f"ReplayBuffer({size}), len(buffer) should be {want} but is "
                              f"{got}."
                              + (" The buffer must never hold more than its size."
                                 if too_many else ""),
                              rule=LEN_AT_MOST_SIZE if too_many else LEN_COUNTS_STORED)
    return passed(f"len grows to the capacity {capacity} and stays there "
                  f"over {inputs['additions']} additions.")


EVICTION_DRAWS = 3000  # every kept transition is missed with probability < 1e-40
SMALLEST_ADDITIONS, SMALLEST_BATCH = 3, 8  # ReplayBuffer(1) then holds transition 2 alone


def _eviction_probe(inputs, ReplayBuffer):
    buffer = _new_buffer(ReplayBuffer, inputs["capacity"], inputs["seed"])
    for k in range(inputs["additions"]):
        _add(buffer, *transition(k))
    seen = []
    for ids in sampled_id_batches(buffer, 50, EVICTION_DRAWS // 50):
        seen.extend(ids)
    # the same transitions added newest number first: their rewards (k / 2) now fall, so a
    # buffer that evicts by anything but age (the smallest reward, say) shows it
    backwards = _new_buffer(ReplayBuffer, inputs["capacity"], inputs["seed"])
    for k in reversed(range(inputs["additions"])):
        _add(backwards, *transition(k))
    seen_backwards = sorted({i for ids in sampled_id_batches(backwards, 50,
                                                             EVICTION_DRAWS // 50)
                             for i in ids})
    # the smallest buffer holds the newest transition (one that cannot be made is
    # test_len_never_above_capacity's to report)
    made = attempted(_new_buffer, ReplayBuffer, 1, inputs["seed"])
    smallest = None
    if "value" in made:
        for k in range(SMALLEST_ADDITIONS):
            _add(made["value"], *transition(k))
        smallest = sampled_ids(made["value"], SMALLEST_BATCH)
    return {"seen": sorted(set(seen)), "smallest": smallest, "seen_backwards": seen_backwards,
            "sequences": [observed(sequence, _buffer_operations(
                _new_buffer(ReplayBuffer, inputs["sequence_size"], inputs["seed"])))
                for sequence in inputs["sequences"]]}


def _buffer_operations(buffer):
    """Applies one operation of a sequence to ``buffer``: what it observed."""
    added = 0  # transition k is the k-th add

    def apply(operation):
        nonlocal added
        if operation[0] == "add":
            _add(buffer, *transition(added))
            added += 1
            return None
        if operation[0] == "len":
            return _len(buffer)
        return sampled_ids(buffer, operation[1])
    return apply


def _eviction_verdict(inputs, data):
    capacity, additions = inputs["capacity"], inputs["additions"]
    kept = set(range(additions - capacity, additions))
    seen = set(data["seen"])
    if -1 in seen:
        return failed("sample returned rows whose fields do not belong together (obs_t of one "
                      "transition with the reward or done of another): keep each transition "
                      "as one unit.", rule=TRANSITION_INTACT)
    stale = sorted(seen - kept)
    situation = (f"after adding transitions 0..{additions - 1} to ReplayBuffer({capacity}) "
                 f"it should hold the newest {capacity}, {min(kept)}..{max(kept)}")
    if stale:
        return failed(f"{situation}, but sample returned transition {stale[0]}, which should "
                      "have been evicted. When the buffer is full, drop the oldest first.",
                      rule=FIFO_DROPS_OLDEST)
    missing = sorted(kept - seen)
    if missing:
        return failed(f"{situation}, but transition {missing[-1]} never came up in "
                      f"{EVICTION_DRAWS} samples. Is it stored, and can sample draw every "
                      "index? (rng.integers(n) already stops before n.)",
                      rule=FIFO_DROPS_OLDEST if missing[-1] < max(kept)
                      else SAMPLE_REACHES_ALL)
    backwards = data.get("seen_backwards")
    if backwards is not None and backwards != list(range(capacity)):
        return failed(f"after adding transitions {additions - 1}, {additions - 2}, ..., 0 (in "
                      f"that order: rewards falling) to ReplayBuffer({capacity}), it should "
                      f"hold the last {capacity} added, 0..{capacity - 1}, but sample returned "
                      f"{backwards[:8]}{'...' if len(backwards) > 8 else ''}. A full buffer "
                      "drops the transition added first, whatever its values.",
                      rule=FIFO_DROPS_OLDEST)
    newest = SMALLEST_ADDITIONS - 1
    # which transitions come back, not how many (test_with_replacement judges the count)
    if data.get("smallest") is not None and set(data["smallest"]) != {newest}:
        return failed(f"after adding transitions 0..{newest} to ReplayBuffer(1), "
                      f"sample({SMALLEST_BATCH}) returned transitions {data['smallest']}; a "
                      f"buffer of size 1 holds the newest transition, {newest}, alone.",
                      rule=FIFO_DROPS_OLDEST)
    found = first_difference(inputs["sequences"], data["sequences"],
                             _buffer_sequence_model(inputs["sequence_size"]),
                             _buffer_answer_agrees)
    if found:
        sequence, position, got, wanted = found
        operation = sequence[position]
        calls = shown(sequence, position, _buffer_operation_words)
        start = (f"on a new ReplayBuffer({inputs['sequence_size']}), the calls {calls} "
                 "(the k-th add storing transition k, from 0)")
        if operation[0] == "len":
            return failed(f"{start} ended with len(buffer) = {got!r}; it should be {wanted}.",
                          rule=LEN_COUNTS_STORED)
        return failed(f"{start} ended with {_buffer_operation_words(operation)} returning "
                      f"transitions {got!r}; the buffer holds {sorted(wanted)} then: sample "
                      "from what is stored now (nothing kept from an earlier call), "
                      f"{operation[1]} rows.", rule=FIFO_DROPS_OLDEST)
    return passed(f"{situation}, and it does; ReplayBuffer(1) holds the newest; adds, lens "
                  f"and samples in turn agree with a FIFO buffer over "
                  f"{len(inputs['sequences'])} sequences.")


# --- what sample returns ---------------------------------------------------------------

OBSERVATION_KINDS = {
    # name: (how to make observation k, what the stored dtype is)
    "integer states (Taxi)": (lambda k: k, "int64"),
    "float32 vectors (CartPole)": (lambda k: np.full(4, k, dtype=np.float32), "float32"),
    "uint8 arrays (images)": (lambda k: np.full((3, 2), k, dtype=np.uint8), "uint8"),
    # colour frames, height x width x channels: each comes back in its own layout
    "uint8 colour frames (H, W, C)": (lambda k: np.full((4, 3, 2), k, dtype=np.uint8),
                                      "uint8"),
    # numpy scalars keep their dtype too (an observation read off an int32 array)
    "numpy int32 scalars": (lambda k: np.int32(k), "int32"),
}


def _types_inputs(rng):
    return {"batch_size": int(rng.integers(3, 40)), "stored": int(rng.integers(5, 30)),
            "seed": int(rng.integers(2**31))}


def _describe_array(value):
    if not isinstance(value, np.ndarray):
        return {"type": type(value).__name__}
    return {"type": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape)}


def _types_probe(inputs, ReplayBuffer):
    described = {}
    for kind, (make_obs, _) in OBSERVATION_KINDS.items():
        buffer = _new_buffer(ReplayBuffer, 100, inputs["seed"])
        for k in range(inputs["stored"]):
            _, action, reward, _, done = transition(k)
            _add(buffer, make_obs(k), action, reward, make_obs(k + 1), done)
        described[kind] = [_describe_array(f) for f in sampled_fields(buffer, inputs["batch_size"])]
    # rewards of mixed types, an int first (as Taxi's -1 may arrive), then a fraction
    mixed = _new_buffer(ReplayBuffer, 10, inputs["seed"])
    for k, reward in enumerate(MIXED_REWARDS):
        _add(mixed, k, 0, reward, k + 1, False)
    try:  # what came back may not be numbers at all: other rules judge that
        rewards = sorted({float(r) for r in np.asarray(
            sampled_fields(mixed, MIXED_DRAWS)[2], dtype=np.float64).reshape(-1)})
    except (TypeError, ValueError):
        rewards = None
    # fractions no narrower float holds exactly: every value comes back as it was stored
    exact = {}
    for dtype in EXACT_DTYPES:
        buffer = _new_buffer(ReplayBuffer, 10, inputs["seed"])
        for k in range(EXACT_STORED):
            _add(buffer, _fractions(k, dtype), k, 0.0, _fractions(k + 1, dtype), False)
        fields = sampled_fields(buffer, MIXED_DRAWS)
        try:
            exact[dtype] = [np.asarray(fields[column], dtype=np.float64).tolist()
                            for column in (0, 3)]
        except (TypeError, ValueError, IndexError):
            exact[dtype] = None  # not numbers: other rules judge that
    return {**described, "mixed_rewards": rewards, "exact": exact}


EXACT_DTYPES, EXACT_STORED = ("float64", "float32"), 4


def _fractions(k, dtype):
    """An observation of fractions (k + 1/3, -k - 0.1, 1 + k / 2**20): float16 rounds them."""
    return np.array([k + 1 / 3, -k - 0.1, 1 + k / 2**20], dtype=dtype)


MIXED_REWARDS = (-1, 0.5, 2)  # stored in this order: int, float, int
MIXED_DRAWS = 64  # 0.5 missed from all of them with probability (2/3)**64, below 1e-11


def _types_verdict(inputs, data):
    batch = inputs["batch_size"]
    for kind, (make_obs, obs_dtype) in OBSERVATION_KINDS.items():
        obs_shape = list(np.shape(make_obs(0)))
        expected = {"obs_t": (obs_dtype, [batch, *obs_shape]), "action": ("int64", [batch]),
                    "reward": ("float64", [batch]), "obs_tp1": (obs_dtype, [batch, *obs_shape]),
                    "done": ("bool", [batch])}
        problem = wrong_amount("arrays", data[kind], len(FIELDS), rule=SAMPLE_FIVE_ARRAYS)
        if problem:
            return problem
        for field, got in zip(FIELDS, data[kind]):
            dtype, shape = expected[field]
            where = f"with {kind} stored, sample({batch}) returned {field}"
            if got["type"] != "ndarray":
                return failed(f"{where} as a {got['type']}; return numpy arrays.",
                              rule=SAMPLE_FIVE_ARRAYS)
            if got["shape"] != shape:
                return failed(f"{where} with shape {tuple(got['shape'])}; expected "
                              f"{tuple(shape)}: the batch first, then the shape of one item.",
                              rule=BATCH_SHAPE)
            if got["dtype"] != dtype:
                return failed(f"{where} with dtype {got['dtype']}; expected {dtype}, the type "
                              "of what was stored. Let numpy keep the stored dtype (no "
                              "conversion to float or to a fixed type).",
                              rule=DTYPES_FOLLOW_STORED)
    rewards = data.get("mixed_rewards")  # values that were never stored (which are drawn
    if rewards is not None and set(rewards) - set(map(float, MIXED_REWARDS)):  # is not this)
        return failed(f"after adding transitions with rewards {list(MIXED_REWARDS)} (an int "
                      f"first, then a fraction), sample({MIXED_DRAWS}) returned the rewards "
                      f"{rewards}: store each value as given (an array made for the first "
                      "reward's type turns 0.5 into 0).", rule=DTYPES_FOLLOW_STORED)
    for dtype, columns in (data.get("exact") or {}).items():
        stored = {tuple(_fractions(k, dtype).astype(np.float64).tolist())
                  for k in range(EXACT_STORED + 1)}
        rows = [tuple(row) for column in columns or [] for row in column]
        strays = [row for row in rows if row not in stored]
        if strays:
            return failed(f"after adding {dtype} observations such as "
                          f"{_fractions(1, dtype).tolist()}, sample({MIXED_DRAWS}) returned "
                          f"{list(strays[0])}, which was never stored: store every value "
                          "exactly as given (no narrower float, no rounding).",
                          rule=DTYPES_FOLLOW_STORED)
    return passed("five arrays whose shapes and dtypes follow the stored data, for integer, "
                  "float32-vector and uint8-array observations.")


def _aliasing_inputs(rng):
    return {"stored": int(rng.integers(3, 12)), "seed": int(rng.integers(2**31))}


AFTER_MUTATION_BATCHES = 10


def _rows(observations):
    """Sampled observations as lists of floats (an object array of arrays, row by row)."""
    try:
        rows = np.asarray(observations, dtype=np.float64)
        # one number per row (a field that is not the observations): still rows of lists
        return (rows.reshape(len(rows), -1) if rows.ndim else rows.reshape(1, 1)).tolist()
    except (TypeError, ValueError):
        return [np.asarray(row, dtype=np.float64).reshape(-1).tolist() for row in observations]


def _aliasing_probe(inputs, ReplayBuffer):
    buffer = _new_buffer(ReplayBuffer, 100, inputs["seed"])
    originals = []
    for k in range(inputs["stored"]):
        # arrays where the student's code lives, so that changing them later is seen there
        # every third observation a Python list: a caller's list is reused as often; and
        # every third a list of arrays, as frames are kept (their arrays reused in place)
        made = {0: lambda value: np.full(3, value), 1: lambda value: [value] * 3,
                2: lambda value: [np.full((), value) for _ in range(3)]}[k % 3]
        obs = kept_with(made(float(k)), near=buffer)
        obs_next = kept_with(made(float(k + 1)), near=buffer)
        originals.append((obs, obs_next))
        _add(buffer, obs, k % 5, k / 2, obs_next, False)
    # a batch the learner keeps, read before and after the buffer samples again
    kept = call_student("sample(64)", result_by_reference, buffer.sample, 64)
    kept_before = _rows(batch_fields(kept, 64)[0])
    sampled_fields(buffer, 64)
    kept_after = _rows(batch_fields(kept, 64)[0])
    for obs, obs_next in originals:  # the caller reuses its arrays, as envs often do
        fill_in_place(obs, MARKER)
        fill_in_place(obs_next, MARKER)
    first = call_student("sample(64)", result_by_reference, buffer.sample, 64)
    after_caller_mutation = _rows(batch_fields(first, 64)[0])
    for field in parts_of(first):  # a learner may normalise a batch in place
        try:
            fill_in_place(field, MARKER)
        except Exception:  # read-only batches cannot leak: nothing to try
            pass
    one = call_student("sample(1)", result_by_reference, buffer.sample, 1)
    for field in parts_of(one):  # a batch of one is a batch too: not views of the storage
        try:
            fill_in_place(field, MARKER)
        except Exception:  # read-only batches cannot leak: nothing to try
            pass
    # many draws afterwards, so an overwritten stored transition is sure to come up
    after = [row for _ in range(AFTER_MUTATION_BATCHES)
             for row in _rows(sampled_fields(buffer, 64)[0])]
    return {"after_caller_mutation": after_caller_mutation, "after_batch_mutation": after,
            "kept_before": kept_before, "kept_after": kept_after,
            "refilled_between_adds": _refilled_between_adds(ReplayBuffer, inputs),
            "every_field": _every_field_refilled(ReplayBuffer, inputs)}


# Each field of add given as a mutable object of the caller's, in turn: a 0-d and a 1-d
# array for all five (an action, reward or flag may be an array: a continuous action, a
# row of a batch), and a list where the field may be one (observations, an action).
_FIELD_FORMS = ("0-d array", "1-d array", "list")
_LIST_FIELDS = (0, 1, 3)
EVERY_FIELD_STORED = 3


def _caller_object(value, form):
    if form == "0-d array":
        return np.array(value)
    if form == "1-d array":
        return np.full(2, value)
    return [value] * 2


def _refill_value(value):
    """What the caller writes over its object after the add: another value of its type."""
    return (not value) if isinstance(value, bool) else type(value)(MARKER)


def _every_field_refilled(ReplayBuffer, inputs):
    """For each field of add and each form it may take, a buffer given that field as the
    caller's object (the other fields plain numbers), the caller's objects refilled after
    the adds: ``[field, form, added rows, rows sampled before the refill, rows sampled
    after it]`` per case, rows as lists of five lists of floats."""
    cases = []
    for field in range(len(FIELDS)):
        for form in _FIELD_FORMS:
            if form == "list" and field not in _LIST_FIELDS:
                continue
            buffer = _new_buffer(ReplayBuffer, 10, inputs["seed"])
            added, given = [], []
            for k in range(EVERY_FIELD_STORED):
                values = list(transition(k))
                plain = values[field]
                values[field] = kept_with(_caller_object(plain, form), near=buffer)
                given.append((values[field], _refill_value(plain)))
                added.append([np.asarray(_caller_object(plain, form) if i == field else v,
                                         dtype=np.float64).reshape(-1).tolist()
                              for i, v in enumerate(values)])
                call_student(f"add(obs_t, action, reward, obs_tp1, done) with {FIELDS[field]} "
                             f"given as a {form}", buffer.add, *values)
            # before the caller refills its objects, then after: a buffer that mixes up
            # rows (test_fifo_eviction's fault) is told apart from one that kept a reference
            before = _sampled_rows(buffer)
            for caller_object, refill in given:  # the caller reuses its objects
                fill_in_place(caller_object, refill)
            cases.append([FIELDS[field], form, added, before, _sampled_rows(buffer)])
    return cases


def _sampled_rows(buffer):
    """32 sampled transitions, each as five lists of floats."""
    rows = [_rows(f) for f in sampled_fields(buffer, 32)]
    return [[field_rows[row] for field_rows in rows] for row in range(min(map(len, rows)))]


def _refilled_between_adds(ReplayBuffer, inputs):
    """The observations sampled from a buffer given one array as the next observation of
    a transition and then, refilled in place by the caller, as the first of the next one
    (an environment that reuses its observation array): ``[obs_t rows, obs_tp1 rows]``."""
    buffer = _new_buffer(ReplayBuffer, 2, inputs["seed"])
    shared = kept_with(np.full(3, 1.0), near=buffer)
    _add(buffer, kept_with(np.full(3, 0.0), near=buffer), 0, 0.0, shared, False)
    fill_in_place(shared, 2.0)
    _add(buffer, shared, 1, 0.0, kept_with(np.full(3, 3.0), near=buffer), False)
    fields = sampled_fields(buffer, 32)
    return [_rows(fields[0]), _rows(fields[3])]


def _transition_words(rows):
    """Transitions as the rows :func:`_every_field_refilled` reads, in words."""
    def number(value):
        return str(int(value)) if float(value).is_integer() else repr(value)

    def item(values):
        return number(values[0]) if len(values) == 1 else "[" + ", ".join(
            map(number, values)) + "]"
    return ", ".join("(" + ", ".join(item(values) for values in row) + ")" for row in rows)


def _aliasing_verdict(inputs, data):
    first = data["after_caller_mutation"]

    def all_rows_original(rows):
        return all(len(set(row)) == 1 and 0 <= row[0] < inputs["stored"] for row in rows)

    if not all_rows_original(data["after_caller_mutation"]):
        return failed("after add(obs, ...) the caller overwrote its obs array (or list, or "
                      "the arrays of a list of frames), and sample returned the overwritten "
                      "values: the buffer kept a reference, not a copy. Copy observations "
                      "when you add them (np.array(obs) copies an array, a list and a list "
                      "of arrays alike; copy.copy of a list keeps its arrays).",
                      rule=ADD_COPIES)
    refilled = data.get("refilled_between_adds") or [[], []]
    if (set(map(tuple, refilled[0])) - {(0.0,) * 3, (2.0,) * 3}
            or set(map(tuple, refilled[1])) - {(1.0,) * 3, (3.0,) * 3}):
        return failed("the caller added a transition whose next observation was an array "
                      "holding 1.0s, refilled that array with 2.0s and added it as the first "
                      "observation of the next transition (an environment that reuses its "
                      "observation array does this); sample then returned observations "
                      f"{sorted(set(map(tuple, refilled[0])))} and next observations "
                      f"{sorted(set(map(tuple, refilled[1])))}, not 0.0s or 2.0s and 1.0s or "
                      "3.0s. Copy what each add is given, when it is given: never reuse an "
                      "earlier copy because the same array object came back.",
                      rule=ADD_COPIES)
    for field, form, added, before, after in data.get("every_field") or []:
        if any(row not in added for row in before):
            continue  # rows mixed up before any refill: test_fifo_eviction reports it
        strays = [row for row in after if row not in added]
        if strays:
            return failed(f"add(obs_t, action, reward, obs_tp1, done) was given its {field} "
                          f"as a {form} of the caller's (the other fields plain numbers) for "
                          f"{len(added)} transitions {_transition_words(added)}; the caller "
                          f"then refilled its {form}s with other values, and sample(32) "
                          "returned the transition "
                          f"{_transition_words(strays[:1])}, which was never added: the "
                          f"buffer kept the caller's {field}, not a copy. Every argument of "
                          "add stays the caller's: copy each of the five fields (np.array "
                          "copies an array, a 0-d array and a list alike; np.asarray does "
                          "not copy an array).", rule=ADD_COPIES)
    if not all_rows_original(data["after_batch_mutation"]):
        return failed("overwriting a sampled batch in place changed what the buffer stores: "
                      "sample must return new arrays, not views of the storage.",
                      rule=SAMPLE_NEW_ARRAYS)
    if data["kept_before"] != data["kept_after"]:
        return failed("a batch that sample(64) returned changed when sample was called again "
                      "(its observations went from "
                      f"{data['kept_before'][:2]}... to {data['kept_after'][:2]}...): each call "
                      "must hand out arrays of its own, never refill the ones it returned "
                      "before (a learner keeps batches).", rule=SAMPLE_NEW_ARRAYS)
    # the copies judged, the count: too few rows could hide a stored row that changed
    if len(first) != 64:
        return failed(f"sample(64) returned {len(first)} observations; see "
                      "test_with_replacement.", rule=BATCH_SHAPE)
    problem = wrong_amount("observations", data["after_batch_mutation"],
                           64 * AFTER_MUTATION_BATCHES, rule=BATCH_SHAPE)
    if problem:
        return problem
    return passed("the buffer stores copies and sampling hands out new arrays.")


# --- sampling distribution -------------------------------------------------------------

def _uniform_inputs(rng):
    # a buffer filled part way and past its wrap, each sampled with a batch smaller than,
    # equal to and larger than what it stores: a sampler that draws from the oldest
    # batch_size transitions only, or from slots below the capacity, is right in some of
    # these cases and wrong in others
    return {"cases": fill_and_batch_cases(rng), "seed": int(rng.integers(2**31)),
            **generator_inputs(rng), "numpy_seed_types": list(NUMPY_SEED_TYPES)}


# The seed as the numpy integer scalars it may arrive as (a seed read from a numpy array or
# drawn by a numpy generator): ReplayBuffer(size, seed) must seed self.rng with its value
# exactly as with a Python int, so default_rng(seed) itself, or int(seed), is right, and a
# test such as isinstance(seed, int) that drops a numpy seed is not.
NUMPY_SEED_TYPES = ("int64", "int32", "uint64", "uint32")


def _numpy_seeded_draws(ReplayBuffer, inputs):
    """Per numpy integer type and generator seed: a new buffer's first FRESH_DRAWS draws
    of self.rng; and, for the nonzero seed, the transitions another such buffer samples
    (as draws_by_seed's runs do), made after the global generators were seeded anew."""
    made = []
    for type_name in inputs["numpy_seed_types"]:
        for seed in inputs["generator_seeds"]:
            numpy_seed = getattr(np, type_name)(seed)
            call = f"ReplayBuffer({GENERATOR_STORED}, seed=np.{type_name}({seed}))"
            outcome = attempted(_seeded_buffer, call, ReplayBuffer, numpy_seed)
            entry = {"type": type_name, "seed": seed, "call": call}
            made.append(entry)
            if "raised" in outcome:
                entry["raised"] = outcome["raised"]
                continue
            entry["fresh_draws"] = fresh_generator_draws(outcome["value"])
            if seed == inputs["generator_seeds"][1]:  # another buffer: its stream unread
                reseed_global_generators(inputs["global_seeds"][1], near=ReplayBuffer)
                buffer = _seeded_buffer(call, ReplayBuffer, numpy_seed)
                for k in range(GENERATOR_STORED):
                    _add(buffer, *transition(k))
                entry["sampled"] = [i for ids in sampled_id_batches(
                    buffer, GENERATOR_BATCH, GENERATOR_BATCHES) for i in ids]
    return made


def _seeded_buffer(call, ReplayBuffer, seed):
    return call_student(call, ReplayBuffer, GENERATOR_STORED, seed=seed)


def _numpy_seed_problem(inputs, data):
    """A failed verdict when a buffer made with its seed as a numpy integer scalar does
    not draw what the same seed as a Python int draws; else None."""
    made = data.get("numpy_seeded") or []
    problem = wrong_amount("buffers made with a numpy seed", made,
                           len(inputs["numpy_seed_types"]) * len(inputs["generator_seeds"]),
                           rule=NUMPY_SCALARS)
    if problem:
        return problem
    with_int = data.get("other_seed")
    for entry in made:
        seed, call = entry["seed"], entry["call"]
        if "raised" in entry:
            return failed(f"{call} failed: {entry['raised']}. ReplayBuffer({GENERATOR_STORED}, "
                          f"seed={seed}) works, and np.{entry['type']}({seed}) is the same "
                          "seed: a seed may arrive as a numpy scalar, so pass it to "
                          "np.random.default_rng(seed) as it is (or as int(seed)).",
                          rule=NUMPY_SCALARS)
        wanted = np.random.default_rng(seed).random(FRESH_DRAWS).tolist()
        if entry["fresh_draws"] != wanted:
            return failed(f"right after {call} was made, buffer.rng.random({FRESH_DRAWS}) "
                          f"gave {entry['fresh_draws']!r}, not the {wanted} of "
                          f"np.random.default_rng({seed}).random({FRESH_DRAWS}): "
                          f"np.{entry['type']}({seed}) is the same seed as the Python int "
                          f"{seed}, and must seed self.rng the same way. A seed may arrive as "
                          "a numpy scalar: pass it to np.random.default_rng(seed) as it is (or "
                          "as int(seed)); a test such as isinstance(seed, int) or type(seed) "
                          "is int, which a numpy integer fails, must not drop it.",
                          rule=NUMPY_SCALARS)
        if "sampled" in entry and entry["sampled"] != with_int:
            return failed(f"{call} holding transitions 0..{GENERATOR_STORED - 1} sampled "
                          f"{entry['sampled'][:5]}...; ReplayBuffer({GENERATOR_STORED}, "
                          f"seed={seed}), filled alike, sampled {(with_int or [])[:5]}...: "
                          "a numpy integer seed is the same seed as the Python int, so the "
                          "batches must be the same. Draw from self.rng = "
                          "np.random.default_rng(seed), whatever the seed's type.",
                          rule=NUMPY_SCALARS)
    return None


def _kept(capacity, additions):
    return list(range(max(0, additions - capacity), additions))


def _uniform_probe(inputs, ReplayBuffer):
    samples = []
    for case in inputs["cases"]:
        buffer = _new_buffer(ReplayBuffer, case["capacity"], inputs["seed"])
        for k in range(case["additions"]):
            _add(buffer, *transition(k))
        stored = len(_kept(case["capacity"], case["additions"]))
        batches = sampled_id_batches(buffer, case["batch_size"],
                                     batches_for(stored, case["batch_size"]))
        samples.append([i for batch in batches for i in batch])
    return {"ids": samples,
            **draws_by_seed(lambda seed: _new_buffer(ReplayBuffer, GENERATOR_STORED, seed),
                            lambda buffer, k: _add(buffer, *transition(k)), ReplayBuffer,
                            inputs),
            "numpy_seeded": _numpy_seeded_draws(ReplayBuffer, inputs),
            "unseeded_globals": _unseeded_draws(ReplayBuffer, inputs)}


UNSEEDED_OPENING = f"ReplayBuffer({GENERATOR_STORED}"  # how the unseeded buffers are made


def _unseeded_draws(ReplayBuffer, inputs):
    """Unseeded buffers' draws (two independent generators agree by chance with probability
    GENERATOR_STORED ** -(GENERATOR_BATCH * GENERATOR_BATCHES) = 20^-48)."""
    return unseeded_numbered_runs(UNSEEDED_OPENING, ReplayBuffer, GENERATOR_STORED,
                                  lambda buffer, k: _add(buffer, *transition(k)), inputs)


def _uniform_verdict(inputs, data):
    cases = inputs["cases"]
    problem = wrong_amount("sampling runs", data["ids"], len(cases), rule=SAMPLE_UNIFORM)
    if problem:
        return problem
    for case, ids in zip(cases, data["ids"]):
        kept = _kept(case["capacity"], case["additions"])
        where = (f"after adding transitions 0..{case['additions'] - 1} to "
                 f"ReplayBuffer({case['capacity']}) ({case['label']}), "
                 f"sample({case['batch_size']})")
        problem = wrong_amount("sampled transitions", ids,
                               batches_for(len(kept), case["batch_size"]) * case["batch_size"],
                               rule=SAMPLE_UNIFORM)
        if problem:
            return problem
        if -1 in ids:
            return failed(f"{where} returned rows whose fields do not belong together; "
                          "test_fifo_eviction says more.", rule=TRANSITION_INTACT)
        strays = [i for i in ids if i not in kept]
        if strays:
            return failed(f"{where} returned transition {strays[0]}, which is not stored "
                          f"({kept[0]}..{kept[-1]}).", rule=FIFO_DROPS_OLDEST)
        never = [i for i in kept if i not in ids]
        if never:  # each is expected hundreds of times: never by chance is impossible
            return failed(f"{where} never drew transition {never[-1]}"
                          + (", the newest," if never[-1] == kept[-1] else "")
                          + f" in {len(ids)} draws: sample must be able to draw every stored "
                          "transition, whatever the batch size (rng.integers(n) already "
                          "stops before n).", rule=SAMPLE_REACHES_ALL)
        # two tests per case (the slots' counts, the rows' order) share the rate
        problem = distribution_problem(ids, {i: 1 / len(kept) for i in kept}, 2 * len(cases),
                                       lambda i: f"transition {i}")
        if problem:
            return failed(f"{where} should draw each of the {len(kept)} stored transitions "
                          f"equally often, but over {len(ids)} draws it {problem}. Draw "
                          "every stored index with equal probability, whatever the batch "
                          "size.", rule=SAMPLE_UNIFORM)
        size = case["batch_size"]
        problem = row_order_problem([ids[k:k + size] for k in range(0, len(ids), size)],
                                    len(kept), 2 * len(cases))
        if problem:
            return failed(f"{where} {problem}.", rule=SAMPLE_UNIFORM)
    problem = generator_problem(inputs, data, "ReplayBuffer", OWN_GENERATOR)
    if problem:
        return problem
    problem = unseeded_numbered_problem(data.get("unseeded_globals"), UNSEEDED_OPENING,
                                        inputs, OWN_GENERATOR)
    if problem:
        return problem
    problem = _numpy_seed_problem(inputs, data)
    if problem:
        return problem
    return passed(f"draws fit a uniform distribution over the stored transitions in "
                  f"{len(cases)} cases (partly filled and wrapped around, batches smaller "
                  f"than, equal to and larger than what is stored; chi-square, rejection "
                  f"rate {FALSE_FAILURE_RATE:g} in all), from the buffer's own seeded "
                  "generator, the seed given as a Python int or a numpy integer; unseeded "
                  "buffers draw apart and leave np.random and random as they were.")


def _replacement_inputs(rng):
    return {"small": int(rng.integers(2, 6)), "large_batch": int(rng.integers(20, 80)),
            "stored": 50, "batch_size": 20, "batches": 100, "seed": int(rng.integers(2**31))}


def _replacement_probe(inputs, ReplayBuffer):
    small = _new_buffer(ReplayBuffer, 100, inputs["seed"])
    for k in range(inputs["small"]):
        _add(small, *transition(k))
    oversized = attempted(sampled_ids, small, inputs["large_batch"])
    buffer = _new_buffer(ReplayBuffer, 100, inputs["seed"])
    for k in range(inputs["stored"]):
        _add(buffer, *transition(k))
    batches = sampled_id_batches(buffer, inputs["batch_size"], inputs["batches"])
    return {"oversized": oversized, "batches": batches}


def _replacement_verdict(inputs, data):
    from scipy import stats  # here: scipy takes a second to import
    small, large = inputs["small"], inputs["large_batch"]
    oversized = data["oversized"]
    if "raised" in oversized:
        return failed(f"with {small} transitions stored, {oversized['raised']}. Sampling is "
                      "with replacement, so a batch can be larger than the buffer.",
                      rule=WITH_REPLACEMENT)
    if len(oversized["value"]) != large:
        return failed(f"with {small} transitions stored, sample({large}) returned "
                      f"{len(oversized['value'])} rows. Sampling is with replacement, so a "
                      "batch can be larger than the buffer.", rule=WITH_REPLACEMENT)
    problem = wrong_amount("batches", data["batches"], inputs["batches"], rule=BATCH_SHAPE)
    for batch in data["batches"] if not problem else []:
        problem = problem or wrong_amount("rows in a batch", batch, inputs["batch_size"],
                                          rule=BATCH_SHAPE)
    if problem:
        return problem
    with_repeats = sum(len(set(batch)) < len(batch) for batch in data["batches"])
    p_repeat = probability_of_a_repeat(inputs["stored"], inputs["batch_size"])
    # too few batches with a repeated transition means sampling without replacement
    p_value = stats.binom.cdf(with_repeats, inputs["batches"], p_repeat)
    if p_value < FALSE_FAILURE_RATE:
        return failed(f"drawing batches of {inputs['batch_size']} from {inputs['stored']} "
                      f"transitions with replacement repeats a transition in about "
                      f"{p_repeat:.0%} of batches, but only {with_repeats} of "
                      f"{inputs['batches']} of yours did. Draw each index independently "
                      "(with replacement).", rule=WITH_REPLACEMENT)
    return passed("batches are drawn with replacement, even when larger than the buffer.")


# --- errors ---------------------------------------------------------------------------

def _errors_inputs(rng):
    return {"bad_sizes": [0, -int(rng.integers(1, 50))],
            "bad_capacities": [0, -int(rng.integers(1, 50))], "seed": int(rng.integers(2**31))}


def _errors_probe(inputs, ReplayBuffer):
    empty = _new_buffer(ReplayBuffer, 10, inputs["seed"])
    filled = _new_buffer(ReplayBuffer, 10, inputs["seed"])
    _add(filled, *transition(1))
    return {"empty": outcome_of(empty.sample, 1),
            "bad_sizes": [outcome_of(filled.sample, size) for size in inputs["bad_sizes"]],
            "bad_capacities": [outcome_of(ReplayBuffer, size, inputs["seed"])
                               for size in inputs["bad_capacities"]],
            # the smallest valid batch, at the boundary the errors guard
            "batch_of_one": attempted(sampled_ids, filled, 1)}


def _errors_verdict(inputs, data):
    problem = wrong_amount("outcomes of bad batch sizes", data["bad_sizes"],
                           len(inputs["bad_sizes"]), rule=BATCH_SIZE_POSITIVE)
    if problem:
        return problem
    problem = wrong_amount("outcomes of bad sizes", data["bad_capacities"],
                           len(inputs["bad_capacities"]), rule=SIZE_AT_LEAST_ONE)
    if problem:
        return problem
    cases = [("sample(1) on an empty buffer", data["empty"], EMPTY_SAMPLE_RAISES)]
    cases += [(f"sample({size})", outcome, BATCH_SIZE_POSITIVE)
              for size, outcome in zip(inputs["bad_sizes"], data["bad_sizes"])]
    cases += [(f"ReplayBuffer({size})", outcome, SIZE_AT_LEAST_ONE)
              for size, outcome in zip(inputs["bad_capacities"], data["bad_capacities"])]
    for call, outcome, rule in cases:
        problem = value_error_problem(call, outcome, rule=rule)
        if problem:
            return problem
    batch_of_one = data["batch_of_one"]
    if "raised" in batch_of_one:
        return failed(f"on a buffer holding only transition 1, {batch_of_one['raised']}. "
                      "batch_size=1 is valid.", rule=BATCH_OF_ONE)
    if batch_of_one["value"] != [1]:
        return failed("sample(1) on a buffer holding only transition 1 should return that "
                      f"transition once; got transitions {batch_of_one['value']} (-1: a row "
                      "whose fields come from different transitions). batch_size=1 is valid.",
                      rule=BATCH_OF_ONE)
    return passed("sampling an empty buffer, a non-positive batch size or a size below 1 "
                  "raises ValueError; sample(1) works.")


# --- the training loop with replay -----------------------------------------------------


DEFAULT_BATCH_SIZE, DEFAULT_T_MAX = 32, 10_000  # the defaults the signature gives


def episode_end_rule(runs, expected):
    """The rule a loop broke that :func:`~checks.stub_envs.episode_ends_problem` found
    at fault: how long an episode lasted, or what the loop returned."""
    for case, (steps, _) in expected.items():
        run = runs[case]
        if run["steps"] != steps:
            return AT_MOST_T_MAX if "t_max" in case else ENDS_WITH_EPISODE
        if not reset_once_unseeded(run):
            return ENDS_WITH_EPISODE  # one episode, from one unseeded reset
    return RETURNS_TOTAL


def _loop_probe(inputs, play_and_train_with_replay):
    outcome = {}
    length, time_limit, batch = inputs["length"], inputs["time_limit"], inputs["batch_size"]
    t_max = time_limit - 2  # stops the episode before the time limit does
    # case: (action, replay?, time limit, arguments after env and agent)
    cases = {"reaches_goal": (1, True, time_limit, (batch,)),
             "runs_out_of_time": (0, True, time_limit, (batch,)),
             "without_replay": (1, False, time_limit, (batch,)),
             "stopped_by_t_max": (0, True, time_limit, (batch, t_max)),
             "default_batch_size": (1, True, time_limit, ()),
             "without_replay_t_max": (0, False, time_limit, (batch, t_max)),
             "default_t_max": (0, False, DEFAULT_T_MAX + 5, ()),
             # the goal reached on the step the time limit ends: terminated and truncated
             # at once, and the step is terminal all the same
             "goal_at_the_limit": (1, True, length, (batch,)),
             # t_max=0: no step at all (the count is checked before each step)
             "no_steps": (1, True, time_limit, (batch, 0))}
    unnoted = ("default_t_max", "no_steps")
    for case, (action, use_replay, limit, arguments) in cases.items():
        events = None if case in unnoted else timeline()  # 10,000 steps: not noted
        env = lent_corridor(length, limit, events, **LOOP_REWARDS)
        agent, buffer = scripted_agent(action, events), RecordingBuffer()
        returned = call_replay_loop(
            "play_and_train_with_replay(env, agent, replay"
            + "".join(f", {a}" for a in arguments) + ")", play_and_train_with_replay, env,
            agent, buffer if use_replay else None, *arguments)
        if not isinstance(returned, dict):
            try:
                returned = float(returned)
            except (TypeError, ValueError):
                returned = repr(returned)[:60]
        outcome[case] = {**corridor_play(env), "returned": returned,
                         "update_count": len(agent.updates), "add_count": len(buffer.added),
                         **({} if case in unnoted else {
                             "order": list(events),
                             "updates": agent.updates, "retyped": agent.retyped,
                             "added": buffer.added,
                             "returned_batches": buffer.returned,
                             "held_when_sampled": buffer.held_when_sampled})}
    return outcome


REACH_THE_GOAL = ("reaches_goal", "without_replay", "default_batch_size")
# rewards with fractions (exact in binary): a loop that makes a replayed row's reward an
# int learns from another transition than the buffer returned


def _loop_verdict(inputs, data):
    batch, length, time_limit = inputs["batch_size"], inputs["length"], inputs["time_limit"]
    replayed = ("reaches_goal", "runs_out_of_time", "stopped_by_t_max", "default_batch_size")
    for case in replayed:  # a loop stopped at its first step by sampling an empty buffer
        problem = sampled_before_storing(data[case], 0)
        if problem:
            return failed(problem, rule=STORE_THEN_SAMPLE)
    problem = timelines_problem(data, only_played=True)
    if problem:
        return failed(problem, rule=PLAYS_AS_LESSON_01)
    plain = data["without_replay"]
    if len(plain["updates"]) != plain["steps"]:
        return failed(f"with replay=None the loop should update once per step; it made "
                      f"{len(plain['updates'])} updates in {plain['steps']} steps.",
                      rule=NO_REPLAY_IS_PLAIN)
    # how long each episode must last: to the goal, to the time limit, to t_max
    ends = episode_ends(length, time_limit, DEFAULT_T_MAX)
    expected = {**ends, "without_replay": ends["reaches_goal"],
                "default_batch_size": ends["reaches_goal"],
                "without_replay_t_max": ends["stopped_by_t_max"]}
    problem = episode_ends_problem(length, data, expected, REACH_THE_GOAL, "returned",
                                   **LOOP_REWARDS)
    if problem:
        return failed(problem, rule=episode_end_rule(data, expected))
    problem = t_max_zero_problem(
        data["no_steps"], f"play_and_train_with_replay(env, agent, replay, {batch}, t_max=0)")
    if problem:
        return failed(problem, rule=AT_MOST_T_MAX)
    for case in replayed:
        if len(data[case]["added"]) != data[case]["steps"]:
            return failed(f"the episode took {data[case]['steps']} steps but replay.add was "
                          f"called {len(data[case]['added'])} times: store every transition "
                          "once (a buffer is a replay to use even while it is empty: test "
                          "`replay is not None`, not `if replay:`, which asks len(replay)).",
                          rule=STORE_EVERY_STEP)
    for case in replayed:
        problem = stored_transitions_problem(data[case]["added"], length,
                                             LOOP_REWARDS["goal_reward"],
                                             LOOP_REWARDS["step_reward"])
        if problem:
            return failed(problem, rule=STORE_EVERY_STEP)
    for case in replayed:
        problem = sampled_before_storing(data[case], data[case]["steps"])
        if problem:
            return failed(problem, rule=STORE_THEN_SAMPLE)
    if not data["reaches_goal"]["added"][-1][4]:
        return failed("the last transition reached the goal (terminated=True) but was stored "
                      "with done=False.", rule=DONE_IS_TERMINATED)
    at_limit = data["goal_at_the_limit"]["added"]
    if at_limit and not at_limit[-1][4]:
        return failed(f"with a time limit of {length} steps the goal is reached on the last "
                      "one (terminated=True and truncated=True at once), but that transition "
                      "was stored with done=False: store `terminated` as it is, whatever the "
                      "time limit says.", rule=DONE_IS_TERMINATED)
    if any(row[4] for row in data["runs_out_of_time"]["added"]):
        return failed("an episode cut by the time limit (truncated) was stored with "
                      "done=True. Store `terminated`: a replayed transition must not zero the "
                      "bootstrap just because the clock ran out.", rule=DONE_IS_TERMINATED)
    defaults = data["default_batch_size"]
    if [len(rows) for rows in defaults["returned_batches"]] != [DEFAULT_BATCH_SIZE] * length:
        return failed(f"called without replay_batch_size, each step should sample its default "
                      f"{DEFAULT_BATCH_SIZE}; got batch sizes "
                      f"{[len(rows) for rows in defaults['returned_batches']]}.",
                      rule=ONE_BATCH_PER_STEP)
    for case in ("reaches_goal", "runs_out_of_time", "stopped_by_t_max"):
        run = data[case]
        steps, updates = run["steps"], run["updates"]
        if [len(rows) for rows in run["returned_batches"]] != [batch] * steps:
            return failed(f"expected one replay.sample({batch}) per step "
                          f"(replay_batch_size={batch}), {steps} in this {steps}-step "
                          f"episode; got {len(run['returned_batches'])} batch(es) of sizes "
                          f"{[len(rows) for rows in run['returned_batches']]}.",
                          rule=ONE_BATCH_PER_STEP)
        if len(updates) != steps * (1 + batch):
            return failed(f"each step should update the agent on the new transition and on "
                          f"each of the {batch} replayed ones ({1 + batch} updates per step); "
                          f"got {len(updates)} updates in {steps} steps.",
                          rule=UPDATES_NEW_AND_BATCH)
        for step in range(steps):
            made = sorted(updates[step * (1 + batch):(step + 1) * (1 + batch)])
            if made != sorted([run["added"][step], *run["returned_batches"][step]]):
                return failed(f"at step {step + 1} the agent should be updated on the new "
                              f"transition and on the {batch} transitions that "
                              "replay.sample returned, but its updates were on other "
                              "transitions. Update on the sampled batch, not the current "
                              "step again.", rule=UPDATES_NEW_AND_BATCH)
    problem = retyped_problem(data)
    if problem:
        return failed(problem, rule=UPDATES_NEW_AND_BATCH)
    problem = timelines_problem(data)
    if problem:
        return failed(problem, rule=PLAYS_AS_LESSON_01)
    return passed("every step updates on the new transition, stores it with done=terminated, "
                  "and learns from one replayed batch.")


# --- learning on Taxi -----------------------------------------------------------------

LEARNING = dict(alpha=0.5, epsilon=0.25, discount=0.99, epsilon_decay=0.99)
EARLY_EPISODES, TOTAL_EPISODES = 150, 300
REPLAY = dict(capacity=1000, batch_size=8)
EARLY_MARGIN = 0.20  # replay must solve 20 points more start states after 150 episodes
FINAL_TOLERANCE = 0.05  # and may trail no replay by at most 5 points at the end


def _learning_inputs(rng):
    return {"seeds": rng.integers(2**31, size=2).tolist(), "early": EARLY_EPISODES,
            "total": TOTAL_EPISODES, **REPLAY, **LEARNING}


def _learning_probe(inputs, ReplayBuffer, play_and_train_with_replay=None):
    """The student's buffer, driven by the course's loop (with replay: one update on
    each step's transition, one on each row of one batch), trains the grader's reference
    agent on the grader's Taxi. The student's loop is judged by test_replay_loop; only a
    notebook of the student edition, which lacks the course's loop, runs its own here."""
    from checks.taxi_training import course_loop, train_buffer_on_taxi

    loop, whose = course_loop(LESSON, play_and_train_with_replay, "play_and_train_with_replay")
    called = ("the course's loop with replay" if whose == "course" else
              f"play_and_train_with_replay(env, agent, replay, {inputs['batch_size']})")
    settings = {k: inputs[k] for k in LEARNING}
    runs = []
    for seed in inputs["seeds"]:
        snapshots = train_buffer_on_taxi(
            lambda: _new_buffer(ReplayBuffer, inputs["capacity"], seed), loop, seed,
            [inputs["early"], inputs["total"]], inputs["batch_size"], 1, **settings,
            called=called, near=ReplayBuffer)
        runs.append([q.tolist() for q in snapshots])
    return {"snapshots": runs, "loop": whose}


def _no_replay_baseline(inputs):
    return reference(LESSON, "no_replay_success", inputs["seeds"],
                     [inputs["early"], inputs["total"]], {k: inputs[k] for k in LEARNING})


def _learning_verdict(inputs, data):
    from course.taxi import evaluate_qtable

    base_early, base_final = _no_replay_baseline(inputs)
    problem = wrong_amount("runs", data["snapshots"], len(inputs["seeds"]),
                           rule=REPLAY_LEARNS_FASTER)
    shapes = {np.shape(run) for run in data["snapshots"]}
    if problem or shapes != {(2, 500, 6)}:
        return problem or failed(f"expected two (500, 6) Q-tables per run, got {shapes}.",
                                 rule=REPLAY_LEARNS_FASTER)
    rates = np.array([[evaluate_qtable(np.asarray(q, dtype=np.float64)).success_rate
                       for q in run] for run in data["snapshots"]])
    early, final = rates.mean(axis=0)
    yours = driven_by(data)
    summary = (f"share of Taxi's 300 start states the greedy policy solves (mean of "
               f"{len(rates)} seeds): after {inputs['early']} episodes {early:.0%} with {yours} "
               f"vs {base_early:.0%} without replay; after {inputs['total']} "
               f"{final:.0%} vs {base_final:.0%}")
    figure = comparison("Taxi start states solved greedily (mean over seeds)", "share solved",
                        [f"after {inputs['early']} episodes", f"after {inputs['total']}"],
                        {yours: [early, final], "no replay": [base_early, base_final]})
    if early < base_early + EARLY_MARGIN:
        return failed(summary + f". Replay should be at least {EARLY_MARGIN:.0%} ahead early.",
                      figure=figure, rule=REPLAY_LEARNS_FASTER)
    if final < base_final - FINAL_TOLERANCE:
        return failed(summary + ". Replay should not end up worse than no replay.",
                      figure=figure, rule=REPLAY_LEARNS_FASTER)
    return passed(summary + ".", figure=figure)


# A buffer's basic checks: what lesson 05 names when its buffer, built on this one, fails.
BUFFER = Callee("ReplayBuffer", LESSON, ("test_len_never_above_capacity", "test_fifo_eviction",
                                         "test_sample_types", "test_no_aliasing"))

# What every call of this lesson's code promises (checks.contracts): exact result types,
# numpy scalars accepted where the text allows them; inputs untouched holds for all.
CONTRACTS = {
    "ReplayBuffer": constructor(0),
    "ReplayBuffer.add": Contract(numpy_scalars=(0, 1, 2, 3, 4)),
    "ReplayBuffer.sample": Contract(tuple_of(*[array()] * 5), numpy_scalars=(0,), rows=0,
                                     rows_rule=BATCH_SHAPE),
    "play_and_train_with_replay": Contract(NUMBER, numpy_scalars=(3, 4),
                                           numpy_keywords=("replay_batch_size", "t_max")),
}

DISTRIBUTIONS = {
    "test_uniform_sampling": "uniform over every stored transition, in a buffer partly "
                             "filled and one wrapped around, each with a batch smaller than, "
                             "equal to and larger than what it stores (chi-square per case, "
                             "rejection rate 1e-6 in all)",
    "test_with_replacement": "how often a batch repeats a transition, against the birthday "
                             "probability (binomial, rejection rate 1e-6)",
}

CHECKS = LessonChecks(LESSON, [
    Check("test_len_never_above_capacity", "len of a filling buffer", ("ReplayBuffer",),
          _filling_inputs, _len_probe, _len_verdict,
          rules=(LEN_COUNTS_STORED, LEN_AT_MOST_SIZE, SIZE_ONE_VALID),
          asks="len(buffer) counts the transitions stored after each add and stops at the "
               "size, for ReplayBuffer(1) too."),
    Check("test_fifo_eviction", "FIFO eviction when full", ("ReplayBuffer",),
          _filling_inputs, _eviction_probe, _eviction_verdict,
          rules=(FIFO_DROPS_OLDEST, TRANSITION_INTACT, SAMPLE_REACHES_ALL),
          asks="After more additions than fit, the buffer holds exactly the newest size "
               "transitions, each intact, and ReplayBuffer(1) holds the newest."),
    Check("test_sample_types", "dtypes and shapes of a sample", ("ReplayBuffer",),
          _types_inputs, _types_probe, _types_verdict,
          rules=(SAMPLE_FIVE_ARRAYS, BATCH_SHAPE, DTYPES_FOLLOW_STORED),
          asks="sample returns five numpy arrays, batch first, whose dtypes and shapes follow "
               "the stored data: integer states, float32 vectors, uint8 arrays."),
    Check("test_no_aliasing", "stored data is copied", ("ReplayBuffer",),
          _aliasing_inputs, _aliasing_probe, _aliasing_verdict,
          rules=(ADD_COPIES, SAMPLE_NEW_ARRAYS, BATCH_SHAPE),
          asks="Changing the caller's arrays after add, or a sampled batch, does not change "
               "what the buffer holds."),
    Check("test_uniform_sampling", "uniform sampling", ("ReplayBuffer",),
          _uniform_inputs, _uniform_probe, _uniform_verdict,
          rules=(SAMPLE_UNIFORM, SAMPLE_REACHES_ALL, OWN_GENERATOR, FIFO_DROPS_OLDEST,
                 TRANSITION_INTACT),
          asks="sample draws every stored transition equally often (chi-square), partly "
               "filled and wrapped around, with batches smaller than, equal to and larger "
               "than what is stored, from the buffer's own generator seeded by its seed."),
    Check("test_with_replacement", "sampling with replacement", ("ReplayBuffer",),
          _replacement_inputs, _replacement_probe, _replacement_verdict,
          rules=(WITH_REPLACEMENT, BATCH_SHAPE),
          asks="sample draws with replacement: batches repeat transitions, and a batch may be "
               "larger than the buffer."),
    Check("test_sample_errors", "errors for bad samples", ("ReplayBuffer",),
          _errors_inputs, _errors_probe, _errors_verdict,
          rules=(EMPTY_SAMPLE_RAISES, BATCH_SIZE_POSITIVE, SIZE_AT_LEAST_ONE, BATCH_OF_ONE),
          asks="sample on an empty buffer, sample(batch_size <= 0) and ReplayBuffer(size < 1) "
               "raise ValueError with a message, and sample(1) works."),
    Check("test_replay_loop", "play_and_train_with_replay", ("play_and_train_with_replay",),
          replay_loop_inputs, _loop_probe, _loop_verdict,
          rules=(NO_REPLAY_IS_PLAIN, ENDS_WITH_EPISODE, AT_MOST_T_MAX, RETURNS_TOTAL,
                 STORE_EVERY_STEP, DONE_IS_TERMINATED, STORE_THEN_SAMPLE, ONE_BATCH_PER_STEP,
                 UPDATES_NEW_AND_BATCH, PLAYS_AS_LESSON_01),
          asks="Each step stores its transition with done=terminated, then samples one batch "
               "and updates on the new transition and each sampled one, in episodes that end "
               "by goal, time limit or t_max."),
    Check("test_replay_learning", "replay on Taxi", ("ReplayBuffer",),
          _learning_inputs, _learning_probe, _learning_verdict, time_limit=60.0,
          learning=True, prepare=_no_replay_baseline,
          stand_ins=("play_and_train_with_replay",),
          calls=(AGENT, Callee("play_and_train_with_replay", LESSON, ("test_replay_loop",))),
          rules=(REPLAY_LEARNS_FASTER,),
          asks="Your buffer, driven by the course's loop, trains the reference agent on Taxi "
               "faster early than no replay, and as well at the end."),
], contracts=CONTRACTS, distributions=DISTRIBUTIONS, inputs_untouched=False)
