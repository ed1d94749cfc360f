/*
 * test_numbers.c - tersa_shortest_digits, tersa_diag_double and tersa_parse_double.
 *
 * Usage: test_numbers <repository root>
 *
 *   1. Known answers: c/tests/data/shortest.txt (from Python's repr and the
 *      reference diag_float) for the shortest digits and the diagnostic text.
 *   2. Properties over random doubles: the digits parse back to the double, and
 *      no decimal with one digit fewer does.
 *   3. Parsing: hand-picked hard cases, the grammar, and exact halfway points
 *      between neighbouring doubles (computed here with big decimals) with the
 *      decimal just above and just below them, in fixed and exponent form.
 */
#include "tersa.h"
#include "json.h" /* tersa_parse_double */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            if (failures < 50) {                           \
                printf("FAIL %s:%d: ", __FILE__, __LINE__); \
                printf(__VA_ARGS__);                       \
                printf("\n");                              \
            }                                              \
            failures++;                                    \
        }                                                  \
    } while (0)

static double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}

static uint64_t to_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* xorshift64*: deterministic and independent of the C library. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* A random finite double: mostly uniform bit patterns, some subnormals and
 * some short decimals. */
static double random_double(void) {
    for (;;) {
        uint64_t b = rng();
        unsigned kind = (unsigned)(b % 10);
        b = rng();
        if (kind == 0) b &= (1ull << 52) - 1; /* subnormal (or zero) */
        if (kind == 1) {                        /* k / 10^j */
            static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7};
            double d = (double)(b % 100000000u) / p10[(b >> 40) % 8];
            if (d != 0) return d;
            continue;
        }
        double d = from_bits(b);
        if ((b & 0x7FF0000000000000ull) != 0x7FF0000000000000ull && d != 0) return d;
    }
}

/* Parse a whole NUL-terminated string; reports a failure if it does not
 * consume everything. */
static double parse_all(const char *s) {
    double d = 0;
    const char *end = s + strlen(s);
    const char *p = tersa_parse_double(s, end, &d);
    CHECK(p == end, "tersa_parse_double(\"%.80s\") consumed %ld of %ld bytes", s,
          p ? (long)(p - s) : -1L, (long)(end - s));
    return d;
}

/* ==========================================================================
 * 1. Known answers
 * ========================================================================== */

static void test_known_answers(const char *root) {
    char path[4096];
    snprintf(path, sizeof path, "%s/c/tests/data/shortest.txt", root);
    FILE *f = fopen(path, "r");
    if (!f) {
        CHECK(0, "cannot open %s", path);
        return;
    }
    char line[512];
    int count = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char hex[32], want_digits[32], want_exp[32], want_diag[64];
        if (sscanf(line, "%31s %31s %31s %63s", hex, want_digits, want_exp, want_diag) != 4) {
            CHECK(0, "bad line in shortest.txt: %s", line);
            continue;
        }
        uint64_t bits = strtoull(hex, NULL, 16);
        double d = from_bits(bits);
        count++;

        tersa_buf b;
        tersa_buf_init(&b, NULL);
        CHECK(tersa_diag_double(d, &b), "tersa_diag_double failed");
        CHECK(b.ptr && strcmp(b.ptr, want_diag) == 0, "diag of %s: got %s, want %s", hex,
              b.ptr ? b.ptr : "(null)", want_diag);
        tersa_buf_free(&b);

        if (want_digits[0] == '-') continue;
        char digits[18];
        int e = 12345;
        int n = tersa_shortest_digits(d, digits, &e);
        digits[n > 0 && n <= 17 ? n : 0] = '\0';
        CHECK(n >= 1 && n <= 17 && strcmp(digits, want_digits) == 0 && e == atoi(want_exp),
              "shortest digits of %s: got %s e%d, want %s e%s", hex, digits, e, want_digits,
              want_exp);
        /* The sign is ignored. */
        int e2;
        char d2[17];
        int n2 = tersa_shortest_digits(-d, d2, &e2);
        CHECK(n2 == n && e2 == e && memcmp(d2, digits, (size_t)n) == 0, "sign changes digits of %s",
              hex);
    }
    fclose(f);
    CHECK(count > 20000, "only %d known answers read", count);
    printf("known answers: %d values\n", count);
}

