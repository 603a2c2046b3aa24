"""The grader's side of a student's sandboxed process: objects driven across a boundary.

The student's code lives only in its process. The grader's probes run here, in the
grader's process, and hold :class:`StudentObject` proxies: calling one, reading its
attributes or its length sends a request over the channel, and only the *return value
of the student's own code* comes back, decoded as plain data (numbers, strings, lists,
numpy arrays rebuilt from dtype, shape and bytes) or as another proxy. Nothing the
student's code does in its process can change a probe's logic, its records, or the data
a verdict reads: a reply that lies is a method that returns the lie.

Objects a probe hands to student code stay here and are lent (:mod:`checks.lending`):
mirrored objects are replayed from the transcript each reply and callback carries (and
each ``transcript`` message, which the student's process sends on its own once enough
calls on mirrored objects have piled up), checked call by call; served objects answer
callbacks. A transcript that does not match raises
:class:`TranscriptMismatch`, which costs the check that saw it.

Served methods run here, on arguments the student's code chose: a call whose arguments
are larger than its declaration allows is refused before it runs (:func:`_run`),
and the check's budget is looked at after every served call and every replayed entry
(:meth:`StudentProcess._check_budget`), so no call runs far past it. A call the grader
refuses (too large, or past a recorder's bound: a ``ProbeError``) raises in the
student's code and costs the check, even if that code catches it.

Everything that can go wrong on the student's side ends in :class:`StudentProcessLost`
(it spent its budget, died, or broke the protocol); the process is stopped, and the
caller starts a new one if it wants to go on. Budgets (:mod:`grader.judge.budgets`) count
the CPU time of the whole sandbox (:mod:`grader.judge.sandbox_resources`) and of the
grader's own work here, never the machine's load.
"""

import builtins
import contextlib
import os
import signal
import socket
import subprocess
import threading
import time

from checks.framework import ProbeError, StudentObjectBase, failure_of
from checks.lending import Mirrored, Served, lending_of, oversized
from grader.judge.budgets import Budget, BudgetMeter, BudgetSpent, run_queue_wait
from grader.judge.sandbox import (ISOLATED, isolation_level, sandbox_argv, sandbox_env,
                                  sandbox_request)
from grader.judge.sandbox_forks import TemplateUnavailable, fork_sandbox, template_wanted
from grader.judge.sandbox_resources import MAX_TASKS, sandbox_resources
from grader.judge.sandbox_runtime import wire
from grader.judge.sandbox_runtime.sandbox_init import BUDGET_LINE
from grader.safe_text import printable

STARTUP_BUDGET = 60.0  # CPU seconds to start a sandbox and its server
LIVENESS_INTERVAL = 0.25  # seconds between looks at the budget and the process
STOP_GRACE = 0.5  # seconds a server gets to leave by itself once its channel closes
# what an interrupted call gets to return before its process is ended (a new one is
# started for what follows, so a short grace costs time, never points)
INTERRUPT_GRACE = Budget(2.0, wall_seconds=10.0)
STRAY_ROUNDS = 20  # of ending a sandbox's stray processes, for those that fork meanwhile
_STUDENT_EXCEPTIONS = {}  # name -> a class standing for a student's own exception class
# what a foresight's start sends as objects or values of the student's process
ENCODED_FORESIGHT = ("target", "sample_args", "args")


class StudentProcessLost(BaseException):
    """The student's process timed out, died or broke the protocol, and was stopped.

    A ``BaseException``, so the ``except Exception`` clauses of probes let it through."""

    alive = False  # the process was stopped

    def __init__(self, reason, detail="", spent=None, why=None):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail  # "timeout" | "died" | "protocol"
        self.spent = spent  # timeout: the grader.judge.budgets.BudgetSpent that ended it
        self.why = why  # died: the budget the sandbox broke, in words, when one did


class StudentInterrupted(StudentProcessLost):
    """A call ran past its time limit and was interrupted; the process lives on, with
    whatever the interrupted code had done so far."""

    alive = True

    def __init__(self, spent):
        super().__init__("timeout", "interrupted", spent)


class TranscriptMismatch(ProbeError):
    """The student's calls on a lent object were refused or did not replay."""


class StudentException(Exception):
    """Base of the classes that stand for the student's own exception classes."""


def rebuilt_exception(error):
    """The student's exception as one the probe can catch: a builtin class when the
    student's code raised one (``ValueError``, ``NotImplementedError``...), else a class
    of the same name; never one that is not an ``Exception`` (``SystemExit``...)."""
    name = error.get("type") if isinstance(error, dict) else None
    message = printable(error.get("message", "")) if isinstance(error, dict) else ""
    if not isinstance(name, str) or not name.isidentifier() or len(name) > 80:
        name = "Exception"
    kind = getattr(builtins, name, None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)) or kind is StopIteration:
        kind = _STUDENT_EXCEPTIONS.setdefault(name, type(name, (StudentException,), {}))
    exception = kind(message)
    exception.student_origin = _origin(error.get("origin") if isinstance(error, dict) else None)
    library = error.get("library") if isinstance(error, dict) else None
    # the library whose code raised it, as the student's process tells it: the student's
    # own words could claim any origin, so this only ever costs the student (an error the
    # lesson asks for must be raised by their code)
    exception.raised_in_library = printable(library, 80) if isinstance(library, str) else None
    return exception


