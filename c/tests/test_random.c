/*
 * test_random.c - randomized round trips and corruption robustness.
 *
 * Values are biased towards what stresses the tables: strings that repeat,
 * share prefixes (including inside UTF-8 sequences), look like timestamps or
 * almost do; integers and floats at the boundaries of each form; repeated key
 * sequences. For each value: encode -> decode gives an equal value, and
 * re-encoding gives the same bytes. Then every encoding is corrupted in many
 * ways: decoding must either fail with a decode error or give a value that
 * round-trips, and must never allocate more than a bounded multiple of the
 * input (checked by a counting allocator).
 */
#include "counting_alloc.h"
#include "testutil.h"
#include "xwellknown.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static test_rng rng = {0x9E3779B97F4A7C15ull};

/* ==========================================================================
 * Random values
 * ========================================================================== */

/* Words with explicit lengths (one of them is a NUL byte). */
#define W(s) {s, sizeof(s) - 1}
static const struct {
    const char *s;
    size_t n;
} words[] = {
    W(""), W("a"), W("ab"), W("abc"), W("usr_1"), W("usr_12"), W("usr_123"), W("\xc3\xa9"), W("\xc3\xa9" "a"),
    W("\xc3\xa8" "b"), W("\xe6\x97\xa5\xe6\x9c\xac"), W("2025-04-16T00:00:00Z"), W("2025-04-16T00:00:00.123Z"),
    W("2025-04-16 10:00:00+02:00"), W("2025-04-16"), W("2025-02-29T00:00:00Z"), W("9999-12-31T23:59:59Z"),
    W("0001-01-01T00:00:00Z"), W("2025-04-16T24:00:00Z"), W("2025-04-16T00:00:00-00:00"),
    W("2025-04-16T00:00:00.5+05:45"), W("/api/v2/users"), W("/api/v2/users/usr_1"), W("$"), W("key"), W("keys"),
    W("\xf0\x9f\x98\x80"), W("\x00"), W("status"), W("active"),
};
#undef W
#define NWORDS (sizeof(words) / sizeof(words[0]))

static tersa_doc *doc;

/* A well-known value (SPEC 5.8), from its text form. */
static void rand_well_known(tersa_value *v) {
    char text[64];
    uint32_t type = TERSA_EXT_DECIMAL + (uint32_t)rng_below(&rng, 4);
    switch (type) {
    case TERSA_EXT_DECIMAL: {
        static const char *const special[] = {"Infinity", "-Infinity", "NaN", "0", "-0", "0.00"};
        if (rng_below(&rng, 4) == 0) {
            snprintf(text, sizeof text, "%s", special[rng_below(&rng, 6)]);
        } else {
            snprintf(text, sizeof text, "%s%llu.%0*lluE%+d", rng_below(&rng, 2) ? "-" : "",
                     (unsigned long long)rng_next(&rng), (int)rng_below(&rng, 4) + 1,
                     (unsigned long long)rng_below(&rng, 1000),
                     rng_below(&rng, 2) ? (int)rng_below(&rng, 41) - 20 : (int)rng_below(&rng, 1999998000u) - 999999000);
        }
        break;
    }
    case TERSA_EXT_DATE:
        snprintf(text, sizeof text, "%04u-%02u-%02u", 1 + (unsigned)rng_below(&rng, 9999),
                 1 + (unsigned)rng_below(&rng, 12), 1 + (unsigned)rng_below(&rng, 28));
        break;
    case TERSA_EXT_UUID:
        snprintf(text, sizeof text, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)rng_below(&rng, 1ull << 32),
                 (unsigned long long)rng_below(&rng, 1u << 16), (unsigned long long)rng_below(&rng, 1u << 16),
                 (unsigned long long)rng_below(&rng, 1u << 16), (unsigned long long)rng_below(&rng, 1ull << 48));
        break;
    default:
        snprintf(text, sizeof text, "%02u:%02u:%02u.%06u", (unsigned)rng_below(&rng, 24),
                 (unsigned)rng_below(&rng, 60), (unsigned)rng_below(&rng, 60), 1 + (unsigned)rng_below(&rng, 999999));
        break;
    }
    uint8_t payload[X_WELL_KNOWN_MAX];
    size_t n = x_well_known_payload(type, text, strlen(text), payload);
    CHECK(n, "well-known text %s", text);
    v->type = TERSA_EXT;
    v->v.ext.type = type;
    v->v.ext.ptr = (const uint8_t *)tersa_doc_bytes(doc, payload, n);
    v->v.ext.len = n;
}

