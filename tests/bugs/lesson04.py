"""Buggy answers to lesson 04 (hindsight replay), each the mistake its name says.

Several are bugs that shipped in public HER buffers (RESEARCH.md, "Known bugs").
"""

from . import Bug, edited, edits_of

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



# --- issue 22: a sentence of the lesson each, no rule tested before -------------------------

LEGAL_ACTIONS_MISS_THE_LAST_BIT = _edit("goal_agent", (
    "get_legal_actions=lambda pair: range(n_bits), seed=seed)",
    "get_legal_actions=lambda pair: range(n_bits - 1), seed=seed)"))

INITIAL_VALUE_OR_DEFAULT = _edit("goal_agent", (
    "self.initial_value = initial_value",
    "self.initial_value = initial_value or -10.0  # bug: 0.0 taken for 'not given'"))

SET_QVALUE_FILLS_THE_ROW = _edit("goal_agent", (
    "self.table[pair] = [self.initial_value] * self.n_bits",
    "self.table[pair] = [value] * self.n_bits  # bug: every action of the pair"))

AGENT_SEED_NOT_PASSED = _edit("goal_agent", (
    "get_legal_actions=lambda pair: range(n_bits), seed=seed)",
    "get_legal_actions=lambda pair: range(n_bits))  # bug: seed not passed on"))

LEN_COUNTS_OVERWRITTEN_EPISODES = _edit("her_class", (
    "return int(self.lengths.sum())", "return self.stored  # bug: never less after a wrap"), (
    "self.next_row = 0  # where the next episode goes",
    "self.next_row = 0  # where the next episode goes\n        self.stored = 0"))
LEN_COUNTS_OVERWRITTEN_EPISODES_STORE = _edit("her_store_episode", (
    "self.lengths[row] = steps  # steps past the new length are dead from here on",
    "self.lengths[row] = steps  # steps past the new length are dead from here on\n"
    "    self.stored += steps"))

# np.asarray copies nothing: a list of the caller's own arrays, which it then reuses
EPISODE_KEPT_BY_REFERENCE_STORE = _edit("her_store_episode", ("""\
    if self.observations is None:
        rows, columns = self.max_episodes, self.max_episode_steps + 1
        self.observations = np.zeros((rows, columns, *observations.shape[1:]),
                                     dtype=observations.dtype)
        self.achieved_goals = np.zeros((rows, columns, *achieved_goals.shape[1:]),
                                       dtype=achieved_goals.dtype)
        self.desired_goals = np.zeros((rows, *desired_goal.shape), dtype=desired_goal.dtype)
        self.actions = np.zeros((rows, columns - 1), dtype=actions.dtype)
    row = self.next_row
    self.observations[row, :steps + 1] = observations  # assignment copies
    self.achieved_goals[row, :steps + 1] = achieved_goals
    self.desired_goals[row] = desired_goal
    self.actions[row, :steps] = actions
""", """\
    if self.observations is None:
        self.observations = [None] * self.max_episodes  # one episode's arrays per row
    row = self.next_row
    self.observations[row] = (observations, achieved_goals, desired_goal, actions)
"""))
EPISODE_KEPT_BY_REFERENCE_SAMPLE = _edit("her_sample", ("""\
    goals = self.desired_goals[episodes].copy()
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(next_achieved, goals, {})
    terminated = self.env.compute_terminated(next_achieved, goals, {})
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)""", """\
    stored = [self.observations[e] for e in episodes]
    goals = np.array([episode[2] for episode in stored])
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    for i, j in zip(np.flatnonzero(relabel), goal_steps):
        goals[i] = stored[i][1][j]
    next_achieved = np.array([episode[1][t + 1] for episode, t in zip(stored, steps)])
    rewards = self.env.compute_reward(next_achieved, goals, {})
    terminated = self.env.compute_terminated(next_achieved, goals, {})
    return (np.array([episode[0][t] for episode, t in zip(stored, steps)]),
            np.array([episode[3][t] for episode, t in zip(stored, steps)]), rewards,
            np.array([episode[0][t + 1] for episode, t in zip(stored, steps)]), terminated,
            goals)"""))

NEXT_OBSERVATION_OF_THE_SAME_STEP = _edit("her_sample", (
    "self.observations[episodes, steps + 1], terminated, goals)",
    "self.observations[episodes, steps], terminated, goals)  # bug: not the next one"))

SAMPLE_RETURNS_GOALS_BEFORE_TERMINATED = _edit("her_sample", (
    "self.observations[episodes, steps + 1], terminated, goals)",
    "self.observations[episodes, steps + 1], goals, terminated)"))

GOAL_STEPS_ROUNDED = _edit("hindsight_goal_steps", (
    "return first + (rng.random(steps.shape) * choices).astype(np.int64)",
    "return first + np.round(rng.random(steps.shape) * (choices - 1)).astype(np.int64)"))

GOAL_STEPS_FROM_NUMPY = _edit("hindsight_goal_steps", (
    "return first + (rng.random(steps.shape) * choices).astype(np.int64)",
    "return first + (np.random.random(steps.shape) * choices).astype(np.int64)"))

BUFFER_ALWAYS_FUTURE = _edit("her_sample", (
    "goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],",
    "goal_steps = hindsight_goal_steps(\"future\", steps[relabel],"))

GOAL_STEPS_UP_TO_MAX_EPISODE_STEPS = _edit("her_sample", (
    "self.lengths[episodes[relabel]], self.rng)",
    "np.full(relabel.sum(), self.max_episode_steps), self.rng)"))

REWARDS_ONLY_FOR_SUBSTITUTE_GOALS = _edit("her_sample", (
    "rewards = self.env.compute_reward(next_achieved, goals, {})",
    "rewards = np.where(relabel, self.env.compute_reward(next_achieved, goals, {}), -1.0)"))

TERMINATED_FOR_THE_ORIGINAL_GOALS = _edit("her_sample", (
    "terminated = self.env.compute_terminated(next_achieved, goals, {})",
    "terminated = self.env.compute_terminated(next_achieved, self.desired_goals[episodes], {})"))

RELABELS_A_QUOTA_PER_BATCH = _edit("her_sample", (
    "relabel = self.rng.random(batch_size) < self.k / (self.k + 1)",
    "relabel = self.rng.permutation(batch_size) < int(batch_size * self.k / (self.k + 1))"))

K_ZERO_REFUSED = _edit("her_class", ("if k < 0:", "if k <= 0:"))

BUFFER_DRAWS_FROM_NUMPY = _edit("her_sample", (
    "flat = self.rng.integers(total, size=batch_size)",
    "flat = np.random.randint(total, size=batch_size)"))

DEAD_STEPS_KEPT_AFTER_WRAP = _edit("her_store_episode", (
    "self.lengths[row] = steps  # steps past the new length are dead from here on",
    "self.lengths[row] = max(self.lengths[row], steps)  # the columns written in this row"))

NEGATIVE_K_ACCEPTED = _edit("her_class", ("""\
        if k < 0:
            raise ValueError(f"k must be >= 0 (a share k/(k+1) is relabelled), got {k}")
""", ""))

EMPTY_BUFFER_ASSERTED = _edit("her_sample", ("""\
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")""",
    """\
    assert total > 0, "cannot sample from an empty buffer: store an episode first\""""))

BATCH_SIZE_ZERO_ACCEPTED = _edit("her_sample", ("if batch_size <= 0:", "if batch_size < 0:"))

LONG_EPISODE_ASSERTED = _edit("her_store_episode", ("""\
    if not 1 <= steps <= self.max_episode_steps:
        raise ValueError(f"an episode must have 1 to {self.max_episode_steps} steps, "
                         f"got {steps}")""", """\
    assert 1 <= steps <= self.max_episode_steps, (
        f"an episode must have 1 to {self.max_episode_steps} steps, got {steps}")"""))

MISMATCHED_EPISODE_ACCEPTED = _edit("her_store_episode", ("""\
    if len(observations) != steps + 1 or len(achieved_goals) != steps + 1:
        raise ValueError(f"{steps} actions need {steps + 1} observations and achieved "
                         f"goals, got {len(observations)} and {len(achieved_goals)}")
""", ""), (
    "self.observations[row, :steps + 1] = observations  # assignment copies",
    "self.observations[row, :len(observations)] = observations  # as many as given"), (
    "self.achieved_goals[row, :steps + 1] = achieved_goals",
    "self.achieved_goals[row, :len(achieved_goals)] = achieved_goals"))

SUBSTITUTE_GOALS_NEVER_USED = _edit("her_sample", (
    "goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]",
    "substitutes = self.achieved_goals[episodes[relabel], goal_steps]  # bug: left unused"))

LOOP_LEAVES_OUT_THE_RESET_OBSERVATION = _edit("play_and_learn_with_her", (
    'observations, achieved_goals = [observation["observation"]], [observation["achieved_goal"]]',
    "observations, achieved_goals = [], []  # bug: what reset returned is not stored"))

LOOP_SAMPLES_NO_MORE_THAN_STORED = _edit("play_and_learn_with_her", (
    "replay.sample(batch_size)", "replay.sample(min(batch_size, len(replay)))"))

LOOP_RETURNS_NOTHING = _edit("play_and_learn_with_her", (
    "\n    return bool(terminated)", ""))


