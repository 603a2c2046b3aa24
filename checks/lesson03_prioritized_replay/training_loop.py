"""Lesson 03's check of play_and_train_with_per, the training loop with prioritized
replay."""

from functools import partial

import numpy as np

from checks.expected import expected as reference
from checks.framework import failed, passed
from checks.lending import STAND_IN_BATCH, STAND_IN_PRIORITIES, Served, mirrored
from checks.lesson03_prioritized_replay.driving import LESSON
from checks.lesson03_prioritized_replay.weighted_update import AGENT_WRITES
from checks.records import Record
from checks.requirements import Rule
from checks.stub_envs import (call_training_loop, corridor_play, counting_buffer, episode_cases,
                              episode_ends, episode_ends_problem, lent_corridor, plain_state,
                              plays_as_lesson_01, t_max_zero_problem, timeline,
                              timelines_problem)


# --- the rules: what the lesson tells a student, as its checks test it ---------------------

# test_per_loop
LOOP_EPISODE_ENDS = Rule("loop-episode-ends", "play_and_train_with_per plays one episode, "
                         "ending it when the environment terminates or truncates or after "
                         "t_max steps (10,000 by default), and returns its total reward.")
LOOP_STORES_EACH_STEP = Rule("loop-stores-each-step", "Each step's transition is stored once, "
                             "after the online update.")
LOOP_STORES_TERMINATED = Rule("loop-stores-terminated", "A transition is stored with "
                              "done = terminated, not terminated or truncated.")
LOOP_ONE_BATCH_PER_STEP = Rule("loop-one-batch-per-step", "Each step samples one batch, after "
                               "storing its transition, with the batch_size and beta the loop "
                               "is given (beta = 0 included).")
LOOP_FEEDS_BACK_TD_ERRORS = Rule("loop-feeds-back-td-errors", "After each batch the loop "
                                 "applies prioritized_q_update to each replayed transition in "
                                 "order, with its weight, and passes the TD errors it returns "
                                 "to update_priorities with the batch's slots.")
LOOP_ONLINE_THEN_REPLAY = Rule("loop-online-then-replay", "The agent's Q-values are those of "
                               "an online update per step (agent.update on the step's "
                               "transition, told terminated as lesson 01's loop tells it: a "
                               "time limit or t_max is not a terminal state) followed by the "
                               "weighted updates of its replayed batch.")

LOOP_PLAYS_AS_LESSON_01 = plays_as_lesson_01("play_and_train_with_per")


# --- the training loop with prioritized replay -----------------------------------------------

class RecordingPrioritizedBuffer:
    """Stands in for a prioritized buffer: records adds, samples and priority updates,
    and hands out older transitions with known weights, so the verdict can replay it.
    Served to the student's loop (``sample`` and ``len`` across, the rest queued)."""

    __lending__ = Served(remote=("sample", "__len__"), deferred=("add", "update_priorities"),
                         limits={"sample": {"batch_size": STAND_IN_BATCH},
                                 "update_priorities": {"slots": STAND_IN_PRIORITIES,
                                                       "td_errors": STAND_IN_PRIORITIES}})

    def __init__(self):
        self.added, self.samples = Record("add"), Record("sample")
        self.priority_updates = Record("update_priorities")

    def __len__(self):
        return len(self.added)

    def add(self, obs_t, action, reward, obs_tp1, done):
        self.added.append([int(obs_t), int(action), float(reward), int(obs_tp1), bool(done)])

    def sample(self, batch_size, beta):
        if not self.added:
            raise ValueError("sample() on an empty buffer: add the transition first")
        start = 2 * len(self.samples)
        slots = [(start + j) % len(self.added) for j in range(batch_size)]
        weights = [round(0.25 + 0.75 * ((start + 3 * j) % 5) / 4, 4) for j in range(batch_size)]
        self.samples.append({"batch_size": batch_size, "beta": float(beta), "slots": slots,
                             "weights": weights})
        rows = [self.added[slot] for slot in slots]
        fields = [np.array(column) for column in zip(*rows)]
        return (*fields, np.array(weights), np.array(slots))

    def update_priorities(self, slots, td_errors):
        self.priority_updates.append({"slots": np.asarray(slots).astype(int).tolist(),
                                      "td_errors": np.asarray(td_errors, float).tolist()})


DEFAULT_T_MAX = 10_000  # the default the signature gives


