"""The wire between the grader and a student's process: frames and the values in them.

A frame carries one message (a JSON object) and the raw bytes of the numpy arrays in it,
as *blobs* after the text, so that an array costs its own size and no base64 pass:

    header    <I: bytes of JSON text> <I: number of blobs, n>   (little-endian)
    lengths   n x <I: bytes of blob i>
    text      the message, UTF-8 JSON
    blobs     blob 0, blob 1, ... back to back

A receiver knows the frame's size from the header and the lengths before it reads the
rest, and refuses a frame over its byte limit unread. Bytes alone do not bound memory:
``[[],[],...]`` becomes 25 times its size in Python objects. So before parsing, the
receiver also counts the text's *items*, its ``[``, ``{`` and ``,`` bytes (each list or
dict it can become needs a bracket, each element after a container's first a comma;
brackets inside strings only over-count), and refuses a text of too many unparsed. The
limits differ by way (:data:`FROM_SANDBOX`, :data:`TO_SANDBOX`); a sender refuses to
send what its receiver would refuse, so an honest answer that is too large becomes an
error reply.

Values inside messages are JSON with *tagged* objects for what JSON lacks; every JSON
object that is a value carries a ``"$"`` tag, so the decoder never confuses data with
structure:

- ``None``, booleans, integers, floats (NaN and infinities as JSON's ``NaN`` tokens),
  strings and lists are themselves;
- ``{"$": "tuple", "items": [...]}`` and ``{"$": "dict", "items": [[key, value], ...]}``
  (keys: None, bool, int, float, str, or tuples of them);
- ``{"$": "array", "dtype": "<f8", "shape": [...], "data": i}``: a numpy array of a
  boolean or numeric dtype, rebuilt from blob ``i`` of its frame (never pickle);
- ``{"$": "scalar", "dtype": "<i8", "value": 3}``: a numpy scalar (its value as a JSON
  number or boolean; complex ones as ``"data": i``, a blob, as arrays are);
- ``{"$": "scalars", "dtype": "<i8", "data": i}``: a list of two or more numpy scalars of
  one dtype (a student's ``list(field)`` of a batch), from blob ``i``: the same list back,
  at an array's cost rather than a tagged object per number;
- ``{"$": "arrays", "dtype": "<f8", "shape": [...], "data": i}``: a list of two or more
  numpy arrays of one dtype and one shape (``list(field)`` of a buffer that stores
  arrays), each rebuilt from its slice of blob ``i``;
- ``{"$": "ref", "id": n, ...}``: an object that stays in the process that holds it;
- ``{"$": "lend", "id": n, ...}``: an object the grader lends to student code.

In memory, between :func:`encode` and a frame (and from a frame to :func:`decode`), an
array's ``"data"`` holds its bytes themselves; each blob belongs to exactly one node, so
decoding never builds more array bytes than the frame carried. Refs and lends are turned
into objects by callbacks that each side supplies; the grader's decoder refuses lends
and, where it wants plain data, refs too. Anything malformed raises :class:`WireError`.
"""

import hashlib
import itertools
import json
import math
import select
import socket
import struct
import threading
import time
from typing import NamedTuple

import numpy as np

HEADER = struct.Struct("<II")  # bytes of JSON text, number of blobs
BLOB_LENGTH = struct.Struct("<I")


class Limit(NamedTuple):
    """The most one frame may hold, one way."""

    bytes: int  # of the whole frame: header, text and blobs
    items: int  # of its text (items_in), counted before it is parsed


