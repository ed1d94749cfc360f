"""dumps lends strs to the writer (its table points at their bytes): Python
code run during an encoding may drop the last reference to a str already
written, and the writer must have copied it first (tersa_writer_settle_borrowed).

Each test frees written strs from inside a `default` and then makes strs of
the same size (Python's allocator hands the freed memory out again), so a
table entry left pointing at a freed str would see other bytes: later equal
strings would miss it, or other strings would hit it, and the bytes would
differ from those of the same value encoded without the mutation."""

from __future__ import annotations

import pytest

import tersa

N = 48
_kept: list = []  # strs made in place of freed ones, alive until the test ends


def fresh(prefix: str, i: int) -> str:
    # A new str object each call (f-strings are built at run time, never interned).
    return f"{prefix}-{i:04d}-{'x' * 24}"


def refill(prefix: str) -> None:
    # Appended, never freed here: the memory just freed must go to these.
    _kept.extend(fresh(prefix, i) for i in range(4 * N))


@pytest.fixture(autouse=True)
def _drop_kept():
    yield
    _kept.clear()


class Marker:
    pass


def test_default_replaces_written_list_items():
    data = [fresh("item", i) for i in range(N)]
    marker = Marker()
    data.append(marker)
    data.extend(fresh("item", i) for i in range(N))

    def default(o):
        assert o is marker
        for i in range(N):
            data[i] = None  # the list held the only reference to each written str
        refill("gone")
        return "done"

    out = tersa.dumps(data, default=default)
    expected = [fresh("item", i) for i in range(N)] + ["done"] + [fresh("item", i) for i in range(N)]
    assert out == tersa.dumps(expected)
    assert tersa.loads(out) == expected


def test_default_clears_written_dict():
    first = {fresh("key", i): fresh("value", i) for i in range(N)}
    marker = Marker()
    data = [first, marker, [fresh("value", i) for i in range(N)]]

    def default(o):
        first.clear()
        refill("lost")
        return fresh("value", N)

    out = tersa.dumps(data, default=default)
    expected = [
        {fresh("key", i): fresh("value", i) for i in range(N)},
        fresh("value", N),
        [fresh("value", i) for i in range(N)],
    ]
    assert out == tersa.dumps(expected)
    assert tersa.loads(out) == expected


class Conv:
    def __init__(self, i: int) -> None:
        self.i = i


def test_conversion_results_dropped_after_writing():
    # Each default result is held only by the encoder, which drops it once
    # written; the next result reuses its memory.
    data = [Conv(i) for i in range(N)] + [fresh("conv", i) for i in range(N)]
    out = tersa.dumps(data, default=lambda o: fresh("conv", o.i))
    expected = [fresh("conv", i) for i in range(N)] * 2
    assert out == tersa.dumps(expected)
    assert tersa.loads(out) == expected


def test_conversion_to_list_and_dict():
    # Strings inside a converted list and a dataclass-like dict, dropped with them.
    data = [Conv(i) for i in range(N)] + [fresh("conv", i) for i in range(N)]

    def default(o):
        return [fresh("conv", o.i)] if o.i % 2 else {"k": fresh("conv", o.i)}

    out = tersa.dumps(data, default=default)
    expected = [[fresh("conv", i)] if i % 2 else {"k": fresh("conv", i)} for i in range(N)]
    expected += [fresh("conv", i) for i in range(N)]
    assert out == tersa.dumps(expected)


def test_default_inside_dict_values_and_string_lists():
    # Lists of strs (written by one call) and dict values, freed by a default
    # reached from a later dict.
    rows = [[fresh("cell", i), fresh("cell", i + 1)] for i in range(N)]
    values = {"a": fresh("val", 1), "b": fresh("val", 2)}
    data = {"rows": rows, "values": values, "mark": Marker(), "again": [fresh("cell", i) for i in range(N + 1)]}

    def default(o):
        rows.clear()
        values.clear()
        refill("cellx")
        return None

    out = tersa.dumps(data, default=default)
    expected = {
        "rows": [[fresh("cell", i), fresh("cell", i + 1)] for i in range(N)],
        "values": {"a": fresh("val", 1), "b": fresh("val", 2)},
        "mark": None,
        "again": [fresh("cell", i) for i in range(N + 1)],
    }
    assert out == tersa.dumps(expected)
