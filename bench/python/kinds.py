"""The kinds section in Python (`bench.py --kinds`): every document of
bench/corpus/kinds and bench/corpus/large, tersa beside each peer: bytes,
encode and decode rates, exactness. Per document, a warm-up round then
rounds in which every (codec, operation) pair runs once in a shuffled order
for a fixed time slice; the rate is the median over the rounds. A per-record
document (manifest "per_record") is an array of records, each encoded to its
own buffer and decoded from it.

Environment: KINDS_DOCS=a,b (documents), ONLY/EXCEPT (codecs), QUICK=1,
SMOKE=1 or BENCH_MODE (plan). Exit status 1 when a round trip is not exact
and no known limit of the peer explains it (Tersa is never excused).
"""

from __future__ import annotations

import json
import lzma
import os
import platform
import random
import sys
import time
from pathlib import Path

import bench

# rounds after the warm-up round, seconds per (codec, operation) pair in a round and in the warm-up
# round (CPython has no JIT to warm up: the warm-up round fills caches)
PLANS = {"full": (4, 0.04, 0.04), "quick": (2, 0.012, 0.012), "smoke": (1, 0.003, 0.001)}

# What a peer cannot carry, by document feature (bench/corpus/kinds/manifest.json):
# a failed or inexact round trip on a document with one of these features is
# reported with the reason and does not fail the run.
LIMITS = {
    "orjson": {"int_beyond_64_bits": "integers beyond 64 bits raise (TypeError: Integer exceeds 64-bit range)"},
    "ormsgpack": {"int_beyond_64_bits": "integers beyond 64 bits raise (TypeError: Integer exceeds 64-bit range)"},
    "msgpack": {"int_beyond_64_bits": "integers beyond 64 bits raise (OverflowError)"},
}


def excuse(codec, features):
    if codec == "tersa":
        return None
    why = [reason for f, reason in LIMITS.get(codec, {}).items() if f in features]
    return "; ".join(dict.fromkeys(why)) or None


