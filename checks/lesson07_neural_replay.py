"""Checks for lesson 07: TD targets, the weighted Huber loss and its gradient, the DQN
step on uniform and prioritized batches, the target network's schedule, and learning.

The networks, optimizers and buffers the probes hand to the student's code are the
grader's: in the grader they stay in its process and are served (every ``predict``
crosses the channel, every ``step`` and ``load_parameters`` is replayed on the grader's
object), so a verdict reads gradients, priorities and parameters the grader recorded.
The learning check mirrors the networks instead (the student's process runs them at full
speed; the grader replays each optimizer step and target sync on its own copies, which
are witnesses of each call: :mod:`checks.witness`) and judges the greedy policy of the
online network the grader holds.
"""

import math

import numpy as np

from checks.expected import expected as reference
from checks.framework import (Callee, Check, LessonChecks, ProbeError, call_student, comparison,
                              failed, lent_where, packed, passed, unpacked, wrong_amount)
from checks.lending import (DEFAULT_LIMIT, STAND_IN_BATCH, STAND_IN_PRIORITIES, AtMost, Served,
                            mirrored)
from checks.records import Record
from checks.witness import (DQN_STEP, SYNC_TARGET, Ledger, WitnessedNetwork,
                            WitnessedOptimizer, witnessed_sample)
from course.dqn import (CARTPOLE_NETWORK, DQNSettings, UniformReplay, greedy_return,
                        train_dqn)
from course.mlp import Adam, QNetwork

LESSON = "07_neural_replay"
OBSERVATION_SIZE, N_ACTIONS = CARTPOLE_NETWORK[0], CARTPOLE_NETWORK[-1]
TOLERANCE = dict(rtol=1e-6, atol=1e-9)  # float64 code written another way stays within


# --- the grader's objects, served to the student's code -------------------------------

# How much student code may hand the grader's network in one call: 16,384 numbers is
# 4,096 observations, against batches of at most 14 rows (64 in DQN's training); a
# prediction or gradient of that size takes some tens of milliseconds. Parameters and
# their gradients (load_parameters, step) are 4,610 numbers: the default limit holds them.
OBSERVATIONS = AtMost(16_384, "takes at most {limit:,} numbers of observations per call")
OUTPUT_GRADIENTS = AtMost(8_192, "takes at most {limit:,} numbers of output gradients per "
                                 "call")
# The learning check's buffer: DQN samples 64 rows a step; 65,536 is a thousand times that.
REPLAY_BATCH = AtMost(65_536, "serves at most {limit:,} transitions per call", shape=True)


class ServedNetwork(QNetwork):
    """A QNetwork that stays with the grader: the student's code calls it across, and reads
    its public attributes (as copies); it changes only by ``load_parameters``."""

    __lending__ = Served(remote=("predict", "gradients", "parameters"),
                         deferred=("load_parameters",), readable=("sizes", "weights", "biases"),
                         limits={"predict": {"observations": OBSERVATIONS},
                                 "gradients": {"observations": OBSERVATIONS,
                                               "output_gradients": OUTPUT_GRADIENTS},
                                 "load_parameters": {"values": DEFAULT_LIMIT}})

    def __init__(self, seed):
        super().__init__(CARTPOLE_NETWORK, seed)
        self.loads = 0

    def load_parameters(self, values):
        self.loads += 1
        super().load_parameters(values)


class RecordingAdam(Adam):
    """Adam that records the gradients of every ``step`` (packed), then applies them."""

    __lending__ = Served(deferred=("step",),
                         readable=("learning_rate", "beta1", "beta2", "epsilon", "steps"),
                         limits={"step": {"gradients": DEFAULT_LIMIT}})

    def __init__(self, network, learning_rate):
        super().__init__(network, learning_rate)
        self.recorded = Record("step")

    def step(self, gradients):
        self.recorded.append([packed(np.asarray(g, dtype=np.float64), "float64")
                              for g in gradients])
        super().step(gradients)


class FixedBatches:
    """A replay buffer that hands out the check's batches in turn and records every
    ``sample`` and ``update_priorities`` call (prioritized batches carry weights and
    slots)."""

    __lending__ = Served(remote=("sample", "__len__"), deferred=("update_priorities",),
                         limits={"sample": {"batch_size": STAND_IN_BATCH},
                                 "update_priorities": {"slots": STAND_IN_PRIORITIES,
                                                       "td_errors": STAND_IN_PRIORITIES}})

    def __init__(self, batches):
        self.batches, self.samples = batches, Record("sample")
        self.priority_updates = Record("update_priorities")

    def __len__(self):
        return 1000

    def sample(self, batch_size, beta=None):
        self.samples.append([batch_size if isinstance(batch_size, int) else repr(batch_size),
                             None if beta is None else float(beta)])
        if len(self.samples) > len(self.batches):
            raise ValueError("the check's buffer ran out of batches: sample once per step")
        return self.batches[len(self.samples) - 1]

    def update_priorities(self, slots, td_errors):
        self.priority_updates.append([np.asarray(slots).astype(int).reshape(-1).tolist(),
                                      np.asarray(td_errors, float).reshape(-1).tolist()])


