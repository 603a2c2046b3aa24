"""The frame format of the channel to a student's process
(grader/judge/sandbox_runtime/wire.py): arrays travel as raw blobs, rebuilt exactly, and a
frame that could cost the grader more memory than the limits allow is refused before it is
parsed, or before it is read."""

import json
import socket
import struct
import threading
import time
import tracemalloc

import numpy as np
import pytest

from grader.judge.sandbox_runtime import wire

DTYPES = ["?", "i1", "<i2", "<i4", "<i8", ">i4", "u1", "<u2", "<u4", "<u8", "<f2", "<f4",
          "<f8", ">f8", "<c8", "<c16"]
SHAPES = [(), (0,), (3, 0, 2), (1,), (4, 5), (2, 3, 4)]


def no_objects(node):
    raise wire.WireError("no objects here")


def through_channel(message, sends=wire.FROM_SANDBOX, receives=wire.FROM_SANDBOX):
    """``message`` sent over a socket pair and received: both sides' code, in order."""
    left, right = socket.socketpair()
    sender = wire.Channel(left, sends, wire.TO_SANDBOX)
    receiver = wire.Channel(right, wire.TO_SANDBOX, receives)
    thread = threading.Thread(target=sender.send, args=(message,))
    thread.start()
    try:
        return receiver.receive()
    finally:
        thread.join()
        sender.close()
        receiver.close()


def round_trip(value):
    message = through_channel({"op": "reply", "value": wire.encode(value, no_objects)})
    return wire.decode(message["value"], no_objects, no_objects)


def frame(text, blobs=(), lengths=None):
    """A frame of JSON ``text`` (str) and ``blobs``, built by hand; ``lengths`` may lie."""
    lengths = [len(blob) for blob in blobs] if lengths is None else lengths
    body = text.encode()
    table = struct.pack(f"<{len(lengths)}I", *lengths)
    return wire.HEADER.pack(len(body), len(lengths)) + table + body + b"".join(blobs)


def array_message(dtype="<f8", shape=(2,), data=0):
    return json.dumps({"op": "reply", "value": {"$": "array", "dtype": dtype,
                                                "shape": list(shape), "data": data}})


def decoded_value(raw_frame):
    message = wire.unpack(raw_frame, wire.FROM_SANDBOX)
    return wire.decode(message["value"], no_objects, no_objects)


# --- round trips -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_arrays_of_every_allowed_kind_and_shape_come_back_exactly(dtype):
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        raw = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize,
                           dtype=np.uint8).tobytes()  # any bits: NaNs and subnormals too
        array = np.frombuffer(raw, dtype=dtype).reshape(shape)
        if array.dtype.kind == "b":
            array = np.asarray(array.view(np.uint8) % 2 == 1)  # bools of 0 and 1
        originals = [array, array.T, array[::-1] if array.ndim else array]  # some strided
        for original, copy in zip(originals, round_trip(originals)):
            assert type(copy) is np.ndarray and copy.dtype == original.dtype
            assert copy.shape == original.shape and copy.flags.writeable
            assert copy.tobytes() == original.tobytes()


def test_scalars_large_arrays_and_nested_values_come_back():
    big = np.arange(2**18, dtype=np.float64)  # 2 MB: more than a student's reply may be
    value = {"big": big, ("a", 1): (np.complex64(1 - 2j), np.float32(0.1), np.int8(-3),
                                    np.bool_(True), [np.nan, float("inf"), "s", None])}
    message = through_channel({"op": "call", "value": wire.encode(value, no_objects)},
                              sends=wire.TO_SANDBOX, receives=wire.TO_SANDBOX)
    back = wire.decode(message["value"], no_objects, no_objects)
    assert np.array_equal(back["big"], big) and back["big"].dtype == big.dtype
    scalars = back[("a", 1)]
    assert [type(item) for item in scalars[:4]] == [np.complex64, np.float32, np.int8,
                                                    np.bool_]
    assert scalars[:4] == (np.complex64(1 - 2j), np.float32(0.1), np.int8(-3), True)
    assert wire.canonical(wire.loose(scalars[4])) == wire.canonical(
        [float("nan"), float("inf"), "s", None])


def test_plain_and_loose_forms_are_unchanged():
    value = (np.arange(3), {"k": np.float64(2.5)}, [np.bool_(False)])
    assert wire.loose(value) == [[0, 1, 2], {"k": 2.5}, [False]]
    assert wire.loosely_equal(wire.plain(value), wire.loose(value))
    again = wire.plain(value)
    assert np.array_equal(again[0], value[0]) and again[0] is not value[0]


