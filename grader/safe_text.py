"""Text that came from a submission (file names, exception messages), made safe to print.

A student's folder name or exception message could hold terminal escape sequences or
line breaks that forge lines in the instructor's terminal or in a report; control
characters are replaced before such text is shown anywhere.
"""

import re

CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text, limit=500):
    """``text`` with control characters replaced by ``?``, cut to ``limit`` characters."""
    return CONTROL_CHARACTERS.sub("?", str(text))[:limit]