/* ==========================================================================
 * 2. Shortest-digit properties
 * ========================================================================== */

/* "<digits>e<exp>" as a string. */
static void format_sci(char *out, const char *digits, int n, int e) {
    memcpy(out, digits, (size_t)n);
    sprintf(out + n, "e%d", e);
}

/* digits (n of them) as an unsigned integer (n <= 17). */
static uint64_t digits_value(const char *digits, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v * 10 + (uint64_t)(digits[i] - '0');
    return v;
}

static void test_shortest_properties(void) {
    const int N = 300000;
    for (int i = 0; i < N; i++) {
        double d = random_double();
        if (d < 0) d = -d;
        char digits[17];
        int e;
        int n = tersa_shortest_digits(d, digits, &e);
        if (n < 1 || n > 17) {
            CHECK(0, "digit count %d for %a", n, d);
            continue;
        }
        CHECK(digits[0] != '0' && digits[n - 1] != '0', "leading or trailing zero for %a", d);
        char text[64];
        format_sci(text, digits, n, e);
        double back = parse_all(text);
        CHECK(to_bits(back) == to_bits(d), "%s does not round-trip to %a", text, d);
        if (n == 1) continue;
        /* No decimal with n - 1 digits rounds to d: the candidates nearest
         * to d at that length are D/10 rounded down and up. */
        uint64_t shorter = digits_value(digits, n) / 10;
        for (uint64_t c = shorter; c <= shorter + 1; c++) {
            if (c == 0) continue;
            sprintf(text, "%llue%d", (unsigned long long)c, e + 1);
            double x = parse_all(text);
            CHECK(to_bits(x) != to_bits(d), "%s is shorter than %.*se%d and also gives %a", text, n,
                  digits, e, d);
        }
    }
    printf("shortest properties: %d random doubles\n", N);
}

/* ==========================================================================
 * 3. Parsing
 * ========================================================================== */

static const struct {
    const char *text;
    uint64_t bits;
} hard_cases[] = {
    {"2.2250738585072011e-308", 0x000fffffffffffffull},
    {"2.2250738585072012e-308", 0x0010000000000000ull},
    {"2.2250738585072014e-308", 0x0010000000000000ull},
    {"9007199254740993", 0x4340000000000000ull},
    {"9007199254740993.0000000001", 0x4340000000000001ull},
    {"9007199254740995", 0x4340000000000002ull},
    {"1e-400", 0x0000000000000000ull},
    {"-1e-400", 0x8000000000000000ull},
    {"1e400", 0x7ff0000000000000ull},
    {"-1e400", 0xfff0000000000000ull},
    {"4.9406564584124654e-324", 0x0000000000000001ull},
    {"2.4703282292062327e-324", 0x0000000000000000ull},
    {"2.4703282292062328e-324", 0x0000000000000001ull},
    {"1.7976931348623157e308", 0x7fefffffffffffffull},
    {"1.7976931348623158e308", 0x7fefffffffffffffull},
    {"1.7976931348623159e308", 0x7ff0000000000000ull},
    {"0.1", 0x3fb999999999999aull},
    {"0.3", 0x3fd3333333333333ull},
    {"1e23", 0x44b52d02c7e14af6ull},
    {"8.98846567431158e307", 0x7fe0000000000000ull},
    {"1.00000000000000011102230246251565404236316680908203125", 0x3ff0000000000000ull},
    {"1.00000000000000011102230246251565404236316680908203126", 0x3ff0000000000001ull},
    {"1.00000000000000011102230246251565404236316680908203124", 0x3ff0000000000000ull},
    {"7.2057594037927933e16", 0x4370000000000000ull},
    {"-0", 0x8000000000000000ull},
    {"-0.0", 0x8000000000000000ull},
    {"0", 0x0000000000000000ull},
    {"0e999999999999999999999", 0x0000000000000000ull},
    {"1e-99999999999999999999", 0x0000000000000000ull},
    {"1e99999999999999999999", 0x7ff0000000000000ull},
    {"0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001e400", 0x3ff0000000000000ull},
    {"123456789012345678901234567890", 0x45f8ee90ff6c373eull},
    {"0.000000000000000000000000000000000000001", 0x37d5c72fb1552d83ull},
    {"2.2204460492503131e-16", 0x3cb0000000000000ull},
    {"4.35679e-1", 0x3fdbe22a2c237479ull},
    {"3.0540412e5", 0x4112a3f07ae147aeull},
    {"1.15e-13", 0x3d402f4fc8c3d757ull},
    {"69e267", 0x77c0b7cb60c994daull},
    {"999999999999999999999.9999999e-3", 0x43abc16d674ec800ull},
    {"1448997445238699", 0x4314976c0803feacull},
    {"5e-324", 0x0000000000000001ull},
    {"2e-324", 0x0000000000000000ull},
    {"3e-324", 0x0000000000000001ull},
    {"18446744073709551615", 0x43f0000000000000ull},
    {"18446744073709551616", 0x43f0000000000000ull},
    {"9223372036854775807", 0x43e0000000000000ull},
    {"1E5", 0x40f86a0000000000ull},
    {"1e+5", 0x40f86a0000000000ull},
    {"37.7749", 0x4042e32fec56d5d0ull},
    {"-122.4194", 0xc05e9ad77318fc50ull},
    {"0.30000000000000004", 0x3fd3333333333334ull},
};