def _origin(told):
    """``(function, lesson)`` of the notebook code that raised, as the student's process
    tells it (course/your_work.where_raised), or None: only words for feedback, so only
    short printable names are kept."""
    if not (isinstance(told, list) and len(told) == 2 and all(isinstance(part, str)
                                                               for part in told)):
        return None
    function, lesson = printable(told[0], 80), printable(told[1], 40)
    return (function, lesson) if function else None


class StudentObject(StudentObjectBase):
    """An object in the student's process, as the grader's probes see it."""

    __slots__ = ("_student_process_", "_id", "_callable", "_type", "_methods")

    def __init__(self, process, handle, is_callable, type_name):
        for name, value in (("_student_process_", process), ("_id", handle),
                            ("_callable", is_callable), ("_type", type_name),
                            ("_methods", set())):
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # no protocol lookups (numpy, copy) go across
        if name in self._methods:
            return StudentMethod(self, name)
        value = self._student_process_.apply("getattr", self, name)
        if isinstance(value, StudentObject) and value._callable:
            self._methods.add(name)  # later accesses cost no round trip of their own
            return StudentMethod(self, name)
        return value

    def __setattr__(self, name, value):
        self._student_process_.apply("setattr", self, name, value)

    def __call__(self, *args, **kwargs):
        return self._student_process_.call(self, args, kwargs)

    def __len__(self):
        return _checked(self._student_process_.apply("len", self), int, "len()")

    def __bool__(self):
        return _checked(self._student_process_.apply("bool", self), bool, "bool()")

    def __float__(self):
        return float(_checked(self._student_process_.apply("float", self), float, "float()"))

    def __int__(self):
        return _checked(self._student_process_.apply("int", self), int, "int()")

    def __index__(self):
        return _checked(self._student_process_.apply("index", self), int, "index()")

    def __getitem__(self, key):
        return self._student_process_.apply("getitem", self, key)

    def __setitem__(self, key, value):
        self._student_process_.apply("setitem", self, key, value)

    def __contains__(self, item):
        return _checked(self._student_process_.apply("contains", self, item), bool, "in")

    def __iter__(self):
        items = self._student_process_.apply("list", self)
        return iter(_checked(items, list, "iteration"))

    def __repr__(self):
        return f"<{printable(self._type, 80)} in the student's process>"


class StudentMethod(StudentObjectBase):
    """``obj.name`` for a callable attribute: calling it is one round trip."""

    __slots__ = ("_student_process_", "_owner", "_name")

    def __init__(self, owner, name):
        object.__setattr__(self, "_student_process_", owner._student_process_)
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_name", name)

    def __call__(self, *args, **kwargs):
        return self._student_process_.call(self._owner, args, kwargs, method=self._name)

    def __repr__(self):
        return f"<method {printable(self._name, 80)} in the student's process>"


def _checked(value, kind, what):
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{what} of the student's object gave {type(value).__name__}, "
                        f"not {kind.__name__}")
    if kind is int and what == "len()" and value < 0:
        raise ValueError("len() of the student's object is negative")
    return value


def _plain_only(node):
    raise wire.WireError("only plain data may be passed to the grader's objects")


