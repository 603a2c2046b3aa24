"""Start a student server inside a root filesystem that holds only what it needs.

Run by the grader as ``setpriv --pdeathsig KILL -- unshare --user --map-root-user
--mount --pid --net --ipc --uts --fork --mount-proc --kill-child python
sandbox_launcher.py --in-namespace ...`` (inside the sandbox's cgroup, when it has one:
see ``sandbox_resources.py``). In its private namespaces it builds the sandbox's world from a
**whitelist**, not by hiding what it knows to be secret (a blacklist misses the copy of
the course it has never heard of):

1. an empty tmpfs becomes the new root; each ``--expose`` path (the system's ``/usr``,
   the Python installation, a few files of ``/etc``) is bound into it **read-only** at
   the same path, with the symlinks that lead to it; the course's public modules and the
   sandbox runtime (``--lib``) are bound read-only at ``/course``;
2. the only writable place is ``/tmp``, a tmpfs of its own capped at ``--disk-mb``: the
   working folder and HOME are in it, and it vanishes with the sandbox. Nothing the host
   later reads or runs is in it or anywhere else the sandbox can write;
3. ``pivot_root`` makes that tree ``/`` and the old root is unmounted;
4. each process's address space and core dumps are capped; the host name is
   ``sandbox`` (the UTS namespace is the sandbox's own, as are its System V IPC objects);
5. no process of the sandbox may make a user namespace (its ``max_user_namespaces`` is
   0), and the seccomp filter of ``syscall_filter.py`` is installed: from here on no
   namespace, no mount and no kernel administration, for everything the sandbox runs;
6. every capability is dropped (``setpriv``) and the trusted init
   (``sandbox_init.py``) becomes PID 1: when it ends, every process of the sandbox ends,
   and it ends the sandbox if it holds more than ``MAX_PROCESSES`` processes, or, where
   no cgroup holds them (``--init-budgets``), more than ``--max-tasks`` processes and
   threads or ``--memory-mb`` of memory together.

The channel to the grader is an inherited socket (``--channel-fd``): there is no
connection file, kernel spec or start command anywhere a submission could change.
``--net`` leaves only a loopback device that is down. Without ``--in-namespace`` (no
namespaces on this machine) only the per-process memory cap applies here and the server
runs directly, under the same seccomp filter.
"""

import argparse
import ctypes
import os
import platform
import resource
import socket
import sys
from pathlib import Path

DEVICES = ("null", "zero", "full", "random", "urandom")
COURSE_MOUNT = "/course"  # where --lib appears inside the sandbox
RUNTIME_FOLDER = "_grader_runtime"  # inside --lib: wire.py, sandbox_init.py, student_server.py
MAX_PROCESSES = 64  # per sandbox: the init ends a sandbox that holds more (fork bombs)
SANDBOX_HOST_NAME = "sandbox"


# The mounts are made with the system calls themselves, not by running util-linux's
# ``mount``: a sandbox makes about thirty, and each ``mount`` process started from the
# template's large address space cost about 3 ms of CPU (half of a sandbox's start).
libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 21
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203,
                  "s390x": 217}
# Linux's statvfs flags of a mount that a remount inside a user namespace must keep (the
# kernel refuses to clear them on a mount it was given), and the mount flag each one is
KEPT_FLAGS = ((2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, MS_NOATIME),
              (2048, MS_NODIRATIME), (4096, MS_RELATIME))


def _encoded(text):
    return None if text is None else os.fsencode(text)


def mount(source, target, kind, flags, options, doing):
    """mount(2); an OSError that says what it was ``doing`` if it fails."""
    if libc.mount(_encoded(source), _encoded(target), _encoded(kind), ctypes.c_ulong(flags),
                  _encoded(options)):
        number = ctypes.get_errno()
        raise OSError(number, f"sandbox: {doing} {target}: {os.strerror(number)}")


def mount_tmpfs(target, options, flags=0):
    mount("tmpfs", target, "tmpfs", flags, options, "mounting a tmpfs on")


