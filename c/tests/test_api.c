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
static bool write_sample(tersa_writer *w, int records) {
    tersa_key keys[4] = {{"id", 2, false}, {"name", 4, false}, {"at", 2, false}, {"tags", 4, true}};
    bool ok = tersa_write_array_begin(w, (size_t)records);
    for (int i = 0; ok && i < records; i++) {
        char id[32], at[32];
        int n = snprintf(id, sizeof id, "usr_%05d", i);
        int m = snprintf(at, sizeof at, "2025-04-16T09:%02d:%02dZ", i / 60 % 60, i % 60);
        ok = tersa_write_map_begin(w, keys, 4) && tersa_write_string(w, id, (size_t)n) &&
             tersa_write_string(w, i % 3 ? "admin" : "user", i % 3 ? 5 : 4) && tersa_write_string(w, at, (size_t)m) &&
             tersa_write_array_begin(w, 2) && tersa_write_double(w, 37.7749 + i / 1e4) && tersa_write_int(w, 1000 + i) &&
             tersa_write_array_end(w) && tersa_write_map_end(w);
    }
    return ok && tersa_write_array_end(w);
}

static void test_allocation_failures(void) {
    /* Encode with the allocator failing at every possible point. */
    for (long budget = 0; budget < 200; budget++) {
        failing f = {budget, 0};
        tersa_alloc a = {f_malloc, f_realloc, f_free, &f};
        tersa_writer *w = tersa_writer_new(&a);
        if (w) {
            bool ok = tersa_writer_start(w, NULL, 0) && write_sample(w, 300);
            if (!ok) CHECK(tersa_writer_error(w)->code == TERSA_ERR_NOMEM, "budget %ld: wrong error %s", budget,
                           tersa_code_name(tersa_writer_error(w)->code));
            tersa_writer_free(w);
        }
        CHECK(f.live == 0, "encode with budget %ld leaked %zu bytes", budget, f.live);
    }
    /* Decode likewise. */
    tersa_writer *w = tersa_writer_new(NULL);
    CHECK(tersa_writer_start(w, NULL, 0) && write_sample(w, 300), "sample encodes");
    size_t len;
    const uint8_t *data = tersa_writer_data(w, &len);
    for (long budget = 0; budget < 200; budget++) {
        failing f = {budget, 0};
        tersa_alloc a = {f_malloc, f_realloc, f_free, &f};
        tersa_error err;
        tersa_doc *d = tersa_decode(&a, data, len, NULL, &err);
        if (!d) CHECK(err.code == TERSA_ERR_NOMEM, "decode budget %ld: wrong error %s", budget, tersa_code_name(err.code));
        tersa_doc_free(d);
        CHECK(f.live == 0, "decode with budget %ld leaked %zu bytes", budget, f.live);
    }
    tersa_writer_free(w);
}

/* ==========================================================================
 * Writer contracts
 * ========================================================================== */

static void test_writer_misuse(void) {
    tersa_writer *w = tersa_writer_new(NULL);
    CHECK(!tersa_write_null(w) && tersa_writer_error(w)->code == TERSA_ERR_USAGE, "write before start");

    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_write_null(w), "first top-level value");
    CHECK(!tersa_write_null(w) && tersa_writer_error(w)->code == TERSA_ERR_USAGE, "second top-level value");

    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_writer_error(w)->code == TERSA_OK, "start clears the error");
    CHECK(tersa_write_array_begin(w, 2) && tersa_write_int(w, 1), "array begin");
    CHECK(!tersa_write_array_end(w) && tersa_writer_error(w)->code == TERSA_ERR_USAGE, "early end");

    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_write_array_begin(w, 1) && tersa_write_int(w, 1), "array");
    CHECK(!tersa_write_int(w, 2) && tersa_writer_error(w)->code == TERSA_ERR_USAGE, "too many items");

    /* The open container's cursor comes back when an inner one closes. */
    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_write_array_begin(w, 2) && tersa_write_array_begin(w, 1) && tersa_write_int(w, 1) &&
              tersa_write_array_end(w) && tersa_write_int(w, 2),
          "outer array continues after an inner one");
    CHECK(!tersa_write_int(w, 3) && tersa_writer_error(w)->code == TERSA_ERR_USAGE, "outer array full");
    CHECK(!tersa_write_array_end(w) && !tersa_write_null(w), "everything fails after an error");
    CHECK(strcmp(tersa_writer_error(w)->message, "more items than the container's count") == 0, "first error kept");

    tersa_writer_start(w, NULL, 0);
    tersa_key ab[2] = {{"a", 1, false}, {"b", 1, false}};
    CHECK(tersa_write_map_begin(w, ab, 2) && tersa_write_array_begin(w, 0) && tersa_write_array_end(w),
          "map value that is an array");
    CHECK(!tersa_write_map_end(w) && tersa_writer_error(w)->code == TERSA_ERR_USAGE, "map closed with a value missing");

    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_write_array_begin(w, 0) && !tersa_write_map_end(w) && tersa_writer_error(w)->code == TERSA_ERR_USAGE,
          "array closed as a map");

    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_write_array_begin(w, 0) && tersa_write_array_end(w), "empty array");
    CHECK(!tersa_write_null(w) && tersa_writer_error(w)->code == TERSA_ERR_USAGE, "a value after the top-level container");

    tersa_writer_start(w, NULL, 0);
    tersa_key dup[2] = {{"a", 1, false}, {"a", 1, false}};
    CHECK(!tersa_write_map_begin(w, dup, 2) && tersa_writer_error(w)->code == TERSA_ERR_UNREPRESENTABLE, "duplicate keys");

    tersa_writer_start(w, NULL, 0);
    tersa_key symstr[2] = {{"a", 1, false}, {"a", 1, true}};
    CHECK(tersa_write_map_begin(w, symstr, 2), "a string and a symbol of the same name are distinct keys");

    tersa_writer_start(w, NULL, 0);
    CHECK(!tersa_write_string(w, "\xc0\x80", 2) && tersa_writer_error(w)->code == TERSA_ERR_UNREPRESENTABLE,
          "invalid UTF-8 string");
    tersa_writer_start(w, NULL, 0);
    CHECK(!tersa_write_ext(w, 65536, "", 0) && tersa_writer_error(w)->code == TERSA_ERR_UNREPRESENTABLE, "ext type");
    tersa_writer_start(w, NULL, 0);
    tersa_timestamp ts = {TERSA_MAX_SECONDS + 1, 0, 0, TERSA_ZONE_UTC};
    CHECK(!tersa_write_timestamp(w, &ts) && tersa_writer_error(w)->code == TERSA_ERR_UNREPRESENTABLE, "time range");
    tersa_writer_start(w, NULL, 0);
    tersa_timestamp ts2 = {TERSA_MAX_SECONDS, 0, 1, TERSA_ZONE_OFFSET};
    CHECK(!tersa_write_timestamp(w, &ts2), "local time beyond 9999");
    tersa_writer_start(w, NULL, 0);
    tersa_timestamp ts3 = {0, 1000000000u, 0, TERSA_ZONE_UTC};
    CHECK(!tersa_write_timestamp(w, &ts3), "nanos range");

    tersa_writer_start(w, NULL, 0);
    tersa_writer_set_max_depth(w, 3);
    CHECK(tersa_write_array_begin(w, 1) && tersa_write_array_begin(w, 1) && tersa_write_array_begin(w, 1), "depth 3");
    CHECK(!tersa_write_array_begin(w, 0) && tersa_writer_error(w)->code == TERSA_ERR_DEPTH_EXCEEDED, "depth 4");
    tersa_writer_set_max_depth(w, TERSA_DEFAULT_MAX_DEPTH);

    tersa_writer_start(w, NULL, TERSA_WRITE_STREAM);
    CHECK(!tersa_write_null(w) && tersa_writer_error(w)->code == TERSA_ERR_USAGE, "stream value outside a frame");
    tersa_writer_start(w, NULL, TERSA_WRITE_STREAM);
    CHECK(tersa_write_frame_begin(w) && !tersa_write_frame_end(w), "empty frame");
    tersa_writer_start(w, NULL, TERSA_WRITE_STREAM);
    CHECK(tersa_writer_complete(w), "an empty stream is complete");

    /* Big integers in the native range take the native forms. */
    tersa_writer_start(w, NULL, 0);
    uint8_t mag[12] = {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(tersa_write_bigint(w, true, mag, sizeof mag), "bigint -5");
    size_t len;
    const uint8_t *data = tersa_writer_data(w, &len);
    CHECK(len == 4 && data[3] == 0xA0 + 3, "bigint -5 is INT");
    tersa_writer_free(w);
}

/* ==========================================================================
 * Reader contracts
 * ========================================================================== */

