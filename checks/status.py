"""What a check's result can be: one name for each status the grader reports.

A :class:`Status` is a string (``Status.PASSED == "passed"``), so a report written as JSON
holds the plain words and a report read back compares equal to the enum.
"""

from enum import StrEnum


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_WRITTEN = "not written"  # the code it needs is still the released stub
    ERROR = "error"  # the student's code raised, or a name it needs is missing
    TIMEOUT = "timeout"  # the student's code ran out of its CPU budget
