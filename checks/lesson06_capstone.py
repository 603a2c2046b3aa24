"""Checks for lesson 06, the capstone: the analysis functions, on salted data.

Each function's result is compared with the grader's own computation (scipy's t
interval, a moving average over full windows, numpy's correlation at a lag), on data
drawn from the salt, edge cases included. None is statistical: a correct answer always
passes. The written conclusion is graded by a person.
"""

import math

import numpy as np

from checks.expected import expected as reference
from checks.framework import (Check, LessonChecks, call_student, failed, outcome_of, passed,
                              value_error_problem, wrong_amount)

LESSON = "06_capstone"


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _close(got, want, rel=1e-7):
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None or (isinstance(got, float) and math.isnan(got))
    return isinstance(got, float) and math.isclose(got, want, rel_tol=rel, abs_tol=1e-9)


# --- confidence intervals ----------------------------------------------------------------------

def _interval_inputs(rng):
    samples = [rng.normal(float(rng.uniform(-200, 200)), float(rng.uniform(0.5, 80)),
                          size=int(rng.integers(2, 30))).round(3).tolist() for _ in range(6)]
    samples.append([4.25] * int(rng.integers(2, 6)))  # every seed the same: no width
    levels = [0.95, 0.95, 0.9, 0.99, float(rng.choice([0.8, 0.9, 0.99])), 0.95, 0.95]
    return {"samples": samples, "levels": levels, "too_few": [float(rng.normal())]}


def _interval_probe(inputs, confidence_interval):
    results = []
    for values, level in zip(inputs["samples"], inputs["levels"]):
        got = call_student(f"confidence_interval(values, confidence={level})",
                           confidence_interval, np.array(values), confidence=level)
        try:
            results.append([_number(x) for x in got])
        except TypeError:
            results.append([repr(got)[:60]])
    # the signature's default level, 0.95 (the first sample is graded at 0.95 too)
    default = call_student("confidence_interval(values)", confidence_interval,
                           np.array(inputs["samples"][0]))
    try:
        default = [_number(x) for x in default]
    except TypeError:
        default = [repr(default)[:60]]
    return {"results": results, "default_level": default,
            "too_few": outcome_of(confidence_interval, np.array(inputs["too_few"]))}


def _interval_verdict(inputs, data):
    from scipy import stats  # here: scipy takes a second to import
    problem = wrong_amount("intervals", data["results"], len(inputs["samples"]))
    if problem:
        return problem
    wanted = reference(LESSON, "intervals", inputs["samples"], inputs["levels"])
    for values, level, got, want in zip(inputs["samples"], inputs["levels"], data["results"],
                                        wanted):
        where = f"for {len(values)} values with mean {want[0]:.4g}, confidence {level}"
        if len(got) != 3:
            return failed(f"{where}, confidence_interval returned {got}; return (mean, low, "
                          "high).")
        if all(_close(g, w) for g, w in zip(got, want)):
            continue
        message = (f"{where}, confidence_interval returned ({', '.join(f'{g}' for g in got)}); "
                   f"expected ({want[0]:.6g}, {want[1]:.6g}, {want[2]:.6g}).")
        spread = np.std(values, ddof=1) / math.sqrt(len(values))
        if spread > 0 and all(isinstance(g, float) for g in got):
            ratio = (got[2] - got[0]) / spread
            normal = stats.norm.ppf((1 + level) / 2)
            if math.isclose(ratio, normal, rel_tol=1e-3):
                message += (" That is the normal quantile: with a handful of seeds use "
                            "Student's t with n - 1 degrees of freedom.")
            elif math.isclose(got[2] - got[0], (want[2] - want[0]) * math.sqrt(
                    (len(values) - 1) / len(values)), rel_tol=1e-6):
                message += (" The standard error uses the sample standard deviation "
                            "(ddof=1).")
        return failed(message)
    if not (len(data["default_level"]) == 3
            and all(_close(g, w) for g, w in zip(data["default_level"], wanted[0]))):
        return failed(f"confidence_interval(values) without a confidence level returned "
                      f"{data['default_level']}; expected the 95% interval "
                      f"({', '.join(f'{w:.6g}' for w in wanted[0])}): keep the default "
                      "confidence=0.95.")
    problem = value_error_problem("confidence_interval of a single value", data["too_few"],
                                  ": one seed says nothing about the spread")
    if problem:
        return problem
    return passed("t intervals match scipy's for 2 to 30 seeds and several levels; a single "
                  "value is refused.")


# --- episodes to a threshold ----------------------------------------------------------------------

