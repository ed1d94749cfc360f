"""Shared helpers: locating the repository's spec/vectors and corpora, and
converting the vectors' extended JSON values (spec/vectors/README.md)."""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import pytest

import tersa
from tersa._types import _tersa_key

from support.xvalue import from_x, make_map  # noqa: F401 (tests import them from here)

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


def same(a, b) -> bool:
    """Equal as Tersa values (types, float bits, map order)."""
    return _tersa_key(a) == _tersa_key(b)


def as_tuples(value):
    """The same value with every list a tuple (tuples are written item by item)."""
    if isinstance(value, list):
        return tuple(as_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: as_tuples(v) for k, v in value.items()}
    return value


def fed(dec: tersa.Decoder, data: bytes, step: int) -> list:
    """The values `dec` gives for `data` fed in pieces of `step` bytes, taken
    after every piece, then close()."""
    values: list = []
    for i in range(0, len(data), step):
        dec.feed(data[i : i + step])
        values.extend(dec)
    dec.close()
    return values


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
