"""Lesson 07's DQN trained on many seeds at once: every seed's network, optimiser and
replay buffer are slices of stacked numpy arrays, so one matrix product serves all seeds.

``train_dqn_on_seeds(seeds, settings, replay=..., loss=...)`` runs, for each seed, what
``course.dqn.train_dqn`` runs with the course's answers (``td_targets``, the loss's
gradient, ``dqn_step``, ``sync_target``) and that seed's CartPole, exploration generator,
``QNetwork`` and buffer, and returns one ``course.dqn.DQNRun`` per seed. The arithmetic is
the same, step for step; ``tests/test_many_seeds_dqn.py`` checks that a seed's run equals
the one-seed loop's (same actions, same episodes, parameters equal to 1e-9).

Replay (``replay``):
- ``"uniform"``: ``course.dqn.UniformReplay`` (``settings.capacity``, batches drawn with
  replacement from the seed's generator);
- ``"recent"``: ``course.dqn.RecentTransitions`` (no replay: every batch is the
  ``settings.batch_size`` newest transitions, each used as often as in uniform replay);
- ``"cer"``: lesson 05's ``CombinedReplayBuffer`` (``settings.capacity``): the newest
  transition first, then ``batch_size - 1`` drawn uniformly with replacement from those
  stored before it;
- ``"prioritized"``: lesson 03's ``PrioritizedReplayBuffer`` (``settings.capacity``,
  alpha 0.6: proportional priorities in a sum tree, one tree per seed, stacked), with beta
  ``prioritized_beta`` (0: no importance weights) or, when it is None, annealed as
  ``course.dqn.beta_at`` anneals it; the TD errors go back as priorities.

Loss (``loss``): ``"huber"`` (the lesson's: errors clipped to [-1, 1] in the gradient) or
``"squared"`` (half the squared error: the gradient is the error itself).

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

# It trains with lesson 07's answers (the learning step and the target's schedule): the
# grader keeps this module out of the sandboxes of lesson 07 and earlier.
STANDS_IN_FOR = "07_neural_replay"

REPLAYS = ("uniform", "recent", "cer", "prioritized")
LOSSES = ("huber", "squared")


class _StackedPriorities:
    """Lesson 03's PrioritizedReplayBuffer's priorities for every seed: each row of
    ``nodes`` is one seed's sum tree (node 1 the root, node k's children 2k and 2k + 1,
    slot i at leaf ``leaf_count + i``); the transitions are in the shared ring."""

    def __init__(self, generators, capacity, alpha=0.6, epsilon=1e-6):
        self.generators, self.capacity = generators, capacity
        self.alpha, self.epsilon = alpha, epsilon
        self.leaf_count = 1 << (capacity - 1).bit_length()
        self.depth = self.leaf_count.bit_length() - 1
        self.nodes = np.zeros((len(generators), 2 * self.leaf_count))
        self.max_priority = [1.0] * len(generators)
        self.rows = np.arange(len(generators))[:, None]

    def set(self, slots, priorities):
        """Each seed's priorities at its slots (shape (seeds, k)), and every sum above."""
        nodes = self.leaf_count + slots
        self.nodes[self.rows, nodes] = priorities
        children = self.nodes.reshape(len(self.nodes), -1, 2)
        for _ in range(self.depth):
            nodes = nodes // 2
            self.nodes[self.rows, nodes] = children[self.rows, nodes].sum(axis=2)

    def add(self, slot):
        """A new transition at ``slot`` in every seed's tree, at its largest priority."""
        newest = [[priority ** self.alpha] for priority in self.max_priority]
        self.set(np.full((len(self.nodes), 1), slot), np.array(newest))

    def sample(self, batch_size, beta, stored):
        """(slots, importance weights), each (seeds, batch_size): one draw from each equal
        slice of the total priority, as PrioritizedReplayBuffer.sample draws."""
        total = self.nodes[:, 1]
        masses = np.stack([(np.arange(batch_size) + rng.random(batch_size)) * (sum_ / batch_size)
                           for rng, sum_ in zip(self.generators, total.tolist())])
        masses = np.clip(masses, 0.0, np.nextafter(total, 0.0)[:, None])
        nodes = np.ones(masses.shape, dtype=np.int64)
        for _ in range(self.depth):
            nodes *= 2
            left_sum = self.nodes[self.rows, nodes]
            go_right = masses >= left_sum
            masses -= left_sum * go_right
            nodes += go_right
        slots = np.minimum(np.minimum(nodes - self.leaf_count, self.capacity - 1), stored - 1)
        probabilities = self.nodes[self.rows, self.leaf_count + slots] / total[:, None]
        weights = (stored * probabilities) ** -beta
        return slots, weights / weights.max(axis=1, keepdims=True)

    def update(self, slots, td_errors):
        """p = |delta| + epsilon at each seed's sampled slots; p^alpha into its tree."""
        priorities = np.abs(td_errors) + self.epsilon
        self.set(slots, priorities ** self.alpha)
        self.max_priority = [max(old, new) for old, new
                             in zip(self.max_priority, priorities.max(axis=1).tolist())]


