"""The seed and large corpora (spec/vectors/corpus/manifest.json): parsing
each JSON document with the standard json module (1.0 stays a float, key
order is kept) and encoding it gives exactly the canonical bytes; decoding
those bytes gives the document back."""

from __future__ import annotations

import hashlib
import json
import lzma

import pytest

import tersa
from conftest import REPO, load_json, require_vectors, same

MANIFEST = load_json(require_vectors() / "corpus" / "manifest.json")["documents"]


def _read(path: str) -> bytes:
    data = (REPO / path).read_bytes()
    return lzma.decompress(data) if path.endswith(".xz") else data


@pytest.mark.parametrize("doc", MANIFEST, ids=[d["name"] for d in MANIFEST])
def test_corpus_document(doc):
    value = json.loads(_read(doc["json"]))
    expected = _read(doc["tersa"])
    assert len(expected) == doc["tersa_bytes"]
    assert hashlib.sha256(expected).hexdigest() == doc["tersa_sha256"]
    encoded = tersa.dumps(value)
    assert len(encoded) == len(expected)
    assert encoded == expected
    assert same(tersa.loads(expected), value)
    # bytearray and memoryview inputs decode identically
    assert same(tersa.loads(bytearray(expected)), value)
    assert same(tersa.loads(memoryview(expected)), value)


def test_manifest_covers_both_kinds():
    kinds = {d["kind"] for d in MANIFEST}
    assert kinds == {"seed", "large"}
    assert sum(d["kind"] == "seed" for d in MANIFEST) == 11