static const char *rand_text(size_t *len) {
    static char buf[600];
    size_t n = 0;
    switch (rng_below(&rng, 6)) {
    case 0: {
        size_t i = rng_below(&rng, NWORDS);
        *len = words[i].n;
        return (const char *)tersa_doc_bytes(doc, words[i].s, words[i].n);
    }
    case 1: {
        size_t i = rng_below(&rng, NWORDS), j = rng_below(&rng, NWORDS);
        memcpy(buf, words[i].s, words[i].n);
        memcpy(buf + words[i].n, words[j].s, words[j].n);
        n = words[i].n + words[j].n;
        break;
    }
    case 2: {
        static const char *const parts[] = {"a", "b", "_", "1", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc3\xa9"};
        size_t k = rng_below(&rng, 20);
        for (size_t i = 0; i < k; i++) {
            const char *p = parts[rng_below(&rng, 7)];
            size_t pl = strlen(p);
            memcpy(buf + n, p, pl);
            n += pl;
        }
        break;
    }
    case 3:
        n = (size_t)snprintf(buf, sizeof buf, "%04d-%02d-%02d%c%02d:%02d:%02d%s", (int)rng_below(&rng, 10000),
                             (int)rng_below(&rng, 14), (int)rng_below(&rng, 32), rng_below(&rng, 2) ? 'T' : ' ',
                             (int)rng_below(&rng, 25), (int)rng_below(&rng, 61), (int)rng_below(&rng, 61),
                             (const char *[]){"Z", ".5Z", ".123456789+05:45", "-11:00", "+00:00", ".000Z"}[rng_below(&rng, 6)]);
        break;
    case 4: {
        size_t k = 100 + rng_below(&rng, 200);
        memset(buf, 'p', k);
        n = k;
        size_t i = rng_below(&rng, NWORDS);
        memcpy(buf + n, words[i].s, words[i].n);
        n += words[i].n;
        break;
    }
    default:
        n = (size_t)snprintf(buf, sizeof buf, "req_%llu", (unsigned long long)(9876543210ull + rng_below(&rng, 30)));
    }
    *len = n;
    return (const char *)tersa_doc_bytes(doc, buf, n);
}

static double rand_double(void) {
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, 5e-324, 1e22, 1e23, 0.30000000000000004,
                                      9007199254740992.0, 1.7976931348623157e308, 22.5, 37.7749, -122.4194, 2100.0};
    switch (rng_below(&rng, 6)) {
    case 0: {
        uint64_t bits = rng_next(&rng);
        double d;
        memcpy(&d, &bits, 8);
        return d; /* any bit pattern, NaN payloads included */
    }
    case 1:
        return specials[rng_below(&rng, sizeof specials / sizeof specials[0])];
    case 2:
        return (double)((int64_t)rng_below(&rng, 2000000) - 1000000) / pow(10, (double)rng_below(&rng, 8));
    case 3:
        return (double)((int64_t)rng_below(&rng, 2000000) - 1000000) * pow(10, (double)rng_below(&rng, 50) - 25);
    case 4:
        return (double)(float)((double)(int64_t)rng_next(&rng) / 1e9);
    default:
        return 22.0 + (double)rng_below(&rng, 30) / 10.0;
    }
}

static void rand_value(tersa_value *v, int depth);

