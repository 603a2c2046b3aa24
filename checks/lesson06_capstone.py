"""Checks for lesson 06, the capstone: the analysis functions, on salted data.

Each function's result is compared with the grader's own computation (scipy's t
interval, a moving average over full windows, numpy's correlation at a lag), on data
drawn from the salt, edge cases included. None is statistical: a correct answer always
passes. The written conclusion is graded by a person.
"""

import math

import numpy as np

from checks.contracts import RESULT_TYPES, INPUTS_UNTOUCHED, Contract, FLOAT, INT, optional, tuple_of
from checks.expected import expected as reference
from checks.expected import reference_code
from checks.framework import (Check, LessonChecks, NotWrittenYet, ProbeError, attempted,
                              call_student, failed, kept_with, outcome_of, passed,
                              value_error_problem, wrong_amount)
from checks.requirements import Rule

LESSON = "06_capstone"

# --- the rules: what the lesson tells a student, each tested by the checks below ---------

# shared by the three checks
TAKES_LISTS = Rule("takes-lists", "Each function takes a plain list of numbers as well as a "
                   "numpy array.")
INPUT_UNCHANGED = INPUTS_UNTOUCHED  # held on every call by the framework (checks.contracts)
# test_confidence_interval
# a result type the lesson states: held on every call (checks.contracts)
INTERVAL_TRIPLE = RESULT_TYPES
INTERVAL_USES_T = Rule("interval-uses-t", "The interval is mean ± t · s/√n, with Student's t "
                       "at n − 1 degrees of freedom for the confidence level given.")
INTERVAL_DDOF = Rule("interval-sample-std", "s is the sample standard deviation (ddof = 1).")
INTERVAL_DEFAULT = Rule("interval-default-95", "Without a confidence level the interval is "
                        "the 95% one.")
INTERVAL_NO_WIDTH = Rule("interval-no-width-when-constant", "Values that do not vary give s = "
                         "0: low == mean == high, exactly.")
INTERVAL_TWO_VALUES = Rule("interval-needs-two-values", "Fewer than two values (one, or none "
                           "at all) raise ValueError.")
# test_episodes_to_threshold
THRESHOLD_FULL_WINDOWS = Rule("threshold-full-windows", "The mean is over the last `window` "
                              "episodes, full windows only; a run exactly one window long "
                              "has one.")
THRESHOLD_COUNTS_EPISODES = Rule("threshold-counts-episodes", "The answer is the number of "
                                 "episodes played when a window's mean first reaches the "
                                 "threshold, counted from 1.")
THRESHOLD_AT_EQUAL = Rule("threshold-reached-when-equal", "A window mean equal to the "
                          "threshold reaches it.")
THRESHOLD_NONE = Rule("threshold-none-if-never", "The answer is None when no full window "
                      "reaches the threshold, including when the run is shorter than one "
                      "window.")
# test_autocorrelation
AUTOCORRELATION_PEARSON = Rule("autocorrelation-pearson", "autocorrelation is Pearson's r "
                               "between values[:-lag] and values[lag:], each slice centred "
                               "on its own mean.")
AUTOCORRELATION_CONSTANT = Rule("autocorrelation-constant-is-zero", "autocorrelation is 0.0 "
                                "when either slice does not vary.")
AUTOCORRELATION_LAG = Rule("autocorrelation-lag-at-least-1", "A lag below 1 raises "
                           "ValueError, whatever the values.")
AUTOCORRELATION_PAIRS = Rule("autocorrelation-needs-two-pairs", "Fewer than two pairs "
                             "(len(values) - lag < 2, a lag as long as the sequence or longer "
                             "included) raise ValueError; two pairs are enough.")


def _result_or_error(description, function, *args):
    """``{"result": ...}`` of the student's call, or ``{"error": ...}`` with what it raised:
    for calls whose failure is a rule broken (a list refused, two pairs refused), which the
    verdict names. Unwritten code is still reported as not written."""
    try:
        return {"result": call_student(description, function, *args)}
    except NotWrittenYet:
        raise
    except ProbeError as error:
        return {"error": str(error)[:300]}


def _after_the_call(description, function, values, *args):
    """The array the student's ``function`` was given (``values``), read back after the
    call: kept where their code runs, so a change made in place is seen."""
    kept = kept_with(np.array(values, dtype=np.float64), near=function)
    call_student(description, function, kept, *args)
    return [float(value) for value in kept]


def _input_problem(function_name, as_list, after, original, want, close):
    """What went wrong with a list argument or with the array given, or None."""
    if "error" in as_list:
        return failed(f"{function_name} given a plain list of numbers (not a numpy array) "
                      f"failed: {as_list['error']}. Convert the input first "
                      "(np.asarray(values, dtype=float)).", rule=TAKES_LISTS)
    if not close(as_list["result"], want):
        return failed(f"{function_name} given a plain list returned {as_list['result']}; "
                      f"given the same numbers as an array, {want}. Convert the input "
                      "first (np.asarray(values, dtype=float)).", rule=TAKES_LISTS)
    if after != original:
        changed = next(index for index, (a, b) in enumerate(zip(after, original)) if a != b)
        return failed(f"{function_name} changed the array it was given: element {changed} "
                      f"was {original[changed]} before the call and {after[changed]} after. "
                      "Work on a copy (values - values.mean(), not values -= ...), never on "
                      "the caller's array.", rule=INPUT_UNCHANGED)
    return None


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

_CONSTANT_WITH_ROUNDING = (0.1, 0.2, 0.7, -0.1, 12.3)  # np.std([v] * 3, ddof=1) > 0


