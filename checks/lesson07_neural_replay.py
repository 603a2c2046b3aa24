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

import dataclasses
import math

import numpy as np

from checks.dqn_loop import DQNLoopWitness
from checks.contracts import BOOL, FLOAT, INPUTS_UNTOUCHED, RESULT_TYPES, Contract, array
from checks.expected import expected as reference
from checks.framework import (Callee, Check, ContractBroken, LessonChecks, NotWrittenYet,
                              ProbeError, attempted, call_student, comparison, failed,
                              lent_where, packed, passed, public_where, unpacked,
                              wrong_amount)
from checks.lending import (DEFAULT_LIMIT, STAND_IN_BATCH, STAND_IN_PRIORITIES, AtMost, Served,
                            mirrored)
from checks.records import Record
from checks.witness import Ledger, WitnessedNetwork, WitnessedOptimizer
from course.dqn import (CARTPOLE_NETWORK, DQNSettings, Turns, UniformReplay, greedy_return,
                        make_cartpole, train_dqn_lent)
from checks.requirements import Rule
from course.mlp import Adam, QNetwork

LESSON = "07_neural_replay"
OBSERVATION_SIZE, N_ACTIONS = CARTPOLE_NETWORK[0], CARTPOLE_NETWORK[-1]
TOLERANCE = dict(rtol=1e-6, atol=1e-9)  # float64 code written another way stays within

# --- the rules: what the lesson tells a student, by check ----------------------------------

# test_td_targets
TARGETS_FORMULA = Rule("target-is-reward-plus-discounted-max", "A row's target is r + "
                       "discount * max over a' of the target network's Q(s', a').")
NO_BOOTSTRAP_WHEN_TERMINATED = Rule("no-bootstrap-when-terminated", "Where the episode "
                                    "terminated, the target is the reward alone.")
TRUNCATED_BOOTSTRAPS = Rule("only-terminated-rows-stop", "Only the terminated rows drop the "
                            "bootstrap: every other row of the batch (a time-limit cut "
                            "included) bootstraps.")
# a result type the lesson states: held on every call (checks.contracts)
TARGETS_SHAPE = RESULT_TYPES
DISCOUNT_ZERO = Rule("discount-zero-is-a-discount", "A discount of 0 is a value like any "
                     "other: the targets are then the rewards.")

# test_huber_loss (and the action rule in test_huber_gradient)
HUBER_LOSS_FORMULA = Rule("weighted-huber-loss", "The loss is (1/B) * sum of w_i * "
                          "huber(Q(s_i, a_i) - y_i), huber(x) = x^2/2 for |x| <= 1 and "
                          "|x| - 1/2 beyond.")
LOSS_WEIGHTED = Rule("loss-uses-the-weights-given", "Each row's Huber loss is multiplied by "
                     "its own importance weight, as given (the buffer has normalised them).")
LOSS_MEAN = Rule("loss-is-a-mean", "The loss is divided by the number of rows B: not a sum, "
                 "and not divided by the sum of the weights.")
ACTION_TAKEN_ONLY = Rule("action-taken-only", "Only the action taken in each row, a_i, "
                         "appears in the loss and in its gradient.")
# a result type the lesson states: held on every call (checks.contracts)
LOSS_IS_A_NUMBER = RESULT_TYPES

# test_huber_gradient
GRADIENT_OF_THE_LOSS = Rule("gradient-of-your-loss", "huber_loss_gradient is dL/dQ of the "
                            "loss: w_i * clip(delta_i, -1, 1) / B at (i, a_i), with "
                            "delta_i = Q(s_i, a_i) - y_i.")
# a result type the lesson states: held on every call (checks.contracts)
GRADIENT_SHAPE = RESULT_TYPES
GRADIENT_CLIPPED = Rule("gradient-clipped", "Past |delta| = 1 the gradient is clipped: "
                        "clip(delta, -1, 1), not delta.")
GRADIENT_WEIGHTED = Rule("gradient-weighted", "Each row's gradient is multiplied by its "
                         "importance weight, as the loss is.")
GRADIENT_MEAN = Rule("gradient-divided-by-b", "The gradient of a mean is divided by the "
                     "batch size B.")
GRADIENT_EVERYWHERE = Rule("gradient-at-every-error", "The gradient is a number at every TD "
                           "error, 0 and +-1 included (0 where delta = 0, +-w/B at "
                           "|delta| = 1).")

# test_dqn_step and test_dqn_step_prioritized
STEP_SAMPLES = Rule("step-samples-one-batch", "Each dqn_step draws one batch: "
                    "replay.sample(batch_size) when beta is None, replay.sample(batch_size, "
                    "beta) otherwise.")
TARGETS_FROM_TARGET_NETWORK = Rule("targets-from-the-target-network", "The step computes its "
                                   "targets with the target network, not the online one.")
STEP_GRADIENT = Rule("one-optimizer-step", "Each step makes one optimizer.step, with "
                     "online.gradients(observations, the weighted Huber loss's gradient).")
TD_ERRORS_BEFORE = Rule("td-errors-before-the-step", "The TD errors are computed with the "
                        "Q-values from before the optimizer step.")
STEP_RETURNS = Rule("step-returns-td-errors", "dqn_step returns the batch's TD errors, "
                    "targets - Q(s, a), one per row.")
ROWS_FROM_THE_BATCH = Rule("rows-from-the-batch", "A batch may hold another number of rows "
                           "than batch_size: the step uses the rows it gets.")
STEP_LEAVES_NETWORKS = Rule("networks-change-only-by-the-optimizer", "dqn_step changes the "
                            "online network only through optimizer.step, and never the "
                            "target network.")
PRIORITIES_FED_BACK = Rule("priorities-fed-back", "With a prioritized buffer each step calls "
                           "replay.update_priorities(slots, td_errors) once, with the batch's "
                           "slots; with a uniform one it calls it never.")
STEP_WEIGHTED = Rule("step-uses-the-weights", "A prioritized batch's importance weights reach "
                     "the loss; with beta=None every weight is 1.")
BETA_ZERO = Rule("beta-zero-is-prioritized", "beta=0 is a prioritized buffer's beta (every "
                 "weight 1): only beta=None means a uniform buffer.")

# test_target_sync
SYNC_AT_MULTIPLES = Rule("sync-at-multiples-of-the-period", "The target becomes a copy of "
                         "the online network at steps period, 2 period, ... (steps count "
                         "from 1), and at no other step.")
TARGET_IS_A_COPY = Rule("target-is-a-copy", "The target holds a copy of the online "
                        "network's parameters, not its arrays.")
COPY_ONLINE_INTO_TARGET = Rule("online-into-target", "sync_target copies the online network "
                               "into the target and leaves the online network as it is.")
SYNC_RETURNS = Rule("sync-returns-whether-it-synced", "sync_target returns True when it "
                    "synced and False otherwise.")

# test_dqn_learning
DQN_LEARNS = Rule("dqn-learns-cartpole", "A DQN trained by your dqn_step and sync_target "
                  "reaches at least 35% of the grader's greedy return on CartPole.")


# --- the grader's objects, served to the student's code -------------------------------

# How much student code may hand the grader's network in one call: 16,384 numbers is
# 4,096 observations, against batches of at most 14 rows (64 in DQN's training); a
# prediction or gradient of that size takes some tens of milliseconds. Parameters and
# their gradients (load_parameters, step) are 4,610 numbers: the default limit holds them.
OBSERVATIONS = AtMost(16_384, "takes at most {limit:,} numbers of observations per call")
OUTPUT_GRADIENTS = AtMost(8_192, "takes at most {limit:,} numbers of output gradients per "
                                 "call")


class ServedNetwork(QNetwork):
    """A QNetwork that stays with the grader: the student's code calls it across, and reads
    its public attributes (as copies); it changes only by ``load_parameters``."""

    __lending__ = Served(remote=("predict", "gradients", "parameters"),
                         deferred=("load_parameters",), readable=("sizes", "weights", "biases"),
                         limits={"predict": {"observations": OBSERVATIONS},
                                 "gradients": {"observations": OBSERVATIONS,
                                               "output_gradients": OUTPUT_GRADIENTS},
                                 "load_parameters": {"values": DEFAULT_LIMIT}})

    def __init__(self, seed, sizes=CARTPOLE_NETWORK):
        super().__init__(sizes, seed)
        self.loads = 0

    def load_parameters(self, values):
        self.loads += 1
        super().load_parameters(values)


class HugeValuesNetwork(ServedNetwork):
    """A served network whose Q-values at some observations (the next observations of a
    batch's terminated rows) are all ``value``, a huge finite number, as a diverging
    network gives. Elsewhere its Q-values are its seed's, as a ServedNetwork's."""

    def __init__(self, seed, at, value):
        super().__init__(seed)
        self.at = np.asarray(at, dtype=np.float64).reshape(-1, OBSERVATION_SIZE)
        self.value = value

    def predict(self, observations):
        q_values = np.array(super().predict(observations), dtype=np.float64)
        rows = np.asarray(observations, dtype=np.float64)
        if rows.shape[-1:] != (OBSERVATION_SIZE,) or q_values.shape[:-1] != rows.shape[:-1]:
            return q_values
        flat_rows = rows.reshape(-1, OBSERVATION_SIZE)
        flat_q = q_values.reshape(len(flat_rows), -1)
        hit = (flat_rows[:, None, :] == self.at[None, :, :]).all(axis=2).any(axis=1)
        flat_q[hit] = self.value
        return flat_q.reshape(q_values.shape)


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


NOT_GIVEN = object()  # an argument left out, told apart from one given as None


class FixedBatches:
    """A replay buffer that hands out the check's batches in turn and records every
    ``sample`` and ``update_priorities`` call (prioritized batches carry weights and
    slots)."""

    __lending__ = Served(remote=("sample", "__len__"), deferred=("update_priorities",),
                         limits={"sample": {"batch_size": STAND_IN_BATCH},
                                 "update_priorities": {"slots": STAND_IN_PRIORITIES,
                                                       "td_errors": STAND_IN_PRIORITIES}})

    def __init__(self, batches, stored=1000):
        self.batches, self.samples = batches, Record("sample")
        self.priority_updates = Record("update_priorities")
        self.stored = stored  # what len() says: fewer than a batch is a buffer like any other

    def __len__(self):
        return self.stored

    def sample(self, batch_size, beta=NOT_GIVEN):
        # [batch size, beta, whether beta was given]: a uniform buffer's sample takes the
        # batch size alone (UniformReplay.sample(batch_size) has no beta to be given None)
        self.samples.append([batch_size if isinstance(batch_size, int) else repr(batch_size),
                             None if beta is None or beta is NOT_GIVEN else float(beta),
                             beta is not NOT_GIVEN])
        if len(self.samples) > len(self.batches):
            raise ValueError("the check's buffer ran out of batches: sample once per step")
        return self.batches[len(self.samples) - 1]

    def update_priorities(self, slots, td_errors):
        self.priority_updates.append([np.asarray(slots).astype(int).reshape(-1).tolist(),
                                      np.asarray(td_errors, float).reshape(-1).tolist()])


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