def bind(source, target, recursive=False):
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0), None,
           f"binding {source} on")


def remount_read_only(target):
    """Make the bind mount at ``target`` read-only, keeping its other flags."""
    kept = os.statvfs(target).f_flag
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    for statvfs_flag, mount_flag in KEPT_FLAGS:
        if kept & statvfs_flag:
            flags |= mount_flag
    mount(None, target, None, flags, None, "making read-only")


def pivot_root(new_root, put_old):
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(f"sandbox: pivot_root's system call number on {platform.machine()} "
                      "is not known")
    if libc.syscall(ctypes.c_long(number), os.fsencode(new_root), os.fsencode(put_old)):
        error = ctypes.get_errno()
        raise OSError(error, f"sandbox: pivot_root: {os.strerror(error)}")


def unmount_detached(target):
    if libc.umount2(os.fsencode(target), ctypes.c_int(MNT_DETACH)):
        number = ctypes.get_errno()
        raise OSError(number, f"sandbox: unmounting {target}: {os.strerror(number)}")


def _replicate_symlinks(path, new_root):
    """Copy into ``new_root`` each symlink along ``path``, so ``path`` resolves there too."""
    walked = Path("/")
    for part in Path(path).parts[1:]:
        step = walked / part
        if step.is_symlink():
            inside = Path(new_root + str(step))
            if not os.path.lexists(inside):
                inside.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.readlink(step), inside)
            walked = Path(os.path.realpath(step))
        else:
            walked = step


def bind_read_only(source, target):
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        Path(target).touch()
    bind(source, target)
    remount_read_only(target)


def expose(path, new_root):
    """Bind the host's ``path`` read-only at the same place under ``new_root``."""
    real = os.path.realpath(path)
    if not os.path.exists(real):
        return
    bind_read_only(real, new_root + real)
    _replicate_symlinks(path, new_root)


def covered(path, exposed):
    """True when ``path`` lies inside one of the folders already exposed."""
    real = os.path.realpath(path)
    return any(real == folder or real.startswith(folder.rstrip("/") + "/")
               for folder in exposed)


def build_root(new_root, exposed, lib, disk_mb):
    """The sandbox's whole filesystem, under ``new_root`` (see the module docstring)."""
    mount_tmpfs(new_root, "size=16m,mode=755")
    # the writable tmpfs first: exposed paths under /tmp (a checkout's .venv) go on top
    os.makedirs(f"{new_root}/tmp")
    mount_tmpfs(f"{new_root}/tmp", f"size={disk_mb}m,mode=1777", MS_NOSUID | MS_NODEV)
    for folder in ("work", "home"):
        os.makedirs(f"{new_root}/tmp/{folder}")
    done = []
    for path in sorted(set(exposed), key=lambda p: len(os.path.realpath(p))):
        if not covered(path, done):
            expose(path, new_root)
            done.append(os.path.realpath(path))
        else:
            _replicate_symlinks(path, new_root)
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):  # merged-/usr links
        if os.path.islink(f"/{top}") and not os.path.lexists(f"{new_root}/{top}"):
            os.symlink(os.readlink(f"/{top}"), f"{new_root}/{top}")
    bind_read_only(lib, new_root + COURSE_MOUNT)
    os.makedirs(f"{new_root}/proc")
    bind("/proc", f"{new_root}/proc", recursive=True)  # the new PID namespace's own /proc
    os.makedirs(f"{new_root}/dev")
    for device in DEVICES:
        Path(f"{new_root}/dev/{device}").touch()
        bind(f"/dev/{device}", f"{new_root}/dev/{device}")
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{number}", f"{new_root}/dev/{name}")
    os.symlink("/proc/self/fd", f"{new_root}/dev/fd")
    os.makedirs(f"{new_root}/old-root")  # where pivot_root puts the host's root, unmounted
    remount_read_only(new_root)  # nothing new at the top level either


