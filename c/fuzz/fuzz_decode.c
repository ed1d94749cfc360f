/*
 * fuzz_decode.c - libFuzzer target.
 *
 * For any input: decoding (as a single value, or as a stream when the header
 * says so) must not crash, read out of bounds, leak, or allocate more than a
 * bounded multiple of the input. When it succeeds, encoding the result and
 * decoding that must give an equal value, and encoding is idempotent. The
 * pull reader is also driven on its own (skip), which must agree with the
 * tree decoder on success or failure.
 */
#include "pith.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct counting {
    size_t live, peak;
} counting;

static void *c_malloc(void *ctx, size_t n) {
    counting *c = (counting *)ctx;
    c->live += n;
    if (c->live > c->peak) c->peak = c->live;
    return malloc(n);
}
static void *c_realloc(void *ctx, void *p, size_t o, size_t n) {
    counting *c = (counting *)ctx;
    c->live += n - o;
    if (c->live > c->peak) c->peak = c->live;
    return realloc(p, n);
}
static void c_free(void *ctx, void *p, size_t n) {
    counting *c = (counting *)ctx;
    c->live -= n;
    free(p);
}

static pith_dict *dictionary;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* The "users" dictionary of spec/vectors, so dictionary paths are reachable. */
    pith_key strings[4] = {{"admin", 5, false}, {"user", 4, false}, {"en-US", 5, false}, {"usr_", 4, false}};
    pith_key keys[5] = {{"id", 2, false}, {"name", 4, false}, {"role", 4, false}, {"id", 2, true}, {"name", 4, true}};
    size_t lens[2] = {3, 2};
    pith_error err;
    dictionary = pith_dict_new(NULL, strings, 4, keys, lens, 2, &err);
    if (!dictionary) abort();
    return 0;
}

static uint8_t *encode_doc(const pith_doc *doc, bool stream, const pith_dict *dict, size_t *len) {
    pith_writer *w = pith_writer_new(NULL);
    if (!w) abort();
    bool ok = pith_writer_start(w, dict, stream ? PITH_WRITE_STREAM : 0);
    for (size_t i = 0; ok && i < pith_doc_count(doc); i++) {
        if (stream) ok = pith_write_frame_begin(w);
        ok = ok && pith_write_value(w, pith_doc_root(doc, i));
        if (stream) ok = ok && pith_write_frame_end(w);
    }
    if (!ok) {
        fprintf(stderr, "re-encoding a decoded value failed: %s\n", pith_writer_error(w)->message);
        abort();
    }
    const uint8_t *out = pith_writer_data(w, len);
    uint8_t *copy = (uint8_t *)malloc(*len ? *len : 1);
    memcpy(copy, out, *len);
    pith_writer_free(w);
    return copy;
}

static bool docs_equal(const pith_doc *a, const pith_doc *b) {
    if (pith_doc_count(a) != pith_doc_count(b)) return false;
    for (size_t i = 0; i < pith_doc_count(a); i++)
        if (!pith_value_equal(pith_doc_root(a, i), pith_doc_root(b, i))) return false;
    return true;
}

/* Drive the pull reader alone; true if the whole buffer decodes. */
static bool pull_only(const uint8_t *data, size_t size, bool stream, const pith_dict *const *dicts) {
    pith_reader *r = pith_reader_new(NULL);
    if (!r) abort();
    bool ok = pith_reader_start(r, data, size, dicts, 1, stream ? PITH_READ_STREAM : 0);
    if (ok && stream) {
        bool more = true;
        while (ok && (ok = pith_reader_frame_begin(r, &more)) && more)
            ok = pith_skip(r) && pith_reader_frame_end(r);
    } else if (ok) {
        ok = pith_skip(r) && pith_reader_finish(r);
    }
    pith_reader_free(r);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bool stream = size >= 3 && (data[2] & 0x02);
    const pith_dict *dicts[1] = {dictionary};
    pith_decode_options opts = {dicts, 1, 0, stream, false};
    counting cnt = {0, 0};
    pith_alloc alloc = {c_malloc, c_realloc, c_free, &cnt};
    pith_error err;
    pith_doc *doc = pith_decode(&alloc, data, size, &opts, &err);
    bool pulled = pull_only(data, size, stream, dicts);
    if (pulled != (doc != NULL)) {
        fprintf(stderr, "pull reader and tree decoder disagree (%s)\n", doc ? "tree ok" : pith_code_name(err.code));
        abort();
    }
    /* Bound: strings a decoder builds grow at most 64x (SPEC 9), plus tree
     * nodes and tables; arena chunks start at 4 KiB. */
    if (cnt.peak > 256 * size + (1u << 17)) {
        fprintf(stderr, "peak allocation %zu bytes for %zu input bytes\n", cnt.peak, size);
        abort();
    }
    if (!doc) {
        if (err.code < PITH_ERR_TRUNCATED || err.code > PITH_ERR_UNKNOWN_DICTIONARY || err.offset > size) {
            fprintf(stderr, "bad error %s at %zu\n", pith_code_name(err.code), err.offset);
            abort();
        }
        return 0;
    }
    const pith_dict *dict = (size >= 3 && (data[2] & 0x01)) ? dictionary : NULL;
    size_t len1, len2;
    uint8_t *once = encode_doc(doc, stream, dict, &len1);
    pith_doc *again = pith_decode(NULL, once, len1, &opts, &err);
    if (!again || !docs_equal(doc, again)) {
        fprintf(stderr, "decode -> encode -> decode disagrees\n");
        abort();
    }
    uint8_t *twice = encode_doc(again, stream, dict, &len2);
    if (len1 != len2 || memcmp(once, twice, len1) != 0) {
        fprintf(stderr, "encoding is not idempotent\n");
        abort();
    }
    free(once);
    free(twice);
    pith_doc_free(again);
    pith_doc_free(doc);
    if (cnt.live != 0) {
        fprintf(stderr, "leaked %zu bytes\n", cnt.live);
        abort();
    }
    return 0;
}
