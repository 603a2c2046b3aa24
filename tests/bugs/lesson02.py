"""Buggy answers to lesson 02 (the FIFO replay buffer), each the mistake its name says.

Every answer is a whole answer cell, as a student would submit it: most are the solution
cell with the bug edited in (``edited``), so its ``#| export`` line, decorator and
docstring follow the solution. Bugs that rewrite the buffer's design (a list, a numpy
ring) replace the class cell too; the ring's ``add`` is written out in full.
"""

import functools

from . import Bug, edited_text, edits_of

LESSON = "02_replay_buffer"


_edit = edits_of(LESSON)


# --- buffer_class -----------------------------------------------------------------------

_DEQUE = "self._storage = deque(maxlen=size)  # a full deque drops from the left on append"

CLASS_CAPACITY_OFF_BY_ONE = _edit("buffer_class", (
    "deque(maxlen=size)", "deque(maxlen=size + 1)"))

CLASS_LEN_IS_CAPACITY = _edit("buffer_class", (
    "return len(self._storage)", "return self.size"))

CLASS_ON_A_LIST = _edit(
    "buffer_class",
    ("from collections import deque\n\n", ""),
    (_DEQUE, "self._storage = []"))

CLASS_WITH_PYTHON_RANDOM = _edit(
    "buffer_class",
    ("#| export\n", "#| export\nimport random\n"),
    ("np.random.default_rng(seed)", "random.Random(seed)"))

CLASS_NUMPY_RING = _edit(
    "buffer_class",
    ("from collections import deque\n\n", ""),
    (f"        {_DEQUE}\n", ""),
    ("        self.rng = np.random.default_rng(seed)", """\
        self.rng = np.random.default_rng(seed)
        self._fields = None  # five preallocated arrays, made on the first add
        self._next = 0  # where the next transition goes
        self._count = 0"""),
    ("return len(self._storage)", "return self._count"))

# --- buffer_add -------------------------------------------------------------------------

_APPEND = "    self._storage.append("
_COPIES = "tuple(np.array(field) for field in\n                               " \
          "(obs_t, action, reward, obs_tp1, done))"
_COPY_COMMENT = ("    # np.array copies, so later changes to the caller's arrays do not "
                 "reach the buffer\n")

ADD_REFUSED_WHEN_FULL = _edit(
    "buffer_add",
    (_APPEND, "    if len(self._storage) < self.size:\n    " + _APPEND),
    (_COPIES, _COPIES.replace("\n", "\n    ")))

ADD_POPS_FROM_THE_NEWEST_END = _edit("buffer_add", (
    _APPEND, "    if len(self._storage) == self.size:\n"
             "        self._storage.pop()\n" + _APPEND))

ADD_ACTION_AND_DONE_AS_FLOAT = _edit("buffer_add", (
    _COPIES, "(np.array(obs_t), float(action), float(reward), np.array(obs_tp1),\n"
             "                          float(done))"))

ADD_KEEPS_REFERENCES = _edit(
    "buffer_add",
    (_COPY_COMMENT, ""),
    (_COPIES, "(obs_t, action, reward, obs_tp1, done)"))

ADD_TO_NUMPY_RING = '''\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    """Store one transition, evicting the oldest if the buffer is full. Copies arrays."""
    transition = (obs_t, action, reward, obs_tp1, done)
    if self._fields is None:  # rewards as floats, whatever the first one is
        self._fields = [np.empty((self.size, *np.shape(x)),
                                 dtype=np.float64 if i == 2 else np.asarray(x).dtype)
                        for i, x in enumerate(transition)]
    for field, value in zip(self._fields, transition):
        field[self._next] = value  # writing into the array copies
    self._next = (self._next + 1) % self.size
    self._count = min(self._count + 1, self.size)
'''

# --- buffer_sample ----------------------------------------------------------------------

_INDICES = "    indices = self.rng.integers(len(self._storage), size=batch_size)"
_BATCH = "    batch = [self._storage[i] for i in indices]"
_RETURN = "    return tuple(np.stack(field) for field in zip(*batch))"
_EMPTY_CHECK = """\
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
"""

SAMPLE_FAVOURS_NEW = _edit("buffer_sample", (_INDICES, """\
    n = len(self._storage)
    recency = np.arange(1, n + 1)  # recent experience is more relevant
    indices = self.rng.choice(n, size=batch_size, p=recency / recency.sum())"""))

SAMPLE_FAVOURS_OLD = _edit("buffer_sample", (_INDICES, """\
    n = len(self._storage)
    age = np.arange(n, 0, -1)
    indices = self.rng.choice(n, size=batch_size, p=age / age.sum())"""))

SAMPLE_NEVER_THE_NEWEST = _edit("buffer_sample", (
    "self.rng.integers(len(self._storage), size=batch_size)",
    "self.rng.integers(0, len(self._storage) - 1, size=batch_size)"))

SAMPLE_MODULO_CAPACITY = _edit("buffer_sample", (
    "self.rng.integers(len(self._storage), size=batch_size)",
    "self.rng.integers(self.size, size=batch_size) % len(self._storage)"))

SAMPLE_WITHOUT_REPLACEMENT_CLIPPED = _edit("buffer_sample", (_INDICES, """\
    n = len(self._storage)
    indices = self.rng.choice(n, size=min(batch_size, n), replace=False)"""))

SAMPLE_WITHOUT_REPLACEMENT_UNLESS_FORCED = _edit("buffer_sample", (_INDICES, """\
    n = len(self._storage)
    indices = self.rng.choice(n, size=batch_size, replace=batch_size > n)"""))

SAMPLE_WITH_PYTHON_RANDOM_SAMPLE = _edit("buffer_sample", (
    f"{_INDICES}\n{_BATCH}",
    "    batch = self.rng.sample(list(self._storage), batch_size)"))

SAMPLE_AS_FLOAT32 = _edit("buffer_sample", (
    "np.stack(field)", "np.array(field, dtype=np.float32)"))

SAMPLE_FIELDS_INDEPENDENTLY = _edit("buffer_sample", (
    f"{_INDICES}\n{_BATCH}\n{_RETURN}", """\
    columns = [np.stack(field) for field in zip(*self._storage)]
    return tuple(column[self.rng.integers(len(column), size=batch_size)]
                 for column in columns)"""))

SAMPLE_EMPTY_RAISES_INDEX_ERROR = _edit(
    "buffer_sample",
    (_EMPTY_CHECK, ""),
    (_INDICES,
     "    indices = (self.rng.random(batch_size) * len(self._storage)).astype(int)"))

SAMPLE_EMPTY_DIVIDES_BY_ZERO = _edit(
    "buffer_sample",
    (_EMPTY_CHECK, ""),
    (f"{_INDICES}\n{_BATCH}", """\
    draws = self.rng.integers(2**62, size=batch_size)
    batch = [self._storage[int(draw) % len(self._storage)] for draw in draws]"""))

SAMPLE_ZERO_GIVES_EMPTY_ARRAYS = _edit(
    "buffer_sample",
    ("""\
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")""", """\
    if batch_size < 0:
        raise ValueError(f"batch_size must not be negative, got {batch_size}")"""),
    (_RETURN,
     "    return tuple(np.array([transition[j] for transition in batch])"
     " for j in range(5))"))


def ring_sample(body):
    """``sample`` for the numpy ring (``CLASS_NUMPY_RING``): the solution's argument
    checks, with ``body`` drawing the batch from ``self._fields``."""
    return _edit("buffer_sample",
                 ("if not self._storage:", "if self._count == 0:"),
                 (f"{_INDICES}\n{_BATCH}\n{_RETURN}", body))


NUMPY_RING = {"buffer_class": CLASS_NUMPY_RING, "buffer_add": ADD_TO_NUMPY_RING}

SAMPLE_NUMPY_RING_VIEWS = ring_sample("""\
    if batch_size >= self._count:  # asked for everything: hand it all over, no copying
        return tuple(field[:self._count] for field in self._fields)
    indices = self.rng.integers(self._count, size=batch_size)
    return tuple(field[indices] for field in self._fields)""")

