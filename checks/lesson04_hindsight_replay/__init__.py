"""Checks for lesson 04: goal-conditioned Q-learning and hindsight experience replay.

This is the lesson's list of checks. Each graded object's checks live in a module of their
own, which starts with the rules they test and goes on with how each check makes its
inputs, probes the student's code and judges what it found:

- ``goal_agent``: GoalConditionedAgent;
- ``goal_steps``: hindsight_goal_steps;
- ``buffer``: HindsightReplayBuffer's episodes, substitute goals, rewards, relabelling
  share, uniform draws, wrap-around and errors;
- ``training_loop``: play_and_learn_with_her;
- ``her_learning``: the buffer against plain replay on bit flipping.

``driving`` holds what they share: the lesson's name and strategies, and the synthetic
episodes the buffer checks store and read back.
"""

from checks.contracts import BOOL, CLASS, NUMBER, Contract, array, constructor, tuple_of
from checks.framework import Callee, Check, LessonChecks
from checks.lesson01_qlearning import AGENT
from checks.lesson04_hindsight_replay.buffer import (
    BATCH_SIZE_REFUSED, BATCH_STAYS_ITS_OWN, BUFFER_DEFAULTS, BUFFER_OWN_GENERATOR,
    BUFFER_STRATEGY, DEAD_STEPS_UNUSED, EMPTY_SAMPLE_REFUSED, EPISODE_COPIED,
    EPISODE_LENGTHS_ACCEPTED, GOALS_FROM_OWN_EPISODE,
    K_ZERO_PLAIN_REPLAY, LEN_AFTER_WRAP, LEN_COUNTS_TRANSITIONS, LONG_EPISODE_REFUSED,
    MISMATCHED_EPISODE_REFUSED, NEGATIVE_K_REFUSED, REFUSED_EPISODE_STORES_NOTHING, RELABEL_SHARE,
    REPLACES_OLDEST, REWARD_RECOMPUTED, SAMPLE_RETURNS, TERMINATED_RECOMPUTED, TRANSITION_AS_STORED,
    UNIFORM_TRANSITIONS, UNKNOWN_STRATEGY_REFUSED, _episodes_inputs, _episodes_probe,
    _episodes_verdict, _errors_inputs, _errors_probe, _errors_verdict, _fraction_inputs,
    _fraction_probe, _fraction_verdict, _rewards_inputs, _rewards_probe, _rewards_verdict,
    _store_inputs, _store_probe, _store_verdict, _uniform_inputs, _uniform_probe, _uniform_verdict,
    _wrap_inputs, _wrap_probe, _wrap_verdict, judging_protocol, sampling_protocol)
from checks.lesson04_hindsight_replay.driving import LESSON
from checks.lesson04_hindsight_replay.goal_agent import (
    AGENT_DEFAULT_INITIAL_VALUE, AGENT_INITIAL_VALUE, AGENT_LEGAL_ACTIONS, AGENT_SEEDED,
    AGENT_TIES, AGENT_UPDATE, INITIAL_VALUE_ZERO, _agent_inputs, _agent_probe, _agent_verdict)
from checks.lesson04_hindsight_replay.goal_steps import (
    EPISODE_GOAL_STEPS, FINAL_GOAL_STEP, FUTURE_GOAL_STEPS, GOAL_STEPS_FROM_RNG, GOAL_STEPS_UNIFORM,
    STRATEGY_NAMES, _steps_inputs, _steps_probe, _steps_verdict)
from checks.lesson04_hindsight_replay.her_learning import (
    HER_LEARNS, _learning_baseline, _learning_inputs, _learning_probe, _learning_verdict)
from checks.lesson04_hindsight_replay.training_loop import (
    LOOP_ACTS_ON_PAIRS, LOOP_BATCH_GOALS, LOOP_ONE_BATCH, LOOP_PLAYS_TO_END, LOOP_RETURNS_SUCCESS,
    LOOP_STORES_EPISODE, _loop_inputs, _loop_probe, _loop_verdict)


# The buffer draws its substitute goals' steps with the student's hindsight_goal_steps.
GOAL_STEPS = Callee("hindsight_goal_steps", LESSON, ("test_goal_steps",))

