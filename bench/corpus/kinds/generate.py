#!/usr/bin/env python3
"""Writes the kinds corpus (bench/corpus/kinds): documents shaped like real
API responses, logs and datasets, each stressing one kind of content, and
manifest.json describing them. Python 3.8+ standard library, no network; the
output is the same byte for byte on every run and machine (gen/common.py
says how).

    python3 bench/corpus/kinds/generate.py           write the documents, manifest.json, the README table
    python3 bench/corpus/kinds/generate.py --check   exit 1 if a committed file differs from what would be written
    python3 bench/corpus/kinds/generate.py --list    names, files and sizes

A document under 200,000 bytes is written as NAME.json; a larger one as
NAME.json.xz (xz preset 6, CRC64, as `xz -6`). The layout is one record per
line: top-level arrays one item per line, top-level objects one member per
line and their arrays of records one item per line; everything else compact.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # no __pycache__ among the fixtures

from gen import numeric, records, text  # noqa: E402

SMALL_LIMIT = 200_000
SMOKE = ["weather_current", "deep_tree", "bigints", "tiny_messages"]
INT53 = 2**53 - 1

# name, function, kind, per_record. The docstring of each function is the
# "stresses" text of the manifest.
DOCUMENTS = [
    ("weather_current", numeric.weather_current, "small API response, short decimals", False),
    ("pypi_release", records.pypi_release, "package metadata (PyPI)", False),
    ("api_paginated", records.api_paginated, "API response with nested pagination", False),
    ("deep_tree", records.deep_tree, "deep tree", False),
    ("timestamps", text.timestamps, "timestamp strings and look-alikes", False),
    ("bigints", numeric.bigints, "big integers", False),
    ("prices", numeric.prices, "short decimals", False),
    ("integers", numeric.integers, "integer arrays", False),
    ("sparse_records", records.sparse_records, "sparse heterogeneous records", False),
    ("embeddings", numeric.embeddings, "float arrays (float32 values printed as doubles)", False),
    ("unicode_chat", text.unicode_chat, "unicode-heavy text", False),
    ("git_log", text.git_log, "hex hashes and UUIDs", False),
    ("sensor_floats", numeric.sensor_floats, "float arrays (15-17 significant digits)", False),
    ("geojson", numeric.geojson, "coordinates (lat/lon, 5-7 decimals)", False),
    ("csv_table", text.csv_table, "CSV-like arrays of arrays of strings", False),
    ("mesh", numeric.mesh, "coordinates (3-D mesh vertices)", False),
    ("reviews", text.reviews, "rows of unique long strings", False),
    ("npm_packument", records.npm_packument, "package metadata (npm)", False),
    ("tiny_messages", records.tiny_messages, "many tiny messages", True),
    ("event_log", records.event_log, "event log", False),
    ("wide_records", records.wide_records, "wide records (74 keys)", False),
]

# bench/corpus/large belongs to the corpus for reporting; its files are fixed.
LARGE = [
    ("canada", "float arrays (coordinates, up to 17 significant digits)",
     "~111,000 floats with up to 17 significant digits: a country's border as GeoJSON."),
    ("citm_catalog", "repeated keys and shapes",
     "Many repeated keys and shapes, integer-keyed maps, nulls: an event catalogue."),
    ("twitter", "API response, non-ASCII text",
     "Non-ASCII strings, many repeated keys, nested objects, 64-bit ids (beyond 2^53)."),
]


def compact(v) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def is_records(v) -> bool:
    return isinstance(v, list) and len(v) > 1 and all(isinstance(x, (dict, list)) for x in v)


def layout(doc) -> str:
    """One record per line (see the module note)."""
    if isinstance(doc, list):
        return "[\n" + ",\n".join(compact(x) for x in doc) + "\n]\n"
    if isinstance(doc, dict):
        members = []
        for k, v in doc.items():
            body = "[\n" + ",\n".join(compact(x) for x in v) + "\n]" if is_records(v) else compact(v)
            members.append(f"{compact(k)}:{body}")
        return "{\n" + ",\n".join(members) + "\n}\n"
    return compact(doc) + "\n"


def xz(data: bytes) -> bytes:
    return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)


# --------------------------------------------------------------------------
# What a document holds: the features a codec may not carry, and counts.
# --------------------------------------------------------------------------


def describe(doc):
    counts = {"objects": 0, "arrays": 0, "strings": 0, "integers": 0, "floats": 0, "booleans": 0, "nulls": 0}
    feats = set()
    max_depth = 0
    stack = [(doc, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            counts["objects"] += 1
            max_depth = max(max_depth, depth)
            for k, x in v.items():
                if any(ord(c) > 0xFFFF for c in k):
                    feats.add("non_bmp")
                stack.append((x, depth + 1))
        elif isinstance(v, list):
            counts["arrays"] += 1
            max_depth = max(max_depth, depth)
            stack.extend((x, depth + 1) for x in v)
        elif isinstance(v, bool):
            counts["booleans"] += 1
        elif isinstance(v, int):
            counts["integers"] += 1
            if abs(v) > INT53:
                feats.add("int_beyond_2^53")
            if 2**63 <= v < 2**64:
                feats.add("uint64")
            if v < -(2**63) or v >= 2**64:
                feats.add("int_beyond_64_bits")
        elif isinstance(v, float):
            counts["floats"] += 1
            if v == 0.0 and str(v).startswith("-"):
                feats.add("negative_zero")
            elif v == int(v) and abs(v) < 2**53:
                feats.add("integral_floats")
        elif isinstance(v, str):
            counts["strings"] += 1
            if any(ord(c) > 0xFFFF for c in v):
                feats.add("non_bmp")
        elif v is None:
            counts["nulls"] += 1
    if max_depth > 100:
        feats.add("nesting_beyond_100")
    return sorted(feats), max_depth, counts


FEATURES = {
    "int_beyond_2^53": "integers beyond ±(2^53−1): JavaScript must read them as BigInt (JSON.parse would round them)",
    "uint64": "unsigned 64-bit integers in [2^63, 2^64): beyond a signed 64-bit integer",
    "int_beyond_64_bits": "integers beyond [−2^63, 2^64−1]: no 64-bit integer holds them (big-integer forms only)",
    "negative_zero": "-0.0 (distinct from 0.0)",
    "integral_floats": "floats with integral values written as 20.0 (JavaScript has one number type and reads them as integers)",
    "nesting_beyond_100": "containers nested deeper than 100 levels",
    "non_bmp": "characters outside the Basic Multilingual Plane (emoji), surrogate pairs in UTF-16",
}


def doc_entry(name, kind, stresses, doc, file, per_record):
    feats, depth, counts = describe(doc)
    e = {"name": name, "file": file, "kind": kind, "stresses": stresses,
         "json_bytes": len(compact(doc).encode()), "max_depth": depth, "features": feats, "values": counts}
    if per_record:
        e["per_record"] = True
        e["records"] = len(doc)
    return e


def build():
    """-> ({relative path: bytes}, manifest dict)."""
    files = {}
    docs = []
    for name, fn, kind, per_record in DOCUMENTS:
        doc = fn()
        if per_record and not isinstance(doc, list):
            raise SystemExit(f"{name}: a per-record document must be an array")
        raw = layout(doc).encode()
        json.loads(raw)  # the layout must stay valid JSON
        if len(raw) < SMALL_LIMIT:
            path = f"{name}.json"
            files[path] = raw
        else:
            path = f"{name}.json.xz"
            files[path] = xz(raw)
        stresses = " ".join((fn.__doc__ or "").split())
        docs.append(doc_entry(name, kind, stresses, doc, path, per_record))
    for name, kind, stresses in LARGE:
        src = HERE.parent / "large" / f"{name}.json.xz"
        doc = json.loads(lzma.decompress(src.read_bytes()))
        docs.append({**doc_entry(name, kind, stresses, doc, f"../large/{name}.json.xz", False), "group": "large"})
    for d in docs:
        d.setdefault("group", "kinds")
    manifest = {
        "schema": "tersa-kinds/1",
        "generator": "bench/corpus/kinds/generate.py",
        "notes": [
            "group 'kinds' documents are generated here; group 'large' are bench/corpus/large, listed for reporting.",
            "per_record: the document is an array of records and a benchmark encodes and decodes each record as its own buffer.",
            "JavaScript: every integer beyond ±(2^53−1) must be read as a BigInt (feature int_beyond_2^53); "
            "JSON.parse would round it. Other languages read integers exactly.",
        ],
        "features": FEATURES,
        # the documents a smoke run (SMOKE=1, part of `make test`) measures: small, and covering the
        # per-record path, big integers and deep nesting
        "smoke": SMOKE,
        "documents": docs,
    }
    files["manifest.json"] = (json.dumps(manifest, ensure_ascii=False, indent=1) + "\n").encode()
    return files, manifest


README_START = "<!-- documents:start (written by generate.py) -->"
README_END = "<!-- documents:end -->"


def readme_table(manifest) -> str:
    lines = ["| document | file | compact JSON bytes | kind | depth | features |", "|---|---|---:|---|---:|---|"]
    for d in manifest["documents"]:
        feats = ", ".join(d["features"]) or "–"
        kind = d["kind"] + (" (per record)" if d.get("per_record") else "")
        lines.append(f"| {d['name']} | `{d['file']}` | {d['json_bytes']:,} | {kind} | {d['max_depth']} | {feats} |")
    lines.append("")
    for d in manifest["documents"]:
        if d["group"] == "kinds":
            lines.append(f"- **{d['name']}**: {d['stresses']}")
    return "\n".join(lines)


def with_readme(files, manifest):
    path = HERE / "README.md"
    text = path.read_text(encoding="utf-8")
    a, b = text.find(README_START), text.find(README_END)
    if a < 0 or b < a:
        raise SystemExit(f"{path}: no {README_START} … {README_END} block")
    new = text[: a + len(README_START)] + "\n" + readme_table(manifest) + "\n" + text[b:]
    files["README.md"] = new.encode()


def main():
    ap = argparse.ArgumentParser(description="Generate the kinds corpus (bench/corpus/kinds).")
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing; exit 1 on a difference")
    ap.add_argument("--list", action="store_true", help="list the documents and sizes")
    args = ap.parse_args()
    files, manifest = build()
    with_readme(files, manifest)
    if args.list:
        for d in manifest["documents"]:
            print(f"{d['name']:16s} {d['file']:28s} {d['json_bytes']:>10,}  {d['kind']}")
        return 0
    if args.check:
        bad = []
        for rel, data in files.items():
            p = HERE / rel
            if not p.exists():
                bad.append(f"{rel}: missing")
            elif p.read_bytes() != data:
                why = "differs"
                if rel.endswith(".xz"):
                    same = lzma.decompress(p.read_bytes()) == lzma.decompress(data)
                    why = ("the JSON inside is identical; only the xz container differs "
                           f"(this liblzma is {lzma.LZMA_VERSION if hasattr(lzma, 'LZMA_VERSION') else 'another version'})"
                           if same else "the JSON inside differs")
                bad.append(f"{rel}: {why}")
        known = set(files) | {"generate.py"}
        for p in sorted(HERE.iterdir()):
            if p.is_file() and p.name not in known and p.name.endswith((".json", ".json.xz")):
                bad.append(f"{p.name}: not written by the generator")
        for b in bad:
            print(f"kinds corpus: {b}", file=sys.stderr)
        if bad:
            print("kinds corpus: run `python3 bench/corpus/kinds/generate.py` and commit the result", file=sys.stderr)
            return 1
        print(f"kinds corpus: {len(files)} files match the generator")
        return 0
    for rel, data in files.items():
        p = HERE / rel
        if not p.exists() or p.read_bytes() != data:
            p.write_bytes(data)
            print(f"wrote {rel} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