static void test_reader(void) {
    const uint8_t one[] = {0xC1, 0x70, 0x10, 0x82, 0xA9, 0xAA};
    tersa_reader *r = tersa_reader_new(NULL);
    tersa_item it;
    CHECK(tersa_reader_start(r, one, sizeof one, NULL, 0, 0), "start");
    CHECK(tersa_read(r, &it) && it.type == TERSA_ARRAY && it.v.array.count == 2, "array");
    CHECK(tersa_read(r, &it) && it.type == TERSA_INT && it.v.i == 1 && it.offset == 4, "first element");
    CHECK(!tersa_reader_finish(r) && tersa_reader_error(r)->code == TERSA_ERR_USAGE, "finish before the end");
    CHECK(tersa_reader_start(r, one, sizeof one, NULL, 0, 0) && tersa_skip(r) && tersa_reader_finish(r), "skip");
    CHECK(!tersa_read(r, &it) && tersa_reader_error(r)->code == TERSA_ERR_USAGE, "read past the value");

    const uint8_t trailing[] = {0xC1, 0x70, 0x10, 0xE0, 0xE0};
    CHECK(tersa_reader_start(r, trailing, sizeof trailing, NULL, 0, 0) && tersa_read(r, &it), "read");
    CHECK(!tersa_reader_finish(r) && tersa_reader_error(r)->code == TERSA_ERR_TRAILING_BYTES &&
              tersa_reader_error(r)->offset == 4, "trailing");

    uint8_t deep[3 + 10] = {0xC1, 0x70, 0x10};
    memset(deep + 3, 0x81, 9);
    deep[12] = 0x80;
    tersa_reader_set_max_depth(r, 9);
    CHECK(tersa_reader_start(r, deep, sizeof deep, NULL, 0, 0), "deep start");
    bool ok = true;
    for (int i = 0; i < 10 && ok; i++) ok = tersa_read(r, &it);
    CHECK(!ok && tersa_reader_error(r)->code == TERSA_ERR_DEPTH_EXCEEDED && tersa_reader_error(r)->offset == 12,
          "depth limit 9");
    tersa_reader_free(r);
}

/* ==========================================================================
 * Dictionaries
 * ========================================================================== */

static void test_dictionaries(void) {
    tersa_error err;
    tersa_key strings[3] = {{"admin", 5, false}, {"user", 4, false}, {"en-US", 5, false}};
    tersa_key shape_keys[5] = {{"id", 2, false}, {"name", 4, false}, {"role", 4, false}, {"id", 2, true},
                              {"name", 4, true}};
    size_t lens[2] = {3, 2};
    tersa_dict *d = tersa_dict_new(NULL, strings, 3, shape_keys, lens, 2, &err);
    CHECK(d, "dict_new: %s", err.message);
    if (!d) return;
    size_t slen;
    const uint8_t *ser = tersa_dict_serialized(d, &slen);
    tersa_dict *d2 = tersa_dict_parse(NULL, ser, slen, &err);
    CHECK(d2 && tersa_dict_id(d2) == tersa_dict_id(d), "parse(serialize) keeps the id");
    CHECK(d2 && tersa_dict_string_count(d2) == 3 && tersa_dict_shape_count(d2) == 2, "counts");
    size_t nk;
    const tersa_key *k = d2 ? tersa_dict_shape(d2, 1, &nk) : NULL;
    CHECK(k && nk == 2 && k[0].symbol && k[0].len == 2, "symbol keys survive");
    tersa_dict_free(d2);

    /* Encode with, decode with / without. */
    tersa_writer *w = tersa_writer_new(NULL);
    CHECK(tersa_writer_start(w, d, 0) && tersa_write_map_begin(w, shape_keys, 3) && tersa_write_int(w, 1) &&
              tersa_write_string(w, "admin", 5) && tersa_write_string(w, "user", 4) && tersa_write_map_end(w),
          "encode with dictionary");
    size_t len;
    const uint8_t *data = tersa_writer_data(w, &len);
    CHECK(len == 3 + 8 + 1 + 1 + 1 + 1, "shape and strings from the dictionary: %zu bytes", len);
    const tersa_dict *dicts[1] = {d};
    tersa_decode_options o = {dicts, 1, 0, false, false};
    tersa_doc *doc = tersa_decode(NULL, data, len, &o, &err);
    CHECK(doc, "decode with the dictionary");
    tersa_doc_free(doc);
    doc = tersa_decode(NULL, data, len, NULL, &err);
    CHECK(!doc && err.code == TERSA_ERR_UNKNOWN_DICTIONARY && err.offset == 3, "decode without it");
    tersa_writer_free(w);

    /* Invalid dictionaries. */
    tersa_key bad1[1] = {{"a", 1, false}};
    CHECK(!tersa_dict_new(NULL, bad1, 1, NULL, NULL, 0, &err) && err.code == TERSA_ERR_INVALID_VALUE, "short string");
    tersa_key bad2[2] = {{"ab", 2, false}, {"ab", 2, false}};
    CHECK(!tersa_dict_new(NULL, bad2, 2, NULL, NULL, 0, &err), "repeated string");
    size_t l2[2] = {1, 1};
    CHECK(!tersa_dict_new(NULL, NULL, 0, bad2, l2, 2, &err), "repeated shape");
    size_t l1[1] = {2};
    CHECK(!tersa_dict_new(NULL, NULL, 0, bad2, l1, 1, &err), "repeated key in a shape");
    tersa_key bad3[1] = {{"\xff\xfe", 2, false}};
    CHECK(!tersa_dict_new(NULL, bad3, 1, NULL, NULL, 0, &err), "invalid UTF-8");
    const uint8_t junk[] = {0x81, 0xE0};
    CHECK(!tersa_dict_parse(NULL, junk, sizeof junk, &err), "not a dictionary");
    tersa_dict_free(d);

    tersa_dict *empty = tersa_dict_new(NULL, NULL, 0, NULL, NULL, 0, &err);
    CHECK(empty && tersa_dict_id(empty) == 0xb1c4acbb226d8209ull, "empty dictionary id matches the vectors: %016llx",
          empty ? (unsigned long long)tersa_dict_id(empty) : 0ull);
    tersa_dict_free(empty);
}

/* A value that uses a dictionary's strings and shapes and adds its own. */
static bool write_with_dict(tersa_writer *w, int i) {
    tersa_key shape[3] = {{"id", 2, false}, {"name", 4, false}, {"role", 4, false}};
    tersa_key other[2] = {{"id", 2, false}, {"extra", 5, false}};
    char own[32];
    int n = snprintf(own, sizeof own, "own_%d", i % 7);
    return tersa_write_array_begin(w, 3) && tersa_write_map_begin(w, shape, 3) && tersa_write_int(w, i) &&
           tersa_write_string(w, "admin", 5) && tersa_write_string(w, own, (size_t)n) && tersa_write_map_end(w) &&
           tersa_write_map_begin(w, other, 2) && tersa_write_string(w, own, (size_t)n) &&
           tersa_write_string(w, "user", 4) && tersa_write_map_end(w) && tersa_write_string(w, "en-US", 5) &&
           tersa_write_array_end(w);
}

/* The bytes a fresh writer makes, and a check that a fresh reader and the
 * long-lived one read them the same. */
static void check_reused(tersa_writer *w, tersa_reader *r, const tersa_dict *d, int i, const char *what) {
    tersa_writer *fresh = tersa_writer_new(NULL);
    CHECK(tersa_writer_start(fresh, d, 0) && write_with_dict(fresh, i), "%s: fresh writer", what);
    CHECK(tersa_writer_start(w, d, 0) && write_with_dict(w, i), "%s: reused writer", what);
    size_t a, b;
    const uint8_t *x = tersa_writer_data(fresh, &a), *y = tersa_writer_data(w, &b);
    CHECK(a == b && memcmp(x, y, a) == 0, "%s: a reused writer writes what a fresh one does (%zu vs %zu bytes)", what, b, a);
    const tersa_dict *dicts[1] = {d};
    CHECK(tersa_reader_start(r, y, b, dicts, d ? 1 : 0, 0) && tersa_skip(r) && tersa_reader_finish(r),
          "%s: reused reader: %s", what, tersa_reader_error(r)->message);
    tersa_decode_options o = {dicts, d ? 1u : 0u, 0, false, false};
    tersa_error err;
    tersa_doc *doc = tersa_decode(NULL, y, b, &o, &err);
    CHECK(doc, "%s: decodes", what);
    tersa_doc_free(doc);
    tersa_writer_free(fresh);
}

/* Writers and readers keep a dictionary's tables between buffers: switching
 * dictionaries, going without, the generation wrap and a dictionary freed and
 * replaced (perhaps at the same address) must all behave as if fresh. */
