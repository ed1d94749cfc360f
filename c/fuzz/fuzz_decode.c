/*
 * fuzz_decode.c - libFuzzer target.
 *
 * For any input: decoding (as a single value, or as a stream when the header
 * says so) must not crash, read out of bounds, leak, or allocate more than a
 * bounded multiple of the input. When it succeeds, encoding the result and
 * decoding that must give an equal value, and encoding is idempotent. The
 * pull reader is also driven on its own (skip), which must agree with the
 * tree decoder on success or failure. A stream is also fed frame by frame, as
 * feed-style bindings do (each frame from a buffer that dies before the next),
 * which must end exactly as the whole-buffer read does, error code and offset
 * included; and its frames are read by a joining reader from every frame
 * boundary, which must decode a tail of the whole stream's values or fail.
 */
#include "counting_alloc.h"
#include "tersa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tersa_dict *dictionary;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* The "users" dictionary of spec/vectors, so dictionary paths are reachable. */
    tersa_key strings[4] = {{"admin", 5, false}, {"user", 4, false}, {"en-US", 5, false}, {"usr_", 4, false}};
    tersa_key keys[5] = {{"id", 2, false}, {"name", 4, false}, {"role", 4, false}, {"id", 2, true}, {"name", 4, true}};
    size_t lens[2] = {3, 2};
    tersa_error err;
    dictionary = tersa_dict_new(NULL, strings, 4, keys, lens, 2, &err);
    if (!dictionary) abort();
    return 0;
}

/* Whether a generic map somewhere in v has two equal container keys: SPEC 1
 * lets decoders accept those (hosts compare container keys themselves), while
 * the writer refuses to write them. */
static bool equal_container_keys(const tersa_value *v) {
    if (v->type == TERSA_ARRAY) {
        for (size_t i = 0; i < v->v.array.count; i++)
            if (equal_container_keys(&v->v.array.items[i])) return true;
        return false;
    }
    if (v->type != TERSA_MAP && v->type != TERSA_GENERIC_MAP) return false;
    for (size_t i = 0; i < v->v.map.count; i++) {
        if (equal_container_keys(&v->v.map.values[i])) return true;
        if (v->type != TERSA_GENERIC_MAP) continue;
        const tersa_value *k = &v->v.map.keys[i];
        if (equal_container_keys(k)) return true;
        if (k->type != TERSA_ARRAY && k->type != TERSA_MAP && k->type != TERSA_GENERIC_MAP) continue;
        for (size_t j = 0; j < i; j++)
            if (tersa_value_equal(k, &v->v.map.keys[j])) return true;
    }
    return false;
}

static bool doc_has_equal_container_keys(const tersa_doc *doc) {
    for (size_t i = 0; i < tersa_doc_count(doc); i++)
        if (equal_container_keys(tersa_doc_root(doc, i))) return true;
    return false;
}

static uint8_t *encode_doc(const tersa_doc *doc, bool stream, const tersa_dict *dict, size_t *len) {
    tersa_writer *w = tersa_writer_new(NULL);
    if (!w) abort();
    bool ok = tersa_writer_start(w, dict, stream ? TERSA_WRITE_STREAM : 0);
    for (size_t i = 0; ok && i < tersa_doc_count(doc); i++) {
        if (stream) ok = tersa_write_frame_begin(w);
        ok = ok && tersa_write_value(w, tersa_doc_root(doc, i));
        if (stream) ok = ok && tersa_write_frame_end(w);
    }
    if (!ok) {
        fprintf(stderr, "re-encoding a decoded value failed: %s\n", tersa_writer_error(w)->message);
        abort();
    }
    const uint8_t *out = tersa_writer_data(w, len);
    uint8_t *copy = (uint8_t *)malloc(*len ? *len : 1);
    memcpy(copy, out, *len);
    tersa_writer_free(w);
    return copy;
}

static bool docs_equal(const tersa_doc *a, const tersa_doc *b) {
    if (tersa_doc_count(a) != tersa_doc_count(b)) return false;
    for (size_t i = 0; i < tersa_doc_count(a); i++)
        if (!tersa_value_equal(tersa_doc_root(a, i), tersa_doc_root(b, i))) return false;
    return true;
}