# What the grader accepts from a student's process. Largest measured (benchmarks/
# wire_sizes.py; the example class, all seven lessons, learning checks included): a
# lesson 02 reply of 180,879 bytes and 36,226 items, the transcript of a 200-step Taxi
# episode replayed in batches of 8 (lesson 05: 164,722 bytes, 33,026 items; the others
# under 40 KB and 220 items). The limits are about 6x and 7x that. A frame within both
# becomes at most about 26 MB of objects (tests/judge/test_wire.py), where one under the old
# limit of 256 MB became 6.8 GB.
FROM_SANDBOX = Limit(bytes=2**20, items=250_000)
# What the grader sends. Largest measured: 37,259 bytes (lesson 07), 143 items. But a
# cell's source goes as it is, and a notebook may be 64 MB (twice that once JSON escapes
# non-ASCII text). No item cap: the grader's messages are not hostile, and the commas of
# a cell's source are not items.
TO_SANDBOX = Limit(bytes=128 * 2**20, items=2**32)
MAX_DEPTH = 64  # nesting of lists, tuples and dicts
MAX_COLUMNS = 16  # fields of a row in a list of rows (a sampled batch has five)
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
CONTAINERS = frozenset((list, tuple, dict))
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
    # longer than any frame from a student's process may hold (the grader's own values
    # are far shorter): refused now, not once copied and written out as JSON
    if kind in CONTAINERS and len(value) > FROM_SANDBOX.items:
        raise WireError(f"a {kind.__name__} of {len(value)} items is too large to send "
                        f"(the limit is {FROM_SANDBOX.items})")
    if kind is list:
        if len(value) > 1 and not numbers and _one_numpy_type(value):
            return {"$": "scalars", "dtype": value[0].dtype.str,
                    "data": np.array(value, dtype=value[0].dtype).tobytes()}
        if len(value) > 1 and _alike_arrays(value):
            return _stacked(value)
        columns = _alike_columns(value) if len(value) > 1 else None
        if columns:  # sampled batches: a node per field
            return {"$": "rows", "tuple": type(value[0]) is tuple,
                    "columns": [_stacked(column) for column in columns]}
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
        # a copy (in C order), not a view: the array may change before its frame is sent
        return {"$": "array", "dtype": value.dtype.str, "shape": list(value.shape),
                "data": value.tobytes()}
    if isinstance(value, np.generic):
        dtype = value.dtype
        if dtype.kind in "biuf":  # exact as a JSON number: float64 repr round-trips
            return {"$": "scalar", "dtype": dtype.str, "value": value.item()}
        if dtype.kind == "c":
            return {"$": "scalar", "dtype": dtype.str, "data": value.tobytes()}
    return other(value)


def _one_numpy_type(values):
    """Whether ``values`` are all numpy numbers (bool, int, float) of one type."""
    first = type(values[0])
    return first in NUMPY_NUMBERS and all(type(item) is first for item in values)


def _alike_arrays(values):
    """Whether ``values`` are all numpy arrays of one dtype (of the kinds arrays may have)
    and one shape, not empty (a blob of empty rows could not say how many there are)."""
    first = values[0]
    return (type(first) is np.ndarray and first.dtype.kind in ARRAY_KINDS and first.size > 0
            and all(type(item) is np.ndarray and item.dtype == first.dtype
                    and item.shape == first.shape for item in values))


def _stacked(arrays):
    """Alike arrays (:func:`_alike_arrays`) as one node and one blob."""
    return {"$": "arrays", "dtype": arrays[0].dtype.str, "shape": list(arrays[0].shape),
            # stacking may change the byte order; the dtype sent names the bytes
            "data": np.stack(arrays).astype(arrays[0].dtype, copy=False).tobytes()}


def _alike_columns(values):
    """The columns of ``values`` when they are all tuples, or all lists, of one length (at
    most :data:`MAX_COLUMNS`) whose items, position by position, are alike arrays (a list
    of batches, each one array per field); else None."""
    kind, width = type(values[0]), len(values[0]) if type(values[0]) in (tuple, list) else 0
    if not (0 < width <= MAX_COLUMNS
            and all(type(row) is kind and len(row) == width for row in values)):
        return None
    columns = list(zip(*values))
    return columns if all(_alike_arrays(column) for column in columns) else None


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
    if tag == "scalars":
        return _scalars(node)
    if tag == "arrays":
        return _arrays(node)
    if tag == "rows":
        return _rows(node)
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


