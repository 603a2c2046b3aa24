"""Buggy answers to lesson 07 (TD targets, the weighted Huber loss, the DQN step, the
target network's schedule)."""

from . import Bug, edited, edits_of

LESSON = "07_neural_replay"

_edit = edits_of(LESSON)

# --- td_targets -------------------------------------------------------------------------

BOOTSTRAPS_TERMINATED = _edit("td_targets", (
    "bootstrap = np.where(np.asarray(terminated, dtype=bool), 0.0, next_values)",
    "bootstrap = next_values  # the next state's value, always"))

MEAN_OVER_ACTIONS = _edit("td_targets", (
    "target_network.predict(next_observations).max(axis=1)",
    "target_network.predict(next_observations).mean(axis=1)"))

DISCOUNTS_THE_REWARD = _edit("td_targets", (
    "return np.asarray(rewards, dtype=np.float64) + discount * bootstrap",
    "return discount * (np.asarray(rewards, dtype=np.float64) + bootstrap)"))

STOPS_THE_WHOLE_BATCH = _edit("td_targets", (
    "bootstrap = np.where(np.asarray(terminated, dtype=bool), 0.0, next_values)",
    "bootstrap = 0.0 if np.any(terminated) else next_values  # lesson 01's `if terminated`"))

KEEPS_THE_ACTION_AXIS = _edit("td_targets", (
    "target_network.predict(next_observations).max(axis=1)",
    "target_network.predict(next_observations).max(axis=1, keepdims=True)"))

ZERO_DISCOUNT_AS_MISSING = _edit("td_targets", (
    "    next_values = target_network.predict",
    "    discount = discount or 0.99  # the usual discount when none is given\n"
    "    next_values = target_network.predict"))

# --- the loss and its gradient --------------------------------------------------------------

LOSS_IGNORES_WEIGHTS = _edit("huber_loss", (
    "return float(np.mean(np.asarray(weights, dtype=np.float64) * per_row))",
    "return float(np.mean(per_row))"))
GRADIENT_IGNORES_WEIGHTS = _edit("huber_loss_gradient", (
    "gradient[rows, actions] = np.asarray(weights) * np.clip(errors, -1.0, 1.0) / len(rows)",
    "gradient[rows, actions] = np.clip(errors, -1.0, 1.0) / len(rows)"))

SQUARED_LOSS = _edit("huber_loss", (
    "per_row = np.where(absolute <= 1.0, 0.5 * errors ** 2, absolute - 0.5)",
    "per_row = 0.5 * errors ** 2"))
SQUARED_LOSS_GRADIENT = _edit("huber_loss_gradient", (
    "np.clip(errors, -1.0, 1.0)", "errors"))

SUMMED_LOSS = _edit("huber_loss", (
    "return float(np.mean(np.asarray(weights, dtype=np.float64) * per_row))",
    "return float(np.sum(np.asarray(weights, dtype=np.float64) * per_row))"))
SUMMED_GRADIENT = _edit("huber_loss_gradient", (
    "np.clip(errors, -1.0, 1.0) / len(rows)", "np.clip(errors, -1.0, 1.0)"))

GRADIENT_SIGN_FLIPPED = _edit("huber_loss_gradient", (
    "errors = q_values[rows, actions] - targets", "errors = targets - q_values[rows, actions]"))

GRADIENT_NOT_CLIPPED = SQUARED_LOSS_GRADIENT

LOSS_PER_ROW = _edit("huber_loss", (
    "return float(np.mean(np.asarray(weights, dtype=np.float64) * per_row))",
    "return np.asarray(weights, dtype=np.float64) * per_row  # each row's weighted loss"))

LOSS_RESCALES_WEIGHTS = _edit("huber_loss", (
    "return float(np.mean(np.asarray(weights, dtype=np.float64) * per_row))",
    "weights = np.asarray(weights, dtype=np.float64)\n"
    "    return float(np.mean(weights / weights.max() * per_row))  # the largest weight 1"))
GRADIENT_RESCALES_WEIGHTS = _edit("huber_loss_gradient", (
    "np.asarray(weights) * np.clip", "np.asarray(weights) / np.max(weights) * np.clip"))

LOSS_OVER_THE_WEIGHTS = _edit("huber_loss", (
    "return float(np.mean(np.asarray(weights, dtype=np.float64) * per_row))",
    "return float(np.sum(weights * per_row) / np.sum(weights))  # a weighted average"))
GRADIENT_OVER_THE_WEIGHTS = _edit("huber_loss_gradient", (
    "np.clip(errors, -1.0, 1.0) / len(rows)", "np.clip(errors, -1.0, 1.0) / np.sum(weights)"))

GRADIENT_DIVIDES_BY_THE_ERROR = _edit("huber_loss_gradient", (
    "np.clip(errors, -1.0, 1.0) / len(rows)",
    "np.minimum(np.abs(errors), 1.0) * errors / np.abs(errors) / len(rows)  # size * sign"))

GRADIENT_PER_ROW = _edit("huber_loss_gradient", (
    """\
    gradient = np.zeros_like(q_values)
    gradient[rows, actions] = np.asarray(weights) * np.clip(errors, -1.0, 1.0) / len(rows)
    return gradient""", """\
    return np.asarray(weights) * np.clip(errors, -1.0, 1.0) / len(rows)  # one per row"""))

GRADIENT_AT_EVERY_ACTION = _edit("huber_loss_gradient", (
    "gradient[rows, actions] = np.asarray(weights) * np.clip(errors, -1.0, 1.0) / len(rows)",
    "gradient = (np.asarray(weights)[:, None] * np.clip(q_values - np.asarray(targets)[:, None],"
    " -1.0, 1.0) / len(rows))"))

GRADIENT_NOT_AVERAGED = SUMMED_GRADIENT

# --- the step ----------------------------------------------------------------------------------

TARGETS_FROM_ONLINE = _edit("dqn_step", (
    "targets = td_targets(target, rewards, next_observations, terminated, discount)",
    "targets = td_targets(online, rewards, next_observations, terminated, discount)"))

STEP_IGNORES_WEIGHTS = _edit("dqn_step", (
    "gradient = huber_loss_gradient(q_values, actions, targets, weights)",
    "gradient = huber_loss_gradient(q_values, actions, targets, np.ones(len(actions)))"))

STEP_FORGETS_PRIORITIES = _edit("dqn_step", (
    """\
    if beta is not None:
        replay.update_priorities(slots, td_errors)
""", ""))

TD_ERRORS_AFTER_THE_STEP = _edit("dqn_step", (
    """\
    optimizer.step(online.gradients(observations, gradient))
""", """\
    optimizer.step(online.gradients(observations, gradient))
    td_errors = targets - online.predict(observations)[np.arange(len(actions)), actions]
"""))

WEIGHTS_FROM_BATCH_SIZE = _edit("dqn_step", (
    "weights = np.ones(len(actions))", "weights = np.ones(batch_size)"))

ZERO_BETA_AS_UNIFORM = _edit("dqn_step", ("if beta is None:", "if not beta:"),
                             ("if beta is not None:", "if beta:"))

