"""Checks for lesson 04: goal-conditioned Q-learning and hindsight experience replay."""

import math

import numpy as np

from checks.framework import (Callee, Check, LessonChecks, NotWrittenYet, ProbeError,
                              call_student, call_student_repeatedly, comparison, failed,
                              fill_in_place, kept_with, outcome_of, packed, passed,
                              reseed_global_generators, unpacked, value_error_problem,
                              wrong_amount)
from checks.expected import expected as reference
from checks.lending import AtMost, Served, mirrored
from checks.lesson01_qlearning import AGENT
from checks.records import Record
from checks.requirements import Rule
from checks.statistics import FALSE_FAILURE_RATE, describe_counts, fits

LESSON = "04_hindsight_replay"
STRATEGIES = ("future", "final", "episode")

# Synthetic episodes whose every vector says where it came from: the achieved goal at
# step t of episode e encodes e * STEPS_PER_CODE + t, the observation the same number
# plus OBSERVATION_OFFSET (so goals taken from observations show), and the desired goal
# DESIRED_OFFSET + e, which no step ever achieves.
CODE_BITS = 16
STEPS_PER_CODE = 64
OBSERVATION_OFFSET = 1 << 15
DESIRED_OFFSET = 30000

# --- the rules the checks test, grouped by check (the lesson's text tags each one) -------------

# test_goal_agent
AGENT_LEGAL_ACTIONS = Rule("agent-legal-actions", "The legal actions of every (state, goal) "
                           "pair are the n_bits flips 0 .. n_bits - 1.")
AGENT_INITIAL_VALUE = Rule("agent-initial-value", "A Q-value never set is initial_value.")
INITIAL_VALUE_ZERO = Rule("initial-value-zero", "initial_value=0.0 is a value like any "
                          "other: unseen Q-values then start at 0.0, not at the default.")
AGENT_DEFAULT_INITIAL_VALUE = Rule("agent-default-initial-value", "Without initial_value, "
                                   "unseen Q-values start at -10.0.")
AGENT_UPDATE = Rule("agent-update", "update follows lesson 01's rule and changes only the "
                    "Q-value of the pair and action it updates.")
AGENT_SEEDED = Rule("agent-seeded", "The agent's random choices come from lesson 01's agent's "
                    "own generator, seeded with seed: equal seeds give equal actions.")
# test_store_episode
LEN_COUNTS_TRANSITIONS = Rule("len-counts-transitions", "len(buffer) is the number of "
                              "transitions stored, 0 for an empty buffer.")
LEN_AFTER_WRAP = Rule("len-after-wrap", "len(buffer) counts the transitions the buffer holds "
                      "now, not the ones of episodes it overwrote.")
EPISODE_LENGTHS_ACCEPTED = Rule("episode-lengths-accepted", "store_episode accepts every "
                                "episode of 1 to max_episode_steps steps.")
EPISODE_COPIED = Rule("episode-copied", "store_episode copies the arrays it is given: a "
                      "caller that reuses them afterwards changes nothing stored.")
TRANSITION_AS_STORED = Rule("transition-as-stored", "Sampled transition t of an episode is its "
                            "observation t, action t and observation t + 1.")
SAMPLE_RETURNS = Rule("sample-returns", "sample(batch_size) returns (obs, actions, rewards, "
                      "next_obs, terminated, goals), one row per transition.")
# test_goal_steps
FUTURE_GOAL_STEPS = Rule("future-goal-steps", "'future' picks a goal step j in t + 1 .. T.")
FINAL_GOAL_STEP = Rule("final-goal-step", "'final' picks the goal step j = T, where the "
                       "episode ended.")
EPISODE_GOAL_STEPS = Rule("episode-goal-steps", "'episode' picks a goal step j in 1 .. T.")
GOAL_STEPS_UNIFORM = Rule("goal-steps-uniform", "The goal step is drawn uniformly among the "
                          "steps the strategy allows.")
GOAL_STEPS_FROM_RNG = Rule("goal-steps-from-rng", "hindsight_goal_steps draws with the "
                           "generator it is given, rng, and no other.")
STRATEGY_NAMES = Rule("strategy-names", "The strategies are the strings 'future', 'final' and "
                      "'episode', compared by value (==), so an equal string read at run time "
                      "works.")
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
                            "generator, seeded with seed: equal seeds give equal batches.")
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
# test_her_loop
LOOP_PLAYS_TO_END = Rule("loop-plays-to-end", "The loop plays until terminated or truncated.")
LOOP_STORES_EPISODE = Rule("loop-stores-episode", "The loop stores the episode once, at its "
                           "end, whole: T actions and T + 1 observations and achieved goals.")
LOOP_ONE_BATCH = Rule("loop-one-batch", "After storing, the loop samples one batch of "
                      "batch_size.")
LOOP_BATCH_GOALS = Rule("loop-batch-goals", "The loop updates the agent on each sampled "
                        "transition, in order, with the batch's own goal, as bits_to_int "
                        "numbers.")
LOOP_RETURNS_SUCCESS = Rule("loop-returns-success", "The loop returns True if the episode "
                            "reached its goal, else False.")
# test_her_learning
HER_LEARNS = Rule("her-learns", "Replaying from the buffer, the reference agent solves at "
                  "least 20% of 8-bit pairs and 15 points more than plain replay.")


def _bits(numbers):
    from course.bit_flipping import int_to_bits

    return int_to_bits(numbers, CODE_BITS)


def _numbers_of(bits):
    from course.bit_flipping import bits_to_int

    return bits_to_int(bits)


def action_of(episode, step, n_actions=5):
    return (3 * episode + step) % n_actions


def synthetic_episode(episode, length):
    """(observations, achieved_goals, desired_goal, actions) of synthetic episode
    ``episode`` with ``length`` steps."""
    steps = np.arange(length + 1)
    achieved = _bits(episode * STEPS_PER_CODE + steps)
    observations = _bits(OBSERVATION_OFFSET + episode * STEPS_PER_CODE + steps)
    actions = np.array([action_of(episode, t) for t in range(length)], dtype=np.int64)
    return observations, achieved, _bits(DESIRED_OFFSET + episode), actions


def goal_env():
    """A goal environment whose rewards the buffer recomputes: the bit-flipping rules
    (reward 0 and terminated where the goals are equal, else -1) on 16-bit codes. The
    student's buffer gets a copy of it (nothing it does to the copy reaches the grader)."""
    from course.bit_flipping import BitFlippingEnv

    return mirrored(BitFlippingEnv, CODE_BITS)