class ServedUniformReplay(UniformReplay):
    """The learning check's buffer: the grader's, sampled across the channel, once per
    dqn_step with its batch size (the witnesses' ``ledger`` counts the samples)."""

    __lending__ = Served(remote=("sample", "__len__"),
                         limits={"sample": {"batch_size": REPLAY_BATCH}})

    def __init__(self, capacity, seed, ledger, batch_size):
        super().__init__(capacity, seed)
        self.ledger, self.batch_size = ledger, batch_size

    def sample(self, batch_size, beta=None):
        witnessed_sample(self.ledger, batch_size, self.batch_size)
        return super().sample(batch_size)


# --- helpers ----------------------------------------------------------------------------

def _numbers(value, what, count=None):
    try:
        array = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ProbeError(f"{what} returned {type(value).__name__}, not an array of "
                         "numbers.") from None
    if count is not None and array.size != count:
        raise ProbeError(f"{what} returned {array.size} number(s); expected {count}.")
    return array.tolist()


def _close(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return got.shape == want.shape and bool(np.allclose(got, want, **TOLERANCE))


def _shown(values, digits=4):
    return np.round(np.asarray(values, dtype=np.float64), digits).tolist()


def batch_rows(rng, size):
    """A batch of CartPole-like transitions as lists: at least one terminated row and
    one that is not (a time-limit cut looks like any other row: terminated=False)."""
    terminated = rng.random(size) < 0.35
    terminated[0], terminated[-1] = True, False
    return {"observations": rng.normal(scale=0.8, size=(size, OBSERVATION_SIZE)).tolist(),
            "actions": rng.integers(N_ACTIONS, size=size).tolist(),
            "rewards": rng.choice([1.0, 1.0, 0.0, -1.0, 2.5], size=size).tolist(),
            "next_observations": rng.normal(scale=0.8, size=(size, OBSERVATION_SIZE)).tolist(),
            "terminated": terminated.tolist()}


def as_arrays(rows):
    return (np.array(rows["observations"]), np.array(rows["actions"], dtype=np.int64),
            np.array(rows["rewards"]), np.array(rows["next_observations"]),
            np.array(rows["terminated"], dtype=bool))


# --- TD targets ----------------------------------------------------------------------------

def _targets_inputs(rng):
    return {"seed": int(rng.integers(2**31)), "discount": round(float(rng.uniform(0.8, 0.99)), 3),
            "batch": batch_rows(rng, int(rng.integers(6, 14)))}


def _targets_probe(inputs, td_targets):
    target = ServedNetwork(inputs["seed"])
    _, _, rewards, next_observations, terminated = as_arrays(inputs["batch"])
    got = call_student("td_targets(target_network, rewards, next_observations, terminated, "
                       "discount)", td_targets, target, rewards, next_observations,
                       terminated, inputs["discount"])
    return {"targets": _numbers(got, "td_targets", len(rewards))}


def _targets_verdict(inputs, data):
    batch, discount = inputs["batch"], inputs["discount"]
    problem = wrong_amount("targets", data.get("targets"), len(batch["rewards"]))
    if problem:
        return problem
    expected = reference(LESSON, "targets", inputs)
    for row, (got, want) in enumerate(zip(data["targets"], expected["targets"])):
        if _close(got, want):
            continue
        reward, ended = batch["rewards"][row], batch["terminated"][row]
        situation = (f"row {row} (reward {reward}, terminated={ended}, discount {discount}): "
                     f"your target is {got:.6g}, expected {want:.6g}")
        if ended:
            hint = (" A terminated episode has no next state to bootstrap from: the target "
                    "is the reward alone." if _close(got, want + discount * expected[
                        "next_max"][row]) else " The target of a terminated row is its reward.")
        elif _close(got, reward + discount * expected["next_mean"][row]):
            hint = " Bootstrap from the best action's value (max over actions), not the mean."
        elif _close(got, reward):
            hint = (" Only terminated rows drop the bootstrap; a row cut by the time limit "
                    "is stored with terminated=False and still bootstraps.")
        else:
            hint = (" The target is reward + discount * max over a' of the target network's "
                    "Q(next_observation, a').")
        return failed(situation + "." + hint)
    return passed(f"{len(expected['targets'])} targets match r + discount * max Q_target(s', a'),"
                  " the reward alone where the episode terminated.")


# --- the weighted Huber loss ------------------------------------------------------------

def loss_cases(rng):
    """Q-values, actions, targets and weights; TD errors on both sides of the Huber kink
    (never within 0.05 of it, so finite differences do not straddle it)."""
    cases = []
    for uniform_weights in (True, False, False):
        size = int(rng.integers(5, 10))
        q_values = rng.normal(scale=2.0, size=(size, 3))
        actions = rng.integers(3, size=size)
        magnitudes = np.where(rng.random(size) < 0.5, rng.uniform(0.05, 0.95, size),
                              rng.uniform(1.05, 4.0, size))
        errors = magnitudes * rng.choice([-1.0, 1.0], size=size)
        targets = q_values[np.arange(size), actions] - errors
        weights = np.ones(size) if uniform_weights else rng.uniform(0.1, 1.0, size)
        if not uniform_weights:
            weights[int(rng.integers(size))] = 1.0  # as PER normalises by the largest
        cases.append({"q_values": q_values.round(6).tolist(), "actions": actions.tolist(),
                      "targets": targets.round(6).tolist(), "weights": weights.round(4).tolist()})
    return cases


def _loss_inputs(rng):
    return {"cases": loss_cases(rng)}


def _case_arrays(case):
    return (np.array(case["q_values"]), np.array(case["actions"], dtype=np.int64),
            np.array(case["targets"]), np.array(case["weights"]))


def _student_loss(huber_loss, q_values, actions, targets, weights):
    value = call_student("huber_loss(q_values, actions, targets, weights)", huber_loss,
                         q_values, actions, targets, weights)
    return _numbers(value, "huber_loss", 1)[0]


def _loss_probe(inputs, huber_loss):
    return {"losses": [_student_loss(huber_loss, *_case_arrays(case))
                       for case in inputs["cases"]]}


def _loss_verdict(inputs, data):
    problem = wrong_amount("losses", data.get("losses"), len(inputs["cases"]))
    if problem:
        return problem
    expected = reference(LESSON, "losses", inputs["cases"])
    for number, (case, got) in enumerate(zip(inputs["cases"], data["losses"]), 1):
        want = expected["weighted_mean"][number - 1]
        if _close(got, want):
            continue
        weighted = len(set(case["weights"])) > 1
        situation = (f"batch #{number} ({len(case['actions'])} rows, "
                     f"{'weights ' + str(case['weights']) if weighted else 'all weights 1'}): "
                     f"your loss is {got:.6g}, expected {want:.6g}")
        for variant, hint in (
                ("unweighted", "the importance weights are ignored: multiply each row's "
                               "Huber loss by its own weight"),
                ("weighted_sum", "that is the sum over the batch: take the mean"),
                ("normalised_by_weights", "divide by the batch size, not by the sum of the "
                                          "weights"),
                ("squared", "that is half the squared error everywhere: past |error| = 1 the "
                            "Huber loss grows linearly, |error| - 1/2"),
                ("all_actions", "only the action taken in each row has a target: the loss "
                                "looks at Q[i, actions[i]] alone")):
            if _close(got, expected[variant][number - 1]):
                return failed(f"{situation}: {hint}.")
        return failed(f"{situation}. The loss is mean_i w_i * huber(Q[i, a_i] - y_i), with "
                      "huber(x) = x^2 / 2 for |x| <= 1 and |x| - 1/2 beyond.")
    return passed("the loss is the mean over the batch of each row's weight times the Huber "
                  "loss of its TD error.")


# --- its gradient, against finite differences of the student's own loss ----------------------

FD_STEP = 1e-6


def _gradient_inputs(rng):
    return {"cases": loss_cases(rng)[1:]}  # the weighted ones


def _gradient_probe(inputs, huber_loss, huber_loss_gradient):
    results = []
    for case in inputs["cases"]:
        q_values, actions, targets, weights = _case_arrays(case)
        gradient = call_student("huber_loss_gradient(q_values, actions, targets, weights)",
                                huber_loss_gradient, q_values, actions, targets, weights)
        gradient = _numbers(gradient, "huber_loss_gradient", q_values.size)
        differences = []
        for index in range(q_values.size):
            shifted = q_values.copy()
            shifted.flat[index] += FD_STEP
            up = _student_loss(huber_loss, shifted, actions, targets, weights)
            shifted.flat[index] -= 2 * FD_STEP
            down = _student_loss(huber_loss, shifted, actions, targets, weights)
            differences.append((up - down) / (2 * FD_STEP))
        results.append({"gradient": gradient, "finite_differences": differences})
    return {"results": results}


def _gradient_verdict(inputs, data):
    problem = wrong_amount("gradients", data.get("results"), len(inputs["cases"]))
    if problem:
        return problem
    for number, (case, result) in enumerate(zip(inputs["cases"], data["results"]), 1):
        shape = np.shape(case["q_values"])
        gradient = np.asarray(result["gradient"], dtype=np.float64)
        numeric = np.asarray(result["finite_differences"], dtype=np.float64)
        if gradient.size != math.prod(shape) or numeric.size != gradient.size:
            return failed(f"expected a gradient of the Q-values' shape {shape}.")
        gradient, numeric = gradient.reshape(shape), numeric.reshape(shape)
        if not np.all(np.isfinite(numeric)) or np.abs(numeric).max() < 1e-9:
            return failed("your huber_loss does not change when the Q-values change, so its "
                          "gradient cannot be checked: write huber_loss first.")
        if np.allclose(gradient, numeric, rtol=1e-4, atol=1e-6):
            continue
        row, column = np.unravel_index(np.argmax(np.abs(gradient - numeric)), shape)
        situation = (f"batch #{number}: d loss / d Q[{row}, {column}] is {gradient[row, column]:.6g} "
                     f"in your gradient, but changing Q[{row}, {column}] changes your "
                     f"huber_loss at the rate {numeric[row, column]:.6g} (central finite "
                     f"differences, step {FD_STEP:g})")
        if column != case["actions"][row] and gradient[row, column] != 0:
            hint = " Only the action taken in each row appears in the loss."
        elif np.allclose(gradient, -numeric, rtol=1e-4, atol=1e-6):
            hint = " The signs are flipped: the gradient of (Q - y) is +1 with respect to Q."
        elif np.allclose(gradient, numeric * len(case["actions"]), rtol=1e-4, atol=1e-6):
            hint = " The loss is a mean: divide the gradient by the batch size too."
        elif np.allclose(gradient[numeric != 0] / numeric[numeric != 0],
                         np.array(case["weights"])[np.nonzero(numeric)[0]] ** -1,
                         rtol=1e-4):
            hint = " Multiply each row by its importance weight, as the loss does."
        else:
            hint = (" The Huber loss's derivative is the TD error clipped to [-1, 1], times "
                    "the row's weight, divided by the batch size.")
        return failed(situation + "." + hint)
    return passed("the gradient matches finite differences of your loss, weights and the "
                  "clipping at |error| = 1 included.")


# --- the DQN step ---------------------------------------------------------------------------

STEP_CALLS = 3


def _step_inputs_for(prioritized):
    def make(rng):
        batch_size = int(rng.integers(4, 10))
        inputs = {"online_seed": int(rng.integers(2**31)),
                  "target_seed": int(rng.integers(2**31)), "batch_size": batch_size,
                  "discount": round(float(rng.uniform(0.8, 0.99)), 3), "learning_rate": 0.01,
                  "batches": [batch_rows(rng, batch_size) for _ in range(STEP_CALLS)],
                  "prioritized": prioritized, "beta": None}
        if prioritized:
            inputs["beta"] = round(float(rng.uniform(0.3, 1.0)), 2)
            for batch in inputs["batches"]:
                weights = rng.uniform(0.05, 1.0, batch_size)
                weights[int(rng.integers(batch_size))] = 1.0
                batch["weights"] = weights.round(4).tolist()
                batch["slots"] = rng.choice(5000, size=batch_size, replace=False).tolist()
        return inputs
    return make


def served_batch(batch):
    arrays = as_arrays(batch)
    if "weights" not in batch:
        return arrays
    return (*arrays, np.array(batch["weights"]), np.array(batch["slots"], dtype=np.int64))


def _own_result(description, function, *args):
    """What the student's ``function`` returns for ``args``, or None when it raises (not
    written yet, or a bug its own check reports)."""
    try:
        return call_student(description, function, *args)
    except ProbeError:
        return None


def _step_probe(inputs, dqn_step, td_targets, huber_loss_gradient):
    online, target = ServedNetwork(inputs["online_seed"]), ServedNetwork(inputs["target_seed"])
    optimizer = RecordingAdam(online, inputs["learning_rate"])
    batches = [served_batch(batch) for batch in inputs["batches"]]
    buffer = FixedBatches(batches)
    # what the student's td_targets and huber_loss_gradient give on each step's batch, on
    # networks like those the step holds: a step is judged against what a correct one
    # does with them, so that it is not blamed for theirs (each has its own check)
    your_target_network = ServedNetwork(inputs["target_seed"])
    td_errors, your_targets, your_gradients = [], [], []
    for observations, actions, rewards, next_observations, terminated, *prioritized in batches:
        weights = prioritized[0] if prioritized else np.ones(len(actions))
        targets = _own_result("td_targets(target_network, rewards, next_observations, "
                              "terminated, discount)", td_targets, your_target_network,
                              rewards, next_observations, terminated, inputs["discount"])
        targets = _numbers_or_none(targets, len(actions))
        gradient = None if targets is None else _own_result(
            "huber_loss_gradient(q_values, actions, targets, weights)", huber_loss_gradient,
            online.predict(observations), actions, np.array(targets), weights)
        your_targets.append(targets)
        your_gradients.append(_packed_or_none(gradient))
        returned = call_student("dqn_step(online, target, optimizer, replay, batch_size, "
                                "discount, beta)", dqn_step, online, target, optimizer, buffer,
                                inputs["batch_size"], inputs["discount"], inputs["beta"])
        td_errors.append(_numbers(returned, "dqn_step", inputs["batch_size"]))
    return {"td_errors": td_errors, "samples": buffer.samples, "gradients": optimizer.recorded,
            "priority_updates": buffer.priority_updates, "target_loads": target.loads,
            "your_targets": your_targets, "your_output_gradients": your_gradients}


def _numbers_or_none(value, count):
    try:
        return _numbers(value, "td_targets", count)
    except ProbeError:
        return None


def _packed_or_none(value):
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return packed(array, "float64") if array.ndim == 2 else None


def _gradient_problem(number, got, want, hints=(), wanted="online.gradients(observations, "
                      "huber_loss_gradient(Q-values, actions, targets, weights)) with targets "
                      "from the target network"):
    """Why the gradients of call ``number`` differ from ``want`` (that call's expected
    gradients), or None; ``hints`` are (gradients of every call, what they mean)."""
    try:
        got = [unpacked(g) for g in got]
    except ValueError as error:
        return failed(f"call {number}: the optimizer got something it could not read: {error}")
    want = [np.asarray(g) for g in want]
    if len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want)):
        return None
    for variant, hint in hints:
        alternative = [np.asarray(g) for g in variant[number - 1]]
        if len(got) == len(alternative) and all(_close(g, w) for g, w in zip(got, alternative)):
            return failed(f"call {number} of dqn_step: the gradients passed to "
                          f"optimizer.step are those you get when {hint}.")
    return failed(f"call {number} of dqn_step: the gradients passed to optimizer.step differ "
                  f"from {wanted}.")


