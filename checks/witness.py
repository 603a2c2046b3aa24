"""Learning checks judge what the grader holds, trained only as a real training loop can.

The learning checks of lessons 01, 02, 05 and 07 train what the grader holds (its Taxi
environment and reference agent; its DQN's networks and optimizer) with code under
test: a student's loop (lesson 01), a student's buffer driven by the course's own loop
(lessons 02 and 05), or a student's learning step called by the course's loop (lesson
07). The grader's objects are wrapped as *witnesses* that accept only what an honest
run does, and keep the first thing they refused, so a loop that catches the refusal is
still caught. (Lesson 03's check needs none: its verdict replays the slots the buffer
drew, on the grader's own memory.)

What an honest run does is written once, as data: an :class:`Allowance` says, for one
*turn* of a run (an environment step; a ``dqn_step`` or ``sync_target`` call), the most
times each call may be made in it and which calls must be made exactly that often, and
:data:`RULES` says each rule in the words a refusal quotes. Beyond the counts, the
witnesses check what the counts cannot say: the action stepped is the one the agent
chose, for the state the environment is in; an update is on the step's own transition
or on a row the buffer under test returned in that step; the target network is loaded
only with the online network's parameters as the grader holds them.

Where the code under test runs in the student's process (lessons 01 and 07) the
witnesses are lent to it (:mod:`checks.lending`) and every call is replayed on them, so
a refusal stops the run at once; where the grader runs the course's loop (02 and 05)
they are used directly, and every row the student's buffer returns is checked. In a
notebook they work the same way on the student's direct calls.
"""

from collections import Counter
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from checks.framework import ProbeError, call_later, call_student
from checks.lending import Served
from checks.records import RecordSet


class RefusedCall(ProbeError):
    """A training loop did something a real one cannot."""


# --- the rules ------------------------------------------------------------------------------

RULES = MappingProxyType({
    "reset": "call env.reset() once at the start of each episode, without a seed: the "
             "grader's environment chooses the start states",
    "get_action": "ask agent.get_action exactly once before each env.step, for the state "
                  "the environment is in, and play the action it returns: exploration is "
                  "drawn from the agent's own generator, which the grader holds",
    "epsilon": "the grader decays the agent's epsilon itself after each episode; training "
               "code may read it but not set it",
    "agent calls": "a training loop asks the agent only for get_action and update (the "
                   "agent's other methods and its generator are not the loop's to use)",
    "update": "update the agent at most once per step on the step's own transition "
              "(state, action, reward, next state, terminated)",
    "no online update": "learn only from the batches replay.sample returns: with combined "
                        "replay the newest transition is already in the batch",
    "replayed update": "update the agent on each row replay.sample returned in this step, "
                       "at most once, and on nothing else: no private memory, no "
                       "transition of your own",
    "buffer rows": "sample returns transitions that were added to the buffer, every field "
                   "of a row from the same stored transition",
    "sample": "sample the buffer under test once per step, with the batch size the loop "
              "was given",
    "replay.sample": "call replay.sample(batch_size, beta) exactly once per dqn_step, with "
                     "the batch size dqn_step was given",
    "replay.add": "only the course's loop adds to the replay buffer: each environment "
                  "step's own transition, once",
    "the course's loop": "the course's DQN loop runs as written: the action its "
                         "epsilon-greedy rule picks at every step, each step's transition "
                         "stored, then from learning_starts on one dqn_step and one "
                         "sync_target call per step; code may not change it",
    "optimizer.step": "step the optimizer at most once per dqn_step (and never in "
                      "sync_target)",
    "online.load_parameters": "never load parameters into the online network (nor set its "
                              "weights or biases): it learns only through optimizer.step",
    "target.load_parameters": "load parameters into the target network (or set its weights "
                              "and biases) only in sync_target, at most once per call, and "
                              "only a copy of the online network's current parameters",
})
# Setting a network's weights or biases is loading (part of) its parameters.
RULES = MappingProxyType({**RULES, **{f"{role}.{part}": RULES[f"{role}.load_parameters"]
                                      for role in ("online", "target")
                                      for part in ("weights", "biases")}})
NETWORK_ARRAYS = ("weights", "biases")  # what code may set on a network, as QNetwork allows


