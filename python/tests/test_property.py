"""Property tests: hypothesis round trips, differential checks against the
reference codec (spec/tools/tersaref.py) and mutated buffers that may only
ever raise DecodeError."""

from __future__ import annotations

import datetime as dt
import random
import struct
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tersa
from conftest import SPEC, make_map, same

sys.path.insert(0, str(SPEC / "tools"))
import gen_values  # noqa: E402  (the reference codec's random value generator)
import tersaref as P  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------
# Conversions between this package's values and the reference codec's
# --------------------------------------------------------------------------


def from_ref(v, key=False):
    if isinstance(v, P.Symbol):
        return tersa.Symbol(v.name)
    if isinstance(v, P.Ext):
        return tersa.Ext(v.type, v.data)
    if isinstance(v, P.Timestamp):
        return tersa.Timestamp(v.seconds, v.nanos, v.zone, v.offset)
    if isinstance(v, list):
        items = [from_ref(x, key) for x in v]
        return tuple(items) if key else items
    if isinstance(v, dict):
        return make_map([(from_ref(k, True), from_ref(x, key)) for k, x in v.items()], key)
    if isinstance(v, P.Map):
        return make_map([(from_ref(k, True), from_ref(x, key)) for k, x in v.pairs], key)
    return v


def to_ref(v):
    if isinstance(v, tersa.Symbol):
        return P.Symbol(str(v))
    if isinstance(v, tersa.Ext):
        return P.Ext(v.type, v.data)
    if isinstance(v, tersa.Timestamp):
        return P.Timestamp(v.seconds, v.nanos, v.zone, v.offset)
    if isinstance(v, dt.datetime):
        t = tersa.Timestamp.from_datetime(v)
        return P.Timestamp(t.seconds, t.nanos, t.zone, t.offset)
    if isinstance(v, (list, tuple)):
        return [to_ref(x) for x in v]
    if isinstance(v, (dict, tersa.Map)):
        pairs = [(to_ref(k), to_ref(x)) for k, x in (v.items() if isinstance(v, dict) else v.pairs)]
        if all(isinstance(k, (str, P.Symbol)) for k, _ in pairs):
            return dict(pairs)
        return P.Map(pairs)
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


# --------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------

floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("<d", struct.pack("<Q", b))[0]),
    st.decimals(places=4, allow_nan=False, allow_infinity=False, min_value=-10**6, max_value=10**6).map(float),
)
texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["usr_1", "usr_2", "admin", "2025-04-16T09:23:47Z", "2025-04-16", "é", "ab"]),
    st.builds(lambda a, b: a + b, st.sampled_from(["usr_", "/api/v1/", "2025-04-1"]), st.text(max_size=6)),
)
offsets = st.integers(-1439, 1439).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
datetimes = st.datetimes(
    min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 12, 31),
    timezones=st.one_of(st.none(), st.just(dt.timezone.utc), offsets),
)
timestamps = st.builds(
    tersa.Timestamp,
    st.integers(-62135596800 + 86400, 253402300799 - 86400),
    st.integers(0, 999_999_999),
    st.sampled_from([tersa.ZONE_UTC, tersa.ZONE_FLOATING]),
)
hashable_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), floats, texts, st.binary(max_size=10), texts.map(tersa.Symbol), timestamps,
)
scalars = st.one_of(
    hashable_scalars,
    st.integers(min_value=-(2**200), max_value=2**200),
    datetimes,
    st.builds(tersa.Ext, st.integers(0, 0xFEFF), st.binary(max_size=10)),  # 0xFF00.. are the well-known types
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=20),
        st.lists(children, max_size=5).map(tuple),
        st.dictionaries(texts, children, max_size=12),
        st.dictionaries(st.sampled_from(["id", "name", "tags", "at"]), children, max_size=4),
        st.dictionaries(hashable_scalars, children, max_size=5),
    ),
    max_leaves=60,
)


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------


@SETTINGS
@given(values)
def test_round_trip(value):
    data = tersa.dumps(value)
    out = tersa.loads(data)
    assert same(out, value)
    assert tersa.dumps(out) == data  # the canonical encoding is a fixed point


@SETTINGS
@given(values)
def test_matches_reference_encoder(value):
    assert tersa.dumps(value) == P.encode(to_ref(value))


@SETTINGS
@given(st.lists(values, max_size=6))
def test_stream_round_trip(items):
    data = tersa.dumps_stream(items)
    assert data == P.encode_stream([to_ref(v) for v in items])
    assert same(tersa.loads_stream(data), items)


@pytest.mark.parametrize("seed", range(40))
def test_reference_generator_values(seed):
    """The reference generator's values (all of the data model, table-heavy):
    same bytes as the reference encoder, same values as its decoder."""
    r = random.Random(seed)
    for _ in range(25):
        ref = gen_values.rand_value(r)
        expected = P.encode(ref)
        value = from_ref(ref)
        assert tersa.dumps(value) == expected
        assert same(tersa.loads(expected), value)


def _mutations(data: bytes, r: random.Random):
    b = bytearray(data)
    for _ in range(r.randrange(1, 4)):
        k = r.randrange(5)
        if k == 0 and b:
            b[r.randrange(len(b))] = r.randrange(256)
        elif k == 1 and b:
            i = r.randrange(len(b))
            b[i] ^= 1 << r.randrange(8)
        elif k == 2:
            b.insert(r.randrange(len(b) + 1), r.randrange(256))
        elif k == 3 and b:
            del b[r.randrange(len(b))]
        else:
            b = b[: r.randrange(len(b) + 1)]
    return bytes(b)


def _ref_outcome(fn):
    try:
        return ("ok", fn())
    except P.DecodeError as e:
        return ("error", (e.code, e.offset))
    except RecursionError:
        return ("skip", None)


@pytest.mark.parametrize("seed", range(30))
def test_mutated_buffers_only_raise_decode_error_and_agree_with_reference(seed):
    r = random.Random(1000 + seed)
    for _ in range(60):
        ref = gen_values.rand_value(r)
        single = r.random() < 0.7
        data = P.encode(ref) if single else P.encode_stream([ref, gen_values.rand_value(r)])
        bad = _mutations(data, r)
        expect = _ref_outcome(lambda: P.decode(bad) if single else P.decode_stream(bad))
        try:
            got = ("ok", tersa.loads(bad) if single else tersa.loads_stream(bad))
        except tersa.DecodeError as e:
            got = ("error", (e.code, e.offset))
        if expect[0] == "skip":
            continue
        assert got[0] == expect[0], (bad.hex(), got, expect)
        if got[0] == "error":
            assert got[1] == expect[1], bad.hex()
        else:
            exp_value = from_ref(expect[1]) if single else [from_ref(v) for v in expect[1]]
            assert same(got[1], exp_value), bad.hex()


@SETTINGS
@given(st.binary(max_size=64))
def test_random_bytes_only_raise_decode_error(data):
    for payload in (data, b"\xc1\x70\x10" + data, b"\xc1\x70\x12" + data):
        for fn in (tersa.loads, tersa.loads_stream):
            try:
                fn(payload)
            except tersa.DecodeError:
                pass
        dec = tersa.Decoder()
        dec.feed(payload)
        try:
            list(dec)
            dec.close()
        except tersa.DecodeError:
            pass


@SETTINGS
@given(values, st.integers(0, 10**6))
def test_truncations_raise_decode_error(value, cut):
    data = tersa.dumps(value)
    cut %= len(data)
    with pytest.raises(tersa.DecodeError):
        tersa.loads(data[:cut])
