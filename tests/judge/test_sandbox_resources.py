"""Budgets per sandbox, not per process: memory, tasks, CPU time, IPC and host name.

Each test runs code in a real sandbox twice: held by a cgroup of its own (this machine and
CI mount cgroup v1, writable as root) and held by its trusted init alone (what a machine
without cgroups gets). The cgroup trees' discovery and the v2 files are tested on fake
trees, since this machine has no v2 controllers to give.
"""

import os
import time
from pathlib import Path

import psutil
import pytest

from grader.judge import budgets, sandbox_resources
from grader.judge.budgets import Budget, BudgetMeter, BudgetSpent
from grader.judge.sandbox import make_scratch, namespaces_available, remove_scratch
from grader.judge.sandbox_resources import (CgroupV2Resources, GROUP_PREFIX, best_mechanism,
                                            v1_parents, v2_parent)
from grader.judge.student_process import StudentProcess, StudentProcessLost
from grader.lessons import all_lessons
from support.host import host_segments

pytestmark = pytest.mark.xdist_group("sandbox-resources")

MECHANISMS = ("cgroup", "init")


@pytest.fixture(params=MECHANISMS)
def mechanism(request, monkeypatch):
    assert namespaces_available(), "these tests need the namespace sandbox"
    if request.param == "cgroup":
        assert os.geteuid() != 0 or best_mechanism()[0] is not None, \
            "running as root on Linux, the grader should be able to make cgroups here"
        if best_mechanism()[0] is None:
            pytest.fail("no cgroup mechanism on this machine")
    else:
        monkeypatch.setattr(sandbox_resources, "best_mechanism", lambda: (None, None))
    return request.param


def started(memory_mb=3072, max_tasks=sandbox_resources.MAX_TASKS):
    scratch = make_scratch(all_lessons()["02_replay_buffer"])
    process = StudentProcess(scratch, memory_mb=memory_mb, disk_mb=64, max_tasks=max_tasks)
    process.start()
    return process, scratch


def run(process, source, seconds=60):
    with process.budget(seconds):
        outcome = process.run_cell(source)
        assert outcome["status"] == "ok", outcome
    with process.budget(10):
        return process.lookup(["result"]).get("result")


# --- memory: the sandbox's processes together ----------------------------------------------

MEMORY_HOG = '''
import os, time
children, ready = [], []
for _ in range(4):  # four processes of 150 MB: each under any per-process cap
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        hoard = bytearray(150 * 2**20)
        for at in range(0, len(hoard), 4096):
            hoard[at] = 1  # resident, not just reserved
        os.write(write_end, b"k")
        time.sleep(600)
        os._exit(0)
    os.close(write_end)
    children.append(pid)
    ready.append(read_end)
for read_end in ready:
    try:
        os.read(read_end, 1)  # empty when the child was killed first
    except OSError:
        pass
time.sleep(0.5)
result = sum(os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in children)  # still holding
'''


def test_memory_is_capped_for_the_sandbox_not_each_process(mechanism):
    process, scratch = started(memory_mb=400)
    try:
        try:
            held = run(process, MEMORY_HOG)
        except StudentProcessLost as lost:  # the init ends the whole sandbox
            assert lost.reason == "died" and "memory" in (lost.why or ""), lost
            held = None
        assert held is None or held < 3, f"{held} processes of 150 MB live under 400 MB"
    finally:
        process.stop()
        remove_scratch(scratch)


MEMFD_HOARD = '''
import os
handle = os.memfd_create("hoard")  # memory that no process maps: no process's RSS
chunk, written = b"x" * 2**20, 0
try:
    for _ in range(600):
        written += os.write(handle, chunk)
except OSError:
    pass
import time
time.sleep(0.5)  # long enough for an init that counts to see it
result = written // 2**20  # MB held
'''


def test_memory_held_in_an_unmapped_memfd_counts(mechanism):
    process, scratch = started(memory_mb=400)
    try:
        try:
            held = run(process, MEMFD_HOARD)
        except StudentProcessLost as lost:  # the init (or the cgroup's OOM killer) ended it
            assert lost.reason == "died", lost
            held = None
        assert held is None or held < 400, f"{held} MB held in a memfd under 400 MB"
    finally:
        process.stop()
        remove_scratch(scratch)


