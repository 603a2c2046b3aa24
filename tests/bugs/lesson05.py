"""Buggy answers to lesson 05 (combined replay and the CartPole discretiser)."""

import functools

from . import Bug, edited_text, edits_of

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


BUGS = [
    Bug("cer_newest_can_come_twice", LESSON, "test_cer_newest_exactly_once",
        {"cer_buffer": NEWEST_CAN_COME_TWICE}, also_fails=("test_cer_rest_uniform",),
        description="the rest of the batch is drawn from all transitions, the newest included"),
    Bug("cer_is_plain_uniform", LESSON, "test_cer_learning", {"cer_buffer": PLAIN_UNIFORM},
        also_fails=("test_cer_newest_exactly_once", "test_cer_rest_uniform",
                    "test_cer_single_transition"),
        description="no newest transition: uniform replay, which collapses with a big buffer"),
    Bug("cer_one_row_too_many", LESSON, "test_cer_newest_exactly_once",
        {"cer_buffer": ONE_ROW_TOO_MANY},
        also_fails=("test_cer_single_transition",),  # sample(1) returns two rows
        description="the newest plus batch_size others: batches one row too big"),
    Bug("cer_rest_from_the_recent_half", LESSON, "test_cer_rest_uniform",
        {"cer_buffer": REST_FROM_THE_RECENT_HALF},
        description="the other rows come from the newer half only"),
    Bug("cer_copies_the_only_transition", LESSON, "test_cer_single_transition",
        {"cer_buffer": COPIES_THE_ONLY_TRANSITION},
        description="with one transition stored, the batch is batch_size copies of it"),
    Bug("loop_also_learns_online", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": LOOP_ALSO_LEARNS_ONLINE},
        description="an extra update on each new transition besides the batch"),
    Bug("reused_loop_also_learns_online", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REUSED_LOOP_ALSO_LEARNS_ONLINE},
        description="lesson 01's loop reused, with a learning step that also updates on "
                    "the new transition"),
    Bug("discretize_without_clipping", LESSON, "test_discretize_clipping",
        {"discretize": DISCRETIZE_WITHOUT_CLIPPING}, also_fails=("test_discretize_bins",),
        description="values past the bounds are binned as if the range went on"),
    Bug("discretize_top_edge_overflows", LESSON, "test_discretize_edges",
        {"discretize": DISCRETIZE_TOP_EDGE_OVERFLOWS},
        also_fails=("test_discretize_clipping", "test_discretize_bins"),
        description="the upper bound falls into a bin past the last"),
    Bug("discretize_column_major", LESSON, "test_discretize_bins",
        {"discretize": DISCRETIZE_COLUMN_MAJOR},
        also_fails=("test_discretize_edges", "test_discretize_clipping"),
        description="cells numbered with the first dimension fastest"),
    Bug("discretize_rounds", LESSON, "test_discretize_bins", {"discretize": DISCRETIZE_ROUNDS},
        also_fails=("test_discretize_clipping",),
        description="rounds to the nearest bin instead of flooring"),
    Bug("cer_rejects_batch_of_one", LESSON, "test_cer_single_transition",
        {"cer_buffer": CER_REJECTS_BATCH_OF_ONE},
        description="the error guard is off by one: sample(1) raises ValueError"),
    Bug("replay_only_loop_never_stops_unless_terminated", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REPLAY_ONLY_LOOP_NEVER_STOPS_UNLESS_TERMINATED},
        description="while True, stopping only when terminated: an episode that is "
                    "truncated never ends (the corridor stops it past its time limit)"),
    Bug("replay_only_loop_ignores_truncation", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REPLAY_ONLY_LOOP_IGNORES_TRUNCATION},
        description="stops only when terminated: a truncated episode runs on to t_max"),
    Bug("replay_only_loop_returns_the_last_reward", LESSON, "test_replay_only_loop",
        {"play_and_train_from_replay": REPLAY_ONLY_LOOP_RETURNS_THE_LAST_REWARD},
        description="total_reward = reward: returns the last step's reward, not the sum"),
]
