"""DecodeError and EncodeError: classes, codes, offsets, paths, causes."""

from __future__ import annotations

import pickle

import pytest

import tersa


def test_exception_classes():
    assert issubclass(tersa.DecodeError, ValueError)
    assert issubclass(tersa.EncodeError, TypeError)


@pytest.mark.parametrize(
    "data, code, offset",
    [
        (b"", "truncated", 0),
        (b"\xc1", "truncated", 0),
        (b"\xc1\x71\x10", "bad_magic", 0),
        (b"{}", "bad_magic", 0),
        (b"\xc1\x70\x20\xe0", "unsupported_version", 2),
        (b"\xc1\x70\x14\xe0", "bad_flags", 2),
        (b"\xc1\x70\x12", "bad_flags", 2),  # a stream given to loads()
        (b"\xc1\x70\x10", "truncated", 3),
        (b"\xc1\x70\x10\xfd", "invalid_tag", 3),
        (b"\xc1\x70\x10\xe0\xe0", "trailing_bytes", 4),
        (b"\xc1\x70\x10\x82\xe0", "length_exceeds_input", 3),
        (b"\xc1\x70\x10\x82\xe0\x42\x61", "truncated", 5),
        (b"\xc1\x70\x10\x43ab", "truncated", 3),
        (b"\xc1\x70\x10\x42\xc3\x28", "invalid_utf8", 3),
        (b"\xc1\x70\x10\x05", "bad_reference", 3),
        (b"\xc1\x70\x10\x60", "bad_reference", 3),
        (b"\xc1\x70\x10\x91\xa8\xe0", "expected_string", 4),
        (b"\xc1\x70\x10\x92\x41\x61\x41\x61\xe0\xe0", "duplicate_key", 6),
        (b"\xc1\x70\x11" + bytes(8) + b"\xe0", "unknown_dictionary", 3),
        (b"\xc1\x70\x10\xf2\xff\xff", "length_exceeds_input", 3),
    ],
)
def test_decode_errors(data, code, offset):
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads(data)
    assert info.value.code == code and info.value.offset == offset
    assert str(offset) in str(info.value)


def test_depth_limit():
    # 1000 nested arrays sit at levels 0..999; a 1001st is at level 1000.
    deep = b"\xc1\x70\x10" + b"\x81" * 1001 + b"\xe0"
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads(deep)
    assert info.value.code == "depth_exceeded" and info.value.offset == 3 + 1000
    ok = b"\xc1\x70\x10" + b"\x81" * 1000 + b"\xe0"
    assert tersa.loads(ok) is not None
    with pytest.raises(tersa.DecodeError):
        tersa.loads(ok, max_depth=10)
    assert tersa.loads(b"\xc1\x70\x10" + b"\x81" * 1500 + b"\xe0", max_depth=2000) is not None


def test_decode_error_pickles():
    try:
        tersa.loads(b"\xc1\x70\x10\xfd")
    except tersa.DecodeError as e:
        again = pickle.loads(pickle.dumps(e))
        assert (again.code, again.offset, str(again)) == (e.code, e.offset, str(e))


def test_loads_argument_types():
    for bad in ["text", 5, None, [1]]:
        with pytest.raises(TypeError):
            tersa.loads(bad)
    with pytest.raises(TypeError):
        tersa.loads()
    with pytest.raises(TypeError):
        tersa.loads(b"", unknown=1)
    with pytest.raises(ValueError):
        tersa.loads(tersa.dumps(1), option=1 << 20)


class Unknown:
    pass


def test_encode_unsupported_type_names_type_and_path():
    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps({"a": [1, 2, {"user": Unknown()}]})
    msg = str(info.value)
    assert "Unknown" in msg and info.value.path == '$["a"][2]["user"]'
    assert msg.endswith('at $["a"][2]["user"]')
    assert isinstance(info.value, TypeError)


def test_encode_error_state_does_not_outlive_its_call():
    """The pooled encoder drops a failed call's message, cause and path: the
    next call, failing or not, starts clean."""
    for _ in range(3):
        with pytest.raises(tersa.EncodeError) as info:
            tersa.dumps({"a": [1, {"b": Unknown()}]})
        assert info.value.path == '$["a"][1]["b"]'
        assert tersa.loads(tersa.dumps({"x": [1, "yz"]})) == {"x": [1, "yz"]}
    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps([Unknown()])
    assert info.value.path == "$[0]"
    assert str(info.value).endswith("at $[0]")


def test_encode_path_for_generic_keys_and_top_level():
    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps(Unknown())
    assert info.value.path == "$"
    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps({1: [Unknown()]})
    assert info.value.path == "$[1][0]"
    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps({'q"\\': Unknown()})
    assert info.value.path == '$["q\\"\\\\"]'


