"""Lesson 03's check of prioritized_q_update, the Q-learning update weighted by its
importance-sampling weight."""

from checks.expected import expected as reference
from checks.framework import call_student, failed, passed, wrong_amount
from checks.lending import mirrored
from checks.lesson03_prioritized_replay.driving import LESSON, _close, _numbers
from checks.requirements import Rule


# --- the rules: what the lesson tells a student, as its checks test it ---------------------

# test_weighted_update
WEIGHTED_STEP = Rule("weighted-step", "prioritized_q_update sets Q(s, a) to "
                     "Q + alpha * w * delta, with the agent's alpha, through set_qvalue.")
TD_ERROR_BEFORE_UPDATE = Rule("td-error-before-update", "prioritized_q_update returns "
                              "delta = r + gamma max_a' Q(s', a') - Q(s, a), computed before "
                              "the update.")
NO_BOOTSTRAP_WHEN_DONE = Rule("no-bootstrap-when-done", "When done, the target is the reward "
                              "alone: no bootstrap from the next state.")


# --- the weighted Q-learning update ------------------------------------------------------------

# every zero twice in a row: calls alternate between Python's numbers and numpy's
# (checks.contracts), so each is passed in both forms
ZERO_WEIGHTS = (0, 0, 0.0, 0.0)


def _weighted_inputs(rng):
    n_states, n_actions = 5, 3
    transitions = [[int(rng.integers(n_states)), int(rng.integers(n_actions)),
                    float(rng.choice([-1.0, 0.0, 1.0, 2.5, 10.0])),
                    int(rng.integers(n_states)), bool(rng.random() < 0.3),
                    round(float(rng.uniform(0.05, 1.0)), 3)] for _ in range(30)]
    # then a weight of 0 in each form a number may take (0, 0.0; each call after the
    # next passes numpy's np.int64(0), np.float64(0.0)): no step at all, from a
    # transition with a TD error to learn, not a missing weight that means 1
    for weight in ZERO_WEIGHTS:
        transitions.append([int(rng.integers(n_states)), int(rng.integers(n_actions)),
                            float(rng.choice([-1.0, 1.0, 2.5, 10.0])),
                            int(rng.integers(n_states)), False, weight])
    return {"n_states": n_states, "n_actions": n_actions, "transitions": transitions,
            "alpha": round(float(rng.uniform(0.1, 0.9)), 2),
            "discount": round(float(rng.uniform(0.5, 0.99)), 2),
            "seed": int(rng.integers(2**31))}


# what code may do to the reference agent it is lent: its Q-values change by set_qvalue
# (and update); reads come from the student process's copy, which the grader checks
AGENT_WRITES = ("set_qvalue", "update")
# prioritized_q_update works "through the agent's get_qvalue, get_value and set_qvalue"
# [rule: td-error-before-update]: the agent lent to it offers those three methods and
# refuses every other (get_best_action, get_action, update, get_legal_actions), so that a
# call with a side effect, such as get_best_action's tie-break drawn from the agent's
# generator, which changes the agent's later actions, costs the check [rule: lent-as-stated]
UPDATE_WRITES = ("set_qvalue",)
UPDATE_READS = ("get_qvalue", "get_value")


def _weighted_probe(inputs, prioritized_q_update):
    from course.legal_actions import AllActions
    from qlearning import QLearningAgent

    agent = mirrored(QLearningAgent, alpha=inputs["alpha"], epsilon=0.0,
                     discount=inputs["discount"],
                     get_legal_actions=mirrored(AllActions, inputs["n_actions"]),
                     seed=inputs["seed"], logged=UPDATE_WRITES, calls=UPDATE_READS)
    results = []
    for state, action, reward, next_state, done, weight in inputs["transitions"]:
        # what the agent held before: names the rule a wrong TD error breaks (read with
        # get_qvalue alone: a student's own get_value is lesson 01's work, maybe unwritten)
        before = [float(agent.get_qvalue(state, action)),
                  max(float(agent.get_qvalue(next_state, other))
                      for other in range(inputs["n_actions"]))]
        td_error = call_student("prioritized_q_update(agent, ...)", prioritized_q_update,
                                agent, state, action, reward, next_state, done, weight)
        results.append([_numbers(td_error, "prioritized_q_update", 1)[0],
                        float(agent.get_qvalue(state, action)), *before])
    return {"results": results}


def _weighted_verdict(inputs, data):
    problem = wrong_amount("updates", data["results"], len(inputs["transitions"]),
                           rule=TD_ERROR_BEFORE_UPDATE)
    if problem:
        return problem
    expected = reference(LESSON, "weighted_q_learning", inputs)
    for number, (got, want, row) in enumerate(zip(data["results"], expected,
                                                  inputs["transitions"]), 1):
        state, action, reward, next_state, done, weight = row
        situation = (f"update #{number} (state {state}, action {action}, reward {reward}, "
                     f"next state {next_state}, done={done}, weight {weight}; alpha="
                     f"{inputs['alpha']}, discount={inputs['discount']})")
        if not isinstance(got, list) or len(got) != 4:
            return failed(f"{situation} gave no result.", rule=TD_ERROR_BEFORE_UPDATE)
        td_error, qvalue, q_before, value_before = got
        if not _close(td_error, want[0], rel=1e-7) and not (abs(want[0]) < 1e-12
                                                            and abs(td_error) < 1e-12):
            # every update before this one was right, so what the agent held is the
            # reference's: a bootstrapped target on a terminal step shows as that
            bootstrapped = (done and isinstance(q_before, float)
                            and isinstance(value_before, float) and value_before != 0 and
                            _close(td_error, reward + inputs["discount"] * value_before
                                   - q_before, rel=1e-7))
            return failed(f"{situation} returned TD error {td_error!r}; expected "
                          f"{want[0]:.6g} = target - Q(s, a) before the update"
                          + (", with no bootstrap when done: the target is the reward alone"
                             if done else "") + ".",
                          rule=NO_BOOTSTRAP_WHEN_DONE if bootstrapped else TD_ERROR_BEFORE_UPDATE)
        if not _close(qvalue, want[1], rel=1e-7) and not (abs(want[1]) < 1e-12
                                                          and abs(qvalue) < 1e-12):
            zero = (" A weight of 0 (0, 0.0 or numpy's zero alike) is a value, not a "
                    "missing one: alpha * 0 * delta leaves Q(s, a) as it was. Scale by the "
                    "weight as it is given (`weight or 1.0` turns 0 into a full step)."
                    if weight == 0 else "")
            return failed(f"after {situation} Q({state},{action}) is {qvalue!r}; expected "
                          f"{want[1]:.6g} = Q + alpha * weight * delta.{zero}",
                          rule=WEIGHTED_STEP)
    return passed(f"{len(inputs['transitions'])} weighted updates match "
                  "Q <- Q + alpha w delta and return delta.")
