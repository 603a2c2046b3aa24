#!/usr/bin/env bash
# Make .venv (if missing) with $PYTHON (default python3) and install a requirements file
# into it, showing pip's progress.
# Usage: bash scripts/make_venv.sh REQUIREMENTS_FILE "what is being installed"
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "Making .venv with $("$python" --version) ..."
    "$python" -m venv .venv
fi
echo "Installing $2 into .venv (a few minutes the first time, seconds after):"
.venv/bin/python -m pip install --upgrade pip --progress-bar on
# pip byte-compiles what it installs on one core; compileall does the same on every core
.venv/bin/python -m pip install -r "$1" --progress-bar on --no-compile
.venv/bin/python -m compileall -q -j 0 .venv/lib/python3*/site-packages >/dev/null
