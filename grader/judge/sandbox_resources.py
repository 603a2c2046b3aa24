"""What one sandbox may hold, and what it has used: memory, tasks, CPU share and CPU time.

Limits are per sandbox, never per process: a submission that starts many processes or
threads gets no more than one that does not. Each sandbox gets, where the machine allows
it, a cgroup of its own, made beside the grader's own cgroup and removed with the sandbox:

- **cgroup v2** (one unified tree, e.g. a delegated ``systemd-run --scope`` or a container
  whose tree the grader may write): ``memory.max`` with ``memory.swap.max`` 0 (tmpfs and
  shared memory are charged too), ``pids.max`` (threads are tasks), ``cpu.weight``, CPU
  time from ``cpu.stat``;
- **cgroup v1** (the memory, pids, cpu and cpuacct controllers, each mounted on its own or
  together): ``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes``, ``pids.max``,
  ``cpu.shares``, CPU time from ``cpuacct.usage``;
- **no cgroup** (no root, a read-only tree, macOS): the sandbox's trusted init enforces the
  memory and task budgets itself (``sandbox_init.py``: threads counted from
  ``/proc/*/status``, resident memory and System V shared memory summed over the
  sandbox), and CPU time is summed over the sandbox's process tree from ``/proc``.

Every report names the mechanism that held each budget (:meth:`SandboxResources.held_by`).
Without namespaces there is no init either, and nothing but each process's own address
space limit holds memory where no cgroup does; reports say that too.
A process joins its cgroup before it runs anything (:meth:`SandboxResources.enter_argv`
prefixes the sandbox's command), so whatever it starts is inside too.
"""

import itertools
import os
import shutil
import signal
import sys
import time
from functools import lru_cache
from pathlib import Path

MAX_TASKS = 128  # processes and threads per sandbox (a graded notebook runs about 6)
DEFAULT_MEMORY_MB = 3072  # per sandbox, every process and file in /tmp together
DEFAULT_DISK_MB = 256  # the sandbox's writable space
# The least --memory-mb the grader accepts. The course's own answers to every lesson,
# learning checks included, graded with 500 MB here; with 400 MB lesson 05's learning
# check ran out and lesson 06 could not import scipy ("failed to map segment"), and lower
# still a sandbox fails in ways that say little (numpy's import, a course cell's
# MemoryError). Twice what was measured leaves room for other machines' libraries.
MIN_MEMORY_MB = 1024
MIN_DISK_MB = 1  # a tmpfs of size 0 would have no limit at all
MAX_BUDGET_MB = 2**20  # 1 TiB: larger values are typing slips (and overflow byte counts)
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
V2_CONTROLLERS = ("memory", "pids", "cpu")
GROUP_PREFIX = "course-grader-sandbox"  # <prefix>-<grader pid>-<number>: whose, and which
CPU_SHARES_V1 = 1024  # every sandbox the same share as any other task at the grader's level
CPU_WEIGHT_V2 = 100
REMOVE_TIMEOUT = 5.0  # seconds to wait for a cgroup's last tasks to be gone
USER_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_numbers = itertools.count(1)


class ResourceSetupError(RuntimeError):
    """A cgroup could not be made or configured."""


# --- where the cgroup trees are -----------------------------------------------------------

def _mounts(mountinfo="/proc/self/mountinfo"):
    """``[(mount point, root inside the hierarchy, fs type, super options)]`` of cgroup
    mounts."""
    found = []
    try:
        lines = Path(mountinfo).read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[4], fields[3], tail[0], set(tail[2].split(","))))
    return found


def _own_groups(proc_cgroup="/proc/self/cgroup"):
    """``{controller or "": path}`` of this process's cgroups ("" is the v2 tree)."""
    groups = {}
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        return groups
    for line in lines:
        number, controllers, path = line.split(":", 2)
        for controller in (controllers.split(",") if controllers else [""]):
            groups[controller] = path
    return groups


def _inside(mount_point, mount_root, group_path):
    """The folder of ``group_path`` (as /proc/self/cgroup names it) under a mount of the
    hierarchy that starts at ``mount_root``, or None when the mount does not show it."""
    relative = os.path.relpath(group_path, mount_root)
    if relative.startswith(".."):
        return None
    return os.path.normpath(os.path.join(mount_point, relative))


def v1_parents(mountinfo="/proc/self/mountinfo", proc_cgroup="/proc/self/cgroup"):
    """``{controller: folder}``: the grader's own cgroup in each v1 controller, or {}."""
    own = _own_groups(proc_cgroup)
    parents = {}
    for point, root, kind, options in _mounts(mountinfo):
        if kind != "cgroup":
            continue
        for controller in V1_CONTROLLERS:
            if controller in options and controller in own and controller not in parents:
                folder = _inside(point, root, own[controller])
                if folder is not None and os.path.isdir(folder):
                    parents[controller] = folder
    return parents if set(parents) == set(V1_CONTROLLERS) else {}


