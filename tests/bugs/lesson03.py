"""Buggy answers to lesson 03 (prioritized replay), each the mistake its name says.

Most are the solution cell with the bug edited in; several are the bugs public PER
implementations shipped (RESEARCH.md, "Known bugs of replay buffers").
"""

import functools

from . import Bug, edited, edited_text, edits_of

LESSON = "03_prioritized_replay"


_edit = edits_of(LESSON)


# --- the sum tree -------------------------------------------------------------------------

TREE_IN_FLOAT32 = _edit("sumtree_class", (
    "np.zeros(2 * self.leaf_count, dtype=np.float64)",
    "np.zeros(2 * self.leaf_count, dtype=np.float32)"))

TREE_ADDS_DIFFERENCES = _edit("sumtree_update", (
    """\
    nodes = self.leaf_count + slots
    self.nodes[nodes] = priorities
    children = self.nodes.reshape(-1, 2)  # row k: the two children of node k (a view)
    for _ in range(self.depth):
        nodes = nodes // 2
        # from the children, not by adding differences: repeated nodes get the same sum
        self.nodes[nodes] = children[nodes].sum(axis=1)""",
    """\
    nodes = self.leaf_count + slots
    change = priorities - self.nodes[nodes]
    for _ in range(self.depth + 1):
        self.nodes[nodes] += change  # one change per node, even when nodes repeat
        nodes = nodes // 2"""))

TREE_NOT_A_POWER_OF_TWO = _edit("sumtree_class", (
    "self.leaf_count = 1 << (capacity - 1).bit_length()  # the power of two >= capacity",
    "self.leaf_count = capacity  # leaves at capacity .. 2 capacity - 1"), (
    "self.depth = self.leaf_count.bit_length() - 1  # levels below the root",
    "self.depth = (capacity - 1).bit_length()  # levels below the root"))

SEARCH_GOES_LEFT_ON_A_TIE = _edit("sumtree_find_prefix_sum", (
    "go_right = masses >= left_sum",
    "go_right = masses > left_sum"))

SEARCH_WITHOUT_CLAMPING = _edit("sumtree_find_prefix_sum", (
    "masses = np.clip(np.asarray(masses, dtype=np.float64), 0.0, np.nextafter(total, 0.0))",
    "masses = np.array(masses, dtype=np.float64)"), (
    "return np.minimum(nodes - self.leaf_count, self.capacity - 1)",
    "return nodes - self.leaf_count"))

TREE_ACCEPTS_ANYTHING = _edit("sumtree_update", (
    """\
    if not np.all(np.isfinite(priorities) & (priorities >= 0)):
        raise ValueError(f"priorities must be finite and non-negative, got {priorities}")
""", ""))

# --- the buffer ---------------------------------------------------------------------------

ALPHA_IGNORED = _edit("per_update_priorities", (
    "self.tree.update(slots, priorities ** self.alpha)",
    "self.tree.update(slots, priorities)"))

NEW_TRANSITIONS_AT_PRIORITY_ONE = _edit("per_class", (
    "self.tree.update([slot], self.max_priority ** self.alpha)",
    "self.tree.update([slot], 1.0)"))

NEW_TRANSITIONS_AT_PRIORITY_ZERO = _edit("per_class", (
    "self.tree.update([slot], self.max_priority ** self.alpha)",
    "self.tree.update([slot], 0.0)  # unknown TD error: no priority yet"))

EVERY_SLOT_STARTS_AT_THE_MAXIMUM = _edit("per_class", (
    "        self.tree = SumTree(capacity)\n",
    "        self.tree = SumTree(capacity)\n"
    "        self.tree.update(np.arange(capacity), 1.0)  # every slot starts at the maximum\n"))

SAMPLE_WITHOUT_CLAMPING_TO_LEN = _edit("per_sample", (
    "slots = np.minimum(self.tree.find_prefix_sum(masses), len(self) - 1)",
    "slots = self.tree.find_prefix_sum(masses)"))

OVERWRITTEN_SLOT_KEEPS_ITS_PRIORITY = _edit("per_class", (
    """\
        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)
        self.tree.update([slot], self.max_priority ** self.alpha)""",
    """\
        full = len(self.storage) == self.capacity
        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)
        if not full:  # a slot being reused already has a priority
            self.tree.update([slot], self.max_priority ** self.alpha)"""))

WEIGHTS_NOT_NORMALISED = _edit("per_sample", (
    "return (*self.storage[slots], weights / weights.max(), slots)",
    "return (*self.storage[slots], weights, slots)"))

WEIGHTS_WITH_PLUS_BETA = _edit("per_sample", (
    "weights = (len(self) * probabilities) ** -beta",
    "weights = (len(self) * probabilities) ** beta"))

SAMPLING_NOT_STRATIFIED = _edit("per_sample", (
    "masses = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)",
    "masses = self.rng.random(batch_size) * total"))

NO_EPSILON = _edit("per_update_priorities", (
    "priorities = np.abs(td_errors) + self.epsilon",
    "priorities = np.abs(td_errors)"))

PRIORITIES_INVERTED = _edit("per_update_priorities", (
    "self.tree.update(slots, priorities ** self.alpha)",
    "self.tree.update(slots, priorities ** -self.alpha)  # hmm: small errors first?"))

# --- beta, the weighted update, the loop ----------------------------------------------------

BETA_NOT_CAPPED = _edit("annealed_beta", (
    "return float(beta_start + min(1.0, step / total_steps) * (1.0 - beta_start))",
    "return float(beta_start + step / total_steps * (1.0 - beta_start))"))

UPDATE_IGNORES_THE_WEIGHT = _edit("prioritized_q_update", (
    "agent.set_qvalue(obs, action, old + agent.alpha * weight * td_error)",
    "agent.set_qvalue(obs, action, old + agent.alpha * td_error)"))

UPDATE_RETURNS_THE_ERROR_AFTER = _edit("prioritized_q_update", (
    """\
    agent.set_qvalue(obs, action, old + agent.alpha * weight * td_error)
    return td_error""",
    """\
    agent.set_qvalue(obs, action, old + agent.alpha * weight * td_error)
    return target - agent.get_qvalue(obs, action)  # the error that is left"""))

# The loop written out in full rather than reusing lesson 01's play_and_train: correct
# (correct_variants.py), and what the loop bugs below are edits of.
WRITTEN_OUT_LOOP = '''\
#| export
def play_and_train_with_per(env, agent, replay, batch_size, beta, t_max=10_000):
    """Play one episode; after each step also learn from a prioritized batch and update
    its priorities. Returns the episode's total reward."""
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        replay.add(state, action, reward, next_state, terminated)
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        replay.update_priorities(slots, td_errors)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
    return total_reward
'''

_loop_edit = functools.partial(edited_text, "lesson 03's written-out loop", WRITTEN_OUT_LOOP)

LOOP_NEVER_UPDATES_PRIORITIES = _edit("play_and_train_with_per", (
    "        replay.update_priorities(slots, td_errors)\n", ""))

LOOP_USES_REWARDS_AS_PRIORITIES = _edit("play_and_train_with_per", (
    "replay.update_priorities(slots, td_errors)",
    "replay.update_priorities(slots, transitions[2])  # surprising = rewarding?"))

# --- found by mutation testing and the issue's blind spots ------------------------------------

# Systematic instead of stratified sampling: one offset shared by every slice. Each draw
# is still uniform within its slice (the marginal frequencies are right); the draws are
# not independent, which only a statistic over each batch's slices can see.
ONE_OFFSET_FOR_THE_WHOLE_BATCH = _edit("per_sample", (
    "masses = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)",
    "masses = (np.arange(batch_size) + self.rng.random()) * (total / batch_size)"))

# NaN < 0 is False: a check for negative priorities alone lets NaN (and inf) into the tree.
TREE_REFUSES_ONLY_NEGATIVE_PRIORITIES = _edit("sumtree_update", (
    "if not np.all(np.isfinite(priorities) & (priorities >= 0)):",
    "if np.any(priorities < 0):"))

# The masses are clamped, so with exact sums no search leaves the filled slots; a float64
# tree's sums are not exact, and a mass just below the total can still run past them.
SAMPLE_TRUSTS_THE_CLAMPED_SEARCH = SAMPLE_WITHOUT_CLAMPING_TO_LEN

SEARCH_CLAMPS_ONLY_MASSES = _edit("sumtree_find_prefix_sum", (
    "return np.minimum(nodes - self.leaf_count, self.capacity - 1)",
    "return nodes - self.leaf_count  # masses are clamped: the slot is always in range?"))

LOOP_STOPS_ONLY_WHEN_TERMINATED = _loop_edit((
    "if terminated or truncated:", "if terminated:"))

LOOP_NEVER_STOPS_UNLESS_TERMINATED = _loop_edit(
    ("for _ in range(t_max):", "while True:  # ignores t_max"),
    ("if terminated or truncated:", "if terminated:"))

ALPHA_ZERO_REFUSED = _edit("per_class", (
    "if alpha < 0 or not epsilon > 0:", "if alpha <= 0 or not epsilon > 0:"))


# --- the requirements no rule checked before (issue 22) --------------------------------------

# 1 << capacity.bit_length(): right for every capacity but a power of two, which it doubles.
LEAVES_DOUBLED_AT_A_POWER_OF_TWO = _edit("sumtree_class", (
    "self.leaf_count = 1 << (capacity - 1).bit_length()  # the power of two >= capacity",
    "self.leaf_count = 1 << capacity.bit_length()  # the power of two above capacity"))

# Going right without taking the left subtree's sum off the mass.
SEARCH_FORGETS_TO_SUBTRACT = _edit("sumtree_find_prefix_sum", (
    "        masses -= left_sum * go_right\n", ""))

# The caller's masses clamped and descended in place, to save a copy.
SEARCH_CHANGES_THE_MASSES = _edit("sumtree_find_prefix_sum", (
    "masses = np.clip(np.asarray(masses, dtype=np.float64), 0.0, np.nextafter(total, 0.0))",
    "masses = np.asarray(masses, dtype=np.float64)  # no copy: batches are large\n"
    "    np.clip(masses, 0.0, np.nextafter(total, 0.0), out=masses)"))

# max_priority follows the signed TD errors: a large negative one does not count.
MAX_PRIORITY_OF_SIGNED_ERRORS = _edit("per_update_priorities", (
    "self.max_priority = max(self.max_priority, float(priorities.max()))",
    "self.max_priority = max(self.max_priority, float(td_errors.max()) + self.epsilon)"))

# max_priority is the largest priority of the last update, so it goes down.
MAX_PRIORITY_OF_THE_LAST_BATCH = _edit("per_update_priorities", (
    "self.max_priority = max(self.max_priority, float(priorities.max()))",
    "self.max_priority = float(priorities.max())  # the newest errors are the ones that count"))

# Weights and slots returned in the other order.
WEIGHTS_AND_SLOTS_SWAPPED = _edit("per_sample", (
    "return (*self.storage[slots], weights / weights.max(), slots)",
    "return (*self.storage[slots], slots, weights / weights.max())"))

# The strata's offsets from numpy's global generator, not the buffer's own.
SAMPLE_FROM_THE_GLOBAL_GENERATOR = _edit("per_sample", (
    "masses = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)",
    "masses = (np.arange(batch_size) + np.random.random(batch_size)) * (total / batch_size)"))

# The buffer's generator made without the seed it is given.
GENERATOR_IGNORES_THE_SEED = _edit("per_class", (
    "self.rng = np.random.default_rng(seed)",
    "self.rng = np.random.default_rng()"))

# beta = 0 taken for "not given": the paper's starting value instead.
BETA_ZERO_TAKEN_AS_MISSING = _edit("per_sample", (
    "weights = (len(self) * probabilities) ** -beta",
    "weights = (len(self) * probabilities) ** -(beta or 0.4)  # beta not given: the paper's"))

# alpha = 0 taken for "not given": the default instead.
ALPHA_ZERO_TAKEN_AS_MISSING = _edit("per_class", (
    "self.capacity, self.alpha, self.epsilon = capacity, alpha, epsilon",
    "self.capacity, self.alpha, self.epsilon = capacity, alpha or 0.6, epsilon"))

# A batch as distinct transitions: more than are stored is refused.
BATCH_NO_LARGER_THAN_THE_BUFFER = _edit("per_sample", (
    "    total = self.tree.total\n",
    "    if batch_size > len(self):\n"
    "        raise ValueError(f\"cannot draw {batch_size} transitions from {len(self)}\")\n"
    "    total = self.tree.total\n"))

# The squared TD error, as in the loss, for a priority.
PRIORITY_FROM_THE_SQUARED_ERROR = _edit("per_update_priorities", (
    "priorities = np.abs(td_errors) + self.epsilon",
    "priorities = td_errors ** 2 + self.epsilon  # the surprise, as the loss measures it"))

# epsilon written as the default's number, not the buffer's own.
EPSILON_HARD_CODED = _edit("per_update_priorities", (
    "priorities = np.abs(td_errors) + self.epsilon",
    "priorities = np.abs(td_errors) + 1e-6"))

# Repeated slots refused, as if a batch held each transition at most once.
REPEATED_SLOTS_REFUSED = _edit("per_update_priorities", (
    "    priorities = np.abs(td_errors) + self.epsilon\n",
    "    if np.unique(slots).size != slots.size:\n"
    "        raise ValueError(\"each slot may be updated once per call\")\n"
    "    priorities = np.abs(td_errors) + self.epsilon\n"))

