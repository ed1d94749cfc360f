"""Map keys that Python holds apart but Tersa considers equal (SPEC 1: keys
are distinct by Tersa equality, floats by bits) must make dumps() raise
EncodeError, never write a buffer every decoder rejects as duplicate_key;
keys that are distinct Tersa values must encode and come back exactly."""

from __future__ import annotations

import enum
import struct

import pytest

import tersa
from conftest import same


def nan(bits: int = 0x7FF8000000000000) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def refused(value, path: str | None = None) -> tersa.EncodeError:
    with pytest.raises(tersa.EncodeError, match="duplicate map key") as info:
        tersa.dumps(value)
    if path is not None:
        assert info.value.path == path
    # A stream refuses it as well, and writes nothing for it.
    enc = tersa.Encoder()
    with pytest.raises(tersa.EncodeError, match="duplicate map key"):
        enc.write(value)
    return info.value


def round_trips(value, expected_type) -> None:
    data = tersa.dumps(value)
    back = tersa.loads(data)
    assert type(back) is expected_type
    assert same(back, value)
    assert tersa.dumps(back) == data


def test_nan_keys_with_equal_bits():
    a, b = nan(), nan()
    assert a is not b
    error = refused({a: 1, b: 2}, "$[nan]")
    assert "nan" in str(error)


def test_nan_keys_inside_a_structure():
    refused([{"x": {nan(): 1, nan(): 2}}], "$[0][\"x\"][nan]")
    refused(tersa.Map([(nan(0x7FF8000000000123), 1), (nan(0x7FF8000000000123), 2)]))


def test_nan_keys_with_different_payloads():
    round_trips({nan(0x7FF8000000000000): 1, nan(0x7FF8000000000001): 2}, dict)
    round_trips({nan(0x7FF8000000000000): 1, nan(0xFFF8000000000000): 2}, dict)


def test_zero_and_negative_zero():
    round_trips(tersa.Map([(0.0, "plus"), (-0.0, "minus")]), tersa.Map)


def test_int_and_float():
    round_trips(tersa.Map([(1, "int"), (1.0, "float")]), tersa.Map)
    round_trips(tersa.Map([(1, "int"), (True, "bool"), (1.0, "float")]), tersa.Map)


def test_str_and_bytes():
    round_trips({"a": 1, b"a": 2}, dict)


def test_tuple_keys_holding_equal_nans():
    refused({(1, nan()): "x", (1, nan()): "y"})
    refused({(nan(), (nan(),)): 1, (nan(), (nan(),)): 2})
    round_trips({(1, nan(0x7FF8000000000000)): 1, (1, nan(0x7FF8000000000002)): 2}, dict)


def test_map_with_two_equal_keys():
    refused(tersa.Map([("a", 1), ("a", 2)]), '$["a"]')
    refused(tersa.Map([(tersa.Symbol("a"), 1), (tersa.Symbol("a"), 2)]))
    refused(tersa.Map([(1, 1), (1, 2)]), "$[1]")
    refused(tersa.Map([(b"k", 1), (bytearray(b"k"), 2)]))
    refused(tersa.Map([((1, 2), 1), ((1, 2), 2)]))
    refused(tersa.Map([(tersa.Map([("k", 1)]), 1), (tersa.Map([("k", 1)]), 2)]))
    # A symbol and a string of one text are distinct Tersa keys.
    round_trips(tersa.Map([("a", 1), (tersa.Symbol("a"), 2)]), tersa.Map)


class Distinct(str):
    """A str subclass whose instances are all different keys for Python."""

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


def test_str_subclass_keys_equal_as_strings():
    keys = [Distinct("k"), Distinct("k")]
    value = {keys[0]: 1, keys[1]: 2}
    assert len(value) == 2
    refused(value, '$["k"]')
    refused({"other": 0, keys[0]: 1, keys[1]: 2})
    with pytest.raises(tersa.EncodeError, match="duplicate map key"):
        tersa.dumps(value, option=tersa.OPT_PASSTHROUGH_SUBCLASS, default=str)


def test_enum_keys_equal_to_their_values():
    class Color(enum.Enum):
        RED = "red"

    refused({Color.RED: 1, "red": 2})
    round_trips({"red": 1, "blue": 2}, dict)


def test_distinct_str_subclass_keys_still_encode():
    value = {Distinct("a"): 1, Distinct("b"): 2}
    assert tersa.loads(tersa.dumps(value)) == {"a": 1, "b": 2}