def _interval_inputs(rng):
    samples = [rng.normal(float(rng.uniform(-200, 200)), float(rng.uniform(0.5, 80)),
                          size=int(rng.integers(2, 30))).round(3).tolist() for _ in range(6)]
    # every seed the same: no width, exactly, though the sample standard deviation of
    # these values computes to ~1e-17 rather than 0 (a test of s against 0 is not enough)
    samples.append([float(rng.choice(_CONSTANT_WITH_ROUNDING))] * 3)
    # a large sample: Student's t all the same (not a normal quantile past some size)
    samples.append(rng.normal(float(rng.uniform(-50, 50)), float(rng.uniform(1, 20)),
                              size=int(rng.integers(40, 90))).round(3).tolist())
    # values far from 0 that vary little (returns near 1e8): s from sums of squares loses
    # every digit there; centred on the mean first, it does not
    samples.append((1e8 + rng.normal(0.0, float(rng.uniform(0.5, 3)),
                                     size=int(rng.integers(5, 20)))).round(3).tolist())
    # capped returns, many seeds alike, the first equal to the last: n counts every seed,
    # and a sample varies when any two values differ (not when the first and last do)
    repeated = [float(v) for v in rng.choice([500.0, 500.0, 500.0, 312.0, 87.0],
                                               size=int(rng.integers(6, 14)))]
    repeated[0] = repeated[-1] = 500.0
    repeated[1] = 87.0
    samples.append(repeated)
    # levels beyond the usual three too: 1 - 0.975 and 1 - 0.995 do not round to a cent
    levels = [0.95, 0.95, 0.9, 0.99, float(rng.choice([0.975, 0.995, 0.999])), 0.95, 0.95,
              float(rng.choice([0.9, 0.95, 0.99])), 0.95, 0.95]
    return {"samples": samples, "levels": levels, "too_few": [float(rng.normal())],
            "scales": _scale_samples(rng)}


# equal values whose numpy spread is not 0 (the mean of n copies rounds away from the
# value, or n copies overflow a sum of squares): np.std(..., ddof=1) is 1e-17 to inf
_EQUAL_WITH_ROUNDING = ((0.1, 3), (0.7, 7), (12.3, 3), (123456789.123, 3),
                        (98765432.1, 7), (100000000.3, 7), (1e300, 7), (7.7e299, 11))


def _scale_samples(rng):
    """Values that vary only on a tiny scale, which have a width all the same, and equal
    values of every magnitude, which have none: "constant" is read off the values, never
    off the computed s against a tolerance. Each scale keeps the reference's own arithmetic
    exact enough to judge by (no square of a deviation underflows, no sum overflows)."""
    def varying(scale, low, high):
        while True:
            numbers = rng.integers(low, high, size=int(rng.integers(2, 6)))
            if numbers.min() != numbers.max():
                return [float(scale * number) for number in numbers]

    def one_ulp(around):  # the value and the next float up, a few of each (both present)
        size = int(rng.integers(2, 4))
        picks = [0, 1] + [int(rng.integers(0, 2)) for _ in range(size - 2)]
        return [float(np.nextafter(around, np.inf)) if pick else float(around)
                for pick in rng.permutation(picks)]

    varied = [varying(1e-13, 1, 10), varying(float(rng.choice([1e-150, 3e-152, 1e-145])), 1, 10),
              varying(1e-9, 1_000_000, 1_000_010), one_ulp(1.0), one_ulp(1e8)]
    equal = [[float(1e-300 * rng.integers(1, 10))] * int(rng.integers(2, 8))]
    for at in rng.choice(len(_EQUAL_WITH_ROUNDING), size=3, replace=False):
        value, count = _EQUAL_WITH_ROUNDING[int(at)]
        equal.append([value] * count)
    return {"samples": varied + equal,
            "levels": [float(rng.choice([0.95, 0.99])) for _ in varied] + [0.95] * len(equal)}


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
    # the second sample again as a list, the third in an array read back after the call
    as_list = _result_or_error("confidence_interval(a list of values, confidence=0.95)",
                               confidence_interval, list(inputs["samples"][1]), 0.95)
    if "result" in as_list:
        try:
            as_list["result"] = [_number(x) for x in as_list["result"]]
        except TypeError:
            as_list["result"] = [repr(as_list["result"])[:60]]
    return {"results": results, "default_level": default, "as_list": as_list,
            "after": _after_the_call("confidence_interval(values, confidence=0.9)",
                                     confidence_interval, inputs["samples"][2], 0.9),
            "scales": [_result_or_error(f"confidence_interval(values, confidence={level})",
                                        confidence_interval, np.array(values), level)
                       for values, level in zip(inputs["scales"]["samples"],
                                                inputs["scales"]["levels"])],
            "too_few": outcome_of(confidence_interval, np.array(inputs["too_few"])),
            "none": outcome_of(confidence_interval, np.array([], dtype=np.float64))}


