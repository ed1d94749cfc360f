/*
 * test_floats.c - the shortcuts of the float path against plain references:
 * f32_exact's bit test against a round trip through float, and
 * shortest_decimal's integer path against stripping an integer's zeros.
 * (Schubfach itself is checked against Python's repr by the vectors.)
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

static uint64_t s = 88172645463325252ull;
static uint64_t rnd(void) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
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
    default: d = (double)(int64_t)(rnd() % 2000000000000ull) / pow(10, (double)(rnd() % 12)); break;
    }
    return (rnd() & 1) ? -d : d;
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    long bad = 0, n = 0, integral = 0, floats = 0;
    for (long i = 0; i < 3000000; i++) {
        double d = sample();
        n++;
        bool fast = f32_exact(d), ref = f32_exact_reference(d);
        floats += ref;
        if (fast != ref && bad++ < 10) printf("f32_exact(%a): %d, reference %d\n", d, fast, ref);

        double a = fabs(d);
        if (!(a >= 1.0 && a < 9007199254740992.0 && a == floor(a))) continue;
        integral++;
        int64_t v = (int64_t)a;
        int ex = 0;
        while (v % 10 == 0) {
            v /= 10;
            ex++;
        }
        int64_t m = 0;
        int e = 0;
        bool ok = decimal_of_double(d, &m, &e);
        if ((!ok || m != (d < 0 ? -v : v) || e != ex) && bad++ < 10)
            printf("decimal_of_double(%.17g): %d %lld e%d, reference %lld e%d\n", d, ok, (long long)m, e,
                   (long long)(d < 0 ? -v : v), ex);
    }
    printf("%ld checked (%ld integral, %ld float-exact), %ld mismatches\n", n, integral, floats, bad);
    /* A sampler that stopped reaching either shortcut would pass vacuously. */
    return bad != 0 || integral < n / 10 || floats < n / 10;
}
