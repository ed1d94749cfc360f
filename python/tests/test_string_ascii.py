"""The reader tells ASCII strings from the others by their bytes' high bits,
32 bytes at a time where the input has 32 bytes from the string on, and byte
exact near its end: strings of every length up to and past those 32 bytes,
with one non-ASCII character anywhere or none, at the start, middle and end
of the input, decode to the same str, and a bad byte anywhere is an error."""

from __future__ import annotations

import pytest

import tersa

LENGTHS = list(range(0, 70)) + [95, 96, 97, 200]


def strings():
    for n in LENGTHS:
        base = "".join(chr(0x61 + i % 26) for i in range(n))
        yield base
        for at in sorted({0, n // 2, n - 1, 7, 8, 15, 16, 31, 32} & set(range(n))):
            yield base[:at] + "\u00e9" + base[at + 1 :]
            yield base[:at] + "\u20ac" + base[at + 1 :]


@pytest.mark.parametrize("where", ["alone", "first", "last", "key", "value"])
def test_strings_of_every_length(where):
    for s in strings():
        doc = {
            "alone": s,
            "first": [s, 1, 2.5, "tail that pads the input well past thirty-two bytes"],
            "last": [1, s],
            "key": {s: 1},
            "value": {"k": s},
        }[where]
        back = tersa.loads(tersa.dumps(doc))
        assert back == doc, (where, len(s))


@pytest.mark.parametrize("pad", [0, 40])
def test_invalid_byte_anywhere(pad):
    for n in [1, 7, 8, 9, 16, 17, 24, 31, 32, 33, 64, 100]:
        s = "x" * n
        data = tersa.dumps(["p" * pad, s] if pad else [s])
        at = data.rindex(s.encode())
        for i in range(n):
            bad = bytearray(data)
            bad[at + i] = 0xFF
            with pytest.raises(tersa.DecodeError) as info:
                tersa.loads(bytes(bad))
            assert info.value.code == "invalid_utf8", (n, i)
            # a lone continuation byte too
            bad[at + i] = 0x80
            with pytest.raises(tersa.DecodeError):
                tersa.loads(bytes(bad))
