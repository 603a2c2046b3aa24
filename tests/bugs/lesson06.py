"""Buggy answers to lesson 06 (the capstone's analysis functions)."""

from . import Bug, edited, edits_of

LESSON = "06_capstone"


_edit = edits_of(LESSON)


INTERVAL_WITH_THE_NORMAL_QUANTILE = _edit("confidence_interval", (
    "stats.t.ppf((1 + confidence) / 2, values.size - 1)", "stats.norm.ppf((1 + confidence) / 2)"))

INTERVAL_WITH_POPULATION_STD = _edit("confidence_interval", (
    "stats.sem(values)", "values.std() / np.sqrt(values.size)"))

THRESHOLD_WITH_PARTIAL_WINDOWS = _edit("episodes_to_threshold", (
    """\
    if returns.size < window:
        return None
    # each window's sum against threshold x window: exact for whole-number returns,
    # where means made with weights 1/window round (three 7s would average 6.999...)
    window_sums = np.convolve(returns, np.ones(window), mode="valid")
    reached = np.flatnonzero(window_sums >= threshold * window)
    return int(reached[0] + window) if reached.size else None  # a Python int""",
    """\
    sums = np.cumsum(returns)
    counts = np.minimum(np.arange(1, returns.size + 1), window)
    sums[window:] -= sums[:-window]
    reached = np.flatnonzero(sums / counts >= threshold)  # early windows are partial
    return int(reached[0]) + 1 if reached.size else None"""))

THRESHOLD_RETURNS_THE_START_INDEX = _edit("episodes_to_threshold", (
    "return int(reached[0] + window) if reached.size else None  # a Python int",
    "return int(reached[0]) if reached.size else None"))

AUTOCORRELATION_NOT_CENTRED = _edit("autocorrelation", (
    "return float(np.corrcoef(before, after)[0, 1])",
    "return float(np.mean(before * after) / np.var(values))"))

AUTOCORRELATION_NAN_WHEN_CONSTANT = _edit("autocorrelation", (
    """\
    if np.all(before == before[0]) or np.all(after == after[0]):  # constant slices
        return 0.0
""", ""))

AUTOCORRELATION_IGNORES_THE_LAG = _edit("autocorrelation", (
    "before, after = values[:-lag], values[lag:]",
    "before, after = values[:-1], values[1:]"))

AUTOCORRELATION_LAG_OFF_BY_ONE = _edit("autocorrelation", (
    "before, after = values[:-lag], values[lag:]",
    "before, after = values[:-lag - 1], values[lag + 1:]  # lag values *between* the two"))

AUTOCORRELATION_WHOLE_SEQUENCE_MEAN = _edit("autocorrelation", (
    """\
    if np.all(before == before[0]) or np.all(after == after[0]):  # constant slices
        return 0.0
    return float(np.corrcoef(before, after)[0, 1])""",
    """\
    centred = values - values.mean()  # the textbook acf: one mean, one variance
    if not centred.any():
        return 0.0
    return float(np.sum(centred[:-lag] * centred[lag:]) / np.sum(centred ** 2))"""))

AUTOCORRELATION_ACCEPTS_LAG_ZERO = _edit("autocorrelation", (
    "if lag < 1 or values.size - lag < 2:", "if values.size - lag < 2:"))

AUTOCORRELATION_ACCEPTS_ONE_PAIR = _edit("autocorrelation", (
    "if lag < 1 or values.size - lag < 2:", "if lag < 1 or values.size - lag < 1:"))


# --- boundaries, ties and partly degenerate input (found by mutation testing) -----------

THRESHOLD_STRICTLY_ABOVE = _edit("episodes_to_threshold", (
    "window_sums >= threshold * window", "window_sums > threshold * window"))

THRESHOLD_NONE_FOR_ONE_WINDOW = _edit("episodes_to_threshold", (
    "if returns.size < window:", "if returns.size <= window:"))

AUTOCORRELATION_CHECKS_ONLY_THE_FIRST_SLICE = _edit("autocorrelation", (
    "if np.all(before == before[0]) or np.all(after == after[0]):",
    "if np.all(before == before[0]):"))

AUTOCORRELATION_REFUSES_TWO_PAIRS = _edit("autocorrelation", (
    "values.size - lag < 2", "values.size - lag < 3"))

INTERVAL_DEFAULT_LEVEL_90 = _edit("confidence_interval", (
    "confidence=0.95", "confidence=0.9"))


# --- inputs, refusals and what is returned (issue 22: a sentence of the text each) -------

INTERVAL_WITHOUT_THE_MEAN = _edit("confidence_interval", (
    "return mean, mean - half_width, mean + half_width",
    "return mean - half_width, mean + half_width  # the interval is low and high"))

INTERVAL_REFUSES_ONLY_ONE_VALUE = _edit("confidence_interval", (
    "if values.size < 2:", "if values.size == 1:"))

INTERVAL_NEEDS_AN_ARRAY = _edit("confidence_interval", (
    "    values = np.asarray(values, dtype=np.float64)\n", ""))

