"""Checks for lesson 01: the tabular Q-learning agent and its training loop on Taxi."""

import math

import numpy as np

from checks.framework import (Callee, Check, LessonChecks, call_student,
                              call_student_repeatedly, comparison, failed,
                              passed, reseed_global_generators, student_process_of,
                              wrong_amount)
from checks.expected import expected as reference
from checks.lending import mirrored
from checks.statistics import FALSE_FAILURE_RATE, describe_counts, fits
from checks.stub_envs import call_training_loop, lent_corridor, scripted_agent
from course.corridor import runaway_limit

LESSON = "01_qlearning"


def _legal_actions_table(rng, n_states, n_actions, min_legal=2):
    """Each state (a list index) gets its own random, sorted subset of legal actions."""
    return [sorted(rng.choice(n_actions, size=rng.integers(min_legal, n_actions + 1),
                              replace=False).tolist())
            for _ in range(n_states)]


def _make_agent(QLearningAgent, legal, seed, alpha=0.5, epsilon=0.0, discount=0.9):
    from course.legal_actions import LegalActions

    get_legal_actions = mirrored(LegalActions, legal)
    return call_student("QLearningAgent(alpha, epsilon, discount, get_legal_actions, seed)",
                        QLearningAgent, alpha=alpha, epsilon=epsilon, discount=discount,
                        get_legal_actions=get_legal_actions, seed=seed)


def _set_qvalues(agent, qvalues):
    """``qvalues[state]`` is a list of (action, value) pairs."""
    for state, row in enumerate(qvalues):
        for action, value in row:
            call_student(f"set_qvalue({state}, {action}, {value})", agent.set_qvalue,
                         state, action, value)


def _as_number(value):
    """A float for number-like results; a description of anything else."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return f"{type(value).__name__} {value!r}"[:80]


def _as_action(value):
    """An int for action-like results; a description of anything else."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    return f"{type(value).__name__} {value!r}"[:80]


def _describe_row(state, row):
    return ", ".join(f"Q({state},{action})={value:g}" for action, value in row)


# --- values and best action ------------------------------------------------------------

def _values_inputs(rng):
    n_states, n_actions = 8, int(rng.integers(4, 7))
    legal = _legal_actions_table(rng, n_states, n_actions)
    qvalues = []
    for state, actions in enumerate(legal):
        # distinct values, all negative in half of the states: a max that starts at 0 is wrong
        low, high = (-20.0, -0.5) if state % 2 else (-10.0, 10.0)
        draws = rng.choice(np.linspace(low, high, 400), size=len(actions), replace=False)
        qvalues.append([[a, round(float(q), 3)] for a, q in zip(actions, draws)])
    return {"legal": legal, "qvalues": qvalues, "seed": int(rng.integers(2**31))}


def _values_probe(inputs, QLearningAgent):
    agent = _make_agent(QLearningAgent, inputs["legal"], inputs["seed"])
    _set_qvalues(agent, inputs["qvalues"])
    states = range(len(inputs["qvalues"]))
    return {
        "values": [_as_number(call_student(f"get_value({s})", agent.get_value, s))
                   for s in states],
        "best_actions": [_as_action(call_student(f"get_best_action({s})",
                                                 agent.get_best_action, s))
                         for s in states],
    }


def _values_verdict(inputs, data):
    n_states = len(inputs["qvalues"])
    problem = (wrong_amount("values", data["values"], n_states)
               or wrong_amount("best actions", data["best_actions"], n_states))
    if problem:
        return problem
    for state, row in enumerate(inputs["qvalues"]):
        legal = inputs["legal"][state]
        expected_action, expected_value = max(row, key=lambda pair: pair[1])
        got_value = data["values"][state]
        if not isinstance(got_value, float) or not math.isclose(got_value, expected_value,
                                                                 abs_tol=1e-9):
            hint = (" Every legal Q-value here is negative: did your maximum start at 0, or "
                    "include actions that are not legal here (never set, so 0)?"
                    if expected_value < 0 and got_value == 0 else "")
            return failed(f"state {state} has legal actions {legal} with "
                          f"{_describe_row(state, row)}; get_value should be "
                          f"{expected_value:g} (the largest of them) but returned "
                          f"{got_value}.{hint}")
        got_action = data["best_actions"][state]
        if got_action != expected_action:
            illegal = (" That action is not legal in this state: use get_legal_actions(state)."
                       if isinstance(got_action, int) and got_action not in legal else "")
            return failed(f"state {state} has {_describe_row(state, row)}; get_best_action "
                          f"should return {expected_action} but returned {got_action}."
                          f"{illegal}")
    return passed(f"get_value and get_best_action agree on {len(inputs['qvalues'])} states.")


