"""What grading gives, as typed results with one data form (JSON) for all of them.

A check's result, a written answer's, a notebook's, a student's and a class's: the judge
makes them, the result store keeps each notebook's as it is graded, a person's grades and
a late policy add to them, and the report, gradebooks, feedback pages, Gradescope and the
self-check render them. Each type has ``to_data()`` and ``from_data()``, and that data is
the report's schema: a notebook's result file in a ``--out`` folder is its entry in the
report. Scores are never stored apart from their parts: a notebook's score is made from
its checks (or a person's regrade of one), its graded written answers and its late
penalty, so applying manual grades or a policy again gives the same totals.

::

    ClassReport      lessons {name: points}, submissions [StudentResult], notes
    StudentResult    student, notes, notebooks [NotebookResult]
    NotebookResult   name, submitted, status, checks [CheckResult], written [WrittenAnswer],
                     notes, isolation, handed_in (HandIn), late (Lateness), excused
"""

from dataclasses import dataclass, field
from enum import StrEnum

from checks.status import Status

__all__ = ["Status", "WrittenStatus", "NotebookStatus", "Override", "CheckResult",
           "WrittenAnswer", "HandIn", "Lateness", "NotebookResult", "StudentResult",
           "ClassReport"]

DIGITS = 6  # points are rounded to this many decimals wherever they are summed


class WrittenStatus(StrEnum):
    AWAITING = "awaiting manual grading"  # answered; no person has graded it yet
    GRADED = "graded by a person"
    UNANSWERED = "unanswered"  # left as the stub: 0 points, nobody to grade it


class NotebookStatus(StrEnum):
    GRADED = "graded"
    NOT_SUBMITTED = "not submitted"
    NOT_GRADED = "not graded"  # handed in as a file that could not be graded (notes say why)


def _without_none(data, *keys):
    """``data`` without those of ``keys`` whose value is None (optional parts)."""
    return {key: value for key, value in data.items() if key not in keys or value is not None}


@dataclass
class Override:
    """A person's regrade of an automatic check: its points replace the check's."""

    points: float
    comment: str = ""

    def to_data(self):
        return {"points": self.points, "comment": self.comment}

    @classmethod
    def from_data(cls, data):
        return cls(data["points"], data.get("comment", ""))


@dataclass
class CheckResult:
    id: str
    score: float
    max_score: float
    status: Status
    feedback: str
    figure: dict | None = None  # learning checks: the run judged next to its baseline
    # what the probe spent (CPU: the sandbox's and the grader's work for it), measured,
    # so not part of what two gradings of the same submission must agree on
    usage: dict | None = None  # {"cpu_seconds": ..., "wall_seconds": ...}
    override: Override | None = None

    def __post_init__(self):
        self.status = Status(self.status)

    @property
    def passed(self):
        return self.status == Status.PASSED

    @property
    def points(self):
        """What the check counts for: a person's regrade where there is one."""
        return self.override.points if self.override else self.score

    def to_data(self):
        data = {"id": self.id, "score": self.score, "max_score": self.max_score,
                "status": self.status.value, "feedback": self.feedback,
                "figure": self.figure, "usage": self.usage}
        if self.override:
            data["override"] = self.override.to_data()
        return data

    @classmethod
    def from_data(cls, data):
        override = data.get("override")
        return cls(data["id"], data["score"], data["max_score"], data["status"],
                   data["feedback"], data.get("figure"), data.get("usage"),
                   Override.from_data(override) if override else None)


@dataclass
class WrittenAnswer:
    """A written (manually graded) answer: a person grades it, not the grader."""

    id: str
    max_score: float
    answer: str
    answered: bool  # False: the released stub, left as it was
    status: WrittenStatus | None = None  # default: awaiting a person, or unanswered
    score: float | None = None  # None until a person grades it (0 when unanswered)
    comment: str | None = None  # the person's

    def __post_init__(self):
        if self.status is None:
            self.ungrade()
        self.status = WrittenStatus(self.status)

    def ungrade(self):
        """Back to what grading alone gives: no person's grade."""
        self.status = WrittenStatus.AWAITING if self.answered else WrittenStatus.UNANSWERED
        self.score = None if self.answered else 0.0
        self.comment = None

    def grade(self, points, comment):
        self.status, self.score, self.comment = WrittenStatus.GRADED, points, comment

    def to_data(self):
        return _without_none({"id": self.id, "max_score": self.max_score,
                              "answer": self.answer, "answered": self.answered,
                              "status": self.status.value, "score": self.score,
                              "comment": self.comment}, "comment")

    @classmethod
    def from_data(cls, data):
        return cls(data["id"], data["max_score"], data["answer"], data.get("answered", True),
                   data.get("status"), data.get("score"), data.get("comment"))


