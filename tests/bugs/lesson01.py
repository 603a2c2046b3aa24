"""Buggy answers to lesson 01 (tabular Q-learning), each the mistake its name says.

Every answer is a whole answer cell, as a student would submit it: most are the solution
cell with the bug edited in (``edited``), so its ``#| export`` line, decorator and
docstring follow the solution; the others keep them and rewrite the body.
"""

from . import Bug, edits_of

LESSON = "01_qlearning"


_edit = edits_of(LESSON)


# --- get_value --------------------------------------------------------------------------

VALUE_MAX_STARTS_AT_ZERO = _edit("get_value", (
    "    return max(self.get_qvalue(state, action) for action in "
    "self.get_legal_actions(state))",
    """\
    best = 0.0
    for action in self.get_legal_actions(state):
        best = max(best, self.get_qvalue(state, action))
    return best"""))

VALUE_OVER_ALL_ACTIONS = _edit("get_value", (
    "for action in self.get_legal_actions(state)", "for action in range(N_ACTIONS)"))

VALUE_OVER_STORED_QVALUES = _edit("get_value", (
    "    return max(self.get_qvalue(state, action) for action in "
    "self.get_legal_actions(state))",
    """\
    legal = set(self.get_legal_actions(state))
    stored = [q for action, q in self._qvalues[state].items() if action in legal]
    return max(stored) if stored else 0.0  # a state never updated: nothing stored yet"""))

# --- get_best_action --------------------------------------------------------------------

TIES_TO_LOWEST_ACTION = _edit("get_best_action", (
    """\
    qvalues = [self.get_qvalue(state, action) for action in actions]
    best = max(qvalues)
    tied = [action for action, q in zip(actions, qvalues) if q == best]
    return int(tied[self.rng.integers(len(tied))])""",
    "    return int(max(actions, key=lambda action: self.get_qvalue(state, action)))"))

TIES_WITH_GLOBAL_RANDOM = _edit(
    "get_best_action",
    ("#| export\n", "#| export\nimport random\n\n\n"),
    ("return int(tied[self.rng.integers(len(tied))])", "return int(random.choice(tied))"))

BEST_ACTION_AS_POSITION = _edit("get_best_action", (
    "tied = [action for action, q in zip(actions, qvalues) if q == best]",
    "tied = [index for index, q in enumerate(qvalues) if q == best]"))

# --- get_action -------------------------------------------------------------------------

_EXPLORE = """\
        actions = list(self.get_legal_actions(state))
        return int(actions[self.rng.integers(len(actions))])"""

EXPLORES_ONLY_NON_GREEDY_ACTIONS = _edit(
    "get_action",
    ("    if self.rng.random()", "    best = self.get_best_action(state)\n"
                               "    if self.rng.random()"),
    (_EXPLORE, """\
        others = [a for a in self.get_legal_actions(state) if a != best]
        if others:
            return int(others[self.rng.integers(len(others))])"""),
    ("    return self.get_best_action(state)", "    return best"))

EXPLORES_ILLEGAL_ACTIONS = _edit("get_action", (
    _EXPLORE, "        return int(self.rng.integers(6))"))

EXPLORES_WITH_NUMPYS_GLOBAL_GENERATOR = _edit("get_action", (
    _EXPLORE, "        return int(np.random.choice(list(self.get_legal_actions(state))))"))

COIN_FROM_PYTHONS_RANDOM = _edit(
    "get_action",
    ("#| export\n", "#| export\nimport random\n\n\n"),
    ("if self.rng.random() < self.epsilon:", "if random.random() < self.epsilon:"))

COIN_INVERTED = _edit("get_action", (
    "if self.rng.random() < self.epsilon:", "if self.rng.random() > self.epsilon:"))

GREEDY_BRANCH_TAKES_THE_FIRST_BEST = _edit("get_action", (
    "    return self.get_best_action(state)",
    """\
    actions = list(self.get_legal_actions(state))
    return max(actions, key=lambda action: self.get_qvalue(state, action))"""))

EPSILON_READ_AT_CONSTRUCTION = _edit(
    "get_action",
    ("#| export\n", """\
#| export
_init_without_exploration_rate = QLearningAgent.__init__


def _init_with_exploration_rate(self, *args, **kwargs):
    _init_without_exploration_rate(self, *args, **kwargs)
    self.exploration_rate = self.epsilon


QLearningAgent.__init__ = _init_with_exploration_rate


"""),
    ("< self.epsilon", "< self.exploration_rate"))

