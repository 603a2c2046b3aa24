"""Lesson 07's ablation (replay x target network) with either loss, on many seeds.

    python benchmarks/dqn_ablation.py [--seeds 20] [--first-seed 1000] [--steps 6000]
                                      [--target-period 500] [--loss huber squared]

Trains ``course.dqn.DQNSettings`` (with the steps and target period given) on CartPole-v1
with ``course.many_seeds_dqn`` for each loss and each of the four configurations: replay
(uniform, 10,000 transitions) or none (every batch the 64 newest), with a target network or
without (synced every step). For each run: the mean training return over its last 2,000
steps, the greedy policy's return over 10 episodes and the largest |Q| on 256 probe states.
Prints, per loss, each configuration's mean with a 95% t-interval over seeds, then paired
differences (same seed, same loss) with their intervals: what removing replay costs, what
removing the target costs with and without replay, and which of the two costs more. The
seeds are fresh by default (the notebook uses 0-4): a finding holds if it holds here too.

Measured (2026-11-26, seeds 1000-1019, the lesson's settings: 6,000 steps, target synced
every 500; 86 and 78 s of CPU per loss), mean [95% t-interval]:
- Huber loss: replay + target: greedy 202 [146, 258], training return (last 2,000 steps)
  165 [131, 199]; without a target nothing is learned (greedy 9, with or without replay)
  and |Q| runs to 7e5. Removing replay costs training return, +56 [13, 99], not greedy
  return (+26 [-55, 108]); removing the target costs +192 [136, 248] of greedy return.
- Squared error: replay + target 229 [181, 277]; replay alone 268 [217, 319] (|Q| 172,
  beyond CartPole's discounted ceiling of 100; 23 with the target); target alone 120
  [87, 153]; neither 124 [86, 161]. Removing replay costs +109 [59, 159] (training return
  +67 [16, 117]); removing the target is not resolved (-39 [-105, 26]); replay costs more
  than the target by +148 [79, 217] (training +70 [20, 120]): Mnih et al.'s order, with
  this loss. Lesson 07 shows the same on its own seeds 0-19.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course.dqn import DQNSettings, greedy_return  # noqa: E402
from course.many_seeds_dqn import LOSSES, train_dqn_on_seeds  # noqa: E402
from course.plotting import mean_and_band  # noqa: E402

CONFIGURATIONS = {  # name -> (replay, with a target network)
    "replay + target": ("uniform", True), "replay, no target": ("uniform", False),
    "no replay + target": ("recent", True), "neither": ("recent", False)}
METRICS = ("late training return", "greedy return", "largest |Q|")
CONTRASTS = {  # name -> (first, second): first minus second, seed by seed
    "removing replay costs (with target)": ("replay + target", "no replay + target"),
    "removing the target costs (with replay)": ("replay + target", "replay, no target"),
    "removing the target costs (no replay)": ("no replay + target", "neither"),
}


def interval(values):
    """(mean, low, high) of the 95% t-interval of the mean of ``values``."""
    mean, half_width = mean_and_band(values)
    return float(mean), float(mean - half_width), float(mean + half_width)


def scores(run, seed, steps):
    curve = run.returns_by_step(steps)
    probes = np.random.default_rng(seed).normal(scale=0.5, size=(256, 4))
    return {"late training return": float(curve[-2000:].mean()),
            "greedy return": greedy_return(run.online, seed),
            "largest |Q|": float(np.abs(run.online.predict(probes)).max())}


def measure(seeds, settings, loss):
    """{configuration: {metric: [one value per seed]}}."""
    results = {}
    for name, (replay, with_target) in CONFIGURATIONS.items():
        run_settings = settings if with_target else settings.with_(target_period=1)
        runs = train_dqn_on_seeds(seeds, run_settings, replay=replay, loss=loss)
        per_seed = [scores(run, seed, settings.steps) for run, seed in zip(runs, seeds)]
        results[name] = {metric: [s[metric] for s in per_seed] for metric in METRICS}
    return results


def show(loss, results, seconds, count):
    print(f"\n== {loss} loss: mean [95% t-interval] over {count} seeds ({seconds:.0f} s CPU)")
    for name, values in results.items():
        cells = [f"{metric} {m:.0f} [{lo:.0f}, {hi:.0f}]"
                 for metric in METRICS for m, lo, hi in [interval(values[metric])]]
        print(f"  {name:20s} " + "; ".join(cells))
    for metric in METRICS[:2]:
        print(f"  paired, {metric}:")
        for contrast, (first, second) in CONTRASTS.items():
            difference = np.subtract(results[first][metric], results[second][metric])
            mean, low, high = interval(difference)
            print(f"    {contrast:42s} {mean:+.0f} [{low:+.0f}, {high:+.0f}]")
        replay_cost = np.subtract(results["replay + target"][metric],
                                  results["no replay + target"][metric])
        target_cost = np.subtract(results["replay + target"][metric],
                                  results["replay, no target"][metric])
        mean, low, high = interval(replay_cost - target_cost)
        print(f"    {'replay costs more than the target by':42s} "
              f"{mean:+.0f} [{low:+.0f}, {high:+.0f}]")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=DQNSettings.steps)
    parser.add_argument("--target-period", type=int, default=DQNSettings.target_period)
    parser.add_argument("--loss", nargs="+", choices=LOSSES, default=list(LOSSES))
    options = parser.parse_args(argv)
    if options.seeds < 2 or options.steps < 2000 or options.target_period < 1:
        parser.error("give at least 2 seeds, 2000 steps and a target period of 1 or more")
    seeds = list(range(options.first_seed, options.first_seed + options.seeds))
    settings = DQNSettings(steps=options.steps, target_period=options.target_period)
    print(f"seeds {seeds[0]}-{seeds[-1]}, {settings}")
    for loss in options.loss:
        started = time.process_time()
        results = measure(seeds, settings, loss)
        show(loss, results, time.process_time() - started, len(seeds))


if __name__ == "__main__":
    main()
