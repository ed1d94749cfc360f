"""Generate spec/vectors/*.json from the reference codec.

Every valid vector is encoded here and decoded back; every must-fail vector is
decoded here and must fail with exactly the stated code and offset. Run:

    python3 spec/tools/make_vectors.py            # rewrite spec/vectors
    python3 spec/tools/make_vectors.py --check    # fail if spec/vectors differs
"""

from __future__ import annotations

import json
import lzma
import math
import struct
import sys
from pathlib import Path

import tersaref as P
import vectors_well_known

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "spec" / "vectors"
CORPUS = ROOT / "bench" / "corpus"

HDR = bytes([0xC1, 0x70, 0x10])
HDR_STREAM = bytes([0xC1, 0x70, 0x12])


def f64(x: int) -> float:
    return struct.unpack("<d", x.to_bytes(8, "little"))[0]


def next_up(d: float) -> float:
    return math.nextafter(d, math.inf)


def next_down(d: float) -> float:
    return math.nextafter(d, -math.inf)


class Vectors:
    def __init__(self):
        self.files: dict[str, dict] = {}
        self.dictionaries: dict[str, dict] = {}
        self.dict_objects: dict[str, P.Dictionary] = {}
        self.mismatches: list[str] = []

    def file(self, name: str, description: str) -> list:
        f = self.files.setdefault(name, {"description": description, "vectors": []})
        return f["vectors"]

    def dictionary(self, name: str, strings=(), shapes=(), generate=None) -> P.Dictionary:
        if generate:
            d = P.Dictionary.generated(generate["strings"], generate["shapes"])
            entry = {"generate": generate}
        else:
            d = P.Dictionary(list(strings), [list(s) for s in shapes])
            entry = {"strings": [P.to_xjson(s) for s in strings],
                     "shapes": [[P.to_xjson(k) for k in s] for s in shapes]}
            entry["serialized"] = d.encode().hex()
        entry["id"] = f"{d.id:016x}"
        self.dictionaries[name] = entry
        self.dict_objects[name] = d
        return d

    def _dicts(self, dictionary):
        return [self.dict_objects[dictionary]] if dictionary else []

    # -- valid ---------------------------------------------------------------
    def valid(self, file: str, name: str, value, dictionary: str | None = None, note: str = ""):
        dicts = self._dicts(dictionary)
        b = P.encode(value, dicts[0] if dicts else None)
        back = P.decode(b, dicts)
        assert P.diag(back) == P.diag(value), (name, P.diag(value), P.diag(back))
        assert P.encode(back, dicts[0] if dicts else None) == b, name
        vec = {"name": name, "hex": b.hex(), "value": P.to_xjson(value), "diag": P.diag(value),
               "canonical": True}
        if dictionary:
            vec["dictionary"] = dictionary
        if note:
            vec["note"] = note
        self._append(file, vec)
        return b

    def _append(self, file: str, vec: dict):
        vectors = self.files[file]["vectors"]
        assert all(v["name"] != vec["name"] for v in vectors), f"duplicate vector name {vec['name']!r}"
        vectors.append(vec)

    def noncanonical(self, file: str, name: str, hexbytes: bytes, value, note: str):
        back = P.decode(hexbytes)
        assert P.diag(back) == P.diag(value), (name, P.diag(back), P.diag(value))
        canon = P.encode(value)
        assert canon != hexbytes, name
        self._append(file, {
            "name": name, "hex": hexbytes.hex(), "value": P.to_xjson(value), "diag": P.diag(value),
            "canonical": False, "canonical_hex": canon.hex(), "note": note})

    def stream(self, file: str, name: str, values, dictionary: str | None = None, note: str = "",
               sync_frames=0, sync_bytes=0, sync_before=()):
        dicts = self._dicts(dictionary)
        b = P.encode_stream(values, dicts[0] if dicts else None, sync_frames, sync_bytes, sync_before)
        back = P.decode_stream(b, dicts)
        assert [P.diag(x) for x in back] == [P.diag(x) for x in values], name
        vec = {"name": name, "hex": b.hex(), "stream": True,
               "values": [P.to_xjson(x) for x in values], "diags": [P.diag(x) for x in values],
               "canonical": True}
        if dictionary:
            vec["dictionary"] = dictionary
        if sync_frames:
            vec["sync_frames"] = sync_frames
        if sync_bytes:
            vec["sync_bytes"] = sync_bytes
        if sync_before:
            vec["sync_before"] = list(sync_before)
        if note:
            vec["note"] = note
        self._append(file, vec)
        return b

    def join(self, file: str, name: str, frames: bytes, dictionary: str | None = None, note: str = ""):
        """Frames from a frame boundary without a header, as a late consumer reads them."""
        dicts = self._dicts(dictionary)
        at, values = P.join_stream(frames, dicts)
        vec = {"name": name, "hex": frames.hex(), "join": True, "joined_at": at,
               "values": [P.to_xjson(x) for x in values], "diags": [P.diag(x) for x in values]}
        if dictionary:
            vec["dictionary"] = dictionary
        if note:
            vec["note"] = note
        self._append(file, vec)

    # -- must fail -------------------------------------------------------------
    def fail(self, file: str, name: str, data: bytes, code: str, offset: int, stream=False,
             dictionary: str | None = None, provide=None, max_depth=None, note: str = "", join=False):
        dicts = self._dicts(provide if provide is not None else dictionary)
        kw = {"max_depth": max_depth} if max_depth else {}
        try:
            (P.join_stream if join else P.decode_stream if stream else P.decode)(data, dicts, **kw)
        except P.DecodeError as e:
            if (e.code, e.offset) != (code, offset):
                self.mismatches.append(f"{name}: got {e.code}@{e.offset}, expected {code}@{offset}")
        else:
            self.mismatches.append(f"{name}: decoded")
        vec = {"name": name, "hex": data.hex(), "error": code, "offset": offset}
        if stream:
            vec["stream"] = True
        if join:
            vec["join"] = True
        if provide is not None or dictionary:
            vec["dictionary"] = provide if provide is not None else dictionary
        if max_depth:
            vec["max_depth"] = max_depth
        if note:
            vec["note"] = note
        self._append(file, vec)


V = Vectors()


def split_frames(body: bytes) -> list[bytes]:
    """A stream body (after its header) as its frames, length prefixes included."""
    out, pos = [], 0
    while pos < len(body):
        d = P.Decoder(body)
        d.pos = pos
        n = d.varint(pos)
        out.append(body[pos:d.pos + n])
        pos = d.pos + n
    return out


def sync_frame(item: bytes, vf: int = 0x12, dict_id: bytes = b"") -> bytes:
    """A sync frame holding `item` (SPEC 2.3)."""
    body = bytes([P.SYNC, vf]) + dict_id + item
    return vi(len(body)) + body


def vi(n: int) -> bytes:
    return P.varint(n)


def s_item(text: str) -> bytes:
    b = text.encode()
    return bytes([0x40 + len(b)]) + b


# =============================================================================
# Valid vectors
# =============================================================================

def gen_integers():
    V.file("integers", "Integer forms: INT, INT_POS, INT_NEG, varint lengths, big integers")
    for n in range(P.SMALLINT_MIN, P.SMALLINT_MAX + 1):
        V.valid("integers", f"small {n}", n)
    for length in range(1, 10):
        lo = 0 if length == 1 else 1 << (7 * (length - 1))
        hi = (1 << (7 * length)) - 1 if length < 9 else P.UINT64_MAX - 24
        for v in sorted({lo, hi}):
            V.valid("integers", f"positive varint {length} bytes, v={v}", 24 + v)
            if -9 - v >= P.INT64_MIN:
                V.valid("integers", f"negative varint {length} bytes, v={v}", -9 - v)
    for n in [100, 200, 404, 1000, 3600, 65535, 65536, 2**31 - 1, 2**31, 2**32, 2**53, 2**53 + 1,
              2**63 - 1, 2**63, 2**64 - 1, -100, -2**31, -2**53 - 1, -2**63 + 1, -2**63]:
        V.valid("integers", f"integer {n}", n)
    V.file("bigint", "Big integers beyond the native range [-2^63, 2^64-1]")
    for n in [2**64, 2**64 + 1, 2**72 - 1, 2**72, 2**100, 10**40, 2**1000 + 12345,
              -2**63 - 1, -2**64, -2**64 - 1, -2**100, -(10**40)]:
        V.valid("bigint", f"integer {n}" if abs(n) < 2**160 else "integer 2^1000+12345", n)


