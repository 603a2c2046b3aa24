"""``get_legal_actions`` functions that are plain data, so they can be copied anywhere.

A tabular agent asks ``get_legal_actions(state)`` which actions it may take. A lambda
works in a notebook; these classes do the same and can also be rebuilt from their
arguments, which is how the grader hands them to code in another process.
"""


class LegalActions:
    """The legal actions of each state, from a table: ``table[state]`` (a list indexed by
    state, or a dict keyed by state)."""

    def __init__(self, table):
        self.table = table

    # positional, as the lesson calls it: get_legal_actions(state); an immutable sequence,
    # as the lesson's range(N_ACTIONS) is (code that shuffles or sorts it in place fails
    # here as it fails there)
    def __call__(self, state, /):
        return tuple(self.table[state])


class AllActions:
    """Every action ``0 .. n_actions - 1`` is legal in every state (Taxi: six)."""

    def __init__(self, n_actions):
        self.n_actions = n_actions

    def __call__(self, state, /):  # positional, as the lesson calls it; a range, as the lesson's
        return range(self.n_actions)
