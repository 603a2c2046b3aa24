"""Checks for lesson 03: the sum tree, prioritized replay, and PER on the Blind Cliffwalk.

This is the lesson's list of checks. Each graded object's checks live in a module of their
own, which starts with the rules they test and goes on with how each check makes its
inputs, probes the student's code and judges what it found:

- ``sum_tree``: SumTree's totals, layout and prefix-sum search;
- ``buffer``: PrioritizedReplayBuffer's priorities, sampling, weights, updates and
  wrap-around;
- ``bad_input``: the errors of the buffer and of SumTree.update on bad input;
- ``beta_schedule``: annealed_beta;
- ``weighted_update``: prioritized_q_update;
- ``training_loop``: play_and_train_with_per;
- ``cliffwalk_learning``: the buffer against uniform replay on the Blind Cliffwalk.

``driving`` holds what they share: the lesson's name, and how a probe drives the student's
tree and buffer.
"""

from checks.contracts import CLASS, FLOAT, NUMBER, Contract, array, constructor, tuple_of
from checks.framework import Callee, Check, LessonChecks
from checks.lesson01_qlearning import AGENT
from checks.lesson03_prioritized_replay.bad_input import (
    SAMPLE_REFUSES, TREE_REFUSES, UPDATE_REFUSES, _errors_inputs, _errors_probe, _errors_verdict)
from checks.lesson03_prioritized_replay.beta_schedule import (
    BETA_LINEAR, BETA_START_DEFAULT, BETA_STAYS_AT_ONE, _beta_inputs, _beta_probe, _beta_verdict)
from checks.lesson03_prioritized_replay.buffer import (
    ALPHA_ZERO_UNIFORM, BATCH_LARGER_THAN_BUFFER, BATCH_STAYS_ITS_OWN, BUFFER_PARAMETERS,
    EPSILON_ADDED, LEN_AFTER_WRAP,
    MAX_PRIORITY_NEVER_DECREASES, NEW_AT_MAX_PRIORITY, OVERWRITES_OLDEST, OVERWRITTEN_SLOT_PRIORITY,
    OWN_GENERATOR, PRIORITY_FORMULA, REPEATED_SLOTS, SAMPLE_FILLED_SLOTS, SAMPLE_RETURNS,
    SAMPLING_PROPORTIONAL, SLICES_INDEPENDENT, STRATIFIED, UPDATE_LEAVES_INPUTS, WEIGHTS_BETA_ENDS,
    WEIGHTS_DIVIDED_BY_MAX, WEIGHTS_FORMULA, _frequency_inputs, _frequency_probe,
    _frequency_verdict, _max_priority_inputs, _max_priority_probe, _max_priority_verdict,
    _range_inputs, _range_probe, _range_verdict, _stratified_inputs, _stratified_probe,
    _stratified_verdict, _updates_inputs, _updates_probe, _updates_verdict, _weights_inputs,
    _weights_probe, _weights_verdict, _wrap_inputs, _wrap_probe, _wrap_verdict)
from checks.lesson03_prioritized_replay.cliffwalk_learning import (
    PER_BEATS_UNIFORM, _cliffwalk_baseline, _cliffwalk_inputs, _cliffwalk_probe, _cliffwalk_verdict)
from checks.lesson03_prioritized_replay.driving import LESSON
from checks.lesson03_prioritized_replay.sum_tree import (
    SEARCH_CLAMPED, SEARCH_INTERVAL, SEARCH_LEAVES_MASSES, SEARCH_TIE_GOES_RIGHT, TREE_FLOAT64,
    TREE_LAYOUT, TREE_TOTAL, _search_inputs, _search_probe, _search_verdict, _totals_inputs,
    _totals_probe, _totals_verdict)
from checks.lesson03_prioritized_replay.training_loop import (
    LOOP_EPISODE_ENDS, LOOP_FEEDS_BACK_TD_ERRORS, LOOP_ONE_BATCH_PER_STEP, LOOP_ONLINE_THEN_REPLAY,
    LOOP_PLAYS_AS_LESSON_01, LOOP_STORES_EACH_STEP, LOOP_STORES_TERMINATED, _loop_inputs, _loop_probe, _loop_verdict)
from checks.lesson03_prioritized_replay.weighted_update import (
    NO_BOOTSTRAP_WHEN_DONE, TD_ERROR_BEFORE_UPDATE, WEIGHTED_STEP, _weighted_inputs,
    _weighted_probe, _weighted_verdict)


# The buffer samples and updates through the student's SumTree: its checks are named when
# a buffer check fails and they fail too.
SUM_TREE = Callee("SumTree", LESSON, ("test_sumtree_totals", "test_sumtree_prefix_sum"))

