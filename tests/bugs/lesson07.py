"""Buggy answers to lesson 07 (TD targets, the weighted Huber loss, the DQN step, the
target network's schedule)."""

from . import Bug, edits_of

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

# --- the schedule ------------------------------------------------------------------------------

SYNCS_EVERY_STEP = _edit("sync_target", ("if step % period == 0:", "if True:  # keep it fresh"))

SHARES_ARRAYS = _edit("sync_target", (
    "target.load_parameters(online.parameters())",
    "target.weights, target.biases = online.weights, online.biases"))

SYNC_OFF_BY_ONE = _edit("sync_target", ("if step % period == 0:", "if step % period == 1:"))

COPIES_THE_WRONG_WAY = _edit("sync_target", (
    "target.load_parameters(online.parameters())",
    "online.load_parameters(target.parameters())"))

# A bug in td_targets, huber_loss or huber_loss_gradient costs their own checks only: the
# step's checks judge dqn_step against what a correct step does with the student's own
# parts (checks/lesson07_neural_replay.py), so a correct dqn_step is not blamed for them.
BUGS = [
    Bug("targets_bootstrap_terminated", LESSON, "test_td_targets",
        {"td_targets": BOOTSTRAPS_TERMINATED},
        description="terminated rows still add discount * max Q(s')"),
    Bug("targets_mean_over_actions", LESSON, "test_td_targets",
        {"td_targets": MEAN_OVER_ACTIONS},
        description="bootstraps from the mean of the next Q-values, not the max"),
    Bug("targets_discount_the_reward", LESSON, "test_td_targets",
        {"td_targets": DISCOUNTS_THE_REWARD},
        description="discount * (r + max Q) instead of r + discount * max Q"),
    Bug("loss_ignores_weights", LESSON, "test_huber_loss",
        {"huber_loss": LOSS_IGNORES_WEIGHTS, "huber_loss_gradient": GRADIENT_IGNORES_WEIGHTS},
        description="loss and gradient without the importance weights (consistent)"),
    Bug("loss_is_squared_error", LESSON, "test_huber_loss",
        {"huber_loss": SQUARED_LOSS, "huber_loss_gradient": SQUARED_LOSS_GRADIENT},
        description="half the squared error, and its gradient: no clipping"),
    Bug("loss_summed_over_the_batch", LESSON, "test_huber_loss",
        {"huber_loss": SUMMED_LOSS, "huber_loss_gradient": SUMMED_GRADIENT},
        description="sums the batch instead of averaging (loss and gradient agree)"),
    Bug("gradient_sign_flipped", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_SIGN_FLIPPED},
        description="d loss / dQ with the sign of y - Q: gradient ascent"),
    Bug("gradient_not_clipped", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_NOT_CLIPPED},
        description="the Huber loss, but the squared error's gradient"),
    Bug("gradient_not_averaged", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_NOT_AVERAGED},
        description="the loss is a mean, the gradient a sum"),
    Bug("gradient_ignores_weights", LESSON, "test_huber_gradient",
        {"huber_loss_gradient": GRADIENT_IGNORES_WEIGHTS},
        description="the loss is weighted, its gradient is not"),
    Bug("step_targets_from_online_network", LESSON, "test_dqn_step",
        {"dqn_step": TARGETS_FROM_ONLINE}, also_fails=("test_dqn_step_prioritized",),
        description="targets computed with the online network, not the target network"),
    Bug("step_ignores_importance_weights", LESSON, "test_dqn_step_prioritized",
        {"dqn_step": STEP_IGNORES_WEIGHTS},
        description="a prioritized batch's weights never reach the loss"),
    Bug("step_forgets_priorities", LESSON, "test_dqn_step_prioritized",
        {"dqn_step": STEP_FORGETS_PRIORITIES},
        description="never calls update_priorities"),
    Bug("step_td_errors_after_the_step", LESSON, "test_dqn_step",
        {"dqn_step": TD_ERRORS_AFTER_THE_STEP}, also_fails=("test_dqn_step_prioritized",),
        description="returns (and prioritizes by) TD errors of the updated network"),
    Bug("no_target_network", LESSON, "test_dqn_learning", {"sync_target": SYNCS_EVERY_STEP},
        also_fails=("test_target_sync",),
        description="syncs at every step: the targets chase the online network"),
    Bug("target_shares_online_arrays", LESSON, "test_target_sync",
        {"sync_target": SHARES_ARRAYS},
        description="the target holds the online network's arrays, not a copy"),
    Bug("sync_off_by_one", LESSON, "test_target_sync", {"sync_target": SYNC_OFF_BY_ONE},
        description="syncs at steps 1, period + 1, ...; never with period 1"),
    Bug("sync_copies_the_wrong_way", LESSON, "test_target_sync",
        {"sync_target": COPIES_THE_WRONG_WAY},
        description="loads the target's parameters into the online network"),
]