EPSILON_READ_AT_FIRST_CALL = _edit("get_action", (
    "    if self.rng.random() < self.epsilon:",
    """\
    if not hasattr(self, "exploration_rate"):
        self.exploration_rate = self.epsilon
    if self.rng.random() < self.exploration_rate:"""))

# --- update -----------------------------------------------------------------------------

UPDATE_IGNORES_TERMINATED = _edit("update", (
    """\
    future = 0.0 if terminated else self.get_value(next_state)
    target = reward + self.discount * future""",
    "    target = reward + self.discount * self.get_value(next_state)"))

UPDATE_ALPHA_SWAPPED = _edit("update", (
    "(1 - self.alpha) * old + self.alpha * target",
    "self.alpha * old + (1 - self.alpha) * target"))

# --- play_and_train ---------------------------------------------------------------------

LOOP_PASSES_TRUNCATION_AS_TERMINAL = _edit(
    "play_and_train",
    ("        agent.update(state, action, reward, next_state, terminated)",
     "        done = terminated or truncated\n"
     "        agent.update(state, action, reward, next_state, done)"),
    ("if terminated or truncated:", "if done:"))

LOOP_IGNORES_TRUNCATION = _edit("play_and_train", (
    "if terminated or truncated:", "if terminated:"))

LOOP_NEVER_STOPS_UNLESS_TERMINATED = _edit(
    "play_and_train",
    ("for _ in range(t_max):", "while True:  # ignores t_max"),
    ("if terminated or truncated:", "if terminated:"))

LOOP_RETURNS_NOTHING = _edit("play_and_train", ("\n    return total_reward", ""))

LOOP_RETURNS_LAST_REWARD = _edit(
    "play_and_train",
    ("    total_reward = 0.0\n", ""),
    ("        total_reward += reward\n", ""),
    ("return total_reward", "return reward"))



LOOP_SKIPS_THE_LAST_UPDATE = _edit("play_and_train", (
    """\
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break""",
    """\
        total_reward += reward
        if terminated or truncated:
            break  # the episode is over: nothing left to learn
        agent.update(state, action, reward, next_state, terminated)
        state = next_state"""))

LOOP_NEVER_MOVES_ON = _edit("play_and_train", ("        state = next_state\n", ""))

LOOP_ENDS_ON_A_PENALTY = _edit("play_and_train", (
    "if terminated or truncated:",
    "if terminated or truncated or reward <= -10:  # an illegal pick-up or drop-off"))

# --- boundaries (found by mutation testing) ---------------------------------------------

LOOP_ONE_STEP_PAST_T_MAX = _edit("play_and_train", (
    "for _ in range(t_max):", "for _ in range(t_max + 1):"))

LOOP_DEFAULT_T_MAX_OF_1000 = _edit("play_and_train", ("t_max=10_000", "t_max=1_000"))