def _step_counts_problem(inputs, data):
    """What the calls dqn_step made (samples, optimizer steps, target loads) got wrong."""
    prioritized = inputs["prioritized"]
    sample_call = (f"replay.sample({inputs['batch_size']}, {inputs['beta']})" if prioritized
                   else f"replay.sample({inputs['batch_size']})")
    for what, got in (("replay.sample calls", data["samples"]),
                      ("optimizer steps", data["gradients"]),
                      ("TD-error arrays", data["td_errors"])):
        problem = wrong_amount(what, got, STEP_CALLS)
        if problem:
            return failed(f"{STEP_CALLS} calls of dqn_step made {len(got)} {what}; each call "
                          f"samples one batch with {sample_call}, makes one optimizer step "
                          "and returns the batch's TD errors.")
    if any(call != [inputs["batch_size"], inputs["beta"]] for call in data["samples"]):
        return failed(f"expected {sample_call} in each step, got sample"
                      f"{tuple(call for call in data['samples'][0] if call is not None)}.")
    if data["target_loads"]:
        return failed("dqn_step changed the target network: only sync_target does that.")
    return None


def _steps_problem(inputs, data, gradients, td_errors, expected=None):
    """Why the steps differ from one that passes ``gradients`` to the optimizer and
    returns ``td_errors`` (per call), or None. ``expected``: the reference's expectation,
    whose wrong variants give hints."""
    hints = expected["hints"] if expected else ()
    wanted = {} if expected else {"wanted": (
        "online.gradients(observations, huber_loss_gradient(Q-values, actions, targets, "
        "weights)) with targets = td_targets(target, rewards, next_observations, terminated, "
        "discount), computed with your own td_targets and huber_loss_gradient")}
    for number in range(1, STEP_CALLS + 1):
        problem = _gradient_problem(number, data["gradients"][number - 1],
                                    gradients[number - 1], hints, **wanted)
        if problem:
            return problem
        got, want = data["td_errors"][number - 1], td_errors[number - 1]
        if not _close(got, want):
            hint = ""
            if expected is not None:
                if _close(got, expected["td_errors_after_step"][number - 1]):
                    hint = " Compute them with the Q-values from before the optimizer step."
                if _close(got, expected["td_errors_online_targets"][number - 1]):
                    hint = (" Those are the TD errors with targets from the online network: "
                            "compute the targets with the target network.")
            else:
                hint = " (With the targets your own td_targets gives.)"
            return failed(f"call {number} of dqn_step returned TD errors {_shown(got)}; "
                          f"expected targets - Q(s, a) = {_shown(want)}.{hint}")
    if inputs["prioritized"]:
        updates = data["priority_updates"]
        if len(updates) != STEP_CALLS:
            return failed(f"{STEP_CALLS} prioritized steps called replay.update_priorities "
                          f"{len(updates)} times: once per step, with the batch's slots and "
                          "its TD errors.")
        for number, ((slots, errors), batch, want) in enumerate(
                zip(updates, inputs["batches"], td_errors), 1):
            if slots != batch["slots"]:
                return failed(f"call {number}: update_priorities got slots {slots}, but the "
                              f"batch came from slots {batch['slots']}.")
            if not _close(np.abs(errors), np.abs(want)):
                return failed(f"call {number}: update_priorities got TD errors "
                              f"{_shown(errors)}, expected {_shown(want)} (or their absolute "
                              "values).")
    elif data["priority_updates"]:
        return failed("a uniform batch has no priorities to update.")
    return None