# |delta| + epsilon computed in the caller's array.
TD_ERRORS_CHANGED_IN_PLACE = _edit("per_update_priorities", (
    "priorities = np.abs(td_errors) + self.epsilon",
    "priorities = np.abs(td_errors, out=td_errors)  # no copy: batches are large\n"
    "    priorities += self.epsilon"))

# A full buffer keeps what it has: new transitions are dropped.
FULL_BUFFER_DROPS_NEW_TRANSITIONS = _edit("per_class", (
    "        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)\n",
    "        if len(self) == self.capacity:\n"
    "            return  # full\n"
    "        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)\n"))

# The filled part taken to be the slots before the next write, which it is until the ring wraps.
SLOTS_CHECKED_AGAINST_THE_WRITE_POSITION = _edit("per_update_priorities", (
    "if np.any((slots < 0) | (slots >= len(self))):",
    "if np.any((slots < 0) | (slots >= self.storage.position)):"))

# An empty batch for batch_size 0.
EMPTY_BATCH_FOR_SIZE_ZERO = _edit("per_sample", (
    """\
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")""",
    """\
    if batch_size == 0:
        return tuple(np.empty(0) for _ in range(7))  # nothing asked, nothing drawn
    if batch_size < 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")"""))

# Slots checked against the capacity (the tree's range), not the transitions stored.
SLOTS_CHECKED_AGAINST_THE_CAPACITY = _edit("per_update_priorities", (
    "if np.any((slots < 0) | (slots >= len(self))):",
    "if np.any((slots < 0) | (slots >= self.capacity)):"))

BETA_START_ZERO_TAKEN_AS_MISSING = _edit("annealed_beta", (
    "return float(beta_start + min(1.0, step / total_steps) * (1.0 - beta_start))",
    "beta_start = beta_start or 0.4  # not given: the paper's value\n"
    "    return float(beta_start + min(1.0, step / total_steps) * (1.0 - beta_start))"))

BETA_START_DEFAULTS_TO_ALPHA = _edit("annealed_beta", (
    "def annealed_beta(step, total_steps, beta_start=0.4):",
    "def annealed_beta(step, total_steps, beta_start=0.6):"))

UPDATE_BOOTSTRAPS_FROM_TERMINAL_STATES = _edit("prioritized_q_update", (
    "target = reward + (0.0 if done else agent.discount * agent.get_value(next_obs))",
    "target = reward + agent.discount * agent.get_value(next_obs)"))

LOOP_SKIPS_THE_TERMINAL_TRANSITION = _loop_edit((
    "        replay.add(state, action, reward, next_state, terminated)\n",
    "        if not terminated:  # nothing follows a terminal state\n"
    "            replay.add(state, action, reward, next_state, terminated)\n"))

LOOP_STORES_TRUNCATION_AS_DONE = _loop_edit((
    "replay.add(state, action, reward, next_state, terminated)",
    "replay.add(state, action, reward, next_state, terminated or truncated)"))

LOOP_BETA_ZERO_TAKEN_AS_MISSING = _loop_edit((
    "replay.sample(batch_size, beta)",
    "replay.sample(batch_size, beta or 0.4)  # no beta given: the paper's start"))

LOOP_REPLAYS_BEFORE_THE_ONLINE_UPDATE = _loop_edit((
    """\
        agent.update(state, action, reward, next_state, terminated)
        replay.add(state, action, reward, next_state, terminated)
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        replay.update_priorities(slots, td_errors)""",
    """\
        replay.add(state, action, reward, next_state, terminated)
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        replay.update_priorities(slots, td_errors)
        agent.update(state, action, reward, next_state, terminated)"""))

BUGS = [
    Bug("tree_in_float32", LESSON, "test_sumtree_totals",
        {"sumtree_class": TREE_IN_FLOAT32},
        also_fails=("test_new_transitions_max_priority", "test_priority_updates", "test_errors"),
        description="float32 nodes: sums drift and priorities lose digits (tianshou #625)",
        rule="result-types", kind="protocol"),
    Bug("tree_adds_differences", LESSON, "test_sumtree_totals",
        {"sumtree_update": TREE_ADDS_DIFFERENCES},
        also_fails=("test_sumtree_prefix_sum", "test_sampling_follows_priorities",
                    "test_priority_updates"),
        description="propagates changes with nodes[parents] += change: siblings updated "
                    "in one batch lose all but one change",
        rule="tree-total", kind="wrong-formula"),
    Bug("tree_not_a_power_of_two", LESSON, "test_sumtree_totals",
        {"sumtree_class": TREE_NOT_A_POWER_OF_TWO},
        also_fails=("test_sumtree_prefix_sum", "test_sampling_follows_priorities",
                    "test_stratified_sampling", "test_importance_weights", "test_wraparound",
                    "test_no_empty_or_out_of_range_samples"),
        description="leaves at capacity..2 capacity - 1: prefix sums out of slot order "
                    "(cleanrl #546)",
        rule="tree-layout", kind="size-from-argument"),
    Bug("search_goes_left_on_a_tie", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_GOES_LEFT_ON_A_TIE},
        description="an off-by-one descent: a mass equal to a running sum goes left",
        rule="search-tie-goes-right", kind="boundary"),
    Bug("search_without_clamping", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_WITHOUT_CLAMPING},
        description="masses at the total fall off the end into empty slots "
                    "(pytorch/rl #2230)",
        rule="search-clamped", kind="boundary"),
    Bug("tree_accepts_negative_priorities", LESSON, "test_errors",
        {"sumtree_update": TREE_ACCEPTS_ANYTHING},
        description="negative or NaN priorities go into the tree silently",
        rule="tree-refuses-bad-input", kind="accidental-refusal"),
    Bug("alpha_ignored", LESSON, "test_sampling_follows_priorities",
        {"per_update_priorities": ALPHA_IGNORED},
        also_fails=("test_priority_updates", "test_importance_weights"),
        description="stores |delta| + epsilon without raising it to alpha",
        rule="sampling-proportional", kind="wrong-formula"),
    Bug("new_transitions_at_priority_one", LESSON, "test_new_transitions_max_priority",
        {"per_class": NEW_TRANSITIONS_AT_PRIORITY_ONE},
        description="new transitions get priority 1, not the maximum (ray #11750)",
        rule="new-at-max-priority", kind="wrong-source"),
    Bug("new_transitions_at_priority_zero", LESSON, "test_new_transitions_max_priority",
        {"per_class": NEW_TRANSITIONS_AT_PRIORITY_ZERO},
        also_fails=("test_stratified_sampling", "test_priority_updates", "test_wraparound"),
        description="a transition without a TD error yet gets priority 0: never sampled",
        rule="new-at-max-priority", kind="wrong-formula"),
    Bug("every_slot_starts_at_the_maximum", LESSON, "test_no_empty_or_out_of_range_samples",
        {"per_class": EVERY_SLOT_STARTS_AT_THE_MAXIMUM,
         "per_sample": SAMPLE_WITHOUT_CLAMPING_TO_LEN},
        also_fails=("test_sampling_follows_priorities", "test_stratified_sampling",
                    "test_importance_weights"),
        description="empty slots hold priority 1, so sample draws slots holding nothing",
        rule="sample-filled-slots", kind="size-from-argument"),
    Bug("overwritten_slot_keeps_its_priority", LESSON, "test_wraparound",
        {"per_class": OVERWRITTEN_SLOT_KEEPS_ITS_PRIORITY},
        description="a reused slot keeps its old transition's priority (ray #6534)",
        rule="overwritten-slot-priority", kind="after-wrap"),
    Bug("weights_not_normalised", LESSON, "test_importance_weights",
        {"per_sample": WEIGHTS_NOT_NORMALISED},
        also_fails=("test_no_empty_or_out_of_range_samples",),
        description="weights not divided by their maximum",
        rule="weights-divided-by-max", kind="wrong-formula"),
    Bug("weights_with_plus_beta", LESSON, "test_importance_weights",
        {"per_sample": WEIGHTS_WITH_PLUS_BETA},
        description="(N P)^beta instead of (N P)^-beta: frequent transitions weigh most",
        rule="weights-formula", kind="wrong-formula"),
    Bug("sampling_not_stratified", LESSON, "test_stratified_sampling",
        {"per_sample": SAMPLING_NOT_STRATIFIED},
        description="independent masses over [0, total) instead of one per slice",
        rule="stratified", kind="wrong-distribution"),
    Bug("no_epsilon", LESSON, "test_priority_updates",
        {"per_update_priorities": NO_EPSILON},
        also_fails=("test_new_transitions_max_priority", "test_importance_weights"),
        description="p = |delta|: a transition with TD error 0 is never replayed again",
        rule="epsilon-added", kind="boundary"),
    Bug("priorities_inverted", LESSON, "test_cliffwalk_learning",
        {"per_update_priorities": PRIORITIES_INVERTED},
        also_fails=("test_sampling_follows_priorities", "test_priority_updates",
                    "test_importance_weights"),
        description="p^-alpha: replays what it already knows",
        rule="per-beats-uniform", kind="wrong-formula"),
    Bug("beta_not_capped", LESSON, "test_beta_schedule",
        {"annealed_beta": BETA_NOT_CAPPED},
        description="beta keeps growing past 1 after total_steps",
        rule="beta-stays-at-one", kind="boundary"),
    Bug("update_ignores_the_weight", LESSON, "test_weighted_update",
        {"prioritized_q_update": UPDATE_IGNORES_THE_WEIGHT},
        also_fails=("test_per_loop",),
        description="the importance weight is never applied",
        rule="weighted-step", kind="wrong-formula"),
    Bug("update_returns_the_error_after", LESSON, "test_weighted_update",
        {"prioritized_q_update": UPDATE_RETURNS_THE_ERROR_AFTER},
        also_fails=("test_per_loop",),
        description="returns the TD error left after the update, not the one that "
                    "surprised",
        rule="td-error-before-update", kind="wrong-source"),
    Bug("loop_never_updates_priorities", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_NEVER_UPDATES_PRIORITIES},
        description="priorities stay at their initial maximum: uniform replay, slowly",
        rule="loop-feeds-back-td-errors", kind="protocol"),
    Bug("loop_uses_rewards_as_priorities", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_USES_REWARDS_AS_PRIORITIES},
        description="priorities from rewards instead of TD errors",
        rule="loop-feeds-back-td-errors", kind="wrong-source"),
    Bug("one_offset_for_the_whole_batch", LESSON, "test_stratified_sampling",
        {"per_sample": ONE_OFFSET_FOR_THE_WHOLE_BATCH},
        description="rng.random() once per batch: every slice's draw at the same offset "
                    "(systematic sampling), right marginally, not independent",
        rule="slices-independent", kind="wrong-distribution"),
    Bug("tree_refuses_only_negative_priorities", LESSON, "test_errors",
        {"sumtree_update": TREE_REFUSES_ONLY_NEGATIVE_PRIORITIES},
        description="priorities < 0 refused, but NaN and inf accepted into the tree",
        rule="tree-refuses-bad-input", kind="accidental-refusal"),
    Bug("sample_trusts_the_clamped_search", LESSON, "test_no_empty_or_out_of_range_samples",
        {"per_sample": SAMPLE_TRUSTS_THE_CLAMPED_SEARCH},
        description="slots not clamped to len(self) - 1: a mass a hair below the total, "
                    "searched in floating point, lands in an empty slot",
        rule="sample-filled-slots", kind="boundary"),
    Bug("search_clamps_only_masses", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_CLAMPS_ONLY_MASSES},
        description="masses clamped below the total but slots not clamped to capacity - 1: "
                    "float sums carry a mass past the last slot",
        rule="search-clamped", kind="boundary"),
    Bug("per_loop_never_stops_unless_terminated", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_NEVER_STOPS_UNLESS_TERMINATED},
        description="while True, stopping only when terminated: an episode that is "
                    "truncated never ends (the corridor stops it past its time limit)",
        rule="loop-episode-ends", kind="past-terminal"),
    Bug("per_loop_stops_only_when_terminated", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_STOPS_ONLY_WHEN_TERMINATED},
        description="ignores truncation: an episode cut by the time limit runs on to t_max",
        rule="loop-episode-ends", kind="past-terminal"),
    Bug("alpha_zero_refused", LESSON, "test_importance_weights",
        {"per_class": ALPHA_ZERO_REFUSED},
        also_fails=("test_stratified_sampling",),
        description="alpha=0 (uniform replay, the other end of the scale) raises ValueError",
        rule="alpha-zero-uniform", kind="accidental-refusal"),
    # --- the requirements no rule checked before (issue 22) ---
    Bug("leaves_doubled_at_a_power_of_two", LESSON, "test_sumtree_totals",
        {"sumtree_class": LEAVES_DOUBLED_AT_A_POWER_OF_TWO},
        description="1 << capacity.bit_length(): a capacity that is a power of two gets "
                    "twice the leaves; sums and searches still right",
        rule="tree-layout", kind="boundary"),
    Bug("search_forgets_to_subtract", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_FORGETS_TO_SUBTRACT},
        also_fails=("test_sampling_follows_priorities", "test_stratified_sampling",
                    "test_wraparound"),
        description="goes right without subtracting the left child's sum from the mass",
        rule="search-interval", kind="wrong-formula"),
    Bug("search_changes_the_masses", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_CHANGES_THE_MASSES},
        description="clamps and descends the caller's float64 masses in place",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("max_priority_of_signed_errors", LESSON, "test_new_transitions_max_priority",
        {"per_update_priorities": MAX_PRIORITY_OF_SIGNED_ERRORS},
        description="max_priority from the largest signed TD error: a large negative one "
                    "is missed",
        rule="new-at-max-priority", kind="wrong-formula"),
    Bug("max_priority_of_the_last_batch", LESSON, "test_new_transitions_max_priority",
        {"per_update_priorities": MAX_PRIORITY_OF_THE_LAST_BATCH},
        also_fails=("test_wraparound",),
        description="max_priority is the last update's largest p, so it goes down",
        rule="max-priority-never-decreases", kind="wrong-source"),
    Bug("weights_and_slots_swapped", LESSON, "test_no_empty_or_out_of_range_samples",
        {"per_sample": WEIGHTS_AND_SLOTS_SWAPPED},
        also_fails=("test_sampling_follows_priorities", "test_stratified_sampling",
                    "test_importance_weights", "test_priority_updates", "test_wraparound"),
        description="returns (..., slots, weights) instead of (..., weights, slots)",
        rule="result-types", kind="protocol"),
    Bug("stratify_from_the_global_generator", LESSON, "test_stratified_sampling",
        {"per_sample": SAMPLE_FROM_THE_GLOBAL_GENERATOR},
        also_fails=("test_no_empty_or_out_of_range_samples",),
        description="the strata's offsets from np.random, not self.rng",
        rule="own-generator", kind="global-generator"),
    Bug("generator_ignores_the_seed", LESSON, "test_stratified_sampling",
        {"per_class": GENERATOR_IGNORES_THE_SEED},
        description="self.rng = np.random.default_rng(): unseeded, so no run repeats",
        rule="own-generator", kind="global-generator"),
    Bug("beta_zero_taken_as_missing", LESSON, "test_importance_weights",
        {"per_sample": BETA_ZERO_TAKEN_AS_MISSING},
        description="beta or 0.4: beta = 0 (no correction) weighs as beta = 0.4",
        rule="weights-beta-ends", kind="falsy-as-missing"),
    Bug("alpha_zero_taken_as_missing", LESSON, "test_importance_weights",
        {"per_class": ALPHA_ZERO_TAKEN_AS_MISSING},
        description="alpha or 0.6: alpha = 0 (uniform replay) prioritizes with 0.6",
        rule="alpha-zero-uniform", kind="falsy-as-missing"),
    Bug("batch_no_larger_than_the_buffer", LESSON, "test_importance_weights",
        {"per_sample": BATCH_NO_LARGER_THAN_THE_BUFFER},
        also_fails=("test_sampling_follows_priorities", "test_wraparound",
                    "test_no_empty_or_out_of_range_samples"),
        description="a batch taken as distinct transitions: more than are stored is refused",
        rule="batch-larger-than-buffer", kind="replacement"),
    Bug("priority_from_the_squared_error", LESSON, "test_priority_updates",
        {"per_update_priorities": PRIORITY_FROM_THE_SQUARED_ERROR},
        also_fails=("test_new_transitions_max_priority", "test_sampling_follows_priorities",
                    "test_importance_weights"),
        description="p = delta^2 + epsilon, as the loss measures surprise",
        rule="priority-formula", kind="wrong-formula"),
    Bug("epsilon_hard_coded", LESSON, "test_priority_updates",
        {"per_update_priorities": EPSILON_HARD_CODED},
        description="p = |delta| + 1e-6 whatever epsilon the buffer was given",
        rule="buffer-parameters", kind="wrong-source"),
    Bug("repeated_slots_refused", LESSON, "test_priority_updates",
        {"per_update_priorities": REPEATED_SLOTS_REFUSED},
        description="update_priorities refuses a slot given twice, which a batch can hold",
        rule="repeated-slots", kind="accidental-refusal"),
    Bug("td_errors_changed_in_place", LESSON, "test_priority_updates",
        {"per_update_priorities": TD_ERRORS_CHANGED_IN_PLACE},
        # every check that updates priorities holds update_priorities to its inputs
        also_fails=("test_new_transitions_max_priority", "test_sampling_follows_priorities",
                    "test_importance_weights", "test_wraparound",
                    "test_no_empty_or_out_of_range_samples"),
        description="|delta| + epsilon computed in the caller's array of TD errors",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("full_buffer_drops_new_transitions", LESSON, "test_wraparound",
        {"per_class": FULL_BUFFER_DROPS_NEW_TRANSITIONS},
        description="once full, add keeps the old transitions and drops the new",
        rule="overwrites-oldest", kind="after-wrap"),
    Bug("slots_checked_against_the_write_position", LESSON, "test_wraparound",
        {"per_update_priorities": SLOTS_CHECKED_AGAINST_THE_WRITE_POSITION},
        also_fails=("test_priority_updates",),
        description="the filled slots taken as those before the next write: after the ring "
                    "wraps, slots after it are refused",
        rule="len-after-wrap", kind="after-wrap"),
    Bug("empty_batch_for_size_zero", LESSON, "test_errors",
        {"per_sample": EMPTY_BATCH_FOR_SIZE_ZERO},
        description="sample(0) returns an empty batch instead of raising ValueError",
        rule="sample-refuses-bad-input", kind="boundary"),
    Bug("slots_checked_against_the_capacity", LESSON, "test_errors",
        {"per_update_priorities": SLOTS_CHECKED_AGAINST_THE_CAPACITY},
        description="update_priorities accepts slots up to the capacity, empty ones "
                    "included",
        rule="update-refuses-bad-input", kind="size-from-argument"),
    Bug("beta_start_zero_taken_as_missing", LESSON, "test_beta_schedule",
        {"annealed_beta": BETA_START_ZERO_TAKEN_AS_MISSING},
        description="beta_start or 0.4: a schedule from 0 starts at 0.4",
        rule="beta-linear", kind="falsy-as-missing"),
    Bug("beta_start_defaults_to_alpha", LESSON, "test_beta_schedule",
        {"annealed_beta": BETA_START_DEFAULTS_TO_ALPHA},
        description="beta_start=0.6 by default, alpha's value, not the paper's 0.4",
        rule="beta-start-default", kind="wrong-source"),
    Bug("update_bootstraps_from_terminal_states", LESSON, "test_weighted_update",
        {"prioritized_q_update": UPDATE_BOOTSTRAPS_FROM_TERMINAL_STATES},
        description="the target bootstraps from the next state when done",
        rule="no-bootstrap-when-done", kind="past-terminal"),
    Bug("per_loop_skips_the_terminal_transition", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_SKIPS_THE_TERMINAL_TRANSITION},
        description="the transition into a terminal state is never stored",
        rule="loop-stores-each-step", kind="past-terminal"),
    Bug("per_loop_stores_truncation_as_done", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_STORES_TRUNCATION_AS_DONE},
        description="stores done = terminated or truncated",
        rule="loop-stores-terminated", kind="past-terminal"),
    Bug("per_loop_beta_zero_taken_as_missing", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_BETA_ZERO_TAKEN_AS_MISSING},
        description="beta or 0.4: PER without weights (beta = 0) samples with 0.4",
        rule="loop-one-batch-per-step", kind="falsy-as-missing"),
    Bug("per_loop_replays_before_the_online_update", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_REPLAYS_BEFORE_THE_ONLINE_UPDATE},
        description="the replayed batch is learned before the online update of the step",
        rule="loop-online-then-replay", kind="protocol"),
]

