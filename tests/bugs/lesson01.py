"""Buggy answers to lesson 01 (tabular Q-learning), each the mistake its name says.

Every answer is a whole answer cell, as a student would submit it: the solution cell's
``#| export`` line, decorator and docstring kept, the body rewritten with the bug.
"""

from . import Bug

LESSON = "01_qlearning"


# --- get_value --------------------------------------------------------------------------

VALUE_MAX_STARTS_AT_ZERO = '''\
#| export
@add_to_class(QLearningAgent)
def get_value(self, state):
    """The largest Q-value over the legal actions of ``state``."""
    best = 0.0
    for action in self.get_legal_actions(state):
        best = max(best, self.get_qvalue(state, action))
    return best
'''

VALUE_OVER_ALL_ACTIONS = '''\
#| export
@add_to_class(QLearningAgent)
def get_value(self, state):
    """The largest Q-value over the legal actions of ``state``."""
    return max(self.get_qvalue(state, action) for action in range(N_ACTIONS))
'''

# --- get_best_action --------------------------------------------------------------------

TIES_TO_LOWEST_ACTION = '''\
#| export
@add_to_class(QLearningAgent)
def get_best_action(self, state):
    """A legal action of maximal Q-value; ties broken uniformly at random by ``self.rng``."""
    actions = list(self.get_legal_actions(state))
    return max(actions, key=lambda action: self.get_qvalue(state, action))
'''

TIES_WITH_GLOBAL_RANDOM = '''\
#| export
import random


@add_to_class(QLearningAgent)
def get_best_action(self, state):
    """A legal action of maximal Q-value; ties broken uniformly at random by ``self.rng``."""
    actions = list(self.get_legal_actions(state))
    best = max(self.get_qvalue(state, action) for action in actions)
    return random.choice([a for a in actions if self.get_qvalue(state, a) == best])
'''

# --- get_action -------------------------------------------------------------------------

EXPLORES_ONLY_NON_GREEDY_ACTIONS = '''\
#| export
@add_to_class(QLearningAgent)
def get_action(self, state):
    """Epsilon-greedy: random legal action with probability epsilon, else the best."""
    best = self.get_best_action(state)
    if self.rng.random() < self.epsilon:
        others = [a for a in self.get_legal_actions(state) if a != best]
        if others:
            return others[self.rng.integers(len(others))]
    return best
'''

EXPLORES_ILLEGAL_ACTIONS = '''\
#| export
@add_to_class(QLearningAgent)
def get_action(self, state):
    """Epsilon-greedy: random legal action with probability epsilon, else the best."""
    if self.rng.random() < self.epsilon:
        return int(self.rng.integers(6))
    return self.get_best_action(state)
'''

EPSILON_READ_AT_CONSTRUCTION = '''\
#| export
_init_without_exploration_rate = QLearningAgent.__init__


def _init_with_exploration_rate(self, *args, **kwargs):
    _init_without_exploration_rate(self, *args, **kwargs)
    self.exploration_rate = self.epsilon


QLearningAgent.__init__ = _init_with_exploration_rate


@add_to_class(QLearningAgent)
def get_action(self, state):
    """Epsilon-greedy: random legal action with probability epsilon, else the best."""
    if self.rng.random() < self.exploration_rate:
        actions = list(self.get_legal_actions(state))
        return actions[self.rng.integers(len(actions))]
    return self.get_best_action(state)
'''

EPSILON_READ_AT_FIRST_CALL = '''\
#| export
@add_to_class(QLearningAgent)
def get_action(self, state):
    """Epsilon-greedy: random legal action with probability epsilon, else the best."""
    if not hasattr(self, "exploration_rate"):
        self.exploration_rate = self.epsilon
    if self.rng.random() < self.exploration_rate:
        actions = list(self.get_legal_actions(state))
        return actions[self.rng.integers(len(actions))]
    return self.get_best_action(state)
'''

# --- update -----------------------------------------------------------------------------

UPDATE_IGNORES_TERMINATED = '''\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    """One Q-learning step towards reward + discount * V(next_state) (just the reward
    when the episode terminated)."""
    target = reward + self.discount * self.get_value(next_state)
    old = self.get_qvalue(state, action)
    self.set_qvalue(state, action, (1 - self.alpha) * old + self.alpha * target)
'''

UPDATE_ALPHA_SWAPPED = '''\
#| export
@add_to_class(QLearningAgent)
def update(self, state, action, reward, next_state, terminated):
    """One Q-learning step towards reward + discount * V(next_state) (just the reward
    when the episode terminated)."""
    future = 0.0 if terminated else self.get_value(next_state)
    target = reward + self.discount * future
    old = self.get_qvalue(state, action)
    self.set_qvalue(state, action, self.alpha * old + (1 - self.alpha) * target)
'''