def test_an_array_is_copied_when_encoded_not_when_sent():
    array = np.zeros(3)
    node = wire.encode(array, no_objects)
    array[:] = 7  # student code may change it before the reply goes
    assert np.array_equal(wire.decode(node, no_objects, no_objects), np.zeros(3))


def test_arrays_cross_as_raw_bytes_not_base64():
    array = np.arange(1000, dtype=np.float64)
    packed = wire.pack({"op": "reply", "value": wire.encode(array, no_objects)},
                       wire.FROM_SANDBOX)
    assert array.tobytes() in packed and len(packed) < array.nbytes + 200


LISTS_OF_NUMPY_VALUES = [
    [np.int64(3), np.int64(-4), np.int64(2**62)],
    [np.float32(0.1), np.float32(np.nan), np.float32(-np.inf)],
    [np.True_, np.False_, np.True_],
    [np.array(3), np.array(4)],  # a buffer's 0-d fields, as list(field) gives them
    [np.zeros((2, 3), np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)],
    [np.zeros(0), np.zeros(0)],  # empty rows: item by item
    [np.int64(1), np.int32(2)],  # two dtypes: item by item
    [np.array(1), np.array(1.0)],
    [np.array([1, 2]), np.array([3])],  # two shapes
    [np.float64(2.5)],
]


@pytest.mark.parametrize("values", LISTS_OF_NUMPY_VALUES, ids=lambda values: repr(values)[:40])
def test_a_list_of_numpy_values_comes_back_as_the_same_list(values):
    back = round_trip(values)
    assert type(back) is list and len(back) == len(values)
    for sent, got in zip(values, back):
        assert type(got) is type(sent) and got.dtype == sent.dtype
        assert np.shape(got) == np.shape(sent)
        assert np.array_equal(got, sent, equal_nan=sent.dtype.kind == "f")


def test_a_list_of_numpy_values_of_one_kind_crosses_as_raw_bytes():
    scalars = list(np.arange(10_000, dtype=np.int64))
    rows = [np.array(value) for value in scalars]
    for values in (scalars, rows):
        packed = wire.pack({"op": "reply", "value": wire.encode(values, no_objects)},
                           wire.FROM_SANDBOX)
        assert np.arange(10_000, dtype=np.int64).tobytes() in packed
        assert len(packed) < 10_000 * 8 + 200


def batch(rng, size=8):
    """One sampled batch of Taxi transitions: five arrays of five dtypes."""
    return (rng.integers(0, 500, size), rng.integers(0, 6, size).astype(np.int32),
            rng.random(size), rng.integers(0, 500, size), rng.random(size) < 0.5)


LISTS_OF_ROWS = [
    [batch(np.random.default_rng(0)) for _ in range(3)],
    [list(batch(np.random.default_rng(1))) for _ in range(2)],  # rows as lists
    [batch(np.random.default_rng(2)), batch(np.random.default_rng(3), size=7)],  # two shapes
    [batch(np.random.default_rng(4)), list(batch(np.random.default_rng(5)))],  # two kinds
    [(np.zeros(2), np.int64(3)), (np.zeros(2), np.int64(4))],  # a column of scalars
    [(np.zeros(0),), (np.zeros(0),)],  # empty arrays: item by item
    [(np.zeros(2),) * 17, (np.zeros(2),) * 17],  # wider than a batch: item by item
]


@pytest.mark.parametrize("rows", LISTS_OF_ROWS, ids=lambda rows: repr(rows)[:40])
def test_a_list_of_rows_comes_back_as_the_same_rows(rows):
    back = round_trip(rows)
    assert type(back) is list and len(back) == len(rows)
    for sent, got in zip(rows, back):
        assert type(got) is type(sent) and len(got) == len(sent)
        for field, value in zip(sent, got):
            assert type(value) is type(field) and value.dtype == field.dtype
            assert np.shape(value) == np.shape(field) and np.array_equal(value, field)


def test_a_list_of_batches_crosses_as_one_blob_per_field():
    batches = [batch(np.random.default_rng(seed)) for seed in range(64)]
    value = wire.encode(batches, no_objects)
    assert value["$"] == "rows" and len(value["columns"]) == 5
    packed = wire.pack({"op": "reply", "value": value}, wire.FROM_SANDBOX)
    for field in range(5):
        assert np.stack([rows[field] for rows in batches]).tobytes() in packed
    back = round_trip(batches)
    back[0][0][:] = -1  # rows are arrays of their own: writing one changes no other
    assert all(np.array_equal(got[0], sent[0]) for got, sent in zip(back[1:], batches[1:]))


