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

/* Map keys that are references past the one-byte tags (REF8): read as the
 * entries they name, and a REF8 key naming no entry, or cut after its tag,
 * fails at the key's offset like any other string item. */
static void test_ref8_keys(void) {
    enum { NSTRS = 70 };
    char names[NSTRS][4];
    tersa_writer *w = tersa_writer_new(NULL);
    bool ok = tersa_writer_start(w, NULL, 0) && tersa_write_array_begin(w, 2) && tersa_write_array_begin(w, NSTRS);
    for (int i = 0; i < NSTRS; i++) {
        snprintf(names[i], sizeof names[i], "s%02d", i);
        ok = ok && tersa_write_string(w, names[i], 3);
    }
    /* An inline key first, so that a copy cut after the last key's tag still
     * holds two bytes per key (the count check comes before the keys). */
    tersa_key keys[3] = {{"abcdefghijkl", 12, false}, {names[66], 3, false}, {names[67], 3, false}};
    ok = ok && tersa_write_array_end(w) && tersa_write_map_begin(w, keys, 3) && tersa_write_int(w, 1) &&
         tersa_write_int(w, 2) && tersa_write_int(w, 3) && tersa_write_map_end(w) && tersa_write_array_end(w);
    size_t len = 0;
    const uint8_t *data = tersa_writer_data(w, &len);
    size_t at = 0; /* the inline key's bytes */
    while (ok && at + 12 <= len && memcmp(data + at, "abcdefghijkl", 12) != 0) at++;
    size_t k2 = at + 14; /* the third key: REF8 3, after REF8 2 */
    ok = ok && k2 + 2 <= len && data[at + 12] == 0xED && data[at + 13] == 2 && data[k2] == 0xED && data[k2 + 1] == 3;
    CHECK(ok, "encode: the last two keys are REF8 references");
    uint8_t *buf = ok ? (uint8_t *)malloc(len) : NULL;
    uint8_t *cut = ok ? (uint8_t *)malloc(k2 + 1) : NULL;
    tersa_reader *r = tersa_reader_new(NULL);
    if (buf && cut && r) {
        memcpy(buf, data, len);
        memcpy(cut, data, k2 + 1);
        tersa_item it;
        bool read = tersa_reader_start(r, buf, len, NULL, 0, 0);
        for (int i = 0; read && i < NSTRS + 2; i++) read = tersa_read(r, &it);
        CHECK(read && tersa_read(r, &it) && it.type == TERSA_MAP && it.v.map.count == 3, "the map");
        CHECK(it.type == TERSA_MAP && it.v.map.keys[1].len == 3 && memcmp(it.v.map.keys[1].ptr, "s66", 3) == 0 &&
                  it.v.map.key_strings[1] == 66 && it.v.map.keys[2].len == 3 &&
                  memcmp(it.v.map.keys[2].ptr, "s67", 3) == 0 && it.v.map.key_strings[2] == 67,
              "keys s66 and s67 at indices 66 and 67");
        check_scalar_runs("test_ref8_keys", buf, len, NULL, 0);
        /* A reference past the table: 64 + 255 > NSTRS + 1 entries. */
        buf[k2 + 1] = 0xFF;
        read = tersa_reader_start(r, buf, len, NULL, 0, 0);
        for (int i = 0; read && i < NSTRS + 2; i++) read = tersa_read(r, &it);
        CHECK(read && !tersa_read(r, &it) && tersa_reader_error(r)->code == TERSA_ERR_BAD_REFERENCE &&
                  tersa_reader_error(r)->offset == k2,
              "bad_reference at %zu, got %s at %zu", k2, tersa_code_name(tersa_reader_error(r)->code),
              tersa_reader_error(r)->offset);
        check_scalar_runs("test_ref8_keys bad", buf, len, NULL, 0);
        read = tersa_reader_start(r, cut, k2 + 1, NULL, 0, 0);
        for (int i = 0; read && i < NSTRS + 2; i++) read = tersa_read(r, &it);
        CHECK(read && !tersa_read(r, &it) && tersa_reader_error(r)->code == TERSA_ERR_TRUNCATED &&
                  tersa_reader_error(r)->offset == k2,
              "truncated at %zu, got %s at %zu", k2, tersa_code_name(tersa_reader_error(r)->code),
              tersa_reader_error(r)->offset);
        check_scalar_runs("test_ref8_keys cut", cut, k2 + 1, NULL, 0);
    }
    free(cut);
    free(buf);
    tersa_reader_free(r);
    tersa_writer_free(w);
}

int main(void) {
    test_pairs();
    test_large_and_nested();
    test_random_pool();
    test_ref8_keys();
    return test_summary("test_keys");
}