def _interval_verdict(inputs, data):
    from scipy import stats  # here: scipy takes a second to import
    problem = wrong_amount("intervals", data["results"], len(inputs["samples"]),
                           rule=INTERVAL_TRIPLE)
    if problem:
        return problem
    wanted = reference(LESSON, "intervals", inputs["samples"], inputs["levels"])
    width = None  # a width where values do not vary: judged after every other interval
    for values, level, got, want in zip(inputs["samples"], inputs["levels"], data["results"],
                                        wanted):
        where = f"for {len(values)} values with mean {want[0]:.4g}, confidence {level}"
        if len(got) != 3:
            return failed(f"{where}, confidence_interval returned {got}; return (mean, low, "
                          "high).", rule=INTERVAL_TRIPLE)
        if all(_close(g, w) for g, w in zip(got, want)) and (
                len(set(values)) == 1 or _close(got[2] - got[1], want[2] - want[1], rel=1e-6)):
            if len(set(values)) == 1 and not got[0] == got[1] == got[2] and width is None:
                width = failed(f"{where}, all equal, confidence_interval returned "
                               f"({', '.join(f'{g!r}' for g in got)}): values that do not "
                               "vary have no spread, so low == mean == high exactly (the "
                               "computed standard deviation can be a rounding error such as "
                               "1e-17, not 0: test the values themselves).",
                               rule=INTERVAL_NO_WIDTH)
            continue
        message = (f"{where}, confidence_interval returned ({', '.join(f'{g}' for g in got)}); "
                   f"expected ({want[0]:.6g}, {want[1]:.6g}, {want[2]:.6g}).")
        rule = INTERVAL_USES_T
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
                rule = INTERVAL_DDOF
        return failed(message, rule=rule)
    if width is not None:
        return width
    problem = _scale_problem(inputs["scales"], data.get("scales"))
    if problem:
        return problem
    if not (len(data["default_level"]) == 3
            and all(_close(g, w) for g, w in zip(data["default_level"], wanted[0]))):
        return failed(f"confidence_interval(values) without a confidence level returned "
                      f"{data['default_level']}; expected the 95% interval "
                      f"({', '.join(f'{w:.6g}' for w in wanted[0])}): keep the default "
                      "confidence=0.95.", rule=INTERVAL_DEFAULT)
    problem = _input_problem(
        "confidence_interval", data["as_list"], data["after"], inputs["samples"][2],
        wanted[1], lambda got, want: len(got) == 3 and all(map(_close, got, want)))
    if problem:
        return problem
    problem = (value_error_problem("confidence_interval of a single value", data["too_few"],
                                   ": one seed says nothing about the spread",
                                   rule=INTERVAL_TWO_VALUES)
               or value_error_problem("confidence_interval of an empty array", data["none"],
                                      ": no seeds, no mean and no spread",
                                      rule=INTERVAL_TWO_VALUES))
    if problem:
        return problem
    return passed("t intervals match scipy's for 2 to 90 seeds and several levels, from a list "
                  "too, leaving the array given as it was; one value or none is refused.")


def _scale_problem(scales, outcomes):
    """Values that vary on a tiny scale must get the reference's nonzero width, equal values
    of any magnitude none at all; None when every one does."""
    samples, levels = scales["samples"], scales["levels"]
    if not isinstance(outcomes, list) or len(outcomes) != len(samples):
        return failed("confidence_interval was not called on every sample the check gave it.",
                      rule=INTERVAL_NO_WIDTH)
    wanted = reference(LESSON, "intervals", samples, levels)
    for values, level, outcome, want in zip(samples, levels, outcomes, wanted):
        equal = len(set(values)) == 1
        shown = (f"[{', '.join(repr(v) for v in values[:6])}{', ...' if len(values) > 6 else ''}]")
        call = f"confidence_interval({shown}, confidence={level})"
        if not isinstance(outcome, dict) or "error" in outcome:
            error = outcome.get("error") if isinstance(outcome, dict) else outcome
            how = "do not vary" if equal else "vary, however little,"
            return failed(f"{call} raised: {error}. Values that {how} still have an "
                          "interval: (mean, low, high).", rule=INTERVAL_NO_WIDTH)
        try:
            got = [_number(x) for x in outcome["result"]]
        except TypeError:
            got = [repr(outcome["result"])[:60]]
        if len(got) != 3 or not all(isinstance(g, float) for g in got):
            return failed(f"{call} returned {outcome['result']!r:.80}; return (mean, low, high), "
                          "three floats.", rule=INTERVAL_TRIPLE)
        mean, low, high = got
        returned = f"returned ({mean!r}, {low!r}, {high!r})"
        if equal:
            if not (mean == low == high and math.isclose(mean, want[0], rel_tol=1e-9)):
                return failed(f"{call}, {len(values)} equal values, {returned}: values that do "
                              f"not vary have s = 0, so low == mean == high == {want[0]!r} "
                              "exactly, at any magnitude. The computed standard deviation of "
                              "equal values is a rounding error (1e-17 for 0.1s, 2e-8 near 1e8, "
                              "inf for 1e300s), so test the values themselves (are they all "
                              "equal?), not s.", rule=INTERVAL_NO_WIDTH)
            continue
        if want[2] <= want[1]:  # the reference's own arithmetic has no width here: no verdict
            continue
        # the reference's mean is rounded (by up to half an ulp), which moves its s by up
        # to that much: an exact computation may differ from it by t / sqrt(n - 1) ulps
        from scipy import stats
        t = float(stats.t.ppf((1 + level) / 2, len(values) - 1))
        ulps = 4 + t / math.sqrt(len(values) - 1)
        slack = 1e-6 * (want[2] - want[1]) / 2 + ulps * float(np.spacing(abs(want[0])))
        if (math.isclose(mean, want[0], rel_tol=1e-9)
                and abs(low - want[1]) <= slack and abs(high - want[2]) <= slack and low < high):
            continue
        return failed(f"{call} {returned}; expected ({want[0]!r}, {want[1]!r}, {want[2]!r}). "
                      + ("These values differ (on a tiny scale, but they do), so s > 0 and the "
                         "interval has a width: only values that do not vary give low == mean "
                         "== high. Test the values themselves for equality, not the computed s "
                         "against a tolerance." if low == high else
                         "Values that vary on a tiny scale get the t interval like any others: "
                         "compute s from the deviations from the mean, not through a "
                         "tolerance or a shortcut."), rule=INTERVAL_NO_WIDTH)
    return None


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
    # whole-number returns (Taxi's, CartPole's) whose window of 3, 5, 6 or 7 averages the
    # threshold exactly: a sum divided by the window is exact there, a mean made with
    # weights 1/window is not (three 7s average 6.999...)
    for window in (3, 5, 6, 7):
        # a level whose mean by weights 1/window rounds below it (most do, not all)
        candidates = rng.integers(-20, 200, size=50)
        level = next((int(c) for c in candidates
                      if float(np.convolve([float(c)] * window, np.ones(window) / window,
                                           mode="valid")[0]) < c), int(candidates[0]))
        run = rng.integers(level - 40, level - 5, size=int(rng.integers(2, 6))).tolist()
        cases.append({"returns": [float(r) for r in run + [level] * window + [level - 50]],
                      "threshold": float(level), "window": window})
    # a window of one episode, and a first full window that already reaches the threshold
    cases.append({"returns": [-3.0, 1.0, 4.0, -2.0, 6.0], "threshold": 3.5, "window": 1})
    cases.append({"returns": [6.0, 5.0, 0.0, 0.0, 9.0], "threshold": 5.0, "window": 2})
    # near misses: a window mean of 194.998... (whole-number returns, window 600) and of
    # -1e-9 are below 195 and 0, though within np.isclose's default tolerances of them
    cases.append({"returns": [195.0] * 599 + [194.0, 150.0], "threshold": 195.0,
                  "window": 600})
    cases.append({"returns": [-1e-9] * 4, "threshold": 0.0, "window": 2})
    cases.append(_tie_after_fractions(rng))
    # a run of no episode at all: shorter than one window, so None (not an error)
    cases.append({"returns": [], "threshold": float(rng.integers(1, 200)),
                  "window": int(rng.integers(1, 6))})
    cases += _zero_and_negative_ties(rng)
    return {"cases": cases}