UNIFORM_SAMPLE_GIVEN_BETA = _edit("dqn_step", (
    "replay.sample(batch_size)\n", "replay.sample(batch_size, beta)  # beta is None here\n"))

STEP_SYNCS_THE_TARGET = _edit("dqn_step", (
    """\
    optimizer.step(online.gradients(observations, gradient))
""", """\
    optimizer.step(online.gradients(observations, gradient))
    target.load_parameters(online.parameters())  # keep the targets fresh
"""))

RETURNS_Q_MINUS_TARGETS = _edit("dqn_step", (
    "td_errors = targets - q_values[np.arange(len(actions)), actions]",
    "td_errors = q_values[np.arange(len(actions)), actions] - targets"))

NEGATES_THE_GRADIENTS = _edit("dqn_step", (
    "optimizer.step(online.gradients(observations, gradient))",
    "optimizer.step([-g for g in online.gradients(observations, gradient)])  # descend"))

# --- the schedule ------------------------------------------------------------------------------

SYNCS_EVERY_STEP = _edit("sync_target", ("if step % period == 0:", "if True:  # keep it fresh"))

SHARES_ARRAYS = _edit("sync_target", (
    "target.load_parameters(online.parameters())",
    "target.weights, target.biases = online.weights, online.biases"))

SYNC_OFF_BY_ONE = _edit("sync_target", ("if step % period == 0:", "if step % period == 1:"))

COPIES_THE_WRONG_WAY = _edit("sync_target", (
    "target.load_parameters(online.parameters())",
    "online.load_parameters(target.parameters())"))

SAYS_NOTHING_WHEN_IDLE = _edit("sync_target", ("""\
        return True
    return False""", """\
        return True"""))

# A bug in td_targets, huber_loss or huber_loss_gradient costs their own checks only: the
# step's checks judge dqn_step against what a correct step does with the student's own
# parts (checks/lesson07_neural_replay.py), so a correct dqn_step is not blamed for them.
BUGS = [
    Bug("targets_bootstrap_terminated", LESSON, "test_td_targets",
        {"td_targets": BOOTSTRAPS_TERMINATED},
        description="terminated rows still add discount * max Q(s')",
        rule="no-bootstrap-when-terminated", kind="past-terminal"),
    Bug("targets_mean_over_actions", LESSON, "test_td_targets",
        {"td_targets": MEAN_OVER_ACTIONS},
        description="bootstraps from the mean of the next Q-values, not the max",
        rule="target-is-reward-plus-discounted-max", kind="wrong-formula"),
    Bug("targets_discount_the_reward", LESSON, "test_td_targets",
        {"td_targets": DISCOUNTS_THE_REWARD},
        description="discount * (r + max Q) instead of r + discount * max Q",
        rule="target-is-reward-plus-discounted-max", kind="wrong-formula"),
    Bug("loss_ignores_weights", LESSON, "test_huber_loss",
        {"huber_loss": LOSS_IGNORES_WEIGHTS, "huber_loss_gradient": GRADIENT_IGNORES_WEIGHTS},
        description="loss and gradient without the importance weights (consistent)",
        rule="loss-uses-the-weights-given", kind="wrong-formula"),
    Bug("loss_is_squared_error", LESSON, "test_huber_loss",
        {"huber_loss": SQUARED_LOSS, "huber_loss_gradient": SQUARED_LOSS_GRADIENT},
        description="half the squared error, and its gradient: no clipping",
        rule="weighted-huber-loss", kind="wrong-formula"),
    Bug("loss_summed_over_the_batch", LESSON, "test_huber_loss",
        {"huber_loss": SUMMED_LOSS, "huber_loss_gradient": SUMMED_GRADIENT},
        description="sums the batch instead of averaging (loss and gradient agree)",
        rule="loss-is-a-mean", kind="wrong-formula"),
    Bug("gradient_sign_flipped", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_SIGN_FLIPPED},
        description="d loss / dQ with the sign of y - Q: gradient ascent",
        rule="gradient-of-your-loss", kind="wrong-formula"),
    Bug("gradient_not_clipped", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_NOT_CLIPPED},
        description="the Huber loss, but the squared error's gradient",
        rule="gradient-clipped", kind="wrong-formula"),
    Bug("gradient_not_averaged", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_NOT_AVERAGED},
        description="the loss is a mean, the gradient a sum",
        rule="gradient-divided-by-b", kind="wrong-formula"),
    Bug("gradient_ignores_weights", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_IGNORES_WEIGHTS},
        description="the loss is weighted, its gradient is not",
        rule="gradient-weighted", kind="wrong-formula"),
    Bug("step_targets_from_online_network", LESSON, "test_dqn_step",
        {"dqn_step": TARGETS_FROM_ONLINE}, also_fails=("test_dqn_step_prioritized",),
        description="targets computed with the online network, not the target network",
        rule="targets-from-the-target-network", kind="wrong-source"),
    Bug("step_ignores_importance_weights", LESSON, "test_dqn_step_prioritized",
        {"dqn_step": STEP_IGNORES_WEIGHTS},
        description="a prioritized batch's weights never reach the loss",
        rule="step-uses-the-weights", kind="wrong-formula"),
    Bug("step_forgets_priorities", LESSON, "test_dqn_step_prioritized",
        {"dqn_step": STEP_FORGETS_PRIORITIES},
        description="never calls update_priorities",
        rule="priorities-fed-back", kind="protocol"),
    Bug("step_td_errors_after_the_step", LESSON, "test_dqn_step",
        {"dqn_step": TD_ERRORS_AFTER_THE_STEP}, also_fails=("test_dqn_step_prioritized",),
        description="returns (and prioritizes by) TD errors of the updated network",
        rule="td-errors-before-the-step", kind="wrong-source"),
    Bug("no_target_network", LESSON, "test_dqn_learning", {"sync_target": SYNCS_EVERY_STEP},
        also_fails=("test_target_sync",),
        description="syncs at every step: the targets chase the online network",
        rule="dqn-learns-cartpole", kind="protocol"),
    Bug("target_shares_online_arrays", LESSON, "test_target_sync",
        {"sync_target": SHARES_ARRAYS},
        description="the target holds the online network's arrays, not a copy",
        rule="target-is-a-copy", kind="mutates-input"),
    Bug("sync_off_by_one", LESSON, "test_target_sync", {"sync_target": SYNC_OFF_BY_ONE},
        description="syncs at steps 1, period + 1, ...; never with period 1",
        rule="sync-at-multiples-of-the-period", kind="boundary"),
    Bug("sync_copies_the_wrong_way", LESSON, "test_target_sync",
        {"sync_target": COPIES_THE_WRONG_WAY},
        description="loads the target's parameters into the online network",
        rule="online-into-target", kind="wrong-source"),
    # the semantic gaps: each a sentence of the lesson that no check used to test
    Bug("targets_whole_batch_stops_bootstrapping", LESSON, "test_td_targets",
        {"td_targets": STOPS_THE_WHOLE_BATCH},
        description="one terminated row stops the bootstrap of every row (lesson 01's scalar "
                    "`if terminated` on a batch)",
        rule="only-terminated-rows-stop", kind="past-terminal"),
    Bug("targets_keep_the_action_axis", LESSON, "test_td_targets",
        {"td_targets": KEEPS_THE_ACTION_AXIS},
        also_fails=("test_dqn_step", "test_dqn_step_prioritized"),  # (batch, batch) targets
        description="max with keepdims: (batch, 1) + (batch,) broadcasts to (batch, batch)",
        rule="result-types", kind="protocol"),
    Bug("targets_zero_discount_as_missing", LESSON, "test_td_targets",
        {"td_targets": ZERO_DISCOUNT_AS_MISSING},
        description="`discount or 0.99`: a discount of 0 becomes 0.99",
        rule="discount-zero-is-a-discount", kind="falsy-as-missing"),
    Bug("loss_per_row", LESSON, "test_huber_loss", {"huber_loss": LOSS_PER_ROW},
        also_fails=("test_huber_gradient",),
        description="returns each row's weighted loss, not their mean",
        rule="result-types", kind="protocol"),
    Bug("loss_rescales_the_weights", LESSON, "test_huber_loss",
        {"huber_loss": LOSS_RESCALES_WEIGHTS, "huber_loss_gradient": GRADIENT_RESCALES_WEIGHTS},
        description="divides the weights by their largest again (loss and gradient agree)",
        rule="loss-uses-the-weights-given", kind="wrong-formula"),
    Bug("loss_divided_by_the_weights", LESSON, "test_huber_loss",
        {"huber_loss": LOSS_OVER_THE_WEIGHTS, "huber_loss_gradient": GRADIENT_OVER_THE_WEIGHTS},
        description="a weighted average (divided by the sum of the weights), not (1/B) * sum",
        rule="loss-is-a-mean", kind="wrong-formula"),
    Bug("gradient_divides_by_the_error", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_DIVIDES_BY_THE_ERROR},
        description="min(|error|, 1) * error / |error|: 0 / 0 where the TD error is 0",
        rule="gradient-at-every-error", kind="boundary"),
    Bug("gradient_one_number_per_row", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_PER_ROW},
        also_fails=("test_dqn_step", "test_dqn_step_prioritized"),
        description="returns the gradient at the actions taken, shape (batch,)",
        rule="result-types", kind="protocol"),
    Bug("gradient_at_every_action", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_AT_EVERY_ACTION},
        description="every action's Q-value pulled towards the row's target",
        rule="action-taken-only", kind="wrong-formula"),
    Bug("step_weights_from_batch_size", LESSON, "test_dqn_step",
        {"dqn_step": WEIGHTS_FROM_BATCH_SIZE},
        description="np.ones(batch_size): breaks on a batch of another size",
        rule="rows-from-the-batch", kind="size-from-argument"),
    Bug("step_zero_beta_as_uniform", LESSON, "test_dqn_step_prioritized",
        {"dqn_step": ZERO_BETA_AS_UNIFORM},
        description="`if beta:` takes beta=0 for a uniform buffer (crashes PER without weights)",
        rule="beta-zero-is-prioritized", kind="falsy-as-missing"),
    Bug("step_uniform_sample_given_beta", LESSON, "test_dqn_step",
        {"dqn_step": UNIFORM_SAMPLE_GIVEN_BETA},
        description="replay.sample(batch_size, None) on a uniform buffer, whose sample takes "
                    "the batch size alone",
        rule="step-samples-one-batch", kind="protocol"),
    Bug("step_syncs_the_target", LESSON, "test_dqn_step", {"dqn_step": STEP_SYNCS_THE_TARGET},
        also_fails=("test_dqn_step_prioritized",),
        description="copies the online network into the target after every step",
        rule="networks-change-only-by-the-optimizer", kind="protocol"),
    Bug("step_returns_q_minus_targets", LESSON, "test_dqn_step",
        {"dqn_step": RETURNS_Q_MINUS_TARGETS}, also_fails=("test_dqn_step_prioritized",),
        description="returns Q(s, a) - targets: the TD errors' sign flipped",
        rule="step-returns-td-errors", kind="wrong-formula"),
    Bug("step_negates_the_gradients", LESSON, "test_dqn_step",
        {"dqn_step": NEGATES_THE_GRADIENTS}, also_fails=("test_dqn_step_prioritized",),
        description="hands the optimizer minus the gradients (it already descends)",
        rule="one-optimizer-step", kind="wrong-formula"),
    Bug("sync_returns_none_when_idle", LESSON, "test_target_sync",
        {"sync_target": SAYS_NOTHING_WHEN_IDLE},
        description="returns True when it syncs, nothing otherwise",
        rule="result-types", kind="protocol"),
]

