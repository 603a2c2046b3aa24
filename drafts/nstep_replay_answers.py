"""Draft of lesson 08's answers (the future ``nstep_replay.py``, exported from
``solutions/08_nstep_replay.ipynb``): n-step returns and their replay buffer, frame stacks
stored once, and the on-policy rollout buffer with GAE. Not yet a lesson: no notebook,
checks or bug catalogue (see the branch's commit messages)."""

from collections import deque

import numpy as np


def n_step_return(rewards, terminated, truncated, discount):
    """The n-step return of the first step of each row, and how to bootstrap it.

    ``rewards``, ``terminated``, ``truncated``: arrays of shape (rows, n); row i holds the
    steps t, t+1, ..., t+n-1 that start at one stored transition t. Returns three arrays of
    shape (rows,): ``returns`` (float), the sum of discount**k * rewards[i, k] over the
    steps up to and including the first that ends the episode (terminated or truncated),
    all n if none does; ``discounts`` (float), 0.0 if that last step terminated, else
    discount**m (m the steps summed); and ``steps`` (int), m. The target is then
    returns + discounts * max_a Q(next observation of step t+m-1, a). Inputs untouched."""
    rewards = np.asarray(rewards, dtype=np.float64)
    terminated = np.asarray(terminated, dtype=bool)
    ended = terminated | np.asarray(truncated, dtype=bool)
    rows, n = rewards.shape
    returns = np.zeros(rows)
    steps = np.full(rows, n, dtype=np.int64)
    alive = np.ones(rows, dtype=bool)  # no end of episode yet in the window
    for k in range(n):
        returns[alive] += discount ** k * rewards[alive, k]
        steps[alive & ended[:, k]] = k + 1
        alive &= ~ended[:, k]
    discounts = np.float64(discount) ** steps
    discounts[terminated[np.arange(rows), steps - 1]] = 0.0
    return returns, discounts, steps