@dataclass
class HandIn:
    """When a notebook was handed in (ISO 8601, UTC) and where that time was read."""

    time: str
    source: str

    def to_data(self):
        return {"time": self.time, "source": self.source}

    @classmethod
    def from_data(cls, data):
        return cls(data["time"], data["source"])


@dataclass
class Lateness:
    """What a late policy makes of a hand-in time (:mod:`grader.outputs.late_work`)."""

    due: str | None  # ISO 8601, UTC; None: the lesson has no due time
    extended: bool
    late: bool
    # Canvas's late policy: periods begun x the percent per period, as a fraction of the
    # lesson's points (at most 1), taken off the score but never below floor_fraction of
    # those points (a score already below it loses nothing)
    penalty_fraction: float
    explanation: str
    periods_late: int | None = None  # days or hours begun, where a penalty applies
    floor_fraction: float = 0.0

    def deduction(self, raw, maximum):
        """The points a late penalty takes off ``raw`` of ``maximum``, as Canvas's
        ``LatePolicy#points_deducted`` computes them."""
        if not self.penalty_fraction or not maximum:
            return 0.0
        return maximum * min(self.penalty_fraction, max(raw / maximum - self.floor_fraction,
                                                        0.0))

    def to_data(self):
        return _without_none({"due": self.due, "extended": self.extended, "late": self.late,
                              "penalty_fraction": self.penalty_fraction,
                              "floor_fraction": self.floor_fraction,
                              "periods_late": self.periods_late,
                              "explanation": self.explanation}, "periods_late")

    @classmethod
    def from_data(cls, data):
        return cls(data["due"], data["extended"], data["late"], data["penalty_fraction"],
                   data["explanation"], data.get("periods_late"),
                   data.get("floor_fraction", 0.0))


@dataclass
class NotebookResult:
    """One lesson of one student: graded, or not (``submitted`` False: no score)."""

    name: str
    checks: list = field(default_factory=list)  # [CheckResult]
    notes: list = field(default_factory=list)
    written: list = field(default_factory=list)  # [WrittenAnswer]
    # grader.judge.sandbox.isolation(): "level" (ISOLATED or NOT_ISOLATED: the wall it was
    # graded in), what filtered its syscalls ("syscalls") and what held each budget of its
    # sandbox ("memory", "tasks", "cpu_time"...)
    isolation: dict | None = field(default_factory=dict)
    submitted: bool = True
    status: NotebookStatus = NotebookStatus.GRADED
    unsubmitted_max_score: float | None = None  # a lesson not graded: the course's points
    handed_in: HandIn | None = None
    late: Lateness | None = None
    excused: bool = False
    excused_comment: str | None = None

    def __post_init__(self):
        self.status = NotebookStatus(self.status)

    @classmethod
    def not_submitted(cls, lesson, max_score, notes=()):
        """A lesson without a graded notebook: not handed in, or handed in as a file that
        could not be graded (``notes`` say why)."""
        return cls(lesson, notes=list(notes), isolation=None, submitted=False,
                   status=NotebookStatus.NOT_GRADED if notes else NotebookStatus.NOT_SUBMITTED,
                   unsubmitted_max_score=max_score)

    def add(self, check):
        self.checks.append(check)

    # --- scores, always made from the parts ------------------------------------------
    def _checks_points(self):
        return sum(check.points for check in self.checks)

    def _checks_worth(self):
        return sum(check.max_score for check in self.checks)

    @property
    def automatic_score(self):
        """The checks' points (a person's regrade in place of a check's)."""
        return round(self._checks_points(), DIGITS)

    @property
    def automatic_max_score(self):
        """What the checks are worth: the written answers' points are a person's to give."""
        return round(self._checks_worth(), DIGITS)

    @property
    def raw_score(self):
        """Checks (a person's regrade in their place) and graded written answers, before
        any late penalty; None for a lesson not graded."""
        if not self.submitted:
            return None
        return round(self._checks_points()
                     + sum(answer.score or 0.0 for answer in self.written), DIGITS)

    @property
    def penalty_fraction(self):
        return self.late.penalty_fraction if self.late else 0.0

    @property
    def score(self):
        raw = self.raw_score
        if raw is None or self.late is None:
            return raw
        return round(raw - self.late.deduction(raw, self.max_score), DIGITS)

    @property
    def max_score(self):
        """The checks' points and the written answers' (graded by people, as nbgrader
        counts them)."""
        if not self.submitted:
            return self.unsubmitted_max_score
        return round(self._checks_worth()
                     + sum(answer.max_score for answer in self.written), DIGITS)

    @property
    def awaiting_points(self):
        return sum(answer.max_score for answer in self.written
                   if answer.status == WrittenStatus.AWAITING)

    # --- data --------------------------------------------------------------------------
    def to_data(self):
        data = {"name": self.name, "submitted": self.submitted, "status": self.status.value,
                "score": self.score, "raw_score": self.raw_score, "max_score": self.max_score,
                "isolation": self.isolation, "notes": list(self.notes),
                "checks": [check.to_data() for check in self.checks],
                "manual": [answer.to_data() for answer in self.written]}
        if self.handed_in:
            data["handed_in"] = self.handed_in.to_data()
        if self.late:
            data["late"] = self.late.to_data()
        if self.excused:
            data["excused"] = True
            data["excused_comment"] = self.excused_comment
        return data

    @classmethod
    def from_data(cls, data):
        return cls(data["name"], [CheckResult.from_data(check) for check in data["checks"]],
                   list(data["notes"]),
                   [WrittenAnswer.from_data(answer) for answer in data.get("manual", [])],
                   data.get("isolation"), data.get("submitted", True),
                   data.get("status", NotebookStatus.GRADED),
                   None if data.get("submitted", True) else data["max_score"],
                   HandIn.from_data(data["handed_in"]) if data.get("handed_in") else None,
                   Lateness.from_data(data["late"]) if data.get("late") else None,
                   bool(data.get("excused")), data.get("excused_comment"))


