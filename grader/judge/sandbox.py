"""Where a submission's code runs, and what it can see.

Each notebook is graded in a sandbox of its own. On the host the grader prepares a
scratch folder holding only what the sandbox may import, read-only inside: the course's
public helpers (``course``), the reference modules of *earlier* lessons
(the module a lesson is about, ``qlearning.py`` for lesson 01, is not there, so it
cannot be imported instead of written) and the sandbox runtime
(``grader/judge/sandbox_runtime``). The submission itself never lands there: the grader
sends its cells over the channel.

On Linux the sandbox gets its own user, mount, PID, network, IPC and UTS namespaces
(``unshare``) and a root filesystem built from a whitelist (see ``sandbox_launcher.py``);
its memory, tasks, CPU share and CPU time are its own too (``sandbox_resources.py``). Where
namespaces are unavailable (macOS, some containers) the student's process runs without
that wall, in a folder of its own; every report names the isolation that graded it, and
``--require-sandbox`` refuses to grade that way.
"""

import fcntl
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grader.judge.sandbox_launcher import RUNTIME_FOLDER
from grader.judge.scratch_bytecode import write_bytecode
from grader.judge.sandbox_resources import (DEFAULT_DISK_MB, DEFAULT_MEMORY_MB,  # noqa: F401
                                            MAX_TASKS, budget_mechanisms, process_runs)
from grader.lessons import REPOSITORY, earlier_reference_modules

PUBLIC_PACKAGES = ("course",)  # what a lesson's own cells import; the checks stay out
RUNTIME_SOURCE = Path(__file__).with_name("sandbox_runtime")
# what a Python process needs from the system; /etc only as the few files it reads
SYSTEM_PATHS = ("/usr", "/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group",
                "/etc/nsswitch.conf", "/etc/hosts", "/etc/mime.types", "/etc/fonts")

# --fork makes the launcher PID 1 of a new PID namespace with its own /proc; --kill-child
# kills it when unshare dies; setpriv kills unshare when the grader's process (more
# exactly the thread that started it: a Dask task's) dies
UNSHARE = ("unshare", "--user", "--map-root-user", "--mount", "--pid", "--net", "--ipc",
           "--uts", "--fork", "--mount-proc", "--kill-child")
DIE_WITH_GRADER = ("setpriv", "--pdeathsig", "KILL", "--")

ISOLATED = "namespaces"  # what reports say about the sandbox that graded a notebook
NOT_ISOLATED = "none"


@dataclass
class Scratch:
    root: Path  # removed when grading of the notebook ends; nothing in it is writable inside
    lib: Path  # importable inside: public packages, earlier reference modules, the runtime
    new_root: Path  # an empty folder the launcher mounts the sandbox's root on
    workdir: Path  # only without namespaces: the student process's working folder
    owner_lock: int = -1  # the open owner file, flock-ed while the scratch is in use


STANDS_IN_FOR = re.compile(r'^STANDS_IN_FOR = "(\d\d_[a-z0-9_]+)"', re.MULTILINE)


def stands_in_for(module_path):
    """The lesson whose answer a helper module could stand in for (its ``STANDS_IN_FOR``),
    or None: such a module stays out of that lesson's sandbox and earlier ones'."""
    found = STANDS_IN_FOR.search(Path(module_path).read_text())
    return found.group(1) if found else None


def out_of_reach(lesson):
    """``ignore`` for copytree: helper modules that could answer ``lesson`` or a later one."""
    def ignore(folder, names):
        hidden = {"__pycache__"}
        for name in names:
            answers = stands_in_for(Path(folder) / name) if name.endswith(".py") else None
            if answers is not None and int(answers[:2]) >= lesson.number:
                hidden.add(name)
        return hidden
    return ignore