def rows_message(columns, as_tuples=True):
    nodes = [{"$": "arrays", "dtype": "<i8", "shape": [2], "data": index}
             for index in range(len(columns))]
    return frame(json.dumps({"op": "reply", "value": {"$": "rows", "tuple": as_tuples,
                                                      "columns": nodes}}), columns)


@pytest.mark.parametrize("raw", [
    rows_message([bytes(32), bytes(16)]),  # columns of two rows and of one
    rows_message([]),  # no columns
    rows_message([bytes(16)] * 17),  # more columns than a row may have
    rows_message([bytes(16)], as_tuples=1),
    frame(json.dumps({"op": "reply", "value": {"$": "rows", "tuple": True,
                                               "columns": [[1, 2]]}})),  # not arrays
    frame(json.dumps({"op": "reply", "value": {"$": "rows", "tuple": True,
                                               "columns": [{"$": "array", "dtype": "<i8",
                                                            "shape": [2], "data": 0}]}}),
          [bytes(16)]),  # one array, not a list of them
], ids=["uneven", "empty", "too-wide", "flag-not-bool", "not-arrays", "an-array"])
def test_a_list_of_rows_that_does_not_add_up_is_refused(raw):
    with pytest.raises(wire.WireError):
        decoded_value(raw)


@pytest.mark.parametrize("node, blob", [
    ({"$": "scalars", "dtype": "<i8"}, bytes(12)),  # not whole numbers
    ({"$": "scalars", "dtype": "?"}, bytes([0, 1, 2])),  # a boolean that is neither
    ({"$": "scalars", "dtype": "|O"}, bytes(16)),
    ({"$": "scalars", "dtype": "<c16"}, bytes(16)),
    ({"$": "arrays", "dtype": "<f8", "shape": [3]}, bytes(16)),  # not whole rows
    ({"$": "arrays", "dtype": "<f8", "shape": [0]}, bytes(0)),
    ({"$": "arrays", "dtype": "<f8", "shape": [2.0]}, bytes(16)),
    ({"$": "arrays", "dtype": "<f8", "shape": [-1]}, bytes(16)),
])
def test_a_list_whose_blob_does_not_fit_its_dtype_or_rows_is_refused(node, blob):
    text = json.dumps({"op": "reply", "value": {**node, "data": 0}})
    with pytest.raises(wire.WireError):
        decoded_value(frame(text, [blob]))


def test_numbers_in_blobs_count_against_a_messages_items():
    """A list of numpy values becomes an object per number: a frame may not make more
    of them than its text could."""
    count = wire.FROM_SANDBOX.items // 2 + 1
    node = {"$": "scalars", "dtype": "|i1", "data": 0}
    text = json.dumps({"op": "reply", "value": [node, {**node, "data": 1}]})
    blobs = [bytes(count), bytes(count)]
    assert len(frame(text, blobs)) < wire.FROM_SANDBOX.bytes
    with pytest.raises(wire.WireError, match="more items"):
        decoded_value(frame(text, blobs))
    assert len(decoded_value(frame(text, [bytes(count), bytes(10)]))[0]) == count


# --- malformed arrays --------------------------------------------------------------------

@pytest.mark.parametrize("text, blobs", [
    (array_message("<f8", (3,)), [bytes(16)]),  # 16 bytes for 24
    (array_message("<f8", (2,)), [bytes(17)]),
    (array_message("<f8", ()), [bytes(0)]),
    (array_message("|O", (2,)), [bytes(16)]),  # pointers
    (array_message("<U2", (2,)), [bytes(16)]),
    (array_message("V8", (2,)), [bytes(16)]),
    (array_message("(2,)f8", (1,)), [bytes(16)]),  # a subarray dtype
    (json.dumps({"op": "reply", "value": {"$": "array", "dtype": [["a", "<f8"]],
                                          "shape": [2], "data": 0}}), [bytes(16)]),
    (array_message("<f8", (2.0,)), [bytes(16)]),
    (array_message("<f8", (-1, -2)), [bytes(16)]),
    (array_message("<f8", (2**40, 2**40, 0)), [b""]),
    (array_message("<f8", (2,), data="AAAAAAAAAAAAAAAAAAAAAA=="), []),  # base64: no more
    (array_message("<f8", (2,), data=1), [bytes(16)]),  # no blob 1
    (json.dumps({"op": "reply", "value": {"$": "scalar", "dtype": "<c16", "data": 0}}),
     [bytes(8)]),
])
def test_an_array_whose_blob_does_not_fit_its_dtype_and_shape_is_refused(text, blobs):
    with pytest.raises(wire.WireError):
        decoded_value(frame(text, blobs))


