/*
 * test_api.c - the C API's contracts: misuse, allocation failure, limits,
 * dictionaries, incremental streams.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* ==========================================================================
 * An allocator that fails after a budget of allocations
 * ========================================================================== */

typedef struct failing {
    long budget; /* allocations left; <0 means unlimited */
    size_t live;
} failing;

static void *f_malloc(void *ctx, size_t n) {
    failing *f = (failing *)ctx;
    if (f->budget == 0) return NULL;
    if (f->budget > 0) f->budget--;
    f->live += n;
    return malloc(n);
}

static void *f_realloc(void *ctx, void *p, size_t o, size_t n) {
    failing *f = (failing *)ctx;
    if (f->budget == 0) return NULL;
    if (f->budget > 0) f->budget--;
    f->live += n - o;
    return realloc(p, n);
}

static void f_free(void *ctx, void *p, size_t n) {
    failing *f = (failing *)ctx;
    f->live -= n;
    free(p);
}

/* A representative value: shapes, references, prefixes, timestamps, nesting. */
static bool write_sample(pith_writer *w, int records) {
    pith_key keys[4] = {{"id", 2, false}, {"name", 4, false}, {"at", 2, false}, {"tags", 4, true}};
    bool ok = pith_write_array_begin(w, (size_t)records);
    for (int i = 0; ok && i < records; i++) {
        char id[32], at[32];
        int n = snprintf(id, sizeof id, "usr_%05d", i);
        int m = snprintf(at, sizeof at, "2025-04-16T09:%02d:%02dZ", i / 60 % 60, i % 60);
        ok = pith_write_map_begin(w, keys, 4) && pith_write_string(w, id, (size_t)n) &&
             pith_write_string(w, i % 3 ? "admin" : "user", i % 3 ? 5 : 4) && pith_write_string(w, at, (size_t)m) &&
             pith_write_array_begin(w, 2) && pith_write_double(w, 37.7749 + i / 1e4) && pith_write_int(w, 1000 + i) &&
             pith_write_array_end(w) && pith_write_map_end(w);
    }
    return ok && pith_write_array_end(w);
}

static void test_allocation_failures(void) {
    /* Encode with the allocator failing at every possible point. */
    for (long budget = 0; budget < 200; budget++) {
        failing f = {budget, 0};
        pith_alloc a = {f_malloc, f_realloc, f_free, &f};
        pith_writer *w = pith_writer_new(&a);
        if (w) {
            bool ok = pith_writer_start(w, NULL, 0) && write_sample(w, 300);
            if (!ok) CHECK(pith_writer_error(w)->code == PITH_ERR_NOMEM, "budget %ld: wrong error %s", budget,
                           pith_code_name(pith_writer_error(w)->code));
            pith_writer_free(w);
        }
        CHECK(f.live == 0, "encode with budget %ld leaked %zu bytes", budget, f.live);
    }
    /* Decode likewise. */
    pith_writer *w = pith_writer_new(NULL);
    CHECK(pith_writer_start(w, NULL, 0) && write_sample(w, 300), "sample encodes");
    size_t len;
    const uint8_t *data = pith_writer_data(w, &len);
    for (long budget = 0; budget < 200; budget++) {
        failing f = {budget, 0};
        pith_alloc a = {f_malloc, f_realloc, f_free, &f};
        pith_error err;
        pith_doc *d = pith_decode(&a, data, len, NULL, &err);
        if (!d) CHECK(err.code == PITH_ERR_NOMEM, "decode budget %ld: wrong error %s", budget, pith_code_name(err.code));
        pith_doc_free(d);
        CHECK(f.live == 0, "decode with budget %ld leaked %zu bytes", budget, f.live);
    }
    pith_writer_free(w);
}

/* ==========================================================================
 * Writer contracts
 * ========================================================================== */