def with_your_own_parts(inputs, data):
    """(gradients, TD errors) per call of a correct step that uses the student's own
    td_targets and huber_loss_gradient (their results, which the probe recorded), on the
    online network as the student's steps left it; None where those results are missing
    or unusable (the step is then judged against the reference alone)."""
    network = QNetwork(CARTPOLE_NETWORK, inputs["online_seed"])
    optimizer = Adam(network, inputs["learning_rate"])
    gradients, td_errors = [], []
    try:
        for batch, targets, output_gradient, made in zip(
                inputs["batches"], data["your_targets"], data["your_output_gradients"],
                data["gradients"], strict=True):
            observations = np.array(batch["observations"])
            actions = np.array(batch["actions"], dtype=np.int64)
            q_values = network.predict(observations)
            if targets is None or output_gradient is None:
                return None
            targets = np.asarray(targets, dtype=np.float64).reshape(len(actions))
            output_gradient = unpacked(output_gradient, q_values.shape)
            if not (np.all(np.isfinite(targets)) and np.all(np.isfinite(output_gradient))):
                return None
            gradients.append(network.gradients(observations, output_gradient))
            td_errors.append(targets - q_values[np.arange(len(actions)), actions])
            optimizer.step([unpacked(g) for g in made])  # the step the student's code made
    except (TypeError, ValueError, KeyError):
        return None
    return gradients, td_errors


