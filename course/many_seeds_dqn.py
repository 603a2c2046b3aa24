"""Lesson 07's DQN trained on many seeds at once: every seed's network and optimiser are
slices of stacked numpy arrays, so one matrix product serves all seeds.

``train_dqn_on_seeds(seeds, settings, td_targets, loss_gradient, replay=...)`` runs, for
each seed, what ``course.dqn.train_dqn`` runs with a ``dqn_step`` built on the
``td_targets`` and ``loss_gradient`` it is given (the lesson's ``huber_loss_gradient``),
and with that seed's CartPole, exploration generator, ``QNetwork`` and buffer; it returns
one ``course.dqn.DQNRun`` per seed. Step for step the arithmetic is the one-seed loop's:
``tests/lessons/test_many_seeds_dqn.py`` checks that each seed's run equals it (the same actions,
episodes and parameters) for every replay below. The module holds no answer of any
lesson: the targets and the loss's gradient are the caller's, and so are the buffers
beyond the course's own two.

One dqn_step, for every seed: draw each seed's batch; the targets from
``td_targets(target network, rewards, next observations, terminated, discount)``, called
once with every seed's rows one after another (it works row by row) and a stand-in
target network whose ``predict`` gives the stacked forward pass's rows; the gradient from ``loss_gradient(q_values, actions, targets,
weights)``, once per seed; one Adam step on the stacked parameters; with prioritized
replay, the TD errors back as priorities. The target network is synced at every multiple
of ``settings.target_period``.

Replay (``replay``):
- ``"uniform"``: ``course.dqn.UniformReplay`` (``settings.capacity``), and ``"recent"``:
  ``course.dqn.RecentTransitions`` (no replay: every batch the ``settings.batch_size``
  newest transitions), both kept for all seeds in one ring (slot t: every seed's step t);
- a function of the seed that makes that seed's buffer (lesson 05's
  ``CombinedReplayBuffer``, lesson 03's ``PrioritizedReplayBuffer``...), called as
  ``train_dqn`` calls it; with ``prioritized=True`` its ``sample`` takes a beta,
  ``prioritized_beta`` or, when that is None, ``course.dqn.beta_at``'s annealed one.

Loss (``loss``): ``"huber"``, the gradient as ``loss_gradient`` gives it, or ``"squared"``,
half the squared TD error, from the same ``loss_gradient``: divided by a power of two s at
least as large as every error of the batch, each error lies where the Huber loss is
quadratic, and s * loss_gradient(q / s, actions, targets / s, weights) is the squared
error's gradient, weights * (q - target) / B, exactly (scaling by a power of two loses no
bits).

``workers`` splits the seeds into that many groups trained side by side in threads (numpy
releases the interpreter while it multiplies); a seed's run does not depend on its group.

It exists for the lesson's ablation, which needs many seeds: CartPole's returns vary so
much from seed to seed that five runs per setting cannot tell the settings apart.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from course.dqn import DQNRun, beta_at, epsilon_at, make_cartpole, new_networks
from course.mlp import QNetwork
from course.ring_buffer import NumpyRingBuffer

# It trains lesson 07's learning step when given its answers, and could stand in for
# dqn_step: the grader keeps it out of the sandboxes of lesson 07 and earlier.
STANDS_IN_FOR = "07_neural_replay"

SHARED_RINGS = ("uniform", "recent")  # the course's own buffers, kept for all seeds at once
LOSSES = ("huber", "squared")


class _StackedNetworks:
    """The parameters of one network per seed, stacked on a first axis of seeds, all in
    one array ``flat`` (seeds, parameters): the weights and biases are views into it, so
    that the optimiser updates them all in a few whole-array operations."""

    def __init__(self, networks):
        shapes = [p.shape for p in networks[0].parameters()]
        self.sizes = networks[0].sizes
        self.flat = np.concatenate([np.concatenate([p.ravel() for p in n.parameters()])[None]
                                    for n in networks])
        views = _views(self.flat, shapes)
        self.weights, self.biases = views[0::2], views[1::2]
        self.gradient = np.zeros_like(self.flat)  # gradients() writes here, views alike
        self.gradient_views = _views(self.gradient, shapes)

    def layers(self, observations):
        """[x, h1, ..., q] for observations of shape (seeds, batch, inputs)."""
        activations = [observations]
        last = len(self.weights) - 1
        for layer, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            z = activations[-1] @ weight
            z += bias[:, None, :]
            activations.append(z if layer == last else np.maximum(z, 0.0, out=z))
        return activations

    def gradients(self, activations, upstream):
        """QNetwork.gradients for every seed, written into ``gradient`` (and returned)."""
        views = self.gradient_views
        for layer in reversed(range(len(self.weights))):
            np.matmul(np.swapaxes(activations[layer], 1, 2), upstream, out=views[2 * layer])
            upstream.sum(axis=1, out=views[2 * layer + 1])
            if layer:
                upstream = ((upstream @ np.swapaxes(self.weights[layer], 1, 2))
                            * (activations[layer] > 0))
        return self.gradient

    def parameters(self):
        """Views of the stacked arrays themselves (not copies): [W1, b1, W2, b2, ...]."""
        return [array for pair in zip(self.weights, self.biases) for array in pair]

    def copy_from(self, other):
        self.flat[...] = other.flat

    def network(self, index):
        """Seed ``index``'s parameters as a QNetwork of its own."""
        network = QNetwork(self.sizes, 0)
        network.load_parameters([p[index] for p in self.parameters()])
        return network


