"""Counts are claims (SPEC 9): a decoder may allocate for a container's
claimed size before reading its items, but nested containers all claim the
same remaining bytes. A buffer of one-byte references to a 4,096-key shape,
each the first value of the previous map, must not make loads() allocate a
full dict table per byte before the input runs out."""

from __future__ import annotations

import tracemalloc

import tersa

KEYS = [f"k{i}" for i in range(4096)]


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def nested_shape_references(levels: int) -> bytes:
    """[map of the shape, map of the shape whose first value is a map of the
    shape whose first value is ...], cut after the innermost map's values."""
    one = tersa.dumps([{k: 0 for k in KEYS}])
    two = tersa.dumps([{k: 0 for k in KEYS}, {k: 0 for k in KEYS}])
    reference = two[len(one) : len(one) + 1]  # the second map opens with a one-byte shape reference
    assert reference == b"\x60"
    zero = tersa.dumps(0)[-1:]
    return two[:4] + one[4:] + reference * levels + zero * len(KEYS)


def test_nested_shape_references_allocate_in_proportion_to_the_input():
    data = nested_shape_references(3000)
    assert len(data) < 30_000

    def decode():
        try:
            tersa.loads(data, max_depth=4000)
        except tersa.DecodeError as e:
            assert e.code == "truncated"
        else:
            raise AssertionError("the buffer is cut short")

    # One table copy per level would be about 100 KB a level (300 MB here).
    assert peak_bytes(decode) < 64 * len(data) + (4 << 20)


def test_the_same_in_a_stream_frame():
    # After the sync marker every stream's first frame starts with (SPEC 2.3).
    body = b"\xfd\x12" + nested_shape_references(3000)[3:]
    enc = tersa.Encoder()
    header = enc.header()
    # The frame: its length as a 3-byte varint (SPEC 2.3: low bits 0b100, then the length), then the value.
    frame_len = len(body)
    assert 1 << 14 <= frame_len < 1 << 21  # the 3-byte form is the minimal one
    prefix = bytes([(frame_len << 3 | 0b100) & 0xFF, (frame_len >> 5) & 0xFF, (frame_len >> 13) & 0xFF])
    stream = header + prefix + body

    def decode():
        dec = tersa.Decoder(max_depth=4000)
        dec.feed(stream)
        try:
            list(dec)
        except tersa.DecodeError as e:
            assert e.code in ("truncated", "length_exceeds_input")
        else:
            raise AssertionError("the frame's value is cut short")

    assert peak_bytes(decode) < 64 * len(stream) + (4 << 20)


def test_complete_values_of_large_shapes_still_decode():
    value = [{k: (i if k != "k0" else [i] * 70) for k in KEYS} for i in range(8)]
    nested = {k: 0 for k in KEYS}
    for _ in range(20):
        nested = {k: (nested if k == "k0" else 1) for k in KEYS}
    for v in (value, nested):
        data = tersa.dumps(v)
        assert tersa.loads(data) == v
        assert tersa.loads_stream(tersa.dumps_stream([v, v])) == [v, v]
