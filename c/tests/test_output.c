/*
 * test_output.c - caller-supplied output memory (tersa_writer_set_output):
 * the same bytes as the writer's own buffer, blocks handed over or released
 * exactly once, and every failure of the caller's grow leaving nothing held.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* A caller's output: blocks from malloc/realloc, counted; `fail_at` grows
 * (counting from 1) fail, 0 never. */
typedef struct outbox {
    long grows, fail_at;
    long live;       /* blocks allocated and neither released nor taken */
    long released;
    size_t slack;    /* extra bytes given beyond `need` */
    size_t first;    /* a first block's size when that is at least `need` (0: need + slack) */
    bool old_first;  /* the first grow of an output saw old == NULL */
} outbox;

static uint8_t *ob_grow(void *ctx, uint8_t *old, size_t len, size_t need, size_t *cap) {
    outbox *o = (outbox *)ctx;
    if (++o->grows == o->fail_at) return NULL; /* like realloc: old stays valid, released later */
    if (!old) o->old_first = true;
    CHECK(len < need, "grow asked for no more room (%zu of %zu)", len, need);
    size_t size = !old && o->first >= need ? o->first : need + o->slack;
    uint8_t *p = (uint8_t *)realloc(old, size);
    if (!p) return NULL;
    if (!old) o->live++;
    *cap = size;
    return p;
}

static void ob_release(void *ctx, uint8_t *block) {
    outbox *o = (outbox *)ctx;
    o->live--;
    o->released++;
    free(block);
}

/* Strings of every length up to 600 bytes, repeated (references), in an array. */
static bool write_strings(tersa_writer *w, int n) {
    static char text[600 + 7];
    for (size_t i = 0; i < sizeof text; i++) text[i] = (char)('a' + i % 26);
    bool ok = tersa_write_array_begin(w, (size_t)n);
    for (int i = 0; ok && i < n; i++) ok = tersa_write_string(w, text + i % 7, (size_t)(i * 37 % 600));
    return ok && tersa_write_array_end(w);
}

static uint8_t *plain_encoding(int n, size_t *len) {
    tersa_writer *w = tersa_writer_new(NULL);
    CHECK(tersa_writer_start(w, NULL, 0) && write_strings(w, n), "plain encode");
    const uint8_t *d = tersa_writer_data(w, len);
    uint8_t *copy = (uint8_t *)malloc(*len);
    memcpy(copy, d, *len);
    tersa_writer_free(w);
    return copy;
}

static void test_same_bytes(void) {
    static const size_t own_maxes[] = {0, 1, 11, 64, 4096, 1u << 20};
    static const int counts[] = {0, 1, 3, 40, 400};
    for (size_t m = 0; m < sizeof own_maxes / sizeof *own_maxes; m++) {
        for (size_t slack = 0; slack < 100; slack += 97) {
            outbox o = {0};
            o.slack = slack;
            tersa_output out = {ob_grow, ob_release, own_maxes[m]};
            tersa_writer *w = tersa_writer_new(NULL);
            tersa_writer_set_output(w, &out, &o);
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
                size_t want_len, len;
                uint8_t *want = plain_encoding(counts[c], &want_len);
                o.grows = 0;
                o.old_first = false;
                CHECK(tersa_writer_start(w, NULL, 0) && write_strings(w, counts[c]), "encode %d", counts[c]);
                uint8_t *block = tersa_writer_take_output(w, &len);
                if (block) {
                    CHECK(want_len > own_maxes[m] && len == want_len && memcmp(block, want, len) == 0 && o.old_first,
                          "own_max %zu, %d strings: the block holds the output", own_maxes[m], counts[c]);
                    o.live--;
                    free(block);
                } else {
                    /* Within own_max, or within the capacity the own buffer had already. */
                    CHECK(len == 0 && o.grows == 0 && (want_len <= own_maxes[m] || want_len <= 256),
                          "own_max %zu, %d strings: the output stays in the own buffer", own_maxes[m], counts[c]);
                    const uint8_t *d = tersa_writer_data(w, &len);
                    CHECK(len == want_len && memcmp(d, want, len) == 0, "own buffer output");
                }
                CHECK(!tersa_writer_take_output(w, &len) && len == 0, "taken once");
                free(want);
            }
            /* A block not taken is released by the next start, and by free. */
            CHECK(tersa_writer_start(w, NULL, 0) && write_strings(w, 400), "encode, not taken");
            long released = o.released;
            CHECK(tersa_writer_start(w, NULL, 0) && (own_maxes[m] > 100000 || o.released == released + 1),
                  "start releases the block");
            CHECK(write_strings(w, 400), "encode, not taken");
            tersa_writer_free(w);
            CHECK(o.live == 0, "own_max %zu: %ld blocks held after free", own_maxes[m], o.live);
        }
    }
}

