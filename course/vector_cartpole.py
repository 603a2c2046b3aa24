"""CartPole-v1 for many environments at once, in numpy: gymnasium's dynamics, seeding and
500-step time limit, one environment per row.

Environment ``i`` made with seed ``s`` behaves as ``gym.make("CartPole-v1")`` reset with
``seed=s`` and then reset without a seed after every episode: its start states come from
its own ``np.random.default_rng(s)`` (the generator gymnasium seeds its environment with),
so a seed's episodes do not depend on which environments run beside it.
``tests/lessons/test_vector_cartpole.py`` steps the two side by side.

``step(actions)`` returns ``(final_observations, rewards, terminated, truncated)`` and then
resets every environment whose episode ended: ``final_observations`` are the states the
actions led to (the terminal or truncated state itself, which a replay buffer stores),
and ``observations`` afterwards holds what the agent sees next (a fresh start where an
episode ended). Observations are float32, as gymnasium gives them; the state is float64.

Sticky actions (Machado et al. 2018): with probability ``sticky`` an environment repeats
its previous action instead of the one chosen (never on an episode's first step), drawn
from a generator of its own seed.
"""

import numpy as np

GRAVITY, MASS_CART, MASS_POLE, HALF_LENGTH, FORCE, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TOTAL_MASS = MASS_CART + MASS_POLE
POLE_MASS_LENGTH = MASS_POLE * HALF_LENGTH
THETA_LIMIT = 12 * 2 * np.pi / 360
X_LIMIT = 2.4
TIME_LIMIT = 500
STICKY_DRAWS = 1000  # sticky draws fetched at once from each environment's generator


class VectorCartPole:
    """``len(seeds)`` CartPole-v1 environments stepped together."""

    def __init__(self, seeds, time_limit=TIME_LIMIT, sticky=0.0):
        seeds = [int(seed) for seed in seeds]
        self.rngs = [np.random.default_rng(seed) for seed in seeds]
        self.time_limit = time_limit
        self.state = np.stack([rng.uniform(-0.05, 0.05, size=4) for rng in self.rngs])
        self.elapsed = np.zeros(len(seeds), dtype=np.int64)
        self.sticky = sticky
        self.sticky_rngs = [np.random.default_rng([seed, 2]) for seed in seeds]
        self.previous = np.zeros(len(seeds), dtype=np.int64)
        self.draws, self.used = None, STICKY_DRAWS

    def __len__(self):
        return len(self.rngs)

    @property
    def observations(self):
        return self.state.astype(np.float32)

    def step(self, actions):
        actions = np.asarray(actions)
        if self.sticky > 0:
            actions = self._sticky(actions)
        x, x_dot, theta, theta_dot = self.state.T
        force = np.where(actions == 1, FORCE, -FORCE)
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + POLE_MASS_LENGTH * np.square(theta_dot) * sin) / TOTAL_MASS
        theta_acc = (GRAVITY * sin - cos * temp) / (
            HALF_LENGTH * (4.0 / 3.0 - MASS_POLE * np.square(cos) / TOTAL_MASS))
        x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS
        self.state = np.stack([x + TAU * x_dot, x_dot + TAU * x_acc,
                               theta + TAU * theta_dot, theta_dot + TAU * theta_acc], axis=1)
        final = self.state.astype(np.float32)
        x, theta = self.state[:, 0], self.state[:, 2]
        terminated = (x < -X_LIMIT) | (x > X_LIMIT) | (theta < -THETA_LIMIT) | (theta > THETA_LIMIT)
        self.elapsed += 1
        truncated = ~terminated & (self.elapsed >= self.time_limit)
        for index in np.flatnonzero(terminated | truncated):
            self.state[index] = self.rngs[index].uniform(-0.05, 0.05, size=4)
            self.elapsed[index] = 0
        return final, np.ones(len(self)), terminated, truncated

    def _sticky(self, actions):
        if self.used == STICKY_DRAWS:
            self.draws = np.stack([rng.random(STICKY_DRAWS) for rng in self.sticky_rngs],
                                  axis=1)
            self.used = 0
        stuck = (self.draws[self.used] < self.sticky) & (self.elapsed > 0)
        self.used += 1
        self.previous = np.where(stuck, self.previous, actions)
        return self.previous


def greedy_returns(network, seeds, episodes=10, time_limit=TIME_LIMIT):
    """Mean return of each run's greedy policy (the argmax of ``network.outputs``, a
    course.stacked_networks.StackedMLP) over ``episodes`` episodes, all at once; episode e
    of a run with seed s starts as CartPole-v1 reset with seed s*1000+7919+e."""
    runs = len(seeds)
    env = VectorCartPole([int(seed) * 1000 + 7919 + e for seed in seeds for e in range(episodes)])
    totals = np.zeros(runs * episodes)
    running = np.ones(runs * episodes, bool)
    for _ in range(time_limit):
        outputs = network.outputs(env.observations.reshape(runs, episodes, -1))
        _, rewards, terminated, truncated = env.step(outputs.argmax(axis=2).reshape(-1))
        totals += rewards * running
        running &= ~(terminated | truncated)
        if not running.any():
            break
    return totals.reshape(runs, episodes).mean(axis=1)


class EpisodeCurve:
    """The learning curve of a run that has ``episode_returns`` and ``episode_ends`` (the
    step each episode ended on), as course.dqn.DQNRun.returns_by_step draws it."""

    def curve(self, steps):
        """At every step, the return of the latest finished episode (0 before the first)."""
        curve = np.zeros(steps)
        for end, value in zip(self.episode_ends, self.episode_returns):
            curve[end - 1:] = value
        return curve

    def mean_training_return(self, steps):
        """The area under the learning curve, per step."""
        return float(self.curve(steps).mean())

    def late_training_return(self, steps):
        """The learning curve's mean over the last quarter of training."""
        return float(self.curve(steps)[-(steps // 4):].mean())
