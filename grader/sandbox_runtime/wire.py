"""The wire between the grader and a student's process: frames and the values in them.

A frame is a 4-byte little-endian length and that many bytes of UTF-8 JSON holding one
object (a message). Values inside messages are JSON with *tagged* objects for what JSON
lacks; every JSON object that is a value carries a ``"$"`` tag, so the decoder never
confuses data with structure:

- ``None``, booleans, integers, floats (NaN and infinities as JSON's ``NaN`` tokens),
  strings and lists are themselves;
- ``{"$": "tuple", "items": [...]}`` and ``{"$": "dict", "items": [[key, value], ...]}``
  (keys: None, bool, int, float, str, or tuples of them);
- ``{"$": "array", "dtype": "<f8", "shape": [...], "data": base64}``: a numpy array of a
  boolean or numeric dtype, rebuilt from its bytes (never pickle);
- ``{"$": "scalar", "dtype": "<i8", "value": 3}``: a numpy scalar (its value as a JSON
  number or boolean; complex ones as ``"data"`` in base64, as arrays are);
- ``{"$": "ref", "id": n, ...}``: an object that stays in the process that holds it;
- ``{"$": "lend", "id": n, ...}``: an object the grader lends to student code.

Refs and lends are turned into objects by callbacks that each side supplies; the
grader's decoder refuses lends and, where it wants plain data, refs too. Anything
malformed raises :class:`WireError`.
"""

import base64
import binascii
import json
import math
import select
import socket
import struct
import time

import numpy as np

HEADER = struct.Struct("<I")
MAX_FRAME = 256 * 2**20  # bytes; a (256, 256, 8) float64 Q-table is 4 MB
MAX_DEPTH = 64  # nesting of lists, tuples and dicts
ARRAY_KINDS = "biufc"  # numpy dtype kinds that may cross: bool, ints, floats, complex
KEY_TYPES = (type(None), bool, int, float, str)


class WireError(ValueError):
    """A frame or value that does not follow this module's format."""


class ChannelClosed(EOFError):
    """The other side closed the channel (its process ended)."""


class ChannelTimeout(TimeoutError):
    """Nothing complete arrived before the deadline."""


# --- values ---------------------------------------------------------------------------

SCALARS = frozenset((type(None), bool, int, float, str))
NUMPY_NUMBERS = frozenset(type_ for type_ in set(np.sctypeDict.values())
                          if issubclass(type_, np.generic) and np.dtype(type_).kind in "biuf")


def encode(value, other, depth=0, numbers=False):
    """``value`` as JSON-ready data; ``other(value)`` encodes what is not plain data.

    With ``numbers``, numpy scalars become Python numbers (a transcript's arguments:
    equal values, a third of the bytes)."""
    kind = type(value)
    if kind in SCALARS:
        return value
    if numbers and kind in NUMPY_NUMBERS:
        return value.item()
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if kind is list:
        return [item if type(item) in SCALARS else encode(item, other, depth + 1, numbers)
                for item in value]
    if kind is tuple or _is_namedtuple(value):
        return {"$": "tuple", "items": [item if type(item) in SCALARS
                                        else encode(item, other, depth + 1, numbers)
                                        for item in value]}
    if kind is dict:
        return {"$": "dict", "items": [[encode(key, other, depth + 1, numbers),
                                         encode(item, other, depth + 1, numbers)]
                                        for key, item in value.items()]}
    if kind is np.ndarray and value.dtype.kind in ARRAY_KINDS:
        array = np.ascontiguousarray(value)
        return {"$": "array", "dtype": array.dtype.str, "shape": list(array.shape),
                "data": base64.b64encode(array.tobytes()).decode("ascii")}
    if isinstance(value, np.generic):
        dtype = value.dtype
        if dtype.kind in "biuf":  # exact as a JSON number: float64 repr round-trips
            return {"$": "scalar", "dtype": dtype.str, "value": value.item()}
        if dtype.kind == "c":
            return {"$": "scalar", "dtype": dtype.str,
                    "data": base64.b64encode(value.tobytes()).decode("ascii")}
    return other(value)


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def decode(node, ref, lend, depth=0):
    """The value ``node`` (from :func:`encode`) stands for; ``ref(node)`` and
    ``lend(node)`` build the objects of those tags (or raise :class:`WireError`)."""
    kind = type(node)
    if kind in SCALARS:
        return node
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if kind is list:
        return [item if type(item) in SCALARS else decode(item, ref, lend, depth + 1)
                for item in node]
    if kind is not dict:
        raise WireError(f"not a value: {kind.__name__}")
    tag = node.get("$")
    if tag == "tuple":
        return tuple(item if type(item) in SCALARS else decode(item, ref, lend, depth + 1)
                     for item in _items(node))
    if tag == "dict":
        result = {}
        for pair in _items(node):
            if type(pair) is not list or len(pair) != 2:
                raise WireError("a dict item is not a [key, value] pair")
            key = decode(pair[0], _no_objects, _no_objects, depth + 1)
            if not _plain_key(key):
                raise WireError("a dict key is not a plain hashable value")
            result[key] = decode(pair[1], ref, lend, depth + 1)
        return result
    if tag == "array":
        return _array(node)
    if tag == "scalar":
        return _scalar(node)
    if tag == "ref":
        return ref(node)
    if tag == "lend":
        return lend(node)
    raise WireError(f"unknown value tag {tag!r}")


