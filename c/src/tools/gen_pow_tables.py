#!/usr/bin/env python3
"""Generate c/src/dtoa_tables.h: the power-of-ten tables of dtoa.c and c/cli/strtod.c.

Usage: python3 c/src/tools/gen_pow_tables.py [output]   (default: c/src/dtoa_tables.h,
relative to the repository root, found from this file's location)

Everything is computed with Python's exact integers, and every shortcut the C code
takes (the fixed-point logarithm approximations) is checked here over the whole range
it is used on, so the C side needs no proof beyond "the generator asserted it".

Tables
  tersa_pow10_schubfach[k - SF_MIN]   for k in SF_MIN..SF_MAX (dtoa.c, Schubfach)
      g(k) = floor(10^k * 2^(127 - floor(log2 10^k))) + 1, a 128-bit integer in
      (2^127, 2^128]: an upper bound of 10^k scaled to 128 bits (Giulietti's g).
  tersa_pow10_lemire[q - EL_MIN]       for q in EL_MIN..EL_MAX (c/cli/strtod.c, Eisel-Lemire)
      floor(10^q * 2^(127 - floor(log2 10^q))): the first 128 bits of 10^q,
      truncated (a lower bound), most significant bit set.
Each entry is stored as {high 64 bits, low 64 bits}.
"""

import os
import sys
from fractions import Fraction

# --------------------------------------------------------------------------
# Exact helpers
# --------------------------------------------------------------------------


def floor_log2(x: Fraction) -> int:
    """floor(log2(x)) for a positive rational, exactly."""
    n, d = x.numerator, x.denominator
    e = n.bit_length() - d.bit_length()
    # 2^e <= x < 2^(e+1) after at most one correction either way.
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def floor_log10(x: Fraction) -> int:
    """floor(log10(x)) for a positive rational, exactly."""
    e = len(str(x.numerator)) - len(str(x.denominator))
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    return e


def pow10(k: int) -> Fraction:
    return Fraction(10) ** k


def asr(x: int, s: int) -> int:
    """Arithmetic shift right (floor division by 2^s), as the C helpers compute it."""
    return x >> s  # Python's >> floors for negative numbers too


# --------------------------------------------------------------------------
# Ranges and fixed-point logarithms used by dtoa.c (Schubfach)
# --------------------------------------------------------------------------

# A finite non-zero double is c * 2^q with q in -1074..971.
Q_MIN, Q_MAX = -1074, 971

# floor(log10(2^q)) = (q * 1262611) >> 22
# floor(log10(3/4 * 2^q)) = (q * 1262611 - 524031) >> 22
# floor(log2(10^k)) = (k * 1741647) >> 19
LOG10_2_MUL, LOG10_2_SHIFT, LOG10_34_SUB = 1262611, 22, 524031
LOG2_10_MUL, LOG2_10_SHIFT = 1741647, 19

ks = set()
for q in range(Q_MIN, Q_MAX + 1):
    k = floor_log10(Fraction(2) ** q)
    assert asr(q * LOG10_2_MUL, LOG10_2_SHIFT) == k, q
    ks.add(-k)
    # The closer-lower-boundary case (significand field 0, exponent field > 1) uses 3/4 * 2^q.
    if q >= -1073:
        k3 = floor_log10(Fraction(3, 4) * Fraction(2) ** q)
        assert asr(q * LOG10_2_MUL - LOG10_34_SUB, LOG10_2_SHIFT) == k3, q
        ks.add(-k3)
SF_MIN, SF_MAX = min(ks), max(ks)
for k in range(SF_MIN, SF_MAX + 1):
    assert asr(k * LOG2_10_MUL, LOG2_10_SHIFT) == floor_log2(pow10(k)), k
# dtoa.c shifts the 55-bit scaled significand left by h = q + floor(log2 10^-k) + 1;
# check 1 <= h <= 4 so that the shifted value fits 64 bits.
for q in range(Q_MIN, Q_MAX + 1):
    for k in {asr(q * LOG10_2_MUL, LOG10_2_SHIFT), asr(q * LOG10_2_MUL - LOG10_34_SUB, LOG10_2_SHIFT)}:
        h = q + asr(-k * LOG2_10_MUL, LOG2_10_SHIFT) + 1
        assert 1 <= h <= 4, (q, k, h)


def schubfach_g(k: int) -> int:
    e = floor_log2(pow10(k))
    g = (pow10(k) * Fraction(2) ** (127 - e)).__floor__() + 1
    assert 2 ** 127 < g <= 2 ** 128 - 1, k  # never exactly 2^128: fits 128 bits
    return g


