"""The kinds of bug students write, which the bug suite is built to cover.

Syntactic mutants (benchmarks/mutation_score.py) change an operator or a constant; the
bugs students write are about meaning: a boundary, a state after wrap-around, the wrong
random generator. Every bug in ``tests/bugs`` names its kind, and every rule of a lesson
has a bug of a kind that fits it (tests/lessons/test_requirements.py), so the suite is aimed at
these classes of mistake, not only at the examples that prompted them.
"""

KINDS = {
    "boundary": "an edge value handled wrong: 0, 1, -1, an empty batch, the largest index",
    "after-wrap": "a state read wrong once a fixed-size store wraps around (overwritten "
                  "entries still counted, the oldest entry not the one replaced)",
    "past-terminal": "going on past a terminal step: bootstrapping from it, crossing into "
                     "the next episode, stopping on truncation as if it were terminal",
    "global-generator": "randomness from the global generator (np.random, random) instead of "
                        "the object's own, or a new unseeded one",
    "mutates-input": "an input changed in place, or a stored value that aliases the "
                     "caller's array",
    "size-from-argument": "a size taken from an argument or a constant where the data "
                          "holds another (capacity instead of how many are stored)",
    "falsy-as-missing": "0, 0.0 or an empty value taken for 'not given' (if beta:, x or "
                        "default)",
    "replacement": "sampling with replacement where it must be without, or the reverse",
    "accidental-refusal": "bad input refused by accident (an IndexError from deep inside) "
                          "or not at all, instead of a ValueError that says what is wrong",
    "wrong-formula": "a quantity computed by the wrong formula: a sign, an exponent, a "
                     "missing term, the wrong operand",
    "wrong-source": "the right computation on the wrong data: another episode's goal, the "
                    "state before the step, the online network for the target",
    "wrong-distribution": "draws from the wrong distribution: not proportional, not uniform, "
                          "the wrong share",
    "protocol": "the lesson's interface not followed: a wrong return type or shape, an "
                "attribute not kept up to date, a step of the loop left out or added",
    "numpy-scalars": "a numpy scalar (np.bool_, np.int64, np.float64, as a row of a numpy "
                     "batch holds) treated unlike Python's: a flag tested with `is True`, "
                     "an isinstance(x, int) refusal",
}
