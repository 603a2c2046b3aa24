"""The helpers lessons and grader lean on: Taxi's array model, plots' statistics, loops."""

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from course.add_to_class import add_to_class
from course.experiments import compare_over_seeds
from course.plotting import mean_and_band, moving_average
from course.qtables import greedy_actions, qtable_from_agent
from course.taxi import (ENV_ID, N_ACTIONS, N_STATES, STEP_LIMIT, evaluate_policy,
                         evaluate_qtable, optimal_evaluation, taxi_model)
from course.your_work import library_that_raised
from replay_buffer import ReplayBuffer

# --- course.taxi -----------------------------------------------------------------------


def test_optimal_policy_solves_every_start_state_with_mean_return_793():
    optimal = optimal_evaluation()
    assert optimal.solved.shape == (300,) and optimal.solved.all(), \
        f"optimal policy solved {optimal.solved.sum()}/300 start states"
    assert optimal.mean_return == pytest.approx(7.93, abs=0.01)


def test_all_zero_qtable_solves_nothing_and_loses_200_everywhere():
    # argmax of zeros is action 0 (south): the taxi never delivers, -1 per step
    evaluation = evaluate_qtable(np.zeros((N_STATES, N_ACTIONS)))
    assert evaluation.solved.sum() == 0
    np.testing.assert_array_equal(evaluation.returns, np.full(300, -200.0))


def test_start_states_are_those_reset_can_produce():
    env = gym.make(ENV_ID)
    seen = {env.reset(seed=seed)[0] for seed in range(3000)}
    start_states = set(taxi_model().start_states.tolist())
    assert len(start_states) == 300
    assert seen <= start_states and len(seen) > 290, "reset produced an unknown start state"


def hand_made_policy():
    """Drive straight at the passenger, then at the destination, ignoring walls.

    It delivers from some start states, pushes into a wall forever from others
    (truncated at 200 steps), and from a few it drops off where it must not (-10 per
    step): every kind of reward and ending, so the comparison below covers them all.
    """
    taxi = gym.make(ENV_ID).unwrapped
    policy = np.empty(N_STATES, dtype=np.int64)
    for state in range(N_STATES):
        row, col, passenger, destination = taxi.decode(state)
        in_taxi = passenger == 4
        target_row, target_col = taxi.locs[destination if in_taxi else passenger]
        if (row, col) == (target_row, target_col):
            policy[state] = 5 if in_taxi else 4  # drop off / pick up
        elif not in_taxi and (row, col) == (2, 2):
            policy[state] = 5  # an illegal drop-off, on purpose
        elif row != target_row:
            policy[state] = 0 if row < target_row else 1  # south / north
        else:
            policy[state] = 2 if col < target_col else 3  # east / west
    return policy


def rollout_in_gymnasium(env, policy, start_state):
    """One episode of the real Taxi-v4 (with its 200-step TimeLimit) from ``start_state``."""
    env.reset()
    env.unwrapped.s = int(start_state)
    state, total, terminated, truncated = int(start_state), 0.0, False, False
    while not (terminated or truncated):
        state, reward, terminated, truncated, _ = env.step(int(policy[state]))
        total += reward
    return total, terminated


def test_evaluate_policy_agrees_with_stepping_gymnasium_taxi():
    # Every one of the 300 start states (about 2 s): this proves the array model right.
    policy = hand_made_policy()
    evaluation = evaluate_policy(policy)
    env = gym.make(ENV_ID)
    env.reset(seed=0)
    start_states = taxi_model().start_states
    for index, start in enumerate(start_states):
        total, terminated = rollout_in_gymnasium(env, policy, start)
        assert (evaluation.returns[index], evaluation.solved[index]) == (total, terminated), \
            (f"start state {start}: array model says return {evaluation.returns[index]}, "
             f"solved {evaluation.solved[index]}; gymnasium says {total}, {terminated}")
    # the comparison is only worth something if the policy hits every case
    returns = evaluation.returns
    assert evaluation.solved.any() and (returns == -STEP_LIMIT).any(), returns
    assert (returns < -STEP_LIMIT).any(), "no start state met the -10 illegal drop-off"


def test_greedy_evaluation_summary_reads_like_the_lessons_say():
    text = str(optimal_evaluation())
    assert text == "solved 300/300 start states (100.0%), mean return 7.93"


# --- course.plotting -------------------------------------------------------------------


def direct_moving_average(values, window):
    return np.array([np.mean(values[max(0, i - window + 1):i + 1])
                     for i in range(len(values))])


@pytest.mark.parametrize("window", [1, 3, 10, 50])
def test_moving_average_matches_the_mean_of_the_last_window_values(window):
    values = np.random.default_rng(window).normal(size=30)
    np.testing.assert_allclose(moving_average(values, window),
                               direct_moving_average(values, window), rtol=1e-12)


def test_moving_average_smooths_each_row_of_a_seeds_by_episodes_array():
    curves = np.random.default_rng(1).normal(size=(4, 25))
    expected = np.stack([direct_moving_average(row, 5) for row in curves])
    np.testing.assert_allclose(moving_average(curves, 5), expected, rtol=1e-12)


