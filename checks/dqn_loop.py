"""Lesson 07's learning check: the course's DQN loop runs where the student's code runs.

A DQN step is cheap next to a round trip across the sandbox's boundary, so the course's
loop (:func:`course.dqn.train_dqn_lent`) runs in the student's process, beside the
student's ``dqn_step`` and ``sync_target``, on copies of everything the grader lends it:
CartPole, a uniform buffer, the online and target networks, Adam, and the marks of whose
turn it is. Every call on those copies comes back as a transcript, which the grader
replays on its own objects, the witnesses below, in order; a witness refuses what the
course's loop, run as written, does not do:

- each environment step plays the action the loop's epsilon-greedy rule picks, with the
  loop's own generator (the grader holds a twin) and the grader's online network as it
  stands after every update so far;
- the buffer receives each step's own transition, once, and nothing else;
- from ``learning_starts`` on, each step has one ``dqn_step`` turn, then one
  ``sync_target`` turn, each under its allowance (:mod:`checks.witness`);
- the run is ``settings.steps`` steps long, episodes reset as they end.

What the verdict reads is the grader's own networks and episodes, never the student's
process's: a copy that was changed answers otherwise than the grader's and is refused at
its first differing call.
"""

from types import MappingProxyType

import numpy as np

from checks.witness import DQN_STEP, SYNC_TARGET, Allowance, witnessed_sample
from course.dqn import UniformReplay, epsilon_at, make_cartpole

# The course's loop between the student's calls: it stores the step's transition, once.
LOOP_STEP = Allowance("environment step", "the course's loop",
                      MappingProxyType({"replay.add": 1}), exactly=("replay.add",))


class DQNLoopWitness:
    """The grader's side of one run of the course's loop: its CartPole (:attr:`env`), its
    buffer (:attr:`replay`) and its marks of whose turn it is (:attr:`turns`), sharing one
    :class:`~checks.witness.Ledger` with the networks and optimizer
    (``online`` is the grader's online QNetwork, which the actions are checked against)."""

    def __init__(self, seed, settings, ledger, online):
        self.seed, self.settings, self.ledger, self.online = seed, settings, ledger, online
        self.env = WitnessedCartPole(self)
        self.replay = WitnessedReplay(self)
        self.turns = WitnessedTurns(self)
        self.rng = np.random.default_rng(seed)  # the twin of the loop's own generator
        self.steps = 0
        self.last = None  # the transition the last step produced
        self.turns_taken = []  # this step's turns after the loop's own: "learn", "sync"
        self.episode_returns, self.episode_ends = [], []
        self.episode_return = 0.0
        self.resets = 0
        self.reset_due = True

    def refuse_loop(self, what):
        """Refuse a run that is not the course's loop as written."""
        self.ledger.refuse(f"the course's DQN loop {what}", "the course's loop")

    def end_step(self):
        """The turns of the step that just ended: all of them taken, each within its
        allowance."""
        if self.steps >= self.settings.learning_starts and self.turns_taken != ["learn", "sync"]:
            self.refuse_loop(f"took the turns {self.turns_taken} at step {self.steps}, not "
                             "dqn_step's and then sync_target's")
        self.ledger.check()
        self.ledger.end()

    def finished(self):
        """After the loop returned: the whole run happened; raises its refusal if any."""
        if self.steps:
            self.end_step()
        if self.steps != self.settings.steps:
            self.refuse_loop(f"made {self.steps} environment steps, not "
                             f"{self.settings.steps}")
        self.ledger.check()

    def returns_by_step(self, steps):
        """As :meth:`course.dqn.DQNRun.returns_by_step`, from the episodes the grader's
        CartPole played."""
        curve = np.zeros(steps)
        for end, value in zip(self.episode_ends, self.episode_returns):
            curve[end - 1:] = value
        return curve


class WitnessedCartPole:
    """The grader's CartPole: steps only with the action the loop's rule picks."""

    def __init__(self, run):
        self.run = run
        self.env = make_cartpole(run.seed)
        self.observation = None

    def reset(self, seed=None, options=None):
        run = self.run
        first = run.resets == 0
        if not run.reset_due or options is not None or seed != (run.seed if first else None):
            run.refuse_loop(f"reset the environment with seed={seed!r}, options={options!r} "
                            f"after step {run.steps}")
        run.resets += 1
        run.reset_due = False
        self.observation, info = self.env.reset(seed=seed)
        return self.observation, info

    def step(self, action):
        run = self.run
        if run.steps:
            run.end_step()
        if run.reset_due or run.steps >= run.settings.steps:
            run.refuse_loop(f"stepped the environment at step {run.steps + 1} "
                            + ("before resetting it" if run.reset_due else
                               f"of a {run.settings.steps}-step run"))
        run.steps += 1
        run.turns_taken = []
        run.ledger.begin(LOOP_STEP)
        if run.rng.random() < epsilon_at(run.steps, run.settings):
            chosen = int(run.rng.integers(2))
        else:
            chosen = int(np.argmax(run.online.predict(self.observation[None])[0]))
        if not (type(action) is int and action == chosen):
            run.refuse_loop(f"played action {action!r} at step {run.steps}, where its "
                            f"epsilon-greedy rule picks {chosen}")
        observation, reward, terminated, truncated, info = self.env.step(action)
        run.last = (self.observation, action, reward, observation, terminated)
        self.observation = observation
        run.episode_return += reward
        if terminated or truncated:
            run.episode_returns.append(run.episode_return)
            run.episode_ends.append(run.steps)
            run.episode_return = 0.0
            run.reset_due = True
        return observation, reward, terminated, truncated, info


class WitnessedReplay(UniformReplay):
    """The grader's buffer: stores each step's own transition, once, and samples at most
    once per dqn_step, with the loop's batch size."""

    def __init__(self, run):
        super().__init__(run.settings.capacity, run.seed)
        self.run = run

    def add(self, observation, action, reward, next_observation, terminated):
        run = self.run
        run.ledger.charge("replay.add", f"{run.ledger.who} added a transition to the buffer")
        last = run.last
        if last is None or not (
                np.array_equal(observation, last[0]) and action == last[1]
                and reward == last[2] and np.array_equal(next_observation, last[3])
                and terminated == last[4]):
            run.refuse_loop(f"added a transition at step {run.steps} that is not the step's "
                            "own")
        super().add(observation, action, reward, next_observation, terminated)

    def sample(self, batch_size, beta=None):
        witnessed_sample(self.run.ledger, batch_size, self.run.settings.batch_size)
        return super().sample(batch_size)


class WitnessedTurns:
    """The marks of whose turn it is: dqn_step's, then sync_target's, once each per step
    from ``learning_starts`` on, after the step's transition is stored."""

    def __init__(self, run):
        self.run = run

    def begin(self, name):
        run, ledger = self.run, self.run.ledger
        wanted = ["learn", "sync"][len(run.turns_taken):][:1]
        if run.steps < run.settings.learning_starts or [name] != wanted:
            run.refuse_loop(f"began a {name!r} turn at step {run.steps} after "
                            f"{run.turns_taken or 'none'}")
        ledger.check()
        ledger.end()
        run.turns_taken.append(name)
        ledger.begin(DQN_STEP if name == "learn" else SYNC_TARGET)
