"""nbgrader's settings for this course's lessons (used when nbgrader runs in this folder).

The course's own grader (``python -m grader grade``) does not need nbgrader; this file
is for instructors who run the lessons through nbgrader's usual workflow. Make a course
directory with ``python -m grader nbgrader-course DIR``: its own ``nbgrader_config.py``
loads this one. See README.md, "Using nbgrader instead".
"""

import os

c = get_config()  # noqa: F821 (nbgrader provides get_config)

COURSE_REPOSITORY = os.path.dirname(os.path.abspath(__file__))

# Learning tests train agents for several seconds; nbgrader's default is 30 s per cell.
c.ExecutePreprocessor.timeout = 300
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# Kernels that nbgrader starts import course/, checks/ and the reference modules from
# the repository, wherever the course directory lives.
os.environ["PYTHONPATH"] = os.pathsep.join(
    path for path in (COURSE_REPOSITORY, os.environ.get("PYTHONPATH")) if path)
