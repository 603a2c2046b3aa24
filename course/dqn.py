"""Deep Q-learning on CartPole-v1, everything but the learning step (lesson 07).

``train_dqn`` plays CartPole epsilon-greedily with an online ``QNetwork``, stores every
transition in a replay buffer, and at every step after ``learning_starts`` calls the
learning step it is given, then the target network's schedule it is given:

    learn(online, target, optimizer, replay, batch_size, discount, beta)
    sync_target(online, target, step, period)

Students write both in lesson 07; the loop, the buffers without priorities and the
evaluation are here so the grader and the notebook run the very same experiment.
"""

from dataclasses import dataclass, replace

import gymnasium as gym
import numpy as np
from tqdm.auto import tqdm

from course.mlp import Adam, QNetwork
from course.ring_buffer import NumpyRingBuffer

# A uniform ring buffer would stand in for lesson 02's answer, and a window of the newest
# transitions passes some of lesson 05's sampling checks: the grader keeps this module out
# of the sandboxes of lesson 05 and earlier.
STANDS_IN_FOR = "05_combined_replay"

CARTPOLE_NETWORK = (4, 64, 64, 2)  # observation, two hidden layers of 64, one Q per action


@dataclass(frozen=True)
class DQNSettings:
    """A DQN that learns CartPole-v1 in a few thousand steps (tuned on this course's
    machine; Mnih et al. 2015 use 50M frames, a 1M buffer and a 10k-step target period)."""

    steps: int = 6000  # environment steps (lesson 07 trains 20 seeds x 11 settings of this)
    batch_size: int = 64
    discount: float = 0.99
    learning_rate: float = 5e-4  # Adam
    capacity: int = 10_000  # replay buffer
    target_period: int = 500  # steps between target syncs; 1 means no target network
    learning_starts: int = 500  # steps of acting before the first update
    exploration_steps: int = 2000  # epsilon falls linearly from 1 to final_epsilon
    final_epsilon: float = 0.05
    beta_start: float = 0.4  # prioritized replay: beta rises linearly to 1 at the end

    def with_(self, **changes):
        return replace(self, **changes)


class UniformReplay:
    """Uniform replay on a numpy ring: ``sample(batch_size)`` draws with replacement and
    returns (observations, actions, rewards, next_observations, terminated)."""

    def __init__(self, capacity, seed=None):
        self.storage = NumpyRingBuffer(capacity)
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.storage)

    def add(self, observation, action, reward, next_observation, terminated):
        self.storage.add(observation, action, reward, next_observation, terminated)

    def sample(self, batch_size):
        if batch_size <= 0 or not len(self):
            raise ValueError(f"cannot sample {batch_size} from {len(self)} transitions")
        return self.storage[self.rng.integers(len(self), size=batch_size)]


class RecentTransitions(UniformReplay):
    """No replay, at replay's cost: every batch is the ``capacity`` newest transitions, in
    the order they happened (consecutive, correlated steps), whatever ``batch_size``."""

    def sample(self, batch_size):
        if not len(self):
            raise ValueError("cannot sample from an empty buffer")
        newest = self.storage.position - 1
        return self.storage[(newest - np.arange(len(self))[::-1]) % self.storage.size]


def make_cartpole(seed=None):
    """CartPole-v1 (500 steps at most), seeded."""
    env = gym.make("CartPole-v1")
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env


def epsilon_at(step, settings):
    """Exploration at ``step`` (1, 2, ...): linear from 1 to ``final_epsilon``."""
    fraction = min(1.0, step / settings.exploration_steps)
    return 1.0 + fraction * (settings.final_epsilon - 1.0)


def beta_at(step, settings):
    """Prioritized replay's beta at ``step``: linear from ``beta_start`` to 1."""
    return settings.beta_start + (1.0 - settings.beta_start) * min(1.0, step / settings.steps)


@dataclass
class DQNRun:
    online: QNetwork
    target: QNetwork
    episode_returns: list  # the return of every finished episode
    episode_ends: list  # the step at which each one ended

    def returns_by_step(self, steps):
        """At every step 1..steps, the return of the latest finished episode (0 before
        the first): a learning curve on an axis all runs share."""
        curve = np.zeros(steps)
        for end, value in zip(self.episode_ends, self.episode_returns):
            curve[end - 1:] = value
        return curve


