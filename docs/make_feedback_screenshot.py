"""Grade one example student and photograph their feedback page for the README.

    .venv/bin/python docs/make_feedback_screenshot.py

Uses the browser test's own code (tests/support/browser.py: Debian's chromium through
chromedriver) and writes docs/feedback-page.png.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY / "tests" / "support"))

from browser import screenshot_of_page  # noqa: E402

STUDENT = "dee_ignores_terminated"  # a failure, a pass, and learning plots


def main():
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, "-m", "grader", "grade",
                        str(REPOSITORY / "examples" / "submissions" / STUDENT), "--quiet",
                        "--salt", "screenshot", "--feedback", scratch], cwd=REPOSITORY,
                       check=True, capture_output=True)
        out = REPOSITORY / "docs" / "feedback-page.png"
        screenshot_of_page(Path(scratch) / f"{STUDENT}.html", out, size=(900, 1200))
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