# --------------------------------------------------------------------------
# Ranges and fixed-point logarithm used by c/cli/strtod.c (Eisel-Lemire)
# --------------------------------------------------------------------------

# w * 10^q with 1 <= w < 2^64: below 10^-342 it rounds to 0, above 10^308 to infinity.
EL_MIN, EL_MAX = -342, 308
# floor(log2(10^q)) = (q * 217706) >> 16 over the whole range.
LOG2_10_EL_MUL, LOG2_10_EL_SHIFT = 217706, 16
for q in range(EL_MIN, EL_MAX + 1):
    assert asr(q * LOG2_10_EL_MUL, LOG2_10_EL_SHIFT) == floor_log2(pow10(q)), q
assert (2 ** 64 - 1) * pow10(EL_MIN - 1) < Fraction(1, 2) * Fraction(2) ** -1074
assert pow10(EL_MAX + 1) > Fraction(2) ** 1024


def lemire_t(q: int) -> int:
    e = floor_log2(pow10(q))
    t = (pow10(q) * Fraction(2) ** (127 - e)).__floor__()
    assert 2 ** 127 <= t < 2 ** 128, q
    return t


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def entry(x: int) -> str:
    return "{0x%016xu, 0x%016xu}" % (x >> 64, x & (2 ** 64 - 1))


def table(name: str, lo: int, hi: int, fn) -> str:
    rows = [f"static const tersa_u128_pair {name}[{hi - lo + 1}] = {{"]
    for k in range(lo, hi + 1):
        rows.append(f"    {entry(fn(k))}, /* {k} */")
    rows.append("};")
    return "\n".join(rows)


def main() -> None:
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "c", "src", "dtoa_tables.h")
    text = f"""/*
 * dtoa_tables.h - power-of-ten tables for dtoa.c and cli/strtod.c.
 *
 * GENERATED by c/src/tools/gen_pow_tables.py; do not edit. The generator
 * computes every entry with exact integer arithmetic and checks the ranges and
 * fixed-point logarithm constants below over every exponent they are used on.
 */
#ifndef TERSA_DTOA_TABLES_H
#define TERSA_DTOA_TABLES_H

#include <stdint.h>

/** A 128-bit value as {{high 64 bits, low 64 bits}}. */
typedef struct tersa_u128_pair {{
    uint64_t hi;
    uint64_t lo;
}} tersa_u128_pair;

/* floor(log10(2^q)) = (q * LOG10_2_MUL) >> LOG10_2_SHIFT for q in {Q_MIN}..{Q_MAX};
 * floor(log10(3/4 * 2^q)) = (q * LOG10_2_MUL - LOG10_34_SUB) >> LOG10_2_SHIFT;
 * floor(log2(10^k)) = (k * LOG2_10_MUL) >> LOG2_10_SHIFT for k in {SF_MIN}..{SF_MAX}. */
#define TERSA_LOG10_2_MUL {LOG10_2_MUL}
#define TERSA_LOG10_2_SHIFT {LOG10_2_SHIFT}
#define TERSA_LOG10_34_SUB {LOG10_34_SUB}
#define TERSA_LOG2_10_MUL {LOG2_10_MUL}
#define TERSA_LOG2_10_SHIFT {LOG2_10_SHIFT}

/* Schubfach: g(k) = floor(10^k * 2^(127 - floor(log2 10^k))) + 1 for k in
 * TERSA_SF_MIN..TERSA_SF_MAX. */
#define TERSA_SF_MIN ({SF_MIN})
#define TERSA_SF_MAX {SF_MAX}
{table("tersa_pow10_schubfach", SF_MIN, SF_MAX, schubfach_g)}

/* floor(log2(10^q)) = (q * LOG2_10_EL_MUL) >> LOG2_10_EL_SHIFT for q in {EL_MIN}..{EL_MAX}. */
#define TERSA_LOG2_10_EL_MUL {LOG2_10_EL_MUL}
#define TERSA_LOG2_10_EL_SHIFT {LOG2_10_EL_SHIFT}

/* Eisel-Lemire: floor(10^q * 2^(127 - floor(log2 10^q))) for q in
 * TERSA_EL_MIN..TERSA_EL_MAX (w * 10^q is 0 below and infinite above for any
 * 64-bit w). */
#define TERSA_EL_MIN ({EL_MIN})
#define TERSA_EL_MAX {EL_MAX}
{table("tersa_pow10_lemire", EL_MIN, EL_MAX, lemire_t)}

#endif /* TERSA_DTOA_TABLES_H */
"""
    with open(out, "w", newline="\n") as f:
        f.write(text)


if __name__ == "__main__":
    main()