INTERVAL_CENTRES_IN_PLACE = _edit("confidence_interval", (
    "    half_width = float(stats.sem(values) * stats.t.ppf((1 + confidence) / 2, values.size - 1))",
    """\
    values -= mean  # deviations from the mean, for the sample standard deviation
    std = np.sqrt(np.sum(values ** 2) / (values.size - 1))
    half_width = float(std / np.sqrt(values.size)
                       * stats.t.ppf((1 + confidence) / 2, values.size - 1))"""))

THRESHOLD_WITHOUT_THE_SHORT_RUN_GUARD = _edit("episodes_to_threshold", (
    """\
    if returns.size < window:
        return None
""", ""))

THRESHOLD_NAN_WHEN_NEVER = _edit("episodes_to_threshold", (
    "return int(reached[0] + window) if reached.size else None  # a Python int",
    "return int(reached[0]) + window if reached.size else float(\"nan\")  # pandas' missing"))

THRESHOLD_SUBTRACTS_IN_PLACE = _edit("episodes_to_threshold", (
    """\
    # each window's sum against threshold x window: exact for whole-number returns,
    # where means made with weights 1/window round (three 7s would average 6.999...)
    window_sums = np.convolve(returns, np.ones(window), mode="valid")
    reached = np.flatnonzero(window_sums >= threshold * window)""",
    """\
    returns -= threshold  # above the threshold: a positive window mean
    window_means = np.convolve(returns, np.ones(window) / window, mode="valid")
    reached = np.flatnonzero(window_means >= 0)"""))

AUTOCORRELATION_NEEDS_AN_ARRAY = _edit("autocorrelation", (
    "    values = np.asarray(values, dtype=np.float64)\n", "",),
    ("values.size - lag", "len(values) - lag"), ("values.size}", "len(values)}"),
    ("np.all(before == before[0]) or np.all(after == after[0])",
     "before.max() == before.min() or after.max() == after.min()"))

AUTOCORRELATION_CENTRES_IN_PLACE = _edit("autocorrelation", (
    "    before, after = values[:-lag], values[lag:]",
    "    values -= values.mean()  # r does not change when every value moves alike\n"
    "    before, after = values[:-lag], values[lag:]"))

AUTOCORRELATION_REFUSES_ONLY_ONE_PAIR = _edit("autocorrelation", (
    "if lag < 1 or values.size - lag < 2:", "if lag < 1 or values.size - lag == 1:"))