# --- what every call promises (checks.contracts) ------------------------------------------

TARGETS_BUILT_IN_THE_REWARDS = _edit("td_targets", (
    "    return np.asarray(rewards, dtype=np.float64) + discount * bootstrap",
    "    targets = np.asarray(rewards, dtype=np.float64)  # float64 already: no copy\n"
    "    targets += discount * bootstrap\n"
    "    return targets"))

DISCOUNT_MUST_BE_A_FLOAT = _edit("td_targets", (
    "    next_values = target_network.predict(next_observations).max(axis=1)\n",
    "    if not isinstance(discount, float) or isinstance(discount, np.floating):\n"
    "        raise TypeError(f\"discount must be a float, got {type(discount).__name__}\")\n"
    "    next_values = target_network.predict(next_observations).max(axis=1)\n"))

SYNC_ALWAYS_SAYS_YES = _edit("sync_target", ("    return False", "    return True"))

BUGS = (*BUGS,
    Bug("targets_built_in_the_rewards", LESSON, "test_td_targets",
        {"td_targets": TARGETS_BUILT_IN_THE_REWARDS},
        description="adds the bootstrap to the caller's float64 rewards in place",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("discount_must_be_a_float", LESSON, "test_td_targets",
        {"td_targets": DISCOUNT_MUST_BE_A_FLOAT},
        description="refuses a discount that is an np.float64 (numpy's float)",
        rule="numpy-scalars", kind="protocol"),
    Bug("sync_always_says_yes", LESSON, "test_target_sync",
        {"sync_target": SYNC_ALWAYS_SAYS_YES},
        description="returns True at every step, synced or not",
        rule="sync-returns-whether-it-synced", kind="protocol"),
)

STEP_DECAYS_THE_LEARNING_RATE = _edit("dqn_step", (
    "    optimizer.step(online.gradients(observations, gradient))",
    "    optimizer.learning_rate *= 0.9999  # anneal the step size\n"
    "    optimizer.step(online.gradients(observations, gradient))"))

BUGS = (*BUGS,
    Bug("step_decays_the_learning_rate", LESSON, "test_dqn_step",
        {"dqn_step": STEP_DECAYS_THE_LEARNING_RATE},
        also_fails=("test_dqn_step_prioritized",),
        description="anneals the lent optimizer's learning rate, which it may only read",
        rule="lent-as-stated", kind="protocol"),
)


# --- blind round 1: wrong answers written from the lesson text alone ----------------

GRADIENT_KEEPS_INTEGER_DTYPE_HUBER_LOSS_GRADIENT = """\
#| export
def huber_loss_gradient(q_values, actions, targets, weights):
    \"\"\"d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken.\"\"\"
    q_values = np.asarray(q_values)
    rows = np.arange(len(actions))
    errors = q_values[rows, actions] - targets
    gradient = np.zeros_like(q_values)
    gradient[rows, actions] = np.asarray(weights) * np.clip(errors, -1.0, 1.0) / len(rows)
    return gradient
"""

STEP_SKIPS_A_SMALL_BUFFER_DQN_STEP = """\
#| export
def dqn_step(online, target, optimizer, replay, batch_size, discount, beta=None):
    \"\"\"One DQN gradient step on a batch from ``replay`` (prioritized when ``beta`` is
    given); returns the batch's TD errors, targets - Q(s, a), before the step.\"\"\"
    if len(replay) < batch_size:
        return None  # not enough experience yet
    if beta is None:
        observations, actions, rewards, next_observations, terminated = \\
            replay.sample(batch_size)
        weights = np.ones(len(actions))
    else:
        (observations, actions, rewards, next_observations, terminated, weights,
         slots) = replay.sample(batch_size, beta)
    actions = np.asarray(actions, dtype=np.int64)
    targets = td_targets(target, rewards, next_observations, terminated, discount)
    q_values = online.predict(observations)
    td_errors = targets - q_values[np.arange(len(actions)), actions]
    gradient = huber_loss_gradient(q_values, actions, targets, weights)
    optimizer.step(online.gradients(observations, gradient))
    if beta is not None:
        replay.update_priorities(slots, td_errors)
    return td_errors
"""

BUGS = (*BUGS,
    Bug("gradient_keeps_integer_dtype", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_KEEPS_INTEGER_DTYPE_HUBER_LOSS_GRADIENT},
        description="np.zeros_like(np.asarray(q_values)) is an int array when the Q-values are "
                    "ints: the gradient is truncated to 0",
        rule="result-types", kind="protocol"),
    Bug("step_skips_a_small_buffer", LESSON, "test_dqn_step",
        {"dqn_step": STEP_SKIPS_A_SMALL_BUFFER_DQN_STEP},
        also_fails=("test_dqn_step_prioritized",),
        description="returns None without sampling or stepping when the buffer holds fewer than "
                    "batch_size transitions",
        rule="result-types", kind="boundary"),
)


