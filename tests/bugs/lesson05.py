"""Buggy answers to lesson 05 (combined replay and the CartPole discretiser)."""

import functools

from . import Bug, edited, edited_text, edits_of

LESSON = "05_combined_replay"


_edit = edits_of(LESSON)

# The buffer's sample and the loop written out in full rather than built on lesson 02's
# sample and lesson 01's loop: correct (correct_variants.py), and what most bugs below
# are edits of.
WRITTEN_OUT_BUFFER = '''\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    """Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored)."""

    def sample(self, batch_size):
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if not self._storage:
            raise ValueError("cannot sample from an empty replay buffer: add transitions first")
        older = len(self._storage) - 1  # the newest is self._storage[-1]
        rows = [self._storage[-1]]
        if older:
            rows += [self._storage[i] for i in self.rng.integers(older, size=batch_size - 1)]
        return tuple(np.stack(field) for field in zip(*rows))
'''

WRITTEN_OUT_LOOP = '''\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    """Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward."""
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        replay.add(state, action, reward, next_state, terminated)
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
'''

_buffer_edit = functools.partial(edited_text, "lesson 05's written-out buffer",
                                 WRITTEN_OUT_BUFFER)
_loop_edit = functools.partial(edited_text, "lesson 05's written-out loop", WRITTEN_OUT_LOOP)


_REST = "rows += [self._storage[i] for i in self.rng.integers(older, size=batch_size - 1)]"

NEWEST_CAN_COME_TWICE = _buffer_edit((
    _REST, "rows += [self._storage[i] for i in\n"
           "                     self.rng.integers(older + 1, size=batch_size - 1)]"))

PLAIN_UNIFORM = _buffer_edit((
    """\
        rows = [self._storage[-1]]
        if older:
            """ + _REST, """\
        rows = [self._storage[i] for i in self.rng.integers(older + 1, size=batch_size)]"""))

ONE_ROW_TOO_MANY = _buffer_edit((
    "self.rng.integers(older, size=batch_size - 1)", "self.rng.integers(older, size=batch_size)"))

REST_FROM_THE_RECENT_HALF = _buffer_edit((
    "self.rng.integers(older, size=batch_size - 1)",
    "self.rng.integers(older // 2, older, size=batch_size - 1)"))

COPIES_THE_ONLY_TRANSITION = _buffer_edit((
    """\
        rows = [self._storage[-1]]
        if older:
            """ + _REST, """\
        rows = [self._storage[-1]]
        if older:
            """ + _REST + """
        else:
            rows *= batch_size  # fill the batch"""))

LOOP_ALSO_LEARNS_ONLINE = _loop_edit((
    "        replay.add(state, action, reward, next_state, terminated)\n",
    "        agent.update(state, action, reward, next_state, terminated)\n"
    "        replay.add(state, action, reward, next_state, terminated)\n"))

# The same mistake in the loop that reuses lesson 01's: its learning step updates online.
REUSED_LOOP_ALSO_LEARNS_ONLINE = _edit("play_and_train_from_replay", (
    "        replay.add(state, action, reward, next_state, terminated)\n",
    "        agent.update(state, action, reward, next_state, terminated)\n"
    "        replay.add(state, action, reward, next_state, terminated)\n"))

DISCRETIZE_WITHOUT_CLIPPING = _edit("discretize", (
    "clipped = np.clip(np.asarray(observation, dtype=np.float64), lows, highs)",
    "clipped = np.asarray(observation, dtype=np.float64)  # the top is capped below"))

DISCRETIZE_TOP_EDGE_OVERFLOWS = _edit("discretize", (
    "cells = np.minimum((fractions * bins).astype(np.int64), bins - 1)",
    "cells = (fractions * bins).astype(np.int64)"))

DISCRETIZE_COLUMN_MAJOR = _edit("discretize", (
    "return int(np.ravel_multi_index(cells, bins))",
    "return int(np.ravel_multi_index(cells, bins, order=\"F\"))"))

DISCRETIZE_ROUNDS = _edit("discretize", (
    "cells = np.minimum((fractions * bins).astype(np.int64), bins - 1)",
    "cells = np.minimum(np.round(fractions * bins).astype(np.int64), bins - 1)"))


# --- boundaries (found by mutation testing) ---------------------------------------------

CER_REJECTS_BATCH_OF_ONE = _buffer_edit(("if batch_size <= 0:", "if batch_size <= 1:"))

REPLAY_ONLY_LOOP_IGNORES_TRUNCATION = _loop_edit((
    "if terminated or truncated:", "if terminated:"))

REPLAY_ONLY_LOOP_NEVER_STOPS_UNLESS_TERMINATED = _loop_edit(
    ("for _ in range(t_max):", "while True:  # ignores t_max"),
    ("if terminated or truncated:", "if terminated:"))

REPLAY_ONLY_LOOP_RETURNS_THE_LAST_REWARD = _loop_edit((
    "total_reward += reward", "total_reward = reward"))


# --- rules the text states that no bug broke before (issue 22) --------------------------

_OLDER = "        older = len(self._storage) - 1  # the newest is self._storage[-1]\n"

KEEPS_EVERY_TRANSITION = _buffer_edit(
    ("    def sample(self, batch_size):\n",
     "    def add(self, *transition):\n"
     "        super().add(*transition)\n"
     "        # every transition seen, for sampling (the deque forgets the old ones)\n"
     "        self._history = getattr(self, \"_history\", []) + [self._storage[-1]]\n"
     "\n"
     "    def sample(self, batch_size):\n"),
    ("if not self._storage:", "if not getattr(self, \"_history\", []):"),
    (_OLDER, "        older = len(self._history) - 1\n"),
    ("rows = [self._storage[-1]]", "rows = [self._history[-1]]"),
    (_REST, "rows += [self._history[i] for i in self.rng.integers(older, size=batch_size - 1)]"))

PUTS_THE_NEWEST_BACK_FIRST = _edit("cer_buffer", (
    "self._storage.append(newest)  # back in its place, whatever happened",
    "self._storage.appendleft(newest)  # back in the deque"))

REST_WITHOUT_REPLACEMENT = _buffer_edit((
    "self.rng.integers(older, size=batch_size - 1)",
    "self.rng.choice(older, size=batch_size - 1, replace=False)"))