def _returned(value, what):
    """What the student's code returned, as data the verdict judges: its shape and its
    numbers in order (so a wrong shape is a failed rule, not a crash of the probe)."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ProbeError(f"{what} returned {type(value).__name__}, not an array of "
                         "numbers.") from None
    return {"shape": list(array.shape), "values": array.reshape(-1).tolist()}


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
    batch = batch_rows(rng, int(rng.integers(6, 14)))
    # a continuing row whose next observation is all zeros (a cart at rest in the middle):
    # a state like any other, it bootstraps (a synced network's Q-values there are not 0)
    batch["terminated"][1] = False
    batch["next_observations"][1] = [0.0] * OBSERVATION_SIZE
    return {"seed": int(rng.integers(2**31)), "discount": round(float(rng.uniform(0.8, 0.99)), 3),
            "batch": batch,
            # the target network synced to another network's parameters between two calls
            "synced_seed": int(rng.integers(2**31)),
            # a target network of more than CartPole's two actions: the max is over them all
            "actions": int(rng.integers(3, 6))}


def _targets_probe(inputs, td_targets):
    """The targets of the batch with the check's discount, then with discount 0 (a value,
    not a missing one: the targets are the rewards)."""
    target = ServedNetwork(inputs["seed"])
    _, _, rewards, next_observations, terminated = as_arrays(inputs["batch"])
    returned = {}
    for name, discount in (("targets", inputs["discount"]), ("with_discount_zero", 0.0)):
        got = call_student(f"td_targets(target_network, rewards, next_observations, "
                           f"terminated, {discount})", td_targets, target, rewards,
                           next_observations, terminated, discount)
        returned[name] = _returned(got, "td_targets")
    # a batch of one row (the last, which bootstraps): still one target in a 1-d array
    # (a refusal is data: the verdict names the rule it breaks)
    got = attempted(call_student, f"td_targets(target_network, rewards[-1:], "
                    f"next_observations[-1:], terminated[-1:], {inputs['discount']}) on a "
                    "batch of one row", td_targets, target, rewards[-1:],
                    next_observations[-1:], terminated[-1:], inputs["discount"])
    returned["one_row"] = got if "raised" in got else _returned(got["value"], "td_targets")
    # discount 1, the top of its range: a value like any other (its refusal is data)
    got = attempted(call_student, "td_targets(target_network, rewards, next_observations, "
                    "terminated, 1.0)", td_targets, target, rewards, next_observations,
                    terminated, 1.0)
    returned["with_discount_one"] = (got if "raised" in got
                                     else _returned(got["value"], "td_targets"))
    # rewards that are integers (CartPole's +1 stored as an int): the targets are still
    # floats (the contract holds the type; the values are the same targets)
    call_student(f"td_targets(target_network, rewards, next_observations, terminated, "
                 f"{inputs['discount']}) with integer rewards", td_targets, target,
                 np.round(rewards).astype(np.int64), next_observations, terminated,
                 inputs["discount"])
    # and a batch where every episode ended: nothing bootstraps, the targets are the
    # integer rewards, still as floats
    call_student(f"td_targets(target_network, rewards, next_observations, terminated, "
                 f"{inputs['discount']}) with integer rewards, every row terminated",
                 td_targets, target, np.round(rewards).astype(np.int64), next_observations,
                 np.ones_like(terminated), inputs["discount"])
    # the same batch again after a sync (the grader loads other parameters into the target
    # network): the targets follow the network as it is now, nothing kept from before
    target.load_parameters(louder(QNetwork(CARTPOLE_NETWORK, inputs["synced_seed"])))
    got = call_student(f"td_targets(target_network, rewards, next_observations, terminated, "
                       f"{inputs['discount']}) after a sync", td_targets, target, rewards,
                       next_observations, terminated, inputs["discount"])
    returned["after_sync"] = _returned(got, "td_targets")
    wider = ServedNetwork(inputs["seed"], _with_actions(inputs["actions"]))
    got = call_student(f"td_targets(target_network of {inputs['actions']} actions, rewards, "
                       f"next_observations, terminated, {inputs['discount']})", td_targets,
                       wider, rewards, next_observations, terminated, inputs["discount"])
    returned["more_actions"] = _returned(got, "td_targets")
    # a target network whose Q-values at the terminated rows' next observations are huge:
    # a terminated row's target is its reward, not lost to rounding next to them
    ended = terminated.astype(bool)
    returned["huge"] = {}
    for name, value in HUGE_Q_VALUES:
        network = HugeValuesNetwork(inputs["seed"], next_observations[ended], value)
        got = call_student(f"td_targets(target_network, rewards, next_observations, terminated,"
                           f" {inputs['discount']}) with a target network whose Q-values at "
                           f"the terminated rows' next observations are {name}", td_targets,
                           network, rewards, next_observations, terminated, inputs["discount"])
        returned["huge"][name] = _returned(got, "td_targets")
    return returned


# What a diverging target network may say about a terminated row's next observation:
# none of it reaches that row's target, y = r. (Finite only: nan or inf from a network
# is a broken network, and r + discount * (1 - terminated) * max Q is a correct target.)
HUGE_Q_VALUES = (("1e300", 1e300), ("-1e300", -1e300))


# The synced parameters' last layer scaled up: Q-values in the hundreds, positive and
# negative, as a network far from converged gives (no bound on them holds).
LOUDER = 400.0


def louder(network):
    """``network``'s parameters with its output layer scaled by LOUDER, and biases that are
    not 0 (a new network's are; a trained one's are not: Q-values worked out from the
    weights alone differ then)."""
    parameters = network.parameters()
    for at in range(1, len(parameters), 2):  # [W1, b1, W2, b2, ...]
        parameters[at] = np.linspace(-0.5, 0.5, parameters[at].size)
    return [*parameters[:-2], *(LOUDER * array for array in parameters[-2:])]


def _with_actions(actions):
    """CartPole's network layout with ``actions`` outputs."""
    return (*CARTPOLE_NETWORK[:-1], actions)


def _targets_shape_problem(returned, rows, discount):
    shape = returned.get("shape") if isinstance(returned, dict) else None
    if shape == [rows]:
        return None
    hint = (" A (batch, 1) column added to a (batch,) array broadcasts to (batch, batch): "
            "take the max over axis 1 without keepdims." if shape == [rows, rows] else "")
    return failed(f"td_targets with discount {discount} returned an array of shape "
                  f"{tuple(shape) if shape is not None else None} for a batch of {rows} rows; "
                  f"it returns one target per row, shape ({rows},).{hint}", rule=TARGETS_SHAPE)


def _targets_verdict(inputs, data):
    batch, discount = inputs["batch"], inputs["discount"]
    rows = len(batch["rewards"])
    for name, used in (("targets", discount), ("with_discount_zero", 0.0)):
        problem = _targets_shape_problem(data.get(name), rows, used)
        if problem:
            return problem
    expected = reference(LESSON, "targets", inputs)
    for row, (got, want) in enumerate(zip(data["targets"]["values"], expected["targets"])):
        if _close(got, want):
            continue
        reward, ended = batch["rewards"][row], batch["terminated"][row]
        situation = (f"row {row} (reward {reward}, terminated={ended}, discount {discount}): "
                     f"your target is {got:.6g}, expected {want:.6g}")
        rule = TARGETS_FORMULA
        if ended and _close(got, want + discount * expected["next_max"][row]):
            rule = NO_BOOTSTRAP_WHEN_TERMINATED
            hint = (" A terminated episode has no next state to bootstrap from: the target "
                    "is the reward alone.")
        elif ended:
            hint = " The target of a terminated row is its reward."
        elif _close(got, reward + discount * expected["next_mean"][row]):
            hint = " Bootstrap from the best action's value (max over actions), not the mean."
        elif _close(got, reward):
            rule = TRUNCATED_BOOTSTRAPS
            hint = (" Only terminated rows drop the bootstrap, each row by its own flag; a "
                    "row cut by the time limit is stored with terminated=False and still "
                    "bootstraps.")
        else:
            hint = (" The target is reward + discount * max over a' of the target network's "
                    "Q(next_observation, a').")
        return failed(situation + "." + hint, rule=rule)
    one_row = data["one_row"]
    if one_row.get("raised"):
        return failed(f"{one_row['raised']}; expected one target (reward "
                      f"{batch['rewards'][-1]}, not terminated) in a 1-d float array of "
                      f"shape (1,), {_shown(expected['targets'][-1:])}."
                      + ONE_ROW_IS_A_BATCH, rule=TARGETS_SHAPE)
    if one_row.get("shape") != [1] or not _close(one_row["values"], expected["targets"][-1:]):
        return failed(f"td_targets of a batch of one row (reward {batch['rewards'][-1]}, not "
                      f"terminated) returned shape {tuple(one_row.get('shape', ()))} with "
                      f"{_shown(one_row.get('values'))}; expected shape (1,) with "
                      f"{_shown(expected['targets'][-1:])}: a batch of one row is still a "
                      "batch (squeeze nothing).", rule=TARGETS_SHAPE)
    zero = data["with_discount_zero"]["values"]
    if not _close(zero, batch["rewards"]):
        return failed(f"with discount 0 your targets are {_shown(zero)}, expected the rewards "
                      f"{_shown(batch['rewards'])}: a discount of 0 is a value (it looks no "
                      "step ahead), not a missing one.", rule=DISCOUNT_ZERO)
    if "raised" in data["with_discount_one"]:
        return failed(f"{data['with_discount_one']['raised']}: a discount is any value from 0 "
                      "to 1, both included (1: the future counts in full).",
                      rule=TARGETS_FORMULA)
    one = data["with_discount_one"].get("values")
    undiscounted = [reward + (0.0 if ended else best) for reward, ended, best in
                    zip(batch["rewards"], batch["terminated"], expected["next_max"])]
    if not _close(one, undiscounted):
        return failed(f"with discount 1 your targets are {_shown(one)}, expected "
                      f"{_shown(undiscounted)}: a discount is any value from 0 to 1, both "
                      "included (1: the future counts in full).", rule=TARGETS_FORMULA)
    synced = reference(LESSON, "targets", {**inputs, "seed": inputs["synced_seed"],
                                           "louder": True})["targets"]
    after_sync = data["after_sync"].get("values")
    if not _close(after_sync, synced):
        return failed(f"after the target network was synced (its parameters replaced by "
                      "those of a network whose Q-values run to the hundreds), td_targets of "
                      f"the same batch returned {_shown(after_sync)}; the network as it is "
                      f"now gives {_shown(synced)}. Compute the targets from the target "
                      "network at every call, nothing kept from an earlier one, and its "
                      "Q-values as they are, however large.", rule=TARGETS_FORMULA)
    wider = reference(LESSON, "targets", {**inputs, "sizes": _with_actions(inputs["actions"])})
    more_actions = data.get("more_actions", {}).get("values")
    if not _close(more_actions, wider["targets"]):
        return failed(f"with a target network of {inputs['actions']} actions, td_targets "
                      f"returned {_shown(more_actions)}; expected {_shown(wider['targets'])}: "
                      "the max is over every action the network has (its last axis), not "
                      "CartPole's two.", rule=TARGETS_FORMULA)
    problem = _huge_values_problem(inputs, data, expected["targets"])
    if problem:
        return problem
    return passed(f"{len(expected['targets'])} targets match r + discount * max Q_target(s', a'),"
                  " the reward alone where the episode terminated (whatever the target "
                  "network says about its next observation, huge values included), and the "
                  "rewards with discount 0, follow the target network after a sync, and take "
                  "the max over a network's every action.")


