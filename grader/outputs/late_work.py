"""Deadlines, late penalties and extensions: the course's policy, applied to a report.

The instructor writes the policy once, as TOML (``--policy FILE`` of ``grade`` and
``export``)::

    timezone = "Europe/London"   # for due times written without an offset
    lateness = "grader"          # or "lms": the LMS applies its own late policy
    grace_minutes = 15           # handed in this long after the due time is on time

    [penalty]
    percent = 10                 # of the lesson's points, per day (or part of one) late
    per = "day"                  # or "hour"
    floor = 50                   # the penalty never takes a score below this percent

    [due]
    01_qlearning = 2026-09-14T23:59:00
    "02" = 2026-09-21T23:59:00   # a lesson's number will do

    [extensions.ada]             # the student's folder name
    "03" = 2026-10-02T23:59:00   # a new due time for that lesson
    "*" = "2d"                   # or more time on every lesson: "36h", "2d"

Lateness follows Canvas's late policy (``LatePolicy#points_deducted``): a lesson handed in
after its due time plus the grace period is late by the time since its due time (the grace
decides only whether it is late), every day or hour begun counts, and each takes
``percent`` of the lesson's points (not of the score) off the raw score (checks and a
person's grades), never below ``floor`` percent of the lesson's points; a raw score
already below the floor loses nothing. A lesson without a due time is never late. With ``lateness = "lms"`` nothing is penalised here (Canvas, for one, applies
its own late policy, and a grade must not be cut twice); the report and the student's page
still say how late each lesson was.

When each notebook was handed in comes from, in this order: a times file the instructor
gives (``--handed-in TIMES.csv``: columns student, lesson, time in ISO 8601, as an LMS's
submissions export lists them), nbgrader's ``timestamp.txt`` beside the notebook (or in a
folder above it, up to the student's), else, only where the instructor allows it with
``--file-times``, the file's modification time, the least reliable (a copy or an unzip can
change it): without it, a notebook with neither is refused before grading. The report
names the source of every time.
"""

import csv
import math
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from grader.results import HandIn, Lateness
from grader.safe_text import printable

PERIODS = {"day": timedelta(days=1), "hour": timedelta(hours=1)}
LATENESS = ("grader", "lms")
NBGRADER_TIMESTAMP = "timestamp.txt"
ALL_LESSONS = "*"
PENALTY_KEYS = {"percent", "per", "floor"}


class PolicyError(Exception):
    """The policy or a hand-in time cannot be used; the message says where, in one line."""


@dataclass
class LatePolicy:
    due: dict  # lesson -> aware datetime
    extensions: dict = field(default_factory=dict)  # student -> {lesson or "*": datetime or timedelta}
    percent: float = 0.0
    period: str = "day"
    floor: float = 0.0
    grace: timedelta = timedelta(0)
    lateness: str = "grader"
    zone: object = timezone.utc  # the time zone times are shown in to students

    def due_for(self, student, lesson):
        """``(due time, extended)`` for ``student``'s ``lesson``, or (None, False)."""
        due = self.due.get(lesson)
        if due is None:
            return None, False
        granted = self.extensions.get(student, {})
        extension = granted.get(lesson, granted.get(ALL_LESSONS))
        if extension is None:
            return due, False
        return (due + extension if isinstance(extension, timedelta) else extension), True


def _lesson_key(key, lessons, where):
    if key == ALL_LESSONS:
        return key
    from grader.lessons import lesson_called

    lesson = lesson_called(key, list(lessons))
    if lesson is None:
        raise PolicyError(f"{where}: no lesson {printable(key)!r} in this course "
                          f"(lessons: {', '.join(lessons)})")
    return lesson


def _moment(value, zone, where):
    """A TOML datetime (or ISO text) as an aware datetime; local ones are in ``zone``."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise PolicyError(f"{where}: {printable(value)!r} is not a date and time "
                              "(write 2026-09-14T23:59:00)") from None
    if not isinstance(value, datetime):
        raise PolicyError(f"{where}: give a date and time (2026-09-14T23:59:00), not "
                          f"{printable(value)!r}")
    return value if value.tzinfo else value.replace(tzinfo=zone)


def _extra_time(text, where):
    number, unit = text[:-1].strip(), text[-1:].lower()
    try:
        amount = float(number)
    except ValueError:
        amount = -1.0
    if unit not in ("d", "h") or not 0 <= amount < 10_000:
        raise PolicyError(f"{where}: {printable(text)!r} is neither a date and time nor "
                          "more time like \"2d\" or \"36h\"")
    return timedelta(days=amount) if unit == "d" else timedelta(hours=amount)


def _extension(value, zone, where):
    """A new due time, or more time ("2d", "36h")."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return _extra_time(value, where)
    return _moment(value, zone, where)


