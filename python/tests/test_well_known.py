"""The well-known types of SPEC 5.8 as Python objects: decimal.Decimal,
datetime.date, uuid.UUID and naive datetime.time; sets refused with a hint.
The vectors (test_vectors.py) pin their bytes; this file covers what is
particular to Python."""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys
import uuid

import pytest

import tersa

D = decimal.Decimal
HEADER = tersa.dumps(None)[:3]


def rt(value, **kw):
    return tersa.loads(tersa.dumps(value, **kw))


def varint(v: int) -> bytes:
    n = 1
    while v >= 1 << (7 * n):
        n += 1
    return (((v << 1) | 1) << (n - 1)).to_bytes(8, "little")[:n]


def zigzag(s: int) -> int:
    return -2 * s - 1 if s < 0 else 2 * s


def ext_buffer(type_: int, payload: bytes) -> bytes:
    """A buffer of one EXT item, written by hand (dumps refuses reserved types)."""
    return HEADER + b"\xf7" + varint(type_) + varint(len(payload)) + payload


def assert_invalid(data: bytes, offset: int = 3) -> None:
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads(data)
    assert (info.value.code, info.value.offset) == ("invalid_value", offset), info.value


# --- decimal.Decimal ---------------------------------------------------------


@pytest.mark.parametrize("text", ["0", "-0", "1", "1.0", "1.00", "-12.345", "0.000", "0E+3", "1E+999999999",
                                  "1E-999999999", "-0E-999999999", "123456789012345678901234567890.123456789",
                                  "Infinity", "-Infinity", "NaN", "9" * 2466])
def test_decimal_round_trips_exactly(text):
    d = D(text)
    back = rt(d)
    assert type(back) is D
    assert str(back) == str(d) and back.as_tuple() == d.as_tuple()


def test_decimal_payload_is_coefficient_and_exponent():
    # 12.345 = 12345 x 10^-3: kind 0, zigzag(-3), coefficient 0x3039.
    assert tersa.dumps(D("12.345")) == ext_buffer(0xFF00, bytes([0]) + varint(zigzag(-3)) + b"\x30\x39")
    assert tersa.dumps(D("1.00")) == ext_buffer(0xFF00, bytes([0]) + varint(zigzag(-2)) + b"\x64")
    assert tersa.dumps(D("-0")) == ext_buffer(0xFF00, b"\x01\x01")
    assert tersa.dumps(D("-Infinity")) == ext_buffer(0xFF00, b"\x03")
    # Coefficients of more than 19 digits take the big-int path.
    c = 10**30 + 7
    assert tersa.dumps(D(c)) == ext_buffer(0xFF00, b"\x00" + varint(0) + c.to_bytes(13, "big"))


def test_decimal_subclass_and_context_do_not_matter():
    class Money(D):
        def __str__(self):
            return "not the digits"

    assert rt(Money("2.50")) == D("2.50") and str(rt(Money("2.50"))) == "2.50"
    with decimal.localcontext() as ctx:
        ctx.prec = 3
        assert str(rt(D("3.14159265358979"))) == "3.14159265358979"


@pytest.mark.parametrize("text,why", [("sNaN", "signalling"), ("NaN12", "payload"), ("-NaN", "negative NaN"),
                                      ("1E+1000000000", "exponent"), ("1E-1000000000", "exponent"),
                                      ("1" * 2467, "coefficient")])
def test_decimals_without_a_tersa_form(text, why):
    with pytest.raises(tersa.EncodeError, match=why) as info:
        tersa.dumps({"x": [D(text)]})
    assert info.value.path == '$["x"][0]'


# --- datetime.date and datetime.time -----------------------------------------


@pytest.mark.parametrize("d", [dt.date(1, 1, 1), dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(2000, 2, 29),
                               dt.date(9999, 12, 31)])
def test_date(d):
    back = rt(d)
    assert type(back) is dt.date and back == d
    assert tersa.dumps(d) == ext_buffer(0xFF01, varint(zigzag((d - dt.date(1970, 1, 1)).days)))


def test_datetime_stays_a_timestamp():
    t = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    assert rt(t) == t and type(rt(t)) is dt.datetime
    assert tersa.dumps(t) != tersa.dumps(t.date())