BUGS = (
    Bug("value_max_starts_at_zero", LESSON, "test_value_and_best_action",
        {"get_value": VALUE_MAX_STARTS_AT_ZERO}, also_fails=("test_update",),
        description="the running maximum starts at 0, so a state whose legal Q-values "
                    "are all negative gets value 0",
        rule="value-is-legal-max", kind="boundary"),
    Bug("value_over_all_actions", LESSON, "test_value_and_best_action",
        {"get_value": VALUE_OVER_ALL_ACTIONS}, also_fails=("test_update",),
        description="the maximum runs over all six Taxi actions, not the state's legal "
                    "ones; an illegal action's unset Q-value (0) can win",
        rule="value-is-legal-max", kind="wrong-source"),
    Bug("value_over_stored_qvalues", LESSON, "test_value_and_best_action",
        {"get_value": VALUE_OVER_STORED_QVALUES}, also_fails=("test_update",),
        description="the maximum runs over the Q-values stored for the state, so a legal "
                    "action never tried (Q-value 0) is left out",
        rule="unset-qvalue-is-zero", kind="wrong-source"),
    Bug("best_action_as_position", LESSON, "test_value_and_best_action",
        {"get_best_action": BEST_ACTION_AS_POSITION},
        also_fails=("test_best_action_ties", "test_epsilon_greedy"),
        description="returns the position of the best Q-value in the list of legal "
                    "actions, not the action there",
        rule="best-action-is-argmax", kind="wrong-source"),
    Bug("ties_to_lowest_action", LESSON, "test_best_action_ties",
        {"get_best_action": TIES_TO_LOWEST_ACTION},
        also_fails=("test_epsilon_greedy",),  # get_action's greedy choice is this one
        description="max() with a key returns the first of the tied actions, every time",
        rule="ties-uniform", kind="wrong-distribution"),
    Bug("ties_with_global_random", LESSON, "test_best_action_ties",
        {"get_best_action": TIES_WITH_GLOBAL_RANDOM},
        description="ties broken uniformly, but by Python's global random module: runs "
                    "do not reproduce with the agent's seed",
        rule="own-generator", kind="global-generator"),
    Bug("explores_only_non_greedy_actions", LESSON, "test_epsilon_greedy",
        {"get_action": EXPLORES_ONLY_NON_GREEDY_ACTIONS},
        description="exploration picks among the non-greedy actions only (another "
                    "convention, not the one the lesson asks for: best with probability "
                    "1 - eps + eps/k)",
        rule="epsilon-greedy", kind="wrong-distribution"),
    Bug("explores_illegal_actions", LESSON, "test_epsilon_greedy",
        {"get_action": EXPLORES_ILLEGAL_ACTIONS},
        description="exploration draws from range(6), ignoring get_legal_actions",
        rule="legal-actions-only", kind="wrong-source"),
    Bug("explores_with_numpys_global_generator", LESSON, "test_epsilon_greedy",
        {"get_action": EXPLORES_WITH_NUMPYS_GLOBAL_GENERATOR},
        description="the exploring action comes from np.random.choice, numpy's global "
                    "generator: the agent's seed does not reproduce its choices",
        rule="own-generator", kind="global-generator"),
    Bug("coin_from_pythons_random", LESSON, "test_epsilon_greedy",
        {"get_action": COIN_FROM_PYTHONS_RANDOM},
        description="whether to explore is decided by random.random(), Python's global "
                    "generator",
        rule="own-generator", kind="global-generator"),
    Bug("coin_inverted", LESSON, "test_epsilon_greedy", {"get_action": COIN_INVERTED},
        description="explores with probability 1 - epsilon: always at epsilon 0, never at "
                    "epsilon 1",
        rule="epsilon-greedy", kind="boundary"),
    Bug("greedy_branch_takes_the_first_best", LESSON, "test_epsilon_greedy",
        {"get_action": GREEDY_BRANCH_TAKES_THE_FIRST_BEST},
        description="the greedy choice is max() over the legal actions, not "
                    "get_best_action: ties go to the first action",
        rule="greedy-is-best-action", kind="wrong-distribution"),
    Bug("epsilon_read_at_construction", LESSON, "test_epsilon_greedy",
        {"get_action": EPSILON_READ_AT_CONSTRUCTION},
        description="epsilon copied once when the agent is built, so a training loop "
                    "that decays agent.epsilon changes nothing",
        rule="epsilon-read-each-call", kind="protocol"),
    Bug("epsilon_read_at_first_call", LESSON, "test_epsilon_greedy",
        {"get_action": EPSILON_READ_AT_FIRST_CALL},
        description="epsilon copied on the first get_action call, so decaying "
                    "agent.epsilon after the first episode changes nothing",
        rule="epsilon-read-each-call", kind="protocol"),
    Bug("update_ignores_terminated", LESSON, "test_update",
        {"update": UPDATE_IGNORES_TERMINATED},
        description="always bootstraps from the next state, even when it is terminal",
        rule="terminal-target-is-reward", kind="past-terminal"),
    Bug("update_alpha_swapped", LESSON, "test_update",
        {"update": UPDATE_ALPHA_SWAPPED},
        description="alpha weighs the old value and 1 - alpha the target",
        rule="q-learning-rule", kind="wrong-formula"),
    Bug("loop_passes_truncation_as_terminal", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_PASSES_TRUNCATION_AS_TERMINAL},
        description="update is told terminated or truncated, so a time limit zeroes "
                    "the bootstrap",
        rule="update-gets-terminated", kind="past-terminal"),
    Bug("loop_never_stops_unless_terminated", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_NEVER_STOPS_UNLESS_TERMINATED},
        description="while True, stopping only when terminated: an episode that is "
                    "truncated never ends (the corridor stops it past its time limit)",
        rule="stops-on-terminated-or-truncated", kind="past-terminal"),
    Bug("loop_ignores_truncation", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_IGNORES_TRUNCATION},
        description="the episode stops only on terminated and runs past the time limit "
                    "(until t_max)",
        rule="stops-on-terminated-or-truncated", kind="past-terminal"),
    Bug("loop_returns_nothing", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_RETURNS_NOTHING},
        description="the total reward is added up but never returned",
        rule="result-types", kind="protocol"),
    Bug("loop_returns_last_reward", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_RETURNS_LAST_REWARD},
        description="returns the last step's reward instead of the episode's total",
        rule="returns-total-reward", kind="wrong-formula"),
    Bug("loop_skips_the_last_update", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_SKIPS_THE_LAST_UPDATE},
        description="stops before updating on the step that ends the episode, so the "
                    "goal's reward is never learned",
        rule="loop-steps", kind="past-terminal"),
    Bug("loop_never_moves_on", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_NEVER_MOVES_ON},
        description="state = next_state forgotten: every update and action is for the "
                    "first state",
        rule="update-own-transition", kind="wrong-source"),
    Bug("loop_ends_on_a_penalty", LESSON, "test_learning",
        {"play_and_train": LOOP_ENDS_ON_A_PENALTY},
        description="the episode ends on Taxi's -10 penalty as if an illegal pick-up or "
                    "drop-off were the end: episodes stop short and little is learned",
        rule="loop-learns-taxi", kind="protocol"),
    Bug("play_and_train_one_step_past_t_max", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_ONE_STEP_PAST_T_MAX},
        description="range(t_max + 1): one step more than t_max allows",
        rule="t-max-cap", kind="boundary"),
    Bug("play_and_train_default_t_max_of_1000", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_DEFAULT_T_MAX_OF_1000},
        description="the signature's default t_max changed from 10,000 to 1,000",
        rule="t-max-cap", kind="boundary"),
)