static void test_grow_failures(void) {
    for (long fail_at = 1; fail_at < 12; fail_at++) {
        outbox o = {0};
        o.fail_at = fail_at;
        tersa_output out = {ob_grow, ob_release, 32};
        tersa_writer *w = tersa_writer_new(NULL);
        tersa_writer_set_output(w, &out, &o);
        bool ok = tersa_writer_start(w, NULL, 0) && write_strings(w, 400);
        CHECK(!ok && tersa_writer_error(w)->code == TERSA_ERR_NOMEM, "grow %ld fails: NOMEM", fail_at);
        CHECK(o.live == 0, "grow %ld fails: %ld blocks held", fail_at, o.live);
        size_t len;
        CHECK(!tersa_writer_take_output(w, &len), "nothing to take after a failure");
        /* The writer works again after a new start. */
        o.fail_at = 0;
        CHECK(tersa_writer_start(w, NULL, 0) && write_strings(w, 400), "encode after a failure");
        uint8_t *block = tersa_writer_take_output(w, &len);
        size_t want_len;
        uint8_t *want = plain_encoding(400, &want_len);
        CHECK(block && len == want_len && memcmp(block, want, len) == 0, "bytes after a failure");
        free(want);
        free(block);
        o.live--;
        /* Switching the output off releases a held block. */
        CHECK(tersa_writer_start(w, NULL, 0) && write_strings(w, 400), "encode");
        tersa_writer_set_output(w, NULL, NULL);
        CHECK(o.live == 0, "set_output(NULL) released the block");
        CHECK(tersa_writer_start(w, NULL, 0) && write_strings(w, 400) && !tersa_writer_take_output(w, &len),
              "without an output: the own buffer");
        tersa_writer_free(w);
    }
}

/* Streams: frames are written into the block as into the own buffer. */
static void test_stream(void) {
    outbox o = {0};
    tersa_output out = {ob_grow, ob_release, 16};
    tersa_writer *w = tersa_writer_new(NULL), *p = tersa_writer_new(NULL);
    tersa_writer_set_output(w, &out, &o);
    bool ok = tersa_writer_start(w, NULL, TERSA_WRITE_STREAM) && tersa_writer_start(p, NULL, TERSA_WRITE_STREAM);
    for (int i = 0; ok && i < 20; i++)
        ok = tersa_write_frame_begin(w) && write_strings(w, i * 5) && tersa_write_frame_end(w) &&
             tersa_write_frame_begin(p) && write_strings(p, i * 5) && tersa_write_frame_end(p);
    size_t len, plen;
    uint8_t *block = tersa_writer_take_output(w, &len);
    const uint8_t *want = tersa_writer_data(p, &plen);
    CHECK(ok && block && len == plen && memcmp(block, want, len) == 0, "stream frames in the block");
    free(block);
    tersa_writer_free(w);
    tersa_writer_free(p);
}

/* Output taken or replaced while a frame or container is open: the caller
 * gets the block, and the unfinished buffer is abandoned (the writer fails
 * until the next start) instead of closing the frame or container through
 * offsets into memory it no longer holds. */
static void test_taken_while_open(void) {
    static char text[1000];
    memset(text, 'x', sizeof text);
    for (int mode = 0; mode < 4; mode++) {
        bool stream = mode & 1, replace = mode & 2;
        outbox o = {0};
        tersa_output out = {ob_grow, ob_release, 16};
        tersa_writer *w = tersa_writer_new(NULL);
        tersa_writer_set_output(w, &out, &o);
        bool ok = tersa_writer_start(w, NULL, stream ? TERSA_WRITE_STREAM : 0) &&
                  (!stream || tersa_write_frame_begin(w)) && tersa_write_array_begin(w, 2) &&
                  tersa_write_string(w, text, sizeof text);
        CHECK(ok && o.live == 1, "mode %d: an open buffer in a caller's block", mode);
        size_t len = 0;
        if (replace) {
            tersa_writer_set_output(w, NULL, NULL);
            CHECK(o.live == 0, "mode %d: replacing the output released the block", mode);
        } else {
            uint8_t *block = tersa_writer_take_output(w, &len);
            CHECK(block && len > sizeof text, "mode %d: the block is handed over", mode);
            free(block);
            o.live--;
        }
        CHECK(tersa_writer_error(w)->code == TERSA_ERR_USAGE, "mode %d: the buffer is abandoned", mode);
        CHECK(!tersa_write_string(w, text, 10) && !tersa_write_array_end(w) && (!stream || !tersa_write_frame_end(w)),
              "mode %d: nothing more is written", mode);
        CHECK(!tersa_writer_take_output(w, &len) && len == 0, "mode %d: nothing left to take", mode);
        tersa_writer_set_output(w, &out, &o);
        CHECK(tersa_writer_start(w, NULL, 0) && write_strings(w, 400) && tersa_writer_error(w)->code == TERSA_OK,
              "mode %d: the writer works after a new start", mode);
        tersa_writer_free(w);
        CHECK(o.live == 0, "mode %d: %ld blocks held after free", mode, o.live);
    }
}

/* A first block of tersa_output_block_hint(len) bytes holds the same output
 * again, whatever its last item reserves. */
static void test_block_hint(void) {
    static const int counts[] = {30, 400, 3000};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        size_t len;
        free(plain_encoding(counts[i], &len));
        outbox o = {0};
        o.first = tersa_output_block_hint(len);
        tersa_output out = {ob_grow, ob_release, 16};
        tersa_writer *w = tersa_writer_new(NULL);
        tersa_writer_set_output(w, &out, &o);
        CHECK(tersa_writer_start(w, NULL, 0) && write_strings(w, counts[i]), "encode %d strings", counts[i]);
        size_t got;
        free(tersa_writer_take_output(w, &got));
        CHECK(got == len && o.grows == 1, "%d strings: %ld blocks for %zu bytes with a hint of %zu", counts[i],
              o.grows, len, o.first);
        tersa_writer_free(w);
    }
    CHECK(tersa_output_block_hint(SIZE_MAX - 10) == SIZE_MAX, "the hint saturates");
}

int main(void) {
    test_same_bytes();
    test_grow_failures();
    test_stream();
    test_taken_while_open();
    test_block_hint();
    return test_summary("test_output");
}
