"""The command line answers --help and argument mistakes before it loads the heavy libraries.

Timings are for benchmarks/cli_startup.py; this test pins what makes them: the libraries
that cost seconds of CPU at import (nbformat through jsonschema, nbgrader, pandas, numpy,
dask) are not imported by a command that ends with its help or a one-line error.
"""

import subprocess
import sys

import pytest

from submission_factory import REPOSITORY

HEAVY = ("nbformat", "nbgrader", "jsonschema", "pandas", "numpy", "dask", "scipy", "gymnasium")

# runs the command line in-process, then lists the heavy libraries it imported
PROBE = """
import sys
from grader.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
heavy = sorted(name for name in {heavy!r} if name in sys.modules)
print("EXIT", code, "HEAVY", ",".join(heavy), file=sys.stderr)
"""


def run_probe(*arguments, cwd):
    completed = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *arguments],
                               cwd=cwd, capture_output=True, text=True, timeout=900,
                               env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/bin:/bin"})
    last = completed.stderr.strip().splitlines()[-1]
    assert last.startswith("EXIT"), completed.stderr
    _, code, _, *heavy = last.split(" ")
    return code, [name for name in heavy[0].split(",") if name] if heavy else [], completed


@pytest.mark.parametrize("arguments, expected", [
    (["--help"], "Release and grade"),
    (["grade", "--help"], "--memory-mb"),
    (["grade", "no-such-folder"], "no such file or folder: no-such-folder"),
    (["grade", "x", "--workers", "0"], "at least 1 worker is needed"),
    (["grade", "x", "--memory-mb", "10"], "too little for a sandbox"),
    (["grade", "x", "--memory-mb", "nine"], "invalid int value"),
    (["check", "no-such.ipynb"], "no such notebook"),
    (["export", "no-such.json", "--csv", "out.csv"], "No such file"),
    (["publish", "out", "--hub-url", "ftp://hub.example.edu"], "not an http(s) address"),
    (["publish", "out", "--branch", "fall..2025"], "cannot be a git branch"),
    (["similarity", "no-such-folder", "--html", "p.html"], "no such file or folder"),
    (["similarity", "x", "--html", "p.html", "--top", "0"], "--top 0: show at least 1 pair"),
])
def test_help_and_argument_errors_load_no_heavy_library(tmp_path, arguments, expected):
    code, heavy, completed = run_probe(*arguments, cwd=tmp_path)
    assert expected in completed.stdout + completed.stderr
    assert "Traceback" not in completed.stderr
    assert code in ("0", "2") and heavy == [], f"{arguments} imported {heavy}"


def test_the_probe_sees_a_command_that_does_load_them(tmp_path):
    """The probe can fail: a command that reads notebooks does import nbformat."""
    code, heavy, completed = run_probe("grade", str(tmp_path), cwd=tmp_path)
    assert "no notebooks found" in completed.stderr and "nbformat" in heavy