def _loop_inputs(rng):
    length = int(rng.integers(3, 7))
    return {"length": length, "time_limit": int(rng.integers(length + 2, length + 6)),
            "batch_size": int(rng.integers(2, 7)), "beta": round(float(rng.uniform(0.3, 1)), 2),
            "alpha": 0.5, "discount": 0.9, "seed": int(rng.integers(2**31))}


def _loop_probe(inputs, play_and_train_with_per):
    outcome = {}
    limit = inputs["time_limit"]
    for case, (action, time_limit, t_max) in episode_cases(limit, DEFAULT_T_MAX).items():
        long_run = case == "default_t_max"
        events = None if long_run else timeline()  # 10,000 steps: not noted
        env = lent_corridor(inputs["length"], time_limit, events)
        agent = _lent_agent(inputs, action, partial(_noting_updates, events=events))
        buffer = counting_buffer(prioritized=True) if long_run else RecordingPrioritizedBuffer()
        batch_size = 1 if long_run else inputs["batch_size"]
        extra = {} if t_max is None else {"t_max": t_max}
        beta = _loop_beta(inputs, case)
        total = call_training_loop(
            f"play_and_train_with_per(env, agent, replay, {batch_size}, beta={beta}"
            + ("" if t_max is None else f", t_max={t_max}") + ")",
            play_and_train_with_per, env, agent, buffer, batch_size, beta, **extra)
        total = float(total) if isinstance(total, (int, float, np.floating)) else repr(total)[:60]
        if long_run:  # 10,000 steps: only how many
            outcome[case] = {**corridor_play(env)}
            continue
        outcome[case] = {
            "total": total, **corridor_play(env), "added": buffer.added,
            "samples": buffer.samples, "priority_updates": buffer.priority_updates,
            "online_updates": agent.online_updates, "order": list(events),
            "epsilon": float(agent.epsilon),
            "qtable": [[float(agent.get_qvalue(s, a)) for a in (0, 1)]
                       for s in range(inputs["length"] + 1)]}
    # standing still for no reward from Q-values of 0: every TD error is 0, and is fed
    # back all the same, batch after batch
    env, agent = lent_corridor(inputs["length"], limit, step_reward=0.0), _lent_agent(inputs, 0)
    buffer = RecordingPrioritizedBuffer()
    call_training_loop(f"play_and_train_with_per(env, agent, replay, {inputs['batch_size']}, "
                       f"beta={inputs['beta']}) in a corridor without rewards",
                       play_and_train_with_per, env, agent, buffer, inputs["batch_size"],
                       inputs["beta"])
    outcome["no_surprise"] = {"samples": len(buffer.samples),
                              "priority_updates": len(buffer.priority_updates)}
    # t_max=0: no step at all (the count is checked before each step)
    env, agent = lent_corridor(inputs["length"], limit), _lent_agent(inputs, 1, _noting_updates)
    buffer = RecordingPrioritizedBuffer()
    call_training_loop(f"play_and_train_with_per(env, agent, replay, {inputs['batch_size']}, "
                       f"beta={inputs['beta']}, t_max=0)", play_and_train_with_per, env, agent,
                       buffer, inputs["batch_size"], inputs["beta"], t_max=0)
    outcome["no_steps"] = {**corridor_play(env), "add_count": len(buffer.added),
                           "update_count": len(agent.online_updates)}
    return outcome


LENT_EPSILON = 0.5


def _lent_agent(inputs, action, noting=lambda original: original):
    """A scripted Q-learning agent that plays ``action``, lent by mirroring: its writes and
    get_action calls are replayed on the grader's copy, ``noting(copy)``. It plays its
    action whatever epsilon holds; the loop leaves epsilon as it found it (train_agent
    decays it between episodes, not the loop)."""
    from course.legal_actions import AllActions
    from course.scripted_agents import scripted_q_agent

    settings = dict(alpha=inputs["alpha"], epsilon=LENT_EPSILON, discount=inputs["discount"],
                    get_legal_actions=mirrored(AllActions, 2), seed=inputs["seed"])
    return mirrored(scripted_q_agent, action, **settings, logged=(*AGENT_WRITES, "get_action"),
                    settable=("epsilon",), original=noting(scripted_q_agent(action, **settings)))