def _views(flat, shapes):
    """Views of ``flat`` (seeds, total) as arrays of ``shapes``, one after another."""
    views, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        views.append(flat[:, start:start + size].reshape(len(flat), *shape))
        start += size
    return views


class _StackedAdam:
    """course.mlp.Adam on every seed's parameters at once: the same arithmetic, element by
    element, in the same order, on the stacked array (each seed keeps its own moments)."""

    def __init__(self, networks, learning_rate, betas=(0.9, 0.999), epsilon=1e-8):
        self.networks, self.learning_rate, self.epsilon = networks, learning_rate, epsilon
        self.beta1, self.beta2 = betas
        self.steps = 0
        self.first = np.zeros_like(networks.flat)
        self.second = np.zeros_like(networks.flat)
        self.scratch = np.empty_like(networks.flat)
        self.denominator = np.empty_like(networks.flat)

    def step(self, gradient):
        self.steps += 1
        correction1 = 1 - self.beta1 ** self.steps
        correction2 = 1 - self.beta2 ** self.steps
        # mlp.Adam's expressions, evaluated in its order into two reused buffers
        scratch, denominator = self.scratch, self.denominator
        self.first *= self.beta1
        np.multiply(1 - self.beta1, gradient, out=scratch)
        self.first += scratch
        self.second *= self.beta2
        np.multiply(1 - self.beta2, gradient, out=scratch)
        scratch *= gradient
        self.second += scratch
        np.divide(self.first, correction1, out=scratch)
        np.multiply(self.learning_rate, scratch, out=scratch)
        np.divide(self.second, correction2, out=denominator)
        np.sqrt(denominator, out=denominator)
        denominator += self.epsilon
        scratch /= denominator
        self.networks.flat -= scratch


def _checked(seeds, replay, loss, prioritized, prioritized_beta, workers):
    if not (replay in SHARED_RINGS or callable(replay)):
        raise ValueError(f"replay must be one of {SHARED_RINGS} or a function of the seed "
                         f"that makes its buffer, got {replay!r}")
    if prioritized and not callable(replay):
        raise ValueError(f"prioritized replay needs a function that makes each seed's "
                         f"buffer, not {replay!r}")
    if prioritized_beta is not None and not prioritized:
        raise ValueError("prioritized_beta is for prioritized=True")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers must be a whole number of at least 1, got {workers!r}")
    seeds = [int(seed) for seed in seeds]
    if not seeds:
        raise ValueError("give at least one seed")
    return seeds