# --- what every call promises (checks.contracts) ------------------------------------------

BETA_REFUSES_NUMPY_STEPS = _edit("annealed_beta", (
    '    """beta after ``step`` of ``total_steps``: linear from beta_start to 1, then 1."""\n',
    '    """beta after ``step`` of ``total_steps``: linear from beta_start to 1, then 1."""\n'
    '    if not isinstance(step, int) or not isinstance(total_steps, int):\n'
    '        raise TypeError("step and total_steps must be ints")\n'))

TREE_IN_FLOAT32_READ_AS_FLOAT64 = _edit(
    "sumtree_class",
    ("np.zeros(2 * self.leaf_count, dtype=np.float64)",
     "np.zeros(2 * self.leaf_count, dtype=np.float32)"),
    ("return self.nodes[self.leaf_count + self.checked_slots(slots)]",
     "return self.nodes[self.leaf_count + self.checked_slots(slots)].astype(np.float64)"))

BUGS = (*BUGS,
    Bug("beta_refuses_numpy_steps", LESSON, "test_beta_schedule",
        {"annealed_beta": BETA_REFUSES_NUMPY_STEPS},
        description="isinstance(step, int) refuses the np.int64 step a numpy loop counter "
                    "gives",
        rule="numpy-scalars", kind="protocol"),
    Bug("tree_in_float32_read_as_float64", LESSON, "test_sumtree_totals",
        {"sumtree_class": TREE_IN_FLOAT32_READ_AS_FLOAT64},
        also_fails=("test_new_transitions_max_priority", "test_priority_updates"),
        description="float32 nodes read back as float64: the sums drift all the same",
        rule="tree-float64", kind="wrong-formula"),
)

WEIGHT_THROUGH_THE_AGENTS_ALPHA = _edit("prioritized_q_update", (
    "    agent.set_qvalue(obs, action, old + agent.alpha * weight * td_error)",
    "    alpha = agent.alpha\n"
    "    agent.alpha = alpha * weight  # a step scaled by the weight, through update\n"
    "    agent.update(obs, action, reward, next_obs, done)\n"
    "    agent.alpha = alpha"))

BUGS = (*BUGS,
    Bug("weight_through_the_agents_alpha", LESSON, "test_weighted_update",
        {"prioritized_q_update": WEIGHT_THROUGH_THE_AGENTS_ALPHA},
        description="scales the step by setting the lent agent's alpha around update",
        rule="lent-as-stated", kind="protocol"),
)


# --- blind round 1: wrong answers written from the lesson text alone ----------------

SCALAR_PRIORITY_ONLY_FOR_THE_FIRST_SLOT_SUMTREE_UPDATE = """\
#| export
@add_to_class(SumTree)
def update(self, slots, priorities):
    \"\"\"Set the priorities of ``slots`` (arrays of equal length; a single priority applies
    to all) and recompute every sum above them, level by level for the whole batch.\"\"\"
    slots = self.checked_slots(slots)
    priorities = np.atleast_1d(np.asarray(priorities, dtype=np.float64))
    if not np.all(np.isfinite(priorities) & (priorities >= 0)):
        raise ValueError(f"priorities must be finite and non-negative, got {priorities}")
    for slot, priority in zip(slots, priorities):
        node = self.leaf_count + slot
        self.nodes[node] = priority
        while node > 1:
            node //= 2
            self.nodes[node] = self.nodes[2 * node] + self.nodes[2 * node + 1]
"""

TREE_GET_WITHOUT_CHECKING_SLOTS_SUMTREE_CLASS = """\
#| export
import numpy as np

from course.ring_buffer import NumpyRingBuffer
from course.with_update import WithUpdate
from qlearning import play_and_train


class SumTree:
    \"\"\"Non-negative float64 priorities of ``capacity`` slots, and all their partial sums.

    A binary heap in one array: node 1 is the root, node k has children 2k and 2k + 1, and
    slot i is leaf ``leaf_count + i``, where ``leaf_count`` is the smallest power of two
    >= capacity. Every inner node holds the sum of its children; the root, the total.
    \"\"\"

    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.leaf_count = 1 << (capacity - 1).bit_length()
        self.depth = self.leaf_count.bit_length() - 1
        self.nodes = np.zeros(2 * self.leaf_count, dtype=np.float64)

    @property
    def total(self):
        \"\"\"The sum of all priorities: the root.\"\"\"
        return float(self.nodes[1])

    def get(self, slots):
        \"\"\"The priorities of ``slots`` (an array of slot numbers), as a float64 array.\"\"\"
        return self.nodes[self.leaf_count + np.asarray(slots, dtype=np.int64)]

    def checked_slots(self, slots):
        \"\"\"``slots`` as an int64 array; ValueError if any is outside [0, capacity).\"\"\"
        slots = np.asarray(slots)
        if slots.size and slots.dtype.kind not in "iu":
            raise ValueError(f"slots must be integers, got dtype {slots.dtype}")
        slots = slots.astype(np.int64)
        if slots.size and (slots.min() < 0 or slots.max() >= self.capacity):
            raise ValueError(f"slots must lie in [0, {self.capacity}), got "
                             f"{slots[(slots < 0) | (slots >= self.capacity)][:3]}")
        return slots
"""

BUGS = (*BUGS,
    Bug("scalar_priority_only_for_the_first_slot", LESSON, "test_sumtree_totals",
        {"sumtree_update": SCALAR_PRIORITY_ONLY_FOR_THE_FIRST_SLOT_SUMTREE_UPDATE},
        description="update loops over zip(slots, np.atleast_1d(priorities)): a single priority "
                    "sets only the first slot, and a short priorities array silently drops slots",
        rule="tree-total", kind="boundary"),
    Bug("tree_get_without_checking_slots", LESSON, "test_errors",
        {"sumtree_class": TREE_GET_WITHOUT_CHECKING_SLOTS_SUMTREE_CLASS},
        description="get indexes nodes[leaf_count + slots] directly: slot -1 returns an inner "
                    "node's sum, a slot past the capacity a padding leaf's 0, no ValueError",
        rule="tree-refuses-bad-input", kind="accidental-refusal"),
)