# --- blind round 2: wrong answers written from the lesson text alone ----------------

TARGETS_IN_A_COPY_OF_INTEGER_REWARDS_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    targets = np.array(rewards)
    alive = ~np.asarray(terminated, dtype=bool)
    next_values = target_network.predict(next_observations).max(axis=1)
    targets[alive] = targets[alive] + discount * next_values[alive]
    return targets
"""

TARGETS_DISCOUNT_ZERO_RETURNS_THE_REWARDS_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    if discount == 0:
        return rewards  # no bootstrap at all: the targets are the rewards
    next_values = target_network.predict(next_observations).max(axis=1)
    bootstrap = np.where(np.asarray(terminated, dtype=bool), 0.0, next_values)
    return np.asarray(rewards, dtype=np.float64) + discount * bootstrap
"""

BUGS = (*BUGS,
    Bug("targets_in_a_copy_of_integer_rewards", LESSON, "test_td_targets",
        {"td_targets": TARGETS_IN_A_COPY_OF_INTEGER_REWARDS_TD_TARGETS},
        description="np.array(rewards) then assigns the bootstrapped rows: integer rewards give an"
                    " int array, the bootstrap truncated",
        rule="result-types", kind="protocol"),
    Bug("targets_discount_zero_returns_the_rewards", LESSON, "test_td_targets",
        {"td_targets": TARGETS_DISCOUNT_ZERO_RETURNS_THE_REWARDS_TD_TARGETS},
        description="with discount 0 returns `rewards` itself: the caller's list (or int array, or"
                    " the very same array object)",
        rule="inputs-untouched", kind="mutates-input"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

TARGETS_SQUEEZED_BATCH_OF_ONE_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    next_values = target_network.predict(next_observations).max(axis=1, keepdims=True)
    rewards = np.asarray(rewards, dtype=np.float64).reshape(-1, 1)
    alive = 1.0 - np.asarray(terminated, dtype=np.float64).reshape(-1, 1)
    return np.squeeze(rewards + discount * alive * next_values)
"""

BUGS = (*BUGS,
    Bug("targets_squeezed_batch_of_one", LESSON, "test_td_targets",
        {"td_targets": TARGETS_SQUEEZED_BATCH_OF_ONE_TD_TARGETS},
        description="works on column vectors and squeezes at the end: a batch of one row comes back as a 0-d array, shape ()",
        rule="result-types", kind="boundary"),
)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

BUGS = (*BUGS,

)


# --- blind round 7: wrong answers written from the lesson text alone ----------------

TARGETS_REFUSE_DISCOUNT_ONE_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    if not 0 <= discount < 1:
        raise ValueError(f"discount must be in [0, 1), got {discount}")
    next_values = target_network.predict(next_observations).max(axis=1)
    bootstrap = np.where(np.asarray(terminated, dtype=bool), 0.0, next_values)
    return np.asarray(rewards, dtype=np.float64) + discount * bootstrap
"""

BUGS = (*BUGS,
    Bug("targets_refuse_discount_one", LESSON, "test_td_targets",
        {"td_targets": TARGETS_REFUSE_DISCOUNT_ONE_TD_TARGETS},
        description="raises ValueError unless 0 <= discount < 1: an undiscounted γ = 1 is refused",
        rule="target-is-reward-plus-discounted-max", kind="accidental-refusal"),
)


# --- blind round 8: wrong answers written from the lesson text alone ----------------

TARGETS_MEMOIZED_ACROSS_SYNCS_TD_TARGETS = """\
#| export
import numpy as np

_FROZEN_VALUES = {}  # the target network is frozen between syncs: remember its values


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    next_observations = np.asarray(next_observations, dtype=np.float64)
    key = (id(target_network), next_observations.tobytes())
    if key not in _FROZEN_VALUES:
        _FROZEN_VALUES[key] = target_network.predict(next_observations).max(axis=1)
    next_values = _FROZEN_VALUES[key]
    bootstrap = np.where(np.asarray(terminated, dtype=bool), 0.0, next_values)
    return np.asarray(rewards, dtype=np.float64) + discount * bootstrap
"""

BUGS = (*BUGS,
    Bug("targets_memoized_across_syncs", LESSON, "test_td_targets",
        {"td_targets": TARGETS_MEMOIZED_ACROSS_SYNCS_TD_TARGETS},
        description="memoizes the target network's max Q per (network id, next observations), assuming the target is frozen: after sync_target loads new parameters the old values come back",
        rule="target-is-reward-plus-discounted-max", kind="wrong-source"),
)


# --- blind round 11: wrong answers written from the lesson text alone ----------------

TARGETS_ASSUME_TWO_ACTIONS_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    q_next = target_network.predict(next_observations)
    next_values = np.maximum(q_next[:, 0], q_next[:, 1])
    bootstrap = np.where(np.asarray(terminated, dtype=bool), 0.0, next_values)
    return np.asarray(rewards, dtype=np.float64) + discount * bootstrap
"""

BUGS = (*BUGS,
    Bug("targets_assume_two_actions", LESSON, "test_td_targets",
        {"td_targets": TARGETS_ASSUME_TWO_ACTIONS_TD_TARGETS},
        description="np.maximum(Q[:, 0], Q[:, 1]): with a network of three or more actions the other actions are ignored, silently",
        rule="target-is-reward-plus-discounted-max", kind="size-from-argument"),
)


# --- blind round 12: wrong answers written from the lesson text alone ----------------

TARGETS_CAPPED_AT_THE_VALUE_BOUND_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    next_values = target_network.predict(next_observations).max(axis=1)
    if discount < 1:
        # no discounted value can exceed 1 / (1 - discount): keep runaway values out
        next_values = np.minimum(next_values, 1.0 / (1.0 - discount))
    bootstrap = np.where(np.asarray(terminated, dtype=bool), 0.0, next_values)
    return np.asarray(rewards, dtype=np.float64) + discount * bootstrap
"""

SYNC_REPORTS_A_CHANGE_NOT_A_SYNC_SYNC_TARGET = """\
#| export
def sync_target(online, target, step, period):
    \"\"\"Copy the online network's parameters into the target at every multiple of
    ``period``; return whether it did.\"\"\"
    if step % period != 0:
        return False
    before = target.parameters()
    target.load_parameters(online.parameters())
    return any(not np.array_equal(old, new) for old, new in zip(before, target.parameters()))
"""

BUGS = (*BUGS,
    Bug("targets_capped_at_the_value_bound", LESSON, "test_td_targets",
        {"td_targets": TARGETS_CAPPED_AT_THE_VALUE_BOUND_TD_TARGETS},
        description="caps max Q̂(s', a') at 1/(1 - discount) ('no return can make a discounted value exceed 1/(1 − γ)'), a bound that holds only for rewards of at most 1",
        rule="target-is-reward-plus-discounted-max", kind="wrong-formula"),
    Bug("sync_reports_a_change_not_a_sync", LESSON, "test_target_sync",
        {"sync_target": SYNC_REPORTS_A_CHANGE_NOT_A_SYNC_SYNC_TARGET},
        description="syncs at the multiples but returns whether the copy changed any parameter: False at a multiple of period when the target already equalled the online network",
        rule="sync-returns-whether-it-synced", kind="protocol"),
)


# --- blind round 13: wrong answers written from the lesson text alone ----------------

GRADIENT_ONE_HOT_SIZED_BY_THE_ACTIONS_HUBER_LOSS_GRADIENT = """\
#| export
def huber_loss_gradient(q_values, actions, targets, weights):
    \"\"\"d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken.\"\"\"
    actions = np.asarray(actions)
    rows = np.arange(len(actions))
    errors = np.asarray(q_values, dtype=np.float64)[rows, actions] - targets
    per_row = np.asarray(weights, dtype=np.float64) * np.clip(errors, -1.0, 1.0) / len(actions)
    one_hot = np.eye(actions.max() + 1)[actions]  # 1 at the action taken
    return one_hot * per_row[:, None]
"""

SYNC_FLOAT_DIVISION_MULTIPLE_TEST_SYNC_TARGET = """\
#| export
def sync_target(online, target, step, period):
    \"\"\"Copy the online network's parameters into the target at every multiple of
    ``period``; return whether it did.\"\"\"
    if (step / period).is_integer():
        target.load_parameters(online.parameters())
        return True
    return False
"""

BUGS = (*BUGS,
    Bug("gradient_one_hot_sized_by_the_actions", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_ONE_HOT_SIZED_BY_THE_ACTIONS_HUBER_LOSS_GRADIENT},
        description="np.eye(actions.max() + 1)[actions] * per-row values: a batch that never takes the last action gives a (batch, max action + 1) array, narrower than the Q-values",
        rule="result-types", kind="size-from-argument"),
    Bug("sync_float_division_multiple_test", LESSON, "test_target_sync",
        {"sync_target": SYNC_FLOAT_DIVISION_MULTIPLE_TEST_SYNC_TARGET},
        description="`(step / period).is_integer()`: exact for small steps, but past 2**53 the quotient is rounded to an integer, so e.g. step 10**16 + 1 with period 2 syncs (and returns True)",
        rule="sync-at-multiples-of-the-period", kind="boundary"),
)


# --- blind round 14: wrong answers written from the lesson text alone ----------------

LOSS_COUNTS_ONLY_WEIGHTED_ROWS_HUBER_LOSS = """\
#| export
def huber_loss(q_values, actions, targets, weights):
    \"\"\"mean over the batch of weights[i] * huber(q_values[i, actions[i]] - targets[i]).\"\"\"
    weights = np.asarray(weights, dtype=np.float64)
    rows = np.arange(len(actions))
    errors = np.asarray(q_values, dtype=np.float64)[rows, actions] - targets
    absolute = np.abs(errors)
    per_row = np.where(absolute <= 1.0, 0.5 * errors ** 2, absolute - 0.5)
    counted = np.count_nonzero(weights)  # rows of weight 0 take no part in the batch
    return float(np.sum(weights * per_row) / counted)
"""

LOSS_COUNTS_ONLY_WEIGHTED_ROWS_HUBER_LOSS_GRADIENT = """\
#| export
def huber_loss_gradient(q_values, actions, targets, weights):
    \"\"\"d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken.\"\"\"
    q_values = np.asarray(q_values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    rows = np.arange(len(actions))
    errors = q_values[rows, actions] - targets
    gradient = np.zeros_like(q_values)
    gradient[rows, actions] = weights * np.clip(errors, -1.0, 1.0) / np.count_nonzero(weights)
    return gradient
"""

GRADIENT_BY_FINITE_DIFFERENCES_HUBER_LOSS_GRADIENT = """\
#| export
def huber_loss_gradient(q_values, actions, targets, weights):
    \"\"\"d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken.\"\"\"
    # the test checks against finite differences of the loss: take them directly
    q_values = np.array(q_values, dtype=np.float64)
    gradient = np.zeros_like(q_values)
    step = 1e-5
    for i, action in enumerate(actions):
        up, down = q_values.copy(), q_values.copy()
        up[i, action] += step
        down[i, action] -= step
        gradient[i, action] = (huber_loss(up, actions, targets, weights)
                               - huber_loss(down, actions, targets, weights)) / (2 * step)
    return gradient
"""

STEP_SKIPS_A_ZERO_LOSS_BATCH_DQN_STEP = """\
#| export
def dqn_step(online, target, optimizer, replay, batch_size, discount, beta=None):
    \"\"\"One DQN gradient step on a batch from ``replay`` (prioritized when ``beta`` is
    given); returns the batch's TD errors, targets - Q(s, a), before the step.\"\"\"
    if beta is None:
        observations, actions, rewards, next_observations, terminated = \\
            replay.sample(batch_size)
        weights = np.ones(len(actions))
    else:
        (observations, actions, rewards, next_observations, terminated, weights,
         slots) = replay.sample(batch_size, beta)
    actions = np.asarray(actions, dtype=np.int64)
    targets = td_targets(target, rewards, next_observations, terminated, discount)
    q_values = online.predict(observations)
    td_errors = targets - q_values[np.arange(len(actions)), actions]
    gradient = huber_loss_gradient(q_values, actions, targets, weights)
    if np.any(gradient):  # a batch the network already fits teaches nothing
        optimizer.step(online.gradients(observations, gradient))
    if beta is not None:
        replay.update_priorities(slots, td_errors)
    return td_errors
"""

SYNC_BITMASK_MODULO_SYNC_TARGET = """\
#| export
def sync_target(online, target, step, period):
    \"\"\"Copy the online network's parameters into the target at every multiple of
    ``period``; return whether it did.\"\"\"
    # step % period without a division: a mask of the low bits
    if step & (period - 1) == 0:
        target.load_parameters(online.parameters())
        return True
    return False
"""

BUGS = (*BUGS,
    Bug("loss_counts_only_weighted_rows", LESSON, "test_huber_loss",
        {"huber_loss": LOSS_COUNTS_ONLY_WEIGHTED_ROWS_HUBER_LOSS, "huber_loss_gradient": LOSS_COUNTS_ONLY_WEIGHTED_ROWS_HUBER_LOSS_GRADIENT},
        description="divides by the number of rows whose weight is not 0 ('a row of weight 0 is not in the batch'): larger loss and gradient when a weight is 0, nan when all are",
        rule="weighted-huber-loss", kind="size-from-argument"),
    Bug("gradient_by_finite_differences", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_BY_FINITE_DIFFERENCES_HUBER_LOSS_GRADIENT},
        description="differentiates huber_loss by central differences (h = 1e-5) at each (i, a_i): 1 - h/4 instead of 1 at |δ| = 1, wrong near the kink and noisy for large Q-values",
        rule="gradient-of-your-loss", kind="wrong-formula"),
    Bug("step_skips_a_zero_loss_batch", LESSON, "test_dqn_step",
        {"dqn_step": STEP_SKIPS_A_ZERO_LOSS_BATCH_DQN_STEP},
        description="calls optimizer.step only if some TD error is nonzero ('nothing to learn'): a batch the network already fits makes no step, so Adam's step count and later updates differ",
        rule="one-optimizer-step", kind="protocol"),
    Bug("sync_bitmask_modulo", LESSON, "test_target_sync",
        {"sync_target": SYNC_BITMASK_MODULO_SYNC_TARGET},
        description="tests step & (period - 1) == 0 (the ring-buffer trick): right for periods 1, 2, 4, ..., but with period 500 it syncs at steps 4, 8, 12, 512, 516, ... and never at 500 or 1000",
        rule="sync-at-multiples-of-the-period", kind="wrong-formula"),
)


