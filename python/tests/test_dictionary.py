"""Pre-shared dictionaries (SPEC 8)."""

from __future__ import annotations

import pickle

import pytest

import tersa
from conftest import same

D = tersa.Dictionary(["admin", "user", "en-US", "usr_"], [["id", "name", "role"], [tersa.Symbol("id"), tersa.Symbol("name")]])


def test_id_and_serialization_match_the_vectors():
    # spec/vectors/dictionaries.json, "users"
    assert D.id == 0x5F74C19F72F740E4
    assert D.serialize().hex() == (
        "835374657273612d64696374696f6e6172792d7631844561646d696e447573657245656e2d5553447573725f8283426964446e616d6544726f6c6582f805f806"
    )
    again = tersa.Dictionary.parse(D.serialize())
    assert again == D and hash(again) == hash(D) and again.id == D.id
    assert again.strings == ("admin", "user", "en-US", "usr_")
    assert again.shapes == (("id", "name", "role"), ("id", "name"))
    assert [type(k) for k in again.shapes[1]] == [tersa.Symbol, tersa.Symbol]


def test_encode_decode_with_dictionary():
    value = [{"id": 1, "name": "usr_1", "role": "admin"}, {"id": 2, "name": "usr_2", "role": "user"}]
    data = tersa.dumps(value, dictionary=D)
    assert data[2] == 0x11 and data[3:11] == D.id.to_bytes(8, "little")
    assert len(data) < len(tersa.dumps(value))
    assert same(tersa.loads(data, dictionaries=D), value)
    assert same(tersa.loads(data, dictionaries=[tersa.Dictionary(["other"]), D]), value)


def test_missing_or_wrong_dictionary_fails_loudly():
    data = tersa.dumps({"id": 1}, dictionary=D)
    for dicts in [None, tersa.Dictionary(["admin"]), []]:
        with pytest.raises(tersa.DecodeError) as info:
            tersa.loads(data, dictionaries=dicts)
        assert (info.value.code, info.value.offset) == ("unknown_dictionary", 3)
    # A buffer without a dictionary ignores the one given.
    assert tersa.loads(tersa.dumps({"id": 1}), dictionaries=D) == {"id": 1}


def test_invalid_dictionaries():
    with pytest.raises(ValueError):
        tersa.Dictionary(["a"])  # shorter than 2 bytes
    with pytest.raises(ValueError):
        tersa.Dictionary(["ab", "ab"])
    with pytest.raises(ValueError):
        tersa.Dictionary([], [["a", "a"]])
    with pytest.raises(ValueError):
        tersa.Dictionary([], [["a"], ["a"]])
    with pytest.raises(TypeError):
        tersa.Dictionary([1])
    with pytest.raises(TypeError):
        tersa.Dictionary("abc")
    with pytest.raises(TypeError):
        tersa.Dictionary([tersa.Symbol("ab")])
    with pytest.raises(tersa.DecodeError):
        tersa.Dictionary.parse(b"\x83\x40")
    with pytest.raises(TypeError):
        tersa.loads(tersa.dumps(1), dictionaries="nope")
    with pytest.raises(TypeError):
        tersa.dumps(1, dictionary=[D])


def test_empty_dictionary():
    e = tersa.Dictionary()
    assert e.id == 0xB1C4ACBB226D8209 and e.strings == () and e.shapes == ()
    assert tersa.loads(tersa.dumps([1, "x"], dictionary=e), dictionaries=e) == [1, "x"]


def test_pickle_and_repr():
    again = pickle.loads(pickle.dumps(D))
    assert again == D
    assert "strings=4" in repr(D) and "shapes=2" in repr(D)


def test_build_from_samples():
    samples = [
        {"id": i, "status": ["active", "pending"][i % 2], "country": "FR", "at": "2025-01-01T00:00:00Z",
         "meta": {"source": "web", "v": i}}
        for i in range(10)
    ]
    d = tersa.Dictionary.build(samples)
    assert ("id", "status", "country", "at", "meta") in d.shapes and ("source", "v") in d.shapes
    assert {"active", "pending", "FR", "web"} <= set(d.strings)
    # In every sample: a reference is smaller than the timestamp form.
    assert "2025-01-01T00:00:00Z" in d.strings
    for s in samples:
        data = tersa.dumps(s, dictionary=d)
        assert len(data) < len(tersa.dumps(s))
        assert tersa.loads(data, dictionaries=d) == s
    small = tersa.Dictionary.build(samples, max_strings=1, max_shapes=1)
    assert len(small.strings) == 1 and len(small.shapes) == 1
    rare = tersa.Dictionary.build([{"a": "only-once"}, {"b": 1}])
    assert rare.strings == () and rare.shapes == ()


def test_build_counts_samples_and_matches_other_languages():
    # The samples of ruby/test/test_dictionary.rb: the same strings in the same order.
    samples = [["AAPL", "AAPL", "AAPL", "GOOG", "GOOG"], {"sym": "AAPL", "px": 1}, {"sym": "MSFT", "px": 2},
               {"sym": "MSFT", tersa.Symbol("note"): tersa.Symbol("active")}, tersa.Symbol("active")]
    d = tersa.Dictionary.build(samples)
    assert d.strings == ("active", "AAPL", "MSFT") and d.shapes == (("sym", "px"),)
    assert d.id == 0xEFFD7698F9E92229  # as ruby/test/test_dictionary.rb
    assert len(tersa.Dictionary.build(samples, min_count=1).strings) == 4
    assert tersa.Dictionary.build([samples[0]]).strings == ("AAPL", "GOOG")  # one sample keeps everything
    with pytest.raises(ValueError):
        tersa.Dictionary.build(samples, max_strings=0)
    with pytest.raises(tersa.EncodeError):
        tersa.Dictionary.build([object()])


def test_dictionary_shape_keys_with_symbols_decode_as_symbols():
    value = {tersa.Symbol("id"): 1, tersa.Symbol("name"): "x"}
    data = tersa.dumps(value, dictionary=D)
    out = tersa.loads(data, dictionaries=D)
    assert same(out, value) and all(type(k) is tersa.Symbol for k in out)