static void test_dictionary_reuse(void) {
    tersa_error err;
    tersa_key sa[3] = {{"admin", 5, false}, {"user", 4, false}, {"en-US", 5, false}};
    tersa_key sb[3] = {{"en-US", 5, false}, {"admin", 5, false}, {"other", 5, false}};
    tersa_key keys[5] = {{"id", 2, false}, {"name", 4, false}, {"role", 4, false}, {"id", 2, false},
                        {"extra", 5, false}};
    size_t la[2] = {3, 2}, lb[1] = {2};
    tersa_dict *a = tersa_dict_new(NULL, sa, 3, keys, la, 2, &err);
    tersa_dict *b = tersa_dict_new(NULL, sb, 3, keys + 3, lb, 1, &err);
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_reader *r = tersa_reader_new(NULL);
    for (int i = 0; i < 40; i++) {
        const tersa_dict *d = i % 5 == 3 ? b : i % 5 == 4 ? NULL : a;
        check_reused(w, r, d, i, i % 5 == 3 ? "dictionary b" : i % 5 == 4 ? "no dictionary" : "dictionary a");
    }
    /* Past the index's generation wrap (65,535 buffers). */
    for (int i = 0; i < 70000; i++) tersa_writer_start(w, a, 0);
    check_reused(w, r, a, 1, "after the generation wrap");
    /* Freed and replaced: the replacement has other strings at the same indices. */
    tersa_dict_free(a);
    tersa_dict *c = tersa_dict_new(NULL, sb, 3, keys, la, 2, &err);
    check_reused(w, r, c, 2, "a replacement dictionary");
    /* A stream over the dictionary, frames sharing tables, then a single buffer again. */
    CHECK(tersa_writer_start(w, c, TERSA_WRITE_STREAM), "stream");
    for (int i = 0; i < 3; i++)
        CHECK(tersa_write_frame_begin(w) && write_with_dict(w, i) && tersa_write_frame_end(w), "frame %d", i);
    check_reused(w, r, c, 3, "after a stream");
    tersa_writer_free(w);
    tersa_reader_free(r);
    tersa_dict_free(b);
    tersa_dict_free(c);
}

/* ==========================================================================
 * Incremental streams
 * ========================================================================== */

static void test_stream_scan(void) {
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_writer_start(w, NULL, TERSA_WRITE_STREAM);
    for (int i = 0; i < 3; i++) {
        tersa_write_frame_begin(w);
        write_sample(w, 50 * i + 1);
        tersa_write_frame_end(w);
    }
    size_t len;
    const uint8_t *data = tersa_writer_data(w, &len);
    tersa_error err;
    size_t size;
    for (size_t cut = 0; cut < 3; cut++)
        CHECK(tersa_stream_scan(data, cut, true, &size, &err) == TERSA_SCAN_NEED_MORE, "header needs 3 bytes");
    CHECK(tersa_stream_scan(data, len, true, &size, &err) == TERSA_SCAN_READY && size == 3, "header");
    CHECK(tersa_stream_scan(data + 3, 1, false, &size, &err) == TERSA_SCAN_NEED_MORE, "frame needs more");
    const uint8_t bad[] = {0x01};
    CHECK(tersa_stream_scan(bad, 1, false, &size, &err) == TERSA_SCAN_ERROR && err.code == TERSA_ERR_INVALID_VALUE,
          "empty frame");
    const uint8_t overlong[] = {0x02, 0x00};
    CHECK(tersa_stream_scan(overlong, 2, false, &size, &err) == TERSA_SCAN_ERROR && err.code == TERSA_ERR_INVALID_VARINT,
          "overlong frame length");
    tersa_writer_free(w);
}

/* A feed buffer handed a stream in pieces of every size gives back the header
 * and the frames tersa_stream_scan finds in the whole, at their offsets; its
 * end check tells a clean end, whole frames left, a cut length prefix and a
 * cut frame apart; a buffer grown by one large piece shrinks once small pieces
 * fill it. */
static void test_feed(void) {
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_writer_start(w, NULL, TERSA_WRITE_STREAM);
    for (int i = 0; i < 4; i++) {
        tersa_write_frame_begin(w);
        write_sample(w, 40 * i + 1);
        tersa_write_frame_end(w);
    }
    size_t len;
    const uint8_t *data = tersa_writer_data(w, &len);
    tersa_error err;
    for (size_t piece = 1; piece <= 7; piece++) {
        tersa_feed *f = tersa_feed_new(NULL);
        size_t fed = 0, pos = 0, items = 0, n;
        CHECK(tersa_feed_pending(f, &n) != NULL && n == 0, "empty feed has a pointer");
        while (pos < len) {
            const uint8_t *p;
            size_t size, whole;
            tersa_scan s = tersa_feed_next(f, pos == 0, &p, &size, &err);
            if (s == TERSA_SCAN_NEED_MORE) {
                size_t k = len - fed < piece ? len - fed : piece;
                CHECK(k > 0 && tersa_feed_append(f, data + fed, k), "piece %zu: append", piece);
                if (!k) break;
                fed += k;
                continue;
            }
            CHECK(s == TERSA_SCAN_READY && tersa_stream_scan(data + pos, len - pos, pos == 0, &whole, &err) ==
                      TERSA_SCAN_READY && size == whole && !memcmp(p, data + pos, size) &&
                      tersa_feed_offset(f) == pos, "piece %zu: item at %zu", piece, pos);
            tersa_feed_consume(f, size);
            pos += size;
            items++;
        }
        CHECK(items == 5 && tersa_feed_at_end(f, 0, &err), "piece %zu: header and 4 frames, then the end", piece);
        tersa_feed_free(f);
    }
    /* The end check on the stream cut after its header and after 1 and 2 bytes of the first frame. */
    size_t first;
    tersa_stream_scan(data + 3, len - 3, false, &first, &err);
    tersa_feed *f = tersa_feed_new(NULL);
    tersa_feed_append(f, data, 3 + first);
    CHECK(!tersa_feed_at_end(f, 3, &err) && err.code == TERSA_OK && err.offset == 3, "whole frames left");
    tersa_feed_reset(f);
    tersa_feed_append(f, data, 3);
    tersa_feed_consume(f, 3);
    const uint8_t two_byte_prefix[] = {0x02};
    tersa_feed_append(f, two_byte_prefix, 1);
    CHECK(!tersa_feed_at_end(f, 0, &err) && err.code == TERSA_ERR_TRUNCATED && err.offset == 3, "cut length prefix");
    const uint8_t rest[] = {0x10, 0x00};
    tersa_feed_append(f, rest, 2);
    CHECK(!tersa_feed_at_end(f, 0, &err) && err.code == TERSA_ERR_LENGTH_EXCEEDS_INPUT && err.offset == 3,
          "cut frame");
    tersa_feed_reset(f);
    CHECK(tersa_feed_capacity(f) == 0 && tersa_feed_offset(f) == 0, "reset releases the storage");
    static uint8_t big[1 << 20];
    tersa_feed_append(f, big, sizeof big);
    size_t grown = tersa_feed_capacity(f);
    tersa_feed_consume(f, sizeof big);
    /* Small pieces, each consumed: once they reach the end of the storage, it shrinks. */
    for (size_t i = 0; i < 2 * sizeof big / 100; i++) {
        tersa_feed_append(f, big, 100);
        tersa_feed_consume(f, 100);
    }
    CHECK(grown >= sizeof big && tersa_feed_capacity(f) <= 4096, "shrinks after a large piece: %zu -> %zu", grown,
          tersa_feed_capacity(f));
    tersa_feed_free(f);
    tersa_feed_free(NULL);
    tersa_writer_free(w);
}

/* Sync frames where tersa_writer_set_sync asks; a consumer joining at any frame
 * boundary, whole or frame by frame, decodes exactly the values from the next
 * sync frame on; a header followed by a later frame is out_of_sequence. */