# --- blind round 15: wrong answers written from the lesson text alone ----------------

TARGETS_FORWARD_PASS_WITHOUT_BIASES_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    # the forward pass by hand from the lent network's weights (ReLU between layers)
    activations = np.asarray(next_observations, dtype=np.float64)
    weights = target_network.weights
    for layer, weight in enumerate(weights):
        activations = activations @ weight
        if layer < len(weights) - 1:
            activations = np.maximum(activations, 0.0)
    next_values = activations.max(axis=1)
    bootstrap = np.where(np.asarray(terminated, dtype=bool), 0.0, next_values)
    return np.asarray(rewards, dtype=np.float64) + discount * bootstrap
"""

TARGETS_ALL_TERMINAL_BATCH_STAYS_INTEGER_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    next_values = target_network.predict(next_observations).max(axis=1)
    targets = []
    for reward, done, value in zip(rewards, terminated, next_values):
        if done:
            targets.append(reward)
        else:
            targets.append(reward + discount * value)
    return np.array(targets)
"""

LOSS_CLIPS_THE_WEIGHTS_TO_ONE_HUBER_LOSS = """\
#| export
def huber_loss(q_values, actions, targets, weights):
    \"\"\"mean over the batch of weights[i] * huber(q_values[i, actions[i]] - targets[i]).\"\"\"
    weights = np.clip(np.asarray(weights, dtype=np.float64), 0.0, 1.0)  # normalised: <= 1
    rows = np.arange(len(actions))
    errors = np.asarray(q_values, dtype=np.float64)[rows, actions] - targets
    absolute = np.abs(errors)
    per_row = np.where(absolute <= 1.0, 0.5 * errors ** 2, absolute - 0.5)
    return float(np.mean(weights * per_row))
"""