def _step_verdict(inputs, data):
    problem = _step_counts_problem(inputs, data)
    if problem:
        return problem
    kind = ("prioritized batches: each row's gradient scaled by its own importance weight, "
            "and the TD errors fed back as priorities" if inputs["prioritized"] else
            "uniform batches, with targets from the target network")
    expected = reference(LESSON, "step_expectation", inputs)
    problem = _steps_problem(inputs, data, expected["gradients"], expected["td_errors"],
                             expected)
    if problem is None:
        return passed(f"{STEP_CALLS} steps on {kind}, match the reference's gradients and TD "
                      "errors.")
    yours = with_your_own_parts(inputs, data)
    if yours is None:
        return problem
    own_problem = _steps_problem(inputs, data, *yours)
    if own_problem is None:
        return passed(f"{STEP_CALLS} steps on {kind}, match what a correct step gives with "
                      "your own td_targets and huber_loss_gradient (their own tests judge "
                      "them).")
    parts_agree = all(_close(g, w) for g, w in zip(yours[0][0], expected["gradients"][0])) \
        and _close(yours[1][0], expected["td_errors"][0])
    return problem if parts_agree else own_problem


# --- the target network's schedule -------------------------------------------------------------

def _sync_inputs(rng):
    period = int(rng.integers(2, 8))
    return {"period": period, "steps": 3 * period + int(rng.integers(1, period)),
            "seed": int(rng.integers(2**31))}


