"""Buggy answers to lesson 04 (hindsight replay), each the mistake its name says.

Several are bugs that shipped in public HER buffers (RESEARCH.md, "Known bugs").
"""

from . import Bug, edits_of

LESSON = "04_hindsight_replay"


_edit = edits_of(LESSON)


# --- the goal step rule ----------------------------------------------------------------------

FUTURE_INCLUDES_THE_CURRENT_STEP = _edit("hindsight_goal_steps", (
    "first = steps + 1", "first = steps  # bug: the goal achieved before the transition"))

FINAL_OFF_BY_ONE = _edit("hindsight_goal_steps", (
    "return lengths.copy()", "return lengths - 1"))

EPISODE_INCLUDES_THE_RESET_STATE = _edit("hindsight_goal_steps", (
    "first = np.ones_like(steps)", "first = np.zeros_like(steps)"))

# --- the buffer ------------------------------------------------------------------------------

LEN_COUNTS_EPISODES = _edit("her_class", (
    "return int(self.lengths.sum())", "return int(np.count_nonzero(self.lengths))"))

NO_STRATEGY_CHECK = _edit("her_class", ("""\
        if strategy not in HER_STRATEGIES:
            raise ValueError(f"strategy must be one of {HER_STRATEGIES}, got {strategy!r}")
""", ""))

OVERWRITES_THE_NEWEST_WHEN_FULL = _edit("her_store_episode", (
    "self.next_row = (row + 1) % self.max_episodes",
    "self.next_row = min(row + 1, self.max_episodes - 1)"))

GOALS_FROM_ANY_EPISODE = _edit("her_sample", (
    "goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]",
    "goals[relabel] = self.achieved_goals[\n"
    "        self.rng.permutation(episodes[relabel]), goal_steps]  # bug: someone else's"))

REWARDS_FOR_THE_ORIGINAL_GOALS = _edit("her_sample", (
    "rewards = self.env.compute_reward(next_achieved, goals, {})",
    "rewards = self.env.compute_reward(next_achieved, self.desired_goals[episodes], {})"))

REWARD_FROM_THE_GOAL_BEFORE_THE_STEP = _edit("her_sample", (
    "next_achieved = self.achieved_goals[episodes, steps + 1]",
    "next_achieved = self.achieved_goals[episodes, steps]  # bug: before the step"))

RELABELS_EVERYTHING = _edit("her_sample", (
    "relabel = self.rng.random(batch_size) < self.k / (self.k + 1)",
    "relabel = np.ones(batch_size, dtype=bool)"))

RELABELS_ONE_IN_K_PLUS_ONE = _edit("her_sample", (
    "relabel = self.rng.random(batch_size) < self.k / (self.k + 1)",
    "relabel = self.rng.random(batch_size) < 1 / (self.k + 1)"))

EPISODE_FIRST_THEN_STEP = _edit("her_sample", (
    """\
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])""",
    """\
    stored = np.flatnonzero(self.lengths)
    episodes = self.rng.choice(stored, size=batch_size)  # an episode, then a step in it
    steps = (self.rng.random(batch_size) * self.lengths[episodes]).astype(np.int64)"""))

# --- the agent and the loop ------------------------------------------------------------------

INITIAL_VALUE_IGNORED = _edit("goal_agent", (
    "return self.initial_value if row is None else row[action]",
    "return 0.0 if row is None else row[action]"), (
    "self.table[pair] = [self.initial_value] * self.n_bits",
    "self.table[pair] = [0.0] * self.n_bits"))

LOOP_LEARNS_WITH_THE_DESIRED_GOAL = _edit("play_and_learn_with_her", (
    "agent.update((state, goal), action, reward, (next_state, goal), done)",
    "agent.update((state, int(bits_to_int(desired_goal))), action, reward,\n"
    "                     (next_state, int(bits_to_int(desired_goal))), done)"))

LOOP_STOPS_ONLY_WHEN_TERMINATED = _edit("play_and_learn_with_her", (
    "while not (terminated or truncated):",
    "while not terminated and len(actions) < 2 * env.n_bits:"))


# --- found by mutation testing ------------------------------------------------------------

GOAL_STEPS_COMPARE_BY_IDENTITY = _edit("hindsight_goal_steps", (
    'if strategy == "final":', 'if strategy is "final":  # noqa: F632'))

# --- boundaries, malformed input and defaults (issue 12's blind spots) -------------------------

FULL_LENGTH_EPISODE_REFUSED = _edit("her_store_episode", (
    "if not 1 <= steps <= self.max_episode_steps:",
    "if not 1 <= steps < self.max_episode_steps:"))

ACHIEVED_GOALS_NOT_COUNTED = _edit("her_store_episode", (
    "if len(observations) != steps + 1 or len(achieved_goals) != steps + 1:",
    "if len(observations) != steps + 1:  # the achieved goals come with them, surely"))

DEFAULT_K_OF_ONE = _edit("her_class", (
    'def __init__(self, env, max_episodes, max_episode_steps, strategy="future", k=4,',
    'def __init__(self, env, max_episodes, max_episode_steps, strategy="future", k=1,'))

DEFAULT_STRATEGY_FINAL = _edit("her_class", (
    'def __init__(self, env, max_episodes, max_episode_steps, strategy="future", k=4,',
    'def __init__(self, env, max_episodes, max_episode_steps, strategy="final", k=4,'))

