"""Correct answers written differently from the instructors' ones; every check must pass.

They guard against checks that test one way of writing the code rather than its
behaviour: a numpy ring buffer instead of a deque, ``rng.choice`` instead of
``rng.integers``, a ``while`` loop instead of a ``for`` loop. Those that differ from the
solution in a line or two are written as edits of its cells (``edited``).
"""

from dataclasses import dataclass, field

from . import edited, edited_text
from .lesson02 import CLASS_ON_A_LIST, NUMPY_RING, ring_sample
from .lesson02 import WRITTEN_OUT_LOOP as LESSON02_WRITTEN_OUT_LOOP
from .lesson03 import WRITTEN_OUT_LOOP as LESSON03_WRITTEN_OUT_LOOP
from .lesson05 import WRITTEN_OUT_BUFFER as CER_WRITTEN_OUT
from .lesson05 import WRITTEN_OUT_LOOP as LESSON05_WRITTEN_OUT_LOOP


@dataclass(frozen=True)
class CorrectVariant:
    name: str
    lesson: str
    answers: dict = field(hash=False)  # grade_id -> full source of the answer cell
    description: str = ""


BEST_ACTION_WITH_FLATNONZERO = '''\
#| export
@add_to_class(QLearningAgent)
def get_best_action(self, state):
    """A legal action of maximal Q-value; ties broken uniformly at random by ``self.rng``."""
    actions = np.array(list(self.get_legal_actions(state)))
    qvalues = np.array([self.get_qvalue(state, action) for action in actions])
    return int(self.rng.choice(actions[np.flatnonzero(qvalues == qvalues.max())]))
'''

ACTION_WITH_RNG_CHOICE = edited("01_qlearning", "get_action", (
    """\
    if self.rng.random() < self.epsilon:
        actions = list(self.get_legal_actions(state))
        return int(actions[self.rng.integers(len(actions))])""",
    """\
    explore = self.rng.random() < self.epsilon
    if explore:
        return int(self.rng.choice(list(self.get_legal_actions(state))))"""))

UPDATE_AS_A_STEP_TOWARDS_THE_TARGET = '''\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    """One Q-learning step towards reward + discount * V(next_state) (just the reward
    when the episode terminated)."""
    target = reward if terminated else reward + self.discount * self.get_value(next_state)
    q = self.get_qvalue(state, action)
    self.set_qvalue(state, action, q + self.alpha * (target - q))
'''

LOOP_WITH_WHILE = '''\
#| export
def play_and_train(env, agent, t_max=10_000):
    """Play one episode, updating ``agent`` after every step; return the total reward."""
    state, _ = env.reset()
    total_reward, steps, done = 0.0, 0, False
    while not done and steps < t_max:
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        steps += 1
        state, done = next_state, terminated or truncated
    return total_reward
'''

ADD_TO_A_LIST_WITH_POP_ZERO = edited("02_replay_buffer", "buffer_add", (
    "    self._storage.append(",
    "    if len(self._storage) == self.size:\n"
    "        self._storage.pop(0)\n"
    "    self._storage.append("))

SAMPLE_NUMPY_RING = ring_sample("""\
    indices = self.rng.integers(self._count, size=batch_size)
    return tuple(field[indices] for field in self._fields)  # fancy indexing copies""")

SAMPLE_READ_ONLY_COPIES = edited("02_replay_buffer", "buffer_sample", (
    "    return tuple(np.stack(field) for field in zip(*batch))",
    """\
    fields = tuple(np.stack(field) for field in zip(*batch))
    for array in fields:
        array.flags.writeable = False  # new arrays, and nobody can change them by mistake
    return fields"""))

# A sum tree with a Python loop per slot and per mass, as students often start: slow,
# but correct, so every check must pass it.
TREE_UPDATE_ONE_SLOT_AT_A_TIME = '''\
#| export
@add_to_class(SumTree)
def update(self, slots, priorities):
    """Set the priorities of ``slots``, one at a time, walking up to the root."""
    slots = self.checked_slots(slots)
    priorities = np.broadcast_to(np.asarray(priorities, dtype=np.float64), slots.shape)
    if not np.all(np.isfinite(priorities)) or np.any(priorities < 0):
        raise ValueError(f"priorities must be finite and non-negative, got {priorities}")
    for slot, priority in zip(slots.tolist(), priorities.tolist()):
        node = self.leaf_count + slot
        self.nodes[node] = priority
        while node > 1:
            node //= 2
            self.nodes[node] = self.nodes[2 * node] + self.nodes[2 * node + 1]
'''

TREE_SEARCH_ONE_MASS_AT_A_TIME = '''\
#| export
@add_to_class(SumTree)
def find_prefix_sum(self, masses):
    """The slot of each mass, one mass at a time."""
    total = self.total
    if total <= 0:
        raise ValueError("the tree holds no priority")
    found = []
    for mass in np.atleast_1d(np.asarray(masses, dtype=np.float64)).tolist():
        mass = min(max(mass, 0.0), np.nextafter(total, 0.0))
        node = 1
        while node < self.leaf_count:
            if mass < self.nodes[2 * node] or self.nodes[2 * node + 1] == 0:
                node = 2 * node
            else:
                mass -= self.nodes[2 * node]
                node = 2 * node + 1
        found.append(min(node - self.leaf_count, self.capacity - 1))
    return np.array(found, dtype=np.int64)
'''

WEIGHTS_FROM_THE_SMALLEST_PROBABILITY = edited("03_prioritized_replay", "per_sample", (
    """\
    weights = (len(self) * probabilities) ** -beta
    return (*self.storage[slots], weights / weights.max(), slots)""",
    """\
    # (N P_i)^-b / max_j (N P_j)^-b = (P_i / P_min)^-b: N cancels
    weights = (probabilities / probabilities.min()) ** -beta
    return (*self.storage[slots], weights, slots)"""))

# An episode in proportion to its length, then a step in it: uniform over transitions too.
EPISODES_IN_PROPORTION_TO_LENGTH = edited("04_hindsight_replay", "her_sample", (
    """\
    ends = np.cumsum(self.lengths)  # transitions stored up to and including each row
    flat = self.rng.integers(total, size=batch_size)  # uniform over all transitions
    episodes = np.searchsorted(ends, flat, side="right")
    steps = flat - (ends[episodes] - self.lengths[episodes])""",
    """\
    episodes = self.rng.choice(self.max_episodes, size=batch_size, p=self.lengths / total)
    steps = self.rng.integers(self.lengths[episodes])"""))

GOAL_AGENT_ON_A_DEFAULTDICT = edited("04_hindsight_replay", "goal_agent", (
    "        self.table = {}  # (state, goal) -> the n_bits Q-values of that pair",
    "        self.table = defaultdict(lambda: defaultdict(lambda: initial_value))"), (
    """\
        row = self.table.get(pair)
        return self.initial_value if row is None else row[action]""",
    "        return self.table[pair][action]"), (
    """\
        if pair not in self.table:
            self.table[pair] = [self.initial_value] * self.n_bits
        self.table[pair][action] = value""",
    "        self.table[pair][action] = value"), (
    "import numpy as np\n", "from collections import defaultdict\n\nimport numpy as np\n"))


# --- one more per lesson (issue 12): other layouts, other orders of random draws, scipy ----

# The exploring action is drawn before the coin is tossed, every call (a different order
# and number of draws), and ties are broken by shuffling them: same distributions.
ACTION_DRAWN_BEFORE_THE_COIN = edited("01_qlearning", "get_action", (
    """\
    if self.rng.random() < self.epsilon:
        actions = list(self.get_legal_actions(state))
        return int(actions[self.rng.integers(len(actions))])
    return self.get_best_action(state)""",
    """\
    actions = list(self.get_legal_actions(state))
    random_action = int(actions[self.rng.integers(len(actions))])
    explore = self.rng.random() < self.epsilon
    return random_action if explore else self.get_best_action(state)"""))

BEST_ACTION_BY_SHUFFLING_TIES = edited("01_qlearning", "get_best_action", (
    "    return int(tied[self.rng.integers(len(tied))])",
    "    return self.rng.permutation(tied)[0].item()"))

# Indices from rng.choice, fields gathered one at a time from a list copy.
SAMPLE_FIELD_BY_FIELD = edited("02_replay_buffer", "buffer_sample", (
    """\
    indices = self.rng.integers(len(self._storage), size=batch_size)
    batch = [self._storage[i] for i in indices]
    return tuple(np.stack(field) for field in zip(*batch))""",
    """\
    stored = list(self._storage)
    indices = self.rng.choice(len(stored), size=batch_size, replace=True)
    return tuple(np.array([stored[i][field] for i in indices]) for field in range(5))"""))

# Each stratum's mass from rng.uniform(low, high), drawn last segment first.
PER_MASSES_FROM_UNIFORM_BACKWARDS = edited("03_prioritized_replay", "per_sample", (
    "    masses = (np.arange(batch_size) + self.rng.random(batch_size)) * (total / batch_size)",
    """\
    segment = total / batch_size
    lows = np.arange(batch_size)[::-1] * segment  # the last segment's mass drawn first
    masses = self.rng.uniform(lows, lows + segment)[::-1]"""))

# Goal steps from rng.integers(low, high) with array bounds, one draw for every strategy.
GOAL_STEPS_WITH_INTEGERS = edited("04_hindsight_replay", "hindsight_goal_steps", (
    "    return first + (rng.random(steps.shape) * choices).astype(np.int64)",
    "    return rng.integers(first, first + choices)  # high is exclusive: first .. T"))

# The rest drawn first with rng.choice, the newest appended last.
CER_NEWEST_LAST = edited_text("lesson 05's written-out buffer", CER_WRITTEN_OUT, (
    """\
        older = len(self._storage) - 1  # the newest is self._storage[-1]
        rows = [self._storage[-1]]
        if older:
            rows += [self._storage[i] for i in self.rng.integers(older, size=batch_size - 1)]
        return tuple(np.stack(field) for field in zip(*rows))""",
    """\
        stored = list(self._storage)
        rows = ([stored[i] for i in self.rng.choice(len(stored) - 1, size=batch_size - 1)]
                if len(stored) > 1 else [])
        rows.append(stored[-1])  # the newest, once, at the end of the batch
        return tuple(np.stack(field) for field in zip(*rows))"""))

CI_WITH_SCIPY_INTERVAL = edited("06_capstone", "confidence_interval", (
    """\
    mean = float(values.mean())
    if np.all(values == values[0]):  # no spread: s is 0 (rounding would leave ~1e-17)
        return mean, mean, mean
    half_width = float(stats.sem(values) * stats.t.ppf((1 + confidence) / 2, values.size - 1))
    return mean, mean - half_width, mean + half_width""",
    """\
    mean = float(np.mean(values))
    if np.all(values == values[0]):  # scipy gives (nan, nan) for a zero standard error
        return mean, mean, mean
    low, high = stats.t.interval(confidence, values.size - 1, loc=mean,
                                 scale=stats.sem(values))
    return mean, float(low), float(high)"""))

THRESHOLD_WITH_A_RUNNING_SUM = edited("06_capstone", "episodes_to_threshold", (
    """\
    # each window's sum against threshold x window: exact for whole-number returns,
    # where means made with weights 1/window round (three 7s would average 6.999...)
    window_sums = np.convolve(returns, np.ones(window), mode="valid")
    reached = np.flatnonzero(window_sums >= threshold * window)
    return int(reached[0] + window) if reached.size else None  # a Python int""",
    """\
    for end in range(window, returns.size + 1):
        if returns[end - window:end].mean() >= threshold:
            return end
    return None"""))