@dataclass(frozen=True)
class Allowance:
    """What code under test may do with the grader's objects in one turn of a run.

    ``most``: the most times each call may be made in a turn (a call not named may not be
    made at all); ``exactly``: the calls of ``most`` that must be made exactly that often.
    """

    turn: str  # what one turn is, in words
    who: str  # the code the turn runs, in words
    most: MappingProxyType
    exactly: tuple = ()


def taxi_steps(online_updates=1, replayed_updates=0):
    """An environment step of a Taxi loop: one get_action before it; after it at most
    ``online_updates`` updates on its own transition and, from one sample of the buffer
    under test, at most ``replayed_updates`` updates on rows that sample returned."""
    most = {"get_action": 1, "update": online_updates}
    if replayed_updates:
        most.update({"sample": 1, "replayed update": replayed_updates})
    return Allowance("environment step", "your loop", MappingProxyType(most),
                     exactly=("get_action",))


ONLINE_STEPS = taxi_steps()  # lesson 01: one update per step, no replay

DQN_STEP = Allowance("dqn_step call", "your dqn_step",
                     MappingProxyType({"replay.sample": 1, "optimizer.step": 1}),
                     exactly=("replay.sample",))
SYNC_TARGET = Allowance("sync_target call", "your sync_target",
                        MappingProxyType({"target.load_parameters": 1, "target.weights": 1,
                                          "target.biases": 1}))


class Ledger:
    """The calls made in the current turn, held against its allowance; keeps the first
    refusal of the run."""

    def __init__(self, allowance=None):
        self.allowance = allowance
        self.counts = Counter()
        self.refused = None

    def begin(self, allowance=None):
        """A new turn, under ``allowance`` (the last one's if not given)."""
        self.allowance = allowance or self.allowance
        self.counts = Counter()

    def refuse(self, what, rule):
        """Refuse what the code did (``what``, in words) by ``rule``; what is raised is
        the run's first refusal, the cause of any that follow it."""
        self.note(what, rule)
        raise RefusedCall(self.refused)

    def note(self, what, rule):
        """Refuse what the code did without raising: the run is refused when its turn
        or episode ends (for what is ignored rather than stopped, such as a set)."""
        self.refused = self.refused or f"{what}. The rule: {RULES[rule]}."

    def charge(self, call, what):
        """Count one ``call`` (``what`` the code did, in words, or a function that gives
        them: words are made only for a refusal); refuse it past the allowance."""
        counts = self.counts
        counts[call] += 1
        allowed = self.allowance.most.get(call, 0) if self.allowance else 0
        if counts[call] > allowed:
            what = what() if callable(what) else what
            self.refuse(f"{what} {counts[call]} times in one {self.allowance.turn}"
                        if allowed else what, call)

    @property
    def who(self):
        return self.allowance.who if self.allowance else "your code"

    def end(self):
        """Check the calls this turn had to make exactly that often."""
        for call in self.allowance.exactly:
            wanted, made = self.allowance.most[call], self.counts[call]
            if made != wanted:
                self.refuse(f"{self.who} made {made} {call} call(s) in one "
                            f"{self.allowance.turn}, not {wanted}", call)

    def check(self):
        """Raise the run's refusal if it had one (its loop may have swallowed it)."""
        if self.refused:
            raise RefusedCall(self.refused)


# --- Taxi: the environment, the agent, and the buffer under test ---------------------------

def observation_key(observation):
    """A hashable stand-in for an observation (an int, or an array's values)."""
    if type(observation) is int:
        return observation
    if isinstance(observation, np.integer):
        return int(observation)
    array = np.asarray(observation)
    return int(array) if array.ndim == 0 else tuple(array.ravel().tolist())


def transition_key(state, action, reward, next_state, terminated):
    return (observation_key(state), int(action), float(reward), observation_key(next_state),
            bool(terminated))


def describe(key):
    return (f"(state {key[0]}, action {key[1]}, reward {key[2]:g}, next state {key[3]}, "
            f"terminated={key[4]})")