static void rand_scalar(tersa_value *v) {
    static const int64_t ints[] = {0, 1, -1, 23, 24, -8, -9, 127, 151, 152, 16407, 16408, INT32_MAX, INT32_MIN,
                                   INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 1713254400000LL};
    switch (rng_below(&rng, 12)) {
    case 0:
        v->type = (tersa_type)rng_below(&rng, 3);
        break;
    case 1:
        v->type = TERSA_INT;
        v->v.i = ints[rng_below(&rng, sizeof ints / sizeof ints[0])];
        /* Step to a neighbour unless that would leave int64. */
        if (v->v.i != INT64_MAX && rng_below(&rng, 3) == 0) v->v.i += 1;
        else if (v->v.i != INT64_MIN && rng_below(&rng, 2) == 0) v->v.i -= 1;
        break;
    case 2:
        v->type = TERSA_INT;
        v->v.i = (int64_t)rng_below(&rng, 600) - 300;
        break;
    case 3:
        v->type = TERSA_UINT;
        v->v.u = ((uint64_t)1 << 63) + rng_below(&rng, 5) + (rng_below(&rng, 2) ? UINT64_MAX / 2 - 10 : 0);
        break;
    case 4: {
        v->type = TERSA_BIGINT;
        size_t n = 9 + rng_below(&rng, 8);
        uint8_t tmp[16];
        for (size_t i = 0; i < n; i++) tmp[i] = (uint8_t)rng_next(&rng);
        tmp[n - 1] |= 1;
        v->v.big.mag = (const uint8_t *)tersa_doc_bytes(doc, tmp, n);
        v->v.big.len = n;
        v->v.big.negative = rng_below(&rng, 2);
        break;
    }
    case 5:
    case 6:
        v->type = TERSA_FLOAT;
        v->v.f = rand_double();
        break;
    case 7:
    case 8:
        v->type = rng_below(&rng, 8) ? TERSA_STRING : TERSA_SYMBOL;
        v->v.str.ptr = rand_text(&v->v.str.len);
        break;
    case 9: {
        uint8_t tmp[40];
        size_t n = rng_below(&rng, 40);
        for (size_t i = 0; i < n; i++) tmp[i] = (uint8_t)rng_next(&rng);
        if (rng_below(&rng, 2)) {
            v->type = TERSA_BINARY;
            v->v.bin.ptr = (const uint8_t *)tersa_doc_bytes(doc, tmp, n);
            v->v.bin.len = n;
        } else if (rng_below(&rng, 2)) {
            v->type = TERSA_EXT;
            v->v.ext.type = (uint32_t)rng_below(&rng, TERSA_EXT_APP_MAX + 1);
            v->v.ext.ptr = (const uint8_t *)tersa_doc_bytes(doc, tmp, n);
            v->v.ext.len = n;
        } else {
            rand_well_known(v);
        }
        break;
    }
    default: {
        v->type = TERSA_TIME;
        tersa_timestamp *t = &v->v.time;
        t->zone = (uint8_t)rng_below(&rng, 3);
        t->offset = t->zone == TERSA_ZONE_OFFSET ? (int16_t)((int)rng_below(&rng, 2879) - 1439) : 0;
        t->seconds = TERSA_MIN_SECONDS + 86400 + (int64_t)rng_below(&rng, (uint64_t)(TERSA_MAX_SECONDS - TERSA_MIN_SECONDS - 2 * 86400));
        static const uint32_t nanos[] = {0, 0, 1, 999999999, 500000000, 123456789};
        t->nanos = nanos[rng_below(&rng, 6)];
        break;
    }
    }
}

static const char *const keysets[][4] = {{"id", "name", NULL}, {"id", "name", "tags", NULL}, {"a", NULL},
                                        {NULL}, {"x", "y", "z", NULL}, {"lat", "lng", NULL}};

static void rand_value(tersa_value *v, int depth) {
    uint64_t k = rng_below(&rng, depth < 5 ? 10 : 6);
    if (k < 6) {
        rand_scalar(v);
        return;
    }
    if (k < 8) {
        static const size_t counts[] = {0, 1, 3, 15, 16, 20};
        size_t n = counts[rng_below(&rng, 6)];
        v->type = TERSA_ARRAY;
        v->v.array.items = tersa_doc_values(doc, n);
        v->v.array.count = n;
        for (size_t i = 0; i < n; i++) rand_value(&v->v.array.items[i], depth + 1);
        return;
    }
    if (k == 8) {
        /* A shaped map: a common key set, or random distinct keys. */
        tersa_value tmp[20];
        size_t n = 0;
        if (rng_below(&rng, 10) < 7) {
            const char *const *ks = keysets[rng_below(&rng, 6)];
            for (; ks[n]; n++) {
                tmp[n].type = rng_below(&rng, 10) ? TERSA_STRING : TERSA_SYMBOL;
                tmp[n].v.str.ptr = ks[n];
                tmp[n].v.str.len = strlen(ks[n]);
            }
        } else {
            size_t want = rng_below(&rng, 18);
            for (size_t i = 0; i < want; i++) {
                tmp[n].type = rng_below(&rng, 10) ? TERSA_STRING : TERSA_SYMBOL;
                tmp[n].v.str.ptr = rand_text(&tmp[n].v.str.len);
                bool dup = false;
                for (size_t j = 0; j < n; j++) dup |= tersa_value_equal(&tmp[j], &tmp[n]);
                if (!dup) n++;
            }
        }
        v->type = TERSA_MAP;
        v->v.map.keys = tersa_doc_values(doc, n);
        v->v.map.values = tersa_doc_values(doc, n);
        v->v.map.count = n;
        for (size_t i = 0; i < n; i++) {
            v->v.map.keys[i] = tmp[i];
            rand_value(&v->v.map.values[i], depth + 1);
        }
        return;
    }
    /* A generic map with scalar keys of every kind (duplicates dropped). */
    size_t want = rng_below(&rng, 6), n = 0;
    tersa_value *keys = tersa_doc_values(doc, want), *vals = tersa_doc_values(doc, want);
    for (size_t i = 0; i < want; i++) {
        rand_scalar(&keys[n]);
        bool dup = false;
        for (size_t j = 0; j < n; j++) dup |= tersa_value_equal(&keys[j], &keys[n]);
        if (dup) continue;
        rand_value(&vals[n], depth + 1);
        n++;
    }
    v->type = TERSA_GENERIC_MAP;
    v->v.map.keys = keys;
    v->v.map.values = vals;
    v->v.map.count = n;
}

