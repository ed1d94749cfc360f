/*
 * feed.c - incremental streams (SPEC 2.3): finding a whole header or frame at
 * the start of some bytes (tersa_stream_scan), and the feed buffer of a
 * stream decoder, where bytes arrive in pieces of any size and whole headers
 * and frames leave. Both bindings' feed-style decoders keep one.
 */
#include "internal.h"
#include "bits.h"

struct tersa_feed {
    const tersa_alloc *alloc;
    uint8_t *buf;            /* pending bytes: buf[start..len) */
    size_t start, len, cap;
    size_t offset;           /* stream offset of buf[start] */
};

/* Inlined into the feed's scanning, which runs once per frame. */
static inline tersa_scan scan(const void *data, size_t len, bool header, size_t *size, tersa_error *err) {
    const uint8_t *p = (const uint8_t *)data;
    if (header) {
        if ((len >= 1 && p[0] != HEADER_MAGIC0) || (len >= 2 && p[1] != HEADER_MAGIC1)) {
            set_error(err, TERSA_ERR_BAD_MAGIC, 0, "not a Tersa buffer");
            return TERSA_SCAN_ERROR;
        }
        if (len < 3) return TERSA_SCAN_NEED_MORE;
        *size = (p[2] & FLAG_DICT) ? 11 : 3;
        return len >= *size ? TERSA_SCAN_READY : TERSA_SCAN_NEED_MORE;
    }
    if (len == 0) return TERSA_SCAN_NEED_MORE;
    unsigned n = p[0] ? ctz32(p[0]) + 1 : 9;
    if (len < n) return TERSA_SCAN_NEED_MORE;
    uint64_t v;
    if (n == 9) {
        v = load_le64(p + 1);
        if (v < (1ull << 56)) {
            set_error(err, TERSA_ERR_INVALID_VARINT, 0, "varint is not minimal");
            return TERSA_SCAN_ERROR;
        }
    } else {
        uint8_t tmp[8] = {0};
        memcpy(tmp, p, n);
        v = load_le64(tmp) >> n;
        if (n > 1 && v < (1ull << (7 * (n - 1)))) {
            set_error(err, TERSA_ERR_INVALID_VARINT, 0, "varint is not minimal");
            return TERSA_SCAN_ERROR;
        }
    }
    if (v == 0) {
        set_error(err, TERSA_ERR_INVALID_VALUE, 0, "empty stream frame");
        return TERSA_SCAN_ERROR;
    }
    if (v > SIZE_MAX - n) {
        set_error(err, TERSA_ERR_LENGTH_EXCEEDS_INPUT, 0, "frame too large");
        return TERSA_SCAN_ERROR;
    }
    *size = n + (size_t)v;
    return len >= *size ? TERSA_SCAN_READY : TERSA_SCAN_NEED_MORE;
}

tersa_scan tersa_stream_scan(const void *data, size_t len, bool header, size_t *size, tersa_error *err) {
    return scan(data, len, header, size, err);
}

/* ==========================================================================
 * The feed buffer
 * ========================================================================== */

/* The reader wants a pointer even for no bytes. */
static const uint8_t no_bytes[1];

/* Growth and shrinking (the one policy of both bindings):
 * - the buffer starts at FEED_MIN bytes and is sized to a power of two at
 *   least 1.5 times what it must hold, so a third of it stays free and the
 *   bytes moved to the front are at most three times the bytes fed;
 * - consumed bytes are dropped (the pending ones moved to the front) only
 *   when a piece does not fit behind them, so a frame handed out stays put
 *   until the next tersa_feed_append;
 * - a buffer above FEED_SHRINK_ABOVE bytes shrinks once what it must hold
 *   fits in a quarter of it, so that one large frame does not pin its size
 *   for the rest of the stream. */
#define FEED_MIN 4096u
#define FEED_SHRINK_ABOVE (1u << 16)

tersa_feed *tersa_feed_new(const tersa_alloc *alloc) {
    alloc = alloc_or_default(alloc);
    tersa_feed *f = (tersa_feed *)mem_alloc(alloc, sizeof(tersa_feed));
    if (!f) return NULL;
    memset(f, 0, sizeof(*f));
    f->alloc = alloc;
    return f;
}

void tersa_feed_free(tersa_feed *f) {
    if (!f) return;
    mem_free(f->alloc, f->buf, f->cap);
    mem_free(f->alloc, f, sizeof(*f));
}

void tersa_feed_reset(tersa_feed *f) {
    mem_free(f->alloc, f->buf, f->cap);
    f->buf = NULL;
    f->start = f->len = f->cap = f->offset = 0;
}

/* Room for `more` bytes after buf[len). */
static bool make_room(tersa_feed *f, size_t more) {
    size_t pending = f->len - f->start;
    if (more > SIZE_MAX / 4 - pending) return false;
    size_t need = pending + more, want = FEED_MIN;
    while (want < need + need / 2) want *= 2;
    if (f->start && pending) memmove(f->buf, f->buf + f->start, pending);
    f->start = 0;
    f->len = pending;
    if (want > f->cap || (f->cap > FEED_SHRINK_ABOVE && want < f->cap / 4)) {
        uint8_t *p = (uint8_t *)mem_realloc(f->alloc, f->buf, f->cap, want);
        if (p) {
            f->buf = p;
            f->cap = want;
        } else if (want > f->cap) {
            return false;
        } /* else a failed shrink keeps the larger buffer */
    }
    return true;
}

bool tersa_feed_append(tersa_feed *f, const void *data, size_t len) {
    if (len > f->cap - f->len && !make_room(f, len)) return false;
    if (len) memcpy(f->buf + f->len, data, len);
    f->len += len;
    return true;
}

const uint8_t *tersa_feed_pending(const tersa_feed *f, size_t *len) {
    *len = f->len - f->start;
    return f->buf ? f->buf + f->start : no_bytes;
}

size_t tersa_feed_offset(const tersa_feed *f) { return f->offset; }

size_t tersa_feed_capacity(const tersa_feed *f) { return f->cap; }

tersa_scan tersa_feed_next(const tersa_feed *f, bool header, const uint8_t **data, size_t *size, tersa_error *err) {
    size_t len;
    const uint8_t *p = tersa_feed_pending(f, &len);
    tersa_scan s = scan(p, len, header, size, err);
    if (s == TERSA_SCAN_ERROR) err->offset += f->offset;
    *data = p;
    return s;
}

void tersa_feed_consume(tersa_feed *f, size_t size) {
    f->start += size;
    f->offset += size;
}

bool tersa_feed_at_end(const tersa_feed *f, size_t skip, tersa_error *err) {
    size_t len;
    const uint8_t *p = tersa_feed_pending(f, &len);
    if (len <= skip) return true;
    p += skip;
    len -= skip;
    size_t at = f->offset + skip, size;
    tersa_scan s = scan(p, len, false, &size, err);
    if (s == TERSA_SCAN_READY) {
        *err = (tersa_error){TERSA_OK, at, "whole frames are left to read"};
    } else if (s == TERSA_SCAN_ERROR) {
        err->offset += at; /* the length prefix itself is wrong */
    } else {
        /* A length prefix is 1 to 9 bytes, told by its first byte's trailing zeros (SPEC 3.1). */
        size_t prefix = p[0] ? (size_t)ctz32(p[0]) + 1 : 9;
        if (len < prefix) *err = (tersa_error){TERSA_ERR_TRUNCATED, at, "the stream ends inside a frame length"};
        else *err = (tersa_error){TERSA_ERR_LENGTH_EXCEEDS_INPUT, at, "the last frame is longer than the stream"};
    }
    return false;
}