# --- ties ----------------------------------------------------------------------------

TIE_DRAWS = 300  # with 3 tied actions each is expected 100 times


def _ties_inputs(rng):
    n_actions = int(rng.integers(4, 7))
    qvalues = []
    for state in range(4):
        tied = rng.choice(n_actions, size=2 + state % 2, replace=False).tolist()
        top = round(float(rng.uniform(-5, 5)), 2)
        qvalues.append([[a, top if a in tied else round(top - float(rng.uniform(0.5, 3)), 2)]
                        for a in range(n_actions)])
    return {"n_actions": n_actions, "qvalues": qvalues, "seed": int(rng.integers(2**31)),
            "global_seeds": rng.integers(2**31, size=2).tolist()}


def _ties_probe(inputs, QLearningAgent):
    legal = [list(range(inputs["n_actions"]))] * len(inputs["qvalues"])

    def choices(global_seed):
        # an agent with its own generator must not care
        reseed_global_generators(global_seed, near=QLearningAgent)
        agent = _make_agent(QLearningAgent, legal, inputs["seed"])
        _set_qvalues(agent, inputs["qvalues"])
        return [[_as_action(action) for action in call_student_repeatedly(
                    f"get_best_action({state})", agent.get_best_action, TIE_DRAWS, state)]
                for state in range(len(inputs["qvalues"]))]

    first, second = (choices(seed) for seed in inputs["global_seeds"])
    return {"first": first, "second": second}


def _ties_verdict(inputs, data):
    for run in ("first", "second"):
        problem = wrong_amount("states' draws", data[run], len(inputs["qvalues"]))
        for drawn in data[run] if not problem else []:
            problem = problem or wrong_amount("tie-breaking draws", drawn, TIE_DRAWS)
        if problem:
            return problem
    for state, row in enumerate(inputs["qvalues"]):
        top = max(value for _, value in row)
        tied = [action for action, value in row if value == top]
        drawn = data["first"][state]
        wrong = [a for a in drawn if a not in tied]
        if wrong:
            return failed(f"in state {state} actions {tied} share the highest Q-value, but "
                          f"get_best_action returned {wrong[0]}.")
        counts = [drawn.count(a) for a in tied]
        if not fits(counts, [1 / len(tied)] * len(tied)):
            return failed(
                f"in state {state} actions {tied} tie for the highest Q-value; over "
                f"{TIE_DRAWS} calls get_best_action returned "
                + ", ".join(f"{a} {c} times" for a, c in zip(tied, counts))
                + ". Ties must be broken uniformly at random with the agent's generator "
                "(self.rng), not always towards the same action.")
    if data["first"] != data["second"]:
        return failed("two agents built with the same seed broke ties differently after "
                      "Python's and numpy's global generators were reseeded. Draw from the "
                      "agent's own generator (self.rng), so runs reproduce.", fraction=0.5)
    return passed(f"ties are broken uniformly (rejection rate {FALSE_FAILURE_RATE:g}) and "
                  "reproducibly with the agent's seed.")


# --- epsilon-greedy -------------------------------------------------------------------

