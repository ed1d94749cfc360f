"""Pure-Python value types and exceptions of the tersa package.

The C extension (tersa._tersa) imports this module at load time and creates
these objects when decoding; keep the constructors' signatures stable.
"""

from __future__ import annotations

import datetime as _dt
import sys as _sys
import uuid as _uuid

__all__ = [
    "Symbol",
    "Ext",
    "Timestamp",
    "Map",
    "DecodeError",
    "EncodeError",
    "ZONE_UTC",
    "ZONE_OFFSET",
    "ZONE_FLOATING",
]

ZONE_UTC = 0
ZONE_OFFSET = 1
ZONE_FLOATING = 2

_MIN_SECONDS = -62135596800  # 0001-01-01T00:00:00Z
_MAX_SECONDS = 253402300799  # 9999-12-31T23:59:59Z
_EPOCH = _dt.datetime(1970, 1, 1)


class DecodeError(ValueError):
    """Raised by loads() and Decoder on malformed input.

    ``code`` is the error name of SPEC section 10 ("truncated",
    "bad_reference", ...), or one of the binding's own codes for valid
    buffers Python cannot represent ("duplicate_key" for keys Python considers
    equal, "unhashable_key" for a map used as a map key, "stream_broken" from
    a Decoder whose stream an earlier exception interrupted). ``offset`` is the
    byte offset the SPEC assigns to the error.
    """

    def __init__(self, message: str, code: str = "invalid_value", offset: int = 0):
        super().__init__(message)
        self.code = code
        self.offset = offset

    def __reduce__(self):
        return (type(self), (self.args[0] if self.args else "", self.code, self.offset))


class EncodeError(TypeError):
    """Raised by dumps() and Encoder for values Tersa cannot represent.

    The message names the offending type and its path in the value
    (``$[3]["user"]``); ``path`` holds that path alone.
    """

    def __init__(self, message: str, path: str = "$"):
        super().__init__(message)
        self.path = path

    def __reduce__(self):
        return (type(self), (self.args[0] if self.args else "", self.path))