AUTOCORRELATION_WITH_PEARSONR = edited("06_capstone", "autocorrelation", (
    "    return float(np.corrcoef(before, after)[0, 1])",
    "    return float(stats.pearsonr(before, after)[0])"))
# Lesson 07: targets with (1 - terminated), Huber written with a clipped error, the
# gradient filled row by row, the step unpacking the batch by position, a schedule that
# copies the parameters itself.
TARGETS_WITH_ONE_MINUS_TERMINATED = '''\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    """r + discount * max_a' Q_target(s', a') for each row; just r where terminated."""
    not_ended = 1.0 - np.asarray(terminated, dtype=np.float64)
    return rewards + discount * not_ended * np.max(target_network.predict(next_observations), 1)
'''

HUBER_FROM_A_CLIPPED_ERROR = '''\
#| export
def huber_loss(q_values, actions, targets, weights):
    """mean over the batch of weights[i] * huber(q_values[i, actions[i]] - targets[i])."""
    errors = np.take_along_axis(np.asarray(q_values), np.asarray(actions)[:, None], 1)[:, 0]
    errors = errors - targets
    clipped = np.clip(errors, -1.0, 1.0)  # huber(x) = c * (|x| - |c| / 2), c = clip(x)
    return float(np.dot(weights, clipped * (errors - clipped / 2)) / len(errors))
'''

GRADIENT_ROW_BY_ROW = '''\
#| export
def huber_loss_gradient(q_values, actions, targets, weights):
    """d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken."""
    gradient = np.zeros(np.shape(q_values))
    for row, action in enumerate(actions):
        error = q_values[row][action] - targets[row]
        gradient[row, action] = weights[row] * max(-1.0, min(1.0, error)) / len(actions)
    return gradient
'''

STEP_UNPACKING_BY_POSITION = '''\
#| export
def dqn_step(online, target, optimizer, replay, batch_size, discount, beta=None):
    """One DQN gradient step on a batch from ``replay`` (prioritized when ``beta`` is
    given); returns the batch's TD errors, targets - Q(s, a), before the step."""
    batch = replay.sample(batch_size) if beta is None else replay.sample(batch_size, beta)
    observations, actions = batch[0], np.asarray(batch[1]).astype(int)
    weights = np.ones(len(actions)) if beta is None else batch[5]
    targets = td_targets(target, batch[2], batch[3], batch[4], discount)
    q_values = online.predict(observations)
    gradients = online.gradients(observations,
                                 huber_loss_gradient(q_values, actions, targets, weights))
    td_errors = targets - q_values[np.arange(len(actions)), actions]
    if beta is not None:
        replay.update_priorities(batch[6], np.abs(td_errors))
    optimizer.step(gradients)
    return td_errors
'''

SYNC_COPYING_ITSELF = '''\
#| export
def sync_target(online, target, step, period):
    """Copy the online network's parameters into the target at every multiple of
    ``period``; return whether it did."""
    due = not step % period
    if due:
        target.load_parameters([array.copy() for array in online.parameters()])
    return due
'''

# Public attributes of the lesson's QNetwork, through the networks the tests lend: the
# targets read the network's sizes; the schedule assigns copies of the weights and biases,
# or copies the online arrays into the target's own, in place.
TARGETS_READING_THE_SIZES = '''\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    """r + discount * max_a' Q_target(s', a') for each row; just r where terminated."""
    observations = np.reshape(next_observations, (-1, target_network.sizes[0]))
    best = target_network.predict(observations).max(axis=1)
    return np.where(terminated, rewards, rewards + discount * best)
'''

SYNC_ASSIGNING_THE_ARRAYS = '''\
#| export
def sync_target(online, target, step, period):
    """Every ``period`` steps, give the target copies of the online network's arrays."""
    if step % period:
        return False
    target.weights = [weight.copy() for weight in online.weights]
    target.biases = [bias.copy() for bias in online.biases]
    return True
'''

SYNC_INTO_THE_TARGETS_ARRAYS = '''\
#| export
def sync_target(online, target, step, period):
    """Every ``period`` steps, copy the online network's arrays into the target's own."""
    if step % period:
        return False
    for mine, theirs in zip(target.weights + target.biases, online.weights + online.biases):
        np.copyto(mine, theirs)
    return True
'''



# --- blind round 15's correct variants, written from the lesson text alone ---------

DICT_ROWS_INTEGERS_AND_EXPLICIT_LOOP_GOAL_AGENT = '''\
#| export
import numpy as np

from course.bit_flipping import bits_to_int
from qlearning import QLearningAgent


class GoalConditionedAgent(QLearningAgent):
    """Lesson 01's Q-learning on pairs ``(state, goal)`` of bits_to_int numbers.

    The legal actions of every pair are the ``n_bits`` flips. A Q-value never set is
    ``initial_value``.
    """

    def __init__(self, n_bits, alpha, epsilon, discount, initial_value=-10.0, seed=None):
        self.n_bits = n_bits
        self.initial_value = initial_value
        self.qvalues_by_pair = {}  # (state, goal) -> {action: Q-value}, only what was set
        super().__init__(alpha, epsilon, discount, self._flips, seed=seed)

    def _flips(self, pair):
        return range(self.n_bits)

    def get_qvalue(self, pair, action):
        """Q(pair, action); ``initial_value`` if never set."""
        return self.qvalues_by_pair.get(pair, {}).get(action, self.initial_value)

    def set_qvalue(self, pair, action, value):
        self.qvalues_by_pair.setdefault(pair, {})[action] = value
'''


DICT_ROWS_INTEGERS_AND_EXPLICIT_LOOP_HINDSIGHT_GOAL_STEPS = '''\
#| export
HER_STRATEGIES = ("future", "final", "episode")


def hindsight_goal_steps(strategy, steps, lengths, rng):
    """For transitions at ``steps`` of episodes of ``lengths`` steps, the index into each
    episode's T + 1 achieved goals of a substitute goal, drawn with ``rng``: 'future'
    t+1 .. T, 'final' T, 'episode' 1 .. T (uniformly)."""
    steps = np.asarray(steps, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if strategy == "future":
        return rng.integers(steps + 1, lengths, endpoint=True)
    if strategy == "episode":
        return rng.integers(1, lengths, endpoint=True)
    if strategy == "final":
        return np.array(lengths)  # a copy, never the caller's
    raise ValueError(f"unknown strategy {strategy!r}: use one of {HER_STRATEGIES}")
'''


DICT_ROWS_INTEGERS_AND_EXPLICIT_LOOP_PLAY_AND_LEARN_WITH_HER = '''\
#| export
def play_and_learn_with_her(env, agent, replay, batch_size):
    """Play one episode, store it in ``replay``, then learn from one batch of it.
    Returns True if the episode reached its goal."""
    first, _ = env.reset()
    goal_bits = first["desired_goal"]
    goal = int(bits_to_int(goal_bits))
    episode_obs, episode_achieved, episode_actions = ([first["observation"]],
                                                      [first["achieved_goal"]], [])
    observation, done, reached = first, False, False
    while not done:
        state = int(bits_to_int(observation["observation"]))
        action = agent.get_action((state, goal))
        observation, _, terminated, truncated, _ = env.step(action)
        episode_obs.append(observation["observation"])
        episode_achieved.append(observation["achieved_goal"])
        episode_actions.append(action)
        reached = bool(terminated)
        done = bool(terminated) or bool(truncated)
    replay.store_episode(episode_obs, episode_achieved, goal_bits, episode_actions)
    obs, acts, rews, next_obs, terms, goals = replay.sample(batch_size)
    states, next_states, goal_numbers = bits_to_int(obs), bits_to_int(next_obs), bits_to_int(goals)
    for i in range(len(acts)):
        row_goal = int(goal_numbers[i])
        agent.update((int(states[i]), row_goal), int(acts[i]), float(rews[i]),
                     (int(next_states[i]), row_goal), bool(terms[i]))
    return reached
'''


WHERE_BEFORE_MAX_AND_CLIPPED_QUADRATIC_TD_TARGETS = '''\
#| export
import numpy as np


def td_targets(target_network, rewards, next_observations, terminated, discount):
    """r + discount * max_a' Q_target(s', a') for each row; just r where terminated."""
    next_q = target_network.predict(next_observations)
    done = np.asarray(terminated, dtype=bool)
    next_q = np.where(done[:, None], 0.0, next_q)  # no next state: nothing to bootstrap
    return np.asarray(rewards, dtype=np.float64) + discount * next_q.max(axis=1)
'''


WHERE_BEFORE_MAX_AND_CLIPPED_QUADRATIC_HUBER_LOSS = '''\
#| export
def huber_loss(q_values, actions, targets, weights):
    """mean over the batch of weights[i] * huber(q_values[i, actions[i]] - targets[i])."""
    q = np.asarray(q_values, dtype=np.float64)
    chosen = np.asarray(actions, dtype=np.intp)[:, None]
    taken = np.take_along_axis(q, chosen, axis=1)[:, 0]
    size = np.abs(taken - np.asarray(targets, dtype=np.float64))
    inner = np.minimum(size, 1.0)
    per_row = 0.5 * inner ** 2 + (size - inner)  # quadratic up to 1, then linear
    return float(np.sum(np.asarray(weights, dtype=np.float64) * per_row) / len(per_row))
'''


WHERE_BEFORE_MAX_AND_CLIPPED_QUADRATIC_HUBER_LOSS_GRADIENT = '''\
#| export
def huber_loss_gradient(q_values, actions, targets, weights):
    """d huber_loss / d q_values: shape of q_values, nonzero only at the actions taken."""
    q = np.asarray(q_values, dtype=np.float64)
    actions = np.asarray(actions, dtype=np.intp)
    delta = q[np.arange(len(actions)), actions] - np.asarray(targets, dtype=np.float64)
    slope = np.sign(delta) * np.minimum(np.abs(delta), 1.0)
    per_row = np.asarray(weights, dtype=np.float64) * slope / len(actions)
    one_hot = np.eye(q.shape[1], dtype=bool)[actions]
    return np.where(one_hot, per_row[:, None], 0.0)
'''


SEARCH_ONE_MASS_AT_A_TIME_SUMTREE_FIND_PREFIX_SUM = '''\
#| export
@add_to_class(SumTree)
def find_prefix_sum(self, masses):
    """For each mass m, the slot i with p_0 + ... + p_(i-1) <= m < p_0 + ... + p_i: the
    slot whose share of the total holds m. Masses are clamped into [0, total) first."""
    total = self.total
    if not total > 0:
        raise ValueError("cannot search a sum tree whose priorities are all zero")
    masses = np.clip(np.asarray(masses, dtype=np.float64), 0.0, np.nextafter(total, 0.0))
    slots = np.empty(masses.shape, dtype=np.int64)
    for index, mass in np.ndenumerate(masses):
        node = 1
        while node < self.leaf_count:
            left = 2 * node
            if mass >= self.nodes[left]:  # past the left subtree: go right
                mass -= self.nodes[left]
                node = left + 1
            else:
                node = left
        slots[index] = min(node - self.leaf_count, self.capacity - 1)
    return slots
'''


CER_INDEXES_THE_OLDER_DIRECTLY_CER_BUFFER = '''\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    """Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored)."""

    def sample(self, batch_size):
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if len(self._storage) == 0:
            raise ValueError("cannot sample from an empty replay buffer: add transitions first")
        n_older = len(self._storage) - 1
        rows = [self._storage[-1]]
        if batch_size > 1 and n_older > 0:
            indices = self.rng.integers(n_older, size=batch_size - 1)
            rows.extend(self._storage[i] for i in indices)
        return tuple(np.stack(field) for field in zip(*rows))
'''