BUGS = [
    Bug("interval_with_the_normal_quantile", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_WITH_THE_NORMAL_QUANTILE},
        description="z instead of t: too narrow for five seeds",
        rule="interval-uses-t", kind="wrong-formula"),
    Bug("interval_with_population_std", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_WITH_POPULATION_STD},
        description="the standard error from the population standard deviation (ddof=0)",
        rule="interval-sample-std", kind="wrong-formula"),
    Bug("threshold_with_partial_windows", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_WITH_PARTIAL_WINDOWS},
        description="one lucky early episode counts as learned",
        rule="threshold-full-windows", kind="boundary"),
    Bug("threshold_returns_the_start_index", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_RETURNS_THE_START_INDEX},
        description="returns where the first good window starts, not how many episodes it took",
        rule="threshold-counts-episodes", kind="wrong-formula"),
    Bug("autocorrelation_not_centred", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_NOT_CENTRED},
        description="mean of products over the variance, without centring",
        rule="autocorrelation-pearson", kind="wrong-formula"),
    Bug("autocorrelation_nan_when_constant", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_NAN_WHEN_CONSTANT},
        description="a constant slice gives NaN",
        rule="autocorrelation-constant-is-zero", kind="boundary"),
    Bug("autocorrelation_ignores_the_lag", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_IGNORES_THE_LAG},
        description="always the lag-1 correlation, whatever the lag",
        rule="autocorrelation-pearson", kind="wrong-source"),
    Bug("autocorrelation_lag_off_by_one", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_LAG_OFF_BY_ONE},
        description="pairs values lag + 1 apart",
        rule="autocorrelation-pearson", kind="wrong-source"),
    Bug("autocorrelation_whole_sequence_mean", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_WHOLE_SEQUENCE_MEAN},
        description="the acf estimator (one mean and variance for the whole sequence), not "
                    "Pearson's r of the two slices",
        rule="autocorrelation-pearson", kind="wrong-formula"),
    Bug("autocorrelation_accepts_lag_zero", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_ACCEPTS_LAG_ZERO},
        description="lag 0 slices values[:-0], an empty array, instead of raising",
        rule="autocorrelation-lag-at-least-1", kind="accidental-refusal"),
    Bug("autocorrelation_accepts_one_pair", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_ACCEPTS_ONE_PAIR},
        description="a single pair is correlated (0.0) instead of refused",
        rule="autocorrelation-needs-two-pairs", kind="accidental-refusal"),
    Bug("threshold_strictly_above", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_STRICTLY_ABOVE},
        description="> instead of >=: a window mean exactly at the threshold does not count",
        rule="threshold-reached-when-equal", kind="boundary"),
    Bug("threshold_none_for_one_window", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_NONE_FOR_ONE_WINDOW},
        description="<= window: a run exactly one window long is never judged",
        rule="threshold-full-windows", kind="boundary"),
    Bug("autocorrelation_checks_only_the_first_slice", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_CHECKS_ONLY_THE_FIRST_SLICE},
        description="only values[:-lag] is tested for being constant: nan when the series "
                    "goes flat at the end",
        rule="autocorrelation-constant-is-zero", kind="boundary"),
    Bug("autocorrelation_refuses_two_pairs", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_REFUSES_TWO_PAIRS},
        description="the guard is off by one: two pairs of values, the fewest there can be, "
                    "raise ValueError",
        rule="autocorrelation-needs-two-pairs", kind="boundary"),
    Bug("interval_default_level_90", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_DEFAULT_LEVEL_90},
        description="the signature's default confidence changed from 0.95 to 0.9",
        rule="interval-default-95", kind="protocol"),
    Bug("interval_without_the_mean", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_WITHOUT_THE_MEAN},
        description="returns (low, high), leaving out the mean",
        rule="result-types", kind="protocol"),
    Bug("interval_refuses_only_one_value", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_REFUSES_ONLY_ONE_VALUE},
        description="== 1 instead of < 2: an empty array gives (nan, nan, nan) instead of "
                    "ValueError",
        rule="interval-needs-two-values", kind="accidental-refusal"),
    Bug("interval_needs_an_array", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_NEEDS_AN_ARRAY},
        description="values.size and values.mean() on the argument as given: a list fails",
        rule="takes-lists", kind="protocol"),
    Bug("interval_centres_in_place", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_CENTRES_IN_PLACE},
        description="values -= mean on np.asarray's result, which is the caller's array: "
                    "the right interval, and the caller's seeds overwritten",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("threshold_without_the_short_run_guard", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_WITHOUT_THE_SHORT_RUN_GUARD},
        description="no check for a run shorter than one window: np.convolve then swaps "
                    "its arguments and finds a 'window' that is not one",
        rule="threshold-none-if-never", kind="boundary"),
    Bug("threshold_nan_when_never", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_NAN_WHEN_NEVER},
        description="nan instead of None when no window reaches the threshold",
        rule="result-types", kind="protocol"),
    Bug("threshold_subtracts_in_place", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_SUBTRACTS_IN_PLACE},
        description="returns -= threshold on the caller's array: the right answer, and the "
                    "caller's returns shifted",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("autocorrelation_needs_an_array", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_NEEDS_AN_ARRAY},
        description="slices of the argument as given: a list's slices have no .max()",
        rule="takes-lists", kind="protocol"),
    Bug("autocorrelation_centres_in_place", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_CENTRES_IN_PLACE},
        description="values -= values.mean() on the caller's array: r is unchanged, the "
                    "caller's values are not",
        rule="inputs-untouched", kind="mutates-input"),
    Bug("autocorrelation_refuses_only_one_pair", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_REFUSES_ONLY_ONE_PAIR},
        description="== 1 instead of < 2: a lag as long as the values leaves no pair and "
                    "gives nan instead of ValueError",
        rule="autocorrelation-needs-two-pairs", kind="accidental-refusal"),
]

# --- what every call promises (checks.contracts) ------------------------------------------

LAG_MUST_BE_A_PYTHON_INT = _edit("autocorrelation", (
    "    values = np.asarray(values, dtype=np.float64)\n",
    "    if not isinstance(lag, int):\n"
    "        raise ValueError(f\"lag must be an int, got {lag!r}\")\n"
    "    values = np.asarray(values, dtype=np.float64)\n"))

BUGS = (*BUGS,
    Bug("lag_must_be_a_python_int", LESSON, "test_autocorrelation",
        {"autocorrelation": LAG_MUST_BE_A_PYTHON_INT},
        description="isinstance(lag, int) refuses an np.int64 lag from a numpy range",
        rule="numpy-scalars", kind="protocol"),
)


# --- blind round 1: wrong answers written from the lesson text alone ----------------

INTERVAL_NORMAL_FOR_LARGE_SAMPLES_CONFIDENCE_INTERVAL = """\
#| export
import time

import numpy as np
from scipy import stats


def confidence_interval(values, confidence=0.95):
    \"\"\"(mean, low, high): Student's t interval for the mean of ``values``.\"\"\"
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        raise ValueError(f"a confidence interval needs at least two values, got {values.size}")
    mean = float(values.mean())
    if values.size >= 30:  # large sample: the normal approximation is good enough
        quantile = stats.norm.ppf((1 + confidence) / 2)
    else:
        quantile = stats.t.ppf((1 + confidence) / 2, values.size - 1)
    half_width = float(stats.sem(values) * quantile)
    return mean, mean - half_width, mean + half_width
"""

BUGS = (*BUGS,
    Bug("interval_normal_for_large_samples", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_NORMAL_FOR_LARGE_SAMPLES_CONFIDENCE_INTERVAL},
        description="switches to the normal quantile from 30 values on: right for the study's "
                    "ten seeds, too narrow for larger samples",
        rule="interval-uses-t", kind="wrong-formula"),
)


