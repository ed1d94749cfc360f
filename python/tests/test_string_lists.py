"""Lists of strs, which dumps writes in one call (tersa_write_string_array):
the same bytes as the item-by-item path that tuples take, and the same
errors at the same paths."""

from __future__ import annotations

import random

import pytest

import tersa
from conftest import as_tuples

POOL = ["", "a", "ab", "abc", "abcdefgh", "abcdefghij-klm", "2024-01-02T03:04:05Z", "2024-01-02T03:04:06.5+01:00",
        "2024-13-02T03:04:05Z", "https://example.com/items/1", "https://example.com/items/22", "café", "東京",
        "😀 emoji", "x" * 40, "x" * 41]


def random_str(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(POOL)
    n = rng.randrange(12) if rng.random() < 0.75 else rng.randrange(90)
    return "".join(rng.choice("abcé") for _ in range(n))


def random_doc(rng: random.Random):
    """Lists of strs (some longer than the one-call limit of 64, some with
    another item among the strs) at the top, in lists, in dicts, in tuples."""
    rows = []
    for _ in range(rng.randrange(1, 8)):
        n = rng.randrange(6) if rng.random() < 0.7 else rng.randrange(150)
        row = [random_str(rng) for _ in range(n)]
        if row and rng.random() < 0.2:
            row[rng.randrange(len(row))] = rng.choice([1, None, 2.5, ["nested"], {"k": "v"}])
        kind = rng.randrange(3)
        rows.append(row if kind == 0 else {"xs": row, "n": len(row)} if kind == 1 else [0, row])
    return rows


def test_string_lists_match_the_item_by_item_path():
    rng = random.Random(13)
    for _ in range(2000):
        doc = random_doc(rng)
        data = tersa.dumps(doc)
        assert data == tersa.dumps(as_tuples(doc))
        assert tersa.loads(data) == doc


def test_string_lists_after_a_table_of_many_strings():
    """References of every width: rows repeating strings of a large table."""
    words = [f"w{i}" for i in range(70000)]
    rows = [words[i:i + 10] for i in range(0, 70000, 10)] + [words[i:i + 64] for i in range(0, 70000, 997)]
    assert tersa.dumps(rows) == tersa.dumps(as_tuples(rows))
    assert tersa.loads(tersa.dumps(rows)) == rows


@pytest.mark.parametrize("n", [2, 64, 65])
def test_surrogate_in_a_string_list_reported_at_its_index(n):
    row = ["ab"] * n
    row[n - 1] = "\ud800"
    with pytest.raises(tersa.EncodeError, match="surrogate") as info:
        tersa.dumps({"rows": [row]})
    assert info.value.path == f'$["rows"][0][{n - 1}]'


def test_str_subclass_in_a_string_list():
    class S(str):
        pass

    row = ["ab", S("cd"), "ef"]
    assert tersa.dumps(row) == tersa.dumps(tuple(row))


class StrSub(str):
    pass


@pytest.mark.parametrize("odd", ["café", "東京", 7, None, StrSub("sub")])
def test_one_other_item_at_each_position(odd):
    """The list is read two strs at a time: an item that is not a compact
    ASCII str, first or second of a pair or the last of an odd count."""
    for n in range(1, 10):
        for at in range(n):
            row = [f"s{i}" for i in range(n)]
            row[at] = odd
            assert tersa.dumps(row) == tersa.dumps(tuple(row))
            assert tersa.loads(tersa.dumps(row)) == row