LOSS_CLIPS_THE_WEIGHTS_TO_ONE_HUBER_LOSS_GRADIENT = """\
#| export
def huber_loss_gradient(q_values, actions, targets, weights):
    \"\"\"d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken.\"\"\"
    weights = np.clip(np.asarray(weights, dtype=np.float64), 0.0, 1.0)  # normalised: <= 1
    q_values = np.asarray(q_values, dtype=np.float64)
    rows = np.arange(len(actions))
    errors = q_values[rows, actions] - targets
    gradient = np.zeros_like(q_values)
    gradient[rows, actions] = weights * np.clip(errors, -1.0, 1.0) / len(rows)
    return gradient
"""

GRADIENT_REUSES_ONE_RESULT_ARRAY_HUBER_LOSS_GRADIENT = """\
#| export
_GRADIENT_BUFFERS = {}  # one array per shape: dqn_step calls this thousands of times


def huber_loss_gradient(q_values, actions, targets, weights):
    \"\"\"d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken.\"\"\"
    q_values = np.asarray(q_values, dtype=np.float64)
    gradient = _GRADIENT_BUFFERS.get(q_values.shape)
    if gradient is None:
        gradient = _GRADIENT_BUFFERS[q_values.shape] = np.zeros(q_values.shape)
    gradient.fill(0.0)
    rows = np.arange(len(actions))
    errors = q_values[rows, actions] - targets
    gradient[rows, actions] = np.asarray(weights) * np.clip(errors, -1.0, 1.0) / len(rows)
    return gradient
"""

STEP_PRIORITIZED_ONLY_FOR_FLOAT_BETA_DQN_STEP = """\
#| export
def dqn_step(online, target, optimizer, replay, batch_size, discount, beta=None):
    \"\"\"One DQN gradient step on a batch from ``replay`` (prioritized when ``beta`` is
    given); returns the batch's TD errors, targets - Q(s, a), before the step.\"\"\"
    prioritized = isinstance(beta, float)  # beta is an exponent; None means uniform
    if prioritized:
        (observations, actions, rewards, next_observations, terminated, weights,
         slots) = replay.sample(batch_size, beta)
    else:
        observations, actions, rewards, next_observations, terminated = \\
            replay.sample(batch_size)
        weights = np.ones(len(actions))
    actions = np.asarray(actions, dtype=np.int64)
    targets = td_targets(target, rewards, next_observations, terminated, discount)
    q_values = online.predict(observations)
    td_errors = targets - q_values[np.arange(len(actions)), actions]
    gradient = huber_loss_gradient(q_values, actions, targets, weights)
    optimizer.step(online.gradients(observations, gradient))
    if prioritized:
        replay.update_priorities(slots, td_errors)
    return td_errors
"""