def new_networks(seed, settings):
    """(online, target, optimizer): both networks equal (same seed), Adam on the online."""
    online, target = QNetwork(CARTPOLE_NETWORK, seed), QNetwork(CARTPOLE_NETWORK, seed)
    return online, target, Adam(online, settings.learning_rate)


def train_dqn(learn, sync_target, replay, seed, settings=DQNSettings(), prioritized=False,
              prioritized_beta=None, progress=False, desc="DQN", networks=new_networks,
              env=None):
    """Train a CartPole DQN for ``settings.steps`` steps; return the :class:`DQNRun`.

    ``learn`` and ``sync_target`` are called as the module docstring says; ``beta`` is
    None unless ``prioritized``, then ``prioritized_beta`` if given (0: no importance
    weights) or else annealed from ``beta_start`` to 1. ``networks(seed, settings)``
    makes (online, target, optimizer); they start equal, so the target needs no sync
    before the first update. ``env``: ``make_cartpole(seed)`` unless given.
    """
    env = make_cartpole(seed) if env is None else env
    rng = np.random.default_rng(seed)
    online, target, optimizer = networks(seed, settings)
    run = DQNRun(online, target, [], [])
    observation, _ = env.reset(seed=seed)
    episode_return = 0.0
    for step in tqdm(range(1, settings.steps + 1), desc=desc, disable=not progress,
                     leave=False):
        if rng.random() < epsilon_at(step, settings):
            action = int(rng.integers(2))
        else:
            action = int(np.argmax(online.predict(observation[None])[0]))
        next_observation, reward, terminated, truncated, _ = env.step(action)
        replay.add(observation, action, reward, next_observation, terminated)
        episode_return += reward
        observation = next_observation
        if terminated or truncated:
            run.episode_returns.append(episode_return)
            run.episode_ends.append(step)
            episode_return = 0.0
            observation, _ = env.reset()
        if step >= settings.learning_starts:
            beta = None
            if prioritized:
                beta = beta_at(step, settings) if prioritized_beta is None else prioritized_beta
            learn(online, target, optimizer, replay, settings.batch_size, settings.discount,
                  beta)
            sync_target(online, target, step, settings.target_period)
    return run


class Turns:
    """Marks where :func:`train_dqn_lent` calls each function it was given. Does nothing:
    the grader lends it by mirroring, and its marks in the transcript tell the grader
    which calls that follow are whose."""

    def begin(self, name):
        return None


def train_dqn_lent(learn, sync_target, env, replay, online, target, optimizer, turns, seed,
                   settings):
    """:func:`train_dqn` as the grader runs it where the student's code runs, on the
    environment, buffer, networks and optimizer it lends there (copies: the grader
    replays every call on its own and checks it), with ``settings`` as a dict of
    :class:`DQNSettings`' fields. ``turns.begin("learn")`` and ``turns.begin("sync")``
    mark each call of ``learn`` and of ``sync_target``. Returns nothing: the grader reads
    its own objects, never this process's."""
    def learn_turn(*args):
        turns.begin("learn")
        learn(*args)

    def sync_turn(*args):
        turns.begin("sync")
        sync_target(*args)

    train_dqn(learn_turn, sync_turn, replay, seed, DQNSettings(**settings),
              networks=lambda *_: (online, target, optimizer), env=env)


def greedy_return(network, seed, episodes=10):
    """The mean return of the greedy policy of ``network`` over ``episodes`` CartPole
    episodes started from seeds derived from ``seed``."""
    total = 0.0
    env = gym.make("CartPole-v1")
    for episode in range(episodes):
        observation, _ = env.reset(seed=int(seed) * 1000 + 7919 + episode)
        done = False
        while not done:
            action = int(np.argmax(network.predict(observation[None])[0]))
            observation, reward, terminated, truncated, _ = env.step(action)
            total += reward
            done = terminated or truncated
    return total / episodes
