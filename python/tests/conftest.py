"""Shared helpers: locating the repository's spec/vectors and corpora, and
converting the vectors' extended JSON values (spec/vectors/README.md)."""

from __future__ import annotations

import datetime
import decimal
import functools
import json
import os
import struct
import sys
import uuid
from pathlib import Path

import pytest

import tersa
from tersa._types import _tersa_key

sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))

REPO = Path(os.environ.get("TERSA_REPO", Path(__file__).resolve().parents[2]))
SPEC = REPO / "spec"
VECTORS = SPEC / "vectors"
CORPUS = REPO / "bench" / "corpus"


def require_vectors() -> Path:
    """The vectors directory; raising (never skipping) when it is missing."""
    if not VECTORS.is_dir() or not any((VECTORS / "valid").glob("*.json")):
        raise RuntimeError(
            f"conformance vectors not found at {VECTORS} (set TERSA_REPO to the repository root)"
        )
    return VECTORS


def load_json(path: Path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


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


ZONES = {"utc": tersa.ZONE_UTC, "offset": tersa.ZONE_OFFSET, "floating": tersa.ZONE_FLOATING}


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


def make_map(pairs, key: bool = False):
    if key:
        return tersa.Map(pairs)
    try:
        d = dict(pairs)
    except TypeError:
        return tersa.Map(pairs)
    return d if len(d) == len(pairs) else tersa.Map(pairs)


def same(a, b) -> bool:
    """Equal as Tersa values (types, float bits, map order)."""
    return _tersa_key(a) == _tersa_key(b)


@functools.lru_cache(maxsize=None)
def dictionaries() -> dict:
    """name -> (tersa.Dictionary, expected id) from spec/vectors/dictionaries.json."""
    out = {}
    for name, spec in load_json(require_vectors() / "dictionaries.json")["dictionaries"].items():
        if "generate" in spec:
            g = spec["generate"]
            d = tersa.Dictionary([f"s{i}" for i in range(g["strings"])], [[f"k{i}"] for i in range(g["shapes"])])
        else:
            d = tersa.Dictionary([from_x(s) for s in spec["strings"]], [[from_x(k) for k in sh] for sh in spec["shapes"]])
        out[name] = (d, int(spec["id"], 16), spec)
    return out


def dictionary_for(vector):
    name = vector.get("dictionary")
    return dictionaries()[name][0] if name else None


@pytest.fixture
def vectors_dir():
    return require_vectors()