static void test_sync_and_join(void) {
    enum { N = 10, EVERY = 3 };
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_writer_set_sync(w, EVERY, 0);
    tersa_writer_start(w, NULL, TERSA_WRITE_STREAM);
    size_t starts[N + 1];
    for (int i = 0; i < N; i++) {
        tersa_writer_data(w, &starts[i]);
        CHECK(tersa_write_frame_begin(w), "frame %d", i);
        CHECK(tersa_writer_frame_synced(w) == (i % EVERY == 0), "frame %d synced", i);
        write_sample(w, 5 * (i / 2) + 1); /* pairs of equal values: later frames refer to earlier ones */
        CHECK(tersa_write_frame_end(w), "frame %d end", i);
    }
    size_t len;
    const uint8_t *data = tersa_writer_data(w, &len);
    starts[N] = len;
    tersa_error err;
    tersa_decode_options whole_opts = {NULL, 0, 0, true, false};
    tersa_doc *whole = tersa_decode(NULL, data, len, &whole_opts, &err);
    CHECK(whole && tersa_doc_count(whole) == N, "whole stream");
    for (int k = 0; whole && k <= N; k++) {
        int first = (k + EVERY - 1) / EVERY * EVERY; /* the first sync frame at or after k */
        if (first > N) first = N;
        const uint8_t *tail = data + starts[k];
        size_t tail_len = len - starts[k];
        tersa_decode_options jo = {NULL, 0, 0, false, true};
        tersa_doc *joined = tersa_decode(NULL, tail_len ? tail : (const uint8_t *)"", tail_len, &jo, &err);
        CHECK(joined && tersa_doc_count(joined) == (size_t)(N - first), "join at %d: %zu values", k,
              joined ? tersa_doc_count(joined) : 0);
        size_t at = 0;
        bool met = joined && tersa_doc_joined(joined, &at);
        CHECK(first < N ? met && at == starts[first] - starts[k] : !met, "join at %d: joined_at", k);
        for (int i = first; joined && i < N && (size_t)(i - first) < tersa_doc_count(joined); i++)
            CHECK(tersa_value_equal(tersa_doc_root(joined, (size_t)(i - first)), tersa_doc_root(whole, (size_t)i)),
                  "join at %d: value %d", k, i);
        tersa_doc_free(joined);

        /* Frame by frame, each from a buffer that dies before the next. */
        tersa_reader *r = tersa_reader_new(NULL);
        bool ok = tersa_reader_start(r, "", 0, NULL, 0, TERSA_READ_JOIN);
        size_t pos = starts[k], values = 0;
        while (ok && pos < len) {
            size_t fsize;
            CHECK(tersa_stream_scan(data + pos, len - pos, false, &fsize, &err) == TERSA_SCAN_READY, "scan");
            uint8_t *frame = (uint8_t *)malloc(fsize);
            memcpy(frame, data + pos, fsize);
            bool has_value = false;
            ok = tersa_reader_feed_frame(r, frame, fsize, pos - starts[k], &has_value);
            if (ok && has_value) {
                ok = tersa_skip(r) && tersa_reader_frame_end(r);
                values++;
            }
            memset(frame, 0xEE, fsize);
            free(frame);
            pos += fsize;
        }
        CHECK(ok && values == (size_t)(N - first), "fed join at %d: %zu values", k, values);
        tersa_reader_free(r);
    }
    tersa_doc_free(whole);

    /* A sync request made inside a frame is for the next frame. */
    tersa_writer *req = tersa_writer_new(NULL);
    tersa_writer_start(req, NULL, TERSA_WRITE_STREAM);
    tersa_write_frame_begin(req);
    tersa_write_int(req, 1);
    tersa_write_frame_end(req);
    tersa_write_frame_begin(req);
    tersa_writer_sync(req);
    tersa_write_int(req, 2);
    tersa_write_frame_end(req);
    CHECK(tersa_write_frame_begin(req) && tersa_writer_frame_synced(req), "sync requested inside a frame");
    tersa_writer_free(req);
    tersa_reader *fresh = tersa_reader_new(NULL);
    CHECK(!tersa_reader_joined(fresh, NULL), "a new reader has not joined");
    tersa_reader_free(fresh);

    /* The header, then frame 1 (it refers to frame 0's strings). */
    uint8_t bad[4096];
    size_t f1 = starts[2] - starts[1];
    CHECK(3 + f1 <= sizeof bad, "test buffer");
    memcpy(bad, data, 3);
    memcpy(bad + 3, data + starts[1], f1);
    tersa_doc *wrong = tersa_decode(NULL, bad, 3 + f1, &whole_opts, &err);
    CHECK(!wrong && err.code == TERSA_ERR_OUT_OF_SEQUENCE, "a frame from the middle after the header: %s",
          tersa_code_name(err.code));
    tersa_doc_free(wrong);
    tersa_writer_free(w);
}

/* Frames handed out one at a time (tersa_writer_discard_output) concatenate to
 * exactly the stream written whole: the tables outlive the discarded bytes. */
static void test_discard_output(void) {
    tersa_writer *misuse = tersa_writer_new(NULL);
    tersa_writer_start(misuse, NULL, TERSA_WRITE_STREAM);
    tersa_write_frame_begin(misuse);
    CHECK(!tersa_writer_discard_output(misuse), "discard inside a frame is refused");
    CHECK(tersa_writer_error(misuse)->code == TERSA_ERR_USAGE, "usage error");
    tersa_writer_free(misuse);

    tersa_writer *whole = tersa_writer_new(NULL), *pieces = tersa_writer_new(NULL);
    tersa_writer_start(whole, NULL, TERSA_WRITE_STREAM);
    tersa_writer_start(pieces, NULL, TERSA_WRITE_STREAM);
    uint8_t joined[1 << 14];
    size_t joined_len = 0, len;
    const uint8_t *out;
    for (int i = 0; i < 5; i++) {
        tersa_write_frame_begin(whole);
        write_sample(whole, 7 * i + 1);
        tersa_write_frame_end(whole);
        tersa_write_frame_begin(pieces);
        write_sample(pieces, 7 * i + 1);
        CHECK(tersa_write_frame_end(pieces), "frame");
        out = tersa_writer_data(pieces, &len);
        CHECK(joined_len + len <= sizeof joined, "test buffer");
        memcpy(joined + joined_len, out, len);
        joined_len += len;
        CHECK(tersa_writer_discard_output(pieces), "discard between frames");
        tersa_writer_data(pieces, &len);
        CHECK(len == 0, "nothing left after discarding");
    }
    out = tersa_writer_data(whole, &len);
    CHECK(len == joined_len && memcmp(out, joined, len) == 0, "pieces == whole stream");
    tersa_writer *single = tersa_writer_new(NULL);
    tersa_writer_start(single, NULL, 0);
    CHECK(!tersa_writer_discard_output(single), "discard outside a stream is refused");
    tersa_writer_free(single);
    tersa_writer_free(whole);
    tersa_writer_free(pieces);
}

/* ==========================================================================
 * Shape handles
 * ========================================================================== */

static void test_shape_handles(void) {
    /* Writing by shape index gives exactly the bytes of writing by keys. */
    tersa_key keys[2] = {{"id", 2, false}, {"name", 4, false}};
    tersa_writer *a = tersa_writer_new(NULL), *b = tersa_writer_new(NULL);
    tersa_writer_start(a, NULL, 0);
    tersa_writer_start(b, NULL, 0);
    bool ok = tersa_write_array_begin(a, 3) && tersa_write_array_begin(b, 3);
    uint32_t shape = TERSA_NO_INDEX;
    for (int i = 0; ok && i < 3; i++) {
        ok = tersa_write_map_begin(a, keys, 2) && tersa_write_int(a, i) && tersa_write_string(a, "x", 1) &&
             tersa_write_map_end(a);
        if (i == 0) {
            ok = ok && tersa_write_map_begin(b, keys, 2);
            shape = tersa_writer_last_shape(b);
        } else {
            ok = ok && tersa_write_map_shape(b, shape);
        }
        ok = ok && tersa_write_int(b, i) && tersa_write_string(b, "x", 1) && tersa_write_map_end(b);
    }
    ok = ok && tersa_write_array_end(a) && tersa_write_array_end(b);
    size_t la, lb;
    const uint8_t *da = tersa_writer_data(a, &la), *db = tersa_writer_data(b, &lb);
    CHECK(ok && shape == 0 && la == lb && memcmp(da, db, la) == 0, "shape handle gives the same bytes");
    CHECK(tersa_writer_shape_size(b, shape) == 2, "shape size");
    tersa_writer_start(b, NULL, 0);
    CHECK(!tersa_write_map_shape(b, 0) && tersa_writer_error(b)->code == TERSA_ERR_USAGE, "unknown shape after restart");
    tersa_writer_free(a);
    tersa_writer_free(b);
}

/* tersa_writer_last_defined_shape: the shape a map defined, none for a map
 * whose keys the writer found in its table or that tersa_write_map_shape
 * opened by its index. */
