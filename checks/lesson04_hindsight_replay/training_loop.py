"""Lesson 04's check of play_and_learn_with_her, the episode loop with hindsight replay."""

import numpy as np

from checks.framework import call_student, failed, passed
from checks.lending import AtMost, Served, mirrored
from checks.records import Record
from checks.requirements import Rule


# --- the rules the checks test, grouped by check (the lesson's text tags each one) -------------

# test_her_loop
LOOP_ACTS_ON_PAIRS = Rule("loop-acts-on-pairs", "The loop chooses each step's action with one "
                          "agent.get_action((state, goal)) call, the step's observation and "
                          "the desired goal as bits_to_int numbers.")
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


# --- the episode loop ---------------------------------------------------------------------------

class ScriptedGoalAgent:
    """Flips a bit that differs from the goal (``solves``), or one that already agrees
    with it, which never reaches the goal; records every pair it is asked about, with the
    action it chose, and every update. Served to the loop."""

    # a pair is two ints; arrays in it would be broadcast together: 64 numbers at most
    __lending__ = Served(remote=("get_action",), deferred=("update",),
                         readable=("epsilon", "n_bits"),
                         limits={"get_action": {"pair": AtMost(
                             64, "takes a (state, goal) pair of at most {limit} numbers")}})

    def __init__(self, n_bits, solves):
        # epsilon reads 1.0: a loop that explores on its own when it reads a high epsilon
        # plays other actions than the agent chose, and its stored actions show it
        self.n_bits, self.solves, self.epsilon = n_bits, solves, 1.0
        self.updates, self.chosen = Record("update"), Record("get_action")

    def get_action(self, pair):
        state, goal = pair
        differing = state ^ goal
        bits = differing if self.solves else ~differing & ((1 << self.n_bits) - 1)
        # every bit differs: flipping the first one cannot reach the goal
        action = self.n_bits - bits.bit_length() if bits else 0  # the most significant bit
        self.chosen.append([[int(state), int(goal)], action])
        return action

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
    n_bits, seed = inputs["n_bits"], inputs["seeds"][0]
    # how many flips the solving agent needs in the first episode the loop plays: the
    # TimeLimit of the last case ends it on exactly that step, goal reached
    twin = make_bit_flipping(n_bits, seed, max_steps=4 * n_bits)
    first, _ = twin.reset()
    needed = int(np.sum(first["achieved_goal"] != first["desired_goal"]))
    cases = (("solves", True, seed, {}),
             # numpy's flags (np.bool_): the loop still returns a Python bool
             ("fails", False, inputs["seeds"][1], {"numpy_flags": True}),
             # a limit of its own, longer than n_bits: the loop plays to it
             ("fails_later", False, inputs["seeds"][1], {"max_steps": n_bits + LONGER}),
             # reached on the last step a TimeLimit allows: truncated too, and a success
             ("solves_at_the_limit", True, seed, {"max_steps": needed,
                                                  "truncated_at_limit": True,
                                                  "numpy_flags": True}))
    # a first episode whose every bit differs from its goal: solved on flip n_bits, the
    # last a shortest solution takes, in an environment that allows more steps
    cases += (("solves_with_every_flip", True, _every_bit_differs(n_bits, seed),
               {"max_steps": n_bits + LONGER}),
              # observations that are not the achieved goals (their complement here)
              ("fails_observed_apart", False, inputs["seeds"][1],
               {"observation_inverted": True}),
              # rewards of their own (OTHER_REWARDS): the episode still ends when the
              # environment says terminated or truncated, whatever reward comes with it
              ("solves_paid_otherwise", True, seed, {"max_steps": n_bits + LONGER}),
              ("fails_paid_otherwise", False, inputs["seeds"][1], {}))
    for case, solves, seed, limits in cases:
        rewards = OTHER_REWARDS.get(case, {})
        env = mirrored(make_bit_flipping, n_bits, seed, logged=("reset", "step"), calls=(),
                       pushed=tuple(rewards), **limits)
        for name, value in rewards.items():  # sent along with the environment
            setattr(env, name, value)
        agent = ScriptedGoalAgent(n_bits, solves)
        buffer = RecordingHindsightBuffer(env)
        result = call_student("play_and_learn_with_her(env, agent, replay, batch_size)",
                              play_and_learn_with_her, env, agent, buffer, inputs["batch_size"])
        outcome[case] = {"returned": bool(result) if isinstance(result, (bool, np.bool_))
                         else repr(result)[:50], "steps": int(env.steps),
                         "episodes": buffer.episodes, "samples": buffer.samples,
                         "chosen": agent.chosen, "updates": agent.updates}
    return outcome