/* Drive the pull reader alone; true if the whole buffer decodes, else *err. */
static bool pull_only(const uint8_t *data, size_t size, bool stream, const tersa_dict *const *dicts,
                      tersa_error *err) {
    tersa_reader *r = tersa_reader_new(NULL);
    if (!r) abort();
    bool ok = tersa_reader_start(r, data, size, dicts, 1, stream ? TERSA_READ_STREAM : 0);
    if (ok && stream) {
        bool more = true;
        while (ok && (ok = tersa_reader_frame_begin(r, &more)) && more)
            ok = tersa_skip(r) && tersa_reader_frame_end(r);
    } else if (ok) {
        ok = tersa_skip(r) && tersa_reader_finish(r);
    }
    if (!ok) *err = *tersa_reader_error(r);
    tersa_reader_free(r);
    return ok;
}

/* What a whole-buffer reader says about input that ends inside the frame
 * that starts at `at`: the varint itself is cut (truncated) or its length
 * claims more than remains. */
static void cut_short(const uint8_t *data, size_t size, size_t at, tersa_error *err) {
    err->offset = at;
    unsigned n = data[at] ? (unsigned)__builtin_ctz(data[at]) + 1 : 9;
    err->code = size - at < n ? TERSA_ERR_TRUNCATED : TERSA_ERR_LENGTH_EXCEEDS_INPUT;
}

/* A stream fed frame by frame from `start` (0: with its header; else a joining
 * reader at a frame boundary). Returns whether it decoded; *values counts the
 * values read, *joined the joining reader's start (SIZE_MAX if none). */
static bool fed(const uint8_t *data, size_t size, size_t start, const tersa_dict *const *dicts, tersa_error *err,
                size_t *values, size_t *joined) {
    tersa_reader *r = tersa_reader_new(NULL);
    if (!r) abort();
    size_t pos = start, piece;
    bool ok = true;
    *values = 0;
    *joined = SIZE_MAX;
    if (start == 0) {
        tersa_scan sc = tersa_stream_scan(data, size, true, &piece, err);
        if (sc == TERSA_SCAN_NEED_MORE) {
            /* All there is of the header: a binding checks it when the input ends. */
            tersa_reader_start(r, data, size, dicts, 1, TERSA_READ_STREAM);
            *err = *tersa_reader_error(r);
            tersa_reader_free(r);
            return false;
        }
        if (sc != TERSA_SCAN_READY) {
            tersa_reader_free(r);
            return false;
        }
        ok = tersa_reader_start(r, data, piece, dicts, 1, TERSA_READ_STREAM);
        pos = piece;
    } else {
        ok = tersa_reader_start(r, "", 0, dicts, 1, TERSA_READ_JOIN);
    }
    while (ok && pos < size) {
        tersa_scan sc = tersa_stream_scan(data + pos, size - pos, false, &piece, err);
        if (sc != TERSA_SCAN_READY) {
            if (sc == TERSA_SCAN_NEED_MORE) cut_short(data, size, pos, err);
            else err->offset += pos - start;
            tersa_reader_free(r);
            return false;
        }
        uint8_t *frame = (uint8_t *)malloc(piece);
        memcpy(frame, data + pos, piece);
        bool has_value = false;
        ok = tersa_reader_feed_frame(r, frame, piece, pos - start, &has_value);
        if (ok && has_value) {
            ok = tersa_skip(r) && tersa_reader_frame_end(r);
            ++*values;
        }
        memset(frame, 0xEE, piece);
        free(frame);
        pos += piece;
    }
    if (!ok) *err = *tersa_reader_error(r);
    tersa_reader_joined(r, joined);
    tersa_reader_free(r);
    return ok;
}

static void check_error(const tersa_error *err, size_t size) {
    if (err->code < TERSA_ERR_TRUNCATED || err->code > TERSA_ERR_BAD_SYNC || err->offset > size) {
        fprintf(stderr, "bad error %s at %zu\n", tersa_code_name(err->code), err->offset);
        abort();
    }
}