def _tie_after_fractions(rng):
    """A run of negative returns with one decimal, then two equal to the threshold: the
    last window's mean is the threshold exactly (v + v is exact), but window sums taken as
    differences of one running total carry the earlier returns' rounding, and fall short.
    The first prefix (of a few tried) whose running total does that."""
    level = float(rng.choice([0.8, 0.3, 0.7, 1.1, 0.6]))
    for _ in range(200):
        prefix = (-rng.integers(1, 60, size=int(rng.integers(3, 8))) / 10).tolist()
        totals = np.cumsum(prefix + [level, level])
        if totals[-1] - totals[-3] < 2 * level:
            break
    return {"returns": prefix + [level, level], "threshold": level, "window": 2}


def _window_with_sum(rng, window, total):
    """``window`` returns, halves in [-5, 5] but the last, that add up to ``total`` exactly
    (in floating point too, in any order), smallest first: every run of the first k of them
    averages at most total / window, so a window that ends inside them stays below it."""
    values = (rng.integers(-10, 11, size=window - 1) / 2).tolist()
    return sorted(values + [total - sum(values)])


def _zero_and_negative_ties(rng):
    """Runs whose first full window to reach the threshold has a mean of exactly 0.0 or
    exactly a negative threshold, every earlier window lying below it. Taxi's threshold is
    0: a mean of 0 (or a return of 0 in a window of one, or a first window of index 0) is a
    value to compare like any other, not a missing one. The threshold comes as an int, a
    float and -0.0, and negative, tied or below the 0.0 mean. Returns are integers and
    halves, so every window sum is exact in floating point however it is added up; the
    returns before the window are -20 or lower, so every earlier window (sorted, see
    ``_window_with_sum``) averages below the threshold (> -4 for a window of at most 5)."""
    def prefix():
        return (rng.integers(-80, -39, size=int(rng.integers(1, 5))) / 2).tolist()

    def window():
        return int(rng.integers(2, 6))

    def after():  # a later window that reaches the threshold too, or none
        return [float(rng.choice([rng.integers(-40, -20), rng.integers(5, 30)]))]

    cases = []
    # a threshold of 0.0 (Taxi's), 0 and -0.0 reached by a window whose mean is exactly 0.0
    size = window()
    cases.append({"returns": prefix() + _window_with_sum(rng, size, 0.0) + after(),
                  "threshold": 0.0, "window": size})
    size = window()
    cases.append({"returns": prefix() + [0.0] * size + after(), "threshold": 0,
                  "window": size})
    cases.append({"returns": prefix() + [0.0] + after(), "threshold": -0.0, "window": 1})
    # a first full window (index 0), as long as the run, whose mean is 0.0
    size = window()
    cases.append({"returns": _window_with_sum(rng, size, 0.0), "threshold": 0.0,
                  "window": size})
    # a negative threshold, below a window mean of exactly 0.0 (then one that is above it),
    # and one of a single episode whose return is 0
    size = window()
    threshold = float(rng.integers(-7, 0)) / 2
    cases.append({"returns": prefix() + _window_with_sum(rng, size, 0.0)
                  + [float(rng.integers(5, 30))] * size, "threshold": threshold,
                  "window": size})
    cases.append({"returns": prefix() + [0.0, float(rng.integers(-3, 0))] + after(),
                  "threshold": int(rng.integers(-3, 0)), "window": 1})
    # a window mean exactly at a negative threshold
    size = window()
    threshold = float(rng.integers(-15, 0)) / 2
    cases.append({"returns": prefix() + _window_with_sum(rng, size, threshold * size) + after(),
                  "threshold": threshold, "window": size})
    return cases


def _threshold_probe(inputs, episodes_to_threshold):
    found = []
    for case in inputs["cases"]:
        call = ("episodes_to_threshold(returns, threshold, window)", episodes_to_threshold,
                np.array(case["returns"]), case["threshold"], case["window"])
        if not case["returns"]:  # a run of no episode: what refusing it raised is data
            made = attempted(call_student, *call)
            if "raised" in made:
                found.append({"raised": str(made["raised"])[:160]})
                continue
            got = made["value"]
        else:
            got = call_student(*call)
        found.append(None if got is None else _number(got))
    # the first run again as a list, the second in an array read back after the call
    first, second = inputs["cases"][:2]
    as_list = _result_or_error("episodes_to_threshold(a list of returns, threshold, window)",
                               episodes_to_threshold, list(first["returns"]),
                               first["threshold"], first["window"])
    if as_list.get("result") is not None:
        as_list["result"] = _number(as_list["result"])
    # two runs of a new length in a row (a study's runs all have one length): the first
    # run's array stays the caller's through the second call (the contract holds it)
    length = 1 + max(len(case["returns"]) for case in inputs["cases"])
    run = np.linspace(0.0, 2.0 * first["threshold"], length)
    for returns in (run, run[::-1]):
        call_student("episodes_to_threshold(returns, threshold, window)", episodes_to_threshold,
                     np.array(returns), first["threshold"], first["window"])
    return {"found": found, "as_list": as_list,
            "after": _after_the_call("episodes_to_threshold(returns, threshold, window)",
                                     episodes_to_threshold, second["returns"],
                                     second["threshold"], second["window"])}


