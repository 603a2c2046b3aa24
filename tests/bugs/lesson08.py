"""Buggy answers to lesson 08 (n-step returns and their replay buffer, frame stacks stored
once, generalised advantage estimation and the rollout buffer), each the mistake its name
says.

Most are the solution cell with the bug edited in (``_edit``); a bug that is another way of
writing the answer (a row-by-row ``n_step_return``, a vectorised one, a rollout buffer of
one list per field) is written out in full, as a student who writes it that way would.
"""

from . import Bug, edited_text, edits_of

LESSON = "08_nstep_replay"

_edit = edits_of(LESSON)

# --- n_step_return ----------------------------------------------------------------------

EXPONENT_OFF_BY_ONE = _edit("n_step_return", (
    "returns[alive] += discount ** k * rewards[alive, k]",
    "returns[alive] += discount ** (k + 1) * rewards[alive, k]  # step k is k + 1 away"))

SUMS_PAST_THE_END = _edit("n_step_return", (
    "returns[alive] += discount ** k * rewards[alive, k]",
    "returns += discount ** k * rewards[:, k]  # every reward of the window"))

TRUNCATION_DOES_NOT_END = _edit("n_step_return", (
    "ended = terminated | np.asarray(truncated, dtype=bool)",
    "ended = terminated  # an episode ends when it terminates"))

TRUNCATION_BOOTSTRAPS_ZERO = _edit("n_step_return", (
    "discounts[terminated[np.arange(rows), steps - 1]] = 0.0",
    "discounts[ended[np.arange(rows), steps - 1]] = 0.0  # the episode is over"))

TRUNCATION_WINS = _edit("n_step_return", (
    "discounts[terminated[np.arange(rows), steps - 1]] = 0.0",
    "cut = terminated & ~np.asarray(truncated, dtype=bool)  # a time limit still bootstraps\n"
    "    discounts[cut[np.arange(rows), steps - 1]] = 0.0"))

BOOTSTRAP_EXPONENT_OFF_BY_ONE = _edit("n_step_return", (
    "discounts = np.float64(discount) ** steps",
    "discounts = np.float64(discount) ** (steps - 1)  # the exponent of the last reward"))

ZERO_DISCOUNT_AS_MISSING = _edit("n_step_return", (
    "    rewards = np.asarray(rewards, dtype=np.float64)\n",
    "    discount = discount or 0.99  # the usual discount when none is given\n"
    "    rewards = np.asarray(rewards, dtype=np.float64)\n"))

# a row at a time, as the lesson's sentence reads
ROW_BY_ROW = """\
#| export
from collections import deque

import numpy as np


def n_step_return(rewards, terminated, truncated, discount):
    \"\"\"The n-step return of the first step of each row, and how to bootstrap it.\"\"\"
    rewards = np.asarray(rewards, dtype=np.float64)
    rows, n = rewards.shape
    returns, discounts = np.zeros(rows), np.zeros(rows)
    steps = np.zeros(rows, dtype=np.int64)
    for i in range(rows):
        m = n
        for k in range(n):
            returns[i] += discount ** k * rewards[i, k]
            if terminated[i][k] or truncated[i][k]:
                m = k + 1
                break
        steps[i] = m
        discounts[i] = 0.0 if terminated[i][m - 1] else discount ** m
    return returns, discounts, steps
"""

STEPS_AS_FLOATS = edited_text("n_step_return row by row", ROW_BY_ROW, (
    "    steps = np.zeros(rows, dtype=np.int64)\n", ""), (
    "returns, discounts = np.zeros(rows), np.zeros(rows)",
    "returns, discounts, steps = np.zeros(rows), np.zeros(rows), np.zeros(rows)"))

FLAGS_TESTED_WITH_IS_TRUE = edited_text("n_step_return row by row", ROW_BY_ROW, (
    "if terminated[i][k] or truncated[i][k]:",
    "if terminated[i][k] is True or truncated[i][k] is True:"))

# vectorised: the rewards after the first end masked out, then one dot product
MASKED = """\
#| export
from collections import deque

import numpy as np


def n_step_return(rewards, terminated, truncated, discount):
    \"\"\"The n-step return of the first step of each row, and how to bootstrap it.\"\"\"
    rewards = np.array(rewards, dtype=np.float64)
    terminated = np.asarray(terminated, dtype=bool)
    ended = terminated | np.asarray(truncated, dtype=bool)
    rows, n = rewards.shape
    counted = np.cumsum(ended, axis=1) - ended == 0  # the steps up to the first end
    rewards[~counted] = 0.0  # the next episode's rewards never count
    returns = rewards @ (discount ** np.arange(n))
    steps = counted.sum(axis=1)
    discounts = discount ** steps * ~terminated[np.arange(rows), steps - 1]
    return returns, discounts, steps
"""

MASKS_THE_CALLERS_REWARDS = edited_text("n_step_return masked", MASKED, (
    "rewards = np.array(rewards, dtype=np.float64)",
    "rewards = np.asarray(rewards, dtype=np.float64)"))

# --- NStepReplayBuffer: records -----------------------------------------------------------

NO_FLUSH_AT_EPISODE_END = _edit("NStepReplayBuffer", (
    """\
        if terminated or truncated:
            while self.pending:  # the episode is over: every pending return is known
                self._complete_oldest()
        elif len(self.pending) == self.n:""", """\
        if len(self.pending) == self.n:"""))

FLUSH_ONLY_ON_TERMINATED = _edit("NStepReplayBuffer", (
    "        if terminated or truncated:\n", "        if terminated:\n"))

FLUSH_ONLY_THE_OLDEST = _edit("NStepReplayBuffer", (
    "            while self.pending:  # the episode is over: every pending return is known",
    "            if self.pending:  # the episode is over: its oldest return is known"))

FLUSH_NEWEST_FIRST = _edit("NStepReplayBuffer", (
    """\
        if terminated or truncated:
            while self.pending:  # the episode is over: every pending return is known
                self._complete_oldest()""", """\
        if terminated or truncated:  # the episode is over: back from its last step, as gae
            waiting = list(self.pending)
            for start in reversed(range(len(waiting))):
                self.pending = deque(waiting[start:])
                self._complete_oldest()
            self.pending.clear()"""))

FLUSH_TESTED_WITH_IS_TRUE = _edit("NStepReplayBuffer", (
    "        if terminated or truncated:\n",
    "        if terminated is True or truncated is True:\n"))

KEEPS_REFERENCES = _edit("NStepReplayBuffer", (
    "self.pending.append((np.array(observation), int(action), float(reward),\n"
    "                             np.array(next_observation), bool(terminated), bool(truncated)))",
    "self.pending.append((observation, int(action), float(reward),\n"
    "                             next_observation, bool(terminated), bool(truncated)))"))

LEN_COUNTS_PENDING = _edit("NStepReplayBuffer", (
    "        return self.size\n", "        return self.size + len(self.pending)\n"))

LEN_IS_NEXT_SLOT = _edit("NStepReplayBuffer", (
    "        return self.size\n", "        return self.next_slot  # records written so far\n"))

EVICTS_THE_NEWEST = _edit("NStepReplayBuffer", (
    "self.next_slot = (self.next_slot + 1) % self.capacity",
    "self.next_slot = min(self.next_slot + 1, self.capacity - 1)  # the last slot, once full"))

BOOTSTRAPS_AFTER_ONE_STEP = _edit("NStepReplayBuffer", (
    "window[steps[0] - 1][3]", "window[0][3]"))

DISCOUNT_TO_THE_N = _edit("NStepReplayBuffer", (
    """\
        _, _, rewards, _, terminated, truncated = zip(*window)
        returns, discounts, steps = n_step_return(
            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)
        observation, action = window[0][:2]
        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])""",
    """\
        value = sum(self.discount ** k * step[2] for k, step in enumerate(window))
        discount = 0.0 if window[-1][4] else self.discount ** self.n  # n steps ahead
        observation, action = window[0][:2]
        self._store(observation, action, value, discount, window[-1][3])"""))

# --- NStepReplayBuffer: sampling and arguments ---------------------------------------------

SAMPLES_FROM_NP_RANDOM = _edit("NStepReplayBuffer", (
    "slots = self.rng.integers(0, self.size, size=int(batch_size))",
    "slots = np.random.randint(0, self.size, size=int(batch_size))"))

SAMPLES_THE_CAPACITY = _edit("NStepReplayBuffer", (
    "slots = self.rng.integers(0, self.size, size=int(batch_size))",
    "slots = self.rng.integers(0, self.capacity, size=int(batch_size))"))

WITHOUT_REPLACEMENT_WHEN_POSSIBLE = _edit("NStepReplayBuffer", (
    "slots = self.rng.integers(0, self.size, size=int(batch_size))",
    "slots = self.rng.choice(self.size, size=int(batch_size),\n"
    "                                replace=int(batch_size) > self.size)  # no repeats if it can"))

SAMPLES_BELOW_THE_NEWEST = _edit("NStepReplayBuffer", (
    "slots = self.rng.integers(0, self.size, size=int(batch_size))",
    "slots = self.rng.integers(0, self.size - 1, size=int(batch_size))  # high is inclusive"))

SAMPLE_SIZE_UNCHECKED = _edit("NStepReplayBuffer", (
    """\
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive whole number, got {batch_size}")
""", ""))

EMPTY_SAMPLE_UNCHECKED = _edit("NStepReplayBuffer", (
    """\
        if self.size == 0:
            raise ValueError("cannot sample from a buffer that holds no complete record")
""", ""))

SAMPLE_RETURNS_A_LIST = _edit("NStepReplayBuffer", (
    "return tuple(array[slots] for array in self.records)",
    "return [array[slots] for array in self.records]"))

SAMPLE_SIZE_MUST_BE_INT = _edit("NStepReplayBuffer", (
    "if int(batch_size) != batch_size or batch_size < 1:",
    "if not isinstance(batch_size, int) or batch_size < 1:"))

DISCOUNT_UNCHECKED = _edit("NStepReplayBuffer", (
    """\
        if not 0.0 <= discount <= 1.0:
            raise ValueError(f"discount must be in [0, 1], got {discount}")
""", ""))

ZERO_CAPACITY_ALLOWED = _edit("NStepReplayBuffer", (
    "capacity < 1", "capacity < 0"))

CAPACITY_MUST_BE_INT = _edit("NStepReplayBuffer", (
    "if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:",
    "if not isinstance(capacity, int) or capacity < 1 or not isinstance(n, int) or n < 1:"))

# --- FrameStackReplay -----------------------------------------------------------------------

STACK_CROSSES_EPISODES = _edit("FrameStackReplay", (
    "numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)",
    "numbers = np.arange(frame - self.stack + 1, frame + 1)"))

STACK_PADDED_WITH_ZEROS = _edit("FrameStackReplay", (
    """\
        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)
        return self.frames[numbers % self.capacity]""", """\
        numbers = np.arange(frame - self.stack + 1, frame + 1)
        stack = self.frames[numbers % self.capacity]
        stack[numbers < first] = 0  # blank frames before the episode's start
        return stack"""))

STACK_CLAMPED_AT_CURRENT_EPISODE = _edit("FrameStackReplay", (
    "first = self.episode_start[frame % self.capacity]",
    "first = self.current_start  # where the episode starts"))