_DTYPES = {}  # dtype name -> np.dtype, of the names that were allowed


def _dtype(name, kinds):
    """The numpy dtype called ``name`` if its kind is one of ``kinds``."""
    if not isinstance(name, str):
        raise WireError("a dtype that is not a name")
    dtype = _DTYPES.get(name)
    if dtype is None:
        try:
            dtype = np.dtype(name)
        except (TypeError, ValueError):
            raise WireError(f"not a dtype: {name[:40]!r}") from None
        if dtype.kind not in ARRAY_KINDS or dtype.hasobject or dtype.fields is not None:
            raise WireError(f"values of dtype {dtype} cannot cross")
        _DTYPES[name] = dtype
    if dtype.kind not in kinds:
        raise WireError(f"a {dtype} value cannot cross this way")
    return dtype


def _scalar(node):
    if "data" in node:
        return _array({**node, "shape": []})[()]
    dtype, value = _dtype(node.get("dtype"), "biuf"), node.get("value")
    expected = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float)}[dtype.kind]
    if type(value) not in expected:
        raise WireError(f"a {dtype} scalar holds {type(value).__name__}")
    try:
        return dtype.type(value)
    except (OverflowError, ValueError):
        raise WireError(f"{value!r} does not fit a {dtype} scalar") from None


def _scalars(node):
    dtype, data = _dtype(node.get("dtype"), "biuf"), node.get("data")
    if not isinstance(data, (bytes, memoryview)):
        raise WireError("a list of scalars without its blob")
    count, left = divmod(len(data), dtype.itemsize)
    # as many numbers as a message's items may make (a blob costs no brackets or commas)
    if left or count > FROM_SANDBOX.items:
        raise WireError(f"a list of {dtype} scalars cannot hold {len(data)} bytes")
    values = np.frombuffer(data, dtype=dtype)
    if dtype.kind == "b" and bytes(data).strip(b"\x00\x01"):
        raise WireError("a list of booleans holds a byte that is neither 0 nor 1")
    return list(values.copy())  # numpy scalars of the dtype, as the list held


def _arrays(node):
    shape = node.get("shape")
    if type(shape) is not list or len(shape) > 31:
        raise WireError("a list of arrays has an impossible shape")
    data = node.get("data")
    each = math.prod(shape) if all(type(size) is int and size > 0 for size in shape) else 0
    dtype = _dtype(node.get("dtype"), ARRAY_KINDS)
    if not each or not isinstance(data, (bytes, memoryview)) \
            or len(data) % (each * dtype.itemsize):
        raise WireError("a list of arrays whose blob does not fit its shape")
    count = len(data) // (each * dtype.itemsize)
    if count > FROM_SANDBOX.items:
        raise WireError(f"a list of {count} arrays is too long")
    stacked = _array({**node, "shape": [count, *shape]})
    return [stacked[row, ...] for row in range(count)]  # arrays, 0-d ones too


def _rows(node):
    """The list of tuples (or lists) a "rows" node stands for: row k holds the k-th array
    of each column."""
    columns, as_tuples = node.get("columns"), node.get("tuple")
    if type(columns) is not list or not 0 < len(columns) <= MAX_COLUMNS \
            or type(as_tuples) is not bool:
        raise WireError("a list of rows without its columns")
    if not all(type(column) is dict and column.get("$") == "arrays" for column in columns):
        raise WireError("a column of rows that is not a list of arrays")
    arrays = [_arrays(column) for column in columns]
    count = len(arrays[0])
    if any(len(column) != count for column in arrays):
        raise WireError("a list of rows whose columns differ in length")
    if count * len(arrays) > FROM_SANDBOX.items:
        raise WireError(f"a list of {count} rows of {len(arrays)} arrays is too long")
    return [tuple(row) if as_tuples else list(row) for row in zip(*arrays)]