LIST_RING_WITH_AGE_INDEX_BUFFER_CLASS = """\
#| export
from collections import deque

import numpy as np

from course.with_update import WithUpdate
from qlearning import play_and_train


class ReplayBuffer:
    \"\"\"A FIFO store of transitions (obs_t, action, reward, obs_tp1, done).

    Holds at most ``size`` transitions, dropping the oldest first. ``seed`` seeds the
    buffer's own generator, ``self.rng``, which ``sample`` draws from.
    \"\"\"

    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError(f"a replay buffer needs a size of at least 1, got {size}")
        self.size = size
        self._slots = []  # grows to size, then each add overwrites the oldest slot
        self._oldest = 0  # slot of the oldest transition once the list is full
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        \"\"\"The number of transitions stored now (never more than ``size``).\"\"\"
        return len(self._slots)
"""

LIST_RING_WITH_AGE_INDEX_BUFFER_ADD = """\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    \"\"\"Store one transition, evicting the oldest if the buffer is full. Copies arrays.\"\"\"
    transition = (np.array(obs_t), np.array(action), np.array(reward), np.array(obs_tp1),
                  np.array(done))
    if len(self._slots) < self.size:
        self._slots.append(transition)
    else:
        self._slots[self._oldest] = transition
        self._oldest = (self._oldest + 1) % self.size
"""

LIST_RING_WITH_AGE_INDEX_BUFFER_SAMPLE = """\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    \"\"\"``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask).\"\"\"
    if batch_size <= 0:
        raise ValueError(f"sample needs a positive batch_size, got {batch_size}")
    count = len(self._slots)
    if count == 0:
        raise ValueError("the replay buffer is empty: add a transition before sampling")
    ages = self.rng.integers(count, size=batch_size)  # 0 is the oldest
    slots = (self._oldest + ages) % count
    rows = [self._slots[slot] for slot in slots]
    return tuple(np.stack([row[k] for row in rows]) for k in range(5))
"""

CER_DEL_AND_CONCATENATE_CER_BUFFER = """\
#| export
import math

import gymnasium as gym
import numpy as np

from course.with_update import WithUpdate
from qlearning import QLearningAgent, play_and_train
from replay_buffer import ReplayBuffer


class CombinedReplayBuffer(ReplayBuffer):
    \"\"\"Combined experience replay (Zhang & Sutton, 2017): each batch is the newest
    transition, once, plus ``batch_size - 1`` drawn uniformly, with replacement, from the
    transitions stored before it (just the newest while nothing else is stored).\"\"\"

    def sample(self, batch_size):
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if len(self) == 0:
            raise ValueError("cannot sample from an empty replay buffer: add transitions first")
        newest = self._storage[-1]
        others = None
        if batch_size > 1 and len(self) > 1:
            del self._storage[-1]
            try:
                others = super().sample(batch_size - 1)
            finally:
                self._storage.append(newest)
        fields = []
        for i, value in enumerate(newest):
            head = np.array(value)[np.newaxis]  # a copy, with the batch axis in front
            fields.append(head if others is None else np.concatenate([head, others[i]]))
        return tuple(fields)
"""

THRESHOLD_STREAMING_DEQUE_EPISODES_TO_THRESHOLD = """\
#| export
def episodes_to_threshold(returns, threshold, window):
    \"\"\"The number of episodes after which the mean of the last ``window`` returns first
    reaches ``threshold`` (full windows only), or None if it never does.\"\"\"
    import math
    from collections import deque

    last = deque(maxlen=int(window))
    for episode, value in enumerate(returns, start=1):
        last.append(float(value))
        if len(last) == window and math.fsum(last) >= threshold * window:
            return episode
    return None
"""


CORRECT_VARIANTS = (
    CorrectVariant("agent_written_with_numpy_and_a_while_loop", "01_qlearning",
                   {"get_best_action": BEST_ACTION_WITH_FLATNONZERO,
                    "get_action": ACTION_WITH_RNG_CHOICE,
                    "update": UPDATE_AS_A_STEP_TOWARDS_THE_TARGET,
                    "play_and_train": LOOP_WITH_WHILE},
                   description="np.flatnonzero ties, rng.choice exploration, "
                               "q + alpha (target - q), a while loop"),
    CorrectVariant("buffer_on_a_list_with_pop_zero", "02_replay_buffer",
                   {"buffer_class": CLASS_ON_A_LIST,
                    "buffer_add": ADD_TO_A_LIST_WITH_POP_ZERO},
                   description="a list that drops its first item when full"),
    CorrectVariant("buffer_as_a_numpy_ring", "02_replay_buffer",
                   {**NUMPY_RING, "buffer_sample": SAMPLE_NUMPY_RING},
                   description="preallocated arrays and a write position, like SB3"),
    CorrectVariant("buffer_sampling_read_only_copies", "02_replay_buffer",
                   {"buffer_sample": SAMPLE_READ_ONLY_COPIES},
                   description="sample returns new arrays marked read-only: nothing can "
                               "alias the storage"),
    CorrectVariant("sum_tree_with_python_loops", "03_prioritized_replay",
                   {"sumtree_update": TREE_UPDATE_ONE_SLOT_AT_A_TIME,
                    "sumtree_find_prefix_sum": TREE_SEARCH_ONE_MASS_AT_A_TIME},
                   description="one slot and one mass at a time: slow but right"),
    CorrectVariant("weights_from_the_smallest_probability", "03_prioritized_replay",
                   {"per_sample": WEIGHTS_FROM_THE_SMALLEST_PROBABILITY},
                   description="(P_i / P_min)^-beta, the same weights without N"),
    CorrectVariant("her_episodes_in_proportion_to_length", "04_hindsight_replay",
                   {"her_sample": EPISODES_IN_PROPORTION_TO_LENGTH},
                   description="an episode drawn in proportion to its length, then a step"),
    CorrectVariant("goal_agent_on_a_defaultdict", "04_hindsight_replay",
                   {"goal_agent": GOAL_AGENT_ON_A_DEFAULTDICT},
                   description="Q-values in nested defaultdicts"),
    CorrectVariant("exploring_action_drawn_before_the_coin", "01_qlearning",
                   {"get_action": ACTION_DRAWN_BEFORE_THE_COIN,
                    "get_best_action": BEST_ACTION_BY_SHUFFLING_TIES},
                   description="the random action drawn every call before the coin; ties "
                               "shuffled with rng.permutation"),
    CorrectVariant("sample_field_by_field_with_choice", "02_replay_buffer",
                   {"buffer_sample": SAMPLE_FIELD_BY_FIELD},
                   description="rng.choice indices, each field gathered from a list copy"),
    CorrectVariant("per_masses_from_uniform_backwards", "03_prioritized_replay",
                   {"per_sample": PER_MASSES_FROM_UNIFORM_BACKWARDS},
                   description="stratum masses from rng.uniform(low, high), drawn in "
                               "reverse order"),
    CorrectVariant("her_goal_steps_with_integers", "04_hindsight_replay",
                   {"hindsight_goal_steps": GOAL_STEPS_WITH_INTEGERS},
                   description="rng.integers(first, T + 1) with array bounds"),
    CorrectVariant("loop_written_out_in_full", "02_replay_buffer",
                   {"play_and_train_with_replay": LESSON02_WRITTEN_OUT_LOOP},
                   description="the whole episode loop again, not lesson 01's "
                               "play_and_train with another learning step"),
    CorrectVariant("per_loop_written_out_in_full", "03_prioritized_replay",
                   {"play_and_train_with_per": LESSON03_WRITTEN_OUT_LOOP},
                   description="the whole episode loop again, not lesson 01's "
                               "play_and_train with another learning step"),
    CorrectVariant("cer_written_out_in_full", "05_combined_replay",
                   {"cer_buffer": CER_WRITTEN_OUT,
                    "play_and_train_from_replay": LESSON05_WRITTEN_OUT_LOOP},
                   description="sample's checks, draw and stacking written again rather "
                               "than lesson 02's sample reused; the whole loop again"),
    CorrectVariant("cer_newest_last", "05_combined_replay",
                   {"cer_buffer": CER_NEWEST_LAST},
                   description="the rest drawn first with rng.choice, the newest appended "
                               "at the end of the batch"),
    CorrectVariant("capstone_with_scipy_and_loops", "06_capstone",
                   {"confidence_interval": CI_WITH_SCIPY_INTERVAL,
                    "episodes_to_threshold": THRESHOLD_WITH_A_RUNNING_SUM,
                    "autocorrelation": AUTOCORRELATION_WITH_PEARSONR},
                   description="scipy.stats.t.interval and pearsonr, a loop over windows"),
    CorrectVariant("dqn_written_another_way", "07_neural_replay",
                   {"td_targets": TARGETS_WITH_ONE_MINUS_TERMINATED,
                    "huber_loss": HUBER_FROM_A_CLIPPED_ERROR,
                    "huber_loss_gradient": GRADIENT_ROW_BY_ROW,
                    "dqn_step": STEP_UNPACKING_BY_POSITION, "sync_target": SYNC_COPYING_ITSELF},
                   description="(1 - terminated), Huber from a clipped error, a gradient "
                               "filled row by row, |TD errors| as priorities, not-modulo"),
    CorrectVariant("dqn_through_network_attributes", "07_neural_replay",
                   {"td_targets": TARGETS_READING_THE_SIZES,
                    "sync_target": SYNC_ASSIGNING_THE_ARRAYS},
                   description="target_network.sizes read; target.weights and target.biases "
                               "assigned copies of the online network's"),
    CorrectVariant("sync_into_the_targets_arrays", "07_neural_replay",
                   {"sync_target": SYNC_INTO_THE_TARGETS_ARRAYS},
                   description="np.copyto into the target's own arrays, in place"),
    CorrectVariant("dict_rows_integers_and_explicit_loop", "04_hindsight_replay",
                   {"goal_agent": DICT_ROWS_INTEGERS_AND_EXPLICIT_LOOP_GOAL_AGENT, "hindsight_goal_steps": DICT_ROWS_INTEGERS_AND_EXPLICIT_LOOP_HINDSIGHT_GOAL_STEPS, "play_and_learn_with_her": DICT_ROWS_INTEGERS_AND_EXPLICIT_LOOP_PLAY_AND_LEARN_WITH_HER},
                   description='the agent keeps {pair: {action: value}} with get(..., initial_value) and a bound-method legal-actions function; goal steps drawn with rng.integers(low, high, endpoint=True); the loop tracks success and updates by index with explicit int/float/bool conversions'),
    CorrectVariant("where_before_max_and_clipped_quadratic", "07_neural_replay",
                   {"td_targets": WHERE_BEFORE_MAX_AND_CLIPPED_QUADRATIC_TD_TARGETS, "huber_loss": WHERE_BEFORE_MAX_AND_CLIPPED_QUADRATIC_HUBER_LOSS, "huber_loss_gradient": WHERE_BEFORE_MAX_AND_CLIPPED_QUADRATIC_HUBER_LOSS_GRADIENT},
                   description='td_targets zeroes the next Q-values of terminated rows with a 2-d np.where before the max; huber_loss writes huber as min(|δ|,1)²/2 + (|δ| - min(|δ|,1)) with take_along_axis; the gradient places w·sign(δ)·min(|δ|,1)/B through a boolean one-hot mask (np.eye)'),
    CorrectVariant("search_one_mass_at_a_time", "03_prioritized_replay",
                   {"sumtree_find_prefix_sum": SEARCH_ONE_MASS_AT_A_TIME_SUMTREE_FIND_PREFIX_SUM},
                   description="copies the masses, clamps them into [0, total), walks each one down the tree with a scalar loop (right when m >= left sum), clamps to capacity - 1 and returns an int64 array of the masses' shape (empty included)"),
    CorrectVariant("cer_indexes_the_older_directly", "05_combined_replay",
                   {"cer_buffer": CER_INDEXES_THE_OLDER_DIRECTLY_CER_BUFFER},
                   description='never touches the deque: validates, draws batch_size - 1 indices among the len - 1 older transitions with self.rng.integers (the very call lesson 02 makes on the older ones) and stacks the newest first'),
    CorrectVariant("list_ring_with_age_index", "02_replay_buffer",
                   {"buffer_class": LIST_RING_WITH_AGE_INDEX_BUFFER_CLASS, "buffer_add": LIST_RING_WITH_AGE_INDEX_BUFFER_ADD, "buffer_sample": LIST_RING_WITH_AGE_INDEX_BUFFER_SAMPLE},
                   description="a list that grows to size and then overwrites the oldest slot at a write position; sample draws ages 0..len-1 from self.rng and maps them to slots from the oldest, so it returns the reference's very batches"),
    CorrectVariant("cer_del_and_concatenate", "05_combined_replay",
                   {"cer_buffer": CER_DEL_AND_CONCATENATE_CER_BUFFER},
                   description="validates itself, sets the newest aside with del, draws the others with lesson 02's sample (same generator calls), joins field by field"),
    CorrectVariant("threshold_streaming_deque", "06_capstone",
                   {"episodes_to_threshold": THRESHOLD_STREAMING_DEQUE_EPISODES_TO_THRESHOLD},
                   description="keeps the last int(window) returns in a deque, compares their exact sum (math.fsum) with threshold * window once the deque is full, and returns the 1-based episode number (a Python int)"),
)


