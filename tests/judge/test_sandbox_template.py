"""Sandboxes forked from the grader's template: warm, reseeded, and gone with their grader.

What a sandbox can see and do is the same however it starts: ``tests/threats/
test_grader_sandbox.py`` looks around from a forked one and from one started afresh.
"""

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from grader.judge.sandbox import make_scratch, namespaces_available, remove_scratch
from grader.judge.sandbox_forks import SWITCH, ForkedSandbox, SandboxTemplate
from grader.judge.sandbox_template import PRELOADED
from grader.judge.student_process import StudentProcess
from grader.lessons import REPOSITORY, all_lessons

pytestmark = pytest.mark.skipif(not namespaces_available(),
                                reason="the template forks namespace sandboxes only")

WHAT_IT_HOLDS = '''
import os, random, sys
import numpy as np
preloaded = sorted(name for name in PRELOADED if name in sys.modules)
draws = (random.random(), float(np.random.random()))
environment = open("/proc/self/environ", "rb").read()
result = {"preloaded": preloaded, "draws": draws,
          "salt_anywhere": b"GRADER_SALT" in environment or "GRADER_SALT" in os.environ}
'''


def look(process):
    with process.budget(60):
        assert process.run_cell(f"PRELOADED = {PRELOADED!r}\n" + WHAT_IT_HOLDS)["status"] == "ok"
        return process.lookup(["result"])["result"]


def test_a_forked_sandbox_holds_the_public_packages_and_draws_its_own_numbers(monkeypatch):
    monkeypatch.setenv("GRADER_SALT", "must-not-leak")  # the grader's; never the template's
    seen = []
    for _ in range(2):
        scratch = make_scratch(all_lessons()["02_replay_buffer"])
        process = StudentProcess(scratch, memory_mb=3072, disk_mb=64)
        try:
            process.start()
            assert isinstance(process._popen, ForkedSandbox)
            seen.append(look(process))
        finally:
            process.stop()
            remove_scratch(scratch)
    for held in seen:
        assert held["preloaded"] == sorted(PRELOADED)  # imported before any cell asked
        assert not held["salt_anywhere"]
    # every generator reseeded after the fork: two sandboxes never share a stream
    assert seen[0]["draws"][0] != seen[1]["draws"][0]
    assert seen[0]["draws"][1] != seen[1]["draws"][1]


GRADER_THAT_DIES = '''
import sys, time
sys.path.insert(0, {repository!r})
from grader.judge.sandbox import make_scratch
from grader.judge.student_process import StudentProcess
from grader.lessons import all_lessons
process = StudentProcess(make_scratch(all_lessons()["02_replay_buffer"]), 3072, 64)
process.start()
with process.budget(60):
    process.run_cell("import threading, time\\nthreading.Thread(target=time.sleep, "
                     "args=(600,)).start()")
print(process._popen.pid, flush=True)
time.sleep(600)
'''


def test_the_template_and_its_sandboxes_end_when_the_grader_is_killed():
    grader = subprocess.Popen([sys.executable, "-c", textwrap.dedent(
        GRADER_THAT_DIES.format(repository=str(REPOSITORY)))], stdout=subprocess.PIPE,
        text=True)
    try:
        sandbox = int(grader.stdout.readline())
        template = psutil.Process(sandbox).ppid()
        members = [template, sandbox] + [child.pid for child in
                                         psutil.Process(sandbox).children(recursive=True)]
        assert len(members) >= 4  # template, first process, init, server
    finally:
        grader.send_signal(signal.SIGKILL)
        grader.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(psutil.pid_exists(pid) and psutil.Process(
            pid).status() != psutil.STATUS_ZOMBIE for pid in members):
        time.sleep(0.1)
    left = [pid for pid in members if psutil.pid_exists(pid)
            and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert left == [], "the template or a sandbox outlived its grader"


def test_a_forked_sandboxs_cpu_reaches_the_graders_children_once_the_template_ends():
    # a template of this test's own, so that its end is this test's to wait for
    template, burned = SandboxTemplate(), 0.0
    import grader.judge.sandbox_forks as forks
    scratch = make_scratch(all_lessons()["02_replay_buffer"])
    process = StudentProcess(scratch, memory_mb=3072, disk_mb=64)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    original, forks._TEMPLATE = forks._TEMPLATE, template
    try:
        process.start()
        with process.budget(60):
            assert process.run_cell("import time\nend = time.process_time() + 1.0\n"
                                    "while time.process_time() < end:\n    pass\n")[
                "status"] == "ok"
        burned = process.resources.cpu_seconds()
    finally:
        process.stop()
        remove_scratch(scratch)
        forks._TEMPLATE = original
        template.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    counted = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert burned >= 1.0
    assert counted >= burned - 0.1, (counted, burned)


def test_a_template_that_cannot_start_says_why_and_sandboxes_start_afresh(monkeypatch):
    import grader.judge.sandbox_forks as forks
    broken = SandboxTemplate()
    monkeypatch.setattr(forks, "TEMPLATE_SCRIPT", REPOSITORY / "no-such-template.py")
    monkeypatch.setattr(forks, "_TEMPLATE", broken)
    scratch = make_scratch(all_lessons()["02_replay_buffer"])
    process = StudentProcess(scratch, memory_mb=3072, disk_mb=64)
    try:
        process.start()
        assert isinstance(process._popen, subprocess.Popen)  # the launcher's way
        with process.budget(30):
            assert process.run_cell("x = 1")["status"] == "ok"
    finally:
        process.stop()
        remove_scratch(scratch)
    with pytest.raises(forks.TemplateUnavailable, match="did not start.*no-such-template"):
        broken.fork({}, 0, 0)


GRADER_THAT_IGNORES_CTRL_C = '''
import signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a Dask worker does
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT, signal.SIGTERM])
sys.path.insert(0, {repository!r})
from grader.judge.sandbox import make_scratch
from grader.judge.student_process import StudentInterrupted, StudentProcess
from grader.lessons import all_lessons
process = StudentProcess(make_scratch(all_lessons()["02_replay_buffer"]), 3072, 64)
process.start()
try:
    with process.budget(1.0):
        process.run_cell("while True:\\n    pass")
    print("not interrupted")
except StudentInterrupted:
    with process.budget(10):
        print("interrupted" if process.run_cell("x = 1")["status"] == "ok" else "lost")
process.stop()
'''


@pytest.mark.parametrize("forked", ["1", "0"])
def test_a_sandbox_is_interrupted_whatever_signals_its_grader_ignores(forked):
    # the grader interrupts a call past its budget with SIGINT: a grader that ignores or
    # blocks it (a Dask worker) must not hand that on, through its template or afresh
    script = textwrap.dedent(GRADER_THAT_IGNORES_CTRL_C.format(repository=str(REPOSITORY)))
    told = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, SWITCH: forked})
    assert told.stdout.strip() == "interrupted", told.stderr[-2000:]