# What code may do to the networks lent to sync_target: everything a QNetwork allows (the
# student's process holds copies), the parameters set by load_parameters or by assigning
# its weights and biases (each replayed on the grader's networks).
NETWORK_WRITES = ("load_parameters",)
NETWORK_ATTRIBUTES = ("weights", "biases")
NUDGE_RATE = 1e-3  # an Adam step moves every parameter by about this much


def _parameters(network, which):
    return call_student(f"{which}.parameters()", network.parameters)


def _sync_probe(inputs, sync_target):
    """Runs the schedule on networks lent by mirroring: sync_target's copies of them are
    where it leaves its work (a target that shares the online network's arrays shares them
    there), so they are what is read; an Adam step on the online network between calls
    changes its arrays in place, as training does."""
    records = []
    for period, steps in ((inputs["period"], inputs["steps"]), (1, 3)):
        online = mirrored(QNetwork, CARTPOLE_NETWORK, inputs["seed"], logged=NETWORK_WRITES,
                          settable=NETWORK_ATTRIBUTES)
        target = mirrored(QNetwork, CARTPOLE_NETWORK, inputs["seed"] + 1,
                          logged=NETWORK_WRITES, settable=NETWORK_ATTRIBUTES)
        optimizer = mirrored(Adam, online, NUDGE_RATE, logged=("step",))
        online_there, target_there, optimizer_there = (
            lent_where(value, near=sync_target) for value in (online, target, optimizer))
        shapes = [p.shape for p in online.parameters()]
        rng = np.random.default_rng(inputs["seed"])
        run = []
        for step in range(1, steps + 1):
            before = _parameters(target_there, "target")
            call_student("optimizer.step(gradients)", optimizer_there.step,
                         [rng.normal(size=shape) for shape in shapes])
            online_before = _parameters(online_there, "online")
            said = call_student("sync_target(online, target, step, period)", sync_target,
                                online, target, step, period)
            after = _parameters(target_there, "target")
            online_after = _parameters(online_there, "online")
            run.append({"said": bool(said) if isinstance(said, (bool, np.bool_)) else None,
                        "changed": not _same_arrays(after, before),
                        "equal": _same_arrays(after, online_before),
                        "online_changed": not _same_arrays(online_after, online_before)})
        records.append({"period": period, "steps": run})
    return {"runs": records}


