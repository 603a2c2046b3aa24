"""Agents whose actions are fixed in advance, so a test decides where an episode goes.

``scripted_q_agent(action, ...)`` is the course's reference Q-learning agent (from
``qlearning.py``) that always plays ``action``: it still learns, so a test can follow
what a training loop teaches it while the episode's course stays the test's choice.
"""


def scripted_q_agent(action, **settings):
    """A ``qlearning.QLearningAgent(**settings)`` whose ``get_action`` returns ``action``."""
    from qlearning import QLearningAgent

    class ScriptedQAgent(QLearningAgent):
        def get_action(self, state):
            return action

    return ScriptedQAgent(**settings)
