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
  stored before it.

Loss (``loss``): ``"huber"`` (the lesson's: errors clipped to [-1, 1] in the gradient) or
``"squared"`` (half the squared error: the gradient is the error itself).

It exists for the lesson's ablation, which needs many seeds: CartPole's returns vary so
much from seed to seed that five runs per setting cannot tell the settings apart.
"""

import numpy as np

from course.dqn import DQNRun, epsilon_at, make_cartpole, new_networks
from course.mlp import Adam, QNetwork
from course.ring_buffer import NumpyRingBuffer

# It trains with lesson 07's answers (the learning step and the target's schedule): the
# grader keeps this module out of the sandboxes of lesson 07 and earlier.
STANDS_IN_FOR = "07_neural_replay"

REPLAYS = ("uniform", "recent", "cer")
LOSSES = ("huber", "squared")


class _StackedNetworks:
    """The parameters of one network per seed, stacked on a first axis of seeds."""

    def __init__(self, networks):
        self.weights = [np.stack([n.weights[i] for n in networks])
                        for i in range(len(networks[0].weights))]
        self.biases = [np.stack([n.biases[i] for n in networks])
                       for i in range(len(networks[0].biases))]

    def layers(self, observations):
        """[x, h1, ..., q] for observations of shape (seeds, batch, inputs)."""
        activations = [observations]
        last = len(self.weights) - 1
        for layer, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            z = activations[-1] @ weight + bias[:, None, :]
            activations.append(z if layer == last else np.maximum(z, 0.0))
        return activations

    def gradients(self, activations, upstream):
        """QNetwork.gradients for every seed: [dW1, db1, ...], each stacked."""
        weight_grads, bias_grads = [], []
        for layer in reversed(range(len(self.weights))):
            weight_grads.append(np.swapaxes(activations[layer], 1, 2) @ upstream)
            bias_grads.append(upstream.sum(axis=1))
            if layer:
                upstream = ((upstream @ np.swapaxes(self.weights[layer], 1, 2))
                            * (activations[layer] > 0))
        weight_grads.reverse()
        bias_grads.reverse()
        return [grad for pair in zip(weight_grads, bias_grads) for grad in pair]

    def parameters(self):
        """The stacked arrays themselves (not copies): [W1, b1, W2, b2, ...]."""
        return [array for pair in zip(self.weights, self.biases) for array in pair]

    def copy_from(self, other):
        self.weights = [w.copy() for w in other.weights]
        self.biases = [b.copy() for b in other.biases]

    def network(self, index, sizes):
        """Seed ``index``'s parameters as a QNetwork of its own."""
        network = QNetwork(sizes, 0)
        network.load_parameters([p[index] for p in self.parameters()])
        return network


def _checked(seeds, replay, loss):
    if replay not in REPLAYS:
        raise ValueError(f"replay must be one of {REPLAYS}, got {replay!r}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    seeds = [int(seed) for seed in seeds]
    if not seeds:
        raise ValueError("give at least one seed")
    return seeds


def train_dqn_on_seeds(seeds, settings, replay="uniform", loss="huber"):
    """One :class:`course.dqn.DQNRun` per seed, as ``course.dqn.train_dqn`` would make it
    with the course's answers, the replay and the loss named (see the module's text)."""
    seeds = _checked(seeds, replay, loss)
    envs = [make_cartpole(seed) for seed in seeds]
    explorers = [np.random.default_rng(seed) for seed in seeds]
    samplers = [np.random.default_rng(seed) for seed in seeds]  # each buffer's own
    made = [new_networks(seed, settings) for seed in seeds]
    online = _StackedNetworks([m[0] for m in made])
    target = _StackedNetworks([m[1] for m in made])
    # Adam's arithmetic is elementwise: on stacked parameters each seed keeps its moments
    optimizer = Adam(online, made[0][2].learning_rate)
    capacity = settings.batch_size if replay == "recent" else settings.capacity
    observations = np.stack([env.reset(seed=seed)[0] for env, seed in zip(envs, seeds)])
    # one ring for all seeds: slot t holds every seed's transition of step t
    rings = NumpyRingBuffer(capacity)
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
        rings.add(observations, np.array(actions), rewards, next_observations, terminated)
        returns += rewards
        observations = next_observations
        for index, (_, _, ended, truncated, _) in enumerate(outcomes):
            if ended or truncated:
                episode_returns[index].append(float(returns[index]))
                episode_ends[index].append(step)
                returns[index] = 0.0
                observations[index] = envs[index].reset()[0]
        if step >= settings.learning_starts:
            _learn(online, target, optimizer, rings, samplers, replay, loss, settings,
                   every_seed)
            if step % settings.target_period == 0:
                target.copy_from(online)
    sizes = made[0][0].sizes
    return [DQNRun(online.network(index, sizes), target.network(index, sizes),
                   episode_returns[index], episode_ends[index])
            for index in range(len(seeds))]


def _learn(online, target, optimizer, rings, samplers, replay, loss, settings, every_seed):
    """The course's dqn_step (its td_targets and loss gradient) for every seed at once."""
    newest = (rings.position - 1) % rings.size
    if replay == "uniform":
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
    batch = rings[slots, every_seed[:, None]]
    observations, actions, rewards, next_observations, terminated = batch
    observations = observations.astype(np.float64)
    next_values = target.layers(next_observations.astype(np.float64))[-1].max(axis=2)
    targets = rewards + settings.discount * np.where(terminated, 0.0, next_values)
    activations = online.layers(observations)
    rows = np.arange(actions.shape[1])
    q_taken = activations[-1][every_seed[:, None], rows[None, :], actions]
    errors = q_taken - targets
    if loss == "huber":
        errors = np.clip(errors, -1.0, 1.0)
    gradient = np.zeros_like(activations[-1])
    gradient[every_seed[:, None], rows[None, :], actions] = errors / len(rows)
    optimizer.step(online.gradients(activations, gradient))