STACK_NEWEST_FIRST = _edit("FrameStackReplay", (
    "np.arange(frame - self.stack + 1, frame + 1)", "np.arange(frame, frame - self.stack, -1)"))

STACK_ENDS_BEFORE_ITS_FRAME = _edit("FrameStackReplay", (
    "np.arange(frame - self.stack + 1, frame + 1)", "np.arange(frame - self.stack, frame)"))

SAMPLES_OVERWRITTEN_FRAMES = _edit("FrameStackReplay", (
    "return numbers[self.has_transition[slots] & (earliest >= oldest)]",
    "return numbers[self.has_transition[slots]]"))

SAMPLES_ACROSS_EPISODES = _edit("FrameStackReplay", (
    "return numbers[self.has_transition[slots] & (earliest >= oldest)]",
    "return numbers[earliest >= oldest]  # every frame but the newest has a successor"))

SAMPLES_FROM_THE_FIRST_FRAME = _edit("FrameStackReplay", (
    "oldest = self.added - min(self.added, self.capacity)", "oldest = 0  # the first frame"))

EXCLUDES_CLAMPED_STACKS = _edit("FrameStackReplay", (
    "return numbers[self.has_transition[slots] & (earliest >= oldest)]",
    "return numbers[self.has_transition[slots] & (numbers - self.stack + 1 >= oldest)]"))

FRAMES_FROM_NP_RANDOM = _edit("FrameStackReplay", (
    "chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]",
    "chosen = numbers[np.random.randint(0, len(numbers), size=int(batch_size))]"))

STORES_WHOLE_STACKS = _edit("FrameStackReplay", (
    """\
        if self.frames is None:
            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)
        slot = self.added % self.capacity
        self.frames[slot] = frame""", """\
        if self.frames is None:  # each slot holds the stack that ends with its frame
            self.frames = np.zeros((self.capacity, self.stack, *frame.shape), frame.dtype)
        slot = self.added % self.capacity
        if self.current_start == self.added:
            self.frames[slot] = frame  # the episode's first frame, repeated
        else:
            self.frames[slot] = np.concatenate([self.frames[slot - 1][1:], frame[None]])"""), (
    """\
        first = self.episode_start[frame % self.capacity]
        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)
        return self.frames[numbers % self.capacity]""", """\
        return self.frames[frame % self.capacity].copy()"""))

NBYTES_A_NUMPY_INT = _edit("FrameStackReplay", (
    "return sum(array.nbytes for array in arrays) + (0 if self.frames is None",
    "return np.sum([array.nbytes for array in arrays]) + (0 if self.frames is None"))

STORES_NEXT_FRAMES_TOO = _edit("FrameStackReplay", (
    """\
        self.terminated[slot], self.has_transition[slot] = terminated, True
        self._put(next_frame)""", """\
        self.terminated[slot], self.has_transition[slot] = terminated, True
        if self.frames is not None and not hasattr(self, "next_frames"):
            self.next_frames = np.zeros_like(self.frames)  # s' beside s, as lesson 02 did
        self.next_frames[slot] = next_frame
        self._put(next_frame)"""), (
    "        arrays = [self.actions, self.rewards, self.terminated, self.has_transition,\n"
    "                  self.episode_start]",
    "        arrays = [self.actions, self.rewards, self.terminated, self.has_transition,\n"
    "                  self.episode_start, *([self.next_frames] if hasattr(self, 'next_frames')"
    " else [])]"))

STACK_EQUAL_TO_CAPACITY = _edit("FrameStackReplay", (
    "capacity <= stack:", "capacity < stack:"))

ADD_BEFORE_START_UNCHECKED = _edit("FrameStackReplay", (
    """\
        if self.current_start is None:
            raise ValueError("start_episode(frame) comes before the first add")
""", ""))

FRAME_SIZES_MUST_BE_INT = _edit("FrameStackReplay", (
    "if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack:",
    "if not isinstance(capacity, int) or not isinstance(stack, int) or stack < 1 \\\n"
    "                or capacity <= stack:"))

FRAMES_WITHOUT_REPLACEMENT = _edit("FrameStackReplay", (
    "chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]",
    "chosen = self.rng.choice(numbers, size=int(batch_size),\n"
    "                                replace=int(batch_size) > len(numbers))"))

# --- gae ------------------------------------------------------------------------------------

GAE_NO_RESTART = _edit("gae", (
    "np.where(ended[t], 0.0, following)", "following"))

GAE_RESTARTS_ONLY_AT_TERMINATED = _edit("gae", (
    "np.where(ended[t], 0.0, following)", "np.where(terminated[t], 0.0, following)"))

GAE_TRUNCATION_BOOTSTRAPS_ZERO = _edit("gae", (
    "np.where(terminated[t], 0.0, next_values[t])", "np.where(ended[t], 0.0, next_values[t])"))

GAE_WITHOUT_DISCOUNT_IN_TRACE = _edit("gae", (
    "following = delta + discount * lam * np.where", "following = delta + lam * np.where"))

GAE_RETURNS_ONE_STEP_TARGETS = _edit("gae", (
    "return advantages, advantages + values",
    "return advantages, rewards + discount * np.where(terminated, 0.0, next_values)"))

GAE_FLATTENS = _edit("gae", (
    """\
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    next_values = np.asarray(next_values, dtype=np.float64)
    terminated = np.asarray(terminated, dtype=bool)
    ended = terminated | np.asarray(truncated, dtype=bool)""", """\
    rewards = np.asarray(rewards, dtype=np.float64).ravel()  # one value per step
    values = np.asarray(values, dtype=np.float64).ravel()
    next_values = np.asarray(next_values, dtype=np.float64).ravel()
    terminated = np.asarray(terminated, dtype=bool).ravel()
    ended = terminated | np.asarray(truncated, dtype=bool).ravel()"""))

GAE_SCALAR_TRACE = _edit("gae", (
    "    following = np.zeros(values.shape[1:])\n", "    following = 0.0\n"), (
    "following = delta + discount * lam * np.where(ended[t], 0.0, following)",
    "following = delta + discount * lam * (0.0 if ended[t] else following)"))

GAE_DELTAS_IN_THE_REWARDS = _edit("gae", (
    "    advantages = np.zeros(values.shape)\n",
    "    rewards += discount * np.where(terminated, 0.0, next_values) - values  # the deltas\n"
    "    advantages = np.zeros(values.shape)\n"), (
    "        delta = rewards[t] + discount * np.where(terminated[t], 0.0, next_values[t])"
    " - values[t]\n",
    "        delta = rewards[t]\n"))

# --- RolloutBuffer ---------------------------------------------------------------------------

ADD_PAST_FULL = _edit("RolloutBuffer", (
    """\
        if len(self.steps) == self.size:
            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")
""", ""))

GET_BEFORE_FULL = _edit("RolloutBuffer", (
    """\
        if len(self.steps) < self.size:
            raise ValueError(f"the rollout holds {len(self.steps)} of {self.size} steps")
""", ""))

GET_ONLY_REFUSES_EMPTY = _edit("RolloutBuffer", (
    """\
        if len(self.steps) < self.size:
            raise ValueError(f"the rollout holds {len(self.steps)} of {self.size} steps")""",
    """\
        if not self.steps:
            raise ValueError("the rollout is empty")"""))

GET_DOES_NOT_CLEAR = _edit("RolloutBuffer", (
    "        self.steps = []\n        return", "        return"))

ROLLOUT_LEN_IS_SIZE = _edit("RolloutBuffer", (
    "        return len(self.steps)\n", "        return self.size\n"))

NEXT_VALUES_FROM_THE_NEXT_STEP = _edit("RolloutBuffer", (
    "        advantages, returns = gae(",
    "        next_values = np.append(values[1:], next_values[-1])  # V(s'_t) is V(s_t+1)\n"
    "        advantages, returns = gae("))

# one list per field, handed out as they are
ROLLOUT_OF_LISTS = """\
#| export
class RolloutBuffer:
    \"\"\"An on-policy rollout of ``size`` steps, one list per field.\"\"\"

    def __init__(self, size, discount, lam):
        self.size, self.discount, self.lam = int(size), float(discount), float(lam)
        self.clear()

    def clear(self):
        self.observations, self.actions, self.rewards, self.values = [], [], [], []
        self.next_values, self.terminated, self.truncated = [], [], []

    def __len__(self):
        return len(self.rewards)

    def add(self, observation, action, reward, value, next_value, terminated, truncated):
        if len(self) == self.size:
            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")
        self.observations.append(np.array(observation))
        self.actions.append(int(action))
        self.rewards.append(float(reward))
        self.values.append(float(value))
        self.next_values.append(float(next_value))
        self.terminated.append(bool(terminated))
        self.truncated.append(bool(truncated))

    def get(self):
        if len(self) < self.size:
            raise ValueError(f"the rollout holds {len(self)} of {self.size} steps")
        advantages, returns = gae(np.array(self.rewards), np.array(self.values),
                                  np.array(self.next_values), np.array(self.terminated),
                                  np.array(self.truncated), self.discount, self.lam)
        observations, actions = self.observations, self.actions
        self.clear()
        return observations, actions, advantages, returns
"""

# preallocated arrays, as Stable-Baselines3's; get hands out whatever the arrays hold
ROLLOUT_PREALLOCATED = """\
#| export
class RolloutBuffer:
    \"\"\"An on-policy rollout of ``size`` steps in preallocated arrays.\"\"\"

    def __init__(self, size, discount, lam):
        self.size, self.discount, self.lam = int(size), float(discount), float(lam)
        self.observations = None  # made at the first add, shaped like its observation
        self.actions = np.zeros(self.size, dtype=np.int64)
        self.rewards, self.values, self.next_values = (np.zeros(self.size) for _ in range(3))
        self.terminated = np.zeros(self.size, dtype=bool)
        self.truncated = np.zeros(self.size, dtype=bool)
        self.position = 0

    def __len__(self):
        return self.position

    def add(self, observation, action, reward, value, next_value, terminated, truncated):
        if self.position == self.size:
            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")
        if self.observations is None:
            self.observations = np.zeros((self.size, *np.shape(observation)))
        t = self.position
        self.observations[t], self.actions[t], self.rewards[t] = observation, action, reward
        self.values[t], self.next_values[t] = value, next_value
        self.terminated[t], self.truncated[t] = terminated, truncated
        self.position += 1

    def get(self):
        advantages, returns = gae(self.rewards, self.values, self.next_values,
                                  self.terminated, self.truncated, self.discount, self.lam)
        self.position = 0
        return self.observations.copy(), self.actions.copy(), advantages, returns
"""