REST_FROM_THE_GLOBAL_GENERATOR = _buffer_edit((
    "self.rng.integers(older, size=batch_size - 1)",
    "np.random.randint(older, size=batch_size - 1)"))

BATCH_OF_ONE_AS_VIEWS = _buffer_edit((
    _OLDER, """        if batch_size == 1:  # just the newest: no stacking needed
            return tuple(np.expand_dims(field, 0) for field in self._storage[-1])
""" + _OLDER))

NO_EMPTY_CHECK = _buffer_edit((
    """        if not self._storage:
            raise ValueError("cannot sample from an empty replay buffer: add transitions first")
""", ""))

NO_BATCH_SIZE_CHECK = _buffer_edit((
    """        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
""", ""))

_STORE = "        replay.add(state, action, reward, next_state, terminated)\n"
_LEARN = """        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)
"""

REPLAY_ONLY_LOOP_ONE_STEP_PAST_T_MAX = _loop_edit((
    "for _ in range(t_max):", "for _ in range(t_max + 1):"))

LOOP_STORES_ONLY_NON_TERMINAL = _loop_edit((
    _STORE, "        if not terminated:  # nothing follows the last step\n    " + _STORE))

REPLAY_ONLY_LOOP_STORES_TRUNCATION_AS_DONE = _loop_edit((
    "replay.add(state, action, reward, next_state, terminated)",
    "replay.add(state, action, reward, next_state, terminated or truncated)"))

LOOP_SAMPLES_BEFORE_STORING = _loop_edit((_STORE + _LEARN, _LEARN + _STORE))

LOOP_WAITS_FOR_A_FULL_BATCH = _loop_edit((
    _LEARN, "        if len(replay) >= batch_size:  # warm up first, as DQN does\n"
            "            for transition in zip(*replay.sample(batch_size)):\n"
            "                agent.update(*transition)\n"))

DISCRETIZE_EDGE_TO_THE_BIN_BELOW = _edit("discretize", (
    "cells = np.minimum((fractions * bins).astype(np.int64), bins - 1)",
    "cells = np.maximum(np.ceil(fractions * bins).astype(np.int64) - 1, 0)"))

DISCRETIZE_RETURNS_THE_CELLS = _edit("discretize", (
    "return int(np.ravel_multi_index(cells, bins))", "return tuple(int(c) for c in cells)"))


