"""PID 1 of a sandbox: start the student server, reap orphans, and end everything.

The grader's code, not the student's, is the first process of the sandbox's PID
namespace. When it exits the kernel kills every other process in the namespace, whatever
they did to their session, process group or parent-death signal. It exits when the
student server exits, and it is killed (by its parent-death signal) when the grader's
side of the sandbox goes away. It holds no capabilities and is not dumpable, so student
processes can neither trace it nor read its memory; as PID 1 it gets no signal from them
that it has not asked for.

Usage: ``python sandbox_init.py CHANNEL_FD SERVER_COMMAND...``
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    libc.prctl(PR_SET_DUMPABLE, 0)
    channel_fd, command = int(sys.argv[1]), sys.argv[2:]
    server = os.fork()
    if server == 0:
        os.execv(command[0], command)
    os.close(channel_fd)  # the channel closes for the grader as soon as the server ends
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == server:
            break
    os._exit(0)


if __name__ == "__main__":
    main()