BUGS = (
    # n_step_return
    Bug("nstep_exponent_off_by_one", LESSON, "test_n_step_return",
        {"n_step_return": EXPONENT_OFF_BY_ONE},
        also_fails=("test_nstep_records",),  # the buffer's records come from n_step_return
        description="discounts step k's reward by discount**(k+1): the first reward too",
        rule="n-step-sum", kind="wrong-formula"),
    Bug("nstep_sums_past_the_end", LESSON, "test_n_step_return",
        {"n_step_return": SUMS_PAST_THE_END},
        description="sums every reward of the window, the next episode's after an end too",
        rule="stops-at-episode-end", kind="past-terminal"),
    Bug("nstep_truncation_does_not_end", LESSON, "test_n_step_return",
        {"n_step_return": TRUNCATION_DOES_NOT_END},
        description="only a termination stops the sum: it runs on past a truncation",
        rule="stops-at-episode-end", kind="past-terminal"),
    Bug("nstep_truncation_bootstraps_zero", LESSON, "test_n_step_return",
        {"n_step_return": TRUNCATION_BOOTSTRAPS_ZERO},
        also_fails=("test_nstep_records",),
        description="a truncated last step gets discount 0, as a termination would",
        rule="truncated-bootstraps", kind="past-terminal"),
    Bug("nstep_truncation_wins", LESSON, "test_n_step_return",
        {"n_step_return": TRUNCATION_WINS},
        description="a step both terminated and truncated bootstraps, as a truncation",
        rule="terminated-bootstraps-zero", kind="past-terminal"),
    Bug("nstep_bootstrap_exponent_off_by_one", LESSON, "test_n_step_return",
        {"n_step_return": BOOTSTRAP_EXPONENT_OFF_BY_ONE}, also_fails=("test_nstep_records",),
        description="bootstraps with discount**(m - 1), the exponent of the last reward summed",
        rule="truncated-bootstraps", kind="wrong-formula"),
    Bug("nstep_zero_discount_as_missing", LESSON, "test_n_step_return",
        {"n_step_return": ZERO_DISCOUNT_AS_MISSING},
        also_fails=("test_nstep_records",),
        description="`discount or 0.99`: a discount of 0 becomes 0.99",
        rule="any-discount", kind="falsy-as-missing"),
    Bug("nstep_steps_as_floats", LESSON, "test_n_step_return",
        {"n_step_return": STEPS_AS_FLOATS},
        # the buffer's window[steps[0] - 1] takes a float index
        also_fails=("test_nstep_records", "test_nstep_sample"),
        description="row by row, steps in an np.zeros(rows) array: floats, not integers",
        rule="result-types", kind="protocol"),
    Bug("nstep_flags_tested_with_is_true", LESSON, "test_n_step_return",
        {"n_step_return": FLAGS_TESTED_WITH_IS_TRUE},
        description="row by row, `terminated[i][k] is True`: an np.bool_ never is, so no "
                    "row ever stops",
        rule="stops-at-episode-end", kind="numpy-scalars"),
    Bug("nstep_masks_the_callers_rewards", LESSON, "test_n_step_return",
        {"n_step_return": MASKS_THE_CALLERS_REWARDS},
        description="zeroes the rewards after the first end in the caller's float64 array "
                    "(np.asarray makes no copy)",
        rule="inputs-untouched", kind="mutates-input"),
    # NStepReplayBuffer: records
    Bug("buffer_len_counts_waiting", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": LEN_COUNTS_PENDING},
        description="len counts the transitions still waiting for their return",
        rule="len-counts-records", kind="protocol"),
    Bug("buffer_len_is_next_slot", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": LEN_IS_NEXT_SLOT},
        description="len is the ring's write position: back to 0 when it wraps",
        rule="len-counts-records", kind="after-wrap"),
    Bug("buffer_evicts_the_newest", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": EVICTS_THE_NEWEST},
        also_fails=("test_nstep_sample",),  # the records held after the wrap are not the newest
        description="once full, every new record overwrites the last slot (the newest)",
        rule="fifo-records", kind="after-wrap"),
    Bug("buffer_bootstraps_after_one_step", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": BOOTSTRAPS_AFTER_ONE_STEP},
        description="bootstraps from the first transition's next observation, not the last "
                    "step's the return used",
        rule="records-are-n-step", kind="wrong-source"),
    Bug("buffer_discount_to_the_n", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": DISCOUNT_TO_THE_N},
        description="its own sum, bootstrapped with discount**n even when a truncation cut "
                    "the window short",
        rule="records-are-n-step", kind="wrong-formula"),
    # NStepReplayBuffer: sampling and arguments
    Bug("buffer_samples_from_np_random", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": SAMPLES_FROM_NP_RANDOM},
        description="np.random.randint instead of self.rng: the seed does not decide batches",
        rule="sample-uniform", kind="global-generator"),
    Bug("buffer_samples_below_the_newest", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": SAMPLES_BELOW_THE_NEWEST}, also_fails=("test_nstep_records",),
        description="rng.integers(0, size - 1), its high taken as inclusive: the newest "
                    "slot is never drawn",
        rule="sample-uniform", kind="boundary"),
    Bug("buffer_sample_size_unchecked", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": SAMPLE_SIZE_UNCHECKED},
        description="sample(0) returns empty arrays instead of raising ValueError",
        rule="sample-errors", kind="boundary"),
    Bug("buffer_empty_sample_unchecked", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": EMPTY_SAMPLE_UNCHECKED},
        description="sample on a buffer holding no record raises TypeError (no arrays yet)",
        rule="sample-errors", kind="accidental-refusal"),
    Bug("buffer_sample_returns_a_list", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": SAMPLE_RETURNS_A_LIST}, also_fails=("test_nstep_records",),
        description="sample returns a list of the five arrays, not a tuple",
        rule="result-types", kind="protocol"),
    Bug("buffer_sample_size_must_be_int", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": SAMPLE_SIZE_MUST_BE_INT}, also_fails=("test_nstep_records",),
        description="isinstance(batch_size, int): sample(np.int64(8)) raises ValueError",
        rule="numpy-scalars", kind="numpy-scalars"),
    Bug("buffer_discount_unchecked", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": DISCOUNT_UNCHECKED},
        description="a discount of 1.5 or -0.1 is accepted",
        rule="bad-arguments-raise", kind="accidental-refusal"),
    Bug("buffer_zero_capacity_allowed", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": ZERO_CAPACITY_ALLOWED},
        description="capacity < 0 refused, capacity 0 accepted",
        rule="bad-arguments-raise", kind="boundary"),
    Bug("buffer_capacity_must_be_int", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": CAPACITY_MUST_BE_INT}, also_fails=("test_nstep_sample",),
        description="isinstance(capacity, int) for 'whole': NStepReplayBuffer(np.int64(5), "
                    "...) raises ValueError",
        rule="numpy-scalars", kind="numpy-scalars"),
    # FrameStackReplay
    Bug("frames_stack_crosses_episodes", LESSON, "test_frame_stacks",
        {"FrameStackReplay": STACK_CROSSES_EPISODES},
        description="a stack takes the stack frames before its own, the previous "
                    "episode's too",
        rule="stack-within-episode", kind="past-terminal"),
    Bug("frames_stack_padded_with_zeros", LESSON, "test_frame_stacks",
        {"FrameStackReplay": STACK_PADDED_WITH_ZEROS},
        description="frames before the episode's start are blanked, not the first repeated",
        rule="stack-within-episode", kind="boundary"),
    Bug("frames_stack_clamped_at_current_episode", LESSON, "test_frame_stacks",
        {"FrameStackReplay": STACK_CLAMPED_AT_CURRENT_EPISODE},
        description="stacks clamped at the start of the episode being played, not the "
                    "frame's own",
        rule="stacks-rebuilt", kind="wrong-source"),
    Bug("frames_stack_newest_first", LESSON, "test_frame_stacks",
        {"FrameStackReplay": STACK_NEWEST_FIRST},
        description="a stack's frames newest first",
        rule="stacks-rebuilt", kind="protocol"),
    Bug("frames_stack_ends_before_its_frame", LESSON, "test_frame_stacks",
        {"FrameStackReplay": STACK_ENDS_BEFORE_ITS_FRAME},
        description="the stack is the stack frames before the transition's, not ending with it",
        rule="stacks-rebuilt", kind="boundary"),
    Bug("frames_samples_across_episodes", LESSON, "test_frame_stacks",
        {"FrameStackReplay": SAMPLES_ACROSS_EPISODES},
        description="an episode's last frame -> the next episode's first taken for a "
                    "transition",
        rule="frame-sample-uniform", kind="past-terminal"),
    Bug("frames_stores_whole_stacks", LESSON, "test_frame_stacks",
        {"FrameStackReplay": STORES_WHOLE_STACKS},
        description="each slot holds its whole stack: stack times the frames' memory",
        rule="frames-once", kind="protocol"),
    Bug("frames_stack_equal_to_capacity", LESSON, "test_frame_stacks",
        {"FrameStackReplay": STACK_EQUAL_TO_CAPACITY},
        description="capacity == stack accepted",
        rule="frame-arguments", kind="boundary"),
    Bug("frames_add_before_start_unchecked", LESSON, "test_frame_stacks",
        {"FrameStackReplay": ADD_BEFORE_START_UNCHECKED},
        description="add before start_episode raises TypeError (no episode start to store)",
        rule="frame-arguments", kind="accidental-refusal"),
    Bug("frames_sizes_must_be_int", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAME_SIZES_MUST_BE_INT},
        description="isinstance(capacity, int): FrameStackReplay(np.int64(9), 3) raises",
        rule="numpy-scalars", kind="numpy-scalars"),
    # gae (RolloutBuffer.get calls the notebook's gae, and is judged against the reference's:
    # a wrong gae costs test_rollout_buffer too)
    Bug("gae_no_restart", LESSON, "test_gae", {"gae": GAE_NO_RESTART},
        also_fails=("test_rollout_buffer",),
        description="the advantage is carried across the end of an episode",
        rule="gae-recursion", kind="past-terminal"),
    Bug("gae_restarts_only_at_terminated", LESSON, "test_gae",
        {"gae": GAE_RESTARTS_ONLY_AT_TERMINATED},
        also_fails=("test_rollout_buffer",),
        description="a truncation does not restart the advantage",
        rule="gae-recursion", kind="past-terminal"),
    Bug("gae_truncation_bootstraps_zero", LESSON, "test_gae",
        {"gae": GAE_TRUNCATION_BOOTSTRAPS_ZERO},
        also_fails=("test_rollout_buffer",),
        description="V(s') taken as 0 after a truncation too",
        rule="gae-recursion", kind="past-terminal"),
    Bug("gae_trace_without_discount", LESSON, "test_gae",
        {"gae": GAE_WITHOUT_DISCOUNT_IN_TRACE},
        also_fails=("test_rollout_buffer",),
        description="A_t = delta_t + lam * A_(t+1): the discount left out of the trace",
        rule="gae-recursion", kind="wrong-formula"),
    Bug("gae_returns_one_step_targets", LESSON, "test_gae",
        {"gae": GAE_RETURNS_ONE_STEP_TARGETS},
        also_fails=("test_rollout_buffer",),
        description="returns r + discount * V(s'), not advantages + values",
        rule="gae-recursion", kind="wrong-formula"),
    Bug("gae_flattens", LESSON, "test_gae", {"gae": GAE_FLATTENS},
        description="ravels its inputs: rollouts side by side become one long rollout",
        rule="gae-any-shape", kind="protocol"),
    Bug("gae_deltas_in_the_rewards", LESSON, "test_gae",
        {"gae": GAE_DELTAS_IN_THE_REWARDS},
        description="computes the deltas in the caller's float64 rewards, in place",
        rule="inputs-untouched", kind="mutates-input"),
    # RolloutBuffer
    Bug("rollout_add_past_full", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": ADD_PAST_FULL},
        description="a full rollout takes more steps",
        rule="rollout-full", kind="accidental-refusal"),
    Bug("rollout_get_from_preallocated_arrays", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": ROLLOUT_PREALLOCATED},
        description="preallocated arrays, and get never asks whether they are full: an empty "
                    "rollout raises AttributeError, an emptied one hands out the old steps",
        rule="rollout-full", kind="accidental-refusal"),
    Bug("rollout_len_is_size", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": ROLLOUT_LEN_IS_SIZE},
        description="len is the rollout's size, not the steps held",
        rule="used-once", kind="size-from-argument"),
    Bug("rollout_next_values_from_the_next_step", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": NEXT_VALUES_FROM_THE_NEXT_STEP},
        description="V(s'_t) taken as the next step's V(s_t+1): wrong after a truncation",
        rule="used-once", kind="wrong-source"),
    Bug("rollout_hands_out_lists", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": ROLLOUT_OF_LISTS},
        description="get returns the observations and actions as lists",
        rule="result-types", kind="protocol"),
)

