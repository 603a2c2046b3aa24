"""One sandboxed Jupyter kernel, driven cell by cell with time limits.

Every execution ends in one of four ways: ``ok``, ``error`` (an exception), ``timeout``
(interrupted after its limit) or ``died`` (the kernel process is gone: ``os._exit``, a
crash, the memory cap). After ``timeout`` or ``died`` the caller restarts the kernel;
nothing else is lost. Only what the grader asked for is collected: stream output is
read and dropped, so a student printing in a loop cannot flood the grader.
"""

import json
import queue
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

PROBE_MIME = "application/vnd.course-grader.probe+json"
MAX_PAYLOAD = 50 * 2**20  # bytes of probe JSON accepted from a kernel


@dataclass
class Execution:
    status: str  # "ok" | "error" | "timeout" | "died"
    error_name: str = ""
    error_value: str = ""
    payloads: list = field(default_factory=list)  # decoded probe results, in order
    seconds: float = 0.0


class KernelSession:
    def __init__(self, argv, cwd, env, startup_timeout=60, connection_dir=None):
        # the connection file and IPC sockets live in ``connection_dir``, which must be
        # visible both to the grader and inside the kernel's sandbox (its scratch folder)
        self._spec_dir = Path(tempfile.mkdtemp(prefix="kernel-", dir=connection_dir))
        spec_path = self._spec_dir / "grader-sandbox"
        spec_path.mkdir()
        # interrupts go as control messages: a signal would hit unshare, not the kernel
        (spec_path / "kernel.json").write_text(json.dumps(
            {"argv": argv, "display_name": "grader sandbox", "language": "python",
             "interrupt_mode": "message"}))
        self._spec_manager = KernelSpecManager(kernel_dirs=[str(self._spec_dir)])
        self._cwd, self._env = str(cwd), env
        self._startup_timeout = startup_timeout
        self.manager = self.client = None
        self.restarts = 0

    def start(self):
        self.manager = KernelManager(kernel_name="grader-sandbox",
                                     kernel_spec_manager=self._spec_manager,
                                     transport="ipc",
                                     connection_file=str(self._spec_dir / "connection.json"),
                                     ip=str(self._spec_dir / "ipc"))
        self.manager.start_kernel(cwd=self._cwd, env=self._env)
        self.client = self.manager.client()
        self.client.start_channels()
        try:
            self.client.wait_for_ready(timeout=self._startup_timeout)
        except Exception:  # a kernel that never answered must not outlive the grader
            self.shutdown()
            raise

    def restart(self):
        self.shutdown()
        self.restarts += 1
        self.start()

    def shutdown(self):
        if self.client is not None:
            self.client.stop_channels()
        if self.manager is not None and self.manager.has_kernel:
            self.manager.shutdown_kernel(now=True)
        self.manager = self.client = None

    def alive(self):
        return self.manager is not None and self.manager.is_alive()

    def execute(self, code, timeout):
        """Run ``code`` as a cell; wait at most ``timeout`` seconds, then interrupt it."""
        return self._run(code, {}, timeout)

    def evaluate(self, expression, timeout):
        """Evaluate one expression as a ``user_expression`` of an empty execute request.

        IPython evaluates user expressions with a plain ``eval``: input transformers and
        AST transformers that the student's code installed never see the expression.
        """
        return self._run("", {"value": expression}, timeout)

    def _run(self, code, user_expressions, timeout):
        started = time.monotonic()
        msg_id = self.client.execute(code, store_history=False, allow_stdin=False,
                                     stop_on_error=False, user_expressions=user_expressions)
        result = Execution("ok")
        deadline = started + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                result = self._interrupt(msg_id, result)
                break
            try:
                message = self.client.get_iopub_msg(timeout=min(remaining, 0.5))
            except queue.Empty:
                if not self.alive():
                    result.status = "died"
                    break
                continue
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "error":
                result.status = "error"
                result.error_name, result.error_value = content["ename"], content["evalue"]
            elif kind == "display_data" and PROBE_MIME in content.get("data", {}):
                result.payloads.append(self._decode(content["data"][PROBE_MIME]))
            elif kind == "status" and content["execution_state"] == "idle":
                self._check_reply(msg_id, result)
                break
        result.seconds = time.monotonic() - started
        return result

    def _check_reply(self, msg_id, result):
        """Trust the execute_reply's status too: under memory pressure IPython may fail to
        publish a traceback, and then no error message ever reaches iopub."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                reply = self.client.get_shell_msg(timeout=1)
            except queue.Empty:
                continue
            if reply["parent_header"].get("msg_id") != msg_id:
                continue
            content = reply["content"]
            if content.get("status") != "ok" and result.status == "ok":
                result.status = "error"
                result.error_name = content.get("ename", "error")
                result.error_value = content.get("evalue", "the cell failed")
            return

    def _interrupt(self, msg_id, result):
        """Interrupt a run past its limit; report ``died`` if the kernel will not stop."""
        result.status = "timeout"
        if not self.alive():
            result.status = "died"
            return result
        self.manager.interrupt_kernel()  # a control-channel message (see __init__)
        grace = time.monotonic() + 10
        while time.monotonic() < grace:
            try:
                message = self.client.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            if (message["parent_header"].get("msg_id") == msg_id
                    and message["msg_type"] == "status"
                    and message["content"]["execution_state"] == "idle"):
                return result
        result.error_name = "unresponsive"  # interrupt ignored: the caller must restart
        return result

    @staticmethod
    def _decode(text):
        if not isinstance(text, str) or len(text) > MAX_PAYLOAD:
            return {"status": "malformed", "message": "probe result too large or not text"}
        try:
            return json.loads(text)
        except ValueError:
            return {"status": "malformed", "message": "probe result is not JSON"}