# --- what every call promises (checks.contracts) ------------------------------------------

LOOP_DECAYS_EPSILON = _edit("play_and_train", (
    "    return total_reward",
    "    agent.epsilon *= 0.99  # explore a little less after each episode\n"
    "    return total_reward"))

BUGS = (*BUGS,
    Bug("loop_decays_epsilon", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_DECAYS_EPSILON},
        description="the loop decays agent.epsilon itself, which a loop may only read",
        rule="lent-as-stated", kind="protocol"),
)


# --- blind round 1: wrong answers written from the lesson text alone ----------------

COIN_QUANTISED_TO_PERCENT_GET_ACTION = """\
#| export
@add_to_class(QLearningAgent)
def get_action(self, state):
    \"\"\"Epsilon-greedy: random legal action with probability epsilon, else the best.\"\"\"
    if self.rng.integers(100) < self.epsilon * 100:  # explore epsilon percent of the time
        actions = list(self.get_legal_actions(state))
        return int(actions[self.rng.integers(len(actions))])
    return self.get_best_action(state)
"""

TERMINATED_COMPARED_WITH_IS_TRUE_UPDATE = """\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    \"\"\"One Q-learning step towards reward + discount * V(next_state) (just the reward
    when the episode terminated).\"\"\"
    if terminated is True:
        target = reward
    else:
        target = reward + self.discount * self.get_value(next_state)
    old = self.get_qvalue(state, action)
    self.set_qvalue(state, action, (1 - self.alpha) * old + self.alpha * target)
"""

BUGS = (*BUGS,
    Bug("coin_quantised_to_percent", LESSON, "test_epsilon_greedy",
        {"get_action": COIN_QUANTISED_TO_PERCENT_GET_ACTION},
        description="explores when rng.integers(100) < 100 * epsilon: probabilities are rounded "
                    "up to whole percents (epsilon 0.001 explores 1% of the time, 0.255 explores "
                    "26%)",
        rule="epsilon-greedy", kind="wrong-distribution"),
    Bug("terminated_compared_with_is_true", LESSON, "test_update",
        {"update": TERMINATED_COMPARED_WITH_IS_TRUE_UPDATE},
        description="tests `terminated is True`, so a numpy True (np.bool_, what many "
                    "environments return) is treated as not terminated and bootstraps",
        rule="terminal-target-is-reward", kind="numpy-scalars"),
)


# --- blind round 2: wrong answers written from the lesson text alone ----------------

TIES_BY_RANDOM_JITTER_GET_BEST_ACTION = """\
#| export
@add_to_class(QLearningAgent)
def get_best_action(self, state):
    \"\"\"A legal action of maximal Q-value; ties broken uniformly at random by ``self.rng``.\"\"\"
    actions = list(self.get_legal_actions(state))
    # a tiny random jitter breaks ties at random
    noisy = [self.get_qvalue(state, action) + 1e-6 * self.rng.random() for action in actions]
    return int(actions[int(np.argmax(noisy))])
"""

VALUE_IS_EPSILON_GREEDY_EXPECTATION_GET_VALUE = """\
#| export
@add_to_class(QLearningAgent)
def get_value(self, state):
    \"\"\"The largest Q-value over the legal actions of ``state``.\"\"\"
    qvalues = [self.get_qvalue(state, action) for action in self.get_legal_actions(state)]
    # the agent acts epsilon-greedily, so value what it will really do there
    return (1 - self.epsilon) * max(qvalues) + self.epsilon * sum(qvalues) / len(qvalues)
"""

