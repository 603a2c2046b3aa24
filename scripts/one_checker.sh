#!/usr/bin/env bash
# One checker for students: nbgrader, installed for the grader, would add its instructor
# menus and a Validate button to JupyterLab, whose raw tracebacks are not the lessons'
# self-check. Turn its lab and server extensions off in the environment of the Python given.
# Usage: bash scripts/one_checker.sh [PYTHON]     (default .venv/bin/python)
set -euo pipefail
python=${1:-.venv/bin/python}
"$python" -m jupyterlab.labextensions disable --level=sys_prefix @jupyter/nbgrader >/dev/null
"$python" -m jupyter_server.extension.serverextension disable --sys-prefix \
    nbgrader.server_extensions.{formgrader,validate_assignment,assignment_list,course_list} \
    >/dev/null 2>&1