# --- tasks: threads count ----------------------------------------------------------------------

THREAD_SWARM = '''
import threading, time
stop = threading.Event()
started = 0
try:
    for _ in range(2000):
        threading.Thread(target=stop.wait, daemon=True).start()
        started += 1
except RuntimeError:
    pass
time.sleep(0.3)  # long enough for an init that counts to see them
result = started
stop.set()
'''


def test_threads_count_against_the_sandboxs_task_budget(mechanism):
    process, scratch = started(max_tasks=64)
    try:
        try:
            started_threads = run(process, THREAD_SWARM)
        except StudentProcessLost as lost:
            assert lost.reason == "died" and "threads" in (lost.why or ""), lost
            started_threads = None
        assert started_threads is None or started_threads < 64
    finally:
        process.stop()
        remove_scratch(scratch)


# --- CPU time: every process of the sandbox, whatever its session -------------------------------

def tree_cpu(process):
    """CPU seconds of the sandbox's processes as psutil sees them from the host."""
    return sum(sum(child.cpu_times()[:2]) for child in
               psutil.Process(process._popen.pid).children(recursive=True))


CPU_HOGS = '''
import os
for _ in range(4):
    if os.fork() == 0:
        os.setsid()  # a session of its own: still the sandbox's
        while True:
            pass
result = "started"
'''


def test_cpu_time_counts_every_process_of_the_sandbox(mechanism):
    process, scratch = started()
    try:
        before, tree_before = process.cpu_seconds(), tree_cpu(process)
        assert run(process, CPU_HOGS) == "started"
        # the hogs run while the server waits, using no CPU itself; waited for by the CPU
        # they used, not by a wall time a loaded machine would not honour
        deadline = time.monotonic() + 120
        while tree_cpu(process) - tree_before < 1.0 and time.monotonic() < deadline:
            time.sleep(0.2)
        used, tree = process.cpu_seconds() - before, tree_cpu(process) - tree_before
        assert tree >= 1.0, "the hogs did not run"
        assert used >= 0.9 * tree, f"{used:.2f} s counted; the sandbox's processes used {tree:.2f} s"
        with pytest.raises(StudentProcessLost) as lost:
            with process.budget(2.0):  # the hogs spend the budget, not this cell
                process.run_cell("import time\ntime.sleep(60)")
        assert lost.value.spent.kind == "cpu"
    finally:
        process.stop()
        remove_scratch(scratch)


def test_processes_a_cell_leaves_running_are_ended_after_it(mechanism):
    process, scratch = started()
    try:
        assert run(process, CPU_HOGS) == "started"
        assert process.end_strays() == 4
        time.sleep(0.3)
        before = process.cpu_seconds()
        time.sleep(1.0)
        assert process.cpu_seconds() - before < 0.2, "a hog survived"
        assert run(process, "result = 6 * 7") == 42  # the server itself goes on
    finally:
        process.stop()
        remove_scratch(scratch)


def test_a_sleep_is_stopped_by_the_idle_backstop_in_its_own_words(mechanism, monkeypatch):
    monkeypatch.setattr(budgets, "IDLE_WINDOW", 2.0)
    # no run-queue waits: on a loaded machine the grading thread's own waits would restart
    # a 2-second window again and again (how waits count is tested on its own below)
    monkeypatch.setattr(StudentProcess, "run_queue_waits", lambda self: 0.0)
    process, scratch = started()
    try:
        began = time.monotonic()
        with pytest.raises(StudentProcessLost) as lost:
            with process.budget(30.0):
                process.run_cell("import time\ntime.sleep(600)")
        # the idle backstop, well before the wall backstop's first chance
        assert time.monotonic() - began < budgets.MIN_WALL_SECONDS
        assert lost.value.spent.kind == "idle"
        assert "without using the CPU" in lost.value.spent.words()
        assert "infinite loop" not in lost.value.spent.words()
    finally:
        process.stop()
        remove_scratch(scratch)


# --- nothing shared between sandboxes, nothing left behind --------------------------------------

SEGMENT_KEY = 0x5EED
SHARED_MEMORY = f'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
KEY, SIZE, IPC_CREAT = {SEGMENT_KEY}, 4096, 0o1000
def segment(create):
    return libc.shmget(KEY, SIZE, (IPC_CREAT if create else 0) | 0o666)