def _items(node):
    items = node.get("items")
    if not isinstance(items, list):
        raise WireError("a tagged collection has no item list")
    return items


def _plain_key(key):
    if isinstance(key, tuple):
        return all(_plain_key(part) for part in key)
    return isinstance(key, KEY_TYPES) and not (isinstance(key, float) and math.isnan(key))


def _no_objects(node):
    raise WireError("objects cannot be dict keys")


_DTYPES = {}  # dtype string -> np.dtype, for scalars


def _scalar(node):
    if "data" in node:
        return _array({**node, "shape": []})[()]
    name, value = node.get("dtype"), node.get("value")
    dtype = _DTYPES.get(name) if isinstance(name, str) else None
    if dtype is None:
        try:
            dtype = np.dtype(name)
        except (TypeError, ValueError):
            raise WireError(f"not a scalar dtype: {name!r}") from None
        if dtype.kind not in "biuf" or dtype.hasobject:
            raise WireError(f"scalars of dtype {dtype} cannot cross")
        _DTYPES[name] = dtype
    expected = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float)}[dtype.kind]
    if type(value) not in expected:
        raise WireError(f"a {dtype} scalar holds {type(value).__name__}")
    try:
        return dtype.type(value)
    except (OverflowError, ValueError):
        raise WireError(f"{value!r} does not fit a {dtype} scalar") from None


def _array(node):
    try:
        dtype = np.dtype(node["dtype"])
        shape = tuple(int(size) for size in node["shape"])
        raw = base64.b64decode(node["data"], validate=True)
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        raise WireError(f"not an array: {error}") from None
    if dtype.kind not in ARRAY_KINDS or dtype.hasobject or dtype.fields is not None:
        raise WireError(f"arrays of dtype {dtype} cannot cross")
    if any(size < 0 for size in shape) or len(shape) > 32:
        raise WireError("an array has an impossible shape")
    if math.prod(shape) * dtype.itemsize != len(raw):
        raise WireError(f"an array of shape {shape} and dtype {dtype} cannot hold "
                        f"{len(raw)} bytes")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()  # writable, owned


def plain(value):
    """``value`` through the wire and back without objects: what a verdict may compare
    (raises :class:`WireError` for anything that is not plain data)."""
    return decode(encode(value, _refuse), _no_objects, _no_objects)


def _refuse(value):
    raise WireError(f"{type(value).__name__} is not plain data")


