"""References for lesson 03's checks: the sum tree's totals and searches, the prioritized
buffer's priorities, probabilities and weights, beta annealing, the weighted Q-learning
update, the PER loop, and uniform replay's baseline on the Blind Cliffwalk.

Where a verdict needs the answer for something the student's code chose (the slots it
sampled), these return a table over every possibility, and the verdict indexes it.
"""

import math

import numpy as np

from checks.lesson03_prioritized_replay.buffer import EPSILON, INITIAL_MAX_PRIORITY
from checks.lesson03_prioritized_replay.cliffwalk_learning import CLIFFWALK_BUDGET
from checks.lesson03_prioritized_replay.sum_tree import update_batches


def _priority(td_error, alpha):
    return (abs(td_error) + EPSILON) ** alpha


# --- the sum tree ------------------------------------------------------------------------

def tree_totals(inputs):
    """The exact sum of the priorities after each batch of ``update_batches(inputs)``
    (``totals``), and the priority each slot holds at the end (``leaves``)."""
    leaves = np.zeros(inputs["capacity"])
    totals = []
    for slots, priorities in update_batches(inputs):
        leaves[slots] = priorities
        totals.append(math.fsum(leaves))
    return {"totals": totals, "leaves": leaves.tolist()}


def brute_force_prefix_search(priorities, masses):
    """The slot each mass falls in: the first i with p_0 + ... + p_i > mass, masses
    clamped into [0, total)."""
    cumulative = np.cumsum(priorities)
    total = cumulative[-1]
    clamped = np.clip(masses, 0.0, np.nextafter(total, 0.0))
    return np.searchsorted(cumulative, clamped, side="right").tolist()


# --- the buffer ----------------------------------------------------------------------------

def new_transition_priority(update_rounds, alpha):
    """The priority p^alpha a new transition gets after update_priorities was called with
    each list of TD errors in ``update_rounds``: the largest p = |delta| + epsilon given
    so far (1 at first), to the power alpha (alpha=1: the priority without the power)."""
    largest = INITIAL_MAX_PRIORITY
    for td_errors in update_rounds:
        largest = max([largest, *(abs(e) + EPSILON for e in td_errors)])
    return largest ** alpha


def priorities_after_rounds(rounds, stored, alpha):
    """The priorities of slots 0..stored-1 after each round of update_priorities
    (``{"slots", "td_errors"}``), all ``stored`` added at the maximal priority first."""
    leaves = [INITIAL_MAX_PRIORITY ** alpha] * stored
    after = []
    for update in rounds:
        for slot, error in zip(update["slots"], update["td_errors"]):
            leaves[slot] = _priority(error, alpha)
        after.append(list(leaves))
    return after


def sampling_probabilities(td_errors, alpha):
    """P(i) = p_i^alpha / sum p^alpha for the slots whose TD errors are ``td_errors``."""
    priorities = np.array([_priority(e, alpha) for e in td_errors])
    return priorities / priorities.sum()


def importance_weights(td_errors, alpha, beta):
    """Tables for the weights of any batch drawn from slots with these TD errors:
    ``unnormalised[i]`` = (N P(i))^-beta, and ``relative_to[j][i]`` = slot i's weight in a
    batch whose largest unnormalised weight is slot j's (the batch's normalised weight)."""
    probabilities = sampling_probabilities(td_errors, alpha)
    unnormalised = (len(td_errors) * probabilities) ** -beta
    return {"unnormalised": unnormalised,
            "relative_to": unnormalised[np.newaxis, :] / unnormalised[:, np.newaxis]}


def beta_schedule(steps, total_steps, beta_start):
    """beta at each of ``steps``: linear from beta_start at 0 to 1 at total_steps, then 1."""
    return [beta_start + min(1.0, step / total_steps) * (1.0 - beta_start) for step in steps]


# --- learning with the weights ------------------------------------------------------------

def weighted_q_learning(inputs):
    """(TD error, Q(s, a) after) for each transition, by the rule the lesson states."""
    q = np.zeros((inputs["n_states"], inputs["n_actions"]))
    out = []
    for state, action, reward, next_state, done, weight in inputs["transitions"]:
        target = reward + (0.0 if done else inputs["discount"] * q[next_state].max())
        td_error = target - q[state, action]
        q[state, action] += inputs["alpha"] * weight * td_error
        out.append((td_error, q[state, action]))
    return out


def per_loop_expectation(inputs, run):
    """What the loop should have done with a recorded run of the grader's buffer
    (``run``: the transitions ``added`` and the ``samples`` it handed out): the TD errors
    of each replayed batch (``td_errors``), and the final Q-table (``qtable``)."""
    q = np.zeros((inputs["length"] + 1, 2))
    alpha, gamma = inputs["alpha"], inputs["discount"]

    def step(row, weight):
        state, action, reward, next_state, done = row
        td_error = reward + (0.0 if done else gamma * q[next_state].max()) - q[state, action]
        q[state, action] += alpha * weight * td_error
        return td_error

    errors = []
    for number, sample in enumerate(run["samples"]):
        step(run["added"][number], 1.0)  # the online update on the new transition
        errors.append([step(run["added"][slot], weight)
                       for slot, weight in zip(sample["slots"], sample["weights"])])
    return {"td_errors": errors, "qtable": q}


def uniform_updates_to_solve(n, seeds):
    """What uniform replay needs on the same memories (the grader's own baseline)."""
    from course.blind_cliffwalk import UniformMemoryReplay, learn_from_replay, replay_memory

    needed = []
    for seed in seeds:
        memory = replay_memory(n, seed)
        needed.append(learn_from_replay(UniformMemoryReplay(memory, seed), memory,
                                        40 * CLIFFWALK_BUDGET[n]).updates_to_solve)
    return needed