SAMPLE_NUMPY_RING_STRIDED_VIEW = ring_sample("""\
    # one random transition, repeated batch_size times with stride 0: no copy at all
    i = self.rng.integers(self._count)
    return tuple(np.lib.stride_tricks.as_strided(field[i:], (batch_size, *field.shape[1:]),
                                                 (0, *field.strides[1:]))
                 for field in self._fields)""")

# --- play_and_train_with_replay ---------------------------------------------------------

# The loop written out in full rather than reusing lesson 01's play_and_train: correct
# (correct_variants.py), and what the loop bugs below are edits of.
WRITTEN_OUT_LOOP = '''\
#| export
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    """Play one episode; after each step also learn from a batch replayed from ``replay``.

    Returns the episode's total reward.
    """
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        if replay is not None:
            replay.add(state, action, reward, next_state, terminated)
            for transition in zip(*replay.sample(replay_batch_size)):
                agent.update(*transition)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
'''

_loop_edit = functools.partial(edited_text, "lesson 02's written-out loop", WRITTEN_OUT_LOOP)

_STORE = "            replay.add(state, action, reward, next_state, terminated)"
_REPLAY = """\
            for transition in zip(*replay.sample(replay_batch_size)):
                agent.update(*transition)"""

LOOP_STORES_TRUNCATION_AS_DONE = _loop_edit((
    "replay.add(state, action, reward, next_state, terminated)",
    "replay.add(state, action, reward, next_state, terminated or truncated)"))

LOOP_REPLAYS_BEFORE_STORING = _loop_edit((
    f"{_STORE}\n{_REPLAY}", f"{_REPLAY}\n{_STORE}"))

LOOP_NEVER_REPLAYS = _loop_edit((f"\n{_REPLAY}", ""))

# The loop that reuses lesson 01's, with a learning step that forgets the new transition.
REUSED_LOOP_LEARNS_ONLY_FROM_THE_BATCH = _edit("play_and_train_with_replay", (
    "for transition in [new, *zip(*replay.sample(replay_batch_size))]:",
    "for transition in zip(*replay.sample(replay_batch_size)):"))

LOOP_REPLAYS_THE_CURRENT_TRANSITION = _loop_edit((_REPLAY, """\
            batch = replay.sample(replay_batch_size)
            for s, a, r, s_next, done in zip(*batch):
                agent.update(state, action, reward, next_state, terminated)"""))


# --- boundaries and partial degeneracy (found by mutation testing) ----------------------

CLASS_REJECTS_SIZE_ONE = _edit("buffer_class", ("if size < 1:", "if size <= 1:"))

CLASS_ACCEPTS_SIZE_ZERO = _edit("buffer_class", ("if size < 1:", "if size < 0:"))

SAMPLE_REJECTS_BATCH_OF_ONE = _edit("buffer_sample", ("if batch_size <= 0:", "if batch_size < 2:"))

LOOP_IGNORES_TRUNCATION = _loop_edit((
    "if terminated or truncated:", "if terminated:"))

LOOP_NEVER_STOPS_UNLESS_TERMINATED = _loop_edit(
    ("for _ in range(t_max):", "while True:  # ignores t_max"),
    ("if terminated or truncated:", "if terminated:"))

LOOP_ONE_STEP_PAST_T_MAX = _loop_edit((
    "for _ in range(t_max):", "for _ in range(t_max + 1):"))

LOOP_RETURNS_ONLY_THE_LAST_REWARD = _loop_edit((
    "total_reward += reward", "total_reward = reward"))

LOOP_DEFAULT_BATCH_OF_ONE = _loop_edit((
    "replay_batch_size=32", "replay_batch_size=1"))


# --- rules the text states that no bug broke before (issue 22) --------------------------

SAMPLE_RETURNS_LISTS = _edit("buffer_sample", (
    "return tuple(np.stack(field) for field in zip(*batch))",
    "return tuple(list(field) for field in zip(*batch))"))

SAMPLE_FLATTENS_ITEMS = _edit("buffer_sample", (
    "return tuple(np.stack(field) for field in zip(*batch))",
    "return tuple(np.stack(field).reshape(batch_size, -1) for field in zip(*batch))"))

SAMPLE_FROM_THE_GLOBAL_GENERATOR = _edit("buffer_sample", (
    "self.rng.integers(len(self._storage), size=batch_size)",
    "np.random.randint(len(self._storage), size=batch_size)"))

CLASS_SEED_ZERO_UNSEEDED = _edit("buffer_class", (
    "self.rng = np.random.default_rng(seed)",
    "self.rng = np.random.default_rng(seed) if seed else np.random.default_rng()"))

CLASS_SEED_IGNORED = _edit("buffer_class", (
    "self.rng = np.random.default_rng(seed)", "self.rng = np.random.default_rng(0)"))

SAMPLE_REPEATS_THE_NEWEST = _edit("buffer_sample", (
    "indices = self.rng.integers(len(self._storage), size=batch_size)",
    "indices = np.full(batch_size, len(self._storage) - 1)  # the freshest experience"))

ADD_TO_RING_STOPS_AT_THE_END = edited_text(
    "the numpy ring's add", ADD_TO_NUMPY_RING,
    ("self._next = (self._next + 1) % self.size",
     "self._next = min(self._next + 1, self.size - 1)  # the last slot once full"))

REUSED_LOOP_TESTS_REPLAY_FOR_TRUTH = _edit("play_and_train_with_replay", (
    "if replay is None:", "if not replay:"))

LOOP_UPDATES_ONLY_WITH_REPLAY = _loop_edit((
    """        agent.update(state, action, reward, next_state, terminated)
        if replay is not None:
""", """        if replay is not None:
            agent.update(state, action, reward, next_state, terminated)
"""))


