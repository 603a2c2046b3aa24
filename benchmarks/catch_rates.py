"""How often each statistical check catches the bugs that name it, over many salts.

    nice -n 10 python benchmarks/catch_rates.py [--salts 1000] [--lesson 03 ...]
        [--json out.json]

A statistical check (a chi-square or binomial test at ``FALSE_FAILURE_RATE`` = 1e-6)
catches a bug only with some probability: each salt gives it other inputs and other
draws. For every bug in ``tests/bugs/`` whose named check is statistical, this runs
that check on the bug over ``--salts`` salts (``catch-0`` .. ``catch-<N-1>``) and prints
the share of salts on which it failed: the catch rate, which must be >= 99.9%. Over
the same salts it runs every statistical check on the reference answers and on each
correct variant in ``tests/bugs/correct_variants.py``: their failures are false
failures and must be 0.

Checks run in-process on the notebook's code rebuilt with the bug's answer cells
(``tests/support/in_process.py``), seeded as in grading. The benchmark is not part of
CI; it takes minutes per thousand salts for each bug.
"""

import argparse
import contextlib
import io
import json
import sys
import time
import warnings
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))


import checks  # noqa: E402

GOAL_CATCH_RATE = 0.999

# The checks whose verdict rests on a test at FALSE_FAILURE_RATE: only they can miss a
# bug, or fail a correct answer, by chance.
STATISTICAL = {
    "01_qlearning": ("test_best_action_ties", "test_epsilon_greedy"),
    "02_replay_buffer": ("test_uniform_sampling", "test_with_replacement"),
    "03_prioritized_replay": ("test_sampling_follows_priorities", "test_stratified_sampling"),
    "04_hindsight_replay": ("test_goal_steps", "test_relabel_fraction",
                            "test_uniform_transitions"),
    "05_combined_replay": ("test_cer_rest_uniform",),
}


def fails(lesson, name, namespace, salt):
    """The check's feedback if it fails with ``salt``, else None."""
    try:
        outcome = checks.checks_for_lesson(lesson).judged(name, namespace, salt)
    except Exception as error:  # the probe could not even run the code: caught
        return f"raised {type(error).__name__}: {error}"
    return None if outcome.passed else outcome.feedback


def failures(lesson, name, namespace, salts):
    return [(salt, text) for salt in salts
            if (text := fails(lesson, name, namespace, salt)) is not None]


def main(argv=None):
    from tests.bugs import ALL_BUGS
    from tests.bugs.correct_variants import CORRECT_VARIANTS
    from tests.support.in_process import namespace_for

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--salts", type=int, default=1000)
    parser.add_argument("--lesson", action="append", help="a lesson's number (repeatable)")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # buggy code computes NaNs; their warnings are noise
    salts = [f"catch-{i}" for i in range(options.salts)]
    lessons = [lesson for lesson in STATISTICAL
               if not options.lesson or any(lesson.startswith(x.zfill(2))
                                            for x in options.lesson)]
    rows, ok = [], True
    print(f"{options.salts} salts per row; catch rate goal >= {GOAL_CATCH_RATE:.1%}, "
          "false failures goal 0\n")
    print(f"{'lesson':<22} {'check':<34} {'code':<44} {'failed':>7} {'rate':>8} {'s':>6}")
    for lesson in lessons:
        statistical = STATISTICAL[lesson]
        subjects = [("bug", bug.name, bug.answers, (bug.check,)) for bug in ALL_BUGS
                    if bug.lesson == lesson and bug.check in statistical]
        subjects += [("correct", "reference", {}, statistical)]
        subjects += [("correct", variant.name, variant.answers, statistical)
                     for variant in CORRECT_VARIANTS if variant.lesson == lesson]
        for kind, name, answers, names in subjects:
            with contextlib.redirect_stdout(io.StringIO()):  # the notebook's prints
                namespace = namespace_for(lesson, answers)
            for check in names:
                started = time.perf_counter()
                failed = failures(lesson, check, namespace, salts)
                seconds = time.perf_counter() - started
                rate = len(failed) / len(salts)
                good = rate >= GOAL_CATCH_RATE if kind == "bug" else not failed
                ok &= good
                shown = f"{rate:.1%}" if kind == "bug" else f"{len(failed)} false"
                print(f"{lesson:<22} {check:<34} {name[:44]:<44} {len(failed):>7} "
                      f"{shown:>8} {seconds:>6.0f}{'' if good else '  BELOW GOAL'}",
                      flush=True)
                if not good:
                    shown_salts = (failed[:2] if kind == "correct" else
                                   [s for s in salts if s not in dict(failed)][:2])
                    print(f"    e.g. salts {shown_salts}", flush=True)
                rows.append({"lesson": lesson, "check": check, "kind": kind, "code": name,
                             "salts": len(salts), "failed": len(failed), "rate": rate,
                             "seconds": round(seconds, 1)})
    if options.json:
        options.json.write_text(json.dumps(rows, indent=1))
    print("\nall goals met" if ok else "\nsome goals NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