def _noting_updates(agent, events=None):
    """``agent``, the grader's side of the lent one, also noting each ``update`` call the
    loop made (replayed on it from the lent copy) as plain data, and with ``events`` (a
    :func:`~checks.stub_envs.timeline`) its get_action and update calls there."""
    agent.online_updates = Record("update")
    learn, choose = agent.update, agent.get_action

    def get_action(state):
        action = choose(state)
        if events is not None:
            events.append(("get_action", plain_state(state), plain_state(action)))
        return action

    def update(state, action, reward, next_state, terminated):
        try:
            noted = [int(state), int(action), float(reward), int(next_state), bool(terminated)]
        except (TypeError, ValueError):
            noted = repr((state, action, reward, next_state, terminated))[:80]
        agent.online_updates.append(noted)
        if events is not None:
            events.append(("update",))
        return learn(state, action, reward, next_state, terminated)

    agent.update, agent.get_action = update, get_action
    return agent



def _loop_beta(inputs, case):
    """The beta a case's run is given: 0 (no correction, PER without weights, as the
    lesson's Taxi runs use it) when the time limit ends the episode."""
    return 0.0 if case == "runs_out_of_time" else inputs["beta"]


def _loop_verdict(inputs, data):
    length, limit = inputs["length"], inputs["time_limit"]
    problem = timelines_problem(data, only_played=True)
    if problem:
        return failed(problem, rule=LOOP_PLAYS_AS_LESSON_01)
    problem = episode_ends_problem(length, data, episode_ends(length, limit, DEFAULT_T_MAX))
    if problem:
        return failed(problem, rule=LOOP_EPISODE_ENDS)
    for case in ("reaches_goal", "runs_out_of_time", "stopped_by_t_max"):
        run = data[case]
        steps = run["steps"]
        if len(run["added"]) != steps:
            return failed(f"the episode took {steps} steps but replay.add was called "
                          f"{len(run['added'])} times: store every transition once.",
                          rule=LOOP_STORES_EACH_STEP)
        calls = [(s["batch_size"], s["beta"]) for s in run["samples"]]
        beta = _loop_beta(inputs, case)
        if calls != [(inputs["batch_size"], beta)] * steps:
            zero = (" beta = 0 is a value (no importance correction), not a missing one."
                    if beta == 0 else "")
            return failed(f"play_and_train_with_per(env, agent, replay, {inputs['batch_size']}"
                          f", beta={beta}): expected one replay.sample({inputs['batch_size']}, "
                          f"beta={beta}) per step, after storing the step's transition; "
                          f"got {calls[:4]}...{zero}", rule=LOOP_ONE_BATCH_PER_STEP)
        if [u["slots"] for u in run["priority_updates"]] != [s["slots"]
                                                           for s in run["samples"]]:
            return failed("after each batch, call replay.update_priorities once with the "
                          "slots that sample returned (in the same order).",
                          rule=LOOP_FEEDS_BACK_TD_ERRORS)
        # the done flag stored is judged by its own rule, below
        online = run.get("online_updates") or []
        if [update[:4] for update in online] != [row[:4] for row in run["added"]]:
            return failed(f"the episode took {steps} steps and stored {run['added'][:2]}...; "
                          f"the loop called agent.update {len(online)} times, on "
                          f"{online[:2]}...: update the agent online with one "
                          "agent.update(state, action, reward, next_state, terminated) per "
                          "step, on the step's transition, before replaying.",
                          rule=LOOP_ONLINE_THEN_REPLAY)
        # the grader's recording of what its buffer handed out, not the student's results
        recorded = {"added": run["added"], "samples": run["samples"]}
        expected = reference(LESSON, "per_loop_expectation", inputs, recorded)
        expected_errors, expected_q = expected["td_errors"], expected["qtable"]
        # the learning first: TD errors follow from it (a loop that skips the online update
        # feeds back other errors too)
        if not np.allclose(run["qtable"], expected_q, rtol=1e-7, atol=1e-9):
            return failed("the agent's final Q-values differ from an online update per step "
                          "followed by weighted updates on each replayed batch.",
                          rule=LOOP_ONLINE_THEN_REPLAY)
        for number, (update, want) in enumerate(zip(run["priority_updates"], expected_errors)):
            if not np.allclose(update["td_errors"], want, rtol=1e-7, atol=1e-9):
                return failed(f"at step {number + 1} update_priorities got TD errors "
                              f"{np.round(update['td_errors'], 4).tolist()}, expected "
                              f"{np.round(want, 4).tolist()}: after the online update, apply "
                              "prioritized_q_update to each replayed transition in order, "
                              "with its weight, and pass the TD errors it returns.",
                              rule=LOOP_FEEDS_BACK_TD_ERRORS)
    problem = t_max_zero_problem(
        data["no_steps"], f"play_and_train_with_per(env, agent, replay, {inputs['batch_size']}"
        f", beta={inputs['beta']}, t_max=0)")
    if problem:
        return failed(problem, rule=LOOP_EPISODE_ENDS)
    quiet = data["no_surprise"]
    if quiet["priority_updates"] != quiet["samples"]:
        return failed(f"standing still in a corridor with no reward, from Q-values of 0, every "
                      f"TD error is 0; the loop sampled {quiet['samples']} batches but called "
                      f"update_priorities {quiet['priority_updates']} times: feed the TD "
                      "errors back after every batch, zeros included (an error of 0 gives "
                      "the small priority eps^alpha, not the old one).",
                      rule=LOOP_FEEDS_BACK_TD_ERRORS)
    if not data["reaches_goal"]["added"][-1][4]:
        return failed("the last transition reached the goal (terminated=True) but was stored "
                      "with done=False.", rule=LOOP_STORES_TERMINATED)
    if any(row[4] for row in data["runs_out_of_time"]["added"]):
        return failed("an episode cut by the time limit was stored with done=True: store "
                      "`terminated`, not `terminated or truncated`.",
                      rule=LOOP_STORES_TERMINATED)
    problem = _online_flags_problem(inputs, data)
    if problem:
        return failed(problem, rule=LOOP_ONLINE_THEN_REPLAY)
    problem = timelines_problem(data)
    if problem:
        return failed(problem, rule=LOOP_PLAYS_AS_LESSON_01)
    for run in data.values():
        if "order" in run and run.get("epsilon") != LENT_EPSILON:
            return failed(f"the loop changed agent.epsilon from {LENT_EPSILON} to "
                          f"{run.get('epsilon')}: lesson 01's loop leaves it as it is "
                          "(train_agent decays it between episodes).",
                          rule=LOOP_PLAYS_AS_LESSON_01)
    return passed("each step updates online, stores the transition, replays one weighted "
                  "batch and feeds its TD errors back as priorities.")


