/*
 * dtoa.c - shortest round-trip digits of a double, and the diagnostic float text.
 *
 * The digits come from Raffaello Giulietti's Schubfach algorithm ("The
 * Schubfach way to render doubles", 2020), in the form that yields exactly the
 * decimal Ryu, Python's repr and JavaScript's Number#toString yield: the
 * fewest significant digits that round back to the double, and among those the
 * one closest to it (ties to an even last digit). Unlike Java's
 * Double.toString, which also uses Schubfach, there is no two-digit minimum.
 *
 * Cost: three 64x128-bit multiplications with one 128-bit table entry, a
 * division by ten and trailing-zero removal; no bignums and no digit-by-digit
 * generation.
 */
#include "tersa.h"

#include <string.h>

#include "dtoa_tables.h"

/* The public header, the compiler hints and word arithmetic only: the number
 * conversions need nothing else from the library, so tools and tests can build
 * them on their own. */
#include "bits.h"
#include "compiler.h"
#include "digits.h"

/* The fixed-point logarithms below shift negative products right and need
 * the shift to be arithmetic (floor); every compiler we target does that,
 * and this fails the build on one that does not. */
_Static_assert((-1 >> 1) == -1, "signed right shift must be arithmetic");

/* ==========================================================================
 * 128-bit arithmetic
 * ========================================================================== */

/*
 * floor(g * cp / 2^128) with its lowest bit set if the division was inexact
 * ("round to odd"): the sticky bit keeps the comparisons against interval
 * bounds exact even though the low 128 bits of the 192-bit product are
 * dropped (Giulietti, section 9).
 */
TERSA_INLINE uint64_t round_to_odd(const tersa_u128_pair *g, uint64_t cp) {
    uint64_t x_lo, y_lo;
    uint64_t x_hi = mul_64x64(g->lo, cp, &x_lo);
    uint64_t y_hi = mul_64x64(g->hi, cp, &y_lo);
    uint64_t mid = y_lo + x_hi;
    y_hi += mid < y_lo;
    (void)x_lo;
    return y_hi | (mid > 1);
}

/* ==========================================================================
 * Shortest digits (Schubfach)
 * ========================================================================== */

/* Remove trailing decimal zeros from s (non-zero); returns how many. Big
 * steps first: a short decimal such as 37.7749 arrives as 3777490000000000. */
TERSA_INLINE int strip_zeros(uint64_t *s) {
    uint64_t v = *s;
    int n = 0;
    if (v % 100000000u == 0) {
        v /= 100000000u;
        n += 8;
        if (v % 100000000u == 0) {
            v /= 100000000u;
            n += 8;
        }
    }
    if (v % 10000u == 0) {
        v /= 10000u;
        n += 4;
    }
    if (v % 100u == 0) {
        v /= 100u;
        n += 2;
    }
    if (v % 10u == 0) {
        v /= 10u;
        n += 1;
    }
    *s = v;
    return n;
}

/* Number of decimal digits of v, 1 <= v < 10^17. */
TERSA_INLINE int decimal_length17(uint64_t v) {
    if (v >= 10000000000000000u) return 17;
    if (v >= 1000000000000000u) return 16;
    if (v >= 100000000000000u) return 15;
    if (v >= 10000000000000u) return 14;
    if (v >= 1000000000000u) return 13;
    if (v >= 100000000000u) return 12;
    if (v >= 10000000000u) return 11;
    if (v >= 1000000000u) return 10;
    if (v >= 100000000u) return 9;
    if (v >= 10000000u) return 8;
    if (v >= 1000000u) return 7;
    if (v >= 100000u) return 6;
    if (v >= 10000u) return 5;
    if (v >= 1000u) return 4;
    if (v >= 100u) return 3;
    if (v >= 10u) return 2;
    return 1;
}

