"""The Blind Cliffwalk of Schaul et al. (2016, section 3), and learning from its memory.

A chain of ``n`` states with two actions. In each state one action is "right" (which one
is drawn at random per state, so nothing can be generalised) and moves one state on;
the other falls off the cliff and ends the episode with reward 0. The right action in the
last state ends the episode with reward 1, the only reward there is. A random policy
sees it once in 2^n episodes.

The paper's experiment separates *which transition to replay* from everything else: the
replay memory is filled once, by playing every one of the 2^n action sequences until it
ends, and a tabular Q-function learns only from replaying it, one transition per update,
with step size 1/4 and discount 1 - 1/n. The score is the number of updates until the
mean squared error of the Q-table against the true Q-values falls below 1e-3.

:func:`learn_from_replay` runs that loop with any replay that has the prioritized
buffer's interface (``sample(batch_size, beta)`` returning seven arrays, the last the
slots drawn; ``update_priorities(slots, td_errors)``), and records the slots it drew, so
:func:`qtables_from_slots` can replay the same updates anywhere and recompute the
Q-tables (the grader does, in its own process).
"""

import itertools
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from course.transition_arrays import TransitionArrays

STEP_SIZE = 0.25
SOLVED_ERROR = 1e-3  # mean squared error of the Q-table at which the walk is "solved"


def discount_for(n):
    return 1.0 - 1.0 / n


class BlindCliffwalkEnv(gym.Env):
    """``n`` states in a row; the right action (drawn per state from ``seed``) moves on,
    the other ends the episode; the right action in the last state earns 1."""

    metadata = {"render_modes": []}

    def __init__(self, n, seed=None):
        if n < 1:
            raise ValueError(f"the walk needs at least one state, got n={n}")
        self.n = n
        self.observation_space = gym.spaces.Discrete(n)
        self.action_space = gym.spaces.Discrete(2)
        self.right_actions = np.random.default_rng(seed).integers(2, size=n)
        self.state = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.state = 0
        return self.state, {}

    def step(self, action):
        state = self.state
        if action != self.right_actions[state]:
            return state, 0.0, True, False, {"fell": True}
        if state == self.n - 1:
            return state, 1.0, True, False, {"fell": False}
        self.state = state + 1
        return self.state, 0.0, False, False, {"fell": False}


@dataclass(frozen=True)
class ReplayMemory(TransitionArrays):
    """Every transition of every action sequence (one row each), and the env they came from."""

    env: BlindCliffwalkEnv


def replay_memory(n, seed=0):
    """Play all 2^n action sequences of a walk of ``n`` states until each ends, in an
    order shuffled by ``seed``; keep every transition: 2^(n+1) - 2 of them."""
    env = BlindCliffwalkEnv(n, seed=seed)
    sequences = list(itertools.product((0, 1), repeat=n))
    order = np.random.default_rng(seed).permutation(len(sequences))
    rows = []
    for index in order:
        state, _ = env.reset()
        for action in sequences[index]:
            next_state, reward, terminated, _, _ = env.step(action)
            rows.append((state, action, reward, next_state, terminated))
            state = next_state
            if terminated:
                break
    obs, actions, rewards, next_obs, terminated = (np.array(column) for column in zip(*rows))
    return ReplayMemory(obs.astype(np.int64), actions.astype(np.int64),
                        rewards.astype(np.float64), next_obs.astype(np.int64),
                        terminated.astype(bool), env=env)


def true_qtable(env):
    """Q* of the walk: the right action in state s is worth gamma^(n-1-s), the other 0."""
    n = env.n
    qtable = np.zeros((n, 2))
    qtable[np.arange(n), env.right_actions] = discount_for(n) ** (n - 1 - np.arange(n))
    return qtable


def qtable_error(qtable, true_q):
    """Mean squared error over all state-action pairs."""
    return float(np.mean((np.asarray(qtable, dtype=np.float64) - true_q) ** 2))


def td_update(qtable, transition, discount, weight=1.0, step_size=STEP_SIZE):
    """One Q-learning update of ``qtable`` in place, scaled by ``weight``; the TD error."""
    obs, action, reward, next_obs, terminated = transition
    target = reward + (0.0 if terminated else discount * qtable[next_obs].max())
    td_error = target - qtable[obs, action]
    qtable[obs, action] += step_size * weight * td_error
    return td_error