class WitnessedEnv:
    """The grader's environment: steps only with the action the agent chose, and
    remembers the transitions it produced. Holds the run's :class:`Ledger`; each step
    begins a turn."""

    def __init__(self, env, allowance=ONLINE_STEPS):
        self.env = env
        self.allowance = allowance
        self.ledger = Ledger(allowance)
        self.happened = RecordSet("step", "transitions")
        self.agent = None  # set by WitnessedAgent: whose choice the next step must be
        self.last = None  # the key of the transition the last step produced
        self.replayable = Counter()  # rows the buffer under test returned this turn
        self.steps = 0
        self._observation = None
        self._resets = 0

    @property
    def refused(self):
        return self.ledger.refused

    def begin_episode(self):
        """The harness starts an episode: the loop must reset before it steps."""
        self._observation, self._resets, self.last = None, 0, None
        self._new_turn()

    def end_episode(self):
        """The harness ends an episode; raises the run's refusal if it had one."""
        self._no_unplayed_choice("ended the episode")
        self.ledger.check()

    def _new_turn(self):
        self.ledger.begin(self.allowance)
        self.replayable = Counter()

    def _no_unplayed_choice(self, doing):
        if self.agent is not None and self.agent.chosen is not None:
            chosen, self.agent.chosen = self.agent.chosen, None
            self.ledger.refuse(f"your loop asked the agent for an action (it chose {chosen}) "
                               f"and {doing} without playing it", "get_action")

    def reset(self, *args, **kwargs):
        given = [*map(repr, args), *(f"{name}={value!r}" for name, value in kwargs.items()
                                     if value is not None or name not in ("seed", "options"))]
        if given:
            self.ledger.refuse(f"your loop called env.reset with {', '.join(given)}"[:300],
                               "reset")
        if self._resets:
            self.ledger.refuse("your loop called env.reset a second time in one episode",
                               "reset")
        self._no_unplayed_choice("reset the environment")
        self._resets += 1
        self._observation, info = self.env.reset()
        self.last = None
        self._new_turn()
        return self._observation, info

    def step(self, action):
        if self._observation is None:
            self.ledger.refuse("your loop called env.step before env.reset", "reset")
        if self.agent is not None:
            chosen, self.agent.chosen = self.agent.chosen, None
            if chosen is None:
                self.ledger.refuse(f"your loop stepped the environment with action "
                                   f"{action!r} without asking agent.get_action since the "
                                   "last step", "get_action")
            if not _same_action(action, chosen):
                self.ledger.refuse(f"your loop stepped the environment with action "
                                   f"{action!r}, but the agent chose {chosen}", "get_action")
            self.ledger.end()  # the calls each step needs exactly (one get_action)
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.last = transition_key(self._observation, action, reward, observation, terminated)
        self.happened.add(self.last)
        self._observation = observation
        self.steps += 1
        self._new_turn()
        return observation, reward, terminated, truncated, info

    def __getattr__(self, name):  # spaces, unwrapped, ...: read from the environment
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)


def _same_action(action, chosen):
    try:
        return int(action) == int(chosen) and float(action) == float(chosen)
    except (TypeError, ValueError):
        return False


