"""The student's side of grading: run the notebook's cells, answer the grader's calls.

Started by the sandbox's init with the channel to the grader on a file descriptor. Before
any student code runs it points stdin, stdout and stderr at /dev/null, so a submission
can neither write to the grader's terminal nor find a stream shared with it, and it
keeps the channel out of every program a submission may start.

The grader sends requests (run a cell, look up a name, call an object, ...); this server
answers each with a reply. Objects that are not plain data stay here and cross as
numbered references. Objects the grader lends to student code arrive as *mirrors* (a
copy built here from a recipe, whose calls are written to a transcript that the grader
replays on its own object and checks) or as *served* proxies (whose methods call back
into the grader, or are queued in the transcript when they return nothing).

Nothing this process says is trusted: the grader reads every reply as plain data, and
only as the result of the call it asked for. This file serves honest submissions; it is
not a wall, and a submission may rewrite all of it without gaining anything.
"""

import builtins
import collections
import contextlib
import functools
import importlib
import itertools
import operator
import os
import random
import select
import signal
import sys
import types

import numpy as np

import wire

try:  # the course's comparison of arguments before and after a call
    from course import unchanged_arguments
except ImportError:  # a sandbox without the course's helpers: nothing compared
    unchanged_arguments = None

MAX_MESSAGE_TEXT = 500  # characters of an exception's message that are sent
# entries of calls on mirrored objects sent in one message (a corridor step is ~60 bytes,
# so a batch stays far below the channel's 1 MiB limit on what the sandbox sends)
TRANSCRIPT_BATCH = 512
# ... and at most about this many bytes of arrays in their arguments (an optimizer step's
# gradients are 37 KB: seven of them a message, a quarter of the limit)
TRANSCRIPT_BYTES = 2**18


def _bytes_in(node):
    """About how many bytes the arrays of an encoded value hold."""
    if type(node) is list:
        return sum(_bytes_in(item) for item in node if type(item) in (list, dict))
    if type(node) is dict:
        data = node.get("data")
        if type(data) is bytes:
            return len(data)
        return sum(_bytes_in(item) for item in node.get("items", ()) if type(item) in (list, dict))
    return 0


def _describe(error, called=None):
    described = {"type": type(error).__name__, "message": str(error)[:MAX_MESSAGE_TEXT]}
    origin = _origin(error, called)
    if origin is not None:
        described["origin"] = list(origin)
    library = _library_that_raised(error)
    if library is not None:
        described["library"] = library
    return described


def _library_that_raised(error):
    """The module (a library's) whose code raised ``error``, when no notebook code did."""
    try:
        from course.your_work import library_that_raised

        return library_that_raised(error)
    except Exception:  # noqa: BLE001 - a fact for one verdict, never a reason to fail
        return None


def _origin(error, called):
    """(function, lesson) of the notebook code that raised ``error``, when it is not
    ``called``, the code the grader called (so feedback can name it); None when it is, or
    unknown."""
    try:
        from course.your_work import where_raised

        return where_raised(error, called)
    except Exception:  # noqa: BLE001 - words for feedback, never a reason to fail
        return None