def _threshold_verdict(inputs, data):
    problem = wrong_amount("answers", data["found"], len(inputs["cases"]),
                           rule=THRESHOLD_FULL_WINDOWS)
    if problem:
        return problem
    wanted = reference(LESSON, "episodes_to_threshold", inputs["cases"])
    for case, got, want in zip(inputs["cases"], data["found"], wanted):
        if isinstance(got, dict):
            return failed(f"episodes_to_threshold of a run of no episode (threshold="
                          f"{case['threshold']:g}, window={case['window']}): {got.get('raised')}"
                          ". A run shorter than one window, an empty one too, gives None.",
                          rule=THRESHOLD_NONE)
        if got == want or (want is not None and got is not None and math.isclose(got, want)):
            continue
        shown = ", ".join(f"{r:g}" for r in case["returns"][:8])
        more = ", ..." if len(case["returns"]) > 8 else ""
        hint, rule = "", THRESHOLD_FULL_WINDOWS
        reaching = case["returns"][want - case["window"]:want] if want is not None else []
        if (want is not None and (got is None or got > want)
                and math.fsum(reaching) == 0.0):
            # the first window to reach it averages exactly 0: skipped as if missing
            episodes = (f"episode {want}" if case["window"] == 1 else
                        f"episodes {want - case['window'] + 1} to {want}")
            values = ", ".join(f"{r:g}" for r in reaching[:8])
            equal = case["threshold"] == 0
            hint = (f" The mean of {episodes} ({values}) is exactly 0.0, "
                    + ("which equals the threshold, and a mean equal to the threshold "
                       "reaches it" if equal else
                       f"above the threshold {case['threshold']:g}, and it is the first "
                       "full window to reach it")
                    + ". A mean, a return or a threshold of 0 is a number like any other: "
                    "never test one for truth (`if mean and ...`, `if not total`, `mean or "
                    "None`); mark a window that is not full yet with None and test `is None`, "
                    "or start the scan at the first full window.")
            rule = THRESHOLD_AT_EQUAL if equal else THRESHOLD_COUNTS_EPISODES
        elif want is None:
            hint = (" No full window of that many episodes reaches the threshold, however "
                    "close its mean comes (compare exactly, with no tolerance): return None."
                    if len(case["returns"]) >= case["window"] else
                    " The run is shorter than one window: return None.")
            rule = THRESHOLD_NONE
        elif got is not None and 1 <= got < case["window"] and float(np.mean(
                case["returns"][:int(got)])) >= case["threshold"]:
            hint = (f" The mean of the first {got:g} episodes reaches the threshold, but that "
                    f"is not a full window of {case['window']}.")
        elif got is not None and got in (want - case["window"], want - case["window"] + 1):
            hint = " Count episodes, not the index of the window's first episode."
            rule = THRESHOLD_COUNTS_EPISODES
        elif got is not None and got == want - 1:
            hint = " The answer is a number of episodes: the window ending at index i covers i + 1."
            rule = THRESHOLD_COUNTS_EPISODES
        elif got is not None and got < want:
            hint = " Only full windows count: a mean over fewer episodes is not a moving average of the window."
        elif got is None and len(case["returns"]) == case["window"]:
            hint = " The run is exactly one window long: that window counts."
        elif math.isclose(float(np.mean(case["returns"][want - case["window"]:want])),
                          case["threshold"], rel_tol=1e-12, abs_tol=1e-12):
            hint = (f" The mean of episodes {want - case['window'] + 1} to {want} equals the "
                    "threshold, and reaching it counts (>=).")
            rule = THRESHOLD_AT_EQUAL
        elif got is None and want == case["window"]:
            hint = (f" The first full window (episodes 1 to {want}) already reaches the "
                    f"threshold, so the answer is {want}. Its index among the windows is 0, "
                    "a window like any other: test a found index with `is None`, never for "
                    "truth (`if first:`).")
            rule = THRESHOLD_COUNTS_EPISODES
        return failed(f"episodes_to_threshold([{shown}{more}] ({len(case['returns'])} "
                      f"episodes), threshold={case['threshold']:g}, window={case['window']}) "
                      f"returned {got}; expected {want}.{hint}", rule=rule)
    problem = _input_problem(
        "episodes_to_threshold", data["as_list"], data["after"],
        inputs["cases"][1]["returns"], wanted[0],
        lambda got, want: got == want or (None not in (got, want) and math.isclose(got, want)))
    if problem:
        return problem
    return passed("the first full window whose mean reaches the threshold is found, and None "
                  "when there is none, from a list too, leaving the array given as it was.")


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
    # a series that varies on a tiny scale: it varies all the same (no tolerance for "constant")
    cases.append({"values": [1e-9 * v for v in _ar_series(rng, int(rng.integers(20, 60)), 0.5)],
                  "lag": int(rng.integers(1, 4))})
    # values far from 0 that vary little: sums of products lose every digit there
    cases.append({"values": [1e8 + v for v in _ar_series(rng, int(rng.integers(20, 60)), 0.6)],
                  "lag": int(rng.integers(1, 4))})
    # values so large that a product of two sums of squares overflows a float (1e80: the
    # product is 1e320), and so small that it underflows: r is a ratio, whatever the scale
    cases.append({"values": [1e80 * v for v in _ar_series(rng, int(rng.integers(20, 60)), 0.5)],
                  "lag": int(rng.integers(1, 4))})
    cases.append({"values": [1e-90 * v for v in _ar_series(rng, int(rng.integers(20, 60)), 0.5)],
                  "lag": int(rng.integers(1, 4))})
    # a long stream (a replay run's TD errors): every pair counts, the last ones too
    cases.append({"values": _ar_series(rng, int(rng.integers(10_500, 12_000)), 0.7),
                  "lag": int(rng.integers(1, 4))})
    # a state feature: small integers, as ints (an int array cannot be centred in place)
    cases.append({"values": rng.integers(0, 5, size=int(rng.integers(10, 60))).tolist(),
                  "lag": int(rng.integers(1, 4)), "ints": True})
    # one slice constant and the other not, then a constant sequence: nothing to correlate
    lag = int(rng.integers(1, 4))
    cases.append({"values": [3.0] * int(rng.integers(lag + 2, 10)) + [7.0] * lag, "lag": lag})
    cases.append({"values": [7.0] * lag + [3.0] * int(rng.integers(lag + 2, 10)), "lag": lag})
    # constant decimals: their computed spread is not 0 everywhere (np.corrcoef of eight
    # 0.7s says 1.0), so "constant" is read off the values, not off a NaN or a std
    cases += [{"values": [0.7] * 8, "lag": 1}, {"values": [0.1] * 4, "lag": 1}]
    # the fewest values that still make two pairs
    few_lag = int(rng.integers(1, 4))
    cases.append({"values": rng.normal(size=few_lag + 2).round(3).tolist(), "lag": few_lag})
    # a lag far beyond half the length, still two pairs: a lag is limited by pairs only
    many = int(rng.integers(8, 16))
    cases.append({"values": rng.normal(size=many).round(3).tolist(), "lag": many - 2})
    cases.append({"values": [2.5] * int(rng.integers(4, 10)), "lag": 1})
    short_lag = int(rng.integers(1, 6))
    long_values = rng.normal(size=int(rng.integers(3, 8))).round(3).tolist()
    # the study asks lags 1 to 8 of one series, and a caller refills its array (or list)
    # in place and asks again: r is of the numbers it holds at each call, never of
    # numbers an earlier call was given (a copy or a result kept by the object, its id or
    # its length is stale then)
    refills = []
    for kind in ("array", "list"):
        length = int(rng.integers(30, 80))
        before = _ar_series(rng, length, float(rng.uniform(0.4, 0.95)))
        after = [round(value + 0.5, 4) for value in
                 _ar_series(rng, length, float(rng.uniform(-0.9, 0.1)))]
        # every number changes (a cache that compares one end, or a few, is stale too)
        after = [value + 0.25 if value == old else value for value, old in zip(after, before)]
        refills.append({"kind": kind, "values": before, "refill": after})
    return {"cases": cases,
            "refills": refills, "refill_lags": list(range(1, 9)),
            "too_short": {"values": rng.normal(size=short_lag + 1).round(3).tolist(),
                          "lag": short_lag},
            # lags as long as the sequence, or longer: no pair at all
            "too_long": {"values": long_values,
                         "lags": [len(long_values), len(long_values) + int(rng.integers(1, 4))]},
            "bad_lags": [0, -int(rng.integers(1, 4))],
            "some_values": rng.normal(size=10).round(3).tolist()}