def test_a_blob_serves_one_array_only():
    """Else one 1 MB blob named by a thousand nodes would become a GB of arrays."""
    twice = json.dumps({"op": "reply", "value": [{"$": "array", "dtype": "<f8",
                                                  "shape": [2], "data": 0}] * 2})
    with pytest.raises(wire.WireError, match="already taken"):
        wire.unpack(frame(twice, [bytes(16)]), wire.FROM_SANDBOX)
    with pytest.raises(wire.WireError, match="belongs to no array"):
        wire.unpack(frame(array_message(), [bytes(16), bytes(8)]), wire.FROM_SANDBOX)


@pytest.mark.parametrize("raw", [
    b"\x01\x00", frame('{"op":"reply"}')[:-1],
    frame('{"op":"reply"}') + b"x", frame(array_message(), [bytes(16)], lengths=[15]),
    frame("[1]"), frame('{"op": '),
])
def test_a_frame_that_does_not_add_up_is_refused(raw):
    with pytest.raises(wire.WireError):
        wire.unpack(raw, wire.FROM_SANDBOX)


# --- memory ------------------------------------------------------------------------------

def object_heavy_frame(size):
    """``[[],[],...]`` of about ``size`` bytes: 25 times that as Python objects."""
    count = (size - 40) // 3
    return frame('{"op":"reply","value":[' + "[]," * count + "[]]}")


def test_an_object_heavy_message_is_refused_without_parsing_it(monkeypatch):
    raw = object_heavy_frame(wire.FROM_SANDBOX.bytes - 64)
    size, items = len(raw), wire.items_in(raw)
    assert size <= wire.FROM_SANDBOX.bytes  # the byte limit lets it in
    assert items > wire.FROM_SANDBOX.items

    def parse(*args, **kwargs):
        raise AssertionError("json.loads was called")

    monkeypatch.setattr(wire.json, "loads", parse)
    tracemalloc.start()
    try:
        with pytest.raises(wire.WireError, match="items"):
            wire.unpack(raw, wire.FROM_SANDBOX)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(raw) + 2**20  # the text's copy, not millions of lists