def _new_buffer(HindsightReplayBuffer, max_episodes, max_steps, strategy, k, seed):
    return call_student(f"HindsightReplayBuffer(env, {max_episodes}, {max_steps}, "
                        f"strategy={strategy!r}, k={k})", HindsightReplayBuffer, goal_env(),
                        max_episodes, max_steps, strategy=strategy, k=k, seed=seed)


def _store(buffer, episode, length):
    call_student("store_episode(observations, achieved_goals, desired_goal, actions)",
                 buffer.store_episode, *synthetic_episode(episode, length))


def _decoded_sample(buffer, batch_size):
    """One batch, each row decoded to (episode, step, action, reward, next episode, next
    step, terminated, goal code)."""
    return _decoded(call_student(f"sample({batch_size})", buffer.sample, batch_size),
                    batch_size)


class SampleProtocolError(ProbeError):
    """sample returned something other than six arrays of one row per transition."""


def _decoded(batch, batch_size):
    """The rows of one batch ``sample(batch_size)`` returned, decoded (see _decoded_sample)."""
    try:
        fields = [np.asarray(field) for field in batch]
    except TypeError:
        raise SampleProtocolError(f"sample({batch_size}) returned {type(batch).__name__}, "
                                  "not six arrays (obs, actions, rewards, next_obs, "
                                  "terminated, goals).") from None
    if len(fields) != 6:
        raise SampleProtocolError(f"sample({batch_size}) returned {len(fields)} items; "
                                  "expected six arrays (obs, actions, rewards, next_obs, "
                                  "terminated, goals).")
    obs, actions, rewards, next_obs, terminated, goals = fields
    try:
        here = _numbers_of(obs.reshape(batch_size, CODE_BITS)) - OBSERVATION_OFFSET
        there = _numbers_of(next_obs.reshape(batch_size, CODE_BITS)) - OBSERVATION_OFFSET
        goal_codes = _numbers_of(goals.reshape(batch_size, CODE_BITS))
        columns = [here // STEPS_PER_CODE, here % STEPS_PER_CODE,
                   actions.reshape(batch_size).astype(np.int64),
                   rewards.reshape(batch_size).astype(np.float64),
                   there // STEPS_PER_CODE, there % STEPS_PER_CODE,
                   terminated.reshape(batch_size).astype(bool), goal_codes]
    except (ValueError, TypeError) as error:
        raise SampleProtocolError(f"sample({batch_size}) returned arrays of the wrong "
                                  f"shape: {error}; expected (obs, actions, rewards, "
                                  "next_obs, terminated, goals), one row per "
                                  "transition.") from None
    return [list(row) for row in zip(*(column.tolist() for column in columns))]


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


def describe_goal(code):
    if code >= DESIRED_OFFSET:
        return f"the desired goal of episode {code - DESIRED_OFFSET}"
    return f"the goal achieved at step {code % STEPS_PER_CODE} of episode " \
           f"{code // STEPS_PER_CODE}"


# --- the goal-conditioned agent --------------------------------------------------------------

def _agent_inputs(rng):
    n_bits = int(rng.integers(3, 7))
    pairs = [[int(rng.integers(2 ** n_bits)), int(rng.integers(2 ** n_bits))] for _ in range(6)]
    return {"n_bits": n_bits, "initial_value": -float(rng.integers(2, 20)),
            "alpha": round(float(rng.uniform(0.2, 0.8)), 2), "discount": 0.9,
            "pairs": pairs, "updates": [[p, int(rng.integers(n_bits)), -1.0, q, False]
                                        for p, q in zip(pairs, pairs[1:])],
            "seed": int(rng.integers(2**31))}


def _agent_probe(inputs, GoalConditionedAgent):
    n_bits = inputs["n_bits"]
    agent = call_student("GoalConditionedAgent(...)", GoalConditionedAgent, n_bits,
                         alpha=inputs["alpha"], epsilon=0.0, discount=inputs["discount"],
                         initial_value=inputs["initial_value"], seed=inputs["seed"])
    pairs = [tuple(pair) for pair in inputs["pairs"]]
    initial = [[float(call_student("get_qvalue", agent.get_qvalue, pair, action))
                for action in range(n_bits)] for pair in pairs]
    legal = sorted(int(a) for a in call_student("get_legal_actions", agent.get_legal_actions,
                                                pairs[0]))
    after = []
    for pair, action, reward, next_pair, done in inputs["updates"]:
        call_student("update", agent.update, tuple(pair), action, reward, tuple(next_pair), done)
        after.append(float(call_student("get_qvalue", agent.get_qvalue, tuple(pair), action)))
    # every Q-value of each updated pair: an update changes its own action's only
    rows = [[float(call_student("get_qvalue", agent.get_qvalue, tuple(pair), action))
             for action in range(n_bits)] for pair, *_ in inputs["updates"]]
    default = call_student("GoalConditionedAgent(n_bits, alpha, epsilon, discount)",
                           GoalConditionedAgent, n_bits, alpha=inputs["alpha"], epsilon=0.0,
                           discount=inputs["discount"], seed=inputs["seed"])
    by_default = float(call_student("get_qvalue", default.get_qvalue, pairs[0], 0))
    zero = call_student("GoalConditionedAgent(..., initial_value=0.0)", GoalConditionedAgent,
                        n_bits, alpha=inputs["alpha"], epsilon=0.0,
                        discount=inputs["discount"], initial_value=0.0, seed=inputs["seed"])
    from_zero = float(call_student("get_qvalue", zero.get_qvalue, pairs[0], 0))
    # two agents of one seed, exploring, with the global generators seeded apart: equal
    # actions unless the draws come from somewhere other than the agent's own generator
    explored = []
    for offset in (0, 1):
        explorer = call_student(f"GoalConditionedAgent(..., epsilon=1.0, seed={inputs['seed']})",
                                GoalConditionedAgent, n_bits, alpha=inputs["alpha"],
                                epsilon=1.0, discount=inputs["discount"],
                                initial_value=inputs["initial_value"], seed=inputs["seed"])
        reseed_global_generators(inputs["seed"] + offset, near=explorer)
        explored.append([int(action) for action in call_student_repeatedly(
            f"get_action({pairs[0]})", explorer.get_action, EXPLORING_DRAWS, pairs[0])])
    return {"initial": initial, "legal": legal, "after": after, "rows": rows,
            "by_default": by_default, "from_zero": from_zero, "explored": explored}


EXPLORING_DRAWS = 40  # two honest agents agree on all; two independent ones on 3**-40 of runs