# What every call of this lesson's code promises (checks.contracts): exact result types,
# numpy scalars accepted where the text allows them; inputs untouched holds for all.
CONTRACTS = {
    "SumTree": CLASS,
    # a single priority applies to all slots, a numpy scalar as Python's number
    "SumTree.update": Contract(numpy_scalars=(1,)),
    "SumTree.get": Contract(array("float64", 1)),
    "SumTree.find_prefix_sum": Contract(array("iu", 1)),
    # a capacity stays Python's int (a tree sizes itself with int.bit_length); its
    # hyperparameters may be numpy scalars (a seed is an identifier, not a number)
    "PrioritizedReplayBuffer": constructor(keywords=("alpha", "epsilon")),
    "PrioritizedReplayBuffer.add": Contract(numpy_scalars=(0, 1, 2, 3, 4)),
    "PrioritizedReplayBuffer.sample": Contract(tuple_of(*[array()] * 5, array("f", 1),
                                                        array("iu", 1)),
                                                numpy_scalars=(0, 1), rows=0),
    "annealed_beta": Contract(FLOAT, numpy_scalars=(0, 1, 2), pure=True),
    "prioritized_q_update": Contract(NUMBER, numpy_scalars=(1, 2, 3, 4, 5, 6)),
    "play_and_train_with_per": Contract(NUMBER),
}

DISTRIBUTIONS = {
    "test_sampling_follows_priorities": "every stored slot against P(i) = p_i^alpha / sum "
                                        "p^alpha (chi-square, rejection rate 1e-6)",
    "test_stratified_sampling": "one mass per equal slice of the total, each slice's draws "
                                "uniform within it (rejection rate 1e-6)",
}

