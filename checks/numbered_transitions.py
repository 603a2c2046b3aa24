"""What the replay-buffer checks of lessons 02, 03 and 05 store, and how they read it back.

They store numbered transitions (:func:`transition`), whose every field tells which one it
is, read a sampled batch back as those numbers (:func:`sampled_ids`), and ask whether a
buffer draws its batches from its own seeded generator (:func:`draws_by_seed`).
"""

import numpy as np

from checks.framework import (ProbeError, attempted, call_student, call_student_repeatedly,
                              failed, lend_to, reseed_global_generators, wrong_amount)
from checks.lent_generators import CountingGenerator
from checks.unseeded_buffers import (made_without_seed, unseeded_call, unseeded_problem,
                                      unseeded_runs, unseeded_words)


# Transition number k is (k, k % 5, k / 2, next_observation(k), k % 3 == 0): every field
# can be traced back to k, so a sampled row tells which transition it is and whether it is
# intact. Where it ends its episode (done), its next observation is a terminal state that
# no transition starts from, as in a real run, where the next transition starts from a
# reset: a buffer that reads obs_tp1 from the following transition's obs_t is caught.
def transition(k):
    return k, k % 5, k / 2, next_observation(k), k % 3 == 0


TERMINAL_STATES = 1_000_000  # terminal state of transition k: TERMINAL_STATES + k


def next_observation(k):
    return TERMINAL_STATES + k if k % 3 == 0 else k + 1


MARKER = -7.0  # no stored observation holds this value


def sampled_fields(buffer, batch_size):
    return batch_fields(call_student(f"sample({batch_size})", buffer.sample, batch_size),
                        batch_size)


def batch_fields(batch, batch_size):
    """The five fields of what sample returned (a proxy's are read across)."""
    try:
        fields = list(batch)
    except TypeError:
        raise ProbeError(f"sample({batch_size}) returned {type(batch).__name__}, not the five "
                         "arrays (obs_t, action, reward, obs_tp1, done).") from None
    if len(fields) != 5:
        raise ProbeError(f"sample({batch_size}) returned {len(fields)} items; expected five "
                         "arrays (obs_t, action, reward, obs_tp1, done).")
    return fields


def transition_ids(fields):
    """The numbers of the transitions in a batch's five fields (-1 for a row whose
    fields disagree, which means the buffer mixed up transitions)."""
    obs, action, reward, obs_next, done = (np.asarray(f) for f in fields)
    ids = np.asarray(obs, dtype=np.int64).reshape(-1)
    intact = ((np.asarray(action).reshape(-1) == ids % 5)
              & (np.asarray(reward, dtype=np.float64).reshape(-1) == ids / 2)
              & (np.asarray(obs_next).reshape(-1)
                 == np.where(ids % 3 == 0, TERMINAL_STATES + ids, ids + 1))
              & (np.asarray(done).reshape(-1).astype(bool) == (ids % 3 == 0)))
    return np.where(intact, ids, -1).tolist()


def sampled_ids(buffer, batch_size):
    """The transition numbers in one batch sampled from ``buffer`` (lesson 05's combined
    buffer is sampled the same way)."""
    return transition_ids(sampled_fields(buffer, batch_size))


def sampled_id_batches(buffer, batch_size, count):
    """:func:`sampled_ids` of ``count`` batches, sampled one after another (in the grader,
    in one round trip)."""
    return [transition_ids(batch_fields(batch, batch_size))
            for batch in call_student_repeatedly(f"sample({batch_size})", buffer.sample,
                                                 count, batch_size)]


# The buffer's own generator: buffers filled alike, made with the same seed after the global
# generators were seeded differently, must draw the same batches; made with another seed,
# other batches (3 batches of 16 from 20 transitions agree by chance with probability 20^-48).
GENERATOR_STORED, GENERATOR_BATCH, GENERATOR_BATCHES = 20, 16, 3


def unseeded_numbered_runs(opening, buffer_class, capacity, add, inputs):
    """:func:`~checks.unseeded_buffers.unseeded_runs` for a buffer of numbered transitions:
    two made with the seed omitted and two with seed=None (``buffer_class(capacity)``,
    which ``opening`` words: ``"ReplayBuffer(20"``), each filled with transitions
    0..GENERATOR_STORED - 1 by ``add(buffer, k)`` and sampled GENERATOR_BATCHES times."""
    def fill(buffer):
        for k in range(GENERATOR_STORED):
            add(buffer, k)

    return unseeded_runs(made_without_seed(opening, buffer_class, capacity), fill,
                         lambda buffer: sampled_ids(buffer, GENERATOR_BATCH), buffer_class,
                         inputs["global_seeds"][0], GENERATOR_BATCHES)


def unseeded_numbered_problem(data, opening, inputs, rule):
    """:func:`~checks.unseeded_buffers.unseeded_problem` of :func:`unseeded_numbered_runs`'s
    ``data``, the buffers made as ``opening`` words them."""
    return unseeded_problem(
        data, lambda form: (f"{unseeded_call(opening, form)}{unseeded_words(form)} holding "
                            f"transitions 0..{GENERATOR_STORED - 1}"),
        f"sample({GENERATOR_BATCH}) {GENERATOR_BATCHES} times", GENERATOR_BATCHES,
        inputs["global_seeds"][0], rule)


def generator_inputs(rng):
    # seed 0 first: a seed like any other, which `if seed:` takes for no seed at all
    return {"generator_seeds": [0, 1 + int(rng.integers(2**31 - 1))],
            "global_seeds": rng.integers(2**31, size=2).tolist()}


FRESH_DRAWS = 4  # draws read from a new buffer's own generator


