"""`default`, dataclasses, enums, UUID and the OPT_PASSTHROUGH_* flags."""

from __future__ import annotations

import dataclasses
import fractions
import enum
import uuid
from typing import ClassVar

import pytest

import tersa


@dataclasses.dataclass
class Point:
    x: int
    y: float
    tags: list = dataclasses.field(default_factory=list)
    kind: ClassVar[str] = "point"


@dataclasses.dataclass(frozen=True)
class Slotted:
    __slots__ = ("a",)
    a: int


class Color(enum.Enum):
    RED = "red"
    BLUE = 2


class Level(enum.IntEnum):
    LOW = 1


def test_dataclass_is_a_map_of_its_fields():
    assert tersa.loads(tersa.dumps(Point(1, 2.5, ["a"]))) == {"x": 1, "y": 2.5, "tags": ["a"]}
    assert tersa.loads(tersa.dumps([Slotted(1), Slotted(2)])) == [{"a": 1}, {"a": 2}]


def test_passthrough_dataclass():
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(Point(1, 2.0), option=tersa.OPT_PASSTHROUGH_DATACLASS)
    out = tersa.loads(tersa.dumps(Point(1, 2.0), option=tersa.OPT_PASSTHROUGH_DATACLASS, default=lambda p: [p.x, p.y]))
    assert out == [1, 2.0]


def test_enum_is_its_value():
    assert tersa.loads(tersa.dumps([Color.RED, Color.BLUE, Level.LOW])) == ["red", 2, 1]
    assert tersa.loads(tersa.dumps({Color.RED: 1, Color.BLUE: 2})) == {"red": 1, 2: 2}
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(Color.RED, option=tersa.OPT_PASSTHROUGH_ENUM)
    assert tersa.loads(tersa.dumps(Color.RED, option=tersa.OPT_PASSTHROUGH_ENUM, default=lambda e: e.name)) == "RED"


def test_enum_keys_all_strings_make_a_shaped_map():
    class K(enum.Enum):
        A = "a"
        B = "b"

    assert tersa.dumps({K.A: 1, K.B: 2}) == tersa.dumps({"a": 1, "b": 2})


def test_uuid_goes_to_default_with_passthrough():
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert tersa.loads(tersa.dumps(u)) == u
    assert tersa.loads(tersa.dumps({u: 1})) == {u: 1}
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(u, option=tersa.OPT_PASSTHROUGH_UUID)
    assert tersa.loads(tersa.dumps(u, option=tersa.OPT_PASSTHROUGH_UUID, default=lambda x: x.bytes)) == u.bytes


def test_default_for_custom_types_and_nesting():
    def default(o):
        if isinstance(o, fractions.Fraction):
            return str(o)
        if isinstance(o, set):
            return sorted(o)
        if isinstance(o, frozenset):
            return {"set": sorted(o, key=repr)}
        raise TypeError

    v = {"price": fractions.Fraction(11, 10), "s": {3, 1, 2}, "f": frozenset([fractions.Fraction(2)])}
    assert tersa.loads(tersa.dumps(v, default=default)) == {"price": "11/10", "s": [1, 2, 3], "f": {"set": ["2"]}}


def test_default_on_keys():
    class Key:
        def __init__(self, n):
            self.n = n

        def __hash__(self):
            return self.n

    out = tersa.loads(tersa.dumps({Key(1): "a", Key(2): "b"}, default=lambda k: f"k{k.n}"))
    assert out == {"k1": "a", "k2": "b"}
    with pytest.raises(tersa.EncodeError, match="duplicate|distinct"):
        tersa.dumps({Key(1): "a", Key(2): "b"}, default=lambda k: "same")
    with pytest.raises(tersa.EncodeError, match="duplicate map key"):
        tersa.dumps({Key(1): "a", 5: "b"}, default=lambda k: 5)


def test_passthrough_subclass():
    class S(str):
        pass

    with pytest.raises(tersa.EncodeError):
        tersa.dumps(S("x"), option=tersa.OPT_PASSTHROUGH_SUBCLASS)
    assert tersa.loads(tersa.dumps(S("x"), option=tersa.OPT_PASSTHROUGH_SUBCLASS, default=lambda s: "y" + s)) == "yx"
    # Enum members are still their values under OPT_PASSTHROUGH_SUBCLASS (Level is an int subclass).
    assert tersa.loads(tersa.dumps(Level.LOW, option=tersa.OPT_PASSTHROUGH_SUBCLASS)) == 1


def test_default_recursion_is_bounded():
    class Loop:
        pass

    with pytest.raises(tersa.EncodeError):
        tersa.dumps(Loop(), default=lambda o: Loop())


def test_option_validation():
    with pytest.raises(TypeError):
        tersa.dumps(1, option="x")
    with pytest.raises(ValueError):
        tersa.dumps(1, option=1 << 30)
    assert tersa.dumps(1, option=None) == tersa.dumps(1)
