"""Tersa v1 reference codec.

Written for exactness and readability, not speed: it is the executable companion
of spec/SPEC.md and the generator of spec/vectors. When this file and the SPEC
disagree, the SPEC is right and this file has a bug.

Data model in Python:
    None, bool, int (any size), float, str, bytes (binary), list (array),
    dict (map with str/Symbol keys, insertion order) or Map (any keys),
    Symbol, Timestamp, Ext; the well-known extension types (SPEC 5.8) are
    decimal.Decimal, datetime.date (not datetime), uuid.UUID and naive
    datetime.time.
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

MAX_STRINGS = 1 << 20
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


# --------------------------------------------------------------------------
# Codec state shared by encoder and decoder (SPEC "State")
# --------------------------------------------------------------------------


class Slot:
    __slots__ = ("str", "int", "dec", "bin")

    def __init__(self):
        self.str = None   # bytes of the last string item in this slot
        self.int = None   # last integer item in int64 range
        self.dec = None   # (m, e) of the last decimal float item
        self.bin = 0      # encoders only: binary floats since the last decimal (SPEC 4.3)


class Shape:
    __slots__ = ("keys", "slots")

    def __init__(self, keys):
        self.keys = keys  # tuple of (is_symbol, bytes)
        self.slots = [Slot() for _ in keys]


@dataclass
class Dictionary:
    """Pre-shared table contents. `strings`: list of str; `shapes`: list of
    lists of keys (str or Symbol)."""
    strings: list
    shapes: list

    def __post_init__(self):
        encoded = [s.encode("utf-8") for s in self.strings]
        if any(len(b) < MIN_TABLE_LEN for b in encoded) or len(set(encoded)) != len(encoded):
            raise TersaError("dictionary strings must be distinct and at least 2 bytes long")
        shapes = [tuple(key_of(k) for k in keys) for keys in self.shapes]
        if len(set(shapes)) != len(shapes) or any(len(set(k)) != len(k) for k in shapes):
            raise TersaError("dictionary shapes must be distinct and free of duplicate keys")
        if len(encoded) > MAX_STRINGS or len(shapes) > MAX_SHAPES:
            raise TersaError("dictionary too large")

    @classmethod
    def generated(cls, strings: int, shapes: int) -> "Dictionary":
        """The synthetic dictionaries of the vector files ("generate")."""
        return cls([f"s{i}" for i in range(strings)], [[f"k{i}"] for i in range(shapes)])

    def encode(self) -> bytes:
        body = ["tersa-dictionary-v1", list(self.strings),
                [list(s) for s in self.shapes]]
        return encode(body, header=False)

    @property
    def id(self) -> int:
        return fnv1a64(self.encode())


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & UINT64_MAX
    return h


def key_of(k):
    if isinstance(k, Symbol):
        return (True, k.name.encode("utf-8"))
    return (False, k.encode("utf-8"))


class State:
    def __init__(self, dictionary: Dictionary | None):
        self.strings: list[bytes] = []
        self.string_index: dict[bytes, int] = {}   # encoder only: first index
        self.shapes: list[Shape] = []
        self.shape_index: dict[tuple, int] = {}     # encoder only
        self.root = Slot()
        self.key_slot = Slot()
        self.last_str: bytes | None = None
        self.last_ts = 0
        if dictionary is not None:
            for s in dictionary.strings:
                b = s.encode("utf-8")
                self.add_string(b)
            for keys in dictionary.shapes:
                self.add_shape(tuple(key_of(k) for k in keys))

    def add_string(self, b: bytes):
        if len(b) >= MIN_TABLE_LEN and len(self.strings) < MAX_STRINGS:
            self.string_index.setdefault(b, len(self.strings))
            self.strings.append(b)

    def add_shape(self, keys: tuple) -> Shape:
        shape = Shape(keys)
        if len(self.shapes) < MAX_SHAPES:
            self.shape_index.setdefault(keys, len(self.shapes))
            self.shapes.append(shape)
        return shape

    def note_string(self, slot: Slot, b: bytes):
        slot.str = b
        self.last_str = b


# --------------------------------------------------------------------------
# Encoder (canonical policy, SPEC "Canonical encoding")
# --------------------------------------------------------------------------


def ref_size(i: int) -> int:
    return 1 if i < REF8_BASE else 2 if i < REF16_BASE else 3 if i < REF24_BASE else 4


def common_prefix(a: bytes, b: bytes) -> int:
    n = 0
    limit = min(len(a), len(b), MAX_PREFIX)
    while n < limit and a[n] == b[n]:
        n += 1
    while n > 0 and not utf8_char_boundary(b, n):
        n -= 1
    return n


class Encoder:
    def __init__(self, dictionary: Dictionary | None = None, max_depth=DEFAULT_MAX_DEPTH):
        self.st = State(dictionary)
        self.dictionary = dictionary
        self.max_depth = max_depth
        self.out = bytearray()

    def header(self, flags=0):
        if self.dictionary is not None:
            flags |= FLAG_DICT
        self.out += MAGIC + bytes([(VERSION << 4) | flags])
        if self.dictionary is not None:
            self.out += self.dictionary.id.to_bytes(8, "little")

    # -- strings -----------------------------------------------------------
    def string_item(self, b: bytes, slot: Slot):
        st = self.st
        inline = (1 if len(b) < N_STR0 else 1 + varint_len(len(b) - N_STR0)) + len(b)
        i = st.string_index.get(b) if len(b) >= MIN_TABLE_LEN else None
        if i is not None and ref_size(i) <= inline:
            self.ref(i)
            st.note_string(slot, st.strings[i])
            return
        ts = parse_ts_string(b)
        if ts is not None:
            self.ts_string(*ts)
        else:
            best, base_flag = 0, 0
            if slot.str is not None:
                best = common_prefix(slot.str, b)
            if st.last_str is not None:
                n = common_prefix(st.last_str, b)
                if n > best:
                    best, base_flag = n, 0x80
            suffix = b[best:]
            pfx = 2 + (0 if len(suffix) < N_PFX0 else varint_len(len(suffix) - N_PFX0)) + len(suffix)
            if best > 0 and pfx < inline:
                if len(suffix) < N_PFX0:
                    self.out += bytes([PFX0 + len(suffix), base_flag | best])
                else:
                    self.out += bytes([PFX_LONG, base_flag | best]) + varint(len(suffix) - N_PFX0)
                self.out += suffix
            elif len(b) < N_STR0:
                self.out += bytes([STR0 + len(b)]) + b
            else:
                self.out += bytes([STR_LONG]) + varint(len(b) - N_STR0) + b
        st.add_string(b)
        st.note_string(slot, b)

    def ref(self, i: int):
        if i < REF8_BASE:
            self.out.append(REF0 + i)
        elif i < REF16_BASE:
            self.out += bytes([REF8, i - REF8_BASE])
        elif i < REF24_BASE:
            self.out += bytes([REF16]) + (i - REF16_BASE).to_bytes(2, "little")
        else:
            self.out += bytes([REF24]) + (i - REF24_BASE).to_bytes(3, "little")

    def ts_delta(self, seconds: int) -> bytes:
        d = seconds - self.st.last_ts
        self.st.last_ts = seconds
        return varint(zigzag(d))

    def ts_string(self, variant, seconds, frac, digits, offset):
        if variant == 0:
            self.out.append(TS_Z0)
        elif variant == 3:
            self.out.append(TS_Z3)
        else:
            self.out += bytes([TS_STR, variant])
        self.out += self.ts_delta(seconds)
        if digits:
            self.out += varint(frac)
        if variant & TSV_NUMERIC_OFFSET:
            self.out += varint(zigzag(offset))

    # -- numbers -----------------------------------------------------------
    def integer(self, n: int, slot: Slot):
        if SMALLINT_MIN <= n <= SMALLINT_MAX:
            self.out.append(SMALLINT0 + n - SMALLINT_MIN)
        elif INT64_MIN <= n <= UINT64_MAX:
            if n > 0:
                absolute = bytes([INT_POS]) + varint(n - (SMALLINT_MAX + 1))
            else:
                absolute = bytes([INT_NEG]) + varint((SMALLINT_MIN - 1) - n)
            enc = absolute
            if slot.int is not None and n <= INT64_MAX and INT64_MIN <= n - slot.int <= INT64_MAX:
                delta = bytes([INT_DELTA]) + varint(zigzag(n - slot.int))
                if len(delta) < len(absolute):
                    enc = delta
            self.out += enc
        else:
            mag = abs(n)
            data = mag.to_bytes((mag.bit_length() + 7) // 8, "little")
            self.out += bytes([BIGINT_POS if n > 0 else BIGINT_NEG]) + varint(len(data)) + data
        if INT64_MIN <= n <= INT64_MAX:
            slot.int = n

    def float_(self, d: float, slot: Slot):
        cands = []  # (size, order, bytes, dec)
        tested = slot.bin < BIN_TRUSTED or slot.bin == BIN_RETEST
        dec = shortest_decimal(d) if tested else None
        if dec is not None:
            m, e = dec
            if DEC_EMIN <= e <= DEC_EMAX:
                b = bytes([DEC0 + e - DEC_EMIN]) + varint(zigzag(m))
            else:
                b = bytes([DEC_X, e & 0xFF]) + varint(zigzag(m))
            cands.append((len(b), 0, b, dec))
            if slot.dec is not None and slot.dec[1] == e:
                b = bytes([DEC_DELTA]) + varint(zigzag(m - slot.dec[0]))
                cands.append((len(b), 1, b, dec))
        if is_f32_exact(d):
            cands.append((5, 2, bytes([F32]) + struct.pack("<f", d), None))
        cands.append((9, 3, bytes([F64]) + struct.pack("<d", d), None))
        _, _, b, dec = min(cands, key=lambda c: (c[0], c[1]))
        self.out += b
        if dec is not None:
            slot.dec = dec
            slot.bin = 0
        else:
            slot.bin = slot.bin + 1 if slot.bin < BIN_RETEST else BIN_TRUSTED

    # -- values ------------------------------------------------------------
    def value(self, v, slot: Slot, depth: int):
        out = self.out
        if v is None:
            out.append(NULL)
        elif v is True:
            out.append(TRUE)
        elif v is False:
            out.append(FALSE)
        elif isinstance(v, int):
            self.integer(v, slot)
        elif isinstance(v, float):
            self.float_(v, slot)
        elif isinstance(v, str):
            self.string_item(v.encode("utf-8"), slot)
        elif isinstance(v, Symbol):
            out.append(SYMBOL)
            self.string_item(v.name.encode("utf-8"), slot)
        elif isinstance(v, (bytes, bytearray)):
            out += bytes([BIN]) + varint(len(v)) + bytes(v)
        elif isinstance(v, Timestamp):
            self.timestamp(v)
        elif isinstance(v, Ext):
            if not 0 <= v.type <= MAX_APP_EXT_TYPE:
                raise EncodeError("extension type out of range (0xFF00-0xFFFF are the well-known types)")
            out += bytes([EXT]) + varint(v.type) + varint(len(v.data)) + v.data
        elif is_well_known(v):
            typ, payload = well_known_payload(v)
            out += bytes([EXT]) + varint(typ) + varint(len(payload)) + payload
        elif isinstance(v, (list, tuple)):
            if depth >= self.max_depth:
                raise EncodeError("depth exceeded")
            n = len(v)
            out += bytes([ARR0 + n]) if n < N_ARR0 else bytes([ARR_LONG]) + varint(n - N_ARR0)
            for x in v:
                self.value(x, slot, depth + 1)
        elif isinstance(v, (dict, Map)):
            if depth >= self.max_depth:
                raise EncodeError("depth exceeded")
            pairs = list(v.items()) if isinstance(v, dict) else v.pairs
            if all(isinstance(k, (str, Symbol)) for k, _ in pairs):
                self.shaped_map(pairs, depth)
                return
            out += bytes([MAP_GEN]) + varint(len(pairs))
            for k, x in pairs:
                self.value(k, slot, depth + 1)
                self.value(x, slot, depth + 1)
        else:
            raise EncodeError(f"unsupported type {type(v).__name__}")

    def shaped_map(self, pairs: list, depth: int):
        st = self.st
        keys = tuple(key_of(k) for k, _ in pairs)
        i = st.shape_index.get(keys)
        if i is not None:
            if i < SHAPE8_BASE:
                self.out.append(SHAPE0 + i)
            elif i < SHAPE16_BASE:
                self.out += bytes([SHAPE8, i - SHAPE8_BASE])
            else:
                self.out += bytes([SHAPE16]) + (i - SHAPE16_BASE).to_bytes(2, "little")
            shape = st.shapes[i]
        else:
            n = len(keys)
            self.out += bytes([MAPDEF0 + n]) if n < N_MAPDEF0 else bytes([MAPDEF_LONG]) + varint(n - N_MAPDEF0)
            for is_sym, kb in keys:
                if is_sym:
                    self.out.append(SYMBOL)
                self.string_item(kb, st.key_slot)
            shape = st.add_shape(keys)
        for slot, (_, x) in zip(shape.slots, pairs):
            self.value(x, slot, depth + 1)

    def timestamp(self, t: Timestamp):
        if not MIN_SECONDS <= t.seconds <= MAX_SECONDS or not 0 <= t.nanos <= 999_999_999:
            raise EncodeError("timestamp out of range")
        if t.zone == ZONE_OFFSET:
            if not -MAX_OFFSET <= t.offset <= MAX_OFFSET:
                raise EncodeError("offset out of range")
            if not MIN_SECONDS <= t.seconds + t.offset * 60 <= MAX_SECONDS:
                raise EncodeError("timestamp out of range")
        flags = (1 if t.nanos else 0) | (t.zone << 1)
        self.out += bytes([TIME, flags]) + self.ts_delta(t.seconds)
        if t.nanos:
            self.out += varint(t.nanos)
        if t.zone == ZONE_OFFSET:
            self.out += varint(zigzag(t.offset))

    def encode_value(self, v) -> bytes:
        start = len(self.out)
        self.value(v, self.st.root, 0)
        return bytes(self.out[start:])


def encode(v, dictionary: Dictionary | None = None, header=True) -> bytes:
    e = Encoder(dictionary)
    if header:
        e.header()
    e.encode_value(v)
    return bytes(e.out)


class StreamEncoder:
    """Frames of one stream (SPEC 2.3), with sync frames where the options ask.

    sync_frames=N: frame k (from 0) is a sync frame when k % N == 0.
    sync_bytes=B: a frame is a sync frame once at least B bytes of frames have been
    written since the start of the last sync frame. sync(): the next frame is one.
    The first frame always is.
    """

    def __init__(self, dictionary: Dictionary | None = None, sync_frames=0, sync_bytes=0):
        self.e = Encoder(dictionary)
        self.dictionary = dictionary
        self.sync_frames, self.sync_bytes = sync_frames, sync_bytes
        self.frames = 0
        self.since_sync = 0
        self.want_sync = True

    def header(self) -> bytes:
        self.e.header(FLAG_STREAM)
        h = bytes(self.e.out)
        self.e.out.clear()
        return h

    def sync(self):
        self.want_sync = True

    def frame(self, v) -> bytes:
        e = self.e
        sync = (self.want_sync
                or (self.sync_frames and self.frames % self.sync_frames == 0)
                or (self.sync_bytes and self.since_sync >= self.sync_bytes))
        e.out.clear()
        if sync:
            e.st = State(self.dictionary)
            e.header(FLAG_STREAM)
            del e.out[:2]            # the sync marker replaces the magic
            e.out[0:0] = bytes([SYNC])
        e.encode_value(v)
        body = bytes(e.out)
        e.out.clear()
        framed = varint(len(body)) + body
        self.since_sync = (0 if sync else self.since_sync) + len(framed)
        self.frames += 1
        self.want_sync = False
        return framed


def encode_stream(values, dictionary: Dictionary | None = None, sync_frames=0, sync_bytes=0,
                  sync_before=()) -> bytes:
    """sync_before: indices of values that get a sync frame on request."""
    se = StreamEncoder(dictionary, sync_frames, sync_bytes)
    out = bytearray(se.header())
    for i, v in enumerate(values):
        if i in sync_before:
            se.sync()
        out += se.frame(v)
    return bytes(out)


# --------------------------------------------------------------------------
# Decoder (SPEC "Decoding" and "Errors")
# --------------------------------------------------------------------------


def check_utf8(b: bytes, offset: int):
    try:
        b.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise DecodeError("invalid_utf8", offset, "string is not valid UTF-8")


class Decoder:
    def __init__(self, data: bytes, dictionaries=(), max_depth=DEFAULT_MAX_DEPTH):
        self.data = bytes(data)
        self.pos = 0
        self.end = len(self.data)   # reads stop here (a stream frame's end)
        self.max_depth = max_depth
        self.dictionaries = {d.id: d for d in dictionaries}
        self.flags = 0
        self.st = None

    # -- primitive readers --------------------------------------------------
    def need(self, n: int, at: int):
        if self.pos + n > self.end:
            raise DecodeError("truncated", at, "input ends inside an item")

    def byte(self, at: int) -> int:
        self.need(1, at)
        b = self.data[self.pos]
        self.pos += 1
        return b

    def fixed(self, n: int, at: int) -> bytes:
        self.need(n, at)
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def varint(self, at: int) -> int:
        first = self.byte(at)
        if first == 0:
            n = int.from_bytes(self.fixed(8, at), "little")
            if n < 1 << 56:
                raise DecodeError("invalid_varint", at, "varint is not minimal")
            return n
        length = (first & -first).bit_length()
        rest = self.fixed(length - 1, at)
        n = int.from_bytes(bytes([first]) + rest, "little") >> length
        if length > 1 and n < 1 << (7 * (length - 1)):
            raise DecodeError("invalid_varint", at, "varint is not minimal")
        return n

    def length(self, at: int, bias: int = 0) -> int:
        """A byte length or an element count: never more than what remains."""
        n = self.varint(at) + bias
        if n > self.end - self.pos:
            raise DecodeError("length_exceeds_input", at, "length exceeds the remaining input")
        return n

    # -- header ------------------------------------------------------------
    def header(self, stream: bool):
        if self.data[:2] != MAGIC[:len(self.data[:2])]:
            raise DecodeError("bad_magic", 0, "not a Tersa buffer")
        if len(self.data) < 3:
            raise DecodeError("truncated", 0, "input ends inside the header")
        self.pos = 2
        self.vf_and_dictionary(stream, 2)

    def vf_and_dictionary(self, stream: bool, at: int):
        """The VF byte at self.pos and the dictionary id it announces; sets the state."""
        vf = self.byte(at)
        if vf >> 4 != VERSION:
            raise DecodeError("unsupported_version", at, f"version {vf >> 4}")
        self.flags = vf & 0x0F
        if self.flags & ~(FLAG_DICT | FLAG_STREAM):
            raise DecodeError("bad_flags", at, "reserved header flag set")
        # The flags byte comes before the dictionary id: its defects first (SPEC 10).
        if bool(self.flags & FLAG_STREAM) != stream:
            raise DecodeError("bad_flags", at, "not a stream buffer" if stream else "stream buffer: use decode_stream")
        self.vf = vf
        self.dictionary_id = None
        dictionary = None
        if self.flags & FLAG_DICT:
            did = int.from_bytes(self.fixed(8, at + 1), "little")
            dictionary = self.dictionaries.get(did)
            if dictionary is None:
                raise DecodeError("unknown_dictionary", at + 1, f"dictionary {did:016x} not supplied")
            self.dictionary_id = did
        self.dictionary = dictionary
        self.st = State(dictionary)

    def sync_frame(self, at: int):
        """The fields after a frame's SYNC byte at `at`: they must repeat the stream's."""
        self.pos = at + 1
        vf = self.byte(at + 1)
        if vf != self.vf:
            raise DecodeError("bad_sync", at + 1, "sync frame flags differ from the stream's")
        if self.flags & FLAG_DICT:
            did = int.from_bytes(self.fixed(8, at + 2), "little")
            if did != self.dictionary_id:
                raise DecodeError("bad_sync", at + 2, "sync frame names another dictionary")
        self.st = State(self.dictionary)

    # -- items -------------------------------------------------------------
    def value(self, slot: Slot, depth: int):
        at = self.pos
        if at >= self.end:
            raise DecodeError("truncated", at, "input ends before an item")
        t = self.data[at]
        self.pos += 1
        st = self.st
        if is_string_tag(t):
            return self.string_item(t, at, slot).decode("utf-8")
        if SHAPE0 <= t < ARR0 or t in (SHAPE8, SHAPE16, MAPDEF_LONG) or MAPDEF0 <= t < SMALLINT0:
            return self.shaped_map(t, at, depth)
        if ARR0 <= t < MAPDEF0 or t == ARR_LONG:
            self.check_depth(depth, at)
            n = t - ARR0 if t != ARR_LONG else self.length(at, N_ARR0)
            if t != ARR_LONG and n > self.end - self.pos:
                raise DecodeError("length_exceeds_input", at, "count exceeds the remaining input")
            return [self.value(slot, depth + 1) for _ in range(n)]
        if SMALLINT0 <= t < PFX0:
            n = t - SMALLINT0 + SMALLINT_MIN
            slot.int = n
            return n
        if DEC0 <= t < NULL or t in (DEC_X, DEC_DELTA):
            if t == DEC_DELTA:
                if slot.dec is None:
                    raise DecodeError("bad_reference", at, "decimal delta without a previous decimal")
                m, e = slot.dec[0] + unzigzag(self.varint(at)), slot.dec[1]
            else:
                if t == DEC_X:
                    e = self.byte(at)
                    e = e - 256 if e >= 128 else e
                    if not -22 <= e <= 22 or DEC_EMIN <= e <= DEC_EMAX:
                        raise DecodeError("invalid_value", at, "decimal exponent out of range")
                else:
                    e = t - DEC0 + DEC_EMIN
                m = unzigzag(self.varint(at))
            if abs(m) >= 1 << 53:
                raise DecodeError("invalid_value", at, "decimal mantissa out of range")
            slot.dec = (m, e)
            return decimal_to_float(m, e)
        if t == NULL:
            return None
        if t == FALSE:
            return False
        if t == TRUE:
            return True
        if t == F32:
            return widen_f32(int.from_bytes(self.fixed(4, at), "little"))
        if t == F64:
            return struct.unpack("<d", self.fixed(8, at))[0]
        if t in (INT_POS, INT_NEG, INT_DELTA):
            if t == INT_DELTA and slot.int is None:
                raise DecodeError("bad_reference", at, "integer delta without a previous integer")
            v = self.varint(at)
            if t == INT_POS:
                if v > UINT64_MAX - (SMALLINT_MAX + 1):
                    raise DecodeError("invalid_value", at, "integer out of range")
                n = v + SMALLINT_MAX + 1
            elif t == INT_NEG:
                n = SMALLINT_MIN - 1 - v
                if n < INT64_MIN:
                    raise DecodeError("invalid_value", at, "integer out of range")
            else:
                n = slot.int + unzigzag(v)
                if not INT64_MIN <= n <= INT64_MAX:
                    raise DecodeError("invalid_value", at, "integer delta overflows int64")
            if n <= INT64_MAX:
                slot.int = n
            return n
        if t in (BIGINT_POS, BIGINT_NEG):
            n = self.length(at)
            mag = int.from_bytes(self.fixed(n, at), "little")
            if n == 0 or self.data[self.pos - 1] == 0:
                raise DecodeError("invalid_value", at, "big integer magnitude not minimal")
            if (t == BIGINT_POS and mag <= UINT64_MAX) or (t == BIGINT_NEG and mag <= -INT64_MIN):
                raise DecodeError("invalid_value", at, "big integer fits a native form")
            return mag if t == BIGINT_POS else -mag
        if t == MAP_GEN:
            self.check_depth(depth, at)
            n = self.length(at)
            if 2 * n > self.end - self.pos:
                raise DecodeError("length_exceeds_input", at, "count exceeds the remaining input")
            pairs, seen = [], set()
            for _ in range(n):
                k = self.value(slot, depth + 1)
                if diag(k) in seen:
                    raise DecodeError("duplicate_key", at, "key repeated in a map")
                seen.add(diag(k))
                pairs.append((k, self.value(slot, depth + 1)))
            return self.generic_map(pairs)
        if t == BIN:
            n = self.length(at)
            return self.fixed(n, at)
        if t == EXT:
            typ = self.varint(at)
            if typ > MAX_EXT_TYPE:
                raise DecodeError("invalid_value", at, "extension type out of range")
            n = self.length(at)
            data = self.fixed(n, at)
            if typ <= MAX_APP_EXT_TYPE:
                return Ext(typ, data)
            try:
                return well_known_value(typ, data)
            except ValueError as e:
                raise DecodeError("invalid_value", at, str(e)) from None
        if t == SYMBOL:
            return Symbol(self.string_after_symbol(slot).decode("utf-8"))
        if t == TIME:
            return self.timestamp(at)
        raise DecodeError("invalid_tag", at, f"reserved tag 0x{t:02x}")

    def check_depth(self, depth: int, at: int):
        if depth >= self.max_depth:
            raise DecodeError("depth_exceeded", at, "nesting deeper than the limit")

    def string_after_symbol(self, slot: Slot) -> bytes:
        at = self.pos
        if at >= self.end:
            raise DecodeError("truncated", at, "input ends before an item")
        t = self.data[at]
        if not is_string_tag(t):
            raise DecodeError("expected_string", at, "a string item is required here")
        self.pos += 1
        return self.string_item(t, at, slot)

    def string_item(self, t: int, at: int, slot: Slot) -> bytes:
        st = self.st
        if t < STR0 or t in (REF8, REF16, REF24):
            if t < STR0:
                i = t
            elif t == REF8:
                i = REF8_BASE + self.byte(at)
            elif t == REF16:
                i = REF16_BASE + int.from_bytes(self.fixed(2, at), "little")
            else:
                i = REF24_BASE + int.from_bytes(self.fixed(3, at), "little")
            if i >= len(st.strings):
                raise DecodeError("bad_reference", at, f"string reference {i} beyond table")
            b = st.strings[i]
            st.note_string(slot, b)
            return b
        if STR0 <= t < SHAPE0 or t == STR_LONG:
            n = t - STR0 if t != STR_LONG else self.length(at, N_STR0)
            b = self.fixed(n, at)
            check_utf8(b, at)
        elif PFX0 <= t < DEC0 or t == PFX_LONG:
            lb = self.byte(at)
            base = st.last_str if lb & 0x80 else slot.str
            plen = lb & 0x7F
            if t == PFX_LONG:
                n = self.length(at, N_PFX0)
            else:
                n = t - PFX0
            if base is None or plen > len(base) or plen == 0 or not utf8_char_boundary(base, plen):
                raise DecodeError("bad_reference", at, "prefix does not fit its base string")
            suffix = self.fixed(n, at)
            b = base[:plen] + suffix
            check_utf8(b, at)
        else:
            b = self.ts_string(t, at)
        st.add_string(b)
        st.note_string(slot, b)
        return b

    def ts_seconds(self, at: int) -> int:
        s = self.st.last_ts + unzigzag(self.varint(at))
        if not MIN_SECONDS <= s <= MAX_SECONDS:
            raise DecodeError("invalid_value", at, "timestamp out of range")
        self.st.last_ts = s
        return s

    def ts_string(self, t: int, at: int) -> bytes:
        if t == TS_Z0:
            variant = 0
        elif t == TS_Z3:
            variant = 3
        else:
            variant = self.byte(at)
            if variant & 0x80 or (variant & 0x0F) > 9 or variant in (0, 3) \
                    or (variant & TSV_DATE_ONLY and variant != TSV_DATE_ONLY):
                raise DecodeError("invalid_value", at, "invalid timestamp-string variant")
        seconds = self.ts_seconds(at)
        digits = variant & 0x0F
        frac = self.varint(at) if digits else 0
        if frac >= 10 ** digits and digits:
            raise DecodeError("invalid_value", at, "fraction has too many digits")
        offset = 0
        if variant & TSV_NUMERIC_OFFSET:
            offset = unzigzag(self.varint(at))
            if not -MAX_OFFSET <= offset <= MAX_OFFSET:
                raise DecodeError("invalid_value", at, "offset out of range")
        if variant & TSV_DATE_ONLY and seconds % 86400:
            raise DecodeError("invalid_value", at, "date is not at midnight")
        text = render_ts_string(variant, seconds, frac, offset)
        if text is None:
            raise DecodeError("invalid_value", at, "local time out of range")
        return text

    def timestamp(self, at: int) -> Timestamp:
        flags = self.byte(at)
        zone = flags >> 1
        if zone > ZONE_FLOATING:
            raise DecodeError("invalid_value", at, "invalid timestamp flags")
        seconds = self.ts_seconds(at)
        nanos = 0
        if flags & 1:
            nanos = self.varint(at)
            if not 1 <= nanos <= 999_999_999:
                raise DecodeError("invalid_value", at, "nanoseconds out of range")
        offset = 0
        if zone == ZONE_OFFSET:
            offset = unzigzag(self.varint(at))
            if not -MAX_OFFSET <= offset <= MAX_OFFSET:
                raise DecodeError("invalid_value", at, "offset out of range")
            if not MIN_SECONDS <= seconds + offset * 60 <= MAX_SECONDS:
                raise DecodeError("invalid_value", at, "local time out of range")
        return Timestamp(seconds, nanos, zone, offset)

    def shaped_map(self, t: int, at: int, depth: int):
        st = self.st
        self.check_depth(depth, at)
        if SHAPE0 <= t < ARR0 or t in (SHAPE8, SHAPE16):
            if t == SHAPE8:
                i = SHAPE8_BASE + self.byte(at)
            elif t == SHAPE16:
                i = SHAPE16_BASE + int.from_bytes(self.fixed(2, at), "little")
            else:
                i = t - SHAPE0
            if i >= len(st.shapes):
                raise DecodeError("bad_reference", at, f"shape reference {i} beyond table")
            shape = st.shapes[i]
            if len(shape.keys) > self.end - self.pos:
                raise DecodeError("length_exceeds_input", at, "shape has more values than input remains")
        else:
            n = t - MAPDEF0 if t != MAPDEF_LONG else self.length(at, N_MAPDEF0)
            if 2 * n > self.end - self.pos:
                raise DecodeError("length_exceeds_input", at, "count exceeds the remaining input")
            keys = []
            seen = set()
            for _ in range(n):
                kat = self.pos
                if kat >= self.end:
                    raise DecodeError("truncated", kat, "input ends before an item")
                kt = self.data[kat]
                is_sym = kt == SYMBOL
                if is_sym:
                    self.pos += 1
                    kb = self.string_after_symbol(st.key_slot)
                else:
                    if not is_string_tag(kt):
                        raise DecodeError("expected_string", kat, "a map key must be a string or symbol")
                    self.pos += 1
                    kb = self.string_item(kt, kat, st.key_slot)
                if (is_sym, kb) in seen:
                    raise DecodeError("duplicate_key", kat, "key repeated in a shape")
                seen.add((is_sym, kb))
                keys.append((is_sym, kb))
            shape = st.add_shape(tuple(keys))
        out = {}
        for (is_sym, kb), slot in zip(shape.keys, shape.slots):
            k = Symbol(kb.decode("utf-8")) if is_sym else kb.decode("utf-8")
            out[k] = self.value(slot, depth + 1)
        return out

    def generic_map(self, pairs):
        if all(isinstance(k, (str, Symbol)) for k, _ in pairs):
            return dict(pairs)
        return Map(pairs)

    # -- top level ---------------------------------------------------------
    def decode(self):
        self.header(stream=False)
        v = self.value(self.st.root, 0)
        if self.pos != len(self.data):
            raise DecodeError("trailing_bytes", self.pos, "bytes after the value")
        return v

    def decode_stream(self):
        self.header(stream=True)
        return self.frames()

    def join_stream(self):
        """Frames from a frame boundary, without a header: skip to the first sync frame.

        Returns (offset of that frame's length, values from it on), or (None, []).
        """
        self.pos = 0
        while self.pos < len(self.data):
            start = self.pos
            n = self.length(start)
            if n == 0:
                raise DecodeError("invalid_value", start, "empty stream frame")
            if self.data[self.pos] == SYNC:
                at = self.pos
                self.end = self.pos + n
                self.pos = at + 1
                self.vf_and_dictionary(True, at + 1)
                self.end = len(self.data)
                self.pos = start
                return start, self.frames()
            self.pos += n
        return None, []

    def frames(self):
        values = []
        first = True
        while self.pos < len(self.data):
            at = self.pos
            n = self.length(at)
            if n == 0:
                raise DecodeError("invalid_value", at, "empty stream frame")
            self.end = self.pos + n
            if self.data[self.pos] == SYNC:
                self.sync_frame(self.pos)
            elif first:
                raise DecodeError("out_of_sequence", self.pos,
                                  "the stream's first frame is not a sync frame")
            first = False
            v = self.value(self.st.root, 0)
            if self.pos != self.end:
                raise DecodeError("trailing_bytes", self.pos, "bytes after the value in its frame")
            self.end = len(self.data)
            values.append(v)
        return values


def is_string_tag(t: int) -> bool:
    return (t < SHAPE0 or t in (STR_LONG, REF8, REF16, REF24, PFX_LONG, TS_STR, TS_Z0, TS_Z3)
            or PFX0 <= t < DEC0)


def decode(data: bytes, dictionaries=(), max_depth=DEFAULT_MAX_DEPTH):
    return Decoder(data, dictionaries, max_depth).decode()


def decode_stream(data: bytes, dictionaries=(), max_depth=DEFAULT_MAX_DEPTH):
    return Decoder(data, dictionaries, max_depth).decode_stream()


def join_stream(data: bytes, dictionaries=(), max_depth=DEFAULT_MAX_DEPTH):
    """Decode frames that start at a frame boundary mid-stream (SPEC 2.3 "Joining")."""
    return Decoder(data, dictionaries, max_depth).join_stream()


# --------------------------------------------------------------------------
# Diagnostic notation (spec/vectors/README.md "Diagnostic notation")
# --------------------------------------------------------------------------

CANONICAL_NAN = 0x7FF8000000000000


def diag_float(d: float) -> str:
    if math.isnan(d):
        bits = f64_bits(d)
        return "NaN" if bits == CANONICAL_NAN else f"NaN(0x{bits:016x})"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    # Shortest round-trip digits, laid out the same way in every language:
    # fixed notation for 1e-5 <= |d| < 1e16, otherwise d.ddde[+-]x.
    negative, digits, e = shortest_digits(d)
    point = len(digits) + e          # |d| == 0.<digits> * 10**point
    if -4 <= point <= 16:
        if point <= 0:
            text = "0." + "0" * -point + digits
        elif point >= len(digits):
            text = digits + "0" * (point - len(digits)) + ".0"
        else:
            text = digits[:point] + "." + digits[point:]
    else:
        exp = point - 1
        text = digits[0] + "." + (digits[1:] or "0") + "e" + ("+" if exp >= 0 else "-") + str(abs(exp))
    sign = "-" if negative else ""
    return sign + text


def diag_str(s: str) -> str:
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif c < 0x20 or c == 0x7F:
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def diag_time(t: Timestamp) -> str:
    local = t.seconds + (t.offset * 60 if t.zone == ZONE_OFFSET else 0)
    days, secs = divmod(local, 86400)
    y, mo, d = civil_from_days(days)
    s = f"{y:04d}-{mo:02d}-{d:02d}T{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
    if t.nanos:
        s += "." + f"{t.nanos:09d}".rstrip("0")
    if t.zone == ZONE_UTC:
        s += "Z"
    elif t.zone == ZONE_OFFSET:
        o = t.offset
        s += ("-" if o < 0 else "+") + f"{abs(o) // 60:02d}:{abs(o) % 60:02d}"
    return f'time("{s}")'


def diag(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return diag_float(v)
    if isinstance(v, str):
        return diag_str(v)
    if isinstance(v, Symbol):
        return "sym(" + diag_str(v.name) + ")"
    if isinstance(v, (bytes, bytearray)):
        return "h'" + bytes(v).hex() + "'"
    if isinstance(v, Timestamp):
        return diag_time(v)
    if isinstance(v, Ext):
        return f"ext({v.type}, h'{v.data.hex()}')"
    if isinstance(v, decimal.Decimal):
        return f'decimal("{decimal_text(v)}")'
    if isinstance(v, datetime.time):
        return f'time_of_day("{time_of_day_text(v)}")'
    if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
        return f'date("{v.isoformat()}")'
    if isinstance(v, uuid.UUID):
        return f'uuid("{v}")'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(diag(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(diag(k) + ": " + diag(x) for k, x in v.items()) + "}"
    if isinstance(v, Map):
        return "{" + ", ".join(diag(k) + ": " + diag(x) for k, x in v.pairs) + "}"
    raise TypeError(type(v))


# --------------------------------------------------------------------------
# Extended JSON used by the vector files (spec/vectors/README.md)
# --------------------------------------------------------------------------

INT_LIKE = re.compile(r"-?(0|[1-9][0-9]*)")


def to_xjson(v):
    if v is None or isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, int):
        return v if -(1 << 53) < v < (1 << 53) else {"$int": str(v)}
    if isinstance(v, float):
        return {"$float": diag_float(v)}
    if isinstance(v, Symbol):
        return {"$symbol": v.name}
    if isinstance(v, (bytes, bytearray)):
        return {"$binary": bytes(v).hex()}
    if isinstance(v, Timestamp):
        o = {"$time": {"seconds": v.seconds, "nanos": v.nanos,
                       "zone": ("utc", "offset", "floating")[v.zone]}}
        if v.zone == ZONE_OFFSET:
            o["$time"]["offset"] = v.offset
        return o
    if isinstance(v, Ext):
        return {"$ext": {"type": v.type, "data": v.data.hex()}}
    if isinstance(v, decimal.Decimal):
        return {"$decimal": decimal_text(v)}
    if isinstance(v, datetime.time):
        return {"$time_of_day": time_of_day_text(v)}
    if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
        return {"$date": v.isoformat()}
    if isinstance(v, uuid.UUID):
        return {"$uuid": str(v)}
    if isinstance(v, (list, tuple)):
        return [to_xjson(x) for x in v]
    if isinstance(v, dict) and all(isinstance(k, str) and not k.startswith("$")
                                   and not INT_LIKE.fullmatch(k) for k in v):
        return {k: to_xjson(x) for k, x in v.items()}
    pairs = v.items() if isinstance(v, dict) else v.pairs
    return {"$map": [[to_xjson(k), to_xjson(x)] for k, x in pairs]}


def parse_diag_float(s: str) -> float:
    if s == "NaN":
        return struct.unpack("<d", CANONICAL_NAN.to_bytes(8, "little"))[0]
    if s.startswith("NaN(0x"):
        return struct.unpack("<d", int(s[6:-1], 16).to_bytes(8, "little"))[0]
    if s == "Infinity":
        return math.inf
    if s == "-Infinity":
        return -math.inf
    return float(s)


def from_xjson(j):
    if j is None or isinstance(j, (bool, int, str)):
        return j
    if isinstance(j, float):
        raise ValueError("plain JSON floats are not allowed in vectors; use $float")
    if isinstance(j, list):
        return [from_xjson(x) for x in j]
    if len(j) == 1:
        (k, x), = j.items()
        if k == "$int":
            return int(x)
        if k == "$float":
            return parse_diag_float(x)
        if k == "$symbol":
            return Symbol(x)
        if k == "$binary":
            return bytes.fromhex(x)
        if k == "$time":
            zone = ("utc", "offset", "floating").index(x["zone"])
            return Timestamp(x["seconds"], x["nanos"], zone, x.get("offset", 0))
        if k == "$ext":
            return Ext(x["type"], bytes.fromhex(x["data"]))
        if k == "$decimal":
            return decimal.Decimal(x)
        if k == "$date":
            return datetime.date.fromisoformat(x)
        if k == "$uuid":
            return uuid.UUID(x)
        if k == "$time_of_day":
            return datetime.time.fromisoformat(x)
        if k == "$map":
            pairs = [(from_xjson(a), from_xjson(b)) for a, b in x]
            if all(isinstance(a, (str, Symbol)) for a, _ in pairs):
                return dict(pairs)
            return Map(pairs)
    return {k: from_xjson(x) for k, x in j.items()}