def enter_root(new_root):
    os.chdir(new_root)
    pivot_root(".", "old-root")
    unmount_detached("/old-root")
    os.chdir("/tmp/work")


def forbid_user_namespaces():
    """No nested user namespace, whatever the filter lets through (bubblewrap's
    ``--disable-userns``): the limit is the sandbox's own user namespace's."""
    try:
        Path("/proc/sys/user/max_user_namespaces").write_text("0")
    except OSError as error:  # the seccomp filter still refuses them
        print(f"sandbox: max_user_namespaces left as it is ({error})", file=sys.stderr)


def set_limit(which, value):
    resource.setrlimit(which, (value, value))


SANDBOX_ENVIRONMENT = {"HOME": "/tmp/home", "TMPDIR": "/tmp", "PYTHONPATH": COURSE_MOUNT}


def enter_sandbox(root, exposed, lib, disk_mb, memory_mb, syscall_filter,
                  address_space_mb=None):
    """Steps 1 to 5 of the module's docstring, in this process (PID 1 of the sandbox's
    namespaces, with every capability in them): its root built and entered, its host
    name, limits and environment set, user namespaces forbidden and the seccomp filter
    installed. Capabilities are dropped after this, by ``setpriv`` or by the template's
    ``drop_capabilities``. ``address_space_mb``: each process's cap (``memory_mb`` if
    None), for a process that starts with more than a fresh interpreter's."""
    build_root(root, exposed, lib, disk_mb)
    enter_root(root)
    os.environ.update(SANDBOX_ENVIRONMENT)
    socket.sethostname(SANDBOX_HOST_NAME)
    set_limit(resource.RLIMIT_NPROC, MAX_PROCESSES)
    set_limit(resource.RLIMIT_AS, (address_space_mb or memory_mb) * 2**20)
    set_limit(resource.RLIMIT_CORE, 0)
    forbid_user_namespaces()
    syscall_filter.install()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--disk-mb", type=int, required=True)
    parser.add_argument("--lib", required=True)
    parser.add_argument("--root", help="an empty folder to build the new root on")
    parser.add_argument("--channel-fd", type=int, required=True)
    parser.add_argument("--expose", action="append", default=[])
    parser.add_argument("--max-tasks", type=int, required=True)
    parser.add_argument("--init-budgets", action="store_true",
                        help="no cgroup holds the memory and task budgets: the init does")
    parser.add_argument("--in-namespace", action="store_true",
                        help="started under unshare: mounts affect only this sandbox")
    args = parser.parse_args(argv)
    try:  # beside this script; loads libseccomp before the root changes
        import syscall_filter
    except (ImportError, OSError, AttributeError, RuntimeError) as error:
        if args.in_namespace:  # Linux, where a sandbox never starts without its filter
            raise SystemExit(f"sandbox: no seccomp filter: {error}") from None
        syscall_filter = None  # no namespaces and no libseccomp (macOS): the report says so
    python = sys.executable
    if args.in_namespace:  # never mount anything in the grader's own namespace
        enter_sandbox(args.root, args.expose, args.lib, args.disk_mb, args.memory_mb,
                      syscall_filter)
        runtime = f"{COURSE_MOUNT}/{RUNTIME_FOLDER}"
        budgets = ([args.max_tasks, args.memory_mb * 2**20] if args.init_budgets else [0, 0])
        command = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs",
                   "--", python, f"{runtime}/sandbox_init.py", str(args.channel_fd),
                   str(MAX_PROCESSES), *map(str, budgets), python,
                   f"{runtime}/student_server.py", str(args.channel_fd)]
        os.execvp(command[0], command)
    runtime = os.path.join(args.lib, RUNTIME_FOLDER)
    command = [python, f"{runtime}/student_server.py", str(args.channel_fd)]
    set_limit(resource.RLIMIT_AS, args.memory_mb * 2**20)
    set_limit(resource.RLIMIT_CORE, 0)
    if syscall_filter is not None:
        syscall_filter.install()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
