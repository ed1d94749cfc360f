/*
 * test_json_roundtrip.c - the CLI's JSON reader and writer together: random
 * documents and the seed corpus (bench/corpus/seed) written and re-read give
 * equal documents; allocation failures at every step are reported cleanly.
 *
 * Usage: test_json_roundtrip <repository root>
 */
#include "jsontest.h"
#include "fileio.h"

#include <stdio.h>
#include <stdlib.h>

static test_rng rng_state = {0x243F6A8885A308D3ull};


/* ==========================================================================
 * Round trips
 * ========================================================================== */

/* A random valid UTF-8 string into buf (arena of the doc). */
static tersa_value random_string(tersa_doc *doc) {
    char buf[128];
    size_t n = 0;
    size_t len = (size_t)(rng_next(&rng_state) % 20);
    for (size_t i = 0; i < len; i++) {
        uint64_t r = rng_next(&rng_state);
        unsigned kind = (unsigned)(r % 8);
        uint32_t cp;
        if (kind < 4) cp = 0x20 + (uint32_t)(r >> 8) % 0x5F;
        else if (kind == 4) cp = (uint32_t)(r >> 8) % 0x20; /* controls */
        else if (kind == 5) cp = 0x80 + (uint32_t)(r >> 8) % 0x780;
        else if (kind == 6) {
            cp = 0x800 + (uint32_t)(r >> 8) % 0xF800;
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = '"';
        } else cp = 0x10000 + (uint32_t)(r >> 8) % 0x100000;
        if (cp < 0x80) {
            buf[n++] = (char)cp;
        } else if (cp < 0x800) {
            buf[n++] = (char)(0xC0 | (cp >> 6));
            buf[n++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            buf[n++] = (char)(0xE0 | (cp >> 12));
            buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            buf[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            buf[n++] = (char)(0xF0 | (cp >> 18));
            buf[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            buf[n++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    tersa_value v = mk(TERSA_STRING);
    v.v.str.ptr = (const char *)tersa_doc_bytes(doc, buf, n);
    v.v.str.len = n;
    return v;
}

/* A random value of the JSON-expressible data model (what json_read can
 * produce), nested at most `depth` more levels. */
static tersa_value random_value(tersa_doc *doc, int depth) {
    uint64_t r = rng_next(&rng_state);
    unsigned kind = (unsigned)(r % (depth > 0 ? 12 : 9));
    tersa_value v;
    switch (kind) {
    case 0: return mk(TERSA_NULL);
    case 1: return mk((r >> 8) & 1 ? TERSA_TRUE : TERSA_FALSE);
    case 2: return mk_int((int64_t)rng_next(&rng_state) >> (rng_next(&rng_state) % 64));
    case 3:
        v = mk(TERSA_UINT);
        v.v.u = rng_next(&rng_state) | (1ull << 63);
        return v;
    case 4: {
        uint8_t mag[40];
        size_t len = 9 + (size_t)(rng_next(&rng_state) % 30);
        for (size_t i = 0; i < len; i++) mag[i] = (uint8_t)rng_next(&rng_state);
        if (mag[len - 1] == 0) mag[len - 1] = 1;
        v = mk(TERSA_BIGINT);
        v.v.big.negative = rng_next(&rng_state) & 1;
        v.v.big.mag = (const uint8_t *)tersa_doc_bytes(doc, mag, len);
        v.v.big.len = len;
        return v;
    }
    case 5: {
        uint64_t b;
        do b = rng_next(&rng_state);
        while ((b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull);
        return mk_float(double_of(b));
    }
    case 6: return mk_float((double)(int64_t)(rng_next(&rng_state) % 2000000 - 1000000) / 1000.0);
    case 7:
    case 8: return random_string(doc);
    case 9:
    case 10: {
        size_t n = (size_t)(rng_next(&rng_state) % 6);
        tersa_value *items = tersa_doc_values(doc, n);
        for (size_t i = 0; i < n; i++) items[i] = random_value(doc, depth - 1);
        return mk_array(items, n);
    }
    default: {
        size_t n = (size_t)(rng_next(&rng_state) % 6);
        tersa_value *keys = tersa_doc_values(doc, n), *values = tersa_doc_values(doc, n);
        for (size_t i = 0; i < n; i++) {
            char name[32];
            int len = sprintf(name, "k%zu", i);
            keys[i] = (rng_next(&rng_state) % 2) ? random_string(doc) : mk(TERSA_STRING);
            if (keys[i].type == TERSA_STRING && keys[i].v.str.ptr == NULL) {
                keys[i].v.str.ptr = (const char *)tersa_doc_bytes(doc, name, (size_t)len);
                keys[i].v.str.len = (size_t)len;
            }
            /* Keep keys distinct: a random key that repeats becomes k<i>. */
            for (size_t j = 0; j < i; j++) {
                if (keys[j].v.str.len == keys[i].v.str.len &&
                    memcmp(keys[j].v.str.ptr, keys[i].v.str.ptr, keys[i].v.str.len) == 0) {
                    len = sprintf(name, "\x01k%zu", i);
                    keys[i].v.str.ptr = (const char *)tersa_doc_bytes(doc, name, (size_t)len);
                    keys[i].v.str.len = (size_t)len;
                    break;
                }
            }
            values[i] = random_value(doc, depth - 1);
        }
        return mk_map((rng_next(&rng_state) % 4) ? TERSA_MAP : TERSA_GENERIC_MAP, keys, values, n);
    }
    }
}

static void roundtrip(const tersa_value *v, const json_write_options *o, const char *what) {
    json_error e;
    char *s = write_s(v, o, &e);
    CHECK(s != NULL, "%s: write failed: %s", what, s ? "" : e.message);
    if (!s) return;
    tersa_doc *d = read_n(s, strlen(s), NULL, &e, false);
    CHECK(d != NULL, "%s: re-read failed: %s at %zu", what, d ? "" : e.message, e.offset);
    if (d) CHECK(tersa_value_equal(v, root(d)), "%s: not equal after a round trip: %.200s", what, s);
    tersa_doc_free(d);
    free(s);
}

static void test_roundtrip_random(void) {
    json_write_options pretty = json_write_options_defaults(), ascii = pretty;
    pretty.indent = 3;
    ascii.ascii = true;
    for (int i = 0; i < 3000; i++) {
        tersa_doc *doc = tersa_doc_new(NULL);
        tersa_value v = random_value(doc, 4);
        roundtrip(&v, NULL, "random");
        roundtrip(&v, &pretty, "random pretty");
        roundtrip(&v, &ascii, "random ascii");
        tersa_doc_free(doc);
    }
    printf("random round trips: 3000 documents x 3 layouts\n");
}

static void test_roundtrip_corpus(const char *root_dir) {
    static const char *const names[] = {"api", "config", "events", "geospatial", "media", "search",
                                        "social", "telemetry", "time", "transactions", "users"};
    json_write_options pretty = json_write_options_defaults();
    pretty.indent = 2;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/bench/corpus/seed/%s.json", root_dir, names[i]);
        size_t len;
        char *text = (char *)read_file(path, &len);
        CHECK(text != NULL, "cannot read %s", path);
        if (!text) continue;
        json_error e;
        tersa_doc *d = json_read(NULL, text, len, NULL, &e);
        CHECK(d != NULL, "%s: %s at %zu (%zu:%zu)", path, d ? "" : e.message, e.offset, e.line,
              e.column);
        free(text);
        if (!d) continue;
        roundtrip(root(d), NULL, names[i]);
        roundtrip(root(d), &pretty, names[i]);
        tersa_doc_free(d);
    }
    printf("seed corpus round trips: %zu files\n", sizeof names / sizeof names[0]);
}

/* ==========================================================================
 * Allocation failures
 * ========================================================================== */

typedef struct limit_ctx {
    long left;  /* allocations allowed before failing */
    long live;  /* outstanding blocks */
} limit_ctx;

static void *lim_malloc(void *ctx, size_t size) {
    limit_ctx *c = (limit_ctx *)ctx;
    if (c->left-- <= 0) return NULL;
    c->live++;
    return malloc(size);
}
static void *lim_realloc(void *ctx, void *p, size_t old_size, size_t new_size) {
    limit_ctx *c = (limit_ctx *)ctx;
    (void)old_size;
    if (c->left-- <= 0) return NULL;
    if (!p) c->live++;
    return realloc(p, new_size);
}
static void lim_free(void *ctx, void *p, size_t size) {
    limit_ctx *c = (limit_ctx *)ctx;
    (void)size;
    if (p) c->live--;
    free(p);
}

static void test_alloc_failures(void) {
    const char *text = "{\"a\":[1,2,{\"b\":\"x\\ny\"}],\"c\":123456789012345678901234567890,"
                       "\"d\":[[[[]]]],\"e\":{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,"
                       "\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,\"k10\":10,\"k11\":11,"
                       "\"k12\":12,\"k13\":13,\"k14\":14,\"k15\":15,\"k16\":16}}";
    bool succeeded = false;
    for (long limit = 0; limit < 200 && !succeeded; limit++) {
        limit_ctx c = {limit, 0};
        tersa_alloc a = {lim_malloc, lim_realloc, lim_free, &c};
        json_error e;
        tersa_doc *d = json_read(&a, text, strlen(text), NULL, &e);
        if (d) {
            succeeded = true;
            /* Now the writer, failing at each step. */
            bool wrote = false;
            for (long wl = 0; wl < 100 && !wrote; wl++) {
                limit_ctx wc = {wl, 0};
                tersa_alloc wa = {lim_malloc, lim_realloc, lim_free, &wc};
                tersa_buf b;
                tersa_buf_init(&b, &wa);
                json_write_options o = json_write_options_defaults();
                o.indent = 1;
                o.keys = JSON_KEYS_STRING;
                wrote = json_write(root(d), &o, &b, &e);
                CHECK(wrote || (strcmp(e.message, "out of memory") == 0 && b.failed),
                      "writer with %ld allocations: %s", wl, e.message);
                tersa_buf_free(&b);
                CHECK(wc.live == 0, "writer leaked %ld blocks", wc.live);
            }
            CHECK(wrote, "writer never succeeded");
            tersa_doc_free(d);
        } else {
            CHECK(strcmp(e.message, "out of memory") == 0, "reader with %ld allocations: %s", limit,
                  e.message);
        }
        CHECK(c.live == 0, "reader leaked %ld blocks with limit %ld", c.live, limit);
    }
    CHECK(succeeded, "reader never succeeded");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        printf("usage: %s <repository root>\n", argv[0]);
        return 2;
    }
    test_roundtrip_random();
    test_roundtrip_corpus(argv[1]);
    test_alloc_failures();
    return test_summary("test_json_roundtrip");
}
