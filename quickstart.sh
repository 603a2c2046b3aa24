#!/usr/bin/env bash
# Set the course up in .venv and grade the bundled example class.
# Usage: bash quickstart.sh        (re-running it reuses .venv)
set -euo pipefail
cd "$(dirname "$0")"

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements-test.txt

mkdir -p reports
.venv/bin/python -m grader grade examples/submissions --workers 2 \
    --json reports/example-report.json --csv reports/example-gradebook.csv
echo
echo "Gradebook (reports/example-gradebook.csv):"
cat reports/example-gradebook.csv
echo
echo "Per-check feedback: reports/example-report.json. Lessons: .venv/bin/jupyter lab notebooks/"