def _same_arrays(first, second):
    return len(first) == len(second) and all(
        np.shape(a) == np.shape(b) and np.array_equal(a, b) for a, b in zip(first, second))


def _sync_verdict(inputs, data):
    problem = wrong_amount("runs", data.get("runs"), 2)
    if problem:
        return problem
    for run in data["runs"]:
        period = run["period"]
        for step, record in enumerate(run["steps"], start=1):
            due = step % period == 0
            where = f"with period {period}, at step {step}"
            if record.get("online_changed"):
                return failed(f"{where} sync_target changed the online network: it copies "
                              "the online network into the target, never the other way.")
            if due and not record["equal"]:
                return failed(f"{where} the target network should become a copy of the "
                              "online one (every `period` steps: steps period, 2 period, ...)"
                              ", but it did not.")
            if not due and record["changed"]:
                if record["said"]:
                    hint = (f": sync at steps {period}, {2 * period}, {3 * period}, ... "
                            "(step % period == 0), and only there.")
                elif record["equal"]:
                    hint = (". It follows the online network's changes: it shares its arrays "
                            "instead of holding a copy (load_parameters(online.parameters()) "
                            "copies, and so does assigning copies of the arrays).")
                else:
                    hint = "."
                return failed(f"{where} the target network changed, but it is synced only "
                              "at multiples of the period" + hint)
            if record["said"] is not due:
                return failed(f"{where} sync_target returned {record['said']!r}; return True "
                              "when it synced and False otherwise.")
    return passed("the target network becomes a copy of the online one exactly every "
                  "`period` steps (and at every step with period 1), and keeps its own copy.")


# --- learning CartPole ------------------------------------------------------------------------

LEARNING = dict(steps=5000, seeds=2)


def learning_settings(inputs):
    return DQNSettings(steps=inputs["steps"])


def _learning_inputs(rng):
    return {"seeds": rng.integers(2**31, size=LEARNING["seeds"]).tolist(),
            "steps": LEARNING["steps"]}


def mirrored_networks(ledger):
    """The learning check's networks: the student's process holds copies and runs them;
    each optimizer step and target sync is replayed on the grader's, which are witnesses
    holding each call to the ``ledger``'s allowance."""
    def networks(seed, settings):
        online = WitnessedNetwork(QNetwork(CARTPOLE_NETWORK, seed), "online", ledger)
        target = WitnessedNetwork(QNetwork(CARTPOLE_NETWORK, seed), "target", ledger,
                                  online=online.network)
        optimizer = WitnessedOptimizer(Adam(online.network, settings.learning_rate), ledger)
        for network in (online, target):
            mirrored(QNetwork, CARTPOLE_NETWORK, seed, logged=NETWORK_WRITES,
                     settable=NETWORK_ATTRIBUTES, original=network)
        mirrored(Adam, online, settings.learning_rate, logged=("step",), original=optimizer)
        return online, target, optimizer
    return networks


def witnessed_turn(ledger, allowance, description, function):
    """``function``, called by the course's loop, as one turn under ``allowance``:
    refused past it, and refused if it made fewer calls than the turn needs."""
    def turn(*args):
        ledger.begin(allowance)
        call_student(description, function, *args)
        ledger.check()
        ledger.end()
    return turn


def _learning_probe(inputs, dqn_step, sync_target):
    settings = learning_settings(inputs)
    parameters, curves = [], []
    for seed in inputs["seeds"]:
        ledger = Ledger()
        learn = witnessed_turn(ledger, DQN_STEP, "dqn_step(online, target, optimizer, replay, "
                               "batch_size, discount, beta)", dqn_step)
        sync = witnessed_turn(ledger, SYNC_TARGET, "sync_target(online, target, step, period)",
                              sync_target)
        replay = ServedUniformReplay(settings.capacity, seed, ledger, settings.batch_size)
        run = train_dqn(learn, sync, replay, seed, settings, networks=mirrored_networks(ledger))
        parameters.append([packed(p, "float64") for p in run.online.parameters()])
        curves.append(run.returns_by_step(settings.steps)[::100].tolist())
    return {"parameters": parameters, "curves": curves}


