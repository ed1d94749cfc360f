"""Pre-shared dictionaries (SPEC 8)."""

from __future__ import annotations

import pickle

import pytest

import pith
from conftest import same

D = pith.Dictionary(["admin", "user", "en-US", "usr_"], [["id", "name", "role"], [pith.Symbol("id"), pith.Symbol("name")]])


def test_id_and_serialization_match_the_vectors():
    # spec/vectors/dictionaries.json, "users"
    assert D.id == 0xD562FD89F49B5A07
    assert D.serialize().hex() == (
        "8352706974682d64696374696f6e6172792d7631844561646d696e447573657245656e2d5553447573725f8283426964446e616d6544726f6c6582f805f806"
    )
    again = pith.Dictionary.parse(D.serialize())
    assert again == D and hash(again) == hash(D) and again.id == D.id
    assert again.strings == ("admin", "user", "en-US", "usr_")
    assert again.shapes == (("id", "name", "role"), ("id", "name"))
    assert [type(k) for k in again.shapes[1]] == [pith.Symbol, pith.Symbol]


def test_encode_decode_with_dictionary():
    value = [{"id": 1, "name": "usr_1", "role": "admin"}, {"id": 2, "name": "usr_2", "role": "user"}]
    data = pith.dumps(value, dictionary=D)
    assert data[2] == 0x11 and data[3:11] == D.id.to_bytes(8, "little")
    assert len(data) < len(pith.dumps(value))
    assert same(pith.loads(data, dictionary=D), value)
    assert same(pith.loads(data, dictionary=[pith.Dictionary(["other"]), D]), value)


def test_missing_or_wrong_dictionary_fails_loudly():
    data = pith.dumps({"id": 1}, dictionary=D)
    for dicts in [None, pith.Dictionary(["admin"]), []]:
        with pytest.raises(pith.DecodeError) as info:
            pith.loads(data, dictionary=dicts)
        assert (info.value.code, info.value.offset) == ("unknown_dictionary", 3)
    # A buffer without a dictionary ignores the one given.
    assert pith.loads(pith.dumps({"id": 1}), dictionary=D) == {"id": 1}


def test_invalid_dictionaries():
    with pytest.raises(ValueError):
        pith.Dictionary(["a"])  # shorter than 2 bytes
    with pytest.raises(ValueError):
        pith.Dictionary(["ab", "ab"])
    with pytest.raises(ValueError):
        pith.Dictionary([], [["a", "a"]])
    with pytest.raises(ValueError):
        pith.Dictionary([], [["a"], ["a"]])
    with pytest.raises(TypeError):
        pith.Dictionary([1])
    with pytest.raises(TypeError):
        pith.Dictionary("abc")
    with pytest.raises(TypeError):
        pith.Dictionary([pith.Symbol("ab")])
    with pytest.raises(pith.DecodeError):
        pith.Dictionary.parse(b"\x83\x40")
    with pytest.raises(TypeError):
        pith.loads(pith.dumps(1), dictionary="nope")
    with pytest.raises(TypeError):
        pith.dumps(1, dictionary=[D])


def test_empty_dictionary():
    e = pith.Dictionary()
    assert e.id == 0x9503724A42A9D608 and e.strings == () and e.shapes == ()
    assert pith.loads(pith.dumps([1, "x"], dictionary=e), dictionary=e) == [1, "x"]


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
    d = pith.Dictionary.build(samples)
    assert ("id", "status", "country", "at", "meta") in d.shapes and ("source", "v") in d.shapes
    assert {"active", "pending", "FR", "web"} <= set(d.strings)
    # In every sample: a reference is smaller than the timestamp form.
    assert "2025-01-01T00:00:00Z" in d.strings
    for s in samples:
        data = pith.dumps(s, dictionary=d)
        assert len(data) < len(pith.dumps(s))
        assert pith.loads(data, dictionary=d) == s
    small = pith.Dictionary.build(samples, max_strings=1, max_shapes=1)
    assert len(small.strings) == 1 and len(small.shapes) == 1
    rare = pith.Dictionary.build([{"a": "only-once"}, {"b": 1}])
    assert rare.strings == () and rare.shapes == ()


def test_build_counts_samples_and_matches_other_languages():
    # The samples of ruby/test/test_dictionary.rb: the same strings in the same order.
    samples = [["AAPL", "AAPL", "AAPL", "GOOG", "GOOG"], {"sym": "AAPL", "px": 1}, {"sym": "MSFT", "px": 2},
               {"sym": "MSFT", pith.Symbol("note"): pith.Symbol("active")}, pith.Symbol("active")]
    d = pith.Dictionary.build(samples)
    assert d.strings == ("active", "AAPL", "MSFT") and d.shapes == (("sym", "px"),)
    assert d.id == 0x18B8A462E4507CE6  # as ruby/test/test_dictionary.rb
    assert len(pith.Dictionary.build(samples, min_count=1).strings) == 4
    assert pith.Dictionary.build([samples[0]]).strings == ("AAPL", "GOOG")  # one sample keeps everything
    with pytest.raises(ValueError):
        pith.Dictionary.build(samples, max_strings=0)
    with pytest.raises(pith.EncodeError):
        pith.Dictionary.build([object()])


def test_dictionary_shape_keys_with_symbols_decode_as_symbols():
    value = {pith.Symbol("id"): 1, pith.Symbol("name"): "x"}
    data = pith.dumps(value, dictionary=D)
    out = pith.loads(data, dictionary=D)
    assert same(out, value) and all(type(k) is pith.Symbol for k in out)
