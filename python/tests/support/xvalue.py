"""The extended JSON of spec/vectors/README.md read as Python values: the one
conversion the tests (conftest.py) and the crossfuzz harness (harness.py) use."""

from __future__ import annotations

import datetime
import decimal
import struct
import uuid

import tersa

ZONES = {"utc": tersa.ZONE_UTC, "offset": tersa.ZONE_OFFSET, "floating": tersa.ZONE_FLOATING}


def parse_float(text: str) -> float:
    if text == "NaN":
        return struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000000))[0]
    if text.startswith("NaN(0x"):
        return struct.unpack("<d", struct.pack("<Q", int(text[6:-1], 16)))[0]
    if text == "Infinity":
        return float("inf")
    if text == "-Infinity":
        return float("-inf")
    return float(text)


def make_map(pairs, key: bool = False):
    # A dict merges keys Python thinks equal (1, 1.0, True; a Symbol and the
    # str of its text) and cannot hold unhashable keys: tersa.Map keeps them.
    if key:
        return tersa.Map(pairs)
    try:
        d = dict(pairs)
    except TypeError:
        return tersa.Map(pairs)
    return d if len(d) == len(pairs) else tersa.Map(pairs)


def from_x(x, key: bool = False):
    """The Python value of an extended-JSON value. In key position arrays are
    tuples and maps tersa.Map (as loads() gives them); a map Python cannot
    hold as a dict becomes a tersa.Map."""
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, list):
        items = [from_x(i, key) for i in x]
        return tuple(items) if key else items
    assert isinstance(x, dict)
    if len(x) == 1:
        ((k, v),) = x.items()
        if k == "$int":
            return int(v)
        if k == "$float":
            return parse_float(v)
        if k == "$symbol":
            return tersa.Symbol(v)
        if k == "$binary":
            return bytes.fromhex(v)
        if k == "$time":
            return tersa.Timestamp(v["seconds"], v.get("nanos", 0), ZONES[v["zone"]], v.get("offset", 0))
        if k == "$ext":
            return tersa.Ext(v["type"], bytes.fromhex(v["data"]))
        if k == "$decimal":
            return decimal.Decimal(v)
        if k == "$date":
            return datetime.date.fromisoformat(v)
        if k == "$uuid":
            return uuid.UUID(v)
        if k == "$time_of_day":
            return datetime.time.fromisoformat(v)
        if k == "$map":
            return make_map([(from_x(a, True), from_x(b, key)) for a, b in v], key)
    return make_map([(k, from_x(v, key)) for k, v in x.items()], key)
