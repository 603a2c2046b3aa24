"""References for lesson 06's checks: the analysis functions students write."""

import math

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


def _pearson(before, after):
    if len(before) < 2 or np.std(before) == 0 or np.std(after) == 0:
        return None
    return float(np.corrcoef(before, after)[0, 1])


def _unvarying(values):
    """Whether ``values`` are all equal, read off the values (a computed std of equal
    decimals need not be 0)."""
    return bool(np.all(values == values[0]))


def autocorrelation_hint(values, lag, got):
    """What a wrong autocorrelation ``got`` is likely to have computed instead, as
    advice (never shipped to students: the advice computes the answer)."""
    values = np.asarray(values, dtype=np.float64)
    before, after = values[:-lag], values[lag:]
    if _unvarying(before) or _unvarying(after):
        which = "values[:-lag]" if _unvarying(before) else "values[lag:]"
        return (f" Here {which} does not vary: there is nothing to correlate, return 0.0 "
                "(np.corrcoef would give nan).")
    if got is None or not math.isfinite(got):
        return " Return Pearson's r as a float."

    def near(value):
        return value is not None and math.isclose(got, value, rel_tol=1e-6, abs_tol=1e-9)

    if lag != 1 and near(_pearson(values[:-1], values[1:])):
        return (f" That is the lag-1 correlation: pair each value with the one {lag} places "
                "later, values[:-lag] with values[lag:].")
    for other in (lag - 1, lag + 1):
        if 1 <= other <= values.size - 2 and near(_pearson(values[:-other], values[other:])):
            return (f" That is the correlation at lag {other}, off by one: pair values[:-lag] "
                    "with values[lag:].")
    centred = values - values.mean()
    if near(float(np.sum(centred[:-lag] * centred[lag:]) / np.sum(centred**2))):
        return (" That is the autocorrelation function with one mean and one variance for the "
                "whole sequence (as statsmodels' acf); here use Pearson's r of the two slices, "
                "each centred on its own mean and scaled by its own standard deviation.")
    return (" Correlate values[:-lag] with values[lag:] (Pearson's r, each slice centred on "
            "its own mean).")