BUGS = [
    Bug("cer_newest_can_come_twice", LESSON, "test_cer_newest_exactly_once",
        {"cer_buffer": NEWEST_CAN_COME_TWICE}, also_fails=("test_cer_rest_uniform",),
        rule="newest-exactly-once", kind="replacement",
        description="the rest of the batch is drawn from all transitions, the newest included"),
    Bug("cer_is_plain_uniform", LESSON, "test_cer_learning", {"cer_buffer": PLAIN_UNIFORM},
        also_fails=("test_cer_newest_exactly_once", "test_cer_rest_uniform",
                    "test_cer_single_transition"),
        rule="cer-beats-uniform", kind="wrong-distribution",
        description="no newest transition: uniform replay, which collapses with a big buffer"),
    Bug("cer_one_row_too_many", LESSON, "test_cer_newest_exactly_once",
        {"cer_buffer": ONE_ROW_TOO_MANY},  # sample(1) returns two rows
        also_fails=("test_cer_rest_uniform", "test_cer_single_transition"),
        rule="batch-size-rows", kind="boundary",
        description="the newest plus batch_size others: batches one row too big"),
    Bug("cer_rest_from_the_recent_half", LESSON, "test_cer_rest_uniform",
        {"cer_buffer": REST_FROM_THE_RECENT_HALF},
        also_fails=("test_cer_single_transition",),
        rule="rest-uniform-over-older", kind="wrong-distribution",
        description="the other rows come from the newer half only"),
    Bug("cer_copies_the_only_transition", LESSON, "test_cer_single_transition",
        {"cer_buffer": COPIES_THE_ONLY_TRANSITION},
        rule="only-newest-stored", kind="boundary",
        description="with one transition stored, the batch is batch_size copies of it"),
    Bug("loop_also_learns_online", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_ALSO_LEARNS_ONLINE},
        rule="learn-only-from-batch", kind="protocol",
        description="an extra update on each new transition besides the batch"),
    Bug("reused_loop_also_learns_online", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REUSED_LOOP_ALSO_LEARNS_ONLINE},
        rule="learn-only-from-batch", kind="protocol",
        description="lesson 01's loop reused, with a learning step that also updates on "
                    "the new transition"),
    Bug("discretize_without_clipping", LESSON, "test_discretize_clipping",
        {"discretize": DISCRETIZE_WITHOUT_CLIPPING}, also_fails=("test_discretize_bins",),
        rule="clip-into-range", kind="boundary",
        description="values past the bounds are binned as if the range went on"),
    Bug("discretize_top_edge_overflows", LESSON, "test_discretize_edges",
        {"discretize": DISCRETIZE_TOP_EDGE_OVERFLOWS},
        also_fails=("test_discretize_clipping", "test_discretize_bins"),
        rule="upper-bound-last-bin", kind="boundary",
        description="the upper bound falls into a bin past the last"),
    Bug("discretize_column_major", LESSON, "test_discretize_bins",
        {"discretize": DISCRETIZE_COLUMN_MAJOR},
        also_fails=("test_discretize_edges", "test_discretize_clipping"),
        rule="row-major-cells", kind="wrong-formula",
        description="cells numbered with the first dimension fastest"),
    Bug("discretize_rounds", LESSON, "test_discretize_bins", {"discretize": DISCRETIZE_ROUNDS},
        also_fails=("test_discretize_clipping", "test_discretize_edges"),
        rule="equal-bins", kind="wrong-formula",
        description="rounds to the nearest bin instead of flooring"),
    Bug("cer_rejects_batch_of_one", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_REJECTS_BATCH_OF_ONE},
        rule="batch-of-one-is-newest", kind="boundary",
        description="the error guard is off by one: sample(1) raises ValueError"),
    Bug("replay_only_loop_never_stops_unless_terminated", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REPLAY_ONLY_LOOP_NEVER_STOPS_UNLESS_TERMINATED},
        rule="ends-with-episode", kind="past-terminal",
        description="while True, stopping only when terminated: an episode that is "
                    "truncated never ends (the corridor stops it past its time limit)"),
    Bug("replay_only_loop_ignores_truncation", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REPLAY_ONLY_LOOP_IGNORES_TRUNCATION},
        rule="ends-with-episode", kind="past-terminal",
        description="stops only when terminated: a truncated episode runs on to t_max"),
    Bug("replay_only_loop_returns_the_last_reward", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REPLAY_ONLY_LOOP_RETURNS_THE_LAST_REWARD},
        rule="returns-total-reward", kind="wrong-formula",
        description="total_reward = reward: returns the last step's reward, not the sum"),
    Bug("cer_keeps_every_transition", LESSON, "test_cer_newest_exactly_once",
        {"cer_buffer": KEEPS_EVERY_TRANSITION}, rule="only-stored", kind="after-wrap",
        also_fails=("test_cer_rest_uniform",
                    "test_cer_single_transition"),  # CombinedReplayBuffer(1) too
        description="add also keeps its own list of every transition, which sample draws "
                    "from: evicted transitions come back once the buffer is full"),
    Bug("cer_puts_the_newest_back_first", LESSON, "test_cer_newest_exactly_once",
        {"cer_buffer": PUTS_THE_NEWEST_BACK_FIRST}, rule="sample-leaves-buffer",
        kind="mutates-input",
        also_fails=("test_cer_rest_uniform", "test_cer_single_transition"),
        description="the newest is set aside and put back with appendleft: it becomes the "
                    "oldest, and the next batch's newest is the one before"),
    Bug("cer_rest_without_replacement", LESSON, "test_cer_rest_uniform",
        {"cer_buffer": REST_WITHOUT_REPLACEMENT}, rule="rest-with-replacement",
        also_fails=("test_cer_newest_exactly_once", "test_cer_single_transition"),
        kind="replacement",
        description="the other rows drawn with rng.choice(..., replace=False): no repeats, "
                    "and a batch larger than the buffer raises"),
    Bug("cer_rest_from_the_global_generator", LESSON, "test_cer_rest_uniform",
        {"cer_buffer": REST_FROM_THE_GLOBAL_GENERATOR}, rule="own-generator",
        kind="global-generator",
        description="np.random.randint for the other rows, not the buffer's self.rng"),
    Bug("cer_batch_of_one_as_views", LESSON, "test_cer_single_transition",
        {"cer_buffer": BATCH_OF_ONE_AS_VIEWS}, rule="sample-new-arrays",
        kind="mutates-input",
        description="sample(1) returns np.expand_dims of the stored arrays: views, so a "
                    "learner changing its batch changes the buffer"),
    Bug("cer_empty_raises_index_error", LESSON, "test_cer_single_transition",
        {"cer_buffer": NO_EMPTY_CHECK}, rule="empty-sample-raises", kind="accidental-refusal",
        description="no check for an empty buffer: IndexError from self._storage[-1]"),
    Bug("cer_accepts_bad_batch_sizes", LESSON, "test_cer_single_transition",
        {"cer_buffer": NO_BATCH_SIZE_CHECK}, rule="batch-size-positive", kind="boundary",
        description="no check of batch_size: with one transition stored, sample(0) returns "
                    "the newest"),
    Bug("replay_only_loop_one_step_past_t_max", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REPLAY_ONLY_LOOP_ONE_STEP_PAST_T_MAX},
        rule="at-most-t-max", kind="boundary",
        description="range(t_max + 1): one step more than t_max allows"),
    Bug("replay_only_loop_stores_only_non_terminal", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_STORES_ONLY_NON_TERMINAL},
        rule="store-every-step", kind="past-terminal",
        description="the terminal transition is not stored, so its reward is never learned"),
    Bug("replay_only_loop_stores_truncation_as_done", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REPLAY_ONLY_LOOP_STORES_TRUNCATION_AS_DONE},
        rule="done-is-terminated", kind="past-terminal",
        description="replay.add gets terminated or truncated"),
    Bug("replay_only_loop_samples_before_storing", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_SAMPLES_BEFORE_STORING},
        rule="store-then-sample", kind="protocol",
        description="samples before adding: the first step samples an empty buffer"),
    Bug("replay_only_loop_waits_for_a_full_batch", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_WAITS_FOR_A_FULL_BATCH},
        rule="one-batch-per-step", kind="boundary",
        description="no sample until the buffer holds batch_size transitions: the first "
                    "steps learn nothing"),
    Bug("discretize_edge_to_the_bin_below", LESSON, "test_discretize_edges",
        {"discretize": DISCRETIZE_EDGE_TO_THE_BIN_BELOW}, rule="inner-edge-bin-above",
        also_fails=("test_discretize_bins",),
        kind="boundary",
        description="ceil - 1: a value on an inner edge lands in the bin below it"),
    Bug("discretize_returns_the_cells", LESSON, "test_discretize_bins",
        {"discretize": DISCRETIZE_RETURNS_THE_CELLS}, rule="result-types", kind="protocol",
        also_fails=("test_discretize_edges", "test_discretize_clipping"),
        description="returns each dimension's bin as a tuple, not the cell's number"),
]

# --- what every call promises (checks.contracts) ------------------------------------------

DISCRETIZE_CLIPS_IN_PLACE = _edit("discretize", (
    "    clipped = np.clip(np.asarray(observation, dtype=np.float64), lows, highs)",
    "    clipped = np.asarray(observation, dtype=np.float64)\n"
    "    np.clip(clipped, lows, highs, out=clipped)  # no copy"))

BUGS = (*BUGS,
    Bug("discretize_clips_in_place", LESSON, "test_discretize_clipping",
        {"discretize": DISCRETIZE_CLIPS_IN_PLACE},
        also_fails=("test_discretize_bins",),
        description="clips a float64 observation in the caller's own array (np.asarray "
                    "does not copy it)",
        rule="inputs-untouched", kind="mutates-input"),
)

LOOP_DECAYS_EPSILON = _edit("play_and_train_from_replay", (
    "    return play_and_train(env, WithUpdate(agent, learn_only_from_replay), t_max)",
    "    total = play_and_train(env, WithUpdate(agent, learn_only_from_replay), t_max)\n"
    "    agent.epsilon *= 0.99  # explore a little less after each episode\n"
    "    return total"))

BUGS = (*BUGS,
    Bug("cer_loop_decays_epsilon", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_DECAYS_EPSILON},
        description="the loop decays agent.epsilon itself, which a loop may only read",
        rule="lent-as-stated", kind="protocol"),
)