def loose(value, depth=0):
    """``value`` as JSON data, with numpy scalars and arrays as Python numbers and lists,
    tuples as lists and dict keys as strings: what two calls are compared by (their
    arguments, or their answers). Raises :class:`WireError` for anything else."""
    kind = type(value)
    if kind in SCALARS:
        return value
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if kind is list or kind is tuple:
        return [item if type(item) in SCALARS else loose(item, depth + 1) for item in value]
    if kind is dict:
        return {str(key): item if type(item) in SCALARS else loose(item, depth + 1)
                for key, item in value.items()}
    if kind is np.ndarray and value.dtype.kind in ARRAY_KINDS:
        return value.tolist()
    if isinstance(value, np.generic) and np.dtype(kind).kind in ARRAY_KINDS:
        return value.item()
    if isinstance(value, tuple):  # a named tuple
        return [loose(item, depth + 1) for item in value]
    raise WireError(f"{kind.__name__} is not plain data")


def loosely_equal(value, sent):
    """Whether ``value`` equals ``sent``, the :func:`loose` form of another (NaN equals
    NaN)."""
    try:
        mine = loose(value)
    except WireError:
        return False
    return mine == sent or canonical(mine) == canonical(sent)


def canonical(node):
    """A string that is equal for equal encoded values (NaN equals NaN)."""
    return json.dumps(node, allow_nan=True, separators=(",", ":"), sort_keys=True)


# --- frames ---------------------------------------------------------------------------

class Channel:
    """Messages (JSON objects) over a connected stream socket.

    ``receive(deadline)`` and ``send(message, deadline)`` give up at the
    ``time.monotonic()`` deadline (None: wait forever) with :class:`ChannelTimeout`.
    """

    def __init__(self, sock, blocking=False):
        """``blocking``: wait in the socket calls themselves, for a side that never sets
        deadlines (the student's): one system call fewer per message."""
        self.sock = sock
        self.sock.setblocking(blocking)
        self.blocking = blocking
        self.pending = bytearray()
        self._pollers = {}

    def fileno(self):
        return self.sock.fileno()

    def close(self):
        self.sock.close()

    def send(self, message, deadline=None):
        try:
            body = json.dumps(message, allow_nan=True, separators=(",", ":")).encode()
        except (TypeError, ValueError) as error:
            raise WireError(f"cannot send this message: {error}") from None
        if len(body) > MAX_FRAME:
            raise WireError(f"message of {len(body)} bytes is over the limit of {MAX_FRAME}")
        data = memoryview(HEADER.pack(len(body)) + body)
        while data:
            self._wait(select.POLLOUT, deadline)
            try:
                sent = self.sock.send(data)
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise ChannelClosed("the other side closed the channel") from None
            data = data[sent:]

    def receive(self, deadline=None):
        """The next message. A timeout keeps what has arrived, so a later call goes on
        where this one stopped."""
        self._fill(HEADER.size, deadline)
        (length,) = HEADER.unpack(self.pending[:HEADER.size])
        if length > MAX_FRAME:
            raise WireError(f"a message of {length} bytes is over the limit of {MAX_FRAME}")
        self._fill(HEADER.size + length, deadline)
        body = bytes(self.pending[HEADER.size:HEADER.size + length])
        del self.pending[:HEADER.size + length]
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as error:
            raise WireError(f"a message is not JSON: {str(error)[:100]}") from None
        if not isinstance(message, dict):
            raise WireError("a message is not a JSON object")
        return message

    def _fill(self, count, deadline):
        while len(self.pending) < count:
            self._wait(select.POLLIN, deadline)
            try:
                chunk = self.sock.recv(max(count - len(self.pending), 1 << 16))
            except BlockingIOError:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise ChannelClosed("the other side closed the channel")
            self.pending += chunk

    def _wait(self, event, deadline):
        if self.blocking:
            return
        poller = self._pollers.get(event)
        if poller is None:
            poller = self._pollers[event] = select.poll()
            poller.register(self.sock, event)
        while True:
            if deadline is None:
                timeout = None
            else:
                timeout = deadline - time.monotonic()
                if timeout <= 0:
                    raise ChannelTimeout("no answer before the deadline")
                timeout = max(1, int(timeout * 1000))
            try:
                if poller.poll(timeout):
                    return
            except InterruptedError:
                continue


def channel_from_fd(fd, blocking=False):
    return Channel(socket.socket(fileno=fd), blocking)
