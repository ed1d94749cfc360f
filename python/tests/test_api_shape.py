"""The API shape shared with Ruby and TypeScript (README "The API in each
language"): stream encoders hand out each frame, the header once."""

import decimal
import io
import json
import sys
import uuid

import pytest

import tersa
from conftest import SPEC

sys.path.insert(0, str(SPEC / "tools"))
import tersaref as P  # noqa: E402  (the reference codec)

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


def test_dictionary_ids_print_as_0x_and_16_hex_digits():
    d = tersa.Dictionary(["admin"])
    hex_id = f"0x{d.id:016x}"
    assert repr(d).startswith(f"tersa.Dictionary(id={hex_id},")
    single = tersa.dumps("admin", dictionary=d)
    stream = tersa.dumps_stream(["admin"], dictionary=d)

    def fed():
        dec = tersa.Decoder()
        dec.feed(stream)
        list(dec)

    for decode in (lambda: tersa.loads(single), lambda: tersa.loads_stream(stream), fed,
                   lambda: tersa.loads(single, dictionaries=tersa.Dictionary(["other"]))):
        with pytest.raises(tersa.DecodeError) as info:
            decode()
        assert info.value.code == "unknown_dictionary"
        assert f"dictionary {hex_id} was not supplied" in str(info.value)


def test_a_cycle_is_one_line_naming_where_it_closes():
    a = [1, 2]
    d = {"x": [0, 0, 0, {"b": a}]}
    a.append(d)
    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps({"a": d})
    assert str(info.value) == 'circular reference: the value at $["a"] contains itself at $["a"]["x"][3]["b"][2]'
    assert info.value.path == '$["a"]["x"][3]["b"][2]'
    with pytest.raises(tersa.EncodeError) as info:
        tersa.Encoder().write([a])
    assert str(info.value) == 'circular reference: the value at $[0] contains itself at $[0][2]["x"][3]["b"]'
    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps(a, max_depth=100_000)
    assert str(info.value) == 'circular reference: the value at $ contains itself at $[2]["x"][3]["b"]'


def test_dictionary_build_limits_are_integers_of_at_least_one():
    samples = [{"a": "hello"}, {"a": "hello"}]
    assert len(tersa.Dictionary.build(samples, max_strings=1, max_shapes=1, min_count=1).strings) == 1
    for opts in ({"max_strings": 0}, {"max_shapes": 0}, {"min_count": 0}, {"max_strings": -1}, {"min_count": -1}):
        with pytest.raises(ValueError):
            tersa.Dictionary.build(samples, **opts)
    with pytest.raises(TypeError):
        tersa.Dictionary.build(samples, max_strings=1.5)
    with pytest.raises(TypeError):
        tersa.Dictionary.build(samples, maxStrings=1)


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return type(other) is Money and other.cents == self.cents


class Other:
    pass


def test_register_type_a_type_is_one_class_until_unregistered():
    pack = lambda m: m.cents.to_bytes(2, "little")  # noqa: E731
    tersa.register_type(4200, Money, packer=pack, unpacker=lambda b: Money(int.from_bytes(b, "little")))
    try:
        data = tersa.dumps({"price": Money(5)})
        assert tersa.loads(data) == {"price": Money(5)}
        with pytest.raises(ValueError, match=r"extension type 4200 is registered to Money: tersa.unregister_type\(4200\) first"):
            tersa.register_type(4200, Other, packer=lambda o: b"", unpacker=lambda b: Other())
        with pytest.raises(ValueError, match="Money is registered as extension type 4200"):
            tersa.register_type(4201, Money, packer=pack, unpacker=lambda b: 0)
        assert tersa.loads(data) == {"price": Money(5)}, "the old mapping is intact"
        tersa.register_type(4200, Money, packer=pack, unpacker=lambda b: "replaced")  # the same class: replaced
        assert tersa.loads(data) == {"price": "replaced"}
        assert tersa.unregister_type(4200) is True
        assert tersa.unregister_type(4200) is False
        assert tersa.loads(data) == {"price": tersa.Ext(4200, b"\x05\x00")}
        with pytest.raises(tersa.EncodeError, match="Money"):
            tersa.dumps(Money(1))
        tersa.register_type(4200, Other, packer=lambda o: b"o", unpacker=lambda b: "other")
        assert tersa.loads(tersa.dumps([Other()])) == ["other"]
    finally:
        tersa.unregister_type(4200)


def test_register_type_checks_and_hooks():
    for bad, exc in (((0xFF00, Money), ValueError), ((70000, Money), ValueError), ((1, "Money"), TypeError),
                     ((1, int), TypeError), ((1, tersa.Timestamp), TypeError), ((1, decimal.Decimal), TypeError),
                     ((1, uuid.UUID), TypeError)):
        with pytest.raises(exc):
            tersa.register_type(*bad, packer=bytes, unpacker=bytes)

    def boom(_):
        raise KeyError("boom")

    tersa.register_type(4202, Money, packer=boom, unpacker=boom)
    try:
        with pytest.raises(tersa.EncodeError) as info:
            tersa.dumps([Money(1)])
        assert isinstance(info.value.__cause__, KeyError) and info.value.path == "$[0]"
        with pytest.raises(KeyError):  # an unpacker's exception passes through
            tersa.loads(tersa.dumps(tersa.Ext(4202, b"x")))
        tersa.register_type(4202, Money, packer=lambda m: 5, unpacker=bytes)
        with pytest.raises(tersa.EncodeError, match="not bytes"):
            tersa.dumps(Money(1))
        tersa.register_type(4202, Money, packer=lambda m: b"m", unpacker=lambda b: b.decode())
        assert tersa.loads_stream(tersa.dumps_stream([Money(1), Money(2)])) == ["m", "m"]  # streams too
    finally:
        tersa.unregister_type(4202)


def _prefixes():
    for path in sorted((SPEC / "vectors" / "valid").glob("*.json")):
        for v in json.loads(path.read_text())["vectors"]:
            data = bytes.fromhex(v["hex"])
            if v.get("dictionary") or v.get("join") or len(data) > 300:
                continue
            for k in range(len(data)):
                yield bool(v.get("stream")), data[:k]


def _outcome(decode, error, data):
    try:
        decode(data)
        return "ok"
    except error as e:
        return (e.code, e.offset)


def test_truncated_input_gets_the_reference_codes_and_offsets():
    # The same defect, the same code in every language (SPEC 10): Ruby and
    # TypeScript run the same check against the same reference codec.
    n = 0
    for stream, data in _prefixes():
        want = _outcome(P.decode_stream if stream else P.decode, P.DecodeError, data)
        got = _outcome(tersa.loads_stream if stream else tersa.loads, tersa.DecodeError, data)
        assert got == want, (stream, data.hex())
        if stream:
            dec = tersa.Decoder()
            fed = _outcome(lambda d: (dec.feed(d), list(dec), dec.close()), tersa.DecodeError, data)
            assert fed == want, ("fed", data.hex())
        n += 1
    assert n > 5000
