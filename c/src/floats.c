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

const double tersa_powers_of_ten[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* d * 10^k for |k| <= 22: one correctly rounded operation on exact operands. */
#define scale tersa_scale_by_ten
#define unscale tersa_unscale_by_ten

/* 10^n for n in [-8, 38] as the nearest doubles: floor(log10 a) then takes
 * one comparison with the next power of ten. The inexact negative powers can
 * misjudge a value within an ulp of a power of ten, where either scale gives
 * the same answer (SPEC 7). */
static const double next_powers[47] = {
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0,  1e1,  1e2,  1e3,
    1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27,
    1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38,
};

TERSA_INLINE uint64_t rotr64(uint64_t x, int r) { return (x >> r) | (x << (64 - r)); }

/* u / 10^n if 10^n divides u: u times the inverse of 5^n modulo 2^64,
 * rotated right by n, is at most max / 10^n exactly for the multiples of
 * 10^n (Granlund and Montgomery's divisibility test), and is then the
 * quotient. Written as a conditional: the counts of trailing zeros in one
 * slot mostly repeat, and a predicted branch is cheaper than a select. */
#define STRIP_ZEROS(u, ex, n, inv5, limit)        \
    do {                                          \
        uint64_t q_ = rotr64((u) * (inv5), (n));  \
        if (q_ <= (limit)) {                      \
            (u) = q_;                             \
            (ex) += (n);                          \
        }                                         \
    } while (0)

bool tersa_decimal_of_double(double d, int64_t *m, int *e) {
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
    /* floor(log10 a) is floor(log10 2^E) or one more (78913 / 2^18
     * approximates log10(2) closely enough for every binary64 exponent). */
    int j = ((biased - 1023) * 78913) >> 18;
    if (j > 36) return false; /* k = 14 - j < -22: e would exceed 22 */
    if (j >= -9) j += (int)(a >= next_powers[j + 9]);
    int k = 14 - j;
    if (k < -22) return false;
    if (k > 22) k = 22;
    double x = scale(a, k);
    /* Any integer within 0.5 of x will do: a qualifying x is within 0.23 of
     * one, and no other passes the check. x < 10^16 here, so the conversion
     * is exact and needs no libm call. */
    int64_t v = (int64_t)(x + 0.5);
    if (v > 1000000000000000 || unscale((double)v, k) != a) return false;
    int ex = -k;
    /* At most 15 trailing zeros: 8 + 4 + 2 + 1. */
    uint64_t u = (uint64_t)v;
    STRIP_ZEROS(u, ex, 8, 0xc767074b22e90e21ull, 184467440737ull);
    STRIP_ZEROS(u, ex, 4, 0xd288ce703afb7e91ull, 1844674407370955ull);
    STRIP_ZEROS(u, ex, 2, 0x8f5c28f5c28f5c29ull, 184467440737095516ull);
    STRIP_ZEROS(u, ex, 1, 0xcccccccccccccccdull, 1844674407370955161ull);
    if (ex < -22 || ex > 22) return false;
    int64_t negative = (int64_t)(bits >> 63);
    *m = ((int64_t)u ^ -negative) + negative;
    *e = ex;
    return true;
}

double tersa_double_of_decimal(int64_t m, int e) {
    double x = (double)m;
    return e >= 0 ? x * tersa_powers_of_ten[e] : x / tersa_powers_of_ten[-e];
}

double tersa_widen_f32(uint32_t bits) {
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
