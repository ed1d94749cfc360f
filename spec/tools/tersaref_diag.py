"""Tersa v1 reference codec: diagnostic notation and the extended JSON of the
vector files (spec/vectors/README.md).

Part of the reference codec; tersaref.py re-exports every name.
"""

from __future__ import annotations

import math
import re
import struct

from tersaref_model import *  # noqa: F401,F403 (the data model and constants)

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
