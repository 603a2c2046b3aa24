"""Buggy answers to lesson 03 (prioritized replay), each the mistake its name says.

Most are the solution cell with the bug edited in; several are the bugs public PER
implementations shipped (RESEARCH.md, "Known bugs of replay buffers").
"""

import functools

from . import Bug, edited_text, edits_of

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
    "return beta_start + min(1.0, step / total_steps) * (1.0 - beta_start)",
    "return beta_start + step / total_steps * (1.0 - beta_start)"))

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

# --- found by mutation testing and the blind spots ------------------------------------

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


BUGS = [
    Bug("tree_in_float32", LESSON, "test_sumtree_totals",
        {"sumtree_class": TREE_IN_FLOAT32},
        also_fails=("test_new_transitions_max_priority", "test_priority_updates"),
        description="float32 nodes: sums drift and priorities lose digits (tianshou #625)"),
    Bug("tree_adds_differences", LESSON, "test_sumtree_totals",
        {"sumtree_update": TREE_ADDS_DIFFERENCES},
        also_fails=("test_sumtree_prefix_sum", "test_sampling_follows_priorities"),
        description="propagates changes with nodes[parents] += change: siblings updated "
                    "in one batch lose all but one change"),
    Bug("tree_not_a_power_of_two", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_class": TREE_NOT_A_POWER_OF_TWO},
        also_fails=("test_sumtree_totals", "test_sampling_follows_priorities",
                    "test_stratified_sampling", "test_importance_weights", "test_wraparound",
                    "test_no_empty_or_out_of_range_samples"),
        description="leaves at capacity..2 capacity - 1: prefix sums out of slot order "
                    "(cleanrl #546)"),
    Bug("search_goes_left_on_a_tie", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_GOES_LEFT_ON_A_TIE},
        description="an off-by-one descent: a mass equal to a running sum goes left"),
    Bug("search_without_clamping", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_WITHOUT_CLAMPING},
        description="masses at the total fall off the end into empty slots "
                    "(pytorch/rl #2230)"),
    Bug("tree_accepts_negative_priorities", LESSON, "test_errors",
        {"sumtree_update": TREE_ACCEPTS_ANYTHING},
        description="negative or NaN priorities go into the tree silently"),
    Bug("alpha_ignored", LESSON, "test_sampling_follows_priorities",
        {"per_update_priorities": ALPHA_IGNORED},
        also_fails=("test_priority_updates", "test_importance_weights"),
        description="stores |delta| + epsilon without raising it to alpha"),
    Bug("new_transitions_at_priority_one", LESSON, "test_new_transitions_max_priority",
        {"per_class": NEW_TRANSITIONS_AT_PRIORITY_ONE},
        description="new transitions get priority 1, not the maximum (ray #11750)"),
    Bug("new_transitions_at_priority_zero", LESSON, "test_new_transitions_max_priority",
        {"per_class": NEW_TRANSITIONS_AT_PRIORITY_ZERO},
        also_fails=("test_stratified_sampling", "test_priority_updates", "test_wraparound"),
        description="a transition without a TD error yet gets priority 0: never sampled"),
    Bug("every_slot_starts_at_the_maximum", LESSON, "test_no_empty_or_out_of_range_samples",
        {"per_class": EVERY_SLOT_STARTS_AT_THE_MAXIMUM,
         "per_sample": SAMPLE_WITHOUT_CLAMPING_TO_LEN},
        also_fails=("test_sampling_follows_priorities", "test_stratified_sampling",
                    "test_importance_weights"),
        description="empty slots hold priority 1, so sample draws slots holding nothing"),
    Bug("overwritten_slot_keeps_its_priority", LESSON, "test_wraparound",
        {"per_class": OVERWRITTEN_SLOT_KEEPS_ITS_PRIORITY},
        description="a reused slot keeps its old transition's priority (ray #6534)"),
    Bug("weights_not_normalised", LESSON, "test_importance_weights",
        {"per_sample": WEIGHTS_NOT_NORMALISED},
        also_fails=("test_no_empty_or_out_of_range_samples",),
        description="weights not divided by their maximum"),
    Bug("weights_with_plus_beta", LESSON, "test_importance_weights",
        {"per_sample": WEIGHTS_WITH_PLUS_BETA},
        description="(N P)^beta instead of (N P)^-beta: frequent transitions weigh most"),
    Bug("sampling_not_stratified", LESSON, "test_stratified_sampling",
        {"per_sample": SAMPLING_NOT_STRATIFIED},
        description="independent masses over [0, total) instead of one per slice"),
    Bug("no_epsilon", LESSON, "test_priority_updates",
        {"per_update_priorities": NO_EPSILON},
        also_fails=("test_new_transitions_max_priority", "test_importance_weights"),
        description="p = |delta|: a transition with TD error 0 is never replayed again"),
    Bug("priorities_inverted", LESSON, "test_cliffwalk_learning",
        {"per_update_priorities": PRIORITIES_INVERTED},
        also_fails=("test_sampling_follows_priorities", "test_priority_updates",
                    "test_importance_weights"),
        description="p^-alpha: replays what it already knows"),
    Bug("beta_not_capped", LESSON, "test_beta_schedule",
        {"annealed_beta": BETA_NOT_CAPPED},
        description="beta keeps growing past 1 after total_steps"),
    Bug("update_ignores_the_weight", LESSON, "test_weighted_update",
        {"prioritized_q_update": UPDATE_IGNORES_THE_WEIGHT},
        also_fails=("test_per_loop",),
        description="the importance weight is never applied"),
    Bug("update_returns_the_error_after", LESSON, "test_weighted_update",
        {"prioritized_q_update": UPDATE_RETURNS_THE_ERROR_AFTER},
        also_fails=("test_per_loop",),
        description="returns the TD error left after the update, not the one that "
                    "surprised"),
    Bug("loop_never_updates_priorities", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_NEVER_UPDATES_PRIORITIES},
        description="priorities stay at their initial maximum: uniform replay, slowly"),
    Bug("loop_uses_rewards_as_priorities", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_USES_REWARDS_AS_PRIORITIES},
        description="priorities from rewards instead of TD errors"),
    Bug("one_offset_for_the_whole_batch", LESSON, "test_stratified_sampling",
        {"per_sample": ONE_OFFSET_FOR_THE_WHOLE_BATCH},
        description="rng.random() once per batch: every slice's draw at the same offset "
                    "(systematic sampling), right marginally, not independent"),
    Bug("tree_refuses_only_negative_priorities", LESSON, "test_errors",
        {"sumtree_update": TREE_REFUSES_ONLY_NEGATIVE_PRIORITIES},
        description="priorities < 0 refused, but NaN and inf accepted into the tree"),
    Bug("sample_trusts_the_clamped_search", LESSON, "test_no_empty_or_out_of_range_samples",
        {"per_sample": SAMPLE_TRUSTS_THE_CLAMPED_SEARCH},
        description="slots not clamped to len(self) - 1: a mass a hair below the total, "
                    "searched in floating point, lands in an empty slot"),
    Bug("search_clamps_only_masses", LESSON, "test_sumtree_prefix_sum",
        {"sumtree_find_prefix_sum": SEARCH_CLAMPS_ONLY_MASSES},
        description="masses clamped below the total but slots not clamped to capacity - 1: "
                    "float sums carry a mass past the last slot"),
    Bug("per_loop_never_stops_unless_terminated", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_NEVER_STOPS_UNLESS_TERMINATED},
        description="while True, stopping only when terminated: an episode that is "
                    "truncated never ends (the corridor stops it past its time limit)"),
    Bug("per_loop_stops_only_when_terminated", LESSON, "test_per_loop",
        {"play_and_train_with_per": LOOP_STOPS_ONLY_WHEN_TERMINATED},
        description="ignores truncation: an episode cut by the time limit runs on to t_max"),
    Bug("alpha_zero_refused", LESSON, "test_importance_weights",
        {"per_class": ALPHA_ZERO_REFUSED},
        description="alpha=0 (uniform replay, the other end of the scale) raises ValueError"),
]