class StudentProcess:
    """A sandboxed student server and the channel to it."""

    def __init__(self, scratch, memory_mb, disk_mb, isolate=True, max_tasks=MAX_TASKS):
        self.scratch, self.memory_mb, self.disk_mb = scratch, memory_mb, disk_mb
        self.max_tasks = max_tasks
        self.isolation = isolation_level(isolate)
        self._isolate = isolate
        self._popen = self._channel = self._log = None
        self.resources = None  # the running sandbox's budgets (judge.sandbox_resources)
        self._cpu_retired = 0.0  # CPU seconds of sandboxes already stopped
        self.last_exit_reason = None  # the budget the last sandbox broke, if it broke one
        self._log_text = ""  # what the last sandbox's launcher and init wrote
        self._meter = None  # the budget being spent (grader.judge.budgets.BudgetMeter)
        self.budgets_held = None  # what held the last sandbox's budgets (for reports)
        self._next_id = 0
        self._lent = {}  # lend id -> (original object, declaration)
        self._lend_ids = {}  # id(original) -> lend id
        self._foresight = {}  # lend id -> Foresight (answers sent ahead, answers used)
        self._deferred = []  # (description, call) sent with the next request: see defer()
        self._changed_arguments = []  # what calls changed of their inputs: see take_...
        self.restarts = -1

    # --- life ----------------------------------------------------------------------------
    def start(self):
        parent, child = socket.socketpair()
        self.resources = sandbox_resources(self.memory_mb, self.max_tasks)
        argv, cwd = sandbox_argv(self.scratch, child.fileno(), self.memory_mb, self.disk_mb,
                                 self._isolate, self.resources)
        self._log = open(self.scratch.root / "launcher.log", "w+b")
        try:
            self._popen = self._forked(child) or \
                subprocess.Popen(argv, cwd=cwd, env=sandbox_env(self.scratch),
                                 stdin=subprocess.DEVNULL, stdout=self._log,
                                 stderr=self._log, pass_fds=(child.fileno(),),
                                 # its own session: no terminal, one signal ends the group
                                 start_new_session=True)
        except OSError:
            parent.close()
            self.stop()  # the cgroup goes too
            raise
        finally:
            child.close()
        self.resources.attach(self._popen.pid)
        self.budgets_held = self.resources.held_by(self.memory_mb, self.max_tasks,
                                                   has_init=self.isolation == ISOLATED)
        self._channel = wire.Channel(parent, wire.TO_SANDBOX, wire.FROM_SANDBOX)
        self.restarts += 1
        try:
            with self.budget(STARTUP_BUDGET):
                self._request({"op": "hello"})
        except StudentProcessLost as lost:
            why = printable(lost.why or self._log_text)
            raise RuntimeError(f"the sandbox did not start ({lost}){': ' + why if why else ''}")

    def _forked(self, channel):
        """The sandbox forked from this grader's template (``sandbox_forks``), where
        sandboxes are isolated with namespaces and the template runs; else None."""
        if self.isolation != ISOLATED or not template_wanted():
            return None
        request = sandbox_request(self.scratch, self.memory_mb, self.disk_mb,
                                  self.resources)
        try:
            return fork_sandbox(request, channel.fileno(), self._log.fileno())
        except TemplateUnavailable:
            return None  # started afresh instead: slower, as isolated

    def stop(self):
        """End the sandbox and every process in it; return when they are gone."""
        if self._channel is not None:
            self._channel.close()  # an idle server reads EOF and leaves
            self._channel = None
        if self._popen is not None:
            try:
                self._popen.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self._kill()
            self._popen = None
        self._log_text = ""
        if self._log is not None:
            self._log.seek(0)
            self._log_text = self._log.read(4000).decode(errors="replace").strip()
            self._log.close()
            self._log = None
        if self.resources is not None:
            self._cpu_retired += self.resources.cpu_seconds()
            self.last_exit_reason = self.resources.exceeded() or _init_reason(self._log_text)
            self.resources.close()
            self.resources = None
        self._lent.clear()
        self._lend_ids.clear()
        self._deferred.clear()

    def _kill(self):
        init = self._sandbox_init_pid()
        if init is not None:  # PID 1 of the namespace: the kernel ends all the rest
            with contextlib.suppress(ProcessLookupError):
                os.kill(init, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._popen.wait(5)  # unshare leaves once its child, the init, is gone
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._popen.pid, signal.SIGKILL)
        self._popen.wait()

    def _sandbox_init_pid(self):
        if self.isolation != ISOLATED:
            return None
        try:
            with open(f"/proc/{self._popen.pid}/task/{self._popen.pid}/children") as handle:
                children = handle.read().split()
        except OSError:
            return None
        return int(children[0]) if children else None

    def alive(self):
        return self._popen is not None and self._popen.poll() is None

    def end_strays(self):
        """End every process of the sandbox but its own (unshare, the init, the student
        server): nothing a cell or a check starts outlives it, so a process left running
        by one cannot spend the budget of the next. Returns how many were ended."""
        server = self._server_pid()
        if server is None or self.resources is None:
            return 0
        keep, ended = {self._popen.pid, self._sandbox_init_pid(), server}, set()
        for _ in range(STRAY_ROUNDS):  # what forks while it is being ended is ended next
            strays = self.resources.member_pids() - keep
            if not strays:
                break
            for pid in strays:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            ended |= strays
        return len(ended)

    def cpu_seconds(self):
        """CPU time of every sandbox this process has had, and of the grading thread."""
        running = self.resources.cpu_seconds() if self.resources is not None else 0.0
        return self._cpu_retired + running + time.thread_time()

    def run_queue_waits(self):
        """Seconds the student's processes (those alive now) and the grading thread have
        waited for a CPU: the machine's load, which no backstop counts as the code's. The
        launcher and the init are left out: the init wakes every 50 ms to count, and
        its waits would make a sleeping sandbox look busy."""
        try:
            members = self.resources.member_pids() if self.resources is not None else set()
        except OSError:  # the sandbox and its group are being removed
            members = set()
        if self._popen is not None:
            members -= {self._popen.pid, self._sandbox_init_pid()}
        return (sum(run_queue_wait(pid) for pid in members)
                + run_queue_wait(os.getpid(), threading.get_native_id()))

    @contextlib.contextmanager
    def budget(self, cpu_seconds):
        """Every request inside is answered within ``cpu_seconds`` of CPU time (a
        :class:`~grader.judge.budgets.Budget`, or a number of seconds); yields the meter
        that says what was spent."""
        budget = cpu_seconds if isinstance(cpu_seconds, Budget) else Budget(cpu_seconds)
        meter = BudgetMeter(budget, self.cpu_seconds, self.run_queue_waits)
        previous, self._meter = self._meter, meter
        try:
            yield meter
        finally:
            meter.stop()
            self._meter = previous

    def _check_budget(self, force=False):
        """Raise BudgetSpent when the budget being spent has run out."""
        if self._meter is not None:
            self._meter.check(force)

    def _stop_if_spent(self):
        """Stop the process if the budget is spent (between two calls the grader runs for
        it while it waits: replayed entries)."""
        try:
            self._check_budget()
        except BudgetSpent as spent:
            raise self._lost("timeout", spent=spent) from None

    def _lost(self, reason, detail="", spent=None):
        self.stop()
        return StudentProcessLost(reason, detail, spent,
                                  self.last_exit_reason if reason == "died" else None)

    # --- requests ------------------------------------------------------------------------
    def run_cell(self, source):
        """Run a cell's code; ``{"status": "ok"}`` or ``{"status": "error", "type",
        "message"}`` (its exception)."""
        outcome = self._course_request({"op": "run_cell", "source": source}, "running a cell")
        if not isinstance(outcome, dict) or outcome.get("status") not in ("ok", "error"):
            raise self._lost("protocol", "a cell's outcome could not be read")
        return {key: printable(value) for key, value in outcome.items()}

    def lookup(self, names):
        """``{name: value}`` of the names the student's notebook defines."""
        found = self._course_request({"op": "lookup", "names": list(names)},
                                     "looking names up")
        if not isinstance(found, dict):
            raise self._lost("protocol", "a lookup's answer could not be read")
        return {name: value for name, value in found.items() if name in names}

    def seed(self, seed):
        """Seed the student process's global generators (``random``, ``np.random``)."""
        self._course_request({"op": "seed", "seed": int(seed)}, "seeding")

    def forget(self):
        """Drop every reference and lent object of the last check, on both sides (and the
        deferred calls not sent yet: nothing of that check reads what they would do)."""
        self._deferred.clear()
        self._course_request({"op": "forget"}, "forgetting a check's objects")
        self._lent.clear()
        self._lend_ids.clear()
        self._foresight.clear()
        self._changed_arguments.clear()

    def call(self, target, args, kwargs, method=None, by_ref=False):
        return self._request({"op": "call", "target": self._encode(target),
                              "method": method, "args": self._encode(list(args)),
                              "kwargs": self._encode(dict(kwargs)), "by_ref": by_ref})

    def call_repeatedly(self, function, times, args, kwargs):
        """``[function(*args, **kwargs) for _ in range(times)]`` in one round trip, for a
        ``function`` of this process (a :class:`StudentMethod` or a callable
        :class:`StudentObject`); the first call that raises ends it, and raises here."""
        if isinstance(function, StudentMethod):
            target = object.__getattribute__(function, "_owner")
            method = object.__getattribute__(function, "_name")
        else:
            target, method = function, None
        return self._request({"op": "call_repeatedly", "times": int(times),
                              "target": self._encode(target), "method": method,
                              "args": self._encode(list(args)),
                              "kwargs": self._encode(dict(kwargs))})

    def call_sequence(self, calls, keep, foresee=None):
        """Calls ``[(target, method, args, kwargs)]`` made one after another in one round
        trip: ``(results, foreseen)``, the results of the calls whose index is in ``keep``
        (ended by ``{"raised": class name}`` at a call that raised), and, with
        ``foresee`` (a dict: ``id``, ``until``, and to start one, ``start``, ``target``
        and what its ``kind`` needs), the next answers of that foresight, a list, or None
        (see the student server's ``op_call_sequence`` and ``ForkAhead``)."""
        request = {"op": "call_sequence", "calls": [self._call_node(*call) for call in calls],
                   "keep": list(keep)}
        if foresee:
            request["foresee"] = {key: self._encode(value) if key in ENCODED_FORESIGHT
                                  else value for key, value in foresee.items()}
        reply = self._request(request)
        if not (isinstance(reply, dict) and isinstance(reply.get("results"), list)):
            raise self._lost("protocol", "a sequence's answers could not be read")
        foreseen = reply.get("foreseen")
        return reply["results"], foreseen if isinstance(foreseen, list) else None

    def generators(self, restore=False):
        """Keep the student's process's global generators' states, or put them back."""
        self._course_request({"op": "generators", "restore": bool(restore)},
                             "keeping the generators")

    def _call_node(self, target, method, args, kwargs):
        return {"target": self._encode(target), "method": method,
                "args": self._encode(list(args)), "kwargs": self._encode(dict(kwargs))}

    def defer(self, description, target, args, kwargs, method=None):
        """Call ``target`` (its ``method``) for its effect only: the call is sent with the
        next request, ahead of it, which saves a round trip per call (a replay buffer's
        ``add`` before each ``sample``). If it raises, that request is not run and raises
        a ProbeError naming the call by its ``description`` (with no description, what the
        call raised, as the call itself would have raised it)."""
        self._deferred.append((description, self._call_node(target, method, args, kwargs)))

    def apply(self, function, *args, by_ref=False):
        return self._request({"op": "apply", "function": function,
                              "args": self._encode(list(args)), "by_ref": by_ref})

    def public(self, function):
        """The course's public ``function`` (of a ``course.`` module) as the student's
        process imports it, as a :class:`StudentObject` to call there."""
        return self._course_request({"op": "apply", "function": "public",
                                     "args": [function.__module__, function.__qualname__],
                                     "by_ref": True}, "finding the course's code")

    def keep(self, value):
        """A copy of ``value`` kept in the student's process, as a :class:`StudentObject`."""
        return self._request({"op": "keep", "value": self._encode(value)})

    def _course_request(self, message, doing):
        """A request for the grader's own work (not a call of the student's code): if it
        raises in there, the student's code broke the server's machinery (patched its
        objects or builtins), and the process is stopped as one that broke the protocol,
        never an error of the grader's."""
        try:
            return self._request(message)
        except (StudentProcessLost, TranscriptMismatch):
            raise
        except Exception as error:
            raise self._lost("protocol", f"{doing} failed in there: {type(error).__name__}: "
                             f"{printable(error, 200)}") from None

    def _request(self, message):
        if self._channel is None:
            raise StudentProcessLost("died", "the process is not running")
        self._next_id += 1
        message["id"] = self._next_id
        deferred, self._deferred = self._deferred, []
        if deferred:
            message["deferred"] = [call for _, call in deferred]
        self._send(message)
        poisoned = None  # a refused transcript: answer callbacks with errors until the reply
        while True:
            try:
                incoming = self._receive()
            except BudgetSpent as spent:
                self._interrupt(message["id"], spent)
            transcript = incoming.get("transcript", [])
            if incoming.get("op") == "transcript":  # calls on mirrored objects, sent on
                poisoned = poisoned or self._refused(transcript, message["id"])  # their
                continue  # own: replay, go on
            if incoming.get("op") == "callback":
                poisoned = poisoned or self._refused(transcript, message["id"])
                try:
                    poisoned = self._answer_callback(incoming, poisoned) or poisoned
                except BudgetSpent as spent:
                    self._interrupt(message["id"], spent)
                continue
            if incoming.get("op") != "reply" or incoming.get("id") != message["id"]:
                raise self._lost("protocol", "a message arrived out of turn")
            poisoned = poisoned or self._replay(transcript)
            if poisoned:
                raise TranscriptMismatch(poisoned)
            self._note_changed_arguments(incoming.get("changed"), deferred)
            if "error" in incoming:
                failed = incoming.get("deferred")
                if type(failed) is int and 0 <= failed < len(deferred) \
                        and deferred[failed][0] is not None:
                    raise _deferred_failure(deferred[failed][0], incoming["error"])
                raise rebuilt_exception(incoming["error"])
            try:
                return wire.decode(incoming.get("value"), self._reference, _plain_only)
            except wire.WireError as error:
                raise self._lost("protocol", f"a reply could not be read: {error}") from None

    def _refused(self, transcript, request_id):
        """:meth:`_replay` of a transcript that came before the reply; when it refuses the
        transcript, the student's process is told to stop the request's run (it raises
        in the student's code at its next transcript), which can no longer change what
        the check says: a refused loop does not run on to its end."""
        refusal = self._replay(transcript)
        if refusal:
            self._send({"op": "stop", "id": request_id, "why": printable(refusal, 300)})
        return refusal

    def _note_changed_arguments(self, changed, deferred):
        """Keep what the reply says the calls changed of their arguments, as (the deferred
        call's description, or None for the request's own call; the argument's position
        or keyword): read as words only, a few at most."""
        if not isinstance(changed, list):
            return
        for entry in changed[:16]:
            if not (isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int):
                continue
            which, where = entry
            if type(where) is int and 0 <= where < 64:
                pass
            elif isinstance(where, str):
                where = printable(where, 40)
            else:
                continue
            description = deferred[which][0] if 0 <= which < len(deferred) else None
            self._changed_arguments.append((description, where))

    def take_changed_arguments(self):
        """[(description or None, argument)] of the calls since the last take that changed
        an array or list they were given (checks.framework holds calls to it)."""
        changed, self._changed_arguments = self._changed_arguments, []
        return changed

    def _send(self, message):
        # a process that does not read its channel spends no CPU on it: only the wall
        # backstop can end that wait
        deadline = self._meter.wall_deadline() if self._meter is not None else None
        try:
            self._channel.send(message, deadline)
        except wire.ChannelTimeout:
            meter = self._meter
            cpu, wall = meter.used()
            raise self._lost("timeout", spent=BudgetSpent("wall", meter.budget, cpu,
                                                          wall)) from None
        except wire.ChannelClosed:
            raise self._lost("died") from None

    def _interrupt(self, request_id, spent):
        """Interrupt the call that spent its budget (SIGINT: KeyboardInterrupt in the
        student's code) and wait a little for its reply; raise StudentInterrupted if it
        came, else stop the process (it ignores interrupts) and raise
        StudentProcessLost."""
        server = self._server_pid()
        if server is None:
            raise self._lost("timeout", spent=spent)
        with contextlib.suppress(ProcessLookupError):
            os.kill(server, signal.SIGINT)
        # budget() puts the caller's meter back
        self._meter = BudgetMeter(INTERRUPT_GRACE, self.cpu_seconds, self.run_queue_waits)
        while True:
            try:
                incoming = self._receive()
            except BudgetSpent:
                raise self._lost("timeout", spent=spent) from None
            if incoming.get("op") == "callback":  # the code goes on: tell it to stop
                self._send({"op": "callback_reply", "id": incoming.get("id"),
                            "error": {"type": "KeyboardInterrupt", "message": "time is up"}})
            elif incoming.get("op") == "transcript":
                continue  # the check is over: what its calls did no longer matters
            elif incoming.get("op") == "reply" and incoming.get("id") == request_id:
                raise StudentInterrupted(spent)
            else:
                raise self._lost("protocol", "a message arrived out of turn")

    def _server_pid(self):
        """The host's number of the student server process, or None."""
        if self._popen is None:
            return None
        if self.isolation != ISOLATED:
            return self._popen.pid  # the launcher became the server
        init = self._sandbox_init_pid()
        try:
            with open(f"/proc/{init}/task/{init}/children") as handle:
                children = handle.read().split()
        except (OSError, TypeError):
            return None
        return int(children[0]) if children else None

    def _receive(self):
        while True:
            try:
                return self._channel.receive(time.monotonic() + LIVENESS_INTERVAL)
            except wire.ChannelTimeout:
                self._check_budget(force=True)  # raises BudgetSpent
                if not self.alive():
                    raise self._lost("died") from None
            except wire.ChannelClosed:
                raise self._lost("died") from None
            except wire.WireError as error:
                raise self._lost("protocol", str(error)) from None

    # --- values --------------------------------------------------------------------------
    def _reference(self, node):
        handle = node.get("id")
        if not isinstance(handle, int) or isinstance(handle, bool):
            raise wire.WireError("a reference without a number")
        type_name = node.get("type")
        return StudentObject(self, handle, node.get("callable") is True,
                             type_name if isinstance(type_name, str) else "object")

    def _encode(self, value):
        return wire.encode(value, self._encode_object)

    def _encode_object(self, value):
        if isinstance(value, StudentObject):
            if value._student_process_ is not self:
                raise ValueError("an object of another student's process")
            return {"$": "ref", "id": value._id}
        declaration = lending_of(value)
        if declaration is None:
            raise TypeError(f"the grader cannot lend its {type(value).__name__} to student "
                            "code (it has no lending declaration)")
        lend_id = self._lend_ids.get(id(value))
        node = {"$": "lend"}
        if lend_id is None:
            lend_id = len(self._lent) + 1
            self._lend_ids[id(value)] = lend_id
            self._lent[lend_id] = (value, declaration)
            node.update(self._declaration(declaration, value))
        node["id"] = lend_id
        if isinstance(declaration, Mirrored) and declaration.pushed:
            node["push"] = self._encode({name: getattr(value, name)
                                         for name in declaration.pushed})
        return node

    def _declaration(self, declaration, value):
        if isinstance(declaration, Mirrored):
            return {"kind": "mirror", "logged": list(declaration.logged),
                    "settable": list(declaration.settable),
                    "calls": None if declaration.calls is None else list(declaration.calls),
                    "recipe": {"module": declaration.module, "name": declaration.name,
                               "args": self._encode(list(declaration.args)),
                               "kwargs": self._encode(dict(declaration.kwargs))}}
        node = {"kind": "serve", "remote": list(declaration.remote),
                "deferred": list(declaration.deferred), "readable": list(declaration.readable),
                "settable": list(declaration.settable), "type": type(value).__name__}
        return node

    # --- lent objects --------------------------------------------------------------------
    def _replay(self, transcript):
        """Apply the student's calls on lent objects to the originals, in order, checking
        mirrored answers; the reason the transcript is refused, or None."""
        if not isinstance(transcript, list):
            raise self._lost("protocol", "a transcript is not a list")
        for entry in transcript:
            try:
                self._replay_one(entry)
            except TranscriptMismatch as refused:
                return str(refused)
            except wire.WireError as error:
                return f"your code passed the grader's objects something it cannot use: {error}"
            finally:
                self._stop_if_spent()
        return None

    def _replay_one(self, entry):
        if not (isinstance(entry, list) and len(entry) == 6):
            raise wire.WireError("a transcript entry of the wrong shape")
        lend_id, kind, name, args, kwargs, outcome = entry
        original, declaration = self._lent.get(lend_id, (None, None))
        if declaration is None or not isinstance(name, str):
            raise wire.WireError("a call on an object the grader did not lend")
        what = f"{type(original).__name__}.{name}"
        args = wire.decode(args, _plain_only, _plain_only)
        kwargs = wire.decode(kwargs, _plain_only, _plain_only)
        if not isinstance(args, list) or not isinstance(kwargs, dict) or not all(
                isinstance(key, str) for key in kwargs):
            raise wire.WireError("arguments of the wrong shape")
        if kind == "answered":
            self._replay_answered(lend_id, original, declaration, what, name, args, kwargs,
                                  outcome)
            return
        if kind == "set":
            if name not in declaration.settable or len(args) != 1 or kwargs:
                raise TranscriptMismatch(f"your code may not set {what}")
            try:
                setattr(original, name, args[0])
            except ProbeError as refused:  # the original checks what it is set to
                raise TranscriptMismatch(str(refused)) from None
            except Exception as error:
                raise TranscriptMismatch(f"your code set {what}, which raised "
                                         f"{type(error).__name__}: {printable(error, 200)}")
            return
        allowed = declaration.logged if isinstance(declaration, Mirrored) else \
            declaration.deferred
        if kind != "call" or name not in allowed:
            raise TranscriptMismatch(f"your code may not call {what} that way")
        try:
            result, raised = _run(original, declaration, name, args, kwargs), None
        except ProbeError as refused:  # the original checks its calls: this one is refused
            raise TranscriptMismatch(str(refused)) from None
        except Exception as error:
            result, raised = None, error
        if isinstance(declaration, Served):
            if raised is not None:
                raise TranscriptMismatch(f"{what}({_shown(args)}) raised "
                                         f"{type(raised).__name__}: {printable(raised, 200)}")
            return
        self._compare(what, args, outcome, result, raised)

    def _replay_answered(self, lend_id, original, declaration, what, name, args, kwargs,
                         outcome):
        """A predicted method's call that the student's process answered from what the
        grader sent ahead: run on the original now, and refused unless its answer is the
        one the student's code was given."""
        if not isinstance(declaration, Served) or name not in declaration.predicted:
            raise TranscriptMismatch(f"your code may not call {what} that way")
        try:
            result = _run(original, declaration, name, args, kwargs)
        except ProbeError as refused:  # the original checks its calls: this one is refused
            raise TranscriptMismatch(str(refused)) from None
        except Exception as error:
            raise TranscriptMismatch(f"{what}({_shown(args)}) raised {type(error).__name__}: "
                                     f"{printable(error, 200)}") from None
        given = outcome.get("value") if isinstance(outcome, dict) else None
        if not _same_value(wire.encode(result, _plain_only), given):
            raise TranscriptMismatch(
                f"the grader's {what}({_shown(args)}) gives {printable(repr(result), 120)}, "
                "but your code's process answered it otherwise")
        self._foresight.setdefault(lend_id, Foresight()).used += 1

    @staticmethod
    def _compare(what, args, outcome, result, raised):
        copy_says = outcome if isinstance(outcome, dict) else {}
        if raised is not None:
            if copy_says.get("raised") != type(raised).__name__:
                raise TranscriptMismatch(
                    f"{what}({_shown(args)}) raised {type(raised).__name__} for the grader, "
                    "but your code's copy of it did not: did your code change its copy?")
            return
        if "digest" in copy_says:  # a large answer (a sampled batch): its bytes' digest
            same = copy_says["digest"] is not None and wire.digest(result) == copy_says["digest"]
        else:
            same = "value" in copy_says and wire.loosely_equal(result, copy_says["value"])
        if not same:
            raise TranscriptMismatch(
                f"the grader's {what}({_shown(args)}) gave {printable(repr(result), 120)}, "
                "but your code's copy of it answered otherwise: did your code change the "
                "copy (or its random generator) instead of calling it?")

    def _answer_callback(self, incoming, poisoned):
        """Run a served call and answer it; the grader's refusal of the call (which costs
        the check, whatever the student's code does with the error it gets), or None."""
        reply, refusal = {"op": "callback_reply", "id": incoming.get("id")}, None
        try:
            if poisoned:
                raise RuntimeError(f"the grader stopped this call: {poisoned}")
            value = self._served_call(incoming)
            reply["value"] = wire.encode(value, _plain_only)
            ahead = self._answers_ahead(incoming, value)
            if ahead:
                reply["ahead"] = ahead
        except StudentProcessLost:
            raise
        except wire.WireError as error:
            raise self._lost("protocol", str(error)) from None
        except ProbeError as refused:  # too large, or past a recorder's bound
            refusal = printable(refused, 500)
            reply["error"] = {"type": "RuntimeError", "message": refusal}
        except Exception as error:  # raised by the grader's object: student code sees it
            reply.pop("value", None)
            reply["error"] = {"type": type(error).__name__, "message": str(error)[:500]}
        self._send(reply)
        self._check_budget()  # code that calls back without end never waits: look here too
        return refusal

    def _answers_ahead(self, incoming, value):
        """What the served object would answer to the calls an honest loop makes next
        (its ``answers_ahead``), as the student's process logs those calls, for a
        predicted method; nothing once too few of the answers sent were used (a loop
        that goes its own way), or when the object foresees nothing."""
        lend_id, name = incoming.get("lend"), incoming.get("name")
        original, declaration = self._lent.get(lend_id, (None, None))
        if not isinstance(declaration, Served) or name not in declaration.predicted:
            return None
        foresight = self._foresight.setdefault(lend_id, Foresight())
        if not foresight.worth_it():
            return None
        ahead = []
        try:
            args = wire.decode(incoming.get("args"), _plain_only, _plain_only)
            kwargs = wire.decode(incoming.get("kwargs"), _plain_only, _plain_only)
            for before, call_args, call_kwargs, answer in original.answers_ahead(
                    name, args, kwargs, value):
                entries = [self._foreseen_entry(*call) for call in before]
                if None in entries:
                    break
                ahead.append({"before": entries,
                              "args": wire.encode(list(call_args), _plain_only),
                              "kwargs": wire.encode(dict(call_kwargs), _plain_only),
                              "value": wire.encode(answer, _plain_only)})
        except Exception:  # noqa: BLE001 - foresight only saves waits: without it, none
            return None
        foresight.sent += len(ahead)
        return ahead

    def _foreseen_entry(self, target, method, args, kwargs, result):
        """The transcript entry the student's process writes for ``target.method(*args,
        **kwargs)`` (``result``: what a logged method returns; None for a deferred one),
        or None when ``target`` is not lent."""
        lend_id = self._lend_ids.get(id(target))
        if lend_id is None:
            return None
        outcome = None if result is None else {"value": wire.loose(result)}
        return [lend_id, "call", method, wire.encode(list(args), _plain_only, numbers=True),
                wire.encode(dict(kwargs), _plain_only, numbers=True), outcome]

    def _served_call(self, incoming):
        original, declaration = self._lent.get(incoming.get("lend"), (None, None))
        name = incoming.get("name")
        args = wire.decode(incoming.get("args"), _plain_only, _plain_only)
        kwargs = wire.decode(incoming.get("kwargs"), _plain_only, _plain_only)
        if not isinstance(declaration, Served) or not isinstance(args, list) \
                or not isinstance(kwargs, dict):
            raise wire.WireError("a callback to an object the grader did not serve")
        if name == "__getattr__":
            if len(args) != 1 or args[0] not in declaration.readable:
                raise AttributeError("that attribute is not readable")
            return getattr(original, args[0])
        if name not in declaration.remote:
            raise AttributeError(f"{name!r} cannot be called on the grader's object")
        if name == "__len__":
            return len(original)
        return _run(original, declaration, name, args, kwargs)