# --- blind round 2: wrong answers written from the lesson text alone ----------------

AUTOCORRELATION_CONSTANT_BY_TOLERANCE_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    values = np.asarray(values, dtype=np.float64)
    if lag < 1 or values.size - lag < 2:
        raise ValueError("need a lag of at least 1 and at least two pairs of values")
    before, after = values[:-lag], values[lag:]
    if np.isclose(before.std(), 0) or np.isclose(after.std(), 0):
        return 0.0
    return float(np.corrcoef(before, after)[0, 1])
"""

BUGS = (*BUGS,
    Bug("autocorrelation_constant_by_tolerance", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_CONSTANT_BY_TOLERANCE_AUTOCORRELATION},
        description="np.isclose(std, 0) (atol 1e-8) calls a slice that varies on a small scale "
                    "constant and returns 0.0 instead of r",
        rule="autocorrelation-pearson", kind="boundary"),
)


# --- blind round 3: wrong answers written from the lesson text alone ----------------

AUTOCORRELATION_REFUSES_LONG_LAGS_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    values = np.asarray(values, dtype=np.float64)
    if lag < 1 or lag > values.size // 2 or values.size - lag < 2:
        raise ValueError(f"lag {lag} out of range for {values.size} values")
    before, after = values[:-lag], values[lag:]
    if np.all(before == before[0]) or np.all(after == after[0]):
        return 0.0
    return float(np.corrcoef(before, after)[0, 1])
"""

BUGS = (*BUGS,
    Bug("autocorrelation_refuses_long_lags", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_REFUSES_LONG_LAGS_AUTOCORRELATION},
        description="refuses any lag beyond half the length (a rule of thumb), although two pairs "
                    "remain",
        rule="autocorrelation-needs-two-pairs", kind="boundary"),
)



# --- blind round 4: wrong answers written from the lesson text alone ----------------

THRESHOLD_MEAN_BY_WEIGHTS_ROUNDS_TIES_EPISODES_TO_THRESHOLD = """\
#| export
def episodes_to_threshold(returns, threshold, window):
    \"\"\"The number of episodes after which the mean of the last ``window`` returns first
    reaches ``threshold`` (full windows only), or None if it never does.\"\"\"
    returns = np.asarray(returns, dtype=np.float64)
    if returns.size < window:
        return None
    means = np.convolve(returns, np.ones(window) / window, mode="valid")
    reached = np.flatnonzero(means >= threshold)
    return int(reached[0] + window) if reached.size else None
"""

BUGS = (*BUGS,
    Bug("threshold_mean_by_weights_rounds_ties", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_MEAN_BY_WEIGHTS_ROUNDS_TIES_EPISODES_TO_THRESHOLD},
        description="moving mean as np.convolve(returns, np.ones(window) / window): three 7s "
                    "average 6.999..., so a window exactly at the threshold is missed",
        rule="threshold-reached-when-equal", kind="boundary"),
)


# --- blind round 5: wrong answers written from the lesson text alone ----------------

INTERVAL_CONSTANT_VALUES_ROUNDING_SPREAD_CONFIDENCE_INTERVAL = """\
#| export
import time

import numpy as np
from scipy import stats


def confidence_interval(values, confidence=0.95):
    \"\"\"(mean, low, high): Student's t interval for the mean of ``values``.\"\"\"
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n < 2:
        raise ValueError("a confidence interval needs at least two values")
    mean = float(values.mean())
    s = float(values.std(ddof=1))
    half_width = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * s / n ** 0.5
    return mean, mean - half_width, mean + half_width
"""

BUGS = (*BUGS,
    Bug("interval_constant_values_rounding_spread", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_CONSTANT_VALUES_ROUNDING_SPREAD_CONFIDENCE_INTERVAL},
        description="no test for values that do not vary: [0.1, 0.1, 0.1] has a computed s of 1.7e-17, so low < mean < high by a hair",
        rule="interval-no-width-when-constant", kind="boundary"),
)


# --- blind round 6: wrong answers written from the lesson text alone ----------------

INTERVAL_ONE_PASS_VARIANCE_CONFIDENCE_INTERVAL = """\
#| export
import time

import numpy as np
from scipy import stats


def confidence_interval(values, confidence=0.95):
    \"\"\"(mean, low, high): Student's t interval for the mean of ``values``.\"\"\"
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n < 2:
        raise ValueError("a confidence interval needs at least two values")
    mean = float(values.mean())
    if np.all(values == values[0]):
        return mean, mean, mean
    variance = max((float(np.sum(values ** 2)) - n * mean ** 2) / (n - 1), 0.0)
    half = float(stats.t.ppf((1 + confidence) / 2, n - 1) * np.sqrt(variance / n))
    return mean, mean - half, mean + half
"""