def _epsilon_inputs(rng):
    n_actions = 6
    legal = sorted(rng.choice(n_actions, size=int(rng.integers(3, 6)), replace=False).tolist())
    # distinct Q-values: a tie for the best would make the greedy choice random (a false
    # failure of the epsilon = 0 case, 1 salt in 200 when values were drawn independently)
    distinct = rng.choice(np.arange(-300, 301), size=len(legal), replace=False) / 100
    qvalues = [[a, float(q)] for a, q in zip(legal, distinct)]
    epsilon = round(float(rng.uniform(0.15, 0.6)), 2)
    # every expected count is at least 150, where the chi-square approximation is sound
    draws = int(math.ceil(150 * len(legal) / epsilon))
    return {"legal": legal, "qvalues": qvalues, "epsilon": epsilon, "draws": draws,
            "seed": int(rng.integers(2**31))}


def _epsilon_probe(inputs, QLearningAgent):
    legal = [inputs["legal"]]

    def actions(epsilon, draws, set_after_construction=False):
        start = 0.9 if set_after_construction else epsilon
        agent = _make_agent(QLearningAgent, legal, inputs["seed"], epsilon=start)
        _set_qvalues(agent, [inputs["qvalues"]])
        if set_after_construction:
            # an agent that copies epsilon on its first call is caught
            call_student_repeatedly("get_action(state)", agent.get_action, 20, 0)
            agent.epsilon = epsilon  # training loops decay epsilon through this attribute
        return [_as_action(action) for action in
                call_student_repeatedly("get_action(state)", agent.get_action, draws, 0)]

    return {"exploring": actions(inputs["epsilon"], inputs["draws"]),
            "greedy": actions(0.0, 200, set_after_construction=True),
            "random": actions(1.0, 150 * len(inputs["legal"]))}


def _epsilon_verdict(inputs, data):
    legal, epsilon = inputs["legal"], inputs["epsilon"]
    best, _ = max(inputs["qvalues"], key=lambda pair: pair[1])
    expected_draws = {"exploring": inputs["draws"], "greedy": 200, "random": 150 * len(legal)}
    for label, count in expected_draws.items():
        problem = wrong_amount("actions", data[label], count)
        if problem:
            return problem
    for label, drawn in data.items():
        illegal = [a for a in drawn if a not in legal]
        if illegal:
            return failed(f"get_action returned {illegal[0]!r}, but the legal actions in this "
                          f"state are {legal}. Explore among get_legal_actions(state) only.")
    not_best = [a for a in data["greedy"] if a != best]
    if not_best:
        return failed(f"with agent.epsilon set to 0 after construction, get_action returned "
                      f"{not_best[0]} instead of the best action {best}. Read self.epsilon "
                      "each call: training loops change it.")
    k = len(legal)
    for label, eps in (("exploring", epsilon), ("random", 1.0)):
        counts = [data[label].count(a) for a in legal]
        expected = [(1 - eps) * (a == best) + eps / k for a in legal]
        if not fits(counts, expected):
            return failed(
                f"with epsilon={eps} and legal actions {legal} (best {best}), get_action's "
                f"choices over {len(data[label])} calls do not fit the epsilon-greedy rule "
                f"(best action with probability 1 - eps + eps/{k}, every other with eps/{k}): "
                + describe_counts(counts, expected, [f"action {a}" for a in legal]) + ".")
    return passed(f"action frequencies fit epsilon-greedy at epsilon 0, {epsilon} and 1 "
                  f"(rejection rate {FALSE_FAILURE_RATE:g}).")


# --- update on fixed transitions --------------------------------------------------------

def _update_inputs(rng):
    n_states, n_actions, n_transitions = 5, 3, 40
    transitions = [[int(rng.integers(n_states)), int(rng.integers(n_actions)),
                    float(rng.choice([-1.0, -0.5, 0.0, 1.0, 2.5, 10.0])),
                    int(rng.integers(n_states)), bool(rng.random() < 0.3)]
                   for _ in range(n_transitions)]
    return {"n_states": n_states, "n_actions": n_actions, "transitions": transitions,
            # away from 0.5, where a swapped alpha and 1 - alpha would look right
            "alpha": round(float(rng.choice([rng.uniform(0.1, 0.4), rng.uniform(0.6, 0.9)])),
                           2),
            "discount": round(float(rng.uniform(0.5, 0.99)), 2),
            "seed": int(rng.integers(2**31))}