BUGS = (
    Bug("capacity_off_by_one", LESSON, "test_len_never_above_capacity",
        {"buffer_class": CLASS_CAPACITY_OFF_BY_ONE},
        also_fails=("test_fifo_eviction", "test_uniform_sampling"),
        rule="len-at-most-size", kind="boundary",
        description="deque(maxlen=size + 1): the buffer holds one transition too many"),
    Bug("len_is_capacity", LESSON, "test_len_never_above_capacity",
        {"buffer_class": CLASS_LEN_IS_CAPACITY},
        also_fails=("test_fifo_eviction",),  # len in its sequences of calls
        rule="len-counts-stored", kind="size-from-argument",
        description="__len__ returns the capacity, not the number stored"),
    Bug("refuses_adds_when_full", LESSON, "test_fifo_eviction",
        {"buffer_add": ADD_REFUSED_WHEN_FULL},
        also_fails=("test_uniform_sampling",),
        rule="fifo-drops-oldest", kind="after-wrap",
        description="a full buffer ignores new transitions instead of evicting the oldest"),
    Bug("list_pops_the_newest", LESSON, "test_fifo_eviction",
        {"buffer_class": CLASS_ON_A_LIST, "buffer_add": ADD_POPS_FROM_THE_NEWEST_END},
        also_fails=("test_uniform_sampling",),
        rule="fifo-drops-oldest", kind="after-wrap",
        description="a list with pop() when full: drops the newest stored transition, "
                    "keeps the oldest"),
    Bug("sample_favours_new", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_FAVOURS_NEW},
        rule="sample-uniform", kind="wrong-distribution",
        description="indices drawn with probability proportional to their position, so "
                    "new transitions come up far more often"),
    Bug("sample_favours_old", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_FAVOURS_OLD},
        rule="sample-uniform", kind="wrong-distribution",
        description="indices drawn with probability decreasing with position, so old "
                    "transitions come up far more often"),
    Bug("sample_never_the_newest", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_NEVER_THE_NEWEST},
        # a buffer of one transition: integers(0, 0) raises
        also_fails=("test_fifo_eviction", "test_sample_errors"),
        rule="sample-reaches-every-transition", kind="boundary",
        description="rng.integers(0, len - 1) as if the upper bound were inclusive: the "
                    "newest transition is never sampled"),
    Bug("sample_modulo_capacity", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_MODULO_CAPACITY},
        rule="sample-uniform", kind="size-from-argument",
        description="indices drawn below the capacity, then wrapped with % len: uniform "
                    "once the buffer is full, biased to old transitions until then"),
    Bug("sample_without_replacement_clipped", LESSON, "test_with_replacement",
        {"buffer_sample": SAMPLE_WITHOUT_REPLACEMENT_CLIPPED},
        also_fails=("test_fifo_eviction", "test_sample_types", "test_no_aliasing",
                    "test_uniform_sampling"),
        rule="batch-shape", kind="replacement",  # the short batch: every call's contract
        description="rng.choice(n, min(batch, n), replace=False): no repeats, and a "
                    "batch larger than the buffer comes back short"),
    Bug("sample_without_replacement_unless_forced", LESSON, "test_with_replacement",
        {"buffer_sample": SAMPLE_WITHOUT_REPLACEMENT_UNLESS_FORCED},
        also_fails=("test_uniform_sampling",),
        rule="with-replacement", kind="replacement",
        description="replace=False whenever the batch fits in the buffer: batches never "
                    "repeat a transition"),
    Bug("sample_with_python_random_sample", LESSON, "test_with_replacement",
        {"buffer_class": CLASS_WITH_PYTHON_RANDOM,
         "buffer_sample": SAMPLE_WITH_PYTHON_RANDOM_SAMPLE},
        also_fails=("test_fifo_eviction", "test_sample_types", "test_no_aliasing",
                    "test_uniform_sampling"),
        rule="with-replacement", kind="replacement",
        description="random.Random(seed).sample: without replacement, and ValueError "
                    "for a batch larger than the buffer"),
    Bug("sample_as_float32", LESSON, "test_sample_types",
        {"buffer_sample": SAMPLE_AS_FLOAT32},
        rule="dtypes-follow-stored", kind="protocol",
        description="every field cast to float32: integer states, actions and done "
                    "flags lose their type"),
    Bug("add_action_and_done_as_float", LESSON, "test_sample_types",
        {"buffer_add": ADD_ACTION_AND_DONE_AS_FLOAT},
        # float() of a 1-d action (a continuous action) raises: test_no_aliasing gives
        # every field of add as an array in turn (blind round 26)
        also_fails=("test_no_aliasing",),
        rule="dtypes-follow-stored", kind="protocol",
        description="add stores float(action) and float(done), so samples hold float "
                    "actions and float done flags"),
    Bug("add_keeps_references", LESSON, "test_no_aliasing",
        {"buffer_add": ADD_KEEPS_REFERENCES},
        rule="add-copies", kind="mutates-input",
        description="add stores the caller's arrays, not copies: an env that reuses its "
                    "observation array rewrites the past"),
    Bug("sample_returns_storage_views", LESSON, "test_no_aliasing",
        {**NUMPY_RING, "buffer_sample": SAMPLE_NUMPY_RING_VIEWS},
        also_fails=("test_fifo_eviction", "test_sample_types", "test_uniform_sampling",
                    "test_with_replacement"),
        rule="batch-shape", kind="mutates-input",  # the slices' rows: every call's contract
        description="a preallocated numpy ring whose sample hands out slices of its "
                    "storage (views) when the batch asks for at least everything stored"),
    Bug("sample_hands_out_writable_views", LESSON, "test_no_aliasing",
        {**NUMPY_RING, "buffer_sample": SAMPLE_NUMPY_RING_STRIDED_VIEW},
        also_fails=("test_uniform_sampling",),
        rule="sample-new-arrays", kind="mutates-input",
        description="each batch is one stored row repeated through a stride-0 view of "
                    "the storage: a learner that scales its batch in place rewrites the "
                    "buffer (and batches are one transition, so sampling is not uniform)"),
    Bug("sample_fields_independently", LESSON, "test_fifo_eviction",
        {"buffer_sample": SAMPLE_FIELDS_INDEPENDENTLY},
        also_fails=("test_uniform_sampling",),
        rule="transition-intact", kind="wrong-source",
        description="each field gets its own random indices: obs of one transition with "
                    "the reward and done of another"),
    Bug("sample_empty_raises_index_error", LESSON, "test_sample_errors",
        {"buffer_sample": SAMPLE_EMPTY_RAISES_INDEX_ERROR},
        rule="empty-sample-raises", kind="accidental-refusal",
        description="no check for an empty buffer: IndexError from the deque"),
    Bug("sample_empty_divides_by_zero", LESSON, "test_sample_errors",
        {"buffer_sample": SAMPLE_EMPTY_DIVIDES_BY_ZERO},
        rule="empty-sample-raises", kind="accidental-refusal",
        description="no check for an empty buffer: ZeroDivisionError from % len"),
    Bug("sample_zero_gives_empty_arrays", LESSON, "test_sample_errors",
        {"buffer_sample": SAMPLE_ZERO_GIVES_EMPTY_ARRAYS},
        rule="batch-size-positive", kind="boundary",
        description="batch_size < 0 rejected but 0 accepted: sample(0) returns five "
                    "empty arrays"),
    Bug("loop_stores_truncation_as_done", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_STORES_TRUNCATION_AS_DONE},
        rule="done-is-terminated", kind="past-terminal",
        description="replay.add gets terminated or truncated, so replayed time-outs "
                    "zero the bootstrap"),
    Bug("loop_replays_before_storing", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_REPLAYS_BEFORE_STORING},
        rule="store-then-sample", kind="protocol",
        description="samples before adding: the first step samples an empty buffer"),
    Bug("reused_loop_learns_only_from_the_batch", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": REUSED_LOOP_LEARNS_ONLY_FROM_THE_BATCH},
        rule="update-new-and-batch", kind="protocol",
        description="lesson 01's loop reused, with a learning step that never updates on "
                    "the new transition itself"),
    Bug("loop_never_replays", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_NEVER_REPLAYS},
        rule="one-batch-per-step", kind="protocol",
        description="stores every transition but never samples: no faster than no "
                    "replay (the learning check drives the buffer with the course's "
                    "loop, so only the loop check sees it)"),
    Bug("loop_replays_the_current_transition", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_REPLAYS_THE_CURRENT_TRANSITION},
        rule="update-new-and-batch", kind="wrong-source",
        description="samples a batch but updates on the loop's own transition "
                    "replay_batch_size times (the batch's names go unused): the loop "
                    "check's stand-in buffer hands out older transitions, which never "
                    "reach update"),
    Bug("class_rejects_size_one", LESSON, "test_len_never_above_capacity",
        {"buffer_class": CLASS_REJECTS_SIZE_ONE},
        rule="size-one-valid", kind="boundary",
        description="size <= 1 rejected: the smallest valid buffer raises ValueError"),
    Bug("class_accepts_size_zero", LESSON, "test_sample_errors",
        {"buffer_class": CLASS_ACCEPTS_SIZE_ZERO},
        rule="size-at-least-one", kind="boundary",
        description="ReplayBuffer(0) accepted: a buffer that drops every transition"),
    Bug("sample_rejects_batch_of_one", LESSON, "test_sample_errors",
        {"buffer_sample": SAMPLE_REJECTS_BATCH_OF_ONE},
        also_fails=("test_no_aliasing", "test_uniform_sampling"),
        rule="batch-of-one-valid", kind="boundary",
        description="the error guard is off by one: sample(1) raises ValueError"),
    Bug("replay_loop_never_stops_unless_terminated", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_NEVER_STOPS_UNLESS_TERMINATED},
        rule="ends-with-episode", kind="past-terminal",
        description="while True, stopping only when terminated: an episode that is "
                    "truncated never ends (the corridor stops it past its time limit)"),
    Bug("replay_loop_ignores_truncation", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_IGNORES_TRUNCATION},
        rule="ends-with-episode", kind="past-terminal",
        description="stops only when terminated: a truncated episode runs on to t_max"),
    Bug("loop_one_step_past_t_max", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_ONE_STEP_PAST_T_MAX},
        rule="at-most-t-max", kind="boundary",
        description="range(t_max + 1): one step more than t_max allows"),
    Bug("loop_returns_only_the_last_reward", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_RETURNS_ONLY_THE_LAST_REWARD},
        rule="returns-total-reward", kind="wrong-formula",
        description="total_reward = reward: returns the last step's reward, not the sum"),
    Bug("loop_default_batch_of_one", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_DEFAULT_BATCH_OF_ONE},
        rule="one-batch-per-step", kind="protocol",
        description="the signature's default replay_batch_size changed from 32 to 1"),
    Bug("sample_returns_lists", LESSON, "test_sample_types",
        {"buffer_sample": SAMPLE_RETURNS_LISTS},
        # every check that samples holds sample to its result type
        also_fails=("test_fifo_eviction", "test_no_aliasing", "test_uniform_sampling",
                    "test_with_replacement", "test_sample_errors"),
        rule="result-types", kind="protocol",
        description="sample returns five Python lists of the stored fields, not numpy "
                    "arrays"),
    Bug("sample_flattens_items", LESSON, "test_sample_types",
        {"buffer_sample": SAMPLE_FLATTENS_ITEMS}, rule="batch-shape", kind="protocol",
        description="each field reshaped to (batch_size, -1): scalars gain an axis and "
                    "image observations lose their shape"),
    Bug("sample_from_the_global_generator", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_FROM_THE_GLOBAL_GENERATOR}, rule="own-generator",
        kind="global-generator",
        description="np.random.randint instead of self.rng: uniform, but the buffer's seed "
                    "does not decide its batches"),
    Bug("seed_zero_taken_for_no_seed", LESSON, "test_uniform_sampling",
        {"buffer_class": CLASS_SEED_ZERO_UNSEEDED}, rule="own-generator",
        kind="falsy-as-missing",
        description="default_rng(seed) if seed else default_rng(): seed=0 gives an "
                    "unseeded generator"),
    Bug("seed_ignored", LESSON, "test_uniform_sampling",
        {"buffer_class": CLASS_SEED_IGNORED}, rule="own-generator", kind="global-generator",
        description="the generator is always default_rng(0): every buffer draws the same "
                    "batches whatever its seed"),
    Bug("sample_repeats_the_newest", LESSON, "test_replay_learning",
        {"buffer_sample": SAMPLE_REPEATS_THE_NEWEST}, rule="replay-learns-faster",
        kind="wrong-source",
        also_fails=("test_fifo_eviction", "test_uniform_sampling"),
        description="every row of a batch is the newest transition: more updates on the "
                    "step just taken, no replay of the past (Taxi: 20% of the start states "
                    "solved after 150 episodes against 10-13% without replay, short of the "
                    "20 points the check asks)"),
    Bug("ring_overwrites_its_last_slot", LESSON, "test_fifo_eviction",
        {**NUMPY_RING, "buffer_add": ADD_TO_RING_STOPS_AT_THE_END,
         "buffer_sample": ring_sample("""\
    indices = self.rng.integers(self._count, size=batch_size)
    return tuple(field[indices] for field in self._fields)""")},
        rule="fifo-drops-oldest", kind="after-wrap",
        also_fails=("test_uniform_sampling",),
        description="a numpy ring whose write position stops at the last slot: once full, "
                    "each add overwrites the newest, and the oldest stay"),
    Bug("reused_loop_tests_replay_for_truth", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": REUSED_LOOP_TESTS_REPLAY_FOR_TRUTH},
        rule="store-every-step", kind="falsy-as-missing",
        description="`if not replay:` for `replay is None`: an empty buffer has len 0, so "
                    "the loop never stores or replays"),
    Bug("loop_updates_only_with_replay", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_UPDATES_ONLY_WITH_REPLAY},
        rule="no-replay-is-plain", kind="protocol",
        description="the update on the new transition moved under `if replay is not None`: "
                    "with replay=None the agent never learns"),
)