AGENT_DEFAULT_INITIAL_VALUE_ZERO = _edit("goal_agent", (
    "def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):",
    "def __init__(self, n_bits, alpha, epsilon, discount, initial_value=0.0, seed=None):"))


BUGS = [
    Bug("future_includes_the_current_step", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": FUTURE_INCLUDES_THE_CURRENT_STEP},
        also_fails=("test_goals_from_own_episode", "test_wraparound"),
        description="future goals from t..T-1: the goal achieved before the step (SB3 #847)"),
    Bug("final_off_by_one", LESSON, "test_goal_steps", {"hindsight_goal_steps": FINAL_OFF_BY_ONE},
        also_fails=("test_goals_from_own_episode", "test_wraparound"),
        description="'final' is the goal one step before the end"),
    Bug("episode_includes_the_reset_state", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": EPISODE_INCLUDES_THE_RESET_STATE},
        also_fails=("test_goals_from_own_episode", "test_wraparound"),
        description="'episode' may pick the state the episode started in"),
    Bug("len_counts_episodes", LESSON, "test_store_episode", {"her_class": LEN_COUNTS_EPISODES},
        also_fails=("test_uniform_transitions",),
        description="len(buffer) is the number of episodes, not transitions"),
    Bug("no_strategy_check", LESSON, "test_errors", {"her_class": NO_STRATEGY_CHECK},
        description="a misspelt strategy is accepted and behaves like 'episode'"),
    Bug("overwrites_the_newest_when_full", LESSON, "test_wraparound",
        {"her_store_episode": OVERWRITES_THE_NEWEST_WHEN_FULL},
        description="when full, each new episode replaces the last one stored"),
    Bug("goals_from_any_episode", LESSON, "test_goals_from_own_episode",
        {"her_sample": GOALS_FROM_ANY_EPISODE},
        also_fails=("test_wraparound",),
        description="substitute goals from other episodes of the batch"),
    Bug("rewards_for_the_original_goals", LESSON, "test_rewards_recomputed",
        {"her_sample": REWARDS_FOR_THE_ORIGINAL_GOALS},
        description="goals are replaced but rewards still judge the old ones"),
    Bug("reward_from_the_goal_before_the_step", LESSON, "test_rewards_recomputed",
        {"her_sample": REWARD_FROM_THE_GOAL_BEFORE_THE_STEP},
        description="reward computed from achieved_goal[t], not [t + 1] (SB3 #847)"),
    Bug("relabels_everything", LESSON, "test_relabel_fraction",
        {"her_sample": RELABELS_EVERYTHING},
        description="k is ignored: every transition gets a substitute goal"),
    Bug("relabels_one_in_k_plus_one", LESSON, "test_relabel_fraction",
        {"her_sample": RELABELS_ONE_IN_K_PLUS_ONE},
        description="relabels 1/(k+1) of the batch instead of k/(k+1)"),
    Bug("episode_first_then_step", LESSON, "test_uniform_transitions",
        {"her_sample": EPISODE_FIRST_THEN_STEP},
        description="a uniform episode, then a step: short episodes' transitions favoured"),
    Bug("initial_value_ignored", LESSON, "test_goal_agent",
        {"goal_agent": INITIAL_VALUE_IGNORED},
        description="Q-values start at 0: relabelled successes look like no information"),
    Bug("loop_learns_with_the_desired_goal", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_LEARNS_WITH_THE_DESIRED_GOAL},
        description="updates pair the batch's rewards with the episode's own goal"),
    Bug("loop_stops_only_when_terminated", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_STOPS_ONLY_WHEN_TERMINATED},
        description="ignores truncation: a failing episode runs past n steps"),
    Bug("goal_steps_compare_by_identity", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": GOAL_STEPS_COMPARE_BY_IDENTITY},
        # the buffer's strategy reaches it as a string read from the channel (in a
        # notebook too, as checks/lending.py copies it)
        also_fails=("test_goals_from_own_episode", "test_wraparound",
                    "test_uniform_transitions"),
        description="strategy is \"final\": identity, not equality, so a strategy string "
                    "built at run time is refused"),
    Bug("full_length_episode_refused", LESSON, "test_store_episode",
        {"her_store_episode": FULL_LENGTH_EPISODE_REFUSED},
        also_fails=("test_relabel_fraction", "test_wraparound", "test_uniform_transitions"),
        description="an episode of exactly max_episode_steps steps raises ValueError"),
    Bug("achieved_goals_not_counted", LESSON, "test_errors",
        {"her_store_episode": ACHIEVED_GOALS_NOT_COUNTED},
        description="an episode with one achieved goal too few gets half written before "
                    "numpy's shape error stops it: the oldest episode is corrupted"),
    Bug("default_k_of_one", LESSON, "test_relabel_fraction", {"her_class": DEFAULT_K_OF_ONE},
        description="k defaults to 1: half the batch relabelled instead of 4/5"),
    Bug("default_strategy_final", LESSON, "test_relabel_fraction",
        {"her_class": DEFAULT_STRATEGY_FINAL},
        description="strategy defaults to 'final': the HER paper's 'future' is the default"),
    Bug("agent_default_initial_value_zero", LESSON, "test_goal_agent",
        {"goal_agent": AGENT_DEFAULT_INITIAL_VALUE_ZERO},
        description="initial_value defaults to 0.0, not -10.0"),
]