def gen_int_deltas():
    V.file("int_delta", "INT_DELTA: integers as a difference from the slot's int register")
    cases = {
        "sequential ids": [1000, 1001, 1002, 1003],
        "epoch milliseconds": [1713254400000, 1713254460000, 1713254520000, 1713254400000],
        "delta not smaller": [1000, 100000, 1000],
        "small int updates register": [1000, 5, 1003],
        "uint64 leaves register": [1000, 2**64 - 1, 1001],
        "bigint leaves register": [1000, 2**70, 1001],
        "int64 extremes": [2**63 - 1, 2**63 - 2, -2**63, -2**63 + 5],
        "delta would overflow": [-2**63, 2**63 - 1],
        "negative steps": [-5000, -5001, -4999],
    }
    for name, arr in cases.items():
        V.valid("int_delta", name, arr)
    V.valid("int_delta", "slots are per key", [{"a": 5000, "b": 90000}, {"a": 5001, "b": 90001}])
    V.valid("int_delta", "arrays share the slot of the array",
            {"v": [7000, 7001], "w": 3}, note="elements of the array sit in slot 0 of the shape")
    V.valid("int_delta", "root slot across nested arrays", [[2000, 2001], [2002]])


def gen_floats():
    V.file("floats", "Floats: decimal forms, F32, F64, special values")
    specials = [0.0, -0.0, math.inf, -math.inf, math.nan, f64(0x7FF8000000000001),
                f64(0xFFF8000000000000), f64(0x7FF0000000000001), f64(0x7FF4000000000000),
                5e-324, 2.2250738585072014e-308, 2.2250738585072009e-308, 1.7976931348623157e308]
    for d in specials:
        V.valid("floats", f"special {P.diag_float(d)}", d)
    short = [1.0, 1.5, 0.5, 0.1, 0.2, 0.3, 22.5, 37.7749, -122.4194, 129.99, 2100.0, 100.0, 1e3,
             0.30000000000000004, 0.8999999999999999, 3.141592653589793, 2.718281828459045,
             1e15, 1e16, 1e21, 1e22, 1e23, 1e-5, 1e-7, 1.5e-7, 123456789.0, 9007199254740991.0,
             9007199254740992.0, 9007199254740993.0, 0.1 + 0.7, 4.35, 4.345, 1e-22, 1e-23, 5e-23,
             99.99, -0.5, -1.0, -2100.0, 1.7e308, 8.41e21, 2.5e-12, 2.5e-13]
    for d in {P.f64_bits(d): d for d in short}.values():
        V.valid("floats", f"float {P.diag_float(d)}", d)
    for e in range(-22, 23):
        d = P.decimal_to_float(7, e)
        V.valid("floats", f"decimal exponent {e}", d)
    for d in [0.1, 37.7749, 1.5, 22.5, 129.99, 1e22, 1e-22, 2100.0]:
        V.valid("floats", f"one ulp above {P.diag_float(d)}", next_up(d))
        V.valid("floats", f"one ulp below {P.diag_float(d)}", next_down(d))
    for m in [2**53 - 1, -(2**53 - 1), 2**52, 2**27 - 1, 2**27, 63, 64, -64, -65]:
        V.valid("floats", f"decimal mantissa {m} e-3", P.decimal_to_float(m, -3))
    for k in list(range(-30, 31, 3)) + [52, 53, 54, 60, 63, 64, 100, -100, -1000, 1000, -1074, 1023]:
        V.valid("floats", f"power of two 2^{k}", math.ldexp(1.0, k))
    for d in [3.4028234663852886e38, 1.1754943508222875e-38, 1.401298464324817e-45, 16777216.0,
              16777217.0, 0.15625, 1.100000023841858, 6.103515625e-05]:
        V.valid("floats", f"binary32 candidate {P.diag_float(d)}", d)
    # The 15-significant-digit bound of the decimal form (SPEC 7), and the powers
    # of ten whose nearest double lies just below them (the scaled value is 10^15).
    for d in [123456789012345.0, 1234567890123456.0, 999999999999999.0, 12345678901234.5,
              123456789012345.6, 0.123456789012345, 0.1234567890123456, 1.23456789012345e-8,
              1.23456789012345e-9, 9.99999999999999e22, 1e-06, 1e-07, 1e-16, 1e-21, 1e-8, 1e-9,
              37.77490000000001, 0.30000000000000004, -1.23456789012345e20, 1.23456789012345e22]:
        V.valid("floats", f"digit bound {P.diag_float(d)}", d)
    import random
    r = random.Random(20261120)
    for i in range(30):
        d = f64(r.getrandbits(64))
        if math.isnan(d):
            continue
        V.valid("floats", f"random bits {i}", d)
    for i in range(20):
        d = round(r.uniform(-1e4, 1e4), r.randrange(0, 9))
        V.valid("floats", f"random short decimal {i}", d)
    V.file("dec_delta", "DEC_DELTA: decimal floats as a mantissa difference, same exponent")
    V.valid("dec_delta", "temperatures", [22.5, 22.3, 22.4, 22.8, 23.1])
    V.valid("dec_delta", "coordinates", [{"lat": 37.7748, "lng": -122.4193}, {"lat": 37.7749, "lng": -122.4191}])
    V.valid("dec_delta", "exponent change breaks the delta", [22.5, 22.35, 22.3])
    V.valid("dec_delta", "F64 leaves the register", [1.25, 0.1 + 0.2, 1.26])
    V.valid("dec_delta", "delta to zero", [0.5, 0.0, 0.25])
    V.valid("dec_delta", "large mantissas", [1234567.891, 1234567.892])
    # The slot's bin count (SPEC 4.3, 7): long floats are i + 1/3 (17 digits, not binary32).
    long = [i + 1 / 3 for i in range(40)]
    V.file("float_bin", "The bin count: a slot stops testing floats for a decimal form after four "
                        "binary floats in a row, and tests one float in 16 until it finds one")
    V.valid("float_bin", "three binary floats keep the test", long[:3] + [1.5])
    V.valid("float_bin", "four binary floats stop the test", long[:4] + [1.5, 2.3],
            note="1.5 is F32 and 2.3 is F64 at counts 4 and 5")
    V.valid("float_bin", "count 18 does not test", long[:18] + [1.5], note="1.5 is F32 at count 18")
    V.valid("float_bin", "count 19 tests again", long[:19] + [1.5, 2.5],
            note="1.5 is a decimal at count 19, which resets the count: 2.5 is a decimal")
    V.valid("float_bin", "a binary float at count 19 is followed by 4", long[:20] + [1.5] + long[20:34] + [2.5],
            note="count 19 finds no decimal (4 follows), 1.5 at 4 is F32, 2.5 at 19 is a decimal")
    V.valid("float_bin", "a decimal before four resets the count", long[:3] + [1.5] + long[3:6] + [2.5])
    V.valid("float_bin", "integers, strings and null leave the count", long[:4] + [7, "x", None, 1.5])
    V.valid("float_bin", "elements of nested arrays share the slot", [long[0:2], long[2:4], [1.5]])
    V.valid("float_bin", "slots are independent", [{"a": x, "b": 1.5 + i} for i, x in enumerate(long[:6])])
    V.valid("float_bin", "binary32 values count as binary", [0.1875 + 2.0 ** -20 * i for i in range(1, 5)] + [1.5],
            note="0.1875 + i·2^-20 take 16 digits: F32, no decimal form")
    V.valid("float_bin", "generic map keys and values share the map's slot",
            P.Map([(long[0], long[1]), (long[2], long[3]), (1.5, 0)]))


