"""dumps's shape lookup finds a dict's keys by the identity of its key strs,
and holds no reference to them until Python code may run (the first
`default`, conversion or other callback, or a conversion's result dropped):
then it takes one to each key it holds. A key freed while the lookup still
held it would let a new str made at the same address find the freed key's
shape, and the new dict would be written with the old keys.

Each test frees the keys of a dict already written from inside a `default`
(or by dropping a conversion's result), then makes keys of the same size in
the order that hands the freed memory back in the same places (Python's
allocator reuses the most recently freed block first), and checks the bytes
against those of the same value built without the mutation."""

from __future__ import annotations

import pytest

import tersa

N = 6


def key(tag: str, i: int) -> str:
    # A new str object each call (f-strings are built at run time, never interned).
    return f"{tag}-{i:02d}-{'k' * 20}"


def reused_keys(tag: str, reverse: bool = True) -> list:
    # Made right after N keys of this size were freed in order 0..N-1: the
    # last one freed is reused first, so key N-1-i lands where key i was
    # (reverse); the order the freeing took is not promised, so tests try both.
    made = [key(tag, i) for i in range(N)]
    return made[::-1] if reverse else made


class Marker:
    pass


@pytest.mark.parametrize("reverse", [True, False])
def test_default_clears_written_dict_and_makes_keys(reverse):
    first = {key("old", i): i for i in range(N)}
    marker = Marker()
    data = [first, marker]
    made = {}

    def default(o):
        assert o is marker
        first.clear()  # the only references to its keys
        made.update((k, 100 + j) for j, k in enumerate(reused_keys("new", reverse)))
        return [made, dict(made)]

    out = tersa.dumps(data, default=default)
    expected = [{key("old", i): i for i in range(N)}, [made, dict(made)]]
    assert tersa.loads(out) == expected
    assert out == tersa.dumps(expected)


class Conv:
    def __init__(self, tag: str) -> None:
        self.tag = tag


def test_conversion_results_dropped_then_keys_made_again():
    # Each result is a dict of fresh keys that only the encoder holds: it is
    # dropped once written, and the next conversion makes keys of the same
    # size, often in the freed blocks.
    tags = [f"t{i}" for i in range(8)]

    def default(o):
        return {k: o.tag for k in reused_keys(o.tag)}

    data = [Conv(t) for t in tags]
    out = tersa.dumps(data, default=default)
    expected = [{k: t for k in reused_keys(t)} for t in tags]
    assert tersa.loads(out) == expected
    assert out == tersa.dumps(expected)


def test_dict_subclass_pairs_dropped_then_keys_made_again():
    class Sub(dict):
        pass

    def default(o):
        return Sub({k: o.tag for k in reused_keys(o.tag)})

    tags = [f"s{i}" for i in range(8)]
    data = [{"inner": Conv(t)} for t in tags]
    out = tersa.dumps(data, default=default)
    expected = [{"inner": {k: t for k in reused_keys(t)}} for t in tags]
    assert tersa.loads(out) == expected