UPDATE_SARSA_TARGET_UPDATE = """\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    \"\"\"One Q-learning step towards reward + discount * V(next_state) (just the reward
    when the episode terminated).\"\"\"
    if terminated:
        target = reward
    else:
        next_action = self.get_action(next_state)
        target = reward + self.discount * self.get_qvalue(next_state, next_action)
    old = self.get_qvalue(state, action)
    self.set_qvalue(state, action, (1 - self.alpha) * old + self.alpha * target)
"""

LOOP_DO_WHILE_T_MAX_ZERO_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    steps = 0
    while True:
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        steps += 1
        if terminated or truncated or steps >= t_max:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("ties_by_random_jitter", LESSON, "test_value_and_best_action",
        {"get_best_action": TIES_BY_RANDOM_JITTER_GET_BEST_ACTION},
        description="adds 1e-6 * rng.random() to every Q-value and takes the argmax: exact ties "
                    "are broken uniformly, but an action ahead by less than 1e-6 often loses",
        rule="best-action-is-argmax", kind="boundary"),
    Bug("value_is_epsilon_greedy_expectation", LESSON, "test_value_and_best_action",
        {"get_value": VALUE_IS_EPSILON_GREEDY_EXPECTATION_GET_VALUE},
        also_fails=("test_update",),
        description="returns (1 - eps) * max + eps * mean of the legal Q-values, the value of the "
                    "epsilon-greedy policy; equal to the max only at epsilon 0 or when all "
                    "Q-values are equal",
        rule="value-is-legal-max", kind="wrong-formula"),
    Bug("update_sarsa_target", LESSON, "test_update",
        {"update": UPDATE_SARSA_TARGET_UPDATE},
        description="bootstraps from Q(s', a') with a' = self.get_action(next_state), an epsilon-"
                    "greedy sample, not from the max (same as the rule only at epsilon 0)",
        rule="q-learning-rule", kind="wrong-source"),
    Bug("loop_do_while_t_max_zero", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_DO_WHILE_T_MAX_ZERO_PLAY_AND_TRAIN},
        description="checks the step count only after taking a step, so t_max=0 (or negative) "
                    "still plays one step",
        rule="t-max-cap", kind="boundary"),
)


# --- numpy scalars (checks.contracts) ------------------------------------------------------

UPDATE_ASSERTS_PYTHON_INTS = _edit("update", (
    '    """One Q-learning step towards reward + discount * V(next_state) (just the reward\n'
    '    when the episode terminated)."""\n',
    '    """One Q-learning step towards reward + discount * V(next_state) (just the reward\n'
    '    when the episode terminated)."""\n'
    '    assert isinstance(state, int) and isinstance(action, int), "states and actions are ints"\n'))

BUGS = (*BUGS,
    Bug("update_asserts_python_ints", LESSON, "test_update",
        {"update": UPDATE_ASSERTS_PYTHON_INTS},
        description="asserts isinstance(state, int): a replayed row's np.int64 is refused",
        rule="numpy-scalars", kind="numpy-scalars"),
)


# --- blind round 3: wrong answers written from the lesson text alone ----------------

EXPLORE_LEGAL_ACTIONS_CACHED_GET_ACTION = """\
#| export
@add_to_class(QLearningAgent)
def get_action(self, state):
    \"\"\"Epsilon-greedy: random legal action with probability epsilon, else the best.\"\"\"
    if not hasattr(self, "_actions"):  # the same actions everywhere: ask once
        self._actions = list(self.get_legal_actions(state))
    if self.rng.random() < self.epsilon:
        return int(self._actions[self.rng.integers(len(self._actions))])
    return self.get_best_action(state)
"""

LOOP_RESETS_WITH_FIXED_SEED_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset(seed=0)
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

LOOP_CHOOSES_NEXT_ACTION_BEFORE_UPDATE_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    action = agent.get_action(state)
    for _ in range(t_max):
        next_state, reward, terminated, truncated, _ = env.step(action)
        next_action = agent.get_action(next_state)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state, action = next_state, next_action
        if terminated or truncated:
            break
    return total_reward