def _array(node):
    dtype, shape, data = _dtype(node.get("dtype"), ARRAY_KINDS), node.get("shape"), \
        node.get("data")
    if not isinstance(data, (bytes, memoryview)):  # JSON cannot make these: a blob's
        raise WireError("an array without its blob")
    if type(shape) is not list or len(shape) > 32 or \
            not all(type(size) is int and size >= 0 for size in shape):
        raise WireError("an array has an impossible shape")
    if math.prod(shape) * dtype.itemsize != len(data):
        raise WireError(f"an array of shape {tuple(shape)} and dtype {dtype} cannot hold "
                        f"{len(data)} bytes")
    # the rows it declares, at every depth, not only its bytes: an empty array of shape
    # (10**12, 0) is 0 bytes, and 10**12 lists the moment anything lists it
    if any(math.prod(shape[:depth]) > FROM_SANDBOX.items for depth in range(1, len(shape))):
        raise WireError(f"an array of shape {tuple(shape)} declares more rows than a "
                        f"message may hold ({FROM_SANDBOX.items:,})")
    try:
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()  # writable, owned
    except ValueError as error:  # a shape numpy cannot make, such as (2**64, 0)
        raise WireError(f"an array has an impossible shape: {error}") from None


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


# A mirrored call's answer with more numbers than this crosses as a digest of its bytes
# (:func:`digest`), not as numbers: a sampled batch of 64 CartPole rows is 700 numbers, and
# their JSON text cost more to write and read than the call itself. Both sides run the same
# code on the same data, so the bytes are equal when the answers are.
LOOSE_NUMBERS = 64


def numbers_in(value, limit=LOOSE_NUMBERS):
    """How many numbers ``value`` holds (lists, tuples and dicts looked into), counting
    stopped once past ``limit``."""
    if type(value) is np.ndarray:
        return value.size
    if type(value) in (list, tuple) or _is_namedtuple(value):
        count = 0
        for item in value:
            count += numbers_in(item, limit - count) if type(item) not in SCALARS else 1
            if count > limit:
                break
        return count
    if type(value) is dict:
        return numbers_in(list(value.values()), limit)
    return 1


def digest(value):
    """A digest of ``value`` that is equal only for values of the same types and shapes
    holding the same bytes (a NaN is a NaN); None for what is not plain data."""
    hasher = hashlib.blake2b(digest_size=16)
    try:
        _digest_into(hasher, value, 0)
    except WireError:
        return None
    return hasher.hexdigest()


def _digest_into(hasher, value, depth):
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    kind = type(value)
    if kind is np.ndarray and value.dtype.kind in ARRAY_KINDS:
        hasher.update(f"a{value.dtype.str}{value.shape}".encode())
        hasher.update(np.ascontiguousarray(value).tobytes())
    elif kind in SCALARS or isinstance(value, np.generic) and value.dtype.kind in "biuf":
        hasher.update(f"s{kind.__name__}:{value!r};".encode())
    elif kind in (list, tuple) or _is_namedtuple(value):
        hasher.update(f"l{kind.__name__}{len(value)}[".encode())
        for item in value:
            _digest_into(hasher, item, depth + 1)
        hasher.update(b"]")
    elif kind is dict:
        hasher.update(f"d{len(value)}{{".encode())
        for key, item in value.items():
            _digest_into(hasher, key, depth + 1)
            _digest_into(hasher, item, depth + 1)
        hasher.update(b"}")
    else:
        raise WireError(f"{kind.__name__} is not plain data")


def canonical(node):
    """A string that is equal for equal encoded values (NaN equals NaN)."""
    return json.dumps(node, allow_nan=True, separators=(",", ":"), sort_keys=True)


# --- frames ---------------------------------------------------------------------------