def _agent_verdict(inputs, data):
    n_bits, start = inputs["n_bits"], inputs["initial_value"]
    problem = wrong_amount("rows of Q-values", data["initial"], len(inputs["pairs"]),
                           rule=AGENT_INITIAL_VALUE)
    if problem:
        return problem
    if data["legal"] != list(range(n_bits)):
        return failed(f"with {n_bits} bits the legal actions of every (state, goal) pair "
                      f"are the flips 0..{n_bits - 1}; get_legal_actions gave {data['legal']}.",
                      rule=AGENT_LEGAL_ACTIONS)
    for pair, row in zip(inputs["pairs"], data["initial"]):
        if row != [start] * n_bits:
            return failed(f"a new GoalConditionedAgent(initial_value={start}) should give "
                          f"every Q-value of pair {tuple(pair)} as {start}; it gave {row}.",
                          rule=AGENT_INITIAL_VALUE)
    if data.get("from_zero") != 0.0:
        return failed("GoalConditionedAgent(..., initial_value=0.0) should start every "
                      f"Q-value at 0.0; get_qvalue({tuple(inputs['pairs'][0])}, 0) gave "
                      f"{data.get('from_zero')!r}. 0.0 is a value, not a missing one: keep "
                      "initial_value as given (`initial_value or -10.0` makes 0.0 -10.0).",
                      rule=INITIAL_VALUE_ZERO)
    if data["by_default"] != -10.0:
        return failed("GoalConditionedAgent(n_bits, alpha, epsilon, discount) without "
                      "initial_value should start every Q-value at the default -10.0; "
                      f"get_qvalue({tuple(inputs['pairs'][0])}, 0) gave {data['by_default']!r}.",
                      rule=AGENT_DEFAULT_INITIAL_VALUE)
    problem = wrong_amount("updates", data["after"], len(inputs["updates"]), rule=AGENT_UPDATE)
    if problem:
        return problem
    history = reference(LESSON, "goal_qvalues_after_updates", inputs)
    for (pair, action, reward, next_pair, done), got, want in zip(
            inputs["updates"], data["after"], history):
        if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9):
            return failed(f"after update({tuple(pair)}, {action}, {reward}, "
                          f"{tuple(next_pair)}, False) Q = {got!r}; expected {want:.6g}. The "
                          "update is lesson 01's, with unseen Q-values at initial_value.",
                          rule=AGENT_UPDATE)
    final = {}  # (pair, action) -> its value after all the updates
    for (pair, action, *_), value in zip(inputs["updates"], history):
        final[(tuple(pair), action)] = value
    problem = wrong_amount("rows of updated pairs", data.get("rows", []),
                           len(inputs["updates"]), rule=AGENT_UPDATE)
    if problem:
        return problem
    for (pair, *_), row in zip(inputs["updates"], data["rows"]):
        want = [final.get((tuple(pair), action), start) for action in range(n_bits)]
        if not np.allclose(row, want, rtol=1e-9, atol=1e-9):
            return failed(f"after the updates, the Q-values of pair {tuple(pair)} are {row}; "
                          f"expected {[round(v, 6) for v in want]}: setting one action's "
                          "Q-value leaves the pair's other actions as they were.",
                          rule=AGENT_UPDATE)
    explored = data.get("explored") or []
    problem = wrong_amount("runs of exploring actions", explored, 2, rule=AGENT_SEEDED)
    if problem:
        return problem
    if explored[0] != explored[1]:
        return failed(f"two GoalConditionedAgent(..., epsilon=1.0, seed={inputs['seed']}) "
                      f"explored differently: {explored[0][:8]}... and {explored[1][:8]}... "
                      "Pass seed on to lesson 01's agent, whose own generator makes every "
                      "random choice (not numpy's global one, nor a new unseeded one).",
                      rule=AGENT_SEEDED)
    return passed(f"unseen pairs start at {start} (0.0 and the default -10.0 too), actions "
                  f"are the {n_bits} flips, updates follow lesson 01's rule, and equal seeds "
                  "explore alike.")


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
    return {"lengths": lengths, "rows": rows, "long": call_student("len(buffer)", len, long),
            "one": _decoded_sample(buffer, 1), "after_wrap": after_wrap}


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


# --- which step a substitute goal comes from ----------------------------------------------------

def _steps_inputs(rng):
    lengths = rng.integers(2, 10, size=200)
    return {"lengths": lengths.tolist(),
            "steps": [int(rng.integers(length)) for length in lengths],
            "draws": 300, "seed": int(rng.integers(2**31))}


def _steps_probe(inputs, hindsight_goal_steps):
    rng = mirrored(np.random.default_rng, inputs["seed"])  # the student's code draws from it
    steps, lengths = np.array(inputs["steps"]), np.array(inputs["lengths"])
    chosen, refused = {}, {}
    for strategy in STRATEGIES:
        # a string built at run time, as one read from a config would be: `is "final"`
        # (identity, not equality) fails on it
        given = "".join(list(strategy))
        try:
            drawn = [call_student(f"hindsight_goal_steps({strategy!r}, steps, lengths, rng)",
                                  hindsight_goal_steps, given, steps, lengths, rng)
                     for _ in range(inputs["draws"])]
        except NotWrittenYet:
            raise
        except ProbeError as error:
            refused[strategy] = str(error)
            continue
        try:
            chosen[strategy] = np.asarray(drawn, dtype=np.int64).reshape(
                inputs["draws"], steps.size).T.tolist()
        except ValueError:
            raise ProbeError(f"hindsight_goal_steps({strategy!r}, ...) must return one step "
                             "per transition.") from None
    if refused:
        return {"refused": refused}
    # two generators of one seed, with numpy's and Python's global generators seeded
    # apart: equal draws unless the code draws from something other than rng
    twins = {}
    for strategy in ("future", "episode"):
        twins[strategy] = []
        for offset in (0, 1):
            twin = mirrored(np.random.default_rng, inputs["seed"] + 1)
            reseed_global_generators(inputs["seed"] + offset, near=hindsight_goal_steps)
            twins[strategy].append(np.asarray(call_student(
                f"hindsight_goal_steps({strategy!r}, steps, lengths, rng)",
                hindsight_goal_steps, strategy, steps, lengths, twin)).tolist())
    return {**chosen, "twins": twins}


def _allowed(strategy, step, length):
    if strategy == "future":
        return range(step + 1, length + 1)
    if strategy == "final":
        return range(length, length + 1)
    return range(1, length + 1)


STEP_RULES = {"future": FUTURE_GOAL_STEPS, "final": FINAL_GOAL_STEP,
              "episode": EPISODE_GOAL_STEPS}