# --- blind round 1: wrong answers written from the lesson text alone ----------------

CER_BAD_CALL_LOSES_THE_NEWEST_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if len(self) <= 1:  # empty: lesson 02 refuses; one stored: the newest alone
            return super().sample(min(batch_size, 1))
        newest = self._storage.pop()
        if batch_size == 1:
            self._storage.append(newest)
            return tuple(np.array([field]) for field in newest)
        rest = super().sample(batch_size - 1)  # lesson 02 refuses bad batch sizes
        self._storage.append(newest)
        return tuple(np.concatenate([np.array([field]), others])
                     for field, others in zip(newest, rest))
"""

LOOP_STORES_NEXT_STATE_AS_STATE_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    state, _ = env.reset()
    total_reward = 0.0
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        total_reward += reward
        state = next_state
        replay.add(state, action, reward, next_state, terminated)
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("cer_bad_call_loses_the_newest", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_BAD_CALL_LOSES_THE_NEWEST_CER_BUFFER},
        description="relies on lesson 02's sample(batch_size - 1) to refuse batch_size <= 0, but "
                    "has already popped the newest: the ValueError escapes and the buffer has "
                    "lost its newest transition",
        rule="sample-leaves-buffer", kind="accidental-refusal"),
    Bug("loop_stores_next_state_as_state", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_STORES_NEXT_STATE_AS_STATE_PLAY_AND_TRAIN_FROM_REPLAY},
        description="hand-written loop sets state = next_state before replay.add, so every "
                    "stored transition starts from the state it ends in",
        rule="store-every-step", kind="wrong-source"),
)


# --- blind round 2: wrong answers written from the lesson text alone ----------------

CER_EXCLUDES_COPIES_OF_THE_NEWEST_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)  # lesson 02's ValueError
        newest = self._storage[-1]

        def same(a, b):
            return all(np.array_equal(x, y) for x, y in zip(a, b))

        others = [t for t in self._storage if not same(t, newest)]  # newest exactly once
        rows = [newest]
        if batch_size > 1 and others:
            rows += [others[i] for i in self.rng.integers(len(others), size=batch_size - 1)]
        return tuple(np.stack(fields) for fields in zip(*rows))
"""

CER_REJECTS_NUMPY_BATCH_SIZE_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if not self._storage:
            return super().sample(batch_size)  # lesson 02's ValueError
        newest = self._storage.pop()
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)
        batch = tuple(np.stack([field]) for field in newest)
        if rest is None:
            return batch
        return tuple(np.concatenate(fields) for fields in zip(batch, rest))
"""

CER_SETS_ASIDE_BY_VALUE_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)  # lesson 02's ValueError
        newest = self._storage[-1]
        self._storage.remove(newest)  # set aside while lesson 02's sample draws
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)  # back at the end, as the newest
        batch = tuple(np.stack([field]) for field in newest)
        if rest is None:
            return batch
        return tuple(np.concatenate(fields) for fields in zip(batch, rest))
"""

BUGS = (*BUGS,
    Bug("cer_excludes_copies_of_the_newest", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_EXCLUDES_COPIES_OF_THE_NEWEST_CER_BUFFER},
        also_fails=("test_cer_rest_uniform",),
        description="drops from the pool every stored transition equal to the newest: older "
                    "identical transitions (Taxi's repeated illegal moves) are never drawn, and if"
                    " all stored are equal the batch shrinks to one row",
        rule="rest-uniform-over-older", kind="wrong-source"),
    Bug("cer_rejects_numpy_batch_size", LESSON, "test_cer_newest_exactly_once",
        {"cer_buffer": CER_REJECTS_NUMPY_BATCH_SIZE_CER_BUFFER},
        also_fails=("test_cer_rest_uniform", "test_cer_single_transition"),
        description="validates with isinstance(batch_size, int), so sample(np.int64(8)) raises "
                    "ValueError",
        rule="numpy-scalars", kind="numpy-scalars"),
    Bug("cer_sets_aside_by_value", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_SETS_ASIDE_BY_VALUE_CER_BUFFER},
        description="sets the newest aside with self._storage.remove(newest), which removes the "
                    "first EQUAL transition: when an older copy exists it is that one that goes, "
                    "the newest stays in the pool and is appended a second time",
        rule="sample-leaves-buffer", kind="after-wrap"),
)


# --- blind round 1: wrong answers written from the lesson text alone ----------------

CER_NEWEST_KEPT_FROM_ADD_UNCOPIED_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def add(self, obs_t, action, reward, obs_tp1, done):
        super().add(obs_t, action, reward, obs_tp1, done)
        self._newest = (obs_t, action, reward, obs_tp1, done)  # at hand, O(1)

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)
        newest = self._storage.pop()  # set aside, so that lesson 02's sample draws the rest
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)
        batch = tuple(np.array([field]) for field in self._newest)
        if rest is None:
            return batch
        return tuple(np.concatenate(fields) for fields in zip(batch, rest))
"""

BUGS = (*BUGS,
    Bug("cer_newest_kept_from_add_uncopied", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_NEWEST_KEPT_FROM_ADD_UNCOPIED_CER_BUFFER},
        description="add keeps a reference to the arguments it was given and sample builds the "
                    "newest row from them; if the caller reuses/changes its observation array "
                    "after add, the batch's newest row is not what the buffer stored",
        rule="only-stored", kind="mutates-input"),
)


# --- blind round 3: wrong answers written from the lesson text alone ----------------

CER_APPENDS_FLATTENED_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)
        newest = self._storage.pop()
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)
        if rest is None:
            return tuple(np.array([field]) for field in newest)
        return tuple(np.append(field, new) for field, new in zip(rest, newest))
"""

DISCRETIZE_DIVIDES_BY_BIN_WIDTH_DISCRETIZE = """\
#| export
def discretize(observation, lows, highs, bins):
    \"\"\"The number of the grid cell holding ``observation``: each dimension clipped into
    [low, high] and cut into ``bins`` equal bins (the upper bound in the last one),
    cells numbered row-major, the last dimension fastest.\"\"\"
    lows = np.asarray(lows, dtype=np.float64)
    highs = np.asarray(highs, dtype=np.float64)
    bins = np.asarray(bins)
    width = (highs - lows) / bins  # the width of one bin in each dimension
    clipped = np.clip(np.asarray(observation, dtype=np.float64), lows, highs)
    cells = np.minimum(np.floor((clipped - lows) / width).astype(np.int64), bins - 1)
    return int(np.ravel_multi_index(cells, bins))
"""

