/*
 * testutil.c - test harness helpers.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

unsigned long test_checks, test_failures;

int test_summary(const char *name) {
    printf("%s: %lu checks, %lu failures\n", name, test_checks, test_failures);
    return test_failures ? 1 : 0;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

uint8_t *hex_decode(const char *hex, size_t hexlen, size_t *len) {
    if (hexlen % 2) return NULL;
    uint8_t *out = (uint8_t *)malloc(hexlen / 2 + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < hexlen / 2; i++) {
        int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
        if (a < 0 || b < 0) {
            free(out);
            return NULL;
        }
        out[i] = (uint8_t)(a * 16 + b);
    }
    *len = hexlen / 2;
    return out;
}

char *hex_encode(const uint8_t *p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    char *out = (char *)malloc(2 * n + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = 0;
    return out;
}

uint64_t rng_next(test_rng *r) {
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

uint64_t rng_below(test_rng *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

uint8_t *encode_value(const tersa_value *v, const tersa_dict *dict, size_t *len, tersa_error *err) {
    tersa_writer *w = tersa_writer_new(NULL);
    uint8_t *out = NULL;
    if (w && tersa_writer_start(w, dict, 0) && tersa_write_value(w, v) && tersa_writer_complete(w)) {
        const uint8_t *data = tersa_writer_data(w, len);
        out = (uint8_t *)malloc(*len ? *len : 1);
        if (out) memcpy(out, data, *len);
    } else if (w && err) {
        *err = *tersa_writer_error(w);
    }
    tersa_writer_free(w);
    return out;
}

char *diag_of(const tersa_value *v) {
    tersa_buf b;
    tersa_buf_init(&b, NULL);
    tersa_diag(v, &b);
    char *out = (char *)malloc(b.len + 1);
    if (out) {
        memcpy(out, b.ptr ? b.ptr : "", b.len);
        out[b.len] = 0;
    }
    tersa_buf_free(&b);
    return out;
}
