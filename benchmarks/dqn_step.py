"""What one DQN step costs: lesson 07's reference against a plain numpy baseline.

    python benchmarks/dqn_step.py [--batch 64] [--hidden 64] [--repeats 5]

Times, on a 4-hidden-hidden-2 network (CartPole's) and a full uniform buffer of 10,000
transitions:

- **course**: ``neural_replay.dqn_step`` with ``course.mlp.QNetwork`` and ``Adam`` and
  ``course.dqn.UniformReplay``: what every training step of lesson 07 runs;
- **plain numpy**: the same arithmetic (target forward pass, online forward and backward
  pass, Huber gradient, Adam) as one function on bare arrays, on a batch drawn once:
  the least a step can cost in numpy, without classes, checks or sampling;
- **sampling only**: ``UniformReplay.sample`` alone, the buffer's share.

Prints microseconds per step (median of ``--repeats`` runs of at least 0.2 s each) and the
ratio course / plain, in wall-clock time and in this process's CPU time: on a shared
machine the CPU time is what the step would take on an idle one (numpy runs these small
products on one thread). Lesson 07 quotes these numbers and sizes its experiments by them.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rates import calls_per_second  # noqa: E402

from course.dqn import UniformReplay  # noqa: E402
from course.mlp import Adam, QNetwork  # noqa: E402
from neural_replay import dqn_step  # noqa: E402

DISCOUNT, LEARNING_RATE, CAPACITY = 0.99, 5e-4, 10_000


def plain_numpy_step(parameters, moments, batch, steps_done):
    """A DQN step on bare arrays (ReLU MLP with two hidden layers, Huber loss, Adam)."""
    w1, b1, w2, b2, w3, b3 = parameters
    observations, actions, rewards, next_observations, terminated = batch
    hidden = np.maximum(np.maximum(next_observations @ w1 + b1, 0) @ w2 + b2, 0)
    targets = rewards + DISCOUNT * (1 - terminated) * (hidden @ w3 + b3).max(axis=1)
    h1 = np.maximum(observations @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    q = h2 @ w3 + b3
    rows = np.arange(len(actions))
    upstream = np.zeros_like(q)
    upstream[rows, actions] = np.clip(q[rows, actions] - targets, -1, 1) / len(rows)
    d2 = (upstream @ w3.T) * (h2 > 0)
    d1 = (d2 @ w2.T) * (h1 > 0)
    grads = (observations.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ upstream,
             upstream.sum(0))
    steps_done[0] += 1
    c1, c2 = 1 - 0.9 ** steps_done[0], 1 - 0.999 ** steps_done[0]
    for p, g, m, v in zip(parameters, grads, *moments):
        m *= 0.9
        m += 0.1 * g
        v *= 0.999
        v += 0.001 * g * g
        p -= LEARNING_RATE * (m / c1) / (np.sqrt(v / c2) + 1e-8)


def cpu_microseconds(operation, repeats, calls=500):
    """Median over ``repeats`` runs of ``calls`` calls: CPU microseconds per call."""
    runs = []
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(calls):
            operation()
        runs.append((time.process_time() - started) / calls * 1e6)
    return statistics.median(runs)


def full_buffer(seed=0):
    rng = np.random.default_rng(seed)
    replay = UniformReplay(CAPACITY, seed=seed)
    for _ in range(CAPACITY):
        replay.add(rng.normal(size=4), int(rng.integers(2)), 1.0, rng.normal(size=4),
                   bool(rng.random() < 0.05))
    return replay


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = (4, args.hidden, args.hidden, 2)
    replay = full_buffer()
    online, target = QNetwork(sizes, 0), QNetwork(sizes, 1)
    optimizer = Adam(online, LEARNING_RATE)
    observations, actions, rewards, next_observations, terminated = replay.sample(args.batch)
    batch = (observations, actions, rewards, next_observations, terminated.astype(float))
    bare = online.parameters()
    moments = ([np.zeros_like(p) for p in bare], [np.zeros_like(p) for p in bare])
    steps_done = [0]
    operations = {
        "course (neural_replay.dqn_step)":
            lambda: dqn_step(online, target, optimizer, replay, args.batch, DISCOUNT),
        "plain numpy, one function": lambda: plain_numpy_step(bare, moments, batch, steps_done),
        "sampling only (UniformReplay.sample)": lambda: replay.sample(args.batch),
    }
    wall = {name: 1e6 / calls_per_second(op, args.repeats) for name, op in operations.items()}
    cpu = {name: cpu_microseconds(op, args.repeats) for name, op in operations.items()}
    print(f"DQN step, batch {args.batch}, network {'-'.join(map(str, sizes))}, "
          f"buffer {CAPACITY:,} (median of {args.repeats}); microseconds per step")
    print(f"  {'':40s} {'wall':>8s} {'CPU':>8s}")
    for name in operations:
        print(f"  {name:40s} {wall[name]:8.0f} {cpu[name]:8.0f}")
    course, plain = list(operations)[:2]
    print(f"  course / plain numpy: {wall[course] / wall[plain]:.2f} (wall), "
          f"{cpu[course] / cpu[plain]:.2f} (CPU)")

if __name__ == "__main__":
    main()