BUGS = (*BUGS,
    Bug("cer_appends_flattened", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_APPENDS_FLATTENED_CER_BUFFER},
        description="joins the newest to the drawn rows with np.append(field, new): fine for "
                    "integer states, but vector observations are flattened into one long 1-D array",
        rule="batch-size-rows", kind="protocol"),
    Bug("discretize_divides_by_bin_width", LESSON, "test_discretize_edges",
        {"discretize": DISCRETIZE_DIVIDES_BY_BIN_WIDTH_DISCRETIZE},
        description="computes floor((x - low) / width) with width = (high - low) / bins: rounding "
                    "puts some inner edges (0.3 on [0, 1] in 10 bins) in the bin below",
        rule="inner-edge-bin-above", kind="wrong-formula"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

CER_CASTS_BATCH_TO_FLOAT32_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)
        newest = self._storage.pop()
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)
        batch = tuple(np.stack([field]) for field in newest)
        if rest is not None:
            batch = tuple(np.concatenate(fields) for fields in zip(batch, rest))
        return tuple(field.astype(np.float32) for field in batch)
"""

BUGS = (*BUGS,
    Bug("cer_casts_batch_to_float32", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_CASTS_BATCH_TO_FLOAT32_CER_BUFFER},
        description="casts every field to float32 as a DQN would feed it: integer actions and states become floats, done flags become 0.0/1.0, float64 rewards lose precision",
        rule="batch-size-rows", kind="protocol"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

DISCRETIZE_CLIPS_THE_BIN_NUMBERS_DISCRETIZE = """\
#| export
def discretize(observation, lows, highs, bins):
    \"\"\"The number of the grid cell holding ``observation``: each dimension clipped into
    [low, high] and cut into ``bins`` equal bins (the upper bound in the last one),
    cells numbered row-major, the last dimension fastest.\"\"\"

    lows, highs, bins = np.asarray(lows), np.asarray(highs), np.asarray(bins)
    x = np.asarray(observation, dtype=np.float64)
    cells = np.floor((x - lows) / (highs - lows) * bins).astype(np.int64)
    return int(np.ravel_multi_index(cells, bins, mode="clip"))  # out of range -> edge bins
"""

BUGS = (*BUGS,
    Bug("discretize_clips_the_bin_numbers", LESSON, "test_discretize_clipping",
        {"discretize": DISCRETIZE_CLIPS_THE_BIN_NUMBERS_DISCRETIZE},
        description="computes the raw bin numbers and lets np.ravel_multi_index(mode='clip') clip them; a value far above high (1e20, inf) overflows int64 to a negative number and lands in the FIRST bin",
        rule="clip-into-range", kind="boundary"),
)


# --- blind round 6: wrong answers written from the lesson text alone ----------------

DISCRETIZE_EPSILON_BELOW_HIGH_DISCRETIZE = """\
#| export
def discretize(observation, lows, highs, bins):
    \"\"\"The number of the grid cell holding ``observation``: each dimension clipped into
    [low, high] and cut into ``bins`` equal bins (the upper bound in the last one),
    cells numbered row-major, the last dimension fastest.\"\"\"
    lows, highs, bins = np.asarray(lows), np.asarray(highs), np.asarray(bins)
    # keep x just below high, so that the upper bound falls in the last bin
    clipped = np.clip(np.asarray(observation, dtype=np.float64), lows, highs - 1e-9)
    cells = np.floor((clipped - lows) / (highs - lows) * bins).astype(np.int64)
    return int(np.ravel_multi_index(cells, bins))
"""

BUGS = (*BUGS,
    Bug("discretize_epsilon_below_high", LESSON, "test_discretize_edges",
        {"discretize": DISCRETIZE_EPSILON_BELOW_HIGH_DISCRETIZE},
        description="clips into [low, high - 1e-9] instead of capping the bin: with large bounds (high = 1e9) high - 1e-9 == high and the upper bound overflows (ValueError); with tiny ranges the top bins are never reached",
        rule="inner-edge-bin-above", kind="boundary"),
)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

CER_REUSES_ITS_BATCH_ARRAYS_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)  # lesson 02's ValueError
        newest = self._storage.pop()
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)
        rows = 1 if rest is None else batch_size
        out = getattr(self, "_batch", None)
        if out is None or len(out[0]) != rows:  # allocate once per batch size
            out = self._batch = tuple(np.empty((rows, *np.shape(field)),
                                               dtype=np.asarray(field).dtype)
                                      for field in newest)
        for array, first, i in zip(out, newest, range(5)):
            array[0] = first
            if rest is not None:
                array[1:] = rest[i]
        return out
"""

BUGS = (*BUGS,
    Bug("cer_reuses_its_batch_arrays", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_REUSES_ITS_BATCH_ARRAYS_CER_BUFFER},
        description="keeps five preallocated batch arrays on the buffer (O(1) extra cost) and refills them in every call: the arrays a learner got from one call change on the next",
        rule="sample-new-arrays", kind="mutates-input"),
)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

LOOP_RETURNS_INT_TOTAL_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"

    def learn_only_from_replay(state, action, reward, next_state, terminated):
        replay.add(state, action, reward, next_state, terminated)
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)

    total_reward = play_and_train(env, WithUpdate(agent, learn_only_from_replay), t_max)
    return int(total_reward)  # one number, a plain Python one