# What every call of this lesson's code promises (checks.contracts): exact result types,
# numpy scalars accepted where the text allows them; inputs untouched holds for all.
CONTRACTS = {
    "GoalConditionedAgent": constructor(
        0, keywords=("alpha", "epsilon", "discount", "initial_value")),
    # its numbers and flags, as a replayed row of a numpy batch holds them: the action, a
    # Q-value, the reward and terminated (np.bool_ True and False); the pairs are tuples,
    # whose numbers test_goal_agent passes as np.int64 itself
    "GoalConditionedAgent.get_qvalue": Contract(NUMBER, numpy_scalars=(1,)),
    "GoalConditionedAgent.set_qvalue": Contract(numpy_scalars=(1, 2)),
    "GoalConditionedAgent.update": Contract(numpy_scalars=(1, 2, 4)),
    "hindsight_goal_steps": Contract(array("iu", 1)),
    "HindsightReplayBuffer": CLASS,
    "HindsightReplayBuffer.sample": Contract(
        tuple_of(array(), array("iu", 1), array("f", 1), array(), array("b", 1), array()),
        numpy_scalars=(0,), rows=0),
    "play_and_learn_with_her": Contract(BOOL),
}

DISTRIBUTIONS = {
    "test_goal_steps": "each strategy's goal steps uniform over the range it allows, for "
                       "every (step, length) (chi-square, rejection rate 1e-6)",
    "test_relabel_fraction": "the share relabelled against k / (k + 1) for several k "
                             "(binomial, rejection rate 1e-6)",
    "test_uniform_transitions": "uniform over every stored transition, episodes of unequal "
                                "lengths (chi-square), and batches smaller than, as large as "
                                "and larger than the buffer as often without a repeat (or "
                                "holding every transition) as drawing with replacement gives "
                                "(binomial; rejection rate 1e-6 in all)",
}

CHECKS = LessonChecks(LESSON, [
    Check("test_goal_agent", "goal-conditioned agent", ("GoalConditionedAgent",),
          _agent_inputs, _agent_probe, _agent_verdict,
          calls=(AGENT,),
          asks="GoalConditionedAgent's legal actions are the n_bits flips, an unseen Q-value is "
               "initial_value (0.0 included, -10.0 by default), update follows lesson 01's rule "
               "and changes one Q-value, and equal seeds act alike (exploring, epsilon's coin and "
               "greedy ties) whatever the global generators hold.",
          rules=(AGENT_LEGAL_ACTIONS, AGENT_INITIAL_VALUE, INITIAL_VALUE_ZERO,
                 AGENT_DEFAULT_INITIAL_VALUE, AGENT_UPDATE, AGENT_TIES, AGENT_SEEDED)),
    Check("test_store_episode", "storing episodes", ("HindsightReplayBuffer",),
          _store_inputs, sampling_protocol(_store_probe), judging_protocol(_store_verdict),
          asks="store_episode accepts episodes of 1 to max_episode_steps steps and copies them, "
               "len(buffer) counts the transitions held (after wrapping too), and sample "
               "returns each transition as stored.",
          rules=(EPISODE_LENGTHS_ACCEPTED, LEN_COUNTS_TRANSITIONS, EPISODE_COPIED,
                 BATCH_STAYS_ITS_OWN, TRANSITION_AS_STORED, SAMPLE_RETURNS, LEN_AFTER_WRAP)),
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
          asks="Unknown strategies ('' and None included), k < 0, sampling an empty buffer "
               "or batch_size <= 0, and too long or mismatched episodes raise ValueError, and "
               "a refused episode leaves the buffer as it was.",
          rules=(UNKNOWN_STRATEGY_REFUSED, NEGATIVE_K_REFUSED, EMPTY_SAMPLE_REFUSED,
                 BATCH_SIZE_REFUSED, LONG_EPISODE_REFUSED, MISMATCHED_EPISODE_REFUSED,
                 REFUSED_EPISODE_STORES_NOTHING, SAMPLE_RETURNS)),
    Check("test_her_loop", "play_and_learn_with_her", ("play_and_learn_with_her",),
          _loop_inputs, _loop_probe, _loop_verdict,
          asks="play_and_learn_with_her plays one episode to its end, stores it whole, "
               "updates the agent on one batch with the batch's own goals, and returns "
               "whether the goal was reached.",
          rules=(LOOP_ACTS_ON_PAIRS, LOOP_PLAYS_TO_END, LOOP_STORES_EPISODE, LOOP_ONE_BATCH,
                 LOOP_BATCH_GOALS, LOOP_RETURNS_SUCCESS)),
    Check("test_her_learning", "HER on bit flipping",
          ("HindsightReplayBuffer",), _learning_inputs, _learning_probe, _learning_verdict,
          time_limit=90.0, learning=True, prepare=_learning_baseline,
          calls=(GOAL_STEPS,),
          asks="The course's agent and loop replaying from your buffer on 8-bit flipping "
               "solve more (state, goal) pairs than plain replay, by a margin.",
          rules=(HER_LEARNS,)),
], contracts=CONTRACTS, distributions=DISTRIBUTIONS)
