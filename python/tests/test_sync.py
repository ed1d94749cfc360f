"""Sync frames and joins (SPEC 2.3): encoding with sync_frames, sync_bytes and
sync(), joining a stream midway (loads_stream(join=True), join_stream,
Decoder(join=True)), out_of_sequence and bad_sync, the binding's caches by
table index at sync frames, and the memory of long-lived streams."""

from __future__ import annotations

import ctypes
import gc
import random
import sys
import tracemalloc

import pytest

import tersa
from conftest import SPEC, same

sys.path.insert(0, str(SPEC / "tools"))
import tersaref as P  # noqa: E402


def records(n: int, seed: int = 1):
    """Values that use the tables: repeated and new strings, shapes, nested maps, long keys."""
    rnd = random.Random(seed)
    roles = ["admin", "user", "guest", "owner"]
    out = []
    for i in range(n):
        kind = rnd.randrange(6)
        if kind == 0:
            out.append({"id": i, "name": f"usr_{i % 13}", "role": rnd.choice(roles)})
        elif kind == 1:
            out.append({"id": i, "tags": [rnd.choice(roles), f"t{i % 5}x"], "geo": {"lat": i / 8, "lon": -i / 4}})
        elif kind == 2:
            out.append([rnd.choice(roles), f"item-{i % 7}", i * 1000, None, True])
        elif kind == 3:
            out.append({f"k{i % 9}": rnd.choice(roles), "same": "repeated string"})
        elif kind == 4:
            out.append({})
        else:
            out.append({"L" * 70 + str(i % 3): [i], "id": i})
    return out


def frames_of(values, **opts):
    """The stream as one buffer, and the offset of each of its frames."""
    sync_before = opts.pop("sync_before", ())
    enc = tersa.Encoder(**opts)
    header = enc.header()  # taken here, so that every write below is one frame
    parts = []
    for i, v in enumerate(values):
        if i in sync_before:
            enc.sync()
        parts.append(enc.write(v))
    bounds, at = [], len(header)
    for part in parts:
        bounds.append(at)
        at += len(part)
    return header + b"".join(parts), bounds


def same_list(a, b) -> bool:
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))


def feed(dec: tersa.Decoder, data: bytes, pieces) -> list:
    out = []
    at = 0
    for n in pieces:
        dec.feed(data[at : at + n])
        at += n
        out.extend(dec)
    assert at >= len(data)
    dec.close()
    return out