def train_dqn_on_seeds(seeds, settings, td_targets, loss_gradient, replay="uniform",
                       loss="huber", prioritized=False, prioritized_beta=None, workers=1):
    """One :class:`course.dqn.DQNRun` per seed, as ``course.dqn.train_dqn`` would make it
    with a dqn_step built on ``td_targets`` and ``loss_gradient`` (see the module's text)."""
    seeds = _checked(seeds, replay, loss, prioritized, prioritized_beta, workers)
    learning = _Learning(td_targets, loss_gradient, loss, prioritized, prioritized_beta)
    groups = [[int(seed) for seed in group]
              for group in np.array_split(seeds, min(workers, len(seeds)))]
    if len(groups) == 1:
        return _train_group(seeds, settings, replay, learning)
    with ThreadPoolExecutor(len(groups)) as pool:
        trained = pool.map(lambda group: _train_group(group, settings, replay, learning),
                           groups)
        return [run for runs in trained for run in runs]


class _Learning:
    """What a dqn_step is made of here: the caller's targets and loss gradient, the loss,
    and whether (and with which beta) the buffers are prioritized."""

    def __init__(self, td_targets, loss_gradient, loss, prioritized, prioritized_beta):
        self.td_targets, self.loss_gradient, self.loss = td_targets, loss_gradient, loss
        self.prioritized, self.prioritized_beta = prioritized, prioritized_beta

    def beta(self, step, settings):
        if not self.prioritized:
            return None
        return beta_at(step, settings) if self.prioritized_beta is None else self.prioritized_beta

    def gradient(self, q_values, actions, targets, weights):
        """The loss's gradient for one seed's batch, d loss / d q_values."""
        if self.loss == "huber":
            return self.loss_gradient(q_values, actions, targets, weights)
        rows = np.arange(len(actions))
        largest = float(np.max(np.abs(q_values[rows, actions] - targets), initial=0.0))
        scale = 2.0 ** max(0, int(np.ceil(np.log2(largest)))) if largest > 0 else 1.0
        return scale * np.asarray(self.loss_gradient(q_values / scale, actions,
                                                     targets / scale, weights))


class _TargetOutputs:
    """The target networks as ``td_targets`` sees them, for every seed's rows at once:
    ``predict`` of those rows gives the stacked forward pass's outputs. Anything else
    (another batch, parameters, weights...) is refused: the stand-in is one network
    only as far as these rows go."""

    def __init__(self, inputs, outputs):
        self.inputs, self.outputs = inputs, outputs

    def predict(self, observations):
        if observations is self.inputs or np.array_equal(observations, self.inputs):
            return self.outputs.copy()
        raise ValueError("the many-seed runner's target network answers predict() for the "
                         "batch's next observations only")

    def __getattr__(self, name):
        raise AttributeError(f"the many-seed runner's target network has predict() only (of "
                             f"the batch's next observations), not {name!r}: compute the "
                             f"targets from target_network.predict(next_observations)")


def _train_group(seeds, settings, replay, learning):
    envs = [make_cartpole(seed) for seed in seeds]
    explorers = [np.random.default_rng(seed) for seed in seeds]
    made = [new_networks(seed, settings) for seed in seeds]
    online = _StackedNetworks([m[0] for m in made])
    target = _StackedNetworks([m[1] for m in made])
    optimizer = _StackedAdam(online, made[0][2].learning_rate)
    if callable(replay):
        memory = _SeedBuffers([replay(seed) for seed in seeds])
    else:
        memory = _SharedRing(replay, seeds, settings)
    observations = np.stack([env.reset(seed=seed)[0] for env, seed in zip(envs, seeds)])
    returns = np.zeros(len(seeds))
    episode_returns = [[] for _ in seeds]
    episode_ends = [[] for _ in seeds]
    for step in range(1, settings.steps + 1):
        epsilon = epsilon_at(step, settings)
        explore = [rng.random() < epsilon for rng in explorers]
        greedy = online.layers(observations[:, None, :].astype(np.float64))[-1][:, 0, :]
        actions = [int(rng.integers(2)) if random else int(np.argmax(q))
                   for rng, random, q in zip(explorers, explore, greedy)]
        outcomes = [env.step(action) for env, action in zip(envs, actions)]
        next_observations = np.stack([outcome[0] for outcome in outcomes])
        rewards = [outcome[1] for outcome in outcomes]
        terminated = [outcome[2] for outcome in outcomes]
        memory.add(observations, actions, rewards, next_observations, terminated)
        returns += rewards
        observations = next_observations
        for index, (_, _, ended, truncated, _) in enumerate(outcomes):
            if ended or truncated:
                episode_returns[index].append(float(returns[index]))
                episode_ends[index].append(step)
                returns[index] = 0.0
                observations[index] = envs[index].reset()[0]
        if step >= settings.learning_starts:
            _dqn_step(online, target, optimizer, memory, learning, settings,
                      learning.beta(step, settings))
            if step % settings.target_period == 0:
                target.copy_from(online)
    return [DQNRun(online.network(index), target.network(index),
                   episode_returns[index], episode_ends[index])
            for index in range(len(seeds))]