"""

BUGS = (*BUGS,
    Bug("loop_returns_int_total", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_RETURNS_INT_TOTAL_PLAY_AND_TRAIN_FROM_REPLAY},
        description="returns int(total_reward), as discretize must: fractional rewards are truncated (-2.5 becomes -2)",
        rule="returns-total-reward", kind="protocol"),
)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

BUGS = (*BUGS,

)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

BUGS = (*BUGS,

)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

DISCRETIZE_FLOAT_FLOOR_DIVISION_DISCRETIZE = """\
#| export
def discretize(observation, lows, highs, bins):
    \"\"\"The number of the grid cell holding ``observation``: each dimension clipped into
    [low, high] and cut into ``bins`` equal bins (the upper bound in the last one),
    cells numbered row-major, the last dimension fastest.\"\"\"

    lows, highs, bins = np.asarray(lows), np.asarray(highs), np.asarray(bins)
    clipped = np.clip(np.asarray(observation, dtype=np.float64), lows, highs)
    cells = ((clipped - lows) * bins // (highs - lows)).astype(np.int64)
    cells = np.minimum(cells, bins - 1)  # the upper bound in the last bin
    return int(np.ravel_multi_index(cells, bins))
"""

BUGS = (*BUGS,
    Bug("discretize_float_floor_division", LESSON, "test_discretize_edges",
        {"discretize": DISCRETIZE_FLOAT_FLOOR_DIVISION_DISCRETIZE},
        description="computes (x - low) * bins // (high - low): float // is not floor of the quotient (1.0 // 0.1 == 9.0), so 0.05 in [0, 0.1] with 20 bins goes to bin 9, not 10",
        rule="inner-edge-bin-above", kind="wrong-formula"),
)


# --- blind round 9: wrong answers written from the lesson text alone ----------------

CER_BATCH_IN_THE_NEWEST_DTYPE_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)
        newest = self._storage.pop()
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)
        batch = []
        for k, new in enumerate(newest):
            column = np.empty((1 if rest is None else batch_size,) + new.shape, dtype=new.dtype)
            column[0] = new
            if rest is not None:
                column[1:] = rest[k]
            batch.append(column)
        return tuple(batch)
"""

BUGS = (*BUGS,
    Bug("cer_batch_in_the_newest_dtype", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_BATCH_IN_THE_NEWEST_DTYPE_CER_BUFFER},
        description="preallocates each batch array with the NEWEST row's dtype and fills the others in: when the newest reward (or state) is an int and older ones are floats, the older values are truncated (0.5 becomes 0)",
        rule="batch-size-rows", kind="protocol"),
)


# --- blind round 10: wrong answers written from the lesson text alone ----------------

DISCRETIZE_CAPS_ONLY_THE_EXACT_UPPER_BOUND_DISCRETIZE = """\
#| export
def discretize(observation, lows, highs, bins):
    \"\"\"The number of the grid cell holding ``observation``: each dimension clipped into
    [low, high] and cut into ``bins`` equal bins (the upper bound in the last one),
    cells numbered row-major, the last dimension fastest.\"\"\"
    lows, highs, bins = np.asarray(lows), np.asarray(highs), np.asarray(bins)
    clipped = np.clip(np.asarray(observation, dtype=np.float64), lows, highs)
    fractions = (clipped - lows) / (highs - lows)
    cells = np.where(clipped >= highs, bins - 1, np.floor(fractions * bins)).astype(np.int64)
    return int(np.ravel_multi_index(cells, bins))
"""

BUGS = (*BUGS,
    Bug("discretize_caps_only_the_exact_upper_bound", LESSON, "test_discretize_clipping",
        {"discretize": DISCRETIZE_CAPS_ONLY_THE_EXACT_UPPER_BOUND_DISCRETIZE},
        description="special-cases x >= high into the last bin instead of capping the bin number: a value just below high whose fraction rounds to 1.0 (0.6999999999999998 in [-0.7, 0.7]) gets bin number `bins` and np.ravel_multi_index raises ValueError",
        rule="upper-bound-last-bin", kind="boundary"),
)


# --- blind round 12: wrong answers written from the lesson text alone ----------------

LOOP_RESEEDS_ENV_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset(seed=42)
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        replay.add(state, action, reward, next_state, terminated)
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("loop_reseeds_env", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_RESEEDS_ENV_PLAY_AND_TRAIN_FROM_REPLAY},
        description="copies env.reset(seed=42) from the gymnasium docs: every episode re-seeds the lent environment, so every episode starts from the same state",
        rule="ends-with-episode", kind="protocol"),
)


# --- blind round 12: wrong answers written from the lesson text alone ----------------

DISCRETIZE_FLOAT_CELL_NUMBER_DISCRETIZE = """\
#| export
def discretize(observation, lows, highs, bins):
    \"\"\"The number of the grid cell holding ``observation``: each dimension clipped into
    [low, high] and cut into ``bins`` equal bins (the upper bound in the last one),
    cells numbered row-major, the last dimension fastest.\"\"\"
    lows, highs = np.asarray(lows, dtype=float), np.asarray(highs, dtype=float)
    bins = np.asarray(bins)
    x = np.clip(np.asarray(observation, dtype=float), lows, highs)
    cells = np.minimum(np.floor((x - lows) / (highs - lows) * bins), bins - 1)
    strides = np.append(np.cumprod(bins[::-1])[::-1][1:], 1)  # row-major: last fastest
    return int(cells @ strides)
"""

BUGS = (*BUGS,
    Bug("discretize_float_cell_number", LESSON, "test_discretize_bins",
        {"discretize": DISCRETIZE_FLOAT_CELL_NUMBER_DISCRETIZE},
        description="keeps the bins as floats from np.floor and computes the number as a float dot product with the strides: past 2**53 cells the number is rounded",
        rule="row-major-cells", kind="boundary"),
)


# --- blind round 13: wrong answers written from the lesson text alone ----------------

CER_SORTS_THE_DRAWS_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)  # lesson 02's ValueError
        older = len(self._storage) - 1  # the newest is the last one
        # indices of the others, sorted so that the deque is read from its oldest end on
        indices = np.sort(self.rng.integers(older, size=batch_size - 1)) if older else []
        rows = [self._storage[-1]] + [self._storage[i] for i in indices]
        return tuple(np.stack(field) for field in zip(*rows))
"""

LOOP_PICKS_NEXT_ACTION_BEFORE_LEARNING_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    action = agent.get_action(state)
    for _ in range(t_max):
        next_state, reward, terminated, truncated, _ = env.step(action)
        next_action = agent.get_action(next_state)  # chosen now, played next step
        replay.add(state, action, reward, next_state, terminated)
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)
        total_reward += reward
        state, action = next_state, next_action
        if terminated or truncated:
            break
    return total_reward
"""

LOOP_STORES_DONE_AS_FLOAT_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    def learn(state, action, reward, next_state, terminated):
        replay.add(state, action, reward, next_state, float(terminated))  # 1.0 at the end
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""