def _huge_values_problem(inputs, data, expected):
    """What td_targets got wrong with a target network whose Q-values at the terminated
    rows' next observations are huge (HUGE_Q_VALUES), or None: the
    terminated rows' targets are their rewards, the other rows' as with the finite
    network (``expected``: the reference's targets of the batch)."""
    batch, discount = inputs["batch"], inputs["discount"]
    ended = [row for row, flag in enumerate(batch["terminated"]) if flag]
    returned = data.get("huge")
    for name, _ in HUGE_Q_VALUES:
        got = returned.get(name) if isinstance(returned, dict) else None
        call = (f"td_targets(target_network, rewards, next_observations, terminated, "
                f"{discount}) with a target network whose Q-values at the next observations "
                f"of the terminated rows {ended} are all {name} (and finite elsewhere)")
        if not isinstance(got, dict) or got.get("shape") != [len(expected)]:
            shape = got.get("shape") if isinstance(got, dict) else None
            return failed(f"{call} returned an array of shape "
                          f"{tuple(shape) if shape is not None else None}; it returns one "
                          f"target per row, shape ({len(expected)},).", rule=TARGETS_SHAPE)
        for row, (value, want) in enumerate(zip(got["values"], expected)):
            if _close(value, want):
                continue
            reward = batch["rewards"][row]
            if row in ended:
                return failed(
                    f"{call} returned {value!r} for row {row} (reward {reward}, "
                    f"terminated=True); expected {want!r}, its reward. Where the episode "
                    "terminated, y = r: there is no next state to bootstrap from, so "
                    "whatever the target network says about that row's next observation "
                    f"never reaches its target (adding the bootstrap and taking it away "
                    f"again loses r next to {name}). Leave the terminated rows out of the "
                    "bootstrap: multiply it by (1 - terminated), or np.where(terminated, "
                    "rewards, rewards + discount * best).", rule=NO_BOOTSTRAP_WHEN_TERMINATED)
            return failed(f"{call} returned {value!r} for row {row} (reward {reward}, "
                          f"terminated=False); expected {want!r}, as with any target "
                          "network: only the terminated rows' next observations have "
                          "those Q-values, and a row that goes on bootstraps from its own "
                          "next observation alone.", rule=TARGETS_FORMULA)
    return None


# --- the weighted Huber loss ------------------------------------------------------------

# TD errors a batch of the loss checks also holds exactly: where huber's two pieces meet
# (+-1) and where the gradient's sign changes (0).
EDGE_ERRORS = (0.0, 1.0, -1.0)


def loss_cases(rng):
    """Q-values, actions, targets and weights, in four batches: all weights 1; weights
    whose largest is 1 (as PER normalises them), plus rows whose TD errors are exactly
    EDGE_ERRORS; weights all below 1, and some above 1 (a loss takes them as given, never
    normalised again or capped). The other TD errors lie on both sides of the Huber kink,
    never within 0.05 of it."""
    cases = []
    for weighting in ("none", "largest one, edges", "all below one", "some above one"):
        size = int(rng.integers(5, 10))
        q_values = rng.normal(scale=2.0, size=(size, 3))
        actions = rng.integers(3, size=size)
        magnitudes = np.where(rng.random(size) < 0.5, rng.uniform(0.05, 0.95, size),
                              rng.uniform(1.05, 4.0, size))
        errors = magnitudes * rng.choice([-1.0, 1.0], size=size)
        targets = (q_values[np.arange(size), actions] - errors).round(6)
        q_values = q_values.round(6)
        if weighting == "largest one, edges":
            # Q-values on a grid of 1/64 make Q - y exactly 0, 1 or -1 in floating point
            edge_q = np.round(rng.normal(scale=2.0, size=(len(EDGE_ERRORS), 3)) * 64) / 64
            edge_actions = rng.integers(3, size=len(EDGE_ERRORS))
            edge_targets = edge_q[np.arange(len(EDGE_ERRORS)), edge_actions] - EDGE_ERRORS
            q_values = np.concatenate([q_values, edge_q])
            actions = np.concatenate([actions, edge_actions])
            targets = np.concatenate([targets, edge_targets])
            size += len(EDGE_ERRORS)
        if weighting == "none":
            weights = np.ones(size)
        elif weighting == "all below one":
            weights = rng.uniform(0.1, 0.9, size)
        elif weighting == "some above one":
            weights = rng.uniform(0.1, 0.9, size)
            weights[rng.choice(size, size=2, replace=False)] = rng.uniform(1.5, 3.0, 2)
        else:
            weights = rng.uniform(0.1, 1.0, size)
            weights[int(rng.integers(size))] = 1.0  # as PER normalises by the largest
            # and two rows of weight 0: they still count in the batch's B
            weights[rng.choice(np.flatnonzero(weights < 1.0), size=2, replace=False)] = 0.0
        cases.append({"q_values": q_values.tolist(), "actions": actions.tolist(),
                      "targets": targets.tolist(), "weights": weights.round(4).tolist()})
    return cases


def _loss_inputs(rng):
    return {"cases": [*loss_cases(rng), _case_of_many_actions(rng)]}


# Which of the check's batches gives its batch of one row: loss_cases' "some above one"
# (the loss check's batch #4, the gradient check's #3, which leaves the first out).
ONE_ROW_FROM_LOSS_CASE, ONE_ROW_FROM_GRADIENT_CASE = 3, 2


def one_row_of(case):
    """A batch of exactly one row (B = 1): ``case``'s row of the largest weight (a weight
    above 1, taken as given), every input still (1, actions) or (1,) as a batch's is."""
    row = int(np.argmax(case["weights"]))
    return {key: values[row:row + 1] for key, values in case.items()}


def _one_row_call(function, case):
    """How feedback names a call of ``function`` on the batch of one row ``case``."""
    return (f"{function}(q_values, actions, targets, weights) on a batch of one row "
            f"(q_values {case['q_values']}, shape (1, {len(case['q_values'][0])}); actions "
            f"{case['actions']}; targets {case['targets']}; weights {case['weights']})")


# What a batch of one row asks, for every function of the lesson that takes a batch.
ONE_ROW_IS_A_BATCH = (" A batch of one row is a batch like any other, of B = 1 rows: keep "
                      "its axis of rows (np.squeeze turns one row into no axis at all, and "
                      "len() of a 0-d array raises TypeError).")


MANY_ACTIONS = 70  # more than np.choose's 32 (or 64) choices: a network may have more


def _case_of_many_actions(rng):
    """A batch from a network of MANY_ACTIONS outputs: the loss reads Q[i, a_i] whatever
    their number."""
    return _batch_case(rng, MANY_ACTIONS, MANY_ACTIONS)


def _case_arrays(case):
    return (np.array(case["q_values"]), np.array(case["actions"], dtype=np.int64),
            np.array(case["targets"]), np.array(case["weights"]))


def _student_loss(huber_loss, q_values, actions, targets, weights):
    value = call_student("huber_loss(q_values, actions, targets, weights)", huber_loss,
                         q_values, actions, targets, weights)
    return _numbers(value, "huber_loss", 1)[0]


def _loss_probe(inputs, huber_loss):
    losses = [_returned(call_student("huber_loss(q_values, actions, targets, weights)",
                                     huber_loss, *_case_arrays(case)), "huber_loss")["values"]
              for case in inputs["cases"]]
    # the first batch again with every weight 0 (each row counts for nothing): L = 0, a
    # weight of 0 being a weight like any other, not a missing one
    q_values, actions, targets, weights = _case_arrays(inputs["cases"][0])
    zero = call_student("huber_loss(q_values, actions, targets, weights) with every weight 0",
                        huber_loss, q_values, actions, targets, np.zeros_like(weights))
    # a batch of exactly one row: L of B = 1, one float (a refusal is data)
    one = one_row_of(inputs["cases"][ONE_ROW_FROM_LOSS_CASE])
    got = attempted(call_student, _one_row_call("huber_loss", one), huber_loss,
                    *_case_arrays(one))
    return {"losses": losses, "every_weight_zero": _returned(zero, "huber_loss")["values"],
            "one_row": got if "raised" in got else _returned(got["value"], "huber_loss")}


def _one_row_loss_problem(inputs, data):
    """What huber_loss got wrong on a batch of one row (see one_row_of), or None."""
    case = one_row_of(inputs["cases"][ONE_ROW_FROM_LOSS_CASE])
    call = _one_row_call("huber_loss", case)
    want = reference(LESSON, "losses", [case])["weighted_mean"][0]
    asked = (f"expected L = (1/1) * w_0 * huber(Q[0, a_0] - y_0) = {want:.6g}, one Python "
             "float")
    run = data.get("one_row")
    if not isinstance(run, dict):
        return failed(f"{call} left no record; {asked}." + ONE_ROW_IS_A_BATCH,
                      rule=LOSS_IS_A_NUMBER)
    if run.get("raised"):
        return failed(f"{run['raised']}; {asked}." + ONE_ROW_IS_A_BATCH, rule=LOSS_IS_A_NUMBER)
    values = run.get("values") or []
    if len(values) != 1 or run.get("shape") != []:
        return failed(f"{call} returned {len(values)} number(s), shape "
                      f"{tuple(run.get('shape') or ())}; {asked}." + ONE_ROW_IS_A_BATCH,
                      rule=LOSS_IS_A_NUMBER)
    if not _close(values[0], want):
        return failed(f"{call} returned {values[0]:.6g}; {asked}: the same formula as for any "
                      "batch, with B = 1.", rule=HUBER_LOSS_FORMULA)
    return None


def _zero_weights_problem(inputs, data, unweighted):
    """What huber_loss got wrong on the first batch with every weight 0 (its loss is 0),
    or None. ``unweighted``: the reference's loss of that batch with every weight 1."""
    values, case = data.get("every_weight_zero"), inputs["cases"][0]
    rows = len(case["actions"])
    if not isinstance(values, list) or len(values) != 1:
        return failed(f"huber_loss of a batch of {rows} rows whose weights are all 0 returned "
                      f"{'nothing' if values is None else f'{len(values)} numbers'}; it "
                      "returns L, one float.", rule=LOSS_IS_A_NUMBER)
    got = values[0]
    if _close(got, 0.0):
        return None
    hint = (f" That is the loss with every weight 1 ({unweighted:.6g}): weights of 0 were "
            "taken for no weights at all." if _close(got, unweighted) else "")
    return failed(f"huber_loss(q_values, actions, targets, weights) on batch #1 ({rows} rows) "
                  f"with weights {[0.0] * rows} returned {got:.6g}; expected 0.0, since L = "
                  "(1/B) * sum of w_i * huber(Q(s_i, a_i) - y_i) and every w_i is 0." + hint
                  + " Use the weights as given: a weight of 0 is a weight, not a missing one "
                  "(all-zero weights are not replaced by ones, as `if not np.any(weights)` "
                  "would).",
                  rule=HUBER_LOSS_FORMULA)