def pack(message, limit):
    """The frame of ``message`` (its encoded values' bytes become blobs), or
    :class:`WireError` if it is over ``limit`` (a :class:`Limit`)."""
    encoder, blobs = _frame_encoder()
    blobs.clear()
    try:
        text = encoder.encode(message).encode()
    except (TypeError, ValueError, RecursionError) as error:
        raise WireError(f"cannot send this message: {error}") from None
    size = HEADER.size + BLOB_LENGTH.size * len(blobs) + len(text) + sum(map(len, blobs))
    if size > limit.bytes:
        raise WireError(f"a message of {size} bytes is too large to send (the limit is "
                        f"{limit.bytes})")
    _check_items(text, limit, "is too large to send")
    lengths = struct.pack(f"<{len(blobs)}I", *map(len, blobs))
    return b"".join([HEADER.pack(len(text), len(blobs)), lengths, text, *blobs])


_THREAD = threading.local()


def _frame_encoder():
    """(this thread's JSON encoder, the list it puts blobs in): made once, since making
    one costs more than encoding a small message."""
    if not hasattr(_THREAD, "encoder"):
        blobs = []

        def attach(data):  # the encoder calls this for what JSON cannot hold
            if type(data) is not bytes:
                raise TypeError(f"{type(data).__name__} is not JSON")
            blobs.append(data)
            return len(blobs) - 1

        _THREAD.encoder = json.JSONEncoder(allow_nan=True, separators=(",", ":"),
                                           default=attach)
        _THREAD.blobs = blobs
    return _THREAD.encoder, _THREAD.blobs


def items_in(text):
    """The ``[``, ``{`` and ``,`` bytes of JSON ``text``: counted without parsing, a
    bound on the objects it can become (at most about twice as many: a dict's key and
    value share a comma)."""
    return text.count(b"[") + text.count(b"{") + text.count(b",")


def _check_items(text, limit, refusal):
    items = items_in(text)
    if items > limit.items:
        raise WireError(f"a message of {items} items (lists, dicts and their elements) "
                        f"{refusal} (the limit is {limit.items})")
    return items


def unpack(frame, limit):
    """The message of a complete ``frame`` (bytes), its array nodes holding their blobs;
    a text of more items than ``limit`` allows is refused unparsed."""
    text, blobs = _split(frame)
    blobs.items_left = limit.items - _check_items(text, limit, "is refused unparsed")
    try:
        message = json.loads(text.decode(), object_hook=blobs.take if blobs.count else None)
    except WireError:
        raise
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise WireError(f"a message is not JSON: {str(error)[:100]}") from None
    if not isinstance(message, dict):
        raise WireError("a message is not a JSON object")
    blobs.check_all_taken()
    return message


def _split(frame):
    """(JSON text, :class:`_Blobs`) of a complete ``frame``, if its parts add up."""
    if len(frame) < HEADER.size:
        raise WireError("a frame shorter than its header")
    text_size, count = HEADER.unpack_from(frame)
    start = HEADER.size + BLOB_LENGTH.size * count  # of the text
    if len(frame) < start + text_size:
        raise WireError("a frame shorter than its header says")
    bounds = list(itertools.accumulate(_blob_lengths(frame[HEADER.size:start], count),
                                       initial=start + text_size))
    if len(frame) != bounds[-1]:
        raise WireError("a frame's size is not the sum of its parts")
    return frame[start:start + text_size], _Blobs(frame, bounds)


def _blob_lengths(table, count):
    """The blob lengths of a frame's length table (Python ints: sums cannot overflow)."""
    return struct.unpack_from(f"<{count}I", table) if count else ()


