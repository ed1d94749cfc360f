#!/usr/bin/env python3
"""Python section of `make bench`: tersa beside orjson, ormsgpack, msgpack,
cbor2 and json on the seed and large documents.

For every document and codec: bytes, encode and decode documents per second,
and whether decode(encode(doc)) is exactly the document (types, float bits,
key order). Everything is measured in one process, interleaved: each round
visits every document and, per document, every (codec, operation) pair in a
shuffled order, each for a fixed time slice in geometrically growing batches;
the rate reported is the median over the rounds (a warm-up round is
discarded). Compare ratios, not absolute rates: the machine may be shared.

    python bench/python/bench.py [--json OUT]           seed and large documents
    python bench/python/bench.py --kinds [--json OUT]   the kinds corpus (kinds.py)

Environment: QUICK=1 (short run), SMOKE=1 (two documents, one round),
ONLY=tersa,orjson / EXCEPT=cbor2 (codec filters), CORPUS=dir (seed folder),
DOCS=api,time (keep some documents), BENCH_ROOT (repository root),
BENCH_MODE=full|quick|smoke (set by bench/run.rb), KINDS_DOCS=a,b (--kinds). Writes schema
`tersa-bench/1` with --json (see bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import lzma
import math
import os
import platform
import random
import struct
import sys
import time
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_ROOT") or Path(__file__).resolve().parents[2])
MODE = os.environ.get("BENCH_MODE") or ("smoke" if os.environ.get("SMOKE") else "quick" if os.environ.get("QUICK") else "full")
# rounds after the warm-up, time slice per (codec, operation) in seconds
PLAN = {"full": (5, 0.06), "quick": (3, 0.02), "smoke": (1, 0.005)}[MODE]

# --------------------------------------------------------------------------
# Codecs
# --------------------------------------------------------------------------

CODECS = ["tersa", "orjson", "ormsgpack", "msgpack", "cbor2", "json"]


def load_codecs(wanted):
    """name -> (encode, decode, version); missing libraries are noted, not fatal."""
    from importlib import metadata

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "?"

    out, notes = {}, []
    for name in wanted:
        try:
            if name == "tersa":
                try:
                    import tersa
                except ImportError:
                    sys.path.insert(0, str(ROOT / "python" / "src"))
                    import tersa
                out[name] = (tersa.dumps, tersa.loads, tersa.__version__ + f" (core {tersa.CORE_VERSION})")
            elif name == "orjson":
                import orjson

                out[name] = (orjson.dumps, orjson.loads, version("orjson"))
            elif name == "ormsgpack":
                import ormsgpack

                out[name] = (ormsgpack.packb, ormsgpack.unpackb, version("ormsgpack"))
            elif name == "msgpack":
                import msgpack

                out[name] = (msgpack.packb, msgpack.unpackb, version("msgpack"))
            elif name == "cbor2":
                import cbor2

                out[name] = (cbor2.dumps, cbor2.loads, version("cbor2"))
            elif name == "json":
                dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

                out[name] = ((lambda o, _d=dumps: _d(o).encode()), json.loads, "stdlib " + platform.python_version())
        except ImportError as e:
            notes.append(f"`{name}` is not installed ({e}); skipped. `pip install -r bench/python/requirements.txt`")
    return out, notes


def codec_filter():
    names = list(CODECS)
    only = [x for x in os.environ.get("ONLY", "").split(",") if x]
    exclude = [x for x in os.environ.get("EXCEPT", "").split(",") if x]
    unknown = [x for x in only + exclude if x not in CODECS]
    if unknown:
        sys.exit(f"unknown codec(s) {', '.join(unknown)}; known: {', '.join(CODECS)}")
    if only:
        names = [n for n in names if n in only]
    return [n for n in names if n not in exclude]


# --------------------------------------------------------------------------
# Documents
# --------------------------------------------------------------------------


def read_json(path: Path):
    data = path.read_bytes()
    if path.name.endswith(".xz"):
        data = lzma.decompress(data)
    return json.loads(data)


def documents():
    seed_dir = Path(os.environ.get("CORPUS") or ROOT / "bench" / "corpus" / "seed")
    seed = sorted(p for p in seed_dir.iterdir() if p.name.endswith((".json", ".json.xz")))
    if not seed:
        sys.exit(f"no *.json documents in {seed_dir}")
    large = sorted((ROOT / "bench" / "corpus" / "large").glob("*.json.xz"))
    keep = [x for x in os.environ.get("DOCS", "").split(",") if x]
    name = lambda p: p.name.split(".json")[0]  # noqa: E731
    if keep:
        seed = [p for p in seed if name(p) in keep]
    elif MODE == "smoke":
        seed = seed[:2]
    if MODE == "smoke":
        large = [p for p in large if name(p) == "twitter"]
    return [("seed", name(p), read_json(p)) for p in seed] + [("large", name(p), read_json(p)) for p in large]


# --------------------------------------------------------------------------
# Exactness
# --------------------------------------------------------------------------


def exact(a, b) -> bool:
    """Same value, same types (int is not float is not bool), float bits, key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, list):
        return len(a) == len(b) and all(exact(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            exact(ka, kb) and exact(va, vb) for (ka, va), (kb, vb) in zip(a.items(), b.items())
        )
    return a == b


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------


def rate(fn, arg, seconds: float) -> float:
    """Calls per second of fn(arg), over at least `seconds`, in growing batches."""
    calls, batch = 0, 1
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        for _ in range(batch):
            fn(arg)
        calls += batch
        elapsed = time.perf_counter() - start
        if elapsed < seconds / 8:
            batch *= 2
    return calls / elapsed


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def run():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the results (schema tersa-bench/1) to OUT")
    parser.add_argument("--kinds", action="store_true", help="measure the kinds corpus (bench/corpus/kinds) instead")
    args = parser.parse_args()
    if args.kinds:
        import kinds

        return kinds.run(args.json)

    codecs, notes = load_codecs(codec_filter())
    docs = documents()
    rounds, slice_s = PLAN
    progress(f"python bench: {MODE} run, {len(docs)} documents, codecs {', '.join(codecs)}, "
             f"{rounds} rounds + warm-up, {slice_s * 1000:.0f} ms slices")

    # Encode once per codec and document: sizes, payloads, exactness.
    rows = {}
    for group, name, doc in docs:
        for codec, (enc, dec, _) in codecs.items():
            row = {"document": name, "group": group, "codec": codec}
            try:
                data = enc(doc)
                row["bytes"] = len(data)
                row["correct"] = exact(dec(data), doc)
                row["_payload"] = data
            except Exception as e:  # a codec that cannot handle the document
                row["correct"] = False
                row["error"] = f"{type(e).__name__}: {e}"
            rows[(name, codec)] = row

    samples = {k: {"encode": [], "decode": []} for k in rows}
    rng = random.Random(1)
    t0 = time.perf_counter()
    for r in range(rounds + 1):
        for group, name, doc in docs:
            pairs = [(c, op) for c in codecs for op in ("encode", "decode") if "error" not in rows[(name, c)]]
            rng.shuffle(pairs)
            for codec, op in pairs:
                enc, dec, _ = codecs[codec]
                fn, arg = (enc, doc) if op == "encode" else (dec, rows[(name, codec)]["_payload"])
                per_s = rate(fn, arg, slice_s * (1 if group == "seed" else 2))
                if r > 0:
                    samples[(name, codec)][op].append(per_s)
        progress(f"  round {r}/{rounds} done ({time.perf_counter() - t0:.0f} s)" + (" (warm-up)" if r == 0 else ""))

    out_rows = []
    for key, row in rows.items():
        for op, field in (("encode", "encode_per_s"), ("decode", "decode_per_s")):
            if samples[key][op]:
                row[field] = round(median(samples[key][op]), 1)
        row.pop("_payload", None)
        out_rows.append(row)

    result = {
        "schema": "tersa-bench/1",
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": {c: v for c, (_, _, v) in codecs.items()},
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count()},
        "mode": MODE,
        "notes": notes + [
            f"{MODE} run: {rounds} rounds after a warm-up, {slice_s * 1000:.0f} ms slices per codec and "
            "operation (twice that for large documents), medians; interleaved, shuffled, GC enabled.",
            "json is the standard library (compact separators, ensure_ascii=False); the others with their "
            "default options.",
        ],
        "documents": out_rows,
        "tables": summary_tables(out_rows, codecs),
    }
    print_summary(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    bad = [r for r in out_rows if not r["correct"] and r["codec"] == "tersa"]
    return 1 if bad else 0


# --------------------------------------------------------------------------
# Summaries
# --------------------------------------------------------------------------


def groups(rows):
    """(group, its documents in order, (document, codec) -> row) for each group that has rows."""
    for group in ("seed", "large"):
        grp = [r for r in rows if r.get("group", "seed") == group]
        if grp:
            yield group, list(dict.fromkeys(r["document"] for r in grp)), {(r["document"], r["codec"]): r for r in grp}


def summary_tables(rows, codecs):
    tables = []
    for group, docs, by in groups(rows):
        tersa_ok = all((d, "tersa") in by for d in docs) and "tersa" in codecs
        table_rows = []
        for c in codecs:
            cr = [by[(d, c)] for d in docs if (d, c) in by]
            if not cr:
                continue
            sizes = [r["bytes"] for r in cr if "bytes" in r]
            enc = geomean([r.get("encode_per_s") for r in cr])
            dec = geomean([r.get("decode_per_s") for r in cr])
            if tersa_ok and c != "tersa":
                # tersa's advantage: geometric mean over documents of tersa rate / codec rate
                enc_x = geomean([by[(d, "tersa")].get("encode_per_s", 0) / by[(d, c)]["encode_per_s"]
                                 for d in docs if by[(d, c)].get("encode_per_s")])
                dec_x = geomean([by[(d, "tersa")].get("decode_per_s", 0) / by[(d, c)]["decode_per_s"]
                                 for d in docs if by[(d, c)].get("decode_per_s")])
                size_x = geomean([by[(d, "tersa")]["bytes"] / by[(d, c)]["bytes"] for d in docs if by[(d, c)].get("bytes")])
                ratios = [f"{size_x:.2f}", f"{enc_x:.2f}", f"{dec_x:.2f}"]
            else:
                ratios = ["1.00", "1.00", "1.00"] if c == "tersa" else ["", "", ""]
            table_rows.append([
                c,
                f"{sum(sizes) / len(sizes):,.0f}" if sizes else "",
                f"{enc:,.0f}", f"{dec:,.0f}", *ratios,
                f"{sum(r['correct'] for r in cr)}/{len(cr)}",
            ])
        tables.append({
            "title": f"Python, {group} documents: averages and geometric means "
                     f"(tersa ÷ codec: size smaller is better, rates larger is better)",
            "columns": ["codec", "avg bytes", "encode docs/s (geomean)", "decode docs/s (geomean)",
                        "tersa size ÷", "tersa encode ×", "tersa decode ×", "exact"],
            "rows": table_rows,
        })
    return tables


def print_summary(result):
    print(f"\n{result['runtime']}  ({result['mode']} run)  " +
          ", ".join(f"{k} {v}" for k, v in result["libraries"].items()))
    for note in result["notes"]:
        print(f"  note: {note}")
    rows = result["documents"]
    codecs = list(result["libraries"])
    for group, docs, by in groups(rows):
        print(f"\n== {group} documents ==")
        for metric, label, fmt in (("bytes", "bytes", "{:,.0f}"), ("encode_per_s", "encode docs/s", "{:,.0f}"),
                                   ("decode_per_s", "decode docs/s", "{:,.0f}")):
            print(f"\n{label:14s}" + "".join(f"{d[:12]:>13s}" for d in docs))
            for c in codecs:
                cells = []
                for d in docs:
                    r = by.get((d, c))
                    v = r.get(metric) if r else None
                    mark = "" if not r or r["correct"] else "✗"
                    cells.append(f"{(fmt.format(v) + mark) if v is not None else 'n/a':>13s}")
                print(f"{c:14s}" + "".join(cells))
    for t in result["tables"]:
        print(f"\n{t['title']}")
        widths = [max(len(str(x)) for x in col) for col in zip(t["columns"], *t["rows"])]
        for line in [t["columns"]] + t["rows"]:
            print("  " + "  ".join(str(x).rjust(w) for x, w in zip(line, widths)))
    # issue 6's targets
    seed = {(r["document"], r["codec"]): r for r in rows if r.get("group", "seed") == "seed"}
    docs = list(dict.fromkeys(d for d, _ in seed))
    for peer, op, target in (("orjson", "encode_per_s", 1.1), ("ormsgpack", "decode_per_s", 1.3)):
        if all((d, peer) in seed and (d, "tersa") in seed for d in docs):
            x = geomean([seed[(d, "tersa")].get(op, 0) / seed[(d, peer)][op] for d in docs if seed[(d, peer)].get(op)])
            ok = "met" if x >= target else "NOT met"
            print(f"\ntarget: tersa {op.split('_')[0]} ≥ {target}× {peer}: {x:.2f}× ({ok})")
    wrong = [f"{r['document']}/{r['codec']}" for r in rows if not r["correct"]]
    print("\nexact round trips: " + ("all" if not wrong else "NOT for " + ", ".join(wrong)))


if __name__ == "__main__":
    gc.enable()
    sys.exit(run())
