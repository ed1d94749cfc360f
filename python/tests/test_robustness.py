"""What hooks that mutate their input, hostile buffers and odd subclasses
must not do: crash, read freed objects, lose order or data, or cost time
out of proportion to the input. One test per way a review found it could go
wrong."""

from __future__ import annotations

import collections
import gc
import threading

import pytest

import tersa
import tersa._types


class Opaque:
    pass


# --- hooks that change the container being encoded ---------------------------


def test_default_that_empties_its_list_and_raises():
    holder = [Opaque(), 1, 2]

    def default(o):
        holder.clear()  # the list held the only reference to o
        gc.collect()
        raise RuntimeError("no")

    with pytest.raises(tersa.EncodeError, match=r"Opaque at \$\[0\]"):
        tersa.dumps(holder, default=default)


def test_default_that_empties_its_list_and_returns():
    holder = [Opaque(), 1, 2]

    def default(o):
        holder.clear()
        gc.collect()
        return "replacement"

    with pytest.raises(tersa.EncodeError, match="list changed size"):
        tersa.dumps(holder, default=default)


def test_default_that_deletes_its_dict_entry_and_raises():
    holder = {"k" * 40: Opaque(), "other": 1}

    def default(o):
        holder.clear()  # frees the key and the value
        gc.collect()
        raise RuntimeError("no")

    with pytest.raises(tersa.EncodeError, match="dict changed during encoding"):
        tersa.dumps(holder, default=default)


def test_map_pairs_list_changed_by_default():
    pairs = [("a", Opaque()), ("b", 2)]
    m = tersa.Map(pairs)
    pairs.clear()  # Map keeps its own tuple

    def default(o):
        return "x"

    assert tersa.loads(tersa.dumps(m, default=default)) == {"a": "x", "b": 2}


# --- dictionaries given as sequences -----------------------------------------


def test_dictionary_strings_changed_while_reading_shapes():
    strings = ["first string", "second string"]

    class Shape:
        def __iter__(self):
            strings[:] = ["replaced"]
            gc.collect()
            return iter(["id", "name"])

    d = tersa.Dictionary(strings, [Shape()])
    assert d.strings == ("first string", "second string")
    assert d.shapes == (("id", "name"),)


def test_decoder_keeps_its_dictionaries():
    d = tersa.Dictionary(["shared value"], [["id", "name"]])
    data = tersa.dumps_stream([{"id": 1, "name": "shared value"}], dictionary=d)
    given = [d]
    dec = tersa.Decoder(dictionaries=given)
    given.clear()
    del d
    gc.collect()
    dec.feed(data)
    assert list(dec) == [{"id": 1, "name": "shared value"}]


# --- ints, dicts and Maps of odd kinds ----------------------------------------


class LyingInt(int):
    def __neg__(self):
        return 5

    def __index__(self):
        return 7

    def __int__(self):
        return 9


def test_int_subclasses_encode_their_own_value():
    for v in (-(2**70), 2**70, -(2**63) - 1, 2**64):
        assert tersa.loads(tersa.dumps(LyingInt(v))) == v


def test_ordered_dict_order_is_its_own():
    od = collections.OrderedDict(a=1, b=2, c=3)
    od.move_to_end("a")
    assert list(tersa.loads(tersa.dumps(od))) == ["b", "c", "a"]

    class Sub(dict):
        def items(self):
            return reversed(list(super().items()))

        def keys(self):
            return reversed(list(super().keys()))

    assert list(tersa.loads(tersa.dumps(Sub(x=1, y=2)))) == ["y", "x"]


def test_equal_maps_hash_equal():
    a = tersa.Map([(float("nan"), 1), ("k", [1.0])])
    b = tersa.Map([(float("nan"), 1), ("k", [1.0])])
    assert a == b and hash(a) == hash(b)
    assert tersa.Map([(1, 1)]) != tersa.Map([(1.0, 1)])


def test_deep_map_hashes_without_recursion():
    m = tersa.Map([])
    for _ in range(50_000):
        m = tersa.Map([("k", m)])
    assert isinstance(hash(m), int)


# --- depth ------------------------------------------------------------------


def nested(depth: int) -> bytes:
    header = tersa.dumps([])[:-1]
    return header + b"\x81" * (depth - 1) + b"\x80"


# --- long keys repeated by reference ------------------------------------------


def test_long_key_repeated_by_many_shapes():
    # The first map written by dumps, then maps i > 0 as their canonical
    # bytes: MAPDEF2, reference 0 (the long key), "f%04x", 1, null.
    long_key = "k" * 200_000
    maps = 5000
    first = tersa.dumps([{long_key: 1, "f0000": None}] + [0] * (maps - 1))
    head = first[: first.index(b"\xa9\xe0") + 2]
    tails = b"".join(b"\x92\x00\x45" + b"f%04x" % i + b"\xa9\xe0" for i in range(1, maps))
    value = tersa.loads(head + tails)
    assert len(value) == maps
    keys = [next(iter(m)) for m in value]
    assert all(k is keys[0] for k in keys), "one key object per call"
    assert keys[0] == long_key and value[-1] == {long_key: 1, f"f{maps - 1:04x}": None}


# --- streams ----------------------------------------------------------------


def test_decoder_after_an_exception_that_is_not_a_decode_error(monkeypatch):
    data = tersa.dumps_stream([{tersa.Map([("a", 1)]): 1}, "after"])

    def broken(_):
        raise RuntimeError("hash failed")

    dec = tersa.Decoder()
    dec.feed(data)
    monkeypatch.setattr(tersa._types, "_tersa_key", broken)
    with pytest.raises(RuntimeError, match="hash failed"):
        next(dec)
    monkeypatch.undo()
    with pytest.raises(tersa.DecodeError) as e:
        next(dec)
    assert e.value.code == "stream_broken"
    assert isinstance(e.value.__cause__, RuntimeError)