def _loss_verdict(inputs, data):
    problem = wrong_amount("losses", data.get("losses"), len(inputs["cases"]),
                           rule=LOSS_IS_A_NUMBER)
    if problem:
        return problem
    expected = reference(LESSON, "losses", inputs["cases"])
    for number, (case, values) in enumerate(zip(inputs["cases"], data["losses"]), 1):
        rows = len(case["actions"])
        if len(values) != 1:
            hint = (": the loss of each row, not their weighted mean" if len(values) == rows
                    else "")
            return failed(f"batch #{number} ({rows} rows): huber_loss returned {len(values)} "
                          f"numbers{hint}; it returns L, one float.", rule=LOSS_IS_A_NUMBER)
        got, want = values[0], expected["weighted_mean"][number - 1]
        if _close(got, want):
            continue
        weighted = len(set(case["weights"])) > 1
        situation = (f"batch #{number} ({rows} rows, "
                     f"{'weights ' + str(case['weights']) if weighted else 'all weights 1'}): "
                     f"your loss is {got:.6g}, expected {want:.6g}")
        # the loss is linear in the weights: rescaled to a largest of 1, it is this
        rescaled = want / max(case["weights"])
        for wrong, hint, rule in (
                (expected["unweighted"], "the importance weights are ignored: multiply each "
                 "row's Huber loss by its own weight", LOSS_WEIGHTED),
                ([rescaled] * number, "the weights were rescaled (to a largest of 1): use "
                 "them as given, the buffer has normalised them already", LOSS_WEIGHTED),
                (expected["weighted_sum"], "that is the sum over the batch: take the mean",
                 LOSS_MEAN),
                (expected["normalised_by_weights"], "divide by the batch size, not by the "
                 "sum of the weights", LOSS_MEAN),
                (expected["squared"], "that is half the squared error everywhere: past "
                 "|error| = 1 the Huber loss grows linearly, |error| - 1/2",
                 HUBER_LOSS_FORMULA),
                (expected["all_actions"], "only the action taken in each row has a target: "
                 "the loss looks at Q[i, actions[i]] alone", ACTION_TAKEN_ONLY)):
            if _close(got, wrong[number - 1]):
                return failed(f"{situation}: {hint}.", rule=rule)
        return failed(f"{situation}. The loss is mean_i w_i * huber(Q[i, a_i] - y_i), with "
                      "huber(x) = x^2 / 2 for |x| <= 1 and |x| - 1/2 beyond.",
                      rule=HUBER_LOSS_FORMULA)
    return (_zero_weights_problem(inputs, data, expected["unweighted"][0])
            or _one_row_loss_problem(inputs, data) or passed(
                "the loss is the mean over the batch of each row's weight times the Huber "
                "loss of its TD error (0 when every weight is 0), one float for a batch of "
                "one row too."))


# --- its gradient, against finite differences of the student's own loss ----------------------

FD_STEP = 1e-6


def _gradient_inputs(rng):
    # the weighted ones, and a batch in which the last action is never taken: the gradient
    # still has a column for it (the Q-values' shape, not the actions'), and a batch whose
    # weights are all 0 (the loss is 0 whatever the Q-values: so is its gradient)
    return {"cases": [*loss_cases(rng)[1:], _case_without_the_last_action(rng),
                      _case_of_zero_weights(rng)]}


def _case_of_zero_weights(rng):
    case = _batch_case(rng, 3, 3)
    return {**case, "weights": [0.0] * len(case["weights"])}


def _case_without_the_last_action(rng):
    return _batch_case(rng, 3, 2)  # actions 0 and 1 only, of three


def _batch_case(rng, n_actions, taken):
    """4 to 7 rows of Q-values over ``n_actions``, actions drawn below ``taken``, TD errors
    on both sides of the Huber kink and weights in (0.1, 1)."""
    size = int(rng.integers(4, 8))
    q_values = rng.normal(scale=2.0, size=(size, n_actions))
    actions = rng.integers(taken, size=size)
    errors = (np.where(rng.random(size) < 0.5, rng.uniform(0.05, 0.95, size),
                       rng.uniform(1.05, 4.0, size)) * rng.choice([-1.0, 1.0], size=size))
    q_values = q_values.round(6)
    targets = (q_values[np.arange(size), actions] - errors).round(6)
    return {"q_values": q_values.tolist(), "actions": actions.tolist(),
            "targets": targets.tolist(), "weights": rng.uniform(0.1, 1.0, size).round(4).tolist()}


def _gradient_probe(inputs, huber_loss, huber_loss_gradient):
    results = []
    for case in inputs["cases"]:
        q_values, actions, targets, weights = _case_arrays(case)
        gradient = _returned(call_student("huber_loss_gradient(q_values, actions, targets, "
                                          "weights)", huber_loss_gradient, q_values, actions,
                                          targets, weights), "huber_loss_gradient")
        differences = []
        for index in range(q_values.size):
            shifted = q_values.copy()
            shifted.flat[index] += FD_STEP
            up = _student_loss(huber_loss, shifted, actions, targets, weights)
            shifted.flat[index] -= 2 * FD_STEP
            down = _student_loss(huber_loss, shifted, actions, targets, weights)
            differences.append((up - down) / (2 * FD_STEP))
        results.append({"gradient": gradient, "finite_differences": differences,
                        "loss": _student_loss(huber_loss, q_values, actions, targets, weights)})
    one_row = _one_row_gradient_probe(inputs, huber_loss, huber_loss_gradient)
    # Q-values given as integers: the gradient is still a float array (the contract holds it)
    q_values, actions, targets, weights = _case_arrays(inputs["cases"][0])
    call_student("huber_loss_gradient(q_values, actions, targets, weights) with integer "
                 "q_values", huber_loss_gradient, np.round(q_values).astype(np.int64),
                 actions, targets, weights)
    # then a batch of the same shape at once: the gradient just returned stays the
    # caller's (the contracts compare it after this call)
    call_student("huber_loss_gradient(q_values, actions, targets, weights / 2) right after "
                 "a call on a batch of the same shape", huber_loss_gradient, q_values,
                 actions, targets, weights / 2)
    return {"results": results, "one_row": one_row}


def _one_row_gradient_probe(inputs, huber_loss, huber_loss_gradient):
    """The gradient on a batch of exactly one row (a refusal is data), and central finite
    differences of the student's own loss there: None when that loss fails on one row
    (its own check says so; the gradient is then held to the exact derivative)."""
    one = one_row_of(inputs["cases"][ONE_ROW_FROM_GRADIENT_CASE])
    q_values, actions, targets, weights = _case_arrays(one)
    got = attempted(call_student, _one_row_call("huber_loss_gradient", one),
                    huber_loss_gradient, q_values, actions, targets, weights)
    run = got if "raised" in got else {"gradient": _returned(got["value"],
                                                              "huber_loss_gradient")}
    differences = []
    for index in range(q_values.size):
        values = []
        for step in (FD_STEP, -FD_STEP):
            shifted = q_values.copy()
            shifted.flat[index] += step
            loss = attempted(_student_loss, huber_loss, shifted, actions, targets, weights)
            if "raised" in loss:
                return {**run, "finite_differences": None}
            values.append(loss["value"])
        differences.append((values[0] - values[1]) / (2 * FD_STEP))
    return {**run, "finite_differences": differences}


def _one_row_gradient_problem(inputs, data):
    """What huber_loss_gradient got wrong on a batch of one row, or None: its shape is
    (1, actions), and it matches finite differences of the student's loss there (or, when
    that loss fails on one row, the exact derivative w * clip(Q - y, -1, 1) / 1)."""
    case = one_row_of(inputs["cases"][ONE_ROW_FROM_GRADIENT_CASE])
    call = _one_row_call("huber_loss_gradient", case)
    shape = (1, len(case["q_values"][0]))
    exact = np.asarray(reference(LESSON, "gradients", [case])["exact"][0], dtype=np.float64)
    asked = (f"expected dL/dQ as a float array of the Q-values' shape {shape}, "
             f"{_shown(exact)}: w_0 * clip(Q[0, a_0] - y_0, -1, 1) / B with B = 1 at the "
             "action taken, 0 elsewhere")
    run = data.get("one_row")
    if not isinstance(run, dict):
        return failed(f"{call} left no record; {asked}." + ONE_ROW_IS_A_BATCH,
                      rule=GRADIENT_SHAPE)
    if run.get("raised"):
        return failed(f"{run['raised']}; {asked}." + ONE_ROW_IS_A_BATCH, rule=GRADIENT_SHAPE)
    returned = run.get("gradient") or {}
    if tuple(returned.get("shape") or ()) != shape:
        return failed(f"{call} returned an array of shape {tuple(returned.get('shape') or ())};"
                      f" {asked}." + ONE_ROW_IS_A_BATCH, rule=GRADIENT_SHAPE)
    gradient = np.asarray(returned["values"], dtype=np.float64).reshape(shape)
    numeric = run.get("finite_differences")
    if numeric is not None:
        numeric = np.asarray(numeric, dtype=np.float64).reshape(shape)
        if np.all(np.isfinite(numeric)) and np.allclose(gradient, numeric, rtol=1e-4,
                                                        atol=1e-6):
            return None
    if np.allclose(gradient, exact, **TOLERANCE):
        return None
    rates = ("" if numeric is None else
             f", and changing each Q-value changes your huber_loss at the rates "
             f"{_shown(numeric, 6)} (central finite differences, step {FD_STEP:g})")
    return failed(f"{call} returned {_shown(gradient, 6)}{rates}; {asked}.",
                  rule=GRADIENT_OF_THE_LOSS)


def _inexact_gradient_problem(number, result, gradient, expected):
    """Where the loss is the lesson's (to 1e-12), its gradient is exact too: w clip(Q - y,
    -1, 1) / B at the action taken (a gradient approximated by finite differences is off
    by 1e-6 and more); None if so, or if the loss is not (its own check says so).
    ``expected``: the reference's gradients, losses and errors of the check's cases."""
    if not math.isclose(result.get("loss", math.nan), expected["loss"][number - 1],
                        rel_tol=1e-12, abs_tol=1e-15):
        return None
    exact = np.asarray(expected["exact"][number - 1], dtype=np.float64)
    if np.allclose(gradient, exact, rtol=1e-9, atol=1e-12):
        return None
    row, column = np.unravel_index(np.argmax(np.abs(gradient - exact)), exact.shape)
    return failed(f"batch #{number}: d loss / d Q[{row}, {column}] is {gradient[row, column]!r} "
                  f"in your gradient; the exact derivative of the loss there is "
                  f"{exact[row, column]!r} (w * clip(Q - y, -1, 1) / B). Compute it from the "
                  "formula, not by finite differences: they are only close.",
                  rule=GRADIENT_OF_THE_LOSS)