# --- blind round 2: wrong answers written from the lesson text alone ----------------

CLAMP_WITH_AN_ABSOLUTE_MARGIN_SUMTREE_FIND_PREFIX_SUM = """\
#| export
@add_to_class(SumTree)
def find_prefix_sum(self, masses):
    \"\"\"For each mass m, the slot i with p_0 + ... + p_(i-1) <= m < p_0 + ... + p_i: the
    slot whose share of the total holds m. Masses are clamped into [0, total) first.\"\"\"
    total = self.total
    if not total > 0:
        raise ValueError("cannot search a sum tree whose priorities are all zero")
    masses = np.clip(np.asarray(masses, dtype=np.float64), 0.0, total - 1e-12)  # just below the total
    nodes = np.ones(masses.shape, dtype=np.int64)
    for _ in range(self.depth):
        nodes *= 2
        left_sum = self.nodes[nodes]
        go_right = masses >= left_sum
        masses -= left_sum * go_right
        nodes += go_right
    return np.minimum(nodes - self.leaf_count, self.capacity - 1)
"""

MAX_PRIORITY_KEPT_AFTER_ALPHA_PER_CLASS = """\
#| export
class PrioritizedReplayBuffer:
    \"\"\"Proportional prioritized replay (Schaul et al., 2016).

    Transitions live in ``self.storage`` (a NumpyRingBuffer); their priorities p^alpha
    in ``self.tree`` (a SumTree), slot for slot. New transitions get the largest priority
    given so far, ``self.max_priority`` (1 at first); ``update_priorities`` sets
    p = |delta| + epsilon. ``seed`` seeds the buffer's generator ``self.rng``.
    \"\"\"

    def __init__(self, capacity, alpha=0.6, epsilon=1e-6, seed=None):
        if alpha < 0 or not epsilon > 0:
            raise ValueError(f"need alpha >= 0 and epsilon > 0, got {alpha} and {epsilon}")
        self.capacity, self.alpha, self.epsilon = capacity, alpha, epsilon
        self.storage = NumpyRingBuffer(capacity)
        self.tree = SumTree(capacity)
        self.max_priority = 1.0  # 1 ** alpha == 1
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        \"\"\"The number of transitions stored (at most ``capacity``).\"\"\"
        return len(self.storage)

    def add(self, obs_t, action, reward, obs_tp1, done):
        \"\"\"Store a transition (overwriting the oldest when full) at the maximal priority.\"\"\"
        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)
        self.tree.update([slot], self.max_priority)  # already a tree priority p^alpha
"""

MAX_PRIORITY_KEPT_AFTER_ALPHA_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    slots = np.asarray(slots)
    td_errors = np.asarray(td_errors, dtype=np.float64)
    if slots.shape != td_errors.shape:
        raise ValueError(f"got {slots.size} slots but {td_errors.size} TD errors")
    if not np.all(np.isfinite(td_errors)):
        raise ValueError("TD errors must be finite")
    if np.any((slots < 0) | (slots >= len(self))):
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    tree_priorities = (np.abs(td_errors) + self.epsilon) ** self.alpha
    self.tree.update(slots, tree_priorities)
    if tree_priorities.size:
        self.max_priority = max(self.max_priority, float(tree_priorities.max()))
"""

MAX_PRIORITY_RAISED_BEFORE_THE_CHECKS_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    slots = np.asarray(slots)
    td_errors = np.asarray(td_errors, dtype=np.float64)
    if slots.shape != td_errors.shape:
        raise ValueError(f"got {slots.size} slots but {td_errors.size} TD errors")
    if np.any((slots < 0) | (slots >= len(self))):
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    priorities = np.abs(td_errors) + self.epsilon
    if priorities.size:
        self.max_priority = max(self.max_priority, float(priorities.max()))
    # SumTree.update refuses NaN and infinite priorities with a ValueError
    self.tree.update(slots, priorities ** self.alpha)
"""

BUGS = (*BUGS,
    Bug("clamp_with_an_absolute_margin", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": CLAMP_WITH_AN_ABSOLUTE_MARGIN_SUMTREE_FIND_PREFIX_SUM},
        description="clamps masses to total - 1e-12: for a total below 1e-12 every mass becomes "
                    "negative and lands on slot 0 (even an empty one); for a total above ~1e4 the "
                    "margin vanishes and a mass at the total falls past the last filled slot",
        rule="search-interval", kind="boundary"),
    Bug("max_priority_kept_after_alpha", LESSON, "test_new_transitions_max_priority",
        {"per_class": MAX_PRIORITY_KEPT_AFTER_ALPHA_PER_CLASS, "per_update_priorities": MAX_PRIORITY_KEPT_AFTER_ALPHA_PER_UPDATE_PRIORITIES},
        description="keeps max_priority as the largest p^alpha (what the tree holds) and gives new"
                    " transitions max_priority without ** alpha: the tree agrees with the "
                    "reference, but buffer.max_priority is p^alpha, not p",
        rule="max-priority-never-decreases", kind="wrong-formula"),
    Bug("max_priority_raised_before_the_checks", LESSON, "test_errors",
        {"per_update_priorities": MAX_PRIORITY_RAISED_BEFORE_THE_CHECKS_PER_UPDATE_PRIORITIES},
        description="raises max_priority from |delta| + epsilon before the tree refuses an "
                    "infinite TD error: the call raises ValueError, but max_priority is now inf "
                    "and every later add fails",
        rule="update-refuses-bad-input", kind="accidental-refusal"),
)


# --- blind round 3: wrong answers written from the lesson text alone ----------------

TREE_WRITTEN_BEFORE_THE_SLOT_CHECK_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    slots = np.asarray(slots)
    td_errors = np.asarray(td_errors, dtype=np.float64)
    if slots.shape != td_errors.shape:
        raise ValueError(f"got {slots.size} slots but {td_errors.size} TD errors")
    if not np.all(np.isfinite(td_errors)):
        raise ValueError("TD errors must be finite")
    priorities = np.abs(td_errors) + self.epsilon
    self.tree.update(slots, priorities ** self.alpha)  # refuses slots outside the capacity
    if np.any((slots < 0) | (slots >= len(self))):
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    if priorities.size:
        self.max_priority = max(self.max_priority, float(priorities.max()))
"""

BUGS = (*BUGS,
    Bug("tree_written_before_the_slot_check", LESSON, "test_errors",
        {"per_update_priorities": TREE_WRITTEN_BEFORE_THE_SLOT_CHECK_PER_UPDATE_PRIORITIES},
        description="writes the tree first and checks slots against len(self) afterwards: the "
                    "ValueError comes, but an empty slot now holds a priority and the total "
                    "includes it",
        rule="update-refuses-bad-input", kind="accidental-refusal"),
)


# --- blind round 4: wrong answers written from the lesson text alone ----------------

TOTAL_FROM_THE_LEAVES_SUMTREE_CLASS = """\
#| export
import numpy as np
from course.ring_buffer import NumpyRingBuffer
from course.with_update import WithUpdate
from qlearning import play_and_train


class SumTree:
    \"\"\"Non-negative float64 priorities of ``capacity`` slots, and all their partial sums.

    A binary heap in one array: node 1 is the root, node k has children 2k and 2k + 1, and
    slot i is leaf ``leaf_count + i``, where ``leaf_count`` is the smallest power of two
    >= capacity. Every inner node holds the sum of its children; the root, the total.
    \"\"\"

    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.leaf_count = 1 << (capacity - 1).bit_length()  # the power of two >= capacity
        self.depth = self.leaf_count.bit_length() - 1  # levels below the root
        self.nodes = np.zeros(2 * self.leaf_count, dtype=np.float64)

    @property
    def total(self):
        \"\"\"The sum of all priorities: the root.\"\"\"
        return float(self.nodes[self.leaf_count:].sum())  # add up every leaf

    def get(self, slots):
        \"\"\"The priorities of ``slots`` (an array of slot numbers), as a float64 array.\"\"\"
        return self.nodes[self.leaf_count + self.checked_slots(slots)]

    def checked_slots(self, slots):
        \"\"\"``slots`` as an int64 array; ValueError if any is outside [0, capacity).\"\"\"
        slots = np.asarray(slots)
        if slots.size and slots.dtype.kind not in "iu":
            raise ValueError(f"slots must be integers, got dtype {slots.dtype}")
        slots = slots.astype(np.int64)
        if slots.size and (slots.min() < 0 or slots.max() >= self.capacity):
            raise ValueError(f"slots must lie in [0, {self.capacity}), got "
                             f"{slots[(slots < 0) | (slots >= self.capacity)][:3]}")
        return slots


"""

BUGS = (*BUGS,
    Bug("total_from_the_leaves", LESSON, "test_sumtree_totals",
        {"sumtree_class": TOTAL_FROM_THE_LEAVES_SUMTREE_CLASS},
        description="total returns np.sum of the leaves (numpy's pairwise order, not the tree's): "
                    "it can exceed the root, and find_prefix_sum then clamps masses above the root"
                    " and lands on the last, empty slot",
        rule="tree-layout", kind="wrong-source"),
)


# --- blind round 3: wrong answers written from the lesson text alone ----------------

Q_WRITTEN_THROUGH_THE_PRIVATE_TABLE_PRIORITIZED_Q_UPDATE = """\
#| export
def prioritized_q_update(agent, obs, action, reward, next_obs, done, weight):
    \"\"\"One Q-learning step on ``agent``, scaled by an importance weight; return the TD
    error delta = target - Q(obs, action), computed before the update.\"\"\"
    target = reward + (0.0 if done else agent.discount * agent.get_value(next_obs))
    old = agent.get_qvalue(obs, action)
    td_error = target - old
    agent._qvalues[obs][action] += agent.alpha * weight * td_error
    return td_error
"""

BUGS = (*BUGS,
    Bug("q_written_through_the_private_table", LESSON, "test_weighted_update",
        {"prioritized_q_update": Q_WRITTEN_THROUGH_THE_PRIVATE_TABLE_PRIORITIZED_Q_UPDATE},
        also_fails=("test_per_loop",),
        description="writes the new value into agent._qvalues[obs][action] directly, which works on QLearningAgent but not on an agent lent with get_qvalue/set_qvalue",
        rule="weighted-step", kind="protocol"),
)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

BETA_NUMPY_SCALAR_RESULT_ANNEALED_BETA = """\
#| export
def annealed_beta(step, total_steps, beta_start=0.4):
    \"\"\"beta after ``step`` of ``total_steps``: linear from beta_start to 1, then 1.\"\"\"
    fraction = min(step / total_steps, 1.0)
    return beta_start + fraction * (1.0 - beta_start)
"""

BUGS = (*BUGS,
    Bug("beta_numpy_scalar_result", LESSON, "test_beta_schedule",
        {"annealed_beta": BETA_NUMPY_SCALAR_RESULT_ANNEALED_BETA},
        description="returns beta_start + fraction * (1 - beta_start) without float(): an np.float64 for an np.int64 step, an np.float32 (not a float at all) for an np.float32 beta_start",
        rule="result-types", kind="numpy-scalars"),
)


# --- blind round 8: wrong answers written from the lesson text alone ----------------

FIELDS_STORED_AS_FLOAT32_PER_CLASS = """\
#| export
class PrioritizedReplayBuffer:
    \"\"\"Proportional prioritized replay (Schaul et al., 2016).

    Transitions live in ``self.storage`` (a NumpyRingBuffer); their priorities p^alpha
    in ``self.tree`` (a SumTree), slot for slot. New transitions get the largest priority
    given so far, ``self.max_priority`` (1 at first); ``update_priorities`` sets
    p = |delta| + epsilon. ``seed`` seeds the buffer's generator ``self.rng``.
    \"\"\"

    def __init__(self, capacity, alpha=0.6, epsilon=1e-6, seed=None):
        if alpha < 0 or not epsilon > 0:
            raise ValueError(f"need alpha >= 0 and epsilon > 0, got {alpha} and {epsilon}")
        self.capacity, self.alpha, self.epsilon = capacity, alpha, epsilon
        self.storage = NumpyRingBuffer(capacity)
        self.tree = SumTree(capacity)
        self.max_priority = 1.0
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        \"\"\"The number of transitions stored (at most ``capacity``).\"\"\"
        return len(self.storage)

    def add(self, obs_t, action, reward, obs_tp1, done):
        \"\"\"Store a transition (overwriting the oldest when full) at the maximal priority.\"\"\"
        # float32 fields, as a network's loss would use them
        slot = self.storage.add(obs_t, action, np.float32(reward), obs_tp1, np.float32(done))
        self.tree.update([slot], self.max_priority ** self.alpha)
"""

TD_ERRORS_KEPT_IN_THEIR_DTYPE_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    slots = np.asarray(slots)
    td_errors = np.asarray(td_errors)
    if td_errors.dtype.kind not in "f":
        td_errors = td_errors.astype(np.float64)
    if slots.shape != td_errors.shape:
        raise ValueError(f"got {slots.size} slots but {td_errors.size} TD errors")
    if not np.all(np.isfinite(td_errors)):
        raise ValueError("TD errors must be finite")
    if np.any((slots < 0) | (slots >= len(self))):
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    priorities = np.abs(td_errors) + td_errors.dtype.type(self.epsilon)
    self.tree.update(slots, priorities ** td_errors.dtype.type(self.alpha))
    if priorities.size:
        self.max_priority = max(self.max_priority, float(priorities.max()))
"""