static void test_writer_misuse(void) {
    pith_writer *w = pith_writer_new(NULL);
    CHECK(!pith_write_null(w) && pith_writer_error(w)->code == PITH_ERR_USAGE, "write before start");

    pith_writer_start(w, NULL, 0);
    CHECK(pith_write_null(w), "first top-level value");
    CHECK(!pith_write_null(w) && pith_writer_error(w)->code == PITH_ERR_USAGE, "second top-level value");

    pith_writer_start(w, NULL, 0);
    CHECK(pith_writer_error(w)->code == PITH_OK, "start clears the error");
    CHECK(pith_write_array_begin(w, 2) && pith_write_int(w, 1), "array begin");
    CHECK(!pith_write_array_end(w) && pith_writer_error(w)->code == PITH_ERR_USAGE, "early end");

    pith_writer_start(w, NULL, 0);
    CHECK(pith_write_array_begin(w, 1) && pith_write_int(w, 1), "array");
    CHECK(!pith_write_int(w, 2) && pith_writer_error(w)->code == PITH_ERR_USAGE, "too many items");

    /* The open container's cursor comes back when an inner one closes. */
    pith_writer_start(w, NULL, 0);
    CHECK(pith_write_array_begin(w, 2) && pith_write_array_begin(w, 1) && pith_write_int(w, 1) &&
              pith_write_array_end(w) && pith_write_int(w, 2),
          "outer array continues after an inner one");
    CHECK(!pith_write_int(w, 3) && pith_writer_error(w)->code == PITH_ERR_USAGE, "outer array full");
    CHECK(!pith_write_array_end(w) && !pith_write_null(w), "everything fails after an error");
    CHECK(strcmp(pith_writer_error(w)->message, "more items than the container's count") == 0, "first error kept");

    pith_writer_start(w, NULL, 0);
    pith_key ab[2] = {{"a", 1, false}, {"b", 1, false}};
    CHECK(pith_write_map_begin(w, ab, 2) && pith_write_array_begin(w, 0) && pith_write_array_end(w),
          "map value that is an array");
    CHECK(!pith_write_map_end(w) && pith_writer_error(w)->code == PITH_ERR_USAGE, "map closed with a value missing");

    pith_writer_start(w, NULL, 0);
    CHECK(pith_write_array_begin(w, 0) && !pith_write_map_end(w) && pith_writer_error(w)->code == PITH_ERR_USAGE,
          "array closed as a map");

    pith_writer_start(w, NULL, 0);
    CHECK(pith_write_array_begin(w, 0) && pith_write_array_end(w), "empty array");
    CHECK(!pith_write_null(w) && pith_writer_error(w)->code == PITH_ERR_USAGE, "a value after the top-level container");

    pith_writer_start(w, NULL, 0);
    pith_key dup[2] = {{"a", 1, false}, {"a", 1, false}};
    CHECK(!pith_write_map_begin(w, dup, 2) && pith_writer_error(w)->code == PITH_ERR_UNREPRESENTABLE, "duplicate keys");

    pith_writer_start(w, NULL, 0);
    pith_key symstr[2] = {{"a", 1, false}, {"a", 1, true}};
    CHECK(pith_write_map_begin(w, symstr, 2), "a string and a symbol of the same name are distinct keys");

    pith_writer_start(w, NULL, 0);
    CHECK(!pith_write_string(w, "\xc0\x80", 2) && pith_writer_error(w)->code == PITH_ERR_UNREPRESENTABLE,
          "invalid UTF-8 string");
    pith_writer_start(w, NULL, 0);
    CHECK(!pith_write_ext(w, 65536, "", 0) && pith_writer_error(w)->code == PITH_ERR_UNREPRESENTABLE, "ext type");
    pith_writer_start(w, NULL, 0);
    pith_timestamp ts = {PITH_MAX_SECONDS + 1, 0, 0, PITH_ZONE_UTC};
    CHECK(!pith_write_timestamp(w, &ts) && pith_writer_error(w)->code == PITH_ERR_UNREPRESENTABLE, "time range");
    pith_writer_start(w, NULL, 0);
    pith_timestamp ts2 = {PITH_MAX_SECONDS, 0, 1, PITH_ZONE_OFFSET};
    CHECK(!pith_write_timestamp(w, &ts2), "local time beyond 9999");
    pith_writer_start(w, NULL, 0);
    pith_timestamp ts3 = {0, 1000000000u, 0, PITH_ZONE_UTC};
    CHECK(!pith_write_timestamp(w, &ts3), "nanos range");

    pith_writer_start(w, NULL, 0);
    pith_writer_set_max_depth(w, 3);
    CHECK(pith_write_array_begin(w, 1) && pith_write_array_begin(w, 1) && pith_write_array_begin(w, 1), "depth 3");
    CHECK(!pith_write_array_begin(w, 0) && pith_writer_error(w)->code == PITH_ERR_DEPTH_EXCEEDED, "depth 4");
    pith_writer_set_max_depth(w, PITH_DEFAULT_MAX_DEPTH);

    pith_writer_start(w, NULL, PITH_WRITE_STREAM);
    CHECK(!pith_write_null(w) && pith_writer_error(w)->code == PITH_ERR_USAGE, "stream value outside a frame");
    pith_writer_start(w, NULL, PITH_WRITE_STREAM);
    CHECK(pith_write_frame_begin(w) && !pith_write_frame_end(w), "empty frame");
    pith_writer_start(w, NULL, PITH_WRITE_STREAM);
    CHECK(pith_writer_complete(w), "an empty stream is complete");

    /* Big integers in the native range take the native forms. */
    pith_writer_start(w, NULL, 0);
    uint8_t mag[12] = {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(pith_write_bigint(w, true, mag, sizeof mag), "bigint -5");
    size_t len;
    const uint8_t *data = pith_writer_data(w, &len);
    CHECK(len == 4 && data[3] == 0xA0 + 3, "bigint -5 is INT");
    pith_writer_free(w);
}

/* ==========================================================================
 * Reader contracts
 * ========================================================================== */

static void test_reader(void) {
    const uint8_t one[] = {0xC1, 0x70, 0x10, 0x82, 0xA9, 0xAA};
    pith_reader *r = pith_reader_new(NULL);
    pith_item it;
    CHECK(pith_reader_start(r, one, sizeof one, NULL, 0, 0), "start");
    CHECK(pith_read(r, &it) && it.type == PITH_ARRAY && it.v.array.count == 2, "array");
    CHECK(pith_read(r, &it) && it.type == PITH_INT && it.v.i == 1 && it.offset == 4, "first element");
    CHECK(!pith_reader_finish(r) && pith_reader_error(r)->code == PITH_ERR_USAGE, "finish before the end");
    CHECK(pith_reader_start(r, one, sizeof one, NULL, 0, 0) && pith_skip(r) && pith_reader_finish(r), "skip");
    CHECK(!pith_read(r, &it) && pith_reader_error(r)->code == PITH_ERR_USAGE, "read past the value");

    const uint8_t trailing[] = {0xC1, 0x70, 0x10, 0xE0, 0xE0};
    CHECK(pith_reader_start(r, trailing, sizeof trailing, NULL, 0, 0) && pith_read(r, &it), "read");
    CHECK(!pith_reader_finish(r) && pith_reader_error(r)->code == PITH_ERR_TRAILING_BYTES &&
              pith_reader_error(r)->offset == 4, "trailing");

    uint8_t deep[3 + 10] = {0xC1, 0x70, 0x10};
    memset(deep + 3, 0x81, 9);
    deep[12] = 0x80;
    pith_reader_set_max_depth(r, 9);
    CHECK(pith_reader_start(r, deep, sizeof deep, NULL, 0, 0), "deep start");
    bool ok = true;
    for (int i = 0; i < 10 && ok; i++) ok = pith_read(r, &it);
    CHECK(!ok && pith_reader_error(r)->code == PITH_ERR_DEPTH_EXCEEDED && pith_reader_error(r)->offset == 12,
          "depth limit 9");
    pith_reader_free(r);
}

/* ==========================================================================
 * Dictionaries
 * ========================================================================== */

static void test_dictionaries(void) {
    pith_error err;
    pith_key strings[3] = {{"admin", 5, false}, {"user", 4, false}, {"en-US", 5, false}};
    pith_key shape_keys[5] = {{"id", 2, false}, {"name", 4, false}, {"role", 4, false}, {"id", 2, true},
                              {"name", 4, true}};
    size_t lens[2] = {3, 2};
    pith_dict *d = pith_dict_new(NULL, strings, 3, shape_keys, lens, 2, &err);
    CHECK(d, "dict_new: %s", err.message);
    if (!d) return;
    size_t slen;
    const uint8_t *ser = pith_dict_serialized(d, &slen);
    pith_dict *d2 = pith_dict_parse(NULL, ser, slen, &err);
    CHECK(d2 && pith_dict_id(d2) == pith_dict_id(d), "parse(serialize) keeps the id");
    CHECK(d2 && pith_dict_string_count(d2) == 3 && pith_dict_shape_count(d2) == 2, "counts");
    size_t nk;
    const pith_key *k = d2 ? pith_dict_shape(d2, 1, &nk) : NULL;
    CHECK(k && nk == 2 && k[0].symbol && k[0].len == 2, "symbol keys survive");
    pith_dict_free(d2);

    /* Encode with, decode with / without. */
    pith_writer *w = pith_writer_new(NULL);
    CHECK(pith_writer_start(w, d, 0) && pith_write_map_begin(w, shape_keys, 3) && pith_write_int(w, 1) &&
              pith_write_string(w, "admin", 5) && pith_write_string(w, "user", 4) && pith_write_map_end(w),
          "encode with dictionary");
    size_t len;
    const uint8_t *data = pith_writer_data(w, &len);
    CHECK(len == 3 + 8 + 1 + 1 + 1 + 1, "shape and strings from the dictionary: %zu bytes", len);
    const pith_dict *dicts[1] = {d};
    pith_decode_options o = {dicts, 1, 0, false, false};
    pith_doc *doc = pith_decode(NULL, data, len, &o, &err);
    CHECK(doc, "decode with the dictionary");
    pith_doc_free(doc);
    doc = pith_decode(NULL, data, len, NULL, &err);
    CHECK(!doc && err.code == PITH_ERR_UNKNOWN_DICTIONARY && err.offset == 3, "decode without it");
    pith_writer_free(w);

    /* Invalid dictionaries. */
    pith_key bad1[1] = {{"a", 1, false}};
    CHECK(!pith_dict_new(NULL, bad1, 1, NULL, NULL, 0, &err) && err.code == PITH_ERR_INVALID_VALUE, "short string");
    pith_key bad2[2] = {{"ab", 2, false}, {"ab", 2, false}};
    CHECK(!pith_dict_new(NULL, bad2, 2, NULL, NULL, 0, &err), "repeated string");
    size_t l2[2] = {1, 1};
    CHECK(!pith_dict_new(NULL, NULL, 0, bad2, l2, 2, &err), "repeated shape");
    size_t l1[1] = {2};
    CHECK(!pith_dict_new(NULL, NULL, 0, bad2, l1, 1, &err), "repeated key in a shape");
    pith_key bad3[1] = {{"\xff\xfe", 2, false}};
    CHECK(!pith_dict_new(NULL, bad3, 1, NULL, NULL, 0, &err), "invalid UTF-8");
    const uint8_t junk[] = {0x81, 0xE0};
    CHECK(!pith_dict_parse(NULL, junk, sizeof junk, &err), "not a dictionary");
    pith_dict_free(d);

    pith_dict *empty = pith_dict_new(NULL, NULL, 0, NULL, NULL, 0, &err);
    CHECK(empty && pith_dict_id(empty) == 0x9503724a42a9d608ull, "empty dictionary id matches the vectors: %016llx",
          empty ? (unsigned long long)pith_dict_id(empty) : 0ull);
    pith_dict_free(empty);
}

/* A value that uses a dictionary's strings and shapes and adds its own. */
static bool write_with_dict(pith_writer *w, int i) {
    pith_key shape[3] = {{"id", 2, false}, {"name", 4, false}, {"role", 4, false}};
    pith_key other[2] = {{"id", 2, false}, {"extra", 5, false}};
    char own[32];
    int n = snprintf(own, sizeof own, "own_%d", i % 7);
    return pith_write_array_begin(w, 3) && pith_write_map_begin(w, shape, 3) && pith_write_int(w, i) &&
           pith_write_string(w, "admin", 5) && pith_write_string(w, own, (size_t)n) && pith_write_map_end(w) &&
           pith_write_map_begin(w, other, 2) && pith_write_string(w, own, (size_t)n) &&
           pith_write_string(w, "user", 4) && pith_write_map_end(w) && pith_write_string(w, "en-US", 5) &&
           pith_write_array_end(w);
}

/* The bytes a fresh writer makes, and a check that a fresh reader and the
 * long-lived one read them the same. */
static void check_reused(pith_writer *w, pith_reader *r, const pith_dict *d, int i, const char *what) {
    pith_writer *fresh = pith_writer_new(NULL);
    CHECK(pith_writer_start(fresh, d, 0) && write_with_dict(fresh, i), "%s: fresh writer", what);
    CHECK(pith_writer_start(w, d, 0) && write_with_dict(w, i), "%s: reused writer", what);
    size_t a, b;
    const uint8_t *x = pith_writer_data(fresh, &a), *y = pith_writer_data(w, &b);
    CHECK(a == b && memcmp(x, y, a) == 0, "%s: a reused writer writes what a fresh one does (%zu vs %zu bytes)", what, b, a);
    const pith_dict *dicts[1] = {d};
    CHECK(pith_reader_start(r, y, b, dicts, d ? 1 : 0, 0) && pith_skip(r) && pith_reader_finish(r),
          "%s: reused reader: %s", what, pith_reader_error(r)->message);
    pith_decode_options o = {dicts, d ? 1u : 0u, 0, false, false};
    pith_error err;
    pith_doc *doc = pith_decode(NULL, y, b, &o, &err);
    CHECK(doc, "%s: decodes", what);
    pith_doc_free(doc);
    pith_writer_free(fresh);
}

/* Writers and readers keep a dictionary's tables between buffers: switching
 * dictionaries, going without, the generation wrap and a dictionary freed and
 * replaced (perhaps at the same address) must all behave as if fresh. */
static void test_dictionary_reuse(void) {
    pith_error err;
    pith_key sa[3] = {{"admin", 5, false}, {"user", 4, false}, {"en-US", 5, false}};
    pith_key sb[3] = {{"en-US", 5, false}, {"admin", 5, false}, {"other", 5, false}};
    pith_key keys[5] = {{"id", 2, false}, {"name", 4, false}, {"role", 4, false}, {"id", 2, false},
                        {"extra", 5, false}};
    size_t la[2] = {3, 2}, lb[1] = {2};
    pith_dict *a = pith_dict_new(NULL, sa, 3, keys, la, 2, &err);
    pith_dict *b = pith_dict_new(NULL, sb, 3, keys + 3, lb, 1, &err);
    pith_writer *w = pith_writer_new(NULL);
    pith_reader *r = pith_reader_new(NULL);
    for (int i = 0; i < 40; i++) {
        const pith_dict *d = i % 5 == 3 ? b : i % 5 == 4 ? NULL : a;
        check_reused(w, r, d, i, i % 5 == 3 ? "dictionary b" : i % 5 == 4 ? "no dictionary" : "dictionary a");
    }
    /* Past the index's generation wrap (65,535 buffers). */
    for (int i = 0; i < 70000; i++) pith_writer_start(w, a, 0);
    check_reused(w, r, a, 1, "after the generation wrap");
    /* Freed and replaced: the replacement has other strings at the same indices. */
    pith_dict_free(a);
    pith_dict *c = pith_dict_new(NULL, sb, 3, keys, la, 2, &err);
    check_reused(w, r, c, 2, "a replacement dictionary");
    /* A stream over the dictionary, frames sharing tables, then a single buffer again. */
    CHECK(pith_writer_start(w, c, PITH_WRITE_STREAM), "stream");
    for (int i = 0; i < 3; i++)
        CHECK(pith_write_frame_begin(w) && write_with_dict(w, i) && pith_write_frame_end(w), "frame %d", i);
    check_reused(w, r, c, 3, "after a stream");
    pith_writer_free(w);
    pith_reader_free(r);
    pith_dict_free(b);
    pith_dict_free(c);
}

/* ==========================================================================
 * Incremental streams
 * ========================================================================== */

static void test_stream_scan(void) {
    pith_writer *w = pith_writer_new(NULL);
    pith_writer_start(w, NULL, PITH_WRITE_STREAM);
    for (int i = 0; i < 3; i++) {
        pith_write_frame_begin(w);
        write_sample(w, 50 * i + 1);
        pith_write_frame_end(w);
    }
    size_t len;
    const uint8_t *data = pith_writer_data(w, &len);
    pith_error err;
    size_t size;
    for (size_t cut = 0; cut < 3; cut++)
        CHECK(pith_stream_scan(data, cut, true, &size, &err) == PITH_SCAN_NEED_MORE, "header needs 3 bytes");
    CHECK(pith_stream_scan(data, len, true, &size, &err) == PITH_SCAN_READY && size == 3, "header");
    CHECK(pith_stream_scan(data + 3, 1, false, &size, &err) == PITH_SCAN_NEED_MORE, "frame needs more");
    const uint8_t bad[] = {0x01};
    CHECK(pith_stream_scan(bad, 1, false, &size, &err) == PITH_SCAN_ERROR && err.code == PITH_ERR_INVALID_VALUE,
          "empty frame");
    const uint8_t overlong[] = {0x02, 0x00};
    CHECK(pith_stream_scan(overlong, 2, false, &size, &err) == PITH_SCAN_ERROR && err.code == PITH_ERR_INVALID_VARINT,
          "overlong frame length");
    pith_writer_free(w);
}

/* Sync frames where pith_writer_set_sync asks; a consumer joining at any frame
 * boundary, whole or frame by frame, decodes exactly the values from the next
 * sync frame on; a header followed by a later frame is out_of_sequence. */
static void test_sync_and_join(void) {
    enum { N = 10, EVERY = 3 };
    pith_writer *w = pith_writer_new(NULL);
    pith_writer_set_sync(w, EVERY, 0);
    pith_writer_start(w, NULL, PITH_WRITE_STREAM);
    size_t starts[N + 1];
    for (int i = 0; i < N; i++) {
        pith_writer_data(w, &starts[i]);
        CHECK(pith_write_frame_begin(w), "frame %d", i);
        CHECK(pith_writer_frame_synced(w) == (i % EVERY == 0), "frame %d synced", i);
        write_sample(w, 5 * (i / 2) + 1); /* pairs of equal values: later frames refer to earlier ones */
        CHECK(pith_write_frame_end(w), "frame %d end", i);
    }
    size_t len;
    const uint8_t *data = pith_writer_data(w, &len);
    starts[N] = len;
    pith_error err;
    pith_decode_options whole_opts = {NULL, 0, 0, true, false};
    pith_doc *whole = pith_decode(NULL, data, len, &whole_opts, &err);
    CHECK(whole && pith_doc_count(whole) == N, "whole stream");
    for (int k = 0; whole && k <= N; k++) {
        int first = (k + EVERY - 1) / EVERY * EVERY; /* the first sync frame at or after k */
        if (first > N) first = N;
        const uint8_t *tail = data + starts[k];
        size_t tail_len = len - starts[k];
        pith_decode_options jo = {NULL, 0, 0, false, true};
        pith_doc *joined = pith_decode(NULL, tail_len ? tail : (const uint8_t *)"", tail_len, &jo, &err);
        CHECK(joined && pith_doc_count(joined) == (size_t)(N - first), "join at %d: %zu values", k,
              joined ? pith_doc_count(joined) : 0);
        size_t at = 0;
        bool met = joined && pith_doc_joined(joined, &at);
        CHECK(first < N ? met && at == starts[first] - starts[k] : !met, "join at %d: joined_at", k);
        for (int i = first; joined && i < N && (size_t)(i - first) < pith_doc_count(joined); i++)
            CHECK(pith_value_equal(pith_doc_root(joined, (size_t)(i - first)), pith_doc_root(whole, (size_t)i)),
                  "join at %d: value %d", k, i);
        pith_doc_free(joined);

        /* Frame by frame, each from a buffer that dies before the next. */
        pith_reader *r = pith_reader_new(NULL);
        bool ok = pith_reader_start(r, "", 0, NULL, 0, PITH_READ_JOIN);
        size_t pos = starts[k], values = 0;
        while (ok && pos < len) {
            size_t fsize;
            CHECK(pith_stream_scan(data + pos, len - pos, false, &fsize, &err) == PITH_SCAN_READY, "scan");
            uint8_t *frame = (uint8_t *)malloc(fsize);
            memcpy(frame, data + pos, fsize);
            bool has_value = false;
            ok = pith_reader_feed_frame(r, frame, fsize, pos - starts[k], &has_value);
            if (ok && has_value) {
                ok = pith_skip(r) && pith_reader_frame_end(r);
                values++;
            }
            memset(frame, 0xEE, fsize);
            free(frame);
            pos += fsize;
        }
        CHECK(ok && values == (size_t)(N - first), "fed join at %d: %zu values", k, values);
        pith_reader_free(r);
    }
    pith_doc_free(whole);

    /* A sync request made inside a frame is for the next frame. */
    pith_writer *req = pith_writer_new(NULL);
    pith_writer_start(req, NULL, PITH_WRITE_STREAM);
    pith_write_frame_begin(req);
    pith_write_int(req, 1);
    pith_write_frame_end(req);
    pith_write_frame_begin(req);
    pith_writer_sync(req);
    pith_write_int(req, 2);
    pith_write_frame_end(req);
    CHECK(pith_write_frame_begin(req) && pith_writer_frame_synced(req), "sync requested inside a frame");
    pith_writer_free(req);
    pith_reader *fresh = pith_reader_new(NULL);
    CHECK(!pith_reader_joined(fresh, NULL), "a new reader has not joined");
    pith_reader_free(fresh);

    /* The header, then frame 1 (it refers to frame 0's strings). */
    uint8_t bad[4096];
    size_t f1 = starts[2] - starts[1];
    CHECK(3 + f1 <= sizeof bad, "test buffer");
    memcpy(bad, data, 3);
    memcpy(bad + 3, data + starts[1], f1);
    pith_doc *wrong = pith_decode(NULL, bad, 3 + f1, &whole_opts, &err);
    CHECK(!wrong && err.code == PITH_ERR_OUT_OF_SEQUENCE, "a frame from the middle after the header: %s",
          pith_code_name(err.code));
    pith_doc_free(wrong);
    pith_writer_free(w);
}

/* Frames handed out one at a time (pith_writer_discard_output) concatenate to
 * exactly the stream written whole: the tables outlive the discarded bytes. */
static void test_discard_output(void) {
    pith_writer *misuse = pith_writer_new(NULL);
    pith_writer_start(misuse, NULL, PITH_WRITE_STREAM);
    pith_write_frame_begin(misuse);
    CHECK(!pith_writer_discard_output(misuse), "discard inside a frame is refused");
    CHECK(pith_writer_error(misuse)->code == PITH_ERR_USAGE, "usage error");
    pith_writer_free(misuse);

    pith_writer *whole = pith_writer_new(NULL), *pieces = pith_writer_new(NULL);
    pith_writer_start(whole, NULL, PITH_WRITE_STREAM);
    pith_writer_start(pieces, NULL, PITH_WRITE_STREAM);
    uint8_t joined[1 << 14];
    size_t joined_len = 0, len;
    const uint8_t *out;
    for (int i = 0; i < 5; i++) {
        pith_write_frame_begin(whole);
        write_sample(whole, 7 * i + 1);
        pith_write_frame_end(whole);
        pith_write_frame_begin(pieces);
        write_sample(pieces, 7 * i + 1);
        CHECK(pith_write_frame_end(pieces), "frame");
        out = pith_writer_data(pieces, &len);
        CHECK(joined_len + len <= sizeof joined, "test buffer");
        memcpy(joined + joined_len, out, len);
        joined_len += len;
        CHECK(pith_writer_discard_output(pieces), "discard between frames");
        pith_writer_data(pieces, &len);
        CHECK(len == 0, "nothing left after discarding");
    }
    out = pith_writer_data(whole, &len);
    CHECK(len == joined_len && memcmp(out, joined, len) == 0, "pieces == whole stream");
    pith_writer *single = pith_writer_new(NULL);
    pith_writer_start(single, NULL, 0);
    CHECK(!pith_writer_discard_output(single), "discard outside a stream is refused");
    pith_writer_free(single);
    pith_writer_free(whole);
    pith_writer_free(pieces);
}

/* ==========================================================================
 * Shape handles
 * ========================================================================== */

static void test_shape_handles(void) {
    /* Writing by shape index gives exactly the bytes of writing by keys. */
    pith_key keys[2] = {{"id", 2, false}, {"name", 4, false}};
    pith_writer *a = pith_writer_new(NULL), *b = pith_writer_new(NULL);
    pith_writer_start(a, NULL, 0);
    pith_writer_start(b, NULL, 0);
    bool ok = pith_write_array_begin(a, 3) && pith_write_array_begin(b, 3);
    uint32_t shape = PITH_NO_INDEX;
    for (int i = 0; ok && i < 3; i++) {
        ok = pith_write_map_begin(a, keys, 2) && pith_write_int(a, i) && pith_write_string(a, "x", 1) &&
             pith_write_map_end(a);
        if (i == 0) {
            ok = ok && pith_write_map_begin(b, keys, 2);
            shape = pith_writer_last_shape(b);
        } else {
            ok = ok && pith_write_map_shape(b, shape);
        }
        ok = ok && pith_write_int(b, i) && pith_write_string(b, "x", 1) && pith_write_map_end(b);
    }
    ok = ok && pith_write_array_end(a) && pith_write_array_end(b);
    size_t la, lb;
    const uint8_t *da = pith_writer_data(a, &la), *db = pith_writer_data(b, &lb);
    CHECK(ok && shape == 0 && la == lb && memcmp(da, db, la) == 0, "shape handle gives the same bytes");
    CHECK(pith_writer_shape_size(b, shape) == 2, "shape size");
    pith_writer_start(b, NULL, 0);
    CHECK(!pith_write_map_shape(b, 0) && pith_writer_error(b)->code == PITH_ERR_USAGE, "unknown shape after restart");
    pith_writer_free(a);
    pith_writer_free(b);
}

/* ==========================================================================
 * Small functions
 * ========================================================================== */

/* ==========================================================================
 * One long key shared by many shapes
 * ========================================================================== */

/* A 1 MiB key written once and then referenced by one byte in 20,000 new
 * shapes: the reader hashes it once (not per shape), reports the same table
 * index for it in every shape, and the tree keeps one copy. The writer would
 * hash the key for every map it is given, so the buffer is written as the
 * first map followed by copies of the canonical bytes of map i > 0. */
static void test_long_key_shared_by_shapes(void) {
    enum { LONG = 1 << 20, MAPS = 20000, TAIL = 10 };
    char *long_key = (char *)malloc(LONG);
    memset(long_key, 'k', LONG);
    pith_writer *w = pith_writer_new(NULL);
    pith_key keys[2] = {{long_key, LONG, false}, {"f0000", 5, false}};
    bool ok = pith_writer_start(w, NULL, 0) && pith_write_array_begin(w, MAPS) && pith_write_map_begin(w, keys, 2) &&
              pith_write_int(w, 1) && pith_write_null(w) && pith_write_map_end(w);
    size_t head_len = 0;
    const uint8_t *head = pith_writer_data(w, &head_len);
    size_t len = head_len + (size_t)(MAPS - 1) * TAIL;
    uint8_t *buf = (uint8_t *)malloc(len);
    memcpy(buf, head, head_len);
    for (int i = 1; i < MAPS; i++) {
        /* MAPDEF2, reference 0 (the long key), "f%04x", 1, null */
        uint8_t *t = buf + head_len + (size_t)(i - 1) * TAIL;
        char other[8];
        snprintf(other, sizeof other, "f%04x", i);
        t[0] = 0x92, t[1] = 0x00, t[2] = 0x45;
        memcpy(t + 3, other, 5);
        t[8] = 0xa9, t[9] = 0xe0;
    }
    CHECK(ok && head_len > LONG && head_len < LONG + 32, "first map in %zu bytes", head_len);

    pith_reader *r = pith_reader_new(NULL);
    pith_item it;
    uint32_t first_index = PITH_NO_INDEX;
    int maps = 0;
    ok = pith_reader_start(r, buf, len, NULL, 0, 0) && pith_read(r, &it) && it.type == PITH_ARRAY;
    for (; ok && maps < MAPS; maps++) {
        ok = pith_read(r, &it) && it.type == PITH_MAP && it.v.map.key_strings && it.v.map.keys[0].len == LONG;
        if (!ok) break;
        if (maps == 0) first_index = it.v.map.key_strings[0];
        ok = first_index != PITH_NO_INDEX && it.v.map.key_strings[0] == first_index && pith_skip(r) && pith_skip(r);
    }
    CHECK(ok && maps == MAPS && pith_reader_finish(r), "read %d maps: %s", maps,
          pith_reader_error(r)->message ? pith_reader_error(r)->message : "a key without its index");
    pith_reader_free(r);

    pith_error err;
    pith_doc *doc = pith_decode(NULL, buf, len, NULL, &err);
    CHECK(doc != NULL, "decode: %s", err.message);
    if (doc) {
        const pith_value *root = pith_doc_root(doc, 0);
        const char *a = root->v.array.items[0].v.map.keys[0].v.str.ptr;
        const char *b = root->v.array.items[MAPS - 1].v.map.keys[0].v.str.ptr;
        CHECK(a == b, "the tree shares one copy of the long key");
        pith_doc_free(doc);
    }
    free(buf);
    pith_writer_free(w);
    free(long_key);
}

static void test_misc(void) {
    for (int c = PITH_OK; c <= PITH_ERR_USAGE; c++) {
        const char *name = pith_code_name((pith_code)c);
        CHECK(c == PITH_OK || pith_code_from_name(name, strlen(name)) == (pith_code)c, "code name %s", name);
    }
    char iso[40];
    pith_timestamp t = {1744795427, 500000000, 120, PITH_ZONE_OFFSET};
    CHECK(pith_timestamp_iso(&t, iso) && strcmp(iso, "2025-04-16T11:23:47.5+02:00") == 0, "iso %s", iso);
    pith_timestamp t2 = {-62135596800LL, 0, 0, PITH_ZONE_FLOATING};
    CHECK(pith_timestamp_iso(&t2, iso) && strcmp(iso, "0001-01-01T00:00:00") == 0, "iso %s", iso);
    pith_buf b;
    pith_buf_init(&b, NULL);
    const uint8_t mag[10] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0}; /* 2^64 */
    CHECK(pith_format_bigint(true, mag, sizeof mag, &b) && strcmp(b.ptr, "-18446744073709551616") == 0, "%s", b.ptr);
    pith_buf_free(&b);

    /* Decimal up to PITH_MAX_DECIMAL_BYTES (2^65536 - 1 has 19,729 digits);
     * beyond, refused by pith_format_bigint and hexadecimal in pith_diag. */
    uint8_t *big = (uint8_t *)malloc(PITH_MAX_DECIMAL_BYTES + 2);
    memset(big, 0xff, PITH_MAX_DECIMAL_BYTES + 1);
    big[PITH_MAX_DECIMAL_BYTES + 1] = 0; /* high zero bytes do not count */
    pith_buf_init(&b, NULL);
    CHECK(pith_format_bigint(false, big, PITH_MAX_DECIMAL_BYTES, &b) && b.len == 19729, "digits %zu", b.len);
    size_t before = b.len;
    CHECK(!pith_format_bigint(false, big, PITH_MAX_DECIMAL_BYTES + 2, &b) && !b.failed && b.len == before, "refused");
    pith_buf_free(&b);
    pith_value v;
    memset(&v, 0, sizeof v);
    v.type = PITH_BIGINT;
    v.v.big.negative = true;
    v.v.big.mag = big;
    v.v.big.len = PITH_MAX_DECIMAL_BYTES + 2;
    big[PITH_MAX_DECIMAL_BYTES] = 0x0f;
    pith_buf_init(&b, NULL);
    CHECK(pith_diag(&v, &b) && b.len == 3 + 1 + 2 * PITH_MAX_DECIMAL_BYTES && strncmp(b.ptr, "-0xfff", 6) == 0 &&
              b.ptr[b.len - 1] == 'f',
          "diag in hex: %.8s... (%zu)", b.ptr, b.len);
    pith_buf_free(&b);
    free(big);
}