def _zero_weights_gradient_problem(number, case, gradient, numeric):
    """A batch whose weights are all 0: the gradient is w_i * clip(delta_i, -1, 1) / B = 0
    everywhere; one that matches finite differences of the student's own loss passes too,
    and so does any where that loss is not a number (a loss that gets these weights wrong
    fails its own check). None if so."""
    if (np.all(gradient == 0) or not np.all(np.isfinite(numeric))
            or np.allclose(gradient, numeric, rtol=1e-4, atol=1e-6)):
        return None
    row, column = np.unravel_index(np.argmax(np.abs(gradient - numeric)), gradient.shape)
    rows = len(case["actions"])
    return failed(f"batch #{number} ({rows} rows, every weight 0): huber_loss_gradient "
                  f"returned {gradient[row, column]:.6g} at [{row}, {column}], where "
                  f"changing Q[{row}, {column}] changes your huber_loss at the rate "
                  f"{numeric[row, column]:.6g} (central finite differences); expected 0 "
                  "there, as everywhere: the gradient is w_i * clip(delta_i, -1, 1) / B and "
                  "every w_i is 0. Multiply each row by its weight as given: a weight of 0 "
                  "is a weight, not a missing one (all-zero weights are not replaced by ones).",
                  rule=GRADIENT_WEIGHTED)


def _gradient_verdict(inputs, data):
    problem = wrong_amount("gradients", data.get("results"), len(inputs["cases"]),
                           rule=GRADIENT_SHAPE)
    if problem:
        return problem
    expected = reference(LESSON, "gradients", inputs["cases"])
    for number, (case, result) in enumerate(zip(inputs["cases"], data["results"]), 1):
        shape = np.shape(case["q_values"])
        returned = result["gradient"]
        numeric = np.asarray(result["finite_differences"], dtype=np.float64)
        if tuple(returned["shape"]) != shape or numeric.size != math.prod(shape):
            return failed(f"batch #{number}: your gradient has shape "
                          f"{tuple(returned['shape'])}; it has the Q-values' shape {shape}, "
                          "zero except at the actions taken.", rule=GRADIENT_SHAPE)
        gradient = np.asarray(returned["values"], dtype=np.float64).reshape(shape)
        numeric = numeric.reshape(shape)
        if not any(case["weights"]):
            problem = _zero_weights_gradient_problem(number, case, gradient, numeric)
            if problem:
                return problem
            continue
        if not np.all(np.isfinite(numeric)) or np.abs(numeric).max() < 1e-9:
            return failed("your huber_loss does not change when the Q-values change, so its "
                          "gradient cannot be checked: write huber_loss first.",
                          rule=GRADIENT_OF_THE_LOSS)
        if np.allclose(gradient, numeric, rtol=1e-4, atol=1e-6):
            problem = _inexact_gradient_problem(number, result, gradient, expected)
            if problem:
                return problem
            continue
        weights = np.asarray(case["weights"], dtype=np.float64)
        errors = np.asarray(expected["errors"][number - 1], dtype=np.float64)
        if not np.all(np.isfinite(gradient)):
            row = int(np.argwhere(~np.isfinite(gradient))[0][0])
            return failed(f"batch #{number}: your gradient is {gradient[row].tolist()} in row "
                          f"{row}, whose TD error Q - y is {errors[row]:.6g}: it is a number "
                          "at every error (0 at an error of 0, +-w/B at +-1); "
                          "w * clip(error, -1, 1) / B needs no division by |error|.",
                          rule=GRADIENT_EVERYWHERE)
        unclipped = np.asarray(expected["unclipped"][number - 1], dtype=np.float64)
        moving = np.abs(numeric) > 1e-9  # where the loss changes (not at an error of 0)
        row, column = np.unravel_index(np.argmax(np.abs(gradient - numeric)), shape)
        situation = (f"batch #{number}: d loss / d Q[{row}, {column}] is {gradient[row, column]:.6g} "
                     f"in your gradient, but changing Q[{row}, {column}] changes your "
                     f"huber_loss at the rate {numeric[row, column]:.6g} (central finite "
                     f"differences, step {FD_STEP:g})")
        rule = GRADIENT_OF_THE_LOSS
        if column != case["actions"][row] and gradient[row, column] != 0:
            hint, rule = (" Only the action taken in each row appears in the loss.",
                          ACTION_TAKEN_ONLY)
        elif np.allclose(gradient, -numeric, rtol=1e-4, atol=1e-6):
            hint = " The signs are flipped: the gradient of (Q - y) is +1 with respect to Q."
        elif np.allclose(gradient, numeric * len(case["actions"]), rtol=1e-4, atol=1e-6):
            hint, rule = (" The loss is a mean: divide the gradient by the batch size too.",
                          GRADIENT_MEAN)
        elif np.allclose(gradient[moving] / numeric[moving],
                         weights[np.nonzero(moving)[0]] ** -1, rtol=1e-4):
            hint, rule = (" Multiply each row by its importance weight, as the loss does.",
                          GRADIENT_WEIGHTED)
        elif np.allclose(gradient, unclipped, rtol=1e-4, atol=1e-6):
            hint, rule = (" That is the squared error's gradient: past |error| = 1 the Huber "
                          "loss grows linearly, so clip the error to [-1, 1].",
                          GRADIENT_CLIPPED)
        else:
            hint = (" The Huber loss's derivative is the TD error clipped to [-1, 1], times "
                    "the row's weight, divided by the batch size.")
        return failed(situation + "." + hint, rule=rule)
    return _one_row_gradient_problem(inputs, data) or passed(
        "the gradient matches finite differences of your loss, weights (all 0 included), "
        "the clipping at |error| = 1 and a batch of one row included.")


# --- the DQN step ---------------------------------------------------------------------------

STEP_CALLS = 3


def _step_inputs_for(prioritized):
    def make(rng):
        batch_size = int(rng.integers(4, 10))
        sizes = [batch_size] * STEP_CALLS
        if not prioritized:  # the last batch holds another number of rows, as "no replay"'s
            sizes[-1] += int(rng.choice([-2, -1, 1, 2]))
        inputs = {"online_seed": int(rng.integers(2**31)),
                  "target_seed": int(rng.integers(2**31)), "batch_size": batch_size,
                  "discount": round(float(rng.uniform(0.8, 0.99)), 3), "learning_rate": 0.01,
                  "batches": [batch_rows(rng, size) for size in sizes],
                  "prioritized": prioritized, "beta": None}
        if prioritized:
            inputs["beta"] = round(float(rng.uniform(0.3, 1.0)), 2)
            for batch in inputs["batches"]:  # (weights normalised by the largest, as PER's)
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
    except (ProbeError, ContractBroken):  # its own check reports either
        return None


STEP_CALL = "dqn_step(online, target, optimizer, replay, batch_size, discount, beta)"


def _step_or_what_it_raised(description, dqn_step, *args):
    """The TD errors ``dqn_step(*args)`` returns (shape and numbers), or ``{"raised":
    why}``: for the calls of a configuration of their own (a batch of another size,
    beta=0), where a crash is what breaks that configuration's rule. Unwritten code is
    still reported as unwritten."""
    try:
        returned = call_student(description, dqn_step, *args)
        return {"raised": None, **_returned(returned, "dqn_step")}
    except NotWrittenYet:
        raise
    except ProbeError as error:
        return {"raised": str(error)}