static void test_parse_cases(void) {
    for (size_t i = 0; i < sizeof hard_cases / sizeof hard_cases[0]; i++) {
        double d = parse_all(hard_cases[i].text);
        CHECK(to_bits(d) == hard_cases[i].bits, "%.60s: got %016llx, want %016llx",
              hard_cases[i].text, (unsigned long long)to_bits(d),
              (unsigned long long)hard_cases[i].bits);
    }

    /* Strings that are not JSON numbers at all. */
    static const char *const invalid[] = {"", "-", "+1", ".5", "-.5", "Infinity", "NaN", " 1",
                                          "-x", "e5", "--1", "-e5", "\x80"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        double d;
        const char *s = invalid[i];
        CHECK(tersa_parse_double(s, s + strlen(s), &d) == NULL, "\"%s\" accepted", s);
    }
    /* A valid prefix: the end of the number is returned (as strtod does, a
     * '.' or exponent without digits is not part of it). */
    static const struct {
        const char *text;
        size_t len;
    } prefixes[] = {{"01", 1}, {"1.5x", 3}, {"-0.0e", 4}, {"2e5.5", 3}, {"1,2", 1}, {"1 ", 1},
                    {"12.5]", 4}, {"3E+2}", 4}, {"1.", 1}, {"1.e5", 1}, {"1e", 1}, {"1e+", 1},
                    {"1e-", 1}, {"-0.", 2}, {"5E+x", 1}};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        double d;
        const char *s = prefixes[i].text;
        const char *p = tersa_parse_double(s, s + strlen(s), &d);
        CHECK(p == s + prefixes[i].len, "\"%s\": number should end after %zu bytes", s,
              prefixes[i].len);
    }
    /* The end pointer bounds the parse: no reading past it. */
    {
        const char s[] = "12345";
        double d;
        const char *p = tersa_parse_double(s, s + 3, &d);
        CHECK(p == s + 3 && d == 123.0, "bounded parse of \"123|45\"");
        CHECK(tersa_parse_double(s, s, &d) == NULL, "empty range accepted");
    }

    /* Long inputs: thousands of digits. */
    {
        static char buf[20000];
        /* 1 followed by 5000 zeros: infinity. */
        buf[0] = '1';
        memset(buf + 1, '0', 5000);
        buf[5001] = '\0';
        CHECK(to_bits(parse_all(buf)) == 0x7ff0000000000000ull, "1e5000 in digits");
        /* 0.000...0001 with 5000 zeros: zero; the same times 1e5001: one... */
        memcpy(buf, "0.", 2);
        memset(buf + 2, '0', 5000);
        strcpy(buf + 5002, "1e5001");
        CHECK(to_bits(parse_all(buf)) == 0x3ff0000000000000ull, "long fraction times 1e5001");
        /* ... and 1 + 2^-53 (a tie, to even: 1.0) followed by many zeros and a 1. */
        strcpy(buf, "1.00000000000000011102230246251565404236316680908203125");
        size_t len = strlen(buf);
        CHECK(to_bits(parse_all(buf)) == 0x3ff0000000000000ull, "tie at 1 + 2^-53");
        memset(buf + len, '0', 15000);
        strcpy(buf + len + 15000, "1");
        CHECK(to_bits(parse_all(buf)) == 0x3ff0000000000001ull, "tie plus 10^-15055");
        buf[len + 15000] = '\0';
        CHECK(to_bits(parse_all(buf)) == 0x3ff0000000000000ull, "tie with 15000 trailing zeros");
        /* 3000 nines: 1e3000 rounded: infinity; 0.999... (3000 nines): 1.0. */
        memset(buf, '9', 3000);
        buf[3000] = '\0';
        CHECK(to_bits(parse_all(buf)) == 0x7ff0000000000000ull, "3000 nines");
        memcpy(buf, "0.", 2);
        memset(buf + 2, '9', 3000);
        buf[3002] = '\0';
        CHECK(to_bits(parse_all(buf)) == 0x3ff0000000000000ull, "0.999... (3000 nines)");
    }
    printf("parse cases: %zu hard cases\n", sizeof hard_cases / sizeof hard_cases[0]);
}