class UniformMemoryReplay:
    """Uniform replay of a memory, with the prioritized buffer's interface (weights 1,
    priorities ignored). Slots are drawn in advance: it is the fast baseline."""

    def __init__(self, memory, seed=None, chunk=4096):
        self.memory, self.rng, self.chunk = memory, np.random.default_rng(seed), chunk
        self._slots = np.empty(0, dtype=np.int64)

    def __len__(self):
        return len(self.memory)

    def sample(self, batch_size, beta=0.0):
        if self._slots.size < batch_size:
            self._slots = np.concatenate(
                [self._slots, self.rng.integers(len(self.memory), size=self.chunk)])
        slots, self._slots = self._slots[:batch_size], self._slots[batch_size:]
        m = self.memory
        return (m.obs[slots], m.actions[slots], m.rewards[slots], m.next_obs[slots],
                m.terminated[slots], np.ones(batch_size), slots)

    def update_priorities(self, slots, td_errors):
        pass


@dataclass
class ReplayRun:
    updates_to_solve: int | None  # None: not solved within the budget
    errors: np.ndarray  # Q-table error after every ``record_every`` updates
    slots: list  # the memory slots replayed, in order


def learn_from_replay(replay, memory, max_updates, beta=0.0, record_every=100):
    """Learn the walk's Q-table by replaying from ``replay``, one transition per update,
    feeding each TD error back with ``update_priorities``; stop once solved."""
    env = memory.env
    discount, true_q = discount_for(env.n), true_qtable(env)
    qtable = np.zeros((env.n, 2))
    errors, slots = [], []
    for update in range(1, max_updates + 1):
        *transition, weights, drawn = replay.sample(1, beta)
        row = [field[0] for field in transition]
        td_error = td_update(qtable, row, discount, weight=float(weights[0]))
        replay.update_priorities(drawn, [td_error])
        slots.append(int(drawn[0]))
        error = qtable_error(qtable, true_q)
        if update % record_every == 0:
            errors.append(error)
        if error < SOLVED_ERROR:
            return ReplayRun(update, np.array(errors), slots)
    return ReplayRun(None, np.array(errors), slots)


def learn_from_replay_of(replay, n, seed, max_updates, beta=0.0):
    """:func:`learn_from_replay` on ``replay_memory(n, seed)``: a run that a student's
    process can make as the grader makes it (the grader's check foresees a buffer's answers
    by having a copy of it make this run first)."""
    return learn_from_replay(replay, replay_memory(n, seed), max_updates, beta)


def qtables_from_slots(memory, slots, checkpoints):
    """Replay the transitions in ``slots`` in order (weights 1); the Q-table after each
    number of updates in ``checkpoints``. What any replay's slots amount to."""
    env = memory.env
    discount = discount_for(env.n)
    qtable = np.zeros((env.n, 2))
    wanted = sorted(set(int(c) for c in checkpoints))
    tables, done = {}, 0
    for checkpoint in wanted:
        for slot in slots[done:checkpoint]:
            td_update(qtable, (memory.obs[slot], memory.actions[slot], memory.rewards[slot],
                               memory.next_obs[slot], memory.terminated[slot]), discount)
        done = checkpoint
        tables[checkpoint] = qtable.copy()
    return [tables[int(c)] for c in checkpoints]


def updates_to_solve_from_slots(memory, slots):
    """The number of updates after which replaying ``slots`` in order solves the walk,
    or None if it never does."""
    env = memory.env
    discount, true_q = discount_for(env.n), true_qtable(env)
    qtable = np.zeros((env.n, 2))
    for update, slot in enumerate(slots, start=1):
        td_update(qtable, (memory.obs[slot], memory.actions[slot], memory.rewards[slot],
                           memory.next_obs[slot], memory.terminated[slot]), discount)
        if qtable_error(qtable, true_q) < SOLVED_ERROR:
            return update
    return None


def oracle_updates_to_solve(memory, max_updates):
    """The paper's oracle: each update replays whichever transition lowers the Q-table's
    error the most (it knows Q*). Duplicates in the memory change nothing, so it chooses
    among the 2n distinct transitions. Returns the number of updates to solve."""
    env = memory.env
    n, discount, true_q = env.n, discount_for(env.n), true_qtable(env)
    states = np.repeat(np.arange(n), 2)
    actions = np.tile([0, 1], n)
    right = actions == env.right_actions[states]
    rewards = np.where(right & (states == n - 1), 1.0, 0.0)
    terminated = ~right | (states == n - 1)
    next_states = np.where(terminated, states, states + 1)
    qtable = np.zeros((n, 2))
    for update in range(1, max_updates + 1):
        targets = rewards + np.where(terminated, 0.0, discount * qtable[next_states].max(axis=1))
        current = qtable[states, actions]
        updated = current + STEP_SIZE * (targets - current)
        gain = (current - true_q[states, actions]) ** 2 - (updated - true_q[states, actions]) ** 2
        best = int(np.argmax(gain))
        qtable[states[best], actions[best]] = updated[best]
        if qtable_error(qtable, true_q) < SOLVED_ERROR:
            return update
    return None