@dataclass
class StudentResult:
    """One student's lessons, every lesson of the report's, graded or not."""

    student: str
    notebooks: list = field(default_factory=list)  # [NotebookResult], in course order
    notes: list = field(default_factory=list)
    # what an LMS's download named of the student, as roster columns: {"id": Canvas's
    # user id} or {"email": ...} (Gradescope); empty for a folder of the student's own
    identity: dict = field(default_factory=dict)

    def notebook(self, lesson):
        return next((notebook for notebook in self.notebooks if notebook.name == lesson), None)

    @property
    def counted(self):
        """The lessons handed in, graded and not excused: those the totals count."""
        return [notebook for notebook in self.notebooks
                if notebook.submitted and not notebook.excused]

    @property
    def score(self):
        return round(sum(notebook.score for notebook in self.counted), DIGITS)

    @property
    def max_score_handed_in(self):
        return round(sum(notebook.max_score for notebook in self.counted), DIGITS)

    def max_score(self, lessons):
        """The course's points (of ``lessons``, ``{name: points}``) less excused lessons'."""
        excused = sum(lessons.get(notebook.name, 0.0) for notebook in self.notebooks
                      if notebook.excused)
        return round(sum(lessons.values()) - excused, DIGITS)

    def to_data(self, lessons):
        data = {"student": self.student, "notes": list(self.notes), "score": self.score,
                "max_score_handed_in": self.max_score_handed_in,
                "max_score": self.max_score(lessons),
                "notebooks": [notebook.to_data() for notebook in self.notebooks]}
        if self.identity:
            data["identity"] = dict(self.identity)
        return data

    @classmethod
    def from_data(cls, data):
        return cls(data["student"], [NotebookResult.from_data(n) for n in data["notebooks"]],
                   list(data.get("notes", [])), dict(data.get("identity", {})))


@dataclass
class ClassReport:
    """A class's grading: every student's lessons, the course's points per lesson, the
    notes about files that belong to no student, and the late policy applied, if any."""

    lessons: dict  # {lesson: points}, in course order: the gradebook's columns
    submissions: list = field(default_factory=list)  # [StudentResult], by student
    notes: list = field(default_factory=list)
    late_policy: dict | None = None  # the policy's terms, once one is applied

    def student(self, name):
        return next((s for s in self.submissions if s.student == name), None)

    def notebooks(self):
        """Every (student result, notebook result) pair, in report order."""
        return [(submission, notebook) for submission in self.submissions
                for notebook in submission.notebooks]

    def to_data(self):
        data = {"lessons": dict(self.lessons),
                "submissions": [submission.to_data(self.lessons)
                                for submission in self.submissions]}
        if self.notes:
            data["notes"] = list(self.notes)
        if self.late_policy is not None:
            data["late_policy"] = dict(self.late_policy)
        return data

    @classmethod
    def from_data(cls, data):
        return cls(dict(data["lessons"]),
                   [StudentResult.from_data(s) for s in data["submissions"]],
                   list(data.get("notes", [])), data.get("late_policy"))