# --- lesson 08 ---------------------------------------------------------------------------------

RETURNS_BY_ROW_N_STEP_RETURN = '''\
#| export
from collections import deque

import numpy as np


def n_step_return(rewards, terminated, truncated, discount):
    """Row by row: the discounted rewards up to the first end, its discount and length."""
    returns, discounts, steps = [], [], []
    for row_rewards, row_terminated, row_truncated in zip(rewards, terminated, truncated):
        total, power, m, ended_by_termination = 0.0, 1.0, len(row_rewards), False
        for k in range(len(row_rewards)):
            total += power * float(row_rewards[k])
            power *= discount
            if row_terminated[k] or row_truncated[k]:
                m, ended_by_termination = k + 1, bool(row_terminated[k])
                break
        returns.append(total)
        discounts.append(0.0 if ended_by_termination else float(discount) ** m)
        steps.append(m)
    return (np.array(returns, dtype=np.float64), np.array(discounts, dtype=np.float64),
            np.array(steps, dtype=np.int64))
'''

RING_OF_ROWS_NSTEP_BUFFER = '''\
#| export
class NStepReplayBuffer:
    """n-step records in one numpy array per field, written at a position that wraps;
    waiting transitions in a plain list."""

    def __init__(self, capacity, n, discount, seed=None):
        for name, value in (("capacity", capacity), ("n", n)):
            if value != int(value) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, got {value}")
        if discount < 0 or discount > 1:
            raise ValueError(f"discount must lie in [0, 1], got {discount}")
        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)
        self.rng = np.random.default_rng(seed)
        self.waiting = []
        self.fields = None
        self.position = self.count = 0

    def __len__(self):
        return int(self.count)

    def add(self, observation, action, reward, next_observation, terminated, truncated):
        self.waiting.append([np.copy(observation), action, reward, np.copy(next_observation),
                             bool(terminated), bool(truncated)])
        if terminated or truncated:
            while self.waiting:
                self._write_first()
        elif len(self.waiting) >= self.n:
            self._write_first()

    def _write_first(self):
        window = self.waiting[:self.n]
        rewards = np.array([[step[2] for step in window]], dtype=np.float64)
        ends = np.array([[step[4] for step in window]]), np.array([[step[5] for step in window]])
        returns, discounts, steps = n_step_return(rewards, *ends, self.discount)
        first = window[0]
        row = (first[0], first[1], returns[0], discounts[0], window[int(steps[0]) - 1][3])
        if self.fields is None:
            self.fields = [np.empty((self.capacity,) + np.shape(value), dtype=np.asarray(value).dtype)
                           for value in row]
        for array, value in zip(self.fields, row):
            array[self.position] = value
        self.position = (self.position + 1) % self.capacity
        self.count = min(self.count + 1, self.capacity)
        del self.waiting[0]

    def sample(self, batch_size):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if self.count == 0:
            raise ValueError("the buffer holds no complete n-step record yet")
        chosen = self.rng.choice(self.count, size=int(batch_size), replace=True)
        return tuple(np.take(array, chosen, axis=0) for array in self.fields)
'''

EPISODE_IDS_FRAME_STACKS = '''\
#| export
class FrameStackReplay:
    """Frames in a ring with each slot's frame number and whether it starts an episode;
    a stack is rebuilt by walking back from its frame to the episode's start."""

    def __init__(self, capacity, stack, seed=None):
        if capacity != int(capacity) or stack != int(stack) or not capacity > stack >= 1:
            raise ValueError(f"need whole numbers with capacity > stack >= 1, got {capacity}, {stack}")
        self.capacity, self.stack = int(capacity), int(stack)
        self.rng = np.random.default_rng(seed)
        self.frames = None
        self.number = np.full(self.capacity, -1, dtype=np.int64)  # frame number held, -1 none
        self.starts = np.zeros(self.capacity, dtype=bool)
        self.action = np.zeros(self.capacity, dtype=np.int64)
        self.reward = np.zeros(self.capacity)
        self.done = np.zeros(self.capacity, dtype=bool)
        self.leads_on = np.zeros(self.capacity, dtype=bool)
        self.stored = 0

    def _store(self, frame, starts):
        frame = np.asarray(frame)
        if self.frames is None:
            self.frames = np.zeros((self.capacity,) + frame.shape, dtype=frame.dtype)
        slot = self.stored % self.capacity
        self.frames[slot], self.number[slot] = frame, self.stored
        self.starts[slot], self.leads_on[slot] = starts, False
        self.stored += 1

    def start_episode(self, frame):
        self._store(frame, True)

    def add(self, action, reward, next_frame, terminated):
        if self.stored == 0:
            raise ValueError("call start_episode(frame) before add")
        slot = (self.stored - 1) % self.capacity
        self.action[slot], self.reward[slot] = action, reward
        self.done[slot], self.leads_on[slot] = terminated, True
        self._store(next_frame, False)

    def _held(self, number):
        return number >= 0 and self.number[number % self.capacity] == number

    def _numbers(self, number):
        """Frame numbers of the stack ending at ``number``, oldest first, or None when a
        frame it needs is gone."""
        numbers = [number]
        while len(numbers) < self.stack:
            if self.starts[numbers[0] % self.capacity]:
                numbers.insert(0, numbers[0])
            elif self._held(numbers[0] - 1):
                numbers.insert(0, numbers[0] - 1)
            else:
                return None
        return numbers

    def sample(self, batch_size):
        candidates = [number for number in range(max(0, self.stored - self.capacity),
                                                 self.stored - 1)
                      if self.leads_on[number % self.capacity] and self._numbers(number)
                      and self._numbers(number + 1)]
        if not candidates:
            raise ValueError("no transition with whole stacks is stored")
        picked = [candidates[i] for i in self.rng.integers(len(candidates), size=int(batch_size))]
        stacks = np.array([self.frames[np.array(self._numbers(n)) % self.capacity] for n in picked])
        next_stacks = np.array([self.frames[np.array(self._numbers(n + 1)) % self.capacity]
                                for n in picked])
        slots = [n % self.capacity for n in picked]
        return stacks, self.action[slots], self.reward[slots], next_stacks, self.done[slots]

    @property
    def nbytes(self):
        arrays = [self.number, self.starts, self.action, self.reward, self.done, self.leads_on]
        if self.frames is not None:
            arrays.append(self.frames)
        return int(sum(array.nbytes for array in arrays))
'''

CORRECT_VARIANTS = (*CORRECT_VARIANTS,
    CorrectVariant("returns_by_row_and_a_ring_of_rows", "08_nstep_replay",
                   {"n_step_return": RETURNS_BY_ROW_N_STEP_RETURN,
                    "NStepReplayBuffer": RING_OF_ROWS_NSTEP_BUFFER},
                   description="n_step_return loops row by row with a running power of the "
                               "discount; the buffer keeps waiting steps in a list, writes "
                               "records at a wrapping position and samples with rng.choice"),
    CorrectVariant("frames_with_episode_numbers", "08_nstep_replay",
                   {"FrameStackReplay": EPISODE_IDS_FRAME_STACKS},
                   description="each slot keeps its frame number and whether it starts an "
                               "episode; stacks are rebuilt by walking back to the episode's "
                               "start while the ring holds the frames; candidates listed afresh "
                               "at every sample"),
)


# blind rounds 28 and 29's correct answers (round 28's backward sum rounds apart from the
# reference in a last digit: the records check compares to rounding)
NSTEP_BACKWARD_RESET_N_STEP_RETURN = '#| export\nfrom collections import deque\n\nimport numpy as np\n\n\ndef n_step_return(rewards, terminated, truncated, discount):\n    """The n-step return of the first step of each row, and how to bootstrap it.\n\n    ``rewards``, ``terminated``, ``truncated``: arrays of shape (rows, n); row i holds the\n    steps t, t+1, ..., t+n-1 that start at one stored transition t. Returns three arrays of\n    shape (rows,): ``returns`` (float), the sum of discount**k * rewards[i, k] over the\n    steps up to and including the first that ends the episode (terminated or truncated),\n    all n if none does; ``discounts`` (float), 0.0 if that last step terminated, else\n    discount**m (m the steps summed); and ``steps`` (int), m. The target is then\n    returns + discounts * max_a Q(next observation of step t+m-1, a). Inputs untouched."""\n    rewards = np.array(rewards, dtype=np.float64)  # copies: nothing of the caller\'s is kept\n    terminated = np.array(terminated, dtype=bool)\n    truncated = np.array(truncated, dtype=bool)\n    ended = terminated | truncated\n    rows, n = rewards.shape\n    returns = np.zeros(rows, dtype=np.float64)\n    for k in range(n - 1, -1, -1):  # later steps first; an end cuts off what follows it\n        returns = rewards[:, k] + discount * np.where(ended[:, k], 0.0, returns)\n    ends_before = np.cumsum(ended, axis=1) - ended  # ends strictly before step k\n    summed = ends_before == 0  # steps up to and including the first end\n    steps = summed.sum(axis=1).astype(np.int64)\n    last = steps - 1\n    last_terminated = terminated[np.arange(rows), last]\n    discounts = np.where(last_terminated, 0.0,\n                         np.power(float(discount), steps.astype(np.float64)))\n    return returns.astype(np.float64), discounts.astype(np.float64), steps\n'