BUGS = (*BUGS,
    Bug("fields_stored_as_float32", LESSON, "test_wraparound",
        {"per_class": FIELDS_STORED_AS_FLOAT32_PER_CLASS},
        description="add stores reward and done as np.float32 (as DQN buffers do): sample returns done as 0.0/1.0 floats and a reward of 0.1 as 0.10000000149",
        rule="result-types", kind="protocol"),
    Bug("td_errors_kept_in_their_dtype", LESSON, "test_priority_updates",
        {"per_update_priorities": TD_ERRORS_KEPT_IN_THEIR_DTYPE_PER_UPDATE_PRIORITIES},
        description="computes |delta| + epsilon in the TD errors' own dtype: float32 TD errors (a network's) lose epsilon (100 + 1e-6 == 100 in float32) and p^alpha is rounded to float32 before entering the float64 tree",
        rule="priority-formula", kind="wrong-formula"),
)


# --- blind round 9: wrong answers written from the lesson text alone ----------------

INTEGER_MASSES_REFUSED_SUMTREE_FIND_PREFIX_SUM = """\
#| export
@add_to_class(SumTree)
def find_prefix_sum(self, masses):
    \"\"\"For each mass m, the slot i with p_0 + ... + p_(i-1) <= m < p_0 + ... + p_i: the
    slot whose share of the total holds m. Masses are clamped into [0, total) first.\"\"\"
    total = self.total
    if not total > 0:
        raise ValueError("cannot search a sum tree whose priorities are all zero")
    masses = np.array(masses)  # a copy: the caller may search the same masses again
    np.clip(masses, 0.0, np.nextafter(total, 0.0), out=masses)
    nodes = np.ones(masses.shape, dtype=np.int64)  # every search starts at the root
    for _ in range(self.depth):
        nodes *= 2  # the left children
        left_sum = self.nodes[nodes]
        go_right = masses >= left_sum  # past the left subtree
        masses -= left_sum * go_right
        nodes += go_right
    return np.minimum(nodes - self.leaf_count, self.capacity - 1)
"""

TREE_HALF_WRITTEN_ON_REFUSAL_SUMTREE_UPDATE = """\
#| export
@add_to_class(SumTree)
def update(self, slots, priorities):
    \"\"\"Set the priorities of ``slots`` (arrays of equal length; a single priority applies
    to all) and recompute every sum above them, level by level for the whole batch.\"\"\"
    slots = self.checked_slots(slots)
    priorities = np.broadcast_to(np.asarray(priorities, dtype=np.float64), slots.shape)
    for slot, priority in zip(slots, priorities):
        if not (np.isfinite(priority) and priority >= 0):
            raise ValueError(f"the priority of slot {slot} must be finite and "
                             f"non-negative, got {priority}")
        self.nodes[self.leaf_count + slot] = priority
    nodes = self.leaf_count + slots
    for _ in range(self.depth):
        nodes = nodes // 2
        self.nodes[nodes] = self.nodes[2 * nodes] + self.nodes[2 * nodes + 1]
"""

EMPTY_UPDATE_REFUSED_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    slots = np.asarray(slots)
    td_errors = np.asarray(td_errors, dtype=np.float64)
    if slots.shape != td_errors.shape:
        raise ValueError(f"got {slots.size} slots but {td_errors.size} TD errors")
    if not np.all(np.isfinite(td_errors)):
        raise ValueError("TD errors must be finite")
    if np.any((slots < 0) | (slots >= len(self))):
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    priorities = np.abs(td_errors) + self.epsilon
    self.tree.update(slots, priorities ** self.alpha)
    self.max_priority = max(self.max_priority, float(priorities.max()))
"""

BUGS = (*BUGS,
    Bug("integer_masses_refused", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": INTEGER_MASSES_REFUSED_SUMTREE_FIND_PREFIX_SUM},
        description="copies the masses with np.array(masses) and clips in place: a list of whole-number masses is an int64 array, and the in-place clip/subtract raises a casting error instead of searching",
        rule="search-interval", kind="boundary"),
    Bug("tree_half_written_on_refusal", LESSON, "test_errors",
        {"sumtree_update": TREE_HALF_WRITTEN_ON_REFUSAL_SUMTREE_UPDATE},
        description="update checks and writes the leaves one slot at a time: a batch whose third priority is NaN raises, but its first two leaves are already written (and their sums not recomputed)",
        rule="tree-refuses-bad-input", kind="protocol"),
    Bug("empty_update_refused", LESSON, "test_priority_updates",
        {"per_update_priorities": EMPTY_UPDATE_REFUSED_PER_UPDATE_PRIORITIES},
        description="max(self.max_priority, priorities.max()) without a size guard: update_priorities([], []) raises numpy's zero-size ValueError",
        rule="priority-formula", kind="boundary"),
)


# --- blind round 10: wrong answers written from the lesson text alone ----------------

EMPTY_SEARCH_RETURNS_FLOATS_SUMTREE_FIND_PREFIX_SUM = """\
#| export
@add_to_class(SumTree)
def find_prefix_sum(self, masses):
    \"\"\"For each mass m, the slot i with p_0 + ... + p_(i-1) <= m < p_0 + ... + p_i: the
    slot whose share of the total holds m. Masses are clamped into [0, total) first.\"\"\"
    total = self.total
    if not total > 0:
        raise ValueError("cannot search a sum tree whose priorities are all zero")
    clamped = np.clip(np.asarray(masses, dtype=np.float64), 0.0, np.nextafter(total, 0.0))
    slots = []
    for mass in clamped:
        node = 1
        for _ in range(self.depth):
            node *= 2
            if mass >= self.nodes[node]:
                mass -= self.nodes[node]
                node += 1
        slots.append(min(node - self.leaf_count, self.capacity - 1))
    return np.array(slots)
"""

BUGS = (*BUGS,
    Bug("empty_search_returns_floats", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": EMPTY_SEARCH_RETURNS_FLOATS_SUMTREE_FIND_PREFIX_SUM},
        description="loops over the masses and returns np.array(slots): right for every non-empty batch, but an empty list of masses gives a float64 array",
        rule="result-types", kind="boundary"),
)


# --- blind round 10: wrong answers written from the lesson text alone ----------------

PER_LOOP_ONLINE_STEP_BY_HAND_PLAY_AND_TRAIN_WITH_PER = """\
#| export
def play_and_train_with_per(env, agent, replay, batch_size, beta, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a prioritized batch and update
    its priorities. Returns the episode's total reward.\"\"\"
    def learn(state, action, reward, next_state, terminated):
        # the online step is a replayed step of weight 1
        prioritized_q_update(agent, state, action, reward, next_state, terminated, 1.0)
        replay.add(state, action, reward, next_state, terminated)
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        replay.update_priorities(slots, td_errors)

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""

BUGS = (*BUGS,
    Bug("per_loop_online_step_by_hand", LESSON, "test_per_loop",
        {"play_and_train_with_per": PER_LOOP_ONLINE_STEP_BY_HAND_PLAY_AND_TRAIN_WITH_PER},
        description="does the online step with prioritized_q_update(..., 1.0) instead of agent.update: an agent whose update is not plain Q-learning (or that counts its updates) is never updated online",
        rule="loop-online-then-replay", kind="protocol"),
)


# --- blind round 12: wrong answers written from the lesson text alone ----------------

GET_UNWRAPS_A_SINGLE_PRIORITY_SUMTREE_CLASS = """\
#| export
import numpy as np

from course.ring_buffer import NumpyRingBuffer
from course.with_update import WithUpdate
from qlearning import play_and_train


class SumTree:
    \"\"\"Non-negative float64 priorities of ``capacity`` slots, and all their partial sums.

    A binary heap in one array: node 1 is the root, node k has children 2k and 2k + 1, and
    slot i is leaf ``leaf_count + i``, where ``leaf_count`` is the smallest power of two
    >= capacity. Every inner node holds the sum of its children; the root, the total.
    \"\"\"

    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.leaf_count = 1 << (capacity - 1).bit_length()  # the power of two >= capacity
        self.depth = self.leaf_count.bit_length() - 1  # levels below the root
        self.nodes = np.zeros(2 * self.leaf_count, dtype=np.float64)

    @property
    def total(self):
        \"\"\"The sum of all priorities: the root.\"\"\"
        return float(self.nodes[1])

    def get(self, slots):
        \"\"\"The priorities of ``slots`` (an array of slot numbers), as a float64 array.\"\"\"
        priorities = self.nodes[self.leaf_count + self.checked_slots(slots)]
        # one slot asked for: its priority as a number
        return priorities.item() if priorities.size == 1 else priorities

    def checked_slots(self, slots):
        \"\"\"``slots`` as an int64 array; ValueError if any is outside [0, capacity).\"\"\"
        slots = np.asarray(slots)
        if slots.size and slots.dtype.kind not in "iu":
            raise ValueError(f"slots must be integers, got dtype {slots.dtype}")
        slots = slots.astype(np.int64)
        if slots.size and (slots.min() < 0 or slots.max() >= self.capacity):
            raise ValueError(f"slots must lie in [0, {self.capacity}), got "
                             f"{slots[(slots < 0) | (slots >= self.capacity)][:3]}")
        return slots
"""

BUGS = (*BUGS,
    Bug("get_unwraps_a_single_priority", LESSON, "test_sumtree_totals",
        {"sumtree_class": GET_UNWRAPS_A_SINGLE_PRIORITY_SUMTREE_CLASS},
        description="get returns priorities.item() (a Python float) when one slot is asked for; the buffer's sample(1, beta) then fails on weights.max()",
        rule="result-types", kind="protocol"),
)


# --- blind round 13: wrong answers written from the lesson text alone ----------------

DRAWS_THROUGH_A_CACHED_METHOD_PER_CLASS = """\
#| export
class PrioritizedReplayBuffer:
    \"\"\"Proportional prioritized replay (Schaul et al., 2016).

    Transitions live in ``self.storage`` (a NumpyRingBuffer); their priorities p^alpha
    in ``self.tree`` (a SumTree), slot for slot. New transitions get the largest priority
    given so far, ``self.max_priority`` (1 at first); ``update_priorities`` sets
    p = |delta| + epsilon. ``seed`` seeds the buffer's generator ``self.rng``.
    \"\"\"

    def __init__(self, capacity, alpha=0.6, epsilon=1e-6, seed=None):
        if alpha < 0 or not epsilon > 0:
            raise ValueError(f"need alpha >= 0 and epsilon > 0, got {alpha} and {epsilon}")
        self.capacity, self.alpha, self.epsilon = capacity, alpha, epsilon
        self.storage = NumpyRingBuffer(capacity)
        self.tree = SumTree(capacity)
        self.max_priority = 1.0
        self.rng = np.random.default_rng(seed)
        self._random = self.rng.random  # looked up once, not at every sample

    def __len__(self):
        \"\"\"The number of transitions stored (at most ``capacity``).\"\"\"
        return len(self.storage)

    def add(self, obs_t, action, reward, obs_tp1, done):
        \"\"\"Store a transition (overwriting the oldest when full) at the maximal priority.\"\"\"
        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)
        self.tree.update([slot], self.max_priority ** self.alpha)
"""

DRAWS_THROUGH_A_CACHED_METHOD_PER_SAMPLE = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def sample(self, batch_size, beta):
    \"\"\"Draw ``batch_size`` transitions with probability P(i), one from each equal slice of
    the total priority; return (obs_t, action, reward, obs_tp1, done, weights, slots),
    where weights are (N P(i))^-beta divided by their maximum.\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self) == 0:
        raise ValueError("cannot sample from an empty buffer: add transitions first")
    total = self.tree.total
    masses = (np.arange(batch_size) + self._random(batch_size)) * (total / batch_size)
    slots = np.minimum(self.tree.find_prefix_sum(masses), len(self) - 1)
    probabilities = self.tree.get(slots) / total
    weights = (len(self) * probabilities) ** -beta
    return (*self.storage[slots], weights / weights.max(), slots)
