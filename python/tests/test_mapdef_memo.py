"""Map definitions read again by their bytes (the core reader's memo,
c/src/reader_memo.h) and shapes looked up by those bytes (objcache.h): a
definition seen before must give the same keys, string-table entries and
registers as reading it afresh, and damaged copies of it the same errors and
offsets as the reference codec. Every buffer is decoded after buffers that
define the same or similar shapes, so most definitions here are met warm."""

from __future__ import annotations

import sys

import pytest

import tersa
from conftest import SPEC, fed, same

sys.path.insert(0, str(SPEC / "tools"))
import tersaref as P  # noqa: E402  (the reference codec)
from test_property import _ref_outcome, from_ref  # noqa: E402


def outcome(fn):
    try:
        return ("ok", fn())
    except tersa.DecodeError as e:
        return ("error", (e.code, e.offset))


def agree(data, ref: bytes | None = None) -> None:
    expect = _ref_outcome(lambda: P.decode(bytes(data) if ref is None else ref))
    got = outcome(lambda: tersa.loads(data))
    assert got[0] == expect[0], (data.hex(), got, expect)
    if got[0] == "error":
        assert got[1] == expect[1], data.hex()
    else:
        assert same(got[1], from_ref(expect[1])), data.hex()


# Shapes that share their first bytes, their keys in other orders, other
# counts over the same head, keys below the string table's minimum length,
# non-ASCII keys, 15 keys (the longest short definition) and 16 (the first
# long one), keys long enough to pass the memo's size.
SHAPES = [
    ["ab", "cd"],
    ["cd", "ab"],
    ["ab", "cd", "ef"],
    ["ab"],
    ["abcdefgh1", "x"],
    ["abcdefgh1", "y"],
    ["abcdefgh1", "x", "zz"],
    ["a", "b", "cc"],
    ["b", "a", "cc"],
    ["é1", "ab"],
    ["ab", "é1"],
    ["\u4e2d\u6587", "\U0001f600", "k"],
    [f"key{i}" for i in range(15)],
    [f"key{i}" for i in range(16)],
    [f"k{i:02d}" + "x" * 20 for i in range(9)],
    ["", "e"],
    ["id", "url_https://example.com/x/key"],
]


def values_for(keys: list[str], salt: int) -> list:
    """Records whose values refer back to the keys (string references into
    the table the definition filled) and to each other, with strings before
    the map that move the table's indices."""
    rec = {k: (keys[(i + salt) % len(keys)] if i % 2 else i + salt) for i, k in enumerate(keys)}
    return [
        rec,
        [keys[-1], rec],
        ["xx", "yy" * (salt + 1), rec, keys[0]],
        {"outer": rec, "tail": [keys[0], keys[-1]]},
        [rec, dict(reversed(list(rec.items())))],
        # a first value that shares a prefix with the definition's last key
        # (the `last` register), then values that share one with their key
        {k: (keys[-1] if i == 0 else k)[:-1] + "!" for i, k in enumerate(keys)},
    ]


def all_buffers() -> list[bytes]:
    return [tersa.dumps(v) for salt in range(2) for keys in SHAPES for v in values_for(keys, salt)]


def test_definitions_met_again_decode_as_the_reference():
    bufs = all_buffers()
    for _ in range(3):
        for data in bufs:
            agree(data)


def test_values_come_back_after_similar_shapes():
    for _ in range(2):
        for salt in range(3):
            for keys in SHAPES:
                for v in values_for(keys, salt):
                    assert same(tersa.loads(tersa.dumps(v)), v)  # (same: map order too)


def test_damaged_copies_of_known_definitions_agree_with_the_reference():
    # Each damaged copy is decoded right after its intact buffer, whose
    # definition the memo then holds: truncations anywhere, bytes that make a
    # key a duplicate, bad UTF-8, another length or another tag.
    for data in all_buffers()[:60]:
        view = memoryview(data)
        for cut in range(len(data)):
            tersa.loads(data)
            agree(data[:cut])
            # the same memory, cut short: the bytes past the end are still those of the definition
            tersa.loads(data)
            agree(view[:cut], data[:cut])
        for i in range(3, len(data)):
            for b in (0xFF, 0x80, 0x41, 0x42, 0x43, data[i - 1], data[i] ^ 1, 0x00, 0xF3):
                bad = bytearray(data)
                bad[i] = b
                tersa.loads(data)
                agree(bytes(bad))


def test_duplicate_and_invalid_keys_after_the_valid_definition():
    good = tersa.dumps({"ab": 1, "cd": 2, "ef": 3})
    at = good.index(b"\x42cd")
    dup = good[:at] + b"\x42ab" + good[at + 3 :]
    bad_utf8 = good[:at] + b"\x42\xc3\x28" + good[at + 3 :]
    for data in (good, dup, good, bad_utf8, good, dup):
        agree(data)
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads(dup)
    assert (info.value.code, info.value.offset) == ("duplicate_key", at)
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads(bad_utf8)
    assert (info.value.code, info.value.offset) == ("invalid_utf8", at)


def test_definitions_with_dictionaries():
    d = tersa.Dictionary(strings=["ab", "cd", "zz"], shapes=[["ab", "cd"]])
    for keys in SHAPES:
        for v in values_for(keys, 1):
            plain = tersa.dumps(v)
            with_dict = tersa.dumps(v, dictionary=d)
            for _ in range(2):
                assert same(tersa.loads(plain), v)
                assert same(tersa.loads(with_dict, dictionaries=[d]), v)


def test_streams_across_sync_frames():
    values = [v for keys in SHAPES for v in values_for(keys, 0)] * 2
    for sync in (0, 1, 3):
        data = tersa.dumps_stream(values, sync_frames=sync)
        for _ in range(2):
            assert same(tersa.loads_stream(data), values)
            for step in (1, 7, len(data)):
                assert same(fed(tersa.Decoder(), data, step), values)
        # joining at a sync frame past the first
        if sync:
            joined = tersa.loads_stream(data[3:], join=True)
            assert same(joined, values[len(values) - len(joined) :])
