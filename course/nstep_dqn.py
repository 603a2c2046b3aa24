"""Lesson 08's DQN with uncorrected n-step returns, many runs at once.

A *run* is one (seed, replay capacity, n). ``train(runs, settings, n_step_return)`` trains
every run on its own CartPole-v1 (``course.vector_cartpole``) with its own network, all
stacked (``course.stacked_networks``), and returns one :class:`Result` per run. A run's
numbers depend only on its seed, capacity and n, never on the runs beside it: its
environment, its network's initial weights (``course.mlp.QNetwork(sizes, seed)``), its
exploration and its batches come from generators of its own seed. Runs with the same
seed in different cells are *paired*: same start, same first episodes, same draws.

Replay. Every transition is kept in arrays of (steps, runs), and a buffer of capacity C is
the C newest of them. Once the n steps t, ..., t+n-1 are in, transition t's replay record
is written: its observation and action, its n-step return, the discount to bootstrap
with, and the observation to bootstrap from. They come from the caller's
``n_step_return(rewards, terminated, truncated, discount)`` (the lesson's answer), called
once per environment step for every run with the same n, with the rows' windows of n
steps. A batch is drawn uniformly among the complete records of the C newest transitions,
``settings.replay_ratio`` gradient updates per environment step (0.25: one every 4).

The target of a record: return + discount_to_bootstrap * max_a Q_target(bootstrap
observation, a). "Uncorrected": the rewards are those of the policy that collected them,
however old, with no importance ratio. Loss: Huber, one Adam step per update; the target
network is copied from the online one every ``target_period`` updates.
"""

from dataclasses import dataclass, replace

import numpy as np

from course.mlp import QNetwork
from course.stacked_networks import StackedAdam, StackedMLP
from course.vector_cartpole import EpisodeCurve, VectorCartPole, greedy_returns

# It trains with a stacked form of lesson 07's huber_loss_gradient: kept out of the
# sandboxes of lesson 07 and earlier.
STANDS_IN_FOR = "07_neural_replay"


@dataclass(frozen=True)
class Settings:
    steps: int = 20_000  # environment steps per run
    replay_ratio: float = 0.25  # gradient updates per environment step
    batch_size: int = 32
    hidden: int = 32  # two hidden layers of this width
    discount: float = 0.99
    learning_rate: float = 1e-3
    target_period: int = 250  # updates between target syncs
    learning_starts: int = 1_000  # environment steps before the first update
    exploration_steps: int = 5_000  # epsilon falls linearly from 1 to final_epsilon
    final_epsilon: float = 0.05
    sticky: float = 0.0  # probability that the environment repeats the previous action

    def with_(self, **changes):
        return replace(self, **changes)

    @property
    def sizes(self):
        return (4, self.hidden, self.hidden, 2)

    def updates_by(self, step):
        """Gradient updates made once ``step`` environment steps are done."""
        if step < self.learning_starts:
            return 0
        return int(np.floor((step - self.learning_starts + 1) * self.replay_ratio + 1e-9))

    def oldest_policy_age(self, capacity):
        """How many updates old the oldest transition's policy is once the buffer is full
        (at the end of training if it never fills)."""
        held = min(capacity, self.steps)
        return self.updates_by(self.steps) - self.updates_by(self.steps - held)


@dataclass(frozen=True)
class Run:
    seed: int
    capacity: int
    n: int


@dataclass
class Result(EpisodeCurve):
    run: Run
    episode_returns: list
    episode_ends: list  # the step each episode ended on
    greedy_return: float  # mean over 10 greedy episodes after training


class NStepRecords:
    """Every run's transitions (step t of run r at [t, r]) and their replay records, one
    float32 row each: observation, bootstrap observation, return, discount, action (a
    batch is one gather)."""

    def __init__(self, steps, runs, observation_size=4):
        size = observation_size
        self.OBSERVATION, self.BOOTSTRAP = slice(0, size), slice(size, 2 * size)
        self.RETURN, self.DISCOUNT, self.ACTION = 2 * size, 2 * size + 1, 2 * size + 2
        self.observations = np.zeros((steps, runs, size), np.float32)
        self.next_observations = np.zeros((steps, runs, size), np.float32)
        self.actions = np.zeros((steps, runs), np.int64)
        self.rewards = np.zeros((steps, runs))
        self.terminated = np.zeros((steps, runs), bool)
        self.truncated = np.zeros((steps, runs), bool)
        self.records = np.zeros((steps, runs, 2 * size + 3), np.float32)
        self.count = 0

    def add(self, observations, actions, rewards, next_observations, terminated, truncated):
        t = self.count
        self.observations[t] = observations
        self.actions[t] = actions
        self.rewards[t] = rewards
        self.next_observations[t] = next_observations
        self.terminated[t] = terminated
        self.truncated[t] = truncated
        self.count += 1

    def complete(self, groups, discount, n_step_return):
        """Write the record of transition count - n of every run, for each (n, runs) of
        ``groups``, from ``n_step_return`` on the runs' last n steps."""
        for n, runs in groups:
            start = self.count - n
            if start < 0:
                continue
            window = slice(start, self.count)
            returns, discounts, lengths = _checked_parts(
                n_step_return(self.rewards[window, runs].T, self.terminated[window, runs].T,
                              self.truncated[window, runs].T, discount), len(runs), n)
            record = self.records[start, runs]
            record[:, self.OBSERVATION] = self.observations[start, runs]
            record[:, self.BOOTSTRAP] = self.next_observations[start + lengths - 1, runs]
            record[:, self.RETURN] = returns
            record[:, self.DISCOUNT] = discounts
            record[:, self.ACTION] = self.actions[start, runs]
            self.records[start, runs] = record