/* A reused writer gives every buffer the bytes a fresh writer would, whatever
 * the buffers before it: many shapes, then few (the shape index is emptied
 * bucket by bucket), with and without a dictionary's shapes. */
static bool write_shapes(pith_writer *w, const pith_dict *d, int count, int variety) {
    bool ok = pith_writer_start(w, d, 0) && pith_write_array_begin(w, (size_t)count);
    for (int i = 0; ok && i < count; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "k%d", i % variety);
        pith_key keys[2] = {{"id", 2, false}, {name, (size_t)n, false}};
        ok = pith_write_map_begin(w, keys, 2) && pith_write_int(w, i) && pith_write_int(w, -i) && pith_write_map_end(w);
    }
    return ok && pith_write_array_end(w);
}

static void test_shape_index_reuse(void) {
    pith_error err;
    pith_key strings[1] = {{"admin", 5, false}};
    pith_key shape_keys[2] = {{"id", 2, false}, {"k1", 2, false}};
    size_t lens[1] = {2};
    pith_dict *d = pith_dict_new(NULL, strings, 1, shape_keys, lens, 1, &err);
    CHECK(d, "dict_new: %s", err.message);
    pith_writer *w = pith_writer_new(NULL), *fresh = pith_writer_new(NULL);
    const struct { const pith_dict *d; int count, variety; } runs[] = {
        {NULL, 6000, 5000}, {NULL, 10, 3}, {d, 10, 3}, {NULL, 4, 4}, {d, 3000, 2500}, {d, 12, 5}, {NULL, 7, 2},
        {NULL, 3000, 3000}, {NULL, 3000, 3000}, {d, 1, 1},
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        pith_writer_free(fresh);
        fresh = pith_writer_new(NULL);
        bool ok = write_shapes(w, runs[r].d, runs[r].count, runs[r].variety) &&
                  write_shapes(fresh, runs[r].d, runs[r].count, runs[r].variety);
        size_t la, lb;
        const uint8_t *a = pith_writer_data(w, &la), *b = pith_writer_data(fresh, &lb);
        CHECK(ok && la == lb && memcmp(a, b, la) == 0, "buffer %zu of a reused writer equals a fresh writer's", r);
    }
    pith_writer_free(w);
    pith_writer_free(fresh);
    pith_dict_free(d);
}

