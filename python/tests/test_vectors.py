"""Every conformance vector of spec/vectors: valid (decode, canonical
encode, non-canonical), streams (with their sync options), joins, must-fail
inputs (single values, streams and joins) and dictionaries."""

from __future__ import annotations

import pytest

import tersa
from conftest import dictionaries, dictionary_for, fed, from_x, load_json, require_vectors, same

VECTORS = require_vectors()  # a missing vectors directory is a collection error, never a skip


# The keys each kind of vector may have (spec/vectors/README.md): a key this
# runner does not know is an error, so that a new option is never ignored.
COMMON = {"name", "hex", "note", "dictionary"}
KEYS = {
    "valid": COMMON | {"value", "diag", "canonical", "canonical_hex"},
    "stream": COMMON | {"stream", "values", "diags", "canonical", "sync_frames", "sync_bytes", "sync_before"},
    "join": COMMON | {"join", "joined_at", "values", "diags"},
    "fail": COMMON | {"error", "offset", "stream", "join", "max_depth"},
}


def _kind(v) -> str:
    if "error" in v:
        kind = "fail"
    elif v.get("join"):
        kind = "join"
    elif v.get("stream"):
        kind = "stream"
    else:
        kind = "valid"
    unknown = set(v) - KEYS[kind]
    if unknown:
        raise RuntimeError(f"vector {v['name']!r}: keys this runner does not handle: {sorted(unknown)}")
    return kind


def _collect():
    kinds = {"valid": [], "stream": [], "join": [], "fail": []}
    for path in sorted((VECTORS / "valid").glob("*.json")):
        for v in load_json(path)["vectors"]:
            kinds[_kind(v)].append(pytest.param(v, id=f"{path.stem}: {v['name']}"))
    for v in load_json(VECTORS / "invalid" / "invalid.json")["vectors"]:
        kinds[_kind(v)].append(pytest.param(v, id=v["name"]))
    return kinds["valid"], kinds["stream"], kinds["join"], kinds["fail"]


VALID, STREAMS, JOINS, INVALID = _collect()


def test_vector_counts():
    # Guard against a runner that silently collects nothing (spec/vectors/README.md
    # announces 570 valid vectors, streams and joins included, and 182 must-fail ones).
    assert len(VALID) + len(STREAMS) + len(JOINS) >= 570
    assert len(STREAMS) >= 13
    assert sum(1 for v in STREAMS if {"sync_frames", "sync_bytes", "sync_before"} & set(v.values[0])) >= 7
    assert len(JOINS) >= 11
    assert len(INVALID) >= 182
    assert sum(1 for v in INVALID if v.values[0].get("join")) >= 8


def same_list(got, expected) -> bool:
    return len(got) == len(expected) and all(same(a, b) for a, b in zip(got, expected))


@pytest.mark.parametrize("vector", VALID)
def test_valid_decode(vector):
    data = bytes.fromhex(vector["hex"])
    got = tersa.loads(data, dictionaries=dictionary_for(vector))
    assert same(got, from_x(vector["value"])), got


@pytest.mark.parametrize("vector", VALID)
def test_valid_encode(vector):
    value = from_x(vector["value"])
    expected = vector["hex"] if vector["canonical"] else vector["canonical_hex"]
    assert tersa.dumps(value, dictionary=dictionary_for(vector)).hex() == expected


@pytest.mark.parametrize("vector", STREAMS)
def test_stream_decode(vector):
    data = bytes.fromhex(vector["hex"])
    expected = [from_x(v) for v in vector["values"]]
    got = tersa.loads_stream(data, dictionaries=dictionary_for(vector))
    assert same_list(got, expected)
    # Incrementally, one byte at a time.
    dec = tersa.Decoder(dictionaries=dictionary_for(vector))
    assert same_list(fed(dec, data, 1), expected)
    assert dec.joined_at is None


@pytest.mark.parametrize("vector", STREAMS)
def test_stream_encode(vector):
    values = [from_x(v) for v in vector["values"]]
    sync = {"sync_frames": vector.get("sync_frames", 0), "sync_bytes": vector.get("sync_bytes", 0)}
    sync_before = set(vector.get("sync_before", ()))
    enc = tersa.Encoder(dictionary=dictionary_for(vector), **sync)
    parts = []
    for i, v in enumerate(values):
        if i in sync_before:
            enc.sync()
        parts.append(enc.write(v))
    out = b"".join(parts) if values else enc.header()
    assert out.hex() == vector["hex"]
    if not sync_before:  # (dumps_stream has no per-value requests; the Encoder above covers them)
        assert tersa.dumps_stream(values, dictionary=dictionary_for(vector), **sync).hex() == vector["hex"]


@pytest.mark.parametrize("vector", JOINS)
def test_join(vector):
    data = bytes.fromhex(vector["hex"])
    expected = [from_x(v) for v in vector["values"]]
    dictionary = dictionary_for(vector)
    assert same_list(tersa.loads_stream(data, dictionaries=dictionary, join=True), expected)
    joined_at, values = tersa.join_stream(data, dictionaries=dictionary)
    assert joined_at == vector["joined_at"]
    assert same_list(values, expected)
    for step in (1, len(data) or 1):
        dec = tersa.Decoder(dictionaries=dictionary, join=True)
        assert same_list(fed(dec, data, step), expected), step
        assert dec.joined_at == vector["joined_at"], step


def _kwargs(vector):
    kwargs = {"dictionaries": dictionary_for(vector)}
    if "max_depth" in vector:
        kwargs["max_depth"] = vector["max_depth"]
    return kwargs


@pytest.mark.parametrize("vector", INVALID)
def test_invalid(vector):
    data = bytes.fromhex(vector["hex"])
    kwargs = _kwargs(vector)
    decoders = [lambda: tersa.loads(data, **kwargs)]
    if vector.get("join"):
        decoders = [lambda: tersa.loads_stream(data, join=True, **kwargs), lambda: tersa.join_stream(data, **kwargs)]
    elif vector.get("stream"):
        decoders = [lambda: tersa.loads_stream(data, **kwargs)]
    for decode in decoders:
        with pytest.raises(tersa.DecodeError) as info:
            decode()
        assert (info.value.code, info.value.offset) == (vector["error"], vector["offset"]), str(info.value)


@pytest.mark.parametrize("vector", [v for v in INVALID if v.values[0].get("stream") or v.values[0].get("join")])
@pytest.mark.parametrize("step", [1, 0], ids=["bytewise", "whole"])
def test_invalid_stream_incremental(vector, step):
    """The incremental Decoder reports the same error as loads_stream, fed whole or byte by byte."""
    data = bytes.fromhex(vector["hex"])
    dec = tersa.Decoder(join=bool(vector.get("join")), **_kwargs(vector))
    step = step or len(data)
    with pytest.raises(tersa.DecodeError) as info:
        for i in range(0, len(data), step):
            dec.feed(data[i : i + step])
            list(dec)
        dec.close()
    assert (info.value.code, info.value.offset) == (vector["error"], vector["offset"]), str(info.value)


@pytest.mark.parametrize("name", sorted(load_json(VECTORS / "dictionaries.json")["dictionaries"]))
def test_dictionary(name):
    d, expected_id, spec = dictionaries()[name]
    assert d.id == expected_id
    if "serialized" in spec:
        assert d.serialize().hex() == spec["serialized"]
        assert [str(s) for s in d.strings] == [from_x(s) for s in spec["strings"]]
        assert same(list(map(list, d.shapes)), [[from_x(k) for k in sh] for sh in spec["shapes"]])
    again = tersa.Dictionary.parse(d.serialize())
    assert again.id == d.id and again == d