BUGS = (*BUGS,
    Bug("interval_one_pass_variance", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_ONE_PASS_VARIANCE_CONFIDENCE_INTERVAL},
        description="s from (sum x^2 - n mean^2) / (n - 1): catastrophic cancellation for values far from 0 (s = 0 or garbage around 1e8)",
        rule="interval-uses-t", kind="wrong-formula"),
)


# --- blind round 6: wrong answers written from the lesson text alone ----------------

THRESHOLD_ISCLOSE_COUNTS_NEAR_MISSES_EPISODES_TO_THRESHOLD = """\
#| export
def episodes_to_threshold(returns, threshold, window):
    \"\"\"The number of episodes after which the mean of the last ``window`` returns first
    reaches ``threshold`` (full windows only), or None if it never does.\"\"\"
    returns = np.asarray(returns, dtype=np.float64)
    if returns.size < window:
        return None
    means = np.convolve(returns, np.ones(window) / window, mode="valid")
    # three 7s average 6.999...: count a mean that rounding left just short
    reached = np.flatnonzero((means >= threshold) | np.isclose(means, threshold))
    return int(reached[0] + window) if reached.size else None
"""

BUGS = (*BUGS,
    Bug("threshold_isclose_counts_near_misses", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_ISCLOSE_COUNTS_NEAR_MISSES_EPISODES_TO_THRESHOLD},
        description="mean >= threshold or np.isclose(mean, threshold) (rtol 1e-5): a mean of 194.999 'reaches' 195",
        rule="threshold-none-if-never", kind="boundary"),
)


# --- blind round 6: wrong answers written from the lesson text alone ----------------

AUTOCORRELATION_RAW_SUMS_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    values = np.asarray(values, dtype=np.float64)
    if lag < 1 or values.size - lag < 2:
        raise ValueError(f"need a lag of at least 1 and two pairs, got lag {lag} for {values.size} values")
    x, y = values[:-lag], values[lag:]
    if np.all(x == x[0]) or np.all(y == y[0]):
        return 0.0
    m = x.size
    numerator = m * np.sum(x * y) - np.sum(x) * np.sum(y)
    denominator = np.sqrt((m * np.sum(x * x) - np.sum(x) ** 2) * (m * np.sum(y * y) - np.sum(y) ** 2))
    return float(numerator / denominator) if denominator > 0 else 0.0
"""

BUGS = (*BUGS,
    Bug("autocorrelation_raw_sums", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_RAW_SUMS_AUTOCORRELATION},
        description="r = (m sum xy - sum x sum y) / sqrt(...) from raw sums: for values far from 0 (around 1e8) the cancellation gives nonsense",
        rule="autocorrelation-pearson", kind="wrong-formula"),
)


# --- blind round 10: wrong answers written from the lesson text alone ----------------

AUTOCORRELATION_NAN_MEANS_CONSTANT_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    values = np.asarray(values, dtype=np.float64)
    if lag < 1 or values.size - lag < 2:
        raise ValueError(f"need a lag of at least 1 and two pairs, got lag {lag} for {values.size} values")
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.corrcoef(values[:-lag], values[lag:])[0, 1]
    return 0.0 if np.isnan(r) else float(r)
"""

BUGS = (*BUGS,
    Bug("autocorrelation_nan_means_constant", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_NAN_MEANS_CONSTANT_AUTOCORRELATION},
        description="computes np.corrcoef and turns a NaN into 0.0; but constant slices of 0.1s have a rounding spread of 1e-17, so [0.1] * 4 gives r = 1.0, not 0.0",
        rule="autocorrelation-constant-is-zero", kind="boundary"),
)


# --- blind round 12: wrong answers written from the lesson text alone ----------------

THRESHOLD_CUMSUM_DIFFERENCES_EPISODES_TO_THRESHOLD = """\
#| export
def episodes_to_threshold(returns, threshold, window):
    \"\"\"The number of episodes after which the mean of the last ``window`` returns first
    reaches ``threshold`` (full windows only), or None if it never does.\"\"\"
    returns = np.asarray(returns, dtype=np.float64)
    if returns.size < window:
        return None
    totals = np.concatenate(([0.0], np.cumsum(returns)))  # O(n) moving sums
    window_sums = totals[window:] - totals[:-window]
    reached = np.flatnonzero(window_sums >= threshold * window)
    return int(reached[0] + window) if reached.size else None
"""

BUGS = (*BUGS,
    Bug("threshold_cumsum_differences", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_CUMSUM_DIFFERENCES_EPISODES_TO_THRESHOLD},
        description="window sums as differences of one running cumulative sum: the rounding of the earlier episodes leaks into later windows, so two 0.8s after -1.2, -3.0, -1.8 sum to 1.5999999999999996 and a mean equal to 0.8 does not reach 0.8",
        rule="threshold-reached-when-equal", kind="wrong-formula"),
)


# --- blind round 13: wrong answers written from the lesson text alone ----------------