def _refilled_calls(autocorrelation, refill, lags):
    """``{"before": [...], "after": [...]}``: the outcome of each lag on the caller's array
    (or list) holding ``refill["values"]``, then on the same object refilled in place with
    ``refill["refill"]`` (kept where the student's code runs, so the object is the same)."""
    kind, values = refill["kind"], refill["values"]
    kept = kept_with(np.array(values, dtype=np.float64) if kind == "array" else list(values),
                     near=autocorrelation)

    def outcomes(when):
        found = []
        for lag in lags:
            outcome = _result_or_error(f"autocorrelation(the caller's {kind} of "
                                       f"{len(values)} values{when}, lag={lag})",
                                       autocorrelation, kept, lag)
            found.append(_number(outcome["result"]) if "result" in outcome else outcome)
        return found

    before = outcomes("")
    for index, value in enumerate(refill["refill"]):  # the caller's own refill, in place
        kept[index] = value
    return {"before": before, "after": outcomes(", refilled in place")}


def _autocorrelation_probe(inputs, autocorrelation):
    found = []
    for case in inputs["cases"]:
        description = f"autocorrelation(values, lag={case['lag']})"
        if len(case["values"]) - case["lag"] == 2 or case.get("ints"):  # the fewest pairs
            # there may be, or integers: a refusal here breaks a rule the verdict names
            outcome = _result_or_error(description, autocorrelation, np.array(case["values"]),
                                       case["lag"])
            found.append(_number(outcome["result"]) if "result" in outcome else outcome)
        else:
            found.append(_number(call_student(description, autocorrelation,
                                              np.array(case["values"]), case["lag"])))
    # the first series again as a list, the second in an array read back after the call
    first, second = inputs["cases"][:2]
    as_list = _result_or_error(f"autocorrelation(a list of values, lag={first['lag']})",
                               autocorrelation, list(first["values"]), first["lag"])
    if "result" in as_list:
        as_list["result"] = _number(as_list["result"])
    # a constant slice in a list (a list slice compared with a number is never equal)
    constant = inputs["cases"][-1]  # every value 2.5
    constant_list = _result_or_error(f"autocorrelation(a list of {len(constant['values'])} "
                                     f"equal values, lag={constant['lag']})", autocorrelation,
                                     list(constant["values"]), constant["lag"])
    if "result" in constant_list:
        constant_list["result"] = _number(constant_list["result"])
    # the integers as a plain list: Python ints, kept as they are (a list is the caller's
    # too: rewriting its items as floats changes it)
    ints = next(case for case in inputs["cases"] if case.get("ints"))
    ints_list = _result_or_error(f"autocorrelation(a list of {len(ints['values'])} ints, "
                                 f"lag={ints['lag']})", autocorrelation,
                                 list(ints["values"]), ints["lag"])
    if "result" in ints_list:
        ints_list["result"] = _number(ints_list["result"])
    too_long = inputs["too_long"]
    return {"found": found, "as_list": as_list, "constant_list": constant_list,
            "ints_list": ints_list,
            "after": _after_the_call(f"autocorrelation(values, lag={second['lag']})",
                                     autocorrelation, second["values"], second["lag"]),
            "too_long": [outcome_of(autocorrelation, np.array(too_long["values"]), lag)
                         for lag in too_long["lags"]],
            "too_short": outcome_of(autocorrelation, np.array(inputs["too_short"]["values"]),
                                    inputs["too_short"]["lag"]),
            "bad_lags": [outcome_of(autocorrelation, np.array(inputs["some_values"]), lag)
                         for lag in inputs["bad_lags"]],
            # numpy itself refuses to correlate values[:-0] (empty) with a varying series,
            # but a constant one must be refused too, before any shortcut returns 0
            "lag_zero_constant": outcome_of(autocorrelation, np.full(6, 2.5), 0),
            # last: the same array (and list) asked every lag, refilled, asked again
            "refilled": [_refilled_calls(autocorrelation, refill, inputs["refill_lags"])
                         for refill in inputs["refills"]]}