def _step_probe(inputs, dqn_step, td_targets, huber_loss_gradient):
    online, target = ServedNetwork(inputs["online_seed"]), ServedNetwork(inputs["target_seed"])
    optimizer = RecordingAdam(online, inputs["learning_rate"])
    batches = [served_batch(batch) for batch in inputs["batches"]]
    # a buffer that holds fewer transitions than a batch (sampling is with replacement):
    # the step is taken all the same
    buffer = FixedBatches(batches, stored=max(1, inputs["batch_size"] // 2))
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
        arguments = (online, target, optimizer, buffer, inputs["batch_size"],
                     inputs["discount"], inputs["beta"])
        try:  # (the first two batches are of one size: a refilled result shows at call 2)
            if len(actions) == inputs["batch_size"]:
                returned = _returned(call_student(STEP_CALL, dqn_step, *arguments),
                                     "dqn_step")
            else:
                returned = _step_or_what_it_raised(STEP_CALL, dqn_step, *arguments)
        except ContractBroken as error:
            raise _refilled_result_named(error, inputs, [len(a) for _, a, *_ in batches],
                                         len(td_errors) + 1) from None
        if returned.get("raised"):
            raised = {"call": len(td_errors) + 1, "rows": len(actions),
                      "error": returned["raised"]}
            return {"raised_on_other_size": raised}
        td_errors.append(returned["values"])
    data = {"td_errors": td_errors, "samples": buffer.samples, "gradients": optimizer.recorded,
            "priority_updates": buffer.priority_updates, "target_loads": target.loads,
            "online_loads": online.loads, "your_targets": your_targets,
            "your_output_gradients": your_gradients}
    if inputs["prioritized"]:
        data["beta_zero"] = _beta_zero_probe(inputs, dqn_step)
        data["falsy_priorities"] = _falsy_priorities_probe(inputs, dqn_step)
    else:
        data["zero_errors_steps"] = _zero_errors_probe(inputs, dqn_step)
        data["one_row"] = _one_row_probe(inputs, dqn_step, td_targets, huber_loss_gradient)
        data["discount_zero"] = _discount_zero_probe(inputs, dqn_step, td_targets)
    return data


def _refilled_result_named(error, inputs, rows, number):
    """``error``, a ContractBroken of dqn_step's call ``number`` of the check's steps
    (``rows``: each step's number of rows), in words that name the earlier calls whose TD
    errors it may have refilled, when the framework found an earlier result changed (any
    other broken promise as it is)."""
    if error.rule is not INPUTS_UNTOUCHED or "an earlier call of it" not in str(error):
        return error
    size = rows[number - 1]
    alike = [n for n in range(1, number) if rows[n - 1] == size]
    earlier = alike or list(range(1, number))
    which = (f"call {earlier[0]}" if len(earlier) == 1 else
             "one of calls " + ", ".join(map(str, earlier)))
    call = (f"dqn_step(online, target, optimizer, replay, {inputs['batch_size']}, "
            f"{inputs['discount']}, {inputs['beta']})")
    named = ContractBroken(
        f"call {number} of {call} (its batch: {size} rows) changed the TD errors that "
        f"{which} returned" + (f" (a batch of {size} rows too)" if alike else "") + ": an "
        "array the caller already held was refilled by a later step. Every result you "
        "return stays the caller's: a later call never refills it. Make a new TD-error "
        "array in every call (targets - q_values[rows, actions] makes one); never keep one "
        "(per batch size, on the function or elsewhere) to fill again with "
        "np.subtract(..., out=...) or [:] =.", INPUTS_UNTOUCHED)
    named.origin = error.origin
    return named


def _zero_errors_probe(inputs, dqn_step):
    """How many optimizer steps one dqn_step makes on a batch whose TD errors are all
    exactly 0 (every row terminated, its reward the online network's own Q(s, a)): one,
    as on any batch (Adam's step count and moments move on all the same)."""
    online, target = ServedNetwork(inputs["online_seed"]), ServedNetwork(inputs["target_seed"])
    optimizer = RecordingAdam(online, inputs["learning_rate"])
    observations, actions, _, next_observations, _ = as_arrays(inputs["batches"][0])
    rows = np.arange(len(actions))
    rewards = online.predict(observations)[rows, actions]
    buffer = FixedBatches([(observations, actions, rewards, next_observations,
                            np.ones(len(actions), dtype=bool))])
    _step_or_what_it_raised(STEP_CALL, dqn_step, online, target, optimizer, buffer,
                            len(actions), inputs["discount"], None)
    return len(optimizer.recorded)


def _falsy_priorities_probe(inputs, dqn_step):
    """Two prioritized steps on fresh networks like the first call's, each on a batch
    whose feedback a falsy test would drop: one whose TD errors are all exactly 0 (every
    row terminated, its reward the online network's own Q(s, a): a batch the network
    already fits), and one from a buffer that holds a single transition (every
    row the first batch's first, from slot 0). Each records its TD errors and the
    update_priorities calls it made: once, with the batch's slots and those TD errors."""
    batch = served_batch(inputs["batches"][0])
    observations, actions, _, next_observations, _, weights, slots = batch
    online = ServedNetwork(inputs["online_seed"])
    rewards = online.predict(observations)[np.arange(len(actions)), actions]
    first = tuple(np.repeat(part[:1], len(actions), axis=0) for part in batch)
    runs = {}
    for name, served in (
            ("fitted", (observations, actions, rewards, next_observations,
                        np.ones(len(actions), dtype=bool), weights, slots)),
            ("slot_zero", (*first[:5], np.ones(len(actions)),
                           np.zeros(len(actions), dtype=np.int64)))):
        online, target = (ServedNetwork(inputs["online_seed"]),
                          ServedNetwork(inputs["target_seed"]))
        optimizer = RecordingAdam(online, inputs["learning_rate"])
        buffer = FixedBatches([served])
        returned = _step_or_what_it_raised(STEP_CALL, dqn_step, online, target, optimizer,
                                           buffer, inputs["batch_size"], inputs["discount"],
                                           inputs["beta"])
        runs[name] = {"raised": returned["raised"], "td_errors": returned.get("values"),
                      "slots": np.asarray(served[-1]).tolist(),
                      "priority_updates": buffer.priority_updates}
    return runs


def _one_row_probe(inputs, dqn_step, td_targets, huber_loss_gradient):
    """One step on fresh networks like the first call's, whose buffer answers
    replay.sample(batch_size) with a batch of one row (the first batch's last, which
    bootstraps): a batch of one row is a batch like any other, its step one TD error in a
    1-d array. What the student's own td_targets and huber_loss_gradient give on that row
    is recorded too: a step is not blamed for theirs (their own checks judge them)."""
    online, target = ServedNetwork(inputs["online_seed"]), ServedNetwork(inputs["target_seed"])
    optimizer = RecordingAdam(online, inputs["learning_rate"])
    row = tuple(array[-1:] for array in as_arrays(inputs["batches"][0]))
    observations, actions, rewards, next_observations, terminated = row
    targets = _numbers_or_none(_own_result(
        "td_targets(target_network, rewards, next_observations, terminated, discount) on a "
        "batch of one row", td_targets, ServedNetwork(inputs["target_seed"]), rewards,
        next_observations, terminated, inputs["discount"]), 1)
    gradient = None if targets is None else _own_result(
        "huber_loss_gradient(q_values, actions, targets, weights) on a batch of one row",
        huber_loss_gradient, online.predict(observations), actions, np.array(targets),
        np.ones(1))
    gradient = _packed_or_none(gradient)
    parts_work = gradient is not None and unpacked(gradient).shape == (1, N_ACTIONS) \
        and bool(np.all(np.isfinite(unpacked(gradient))))
    buffer = FixedBatches([row])
    returned = _step_or_what_it_raised(STEP_CALL, dqn_step, online, target, optimizer, buffer,
                                       inputs["batch_size"], inputs["discount"], None)
    return {"your_target": targets if parts_work else None, "raised": returned["raised"],
            "shape": returned.get("shape"), "td_errors": returned.get("values"),
            "samples": buffer.samples, "steps": len(optimizer.recorded)}


def _discount_zero_probe(inputs, dqn_step, td_targets):
    """One step with discount 0.0 on the first batch, on fresh networks like the first
    call's: the targets are the rewards, the TD errors rewards - Q(s, a) (0 is a discount,
    not a missing one). What the student's own td_targets gives with discount 0 is
    recorded: a step is not blamed for it."""
    online, target = ServedNetwork(inputs["online_seed"]), ServedNetwork(inputs["target_seed"])
    optimizer = RecordingAdam(online, inputs["learning_rate"])
    batch = as_arrays(inputs["batches"][0])
    _, actions, rewards, next_observations, terminated = batch
    targets = _numbers_or_none(_own_result(
        "td_targets(target_network, rewards, next_observations, terminated, 0.0)", td_targets,
        ServedNetwork(inputs["target_seed"]), rewards, next_observations, terminated, 0.0),
        len(actions))
    buffer = FixedBatches([batch])
    returned = _step_or_what_it_raised(DISCOUNT_ZERO_CALL.format(inputs["batch_size"]),
                                       dqn_step, online, target, optimizer, buffer,
                                       inputs["batch_size"], 0.0, None)
    return {"your_targets": targets, "raised": returned["raised"],
            "td_errors": returned.get("values")}


DISCOUNT_ZERO_CALL = "dqn_step(online, target, optimizer, replay, {}, 0.0, None)"


def _beta_zero_probe(inputs, dqn_step):
    """One step with beta=0 (prioritized replay without importance correction, every
    weight 1: the lesson's "PER, no importance weights" run) on the first batch, on fresh
    networks like the first call's: the same TD errors, the same calls of the buffer."""
    online, target = ServedNetwork(inputs["online_seed"]), ServedNetwork(inputs["target_seed"])
    optimizer = RecordingAdam(online, inputs["learning_rate"])
    *transitions, weights, slots = served_batch(inputs["batches"][0])
    buffer = FixedBatches([(*transitions, np.ones_like(weights), slots)])
    # beta=0 as the lesson writes it, an int: a beta is any number, not only a float
    returned = _step_or_what_it_raised(STEP_CALL.replace("beta)", "beta=0)"), dqn_step,
                                       online, target, optimizer, buffer, inputs["batch_size"],
                                       inputs["discount"], 0)
    return {"raised": returned["raised"], "td_errors": returned.get("values"),
            "samples": buffer.samples, "priority_updates": buffer.priority_updates,
            "steps": len(optimizer.recorded), "target_loads": target.loads}


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
        return failed(f"call {number}: the optimizer got something it could not read: {error}",
                      rule=STEP_GRADIENT)
    want = [np.asarray(g) for g in want]
    if len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want)):
        return None
    for (variant, hint), rule in zip(hints, HINT_RULES):
        alternative = [np.asarray(g) for g in variant[number - 1]]
        if len(got) == len(alternative) and all(_close(g, w) for g, w in zip(got, alternative)):
            return failed(f"call {number} of dqn_step: the gradients passed to "
                          f"optimizer.step are those you get when {hint}.", rule=rule)
    return failed(f"call {number} of dqn_step: the gradients passed to optimizer.step differ "
                  f"from {wanted}.", rule=STEP_GRADIENT)


# The rules the reference's hints (step_expectation's "hints", in this order) find broken:
# targets from the online network, then (prioritized batches) the weights left out.
HINT_RULES = (TARGETS_FROM_TARGET_NETWORK, STEP_WEIGHTED)


def _sample_call(call):
    """How a recorded sample call was made: replay.sample(5) or replay.sample(5, 0.4)."""
    batch_size, beta, beta_given = call
    return f"replay.sample({batch_size}{f', {beta}' if beta_given else ''})"


def _step_counts_problem(inputs, data):
    """What the calls dqn_step made (samples, optimizer steps, target loads) got wrong."""
    prioritized, batch_size = inputs["prioritized"], inputs["batch_size"]
    raised = data.get("raised_on_other_size")
    if raised:
        return failed(f"call {raised['call']} of dqn_step got a batch of {raised['rows']} rows "
                      f"from replay.sample({batch_size}), and {raised['error']}. A batch may "
                      "hold another number of rows than batch_size (the \"no replay\" buffer "
                      "returns its newest transitions): size everything from the batch you "
                      "get.", rule=ROWS_FROM_THE_BATCH)
    wanted = [batch_size, inputs["beta"], prioritized]
    sample_call = _sample_call(wanted)
    for what, got, rule in (("replay.sample calls", data["samples"], STEP_SAMPLES),
                            ("optimizer steps", data["gradients"], STEP_GRADIENT),
                            ("TD-error arrays", data["td_errors"], STEP_RETURNS)):
        if wrong_amount(what, got, STEP_CALLS, rule=rule):
            return failed(f"{STEP_CALLS} calls of dqn_step made {len(got)} {what}; each call "
                          f"samples one batch with {sample_call}, makes one optimizer step "
                          "and returns the batch's TD errors.", rule=rule)
    for call in data["samples"]:
        if call != wanted:
            return failed(f"expected {sample_call} in each step, got {_sample_call(call)}"
                          + ("" if prioritized else ": a uniform or combined buffer's sample "
                             "takes the batch size alone") + ".", rule=STEP_SAMPLES)
    for number, (got, batch) in enumerate(zip(data["td_errors"], inputs["batches"]), 1):
        rows = len(batch["actions"])
        if len(got) != rows:
            other_size = rows != batch_size
            return failed(f"call {number} of dqn_step returned {len(got)} TD errors for a batch "
                          f"of {rows} rows (replay.sample({batch_size}) returned {rows}); it "
                          "returns one per row of the batch"
                          + (": use the rows you get, not batch_size." if other_size else "."),
                          rule=ROWS_FROM_THE_BATCH if other_size else STEP_RETURNS)
    if data["target_loads"] or data["online_loads"]:
        which = "target" if data["target_loads"] else "online"
        return failed(f"dqn_step loaded parameters into the {which} network: the online network "
                      "changes only through optimizer.step, the target only in sync_target.",
                      rule=STEP_LEAVES_NETWORKS)
    return None


def _beta_zero_problem(inputs, data):
    """What the step with beta=0 (see _beta_zero_probe) got wrong, or None (and None for a
    uniform batch's check, which makes no such step)."""
    if not inputs["prioritized"]:
        return None
    run, batch_size = data.get("beta_zero"), inputs["batch_size"]
    told = (" beta=0 is prioritized replay without importance correction (every weight 1, "
            "the lesson's \"PER, no importance weights\" run): only beta=None means a uniform "
            "buffer.")
    if not isinstance(run, dict):
        return failed("the step with beta=0 left no record." + told, rule=BETA_ZERO)
    if run["raised"]:
        return failed(f"on a prioritized buffer with beta=0, {run['raised']}." + told,
                      rule=BETA_ZERO)
    if run["samples"] != [[batch_size, 0.0, True]]:
        made = ", ".join(_sample_call(call) for call in run["samples"]) or "no sample call"
        return failed(f"with beta=0 dqn_step made {made}; expected replay.sample({batch_size}, "
                      "0.0)." + told, rule=BETA_ZERO)
    want = data["td_errors"][0]  # the same batch on the same fresh networks, in call 1
    if run["td_errors"] is None or not _close(run["td_errors"], want):
        return failed(f"with beta=0 dqn_step returned TD errors {run['td_errors']}; the same "
                      f"batch on the same networks gave {_shown(want)} with beta="
                      f"{inputs['beta']} (TD errors do not depend on beta)." + told,
                      rule=BETA_ZERO)
    updates, slots = run["priority_updates"], inputs["batches"][0]["slots"]
    if len(updates) != 1 or updates[0][0] != slots or not _close(np.abs(updates[0][1]),
                                                                  np.abs(want)):
        return failed(f"with beta=0 dqn_step called replay.update_priorities {len(updates)} "
                      "time(s), expected once with the batch's slots and TD errors." + told,
                      rule=BETA_ZERO)
    if run["steps"] != 1 or run["target_loads"]:
        return failed(f"with beta=0 dqn_step made {run['steps']} optimizer steps"
                      f"{' and changed the target network' if run['target_loads'] else ''}; "
                      "expected one, as with any other beta." + told, rule=BETA_ZERO)
    return None


