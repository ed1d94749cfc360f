"""Every conformance vector of spec/vectors: valid (decode, canonical
encode, non-canonical), streams, must-fail inputs and dictionaries."""

from __future__ import annotations

import pytest

import pith
from conftest import dictionaries, dictionary_for, from_x, load_json, require_vectors, same

VECTORS = require_vectors()  # a missing vectors directory is a collection error, never a skip


def _collect():
    valid, streams = [], []
    for path in sorted((VECTORS / "valid").glob("*.json")):
        for v in load_json(path)["vectors"]:
            item = pytest.param(v, id=f"{path.stem}: {v['name']}")
            (streams if v.get("stream") else valid).append(item)
    invalid = [pytest.param(v, id=v["name"]) for v in load_json(VECTORS / "invalid" / "invalid.json")["vectors"]]
    return valid, streams, invalid


VALID, STREAMS, INVALID = _collect()


def test_vector_counts():
    # Guard against a runner that silently collects nothing. (spec/vectors/README.md
    # announces 553 valid vectors; the files hold 552.)
    assert len(VALID) + len(STREAMS) >= 552
    assert len(STREAMS) >= 5
    assert len(INVALID) >= 161


@pytest.mark.parametrize("vector", VALID)
def test_valid_decode(vector):
    data = bytes.fromhex(vector["hex"])
    got = pith.loads(data, dictionary=dictionary_for(vector))
    assert same(got, from_x(vector["value"])), got


@pytest.mark.parametrize("vector", VALID)
def test_valid_encode(vector):
    value = from_x(vector["value"])
    expected = vector["hex"] if vector["canonical"] else vector["canonical_hex"]
    assert pith.dumps(value, dictionary=dictionary_for(vector)).hex() == expected


@pytest.mark.parametrize("vector", STREAMS)
def test_stream_decode(vector):
    data = bytes.fromhex(vector["hex"])
    expected = [from_x(v) for v in vector["values"]]
    got = pith.loads_stream(data, dictionary=dictionary_for(vector))
    assert len(got) == len(expected) and all(same(a, b) for a, b in zip(got, expected))
    # Incrementally, one byte at a time.
    dec = pith.Decoder(dictionary=dictionary_for(vector))
    values = []
    for i in range(len(data)):
        dec.feed(data[i : i + 1])
        values.extend(dec)
    dec.close()
    assert len(values) == len(expected) and all(same(a, b) for a, b in zip(values, expected))


@pytest.mark.parametrize("vector", STREAMS)
def test_stream_encode(vector):
    values = [from_x(v) for v in vector["values"]]
    enc = pith.Encoder(dictionary=dictionary_for(vector))
    out = b"".join(enc.encode(v) for v in values) if values else enc.header()
    assert out.hex() == vector["hex"]
    assert pith.dumps_stream(values, dictionary=dictionary_for(vector)).hex() == vector["hex"]


@pytest.mark.parametrize("vector", INVALID)
def test_invalid(vector):
    data = bytes.fromhex(vector["hex"])
    kwargs = {"dictionary": dictionary_for(vector)}
    if "max_depth" in vector:
        kwargs["max_depth"] = vector["max_depth"]
    with pytest.raises(pith.DecodeError) as info:
        if vector.get("stream"):
            pith.loads_stream(data, **kwargs)
        else:
            pith.loads(data, **kwargs)
    assert (info.value.code, info.value.offset) == (vector["error"], vector["offset"]), str(info.value)


@pytest.mark.parametrize("vector", [v for v in INVALID if v.values[0].get("stream")])
def test_invalid_stream_incremental(vector):
    """The incremental Decoder reports the same error as loads_stream."""
    data = bytes.fromhex(vector["hex"])
    kwargs = {"dictionary": dictionary_for(vector)}
    if "max_depth" in vector:
        kwargs["max_depth"] = vector["max_depth"]
    dec = pith.Decoder(**kwargs)
    dec.feed(data)
    with pytest.raises(pith.DecodeError) as info:
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
    again = pith.Dictionary.parse(d.serialize())
    assert again.id == d.id and again == d