# --- samplers against their exact distribution (checks/sampler_fit.py) ---------------------

SAMPLE_FROM_THE_OLDEST_BATCH = _edit("buffer_sample", (
    "    indices = self.rng.integers(len(self._storage), size=batch_size)",
    "    indices = self.rng.integers(min(batch_size, len(self._storage)), size=batch_size)"))

BUGS = (*BUGS,
    Bug("sample_from_the_oldest_batch", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_FROM_THE_OLDEST_BATCH},
        description="draws only among the oldest batch_size transitions: right whenever "
                    "the batch is at least as large as the buffer",
        rule="sample-reaches-every-transition", kind="size-from-argument"),
)

LOOP_DECAYS_EPSILON = _edit("play_and_train_with_replay", (
    "    return play_and_train(env, WithUpdate(agent, learn), t_max)",
    "    total = play_and_train(env, WithUpdate(agent, learn), t_max)\n"
    "    agent.epsilon *= 0.99  # explore a little less after each episode\n"
    "    return total"))

BUGS = (*BUGS,
    Bug("replay_loop_decays_epsilon", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_DECAYS_EPSILON},
        description="the loop decays agent.epsilon itself, which a loop may only read",
        rule="lent-as-stated", kind="protocol"),
)


# --- blind round 1: wrong answers written from the lesson text alone ----------------

GENERATOR_NOT_NAMED_RNG_BUFFER_CLASS = """\
#| export
from collections import deque

import numpy as np

from course.with_update import WithUpdate
from qlearning import play_and_train


class ReplayBuffer:
    \"\"\"A FIFO store of transitions (obs_t, action, reward, obs_tp1, done).

    Holds at most ``size`` transitions, dropping the oldest first. ``seed`` seeds the
    buffer's own generator, ``self.rng``, which ``sample`` draws from.
    \"\"\"

    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._storage = deque(maxlen=int(size))
        self._rng = np.random.default_rng(seed)  # private: nobody else should draw from it

    def __len__(self):
        \"\"\"The number of transitions stored now (never more than ``size``).\"\"\"
        return len(self._storage)
"""

GENERATOR_NOT_NAMED_RNG_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self._storage) == 0:
        raise ValueError("cannot sample from an empty buffer")
    indices = self._rng.integers(len(self._storage), size=batch_size)
    batch = [self._storage[i] for i in indices]
    return tuple(np.stack(field) for field in zip(*batch))
"""

SAMPLE_SQUEEZES_BATCH_AXIS_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self._storage) == 0:
        raise ValueError("cannot sample from an empty buffer")
    indices = self.rng.integers(len(self._storage), size=batch_size)
    batch = [self._storage[i] for i in indices]
    # squeeze away stray length-1 axes so scalars come back as (batch_size,)
    return tuple(np.squeeze(np.stack(field)) for field in zip(*batch))
"""

BUGS = (*BUGS,
    Bug("generator_not_named_rng", LESSON, "test_uniform_sampling",
        {"buffer_class": GENERATOR_NOT_NAMED_RNG_BUFFER_CLASS,
         "buffer_sample": GENERATOR_NOT_NAMED_RNG_BUFFER_SAMPLE},
        description="the seeded generator is kept as self._rng: the buffer has no rng attribute, "
                    "and a generator put in self.rng is never used by sample",
        rule="own-generator", kind="protocol"),
    Bug("sample_squeezes_batch_axis", LESSON, "test_sample_errors",
        {"buffer_sample": SAMPLE_SQUEEZES_BATCH_AXIS_BUFFER_SAMPLE},
        also_fails=("test_uniform_sampling",),
        description="np.squeeze on every stacked field: a batch of one loses its batch axis (0-d "
                    "arrays, (4,) observations), and stored items with a length-1 axis lose it",
        rule="batch-shape", kind="boundary"),
)


# --- blind round 2: wrong answers written from the lesson text alone ----------------

LOOP_TESTS_FLAGS_WITH_IS_TRUE_PLAY_AND_TRAIN_WITH_REPLAY = """\
#| export
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a batch replayed from ``replay``.

    Returns the episode's total reward.
    \"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        if replay is not None:
            replay.add(state, action, reward, next_state, terminated)
            batch = replay.sample(replay_batch_size)
        agent.update(state, action, reward, next_state, terminated)
        if replay is not None:
            for transition in zip(*batch):
                agent.update(*transition)
        total_reward += reward
        state = next_state
        if terminated is True or truncated is True:
            break
    return total_reward
"""

ADD_SCALARS_TO_PYTHON_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    def stored(field):
        if np.ndim(field) == 0:
            return np.asarray(field).item()  # plain Python number
        return np.array(field)

    self._storage.append(tuple(stored(field) for field in
                               (obs_t, action, reward, obs_tp1, done)))