def _learning_baseline(inputs):
    return reference(LESSON, "baseline_greedy_returns", inputs)


# A correct answer fails if its 2-seed mean greedy return is under 35% of the baseline's.
# The reference's greedy return after 5,000 steps ranged 97-232 over 16 seeds (mean 153,
# sd 40), so even against the best pair measured that means under 81; under a normal fit
# of pair means (sd 28) the false-failure rate is about 4e-4, none in 16 seeds. Without a
# target network a DQN scores 9 (worse than a random policy's 22) on every seed.
MIN_SHARE_OF_BASELINE = 0.35


def _learning_verdict(inputs, data):
    problem = wrong_amount("networks", data.get("parameters"), len(inputs["seeds"]))
    if problem:
        return problem
    yours = []
    for seed, values in zip(inputs["seeds"], data["parameters"]):
        network = QNetwork(CARTPOLE_NETWORK, 0)
        try:
            network.load_parameters([unpacked(v) for v in values])
        except (ValueError, TypeError):
            return failed("the trained network's parameters could not be read.")
        if not all(np.all(np.isfinite(p)) for p in network.parameters()):
            yours.append(0.0)  # diverged
            continue
        yours.append(greedy_return(network, seed))
    baseline = _learning_baseline(inputs)
    seeds = len(inputs["seeds"])
    summary = (f"after {inputs['steps']:,} CartPole steps, the greedy policy of the network "
               f"your dqn_step and sync_target trained returned {np.mean(yours):.0f} (mean of "
               f"{seeds} seeds: {', '.join(f'{y:.0f}' for y in yours)}) against "
               f"{np.mean(baseline):.0f} for the grader's DQN on the same seeds")
    figure = comparison(f"CartPole-v1: greedy return after {inputs['steps']:,} steps (10 "
                        "episodes per seed)", "return",
                        [f"seed {n}" for n in range(1, seeds + 1)],
                        {"your DQN": yours, "grader's DQN": baseline})
    if np.mean(yours) < MIN_SHARE_OF_BASELINE * np.mean(baseline):
        return failed(summary + f"; it should reach at least {MIN_SHARE_OF_BASELINE:.0%} of "
                      "it. (A random policy returns about 22.)", figure=figure)
    return passed(summary + ".", figure=figure)


TD_TARGETS = Callee("td_targets", LESSON, ("test_td_targets",))
HUBER_LOSS = Callee("huber_loss", LESSON, ("test_huber_loss",))
HUBER_GRADIENT = Callee("huber_loss_gradient", LESSON, ("test_huber_gradient",))
STEP_PARTS = (TD_TARGETS, HUBER_GRADIENT)

CHECKS = LessonChecks(LESSON, [
    Check("test_td_targets", "TD targets from the target network", ("td_targets",),
          _targets_inputs, _targets_probe, _targets_verdict,
          asks="Targets on fixed batches: max over the target network, no bootstrap where terminated."),
    Check("test_huber_loss", "the importance-weighted Huber loss", ("huber_loss",),
          _loss_inputs, _loss_probe, _loss_verdict,
          asks="The loss on fixed batches, with and without importance weights."),
    Check("test_huber_gradient", "its gradient, against finite differences",
          ("huber_loss", "huber_loss_gradient"), _gradient_inputs, _gradient_probe,
          _gradient_verdict, calls=(HUBER_LOSS,),
          asks="Your gradient against central finite differences of your own loss."),
    Check("test_dqn_step", "the DQN step on a uniform batch",
          ("dqn_step", "td_targets", "huber_loss_gradient"), _step_inputs_for(False),
          _step_probe, _step_verdict, calls=STEP_PARTS,
          asks="Uniform batches: targets from the target network, one optimizer step, TD errors from before it."),
    Check("test_dqn_step_prioritized", "the DQN step on a prioritized batch",
          ("dqn_step", "td_targets", "huber_loss_gradient"), _step_inputs_for(True),
          _step_probe, _step_verdict, calls=STEP_PARTS,
          asks="Prioritized batches: each row weighted by its own importance weight; priorities fed back."),
    Check("test_target_sync", "the target network's schedule", ("sync_target",),
          _sync_inputs, _sync_probe, _sync_verdict,
          asks="Copies at steps period, 2 period, ... and nowhere else; a copy, not shared arrays."),
    Check("test_dqn_learning", "DQN learning CartPole", ("dqn_step", "sync_target"),
          _learning_inputs, _learning_probe, _learning_verdict, time_limit=300.0,
          learning=True, prepare=_learning_baseline,
          calls=(*STEP_PARTS, Callee("dqn_step", LESSON, ("test_dqn_step",
                                                          "test_dqn_step_prioritized")),
                 Callee("sync_target", LESSON, ("test_target_sync",))),
          asks="Your step and schedule train a DQN on CartPole, against the grader's."),
])
