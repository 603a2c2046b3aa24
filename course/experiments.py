"""Training loops over episodes and seeds, with progress bars, returning numpy arrays."""

import numpy as np
from tqdm.auto import tqdm


def train_agent(env, agent, play_episode, n_episodes, epsilon_decay=1.0, min_epsilon=0.0,
                progress=True, desc="episodes", before_episode=None):
    """Play ``n_episodes`` with ``play_episode(env, agent)``; return each episode's return.

    After every episode the agent's epsilon is multiplied by ``epsilon_decay`` (never
    below ``min_epsilon``), the usual way to explore a lot early and little later.
    ``before_episode(agent, episode)``, if given, runs before each episode, for schedules
    that set the learning rate or exploration from the episode number.
    """
    returns = np.empty(n_episodes)
    for episode in tqdm(range(n_episodes), desc=desc, disable=not progress, leave=False):
        if before_episode is not None:
            before_episode(agent, episode)
        returns[episode] = play_episode(env, agent)
        agent.epsilon = max(min_epsilon, agent.epsilon * epsilon_decay)
    return returns


def compare_over_seeds(runs, seeds, desc="runs"):
    """Run every ``runs[name](seed)`` for every seed; return ``{name: (seeds, episodes)}``.

    Each run function trains from scratch with its seed and returns the per-episode
    returns, so every method sees the same seeds and the comparison is paired.
    """
    curves = {name: [] for name in runs}
    with tqdm(total=len(runs) * len(seeds), desc=desc) as bar:
        for seed in seeds:
            for name, run in runs.items():
                bar.set_postfix_str(f"{name}, seed {seed}")
                curves[name].append(np.asarray(run(seed), dtype=np.float64))
                bar.update()
    return {name: np.stack(per_seed) for name, per_seed in curves.items()}
