"""Round trips of every supported type, exact (types, float bits, order)."""

from __future__ import annotations

import collections
import math
import struct

import pytest

import tersa
from conftest import same


def rt(value, **kw):
    return tersa.loads(tersa.dumps(value, **kw))


@pytest.mark.parametrize("value", [None, True, False])
def test_constants(value):
    assert rt(value) is value


INTS = [0, 1, -1, 23, 24, -8, -9, 127, 128, 255, 256, 2**30 - 1, 2**30, -(2**30), 2**31 - 1, 2**31, 2**32,
        2**53 + 1, 2**60 - 1, 2**60, -(2**60) + 1, -(2**60), 2**62 + 3, -(2**62) - 3, 2**63 - 1, 2**63,
        2**64 - 1, 2**64, -(2**63), -(2**63) - 1, -(2**64), 10**40, -(10**40), 2**1000, -(2**1000) + 12345]


@pytest.mark.parametrize("value", INTS)
def test_int(value):
    out = rt(value)
    assert type(out) is int and out == value


def bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b))[0]


FLOATS = [0.0, -0.0, 1.0, -1.0, 0.1, 0.3 * 3, 1.5, 37.7749, -122.4194, 1e22, 1e23, 1e-7, 5e-324,
          2.2250738585072014e-308, 1.7976931348623157e308, float("inf"), float("-inf"), float("nan"),
          from_bits(0x7FF0000000000001), from_bits(0xFFF8000000000123), from_bits(0x7FF4000000000000),
          3.4028234663852886e38, 16777217.0, 0.5, 123456789.123, 1 / 3]


@pytest.mark.parametrize("value", FLOATS, ids=[hex(bits(f)) for f in FLOATS])
def test_float_bits(value):
    out = rt(value)
    assert type(out) is float and bits(out) == bits(value)


def test_int_and_float_stay_distinct():
    assert type(rt(1.0)) is float and type(rt(1)) is int
    assert same(rt([1, 1.0, True]), [1, 1.0, True])


STRINGS = ["", "x", "xy", "héllo", "日本語", "😀 emoji", "a" * 31, "a" * 32, "a" * 1000, "\x00\x7f",
           "2025-04-16T09:23:47Z", "2025-04-16", "2025-04-16 09:23:47.123+05:30", "usr_1", "\u0080\u07ff\u0800\uffff"]


@pytest.mark.parametrize("value", STRINGS)
def test_str(value):
    out = rt(value)
    assert type(out) is str and out == value


def test_repeated_strings_share_one_object():
    out = rt(["alpha", "alpha", "beta", "alpha"])
    assert out[0] is out[1] is out[3]


def test_binary():
    for v in [b"", b"\x00", bytes(range(256)), b"x" * 100000]:
        out = rt(v)
        assert type(out) is bytes and out == v
    assert rt(bytearray(b"abc")) == b"abc"
    assert rt(memoryview(b"abcdef")[1:4]) == b"bcd"
    # non-contiguous memoryview
    assert rt(memoryview(b"abcdef")[::2]) == b"ace"


def test_list_and_tuple():
    assert rt([]) == [] and type(rt(())) is list
    assert rt((1, "a", (2, 3))) == [1, "a", [2, 3]]
    long = list(range(10000))
    assert rt(long) == long


def test_dict_keeps_order():
    d = {"b": 1, "a": 2, "c": {"z": [], "y": {}}}
    out = rt(d)
    assert out == d and list(out) == ["b", "a", "c"] and list(out["c"]) == ["z", "y"]


def test_dict_keys_are_interned_and_shared():
    out = rt([{"name": 1, "other": 2}, {"name": 3, "other": 4}])
    a, b = (list(d) for d in out)
    assert a[0] is b[0] and a[1] is b[1]


def test_generic_keys():
    d = {1: "a", -5: "b", 2.5: "c", None: "d", True: "e", b"k": "f", (1, "x", (2,)): "g", "s": "h"}
    out = rt(d)
    assert same(out, d) and list(out) == list(d)


