"""Tersa v1 reference codec: the data model, tag constants, errors, primitive
fields, timestamp strings and well-known types (SPEC 1, 3, 5.1, 5.8, 6, 10).

Part of the reference codec; tersaref.py re-exports every name, so users
import tersaref only.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
import struct
import uuid
from dataclasses import dataclass, field

# --------------------------------------------------------------------------
# Data model wrappers
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Symbol:
    name: str


@dataclass(frozen=True)
class Ext:
    type: int
    data: bytes


ZONE_UTC, ZONE_OFFSET, ZONE_FLOATING = 0, 1, 2


@dataclass(frozen=True)
class Timestamp:
    seconds: int          # UTC seconds since 1970-01-01T00:00:00Z (floating: wall clock as if UTC)
    nanos: int = 0        # 0..999_999_999
    zone: int = ZONE_UTC  # ZONE_UTC, ZONE_OFFSET or ZONE_FLOATING
    offset: int = 0       # minutes east of UTC, only for ZONE_OFFSET


@dataclass
class Map:
    """A map whose keys are not all strings/symbols; pairs keep their order."""
    pairs: list = field(default_factory=list)


# --------------------------------------------------------------------------
# Constants (SPEC section "Tags")
# --------------------------------------------------------------------------

MAGIC = b"\xc1\x70"
VERSION = 1
FLAG_DICT = 0x01
FLAG_STREAM = 0x02

REF0, N_REF0 = 0x00, 64
STR0, N_STR0 = 0x40, 32
SHAPE0, N_SHAPE0 = 0x60, 32
ARR0, N_ARR0 = 0x80, 16
MAPDEF0, N_MAPDEF0 = 0x90, 16
SMALLINT0, SMALLINT_MIN, SMALLINT_MAX = 0xA0, -8, 23
PFX0, N_PFX0 = 0xC0, 16
DEC0, DEC_EMIN, DEC_EMAX = 0xD0, -12, 3
NULL, FALSE, TRUE = 0xE0, 0xE1, 0xE2
F32, F64 = 0xE3, 0xE4
INT_POS, INT_NEG, INT_DELTA = 0xE5, 0xE6, 0xE7
DEC_X, DEC_DELTA = 0xE8, 0xE9
BIGINT_POS, BIGINT_NEG = 0xEA, 0xEB
STR_LONG = 0xEC
REF8, REF16, REF24 = 0xED, 0xEE, 0xEF
SHAPE8, SHAPE16 = 0xF0, 0xF1
ARR_LONG, MAPDEF_LONG, MAP_GEN = 0xF2, 0xF3, 0xF4
PFX_LONG = 0xF5
BIN, EXT, SYMBOL, TIME = 0xF6, 0xF7, 0xF8, 0xF9
TS_STR, TS_Z0, TS_Z3 = 0xFA, 0xFB, 0xFC
SYNC = 0xFD                        # first byte of a sync frame, never an item

REF8_BASE = N_REF0                 # 64
REF16_BASE = REF8_BASE + 256       # 320
REF24_BASE = REF16_BASE + 65536    # 65856
SHAPE8_BASE = N_SHAPE0             # 32
SHAPE16_BASE = SHAPE8_BASE + 256   # 288

MAX_STRINGS = REF24_BASE          # exactly the indices REF..REF16 address: no REF24 is ever valid
MAX_SHAPES = 1 << 16
MIN_TABLE_LEN = 2
MAX_DEC_DIGITS = 15                # canonical decimal mantissas: |m| < 10**15
BIN_TRUSTED = 4                    # binary floats in a row after which a slot stops testing
BIN_RETEST = 19                    # the count at which it tests again; 4 follows it
MAX_PREFIX = 127
DEFAULT_MAX_DEPTH = 1000
MAX_EXT_TYPE = 0xFFFF
MAX_APP_EXT_TYPE = 0xFEFF          # 0xFF00.. are the well-known types (SPEC 5.8)
EXT_DECIMAL, EXT_DATE, EXT_UUID, EXT_TIME_OF_DAY = 0xFF00, 0xFF01, 0xFF02, 0xFF03
DECIMAL_FINITE, DECIMAL_NEGATIVE, DECIMAL_INF, DECIMAL_NEG_INF, DECIMAL_NAN = range(5)
MAX_DECIMAL_EXPONENT = 999_999_999
MAX_DECIMAL_COEFFICIENT = 1024     # bytes
MIN_DATE_DAYS, MAX_DATE_DAYS = -719_162, 2_932_896   # 0001-01-01, 9999-12-31
MICROS_PER_DAY = 86_400_000_000
MIN_SECONDS = -62135596800         # 0001-01-01T00:00:00Z
MAX_SECONDS = 253402300799         # 9999-12-31T23:59:59Z
MAX_OFFSET = 1439                  # minutes; +-23:59

INT64_MIN, INT64_MAX, UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1

ERRORS = (
    "truncated", "bad_magic", "unsupported_version", "bad_flags", "invalid_tag",
    "invalid_varint", "length_exceeds_input", "invalid_utf8", "bad_reference",
    "expected_string", "invalid_value", "duplicate_key", "depth_exceeded",
    "trailing_bytes", "unknown_dictionary", "out_of_sequence", "bad_sync",
)


class TersaError(Exception):
    pass


class DecodeError(TersaError):
    def __init__(self, code: str, offset: int, message: str = ""):
        assert code in ERRORS, code
        super().__init__(f"{code} at offset {offset}: {message}")
        self.code, self.offset = code, offset


class EncodeError(TersaError):
    pass


# --------------------------------------------------------------------------
# Primitive fields
# --------------------------------------------------------------------------


def varint(n: int) -> bytes:
    """Prefix varint: the count of trailing zero bits of the first byte, plus
    one, is the total length (1..8); a zero first byte means 9 bytes."""
    assert 0 <= n <= UINT64_MAX
    for length in range(1, 9):
        if n < 1 << (7 * length):
            v = ((n << 1) | 1) << (length - 1)
            return v.to_bytes(length, "little")
    return b"\x00" + n.to_bytes(8, "little")


def varint_len(n: int) -> int:
    return len(varint(n))


def zigzag(n: int) -> int:
    assert INT64_MIN <= n <= INT64_MAX
    return (n << 1) ^ (n >> 63) if n < 0 else n << 1


def unzigzag(z: int) -> int:
    return (z >> 1) ^ -(z & 1)


def f64_bits(d: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", d))[0]


def is_f32_exact(d: float) -> bool:
    if math.isnan(d):
        return False
    try:
        return struct.unpack("<f", struct.pack("<f", d))[0] == d
    except OverflowError:
        return False


def shortest_digits(d: float):
    """(negative, digits, e): |d| == int(digits) * 10**e for the shortest
    round-trip representation (fewest significant digits, then closest to d).
    d must be finite and non-zero; digits has no leading or trailing zeros."""
    mt = re.fullmatch(r"(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?", repr(d))
    sign, ip, fp, ex = mt.groups()
    fp = fp or ""
    digits = (ip + fp).lstrip("0")
    e = int(ex or 0) - len(fp)
    stripped = digits.rstrip("0")
    return bool(sign), stripped, e + len(digits) - len(stripped)


def shortest_decimal(d: float):
    """(m, e) with d == m * 10**e from the shortest round-trip representation,
    or None if outside the canonical decimal range (|m| < 10**15, -22 <= e <= 22)
    or d is -0.0, infinite or NaN."""
    if math.isnan(d) or math.isinf(d):
        return None
    if d == 0:
        return None if math.copysign(1.0, d) < 0 else (0, 0)
    negative, digits, e = shortest_digits(d)
    m = -int(digits) if negative else int(digits)
    if abs(m) >= 10 ** MAX_DEC_DIGITS or not -22 <= e <= 22:
        return None
    return m, e


def decimal_to_float(m: int, e: int) -> float:
    """One correctly rounded operation (|m| < 2**53, |e| <= 22): exact."""
    if e >= 0:
        return float(m) * float(10 ** e)
    return float(m) / float(10 ** -e)


def widen_f32(bits: int) -> float:
    """binary32 -> binary64 by bits, so a NaN keeps sign, payload and quiet bit
    exactly (hardware conversion would quiet a signalling NaN)."""
    if bits & 0x7F800000 == 0x7F800000 and bits & 0x007FFFFF:
        wide = ((bits & 0x80000000) << 32) | (0x7FF << 52) | ((bits & 0x007FFFFF) << 29)
        return struct.unpack("<d", wide.to_bytes(8, "little"))[0]
    return struct.unpack("<f", bits.to_bytes(4, "little"))[0]


def utf8_char_boundary(b: bytes, i: int) -> bool:
    return i == len(b) or (b[i] & 0xC0) != 0x80


# --------------------------------------------------------------------------
# Timestamp strings (SPEC "Timestamp strings")
# --------------------------------------------------------------------------

TS_RE = re.compile(
    rb"(\d{4})-(\d{2})-(\d{2})"
    rb"(?:([T ])(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2}))?"
)
TSV_NUMERIC_OFFSET, TSV_SPACE, TSV_DATE_ONLY = 0x10, 0x20, 0x40


def days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def days_in_month(y: int, m: int) -> int:
    if m == 2:
        return 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    return 30 if m in (4, 6, 9, 11) else 31


def parse_ts_string(b: bytes):
    """(variant, utc_seconds, fraction, digits, offset_minutes) or None."""
    mt = TS_RE.fullmatch(b)
    if not mt:
        return None
    y, mo, d = int(mt[1]), int(mt[2]), int(mt[3])
    if y < 1 or not 1 <= mo <= 12 or not 1 <= d <= days_in_month(y, mo):
        return None
    days = days_from_civil(y, mo, d)
    if mt[4] is None:
        return TSV_DATE_ONLY, days * 86400, 0, 0, 0
    hh, mi, ss = int(mt[5]), int(mt[6]), int(mt[7])
    if hh > 23 or mi > 59 or ss > 59:
        return None
    variant = 0
    if mt[4] == b" ":
        variant |= TSV_SPACE
    frac_text = mt[8] or b""
    digits = len(frac_text)
    frac = int(frac_text) if digits else 0
    variant |= digits
    offset = 0
    if mt[9] != b"Z":
        oh, om = int(mt[9][1:3]), int(mt[9][4:6])
        if oh > 23 or om > 59:
            return None
        offset = oh * 60 + om
        if mt[9][0:1] == b"-":
            if offset == 0:
                return None  # "-00:00" has no packed form
            offset = -offset
        variant |= TSV_NUMERIC_OFFSET
    seconds = days * 86400 + hh * 3600 + mi * 60 + ss - offset * 60
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:
        return None
    return variant, seconds, frac, digits, offset


def render_ts_string(variant: int, seconds: int, frac: int, offset: int) -> bytes | None:
    local = seconds + offset * 60
    days, secs = divmod(local, 86400)
    y, mo, d = civil_from_days(days)
    if not 1 <= y <= 9999:
        return None
    out = b"%04d-%02d-%02d" % (y, mo, d)
    if variant & TSV_DATE_ONLY:
        return out
    out += b" " if variant & TSV_SPACE else b"T"
    out += b"%02d:%02d:%02d" % (secs // 3600, secs // 60 % 60, secs % 60)
    digits = variant & 0x0F
    if digits:
        out += b"." + b"%0*d" % (digits, frac)
    if variant & TSV_NUMERIC_OFFSET:
        sign = b"-" if offset < 0 else b"+"
        out += sign + b"%02d:%02d" % (abs(offset) // 60, abs(offset) % 60)
    else:
        out += b"Z"
    return out


# --------------------------------------------------------------------------
# Well-known extension types (SPEC 5.8)
# --------------------------------------------------------------------------

EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()


def is_well_known(v) -> bool:
    # datetime is a date but stays the format's own TIME item (a Timestamp here).
    return isinstance(v, (decimal.Decimal, uuid.UUID, datetime.time)) or (
        isinstance(v, datetime.date) and not isinstance(v, datetime.datetime))


def well_known_payload(v) -> tuple[int, bytes]:
    """(type, payload) of a well-known value; EncodeError if it has no exact form."""
    if isinstance(v, decimal.Decimal):
        sign, digits, exp = v.as_tuple()
        if v.is_snan() or (v.is_qnan() and (sign or digits)):
            raise EncodeError("a decimal NaN with a sign or payload has no Tersa form")
        if v.is_nan():
            return EXT_DECIMAL, bytes([DECIMAL_NAN])
        if v.is_infinite():
            return EXT_DECIMAL, bytes([DECIMAL_NEG_INF if sign else DECIMAL_INF])
        c = int("".join(map(str, digits)))
        coefficient = c.to_bytes((c.bit_length() + 7) // 8, "big")
        if not -MAX_DECIMAL_EXPONENT <= exp <= MAX_DECIMAL_EXPONENT:
            raise EncodeError("decimal exponent out of range")
        if len(coefficient) > MAX_DECIMAL_COEFFICIENT:
            raise EncodeError("decimal coefficient longer than 1,024 bytes")
        return EXT_DECIMAL, bytes([sign]) + varint(zigzag(exp)) + coefficient
    if isinstance(v, uuid.UUID):
        return EXT_UUID, v.bytes
    if isinstance(v, datetime.time):
        if v.tzinfo is not None:
            raise EncodeError("a time of day with a zone has no Tersa form")
        micros = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
        return EXT_TIME_OF_DAY, varint(micros)
    return EXT_DATE, varint(zigzag(v.toordinal() - EPOCH_ORDINAL))


def payload_varint(p: bytes, pos: int) -> tuple[int, int]:
    """A minimal varint inside a payload: (value, next position); ValueError otherwise."""
    if pos >= len(p):
        raise ValueError("payload ends before a varint")
    first = p[pos]
    length = 9 if first == 0 else (first & -first).bit_length()
    if pos + length > len(p):
        raise ValueError("payload ends inside a varint")
    if length == 9:
        n = int.from_bytes(p[pos + 1:pos + 9], "little")
        minimum = 1 << 56
    else:
        n = int.from_bytes(p[pos:pos + length], "little") >> length
        minimum = 1 << (7 * (length - 1)) if length > 1 else 0
    if n < minimum:
        raise ValueError("varint is not minimal")
    return n, pos + length


def well_known_value(typ: int, p: bytes):
    """The value of a reserved extension type's payload; ValueError if invalid."""
    if typ == EXT_DECIMAL:
        if not p:
            raise ValueError("decimal without a kind byte")
        k = p[0]
        if k in (DECIMAL_INF, DECIMAL_NEG_INF, DECIMAL_NAN):
            if len(p) != 1:
                raise ValueError("bytes after a decimal infinity or NaN")
            return decimal.Decimal(("Infinity", "-Infinity", "NaN")[k - DECIMAL_INF])
        if k not in (DECIMAL_FINITE, DECIMAL_NEGATIVE):
            raise ValueError("decimal kind out of range")
        z, pos = payload_varint(p, 1)
        e = unzigzag(z)
        if not -MAX_DECIMAL_EXPONENT <= e <= MAX_DECIMAL_EXPONENT:
            raise ValueError("decimal exponent out of range")
        coefficient = p[pos:]
        if len(coefficient) > MAX_DECIMAL_COEFFICIENT:
            raise ValueError("decimal coefficient longer than 1,024 bytes")
        if coefficient[:1] == b"\x00":
            raise ValueError("decimal coefficient with a leading zero byte")
        c = int.from_bytes(coefficient, "big")
        return decimal.Decimal((k, tuple(map(int, str(c))), e))
    if typ in (EXT_DATE, EXT_TIME_OF_DAY):
        n, pos = payload_varint(p, 0)
        if pos != len(p):
            raise ValueError("bytes after the varint")
        if typ == EXT_TIME_OF_DAY:
            if n >= MICROS_PER_DAY:
                raise ValueError("time of day out of range")
            seconds, micros = divmod(n, 1_000_000)
            return datetime.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micros)
        days = unzigzag(n)
        if not MIN_DATE_DAYS <= days <= MAX_DATE_DAYS:
            raise ValueError("date out of range")
        return datetime.date.fromordinal(days + EPOCH_ORDINAL)
    if typ == EXT_UUID:
        if len(p) != 16:
            raise ValueError("a uuid is 16 bytes")
        return uuid.UUID(bytes=bytes(p))
    raise ValueError(f"reserved extension type 0x{typ:04x} is not defined in version 1")


def decimal_text(v: decimal.Decimal) -> str:
    """Python's str(): the General Decimal Arithmetic to-scientific-string."""
    return str(v)


def time_of_day_text(v: datetime.time) -> str:
    text = f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
    return text + f".{v.microsecond:06d}" if v.microsecond else text