def _threshold_inputs(rng):
    cases = []
    for _ in range(8):
        length, window = int(rng.integers(20, 120)), int(rng.integers(1, 15))
        returns = np.cumsum(rng.normal(1.0, 6.0, size=length)).round(2)
        # returns have 2 decimals, so window means (window <= 14) lie on a grid of
        # 0.01 / window; 0.0003 off that grid, no mean ties with the threshold, and
        # averaging in another (correct) order cannot change the answer
        quantile = float(np.quantile(returns, min(1.0, rng.uniform(0.3, 1.2))))
        threshold = round(quantile + (10.0 if rng.random() < 0.15 else 0.0), 2) + 0.0003
        cases.append({"returns": returns.tolist(), "threshold": threshold, "window": window})
    # a spike inside a partial first window must not count; a window longer than the run
    cases.append({"returns": [100.0, 0.0, 0.0, 0.0, 50.0, 50.0], "threshold": 30.0,
                  "window": 3})
    cases.append({"returns": [10.0, 10.0], "threshold": 3.0, "window": 5})
    # ties: a window mean exactly at the threshold reaches it (these means are exact in
    # floating point however they are computed); a run exactly one window long
    cases.append({"returns": [0.0, 0.0, 2.0, 4.0, 6.0, 8.0, 1.0], "threshold": 5.0,
                  "window": 4})
    cases.append({"returns": [2.0, 4.0, 6.0, 8.0], "threshold": 5.0, "window": 4})
    return {"cases": cases}


def _threshold_probe(inputs, episodes_to_threshold):
    found = []
    for case in inputs["cases"]:
        got = call_student("episodes_to_threshold(returns, threshold, window)",
                           episodes_to_threshold, np.array(case["returns"]), case["threshold"],
                           case["window"])
        found.append(None if got is None else _number(got))
    return {"found": found}


def _threshold_verdict(inputs, data):
    problem = wrong_amount("answers", data["found"], len(inputs["cases"]))
    if problem:
        return problem
    wanted = reference(LESSON, "episodes_to_threshold", inputs["cases"])
    for case, got, want in zip(inputs["cases"], data["found"], wanted):
        if got == want or (want is not None and got is not None and math.isclose(got, want)):
            continue
        shown = ", ".join(f"{r:g}" for r in case["returns"][:8])
        more = ", ..." if len(case["returns"]) > 8 else ""
        hint = ""
        if want is None:
            hint = (" No full window of that many episodes reaches the threshold: return None."
                    if len(case["returns"]) >= case["window"] else
                    " The run is shorter than one window: return None.")
        elif got is not None and got == want - case["window"] + 1:
            hint = " Count episodes, not the index of the window's first episode."
        elif got is not None and got == want - 1:
            hint = " The answer is a number of episodes: the window ending at index i covers i + 1."
        elif got is not None and got < want:
            hint = " Only full windows count: a mean over fewer episodes is not a moving average of the window."
        return failed(f"episodes_to_threshold([{shown}{more}] ({len(case['returns'])} "
                      f"episodes), threshold={case['threshold']:g}, window={case['window']}) "
                      f"returned {got}; expected {want}.{hint}")
    return passed("the first full window whose mean reaches the threshold is found, and None "
                  "when there is none.")


# --- autocorrelation at a lag ------------------------------------------------------------------

def _ar_series(rng, length, phi):
    values = [0.0]
    for _ in range(length - 1):
        values.append(phi * values[-1] + float(rng.normal()))
    return np.round(values, 4).tolist()


def _autocorrelation_inputs(rng):
    cases = []
    for _ in range(5):  # AR(1) series, correlated (or anti-correlated) at every lag
        length = int(rng.integers(12, 200))
        cases.append({"values": _ar_series(rng, length, float(rng.uniform(-0.9, 0.95))),
                      "lag": int(rng.integers(1, 9))})
    # a replay loop's stream: every 4th value (the online update) follows a slow walk, the
    # three between are drawn independently; correlated at lag 4, barely at lag 1
    steps = int(rng.integers(15, 50))
    walk = np.cumsum(rng.normal(size=steps))
    stream = np.column_stack([walk, rng.normal(size=(steps, 3))]).ravel().round(4).tolist()
    cases += [{"values": stream, "lag": 4}, {"values": stream, "lag": 1}]
    # a state feature: small integers
    cases.append({"values": rng.integers(0, 5, size=int(rng.integers(10, 60))).astype(float)
                  .tolist(), "lag": int(rng.integers(1, 4))})
    # one slice constant and the other not, then a constant sequence: nothing to correlate
    lag = int(rng.integers(1, 4))
    cases.append({"values": [3.0] * int(rng.integers(lag + 2, 10)) + [7.0] * lag, "lag": lag})
    cases.append({"values": [7.0] * lag + [3.0] * int(rng.integers(lag + 2, 10)), "lag": lag})
    # the fewest values that still make two pairs
    few_lag = int(rng.integers(1, 4))
    cases.append({"values": rng.normal(size=few_lag + 2).round(3).tolist(), "lag": few_lag})
    cases.append({"values": [2.5] * int(rng.integers(4, 10)), "lag": 1})
    short_lag = int(rng.integers(1, 6))
    return {"cases": cases,
            "too_short": {"values": rng.normal(size=short_lag + 1).round(3).tolist(),
                          "lag": short_lag},
            "bad_lags": [0, -int(rng.integers(1, 4))],
            "some_values": rng.normal(size=10).round(3).tolist()}