NSTEP_CUMSUM_MASKS_N_STEP_RETURN = '#| export\nfrom collections import deque\n\nimport numpy as np\n\n\ndef n_step_return(rewards, terminated, truncated, discount):\n    """The n-step return of the first step of each row, and how to bootstrap it.\n\n    ``rewards``, ``terminated``, ``truncated``: arrays of shape (rows, n); row i holds the\n    steps t, t+1, ..., t+n-1 that start at one stored transition t. Returns three arrays of\n    shape (rows,): ``returns`` (float), the sum of discount**k * rewards[i, k] over the\n    steps up to and including the first that ends the episode (terminated or truncated),\n    all n if none does; ``discounts`` (float), 0.0 if that last step terminated, else\n    discount**m (m the steps summed); and ``steps`` (int), m. The target is then\n    returns + discounts * max_a Q(next observation of step t+m-1, a). Inputs untouched."""\n    rewards = np.array(rewards, dtype=np.float64)  # a copy of our own\n    terminated = np.array(terminated, dtype=bool)\n    ended = terminated | np.array(truncated, dtype=bool)\n    rows, n = rewards.shape\n    ends_before = np.cumsum(ended, axis=1) - ended  # ends strictly before each column\n    used = ends_before == 0  # the steps up to and including the first end\n    steps = used.sum(axis=1).astype(np.int64)\n    returns = np.zeros(rows)\n    for k in range(n):  # column by column, so a reward past the end is never touched\n        weight = np.float64(discount) ** k\n        returns = np.where(used[:, k], returns + weight * rewards[:, k], returns)\n    last_terminated = terminated[np.arange(rows), steps - 1]\n    discounts = np.where(last_terminated, 0.0, np.float64(discount) ** steps)\n    return returns, discounts.astype(np.float64), steps\n'

BUFFER_RUNNING_RETURNS_NSTEPREPLAYBUFFER = '#| export\nclass NStepReplayBuffer:\n    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends."""\n\n    def __init__(self, capacity, n, discount, seed=None):\n        if int(capacity) != capacity or capacity < 1:\n            raise ValueError(f"capacity must be a positive whole number, got {capacity}")\n        if int(n) != n or n < 1:\n            raise ValueError(f"n must be a positive whole number, got {n}")\n        if not 0.0 <= discount <= 1.0:\n            raise ValueError(f"discount must be in [0, 1], got {discount}")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.waiting = []  # [observation, action, partial return, steps, next observation]\n        self.records = None\n        self.written = 0  # records ever written: record r lives in slot r % capacity\n\n    def __len__(self):\n        return int(min(self.written, self.capacity))\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        reward, ended = float(reward), bool(terminated) or bool(truncated)\n        next_observation = np.array(next_observation)\n        self.waiting.append([np.array(observation), int(action), 0.0, 0, None])\n        # every waiting transition gains this step\'s discounted reward and its next state\n        for entry in self.waiting:\n            entry[2] += self.discount ** entry[3] * reward\n            entry[3] += 1\n            entry[4] = next_observation\n        if ended:\n            while self.waiting:\n                self._complete_oldest(bool(terminated))\n        elif len(self.waiting) == self.n:\n            self._complete_oldest(False)\n\n    def _complete_oldest(self, terminated=False):\n        """A helper of add\'s: write the record of the oldest waiting transition."""\n        observation, action, ret, steps, bootstrap = self.waiting.pop(0)\n        discount = 0.0 if terminated else (np.float64(self.discount) ** np.array([steps]))[0]\n        self._store(observation, action, np.float64(ret), np.float64(discount), bootstrap)\n\n    def _store(self, *fields):\n        """A helper of add\'s: write one record\'s fields into the next slot of the ring."""\n        if self.records is None:\n            self.records = tuple(np.zeros((self.capacity,) + np.shape(value),\n                                          dtype=np.asarray(value).dtype) for value in fields)\n        slot = self.written % self.capacity\n        for array, value in zip(self.records, fields):\n            array[slot] = value\n        self.written += 1\n\n    def sample(self, batch_size):\n        """(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays."""\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f"batch_size must be a positive whole number, got {batch_size}")\n        if len(self) == 0:\n            raise ValueError("the buffer holds no complete record yet")\n        slots = self.rng.integers(0, len(self), size=int(batch_size))\n        return tuple(np.take(array, slots, axis=0) for array in self.records)\n'

FRAMES_POSITION_IN_EPISODE_FRAMESTACKREPLAY = '#| export\nclass FrameStackReplay:\n    """Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode\'s start (there the episode\'s first\n    frame is repeated)."""\n\n    def __init__(self, capacity, stack, seed=None):\n        if (int(capacity) != capacity or int(stack) != stack\n                or not capacity > stack >= 1):\n            raise ValueError(f"need whole numbers with capacity > stack >= 1, got "\n                             f"{capacity} and {stack}")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None\n        self.actions = np.zeros(self.capacity, np.int64)\n        self.rewards = np.zeros(self.capacity, np.float64)\n        self.terminated = np.zeros(self.capacity, np.bool_)\n        # per slot: how many frames of its episode come before its frame (-1: none yet)\n        self.position = np.full(self.capacity, -1, np.int64)\n        self.count = 0  # frames stored so far\n\n    def _put(self, frame):\n        """A helper of start_episode\'s and add\'s: store one frame in the next slot."""\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.empty((self.capacity,) + frame.shape, dtype=frame.dtype)\n        slot = self.count % self.capacity\n        self.frames[slot] = frame\n        self.count += 1\n        return slot\n\n    def start_episode(self, frame):\n        slot = self._put(frame)\n        self.position[slot] = 0\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.count == 0:\n            raise ValueError("call start_episode(frame) before the first add")\n        previous = (self.count - 1) % self.capacity\n        self.actions[previous] = action\n        self.rewards[previous] = reward\n        self.terminated[previous] = terminated\n        slot = self._put(next_frame)\n        self.position[slot] = self.position[previous] + 1\n\n    def stack_of(self, frame):\n        """The stack ending at frame number ``frame`` (a count), oldest frame first."""\n        back = int(self.position[frame % self.capacity])\n        picked = []\n        for offset in range(self.stack - 1, -1, -1):  # oldest first\n            picked.append((frame - min(offset, back)) % self.capacity)\n        return self.frames[np.array(picked, dtype=np.int64)]\n\n    def sampleable(self):\n        """Frame numbers whose transition and both stacks are still in the ring."""\n        oldest = max(0, self.count - self.capacity)\n        found = []\n        for frame in range(oldest, self.count - 1):\n            following = (frame + 1) % self.capacity\n            if self.position[following] != self.position[frame % self.capacity] + 1:\n                continue  # the next frame held begins another episode\n            reach = min(self.stack - 1, int(self.position[frame % self.capacity]))\n            if frame - reach >= oldest:\n                found.append(frame)\n        return np.array(found, dtype=np.int64)\n\n    def sample(self, batch_size):\n        numbers = self.sampleable()\n        if numbers.size == 0:\n            raise ValueError("no transition with whole stacks is stored yet")\n        chosen = numbers[self.rng.integers(0, len(numbers), size=int(batch_size))]\n        slots = chosen % self.capacity\n        stacks = np.stack([self.stack_of(frame) for frame in chosen])\n        next_stacks = np.stack([self.stack_of(frame + 1) for frame in chosen])\n        return (stacks, self.actions[slots], self.rewards[slots], next_stacks,\n                self.terminated[slots])\n\n    @property\n    def nbytes(self):\n        total = 0\n        for value in vars(self).values():\n            if isinstance(value, np.ndarray):\n                total += value.nbytes\n        return int(total)\n'

ROLLOUT_PREALLOCATED_ARRAYS_ROLLOUTBUFFER = '#| export\nclass RolloutBuffer:\n    """An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared."""\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam)\n        self.observations = None  # allocated at each rollout\'s first step\n        self.actions = np.zeros(self.size, np.int64)\n        self.rewards = np.zeros(self.size)\n        self.values = np.zeros(self.size)\n        self.next_values = np.zeros(self.size)\n        self.terminated = np.zeros(self.size, bool)\n        self.truncated = np.zeros(self.size, bool)\n        self.held = 0\n\n    def __len__(self):\n        return int(self.held)\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if self.held >= self.size:\n            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")\n        observation = np.asarray(observation)\n        if self.held == 0:\n            self.observations = np.zeros((self.size,) + observation.shape, observation.dtype)\n        i = self.held\n        self.observations[i] = observation  # a copy into the buffer\'s own array\n        self.actions[i] = int(action)\n        self.rewards[i], self.values[i], self.next_values[i] = reward, value, next_value\n        self.terminated[i], self.truncated[i] = bool(terminated), bool(truncated)\n        self.held += 1\n\n    def get(self):\n        """(observations, actions, advantages, returns) of the full rollout; then empty."""\n        if self.held < self.size or self.held == 0:\n            raise ValueError(f"the rollout holds {self.held} of {self.size} steps")\n        advantages, returns = gae(self.rewards.copy(), self.values.copy(),\n                                  self.next_values.copy(), self.terminated.copy(),\n                                  self.truncated.copy(), self.discount, self.lam)\n        observations, actions = self.observations.copy(), self.actions.copy()\n        self.held = 0\n        self.observations = None\n        return observations, actions, advantages, returns\n'

CORRECT_VARIANTS = (*CORRECT_VARIANTS,
    CorrectVariant("nstep_backward_reset", "08_nstep_replay", {"n_step_return": NSTEP_BACKWARD_RESET_N_STEP_RETURN},
                   description='returns by a backward recursion G = r_k + discount * G, G reset to 0 after a step that ends the episode; steps from a cumulative count of ends'),
    CorrectVariant("nstep_cumsum_masks", "08_nstep_replay", {"n_step_return": NSTEP_CUMSUM_MASKS_N_STEP_RETURN},
                   description='the steps used found with a cumulative count of ends (no running flag), returns added column by column under that mask'),
    CorrectVariant("buffer_running_returns", "08_nstep_replay", {"NStepReplayBuffer": BUFFER_RUNNING_RETURNS_NSTEPREPLAYBUFFER},
                   description='each waiting transition carries its running return and discount, updated by every add (no n_step_return call); records written at slot written % capacity'),
    CorrectVariant("frames_position_in_episode", "08_nstep_replay", {"FrameStackReplay": FRAMES_POSITION_IN_EPISODE_FRAMESTACKREPLAY},
                   description="FrameStackReplay that keeps each slot's position within its episode and frame number instead of episode starts and has-transition flags, rebuilding stacks and the sampleable set with plain loops"),
    CorrectVariant("rollout_preallocated_arrays", "08_nstep_replay", {"RolloutBuffer": ROLLOUT_PREALLOCATED_ARRAYS_ROLLOUTBUFFER},
                   description='RolloutBuffer writing each step into preallocated numpy arrays with a counter, handing out copies and resetting the counter'),
)


# blind round 30's correct answers
NSTEP_BACKWARD_HORNER_N_STEP_RETURN_R30 = '#| export\nfrom collections import deque\n\nimport numpy as np\n\n\ndef n_step_return(rewards, terminated, truncated, discount):\n    """The n-step return of the first step of each row, and how to bootstrap it.\n\n    ``rewards``, ``terminated``, ``truncated``: arrays of shape (rows, n); row i holds the\n    steps t, t+1, ..., t+n-1 that start at one stored transition t. Returns three arrays of\n    shape (rows,): ``returns`` (float), the sum of discount**k * rewards[i, k] over the\n    steps up to and including the first that ends the episode (terminated or truncated),\n    all n if none does; ``discounts`` (float), 0.0 if that last step terminated, else\n    discount**m (m the steps summed); and ``steps`` (int), m. The target is then\n    returns + discounts * max_a Q(next observation of step t+m-1, a). Inputs untouched."""\n    rewards = np.array(rewards, dtype=np.float64)  # a copy of our own\n    done_by_termination = np.array(terminated, dtype=bool)\n    done = done_by_termination | np.array(truncated, dtype=bool)\n    rows, n = rewards.shape\n    gamma = float(discount)\n    # G_k = r_k + gamma * G_{k+1}, with G_{k+1} dropped where step k ends the episode\n    following = np.zeros(rows)\n    for k in range(n - 1, -1, -1):\n        following = rewards[:, k] + gamma * np.where(done[:, k], 0.0, following)\n    any_end = done.any(axis=1)\n    first_end = np.argmax(done, axis=1)  # 0 for rows without an end; fixed just below\n    steps = np.where(any_end, first_end + 1, n).astype(np.int64)\n    last_terminated = done_by_termination[np.arange(rows), steps - 1]\n    discounts = np.where(last_terminated, 0.0, np.power(gamma, steps.astype(np.float64)))\n    return following.astype(np.float64), discounts.astype(np.float64), steps\n'

