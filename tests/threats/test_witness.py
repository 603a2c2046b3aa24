"""The witnesses of the learning checks (checks/witness.py), in this process: the course's
own loops and learning steps keep every rule; each way of breaking one is refused, with
the rule in the refusal. (tests/threats/test_grader_attacks.py grades the same tricks through a
sandboxed kernel.)"""

import sys
from pathlib import Path

import numpy as np
import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from attacks import (DQN_STEP_TRICKS, FABRICATED_ROWS_SAMPLE, LOOP_TRICK_REFUSALS,  # noqa: E402
                     LOOP_TRICKS, loop_trick)
from checks.lending import forget_mirrored  # noqa: E402
from checks.taxi_training import train_buffer_on_taxi, train_on_taxi  # noqa: E402
from checks.witness import (DQN_STEP, SYNC_TARGET, Ledger, RefusedCall, taxi_batch,  # noqa: E402
                            taxi_steps)
from checks.framework import ProbeError  # noqa: E402

SETTINGS = dict(alpha=0.5, epsilon=0.25, discount=0.99, epsilon_decay=0.99)


@pytest.fixture(autouse=True)
def no_lending_declarations_left():
    yield
    forget_mirrored()


def episodes(play_episode, count=3, **options):
    return train_on_taxi(play_episode, 7, [count], **SETTINGS, **options)[0]


def answer(source, **namespace):
    """The functions an answer cell defines, run with ``namespace`` (a notebook's names)."""
    namespace = {"np": np, **namespace}
    exec(compile(source, "<answer>", "exec"), namespace)  # noqa: S102 - the course's tests
    return namespace


# --- Taxi ----------------------------------------------------------------------------------

def test_the_course_loops_keep_every_rule():
    from combined_replay import CombinedReplayBuffer, play_and_train_from_replay
    from qlearning import play_and_train
    from replay_buffer import ReplayBuffer, play_and_train_with_replay

    assert episodes(play_and_train).shape == (500, 6)
    for online, buffer, loop in ((1, ReplayBuffer, play_and_train_with_replay),
                                 (0, CombinedReplayBuffer, play_and_train_from_replay)):
        train_buffer_on_taxi(lambda: buffer(1000, seed=3), loop, 7, [3], 8, online, **SETTINGS)


@pytest.mark.parametrize("trick", LOOP_TRICKS)
def test_a_loop_that_breaks_a_rule_is_refused_with_the_rule(trick):
    play_and_train = answer(loop_trick("01_qlearning", trick)["play_and_train"])["play_and_train"]
    with pytest.raises(RefusedCall, match="The rule: ") as refused:
        episodes(play_and_train, count=20)
    assert LOOP_TRICK_REFUSALS[trick] in str(refused.value)


def test_a_refusal_the_loop_catches_is_still_refused():
    def swallows(env, agent):
        state, _ = env.reset()
        for _ in range(200):
            action = agent.get_action(state)
            try:
                agent.get_action(state)  # refused: a second choice before stepping
            except RefusedCall:
                pass
            state, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break

    with pytest.raises(RefusedCall, match="2 times in one environment step"):
        episodes(swallows)


def test_an_action_chosen_but_never_played_is_refused():
    def leaves_a_choice(env, agent):
        state, _ = env.reset()
        agent.get_action(state)

    with pytest.raises(RefusedCall, match="without playing it"):
        episodes(leaves_a_choice)


def test_combined_replay_may_not_learn_online_too():
    from combined_replay import CombinedReplayBuffer
    from replay_buffer import play_and_train_with_replay  # one online update per step

    with pytest.raises(RefusedCall, match="newest transition is already in the batch"):
        train_buffer_on_taxi(lambda: CombinedReplayBuffer(100, seed=1), play_and_train_with_replay,
                             7, [2], 8, 0, **SETTINGS)


def test_a_buffer_that_makes_up_rows_is_refused():
    from replay_buffer import ReplayBuffer, play_and_train_with_replay

    made_up = type("MadeUp", (ReplayBuffer,), {})
    made_up.sample = answer(FABRICATED_ROWS_SAMPLE.replace("@add_to_class(ReplayBuffer)", ""))[
        "sample"]
    with pytest.raises(RefusedCall, match="no transition the environment produced"):
        train_buffer_on_taxi(lambda: made_up(100, seed=1), play_and_train_with_replay, 7, [2], 8, 1,
                             **SETTINGS)


@pytest.mark.parametrize("returned, problem", [
    (5, "not five arrays"),
    ((np.arange(3),) * 4, "4 items"),
    ((np.arange(3), np.arange(3), np.ones(3), np.arange(3), np.zeros(2, bool)), "[2, 3] rows"),
    ((np.arange(9),) * 4 + (np.zeros(9, bool),), "[9] rows"),
    ((np.arange(3) + 0.5,) + (np.arange(3),) * 4, "obs_t field"),
    ((np.arange(3),) * 4 + (np.arange(3),), "done field"),
    ((np.array(["a", "b", "c"]),) + (np.arange(3),) * 4, "obs_t field")])
