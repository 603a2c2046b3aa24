"""Lesson 08's on-policy contrast: advantage actor-critic (A2C) with a rollout buffer that
is used once and cleared, against the same learner reusing each rollout k times with no
correction. Many runs at once, as ``course.nstep_dqn``.

Every run has one CartPole-v1 (``course.vector_cartpole``), a policy network (4-32-32-2,
softmax over its outputs) and a value network (4-32-32-1), stacked over runs
(``course.stacked_networks``). A run collects a rollout of ``settings.rollout`` steps with
its current policy; the caller's ``gae(rewards, values, next_values, terminated,
truncated, discount, lam)`` (the lesson's answer) turns it into advantages and returns;
the advantages are normalised over the rollout; then the run takes ``reuse`` Adam steps
on the whole rollout (policy loss -mean(log pi(a|s) A), value loss mean((V(s) - return)^2)
/ 2) and the rollout is cleared. With reuse = 1 this is A2C: the rollout is used once, by
the policy that collected it. With reuse = k > 1, steps 2..k use a policy that did not
collect the data, with the old policy's advantages and no importance ratio
pi_new / pi_old: uncorrected reuse (PPO's reuse without its ratio and clipping). Every k
takes the same environment steps; only the gradient steps differ.
"""

from dataclasses import dataclass, replace

import numpy as np

from course.mlp import QNetwork
from course.stacked_networks import StackedAdam, StackedMLP
from course.vector_cartpole import EpisodeCurve, VectorCartPole, greedy_returns


@dataclass(frozen=True)
class A2CSettings:
    steps: int = 20_000  # environment steps per run
    rollout: int = 64  # steps per rollout: the buffer's size
    hidden: int = 32
    discount: float = 0.99
    gae_lambda: float = 0.95
    learning_rate: float = 1e-2  # the policy's and the value network's

    def with_(self, **changes):
        return replace(self, **changes)


@dataclass
class A2CResult(EpisodeCurve):
    seed: int
    reuse: int
    episode_returns: list
    episode_ends: list  # the step each episode ended on
    greedy_return: float  # mean over 10 episodes of the most probable action


class BadGAE(ValueError):
    """The gae given gave something the experiment cannot use."""


def softmax(logits):
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _checked_gae(parts, shape):
    try:
        advantages, returns = parts
    except (TypeError, ValueError):
        raise BadGAE("gae must return two arrays: (advantages, returns)") from None
    advantages, returns = np.asarray(advantages, np.float64), np.asarray(returns, np.float64)
    if advantages.shape != shape or returns.shape != shape:
        raise BadGAE(f"gae was given rewards of shape {shape} and must return advantages and "
                     f"returns of that shape")
    return advantages, returns


def train_a2c(seeds, reuse, settings, gae):
    """One run per seed, each rollout reused ``reuse`` times; one A2CResult per seed."""
    seeds = [int(seed) for seed in seeds]
    runs, length = len(seeds), settings.rollout
    env = VectorCartPole(seeds)
    sizes = (4, settings.hidden, settings.hidden)
    policy = StackedMLP([QNetwork((*sizes, 2), seed) for seed in seeds])
    critic = StackedMLP([QNetwork((*sizes, 1), [seed, 7]) for seed in seeds])
    policy_optimizer = StackedAdam(policy, settings.learning_rate)
    critic_optimizer = StackedAdam(critic, settings.learning_rate)
    draws = np.stack([np.random.default_rng([seed, 0]).random(settings.steps)
                      for seed in seeds], axis=1)
    observations = np.zeros((length, runs, 4), np.float32)
    finals = np.zeros((length, runs, 4), np.float32)
    actions = np.zeros((length, runs), np.int64)
    rewards = np.zeros((length, runs))
    terminated = np.zeros((length, runs), bool)
    truncated = np.zeros((length, runs), bool)
    returns = np.zeros(runs)
    episode_returns, episode_ends = [[] for _ in seeds], [[] for _ in seeds]
    step, filled = 0, 0
    while step < settings.steps:
        seen = env.observations
        probabilities = softmax(policy.outputs(seen[:, None, :])[:, 0, :])
        action = (draws[step] > probabilities[:, 0]).astype(np.int64)  # P(1) = 1 - P(0)
        final, reward, term, trunc = env.step(action)
        step += 1
        observations[filled], finals[filled], actions[filled] = seen, final, action
        rewards[filled], terminated[filled], truncated[filled] = reward, term, trunc
        filled += 1
        returns += reward
        for index in np.flatnonzero(term | trunc):
            episode_returns[index].append(float(returns[index]))
            episode_ends[index].append(step)
            returns[index] = 0.0
        if filled < length and step < settings.steps:
            continue
        _learn_from_rollout(policy, critic, policy_optimizer, critic_optimizer, reuse, gae,
                            settings, observations[:filled], finals[:filled],
                            actions[:filled], rewards[:filled], terminated[:filled],
                            truncated[:filled])
        filled = 0  # cleared: this rollout is never seen again
    greedy = greedy_returns(policy, seeds)
    return [A2CResult(seed, reuse, episode_returns[i], episode_ends[i], float(greedy[i]))
            for i, seed in enumerate(seeds)]


def _learn_from_rollout(policy, critic, policy_optimizer, critic_optimizer, reuse, gae,
                        settings, observations, finals, actions, rewards, terminated,
                        truncated):
    """``reuse`` steps of both networks on one rollout of every run, arrays (steps, runs)."""
    steps = len(rewards)
    states = np.swapaxes(observations, 0, 1)  # (runs, steps, 4)
    values = critic.outputs(states)[..., 0].T.astype(np.float64)
    next_values = critic.outputs(np.swapaxes(finals, 0, 1))[..., 0].T.astype(np.float64)
    advantages, targets = _checked_gae(
        gae(rewards.copy(), values, next_values, terminated.copy(), truncated.copy(),
            settings.discount, settings.gae_lambda), rewards.shape)
    advantages = (advantages - advantages.mean(axis=0)) / (advantages.std(axis=0) + 1e-8)
    advantages = advantages.T[..., None].astype(np.float32)
    targets = targets.T.astype(np.float32)
    taken = np.eye(2, dtype=np.float32)[actions.T]  # (runs, steps, 2)
    for _ in range(reuse):  # no importance ratio: the stored advantages, as they are
        activations = policy.layers(states)
        # d/d logits of -mean(log pi(a|s) * A) is (pi - onehot(a)) * A / steps
        upstream = (softmax(activations[-1]) - taken) * advantages / steps
        policy_optimizer.step(policy.gradients(activations, upstream.astype(np.float32)))
        value_activations = critic.layers(states)
        error = value_activations[-1][..., 0] - targets
        critic_optimizer.step(critic.gradients(value_activations,
                                               (error / steps)[..., None].astype(np.float32)))
