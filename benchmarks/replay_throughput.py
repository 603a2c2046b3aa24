"""Prioritized replay throughput: the lesson 03 reference against two other designs.

    python benchmarks/replay_throughput.py [--capacities 100000 1000000]
                                           [--batches 32 256] [--repeats 5]

Compares, in one run and on the same transitions (CartPole-sized: a float32 vector of 4):

- **vectorised**: ``prioritized_replay.PrioritizedReplayBuffer``, the lesson's reference
  (a float64 array heap; a batch descends the tree level by level with numpy);
- **recursive**: a sum tree of Python floats with recursive descent and one call per
  item, written below in the style students often start from;
- **cpprb**: ``cpprb.PrioritizedReplayBuffer`` (C++), if it is installed
  (``pip install -r benchmarks/requirements.txt``); otherwise its column says so.

For each capacity (filled to the brim) and batch size it measures operations per second
of ``sample`` (with importance weights, beta 0.4), ``update_priorities`` (a batch of new
TD errors for the slots just sampled) and ``add`` (one transition), as the median of
``--repeats`` timed runs of at least 0.2 s each, and prints the ratios of the vectorised
buffer to the others. Goal (issue 4): sample at batch 256 and capacity 1e6 at least 10x
the recursive tree and at least as fast as cpprb.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rates import calls_per_second  # noqa: E402

from prioritized_replay import PrioritizedReplayBuffer  # noqa: E402

ALPHA, BETA, EPSILON = 0.6, 0.4, 1e-6
GOAL_CASE = (1_000_000, 256)  # (capacity, batch) of the goal
OBS_SIZE = 4


# --- a recursive pure-Python sum tree, as students often write first -----------------------

class RecursiveSumTree:
    """A list-based binary tree with recursive propagation and retrieval, one item at a
    time: ``2 * leaves - 1`` nodes, root at 0, leaves at the end. ``leaves`` is rounded
    up to a power of two, which the usual version of this code forgets."""

    def __init__(self, capacity):
        self.capacity = 1 << (capacity - 1).bit_length()  # leaves
        self.nodes = [0.0] * (2 * self.capacity - 1)

    def total(self):
        return self.nodes[0]

    def _propagate(self, node, change):
        parent = (node - 1) // 2
        self.nodes[parent] += change
        if parent != 0:
            self._propagate(parent, change)

    def update(self, slot, priority):
        node = slot + self.capacity - 1
        change = priority - self.nodes[node]
        self.nodes[node] = priority
        if node != 0:
            self._propagate(node, change)

    def _retrieve(self, node, mass):
        left = 2 * node + 1
        if left >= len(self.nodes):
            return node
        if mass < self.nodes[left]:
            return self._retrieve(left, mass)
        return self._retrieve(left + 1, mass - self.nodes[left])

    def find(self, mass):
        return self._retrieve(0, mass) - self.capacity + 1


class RecursivePrioritizedBuffer:
    """Proportional PER on :class:`RecursiveSumTree`, with the same semantics as the
    reference: stratified masses, weights (N P)^-beta / max, p = (|delta| + eps)^alpha."""

    def __init__(self, capacity, seed=0):
        self.capacity, self.count, self.position = capacity, 0, 0
        self.tree = RecursiveSumTree(capacity)
        self.leaf_offset = self.tree.capacity - 1
        self.storage = [None] * capacity
        self.max_priority = 1.0
        self.rng = np.random.default_rng(seed)

    def add(self, transition):
        self.storage[self.position] = transition
        self.tree.update(self.position, self.max_priority ** ALPHA)
        self.position = (self.position + 1) % self.capacity
        self.count = min(self.count + 1, self.capacity)

    def sample(self, batch_size, beta):
        total = self.tree.total()
        segment = total / batch_size
        slots, priorities = [], []
        for k in range(batch_size):
            slot = min(self.tree.find(segment * (k + self.rng.random())), self.count - 1)
            slots.append(slot)
            priorities.append(self.tree.nodes[slot + self.leaf_offset])
        weights = (self.count * np.array(priorities) / total) ** -beta
        batch = [self.storage[slot] for slot in slots]
        fields = [np.array(field) for field in zip(*batch)]
        return (*fields, weights / weights.max(), np.array(slots))

    def update_priorities(self, slots, td_errors):
        for slot, error in zip(slots, td_errors):
            priority = abs(error) + EPSILON
            self.tree.update(int(slot), priority ** ALPHA)
            self.max_priority = max(self.max_priority, priority)


# --- filling each buffer with the same transitions (setup, not measured) ------------------

def transitions(count, rng):
    obs = rng.standard_normal((count + 1, OBS_SIZE)).astype(np.float32)
    return (obs[:-1], rng.integers(2, size=count), rng.standard_normal(count),
            obs[1:], rng.random(count) < 0.05)


def filled_vectorised(capacity, data, priorities):
    buffer = PrioritizedReplayBuffer(capacity, alpha=ALPHA, seed=0)
    buffer.add(*(field[0] for field in data))  # allocates the ring's arrays
    for field, values in zip(buffer.storage.fields, data):
        field[:] = values  # the state that `capacity` adds would leave, written at once
    buffer.storage.count, buffer.storage.position = capacity, 0
    buffer.tree.update(np.arange(capacity), priorities ** ALPHA)
    return buffer


def filled_recursive(capacity, data, priorities):
    buffer = RecursivePrioritizedBuffer(capacity)
    for index, transition in enumerate(zip(*data)):
        buffer.storage[index] = transition
        buffer.tree.update(index, float(priorities[index]) ** ALPHA)
    buffer.count = capacity
    return buffer


def filled_cpprb(capacity, data, priorities):
    import cpprb

    buffer = cpprb.PrioritizedReplayBuffer(
        capacity, {"obs": {"shape": OBS_SIZE}, "act": {"dtype": np.int64},
                   "rew": {}, "next_obs": {"shape": OBS_SIZE}, "done": {}},
        alpha=ALPHA, eps=EPSILON)
    obs, act, rew, next_obs, done = data
    buffer.add(obs=obs, act=act, rew=rew, next_obs=next_obs, done=done,
               priorities=priorities)
    return buffer


# --- the operations measured ---------------------------------------------------------------

def operations(kind, buffer, batch_size, data):
    """``{operation: zero-argument callable}`` for one buffer."""
    rng = np.random.default_rng(1)
    one = tuple(field[0] for field in data)
    if kind == "cpprb":
        slots = buffer.sample(batch_size, beta=BETA)["indexes"]
        return {
            "sample": lambda: buffer.sample(batch_size, beta=BETA),
            "update": lambda: buffer.update_priorities(
                slots, np.abs(rng.standard_normal(batch_size)) + EPSILON),
            "add": lambda: buffer.add(obs=one[0], act=one[1], rew=one[2], next_obs=one[3],
                                      done=one[4]),
        }
    slots = buffer.sample(batch_size, BETA)[-1]
    add = (lambda: buffer.add(*one)) if kind == "vectorised" else (lambda: buffer.add(one))
    return {
        "sample": lambda: buffer.sample(batch_size, BETA),
        "update": lambda: buffer.update_priorities(slots, rng.standard_normal(batch_size)),
        "add": add,
    }


def cpprb_available():
    try:
        import cpprb  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capacities", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    kinds = ["vectorised", "recursive"] + (["cpprb"] if cpprb_available() else [])
    if "cpprb" not in kinds:
        print("cpprb is not installed (pip install -r benchmarks/requirements.txt): its "
              "column is left out.")
    makers = {"vectorised": filled_vectorised, "recursive": filled_recursive,
              "cpprb": filled_cpprb}
    header = (f"{'capacity':>9} {'batch':>5} {'operation':>9} "
              + " ".join(f"{kind + ' ops/s':>16}" for kind in kinds)
              + "  " + " ".join(f"{'vs ' + kind:>13}" for kind in kinds[1:]))
    print(header)
    print("-" * len(header))
    goal = None
    for capacity in args.capacities:
        rng = np.random.default_rng(capacity)
        data = transitions(capacity, rng)
        priorities = np.abs(rng.standard_normal(capacity)) + EPSILON
        buffers = {}
        for kind in kinds:
            started = time.perf_counter()
            buffers[kind] = makers[kind](capacity, data, priorities)
            print(f"(filled {kind} with {capacity:,} transitions in "
                  f"{time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)
        for batch_size in args.batches:
            rates = {kind: {name: calls_per_second(op, args.repeats)
                            for name, op in operations(kind, buffers[kind], batch_size,
                                                       data).items()}
                     for kind in kinds}
            for name in ("sample", "update", "add"):
                row = (f"{capacity:>9,} {batch_size:>5} {name:>9} "
                       + " ".join(f"{rates[kind][name]:>16,.0f}" for kind in kinds) + "  "
                       + " ".join(f"{rates['vectorised'][name] / rates[kind][name]:>12.1f}x"
                                  for kind in kinds[1:]))
                print(row, flush=True)
            if (capacity, batch_size) == GOAL_CASE:
                goal = rates
    print("\nvs X: the vectorised buffer's ops/s divided by X's (above 1: faster). "
          "'add' does not depend on the batch size; it is measured again per row.")
    if goal is not None:
        ratios = {kind: goal["vectorised"]["sample"] / goal[kind]["sample"]
                  for kind in kinds[1:]}
        met = ratios["recursive"] >= 10 and ratios.get("cpprb", 1.0) >= 1
        print(f"Goal, sample at batch 256 and capacity 1e6: {ratios['recursive']:.1f}x the "
              f"recursive tree (>= 10x)"
              + (f", {ratios['cpprb']:.1f}x cpprb (>= 1x)" if "cpprb" in ratios else "")
              + (": met." if met else ": NOT met."))


if __name__ == "__main__":
    main()
