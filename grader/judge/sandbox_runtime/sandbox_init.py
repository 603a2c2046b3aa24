"""PID 1 of a sandbox: start the student server, reap orphans, and end everything.

The grader's code, not the student's, is the first process of the sandbox's PID
namespace. When it exits the kernel kills every other process in the namespace, whatever
they did to their session, process group or parent-death signal. It exits when the
student server exits, and it is killed (by its parent-death signal) when the grader's
side of the sandbox goes away. It holds no capabilities and is not dumpable, so student
processes can neither trace it nor read its memory; as PID 1 it gets no signal from them
that it has not asked for.

It also watches the sandbox as a whole: past ``MAX_PROCESSES`` processes (a fork bomb)
it ends them all, and the sandbox with them. Where no cgroup holds the sandbox's memory
and task budgets (the grader says so with a non-zero ``MAX_TASKS`` and ``MAX_BYTES``), it
holds them itself: threads are counted from each process's status (threads are tasks
too: a thread swarm is not a process count), and memory is the resident anonymous and
shared memory of every process plus the System V shared memory of the sandbox's own IPC
namespace, and the memory files (memfd) any process holds open, mapped or not. Why it
ended the sandbox goes to its standard error, the launcher's log,
which only the grader reads.

Usage: ``python sandbox_init.py CHANNEL_FD MAX_PROCESSES MAX_TASKS MAX_BYTES COMMAND...``
(it starts the server with COMMAND), or, in a sandbox forked from the template
(``grader/judge/sandbox_template.py``), whose PID 1 forks the server itself and then
becomes this program: ``python sandbox_init.py --watch SERVER_PID MAX_PROCESSES MAX_TASKS
MAX_BYTES``.
"""

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
WATCH_INTERVAL = 0.05  # seconds between looks at the sandbox's processes
BUDGET_LINE = "sandbox budget: "  # how the grader finds the reason in the log
WATCH = "--watch"  # first argument of an init whose server was forked before it started


def usage():
    """``(processes, tasks, bytes)`` the sandbox holds now."""
    processes = tasks = resident = 0
    held_files = {}  # (device, inode) -> bytes of memory-backed files held open
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        processes += 1
        try:
            with open(f"/proc/{name}/status", "rb") as handle:
                status = handle.read()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(b"Threads:"):
                tasks += int(line.split()[1])
            elif line.startswith((b"RssAnon:", b"RssShmem:")):
                resident += int(line.split()[1]) * 1024
        memory_files(name, held_files)
    return processes, tasks, resident + shared_memory() + sum(held_files.values())


def memory_files(pid, held):
    """Add to ``held`` the memory-backed files process ``pid`` holds open: a memfd holds
    memory whether or not any process maps it (the sandbox's /tmp has a cap of its own)."""
    folder = f"/proc/{pid}/fd"
    try:
        descriptors = os.listdir(folder)
    except OSError:
        return
    for descriptor in descriptors:
        try:
            if not os.readlink(f"{folder}/{descriptor}").startswith("/memfd:"):
                continue
            found = os.stat(f"{folder}/{descriptor}")
        except OSError:
            continue
        held[(found.st_dev, found.st_ino)] = found.st_blocks * 512


def shared_memory():
    """Resident bytes of the IPC namespace's System V shared memory segments."""
    try:
        with open("/proc/sysvipc/shm") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return 0
    if not lines:
        return 0
    columns = lines[0].split()
    if "rss" not in columns:
        return 0
    at = columns.index("rss")
    return sum(int(line.split()[at]) for line in lines[1:] if len(line.split()) > at)


def over_budget(max_processes, max_tasks, max_bytes):
    """Why the sandbox must end, or None."""
    if not (max_tasks or max_bytes):
        processes = sum(name.isdigit() for name in os.listdir("/proc"))
        return (f"more than {max_processes} processes" if processes > max_processes
                else None)
    processes, tasks, resident = usage()
    if processes > max_processes:
        return f"more than {max_processes} processes"
    if max_tasks and tasks > max_tasks:
        return f"more than {max_tasks} processes and threads together"
    if max_bytes and resident > max_bytes:
        return f"more than {max_bytes // 2**20} MB of memory together"
    return None


def run(channel_fd, max_processes, max_tasks, max_bytes, start_server):
    """Be the sandbox's init: fork the student server, which runs ``start_server()`` (it
    never returns: it execs the server), then :func:`watch` it."""
    _protect_self()
    server = os.fork()
    if server == 0:
        try:
            # interruptible whatever the grader ignored or blocked (a Dask worker ignores
            # Ctrl-C): the exec'd server makes SIGINT its KeyboardInterrupt again
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            start_server()
        finally:
            os._exit(1)  # start_server does not return: if it raises, the server ends
    os.close(channel_fd)  # the channel closes for the grader as soon as the server ends
    watch(server, max_processes, max_tasks, max_bytes)


def _protect_self():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    libc.prctl(PR_SET_DUMPABLE, 0)


def watch(server, max_processes, max_tasks, max_bytes):
    """Reap orphans and hold the budgets until the student server (a child of this
    process) ends, then end, and the sandbox with it."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == server:
            break
        if pid == 0:
            reason = over_budget(max_processes, max_tasks, max_bytes)
            if reason is not None:
                os.write(2, f"{BUDGET_LINE}the sandbox held {reason}\n".encode())
                os.kill(-1, signal.SIGKILL)  # every process of the namespace but this one
                break
            time.sleep(WATCH_INTERVAL)
    os._exit(0)


def main():
    if sys.argv[1] == WATCH:  # a forked sandbox's PID 1, which forked its server already
        server, max_processes, max_tasks, max_bytes = (int(value) for value in sys.argv[2:6])
        _protect_self()
        watch(server, max_processes, max_tasks, max_bytes)
    channel_fd, max_processes, max_tasks, max_bytes = (int(value) for value in sys.argv[1:5])
    command = sys.argv[5:]
    run(channel_fd, max_processes, max_tasks, max_bytes,
        lambda: os.execv(command[0], command))


if __name__ == "__main__":
    main()
