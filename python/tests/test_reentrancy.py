"""Nested calls (a `default` calling dumps/loads) and threads."""

from __future__ import annotations

import threading

import tersa


class Box:
    def __init__(self, v):
        self.v = v


def test_default_calling_dumps_and_loads():
    def default(o):
        inner = tersa.dumps({"inner": [o.v, "shared"]})
        return {"bytes": inner, "back": tersa.loads(inner)}

    value = [{"shared": Box(1)}, Box(2), "shared"]
    out = tersa.loads(tersa.dumps(value, default=default))
    assert out[0]["shared"]["back"] == {"inner": [1, "shared"]}
    assert tersa.loads(out[1]["bytes"]) == {"inner": [2, "shared"]}
    assert out[2] == "shared"


def test_threads_share_nothing():
    errors = []
    values = [{"id": i, "name": f"user_{i}", "tags": ["a", "b", str(i)], "f": i / 3} for i in range(200)]

    def default(o):
        # Re-entrant call inside each thread, while other threads encode too.
        return tersa.loads(tersa.dumps({"boxed": o.v}))

    def work(seed):
        try:
            for i in range(300):
                v = {"payload": values[(seed + i) % 200], "box": Box(i)}
                out = tersa.loads(tersa.dumps(v, default=default))
                assert out == {"payload": values[(seed + i) % 200], "box": {"boxed": i}}
                enc = tersa.Encoder()
                dec = tersa.Decoder()
                for j in range(3):
                    dec.feed(enc.write(values[(seed + j) % 200]))
                assert list(dec) == [values[(seed + j) % 200] for j in range(3)]
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_gc_during_decode_with_reentrant_finalizer():
    import gc

    calls = []

    class Finalizer:
        def __del__(self):
            calls.append(tersa.loads(tersa.dumps(["from finalizer", 1])))

    old = gc.get_threshold()
    gc.set_threshold(1)
    try:
        for _ in range(50):
            f = Finalizer()
            f.cycle = f
            del f
            out = tersa.loads(tersa.dumps([{"k": "v%d" % i, "n": [i]} for i in range(30)]))
            assert out[29] == {"k": "v29", "n": [29]}
    finally:
        gc.set_threshold(*old)
        gc.collect()
    assert calls and all(c == ["from finalizer", 1] for c in calls)
