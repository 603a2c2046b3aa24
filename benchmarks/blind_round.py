"""Grade a blind round: wrong answers written from a lesson's text alone, and correct
variants, run through every check of the lesson.

    python benchmarks/blind_round.py ROUND_FILE [ROUND_FILE ...] [--salt S] [--no-learning]
        [--grader] [--json out.json]

A round file is Python that defines ``LESSON`` (``"02_replay_buffer"``), ``WRONG`` and
``CORRECT``: lists of ``{"name", "kind", "description", "answers": {grade_id: source}}``
(``WRONG`` entries also say which sentence of the lesson they break, ``"breaks"``). The
authors see the lesson's text, its stubs and its reference module, never ``checks/`` or
``tests/bugs``; that is what makes the round a measure of the checks rather than of the
catalogue.

Each answer is judged as the grader judges it, in this process (the notebook rebuilt with
the answer cells put in, ``tests/support/in_process.py``): the quick checks with the
hidden ``--salt`` and the public one; an answer that passes all of them is run through the
lesson's learning checks too (unless ``--no-learning``). With ``--grader``, an answer
that every check passed in this process is graded once more by the grader itself
(``grade_notebook``, sandbox and lending as an instructor's run has them, hidden salt),
and a correct variant that failed is too. A wrong answer is *caught* when some check does
not pass on some salt; a correct variant must pass every check on both salts. Prints one
line per answer and the catch rate per lesson.
"""

import argparse
import contextlib
import io
import json
import runpy
import signal
import sys
import time
import warnings
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

import checks  # noqa: E402
from checks.framework import VISIBLE_SALT  # noqa: E402

GOAL_CATCH_RATE = 0.97
# In this process nothing meters a check's CPU: a check that runs this long is one the
# grader's budget (at most 60 CPU-s a check) would have stopped, so it counts as caught.
CHECK_SECONDS = 180


class _TooLong(Exception):
    pass


def _too_long(signum, frame):
    raise _TooLong()


def judge(lesson, answers, salts, learning):
    """[(check, salt, feedback)] of the checks that do not pass on ``answers``: quick checks
    first, learning checks only when every quick check passed."""
    from tests.support.in_process import namespace_for

    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            namespace = namespace_for(lesson, answers)
    except Exception as error:  # noqa: BLE001 - a notebook that does not run is caught
        return [("(running the notebook)", "-", f"{type(error).__name__}: {error}")]
    lesson_checks = checks.checks_for_lesson(lesson)
    found = []
    for want_learning in (False, True):
        if want_learning and (found or not learning):
            break
        for check in lesson_checks:
            if check.learning != want_learning:
                continue
            for salt in salts:
                signal.signal(signal.SIGALRM, _too_long)
                signal.alarm(CHECK_SECONDS)
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        outcome = lesson_checks.judged(check.name, namespace, salt)
                except _TooLong:
                    found.append((check.name, salt, f"ran over {CHECK_SECONDS} s"))
                    continue
                except Exception as error:  # noqa: BLE001 - the probe broke: caught
                    found.append((check.name, salt, f"raised {type(error).__name__}: {error}"))
                    continue
                finally:
                    signal.alarm(0)
                if not outcome.passed:
                    found.append((check.name, salt, outcome.feedback))
    return found


def graded(lesson, answers, salt):
    """[(check, salt, feedback)] of the checks the grader itself does not pass on a
    submission holding ``answers``."""
    import tempfile

    import nbformat

    from grader.judge.grade_notebook import grade_notebook
    from grader.lessons import all_lessons
    from tests.support.in_process import fake_submission

    source = all_lessons()[lesson].source()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{lesson}.ipynb"
        nbformat.write(fake_submission(source, answers), path)
        result = grade_notebook(path, salt, lesson=lesson)
    return [(check.id, f"grader, {salt}", check.feedback) for check in result.checks
            if check.status != "passed"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="+", type=Path)
    parser.add_argument("--salt", default="blind-round-hidden")
    parser.add_argument("--no-learning", action="store_true")
    parser.add_argument("--grader", action="store_true",
                        help="grade what passed in this process again with the grader")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # wrong code computes NaNs; their warnings are noise
    salts = [options.salt, VISIBLE_SALT]
    rows, ok = [], True
    for path in options.rounds:
        round_ = runpy.run_path(str(path))
        missing = [name for name in ("LESSON", "WRONG", "CORRECT") if name not in round_]
        if missing:
            parser.error(f"{path} does not define {', '.join(missing)} (a round file defines "
                         "LESSON, WRONG and CORRECT)")
        lesson = round_["LESSON"]
        caught = 0
        print(f"== {lesson} ({path})")
        for kind, entries in (("wrong", round_["WRONG"]), ("correct", round_["CORRECT"])):
            for entry in entries:
                started = time.perf_counter()
                found = judge(lesson, entry["answers"], salts, not options.no_learning)
                if options.grader and (not found if kind == "wrong" else found):
                    found = graded(lesson, entry["answers"], options.salt)
                seconds = time.perf_counter() - started
                good = bool(found) if kind == "wrong" else not found
                caught += kind == "wrong" and bool(found)
                ok &= kind == "wrong" or good
                verdict = (("caught" if found else "MISSED") if kind == "wrong" else
                           ("full marks" if good else "FALSE FAILURE"))
                first = found[0] if found else None
                print(f"  {kind:<8} {entry['name'][:48]:<48} {verdict:<13} {seconds:5.0f} s"
                      + (f"  {first[0]} [{first[1]}]: {first[2][:160]}" if first else ""),
                      flush=True)
                rows.append({"lesson": lesson, "kind": kind, "name": entry["name"],
                             "bug_kind": entry.get("kind", ""), "good": good,
                             "failures": [list(f) for f in found], "seconds": round(seconds, 1)})
        wrong = len(round_["WRONG"])
        rate = caught / wrong if wrong else 1.0
        ok &= rate >= GOAL_CATCH_RATE
        print(f"  caught {caught} of {wrong} wrong answers ({rate:.0%}; goal "
              f">= {GOAL_CATCH_RATE:.0%})\n", flush=True)
    if options.json:
        options.json.write_text(json.dumps(rows, indent=1))
    print("all goals met" if ok else "some goals NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