BUGS = [
    Bug("future_includes_the_current_step", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": FUTURE_INCLUDES_THE_CURRENT_STEP},
        also_fails=("test_goals_from_own_episode", "test_wraparound"),
        rule="future-goal-steps", kind="boundary",
        description="future goals from t..T-1: the goal achieved before the step (SB3 #847)"),
    Bug("final_off_by_one", LESSON, "test_goal_steps", {"hindsight_goal_steps": FINAL_OFF_BY_ONE},
        also_fails=("test_goals_from_own_episode", "test_wraparound"),
        rule="final-goal-step", kind="boundary",
        description="'final' is the goal one step before the end"),
    Bug("episode_includes_the_reset_state", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": EPISODE_INCLUDES_THE_RESET_STATE},
        also_fails=("test_goals_from_own_episode", "test_wraparound"),
        rule="episode-goal-steps", kind="boundary",
        description="'episode' may pick the state the episode started in"),
    Bug("len_counts_episodes", LESSON, "test_store_episode", {"her_class": LEN_COUNTS_EPISODES},
        also_fails=("test_uniform_transitions", "test_wraparound", "test_errors"),
        rule="len-counts-transitions", kind="wrong-formula",
        description="len(buffer) is the number of episodes, not transitions"),
    Bug("no_strategy_check", LESSON, "test_errors", {"her_class": NO_STRATEGY_CHECK},
        rule="unknown-strategy-refused", kind="accidental-refusal",
        description="a misspelt strategy is accepted and behaves like 'episode'"),
    Bug("overwrites_the_newest_when_full", LESSON, "test_wraparound",
        {"her_store_episode": OVERWRITES_THE_NEWEST_WHEN_FULL},
        # len, as it wraps, counts the wrong episodes
        also_fails=("test_store_episode", "test_errors"),
        rule="replaces-oldest", kind="after-wrap",
        description="when full, each new episode replaces the last one stored"),
    Bug("goals_from_any_episode", LESSON, "test_goals_from_own_episode",
        {"her_sample": GOALS_FROM_ANY_EPISODE},
        also_fails=("test_wraparound",),
        rule="goals-from-own-episode", kind="wrong-source",
        description="substitute goals from other episodes of the batch"),
    Bug("rewards_for_the_original_goals", LESSON, "test_rewards_recomputed",
        {"her_sample": REWARDS_FOR_THE_ORIGINAL_GOALS},
        rule="reward-recomputed", kind="wrong-source",
        description="goals are replaced but rewards still judge the old ones"),
    Bug("reward_from_the_goal_before_the_step", LESSON, "test_rewards_recomputed",
        {"her_sample": REWARD_FROM_THE_GOAL_BEFORE_THE_STEP},
        rule="reward-recomputed", kind="wrong-source",
        description="reward computed from achieved_goal[t], not [t + 1] (SB3 #847)"),
    Bug("relabels_everything", LESSON, "test_relabel_fraction",
        {"her_sample": RELABELS_EVERYTHING},
        rule="relabel-share", kind="wrong-distribution",
        description="k is ignored: every transition gets a substitute goal"),
    Bug("relabels_one_in_k_plus_one", LESSON, "test_relabel_fraction",
        {"her_sample": RELABELS_ONE_IN_K_PLUS_ONE},
        rule="relabel-share", kind="wrong-formula",
        description="relabels 1/(k+1) of the batch instead of k/(k+1)"),
    Bug("episode_first_then_step", LESSON, "test_uniform_transitions",
        {"her_sample": EPISODE_FIRST_THEN_STEP},
        rule="uniform-transitions", kind="wrong-distribution",
        description="a uniform episode, then a step: short episodes' transitions favoured"),
    Bug("initial_value_ignored", LESSON, "test_goal_agent",
        {"goal_agent": INITIAL_VALUE_IGNORED},
        rule="agent-initial-value", kind="wrong-source",
        description="Q-values start at 0: relabelled successes look like no information"),
    Bug("loop_learns_with_the_desired_goal", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_LEARNS_WITH_THE_DESIRED_GOAL},
        rule="loop-batch-goals", kind="wrong-source",
        description="updates pair the batch's rewards with the episode's own goal"),
    Bug("loop_stops_only_when_terminated", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_STOPS_ONLY_WHEN_TERMINATED},
        rule="loop-plays-to-end", kind="past-terminal",
        description="ignores truncation: a failing episode runs past n steps"),
    Bug("goal_steps_compare_by_identity", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": GOAL_STEPS_COMPARE_BY_IDENTITY},
        # the buffer's strategy reaches it as a string read from the channel (in a
        # notebook too, as checks/lending.py copies it)
        also_fails=("test_goals_from_own_episode", "test_wraparound",
                    "test_uniform_transitions"),
        rule="strategy-names", kind="accidental-refusal",
        description="strategy is \"final\": identity, not equality, so a strategy string "
                    "built at run time is refused"),
    Bug("full_length_episode_refused", LESSON, "test_store_episode",
        {"her_store_episode": FULL_LENGTH_EPISODE_REFUSED},
        also_fails=("test_relabel_fraction", "test_wraparound", "test_uniform_transitions"),
        rule="episode-lengths-accepted", kind="boundary",
        description="an episode of exactly max_episode_steps steps raises ValueError"),
    Bug("achieved_goals_not_counted", LESSON, "test_errors",
        {"her_store_episode": ACHIEVED_GOALS_NOT_COUNTED},
        rule="refused-episode-stores-nothing", kind="accidental-refusal",
        description="an episode with one achieved goal too few gets half written before "
                    "numpy's shape error stops it: the oldest episode is corrupted"),
    Bug("default_k_of_one", LESSON, "test_relabel_fraction", {"her_class": DEFAULT_K_OF_ONE},
        rule="buffer-defaults", kind="protocol",
        description="k defaults to 1: half the batch relabelled instead of 4/5"),
    Bug("default_strategy_final", LESSON, "test_relabel_fraction",
        {"her_class": DEFAULT_STRATEGY_FINAL},
        rule="buffer-defaults", kind="protocol",
        description="strategy defaults to 'final': the HER paper's 'future' is the default"),
    Bug("agent_default_initial_value_zero", LESSON, "test_goal_agent",
        {"goal_agent": AGENT_DEFAULT_INITIAL_VALUE_ZERO},
        rule="agent-default-initial-value", kind="protocol",
        description="initial_value defaults to 0.0, not -10.0"),
    # --- issue 22 ---
    Bug("legal_actions_miss_the_last_bit", LESSON, "test_goal_agent",
        {"goal_agent": LEGAL_ACTIONS_MISS_THE_LAST_BIT},
        rule="agent-legal-actions", kind="boundary",
        description="the legal flips are 0 .. n - 2: the last bit can never be flipped"),
    Bug("initial_value_or_default", LESSON, "test_goal_agent",
        {"goal_agent": INITIAL_VALUE_OR_DEFAULT},
        rule="initial-value-zero", kind="falsy-as-missing",
        description="initial_value or -10.0: the lesson's runs from 0.0 start at -10"),
    Bug("set_qvalue_fills_the_row", LESSON, "test_goal_agent",
        {"goal_agent": SET_QVALUE_FILLS_THE_ROW},
        rule="agent-update", kind="wrong-formula",
        description="the first update of a pair sets every action's Q-value"),
    Bug("agent_seed_not_passed", LESSON, "test_goal_agent",
        {"goal_agent": AGENT_SEED_NOT_PASSED},
        rule="agent-seeded", kind="global-generator",
        description="seed is not passed on: lesson 01's agent explores with an unseeded "
                    "generator"),
    Bug("len_counts_overwritten_episodes", LESSON, "test_store_episode",
        {"her_class": LEN_COUNTS_OVERWRITTEN_EPISODES,
         "her_store_episode": LEN_COUNTS_OVERWRITTEN_EPISODES_STORE},
        # sample draws among len(self) transitions
        also_fails=("test_wraparound", "test_errors"),
        rule="len-after-wrap", kind="after-wrap",
        description="len(buffer) adds every episode's steps, overwritten ones included"),
    Bug("episode_kept_by_reference", LESSON, "test_store_episode",
        {"her_store_episode": EPISODE_KEPT_BY_REFERENCE_STORE,
         "her_sample": EPISODE_KEPT_BY_REFERENCE_SAMPLE},
        rule="episode-copied", kind="mutates-input",
        description="episodes kept as the caller's own arrays, which the caller reuses"),
    Bug("next_observation_of_the_same_step", LESSON, "test_store_episode",
        {"her_sample": NEXT_OBSERVATION_OF_THE_SAME_STEP},
        also_fails=("test_goals_from_own_episode", "test_wraparound", "test_errors"),
        rule="transition-as-stored", kind="wrong-source",
        description="next_obs is observation t, not t + 1"),
    Bug("sample_returns_goals_before_terminated", LESSON, "test_store_episode",
        {"her_sample": SAMPLE_RETURNS_GOALS_BEFORE_TERMINATED},
        also_fails=("test_goals_from_own_episode", "test_rewards_recomputed",
                    "test_relabel_fraction", "test_uniform_transitions", "test_wraparound",
                    "test_errors"),
        rule="result-types", kind="protocol",
        description="sample returns (..., goals, terminated): the last two swapped"),
    Bug("goal_steps_rounded", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": GOAL_STEPS_ROUNDED},
        rule="goal-steps-uniform", kind="wrong-distribution",
        description="goal steps rounded: the first and last allowed steps half as likely"),
    Bug("goal_steps_from_numpy", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": GOAL_STEPS_FROM_NUMPY},
        also_fails=("test_uniform_transitions",),  # the buffer's batches, seeded, differ
        rule="goal-steps-from-rng", kind="global-generator",
        description="goal steps drawn with np.random, not the rng given"),
    Bug("buffer_always_future", LESSON, "test_goals_from_own_episode",
        {"her_sample": BUFFER_ALWAYS_FUTURE},
        also_fails=("test_wraparound", "test_relabel_fraction"),
        rule="buffer-strategy", kind="wrong-source",
        description="the buffer relabels with 'future' whatever its strategy"),
    Bug("goal_steps_up_to_max_episode_steps", LESSON, "test_goals_from_own_episode",
        {"her_sample": GOAL_STEPS_UP_TO_MAX_EPISODE_STEPS},
        also_fails=("test_wraparound",),
        rule="goals-from-own-episode", kind="size-from-argument",
        description="goal steps up to max_episode_steps, not the episode's length: goals "
                    "from columns no step of it reached"),
    Bug("rewards_only_for_substitute_goals", LESSON, "test_rewards_recomputed",
        {"her_sample": REWARDS_ONLY_FOR_SUBSTITUTE_GOALS},
        rule="reward-recomputed", kind="wrong-formula",
        description="the original goal's reward taken as -1, as if never reached"),
    Bug("terminated_for_the_original_goals", LESSON, "test_rewards_recomputed",
        {"her_sample": TERMINATED_FOR_THE_ORIGINAL_GOALS},
        rule="terminated-recomputed", kind="wrong-source",
        description="rewards recomputed for the new goals, terminated for the old ones"),
    Bug("relabels_a_quota_per_batch", LESSON, "test_relabel_fraction",
        {"her_sample": RELABELS_A_QUOTA_PER_BATCH},
        rule="relabel-share", kind="wrong-distribution",
        description="int(batch_size * k/(k+1)) transitions a batch, not a coin each: a "
                    "batch of one is never relabelled"),
    Bug("k_zero_refused", LESSON, "test_relabel_fraction", {"her_class": K_ZERO_REFUSED},
        rule="k-zero-plain-replay", kind="boundary",
        description="k = 0, plain replay, raises ValueError"),
    Bug("buffer_draws_from_numpy", LESSON, "test_uniform_transitions",
        {"her_sample": BUFFER_DRAWS_FROM_NUMPY},
        rule="buffer-own-generator", kind="global-generator",
        description="transitions drawn with np.random, not the buffer's seeded generator"),
    Bug("dead_steps_kept_after_wrap", LESSON, "test_wraparound",
        {"her_store_episode": DEAD_STEPS_KEPT_AFTER_WRAP},
        also_fails=("test_store_episode",),  # len counts the dead steps too
        rule="dead-steps-unused", kind="after-wrap",
        description="a row's length stays the longest episode's: dead steps sampled"),
    Bug("negative_k_accepted", LESSON, "test_errors", {"her_class": NEGATIVE_K_ACCEPTED},
        rule="negative-k-refused", kind="accidental-refusal",
        description="k < 0 accepted; sample then divides by zero or relabels nothing"),
    Bug("empty_buffer_asserted", LESSON, "test_errors", {"her_sample": EMPTY_BUFFER_ASSERTED},
        rule="empty-sample-refused", kind="accidental-refusal",
        description="an empty buffer refused by assert: AssertionError, not ValueError"),
    Bug("batch_size_zero_accepted", LESSON, "test_errors",
        {"her_sample": BATCH_SIZE_ZERO_ACCEPTED},
        rule="batch-size-refused", kind="boundary",
        description="sample(0) returns an empty batch"),
    Bug("long_episode_asserted", LESSON, "test_errors",
        {"her_store_episode": LONG_EPISODE_ASSERTED},
        rule="long-episode-refused", kind="accidental-refusal",
        description="too long an episode refused by assert: AssertionError, not ValueError"),
    Bug("mismatched_episode_accepted", LESSON, "test_errors",
        {"her_store_episode": MISMATCHED_EPISODE_ACCEPTED},
        rule="mismatched-episode-refused", kind="accidental-refusal",
        description="as many observations as given are stored, whatever the actions"),
    Bug("substitute_goals_never_used", LESSON, "test_her_learning",
        {"her_sample": SUBSTITUTE_GOALS_NEVER_USED},
        also_fails=("test_rewards_recomputed", "test_relabel_fraction"),
        rule="her-learns", kind="wrong-source",
        description="substitute goals drawn but never put in the batch: plain replay"),
    Bug("loop_leaves_out_the_reset_observation", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_LEAVES_OUT_THE_RESET_OBSERVATION},
        rule="loop-stores-episode", kind="boundary",
        description="T observations and achieved goals stored, reset's left out"),
    Bug("loop_samples_no_more_than_stored", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_SAMPLES_NO_MORE_THAN_STORED},
        rule="loop-one-batch", kind="size-from-argument",
        description="samples min(batch_size, len(replay)), not batch_size"),
    Bug("her_loop_returns_nothing", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_RETURNS_NOTHING},
        rule="result-types", kind="protocol",
        description="returns None, not whether the goal was reached"),
]

