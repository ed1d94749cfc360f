"""Reference and memory leaks: repeated encode/decode loops over every path
(success and failure) must not grow memory or reference counts.

On a debug build of CPython (sys.gettotalrefcount) the total reference count
is checked; on release builds tracemalloc bounds the growth, and the
reference counts of the objects involved (inputs, callbacks, dictionaries,
cached keys and strings) are checked with sys.getrefcount."""

from __future__ import annotations

import datetime as dt
import gc
import sys
import tracemalloc

import pytest

import tersa

DICT = tersa.Dictionary(["admin", "user"], [["id", "name", "role"]])


class Custom:
    pass


def _default(o):
    if isinstance(o, Custom):
        return {"custom": [1, 2.5, "x"]}
    raise TypeError("no")


SAMPLES = [
    {"id": 1, "name": "usr_1", "role": "admin", "at": dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)},
    [1, -5, 2**70, -(2**70), 1.5, float("nan"), None, True, "héllo", b"\x00bin", ("t", 1)],
    {1: "a", 2.5: "b", (1, 2): "c", tersa.Symbol("s"): tersa.Ext(3, b"e")},
    tersa.Map([(tersa.Symbol("id"), 1), ("id", 2)]),
    [{"k%d" % (i % 5): "v%d" % i, "same": "repeated string"} for i in range(40)],
    tersa.Timestamp(1, 123456789, tersa.ZONE_OFFSET, 60),
    dt.datetime(2025, 1, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
]

LARGE = ["%08x" % (i * 2654435761 % 2**32) for i in range(1500)]  # about 13 KB of output
LARGE_BAD = LARGE + [Custom()]

BAD_BUFFERS = [b"", b"\xc1\x70\x10\xfd", b"\xc1\x70\x10\x82\xe0", b"\xc1\x70\x10\x92\x41\x61\x41\x61\xe0\xe0",
               b"\xc1\x70\x10\x81\x81\x81\x05", b"\xc1\x70\x11" + bytes(8)]


def _workload():
    for v in SAMPLES:
        data = tersa.dumps(v)
        tersa.loads(data)
        tersa.loads(bytearray(data))
        tersa.loads(memoryview(data), option=tersa.OPT_TIMESTAMP | tersa.OPT_SYMBOL_AS_STR)
    tersa.loads(tersa.dumps(SAMPLES[0], dictionary=DICT), dictionaries=DICT)
    tersa.dumps([Custom(), {"nested": Custom()}], default=_default)
    for bad in BAD_BUFFERS:
        try:
            tersa.loads(bad)
        except tersa.DecodeError:
            pass
    # Outputs over 8 KiB are written into the bytes object returned: kept on
    # success, released when the encoding fails after the output moved there.
    tersa.dumps(LARGE)
    try:
        tersa.dumps(LARGE_BAD)
    except tersa.EncodeError:
        pass
    for bad_value in [{"a": [Custom()]}, "\ud800", {"\ud800": 1}, {1: Custom()}]:
        try:
            tersa.dumps(bad_value)
        except tersa.EncodeError:
            pass
    try:
        tersa.dumps(Custom(), default=lambda o: 1 / 0)
    except tersa.EncodeError:
        pass
    cyc = []
    cyc.append(cyc)
    try:
        tersa.dumps(cyc)
    except tersa.EncodeError:
        pass
    enc = tersa.Encoder()
    stream = b"".join(enc.write(v) for v in SAMPLES[:3])
    tersa.loads_stream(stream)
    dec = tersa.Decoder()
    dec.feed(stream)
    list(dec)
    dec.close()
    try:
        dec = tersa.Decoder()
        dec.feed(stream[:-1] + b"\xfd")
        list(dec)
    except tersa.DecodeError:
        pass
    # Sync frames and joins (SPEC 2.3): caches dropped at every sync frame,
    # skipped frames, joined_at, and their errors.
    enc = tersa.Encoder(sync_frames=2, sync_bytes=64, dictionary=DICT)
    parts = []
    for i, v in enumerate(SAMPLES[:5] * 2):
        if i == 3:
            enc.sync()
        parts.append(enc.write(v))
    stream = b"".join(parts)
    tersa.loads_stream(stream, dictionaries=DICT)
    frames = stream[len(parts[0]) :]  # from frame 1 on: a consumer that joins late
    tersa.loads_stream(frames, dictionaries=DICT, join=True)
    tersa.join_stream(frames, dictionaries=DICT)
    dec = tersa.Decoder(dictionaries=[DICT], join=True)
    dec.feed(frames)
    list(dec)
    dec.joined_at
    dec.close()
    for bad, join in [(b"\xc1\x70\x12\x0b\x82\x42\x63\x63\x00", False), (b"\x07\xfd\x12\xe0\x07\xfd\x13\xe0", True),
                      (b"\x03\xe0\x13\xe0", True), (frames, True)]:
        try:
            tersa.join_stream(bad) if join else tersa.loads_stream(bad)
        except tersa.DecodeError:
            pass
        try:
            dec = tersa.Decoder(join=join)
            dec.feed(bad)
            list(dec)
            dec.close()
        except tersa.DecodeError:
            pass
    d = tersa.Dictionary.parse(DICT.serialize())
    d.strings, d.shapes, repr(d)