static void test_last_defined_shape(void) {
    tersa_key keys[2] = {{"id", 2, false}, {"name", 4, false}}, other[1] = {{"id", 2, false}};
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_writer_start(w, NULL, 0);
    bool ok = tersa_write_array_begin(w, 3) && tersa_write_map_begin(w, keys, 2);
    CHECK(ok && tersa_writer_last_defined_shape(w) == 0 && tersa_writer_last_shape(w) == 0, "the first shape defined");
    ok = tersa_write_int(w, 1) && tersa_write_int(w, 2) && tersa_write_map_end(w) && tersa_write_map_begin(w, other, 1);
    CHECK(ok && tersa_writer_last_defined_shape(w) == 1 && tersa_writer_last_shape(w) == 1, "the second shape defined");
    ok = tersa_write_int(w, 1) && tersa_write_map_end(w) && tersa_write_map_begin(w, keys, 2);
    CHECK(ok && tersa_writer_last_defined_shape(w) == TERSA_NO_INDEX && tersa_writer_last_shape(w) == 0,
          "a shape found in the table is not a defined one");
    ok = tersa_write_int(w, 1) && tersa_write_int(w, 2) && tersa_write_map_end(w) && tersa_write_array_end(w);
    CHECK(ok, "the buffer ends");
    ok = tersa_writer_start(w, NULL, 0) && tersa_write_array_begin(w, 2) && tersa_write_map_begin(w, keys, 2) &&
         tersa_write_int(w, 1) && tersa_write_int(w, 2) && tersa_write_map_end(w) && tersa_write_map_shape(w, 0);
    CHECK(ok && tersa_writer_last_defined_shape(w) == TERSA_NO_INDEX && tersa_writer_last_shape(w) == 0,
          "a shape opened by its index is not a defined one");
    tersa_writer_free(w);
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
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_key keys[2] = {{long_key, LONG, false}, {"f0000", 5, false}};
    bool ok = tersa_writer_start(w, NULL, 0) && tersa_write_array_begin(w, MAPS) && tersa_write_map_begin(w, keys, 2) &&
              tersa_write_int(w, 1) && tersa_write_null(w) && tersa_write_map_end(w);
    size_t head_len = 0;
    const uint8_t *head = tersa_writer_data(w, &head_len);
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

    tersa_reader *r = tersa_reader_new(NULL);
    tersa_item it;
    uint32_t first_index = TERSA_NO_INDEX;
    int maps = 0;
    ok = tersa_reader_start(r, buf, len, NULL, 0, 0) && tersa_read(r, &it) && it.type == TERSA_ARRAY;
    for (; ok && maps < MAPS; maps++) {
        ok = tersa_read(r, &it) && it.type == TERSA_MAP && it.v.map.key_strings && it.v.map.keys[0].len == LONG;
        if (!ok) break;
        if (maps == 0) first_index = it.v.map.key_strings[0];
        ok = first_index != TERSA_NO_INDEX && it.v.map.key_strings[0] == first_index && tersa_skip(r) && tersa_skip(r);
    }
    CHECK(ok && maps == MAPS && tersa_reader_finish(r), "read %d maps: %s", maps,
          tersa_reader_error(r)->message ? tersa_reader_error(r)->message : "a key without its index");
    tersa_reader_free(r);

    tersa_error err;
    tersa_doc *doc = tersa_decode(NULL, buf, len, NULL, &err);
    CHECK(doc != NULL, "decode: %s", err.message);
    if (doc) {
        const tersa_value *root = tersa_doc_root(doc, 0);
        const char *a = root->v.array.items[0].v.map.keys[0].v.str.ptr;
        const char *b = root->v.array.items[MAPS - 1].v.map.keys[0].v.str.ptr;
        CHECK(a == b, "the tree shares one copy of the long key");
        tersa_doc_free(doc);
    }
    free(buf);
    tersa_writer_free(w);
    free(long_key);
}

static void test_misc(void) {
    for (int c = TERSA_OK; c <= TERSA_ERR_USAGE; c++) {
        const char *name = tersa_code_name((tersa_code)c);
        CHECK(c == TERSA_OK || tersa_code_from_name(name, strlen(name)) == (tersa_code)c, "code name %s", name);
    }
    char iso[40];
    tersa_timestamp t = {1744795427, 500000000, 120, TERSA_ZONE_OFFSET};
    CHECK(tersa_timestamp_iso(&t, iso) && strcmp(iso, "2025-04-16T11:23:47.5+02:00") == 0, "iso %s", iso);
    tersa_timestamp t2 = {-62135596800LL, 0, 0, TERSA_ZONE_FLOATING};
    CHECK(tersa_timestamp_iso(&t2, iso) && strcmp(iso, "0001-01-01T00:00:00") == 0, "iso %s", iso);
    tersa_buf b;
    tersa_buf_init(&b, NULL);
    const uint8_t mag[10] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0}; /* 2^64 */
    CHECK(tersa_format_bigint(true, mag, sizeof mag, &b) && strcmp(b.ptr, "-18446744073709551616") == 0, "%s", b.ptr);
    tersa_buf_free(&b);

    /* Decimal up to TERSA_MAX_DECIMAL_BYTES (2^65536 - 1 has 19,729 digits);
     * beyond, refused by tersa_format_bigint and hexadecimal in tersa_diag. */
    uint8_t *big = (uint8_t *)malloc(TERSA_MAX_DECIMAL_BYTES + 2);
    memset(big, 0xff, TERSA_MAX_DECIMAL_BYTES + 1);
    big[TERSA_MAX_DECIMAL_BYTES + 1] = 0; /* high zero bytes do not count */
    tersa_buf_init(&b, NULL);
    CHECK(tersa_format_bigint(false, big, TERSA_MAX_DECIMAL_BYTES, &b) && b.len == 19729, "digits %zu", b.len);
    size_t before = b.len;
    CHECK(!tersa_format_bigint(false, big, TERSA_MAX_DECIMAL_BYTES + 2, &b) && !b.failed && b.len == before, "refused");
    tersa_buf_free(&b);
    tersa_value v;
    memset(&v, 0, sizeof v);
    v.type = TERSA_BIGINT;
    v.v.big.negative = true;
    v.v.big.mag = big;
    v.v.big.len = TERSA_MAX_DECIMAL_BYTES + 2;
    big[TERSA_MAX_DECIMAL_BYTES] = 0x0f;
    tersa_buf_init(&b, NULL);
    CHECK(tersa_diag(&v, &b) && b.len == 3 + 1 + 2 * TERSA_MAX_DECIMAL_BYTES && strncmp(b.ptr, "-0xfff", 6) == 0 &&
              b.ptr[b.len - 1] == 'f',
          "diag in hex: %.8s... (%zu)", b.ptr, b.len);
    tersa_buf_free(&b);
    free(big);
}

/* A reused writer gives every buffer the bytes a fresh writer would, whatever
 * the buffers before it: many shapes, then few (the shape index is emptied
 * bucket by bucket), with and without a dictionary's shapes. */
static bool write_shapes(tersa_writer *w, const tersa_dict *d, int count, int variety) {
    bool ok = tersa_writer_start(w, d, 0) && tersa_write_array_begin(w, (size_t)count);
    for (int i = 0; ok && i < count; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "k%d", i % variety);
        tersa_key keys[2] = {{"id", 2, false}, {name, (size_t)n, false}};
        ok = tersa_write_map_begin(w, keys, 2) && tersa_write_int(w, i) && tersa_write_int(w, -i) && tersa_write_map_end(w);
    }
    return ok && tersa_write_array_end(w);
}

static void test_shape_index_reuse(void) {
    tersa_error err;
    tersa_key strings[1] = {{"admin", 5, false}};
    tersa_key shape_keys[2] = {{"id", 2, false}, {"k1", 2, false}};
    size_t lens[1] = {2};
    tersa_dict *d = tersa_dict_new(NULL, strings, 1, shape_keys, lens, 1, &err);
    CHECK(d, "dict_new: %s", err.message);
    tersa_writer *w = tersa_writer_new(NULL), *fresh = tersa_writer_new(NULL);
    const struct { const tersa_dict *d; int count, variety; } runs[] = {
        {NULL, 6000, 5000}, {NULL, 10, 3}, {d, 10, 3}, {NULL, 4, 4}, {d, 3000, 2500}, {d, 12, 5}, {NULL, 7, 2},
        {NULL, 3000, 3000}, {NULL, 3000, 3000}, {d, 1, 1},
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        tersa_writer_free(fresh);
        fresh = tersa_writer_new(NULL);
        bool ok = write_shapes(w, runs[r].d, runs[r].count, runs[r].variety) &&
                  write_shapes(fresh, runs[r].d, runs[r].count, runs[r].variety);
        size_t la, lb;
        const uint8_t *a = tersa_writer_data(w, &la), *b = tersa_writer_data(fresh, &lb);
        CHECK(ok && la == lb && memcmp(a, b, la) == 0, "buffer %zu of a reused writer equals a fresh writer's", r);
    }
    tersa_writer_free(w);
    tersa_writer_free(fresh);
    tersa_dict_free(d);
}

/* The dictionary builder: the same samples, given as values or as encoded
 * buffers, build the same dictionary; options and ordering as documented. */