def _update_probe(inputs, QLearningAgent):
    legal = {s: list(range(inputs["n_actions"])) for s in range(inputs["n_states"])}
    agent = _make_agent(QLearningAgent, legal, inputs["seed"], alpha=inputs["alpha"],
                        discount=inputs["discount"])
    after_each = []
    for state, action, reward, next_state, terminated in inputs["transitions"]:
        call_student(f"update({state}, {action}, {reward}, {next_state}, {terminated})",
                     agent.update, state, action, reward, next_state, terminated)
        after_each.append(_as_number(call_student("get_qvalue", agent.get_qvalue,
                                                  state, action)))
    return {"after_each": after_each}


def _update_verdict(inputs, data):
    expected = reference(LESSON, "qvalues_after_updates", inputs)
    ignoring_terminated = reference(LESSON, "qvalues_after_updates", inputs, True)
    problem = wrong_amount("Q-values", data["after_each"], len(expected))
    if problem:
        return problem
    for index, (got, want) in enumerate(zip(data["after_each"], expected)):
        if isinstance(got, float) and math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-9):
            continue
        state, action, reward, next_state, terminated = inputs["transitions"][index]
        message = (f"with alpha={inputs['alpha']} and discount={inputs['discount']}, after "
                   f"update #{index + 1} (state {state}, action {action}, reward {reward}, "
                   f"next state {next_state}, terminated={terminated}) Q({state},{action}) "
                   f"should be {want:.6g} but is {got}.")
        if terminated and isinstance(got, float) and math.isclose(
                got, ignoring_terminated[index], rel_tol=1e-7, abs_tol=1e-9):
            message += (" That is what bootstrapping from the next state gives: when "
                        "terminated is True there is no future, so the target is the reward.")
        elif index == 0:
            message += (" The rule is Q(s,a) <- (1 - alpha) Q(s,a) + "
                        "alpha (r + discount max_a' Q(s',a')).")
        return failed(message)
    return passed(f"all {len(expected)} updates match the Q-learning rule, "
                  "terminal transitions included.")


# --- the training loop: terminated versus truncated ------------------------------------

def _loop_inputs(rng):
    length = int(rng.integers(3, 8))
    return {"length": length, "time_limit": int(rng.integers(length + 2, length + 10)),
            "step_reward": -1.0, "goal_reward": float(rng.integers(5, 20))}


DEFAULT_T_MAX = 10_000  # the default the signature gives


def _loop_probe(inputs, play_and_train):
    outcome = {}
    for case, action in (("reaches_goal", 1), ("runs_out_of_time", 0)):
        env = lent_corridor(inputs["length"], inputs["time_limit"],
                            step_reward=inputs["step_reward"],
                            goal_reward=inputs["goal_reward"])
        agent = scripted_agent(action)
        total = call_training_loop("play_and_train(env, agent)", play_and_train, env, agent)
        outcome[case] = {"returned": _as_number(total), "updates": agent.updates,
                         "steps": env.unwrapped.steps_taken, "resets": env.unwrapped.resets}
    # t_max ends an episode that no time limit ends first: given, and by its default
    for case, t_max, limit in (("stopped_by_t_max", inputs["time_limit"] - 2,
                                inputs["time_limit"]),
                               ("default_t_max", None, DEFAULT_T_MAX + 5)):
        env = lent_corridor(inputs["length"], limit, step_reward=inputs["step_reward"],
                            goal_reward=inputs["goal_reward"])
        agent = scripted_agent(0)
        if t_max is None:
            call_training_loop("play_and_train(env, agent)", play_and_train, env, agent)
        else:
            call_training_loop(f"play_and_train(env, agent, t_max={t_max})", play_and_train,
                               env, agent, t_max=t_max)
        outcome[case] = {"steps": env.unwrapped.steps_taken, "t_max": t_max}
    return outcome