/* ==========================================================================
 * Properties
 * ========================================================================== */

/* Maps whose keys are all strings/symbols are shaped maps once decoded. */
static bool equivalent(const tersa_value *a, const tersa_value *b) { return tersa_value_equal(a, b); }

static void check_round_trip(const tersa_value *v, unsigned long iter) {
    size_t len;
    tersa_error err;
    uint8_t *bytes = encode_value(v, NULL, &len, &err);
    if (!bytes) {
        char *d = diag_of(v);
        CHECK(bytes, "iteration %lu: encode failed: %s (%s)", iter, err.message, d);
        free(d);
        return;
    }
    tersa_doc *back = tersa_decode(NULL, bytes, len, NULL, &err);
    CHECK(back, "iteration %lu: decode failed: %s at %zu", iter, tersa_code_name(err.code), err.offset);
    if (back) {
        bool same = equivalent(v, tersa_doc_root(back, 0));
        if (!same) {
            char *a = diag_of(v), *b = diag_of(tersa_doc_root(back, 0));
            CHECK(same, "iteration %lu: value changed\n  in:  %.300s\n  out: %.300s", iter, a, b);
            free(a);
            free(b);
        }
        size_t len2;
        uint8_t *again = encode_value(tersa_doc_root(back, 0), NULL, &len2, &err);
        CHECK(again && len2 == len && memcmp(again, bytes, len) == 0, "iteration %lu: re-encoding differs", iter);
        free(again);
        tersa_doc_free(back);
    }

    /* Corruptions: flips, truncations, insertions. */
    for (int m = 0; m < 12; m++) {
        size_t n = len + 1;
        uint8_t *c = (uint8_t *)malloc(n + 1);
        memcpy(c, bytes, len);
        size_t clen = len;
        int ops = 1 + (int)rng_below(&rng, 3);
        for (int o = 0; o < ops; o++) {
            uint64_t op = rng_below(&rng, 3);
            if (op == 0 && clen) {
                c[rng_below(&rng, clen)] ^= (uint8_t)(1u << rng_below(&rng, 8));
            } else if (op == 1 && clen) {
                clen = rng_below(&rng, clen + 1);
            } else if (clen < n) {
                size_t at = rng_below(&rng, clen + 1);
                memmove(c + at + 1, c + at, clen - at);
                c[at] = (uint8_t)rng_next(&rng);
                clen++;
            }
        }
        counting cnt = {0, 0};
        tersa_alloc a = counting_alloc(&cnt);
        tersa_doc *d = tersa_decode(&a, c, clen, NULL, &err);
        if (d) {
            /* Whatever decodes must re-encode and decode to the same value. */
            size_t l2;
            uint8_t *re = encode_value(tersa_doc_root(d, 0), NULL, &l2, &err);
            CHECK(re, "iteration %lu: a decoded corruption does not re-encode: %s", iter, err.message);
            if (re) {
                tersa_doc *d2 = tersa_decode(NULL, re, l2, NULL, &err);
                CHECK(d2 && tersa_value_equal(tersa_doc_root(d, 0), tersa_doc_root(d2, 0)),
                      "iteration %lu: decode -> encode -> decode disagrees", iter);
                tersa_doc_free(d2);
                free(re);
            }
            tersa_doc_free(d);
        } else {
            CHECK(err.code >= TERSA_ERR_TRUNCATED && err.code <= TERSA_ERR_UNKNOWN_DICTIONARY,
                  "iteration %lu: corruption gave a non-decode error %s", iter, tersa_code_name(err.code));
        }
        CHECK(cnt.live == 0, "iteration %lu: leaked %zu bytes", iter, cnt.live);
        /* Strings the decoder builds grow at most 64x (SPEC 9); tree nodes
         * and tables add a constant factor; arenas start at 4 KiB chunks. */
        CHECK(cnt.peak <= 200 * clen + (1u << 16), "iteration %lu: peak %zu bytes for %zu input bytes", iter,
              cnt.peak, clen);
        if (getenv("TERSA_DUMP_BAD") && cnt.peak > 200 * clen + (1u << 16)) {
            FILE *f = fopen(getenv("TERSA_DUMP_BAD"), "wb");
            fwrite(c, 1, clen, f);
            fclose(f);
        }
        free(c);
    }
    free(bytes);
}

