"""Lesson 03's check of annealed_beta, the schedule of the importance-sampling exponent."""

from checks.expected import expected as reference
from checks.framework import call_student, failed, passed, wrong_amount
from checks.lesson03_prioritized_replay.driving import LESSON, _close, _numbers
from checks.requirements import Rule


# --- the rules: what the lesson tells a student, as its checks test it ---------------------

# test_beta_schedule
BETA_LINEAR = Rule("beta-linear", "annealed_beta rises linearly from beta_start at step 0 to 1 "
                   "at total_steps, for any beta_start, 0 included.")
BETA_STAYS_AT_ONE = Rule("beta-stays-at-one", "Past total_steps, beta stays at 1.")
BETA_START_DEFAULT = Rule("beta-start-default", "beta_start defaults to 0.4, the PER paper's "
                          "value.")


# --- beta annealing ----------------------------------------------------------------------------

def _beta_inputs(rng):
    total = int(rng.integers(50, 500))
    return {"total_steps": total, "beta_start": round(float(rng.uniform(0.2, 0.6)), 2),
            "steps": [0, total // 4, total // 2, total - 1, total, 2 * total]}


def _beta_probe(inputs, annealed_beta):
    values = [_numbers(call_student(f"annealed_beta({step}, {inputs['total_steps']}, "
                                    f"{inputs['beta_start']})", annealed_beta, step,
                                    inputs["total_steps"], inputs["beta_start"]),
                       "annealed_beta", 1)[0] for step in inputs["steps"]]
    total = inputs["total_steps"]
    defaults = [_numbers(call_student(f"annealed_beta({step}, {total})", annealed_beta, step,
                                      total), "annealed_beta", 1)[0]
                for step in (0, total // 2, total)]
    # beta_start = 0: from no correction at all to the full one
    from_zero = [_numbers(call_student(f"annealed_beta({step}, {total}, 0.0)", annealed_beta,
                                       step, total, 0.0), "annealed_beta", 1)[0]
                 for step in (0, total // 2)]
    return {"values": values, "default_start": defaults[0], "defaults": defaults,
            "from_zero": from_zero}


def _beta_verdict(inputs, data):
    problem = wrong_amount("values", data["values"], len(inputs["steps"]), rule=BETA_LINEAR)
    if problem:
        return problem
    total, start = inputs["total_steps"], inputs["beta_start"]
    expected = reference(LESSON, "beta_schedule", inputs["steps"], total, start)
    for step, got, want in zip(inputs["steps"], data["values"], expected):
        if not _close(got, want, rel=1e-9):
            hint, rule = ((" Past total_steps beta stays at 1.", BETA_STAYS_AT_ONE)
                          if step > total else
                          (" beta goes linearly from beta_start at step 0 to 1 at "
                           "total_steps.", BETA_LINEAR))
            return failed(f"annealed_beta({step}, {total}, beta_start={start}) returned "
                          f"{got!r}; expected {want:.6g}.{hint}", rule=rule)
    if not _close(data["default_start"], 0.4):
        return failed(f"annealed_beta(0, {total}) returned {data['default_start']!r}: "
                      "beta_start defaults to 0.4, the PER paper's value.",
                      rule=BETA_START_DEFAULT)
    steps = (0, total // 2, total)
    want = reference(LESSON, "beta_schedule", list(steps), total, 0.4)
    for step, got, expected in zip(steps, data.get("defaults", []), want):
        if not _close(got, expected, rel=1e-9):
            return failed(f"annealed_beta({step}, {total}) (beta_start by default, 0.4) "
                          f"returned {got!r}; expected {expected:.6g}.",
                          rule=BETA_START_DEFAULT)
    # from 0: beta is step / total_steps (0 exactly at step 0)
    for step, got in zip((0, total // 2), data.get("from_zero") or [None, None]):
        if not (got == 0.0 if step == 0 else _close(got, step / total, rel=1e-9)):
            return failed(f"annealed_beta({step}, {total}, beta_start=0.0) returned {got!r}; "
                          f"expected {step / total:.6g}. beta_start = 0 is a value (no "
                          "correction at first), not a missing one.", rule=BETA_LINEAR)
    return passed("beta rises linearly from beta_start (0 included) to 1 and stays there.")