def _steps_verdict(inputs, data):
    refused = data.get("refused") or {}
    if refused:
        strategy, error = next(iter(refused.items()))
        return failed(f"hindsight_goal_steps({strategy!r}, ...), with the strategy given as a "
                      f"string made at run time (as one read from a file is), failed: {error}. "
                      "Compare strategies with ==, not `is`.", rule=STRATEGY_NAMES)
    rules = {"future": "a step after the transition's own, t + 1 .. T (the goal the "
                       "transition itself achieved, t + 1, included)",
             "final": "the episode's last step, T",
             "episode": "any step of the episode that was reached, 1 .. T"}
    for strategy in STRATEGIES:
        problem = wrong_amount(f"rows for {strategy!r}", data.get(strategy, []),
                               len(inputs["steps"]), rule=STEP_RULES[strategy])
        if problem:
            return problem
        for step, length, chosen in zip(inputs["steps"], inputs["lengths"], data[strategy]):
            problem = wrong_amount("draws", chosen, inputs["draws"], rule=STEP_RULES[strategy])
            if problem:
                return problem
            allowed = _allowed(strategy, step, length)
            outside = [c for c in chosen if c not in allowed]
            if outside:
                hint = (" Index t is the goal achieved *before* the transition (SB3 issue "
                        "847): the transition itself achieves the goal at t + 1."
                        if strategy == "future" and step in outside else "")
                return failed(f"strategy {strategy!r} for the transition at step t={step} of "
                              f"an episode of T={length} steps chose goal step "
                              f"{outside[0]}; it must be {rules[strategy]}, as an index into "
                              f"the episode's T + 1 achieved goals.{hint}",
                              rule=STEP_RULES[strategy])
    # each allowed step equally likely, pooled over transitions with the same options
    for strategy in ("future", "episode"):
        for size in range(2, 10):
            offsets = [c - _allowed(strategy, s, n)[0] for s, n, row in
                       zip(inputs["steps"], inputs["lengths"], data[strategy])
                       if len(_allowed(strategy, s, n)) == size for c in row]
            if len(offsets) < 50 * size:
                continue
            counts = np.bincount(offsets, minlength=size)
            if not fits(counts, np.full(size, 1 / size)):
                return failed(f"strategy {strategy!r} should pick uniformly among the "
                              f"{size} allowed goal steps, but picks them unevenly: "
                              + describe_counts(counts, np.full(size, 1 / size),
                                                [f"option {i + 1}" for i in range(size)])
                              + ".", rule=GOAL_STEPS_UNIFORM)
    twins = data.get("twins") or {}
    for strategy in ("future", "episode"):
        pair = twins.get(strategy) or []
        problem = wrong_amount(f"draws with two generators of one seed ({strategy!r})", pair,
                               2, rule=GOAL_STEPS_FROM_RNG)
        if problem:
            return problem
        if pair[0] != pair[1]:
            return failed(f"hindsight_goal_steps({strategy!r}, steps, lengths, rng) drew "
                          "different goal steps from two generators made with the same seed "
                          "(numpy's global generator seeded differently each time): draw "
                          "with rng, the generator you are given, and nothing else.",
                          rule=GOAL_STEPS_FROM_RNG)
    return passed("future goals come from steps t + 1 .. T, final from T, episode from "
                  f"1 .. T, uniformly (chi-square, rejection rate {FALSE_FAILURE_RATE:g}), "
                  "drawn with the generator given.")


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
    return passed("every substitute goal was achieved in the transition's own episode, at "
                  "a step its strategy allows.")


# --- rewards and termination are recomputed ----------------------------------------------------

def _rewards_inputs(rng):
    return {"lengths": rng.integers(2, 10, size=6).tolist(), "seed": int(rng.integers(2**31))}


def _rewards_probe(inputs, HindsightReplayBuffer):
    buffer = _new_buffer(HindsightReplayBuffer, 20, 10, "future", 4, inputs["seed"])
    for episode, length in enumerate(inputs["lengths"]):
        _store(buffer, episode, length)
    # a one-step episode that reached its own desired goal: the original goal's reward
    # must be recomputed too (0 and terminated, not the -1 of a miss)
    reached = _new_buffer(HindsightReplayBuffer, 2, 4, "future", 4, inputs["seed"])
    observations, achieved, _, actions = synthetic_episode(REACHED_EPISODE, 1)
    call_student("store_episode(observations, achieved_goals, desired_goal, actions)",
                 reached.store_episode, observations, achieved, achieved[1], actions)
    return {"rows": [row for _ in range(20) for row in _decoded_sample(buffer, 32)],
            "reached": _decoded_sample(reached, REACHED_ROWS)}


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
    achieved_by_row = 0
    for episode, step, _, reward, _, _, terminated, goal in data["reached"] + data["rows"]:
        reached = goal == episode * STEPS_PER_CODE + step + 1  # the goal this step achieved
        achieved_by_row += reached and goal < DESIRED_OFFSET and episode != REACHED_EPISODE
        want_reward, want_done = (0.0, True) if reached else (-1.0, False)
        where = (f"the transition at step {step} of episode {episode} was paired with "
                 f"{describe_goal(goal)}" if episode != REACHED_EPISODE else
                 "the one transition of an episode that reached its own desired goal, "
                 "sampled with that goal")
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


def _fraction_probe(inputs, HindsightReplayBuffer):
    relabelled = []
    for k in inputs["ks"]:
        try:
            buffer = _new_buffer(HindsightReplayBuffer, 10, 8, "episode", k, inputs["seed"])
        except NotWrittenYet:
            raise
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
    return {"relabelled": relabelled, "singles": int(singles), "defaults": defaults}


SINGLE_K = 1  # a share of 1/2: rounding per batch of one gives 0 or 1, never half


def _binomial_misfit(count, draws, share):
    """Whether ``count`` relabelled of ``draws`` is implausible at share ``share`` (two-sided
    binomial test at the false-failure rate)."""
    from scipy import stats  # here: scipy takes a second to import

    low, high = stats.binom.cdf(count, draws, share), stats.binom.sf(count - 1, draws, share)
    return not isinstance(count, int) or min(low, high) < FALSE_FAILURE_RATE / 2


def _fraction_verdict(inputs, data):
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
                  f"{', '.join(map(str, inputs['ks']))}, each transition on its own coin, "
                  f"and 4/5 with the defaults, strategy='future' and k=4 (binomial tests, "
                  f"rejection rate {FALSE_FAILURE_RATE:g} each).")