def test_empty_containers():
    v = [{}, [], "", b"", {"a": {}}, [[]]]
    assert same(rt(v), v)


def test_symbol():
    s = tersa.Symbol("id")
    out = rt(s)
    assert type(out) is tersa.Symbol and out == "id"
    assert isinstance(out, str) and repr(out) == "Symbol('id')"
    out = rt({tersa.Symbol("id"): 1, tersa.Symbol("name"): "x"})
    assert [type(k) for k in out] == [tersa.Symbol, tersa.Symbol] and out["id"] == 1


def test_symbol_as_str_option():
    out = tersa.loads(tersa.dumps({tersa.Symbol("a"): tersa.Symbol("b")}), option=tersa.OPT_SYMBOL_AS_STR)
    assert out == {"a": "b"} and all(type(x) is str for x in [*out.keys(), *out.values()])


def test_ext():
    e = tersa.Ext(7, b"\x01\x02")
    out = rt(e)
    assert type(out) is tersa.Ext and out == e and (out.type, out.data) == (7, b"\x01\x02")
    assert rt(tersa.Ext(0xFEFF, b"")) == tersa.Ext(0xFEFF, b"")
    with pytest.raises(tersa.EncodeError, match="reserved"):  # the well-known types' (SPEC 5.8)
        tersa.dumps(tersa.Ext(0xFF00, b"\x04"))
    with pytest.raises(ValueError):
        tersa.Ext(65536, b"")


def test_map_fallback_for_keys_python_cannot_hold_apart():
    # A symbol and a string with the same text are distinct Tersa keys but equal Python keys.
    m = tersa.Map([(tersa.Symbol("id"), 1), ("id", 2)])
    out = rt(m)
    assert type(out) is tersa.Map and same(out, m)
    # 1, 1.0 and True likewise.
    m = tersa.Map([(1, "a"), (1.0, "b"), (True, "c")])
    out = rt(m)
    assert type(out) is tersa.Map and same(out, m)
    # A map used as a map key decodes to a (hashable) Map.
    inner = tersa.Map([("a", 1)])
    m = tersa.Map([(inner, "x")])
    out = rt(m)
    assert type(out) is dict and same(out, m) and isinstance(next(iter(out)), tersa.Map)


def test_map_with_duplicate_keys_is_refused():
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(tersa.Map([("a", 1), ("a", 2)]))
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(tersa.Map([(1, 1), (1, 2)]))


def test_subclasses_encode_as_their_base():
    class S(str):
        pass

    class I(int):
        pass

    class F(float):
        pass

    class L(list):
        pass

    class D(dict):
        pass

    v = [S("abc"), I(5), F(1.5), L([1]), D(a=1), collections.OrderedDict(b=2), collections.defaultdict(int, c=3)]
    out = rt(v)
    assert same(out, ["abc", 5, 1.5, [1], {"a": 1}, {"b": 2}, {"c": 3}])
    assert [type(x) for x in out] == [str, int, float, list, dict, dict, dict]


def test_str_subclass_keys():
    class S(str):
        pass

    out = rt({S("a"): 1, "b": 2})
    assert out == {"a": 1, "b": 2} and all(type(k) is str for k in out)


def test_nested_structure():
    value = {"users": [{"id": i, "tags": ["a", "b"][: i % 3], "score": i / 7, "meta": None} for i in range(50)]}
    assert same(rt(value), value)


def test_nan_key_and_value():
    nan = float("nan")
    out = rt({nan: nan})
    (k, v), = out.items()
    assert math.isnan(k) and math.isnan(v)


def test_large_document():
    value = [{"k%d" % (i % 37): "v%d" % i, "n": i, "f": i * 0.25} for i in range(20000)]
    assert same(rt(value), value)


def test_many_shapes_and_strings_past_table_limits():
    # More than 65536 distinct shapes (the shape table fills up) and many strings.
    value = [{"key%d" % i: i} for i in range(70000)]
    assert same(rt(value), value)
