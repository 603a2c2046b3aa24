"""Correct answers written differently from the instructors' ones; every check must pass.

They guard against checks that test one way of writing the code rather than its
behaviour: a numpy ring buffer instead of a deque, ``rng.choice`` instead of
``rng.integers``, a ``while`` loop instead of a ``for`` loop.
"""

from dataclasses import dataclass, field

from .lesson02 import ADD_TO_NUMPY_RING, CLASS_NUMPY_RING, CLASS_ON_A_LIST


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

ACTION_WITH_RNG_CHOICE = '''\
#| export
@add_to_class(QLearningAgent)
def get_action(self, state):
    """Epsilon-greedy: random legal action with probability epsilon, else the best."""
    explore = self.rng.random() < self.epsilon
    if explore:
        return int(self.rng.choice(list(self.get_legal_actions(state))))
    return self.get_best_action(state)
'''

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

ADD_TO_A_LIST_WITH_POP_ZERO = '''\
#| export
@add_to_class(ReplayBuffer)
def add(self, obs_t, action, reward, obs_tp1, done):
    """Store one transition, evicting the oldest if the buffer is full. Copies arrays."""
    if len(self._storage) == self.size:
        self._storage.pop(0)
    self._storage.append(tuple(np.array(field) for field in
                               (obs_t, action, reward, obs_tp1, done)))
'''

SAMPLE_NUMPY_RING = '''\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    """``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask)."""
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if self._count == 0:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    indices = self.rng.integers(self._count, size=batch_size)
    return tuple(field[indices] for field in self._fields)  # fancy indexing copies
'''

SAMPLE_READ_ONLY_COPIES = '''\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    """``batch_size`` transitions drawn uniformly with replacement, as five arrays
    (obs_batch, act_batch, rew_batch, next_obs_batch, done_mask)."""
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer: add transitions first")
    indices = self.rng.integers(len(self._storage), size=batch_size)
    batch = [self._storage[i] for i in indices]
    fields = tuple(np.stack(field) for field in zip(*batch))
    for array in fields:
        array.flags.writeable = False  # new arrays, and nobody can change them by mistake
    return fields
'''


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
                   {"buffer_class": CLASS_NUMPY_RING, "buffer_add": ADD_TO_NUMPY_RING,
                    "buffer_sample": SAMPLE_NUMPY_RING},
                   description="preallocated arrays and a write position, like SB3"),
    CorrectVariant("buffer_sampling_read_only_copies", "02_replay_buffer",
                   {"buffer_sample": SAMPLE_READ_ONLY_COPIES},
                   description="sample returns new arrays marked read-only: nothing can "
                               "alias the storage"),
)