# --- caught once the checks learned them (found while writing this catalogue) -------------

BUGS = (*BUGS,
    Bug("buffer_keeps_references", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": KEEPS_REFERENCES},
        description="waiting transitions keep the caller's observation arrays, which the caller refills for every add",
        rule="add-copies", kind="mutates-input"),
    Bug("buffer_no_flush_at_episode_end", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": NO_FLUSH_AT_EPISODE_END},
        description="completes a transition only once n are waiting, never at an episode's end",
        rule="record-when-known", kind="past-terminal"),
    Bug("buffer_flush_only_on_terminated", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": FLUSH_ONLY_ON_TERMINATED},
        description="flushes the waiting transitions when the episode terminates, not when it is truncated",
        rule="record-when-known", kind="past-terminal"),
    Bug("buffer_flush_only_the_oldest", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": FLUSH_ONLY_THE_OLDEST},
        description="at an episode's end completes only the oldest waiting transition (if, not while)",
        rule="record-when-known", kind="past-terminal"),
    Bug("buffer_flush_tested_with_is_true", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": FLUSH_TESTED_WITH_IS_TRUE},
        description="tests the end of an episode with `terminated is True or truncated is True`: numpy's flags never flush",
        rule="record-when-known", kind="numpy-scalars"),
    Bug("buffer_flush_newest_first", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": FLUSH_NEWEST_FIRST},
        description="at an episode's end completes the waiting transitions newest first, so the ring evicts the wrong ones",
        rule="record-when-known", kind="protocol"),
    Bug("buffer_without_replacement_when_possible", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": WITHOUT_REPLACEMENT_WHEN_POSSIBLE},
        description="samples without replacement whenever the batch fits in the records held",
        rule="sample-uniform", kind="replacement"),
    Bug("buffer_samples_the_capacity", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": SAMPLES_THE_CAPACITY}, also_fails=("test_nstep_records",),
        description="draws slots from the whole capacity, empty ones included",
        rule="sample-uniform", kind="size-from-argument"),
    Bug("frames_from_np_random", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_FROM_NP_RANDOM},
        description="draws the transitions with np.random instead of self.rng",
        rule="frame-sample-uniform", kind="global-generator"),
    Bug("frames_without_replacement_when_possible", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_WITHOUT_REPLACEMENT},
        description="samples without replacement whenever the batch fits",
        rule="frame-sample-uniform", kind="replacement"),
    Bug("frames_stores_next_frames_too", LESSON, "test_frame_stacks",
        {"FrameStackReplay": STORES_NEXT_FRAMES_TOO},
        description="keeps a second ring of next frames beside the frames: each frame stored twice",
        rule="frames-once", kind="protocol"),
    Bug("frames_samples_overwritten_frames", LESSON, "test_frame_stacks",
        {"FrameStackReplay": SAMPLES_OVERWRITTEN_FRAMES},
        description="samples every transition still in the ring, even those whose stacks reach overwritten frames",
        rule="frame-sample-uniform", kind="after-wrap"),
    Bug("frames_samples_from_the_first_frame", LESSON, "test_frame_stacks",
        {"FrameStackReplay": SAMPLES_FROM_THE_FIRST_FRAME},
        description="counts frames from 0 instead of the oldest held: overwritten transitions drawn again",
        rule="frame-sample-uniform", kind="after-wrap"),
    Bug("frames_excludes_clamped_stacks", LESSON, "test_frame_stacks",
        {"FrameStackReplay": EXCLUDES_CLAMPED_STACKS},
        description="treats a stack that reaches before the oldest frame as broken even where its episode starts inside the ring",
        rule="frame-sample-uniform", kind="boundary"),
    Bug("frames_nbytes_a_numpy_int", LESSON, "test_frame_stacks",
        {"FrameStackReplay": NBYTES_A_NUMPY_INT},
        description="nbytes summed with np.sum: a numpy int, not a Python int",
        rule="frames-once", kind="protocol"),
    Bug("gae_scalar_trace", LESSON, "test_gae", {"gae": GAE_SCALAR_TRACE},
        description="keeps the next step's advantage as a Python float and tests `if ended[t]`: one rollout only",
        rule="gae-any-shape",
        kind="protocol"),
    Bug("rollout_get_before_full", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": GET_BEFORE_FULL},
        description="get() hands out whatever the rollout holds, full or not",
        rule="rollout-full", kind="accidental-refusal"),
    Bug("rollout_get_only_refuses_empty", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": GET_ONLY_REFUSES_EMPTY},
        description="get() refuses only an empty rollout, not one part filled",
        rule="rollout-full", kind="boundary"),
    Bug("rollout_get_does_not_clear", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": GET_DOES_NOT_CLEAR},
        description="get() leaves the steps in the buffer: the next rollout cannot be added",
        rule="used-once", kind="protocol"),
)


# --- blind round 28: wrong answers written from the lesson text alone ----------------

NSTEP_INTEGER_DISCOUNTS_N_STEP_RETURN = "#| export\nfrom collections import deque\n\nimport numpy as np\n\n\ndef n_step_return(rewards, terminated, truncated, discount):\n    \"\"\"The n-step return of the first step of each row, and how to bootstrap it.\n\n    ``rewards``, ``terminated``, ``truncated``: arrays of shape (rows, n); row i holds the\n    steps t, t+1, ..., t+n-1 that start at one stored transition t. Returns three arrays of\n    shape (rows,): ``returns`` (float), the sum of discount**k * rewards[i, k] over the\n    steps up to and including the first that ends the episode (terminated or truncated),\n    all n if none does; ``discounts`` (float), 0.0 if that last step terminated, else\n    discount**m (m the steps summed); and ``steps`` (int), m. The target is then\n    returns + discounts * max_a Q(next observation of step t+m-1, a). Inputs untouched.\"\"\"\n    rewards = np.asarray(rewards, dtype=np.float64)\n    terminated = np.asarray(terminated, dtype=bool)\n    ended = terminated | np.asarray(truncated, dtype=bool)\n    rows, n = rewards.shape\n    returns = np.zeros(rows)\n    steps = np.full(rows, n, dtype=np.int64)\n    alive = np.ones(rows, dtype=bool)  # no end of episode yet in the window\n    for k in range(n):\n        returns[alive] += discount ** k * rewards[alive, k]\n        steps[alive & ended[:, k]] = k + 1\n        alive &= ~ended[:, k]\n    discounts = discount ** steps\n    discounts[terminated[np.arange(rows), steps - 1]] = 0.0\n    return returns, discounts, steps\n"

BUFFER_SEED_ZERO_UNSEEDED_NSTEPREPLAYBUFFER = "#| export\nclass NStepReplayBuffer:\n    \"\"\"A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends.\"\"\"\n\n    def __init__(self, capacity, n, discount, seed=None):\n        if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:\n            raise ValueError(f\"capacity and n must be positive whole numbers, got {capacity} \"\n                             f\"and {n}\")\n        if not 0.0 <= discount <= 1.0:\n            raise ValueError(f\"discount must be in [0, 1], got {discount}\")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed if seed else None)\n        self.pending = deque()  # transitions whose n-step return is not known yet\n        self.records = None  # field -> array of capacity rows, made at the first record\n        self.next_slot, self.size = 0, 0\n\n    def __len__(self):\n        return self.size\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append((np.array(observation), int(action), float(reward),\n                             np.array(next_observation), bool(terminated), bool(truncated)))\n        if terminated or truncated:\n            while self.pending:  # the episode is over: every pending return is known\n                self._complete_oldest()\n        elif len(self.pending) == self.n:\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        window = list(self.pending)[:self.n]\n        _, _, rewards, _, terminated, truncated = zip(*window)\n        returns, discounts, steps = n_step_return(\n            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)\n        observation, action = window[0][:2]\n        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])\n        self.pending.popleft()\n\n    def _store(self, *fields):\n        if self.records is None:\n            self.records = [np.zeros((self.capacity, *np.shape(value)), np.asarray(value).dtype)\n                            for value in fields]\n        for array, value in zip(self.records, fields):\n            array[self.next_slot] = value\n        self.next_slot = (self.next_slot + 1) % self.capacity\n        self.size = min(self.size + 1, self.capacity)\n\n    def sample(self, batch_size):\n        \"\"\"(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays.\"\"\"\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f\"batch_size must be a positive whole number, got {batch_size}\")\n        if self.size == 0:\n            raise ValueError(\"cannot sample from a buffer that holds no complete record\")\n        slots = self.rng.integers(0, self.size, size=int(batch_size))\n        return tuple(array[slots] for array in self.records)\n"

BUFFER_REFUSES_DISCOUNT_ZERO_NSTEPREPLAYBUFFER = "#| export\nclass NStepReplayBuffer:\n    \"\"\"A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends.\"\"\"\n\n    def __init__(self, capacity, n, discount, seed=None):\n        if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:\n            raise ValueError(f\"capacity and n must be positive whole numbers, got {capacity} \"\n                             f\"and {n}\")\n        if not 0.0 < discount <= 1.0:\n            raise ValueError(f\"discount must be in (0, 1], got {discount}\")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.pending = deque()  # transitions whose n-step return is not known yet\n        self.records = None  # field -> array of capacity rows, made at the first record\n        self.next_slot, self.size = 0, 0\n\n    def __len__(self):\n        return self.size\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append((np.array(observation), int(action), float(reward),\n                             np.array(next_observation), bool(terminated), bool(truncated)))\n        if terminated or truncated:\n            while self.pending:  # the episode is over: every pending return is known\n                self._complete_oldest()\n        elif len(self.pending) == self.n:\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        window = list(self.pending)[:self.n]\n        _, _, rewards, _, terminated, truncated = zip(*window)\n        returns, discounts, steps = n_step_return(\n            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)\n        observation, action = window[0][:2]\n        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])\n        self.pending.popleft()\n\n    def _store(self, *fields):\n        if self.records is None:\n            self.records = [np.zeros((self.capacity, *np.shape(value)), np.asarray(value).dtype)\n                            for value in fields]\n        for array, value in zip(self.records, fields):\n            array[self.next_slot] = value\n        self.next_slot = (self.next_slot + 1) % self.capacity\n        self.size = min(self.size + 1, self.capacity)\n\n    def sample(self, batch_size):\n        \"\"\"(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays.\"\"\"\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f\"batch_size must be a positive whole number, got {batch_size}\")\n        if self.size == 0:\n            raise ValueError(\"cannot sample from a buffer that holds no complete record\")\n        slots = self.rng.integers(0, self.size, size=int(batch_size))\n        return tuple(array[slots] for array in self.records)\n"