"""

PER_LOOP_PICKS_THE_NEXT_ACTION_BEFORE_LEARNING_PLAY_AND_TRAIN_WITH_PER = """\
#| export
def play_and_train_with_per(env, agent, replay, batch_size, beta, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a prioritized batch and update
    its priorities. Returns the episode's total reward.\"\"\"
    total_reward = 0.0
    state, _ = env.reset()
    action = agent.get_action(state)
    for _ in range(t_max):
        next_state, reward, terminated, truncated, _ = env.step(action)
        next_action = agent.get_action(next_state)
        agent.update(state, action, reward, next_state, terminated)
        replay.add(state, action, reward, next_state, terminated)
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        replay.update_priorities(slots, td_errors)
        total_reward += reward
        if terminated or truncated:
            break
        state, action = next_state, next_action
    return total_reward
"""

BUGS = (*BUGS,
    Bug("draws_through_a_cached_method", LESSON, "test_no_empty_or_out_of_range_samples",
        {"per_class": DRAWS_THROUGH_A_CACHED_METHOD_PER_CLASS, "per_sample": DRAWS_THROUGH_A_CACHED_METHOD_PER_SAMPLE},
        description="__init__ keeps self._random = self.rng.random and sample draws through it: after buffer.rng is replaced, the batches still come from the original generator",
        rule="own-generator", kind="global-generator"),
    Bug("per_loop_picks_the_next_action_before_learning", LESSON, "test_per_loop",
        {"play_and_train_with_per": PER_LOOP_PICKS_THE_NEXT_ACTION_BEFORE_LEARNING_PLAY_AND_TRAIN_WITH_PER},
        description="a hand-written loop that chooses the next action (and an extra one at the episode's end) before the online and replayed updates of the step: its actions use stale Q-values",
        rule="plays-as-lesson-01", kind="protocol"),
)


# --- blind round 14: wrong answers written from the lesson text alone ----------------

WEIGHTS_ARRAY_REUSED_BETWEEN_CALLS_PER_SAMPLE = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def sample(self, batch_size, beta):
    \"\"\"Draw ``batch_size`` transitions with probability P(i), one from each equal slice of
    the total priority; return (obs_t, action, reward, obs_tp1, done, weights, slots),
    where weights are (N P(i))^-beta divided by their maximum.\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self) == 0:
        raise ValueError("cannot sample from an empty buffer: add transitions first")
    total = self.tree.total
    masses = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)
    slots = np.minimum(self.tree.find_prefix_sum(masses), len(self) - 1)
    probabilities = self.tree.get(slots) / total
    weights = (len(self) * probabilities) ** -beta
    # allocate the output once per batch size instead of once per call
    if getattr(self, "_weights", None) is None or self._weights.shape != (batch_size,):
        self._weights = np.empty(batch_size, dtype=np.float64)
    np.divide(weights, weights.max(), out=self._weights)
    return (*self.storage[slots], self._weights, slots)
"""

TD_ERROR_CHECKS_LEFT_TO_THE_TREE_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    slots = np.asarray(slots)
    td_errors = np.asarray(td_errors, dtype=np.float64)
    if slots.shape != td_errors.shape:
        raise ValueError(f"got {slots.size} slots but {td_errors.size} TD errors")
    if np.any((slots < 0) | (slots >= len(self))):
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    priorities = np.abs(td_errors) + self.epsilon
    # the tree refuses NaN and infinite priorities with a ValueError before writing anything
    self.tree.update(slots, priorities ** self.alpha)
    if priorities.size:
        self.max_priority = max(self.max_priority, float(priorities.max()))
"""

PER_LOOP_DECAYS_EPSILON_PLAY_AND_TRAIN_WITH_PER = """\
#| export
def play_and_train_with_per(env, agent, replay, batch_size, beta, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a prioritized batch and update
    its priorities. Returns the episode's total reward.\"\"\"
    def learn(state, action, reward, next_state, terminated):
        agent.update(state, action, reward, next_state, terminated)
        replay.add(state, action, reward, next_state, terminated)
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        replay.update_priorities(slots, td_errors)

    total_reward = play_and_train(env, WithUpdate(agent, learn), t_max)
    agent.epsilon *= 0.99  # explore a little less in the next episode
    return total_reward
"""

BUGS = (*BUGS,
    Bug("weights_array_reused_between_calls", LESSON, "test_no_empty_or_out_of_range_samples",
        {"per_sample": WEIGHTS_ARRAY_REUSED_BETWEEN_CALLS_PER_SAMPLE},
        description="writes the normalised weights into one preallocated array kept on the buffer and returns it: the next sample of the same size overwrites the weights of every batch returned before",
        rule="batch-stays-its-own", kind="mutates-input"),
    Bug("td_error_checks_left_to_the_tree", LESSON, "test_errors",
        {"per_update_priorities": TD_ERROR_CHECKS_LEFT_TO_THE_TREE_PER_UPDATE_PRIORITIES},
        description="no finiteness check of its own (the tree refuses NaN and inf priorities): with alpha = 0, inf ** 0 and nan ** 0 are 1, so NaN and infinite TD errors are accepted silently and an infinite one makes max_priority inf",
        rule="update-refuses-bad-input", kind="accidental-refusal"),
    Bug("per_loop_decays_epsilon", LESSON, "test_per_loop",
        {"play_and_train_with_per": PER_LOOP_DECAYS_EPSILON_PLAY_AND_TRAIN_WITH_PER},
        description="multiplies agent.epsilon by 0.99 after the episode, as a training loop would: lesson 01's loop leaves epsilon alone, and train_agent (which decays it already) now decays it twice per episode",
        rule="plays-as-lesson-01", kind="protocol"),
)


# --- blind round 15: wrong answers written from the lesson text alone ----------------

PER_LOOP_SKIPS_FEEDBACK_OF_ZERO_ERRORS_PLAY_AND_TRAIN_WITH_PER = """\
#| export
def play_and_train_with_per(env, agent, replay, batch_size, beta, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a prioritized batch and update
    its priorities. Returns the episode's total reward.\"\"\"
    def learn(state, action, reward, next_state, terminated):
        agent.update(state, action, reward, next_state, terminated)
        replay.add(state, action, reward, next_state, terminated)
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        if np.any(td_errors):  # no surprise, no change of priorities
            replay.update_priorities(slots, td_errors)

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""

BUGS = (*BUGS,
    Bug("per_loop_skips_feedback_of_zero_errors", LESSON, "test_per_loop",
        {"play_and_train_with_per": PER_LOOP_SKIPS_FEEDBACK_OF_ZERO_ERRORS_PLAY_AND_TRAIN_WITH_PER},
        description="calls update_priorities only when some TD error of the batch is nonzero ('nothing surprised, nothing to change'): a batch whose TD errors are all 0 keeps its transitions at the maximal priority instead of dropping them to epsilon^alpha",
        rule="loop-feeds-back-td-errors", kind="falsy-as-missing"),
)


# --- blind round 16: wrong answers written from the lesson text alone ----------------

TREE_SUMS_REBUILT_LAZILY_SUMTREE_CLASS = """\
#| export
import numpy as np

from course.ring_buffer import NumpyRingBuffer
from course.with_update import WithUpdate
from qlearning import play_and_train


class SumTree:
    \"\"\"Non-negative float64 priorities of ``capacity`` slots, and all their partial sums.

    A binary heap in one array: node 1 is the root, node k has children 2k and 2k + 1, and
    slot i is leaf ``leaf_count + i``, where ``leaf_count`` is the smallest power of two
    >= capacity. Every inner node holds the sum of its children; the root, the total.
    \"\"\"

    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.leaf_count = 1 << (capacity - 1).bit_length()
        self.depth = self.leaf_count.bit_length() - 1
        self.nodes = np.zeros(2 * self.leaf_count, dtype=np.float64)
        self._stale = False  # leaves changed since the sums were last computed

    def _refresh(self):
        \"\"\"Recompute every inner node from its children, level by level (bottom up).\"\"\"
        if self._stale:
            width = self.leaf_count // 2
            while width >= 1:
                parents = np.arange(width, 2 * width)
                self.nodes[parents] = self.nodes[2 * parents] + self.nodes[2 * parents + 1]
                width //= 2
            self._stale = False

    @property
    def total(self):
        \"\"\"The sum of all priorities: the root.\"\"\"
        self._refresh()
        return float(self.nodes[1])

    def get(self, slots):
        \"\"\"The priorities of ``slots`` (an array of slot numbers), as a float64 array.\"\"\"
        return self.nodes[self.leaf_count + self.checked_slots(slots)]

    def checked_slots(self, slots):
        \"\"\"``slots`` as an int64 array; ValueError if any is outside [0, capacity).\"\"\"
        slots = np.asarray(slots)
        if slots.size and slots.dtype.kind not in "iu":
            raise ValueError(f"slots must be integers, got dtype {slots.dtype}")
        slots = slots.astype(np.int64)
        if slots.size and (slots.min() < 0 or slots.max() >= self.capacity):
            raise ValueError(f"slots must lie in [0, {self.capacity}), got "
                             f"{slots[(slots < 0) | (slots >= self.capacity)][:3]}")
        return slots
"""

TREE_SUMS_REBUILT_LAZILY_SUMTREE_UPDATE = """\
#| export
@add_to_class(SumTree)
def update(self, slots, priorities):
    \"\"\"Set the priorities of ``slots`` (arrays of equal length; a single priority applies
    to all) and recompute every sum above them, level by level for the whole batch.\"\"\"
    slots = self.checked_slots(slots)
    priorities = np.asarray(priorities, dtype=np.float64)
    if priorities.ndim and priorities.shape != slots.shape:
        raise ValueError(f"got {slots.size} slots but {priorities.size} priorities")
    if not np.all(np.isfinite(priorities) & (priorities >= 0)):
        raise ValueError(f"priorities must be finite and non-negative, got {priorities}")
    self.nodes[self.leaf_count + slots] = priorities
    self._stale = True  # the sums are recomputed once, when they are next needed
"""

TREE_SUMS_REBUILT_LAZILY_SUMTREE_FIND_PREFIX_SUM = """\
#| export
@add_to_class(SumTree)
def find_prefix_sum(self, masses):
    \"\"\"For each mass m, the slot i with p_0 + ... + p_(i-1) <= m < p_0 + ... + p_i: the
    slot whose share of the total holds m. Masses are clamped into [0, total) first.\"\"\"
    self._refresh()
    total = self.total
    if not total > 0:
        raise ValueError("cannot search a sum tree whose priorities are all zero")
    masses = np.clip(np.asarray(masses, dtype=np.float64), 0.0, np.nextafter(total, 0.0))
    nodes = np.ones(masses.shape, dtype=np.int64)
    for _ in range(self.depth):
        nodes *= 2
        left_sum = self.nodes[nodes]
        go_right = masses >= left_sum
        masses -= left_sum * go_right
        nodes += go_right
    return np.minimum(nodes - self.leaf_count, self.capacity - 1)
"""

TREE_UPDATE_WRITES_NODE_ZERO_SUMTREE_UPDATE = """\
#| export
@add_to_class(SumTree)
def update(self, slots, priorities):
    \"\"\"Set the priorities of ``slots`` (arrays of equal length; a single priority applies
    to all) and recompute every sum above them, level by level for the whole batch.\"\"\"
    slots = self.checked_slots(slots)
    priorities = np.asarray(priorities, dtype=np.float64)
    if priorities.ndim and priorities.shape != slots.shape:
        raise ValueError(f"got {slots.size} slots but {priorities.size} priorities")
    if not np.all(np.isfinite(priorities) & (priorities >= 0)):
        raise ValueError(f"priorities must be finite and non-negative, got {priorities}")
    nodes = self.leaf_count + slots
    self.nodes[nodes] = priorities
    while np.any(nodes > 0):  # climb up to the root
        nodes = nodes // 2
        self.nodes[nodes] = self.nodes[2 * nodes] + self.nodes[2 * nodes + 1]
"""

STALE_SLOTS_SKIPPED_PER_CLASS = """\
#| export
class PrioritizedReplayBuffer:
    \"\"\"Proportional prioritized replay (Schaul et al., 2016).

    Transitions live in ``self.storage`` (a NumpyRingBuffer); their priorities p^alpha
    in ``self.tree`` (a SumTree), slot for slot. New transitions get the largest priority
    given so far, ``self.max_priority`` (1 at first); ``update_priorities`` sets
    p = |delta| + epsilon. ``seed`` seeds the buffer's generator ``self.rng``.
    \"\"\"

    def __init__(self, capacity, alpha=0.6, epsilon=1e-6, seed=None):
        if alpha < 0 or not epsilon > 0:
            raise ValueError(f"need alpha >= 0 and epsilon > 0, got {alpha} and {epsilon}")
        self.capacity, self.alpha, self.epsilon = capacity, alpha, epsilon
        self.storage = NumpyRingBuffer(capacity)
        self.tree = SumTree(capacity)
        self.max_priority = 1.0
        self.rng = np.random.default_rng(seed)
        self._batch_out = False  # a batch has been sampled; its priorities may come back
        self._rewritten = set()  # slots written since that batch was drawn

    def __len__(self):
        \"\"\"The number of transitions stored (at most ``capacity``).\"\"\"
        return len(self.storage)

    def add(self, obs_t, action, reward, obs_tp1, done):
        \"\"\"Store a transition (overwriting the oldest when full) at the maximal priority.\"\"\"
        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)
        self.tree.update([slot], self.max_priority ** self.alpha)
        if self._batch_out:
            self._rewritten.add(slot)
"""

STALE_SLOTS_SKIPPED_PER_SAMPLE = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def sample(self, batch_size, beta):
    \"\"\"Draw ``batch_size`` transitions with probability P(i), one from each equal slice of
    the total priority; return (obs_t, action, reward, obs_tp1, done, weights, slots),
    where weights are (N P(i))^-beta divided by their maximum.\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self) == 0:
        raise ValueError("cannot sample from an empty buffer: add transitions first")
    total = self.tree.total
    masses = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)
    slots = np.minimum(self.tree.find_prefix_sum(masses), len(self) - 1)
    probabilities = self.tree.get(slots) / total
    weights = (len(self) * probabilities) ** -beta
    self._batch_out, self._rewritten = True, set()
    return (*self.storage[slots], weights / weights.max(), slots)
"""

STALE_SLOTS_SKIPPED_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    slots = np.asarray(slots)
    td_errors = np.asarray(td_errors, dtype=np.float64)
    if slots.shape != td_errors.shape:
        raise ValueError(f"got {slots.size} slots but {td_errors.size} TD errors")
    if not np.all(np.isfinite(td_errors)):
        raise ValueError(f"TD errors must be finite, got {td_errors[~np.isfinite(td_errors)]}")
    if np.any((slots < 0) | (slots >= len(self))):
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    # a slot overwritten since the batch was drawn holds another transition: skip it
    current = ~np.isin(slots, list(self._rewritten))
    slots, td_errors = slots[current], td_errors[current]
    priorities = np.abs(td_errors) + self.epsilon
    self.tree.update(slots, priorities ** self.alpha)
    if priorities.size:
        self.max_priority = max(self.max_priority, float(priorities.max()))
"""

BUGS = (*BUGS,
    Bug("tree_sums_rebuilt_lazily", LESSON, "test_sumtree_totals",
        {"sumtree_class": TREE_SUMS_REBUILT_LAZILY_SUMTREE_CLASS, "sumtree_update": TREE_SUMS_REBUILT_LAZILY_SUMTREE_UPDATE, "sumtree_find_prefix_sum": TREE_SUMS_REBUILT_LAZILY_SUMTREE_FIND_PREFIX_SUM},
        description="update writes only the leaves and marks the tree dirty; total and find_prefix_sum rebuild every inner node first: after an update, tree.nodes holds stale inner sums (the root is not the total) until something reads total",
        rule="tree-layout", kind="protocol"),
    Bug("tree_update_writes_node_zero", LESSON, "test_sumtree_totals",
        {"sumtree_update": TREE_UPDATE_WRITES_NODE_ZERO_SUMTREE_UPDATE},
        description="climbs while any node is > 0, so after the root it also 'recomputes' node 0 as nodes[0] + nodes[1]: node 0 accumulates every total ever computed (totals and searches stay right)",
        rule="tree-layout", kind="boundary"),
    Bug("stale_slots_skipped", LESSON, "test_priority_updates",
        {"per_class": STALE_SLOTS_SKIPPED_PER_CLASS, "per_sample": STALE_SLOTS_SKIPPED_PER_SAMPLE, "per_update_priorities": STALE_SLOTS_SKIPPED_PER_UPDATE_PRIORITIES},
        description="remembers the slots added since the last sample and silently skips them in update_priorities (their transition is not the one the batch held): after sample, add, update_priorities the overwritten slot keeps the maximal priority and max_priority ignores its TD error",
        rule="priority-formula", kind="protocol"),
)


# --- blind round 17: wrong answers written from the lesson text alone ----------------

TREE_OF_ONE_GETS_TWO_LEAVES_SUMTREE_CLASS = """\
#| export
import numpy as np

from course.ring_buffer import NumpyRingBuffer
from course.with_update import WithUpdate
from qlearning import play_and_train


class SumTree:
    \"\"\"Non-negative float64 priorities of ``capacity`` slots, and all their partial sums.

    A binary heap in one array: node 1 is the root, node k has children 2k and 2k + 1, and
    slot i is leaf ``leaf_count + i``, where ``leaf_count`` is the smallest power of two
    >= capacity. Every inner node holds the sum of its children; the root, the total.
    \"\"\"

    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        # the power of two >= capacity, and at least two leaves so the root has children
        self.leaf_count = max(2, 1 << (capacity - 1).bit_length())
        self.depth = self.leaf_count.bit_length() - 1  # levels below the root
        self.nodes = np.zeros(2 * self.leaf_count, dtype=np.float64)

    @property
    def total(self):
        \"\"\"The sum of all priorities: the root.\"\"\"
        return float(self.nodes[1])

    def get(self, slots):
        \"\"\"The priorities of ``slots`` (an array of slot numbers), as a float64 array.\"\"\"
        return self.nodes[self.leaf_count + self.checked_slots(slots)]

    def checked_slots(self, slots):
        \"\"\"``slots`` as an int64 array; ValueError if any is outside [0, capacity).\"\"\"
        slots = np.asarray(slots)
        if slots.size and slots.dtype.kind not in "iu":
            raise ValueError(f"slots must be integers, got dtype {slots.dtype}")
        slots = slots.astype(np.int64)
        if slots.size and (slots.min() < 0 or slots.max() >= self.capacity):
            raise ValueError(f"slots must lie in [0, {self.capacity}), got "
                             f"{slots[(slots < 0) | (slots >= self.capacity)][:3]}")
        return slots
"""

GENERATOR_MADE_ON_FIRST_SAMPLE_PER_CLASS = """\
#| export
class PrioritizedReplayBuffer:
    \"\"\"Proportional prioritized replay (Schaul et al., 2016).

    Transitions live in ``self.storage`` (a NumpyRingBuffer); their priorities p^alpha
    in ``self.tree`` (a SumTree), slot for slot. New transitions get the largest priority
    given so far, ``self.max_priority`` (1 at first); ``update_priorities`` sets
    p = |delta| + epsilon. ``seed`` seeds the buffer's generator ``self.rng``.
    \"\"\"

    def __init__(self, capacity, alpha=0.6, epsilon=1e-6, seed=None):
        if alpha < 0 or not epsilon > 0:
            raise ValueError(f"need alpha >= 0 and epsilon > 0, got {alpha} and {epsilon}")
        self.capacity, self.alpha, self.epsilon = capacity, alpha, epsilon
        self.storage = NumpyRingBuffer(capacity)
        self.tree = SumTree(capacity)
        self.max_priority = 1.0
        self.seed = seed  # the generator is made when the first batch is drawn

    def __len__(self):
        \"\"\"The number of transitions stored (at most ``capacity``).\"\"\"
        return len(self.storage)

    def add(self, obs_t, action, reward, obs_tp1, done):
        \"\"\"Store a transition (overwriting the oldest when full) at the maximal priority.\"\"\"
        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)
        self.tree.update([slot], self.max_priority ** self.alpha)
"""

GENERATOR_MADE_ON_FIRST_SAMPLE_PER_SAMPLE = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def sample(self, batch_size, beta):
    \"\"\"Draw ``batch_size`` transitions with probability P(i), one from each equal slice of
    the total priority; return (obs_t, action, reward, obs_tp1, done, weights, slots),
    where weights are (N P(i))^-beta divided by their maximum.\"\"\"
    if not hasattr(self, "rng"):
        self.rng = np.random.default_rng(self.seed)  # once, on the first batch
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self) == 0:
        raise ValueError("cannot sample from an empty buffer: add transitions first")
    total = self.tree.total
    masses = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)
    slots = np.minimum(self.tree.find_prefix_sum(masses), len(self) - 1)
    probabilities = self.tree.get(slots) / total
    weights = (len(self) * probabilities) ** -beta
    return (*self.storage[slots], weights / weights.max(), slots)
