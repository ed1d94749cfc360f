"""Random values of the whole data model, biased towards what stresses the
tables: repeated and near-repeated strings, timestamp-like text, boundary
integers, decimal and non-decimal floats, repeated key sequences."""

import datetime
import decimal
import random
import struct
import uuid

import tersaref as P

WORDS = ["", "a", "ab", "abc", "usr_1", "usr_12", "usr_123", "é", "éa", "日本", "日本語",
         "2025-04-16T00:00:00Z", "2025-04-16T00:00:00.123Z", "2025-04-16 10:00:00+02:00",
         "2025-04-16", "2025-02-29T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z",
         "2025-04-16T24:00:00Z", "2025-04-16T00:00:00-00:00", "x" * 40, "x" * 41, "\u0000", "😀😀",
         "/api/v2/users", "/api/v2/users/usr_1", "$", "key", "keys"]

INTS = [0, 1, -1, 23, 24, -8, -9, 127, 128, 151, 152, 2**14 + 23, 2**31, -2**31, 2**53, 2**63 - 1,
        -2**63, 2**63, 2**64 - 1, 2**64, -2**63 - 1, 2**100, -2**100, 1713254400000, 1713254460000]


def rand_float(r: random.Random) -> float:
    k = r.randrange(8)
    if k == 0:
        return round(r.uniform(-1000, 1000), r.randrange(0, 7))
    if k == 1:
        return struct.unpack("<d", r.getrandbits(64).to_bytes(8, "little"))[0]
    if k == 2:
        return r.choice([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 5e-324, 1e22, 1e23,
                         0.1 + 0.2, 2.0**53, 2.0**-1074, 1.7976931348623157e308, 9007199254740993.0])
    if k == 3:
        base = round(r.uniform(-100, 100), 4)
        return r.choice([base, float.__new__(float, base) + 1e-12])
    if k == 4:
        return float(r.randrange(-10**6, 10**6)) * 10.0 ** r.randrange(-25, 25)
    if k == 5:
        return struct.unpack("<f", struct.pack("<f", r.uniform(-1e6, 1e6)))[0]
    return r.choice([22.5, 22.3, 37.7749, 37.7748, -122.4194, 129.99, 1.0, 2100.0])


def rand_str(r: random.Random) -> str:
    k = r.randrange(5)
    if k == 0:
        return r.choice(WORDS)
    if k == 1:
        return r.choice(WORDS) + r.choice(WORDS)
    if k == 2:
        return "".join(r.choice("ab€😀_1") for _ in range(r.randrange(0, 20)))
    if k == 3:
        return "%04d-%02d-%02dT%02d:%02d:%02d%s" % (
            r.randrange(1, 10000), r.randrange(1, 13), r.randrange(1, 29), r.randrange(24),
            r.randrange(60), r.randrange(60), r.choice(["Z", ".5Z", ".123456789+05:45", "-11:00"]))
    return "p" * r.randrange(100, 300) + r.choice(WORDS)


def rand_well_known(r: random.Random):
    """A decimal, date, uuid or time of day (SPEC 5.8), boundaries included."""
    k = r.randrange(4)
    if k == 0:
        if r.random() < 0.2:
            return decimal.Decimal(r.choice(["0", "-0", "0.00", "Infinity", "-Infinity", "NaN", "1.0", "1.00"]))
        digits = tuple(int(c) for c in str(r.choice([r.randrange(10**6), r.getrandbits(200), 10**r.randrange(30)])))
        exp = r.choice([r.randrange(-20, 21), r.choice([-1, 1]) * P.MAX_DECIMAL_EXPONENT, r.randrange(-10**9 + 1, 10**9)])
        return decimal.Decimal((r.randrange(2), digits, exp))
    if k == 1:
        return datetime.date.fromordinal(r.choice([1, 719163, 3652059, r.randrange(1, 3652060)]))
    if k == 2:
        return uuid.UUID(int=r.choice([0, (1 << 128) - 1, r.getrandbits(128)]))
    return datetime.time(r.randrange(24), r.randrange(60), r.randrange(60), r.choice([0, 999_999, r.randrange(10**6)]))


def rand_time(r: random.Random) -> P.Timestamp:
    zone = r.randrange(3)
    offset = r.randrange(-1439, 1440) if zone == P.ZONE_OFFSET else 0
    seconds = r.randrange(P.MIN_SECONDS + 86400, P.MAX_SECONDS - 86400)
    return P.Timestamp(seconds, r.choice([0, 0, 1, 999_999_999, r.randrange(10**9)]), zone, offset)


KEYSETS = [["id", "name"], ["id", "name", "tags"], ["a"], [], ["x", "y", "z"], ["lat", "lng"]]


def rand_value(r: random.Random, depth: int = 0):
    k = r.randrange(16 if depth < 5 else 11)
    if k == 0:
        return r.choice([None, True, False])
    if k == 1:
        return r.choice(INTS) + r.choice([0, 0, 1, -1])
    if k == 2:
        return r.randrange(-300, 300)
    if k in (3, 4):
        return rand_float(r)
    if k in (5, 6, 7):
        return rand_str(r)
    if k == 8:
        return r.choice([P.Symbol(rand_str(r)), r.randbytes(r.randrange(0, 40)),
                         P.Ext(r.randrange(0, P.MAX_APP_EXT_TYPE + 1), r.randbytes(r.randrange(0, 9))),
                         rand_well_known(r)])
    if k == 9:
        return rand_time(r)
    if k == 10:
        return r.randrange(-2**70, 2**70)
    if k in (11, 12):
        return [rand_value(r, depth + 1) for _ in range(r.choice([0, 1, 3, 15, 16, 20]))]
    if k in (13, 14):
        keys = r.choice(KEYSETS) if r.random() < 0.7 else [rand_str(r) for _ in range(r.randrange(0, 18))]
        keys = [P.Symbol(x) if r.random() < 0.1 else x for x in dict.fromkeys(keys)]
        return {key: rand_value(r, depth + 1) for key in keys}
    pairs = {}
    for _ in range(r.randrange(0, 5)):
        key = r.choice([r.randrange(-5, 300), rand_float(r), None, True, rand_str(r), P.Symbol("s")])
        pairs[P.diag(key)] = (key, rand_value(r, depth + 1))
    return P.Map(list(pairs.values()))