class Symbol(str):
    """A Tersa symbol (Ruby's Symbol): a str subclass.

    A Symbol compares and hashes like the str of the same text, so
    ``d["id"]`` finds a key decoded from the symbol ``:id``; only its type
    records that it encodes back as a symbol.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Symbol({str.__repr__(self)})"

    def __reduce__(self):
        return (Symbol, (str(self),))


class Ext:
    """An extension value: an application-chosen type 0..65535 and opaque bytes."""

    __slots__ = ("type", "data")
    type: int
    data: bytes

    def __init__(self, type: int, data: bytes):
        if not isinstance(type, int) or isinstance(type, bool) or not 0 <= type <= 65535:
            raise ValueError("extension type must be an int in 0..65535")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "data", bytes(data))

    def __setattr__(self, name, value):
        raise AttributeError("Ext is immutable")

    def __eq__(self, other):
        if type(other) is not Ext:
            return NotImplemented
        return self.type == other.type and self.data == other.data

    def __hash__(self):
        return hash((Ext, self.type, self.data))

    def __repr__(self):
        return f"Ext({self.type}, {self.data!r})"

    def __reduce__(self):
        return (Ext, (self.type, self.data))


class Map:
    """A map that a Python dict cannot hold, as an ordered tuple of (key, value) pairs.

    loads() returns a Map (instead of a dict) for the rare valid maps whose keys
    Python considers equal although Tersa does not (a symbol and a string of the
    same text, or 1, 1.0 and True), and for maps used as map keys (inside keys,
    arrays decode to tuples and maps to Maps, so that keys are hashable).
    dumps() writes a Map as a map with these pairs, in order, so every Tersa
    value round-trips exactly.
    """

    __slots__ = ("pairs",)
    pairs: tuple

    def __init__(self, pairs=()):
        if isinstance(pairs, dict):
            pairs = pairs.items()
        items = []
        for pair in pairs:
            k, v = pair
            items.append((k, v))
        object.__setattr__(self, "pairs", tuple(items))

    def __setattr__(self, name, value):
        raise AttributeError("Map is immutable")

    def __len__(self):
        return len(self.pairs)

    def __iter__(self):
        return iter(self.pairs)

    def keys(self):
        return [k for k, _ in self.pairs]

    def values(self):
        return [v for _, v in self.pairs]

    def items(self):
        return list(self.pairs)

    def __eq__(self, other):
        if type(other) is not Map:
            return NotImplemented
        return _tersa_key(self) == _tersa_key(other)

    def __hash__(self):
        # From the same rendering as __eq__, so equal Maps hash equal (NaN
        # keys by bits) and a deep Map hashes without recursion.
        return hash((Map, _tersa_key(self)))

    def __repr__(self):
        return f"Map({list(self.pairs)!r})"

    def __reduce__(self):
        return (Map, (self.pairs,))


def _days_to_civil(z: int):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


class Timestamp:
    """A Tersa timestamp: (seconds, nanos, zone, offset).

    ``seconds`` counts from 1970-01-01T00:00:00Z (for a floating timestamp,
    as if the wall clock were UTC); ``nanos`` is 0..999999999; ``zone`` is
    ZONE_UTC, ZONE_OFFSET (``offset`` minutes east of UTC, -1439..1439) or
    ZONE_FLOATING. loads() returns datetime objects for timestamps a
    datetime holds exactly and Timestamp for the others (nanoseconds that
    are not whole microseconds), or always with OPT_TIMESTAMP.
    """

    __slots__ = ("seconds", "nanos", "zone", "offset")
    seconds: int
    nanos: int
    zone: int
    offset: int

    def __init__(self, seconds: int, nanos: int = 0, zone: int = ZONE_UTC, offset: int = 0):
        if isinstance(seconds, bool) or not isinstance(seconds, int):
            raise TypeError("seconds must be an int")
        if isinstance(nanos, bool) or not isinstance(nanos, int) or not 0 <= nanos <= 999_999_999:
            raise ValueError("nanos must be an int in 0..999999999")
        if zone not in (ZONE_UTC, ZONE_OFFSET, ZONE_FLOATING):
            raise ValueError("zone must be ZONE_UTC, ZONE_OFFSET or ZONE_FLOATING")
        if zone != ZONE_OFFSET:
            if offset:
                raise ValueError("offset is only meaningful with ZONE_OFFSET")
        elif isinstance(offset, bool) or not isinstance(offset, int) or not -1439 <= offset <= 1439:
            raise ValueError("offset must be an int in -1439..1439 (minutes)")
        local = seconds + (offset * 60 if zone == ZONE_OFFSET else 0)
        if not (_MIN_SECONDS <= seconds <= _MAX_SECONDS and _MIN_SECONDS <= local <= _MAX_SECONDS):
            raise ValueError("timestamp outside years 0001-9999")
        object.__setattr__(self, "seconds", seconds)
        object.__setattr__(self, "nanos", nanos)
        object.__setattr__(self, "zone", zone)
        object.__setattr__(self, "offset", offset)

    def __setattr__(self, name, value):
        raise AttributeError("Timestamp is immutable")

    def _key(self):
        return (self.seconds, self.nanos, self.zone, self.offset)

    def __eq__(self, other):
        if type(other) is not Timestamp:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash((Timestamp,) + self._key())

    def __repr__(self):
        z = {ZONE_UTC: "ZONE_UTC", ZONE_OFFSET: "ZONE_OFFSET", ZONE_FLOATING: "ZONE_FLOATING"}[self.zone]
        extra = f", offset={self.offset}" if self.zone == ZONE_OFFSET else ""
        return f"Timestamp({self.seconds}, nanos={self.nanos}, zone={z}{extra})"

    def __reduce__(self):
        return (Timestamp, self._key())

    @property
    def tzinfo(self):
        """The datetime tzinfo of this zone (None for a floating timestamp)."""
        if self.zone == ZONE_UTC:
            return _dt.timezone.utc
        if self.zone == ZONE_OFFSET:
            return _offset_tz(self.offset)
        return None

    def isoformat(self) -> str:
        """ISO 8601 text of the local wall time, nanoseconds without trailing zeros."""
        local = self.seconds + (self.offset * 60 if self.zone == ZONE_OFFSET else 0)
        days, sod = divmod(local, 86400)
        y, m, d = _days_to_civil(days)
        text = f"{y:04d}-{m:02d}-{d:02d}T{sod // 3600:02d}:{sod // 60 % 60:02d}:{sod % 60:02d}"
        if self.nanos:
            text += "." + f"{self.nanos:09d}".rstrip("0")
        if self.zone == ZONE_UTC:
            text += "Z"
        elif self.zone == ZONE_OFFSET:
            sign = "-" if self.offset < 0 else "+"
            a = abs(self.offset)
            text += f"{sign}{a // 60:02d}:{a % 60:02d}"
        return text

    def to_datetime(self) -> _dt.datetime:
        """The datetime of this timestamp; raises ValueError if the nanoseconds
        are not whole microseconds (a datetime cannot hold them)."""
        if self.nanos % 1000:
            raise ValueError("nanoseconds are not whole microseconds")
        local = self.seconds + (self.offset * 60 if self.zone == ZONE_OFFSET else 0)
        days, sod = divmod(local, 86400)
        y, m, d = _days_to_civil(days)
        return _dt.datetime(y, m, d, sod // 3600, sod // 60 % 60, sod % 60, self.nanos // 1000, tzinfo=self.tzinfo)

    @classmethod
    def from_datetime(cls, value: _dt.datetime, nanos: int | None = None) -> "Timestamp":
        """The timestamp dumps() writes for ``value`` (naive: floating; tzinfo
        datetime.timezone.utc: UTC; any other tzinfo: its offset in minutes).
        ``nanos`` replaces the microseconds when given."""
        off = value.utcoffset()
        local = value.replace(tzinfo=None)
        delta = local - _EPOCH
        secs = delta.days * 86400 + delta.seconds
        ns = delta.microseconds * 1000 if nanos is None else nanos
        if off is None:
            return cls(secs, ns, ZONE_FLOATING)
        if value.tzinfo is _dt.timezone.utc:
            return cls(secs, ns, ZONE_UTC)
        total = off.days * 86400 + off.seconds
        if off.microseconds or total % 60:
            raise ValueError("UTC offsets must be whole minutes")
        return cls(secs - total, ns, ZONE_OFFSET, total // 60)


_tz_cache: dict = {}


def _offset_tz(minutes: int):
    """The tzinfo the decoder gives offset timestamps: a fixed offset, named
    like "+05:30"; offset 0 keeps the name "+00:00" so that it stays distinct
    from datetime.timezone.utc (Tersa's UTC zone) and round-trips as an offset."""
    tz = _tz_cache.get(minutes)
    if tz is None:
        sign = "-" if minutes < 0 else "+"
        a = abs(minutes)
        tz = _dt.timezone(_dt.timedelta(minutes=minutes), f"{sign}{a // 60:02d}:{a % 60:02d}")
        _tz_cache[minutes] = tz
    return tz


def _tersa_scalar_key(k):
    import struct

    if isinstance(k, Symbol):
        return ("y", str(k))
    if isinstance(k, str):
        return ("s", str(k))
    if k is None:
        return ("n",)
    if isinstance(k, bool):
        return ("b", k)
    if isinstance(k, int):
        return ("i", int(k))
    if isinstance(k, float):
        return ("f", struct.pack("<d", k))
    if isinstance(k, (bytes, bytearray, memoryview)):
        return ("x", bytes(k))
    if isinstance(k, Timestamp):
        return ("t", k._key())
    if isinstance(k, _dt.datetime):
        try:
            return ("t", Timestamp.from_datetime(k)._key())
        except ValueError:
            return ("o", id(k))
    if isinstance(k, _dt.date):
        return ("D", k.toordinal())
    if isinstance(k, _dt.time) and k.tzinfo is None:
        return ("T", k.hour, k.minute, k.second, k.microsecond)
    if isinstance(k, _uuid.UUID):
        return ("u", k.int)
    dec = _sys.modules.get("decimal")
    if dec is not None and isinstance(k, dec.Decimal):
        # As a Tersa value: 1.0 and 1.00 differ, -0 and 0 differ, NaN is one value.
        return ("d", "NaN") if k.is_qnan() and not k.is_signed() else ("d", k.as_tuple())
    if isinstance(k, Ext):
        return ("e", k.type, k.data)
    return ("o", id(k))


def _tersa_key(k) -> tuple:
    """A hashable rendering of a value that is equal for equal Tersa values
    (same type and same value: 1, 1.0 and True differ; floats by bits; map
    order matters): a flat pre-order sequence of tokens, so that neither
    building nor comparing it recurses, however deep the value."""
    out = []
    work = [k]
    while work:
        v = work.pop()
        if isinstance(v, (list, tuple)):
            out.append(("a", len(v)))
            work.extend(reversed(v))
        elif isinstance(v, (dict, Map)):
            pairs = list(v.items()) if isinstance(v, dict) else list(v.pairs)
            out.append(("m", len(pairs)))
            for a, b in reversed(pairs):
                work.append(b)
                work.append(a)
        else:
            out.append(_tersa_scalar_key(v))
    return tuple(out)


def _sample_buffers(samples) -> list:
    """Each sample's encoding, for the C core's dictionary builder (Dictionary.build)."""
    from . import dumps  # the package's, at call time: _types loads first

    return [dumps(s) for s in samples]
