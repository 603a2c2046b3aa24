"""Lesson 07's ablation (replay x target network) with either loss, on many seeds.

    python benchmarks/dqn_ablation.py [--seeds 20] [--first-seed 1000] [--steps 6000]
                                      [--target-period 500] [--loss huber squared]
                                      [--workers 1] [--kinds]

Trains ``course.dqn.DQNSettings`` (with the steps and target period given) on CartPole-v1
with ``course.many_seeds_dqn`` (and lesson 07's reference ``td_targets`` and
``huber_loss_gradient``) for each loss and each of the four configurations: replay
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
With --kinds (section 8: Huber loss, target network; 220 s of CPU, 186 s wall with
--workers 2 for 20 seeds), greedy return, seeds 0-19 / 1000-1019: importance weights (PER
beta 0.4 -> 1 minus beta 0) -13 [-45, 20] / -5 [-48, 38]; CER minus uniform +3 [-24, 31]
/ -30 [-81, 22]; PER minus uniform +31 [1, 62] / -20 [-74, 35]: nothing both sets agree
on. The notebook runs its first 5 seeds only (the lessons' buffers are per seed, in
plain Python).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course.dqn import DQNSettings, greedy_return  # noqa: E402
from course.many_seeds_dqn import LOSSES, train_dqn_on_seeds  # noqa: E402
from combined_replay import CombinedReplayBuffer  # noqa: E402  (lesson 05's)
from neural_replay import huber_loss_gradient, td_targets  # noqa: E402  (lesson 07's)
from prioritized_replay import PrioritizedReplayBuffer  # noqa: E402  (lesson 03's)
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


def per_metric(runs, seeds, steps):
    """{metric: [one value per seed]} of the runs."""
    per_seed = [scores(run, seed, steps) for run, seed in zip(runs, seeds)]
    return {metric: [s[metric] for s in per_seed] for metric in METRICS}


def measure(seeds, settings, loss, workers=1):
    """{configuration: {metric: [one value per seed]}}."""
    results = {}
    for name, (replay, with_target) in CONFIGURATIONS.items():
        run_settings = settings if with_target else settings.with_(target_period=1)
        runs = train_dqn_on_seeds(seeds, run_settings, td_targets, huber_loss_gradient,
                                  replay=replay, loss=loss, workers=workers)
        results[name] = per_metric(runs, seeds, settings.steps)
    return results


def replay_kinds(settings):
    """Lesson 07's section 8 (Huber loss, target network): the runner's arguments for each
    replay kind, uniform first."""
    def prioritized(seed):
        return PrioritizedReplayBuffer(settings.capacity, alpha=0.6, seed=seed)
    return {"uniform": {},
            "CER": dict(replay=lambda seed: CombinedReplayBuffer(settings.capacity, seed=seed)),
            "PER, beta 0.4 -> 1": dict(replay=prioritized, prioritized=True),
            "PER, beta 0": dict(replay=prioritized, prioritized=True, prioritized_beta=0.0)}


def compare_kinds(seeds, settings, workers):
    """Each replay kind's scores, then the notebook's paired differences."""
    cpu, wall = time.process_time(), time.perf_counter()
    results = {}
    for name, arguments in replay_kinds(settings).items():
        runs = train_dqn_on_seeds(seeds, settings, td_targets, huber_loss_gradient,
                                  workers=workers, **arguments)
        results[name] = per_metric(runs, seeds, settings.steps)
    print(f"\n== replay kinds, Huber loss, target network: {len(seeds)} seeds "
          f"({time.process_time() - cpu:.0f} s CPU, {time.perf_counter() - wall:.0f} s wall)")
    for name, values in results.items():
        print(f"  {name:20s} " + "; ".join(
            f"{metric} {m:.0f} [{lo:.0f}, {hi:.0f}]"
            for metric in METRICS for m, lo, hi in [interval(values[metric])]))
    for first, second in [("PER, beta 0.4 -> 1", "PER, beta 0"), ("CER", "uniform"),
                          ("PER, beta 0.4 -> 1", "uniform")]:
        cells = [f"{metric} {m:+.0f} [{lo:+.0f}, {hi:+.0f}]" for metric in METRICS[:2]
                 for m, lo, hi in [interval(np.subtract(results[first][metric],
                                                        results[second][metric]))]]
        print(f"  {first} minus {second}: " + "; ".join(cells))


def show(loss, results, cpu_seconds, wall_seconds, count):
    print(f"\n== {loss} loss: mean [95% t-interval] over {count} seeds ({cpu_seconds:.0f} s CPU, "
          f"{wall_seconds:.0f} s wall)")
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
    parser.add_argument("--workers", type=int, default=1,
                        help="threads, as the notebook's WORKERS (it uses 2)")
    parser.add_argument("--kinds", action="store_true",
                        help="compare the replay kinds of section 8 instead (Huber loss)")
    options = parser.parse_args(argv)
    if options.seeds < 2 or options.steps < 2000 or options.target_period < 1:
        parser.error("give at least 2 seeds, 2000 steps and a target period of 1 or more")
    if options.workers < 1:
        parser.error("give at least 1 worker")
    seeds = list(range(options.first_seed, options.first_seed + options.seeds))
    settings = DQNSettings(steps=options.steps, target_period=options.target_period)
    print(f"seeds {seeds[0]}-{seeds[-1]}, {settings}")
    if options.kinds:
        compare_kinds(seeds, settings, options.workers)
        return
    for loss in options.loss:
        cpu, wall = time.process_time(), time.perf_counter()
        results = measure(seeds, settings, loss, options.workers)
        show(loss, results, time.process_time() - cpu, time.perf_counter() - wall, len(seeds))


if __name__ == "__main__":
    main()
