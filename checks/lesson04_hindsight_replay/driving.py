"""What every module of lesson 04's checks uses: the lesson's name and strategies, the
synthetic episodes a probe stores in the student's HindsightReplayBuffer, and how it reads
a sampled batch back as the episodes and steps its rows came from."""

import numpy as np

from checks.framework import ProbeError, call_student
from checks.lending import mirrored


LESSON = "04_hindsight_replay"
STRATEGIES = ("future", "final", "episode")

# Synthetic episodes whose every vector says where it came from: the achieved goal at
# step t of episode e encodes e * STEPS_PER_CODE + t, the observation the same number
# plus OBSERVATION_OFFSET (so goals taken from observations show), and the desired goal
# DESIRED_OFFSET + e, which no step ever achieves.
CODE_BITS = 16
STEPS_PER_CODE = 64
OBSERVATION_OFFSET = 1 << 15
DESIRED_OFFSET = 30000


def _bits(numbers):
    from course.bit_flipping import int_to_bits

    return int_to_bits(numbers, CODE_BITS)


def _numbers_of(bits):
    from course.bit_flipping import bits_to_int

    return bits_to_int(bits)


def action_of(episode, step, n_actions=5):
    return (3 * episode + step) % n_actions


def synthetic_episode(episode, length):
    """(observations, achieved_goals, desired_goal, actions) of synthetic episode
    ``episode`` with ``length`` steps."""
    steps = np.arange(length + 1)
    achieved = _bits(episode * STEPS_PER_CODE + steps)
    observations = _bits(OBSERVATION_OFFSET + episode * STEPS_PER_CODE + steps)
    actions = np.array([action_of(episode, t) for t in range(length)], dtype=np.int64)
    return observations, achieved, _bits(DESIRED_OFFSET + episode), actions


def goal_env(**rewards):
    """A goal environment whose rewards the buffer recomputes: the bit-flipping rules
    (reward 0 and terminated where the goals are equal, else -1, or the ``rewards`` given:
    ``success_reward``, ``step_reward``) on 16-bit codes. The student's buffer gets a copy
    of it (nothing it does to the copy reaches the grader), as a loop leaves it after an
    episode cut by its time limit (its compute_truncated says True)."""
    from course.bit_flipping import at_its_time_limit

    return mirrored(at_its_time_limit, CODE_BITS, **rewards)


class GoalRoles:
    """The grader's own goal environment behind a lent one whose ``compute_reward`` and
    ``compute_terminated`` calls are replayed on it: it answers as the environment does
    and notes each call whose *achieved* goal (the first argument) holds a vector no step
    achieves (a desired goal, or an observation), i.e. the goals passed in the wrong
    order."""

    def __init__(self, env):
        self.env = env
        self.misplaced = []  # [method, the number of the first vector out of place]
        self.calls = {"compute_reward": 0, "compute_terminated": 0}  # made through it
        self.other_infos = []  # [method, what it was given as info] when not the {} asked

    def __getattr__(self, name):
        return getattr(self.env, name)

    def compute_reward(self, achieved_goal, desired_goal, info):
        self._note("compute_reward", achieved_goal, info)
        return self.env.compute_reward(achieved_goal, desired_goal, info)

    def compute_terminated(self, achieved_goal, desired_goal, info):
        self._note("compute_terminated", achieved_goal, info)
        return self.env.compute_terminated(achieved_goal, desired_goal, info)

    def _note(self, method, achieved_goal, info):
        self.calls[method] += 1
        # the lesson's call passes {}, one empty dict for the whole batch (a list of dicts
        # per transition is another library's convention)
        if not (type(info) is dict and not info) and len(self.other_infos) < 1:
            self.other_infos.append([method, repr(info)[:60]])
        vectors = np.asarray(achieved_goal)
        if vectors.shape[-1:] != (CODE_BITS,):
            return  # not goal vectors at all: what comes back is judged, not the call
        codes = np.asarray(_numbers_of(vectors.astype(np.int64))).reshape(-1)
        if np.any(codes >= DESIRED_OFFSET):
            self.misplaced.append([method, int(codes[codes >= DESIRED_OFFSET][0])])