"""

BUGS = (*BUGS,
    Bug("loop_tests_flags_with_is_true", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_TESTS_FLAGS_WITH_IS_TRUE_PLAY_AND_TRAIN_WITH_REPLAY},
        description="a written-out loop stops on `terminated is True or truncated is True`: with "
                    "np.bool_ flags the episode runs on to t_max",
        rule="ends-with-episode", kind="numpy-scalars"),
    Bug("add_scalars_to_python", LESSON, "test_sample_types",
        {"buffer_add": ADD_SCALARS_TO_PYTHON_BUFFER_ADD},
        description="add turns 0-d fields into Python numbers with .item(): float32 rewards come "
                    "back float64, uint8/int32 states as int64",
        rule="dtypes-follow-stored", kind="protocol"),
)


# --- blind round 2: wrong answers written from the lesson text alone ----------------

SAMPLE_REJECTS_NUMPY_BATCH_SIZE_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    indices = self.rng.integers(len(self._storage), size=batch_size)
    batch = [self._storage[i] for i in indices]
    return tuple(np.stack(field) for field in zip(*batch))
"""

BUGS = (*BUGS,
    Bug("sample_rejects_numpy_batch_size", LESSON, "test_fifo_eviction",
        {"buffer_sample": SAMPLE_REJECTS_NUMPY_BATCH_SIZE_BUFFER_SAMPLE},
        also_fails=("test_sample_types", "test_no_aliasing", "test_uniform_sampling", "test_with_replacement"),
        description="the batch_size guard also demands isinstance(batch_size, int): "
                    "sample(np.int64(8)) raises ValueError",
        rule="numpy-scalars", kind="numpy-scalars"),
)


# --- blind round 3: wrong answers written from the lesson text alone ----------------

UNSEEDED_BUFFERS_SHARE_SEED_ZERO_BUFFER_CLASS = """\
#| export
from collections import deque

import numpy as np

from course.with_update import WithUpdate
from qlearning import play_and_train


class ReplayBuffer:
    \"\"\"A FIFO store of transitions (obs_t, action, reward, obs_tp1, done).

    Holds at most ``size`` transitions, dropping the oldest first. ``seed`` seeds the
    buffer's own generator, ``self.rng``, which ``sample`` draws from.
    \"\"\"

    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._storage = deque(maxlen=int(size))
        # reproducible by default: no seed means seed 0
        self.rng = np.random.default_rng(0 if seed is None else seed)

    def __len__(self):
        \"\"\"The number of transitions stored now (never more than ``size``).\"\"\"
        return len(self._storage)
"""

ADD_SKIPS_DUPLICATE_TRANSITIONS_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    transition = tuple(np.array(field) for field in (obs_t, action, reward, obs_tp1, done))
    for stored in self._storage:  # no need to keep the same experience twice
        if all(np.array_equal(a, b) for a, b in zip(stored, transition)):
            return
    self._storage.append(transition)
"""

SAMPLE_REUSES_OUTPUT_ARRAYS_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    indices = self.rng.integers(len(self._storage), size=batch_size)
    fields = list(zip(*[self._storage[i] for i in indices]))
    cache = getattr(self, "_batch", None)  # reuse the arrays of the last batch: no allocation
    if cache is None or any(out.shape != (batch_size, *np.shape(f[0]))
                            or out.dtype != np.result_type(*f)
                            for out, f in zip(cache, fields)):
        self._batch = tuple(np.stack(f) for f in fields)
    else:
        for out, f in zip(cache, fields):
            np.stack(f, out=out)
    return self._batch
"""

SAMPLE_SORTS_INDICES_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    # sorted, so that the deque is walked from one end to the other
    indices = np.sort(self.rng.integers(len(self._storage), size=batch_size))
    batch = [self._storage[i] for i in indices]
    return tuple(np.stack(field) for field in zip(*batch))
"""

SAMPLE_EVERYTHING_WHEN_BATCH_EQUALS_LEN_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    if batch_size == len(self._storage):
        batch = list(self._storage)  # the whole buffer: no need to draw
    else:
        indices = self.rng.integers(len(self._storage), size=batch_size)
        batch = [self._storage[i] for i in indices]
    return tuple(np.stack(field) for field in zip(*batch))
"""

NO_REPLAY_BRANCH_IGNORES_T_MAX_PLAY_AND_TRAIN_WITH_REPLAY = """\
#| export
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a batch replayed from ``replay``.

    Returns the episode's total reward.
    \"\"\"
    if replay is None:
        return play_and_train(env, agent)  # plain Q-learning, lesson 01's loop

    def learn(state, action, reward, next_state, terminated):
        new = (state, action, reward, next_state, terminated)
        replay.add(*new)
        for transition in [new, *zip(*replay.sample(replay_batch_size))]:
            agent.update(*transition)

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""

LOOP_CASTS_REPLAYED_ROWS_TO_INT_PLAY_AND_TRAIN_WITH_REPLAY = """\
#| export
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a batch replayed from ``replay``.

    Returns the episode's total reward.
    \"\"\"
    if replay is None:
        return play_and_train(env, agent, t_max)

    def learn(state, action, reward, next_state, terminated):
        replay.add(state, action, reward, next_state, terminated)
        batch = replay.sample(replay_batch_size)
        agent.update(state, action, reward, next_state, terminated)
        for row in zip(*batch):
            agent.update(*(int(x) for x in row))  # numpy scalars -> plain Python numbers

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""

BUGS = (*BUGS,
    Bug("unseeded_buffers_share_seed_zero", LESSON, "test_uniform_sampling",
        {"buffer_class": UNSEEDED_BUFFERS_SHARE_SEED_ZERO_BUFFER_CLASS},
        description="default_rng(0 if seed is None else seed): every buffer made without a seed "
                    "draws the same batches",
        rule="own-generator", kind="global-generator"),
    Bug("add_skips_duplicate_transitions", LESSON, "test_len_never_above_capacity",
        {"buffer_add": ADD_SKIPS_DUPLICATE_TRANSITIONS_BUFFER_ADD},
        description="add ignores a transition equal to one already stored, so repeated experience "
                    "is counted and replayed once",
        rule="len-counts-stored", kind="protocol"),
    Bug("sample_reuses_output_arrays", LESSON, "test_no_aliasing",
        {"buffer_sample": SAMPLE_REUSES_OUTPUT_ARRAYS_BUFFER_SAMPLE},
        description="sample fills the same cached arrays in place at every call of the same shape:"
                    " a batch the learner kept is overwritten by the next sample",
        rule="sample-new-arrays", kind="mutates-input"),
    Bug("sample_sorts_indices", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_SORTS_INDICES_BUFFER_SAMPLE},
        description="the drawn indices are sorted (for cache-friendly deque access): row i is the "
                    "i-th smallest index, so the first rows are mostly the oldest transitions",
        rule="sample-uniform", kind="wrong-distribution"),
    Bug("sample_everything_when_batch_equals_len", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_EVERYTHING_WHEN_BATCH_EQUALS_LEN_BUFFER_SAMPLE},
        description="when batch_size == len(buffer) it returns every stored transition once, "
                    "oldest first, instead of drawing at random",
        rule="sample-uniform", kind="replacement"),
    Bug("no_replay_branch_ignores_t_max", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": NO_REPLAY_BRANCH_IGNORES_T_MAX_PLAY_AND_TRAIN_WITH_REPLAY},
        description="the replay=None branch calls play_and_train(env, agent) without t_max, so it "
                    "runs up to 10,000 steps whatever t_max says",
        rule="at-most-t-max", kind="protocol"),
    Bug("loop_casts_replayed_rows_to_int", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_CASTS_REPLAYED_ROWS_TO_INT_PLAY_AND_TRAIN_WITH_REPLAY},
        description="each replayed row is converted with int() before agent.update: fractional "
                    "rewards (and non-integer states) are truncated",
        rule="update-new-and-batch", kind="wrong-source"),
)


# --- blind round 4: wrong answers written from the lesson text alone ----------------