# --- what every call promises (checks.contracts) ------------------------------------------

GOAL_STEPS_SHIFT_THE_CALLERS_STEPS = _edit("hindsight_goal_steps", (
    "        first = steps + 1\n",
    "        steps += 1  # in place: no new array\n        first = steps\n"))

LOOP_ALWAYS_SAYS_SUCCESS = _edit("play_and_learn_with_her", (
    "    return bool(terminated)", "    return True"))

BUGS = (*BUGS,
    Bug("goal_steps_shift_the_callers_steps", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": GOAL_STEPS_SHIFT_THE_CALLERS_STEPS},
        description="'future' adds 1 to the caller's array of steps in place",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("loop_always_says_success", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_ALWAYS_SAYS_SUCCESS},
        description="returns True whether or not the episode reached its goal",
        rule="loop-returns-success", kind="protocol"),
)

HER_LOOP_DECAYS_EPSILON = _edit("play_and_learn_with_her", (
    "    return bool(terminated)",
    "    agent.epsilon *= 0.999  # explore a little less after each episode\n"
    "    return bool(terminated)"))

BUGS = (*BUGS,
    Bug("her_loop_decays_epsilon", LESSON, "test_her_loop",
        {"play_and_learn_with_her": HER_LOOP_DECAYS_EPSILON},
        description="the loop decays agent.epsilon itself, which a loop may only read",
        rule="lent-as-stated", kind="protocol"),
)


# --- blind round 1: wrong answers written from the lesson text alone ----------------

REFUSED_EPISODE_ADVANCES_THE_ROW_HER_STORE_EPISODE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def store_episode(self, observations, achieved_goals, desired_goal, actions):
    \"\"\"Store an episode of T steps: T + 1 observations and achieved goals (from reset
    on), its desired goal and T actions, copied. Replaces the oldest episode when full.\"\"\"
    row = self.next_row  # claim the row this episode goes to
    self.next_row = (row + 1) % self.max_episodes
    observations, achieved_goals = np.asarray(observations), np.asarray(achieved_goals)
    desired_goal, actions = np.asarray(desired_goal), np.asarray(actions)
    steps = len(actions)
    if not 1 <= steps <= self.max_episode_steps:
        raise ValueError(f"an episode must have 1 to {self.max_episode_steps} steps, "
                         f"got {steps}")
    if len(observations) != steps + 1 or len(achieved_goals) != steps + 1:
        raise ValueError(f"{steps} actions need {steps + 1} observations and achieved "
                         f"goals, got {len(observations)} and {len(achieved_goals)}")
    if self.observations is None:
        rows, columns = self.max_episodes, self.max_episode_steps + 1
        self.observations = np.zeros((rows, columns, *observations.shape[1:]),
                                     dtype=observations.dtype)
        self.achieved_goals = np.zeros((rows, columns, *achieved_goals.shape[1:]),
                                       dtype=achieved_goals.dtype)
        self.desired_goals = np.zeros((rows, *desired_goal.shape), dtype=desired_goal.dtype)
        self.actions = np.zeros((rows, columns - 1), dtype=actions.dtype)
    self.observations[row, :steps + 1] = observations
    self.achieved_goals[row, :steps + 1] = achieved_goals
    self.desired_goals[row] = desired_goal
    self.actions[row, :steps] = actions
    self.lengths[row] = steps
"""

STRATEGY_NAMES_CASE_FOLDED_HER_CLASS = """\
#| export
class HindsightReplayBuffer:
    \"\"\"Whole episodes of a goal environment, replayed with substituted goals (HER).

    Holds up to ``max_episodes`` episodes of at most ``max_episode_steps`` steps, a new
    one replacing the oldest when full. ``sample`` draws stored transitions uniformly and
    gives each, with probability k / (k + 1), a goal achieved later in its own episode
    (``strategy``), recomputing rewards and termination with ``env``.
    \"\"\"

    def __init__(self, env, max_episodes, max_episode_steps, strategy="future", k=4,
                 seed=None):
        strategy = str(strategy).strip().lower()  # 'Future' and 'future' alike
        if strategy not in HER_STRATEGIES:
            raise ValueError(f"strategy must be one of {HER_STRATEGIES}, got {strategy!r}")
        if k < 0:
            raise ValueError(f"k must be >= 0 (a share k/(k+1) is relabelled), got {k}")
        if max_episodes < 1 or max_episode_steps < 1:
            raise ValueError("max_episodes and max_episode_steps must be at least 1")
        self.env, self.strategy, self.k = env, strategy, k
        self.max_episodes, self.max_episode_steps = max_episodes, max_episode_steps
        self.rng = np.random.default_rng(seed)
        self.lengths = np.zeros(max_episodes, dtype=np.int64)  # 0: an empty row
        self.next_row = 0  # where the next episode goes
        self.observations = None  # the arrays are made when the first episode arrives

    def __len__(self):
        \"\"\"The number of stored transitions.\"\"\"
        return int(self.lengths.sum())
"""

TERMINATED_FROM_THE_REWARD_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    ends = np.cumsum(self.lengths)
    flat = self.rng.integers(total, size=batch_size)
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    goals = self.desired_goals[episodes].copy()
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(next_achieved, goals, {})
    terminated = rewards == 0  # the reward is 0 exactly when the goal is reached
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

BUGS = (*BUGS,
    Bug("refused_episode_advances_the_row", LESSON, "test_errors",
        {"her_store_episode": REFUSED_EPISODE_ADVANCES_THE_ROW_HER_STORE_EPISODE},
        description="claims the next row (advances next_row) before checking the episode, so a "
                    "refused episode makes the next one replace the second-oldest",
        rule="refused-episode-stores-nothing", kind="after-wrap"),
    Bug("strategy_names_case_folded", LESSON, "test_errors",
        {"her_class": STRATEGY_NAMES_CASE_FOLDED_HER_CLASS},
        description="lower-cases and strips the strategy before checking it, so 'Future' or "
                    "'FINAL ' are accepted instead of refused",
        rule="unknown-strategy-refused", kind="accidental-refusal"),
    Bug("terminated_from_the_reward", LESSON, "test_rewards_recomputed",
        {"her_sample": TERMINATED_FROM_THE_REWARD_HER_SAMPLE},
        description="terminated = rewards == 0 instead of env.compute_terminated: right for bit "
                    "flipping, wrong for any env whose success reward is not 0",
        rule="terminated-recomputed", kind="wrong-source"),
)


# --- blind round 2: wrong answers written from the lesson text alone ----------------

FINAL_RETURNS_LENGTHS_AS_GIVEN_HINDSIGHT_GOAL_STEPS = """\
#| export
HER_STRATEGIES = ("future", "final", "episode")


def hindsight_goal_steps(strategy, steps, lengths, rng):
    \"\"\"For transitions at ``steps`` of episodes of ``lengths`` steps, the index into each
    episode's T + 1 achieved goals of a substitute goal, drawn with ``rng``: 'future'
    t+1 .. T, 'final' T, 'episode' 1 .. T (uniformly).\"\"\"
    if strategy == "final":
        return lengths  # the goal where each episode ended
    steps, lengths = np.asarray(steps), np.asarray(lengths)
    if strategy == "future":
        first = steps + 1
    elif strategy == "episode":
        first = np.ones_like(steps)
    else:
        raise ValueError(f"strategy must be one of {HER_STRATEGIES}, got {strategy!r}")
    return first + (rng.random(steps.shape) * (lengths + 1 - first)).astype(np.int64)
"""

INT_INITIAL_VALUE_TRUNCATES_UPDATES_GOAL_AGENT = """\
#| export
import numpy as np

from course.bit_flipping import bits_to_int
from qlearning import QLearningAgent


class GoalConditionedAgent(QLearningAgent):
    \"\"\"Lesson 01's Q-learning on pairs ``(state, goal)`` of bits_to_int numbers.

    The legal actions of every pair are the ``n_bits`` flips. A Q-value never set is
    ``initial_value``.
    \"\"\"

    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):
        super().__init__(alpha, epsilon, discount,
                         get_legal_actions=lambda pair: range(n_bits), seed=seed)
        self.n_bits = n_bits
        self.initial_value = initial_value
        self.table = {}

    def get_qvalue(self, pair, action):
        \"\"\"Q(pair, action); ``initial_value`` if never set.\"\"\"
        if pair not in self.table:
            return self.initial_value
        return self.table[pair][action]

    def set_qvalue(self, pair, action, value):
        if pair not in self.table:
            self.table[pair] = np.full(self.n_bits, self.initial_value)
        self.table[pair][action] = value
"""

ACTIONS_STORED_AS_FLOATS_HER_STORE_EPISODE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def store_episode(self, observations, achieved_goals, desired_goal, actions):
    \"\"\"Store an episode of T steps: T + 1 observations and achieved goals (from reset
    on), its desired goal and T actions, copied. Replaces the oldest episode when full.\"\"\"
    observations, achieved_goals = np.asarray(observations), np.asarray(achieved_goals)
    desired_goal, actions = np.asarray(desired_goal), np.asarray(actions)
    steps = len(actions)
    if not 1 <= steps <= self.max_episode_steps:
        raise ValueError(f"an episode must have 1 to {self.max_episode_steps} steps, "
                         f"got {steps}")
    if len(observations) != steps + 1 or len(achieved_goals) != steps + 1:
        raise ValueError(f"{steps} actions need {steps + 1} observations and achieved "
                         f"goals, got {len(observations)} and {len(achieved_goals)}")
    if self.observations is None:
        rows, columns = self.max_episodes, self.max_episode_steps + 1
        self.observations = np.zeros((rows, columns, *observations.shape[1:]))
        self.achieved_goals = np.zeros((rows, columns, *achieved_goals.shape[1:]))
        self.desired_goals = np.zeros((rows, *desired_goal.shape))
        self.actions = np.zeros((rows, columns - 1))
    row = self.next_row
    self.observations[row, :steps + 1] = observations
    self.achieved_goals[row, :steps + 1] = achieved_goals
    self.desired_goals[row] = desired_goal
    self.actions[row, :steps] = actions
    self.lengths[row] = steps
    self.next_row = (row + 1) % self.max_episodes
"""