def role_checked_goal_env():
    """A goal environment lent as :func:`goal_env` is, whose reward calls the grader
    replays on a :class:`GoalRoles` (``.misplaced`` says what they got wrong)."""
    from course.bit_flipping import at_its_time_limit

    return mirrored(at_its_time_limit, CODE_BITS,
                    logged=("compute_reward", "compute_terminated"),
                    original=GoalRoles(at_its_time_limit(CODE_BITS)))


def seeded_goal_env(seed):
    """A goal environment whose own generator, ``env.np_random`` (its resets draw from it),
    is seeded with ``seed``: the bit-flipping rules on 16-bit codes, as :func:`goal_env`'s,
    lent the same way. Twin buffers of one seed each get one of another seed: the buffer's
    draws are its own generator's, so they must sample alike all the same."""
    from course.bit_flipping import make_bit_flipping

    return mirrored(make_bit_flipping, CODE_BITS, seed)


def _new_buffer(HindsightReplayBuffer, max_episodes, max_steps, strategy, k, seed, env=None,
                **rewards):
    """The student's HindsightReplayBuffer beside ``env`` (a :func:`goal_env` when None)."""
    return call_student(f"HindsightReplayBuffer(env, {max_episodes}, {max_steps}, "
                        f"strategy={strategy!r}, k={k})", HindsightReplayBuffer,
                        goal_env(**rewards) if env is None else env, max_episodes, max_steps,
                        strategy=strategy, k=k, seed=seed)


def _store(buffer, episode, length):
    observations, achieved, desired, actions = synthetic_episode(episode, length)
    if episode % 2:  # every other episode as the lesson's loop collects one: in lists
        observations, achieved = list(observations), list(achieved)
        actions = [int(action) for action in actions]
    call_student("store_episode(observations, achieved_goals, desired_goal, actions)",
                 buffer.store_episode, observations, achieved, desired, actions)


def _decoded_sample(buffer, batch_size):
    """One batch, each row decoded to (episode, step, action, reward, next episode, next
    step, terminated, goal code)."""
    return _decoded(call_student(f"sample({batch_size})", buffer.sample, batch_size),
                    batch_size)


class SampleProtocolError(ProbeError):
    """sample returned something other than six arrays of one row per transition."""


def _decoded(batch, batch_size):
    """The rows of one batch ``sample(batch_size)`` returned, decoded (see _decoded_sample)."""
    try:
        fields = [np.asarray(field) for field in batch]
    except TypeError:
        raise SampleProtocolError(f"sample({batch_size}) returned {type(batch).__name__}, "
                                  "not six arrays (obs, actions, rewards, next_obs, "
                                  "terminated, goals).") from None
    if len(fields) != 6:
        raise SampleProtocolError(f"sample({batch_size}) returned {len(fields)} items; "
                                  "expected six arrays (obs, actions, rewards, next_obs, "
                                  "terminated, goals).")
    obs, actions, rewards, next_obs, terminated, goals = fields
    try:
        here = _numbers_of(obs.reshape(batch_size, CODE_BITS)) - OBSERVATION_OFFSET
        there = _numbers_of(next_obs.reshape(batch_size, CODE_BITS)) - OBSERVATION_OFFSET
        goal_codes = _numbers_of(goals.reshape(batch_size, CODE_BITS))
        columns = [here // STEPS_PER_CODE, here % STEPS_PER_CODE,
                   actions.reshape(batch_size).astype(np.int64),
                   rewards.reshape(batch_size).astype(np.float64),
                   there // STEPS_PER_CODE, there % STEPS_PER_CODE,
                   terminated.reshape(batch_size).astype(bool), goal_codes]
    except (ValueError, TypeError) as error:
        raise SampleProtocolError(f"sample({batch_size}) returned arrays of the wrong "
                                  f"shape: {error}; expected (obs, actions, rewards, "
                                  "next_obs, terminated, goals), one row per "
                                  "transition.") from None
    return [list(row) for row in zip(*(column.tolist() for column in columns))]


def describe_goal(code):
    if code >= OBSERVATION_OFFSET:
        code -= OBSERVATION_OFFSET
        return f"the observation at step {code % STEPS_PER_CODE} of episode " \
               f"{code // STEPS_PER_CODE}"
    if code >= DESIRED_OFFSET:
        return f"the desired goal of episode {code - DESIRED_OFFSET}"
    return f"the goal achieved at step {code % STEPS_PER_CODE} of episode " \
           f"{code // STEPS_PER_CODE}"