def test_encode_surrogates():
    with pytest.raises(tersa.EncodeError, match="surrogate"):
        tersa.dumps("\ud800")
    with pytest.raises(tersa.EncodeError, match="surrogate"):
        tersa.dumps({"\udfff": 1})
    with pytest.raises(tersa.EncodeError, match="surrogate"):
        tersa.dumps(tersa.Symbol("\ud800"))


def test_cycles_raise():
    a = []
    a.append(a)
    with pytest.raises(tersa.EncodeError, match="circular reference"):
        tersa.dumps(a)
    d = {}
    d["self"] = [d]
    with pytest.raises(tersa.EncodeError, match="circular reference"):
        tersa.dumps(d)


def test_too_deep_raises():
    v = []
    for _ in range(1000):
        v = [v]
    with pytest.raises(tersa.EncodeError, match="deeper than 1000"):
        tersa.dumps(v)
    v = []
    for _ in range(999):
        v = [v]
    assert tersa.loads(tersa.dumps(v)) == v


def test_default_exception_is_the_cause():
    def bad(o):
        raise KeyError("nope")

    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps([Unknown()], default=bad)
    assert isinstance(info.value.__cause__, KeyError)
    assert info.value.path == "$[0]"


def test_default_returning_unsupported():
    with pytest.raises(tersa.EncodeError, match="Unknown"):
        tersa.dumps(Unknown(), default=lambda o: o)


def test_default_must_be_callable():
    with pytest.raises(TypeError):
        tersa.dumps(1, default=5)


def test_ext_type_range():
    class FakeExt:
        pass

    with pytest.raises(ValueError):
        tersa.Ext(-1, b"")


def test_encode_error_pickles():
    try:
        tersa.dumps(Unknown())
    except tersa.EncodeError as e:
        again = pickle.loads(pickle.dumps(e))
        assert (again.path, str(again)) == (e.path, str(e))


def test_nothing_half_written_after_an_error():
    # The pooled writer is reset: the next call is unaffected.
    with pytest.raises(tersa.EncodeError):
        tersa.dumps({"a": ["x" * 40, Unknown()]})
    assert tersa.loads(tersa.dumps({"a": ["x" * 40]})) == {"a": ["x" * 40]}


@pytest.mark.parametrize(
    "value, path",
    [
        ([[1, 2, Unknown()]], "$[0][2]"),
        ([0, [1, [2, [Unknown()]]]], "$[1][1][1][0]"),
        ((1, [2, Unknown()]), "$[1][1]"),
        ({"k": [1, [Unknown()]]}, '$["k"][1][0]'),
        (tersa.Map([(1, [[], [Unknown()]])]), "$[1][1][0]"),
        ([[1.5, "\udc80"]], "$[0][1]"),
    ],
)
def test_encode_paths_inside_nested_lists(value, path):
    with pytest.raises(tersa.EncodeError) as info:
        tersa.dumps(value)
    assert info.value.path == path


# Every cut of two buffers with nested short lists: [[0, 1], [2, [3, 4]]] and
# {"k": [0, [1, 2]], "j": [[5]]}, and a bad tag inside an inner list.
NESTED_CUTS = {
    "c170108282a8a982aa82abac": [
        (4, "length_exceeds_input", 3), (5, "length_exceeds_input", 3), (6, "length_exceeds_input", 4),
        (7, "truncated", 7), (8, "length_exceeds_input", 7), (9, "length_exceeds_input", 7),
        (10, "length_exceeds_input", 9), (11, "length_exceeds_input", 9),
    ],
    "c1701092416b416a82a882a9aa8181ad": [
        (4, "length_exceeds_input", 3), (5, "length_exceeds_input", 3), (6, "length_exceeds_input", 3),
        (7, "length_exceeds_input", 3), (8, "truncated", 8), (9, "length_exceeds_input", 8),
        (10, "length_exceeds_input", 8), (11, "length_exceeds_input", 10), (12, "length_exceeds_input", 10),
        (13, "truncated", 13), (14, "length_exceeds_input", 13), (15, "length_exceeds_input", 14),
    ],
}


@pytest.mark.parametrize("whole", sorted(NESTED_CUTS))
def test_decode_errors_inside_nested_lists(whole):
    data = bytes.fromhex(whole)
    assert tersa.loads(data) in ([[0, 1], [2, [3, 4]]], {"k": [0, [1, 2]], "j": [[5]]})
    for cut, code, offset in NESTED_CUTS[whole]:
        with pytest.raises(tersa.DecodeError) as info:
            tersa.loads(data[:cut])
        assert (cut, info.value.code, info.value.offset) == (cut, code, offset)
    at = {"82": 6, "92": 11}[whole[6:8]]  # an item of an inner list
    with pytest.raises(tersa.DecodeError) as info:
        tersa.loads(data[:at] + b"\xfd" + data[at + 1 :])
    assert (info.value.code, info.value.offset) == ("invalid_tag", at)