SUCCESS_FROM_NOT_TRUNCATED_PLAY_AND_LEARN_WITH_HER = """\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    \"\"\"Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal.\"\"\"
    observation, _ = env.reset()
    desired_goal = observation["desired_goal"]
    goal = int(bits_to_int(desired_goal))
    observations, achieved_goals = [observation["observation"]], [observation["achieved_goal"]]
    actions, terminated, truncated = [], False, False
    while not (terminated or truncated):
        action = agent.get_action((int(bits_to_int(observation["observation"])), goal))
        observation, _, terminated, truncated, _ = env.step(action)
        observations.append(observation["observation"])
        achieved_goals.append(observation["achieved_goal"])
        actions.append(action)
    replay.store_episode(observations, achieved_goals, desired_goal, actions)
    states, actions, rewards, next_states, dones, goals = replay.sample(batch_size)
    for state, action, reward, next_state, done, goal in zip(
            bits_to_int(states).tolist(), actions.tolist(), rewards.tolist(),
            bits_to_int(next_states).tolist(), dones.tolist(), bits_to_int(goals).tolist()):
        agent.update((state, goal), action, reward, (next_state, goal), done)
    return not truncated  # the episode ended before its time limit: it reached the goal
"""

LOOP_COUNTS_N_FLIPS_ITSELF_PLAY_AND_LEARN_WITH_HER = """\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    \"\"\"Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal.\"\"\"
    observation, _ = env.reset()
    desired_goal = observation["desired_goal"]
    goal = int(bits_to_int(desired_goal))
    observations, achieved_goals = [observation["observation"]], [observation["achieved_goal"]]
    actions, terminated = [], False
    for _ in range(agent.n_bits):  # n flips always suffice
        action = agent.get_action((int(bits_to_int(observation["observation"])), goal))
        observation, _, terminated, truncated, _ = env.step(action)
        observations.append(observation["observation"])
        achieved_goals.append(observation["achieved_goal"])
        actions.append(action)
        if terminated:
            break
    replay.store_episode(observations, achieved_goals, desired_goal, actions)
    states, actions, rewards, next_states, dones, goals = replay.sample(batch_size)
    for state, action, reward, next_state, done, goal in zip(
            bits_to_int(states).tolist(), actions.tolist(), rewards.tolist(),
            bits_to_int(next_states).tolist(), dones.tolist(), bits_to_int(goals).tolist()):
        agent.update((state, goal), action, reward, (next_state, goal), done)
    return bool(terminated)
"""

BUGS = (*BUGS,
    Bug("final_returns_lengths_as_given", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": FINAL_RETURNS_LENGTHS_AS_GIVEN_HINDSIGHT_GOAL_STEPS},
        description="'final' returns lengths before np.asarray: a list of lengths comes back as "
                    "the caller's own list, not an array",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("int_initial_value_truncates_updates", LESSON, "test_goal_agent",
        {"goal_agent": INT_INITIAL_VALUE_TRUNCATES_UPDATES_GOAL_AGENT},
        description="rows are np.full(n_bits, initial_value): with an int initial_value (-10) the "
                    "row is an int array and every Q-value set is truncated (-10.4 is stored as "
                    "-10)",
        rule="agent-update", kind="protocol"),
    Bug("actions_stored_as_floats", LESSON, "test_store_episode",
        {"her_store_episode": ACTIONS_STORED_AS_FLOATS_HER_STORE_EPISODE},
        also_fails=("test_goals_from_own_episode", "test_rewards_recomputed", "test_relabel_fraction", "test_uniform_transitions", "test_wraparound", "test_errors"),
        description="storage preallocated with np.zeros' default float64: sample hands out actions"
                    " 3.0 instead of 3 (and float observations and goals), which a tabular agent "
                    "cannot index with",
        rule="result-types", kind="protocol"),
    Bug("success_from_not_truncated", LESSON, "test_her_loop",
        {"play_and_learn_with_her": SUCCESS_FROM_NOT_TRUNCATED_PLAY_AND_LEARN_WITH_HER},
        description="returns not truncated: an environment that reports terminated and truncated "
                    "together on its last step (as gymnasium's TimeLimit does) counts a success as"
                    " a failure",
        rule="loop-returns-success", kind="past-terminal"),
    Bug("loop_counts_n_flips_itself", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_COUNTS_N_FLIPS_ITSELF_PLAY_AND_LEARN_WITH_HER},
        description="plays at most agent.n_bits steps ('n flips always suffice'), stopping on "
                    "terminated only: an environment whose time limit is longer is cut short and "
                    "an unfinished episode stored",
        rule="loop-plays-to-end", kind="size-from-argument"),
)


# --- numpy scalars (checks.contracts) ------------------------------------------------------

HER_SAMPLE_REFUSES_NUMPY_SIZES = _edit("her_sample", (
    '    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals)."""\n',
    '    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals)."""\n'
    '    if type(batch_size) is not int:\n'
    '        raise TypeError(f"batch_size must be an int, got {type(batch_size).__name__}")\n'))

BUGS = (*BUGS,
    Bug("her_sample_refuses_numpy_sizes", LESSON, "test_goals_from_own_episode",
        {"her_sample": HER_SAMPLE_REFUSES_NUMPY_SIZES},
        also_fails=("test_store_episode", "test_rewards_recomputed", "test_relabel_fraction",
                    "test_uniform_transitions", "test_wraparound", "test_errors"),
        description="type(batch_size) is not int refuses an np.int64 batch size",
        rule="numpy-scalars", kind="numpy-scalars"),
)


# --- blind round 3: wrong answers written from the lesson text alone ----------------

LOOP_RETURNS_NUMPY_BOOL_PLAY_AND_LEARN_WITH_HER = """\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    \"\"\"Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal.\"\"\"
    observation, _ = env.reset()
    desired_goal = observation["desired_goal"]
    goal = int(bits_to_int(desired_goal))
    observations, achieved_goals = [observation["observation"]], [observation["achieved_goal"]]
    actions, terminated, truncated = [], False, False
    while not (terminated or truncated):
        action = agent.get_action((int(bits_to_int(observation["observation"])), goal))
        observation, _, terminated, truncated, _ = env.step(action)
        observations.append(observation["observation"])
        achieved_goals.append(observation["achieved_goal"])
        actions.append(action)
    replay.store_episode(observations, achieved_goals, desired_goal, actions)
    states, actions, rewards, next_states, dones, goals = replay.sample(batch_size)
    for state, action, reward, next_state, done, goal in zip(
            bits_to_int(states).tolist(), actions.tolist(), rewards.tolist(),
            bits_to_int(next_states).tolist(), dones.tolist(), bits_to_int(goals).tolist()):
        agent.update((state, goal), action, reward, (next_state, goal), done)
    return terminated
"""

BUGS = (*BUGS,
    Bug("loop_returns_numpy_bool", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_RETURNS_NUMPY_BOOL_PLAY_AND_LEARN_WITH_HER},
        description="returns the environment's last terminated as given: an np.bool_ when the "
                    "environment reports one",
        rule="result-types", kind="numpy-scalars"),
)


# --- blind round 4: wrong answers written from the lesson text alone ----------------

SET_QVALUE_FORGETS_THE_PAIRS_OTHER_ACTIONS_GOAL_AGENT = """\
#| export
import numpy as np

from course.bit_flipping import bits_to_int
from qlearning import QLearningAgent


class GoalConditionedAgent(QLearningAgent):
    \"\"\"Lesson 01's Q-learning on pairs ``(state, goal)`` of bits_to_int numbers.

    The legal actions of every pair are the ``n_bits`` flips. A Q-value never set is
    ``initial_value``.
    \"\"\"

    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):
        super().__init__(alpha, epsilon, discount,
                         get_legal_actions=lambda pair: range(n_bits), seed=seed)
        self.n_bits = n_bits
        self.initial_value = initial_value
        self.table = {}  # (state, goal) -> {action: Q-value} of the actions set

    def get_qvalue(self, pair, action):
        \"\"\"Q(pair, action); ``initial_value`` if never set.\"\"\"
        return self.table.get(pair, {}).get(action, self.initial_value)

    def set_qvalue(self, pair, action, value):
        self.table[pair] = {action: value}
"""

STORAGE_NARROWED_TO_INT8_HER_STORE_EPISODE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def store_episode(self, observations, achieved_goals, desired_goal, actions):
    \"\"\"Store an episode of T steps: T + 1 observations and achieved goals (from reset
    on), its desired goal and T actions, copied. Replaces the oldest episode when full.\"\"\"
    observations, achieved_goals = np.asarray(observations), np.asarray(achieved_goals)
    desired_goal, actions = np.asarray(desired_goal), np.asarray(actions)
    steps = len(actions)
    if not 1 <= steps <= self.max_episode_steps:
        raise ValueError(f"an episode must have 1 to {self.max_episode_steps} steps, "
                         f"got {steps}")
    if len(observations) != steps + 1 or len(achieved_goals) != steps + 1:
        raise ValueError(f"{steps} actions need {steps + 1} observations and achieved "
                         f"goals, got {len(observations)} and {len(achieved_goals)}")
    if self.observations is None:  # bits: one byte each is plenty
        rows, columns = self.max_episodes, self.max_episode_steps + 1
        self.observations = np.zeros((rows, columns, *observations.shape[1:]), dtype=np.int8)
        self.achieved_goals = np.zeros((rows, columns, *achieved_goals.shape[1:]),
                                       dtype=np.int8)
        self.desired_goals = np.zeros((rows, *desired_goal.shape), dtype=np.int8)
        self.actions = np.zeros((rows, columns - 1), dtype=actions.dtype)
    row = self.next_row
    self.observations[row, :steps + 1] = observations  # assignment copies
    self.achieved_goals[row, :steps + 1] = achieved_goals
    self.desired_goals[row] = desired_goal
    self.actions[row, :steps] = actions
    self.lengths[row] = steps  # steps past the new length are dead from here on
    self.next_row = (row + 1) % self.max_episodes
