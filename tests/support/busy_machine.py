"""A loaded machine for tests and benchmarks: busy processes, each in a session of its own.

``busy_processes(count)`` starts shell loops that never sleep (each ends by itself after
``lifetime`` seconds, so none can outlive a crashed test). ``Confinement`` is a cgroup of
the test's own that holds a test's load and whatever it grades beside it: a CPU quota
(so the rest of the machine goes on), a task limit and a memory limit (so a test that
goes wrong can never take the machine down). The grader's sandboxes made from inside it
are made inside it too: their cgroups are made beside the grader's own.
"""

import contextlib
import itertools
import os
import signal
import subprocess
import time

from grader.judge.sandbox_resources import join_argv, remove_group, v1_parents, v2_parent

BUSY_LOOP = ("sh", "-c", "while :; do :; done")
_numbers = itertools.count(1)


def busy_processes(count, enter=(), lifetime=1800):
    """``count`` busy processes (each its own session), started through ``enter``."""
    return [subprocess.Popen([*enter, "timeout", str(lifetime), *BUSY_LOOP],
                             start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(count)]


def stop(processes):
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    for process in processes:
        process.wait()


@contextlib.contextmanager
def machine_load(per_core, enter=(), cores=None, lifetime=1800):
    """``per_core`` busy processes for each of ``cores`` (default: every core) while the
    block runs; ``lifetime`` must outlast the block (they end by themselves after it)."""
    processes = busy_processes(per_core * (cores or os.cpu_count()), enter, lifetime)
    try:
        time.sleep(0.5)  # let them start
        yield processes
    finally:
        stop(processes)


def load_average():
    return os.getloadavg()[0]


class Confinement:
    """A cgroup for a test: at most ``cpus`` CPUs, ``max_tasks`` tasks, ``memory_mb``."""

    def __init__(self, cpus=1.0, max_tasks=4096, memory_mb=8192):
        self.name = f"course-test-confinement-{os.getpid()}-{next(_numbers)}"
        self.folders = []
        v2 = v2_parent()
        if v2 is not None:
            self._make_v2(v2, cpus, max_tasks, memory_mb)
        else:
            parents = v1_parents()
            if not parents:
                raise RuntimeError("no cgroup tree this test may write: it needs root on a "
                                   "machine with cgroup v1 or v2 controllers")
            self._make_v1(parents, cpus, max_tasks, memory_mb)

    def _folder(self, parent):
        folder = os.path.join(parent, self.name)
        if not os.path.isdir(folder):
            os.mkdir(folder)
            self.folders.append(folder)
        return folder

    def _make_v1(self, parents, cpus, max_tasks, memory_mb):
        period = 100_000
        cpu = self._folder(parents["cpu"])
        _write(cpu, "cpu.cfs_period_us", period)
        _write(cpu, "cpu.cfs_quota_us", int(cpus * period))
        _write(self._folder(parents["pids"]), "pids.max", max_tasks)
        _write(self._folder(parents["memory"]), "memory.limit_in_bytes", memory_mb * 2**20)
        self._folder(parents["cpuacct"])

    def _make_v2(self, parent, cpus, max_tasks, memory_mb):
        folder = self._folder(parent)
        _write(folder, "cpu.max", f"{int(cpus * 100_000)} 100000")
        _write(folder, "pids.max", max_tasks)
        _write(folder, "memory.max", memory_mb * 2**20)

    def enter_argv(self):
        """A command prefix that runs the rest of the command line inside."""
        return join_argv(self.folders)

    def close(self):
        for folder in reversed(self.folders):
            remove_group(folder, time.monotonic() + 10)
        self.folders = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _write(folder, name, value):
    with open(os.path.join(folder, name), "w") as handle:
        handle.write(str(value))

