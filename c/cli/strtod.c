/*
 * strtod.c - correctly rounded decimal-to-double conversion (JSON number grammar).
 *
 * Three tiers, each exact where it answers:
 *
 *   1. Clinger's fast path: a significand below 2^53 and a power of ten that is
 *      itself a double (|e| <= 22) need a single IEEE multiplication or
 *      division, which rounds correctly by definition.
 *   2. Eisel-Lemire: multiply the 64-bit significand by a 128-bit truncated
 *      power of ten and read the answer off the top bits, giving up when the
 *      truncation could change the rounding (rare: near-halfway inputs) or the
 *      result is subnormal or infinite.
 *   3. Simple decimal conversion (the algorithm of Go's strconv and Wuffs): an
 *      800-digit decimal shifted by powers of two until its integer part holds
 *      the 53-bit significand. Slow (microseconds) but exact for any input:
 *      800 digits are more than any halfway point between two doubles needs,
 *      and digits beyond that only matter through a "truncated" flag.
 *
 * The C library's strtod is not used: it depends on the locale's decimal point
 * and not every libc rounds correctly.
 */
#include "json.h"

#include <float.h>
#include <string.h>

#include "dtoa_tables.h"

#include "bits.h"
#include "compiler.h"

/* The exponent estimate shifts negative products right; see dtoa.c. */
_Static_assert((-1 >> 1) == -1, "signed right shift must be arithmetic");

/* ==========================================================================
 * Digits
 * ========================================================================== */

TERSA_INLINE bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* The digit tricks take eight characters as load_le64 gives them: the first
 * character in the low byte. */

/* True if all eight bytes are ASCII digits: each byte's high nibble is 3
 * and adding 6 does not carry out of its low nibble. */