def piece_sizes(total: int, kind: int | random.Random) -> list:
    """Sizes of pieces covering `total` bytes: all `kind` bytes, or random ones."""
    if isinstance(kind, int):
        return [kind] * (total // kind + 1)
    rnd = kind
    sizes = []
    while sum(sizes) < total:
        sizes.append(rnd.choice([1, 1, 2, 5, 17, 64, 300]))
    return sizes


# --------------------------------------------------------------------------
# The issue: a header and a frame from the middle of a stream
# --------------------------------------------------------------------------

MIDDLE = bytes.fromhex("c17012") + bytes.fromhex("0b8242636300")


def test_frame_from_the_middle_is_out_of_sequence():
    # The second frame of [["aa","bb"],["cc","aa"]]: before sync frames it decoded,
    # against empty tables, to [["cc","cc"]].
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads_stream(MIDDLE)
    assert (info.value.code, info.value.offset) == ("out_of_sequence", 4)
    for step in (1, 2, len(MIDDLE)):
        dec = tersa.Decoder()
        got = []
        with pytest.raises(tersa.DecodeError) as info:
            got = feed(dec, MIDDLE, piece_sizes(len(MIDDLE), step))
        assert got == []
        assert (info.value.code, info.value.offset) == ("out_of_sequence", 4)
        # The decoder stays failed.
        with pytest.raises(tersa.DecodeError):
            next(dec)


def test_out_of_sequence_and_bad_sync_are_decode_errors():
    cases = [
        (bytes.fromhex("c1701203e0"), "out_of_sequence", 4),
        (bytes.fromhex("c1701207fd10e0"), "bad_sync", 5),
        (bytes.fromhex("c1701207fd12e007fd13e0"), "bad_sync", 9),
    ]
    for data, code, offset in cases:
        with pytest.raises(tersa.DecodeError) as info:
            tersa.loads_stream(data)
        assert (info.value.code, info.value.offset) == (code, offset)
        assert isinstance(info.value, ValueError)
        assert f"at byte {offset}" in str(info.value)
    with pytest.raises(tersa.DecodeError) as info:
        tersa.join_stream(bytes.fromhex("07fd12e007fd13e0"))
    assert (info.value.code, info.value.offset) == ("bad_sync", 6)


def test_the_first_frame_is_a_sync_frame():
    assert tersa.dumps_stream([1]) == bytes.fromhex("c1701207fd12a9")
    enc = tersa.Encoder()
    assert enc.write(1) == bytes.fromhex("c1701207fd12a9")
    assert enc.write(1) == bytes.fromhex("03a9")


# --------------------------------------------------------------------------
# Encoding: the options against the reference codec
# --------------------------------------------------------------------------

OPTIONS = [
    {"sync_frames": 1},
    {"sync_frames": 2},
    {"sync_frames": 7},
    {"sync_bytes": 1},
    {"sync_bytes": 40},
    {"sync_bytes": 300},
    {"sync_frames": 5, "sync_bytes": 120},
    {"sync_before": {3, 4, 10, 41}},
    {"sync_frames": 9, "sync_before": {2, 17}},
]


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_encode_matches_the_reference(opts):
    values = records(60)
    data, _ = frames_of(values, **opts)
    assert data == P.encode_stream(values, **opts)
    if "sync_before" not in opts:
        assert tersa.dumps_stream(values, **opts) == data
    assert same_list(tersa.loads_stream(data), values)
    assert same_list(P.decode_stream(data), values)


def test_sync_on_request():
    enc = tersa.Encoder()
    first = enc.write(["aa", "bb"])
    plain = enc.write(["aa", "bb"])
    enc.sync()
    synced = enc.write(["aa", "bb"])
    after = enc.write(["aa", "bb"])
    assert synced[1:3] == b"\xfd\x12" and plain[1:2] != b"\xfd" and after[1:2] != b"\xfd"
    # A sync frame writes its strings again; the frames after it refer to them.
    assert synced == first[3:] and after == plain
    assert tersa.join_stream(synced + after) == (0, [["aa", "bb"], ["aa", "bb"]])
    # Requests do not pile up, and one before the first frame changes nothing.
    enc = tersa.Encoder()
    enc.sync()
    enc.sync()
    assert enc.write(1) + enc.write(1) == bytes.fromhex("c1701207fd12a903a9")


def test_sync_requested_inside_default_applies_to_the_next_frame():
    enc = tersa.Encoder(default=lambda o: (enc.sync(), "x")[1])
    enc.write([1])
    during = enc.write([object()])
    nxt = enc.write([1])
    assert during[1:2] != b"\xfd" and nxt[1:3] == b"\xfd\x12"


def test_sync_option_validation():
    for bad in (-1, -(2**70)):
        with pytest.raises(ValueError):
            tersa.Encoder(sync_frames=bad)
        with pytest.raises(ValueError):
            tersa.dumps_stream([1], sync_bytes=bad)
    for bad in ("1", 1.5, True):
        with pytest.raises(TypeError):
            tersa.Encoder(sync_bytes=bad)
    # Huge periods: only the first frame is a sync frame.
    assert tersa.dumps_stream([1, 1], sync_frames=2**80, sync_bytes=None) == bytes.fromhex("c1701207fd12a903a9")


# --------------------------------------------------------------------------
# Caches by table index: dropped at every sync frame
# --------------------------------------------------------------------------

# After each sync frame the same table indices name other strings and shapes:
# an encoder that kept its shape handles, or a decoder that kept its strings,
# key objects or long keys by index, would write or read the earlier ones.
REUSED_INDICES = [
    ("shapes", [{"a": 1}, {"b": 2}, {"b": 3}, {"a": 4}, {"a": 5}, {"b": 6}]),
    ("strings", [["xx", "xx"], ["yy", "yy"], ["yy", "zz"], ["xx", "zz"], ["zz", "xx"]]),
    ("empty map", [{}, 0, {"a": 1}, {}, {}, {"a": 2}]),
    ("nested shapes", [{"p": {"q": 1}}, {"r": {"s": 2}}, {"p": {"q": 3}}, {"r": {"s": 4}}]),
    ("symbols", [{tersa.Symbol("sy"): "sy"}, {"sy": tersa.Symbol("sy")}, {tersa.Symbol("sy"): "sy"}]),
    # Keys longer than the interned-key limit (64 bytes) are cached by string-table index.
    ("long keys", [{"K" * 3000: 1}, {"J" * 3000: 2}, {"J" * 3000: 3}, {"K" * 3000: 4}]),
    ("long keys as strings first", [["L" * 100, {"L" * 100: 1}], ["M" * 100, {"M" * 100: 2}],
                                    ["M" * 100, {"L" * 100: 3}], ["L" * 100, {"M" * 100: 4}]]),
]


def sync_segments_are_fresh_streams(values, every):
    """Frames from a sync frame to the next depend on nothing before: they are
    what a new encoder writes for those values (whose caches are empty)."""
    data = tersa.dumps_stream(values, sync_frames=every)
    expected = b"".join(tersa.dumps_stream(values[i : i + every])[3:] for i in range(0, len(values), every))
    assert data[3:] == expected
    return data


@pytest.mark.parametrize("every", [1, 2])
@pytest.mark.parametrize("values", [pytest.param(v, id=n) for n, v in REUSED_INDICES])
def test_caches_by_index_are_dropped_at_sync_frames(values, every):
    # Three rounds through one encoder and one decoder: their caches are warm
    # from earlier frames at every sync frame.
    values = values * 3
    data = sync_segments_are_fresh_streams(values, every)
    assert data == P.encode_stream([to_ref(v) for v in values], sync_frames=every)
    assert same_list(tersa.loads_stream(data), values)
    assert same_list(tersa.loads_stream(data, option=tersa.OPT_SYMBOL_AS_STR), [as_str(v) for v in values])
    for step in (1, 5, len(data)):
        assert same_list(feed(tersa.Decoder(), data, piece_sizes(len(data), step)), values)
        assert same_list(feed(tersa.Decoder(join=True), data[3:], piece_sizes(len(data) - 3, step)), values)


def to_ref(v):
    if isinstance(v, tersa.Symbol):
        return P.Symbol(str(v))
    if isinstance(v, list):
        return [to_ref(x) for x in v]
    if isinstance(v, dict):
        return {to_ref(k): to_ref(x) for k, x in v.items()}
    return v


def as_str(v):
    if isinstance(v, tersa.Symbol):
        return str(v)
    if isinstance(v, list):
        return [as_str(x) for x in v]
    if isinstance(v, dict):
        return {as_str(k): as_str(x) for k, x in v.items()}
    return v


def test_random_streams_match_the_reference():
    rnd = random.Random(7)
    for trial in range(40):
        values = records(rnd.randrange(1, 40), seed=trial)
        opts = rnd.choice([{"sync_frames": rnd.randrange(1, 6)}, {"sync_bytes": rnd.randrange(1, 200)},
                           {"sync_frames": rnd.randrange(1, 9), "sync_bytes": rnd.randrange(1, 400)}])
        data = tersa.dumps_stream(values, **opts)
        assert data == P.encode_stream(values, **opts), (trial, opts)
        assert same_list(tersa.loads_stream(data), values)


# --------------------------------------------------------------------------
# Joining a long stream at every frame boundary
# --------------------------------------------------------------------------

LONG = [
    ("sync_frames", {"sync_frames": 7}),
    ("sync_bytes", {"sync_bytes": 250}),
    ("requests", {"sync_before": {5, 6, 30, 55}}),
]


@pytest.mark.parametrize("opts", [o for _, o in LONG], ids=[n for n, _ in LONG])
def test_late_consumer_joins_at_every_frame_boundary(opts):
    values = records(80, seed=3)
    data, bounds = frames_of(values, **opts)
    assert data == P.encode_stream(values, **opts)
    # The sync frames, from the frames' first bytes after their 1- or 2-byte lengths.
    syncs = [b for b in bounds if data[b + (1 if data[b] & 1 else 2)] == 0xFD]
    assert len(syncs) >= 4 and syncs[0] == bounds[0]
    for b in bounds + [len(data)]:
        tail = data[b:]
        later = [s for s in syncs if s >= b]
        expected_at = later[0] - b if later else None
        ref_at, ref_values = P.join_stream(tail)
        assert ref_at == expected_at
        # What a reader from the start decodes from that sync frame on.
        assert same_list(ref_values, values[bounds.index(later[0]) :] if later else [])
        at, whole = tersa.join_stream(tail)
        assert at == ref_at and same_list(whole, ref_values), b
        assert same_list(tersa.loads_stream(tail, join=True), ref_values)
        for kind in (1, 3, random.Random(b)):
            dec = tersa.Decoder(join=True)
            got = feed(dec, tail, piece_sizes(len(tail), kind))
            assert same_list(got, ref_values), (b, kind)
            assert dec.joined_at == ref_at and dec.pending == 0


def test_joined_at_is_none_until_a_sync_frame_arrives():
    data, bounds = frames_of(records(10), sync_frames=4)
    tail = data[bounds[1] :]  # frames 1, 2, 3 are skipped; 4 is a sync frame
    dec = tersa.Decoder(join=True)
    assert dec.joined_at is None
    sync_at = bounds[4] - bounds[1]
    dec.feed(tail[:sync_at])
    assert list(dec) == [] and dec.joined_at is None and dec.pending == 0
    dec.feed(tail[sync_at:])
    assert len(list(dec)) == 6 and dec.joined_at == sync_at
    dec.close()
    assert tersa.Decoder().joined_at is None


def test_joining_requires_frame_boundaries_and_no_header():
    data = tersa.dumps_stream([1, 2], sync_frames=1)
    with pytest.raises(tersa.DecodeError):
        tersa.join_stream(data)  # the header is not a frame
    assert tersa.join_stream(data[3:]) == (0, [1, 2])
    assert tersa.join_stream(b"") == (None, [])
    dec = tersa.Decoder(join=True)
    dec.close()


# --------------------------------------------------------------------------
# Dictionaries
# --------------------------------------------------------------------------

DICT = tersa.Dictionary(["admin", "user", "usr_1"], [["id", "name", "role"], ["lat", "lon"]])
REF_DICT = P.Dictionary(["admin", "user", "usr_1"], [["id", "name", "role"], ["lat", "lon"]])


def test_dictionary_streams_with_sync_frames():
    values = [{"id": i, "name": f"usr_{i % 4}", "role": ["admin", "user"][i % 2], "at": {"lat": i, "lon": -i}}
              for i in range(30)] + [{"id": 1, "name": "x", "role": "guest"}, "user", {"lat": 1, "lon": 2}]
    for opts in ({"sync_frames": 3}, {"sync_bytes": 60}, {"sync_frames": 1}):
        data = tersa.dumps_stream(values, dictionary=DICT, **opts)
        assert data == P.encode_stream(values, REF_DICT, **opts)
        assert same_list(tersa.loads_stream(data, dictionaries=DICT), values)
        again, bounds = frames_of(values, dictionary=DICT, **opts)
        assert again == data and bounds[0] == 11
        for b in bounds:
            tail = data[b:]
            ref_at, ref_values = P.join_stream(tail, [REF_DICT])
            at, got = tersa.join_stream(tail, dictionaries=DICT)
            assert at == ref_at and same_list(got, ref_values)
            dec = tersa.Decoder(dictionaries=[tersa.Dictionary(["other"]), DICT], join=True)
            assert same_list(feed(dec, tail, piece_sizes(len(tail), random.Random(b))), ref_values)
            assert dec.joined_at == ref_at
        # A joining decoder without the dictionary fails at the first sync frame's id.
        with pytest.raises(tersa.DecodeError) as info:
            tersa.join_stream(data[11:])
        assert (info.value.code, info.value.offset) == ("unknown_dictionary", 3)


# --------------------------------------------------------------------------
# Memory of long-lived streams
# --------------------------------------------------------------------------


def unique_values(start: int, n: int):
    # Every frame brings new strings: without sync
    # frames the tables, and the binding's caches by index, grow with the
    # stream. The keys recur, so that the bounded caches shared across calls
    # (interned keys, recent shapes) do not churn and blur the measure.
    return [{f"key_{i % 10}": f"value-{i:012d}-" + "v" * 30, "list": [f"s-{i:012d}-" + "s" * 30, i]}
            for i in range(start, start + n)]


def malloc_in_use() -> int | None:
    """Bytes malloc has handed out (the core allocates with malloc), or None off glibc."""
    try:
        libc = ctypes.CDLL(None)
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return None

    class Mallinfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]

    fn.restype = Mallinfo2
    info = fn()
    return info.uordblks + info.hblkhd