INTERVAL_LEVEL_ROUNDED_CONFIDENCE_INTERVAL = """\
#| export
import time

import numpy as np
from scipy import stats


def confidence_interval(values, confidence=0.95):
    \"\"\"(mean, low, high): Student's t interval for the mean of ``values``.\"\"\"
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        raise ValueError("a confidence interval needs at least two values")
    mean = float(values.mean())
    if np.all(values == values[0]):
        return mean, mean, mean
    alpha = round(1 - confidence, 2)  # 1 - 0.95 is 0.050000000000000044
    half_width = float(stats.sem(values) * stats.t.ppf(1 - alpha / 2, values.size - 1))
    return mean, mean - half_width, mean + half_width
"""

BUGS = (*BUGS,
    Bug("interval_level_rounded", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_LEVEL_ROUNDED_CONFIDENCE_INTERVAL},
        description="alpha = round(1 - confidence, 2) to tidy 0.050000000000000044: 0.975 becomes a 97% interval, 0.999 an infinite one",
        rule="interval-uses-t", kind="wrong-formula"),
)


AUTOCORRELATION_INTEGER_VALUES_FAIL_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    values = np.array(values)  # a copy: the caller's values stay as they were
    if lag < 1 or values.size - lag < 2:
        raise ValueError(f"need a lag of at least 1 and two pairs, got lag {lag} for {values.size} values")
    before, after = values[:-lag].copy(), values[lag:].copy()
    if np.all(before == before[0]) or np.all(after == after[0]):
        return 0.0
    before -= before.mean()  # each slice centred on its own mean
    after -= after.mean()
    return float(np.sum(before * after) / np.sqrt(np.sum(before**2) * np.sum(after**2)))
"""

BUGS = (*BUGS,
    Bug("autocorrelation_integer_values_fail", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_INTEGER_VALUES_FAIL_AUTOCORRELATION},
        description="np.array(values) keeps an integer dtype; centring copies of the slices in place then raises UFuncTypeError for a list of ints or an int array",
        rule="autocorrelation-pearson", kind="accidental-refusal"),
)


# --- blind round 14: wrong answers written from the lesson text alone ----------------

AUTOCORRELATION_CONSTANT_TEST_MISSES_LISTS_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    if lag < 1 or len(values) - lag < 2:
        raise ValueError(f"need a lag of at least 1 and at least two pairs of values, got "
                         f"lag {lag} for {len(values)} values")
    before, after = values[:-lag], values[lag:]
    if np.all(before == before[0]) or np.all(after == after[0]):  # a constant slice
        return 0.0
    return float(np.corrcoef(before, after)[0, 1])
"""

BUGS = (*BUGS,
    Bug("autocorrelation_constant_test_misses_lists", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_CONSTANT_TEST_MISSES_LISTS_AUTOCORRELATION},
        description="slices the argument as given and tests np.all(before == before[0]): for a list that compares the list with a number (False), so a constant slice of a list gives nan instead of 0.0",
        rule="autocorrelation-constant-is-zero", kind="numpy-scalars"),
)


# --- blind round 15: wrong answers written from the lesson text alone ----------------

INTERVAL_CONSTANT_TEST_FIRST_AND_LAST_CONFIDENCE_INTERVAL = """\
#| export
import time

import numpy as np
from scipy import stats


def confidence_interval(values, confidence=0.95):
    \"\"\"(mean, low, high): Student's t interval for the mean of ``values``.\"\"\"
    values = np.array(values, dtype=np.float64)
    if values.size < 2:
        raise ValueError(f"a confidence interval needs at least two values, got {values.size}")
    mean = float(values.mean())
    if values[0] == values[-1]:  # the values do not vary
        return mean, mean, mean
    n = values.size
    half_width = float(stats.t.ppf((1 + confidence) / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return mean, mean - half_width, mean + half_width
"""

INTERVAL_COUNTS_DISTINCT_VALUES_CONFIDENCE_INTERVAL = """\
#| export
import time

import numpy as np
from scipy import stats


def confidence_interval(values, confidence=0.95):
    \"\"\"(mean, low, high): Student's t interval for the mean of ``values``.\"\"\"
    values = np.array(values, dtype=np.float64)
    if values.size < 2:
        raise ValueError(f"a confidence interval needs at least two values, got {values.size}")
    mean = float(values.mean())
    distinct = np.unique(values)
    if distinct.size == 1:  # the values do not vary
        return mean, mean, mean
    n = distinct.size
    half_width = float(stats.t.ppf((1 + confidence) / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return mean, mean - half_width, mean + half_width
"""

AUTOCORRELATION_DENOMINATOR_OVERFLOWS_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    values = np.array(values, dtype=np.float64)
    if lag < 1 or values.size - lag < 2:
        raise ValueError(f"need a lag of at least 1 and at least two pairs, got lag {lag} "
                         f"for {values.size} values")
    before, after = values[:-lag], values[lag:]
    if np.all(before == before[0]) or np.all(after == after[0]):
        return 0.0
    x, y = before - before.mean(), after - after.mean()
    sxy, sxx, syy = np.sum(x * y), np.sum(x * x), np.sum(y * y)
    with np.errstate(all="ignore"):
        return float(sxy / np.sqrt(sxx * syy))