def test_a_batch_that_is_not_taxis_is_refused(returned, problem):
    with pytest.raises(ProbeError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        taxi_batch(returned, 8)


def test_a_smaller_batch_is_a_batch():
    obs, action, reward, obs_next, done = taxi_batch(
        (np.array([4.0]), [1], [-1], np.array([5]), np.array([0])), 8)
    assert obs.dtype == np.int64 and done.dtype == bool and reward.dtype == np.float64
    assert (obs.tolist(), done.tolist()) == ([4], [False])


# --- DQN -----------------------------------------------------------------------------------

def dqn_run(dqn_step=None, sync_target=None, steps=520):
    """A short run of the learning check's loop on its witnesses (checks/dqn_loop.py), as
    it runs in-process; the run's ledger."""
    import dataclasses

    import neural_replay
    from checks.dqn_loop import DQNLoopWitness
    from checks.lesson07_neural_replay import mirrored_networks
    from course.dqn import DQNSettings, train_dqn_lent

    settings = DQNSettings(steps=steps, batch_size=16, learning_starts=500, target_period=10)
    ledger = Ledger()
    online, target, optimizer = mirrored_networks(ledger)(5, settings)
    run = DQNLoopWitness(5, settings, ledger, online.network)
    train_dqn_lent(dqn_step or neural_replay.dqn_step, sync_target or neural_replay.sync_target,
                   run.env, run.replay, online, target, optimizer, run.turns, 5,
                   dataclasses.asdict(settings))
    run.finished()
    return ledger


def test_the_course_dqn_step_and_sync_keep_every_rule():
    assert dqn_run().refused is None


@pytest.mark.parametrize("trick", sorted(DQN_STEP_TRICKS))
def test_a_dqn_step_that_breaks_a_rule_is_refused_with_the_rule(trick):
    import neural_replay

    source, refusal = DQN_STEP_TRICKS[trick]
    dqn_step = answer(source, td_targets=neural_replay.td_targets,
                      huber_loss_gradient=neural_replay.huber_loss_gradient)["dqn_step"]
    with pytest.raises(RefusedCall, match="The rule: ") as refused:
        dqn_run(dqn_step=dqn_step)
    assert refusal in str(refused.value)


@pytest.mark.parametrize("change, words", [
    ("greedy", "played action"), ("short", "made 510 environment steps, not 520"),
    ("twice", "began a 'learn' turn"), ("another_transition", "that is not the step's own")])
def test_a_changed_course_loop_is_refused(monkeypatch, change, words):
    """The course's loop runs in the student's process, where their code could change it:
    the grader's witnesses hold it to the loop as written."""
    import course.dqn

    train = course.dqn.train_dqn
    if change == "greedy":
        monkeypatch.setattr(course.dqn, "epsilon_at", lambda step, settings: 0.0)
    elif change == "short":  # the loop runs fewer steps than the grader's settings say
        monkeypatch.setattr(course.dqn, "train_dqn", lambda *args, **kwargs: train(
            *args[:4], args[4].with_(steps=510), **kwargs))
    elif change == "twice":  # the learning step twice a step
        monkeypatch.setattr(course.dqn, "train_dqn", lambda learn, *args, **kwargs: train(
            lambda *a: (learn(*a), learn(*a)), *args, **kwargs))
    else:  # a reward of its own stored
        class Shifted:
            def __init__(self, replay):
                self.replay = replay

            def add(self, observation, action, reward, *rest):
                self.replay.add(observation, action, reward + 1.0, *rest)

            def __getattr__(self, name):
                return getattr(self.replay, name)
        monkeypatch.setattr(course.dqn, "train_dqn", lambda learn, sync, replay, *args, **kw:
                            train(learn, sync, Shifted(replay), *args, **kw))
    with pytest.raises(RefusedCall, match="The rule: ") as refused:
        dqn_run()
    assert words in str(refused.value)
    if change != "twice":
        assert "The rule: the course's DQN loop runs as written" in str(refused.value)


def test_a_dqn_step_that_never_samples_is_refused():
    with pytest.raises(RefusedCall, match="made 0 replay.sample call"):
        dqn_run(dqn_step=lambda *args: None)


@pytest.mark.parametrize("sync, words", [
    (lambda online, target, step, period: target.load_parameters(
        [p + 1e-3 for p in online.parameters()]), "not the online network's current ones"),
    (lambda online, target, step, period: [target.load_parameters(online.parameters())
                                           for _ in range(2)],
     "2 times in one sync_target call"),
    (lambda online, target, step, period: online.load_parameters(target.parameters()),
     "loaded parameters into the online network")])
def test_a_sync_that_loads_anything_but_a_copy_of_the_online_network_is_refused(sync, words):
    with pytest.raises(RefusedCall, match="The rule: ") as refused:
        dqn_run(sync_target=sync)
    assert words in str(refused.value)


def assign_arrays(online, target, step, period):
    """A sync through QNetwork's public attributes, as a student may write it."""
    if step % period == 0:
        target.weights = [weight.copy() for weight in online.weights]
        target.biases = [bias.copy() for bias in online.biases]


def test_a_sync_that_assigns_copies_of_the_arrays_keeps_every_rule():
    assert dqn_run(sync_target=assign_arrays).refused is None


@pytest.mark.parametrize("sync, words", [
    (lambda online, target, step, period: setattr(
        target, "weights", [w + 1e-3 for w in online.weights]),
     "set the target network's weights to arrays that are not the online network's"),
    (lambda online, target, step, period: setattr(online, "biases", target.biases),
     "set the online network's biases")])
def test_a_sync_that_sets_other_arrays_is_refused(sync, words):
    with pytest.raises(RefusedCall, match="The rule: ") as refused:
        dqn_run(sync_target=sync)
    assert words in str(refused.value)


def test_the_allowances_are_the_rules_written_once():
    from checks.witness import ONLINE_STEPS, RULES

    assert ONLINE_STEPS.most == {"get_action": 1, "update": 1}
    assert taxi_steps(0, 8).most == {"get_action": 1, "update": 0, "sample": 1,
                                     "replayed update": 8}
    assert DQN_STEP.exactly == ("replay.sample",) and SYNC_TARGET.most == {
        "target.load_parameters": 1, "target.weights": 1, "target.biases": 1}
    for allowance in (ONLINE_STEPS, taxi_steps(1, 8), DQN_STEP, SYNC_TARGET):
        assert set(allowance.most) <= set(RULES)