/* ---- exact decimals of halfway points ---------------------------------- */

/* Multiply the n little-endian decimal digits at d by f (below 2^59, so that
 * digit * f + carry fits 64 bits), growing n. */
static void mul_digits(uint8_t *d, int *n, uint64_t f) {
    uint64_t carry = 0;
    for (int i = 0; i < *n; i++) {
        uint64_t t = d[i] * f + carry;
        d[i] = (uint8_t)(t % 10);
        carry = t / 10;
    }
    while (carry) {
        d[(*n)++] = (uint8_t)(carry % 10);
        carry /= 10;
    }
}

/* Exact decimal digits of M * 2^E (M > 0): writes the digits (most
 * significant first, no leading zeros) to out and returns the count; *point
 * is the number of digits before the decimal point (may be <= 0, meaning
 * leading zeros after "0."). */
static int exact_decimal(uint64_t M, int E, char *out, int *point) {
    /* Little-endian base-10 digits. */
    static uint8_t d[1400];
    int n = 0;
    for (uint64_t m = M; m; m /= 10) d[n++] = (uint8_t)(m % 10);
    int scale = 0; /* value = digits * 10^-scale */
    if (E >= 0) {
        for (int left = E; left > 0;) {
            int s = left > 30 ? 30 : left;
            mul_digits(d, &n, 1ull << s);
            left -= s;
        }
    } else {
        /* M * 2^E = M * 5^-E / 10^-E */
        for (int left = -E; left > 0;) {
            int s = left > 13 ? 13 : left;
            uint64_t f = 1;
            for (int i = 0; i < s; i++) f *= 5;
            mul_digits(d, &n, f);
            left -= s;
        }
        scale = -E;
    }
    for (int i = 0; i < n; i++) out[i] = (char)('0' + d[n - 1 - i]);
    *point = n - scale;
    return n;
}

/* Fixed notation of digits (n, point) into out. */
static void fixed_text(char *out, const char *digits, int n, int point) {
    char *p = out;
    if (point <= 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -point; i++) *p++ = '0';
        memcpy(p, digits, (size_t)n);
        p += n;
    } else if (point >= n) {
        memcpy(p, digits, (size_t)n);
        p += n;
        for (int i = n; i < point; i++) *p++ = '0';
    } else {
        memcpy(p, digits, (size_t)point);
        p += point;
        *p++ = '.';
        memcpy(p, digits + point, (size_t)(n - point));
        p += n - point;
    }
    *p = '\0';
}

/* d.ddd e x notation. */
static void sci_text(char *out, const char *digits, int n, int point) {
    char *p = out;
    *p++ = digits[0];
    if (n > 1) {
        *p++ = '.';
        memcpy(p, digits + 1, (size_t)(n - 1));
        p += n - 1;
    }
    sprintf(p, "e%d", point - 1);
}

