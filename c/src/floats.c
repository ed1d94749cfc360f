/*
 * floats.c - decimal floats (SPEC 5.2, 7) and binary32 handling.
 *
 * The decimal form of a double is its shortest round-trip decimal m * 10^e,
 * used when |m| < 2^53 and |e| <= 22. Decoding is then a single IEEE
 * operation on two exactly representable doubles, hence correctly rounded,
 * hence equal to the original: no separate verification step is needed, but
 * only because pith_shortest_digits is exact (tested against Python's repr).
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

#define TWO_POW_53 9007199254740992LL

/*
 * Integral values (common: 2100.0, 3.0) need no special case here:
 * shortest_decimal takes them from the bits without Schubfach. A shortcut
 * through `d == (double)(int64_t)d` in front of it cost every other float a
 * chain of conversions: removing it saved 5% of canada.json's float time.
 * A scale-by-10^k search was tried too and lost from three decimals up (and
 * by 5x on 17-digit values such as canada.json's coordinates).
 */
bool decimal_of_double(double d, int64_t *m, int *e) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    if ((bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull) return false; /* inf, NaN */
    if ((bits << 1) == 0) {
        if (bits) return false; /* -0.0 has no decimal form */
        *m = 0;
        *e = 0;
        return true;
    }
    int exp10;
    uint64_t sig = shortest_decimal(d, &exp10);
    if (sig >= (uint64_t)TWO_POW_53 || exp10 < -22 || exp10 > 22) return false;
    int64_t v = (int64_t)sig;
    *m = (bits >> 63) ? -v : v;
    *e = exp10;
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