# --- transitions are drawn uniformly ------------------------------------------------------------

def _uniform_inputs(rng):
    return {"lengths": rng.integers(1, 9, size=6).tolist(), "seed": int(rng.integers(2**31))}


def _uniform_probe(inputs, HindsightReplayBuffer):
    buffer = _new_buffer(HindsightReplayBuffer, 10, 8, "final", 4, inputs["seed"])
    for episode, length in enumerate(inputs["lengths"]):
        _store(buffer, episode, length)
    total = sum(inputs["lengths"])
    rows = [row for _ in range(total * 2) for row in _decoded_sample(buffer, 100)]
    # two buffers of one seed, the global generators seeded apart before each samples:
    # equal batches unless something other than the buffer's own generator draws
    twins = []
    for offset in (0, 1):
        twin = _new_buffer(HindsightReplayBuffer, 10, 8, "future", 4, inputs["seed"] + 1)
        for episode, length in enumerate(inputs["lengths"]):
            _store(twin, episode, length)
        reseed_global_generators(inputs["seed"] + offset, near=twin)
        twins.append([row for _ in range(2) for row in _decoded_sample(twin, 32)])
    return {"drawn": [[row[0], row[1]] for row in rows], "twins": twins}


def _uniform_verdict(inputs, data):
    lengths = inputs["lengths"]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    total = int(offsets[-1])
    problem = wrong_amount("draws", data["drawn"], total * 200, rule=SAMPLE_RETURNS)
    if problem:
        return problem
    counts = np.zeros(total)
    for episode, step in data["drawn"]:
        if not (0 <= episode < len(lengths) and 0 <= step < lengths[episode]):
            return failed(f"sample returned a transition that was not stored (episode "
                          f"{episode}, step {step}).", rule=TRANSITION_AS_STORED)
        counts[offsets[episode] + step] += 1
    twins = data.get("twins") or []
    problem = wrong_amount("batches of two buffers of one seed", twins, 2,
                           rule=BUFFER_OWN_GENERATOR)
    if problem:
        return problem
    if twins[0] != twins[1]:
        return failed(f"two HindsightReplayBuffer(..., seed={inputs['seed'] + 1}) holding the "
                      "same episodes sampled different batches (numpy's global generator "
                      "seeded differently each time): draw everything, transitions, coins and "
                      "goal steps, with the buffer's own np.random.default_rng(seed), made "
                      "once in __init__.", rule=BUFFER_OWN_GENERATOR)
    if fits(counts, np.full(total, 1 / total)):
        return passed("every stored transition is equally likely, whatever the length of "
                      f"its episode (chi-square, rejection rate {FALSE_FAILURE_RATE:g}), and "
                      "equal seeds give equal batches.")
    per_episode = counts.reshape(-1)
    short = int(np.argmin(lengths))
    share = per_episode[offsets[short]:offsets[short + 1]].sum() / counts.sum()
    return failed(f"with episodes of {lengths} steps, transitions should be drawn uniformly "
                  f"({total} equally likely), but the {lengths[short]}-step episode got "
                  f"{share:.1%} of the draws against {lengths[short] / total:.1%} expected. "
                  "Drawing an episode first and then a step favours short episodes: draw a "
                  "transition among all stored ones.", rule=UNIFORM_TRANSITIONS)


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
    return rows


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
    return passed("after the buffer wraps, only the live episodes are sampled, and no goal "
                  "comes from the steps an overwritten longer episode left behind; a buffer "
                  "of one 1-step episode keeps the newest.")


# --- errors -----------------------------------------------------------------------------------------

def _errors_inputs(rng):
    return {"bad_k": -int(rng.integers(2, 6)), "seed": int(rng.integers(2**31))}


