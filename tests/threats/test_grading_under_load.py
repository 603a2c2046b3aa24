"""Correct answers keep full marks on a loaded machine: a budget is CPU time, not wall time.

The grader runs inside a cgroup of the test's own, confined to one CPU, beside busy
processes (each in a session of its own) on that CPU: the grading waits for the CPU many
times longer than it uses it. Its checks get a budget only a few times the CPU time they
need on a quiet machine, so a wall-clock limit of that size would fail them; a CPU-time
budget does not, and the report equals the quiet one, check by check.
(``benchmarks/grading_under_load.py`` does the same at full size: seven lessons, the
example class, twelve busy processes per core over the whole machine.)
"""

import json
import subprocess
import sys

import pytest

from grader.judge.sandbox import namespaces_available
from grader.lessons import REPOSITORY
from support.busy_machine import Confinement, busy_processes, stop

pytestmark = pytest.mark.xdist_group("loaded-machine")

LESSON = "01_qlearning"
# its quick checks: the agent's, and the loop's (its scripted agent is mirrored, so its
# 10,000 steps make no round trip each, and it spends the most CPU of them: about 0.6 s,
# which the load stretches past its budget in wall time)
CHECKS = ("test_value_and_best_action,test_best_action_ties,test_epsilon_greedy,test_update,"
          "test_play_and_train")
NOTEBOOK = REPOSITORY / "examples" / "submissions" / "ada_complete" / f"{LESSON}.ipynb"
BUSY_PER_CPU = 6  # the grading gets about a seventh of the CPU it is confined to
HEADROOM = 2.5  # each check's budget: this many times the most any check used quietly

GRADE = '''
import json, sys
from grader.judge.grade_notebook import grade_notebook
from grader.outputs.report import graded_content
notebook, budget, only = sys.argv[1], float(sys.argv[2]), set(sys.argv[3].split(","))
print("imported", flush=True)  # the test may load the machine now: grading starts
sys.stdin.readline()
result = grade_notebook(notebook, "loaded-machine", only=only, check_time_limit=budget)
checks = [check.to_data() for check in result.checks]
print(json.dumps({"graded": graded_content(checks + [result.notes]),
                  "usage": [check["usage"] for check in checks]}))
'''


def grade(enter, budget, load=lambda: []):
    """The checks graded inside the confinement; ``load()`` starts what runs beside them
    once the grader has been imported (importing it is not what this test measures)."""
    grading = subprocess.Popen([*enter, sys.executable, "-c", GRADE, str(NOTEBOOK),
                                str(budget), CHECKS], cwd=REPOSITORY, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    busy = []
    try:
        assert grading.stdout.readline().strip() == "imported", grading.stderr.read()[-3000:]
        busy = load()
        stdout, stderr = grading.communicate("go\n", timeout=900)
    finally:
        stop(busy)
        if grading.poll() is None:
            grading.kill()
    assert grading.returncode == 0, stderr[-3000:]
    return json.loads(stdout.splitlines()[-1])


def test_a_loaded_machine_changes_how_long_grading_takes_not_the_grade():
    assert namespaces_available()
    with Confinement(cpus=1.0) as confinement:
        enter = confinement.enter_argv()
        quiet = grade(enter, budget=60.0)
        most = max(usage["cpu_seconds"] for usage in quiet["usage"])
        budget = round(max(1.0, HEADROOM * most), 2)
        loaded = grade(enter, budget, load=lambda: busy_processes(BUSY_PER_CPU, enter))
    checks = [check for check in loaded["graded"] if isinstance(check, dict)]
    assert all(check["status"] == "passed" for check in checks), checks
    assert loaded["graded"] == quiet["graded"]
    slowest = max(usage["wall_seconds"] for usage in loaded["usage"])
    assert slowest > budget, (
        f"the load did not slow any check past its {budget} s budget in wall time "
        f"(slowest {slowest} s): this test would not tell CPU from wall time")
    assert all(usage["cpu_seconds"] <= budget for usage in loaded["usage"])