/* Write v (1 <= v < 10^17, no trailing zeros) into digits; returns the count. */
TERSA_INLINE int write_digits(uint64_t v, char *digits) {
    int n = decimal_length17(v);
    char *p = digits + n;
    if (v >= 100000000u) {
        /* Peel eight digits with one 64-bit division, then stay in 32 bits. */
        uint64_t q = v / 100000000u;
        uint32_t r = (uint32_t)(v - q * 100000000u);
        v = q;
        for (int i = 0; i < 4; i++) {
            uint32_t d = r % 100u;
            r /= 100u;
            p -= 2;
            memcpy(p, digit_pairs + 2 * d, 2);
        }
    }
    uint32_t r = (uint32_t)v; /* < 10^9 */
    while (r >= 100u) {
        uint32_t d = r % 100u;
        r /= 100u;
        p -= 2;
        memcpy(p, digit_pairs + 2 * d, 2);
    }
    if (r >= 10u) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    } else {
        *--p = (char)('0' + r);
    }
    return n;
}

/* Also declared in internal.h, which this file does not include (see above). */
uint64_t tersa_shortest_decimal(double d, int *exp10);

uint64_t tersa_shortest_decimal(double d, int *exp10) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    uint64_t fraction = bits & ((1ull << 52) - 1);
    int biased = (int)((bits >> 52) & 0x7FF);

    /* Outside the contract, but cheap to make harmless: zero gives "0"
     * (infinities and NaNs give meaningless digits, without reading out of
     * bounds). */
    if (TERSA_UNLIKELY((bits << 1) == 0)) {
        *exp10 = 0;
        return 0;
    }

    /* d = c * 2^q */
    uint64_t c;
    int q;
    if (biased != 0) {
        c = fraction | (1ull << 52);
        q = biased - 1075;
        /* Integers below 2^53: their own digits are the shortest, because
         * the rounding interval is at most one unit wide and no other
         * integer (which any shorter decimal here would be) fits in it. */
        if (q <= 0 && q >= -52) {
            uint64_t mask = (1ull << -q) - 1;
            if ((c & mask) == 0) {
                uint64_t s = c >> -q;
                int z = strip_zeros(&s);
                *exp10 = z;
                return s;
            }
        }
    } else {
        c = fraction;
        q = -1074;
    }

    /* The rounding interval is [c - 1/2, c + 1/2] * 2^q, except that at a
     * power of two (other than the smallest normal) the gap below is half
     * as wide: [c - 1/4, c + 1/2]. Bounds are included when c is even
     * (round-half-even sends them to d). Everything is scaled by 4 so the
     * bounds are integers. */
    bool even = (c & 1) == 0;
    bool closer = fraction == 0 && biased > 1;
    uint64_t cbl = 4 * c - 2 + (uint64_t)closer;
    uint64_t cb = 4 * c;
    uint64_t cbr = 4 * c + 2;

    /* k is chosen so that the interval holds at most one multiple of
     * 10^(k+1) and at least one of 10^k (Giulietti, section 8). */
    int k = closer ? (q * TERSA_LOG10_2_MUL - TERSA_LOG10_34_SUB) >> TERSA_LOG10_2_SHIFT
                   : (q * TERSA_LOG10_2_MUL) >> TERSA_LOG10_2_SHIFT;
    int h = q + ((-k * TERSA_LOG2_10_MUL) >> TERSA_LOG2_10_SHIFT) + 1; /* 1..4 */
    const tersa_u128_pair *g = &tersa_pow10_schubfach[-k - TERSA_SF_MIN];

    /* 4 * d * 10^-k and the scaled bounds, rounded to odd. */
    uint64_t vbl = round_to_odd(g, cbl << h);
    uint64_t vb = round_to_odd(g, cb << h);
    uint64_t vbr = round_to_odd(g, cbr << h);
    uint64_t lower = vbl + !even;
    uint64_t upper = vbr - !even;

    uint64_t s = vb >> 2; /* floor(d * 10^-k) */
    if (s >= 10) {
        /* A decimal one digit shorter: the multiples of 10^(k+1) around d.
         * If exactly one is in the interval it is the unique shortest. */
        uint64_t sp = s / 10;
        bool up_inside = lower <= 40 * sp;
        bool wp_inside = 40 * sp + 40 <= upper;
        if (up_inside != wp_inside) {
            s = sp + wp_inside;
            k += 1;
            goto done;
        }
    }
    {
        /* Length fixed at this scale: take s or s + 1, whichever is inside,
         * and if both are, the closer (ties to even). */
        bool u_inside = lower <= 4 * s;
        bool w_inside = 4 * s + 4 <= upper;
        if (u_inside != w_inside) {
            s += w_inside;
        } else {
            uint64_t mid = 4 * s + 2;
            bool round_up = vb > mid || (vb == mid && (s & 1) != 0);
            s += round_up;
        }
    }