BUFFER_RECORDS_ALL_FLOAT64_NSTEPREPLAYBUFFER = "#| export\nclass NStepReplayBuffer:\n    \"\"\"A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends.\"\"\"\n\n    def __init__(self, capacity, n, discount, seed=None):\n        if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:\n            raise ValueError(f\"capacity and n must be positive whole numbers, got {capacity} \"\n                             f\"and {n}\")\n        if not 0.0 <= discount <= 1.0:\n            raise ValueError(f\"discount must be in [0, 1], got {discount}\")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.pending = deque()  # transitions whose n-step return is not known yet\n        self.records = None  # field -> array of capacity rows, made at the first record\n        self.next_slot, self.size = 0, 0\n\n    def __len__(self):\n        return self.size\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append((np.array(observation), int(action), float(reward),\n                             np.array(next_observation), bool(terminated), bool(truncated)))\n        if terminated or truncated:\n            while self.pending:  # the episode is over: every pending return is known\n                self._complete_oldest()\n        elif len(self.pending) == self.n:\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        window = list(self.pending)[:self.n]\n        _, _, rewards, _, terminated, truncated = zip(*window)\n        returns, discounts, steps = n_step_return(\n            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)\n        observation, action = window[0][:2]\n        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])\n        self.pending.popleft()\n\n    def _store(self, *fields):\n        if self.records is None:\n            self.records = [np.zeros((self.capacity, *np.shape(value))) for value in fields]\n        for array, value in zip(self.records, fields):\n            array[self.next_slot] = value\n        self.next_slot = (self.next_slot + 1) % self.capacity\n        self.size = min(self.size + 1, self.capacity)\n\n    def sample(self, batch_size):\n        \"\"\"(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays.\"\"\"\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f\"batch_size must be a positive whole number, got {batch_size}\")\n        if self.size == 0:\n            raise ValueError(\"cannot sample from a buffer that holds no complete record\")\n        slots = self.rng.integers(0, self.size, size=int(batch_size))\n        return tuple(array[slots] for array in self.records)\n"

FRAMES_NBYTES_COUNTS_FRAMES_ONLY_FRAMESTACKREPLAY = "#| export\nclass FrameStackReplay:\n    \"\"\"Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode's start (there the episode's first\n    frame is repeated).\"\"\"\n\n    def __init__(self, capacity, stack, seed=None):\n        if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack:\n            raise ValueError(\"capacity and stack must be whole numbers, capacity > stack >= 1\")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None\n        self.actions = np.zeros(self.capacity, np.int64)\n        self.rewards = np.zeros(self.capacity)\n        self.terminated = np.zeros(self.capacity, bool)\n        self.has_transition = np.zeros(self.capacity, bool)  # the next slot is its next frame\n        self.episode_start = np.zeros(self.capacity, np.int64)  # as a count of frames added\n        self.added = 0  # frames ever stored; slot of frame f is f % capacity\n        self.current_start = None\n\n    def _put(self, frame):\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)\n        slot = self.added % self.capacity\n        self.frames[slot] = frame\n        self.has_transition[slot] = False\n        self.episode_start[slot] = self.current_start\n        self.added += 1\n\n    def start_episode(self, frame):\n        self.current_start = self.added\n        self._put(frame)\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.current_start is None:\n            raise ValueError(\"start_episode(frame) comes before the first add\")\n        slot = (self.added - 1) % self.capacity\n        self.actions[slot], self.rewards[slot] = action, reward\n        self.terminated[slot], self.has_transition[slot] = terminated, True\n        self._put(next_frame)\n\n    def stack_of(self, frame):\n        \"\"\"The stack ending at frame number ``frame`` (a count), oldest frame first.\"\"\"\n        first = self.episode_start[frame % self.capacity]\n        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)\n        return self.frames[numbers % self.capacity]\n\n    def sampleable(self):\n        \"\"\"Frame numbers whose transition and both stacks are still in the ring.\"\"\"\n        oldest = self.added - min(self.added, self.capacity)\n        numbers = np.arange(oldest, self.added - 1)\n        slots = numbers % self.capacity\n        earliest = np.maximum(numbers - self.stack + 1, self.episode_start[slots])\n        return numbers[self.has_transition[slots] & (earliest >= oldest)]\n\n    def sample(self, batch_size):\n        numbers = self.sampleable()\n        if len(numbers) == 0:\n            raise ValueError(\"no transition whose stacks are whole is stored yet\")\n        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]\n        slots = chosen % self.capacity\n        return (np.stack([self.stack_of(f) for f in chosen]), self.actions[slots].copy(),\n                self.rewards[slots].copy(), np.stack([self.stack_of(f + 1) for f in chosen]),\n                self.terminated[slots].copy())\n\n    @property\n    def nbytes(self):\n        # the frames are what the buffer stores: one copy of each\n        return 0 if self.frames is None else self.frames.nbytes\n"

FRAMES_NBYTES_BEFORE_ANY_FRAME_RAISES_FRAMESTACKREPLAY = "#| export\nclass FrameStackReplay:\n    \"\"\"Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode's start (there the episode's first\n    frame is repeated).\"\"\"\n\n    def __init__(self, capacity, stack, seed=None):\n        if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack:\n            raise ValueError(\"capacity and stack must be whole numbers, capacity > stack >= 1\")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None\n        self.actions = np.zeros(self.capacity, np.int64)\n        self.rewards = np.zeros(self.capacity)\n        self.terminated = np.zeros(self.capacity, bool)\n        self.has_transition = np.zeros(self.capacity, bool)  # the next slot is its next frame\n        self.episode_start = np.zeros(self.capacity, np.int64)  # as a count of frames added\n        self.added = 0  # frames ever stored; slot of frame f is f % capacity\n        self.current_start = None\n\n    def _put(self, frame):\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)\n        slot = self.added % self.capacity\n        self.frames[slot] = frame\n        self.has_transition[slot] = False\n        self.episode_start[slot] = self.current_start\n        self.added += 1\n\n    def start_episode(self, frame):\n        self.current_start = self.added\n        self._put(frame)\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.current_start is None:\n            raise ValueError(\"start_episode(frame) comes before the first add\")\n        slot = (self.added - 1) % self.capacity\n        self.actions[slot], self.rewards[slot] = action, reward\n        self.terminated[slot], self.has_transition[slot] = terminated, True\n        self._put(next_frame)\n\n    def stack_of(self, frame):\n        \"\"\"The stack ending at frame number ``frame`` (a count), oldest frame first.\"\"\"\n        first = self.episode_start[frame % self.capacity]\n        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)\n        return self.frames[numbers % self.capacity]\n\n    def sampleable(self):\n        \"\"\"Frame numbers whose transition and both stacks are still in the ring.\"\"\"\n        oldest = self.added - min(self.added, self.capacity)\n        numbers = np.arange(oldest, self.added - 1)\n        slots = numbers % self.capacity\n        earliest = np.maximum(numbers - self.stack + 1, self.episode_start[slots])\n        return numbers[self.has_transition[slots] & (earliest >= oldest)]\n\n    def sample(self, batch_size):\n        numbers = self.sampleable()\n        if len(numbers) == 0:\n            raise ValueError(\"no transition whose stacks are whole is stored yet\")\n        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]\n        slots = chosen % self.capacity\n        return (np.stack([self.stack_of(f) for f in chosen]), self.actions[slots].copy(),\n                self.rewards[slots].copy(), np.stack([self.stack_of(f + 1) for f in chosen]),\n                self.terminated[slots].copy())\n\n    @property\n    def nbytes(self):\n        arrays = [self.frames, self.actions, self.rewards, self.terminated,\n                  self.has_transition, self.episode_start]\n        return sum(array.nbytes for array in arrays)\n"

FRAMES_STACK_OF_ONE_HAS_NO_STACK_AXIS_FRAMESTACKREPLAY = "#| export\nclass FrameStackReplay:\n    \"\"\"Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode's start (there the episode's first\n    frame is repeated).\"\"\"\n\n    def __init__(self, capacity, stack, seed=None):\n        if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack:\n            raise ValueError(\"capacity and stack must be whole numbers, capacity > stack >= 1\")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None\n        self.actions = np.zeros(self.capacity, np.int64)\n        self.rewards = np.zeros(self.capacity)\n        self.terminated = np.zeros(self.capacity, bool)\n        self.has_transition = np.zeros(self.capacity, bool)  # the next slot is its next frame\n        self.episode_start = np.zeros(self.capacity, np.int64)  # as a count of frames added\n        self.added = 0  # frames ever stored; slot of frame f is f % capacity\n        self.current_start = None\n\n    def _put(self, frame):\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)\n        slot = self.added % self.capacity\n        self.frames[slot] = frame\n        self.has_transition[slot] = False\n        self.episode_start[slot] = self.current_start\n        self.added += 1\n\n    def start_episode(self, frame):\n        self.current_start = self.added\n        self._put(frame)\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.current_start is None:\n            raise ValueError(\"start_episode(frame) comes before the first add\")\n        slot = (self.added - 1) % self.capacity\n        self.actions[slot], self.rewards[slot] = action, reward\n        self.terminated[slot], self.has_transition[slot] = terminated, True\n        self._put(next_frame)\n\n    def stack_of(self, frame):\n        \"\"\"The stack ending at frame number ``frame`` (a count), oldest frame first.\"\"\"\n        if self.stack == 1:  # a stack of one frame is the frame itself\n            return self.frames[frame % self.capacity]\n        first = self.episode_start[frame % self.capacity]\n        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)\n        return self.frames[numbers % self.capacity]\n\n    def sampleable(self):\n        \"\"\"Frame numbers whose transition and both stacks are still in the ring.\"\"\"\n        oldest = self.added - min(self.added, self.capacity)\n        numbers = np.arange(oldest, self.added - 1)\n        slots = numbers % self.capacity\n        earliest = np.maximum(numbers - self.stack + 1, self.episode_start[slots])\n        return numbers[self.has_transition[slots] & (earliest >= oldest)]\n\n    def sample(self, batch_size):\n        numbers = self.sampleable()\n        if len(numbers) == 0:\n            raise ValueError(\"no transition whose stacks are whole is stored yet\")\n        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]\n        slots = chosen % self.capacity\n        return (np.stack([self.stack_of(f) for f in chosen]), self.actions[slots].copy(),\n                self.rewards[slots].copy(), np.stack([self.stack_of(f + 1) for f in chosen]),\n                self.terminated[slots].copy())\n\n    @property\n    def nbytes(self):\n        arrays = [self.actions, self.rewards, self.terminated, self.has_transition,\n                  self.episode_start]\n        return sum(array.nbytes for array in arrays) + (0 if self.frames is None\n                                                        else self.frames.nbytes)\n"