"""

EPISODES_WEIGHTED_BY_OBSERVATIONS_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    rows = np.flatnonzero(self.lengths)
    sizes = self.lengths[rows] + 1  # a row holds T + 1 observations
    episodes = self.rng.choice(rows, size=batch_size, p=sizes / sizes.sum())
    steps = (self.rng.random(batch_size) * self.lengths[episodes]).astype(np.int64)
    goals = self.desired_goals[episodes].copy()
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(next_achieved, goals, {})
    terminated = self.env.compute_terminated(next_achieved, goals, {})
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

BUGS = (*BUGS,
    Bug("set_qvalue_forgets_the_pairs_other_actions", LESSON, "test_goal_agent",
        {"goal_agent": SET_QVALUE_FORGETS_THE_PAIRS_OTHER_ACTIONS_GOAL_AGENT},
        description="set_qvalue replaces the pair's whole entry with {action: value}: every other "
                    "action of the pair falls back to initial_value",
        rule="agent-update", kind="boundary"),
    Bug("storage_narrowed_to_int8", LESSON, "test_store_episode",
        {"her_store_episode": STORAGE_NARROWED_TO_INT8_HER_STORE_EPISODE},
        description="observations and goals are stored as int8 ('bits fit in a byte'): values "
                    "above 127 wrap and fractions are cut",
        rule="transition-as-stored", kind="protocol"),
    Bug("episodes_weighted_by_observations", LESSON, "test_uniform_transitions",
        {"her_sample": EPISODES_WEIGHTED_BY_OBSERVATIONS_HER_SAMPLE},
        description="draws an episode with probability proportional to its T + 1 stored "
                    "observations, then a step: short episodes' transitions still favoured",
        rule="uniform-transitions", kind="wrong-distribution"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

AGENT_TIES_GO_TO_THE_FIRST_FLIP_GOAL_AGENT = """\
#| export
import numpy as np

from course.bit_flipping import bits_to_int
from qlearning import QLearningAgent


class GoalConditionedAgent(QLearningAgent):
    \"\"\"Lesson 01's Q-learning on pairs ``(state, goal)`` of bits_to_int numbers.

    The legal actions of every pair are the ``n_bits`` flips. A Q-value never set is
    ``initial_value``.
    \"\"\"

    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):
        super().__init__(alpha, epsilon, discount,
                         get_legal_actions=lambda pair: range(n_bits), seed=seed)
        self.n_bits = n_bits
        self.initial_value = initial_value
        self.table = {}  # (state, goal) -> the n_bits Q-values of that pair

    def get_qvalue(self, pair, action):
        \"\"\"Q(pair, action); ``initial_value`` if never set.\"\"\"
        row = self.table.get(pair)
        return self.initial_value if row is None else row[action]

    def set_qvalue(self, pair, action, value):
        if pair not in self.table:
            self.table[pair] = [self.initial_value] * self.n_bits
        self.table[pair][action] = value

    def get_best_action(self, pair):
        \"\"\"The flip of largest Q-value, read from the pair's row at once.\"\"\"
        row = self.table.get(pair)
        if row is None:
            return 0  # every flip is still initial_value
        return int(np.argmax(row))
"""

BUGS = (*BUGS,
    Bug("agent_ties_go_to_the_first_flip", LESSON, "test_goal_agent",
        {"goal_agent": AGENT_TIES_GO_TO_THE_FIRST_FLIP_GOAL_AGENT},
        description="adds a fast get_best_action with np.argmax over the pair's row: ties (every unseen pair) always go to flip 0 instead of lesson 01's uniform choice with the agent's generator",
        rule="agent-greedy-ties-at-random", kind="wrong-distribution"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

REFUSED_EPISODE_SHAPES_THE_STORAGE_HER_STORE_EPISODE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def store_episode(self, observations, achieved_goals, desired_goal, actions):
    \"\"\"Store an episode of T steps: T + 1 observations and achieved goals (from reset
    on), its desired goal and T actions, copied. Replaces the oldest episode when full.\"\"\"
    observations, achieved_goals = np.asarray(observations), np.asarray(achieved_goals)
    desired_goal, actions = np.asarray(desired_goal), np.asarray(actions)
    if self.observations is None:  # first episode: make the storage to its shape
        rows, columns = self.max_episodes, self.max_episode_steps + 1
        self.observations = np.zeros((rows, columns, *observations.shape[1:]),
                                     dtype=observations.dtype)
        self.achieved_goals = np.zeros((rows, columns, *achieved_goals.shape[1:]),
                                       dtype=achieved_goals.dtype)
        self.desired_goals = np.zeros((rows, *desired_goal.shape), dtype=desired_goal.dtype)
        self.actions = np.zeros((rows, columns - 1), dtype=actions.dtype)
    steps = len(actions)
    if not 1 <= steps <= self.max_episode_steps:
        raise ValueError(f"an episode must have 1 to {self.max_episode_steps} steps, "
                         f"got {steps}")
    if len(observations) != steps + 1 or len(achieved_goals) != steps + 1:
        raise ValueError(f"{steps} actions need {steps + 1} observations and achieved "
                         f"goals, got {len(observations)} and {len(achieved_goals)}")
    row = self.next_row
    self.observations[row, :steps + 1] = observations  # assignment copies
    self.achieved_goals[row, :steps + 1] = achieved_goals
    self.desired_goals[row] = desired_goal
    self.actions[row, :steps] = actions
    self.lengths[row] = steps  # steps past the new length are dead from here on
    self.next_row = (row + 1) % self.max_episodes
"""

