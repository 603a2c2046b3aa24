"""The class's share of a busy machine: one cgroup that holds the grader, its Dask workers
and their sandboxes, with the CPU weight of ``--cpu-weight`` ordinary processes.

Grading is a chain of round trips (a check's call, the student's code, the reply), and
only one side of each runs at a time. On a machine where other work keeps every CPU busy,
Linux gives each session the weight of one process (its *autogroup*): the grader, one
session among 24 busy ones on 2 cores, got about a twenty-fifth of the machine, and lesson
01's learning check took 245 s of wall time for its 14 s of CPU. Inside a cgroup weighing
16 processes the same check took 14 s beside the same load. Grades do not depend on this
(budgets are CPU time, :mod:`grader.judge.budgets`); how long a class takes does.

The group exists while the grader's LocalCluster runs: the grader moves into it before its
workers start, so they and every sandbox they make are inside (a sandbox's own cgroup is
made inside its worker's, :mod:`grader.judge.sandbox_resources`, with the weight of one
ordinary process, so that no sandbox starves another). Only the cgroup v1 cpu controller
is used (this machine's kind, and CI's): under cgroup v2 a group that holds processes
cannot hand controllers to the sandboxes' groups below it, so there the grader keeps its
place and its sandboxes their own weights. Without a writable cpu controller the grader
runs as an ordinary process and says so.
"""

import contextlib
import os
import time

from grader.judge.sandbox_resources import (REMOVE_TIMEOUT, _inside, _mounts, _own_groups,
                                            _read, _write, best_mechanism, process_runs,
                                            remove_group)

CLASS_PREFIX = "course-grader-class"  # <prefix>-<grader pid>
DEFAULT_CPU_WEIGHT = 16  # ordinary processes the whole class weighs as, against other work
MAX_CPU_WEIGHT = 256  # cgroup v1's largest cpu.shares, 262144, is 256 ordinary processes
SHARES_PER_PROCESS = 1024  # cpu.shares of an ordinary process (nice 0)


def own_cpu_folder(mountinfo="/proc/self/mountinfo", proc_cgroup="/proc/self/cgroup"):
    """This process's folder in the cgroup v1 cpu hierarchy, or None."""
    group = _own_groups(proc_cgroup).get("cpu")
    if group is None:
        return None
    for point, root, kind, options in _mounts(mountinfo):
        if kind == "cgroup" and "cpu" in options:
            folder = _inside(point, root, group)
            return folder if folder is not None and os.path.isdir(folder) else None
    return None


@contextlib.contextmanager
def class_cpu_group(weight=DEFAULT_CPU_WEIGHT, parent=None):
    """While the block runs, this process (and whatever it starts) is in a cgroup of its
    own with the CPU weight of ``weight`` ordinary processes. Yields a line saying what
    holds that share, or None where no cgroup could be had."""
    parent = parent or own_cpu_folder()
    if parent is None:  # no cgroup v1 cpu controller here
        yield None
        return
    folder = os.path.join(parent, f"{CLASS_PREFIX}-{os.getpid()}")
    try:
        os.mkdir(folder)
        _write(folder, "cpu.shares", str(weight * SHARES_PER_PROCESS))
        _write(folder, "cgroup.procs", str(os.getpid()))  # every thread of the grader
    except OSError:  # a read-only tree, not root
        _remove_tree(folder)
        yield None
        return
    best_mechanism.cache_clear()  # sandboxes made here now go inside
    try:
        yield f"cgroup v1 cpu controller: the class weighs {weight} ordinary processes"
    finally:
        _leave(parent, folder)
        best_mechanism.cache_clear()


def _leave(parent, folder):
    with contextlib.suppress(OSError):
        _write(parent, "cgroup.procs", str(os.getpid()))
    if str(os.getpid()) not in _read(folder, "cgroup.procs").split():
        _remove_tree(folder)  # what is left in it is what the grader started: ended here


def _remove_tree(folder):
    """Remove a class's group and the sandbox groups inside it, deepest first."""
    deadline = time.monotonic() + REMOVE_TIMEOUT
    for inside, names, _ in os.walk(folder, topdown=False):
        for name in names:
            remove_group(os.path.join(inside, name), deadline)
    remove_group(folder, deadline)


def class_groups(parent=None):
    """``[(folder, pid of the grader that made it)]`` of the class groups beside this
    process's own cpu group."""
    parent = parent or own_cpu_folder()
    if parent is None:
        return []
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            maker = entry.name.rpartition("-")[2]
            if entry.is_dir() and entry.name.startswith(CLASS_PREFIX + "-") and maker.isdigit():
                found.append((entry.path, int(maker)))
    return found


def remove_stale_class_groups(parent=None):
    """Remove the class groups of graders that no longer run (one killed with SIGKILL
    leaves its group, and its sandboxes' groups inside it)."""
    for folder, maker in class_groups(parent):
        if not process_runs(maker):
            _remove_tree(folder)
