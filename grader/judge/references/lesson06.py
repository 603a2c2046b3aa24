"""References for lesson 06's checks: the analysis functions students write."""

import numpy as np


def intervals(samples, levels):
    """(mean, low, high) of each sample: Student's t interval at its confidence level."""
    from scipy import stats  # here: scipy takes a second to import
    answers = []
    for values, confidence in zip(samples, levels):
        values = np.asarray(values, dtype=np.float64)
        mean = float(values.mean())
        if np.all(values == values[0]):  # no spread at all (stats.sem may say 1e-17)
            answers.append([mean, mean, mean])
            continue
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
        # window sums against threshold x window, exactly: a mean equal to the threshold
        # reaches it, one below it by any margin does not
        sums = np.convolve(returns, np.ones(window), mode="valid")
        reached = np.flatnonzero(sums >= case["threshold"] * window)
        answers.append(int(reached[0]) + window if reached.size else None)
    return answers


def autocorrelations(cases):
    """Per case: Pearson's r between values[:-lag] and values[lag:] (0 where either slice
    is constant)."""
    answers = []
    for case in cases:
        values, lag = np.asarray(case["values"], dtype=np.float64), case["lag"]
        before, after = values[:-lag], values[lag:]
        if np.all(before == before[0]) or np.all(after == after[0]):
            answers.append(0.0)
        else:
            answers.append(float(np.corrcoef(before, after)[0, 1]))
    return answers