def test_mean_and_band_is_the_t_confidence_interval_of_the_mean():
    curves = np.random.default_rng(2).normal(loc=3.0, size=(5, 40))
    mean, half_width = mean_and_band(curves, confidence=0.95)
    low, high = stats.t.interval(0.95, df=4, loc=curves.mean(axis=0),
                                 scale=stats.sem(curves, axis=0))
    np.testing.assert_allclose(mean, curves.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(half_width, (high - low) / 2, rtol=1e-10)
    _, wider = mean_and_band(curves, confidence=0.99)
    assert (wider > half_width).all(), "a 99% band must be wider than a 95% band"


def test_mean_and_band_of_one_seed_has_no_band():
    curve = np.arange(6.0)[None, :]
    mean, half_width = mean_and_band(curve)
    np.testing.assert_array_equal(mean, np.arange(6.0))
    np.testing.assert_array_equal(half_width, np.zeros(6))


# --- course.add_to_class, course.qtables, course.experiments ---------------------------


def test_add_to_class_attaches_a_method_usable_by_existing_instances():
    class Counter:
        def __init__(self):
            self.count = 0

    existing = Counter()

    @add_to_class(Counter)
    def increment(self, by=1):
        self.count += by
        return self.count

    assert existing.increment(2) == 2 and Counter().increment() == 1
    assert Counter.increment is increment, "the decorator must return the function itself"


class FakeAgent:
    """Q(s, a) = 10 s + a, kept in whatever types a student might use."""

    def __init__(self):
        self.asked = []

    def get_qvalue(self, state, action):
        self.asked.append((state, action))
        return np.float32(10 * state + action) if action % 2 else 10 * state + action


def test_qtable_from_agent_asks_for_every_pair_and_returns_float64():
    agent = FakeAgent()
    table = qtable_from_agent(agent, n_states=4, n_actions=3)
    assert table.dtype == np.float64 and table.shape == (4, 3)
    np.testing.assert_array_equal(table, 10 * np.arange(4)[:, None] + np.arange(3))
    assert sorted(agent.asked) == [(s, a) for s in range(4) for a in range(3)]


def test_greedy_actions_break_ties_towards_the_lowest_action():
    qtable = np.array([[0.0, 0.0, 0.0], [1.0, 3.0, 3.0], [-5.0, -1.0, -2.0]])
    np.testing.assert_array_equal(greedy_actions(qtable), [0, 1, 1])


def test_compare_over_seeds_runs_every_method_with_every_seed():
    calls = []

    def run_method(name, offset):
        def run(seed):
            calls.append((name, seed))
            return [seed + offset] * 7  # a list: the helper must make it an array
        return run

    seeds = [3, 1, 4, 5]
    curves = compare_over_seeds({"plain": run_method("plain", 0.0),
                                 "replay": run_method("replay", 0.5)}, seeds)
    assert set(curves) == {"plain", "replay"}
    for name, offset in (("plain", 0.0), ("replay", 0.5)):
        assert curves[name].shape == (4, 7) and curves[name].dtype == np.float64
        # row i belongs to seeds[i], so methods are paired seed by seed
        np.testing.assert_array_equal(curves[name][:, 0], np.array(seeds) + offset)
        assert [seed for method, seed in calls if method == name] == seeds


# --- course.corridor -----------------------------------------------------------------------

def test_corridor_truncates_at_its_time_limit_and_refuses_a_runaway_episode():
    from course.corridor import RunawayEpisode, make_corridor, runaway_limit

    env = make_corridor(3, time_limit=5)
    env.reset()
    ends = [env.step(0)[2:4] for _ in range(5)]
    assert ends == [(False, False)] * 4 + [(False, True)]  # truncated, never terminated
    for _ in range(runaway_limit(5) - 5):  # a loop that ignores truncation goes on...
        env.step(0)
    with pytest.raises(RunawayEpisode):  # ...until the corridor refuses, on every machine
        env.step(0)
    assert env.unwrapped.ran_away and env.unwrapped.steps_taken == runaway_limit(5)
    env.reset()  # a new episode starts its count again
    assert env.step(1)[:4] == (1, -1.0, False, False)


def test_the_longest_correct_episode_of_the_loop_checks_is_never_refused():
    from course.corridor import make_corridor

    env = make_corridor(3, time_limit=10_005)  # the checks' default-t_max case
    env.reset()
    for _ in range(10_005):  # to the time limit, one step past t_max's 10,000
        truncated = env.step(0)[3]
    assert truncated and not env.unwrapped.ran_away


def test_an_error_raised_by_a_library_is_told_apart_from_one_the_notebook_raises():
    notebook = {"__name__": "__main__", "np": np}  # a notebook's cells: no __file__
    exec("def own(rng):\n    raise ValueError('cannot sample from an empty buffer')\n"  # noqa: S102
         "def numpy_s(rng):\n    return rng.integers(0, size=1)\n", notebook)
    raised = {}
    for name in ("own", "numpy_s"):
        try:
            notebook[name](np.random.default_rng(0))
        except ValueError as error:
            raised[name] = library_that_raised(error)
    assert raised == {"own": None, "numpy_s": "numpy.random._bounded_integers"}
    assert library_that_raised(ValueError("never raised")) is None
    with pytest.raises(ValueError) as refused:  # a reference module is the course's own
        ReplayBuffer(10).sample(1)
    assert library_that_raised(refused.value) is None
