"""Text that came from a submission (file names, exception messages), made safe to print
and to open in a spreadsheet.

A student's folder name or exception message could hold terminal escape sequences or
line breaks that forge lines in the instructor's terminal or in a report; control
characters are replaced before such text is shown anywhere. A folder name or answer that
begins like a formula would run in the spreadsheet an instructor opens a CSV in: every
CSV the grader writes passes each cell through :func:`spreadsheet_safe`.
"""

import re

CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text, limit=500):
    """``text`` with control characters replaced by ``?``, cut to ``limit`` characters."""
    return CONTROL_CHARACTERS.sub("?", str(text))[:limit]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet runs as a formula


def spreadsheet_safe(text):
    """``text`` as a spreadsheet shows it but never runs it: a student's answer or folder
    name beginning like a formula (``=HYPERLINK(...)``) gets a leading ``'``, which
    spreadsheets take as "text"; :func:`from_spreadsheet` takes it off again."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def from_spreadsheet(text):
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_STARTS) else text
