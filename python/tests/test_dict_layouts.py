"""Dicts in every layout CPython gives them, and shapes met again in every
place: dumps reads a dict of str keys without deleted entries in its own
entry table and gathers the others (deleted entries, keys of other types,
split instance dicts) first; it does not keep the top-level dict's shape of
a buffer for later maps, but a stream's frames keep theirs. Each must write
the reference encoder's bytes."""

from __future__ import annotations

import gc
import random
import sys

import pytest

import tersa
from conftest import SPEC

sys.path.insert(0, str(SPEC / "tools"))
import tersaref as P  # noqa: E402

from test_property import to_ref  # noqa: E402


def expected(value) -> bytes:
    return P.encode(to_ref(value))


def with_deletions(rng: random.Random, n: int) -> dict:
    """A dict whose entry table has holes (deleted entries) and re-inserted keys."""
    d = {f"k{i}": i for i in range(n)}
    for i in rng.sample(range(n), rng.randrange(1, n + 1)):
        del d[f"k{i}"]
    for i in range(rng.randrange(3)):
        d[f"k{i}"] = "again"
    return d


def test_dicts_with_deleted_entries():
    rng = random.Random(5)
    for _ in range(300):
        d = with_deletions(rng, rng.randrange(1, 12))
        doc = {"d": d, "list": [d, dict(d), d], "fresh": dict(d)}
        assert tersa.dumps(d) == expected(d) == tersa.dumps(dict(d))
        assert tersa.dumps(doc) == expected(doc)


def test_dict_emptied_by_deletions():
    d = {"a": 1, "b": 2}
    del d["a"], d["b"]
    assert tersa.dumps(d) == tersa.dumps({})
    assert tersa.dumps([d, {"a": 1}, d]) == expected([{}, {"a": 1}, {}])


class Item:
    def __init__(self, i):
        self.id = i
        self.name = f"item {i}"
        self.tags = ["a", "b"]


def test_split_instance_dicts():
    items = [Item(i) for i in range(20)]
    dicts = [vars(x) for x in items]
    assert tersa.dumps(dicts) == expected([dict(d) for d in dicts])
    assert tersa.dumps({"one": vars(items[0])}) == expected({"one": dict(vars(items[0]))})


class Key(str):
    pass


def test_keys_of_other_types_beside_str_keys():
    plain = {"a": 1, "b": [1, 2], "c": {"a": 1}}
    sub = {Key("a"): 1, "b": [1, 2], "c": {Key("a"): 1}}
    assert tersa.dumps(sub) == tersa.dumps(plain) == expected(plain)
    mixed = {"a": 1, 2: "two", "c": None}
    assert tersa.dumps(mixed) == P.encode(P.Map([("a", 1), (2, "two"), ("c", None)]))
    sym = {tersa.Symbol("s"): 1, "t": 2}
    assert tersa.dumps([sym, sym]) == P.encode([{P.Symbol("s"): 1, "t": 2}] * 2)


def random_doc(rng: random.Random, keys: list[str], depth: int = 0):
    """Nested dicts drawn from a few key sets, so that the top-level shape
    comes again below it, beside itself in lists and under other shapes."""
    if depth > 3 or rng.random() < 0.3:
        return rng.choice([1, "s", 2.5, None, [1, 2], "2024-01-02T03:04:05Z"])
    if rng.random() < 0.3:
        return [random_doc(rng, keys, depth + 1) for _ in range(rng.randrange(4))]
    ks = rng.choice([keys[:2], keys[:3], keys[1:4], keys[:1], []])
    return {k: random_doc(rng, keys, depth + 1) for k in ks}


def test_top_level_shape_met_again():
    rng = random.Random(11)
    keys = ["id", "name", "kids", "meta"]
    for _ in range(500):
        doc = random_doc(rng, keys)
        assert tersa.dumps(doc) == expected(doc)
    top = {"id": 1, "name": "x"}
    doc = {"id": 1, "name": {"id": 2, "name": [top, top, {"id": 3, "name": top}]}}
    assert tersa.dumps(doc) == expected(doc)


def test_stream_frames_repeat_their_top_level_shape():
    msgs = [{"id": i, "name": f"n{i % 3}", "kids": [{"id": i}]} for i in range(50)]
    data = tersa.dumps_stream(msgs)
    assert data == P.encode_stream([to_ref(m) for m in msgs])
    enc = tersa.Encoder()
    assert b"".join(enc.write(m) for m in msgs) == data


@pytest.mark.parametrize("mutation", ["add", "replace", "delete"])
def test_default_that_changes_the_dict_being_written(mutation):
    """The entries are read in place: a default that changes the dict (an
    insertion may move its entry table) must stop the encoding, not let it
    read freed or moved entries."""
    holder = {"a": 1, "b": object(), "c": "after"}

    def default(o):
        if mutation == "add":
            for i in range(100):
                holder[f"new{i}"] = i
        elif mutation == "replace":
            holder["c"] = "changed"
        else:
            del holder["c"]
        gc.collect()
        return "x"

    with pytest.raises(tersa.EncodeError, match="dict changed during encoding"):
        tersa.dumps(holder, default=default)
