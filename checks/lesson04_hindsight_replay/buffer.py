"""Lesson 04's checks of HindsightReplayBuffer: storing episodes, substitute goals from the
transition's own episode, recomputed rewards, the share of relabelled transitions, uniform
draws, wrap-around, and its errors for bad input."""

import math

import numpy as np

from checks.contracts import NUMPY_SCALARS, RESULT_TYPES, numpy_form
from checks.framework import (NotWrittenYet, ProbeError, call_student, call_student_repeatedly,
                              failed, fill_in_place, kept_with, outcome_of, passed,
                              result_by_reference,                              reseed_global_generators, value_error_problem, wrong_amount)
from checks.lesson04_hindsight_replay.driving import (
    CODE_BITS, DESIRED_OFFSET, STEPS_PER_CODE, STRATEGIES, SampleProtocolError, _decoded, _decoded_sample,
    _new_buffer, _store, action_of, describe_goal, goal_env, role_checked_goal_env,
    seeded_goal_env, synthetic_episode)
from checks.lesson04_hindsight_replay.goal_steps import FUTURE_GOAL_STEPS, _allowed
from checks.requirements import Rule
from checks.statistics import FALSE_FAILURE_RATE, chi_square_pvalue
from checks.unseeded_buffers import (made_without_seed, unseeded_call, unseeded_problem,
                                      unseeded_runs, unseeded_words)


# --- the rules the checks test, grouped by check (the lesson's text tags each one) -------------

# test_store_episode
LEN_COUNTS_TRANSITIONS = Rule("len-counts-transitions", "len(buffer) is the number of "
                              "transitions stored, 0 for an empty buffer.")
LEN_AFTER_WRAP = Rule("len-after-wrap", "len(buffer) counts the transitions the buffer holds "
                      "now, not the ones of episodes it overwrote.")
EPISODE_LENGTHS_ACCEPTED = Rule("episode-lengths-accepted", "store_episode accepts every "
                                "episode of 1 to max_episode_steps steps.")
EPISODE_COPIED = Rule("episode-copied", "store_episode copies the arrays it is given: a "
                      "caller that reuses them afterwards changes nothing stored.")
BATCH_STAYS_ITS_OWN = Rule("batch-stays-its-own", "A batch sample returned stays the "
                          "caller's: no later call of the buffer changes it.")
TRANSITION_AS_STORED = Rule("transition-as-stored", "Sampled transition t of an episode is its "
                            "observation t, action t and observation t + 1.")
# sample returns (obs, actions, rewards, next_obs, terminated, goals), one row per
# transition: a result type the lesson states, held on every call (checks.contracts)
SAMPLE_RETURNS = RESULT_TYPES


# test_goals_from_own_episode
GOALS_FROM_OWN_EPISODE = Rule("goals-from-own-episode", "A transition's goal is its own "
                              "episode's desired goal or a goal achieved in that episode, at a "
                              "step 1 .. T it reached.")
BUFFER_STRATEGY = Rule("buffer-strategy", "The buffer picks substitute goal steps by its own "
                       "strategy (hindsight_goal_steps' rule).")
# test_rewards_recomputed
REWARD_RECOMPUTED = Rule("reward-recomputed", "Every reward, for the original goal and a "
                         "substitute alike, is env.compute_reward(achieved_goals[t + 1], goal).")
TERMINATED_RECOMPUTED = Rule("terminated-recomputed", "Every terminated flag is "
                             "env.compute_terminated(achieved_goals[t + 1], goal) for the "
                             "transition's goal.")
# test_relabel_fraction
RELABEL_SHARE = Rule("relabel-share", "Each sampled transition is relabelled independently "
                     "with probability k/(k+1).")
K_ZERO_PLAIN_REPLAY = Rule("k-zero-plain-replay", "k = 0 is allowed and relabels nothing: "
                           "plain replay of the original goals.")
BUFFER_DEFAULTS = Rule("buffer-defaults", "HindsightReplayBuffer defaults to strategy='future' "
                       "and k=4.")
# test_uniform_transitions
UNIFORM_TRANSITIONS = Rule("uniform-transitions", "sample draws among all stored transitions "
                           "uniformly, whatever the length of their episodes.")
BUFFER_OWN_GENERATOR = Rule("buffer-own-generator", "The buffer draws everything with its own "
                            "generator, seeded with seed: equal seeds (0 included) give equal "
                            "batches.")
# test_wraparound
REPLACES_OLDEST = Rule("replaces-oldest", "When the buffer is full, a new episode replaces "
                       "the oldest.")
DEAD_STEPS_UNUSED = Rule("dead-steps-unused", "Steps an overwritten longer episode left in a "
                         "row are never sampled nor used as goals.")
# test_errors
UNKNOWN_STRATEGY_REFUSED = Rule("unknown-strategy-refused", "An unknown strategy raises "
                                "ValueError.")
NEGATIVE_K_REFUSED = Rule("negative-k-refused", "k < 0 raises ValueError.")
EMPTY_SAMPLE_REFUSED = Rule("empty-sample-refused", "Sampling an empty buffer raises "
                            "ValueError.")
BATCH_SIZE_REFUSED = Rule("batch-size-refused", "sample(batch_size) with batch_size <= 0 "
                          "raises ValueError.")
LONG_EPISODE_REFUSED = Rule("long-episode-refused", "An episode of more than "
                            "max_episode_steps steps raises ValueError.")
MISMATCHED_EPISODE_REFUSED = Rule("mismatched-episode-refused", "An episode whose "
                                  "observations or achieved goals are not one more than its "
                                  "actions raises ValueError.")
REFUSED_EPISODE_STORES_NOTHING = Rule("refused-episode-stores-nothing", "A refused episode "
                                      "leaves the buffer as it was.")


def sampling_protocol(probe):
    """``probe``, with a batch ``sample`` returned in another form reported as data, so
    that the verdict names the rule it breaks (see :func:`judging_protocol`)."""
    def probe_reporting_protocol(inputs, **objects):
        try:
            return probe(inputs, **objects)
        except SampleProtocolError as error:
            return {"sample protocol": str(error)}
    return probe_reporting_protocol


def judging_protocol(verdict):
    """``verdict``, first failing a probe that found ``sample``'s result malformed."""
    def verdict_with_protocol(inputs, data):
        if isinstance(data, dict) and data.get("sample protocol"):
            return failed(str(data["sample protocol"]), rule=SAMPLE_RETURNS)
        return verdict(inputs, data)
    return verdict_with_protocol


# --- storing episodes ----------------------------------------------------------------------

STORE_MAX_STEPS = 11  # odd, and one episode is this long: a buffer one column short fails
WRAP_CAPACITY = 3  # the buffer whose len is read as it wraps


def _store_inputs(rng):
    lengths = rng.integers(1, STORE_MAX_STEPS + 1, size=int(rng.integers(3, 7))).tolist()
    lengths.insert(int(rng.integers(len(lengths) + 1)), STORE_MAX_STEPS)  # full length
    # long episodes first, then shorter ones replace them: overwritten steps must not count
    wrapping = (rng.integers(6, STORE_MAX_STEPS + 1, size=WRAP_CAPACITY).tolist()
                + rng.integers(1, 6, size=int(rng.integers(2, 6))).tolist())
    return {"lengths": lengths, "wrapping": wrapping, "seed": int(rng.integers(2**31))}


def _stored_or_refused(buffer, episode, length, kept=False):
    """Store synthetic episode ``episode``; None, or what refusing it raised (an episode
    the lesson allows, refused, is a failure to name, not a crash). ``kept``: the
    arrays are placed with the buffer, returned so the caller can overwrite them."""
    arrays = synthetic_episode(episode, length)
    if kept:
        arrays = [kept_with(array, near=buffer) for array in arrays]
    try:
        call_student("store_episode", buffer.store_episode, *arrays)
    except NotWrittenYet:
        raise
    except ProbeError as error:
        return str(error), arrays
    return None, arrays


