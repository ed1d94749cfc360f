"""Streams (SPEC 2.3): Encoder, Decoder (incremental), loads_stream, dumps_stream."""

from __future__ import annotations

import pytest

import tersa
from conftest import fed, same

RECORDS = [{"id": i, "name": f"user_{i}", "role": "admin" if i % 2 else "user", "score": i * 1.5} for i in range(20)]


def test_values_share_tables():
    enc = tersa.Encoder()
    frames = [enc.write(r) for r in RECORDS]
    assert frames[0].startswith(b"\xc1\x70\x12")
    # Later records reuse the shape and strings of earlier ones.
    assert len(frames[5]) < len(tersa.dumps(RECORDS[5])) - 3
    data = b"".join(frames)
    assert same(tersa.loads_stream(data), RECORDS)
    assert tersa.dumps_stream(RECORDS) == data


def test_decoder_incremental_chunks():
    data = tersa.dumps_stream(RECORDS)
    for chunk in [1, 2, 3, 7, 64, len(data)]:
        dec = tersa.Decoder()
        assert same(fed(dec, data, chunk), RECORDS), chunk
        assert dec.pending == 0


def test_decoder_accepts_buffers():
    data = tersa.dumps_stream([1, "two", [3]])
    dec = tersa.Decoder()
    dec.feed(bytearray(data[:5]))
    dec.feed(memoryview(data)[5:])
    assert list(dec) == [1, "two", [3]]
    dec.close()


def test_empty_stream():
    enc = tersa.Encoder()
    assert enc.header() == b"\xc1\x70\x12"
    assert tersa.dumps_stream([]) == b"\xc1\x70\x12"
    assert tersa.loads_stream(b"\xc1\x70\x12") == []
    dec = tersa.Decoder()
    dec.feed(b"\xc1\x70\x12")
    assert list(dec) == []
    dec.close()


def test_decoder_close_errors():
    dec = tersa.Decoder()
    with pytest.raises(tersa.DecodeError) as info:
        dec.close()
    assert info.value.code == "truncated"
    data = tersa.dumps_stream(["abc", "def"])
    dec = tersa.Decoder()
    dec.feed(data[:-1])
    assert list(dec) == ["abc"]
    with pytest.raises(tersa.DecodeError) as info:
        dec.close()
    assert info.value.code == "length_exceeds_input"


@pytest.mark.parametrize(
    "hexdata, code, offset",
    [
        ("c17011", "bad_flags", 2),  # a single-value header with DICT: its flags first, not the missing id
        ("c170d1", "unsupported_version", 2),
        ("c170", "truncated", 0),
        ("c17013", "truncated", 3),  # a stream header cut inside its dictionary id
        ("c1701201", "invalid_value", 3),  # an empty frame, never iterated
        ("c1701205fd", "length_exceeds_input", 3),
    ],
)
def test_decoder_close_reports_what_loads_stream_reports(hexdata, code, offset):
    data = bytes.fromhex(hexdata)
    with pytest.raises(tersa.DecodeError) as whole:
        tersa.loads_stream(data)
    assert (whole.value.code, whole.value.offset) == (code, offset)
    dec = tersa.Decoder()
    dec.feed(data[:1])
    dec.feed(data[1:])
    with pytest.raises(tersa.DecodeError) as info:
        list(dec)
        dec.close()
    assert (info.value.code, info.value.offset) == (code, offset)


def test_decoder_close_with_frames_unread():
    dec = tersa.Decoder()
    dec.feed(tersa.dumps_stream([1]))
    with pytest.raises(ValueError, match="not yet read"):
        dec.close()
    assert list(dec) == [1]
    dec.close()


def test_decoder_error_is_sticky():
    dec = tersa.Decoder()
    # A sync frame whose item is a second sync marker.
    dec.feed(b"\xc1\x70\x12\x07\xfd\x12\xfd")
    with pytest.raises(tersa.DecodeError) as info:
        next(dec)
    assert (info.value.code, info.value.offset) == ("invalid_tag", 6)
    with pytest.raises(tersa.DecodeError):
        next(dec)


def test_decoder_rejects_single_value_buffer():
    dec = tersa.Decoder()
    dec.feed(tersa.dumps(1))
    with pytest.raises(tersa.DecodeError) as info:
        list(dec)
    assert info.value.code == "bad_flags"
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads_stream(tersa.dumps(1))
    assert info.value.code == "bad_flags"


def test_strings_referenced_across_frames_survive_dropping_earlier_values():
    enc = tersa.Encoder()
    data = b"".join(enc.write(v) for v in [["shared-string"], ["shared-string"], ["shared-string"]])
    dec = tersa.Decoder()
    dec.feed(data)
    first = next(dec)
    del first  # the decoder must keep what later frames refer to
    import gc

    gc.collect()
    assert list(dec) == [["shared-string"], ["shared-string"]]


def test_encoder_fails_cleanly_and_stays_failed():
    enc = tersa.Encoder()
    enc.write(1)
    with pytest.raises(tersa.EncodeError):
        enc.write(object())
    with pytest.raises(ValueError, match="failed"):
        enc.write(2)


def test_encoder_options_and_default():
    enc = tersa.Encoder(default=lambda o: "obj", option=tersa.OPT_NAIVE_UTC)
    data = enc.write(object()) + enc.write(object())
    assert tersa.loads_stream(data) == ["obj", "obj"]


def test_encoder_reentrancy_is_refused():
    enc = tersa.Encoder(default=lambda o: enc.write(1))
    with pytest.raises(tersa.EncodeError) as info:
        enc.write(object())
    assert isinstance(info.value.__cause__, RuntimeError)


def test_stream_with_dictionary():
    d = tersa.Dictionary(["admin", "user"], [["id", "name", "role", "score"]])
    enc = tersa.Encoder(dictionary=d)
    data = b"".join(enc.write(r) for r in RECORDS)
    assert data[2] == 0x13 and tersa.Encoder(dictionary=d).header() == data[:11]
    assert same(tersa.loads_stream(data, dictionaries=d), RECORDS)
    dec = tersa.Decoder(dictionaries=[tersa.Dictionary(["zz"]), d])
    dec.feed(data)
    assert same(list(dec), RECORDS)
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads_stream(data)
    assert info.value.code == "unknown_dictionary"


def test_decoder_max_depth():
    data = tersa.dumps_stream([[[[1]]]])
    dec = tersa.Decoder(max_depth=2)
    dec.feed(data)
    with pytest.raises(tersa.DecodeError) as info:
        list(dec)
    assert info.value.code == "depth_exceeded"


def test_long_stream_memory_is_bounded_per_frame():
    enc = tersa.Encoder()
    dec = tersa.Decoder()
    for i in range(2000):
        dec.feed(enc.write({"i": i, "s": "x" * (i % 50)}))
        (v,) = list(dec)
        assert v["i"] == i
    assert dec.pending == 0