static void check_stream(unsigned long iter) {
    tersa_value vals[4];
    size_t n = 1 + rng_below(&rng, 4);
    for (size_t i = 0; i < n; i++) rand_value(&vals[i], 0);
    tersa_writer *w = tersa_writer_new(NULL);
    bool ok = tersa_writer_start(w, NULL, TERSA_WRITE_STREAM);
    for (size_t i = 0; ok && i < n; i++)
        ok = tersa_write_frame_begin(w) && tersa_write_value(w, &vals[i]) && tersa_write_frame_end(w);
    CHECK(ok && tersa_writer_complete(w), "iteration %lu: stream encode failed", iter);
    size_t len;
    const uint8_t *data = tersa_writer_data(w, &len);
    tersa_decode_options o = {NULL, 0, 0, true, false};
    tersa_error err;
    tersa_doc *d = tersa_decode(NULL, data, len, &o, &err);
    CHECK(d && tersa_doc_count(d) == n, "iteration %lu: stream decode failed: %s", iter,
          d ? "count" : tersa_code_name(err.code));
    for (size_t i = 0; d && i < n && i < tersa_doc_count(d); i++)
        CHECK(tersa_value_equal(&vals[i], tersa_doc_root(d, i)), "iteration %lu: stream value %zu differs", iter, i);
    tersa_doc_free(d);

    /* Frame by frame, as a feed-style decoder would. */
    tersa_reader *r = tersa_reader_new(NULL);
    size_t pos = 0, hsize;
    CHECK(tersa_stream_scan(data, len, true, &hsize, &err) == TERSA_SCAN_READY, "header scan");
    ok = tersa_reader_start(r, data, hsize, NULL, 0, TERSA_READ_STREAM);
    pos = hsize;
    size_t frames = 0;
    tersa_doc *tmp = tersa_doc_new(NULL);
    while (ok && pos < len) {
        size_t fsize;
        tersa_scan s = tersa_stream_scan(data + pos, len - pos, false, &fsize, &err);
        CHECK(s == TERSA_SCAN_READY, "frame scan");
        if (s != TERSA_SCAN_READY) break;
        /* Copy the frame into a short-lived buffer to prove nothing points into it later. */
        uint8_t *frame = (uint8_t *)malloc(fsize);
        memcpy(frame, data + pos, fsize);
        bool has_value = false;
        ok = tersa_reader_feed_frame(r, frame, fsize, pos, &has_value) && has_value && tersa_skip(r) &&
             tersa_reader_frame_end(r);
        memset(frame, 0xEE, fsize);
        free(frame);
        pos += fsize;
        frames++;
    }
    CHECK(ok && frames == n, "iteration %lu: fed frames failed: %s", iter, tersa_code_name(tersa_reader_error(r)->code));
    tersa_doc_free(tmp);
    tersa_reader_free(r);
    tersa_writer_free(w);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    unsigned long iterations = 4000;
    const char *env = getenv("TERSA_RANDOM_ITERATIONS");
    if (env) iterations = strtoul(env, NULL, 10);
    for (unsigned long i = 0; i < iterations; i++) {
        doc = tersa_doc_new(NULL);
        tersa_value v;
        rand_value(&v, 0);
        check_round_trip(&v, i);
        check_stream(i);
        tersa_doc_free(doc);
    }
    return test_summary("test_random");
}