def _store_probe(inputs, HindsightReplayBuffer):
    buffer = _new_buffer(HindsightReplayBuffer, 20, STORE_MAX_STEPS, "future", 4,
                         inputs["seed"])
    lengths = [call_student("len(buffer)", len, buffer)]
    for episode, length in enumerate(inputs["lengths"]):
        refused, arrays = _stored_or_refused(buffer, episode, length, kept=True)
        if refused:
            return {"refused": [length, STORE_MAX_STEPS, refused]}
        for array in arrays:
            fill_in_place(array, 0)  # the caller reuses its arrays: the buffer must have copied
        lengths.append(call_student("len(buffer)", len, buffer))
    rows = []
    for _ in range(20):
        rows.extend(_decoded_sample(buffer, 32))
    # a batch the learner keeps, read before and after the buffer samples again
    kept = call_student("sample(32)", result_by_reference, buffer.sample, 32)
    kept_before = _decoded(kept, 32)
    _decoded_sample(buffer, 32)
    kept_after = _decoded(kept, 32)
    # a long episode: lengths past 256 are not small cached ints (`is` is not `==`)
    long = _new_buffer(HindsightReplayBuffer, 2, LONG_EPISODE, "future", 4, inputs["seed"])
    refused, _ = _stored_or_refused(long, 0, LONG_EPISODE)
    if refused:
        return {"refused": [LONG_EPISODE, LONG_EPISODE, refused]}
    wrapping = _new_buffer(HindsightReplayBuffer, WRAP_CAPACITY, STORE_MAX_STEPS, "future", 4,
                           inputs["seed"])
    after_wrap = []
    for episode, length in enumerate(inputs["wrapping"]):
        _store(wrapping, episode, length)
        after_wrap.append(call_student("len(buffer)", len, wrapping))
    # observations that are not bits (floats beyond any small integer type): stored as given
    valued = _new_buffer(HindsightReplayBuffer, 2, VALUED_STEPS, "future", 4, inputs["seed"])
    observations, achieved, desired, actions = synthetic_episode(0, VALUED_STEPS)
    call_student("store_episode(observations, achieved_goals, desired_goal, actions)",
                 valued.store_episode, valued_observations(), achieved, desired, actions)
    batch = call_student("sample(16)", valued.sample, 16)
    valued_rows = [np.asarray(part, dtype=np.float64).reshape(16, -1).tolist()
                   for part in (list(batch)[0], list(batch)[3])]
    # observations as other environments give them, a grid and a single number: each
    # comes back in the shape it was stored in, with a row axis in front
    shapes = {}
    for name, shape in SHAPED_OBSERVATIONS.items():
        shaped = _new_buffer(HindsightReplayBuffer, 2, VALUED_STEPS, "future", 4,
                             inputs["seed"])
        grids = 0.5 + np.arange((VALUED_STEPS + 1) * math.prod(shape), dtype=np.float64)
        call_student(f"store_episode(observations of shape {(VALUED_STEPS + 1, *shape)}, "
                     "achieved_goals, desired_goal, actions)", shaped.store_episode,
                     grids.reshape(VALUED_STEPS + 1, *shape), achieved, desired, actions)
        parts = list(call_student("sample(16)", shaped.sample, 16))
        shapes[name] = [list(np.shape(parts[0])), list(np.shape(parts[3]))]
    return {"lengths": lengths, "rows": rows, "long": call_student("len(buffer)", len, long),
            "one": _decoded_sample(buffer, 1), "after_wrap": after_wrap,
            "valued": valued_rows, "kept": [kept_before, kept_after], "shapes": shapes}


SHAPED_OBSERVATIONS = {"a 2 x 3 grid": (2, 3), "a single number": ()}


VALUED_STEPS = 3


def valued_observations():
    """VALUED_STEPS + 1 observations of three floats each that no small type holds."""
    steps = np.arange(VALUED_STEPS + 1, dtype=np.float64)[:, None]
    return np.hstack([300.25 + steps, -129.5 - steps, 1e6 + 0.5 * steps])


LONG_EPISODE = 300