def first_difference(a, b, path="$"):
    """Where b differs from a under bench.exact's rules (for the report)."""
    if type(a) is not type(b):
        return f"{path}: {type(b).__name__} instead of {type(a).__name__}"
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(b)} items instead of {len(a)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(b)[:5]} instead of {list(a)[:5]}"
        for k in a:
            d = first_difference(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    return None if bench.exact(a, b) else f"{path}: {b!r:.40} instead of {a!r:.40}"


def documents(mode):
    root = bench.ROOT / "bench" / "corpus" / "kinds"
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    entries = manifest["documents"]
    want = [x for x in os.environ.get("KINDS_DOCS", "").split(",") if x] or (manifest["smoke"] if mode == "smoke" else None)
    if want:
        unknown = sorted(set(want) - {d["name"] for d in entries})
        if unknown:
            sys.exit(f"KINDS_DOCS: unknown document(s) {', '.join(unknown)}")
        entries = [d for d in entries if d["name"] in want]
    for e in entries:
        path = (root / e["file"]).resolve()
        data = path.read_bytes()
        if path.name.endswith(".xz"):
            data = lzma.decompress(data)
        yield e, json.loads(data)


def check(entry, items, codecs):
    """Encodes every item once per codec -> rows, {codec: payloads} of the exact ones."""
    rows, payloads = [], {}
    for name, (enc, dec, _) in codecs.items():
        row = {"document": entry["name"], "group": entry["group"], "codec": name, "correct": False}
        try:
            bufs = [enc(x) for x in items]
            row["bytes"] = sum(len(b) for b in bufs)
            diff = None
            for k, (x, b) in enumerate(zip(items, bufs)):
                back = dec(b)
                if not bench.exact(x, back):
                    diff = first_difference(x, back, f"$[{k}]" if entry.get("per_record") else "$") or "differs"
                    break
            row["correct"] = diff is None
            if diff:
                row["diff"] = diff
            else:
                payloads[name] = bufs
        except Exception as e:  # a codec that cannot carry the document
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        why = excuse(name, entry["features"])
        if why and not row["correct"]:
            row["expected"] = why
        rows.append(row)
    return rows, payloads


def many(fn):
    def run(items):
        for x in items:
            fn(x)
    return run


def time_document(index, entry, items, codecs, payloads, rows, plan):
    rounds, slice_s, warm_s = plan
    single = len(items) == 1
    jobs = []
    for name, bufs in payloads.items():
        enc, dec, _ = codecs[name]
        if single:
            jobs.append((name, "encode", enc, items[0]))
            jobs.append((name, "decode", dec, bufs[0]))
        else:
            jobs.append((name, "encode", many(enc), items))
            jobs.append((name, "decode", many(dec), bufs))
    samples = {(n, op): [] for n, op, _, _ in jobs}
    for r in range(rounds + 1):
        random.Random(r * 7919 + index).shuffle(jobs)
        for name, op, fn, arg in jobs:
            per_s = bench.rate(fn, arg, warm_s if r == 0 else slice_s)
            if r > 0:
                samples[(name, op)].append(per_s)
    for row in rows:
        for op in ("encode", "decode"):
            xs = samples.get((row["codec"], op))
            if xs:
                row[f"{op}_per_s"] = round(bench.median(xs), 2)


def run(json_out):
    mode = bench.MODE
    plan = PLANS[mode]
    codecs, notes = bench.load_codecs(bench.codec_filter())
    t0 = time.perf_counter()
    bench.progress(f"python kinds: {mode} run, codecs {', '.join(codecs)}, {plan[0]} rounds + warm-up, {plan[1] * 1000:.0f} ms slices")
    rows, per_record = [], []
    for i, (entry, doc) in enumerate(documents(mode)):
        items = doc if entry.get("per_record") else [doc]
        if entry.get("per_record"):
            per_record.append(entry["name"])
        doc_rows, payloads = check(entry, items, codecs)
        time_document(i, entry, items, codecs, payloads, doc_rows, plan)
        rows.extend(doc_rows)
        bench.progress(f"  {entry['name']} ({time.perf_counter() - t0:.0f} s)")
    result = {
        "schema": "tersa-bench/1",
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": {c: v for c, (_, _, v) in codecs.items()},
        "mode": mode,
        "notes": notes + [
            f"{mode} run: per document, a warm-up round ({plan[2] * 1000:.0f} ms per pair) then {plan[0]} rounds; each round runs every (codec, operation) pair once, "
            f"shuffled, for {plan[1] * 1000:.0f} ms; the rate is the median over the rounds. GC enabled.",
            "Exact: same types (int is not float is not bool), float bits (-0.0 is not 0.0), key order. Codecs as in the python section.",
            f"{', '.join(per_record) or 'Per-record documents'}: each record encoded and decoded as its own buffer; bytes are the sum.",
        ],
        "limits": {c: LIMITS[c] for c in codecs if c in LIMITS},
        "documents": rows,
    }
    print_summary(rows, list(codecs))
    if json_out:
        Path(json_out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    bad = [r for r in rows if not r["correct"] and (r["codec"] == "tersa" or not r.get("expected"))]
    for r in bad:
        print(f"NOT EXACT: {r['document']} {r['codec']}: {r.get('error') or r.get('diff')}", file=sys.stderr)
    bench.progress(f"python kinds: {time.perf_counter() - t0:.0f} s")
    return 1 if bad else 0


def print_summary(rows, codecs):
    by = {(r["document"], r["codec"]): r for r in rows}
    docs = list(dict.fromkeys(r["document"] for r in rows))
    peers = [c for c in codecs if c != "tersa"]
    print("\nkinds: tersa ÷ peer, encode / decode rate (above 1: tersa is faster); ✗ inexact (limit: a known limit of the peer)")
    print("  " + "document".ljust(16) + "".join(p[:15].rjust(16) for p in peers))
    for d in docs:
        p = by.get((d, "tersa"), {})
        cells = []
        for c in peers:
            r = by.get((d, c))
            if not r or not r["correct"]:
                cells.append(("✗ (limit)" if r and r.get("expected") else "✗").rjust(16))
            elif p.get("encode_per_s") and r.get("encode_per_s"):
                cells.append(f"{p['encode_per_s'] / r['encode_per_s']:.2f} / {p['decode_per_s'] / r['decode_per_s']:.2f}".rjust(16))
            else:
                cells.append("–".rjust(16))
        print("  " + d.ljust(16) + "".join(cells))