BUGS = (*BUGS,
    Bug("targets_forward_pass_without_biases", LESSON, "test_td_targets",
        {"td_targets": TARGETS_FORWARD_PASS_WITHOUT_BIASES_TD_TARGETS},
        description="computes Q̂(s', ·) itself from target_network.weights (ReLU between layers) but never adds the biases: right for a fresh network, wrong once training has moved the biases",
        rule="target-is-reward-plus-discounted-max", kind="wrong-formula"),
    Bug("targets_all_terminal_batch_stays_integer", LESSON, "test_td_targets",
        {"td_targets": TARGETS_ALL_TERMINAL_BATCH_STAYS_INTEGER_TD_TARGETS},
        description="builds the targets row by row in a list (lesson 01's update) and returns np.array(list): with integer rewards a batch whose rows all terminated gives an int64 array (mixed batches are float)",
        rule="result-types", kind="protocol"),
    Bug("loss_clips_the_weights_to_one", LESSON, "test_huber_loss",
        {"huber_loss": LOSS_CLIPS_THE_WEIGHTS_TO_ONE_HUBER_LOSS, "huber_loss_gradient": LOSS_CLIPS_THE_WEIGHTS_TO_ONE_HUBER_LOSS_GRADIENT},
        description="'normalised weights are at most 1': clips every weight to [0, 1] in the loss and in its gradient, so a weight above 1 counts as 1",
        rule="weighted-huber-loss", kind="wrong-formula"),
    Bug("gradient_reuses_one_result_array", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_REUSES_ONE_RESULT_ARRAY_HUBER_LOSS_GRADIENT},
        description="keeps one preallocated gradient array per shape (for the step's speed) and returns it each time: the array returned by the first call is zeroed and refilled by the next call",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("step_prioritized_only_for_float_beta", LESSON, "test_dqn_step_prioritized",
        {"dqn_step": STEP_PRIORITIZED_ONLY_FOR_FLOAT_BETA_DQN_STEP},
        description="takes the prioritized path only when isinstance(beta, float): beta=0 or beta=1 (ints) or an np.float32 beta sample a prioritized buffer as if uniform (TypeError: sample needs beta)",
        rule="beta-zero-is-prioritized", kind="falsy-as-missing"),
)


# --- blind round 16: wrong answers written from the lesson text alone ----------------

TARGETS_ZERO_NEXT_STATE_AS_TERMINAL_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    next_observations = np.asarray(next_observations, dtype=np.float64)
    # a terminal row has no next state: its s' is stored as zeros, or flagged
    no_next_state = np.asarray(terminated, dtype=bool) | ~next_observations.any(axis=1)
    next_values = target_network.predict(next_observations).max(axis=1)
    bootstrap = np.where(no_next_state, 0.0, next_values)
    return np.asarray(rewards, dtype=np.float64) + discount * bootstrap
"""

BUGS = (*BUGS,
    Bug("targets_zero_next_state_as_terminal", LESSON, "test_td_targets",
        {"td_targets": TARGETS_ZERO_NEXT_STATE_AS_TERMINAL_TD_TARGETS},
        description="also stops the bootstrap of every row whose next observation is all zeros (the PyTorch tutorial's padded terminal states): a continuing row whose s' is the origin gets y = r",
        rule="target-is-reward-plus-discounted-max", kind="wrong-source"),
)


# --- blind round 18: wrong answers written from the lesson text alone ----------------

LOSS_ZERO_WEIGHTS_AS_MISSING_HUBER_LOSS = edited(
    LESSON, 'huber_loss',
    ('    """mean over the batch of weights[i] * huber(q_values[i, actions[i]] - targets[i])."""\n',
     '    """mean over the batch of weights[i] * huber(q_values[i, actions[i]] - targets[i])."""\n    if weights is None or not np.any(weights):  # no weights: a uniform batch\n        weights = np.ones(len(actions))\n'),
    ('    return float(np.mean(np.asarray(weights, dtype=np.float64) * per_row))',
     '    return float(np.mean(np.asarray(weights, dtype=np.float64) * per_row))\n'))

LOSS_ZERO_WEIGHTS_AS_MISSING_HUBER_LOSS_GRADIENT = edited(
    LESSON, 'huber_loss_gradient',
    ('    """d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken."""\n',
     '    """d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken."""\n    if weights is None or not np.any(weights):  # no weights: a uniform batch\n        weights = np.ones(len(actions))\n'),
    ('    return gradient',
     '    return gradient\n'))

STEP_SQUEEZES_THE_ACTIONS_DQN_STEP = edited(
    LESSON, 'dqn_step',
    ('        weights = np.ones(len(actions))\n',
     '        weights = np.ones(len(rewards))\n'),
    ('    actions = np.asarray(actions, dtype=np.int64)\n',
     '    actions = np.asarray(actions).squeeze().astype(np.int64)  # (batch, 1) or (batch,) -> (batch,)\n'),
    ('    return td_errors',
     '    return td_errors\n'))

STEP_ZERO_DISCOUNT_AS_DEFAULT_DQN_STEP = edited(
    LESSON, 'dqn_step',
    ('    given); returns the batch\'s TD errors, targets - Q(s, a), before the step."""\n',
     '    given); returns the batch\'s TD errors, targets - Q(s, a), before the step."""\n    discount = discount or 0.99  # DQN\'s usual discount when none is given\n'),
    ('    return td_errors',
     '    return td_errors\n'))

BUGS = (*BUGS,
    Bug("loss_zero_weights_as_missing", LESSON, "test_huber_loss",
        {"huber_loss": LOSS_ZERO_WEIGHTS_AS_MISSING_HUBER_LOSS, "huber_loss_gradient": LOSS_ZERO_WEIGHTS_AS_MISSING_HUBER_LOSS_GRADIENT},
        description="`if not np.any(weights)` replaces all-zero weights by ones (as if none were given): loss and gradient of an unweighted batch instead of 0",
        rule="weighted-huber-loss", kind="falsy-as-missing"),
    Bug("gradient_zero_weights_as_missing", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": LOSS_ZERO_WEIGHTS_AS_MISSING_HUBER_LOSS_GRADIENT},
        description="the gradient alone replaces all-zero weights by ones: nonzero where the loss (0 for any Q-values) has none",
        rule="gradient-weighted", kind="falsy-as-missing"),
    Bug("step_squeezes_the_actions", LESSON, "test_dqn_step",
        {"dqn_step": STEP_SQUEEZES_THE_ACTIONS_DQN_STEP},
        description="np.asarray(actions).squeeze(): a batch of one row becomes a 0-d action and len() of it fails",
        rule="rows-from-the-batch", kind="boundary"),
    Bug("step_zero_discount_as_default", LESSON, "test_dqn_step",
        {"dqn_step": STEP_ZERO_DISCOUNT_AS_DEFAULT_DQN_STEP},
        description="`discount = discount or 0.99` in dqn_step: a discount of 0 trains with 0.99",
        rule="discount-zero-is-a-discount", kind="falsy-as-missing"),
)


# --- blind round 21: wrong answers written from the lesson text alone ----------------

TARGETS_BOOTSTRAP_TAKEN_BACK_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    next_values = target_network.predict(next_observations).max(axis=1)
    targets = np.asarray(rewards, dtype=np.float64) + discount * next_values
    ended = np.asarray(terminated, dtype=bool)
    targets[ended] -= discount * next_values[ended]  # no bootstrap where it terminated
    return targets