def _store_verdict(inputs, data):
    if data.get("refused"):
        length, most, error = data["refused"]
        return failed(f"storing an episode of {length} steps in a buffer with "
                      f"max_episode_steps={most} failed: {error}. Every episode of 1 to "
                      "max_episode_steps steps must be accepted.",
                      rule=EPISODE_LENGTHS_ACCEPTED)
    want = [0, *np.cumsum(inputs["lengths"]).tolist()]
    if data["lengths"] != want:
        return failed(f"after storing episodes of {inputs['lengths']} steps in a buffer with "
                      f"max_episode_steps={STORE_MAX_STEPS}, len(buffer) "
                      f"went {data['lengths']}; it counts transitions: {want}.",
                      rule=LEN_COUNTS_TRANSITIONS)
    problem = wrong_amount("rows", data["rows"], 640, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    for episode, step, action, _, next_episode, next_step, *_ in data["rows"]:
        if not (0 <= episode < len(inputs["lengths"]) and 0 <= step < inputs["lengths"][episode]):
            return failed("a sampled transition is not one that was stored (episode "
                          f"{episode}, step {step}). Did the buffer keep references to the "
                          "caller's arrays, which the caller then overwrote? Copy them.",
                          rule=EPISODE_COPIED)
        if action != action_of(episode, step):
            return failed(f"the transition at step {step} of episode {episode} came back with "
                          f"action {action}, not the {action_of(episode, step)} stored.",
                          rule=TRANSITION_AS_STORED)
        if (next_episode, next_step) != (episode, step + 1):
            return failed(f"the transition at step {step} of episode {episode} "
                          f"({inputs['lengths'][episode]} steps, max_episode_steps="
                          f"{STORE_MAX_STEPS}) came back with the next observation of episode "
                          f"{next_episode}, step {next_step}; expected step {step + 1}.",
                          rule=TRANSITION_AS_STORED)
    kept_before, kept_after = data.get("kept") or [None, None]
    if kept_before != kept_after:
        changed = next(n for n, (a, b) in enumerate(zip(kept_before, kept_after)) if a != b)
        return failed("a batch that sample(32) returned changed when sample was called again "
                      f"(its row {changed} went from (episode, step, action, reward, next "
                      "episode, next step, terminated, goal) = "
                      f"{tuple(kept_before[changed])} to {tuple(kept_after[changed])}): each "
                      "call must hand out arrays of its own, never refill ones it returned "
                      "before (a learner keeps batches).", rule=BATCH_STAYS_ITS_OWN)
    stored = valued_observations().tolist()
    for name, rows in zip(("obs", "next_obs"), data.get("valued") or []):
        strays = [row for row in rows if row not in stored]
        if strays:
            return failed(f"an episode whose observations are floats such as {stored[0]} was "
                          f"stored, and sample returned {name} {strays[0]}: store what you are "
                          "given, in its own dtype (a smaller type changes the values).",
                          rule=TRANSITION_AS_STORED)
    shapes = data.get("shapes") or {}
    for name, shape in SHAPED_OBSERVATIONS.items():
        want = [[16, *shape], [16, *shape]]
        if shapes.get(name) != want:
            return failed(f"an episode whose observations are each {name} (shape {shape}) was "
                          "stored, and sample(16) returned observations and next observations "
                          f"of shapes {shapes.get(name)}, not {want}: keep each observation "
                          "in the shape it came in (no flattening, no reshaping).",
                          rule=TRANSITION_AS_STORED)
    one = data.get("one") or []
    if len(one) != 1 or not (0 <= one[0][0] < len(inputs["lengths"])
                             and 0 <= one[0][1] < inputs["lengths"][one[0][0]]):
        return failed(f"sample(1) should return one stored transition; it returned {one}.",
                      rule=SAMPLE_RETURNS)
    if data.get("long") != LONG_EPISODE:
        return failed(f"after storing one episode of {LONG_EPISODE} steps in a "
                      f"HindsightReplayBuffer(env, 2, {LONG_EPISODE}), len(buffer) is "
                      f"{data.get('long')}; expected {LONG_EPISODE}.",
                      rule=LEN_COUNTS_TRANSITIONS)
    wrapping = inputs["wrapping"]
    want = [sum(wrapping[max(0, n + 1 - WRAP_CAPACITY):n + 1]) for n in range(len(wrapping))]
    if data.get("after_wrap") != want:
        return failed(f"storing episodes of {wrapping} steps in a HindsightReplayBuffer(env, "
                      f"{WRAP_CAPACITY}, {STORE_MAX_STEPS}), len(buffer) went "
                      f"{data.get('after_wrap')}; expected {want}: once the buffer is full, "
                      "each new episode replaces the oldest, and len counts the transitions "
                      "held now, not those of the episodes overwritten.", rule=LEN_AFTER_WRAP)
    return passed("len counts stored transitions (an episode of max_episode_steps "
                  "included, one of 300 steps, and after the buffer wraps), and episodes "
                  "are copied in.")


# --- relabelled goals come from the transition's own episode --------------------------------------

def _episodes_inputs(rng):
    return {"lengths": rng.integers(2, 12, size=int(rng.integers(5, 9))).tolist(),
            "batches": 30, "seed": int(rng.integers(2**31))}


def _episodes_probe(inputs, HindsightReplayBuffer):
    rows = {}
    for strategy in STRATEGIES:
        buffer = _new_buffer(HindsightReplayBuffer, 50, 12, strategy, 4, inputs["seed"])
        for episode, length in enumerate(inputs["lengths"]):
            _store(buffer, episode, length)
        rows[strategy] = [row for _ in range(inputs["batches"])
                          for row in _decoded_sample(buffer, 32)]
    return rows


def check_rows(rows, lengths, strategy, live=None):
    """The first problem with decoded rows, as (feedback, the rule it breaks), or None.
    ``live``: the episodes stored now, when the buffer wrapped (the others were
    overwritten, some by shorter ones: what they left behind is dead)."""
    wrapped = live is not None
    live = set(range(len(lengths))) if live is None else live
    if wrapped:  # a whole episode that should have been replaced comes first
        for episode, step, *_ in rows:
            if episode not in live and 0 <= episode < len(lengths) and 0 <= step < min(
                    lengths[other] for other in live):
                return (f"sample returned a transition of episode {episode} (step {step}), "
                        "which a newer episode should have replaced: when the buffer is "
                        "full, a new episode replaces the oldest.", REPLACES_OLDEST)
    for episode, step, action, reward, next_episode, next_step, terminated, goal in rows:
        if episode not in live or not 0 <= step < lengths[episode]:
            if wrapped:
                return (f"sample returned a transition (episode {episode}, step {step}) that "
                        "is not stored any more: the buffer wrapped around, and a shorter "
                        "episode replaced it; the steps it left in the row are dead.",
                        DEAD_STEPS_UNUSED)
            return (f"sample returned a transition (episode {episode}, step {step}) that is "
                    "not stored.", TRANSITION_AS_STORED)
        if (next_episode, next_step) != (episode, step + 1):
            return (f"the transition at step {step} of episode {episode} came back with the "
                    f"next observation of episode {next_episode}, step {next_step}: the next "
                    "observation is the one right after, in the same episode.",
                    TRANSITION_AS_STORED)
        if goal >= DESIRED_OFFSET:
            if goal - DESIRED_OFFSET != episode:
                return (f"a transition of episode {episode} came with {describe_goal(goal)}: "
                        "a transition keeps its own episode's desired goal.",
                        GOALS_FROM_OWN_EPISODE)
            continue
        goal_episode, goal_step = divmod(goal, STEPS_PER_CODE)
        if wrapped and goal_episode not in live and 0 <= goal_episode < len(lengths):
            return (f"a transition of episode {episode} was relabelled with "
                    f"{describe_goal(goal)}, an episode the buffer overwrote: the steps it "
                    "left in the row are dead, never goals.", DEAD_STEPS_UNUSED)
        if goal_episode != episode:
            return (f"a transition of episode {episode} was relabelled with "
                    f"{describe_goal(goal)}: substitute goals must come from the same "
                    "episode, never across an episode boundary.", GOALS_FROM_OWN_EPISODE)
        if not 1 <= goal_step <= lengths[episode]:
            return (f"the transition at step {step} of episode {episode} "
                    f"({lengths[episode]} steps) was relabelled with the goal of step "
                    f"{goal_step}, which the episode never reached: goal steps are 1 .. T.",
                    DEAD_STEPS_UNUSED if wrapped else GOALS_FROM_OWN_EPISODE)
        if goal_step not in _allowed(strategy, step, lengths[episode]):
            return (f"with strategy {strategy!r}, the transition at step {step} of episode "
                    f"{episode} ({lengths[episode]} steps) was relabelled with the goal of "
                    f"step {goal_step}; see test_goal_steps for the rule.", BUFFER_STRATEGY)
    return None


def _episodes_verdict(inputs, data):
    for strategy in STRATEGIES:
        problem = wrong_amount(f"rows for {strategy!r}", data.get(strategy, []),
                               inputs["batches"] * 32, rule=SAMPLE_RETURNS)
        if problem:
            return problem
        problem = check_rows(data[strategy], inputs["lengths"], strategy)
        if problem:
            feedback, rule = problem
            return failed(feedback, rule=rule)
    for strategy in ("future", "episode"):
        problem = _goal_position_problem(data[strategy], inputs["lengths"], strategy)
        if problem:
            return failed(problem, rule=BUFFER_STRATEGY)
    return passed("every substitute goal was achieved in the transition's own episode, at "
                  "a step its strategy allows, uniformly over those steps.")


def _goal_position_problem(rows, lengths, strategy):
    """Why the relabelled rows' goal steps are not uniform over the steps ``strategy``
    allows, or None. Each goal step's place among its allowed steps, centred (from -1/2 to
    1/2, mean 0, variance (1 - 1/m^2)/12 for m allowed steps), sums to a normal z-score:
    goal steps that depend on the relabelling coin (one draw for both, or generators seeded
    alike) or favour one end shift it by tens of standard deviations."""
    from scipy import stats  # here: scipy takes a second to import

    places, variances = [], []
    for episode, step, *_, goal in rows:
        if goal >= DESIRED_OFFSET:
            continue
        allowed = _allowed(strategy, step, lengths[episode])
        places.append((goal % STEPS_PER_CODE - allowed.start + 0.5) / len(allowed) - 0.5)
        variances.append((1 - 1 / len(allowed) ** 2) / 12)
    if not places or sum(variances) == 0:
        return None
    z = sum(places) / math.sqrt(sum(variances))
    if 2 * stats.norm.sf(abs(z)) >= FALSE_FAILURE_RATE / 2:  # two strategies share the rate
        return None
    return (f"with strategy {strategy!r}, the {len(places)} relabelled transitions' goal steps "
            f"sit {'early' if z < 0 else 'late'} among the steps allowed (z = {z:.1f}): each "
            "goal step is drawn uniformly over them, independently of the coin that chose to "
            "relabel (draw both from one generator, one after the other)")


# --- rewards and termination are recomputed ----------------------------------------------------

def _rewards_inputs(rng):
    return {"lengths": rng.integers(2, 10, size=6).tolist(), "seed": int(rng.integers(2**31))}


def _rewards_probe(inputs, HindsightReplayBuffer):
    env = role_checked_goal_env()  # which goal goes where in compute_reward is noted
    buffer = call_student("HindsightReplayBuffer(env, 20, 10, strategy='future', k=4)",
                          HindsightReplayBuffer, env, 20, 10, strategy="future", k=4,
                          seed=inputs["seed"])
    for episode, length in enumerate(inputs["lengths"]):
        _store(buffer, episode, length)
    # a one-step episode that reached its own desired goal: the original goal's reward
    # must be recomputed too (0 and terminated, not the -1 of a miss)
    reached = _new_buffer(HindsightReplayBuffer, 2, 4, "future", 4, inputs["seed"])
    observations, achieved, _, actions = synthetic_episode(REACHED_EPISODE, 1)
    call_student("store_episode(observations, achieved_goals, desired_goal, actions)",
                 reached.store_episode, observations, achieved, achieved[1], actions)
    # an environment of other rewards (+1 on success, 0 otherwise): the buffer asks it,
    # and never assumes -1/0 (a terminated flag read off reward == 0 is wrong here)
    other = _new_buffer(HindsightReplayBuffer, 20, 10, "future", 4, inputs["seed"],
                        **OTHER_REWARDS)
    for episode, length in enumerate(inputs["lengths"]):
        _store(other, episode, length)
    return {"rows": [row for _ in range(REWARD_SAMPLES) for row in _decoded_sample(buffer, 32)],
            "reached": _decoded_sample(reached, REACHED_ROWS),
            "other_rewards": [row for _ in range(5) for row in _decoded_sample(other, 32)],
            "misplaced_goals": env.misplaced[:1], "other_infos": env.other_infos[:1],
            "calls": dict(env.calls)}


OTHER_REWARDS = {"success_reward": 1.0, "step_reward": 0.0}
REWARD_SAMPLES = 20  # batches of 32 drawn from the role-checked environment's buffer


REACHED_EPISODE = 7  # any episode number: its desired goal is what its one step achieved
# Every goal of that one-step episode, original or substitute, is the one it achieved;
# with k = 4, all of 96 rows relabelled (none judged by the original goal) once in 2e9.
REACHED_ROWS = 96


def _rewards_verdict(inputs, data):
    problem = wrong_amount("rows", data["rows"], 640, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    problem = wrong_amount(f"rows of sample({REACHED_ROWS})", data.get("reached", []),
                           REACHED_ROWS, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    problem = wrong_amount("rows with other rewards", data.get("other_rewards", []), 160,
                           rule=SAMPLE_RETURNS)
    if problem:
        return problem
    achieved_by_row = 0
    rows = ([(row, (0.0, -1.0)) for row in data["reached"] + data["rows"]]
            + [(row, (OTHER_REWARDS["success_reward"], OTHER_REWARDS["step_reward"]))
               for row in data["other_rewards"]])
    for (episode, step, _, reward, _, _, terminated, goal), (success, miss) in rows:
        reached = goal == episode * STEPS_PER_CODE + step + 1  # the goal this step achieved
        achieved_by_row += reached and goal < DESIRED_OFFSET and episode != REACHED_EPISODE
        want_reward, want_done = (success, True) if reached else (miss, False)
        where = (f"the transition at step {step} of episode {episode} was paired with "
                 f"{describe_goal(goal)}" if episode != REACHED_EPISODE else
                 "the one transition of an episode that reached its own desired goal, "
                 "sampled with that goal")
        if (success, miss) != (0.0, -1.0):
            where += (f" (in an environment that pays {success:g} on success and {miss:g} "
                      "otherwise)")
        if reward != want_reward:
            return failed(f"{where}, so its reward should be {want_reward:g}, but it came back "
                          f"as {reward:g}. Recompute every reward, for original goals and "
                          "substitutes alike, with env.compute_reward on the next achieved "
                          "goal and the transition's goal.", rule=REWARD_RECOMPUTED)
        if bool(terminated) != want_done:
            return failed(f"{where}, so it should come back terminated={want_done}, but it "
                          f"came back {bool(terminated)}. Recompute every terminated flag "
                          "with env.compute_terminated on the next achieved goal and the "
                          "transition's goal.", rule=TERMINATED_RECOMPUTED)
    for method, code in data.get("misplaced_goals", []):
        rule = REWARD_RECOMPUTED if method == "compute_reward" else TERMINATED_RECOMPUTED
        return failed(f"env.{method}(achieved_goal, desired_goal, info) was given "
                      f"{describe_goal(code)} as its achieved goal: the first argument is "
                      f"the goal the step achieved, achieved_goals[t + 1], and the second the "
                      f"transition's goal. An environment whose rewards are not symmetric "
                      "(success as reaching at least the goal) gives other rewards when they "
                      "are swapped.", rule=rule)
    for method, info in data.get("other_infos", []):
        return failed(f"env.{method}(achieved_goal, desired_goal, info) was given {info} as "
                      "its info; the lesson's call passes {}, one empty dict for the whole "
                      f"batch: env.{method}(next_achieved_goal, goal, {{}}).",
                      rule=REWARD_RECOMPUTED if method == "compute_reward"
                      else TERMINATED_RECOMPUTED)
    for method, calls in (data.get("calls") or {}).items():
        if calls < REWARD_SAMPLES:  # every batch needs its rewards and flags recomputed
            return failed(f"{REWARD_SAMPLES} calls of sample made {calls} calls of "
                          f"env.{method} on the environment the buffer was given: call it on "
                          "that environment itself (not on env.unwrapped or a copy of it: a "
                          "wrapper may compute rewards of its own).",
                          rule=REWARD_RECOMPUTED if method == "compute_reward"
                          else TERMINATED_RECOMPUTED)
    if not achieved_by_row:
        return failed("no relabelled transition ever achieved its own substitute goal; with "
                      "'future' the goal achieved at t + 1 must be a possible choice.",
                      rule=FUTURE_GOAL_STEPS)
    return passed("rewards and termination match each transition's (possibly new) goal, the "
                  "original goal included.")


# --- the share of relabelled transitions ---------------------------------------------------------

def _fraction_inputs(rng):
    return {"ks": [0, 1, 4, int(rng.integers(2, 9))], "draws": 2000,
            "seed": int(rng.integers(2**31))}


SINGLE_DRAWS = 400  # sample(1) calls: a share fixed per batch rounds to all or nothing


# the form the numbers of each k's HindsightReplayBuffer(env, 10, 8, k=k) come in, one per
# k in turn: Python's ints, and numpy's (np.arange gives int64 on Linux and macOS, int32 on
# Windows), as a sweep over a numpy array of k hands them out
NUMBER_FORMS = (int, np.int64, int, np.int32)
FRACTION_EPISODES, FRACTION_STEPS = 10, 8


def _form_words(form, number):
    return str(number) if form is int else f"np.{form.__name__}({number})"


def _fraction_buffer(HindsightReplayBuffer, k, form, seed):
    """HindsightReplayBuffer(env, 10, 8, 'episode', k) with its numbers (sizes and k) in
    ``form``; a ProbeError when it is refused, a NumpyFormRefused when numpy's numbers are
    refused but Python's are not."""
    sizes = (FRACTION_EPISODES, FRACTION_STEPS)
    if form is int:
        return _new_buffer(HindsightReplayBuffer, *sizes, "episode", k, seed)
    call = (f"HindsightReplayBuffer(env, {_form_words(form, sizes[0])}, "
            f"{_form_words(form, sizes[1])}, strategy='episode', k={_form_words(form, k)})")
    try:
        return call_student(call, HindsightReplayBuffer, goal_env(), *map(form, sizes),
                            strategy="episode", k=form(k), seed=seed)
    except NotWrittenYet:
        raise
    except ProbeError as error:
        _new_buffer(HindsightReplayBuffer, *sizes, "episode", k, seed)  # Python's: refused too?
        raise NumpyFormRefused(str(error)) from None  # it names the call


class NumpyFormRefused(ProbeError):
    """A call refused with numpy's numbers that works with Python's."""


def _fraction_probe(inputs, HindsightReplayBuffer):
    relabelled = []
    for index, k in enumerate(inputs["ks"]):
        try:
            buffer = _fraction_buffer(HindsightReplayBuffer, k,
                                      NUMBER_FORMS[index % len(NUMBER_FORMS)], inputs["seed"])
        except NotWrittenYet:
            raise
        except NumpyFormRefused as error:
            return {"numpy refused": [k, str(error)]}
        except ProbeError as error:
            return {"refused": [k, str(error)]}
        for episode in range(5):
            _store(buffer, episode, 8)
        rows = [row for _ in range(inputs["draws"] // 100) for row in _decoded_sample(buffer, 100)]
        relabelled.append(sum(row[7] < DESIRED_OFFSET for row in rows))
    # one transition at a time: each is relabelled on its own coin, not a quota per batch
    single = _new_buffer(HindsightReplayBuffer, 10, 8, "episode", SINGLE_K, inputs["seed"])
    for episode in range(5):
        _store(single, episode, 8)
    singles = sum(_decoded(batch, 1)[0][7] < DESIRED_OFFSET for batch in call_student_repeatedly(
        "sample(1)", single.sample, SINGLE_DRAWS, 1))
    # the signature's defaults: strategy="future", k=4
    buffer = call_student("HindsightReplayBuffer(env, 10, 8) (strategy and k by default)",
                          HindsightReplayBuffer, goal_env(), 10, 8, seed=inputs["seed"])
    for episode in range(5):
        _store(buffer, episode, 8)
    defaults = [row for _ in range(inputs["draws"] // 100) for row in _decoded_sample(buffer, 100)]
    return {"relabelled": relabelled, "singles": int(singles), "defaults": defaults,
            "reached": _reached_goal_relabelled(HindsightReplayBuffer, inputs["seed"])}


SUCCESS_K, SUCCESS_LENGTH, SUCCESS_ROWS = 4, 8, 2000
# the last transition of an episode that reached its goal keeps a goal unlike its desired
# one when relabelled with a step before the last: k/(k+1) * (T-1)/T of the time
SUCCESS_SHARE = SUCCESS_K / (SUCCESS_K + 1) * (SUCCESS_LENGTH - 1) / SUCCESS_LENGTH


def _reached_goal_relabelled(HindsightReplayBuffer, seed):
    """[relabelled, drawn]: of the sampled last transitions of one stored episode whose
    final achieved goal is its desired goal (it succeeded), how many came back with
    another goal (relabelled, strategy 'episode', k = SUCCESS_K)."""
    buffer = _new_buffer(HindsightReplayBuffer, 2, SUCCESS_LENGTH, "episode", SUCCESS_K, seed)
    observations, achieved, _, actions = synthetic_episode(0, SUCCESS_LENGTH)
    call_student("store_episode(observations, achieved_goals, desired_goal, actions) of an "
                 "episode that reached its goal", buffer.store_episode, observations,
                 achieved, achieved[-1].copy(), actions)
    reached = SUCCESS_LENGTH  # the code of the last achieved goal (episode 0)
    last = [row for _ in range(SUCCESS_ROWS // 100) for row in _decoded_sample(buffer, 100)
            if row[1] == SUCCESS_LENGTH - 1]
    return [int(sum(row[7] != reached for row in last)), len(last)]


SINGLE_K = 1  # a share of 1/2: rounding per batch of one gives 0 or 1, never half


def _binomial_misfit(count, draws, share):
    """Whether ``count`` relabelled of ``draws`` is implausible at share ``share`` (two-sided
    binomial test at the false-failure rate)."""
    from scipy import stats  # here: scipy takes a second to import

    low, high = stats.binom.cdf(count, draws, share), stats.binom.sf(count - 1, draws, share)
    return not isinstance(count, int) or min(low, high) < FALSE_FAILURE_RATE / 2


def _fraction_verdict(inputs, data):
    if data.get("numpy refused"):
        k, error = data["numpy refused"]
        return failed(f"{error}, but the same call with Python's ints works. Numbers from "
                      "a numpy array (a sweep `for k in np.arange(...)`) are np.int64 or "
                      "np.int32: treat them exactly as Python's (compare them, `k < 0`; no "
                      "isinstance(k, int) or type(k) is int check, which refuses them).",
                      rule=NUMPY_SCALARS)
    if data.get("refused"):
        k, error = data["refused"]
        return failed(f"HindsightReplayBuffer(..., k={k}) failed: {error}. "
                      + ("k = 0 is plain replay (no goal relabelled), not an error; only "
                         "k < 0 is." if k == 0 else ""),
                      rule=K_ZERO_PLAIN_REPLAY if k == 0 else RELABEL_SHARE)
    problem = wrong_amount("counts", data["relabelled"], len(inputs["ks"]), rule=RELABEL_SHARE)
    if problem:
        return problem
    draws = inputs["draws"]
    # k > 0 first: a buffer that ignores k fails by the share, and one that takes k = 0
    # for "not given" by k = 0's own rule
    by_k = sorted(zip(inputs["ks"], data["relabelled"]), key=lambda pair: pair[0] == 0)
    for k, count in by_k:
        if k == 0 and count != 0:
            return failed(f"with k=0, no sampled transition should get a substitute goal (plain "
                          f"replay), but {count} of {draws} did.", rule=K_ZERO_PLAIN_REPLAY)
        share = k / (k + 1)
        if _binomial_misfit(count, draws, share):
            return failed(f"with k={k}, a share k/(k+1) = {share:.3f} of sampled transitions "
                          f"should get a substitute goal, but {count} of {draws} "
                          f"({count / draws:.3f}) did.", rule=RELABEL_SHARE)
    share = SINGLE_K / (SINGLE_K + 1)
    if _binomial_misfit(data.get("singles"), SINGLE_DRAWS, share):
        return failed(f"with k={SINGLE_K}, {SINGLE_DRAWS} calls of sample(1) relabelled "
                      f"{data.get('singles')} transitions; each should be relabelled with "
                      f"probability {share:g}, independently (about {share * SINGLE_DRAWS:.0f}), "
                      "not by a number per batch.", rule=RELABEL_SHARE)
    relabelled, drawn = (data.get("reached") or [None, 0])[:2]
    if drawn and _binomial_misfit(relabelled, drawn, SUCCESS_SHARE):
        return failed(f"with k={SUCCESS_K} and strategy='episode', in an episode that reached "
                      f"its desired goal, {relabelled} of {drawn} samples of its last "
                      "transition got a goal from an earlier step; about "
                      f"{SUCCESS_SHARE:.2f} of them should ({SUCCESS_K}/{SUCCESS_K + 1} "
                      f"relabelled, {SUCCESS_LENGTH - 1}/{SUCCESS_LENGTH} of those with an "
                      "earlier step's goal). Every transition is relabelled on its own coin, "
                      "those that reached their goal too.", rule=RELABEL_SHARE)
    rows = data.get("defaults", [])
    problem = wrong_amount("rows sampled with the default strategy and k", rows, draws,
                           rule=BUFFER_DEFAULTS)
    if problem:
        return problem
    # which strategy, judged only by what tells the three apart (test_goal_steps and
    # test_goals_from_own_episode judge the rules themselves): 'episode' picks goals
    # before the transition's step, 'final' only the last step, 'future' neither
    count = sum(row[7] < DESIRED_OFFSET for row in rows)
    own = [(row[1], row[7] % STEPS_PER_CODE) for row in rows
           if row[7] < DESIRED_OFFSET and row[7] // STEPS_PER_CODE == row[0]]
    earlier = sum(goal_step < step for step, goal_step in own)
    before_the_end = sum(goal_step < 8 for _, goal_step in own)
    if _binomial_misfit(count, draws, 0.8) or earlier or not before_the_end:
        return failed("HindsightReplayBuffer(env, 10, 8) should default to strategy='future' "
                      f"and k=4: 4/5 of sampled transitions relabelled, with goals from later "
                      f"steps, not only the last; {count} of {draws} were relabelled, "
                      f"{earlier} with a goal from before the transition's step and "
                      f"{before_the_end} with one from before the episode's last step.",
                      rule=BUFFER_DEFAULTS)
    return passed(f"the share of relabelled transitions is k/(k+1) for k = "
                  f"{', '.join(map(str, inputs['ks']))} (numpy's ints too), each transition "
                  "on its own coin, "
                  f"and 4/5 with the defaults, strategy='future' and k=4 (binomial tests, "
                  f"rejection rate {FALSE_FAILURE_RATE:g} each).")


# --- transitions are drawn uniformly ------------------------------------------------------------

def _uniform_inputs(rng):
    # a one-step episode and a full one among them: a sampler that weighs episodes by
    # anything but their number of steps draws them unequally
    lengths = [1, 8, *rng.integers(1, 9, size=4).tolist()]
    return {"lengths": rng.permutation(lengths).tolist(), "seed": int(rng.integers(2**31))}


def _uniform_probe(inputs, HindsightReplayBuffer):
    buffer = _new_buffer(HindsightReplayBuffer, 10, 8, "final", 4, inputs["seed"])
    for episode, length in enumerate(inputs["lengths"]):
        _store(buffer, episode, length)
    total = sum(inputs["lengths"])
    rows = [row for _ in range(total * 2) for row in _decoded_sample(buffer, 100)]
    # batches smaller than, as large as and larger than what is stored: drawn with
    # replacement, each row among all stored transitions, they repeat transitions (and miss
    # some) as often as independent draws do
    spread = [[[[row[0], row[1]] for row in _decoded_sample(buffer, size)]
               for _ in range(SPREAD_BATCHES)] for size in _spread_sizes(total)]
    # two buffers of one seed, each beside an environment of its own seeded apart (its
    # generator, env.np_random, is its resets'), the global generators seeded apart before
    # each samples: equal batches unless something other than the buffer's own generator
    # draws (the environment's, `random`'s, np.random's). The seed is past 32 bits:
    # default_rng takes any non-negative int (RandomState does not). Then the same with
    # seed 0, a seed like any other (`if seed:` takes it for none). The second buffer of
    # each pair gets its seed as numpy's int (np.int64, as an array of seeds holds it):
    # the same seed
    twins = []
    for seed in _twin_seeds(inputs):
        for form in (int, numpy_form):
            env = seeded_goal_env(_twin_env_seed(inputs, form is not int))
            try:
                twin = _new_buffer(HindsightReplayBuffer, 10, 8, "future", 4, form(seed),
                                   env=env)
            except NotWrittenYet:
                raise
            except ProbeError as error:
                if form is int:
                    raise
                # Python's int was taken just before: only numpy's is refused
                return {"numpy seed refused": [seed, str(error)]}
            for episode, length in enumerate(inputs["lengths"]):
                _store(twin, episode, length)
            reseed_global_generators(inputs["seed"] + int(form is not int), near=twin)
            twins.append([row for _ in range(2) for row in _decoded_sample(twin, 32)])
    return {"drawn": [[row[0], row[1]] for row in rows], "twins": twins, "spread": spread,
            "unseeded_globals": _unseeded_draws(HindsightReplayBuffer, inputs)}


# Unseeded buffers (checks.lesson02_replay_buffer.unseeded_runs): two made with the seed
# omitted and two with seed=None, holding the same episodes, each sampled UNSEEDED_BATCHES
# times with the global generators seeded alike before each buffer and each sample. Rows
# (compared as the episode and step they came from) are drawn among at least 13
# transitions: two independent generators agree on the 2 x 32 rows by chance with
# probability below 13^-64.
UNSEEDED_BATCH, UNSEEDED_BATCHES = 32, 2


UNSEEDED_OPENING = "HindsightReplayBuffer(env, 10, 8, strategy='future', k=4"


def _unseeded_call(form):
    """How the check made a buffer without a seed, ``form`` one of UNSEEDED_FORMS."""
    return unseeded_call(UNSEEDED_OPENING, form)


def _unseeded_global_seed(inputs):
    """What the global generators are seeded with around the unseeded buffers (the twins
    of one seed get seed and seed + 1)."""
    return inputs["seed"] + 2


def _unseeded_draws(HindsightReplayBuffer, inputs):
    """:func:`~checks.lesson02_replay_buffer.unseeded_runs` for this buffer, beside a goal
    environment of its own, holding the episodes of inputs["lengths"]."""
    def fill(buffer):
        for episode, length in enumerate(inputs["lengths"]):
            _store(buffer, episode, length)

    def new_buffer(form):  # each beside a goal environment of its own
        return made_without_seed(UNSEEDED_OPENING, HindsightReplayBuffer, goal_env(), 10, 8,
                                 strategy="future", k=4)(form)

    return unseeded_runs(new_buffer, fill,
                         lambda buffer: [row[:2] for row in _decoded_sample(buffer,
                                                                            UNSEEDED_BATCH)],
                         HindsightReplayBuffer, _unseeded_global_seed(inputs),
                         UNSEEDED_BATCHES)


# how many batches of each size the repeats are counted in
SPREAD_BATCHES = 30


def _spread_sizes(total):
    """The batch sizes whose repeats are counted, for a buffer of ``total`` transitions:
    smaller than it, equal to it and larger than it."""
    return (total // 2, total, 2 * total)


def _probability_fully_spread(total, size):
    """P(a batch of ``size`` rows, each drawn uniformly among ``total`` transitions on its own
    (with replacement), holds min(size, total) different transitions): no repeat in a batch
    no larger than the buffer, every transition in a larger one."""
    if size <= total:
        return math.prod(range(total - size + 1, total + 1)) / total ** size
    covering = sum((-1) ** j * math.comb(total, j) * (total - j) ** size
                   for j in range(total + 1))  # exact integers: inclusion-exclusion
    return covering / total ** size


def _spread_problem(inputs, spread, rate):
    """Why the batches of ``spread`` (one list of batches per size of _spread_sizes) repeat
    transitions less often than rows drawn independently (with replacement) do; None if
    they do not. Each size is tested at ``rate`` / its number of sizes (binomial)."""
    from scipy import stats  # here: scipy takes a second to import
    lengths = inputs["lengths"]
    total = sum(lengths)
    sizes = _spread_sizes(total)
    problem = wrong_amount("batch sizes whose repeats are counted", spread, len(sizes),
                           rule=SAMPLE_RETURNS)
    if problem:
        return problem
    for size, batches in zip(sizes, spread):
        problem = wrong_amount(f"batches of sample({size})", batches, SPREAD_BATCHES,
                               rule=SAMPLE_RETURNS)
        for batch in batches if not problem else []:
            problem = problem or wrong_amount(f"rows of sample({size})", batch, size,
                                              rule=SAMPLE_RETURNS)
        if problem:
            return problem
        spread_out = sum(len({tuple(row) for row in batch}) == min(size, total)
                         for batch in batches)
        share = _probability_fully_spread(total, size)
        if stats.binom.sf(spread_out - 1, len(batches), share) >= rate / len(sizes):
            continue
        where = (f"sample({size}) on a buffer holding {total} transitions (episodes of "
                 f"{lengths} steps)")
        if size <= total:
            found = (f"returned {spread_out} of {len(batches)} batches with no transition "
                     "twice")
            expected = (f"a batch of {size} holds every transition at most once only "
                        f"{share:.1%} of the time")
        else:
            found = (f"returned {spread_out} of {len(batches)} batches holding every one of "
                     f"the {total} transitions")
            expected = (f"a batch of {size} holds all {total} only {share:.1%} of the time, "
                        "missing some")
        return failed(f"{where} {found}. Drawing every row uniformly among all stored "
                      f"transitions, independently of the others (with replacement), "
                      f"{expected}. Draw each row among all the stored transitions, those "
                      "already in the batch included (e.g. rng.integers(total, "
                      "size=batch_size)), not a set of different transitions.",
                      rule=UNIFORM_TRANSITIONS)
    return None


def _twin_seed(inputs):
    return 2**40 + inputs["seed"]


def _twin_seeds(inputs):
    """The seed of each pair of twin buffers (the second of a pair gets it as np.int64)."""
    return (_twin_seed(inputs), 0)


def _twin_env_seed(inputs, second):
    """The seed of the environment beside the first (``second`` false) or the second twin
    buffer of a pair: two seeds apart, so that a buffer drawing from its environment's
    generator (env.np_random) samples apart from its twin."""
    return inputs["seed"] + 1 + int(bool(second))


def _difference_words(first, second):
    """Where two twin buffers' decoded rows (_decoded_sample) first differ, in words."""
    if len(first) != len(second):
        return f"{len(first)} rows against {len(second)}"
    for index, (mine, theirs) in enumerate(zip(first, second)):
        if mine != theirs:
            try:
                return (f"row {index} was step {mine[1]} of episode {mine[0]} with "
                        f"{describe_goal(int(mine[7]))} for goal, against step {theirs[1]} of "
                        f"episode {theirs[0]} with {describe_goal(int(theirs[7]))}")
            except (TypeError, ValueError, IndexError):
                return f"row {index} differs"
    return "the same rows"


def _uniform_verdict(inputs, data):
    lengths = inputs["lengths"]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    total = int(offsets[-1])
    if data.get("numpy seed refused"):  # the probe stopped there: no draws to judge
        seed, error = data["numpy seed refused"][:2]
        return failed(f"HindsightReplayBuffer(..., seed={seed}) worked, but with "
                      f"seed=np.int64({seed}) it failed: {error}. A seed from a numpy array "
                      "is an np.int64: treat numpy's numbers exactly as Python's (pass seed "
                      "on to np.random.default_rng as it is).", rule=NUMPY_SCALARS)
    problem = wrong_amount("draws", data.get("drawn"), total * 200, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    counts = np.zeros(total)
    for episode, step in data["drawn"]:
        if not (0 <= episode < len(lengths) and 0 <= step < lengths[episode]):
            return failed(f"sample returned a transition that was not stored (episode "
                          f"{episode}, step {step}).", rule=TRANSITION_AS_STORED)
        counts[offsets[episode] + step] += 1
    twins = data.get("twins") or []
    seeds = _twin_seeds(inputs)
    problem = wrong_amount("batches of buffers of one seed", twins, 2 * len(seeds),
                           rule=BUFFER_OWN_GENERATOR)
    if problem:
        return problem
    env_seeds = [_twin_env_seed(inputs, second) for second in (False, True)]
    for seed, first, second in zip(seeds, twins[::2], twins[1::2]):
        if first != second:
            return failed("two buffers of one seed, HindsightReplayBuffer(env, ..., "
                          f"seed={seed}) and HindsightReplayBuffer(env, ..., "
                          f"seed=np.int64({seed})), holding "
                          "the same episodes, sampled different batches (two sample(32) calls "
                          f"each; {_difference_words(first, second)}). Each was "
                          "lent an environment of its own, reset with seeds "
                          f"{env_seeds[0]} and {env_seeds[1]}, and Python's `random` and "
                          "numpy's global generator were seeded differently before each "
                          "sampled: none of them may decide a batch. Draw everything, "
                          "transitions, coins and goal steps, with the buffer's own "
                          "np.random.default_rng(seed), made once in __init__, never with "
                          "the environment's generator (env.np_random: its resets draw from "
                          "it, and the buffer's draws would move them), np.random or random"
                          + (", whatever the seed: 0 is a seed like any other, not a missing "
                             "one (`default_rng(seed) if seed else default_rng()` and `seed or "
                             "None` take it for no seed)." if seed == 0 else "."),
                          rule=BUFFER_OWN_GENERATOR)
    problem = unseeded_problem(
        data.get("unseeded_globals"),
        lambda form: (f"{_unseeded_call(form)}{unseeded_words(form)} holding episodes of "
                      f"{lengths} steps"),
        f"sample({UNSEEDED_BATCH}) {UNSEEDED_BATCHES} times (rows shown as [episode, step])",
        UNSEEDED_BATCHES,
        _unseeded_global_seed(inputs), BUFFER_OWN_GENERATOR)
    if problem:
        return problem
    # the check's false-failure rate, shared by the chi-square and the repeats' tests
    if chi_square_pvalue(counts, np.full(total, 1 / total)) < FALSE_FAILURE_RATE / 2:
        per_episode = counts.reshape(-1)
        short = int(np.argmin(lengths))
        share = per_episode[offsets[short]:offsets[short + 1]].sum() / counts.sum()
        return failed(f"with episodes of {lengths} steps, transitions should be drawn "
                      f"uniformly ({total} equally likely), but the {lengths[short]}-step "
                      f"episode got {share:.1%} of the draws against "
                      f"{lengths[short] / total:.1%} expected. Drawing an episode first and "
                      "then a step favours short episodes: draw a transition among all "
                      "stored ones.", rule=UNIFORM_TRANSITIONS)
    problem = _spread_problem(inputs, data.get("spread") or [], FALSE_FAILURE_RATE / 2)
    if problem:
        return problem
    return passed("every stored transition is equally likely, whatever the length of its "
                  "episode, and batches smaller than, as large as and larger than the buffer "
                  "repeat transitions as often as rows drawn independently, with replacement, "
                  f"do (chi-square and binomial, rejection rate {FALSE_FAILURE_RATE:g} in "
                  "all); equal seeds give equal batches (seed 0 too), whatever the "
                  "environment's generator and the global ones hold, and unseeded buffers "
                  "draw apart and leave np.random and random as they were.")


# --- wrap-around: a short episode replaces a long one -----------------------------------------------

def _wrap_inputs(rng):
    capacity = int(rng.integers(2, 5))
    return {"capacity": capacity, "long": int(rng.integers(8, 12)),
            "short": int(rng.integers(1, 4)), "episodes": capacity + int(rng.integers(1, 4)),
            "seed": int(rng.integers(2**31))}


def _wrap_probe(inputs, HindsightReplayBuffer):
    rows = {}
    for strategy in STRATEGIES:
        buffer = _new_buffer(HindsightReplayBuffer, inputs["capacity"], 12, strategy, 4,
                             inputs["seed"])
        for episode in range(inputs["capacity"]):
            _store(buffer, episode, inputs["long"])
        for episode in range(inputs["capacity"], inputs["episodes"]):
            _store(buffer, episode, inputs["short"])
        rows[strategy] = [row for _ in range(20) for row in _decoded_sample(buffer, 32)]
        # the smallest buffer: one episode of one step, replaced by the next one
        tiny = _new_buffer(HindsightReplayBuffer, 1, 1, strategy, 4, inputs["seed"])
        _store(tiny, 0, 1)
        _store(tiny, 1, 1)
        rows[f"tiny {strategy}"] = _decoded_sample(tiny, 16)
    # a batch drawn, then two stores whose changes of length cancel out: the total is as
    # it was, the episodes' ends are not (nothing about them may be kept from before)
    cancelling = _new_buffer(HindsightReplayBuffer, len(CANCELLING[0]), 12, "future", 4,
                             inputs["seed"])
    for episode, length in enumerate(CANCELLING[0]):
        _store(cancelling, episode, length)
    _decoded_sample(cancelling, 32)
    for episode, length in enumerate(CANCELLING[1], start=len(CANCELLING[0])):
        _store(cancelling, episode, length)
    rows["cancelling"] = [row for _ in range(20) for row in _decoded_sample(cancelling, 32)]
    return rows


# the lengths of a full buffer's episodes, then of the two that replace its oldest two
CANCELLING = ((2, 3, 4), (3, 2))


def _wrap_verdict(inputs, data):
    capacity, episodes = inputs["capacity"], inputs["episodes"]
    lengths = [inputs["long"]] * capacity + [inputs["short"]] * (episodes - capacity)
    live = set(range(episodes - capacity, episodes))
    for strategy in STRATEGIES:
        problem = wrong_amount(f"rows for {strategy!r}", data.get(strategy, []), 640,
                               rule=SAMPLE_RETURNS)
        if problem:
            return problem
        problem = check_rows(data[strategy], lengths, strategy, live)
        if problem:
            feedback, rule = problem
            return failed(f"after {episodes} episodes in a buffer of {capacity} (long ones "
                          f"replaced by {inputs['short']}-step ones): {feedback}", rule=rule)
        tiny = data.get(f"tiny {strategy}", [])
        problem = wrong_amount(f"rows of sample(16) from the one-episode buffer ({strategy!r})",
                               tiny, 16, rule=SAMPLE_RETURNS)
        if problem:
            return problem
        problem = check_rows(tiny, [1, 1], strategy, {1})
        if problem:
            feedback, rule = problem
            return failed("HindsightReplayBuffer(env, max_episodes=1, max_episode_steps=1, "
                          f"strategy={strategy!r}) after two 1-step episodes, 0 then 1: "
                          f"{feedback}", rule=rule)
    lengths = [*CANCELLING[0], *CANCELLING[1]]
    live = set(range(len(CANCELLING[1]), len(lengths)))
    rows = data.get("cancelling") or []
    problem = wrong_amount("rows after the cancelling stores", rows, 640, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    made = (f"a buffer of {len(CANCELLING[0])} episodes of {list(CANCELLING[0])} steps, "
            f"sampled once, then given episodes of {list(CANCELLING[1])} steps (the same "
            "number of transitions, other episode ends)")
    problem = check_rows(rows, lengths, "future", live)
    if problem:
        feedback, rule = problem
        return failed(f"{made}: {feedback}", rule=rule)
    drawn = {(row[0], row[1]) for row in rows}
    never = [(episode, step) for episode in sorted(live) for step in range(lengths[episode])
             if (episode, step) not in drawn]
    if never:  # each is expected about 70 times in 640 draws: never by chance is impossible
        return failed(f"{made}: 640 draws never gave step {never[0][1]} of episode "
                      f"{never[0][0]}: find the episodes' ends from the lengths stored now, "
                      "at every sample (nothing computed from them may outlive a store).",
                      rule=UNIFORM_TRANSITIONS)
    return passed("after the buffer wraps, only the live episodes are sampled, and no goal "
                  "comes from the steps an overwritten longer episode left behind; a buffer "
                  "of one 1-step episode keeps the newest.")


# --- errors -----------------------------------------------------------------------------------------

def _errors_inputs(rng):
    return {"bad_k": -int(rng.integers(2, 6)), "seed": int(rng.integers(2**31))}


# strategies a student may take for "none given" (`strategy or 'future'`, `if not
# strategy:`): given, each is an unknown strategy, refused like any other; only a strategy
# not passed at all is the default (test_relabel_fraction checks the default)
FALSY_STRATEGIES = ("", None)
FALSY_STRATEGY_WHY = (": {strategy!r} is no strategy, and only a strategy not passed at all "
                      "takes the default 'future' (`strategy or 'future'` and `if not "
                      "strategy:` take {strategy!r} for one not given). Test the strategy as "
                      "given: `if strategy not in (...)`")


def _error_cases(inputs):
    """(call, the rule its ValueError keeps) of each bad input, in the probe's order."""
    return [
        ("HindsightReplayBuffer(..., strategy='futur')", UNKNOWN_STRATEGY_REFUSED),
        ("HindsightReplayBuffer(..., strategy='Future')", UNKNOWN_STRATEGY_REFUSED),
        ("HindsightReplayBuffer(..., strategy='final ')", UNKNOWN_STRATEGY_REFUSED),
        *[(f"HindsightReplayBuffer(..., strategy={strategy!r})", UNKNOWN_STRATEGY_REFUSED)
          for strategy in FALSY_STRATEGIES],
        (f"HindsightReplayBuffer(..., k={inputs['bad_k']})", NEGATIVE_K_REFUSED),
        ("HindsightReplayBuffer(..., k=-1)", NEGATIVE_K_REFUSED),
        (f"HindsightReplayBuffer(..., k=np.int64({inputs['bad_k']})) (a k from a numpy array)",
         NEGATIVE_K_REFUSED),
        ("sample(4) on an empty buffer", EMPTY_SAMPLE_REFUSED),
        ("sample(0)", BATCH_SIZE_REFUSED),
        ("store_episode of 7 steps when max_episode_steps is 6", LONG_EPISODE_REFUSED),
        ("store_episode with 3 actions but 3 observations (not 4)", MISMATCHED_EPISODE_REFUSED),
        ("store_episode with 3 actions and 4 observations but 3 achieved goals",
         MISMATCHED_EPISODE_REFUSED),
        ("store_episode with 3 actions but 5 observations and achieved goals",
         MISMATCHED_EPISODE_REFUSED),
        ("store_episode with 3 actions and 4 achieved goals but 5 observations",
         MISMATCHED_EPISODE_REFUSED),
    ]


def _errors_probe(inputs, HindsightReplayBuffer):
    env = goal_env()
    empty = _new_buffer(HindsightReplayBuffer, 5, 6, "future", 4, inputs["seed"])
    filled = _new_buffer(HindsightReplayBuffer, 5, 6, "future", 4, inputs["seed"])
    _store(filled, 0, 3)
    observations, achieved, desired, actions = synthetic_episode(1, 3)
    cases = [
        lambda: HindsightReplayBuffer(env, 5, 6, strategy="futur", k=4),
        lambda: HindsightReplayBuffer(env, 5, 6, strategy="Future", k=4),
        lambda: HindsightReplayBuffer(env, 5, 6, strategy="final ", k=4),
        *[lambda strategy=strategy: HindsightReplayBuffer(env, 5, 6, strategy=strategy, k=4)
          for strategy in FALSY_STRATEGIES],
        lambda: HindsightReplayBuffer(env, 5, 6, strategy="future", k=inputs["bad_k"]),
        lambda: HindsightReplayBuffer(env, 5, 6, strategy="future", k=-1),
        lambda: HindsightReplayBuffer(env, 5, 6, strategy="future", k=np.int64(inputs["bad_k"])),
        lambda: empty.sample(4),
        lambda: filled.sample(0),
        lambda: filled.store_episode(*synthetic_episode(2, 7)),
        lambda: filled.store_episode(observations[:3], achieved[:3], desired, actions),
        lambda: filled.store_episode(observations, achieved[:3], desired, actions),
        lambda: filled.store_episode(*synthetic_episode(1, 4)[:3], actions),
        lambda: filled.store_episode(synthetic_episode(1, 4)[0], achieved, desired, actions),
    ]
    outcomes = [[call, outcome_of(case)]
                for (call, _), case in zip(_error_cases(inputs), cases)]
    # a refused episode must leave the buffer as it was: here the row it would replace
    # holds the only stored episode
    single = _new_buffer(HindsightReplayBuffer, 1, 6, "future", 4, inputs["seed"])
    _store(single, 0, 3)
    refused = [outcome_of(single.store_episode, observations, goals, desired, actions)
               for goals in (achieved[:3], synthetic_episode(1, 4)[1])]
    # ... and the row the next episode replaces: still the oldest (here episode 0 of 0, 1)
    pair = _new_buffer(HindsightReplayBuffer, 2, 6, "future", 4, inputs["seed"])
    _store(pair, 0, 3)
    _store(pair, 1, 3)
    outcome_of(pair.store_episode, observations, achieved[:3], desired, actions)
    _store(pair, 2, 3)
    kept = sorted({row[0] for row in _decoded_sample(pair, 64)})
    # a new buffer's first episode refused (a bit more per vector, and one achieved goal
    # short): the storage the next episode finds is made for the next episode, not for it
    fresh = _new_buffer(HindsightReplayBuffer, 2, 6, "future", 4, inputs["seed"])
    widened = [np.concatenate([part, part[..., :1]], axis=-1)
               for part in (observations, achieved[:3], desired)]
    first_refused = outcome_of(fresh.store_episode, *widened, actions)
    then_stored = outcome_of(fresh.store_episode, *synthetic_episode(0, 3))
    return {"outcomes": outcomes, "refused": refused, "after": _decoded_sample(single, 32),
            "kept_after_refusal": kept, "first_refused": first_refused,
            "then_stored": then_stored,
            "after_first_refused": (_decoded_sample(fresh, 32)
                                    if then_stored["raised"] is None else [])}


def _errors_verdict(inputs, data):
    cases = _error_cases(inputs)
    problem = wrong_amount("outcomes", data["outcomes"], len(cases),
                           rule=UNKNOWN_STRATEGY_REFUSED)
    if problem:
        return problem
    falsy = {f"HindsightReplayBuffer(..., strategy={strategy!r})": strategy
             for strategy in FALSY_STRATEGIES}
    for (call, rule), (_, outcome) in zip(cases, data["outcomes"]):
        why = ""
        if call in falsy:
            strategy = falsy[call]
            if strategy is None and isinstance(outcome, dict) and \
                    outcome.get("raised") == "TypeError" and \
                    str(outcome.get("message", "")).strip():
                continue  # refused as no string at all: a refusal too
            why = FALSY_STRATEGY_WHY.format(strategy=strategy)
        problem = value_error_problem(call, outcome, why, rule=rule)
        if problem:
            return problem
    call = ("store_episode with 3 actions and 4 observations but 3 (and then 5) achieved "
            "goals, into a HindsightReplayBuffer(env, 1, 6) holding one 3-step episode")
    for outcome in (data.get("refused") or [None, None])[:2]:
        problem = value_error_problem(call, outcome, rule=MISMATCHED_EPISODE_REFUSED)
        if problem:
            return problem
    problem = wrong_amount("rows of sample(32) after the refused episode", data.get("after", []),
                           32, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    problem = value_error_problem(
        f"store_episode with {CODE_BITS + 1}-bit vectors and 3 actions but 3 achieved goals, "
        "as the first episode of a new HindsightReplayBuffer(env, 2, 6)",
        data.get("first_refused"), rule=MISMATCHED_EPISODE_REFUSED)
    if problem:
        return problem
    first = ("after a new buffer's first episode was refused (malformed, with vectors of "
             f"{CODE_BITS + 1} bits), a well-formed 3-step episode of {CODE_BITS}-bit vectors")
    stored = data.get("then_stored") or {}
    if stored.get("raised") is not None:
        return failed(f"{first} was refused too: store_episode raised {stored['raised']}: "
                      f"{stored.get('message', '')}. A refused episode leaves the buffer as it "
                      "was, storage included: check the whole episode before making or "
                      "writing anything.", rule=REFUSED_EPISODE_STORES_NOTHING)
    if len(data.get("after_first_refused", [])) != 32:
        return failed(f"{first} was stored, but sample(32) then returned "
                      f"{len(data.get('after_first_refused', []))} rows.", rule=SAMPLE_RETURNS)
    # only whether the stored episode is intact (the goal rules are other checks' business)
    for rows, before in ((data["after"], f"after {call} raised ValueError"),
                         (data["after_first_refused"], first)):
        for episode, step, _, _, next_episode, next_step, _, goal in rows:
            goal_episode = (goal - DESIRED_OFFSET if goal >= DESIRED_OFFSET
                            else goal // STEPS_PER_CODE)
            if (episode, next_episode, goal_episode) != (0, 0, 0) or not 0 <= step < 3 \
                    or next_step != step + 1:
                return failed(f"{before}, the buffer should hold that one episode unchanged, "
                              f"but sample returned a row with the observation of episode "
                              f"{episode}, step {step}, the next one of episode "
                              f"{next_episode}, step {next_step}, and {describe_goal(goal)}. "
                              "Check the whole episode before writing any of it.",
                              rule=REFUSED_EPISODE_STORES_NOTHING)
    if data.get("kept_after_refusal") != [1, 2]:
        return failed("a HindsightReplayBuffer(env, 2, 6) held episodes 0 and 1, refused a "
                      "malformed episode, then stored episode 2; it should then hold episodes "
                      "1 and 2 (the oldest, 0, replaced), but sample drew from episodes "
                      f"{data.get('kept_after_refusal')}. A refused episode must not move "
                      "the row the next one goes to: check the whole episode before claiming "
                      "a row.", rule=REFUSED_EPISODE_STORES_NOTHING)
    return passed("unknown strategies ('' and None too), k < 0 (numpy's too), empty "
                  "buffers, bad batch sizes and malformed episodes raise ValueError, and a "
                  "refused episode leaves the buffer as it was.")
