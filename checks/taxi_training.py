"""Train the grader's reference agent on Taxi with a training loop under test.

Lessons 01, 02 and 05 judge a student's training loop (and buffer) by what it makes of
the course's reference Q-learning agent on the grader's own Taxi: the environment and
the agent are witnesses (:mod:`checks.witness`), lent to the student's process, and the
Q-tables judged are read from the grader's agent, never from the student's process.
"""

from checks.lending import mirrored
from checks.witness import WitnessedAgent, WitnessedEnv, refusal_of

AGENT_CALLS = ("get_action", "update")  # what a training loop asks of the agent


def lent_taxi_pair(seed, alpha, epsilon, discount, serve_agent=False, agent_class=None):
    """(environment, agent) for one run: Taxi with ``seed``, and a fresh reference agent.

    The environment is mirrored (the student's process steps a copy, the grader replays
    it). The agent is mirrored too, except with ``serve_agent``: for lesson 01, whose
    answer the reference agent is, it stays here and answers each call across.
    ``agent_class`` replaces the reference agent where the loop runs in the student's
    own notebook (there is nothing to protect there, and lesson 01's reference is not).
    """
    from course.legal_actions import AllActions
    from course.taxi import N_ACTIONS, make_taxi
    if agent_class is None:
        from qlearning import QLearningAgent as agent_class

    env = mirrored(make_taxi, seed, logged=("reset", "step"),
                   original=WitnessedEnv(make_taxi(seed)))
    legal = mirrored(AllActions, N_ACTIONS)
    settings = dict(alpha=alpha, epsilon=epsilon, discount=discount,
                    get_legal_actions=legal, seed=seed)
    agent = WitnessedAgent(agent_class(**settings), env)
    if not serve_agent:
        mirrored(agent_class, **settings, logged=AGENT_CALLS,
                 settable=("epsilon",), pushed=("epsilon",), original=agent)
    return env, agent


def train_on_taxi(play_episode, seed, checkpoints, alpha, epsilon, discount, epsilon_decay,
                  serve_agent=False, agent_class=None):
    """Q-tables of the reference agent after each number of episodes in ``checkpoints``,
    trained by ``play_episode(env, agent)``; raises the loop's refusal if it had one."""
    from course.experiments import train_agent
    from course.qtables import qtable_from_agent
    from course.taxi import N_ACTIONS, N_STATES

    env, agent = lent_taxi_pair(seed, alpha, epsilon, discount, serve_agent, agent_class)
    snapshots, done = [], 0
    for checkpoint in checkpoints:
        train_agent(env, agent, play_episode, checkpoint - done,
                    epsilon_decay=epsilon_decay, progress=False)
        refusal_of(env)
        done = checkpoint
        snapshots.append(qtable_from_agent(agent.agent, N_STATES, N_ACTIONS))
    return snapshots