class NStepReplayBuffer:
    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,
    discount to bootstrap with, observation to bootstrap from). A transition becomes a
    record once the n-1 transitions after it are in, or as soon as its episode ends."""

    def __init__(self, capacity, n, discount, seed=None):
        if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:
            raise ValueError(f"capacity and n must be positive whole numbers, got {capacity} "
                             f"and {n}")
        if not 0.0 <= discount <= 1.0:
            raise ValueError(f"discount must be in [0, 1], got {discount}")
        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)
        self.rng = np.random.default_rng(seed)
        self.pending = deque()  # transitions whose n-step return is not known yet
        self.records = None  # field -> array of capacity rows, made at the first record
        self.next_slot, self.size = 0, 0

    def __len__(self):
        return self.size

    def add(self, observation, action, reward, next_observation, terminated, truncated):
        self.pending.append((np.array(observation), int(action), float(reward),
                             np.array(next_observation), bool(terminated), bool(truncated)))
        if terminated or truncated:
            while self.pending:  # the episode is over: every pending return is known
                self._complete_oldest()
        elif len(self.pending) == self.n:
            self._complete_oldest()

    def _complete_oldest(self):
        window = list(self.pending)[:self.n]
        _, _, rewards, _, terminated, truncated = zip(*window)
        returns, discounts, steps = n_step_return(
            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)
        observation, action = window[0][:2]
        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])
        self.pending.popleft()

    def _store(self, *fields):
        if self.records is None:
            self.records = [np.zeros((self.capacity, *np.shape(value)), np.asarray(value).dtype)
                            for value in fields]
        for array, value in zip(self.records, fields):
            array[self.next_slot] = value
        self.next_slot = (self.next_slot + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size):
        """(observations, actions, returns, discounts, bootstrap observations) of
        ``batch_size`` records drawn uniformly with replacement, as new arrays."""
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive whole number, got {batch_size}")
        if self.size == 0:
            raise ValueError("cannot sample from a buffer that holds no complete record")
        slots = self.rng.integers(0, self.size, size=int(batch_size))
        return tuple(array[slots] for array in self.records)


class FrameStackReplay:
    """Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames
    are rebuilt when sampled, never across an episode's start (there the episode's first
    frame is repeated)."""

    def __init__(self, capacity, stack, seed=None):
        if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack:
            raise ValueError("capacity and stack must be whole numbers, capacity > stack >= 1")
        self.capacity, self.stack = int(capacity), int(stack)
        self.rng = np.random.default_rng(seed)
        self.frames = None
        self.actions = np.zeros(self.capacity, np.int64)
        self.rewards = np.zeros(self.capacity)
        self.terminated = np.zeros(self.capacity, bool)
        self.has_transition = np.zeros(self.capacity, bool)  # the next slot is its next frame
        self.episode_start = np.zeros(self.capacity, np.int64)  # as a count of frames added
        self.added = 0  # frames ever stored; slot of frame f is f % capacity
        self.current_start = None

    def _put(self, frame):
        frame = np.asarray(frame)
        if self.frames is None:
            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)
        slot = self.added % self.capacity
        self.frames[slot] = frame
        self.has_transition[slot] = False
        self.episode_start[slot] = self.current_start
        self.added += 1

    def start_episode(self, frame):
        self.current_start = self.added
        self._put(frame)

    def add(self, action, reward, next_frame, terminated):
        if self.current_start is None:
            raise ValueError("start_episode(frame) comes before the first add")
        slot = (self.added - 1) % self.capacity
        self.actions[slot], self.rewards[slot] = action, reward
        self.terminated[slot], self.has_transition[slot] = terminated, True
        self._put(next_frame)

    def stack_of(self, frame):
        """The stack ending at frame number ``frame`` (a count), oldest frame first."""
        first = self.episode_start[frame % self.capacity]
        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)
        return self.frames[numbers % self.capacity]

    def sampleable(self):
        """Frame numbers whose transition and both stacks are still in the ring."""
        oldest = self.added - min(self.added, self.capacity)
        numbers = np.arange(oldest, self.added - 1)
        slots = numbers % self.capacity
        earliest = np.maximum(numbers - self.stack + 1, self.episode_start[slots])
        return numbers[self.has_transition[slots] & (earliest >= oldest)]

    def sample(self, batch_size):
        numbers = self.sampleable()
        if len(numbers) == 0:
            raise ValueError("no transition whose stacks are whole is stored yet")
        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]
        slots = chosen % self.capacity
        return (np.stack([self.stack_of(f) for f in chosen]), self.actions[slots].copy(),
                self.rewards[slots].copy(), np.stack([self.stack_of(f + 1) for f in chosen]),
                self.terminated[slots].copy())

    @property
    def nbytes(self):
        arrays = [self.actions, self.rewards, self.terminated, self.has_transition,
                  self.episode_start]
        return sum(array.nbytes for array in arrays) + (0 if self.frames is None
                                                        else self.frames.nbytes)


def gae(rewards, values, next_values, terminated, truncated, discount, lam):
    """Generalised advantage estimation over a rollout, axis 0 the steps (any other axes
    are separate rollouts): delta_t = r_t + discount * V(s'_t) (0 after a termination) -
    V(s_t); A_t = delta_t + discount * lam * A_{t+1}, restarted where an episode ended and
    0 after the last step; returns A + values. Inputs untouched."""
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    next_values = np.asarray(next_values, dtype=np.float64)
    terminated = np.asarray(terminated, dtype=bool)
    ended = terminated | np.asarray(truncated, dtype=bool)
    advantages = np.zeros(values.shape)
    following = np.zeros(values.shape[1:])
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + discount * np.where(terminated[t], 0.0, next_values[t]) - values[t]
        following = delta + discount * lam * np.where(ended[t], 0.0, following)
        advantages[t] = following
    return advantages, advantages + values


class RolloutBuffer:
    """An on-policy rollout of ``size`` steps: filled, turned into advantages and returns
    once, handed out once, and cleared."""

    def __init__(self, size, discount, lam):
        self.size, self.discount, self.lam = int(size), float(discount), float(lam)
        self.steps = []

    def __len__(self):
        return len(self.steps)

    def add(self, observation, action, reward, value, next_value, terminated, truncated):
        if len(self.steps) == self.size:
            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")
        self.steps.append((np.array(observation), int(action), float(reward), float(value),
                           float(next_value), bool(terminated), bool(truncated)))

    def get(self):
        """(observations, actions, advantages, returns) of the full rollout; then empty."""
        if len(self.steps) < self.size:
            raise ValueError(f"the rollout holds {len(self.steps)} of {self.size} steps")
        observations, actions, rewards, values, next_values, terminated, truncated = map(
            np.array, zip(*self.steps))
        advantages, returns = gae(rewards, values, next_values, terminated, truncated,
                                  self.discount, self.lam)
        self.steps = []
        return observations, actions, advantages, returns
