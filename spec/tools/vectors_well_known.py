"""Vectors of the well-known extension types (SPEC 5.8), for make_vectors.py.

Valid vectors go to valid/well_known.json; must-fail vectors are appended to
invalid/invalid.json. Every payload rule of SPEC 5.8 has a must-fail vector.
"""

from __future__ import annotations

import datetime
import uuid
from decimal import Decimal

import tersaref as P

HDR = bytes([0xC1, 0x70, 0x10])
HDR_STREAM = bytes([0xC1, 0x70, 0x12])
FILE = "well_known"

MAX_COEFFICIENT = (1 << (8 * P.MAX_DECIMAL_COEFFICIENT)) - 1   # 1,024 bytes of ff
E_MAX = P.MAX_DECIMAL_EXPONENT


def ext(typ: int, payload: bytes) -> bytes:
    return bytes([P.EXT]) + P.varint(typ) + P.varint(len(payload)) + payload


def dec_payload(k: int, e: int, c: bytes) -> bytes:
    return bytes([k]) + P.varint(P.zigzag(e)) + c


def decimal_of(negative: bool, c: int, e: int) -> Decimal:
    return Decimal((int(negative), tuple(map(int, str(c))), e))


def gen_valid(V):
    V.file(FILE, "Well-known extension types (SPEC 5.8): decimal, date, uuid, time of day")
    valid = lambda name, v, note="": V.valid(FILE, name, v, note=note)  # noqa: E731
    for text in ["0", "-0", "1", "-1", "1.0", "1.00", "0.000", "12.345", "-12.345", "1E+10", "1E-10",
                 "0E+3", "255", "256", "123456789012345678901234567890.123456789",
                 "Infinity", "-Infinity", "NaN"]:
        valid(f"decimal {text}", Decimal(text))
    valid("decimal exponent 999999999", decimal_of(False, 1, E_MAX))
    valid("decimal exponent -999999999", decimal_of(False, 1, -E_MAX))
    valid("decimal -0 with exponent -999999999", decimal_of(True, 0, -E_MAX))
    valid("decimal coefficient of 1,024 bytes", decimal_of(False, MAX_COEFFICIENT, -1024))
    valid("decimal negative coefficient of 1,024 bytes, exponent 999999999",
          decimal_of(True, MAX_COEFFICIENT, E_MAX))
    valid("decimals 1.0 and 1.00 are different values", [Decimal("1.0"), Decimal("1.00"), Decimal("1")])
    for y, m, d in [(1, 1, 1), (1970, 1, 1), (1969, 12, 31), (9999, 12, 31), (2000, 2, 29), (1900, 3, 1),
                    (2024, 12, 31), (1582, 10, 4)]:
        day = datetime.date(y, m, d)
        valid(f"date {day.isoformat()}", day)
    for text in ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
                 "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "01932c07-209c-7c3e-9f3b-6e1c8c2d4a5b"]:
        valid(f"uuid {text}", uuid.UUID(text))
    for t in [datetime.time(0, 0), datetime.time(0, 0, 0, 1), datetime.time(12, 0),
              datetime.time(12, 34, 56, 500000), datetime.time(23, 59, 59),
              datetime.time(23, 59, 59, 999999)]:
        valid(f"time of day {P.time_of_day_text(t)}", t)
    valid("every kind in an array",
          [Decimal("9.99"), datetime.date(2025, 4, 16), uuid.UUID(int=1), datetime.time(9, 30), None])
    valid("well-known values in a shaped map",
          [{"price": Decimal("9.99"), "day": datetime.date(2025, 4, 16), "id": uuid.UUID(int=7),
            "at": datetime.time(8, 0)},
           {"price": Decimal("10.00"), "day": datetime.date(2025, 4, 17), "id": uuid.UUID(int=8),
            "at": datetime.time(8, 0, 0, 250000)}])
    valid("well-known values as map keys",
          P.Map([(Decimal("1.0"), 1), (Decimal("1.00"), 2), (datetime.date(2000, 1, 1), 3),
                 (uuid.UUID(int=0), 4), (datetime.time(0, 0), 5)]),
          note="1.0 and 1.00 are different keys")
    valid("well-known values beside an application extension and a timestamp",
          [P.Ext(P.MAX_APP_EXT_TYPE, b"\x01"), datetime.date(1970, 1, 1), P.Timestamp(0)])
    V.stream(FILE, "stream of well-known values",
             [Decimal("-0"), datetime.date(9999, 12, 31), uuid.UUID(int=(1 << 128) - 1),
              datetime.time(23, 59, 59, 999999), Decimal("NaN")])


