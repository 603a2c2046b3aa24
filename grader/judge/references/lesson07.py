"""References for lesson 07's checks: targets, losses, the DQN step, a baseline DQN."""

import numpy as np

from course.mlp import QNetwork


def _network(seed, sizes=None):
    from course.dqn import CARTPOLE_NETWORK

    return QNetwork(CARTPOLE_NETWORK if sizes is None else tuple(sizes), seed)


def targets(inputs):
    """The TD targets of the check's batch, and the parts its hints compare with."""
    from checks.lesson07_neural_replay import as_arrays
    from neural_replay import td_targets

    network = _network(inputs["seed"], inputs.get("sizes"))
    if inputs.get("louder"):  # the parameters the check syncs the target network to
        from checks.lesson07_neural_replay import louder

        network.load_parameters(louder(network))
    _, _, rewards, next_observations, terminated = as_arrays(inputs["batch"])
    next_q = network.predict(next_observations)
    return {"targets": td_targets(network, rewards, next_observations, terminated,
                                  inputs["discount"]),
            "next_max": next_q.max(axis=1), "next_mean": next_q.mean(axis=1)}


def losses(cases):
    """Per case: the weighted Huber loss, and the wrong losses the hints recognise."""
    from neural_replay import huber_loss

    found = {name: [] for name in ("weighted_mean", "unweighted", "weighted_sum",
                                   "normalised_by_weights", "squared", "all_actions")}
    for case in cases:
        q = np.array(case["q_values"])
        actions = np.array(case["actions"])
        targets_, weights = np.array(case["targets"]), np.array(case["weights"])
        size = len(actions)
        value = huber_loss(q, actions, targets_, weights)
        errors = q[np.arange(size), actions] - targets_
        per_row = np.where(np.abs(errors) <= 1, 0.5 * errors ** 2, np.abs(errors) - 0.5)
        found["weighted_mean"].append(value)
        found["unweighted"].append(huber_loss(q, actions, targets_, np.ones(size)))
        found["weighted_sum"].append(value * size)
        found["normalised_by_weights"].append(float(np.sum(weights * per_row) / weights.sum()))
        found["squared"].append(float(np.mean(weights * 0.5 * errors ** 2)))
        every = q - targets_[:, None]
        huber_every = np.where(np.abs(every) <= 1, 0.5 * every ** 2, np.abs(every) - 0.5)
        found["all_actions"].append(float(np.mean(weights[:, None] * huber_every)))
    return found


def gradients(cases):
    """Per case: the reference's gradient of the loss, the squared error's gradient (the
    unclipped one the hints recognise), the weighted Huber loss, and the TD errors Q - y
    of the actions taken."""
    from neural_replay import huber_loss, huber_loss_gradient

    found = {name: [] for name in ("exact", "unclipped", "loss", "errors")}
    for case in cases:
        q = np.array(case["q_values"])
        actions = np.array(case["actions"], dtype=np.int64)
        targets_, weights = np.array(case["targets"]), np.array(case["weights"])
        rows = np.arange(len(actions))
        errors = q[rows, actions] - targets_
        unclipped = np.zeros(q.shape)
        unclipped[rows, actions] = weights * errors / len(rows)
        found["exact"].append(huber_loss_gradient(q, actions, targets_, weights))
        found["unclipped"].append(unclipped)
        found["loss"].append(huber_loss(q, actions, targets_, weights))
        found["errors"].append(errors)
    return found


def _run_steps(inputs, targets_from="target", weighted=True):
    """The reference dqn_step on the check's batches: per call, the gradients it passed
    to the optimizer, its TD errors, and the TD errors with the Q-values after the step
    (what code that computes them too late returns)."""
    from checks.framework import unpacked
    from checks.lesson07_neural_replay import FixedBatches, RecordingAdam, served_batch
    from neural_replay import dqn_step

    online, target = _network(inputs["online_seed"]), _network(inputs["target_seed"])
    optimizer = RecordingAdam(online, inputs["learning_rate"])
    batches = [served_batch(batch) for batch in inputs["batches"]]
    if not weighted:
        batches = [(*batch[:5], np.ones_like(batch[5]), batch[6]) for batch in batches]
    buffer = FixedBatches(batches)
    before, after = [], []
    for observations, actions, *_ in batches:
        rows = np.arange(len(actions))
        q_before = online.predict(observations)[rows, actions]
        td = dqn_step(online, online if targets_from == "online" else target, optimizer,
                      buffer, inputs["batch_size"], inputs["discount"], inputs["beta"])
        before.append(td)
        after.append(td + q_before - online.predict(observations)[rows, actions])
    gradients = [[unpacked(g) for g in step] for step in optimizer.recorded]
    return gradients, before, after


def step_expectation(inputs):
    gradients, before, after = _run_steps(inputs)
    online_gradients, online_td_errors, _ = _run_steps(inputs, targets_from="online")
    hints = [(online_gradients,
              "the targets come from the online network instead of the target network")]
    if inputs["prioritized"]:
        hints.append((_run_steps(inputs, weighted=False)[0],
                      "the importance weights are left out (every weight 1): pass the "
                      "batch's weights to the loss"))
    return {"gradients": gradients, "td_errors": before, "td_errors_after_step": after,
            "td_errors_online_targets": online_td_errors, "hints": hints}


def baseline_greedy_returns(inputs):
    """The greedy return of the reference DQN (uniform replay, target network) trained on
    each of the learning check's seeds."""
    from checks.lesson07_neural_replay import learning_settings
    from course.dqn import UniformReplay, greedy_return, train_dqn
    from neural_replay import dqn_step, sync_target

    settings = learning_settings(inputs)
    return [greedy_return(train_dqn(dqn_step, sync_target,
                                    UniformReplay(settings.capacity, seed), seed,
                                    settings).online, seed)
            for seed in inputs["seeds"]]
