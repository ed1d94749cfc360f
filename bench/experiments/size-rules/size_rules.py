"""Size cost of candidate string rules, measured with the reference codec.

Each mode patches the reference encoder's string choice and prints, per
document of bench/corpus (seed, large, kinds) whose size changes by more than
0.5%, the size relative to the canonical encoding, then the total.

    python3 bench/experiments/size-rules/size_rules.py --table-cap 64
    python3 bench/experiments/size-rules/size_rules.py --cache-bits 14 --window ends+middle

--table-cap N: strings longer than N bytes never enter the string table
(decoders would change too). --cache-bits B: the encoder looks a string up only
in a direct-mapped cache of 2^B table indices, keyed by a hash of the length and
the first, last (and middle) 8 bytes, verified by comparing bytes; the string
table itself is unchanged, so decoders would not change. Takes a few minutes.
"""

import argparse
import hashlib
import json
import lzma
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "spec" / "tools"))
import tersaref as P  # noqa: E402

M32 = 0xFFFFFFFF


def imul(a, b):
    return (a * b) & M32


def cache_hash(b: bytes, bits: int, window: str) -> int:
    if window == "full":
        return int.from_bytes(hashlib.blake2b(b, digest_size=4).digest(), "little") >> (32 - bits)
    n = len(b)
    first = int.from_bytes(b[:8].ljust(8, b"\0"), "little")
    last = int.from_bytes(b[-8:] if n >= 8 else b.ljust(8, b"\0"), "little")
    x = imul((first & M32) ^ imul(n, 0x9E3779B1), 0x85EBCA6B) ^ imul(first >> 32, 0xC2B2AE35)
    x ^= imul(last & M32, 0x27D4EB2F) ^ imul(last >> 32, 0x165667B1)
    if window == "ends+middle":
        mid = int.from_bytes(b[max(0, n // 2 - 4):max(0, n // 2 - 4) + 8].ljust(8, b"\0"), "little")
        x ^= imul(mid & M32, 0x9E3779B1) ^ imul(mid >> 32, 0x85EBCA6B)
    x ^= x >> 15
    return imul(x, 0x2C1B3C6D) >> (32 - bits)


def use_string_cache(bits: int, window: str):
    canonical = P.Encoder.string_item

    def string_item(self, b: bytes, slot):
        st = self.st
        cache = st.__dict__.setdefault("cache", {})
        inline = (1 if len(b) < P.N_STR0 else 1 + P.varint_len(len(b) - P.N_STR0)) + len(b)
        if len(b) >= P.MIN_TABLE_LEN:
            i = cache.get(cache_hash(b, bits, window))
            if i is not None and st.strings[i] == b and P.ref_size(i) <= inline:
                self.ref(i)
                st.note_string(slot, st.strings[i])
                return
        n0 = len(st.strings)
        index, st.string_index = st.string_index, {}  # the canonical lookup finds nothing
        try:
            canonical(self, b, slot)
        finally:
            st.string_index = index
        if len(st.strings) > n0:
            cache[cache_hash(b, bits, window)] = n0

    P.Encoder.string_item = string_item


def use_table_cap(cap: int):
    add_string = P.State.add_string
    P.State.add_string = lambda self, b: add_string(self, b) if len(b) <= cap else None
    lookup = P.Encoder.string_item

    def string_item(self, b, slot):
        if len(b) > cap:
            index, self.st.string_index = self.st.string_index, {}
            try:
                return lookup(self, b, slot)
            finally:
                self.st.string_index = index
        return lookup(self, b, slot)

    P.Encoder.string_item = string_item


def documents():
    corpus = ROOT / "bench" / "corpus"
    paths = sorted((corpus / "seed").glob("*.json")) + sorted((corpus / "large").glob("*.json.xz"))
    paths += sorted(p for p in (corpus / "kinds").glob("*.json*") if p.name != "manifest.json")
    for p in paths:
        yield p.name, json.loads(lzma.open(p).read() if p.suffix == ".xz" else p.read_bytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table-cap", type=int)
    ap.add_argument("--cache-bits", type=int)
    ap.add_argument("--window", default="ends+middle", choices=["ends", "ends+middle", "full"])
    args = ap.parse_args()
    docs = list(documents())
    base = {name: len(P.encode(v)) for name, v in docs}
    if args.table_cap:
        use_table_cap(args.table_cap)
    if args.cache_bits:
        use_string_cache(args.cache_bits, args.window)
    total = 0
    for name, v in docs:
        n = len(P.encode(v))
        total += n
        if abs(n / base[name] - 1) > 0.005:
            print(f"{name:28s} {base[name]:9d} {n:9d} {n / base[name]:7.3f}")
    print(f"{'total':28s} {sum(base.values()):9d} {total:9d} {total / sum(base.values()):7.4f}")


if __name__ == "__main__":
    main()