def filling(element):
    """A message whose value repeats the JSON ``element`` as often as the limits allow."""
    count = min((wire.FROM_SANDBOX.bytes - 100) // (len(element) + 1),
                (wire.FROM_SANDBOX.items - 10) // (wire.items_in(element.encode()) + 1))
    return frame('{"op":"reply","value":[' + ",".join([element] * count) + "]}"), count


@pytest.mark.parametrize("element", ['[1.5]', '{"a":0}', '[[]]', '["ab","cd"]',
                                     '{"$":"dict","items":[[1,2]]}', '"abcdefgh"'])
def test_a_message_within_the_limits_costs_the_grader_bounded_memory(element):
    """The most objects per byte the limits let through (the worst of the shapes tried,
    about 26 MB for a 1 MB frame): parsed and decoded, not 25 times 256 MB as before."""
    raw, count = filling(element)
    size, items = len(raw), wire.items_in(raw)
    assert size <= wire.FROM_SANDBOX.bytes and items <= wire.FROM_SANDBOX.items
    tracemalloc.start()
    try:
        message = wire.unpack(raw, wire.FROM_SANDBOX)
        try:
            value = wire.decode(message["value"], no_objects, no_objects)
        except wire.WireError:  # an untagged dict: only parsed
            value = message["value"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(value) == count
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MB"


def write_in_background(sock, data):
    def write():
        try:
            sock.sendall(data)
        except OSError:
            pass  # the receiver refused it and closed
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_the_grader_refuses_an_oversized_frame_before_reading_it():
    left, right = socket.socketpair()
    grader = wire.Channel(right, wire.TO_SANDBOX, wire.FROM_SANDBOX)
    try:
        header = wire.HEADER.pack(wire.FROM_SANDBOX.bytes, 0)  # one byte too many
        left.sendall(header)  # and nothing else: the grader must not wait for the body
        with pytest.raises(wire.WireError, match="bytes"):
            grader.receive(deadline=None)
        left.sendall(wire.HEADER.pack(0, 2**32 - 1))  # four billion blobs
        grader.pending.clear()
        with pytest.raises(wire.WireError, match="blobs"):
            grader.receive(deadline=None)
        grader.pending.clear()
        left.sendall(wire.HEADER.pack(2, 1) + struct.pack("<I", wire.FROM_SANDBOX.bytes))
        with pytest.raises(wire.WireError, match="bytes"):
            grader.receive(deadline=None)
    finally:
        left.close()
        grader.close()


def test_the_grader_refuses_an_object_heavy_frame_from_the_socket():
    left, right = socket.socketpair()
    grader = wire.Channel(right, wire.TO_SANDBOX, wire.FROM_SANDBOX)
    writer = write_in_background(left, object_heavy_frame(wire.FROM_SANDBOX.bytes))
    try:
        with pytest.raises(wire.WireError, match="items"):
            grader.receive(deadline=None)
    finally:
        grader.close()
        left.close()
        writer.join()


# --- what a sender may send --------------------------------------------------------------

def test_a_reply_too_large_for_the_grader_is_refused_by_its_sender():
    left, right = socket.socketpair()
    student = wire.Channel(left, wire.FROM_SANDBOX, wire.TO_SANDBOX)
    try:
        for value in ([1 / 3] * (wire.FROM_SANDBOX.bytes // 18),  # bytes
                      [[]] * (wire.FROM_SANDBOX.items // 2 + 1),  # items
                      np.zeros(wire.FROM_SANDBOX.bytes // 8)):  # bytes of a blob
            with pytest.raises(wire.WireError, match="too large"):
                student.send({"op": "reply", "value": wire.encode(value, no_objects)},
                             deadline=time.monotonic() + 10)
        right.setblocking(False)
        with pytest.raises(BlockingIOError):
            right.recv(1)  # nothing was sent
    finally:
        left.close()
        right.close()


@pytest.mark.parametrize("shape", [(10**12, 0), (2, 10**12, 0), (3, 10**6, 0)])
def test_an_empty_array_declaring_too_many_rows_is_refused(shape):
    # 0 bytes pass every byte budget, but listing it would make its rows: refused by shape
    node = {"$": "array", "dtype": "<f8", "shape": list(shape), "data": b""}
    with pytest.raises(wire.WireError, match="declares more rows"):
        wire._array(node)


def test_an_empty_array_of_few_rows_still_crosses():
    node = {"$": "array", "dtype": "<f8", "shape": [wire.FROM_SANDBOX.items, 0], "data": b""}
    assert wire._array(node).shape == (wire.FROM_SANDBOX.items, 0)


def test_a_huge_list_is_refused_before_it_is_copied():
    for value in ([0] * 10**8, (0,) * (wire.FROM_SANDBOX.items + 1),
                  dict.fromkeys(range(wire.FROM_SANDBOX.items + 1))):
        with pytest.raises(wire.WireError, match="too large"):
            wire.encode([value], no_objects)


# --- digests: how a mirrored call's large answer is compared -------------------------------

def test_a_digest_is_equal_exactly_for_the_same_types_shapes_and_bytes():
    batch = (np.arange(8, dtype=np.float32).reshape(2, 4), np.array([0, 1]), [1.0, True])
    same = (batch[0].copy(), batch[1].copy(), [1.0, True])
    assert wire.digest(batch) == wire.digest(same) is not None
    assert wire.digest((np.array([np.nan]),)) == wire.digest((np.array([np.nan]),))
    others = [
        (batch[0].astype(np.float64), batch[1], [1.0, True]),  # another dtype
        (batch[0].reshape(4, 2), batch[1], [1.0, True]),  # another shape
        (batch[0] + 1, batch[1], [1.0, True]),  # other values
        [batch[0], batch[1], [1.0, True]],  # a list, not a tuple
        (batch[0], batch[1], [1, True]),  # an int, not a float
        (batch[0], batch[1], [1.0, 1]),  # an int, not a bool
        (batch[0], batch[1], {"a": 1.0}),
    ]
    digests = {wire.digest(other) for other in others}
    assert len(digests) == len(others) and wire.digest(batch) not in digests


def test_what_is_not_plain_data_has_no_digest():
    assert wire.digest([np.zeros(3), object()]) is None
    assert wire.digest(np.array(["a"])) is None  # not an array kind that crosses


def test_numbers_in_counts_into_containers_and_stops_past_its_limit():
    assert wire.numbers_in((np.zeros((64, 4)), 1.0), limit=1000) == 257
    assert wire.numbers_in((np.zeros((64, 4)), 1.0)) > wire.LOOSE_NUMBERS
    assert wire.numbers_in([1, 2.0, [3, {"x": 4}]]) == 4
    assert wire.numbers_in(list(range(10**6)), limit=10) == 11