static tersa_doc *sample_docs(void) {
    /* [{"id":"usr_1","role":"admin"}, {"id":"usr_2","role":"admin"}, {:id=>"x"}, "admin", "zz", "zz"] */
    tersa_doc *d = tersa_doc_new(NULL);
    tersa_value *root = tersa_doc_values(d, 1), *items = tersa_doc_values(d, 6);
    root->type = TERSA_ARRAY;
    root->v.array.items = items;
    root->v.array.count = 6;
    tersa_value *keys = tersa_doc_values(d, 2), *sym = tersa_doc_values(d, 1);
    keys[0] = (tersa_value){.type = TERSA_STRING, .v.str = {"id", 2}};
    keys[1] = (tersa_value){.type = TERSA_STRING, .v.str = {"role", 4}};
    sym[0] = (tersa_value){.type = TERSA_SYMBOL, .v.str = {"id", 2}};
    for (int i = 0; i < 2; i++) {
        tersa_value *vals = tersa_doc_values(d, 2);
        vals[0] = (tersa_value){.type = TERSA_STRING, .v.str = {i ? "usr_2" : "usr_1", 5}};
        vals[1] = (tersa_value){.type = TERSA_STRING, .v.str = {"admin", 5}};
        items[i] = (tersa_value){.type = TERSA_MAP, .v.map = {keys, vals, 2}};
    }
    tersa_value *sv = tersa_doc_values(d, 1);
    sv[0] = (tersa_value){.type = TERSA_STRING, .v.str = {"x", 1}};
    items[2] = (tersa_value){.type = TERSA_MAP, .v.map = {sym, sv, 1}};
    items[3] = (tersa_value){.type = TERSA_STRING, .v.str = {"admin", 5}};
    items[4] = (tersa_value){.type = TERSA_STRING, .v.str = {"zz", 2}};
    items[5] = (tersa_value){.type = TERSA_STRING, .v.str = {"zz", 2}};
    if (!tersa_doc_push(d, root)) CHECK(false, "doc_push");
    return d;
}

static void test_dict_builder(void) {
    tersa_error err;
    tersa_doc *doc = sample_docs();
    tersa_dict_builder *bv = tersa_dict_builder_new(NULL), *bb = tersa_dict_builder_new(NULL);
    tersa_writer *w = tersa_writer_new(NULL);
    const tersa_value *root = tersa_doc_root(doc, 0);
    bool ok = bv && bb && w;
    for (size_t i = 0; ok && i < root->v.array.count; i++) {
        /* Each element is a sample: as a value, and encoded as its own buffer. */
        size_t len = 0;
        const uint8_t *bytes = NULL;
        if (tersa_writer_start(w, NULL, 0) && tersa_write_value(w, &root->v.array.items[i]))
            bytes = tersa_writer_data(w, &len);
        ok = bytes && tersa_dict_builder_add_value(bv, &root->v.array.items[i]) &&
             tersa_dict_builder_add_buffer(bb, bytes, len, &err);
    }
    CHECK(ok, "add_value and add_buffer");
    CHECK(!tersa_dict_builder_add_buffer(bb, "\xC1\x70", 2, &err) && err.code == TERSA_ERR_TRUNCATED,
          "a buffer that does not decode is an error");
    tersa_dict *dv = tersa_dict_builder_finish(bv, NULL, &err), *db = tersa_dict_builder_finish(bb, NULL, &err);
    CHECK(dv && db && tersa_dict_id(dv) == tersa_dict_id(db), "values and their buffers build the same dictionary");
    /* In 2+ samples: "admin" 3x5 = 15 bytes, "zz" 2x2 = 4; usr_1, usr_2 and "x" in one. One shape in two. */
    CHECK(dv && tersa_dict_string_count(dv) == 2 && tersa_dict_string(dv, 0).len == 5 && tersa_dict_string(dv, 1).len == 2,
          "strings in two samples or more, most bytes saved first");
    size_t nk = 0;
    const tersa_key *k = dv ? tersa_dict_shape(dv, 0, &nk) : NULL;
    CHECK(dv && tersa_dict_shape_count(dv) == 1 && nk == 2 && !k[0].symbol, "the shape in two samples");
    tersa_dict *again = tersa_dict_builder_finish(bv, NULL, &err);
    CHECK(again && dv && tersa_dict_id(again) == tersa_dict_id(dv), "finishing twice gives the same dictionary");
    tersa_dict_build_options all = {1, 0, 0}, capped = {1, 3, 1};
    tersa_dict *d1 = tersa_dict_builder_finish(bv, &all, &err), *d2 = tersa_dict_builder_finish(bv, &capped, &err);
    k = d1 && tersa_dict_shape_count(d1) == 2 ? tersa_dict_shape(d1, 1, &nk) : NULL;
    CHECK(d1 && tersa_dict_string_count(d1) == 4 && k && nk == 1 && k[0].symbol,
          "min_count 1: every string of 2+ bytes, and the symbol-keyed shape as its own");
    CHECK(d2 && tersa_dict_string_count(d2) == 3 && tersa_dict_shape_count(d2) == 1, "max_strings and max_shapes cap");
    /* More samples after finishing are counted into the same totals: the
     * whole array as one more sample puts usr_1, usr_2 and the symbol shape in two. */
    CHECK(tersa_dict_builder_add_value(bv, root), "add after finish");
    tersa_dict *d3 = tersa_dict_builder_finish(bv, NULL, &err);
    CHECK(d3 && tersa_dict_string_count(d3) == 4 && tersa_dict_shape_count(d3) == 2, "counts go on after finish");
    /* Repeats inside one sample count once; a single sample keeps everything. */
    tersa_dict_builder *one = tersa_dict_builder_new(NULL);
    tersa_dict *d4 = one && tersa_dict_builder_add_value(one, root) ? tersa_dict_builder_finish(one, NULL, &err) : NULL;
    CHECK(d4 && tersa_dict_string_count(d4) == 4 && tersa_dict_shape_count(d4) == 2, "one sample: min_count 1");
    tersa_dict_build_options two = {2, 0, 0};
    tersa_dict *d5 = one ? tersa_dict_builder_finish(one, &two, &err) : NULL;
    CHECK(d5 && tersa_dict_string_count(d5) == 0 && tersa_dict_shape_count(d5) == 0,
          "repeats inside one sample count once");
    tersa_dict_free(d5);
    tersa_dict_free(d4);
    tersa_dict_builder_free(one);
    tersa_dict_free(d3);
    tersa_dict_free(d2);
    tersa_dict_free(d1);
    tersa_dict_free(again);
    tersa_dict_free(dv);
    tersa_dict_free(db);
    tersa_writer_free(w);
    tersa_dict_builder_free(bv);
    tersa_dict_builder_free(bb);
    tersa_dict_builder_free(NULL);
    tersa_doc_free(doc);
}

/* tersa_read_scalars: runs keep the slot's registers (deltas after a small
 * INT, a DEC then DEC_DELTA), stop before a non-scalar and at the array's
 * end, and report an error at the item that has it. */
static void test_scalar_runs(void) {
    /* [5, +10, -2, null, 1.5, +1, "ab", 7, [], true] : INT 5, INT_DELTA 10,
     * INT_DELTA -2, null, DEC 15e-1, DEC_DELTA +1, "ab", INT 7, [], true */
    static const uint8_t good[] = {0xC1, 0x70, 0x10, 0x8A, 0xAD, 0xE7, 0x29, 0xE7, 0x07, 0xE0,
                                   0xDB, 0x3D, 0xE9, 0x05, 0x42, 'a',  'b',  0xAF, 0x80, 0xE2};
    tersa_reader *r = tersa_reader_new(NULL);
    tersa_item it, items[16];
    size_t k = 99;
    CHECK(tersa_reader_start(r, good, sizeof good, NULL, 0, 0), "start");
    CHECK(tersa_read_scalars(r, items, 16, &k) && k == 0, "no run outside an array (%zu)", k);
    CHECK(tersa_read(r, &it) && it.type == TERSA_ARRAY && it.v.array.count == 10, "the array");
    CHECK(it.flags & TERSA_ITEM_SCALARS, "an array starting with a number is flagged");
    CHECK(tersa_read_scalars(r, items, 2, &k) && k == 2, "a run stops at max (%zu)", k);
    CHECK(items[0].type == TERSA_INT && items[0].v.i == 5 && items[1].v.i == 15, "5, 15");
    CHECK(tersa_read_scalars(r, items, 16, &k) && k == 4, "a run stops before a string (%zu)", k);
    CHECK(items[0].type == TERSA_INT && items[0].v.i == 13 && items[1].type == TERSA_NULL, "13, null");
    CHECK(items[2].type == TERSA_FLOAT && items[2].v.f == 1.5 && items[3].v.f == 1.6, "1.5, 1.6");
    CHECK(items[3].offset == 12 && items[3].tag == 0xE9, "offset and tag of the DEC_DELTA");
    CHECK(tersa_read(r, &it) && it.type == TERSA_STRING, "the string");
    CHECK(tersa_read_scalars(r, items, 16, &k) && k == 1 && items[0].v.i == 7, "7 (%zu)", k);
    CHECK(tersa_read(r, &it) && it.type == TERSA_ARRAY && it.v.array.count == 0 && !(it.flags & TERSA_ITEM_SCALARS),
          "the empty array, not flagged");
    CHECK(tersa_read_scalars(r, items, 16, &k) && k == 1 && items[0].type == TERSA_TRUE, "true (%zu)", k);
    CHECK(tersa_reader_finish(r), "the value is complete");
    check_scalar_runs("test_scalar_runs", good, sizeof good, NULL, 0);

    /* [1, DEC_DELTA] : a decimal delta without a decimal fails at offset 5. */
    static const uint8_t bad[] = {0xC1, 0x70, 0x10, 0x82, 0xA9, 0xE9, 0x05};
    CHECK(tersa_reader_start(r, bad, sizeof bad, NULL, 0, 0) && tersa_read(r, &it), "start");
    CHECK(!tersa_read_scalars(r, items, 16, &k) && k == 1 && items[0].v.i == 1, "one item before the error (%zu)", k);
    CHECK(tersa_reader_error(r)->code == TERSA_ERR_BAD_REFERENCE && tersa_reader_error(r)->offset == 5,
          "bad_reference at 5, got %s at %zu", tersa_code_name(tersa_reader_error(r)->code),
          tersa_reader_error(r)->offset);
    check_scalar_runs("test_scalar_runs bad", bad, sizeof bad, NULL, 0);
    tersa_reader_free(r);
}