CHECKS = LessonChecks(LESSON, [
    Check("test_sumtree_totals", "sum tree totals", ("SumTree",),
          _totals_inputs, _totals_probe, _totals_verdict,
          asks="After hundreds of batched updates (repeated slots included) tree.total and "
               "tree.get are exact, and nodes is a float64 array of the lesson's layout.",
          rules=(TREE_TOTAL, TREE_FLOAT64, TREE_LAYOUT)),
    Check("test_sumtree_prefix_sum", "sum tree prefix-sum search", ("SumTree",),
          _search_inputs, _search_probe, _search_verdict,
          asks="find_prefix_sum finds the slot a brute-force running sum finds, at "
               "boundaries, past empty slots and for masses outside [0, total), and leaves "
               "the masses it is given unchanged.",
          rules=(SEARCH_INTERVAL, SEARCH_TIE_GOES_RIGHT, SEARCH_CLAMPED,
                 SEARCH_LEAVES_MASSES)),
    Check("test_new_transitions_max_priority", "new transitions at maximal priority",
          ("PrioritizedReplayBuffer",),
          _max_priority_inputs, _max_priority_probe, _max_priority_verdict,
          calls=(SUM_TREE,),
          asks="add gives each new transition max_priority ** alpha, where max_priority "
               "starts at 1, follows the largest |delta| + epsilon and never decreases.",
          rules=(NEW_AT_MAX_PRIORITY, MAX_PRIORITY_NEVER_DECREASES)),
    Check("test_sampling_follows_priorities", "sampling follows p^alpha",
          ("PrioritizedReplayBuffer",),
          _frequency_inputs, _frequency_probe, _frequency_verdict,
          calls=(SUM_TREE,),
          asks="sample draws each stored transition with probability p_i^alpha / sum "
               "p^alpha (a chi-square test).",
          rules=(SAMPLING_PROPORTIONAL, SAMPLE_RETURNS)),
    Check("test_stratified_sampling", "stratified sampling", ("PrioritizedReplayBuffer",),
          _stratified_inputs, _stratified_probe, _stratified_verdict,
          calls=(SUM_TREE,),
          asks="sample draws one mass from each equal slice of the total, independently, "
               "from the buffer's own seeded generator self.rng.",
          rules=(STRATIFIED, SLICES_INDEPENDENT, OWN_GENERATOR, SAMPLE_RETURNS)),
    Check("test_importance_weights", "importance-sampling weights",
          ("PrioritizedReplayBuffer",), _weights_inputs, _weights_probe, _weights_verdict,
          calls=(SUM_TREE,),
          asks="sample's weights are (N P(i))^-beta divided by the batch's largest, for "
               "beta 0, in between and 1, with alpha = 0 and with one transition stored.",
          rules=(WEIGHTS_FORMULA, WEIGHTS_DIVIDED_BY_MAX, WEIGHTS_BETA_ENDS,
                 ALPHA_ZERO_UNIFORM, BATCH_LARGER_THAN_BUFFER, SAMPLE_RETURNS)),
    Check("test_priority_updates", "update_priorities", ("PrioritizedReplayBuffer", "SumTree"),
          _updates_inputs, _updates_probe, _updates_verdict,
          calls=(SUM_TREE,),
          asks="update_priorities stores (|delta| + epsilon)^alpha with the buffer's alpha "
               "and epsilon, for zero, negative and repeated entries too, and changes "
               "neither other slots nor its inputs.",
          rules=(PRIORITY_FORMULA, EPSILON_ADDED, BUFFER_PARAMETERS, REPEATED_SLOTS,
                 UPDATE_LEAVES_INPUTS)),
    Check("test_wraparound", "overwriting when full", ("PrioritizedReplayBuffer",),
          _wrap_inputs, _wrap_probe, _wrap_verdict,
          calls=(SUM_TREE,),
          asks="Once full, add overwrites the oldest transition and gives its slot the "
               "maximal priority, and len stays at the capacity; sampled rows are the "
               "transitions stored in their slots, dtype and value.",
          rules=(OVERWRITES_OLDEST, OVERWRITTEN_SLOT_PRIORITY, LEN_AFTER_WRAP,
                 BATCH_LARGER_THAN_BUFFER, SAMPLE_RETURNS)),
    Check("test_no_empty_or_out_of_range_samples", "no empty or out-of-range samples",
          ("PrioritizedReplayBuffer",), _range_inputs, _range_probe, _range_verdict,
          calls=(SUM_TREE,),
          asks="sample never returns an empty slot, not after many random priority updates "
               "and not for a mass a hair below the total, and its weights lie in (0, 1].",
          rules=(SAMPLE_FILLED_SLOTS, SAMPLE_RETURNS, WEIGHTS_DIVIDED_BY_MAX, OWN_GENERATOR,
                 BATCH_STAYS_ITS_OWN)),
    Check("test_errors", "errors for bad input", ("PrioritizedReplayBuffer", "SumTree"),
          _errors_inputs, _errors_probe, _errors_verdict,
          calls=(SUM_TREE,),
          asks="sample, update_priorities and SumTree.update raise ValueError with a message "
               "for empty buffers, batch sizes <= 0, NaN or infinite TD errors, slots out of "
               "range and negative or NaN priorities.",
          rules=(SAMPLE_REFUSES, UPDATE_REFUSES, TREE_REFUSES)),
    Check("test_beta_schedule", "annealing beta", ("annealed_beta",),
          _beta_inputs, _beta_probe, _beta_verdict,
          asks="annealed_beta rises linearly from beta_start (0.4 by default, 0 allowed) to "
               "1 at total_steps and stays at 1.",
          rules=(BETA_LINEAR, BETA_STAYS_AT_ONE, BETA_START_DEFAULT)),
    Check("test_weighted_update", "weighted Q-learning update", ("prioritized_q_update",),
          _weighted_inputs, _weighted_probe, _weighted_verdict,
          calls=(AGENT,),
          asks="prioritized_q_update sets Q to Q + alpha * weight * delta and returns delta, "
               "computed before the update, with no bootstrap when done.",
          rules=(WEIGHTED_STEP, TD_ERROR_BEFORE_UPDATE, NO_BOOTSTRAP_WHEN_DONE)),
    Check("test_per_loop", "play_and_train_with_per", ("play_and_train_with_per",),
          _loop_inputs, _loop_probe, _loop_verdict,
          asks="Each step updates online, stores the transition with done=terminated, "
               "replays one weighted batch with the beta given (0 included) and feeds its TD "
               "errors back; the episode ends as lesson 01's does.",
          rules=(LOOP_EPISODE_ENDS, LOOP_STORES_EACH_STEP, LOOP_STORES_TERMINATED,
                 LOOP_ONE_BATCH_PER_STEP, LOOP_FEEDS_BACK_TD_ERRORS,
                 LOOP_ONLINE_THEN_REPLAY, LOOP_PLAYS_AS_LESSON_01)),
    Check("test_cliffwalk_learning", "PER on the Blind Cliffwalk",
          ("PrioritizedReplayBuffer",), _cliffwalk_inputs, _cliffwalk_probe,
          _cliffwalk_verdict, time_limit=60.0, learning=True, prepare=_cliffwalk_baseline,
          calls=(SUM_TREE,),
          asks="On Blind Cliffwalks you have not seen, your buffer needs at most half the "
               "updates uniform replay needs (median), judged by replaying the slots it drew.",
          rules=(PER_BEATS_UNIFORM, SAMPLE_FILLED_SLOTS)),
], contracts=CONTRACTS, distributions=DISTRIBUTIONS)
