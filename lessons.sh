#!/usr/bin/env bash
# For students: set the course up in .venv and open the lessons in JupyterLab.
# Usage: bash lessons.sh             (re-running it reuses .venv and only opens the lessons)
#        bash lessons.sh --no-open   (set up only)
set -euo pipefail
cd "$(dirname "$0")"

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "Making .venv with $("$python" --version) ..."
    "$python" -m venv .venv
fi
echo "Installing what the lessons need into .venv (2-3 minutes the first time, seconds after):"
.venv/bin/python -m pip install --upgrade pip --progress-bar on
.venv/bin/python -m pip install -r requirements.txt --progress-bar on
echo
echo "Ready. Check a notebook as the grader will: .venv/bin/python -m grader check notebooks/01_qlearning.ipynb"
if [ "${1:-}" != "--no-open" ]; then
    echo "Opening the lessons in JupyterLab (stop it with Ctrl+C) ..."
    exec .venv/bin/jupyter lab notebooks/
fi