"""

ALPHA_ZERO_SAMPLED_WITHOUT_STRATA_PER_SAMPLE = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def sample(self, batch_size, beta):
    \"\"\"Draw ``batch_size`` transitions with probability P(i), one from each equal slice of
    the total priority; return (obs_t, action, reward, obs_tp1, done, weights, slots),
    where weights are (N P(i))^-beta divided by their maximum.\"\"\"
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if len(self) == 0:
        raise ValueError("cannot sample from an empty buffer: add transitions first")
    if self.alpha == 0:  # alpha = 0 is uniform replay: no tree needed, every weight is 1
        slots = self.rng.integers(len(self), size=batch_size)
        return (*self.storage[slots], np.ones(batch_size), slots)
    total = self.tree.total
    masses = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)
    slots = np.minimum(self.tree.find_prefix_sum(masses), len(self) - 1)
    probabilities = self.tree.get(slots) / total
    weights = (len(self) * probabilities) ** -beta
    return (*self.storage[slots], weights / weights.max(), slots)
"""

SLOTS_LIST_COMPARED_DIRECTLY_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    td_errors = np.asarray(td_errors, dtype=np.float64)
    if len(slots) != len(td_errors):
        raise ValueError(f"got {len(slots)} slots but {len(td_errors)} TD errors")
    if not np.all(np.isfinite(td_errors)):
        raise ValueError(f"TD errors must be finite, got {td_errors[~np.isfinite(td_errors)]}")
    if np.any((slots < 0) | (slots >= len(self))):  # slots come from sample: an array
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    priorities = np.abs(td_errors) + self.epsilon
    self.tree.update(slots, priorities ** self.alpha)
    if priorities.size:
        self.max_priority = max(self.max_priority, float(priorities.max()))
"""

SLOTS_WRAPPED_ROUND_THE_RING_PER_UPDATE_PRIORITIES = """\
#| export
@add_to_class(PrioritizedReplayBuffer)
def update_priorities(self, slots, td_errors):
    \"\"\"Set p = |delta| + epsilon for each sampled slot; store p^alpha in the tree.\"\"\"
    slots = np.asarray(slots) % self.capacity  # ring positions wrap round
    td_errors = np.asarray(td_errors, dtype=np.float64)
    if slots.shape != td_errors.shape:
        raise ValueError(f"got {slots.size} slots but {td_errors.size} TD errors")
    if not np.all(np.isfinite(td_errors)):
        raise ValueError(f"TD errors must be finite, got {td_errors[~np.isfinite(td_errors)]}")
    if np.any(slots >= len(self)):
        raise ValueError(f"slots must lie in [0, {len(self)}), the filled part of the buffer")
    priorities = np.abs(td_errors) + self.epsilon
    self.tree.update(slots, priorities ** self.alpha)
    if priorities.size:
        self.max_priority = max(self.max_priority, float(priorities.max()))
"""

PER_LOOP_PLAYS_A_STEP_AT_T_MAX_ZERO_PLAY_AND_TRAIN_WITH_PER = """\
#| export
def play_and_train_with_per(env, agent, replay, batch_size, beta, t_max=10_000):
    \"\"\"Play one episode; after each step also learn from a prioritized batch and update
    its priorities. Returns the episode's total reward.\"\"\"
    total_reward, steps = 0.0, 0
    state, _ = env.reset()
    while True:
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        replay.add(state, action, reward, next_state, terminated)
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        replay.update_priorities(slots, td_errors)
        total_reward += reward
        state = next_state
        steps += 1
        if terminated or truncated or steps >= t_max:
            break
    return total_reward