COPIES_ONLY_NDARRAYS_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    fields = (obs_t, action, reward, obs_tp1, done)
    # numpy arrays may be reused by the env: copy them; numbers are immutable anyway
    self._storage.append(tuple(field.copy() if isinstance(field, np.ndarray) else field
                               for field in fields))
"""

RING_DTYPE_FROZEN_BY_FIRST_ADD_BUFFER_CLASS = """\
#| export
from collections import deque

import numpy as np

from course.with_update import WithUpdate
from qlearning import play_and_train


class ReplayBuffer:
    \"\"\"A FIFO store of transitions (obs_t, action, reward, obs_tp1, done).

    Holds at most ``size`` transitions, dropping the oldest first. ``seed`` seeds the
    buffer's own generator, ``self.rng``, which ``sample`` draws from.
    \"\"\"

    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._fields = None  # one preallocated array per field, made on the first add
        self._next = 0
        self._count = 0
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        \"\"\"The number of transitions stored now (never more than ``size``).\"\"\"
        return self._count
"""

RING_DTYPE_FROZEN_BY_FIRST_ADD_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    transition = (obs_t, action, reward, obs_tp1, done)
    if self._fields is None:
        self._fields = [np.empty((self.size,) + np.shape(field), dtype=np.asarray(field).dtype)
                        for field in transition]
    for array, field in zip(self._fields, transition):
        array[self._next] = field  # copies into the ring
    self._next = (self._next + 1) % self.size
    self._count = min(self._count + 1, self.size)
"""

RING_DTYPE_FROZEN_BY_FIRST_ADD_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if self._count == 0:
        raise ValueError("cannot sample from an empty replay buffer")
    indices = self.rng.integers(self._count, size=batch_size)
    return tuple(array[indices] for array in self._fields)  # fancy indexing copies
"""

BUGS = (*BUGS,
    Bug("copies_only_ndarrays", LESSON, "test_no_aliasing",
        {"buffer_add": COPIES_ONLY_NDARRAYS_BUFFER_ADD},
        description="add copies numpy arrays but stores any other field (a Python list "
                    "observation) as the caller's own object, so changing that list later rewrites"
                    " the stored transition",
        rule="add-copies", kind="mutates-input"),
    Bug("ring_dtype_frozen_by_first_add", LESSON, "test_sample_types",
        {"buffer_class": RING_DTYPE_FROZEN_BY_FIRST_ADD_BUFFER_CLASS, "buffer_add": RING_DTYPE_FROZEN_BY_FIRST_ADD_BUFFER_ADD, "buffer_sample": RING_DTYPE_FROZEN_BY_FIRST_ADD_BUFFER_SAMPLE},
        description="a numpy ring buffer whose arrays take the dtype of the first transition: if "
                    "the first reward is an int (-1), a later reward 0.5 is stored as 0 (and a "
                    "float obs into an int array is truncated)",
        rule="dtypes-follow-stored", kind="protocol"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

NEXT_OBS_SHARED_WITH_NEXT_TRANSITION_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    # obs_tp1 of one transition is obs_t of the next: store each observation only once
    self._storage.append(tuple(np.array(field) for field in (obs_t, action, reward, done)))
    self._newest_next_obs = np.array(obs_tp1)
"""

NEXT_OBS_SHARED_WITH_NEXT_TRANSITION_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self._storage) == 0:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    n = len(self._storage)
    indices = self.rng.integers(n, size=batch_size)
    obs, act, rew, next_obs, done = [], [], [], [], []
    for i in indices:
        o, a, r, d = self._storage[i]
        obs.append(o)
        act.append(a)
        rew.append(r)
        done.append(d)
        next_obs.append(self._storage[i + 1][0] if i + 1 < n else self._newest_next_obs)
    return tuple(np.stack(field) for field in (obs, act, rew, next_obs, done))
"""

BUGS = (*BUGS,
    Bug("next_obs_shared_with_next_transition", LESSON, "test_fifo_eviction",
        {"buffer_add": NEXT_OBS_SHARED_WITH_NEXT_TRANSITION_BUFFER_ADD, "buffer_sample": NEXT_OBS_SHARED_WITH_NEXT_TRANSITION_BUFFER_SAMPLE},
        also_fails=("test_no_aliasing", "test_uniform_sampling"),
        description="memory-saving buffer storing each observation once: a transition's next observation is read from the obs_t of the transition stored after it, which is wrong at every episode boundary (it is the next episode's start state)",
        rule="transition-intact", kind="wrong-source"),
)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

SAMPLE_EMPTY_RELIES_ON_NUMPY_ERROR_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    # an empty buffer: numpy refuses integers(0) with a ValueError itself
    indices = self.rng.integers(len(self._storage), size=batch_size)
    batch = [self._storage[i] for i in indices]
    return tuple(np.stack(field) for field in zip(*batch))
"""

BUGS = (*BUGS,
    Bug("sample_empty_relies_on_numpy_error", LESSON, "test_sample_errors",
        {"buffer_sample": SAMPLE_EMPTY_RELIES_ON_NUMPY_ERROR_BUFFER_SAMPLE},
        description="no empty check: rng.integers(0) raises numpy's ValueError('high <= 0'), a ValueError whose message says nothing about an empty buffer",
        rule="empty-sample-raises", kind="accidental-refusal"),
)


# --- blind round 8: wrong answers written from the lesson text alone ----------------

SAMPLE_CACHE_KEYED_ON_LEN_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    # stack the storage only when it changed, not at every call
    if getattr(self, "_stacked_len", None) != len(self._storage):
        self._stacked = tuple(np.stack(field) for field in zip(*self._storage))
        self._stacked_len = len(self._storage)
    indices = self.rng.integers(len(self._storage), size=batch_size)
    return tuple(field[indices] for field in self._stacked)  # fancy indexing copies
"""

BUGS = (*BUGS,
    Bug("sample_cache_keyed_on_len", LESSON, "test_fifo_eviction",
        {"buffer_sample": SAMPLE_CACHE_KEYED_ON_LEN_BUFFER_SAMPLE},
        description="sample stacks the storage once and reuses the stacked arrays while len is unchanged: once the buffer is full len stays at size, so later samples keep drawing from the snapshot (evicted transitions, never the new ones)",
        rule="fifo-drops-oldest", kind="after-wrap"),
)


# --- blind round 10: wrong answers written from the lesson text alone ----------------

LOOP_DONE_EXCLUDES_TRUNCATION_PLAY_AND_TRAIN_WITH_REPLAY = """\
#| export
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a batch replayed from ``replay``.

    Returns the episode's total reward.
    \"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        done = bool(terminated) and not truncated  # a time-out is not a real end
        if replay is not None:
            replay.add(state, action, reward, next_state, done)
            batch = replay.sample(replay_batch_size)
            agent.update(state, action, reward, next_state, done)
            for transition in zip(*batch):
                agent.update(*transition)
        else:
            agent.update(state, action, reward, next_state, done)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("loop_done_excludes_truncation", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_DONE_EXCLUDES_TRUNCATION_PLAY_AND_TRAIN_WITH_REPLAY},
        description="written-out loop with done = terminated and not truncated: a goal reached on the time limit's last step is stored (and updated) as not done, so it bootstraps",
        rule="done-is-terminated", kind="past-terminal"),
)


# --- blind round 13: wrong answers written from the lesson text alone ----------------

ADD_SHALLOW_COPIES_LISTS_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    import copy
    # copy every field (arrays, lists) so the caller can reuse its objects
    self._storage.append(tuple(copy.copy(field) for field in
                               (obs_t, action, reward, obs_tp1, done)))