def _rebuild_error(error):
    """An exception of the grader's (a served method raised) to raise in student code."""
    name = str(error.get("type", "RuntimeError")) if isinstance(error, dict) else "RuntimeError"
    message = str(error.get("message", "")) if isinstance(error, dict) else ""
    kind = getattr(builtins, name, None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind, message = RuntimeError, f"{name}: {message}"
    return kind(message)


NOT_FORESEEN = object()  # a call the grader's answers ahead do not cover


def _exact_key(entry):
    """A string equal for two transcript entries (or calls) exactly when they are equal
    value for value and type for type (1, 1.0 and True differ; NaN equals NaN). Both
    sides build entries the same way (lists, dicts in one order, plain scalars, bytes),
    so ``repr`` is such a key, at half the cost of canonical JSON."""
    return repr(entry)


def _refuse_object(value):
    raise TypeError(f"only plain data (numbers, strings, lists, numpy arrays) can be passed "
                    f"to the grader's objects, not {type(value).__name__}")


class Mirror:
    """Student code's copy of a grader object: calls to its logged methods and sets of
    its settable attributes go to the transcript; everything else reads the copy."""

    __slots__ = ("_mirror", "_calls")

    def __init__(self, server, lend_id, shadow, logged, settable, calls=None):
        object.__setattr__(self, "_mirror", (server, lend_id, shadow, frozenset(logged),
                                             frozenset(settable)))
        # the methods code may call besides the logged ones (None: any)
        object.__setattr__(self, "_calls", None if calls is None else tuple(calls))

    @property
    def __class__(self):  # isinstance(env, gym.Env) holds for the copy too
        return type(object.__getattribute__(self, "_mirror")[2])

    def __getattr__(self, name):
        server, lend_id, shadow, logged, _ = object.__getattribute__(self, "_mirror")
        value = getattr(shadow, name)
        calls = object.__getattribute__(self, "_calls")
        if calls is not None and name not in logged and name not in calls and callable(value):
            allowed = ", ".join(f"{method}()" for method in (*sorted(logged), *calls))
            raise AttributeError(f"code may call only {allowed} of the {type(shadow).__name__}"
                                 f" the grader lent it, not {name}()")
        if name in logged and callable(value):
            def logged_call(*args, **kwargs):
                return server.logged_call(lend_id, name, value, args, kwargs)
            return logged_call
        return value

    def __setattr__(self, name, value):
        server, lend_id, shadow, _, settable = object.__getattribute__(self, "_mirror")
        if name not in settable:
            raise AttributeError(f"code may not set {name!r} on the {type(shadow).__name__} "
                                 "the grader lent it")
        setattr(shadow, name, value)
        server.log(lend_id, "set", name, (value,), {}, None)

    def __call__(self, *args, **kwargs):
        server, lend_id, shadow, logged, _ = object.__getattribute__(self, "_mirror")
        if "__call__" in logged:
            return server.logged_call(lend_id, "__call__", shadow, args, kwargs)
        return shadow(*args, **kwargs)

    def __len__(self):
        return len(object.__getattribute__(self, "_mirror")[2])

    def __repr__(self):
        return repr(object.__getattribute__(self, "_mirror")[2])


class Served:
    """A grader object student code reaches through the channel, method by method."""

    __slots__ = ("_served",)

    def __init__(self, server, lend_id, declaration):
        object.__setattr__(self, "_served", (server, lend_id, declaration))

    def __getattr__(self, name):
        server, lend_id, declaration = object.__getattribute__(self, "_served")
        if name in declaration["remote"]:
            return lambda *args, **kwargs: server.callback(lend_id, name, args, kwargs)
        if name in declaration["deferred"]:
            def deferred(*args, **kwargs):
                server.log(lend_id, "call", name, args, kwargs, None)
            return deferred
        if name in declaration["readable"]:
            return server.callback(lend_id, "__getattr__", (name,), {})
        raise AttributeError(f"the {declaration['type']} the grader lent has no attribute "
                             f"{name!r} that code may use")

    def __setattr__(self, name, value):
        server, lend_id, declaration = object.__getattribute__(self, "_served")
        if name not in declaration["settable"]:
            raise AttributeError(f"code may not set {name!r} on the {declaration['type']} "
                                 "the grader lent it")
        server.log(lend_id, "set", name, (value,), {}, None)

    def __len__(self):
        server, lend_id, declaration = object.__getattribute__(self, "_served")
        if "__len__" not in declaration["remote"]:
            raise TypeError(f"object of type {declaration['type']} has no len()")
        return server.callback(lend_id, "__len__", (), {})

    def __repr__(self):
        return f"<{object.__getattribute__(self, '_served')[2]['type']} lent by the grader>"


def _fill(target, value):
    if isinstance(target, list) and target and all(
            isinstance(item, np.ndarray) for item in target):
        for item in target:  # a list of frames: the caller reuses the arrays themselves
            item[...] = value
    elif isinstance(target, list):  # a list observation, as a caller may reuse one
        target[:] = [value] * len(target)
    else:
        target[...] = value


def _public(module_name, qualname):
    """The course's public function ``qualname`` of ``module_name`` (a ``course.`` module):
    a check runs the course's own loop here, where the student's code is."""
    if not (type(module_name) is str and module_name.startswith("course.")):
        raise ValueError(f"{module_name!r} is not one of the course's public modules")
    value = importlib.import_module(module_name)
    for part in str(qualname).split("."):
        value = getattr(value, part)
    return value


APPLY = {
    "fill": _fill, "public": _public,
    "getattr": getattr, "setattr": setattr, "getitem": operator.getitem,
    "setitem": operator.setitem, "len": len, "list": list, "bool": bool, "float": float,
    "int": int, "index": operator.index, "contains": operator.contains,
}


class ForkAhead:
    """A fork of this process that plays a buffer ahead, for a grader that runs a training
    loop of its own on the buffer's answers (checks/foreseen_samples.py).

    Forked before the buffer's first call that the grader foresees, it makes calls of its
    own on its copy of the buffer and tells their answers, one by one, as the grader asks:
    ``answers`` (called in the fork) gives them. Its answers are hints: the grader checks
    every answer it uses against the buffer's real one. The fork asks nothing else of this
    process, and ends when its pipe closes (:meth:`end`, or this process's end)."""

    def __init__(self, answers):
        to_child, self.requests = os.pipe()
        self.replies, from_child = os.pipe()
        self.stopped = False
        try:
            self.pid = os.fork()
        except OSError:  # too many tasks in the sandbox: nothing foreseen
            for fd in (to_child, self.requests, self.replies, from_child):
                os.close(fd)
            self.stopped, self.pid = True, None
            return
        if self.pid == 0:
            try:
                os.close(self.requests)
                os.close(self.replies)
                _serve_ahead(answers(), to_child, from_child)
            finally:
                os._exit(0)
        os.close(to_child)
        os.close(from_child)

    def answers(self, until):
        """The fork's answers from where it stopped to the ``until``-th: a list, fewer than
        asked for (and none after) once its calls raised or answered with what is not
        plain data; None if the fork is gone."""
        if self.stopped:
            return None
        try:
            _write_all(self.requests, b"%d\n" % until)
            size = int.from_bytes(_read_exactly(self.replies, 4), "little")
            if size > wire.FROM_SANDBOX.bytes:
                raise ValueError("too large")
            message = wire.unpack(_read_exactly(self.replies, size), wire.FROM_SANDBOX)
            answers = wire.decode(message["answers"], _refuse_object, _refuse_object)
        except (OSError, ValueError, KeyError, TypeError, wire.WireError):
            self.end()
            return None
        if message.get("stopped"):
            self.stopped = True
        return answers

    def end(self):
        if self.pid is None:
            return
        for fd in (self.requests, self.replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self.pid, self.stopped = None, True


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd, count):
    data = bytearray()
    while len(data) < count:
        chunk = os.read(fd, count - len(data))
        if not chunk:
            raise OSError("the fork ended")
        data += chunk
    return bytes(data)


def _serve_ahead(answers, requests, replies):
    """The fork's part of a :class:`ForkAhead`: for each request (how many answers it
    should have given by then), the next ``answers``, as plain data."""
    played, stopped = 0, False
    with os.fdopen(requests, "rb") as inbox:
        for line in inbox:
            until, batch = int(line), []
            while not stopped and played < until:
                try:
                    batch.append(next(answers))
                except BaseException:  # noqa: BLE001 - nothing more is foreseen
                    stopped = True
                    break
                played += 1
            try:
                encoded = wire.encode(batch, _refuse_object)
            except (TypeError, wire.WireError):  # not plain data: nothing from here on
                encoded, stopped = [], True
            frame = wire.pack({"answers": encoded, "stopped": stopped}, wire.FROM_SANDBOX)
            _write_all(replies, len(frame).to_bytes(4, "little") + frame)


def _placeholder_answers(target, add, sample, sample_args, first, step):
    """The answers of a buffer that stores placeholders (the n-th: ``first + n * step``,
    field by field, each in its field's type) and samples after each, each answer's fields
    as an array of float64 rows: for a buffer whose choices do not depend on what it
    stores, which of the transitions to come each sample returns."""
    add, sample = getattr(target, add), getattr(target, sample)
    for played in itertools.count():
        add(*[type(f)(f + played * s) for f, s in zip(first, step)])
        yield np.stack([np.asarray(field, dtype=np.float64).reshape(-1)
                        for field in sample(*sample_args)])


def _loop_answers(target, method, function, args):
    """The answers of ``target``'s ``method`` while the course's public ``function`` runs
    on it (``function(target, *args)``), up to its end or its first error: what the
    grader's run of the same loop will be answered, if the buffer does as it did here."""
    answers = []

    class Recording:
        def __getattr__(self, name):
            value = getattr(target, name)
            if name != method:
                return value

            def recorded(*call_args, **call_kwargs):
                answers.append(value(*call_args, **call_kwargs))
                return answers[-1]
            return recorded

    with contextlib.suppress(BaseException):
        function(Recording(), *args)
    yield from answers


class StudentServer:
    def __init__(self, channel):
        self.channel = channel
        self.handles = {}  # id -> object kept here for the grader
        self.lent = {}  # lend id -> Mirror, Served or a bare copy
        self.shadows = {}  # lend id -> the copy behind a Mirror (for pushed attributes)
        self.transcript = []
        self.transcript_bytes = 0  # of arrays in the transcript's arguments
        self.kept_generators = None  # op_generators
        self.foresights = {}  # id -> ForkAhead
        self.request_id = None  # of the request being answered
        self.stopped = None  # why the grader stopped it (stop_if_told)
        # answers the grader sent ahead: lend id -> deque of (the entries logged before the
        # call, the call's arguments, its answer), each canonical; and the entries logged
        # since the last answer (checks/lending.py: predicted methods)
        self.ahead = {}
        self.since = []
        self.next_callback = 0
        self.shell = None
        self.called = None  # what the request being answered called: its errors' origin
        self.changed = []  # [call, argument] each call of the request changed (watched)
        # each function's last result: a later call that refills it is noted in changed
        self.earlier_results = (unchanged_arguments.EarlierResults() if unchanged_arguments
                                else None)

    # --- values ------------------------------------------------------------------------
    def keep(self, value):
        handle = len(self.handles) + 1
        while handle in self.handles:
            handle += 1
        self.handles[handle] = value
        return handle

    def encode(self, value, by_reference=False):
        if by_reference:
            return self._reference(value)
        return wire.encode(value, self._reference)

    def _reference(self, value):
        return {"$": "ref", "id": self.keep(value), "callable": callable(value),
                "type": type(value).__name__[:80]}

    def decode(self, node):
        return wire.decode(node, self._resolve, self._lend)

    def _resolve(self, node):
        try:
            return self.handles[node["id"]]
        except (KeyError, TypeError):
            raise wire.WireError("a reference to an object this process does not hold")

    def _lend(self, node):
        lend_id = node.get("id")
        if "kind" not in node:
            if lend_id not in self.lent:
                raise wire.WireError(f"unknown lent object {lend_id}")
        elif node["kind"] == "mirror":
            module_name, qualname = node["recipe"]["module"], node["recipe"]["name"]
            factory = importlib.import_module(module_name)
            for part in qualname.split("."):
                factory = getattr(factory, part)
            args = self.decode(node["recipe"]["args"])
            kwargs = self.decode(node["recipe"]["kwargs"])
            shadow = factory(*args, **kwargs)
            self.shadows[lend_id] = shadow
            calls = node.get("calls")
            if node["logged"] or node["settable"] or calls is not None:
                self.lent[lend_id] = Mirror(self, lend_id, shadow, node["logged"],
                                            node["settable"], calls)
            else:
                self.lent[lend_id] = shadow
        elif node["kind"] == "serve":
            declaration = {key: frozenset(node.get(key, ())) for key in
                           ("remote", "deferred", "readable", "settable")}
            declaration["type"] = str(node.get("type", "object"))
            self.lent[lend_id] = Served(self, lend_id, declaration)
        else:
            raise wire.WireError(f"unknown kind of lent object {node['kind']!r}")
        for name, value in self.decode(node.get("push", {"$": "dict", "items": []})).items():
            setattr(self.shadows[lend_id], name, value)  # the grader changed its original
        return self.lent[lend_id]

    # --- the transcript of calls on lent objects -----------------------------------------
    def log(self, lend_id, kind, name, args, kwargs, outcome):
        try:
            entry = [lend_id, kind, name, wire.encode(list(args), _refuse_object, numbers=True),
                     wire.encode(dict(kwargs), _refuse_object, numbers=True), outcome]
        except wire.WireError as error:
            raise TypeError(str(error)) from None
        self.append(entry, _bytes_in(entry[3]))

    def logged_call(self, lend_id, name, method, args, kwargs):
        try:
            encoded_args = wire.encode(list(args), _refuse_object, numbers=True)
            encoded_kwargs = wire.encode(dict(kwargs), _refuse_object, numbers=True)
        except wire.WireError as error:
            raise TypeError(str(error)) from None
        try:
            result = method(*args, **kwargs)
        except Exception as error:
            self.append([lend_id, "call", name, encoded_args, encoded_kwargs,
                         {"raised": type(error).__name__}])
            raise
        digest = wire.digest(result) if wire.numbers_in(result) > wire.LOOSE_NUMBERS else None
        # a sampled batch crosses as its bytes' digest, other answers as numbers
        outcome = {"value": wire.loose(result)} if digest is None else {"digest": digest}
        self.append([lend_id, "call", name, encoded_args, encoded_kwargs, outcome],
                     _bytes_in(encoded_args))
        return result

    def append(self, entry, size=0, answered=False):
        """Put ``entry`` (with about ``size`` bytes of arrays) in the transcript (and, while
        answers wait ahead, note it among the entries before the next answer, unless it
        is an ``answered`` one: those start after it)."""
        self.transcript.append(entry)
        self.transcript_bytes += size
        if answered:
            self.since = []
        elif self.ahead:
            self.since.append(_exact_key(entry))
        self.send_transcript_if_long()

    def send_transcript_if_long(self):
        """Send the transcript on its own once it holds TRANSCRIPT_BATCH entries or
        TRANSCRIPT_BYTES of arrays: code that only uses mirrored objects (a 10,000-step
        episode, a DQN's 5,000 optimizer steps) never waits for the grader, and no one
        message outgrows the channel's limit."""
        if self.stopped:
            raise RuntimeError(f"the grader stopped this call: {self.stopped}")
        if len(self.transcript) >= TRANSCRIPT_BATCH or self.transcript_bytes >= TRANSCRIPT_BYTES:
            self.channel.send({"op": "transcript", "transcript": self.take_transcript()})
            self.stop_if_told()

    def stop_if_told(self):
        """Raise in the student's code if the grader refused what it did in this request
        (a "stop" waiting on the channel): the rest of the run could not change the check,
        and need not be run. Raises again at every transcript entry after it."""
        if not (self.channel.pending or select.select([self.channel.sock], [], [], 0)[0]):
            return
        if self.told_to_stop(self.channel.receive()):
            raise RuntimeError(f"the grader stopped this call: {self.stopped}")

    def told_to_stop(self, message):
        """Whether ``message`` is a stop of the request being answered (noted in
        ``stopped``); a stop of an earlier request is dropped."""
        if message.get("op") == "stop" and message.get("id") == self.request_id:
            self.stopped = str(message.get("why", ""))[:MAX_MESSAGE_TEXT]
        return bool(self.stopped)

    def take_transcript(self):
        entries, self.transcript, self.transcript_bytes = self.transcript, [], 0
        return entries

    def callback(self, lend_id, name, args, kwargs):
        """Call a served method of the grader's object and wait for its answer, unless
        the grader sent it ahead for exactly this call after exactly these entries."""
        try:
            encoded = [wire.encode(list(args), _refuse_object),
                       wire.encode(dict(kwargs), _refuse_object)]
        except wire.WireError as error:
            raise TypeError(str(error)) from None
        foreseen = self.answered_ahead(lend_id, name, encoded)
        if foreseen is not NOT_FORESEEN:
            return foreseen
        self.ahead.clear()
        self.next_callback += 1
        self.channel.send({"op": "callback", "id": self.next_callback, "lend": lend_id,
                           "name": name, "args": encoded[0], "kwargs": encoded[1],
                           "transcript": self.take_transcript()})
        answer = self.channel.receive()
        while answer.get("op") == "stop":  # the grader answers the callback all the same
            self.told_to_stop(answer)
            answer = self.channel.receive()
        if answer.get("op") != "callback_reply" or answer.get("id") != self.next_callback:
            raise SystemExit("the grader broke off the call")
        self.since = []
        if "error" in answer:
            raise _rebuild_error(answer["error"])
        if answer.get("ahead"):
            self.ahead[lend_id] = collections.deque(
                ([_exact_key(entry) for entry in coming["before"]],
                 _exact_key([name, coming["args"], coming["kwargs"]]), coming["value"])
                for coming in answer["ahead"])
        return self.decode(answer["value"])

    def answered_ahead(self, lend_id, name, encoded):
        """The answer the grader sent ahead for this call, written to the transcript, if
        the call and the entries logged since the last answer are the ones it foresaw;
        else NOT_FORESEEN."""
        waiting = self.ahead.get(lend_id)
        if not waiting:
            return NOT_FORESEEN
        before, call, value = waiting[0]
        if before != self.since or call != _exact_key([name, *encoded]):
            return NOT_FORESEEN
        waiting.popleft()
        self.append([lend_id, "answered", name, encoded[0], encoded[1], {"value": value}],
                    answered=True)
        return self.decode(value)

    # --- requests ------------------------------------------------------------------------
    def serve(self):
        while True:
            try:
                request = self.channel.receive()
            except KeyboardInterrupt:  # an interrupt that came after the code it was for
                continue
            except (wire.ChannelClosed, wire.WireError):
                return
            if request.get("op") == "stop":  # it came after the reply it was for
                continue
            self.request_id, self.stopped = request.get("id"), None
            reply = {"op": "reply", "id": request.get("id")}
            self.ahead.clear()  # answers foreseen for the last request's calls
            self.since = []
            self.called = None
            self.changed = []
            try:
                self.run_deferred(request.get("deferred"), reply)
                handler = getattr(self, "op_" + str(request.get("op")))
                value, by_reference = handler(request)
                reply["value"] = self.encode(value, by_reference)
            except BaseException as error:  # the student's code raised: that is the answer
                reply.pop("value", None)
                reply["error"] = _describe(error, self.called)
            reply["transcript"] = self.take_transcript()
            if self.changed:
                reply["changed"] = self.changed[:16]
            try:
                self.channel.send(reply)
            except wire.WireError as error:  # too large, or not JSON
                self.channel.send({"op": "reply", "id": request.get("id"),
                                   "error": _describe(error), "transcript": []})

    def run_deferred(self, calls, reply):
        """Run the calls the grader sent ahead of its request (their results are not
        needed), in order. If one raises, the reply names it (``deferred``: its index) and
        the request is not run."""
        for index, call in enumerate(calls or ()):
            reply["deferred"] = index
            self.op_call(call, which=index)
        reply.pop("deferred", None)

    def op_hello(self, request):
        return "ready", False

    def op_run_cell(self, request):
        if self.shell is None:
            from IPython.core.interactiveshell import InteractiveShell
            self.shell = InteractiveShell.instance()
        result = self.shell.run_cell(request["source"], store_history=False, silent=True)
        error = result.error_before_exec or result.error_in_exec
        if error is None:
            return {"status": "ok"}, False
        return {"status": "error", "type": type(error).__name__,
                "message": str(error)[:MAX_MESSAGE_TEXT]}, False

    def op_lookup(self, request):
        namespace = self.shell.user_ns if self.shell is not None else {}
        return {name: namespace[name] for name in request["names"] if name in namespace}, False

    def op_call(self, request, which=-1):
        target = self.decode(request["target"])
        if request.get("method") is not None:
            target = getattr(target, request["method"])
        self.called = target
        args, kwargs = self.decode(request["args"]), self.decode(request["kwargs"])
        result = self.watched(which, target, args, kwargs)
        return result, bool(request.get("by_ref"))

    def watched(self, which, target, args, kwargs):
        """``target(*args, **kwargs)``, noting in ``self.changed`` each array or list
        argument the call changed (``which``: the deferred call's index, -1 the request's):
        every lesson's functions leave their inputs as they were."""
        taken = unchanged_arguments.snapshot(args, kwargs) if unchanged_arguments else []
        pure = unchanged_arguments is not None and type(target) is types.FunctionType
        if pure:
            self.earlier_results.before_call(target)
        result = target(*args, **kwargs)
        if taken:
            self.changed.extend([which, where] for where in unchanged_arguments.changed(taken))
            self.changed.extend([which, f"returned {where}"]
                                for where in unchanged_arguments.aliased(taken, result))
        if pure and self.earlier_results.changed_by(target, result, taken):
            self.changed.append([which, unchanged_arguments.EARLIER_RESULT])
        return result

    def op_call_repeatedly(self, request):
        """The same call ``times`` times in one request, each with its own copy of the
        arguments, as separate calls would have: a statistical probe's thousands of draws
        would otherwise make a round trip each. The first call that raises ends it."""
        target = self.decode(request["target"])
        if request.get("method") is not None:
            target = getattr(target, request["method"])
        self.called = target
        keep = unchanged_arguments.as_returned if unchanged_arguments else (lambda value: value)
        return [keep(self.watched(-1, target, self.decode(request["args"]),
                                  self.decode(request["kwargs"])))
                for _ in range(int(request["times"]))], False

    def op_call_sequence(self, request):
        """Calls one after another in one request, each as a request of its own would make
        it (a training loop's adds and samples, which the grader ran ahead of on answers
        foreseen): the results of those whose index is in ``keep``, in a list (a list of
        alike batches crosses as one array per field); the first call that raises ends it,
        as ``{"raised": its class's name}``. With ``foresee``, also the next answers of a
        :class:`ForkAhead` (started first, before the calls, if it is new)."""
        foresee = request.get("foresee")
        if foresee and foresee.get("start"):
            self.start_foresight(foresee)
        keep, results = set(request.get("keep", ())), []
        for which, call in enumerate(request["calls"]):
            try:
                result, _ = self.op_call(call, which=which)
            except Exception as error:  # the student's code raised: the grader redoes it
                results.append({"raised": type(error).__name__})
                return {"results": results, "foreseen": None}, False
            if which in keep:
                results.append(result)
        foreseen = None
        if foresee and foresee.get("id") in self.foresights:
            foreseen = self.foresights[foresee["id"]].answers(int(foresee["until"]))
        return {"results": results, "foreseen": foreseen}, False

    def start_foresight(self, foresee):
        """Fork a :class:`ForkAhead` of the object ``foresee["target"]`` (see there)."""
        self.end_foresight(foresee["id"])
        target = self.decode(foresee["target"])
        if foresee.get("kind") == "loop":  # the course's loop, on the fork's copy
            function, args = _public(*foresee["function"]), self.decode(foresee["args"])
            answers = functools.partial(_loop_answers, target, foresee["sample"], function,
                                        args)
        else:  # placeholders stored, a sample after each
            answers = functools.partial(_placeholder_answers, target, foresee["add"],
                                        foresee["sample"], self.decode(foresee["sample_args"]),
                                        foresee["first"], foresee["step"])
        self.foresights[foresee["id"]] = ForkAhead(answers)

    def end_foresight(self, foresight_id):
        foresight = self.foresights.pop(foresight_id, None)
        if foresight is not None:
            foresight.end()

    def op_apply(self, request):
        function = APPLY[request["function"]]
        return function(*self.decode(request["args"])), bool(request.get("by_ref"))

    def op_keep(self, request):
        return self.decode(request["value"]), True

    def op_seed(self, request):
        random.seed(request["seed"])
        np.random.seed(request["seed"] % 2**32)
        return None, False

    def op_generators(self, request):
        """Keep the global generators' states (``random``, ``np.random``), or, with
        ``restore``, put back the ones kept: a check that redoes a run gives the student's
        code the generators it had the first time."""
        if request.get("restore"):
            if self.kept_generators is not None:
                random.setstate(self.kept_generators[0])
                np.random.set_state(self.kept_generators[1])
        else:
            self.kept_generators = (random.getstate(), np.random.get_state())
        return None, False

    def op_forget(self, request):
        for foresight_id in list(self.foresights):
            self.end_foresight(foresight_id)
        self.earlier_results.clear()
        self.handles.clear()
        self.lent.clear()
        self.shadows.clear()
        self.take_transcript()
        self.ahead.clear()
        return None, False


def serve_channel(fd):
    """Answer the grader on the channel ``fd`` until it closes, then end the process."""
    os.set_inheritable(fd, False)  # programs a submission starts do not get the channel
    devnull = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(devnull, stream)
    os.close(devnull)
    channel = wire.channel_from_fd(fd, wire.FROM_SANDBOX, wire.TO_SANDBOX, blocking=True)
    StudentServer(channel).serve()
    os._exit(0)  # no atexit handlers or threads a submission left behind


def main():
    serve_channel(int(sys.argv[1]))


if __name__ == "__main__":
    main()