def test_date_subclass_follows_passthrough_subclass():
    class Day(dt.date):
        pass

    assert rt(Day(2025, 4, 16)) == dt.date(2025, 4, 16)
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(Day(2025, 4, 16), option=tersa.OPT_PASSTHROUGH_SUBCLASS)


@pytest.mark.parametrize("t", [dt.time(0), dt.time(0, 0, 0, 1), dt.time(12, 34, 56, 500000), dt.time(23, 59, 59, 999999)])
def test_time_of_day(t):
    back = rt(t)
    assert type(back) is dt.time and back == t and back.tzinfo is None
    us = ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond
    assert tersa.dumps(t) == ext_buffer(0xFF03, varint(us))


def test_aware_time_raises():
    with pytest.raises(tersa.EncodeError, match="aware"):
        tersa.dumps(dt.time(9, 30, tzinfo=dt.timezone.utc))


# --- uuid.UUID -----------------------------------------------------------------


def test_uuid():
    u = uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
    assert tersa.dumps(u) == ext_buffer(0xFF02, u.bytes)
    back = rt(u)
    assert type(back) is uuid.UUID and back == u and hash(back) == hash(u)
    assert back.is_safe is uuid.SafeUUID.unknown and back.version == 1
    assert rt(str(u)) == str(u)  # strings stay strings
    import pickle

    assert pickle.loads(pickle.dumps(back)) == u


# --- keys, containers, streams -------------------------------------------------


def test_well_known_keys():
    value = {uuid.UUID(int=1): 1, D("1.0"): 2, dt.date(2000, 1, 1): 3, dt.time(8): 4}
    assert rt(value) == value
    # 1.0 and 1.00 are different Tersa keys but equal Python keys: a Map.
    m = rt(tersa.Map([(D("1.0"), 1), (D("1.00"), 2)]))
    assert isinstance(m, tersa.Map) and [str(k) for k, _ in m.pairs] == ["1.0", "1.00"]


def test_values_in_containers_and_streams():
    row = {"price": D("9.99"), "day": dt.date(2025, 4, 16), "id": uuid.UUID(int=7), "at": dt.time(8)}
    assert rt([row, row]) == [row, row]
    assert tersa.loads_stream(tersa.dumps_stream([row, D("-0"), row])) == [row, D("-0"), row]


# --- sets, reserved types, decoding --------------------------------------------


@pytest.mark.parametrize("s", [{1, 2}, frozenset({1})])
def test_sets_raise_with_a_hint(s):
    with pytest.raises(tersa.EncodeError, match="no set type"):
        tersa.dumps([s])
    assert rt(s, default=sorted) == sorted(s)


def test_ext_of_a_reserved_type_is_not_written():
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(tersa.Ext(0xFF01, b"\x01"))
    assert rt(tersa.Ext(0xFEFF, b"\x01")) == tersa.Ext(0xFEFF, b"\x01")


def test_invalid_payloads_are_invalid_value_at_the_item():
    assert_invalid(ext_buffer(0xFF00, b""))
    assert_invalid(ext_buffer(0xFF00, b"\x05"))
    assert_invalid(ext_buffer(0xFF00, b"\x02\x00"))
    assert_invalid(ext_buffer(0xFF00, b"\x00\x01\x00\x01"))  # a leading zero byte
    assert_invalid(ext_buffer(0xFF01, varint(zigzag(2_932_897))))
    assert_invalid(ext_buffer(0xFF01, varint(0) + b"\x00"))
    assert_invalid(ext_buffer(0xFF02, bytes(15)))
    assert_invalid(ext_buffer(0xFF03, varint(86_400_000_000)))
    assert_invalid(ext_buffer(0xFF04, b""))
    assert_invalid(HEADER + b"\x81" + ext_buffer(0xFF02, bytes(17))[3:], 4)


def test_decoding_a_decimal_imports_decimal():
    data = tersa.dumps([D("1.5"), dt.date(2020, 1, 1)])
    script = ("import sys, tersa; assert 'decimal' not in sys.modules; "
              "v = tersa.loads(sys.stdin.buffer.read()); print(type(v[0]).__name__, v[0], v[1])")
    out = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True, check=True)
    assert out.stdout.decode().split() == ["Decimal", "1.5", "2020-01-01"]
