"""Lesson 03's learning check: the student's PrioritizedReplayBuffer against uniform replay
on the Blind Cliffwalk."""

import numpy as np

from checks.expected import expected as reference
from checks.foreseen_samples import ForeseenLoop, foreseen_or_redone
from checks.framework import call_later, call_student, comparison, failed, passed, wrong_amount
from checks.lesson03_prioritized_replay.buffer import SAMPLE_FILLED_SLOTS
from checks.lesson03_prioritized_replay.driving import LESSON, _new_buffer
from checks.requirements import Rule


# --- the rules: what the lesson tells a student, as its checks test it ---------------------

# test_cliffwalk_learning
PER_BEATS_UNIFORM = Rule("per-beats-uniform", "On unseen Blind Cliffwalks your buffer solves "
                         "the Q-values within the budget, needing at most half the updates "
                         "uniform replay needs (median).")


# --- learning on the Blind Cliffwalk -------------------------------------------------------------

# updates the probe may use per run; the reference needs about a quarter of it (median)
CLIFFWALK_BUDGET = {7: 2500, 8: 4000, 9: 7000}
BETA = 0.4  # importance weights' exponent in the loop's updates
UNIFORM_FACTOR = 2.0  # PER's median must be at least twice as fast as uniform replay's


def _cliffwalk_inputs(rng):
    n = int(rng.choice(sorted(CLIFFWALK_BUDGET)))
    return {"n": n, "budget": CLIFFWALK_BUDGET[n], "seeds": rng.integers(2**31, size=3).tolist()}


class BufferUnderTest:
    """The student's buffer as the course's Blind Cliffwalk loop uses it: ``sample``
    answers at once; ``update_priorities``, whose result the loop does not need, goes
    to the student's process with the next ``sample`` (one round trip per update)."""

    def __init__(self, buffer):
        self.buffer = buffer

    def sample(self, batch_size, beta):
        return call_student(f"sample({batch_size}, beta={beta})", self.buffer.sample,
                            batch_size, beta)

    def update_priorities(self, slots, td_errors):
        call_later("update_priorities(slots, td_errors)", self.buffer.update_priorities,
                   slots, td_errors)


def _cliffwalk_probe(inputs, PrioritizedReplayBuffer):
    """The student's buffer, driven by the course's replay loop (learn_from_replay, run
    here), learns the walk; the verdict replays the slots it drew."""
    from course.blind_cliffwalk import learn_from_replay, learn_from_replay_of, replay_memory

    runs = []
    for seed in inputs["seeds"]:
        memory = replay_memory(inputs["n"], seed)

        def learned(foreseen):
            """The slots the buffer drew; its answers foreseen (checks/foreseen_samples.py:
            a fork of the student's process runs the same loop first) or not."""
            buffer = _new_buffer(PrioritizedReplayBuffer, len(memory), 0.6, seed)
            for row in memory.rows():
                call_later("add(obs_t, action, reward, obs_tp1, done)", buffer.add, *row)
            replay = (ForeseenLoop(buffer, learn_from_replay_of, inputs["n"], seed,
                                   inputs["budget"], BETA) if foreseen
                      else BufferUnderTest(buffer))
            run = call_student("learning the Blind Cliffwalk from your buffer",
                               learn_from_replay, replay, memory, inputs["budget"], BETA)
            if foreseen:
                replay.finish()
            return run.slots

        runs.append(foreseen_or_redone(PrioritizedReplayBuffer, learned))
    return {"slots": runs}


def _cliffwalk_baseline(inputs):
    """What uniform replay needs on the same memories (the grader's own baseline)."""
    return reference(LESSON, "uniform_updates_to_solve", inputs["n"], inputs["seeds"])


def _cliffwalk_verdict(inputs, data):
    from course.blind_cliffwalk import replay_memory, updates_to_solve_from_slots

    n, budget = inputs["n"], inputs["budget"]
    problem = wrong_amount("runs", data["slots"], len(inputs["seeds"]), rule=PER_BEATS_UNIFORM)
    if problem:
        return problem
    yours = []
    for seed, slots in zip(inputs["seeds"], data["slots"]):
        memory = replay_memory(n, seed)
        if (not isinstance(slots, list) or len(slots) > budget
                or not all(isinstance(s, int) and 0 <= s < len(memory) for s in slots)):
            return failed(f"a run on the Blind Cliffwalk returned slots outside the memory of "
                          f"{len(memory)} transitions (or more than {budget} of them).",
                          rule=SAMPLE_FILLED_SLOTS)
        yours.append(updates_to_solve_from_slots(memory, slots))
    uniform = _cliffwalk_baseline(inputs)
    shown = ", ".join("not solved" if u is None else str(u) for u in yours)
    summary = (f"on Blind Cliffwalks of n={n} states (memory {2 ** (n + 1) - 2} transitions), "
               f"replaying with your buffer solved the Q-values (MSE < 1e-3) after {shown} "
               f"updates; uniform replay needs {', '.join(map(str, uniform))}")
    figure = comparison(f"Blind Cliffwalk, n={n}: updates to solve (fewer is better; an "
                        "unsolved run is not drawn)", "updates",
                        [f"seed {number}" for number in range(1, len(yours) + 1)],
                        {"your buffer": yours, "uniform replay": uniform},
                        higher_is_better=False)
    if any(u is None for u in yours):
        return failed(summary + f" (budget {budget} updates). Check that the priorities "
                      "you store follow the TD errors you are given.", figure=figure,
                      rule=PER_BEATS_UNIFORM)
    if np.median(yours) * UNIFORM_FACTOR > np.median(uniform):
        return failed(summary + ". Prioritized replay should need at most half as many "
                      "(median).", figure=figure, rule=PER_BEATS_UNIFORM)
    return passed(summary + ".", figure=figure)
