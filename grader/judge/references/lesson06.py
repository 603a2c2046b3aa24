"""References for lesson 06's checks: the analysis functions students write."""

import numpy as np


def intervals(samples, levels):
    """(mean, low, high) of each sample: Student's t interval at its confidence level."""
    from scipy import stats  # here: scipy takes a second to import
    answers = []
    for values, confidence in zip(samples, levels):
        values = np.asarray(values, dtype=np.float64)
        mean = float(values.mean())
        half = float(stats.sem(values) * stats.t.ppf((1 + confidence) / 2, values.size - 1))
        answers.append([mean, mean - half, mean + half])
    return answers


def episodes_to_threshold(cases):
    """Per case: the number of episodes after which the mean of the last ``window``
    returns first reaches ``threshold`` (full windows only), or None."""
    answers = []
    for case in cases:
        returns, window = np.asarray(case["returns"], dtype=np.float64), case["window"]
        if returns.size < window:
            answers.append(None)
            continue
        means = np.convolve(returns, np.ones(window) / window, mode="valid")
        reached = np.flatnonzero(means >= case["threshold"] - 1e-9)
        answers.append(int(reached[0]) + window if reached.size else None)
    return answers


def autocorrelations(cases):
    """Per case: Pearson's r between values[:-lag] and values[lag:] (0 where either slice
    is constant)."""
    answers = []
    for case in cases:
        values, lag = np.asarray(case["values"], dtype=np.float64), case["lag"]
        before, after = values[:-lag], values[lag:]
        if before.std() == 0 or after.std() == 0:
            answers.append(0.0)
        else:
            answers.append(float(np.corrcoef(before, after)[0, 1]))
    return answers