def growth(sync_frames: int, rounds: int = 40, per_round: int = 400):
    """Traced (Python) and malloc growth of one Decoder and one Encoder over a long
    stream, after 10 rounds that fill the bounded caches shared across calls (the
    interned keys and recent shapes of decode_cache.c)."""
    enc = tersa.Encoder(sync_frames=sync_frames)
    dec = tersa.Decoder()
    gc.collect()
    tracemalloc.start()
    try:
        marks = []
        for r in range(rounds):
            for v in unique_values(r * per_round, per_round):
                dec.feed(enc.write(v))
                for got in dec:
                    assert got == v
            if r in (9, rounds - 1):
                gc.collect()
                marks.append((tracemalloc.get_traced_memory()[0], malloc_in_use()))
    finally:
        tracemalloc.stop()
    (t0, m0), (t1, m1) = marks
    return t1 - t0, (None if m0 is None or m1 is None else m1 - m0)


def test_long_lived_stream_memory_is_bounded_with_sync_frames():
    # 12,000 measured frames: under 24 bytes a frame, where each brings about 180
    # bytes of new strings that a decoder keeping them would hold.
    traced, heap = growth(sync_frames=64)
    assert traced < 256 * 1024, traced
    if heap is not None:
        assert heap < 512 * 1024, heap


def test_memory_test_sees_growth_without_sync_frames():
    # The same stream with one sync frame: the tables and the caches by index
    # grow with it, and the measure above must see that.
    traced, heap = growth(sync_frames=0)
    assert traced > 2 * 1024 * 1024, traced
    if heap is not None:
        assert heap > 2 * 1024 * 1024, heap
