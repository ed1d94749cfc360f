"""Runs of floats and of ints in lists, which dumps writes a run at a time
(tersa_write_doubles, tersa_write_ints): the same bytes as the item-by-item
path that tuples take, for runs broken by other items and ints of any size."""

from __future__ import annotations

import random

import tersa
from conftest import as_tuples


def random_number(rng: random.Random, kind: str):
    if kind == "float":
        return rng.choice([0.0, -0.0, 1.5, 0.1, 1e300, float("inf"), rng.random(), round(rng.uniform(-1e4, 1e4), 3)])
    bits = rng.choice([4, 30, 31, 60, 62, 63, 64, 70])
    return rng.randrange(-(2 ** bits), 2 ** bits)


def random_list(rng: random.Random) -> list:
    n = rng.randrange(8) if rng.random() < 0.5 else rng.randrange(300)
    kind = rng.choice(["float", "int"])
    out = [random_number(rng, kind) for _ in range(n)]
    # ids counting up: written as deltas in the list's slot
    if kind == "int" and rng.random() < 0.3:
        base = rng.randrange(2 ** 40)
        out = [base + 3 * i for i in range(n)]
    for _ in range(rng.randrange(3)):  # other items break the run
        if out:
            out[rng.randrange(len(out))] = rng.choice(["s", None, True, 2 ** 80, 1.25, 7, [1.0, 2.0]])
    return out


def test_number_runs_match_the_item_by_item_path():
    rng = random.Random(14)
    for _ in range(1500):
        doc = [random_list(rng) for _ in range(rng.randrange(1, 5))]
        if rng.random() < 0.3:
            doc = {"a": doc[0], "b": doc}
        data = tersa.dumps(doc)
        assert data == tersa.dumps(as_tuples(doc))
        back = tersa.loads(data)
        assert repr(back) == repr(doc)


def test_int_runs_at_digit_boundaries():
    # CPython stores ints in 30-bit digits: zero, one digit and more take
    # different paths into the run.
    edges = [0, 1, -1, 2 ** 30 - 1, -(2 ** 30 - 1), 2 ** 30, -(2 ** 30), 2 ** 60 - 1, -(2 ** 60), 2 ** 63 - 1, -(2 ** 63)]
    rng = random.Random(3)
    for _ in range(300):
        run = [rng.choice(edges) for _ in range(rng.randrange(2, 70))]
        data = tersa.dumps(run)
        assert data == tersa.dumps(tuple(run))
        assert tersa.loads(data) == run
    zero = int("0")  # zero made at run time, not only the cached small int
    assert tersa.dumps([zero, 5, zero]) == tersa.dumps((0, 5, 0))
