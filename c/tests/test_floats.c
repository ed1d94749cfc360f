/*
 * test_floats.c - the fast decimal path agrees with Schubfach (SPEC 7 floats).
 */
#include "internal.h"

#include <stdio.h>
#include <math.h>
static uint64_t s = 88172645463325252ull;
static uint64_t rnd(void);
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    long bad = 0, n = 0;
    for (long i = 0; i < 3000000; i++) {
        double d;
        uint64_t r = rnd();
        switch (r % 6) {
        case 0: { uint64_t b = rnd(); memcpy(&d, &b, 8); break; }
        case 1: d = (double)(int64_t)(rnd() % 2000000000000ull) / pow(10, (double)(rnd() % 12)); break;
        case 2: d = (double)(int64_t)(rnd() % 100000) / pow(10, (double)(rnd() % 8)); break;
        case 3: d = nextafter((double)(int64_t)(rnd() % 1000000) / pow(10, (double)(rnd() % 7)), (rnd() & 1) ? 1e300 : -1e300); break;
        case 4: d = ldexp(1.0, (int)(rnd() % 120) - 60) * (double)(rnd() % 4 + 1); break;
        default: d = (double)(int64_t)(rnd() % 1125899906842624ull) * pow(10, -(double)(rnd() % 20)); break;
        }
        if (rnd() & 1) d = -d;
        int64_t m1 = 0, m2 = 0; int e1 = 0, e2 = 0;
        bool a = decimal_of_double(d, &m1, &e1), b = decimal_of_double_exact(d, &m2, &e2);
        n++;
        if (a != b || (a && (m1 != m2 || e1 != e2))) { if (bad++ < 10) printf("mismatch %.17g: fast %d %lld e%d, exact %d %lld e%d\n", d, a, (long long)m1, e1, b, (long long)m2, e2); }
    }
    printf("%ld checked, %ld mismatches\n", n, bad);
    return bad != 0;
}
