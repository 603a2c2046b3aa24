"""Buggy answers to lesson 06 (the capstone's analysis functions)."""

from . import Bug, edits_of

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
    window_means = np.convolve(returns, np.ones(window) / window, mode="valid")
    reached = np.flatnonzero(window_means >= threshold)
    return int(reached[0]) + window if reached.size else None""",
    """\
    sums = np.cumsum(returns)
    counts = np.minimum(np.arange(1, returns.size + 1), window)
    sums[window:] -= sums[:-window]
    reached = np.flatnonzero(sums / counts >= threshold)  # early windows are partial
    return int(reached[0]) + 1 if reached.size else None"""))

THRESHOLD_RETURNS_THE_START_INDEX = _edit("episodes_to_threshold", (
    "return int(reached[0]) + window if reached.size else None",
    "return int(reached[0]) if reached.size else None"))

AUTOCORRELATION_NOT_CENTRED = _edit("lag_one_autocorrelation", (
    "return float(np.corrcoef(before, after)[0, 1])",
    "return float(np.mean(before * after) / np.var(values))"))

AUTOCORRELATION_NAN_WHEN_CONSTANT = _edit("lag_one_autocorrelation", (
    """\
    if before.std() == 0 or after.std() == 0:
        return 0.0
""", ""))

BUGS = [
    Bug("interval_with_the_normal_quantile", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_WITH_THE_NORMAL_QUANTILE},
        description="z instead of t: too narrow for five seeds"),
    Bug("interval_with_population_std", LESSON, "test_confidence_interval",
        {"confidence_interval": INTERVAL_WITH_POPULATION_STD},
        description="the standard error from the population standard deviation (ddof=0)"),
    Bug("threshold_with_partial_windows", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_WITH_PARTIAL_WINDOWS},
        description="one lucky early episode counts as learned"),
    Bug("threshold_returns_the_start_index", LESSON, "test_episodes_to_threshold",
        {"episodes_to_threshold": THRESHOLD_RETURNS_THE_START_INDEX},
        description="returns where the first good window starts, not how many episodes it took"),
    Bug("autocorrelation_not_centred", LESSON, "test_lag_one_autocorrelation",
        {"lag_one_autocorrelation": AUTOCORRELATION_NOT_CENTRED},
        description="mean of products over the variance, without centring"),
    Bug("autocorrelation_nan_when_constant", LESSON, "test_lag_one_autocorrelation",
        {"lag_one_autocorrelation": AUTOCORRELATION_NAN_WHEN_CONSTANT},
        description="a constant sequence gives NaN"),
]