BUFFER_LIST_PENDING_BATCHED_FLUSH_NSTEPREPLAYBUFFER_R30 = '#| export\nclass NStepReplayBuffer:\n    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends."""\n\n    FIELDS = ("observation", "action", "return", "discount", "bootstrap")\n\n    def __init__(self, capacity, n, discount, seed=None):\n        for name, value in (("capacity", capacity), ("n", n)):\n            if value < 1 or value != int(value):\n                raise ValueError(f"{name} must be a whole number >= 1, got {value}")\n        if discount < 0 or discount > 1:\n            raise ValueError(f"discount must lie in [0, 1], got {discount}")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.pending = []  # [observation, action, reward, next_observation, terminated, truncated]\n        self.records = {}  # field name -> array of capacity rows\n        self.written = 0  # records ever written; the next goes to slot written % capacity\n\n    def __len__(self):\n        return int(min(self.written, self.capacity))\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append([np.copy(observation), int(action), float(reward),\n                             np.copy(next_observation), bool(terminated), bool(truncated)])\n        if terminated or truncated:\n            self._complete_all()\n        elif len(self.pending) >= self.n:\n            self._complete_oldest()\n\n    def _windows(self, count):\n        """The windows of the ``count`` oldest waiting transitions, as (count, n) arrays,\n        padded with zero rewards and no flags past the newest step."""\n        rewards = np.zeros((count, self.n))\n        terminated = np.zeros((count, self.n), dtype=bool)\n        truncated = np.zeros((count, self.n), dtype=bool)\n        for row in range(count):\n            for k, step in enumerate(self.pending[row:row + self.n]):\n                rewards[row, k], terminated[row, k], truncated[row, k] = step[2], step[4], step[5]\n        return n_step_return(rewards, terminated, truncated, self.discount)\n\n    def _complete_oldest(self):\n        """A helper of add\'s: write the record of the oldest waiting transition."""\n        returns, discounts, steps = self._windows(1)\n        self._write(0, returns[0], discounts[0], steps[0])\n        del self.pending[0]\n\n    def _complete_all(self):\n        """A helper of add\'s: the episode is over, every waiting return is known: write\n        them all, oldest first (the newest step ends each window, so padding never counts)."""\n        returns, discounts, steps = self._windows(len(self.pending))\n        for row in range(len(self.pending)):\n            self._write(row, returns[row], discounts[row], steps[row])\n        self.pending = []\n\n    def _write(self, row, value, discount, steps):\n        observation, action = self.pending[row][0], self.pending[row][1]\n        bootstrap = self.pending[row + int(steps) - 1][3]\n        self._store(observation, action, value, discount, bootstrap)\n\n    def _store(self, *fields):\n        """A helper of add\'s: write one record\'s fields into the next slot of the ring."""\n        if not self.records:\n            for name, value in zip(self.FIELDS, fields):\n                value = np.asarray(value)\n                self.records[name] = np.zeros((self.capacity,) + value.shape, dtype=value.dtype)\n        slot = self.written % self.capacity\n        for name, value in zip(self.FIELDS, fields):\n            self.records[name][slot] = value\n        self.written += 1\n\n    def sample(self, batch_size):\n        """(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays."""\n        if batch_size < 1 or batch_size != int(batch_size):\n            raise ValueError(f"batch_size must be a whole number >= 1, got {batch_size}")\n        if len(self) == 0:\n            raise ValueError("the buffer holds no complete record yet")\n        slots = self.rng.integers(0, len(self), size=int(batch_size))\n        return tuple(self.records[name][slots] for name in self.FIELDS)\n'

GAE_MASKS_AS_MULTIPLIERS_GAE_R30 = '#| export\ndef gae(rewards, values, next_values, terminated, truncated, discount, lam):\n    """Generalised advantage estimation over a rollout, axis 0 the steps (any other axes\n    are separate rollouts): delta_t = r_t + discount * V(s\'_t) (0 after a termination) -\n    V(s_t); A_t = delta_t + discount * lam * A_{t+1}, restarted where an episode ended and\n    0 after the last step; returns A + values. Inputs untouched."""\n    rewards = np.array(rewards, dtype=np.float64)  # copies: the caller\'s arrays stay as they are\n    values = np.array(values, dtype=np.float64)\n    next_values = np.array(next_values, dtype=np.float64)\n    terminated = np.array(terminated, dtype=bool)\n    ended = terminated | np.array(truncated, dtype=bool)\n    keep_value = 1.0 - terminated  # 0 where V(s\'_t) is not bootstrapped\n    keep_trace = 1.0 - ended  # 0 where A_{t+1} does not carry into A_t\n    deltas = rewards + discount * keep_value * next_values - values\n    backwards = []\n    carried = np.zeros(values.shape[1:])\n    for delta, keep in zip(deltas[::-1], keep_trace[::-1]):\n        carried = delta + discount * lam * keep * carried\n        backwards.append(carried)\n    advantages = np.array(backwards[::-1], dtype=np.float64).reshape(values.shape)\n    return advantages, advantages + values\n'

ROLLOUT_PREALLOCATED_ARRAYS_ROLLOUTBUFFER_R30 = '#| export\nclass RolloutBuffer:\n    """An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared."""\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam)\n        self.observations = None  # allocated at the first step of each rollout\n        self.actions = np.zeros(self.size, np.int64)\n        self.rewards = np.zeros(self.size)\n        self.values = np.zeros(self.size)\n        self.next_values = np.zeros(self.size)\n        self.terminated = np.zeros(self.size, bool)\n        self.truncated = np.zeros(self.size, bool)\n        self.count = 0\n\n    def __len__(self):\n        return int(self.count)\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if self.count >= self.size:\n            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")\n        observation = np.asarray(observation)\n        if self.count == 0:\n            self.observations = np.zeros((self.size, *observation.shape), observation.dtype)\n        elif not np.can_cast(observation.dtype, self.observations.dtype):\n            self.observations = self.observations.astype(\n                np.result_type(self.observations.dtype, observation.dtype))\n        i = self.count\n        self.observations[i] = observation  # a copy into the buffer\'s own array\n        self.actions[i] = int(action)\n        self.rewards[i], self.values[i] = float(reward), float(value)\n        self.next_values[i] = float(next_value)\n        self.terminated[i], self.truncated[i] = bool(terminated), bool(truncated)\n        self.count += 1\n\n    def get(self):\n        """(observations, actions, advantages, returns) of the full rollout; then empty."""\n        if self.count < self.size:\n            raise ValueError(f"the rollout holds {self.count} of {self.size} steps")\n        advantages, returns = gae(self.rewards, self.values, self.next_values, self.terminated,\n                                  self.truncated, self.discount, self.lam)\n        observations, actions = self.observations.copy(), self.actions.copy()\n        self.count = 0\n        return observations, actions, advantages, returns\n'

CORRECT_VARIANTS = (*CORRECT_VARIANTS,
    CorrectVariant("nstep_backward_horner_r30", "08_nstep_replay", {"n_step_return": NSTEP_BACKWARD_HORNER_N_STEP_RETURN_R30},
                   description='n_step_return by a backward (Horner) recursion G = r_k + discount * G over the columns, restarted where step k ends the episode; m from the first end found with argmax'),
    CorrectVariant("buffer_list_pending_batched_flush_r30", "08_nstep_replay", {"NStepReplayBuffer": BUFFER_LIST_PENDING_BATCHED_FLUSH_NSTEPREPLAYBUFFER_R30},
                   description="NStepReplayBuffer with a plain list of waiting transitions and a dict of record arrays; at an episode's end all waiting windows are padded to n with zero rewards and no flags, and completed by one n_step_return call, oldest first"),
    CorrectVariant("gae_masks_as_multipliers_r30", "08_nstep_replay", {"gae": GAE_MASKS_AS_MULTIPLIERS_GAE_R30},
                   description='copies the inputs, computes every delta at once with 0/1 multipliers for the terminated and ended masks, and carries the trace backwards into a list that is reversed and stacked'),
    CorrectVariant("rollout_preallocated_arrays_r30", "08_nstep_replay", {"RolloutBuffer": ROLLOUT_PREALLOCATED_ARRAYS_ROLLOUTBUFFER_R30},
                   description="keeps the rollout in preallocated numpy arrays and a count (observations allocated at each rollout's first step, shaped and typed like it), hands out copies from get, and only resets the count once the rollout was full"),
)


# blind round 31's correct answers
NSTEP_MASKS_BY_ENDS_BEFORE_N_STEP_RETURN_R31 = '#| export\nfrom collections import deque\n\nimport numpy as np\n\n\ndef n_step_return(rewards, terminated, truncated, discount):\n    """The n-step return of the first step of each row, and how to bootstrap it.\n\n    ``rewards``, ``terminated``, ``truncated``: arrays of shape (rows, n); row i holds the\n    steps t, t+1, ..., t+n-1 that start at one stored transition t. Returns three arrays of\n    shape (rows,): ``returns`` (float), the sum of discount**k * rewards[i, k] over the\n    steps up to and including the first that ends the episode (terminated or truncated),\n    all n if none does; ``discounts`` (float), 0.0 if that last step terminated, else\n    discount**m (m the steps summed); and ``steps`` (int), m. The target is then\n    returns + discounts * max_a Q(next observation of step t+m-1, a). Inputs untouched."""\n    rewards = np.array(rewards, dtype=np.float64)  # copies: the caller\'s stay untouched\n    terminated = np.array(terminated, dtype=bool)\n    ended = terminated | np.array(truncated, dtype=bool)\n    rows, n = rewards.shape\n    ends_before = np.cumsum(ended, axis=1) - ended  # ends strictly before each step\n    kept = ends_before == 0\n    powers = np.float64(discount) ** np.arange(n + 1)  # discount**0 .. discount**n\n    returns = np.where(kept, rewards * powers[:n], 0.0).sum(axis=1).astype(np.float64)\n    steps = kept.sum(axis=1).astype(np.int64)\n    last_terminated = np.take_along_axis(terminated, (steps - 1)[:, None], axis=1)[:, 0]\n    discounts = np.where(last_terminated, 0.0, powers[steps]).astype(np.float64)\n    return returns, discounts, steps\n'