def _online_flags_problem(inputs, data):
    """What the loop told agent.update as ``terminated`` that the step was not, as
    feedback; None when every online update was told the environment's own flag. Only the
    goal is terminal: the last step of an episode cut by the time limit (truncated) or by
    t_max still bootstraps, as lesson 01's loop has it. The Q-values cannot show it here
    (the corridor's next states are worth 0 where these episodes end), so the flags do."""
    for case in ("reaches_goal", "runs_out_of_time", "stopped_by_t_max"):
        run = data[case]
        online = run.get("online_updates") or []
        if any(not isinstance(update, list) or len(update) != 5 for update in online):
            continue  # what it was called with is judged above (loop-online-then-replay)
        steps = run["steps"]
        wanted = [case == "reaches_goal" and number == steps for number in range(1, steps + 1)]
        told = [update[4] for update in online]
        for number, (flag, want) in enumerate(zip(told, wanted), 1):
            if flag == want:
                continue
            if case == "reaches_goal":
                return (f"in an episode that reaches the goal on step {steps} (terminated="
                        f"True), the loop's online agent.update of step {number} was told "
                        f"terminated={flag}: pass the environment's `terminated` as it is, "
                        "so the step into the goal learns the reward alone and every other "
                        "step bootstraps.")
            cut = (f"cut by the time limit of {inputs['time_limit']} steps (truncated=True, "
                   "terminated=False)" if case == "runs_out_of_time" else
                   f"stopped by t_max={inputs['time_limit'] - 2} (terminated=False, "
                   "truncated=False)")
            why = ("A time limit is not a terminal state" if case == "runs_out_of_time"
                   else "Where t_max stops the loop the state still has a future, as at a "
                        "time limit")
            return (f"play_and_train_with_per played an episode {cut}, and its online "
                    f"agent.update of step {number} of {steps} was told terminated={flag}: "
                    "that step's update learns without its bootstrap, as if the state ended "
                    f"there. {why}: update the agent online on the step's transition with "
                    "the environment's `terminated` as it is, not `terminated or truncated` "
                    "(as lesson 01's loop does, and as you store it).")
    return None