def _falsy_priorities_problem(inputs, data):
    """What the prioritized steps of _falsy_priorities_probe got wrong, or None (and None
    for a uniform batch's check, which makes no such steps)."""
    if not inputs["prioritized"]:
        return None
    runs, call = data.get("falsy_priorities"), STEP_CALL.replace("beta)", f"{inputs['beta']})")
    told = (" With a prioritized buffer every step calls replay.update_priorities(slots, "
            "td_errors) once, with the batch's slots and its TD errors, whatever their values: "
            "a TD error of 0 is a priority (the buffer turns it into its smallest), and "
            "slot 0 a slot, not missing ones (a test like `if np.any(td_errors):` or `if "
            "slots.any():` drops them).")
    if not isinstance(runs, dict):
        return failed("the prioritized steps on all-zero TD errors left no record." + told,
                      rule=PRIORITIES_FED_BACK)
    for name, situation in (
            ("fitted", ("a batch whose TD errors are all exactly 0 (every row terminated, "
                        "its reward the online network's own Q(s, a): the network already "
                        "fits it)")),
            ("slot_zero", ("a batch from a buffer holding a single transition (every row "
                           "from slot 0)"))):
        run = runs.get(name)
        if not isinstance(run, dict):
            return failed(f"the prioritized step on {situation} left no record." + told,
                          rule=PRIORITIES_FED_BACK)
        if run.get("raised"):
            return None  # a step that raises: the check's other calls say what is wrong
        updates, errors = run.get("priority_updates") or [], run.get("td_errors")
        made = "; ".join(f"update_priorities(slots={slots}, td_errors={_shown(given)})"
                         for slots, given in updates) or "no update_priorities call"
        if (len(updates) == 1 and updates[0][0] == run["slots"] and errors is not None
                and _close(np.abs(updates[0][1]), np.abs(errors))):
            continue
        return failed(f"{call} on {situation} returned the TD errors "
                      f"{_shown(errors) if errors is not None else None} and made {made}; "
                      f"expected one call, update_priorities(slots={run['slots']}, "
                      f"td_errors={_shown(errors) if errors is not None else None})." + told,
                      rule=PRIORITIES_FED_BACK)
    return None


def _taken_q_values(inputs, observations, actions):
    """Q(s, a) of the fresh online network (the step's, before its first call)."""
    q_values = QNetwork(CARTPOLE_NETWORK, inputs["online_seed"]).predict(
        np.asarray(observations, dtype=np.float64))
    return q_values[np.arange(len(actions)), np.asarray(actions, dtype=np.int64)]


def _one_row_problem(inputs, data):
    """What the step on a batch of one row (see _one_row_probe) got wrong, or None (and
    None for the prioritized check, which makes no such step)."""
    if inputs["prioritized"]:
        return None
    run, batch_size = data.get("one_row"), inputs["batch_size"]
    told = (" A batch may hold another number of rows than batch_size, one row included "
            "(the \"no replay\" buffer returns its newest transitions): size everything "
            "from the batch you get and keep its axis of rows (np.squeeze turns one row "
            "into no axis at all).")
    if not isinstance(run, dict):
        return failed("the step on a batch of one row left no record." + told,
                      rule=ROWS_FROM_THE_BATCH)
    if run.get("raised"):
        if run.get("your_target") is None:
            return None  # your td_targets or huber_loss_gradient fails on it: their checks say
        return failed(f"replay.sample({batch_size}) returned a batch of one row, and "
                      f"{run['raised']}." + told, rule=ROWS_FROM_THE_BATCH)
    if run.get("samples") != [[batch_size, None, False]]:
        made = ", ".join(_sample_call(call) for call in run.get("samples") or []) \
            or "no sample call"
        return failed(f"on a batch of one row dqn_step made {made}; expected "
                      f"replay.sample({batch_size}) once, whatever number of rows it returns."
                      + told, rule=ROWS_FROM_THE_BATCH)
    if run.get("shape") != [1]:
        return failed(f"replay.sample({batch_size}) returned a batch of one row, and dqn_step "
                      f"returned TD errors of shape {tuple(run.get('shape') or ())}; it returns "
                      "one per row of the batch, shape (1,)." + told, rule=ROWS_FROM_THE_BATCH)
    if run.get("steps") != 1:
        return failed(f"on a batch of one row dqn_step made {run.get('steps')} optimizer steps; "
                      "it makes one on every batch, whatever its number of rows.",
                      rule=STEP_GRADIENT)
    if run.get("your_target") is None:
        return None
    batch = {key: values[-1:] for key, values in inputs["batches"][0].items()}
    taken = _taken_q_values(inputs, batch["observations"], batch["actions"])
    wanted = [np.asarray(run["your_target"], dtype=np.float64) - taken,
              np.asarray(reference(LESSON, "targets", {
                  "seed": inputs["target_seed"], "batch": batch,
                  "discount": inputs["discount"]})["targets"], dtype=np.float64) - taken]
    if any(_close(run["td_errors"], want) for want in wanted):
        return None
    return failed(f"replay.sample({batch_size}) returned a batch of one row, and dqn_step "
                  f"returned the TD error {_shown(run['td_errors'])}; expected targets - "
                  f"Q(s, a) = {_shown(wanted[0])}." + told, rule=ROWS_FROM_THE_BATCH)


def _discount_zero_problem(inputs, data):
    """What the step with discount 0 (see _discount_zero_probe) got wrong, or None (and
    None for the prioritized check, which makes no such step)."""
    if inputs["prioritized"]:
        return None
    run = data.get("discount_zero")
    call = DISCOUNT_ZERO_CALL.format(inputs["batch_size"])
    told = (" `discount` is any value from 0 to 1: with 0 the targets are the rewards (0 is a "
            "discount, not a missing one). Hand td_targets the discount you are given: "
            "`discount or 0.99` (or `if not discount:`) turns 0 into another discount.")
    if not isinstance(run, dict):
        return failed(f"{call} left no record." + told, rule=DISCOUNT_ZERO)
    if run.get("your_targets") is None:
        return None  # your td_targets fails with discount 0: its own check says so
    if run.get("raised"):
        return failed(f"{run['raised']}." + told, rule=DISCOUNT_ZERO)
    batch = inputs["batches"][0]
    taken = _taken_q_values(inputs, batch["observations"], batch["actions"])
    wanted = [np.asarray(run["your_targets"], dtype=np.float64) - taken,
              np.asarray(batch["rewards"], dtype=np.float64) - taken]
    got = run.get("td_errors")
    if got is not None and any(_close(got, want) for want in wanted):
        return None
    return failed(f"{call} returned TD errors {_shown(got) if got is not None else got}; "
                  f"expected targets - Q(s, a) = {_shown(wanted[0])}, with the targets of "
                  f"discount 0 (the rewards, {_shown(batch['rewards'])})." + told,
                  rule=DISCOUNT_ZERO)


def _prioritized_problem(inputs, data):
    """What the prioritized check's steps of their own (beta=0, all-zero feedback) got
    wrong."""
    return _beta_zero_problem(inputs, data) or _falsy_priorities_problem(inputs, data)


def _uniform_problem(inputs, data):
    """What the uniform check's steps of their own (one row, discount 0) got wrong."""
    return _one_row_problem(inputs, data) or _discount_zero_problem(inputs, data)


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
            hint, rule = "", STEP_RETURNS
            if expected is not None:
                if _close(got, expected["td_errors_after_step"][number - 1]):
                    hint = " Compute them with the Q-values from before the optimizer step."
                    rule = TD_ERRORS_BEFORE
                if _close(got, expected["td_errors_online_targets"][number - 1]):
                    hint = (" Those are the TD errors with targets from the online network: "
                            "compute the targets with the target network.")
                    rule = TARGETS_FROM_TARGET_NETWORK
            else:
                hint = " (With the targets your own td_targets gives.)"
            return failed(f"call {number} of dqn_step returned TD errors {_shown(got)}; "
                          f"expected targets - Q(s, a) = {_shown(want)}.{hint}", rule=rule)
    if inputs["prioritized"]:
        updates = data["priority_updates"]
        if len(updates) != STEP_CALLS:
            return failed(f"{STEP_CALLS} prioritized steps called replay.update_priorities "
                          f"{len(updates)} times: once per step, with the batch's slots and "
                          "its TD errors.", rule=PRIORITIES_FED_BACK)
        for number, ((slots, errors), batch, want) in enumerate(
                zip(updates, inputs["batches"], td_errors), 1):
            if slots != batch["slots"]:
                return failed(f"call {number}: update_priorities got slots {slots}, but the "
                              f"batch came from slots {batch['slots']}.",
                              rule=PRIORITIES_FED_BACK)
            if not _close(np.abs(errors), np.abs(want)):
                return failed(f"call {number}: update_priorities got TD errors "
                              f"{_shown(errors)}, expected {_shown(want)} (or their absolute "
                              "values).", rule=PRIORITIES_FED_BACK)
    elif data["priority_updates"]:
        return failed("a uniform batch has no priorities to update: call "
                      "replay.update_priorities only when beta is given.",
                      rule=PRIORITIES_FED_BACK)
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
    steps = data.get("zero_errors_steps", 1)
    if steps != 1:
        return failed(f"on a batch whose TD errors are all exactly 0 (the gradient all zeros) "
                      f"dqn_step made {steps} optimizer steps; it makes one on every batch "
                      "(Adam counts its steps and decays its moments even then).",
                      rule=STEP_GRADIENT)
    kind = ("prioritized batches: each row's gradient scaled by its own importance weight, "
            "and the TD errors fed back as priorities (all zeros, and slot 0, included); "
            "beta=0 is prioritized too"
            if inputs["prioritized"] else "uniform batches, with targets from the target "
            "network, batches of another size than batch_size (one row included) among "
            "them, and with discount 0")
    expected = reference(LESSON, "step_expectation", inputs)
    problem = _steps_problem(inputs, data, expected["gradients"], expected["td_errors"],
                             expected)
    if problem is None:
        return _prioritized_problem(inputs, data) or _uniform_problem(inputs, data) or passed(
            f"{STEP_CALLS} steps on {kind}, match the reference's gradients and TD errors.")
    yours = with_your_own_parts(inputs, data)
    if yours is None:
        return problem
    own_problem = _steps_problem(inputs, data, *yours)
    if own_problem is None:
        return _prioritized_problem(inputs, data) or _uniform_problem(inputs, data) or passed(
            f"{STEP_CALLS} steps on {kind}, match what a correct step gives with your own "
            "td_targets and huber_loss_gradient (their own tests judge them).")
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
    # the third run never trains the online network: at step 2 period the target already
    # equals it, and the sync is due all the same (it says True though nothing changes)
    # (the third with period 6, not a power of two: a bit mask is no modulo there)
    for period, steps, trains in ((inputs["period"], inputs["steps"], True), (1, 3, True),
                                  (6, 13, False)):
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
            if trains:
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
        records.append({"period": period, "trains": trains, "steps": run})
    # steps past 2**53, where a float division cannot tell an odd step from an even one
    online = mirrored(QNetwork, CARTPOLE_NETWORK, inputs["seed"], logged=NETWORK_WRITES,
                      settable=NETWORK_ATTRIBUTES)
    target = mirrored(QNetwork, CARTPOLE_NETWORK, inputs["seed"] + 1, logged=NETWORK_WRITES,
                      settable=NETWORK_ATTRIBUTES)
    target_there = lent_where(target, near=sync_target)
    huge = []
    for step in HUGE_STEPS:
        before = _parameters(target_there, "target")
        said = call_student(f"sync_target(online, target, {step}, 2)", sync_target, online,
                            target, step, 2)
        huge.append({"step": step, "said": bool(said) if isinstance(said, (bool, np.bool_))
                     else None, "changed": not _same_arrays(_parameters(target_there, "target"),
                                                            before)})
    return {"runs": records, "huge": huge}