BUFFER_LIST_PENDING_DICT_RECORDS_NSTEPREPLAYBUFFER_R31 = '#| export\nclass NStepReplayBuffer:\n    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends."""\n\n    FIELDS = ("observations", "actions", "returns", "discounts", "next_observations")\n\n    def __init__(self, capacity, n, discount, seed=None):\n        for name, value in (("capacity", capacity), ("n", n)):\n            if value < 1 or value % 1 != 0:\n                raise ValueError(f"{name} must be a whole number >= 1, got {value}")\n        if discount < 0 or discount > 1:\n            raise ValueError(f"discount must lie in [0, 1], got {discount}")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.pending = []\n        self.records = {}\n        self.written = 0  # records ever written; the ring\'s slot of the next is written % capacity\n\n    def __len__(self):\n        return int(min(self.written, self.capacity))\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        self.pending.append({"observation": np.array(observation, copy=True),\n                             "action": int(action), "reward": float(reward),\n                             "next_observation": np.array(next_observation, copy=True),\n                             "terminated": bool(terminated), "truncated": bool(truncated)})\n        episode_over = bool(terminated) or bool(truncated)\n        while self.pending and (episode_over or len(self.pending) >= self.n):\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        """A helper of add\'s: write the record of the oldest waiting transition."""\n        window = self.pending[:self.n]\n        returns, discounts, steps = n_step_return(\n            np.array([[step["reward"] for step in window]], dtype=np.float64),\n            np.array([[step["terminated"] for step in window]], dtype=bool),\n            np.array([[step["truncated"] for step in window]], dtype=bool), self.discount)\n        first, last = window[0], window[int(steps[0]) - 1]\n        self._store(first["observation"], first["action"], returns[0], discounts[0],\n                    last["next_observation"])\n        del self.pending[0]\n\n    def _store(self, *fields):\n        """A helper of add\'s: write one record\'s fields into the next slot of the ring."""\n        if not self.records:\n            for name, value in zip(self.FIELDS, fields):\n                value = np.asarray(value)\n                self.records[name] = np.empty((self.capacity,) + value.shape, value.dtype)\n        slot = self.written % self.capacity\n        for name, value in zip(self.FIELDS, fields):\n            self.records[name][slot] = value\n        self.written += 1\n\n    def sample(self, batch_size):\n        """(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays."""\n        if batch_size < 1 or batch_size % 1 != 0:\n            raise ValueError(f"batch_size must be a whole number >= 1, got {batch_size}")\n        if len(self) == 0:\n            raise ValueError("the buffer holds no complete record yet")\n        slots = self.rng.integers(0, len(self), size=int(batch_size))\n        return tuple(np.take(self.records[name], slots, axis=0) for name in self.FIELDS)\n'

GAE_DELTAS_FIRST_THEN_MASKED_TRACE_GAE_R31 = '#| export\ndef gae(rewards, values, next_values, terminated, truncated, discount, lam):\n    """Generalised advantage estimation over a rollout, axis 0 the steps (any other axes\n    are separate rollouts): delta_t = r_t + discount * V(s\'_t) (0 after a termination) -\n    V(s_t); A_t = delta_t + discount * lam * A_{t+1}, restarted where an episode ended and\n    0 after the last step; returns A + values. Inputs untouched."""\n    r = np.array(rewards, dtype=float)\n    v = np.array(values, dtype=float)\n    bootstrap = np.array(next_values, dtype=float) * ~np.array(terminated, dtype=bool)\n    goes_on = 1.0 - (np.array(terminated, dtype=bool) | np.array(truncated, dtype=bool))\n    deltas = r + discount * bootstrap - v\n    trace = discount * lam\n    backwards, carried = [], np.zeros(v.shape[1:])\n    for delta, more in zip(deltas[::-1], goes_on[::-1]):\n        carried = delta + trace * (more * carried)\n        backwards.append(carried)\n    advantages = np.stack(backwards[::-1]) if backwards else np.zeros(v.shape)\n    return advantages, advantages + v\n'

ROLLOUT_PREALLOCATED_WITH_COPIES_ROLLOUTBUFFER_R31 = '#| export\nclass RolloutBuffer:\n    """An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared."""\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam)\n        self.filled = 0\n        self.observations = None\n        self.actions = np.zeros(self.size, np.int64)\n        self.numbers = np.zeros((4, self.size))  # reward, value, next value, and spare\n        self.flags = np.zeros((2, self.size), bool)  # terminated, truncated\n\n    def __len__(self):\n        return int(self.filled)\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if self.filled >= self.size:\n            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")\n        observation = np.asarray(observation)\n        if self.observations is None or self.observations.shape[1:] != observation.shape \\\n                or self.observations.dtype != observation.dtype:\n            if self.filled:\n                kept = self.observations[:self.filled]\n                self.observations = np.zeros((self.size, *observation.shape),\n                                             np.result_type(kept, observation))\n                self.observations[:self.filled] = kept\n            else:\n                self.observations = np.zeros((self.size, *observation.shape), observation.dtype)\n        i = self.filled\n        self.observations[i] = observation  # a copy into the buffer\'s own array\n        self.actions[i] = int(action)\n        self.numbers[:3, i] = float(reward), float(value), float(next_value)\n        self.flags[:, i] = bool(terminated), bool(truncated)\n        self.filled += 1\n\n    def get(self):\n        """(observations, actions, advantages, returns) of the full rollout; then empty."""\n        if self.filled < self.size:\n            raise ValueError(f"the rollout holds {self.filled} of {self.size} steps")\n        rewards, values, next_values = self.numbers[:3].copy()\n        advantages, returns = gae(rewards, values, next_values, self.flags[0].copy(),\n                                  self.flags[1].copy(), self.discount, self.lam)\n        observations, actions = self.observations.copy(), self.actions.copy()\n        self.filled = 0\n        return observations, actions, advantages, returns\n'

CORRECT_VARIANTS = (*CORRECT_VARIANTS,
    CorrectVariant("nstep_masks_by_ends_before_r31", "08_nstep_replay", {"n_step_return": NSTEP_MASKS_BY_ENDS_BEFORE_N_STEP_RETURN_R31},
                   description='vectorised: a step counts while no earlier step of its row ended (cumsum of ends, shifted); m is the count of steps kept, discounts from np.where on the flag of step m'),
    CorrectVariant("buffer_list_pending_dict_records_r31", "08_nstep_replay", {"NStepReplayBuffer": BUFFER_LIST_PENDING_DICT_RECORDS_NSTEPREPLAYBUFFER_R31},
                   description="waiting transitions in a plain list, each record's return summed by n_step_return, records in a dict of numpy arrays keyed by field, the ring position from a count of records ever written"),
    CorrectVariant("gae_deltas_first_then_masked_trace_r31", "08_nstep_replay", {"gae": GAE_DELTAS_FIRST_THEN_MASKED_TRACE_GAE_R31},
                   description='computes every delta at once, then runs the trace backwards with a float mask (1 - ended) and stacks the reversed list of advantages'),
    CorrectVariant("rollout_preallocated_with_copies_r31", "08_nstep_replay", {"RolloutBuffer": ROLLOUT_PREALLOCATED_WITH_COPIES_ROLLOUTBUFFER_R31},
                   description='a preallocated numpy rollout (arrays made at the first add, a fill counter), full-check before handing out copies, and the counter reset to empty'),
)


# blind round 32's correct answers
NSTEP_RUNNING_SUMS_N_STEP_RETURN_R32 = '#| export\nfrom collections import deque\n\nimport numpy as np\n\n\ndef n_step_return(rewards, terminated, truncated, discount):\n    """The n-step return of the first step of each row, and how to bootstrap it.\n\n    ``rewards``, ``terminated``, ``truncated``: arrays of shape (rows, n); row i holds the\n    steps t, t+1, ..., t+n-1 that start at one stored transition t. Returns three arrays of\n    shape (rows,): ``returns`` (float), the sum of discount**k * rewards[i, k] over the\n    steps up to and including the first that ends the episode (terminated or truncated),\n    all n if none does; ``discounts`` (float), 0.0 if that last step terminated, else\n    discount**m (m the steps summed); and ``steps`` (int), m. The target is then\n    returns + discounts * max_a Q(next observation of step t+m-1, a). Inputs untouched."""\n    rewards = np.array(rewards, dtype=np.float64)  # a copy\n    terminated = np.asarray(terminated, dtype=bool)\n    ended = np.logical_or(terminated, np.asarray(truncated, dtype=bool))\n    rows, n = rewards.shape\n    first_end = np.argmax(ended, axis=1)  # 0 where no step ends the episode\n    steps = np.where(ended.any(axis=1), first_end + 1, n).astype(np.int64)\n    powers = np.array([discount ** k for k in range(n)], dtype=np.float64)  # 1, g, g**2, ...\n    running = np.cumsum(rewards * powers, axis=1)  # the return of the first k + 1 steps\n    returns = running[np.arange(rows), steps - 1]\n    last_terminated = terminated[np.arange(rows), steps - 1]\n    discounts = np.where(last_terminated, 0.0, np.float64(discount) ** steps)\n    return returns, discounts, steps\n'

BUFFER_WRITE_COUNTER_NSTEPREPLAYBUFFER_R32 = '#| export\nclass NStepReplayBuffer:\n    """A FIFO ring of ``capacity`` n-step records: (observation, action, n-step return,\n    discount to bootstrap with, observation to bootstrap from). A transition becomes a\n    record once the n-1 transitions after it are in, or as soon as its episode ends."""\n\n    FIELDS = ("observation", "action", "return", "discount", "bootstrap")\n\n    def __init__(self, capacity, n, discount, seed=None):\n        for name, value in (("capacity", capacity), ("n", n)):\n            if not float(value).is_integer() or value < 1:\n                raise ValueError(f"{name} must be a whole number of at least 1, got {value}")\n        if discount < 0 or discount > 1:\n            raise ValueError(f"discount must lie in [0, 1], got {discount}")\n        self.capacity, self.n, self.discount = int(capacity), int(n), float(discount)\n        self.rng = np.random.default_rng(seed)\n        self.waiting = []  # (observation, action, reward, next observation, terminated, truncated)\n        self.arrays = {}  # field -> array of capacity rows, made at the first record\n        self.written = 0  # records ever written; record w lives in slot w % capacity\n\n    def __len__(self):\n        return min(self.written, self.capacity)\n\n    def add(self, observation, action, reward, next_observation, terminated, truncated):\n        step = (np.array(observation, copy=True), int(action), float(reward),\n                np.array(next_observation, copy=True), bool(terminated), bool(truncated))\n        self.waiting.append(step)\n        if step[4] or step[5]:\n            while len(self.waiting) > 0:\n                self._complete_oldest()\n        elif len(self.waiting) >= self.n:\n            self._complete_oldest()\n\n    def _complete_oldest(self):\n        """A helper of add\'s: write the record of the oldest waiting transition."""\n        window = self.waiting[:self.n]\n        rewards = np.array([[step[2] for step in window]])\n        terminated = np.array([[step[4] for step in window]])\n        truncated = np.array([[step[5] for step in window]])\n        returns, discounts, steps = n_step_return(rewards, terminated, truncated, self.discount)\n        oldest = self.waiting.pop(0)\n        self._store(oldest[0], oldest[1], returns[0], discounts[0], window[int(steps[0]) - 1][3])\n\n    def _store(self, *fields):\n        """A helper of add\'s: write one record\'s fields into the next slot of the ring."""\n        if not self.arrays:\n            for name, value in zip(self.FIELDS, fields):\n                value = np.asarray(value)\n                self.arrays[name] = np.empty((self.capacity,) + value.shape, dtype=value.dtype)\n        slot = self.written % self.capacity\n        for name, value in zip(self.FIELDS, fields):\n            self.arrays[name][slot] = value\n        self.written += 1\n\n    def sample(self, batch_size):\n        """(observations, actions, returns, discounts, bootstrap observations) of\n        ``batch_size`` records drawn uniformly with replacement, as new arrays."""\n        if not float(batch_size).is_integer() or batch_size < 1:\n            raise ValueError(f"batch_size must be a whole number of at least 1, got {batch_size}")\n        held = len(self)\n        if held == 0:\n            raise ValueError("the buffer holds no record yet: add until one is complete")\n        slots = self.rng.integers(held, size=int(batch_size))\n        return tuple(np.take(self.arrays[name], slots, axis=0) for name in self.FIELDS)\n'