WINDOW = 500  # rounds per measurement window
BOUND = 6 * 1024  # bytes; a leak of even one bare object() per round exceeds it (see below)


def test_memory_does_not_grow():
    """Growth is measured over consecutive windows after a warm-up: caches and
    allocator pools settle, while a real leak, even of a single small object
    per round, shows in every window."""
    for _ in range(100):
        _workload()
    gc.collect()
    tracemalloc.start()
    try:
        growth = []
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(4):
            for _ in range(WINDOW):
                _workload()
            gc.collect()
            after, _ = tracemalloc.get_traced_memory()
            growth.append(after - before)
            before = after
    finally:
        tracemalloc.stop()
    assert min(growth) < BOUND, f"memory grew in every window: {growth} bytes per {WINDOW} rounds"
    assert sum(growth) < 20 * BOUND, growth


def test_memory_test_detects_a_small_leak():
    leak = []
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(WINDOW):
            leak.append(object())
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before >= BOUND  # one bare object per round exceeds the bound above


@pytest.mark.skipif(not hasattr(sys, "gettotalrefcount"), reason="needs a debug build of CPython")
def test_total_refcount_is_stable():
    for _ in range(30):
        _workload()
    gc.collect()
    before = sys.gettotalrefcount()
    for _ in range(200):
        _workload()
    gc.collect()
    after = sys.gettotalrefcount()
    assert after - before < 200


def test_refcounts_of_inputs_and_callbacks():
    value = {"a": [1, "x" * 50], "b": Custom()}
    inner = value["a"]
    default = _default
    data = tersa.dumps(value, default=default)
    counts = [sys.getrefcount(o) for o in (value, inner, default, DICT, data)]
    for _ in range(1000):
        tersa.dumps(value, default=default, dictionary=DICT)
        tersa.loads(data, dictionaries=DICT)
        try:
            tersa.dumps({"k": value, "bad": object()}, default=lambda o: 1 / 0 if type(o) is object else default(o))
        except tersa.EncodeError:
            pass
    assert [sys.getrefcount(o) for o in (value, inner, default, DICT, data)] == counts


def test_refcounts_of_cached_keys_and_strings_are_stable():
    data = tersa.dumps([{"name": "shared value", "kind": "k"}, {"name": "shared value", "kind": "k"}])
    first = tersa.loads(data)
    key = next(iter(first[0]))
    shared = first[0]["name"]
    assert first[1]["name"] is shared
    key_count, shared_count = sys.getrefcount(key), sys.getrefcount(shared)
    for _ in range(1000):
        tersa.loads(data)
    assert sys.getrefcount(key) == key_count
    assert sys.getrefcount(shared) == shared_count
    del first
    # The decoded value held the only references to its string: it is gone with it.
    assert sys.getrefcount(shared) == 2


def test_large_output_after_failure():
    """A failed encode of a large output leaves the next one whole."""
    want = tersa.dumps(LARGE)
    assert len(want) > 8192
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(LARGE_BAD)
    assert tersa.dumps(LARGE) == want
    assert tersa.loads(want) == LARGE