class WitnessedAgent:
    """The grader's agent: chooses once per step, learns only within the allowance.

    Served to the student's loop in lesson 01, whose answer the reference agent is (no
    copy of it may enter the student's process); in the grader's own loops and in a
    notebook, used directly. The harness reaches the agent itself as ``.agent``.
    """

    __lending__ = Served(remote=("get_action", "get_best_action", "get_value", "get_qvalue"),
                         deferred=("update",), readable=("epsilon", "alpha", "discount"),
                         settable=("epsilon",), predicted=("get_action",))
    READABLE = ("epsilon", "alpha", "discount")

    def __init__(self, agent, env, foresee=None):
        """``foresee(witness, state, action)``: what an honest loop asks next after
        get_action(state) answered ``action`` (:meth:`answers_ahead`); None: nothing."""
        object.__setattr__(self, "agent", agent)
        object.__setattr__(self, "env", env)
        object.__setattr__(self, "chosen", None)
        object.__setattr__(self, "foresee", foresee)
        env.agent = self

    def answers_ahead(self, name, args, kwargs, answer):
        """[(calls logged before, args, kwargs, answer)] of the get_action calls an honest
        loop makes next (checks/lending.py: the grader sends them ahead of the calls)."""
        if self.foresee is None or name != "get_action" or kwargs or len(args) != 1:
            return []
        return self.foresee(self, args[0], answer)

    def get_action(self, state):
        env = self.env
        env.ledger.charge("get_action", "your loop asked agent.get_action")
        if env._observation is None:
            env.ledger.refuse("your loop asked agent.get_action before env.reset",
                              "get_action")
        if observation_key(state) != observation_key(env._observation):
            env.ledger.refuse(f"your loop asked agent.get_action for state "
                              f"{observation_key(state)!r}, but the environment is in state "
                              f"{observation_key(env._observation)!r}", "get_action")
        action = self.agent.get_action(state)
        object.__setattr__(self, "chosen", action)
        return action

    def update(self, state, action, reward, next_state, terminated):
        env = self.env
        key = transition_key(state, action, reward, next_state, terminated)
        if env.replayable[key] > 0:
            env.replayable[key] -= 1
            env.ledger.charge("replayed update", "your loop updated the agent on rows "
                                                 "replay.sample returned")
        elif key == env.last:
            online = env.allowance.most.get("update", 0)
            env.ledger.charge("update" if online else "no online update",
                              lambda: "your loop updated the agent on the step's own "
                                      f"transition {describe(key)}")
        else:
            origin = ("a transition the environment never produced"
                      if key not in env.happened else
                      "an earlier transition that replay.sample did not return in this step"
                      if "replayed update" in env.allowance.most else
                      "an earlier transition, not the step's own")
            env.ledger.refuse(f"your loop updated the agent on {describe(key)}, {origin}",
                              "replayed update" if "replayed update" in env.allowance.most
                              else "update")
        self.agent.update(state, action, reward, next_state, terminated)

    def _refuse_other_call(self, *args, **kwargs):
        self.env.ledger.refuse("your loop called one of the agent's other methods",
                               "agent calls")

    get_best_action = get_value = get_qvalue = set_qvalue = _refuse_other_call

    def __getattr__(self, name):
        if name in WitnessedAgent.READABLE:
            return getattr(object.__getattribute__(self, "agent"), name)
        raise AttributeError(f"the agent lent to your loop has no attribute {name!r} a "
                             "loop may use: " + RULES["agent calls"])

    def __setattr__(self, name, value):
        if name == "chosen":
            object.__setattr__(self, name, value)
        else:  # ignored, and the run refused when the episode ends
            self.env.ledger.note(f"your loop set agent.{name} = {value!r}"[:200],
                                 "epsilon" if name == "epsilon" else "agent calls")


class BufferUnderTest:
    """A student's replay buffer as a Taxi loop uses it: ``add`` passes through (in the
    grader it is sent with the next request), ``sample`` returns the batch as five new
    arrays of the grader's own (Taxi's types, ``batch_size`` rows, checked), and tells
    the environment's witness which rows a replayed update may use in this step."""

    def __init__(self, buffer, env, batch_size):
        self.buffer, self.env, self.batch_size = buffer, env, batch_size

    def __len__(self):
        return call_student("len(buffer)", len, self.buffer)

    def add(self, obs_t, action, reward, obs_tp1, done):
        call_later("add(obs_t, action, reward, obs_tp1, done)", self.buffer.add, obs_t,
                   action, reward, obs_tp1, done)

    def sample(self, batch_size):
        self._charge_sample(batch_size)
        batch = taxi_batch(call_student(f"sample({batch_size})", self.buffer.sample,
                                        batch_size), batch_size)
        return self._witnessed(batch, batch_size)

    def _charge_sample(self, batch_size):
        env = self.env
        env.ledger.charge("sample", "your loop sampled the buffer")
        if batch_size != self.batch_size:
            env.ledger.refuse(f"your loop called replay.sample({batch_size!r}) with "
                              f"replay_batch_size {self.batch_size}", "sample")

    def _witnessed(self, batch, batch_size):
        """``batch``, after telling the environment's witness which rows a replayed update
        may use in this step (refused if one is no transition of the run)."""
        env = self.env
        for key in zip(*(field.tolist() for field in batch)):  # transition_key of each row
            if key not in env.happened:
                env.ledger.refuse(f"your buffer's sample({batch_size}) returned the row "
                                  f"{describe(key)}, which is no transition the environment "
                                  "produced in this run", "buffer rows")
            env.replayable[key] += 1
        return batch


TAXI_FIELDS = (("obs_t", np.int64), ("action", np.int64), ("reward", np.float64),
               ("obs_tp1", np.int64), ("done", np.bool_))