/* One random float of the kinds whose forms differ: short decimals, long
 * ones, binary32 values, integers, zeros, infinities and NaN. */
static double random_float(test_rng *g) {
    switch (rng_below(g, 8)) {
    case 0: return (double)(int64_t)rng_below(g, 200000) / 100.0 - 1000.0;
    case 1: return (double)(rng_next(g) >> 11) * 0x1p-53 * 1e3;
    case 2: return (double)(float)((double)(rng_next(g) >> 40) * 0x1p-12);
    case 3: return (double)(int64_t)rng_below(g, 100);
    case 4: return rng_below(g, 2) ? 0.0 : -0.0;
    case 5: return rng_below(g, 2) ? 1.0 / 0.0 : -1.0 / 0.0;
    case 6: return 0.0 / 0.0;
    default: return (double)(int64_t)rng_below(g, 1000000) * 1e-6;
    }
}

/* Write the same random document with the general calls (batch false) and
 * with tersa_write_double_array for its float arrays (batch true): float
 * arrays at the top, in arrays, as shaped-map values, after integers, and as
 * generic-map keys and values; `max_depth` so that some arrays exceed it. */
static bool write_float_doc(tersa_writer *w, uint64_t seed, bool batch, uint32_t max_depth) {
    test_rng g = {seed};
    double v[40];
    tersa_writer_set_max_depth(w, max_depth);
    if (!tersa_writer_start(w, NULL, 0)) return false;
    size_t groups = 1 + rng_below(&g, 6);
    static const tersa_key keys[2] = {{"xs", 2, false}, {"n", 1, false}};
    bool ok = tersa_write_array_begin(w, groups);
    for (size_t k = 0; ok && k < groups; k++) {
        size_t kind = rng_below(&g, 4), n = rng_below(&g, 4) ? rng_below(&g, 5) : rng_below(&g, 40);
        for (size_t i = 0; i < n; i++) v[i] = random_float(&g);
        size_t ints = rng_below(&g, 3);
        if (kind == 1) ok = tersa_write_map_begin(w, keys, 2);
        if (kind == 2) ok = tersa_write_generic_map_begin(w, 1);
        if (kind == 3) ok = tersa_write_array_begin(w, ints + 1);
        for (size_t i = 0; ok && kind == 3 && i < ints; i++) ok = tersa_write_int(w, (int64_t)rng_below(&g, 1000));
        for (int twice = 0; ok && twice < (kind == 2 ? 2 : 1); twice++) { /* a generic map: as key, then value */
            if (batch) {
                ok = tersa_write_double_array(w, v, n);
            } else {
                ok = tersa_write_array_begin(w, n);
                for (size_t i = 0; ok && i < n; i++) ok = tersa_write_double(w, v[i]);
                ok = ok && tersa_write_array_end(w);
            }
        }
        if (ok && kind == 1) ok = tersa_write_int(w, (int64_t)n) && tersa_write_map_end(w);
        if (ok && kind == 2) ok = tersa_write_map_end(w);
        if (ok && kind == 3) ok = tersa_write_array_end(w);
    }
    return ok && tersa_write_array_end(w);
}

/* Writes seeds 1..3000 of a random document with the general calls (batch
 * false) and with the call under test (batch true), every seventh with a
 * depth limit of 2; returns how many differ (bytes, or the error code of a
 * failure). *failures counts the documents that failed, *long_docs those of
 * more than 2,000 bytes. */
typedef bool (*doc_writer)(tersa_writer *w, uint64_t seed, bool batch, uint32_t max_depth);
static size_t differ_two_ways(doc_writer write_doc, size_t *failures, size_t *long_docs) {
    tersa_writer *a = tersa_writer_new(NULL), *b = tersa_writer_new(NULL);
    size_t differ = 0;
    *failures = *long_docs = 0;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        uint32_t depth = seed % 7 == 0 ? 2 : 1000;
        bool oa = write_doc(a, seed, false, depth), ob = write_doc(b, seed, true, depth);
        size_t la, lb;
        const uint8_t *da = tersa_writer_data(a, &la), *db = tersa_writer_data(b, &lb);
        if (!oa) ++*failures;
        if (oa && la > 2000) ++*long_docs;
        if (oa != ob || (oa && (la != lb || memcmp(da, db, la) != 0)) ||
            (!oa && tersa_writer_error(a)->code != tersa_writer_error(b)->code))
            differ++;
    }
    tersa_writer_free(a);
    tersa_writer_free(b);
    return differ;
}

/* tersa_write_double_array writes what the general calls write, and fails
 * where they fail (the depth limit, NULL values with n = 0 included). */
static void test_double_array(void) {
    size_t failures, long_docs, differ = differ_two_ways(write_float_doc, &failures, &long_docs);
    tersa_writer *a = tersa_writer_new(NULL);
    CHECK(differ == 0, "%zu of 3000 documents differ between tersa_write_double_array and the general calls", differ);
    CHECK(failures > 0 && failures < 1000, "some documents hit the depth limit (%zu)", failures);
    CHECK(tersa_writer_start(a, NULL, 0) && tersa_write_double_array(a, NULL, 0), "an empty array from NULL");
    size_t len;
    const uint8_t *d = tersa_writer_data(a, &len);
    CHECK(len == 4 && d[3] == 0x80, "an empty array is ARR0 (%zu bytes)", len);
    /* Binary floats after k decimals, in arrays of every length to 40: the
     * slot turns trusted, writes runs in one batch from 8 floats left and
     * retests every BIN_RETEST - BIN_TRUSTED of them. */
    tersa_writer *b = tersa_writer_new(NULL);
    test_rng g = {77};
    size_t batch_differ = 0;
    for (size_t k = 0; k < 3; k++) {
        for (size_t n = 0; n <= 40; n++) {
            double v[43];
            for (size_t i = 0; i < k; i++) v[i] = (double)(i + 1) / 4;
            for (size_t i = k; i < k + n; i++)
                v[i] = (i % 5 == 4) ? (double)(int64_t)rng_below(&g, 1000) / 100.0 /* a decimal: the retest finds it */
                                    : (double)(rng_next(&g) >> 11) * 0x1p-53 * ((i % 3) ? 1e3 : 1.0 / 3);
            bool oa = tersa_writer_start(a, NULL, 0) && tersa_write_array_begin(a, 2) &&
                      tersa_write_double_array(a, v, k + n) && tersa_write_double_array(a, v, k + n) &&
                      tersa_write_array_end(a);
            bool ob = tersa_writer_start(b, NULL, 0) && tersa_write_array_begin(b, 2);
            for (int twice = 0; twice < 2 && ob; twice++) {
                ob = tersa_write_array_begin(b, k + n);
                for (size_t i = 0; ob && i < k + n; i++) ob = tersa_write_double(b, v[i]);
                ob = ob && tersa_write_array_end(b);
            }
            ob = ob && tersa_write_array_end(b);
            size_t la, lb;
            const uint8_t *da = tersa_writer_data(a, &la), *db = tersa_writer_data(b, &lb);
            if (!oa || !ob || la != lb || memcmp(da, db, la) != 0) batch_differ++;
        }
    }
    CHECK(batch_differ == 0, "%zu arrays of binary floats differ between tersa_write_double_array and the general calls",
          batch_differ);
    tersa_writer_free(b);
    tersa_writer_free(a);
}