def _autocorrelation_hint(values, lag, got):
    """What a wrong answer is likely to have computed instead, as advice: the judge's own
    guess where its references are at hand (the grader, the full course); a student
    edition, which must not hold the answer, gives the general advice."""
    guess = reference_code(LESSON, "autocorrelation_hint")
    if guess is not None:
        return guess(values, lag, got)
    return (" Correlate values[:-lag] with values[lag:] (Pearson's r, each slice centred on "
            "its own mean); 0.0 when either slice does not vary.")


def _autocorrelation_verdict(inputs, data):
    problem = wrong_amount("answers", data["found"], len(inputs["cases"]),
                           rule=AUTOCORRELATION_PEARSON)
    if problem:
        return problem
    wanted = reference(LESSON, "autocorrelations", inputs["cases"])
    for case, got, want in zip(inputs["cases"], data["found"], wanted):
        values, lag = case["values"], case["lag"]
        if isinstance(got, dict) and case.get("ints"):
            return failed(f"autocorrelation of {len(values)} integer values (an int array, as "
                          f"a state feature gives them) at lag {lag} failed: "
                          f"{str(got.get('error'))[:200]}. Integers are numbers too: compute "
                          "in floats (np.asarray(values, dtype=float)), never centre the "
                          "caller's array in place.", rule=AUTOCORRELATION_PEARSON)
        if isinstance(got, dict):
            return failed(f"autocorrelation of {len(values)} values at lag {lag} leaves two "
                          f"pairs, the fewest it accepts, but it failed: "
                          f"{str(got.get('error'))[:200]}. Refuse only when "
                          "len(values) - lag < 2.", rule=AUTOCORRELATION_PAIRS)
        if _close(got, want, rel=1e-6):
            continue
        constant = want == 0.0  # either slice constant (random decimals never give 0)
        return failed(f"autocorrelation of {len(values)} values starting {values[:4]} at lag "
                      f"{lag} returned {got}; expected {want:.6g}."
                      f"{_autocorrelation_hint(values, lag, got)}",
                      rule=AUTOCORRELATION_CONSTANT if constant else AUTOCORRELATION_PEARSON)
    problem = _input_problem("autocorrelation", data["as_list"], data["after"],
                             inputs["cases"][1]["values"], wanted[0],
                             lambda got, want: _close(got, want, rel=1e-6))
    if problem:
        return problem
    at = next(index for index, case in enumerate(inputs["cases"]) if case.get("ints"))
    outcome = data.get("ints_list") or {}
    if "error" in outcome or not _close(outcome.get("result"), wanted[at], rel=1e-6):
        got = outcome.get("result", outcome.get("error"))
        return failed(f"autocorrelation of a plain list of {len(inputs['cases'][at]['values'])}"
                      f" Python ints at lag {inputs['cases'][at]['lag']} gave {got!r}; the same "
                      f"numbers as an array give {wanted[at]:.6g}. Read a list without "
                      "changing it (np.asarray(values, dtype=float)).", rule=TAKES_LISTS)
    constant = inputs["cases"][-1]
    outcome = data.get("constant_list") or {}
    if outcome.get("result") != 0.0:
        got = outcome.get("result", outcome.get("error"))
        return failed(f"autocorrelation of a list of {len(constant['values'])} values all "
                      f"{constant['values'][0]} at lag {constant['lag']} gave {got!r}; either "
                      "slice not varying, it is 0.0. Test the values, not the list: a list "
                      "slice compared with a number is never equal (np.asarray them first).",
                      rule=AUTOCORRELATION_CONSTANT)
    short = inputs["too_short"]
    problem = value_error_problem(
        f"autocorrelation of {len(short['values'])} values at lag {short['lag']}",
        data["too_short"], ": that leaves a single pair, and one pair makes no correlation",
        rule=AUTOCORRELATION_PAIRS)
    if problem:
        return problem
    too_long = inputs["too_long"]
    problem = wrong_amount("outcomes for lags as long as the values", data["too_long"],
                           len(too_long["lags"]), rule=AUTOCORRELATION_PAIRS)
    for lag, outcome in zip(too_long["lags"], data["too_long"] if not problem else []):
        problem = problem or value_error_problem(
            f"autocorrelation of {len(too_long['values'])} values at lag {lag}", outcome,
            ": no pair is left at all (len(values) - lag < 2)", rule=AUTOCORRELATION_PAIRS)
    if problem:
        return problem
    problem = wrong_amount("outcomes for lags below 1", data["bad_lags"],
                           len(inputs["bad_lags"]), rule=AUTOCORRELATION_LAG)
    if problem:
        return problem
    for lag, outcome in zip(inputs["bad_lags"], data["bad_lags"]):
        problem = value_error_problem(
            f"autocorrelation(values, lag={lag})", outcome,
            ": the lag must be at least 1 (values[:-0] is empty, and a negative lag slices "
            "the wrong ends); check it before slicing", rule=AUTOCORRELATION_LAG)
        if problem:
            return problem
    problem = value_error_problem(
        "autocorrelation(six values all 2.5, lag=0)", data["lag_zero_constant"],
        ": a lag of 0 is refused whatever the values, constant ones included; check the lag "
        "before anything else", rule=AUTOCORRELATION_LAG)
    if problem:
        return problem
    problem = _refilled_problem(inputs, data.get("refilled"))
    if problem:
        return problem
    return passed("Pearson's r between values[:-lag] and values[lag:] matches numpy's at lags "
                  "1 to 8, from a list too, leaving the array given as it was, and of the "
                  "numbers an array or list holds at each call when the caller refills it; "
                  "a constant slice gives 0; lags below 1, and fewer than two pairs, are "
                  "refused.")