HUGE_STEPS = (2**53 + 1, 2**53 + 2)  # with period 2: not due, then due


def _same_arrays(first, second):
    return len(first) == len(second) and all(
        np.shape(a) == np.shape(b) and np.array_equal(a, b) for a, b in zip(first, second))


def _sync_verdict(inputs, data):
    problem = wrong_amount("runs", data.get("runs"), 3, rule=SYNC_AT_MULTIPLES)
    if problem:
        return problem
    for run in data["runs"]:
        period = run["period"]
        for step, record in enumerate(run["steps"], start=1):
            due = step % period == 0
            where = f"with period {period}, at step {step}" + (
                "" if run.get("trains", True) else
                " (the online network not trained since the last sync: the target already "
                "equals it, and the sync is due all the same)")
            if record.get("online_changed"):
                return failed(f"{where} sync_target changed the online network: it copies "
                              "the online network into the target, never the other way.",
                              rule=COPY_ONLINE_INTO_TARGET)
            if due and not record["equal"]:
                return failed(f"{where} the target network should become a copy of the "
                              "online one (every `period` steps: steps period, 2 period, ...)"
                              ", but it did not.", rule=SYNC_AT_MULTIPLES)
            if not due and record["changed"]:
                rule = SYNC_AT_MULTIPLES
                if record["said"]:
                    hint = (f": sync at steps {period}, {2 * period}, {3 * period}, ... "
                            "(step % period == 0), and only there.")
                elif record["equal"]:
                    rule = TARGET_IS_A_COPY
                    hint = (". It follows the online network's changes: it shares its arrays "
                            "instead of holding a copy (load_parameters(online.parameters()) "
                            "copies, and so does assigning copies of the arrays).")
                else:
                    hint = "."
                return failed(f"{where} the target network changed, but it is synced only "
                              "at multiples of the period" + hint, rule=rule)
            if record["said"] is not due:
                return failed(f"{where} sync_target returned {record['said']!r}; return True "
                              "when it synced and False otherwise.", rule=SYNC_RETURNS)
    for record in data.get("huge") or []:
        due = record["step"] % 2 == 0
        if record["said"] is not due or record["changed"] is not due:
            return failed(f"with period 2, at step {record['step']:,} (2**53 + "
                          f"{record['step'] - 2**53}) sync_target returned {record['said']!r} "
                          f"and {'changed' if record['changed'] else 'left'} the target: the "
                          f"step is {'even' if due else 'odd'}. Test the step with integers "
                          "(step % period == 0); a float division rounds steps this large.",
                          rule=SYNC_AT_MULTIPLES)
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


LEARNING_CALL = ("the course's DQN loop (train_dqn), calling your dqn_step(online, target, "
                 "optimizer, replay, batch_size, discount, beta) and sync_target(online, "
                 "target, step, period)")


def _learning_probe(inputs, dqn_step, sync_target):
    """The course's loop trains a CartPole DQN with the student's dqn_step and sync_target,
    where they run (checks/dqn_loop.py): a run is one call, and the grader replays its
    transcript on its own CartPole, buffer, networks and optimizer, which are what the
    verdict reads."""
    settings = learning_settings(inputs)
    loop = public_where(train_dqn_lent, near=dqn_step)
    parameters, curves = [], []
    for seed in inputs["seeds"]:
        ledger = Ledger()
        online, target, optimizer = mirrored_networks(ledger)(seed, settings)
        run = DQNLoopWitness(seed, settings, ledger, online.network)
        env = mirrored(make_cartpole, seed, logged=("reset", "step"), calls=(),
                       original=run.env)
        replay = mirrored(UniformReplay, settings.capacity, seed, logged=("add", "sample"),
                          calls=(), original=run.replay)
        turns = mirrored(Turns, logged=("begin",), calls=(), original=run.turns)
        call_student(LEARNING_CALL, loop, dqn_step, sync_target, env, replay, online, target,
                     optimizer, turns, seed, dataclasses.asdict(settings))
        run.finished()
        parameters.append([packed(p, "float64") for p in online.network.parameters()])
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
    problem = wrong_amount("networks", data.get("parameters"), len(inputs["seeds"]),
                           rule=DQN_LEARNS)
    if problem:
        return problem
    yours = []
    for seed, values in zip(inputs["seeds"], data["parameters"]):
        network = QNetwork(CARTPOLE_NETWORK, 0)
        try:
            network.load_parameters([unpacked(v) for v in values])
        except (ValueError, TypeError):
            return failed("the trained network's parameters could not be read.",
                          rule=DQN_LEARNS)
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
                      "it. (A random policy returns about 22.)", figure=figure,
                      rule=DQN_LEARNS)
    return passed(summary + ".", figure=figure)


TD_TARGETS = Callee("td_targets", LESSON, ("test_td_targets",))
HUBER_LOSS = Callee("huber_loss", LESSON, ("test_huber_loss",))
HUBER_GRADIENT = Callee("huber_loss_gradient", LESSON, ("test_huber_gradient",))
STEP_PARTS = (TD_TARGETS, HUBER_GRADIENT)

STEP_RULES = (STEP_SAMPLES, TARGETS_FROM_TARGET_NETWORK, STEP_GRADIENT, TD_ERRORS_BEFORE,
              STEP_RETURNS, STEP_LEAVES_NETWORKS, PRIORITIES_FED_BACK)

# What every call of this lesson's code promises (checks.contracts): exact result types,
# numpy scalars accepted where the text allows them; inputs untouched holds for all.
CONTRACTS = {
    "td_targets": Contract(array("f", 1), numpy_scalars=(4,), pure=True),
    "huber_loss": Contract(FLOAT, pure=True),
    "huber_loss_gradient": Contract(array("f", 2), pure=True),
    # pure=True here for what the framework ties to it: each call's result is kept, and a
    # later call that refills one (a TD-error array kept per batch size) breaks
    # inputs-untouched (checks.framework counts an earlier result changed for a pure
    # contract only). dqn_step is no function of its arguments alone: it must never get
    # numpy_scalars here, which a pure contract makes the framework call a second time.
    "dqn_step": Contract(array("f", 1), pure=True),
    "sync_target": Contract(BOOL, numpy_scalars=(2, 3)),
}

CHECKS = LessonChecks(LESSON, [
    Check("test_td_targets", "TD targets from the target network", ("td_targets",),
          _targets_inputs, _targets_probe, _targets_verdict,
          asks="td_targets gives r + discount * max over the target network's Q(s', a') per "
               "row, the reward alone where the episode terminated, as an array of shape "
               "(batch,), with any discount, 0 included.",
          rules=(TARGETS_FORMULA, NO_BOOTSTRAP_WHEN_TERMINATED, TRUNCATED_BOOTSTRAPS,
                 TARGETS_SHAPE, DISCOUNT_ZERO)),
    Check("test_huber_loss", "the importance-weighted Huber loss", ("huber_loss",),
          _loss_inputs, _loss_probe, _loss_verdict,
          asks="huber_loss returns the mean over the batch of each row's importance weight "
               "(as given) times the Huber loss of its taken action's TD error, one float.",
          rules=(HUBER_LOSS_FORMULA, LOSS_WEIGHTED, LOSS_MEAN, ACTION_TAKEN_ONLY,
                 LOSS_IS_A_NUMBER)),
    Check("test_huber_gradient", "its gradient, against finite differences",
          ("huber_loss", "huber_loss_gradient"), _gradient_inputs, _gradient_probe,
          _gradient_verdict, calls=(HUBER_LOSS,),
          asks="huber_loss_gradient matches central finite differences of your own "
               "huber_loss, in the Q-values' shape, at TD errors of exactly 0 and +-1 too.",
          rules=(GRADIENT_OF_THE_LOSS, GRADIENT_SHAPE, GRADIENT_CLIPPED, GRADIENT_WEIGHTED,
                 GRADIENT_MEAN, GRADIENT_EVERYWHERE, ACTION_TAKEN_ONLY)),
    Check("test_dqn_step", "the DQN step on a uniform batch",
          ("dqn_step", "td_targets", "huber_loss_gradient"), _step_inputs_for(False),
          _step_probe, _step_verdict, calls=STEP_PARTS,
          asks="With beta=None dqn_step samples replay.sample(batch_size), takes targets from "
               "the target network, makes one optimizer step and returns the TD errors from "
               "before it, for a batch of any number of rows.",
          rules=(*STEP_RULES, ROWS_FROM_THE_BATCH, DISCOUNT_ZERO)),
    Check("test_dqn_step_prioritized", "the DQN step on a prioritized batch",
          ("dqn_step", "td_targets", "huber_loss_gradient"), _step_inputs_for(True),
          _step_probe, _step_verdict, calls=STEP_PARTS,
          asks="With a beta (0 included) dqn_step samples replay.sample(batch_size, beta), "
               "weights each row by its importance weight and feeds the TD errors back with "
               "replay.update_priorities.",
          rules=(*STEP_RULES, STEP_WEIGHTED, BETA_ZERO)),
    Check("test_target_sync", "the target network's schedule", ("sync_target",),
          _sync_inputs, _sync_probe, _sync_verdict,
          asks="sync_target makes the target a copy of the online network at steps period, "
               "2 period, ... and at no other step, and returns whether it did.",
          rules=(SYNC_AT_MULTIPLES, TARGET_IS_A_COPY, COPY_ONLINE_INTO_TARGET, SYNC_RETURNS)),
    Check("test_dqn_learning", "DQN learning CartPole", ("dqn_step", "sync_target"),
          _learning_inputs, _learning_probe, _learning_verdict, time_limit=300.0,
          learning=True, prepare=_learning_baseline,
          calls=(*STEP_PARTS, Callee("dqn_step", LESSON, ("test_dqn_step",
                                                          "test_dqn_step_prioritized")),
                 Callee("sync_target", LESSON, ("test_target_sync",))),
          asks="Your dqn_step and sync_target train a DQN on CartPole to at least 35% of the "
               "grader's greedy return on the same seeds.",
          rules=(DQN_LEARNS,)),
], contracts=CONTRACTS)