BUGS = (*BUGS,
    Bug("refused_episode_shapes_the_storage", LESSON, "test_errors",
        {"her_store_episode": REFUSED_EPISODE_SHAPES_THE_STORAGE_HER_STORE_EPISODE},
        description="makes the storage arrays from the first episode it is given before checking it: a refused first episode fixes the dtype and shape, so a later valid episode is cast (0.5 stored as 0) or refused by numpy",
        rule="refused-episode-stores-nothing", kind="accidental-refusal"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

REWARD_ARGUMENTS_SWAPPED_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    ends = np.cumsum(self.lengths)  # transitions stored up to and including each row
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    goals = self.desired_goals[episodes].copy()
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(goals, next_achieved, {})
    terminated = self.env.compute_terminated(goals, next_achieved, {})
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

BUGS = (*BUGS,
    Bug("reward_arguments_swapped", LESSON, "test_rewards_recomputed",
        {"her_sample": REWARD_ARGUMENTS_SWAPPED_HER_SAMPLE},
        description="calls compute_reward(goals, next_achieved, {}) and compute_terminated(goals, next_achieved, {}): right for bit flipping's symmetric equality, wrong for any environment whose reward is not symmetric in its two goals",
        rule="reward-recomputed", kind="wrong-formula"),
)


# --- blind round 6: wrong answers written from the lesson text alone ----------------

SUCCESS_MEANS_ENDED_EARLY_PLAY_AND_LEARN_WITH_HER = """\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    \"\"\"Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal.\"\"\"
    observation, _ = env.reset()
    desired_goal = observation["desired_goal"]
    goal = int(bits_to_int(desired_goal))
    observations, achieved_goals = [observation["observation"]], [observation["achieved_goal"]]
    actions, terminated, truncated = [], False, False
    while not (terminated or truncated):
        action = agent.get_action((int(bits_to_int(observation["observation"])), goal))
        observation, _, terminated, truncated, _ = env.step(action)
        observations.append(observation["observation"])
        achieved_goals.append(observation["achieved_goal"])
        actions.append(action)
    replay.store_episode(observations, achieved_goals, desired_goal, actions)
    reached = len(actions) < agent.n_bits  # a truncated episode uses all n flips
    states, actions, rewards, next_states, dones, goals = replay.sample(batch_size)
    for state, action, reward, next_state, done, goal in zip(
            bits_to_int(states).tolist(), actions.tolist(), rewards.tolist(),
            bits_to_int(next_states).tolist(), dones.tolist(), bits_to_int(goals).tolist()):
        agent.update((state, goal), action, reward, (next_state, goal), done)
    return reached
"""

BUGS = (*BUGS,
    Bug("success_means_ended_early", LESSON, "test_her_loop",
        {"play_and_learn_with_her": SUCCESS_MEANS_ENDED_EARLY_PLAY_AND_LEARN_WITH_HER},
        description="returns len(actions) < agent.n_bits ('only a success ends before the n-flip limit'): a goal reached on the n-th flip counts as a failure",
        rule="loop-returns-success", kind="boundary"),
)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

EMPTY_STEPS_COME_BACK_AS_FLOATS_HINDSIGHT_GOAL_STEPS = """\
#| export
HER_STRATEGIES = ("future", "final", "episode")


def hindsight_goal_steps(strategy, steps, lengths, rng):
    \"\"\"For transitions at ``steps`` of episodes of ``lengths`` steps, the index into each
    episode's T + 1 achieved goals of a substitute goal, drawn with ``rng``: 'future'
    t+1 .. T, 'final' T, 'episode' 1 .. T (uniformly).\"\"\"
    steps, lengths = np.asarray(steps), np.asarray(lengths)
    if strategy == "final":
        return lengths.copy()
    if strategy == "future":
        first = steps + 1
    elif strategy == "episode":
        first = np.ones_like(steps)
    else:
        raise ValueError(f"strategy must be one of {HER_STRATEGIES}, got {strategy!r}")
    choices = lengths + 1 - first  # how many goal steps are allowed
    return first + (rng.random(steps.shape) * choices).astype(np.int64)
"""

BUGS = (*BUGS,
    Bug("empty_steps_come_back_as_floats", LESSON, "test_goal_steps",
        {"hindsight_goal_steps": EMPTY_STEPS_COME_BACK_AS_FLOATS_HINDSIGHT_GOAL_STEPS},
        description="np.asarray(steps) / np.asarray(lengths) without a dtype: empty lists (no transition to relabel) give a float64 array, for every strategy",
        rule="result-types", kind="boundary"),
)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

LOOP_STORES_OBSERVATIONS_AS_GOALS_PLAY_AND_LEARN_WITH_HER = """\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    \"\"\"Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal.\"\"\"
    observation, _ = env.reset()
    desired_goal = observation["desired_goal"]
    goal = int(bits_to_int(desired_goal))
    observations = [observation["observation"]]
    actions, terminated, truncated = [], False, False
    while not (terminated or truncated):
        action = agent.get_action((int(bits_to_int(observation["observation"])), goal))
        observation, _, terminated, truncated, _ = env.step(action)
        observations.append(observation["observation"])
        actions.append(action)
    # in bit flipping the achieved goal is the state itself
    replay.store_episode(observations, observations, desired_goal, actions)
    states, actions, rewards, next_states, dones, goals = replay.sample(batch_size)
    for state, action, reward, next_state, done, goal in zip(
            bits_to_int(states).tolist(), actions.tolist(), rewards.tolist(),
            bits_to_int(next_states).tolist(), dones.tolist(), bits_to_int(goals).tolist()):
        agent.update((state, goal), action, reward, (next_state, goal), done)
    return bool(terminated)
"""

BUGS = (*BUGS,
    Bug("loop_stores_observations_as_goals", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_STORES_OBSERVATIONS_AS_GOALS_PLAY_AND_LEARN_WITH_HER},
        description="stores observation['observation'] as the achieved goals (section 1: achieved_goal is 'here the same bits'): any goal environment whose observation is not its achieved goal gets wrong substitute goals and rewards",
        rule="loop-stores-episode", kind="wrong-source"),
)


# --- blind round 8: wrong answers written from the lesson text alone ----------------

REWARD_INFO_PER_TRANSITION_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    ends = np.cumsum(self.lengths)  # transitions stored up to and including each row
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    goals = self.desired_goals[episodes].copy()
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    infos = [{} for _ in range(batch_size)]  # one info per transition of the batch
    rewards = self.env.compute_reward(next_achieved, goals, infos)
    terminated = self.env.compute_terminated(next_achieved, goals, infos)
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

BUGS = (*BUGS,
    Bug("reward_info_per_transition", LESSON, "test_rewards_recomputed",
        {"her_sample": REWARD_INFO_PER_TRANSITION_HER_SAMPLE},
        description="passes one info dict per transition, [{}] * batch_size, as SB3's HER does: an environment reading its info argument as the lesson states gets a list",
        rule="reward-recomputed", kind="protocol"),
)


# --- blind round 10: wrong answers written from the lesson text alone ----------------

ACTS_ON_THE_ACHIEVED_GOAL_PLAY_AND_LEARN_WITH_HER = """\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    \"\"\"Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal.\"\"\"
    observation, _ = env.reset()
    desired_goal = observation["desired_goal"]
    goal = int(bits_to_int(desired_goal))
    observations, achieved_goals = [observation["observation"]], [observation["achieved_goal"]]
    actions, terminated, truncated = [], False, False
    while not (terminated or truncated):
        action = agent.get_action((int(bits_to_int(observation["achieved_goal"])), goal))
        observation, _, terminated, truncated, _ = env.step(action)
        observations.append(observation["observation"])
        achieved_goals.append(observation["achieved_goal"])
        actions.append(action)
    replay.store_episode(observations, achieved_goals, desired_goal, actions)
    states, actions, rewards, next_states, dones, goals = replay.sample(batch_size)
    for state, action, reward, next_state, done, goal in zip(
            bits_to_int(states).tolist(), actions.tolist(), rewards.tolist(),
            bits_to_int(next_states).tolist(), dones.tolist(), bits_to_int(goals).tolist()):
        agent.update((state, goal), action, reward, (next_state, goal), done)
    return bool(terminated)
"""

BUGS = (*BUGS,
    Bug("acts_on_the_achieved_goal", LESSON, "test_her_loop",
        {"play_and_learn_with_her": ACTS_ON_THE_ACHIEVED_GOAL_PLAY_AND_LEARN_WITH_HER},
        description="asks get_action for (bits_to_int(achieved_goal), goal) while the updates use the stored observations as states: on an environment whose observation is not its achieved goal, the agent acts on pairs it never learns",
        rule="loop-acts-on-pairs", kind="wrong-source"),
)


# --- blind round 12: wrong answers written from the lesson text alone ----------------

SUCCESSES_NEVER_RELABELLED_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    ends = np.cumsum(self.lengths)  # transitions stored up to and including each row
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    goals = self.desired_goals[episodes].copy()
    # a transition that already reached its goal has its signal: relabel the failures
    reached = self.env.compute_terminated(
        self.achieved_goals[episodes, steps + 1], goals, {})
    relabel = (self.rng.random(batch_size) < self.k / (self.k + 1)) & ~reached
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(next_achieved, goals, {})
    terminated = self.env.compute_terminated(next_achieved, goals, {})
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

BUGS = (*BUGS,
    Bug("successes_never_relabelled", LESSON, "test_relabel_fraction",
        {"her_sample": SUCCESSES_NEVER_RELABELLED_HER_SAMPLE},
        description="only transitions that missed their original goal may be relabelled: a transition that reached its desired goal always keeps it (relabelling probability 0, not k/(k+1))",
        rule="relabel-share", kind="wrong-distribution"),
)


# --- blind round 13: wrong answers written from the lesson text alone ----------------

BATCH_GOALS_REUSED_BETWEEN_CALLS_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    ends = np.cumsum(self.lengths)  # transitions stored up to and including each row
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    scratch = getattr(self, "_goal_scratch", None)
    if scratch is None or len(scratch) < batch_size:  # grown once, reused by every batch
        scratch = np.empty((batch_size, *self.desired_goals.shape[1:]),
                           dtype=self.desired_goals.dtype)
        self._goal_scratch = scratch
    goals = scratch[:batch_size]
    goals[:] = self.desired_goals[episodes]
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(next_achieved, goals, {})
    terminated = self.env.compute_terminated(next_achieved, goals, {})
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

REWARDS_FROM_THE_UNWRAPPED_ENV_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    ends = np.cumsum(self.lengths)  # transitions stored up to and including each row
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    goals = self.desired_goals[episodes].copy()
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    base_env = self.env.unwrapped  # wrappers (TimeLimit, ...) do not forward compute_*
    rewards = base_env.compute_reward(next_achieved, goals, {})
    terminated = base_env.compute_terminated(next_achieved, goals, {})
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

LOOP_EXPLORES_BY_ITSELF_PLAY_AND_LEARN_WITH_HER = """\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    \"\"\"Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal.\"\"\"
    observation, _ = env.reset()
    desired_goal = observation["desired_goal"]
    goal = int(bits_to_int(desired_goal))
    observations, achieved_goals = [observation["observation"]], [observation["achieved_goal"]]
    actions, terminated, truncated = [], False, False
    while not (terminated or truncated):
        if np.random.random() < agent.epsilon:  # explore: any of the n flips
            action = int(np.random.randint(agent.n_bits))
        else:
            action = agent.get_action((int(bits_to_int(observation["observation"])), goal))
        observation, _, terminated, truncated, _ = env.step(action)
        observations.append(observation["observation"])
        achieved_goals.append(observation["achieved_goal"])
        actions.append(action)
    replay.store_episode(observations, achieved_goals, desired_goal, actions)
    states, actions, rewards, next_states, dones, goals = replay.sample(batch_size)
    for state, action, reward, next_state, done, goal in zip(
            bits_to_int(states).tolist(), actions.tolist(), rewards.tolist(),
            bits_to_int(next_states).tolist(), dones.tolist(), bits_to_int(goals).tolist()):
        agent.update((state, goal), action, reward, (next_state, goal), done)
    return bool(terminated)
"""

BUGS = (*BUGS,
    Bug("batch_goals_reused_between_calls", LESSON, "test_store_episode",
        {"her_sample": BATCH_GOALS_REUSED_BETWEEN_CALLS_HER_SAMPLE},
        description="fills the batch's goals into a scratch array kept on the buffer (allocated once, 'no allocation per batch') and returns a slice of it: the next sample overwrites the goals of the batch the caller already holds",
        rule="batch-stays-its-own", kind="mutates-input"),
    Bug("rewards_from_the_unwrapped_env", LESSON, "test_rewards_recomputed",
        {"her_sample": REWARDS_FROM_THE_UNWRAPPED_ENV_HER_SAMPLE},
        description="calls self.env.unwrapped.compute_reward / compute_terminated (the habit from gymnasium's TimeLimit, which does not forward them): a wrapper's own compute_reward is skipped, and an env without .unwrapped raises AttributeError",
        rule="reward-recomputed", kind="wrong-source"),
    Bug("loop_explores_by_itself", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_EXPLORES_BY_ITSELF_PLAY_AND_LEARN_WITH_HER},
        description="reads agent.epsilon and agent.n_bits (both lent 'to read') and draws a random flip with np.random itself with probability epsilon, calling get_action only otherwise: fewer get_action calls, exploration from the unseeded global generator, and twice the exploration of the agent's own",
        rule="loop-acts-on-pairs", kind="protocol"),
)


# --- blind round 14: wrong answers written from the lesson text alone ----------------

COIN_AND_GOAL_GENERATORS_SHARE_A_SEED_HER_CLASS = """\
#| export
class HindsightReplayBuffer:
    \"\"\"Whole episodes of a goal environment, replayed with substituted goals (HER).

    Holds up to ``max_episodes`` episodes of at most ``max_episode_steps`` steps, a new
    one replacing the oldest when full. ``sample`` draws stored transitions uniformly and
    gives each, with probability k / (k + 1), a goal achieved later in its own episode
    (``strategy``), recomputing rewards and termination with ``env``.
    \"\"\"

    def __init__(self, env, max_episodes, max_episode_steps, strategy="future", k=4,
                 seed=None):
        if strategy not in HER_STRATEGIES:
            raise ValueError(f"strategy must be one of {HER_STRATEGIES}, got {strategy!r}")
        if k < 0:
            raise ValueError(f"k must be >= 0 (a share k/(k+1) is relabelled), got {k}")
        if max_episodes < 1 or max_episode_steps < 1:
            raise ValueError("max_episodes and max_episode_steps must be at least 1")
        self.env, self.strategy, self.k = env, strategy, k
        self.max_episodes, self.max_episode_steps = max_episodes, max_episode_steps
        # one generator per kind of draw, each reproducible from the seed, so that
        # changing k does not change which transitions are drawn
        self.rng = np.random.default_rng(seed)  # which transitions
        self.coin_rng = np.random.default_rng(seed)  # which of them get a new goal
        self.goal_rng = np.random.default_rng(seed)  # which goal they get
        self.lengths = np.zeros(max_episodes, dtype=np.int64)  # 0: an empty row
        self.next_row = 0  # where the next episode goes
        self.observations = None  # the arrays are made when the first episode arrives

    def __len__(self):
        \"\"\"The number of stored transitions.\"\"\"
        return int(self.lengths.sum())
"""

COIN_AND_GOAL_GENERATORS_SHARE_A_SEED_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    ends = np.cumsum(self.lengths)  # transitions stored up to and including each row
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    goals = self.desired_goals[episodes].copy()
    relabel = self.coin_rng.random(batch_size) < self.k / (self.k + 1)
    # a hindsight goal step for every row, used where the coin says so
    goal_steps = hindsight_goal_steps(self.strategy, steps, self.lengths[episodes],
                                      self.goal_rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps[relabel]]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(next_achieved, goals, {})
    terminated = self.env.compute_terminated(next_achieved, goals, {})
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

BUGS = (*BUGS,
    Bug("coin_and_goal_generators_share_a_seed", LESSON, "test_goals_from_own_episode",
        {"her_class": COIN_AND_GOAL_GENERATORS_SHARE_A_SEED_HER_CLASS, "her_sample": COIN_AND_GOAL_GENERATORS_SHARE_A_SEED_HER_SAMPLE},
        description="makes three generators from the same seed (transitions, coins, goal steps) and draws a goal step for every row: the coin and the goal step of a row read the same number, so a relabelled row (number < k/(k+1)) never gets a goal from the top 1/(k+1) of its range ('episode' never gives j = T on 10-step episodes)",
        rule="buffer-strategy", kind="wrong-distribution"),
)


# --- blind round 15: wrong answers written from the lesson text alone ----------------

AGENT_KEYS_BY_STRING_GOAL_AGENT = """\
#| export
import numpy as np

from course.bit_flipping import bits_to_int
from qlearning import QLearningAgent


class GoalConditionedAgent(QLearningAgent):
    \"\"\"Lesson 01's Q-learning on pairs ``(state, goal)`` of bits_to_int numbers.

    The legal actions of every pair are the ``n_bits`` flips. A Q-value never set is
    ``initial_value``.
    \"\"\"

    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):
        super().__init__(alpha, epsilon, discount,
                         get_legal_actions=lambda pair: range(n_bits), seed=seed)
        self.n_bits = n_bits
        self.initial_value = initial_value
        self.table = {}  # str((state, goal)) -> its n_bits Q-values: printable, JSON-ready

    def get_qvalue(self, pair, action):
        \"\"\"Q(pair, action); ``initial_value`` if never set.\"\"\"
        row = self.table.get(str(pair))
        return self.initial_value if row is None else row[action]

    def set_qvalue(self, pair, action, value):
        row = self.table.setdefault(str(pair), [self.initial_value] * self.n_bits)
        row[action] = value
"""