"""

BUGS = (*BUGS,
    Bug("tree_of_one_gets_two_leaves", LESSON, "test_sumtree_totals",
        {"sumtree_class": TREE_OF_ONE_GETS_TWO_LEAVES_SUMTREE_CLASS},
        description="leaf_count = max(2, ...) so that the root always has two children: SumTree(1) gets leaf_count 2, depth 1 and nodes of length 4 instead of 2 (sums and searches stay right)",
        rule="tree-layout", kind="boundary"),
    Bug("generator_made_on_first_sample", LESSON, "test_stratified_sampling",
        {"per_class": GENERATOR_MADE_ON_FIRST_SAMPLE_PER_CLASS, "per_sample": GENERATOR_MADE_ON_FIRST_SAMPLE_PER_SAMPLE},
        description="__init__ only remembers the seed; sample makes self.rng on its first call: a new buffer has no rng attribute (AttributeError), so nothing can read or draw from buffer.rng before the first batch",
        rule="own-generator", kind="global-generator"),
    Bug("alpha_zero_sampled_without_strata", LESSON, "test_stratified_sampling",
        {"per_sample": ALPHA_ZERO_SAMPLED_WITHOUT_STRATA_PER_SAMPLE},
        description="with alpha == 0 ('uniform replay') skips the tree and draws rng.integers(len(self), size=batch_size): independent draws with repeats, so a batch of N from N stored no longer holds every transition once",
        rule="stratified", kind="wrong-distribution"),
    Bug("slots_list_compared_directly", LESSON, "test_errors",
        {"per_update_priorities": SLOTS_LIST_COMPARED_DIRECTLY_PER_UPDATE_PRIORITIES},
        also_fails=("test_priority_updates",),
        description="converts the TD errors but compares the slots as given: a Python list of slots raises TypeError ('<' between list and int) instead of setting the priorities (and a bad slot in a list gives TypeError, not ValueError)",
        rule="update-refuses-bad-input", kind="accidental-refusal"),
    Bug("slots_wrapped_round_the_ring", LESSON, "test_errors",
        {"per_update_priorities": SLOTS_WRAPPED_ROUND_THE_RING_PER_UPDATE_PRIORITIES},
        description="takes slots % capacity first ('slots index a ring'): on a full buffer slot -1 silently sets the last slot and slot capacity sets slot 0, no ValueError",
        rule="update-refuses-bad-input", kind="accidental-refusal"),
    Bug("per_loop_plays_a_step_at_t_max_zero", LESSON, "test_per_loop",
        {"play_and_train_with_per": PER_LOOP_PLAYS_A_STEP_AT_T_MAX_ZERO_PLAY_AND_TRAIN_WITH_PER},
        description="a hand-written while True loop that checks t >= t_max at the end of the step: right for t_max >= 1, but t_max = 0 still plays, stores and replays one step and returns its reward",
        rule="loop-episode-ends", kind="boundary"),
)


# --- blind round 18: wrong answers written from the lesson text alone ----------------

CAPACITY_ROUNDED_UP_TO_A_POWER_OF_TWO_PER_CLASS = edited(
    LESSON, 'per_class',
    ('        self.capacity, self.alpha, self.epsilon = capacity, alpha, epsilon\n        self.storage = NumpyRingBuffer(capacity)\n        self.tree = SumTree(capacity)\n',
     '        leaves = 1 << (capacity - 1).bit_length()  # one slot per leaf of the tree\n        self.capacity, self.alpha, self.epsilon = leaves, alpha, epsilon\n        self.storage = NumpyRingBuffer(leaves)\n        self.tree = SumTree(leaves)\n'),
    ('        self.tree.update([slot], self.max_priority ** self.alpha)',
     '        self.tree.update([slot], self.max_priority ** self.alpha)\n'))

SEARCH_RESULT_KEPT_ON_THE_TREE_SUMTREE_FIND_PREFIX_SUM = edited(
    LESSON, 'sumtree_find_prefix_sum',
    ('    nodes = np.ones(masses.shape, dtype=np.int64)  # every search starts at the root\n',
     '    # one array for every search, grown when needed: no allocation per batch\n    if getattr(self, "_search_nodes", None) is None or self._search_nodes.size < masses.size:\n        self._search_nodes = np.empty(masses.size, dtype=np.int64)\n    nodes = self._search_nodes[:masses.size].reshape(masses.shape)\n    nodes[...] = 1  # every search starts at the root\n'),
    ('    return np.minimum(nodes - self.leaf_count, self.capacity - 1)',
     '    nodes -= self.leaf_count\n    return np.minimum(nodes, self.capacity - 1, out=nodes)\n'))

BUGS = (*BUGS,
    Bug("capacity_rounded_up_to_a_power_of_two", LESSON, "test_wraparound",
        {"per_class": CAPACITY_ROUNDED_UP_TO_A_POWER_OF_TWO_PER_CLASS},
        also_fails=("test_priority_updates",),  # its tree is not SumTree(capacity) either
        description="sizes the ring and the tree to the tree's leaf count (the power of two >= capacity), so slots match leaves: a buffer of capacity 5 holds 8 transitions before it overwrites the oldest",
        rule="overwrites-oldest", kind="size-from-argument"),
    Bug("search_result_kept_on_the_tree", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_RESULT_KEPT_ON_THE_TREE_SUMTREE_FIND_PREFIX_SUM},
        description="find_prefix_sum descends in one int64 array kept on the tree (grown when needed, never reallocated) and returns a view of it: the next search overwrites the slots every earlier call returned",
        rule="inputs-untouched", kind="mutates-input"),
)


# --- blind round 19: wrong answers written from the lesson text alone ----------------

SEED_ZERO_TAKEN_AS_MISSING_PER_CLASS = edited(
    LESSON, 'per_class',
    ('        self.rng = np.random.default_rng(seed)\n',
     '        if seed:\n            self.rng = np.random.default_rng(seed)\n        else:  # no seed given: fresh entropy\n            self.rng = np.random.default_rng()\n'))

BUGS = (*BUGS,
    Bug("seed_zero_taken_as_missing", LESSON, "test_stratified_sampling",
        {"per_class": SEED_ZERO_TAKEN_AS_MISSING_PER_CLASS},
        description="seeds the generator only 'if seed:': seed=0 makes an unseeded generator, so two buffers made with seed 0 draw different batches",
        rule="own-generator", kind="falsy-as-missing"),
)


# --- blind round 20: wrong answers written from the lesson text alone ----------------

GET_RETURNS_A_VIEW_FOR_A_RUN_OF_SLOTS_SUMTREE_CLASS = edited(
    LESSON, 'sumtree_class',
    ('        return self.nodes[self.leaf_count + self.checked_slots(slots)]\n',
     '        slots = self.checked_slots(slots)\n        if slots.ndim == 1 and slots.size > 1 and np.all(np.diff(slots) == 1):\n            start = self.leaf_count + slots[0]  # a run of slots: one slice\n            return self.nodes[start:start + slots.size]\n        return self.nodes[self.leaf_count + slots]\n'))

TREE_SIZED_BY_ITS_NODE_COUNT_PER_CLASS = edited(
    LESSON, 'per_class',
    ('        self.tree = SumTree(capacity)\n',
     '        self.tree = SumTree(2 * capacity)  # a binary tree over capacity leaves\n'))

BUGS = (*BUGS,
    Bug("get_returns_a_view_for_a_run_of_slots", LESSON, "test_sumtree_totals",
        {"sumtree_class": GET_RETURNS_A_VIEW_FOR_A_RUN_OF_SLOTS_SUMTREE_CLASS},
        description="get returns a slice of nodes (a view into the tree) when the slots are consecutive, a fast path: changing the result changes the tree, and a later update refills a result already returned",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("tree_sized_by_its_node_count", LESSON, "test_priority_updates",
        {"per_class": TREE_SIZED_BY_ITS_NODE_COUNT_PER_CLASS},
        description="makes the buffer's tree SumTree(2 * capacity), as if the tree needed a slot per node: the tree has twice the buffer's slots, so buffer.tree accepts slots past the capacity and its leaves no longer match the ring's slots",
        rule="buffer-parameters", kind="size-from-argument"),
)


# --- blind round 21: wrong answers written from the lesson text alone ----------------

ALPHA_ABOVE_ONE_REFUSED_PER_CLASS = edited(
    LESSON, 'per_class',
    ('        if alpha < 0 or not epsilon > 0:\n'
     '            raise ValueError(f"need alpha >= 0 and epsilon > 0, got {alpha} and {epsilon}")\n',
     '        if not 0 <= alpha <= 1 or not epsilon > 0:\n'
     '            raise ValueError(f"need 0 <= alpha <= 1 and epsilon > 0, got {alpha} and {epsilon}")\n'))

WEIGHT_ZERO_TAKEN_AS_MISSING_PRIORITIZED_Q_UPDATE = edited(
    LESSON, 'prioritized_q_update',
    ('    target = reward + (0.0 if done else agent.discount * agent.get_value(next_obs))\n',
     '    weight = weight or 1.0  # no weight: a plain Q-learning step\n'
     '    target = reward + (0.0 if done else agent.discount * agent.get_value(next_obs))\n'))

PER_LOOP_ONLINE_UPDATE_TREATS_TRUNCATION_AS_TERMINAL = '''\
#| export
def play_and_train_with_per(env, agent, replay, batch_size, beta, t_max=10_000):
    """Play one episode; after each step also learn from a prioritized batch and update
    its priorities. Returns the episode's total reward."""
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
        agent.update(state, action, reward, next_state, done)  # the episode is over
        replay.add(state, action, reward, next_state, terminated)  # stored as the lesson says
        *transitions, weights, slots = replay.sample(batch_size, beta)
        td_errors = [prioritized_q_update(agent, *transition, weight)
                     for *transition, weight in zip(*transitions, weights)]
        replay.update_priorities(slots, td_errors)
        total_reward += reward
        state = next_state
        if done:
            break
    return total_reward
'''

BUGS = (*BUGS,
    Bug("alpha_above_one_refused", LESSON, "test_priority_updates",
        {"per_class": ALPHA_ABOVE_ONE_REFUSED_PER_CLASS},
        description="the constructor refuses alpha > 1 ('alpha = 1 is proportional', read as the top of the scale): PrioritizedReplayBuffer(..., alpha=2) raises ValueError, though the lesson has you try alpha = 0, 0.3, 1 and 2 on the Blind Cliffwalk",
        rule="buffer-parameters", kind="accidental-refusal"),
    Bug("weight_zero_taken_as_missing", LESSON, "test_weighted_update",
        {"prioritized_q_update": WEIGHT_ZERO_TAKEN_AS_MISSING_PRIORITIZED_Q_UPDATE},
        description="prioritized_q_update takes `weight or 1.0` (an unweighted step when no weight is given): a weight of 0 (0, 0.0 or numpy's zero) makes a full, unweighted step instead of no step",
        rule="weighted-step", kind="falsy-as-missing"),
    Bug("per_loop_online_update_treats_truncation_as_terminal", LESSON, "test_per_loop",
        {"play_and_train_with_per": PER_LOOP_ONLINE_UPDATE_TREATS_TRUNCATION_AS_TERMINAL},
        description="a hand-written loop stores done=terminated but updates the agent online with terminated or truncated: the last step of a truncated episode is learned without its bootstrap, as if the state ended there",
        rule="loop-online-then-replay", kind="past-terminal"),
)


# --- blind round 23 --------------------------------------------------------------------

# One priority for every slot recognised by isinstance(..., (int, float)): np.float64 is a
# float, but np.int64 and np.float32 are neither, and the tree refuses them.
TREE_REFUSES_NUMPY_SINGLE_PRIORITY = _edit("sumtree_update", (
    "    priorities = np.asarray(priorities, dtype=np.float64)\n"
    "    if priorities.ndim and priorities.shape != slots.shape:",
    "    if isinstance(priorities, (int, float)):  # a single priority applies to all\n"
    "        priorities = np.full(slots.shape, priorities)\n"
    "    priorities = np.asarray(priorities, dtype=np.float64)\n"
    "    if priorities.shape != slots.shape:"))

BUGS = (*BUGS,
    Bug("tree_refuses_numpy_single_priority", LESSON, "test_sumtree_totals",
        {"sumtree_update": TREE_REFUSES_NUMPY_SINGLE_PRIORITY},
        description="update broadcasts a single priority only when it is a Python int or "
                    "float: one np.int64 (or np.float32) priority for all slots is refused",
        rule="numpy-scalars", kind="numpy-scalars"),
)


# --- blind round 24 --------------------------------------------------------------------

# TD errors checked as checked_slots checks slots: anything but a float dtype is refused,
# so whole-number TD errors ([0, -2, 3], an int64 array, np.int64 scalars) raise.
INTEGER_TD_ERRORS_REFUSED = _edit("per_update_priorities", (
    "    td_errors = np.asarray(td_errors, dtype=np.float64)\n",
    "    td_errors = np.asarray(td_errors)\n"
    "    if td_errors.size and td_errors.dtype.kind != \"f\":\n"
    "        raise ValueError(f\"TD errors must be floats, got dtype {td_errors.dtype}\")\n"
    "    td_errors = td_errors.astype(np.float64)\n"))

BUGS = (*BUGS,
    Bug("integer_td_errors_refused", LESSON, "test_priority_updates",
        {"per_update_priorities": INTEGER_TD_ERRORS_REFUSED},
        description="update_priorities checks the TD errors' dtype as checked_slots checks "
                    "slots and refuses anything but floats: TD errors given as whole numbers "
                    "([0, -2, 3], an int64 array, np.int64 scalars in a list) raise ValueError",
        rule="priority-formula", kind="accidental-refusal"),
)


# --- blind round 25 --------------------------------------------------------------------

UNSEEDED_BUFFER_USES_NP_RANDOM_PER_CLASS = '''\
#| export
class PrioritizedReplayBuffer:
    """Proportional prioritized replay (Schaul et al., 2016).

    Transitions live in ``self.storage`` (a NumpyRingBuffer); their priorities p^alpha
    in ``self.tree`` (a SumTree), slot for slot. New transitions get the largest priority
    given so far, ``self.max_priority`` (1 at first); ``update_priorities`` sets
    p = |delta| + epsilon. ``seed`` seeds the buffer's generator ``self.rng``.
    """

    def __init__(self, capacity, alpha=0.6, epsilon=1e-6, seed=None):
        if alpha < 0 or not epsilon > 0:
            raise ValueError(f"need alpha >= 0 and epsilon > 0, got {alpha} and {epsilon}")
        self.capacity, self.alpha, self.epsilon = capacity, alpha, epsilon
        self.storage = NumpyRingBuffer(capacity)
        self.tree = SumTree(capacity)
        self.max_priority = 1.0
        # seeded: a generator of its own; unseeded: numpy's, like everything else
        self.rng = np.random.default_rng(seed) if seed is not None else np.random

    def __len__(self):
        """The number of transitions stored (at most ``capacity``)."""
        return len(self.storage)

    def add(self, obs_t, action, reward, obs_tp1, done):
        """Store a transition (overwriting the oldest when full) at the maximal priority."""
        slot = self.storage.add(obs_t, action, reward, obs_tp1, done)
        self.tree.update([slot], self.max_priority ** self.alpha)
'''

BUGS = (*BUGS,
    # blind round 25
    Bug("unseeded_buffer_uses_np_random", LESSON, "test_stratified_sampling",
        {"per_class": UNSEEDED_BUFFER_USES_NP_RANDOM_PER_CLASS},
        description="without a seed, self.rng is the np.random module itself: an unseeded "
                    "buffer's batches follow (and advance) numpy's global state, so "
                    "np.random.seed(0) makes two unseeded buffers draw the same batches",
        rule="own-generator", kind="global-generator"),
)


# blind round 26
NEXT_VALUE_THROUGH_GET_BEST_ACTION = '''\
#| export
def prioritized_q_update(agent, obs, action, reward, next_obs, done, weight):
    """One Q-learning step on ``agent``, scaled by an importance weight; return the TD
    error delta = target - Q(obs, action), computed before the update."""
    if done:
        target = reward
    else:
        best = agent.get_best_action(next_obs)  # the greedy action a'
        target = reward + agent.discount * agent.get_qvalue(next_obs, best)
    old = agent.get_qvalue(obs, action)
    td_error = target - old
    agent.set_qvalue(obs, action, old + agent.alpha * weight * td_error)
    return td_error
'''

BUGS = (*BUGS,
    # blind round 26
    Bug("next_value_through_get_best_action", LESSON, "test_weighted_update",
        {"prioritized_q_update": NEXT_VALUE_THROUGH_GET_BEST_ACTION},
        description="bootstraps from get_qvalue(next_obs, agent.get_best_action(next_obs)): "
                    "the same value, but every replayed update draws a tie-break from the "
                    "agent's generator, so the agent's later actions change; the lent agent "
                    "offers only get_qvalue, get_value and set_qvalue",
        rule="lent-as-stated", kind="protocol"),
)
