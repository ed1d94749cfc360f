/*
 * floats.c - decimal floats (SPEC 5.2, 7) and binary32 handling.
 *
 * The decimal form of a double is its shortest round-trip decimal m * 10^e,
 * used when it has at most 15 significant digits (|m| < 10^15) and |e| <= 22.
 * Decoding is then a single IEEE operation on two exactly representable
 * doubles, hence correctly rounded, hence equal to the original.
 *
 * The 15-digit bound lets the encoder decide with one scaling instead of a
 * shortest-digits algorithm (SPEC 7): scaled by 10^k, k = 14 - floor(log10|d|),
 * a qualifying double is within 0.23 of an integer N <= 10^15, and it
 * qualifies exactly when N / 10^k gives it back.
 *
 * This file must be compiled without floating-point contraction (no FMA):
 * see CMakeLists.txt.
 */
#include "internal.h"

#include <float.h>
#include <math.h>

static const double powers_of_ten[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* d * 10^k for |k| <= 22: one correctly rounded operation on exact operands. */
PITH_INLINE double scale(double d, int k) { return k >= 0 ? d * powers_of_ten[k] : d / powers_of_ten[-k]; }
PITH_INLINE double unscale(double n, int k) { return k >= 0 ? n / powers_of_ten[k] : n * powers_of_ten[-k]; }

bool decimal_of_double(double d, int64_t *m, int *e) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    int biased = (int)((bits >> 52) & 0x7FF);
    if (biased == 0x7FF) return false; /* inf, NaN */
    if ((bits << 1) == 0) {
        if (bits) return false; /* -0.0 has no decimal form */
        *m = 0;
        *e = 0;
        return true;
    }
    /* Subnormals are below 10^-307: their decimal exponents are out of range. */
    if (biased == 0) return false;
    /* On the magnitude: a branch on the sign would be mispredicted for every
     * array of mixed signs, which costs more than the rest of this test. */
    double a = fabs(d);
    /* floor(log10 a) within one of j (78913 / 2^18 approximates log10(2)). */
    int j = ((biased - 1023) * 78913) >> 18;
    int k = 14 - j;
    if (k < -23) return false; /* e would exceed 22 */
    if (k > 22) k = 22;
    if (k < -22) k = -22;
    /* Corrected by comparisons rather than branches, for the same reason. A
     * value just below a power of ten may take either scale: both give the
     * same answer. */
    double ax = scale(a, k);
    k += (int)(ax < 1e14 && k < 22) - (int)(ax >= 1e15);
    if (k < -22) return false;
    double x = scale(a, k);
    /* Any integer within 0.5 of x will do: a qualifying x is within 0.23 of
     * one, and no other passes the check. x < 10^16 here, so the conversion
     * is exact and needs no libm call. */
    int64_t v = (int64_t)(x + 0.5);
    if (v > 1000000000000000 || unscale((double)v, k) != a) return false;
    int ex = -k;
    /* Trailing zeros, at most 15 (8 + 4 + 2 + 1), by selects rather than
     * branches: how many there are varies from value to value. */
    uint64_t u = (uint64_t)v, q;
    bool z;
    q = u / 100000000;
    z = q * 100000000 == u;
    u = z ? q : u;
    ex += z ? 8 : 0;
    q = u / 10000;
    z = q * 10000 == u;
    u = z ? q : u;
    ex += z ? 4 : 0;
    q = u / 100;
    z = q * 100 == u;
    u = z ? q : u;
    ex += z ? 2 : 0;
    q = u / 10;
    z = q * 10 == u;
    u = z ? q : u;
    ex += z ? 1 : 0;
    v = (int64_t)u;
    if (ex < -22 || ex > 22) return false;
    int64_t negative = (int64_t)(bits >> 63);
    *m = (v ^ -negative) + negative;
    *e = ex;
    return true;
}

double double_of_decimal(int64_t m, int e) {
    double x = (double)m;
    return e >= 0 ? x * powers_of_ten[e] : x / powers_of_ten[-e];
}

bool f32_exact(double d) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    /* A binary32 significand ends 29 bits above a binary64 one: with any of
     * those low bits set, no float holds d. One test settles most doubles. */
    if (bits & 0x1FFFFFFFu) return false;
    if (d != d) return false;
    if (isinf(d)) return true;
    /* Converting an out-of-range double to float is undefined behaviour. */
    if (d > FLT_MAX || d < -FLT_MAX) return false;
    return (double)(float)d == d;
}

double widen_f32(uint32_t bits) {
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu)) {
        /* By bits: hardware widening would quiet a signalling NaN. */
        uint64_t wide = ((uint64_t)(bits & 0x80000000u) << 32) | (0x7FFull << 52) |
                        ((uint64_t)(bits & 0x007FFFFFu) << 29);
        double d;
        memcpy(&d, &wide, 8);
        return d;
    }
    float f;
    memcpy(&f, &bits, 4);
    return (double)f;
}
