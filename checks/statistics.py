"""Statistical tests used by checks, each at a stated false-failure rate.

A correct implementation fails a statistical check only by bad luck; every test here
rejects at ``FALSE_FAILURE_RATE``, so a correct solution fails one check at most once
in a million runs (the chi-square approximation is good here: every expected count is
at least 100).
"""

import numpy as np

FALSE_FAILURE_RATE = 1e-6


def chi_square_pvalue(observed_counts, expected_probabilities):
    """p-value of observed counts under the expected distribution (goodness of fit)."""
    from scipy import stats  # here: scipy takes a second to import
    observed = np.asarray(observed_counts, dtype=np.float64)
    expected = np.asarray(expected_probabilities, dtype=np.float64) * observed.sum()
    return float(stats.chisquare(observed, expected).pvalue)


def fits(observed_counts, expected_probabilities):
    """True unless the counts are implausible at the false-failure rate."""
    return chi_square_pvalue(observed_counts, expected_probabilities) >= FALSE_FAILURE_RATE


def describe_counts(observed_counts, expected_probabilities, labels):
    """'label: observed vs expected' lines for feedback, largest deviations first."""
    observed = np.asarray(observed_counts, dtype=np.float64)
    expected = np.asarray(expected_probabilities) * observed.sum()
    order = np.argsort(-np.abs(observed - expected))[:4]
    return "; ".join(f"{labels[i]}: {observed[i]:.0f} times (expected about {expected[i]:.0f})"
                     for i in order)