"""

LOOP_EXPLORES_WITH_ACTION_SPACE_PLAY_AND_TRAIN_WITH_REPLAY = """\
#| export
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a batch replayed from ``replay``.

    Returns the episode's total reward.
    \"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        if np.random.random() < agent.epsilon:
            action = env.action_space.sample()  # explore
        else:
            action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        if replay is not None:
            replay.add(state, action, reward, next_state, terminated)
            batch = replay.sample(replay_batch_size)
            agent.update(state, action, reward, next_state, terminated)
            for row in zip(*batch):
                agent.update(*row)
        else:
            agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("add_shallow_copies_lists", LESSON, "test_no_aliasing",
        {"buffer_add": ADD_SHALLOW_COPIES_LISTS_BUFFER_ADD},
        description="add stores copy.copy(field): arrays are copied, but a list observation (e.g. a list of frames) is copied shallowly, so the stored list holds the caller's own arrays and changing them rewrites the past",
        rule="add-copies", kind="mutates-input"),
    Bug("loop_explores_with_action_space", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_EXPLORES_WITH_ACTION_SPACE_PLAY_AND_TRAIN_WITH_REPLAY},
        description="written-out loop that explores itself: with probability agent.epsilon it plays env.action_space.sample() instead of asking the agent, so the agent's action is overridden (double exploration) and the env's action space is used",
        rule="plays-as-lesson-01", kind="protocol"),
)


# --- blind round 14: wrong answers written from the lesson text alone ----------------

EVICTS_LOWEST_REWARD_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    transition = tuple(np.array(field) for field in (obs_t, action, reward, obs_tp1, done))
    if len(self._storage) == self.size:
        # keep the lucky transitions: make room by dropping the least rewarding one
        worst = min(range(len(self._storage)), key=lambda i: float(self._storage[i][2]))
        del self._storage[worst]
    self._storage.append(transition)
"""

SAMPLE_GROUPS_REPEATED_ROWS_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self._storage) == 0:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    indices = self.rng.integers(len(self._storage), size=batch_size)
    counts = {}  # each drawn transition once, with how often it was drawn
    for i in indices.tolist():
        counts[i] = counts.get(i, 0) + 1
    rows = []
    for i, count in counts.items():
        rows.extend([self._storage[i]] * count)
    return tuple(np.stack(column) for column in zip(*rows))
"""

BUGS = (*BUGS,
    Bug("evicts_lowest_reward", LESSON, "test_fifo_eviction",
        {"buffer_add": EVICTS_LOWEST_REWARD_BUFFER_ADD},
        description="when full, drops the stored transition with the smallest reward (the oldest of those) to keep the rare rewarding ones: FIFO only while rewards never decrease",
        rule="fifo-drops-oldest", kind="wrong-source"),
    Bug("sample_groups_repeated_rows", LESSON, "test_uniform_sampling",
        {"buffer_sample": SAMPLE_GROUPS_REPEATED_ROWS_BUFFER_SAMPLE},
        description="draws uniform indices, then fetches each distinct transition once (deque indexing is O(n)) and repeats it as often as drawn: repeats come out next to each other, so rows are not independent",
        rule="sample-uniform", kind="wrong-distribution"),
)


# --- blind round 15: wrong answers written from the lesson text alone ----------------

RNG_SPAWNED_CHILD_OF_SEED_BUFFER_CLASS = """\
#| export
from collections import deque

import numpy as np

from course.with_update import WithUpdate
from qlearning import play_and_train


class ReplayBuffer:
    \"\"\"A FIFO store of transitions (obs_t, action, reward, obs_tp1, done).

    Holds at most ``size`` transitions, dropping the oldest first. ``seed`` seeds the
    buffer's own generator, ``self.rng``, which ``sample`` draws from.
    \"\"\"

    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._storage = deque(maxlen=int(size))
        # an independent child stream of the seed, as numpy recommends for separate streams
        self.rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])

    def __len__(self):
        \"\"\"The number of transitions stored now (never more than ``size``).\"\"\"
        return len(self._storage)
"""

RNG_MADE_ON_FIRST_SAMPLE_BUFFER_CLASS = """\
#| export
from collections import deque

import numpy as np

from course.with_update import WithUpdate
from qlearning import play_and_train


class ReplayBuffer:
    \"\"\"A FIFO store of transitions (obs_t, action, reward, obs_tp1, done).

    Holds at most ``size`` transitions, dropping the oldest first. ``seed`` seeds the
    buffer's own generator, ``self.rng``, which ``sample`` draws from.
    \"\"\"

    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self.seed = seed
        self._storage = deque(maxlen=int(size))
        self.rng = None  # made on the first sample: no generator for a buffer never sampled

    def __len__(self):
        \"\"\"The number of transitions stored now (never more than ``size``).\"\"\"
        return len(self._storage)
"""

RNG_MADE_ON_FIRST_SAMPLE_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    if self.rng is None:
        self.rng = np.random.default_rng(self.seed)
    indices = self.rng.integers(len(self._storage), size=batch_size)
    batch = [self._storage[i] for i in indices]
    return tuple(np.stack(field) for field in zip(*batch))
"""

LOOP_CHECKS_T_MAX_AFTER_STEP_PLAY_AND_TRAIN_WITH_REPLAY = """\
#| export
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a batch replayed from ``replay``.

    Returns the episode's total reward.
    \"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    steps = 0
    while True:
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        if replay is not None:
            replay.add(state, action, reward, next_state, terminated)
            batch = replay.sample(replay_batch_size)
        agent.update(state, action, reward, next_state, terminated)
        if replay is not None:
            for row in zip(*batch):
                agent.update(*row)
        total_reward += reward
        state = next_state
        steps += 1
        if terminated or truncated or steps >= t_max:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("rng_spawned_child_of_seed", LESSON, "test_uniform_sampling",
        {"buffer_class": RNG_SPAWNED_CHILD_OF_SEED_BUFFER_CLASS},
        description="self.rng = default_rng(SeedSequence(seed).spawn(1)[0]): seeded and reproducible, but a different stream from default_rng(seed), so the batches of a seeded buffer are not the ones its seed gives",
        rule="own-generator", kind="global-generator"),
    Bug("rng_made_on_first_sample", LESSON, "test_uniform_sampling",
        {"buffer_class": RNG_MADE_ON_FIRST_SAMPLE_BUFFER_CLASS, "buffer_sample": RNG_MADE_ON_FIRST_SAMPLE_BUFFER_SAMPLE},
        description="__init__ sets self.rng = None and sample makes default_rng(self.seed) on its first call: a new buffer has no generator (buffer.rng is None)",
        rule="own-generator", kind="global-generator"),
    Bug("loop_checks_t_max_after_step", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_CHECKS_T_MAX_AFTER_STEP_PLAY_AND_TRAIN_WITH_REPLAY},
        description="while True with steps >= t_max tested after each step: t_max=0 still plays (stores, samples and updates) one step",
        rule="at-most-t-max", kind="boundary"),
)


# --- blind round 16: wrong answers written from the lesson text alone ----------------

SAMPLE_CHANNELS_FIRST_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    indices = self.rng.integers(len(self._storage), size=batch_size)
    batch = [self._storage[i] for i in indices]
    fields = [np.stack(field) for field in zip(*batch)]
    for k in (0, 3):  # image observations as (batch, channels, height, width) for conv nets
        if fields[k].ndim == 4:
            fields[k] = np.ascontiguousarray(fields[k].transpose(0, 3, 1, 2))
    return tuple(fields)
"""

BUGS = (*BUGS,
    Bug("sample_channels_first", LESSON, "test_sample_types",
        {"buffer_sample": SAMPLE_CHANNELS_FIRST_BUFFER_SAMPLE},
        description="observations with 3 axes (H, W, C) come back as (batch, C, H, W), as PyTorch convolutions want: right for Taxi, CartPole and 2-D frames, wrong for colour images",
        rule="batch-shape", kind="wrong-formula"),
)


# --- blind round 17: wrong answers written from the lesson text alone ----------------

SAMPLE_BATCH_OF_ONE_RETURNS_VIEWS_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self._storage) == 0:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    if batch_size == 1:
        # one row: nothing to stack, just give each field its batch axis
        row = self._storage[self.rng.integers(len(self._storage))]
        return tuple(field[np.newaxis] for field in row)
    indices = self.rng.integers(len(self._storage), size=batch_size)
    rows = [self._storage[i] for i in indices]
    return tuple(np.stack(column) for column in zip(*rows))
"""

ADD_REUSES_COPY_BY_IDENTITY_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    # consecutive transitions share an observation (this obs_t is the previous
    # obs_tp1): keep a single copy of it instead of two
    if self._storage and obs_t is getattr(self, "_previous_obs_tp1", None):
        obs_copy = self._storage[-1][3]
    else:
        obs_copy = np.array(obs_t)
    self._previous_obs_tp1 = obs_tp1
    self._storage.append((obs_copy, np.array(action), np.array(reward), np.array(obs_tp1),
                          np.array(done)))