static void test_halfway(void) {
    static char digits[1500], up[1500], down[1500], text[1600];
    const int N = 3000;
    for (int i = 0; i < N; i++) {
        /* A finite non-negative double b (any, DBL_MAX included: its upper
         * neighbour is infinity) and the midpoint to the next one up. */
        uint64_t b;
        switch (i % 4) {
        case 0: b = rng() & 0x7FFFFFFFFFFFFFFFull; break;
        case 1: b = rng() & ((1ull << 53) - 1); break;                         /* subnormal/small */
        case 2: b = (rng() & ((1ull << 52) - 1)) | ((uint64_t)(1023 + rng() % 64) << 52); break;
        default: b = (rng() % 64 == 0) ? 0x7FEFFFFFFFFFFFFFull : rng() & 0x7FEFFFFFFFFFFFFFull; break;
        }
        if (b >= 0x7FF0000000000000ull) b = 0x7FEFFFFFFFFFFFFFull;
        uint64_t frac = b & ((1ull << 52) - 1);
        int biased = (int)(b >> 52);
        uint64_t c = biased ? frac | (1ull << 52) : frac;
        int q = biased ? biased - 1075 : -1074;
        int point;
        int n = exact_decimal(2 * c + 1, q - 1, digits, &point);

        /* The tie goes to the even neighbour. */
        uint64_t even = (b & 1) ? b + 1 : b;
        fixed_text(text, digits, n, point);
        CHECK(to_bits(parse_all(text)) == even, "halfway %s should give %016llx", text,
              (unsigned long long)even);
        sci_text(text, digits, n, point);
        CHECK(to_bits(parse_all(text)) == even, "halfway %.60s... should give %016llx", text,
              (unsigned long long)even);

        /* A hair above: append a 1. */
        memcpy(up, digits, (size_t)n);
        up[n] = '1';
        sci_text(text, up, n + 1, point);
        CHECK(to_bits(parse_all(text)) == b + 1, "above halfway %.60s... should give %016llx", text,
              (unsigned long long)(b + 1));

        /* A hair below: subtract one from the last digit, append 9s. */
        memcpy(down, digits, (size_t)n);
        int k = n - 1;
        while (down[k] == '0') down[k--] = '9';
        down[k]--;
        memset(down + n, '9', 5);
        int first = down[0] == '0' ? 1 : 0; /* 1000 - 1 = 0999 */
        sci_text(text, down + first, n + 5 - first, point - first);
        CHECK(to_bits(parse_all(text)) == b, "below halfway %.60s... should give %016llx", text,
              (unsigned long long)b);
        fixed_text(text, down + first, n + 5 - first, point - first);
        CHECK(to_bits(parse_all(text)) == b, "below halfway (fixed) should give %016llx",
              (unsigned long long)b);
    }
    printf("halfway points: %d\n", N);
}

/* Random doubles written in several valid syntaxes parse back exactly. */
static void test_parse_roundtrip(void) {
    const int N = 300000;
    char text[400];
    for (int i = 0; i < N; i++) {
        double d = random_double();
        char digits[17];
        int e;
        int n = tersa_shortest_digits(d, digits, &e);
        const char *sign = d < 0 ? "-" : "";
        int point = n + e;
        char body[380];
        switch (i % 4) {
        case 0: /* fixed notation (long for extreme exponents) */
            fixed_text(body, digits, n, point);
            break;
        case 1: /* d.ddd E+x */
            sci_text(body, digits, n, point);
            break;
        case 2: /* digits followed by zeros, and a compensating exponent */
            memcpy(body, digits, (size_t)n);
            memset(body + n, '0', 30);
            sprintf(body + n + 30, "E%+d", e - 30);
            break;
        default: /* 0.000ddd e x with leading zeros in the fraction */
            sprintf(body, "0.000%.*se%d", n, digits, point + 3);
            break;
        }
        snprintf(text, sizeof text, "%s%s", sign, body);
        double back = parse_all(text);
        CHECK(to_bits(back) == to_bits(d), "%.80s should give %a", text, d);
    }
    printf("parse round trips: %d\n", N);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        printf("usage: %s <repository root>\n", argv[0]);
        return 2;
    }
    test_known_answers(argv[1]);
    test_shortest_properties();
    test_parse_cases();
    test_halfway();
    test_parse_roundtrip();
    if (failures) {
        printf("test_numbers: %d FAILED\n", failures);
        return 1;
    }
    printf("test_numbers: all passed\n");
    return 0;
}
