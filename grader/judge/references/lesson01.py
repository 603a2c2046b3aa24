"""References for lesson 01's checks: the Q-learning rule and the learning baseline."""

import numpy as np


def qvalues_after_updates(inputs, bootstrap_terminal=False):
    """The Q-value of the updated pair after each transition, by the textbook rule
    (``bootstrap_terminal``: the common bug of bootstrapping from terminal states);
    V(s') is the maximum over the legal actions of s'."""
    q = np.zeros((inputs["n_states"], inputs["n_actions"]))
    alpha, gamma, legal = inputs["alpha"], inputs["discount"], inputs["legal"]
    history = []
    for state, action, reward, next_state, terminated in inputs["transitions"]:
        bootstrap = (0.0 if terminated and not bootstrap_terminal
                     else q[next_state, legal[next_state]].max())
        q[state, action] += alpha * (reward + gamma * bootstrap - q[state, action])
        history.append(float(q[state, action]))
    return history


def learning_baseline(seeds, episodes, settings):
    """Per seed: the reference agent trained by the reference loop, evaluated greedily
    on every start state (``success_rate``, ``mean_return``)."""
    from checks.taxi_training import train_on_taxi
    from course.taxi import evaluate_qtable
    from qlearning import play_and_train

    evaluations = [evaluate_qtable(train_on_taxi(play_and_train, seed, [episodes],
                                                 **settings)[0])
                   for seed in seeds]
    return [{"success_rate": e.success_rate, "mean_return": e.mean_return}
            for e in evaluations]