def taxi_batch(returned, batch_size):
    """What ``sample(batch_size)`` returned for Taxi, as five new arrays of one to
    ``batch_size`` rows (ints, ints, floats, ints, bools; fewer rows than asked for: a
    combined buffer holding one transition); ProbeError if it is not."""
    where = f"sample({batch_size})"
    try:
        fields = list(returned)
    except TypeError:
        raise ProbeError(f"{where} returned {type(returned).__name__}, not five arrays "
                         "(obs_t, action, reward, obs_tp1, done).") from None
    if len(fields) != 5:
        raise ProbeError(f"{where} returned {len(fields)} items; expected five arrays "
                         "(obs_t, action, reward, obs_tp1, done).")
    arrays = []
    for (name, dtype), field in zip(TAXI_FIELDS, fields):
        try:
            values = np.asarray(field)
            if values.dtype.kind not in "biuf":
                raise TypeError(values.dtype)
            values = values.reshape(-1)
            converted = values.astype(dtype)  # a new array, always
            if values.dtype != dtype and not np.array_equal(converted, values):
                raise ValueError("not whole numbers")
        except (TypeError, ValueError):
            raise ProbeError(f"{where} returned a {name} field that is not an array of "
                             f"Taxi's {np.dtype(dtype).name} values.") from None
        arrays.append(converted)
    rows = {array.size for array in arrays}
    if len(rows) != 1 or not 1 <= min(rows) <= batch_size:
        raise ProbeError(f"{where} returned fields of {sorted(rows)} rows; a batch has "
                         f"batch_size ({batch_size}) rows, the same number in each field.")
    return tuple(arrays)


# --- DQN: the networks, optimizer and buffer a learning step and a sync are given ----------

class WitnessedNetwork:
    """The grader's online or target network (``role``): parameters are loaded only
    within the allowance, and the target only with the online network's parameters as
    the grader holds them (``online``, for the target)."""

    def __init__(self, network, role, ledger, online=None):
        self.network, self.role, self.ledger, self.online = network, role, ledger, online

    def load_parameters(self, values):
        ledger = self.ledger
        ledger.charge(f"{self.role}.load_parameters",
                      f"{ledger.who} loaded parameters into the {self.role} network")
        if self.online is not None and not _equal_parameters(values, self.online.parameters()):
            ledger.refuse(f"{ledger.who} loaded parameters into the target network that are "
                          "not the online network's current ones", "target.load_parameters")
        self.network.load_parameters(values)

    def __setattr__(self, name, value):
        if name in NETWORK_ARRAYS:
            self._set_arrays(name, value)
        else:
            object.__setattr__(self, name, value)

    def _set_arrays(self, name, values):
        """``network.weights = ...`` (or biases): as a load, of part of the parameters."""
        ledger = self.ledger
        ledger.charge(f"{self.role}.{name}",
                      f"{ledger.who} set the {self.role} network's {name}")
        if self.online is not None and not _equal_parameters(values, getattr(self.online,
                                                                             name)):
            ledger.refuse(f"{ledger.who} set the target network's {name} to arrays that are "
                          f"not the online network's current ones", f"target.{name}")
        setattr(self.network, name, values)  # as given: a copy shares nothing, a list does

    def __getattr__(self, name):  # predict, gradients, parameters, sizes, ...
        if name == "network":
            raise AttributeError(name)
        return getattr(self.network, name)


def _equal_parameters(values, parameters):
    try:
        arrays = [np.asarray(value, dtype=np.float64) for value in values]
    except (TypeError, ValueError):
        return False
    return len(arrays) == len(parameters) and all(
        a.shape == p.shape and np.array_equal(a, p) for a, p in zip(arrays, parameters))


class WitnessedOptimizer:
    """The grader's optimizer: steps only within the allowance."""

    def __init__(self, optimizer, ledger):
        self.optimizer, self.ledger = optimizer, ledger

    def step(self, gradients):
        self.ledger.charge("optimizer.step", f"{self.ledger.who} stepped the optimizer")
        self.optimizer.step(gradients)

    def __getattr__(self, name):
        if name == "optimizer":
            raise AttributeError(name)
        return getattr(self.optimizer, name)


def witnessed_sample(ledger, batch_size, wanted):
    """Charge one ``replay.sample(batch_size)`` of a learning step given ``wanted``."""
    ledger.charge("replay.sample", f"{ledger.who} called replay.sample")
    if batch_size != wanted:
        ledger.refuse(f"{ledger.who} called replay.sample({batch_size!r}), but its batch "
                      f"size is {wanted}", "replay.sample")
