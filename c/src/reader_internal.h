/*
 * reader_internal.h - the pull reader's private parts, shared by its files:
 * reader.c (items), reader_frames.c (buffers, headers, stream frames) and
 * reader_keys.c (distinct generic-map keys). Not installed.
 *
 * The helpers here are static, so that each file keeps them inlined or, for
 * the slow paths, calls a copy of its own whose clobbers it knows.
 */
#ifndef TERSA_READER_INTERNAL_H
#define TERSA_READER_INTERNAL_H

#include "state.h"

enum { RFRAME_ARRAY, RFRAME_MAP, RFRAME_GENERIC };

/* A scalar key of an open generic map, kept to detect duplicates. */
typedef struct gkey {
    uint64_t hash;
    uint64_t word;        /* integer, float bits, timestamp seconds */
    uint64_t word2;       /* timestamp nanos/zone/offset, ext type, bigint sign */
    const uint8_t *ptr;   /* bytes of strings, symbols, binary, ext, bigints */
    size_t len;
    uint8_t used;
    uint8_t type;
} gkey;

typedef struct rframe {
    uint8_t kind;
    tersa_slot *slot;     /* ARRAY, GENERIC: the container's slot; MAP: first slot of the shape */
    size_t remaining;
    size_t next;         /* MAP: index of the next value */
    size_t tag_offset;   /* GENERIC: for duplicate_key */
    gkey *keys;          /* GENERIC: scalar keys seen, open addressing; grows with the
                            keys actually read (the count is only a claim) */
    size_t keys_cap, keys_used;
} rframe;

/* An entry of the memo of map definitions (reader_memo.h). */
#define MEMO_SETS 64
#define MEMO_KEYS 15     /* the short MAPDEF tags' counts: 1..15 */
#define MEMO_BYTES 184   /* a definition's key bytes that an entry holds */
#define MEMO_MISSES_PER_BUFFER 4

struct tersa_mapdef_memo {
    uint64_t head;              /* the first 8 bytes at the definition's keys (beyond them if shorter) */
    uint16_t len;               /* the keys' bytes, tags included; 0: empty entry */
    uint16_t ascii;             /* bit i: key i is all ASCII */
    uint8_t n;
    uint8_t off[MEMO_KEYS];     /* where key i's bytes start (after its tag) */
    uint8_t bytes[MEMO_BYTES];
};
typedef struct tersa_mapdef_memo tersa_mapdef_memo;

struct tersa_reader {
    const tersa_alloc *alloc;
    const uint8_t *data;  /* current window */
    size_t pos, end;      /* read position and end of the window */
    size_t base;          /* offset of data[0] in the whole buffer */
    size_t total;         /* length of the whole buffer (single-buffer mode) */
    tersa_error err;

    rframe *stack;
    size_t depth, stack_cap;
    uint32_t max_depth;
    uint64_t seed;        /* tersa_seed(): keys and strings come from the input */

    uint32_t flags;
    bool started;
    bool copy_strings;    /* frames fed one by one: keep what later frames need */
    bool top_read;
    bool in_frame;

    /* Streams (SPEC 2.3). Sync frames repeat the header's VF byte and
     * dictionary id; a joining reader takes them from its first sync frame. */
    const tersa_dict *const *dicts;
    size_t ndicts;
    uint8_t stream_vf;
    uint64_t stream_dict_id;
    bool have_header;     /* stream_vf and stream_dict_id are known */
    bool seen_frame;      /* a frame has been decoded (not skipped) */
    bool frame_synced;    /* the frame begun last is a sync frame */
    size_t joined_at;     /* a joining reader's first sync frame */

    tersa_state st;       /* tables, slots, registers, the loaded dictionary */
    tersa_mapdef_memo *memo; /* MEMO_SETS entries, or NULL until the first plain map definition */
    uint32_t memo_misses;    /* lookups in the memo this buffer may still miss (MEMO_MISSES_PER_BUFFER) */
};

/* ==========================================================================
 * Errors
 * ========================================================================== */

TERSA_NOINLINE_LOCAL bool fail_at(tersa_reader *r, tersa_code code, size_t at, const char *message) {
    if (r->err.code == TERSA_OK) set_error(&r->err, code, r->base + at, message);
    return false;
}