done:
    k += strip_zeros(&s);
    *exp10 = k;
    return s;
}

int tersa_shortest_digits(double d, char digits[17], int *exp10) {
    uint64_t s = tersa_shortest_decimal(d, exp10);
    if (s == 0) {
        digits[0] = '0';
        return 1;
    }
    return write_digits(s, digits);
}

/* ==========================================================================
 * Diagnostic notation of a float (spec/vectors/README.md)
 * ========================================================================== */

bool tersa_diag_double(double d, tersa_buf *out) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    if ((bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull) {
        if ((bits & 0x000FFFFFFFFFFFFFull) == 0)
            return (bits >> 63) ? tersa_buf_append(out, "-Infinity", 9)
                                : tersa_buf_append(out, "Infinity", 8);
        if (bits == 0x7FF8000000000000ull) return tersa_buf_append(out, "NaN", 3);
        char nan[24] = "NaN(0x";
        static const char hex[] = "0123456789abcdef";
        for (int i = 0; i < 16; i++) nan[6 + i] = hex[(bits >> (60 - 4 * i)) & 15];
        nan[22] = ')';
        return tersa_buf_append(out, nan, 23);
    }
    if ((bits << 1) == 0) return (bits >> 63) ? tersa_buf_append(out, "-0.0", 4)
                                              : tersa_buf_append(out, "0.0", 3);

    char digits[17];
    int e;
    int n = tersa_shortest_digits(d, digits, &e);
    int point = n + e; /* |d| = 0.DIGITS * 10^point */

    /* Longest outputs: "-0.0000" + 17 digits, "-" + 17 digits + "e-324". */
    char text[40];
    char *p = text;
    if (bits >> 63) *p++ = '-';
    if (point >= -4 && point <= 16) {
        if (point <= 0) {
            memcpy(p, "0.0000", (size_t)(2 - point));
            p += 2 - point;
            memcpy(p, digits, (size_t)n);
            p += n;
        } else if (point >= n) {
            memcpy(p, digits, (size_t)n);
            p += n;
            memset(p, '0', (size_t)(point - n));
            p += point - n;
            memcpy(p, ".0", 2);
            p += 2;
        } else {
            memcpy(p, digits, (size_t)point);
            p += point;
            *p++ = '.';
            memcpy(p, digits + point, (size_t)(n - point));
            p += n - point;
        }
    } else {
        int x = point - 1;
        *p++ = digits[0];
        *p++ = '.';
        if (n > 1) {
            memcpy(p, digits + 1, (size_t)(n - 1));
            p += n - 1;
        } else {
            *p++ = '0';
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        if (x < 0) x = -x;
        if (x >= 100) {
            *p++ = (char)('0' + x / 100);
            x %= 100;
            memcpy(p, digit_pairs + 2 * x, 2);
            p += 2;
        } else if (x >= 10) {
            memcpy(p, digit_pairs + 2 * x, 2);
            p += 2;
        } else {
            *p++ = (char)('0' + x);
        }
    }
    return tersa_buf_append(out, text, (size_t)(p - text));
}