# --- play_and_train ---------------------------------------------------------------------

LOOP_PASSES_TRUNCATION_AS_TERMINAL = '''\
#| export
def play_and_train(env, agent, t_max=10_000):
    """Play one episode, updating ``agent`` after every step; return the total reward."""
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
        agent.update(state, action, reward, next_state, done)
        total_reward += reward
        state = next_state
        if done:
            break
    return total_reward
'''

LOOP_IGNORES_TRUNCATION = '''\
#| export
def play_and_train(env, agent, t_max=10_000):
    """Play one episode, updating ``agent`` after every step; return the total reward."""
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated:
            break
    return total_reward
'''

LOOP_RETURNS_NOTHING = '''\
#| export
def play_and_train(env, agent, t_max=10_000):
    """Play one episode, updating ``agent`` after every step; return the total reward."""
    total_reward = 0.0
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        total_reward += reward
        state = next_state
        if terminated or truncated:
            break
'''

LOOP_RETURNS_LAST_REWARD = '''\
#| export
def play_and_train(env, agent, t_max=10_000):
    """Play one episode, updating ``agent`` after every step; return the total reward."""
    state, _ = env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        agent.update(state, action, reward, next_state, terminated)
        state = next_state
        if terminated or truncated:
            break
    return reward
'''


BUGS = (
    Bug("value_max_starts_at_zero", LESSON, "test_value_and_best_action",
        {"get_value": VALUE_MAX_STARTS_AT_ZERO},
        description="the running maximum starts at 0, so a state whose legal Q-values "
                    "are all negative gets value 0"),
    Bug("value_over_all_actions", LESSON, "test_value_and_best_action",
        {"get_value": VALUE_OVER_ALL_ACTIONS},
        description="the maximum runs over all six Taxi actions, not the state's legal "
                    "ones; an illegal action's unset Q-value (0) can win"),
    Bug("ties_to_lowest_action", LESSON, "test_best_action_ties",
        {"get_best_action": TIES_TO_LOWEST_ACTION},
        description="max() with a key returns the first of the tied actions, every time"),
    Bug("ties_with_global_random", LESSON, "test_best_action_ties",
        {"get_best_action": TIES_WITH_GLOBAL_RANDOM},
        description="ties broken uniformly, but by Python's global random module: runs "
                    "do not reproduce with the agent's seed"),
    Bug("explores_only_non_greedy_actions", LESSON, "test_epsilon_greedy",
        {"get_action": EXPLORES_ONLY_NON_GREEDY_ACTIONS},
        description="exploration picks among the non-greedy actions only (another "
                    "convention, not the one the lesson asks for: best with probability "
                    "1 - eps + eps/k)"),
    Bug("explores_illegal_actions", LESSON, "test_epsilon_greedy",
        {"get_action": EXPLORES_ILLEGAL_ACTIONS},
        description="exploration draws from range(6), ignoring get_legal_actions"),
    Bug("epsilon_read_at_construction", LESSON, "test_epsilon_greedy",
        {"get_action": EPSILON_READ_AT_CONSTRUCTION},
        description="epsilon copied once when the agent is built, so a training loop "
                    "that decays agent.epsilon changes nothing"),
    Bug("epsilon_read_at_first_call", LESSON, "test_epsilon_greedy",
        {"get_action": EPSILON_READ_AT_FIRST_CALL},
        description="epsilon copied on the first get_action call, so decaying "
                    "agent.epsilon after the first episode changes nothing"),
    Bug("update_ignores_terminated", LESSON, "test_update",
        {"update": UPDATE_IGNORES_TERMINATED},
        description="always bootstraps from the next state, even when it is terminal"),
    Bug("update_alpha_swapped", LESSON, "test_update",
        {"update": UPDATE_ALPHA_SWAPPED},
        description="alpha weighs the old value and 1 - alpha the target"),
    Bug("loop_passes_truncation_as_terminal", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_PASSES_TRUNCATION_AS_TERMINAL},
        description="update is told terminated or truncated, so a time limit zeroes "
                    "the bootstrap"),
    Bug("loop_ignores_truncation", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_IGNORES_TRUNCATION},
        description="the episode stops only on terminated and runs past the time limit "
                    "(until t_max)"),
    Bug("loop_returns_nothing", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_RETURNS_NOTHING},
        description="the total reward is added up but never returned"),
    Bug("loop_returns_last_reward", LESSON, "test_play_and_train",
        {"play_and_train": LOOP_RETURNS_LAST_REWARD},
        description="returns the last step's reward instead of the episode's total"),
)