"""

AUTOCORRELATION_TRUNCATED_STREAM_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    values = np.array(values, dtype=np.float64)
    if lag < 1 or values.size - lag < 2:
        raise ValueError(f"need a lag of at least 1 and at least two pairs, got lag {lag} "
                         f"for {values.size} values")
    values = values[:10_000]  # plenty for an estimate of r, and 8 lags per run stay fast
    before, after = values[:-lag], values[lag:]
    if np.all(before == before[0]) or np.all(after == after[0]):
        return 0.0
    return float(np.corrcoef(before, after)[0, 1])
"""

BUGS = (*BUGS,
    Bug("interval_constant_test_first_and_last", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_CONSTANT_TEST_FIRST_AND_LAST_CONFIDENCE_INTERVAL},
        description="calls the values constant when the first equals the last: [1, 5, 1] gets a zero-width interval",
        rule="interval-uses-t", kind="wrong-formula"),
    Bug("interval_counts_distinct_values", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_COUNTS_DISTINCT_VALUES_CONFIDENCE_INTERVAL},
        description="reuses np.unique (made for the constant test) for n: seeds with equal values (CartPole's capped 500s, zero differences) shrink n, so t and 1/sqrt(n) are too large",
        rule="interval-uses-t", kind="wrong-formula"),
    Bug("autocorrelation_denominator_overflows", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_DENOMINATOR_OVERFLOWS_AUTOCORRELATION},
        description="r = sxy / sqrt(sxx * syy): the product overflows to inf for values around 1e80 (r becomes 0.0) and underflows to 0 around 1e-90 (r becomes inf), though r does not depend on the scale",
        rule="autocorrelation-pearson", kind="wrong-formula"),
    Bug("autocorrelation_truncated_stream", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_TRUNCATED_STREAM_AUTOCORRELATION},
        description="cuts the stream to its first 10,000 values 'for speed' (the study logs hundreds of thousands of updates): later pairs are ignored",
        rule="autocorrelation-pearson", kind="size-from-argument"),
)


# --- blind round 16: wrong answers written from the lesson text alone ----------------

THRESHOLD_ALL_BELOW_SHORTCUT_FAILS_ON_EMPTY_RUN_EPISODES_TO_THRESHOLD = """\
#| export
def episodes_to_threshold(returns, threshold, window):
    \"\"\"The number of episodes after which the mean of the last ``window`` returns first
    reaches ``threshold`` (full windows only), or None if it never does.\"\"\"
    returns = np.asarray(returns, dtype=np.float64)
    if returns.max() < threshold:  # no mean of these returns can reach it: skip the scan
        return None
    if returns.size < window:
        return None
    window_sums = np.convolve(returns, np.ones(window), mode="valid")
    reached = np.flatnonzero(window_sums >= threshold * window)
    return int(reached[0]) + int(window) if reached.size else None
"""

BUGS = (*BUGS,
    Bug("threshold_all_below_shortcut_fails_on_empty_run", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_ALL_BELOW_SHORTCUT_FAILS_ON_EMPTY_RUN_EPISODES_TO_THRESHOLD},
        description="skips the scan when every return is below the threshold (returns.max() < threshold), tested before the length check: an empty run raises numpy's ValueError (zero-size array) instead of returning None",
        rule="threshold-none-if-never", kind="accidental-refusal"),
)


# --- blind round 17: wrong answers written from the lesson text alone ----------------

AUTOCORRELATION_FLOATS_LIST_ITEMS_IN_PLACE_AUTOCORRELATION = """\
#| export
def autocorrelation(values, lag):
    \"\"\"Pearson's r between values[:-lag] and values[lag:] (0.0 if either slice is constant).\"\"\"
    if isinstance(values, list):  # numbers may arrive as numpy scalars: make them plain floats
        for i, value in enumerate(values):
            values[i] = float(value)
    values = np.asarray(values, dtype=np.float64)
    if lag < 1 or values.size - lag < 2:
        raise ValueError(f"need a lag of at least 1 and at least two pairs of values, got "
                         f"lag {lag} for {values.size} values")
    before, after = values[:-lag], values[lag:]
    if np.all(before == before[0]) or np.all(after == after[0]):
        return 0.0
    return float(np.corrcoef(before, after)[0, 1])
"""

BUGS = (*BUGS,
    Bug("autocorrelation_floats_list_items_in_place", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_FLOATS_LIST_ITEMS_IN_PLACE_AUTOCORRELATION},
        description="to 'treat numpy scalars as Python's', rewrites each item of a list argument as float(item) in place: r is right, the caller's ints / np.int64s become floats",
        rule="inputs-untouched", kind="mutates-input"),
)