/* The dictionary builder: the same samples, given as values or as encoded
 * buffers, build the same dictionary; options and ordering as documented. */
static pith_doc *sample_docs(void) {
    /* [{"id":"usr_1","role":"admin"}, {"id":"usr_2","role":"admin"}, {:id=>"x"}, "admin", "zz", "zz"] */
    pith_doc *d = pith_doc_new(NULL);
    pith_value *root = pith_doc_values(d, 1), *items = pith_doc_values(d, 6);
    root->type = PITH_ARRAY;
    root->v.array.items = items;
    root->v.array.count = 6;
    pith_value *keys = pith_doc_values(d, 2), *sym = pith_doc_values(d, 1);
    keys[0] = (pith_value){.type = PITH_STRING, .v.str = {"id", 2}};
    keys[1] = (pith_value){.type = PITH_STRING, .v.str = {"role", 4}};
    sym[0] = (pith_value){.type = PITH_SYMBOL, .v.str = {"id", 2}};
    for (int i = 0; i < 2; i++) {
        pith_value *vals = pith_doc_values(d, 2);
        vals[0] = (pith_value){.type = PITH_STRING, .v.str = {i ? "usr_2" : "usr_1", 5}};
        vals[1] = (pith_value){.type = PITH_STRING, .v.str = {"admin", 5}};
        items[i] = (pith_value){.type = PITH_MAP, .v.map = {keys, vals, 2}};
    }
    pith_value *sv = pith_doc_values(d, 1);
    sv[0] = (pith_value){.type = PITH_STRING, .v.str = {"x", 1}};
    items[2] = (pith_value){.type = PITH_MAP, .v.map = {sym, sv, 1}};
    items[3] = (pith_value){.type = PITH_STRING, .v.str = {"admin", 5}};
    items[4] = (pith_value){.type = PITH_STRING, .v.str = {"zz", 2}};
    items[5] = (pith_value){.type = PITH_STRING, .v.str = {"zz", 2}};
    if (!pith_doc_push(d, root)) CHECK(false, "doc_push");
    return d;
}