def _error_cases(inputs):
    """(call, the rule its ValueError keeps) of each bad input, in the probe's order."""
    return [
        ("HindsightReplayBuffer(..., strategy='futur')", UNKNOWN_STRATEGY_REFUSED),
        (f"HindsightReplayBuffer(..., k={inputs['bad_k']})", NEGATIVE_K_REFUSED),
        ("HindsightReplayBuffer(..., k=-1)", NEGATIVE_K_REFUSED),
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
        lambda: HindsightReplayBuffer(env, 5, 6, strategy="future", k=inputs["bad_k"]),
        lambda: HindsightReplayBuffer(env, 5, 6, strategy="future", k=-1),
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
    return {"outcomes": outcomes, "refused": refused, "after": _decoded_sample(single, 32)}


def _errors_verdict(inputs, data):
    cases = _error_cases(inputs)
    problem = wrong_amount("outcomes", data["outcomes"], len(cases),
                           rule=UNKNOWN_STRATEGY_REFUSED)
    if problem:
        return problem
    for (call, rule), (_, outcome) in zip(cases, data["outcomes"]):
        problem = value_error_problem(call, outcome, rule=rule)
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
    # only whether the stored episode is intact (the goal rules are other checks' business)
    for episode, step, _, _, next_episode, next_step, _, goal in data["after"]:
        goal_episode = goal - DESIRED_OFFSET if goal >= DESIRED_OFFSET else goal // STEPS_PER_CODE
        if (episode, next_episode, goal_episode) != (0, 0, 0) or not 0 <= step < 3 \
                or next_step != step + 1:
            return failed(f"after {call} raised ValueError, the buffer should still hold "
                          f"that episode unchanged, but sample returned a row with the "
                          f"observation of episode {episode}, step {step}, the next one of "
                          f"episode {next_episode}, step {next_step}, and "
                          f"{describe_goal(goal)}. Check the whole episode before writing "
                          "any of it.", rule=REFUSED_EPISODE_STORES_NOTHING)
    return passed("unknown strategies, k < 0, empty buffers, bad batch sizes and malformed "
                  "episodes raise ValueError, and a refused episode leaves the buffer as it "
                  "was.")


# --- the episode loop ---------------------------------------------------------------------------

class ScriptedGoalAgent:
    """Flips a bit that differs from the goal (``solves``), or one that already agrees
    with it, which never reaches the goal; records every update. Served to the loop."""

    # a pair is two ints; arrays in it would be broadcast together: 64 numbers at most
    __lending__ = Served(remote=("get_action",), deferred=("update",),
                         readable=("epsilon", "n_bits"), settable=("epsilon",),
                         limits={"get_action": {"pair": AtMost(
                             64, "takes a (state, goal) pair of at most {limit} numbers")}})

    def __init__(self, n_bits, solves):
        self.n_bits, self.solves, self.epsilon = n_bits, solves, 0.0
        self.updates = Record("update")

    def get_action(self, pair):
        state, goal = pair
        differing = state ^ goal
        bits = differing if self.solves else ~differing & ((1 << self.n_bits) - 1)
        if not bits:  # every bit differs: flipping the first one cannot reach the goal
            return 0
        return self.n_bits - bits.bit_length()  # the most significant such bit

    def update(self, pair, action, reward, next_pair, terminated):
        self.updates.append([[int(pair[0]), int(pair[1])], int(action), float(reward),
                             [int(next_pair[0]), int(next_pair[1])], bool(terminated)])


# The loop check's episodes have at most 6 steps of 6 bits, 42 numbers an array, and it
# samples batches of at most 11 rows; these limits are more than 20 times that. A
# sample's cost grows with its rows times the stored episode's width: 0.1 s at most.
EPISODE_ARRAY = AtMost(1_024, "takes at most {limit:,} numbers in each array of an episode")
HINDSIGHT_BATCH = AtMost(256, "serves at most {limit:,} transitions per call", shape=True)


class RecordingHindsightBuffer:
    """Records stored episodes and sample calls; hands out the last episode's transitions
    with the final goal substituted in every other row. Served to the loop."""

    __lending__ = Served(remote=("sample", "__len__"), deferred=("store_episode",),
                         limits={"sample": {"batch_size": HINDSIGHT_BATCH},
                                 "store_episode": dict.fromkeys(
                                     ("observations", "achieved_goals", "desired_goal",
                                      "actions"), EPISODE_ARRAY)})

    def __len__(self):
        return sum(len(episode["actions"]) for episode in self.episodes)

    def __init__(self, env):
        self.env, self.episodes, self.samples = env, Record("store_episode"), Record("sample")

    def store_episode(self, observations, achieved_goals, desired_goal, actions):
        self.episodes.append({"observations": np.asarray(observations).tolist(),
                              "achieved_goals": np.asarray(achieved_goals).tolist(),
                              "desired_goal": np.asarray(desired_goal).tolist(),
                              "actions": np.asarray(actions).tolist()})

    def sample(self, batch_size):
        if not self.episodes:
            raise ValueError("sample() before any episode was stored")
        episode = self.episodes[-1]
        # the transitions the episode holds whole: a loop that stored one observation too
        # few is told so by the verdict, not by an IndexError here
        length = min(len(episode["actions"]), len(episode["observations"]) - 1,
                     len(episode["achieved_goals"]) - 1)
        if length < 1:
            raise ValueError("sample() after storing an episode with no whole transition "
                             "(T actions need T + 1 observations and achieved goals)")
        steps = [j % length for j in range(batch_size)]
        goals = [episode["achieved_goals"][length] if j % 2 else episode["desired_goal"]
                 for j in range(batch_size)]
        next_achieved = np.array([episode["achieved_goals"][t + 1] for t in steps])
        rows = {"obs": np.array([episode["observations"][t] for t in steps]),
                "actions": np.array([episode["actions"][t] for t in steps]),
                "rewards": self.env.compute_reward(next_achieved, np.array(goals), {}),
                "next_obs": np.array([episode["observations"][t + 1] for t in steps]),
                "terminated": self.env.compute_terminated(next_achieved, np.array(goals), {}),
                "goals": np.array(goals)}
        self.samples.append({"batch_size": batch_size,
                             **{name: np.asarray(value).tolist() for name, value in rows.items()}})
        return tuple(rows.values())


def _loop_inputs(rng):
    return {"n_bits": int(rng.integers(3, 7)), "batch_size": int(rng.integers(4, 12)),
            "seeds": rng.integers(2**31, size=2).tolist()}


def _loop_probe(inputs, play_and_learn_with_her):
    from course.bit_flipping import make_bit_flipping

    outcome = {}
    for case, solves, seed in (("solves", True, inputs["seeds"][0]),
                               ("fails", False, inputs["seeds"][1])):
        env = mirrored(make_bit_flipping, inputs["n_bits"], seed, logged=("reset", "step"))
        agent = ScriptedGoalAgent(inputs["n_bits"], solves)
        buffer = RecordingHindsightBuffer(env)
        result = call_student("play_and_learn_with_her(env, agent, replay, batch_size)",
                              play_and_learn_with_her, env, agent, buffer, inputs["batch_size"])
        outcome[case] = {"returned": bool(result) if isinstance(result, (bool, np.bool_))
                         else repr(result)[:50], "steps": int(env.steps),
                         "episodes": buffer.episodes, "samples": buffer.samples,
                         "updates": agent.updates}
    return outcome


def _loop_verdict(inputs, data):
    from course.bit_flipping import bits_to_int

    n_bits, batch = inputs["n_bits"], inputs["batch_size"]
    for case in ("solves", "fails"):
        run = data[case]
        if len(run["episodes"]) != 1:
            return failed(f"one episode should be stored with replay.store_episode, once, at "
                          f"its end; it was called {len(run['episodes'])} times.",
                          rule=LOOP_STORES_EPISODE)
        episode = run["episodes"][0]
        steps = run["steps"]
        if case == "fails" and steps != n_bits:
            return failed(f"an episode that never reaches its goal should run until truncated "
                          f"after {n_bits} steps; it ran {steps}.", rule=LOOP_PLAYS_TO_END)
        if (len(episode["actions"]) != steps or len(episode["observations"]) != steps + 1
                or len(episode["achieved_goals"]) != steps + 1):
            return failed(f"the episode took {steps} steps, so store {steps} actions and "
                          f"{steps + 1} observations and achieved goals (the first, from "
                          "reset, included); got "
                          f"{len(episode['actions'])}, {len(episode['observations'])} and "
                          f"{len(episode['achieved_goals'])}.", rule=LOOP_STORES_EPISODE)
        if [s["batch_size"] for s in run["samples"]] != [batch]:
            return failed(f"after storing the episode, sample one batch of {batch} "
                          f"(batch_size); got sample calls {[s['batch_size'] for s in run['samples']]}.",
                          rule=LOOP_ONE_BATCH)
        sample = run["samples"][0]
        want = [[[int(bits_to_int(o)), int(bits_to_int(g))], int(a), float(r),
                 [int(bits_to_int(o2)), int(bits_to_int(g))], bool(d)]
                for o, a, r, o2, d, g in zip(sample["obs"], sample["actions"],
                                             sample["rewards"], sample["next_obs"],
                                             sample["terminated"], sample["goals"])]
        if run["updates"] != want:
            shown = run["updates"][:1] or "no update"
            return failed("the agent should be updated once on each sampled transition, in "
                          "order, as agent.update((state, goal), action, reward, (next_state, "
                          "goal), terminated) with states and goals as bits_to_int numbers and "
                          "the batch's own goal; first update was "
                          f"{shown}, expected {want[:1]}.", rule=LOOP_BATCH_GOALS)
    if data["solves"]["returned"] is not True or data["fails"]["returned"] is not False:
        return failed("play_and_learn_with_her should return True when the episode reached "
                      f"its goal and False otherwise; it returned {data['solves']['returned']} "
                      f"and {data['fails']['returned']}.", rule=LOOP_RETURNS_SUCCESS)
    return passed("each episode is played to its end, stored whole, then one batch is "
                  "replayed into the agent with the batch's goals.")


# --- learning: HER where plain replay fails ----------------------------------------------------------

LEARNING = dict(n_bits=8, episodes=3000, batch_size=48, alpha=0.5, epsilon=0.2,
                discount=0.98, initial_value=-10.0, k=4)
MIN_SUCCESS, MIN_GAIN = 0.2, 0.15  # reference ~0.36 vs ~0.013 without HER


def _learning_inputs(rng):
    return {"seeds": rng.integers(2**31, size=2).tolist(), **LEARNING}


class FlipsSeen:
    """The grader's bit-flipping environment, remembering every (state, flip, next state)
    it produced, as numbers."""

    def __init__(self, env):
        self.env, self.flips = env, set()

    def reset(self, **kwargs):
        return self.env.reset(**kwargs)

    def step(self, action):
        from course.bit_flipping import bits_to_int

        state = int(bits_to_int(self.env.state))
        result = self.env.step(action)
        self.flips.add((state, int(action), int(bits_to_int(result[0]["observation"]))))
        return result

    def __getattr__(self, name):
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)