#define FAIL(code, at, msg) return fail_at(r, (code), (at), (msg))

/* ==========================================================================
 * Primitive fields
 * ========================================================================== */

TERSA_NOINLINE_LOCAL bool read_varint_slow(tersa_reader *r, size_t at, uint64_t *out) {
    const uint8_t *p = r->data + r->pos;
    size_t avail = r->end - r->pos;
    if (avail == 0) FAIL(TERSA_ERR_TRUNCATED, at, "input ends inside a varint");
    unsigned n = p[0] ? ctz32(p[0]) + 1 : 9;
    if (avail < n) FAIL(TERSA_ERR_TRUNCATED, at, "input ends inside a varint");
    uint64_t v;
    if (n == 9) {
        v = load_le64(p + 1);
        if (v < (1ull << 56)) FAIL(TERSA_ERR_INVALID_VARINT, at, "varint is not minimal");
    } else {
        /* avail < 8 here (n < 9) unless the fast path declined a
         * zero first byte; the 8 bytes ending at the window's end hold the
         * n wanted ones when the window is that long, read in one load */
        if (avail < 8 && r->end >= 8) {
            v = load_le64(r->data + r->end - 8) >> (8 * (8 - avail));
            v = (v & ((1ull << (8 * n)) - 1)) >> n;
        } else {
            uint8_t tmp[8] = {0};
            memcpy(tmp, p, n);
            v = load_le64(tmp) >> n;
        }
        if (n > 1 && v < (1ull << (7 * (n - 1)))) FAIL(TERSA_ERR_INVALID_VARINT, at, "varint is not minimal");
    }
    r->pos += n;
    *out = v;
    return true;
}

/* Read a varint belonging to the item whose tag is at `at`. */
TERSA_INLINE bool read_varint(tersa_reader *r, size_t at, uint64_t *out) {
    if (TERSA_LIKELY(r->end - r->pos >= 8)) {
        const uint8_t *p = r->data + r->pos;
        uint8_t b = p[0];
        if (TERSA_LIKELY(b & 1)) {
            *out = b >> 1;
            r->pos++;
            return true;
        }
        if (b) {
            unsigned n = ctz32(b) + 1;
            uint64_t w = load_le64(p);
            uint64_t v = n == 8 ? w >> 8 : (w & ((1ull << (8 * n)) - 1)) >> n;
            if (TERSA_UNLIKELY(v < (1ull << (7 * (n - 1)))))
                FAIL(TERSA_ERR_INVALID_VARINT, at, "varint is not minimal");
            r->pos += n;
            *out = v;
            return true;
        }
    }
    return read_varint_slow(r, at, out);
}

/* A length or count (plus `bias`) that must not exceed the remaining input. */
TERSA_INLINE bool read_length(tersa_reader *r, size_t at, uint64_t bias, size_t *out) {
    uint64_t v;
    if (!read_varint(r, at, &v)) return false;
    uint64_t remaining = r->end - r->pos;
    if (TERSA_UNLIKELY(v > remaining || v + bias > remaining))
        FAIL(TERSA_ERR_LENGTH_EXCEEDS_INPUT, at, "length exceeds the remaining input");
    *out = (size_t)(v + bias);
    return true;
}

TERSA_INLINE bool need(tersa_reader *r, size_t n, size_t at) {
    if (TERSA_LIKELY(r->end - r->pos >= n)) return true;
    FAIL(TERSA_ERR_TRUNCATED, at, "input ends inside an item");
}

/* ==========================================================================
 * Open containers
 * ========================================================================== */

TERSA_INLINE void pop_frame(tersa_reader *r) {
    rframe *f = &r->stack[--r->depth];
    if (f->keys) {
        mem_free(r->alloc, f->keys, f->keys_cap * sizeof(gkey));
        f->keys = NULL;
    }
}

/* reader_keys.c: the hash of a string that may be a table entry, cached in the entry. */
uint64_t tersa_reader_string_hash(tersa_reader *r, const char *ptr, size_t len, uint32_t index);

/* reader_keys.c: record the key `item` of generic-map frame `f`; false with
 * duplicate_key if an equal key was read before. */
bool tersa_reader_note_generic_key(tersa_reader *r, rframe *f, const tersa_item *item);

#endif