def v2_parent(mountinfo="/proc/self/mountinfo", proc_cgroup="/proc/self/cgroup"):
    """The grader's own folder in the unified tree when its controllers include memory,
    pids and cpu, or None."""
    own = _own_groups(proc_cgroup).get("")
    if own is None:
        return None
    for point, root, kind, _ in _mounts(mountinfo):
        if kind != "cgroup2":
            continue
        folder = _inside(point, root, own)
        if folder is None:
            continue
        try:
            available = Path(folder, "cgroup.controllers").read_text().split()
        except OSError:
            continue
        if set(V2_CONTROLLERS) <= set(available):
            return folder
    return None


# --- one sandbox's resources ----------------------------------------------------------------

class SandboxResources:
    """The budgets of one sandbox and what holds them. Subclasses: one per mechanism."""

    mechanism = "none"

    def __init__(self, memory_mb, max_tasks):
        self.memory_mb, self.max_tasks = memory_mb, max_tasks
        self.root_pid = None  # the sandbox's first process on the host, once started

    def enter_argv(self):
        """A command prefix that puts the process into the sandbox's group, then runs the
        rest of the command line."""
        return []

    def join_folders(self):
        """The cgroup folders a sandbox's first process joins (writing its number to each
        ``cgroup.procs``) before it runs anything: what :meth:`enter_argv` does."""
        return []

    def attach(self, root_pid):
        self.root_pid = root_pid

    def cpu_seconds(self):
        """CPU time used so far by every process and thread the sandbox has had."""
        return tree_cpu_seconds(self.root_pid) if self.root_pid else 0.0

    def member_pids(self):
        """The host's numbers of the sandbox's processes now."""
        return set(tree_pids(self.root_pid)) if self.root_pid else set()

    def init_enforces(self):
        """Whether the sandbox's init must hold the memory and task budgets itself."""
        return True

    def exceeded(self):
        """Which budget the kernel enforced, as words for the student, or None."""
        return None

    @classmethod
    def held_by(cls, memory_mb, max_tasks, has_init=True):
        """``{budget: what holds it}`` for a sandbox of this kind, for every report."""
        if has_init:
            memory = (f"{memory_mb} MB, resident memory and System V shared memory summed "
                      "over the sandbox by its init")
            tasks = f"{max_tasks} processes and threads, counted by its init"
        else:
            memory = f"{memory_mb} MB of address space per process (no cgroup, no init)"
            tasks = "none (no cgroup, no init)"
        return {"memory": memory, "tasks": tasks,
                "cpu_time": ("the sandbox's process tree in /proc" if os.path.isdir("/proc")
                             else "wall-clock time (this system has no /proc)"),
                "cpu_share": "none (no cgroup); the CPU-time budget bounds what a sandbox "
                             "can take"}

    def close(self):
        """Remove what the sandbox left (its processes are gone by now)."""


class CgroupResources(SandboxResources):
    """Common to both cgroup versions: groups made on creation, joined before exec."""

    def __init__(self, memory_mb, max_tasks):
        super().__init__(memory_mb, max_tasks)
        self.name = f"{GROUP_PREFIX}-{os.getpid()}-{next(_numbers)}"
        self.folders = []  # one per hierarchy the sandbox is in
        try:
            self._make()
        except OSError as error:
            self.close()
            raise ResourceSetupError(f"cannot set up the sandbox's cgroup: {error}") from None

    def enter_argv(self):
        return join_argv(self.folders)

    def join_folders(self):
        return list(dict.fromkeys(self.folders))

    def member_pids(self):
        return {int(pid) for pid in _read(self.folders[0], "cgroup.procs").split()}

    def init_enforces(self):
        return False

    def close(self):
        deadline = time.monotonic() + REMOVE_TIMEOUT
        for folder in dict.fromkeys(reversed(self.folders)):
            remove_group(folder, deadline)
        self.folders = []