"""

LOOP_EXPLORES_ON_ITS_OWN_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    import numpy as np
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        if np.random.random() < agent.epsilon:
            action = env.action_space.sample()
        else:
            action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("explore_legal_actions_cached", LESSON, "test_epsilon_greedy",
        {"get_action": EXPLORE_LEGAL_ACTIONS_CACHED_GET_ACTION},
        description="get_action stores the legal actions of the first state it sees and explores "
                    "among those in every later state (right in Taxi, illegal elsewhere)",
        rule="legal-actions-only", kind="wrong-source"),
    Bug("loop_resets_with_fixed_seed", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_RESETS_WITH_FIXED_SEED_PLAY_AND_TRAIN},
        description="env.reset(seed=0) as in the tour cell: every episode starts from the same "
                    "state, so Taxi's other start states are never trained from",
        rule="loop-steps", kind="protocol"),
    Bug("loop_chooses_next_action_before_update", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_CHOOSES_NEXT_ACTION_BEFORE_UPDATE_PLAY_AND_TRAIN},
        description="asks for the next state's action before updating on the current step (so it "
                    "is chosen with the old Q-values) and asks once more for the final state",
        rule="loop-steps", kind="protocol"),
    Bug("loop_explores_on_its_own", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_EXPLORES_ON_ITS_OWN_PLAY_AND_TRAIN},
        description="with probability agent.epsilon the loop plays env.action_space.sample() "
                    "instead of the agent's action (exploring twice, with numpy's global "
                    "generator)",
        rule="loop-steps", kind="protocol"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

LOOP_TERMINATED_ONLY_IF_NOT_TRUNCATED_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        # a cut-off episode is not a real end: only a genuine termination zeroes the future
        agent.update(state, action, reward, next_state, terminated and not truncated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("loop_terminated_only_if_not_truncated", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_TERMINATED_ONLY_IF_NOT_TRUNCATED_PLAY_AND_TRAIN},
        description="passes `terminated and not truncated` to update: when the goal is reached on the very step the time limit falls due (both flags True), the update bootstraps from the terminal state",
        rule="update-gets-terminated", kind="past-terminal"),
)


# --- blind round 6: wrong answers written from the lesson text alone ----------------

LOOP_CLOSES_THE_ENV_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    env.close()
    return total_reward
"""

BUGS = (*BUGS,
    Bug("loop_closes_the_env", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_CLOSES_THE_ENV_PLAY_AND_TRAIN},
        description="tidies up with env.close() after the episode (as gymnasium's tutorials do): a call the lent environment does not allow, harmless-looking on Taxi",
        rule="lent-as-stated", kind="protocol"),
)


# --- blind round 8: wrong answers written from the lesson text alone ----------------

LOOP_TOTAL_CAST_TO_INT_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    total_reward = 0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return int(total_reward)  # rewards are whole numbers
"""

BUGS = (*BUGS,
    Bug("loop_total_cast_to_int", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_TOTAL_CAST_TO_INT_PLAY_AND_TRAIN},
        description="returns int(total_reward) (Taxi's rewards are whole numbers): any fractional total is truncated towards zero",
        rule="returns-total-reward", kind="wrong-formula"),
)


# --- blind round 11: wrong answers written from the lesson text alone ----------------

NEXT_VALUE_OVER_CURRENT_STATES_ACTIONS_UPDATE = """\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    \"\"\"One Q-learning step towards reward + discount * V(next_state) (just the reward
    when the episode terminated).\"\"\"
    actions = list(self.get_legal_actions(state))
    if terminated:
        future = 0.0
    else:
        future = max(self.get_qvalue(next_state, a) for a in actions)
    target = reward + self.discount * future
    old = self.get_qvalue(state, action)
    self.set_qvalue(state, action, (1 - self.alpha) * old + self.alpha * target)
"""

BUGS = (*BUGS,
    Bug("next_value_over_current_states_actions", LESSON, "test_update",
        {"update": NEXT_VALUE_OVER_CURRENT_STATES_ACTIONS_UPDATE},
        description="the bootstrap maximum runs over Q(next_state, a) for the legal actions of state, not of next_state (the same in Taxi, wrong when the two states allow different actions)",
        rule="q-learning-rule", kind="wrong-source"),
)


# --- blind round 13: wrong answers written from the lesson text alone ----------------

EXPLORES_BY_DEALING_A_SHUFFLED_DECK_GET_ACTION = """\
#| export
@add_to_class(QLearningAgent)
def get_action(self, state):
    \"\"\"Epsilon-greedy: random legal action with probability epsilon, else the best.\"\"\"
    if self.rng.random() < self.epsilon:
        decks = self.__dict__.setdefault("_exploration_decks", {})
        deck = decks.get(state)
        if not deck:  # deal every legal action once, in random order, before repeating
            deck = [int(a) for a in self.rng.permutation(list(self.get_legal_actions(state)))]
            decks[state] = deck
        return deck.pop()
    return self.get_best_action(state)