static void test_dict_builder(void) {
    pith_error err;
    pith_doc *doc = sample_docs();
    pith_dict_builder *bv = pith_dict_builder_new(NULL), *bb = pith_dict_builder_new(NULL);
    pith_writer *w = pith_writer_new(NULL);
    const pith_value *root = pith_doc_root(doc, 0);
    bool ok = bv && bb && w;
    for (size_t i = 0; ok && i < root->v.array.count; i++) {
        /* Each element is a sample: as a value, and encoded as its own buffer. */
        size_t len = 0;
        const uint8_t *bytes = NULL;
        if (pith_writer_start(w, NULL, 0) && pith_write_value(w, &root->v.array.items[i]))
            bytes = pith_writer_data(w, &len);
        ok = bytes && pith_dict_builder_add_value(bv, &root->v.array.items[i]) &&
             pith_dict_builder_add_buffer(bb, bytes, len, &err);
    }
    CHECK(ok, "add_value and add_buffer");
    CHECK(!pith_dict_builder_add_buffer(bb, "\xC1\x70", 2, &err) && err.code == PITH_ERR_TRUNCATED,
          "a buffer that does not decode is an error");
    pith_dict *dv = pith_dict_builder_finish(bv, NULL, &err), *db = pith_dict_builder_finish(bb, NULL, &err);
    CHECK(dv && db && pith_dict_id(dv) == pith_dict_id(db), "values and their buffers build the same dictionary");
    /* In 2+ samples: "admin" 3x5 = 15 bytes, "zz" 2x2 = 4; usr_1, usr_2 and "x" in one. One shape in two. */
    CHECK(dv && pith_dict_string_count(dv) == 2 && pith_dict_string(dv, 0).len == 5 && pith_dict_string(dv, 1).len == 2,
          "strings in two samples or more, most bytes saved first");
    size_t nk = 0;
    const pith_key *k = dv ? pith_dict_shape(dv, 0, &nk) : NULL;
    CHECK(dv && pith_dict_shape_count(dv) == 1 && nk == 2 && !k[0].symbol, "the shape in two samples");
    pith_dict *again = pith_dict_builder_finish(bv, NULL, &err);
    CHECK(again && dv && pith_dict_id(again) == pith_dict_id(dv), "finishing twice gives the same dictionary");
    pith_dict_build_options all = {1, 0, 0}, capped = {1, 3, 1};
    pith_dict *d1 = pith_dict_builder_finish(bv, &all, &err), *d2 = pith_dict_builder_finish(bv, &capped, &err);
    k = d1 && pith_dict_shape_count(d1) == 2 ? pith_dict_shape(d1, 1, &nk) : NULL;
    CHECK(d1 && pith_dict_string_count(d1) == 4 && k && nk == 1 && k[0].symbol,
          "min_count 1: every string of 2+ bytes, and the symbol-keyed shape as its own");
    CHECK(d2 && pith_dict_string_count(d2) == 3 && pith_dict_shape_count(d2) == 1, "max_strings and max_shapes cap");
    /* More samples after finishing are counted into the same totals: the
     * whole array as one more sample puts usr_1, usr_2 and the symbol shape in two. */
    CHECK(pith_dict_builder_add_value(bv, root), "add after finish");
    pith_dict *d3 = pith_dict_builder_finish(bv, NULL, &err);
    CHECK(d3 && pith_dict_string_count(d3) == 4 && pith_dict_shape_count(d3) == 2, "counts go on after finish");
    /* Repeats inside one sample count once; a single sample keeps everything. */
    pith_dict_builder *one = pith_dict_builder_new(NULL);
    pith_dict *d4 = one && pith_dict_builder_add_value(one, root) ? pith_dict_builder_finish(one, NULL, &err) : NULL;
    CHECK(d4 && pith_dict_string_count(d4) == 4 && pith_dict_shape_count(d4) == 2, "one sample: min_count 1");
    pith_dict_build_options two = {2, 0, 0};
    pith_dict *d5 = one ? pith_dict_builder_finish(one, &two, &err) : NULL;
    CHECK(d5 && pith_dict_string_count(d5) == 0 && pith_dict_shape_count(d5) == 0,
          "repeats inside one sample count once");
    pith_dict_free(d5);
    pith_dict_free(d4);
    pith_dict_builder_free(one);
    pith_dict_free(d3);
    pith_dict_free(d2);
    pith_dict_free(d1);
    pith_dict_free(again);
    pith_dict_free(dv);
    pith_dict_free(db);
    pith_writer_free(w);
    pith_dict_builder_free(bv);
    pith_dict_builder_free(bb);
    pith_dict_builder_free(NULL);
    pith_doc_free(doc);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_allocation_failures();
    test_writer_misuse();
    test_reader();
    test_dictionaries();
    test_stream_scan();
    test_sync_and_join();
    test_discard_output();
    test_dictionary_reuse();
    test_shape_handles();
    test_long_key_shared_by_shapes();
    test_shape_index_reuse();
    test_dict_builder();
    test_misc();
    return test_summary("test_api");
}
