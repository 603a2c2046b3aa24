"""What the instructor decides on top of the checks: manual grades and the late policy.

``grade`` and ``export`` take the same two files (``--manual FILE``, ``--policy FILE``) and
apply them the same way, so a report graded once can be exported again after a person
grades a written answer or grants an extension, without grading anything again. Both are
read and checked before a class is graded: a typo costs seconds, not a run.
"""

from dataclasses import dataclass, field
from pathlib import Path

from grader.outputs.late_work import (PolicyError, apply_late_policy, hand_in_time,
                                      nbgrader_timestamp, read_hand_in_times, read_policy)
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
        a lesson graded, with no more points than it is worth; every extension and
        hand-in time names a student of the class."""
        check_manual_grades(self.grades, set(students), course_items(lessons), self.manual_path)
        self._check_students(students)

    def _check_students(self, students):
        """Lines naming each extension and hand-in time of a student not graded here (a
        term's files may list students this run does not grade: they are not applied);
        PolicyError, one line, when such a name is close to a student graded here, a
        misspelling that would give that student no extension, silently."""
        known, lines = set(students), []
        named = [(f"--policy: [extensions.{printable(name)}]", name)
                 for name in sorted(self.policy.extensions if self.policy else ())]
        named += [(f"--handed-in: the time for {printable(name)}", name)
                  for name in sorted({student for student, _ in self.hand_in_times})]
        for where, name in named:
            if name in known:
                continue
            close = _closest(name, known)
            if close is not None:
                raise PolicyError(f"{where} names no student of this class; did you mean "
                                  f"{printable(close)}? (a misspelt name would give "
                                  f"{printable(close)} nothing)")
            lines.append(f"{where} names no student graded here: not applied")
        return lines

    def check_hand_in_times(self, jobs, root, file_times=False):
        """Before grading, with a policy: PolicyError, one line, naming the notebooks to
        grade that have no hand-in time (no row in --handed-in, no nbgrader timestamp.txt),
        unless ``file_times`` allows the files' modification times for them."""
        if self.policy is None or file_times:
            return
        top = _top(root)
        missing = []
        for job in jobs:
            if (job.student, job.lesson) in self.hand_in_times:
                continue
            try:
                stamped = nbgrader_timestamp(Path(job.path), top)
            except PolicyError:
                stamped = None
            if stamped is None:
                missing.append(f"{job.student}'s {job.lesson}")
        if missing:
            raise PolicyError(
                f"--policy: no hand-in time for {len(missing)} notebook(s) "
                f"({printable(', '.join(missing[:3]))}{', ...' if len(missing) > 3 else ''}"
                "): give them in --handed-in (the LMS's submission times), or pass "
                "--file-times to take the files' modification times (a copy or an unzip "
                "changes them)")

    def record_hand_in_times(self, report, jobs, root):
        """With a policy: note in ``report`` when each graded notebook was handed in."""
        if self.policy is None:
            return
        top = _top(root)
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
        lines = self._check_students([submission.student for submission in report.submissions])
        if self.hand_in_times:
            missing = [f"{submission.student}'s {notebook.name}"
                       for submission, notebook in report.notebooks()
                       if notebook.handed_in is not None and (submission.student, notebook.name)
                       not in self.hand_in_times]
            if missing:
                lines.append(f"--handed-in has no time for {len(missing)} graded notebook(s) "
                             f"({printable(', '.join(missing[:5]))}"
                             + (", ..." if len(missing) > 5 else "") + "): their time is "
                             "nbgrader's timestamp.txt or the file's modification time, as "
                             "each report entry names")
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
            penalised = sum(notebook.score < notebook.raw_score for notebook in late)
            lines.append(f"late policy: {len(late)} lesson(s) handed in late, {penalised} "
                         "penalised" + (" (lateness left to the LMS)"
                                        if self.policy.lateness == "lms" else ""))
        return lines


def _closest(name, names):
    """The name of ``names`` that ``name`` most likely misspells, or None."""
    import difflib

    found = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.6)
    return found[0] if found else None


def _top(root):
    """The folder the students' folders are in: ``root``, or a single notebook's folder."""
    root = Path(root)
    return root if root.is_dir() else root.parent