def draws_by_seed(new_buffer, add, near, inputs):
    """The transitions sampled from buffers holding transitions 0..GENERATOR_STORED - 1:
    made with the first of ``inputs["generator_seeds"]`` after the global generators (where
    ``near`` runs) were seeded with each of ``inputs["global_seeds"]``, and made with the
    second seed. ``new_buffer(seed)`` makes one, ``add(buffer, k)`` adds transition k
    (lesson 05's combined buffer is held to it too)."""
    def draws(buffer_seed, global_seed):
        reseed_global_generators(global_seed, near=near)
        buffer = new_buffer(buffer_seed)
        for k in range(GENERATOR_STORED):
            add(buffer, k)
        return [i for ids in sampled_id_batches(buffer, GENERATOR_BATCH, GENERATOR_BATCHES)
                for i in ids]

    seed, other_seed = inputs["generator_seeds"]
    # the buffer's own generator, read right after it is made: np.random.default_rng(seed)
    # itself, its stream from the start (not a child of the seed's, nor one made later)
    fresh_draws = fresh_generator_draws(new_buffer(seed))
    # a generator put in the buffer's self.rng after it was made: its draws must come from it
    lent_to = new_buffer(seed)
    for k in range(GENERATOR_STORED):
        add(lent_to, k)
    generator = CountingGenerator(other_seed)
    lend_to(lent_to, "rng", generator)
    sampled_id_batches(lent_to, GENERATOR_BATCH, 1)
    return {"same_seed": [draws(seed, global_seed) for global_seed in inputs["global_seeds"]],
            "other_seed": draws(other_seed, inputs["global_seeds"][0]),
            # two made without a seed, after the same global seeding: fresh entropy each
            "unseeded": [draws(None, inputs["global_seeds"][0]) for _ in range(2)],
            "lent_generator_draws": generator.draws, "fresh_draws": fresh_draws}


def fresh_generator_draws(buffer):
    """FRESH_DRAWS draws of a new ``buffer``'s own generator, as a list, or in words what
    stood in their way (no generator there, or what drawing raised)."""
    try:
        rng = getattr(buffer, "rng")
    except Exception as error:  # noqa: BLE001 - what reading it raised is the answer
        rng = error
    if not hasattr(rng, "random"):
        return f"buffer.rng is {repr(rng)[:60]}"
    made = attempted(call_student, f"buffer.rng.random({FRESH_DRAWS})", rng.random,
                     FRESH_DRAWS)
    value = made.get("value")
    return value.tolist() if isinstance(value, np.ndarray) else str(
        made.get("raised", value))[:120]


def generator_problem(inputs, data, buffer_class, rule):
    """A failed verdict (breaking ``rule``) when :func:`draws_by_seed`'s data show batches
    that do not come from the buffer's own generator, seeded by its seed; else None."""
    rows = GENERATOR_BATCH * GENERATOR_BATCHES
    runs = [*(data.get("same_seed") or []), data.get("other_seed")]
    # how many rows each batch holds is other checks' to judge: here only whether they agree
    problem = wrong_amount("sampling runs with a seed", runs, 3, rule=rule)
    if problem:
        return problem
    first, again, other = runs
    seed, other_seed = inputs["generator_seeds"]
    made = (f"two {buffer_class}({GENERATOR_STORED}, seed={seed}) holding transitions "
            f"0..{GENERATOR_STORED - 1}")
    if first != again:
        return failed(f"{made}, made after numpy's and Python's global generators were seeded "
                      f"differently, sampled different batches ({first[:5]}... and "
                      f"{again[:5]}...): sample must draw from the buffer's own generator, "
                      "self.rng = np.random.default_rng(seed), not from np.random, random or "
                      "a generator made without the seed (0 is a seed too).", rule=rule)
    wanted = np.random.default_rng(seed).random(FRESH_DRAWS).tolist()
    if data.get("fresh_draws") != wanted:
        return failed(f"right after {buffer_class}({GENERATOR_STORED}, seed={seed}) was made, "
                      f"buffer.rng.random({FRESH_DRAWS}) gave {data.get('fresh_draws')!r}; "
                      f"np.random.default_rng({seed}).random({FRESH_DRAWS}) gives {wanted}: "
                      "make self.rng = np.random.default_rng(seed) in __init__, from the seed "
                      "itself (not a generator derived from it, nor one made later).",
                      rule=rule)
    if not data.get("lent_generator_draws"):
        return failed(f"after a {buffer_class}'s self.rng was replaced by another generator, "
                      "sample drew nothing from it: draw every random number from self.rng, "
                      "the attribute the lesson names (not a generator kept under another "
                      "name).", rule=rule)
    if first == other:
        return failed(f"{made} and one with seed={other_seed} sampled the same {rows} "
                      "transitions: the seed argument must seed the buffer's generator "
                      "(np.random.default_rng(seed)).", rule=rule)
    unseeded = data.get("unseeded") or []
    problem = wrong_amount("sampling runs without a seed", unseeded, 2, rule=rule)
    if problem:
        return problem
    if unseeded[0] == unseeded[1]:  # by chance: GENERATOR_STORED ** -rows
        return failed(f"two {buffer_class}({GENERATOR_STORED}) made without a seed sampled "
                      f"the same {rows} transitions: with no seed, "
                      "np.random.default_rng(None) draws fresh entropy, so every unseeded "
                      "buffer samples differently (a fixed stand-in seed makes them all "
                      "alike).", rule=rule)
    return None


def probability_of_a_repeat(stored, batch_size):
    """P(a batch drawn with replacement holds some transition twice): the birthday problem."""
    return 1 - np.prod(1 - np.arange(batch_size) / stored)
