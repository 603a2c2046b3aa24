"""Learning checks judge what the grader holds: its own environment and its own agent.

A learning check trains the grader's reference agent with the student's loop (and the
student's buffer) on the grader's environment, then judges the agent the grader holds.
The environment and the agent are wrapped as *witnesses* that accept only what a real
training loop can do:

- the environment remembers every transition it produced, and takes only the action
  that the agent chose last (a loop cannot steer the agent towards actions it prefers);
- the agent learns only from transitions the environment really produced, earlier in
  the run (a loop cannot teach it a value it computed elsewhere).

In the grader both are lent to the student's process (:mod:`checks.lending`) and every
call is replayed on these wrappers, so a refusal stops the run at once. In a notebook
the wrappers work the same way on the student's direct calls; a loop that swallows the
refusal is still caught, because the refusal is kept and checked after training.
"""

import numpy as np

from checks.framework import ProbeError
from checks.lending import Served
from checks.records import RecordSet


class RefusedCall(ProbeError):
    """A training loop did something a real one cannot."""


def observation_key(observation):
    """A hashable stand-in for an observation (an int, or an array's values)."""
    if type(observation) is int:
        return observation
    array = np.asarray(observation)
    return int(array) if array.ndim == 0 else tuple(array.ravel().tolist())


def transition_key(state, action, reward, next_state, terminated):
    return (observation_key(state), int(action), float(reward), observation_key(next_state),
            bool(terminated))


class WitnessedEnv:
    """The grader's environment; remembers the transitions it produced."""

    def __init__(self, env):
        self.env = env
        self.happened = RecordSet("step", "transitions")
        self.agent = None  # set by WitnessedAgent: whose last choice the next step must be
        self.refused = None  # the first refusal, kept even if the loop caught it
        self.steps = 0
        self._observation = None

    def refuse(self, message):
        self.refused = self.refused or message
        raise RefusedCall(message)

    def reset(self, **kwargs):
        self._observation, info = self.env.reset(**kwargs)
        return self._observation, info

    def step(self, action):
        if self._observation is None:
            self.refuse("your loop called env.step before env.reset.")
        if self.agent is not None:
            chosen, self.agent.chosen = self.agent.chosen, None
            if chosen is None or int(action) != int(chosen):
                self.refuse(f"your loop stepped the environment with action {action!r}, but "
                            + ("the agent had not been asked for an action since the last "
                               "step" if chosen is None else f"the agent chose {chosen}")
                            + ": play the action that agent.get_action returned.")
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.happened.add(transition_key(self._observation, action, reward, observation,
                                         terminated))
        self._observation = observation
        self.steps += 1
        return observation, reward, terminated, truncated, info

    def __getattr__(self, name):  # spaces, unwrapped, ...: read from the environment
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)


class WitnessedAgent:
    """The grader's agent; learns only from transitions the environment produced.

    Served to the student's loop when its class is the lesson's own answer (no copy of
    it may enter the student's process); mirrored otherwise, with this wrapper as the
    original the transcript is replayed on.
    """

    __lending__ = Served(remote=("get_action", "get_best_action", "get_value", "get_qvalue"),
                         deferred=("update",), readable=("epsilon", "alpha", "discount"),
                         settable=("epsilon",))

    def __init__(self, agent, env):
        object.__setattr__(self, "agent", agent)
        object.__setattr__(self, "env", env)
        object.__setattr__(self, "chosen", None)
        env.agent = self

    def get_action(self, state):
        action = self.agent.get_action(state)
        object.__setattr__(self, "chosen", action)
        return action

    def update(self, state, action, reward, next_state, terminated):
        key = transition_key(state, action, reward, next_state, terminated)
        if key not in self.env.happened:
            self.env.refuse(
                f"your loop updated the agent on (state {key[0]}, action {key[1]}, reward "
                f"{key[2]:g}, next state {key[3]}, terminated={key[4]}), a transition the "
                "environment never produced. Pass update the step's own values, with "
                "terminated (not terminated or truncated), or a transition from the buffer.")
        self.agent.update(state, action, reward, next_state, terminated)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "agent"), name)

    def __setattr__(self, name, value):
        if name == "chosen":
            object.__setattr__(self, name, value)
        else:
            setattr(self.agent, name, value)


def witnessed(env, agent):
    """The pair (environment, agent) as witnesses of each other."""
    witness_env = WitnessedEnv(env)
    return witness_env, WitnessedAgent(agent, witness_env)


def refusal_of(env):
    """Raise the refusal a run collected (if its loop swallowed it), else nothing."""
    if env.refused:
        raise RefusedCall(env.refused)