def gen_invalid(V, file: str):
    def fail(name: str, payload: bytes, typ: int, code="invalid_value"):
        V.fail(file, name, HDR + ext(typ, payload), code, 3)

    dec, date, uid, tod = P.EXT_DECIMAL, P.EXT_DATE, P.EXT_UUID, P.EXT_TIME_OF_DAY
    fail("decimal empty payload", b"", dec)
    fail("decimal kind 5", dec_payload(5, 0, b""), dec)
    fail("decimal kind 255", b"\xff", dec)
    fail("decimal infinity with a byte after the kind", b"\x02\x01", dec)
    fail("decimal -infinity with a byte after the kind", b"\x03\x01", dec)
    fail("decimal NaN with a byte after the kind", b"\x04\x01", dec)
    fail("decimal without an exponent", b"\x00", dec)
    fail("decimal coefficient with a leading zero byte", dec_payload(0, 0, b"\x00\x01"), dec)
    fail("decimal zero written as a zero byte", dec_payload(1, 0, b"\x00"), dec)
    fail("decimal coefficient of 1,025 bytes", dec_payload(0, 0, b"\x01" + b"\x00" * 1024), dec)
    fail("decimal exponent 1000000000", dec_payload(0, E_MAX + 1, b"\x01"), dec)
    fail("decimal exponent -1000000000", dec_payload(0, -E_MAX - 1, b"\x01"), dec)
    fail("decimal exponent int64 max", dec_payload(1, (1 << 63) - 1, b"\x01"), dec)
    fail("decimal exponent varint not minimal", b"\x00\x02\x00\x01", dec)
    # A varint the payload's end cuts short is the payload's defect, even where
    # the bytes after the EXT item would complete it.
    V.fail(file, "decimal exponent cut short by the payload's end",
           HDR + bytes([0x82]) + ext(dec, b"\x00\x02") + b"\x01", "invalid_value", 4)
    fail("date 10000-01-01", P.varint(P.zigzag(P.MAX_DATE_DAYS + 1)), date)
    fail("date 0000-12-31", P.varint(P.zigzag(P.MIN_DATE_DAYS - 1)), date)
    fail("date zigzag 2^64-1", P.varint(P.UINT64_MAX), date)
    fail("date empty payload", b"", date)
    fail("date with a byte after the varint", P.varint(0) + b"\x01", date)
    fail("date varint not minimal", b"\x02\x00", date)
    fail("date varint cut short by the payload's end", b"\x02", date)
    fail("uuid of 15 bytes", bytes(15), uid)
    fail("uuid of 17 bytes", bytes(17), uid)
    fail("uuid empty payload", b"", uid)
    fail("time of day 86400000000", P.varint(P.MICROS_PER_DAY), tod)
    fail("time of day 2^64-1", P.varint(P.UINT64_MAX), tod)
    fail("time of day empty payload", b"", tod)
    fail("time of day with a byte after the varint", P.varint(0) + b"\x00", tod)
    fail("reserved extension type 0xff04", b"", 0xFF04)
    fail("reserved extension type 0xffff", b"\x01\x02", 0xFFFF)
    V.fail(file, "uuid payload longer than the input", HDR + bytes([P.EXT]) + P.varint(uid) + P.varint(16)
           + bytes(15), "length_exceeds_input", 3)
    V.fail(file, "uuid of 15 bytes inside an array", HDR + bytes([0x82, 0xE0]) + ext(uid, bytes(15)),
           "invalid_value", 5)
    frame = bytes([P.SYNC, 0x12]) + ext(tod, P.varint(P.MICROS_PER_DAY))
    V.fail(file, "time of day out of range in a stream frame", HDR_STREAM + P.varint(len(frame)) + frame,
           "invalid_value", 6, stream=True)
