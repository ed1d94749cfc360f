"""Lists that open with a string, which loads reads a run of leaves at a time
(tersa_read_leaves): the same values as the item-by-item path (a list that
opens with None) and as the reference codec, and on damaged buffers the same
error codes and offsets as the reference codec."""

from __future__ import annotations

import random
import sys

import tersa
from conftest import SPEC, fed, same

sys.path.insert(0, str(SPEC / "tools"))
import tersaref as P  # noqa: E402  (the reference codec, which reads item by item)
from test_property import _mutations, _ref_outcome, from_ref  # noqa: E402


def random_string(rng: random.Random, pool: list) -> str:
    k = rng.randrange(8)
    if k == 0 and pool:
        return rng.choice(pool)  # repeated: a reference to its table entry
    if k == 1:
        return rng.choice(["", "a", "é", "ab", "\u4e2d\u6587", "\U0001f600"])  # short, never in the table
    if k == 2:
        return "https://example.com/items/" + str(rng.randrange(10**6)) + "/" + "x" * rng.randrange(60)  # prefixes
    if k == 3:
        return rng.choice(["2024-05-01T12:30:00Z", "2024-05-01T12:30:00.123Z", "2024-05-01", "2024-13-01T00:00:00Z"])
    if k == 4:
        return "long " * rng.randrange(13, 40)  # 64 bytes or more
    if k == 5:
        return "".join(chr(rng.choice([0x41, 0xE9, 0x4E2D, 0x1F600])) for _ in range(rng.randrange(2, 20)))
    s = "".join(rng.choice("abcdefgh") for _ in range(rng.randrange(2, 12)))
    pool.append(s)
    return s


def random_row(rng: random.Random, pool: list) -> list:
    n = rng.choice([1, 2, 5, 31, 32, 33, 64, 65, 100]) if rng.random() < 0.5 else rng.randrange(1, 200)
    row = [random_string(rng, pool) for _ in range(n)]
    for _ in range(rng.randrange(4)):  # other items: some end a run (containers), some do not
        i = rng.randrange(1, n) if n > 1 else 0
        if i:
            row[i] = rng.choice([None, True, 7, -3, 1.5, 2**70, b"\x00", ["x", "yy"], {"k": "v"}, []])
    return row


def random_doc(rng: random.Random):
    pool: list = []
    rows = [random_row(rng, pool) for _ in range(rng.randrange(1, 6))]
    k = rng.randrange(3)
    if k == 0:
        return rows
    if k == 1:
        return [{"name": random_string(rng, pool), "tags": row} for row in rows]
    return {"a": rows[0], "b": rows}


def with_leading_none(value):
    """The same value with None before the first element of every list that
    opens with a str: such lists are read item by item."""
    if isinstance(value, list):
        items = [with_leading_none(v) for v in value]
        return [None] + items if items and isinstance(items[0], str) else items
    if isinstance(value, dict):
        return {k: with_leading_none(v) for k, v in value.items()}
    return value


def test_string_runs_match_the_item_by_item_path():
    rng = random.Random(13)
    for _ in range(800):
        doc = random_doc(rng)
        data = tersa.dumps(doc)
        back = tersa.loads(data)
        assert same(back, doc)
        assert same(with_leading_none(back), tersa.loads(tersa.dumps(with_leading_none(doc))))
        assert same(back, from_ref(P.decode(data)))
        stream = tersa.dumps_stream([doc, doc])
        assert same(tersa.loads_stream(stream), [doc, doc])
        assert same(fed(tersa.Decoder(), stream, rng.choice([1, 7, 64, 4096])), [doc, doc])  # fed in pieces


def test_damaged_string_runs_fail_like_the_reference():
    rng = random.Random(1313)
    for _ in range(1500):
        data = tersa.dumps(random_doc(rng))
        bad = _mutations(data, rng)
        expect = _ref_outcome(lambda: P.decode(bad))
        if expect[0] == "skip":
            continue
        try:
            got = ("ok", tersa.loads(bad))
        except tersa.DecodeError as e:
            got = ("error", (e.code, e.offset))
        assert got[0] == expect[0], (bad.hex(), got, expect)
        if got[0] == "error":
            assert got[1] == expect[1], bad.hex()
        else:
            assert same(got[1], from_ref(expect[1])), bad.hex()