LONGER = 3  # steps past n_bits the environment with a limit of its own allows

# The environments that pay otherwise than the lesson's (0 on success, -1 a step): a
# goal environment's rewards are its own. The first pays -1 a step, as the lesson's, and
# +1 on success: a loop that waits for a reward of 0 plays past the goal; the second
# pays 0 a step: a loop that stops on a reward of 0 (or any reward but -1) stops early.
OTHER_REWARDS = {"solves_paid_otherwise": {"success_reward": 1.0, "step_reward": -1.0},
                 "fails_paid_otherwise": {"success_reward": 1.0, "step_reward": 0.0}}


def _flips_to_goal(run):
    """How many bits differed from the goal where the episode of ``run`` began, by the
    first (state, goal) pair the loop asked the agent about: the steps the solving agent
    takes to reach it. None when the loop asked nothing."""
    chosen = (run or {}).get("chosen") or []
    if not chosen:
        return None
    state, goal = chosen[0][0]
    return bin(state ^ goal).count("1")


def _every_bit_differs(n_bits, seed):
    """The first seed from ``seed`` on whose first episode starts with every bit unlike
    its goal (one in 2 ** n_bits: about 64 tries at 6 bits)."""
    from course.bit_flipping import make_bit_flipping

    for candidate in range(seed, seed + 100_000):
        first, _ = make_bit_flipping(n_bits, candidate).reset()
        if np.all(first["achieved_goal"] != first["desired_goal"]):
            return candidate
    raise AssertionError(f"no seed from {seed} starts {n_bits} bits all unlike the goal")


def _acting_problem(case, run):
    """What is wrong with how the loop chose the actions of the episode it stored in
    ``case``: one get_action per step, on (observation, desired goal), each action stored
    as chosen. None if nothing."""
    from course.bit_flipping import bits_to_int

    episodes = run.get("episodes") or []
    if len(episodes) != 1:
        return None  # the stored episode's own rule says so
    episode = episodes[0]
    try:
        desired = int(bits_to_int(np.asarray(episode["desired_goal"])))
        want = [[int(bits_to_int(np.asarray(observation))), desired]
                for observation in episode["observations"][:-1]]
    except (TypeError, ValueError):
        return None  # stored in a shape the stored episode's own rule refuses
    chosen = run.get("chosen") or []
    asked = [pair for pair, _ in chosen]
    where = ("whose observation is not the achieved goal (here its complement)"
             if case == "fails_observed_apart" else "of the check")
    if len(chosen) != len(episode["actions"]):
        return (f"an episode {where} took {len(episode['actions'])} steps, but the loop "
                f"called agent.get_action {len(chosen)} times: choose each step's action "
                "with one call.")
    if asked != want:
        step = next(t for t, (got, wanted) in enumerate(zip(asked, want)) if got != wanted)
        return (f"in an episode {where}, the loop asked agent.get_action about "
                f"{tuple(asked[step])} on step {step}; the step's (state, goal) pair is "
                f"{tuple(want[step])}: bits_to_int of observation['observation'] and of "
                "the desired goal.")
    if [action for _, action in chosen] != [int(a) for a in np.ravel(episode["actions"])]:
        return (f"in an episode {where}, the agent chose actions "
                f"{[action for _, action in chosen]}, but the loop stored "
                f"{episode['actions']}: store each action the agent chose.")
    return None