class LearnsFromRealFlips:
    """The grader's agent: it learns only from flips that happened, with the reward and
    termination their goal gives, whatever goal the buffer relabelled them with."""

    def __init__(self, agent, env):
        self.agent, self.env = agent, env

    def get_action(self, pair):
        return self.agent.get_action(pair)

    def update(self, pair, action, reward, next_pair, terminated):
        (state, goal), (next_state, next_goal) = pair, next_pair
        reached = next_state == goal
        if (state, int(action), next_state) not in self.env.flips or goal != next_goal:
            raise ProbeError(f"your buffer's sample returned the transition (state {state}, "
                             f"flip {action}, next state {next_state}), which no episode "
                             "stored in it contains.")
        if float(reward) != (0.0 if reached else -1.0) or bool(terminated) != reached:
            raise ProbeError(f"your buffer's sample gave the flip {state} -> {next_state} "
                             f"with goal {goal} the reward {reward} and terminated="
                             f"{terminated}; that goal gives {0.0 if reached else -1.0} and "
                             f"{reached}. Recompute rewards for the substituted goal.")
        self.agent.update(pair, action, reward, next_pair, terminated)


def train_with_buffer(HindsightReplayBuffer, seed, k, n_bits, episodes, batch_size, alpha,
                      epsilon, discount, initial_value):
    """The Q-table the reference agent learns on bit flipping with the reference loop,
    replaying from a ``HindsightReplayBuffer`` ('future', ``k``) of the caller's."""
    from course.bit_flipping import BitFlippingEnv, goal_qtable, make_bit_flipping
    from hindsight_replay import GoalConditionedAgent, play_and_learn_with_her

    env = FlipsSeen(make_bit_flipping(n_bits, seed))
    agent = GoalConditionedAgent(n_bits, alpha=alpha, epsilon=epsilon, discount=discount,
                                 initial_value=initial_value, seed=seed)
    replay = call_student(f"HindsightReplayBuffer(env, {episodes}, {n_bits}, "
                          f"strategy='future', k={k})", HindsightReplayBuffer,
                          mirrored(BitFlippingEnv, n_bits), episodes, n_bits,
                          strategy="future", k=k, seed=seed)
    learner = LearnsFromRealFlips(agent, env)
    for _ in range(episodes):
        try:
            play_and_learn_with_her(env, learner, replay, batch_size)
        except ProbeError:
            raise
        except Exception as error:  # the buffer's store_episode or sample raised
            raise ProbeError(f"training with your buffer raised {type(error).__name__}: "
                             f"{error}") from None
    return goal_qtable(agent, n_bits)


def _learning_probe(inputs, HindsightReplayBuffer):
    settings = {key: inputs[key] for key in LEARNING}
    return {"qtables": [packed(train_with_buffer(HindsightReplayBuffer, seed, **settings))
                        for seed in inputs["seeds"]]}


def _learning_baseline(inputs):
    return reference(LESSON, "without_her", inputs["seeds"],
                     {key: inputs[key] for key in LEARNING})


def _learning_verdict(inputs, data):
    from course.bit_flipping import greedy_success_rate

    n_bits = inputs["n_bits"]
    problem = wrong_amount("Q-tables", data["qtables"], len(inputs["seeds"]), rule=HER_LEARNS)
    if problem:
        return problem
    shape = (2 ** n_bits, 2 ** n_bits, n_bits)
    yours = float(np.mean([greedy_success_rate(unpacked(table, shape))
                           for table in data["qtables"]]))
    baseline = _learning_baseline(inputs)
    summary = (f"on {n_bits}-bit flipping after {inputs['episodes']} episodes, the course's "
               f"agent and loop replaying from your HindsightReplayBuffer reach the goal from "
               f"{yours:.0%} of all (state, goal) pairs greedily (mean of "
               f"{len(inputs['seeds'])} seeds), against {baseline:.0%} replaying without "
               "relabelling")
    figure = comparison(f"{n_bits}-bit flipping: (state, goal) pairs solved greedily "
                        f"(mean of {len(inputs['seeds'])} seeds)", "share solved",
                        [f"after {inputs['episodes']} episodes"],
                        {"your HER buffer": [yours], "no relabelling": [baseline]})
    if yours < MIN_SUCCESS or yours < baseline + MIN_GAIN:
        return failed(summary + f". HER should reach at least {MIN_SUCCESS:.0%} and beat "
                      f"plain replay by {MIN_GAIN:.0%}.", figure=figure, rule=HER_LEARNS)
    return passed(summary + ".", figure=figure)


# The buffer draws its substitute goals' steps with the student's hindsight_goal_steps.
GOAL_STEPS = Callee("hindsight_goal_steps", LESSON, ("test_goal_steps",))

