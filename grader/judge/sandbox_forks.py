"""Sandboxes forked from the template: the grader's side.

A grader process that isolates with namespaces keeps one sandbox template
(``sandbox_template.py``): a process of its own, started on first use with an
environment that holds no salt, which has imported the public packages and forks each
sandbox. :func:`fork_sandbox` asks it for one and returns a :class:`ForkedSandbox`, which
the student process watches and stops as it would the ``unshare`` it replaces (``pid``,
``poll``, ``wait``). The template is not the grader's child's child of anything the
grader started for one notebook: it lives as long as the grader, and ends when the
grader's end of its control socket closes.

Where the template cannot start (or ``GRADER_SANDBOX_TEMPLATE=0`` says not to use it),
sandboxes start as before, from ``sandbox_launcher.py`` through ``unshare``.
"""

import atexit
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader.judge.sandbox import public_env

TEMPLATE_SCRIPT = Path(__file__).with_name("sandbox_template.py")
READY_TIMEOUT = 120.0  # seconds for the template's imports, on a loaded machine
FORK_TIMEOUT = 30.0  # seconds for the template to answer one request
SWITCH = "GRADER_SANDBOX_TEMPLATE"  # "0": start every sandbox afresh instead


class TemplateUnavailable(RuntimeError):
    """The template could not start or stopped answering."""


class ForkedSandbox:
    """The first process of a sandbox forked from the template, watched through a pidfd
    (it is the template's child, not the grader's): what ``subprocess.Popen`` offers the
    student process, without the exit status, which only its parent could read."""

    def __init__(self, pid, pidfd):
        self.pid, self._pidfd, self.returncode = pid, pidfd, None

    def poll(self):
        if self.returncode is None and self._ended(0):
            self.returncode = 0
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None:
            if not self._ended(timeout):
                raise subprocess.TimeoutExpired(f"sandbox {self.pid}", timeout)
            self.returncode = 0
        return self.returncode

    def _ended(self, timeout):
        if self._pidfd is None:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        poller = select.poll()
        poller.register(self._pidfd, select.POLLIN)
        while True:
            left = None if deadline is None else max(0, int(1000 * (deadline - time.monotonic())))
            if poller.poll(left):
                os.close(self._pidfd)
                self._pidfd = None
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def __del__(self):
        if getattr(self, "_pidfd", None) is not None:
            os.close(self._pidfd)


class SandboxTemplate:
    """The template process of this grader process, started on first use; one request
    at a time (the grader's threads share it)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._process = self._control = None
        self._failed = None  # why it could not start: then it is not tried again

    def start(self):
        """Start the template unless it runs (TemplateUnavailable if it cannot)."""
        with self._lock:
            self._running()

    def fork(self, request, channel_fd, log_fd):
        with self._lock:
            self._running()
            try:
                return self._ask(request, channel_fd, log_fd)
            except (OSError, ValueError, TemplateUnavailable):
                self._stop()
                raise

    def _running(self):
        if self._failed is not None:
            raise TemplateUnavailable(self._failed)
        if self._process is None or self._process.poll() is not None:
            self._start()

    def _start(self):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with tempfile.TemporaryFile() as errors:  # what it says if it cannot start
            try:
                self._process = subprocess.Popen(
                    [sys.executable, str(TEMPLATE_SCRIPT), str(theirs.fileno())],
                    env=public_env(), stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=errors, pass_fds=(theirs.fileno(),),
                    cwd="/", start_new_session=True)
            finally:
                theirs.close()
            self._control = mine
            try:
                if not select.select([mine], [], [], READY_TIMEOUT)[0] or \
                        json.loads(mine.recv(4096) or b"{}").get("ready") is not True:
                    raise TemplateUnavailable("it did not get ready")
            except (OSError, ValueError, TemplateUnavailable) as error:
                self._stop()
                errors.seek(0)
                told = errors.read(2000).decode(errors="replace").strip()
                self._failed = (f"the sandbox template did not start ({error})"
                                f"{': ' + told if told else ''}")
                raise TemplateUnavailable(self._failed) from None

    def _ask(self, request, channel_fd, log_fd):
        socket.send_fds(self._control, [json.dumps(request).encode()], [channel_fd, log_fd])
        if not select.select([self._control], [], [], FORK_TIMEOUT)[0]:
            raise TemplateUnavailable("it did not answer")
        data, fds, _, _ = socket.recv_fds(self._control, 65536, 1)
        reply = json.loads(data or b"{}")
        if "error" in reply or "pid" not in reply:
            for fd in fds:
                os.close(fd)
            raise TemplateUnavailable(f"it could not fork a sandbox: {reply.get('error')}")
        return ForkedSandbox(int(reply["pid"]), fds[0] if fds else None)

    def _stop(self):
        if self._control is not None:
            self._control.close()  # the template reads the end, and ends
            self._control = None
        if self._process is not None:
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


    def close(self):
        """End the template (it ends when its control socket closes) and wait for it, so
        that the CPU time of every sandbox it forked is counted in this process's
        children's, as a sandbox started by this process is."""
        with self._lock:
            self._stop()


_TEMPLATE = SandboxTemplate()
atexit.register(_TEMPLATE.close)


def template_wanted():
    return os.environ.get(SWITCH, "1") != "0"


def fork_sandbox(request, channel_fd, log_fd):
    """A sandbox forked from this process's template (see the module docstring):
    ``request`` holds its budgets and paths (``sandbox.sandbox_request``)."""
    return _TEMPLATE.fork(request, channel_fd, log_fd)