def _same_value(encoded, given):
    """Whether two encoded values are the same value of the same type (an int is not a
    float nor a bool; NaN is NaN)."""
    if type(encoded) in wire.SCALARS or type(given) in wire.SCALARS:
        return type(encoded) is type(given) and (encoded == given or encoded != encoded
                                                 and given != given)
    return wire.canonical(encoded) == wire.canonical(given)


class Foresight:
    """How many answers the grader sent ahead for one served object, and how many the
    student's code used: past TRIAL answers sent, more are sent only while at least half
    of them were used (a loop that never takes them costs the grader little foresight)."""

    TRIAL = 64

    def __init__(self):
        self.sent = self.used = 0

    def worth_it(self):
        return self.sent < self.TRIAL or 2 * self.used >= self.sent


def _run(original, declaration, name, args, kwargs):
    """``original.name(*args, **kwargs)`` for student code: the one place where the
    grader runs a lent object's method on arguments the student's code chose. A served
    call whose arguments are larger than its declaration allows is refused (ProbeError)
    before it runs."""
    if isinstance(declaration, Served):
        refusal = oversized(declaration, original, name, args, kwargs)
        if refusal:
            raise ProbeError(refusal)
    return getattr(original, name)(*args, **kwargs)


def _init_reason(log_text):
    """Why the sandbox's init ended it, from the launcher's log (which only the init and
    the launcher write), or None."""
    for line in log_text.splitlines():
        if line.startswith(BUDGET_LINE):
            return printable(line[len(BUDGET_LINE):], 300)
    return None


def _deferred_failure(description, error):
    """The ProbeError of a deferred call that raised ``error`` (as ``call_student`` words
    it for a call made at once)."""
    return failure_of(description, rebuilt_exception(error))


def _shown(args):
    return printable(", ".join(repr(arg) for arg in args), 120)