"""

STEP_KEEPS_PRIORITIES_OF_A_FITTED_BATCH_DQN_STEP = """\
#| export
def dqn_step(online, target, optimizer, replay, batch_size, discount, beta=None):
    \"\"\"One DQN gradient step on a batch from ``replay`` (prioritized when ``beta`` is
    given); returns the batch's TD errors, targets - Q(s, a), before the step.\"\"\"
    if beta is None:
        observations, actions, rewards, next_observations, terminated = \\
            replay.sample(batch_size)
        weights = np.ones(len(actions))
    else:
        (observations, actions, rewards, next_observations, terminated, weights,
         slots) = replay.sample(batch_size, beta)
    actions = np.asarray(actions, dtype=np.int64)
    targets = td_targets(target, rewards, next_observations, terminated, discount)
    q_values = online.predict(observations)
    td_errors = targets - q_values[np.arange(len(actions)), actions]
    gradient = huber_loss_gradient(q_values, actions, targets, weights)
    optimizer.step(online.gradients(observations, gradient))
    if beta is not None and np.any(td_errors):
        replay.update_priorities(slots, td_errors)
    return td_errors
"""

BUGS = (*BUGS,
    Bug("targets_bootstrap_taken_back", LESSON, "test_td_targets",
        {"td_targets": TARGETS_BOOTSTRAP_TAKEN_BACK_TD_TARGETS},
        description="bootstraps every row, then subtracts the bootstrap again from the "
                    "terminated rows: next to a huge Q-value (a diverging network) the "
                    "reward is lost to rounding, so a terminated row's target is not r",
        rule="no-bootstrap-when-terminated", kind="past-terminal"),
    Bug("step_keeps_priorities_of_a_fitted_batch", LESSON, "test_dqn_step_prioritized",
        {"dqn_step": STEP_KEEPS_PRIORITIES_OF_A_FITTED_BATCH_DQN_STEP},
        description="calls update_priorities only `if np.any(td_errors)`: a batch whose TD errors are all 0 keeps its old (high) priorities instead of epsilon",
        rule="priorities-fed-back", kind="falsy-as-missing"),
)


# --- blind round 24: wrong answers written from the lesson text alone ----------------

LOSS_SQUEEZES_A_BATCH_OF_ONE_HUBER_LOSS = """\
#| export
def huber_loss(q_values, actions, targets, weights):
    \"\"\"mean over the batch of weights[i] * huber(q_values[i, actions[i]] - targets[i]).\"\"\"
    actions = np.asarray(actions).squeeze()
    targets = np.asarray(targets, dtype=np.float64).squeeze()
    weights = np.asarray(weights, dtype=np.float64).squeeze()
    rows = np.arange(len(actions))
    errors = np.asarray(q_values, dtype=np.float64)[rows, actions] - targets
    absolute = np.abs(errors)
    per_row = np.where(absolute <= 1.0, 0.5 * errors ** 2, absolute - 0.5)
    return float(np.mean(weights * per_row))
"""

# the same mistake in the lesson's other functions that take a batch (its class)
GRADIENT_SQUEEZES_A_BATCH_OF_ONE_HUBER_LOSS_GRADIENT = _edit("huber_loss_gradient", (
    "    rows = np.arange(len(actions))\n",
    "    actions = np.asarray(actions).squeeze()  # (batch, 1) or (batch,) -> (batch,)\n"
    "    targets = np.asarray(targets, dtype=np.float64).squeeze()\n"
    "    weights = np.asarray(weights, dtype=np.float64).squeeze()\n"
    "    rows = np.arange(len(actions))\n"))

TARGETS_SQUEEZE_THEIR_INPUTS_TD_TARGETS = """\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    \"\"\"r + discount * max_a' Q_target(s', a') for each row; just r where terminated.\"\"\"
    rewards = np.asarray(rewards, dtype=np.float64).squeeze()  # (batch, 1) -> (batch,)
    terminated = np.asarray(terminated, dtype=bool).squeeze()
    best = target_network.predict(next_observations).max(axis=1)
    targets = np.empty(len(rewards))
    for row in range(len(rewards)):
        targets[row] = rewards[row] if terminated[row] else rewards[row] + discount * best[row]
    return targets
"""

BUGS = (*BUGS,
    Bug("loss_squeezes_a_batch_of_one", LESSON, "test_huber_loss",
        {"huber_loss": LOSS_SQUEEZES_A_BATCH_OF_ONE_HUBER_LOSS},
        description="squeezes actions, targets and weights (for column vectors): a batch of one row becomes 0-d and len() of it raises TypeError",
        rule="result-types", kind="boundary"),
    Bug("gradient_squeezes_a_batch_of_one", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_SQUEEZES_A_BATCH_OF_ONE_HUBER_LOSS_GRADIENT},
        description="huber_loss_gradient squeezes actions, targets and weights: on a batch of one row len() of the 0-d actions raises TypeError",
        rule="result-types", kind="boundary"),
    Bug("targets_squeeze_their_inputs", LESSON, "test_td_targets",
        {"td_targets": TARGETS_SQUEEZE_THEIR_INPUTS_TD_TARGETS},
        description="squeezes the rewards and flags, then loops over len(rewards): a batch of one row raises TypeError",
        rule="result-types", kind="boundary"),
)


# --- blind round 26: wrong answers written from the lesson text alone ----------------

STEP_REUSES_ONE_TD_ERROR_ARRAY_DQN_STEP = """\
#| export
def dqn_step(online, target, optimizer, replay, batch_size, discount, beta=None):
    \"\"\"One DQN gradient step on a batch from ``replay`` (prioritized when ``beta`` is
    given); returns the batch's TD errors, targets - Q(s, a), before the step.\"\"\"
    if beta is None:
        observations, actions, rewards, next_observations, terminated = \\
            replay.sample(batch_size)
        weights = np.ones(len(actions))
    else:
        (observations, actions, rewards, next_observations, terminated, weights,
         slots) = replay.sample(batch_size, beta)
    actions = np.asarray(actions, dtype=np.int64)
    targets = td_targets(target, rewards, next_observations, terminated, discount)
    q_values = online.predict(observations)
    buffers = dqn_step.__dict__.setdefault("td_error_buffers", {})
    td_errors = buffers.setdefault(len(actions), np.empty(len(actions)))
    np.subtract(targets, q_values[np.arange(len(actions)), actions], out=td_errors)
    gradient = huber_loss_gradient(q_values, actions, targets, weights)
    optimizer.step(online.gradients(observations, gradient))
    if beta is not None:
        replay.update_priorities(slots, td_errors)
    return td_errors
"""

BUGS = (*BUGS,
    Bug("step_reuses_one_td_error_array", LESSON, "test_dqn_step",
        {"dqn_step": STEP_REUSES_ONE_TD_ERROR_ARRAY_DQN_STEP},
        also_fails=("test_dqn_step_prioritized",),  # its three steps share one batch size
        description="keeps one preallocated TD-error array per batch size (for the step's speed) and returns it: the errors a caller got from one step are overwritten by the next step of the same batch size",
        rule="inputs-untouched", kind="mutates-input"),
)
