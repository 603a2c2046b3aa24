"""Train the grader's reference Q-learning agent on the grader's Taxi, with code under test.

Two ways, one harness (:func:`train_on_taxi`):

- **a loop under test** (lesson 01): the student's ``play_and_train`` plays each episode
  with the environment and agent lent to it (the environment mirrored, the agent served:
  it is lesson 01's answer);
- **a buffer under test** (lessons 02 and 05, :func:`train_buffer_on_taxi`): the course's
  own loop, run here, plays each episode with the student's buffer as its replay; the
  environment and agent are plain objects of the grader, and every ``add`` and
  ``sample`` is a call to the student's buffer, foreseen a few hundred steps at a time
  where the buffer lives in the student's process (:mod:`checks.foreseen_samples`).

Either way the environment and agent are witnesses (:mod:`checks.witness`) held to the
lesson's allowance per step, the grader decays epsilon itself between episodes, and the
Q-tables judged are read from the grader's agent.
"""

from checks.expected import reference_code
from checks.foreseen_taxi_steps import taxi_steps_ahead
from checks.foreseen_samples import ForeseenSamples, foreseen_or_redone
from checks.framework import ProbeError, call_student
from checks.lending import mirrored
from checks.witness import ONLINE_STEPS, BufferUnderTest, WitnessedAgent, WitnessedEnv, taxi_steps


def taxi_pair(seed, alpha, epsilon, discount, allowance, lent=False, agent_class=None):
    """(environment, agent) for one run: Taxi with ``seed`` and a fresh reference agent,
    as witnesses held to ``allowance``. With ``lent`` the environment is declared for
    lending by mirroring (the student's process steps a copy, the grader replays it).
    ``agent_class`` replaces the reference agent where lesson 01's loop runs in the
    student's own notebook (there is nothing to protect there, and lesson 01's
    reference is not shipped with it)."""
    from course.legal_actions import AllActions
    from course.taxi import N_ACTIONS, make_taxi
    # the reference agent served to a loop in the student's process: answers sent ahead
    # save the waits
    foresee = taxi_steps_ahead if lent and agent_class is None else None
    if agent_class is None:
        from qlearning import QLearningAgent as agent_class

    env = WitnessedEnv(make_taxi(seed), allowance)
    if lent:
        mirrored(make_taxi, seed, logged=("reset", "step"), calls=(), original=env)
    agent = agent_class(alpha=alpha, epsilon=epsilon, discount=discount,
                        get_legal_actions=AllActions(N_ACTIONS), seed=seed)
    return env, WitnessedAgent(agent, env, foresee)


def train_on_taxi(play_episode, seed, checkpoints, alpha, epsilon, discount, epsilon_decay,
                  allowance=ONLINE_STEPS, lent=False, agent_class=None):
    """Q-tables of the reference agent after each number of episodes in ``checkpoints``,
    each episode played by ``play_episode(env, agent)``. After every episode epsilon is
    multiplied by ``epsilon_decay`` (by the grader: the loop may not set it). Raises the
    run's first refusal at the end of the episode that made it."""
    from course.qtables import qtable_from_agent
    from course.taxi import N_ACTIONS, N_STATES

    env, witness = taxi_pair(seed, alpha, epsilon, discount, allowance, lent, agent_class)
    agent = witness.agent
    snapshots, done = [], 0
    for checkpoint in checkpoints:
        for _ in range(checkpoint - done):
            env.begin_episode()
            play_episode(env, witness)
            env.end_episode()
            agent.epsilon = max(0.0, agent.epsilon * epsilon_decay)
        done = checkpoint
        snapshots.append(qtable_from_agent(agent, N_STATES, N_ACTIONS))
    return snapshots


def course_loop(lesson, stand_in, name):
    """(loop, whose) for a learning check of ``lesson``'s buffer: the course's own loop
    (the judge's reference: always, in the grader), or, in a notebook of the student
    edition, which does not ship it, the notebook's own ``stand_in`` (its ``name``)."""
    loop = reference_code(lesson, "training_loop")
    if loop is not None:
        return loop, "course"
    if stand_in is None:
        raise ProbeError(f"this test drives your buffer with the course's training loop, "
                         f"which this edition of the course does not include, or else with "
                         f"your {name}, which is not defined yet.")
    return stand_in, "yours"


def train_buffer_on_taxi(new_buffer, loop, seed, checkpoints, batch_size, online_updates,
                         alpha, epsilon, discount, epsilon_decay, called="the course's loop",
                         near=None):
    """Q-tables of the reference agent after each number of episodes in ``checkpoints``,
    trained on Taxi by ``loop(env, agent, replay, batch_size)`` with the buffer under test,
    ``new_buffer()``, as ``replay``. Each step may update the agent ``online_updates``
    times on its own transition and once on each row of one ``sample(batch_size)``.
    ``called`` names the loop in what the feedback says when it raises.

    Where the buffer is made in a student's process (``near``: an object of it, such as
    the buffer's class), its samples are foreseen (:mod:`checks.foreseen_samples`); a run
    that does not go as foreseen is redone from its start the ordinary way, with a new
    buffer, and with the student's global generators and the contracts' counts as they
    were when it began."""
    settings = dict(alpha=alpha, epsilon=epsilon, discount=discount,
                    epsilon_decay=epsilon_decay, allowance=taxi_steps(online_updates, batch_size))

    def train(foreseen):
        buffer, replay = new_buffer(), None

        def play_episode(env, agent):
            nonlocal replay
            if not foreseen:  # as it always was: a round trip per step
                replay = BufferUnderTest(buffer, env, batch_size)
            elif replay is None:  # one for the whole run: its foresight spans episodes
                replay = ForeseenSamples(buffer, env, batch_size)
            call_student(called, loop, env, agent, replay, batch_size)

        snapshots = train_on_taxi(play_episode, seed, checkpoints, **settings)
        if foreseen and replay is not None:
            replay.finish()
        return snapshots

    return foreseen_or_redone(near, train)
