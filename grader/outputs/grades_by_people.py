"""What the instructor decides on top of the checks: manual grades and the late policy.

``grade`` and ``export`` take the same two files (``--manual FILE``, ``--policy FILE``) and
apply them the same way, so a report graded once can be exported again after a person
grades a written answer or grants an extension, without grading anything again. Both are
read and checked before a class is graded: a typo costs seconds, not a run.
"""

from dataclasses import dataclass, field
from pathlib import Path

from grader.outputs.late_work import (PolicyError, apply_late_policy, hand_in_time,
                                      read_hand_in_times, read_policy)
from grader.outputs.manual_grades import (ManualGradesError, add_awaiting_rows,
                                          apply_manual_grades, check_manual_grades,
                                          course_items, read_manual_grades)
from grader.safe_text import printable

CannotApply = (ManualGradesError, PolicyError)  # each message is one line, naming the place


@dataclass
class GradesByPeople:
    manual_path: str | None = None
    grades: list = field(default_factory=list)  # manual_grades.ManualGrade
    policy: object = None  # late_work.LatePolicy
    hand_in_times: dict = field(default_factory=dict)  # (student, lesson) -> datetime

    @classmethod
    def read(cls, manual=None, policy=None, handed_in=None):
        """The files given, read and checked for form against the course's lessons."""
        from grader.lessons import all_lessons

        course = list(all_lessons())
        if handed_in and not policy:
            raise PolicyError("--handed-in needs --policy, the due times to compare with")
        late_policy = read_policy(policy, course) if policy else None
        return cls(manual_path=manual,
                   grades=read_manual_grades(manual, course) if manual else [],
                   policy=late_policy,
                   # a time without its offset is in the policy's zone, as due times are
                   hand_in_times=read_hand_in_times(handed_in, course, late_policy.zone)
                   if handed_in else {})

    def check_class(self, students, lessons):
        """Before grading: every manual grade names a student of the class and an item of
        a lesson graded, with no more points than it is worth."""
        check_manual_grades(self.grades, set(students), course_items(lessons), self.manual_path)

    def record_hand_in_times(self, report, jobs, root):
        """With a policy: note in ``report`` when each graded notebook was handed in."""
        if self.policy is None:
            return
        root = Path(root)
        top = root if root.is_dir() else root.parent
        where = {(job.student, job.lesson): job.path for job in jobs}
        for submission, notebook in report.notebooks():
            path = where.get((submission.student, notebook.name))
            if notebook.submitted and path is not None:
                notebook.handed_in = hand_in_time(submission.student, notebook.name, path, top,
                                                  self.hand_in_times)

    def apply(self, report):
        """Apply the manual grades and the policy to ``report`` (a ClassReport, in place);
        add a row to the manual grades file for each written answer awaiting a person.
        Returns lines for the instructor: what was applied, what waits."""
        lines = []
        if self.manual_path:
            waiting = apply_manual_grades(report, self.grades, self.manual_path)
            lines += [f"{line} (kept in the file)" for line in waiting]
            try:
                added = add_awaiting_rows(report, self.grades, self.manual_path)
            except OSError as error:
                added = 0
                lines.append(f"--manual {printable(self.manual_path)}: could not add the rows "
                             f"awaiting a person ({printable(error.strerror or error)})")
            lines.append(f"manual grades: {len(self.grades)} from {printable(self.manual_path)}"
                         + (f"; {added} row(s) added for written answers awaiting a person "
                            "(fill in their points, then python -m grader export)" if added
                            else ""))
        if self.policy is not None:
            apply_late_policy(report, self.policy)
            late = [notebook for _, notebook in report.notebooks()
                    if notebook.late and notebook.late.late]
            penalised = sum(notebook.penalty_fraction > 0 for notebook in late)
            lines.append(f"late policy: {len(late)} lesson(s) handed in late, {penalised} "
                         "penalised" + (" (lateness left to the LMS)"
                                        if self.policy.lateness == "lms" else ""))
        return lines