/* A random string for write_string_doc: from a small pool (references,
 * shared prefixes, timestamps and strings that look like them), or random
 * bytes of 0-80 (all but the last kept ASCII so that it stays valid UTF-8). */
static size_t random_string(test_rng *g, char *buf) {
    static const char *const pool[] = {"a", "", "ab", "abc", "abcdefgh", "abcdefghij-klm", "2024-01-02T03:04:05Z",
                                       "2024-01-02T03:04:06.5+01:00", "2024-13-02T03:04:05Z", "2024-01-02",
                                       "https://example.com/items/1", "https://example.com/items/22", "caf\xc3\xa9"};
    if (rng_below(g, 2)) {
        const char *p = pool[rng_below(g, sizeof pool / sizeof pool[0])];
        size_t n = strlen(p);
        memcpy(buf, p, n);
        return n;
    }
    size_t n = rng_below(g, 4) ? rng_below(g, 12) : rng_below(g, 81);
    for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + rng_below(g, 3));
    return n;
}

/* Write the same random document with the general calls (batch false) and
 * with tersa_write_string_array for its string arrays (batch true): at the
 * top, in arrays, as shaped-map values, after integers, as generic-map keys
 * and values, longer than one block of lookups; `max_depth` so that some
 * arrays exceed it. */
static bool write_string_doc(tersa_writer *w, uint64_t seed, bool batch, uint32_t max_depth) {
    test_rng g = {seed};
    static char bytes[150][81];
    const char *ptrs[150];
    size_t lens[150];
    tersa_writer_set_max_depth(w, max_depth);
    if (!tersa_writer_start(w, NULL, 0)) return false;
    size_t groups = 1 + rng_below(&g, 6);
    static const tersa_key keys[2] = {{"xs", 2, false}, {"n", 1, false}};
    bool ok = tersa_write_array_begin(w, groups);
    for (size_t k = 0; ok && k < groups; k++) {
        size_t kind = rng_below(&g, 4), n = rng_below(&g, 4) ? rng_below(&g, 6) : rng_below(&g, 150);
        for (size_t i = 0; i < n; i++) {
            ptrs[i] = bytes[i];
            lens[i] = random_string(&g, bytes[i]);
        }
        size_t ints = rng_below(&g, 3);
        if (kind == 1) ok = tersa_write_map_begin(w, keys, 2);
        if (kind == 2) ok = tersa_write_generic_map_begin(w, 1);
        if (kind == 3) ok = tersa_write_array_begin(w, ints + 1);
        for (size_t i = 0; ok && kind == 3 && i < ints; i++) ok = tersa_write_int(w, (int64_t)rng_below(&g, 1000));
        for (int twice = 0; ok && twice < (kind == 2 ? 2 : 1); twice++) { /* a generic map: as key, then value */
            if (batch) {
                ok = tersa_write_string_array(w, ptrs, lens, n);
            } else {
                ok = tersa_write_array_begin(w, n);
                for (size_t i = 0; ok && i < n; i++) ok = tersa_write_string_utf8(w, ptrs[i], lens[i]);
                ok = ok && tersa_write_array_end(w);
            }
        }
        if (ok && kind == 1) ok = tersa_write_int(w, (int64_t)n) && tersa_write_map_end(w);
        if (ok && kind == 2) ok = tersa_write_map_end(w);
        if (ok && kind == 3) ok = tersa_write_array_end(w);
    }
    return ok && tersa_write_array_end(w);
}

/* tersa_write_string_array writes what the general calls write, and fails
 * where they fail (the depth limit, NULL arrays with n = 0 included). */
static void test_string_array(void) {
    size_t failures, long_arrays, differ = differ_two_ways(write_string_doc, &failures, &long_arrays);
    tersa_writer *a = tersa_writer_new(NULL);
    CHECK(differ == 0, "%zu of 3000 documents differ between tersa_write_string_array and the general calls", differ);
    CHECK(failures > 0 && failures < 1000, "some documents hit the depth limit (%zu)", failures);
    CHECK(long_arrays > 0, "some documents hold arrays longer than a block (%zu)", long_arrays);
    CHECK(tersa_writer_start(a, NULL, 0) && tersa_write_string_array(a, NULL, NULL, 0), "an empty array from NULL");
    size_t len;
    const uint8_t *d = tersa_writer_data(a, &len);
    CHECK(len == 4 && d[3] == 0x80, "an empty array is ARR0 (%zu bytes)", len);
    tersa_writer_free(a);
}

/* Write the same random document item by item (batch false) and with
 * tersa_write_doubles and tersa_write_ints for runs of numbers (batch true):
 * runs inside arrays (all of an array's elements or some, after a string),
 * as shaped-map values and generic-map keys and values (where they are
 * written item by item), at the top level, and runs longer than the array
 * has room for; `max_depth` so that some arrays exceed it. */
static bool write_number_doc(tersa_writer *w, uint64_t seed, bool batch, uint32_t max_depth) {
    test_rng g = {seed};
    double v[40];
    int64_t iv[40];
    tersa_writer_set_max_depth(w, max_depth);
    if (!tersa_writer_start(w, NULL, 0)) return false;
    if (seed % 11 == 0) { /* a top-level run of one */
        iv[0] = (int64_t)rng_next(&g);
        return batch ? tersa_write_ints(w, iv, 1) : tersa_write_int(w, iv[0]);
    }
    size_t groups = 1 + rng_below(&g, 6);
    static const tersa_key keys[2] = {{"a", 1, false}, {"b", 1, false}};
    bool ok = tersa_write_array_begin(w, groups);
    for (size_t k = 0; ok && k < groups; k++) {
        size_t kind = rng_below(&g, 4), n = rng_below(&g, 4) ? rng_below(&g, 5) : rng_below(&g, 40);
        bool floats = rng_below(&g, 2);
        for (size_t i = 0; i < 40; i++) {
            v[i] = random_float(&g);
            uint64_t r = rng_next(&g);
            /* ids counting up (written as deltas), large and small values */
            iv[i] = seed % 3 == 0 ? (int64_t)(seed << 30) + (int64_t)i * 7
                    : r % 3 == 0 ? (int64_t)(r >> 3) : (int64_t)(r % 2000) - 1000;
        }
        size_t lead = kind == 0 ? rng_below(&g, 2) : 0;       /* a string before the run */
        size_t room = n + lead - (n && rng_below(&g, 9) == 0); /* sometimes one too few */
        if (kind == 0) ok = tersa_write_array_begin(w, room);
        if (kind == 1) ok = tersa_write_map_begin(w, keys, 2);
        if (kind == 2) ok = tersa_write_generic_map_begin(w, 1);
        if (kind == 3) ok = tersa_write_array_begin(w, 1) && tersa_write_array_begin(w, n);
        if (ok && lead) ok = tersa_write_string_utf8(w, "xy", 2);
        size_t count = kind == 1 || kind == 2 ? 2 : n;
        if (kind == 1 || kind == 2) n = 2;
        if (ok && batch) {
            ok = floats ? tersa_write_doubles(w, v, count) : tersa_write_ints(w, iv, count);
        } else {
            for (size_t i = 0; ok && i < count; i++) ok = floats ? tersa_write_double(w, v[i]) : tersa_write_int(w, iv[i]);
        }
        if (ok && kind == 0) ok = tersa_write_array_end(w);
        if (ok && kind == 1) ok = tersa_write_map_end(w);
        if (ok && kind == 2) ok = tersa_write_map_end(w);
        if (ok && kind == 3) ok = tersa_write_array_end(w) && tersa_write_array_end(w);
    }
    return ok && tersa_write_array_end(w);
}

/* tersa_write_doubles and tersa_write_ints write what the general calls
 * write, and fail where they fail (too many items, the depth limit). */
static void test_number_runs(void) {
    size_t failures, long_docs, differ = differ_two_ways(write_number_doc, &failures, &long_docs);
    CHECK(differ == 0, "%zu of 3000 documents differ between the run writers and the general calls", differ);
    CHECK(failures > 0 && failures < 1500, "some documents fail (%zu)", failures);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_allocation_failures();
    test_writer_misuse();
    test_reader();
    test_scalar_runs();
    test_double_array();
    test_string_array();
    test_number_runs();
    test_dictionaries();
    test_stream_scan();
    test_feed();
    test_sync_and_join();
    test_discard_output();
    test_dictionary_reuse();
    test_shape_handles();
    test_last_defined_shape();
    test_long_key_shared_by_shapes();
    test_shape_index_reuse();
    test_dict_builder();
    test_misc();
    return test_summary("test_api");
}
