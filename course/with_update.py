"""An agent that acts as another does but learns from each step in a way of your choice.

Lesson 01's ``play_and_train(env, agent)`` plays an episode and, after every step, calls
``agent.update(state, action, reward, next_state, terminated)``. The training loops of
the later lessons play episodes the same way; they differ only in what learning from a
step means (learn from it and from a replayed batch, learn from replay alone, replay by
priority). So they reuse lesson 01's loop and hand it an agent whose ``update`` is theirs::

    def learn(state, action, reward, next_state, terminated):
        ...  # this lesson's learning step, which may call agent.update

    return play_and_train(env, WithUpdate(agent, learn), t_max)
"""


class WithUpdate:
    """``agent``, except that ``update`` calls ``learn`` (with the same arguments).

    Everything else, ``get_action`` first, is ``agent``'s own: the loop reads the
    agent's attributes (``epsilon``, the Q-values) through this object unchanged.
    """

    def __init__(self, agent, learn):
        self.agent = agent
        self.update = learn

    def get_action(self, state):
        return self.agent.get_action(state)

    def __getattr__(self, name):  # only for what __init__ did not set
        if name == "agent":  # not set yet (a copy being made): no agent to ask
            raise AttributeError(name)
        return getattr(self.agent, name)
