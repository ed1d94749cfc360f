/*
 * test_floats.c - the shortcuts of the float path against plain references:
 * tersa_f32_exact's bit test against a round trip through float, and the one-scaling
 * decimal test (tersa_decimal_of_double) against the rule it implements: the
 * shortest digits (Schubfach, checked against Python's repr by the vectors),
 * at most 15 of them, exponent within +-22; and the try at a slot's
 * exponent (tersa_decimal_at_exponent) against the same rule.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t s = 88172645463325252ull;
static uint64_t rnd(void) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

static double strtod_power(int k) {
    char buf[16];
    snprintf(buf, sizeof buf, "1e%d", k);
    return strtod(buf, NULL);
}

/* The canonical decimal form by its definition (SPEC 7). */
static bool decimal_reference(double d, int64_t *m, int *e) {
    if (d != d || isinf(d) || (d == 0 && signbit(d))) return false;
    if (d == 0) {
        *m = 0;
        *e = 0;
        return true;
    }
    int ex;
    uint64_t sig = tersa_shortest_decimal(d, &ex);
    if (sig >= 1000000000000000ull || ex < -22 || ex > 22) return false;
    *m = d < 0 ? -(int64_t)sig : (int64_t)sig;
    *e = ex;
    return true;
}

static bool f32_exact_reference(double d) {
    if (d != d) return false;
    if (isinf(d)) return true;
    if (d > FLT_MAX || d < -FLT_MAX) return false;
    return (double)(float)d == d;
}

/* A double that tends to sit near the edges of the shortcuts. */
static double sample(void) {
    double d;
    uint64_t r = rnd();
    switch (r % 8) {
    case 0: { uint64_t b = rnd(); memcpy(&d, &b, 8); break; }
    case 1: { float f; uint32_t b = (uint32_t)rnd(); memcpy(&f, &b, 4); d = f; break; }
    case 2: d = nextafter((double)(float)ldexp((double)(rnd() % 1000), (int)(rnd() % 300) - 150), 0.0); break;
    case 3: d = (double)(int64_t)(rnd() % 9007199254740992ull); break;
    case 4: d = (double)(int64_t)(rnd() % 100000) * pow(10, (double)(rnd() % 12)); break;
    case 5: d = ldexp((double)(rnd() % 9007199254740992ull), (int)(rnd() % 40) - 20); break;
    case 6: d = nextafter((double)(int64_t)(rnd() % 1000000), (rnd() & 1) ? 1e300 : -1e300); break;
    case 7: d = (double)(int64_t)(rnd() % 2000000000000ull) / pow(10, (double)(rnd() % 12)); break;
    }
    if (r % 32 == 7) { /* around powers of ten, where the scale must be exact */
        d = strtod_power(((int)(rnd() % 90)) - 45);
        for (uint64_t t = rnd() % 4; t; t--) d = nextafter(d, (r & 64) ? 1e308 : 0.0);
    } else if (r % 32 == 15) { /* decimals of 14 to 17 digits */
        char buf[64];
        snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)(rnd() % 100000000000000000ull), (int)(rnd() % 60) - 40);
        d = strtod(buf, NULL);
    }
    return (rnd() & 1) ? -d : d;
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    long bad = 0, n = 0, decimals = 0, floats = 0;
    for (long i = 0; i < 3000000; i++) {
        double d = sample();
        n++;
        bool fast = tersa_f32_exact(d), ref = f32_exact_reference(d);
        floats += ref;
        if (fast != ref && bad++ < 10) printf("tersa_f32_exact(%a): %d, reference %d\n", d, fast, ref);

        int64_t m = 0, rm = 0;
        int e = 0, re = 0;
        bool ok = tersa_decimal_of_double(d, &m, &e), rok = decimal_reference(d, &rm, &re);
        decimals += rok;
        if ((ok != rok || (ok && (m != rm || e != re))) && bad++ < 10)
            printf("tersa_decimal_of_double(%.17g): %d %lld e%d, reference %d %lld e%d\n", d, ok, (long long)m, e, rok,
                   (long long)rm, re);

        /* The try at a slot's exponent: when it answers, the canonical form. */
        int he = (int)(rnd() % 45) - 22;
        int64_t hm = 0;
        if (tersa_decimal_at_exponent(d, &he, &hm) && (!rok || hm != rm || he != re) && bad++ < 10)
            printf("tersa_decimal_at_exponent(%.17g): %lld e%d, reference %d %lld e%d\n", d, (long long)hm, he, rok,
                   (long long)rm, re);
    }
    printf("%ld checked (%ld decimal, %ld float-exact), %ld mismatches\n", n, decimals, floats, bad);
    /* A sampler that stopped reaching either kind would pass vacuously. */
    return bad != 0 || decimals < n / 5 || floats < n / 10;
}
