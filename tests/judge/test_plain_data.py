"""A check's data becomes exactly what a JSON round trip makes of it, however it is copied."""

import collections
import json
import math
import random

import numpy as np
import pytest

from checks.framework import as_plain_data


def through_json(value):
    return json.loads(json.dumps(value, allow_nan=True))


def same(a, b):
    """Equal value for value and type for type (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    return a == b


def containers(value):
    """ids of the lists and dicts in ``value``."""
    if isinstance(value, (list, tuple)):
        return {id(value)} | set().union(*map(containers, value)) if value else {id(value)}
    if isinstance(value, dict):
        return {id(value)} | set().union(*map(containers, value.values()))
    return set()


SCALARS = (0, -7, 2**62, -(2**70), True, False, None, 0.0, -0.0, 1.5, -2.25e-300, 1e308,
           math.inf, -math.inf, math.nan, "", "text", "\u00e9\ud800", "NaN")


def random_plain(rng, depth=0):
    kind = rng.randrange(6 if depth < 6 else 1)
    if kind == 0:
        return rng.choice(SCALARS) if rng.random() < 0.5 else rng.uniform(-1e6, 1e6)
    if kind in (1, 2):
        items = [random_plain(rng, depth + 1) for _ in range(rng.randrange(5))]
        return items if kind == 1 else tuple(items)
    if kind == 3:
        return {rng.choice(("a", "b", "state", "", "1")) + str(index): random_plain(
            rng, depth + 1) for index in range(rng.randrange(4))}
    if kind == 4:
        return [rng.random() for _ in range(rng.randrange(50))]
    return [rng.randrange(-1000, 1000) for _ in range(rng.randrange(50))]


def test_plain_data_is_copied_as_json_would_give_it_back():
    rng = random.Random(20261201)
    for _ in range(3000):
        value = random_plain(rng)
        copied = as_plain_data(value)
        assert same(copied, through_json(value)), value
        assert not containers(copied) & containers(value), "the copy shares a container"


Point = collections.namedtuple("Point", "x y")


class Count(int):
    pass


class Name(str):
    pass


def deeply_nested(depth):
    value = [1.5]
    for level in range(depth):
        value = [level, {"k": (value,)}] if level % 2 else [value, -0.0]
    return value


@pytest.mark.parametrize("value", [
    {3: "a", 2.5: "b", True: "c", None: "d", "e": [1]},  # keys JSON writes as strings
    {1: "kept last", "1": "first"},  # two keys that JSON makes one
    Point(1, 2.0), [Point(1, 2.0)], Count(3), [Count(3)], Name("x"), {"k": Name("x")},
    [10 ** 1300], deeply_nested(120), [math.nan, -math.nan, math.inf],
], ids=lambda value: type(value).__name__)
def test_what_is_not_plain_becomes_what_json_makes_of_it(value):
    assert same(as_plain_data(value), through_json(value))


def refusal(convert, value):
    try:
        convert(value)
    except Exception as error:  # noqa: BLE001 - the refusal itself is compared
        return type(error), str(error)
    return None


circular = [1, 2]
circular.append(circular)


@pytest.mark.parametrize("value", [
    np.int64(3), [1, np.float32(0.5)], {"rows": np.zeros(3)}, {(1, 2): "tuple key"},
    {1, 2}, b"bytes", circular, [10 ** 5000], object(),
], ids=lambda value: type(value).__name__)
def test_what_json_refuses_is_refused_in_its_words(value):
    refused = refusal(through_json, value)
    assert refused is not None
    assert refusal(as_plain_data, value) == refused