GAE_ADVANTAGES_TYPED_LIKE_REWARDS_GAE = "#| export\ndef gae(rewards, values, next_values, terminated, truncated, discount, lam):\n    \"\"\"Generalised advantage estimation over a rollout, axis 0 the steps (any other axes\n    are separate rollouts): delta_t = r_t + discount * V(s'_t) (0 after a termination) -\n    V(s_t); A_t = delta_t + discount * lam * A_{t+1}, restarted where an episode ended and\n    0 after the last step; returns A + values. Inputs untouched.\"\"\"\n    rewards = np.asarray(rewards)\n    values = np.asarray(values, dtype=np.float64)\n    next_values = np.asarray(next_values, dtype=np.float64)\n    terminated = np.asarray(terminated, dtype=bool)\n    ended = terminated | np.asarray(truncated, dtype=bool)\n    advantages = np.zeros_like(rewards)\n    following = np.zeros(values.shape[1:])\n    for t in reversed(range(len(rewards))):\n        delta = rewards[t] + discount * np.where(terminated[t], 0.0, next_values[t]) - values[t]\n        following = delta + discount * lam * np.where(ended[t], 0.0, following)\n        advantages[t] = following\n    return advantages, advantages + values\n"

ROLLOUT_KEEPS_OBSERVATION_REFERENCES_ROLLOUTBUFFER = "#| export\nclass RolloutBuffer:\n    \"\"\"An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared.\"\"\"\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam)\n        self.steps = []\n\n    def __len__(self):\n        return len(self.steps)\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if len(self.steps) == self.size:\n            raise ValueError(f\"the rollout is full ({self.size} steps): call get() first\")\n        self.steps.append((observation, int(action), float(reward), float(value),\n                           float(next_value), bool(terminated), bool(truncated)))\n\n    def get(self):\n        \"\"\"(observations, actions, advantages, returns) of the full rollout; then empty.\"\"\"\n        if len(self.steps) < self.size:\n            raise ValueError(f\"the rollout holds {len(self.steps)} of {self.size} steps\")\n        observations, actions, rewards, values, next_values, terminated, truncated = map(\n            np.array, zip(*self.steps))\n        advantages, returns = gae(rewards, values, next_values, terminated, truncated,\n                                  self.discount, self.lam)\n        self.steps = []\n        return observations, actions, advantages, returns\n"

ROLLOUT_HANDS_OUT_ITS_OWN_ARRAYS_ROLLOUTBUFFER = "#| export\nclass RolloutBuffer:\n    \"\"\"An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared.\"\"\"\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam)\n        self.position = 0\n        self.observations = None  # allocated at the first step, shaped like its observation\n        self.actions = np.zeros(self.size, np.int64)\n        self.rewards = np.zeros(self.size)\n        self.values = np.zeros(self.size)\n        self.next_values = np.zeros(self.size)\n        self.terminated = np.zeros(self.size, bool)\n        self.truncated = np.zeros(self.size, bool)\n\n    def __len__(self):\n        return self.position\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if self.position == self.size:\n            raise ValueError(f\"the rollout is full ({self.size} steps): call get() first\")\n        observation = np.asarray(observation)\n        if self.observations is None:\n            self.observations = np.zeros((self.size, *observation.shape), observation.dtype)\n        i = self.position\n        self.observations[i] = observation  # a copy into the buffer's own array\n        self.actions[i], self.rewards[i], self.values[i] = action, reward, value\n        self.next_values[i], self.terminated[i], self.truncated[i] = (next_value, terminated,\n                                                                      truncated)\n        self.position += 1\n\n    def get(self):\n        \"\"\"(observations, actions, advantages, returns) of the full rollout; then empty.\"\"\"\n        if self.position < self.size:\n            raise ValueError(f\"the rollout holds {self.position} of {self.size} steps\")\n        advantages, returns = gae(self.rewards, self.values, self.next_values, self.terminated,\n                                  self.truncated, self.discount, self.lam)\n        self.position = 0  # empty: the next rollout is written from the start\n        return self.observations, self.actions, advantages, returns\n"

BUGS = (*BUGS,
    Bug("nstep_integer_discounts", LESSON, "test_n_step_return",
        {"n_step_return": NSTEP_INTEGER_DISCOUNTS_N_STEP_RETURN},
        description="discounts = discount ** steps: with a discount of 1 or 0 given as a Python int the discounts come back as an integer array",
        rule="result-types", kind="protocol"),
    Bug("nstep_buffer_seed_zero_unseeded", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": BUFFER_SEED_ZERO_UNSEEDED_NSTEPREPLAYBUFFER},
        description="default_rng(seed if seed else None): a seed of 0 is taken as no seed, so its batches are not reproducible",
        rule="sample-uniform", kind="falsy-as-missing"),
    Bug("buffer_refuses_discount_zero", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": BUFFER_REFUSES_DISCOUNT_ZERO_NSTEPREPLAYBUFFER},
        also_fails=("test_nstep_records",),
        description="checks 0 < discount <= 1: a discount of 0 (one-step greedy targets) raises ValueError",
        rule="bad-arguments-raise", kind="accidental-refusal"),
    Bug("buffer_records_all_float64", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": BUFFER_RECORDS_ALL_FLOAT64_NSTEPREPLAYBUFFER},
        description="allocates every record array with np.zeros's default float64: actions come back as floats, float32 or uint8 observations as float64",
        rule="records-keep-types", kind="protocol"),
    Bug("frames_nbytes_counts_frames_only", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_NBYTES_COUNTS_FRAMES_ONLY_FRAMESTACKREPLAY},
        description="nbytes counts only the frame ring, not the action, reward, flag and episode-start arrays the buffer also holds",
        rule="frames-once", kind="wrong-formula"),
    Bug("frames_nbytes_before_any_frame_raises", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_NBYTES_BEFORE_ANY_FRAME_RAISES_FRAMESTACKREPLAY},
        description="nbytes sums self.frames.nbytes unconditionally: on a buffer that has no frame yet it raises AttributeError instead of counting its arrays",
        rule="frames-once", kind="accidental-refusal"),
    Bug("frames_stack_of_one_has_no_stack_axis", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_STACK_OF_ONE_HAS_NO_STACK_AXIS_FRAMESTACKREPLAY},
        description="with stack == 1 a stack is returned as the bare frame: stacks of shape (batch, *frame shape) instead of (batch, 1, *frame shape)",
        rule="stacks-rebuilt", kind="boundary"),
    Bug("gae_advantages_typed_like_rewards", LESSON, "test_gae",
        {"gae": GAE_ADVANTAGES_TYPED_LIKE_REWARDS_GAE},
        description="advantages = np.zeros_like(rewards) with rewards not cast to float: integer rewards give integer, truncated advantages",
        rule="result-types", kind="protocol"),
    Bug("rollout_keeps_observation_references", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": ROLLOUT_KEEPS_OBSERVATION_REFERENCES_ROLLOUTBUFFER},
        description="add stores the caller's observation array itself: a caller that refills one array every step gets the last observation in every row",
        rule="rollout-copies", kind="mutates-input"),
    Bug("rollout_hands_out_its_own_arrays", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": ROLLOUT_HANDS_OUT_ITS_OWN_ARRAYS_ROLLOUTBUFFER},
        description="preallocated arrays, and get returns the observation and action arrays themselves: the next rollout's adds overwrite what the caller was handed",
        rule="inputs-untouched", kind="after-wrap"),
)

# blind round 29's misses

BUFFER_SAMPLE_REFILLS_ONE_BATCH_NSTEPREPLAYBUFFER = '#| export\nclass NStepReplayBuffer:\n    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends."""\n\n    def __init__(self, capacity, n, discount, seed=None):\n        if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:\n            raise ValueError(f"capacity and n must be positive whole numbers, got {capacity} "\n                             f"and {n}")\n        if not 0.0 <= discount <= 1.0:\n            raise ValueError(f"discount must be in [0, 1], got {discount}")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.pending = deque()  # transitions whose n-step return is not known yet\n        self.records = None  # field -> array of capacity rows, made at the first record\n        self.next_slot, self.size = 0, 0\n\n    def __len__(self):\n        return self.size\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append((np.array(observation), int(action), float(reward),\n                             np.array(next_observation), bool(terminated), bool(truncated)))\n        if terminated or truncated:\n            while self.pending:  # the episode is over: every pending return is known\n                self._complete_oldest()\n        elif len(self.pending) == self.n:\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        """A helper of add\'s: write the record of the oldest waiting transition."""\n        window = list(self.pending)[:self.n]\n        _, _, rewards, _, terminated, truncated = zip(*window)\n        returns, discounts, steps = n_step_return(\n            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)\n        observation, action = window[0][:2]\n        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])\n        self.pending.popleft()\n\n    def _store(self, *fields):\n        """A helper of add\'s: write one record\'s fields into the next slot of the ring."""\n        if self.records is None:\n            self.records = [np.zeros((self.capacity, *np.shape(value)), np.asarray(value).dtype)\n                            for value in fields]\n        for array, value in zip(self.records, fields):\n            array[self.next_slot] = value\n        self.next_slot = (self.next_slot + 1) % self.capacity\n        self.size = min(self.size + 1, self.capacity)\n\n    def sample(self, batch_size):\n        """(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays."""\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f"batch_size must be a positive whole number, got {batch_size}")\n        if self.size == 0:\n            raise ValueError("cannot sample from a buffer that holds no complete record")\n        slots = self.rng.integers(0, self.size, size=int(batch_size))\n        batch = getattr(self, "_batch", None)\n        if batch is None or len(batch[0]) != len(slots):  # allocate the batch arrays once\n            batch = self._batch = tuple(np.empty((len(slots), *array.shape[1:]), array.dtype)\n                                        for array in self.records)\n        for array, out in zip(self.records, batch):\n            np.take(array, slots, axis=0, out=out)\n        return batch\n'

FRAMES_NBYTES_CACHED_AT_FIRST_CALL_FRAMESTACKREPLAY = '#| export\nclass FrameStackReplay:\n    """Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode\'s start (there the episode\'s first\n    frame is repeated)."""\n\n    def __init__(self, capacity, stack, seed=None):\n        if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack:\n            raise ValueError("capacity and stack must be whole numbers, capacity > stack >= 1")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None\n        self.actions = np.zeros(self.capacity, np.int64)\n        self.rewards = np.zeros(self.capacity)\n        self.terminated = np.zeros(self.capacity, bool)\n        self.has_transition = np.zeros(self.capacity, bool)  # the next slot is its next frame\n        self.episode_start = np.zeros(self.capacity, np.int64)  # as a count of frames added\n        self.added = 0  # frames ever stored; slot of frame f is f % capacity\n        self.current_start = None\n\n    def _put(self, frame):\n        """A helper of start_episode\'s and add\'s: store one frame in the next slot."""\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)\n        slot = self.added % self.capacity\n        self.frames[slot] = frame\n        self.has_transition[slot] = False\n        self.episode_start[slot] = self.current_start\n        self.added += 1\n\n    def start_episode(self, frame):\n        self.current_start = self.added\n        self._put(frame)\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.current_start is None:\n            raise ValueError("start_episode(frame) comes before the first add")\n        slot = (self.added - 1) % self.capacity\n        self.actions[slot], self.rewards[slot] = action, reward\n        self.terminated[slot], self.has_transition[slot] = terminated, True\n        self._put(next_frame)\n\n    def stack_of(self, frame):\n        """The stack ending at frame number ``frame`` (a count), oldest frame first."""\n        first = self.episode_start[frame % self.capacity]\n        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)\n        return self.frames[numbers % self.capacity]\n\n    def sampleable(self):\n        """Frame numbers whose transition and both stacks are still in the ring."""\n        oldest = self.added - min(self.added, self.capacity)\n        numbers = np.arange(oldest, self.added - 1)\n        slots = numbers % self.capacity\n        earliest = np.maximum(numbers - self.stack + 1, self.episode_start[slots])\n        return numbers[self.has_transition[slots] & (earliest >= oldest)]\n\n    def sample(self, batch_size):\n        numbers = self.sampleable()\n        if len(numbers) == 0:\n            raise ValueError("no transition whose stacks are whole is stored yet")\n        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]\n        slots = chosen % self.capacity\n        return (np.stack([self.stack_of(f) for f in chosen]), self.actions[slots].copy(),\n                self.rewards[slots].copy(), np.stack([self.stack_of(f + 1) for f in chosen]),\n                self.terminated[slots].copy())\n\n    @property\n    def nbytes(self):\n        if getattr(self, "_nbytes", None) is None:  # the arrays never change size\n            arrays = [self.actions, self.rewards, self.terminated, self.has_transition,\n                      self.episode_start]\n            self._nbytes = sum(array.nbytes for array in arrays) + (\n                0 if self.frames is None else self.frames.nbytes)\n        return self._nbytes\n'