'''


def test_ipc_and_host_name_are_the_sandboxs_own(mechanism):
    writer, scratch = started()
    try:
        made = run(writer, SHARED_MEMORY + '''
shmid = segment(create=True)
address = libc.shmat(shmid, None, 0)
ctypes.memmove(address, b"reference module", 16)
import socket
result = [shmid, socket.gethostname()]
''')
        assert made[0] >= 0, "the writer could not make a segment at all"
        assert made[1] == "sandbox"
        assert host_segments(SEGMENT_KEY) == [], "the sandbox's segment is visible on the host"
        reader, other = started()
        try:
            assert run(reader, SHARED_MEMORY + "result = segment(create=False)") == -1
        finally:
            reader.stop()
            remove_scratch(other)
    finally:
        writer.stop()
        remove_scratch(scratch)
    assert host_segments(SEGMENT_KEY) == []


def test_no_cgroup_outlives_its_sandbox(mechanism):
    process, scratch = started()
    folders = list(getattr(process.resources, "folders", []))
    assert (mechanism == "cgroup") == bool(folders)
    process.stop()
    remove_scratch(scratch)
    assert not any(os.path.exists(folder) for folder in folders)


# --- the report says what held each budget ------------------------------------------------------

def test_reports_name_the_mechanism_that_held_each_budget(mechanism):
    process, scratch = started()
    try:
        held = process.budgets_held
    finally:
        process.stop()
        remove_scratch(scratch)
    assert set(held) == {"memory", "tasks", "cpu_time", "cpu_share"}
    if mechanism == "cgroup":
        assert all("cgroup" in held[budget] for budget in ("memory", "tasks", "cpu_time"))
    else:
        assert "init" in held["memory"] and "init" in held["tasks"]
        assert "/proc" in held["cpu_time"]


# --- the budget meter, on a clock of the test's own -------------------------------------------------

class FakeClock:
    def __init__(self):
        self.cpu = 0.0

    def __call__(self):
        return self.cpu


def test_the_meter_counts_cpu_not_wall_time(monkeypatch):
    wall = [100.0]
    monkeypatch.setattr(budgets.time, "monotonic", lambda: wall[0])
    clock = FakeClock()
    meter = BudgetMeter(Budget(10.0), clock)
    for _ in range(50):  # 50 s of wall time on a loaded machine, 9 s of CPU
        wall[0] += 1.0
        clock.cpu += 0.18
        meter.check(force=True)
    clock.cpu += 1.5
    with pytest.raises(BudgetSpent) as spent:
        meter.check(force=True)
    assert spent.value.kind == "cpu" and "10 s of CPU time" in spent.value.words()


def test_the_wall_backstop_is_far_past_ten_times_contention(monkeypatch):
    wall = [0.0]
    monkeypatch.setattr(budgets.time, "monotonic", lambda: wall[0])
    clock = FakeClock()
    meter = BudgetMeter(Budget(10.0), clock)
    while clock.cpu < 9.9:  # a CPU-bound check at ten times contention: 10% of a CPU
        wall[0] += 1.0
        clock.cpu += 0.1
        meter.check(force=True)
    assert wall[0] < Budget(10.0).wall_limit
    wall[0], clock.cpu = 0.0, 0.0
    meter = BudgetMeter(Budget(10.0), clock)
    while True:  # code that trickles CPU just above the idle share ends at the backstop
        wall[0] += 1.0
        clock.cpu += 0.011
        try:
            meter.check(force=True)
        except BudgetSpent as spent:
            assert spent.kind == "wall" and wall[0] >= Budget(10.0).wall_limit
            break


# --- finding the cgroup trees --------------------------------------------------------------------

def fake_tree(tmp_path, mounts, own):
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text("".join(
        f"{30 + n} 23 0:{40 + n} {root} {point} rw,relatime - {kind} {kind} rw,{options}\n"
        for n, (point, root, kind, options) in enumerate(mounts)))
    proc_cgroup = tmp_path / "cgroup"
    proc_cgroup.write_text("".join(f"{n}:{controllers}:{path}\n"
                                   for n, (controllers, path) in enumerate(own)))
    return str(mountinfo), str(proc_cgroup)


def test_v1_trees_are_found_beside_the_graders_own_groups(tmp_path):
    top = tmp_path / "fs"
    for folder in ("cpu,cpuacct/grading", "memory/jobs/7", "pids"):
        (top / folder).mkdir(parents=True)
    files = fake_tree(tmp_path, [(str(top / "cpu,cpuacct"), "/", "cgroup", "cpu,cpuacct"),
                                 (str(top / "memory"), "/", "cgroup", "memory"),
                                 (str(top / "pids"), "/", "cgroup", "pids")],
                      [("cpu,cpuacct", "/grading"), ("memory", "/jobs/7"), ("pids", "/")])
    assert v1_parents(*files) == {"cpu": str(top / "cpu,cpuacct/grading"),
                                  "cpuacct": str(top / "cpu,cpuacct/grading"),
                                  "memory": str(top / "memory/jobs/7"), "pids": str(top / "pids")}
    partial = fake_tree(tmp_path, [(str(top / "memory"), "/", "cgroup", "memory")],
                        [("memory", "/jobs/7")])
    assert v1_parents(*partial) == {}  # without pids and cpu, no v1 sandbox


def test_v2_needs_its_controllers_and_follows_a_container_mount(tmp_path):
    top = tmp_path / "unified"
    own = top / "user.slice" / "grader.scope"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    # a container sees its own part of the tree at the mount point, mounted from /ns
    files = fake_tree(tmp_path, [(str(top), "/ns", "cgroup2", "nsdelegate")],
                      [("", "/ns/user.slice/grader.scope")])
    assert v2_parent(*files) == str(own)
    (own / "cgroup.controllers").write_text("cpu io\n")
    assert v2_parent(*files) is None


def test_a_v2_sandbox_writes_its_limits_and_reads_its_usage(tmp_path):
    parent = tmp_path / "grader.scope"
    parent.mkdir()
    (parent / "cgroup.subtree_control").write_text("")
    resources = CgroupV2Resources(512, 64, str(parent))
    folder = Path(resources.folder)
    assert folder.name.startswith(GROUP_PREFIX)
    assert (parent / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (folder / "memory.max").read_text() == str(512 * 2**20)
    assert (folder / "pids.max").read_text() == "64"
    (folder / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\n")
    assert resources.cpu_seconds() == 2.5
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert "512 MB" in resources.exceeded()
    assert resources.enter_argv()[:2] == ["/bin/sh", "-c"]
    assert resources.enter_argv()[-2:] == [str(folder), "--"]


def test_waiting_for_a_cpu_is_the_machines_load_not_idleness(monkeypatch):
    """A check that makes a round trip per step, at twelve busy processes per core: its
    processes get half a percent of a CPU and spend most of the wall time on run queues.
    Neither backstop ends it; its CPU budget still does."""
    wall, waited = [0.0], [0.0]
    monkeypatch.setattr(budgets.time, "monotonic", lambda: wall[0])
    clock = FakeClock()
    budget = Budget(10.0)
    meter = BudgetMeter(budget, clock, lambda: waited[0])
    for _ in range(int(3 * budget.wall_limit)):  # three times the wall backstop
        wall[0] += 1.0
        clock.cpu += 0.005
        waited[0] += 0.9
        meter.check(force=True)
    clock.cpu = 10.5
    with pytest.raises(BudgetSpent) as spent:
        meter.check(force=True)
    assert spent.value.kind == "cpu"


def test_a_sleep_is_idle_whatever_the_waits_were_before_it(monkeypatch):
    wall, waited = [0.0], [0.0]
    monkeypatch.setattr(budgets.time, "monotonic", lambda: wall[0])
    clock = FakeClock()
    meter = BudgetMeter(Budget(10.0), clock, lambda: waited[0])
    for _ in range(100):  # loaded work first: CPU and waits
        wall[0] += 1.0
        clock.cpu += 0.05
        waited[0] += 0.9
        meter.check(force=True)
    with pytest.raises(BudgetSpent) as spent:  # then a sleep: neither CPU nor waits
        for _ in range(int(3 * budgets.IDLE_WINDOW) + 2):
            wall[0] += 1.0
            meter.check(force=True)
    assert spent.value.kind == "idle"
    assert wall[0] <= 100 + 2 * budgets.IDLE_WINDOW + 1  # within two windows of the sleep