THRESHOLD_SCRATCH_BUFFER_IS_THE_CALLERS_ARRAY_EPISODES_TO_THRESHOLD = """\
#| export
_work = {}  # run length -> a float array reused by the next runs of that length (220 runs)


def episodes_to_threshold(returns, threshold, window):
    \"\"\"The number of episodes after which the mean of the last ``window`` returns first
    reaches ``threshold`` (full windows only), or None if it never does.\"\"\"
    n = len(returns)
    work = _work.get(n)
    if work is None:
        work = _work[n] = np.asarray(returns, dtype=np.float64)
    else:
        work[:] = returns  # no new allocation
    if n < window:
        return None
    window_sums = np.convolve(work, np.ones(window), mode="valid")
    reached = np.flatnonzero(window_sums >= threshold * window)
    return int(reached[0] + window) if reached.size else None
"""

BUGS = (*BUGS,
    Bug("threshold_scratch_buffer_is_the_callers_array", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_SCRATCH_BUFFER_IS_THE_CALLERS_ARRAY_EPISODES_TO_THRESHOLD},
        description="keeps one float array per run length for reuse (np.asarray of the first run, which IS the caller's float64 array) and copies later runs into it: every answer is right, but the first caller's returns are overwritten by the next run's",
        rule="inputs-untouched", kind="mutates-input"),
)


# --- blind round 18: wrong answers written from the lesson text alone ----------------

AUTOCORRELATION_CACHED_BY_IDENTITY_AUTOCORRELATION = edited(
    LESSON, 'autocorrelation',
    ('#| export\n',
     "#| export\n_LAST_SERIES = [None, None]  # (the caller's object, our float copy of it): 8 lags, 1 series\n\n\n"),
    ('    values = np.asarray(values, dtype=np.float64)\n    if lag < 1 or values.size - lag < 2:\n',
     "    if _LAST_SERIES[0] is values:\n        series = _LAST_SERIES[1]\n    else:\n        series = np.array(values, dtype=np.float64)  # a copy: never touch the caller's\n        _LAST_SERIES[:] = [values, series]\n    if lag < 1 or series.size - lag < 2:\n"),
    ('                         f"lag {lag} for {values.size} values")\n    before, after = values[:-lag], values[lag:]\n',
     '                         f"lag {lag} for {series.size} values")\n    before, after = series[:-lag], series[lag:]\n'),
    ('    return float(np.corrcoef(before, after)[0, 1])',
     '    return float(np.corrcoef(before, after)[0, 1])\n'))

BUGS = (*BUGS,
    # blind round 18
    Bug("autocorrelation_cached_by_identity", LESSON, "test_autocorrelation",
        {"autocorrelation": AUTOCORRELATION_CACHED_BY_IDENTITY_AUTOCORRELATION},
        description="keeps the float copy of the last series it was given and reuses it when called with the same object again (the study asks 8 lags of one array): after the caller refills that array or list, r is of the old numbers",
        rule="autocorrelation-pearson", kind="wrong-source"),
)


# --- blind round 24: wrong answers written from the lesson text alone ----------------

THRESHOLD_ZERO_MEAN_SKIPPED_EPISODES_TO_THRESHOLD = """\
#| export
def episodes_to_threshold(returns, threshold, window):
    \"\"\"The number of episodes after which the mean of the last ``window`` returns first
    reaches ``threshold`` (full windows only), or None if it never does.\"\"\"
    returns = np.asarray(returns, dtype=np.float64)
    means = [None] * (window - 1) + [float(returns[end - window:end].sum()) / window
                                     for end in range(window, returns.size + 1)]
    for episode, mean in enumerate(means, start=1):
        if mean and mean >= threshold:  # None: not a full window yet
            return episode
    return None
"""

BUGS = (*BUGS,
    # blind round 24
    Bug("threshold_zero_mean_skipped", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_ZERO_MEAN_SKIPPED_EPISODES_TO_THRESHOLD},
        description="pads the moving means with None for partial windows and tests 'if mean and mean >= threshold': a window whose mean is exactly 0.0 (Taxi's threshold) never counts",
        rule="threshold-reached-when-equal", kind="falsy-as-missing"),
)


# --- blind round 26: wrong answers written from the lesson text alone ----------------

INTERVAL_CONSTANT_BY_STD_TOLERANCE_CONFIDENCE_INTERVAL = '''\
#| export
import time

import numpy as np
from scipy import stats


def confidence_interval(values, confidence=0.95):
    """(mean, low, high): Student's t interval for the mean of ``values``."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        raise ValueError(f"a confidence interval needs at least two values, got {values.size}")
    mean = float(values.mean())
    s = float(values.std(ddof=1))
    if s < 1e-12:  # rounding leaves ~1e-17 for values that do not vary
        return mean, mean, mean
    half_width = s / np.sqrt(values.size) * float(stats.t.ppf((1 + confidence) / 2,
                                                              values.size - 1))
    return mean, float(mean - half_width), float(mean + half_width)
'''

BUGS = (*BUGS,
    # blind round 26
    Bug("interval_constant_by_std_tolerance", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_CONSTANT_BY_STD_TOLERANCE_CONFIDENCE_INTERVAL},
        description="calls the values constant when the computed s is below 1e-12: values that vary on a small scale (1e-13) get a zero-width interval, and equal values near 1e8 (s ~ 2e-8 from rounding) a nonzero one",
        rule="interval-no-width-when-constant", kind="boundary"),
)