CHECKS = LessonChecks(LESSON, [
    Check("test_goal_agent", "goal-conditioned agent", ("GoalConditionedAgent",),
          _agent_inputs, _agent_probe, _agent_verdict,
          calls=(AGENT,),
          asks="GoalConditionedAgent's legal actions are the n_bits flips, an unseen Q-value is "
               "initial_value (0.0 included, -10.0 by default), update follows lesson 01's rule "
               "and changes one Q-value, and equal seeds explore alike.",
          rules=(AGENT_LEGAL_ACTIONS, AGENT_INITIAL_VALUE, INITIAL_VALUE_ZERO,
                 AGENT_DEFAULT_INITIAL_VALUE, AGENT_UPDATE, AGENT_SEEDED)),
    Check("test_store_episode", "storing episodes", ("HindsightReplayBuffer",),
          _store_inputs, sampling_protocol(_store_probe), judging_protocol(_store_verdict),
          asks="store_episode accepts episodes of 1 to max_episode_steps steps and copies them, "
               "len(buffer) counts the transitions held (after wrapping too), and sample "
               "returns each transition as stored.",
          rules=(EPISODE_LENGTHS_ACCEPTED, LEN_COUNTS_TRANSITIONS, EPISODE_COPIED,
                 TRANSITION_AS_STORED, SAMPLE_RETURNS, LEN_AFTER_WRAP)),
    Check("test_goal_steps", "which step a substitute goal comes from",
          ("hindsight_goal_steps",), _steps_inputs, _steps_probe, _steps_verdict,
          asks="hindsight_goal_steps draws, with the generator it is given, a goal step "
               "uniformly from t+1..T for 'future', T for 'final' and 1..T for 'episode'.",
          rules=(FUTURE_GOAL_STEPS, FINAL_GOAL_STEP, EPISODE_GOAL_STEPS, GOAL_STEPS_UNIFORM,
                 GOAL_STEPS_FROM_RNG, STRATEGY_NAMES)),
    Check("test_goals_from_own_episode", "substitute goals from the same episode",
          ("HindsightReplayBuffer",), _episodes_inputs, sampling_protocol(_episodes_probe),
          judging_protocol(_episodes_verdict),
          calls=(GOAL_STEPS,),
          asks="Every goal sample returns is the transition's own episode's desired goal or "
               "one achieved in that episode, at a step the buffer's strategy allows.",
          rules=(GOALS_FROM_OWN_EPISODE, BUFFER_STRATEGY, TRANSITION_AS_STORED,
                 SAMPLE_RETURNS)),
    Check("test_rewards_recomputed", "rewards recomputed for new goals",
          ("HindsightReplayBuffer",), _rewards_inputs, sampling_protocol(_rewards_probe),
          judging_protocol(_rewards_verdict),
          calls=(GOAL_STEPS,),
          asks="Every reward and terminated flag sample returns is recomputed for the "
               "transition's goal, original or substituted.",
          rules=(REWARD_RECOMPUTED, TERMINATED_RECOMPUTED, FUTURE_GOAL_STEPS, SAMPLE_RETURNS)),
    Check("test_relabel_fraction", "share of relabelled transitions",
          ("HindsightReplayBuffer",), _fraction_inputs, sampling_protocol(_fraction_probe),
          judging_protocol(_fraction_verdict),
          calls=(GOAL_STEPS,),
          asks="Each sampled transition is relabelled independently with probability "
               "k/(k+1) (none when k is 0), and the defaults are strategy='future' and k=4 "
               "(binomial tests).",
          rules=(RELABEL_SHARE, K_ZERO_PLAIN_REPLAY, BUFFER_DEFAULTS, SAMPLE_RETURNS)),
    Check("test_uniform_transitions", "transitions drawn uniformly",
          ("HindsightReplayBuffer",), _uniform_inputs, sampling_protocol(_uniform_probe),
          judging_protocol(_uniform_verdict),
          calls=(GOAL_STEPS,),
          asks="sample draws every stored transition equally likely, whatever its episode's "
               "length, with the buffer's own seeded generator.",
          rules=(UNIFORM_TRANSITIONS, BUFFER_OWN_GENERATOR, TRANSITION_AS_STORED,
                 SAMPLE_RETURNS)),
    Check("test_wraparound", "wrap-around", ("HindsightReplayBuffer",),
          _wrap_inputs, sampling_protocol(_wrap_probe), judging_protocol(_wrap_verdict),
          calls=(GOAL_STEPS,),
          asks="Once the buffer is full a new episode replaces the oldest, and nothing an "
               "overwritten episode left behind is sampled or used as a goal.",
          rules=(REPLACES_OLDEST, DEAD_STEPS_UNUSED, GOALS_FROM_OWN_EPISODE, BUFFER_STRATEGY,
                 TRANSITION_AS_STORED, SAMPLE_RETURNS)),
    Check("test_errors", "errors for bad input", ("HindsightReplayBuffer",),
          _errors_inputs, sampling_protocol(_errors_probe), judging_protocol(_errors_verdict),
          asks="Unknown strategies, k < 0, sampling an empty buffer or batch_size <= 0, and "
               "too long or mismatched episodes raise ValueError, and a refused episode "
               "leaves the buffer as it was.",
          rules=(UNKNOWN_STRATEGY_REFUSED, NEGATIVE_K_REFUSED, EMPTY_SAMPLE_REFUSED,
                 BATCH_SIZE_REFUSED, LONG_EPISODE_REFUSED, MISMATCHED_EPISODE_REFUSED,
                 REFUSED_EPISODE_STORES_NOTHING, SAMPLE_RETURNS)),
    Check("test_her_loop", "play_and_learn_with_her", ("play_and_learn_with_her",),
          _loop_inputs, _loop_probe, _loop_verdict,
          asks="play_and_learn_with_her plays one episode to its end, stores it whole, "
               "updates the agent on one batch with the batch's own goals, and returns "
               "whether the goal was reached.",
          rules=(LOOP_PLAYS_TO_END, LOOP_STORES_EPISODE, LOOP_ONE_BATCH, LOOP_BATCH_GOALS,
                 LOOP_RETURNS_SUCCESS)),
    Check("test_her_learning", "HER on bit flipping",
          ("HindsightReplayBuffer",), _learning_inputs, _learning_probe, _learning_verdict,
          time_limit=90.0, learning=True, prepare=_learning_baseline,
          calls=(GOAL_STEPS,),
          asks="The course's agent and loop replaying from your buffer on 8-bit flipping "
               "solve more (state, goal) pairs than plain replay, by a margin.",
          rules=(HER_LEARNS,)),
])