"""

T_MAX_REPLACED_BY_ENV_TIME_LIMIT_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    # the environment's own time limit is the real cap; t_max is for envs without one
    spec = getattr(env, "spec", None)
    limit = spec.max_episode_steps if spec is not None and spec.max_episode_steps else t_max
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(limit):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

ASKS_AHEAD_ONE_ACTION_PAST_T_MAX_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    action = agent.get_action(state)
    for _ in range(t_max):
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        if terminated or truncated:
            break
        state = next_state
        action = agent.get_action(state)
    return total_reward
"""

BUGS = (*BUGS,
    Bug("explores_by_dealing_a_shuffled_deck", LESSON, "test_epsilon_greedy",
        {"get_action": EXPLORES_BY_DEALING_A_SHUFFLED_DECK_GET_ACTION},
        description="keeps a shuffled deck of legal actions per state and deals from it when exploring: counts look uniform, but draws are not independent (at epsilon 1 with two legal actions, every pair of calls gives both actions)",
        rule="epsilon-greedy", kind="wrong-distribution"),
    Bug("t_max_replaced_by_env_time_limit", LESSON, "test_play_and_train",
        {"play_and_train": T_MAX_REPLACED_BY_ENV_TIME_LIMIT_PLAY_AND_TRAIN},
        description="caps the episode at env.spec.max_episode_steps when the environment has one (Taxi: 200) and uses t_max only otherwise: play_and_train(taxi, agent, t_max=5) plays up to 200 steps",
        rule="t-max-cap", kind="wrong-source"),
    Bug("asks_ahead_one_action_past_t_max", LESSON, "test_play_and_train",
        {"play_and_train": ASKS_AHEAD_ONE_ACTION_PAST_T_MAX_PLAY_AND_TRAIN},
        description="asks for the first action before the loop and for the next one at the end of each step (after the update): when t_max stops the episode (and with t_max=0) it has asked for an action that is never played",
        rule="loop-steps", kind="protocol"),
)


# --- blind round 14: wrong answers written from the lesson text alone ----------------

TIES_AVOID_THE_LAST_PICK_GET_BEST_ACTION = """\
#| export
@add_to_class(QLearningAgent)
def get_best_action(self, state):
    \"\"\"A legal action of maximal Q-value; ties broken uniformly at random by ``self.rng``.\"\"\"
    actions = list(self.get_legal_actions(state))
    qvalues = [self.get_qvalue(state, action) for action in actions]
    best = max(qvalues)
    tied = [action for action, q in zip(actions, qvalues) if q == best]
    if not hasattr(self, "_last_pick"):
        self._last_pick = {}
    previous = self._last_pick.get(state)
    if len(tied) > 1 and previous in tied:
        tied.remove(previous)  # don't walk into the same wall twice in a row
    choice = tied[self.rng.integers(len(tied))]
    self._last_pick[state] = choice
    return int(choice)
"""

COIN_BY_CREDIT_ACCUMULATOR_GET_ACTION = """\
#| export
@add_to_class(QLearningAgent)
def get_action(self, state):
    \"\"\"Epsilon-greedy: random legal action with probability epsilon, else the best.\"\"\"
    # explore exactly an epsilon share of the calls: bank epsilon at every call
    self._explore_credit = getattr(self, "_explore_credit", 0.0) + self.epsilon
    if self._explore_credit >= 1.0:
        self._explore_credit -= 1.0
        actions = list(self.get_legal_actions(state))
        return int(actions[self.rng.integers(len(actions))])
    return self.get_best_action(state)
"""

EPSILON_ZERO_MEANS_EVALUATION_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    learning = agent.epsilon > 0  # epsilon 0: a greedy evaluation episode
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        if learning:
            agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("ties_avoid_the_last_pick", LESSON, "test_epsilon_greedy",
        {"get_best_action": TIES_AVOID_THE_LAST_PICK_GET_BEST_ACTION},
        description="remembers the action it returned last time in each state and leaves it out of a tie (so as not to walk into the same wall again): with two tied actions it strictly alternates",
        rule="greedy-is-best-action", kind="wrong-distribution"),
    Bug("coin_by_credit_accumulator", LESSON, "test_epsilon_greedy",
        {"get_action": COIN_BY_CREDIT_ACCUMULATOR_GET_ACTION},
        description="adds epsilon to a running credit at every call and explores whenever the credit reaches 1: the share of exploring calls is exactly epsilon, but at epsilon 0.5 it explores on every second call and never twice in a row (and the first call is always greedy)",
        rule="epsilon-greedy", kind="wrong-distribution"),
    Bug("epsilon_zero_means_evaluation", LESSON, "test_play_and_train",
        {"play_and_train": EPSILON_ZERO_MEANS_EVALUATION_PLAY_AND_TRAIN},
        description="reads agent.epsilon once and, when it is 0, plays a greedy 'evaluation' episode without calling agent.update (harmless in training, where the decayed epsilon never reaches exactly 0)",
        rule="loop-steps", kind="protocol"),
)