ROLLOUT_FAILED_GET_EMPTIES_ROLLOUTBUFFER = '#| export\nclass RolloutBuffer:\n    """An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared."""\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam)\n        self.steps = []\n\n    def __len__(self):\n        return len(self.steps)\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if len(self.steps) == self.size:\n            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")\n        self.steps.append((np.array(observation), int(action), float(reward), float(value),\n                           float(next_value), bool(terminated), bool(truncated)))\n\n    def get(self):\n        """(observations, actions, advantages, returns) of the full rollout; then empty."""\n        steps, self.steps = self.steps, []  # each step is used once\n        if len(steps) < self.size:\n            raise ValueError(f"the rollout holds {len(steps)} of {self.size} steps")\n        observations, actions, rewards, values, next_values, terminated, truncated = map(\n            np.array, zip(*steps))\n        advantages, returns = gae(rewards, values, next_values, terminated, truncated,\n                                  self.discount, self.lam)\n        return observations, actions, advantages, returns\n'

BUGS = (*BUGS,
    Bug("buffer_sample_refills_one_batch", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": BUFFER_SAMPLE_REFILLS_ONE_BATCH_NSTEPREPLAYBUFFER},
        description='sample fills the same preallocated batch arrays every call: the previous batch a caller holds is overwritten',
        rule="sample-uniform", kind="protocol"),
    Bug("frames_nbytes_cached_at_first_call", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_NBYTES_CACHED_AT_FIRST_CALL_FRAMESTACKREPLAY},
        description='nbytes is computed once, at its first call, and cached: asked before the first frame, it keeps returning the bytes without the frame ring forever after',
        rule="frames-once", kind="protocol"),
    Bug("rollout_failed_get_empties", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": ROLLOUT_FAILED_GET_EMPTIES_ROLLOUTBUFFER},
        description='get takes the steps out of the buffer before checking that the rollout is full: a get() on a part-filled rollout raises ValueError but throws its steps away (len 0 afterwards)',
        rule="rollout-full", kind="protocol"),
)

# blind round 30's misses

FRAMES_NEEDS_TWO_STACKS_OF_ROOM_FRAMESTACKREPLAY = '#| export\nclass FrameStackReplay:\n    """Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode\'s start (there the episode\'s first\n    frame is repeated)."""\n\n    def __init__(self, capacity, stack, seed=None):\n        if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack + 1:\n            raise ValueError("capacity and stack must be whole numbers, capacity > stack >= 1")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None\n        self.actions = np.zeros(self.capacity, np.int64)\n        self.rewards = np.zeros(self.capacity)\n        self.terminated = np.zeros(self.capacity, bool)\n        self.has_transition = np.zeros(self.capacity, bool)  # the next slot is its next frame\n        self.episode_start = np.zeros(self.capacity, np.int64)  # as a count of frames added\n        self.added = 0  # frames ever stored; slot of frame f is f % capacity\n        self.current_start = None\n\n    def _put(self, frame):\n        """A helper of start_episode\'s and add\'s: store one frame in the next slot."""\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)\n        slot = self.added % self.capacity\n        self.frames[slot] = frame\n        self.has_transition[slot] = False\n        self.episode_start[slot] = self.current_start\n        self.added += 1\n\n    def start_episode(self, frame):\n        self.current_start = self.added\n        self._put(frame)\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.current_start is None:\n            raise ValueError("start_episode(frame) comes before the first add")\n        slot = (self.added - 1) % self.capacity\n        self.actions[slot], self.rewards[slot] = action, reward\n        self.terminated[slot], self.has_transition[slot] = terminated, True\n        self._put(next_frame)\n\n    def stack_of(self, frame):\n        """The stack ending at frame number ``frame`` (a count), oldest frame first."""\n        first = self.episode_start[frame % self.capacity]\n        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)\n        return self.frames[numbers % self.capacity]\n\n    def sampleable(self):\n        """Frame numbers whose transition and both stacks are still in the ring."""\n        oldest = self.added - min(self.added, self.capacity)\n        numbers = np.arange(oldest, self.added - 1)\n        slots = numbers % self.capacity\n        earliest = np.maximum(numbers - self.stack + 1, self.episode_start[slots])\n        return numbers[self.has_transition[slots] & (earliest >= oldest)]\n\n    def sample(self, batch_size):\n        numbers = self.sampleable()\n        if len(numbers) == 0:\n            raise ValueError("no transition whose stacks are whole is stored yet")\n        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]\n        slots = chosen % self.capacity\n        return (np.stack([self.stack_of(f) for f in chosen]), self.actions[slots].copy(),\n                self.rewards[slots].copy(), np.stack([self.stack_of(f + 1) for f in chosen]),\n                self.terminated[slots].copy())\n\n    @property\n    def nbytes(self):\n        arrays = [self.actions, self.rewards, self.terminated, self.has_transition,\n                  self.episode_start]\n        return sum(array.nbytes for array in arrays) + (0 if self.frames is None\n                                                        else self.frames.nbytes)\n'

FRAMES_NBYTES_ONE_BYTE_PER_PIXEL_FRAMESTACKREPLAY = '#| export\nclass FrameStackReplay:\n    """Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode\'s start (there the episode\'s first\n    frame is repeated)."""\n\n    def __init__(self, capacity, stack, seed=None):\n        if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack:\n            raise ValueError("capacity and stack must be whole numbers, capacity > stack >= 1")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None\n        self.actions = np.zeros(self.capacity, np.int64)\n        self.rewards = np.zeros(self.capacity)\n        self.terminated = np.zeros(self.capacity, bool)\n        self.has_transition = np.zeros(self.capacity, bool)  # the next slot is its next frame\n        self.episode_start = np.zeros(self.capacity, np.int64)  # as a count of frames added\n        self.added = 0  # frames ever stored; slot of frame f is f % capacity\n        self.current_start = None\n\n    def _put(self, frame):\n        """A helper of start_episode\'s and add\'s: store one frame in the next slot."""\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)\n        slot = self.added % self.capacity\n        self.frames[slot] = frame\n        self.has_transition[slot] = False\n        self.episode_start[slot] = self.current_start\n        self.added += 1\n\n    def start_episode(self, frame):\n        self.current_start = self.added\n        self._put(frame)\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.current_start is None:\n            raise ValueError("start_episode(frame) comes before the first add")\n        slot = (self.added - 1) % self.capacity\n        self.actions[slot], self.rewards[slot] = action, reward\n        self.terminated[slot], self.has_transition[slot] = terminated, True\n        self._put(next_frame)\n\n    def stack_of(self, frame):\n        """The stack ending at frame number ``frame`` (a count), oldest frame first."""\n        first = self.episode_start[frame % self.capacity]\n        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)\n        return self.frames[numbers % self.capacity]\n\n    def sampleable(self):\n        """Frame numbers whose transition and both stacks are still in the ring."""\n        oldest = self.added - min(self.added, self.capacity)\n        numbers = np.arange(oldest, self.added - 1)\n        slots = numbers % self.capacity\n        earliest = np.maximum(numbers - self.stack + 1, self.episode_start[slots])\n        return numbers[self.has_transition[slots] & (earliest >= oldest)]\n\n    def sample(self, batch_size):\n        numbers = self.sampleable()\n        if len(numbers) == 0:\n            raise ValueError("no transition whose stacks are whole is stored yet")\n        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]\n        slots = chosen % self.capacity\n        return (np.stack([self.stack_of(f) for f in chosen]), self.actions[slots].copy(),\n                self.rewards[slots].copy(), np.stack([self.stack_of(f + 1) for f in chosen]),\n                self.terminated[slots].copy())\n\n    @property\n    def nbytes(self):\n        arrays = [self.actions, self.rewards, self.terminated, self.has_transition,\n                  self.episode_start]\n        return sum(array.nbytes for array in arrays) + (0 if self.frames is None\n                                                        else self.frames.size)\n'

ROLLOUT_LAM_ZERO_AS_MISSING_ROLLOUTBUFFER = '#| export\nclass RolloutBuffer:\n    """An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared."""\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam or 0.95)\n        self.steps = []\n\n    def __len__(self):\n        return len(self.steps)\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if len(self.steps) == self.size:\n            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")\n        self.steps.append((np.array(observation), int(action), float(reward), float(value),\n                           float(next_value), bool(terminated), bool(truncated)))\n\n    def get(self):\n        """(observations, actions, advantages, returns) of the full rollout; then empty."""\n        if len(self.steps) < self.size:\n            raise ValueError(f"the rollout holds {len(self.steps)} of {self.size} steps")\n        observations, actions, rewards, values, next_values, terminated, truncated = map(\n            np.array, zip(*self.steps))\n        advantages, returns = gae(rewards, values, next_values, terminated, truncated,\n                                  self.discount, self.lam)\n        self.steps = []\n        return observations, actions, advantages, returns\n'

BUGS = (*BUGS,
    Bug("frames_needs_two_stacks_of_room", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_NEEDS_TWO_STACKS_OF_ROOM_FRAMESTACKREPLAY},
        description='requires capacity > stack + 1 (room for a stack and the next one apart): FrameStackReplay(3, 2), which the text allows, raises ValueError',
        rule="frame-arguments", kind="accidental-refusal"),
    Bug("frames_nbytes_one_byte_per_pixel", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_NBYTES_ONE_BYTE_PER_PIXEL_FRAMESTACKREPLAY},
        description="nbytes counts the frame ring as frames.size (one byte per pixel, as Atari's uint8): float32 or float64 frames are counted 4 or 8 times too small",
        rule="frames-once", kind="wrong-formula"),
    Bug("rollout_lam_zero_as_missing", LESSON, "test_rollout_buffer",
        {"RolloutBuffer": ROLLOUT_LAM_ZERO_AS_MISSING_ROLLOUTBUFFER},
        description='`float(lam or 0.95)`: a lambda of 0 (one-step TD advantages) is taken as missing and becomes 0.95',
        rule="used-once", kind="falsy-as-missing"),
)

# blind round 31's misses

