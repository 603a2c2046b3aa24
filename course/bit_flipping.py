"""The bit-flipping environment of the HER paper (Andrychowicz et al., 2017, section 3.1).

The state is a vector of ``n`` bits, the goal another. Action i flips bit i. The reward
is -1 at every step until the state equals the goal, then 0 and the episode terminates;
after ``n`` steps it is truncated (``n`` flips always suffice). A random policy almost
never sees a reward once n is past a handful, which is what makes it the paper's
showcase for relabelling goals.

It follows gymnasium's goal-environment conventions (as in gymnasium-robotics'
``GoalEnv``, which gymnasium itself no longer ships): observations are dictionaries
with ``observation``, ``achieved_goal`` and ``desired_goal``, and ``compute_reward``,
``compute_terminated`` and ``compute_truncated`` work on batches of goals, so a replay
buffer can recompute rewards for goals it substitutes.
"""

import gymnasium as gym
import numpy as np


class BitFlippingEnv(gym.Env):
    """Flip bits until the state equals the goal; reward -1 per step, 0 on success (or
    ``step_reward`` and ``success_reward``: a goal environment's rewards are its own, and
    code that recomputes them asks it, never assumes them)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, n_bits, max_steps=None, render_mode=None, success_reward=0.0,
                 step_reward=-1.0, truncated_at_limit=False, numpy_flags=False,
                 observation_inverted=False):
        if n_bits < 1:
            raise ValueError(f"need at least one bit, got n_bits={n_bits}")
        self.n_bits = n_bits
        self.success_reward, self.step_reward = float(success_reward), float(step_reward)
        self.truncated_at_limit = truncated_at_limit
        # numpy's bool for terminated and truncated, as vectorised environments give them
        self.numpy_flags = numpy_flags
        # the observation as the state's complement: an observation that is not the
        # achieved goal, as in most goal environments (a robot's joints, not where it is)
        self.observation_inverted = observation_inverted
        self.max_steps = n_bits if max_steps is None else max_steps
        self.render_mode = render_mode
        bits = gym.spaces.MultiBinary(n_bits)
        self.observation_space = gym.spaces.Dict(
            {"observation": bits, "achieved_goal": bits, "desired_goal": bits})
        self.action_space = gym.spaces.Discrete(n_bits)
        self.state = np.zeros(n_bits, dtype=np.int8)
        self.goal = np.zeros(n_bits, dtype=np.int8)
        self.steps = 0

    def _observation(self):
        observation = 1 - self.state if self.observation_inverted else self.state.copy()
        return {"observation": observation.astype(np.int8), "achieved_goal": self.state.copy(),
                "desired_goal": self.goal.copy()}

    def reset(self, *, seed=None, options=None):
        """A random state and a different random goal (from the env's seeded generator)."""
        super().reset(seed=seed)
        self.state = self.np_random.integers(2, size=self.n_bits, dtype=np.int8)
        self.goal = self.state.copy()
        while np.array_equal(self.goal, self.state):
            self.goal = self.np_random.integers(2, size=self.n_bits, dtype=np.int8)
        self.steps = 0
        return self._observation(), {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action must be a bit index in [0, {self.n_bits}), got {action}")
        self.state[int(action)] ^= 1
        self.steps += 1
        observation = self._observation()
        reward = float(self.compute_reward(observation["achieved_goal"], self.goal, {}))
        terminated = bool(self.compute_terminated(observation["achieved_goal"], self.goal, {}))
        truncated = bool(self.compute_truncated(observation["achieved_goal"], self.goal, {}))
        if not self.truncated_at_limit:
            truncated = truncated and not terminated
        if self.numpy_flags:
            terminated, truncated = np.bool_(terminated), np.bool_(truncated)
        return observation, reward, terminated, truncated, {}

    def compute_reward(self, achieved_goal, desired_goal, info):
        """0 (success_reward) where the achieved goal equals the desired one, else -1
        (step_reward); batches: the last axis holds the bits."""
        reached = np.all(np.asarray(achieved_goal) == np.asarray(desired_goal), axis=-1)
        return np.where(reached, self.success_reward, self.step_reward)

    def compute_terminated(self, achieved_goal, desired_goal, info):
        return np.all(np.asarray(achieved_goal) == np.asarray(desired_goal), axis=-1)

    def compute_truncated(self, achieved_goal, desired_goal, info):
        return np.full(np.shape(achieved_goal)[:-1], self.steps >= self.max_steps)

    def render(self):
        if self.render_mode == "ansi":
            return ("state " + "".join(map(str, self.state)) + "  goal "
                    + "".join(map(str, self.goal)))
        return None


def make_bit_flipping(n_bits, seed=None, max_steps=None, truncated_at_limit=False,
                      numpy_flags=False, observation_inverted=False):
    """A bit-flipping environment whose resets follow ``seed`` (its first episode is
    drawn here, as ``make_taxi`` does for Taxi). ``max_steps``: its step limit (n_bits when
    not given); ``truncated_at_limit``: its last step says truncated even when it reaches the
    goal, as gymnasium's ``TimeLimit`` does; ``numpy_flags``: the flags are ``np.bool_``;
    ``observation_inverted``: the observation is the complement of the achieved goal."""
    env = BitFlippingEnv(n_bits, max_steps=max_steps, truncated_at_limit=truncated_at_limit,
                         numpy_flags=numpy_flags, observation_inverted=observation_inverted)
    env.reset(seed=seed)
    return env


def bits_to_int(bits):
    """The integers whose binary digits are ``bits`` (last axis; first bit most
    significant). Tabular agents use them as row numbers."""
    bits = np.asarray(bits, dtype=np.int64)
    return bits @ (1 << np.arange(bits.shape[-1] - 1, -1, -1, dtype=np.int64))


def int_to_bits(numbers, n_bits):
    """The inverse of :func:`bits_to_int`."""
    numbers = np.asarray(numbers, dtype=np.int64)
    return ((numbers[..., None] >> np.arange(n_bits - 1, -1, -1)) & 1).astype(np.int8)


def goal_qtable(agent, n_bits):
    """Q[state, goal, action] of a goal-conditioned agent whose states are the pairs
    ``(state, goal)`` of :func:`bits_to_int` numbers, read through ``agent.get_qvalue``."""
    size = 2 ** n_bits
    table = np.empty((size, size, n_bits))
    for state in range(size):
        for goal in range(size):
            pair = (state, goal)
            for action in range(n_bits):
                table[state, goal, action] = agent.get_qvalue(pair, action)
    return table


def greedy_success_rate(qtable):
    """The share of (state, goal) pairs, state != goal, from which the greedy policy of
    ``qtable`` (ties to the lowest bit) reaches the goal within n flips. Every pair is
    rolled out at once with numpy, so the number is exact, not an estimate."""
    qtable = np.asarray(qtable)
    size, _, n_bits = qtable.shape
    states = np.repeat(np.arange(size), size)
    goals = np.tile(np.arange(size), size)
    keep = states != goals
    states, goals = states[keep], goals[keep]
    reached = np.zeros(states.size, dtype=bool)
    for _ in range(n_bits):
        flips = qtable[states, goals].argmax(axis=1)
        states = np.where(reached, states, states ^ (1 << (n_bits - 1 - flips)))
        reached |= states == goals
    return float(reached.mean())


def at_its_time_limit(n_bits, **settings):
    """A BitFlippingEnv as a training loop leaves it after an episode its time limit cut:
    its compute_truncated says True. A replay buffer lent it never asks that (truncation
    belongs to the episode being played, not to the stored ones its batches come from)."""
    env = BitFlippingEnv(n_bits, **settings)
    env.reset(seed=0)
    env.steps = env.max_steps
    return env