def gen_strings():
    V.file("strings", "Inline strings, lengths and UTF-8")
    for n in [0, 1, 2, 15, 31, 32, 33, 159, 160, 32 + 2**14 - 1, 32 + 2**14]:
        V.valid("strings", f"length {n}", "x" * n if n < 100 else ("abcdefghij" * (n // 10 + 1))[:n])
    for text in ["é", "日本語", "😀", "\u0000", "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff",
                 "\U00010000", "\U0010ffff", "Zürich – café ☕", "\"quoted\" \\ back"]:
        V.valid("strings", f"unicode {text.encode().hex()}", text)
    V.file("refs", "String table: what enters, reference forms and boundaries")
    V.valid("refs", "repeat", ["abc", "abc"])
    V.valid("refs", "one byte never tabled", ["a", "a"])
    V.valid("refs", "empty never tabled", ["", ""])
    V.valid("refs", "two bytes tabled", ["ab", "ab"])
    long200 = ("0123456789abcdef" * 13)[:200]
    V.valid("refs", "long strings are tabled", [long200, "x", long200])
    V.valid("refs", "keys and values share the table", [{"status": "ok"}, {"ok": "status"}])
    uniq = [f"{i:03d}" for i in range(330)]
    V.valid("refs", "REF0 last index 63", uniq[:64] + [uniq[63]])
    V.valid("refs", "REF8 first index 64", uniq[:65] + [uniq[64]])
    V.valid("refs", "REF8 last index 319", uniq[:320] + [uniq[319], uniq[0]])
    V.valid("refs", "REF16 first index 320", uniq[:321] + [uniq[320]])
    V.dictionary("full_strings", generate={"strings": P.MAX_STRINGS, "shapes": 0})
    V.valid("refs", "REF16 last index 65855", ["s65855", "s320"], dictionary="full_strings")
    V.valid("refs", "full table takes no new entries",
            ["new string", "new string", "s65855"], dictionary="full_strings")
    V.dictionary("g65854", generate={"strings": P.MAX_STRINGS - 2, "shapes": 0})
    V.valid("refs", "the table fills at 65856 entries", ["ab", "cd", "ef", "ab", "cd", "ef"], dictionary="g65854",
            note="ab and cd take indices 65854 and 65855 and are referenced by REF16 (3 bytes, no longer than "
                 "their inline form); ef would take index 65856, beyond the capacity: it is not appended and "
                 "is written inline again")


def gen_prefix():
    V.file("prefix", "PFX: strings sharing a prefix with the slot's or the last string")
    V.valid("prefix", "slot base", [{"id": "req_9876543210"}, {"id": "req_9876543211"}])
    V.valid("prefix", "last base", ["/api/v2/orders/ord_45678", "/api/v2/orders/ord_45678/items"])
    V.valid("prefix", "tie goes to the slot", [{"a": "prefix_one", "b": "prefix_two"}, {"a": "prefix_six", "b": "x"}])
    V.valid("prefix", "longer last prefix beats the slot", [{"a": "prefix_one", "b": "prefix_two"}, {"a": "prefix_three", "b": "x"}])
    V.valid("prefix", "longer prefix wins", [{"u": "https://example.com/a"}, {"u": "https://example.org/b"}])
    V.valid("prefix", "two-byte prefix saves a byte", ["abcd", "abxy"])
    V.valid("prefix", "prefix form not smaller than inline", ["abcd", "axyz"])
    V.valid("prefix", "suffix 15 bytes", ["common_prefix_", "common_prefix_" + "y" * 15])
    V.valid("prefix", "suffix 16 bytes (PFX_LONG)", ["common_prefix_", "common_prefix_" + "y" * 16])
    V.valid("prefix", "prefix capped at 127", ["p" * 200, "p" * 200 + "q"])
    V.valid("prefix", "cap inside a UTF-8 sequence backs off", ["p" * 126 + "é" + "a", "p" * 126 + "é" + "b"])
    V.valid("prefix", "common prefix ends inside a UTF-8 sequence",
            ["préfixe_é_one", "préfixe_è_two"], note="é and è share their first byte")
    V.valid("prefix", "whole base as prefix", ["usr_123", "usr_1234"])
    V.valid("prefix", "timestamp-like strings are packed, not prefixed",
            ["2025-04-16T00:00:00Z", "2025-04-16T00:00:01Z"])
    V.valid("prefix", "keys use the key slot", [{"database_query_time_ms": 1, "database_queries_count": 2}])
    V.valid("prefix", "symbol names take part", [P.Symbol("status_active"), P.Symbol("status_inactive")])
    V.valid("prefix", "slot register follows references", [{"k": "alpha_one"}, {"k": "beta_two"}, {"k": "alpha_one"}, {"k": "alpha_two"}])


def gen_ts_strings():
    V.file("ts_strings", "Timestamp-like strings packed by variant (TS_Z0, TS_Z3, TS_STR)")
    texts = [
        "2025-04-16T09:23:47Z", "2025-04-17T08:00:15.324Z", "2025-04-16T09:23:47.5Z",
        "2025-04-16T09:23:47.50Z", "2025-04-16T09:23:47.000Z", "2025-04-16T09:23:47.123456Z",
        "2025-04-16T09:23:47.123456789Z", "2025-04-16T09:23:47.000000000Z",
        "2025-04-16T09:23:47+02:00", "2025-04-16T09:23:47-05:00", "2025-04-16T09:23:47+00:00",
        "2025-04-16T09:23:47+05:45", "2025-04-16T09:23:47-23:59", "2025-04-16T09:23:47+23:59",
        "2025-04-16 09:23:47Z", "2025-04-16 09:23:47.123+01:00", "2025-04-16", "2024-02-29",
        "2024-02-29T23:59:59Z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2038-01-19T03:14:08Z",
        "2106-02-07T06:28:16Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
        "9999-12-31T23:59:59.999999999Z", "0001-01-01", "9999-12-31", "1900-03-01T12:00:00Z",
        "2000-02-29T00:00:00Z", "0001-01-01T01:00:00+01:00", "9999-12-31T22:59:59-01:00",
    ]
    for t in texts:
        V.valid("ts_strings", f"packed {t}", t)
    not_packed = ["2025-02-29", "2025-04-31", "2025-13-01", "2025-00-10", "0000-01-01",
                  "2025-04-16T24:00:00Z", "2025-04-16T23:60:00Z", "2025-04-16T23:59:60Z",
                  "2025-04-16T09:23:47-00:00", "2025-04-16T09:23:47+24:00", "2025-04-16T09:23:47+05:60",
                  "2025-04-16t09:23:47Z", "2025-04-16T09:23:47z", "2025-04-16T09:23:47",
                  "2025-04-16T09:23Z", "2025-04-16T09:23:47.Z", "2025-04-16T09:23:47.1234567890Z",
                  "2025-4-16", "+2025-04-16", "2025-04-16 ", "2025-04-16T09:23:47+0200",
                  "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01", "２０２５-04-16"]
    for t in not_packed:
        V.valid("ts_strings", f"not packed {t}", t)
    V.valid("ts_strings", "delta chain", ["2025-04-16T00:00:00Z", "2025-04-16T00:05:00Z",
                                          "2025-04-15T23:00:00.250Z", "2025-04-16"])
    V.valid("ts_strings", "repeat is a reference", ["2025-04-16T00:00:00Z", "2025-04-16T00:00:00Z"])
    V.valid("ts_strings", "as map key", {"2025-04-16": 1, "2025-04-17": 2})


def gen_timestamps():
    V.file("timestamps", "TIME: timestamps with zone, offset and nanoseconds")
    T = P.Timestamp
    cases = [
        ("epoch", T(0)), ("now-ish", T(1744795427)), ("nanos", T(1744795427, 123456789)),
        ("one nanosecond", T(1744795427, 1)), ("max nanos", T(1744795427, 999_999_999)),
        ("before 1970", T(-1, 999_999_999)), ("1900", T(-2208988800)),
        ("after 2038", T(2**31)), ("after 2106", T(2**32)), ("min", T(P.MIN_SECONDS)),
        ("max", T(P.MAX_SECONDS, 999_999_999)), ("offset +02:00", T(1744795427, 0, P.ZONE_OFFSET, 120)),
        ("offset -05:00", T(1744795427, 500, P.ZONE_OFFSET, -300)),
        ("offset 0", T(1744795427, 0, P.ZONE_OFFSET, 0)), ("offset +23:59", T(0, 0, P.ZONE_OFFSET, 1439)),
        ("offset -23:59", T(0, 0, P.ZONE_OFFSET, -1439)), ("offset +05:45", T(1744795427, 0, P.ZONE_OFFSET, 345)),
        ("floating", T(1744795427, 0, P.ZONE_FLOATING)), ("floating nanos", T(-5, 7, P.ZONE_FLOATING)),
        ("min local with offset", T(P.MIN_SECONDS + 3600, 0, P.ZONE_OFFSET, -60)),
        ("max local with offset", T(P.MAX_SECONDS - 3600, 0, P.ZONE_OFFSET, 60)),
    ]
    for name, t in cases:
        V.valid("timestamps", name, t)
    V.valid("timestamps", "delta chain shared with timestamp strings",
            [T(1744795427), "2025-04-16T09:24:00Z", T(1744795500, 5), T(1744795427 - 86400 * 365)])


def gen_containers():
    V.file("arrays", "Arrays")
    for n in [0, 1, 15, 16, 17, 143, 144]:
        V.valid("arrays", f"{n} elements", [None] * n)
    V.valid("arrays", "nested", [[], [[]], [[[1]]]])
    V.valid("arrays", "mixed", [None, True, False, 1, -1, 1.5, "x", b"\x00", [1], {"a": 1}])
    deep = []
    for _ in range(999):
        deep = [deep]
    V.valid("arrays", "nesting depth 1000", deep)
    V.file("maps", "Maps: shapes, shape references, generic maps")
    V.valid("maps", "empty", {})
    V.valid("maps", "empty twice", [{}, {}])
    V.valid("maps", "one key", {"a": 1})
    V.valid("maps", "shape reused", [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
    V.valid("maps", "order matters", [{"a": 1, "b": 2}, {"b": 2, "a": 1}])
    V.valid("maps", "15 keys", {f"k{i:02d}": i for i in range(15)})
    V.valid("maps", "16 keys (MAPDEF_LONG)", {f"k{i:02d}": i for i in range(16)})
    V.valid("maps", "200 keys", {f"key{i}": i for i in range(200)})
    shapes = [{f"f{i}": i} for i in range(300)]
    V.valid("maps", "SHAPE0 last index 31", shapes[:32] + [shapes[31]])
    V.valid("maps", "SHAPE8 first index 32", shapes[:33] + [shapes[32]])
    V.valid("maps", "SHAPE8 last index 287", shapes[:288] + [shapes[287]])
    V.valid("maps", "SHAPE16 first index 288", shapes[:289] + [shapes[288], shapes[0]])
    V.valid("maps", "nested shapes", {"a": {"b": {"c": {}}}, "d": {"b": {"c": {}}}})
    V.valid("maps", "symbol keys", {P.Symbol("id"): 1, P.Symbol("name"): "x"})
    V.valid("maps", "symbol and string keys differ", {P.Symbol("id"): 1, "id": 2})
    V.valid("maps", "symbol-key shape differs from string-key shape", [{P.Symbol("a"): 1}, {"a": 2}, {P.Symbol("a"): 3}])
    V.valid("maps", "unicode keys", {"ключ": 1, "鍵": 2, "😀": 3})
    V.valid("maps", "empty key", {"": 1})
    V.valid("maps", "key looks like a timestamp", {"2025-04-16T00:00:00Z": True})
    V.valid("maps", "integer-like string keys keep order", {"2": "b", "1": "a", "10": "c"})
    V.valid("maps", "dollar key", {"$int": 1})
    V.valid("maps", "generic integer keys", P.Map([(1, "a"), (2, "b")]))
    V.valid("maps", "generic mixed keys", P.Map([("s", 1), (2, 2), (None, 3), (True, 4), (1.5, 5),
                                                   (b"\x01", 6), (P.Timestamp(0), 7)]))
    V.valid("maps", "generic container keys", P.Map([([1, 2], "array"), (P.Map([(1, 2)]), "map"), ({"a": 1}, "smap")]))
    V.valid("maps", "1 and 1.0 are different keys", P.Map([(1, "int"), (1.0, "float")]))
    V.valid("maps", "generic empty key set is a shape", P.Map([]))
    V.valid("maps", "generic map strings use the table", [P.Map([(1, "shared"), ("shared", 1)]), "shared"])
    deep = {}
    for _ in range(999):
        deep = {"a": deep}
    V.valid("maps", "nesting depth 1000", deep)
    V.dictionary("g_shapes_full", generate={"strings": 0, "shapes": P.MAX_SHAPES})
    V.valid("maps", "full shape table gives fresh slots", [{"x": "val_1"}, {"x": "val_2"}, {"k65535": 1}],
            dictionary="g_shapes_full")


def gen_others():
    V.file("binary", "Binary")
    for n in [0, 1, 127, 128, 300]:
        V.valid("binary", f"{n} bytes", bytes((i * 7) & 0xFF for i in range(n)))
    V.valid("binary", "binary is not tabled", [b"ab", b"ab"])
    V.valid("binary", "binary beside an equal string", [b"ab", "ab", b"ab"])
    V.file("ext", "Extension values")
    for t, data in [(0, b""), (1, b"\x01"), (127, b"abc"), (128, b"x" * 200), (P.MAX_APP_EXT_TYPE, b"\xff")]:
        V.valid("ext", f"type {t}, {len(data)} bytes", P.Ext(t, data))
    V.file("symbols", "Symbols")
    V.valid("symbols", "symbol", P.Symbol("active"))
    V.valid("symbols", "empty symbol", P.Symbol(""))
    V.valid("symbols", "symbol then string share the table", [P.Symbol("active"), "active", P.Symbol("active")])
    V.valid("symbols", "symbol that looks like a timestamp", P.Symbol("2025-04-16"))
    V.valid("symbols", "unicode symbol", P.Symbol("日本"))
    V.file("scalars", "null and booleans")
    for v in [None, True, False, [None, True, False]]:
        V.valid("scalars", P.diag(v), v)


def gen_streams_and_dicts():
    V.file("streams", "Streams: frames sharing tables and registers")
    V.stream("streams", "empty stream", [])
    V.stream("streams", "one value", [1])
    V.stream("streams", "tables persist across frames",
             [{"id": "usr_1", "role": "admin"}, {"id": "usr_2", "role": "admin"}, "admin"])
    V.stream("streams", "registers persist across frames",
             [1000, 1001, "2025-04-16T00:00:00Z", "2025-04-16T00:00:05Z", 22.5, 22.6])
    V.stream("streams", "mixed values", [None, [1, 2], {"a": {}}, P.Symbol("s"), b"\x00"])
    rows = [["aa", "bb"], ["cc", "aa"], {"id": "usr_1", "n": 1000}, {"id": "usr_2", "n": 1001}, "bb", 22.5]
    V.stream("streams", "sync frames every 2 frames", rows, sync_frames=2)
    V.stream("streams", "sync frame on request", rows, sync_before=[3])
    V.stream("streams", "sync frames by bytes", rows, sync_bytes=12,
             note="a frame is a sync frame once 12 or more bytes of frames follow the last sync frame's start")
    V.stream("streams", "sync frames by frames and bytes", rows, sync_frames=4, sync_bytes=20)
    V.stream("streams", "every frame a sync frame", rows, sync_frames=1)
    V.stream("streams", "sync frame resets registers", [1000, 1001, 1002, "2025-04-16T00:00:00Z",
                                                         "2025-04-16T00:00:05Z", 22.5, 22.6], sync_frames=2)
    binrows = [[i + 1 / 3 for i in range(4)], [1.5], [1.5]]
    V.stream("streams", "the bin count persists across frames", binrows,
             note="the root slot's count reaches 4 in frame 0: 1.5 is F32 in frames 1 and 2")
    V.stream("streams", "a sync frame resets the bin count", binrows, sync_before=[2])
    V.file("joins", "Joining a stream at a frame boundary: the frames after the header, from frame k on; "
                    "skipped frames up to the first sync frame, decoded from there")
    whole = P.encode_stream(rows, sync_frames=2)
    frames = split_frames(whole[3:])
    for k in range(len(frames) + 1):
        V.join("joins", f"join at frame {k}, sync every 2", b"".join(frames[k:]))
    whole = P.encode_stream(rows, sync_before=[4])
    frames = split_frames(whole[3:])
    V.join("joins", "join at frame 1 before a requested sync frame", b"".join(frames[1:]))
    V.join("joins", "join at the first frame", b"".join(frames))
    V.file("dictionaries", "Pre-shared dictionaries")
    V.dictionary("users", strings=["admin", "user", "en-US", "usr_"],
                 shapes=[["id", "name", "role"], [P.Symbol("id"), P.Symbol("name")]])
    V.valid("dictionaries", "dictionary strings and shapes", [{"id": 1, "name": "admin", "role": "user"}],
            dictionary="users")
    V.valid("dictionaries", "dictionary symbol shape", {P.Symbol("id"): 1, P.Symbol("name"): "en-US"},
            dictionary="users")
    V.valid("dictionaries", "prefix from dictionary string needs a register", ["usr_123", "usr_124"],
            dictionary="users")
    V.valid("dictionaries", "new strings continue after the dictionary", ["fresh", "fresh", "admin"],
            dictionary="users")
    V.stream("dictionaries", "stream with dictionary", [{"id": 1, "name": "x", "role": "admin"}, "user"],
             dictionary="users")
    V.stream("dictionaries", "the string table fills across frames", [["ab"], ["cd", "ef"], ["ab", "cd", "ef"]],
             dictionary="g65854", note="ab and cd take the last two entries (65854, 65855); ef, at the capacity, "
                                       "is not appended, so the last frame writes it inline again")
    dict_rows = [{"id": 1, "name": "x", "role": "admin"}, "user", {"id": 2, "name": "xy", "role": "user"}, "xy"]
    whole = V.stream("dictionaries", "stream with dictionary and sync frames", dict_rows, dictionary="users",
                     sync_frames=2)
    frames = split_frames(whole[11:])
    V.join("dictionaries", "join with dictionary at frame 1", b"".join(frames[1:]), dictionary="users")
    V.join("dictionaries", "join with dictionary at frame 0", b"".join(frames), dictionary="users")
    V.dictionary("empty", strings=[], shapes=[])
    V.valid("dictionaries", "empty dictionary", "admin", dictionary="empty")


def gen_noncanonical():
    V.file("noncanonical", "Valid encodings that a canonical encoder would not write")
    V.noncanonical("noncanonical", "inline string already in the table",
                   HDR + bytes([0x82]) + s_item("ab") + s_item("ab"), ["ab", "ab"], "decoders accept repeats")
    V.noncanonical("noncanonical", "F64 for a short decimal", HDR + bytes([0xE4]) + struct.pack("<d", 1.5), 1.5,
                   "any float may be F64")
    V.noncanonical("noncanonical", "F32 for a short decimal", HDR + bytes([0xE3]) + struct.pack("<f", 1.5), 1.5,
                   "any exact float may be F32")
    V.noncanonical("noncanonical", "decimal with trailing zero", HDR + bytes([0xDB]) + vi(P.zigzag(10)), 1.0,
                   "m=10, e=-1")
    V.noncanonical("noncanonical", "generic map with string keys",
                   HDR + bytes([0xF4]) + vi(1) + s_item("a") + bytes([0xA9]), {"a": 1}, "MAP_GEN is valid for any keys")
    V.noncanonical("noncanonical", "MAPDEF repeating a known shape",
                   HDR + bytes([0x82, 0x91]) + s_item("ab") + bytes([0xA9, 0x91, 0x00, 0xAA]),
                   [{"ab": 1}, {"ab": 2}], "defines shape 1 equal to shape 0")
    V.noncanonical("noncanonical", "absolute integer where a delta is smaller",
                   HDR + bytes([0x82, 0xE5]) + vi(1000 - 24) + bytes([0xE5]) + vi(1001 - 24), [1000, 1001], "")
    V.noncanonical("noncanonical", "delta integer where absolute is smaller",
                   HDR + bytes([0x82, 0xE5]) + vi(1000 - 24) + bytes([0xE7]) + vi(P.zigzag(-900)), [1000, 100], "")
    V.noncanonical("noncanonical", "timestamp-like string written inline",
                   HDR + s_item("2025-04-16T00:00:00Z"), "2025-04-16T00:00:00Z", "")
    V.noncanonical("noncanonical", "prefix from last where the slot ties",
                   HDR + bytes([0x82]) + s_item("abcd") + bytes([0xC2, 0x82]) + b"xy", ["abcd", "abxy"],
                   "canonical prefers the slot base")
    V.noncanonical("noncanonical", "prefix form where inline is as small",
                   HDR + bytes([0x82]) + s_item("abcd") + bytes([0xC3, 0x01]) + b"xyz", ["abcd", "axyz"], "")
    V.noncanonical("noncanonical", "DEC_DELTA where absolute is as small",
                   HDR + bytes([0x82, 0xDB]) + vi(P.zigzag(15)) + bytes([0xE9]) + vi(P.zigzag(1)), [1.5, 1.6], "")


# =============================================================================
# Must-fail vectors
# =============================================================================

def gen_invalid():
    F = "invalid"
    V.file(F, "Must-fail inputs: each names the error code and byte offset a decoder reports")
    fail = V.fail
    # header
    fail(F, "empty input", b"", "truncated", 0)
    fail(F, "magic only first byte", b"\xc1", "truncated", 0)
    fail(F, "magic only", b"\xc1\x70", "truncated", 0)
    fail(F, "wrong magic", b"\xc1\x71\x10\xe0", "bad_magic", 0)
    fail(F, "JSON text", b"{}", "bad_magic", 0)
    fail(F, "MessagePack", b"\x81\xa1a\x01", "bad_magic", 0)
    fail(F, "version 0", b"\xc1\x70\x00\xe0", "unsupported_version", 2)
    fail(F, "version 2", b"\xc1\x70\x20\xe0", "unsupported_version", 2)
    fail(F, "version 15", b"\xc1\x70\xf0\xe0", "unsupported_version", 2)
    fail(F, "reserved flag 0x04", b"\xc1\x70\x14\xe0", "bad_flags", 2)
    fail(F, "reserved flag 0x08", b"\xc1\x70\x18\xe0", "bad_flags", 2)
    fail(F, "stream given to the single-value decoder", HDR_STREAM + b"\x01\xe0", "bad_flags", 2)
    fail(F, "single value given to the stream decoder", HDR + b"\xe0", "bad_flags", 2, stream=True)
    # The flags byte (offset 2) is read before the dictionary id (offset 3).
    fail(F, "stream with an unknown dictionary given to the single-value decoder",
         b"\xc1\x70\x13" + bytes(8) + b"\x01\xe0", "bad_flags", 2)
    fail(F, "single value with an unknown dictionary given to the stream decoder",
         b"\xc1\x70\x11" + bytes(8) + b"\xe0", "bad_flags", 2, stream=True)
    fail(F, "dictionary id truncated", b"\xc1\x70\x11\x01\x02\x03", "truncated", 3)
    fail(F, "unknown dictionary", b"\xc1\x70\x11" + (12345).to_bytes(8, "little") + b"\xe0", "unknown_dictionary", 3)
    fail(F, "wrong dictionary supplied", b"\xc1\x70\x11" + (12345).to_bytes(8, "little") + b"\xe0",
         "unknown_dictionary", 3, provide="users")
    users = V.dict_objects["users"]
    fail(F, "dictionary buffer without the dictionary",
         b"\xc1\x70\x11" + users.id.to_bytes(8, "little") + b"\x00", "unknown_dictionary", 3, provide="empty")
    fail(F, "no value", HDR, "truncated", 3)
    # tags
    for t in (0xFD, 0xFE, 0xFF):
        fail(F, f"reserved tag {t:02x}", HDR + bytes([t]), "invalid_tag", 3)
    fail(F, "reserved tag nested", HDR + b"\x82\xe0\xfd", "invalid_tag", 5)
    fail(F, "trailing byte", HDR + b"\xe0\xe0", "trailing_bytes", 4)
    fail(F, "trailing bytes after array", HDR + b"\x81\xa8\x00\x00", "trailing_bytes", 5)
    # truncation of fixed fields
    fail(F, "F32 truncated", HDR + b"\xe3\x00\x00\x80", "truncated", 3)
    fail(F, "F64 truncated", HDR + b"\xe4" + b"\x00" * 7, "truncated", 3)
    fail(F, "REF8 truncated", HDR + b"\xed", "truncated", 3)
    fail(F, "REF16 truncated", HDR + b"\xee\x00", "truncated", 3)
    fail(F, "REF24 truncated", HDR + b"\xef\x00\x00", "truncated", 3)
    fail(F, "SHAPE8 truncated", HDR + b"\xf0", "truncated", 3)
    fail(F, "SHAPE16 truncated", HDR + b"\xf1\x01", "truncated", 3)
    fail(F, "varint truncated", HDR + b"\xe5\x02", "truncated", 3)
    fail(F, "9-byte varint truncated", HDR + b"\xe5\x00\x01\x02", "truncated", 3)
    fail(F, "inline string truncated", HDR + b"\x45abc", "truncated", 3)
    fail(F, "PFX prefix byte missing", HDR + b"\x82\x43abc\xc1", "truncated", 8)
    fail(F, "array element missing", HDR + b"\x82\xe0", "length_exceeds_input", 3)
    fail(F, "array element truncated", HDR + b"\x82\xe0\xe4\x00", "truncated", 5)
    fail(F, "map value missing", HDR + b"\x91\x41a", "truncated", 6)
    fail(F, "shape values missing", HDR + b"\x82\x91\x41a\xa9\x60", "length_exceeds_input", 8)
    fail(F, "TIME flags missing", HDR + b"\xf9", "truncated", 3)
    fail(F, "TS_STR variant missing", HDR + b"\xfa", "truncated", 3)
    fail(F, "TS_Z3 fraction missing", HDR + b"\xfc\x01", "truncated", 3)
    fail(F, "symbol name missing", HDR + b"\xf8", "truncated", 4)
    fail(F, "EXT length missing", HDR + b"\xf7\x01", "truncated", 3)
    fail(F, "DEC_X exponent missing", HDR + b"\xe8", "truncated", 3)
    # lengths
    fail(F, "STR_LONG length beyond input", HDR + b"\xec" + vi(100) + b"x" * 10, "length_exceeds_input", 3)
    fail(F, "STR_LONG huge length", HDR + b"\xec\x00" + b"\xff" * 8, "length_exceeds_input", 3)
    fail(F, "BIN length beyond input", HDR + b"\xf6" + vi(5) + b"abc", "length_exceeds_input", 3)
    fail(F, "BIN huge length", HDR + b"\xf6\x00" + b"\xff" * 7 + b"\x7f", "length_exceeds_input", 3)
    fail(F, "EXT length beyond input", HDR + b"\xf7\x03" + vi(5) + b"abc", "length_exceeds_input", 3)
    fail(F, "BIGINT length beyond input", HDR + b"\xea" + vi(20) + b"\x01" * 9, "length_exceeds_input", 3)
    fail(F, "ARR_LONG count beyond input", HDR + b"\xf2" + vi(1000) + b"\xe0" * 10, "length_exceeds_input", 3)
    fail(F, "ARR_LONG huge count", HDR + b"\xf2\x00" + b"\xff" * 8, "length_exceeds_input", 3)
    fail(F, "MAPDEF count beyond input", HDR + b"\x9f\x41a", "length_exceeds_input", 3)
    fail(F, "MAPDEF_LONG huge count", HDR + b"\xf3\x00" + b"\xff" * 8, "length_exceeds_input", 3)
    fail(F, "MAP_GEN count beyond input", HDR + b"\xf4" + vi(3) + b"\xa9\xa9\xa9\xa9", "length_exceeds_input", 3)
    fail(F, "PFX_LONG suffix beyond input", HDR + b"\x82\x43abc\xf5\x02" + vi(100) + b"x", "length_exceeds_input", 8)
    fail(F, "SHAPE index just beyond table",
         HDR + b"\x82\x93\x41a\x41b\x41c\xe0\xe0\xe0\x61", "bad_reference", 14)
    fail(F, "shape with more keys than bytes remain",
         HDR + b"\x82\x93\x41a\x41b\x41c\xe0\xe0\xe0\x60\xe0", "length_exceeds_input", 14)
    # varints
    fail(F, "overlong varint 2 bytes", HDR + b"\xe5\x02\x00", "invalid_varint", 3)
    fail(F, "overlong varint 3 bytes", HDR + b"\xe5\x04\x02\x00", "invalid_varint", 3)
    fail(F, "overlong varint 8 bytes", HDR + b"\xe5\x80" + b"\x00" * 7, "invalid_varint", 3)
    fail(F, "overlong varint 9 bytes", HDR + b"\xe5\x00" + (2**56 - 1).to_bytes(8, "little"), "invalid_varint", 3)
    fail(F, "overlong varint zero", HDR + b"\xe5\x00" + b"\x00" * 8, "invalid_varint", 3)
    fail(F, "overlong string length", HDR + b"\xec\x02\x00" + b"x" * 32, "invalid_varint", 3)
    fail(F, "overlong array count", HDR + b"\xf2\x02\x00" + b"\xe0" * 16, "invalid_varint", 3)
    fail(F, "overlong frame length", HDR_STREAM + b"\x02\x00", "invalid_varint", 3, stream=True)
    # UTF-8
    bad_utf8 = {"overlong NUL": b"\xc0\x80", "overlong slash": b"\xe0\x80\xaf", "surrogate": b"\xed\xa0\x80",
                "above U+10FFFF": b"\xf4\x90\x80\x80", "lone continuation": b"\x80", "truncated sequence": b"\xe6\x97",
                "invalid byte FF": b"\xff", "invalid byte C1": b"\xc1\xbf", "five-byte form": b"\xf8\x88\x80\x80\x80"}
    for name, raw in bad_utf8.items():
        fail(F, f"invalid UTF-8: {name}", HDR + bytes([0x40 + len(raw)]) + raw, "invalid_utf8", 3)
    fail(F, "invalid UTF-8 in STR_LONG", HDR + b"\xec" + vi(1) + b"x" * 32 + b"\xed\xa0\x80"[:1], "invalid_utf8", 3)
    fail(F, "invalid UTF-8 in prefix suffix", HDR + b"\x82\x43abc\xc1\x02\xff", "invalid_utf8", 8)
    fail(F, "invalid UTF-8 in key", HDR + b"\x91\x41\xff\xe0", "invalid_utf8", 4)
    fail(F, "invalid UTF-8 in symbol", HDR + b"\xf8\x42\xc0\x80", "invalid_utf8", 4)
    # references
    fail(F, "REF with empty table", HDR + b"\x00", "bad_reference", 3)
    fail(F, "REF beyond table", HDR + b"\x82\x42ab\x01", "bad_reference", 7)
    fail(F, "REF to an untabled one-byte string", HDR + b"\x82\x41a\x00", "bad_reference", 6)
    fail(F, "REF8 beyond table", HDR + b"\xed\x00", "bad_reference", 3)
    fail(F, "REF16 beyond table", HDR + b"\xee\x00\x00", "bad_reference", 3)
    fail(F, "REF24 beyond table", HDR + b"\xef\x00\x00\x00", "bad_reference", 3)
    fail(F, "REF24 to the first index beyond a full table", b"\xc1\x70\x11"
         + V.dict_objects["full_strings"].id.to_bytes(8, "little") + b"\x82\x42ab\xef\x00\x00\x00", "bad_reference",
         15, dictionary="full_strings", note="REF24's first index is the table's capacity: no REF24 is ever valid")
    fail(F, "REF24 to the entry a full table did not append", b"\xc1\x70\x11"
         + V.dict_objects["g65854"].id.to_bytes(8, "little") + b"\x84\x42ab\x42cd\x42ef\xef\x00\x00\x00",
         "bad_reference", 21, dictionary="g65854",
         note="ab and cd take indices 65854 and 65855; ef is not appended (the table is full), so index 65856 "
              "does not exist")
    fail(F, "REF16 to the last entry of a table filled by items", b"\xc1\x70\x11"
         + V.dict_objects["g65854"].id.to_bytes(8, "little") + b"\x83\x42ab\xee\xff\xff\x42cd",
         "bad_reference", 15, dictionary="g65854",
         note="index 65855 is appended only by the next string item, which comes after the reference")
    fail(F, "SHAPE with empty table", HDR + b"\x60\xe0", "bad_reference", 3)
    fail(F, "SHAPE8 beyond table", HDR + b"\xf0\x00\xe0", "bad_reference", 3)
    fail(F, "SHAPE16 beyond table", HDR + b"\xf1\x00\x00\xe0", "bad_reference", 3)
    fail(F, "PFX with empty slot register", HDR + b"\xc1\x01x", "bad_reference", 3)
    fail(F, "PFX with empty last register", HDR + b"\xc1\x81x", "bad_reference", 3)
    fail(F, "PFX length zero", HDR + b"\x82\x43abc\xc1\x00x", "bad_reference", 8)
    fail(F, "PFX longer than base", HDR + b"\x82\x43abc\xc1\x04x", "bad_reference", 8)
    fail(F, "PFX splits a UTF-8 sequence", HDR + b"\x82\x43a\xc3\xa9\xc1\x02\xa9", "bad_reference", 8)
    fail(F, "PFX slot base is another slot's string", HDR + b"\x82\x91\x41a\x43abc\x91\x41b\xc1\x02x",
         "bad_reference", 14)
    fail(F, "INT_DELTA without register", HDR + b"\xe7\x03", "bad_reference", 3)
    fail(F, "INT_DELTA register of another slot", HDR + b"\x82\x91\x41a\xa9\x91\x41b\xe7\x03", "bad_reference", 11)
    fail(F, "DEC_DELTA without register", HDR + b"\xe9\x03", "bad_reference", 3)
    fail(F, "DEC_DELTA after F64 only", HDR + b"\x82\xe4" + struct.pack("<d", 0.1) + b"\xe9\x03", "bad_reference", 13)
    # expected string
    fail(F, "MAPDEF key is an integer", HDR + b"\x91\xa9\xe0", "expected_string", 4)
    fail(F, "MAPDEF key is an array", HDR + b"\x91\x80\xe0", "expected_string", 4)
    fail(F, "MAPDEF key is null", HDR + b"\x92\x41a\xe0\xe0\xe0", "expected_string", 6)
    fail(F, "SYMBOL followed by an integer", HDR + b"\xf8\xa9", "expected_string", 4)
    fail(F, "SYMBOL followed by SYMBOL", HDR + b"\xf8\xf8\x41a", "expected_string", 4)
    fail(F, "SYMBOL key followed by binary", HDR + b"\x91\xf8\xf6\x01\xe0", "expected_string", 5)
    # invalid values
    fail(F, "DEC mantissa 2^53", HDR + b"\xdc" + vi(P.zigzag(2**53)), "invalid_value", 3)
    fail(F, "DEC mantissa -2^53", HDR + b"\xdc" + vi(P.zigzag(-2**53)), "invalid_value", 3)
    fail(F, "DEC_X exponent 23", HDR + b"\xe8\x17\x03", "invalid_value", 3)
    fail(F, "DEC_X exponent -23", HDR + b"\xe8\xe9\x03", "invalid_value", 3)
    fail(F, "DEC_X exponent inside DEC range", HDR + b"\xe8\x00\x03", "invalid_value", 3)
    fail(F, "DEC_X exponent -12", HDR + b"\xe8\xf4\x03", "invalid_value", 3)
    fail(F, "DEC_DELTA leaves the mantissa range",
         HDR + b"\x82\xdc" + vi(P.zigzag(2**53 - 1)) + b"\xe9" + vi(P.zigzag(1)), "invalid_value", 13)
    fail(F, "INT_POS above 2^64-1", HDR + b"\xe5\x00" + (2**64 - 24).to_bytes(8, "little"), "invalid_value", 3)
    fail(F, "INT_NEG below -2^63", HDR + b"\xe6\x00" + (2**63).to_bytes(8, "little"), "invalid_value", 3)
    fail(F, "INT_DELTA overflows int64", HDR + b"\x82\xe5\x00" + (2**63 - 1 - 24).to_bytes(8, "little")
         + b"\xe7\x05", "invalid_value", 14)
    fail(F, "INT_DELTA underflows int64", HDR + b"\x82\xe6\x00" + (2**63 - 9).to_bytes(8, "little")
         + b"\xe7\x03", "invalid_value", 14)
    fail(F, "BIGINT_POS with zero length", HDR + b"\xea\x01", "invalid_value", 3)
    fail(F, "BIGINT_POS with trailing zero byte", HDR + b"\xea" + vi(10) + b"\x00" * 8 + b"\x01\x00", "invalid_value", 3)
    fail(F, "BIGINT_POS that fits uint64", HDR + b"\xea" + vi(8) + b"\xff" * 8, "invalid_value", 3)
    fail(F, "BIGINT_POS small", HDR + b"\xea" + vi(1) + b"\x05", "invalid_value", 3)
    fail(F, "BIGINT_NEG that fits int64", HDR + b"\xeb" + vi(8) + b"\x00" * 7 + b"\x80", "invalid_value", 3)
    fail(F, "TIME zone 3", HDR + b"\xf9\x06\x01", "invalid_value", 3)
    fail(F, "TIME reserved flag bit", HDR + b"\xf9\x08\x01", "invalid_value", 3)
    fail(F, "TIME nanos zero", HDR + b"\xf9\x01\x01\x01", "invalid_value", 3)
    fail(F, "TIME nanos 10^9", HDR + b"\xf9\x01\x01" + vi(10**9), "invalid_value", 3)
    fail(F, "TIME offset 1440", HDR + b"\xf9\x02\x01" + vi(P.zigzag(1440)), "invalid_value", 3)
    fail(F, "TIME offset -1440", HDR + b"\xf9\x02\x01" + vi(P.zigzag(-1440)), "invalid_value", 3)
    fail(F, "TIME after 9999", HDR + b"\xf9\x00" + vi(P.zigzag(P.MAX_SECONDS + 1)), "invalid_value", 3)
    fail(F, "TIME before 0001", HDR + b"\xf9\x00" + vi(P.zigzag(P.MIN_SECONDS - 1)), "invalid_value", 3)
    fail(F, "TIME local time after 9999", HDR + b"\xf9\x02" + vi(P.zigzag(P.MAX_SECONDS)) + vi(P.zigzag(1)),
         "invalid_value", 3)
    fail(F, "TS_STR variant 0 belongs to TS_Z0", HDR + b"\xfa\x00\x01", "invalid_value", 3)
    fail(F, "TS_STR variant 3 belongs to TS_Z3", HDR + b"\xfa\x03\x01\x01", "invalid_value", 3)
    fail(F, "TS_STR 10 fraction digits", HDR + b"\xfa\x0a\x01\x01", "invalid_value", 3)
    fail(F, "TS_STR reserved bit 7", HDR + b"\xfa\x81\x01\x01", "invalid_value", 3)
    fail(F, "TS_STR date only with time bits", HDR + b"\xfa\x41\x01\x01", "invalid_value", 3)
    fail(F, "TS_STR date only not at midnight", HDR + b"\xfa\x40" + vi(P.zigzag(86401)), "invalid_value", 3)
    fail(F, "TS_Z3 fraction with 4 digits", HDR + b"\xfc\x01" + vi(1000), "invalid_value", 3)
    fail(F, "TS_STR offset out of range", HDR + b"\xfa\x10\x01" + vi(P.zigzag(1440)), "invalid_value", 3)
    fail(F, "TS_Z0 after 9999", HDR + b"\xfb" + vi(P.zigzag(P.MAX_SECONDS + 1)), "invalid_value", 3)
    fail(F, "TS_STR local time before 0001", HDR + b"\xfa\x10" + vi(P.zigzag(P.MIN_SECONDS)) + vi(P.zigzag(-1)),
         "invalid_value", 3)
    fail(F, "EXT type 65536", HDR + b"\xf7" + vi(65536) + b"\x01", "invalid_value", 3)
    fail(F, "empty stream frame", HDR_STREAM + b"\x01", "invalid_value", 3, stream=True)
    # duplicate keys
    fail(F, "MAPDEF duplicate key", HDR + b"\x92\x42ab\x42ab\xe0\xe0", "duplicate_key", 7)
    fail(F, "MAPDEF duplicate key via reference", HDR + b"\x92\x42ab\x00\xe0\xe0", "duplicate_key", 7)
    fail(F, "MAPDEF duplicate one-byte key", HDR + b"\x92\x41a\x41a\xe0\xe0", "duplicate_key", 6)
    fail(F, "MAPDEF duplicate symbol key", HDR + b"\x92\xf8\x41a\xf8\x41a\xe0\xe0", "duplicate_key", 7)
    fail(F, "MAP_GEN duplicate integer keys", HDR + b"\xf4" + vi(2) + b"\xa9\xe0\xa9\xe0", "duplicate_key", 3)
    fail(F, "MAP_GEN duplicate string keys", HDR + b"\xf4" + vi(2) + b"\x42ab\xe0\x00\xe0", "duplicate_key", 3)
    fail(F, "MAP_GEN duplicate float keys", HDR + b"\xf4" + vi(2) + b"\xdb\x03\xe0\xdb\x03\xe0", "duplicate_key", 3)
    fail(F, "MAP_GEN duplicate null keys", HDR + b"\xf4" + vi(2) + b"\xe0\xa8\xe0\xa9", "duplicate_key", 3)
    # depth
    fail(F, "array nesting 1001", HDR + b"\x81" * 1000 + b"\x80", "depth_exceeded", 3 + 1000)
    fail(F, "map nesting 1001", HDR + b"\x91\x41a" + b"\x60" * 999 + b"\x60", "depth_exceeded", 3 + 3 + 999)
    fail(F, "generic map nesting 1001", HDR + (b"\xf4\x03\xe0") * 1000 + b"\xf4\x03\xe0\xe0", "depth_exceeded", 3 + 3000)
    fail(F, "depth limit 3", HDR + b"\x81\x81\x81\x80", "depth_exceeded", 6, max_depth=3)
    # streams
    S0 = sync_frame(b"\xe0")            # a first frame: sync, null
    fail(F, "frame longer than input", HDR_STREAM + vi(5) + b"\xfd\x12\xe0", "length_exceeds_input", 3, stream=True)
    fail(F, "frame with trailing byte", HDR_STREAM + sync_frame(b"\xe0\xe0"), "trailing_bytes", 7, stream=True)
    fail(F, "value runs past its frame", HDR_STREAM + sync_frame(b"\x81") + vi(1) + b"\xe0",
         "length_exceeds_input", 6, stream=True)
    fail(F, "value truncated at frame end", HDR_STREAM + sync_frame(b"\x82\xe0") + vi(1) + b"\xe0",
         "length_exceeds_input", 6, stream=True)
    fail(F, "second frame invalid", HDR_STREAM + S0 + vi(1) + b"\xfe", "invalid_tag", 8, stream=True)
    fail(F, "stream reference to a later frame's string", HDR_STREAM + sync_frame(b"\x00"), "bad_reference", 6,
         stream=True)
    # sync frames and joins (SPEC 2.3)
    fail(F, "first frame not a sync frame", HDR_STREAM + vi(1) + b"\xe0", "out_of_sequence", 4, stream=True)
    fail(F, "header then a frame from the middle of a stream",
         HDR_STREAM + bytes.fromhex("0b8242636300"), "out_of_sequence", 4, stream=True,
         note="the second frame of the stream of [[\"aa\",\"bb\"],[\"cc\",\"aa\"]]: it refers to strings "
              "of the first frame, which this decoder never saw")
    fail(F, "SYNC inside an item", HDR_STREAM + sync_frame(b"\x81\xfd\x12"), "invalid_tag", 7, stream=True)
    fail(F, "SYNC as a single value", HDR + b"\xfd\x12\xe0", "invalid_tag", 3)
    fail(F, "SYNC after the first byte of a frame", HDR_STREAM + S0 + vi(3) + b"\xe0\xfd\x12",
         "trailing_bytes", 9, stream=True)
    fail(F, "sync frame without its VF byte", HDR_STREAM + vi(1) + b"\xfd", "truncated", 5, stream=True)
    fail(F, "sync frame without an item", HDR_STREAM + vi(2) + b"\xfd\x12", "truncated", 6, stream=True)
    fail(F, "sync frame VF differs from the header", HDR_STREAM + sync_frame(b"\xe0", vf=0x10), "bad_sync", 5,
         stream=True)
    fail(F, "later sync frame VF differs", HDR_STREAM + S0 + sync_frame(b"\xe0", vf=0x13), "bad_sync", 9,
         stream=True)
    users_id = V.dict_objects["users"].id.to_bytes(8, "little")
    empty_id = V.dict_objects["empty"].id.to_bytes(8, "little")
    fail(F, "sync frame names another dictionary", b"\xc1\x70\x13" + users_id
         + sync_frame(b"\xe0", 0x13, empty_id), "bad_sync", 14, stream=True, dictionary="users")
    fail(F, "sync frame of a dictionary stream without its id", b"\xc1\x70\x13" + users_id
         + sync_frame(b"\xe0"), "bad_sync", 13, stream=True, dictionary="users")
    fail(F, "join: skipped frame longer than input", vi(1) + b"\xe0" + vi(9) + b"\xe0", "length_exceeds_input", 2,
         join=True)
    fail(F, "join: empty skipped frame", vi(1) + b"\xe0" + vi(0), "invalid_value", 2, join=True)
    fail(F, "join: sync frame of another version", vi(1) + b"\xe0" + sync_frame(b"\xe0", vf=0x22),
         "unsupported_version", 4, join=True)
    fail(F, "join: sync frame without STREAM", vi(1) + b"\xe0" + sync_frame(b"\xe0", vf=0x10), "bad_flags", 4,
         join=True)
    fail(F, "join: sync frame with a reserved flag", sync_frame(b"\xe0", vf=0x16), "bad_flags", 2, join=True)
    fail(F, "join: unknown dictionary", sync_frame(b"\xe0", 0x13, (12345).to_bytes(8, "little")),
         "unknown_dictionary", 3, join=True, provide="users")
    fail(F, "join: later sync frame differs", sync_frame(b"\xe0") + sync_frame(b"\xe0", vf=0x13),
         "bad_sync", 6, join=True)
    fail(F, "join: error in the first decoded frame", vi(1) + b"\xe0" + sync_frame(b"\x00"), "bad_reference", 5,
         join=True)


# =============================================================================
# Corpus encodings
# =============================================================================

def gen_corpus():
    out = OUT / "corpus"
    manifest = []
    for kind in ("seed", "large"):
        (out / kind).mkdir(parents=True, exist_ok=True)
        sources = sorted((CORPUS / kind).glob("*.json" if kind == "seed" else "*.json.xz"))
        for src in sources:
            raw = lzma.open(src).read() if src.suffix == ".xz" else src.read_bytes()
            value = json.loads(raw)
            b = P.encode(value)
            assert P.diag(P.decode(b)) == P.diag(value), src
            name = src.name.removesuffix(".xz").removesuffix(".json")
            if kind == "seed":
                dst = out / kind / f"{name}.tersa"
                dst.write_bytes(b)
            else:
                dst = out / kind / f"{name}.tersa.xz"
                dst.write_bytes(lzma.compress(b, preset=9 | lzma.PRESET_EXTREME))
            import hashlib
            manifest.append({"name": name, "kind": kind, "json": str(src.relative_to(ROOT)),
                             "tersa": str(dst.relative_to(ROOT)), "json_bytes": len(raw),
                             "tersa_bytes": len(b), "tersa_sha256": hashlib.sha256(b).hexdigest()})
    (out / "manifest.json").write_text(json.dumps({"documents": manifest}, indent=1) + "\n")


def dump(obj: dict, key: str) -> str:
    """One vector (or dictionary) per line: diffs stay readable and deep values
    do not blow up with indentation."""
    head = {k: v for k, v in obj.items() if k != key}
    lines = [json.dumps(k) + ": " + json.dumps(v, ensure_ascii=False) for k, v in head.items()]
    items = obj[key]
    if isinstance(items, dict):
        body = ",\n".join("  " + json.dumps(k) + ": " + json.dumps(v, ensure_ascii=False) for k, v in items.items())
        lines.append(json.dumps(key) + ": {\n" + body + "\n }")
    else:
        body = ",\n".join("  " + json.dumps(v, ensure_ascii=False) for v in items)
        lines.append(json.dumps(key) + ": [\n" + body + "\n ]")
    return "{\n " + ",\n ".join(lines) + "\n}\n"


def main():
    sys.setrecursionlimit(100000)
    gen_integers()
    gen_int_deltas()
    gen_floats()
    gen_strings()
    gen_prefix()
    gen_ts_strings()
    gen_timestamps()
    gen_containers()
    gen_others()
    vectors_well_known.gen_valid(V)
    gen_streams_and_dicts()
    gen_noncanonical()
    gen_invalid()
    vectors_well_known.gen_invalid(V, "invalid")
    if V.mismatches:
        sys.exit("must-fail vectors disagree with the reference decoder:\n  " + "\n  ".join(V.mismatches))
    OUT.mkdir(parents=True, exist_ok=True)
    valid_files = {k: v for k, v in V.files.items() if k != "invalid"}
    (OUT / "valid").mkdir(exist_ok=True)
    (OUT / "invalid").mkdir(exist_ok=True)
    for name, f in valid_files.items():
        (OUT / "valid" / f"{name}.json").write_text(dump(f, "vectors"))
    (OUT / "invalid" / "invalid.json").write_text(dump(V.files["invalid"], "vectors"))
    (OUT / "dictionaries.json").write_text(dump({"dictionaries": V.dictionaries}, "dictionaries"))
    gen_corpus()
    nvalid = sum(len(f["vectors"]) for f in valid_files.values())
    print(f"{nvalid} valid vectors, {len(V.files['invalid']['vectors'])} must-fail vectors, "
          f"{len(V.dictionaries)} dictionaries")


if __name__ == "__main__":
    main()