LOOP_COUNTS_STEPS_BY_BUFFER_GROWTH_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    stored_before = len(replay)
    while len(replay) - stored_before < t_max:  # every step stores one transition
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        replay.add(state, action, reward, next_state, terminated)
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("cer_sorts_the_draws", LESSON, "test_cer_rest_uniform",
        {"cer_buffer": CER_SORTS_THE_DRAWS_CER_BUFFER},
        description="draws the older rows' indices with self.rng as lesson 02 does but sorts them (oldest first, to walk the deque in order): the multiset is right, but row 1 is the minimum of batch_size - 1 draws, heavily biased to the oldest, and the last row to the most recent",
        rule="rest-uniform-over-older", kind="wrong-distribution"),
    Bug("loop_picks_next_action_before_learning", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_PICKS_NEXT_ACTION_BEFORE_LEARNING_PLAY_AND_TRAIN_FROM_REPLAY},
        description="hand-written loop that chooses the next action from next_state right after env.step and before storing and learning: every action is chosen with the Q-table of the step before, and get_action is called once more on the last (terminal) state",
        rule="plays-as-lesson-01", kind="protocol"),
    Bug("loop_stores_done_as_float", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_STORES_DONE_AS_FLOAT_PLAY_AND_TRAIN_FROM_REPLAY},
        description="stores done=float(terminated) as DQN code does for its target (1 - done): the buffer holds 0.0/1.0 floats, so every batch's done array is float64, not bool, and the agent's rows carry 0.0/1.0",
        rule="done-is-terminated", kind="protocol"),
    Bug("loop_counts_steps_by_buffer_growth", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_COUNTS_STEPS_BY_BUFFER_GROWTH_PLAY_AND_TRAIN_FROM_REPLAY},
        description="counts the episode's steps as len(replay) - len(replay) at the start: once the lent buffer is full its length stops growing, so t_max never ends the episode (it runs to its own end), and a buffer already near full cuts nothing",
        rule="at-most-t-max", kind="wrong-source"),
)


# --- blind round 14: wrong answers written from the lesson text alone ----------------

CER_LONE_ROW_GETS_TWO_AXES_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)
        newest = self._storage.pop()
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)
        if rest is None:  # the newest alone: a batch (2-D) of one row, copied
            return tuple(np.array(field, ndmin=2) for field in newest)
        return tuple(np.concatenate([[field], others]) for field, others in zip(newest, rest))
"""

LOOP_DONE_CLEARED_ON_TRUNCATION_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        # a time limit is no real end: a truncated step is never stored as terminal
        done = terminated and not truncated
        replay.add(state, action, reward, next_state, done)
        for row in zip(*replay.sample(batch_size)):
            agent.update(*row)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("cer_lone_row_gets_two_axes", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_LONE_ROW_GETS_TWO_AXES_CER_BUFFER},
        description="when the batch is the newest alone (sample(1), or one stored) it returns np.array(field, ndmin=2): scalar fields (Taxi's states, actions, rewards, flags) come back with shape (1, 1) instead of (1,)",
        rule="batch-of-one-is-newest", kind="protocol"),
    Bug("loop_done_cleared_on_truncation", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_DONE_CLEARED_ON_TRUNCATION_PLAY_AND_TRAIN_FROM_REPLAY},
        description="hand-written loop that stores done=terminated and not truncated: a goal reached on the time limit's last step (terminated and truncated both True) is stored, and learned, as not terminal",
        rule="done-is-terminated", kind="past-terminal"),
)


# --- blind round 15: wrong answers written from the lesson text alone ----------------

LOOP_ROWS_RETYPED_BY_COLUMN_STACK_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    def learn(state, action, reward, next_state, terminated):
        replay.add(state, action, reward, next_state, terminated)
        table = np.column_stack(replay.sample(batch_size))  # one row per transition
        for row in table:
            agent.update(*row)

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""

CER_RETURNS_ROWS_NOT_FIELDS_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)
        rows = [self._storage[-1]]
        n_older = len(self._storage) - 1
        if batch_size > 1 and n_older > 0:
            rows += [self._storage[i] for i in self.rng.integers(n_older, size=batch_size - 1)]
        return tuple(np.array(row) for row in rows)
"""

BUGS = (*BUGS,
    Bug("loop_rows_retyped_by_column_stack", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_ROWS_RETYPED_BY_COLUMN_STACK_PLAY_AND_TRAIN_FROM_REPLAY},
        description="turns the batch into one table with np.column_stack and updates on its rows: every field becomes float64 (state 123.0, action 2.0, done 0.0), so the agent is not given the batch's rows (an agent indexing a numpy Q-table with them raises IndexError)",
        rule="learn-only-from-batch", kind="numpy-scalars"),
    Bug("cer_returns_rows_not_fields", LESSON, "test_cer_newest_exactly_once",
        {"cer_buffer": CER_RETURNS_ROWS_NOT_FIELDS_CER_BUFFER},
        also_fails=("test_cer_rest_uniform", "test_cer_single_transition"),
        description="collects the rows and returns tuple(np.array(row) for row in rows), forgetting zip(*rows): a tuple of batch_size arrays of five values each (all cast to float), which looks right exactly when batch_size == 5",
        rule="result-types", kind="protocol"),
)


# --- blind round 16: wrong answers written from the lesson text alone ----------------

LOOP_MARKS_T_MAX_STEP_TERMINAL_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for step in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        done = terminated or step == t_max - 1  # the episode ends here too
        replay.add(state, action, reward, next_state, done)
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

LOOP_T_MAX_ZERO_MEANS_DEFAULT_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    if not t_max:  # not given (None): the usual cap
        t_max = 10_000

    def learn(state, action, reward, next_state, terminated):
        replay.add(state, action, reward, next_state, terminated)
        for transition in zip(*replay.sample(batch_size)):
            agent.update(*transition)

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""

BUGS = (*BUGS,
    Bug("loop_marks_t_max_step_terminal", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_MARKS_T_MAX_STEP_TERMINAL_PLAY_AND_TRAIN_FROM_REPLAY},
        description="hand-written loop that stores done = terminated or (this is step t_max): when t_max cuts an episode the last transition is stored, and learned, as terminal",
        rule="done-is-terminated", kind="past-terminal"),
    Bug("loop_t_max_zero_means_default", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_T_MAX_ZERO_MEANS_DEFAULT_PLAY_AND_TRAIN_FROM_REPLAY},
        description="'if not t_max: t_max = 10_000' to accept None: a caller's t_max=0 (no step) plays a whole episode instead",
        rule="at-most-t-max", kind="falsy-as-missing"),
)


