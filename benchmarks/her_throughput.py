"""HER `future` sampling throughput: the lesson 04 reference against a naive buffer.

    python benchmarks/her_throughput.py [--transitions 1000000] [--episode-steps 50]
                                        [--batches 32 256] [--repeats 5]

Both buffers hold the same episodes of bit flipping on ``--episode-steps`` bits (a
million transitions by default, in episodes of that many steps) and sample with the
`future` strategy, k = 4, rewards recomputed:

- **reference**: ``hindsight_replay.HindsightReplayBuffer``, one row per episode and the
  episode lengths kept, so a transition's episode and its later steps are found by
  arithmetic;
- **naive**: transitions in flat arrays tagged with their episode number, as a first
  version often stores them; to know where each sampled transition's episode ends it
  scans the whole buffer for episode boundaries (``np.diff`` of the tags) on
  every call.

It prints samples per second (median of ``--repeats`` runs of at least 0.2 s) and the
ratio. Goal (issue 5): the reference at least 10x the naive buffer at capacity 1e6.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rates import calls_per_second  # noqa: E402

from course.bit_flipping import BitFlippingEnv  # noqa: E402
from hindsight_replay import HindsightReplayBuffer  # noqa: E402

K = 4


class NaiveHindsightBuffer:
    """Flat arrays of transitions tagged with their episode; rescans on every sample."""

    def __init__(self, env, capacity, seed=0):
        self.env, self.capacity, self.size = env, capacity, 0
        self.rng = np.random.default_rng(seed)
        self.arrays = None

    def store_episode(self, observations, achieved_goals, desired_goal, actions):
        steps = len(actions)
        if self.arrays is None:
            n = observations.shape[1]
            self.obs = np.zeros((self.capacity, n), np.int8)
            self.next_obs = np.zeros((self.capacity, n), np.int8)
            self.next_achieved = np.zeros((self.capacity, n), np.int8)
            self.desired = np.zeros((self.capacity, n), np.int8)
            self.actions = np.zeros(self.capacity, np.int64)
            self.episode = np.zeros(self.capacity, np.int64)
            self.arrays, self.episodes = True, 0
        rows = slice(self.size, self.size + steps)
        self.obs[rows], self.next_obs[rows] = observations[:-1], observations[1:]
        self.next_achieved[rows] = achieved_goals[1:]
        self.desired[rows], self.actions[rows] = desired_goal, actions
        self.episode[rows] = self.episodes
        self.size += steps
        self.episodes += 1

    def sample(self, batch_size):
        rows = self.rng.integers(self.size, size=batch_size)
        # where does each episode end? scan every stored transition to find out
        ends = np.flatnonzero(np.diff(self.episode[:self.size], append=-1))
        last = ends[np.searchsorted(ends, rows)]
        future = rows + (self.rng.random(batch_size) * (last - rows + 1)).astype(np.int64)
        goals = self.desired[rows].copy()
        relabel = self.rng.random(batch_size) < K / (K + 1)
        goals[relabel] = self.next_achieved[future[relabel]]
        rewards = self.env.compute_reward(self.next_achieved[rows], goals, {})
        terminated = self.env.compute_terminated(self.next_achieved[rows], goals, {})
        return (self.obs[rows], self.actions[rows], rewards, self.next_obs[rows], terminated,
                goals)


def random_episodes(n_bits, steps, count, rng):
    """Episodes of ``steps`` random flips, in the shape store_episode takes."""
    for _ in range(count):
        start = rng.integers(2, size=n_bits, dtype=np.int8)
        flips = rng.integers(n_bits, size=steps)
        states = np.repeat(start[None], steps + 1, axis=0)
        for t, bit in enumerate(flips, start=1):
            states[t:, bit] ^= 1
        yield states, states, rng.integers(2, size=n_bits, dtype=np.int8), flips


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transitions", type=int, default=1_000_000)
    parser.add_argument("--episode-steps", type=int, default=50)
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    steps = args.episode_steps
    episodes = args.transitions // steps
    env = BitFlippingEnv(steps)
    reference = HindsightReplayBuffer(env, episodes, steps, strategy="future", k=K, seed=0)
    naive = NaiveHindsightBuffer(env, episodes * steps)
    started = time.perf_counter()
    for episode in random_episodes(steps, steps, episodes, np.random.default_rng(0)):
        reference.store_episode(*episode)
        naive.store_episode(*episode)
    print(f"(filled both with {len(reference):,} transitions in {episodes:,} episodes of "
          f"{steps} steps, in {time.perf_counter() - started:.1f} s)", file=sys.stderr)
    print(f"{'batch':>5} {'reference samples/s':>20} {'naive samples/s':>16} {'ratio':>7}")
    ratios = {}
    for batch_size in args.batches:
        ours = calls_per_second(lambda: reference.sample(batch_size), args.repeats)
        theirs = calls_per_second(lambda: naive.sample(batch_size), args.repeats)
        ratios[batch_size] = ours / theirs
        print(f"{batch_size:>5} {ours:>20,.0f} {theirs:>16,.0f} {ours / theirs:>6.1f}x",
              flush=True)
    worst = min(ratios.values())
    print(f"Goal, `future` sampling at {len(reference):,} transitions: at least 10x the "
          f"naive buffer; lowest ratio {worst:.1f}x: {'met' if worst >= 10 else 'NOT met'}.")


if __name__ == "__main__":
    main()