def _autocorrelation_probe(inputs, autocorrelation):
    found = [_number(call_student(f"autocorrelation(values, lag={case['lag']})",
                                  autocorrelation, np.array(case["values"]), case["lag"]))
             for case in inputs["cases"]]
    return {"found": found,
            "too_short": outcome_of(autocorrelation, np.array(inputs["too_short"]["values"]),
                                    inputs["too_short"]["lag"]),
            "bad_lags": [outcome_of(autocorrelation, np.array(inputs["some_values"]), lag)
                         for lag in inputs["bad_lags"]],
            # numpy itself refuses to correlate values[:-0] (empty) with a varying series,
            # but a constant one must be refused too, before any shortcut returns 0
            "lag_zero_constant": outcome_of(autocorrelation, np.full(6, 2.5), 0)}


def _pearson(before, after):
    if len(before) < 2 or np.std(before) == 0 or np.std(after) == 0:
        return None
    return float(np.corrcoef(before, after)[0, 1])


def _autocorrelation_hint(values, lag, got):
    """What a wrong answer is likely to have computed instead, as advice."""
    values = np.asarray(values, dtype=np.float64)
    before, after = values[:-lag], values[lag:]
    if np.std(before) == 0 or np.std(after) == 0:
        which = "values[:-lag]" if np.std(before) == 0 else "values[lag:]"
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


def _autocorrelation_verdict(inputs, data):
    problem = wrong_amount("answers", data["found"], len(inputs["cases"]))
    if problem:
        return problem
    wanted = reference(LESSON, "autocorrelations", inputs["cases"])
    for case, got, want in zip(inputs["cases"], data["found"], wanted):
        if _close(got, want, rel=1e-6):
            continue
        values, lag = case["values"], case["lag"]
        return failed(f"autocorrelation of {len(values)} values starting {values[:4]} at lag "
                      f"{lag} returned {got}; expected {want:.6g}."
                      f"{_autocorrelation_hint(values, lag, got)}")
    short = inputs["too_short"]
    problem = value_error_problem(
        f"autocorrelation of {len(short['values'])} values at lag {short['lag']}",
        data["too_short"], ": that leaves a single pair, and one pair makes no correlation")
    if problem:
        return problem
    problem = wrong_amount("outcomes for lags below 1", data["bad_lags"],
                           len(inputs["bad_lags"]))
    if problem:
        return problem
    for lag, outcome in zip(inputs["bad_lags"], data["bad_lags"]):
        problem = value_error_problem(
            f"autocorrelation(values, lag={lag})", outcome,
            ": the lag must be at least 1 (values[:-0] is empty, and a negative lag slices "
            "the wrong ends); check it before slicing")
        if problem:
            return problem
    problem = value_error_problem(
        "autocorrelation(six values all 2.5, lag=0)", data["lag_zero_constant"],
        ": a lag of 0 is refused whatever the values, constant ones included; check the lag "
        "before anything else")
    if problem:
        return problem
    return passed("Pearson's r between values[:-lag] and values[lag:] matches numpy's at lags "
                  "1 to 8, a constant slice gives 0, and lags below 1 or a single pair are "
                  "refused.")


CHECKS = LessonChecks(LESSON, [
    Check("test_confidence_interval", "confidence intervals", ("confidence_interval",),
          _interval_inputs, _interval_probe, _interval_verdict,
          asks="T intervals against scipy's, on salted samples; ValueError for one value."),
    Check("test_episodes_to_threshold", "episodes to a threshold", ("episodes_to_threshold",),
          _threshold_inputs, _threshold_probe, _threshold_verdict,
          asks="Against a moving average over full windows, on salted runs and edge cases."),
    Check("test_autocorrelation", "autocorrelation at a lag", ("autocorrelation",),
          _autocorrelation_inputs, _autocorrelation_probe, _autocorrelation_verdict,
          asks="Against numpy's correlation at several lags; 0 when a slice is constant; bad lags refused."),
])