class _SharedRing:
    """The course's UniformReplay ("uniform") or RecentTransitions ("recent") for every
    seed in one ring: slot t holds every seed's transition of step t."""

    def __init__(self, kind, seeds, settings):
        self.kind = kind
        self.ring = NumpyRingBuffer(settings.batch_size if kind == "recent"
                                    else settings.capacity)
        self.samplers = [np.random.default_rng(seed) for seed in seeds]  # each buffer's own
        self.every_seed = np.arange(len(seeds))[:, None]

    def add(self, observations, actions, rewards, next_observations, terminated):
        self.ring.add(observations, np.array(actions), np.array(rewards, dtype=np.float64),
                      next_observations, np.array(terminated))

    def sample(self, batch_size, beta):
        ring = self.ring
        if self.kind == "uniform":  # as UniformReplay.sample, from each seed's generator
            slots = np.stack([rng.integers(ring.count, size=batch_size)
                              for rng in self.samplers])
        else:  # as RecentTransitions.sample: the newest, oldest first
            newest = ring.position - 1
            slots = np.broadcast_to((newest - np.arange(ring.count)[::-1]) % ring.size,
                                    (len(self.samplers), ring.count))
        return (*ring[slots, self.every_seed], None, None)


class _SeedBuffers:
    """One buffer per seed, each used as train_dqn uses a buffer."""

    def __init__(self, buffers):
        self.buffers = buffers

    def add(self, observations, actions, rewards, next_observations, terminated):
        for buffer, *transition in zip(self.buffers, observations, actions, rewards,
                                       next_observations, terminated):
            buffer.add(*transition)

    def sample(self, batch_size, beta):
        if beta is None:
            batches = [buffer.sample(batch_size) for buffer in self.buffers]
            return (*[_stacked(part) for part in zip(*batches)], None, None)
        batches = [buffer.sample(batch_size, beta) for buffer in self.buffers]
        return tuple(_stacked(part) for part in zip(*batches))

    def update_priorities(self, slots, td_errors):
        for buffer, seed_slots, seed_errors in zip(self.buffers, slots, td_errors):
            buffer.update_priorities(seed_slots, seed_errors)


def _stacked(part):
    return np.stack([np.asarray(array) for array in part])


def _dqn_step(online, target, optimizer, memory, learning, settings, beta):
    """dqn_step for every seed: batch, targets, Q-values, gradient, one Adam step."""
    (observations, actions, rewards, next_observations, terminated, weights,
     slots) = memory.sample(settings.batch_size, beta)
    actions = actions.astype(np.int64)
    next_values = target.layers(next_observations.astype(np.float64))[-1]
    activations = online.layers(observations.astype(np.float64))
    q_values = activations[-1]
    seeds, batch = q_values.shape[:2]
    rows = np.arange(batch)
    if weights is None:
        weights = np.ones(actions.shape)
    # td_targets works row by row: one call takes every seed's rows, one after another
    every_next = next_observations.reshape(seeds * batch, -1)
    targets = np.asarray(learning.td_targets(
        _TargetOutputs(every_next, next_values.reshape(seeds * batch, -1)),
        rewards.reshape(-1), every_next, terminated.reshape(-1), settings.discount),
        dtype=np.float64).reshape(seeds, batch)
    gradient, td_errors = np.empty_like(q_values), []
    for seed in range(seeds):  # the loss is a mean over one seed's batch: a call per seed
        if slots is not None:  # prioritized: the TD errors go back as priorities
            td_errors.append(targets[seed] - q_values[seed][rows, actions[seed]])
        gradient[seed] = learning.gradient(q_values[seed], actions[seed], targets[seed],
                                           weights[seed])
    optimizer.step(online.gradients(activations, gradient))
    if td_errors:
        memory.update_priorities(slots, td_errors)