TERSA_INLINE bool is_eight_digits(uint64_t v) {
    return ((v & 0xF0F0F0F0F0F0F0F0ull) |
            (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) == 0x3333333333333333ull;
}

/* The value of eight ASCII digits (first digit in the low byte) with three
 * multiplications: pairs, then quads, then the whole (Lemire's SWAR trick). */
TERSA_INLINE uint32_t eight_digits(uint64_t v) {
    v -= 0x3030303030303030ull;
    v = v * 10 + (v >> 8);
    v = (((v & 0x000000FF000000FFull) * 0x000F424000000064ull) +
         (((v >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
    return (uint32_t)v;
}

/* Append the run of digits at p to *w (which wraps past 19 digits); returns
 * the end of the run. Eight at a time while eight are there. */
TERSA_INLINE const char *add_digits(const char *p, const char *end, uint64_t *w) {
    uint64_t v = *w;
    while (end - p >= 8 && is_eight_digits(load_le64(p))) {
        v = v * 100000000u + eight_digits(load_le64(p));
        p += 8;
    }
    while (p < end && is_digit(*p)) {
        v = 10 * v + (uint64_t)(*p - '0');
        p++;
    }
    *w = v;
    return p;
}

TERSA_INLINE double double_from_bits(uint64_t bits) {
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

#define EXP_INF 0x7FF0000000000000ull
#define SIGN_BIT 0x8000000000000000ull

/* ==========================================================================
 * Tier 1: Clinger's fast path
 * ========================================================================== */

/* Exact powers of ten: every 10^k with k <= 22 is a double (5^22 < 2^53). */
static const double exact_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static const uint64_t int_pow10[20] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
    1000000000u, 10000000000u, 100000000000u, 1000000000000u, 10000000000000u,
    100000000000000u, 1000000000000000u, 10000000000000000u, 100000000000000000u,
    1000000000000000000u, 10000000000000000000u,
};

/* One correctly rounded operation only when doubles are evaluated as
 * doubles: with x87 extended precision (FLT_EVAL_METHOD 2) the product would
 * be rounded twice. Such targets skip straight to Eisel-Lemire. */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#  define HAVE_CLINGER 1
#else
#  define HAVE_CLINGER 0
#endif

/* ==========================================================================
 * Tier 2: Eisel-Lemire
 * ========================================================================== */

/*
 * w * 10^q rounded to the nearest double, as IEEE bits in *out, for w != 0
 * and TERSA_EL_MIN <= q <= TERSA_EL_MAX. Returns false when undecided (the
 * truncated power of ten leaves the rounding open, or the result would be
 * subnormal or overflow); the caller then uses the exact path.
 */
TERSA_INLINE bool eisel_lemire(uint64_t w, int q, uint64_t *out) {
    const tersa_u128_pair *t = &tersa_pow10_lemire[q - TERSA_EL_MIN];
    int lz = clz64(w);
    w <<= lz;
    /* 10^q = t * 2^(floor(log2 10^q) - 127); 1087 = 1023 + 64. */
    int e2 = ((q * TERSA_LOG2_10_EL_MUL) >> TERSA_LOG2_10_EL_SHIFT) + 1087 - lz;

    uint64_t x_lo;
    uint64_t x_hi = mul_64x64(w, t->hi, &x_lo);
    /* t is a lower bound of the true power; the upper bound adds at most w
     * to the product. Only when that could carry into the 54 bits we keep
     * do we need the low half of t. */
    if ((x_hi & 0x1FF) == 0x1FF && x_lo + w < x_lo) {
        uint64_t y_lo;
        uint64_t y_hi = mul_64x64(w, t->lo, &y_lo);
        uint64_t merged_hi = x_hi, merged_lo = x_lo + y_hi;
        if (merged_lo < x_lo) merged_hi++;
        if ((merged_hi & 0x1FF) == 0x1FF && merged_lo + 1 == 0 && y_lo + w < y_lo) return false;
        x_hi = merged_hi;
        x_lo = merged_lo;
    }
    /* x_hi >= 2^62: keep 54 bits (the 53 of the result plus a rounding bit). */
    unsigned msb = (unsigned)(x_hi >> 63);
    uint64_t m = x_hi >> (msb + 9);
    e2 -= 1 ^ (int)msb;
    /* Exactly halfway by our approximation, which may be a hair below the
     * truth: round-half-even cannot be decided here. */
    if (x_lo == 0 && (x_hi & 0x1FF) == 0 && (m & 3) == 1) return false;
    m += m & 1;
    m >>= 1;
    if (m >> 53) { /* rounding carried into a new bit */
        m >>= 1;
        e2++;
    }
    if (e2 <= 0 || e2 >= 0x7FF) return false; /* subnormal or infinite */
    *out = (m & ((1ull << 52) - 1)) | ((uint64_t)e2 << 52);
    return true;
}

/* ==========================================================================
 * Tier 3: simple decimal conversion
 * ========================================================================== */

#define DEC_CAP 800
#define MAX_SHIFT 60 /* n * 10 + 9 must fit 64 bits while shifting by this */

/* 0.d[0]d[1]...d[nd-1] * 10^dp, digits as values 0-9, no trailing zeros. */
typedef struct decimal {
    int nd;
    int dp;
    bool trunc; /* non-zero digits were dropped after d[DEC_CAP - 1] */
    uint8_t d[DEC_CAP];
} decimal;

static void decimal_trim(decimal *a) {
    while (a->nd > 0 && a->d[a->nd - 1] == 0) a->nd--;
    if (a->nd == 0) a->dp = 0;
}

/* a /= 2^k, k <= MAX_SHIFT. */
static void decimal_rshift(decimal *a, unsigned k) {
    int r = 0, w = 0;
    uint64_t n = 0;
    /* Read enough leading digits for the first quotient digit. */
    for (; (n >> k) == 0; r++) {
        if (r >= a->nd) {
            if (n == 0) {
                a->nd = 0;
                return;
            }
            while ((n >> k) == 0) {
                n *= 10;
                r++;
            }
            break;
        }
        n = n * 10 + a->d[r];
    }
    a->dp -= r - 1;
    uint64_t mask = (1ull << k) - 1;
    for (; r < a->nd; r++) {
        a->d[w++] = (uint8_t)(n >> k);
        n = (n & mask) * 10 + a->d[r];
    }
    while (n > 0) {
        uint8_t dig = (uint8_t)(n >> k);
        n &= mask;
        if (w < DEC_CAP) {
            a->d[w++] = dig;
        } else if (dig > 0) {
            a->trunc = true;
        }
        n *= 10;
    }
    a->nd = w;
    decimal_trim(a);
}

/* a *= 2^k, k <= MAX_SHIFT. Works from the last digit up into a scratch
 * buffer, so the number of new leading digits need not be known first. */
static void decimal_lshift(decimal *a, unsigned k) {
    uint8_t tmp[DEC_CAP + 20];
    int w = a->nd + 19; /* 2^60 * 10 < 10^20: at most 19 new digits */
    uint64_t n = 0;
    for (int r = a->nd - 1; r >= 0; r--) {
        n += (uint64_t)a->d[r] << k;
        uint64_t quo = n / 10;
        tmp[w--] = (uint8_t)(n - 10 * quo);
        n = quo;
    }
    while (n > 0) {
        uint64_t quo = n / 10;
        tmp[w--] = (uint8_t)(n - 10 * quo);
        n = quo;
    }
    int count = a->nd + 19 - w;
    a->dp += count - a->nd;
    if (count > DEC_CAP) {
        for (int i = DEC_CAP; i < count; i++)
            if (tmp[w + 1 + i]) a->trunc = true;
        count = DEC_CAP;
    }
    memcpy(a->d, tmp + w + 1, (size_t)count);
    a->nd = count;
    decimal_trim(a);
}

static void decimal_shift(decimal *a, int k) {
    if (a->nd == 0) return;
    if (k > 0) {
        for (; k > MAX_SHIFT; k -= MAX_SHIFT) decimal_lshift(a, MAX_SHIFT);
        decimal_lshift(a, (unsigned)k);
    } else if (k < 0) {
        for (; k < -MAX_SHIFT; k += MAX_SHIFT) decimal_rshift(a, MAX_SHIFT);
        decimal_rshift(a, (unsigned)-k);
    }
}

/* The integer part rounded half to even (a truncated tail breaks ties up). */
static uint64_t decimal_rounded_integer(const decimal *a) {
    if (a->dp > 20) return UINT64_MAX;
    uint64_t n = 0;
    int i = 0;
    for (; i < a->dp && i < a->nd; i++) n = n * 10 + a->d[i];
    for (; i < a->dp; i++) n *= 10;
    int nd = a->dp;
    bool up = false;
    if (nd >= 0 && nd < a->nd) {
        if (a->d[nd] == 5 && nd + 1 == a->nd)
            up = a->trunc || (nd > 0 && (a->d[nd - 1] & 1));
        else
            up = a->d[nd] >= 5;
    }
    return n + up;
}

/* Bits of the double nearest to a (positive; may be infinity or zero). */
static uint64_t decimal_to_bits(decimal *a) {
    /* Shifts by at most 2^n keep the value in [0.5, 10) * 10^dp steps: the
     * number of bits of 10^dp for small dp, 27 at a time beyond. */
    static const int powtab[9] = {1, 3, 6, 9, 13, 16, 19, 23, 26};
    if (a->nd == 0) return 0;
    if (a->dp > 310) return EXP_INF;
    if (a->dp < -330) return 0;

    int exp = 0;
    while (a->dp > 0) {
        int n = a->dp >= 9 ? 27 : powtab[a->dp];
        decimal_shift(a, -n);
        exp += n;
    }
    while (a->dp < 0 || (a->dp == 0 && a->d[0] < 5)) {
        int n = -a->dp >= 9 ? 27 : powtab[-a->dp];
        decimal_shift(a, n);
        exp -= n;
    }
    /* Now a is in [0.5, 1); doubles are 1.f * 2^e. */
    exp--;
    if (exp < -1022) { /* subnormal: fix the exponent, lose precision */
        int n = -1022 - exp;
        decimal_shift(a, -n);
        exp += n;
    }
    if (exp + 1023 >= 0x7FF) return EXP_INF;
    decimal_shift(a, 53);
    uint64_t m = decimal_rounded_integer(a);
    if (m == (2ull << 52)) { /* rounding carried into a new bit */
        m >>= 1;
        exp++;
        if (exp + 1023 >= 0x7FF) return EXP_INF;
    }
    if (!(m & (1ull << 52))) exp = -1023; /* subnormal */
    return (m & ((1ull << 52) - 1)) | ((uint64_t)(exp + 1023) << 52);
}

/* Load the digits of a number already checked against the grammar. */
static void decimal_load(decimal *a, const char *ip, size_t int_len, const char *fp,
                         size_t frac_len, int64_t exp) {
    a->nd = 0;
    a->trunc = false;
    int64_t dp = 0;
    if (!(int_len == 1 && ip[0] == '0')) {
        dp = (int64_t)int_len;
        for (size_t i = 0; i < int_len; i++) {
            if (a->nd < DEC_CAP)
                a->d[a->nd++] = (uint8_t)(ip[i] - '0');
            else if (ip[i] != '0')
                a->trunc = true;
        }
    }
    for (size_t i = 0; i < frac_len; i++) {
        if (a->nd == 0 && fp[i] == '0') {
            dp--; /* leading zero after the point */
            continue;
        }
        if (a->nd < DEC_CAP)
            a->d[a->nd++] = (uint8_t)(fp[i] - '0');
        else if (fp[i] != '0')
            a->trunc = true;
    }
    dp += exp;
    /* Out-of-range decimal points decide the result without digits; keep
     * them in int range with a margin decimal_to_bits recognises. */
    if (dp > 100000) dp = 100000;
    if (dp < -100000) dp = -100000;
    a->dp = (int)dp;
    decimal_trim(a);
}

static TERSA_NOINLINE uint64_t slow_path(const char *ip, size_t int_len, const char *fp,
                                        size_t frac_len, int64_t exp) {
    decimal a;
    decimal_load(&a, ip, int_len, fp, frac_len, exp);
    return decimal_to_bits(&a);
}

/* ==========================================================================
 * Parsing
 * ========================================================================== */

/* Saturation bound for the exponent: beyond it the result is 0 or infinity
 * whatever the digits, and adding the digit count cannot overflow int64. */
#define EXP_LIMIT 100000000000000000ll

const char *tersa_parse_double(const char *p, const char *end, double *out) {
    bool neg = false;
    if (p >= end) return NULL;
    if (*p == '-') {
        neg = true;
        if (++p == end) return NULL;
    }

    /* Integer part. Digits accumulate into w; past 19 digits w wraps and
     * is recomputed below. */
    const char *ip = p;
    uint64_t w = 0;
    if (*p == '0') {
        p++;
    } else if (is_digit(*p)) {
        p = add_digits(p, end, &w);
    } else {
        return NULL;
    }
    size_t int_len = (size_t)(p - ip);

    /* Fraction. A '.' or an exponent marker without digits after it is not
     * part of the number: like strtod, the number ends before it. */
    const char *fp = p;
    size_t frac_len = 0;
    if (p + 1 < end && *p == '.' && is_digit(p[1])) {
        fp = ++p;
        p = add_digits(p, end, &w);
        frac_len = (size_t)(p - fp);
    }

    /* Exponent. */
    int64_t exp = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        bool eneg = false;
        if (q < end && (*q == '+' || *q == '-')) {
            eneg = *q == '-';
            q++;
        }
        if (q < end && is_digit(*q)) {
            do {
                if (exp < EXP_LIMIT) exp = 10 * exp + (*q - '0');
                q++;
            } while (q < end && is_digit(*q));
            if (eneg) exp = -exp;
            p = q;
        }
    }

    /* value = DIGITS * 10^e10, DIGITS being the integer and fraction digits. */
    int64_t e10 = exp - (int64_t)frac_len;
    bool trunc = false;
    size_t ndigits = int_len + frac_len;
    if (ndigits > 19) {
        /* Count significant digits: only "0.000ddd" has leading zeros. */
        size_t lz = 0;
        if (ip[0] == '0') {
            lz = 1;
            while (lz - 1 < frac_len && fp[lz - 1] == '0') lz++;
        }
        size_t nsig = ndigits - lz;
        if (nsig > 19) {
            /* Keep the first 19 significant digits; the value lies in
             * [w, w + 1) * 10^(e10 + nsig - 19). */
            w = 0;
            size_t taken = 0;
            const char *s = ip[0] == '0' ? fp + (lz - 1) : ip;
            const char *stop = fp + frac_len;
            for (; s < stop && taken < 19; s++) {
                if (*s == '.') continue;
                w = 10 * w + (uint64_t)(*s - '0');
                taken++;
            }
            for (; s < stop; s++) {
                if (*s != '.' && *s != '0') {
                    trunc = true;
                    break;
                }
            }
            e10 += (int64_t)(nsig - 19);
        }
    }

    uint64_t bits;
    if (w == 0) { /* all digits zero (w cannot be 0 when truncated) */
        bits = 0;
        goto done;
    }
    if (e10 < TERSA_EL_MIN) { /* below half the smallest subnormal */
        bits = 0;
        goto done;
    }
    if (e10 > TERSA_EL_MAX) {
        bits = EXP_INF;
        goto done;
    }
    if (TERSA_LIKELY(!trunc)) {
#if HAVE_CLINGER
        if (w <= (1ull << 53)) {
            if (e10 >= -22 && e10 <= 22) {
                double d = (double)w;
                d = e10 < 0 ? d / exact_pow10[-e10] : d * exact_pow10[e10];
                *out = neg ? -d : d;
                return p;
            }
            /* 1.5e30: move zeros from the power into the significand while it
             * stays exact. */
            if (e10 > 22 && e10 <= 22 + 19) {
                uint64_t f = int_pow10[e10 - 22];
                if (w <= (1ull << 53) / f) {
                    double d = (double)(w * f) * exact_pow10[22];
                    *out = neg ? -d : d;
                    return p;
                }
            }
        }
#endif
        if (eisel_lemire(w, (int)e10, &bits)) goto done;
    } else {
        /* The true value is strictly between w and w + 1 (scaled); if both
         * round to the same double, so does everything between. */
        uint64_t b2;
        if (eisel_lemire(w, (int)e10, &bits) && eisel_lemire(w + 1, (int)e10, &b2) && bits == b2)
            goto done;
    }
    bits = slow_path(ip, int_len, fp, frac_len, exp);
done:
    if (neg) bits |= SIGN_BIT;
    *out = double_from_bits(bits);
    return p;
}