def _loop_verdict(inputs, data):
    from course.bit_flipping import bits_to_int

    n_bits, batch = inputs["n_bits"], inputs["batch_size"]
    for case, run in data.items():  # first: a loop that plays actions of its own changes
        chosen = run.get("chosen") or []  # the episodes' lengths too
        if len(chosen) != run.get("steps"):
            return failed(f"an episode took {run.get('steps')} steps, but the loop called "
                          f"agent.get_action {len(chosen)} times: choose each step's action "
                          "with one call and play the action it returns (exploring is the "
                          "agent's business, not the loop's).", rule=LOOP_ACTS_ON_PAIRS)
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
    later = data.get("fails_later") or {}
    if later.get("steps") != n_bits + LONGER:
        return failed(f"in an environment whose own limit is {n_bits + LONGER} steps (not "
                      f"n_bits = {n_bits}), an episode that never reaches its goal should run "
                      f"until truncated, {n_bits + LONGER} steps; it ran {later.get('steps')}: "
                      "play until the environment says the episode ended.",
                      rule=LOOP_PLAYS_TO_END)
    at_limit = data.get("solves_at_the_limit") or {}
    if at_limit.get("returned") is not True:
        return failed("an episode that reached its goal on its last allowed step, in an "
                      "environment that then says terminated and truncated both (as "
                      "gymnasium's TimeLimit does), reached its "
                      f"goal, but play_and_learn_with_her returned {at_limit.get('returned')}: "
                      "success is terminated, whatever truncated says.",
                      rule=LOOP_RETURNS_SUCCESS)
    apart = data.get("fails_observed_apart") or {}
    for episode in apart.get("episodes", [])[:1]:
        observations = np.asarray(episode["observations"])
        achieved = np.asarray(episode["achieved_goals"])
        if observations.shape != achieved.shape or not np.array_equal(achieved,
                                                                        1 - observations):
            return failed("in an environment whose observation is not the achieved goal (here "
                          "its complement), the episode was stored with achieved goals "
                          f"{achieved.tolist()[:3]}... and observations "
                          f"{observations.tolist()[:3]}...: store each step's "
                          "observation['achieved_goal'] as its achieved goal and "
                          "observation['observation'] as its observation.",
                          rule=LOOP_STORES_EPISODE)
    for case, run in data.items():
        problem = _acting_problem(case, run)
        if problem:
            return failed(problem, rule=LOOP_ACTS_ON_PAIRS)
    for case, want_steps, how in (
            ("solves_paid_otherwise", _flips_to_goal(data.get("solves_paid_otherwise")),
             "reached its goal on step {want} (step returned terminated=True)"),
            ("fails_paid_otherwise", n_bits, "never reached its goal and was truncated "
             "after {want} steps (step returned truncated=True)")):
        run = data.get(case) or {}
        if want_steps is not None and run.get("steps") != want_steps:
            success, miss = (OTHER_REWARDS[case][name]
                             for name in ("success_reward", "step_reward"))
            return failed(f"in an environment that pays {success:+g} on reaching the goal and "
                          f"{miss:+g} a step (a goal environment's rewards are its own), an "
                          f"episode that {how.format(want=want_steps)} was played for "
                          f"{run.get('steps')} steps: play until step returns terminated or "
                          "truncated, not until some reward comes (0 is the success reward "
                          "of the lesson's bit flipping, not of every goal environment).",
                          rule=LOOP_PLAYS_TO_END)
    paid = [data.get(case, {}).get("returned") for case in OTHER_REWARDS]
    if paid != [True, False]:
        return failed("in environments that pay +1 on reaching the goal (a goal "
                      "environment's rewards are its own), play_and_learn_with_her returned "
                      f"{paid[0]} for an episode that reached its goal and {paid[1]} for one "
                      "that did not: success is the last step's terminated, whatever reward "
                      "came with it.", rule=LOOP_RETURNS_SUCCESS)
    every_flip = data.get("solves_with_every_flip") or {}
    if every_flip.get("returned") is not True:
        return failed(f"an episode whose {n_bits} bits all differed from its goal was solved "
                      f"by flipping each once, in {n_bits} steps (the environment allows "
                      f"{n_bits + LONGER}), but play_and_learn_with_her returned "
                      f"{every_flip.get('returned')}: success is the last step's terminated, "
                      "however many steps it took.", rule=LOOP_RETURNS_SUCCESS)
    return passed("each episode is played to its end, stored whole, then one batch is "
                  "replayed into the agent with the batch's goals.")