class CgroupV1Resources(CgroupResources):
    mechanism = "cgroup v1"

    def __init__(self, memory_mb, max_tasks, parents):
        self.parents = parents
        super().__init__(memory_mb, max_tasks)

    def _make(self):
        self.group = {}
        for controller in V1_CONTROLLERS:
            folder = os.path.join(self.parents[controller], self.name)
            if not os.path.isdir(folder):  # co-mounted controllers share one folder
                os.mkdir(folder)
                self.folders.append(folder)
            self.group[controller] = folder
        limit = str(self.memory_mb * 2**20)
        _write(self.group["memory"], "memory.limit_in_bytes", limit)
        if os.path.exists(os.path.join(self.group["memory"], "memory.memsw.limit_in_bytes")):
            _write(self.group["memory"], "memory.memsw.limit_in_bytes", limit)  # no swap
        _write(self.group["pids"], "pids.max", str(self.max_tasks))
        _write(self.group["cpu"], "cpu.shares", str(CPU_SHARES_V1))

    def cpu_seconds(self):
        return int(_read(self.group["cpuacct"], "cpuacct.usage") or 0) / 1e9

    def exceeded(self):
        oom = _fields(_read(self.group["memory"], "memory.oom_control"))
        if oom.get("oom_kill", 0) > 0 or oom.get("under_oom", 0) > 0:
            return _MEMORY_WORDS.format(self.memory_mb)
        if _fields(_read(self.group["pids"], "pids.events")).get("max", 0) > 0:
            return _TASK_WORDS.format(self.max_tasks)
        return None

    @classmethod
    def held_by(cls, memory_mb, max_tasks, has_init=True):
        return {"memory": f"{memory_mb} MB, cgroup v1 memory controller (tmpfs and shared "
                          "memory included, no swap)",
                "tasks": f"{max_tasks} processes and threads, cgroup v1 pids controller",
                "cpu_time": "cgroup v1 cpuacct controller",
                "cpu_share": f"cgroup v1 cpu controller, {CPU_SHARES_V1} shares"}


class CgroupV2Resources(CgroupResources):
    mechanism = "cgroup v2"

    def __init__(self, memory_mb, max_tasks, parent):
        self.parent = parent
        super().__init__(memory_mb, max_tasks)

    def _make(self):
        wanted = " ".join(f"+{c}" for c in V2_CONTROLLERS)
        enabled = set(_read(self.parent, "cgroup.subtree_control").split())
        if not set(V2_CONTROLLERS) <= enabled:
            _write(self.parent, "cgroup.subtree_control", wanted)
        self.folder = os.path.join(self.parent, self.name)
        os.mkdir(self.folder)
        self.folders.append(self.folder)
        _write(self.folder, "memory.max", str(self.memory_mb * 2**20))
        if os.path.exists(os.path.join(self.folder, "memory.swap.max")):
            _write(self.folder, "memory.swap.max", "0")
        _write(self.folder, "pids.max", str(self.max_tasks))
        _write(self.folder, "cpu.weight", str(CPU_WEIGHT_V2))

    def cpu_seconds(self):
        return _fields(_read(self.folder, "cpu.stat")).get("usage_usec", 0) / 1e6

    def exceeded(self):
        if _fields(_read(self.folder, "memory.events")).get("oom_kill", 0) > 0:
            return _MEMORY_WORDS.format(self.memory_mb)
        if _fields(_read(self.folder, "pids.events")).get("max", 0) > 0:
            return _TASK_WORDS.format(self.max_tasks)
        return None

    def close(self):
        if os.path.exists(os.path.join(self.folder, "cgroup.kill")):
            try:
                _write(self.folder, "cgroup.kill", "1")  # every task, even frozen ones
            except OSError:
                pass
        super().close()

    @classmethod
    def held_by(cls, memory_mb, max_tasks, has_init=True):
        return {"memory": f"{memory_mb} MB, cgroup v2 memory.max (tmpfs and shared "
                          "memory included, no swap)",
                "tasks": f"{max_tasks} processes and threads, cgroup v2 pids.max",
                "cpu_time": "cgroup v2 cpu.stat",
                "cpu_share": f"cgroup v2 cpu.weight {CPU_WEIGHT_V2}"}


_MEMORY_WORDS = ("the sandbox's processes together needed more than its {} MB of memory "
                 "(files in /tmp and shared memory count too)")
_TASK_WORDS = ("the sandbox tried to hold more than {} processes and threads together; "
               "the ones past that were refused")


def _read(folder, name):
    try:
        return Path(folder, name).read_text()
    except OSError:
        return ""


def _write(folder, name, value):
    with open(os.path.join(folder, name), "w") as handle:
        handle.write(value)


def _fields(text):
    """``{key: int}`` of a cgroup file of "key value" lines."""
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            fields[key] = int(value)
    return fields


def _kill_members(folder):
    for pid in _read(folder, "cgroup.procs").split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError, PermissionError):
            pass