class _StackedNetworks:
    """The parameters of one network per seed, stacked on a first axis of seeds, all in
    one array ``flat`` (seeds, parameters): the weights and biases are views into it, so
    that the optimiser updates them all in a few whole-array operations."""

    def __init__(self, networks):
        shapes = [p.shape for p in networks[0].parameters()]
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

    def network(self, index, sizes):
        """Seed ``index``'s parameters as a QNetwork of its own."""
        network = QNetwork(sizes, 0)
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


def _checked(seeds, replay, loss, prioritized_beta, workers):
    if replay not in REPLAYS:
        raise ValueError(f"replay must be one of {REPLAYS}, got {replay!r}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if prioritized_beta is not None and replay != "prioritized":
        raise ValueError(f"prioritized_beta is for replay='prioritized', not {replay!r}")
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers must be a whole number of at least 1, got {workers!r}")
    seeds = [int(seed) for seed in seeds]
    if not seeds:
        raise ValueError("give at least one seed")
    return seeds


def train_dqn_on_seeds(seeds, settings, replay="uniform", loss="huber", prioritized_beta=None,
                       workers=1):
    """One :class:`course.dqn.DQNRun` per seed, as ``course.dqn.train_dqn`` would make it
    with the course's answers, the replay and the loss named (see the module's text)."""
    seeds = _checked(seeds, replay, loss, prioritized_beta, workers)
    groups = [[int(seed) for seed in group]
              for group in np.array_split(seeds, min(workers, len(seeds)))]
    if len(groups) == 1:
        return _train_group(seeds, settings, replay, loss, prioritized_beta)
    with ThreadPoolExecutor(len(groups)) as pool:
        trained = pool.map(lambda group: _train_group(group, settings, replay, loss,
                                                      prioritized_beta), groups)
        return [run for runs in trained for run in runs]


def _train_group(seeds, settings, replay, loss, prioritized_beta):
    envs = [make_cartpole(seed) for seed in seeds]
    explorers = [np.random.default_rng(seed) for seed in seeds]
    samplers = [np.random.default_rng(seed) for seed in seeds]  # each buffer's own
    made = [new_networks(seed, settings) for seed in seeds]
    online = _StackedNetworks([m[0] for m in made])
    target = _StackedNetworks([m[1] for m in made])
    optimizer = _StackedAdam(online, made[0][2].learning_rate)
    capacity = settings.batch_size if replay == "recent" else settings.capacity
    observations = np.stack([env.reset(seed=seed)[0] for env, seed in zip(envs, seeds)])
    # one ring for all seeds: slot t holds every seed's transition of step t
    rings = NumpyRingBuffer(capacity)
    priorities = _StackedPriorities(samplers, capacity) if replay == "prioritized" else None
    returns = np.zeros(len(seeds))
    episode_returns = [[] for _ in seeds]
    episode_ends = [[] for _ in seeds]
    every_seed = np.arange(len(seeds))
    for step in range(1, settings.steps + 1):
        epsilon = epsilon_at(step, settings)
        explore = [rng.random() < epsilon for rng in explorers]
        greedy = online.layers(observations[:, None, :].astype(np.float64))[-1][:, 0, :]
        actions = [int(rng.integers(2)) if random else int(np.argmax(q))
                   for rng, random, q in zip(explorers, explore, greedy)]
        outcomes = [env.step(action) for env, action in zip(envs, actions)]
        next_observations = np.stack([outcome[0] for outcome in outcomes])
        rewards = np.array([outcome[1] for outcome in outcomes], dtype=np.float64)
        terminated = np.array([outcome[2] for outcome in outcomes])
        slot = rings.add(observations, np.array(actions), rewards, next_observations,
                         terminated)
        if priorities is not None:
            priorities.add(slot)
        returns += rewards
        observations = next_observations
        for index, (_, _, ended, truncated, _) in enumerate(outcomes):
            if ended or truncated:
                episode_returns[index].append(float(returns[index]))
                episode_ends[index].append(step)
                returns[index] = 0.0
                observations[index] = envs[index].reset()[0]
        if step >= settings.learning_starts:
            beta = None
            if replay == "prioritized":
                beta = beta_at(step, settings) if prioritized_beta is None else prioritized_beta
            _learn(online, target, optimizer, rings, samplers, priorities, replay, loss,
                   settings, every_seed, beta)
            if step % settings.target_period == 0:
                target.copy_from(online)
    sizes = made[0][0].sizes
    return [DQNRun(online.network(index, sizes), target.network(index, sizes),
                   episode_returns[index], episode_ends[index])
            for index in range(len(seeds))]


def _batch(rings, samplers, priorities, replay, settings, every_seed, beta):
    """Every seed's batch, stacked: (observations, actions, rewards, next observations,
    terminated, importance weights), each of shape (seeds, batch, ...), and the slots."""
    weights = None
    newest = (rings.position - 1) % rings.size
    if replay == "prioritized":
        slots, weights = priorities.sample(settings.batch_size, beta, rings.count)
    elif replay == "uniform":
        slots = np.stack([rng.integers(rings.count, size=settings.batch_size)
                          for rng in samplers])
    elif replay == "cer":  # the newest, then draws among the others, oldest numbered 0
        oldest = (rings.position - rings.count) % rings.size
        draws = np.stack([rng.integers(rings.count - 1, size=settings.batch_size - 1)
                          for rng in samplers])
        slots = np.concatenate([np.full((len(samplers), 1), newest),
                                (oldest + draws) % rings.size], axis=1)
    else:  # the newest transitions, oldest first, as RecentTransitions.sample
        slots = np.broadcast_to((newest - np.arange(rings.count)[::-1]) % rings.size,
                                (len(samplers), rings.count))
    # each seed's transitions at its own slots: shape (seeds, batch, ...)
    if weights is None:
        weights = np.ones(slots.shape)
    return [*rings[slots, every_seed[:, None]], weights, slots]


def _learn(online, target, optimizer, rings, samplers, priorities, replay, loss, settings,
           every_seed, beta):
    """The course's dqn_step (its td_targets and loss gradient) for every seed at once."""
    (observations, actions, rewards, next_observations, terminated, weights,
     slots) = _batch(rings, samplers, priorities, replay, settings, every_seed, beta)
    observations = observations.astype(np.float64)
    next_values = target.layers(next_observations.astype(np.float64))[-1].max(axis=2)
    targets = rewards + settings.discount * np.where(terminated, 0.0, next_values)
    activations = online.layers(observations)
    rows = np.arange(actions.shape[1])
    q_taken = activations[-1][every_seed[:, None], rows[None, :], actions]
    errors = q_taken - targets
    clipped = np.clip(errors, -1.0, 1.0) if loss == "huber" else errors
    gradient = np.zeros_like(activations[-1])
    gradient[every_seed[:, None], rows[None, :], actions] = weights * clipped / len(rows)
    optimizer.step(online.gradients(activations, gradient))
    if priorities is not None:
        priorities.update(slots, -errors)