BUFFER_OBSERVATIONS_AS_FLOAT32_NSTEPREPLAYBUFFER = '#| export\nclass NStepReplayBuffer:\n    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends."""\n\n    def __init__(self, capacity, n, discount, seed=None):\n        if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:\n            raise ValueError(f"capacity and n must be positive whole numbers, got {capacity} "\n                             f"and {n}")\n        if not 0.0 <= discount <= 1.0:\n            raise ValueError(f"discount must be in [0, 1], got {discount}")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.pending = deque()  # transitions whose n-step return is not known yet\n        self.records = None  # field -> array of capacity rows, made at the first record\n        self.next_slot, self.size = 0, 0\n\n    def __len__(self):\n        return self.size\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append((np.array(observation, dtype=np.float32), int(action),\n                             float(reward), np.array(next_observation, dtype=np.float32),\n                             bool(terminated), bool(truncated)))\n        if terminated or truncated:\n            while self.pending:  # the episode is over: every pending return is known\n                self._complete_oldest()\n        elif len(self.pending) == self.n:\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        """A helper of add\'s: write the record of the oldest waiting transition."""\n        window = list(self.pending)[:self.n]\n        _, _, rewards, _, terminated, truncated = zip(*window)\n        returns, discounts, steps = n_step_return(\n            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)\n        observation, action = window[0][:2]\n        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])\n        self.pending.popleft()\n\n    def _store(self, *fields):\n        """A helper of add\'s: write one record\'s fields into the next slot of the ring."""\n        if self.records is None:\n            self.records = [np.zeros((self.capacity, *np.shape(value)), np.asarray(value).dtype)\n                            for value in fields]\n        for array, value in zip(self.records, fields):\n            array[self.next_slot] = value\n        self.next_slot = (self.next_slot + 1) % self.capacity\n        self.size = min(self.size + 1, self.capacity)\n\n    def sample(self, batch_size):\n        """(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays."""\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f"batch_size must be a positive whole number, got {batch_size}")\n        if self.size == 0:\n            raise ValueError("cannot sample from a buffer that holds no complete record")\n        slots = self.rng.integers(0, self.size, size=int(batch_size))\n        return tuple(array[slots] for array in self.records)\n'

BUFFER_ZERO_DISCOUNT_AS_MISSING_NSTEPREPLAYBUFFER = '#| export\nclass NStepReplayBuffer:\n    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends."""\n\n    def __init__(self, capacity, n, discount, seed=None):\n        if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:\n            raise ValueError(f"capacity and n must be positive whole numbers, got {capacity} "\n                             f"and {n}")\n        if not 0.0 <= discount <= 1.0:\n            raise ValueError(f"discount must be in [0, 1], got {discount}")\n        self.capacity, self.n = int(capacity), int(n)\n        self.discount = float(discount or 0.99)  # 0.99 when none is given\n        self.rng = np.random.default_rng(seed)\n        self.pending = deque()  # transitions whose n-step return is not known yet\n        self.records = None  # field -> array of capacity rows, made at the first record\n        self.next_slot, self.size = 0, 0\n\n    def __len__(self):\n        return self.size\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append((np.array(observation), int(action), float(reward),\n                             np.array(next_observation), bool(terminated), bool(truncated)))\n        if terminated or truncated:\n            while self.pending:  # the episode is over: every pending return is known\n                self._complete_oldest()\n        elif len(self.pending) == self.n:\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        """A helper of add\'s: write the record of the oldest waiting transition."""\n        window = list(self.pending)[:self.n]\n        _, _, rewards, _, terminated, truncated = zip(*window)\n        returns, discounts, steps = n_step_return(\n            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)\n        observation, action = window[0][:2]\n        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])\n        self.pending.popleft()\n\n    def _store(self, *fields):\n        """A helper of add\'s: write one record\'s fields into the next slot of the ring."""\n        if self.records is None:\n            self.records = [np.zeros((self.capacity, *np.shape(value)), np.asarray(value).dtype)\n                            for value in fields]\n        for array, value in zip(self.records, fields):\n            array[self.next_slot] = value\n        self.next_slot = (self.next_slot + 1) % self.capacity\n        self.size = min(self.size + 1, self.capacity)\n\n    def sample(self, batch_size):\n        """(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays."""\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f"batch_size must be a positive whole number, got {batch_size}")\n        if self.size == 0:\n            raise ValueError("cannot sample from a buffer that holds no complete record")\n        slots = self.rng.integers(0, self.size, size=int(batch_size))\n        return tuple(array[slots] for array in self.records)\n'

BUGS = (*BUGS,
    Bug("buffer_observations_as_float32", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": BUFFER_OBSERVATIONS_AS_FLOAT32_NSTEPREPLAYBUFFER},
        description='stores observations and bootstrap observations as float32 (what a network takes): float64 or uint8 observations come back float32',
        rule="records-keep-types", kind="protocol"),
    Bug("buffer_zero_discount_as_missing", LESSON, "test_nstep_records",
        {"NStepReplayBuffer": BUFFER_ZERO_DISCOUNT_AS_MISSING_NSTEPREPLAYBUFFER},
        description='self.discount = float(discount or 0.99): a buffer made with discount 0 stores 0.99-discounted returns',
        rule="records-are-n-step", kind="falsy-as-missing"),
)

# blind round 32's misses
BUFFER_FLATTENS_OBSERVATIONS_NSTEPREPLAYBUFFER = '#| export\nclass NStepReplayBuffer:\n    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends."""\n\n    def __init__(self, capacity, n, discount, seed=None):\n        if int(capacity) != capacity or capacity < 1 or int(n) != n or n < 1:\n            raise ValueError(f"capacity and n must be positive whole numbers, got {capacity} "\n                             f"and {n}")\n        if not 0.0 <= discount <= 1.0:\n            raise ValueError(f"discount must be in [0, 1], got {discount}")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.pending = deque()  # transitions whose n-step return is not known yet\n        self.records = None  # field -> array of capacity rows, made at the first record\n        self.next_slot, self.size = 0, 0\n\n    def __len__(self):\n        return self.size\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append((np.array(observation).ravel(), int(action), float(reward),\n                             np.array(next_observation).ravel(), bool(terminated),\n                             bool(truncated)))  # the network takes flat vectors\n        if terminated or truncated:\n            while self.pending:  # the episode is over: every pending return is known\n                self._complete_oldest()\n        elif len(self.pending) == self.n:\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        """A helper of add\'s: write the record of the oldest waiting transition."""\n        window = list(self.pending)[:self.n]\n        _, _, rewards, _, terminated, truncated = zip(*window)\n        returns, discounts, steps = n_step_return(\n            np.array([rewards]), np.array([terminated]), np.array([truncated]), self.discount)\n        observation, action = window[0][:2]\n        self._store(observation, action, returns[0], discounts[0], window[steps[0] - 1][3])\n        self.pending.popleft()\n\n    def _store(self, *fields):\n        """A helper of add\'s: write one record\'s fields into the next slot of the ring."""\n        if self.records is None:\n            self.records = [np.zeros((self.capacity, *np.shape(value)), np.asarray(value).dtype)\n                            for value in fields]\n        for array, value in zip(self.records, fields):\n            array[self.next_slot] = value\n        self.next_slot = (self.next_slot + 1) % self.capacity\n        self.size = min(self.size + 1, self.capacity)\n\n    def sample(self, batch_size):\n        """(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays."""\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f"batch_size must be a positive whole number, got {batch_size}")\n        if self.size == 0:\n            raise ValueError("cannot sample from a buffer that holds no complete record")\n        slots = self.rng.integers(0, self.size, size=int(batch_size))\n        return tuple(array[slots] for array in self.records)\n'
FRAMES_NBYTES_SKIPS_BOOKKEEPING_FRAMESTACKREPLAY = '#| export\nclass FrameStackReplay:\n    """Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode\'s start (there the episode\'s first\n    frame is repeated)."""\n\n    def __init__(self, capacity, stack, seed=None):\n        if int(capacity) != capacity or int(stack) != stack or stack < 1 or capacity <= stack:\n            raise ValueError("capacity and stack must be whole numbers, capacity > stack >= 1")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None\n        self.actions = np.zeros(self.capacity, np.int64)\n        self.rewards = np.zeros(self.capacity)\n        self.terminated = np.zeros(self.capacity, bool)\n        self.has_transition = np.zeros(self.capacity, bool)  # the next slot is its next frame\n        self.episode_start = np.zeros(self.capacity, np.int64)  # as a count of frames added\n        self.added = 0  # frames ever stored; slot of frame f is f % capacity\n        self.current_start = None\n\n    def _put(self, frame):\n        """A helper of start_episode\'s and add\'s: store one frame in the next slot."""\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.zeros((self.capacity, *frame.shape), frame.dtype)\n        slot = self.added % self.capacity\n        self.frames[slot] = frame\n        self.has_transition[slot] = False\n        self.episode_start[slot] = self.current_start\n        self.added += 1\n\n    def start_episode(self, frame):\n        self.current_start = self.added\n        self._put(frame)\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.current_start is None:\n            raise ValueError("start_episode(frame) comes before the first add")\n        slot = (self.added - 1) % self.capacity\n        self.actions[slot], self.rewards[slot] = action, reward\n        self.terminated[slot], self.has_transition[slot] = terminated, True\n        self._put(next_frame)\n\n    def stack_of(self, frame):\n        """The stack ending at frame number ``frame`` (a count), oldest frame first."""\n        first = self.episode_start[frame % self.capacity]\n        numbers = np.maximum(np.arange(frame - self.stack + 1, frame + 1), first)\n        return self.frames[numbers % self.capacity]\n\n    def sampleable(self):\n        """Frame numbers whose transition and both stacks are still in the ring."""\n        oldest = self.added - min(self.added, self.capacity)\n        numbers = np.arange(oldest, self.added - 1)\n        slots = numbers % self.capacity\n        earliest = np.maximum(numbers - self.stack + 1, self.episode_start[slots])\n        return numbers[self.has_transition[slots] & (earliest >= oldest)]\n\n    def sample(self, batch_size):\n        numbers = self.sampleable()\n        if len(numbers) == 0:\n            raise ValueError("no transition whose stacks are whole is stored yet")\n        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]\n        slots = chosen % self.capacity\n        return (np.stack([self.stack_of(f) for f in chosen]), self.actions[slots].copy(),\n                self.rewards[slots].copy(), np.stack([self.stack_of(f + 1) for f in chosen]),\n                self.terminated[slots].copy())\n\n    @property\n    def nbytes(self):\n        arrays = [self.actions, self.rewards, self.terminated]\n        return sum(array.nbytes for array in arrays) + (0 if self.frames is None\n                                                        else self.frames.nbytes)\n'
BUGS = (*BUGS,
    Bug("buffer_flattens_observations", LESSON, "test_nstep_sample",
        {"NStepReplayBuffer": BUFFER_FLATTENS_OBSERVATIONS_NSTEPREPLAYBUFFER},
        description='add ravels the observations (a network takes vectors): frames of shape (84, 84) come back as rows of 7056',
        rule="records-keep-types", kind="protocol"),
    Bug("frames_nbytes_skips_bookkeeping", LESSON, "test_frame_stacks",
        {"FrameStackReplay": FRAMES_NBYTES_SKIPS_BOOKKEEPING_FRAMESTACKREPLAY},
        description='nbytes counts the frames, actions, rewards and terminated flags but not the two bookkeeping arrays (has-transition flags, episode starts) the buffer also holds',
        rule="frames-once", kind="wrong-formula"),
)
