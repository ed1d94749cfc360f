"""Decoder.feed() with streams cut into pieces of every size: each way of
cutting must give exactly the values loads_stream() gives for the whole
buffer. The feed buffer keeps the bytes not yet consumed while it moves and
grows, whatever the sizes of the frames and of the pieces."""

from __future__ import annotations

import datetime as dt
import random
import time

import tersa
from conftest import same

SEED = 20261123


def random_string(rng: random.Random, pool: list) -> str:
    r = rng.random()
    if r < 0.3 and pool:
        return rng.choice(pool)  # repeated: string-table references and prefixes
    if r < 0.34:
        n = rng.choice([4095, 4096, 4097, 5000, 9000])  # around and past the first buffer size
    else:
        n = rng.randrange(0, 70)
    alphabet = "abcdefghij" if rng.random() < 0.8 else "aé€𝄞"
    s = "".join(rng.choice(alphabet) for _ in range(min(n, 64)))
    s = (s * (n // max(len(s), 1) + 1))[:n] if s else ""
    pool.append(s)
    return s


def random_scalar(rng: random.Random, pool: list):
    kind = rng.randrange(9)
    if kind == 0:
        return random_string(rng, pool)
    if kind == 1:
        return rng.choice([0, 1, -1, 127, 128, -129, 2**31, 2**63 - 1, 2**64 - 1, -(2**63)])
    if kind == 2:
        return rng.choice([2**64, -(2**63) - 1, 3**200, -(7**150)])  # big integers
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e300, float("inf"), 3.141592653589793, rng.random()])
    if kind == 4:
        return bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 7, 300, 5000])))
    if kind == 5:
        micros = rng.randrange(1_000_000)
        tz = rng.choice([dt.timezone.utc, None, tersa._types._offset_tz(330)])
        return dt.datetime(2000 + rng.randrange(30), 1 + rng.randrange(12), 1 + rng.randrange(28), 12, 30, 15, micros, tzinfo=tz)
    if kind == 6:
        return tersa.Timestamp(rng.randrange(-(10**9), 10**10), rng.randrange(1, 10**9))  # nanoseconds
    if kind == 7:
        return tersa.Symbol(random_string(rng, pool)[:20])
    return rng.choice([None, True, False])


def random_value(rng: random.Random, pool: list, depth: int = 0):
    r = rng.random()
    if depth > 4 or r < 0.4:
        return random_scalar(rng, pool)
    n = rng.randrange(0, 6)
    if r < 0.6:
        return [random_value(rng, pool, depth + 1) for _ in range(n)]
    if r < 0.85:
        keys = [random_string(rng, pool)[:30] for _ in range(n)]
        return {k: random_value(rng, pool, depth + 1) for k in keys}
    return {rng.randrange(-5, 5): random_value(rng, pool, depth + 1) for _ in range(n)}  # generic map


def random_stream(rng: random.Random) -> bytes:
    pool: list = []
    values = [random_value(rng, pool) for _ in range(rng.randrange(1, 12))]
    return tersa.dumps_stream(values)


def feed_in_pieces(data: bytes, sizes) -> list:
    dec = tersa.Decoder()
    out: list = []
    at = 0
    for size in sizes:
        dec.feed(data[at : at + size])
        out.extend(dec)
        at += size
        if at >= len(data):
            break
    assert at >= len(data)
    dec.close()
    assert dec.pending == 0
    return out


def constant(size: int):
    while True:
        yield size


def random_sizes(rng: random.Random):
    while True:
        yield rng.choice([1, 2, 3, rng.randrange(1, 100), rng.randrange(1, 10000)])


def check(data: bytes, sizes) -> None:
    assert same(feed_in_pieces(data, sizes), tersa.loads_stream(data))


def check_fast(data: bytes, sizes, expected: bytes) -> None:
    # The canonical encoding is one-to-one: equal bytes, equal Tersa values.
    assert tersa.dumps_stream(feed_in_pieces(data, sizes)) == expected


def test_the_reported_streams():
    # A short first frame, then a frame larger than the first buffer, fed byte by byte.
    check(tersa.dumps_stream(["abcd", "x" * 5000]), constant(1))
    check(tersa.dumps_stream(["abcdefgh", "y" * 4500, "z"]), constant(1))
    for size in (2, 3, 7, 64):
        check(tersa.dumps_stream([["q" * 10] * 3, "w" * 6000, {"k": "v" * 9000}, 1, "w" * 6000]), constant(size))


def test_every_chunk_size_on_random_streams():
    rng = random.Random(SEED)
    started = time.process_time()  # CPU time: a loaded machine stretches wall time, not this
    streams = [random_stream(rng) for _ in range(24)]
    assert sum(len(s) for s in streams) > 100_000
    assert sum(len(s) > 4096 for s in streams) > 10
    for data in streams:
        expected = tersa.dumps_stream(tersa.loads_stream(data))
        for size in range(1, 71):
            check_fast(data, constant(size), expected)
        for _ in range(5):
            check_fast(data, random_sizes(rng), expected)
        check(data, random_sizes(rng))
    assert time.process_time() - started < 20


def test_large_frame_then_small_ones():
    data = tersa.dumps_stream(["x" * 3_000_000] + [i for i in range(2000)])
    check(data, constant(4096))
