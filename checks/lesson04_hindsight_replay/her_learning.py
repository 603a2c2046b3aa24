"""Lesson 04's learning check: the student's HindsightReplayBuffer against plain replay
on bit flipping."""

import numpy as np

from checks.expected import expected as reference
from checks.framework import (ProbeError, call_student, comparison, failed, packed, passed,
                              student_process_of, unpacked, wrong_amount)
from checks.lending import mirrored
from checks.lesson04_hindsight_replay.driving import LESSON
from checks.requirements import Rule


# --- the rules the checks test, grouped by check (the lesson's text tags each one) -------------

# test_her_learning
HER_LEARNS = Rule("her-learns", "Replaying from the buffer, the reference agent solves at "
                  "least 20% of 8-bit pairs and 15 points more than plain replay.")


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


class StoresLater:
    """The student's buffer as the course's HER loop uses it: ``store_episode``, whose
    result the loop does not need, goes to the student's process with the ``sample``
    that follows it (a round trip per episode instead of two), and what it raises is
    raised there, as the call itself would have raised it."""

    def __init__(self, buffer):
        self.buffer = buffer

    def store_episode(self, *episode):
        process = student_process_of(self.buffer)
        if process is None:
            self.buffer.store_episode(*episode)
        else:
            process.defer(None, self.buffer, episode, {}, method="store_episode")

    def sample(self, batch_size):
        return self.buffer.sample(batch_size)


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
    learner, replay = LearnsFromRealFlips(agent, env), StoresLater(replay)
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
