"""Lesson 04's check of hindsight_goal_steps: which step of an episode a substitute goal
comes from, for each strategy."""

import numpy as np

from checks.framework import (NotWrittenYet, ProbeError, call_student, failed, passed,
                              reseed_global_generators, wrong_amount)
from checks.lending import mirrored
from checks.lesson04_hindsight_replay.driving import STRATEGIES
from checks.requirements import Rule
from checks.statistics import FALSE_FAILURE_RATE, describe_counts, fits


# --- the rules the checks test, grouped by check (the lesson's text tags each one) -------------

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
    # no transitions, given as empty lists (np.asarray([]) is float64): still a 1-d
    # integer array, of nothing (the contract holds its type)
    for strategy in STRATEGIES:
        call_student(f"hindsight_goal_steps({strategy!r}, [], [], rng)", hindsight_goal_steps,
                     strategy, [], [], rng)
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