"""

STORES_FLOAT_VECTORS_AS_FLOAT16_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    fields = []
    for field in (obs_t, action, reward, obs_tp1, done):
        array = np.array(field)
        if array.dtype.kind == "f" and array.ndim > 0:
            # observation vectors and frames in half precision: half the memory
            fields.append((array.astype(np.float16), array.dtype))
        else:
            fields.append((array, array.dtype))
    self._storage.append(tuple(fields))
"""

STORES_FLOAT_VECTORS_AS_FLOAT16_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self._storage) == 0:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    indices = self.rng.integers(len(self._storage), size=batch_size)
    rows = [self._storage[i] for i in indices]
    batch = []
    for column in zip(*rows):
        arrays, dtypes = zip(*column)
        batch.append(np.stack(arrays).astype(np.result_type(*dtypes)))  # back to stored dtype
    return tuple(batch)
"""

BUGS = (*BUGS,
    Bug("sample_batch_of_one_returns_views", LESSON, "test_no_aliasing",
        {"buffer_sample": SAMPLE_BATCH_OF_ONE_RETURNS_VIEWS_BUFFER_SAMPLE},
        description="sample(1) skips np.stack and returns field[np.newaxis] of the stored row: writable views, so changing the batch of one rewrites the stored transition (batches of 2 or more are fresh arrays)",
        rule="sample-new-arrays", kind="mutates-input"),
    Bug("add_reuses_copy_by_identity", LESSON, "test_no_aliasing",
        {"buffer_add": ADD_REUSES_COPY_BY_IDENTITY_BUFFER_ADD},
        description="memory saving: when obs_t is the very object passed as the previous obs_tp1, add reuses the copy made then; if the caller refilled that array in place meanwhile, the new transition is stored with the old observation",
        rule="add-copies", kind="mutates-input"),
    Bug("stores_float_vectors_as_float16", LESSON, "test_sample_types",
        {"buffer_add": STORES_FLOAT_VECTORS_AS_FLOAT16_BUFFER_ADD, "buffer_sample": STORES_FLOAT_VECTORS_AS_FLOAT16_BUFFER_SAMPLE},
        description="add keeps float arrays of one or more axes as float16 (half the memory) and sample casts them back to their dtype: the dtype is right, but the values are rounded to 3 significant digits, so rows are not the stored transitions",
        rule="dtypes-follow-stored", kind="wrong-formula"),
)


# --- blind round 19: wrong answers written from the lesson text alone ----------------

NUMPY_SEED_IGNORED_BUFFER_CLASS = """\
#| export
from collections import deque

import numpy as np

from course.with_update import WithUpdate
from qlearning import play_and_train


class ReplayBuffer:
    \"\"\"A FIFO store of transitions (obs_t, action, reward, obs_tp1, done).

    Holds at most ``size`` transitions, dropping the oldest first. ``seed`` seeds the
    buffer's own generator, ``self.rng``, which ``sample`` draws from.
    \"\"\"

    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._storage = deque(maxlen=int(size))  # a full deque drops from the left on append
        self.rng = np.random.default_rng(seed if isinstance(seed, int) else None)

    def __len__(self):
        \"\"\"The number of transitions stored now (never more than ``size``).\"\"\"
        return len(self._storage)
"""

BUGS = (*BUGS,
    Bug("numpy_seed_ignored", LESSON, "test_uniform_sampling",
        {"buffer_class": NUMPY_SEED_IGNORED_BUFFER_CLASS},
        description="seed used only when isinstance(seed, int): a seed given as np.int64 "
                    "gives an unseeded generator",
        rule="numpy-scalars", kind="numpy-scalars"),
)


# --- blind round 20: wrong answers written from the lesson text alone ----------------

LOOP_REJECTS_NUMPY_COUNTS_PLAY_AND_TRAIN_WITH_REPLAY = """\
#| export
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a batch replayed from ``replay``.

    Returns the episode's total reward.
    \"\"\"
    for name, value in (("replay_batch_size", replay_batch_size), ("t_max", t_max)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative whole number, got {value!r}")
    if replay is None:
        return play_and_train(env, agent, t_max)

    def learn(state, action, reward, next_state, terminated):
        new = (state, action, reward, next_state, terminated)
        replay.add(*new)
        for transition in [new, *zip(*replay.sample(replay_batch_size))]:
            agent.update(*transition)

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""

BUGS = (*BUGS,
    Bug("loop_rejects_numpy_counts", LESSON, "test_replay_loop",
        {"play_and_train_with_replay": LOOP_REJECTS_NUMPY_COUNTS_PLAY_AND_TRAIN_WITH_REPLAY},
        description='the loop validates replay_batch_size and t_max with isinstance(..., int): np.int64 values (8 taken from a numpy array of settings) raise ValueError',
        rule="numpy-scalars", kind='numpy-scalars'),
)


# --- blind round 21 --------------------------------------------------------------------

# The size handed to deque(maxlen=...) as it came: deque takes Python's ints only.
CLASS_KEEPS_NUMPY_SIZE = _edit("buffer_class", (
    "        if isinstance(size, np.integer):\n"
    "            size = int(size)  # deque(maxlen=...) takes Python's ints only\n", ""))

BUGS = (*BUGS,
    Bug("class_keeps_numpy_size", LESSON, "test_len_never_above_capacity",
        {"buffer_class": CLASS_KEEPS_NUMPY_SIZE},
        also_fails=("test_fifo_eviction", "test_sample_types", "test_no_aliasing",
                    "test_uniform_sampling", "test_with_replacement", "test_sample_errors"),
        description="the size goes straight to deque(maxlen=size): ReplayBuffer(np.int64(n)) "
                    "raises TypeError (deque takes Python's ints only)",
        rule="numpy-scalars", kind="numpy-scalars"),
)


# --- blind round 25 --------------------------------------------------------------------

# numpy's global generator seeded beside the buffer's own, "for reproducible runs": batches
# still come from self.rng, but np.random.seed(None) reseeds numpy's global generator from
# fresh entropy, so an unseeded buffer moves (and a seeded one resets) np.random's state.
CLASS_RESEEDS_NP_RANDOM = _edit("buffer_class", (
    "        self.rng = np.random.default_rng(seed)\n",
    "        self.rng = np.random.default_rng(seed)\n"
    "        np.random.seed(seed)  # numpy's generator too, for reproducible runs\n"))

BUGS = (*BUGS,
    # blind round 25
    Bug("class_reseeds_np_random", LESSON, "test_uniform_sampling",
        {"buffer_class": CLASS_RESEEDS_NP_RANDOM},
        description="__init__ also calls np.random.seed(seed), 'for reproducible runs': the "
                    "batches come from self.rng, but an unseeded buffer reseeds numpy's "
                    "global generator from fresh entropy (and a seeded one resets it), so "
                    "making a buffer changes what np.random draws everywhere else",
        rule="own-generator", kind="global-generator"),
)


# --- blind round 26 --------------------------------------------------------------------

# Only the observations copied: action, reward and done kept with np.asarray, which hands
# back the caller's own array when given one (a 0-d or 1-d action: a continuous action).
ADD_COPIES_ONLY_OBSERVATIONS = '''\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    """Store one transition, evicting the oldest if the buffer is full. Copies arrays."""
    # observations are the arrays environments reuse: copy them; the rest are numbers
    self._storage.append((np.array(obs_t), np.asarray(action), np.asarray(reward),
                          np.array(obs_tp1), np.asarray(done)))
'''

BUGS = (*BUGS,
    # blind round 26
    Bug("add_copies_only_observations", LESSON, "test_no_aliasing",
        {"buffer_add": ADD_COPIES_ONLY_OBSERVATIONS},
        description="add copies obs_t and obs_tp1 with np.array but wraps action, reward and "
                    "done with np.asarray: an action given as an array (a continuous "
                    "action) is stored by reference, so changing it later rewrites the past",
        rule="add-copies", kind="mutates-input"),
)