def _number(table, key, low, high, default, where):
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise PolicyError(f"{where}: {key} must be a number from {low} to {high}, not "
                          f"{printable(value)!r}")
    return float(value)


def read_policy(path, lessons):
    """The :class:`LatePolicy` in the TOML file ``path``, checked against ``lessons``."""
    shown = printable(path)
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as error:
        raise PolicyError(f"--policy {shown}: cannot read it ({error.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise PolicyError(f"--policy {shown}: not TOML ({printable(error)})") from None
    known = {"timezone", "lateness", "grace_minutes", "penalty", "due", "extensions"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise PolicyError(f"{shown}: unknown setting {', '.join(map(printable, unknown))} "
                          f"(known: {', '.join(sorted(known))})")
    try:
        zone = ZoneInfo(data.get("timezone", "UTC"))
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise PolicyError(f"{shown}: timezone {printable(data.get('timezone'))!r} is not an "
                          "IANA time zone (like Europe/London or America/New_York)") from None
    lateness = data.get("lateness", "grader")
    if lateness not in LATENESS:
        raise PolicyError(f"{shown}: lateness must be \"grader\" (penalise here) or \"lms\" "
                          f"(the LMS penalises), not {printable(lateness)!r}")
    penalty = data.get("penalty", {})
    if not isinstance(penalty, dict):
        raise PolicyError(f"{shown}: [penalty] must be a table (percent, per, floor)")
    unknown = sorted(set(penalty) - PENALTY_KEYS)
    if unknown:  # a typo (precent) would otherwise mean no penalty at all
        raise PolicyError(f"{shown} [penalty]: unknown setting "
                          f"{', '.join(map(printable, unknown))} (known: "
                          f"{', '.join(sorted(PENALTY_KEYS))})")
    period = penalty.get("per", "day")
    if period not in PERIODS:
        raise PolicyError(f"{shown}: [penalty] per must be \"day\" or \"hour\", not "
                          f"{printable(period)!r}")
    due_table = data.get("due", {})
    if not isinstance(due_table, dict) or not due_table:
        raise PolicyError(f"{shown}: needs a [due] table: a due time for each lesson")
    due = {}
    for key, value in due_table.items():
        lesson = _lesson_key(key, lessons, f"{shown} [due]")
        if lesson == ALL_LESSONS:
            raise PolicyError(f"{shown} [due]: give each lesson its own due time")
        due[lesson] = _moment(value, zone, f"{shown} [due] {key}")
    extensions = {}
    for student, granted in data.get("extensions", {}).items():
        where = f"{shown} [extensions.{printable(student)}]"
        if not isinstance(granted, dict):
            raise PolicyError(f"{where}: give lessons and new due times "
                              "(\"03\" = 2026-10-02T23:59:00) or more time (\"*\" = \"2d\")")
        extensions[student] = {}
        for key, value in granted.items():
            lesson = _lesson_key(key, lessons, where)
            extensions[student][lesson] = _extension(value, zone, f"{where} {key}")
    return LatePolicy(
        due=due, extensions=extensions,
        percent=_number(penalty, "percent", 0, 100, 0, f"{shown} [penalty]"), period=period,
        floor=_number(penalty, "floor", 0, 100, 0, f"{shown} [penalty]"),
        grace=timedelta(minutes=_number(data, "grace_minutes", 0, 10_000, 0, shown)),
        lateness=lateness, zone=zone)


# --- when each notebook was handed in ----------------------------------------------------
def read_hand_in_times(path, lessons, zone=timezone.utc):
    """``{(student, lesson): aware datetime}`` from a CSV of student, lesson, time; a time
    without a UTC offset is read in ``zone``, the policy's, as its due times are."""
    shown = printable(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            rows = [(reader.line_num, row) for row in reader]
            header = reader.fieldnames or []
    except OSError as error:
        raise PolicyError(f"--handed-in {shown}: cannot read it ({error.strerror})") from None
    except (csv.Error, UnicodeDecodeError) as error:
        raise PolicyError(f"--handed-in {shown}: not a CSV file ({printable(error)})") from None
    if not {"student", "lesson", "time"} <= set(header):
        raise PolicyError(f"--handed-in {shown}: needs columns student, lesson, time")
    times = {}
    for line, row in rows:
        where = f"{shown} line {line}"
        lesson = _lesson_key((row["lesson"] or "").strip(), lessons, where)
        moment = _moment((row["time"] or "").strip(), zone, where)
        times[((row["student"] or "").strip(), lesson)] = moment
    return times


def nbgrader_timestamp(notebook, student_folder):
    """The time in the nearest nbgrader ``timestamp.txt`` from the notebook's folder up to
    the student's, or None."""
    from nbgrader.utils import parse_utc  # nbgrader's own reader of its format

    folder = notebook.parent
    while True:
        stamp = folder / NBGRADER_TIMESTAMP
        if stamp.is_file() and not stamp.is_symlink():
            text = stamp.read_text(errors="replace")[:200].strip()
            try:
                return parse_utc(text).replace(tzinfo=timezone.utc)
            except (ValueError, OverflowError, TypeError):
                raise PolicyError(f"{printable(stamp)}: {printable(text)!r} is not a time "
                                  "nbgrader writes") from None
        if folder == student_folder or folder.parent == folder:
            return None
        folder = folder.parent


def hand_in_time(student, lesson, notebook, student_folder, given):
    """The :class:`~grader.results.HandIn` of one graded notebook: when (UTC), and read
    from where."""
    if (student, lesson) in given:
        moment, source = given[(student, lesson)], "the hand-in times file"
    else:
        unreadable = ""
        try:
            moment = nbgrader_timestamp(Path(notebook), Path(student_folder))
        except PolicyError as error:  # the file's own time is the fallback: say why
            moment, unreadable = None, f"; {error}"
        source = "nbgrader's timestamp.txt"
        if moment is None:
            moment = datetime.fromtimestamp(Path(notebook).lstat().st_mtime, timezone.utc)
            source = "the file's modification time" + unreadable
    return HandIn(moment.astimezone(timezone.utc).isoformat(timespec="seconds"), source)


# --- the penalty ---------------------------------------------------------------------------
def _duration(delta):
    """How late, in words that never read as "0.0 hours" (minutes below two hours)."""
    hours = delta.total_seconds() / 3600
    if hours >= 48:
        return f"{hours / 24:.1f} days"
    if hours >= 2:
        return f"{hours:.1f} hours"
    minutes = max(1, math.ceil(delta.total_seconds() / 60))  # begun minutes: never 0
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def lateness_of(policy, student, lesson, handed_in):
    """The :class:`~grader.results.Lateness` the policy makes of a notebook handed in at
    ``handed_in`` (a :class:`~grader.results.HandIn`)."""
    due, extended = policy.due_for(student, lesson)
    if due is None:
        return Lateness(None, False, False, 0.0, "This lesson has no due time.")
    moment = datetime.fromisoformat(handed_in.time)
    late_by = moment - due  # Canvas counts from the due time; the grace decides if late
    shown, due_shown = moment.astimezone(policy.zone), due.astimezone(policy.zone)
    when = (f"Handed in {shown:%Y-%m-%d %H:%M %Z} (from {handed_in.source}); due "
            f"{due_shown:%Y-%m-%d %H:%M %Z}"
            + (" with your extension" if extended else "")
            + (f", {policy.grace.total_seconds() / 60:g} minutes' grace" if policy.grace else ""))
    lateness = Lateness(due.astimezone(timezone.utc).isoformat(timespec="seconds"), extended,
                        late_by > policy.grace, 0.0, f"{when}: on time.")
    if late_by <= policy.grace:
        return lateness
    if policy.lateness == "lms":
        lateness.explanation = (f"{when}: {_duration(late_by)} late. Your LMS applies the "
                                "course's late policy; the score here is before it.")
        return lateness
    periods = math.ceil(late_by / PERIODS[policy.period])
    percent = min(periods * policy.percent, 100)
    lateness.periods_late, lateness.penalty_fraction = periods, round(percent / 100, 6)
    lateness.floor_fraction = policy.floor / 100
    lateness.explanation = (f"{when}: {_duration(late_by)} late, {periods} {policy.period}"
                            f"{'s' if periods != 1 else ''} at {policy.percent:g}% each: "
                            f"{percent:g}% of the lesson's points off the score"
                            + (f", never below {policy.floor:g}% of them" if policy.floor
                               else "") + ".")
    return lateness


def apply_late_policy(report, policy):
    """Set each handed-in lesson's lateness in ``report`` (a ClassReport, in place; its
    late-adjusted scores follow) from the hand-in times it holds; PolicyError when a time
    is missing."""
    for submission, notebook in report.notebooks():
        notebook.late = None
        if not notebook.submitted:
            continue
        if notebook.handed_in is None:
            raise PolicyError(
                f"the report has no hand-in time for {printable(submission.student)}'s "
                f"{notebook.name}: it was graded without --policy (grade again with "
                "it: --out and --resume keep what was graded)")
        notebook.late = lateness_of(policy, submission.student, notebook.name,
                                    notebook.handed_in)
    report.late_policy = {"lateness": policy.lateness, "percent": policy.percent,
                          "per": policy.period, "floor": policy.floor,
                          "grace_minutes": policy.grace.total_seconds() / 60}
    return report