TERMINATED_OR_ENV_TRUNCATED_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer: store an episode first")
    ends = np.cumsum(self.lengths)  # transitions stored up to and including each row
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    goals = self.desired_goals[episodes].copy()
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(next_achieved, goals, {})
    done = (self.env.compute_terminated(next_achieved, goals, {})  # terminated or truncated
            | self.env.compute_truncated(next_achieved, goals, {}))
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], done, goals)
"""

OBSERVATIONS_FLATTENED_HER_STORE_EPISODE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def store_episode(self, observations, achieved_goals, desired_goal, actions):
    \"\"\"Store an episode of T steps: T + 1 observations and achieved goals (from reset
    on), its desired goal and T actions, copied. Replaces the oldest episode when full.\"\"\"
    observations, achieved_goals = np.asarray(observations), np.asarray(achieved_goals)
    desired_goal, actions = np.asarray(desired_goal), np.asarray(actions)
    steps = len(actions)
    if not 1 <= steps <= self.max_episode_steps:
        raise ValueError(f"an episode must have 1 to {self.max_episode_steps} steps, "
                         f"got {steps}")
    if len(observations) != steps + 1 or len(achieved_goals) != steps + 1:
        raise ValueError(f"{steps} actions need {steps + 1} observations and achieved "
                         f"goals, got {len(observations)} and {len(achieved_goals)}")
    observations = observations.reshape(steps + 1, -1)  # one flat vector per observation
    if self.observations is None:
        rows, columns = self.max_episodes, self.max_episode_steps + 1
        self.observations = np.zeros((rows, columns, observations.shape[1]),
                                     dtype=observations.dtype)
        self.achieved_goals = np.zeros((rows, columns, *achieved_goals.shape[1:]),
                                       dtype=achieved_goals.dtype)
        self.desired_goals = np.zeros((rows, *desired_goal.shape), dtype=desired_goal.dtype)
        self.actions = np.zeros((rows, columns - 1), dtype=actions.dtype)
    row = self.next_row
    self.observations[row, :steps + 1] = observations
    self.achieved_goals[row, :steps + 1] = achieved_goals
    self.desired_goals[row] = desired_goal
    self.actions[row, :steps] = actions
    self.lengths[row] = steps
    self.next_row = (row + 1) % self.max_episodes
"""

BUGS = (*BUGS,
    Bug("agent_keys_by_string", LESSON, "test_goal_agent",
        {"goal_agent": AGENT_KEYS_BY_STRING_GOAL_AGENT},
        description="keys the table by str(pair) ('printable, saves as JSON'): under numpy 2 str((np.int64(3), np.int64(5))) is not str((3, 5)), so a pair given as numpy scalars reads initial_value where its Q-values were set",
        rule="numpy-scalars", kind="numpy-scalars"),
    Bug("terminated_or_env_truncated", LESSON, "test_rewards_recomputed",
        {"her_sample": TERMINATED_OR_ENV_TRUNCATED_HER_SAMPLE},
        description="returns compute_terminated(...) | env.compute_truncated(...) as terminated ('done'): the env's truncation is that of the episode it is playing now, so after a truncated episode every sampled row says terminated",
        rule="terminated-recomputed", kind="wrong-source"),
    Bug("observations_flattened", LESSON, "test_store_episode",
        {"her_store_episode": OBSERVATIONS_FLATTENED_HER_STORE_EPISODE},
        description="store_episode keeps each observation flattened to a vector ('a network wants flat inputs'): observations that are numbers come back as (B, 1), grid observations (T + 1, 2, 3) as (B, 6), not as they were stored",
        rule="transition-as-stored", kind="wrong-formula"),
)


# --- blind round 16: wrong answers written from the lesson text alone ----------------

NEW_ROWS_GET_TIE_BREAKING_NOISE_GOAL_AGENT = """\
#| export
import numpy as np

from course.bit_flipping import bits_to_int
from qlearning import QLearningAgent


class GoalConditionedAgent(QLearningAgent):
    \"\"\"Lesson 01's Q-learning on pairs ``(state, goal)`` of bits_to_int numbers.

    The legal actions of every pair are the ``n_bits`` flips. A Q-value never set is
    ``initial_value``.
    \"\"\"

    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):
        super().__init__(alpha, epsilon, discount,
                         get_legal_actions=lambda pair: range(n_bits), seed=seed)
        self.n_bits = n_bits
        self.initial_value = initial_value
        self.table = {}  # (state, goal) -> the n_bits Q-values of that pair

    def get_qvalue(self, pair, action):
        \"\"\"Q(pair, action); ``initial_value`` if never set.\"\"\"
        row = self.table.get(pair)
        return self.initial_value if row is None else float(row[action])

    def set_qvalue(self, pair, action, value):
        if pair not in self.table:
            # a fresh row, jittered by a hair so that its greedy ties are not exact
            self.table[pair] = self.initial_value + 1e-9 * self.rng.standard_normal(self.n_bits)
        self.table[pair][action] = value
"""

VALUE_FLOORED_AT_INITIAL_VALUE_GOAL_AGENT = """\
#| export
import numpy as np

from course.bit_flipping import bits_to_int
from qlearning import QLearningAgent


class GoalConditionedAgent(QLearningAgent):
    \"\"\"Lesson 01's Q-learning on pairs ``(state, goal)`` of bits_to_int numbers.

    The legal actions of every pair are the ``n_bits`` flips. A Q-value never set is
    ``initial_value``.
    \"\"\"

    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):
        super().__init__(alpha, epsilon, discount,
                         get_legal_actions=lambda pair: range(n_bits), seed=seed)
        self.n_bits = n_bits
        self.initial_value = initial_value
        self.table = {}  # (state, goal) -> the n_bits Q-values of that pair

    def get_qvalue(self, pair, action):
        \"\"\"Q(pair, action); ``initial_value`` if never set.\"\"\"
        row = self.table.get(pair)
        return self.initial_value if row is None else row[action]

    def set_qvalue(self, pair, action, value):
        if pair not in self.table:
            self.table[pair] = [self.initial_value] * self.n_bits
        self.table[pair][action] = value

    def get_value(self, pair):
        \"\"\"V(pair): the best Q-value, unseen actions counting initial_value (one max, fast).\"\"\"
        return max([self.initial_value, *self.table.get(pair, ())])
"""

BUGS = (*BUGS,
    Bug("new_rows_get_tie_breaking_noise", LESSON, "test_goal_agent",
        {"goal_agent": NEW_ROWS_GET_TIE_BREAKING_NOISE_GOAL_AGENT},
        description="set_qvalue makes a pair's new row initial_value plus a 1e-9 jitter from the agent's generator ('so greedy ties differ'): setting one action moves every other action of the pair off initial_value, and the jitter draws move the agent's exploration",
        rule="agent-update", kind="wrong-formula"),
    Bug("value_floored_at_initial_value", LESSON, "test_goal_agent",
        {"goal_agent": VALUE_FLOORED_AT_INITIAL_VALUE_GOAL_AGENT},
        description="adds a fast get_value = max(initial_value, *row): right for unseen pairs, but once every action of a pair is set below initial_value (all -12 < -10) V reads -10 instead of -12, so the update targets bootstrapped from it are too high",
        rule="agent-update", kind="boundary"),
)


# --- blind round 17: wrong answers written from the lesson text alone ----------------

EPISODE_ENDS_CACHED_BY_TOTAL_HER_SAMPLE = """\
#| export
@add_to_class(HindsightReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` stored transitions drawn uniformly, a share k/(k+1) relabelled with
    hindsight goals; returns (obs, actions, rewards, next_obs, terminated, goals).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    total = len(self)
    if total == 0:
        raise ValueError("cannot sample from an empty buffer")
    # the episode ends only change when the buffer's content does: recompute them then
    if getattr(self, "_ends_total", None) != total:
        self._ends, self._ends_total = np.cumsum(self.lengths), total
    ends = self._ends
    flat = self.rng.integers(total, size=batch_size)
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])
    goals = self.desired_goals[episodes].copy()
    relabel = self.rng.random(batch_size) < self.k / (self.k + 1)
    goal_steps = hindsight_goal_steps(self.strategy, steps[relabel],
                                      self.lengths[episodes[relabel]], self.rng)
    goals[relabel] = self.achieved_goals[episodes[relabel], goal_steps]
    next_achieved = self.achieved_goals[episodes, steps + 1]
    rewards = self.env.compute_reward(next_achieved, goals, {})
    terminated = self.env.compute_terminated(next_achieved, goals, {})
    return (self.observations[episodes, steps], self.actions[episodes, steps], rewards,
            self.observations[episodes, steps + 1], terminated, goals)
"""

BUGS = (*BUGS,
    Bug("episode_ends_cached_by_total", LESSON, "test_wraparound",
        {"her_sample": EPISODE_ENDS_CACHED_BY_TOTAL_HER_SAMPLE},
        description="caches np.cumsum(lengths) and recomputes it only when len(buffer) changed: after the buffer wraps, two stores whose length changes cancel out leave stale ends, so a column no stored episode holds is sampled and a live transition never is",
        rule="dead-steps-unused", kind="after-wrap"),
)


# --- blind round 18: wrong answers written from the lesson text alone ----------------

QVALUE_ZERO_READS_AS_UNSET_GOAL_AGENT = edited(
    LESSON, 'goal_agent',
    ('        self.table = {}  # (state, goal) -> the n_bits Q-values of that pair\n',
     '        self.table = {}  # (state, goal) -> {action: Q-value} of the actions set\n'),
    ('        row = self.table.get(pair)\n        return self.initial_value if row is None else row[action]\n',
     '        return self.table.get(pair, {}).get(action) or self.initial_value\n'),
    ('        if pair not in self.table:\n            self.table[pair] = [self.initial_value] * self.n_bits\n        self.table[pair][action] = value',
     '        self.table.setdefault(pair, {})[action] = value\n'))

LEGAL_ACTIONS_LIST_SHARED_GOAL_AGENT = edited(
    LESSON, 'goal_agent',
    ('    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):\n',
     '    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):\n        self.flips = list(range(n_bits))  # made once, not on every call\n'),
    ('                         get_legal_actions=lambda pair: range(n_bits), seed=seed)\n',
     '                         get_legal_actions=lambda pair: self.flips, seed=seed)\n'),
    ('        self.table[pair][action] = value',
     '        self.table[pair][action] = value\n'))

K_MUST_BE_A_PYTHON_INT_HER_CLASS = edited(
    LESSON, 'her_class',
    ('        if k < 0:\n',
     '        if not isinstance(k, int) or k < 0:\n'),
    ('        return int(self.lengths.sum())',
     '        return int(self.lengths.sum())\n'))

