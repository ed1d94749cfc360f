"""The message-queue section's record benchmark in Python (bench/README.md):
arrays of 1 to 1,000,000 Stock records (stock.py) with named and with
integer-like keys, through orjson, ormsgpack, Tersa and Tersa with the
pre-shared dictionary: bytes, ns per item for encode and decode, memory per
encode + decode (tracemalloc's peak bytes, and the memory blocks the bytes
and the decoded value hold), exactness; and one record alone (the write-up's 26 bytes).

    python bench/queue/records.py --json OUT     (BENCH_MODE=full|quick|smoke)
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import random
import statistics
import sys
import time
import tracemalloc
from importlib import metadata

import orjson
import ormsgpack

import tersa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stock  # noqa: E402

# max: the largest array; timed_max: the largest timed and measured for
# memory (above it, bytes and exactness only); rounds of slice seconds per
# (count, codec, op), in a shuffled order each round; the median is kept.
PLANS = {
    "full": {"max": 1_000_000, "timed_max": 1_000_000, "rounds": 3, "slice": 0.2},
    "quick": {"max": 1_000_000, "timed_max": 100_000, "rounds": 1, "slice": 0.05},
    "smoke": {"max": 1_000, "timed_max": 1_000, "rounds": 1, "slice": 0.002},
}


def codecs(d):
    return [
        ("json", orjson.dumps, orjson.loads),
        ("msgpack", ormsgpack.packb, ormsgpack.unpackb),
        ("tersa", tersa.dumps, tersa.loads),
        ("tersa-dict", lambda v: tersa.dumps(v, dictionary=d), lambda b: tersa.loads(b, dictionaries=d)),
    ]


def per_call(slice_s, fn, arg):
    """Seconds per call: calls repeated until slice_s has passed (at least one)."""
    calls = 0
    t0 = time.perf_counter()
    while True:
        fn(arg)
        calls += 1
        t = time.perf_counter() - t0
        if t >= slice_s:
            return t / calls


def memory(enc, dec, value):
    """One encode + decode: tracemalloc's peak bytes, and the memory blocks the
    encoded bytes and decoded value hold (sys.getallocatedblocks, untraced:
    a tracemalloc snapshot of a million records takes longer than the run)."""
    gc.collect()
    before = sys.getallocatedblocks()
    data = enc(value)
    back = dec(data)
    blocks = sys.getallocatedblocks() - before
    del data, back
    gc.collect()
    tracemalloc.start()
    try:
        back = dec(enc(value))
        peak = tracemalloc.get_traced_memory()[1]
        del back
    finally:
        tracemalloc.stop()
    return peak, blocks


def counts(top):
    c = [1]
    while c[-1] * 10 <= top:
        c.append(c[-1] * 10)
    return c


def run(mode):
    plan = PLANS[mode]
    strings, shapes = stock.dictionary_parts()
    d = tersa.Dictionary(strings=strings, shapes=shapes)
    cs = codecs(d)
    rows, single = [], []
    for keys in stock.KEYS:
        one = stock.records(1, keys)[0]
        for name, enc, dec in cs:
            b = enc(one)
            single.append({"keys": keys, "codec": name, "bytes": len(b), "hex": b.hex(), "exact": dec(b) == one})
        for n in counts(plan["max"]):
            value = stock.records(n, keys)
            cases = []
            for name, enc, dec in cs:
                data = enc(value)
                row = {"keys": keys, "codec": name, "count": n, "bytes": len(data),
                       "sha256": hashlib.sha256(data).hexdigest()[:16], "exact": dec(data) == value}
                if n <= plan["timed_max"]:
                    row["peak_bytes"], row["blocks"] = memory(enc, dec, value)
                rows.append(row)
                cases.append((name, enc, dec, row, data))
            if n > plan["timed_max"]:
                print(f"python {keys} {n}: " + ", ".join(f"{c[0]} {c[3]['bytes']} B" for c in cases), file=sys.stderr)
                del value, cases
                gc.collect()
                continue
            times = {id(c[3]): [] for c in cases}
            for rnd in range(1 if n >= 100_000 else 0, plan["rounds"] + 1):
                order = list(cases)
                random.Random(n + rnd).shuffle(order)
                for name, enc, dec, row, data in order:
                    e = per_call(plan["slice"], enc, value)
                    t = per_call(plan["slice"], dec, data)
                    if rnd:
                        times[id(row)].append((e, t))
            for name, enc, dec, row, data in cases:
                ts = times[id(row)]
                row["encode_ns_per_item"] = statistics.median(e for e, _ in ts) * 1e9 / n
                row["decode_ns_per_item"] = statistics.median(t for _, t in ts) * 1e9 / n
                row["ns_per_item"] = row["encode_ns_per_item"] + row["decode_ns_per_item"]
            print(f"python {keys} {n}: " + ", ".join(f"{c[0]} {c[3]['bytes']} B {c[3]['ns_per_item']:.0f} ns" for c in cases),
                  file=sys.stderr)
            del value, cases
            gc.collect()
    return {
        "schema": "tersa-bench-queue/1", "language": "python",
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": {n: metadata.version(n) for n in ("orjson", "ormsgpack", "tersa")},
        "dictionary": {"id": f"{d.id:016x}", "strings": len(d.strings), "shapes": len(d.shapes), "bytes": len(d.serialize())},
        "params": plan,
        "allocations": "one encode + decode: tracemalloc's peak bytes; blocks held by the bytes and the decoded value (sys.getallocatedblocks)",
        "single": single, "rows": rows,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    mode = os.environ.get("BENCH_MODE") or ("smoke" if os.environ.get("SMOKE") else "quick" if os.environ.get("QUICK") else "full")
    result = run(mode)
    text = json.dumps(result, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    else:
        print(text)
    bad = [r for r in result["rows"] + result["single"] if not r["exact"]]
    for r in bad:
        print(f"inexact round trip: {r['codec']} {r['keys']} {r.get('count', 'single')}", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