# --- blind round 17: wrong answers written from the lesson text alone ----------------

LOOP_CAP_STEP_MARKED_TERMINAL_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    for t in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        last_step = t == t_max - 1  # the episode ends here: nothing comes after this step
        agent.update(state, action, reward, next_state, terminated or last_step)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("loop_cap_step_marked_terminal", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_CAP_STEP_MARKED_TERMINAL_PLAY_AND_TRAIN},
        description="on the step where t_max stops the episode it calls update(..., terminated or last_step) with last_step True, so the final transition of a capped episode is learned without its bootstrap",
        rule="update-gets-terminated", kind="past-terminal"),
)


# --- blind round 19: wrong answers written from the lesson text alone ----------------

SHUFFLES_THE_LENT_ACTION_LIST_GET_BEST_ACTION = """\
#| export
@add_to_class(QLearningAgent)
def get_best_action(self, state):
    \"\"\"A legal action of maximal Q-value; ties broken uniformly at random by ``self.rng``.\"\"\"
    actions = self.get_legal_actions(state)
    if not isinstance(actions, list):
        actions = list(actions)  # a range cannot be shuffled
    self.rng.shuffle(actions)
    return int(max(actions, key=lambda action: self.get_qvalue(state, action)))
"""

VALUE_GUARD_REFUSES_NUMPY_ACTION_ARRAYS_GET_VALUE = """\
#| export
@add_to_class(QLearningAgent)
def get_value(self, state):
    \"\"\"The largest Q-value over the legal actions of ``state``.\"\"\"
    actions = self.get_legal_actions(state)
    if not actions:
        return 0.0
    return max(self.get_qvalue(state, action) for action in actions)
"""

BUGS = (*BUGS,
    Bug("shuffles_the_lent_action_list", LESSON, "test_value_and_best_action",
        {"get_best_action": SHUFFLES_THE_LENT_ACTION_LIST_GET_BEST_ACTION},
        description="breaks ties by shuffling the legal actions in place and taking the first maximum; a list that get_legal_actions hands back (its own table's row) is reordered under the caller",
        rule="legal-actions-any-sequence", kind="mutates-input"),
    Bug("value_guard_refuses_numpy_action_arrays", LESSON, "test_value_and_best_action",
        {"get_value": VALUE_GUARD_REFUSES_NUMPY_ACTION_ARRAYS_GET_VALUE},
        description="guards against no legal actions with `if not actions:`; a get_legal_actions that returns a numpy array (np.flatnonzero(mask)) of two or more actions raises 'truth value of an array is ambiguous'",
        rule="legal-actions-any-sequence", kind="accidental-refusal"),
)


# --- blind round 20: wrong answers written from the lesson text alone ----------------

LOOP_REFUSES_NUMPY_T_MAX_PLAY_AND_TRAIN = """\
#| export
def play_and_train(env, agent, t_max=10_000):
    \"\"\"Play one episode, updating ``agent`` after every step; return the total reward.\"\"\"
    if not isinstance(t_max, int) or t_max < 0:
        raise ValueError(f"t_max must be a non-negative int, got {t_max!r}")
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("loop_refuses_numpy_t_max", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_REFUSES_NUMPY_T_MAX_PLAY_AND_TRAIN},
        description='validates t_max with isinstance(t_max, int) and raises ValueError for anything else, so a numpy integer t_max (np.int64(50)) is refused',
        rule="numpy-scalars", kind='accidental-refusal'),
)


# --- blind round 22 --------------------------------------------------------------------

# The tied action handed back as the legal actions hold it: an np.int64 when they come as a
# numpy array.
BEST_ACTION_RETURNS_NUMPY_INT = _edit("get_best_action", (
    "return int(tied[self.rng.integers(len(tied))])  # a Python int, from any sequence",
    "return tied[self.rng.integers(len(tied))]"))

BUGS = (*BUGS,
    Bug("best_action_returns_numpy_int", LESSON, "test_value_and_best_action",
        {"get_best_action": BEST_ACTION_RETURNS_NUMPY_INT},
        description="get_best_action returns the tied action as the legal actions hold it: "
                    "an np.int64 where get_legal_actions returns a numpy array, not a "
                    "Python int",
        rule="result-types", kind="numpy-scalars"),
)
