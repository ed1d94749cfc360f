"""Generic maps whose keys share one Python hash value (ints that differ by
multiples of 2^61-1, tuples of them, floats 2^(61k)) must decode in time
linear in their size: a dict would compare each new key with every earlier
one, so such a map decodes to a tersa.Map instead (a valid decoding: nothing
is rejected). Maps without abusive collisions still decode to dicts."""

from __future__ import annotations

import time

import tersa
from conftest import same

P = 2**61 - 1  # CPython hashes ints modulo P: every multiple of P hashes to 0
BOUND = 5.0  # CPU seconds of this process (not wall time, which a loaded machine stretches); the work takes well under one, the bound only catches quadratic time


def encoded(pairs) -> bytes:
    # Through tersa.Map: building a dict of these keys would itself be quadratic.
    return tersa.dumps(tersa.Map(pairs))


def timed_loads(data: bytes):
    started = time.process_time()
    value = tersa.loads(data)
    return value, time.process_time() - started


def test_fifty_thousand_int_keys_of_one_hash():
    pairs = [(i * P, i) for i in range(50_000)]
    assert len({hash(k) for k, _ in pairs}) == 1
    data = encoded(pairs)
    assert len(data) > 600_000
    value, seconds = timed_loads(data)
    assert seconds < BOUND
    assert type(value) is tersa.Map
    assert value.pairs == tuple(pairs)
    assert tersa.dumps(value) == data


def test_the_same_through_a_stream_decoder():
    pairs = [(i * P, str(i)) for i in range(50_000)]
    stream = tersa.dumps_stream([tersa.Map(pairs), {"after": 1}])
    dec = tersa.Decoder()
    started = time.process_time()
    dec.feed(stream)
    values = list(dec)
    assert time.process_time() - started < BOUND
    assert type(values[0]) is tersa.Map and values[0].pairs == tuple(pairs)
    assert values[1] == {"after": 1}


def test_tuple_keys_of_one_hash():
    pairs = [((i * P, "t"), i) for i in range(50_000)]
    assert len({hash(k) for k, _ in pairs[:100]}) == 1
    value, seconds = timed_loads(encoded(pairs))
    assert seconds < BOUND
    assert type(value) is tersa.Map and value.pairs == tuple(pairs)


def test_float_keys_sharing_a_hash_with_int_keys():
    floats = [2.0 ** (61 * k) for k in range(-17, 17)]  # all hash to 1
    ints = [1 + j * P for j in range(1, 30_000)]  # so do these
    assert {hash(k) for k in floats + ints} == {1}
    pairs = [(k, "int") for k in ints] + [(f, "float") for f in floats]
    value, seconds = timed_loads(encoded(pairs))
    assert seconds < BOUND
    assert type(value) is tersa.Map
    assert same(value, tersa.Map(pairs))  # floats stay floats, ints stay ints


def test_natural_collisions_still_make_dicts():
    floats = {2.0 ** (61 * k): k for k in range(-17, 17)}  # the most floats of one hash
    assert len(floats) == 34
    value = tersa.loads(tersa.dumps(floats))
    assert type(value) is dict and same(value, floats)
    small = {-1: "a", -2: "b", 0: "c", P: "d"}  # hash(-1) == hash(-2), hash(0) == hash(P)
    assert type(tersa.loads(tersa.dumps(small))) is dict and tersa.loads(tersa.dumps(small)) == small
    few = {i * P: i for i in range(20)}
    assert type(tersa.loads(tersa.dumps(few))) is dict and tersa.loads(tersa.dumps(few)) == few


def test_ordinary_int_keys_make_dicts():
    value = {i: -i for i in range(100_000)}
    back, seconds = timed_loads(tersa.dumps(value))
    assert seconds < BOUND
    assert type(back) is dict and back == value
    assert type(tersa.loads(tersa.dumps({(i, i + 1): i for i in range(10_000)}))) is dict


def test_map_equality_and_hash_are_linear():
    pairs = [(i * P, i) for i in range(50_000)]
    a = tersa.loads(encoded(pairs))
    b = tersa.Map(pairs)
    started = time.process_time()
    assert a == b and hash(a) == hash(b)
    assert a != tersa.Map(pairs[:-1] + [(P * 50_000, 0)])
    assert len({a, b}) == 1
    assert time.process_time() - started < BOUND
