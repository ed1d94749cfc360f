"""The API shape shared with Ruby and TypeScript (README "The API in each
language"): stream encoders hand out each frame, the header once."""

import io

import pytest

import tersa

VALUES = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, ["x", "x"]]


def test_every_piece_written_concatenates_to_the_stream():
    enc = tersa.Encoder()
    pieces = [enc.write(v) for v in VALUES]
    assert pieces[0].startswith(b"\xc1\x70\x12")
    assert not pieces[1].startswith(b"\xc1\x70")
    assert b"".join(pieces) == tersa.dumps_stream(VALUES)


def test_header_is_taken_once():
    enc = tersa.Encoder()
    head = enc.header()
    assert head == b"\xc1\x70\x12"
    frames = [enc.write(v) for v in VALUES]
    assert not frames[0].startswith(head)
    assert head + b"".join(frames) == tersa.dumps_stream(VALUES)
    with pytest.raises(ValueError, match="header"):
        enc.header()


def test_header_after_the_first_write_is_refused():
    enc = tersa.Encoder()
    first = enc.write(1)
    with pytest.raises(ValueError, match="header"):
        enc.header()
    assert first + enc.write(2) == tersa.dumps_stream([1, 2])  # still a working stream


def test_output_receives_the_frames():
    out = io.BytesIO()
    enc = tersa.Encoder(output=out)
    pieces = [enc.write(v) for v in VALUES]
    assert out.getvalue() == b"".join(pieces) == tersa.dumps_stream(VALUES)


def test_output_receives_the_header_when_taken():
    out = io.BytesIO()
    enc = tersa.Encoder(output=out, dictionary=tersa.Dictionary(["admin"]))
    assert len(enc.header()) == 11
    enc.write("admin")
    assert tersa.loads_stream(out.getvalue(), dictionaries=tersa.Dictionary(["admin"])) == ["admin"]


def test_output_must_be_writable():
    with pytest.raises(TypeError, match="output"):
        tersa.Encoder(output=object())


def test_a_failing_output_ends_the_stream():
    class Full:
        def write(self, data):
            raise OSError("disk full")

    enc = tersa.Encoder(output=Full())
    with pytest.raises(OSError):
        enc.write(1)
    with pytest.raises(ValueError, match="failed"):
        enc.write(2)