def _refilled_problem(inputs, refilled):
    """What went wrong when the caller asked every lag of one array (and one list),
    refilled it in place and asked again, or None."""
    lags = inputs["refill_lags"]
    problem = wrong_amount("outcomes for a refilled array and list", refilled or [],
                           len(inputs["refills"]), rule=AUTOCORRELATION_PEARSON)
    if problem:
        return problem
    for refill, found in zip(inputs["refills"], refilled):
        kind, length = refill["kind"], len(refill["values"])
        for when, numbers in (("before", refill["values"]), ("after", refill["refill"])):
            problem = wrong_amount(f"answers for the {kind} {when} its refill",
                                   (found.get(when) if isinstance(found, dict) else None)
                                   or [], len(lags), rule=AUTOCORRELATION_PEARSON)
            if problem:
                return problem
            wanted = reference(LESSON, "autocorrelations",
                               [{"values": numbers, "lag": lag} for lag in lags])
            for index, (lag, got, want) in enumerate(zip(lags, found[when], wanted)):
                call = f"autocorrelation(values, lag={lag})"
                if isinstance(got, dict):
                    doing = ("then refilled it in place with other numbers and called "
                             if when == "after" else "")
                    return failed(f"The caller made a {kind} of {length} values, {doing}"
                                  f"{call}: it failed: {str(got.get('error'))[:200]}. The "
                                  f"same numbers in a new {kind} work; r is of the numbers "
                                  f"the {kind} holds at the call.", rule=AUTOCORRELATION_PEARSON)
                if _close(got, want, rel=1e-6):
                    continue
                if when == "before":
                    return failed(f"{call} on the caller's {kind} of {length} values "
                                  f"starting {refill['values'][:4]} returned {got}; expected "
                                  f"{want:.6g}.{_autocorrelation_hint(refill['values'], lag, got)}",
                                  rule=AUTOCORRELATION_PEARSON)
                earlier = found["before"][index]
                stale = isinstance(earlier, float) and _close(got, earlier, rel=1e-6)
                return failed(
                    f"{call} on the caller's {kind} of {length} values returned "
                    f"{earlier:.6g} (right); the caller then refilled that same {kind} in "
                    f"place with other numbers (starting {refill['refill'][:4]}), as the "
                    f"study reuses its {kind}s, and called {call} again: it returned {got}, "
                    f"but r of the numbers the {kind} now holds is {want:.6g}"
                    + (", so the answer was r of the old numbers" if stale else "")
                    + ". Compute r from the values as they are at each call: never reuse a "
                    "copy of the series (or an r) kept from an earlier call, whether it is "
                    "looked up by the object, its id or its length.",
                    rule=AUTOCORRELATION_PEARSON)
    return None


# What every call of this lesson's code promises (checks.contracts): exact result types,
# numpy scalars accepted where the text allows them; inputs untouched holds for all.
CONTRACTS = {
    "confidence_interval": Contract(tuple_of(FLOAT, FLOAT, FLOAT), numpy_scalars=(1,), pure=True),
    "episodes_to_threshold": Contract(optional(INT), numpy_scalars=(1, 2), pure=True),
    "autocorrelation": Contract(FLOAT, numpy_scalars=(1,), pure=True),
}

CHECKS = LessonChecks(LESSON, [
    Check("test_confidence_interval", "confidence intervals", ("confidence_interval",),
          _interval_inputs, _interval_probe, _interval_verdict,
          asks="confidence_interval matches Student's t interval (scipy's) on salted samples "
               "and levels, takes lists, leaves its input as it was, and raises ValueError "
               "for fewer than two values.",
          rules=(INTERVAL_TRIPLE, INTERVAL_USES_T, INTERVAL_DDOF, INTERVAL_DEFAULT,
                 TAKES_LISTS, INPUT_UNCHANGED, INTERVAL_NO_WIDTH, INTERVAL_TWO_VALUES)),
    Check("test_episodes_to_threshold", "episodes to a threshold", ("episodes_to_threshold",),
          _threshold_inputs, _threshold_probe, _threshold_verdict,
          asks="episodes_to_threshold matches a moving average over full windows on salted "
               "runs and edge cases (ties, one-episode windows, runs one window long or "
               "shorter), takes lists and leaves its input as it was.",
          rules=(THRESHOLD_FULL_WINDOWS, THRESHOLD_COUNTS_EPISODES, THRESHOLD_AT_EQUAL,
                 THRESHOLD_NONE, TAKES_LISTS, INPUT_UNCHANGED)),
    Check("test_autocorrelation", "autocorrelation at a lag", ("autocorrelation",),
          _autocorrelation_inputs, _autocorrelation_probe, _autocorrelation_verdict,
          asks="autocorrelation matches numpy's correlation of the two slices at several "
               "lags, gives 0 when a slice is constant, takes lists, leaves its input as it "
               "was, and refuses lags below 1 or fewer than two pairs.",
          rules=(AUTOCORRELATION_PEARSON, AUTOCORRELATION_CONSTANT, TAKES_LISTS,
                 INPUT_UNCHANGED, AUTOCORRELATION_LAG, AUTOCORRELATION_PAIRS)),
], contracts=CONTRACTS, lends=False)
