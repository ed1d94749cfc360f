/*
 * test_keys.c - the writer refuses generic maps whose keys are equal as Tersa
 * values (SPEC 1), containers included, and accepts keys that only a host
 * would confuse.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A key writer: writes one key item into the open generic map. */
typedef bool (*key_fn)(tersa_writer *w, int variant);

static bool nan_bits(tersa_writer *w, uint64_t bits) {
    double d;
    memcpy(&d, &bits, 8);
    return tersa_write_double(w, d);
}

static bool k_nan(tersa_writer *w, int v) { return nan_bits(w, v ? 0xfff8000000000001ull : 0x7ff8000000000000ull); }
static bool k_zero(tersa_writer *w, int v) { return tersa_write_double(w, v ? -0.0 : 0.0); }
static bool k_int_or_float(tersa_writer *w, int v) { return v ? tersa_write_double(w, 1.0) : tersa_write_int(w, 1); }
static bool k_str_or_bin(tersa_writer *w, int v) {
    return v ? tersa_write_binary(w, "a", 1) : tersa_write_string(w, "a", 1);
}
static bool k_str_or_sym(tersa_writer *w, int v) {
    return v ? tersa_write_symbol(w, "ab", 2) : tersa_write_string(w, "ab", 2);
}
static bool k_time_zone(tersa_writer *w, int v) {
    tersa_timestamp t = {1744795427, 0, 0, (uint8_t)(v ? TERSA_ZONE_OFFSET : TERSA_ZONE_UTC)};
    return tersa_write_timestamp(w, &t);
}
static bool k_array(tersa_writer *w, int v) {
    return tersa_write_array_begin(w, 2) && tersa_write_int(w, 1) &&
           (v ? tersa_write_double(w, 2.0) : tersa_write_int(w, 2)) && tersa_write_array_end(w);
}
static bool k_map(tersa_writer *w, int v) {
    tersa_key keys[1] = {{v ? "b" : "a", 1, false}};
    return tersa_write_map_begin(w, keys, 1) && tersa_write_int(w, 1) && tersa_write_map_end(w);
}
static bool k_nested_generic(tersa_writer *w, int v) {
    return tersa_write_generic_map_begin(w, 1) && nan_bits(w, 0x7ff8000000000000ull) &&
           tersa_write_int(w, v) && tersa_write_map_end(w);
}
static bool k_big(tersa_writer *w, int v) {
    static const uint8_t two64[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t padded[10] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
    return tersa_write_bigint(w, false, v ? padded : two64, v ? 10 : 9);
}
static bool k_native_big(tersa_writer *w, int v) {
    static const uint8_t mag[2] = {0x00, 0x04}; /* 1024 */
    return v ? tersa_write_bigint(w, false, mag, 2) : tersa_write_int(w, 1024);
}
static bool k_uint(tersa_writer *w, int v) {
    return v ? tersa_write_uint(w, 5) : tersa_write_int(w, 5);
}
static bool k_ext(tersa_writer *w, int v) { return tersa_write_ext(w, (uint32_t)(7 + v), "xy", 2); }

/* Write {key(a): 1, key(b): 2}; true if the writer accepted it. On
 * acceptance the buffer must decode and keep two keys. */
static bool pair_accepted(key_fn key, int a, int b, const char *what) {
    tersa_writer *w = tersa_writer_new(NULL);
    bool ok = tersa_writer_start(w, NULL, 0) && tersa_write_generic_map_begin(w, 2) && key(w, a) &&
              tersa_write_int(w, 1) && key(w, b) && tersa_write_int(w, 2) && tersa_write_map_end(w);
    if (ok) {
        size_t len;
        const uint8_t *data = tersa_writer_data(w, &len);
        tersa_error err;
        tersa_doc *d = tersa_decode(NULL, data, len, NULL, &err);
        CHECK(d != NULL, "%s: the writer accepted a map its reader rejects (%s)", what, d ? "" : tersa_code_name(err.code));
        if (d) CHECK(tersa_doc_root(d, 0)->v.map.count == 2, "%s: two keys", what);
        tersa_doc_free(d);
    } else {
        CHECK(tersa_writer_error(w)->code == TERSA_ERR_UNREPRESENTABLE, "%s: error %s", what,
              tersa_code_name(tersa_writer_error(w)->code));
        /* The writer is usable again after the error. */
        CHECK(tersa_writer_start(w, NULL, 0) && tersa_write_generic_map_begin(w, 1) && tersa_write_int(w, 1) &&
                  tersa_write_int(w, 1) && tersa_write_map_end(w) && tersa_writer_complete(w),
              "%s: writer reusable after a duplicate key", what);
    }
    tersa_writer_free(w);
    return ok;
}

static void test_pairs(void) {
    /* Variants 0 and 1 of a case are distinct values, except where they
     * are one value given to the writer in two ways (same_value). */
    struct { key_fn fn; const char *name; bool same_value; } cases[] = {
        {k_nan, "NaN", false}, {k_zero, "0.0/-0.0", false}, {k_int_or_float, "1/1.0", false},
        {k_str_or_bin, "string/binary", false}, {k_str_or_sym, "string/symbol", false},
        {k_time_zone, "UTC/+00:00", false}, {k_array, "[1,2]/[1,2.0]", false}, {k_map, "{a:1}/{b:1}", false},
        {k_nested_generic, "{NaN:0}/{NaN:1}", false}, {k_ext, "ext 7/8", false},
        {k_big, "2^64 with and without a high zero byte", true}, {k_native_big, "1024 as int and as bigint", true},
        {k_uint, "5 as int and as uint", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s, variant 0 twice", cases[i].name);
        CHECK(!pair_accepted(cases[i].fn, 0, 0, what), "%s: equal keys must be refused", what);
        snprintf(what, sizeof what, "%s, variant 1 twice", cases[i].name);
        CHECK(!pair_accepted(cases[i].fn, 1, 1, what), "%s: equal keys must be refused", what);
        snprintf(what, sizeof what, "%s, both variants", cases[i].name);
        CHECK(pair_accepted(cases[i].fn, 0, 1, what) == !cases[i].same_value, "%s: %s", what,
              cases[i].same_value ? "one value twice must be refused" : "distinct keys must be accepted");
    }
}

/* Many keys: a duplicate anywhere is found (the hashed path), and equal
 * values under different keys, or keys of nested maps, are not duplicates. */
static void test_large_and_nested(void) {
    for (int dup_at = -1; dup_at < 300; dup_at += 37) {
        tersa_writer *w = tersa_writer_new(NULL);
        bool ok = tersa_writer_start(w, NULL, 0) && tersa_write_generic_map_begin(w, 300);
        for (int i = 0; ok && i < 300; i++) {
            ok = tersa_write_int(w, i == dup_at ? 3 : i * 7 + 100) && tersa_write_generic_map_begin(w, 2) &&
                 tersa_write_int(w, 3) && tersa_write_null(w) && tersa_write_double(w, 3.0) && tersa_write_null(w) &&
                 tersa_write_map_end(w);
        }
        ok = ok && tersa_write_map_end(w);
        /* Keys are i*7+100 and at most one 3: distinct, while 3 also keys every inner map. */
        CHECK(ok, "dup_at %d: distinct keys refused (%s)", dup_at, tersa_code_name(tersa_writer_error(w)->code));
        tersa_writer_free(w);
    }
    for (int dup_at = 1; dup_at < 300; dup_at += 29) {
        tersa_writer *w = tersa_writer_new(NULL);
        bool ok = tersa_writer_start(w, NULL, 0) && tersa_write_generic_map_begin(w, 300);
        for (int i = 0; ok && i < 300; i++) {
            char s[16];
            int n = snprintf(s, sizeof s, "k%d", i == dup_at ? dup_at / 2 : i);
            ok = tersa_write_array_begin(w, 1) && tersa_write_string(w, s, (size_t)n) && tersa_write_array_end(w) &&
                 tersa_write_int(w, i);
        }
        CHECK(!ok && tersa_writer_error(w)->code == TERSA_ERR_UNREPRESENTABLE, "duplicate array key at %d missed",
              dup_at);
        tersa_writer_free(w);
    }
}

/* Random keys from a small pool: the writer refuses exactly the maps where
 * two keys are equal values (checked against tersa_value_equal). */
static void test_random_pool(void) {
    test_rng rng = {0x5eed1234abcdull};
    for (int round = 0; round < 3000; round++) {
        size_t n = 1 + rng_below(&rng, 12);
        int picks[12];
        for (size_t i = 0; i < n; i++) picks[i] = (int)rng_below(&rng, 10);
        bool dup = false;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (picks[i] == picks[j]) dup = true;
        tersa_writer *w = tersa_writer_new(NULL);
        bool ok = tersa_writer_start(w, NULL, 0) && tersa_write_generic_map_begin(w, n);
        for (size_t i = 0; ok && i < n; i++) {
            int p = picks[i];
            switch (p) {
            case 0: ok = tersa_write_int(w, 0); break;
            case 1: ok = tersa_write_double(w, 0.0); break;
            case 2: ok = tersa_write_double(w, -0.0); break;
            case 3: ok = k_nan(w, 0); break;
            case 4: ok = k_nan(w, 1); break;
            case 5: ok = tersa_write_string(w, "", 0); break;
            case 6: ok = tersa_write_binary(w, "", 0); break;
            case 7: ok = k_array(w, 0); break;
            case 8: ok = k_array(w, 1); break;
            default: ok = tersa_write_null(w); break;
            }
            ok = ok && tersa_write_int(w, (int64_t)i);
        }
        ok = ok && tersa_write_map_end(w);
        CHECK(ok == !dup, "round %d: writer %s a map with%s duplicate keys", round, ok ? "accepted" : "refused",
              dup ? "" : "out");
        tersa_writer_free(w);
    }
}

int main(void) {
    test_pairs();
    test_large_and_nested();
    test_random_pool();
    return test_summary("test_keys");
}