/* Feed-style and joining reads of a stream agree with the whole-buffer read. */
static void check_stream_paths(const uint8_t *data, size_t size, const tersa_dict *const *dicts, const tersa_doc *doc,
                               const tersa_error *whole_err) {
    tersa_error err = {TERSA_OK, 0, NULL};
    size_t values, joined;
    bool ok = fed(data, size, 0, dicts, &err, &values, &joined);
    if (ok != (doc != NULL) || (doc && values != tersa_doc_count(doc)) ||
        (!ok && (err.code != whole_err->code || err.offset != whole_err->offset))) {
        fprintf(stderr, "fed stream: %s@%zu, whole: %s@%zu\n", ok ? "ok" : tersa_code_name(err.code), err.offset,
                doc ? "ok" : tersa_code_name(whole_err->code), whole_err->offset);
        abort();
    }
    if (!doc) return;
    /* Every frame boundary of a valid stream: a joining reader decodes a tail. */
    size_t hdr = (size >= 3 && (data[2] & 0x01)) ? 11 : 3, pos = hdr, k = 0;
    while (pos <= size && k <= tersa_doc_count(doc)) {
        size_t tail = size - pos;
        tersa_decode_options jo = {dicts, 1, 0, false, true};
        tersa_doc *j = tersa_decode(NULL, tail ? data + pos : (const uint8_t *)"", tail, &jo, &err);
        size_t n = tersa_doc_count(doc), got = j ? tersa_doc_count(j) : 0;
        bool tail_ok = j && got <= n - k;
        for (size_t i = 0; tail_ok && i < got; i++)
            tail_ok = tersa_value_equal(tersa_doc_root(j, i), tersa_doc_root(doc, n - got + i));
        if (!tail_ok || (k == 0 && got != n)) {
            fprintf(stderr, "join at frame %zu: %s\n", k, j ? "not a tail of the stream" : tersa_code_name(err.code));
            abort();
        }
        bool fok = fed(data, size, pos, dicts, &err, &values, &joined) || tail == 0;
        (void)joined;
        if (tail && (!fok || values != got)) {
            fprintf(stderr, "fed join at frame %zu disagrees\n", k);
            abort();
        }
        tersa_doc_free(j);
        if (pos == size) break;
        size_t piece;
        if (tersa_stream_scan(data + pos, size - pos, false, &piece, &err) != TERSA_SCAN_READY) abort();
        pos += piece;
        k++;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bool stream = size >= 3 && (data[2] & 0x02);
    const tersa_dict *dicts[1] = {dictionary};
    tersa_decode_options opts = {dicts, 1, 0, stream, false};
    counting cnt = {0, 0};
    tersa_alloc alloc = counting_alloc(&cnt);
    tersa_error err;
    tersa_doc *doc = tersa_decode(&alloc, data, size, &opts, &err);
    tersa_error pull_err = {TERSA_OK, 0, NULL};
    bool pulled = pull_only(data, size, stream, dicts, &pull_err);
    if (pulled != (doc != NULL) || (!doc && (pull_err.code != err.code || pull_err.offset != err.offset))) {
        fprintf(stderr, "pull reader and tree decoder disagree (%s)\n", doc ? "tree ok" : tersa_code_name(err.code));
        abort();
    }
    /* Bound: strings a decoder builds grow at most 64x (SPEC 9), plus tree
     * nodes and tables; arena chunks start at 4 KiB. */
    if (cnt.peak > 256 * size + (1u << 17)) {
        fprintf(stderr, "peak allocation %zu bytes for %zu input bytes\n", cnt.peak, size);
        abort();
    }
    if (!doc) check_error(&err, size);
    if (stream) check_stream_paths(data, size, dicts, doc, &err);
    if (!doc) return 0;
    const tersa_dict *dict = (size >= 3 && (data[2] & 0x01)) ? dictionary : NULL;
    if (doc_has_equal_container_keys(doc)) { /* decodable, but not a value the writer may write */
        tersa_doc_free(doc);
        return 0;
    }
    size_t len1, len2;
    uint8_t *once = encode_doc(doc, stream, dict, &len1);
    tersa_doc *again = tersa_decode(NULL, once, len1, &opts, &err);
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
    tersa_doc_free(again);
    tersa_doc_free(doc);
    if (cnt.live != 0) {
        fprintf(stderr, "leaked %zu bytes\n", cnt.live);
        abort();
    }
    return 0;
}