# A scratch folder is its maker's while the maker holds an exclusive flock on the folder's
# OWNER_FILE: the kernel drops the lock when the maker dies, however it dies, and a lock is
# seen by every grader sharing the temporary folder, whatever its PID namespace (a PID is
# not: a grader in a container sees other containers' graders as dead). A folder without
# the file (its maker died between mkdtemp and the lock) is judged by its maker's PID in
# its name, and only once it is older than UNLOCKED_GRACE.
SCRATCH_NAME = re.compile(r"grade-\d\d_[a-z0-9_]+-(\d+)-[^/]+")
OWNER_FILE = "owner.lock"
UNLOCKED_GRACE = 600.0  # seconds


def _hold_owner_lock(root):
    """Lock OWNER_FILE for good. It is locked under another name and then renamed into
    place (the lock stays with the file): made in place, another grader opening it between
    its creation and the lock would take the lock itself, judge the folder's maker gone
    and remove the folder while it is being filled."""
    pending = root / f"{OWNER_FILE}.pending"
    handle = os.open(pending, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(handle, fcntl.LOCK_EX)
    os.rename(pending, root / OWNER_FILE)
    return handle


def make_scratch(lesson):
    root = Path(tempfile.mkdtemp(prefix=f"grade-{lesson.name}-{os.getpid()}-"))
    owner_lock = _hold_owner_lock(root)
    lib, new_root, workdir = root / "lib", root / "root", root / "work"
    for folder in (lib, new_root, workdir, workdir / "home"):
        folder.mkdir()
    ignore = shutil.ignore_patterns("__pycache__")
    for package in PUBLIC_PACKAGES:
        shutil.copytree(REPOSITORY / package, lib / package, ignore=out_of_reach(lesson))
    for module in earlier_reference_modules(lesson):
        shutil.copy2(REPOSITORY / module, lib / module)
    shutil.copytree(RUNTIME_SOURCE, lib / RUNTIME_FOLDER, ignore=ignore)
    write_bytecode(lib)
    return Scratch(root, lib, new_root, workdir, owner_lock)


def remove_scratch(scratch):
    shutil.rmtree(scratch.root, ignore_errors=True)
    if scratch.owner_lock >= 0:
        os.close(scratch.owner_lock)
        scratch.owner_lock = -1


def _owner_gone(path, maker_pid):
    """Whether the scratch folder ``path`` has no live owner (see OWNER_FILE)."""
    try:
        handle = os.open(path / OWNER_FILE, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        try:
            old = time.time() - os.stat(path).st_mtime > UNLOCKED_GRACE
        except OSError:
            return False
        return old and os.path.isdir("/proc") and not process_runs(maker_pid)
    except OSError:
        return False  # not ours to judge (a link, no permission): leave it
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # its maker holds it: live
    finally:
        os.close(handle)  # closing drops the lock this test took
    return True


def stale_scratch_folders(folder=None):
    """Scratch folders in ``folder`` (the temporary folder) whose maker no longer runs."""
    folder = Path(folder or tempfile.gettempdir())
    stale = []
    for entry in os.scandir(folder):
        named = SCRATCH_NAME.fullmatch(entry.name)
        if named and entry.is_dir(follow_symlinks=False) and _owner_gone(
                Path(entry.path), int(named.group(1))):
            stale.append(Path(entry.path))
    return stale


def remove_stale_scratch(folder=None):
    """Remove the scratch folders of graders that no longer run: a process killed with
    SIGKILL cannot remove its own (its sandbox's processes die with it)."""
    for stale in stale_scratch_folders(folder):
        shutil.rmtree(stale, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def exposed_paths():
    """What the sandbox's root filesystem holds besides the course (read-only): the
    system's ``/usr`` and a few ``/etc`` files, and this Python's installation and the
    import path a clean interpreter of it has (``.pth`` entries included), except
    folders inside the repository (its virtual environment aside)."""
    clean = subprocess.run([sys.executable, "-I", "-c",
                            "import json, sys; print(json.dumps(sys.path))"],
                           capture_output=True, text=True, check=True)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    imports = {path for path in json.loads(clean.stdout)
               if path and os.path.isdir(path)
               and not Path(path).resolve().is_relative_to(REPOSITORY)}
    return tuple(sorted(path for path in {*SYSTEM_PATHS, *prefixes, *imports}
                        if os.path.exists(path)))


@functools.lru_cache(maxsize=1)
def namespaces_available():
    """Can this machine give a process its own namespaces and drop its capabilities
    (``unshare`` and ``setpriv``, from util-linux)? The launcher moves the root with the
    system call itself."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    try:
        probe = subprocess.run([*UNSHARE, "--", "setpriv", "--bounding-set=-all", "true"],
                               capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


SYSCALL_FILTER = "seccomp: no namespaces, mounts or kernel administration"  # the launcher's


def syscall_filter_available():
    """True where the launcher can install its seccomp filter (Linux with libseccomp)."""
    try:
        import pyseccomp  # noqa: F401  (loads the system's libseccomp)
    except (ImportError, OSError, AttributeError, RuntimeError):
        return False
    return True


def isolation_level(isolate=True):
    return ISOLATED if isolate and namespaces_available() else NOT_ISOLATED


def isolation(isolate=True, memory_mb=DEFAULT_MEMORY_MB):
    """What a report says walled a notebook in (``level``: namespaces or none) and what
    held each of its budgets."""
    level = isolation_level(isolate)
    return {"level": level,
            "syscalls": SYSCALL_FILTER if syscall_filter_available() else "not filtered",
            **budget_mechanisms(memory_mb, has_init=level == ISOLATED)}


def sandbox_argv(scratch, channel_fd, memory_mb, disk_mb, isolate=True, resources=None):
    """The command that starts a student server in a sandbox, and its working folder.
    ``resources`` (:mod:`grader.judge.sandbox_resources`) put the sandbox into its cgroup,
    or leave its budgets to its init."""
    launcher = [sys.executable, str(Path(__file__).with_name("sandbox_launcher.py")),
                "--memory-mb", str(memory_mb), "--disk-mb", str(disk_mb),
                "--lib", str(scratch.lib), "--channel-fd", str(channel_fd),
                "--max-tasks", str(resources.max_tasks if resources else MAX_TASKS)]
    if resources is None or resources.init_enforces():
        launcher.append("--init-budgets")
    enter = resources.enter_argv() if resources is not None else []
    if isolation_level(isolate) == ISOLATED:
        for path in exposed_paths():
            launcher += ["--expose", path]
        return [*enter, *DIE_WITH_GRADER, *UNSHARE, "--", *launcher, "--in-namespace",
                "--root", str(scratch.new_root)], scratch.new_root
    if shutil.which(DIE_WITH_GRADER[0]):  # without a PID namespace, the server alone
        launcher = [*DIE_WITH_GRADER, *launcher]
    return [*enter, *launcher], scratch.workdir


def public_env():
    """What every process of a sandbox starts with, whoever starts it (the launcher, or
    the sandbox template of ``sandbox_template.py``, which each sandbox forked from it
    inherits): no salt, no instructor variables, one thread, fixed hashing."""
    keep = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.update({
        "PYTHONHASHSEED": "0",  # set iteration order is part of determinism
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
    })
    return env


def sandbox_env(scratch):
    """The student process's environment (see :func:`public_env`)."""
    env = public_env()
    env.update({
        "HOME": str(scratch.workdir / "home"),  # replaced inside a namespace sandbox
        "PYTHONPATH": str(scratch.lib),  # likewise
    })
    return env


def sandbox_request(scratch, memory_mb, disk_mb, resources):
    """What the sandbox template needs to fork a sandbox as :func:`sandbox_argv`'s command
    would start it (isolated with namespaces)."""
    return {"root": str(scratch.new_root), "lib": str(scratch.lib),
            "expose": list(exposed_paths()), "memory_mb": int(memory_mb),
            "disk_mb": int(disk_mb),
            "max_tasks": int(resources.max_tasks if resources else MAX_TASKS),
            "init_budgets": resources is None or resources.init_enforces(),
            "cgroups": resources.join_folders() if resources is not None else []}
