#!/usr/bin/env bash
# Set the course up in .venv and grade the bundled example class.
# Usage: bash quickstart.sh        (re-running it reuses .venv)
set -euo pipefail
cd "$(dirname "$0")"

bash scripts/make_venv.sh requirements-test.txt "the requirements of the course and of its tests"

mkdir -p reports
echo "Grading the example class (eight students, two workers) ..."
.venv/bin/python -m grader grade examples/submissions --workers 2 \
    --json reports/example-report.json --csv reports/example-gradebook.csv \
    --feedback reports/feedback
.venv/bin/python -m grader export reports/example-report.json --format canvas \
    --roster examples/roster.csv --csv reports/example-canvas.csv
echo
echo "Gradebook (reports/example-gradebook.csv):"
cat reports/example-gradebook.csv
echo
echo "Per-check feedback: reports/example-report.json; one page per student:"
echo "reports/feedback/*.html; Canvas import: reports/example-canvas.csv."
echo "Lessons: .venv/bin/jupyter lab notebooks/"
