"""PID 1 of a sandbox: start the student server, reap orphans, and end everything.

The grader's code, not the student's, is the first process of the sandbox's PID
namespace. When it exits the kernel kills every other process in the namespace, whatever
they did to their session, process group or parent-death signal. It exits when the
student server exits, and it is killed (by its parent-death signal) when the grader's
side of the sandbox goes away. It holds no capabilities and is not dumpable, so student
processes can neither trace it nor read its memory; as PID 1 it gets no signal from them
that it has not asked for.

It also counts the sandbox's processes: past ``MAX_PROCESSES`` (a fork bomb) it ends
them all, and the sandbox with them. The kernel's own process limit does the same for
graders that do not run as root, but root is exempt from it.

Usage: ``python sandbox_init.py CHANNEL_FD MAX_PROCESSES SERVER_COMMAND...``
"""

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
WATCH_INTERVAL = 0.05  # seconds between counts of the sandbox's processes


def process_count():
    return sum(name.isdigit() for name in os.listdir("/proc"))


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    libc.prctl(PR_SET_DUMPABLE, 0)
    channel_fd, max_processes, command = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    server = os.fork()
    if server == 0:
        os.execv(command[0], command)
    os.close(channel_fd)  # the channel closes for the grader as soon as the server ends
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
            if process_count() > max_processes:
                os.kill(-1, signal.SIGKILL)  # every process of the namespace but this one
                break
            time.sleep(WATCH_INTERVAL)
    os._exit(0)


if __name__ == "__main__":
    main()