LOOP_CACHES_THE_WRAPPED_AGENT_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
_LEARNERS = {}  # id(agent) -> the agent with its learning step, built once


def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    if id(agent) not in _LEARNERS:
        def learn(state, action, reward, next_state, terminated):
            replay.add(state, action, reward, next_state, terminated)
            for transition in zip(*replay.sample(batch_size)):
                agent.update(*transition)

        _LEARNERS[id(agent)] = WithUpdate(agent, learn)
    return play_and_train(env, _LEARNERS[id(agent)], t_max)
"""

BUGS = (*BUGS,
    Bug("loop_caches_the_wrapped_agent", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_CACHES_THE_WRAPPED_AGENT_PLAY_AND_TRAIN_FROM_REPLAY},
        description="builds the WithUpdate (and its learn closure) once per agent id and reuses it: a later call with another buffer or batch size stores into, and samples from, the first call's buffer with the first batch size",
        rule="store-every-step", kind="protocol"),
)


# --- blind round 17: wrong answers written from the lesson text alone ----------------

CER_ADD_SKIPS_REPEATED_TRANSITIONS_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def add(self, obs_t, action, reward, obs_tp1, done):
        \"\"\"As lesson 02's add, but a repeat of the newest transition is not stored again:
        the newest is in every batch anyway, and copies only crowd the buffer.\"\"\"
        if self._storage:
            new = tuple(np.array(field) for field in (obs_t, action, reward, obs_tp1, done))
            if all(np.array_equal(a, b) for a, b in zip(new, self._storage[-1])):
                return
        super().add(obs_t, action, reward, obs_tp1, done)

    def sample(self, batch_size):
        if batch_size <= 0 or not self._storage:
            return super().sample(batch_size)
        newest = self._storage.pop()
        try:
            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None
        finally:
            self._storage.append(newest)
        batch = tuple(np.stack([field]) for field in newest)
        if rest is None:
            return batch
        return tuple(np.concatenate(fields) for fields in zip(batch, rest))
"""

LOOP_NEGATES_FLAGS_WITH_TILDE_PLAY_AND_TRAIN_FROM_REPLAY = """\
#| export
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    \"\"\"Play one episode; at each step store the transition, then learn from one batch
    sampled from ``replay`` (and from nothing else). Returns the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        replay.add(state, action, reward, next_state, terminated)
        for row in zip(*replay.sample(batch_size)):
            agent.update(*row)
        total_reward += reward
        state = next_state
        alive = ~(terminated | truncated)  # the not-done mask, as in array code
        if not alive:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("cer_add_skips_repeated_transitions", LESSON, "test_cer_rest_uniform",
        {"cer_buffer": CER_ADD_SKIPS_REPEATED_TRANSITIONS_CER_BUFFER},
        description="overrides add to drop a transition identical to the newest (Taxi's repeated illegal moves 'only crowd the buffer'): len stops growing on repeats and the older ones are no longer weighted by their copies",
        rule="rest-uniform-over-older", kind="wrong-distribution"),
    Bug("loop_negates_flags_with_tilde", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_NEGATES_FLAGS_WITH_TILDE_PLAY_AND_TRAIN_FROM_REPLAY},
        description="keeps going while ~(terminated | truncated), the done-mask idiom of array code: right for np.bool_ flags, but for Python bools (Taxi's) ~True is -2, truthy, so the episode never ends before t_max",
        rule="ends-with-episode", kind="numpy-scalars"),
)


# blind round 18

CER_BATCH_OF_ONE_TESTED_WITH_IS_CER_BUFFER = edited(
    LESSON, 'cer_buffer',
    ("            return super().sample(batch_size)  # lesson 02's ValueError says what is wrong\n        newest = self._storage.pop()  # set aside, so that lesson 02's sample draws the rest\n",
     '            return super().sample(batch_size)\n        if batch_size is 1 or len(self._storage) == 1:  # the newest alone\n            return tuple(np.stack([field]) for field in self._storage[-1])\n        newest = self._storage.pop()\n'),
    ('            rest = super().sample(batch_size - 1) if batch_size > 1 and self._storage else None\n',
     '            rest = super().sample(batch_size - 1)\n'),
    ('            self._storage.append(newest)  # back in its place, whatever happened\n        batch = tuple(np.stack([field]) for field in newest)  # the newest: a batch of one\n        if rest is None:\n            return batch\n        return tuple(np.concatenate(fields) for fields in zip(batch, rest))',
     '            self._storage.append(newest)\n        return tuple(np.concatenate([np.stack([new]), older]) for new, older in zip(newest, rest))\n'))

BUGS = (*BUGS,
    Bug("cer_batch_of_one_tested_with_is", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_BATCH_OF_ONE_TESTED_WITH_IS_CER_BUFFER},
        description="special-cases 'batch_size is 1': np.int64(1) is not 1, so sample(np.int64(1)) goes on to lesson 02's sample(0), which raises ValueError",
        rule="numpy-scalars", kind="numpy-scalars"),
)


# --- blind round 25 --------------------------------------------------------------------

# A constructor added to seed numpy's global generator too, "for reproducible batches": the
# rows still come from self.rng, but np.random.seed(None) reseeds np.random from fresh
# entropy whenever a buffer is made without a seed.
CER_INIT_RESEEDS_NP_RANDOM = _edit("cer_buffer", (
    '    transitions stored before it (just the newest while nothing else is stored)."""\n',
    '    transitions stored before it (just the newest while nothing else is stored)."""\n'
    "\n"
    "    def __init__(self, size, seed=None):\n"
    "        super().__init__(size, seed)\n"
    "        np.random.seed(seed)  # numpy's generator too, for reproducible batches\n"))

BUGS = (*BUGS,
    # blind round 25
    Bug("cer_init_reseeds_np_random", LESSON, "test_cer_rest_uniform",
        {"cer_buffer": CER_INIT_RESEEDS_NP_RANDOM},
        description="adds a constructor that also calls np.random.seed(seed), 'for "
                    "reproducible batches': the rows come from self.rng, but a buffer made "
                    "without a seed reseeds numpy's global generator from fresh entropy (and "
                    "a seeded one resets it)",
        rule="own-generator", kind="global-generator"),
)
