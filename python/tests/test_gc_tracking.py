"""loads() builds large values with their containers kept out of the garbage
collector and tracks them all before it returns (decode.c, dec_hold): what
the caller gets must be tracked exactly as if it had been built tracked, on
success and on failure, and cycles made through it later must be collected."""

from __future__ import annotations

import gc
import weakref

import pytest

import tersa


def _containers(v, out):
    if isinstance(v, (list, dict, tuple, tersa.Map)):
        out.append(v)
    if isinstance(v, (list, tuple)):
        for x in v:
            _containers(x, out)
    elif isinstance(v, dict):
        for k, x in v.items():
            _containers(k, out)
            _containers(x, out)
    elif isinstance(v, tersa.Map):
        for k, x in v.pairs:
            _containers(k, out)
            _containers(x, out)
    return out


def _large_value():
    # lists of scalars (the inline leaf lists), nested lists, dicts of repeated
    # shapes (templates), dicts of one-off shapes, generic maps, tuple keys
    rows = [{"id": i, "xy": [i * 0.5, -i * 0.25], "tags": ["a%d" % (i % 7), "b"], "child": {"n": i}} for i in range(400)]
    sparse = [{"k%d" % i: i, "v": [i]} for i in range(300)]
    generic = {(i, "t"): [i, {"deep": [i]}] for i in range(50)}
    return {"rows": rows, "sparse": sparse, "generic": generic, "grid": [[float(j) for j in range(5)] for _ in range(200)],
            "empty": [[], {}, [[]]], "map": tersa.Map([(tersa.Symbol("a"), [1]), ("a", {"x": [2]})])}


def test_large_value_is_big_enough_to_defer():
    assert len(tersa.dumps(_large_value())) > 8192


@pytest.mark.parametrize("option", [0, tersa.OPT_SYMBOL_AS_STR])
def test_containers_tracked_as_when_built_tracked(option):
    value = _large_value()
    back = tersa.loads(tersa.dumps(value), option=option)
    for c in _containers(back, []):
        if isinstance(c, list):
            assert gc.is_tracked(c)
        elif isinstance(c, dict):
            # as CPython tracks a dict filled one item at a time
            assert gc.is_tracked(c) == gc.is_tracked({k: v for k, v in c.items()})


def test_cycle_through_decoded_lists_is_collected():
    class Node:
        pass

    back = tersa.loads(tersa.dumps(_large_value()))
    node = Node()
    node.value = back
    back["rows"][3]["xy"].append(node)  # a cycle through a list that was built untracked
    back["grid"][7].append(back)
    ref = weakref.ref(node)
    del node, back
    gc.collect()
    assert ref() is None


def test_failed_decode_leaves_nothing_untracked_or_alive():
    data = tersa.dumps(_large_value())
    gc.collect()
    before = len(gc.get_objects())
    for cut in (len(data) // 3, len(data) // 2, len(data) - 1):
        with pytest.raises(tersa.DecodeError):
            tersa.loads(data[:cut])
    gc.collect()
    assert len(gc.get_objects()) <= before + 10


def test_stream_values_are_tracked():
    data = tersa.dumps_stream([_large_value() for _ in range(3)])
    dec = tersa.Decoder()
    dec.feed(data)
    fed = list(dec)
    dec.close()
    for values in (tersa.loads_stream(data), fed):
        assert len(values) == 3
        for v in values:
            for c in _containers(v, []):
                if isinstance(c, list):
                    assert gc.is_tracked(c)