class _Blobs:
    """The blobs of a frame, each handed to the one node that names it."""

    def __init__(self, frame, bounds):
        self.frame, self.bounds = memoryview(frame), bounds  # blob i: bounds[i:i + 2]
        self.count = len(bounds) - 1
        self.taken = bytearray(self.count)  # a byte per blob, not an object per blob
        self.items_left = math.inf  # set by unpack: what the text's items leave

    def take(self, node):
        """``node`` with its blob as ``"data"``, if it is an array or scalar that names
        one (json.loads calls this for every JSON object, innermost first)."""
        if node.get("$") in ("array", "arrays", "scalar", "scalars") and "data" in node:
            index = node["data"]
            if type(index) is not int or not 0 <= index < self.count or self.taken[index]:
                raise WireError("an array names a blob that is missing or already taken")
            self.taken[index] = 1  # so decoding makes no more array bytes than came
            node["data"] = self.frame[self.bounds[index]:self.bounds[index + 1]]
            if node["$"] in ("scalars", "arrays"):  # an object per number or row
                self._count_items(node, len(node["data"]))
        return node

    def _count_items(self, node, size):
        """Count a list's numbers or rows as the text's items are counted (the message's
        limit holds for both together)."""
        per_item = _dtype(node.get("dtype"), ARRAY_KINDS).itemsize
        shape = node.get("shape") if node["$"] == "arrays" else []
        if type(shape) is list and all(type(length) is int and length > 0 for length in shape):
            per_item *= math.prod(shape)  # else refused when decoded; counted high here
        self.items_left -= size // max(per_item, 1)
        if self.items_left < 0:
            raise WireError("a message of more items (lists, dicts, their elements and the "
                            "numbers of lists of numpy values) than its limit is refused")

    def check_all_taken(self):
        if self.taken.count(0):
            raise WireError("a blob of a message belongs to no array")


class Channel:
    """Messages (JSON objects) over a connected stream socket.

    ``receive(deadline)`` and ``send(message, deadline)`` give up at the
    ``time.monotonic()`` deadline (None: wait forever) with :class:`ChannelTimeout`.
    A side sends no frame over ``send_limit`` and refuses, unread, any frame over
    ``receive_limit`` (:class:`Limit` s: :data:`FROM_SANDBOX` or :data:`TO_SANDBOX`).
    """

    def __init__(self, sock, send_limit, receive_limit, blocking=False):
        """``blocking``: wait in the socket calls themselves, for a side that never sets
        deadlines (the student's): one system call fewer per message."""
        self.sock = sock
        self.sock.setblocking(blocking)
        self.send_limit, self.receive_limit = send_limit, receive_limit
        self.blocking = blocking
        self.pending = bytearray()
        self._pollers = {}

    def fileno(self):
        return self.sock.fileno()

    def close(self):
        self.sock.close()

    def send(self, message, deadline=None):
        data = memoryview(pack(message, self.send_limit))
        while data:
            try:  # the socket's buffer almost always has room: wait only when it has not
                sent = self.sock.send(data)
            except BlockingIOError:
                self._wait(select.POLLOUT, deadline)
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise ChannelClosed("the other side closed the channel") from None
            data = data[sent:]

    def receive(self, deadline=None):
        """The next message. A timeout keeps what has arrived, so a later call goes on
        where this one stopped. A frame over the limit is refused before it is read."""
        self._fill(HEADER.size, deadline)
        text_size, count = HEADER.unpack_from(self.pending)
        if count > self.receive_limit.items:  # each blob needs an array node of the text
            raise WireError(f"a message of {count} blobs is refused unread (the limit is "
                            f"{self.receive_limit.items})")
        start = HEADER.size + BLOB_LENGTH.size * count  # of the text
        self._refuse_over_limit(start + text_size)
        self._fill(start, deadline)
        size = start + text_size + sum(_blob_lengths(self.pending[HEADER.size:start], count))
        self._refuse_over_limit(size)
        self._fill(size, deadline)
        with memoryview(self.pending) as pending:  # one copy, not two
            frame = bytes(pending[:size])
        del self.pending[:size]
        return unpack(frame, self.receive_limit)

    def _refuse_over_limit(self, size):
        if size > self.receive_limit.bytes:
            raise WireError(f"a message of {size} bytes or more is refused unread (the "
                            f"limit is {self.receive_limit.bytes})")

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


def channel_from_fd(fd, send_limit, receive_limit, blocking=False):
    return Channel(socket.socket(fileno=fd), send_limit, receive_limit, blocking)