class BadNStepReturn(ValueError):
    """The n_step_return given gave something the experiment cannot use."""


def _checked_parts(parts, rows, n):
    """(returns, discounts, steps) as arrays of ``rows``, or BadNStepReturn saying why not."""
    try:
        returns, discounts, lengths = parts
    except (TypeError, ValueError):
        raise BadNStepReturn("n_step_return must return three arrays: (returns, discounts, "
                             "steps)") from None
    returns, discounts = np.asarray(returns, np.float64), np.asarray(discounts, np.float64)
    lengths = np.asarray(lengths)
    if any(part.shape != (rows,) for part in (returns, discounts, lengths)):
        raise BadNStepReturn(f"n_step_return was given {rows} windows and must return three "
                             f"arrays of shape ({rows},)")
    if lengths.dtype.kind not in "iu" or lengths.min() < 1 or lengths.max() > n:
        raise BadNStepReturn(f"n_step_return's steps must be whole numbers from 1 to n={n}")
    return returns, discounts, lengths.astype(np.int64)


def huber_gradient(q_values, actions, targets):
    """d mean-Huber / d Q for every run's batch: (runs, batch, actions)."""
    batch = actions.shape[1]
    errors = np.take_along_axis(q_values, actions[..., None], axis=2)[..., 0] - targets
    gradient = np.zeros_like(q_values)
    np.put_along_axis(gradient, actions[..., None],
                      (np.clip(errors, -1.0, 1.0) / batch)[..., None], axis=2)
    return gradient


def epsilon_at(step, settings):
    fraction = min(1.0, step / settings.exploration_steps)
    return 1.0 + fraction * (settings.final_epsilon - 1.0)


def train(runs, settings, n_step_return, sample_block=256):
    """Train every run (a list of :class:`Run`) for ``settings.steps`` steps, its records
    made by ``n_step_return``; one :class:`Result` per run, in order."""
    runs = list(runs)
    count = len(runs)
    seeds = [run.seed for run in runs]
    capacities = np.array([run.capacity for run in runs])
    ns = np.array([run.n for run in runs])
    groups = [(int(n), np.flatnonzero(ns == n)) for n in np.unique(ns)]
    columns = np.arange(count)[:, None]
    env = VectorCartPole(seeds, sticky=settings.sticky)
    made = [QNetwork(settings.sizes, seed) for seed in seeds]
    online, target = StackedMLP(made), StackedMLP(made)
    optimizer = StackedAdam(online, settings.learning_rate)
    memory = NStepRecords(settings.steps, count)
    # each run's exploration draws, from its own generator, fetched for the whole run
    explorers = [np.random.default_rng([seed, 0]) for seed in seeds]
    explore_draws = np.stack([rng.random(settings.steps) for rng in explorers], axis=1)
    random_actions = np.stack([rng.integers(2, size=settings.steps) for rng in explorers],
                              axis=1)
    samplers = [np.random.default_rng([seed, 1]) for seed in seeds]
    block, used = None, sample_block
    returns = np.zeros(count)
    episode_returns, episode_ends = [[] for _ in runs], [[] for _ in runs]
    updates = 0
    for step in range(1, settings.steps + 1):
        observations = env.observations
        greedy = online.outputs(observations[:, None, :])[:, 0, :].argmax(axis=1)
        explore = explore_draws[step - 1] < epsilon_at(step, settings)
        actions = np.where(explore, random_actions[step - 1], greedy)
        final, rewards, terminated, truncated = env.step(actions)
        memory.add(observations, actions, rewards, final, terminated, truncated)
        memory.complete(groups, settings.discount, n_step_return)
        returns += rewards
        for index in np.flatnonzero(terminated | truncated):
            episode_returns[index].append(float(returns[index]))
            episode_ends[index].append(step)
            returns[index] = 0.0
        for _ in range(settings.updates_by(step) - updates):
            if used == sample_block:  # each run's batches from its own generator
                block = np.stack([rng.random((sample_block, settings.batch_size))
                                  for rng in samplers], axis=1)
                used = 0
            draws = block[used]
            used += 1
            newest = memory.count
            low = np.maximum(0, newest - capacities)
            high = newest - ns  # the newest transition whose record is complete
            starts = low[:, None] + (draws * (high - low + 1)[:, None]).astype(np.int64)
            batch = memory.records[starts, columns]
            next_values = target.outputs(batch[..., memory.BOOTSTRAP]).max(axis=2)
            targets = batch[..., memory.RETURN] + batch[..., memory.DISCOUNT] * next_values
            activations = online.layers(batch[..., memory.OBSERVATION])
            gradient = huber_gradient(activations[-1],
                                      batch[..., memory.ACTION].astype(np.int64), targets)
            optimizer.step(online.gradients(activations, gradient))
            updates += 1
            if updates % settings.target_period == 0:
                target.copy_from(online)
    greedy = greedy_returns(online, seeds)
    return [Result(run, episode_returns[i], episode_ends[i], float(greedy[i]))
            for i, run in enumerate(runs)]
