"""loads() inputs: bytes, bytearray, memoryview (and what is refused)."""

from __future__ import annotations

import array

import pytest

import tersa

VALUE = {"a": [1, 2.5, "three", b"four"], "b": None}
DATA = tersa.dumps(VALUE)


@pytest.mark.parametrize(
    "buf",
    [DATA, bytearray(DATA), memoryview(DATA), memoryview(bytearray(DATA)), memoryview(b"xx" + DATA + b"yy")[2:-2]],
    ids=["bytes", "bytearray", "memoryview", "memoryview-bytearray", "memoryview-slice"],
)
def test_buffer_types(buf):
    assert tersa.loads(buf) == VALUE


def test_other_buffer_protocol_objects():
    assert tersa.loads(array.array("B", DATA)) == VALUE


def test_non_contiguous_memoryview_is_refused():
    with pytest.raises(TypeError):
        tersa.loads(memoryview(DATA * 2)[::2])


def test_str_is_refused():
    with pytest.raises(TypeError, match="not str"):
        tersa.loads(DATA.decode("latin-1"))


def test_bytearray_cannot_change_while_decoding_and_is_not_kept():
    buf = bytearray(DATA)
    out = tersa.loads(buf)
    buf[:] = b"\x00" * len(buf)  # the result holds no reference into the buffer
    assert out == VALUE
    buf.extend(b"more")  # no export is left behind


def test_decoded_bytes_are_copies():
    data = bytearray(tersa.dumps(b"payload"))
    out = tersa.loads(data)
    data[-1] = 0
    assert out == b"payload" and type(out) is bytes