FRAMES_POSITIONS_IN_EPISODE_FRAMESTACKREPLAY_R32 = '#| export\nclass FrameStackReplay:\n    """Frames stored once, in a ring of ``capacity`` slots; the stacks of ``stack`` frames\n    are rebuilt when sampled, never across an episode\'s start (there the episode\'s first\n    frame is repeated)."""\n\n    def __init__(self, capacity, stack, seed=None):\n        if int(capacity) != capacity or int(stack) != stack or not 1 <= stack < capacity:\n            raise ValueError(f"need whole numbers with capacity > stack >= 1, got capacity "\n                             f"{capacity} and stack {stack}")\n        self.capacity, self.stack = int(capacity), int(stack)\n        self.rng = np.random.default_rng(seed)\n        self.frames = None  # made at the first frame, shaped and typed like it\n        self.actions = np.zeros(self.capacity, dtype=np.int64)\n        self.rewards = np.zeros(self.capacity, dtype=np.float64)\n        self.terminated = np.zeros(self.capacity, dtype=bool)\n        self.leads_on = np.zeros(self.capacity, dtype=bool)  # a transition leaves this frame\n        self.position = np.zeros(self.capacity, dtype=np.int64)  # frames before it in its episode\n        self.count = 0  # frames stored so far; frame number f lives in slot f % capacity\n        self.newest_position = None  # position of the newest frame; None before any episode\n\n    def _put(self, frame):\n        """A helper of start_episode\'s and add\'s: store one frame in the next slot."""\n        frame = np.asarray(frame)\n        if self.frames is None:\n            self.frames = np.zeros((self.capacity,) + frame.shape, dtype=frame.dtype)\n        slot = self.count % self.capacity\n        self.frames[slot] = frame\n        self.leads_on[slot] = False\n        self.position[slot] = self.newest_position\n        self.count += 1\n\n    def start_episode(self, frame):\n        self.newest_position = 0\n        self._put(frame)\n\n    def add(self, action, reward, next_frame, terminated):\n        if self.newest_position is None:\n            raise ValueError("add() needs an episode: call start_episode(frame) first")\n        slot = (self.count - 1) % self.capacity\n        self.actions[slot] = action\n        self.rewards[slot] = reward\n        self.terminated[slot] = bool(terminated)\n        self.leads_on[slot] = True\n        self.newest_position += 1\n        self._put(next_frame)\n\n    def stack_of(self, frame):\n        """The stack ending at frame number ``frame`` (a count), oldest frame first."""\n        back = np.minimum(np.arange(self.stack - 1, -1, -1), self.position[frame % self.capacity])\n        return self.frames[(frame - back) % self.capacity]\n\n    def sampleable(self):\n        """Frame numbers whose transition and both stacks are still in the ring."""\n        oldest = max(0, self.count - self.capacity)\n        if self.count - oldest < 2:\n            return np.zeros(0, dtype=np.int64)\n        numbers = np.arange(oldest, self.count - 1)\n        slots = numbers % self.capacity\n        reach = np.minimum(self.stack - 1, self.position[slots])  # frames the stack goes back\n        whole = self.leads_on[slots] & (numbers - reach >= oldest)\n        return numbers[whole]\n\n    def sample(self, batch_size):\n        if int(batch_size) != batch_size or batch_size < 1:\n            raise ValueError(f"batch_size must be a positive whole number, got {batch_size}")\n        numbers = self.sampleable()\n        if numbers.size == 0:\n            raise ValueError("no transition whose two stacks are whole is stored yet")\n        chosen = self.rng.choice(numbers, size=int(batch_size), replace=True)\n        slots = chosen % self.capacity\n        stacks = np.array([self.stack_of(f) for f in chosen])\n        next_stacks = np.array([self.stack_of(f + 1) for f in chosen])\n        return (stacks, self.actions[slots], self.rewards[slots], next_stacks,\n                self.terminated[slots])\n\n    @property\n    def nbytes(self):\n        return int(sum(value.nbytes for value in vars(self).values()\n                       if isinstance(value, np.ndarray)))\n'

ROLLOUT_PREALLOCATED_ARRAYS_ROLLOUTBUFFER_R32 = '#| export\nclass RolloutBuffer:\n    """An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared."""\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam)\n        self.observations = None  # allocated at a rollout\'s first add\n        self.actions = np.zeros(self.size, dtype=np.int64)\n        self.rewards = np.zeros(self.size)\n        self.values = np.zeros(self.size)\n        self.next_values = np.zeros(self.size)\n        self.terminated = np.zeros(self.size, dtype=bool)\n        self.truncated = np.zeros(self.size, dtype=bool)\n        self.count = 0\n\n    def __len__(self):\n        return int(self.count)\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if self.count >= self.size:\n            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")\n        observation = np.asarray(observation)\n        if self.observations is None:\n            self.observations = np.zeros((self.size,) + observation.shape, observation.dtype)\n        i = self.count\n        self.observations[i] = observation  # a copy into the buffer\'s own array\n        self.actions[i] = int(action)\n        self.rewards[i], self.values[i], self.next_values[i] = reward, value, next_value\n        self.terminated[i] = bool(terminated)\n        self.truncated[i] = bool(truncated)\n        self.count = i + 1\n\n    def get(self):\n        """(observations, actions, advantages, returns) of the full rollout; then empty."""\n        if self.count != self.size:\n            raise ValueError(f"get() needs a full rollout: it holds {self.count} of "\n                             f"{self.size} steps")\n        advantages, returns = gae(self.rewards, self.values, self.next_values,\n                                  self.terminated, self.truncated, self.discount, self.lam)\n        observations, actions = self.observations, self.actions.copy()\n        self.observations, self.count = None, 0  # the next rollout gets a new array\n        return observations, actions, advantages, returns\n'

CORRECT_VARIANTS = (*CORRECT_VARIANTS,
    CorrectVariant("nstep_running_sums_r32", "08_nstep_replay", {"n_step_return": NSTEP_RUNNING_SUMS_N_STEP_RETURN_R32},
                   description='vectorised: m from argmax of the ends (n where none), the running sums of the discounted rewards (np.cumsum) read at column m - 1, discounts by np.where'),
    CorrectVariant("buffer_write_counter_r32", "08_nstep_replay", {"NStepReplayBuffer": BUFFER_WRITE_COUNTER_NSTEPREPLAYBUFFER_R32},
                   description='a list of waiting steps, a dict of lazily made np.empty arrays and a count of records ever written (slot = count % capacity, len = min(count, capacity)); np.take for the batch'),
    CorrectVariant("frames_positions_in_episode_r32", "08_nstep_replay", {"FrameStackReplay": FRAMES_POSITIONS_IN_EPISODE_FRAMESTACKREPLAY_R32},
                   description="keeps, per slot, the frame's position in its episode (frames before it) instead of the episode's start; a stack's frames are the frame minus offsets capped at that position; draws with rng.choice; nbytes sums every numpy array among the buffer's attributes"),
    CorrectVariant("rollout_preallocated_arrays_r32", "08_nstep_replay", {"RolloutBuffer": ROLLOUT_PREALLOCATED_ARRAYS_ROLLOUTBUFFER_R32},
                   description='a counter and numpy arrays allocated for size steps (observations at the first add, shaped and typed like it) instead of a list of tuples; get hands over the observation array and lets go of it, so the next rollout writes into a fresh one'),
)


# blind round 33's correct answers
GAE_PER_ROLLOUT_PYTHON_FLOATS_GAE_R33 = '#| export\ndef gae(rewards, values, next_values, terminated, truncated, discount, lam):\n    """Generalised advantage estimation over a rollout, axis 0 the steps (any other axes\n    are separate rollouts): delta_t = r_t + discount * V(s\'_t) (0 after a termination) -\n    V(s_t); A_t = delta_t + discount * lam * A_{t+1}, restarted where an episode ended and\n    0 after the last step; returns A + values. Inputs untouched."""\n    values = np.array(values, dtype=np.float64)  # a copy: the caller\'s stays as it is\n    shape = values.shape\n    steps = shape[0]\n    columns = int(np.prod(shape[1:], dtype=np.int64))\n\n    def table(array, dtype):  # (steps, rollouts): one column per rollout, as a new array\n        return np.array(np.broadcast_to(np.asarray(array, dtype=dtype), shape)).reshape(\n            steps, columns)\n\n    r, v, v_next = table(rewards, np.float64), values.reshape(steps, columns), table(\n        next_values, np.float64)\n    term = table(terminated, bool)\n    end = term | table(truncated, bool)\n    advantages = np.empty((steps, columns))\n    for column in range(columns):  # each rollout on its own, with Python floats\n        following = 0.0\n        for t in range(steps - 1, -1, -1):\n            bootstrap = 0.0 if term[t, column] else float(v_next[t, column])\n            delta = float(r[t, column]) + discount * bootstrap - float(v[t, column])\n            carried = 0.0 if end[t, column] else following\n            following = delta + discount * lam * carried\n            advantages[t, column] = following\n    advantages = advantages.reshape(shape)\n    return advantages, advantages + values\n'

ROLLOUT_PREALLOCATED_FRESH_ARRAYS_ROLLOUTBUFFER_R33 = '#| export\nclass RolloutBuffer:\n    """An on-policy rollout of ``size`` steps: filled, turned into advantages and returns\n    once, handed out once, and cleared."""\n\n    def __init__(self, size, discount, lam):\n        self.size, self.discount, self.lam = int(size), float(discount), float(lam)\n        self._allocate()\n\n    def _allocate(self):\n        """Fresh arrays for the next rollout (the ones handed out belong to the caller)."""\n        self.observations = []\n        self.actions = np.zeros(self.size, np.int64)\n        self.rewards = np.zeros(self.size)\n        self.values = np.zeros(self.size)\n        self.next_values = np.zeros(self.size)\n        self.terminated = np.zeros(self.size, bool)\n        self.truncated = np.zeros(self.size, bool)\n        self.count = 0\n\n    def __len__(self):\n        return int(self.count)\n\n    def add(self, observation, action, reward, value, next_value, terminated, truncated):\n        if self.count >= self.size:\n            raise ValueError(f"the rollout is full ({self.size} steps): call get() first")\n        i = self.count\n        self.observations.append(np.array(observation, copy=True))\n        self.actions[i], self.rewards[i] = int(action), float(reward)\n        self.values[i], self.next_values[i] = float(value), float(next_value)\n        self.terminated[i], self.truncated[i] = bool(terminated), bool(truncated)\n        self.count = i + 1\n\n    def get(self):\n        """(observations, actions, advantages, returns) of the full rollout; then empty."""\n        if self.count != self.size:\n            raise ValueError(f"the rollout holds {self.count} of {self.size} steps")\n        advantages, returns = gae(self.rewards, self.values, self.next_values, self.terminated,\n                                  self.truncated, self.discount, self.lam)\n        observations, actions = np.array(self.observations), self.actions\n        self._allocate()\n        return observations, actions, advantages, returns\n'

CORRECT_VARIANTS = (*CORRECT_VARIANTS,
    CorrectVariant("gae_per_rollout_python_floats_r33", "08_nstep_replay", {"gae": GAE_PER_ROLLOUT_PYTHON_FLOATS_GAE_R33},
                   description='gae reshaped to (steps, rollouts) and run rollout by rollout with Python floats, then reshaped back'),
    CorrectVariant("rollout_preallocated_fresh_arrays_r33", "08_nstep_replay", {"RolloutBuffer": ROLLOUT_PREALLOCATED_FRESH_ARRAYS_ROLLOUTBUFFER_R33},
                   description='RolloutBuffer with numpy arrays preallocated for size steps and a count; get hands them out and allocates fresh ones'),
)
