"""numpy values: scalars always encode as the int, float or bool they hold;
arrays with OPT_SERIALIZE_NUMPY as nested arrays (float32 elements as F32,
exactly); kinds with no exact Tersa form raise EncodeError. numpy is a test
dependency (make python installs it): this file never skips."""

from __future__ import annotations

import struct
import subprocess
import sys

import numpy as np
import pytest

import tersa

OPT = tersa.OPT_SERIALIZE_NUMPY


def rt(value, **kw):
    return tersa.loads(tersa.dumps(value, **kw))


@pytest.mark.parametrize("scalar,plain", [
    (np.int8(-3), -3), (np.uint8(200), 200), (np.int32(-70000), -70000), (np.int64(-(2**63)), -(2**63)),
    (np.uint64(2**64 - 1), 2**64 - 1), (np.float64(0.1), 0.1), (np.float32(0.1), float(np.float32(0.1))),
    (np.float16(1.5), 1.5), (np.bool_(True), True), (np.bool_(False), False),
])
def test_scalars_encode_as_python_numbers(scalar, plain):
    assert tersa.dumps(scalar) == tersa.dumps(plain)
    assert tersa.dumps({"v": [scalar]}) == tersa.dumps({"v": [plain]})
    back = rt(scalar)
    assert type(back) is type(plain) and back == plain


def test_scalar_keys():
    assert tersa.dumps({np.int64(1): "a", np.str_("k"): 2}) == tersa.dumps({1: "a", "k": 2})


def test_float32_is_written_as_f32():
    # A float32 element is a double that a 32-bit float holds: 4 bytes after its tag.
    one = tersa.dumps(np.array([np.float32(0.1)]), option=OPT)
    assert one == tersa.dumps([float(np.float32(0.1))])
    assert one.endswith(struct.pack("<f", 0.1)) and len(one) == len(tersa.dumps([])) + 5


@pytest.mark.parametrize("arr", [
    np.arange(6, dtype=np.float32).reshape(2, 3) / 3,
    np.arange(24, dtype=np.int16).reshape(2, 3, 4),
    np.array([0, 255], dtype=np.uint8),
    np.array([2**64 - 1, 0], dtype=np.uint64),
    np.array([-(2**63), 2**63 - 1], dtype=np.int64),
    *[np.array([np.iinfo(t).min, -1, 0, np.iinfo(t).max], dtype=t) for t in (np.int8, np.int16, np.int32)],
    *[np.array([0, np.iinfo(t).max], dtype=t) for t in (np.uint16, np.uint32)],
    np.array([[True, False]]),
    np.array([1.5, -0.0, np.inf], dtype=np.float16),
    np.array([1, 2], dtype=">i4"),
    np.array([0.25, np.nan], dtype=">f8"),
    np.arange(12).reshape(3, 4).T,
    np.arange(10)[::-3],
    np.zeros((2, 0)),
    np.array(7),
])
def test_arrays_are_nested_lists(arr):
    assert tersa.dumps(arr, option=OPT) == tersa.dumps(arr.tolist())
    assert tersa.dumps({"a": arr}, option=OPT) == tersa.dumps({"a": arr.tolist()})


def test_arrays_need_the_option():
    with pytest.raises(tersa.EncodeError, match="OPT_SERIALIZE_NUMPY"):
        tersa.dumps([np.zeros(3)])
    assert rt(np.zeros(2), default=lambda a: a.tolist()) == [0.0, 0.0]


@pytest.mark.parametrize("arr", [
    np.array([1 + 2j]), np.array(["a"]), np.array([b"a"]), np.array([None, 1], dtype=object),
    np.array(["2020-01-01"], dtype="datetime64[D]"), np.array([1], dtype="timedelta64[s]"),
])
def test_arrays_without_a_tersa_form(arr):
    with pytest.raises(tersa.EncodeError, match="dtype") as info:
        tersa.dumps({"x": arr}, option=OPT)
    assert info.value.path == '$["x"]'


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="long double is double on this platform")
def test_long_double_raises():
    with pytest.raises(tersa.EncodeError, match="longdouble"):
        tersa.dumps(np.longdouble(1))
    with pytest.raises(tersa.EncodeError, match="dtype"):
        tersa.dumps(np.array([1], dtype=np.longdouble), option=OPT)


def test_array_nesting_counts_against_max_depth():
    deep = np.zeros((1,) * 5)
    assert rt(deep, option=OPT, max_depth=5) == deep.tolist()
    with pytest.raises(tersa.EncodeError, match="nesting"):
        tersa.dumps([deep], option=OPT, max_depth=5)


def test_subclasses_of_numpy_types():
    # In a process of its own: the first numpy object tersa meets is the subclass's.
    script = ("import numpy as np, tersa\n"
              "class Grid(np.ndarray): pass\n"
              "g = np.arange(4).reshape(2, 2).view(Grid)\n"
              "print(tersa.loads(tersa.dumps(g, option=tersa.OPT_SERIALIZE_NUMPY)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True, text=True)
    assert out.stdout.strip() == "[[0, 1], [2, 3]]"


def test_numpy_is_not_imported_by_tersa():
    out = subprocess.run([sys.executable, "-c", "import sys, tersa; tersa.dumps([1.5]); print('numpy' in sys.modules)"],
                         capture_output=True, check=True, text=True)
    assert out.stdout.strip() == "False"