def _loop_verdict(inputs, data):
    length, limit = inputs["length"], inputs["time_limit"]
    goal = data["reaches_goal"]
    timeout = data["runs_out_of_time"]
    for case in (goal, timeout):
        if case["resets"] < 1:
            return failed("play_and_train never called env.reset() to start the episode.")
        if len(case["updates"]) != case["steps"]:
            return failed(f"the episode took {case['steps']} steps but agent.update was called "
                          f"{len(case['updates'])} times: update once per step.")
    if goal["steps"] != length:
        return failed(f"in a corridor the agent finishes in {length} steps, but the episode "
                      f"ran {goal['steps']} steps: stop when terminated is True.")
    if not goal["updates"][-1][4]:
        return failed("the last step reached the goal (terminated=True), but agent.update "
                      "was told terminated=False.")
    expected_total = (length - 1) * inputs["step_reward"] + inputs["goal_reward"]
    if goal["returned"] != expected_total:
        return failed(f"play_and_train should return the episode's total reward "
                      f"{expected_total:g} but returned {goal['returned']}.")
    if timeout["steps"] > limit:
        stopped = " (where the grader stopped it)" if timeout["steps"] >= runaway_limit(
            limit) else ""
        return failed(f"the time limit is {limit} steps but the episode went on for "
                      f"{timeout['steps']}{stopped}: stop when truncated is True too.")
    if timeout["steps"] < limit:
        return failed(f"the episode stopped after {timeout['steps']} steps, before the time "
                      f"limit of {limit}, though it neither terminated nor was truncated.")
    for case, wanted in (("stopped_by_t_max", limit - 2), ("default_t_max", DEFAULT_T_MAX)):
        steps = data[case]["steps"]
        if steps != wanted:
            call = ("play_and_train(env, agent)" if case == "default_t_max" else
                    f"play_and_train(env, agent, t_max={wanted})")
            return failed(f"{call} on an episode that neither terminates nor is truncated "
                          f"before step {wanted} ran {steps} steps; t_max (default "
                          f"{DEFAULT_T_MAX:,}) is the most steps it may take.")
    if any(update[4] for update in timeout["updates"]):
        return failed("the episode was cut by the time limit (truncated=True, "
                      "terminated=False), but agent.update was told terminated=True. A time "
                      "limit is not a terminal state: the future still has value, so pass "
                      "`terminated`, not `terminated or truncated` (Pardo et al., 2018).")
    return passed("episodes end on terminated or truncated, and only terminated reaches "
                  "update.")


# --- learning on Taxi -----------------------------------------------------------------

LEARNING_EPISODES = 300  # most of the steps: a reference agent solves about half by then
LEARNING = dict(alpha=0.5, epsilon=0.25, discount=0.99, epsilon_decay=0.99)
SUCCESS_TOLERANCE = 0.10  # the run's mean success rate may trail the baseline's by this
RETURN_TOLERANCE = 25.0   # and its mean return by this much (a failure costs about -200)


def _learning_inputs(rng):
    return {"seeds": rng.integers(2**31, size=2).tolist(), "episodes": LEARNING_EPISODES,
            **LEARNING}


def _learning_probe(inputs, QLearningAgent, play_and_train):
    from checks.taxi_training import train_on_taxi

    # graded, the agent is the grader's reference (this lesson's answer: served, never
    # copied); in the student's own notebook it is their agent, run right there
    own_agent = QLearningAgent if student_process_of(QLearningAgent) is None else None

    settings = {k: v for k, v in inputs.items() if k not in ("seeds", "episodes")}

    def play_episode(env, agent):
        call_student("play_and_train(env, agent)", play_and_train, env, agent)

    return {"qtables": [train_on_taxi(play_episode, seed, [inputs["episodes"]], **settings,
                                      lent=True, agent_class=own_agent)[0].tolist()
                        for seed in inputs["seeds"]]}


