#!/usr/bin/env bash
# For students: set the course up in .venv and open the lessons in JupyterLab.
# Usage: bash lessons.sh             (re-running it reuses .venv and only opens the lessons)
#        bash lessons.sh --no-open   (set up only)
set -euo pipefail
cd "$(dirname "$0")"

bash scripts/make_venv.sh requirements.txt "what the lessons need"
bash scripts/one_checker.sh  # the self-check cell, not nbgrader's Validate button
echo
echo "Ready. Check a notebook as the grader will: .venv/bin/python -m grader check notebooks/01_qlearning.ipynb"
if [ "${1:-}" != "--no-open" ]; then
    echo "Opening the lessons in JupyterLab (stop it with Ctrl+C) ..."
    exec .venv/bin/jupyter lab notebooks/
fi