def remove_group(folder, deadline):
    """Kill what is left in a cgroup and in every group below it, and remove them, the
    deepest first (trying until ``deadline``, a ``time.monotonic()``: the kernel takes a
    moment to let go of killed tasks). True once the group is gone."""
    while os.path.isdir(folder):
        for inner, _, _ in os.walk(folder, topdown=False):  # a child before its parent
            _kill_members(inner)
            try:
                os.rmdir(inner)
            except OSError:
                pass
        if not os.path.isdir(folder):
            break
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def join_argv(folders):
    """A command prefix that puts the process into each cgroup of ``folders``, then runs
    the rest of the command line: whatever it starts is inside too."""
    # $$ is the shell's own number, which exec keeps
    script = ('while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 125; '
              'shift; done; shift; exec "$@"')
    return ["/bin/sh", "-c", script, "sh", *dict.fromkeys(folders), "--"]


# --- CPU time without a cgroup --------------------------------------------------------------

def process_cpu_seconds(pid):
    """utime + stime of a process (all its threads, live and ended) and of the children
    it has waited for, or 0 once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2:].split()  # the name may hold spaces and brackets
    return sum(int(value) for value in fields[11:15]) / USER_HZ  # utime stime cutime cstime


def tree_pids(root_pid):
    """``root_pid`` and every process under it (children of each of their threads)."""
    found, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                todo += [int(child) for child in
                         Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
            except OSError:
                pass
    return found


def tree_cpu_seconds(root_pid):
    """CPU time of a process tree: the live processes' own time and that of the ended
    ones they waited for (an orphan's is its reaper's, the sandbox's init)."""
    if not os.path.isdir("/proc"):
        return 0.0
    return sum(process_cpu_seconds(pid) for pid in tree_pids(root_pid))


# --- which mechanism this machine allows -----------------------------------------------------

@lru_cache(maxsize=1)
def best_mechanism():
    """``(class, arguments)`` of the best mechanism that works here, tried once."""
    if sys.platform.startswith("linux") and shutil.which("sh"):
        for kind, parents in ((CgroupV2Resources, v2_parent()),
                              (CgroupV1Resources, v1_parents())):
            if not parents:
                continue
            try:
                kind(64, 16, parents).close()  # can we make, limit and remove one?
            except (ResourceSetupError, OSError):
                continue
            return kind, parents
    return None, None


def budget_mechanisms(memory_mb, max_tasks=MAX_TASKS, has_init=True):
    """What would hold each budget of a sandbox started now (see ``held_by``)."""
    kind, _ = best_mechanism()
    return (kind or SandboxResources).held_by(memory_mb, max_tasks, has_init)


def mechanism_name(has_init=True):
    """In a few words, what holds the sandboxes' budgets on this machine."""
    kind, _ = best_mechanism()
    if kind is not None:
        return kind.mechanism
    return "the sandbox's init" if has_init else "nothing but each process's own limits"


def sandbox_resources(memory_mb, max_tasks=MAX_TASKS, use_cgroups=True):
    """The resources of a new sandbox, held by the best mechanism this machine allows."""
    kind, parents = best_mechanism() if use_cgroups else (None, None)
    if kind is not None:
        try:
            return kind(memory_mb, max_tasks, parents)
        except ResourceSetupError:
            pass
    return SandboxResources(memory_mb, max_tasks)


def sandbox_groups():
    """``[(folder, pid of the grader process that made it)]`` of every sandbox cgroup that
    exists now beside this process's own groups."""
    kind, parents = best_mechanism()
    if kind is None:
        return []
    found = []
    for parent in dict.fromkeys(parents.values() if isinstance(parents, dict) else [parents]):
        for entry in os.scandir(parent):
            parts = entry.name.split("-")
            if (entry.is_dir() and entry.name.startswith(GROUP_PREFIX + "-")
                    and len(parts) >= 2 and parts[-2].isdigit()):
                found.append((entry.path, int(parts[-2])))
    return found


def process_runs(pid):
    """Whether process ``pid`` still runs: what tells a grader's leftovers (cgroups,
    scratch folders, named by the process that made them) from those in use."""
    return os.path.exists(f"/proc/{pid}")


def remove_stale_groups(note=None, within=REMOVE_TIMEOUT):
    """Remove sandbox cgroups left by graders that no longer run (a SIGKILLed grader
    cannot clean up after itself), child groups included, within ``within`` seconds in
    all. Each group that would not go is named in one line (``note``, stderr by default)."""
    note = note or (lambda line: print(line, file=sys.stderr))
    deadline = time.monotonic() + within
    for folder, maker in sandbox_groups():
        if not process_runs(maker) and not remove_group(folder, deadline):
            note(f"grader: could not remove the sandbox group {folder} (a task in it "
                 "would not end); it is left for the next run")