BUFFER_SEED_ZERO_UNSEEDED_HER_CLASS = edited(
    LESSON, 'her_class',
    ('        self.rng = np.random.default_rng(seed)\n',
     '        self.rng = np.random.default_rng(seed) if seed else np.random.default_rng()\n'),
    ('        return int(self.lengths.sum())',
     '        return int(self.lengths.sum())\n'))

BUGS = (*BUGS,
    Bug("qvalue_zero_reads_as_unset", LESSON, "test_goal_agent",
        {"goal_agent": QVALUE_ZERO_READS_AS_UNSET_GOAL_AGENT},
        description="stores {action: value} per pair and reads it with `.get(action) or initial_value`: a Q-value learned to be 0.0 (a success) reads back as initial_value (-10)",
        rule="initial-value-zero", kind="falsy-as-missing"),
    Bug("legal_actions_list_shared", LESSON, "test_goal_agent",
        {"goal_agent": LEGAL_ACTIONS_LIST_SHARED_GOAL_AGENT},
        description="get_legal_actions returns the same list object (the agent's own) for every pair: a caller that changes the list it was given changes every later call's legal actions",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("k_must_be_a_python_int", LESSON, "test_relabel_fraction",
        {"her_class": K_MUST_BE_A_PYTHON_INT_HER_CLASS},
        description="validates k with isinstance(k, int): k = np.int64(4) (a number from a numpy sweep of k) is refused with ValueError",
        rule="numpy-scalars", kind="numpy-scalars"),
    Bug("buffer_seed_zero_unseeded", LESSON, "test_uniform_transitions",
        {"her_class": BUFFER_SEED_ZERO_UNSEEDED_HER_CLASS},
        description="`default_rng(seed) if seed else default_rng()`: seed = 0 is taken for no seed, so two buffers of seed 0 give different batches",
        rule="buffer-own-generator", kind="falsy-as-missing"),
)


# --- blind round 19: wrong answers written from the lesson text alone ----------------

LOOP_STOPS_ON_A_ZERO_REWARD_PLAY_AND_LEARN_WITH_HER = """\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    \"\"\"Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal.\"\"\"
    observation, _ = env.reset()
    desired_goal = observation["desired_goal"]
    goal = int(bits_to_int(desired_goal))
    observations, achieved_goals = [observation["observation"]], [observation["achieved_goal"]]
    actions, terminated, truncated, reward = [], False, False, None
    while reward != 0 and not truncated:  # a reward of 0 is the success
        action = agent.get_action((int(bits_to_int(observation["observation"])), goal))
        observation, reward, terminated, truncated, _ = env.step(action)
        observations.append(observation["observation"])
        achieved_goals.append(observation["achieved_goal"])
        actions.append(action)
    replay.store_episode(observations, achieved_goals, desired_goal, actions)
    states, actions, rewards, next_states, dones, goals = replay.sample(batch_size)
    for state, action, reward, next_state, done, goal in zip(
            bits_to_int(states).tolist(), actions.tolist(), rewards.tolist(),
            bits_to_int(next_states).tolist(), dones.tolist(), bits_to_int(goals).tolist()):
        agent.update((state, goal), action, reward, (next_state, goal), done)
    return bool(terminated)
"""


BUGS = (*BUGS,
    Bug("loop_stops_on_a_zero_reward", LESSON, "test_her_loop",
        {"play_and_learn_with_her": LOOP_STOPS_ON_A_ZERO_REWARD_PLAY_AND_LEARN_WITH_HER},
        description="plays until the reward is 0 or truncated, not until terminated: an environment whose success reward is not 0 is played past the goal (and one paying 0 a step is cut after one), and the success reported is the last step's",
        rule="loop-plays-to-end", kind="past-terminal"),
)


# --- blind round 20: wrong answers written from the lesson text alone ----------------

DRAWS_WITHOUT_REPLACEMENT_WHEN_IT_CAN_HER_SAMPLE = _edit("her_sample", (
    "    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions\n",
    "    # uniform over all transitions, no duplicates unless the batch is larger\n"
    "    flat = self.rng.choice(total, size=batch_size, replace=batch_size > total)\n"))


BUGS = (*BUGS,
    Bug("draws_without_replacement_when_it_can", LESSON, "test_uniform_transitions",
        {"her_sample": DRAWS_WITHOUT_REPLACEMENT_WHEN_IT_CAN_HER_SAMPLE},
        description="draws the batch's transitions with rng.choice(total, batch_size, "
                    "replace=batch_size > total): no transition appears twice in a batch "
                    "unless it must, so the draws are not independent uniform draws",
        rule="uniform-transitions", kind="replacement"),
)


# --- blind round 22: wrong answers written from the lesson text alone ----------------

AGENT_TIES_BROKEN_BY_NP_RANDOM_GOAL_AGENT = _edit("goal_agent", (
    "        self.table[pair][action] = value",
    "        self.table[pair][action] = value\n\n"
    "    def get_best_action(self, pair):\n"
    "        \"\"\"A flip of maximal Q-value, ties at random (numpy, no Python loop).\"\"\"\n"
    "        row = np.asarray(self.table.get(pair, [self.initial_value] * self.n_bits))\n"
    "        return int(np.random.choice(np.flatnonzero(row == row.max())))\n"))

# its twin: epsilon's coin tossed with numpy's global generator, the flips drawn with the
# agent's own (at epsilon 1 or 0 the coin decides nothing, so only epsilon 0.5 shows it)
AGENT_COIN_FROM_NP_RANDOM_GOAL_AGENT = _edit("goal_agent", (
    "        self.table[pair][action] = value",
    "        self.table[pair][action] = value\n\n"
    "    def get_action(self, pair):\n"
    "        \"\"\"Epsilon-greedy on the pair: explore with probability epsilon.\"\"\"\n"
    "        if np.random.random() < self.epsilon:\n"
    "            return int(self.rng.integers(self.n_bits))\n"
    "        return self.get_best_action(pair)\n"))

EMPTY_STRATEGY_TAKEN_AS_FUTURE_HER_CLASS = _edit("her_class", (
    "        if strategy not in HER_STRATEGIES:\n",
    "        strategy = strategy or \"future\"  # none given: the paper's default\n"
    "        if strategy not in HER_STRATEGIES:\n"))

# its twin: only None taken for "not given" ('' is refused)
STRATEGY_NONE_TAKEN_AS_DEFAULT_HER_CLASS = _edit("her_class", (
    "        if strategy not in HER_STRATEGIES:\n",
    "        if strategy is None:  # not given: the paper's default\n"
    "            strategy = \"future\"\n"
    "        if strategy not in HER_STRATEGIES:\n"))


BUGS = (*BUGS,
    Bug("agent_ties_broken_by_np_random", LESSON, "test_goal_agent",
        {"goal_agent": AGENT_TIES_BROKEN_BY_NP_RANDOM_GOAL_AGENT},
        description="adds a numpy get_best_action that breaks ties with np.random.choice: "
                    "two agents of one seed choose different greedy flips",
        rule="agent-seeded", kind="global-generator"),
    Bug("agent_coin_from_np_random", LESSON, "test_goal_agent",
        {"goal_agent": AGENT_COIN_FROM_NP_RANDOM_GOAL_AGENT},
        description="overrides get_action to toss epsilon's coin with np.random.random() "
                    "(the flips from self.rng): two agents of one seed at epsilon 0.5 explore "
                    "at different steps",
        rule="agent-seeded", kind="global-generator"),
    Bug("empty_strategy_taken_as_future", LESSON, "test_errors",
        {"her_class": EMPTY_STRATEGY_TAKEN_AS_FUTURE_HER_CLASS},
        description="`strategy = strategy or 'future'`: an empty string (or None) is taken "
                    "for the default and accepted instead of refused",
        rule="unknown-strategy-refused", kind="falsy-as-missing"),
    Bug("strategy_none_taken_as_default", LESSON, "test_errors",
        {"her_class": STRATEGY_NONE_TAKEN_AS_DEFAULT_HER_CLASS},
        description="`if strategy is None: strategy = 'future'`: strategy=None is accepted as "
                    "the default instead of refused as an unknown strategy",
        rule="unknown-strategy-refused", kind="falsy-as-missing"),
)


# --- blind round 24: wrong answers written from the lesson text alone ----------------

# the buffer draws with the environment's generator: equal seeds beside environments
# seeded apart sample apart, and sampling moves the environment's resets
BUFFER_USES_THE_ENVS_GENERATOR_HER_CLASS = _edit("her_class", (
    "        self.rng = np.random.default_rng(seed)\n",
    "        self.rng = env.np_random  # the environment is seeded already\n"))

# a fast update that tests the flag by identity: np.bool_(True), as a replayed row holds
# it, is bootstrapped from as if the episode went on
AGENT_UPDATE_TERMINAL_BY_IDENTITY_GOAL_AGENT = _edit("goal_agent", (
    "        self.table[pair][action] = value",
    "        self.table[pair][action] = value\n\n"
    "    def update(self, pair, action, reward, next_pair, terminated):\n"
    "        \"\"\"Lesson 01's update, reading the next pair's row at once.\"\"\"\n"
    "        row = self.table.get(next_pair)\n"
    "        if terminated is True:\n"
    "            future = 0.0\n"
    "        else:\n"
    "            future = self.initial_value if row is None else max(row)\n"
    "        target = reward + self.discount * future\n"
    "        old = self.get_qvalue(pair, action)\n"
    "        self.set_qvalue(pair, action, (1 - self.alpha) * old + self.alpha * target)\n"))


BUGS = (*BUGS,
    Bug("buffer_uses_the_envs_generator", LESSON, "test_uniform_transitions",
        {"her_class": BUFFER_USES_THE_ENVS_GENERATOR_HER_CLASS},
        description="draws with the environment's generator (self.rng = env.np_random, 'one "
                    "seed for the whole run'): seed is ignored, two buffers of one seed on "
                    "differently seeded environments give different batches, and sampling "
                    "moves the environment's resets",
        rule="buffer-own-generator", kind="global-generator"),
    Bug("agent_update_terminal_by_identity", LESSON, "test_goal_agent",
        {"goal_agent": AGENT_UPDATE_TERMINAL_BY_IDENTITY_GOAL_AGENT},
        description="adds a fast update reading the next pair's row directly, with "
                    "'0.0 if terminated is True': a terminated flag given as np.bool_(True) "
                    "is bootstrapped from the next pair as if the episode went on",
        rule="numpy-scalars", kind="numpy-scalars"),
)


# --- blind round 25 --------------------------------------------------------------------

# A fixed default seed, "reproducible by default": seed=None still gives fresh entropy, but a
# buffer made without the argument is seeded with 0, so every such buffer draws alike.
HER_CLASS_DEFAULT_SEED_ZERO = _edit("her_class", (
    "                 seed=None):", "                 seed=0):"))

BUGS = (*BUGS,
    # blind round 25
    Bug("her_class_default_seed_zero", LESSON, "test_uniform_transitions",
        {"her_class": HER_CLASS_DEFAULT_SEED_ZERO},
        description="the constructor's default is seed=0 ('reproducible by default'): a "
                    "buffer made without a seed is seeded with 0, so all of them draw the same "
                    "batches instead of np.random.default_rng(None)'s fresh entropy",
        rule="buffer-own-generator", kind="global-generator"),
)