def _learning_baseline(inputs):
    settings = {k: v for k, v in inputs.items() if k not in ("seeds", "episodes")}
    return reference(LESSON, "learning_baseline", inputs["seeds"], inputs["episodes"],
                     settings)


def _learning_verdict(inputs, data):
    from course.taxi import evaluate_qtable

    baseline = _learning_baseline(inputs)
    problem = wrong_amount("Q-tables", data["qtables"], len(inputs["seeds"]))
    shapes = {np.shape(q) for q in data["qtables"]}
    if problem or shapes != {(500, 6)}:
        return problem or failed(f"expected Q-tables of shape (500, 6), got {shapes}.")
    trained = [evaluate_qtable(np.asarray(q, dtype=np.float64)) for q in data["qtables"]]
    success = np.mean([e.success_rate for e in trained])
    base_success = np.mean([e["success_rate"] for e in baseline])
    mean_return = np.mean([e.mean_return for e in trained])
    base_return = np.mean([e["mean_return"] for e in baseline])
    summary = (f"after {inputs['episodes']} Taxi episodes on {len(trained)} seeds, the agent "
               f"your play_and_train trained (when graded: the course's reference agent) "
               f"solves {success:.1%} of the 300 start states greedily, with mean return "
               f"{mean_return:.2f}; the reference agent and loop: {base_success:.1%}, "
               f"{base_return:.2f}")
    figure = comparison(
        f"Taxi start states solved greedily after {inputs['episodes']} episodes", "share solved",
        [f"seed {number}" for number in range(1, len(trained) + 1)],
        {"your loop": [e.success_rate for e in trained],
         "reference loop": [e["success_rate"] for e in baseline]})
    if success < base_success - SUCCESS_TOLERANCE or mean_return < base_return - RETURN_TOLERANCE:
        return failed(summary + ". It learns clearly worse: the tests above say which part "
                      "(update, get_best_action, play_and_train) to look at.", figure=figure)
    return passed(summary + ".", figure=figure)


# The agent's checks: what later lessons name when their checks fail and the agent is the
# student's own (in a student edition, lesson 01's module is made from their notebook).
AGENT = Callee("QLearningAgent", LESSON, ("test_value_and_best_action", "test_best_action_ties",
                                          "test_epsilon_greedy", "test_update"))

CHECKS = LessonChecks(LESSON, [
    Check("test_value_and_best_action", "get_value and get_best_action", ("QLearningAgent",),
          _values_inputs, _values_probe, _values_verdict,
          asks="Get_value and get_best_action on states with various legal actions and Q-values."),
    Check("test_best_action_ties", "ties in get_best_action", ("QLearningAgent",),
          _ties_inputs, _ties_probe, _ties_verdict,
          asks="Ties are broken uniformly at random, reproducibly with the agent's seed."),
    Check("test_epsilon_greedy", "epsilon-greedy get_action", ("QLearningAgent",),
          _epsilon_inputs, _epsilon_probe, _epsilon_verdict,
          asks="Action frequencies at several epsilons, checked with a chi-square test that a correct agent fails once in a million runs."),
    Check("test_update", "update on fixed transitions", ("QLearningAgent",),
          _update_inputs, _update_probe, _update_verdict,
          asks="Update on a fixed list of transitions, some terminal, compared with the rule."),
    Check("test_play_and_train", "play_and_train: terminated versus truncated",
          ("play_and_train",), _loop_inputs, _loop_probe, _loop_verdict,
          asks="A corridor that ends by reaching the goal (terminated) or by its time limit (truncated)."),
    Check("test_learning", "learning on Taxi", ("QLearningAgent", "play_and_train"),
          _learning_inputs, _learning_probe, _learning_verdict, time_limit=60.0,
          learning=True, prepare=_learning_baseline,
          # graded, the agent is the course's reference: only the loop is the student's
          calls=(Callee(AGENT.name, LESSON, AGENT.checks, graded=False),
                 Callee("play_and_train", LESSON, ("test_play_and_train",))),
          asks="Your play_and_train trains the course's reference agent on Taxi, against the reference loop."),
])
