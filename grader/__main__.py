"""``python -m grader``: the instructor's command line."""

import sys

from grader.cli import main

sys.exit(main())
