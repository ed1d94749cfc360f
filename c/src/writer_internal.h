/*
 * writer_internal.h - the streaming writer's private parts, shared by its
 * files: writer.c (items), writer_index.c (the hash indexes over the tables)
 * and writer_frames.c (lifecycle, the header, stream frames). Not installed.
 *
 * The helpers here are static, so that each file keeps them inlined or, for
 * the slow paths, calls a copy of its own whose clobbers it knows.
 */
#ifndef TERSA_WRITER_INTERNAL_H
#define TERSA_WRITER_INTERNAL_H

#include "keys.h"
#include "state.h"

enum { FRAME_ARRAY, FRAME_MAP, FRAME_GENERIC };

/* An open container. The innermost one's cursor lives in the writer
 * (cur, cur_left) while it is open, and is saved here when another opens. */
typedef struct wframe {
    uint8_t kind;
    bool ends_key;     /* this container is a generic-map key: its identity completes at its end */
    tersa_slot *cur;    /* slot of the next item: ARRAY, GENERIC: the container's; MAP: the next value's */
    size_t left;       /* items still to write */
    size_t key_start;  /* ends_key: where its identity starts in w->kids */
    tersa_kid_map kids; /* GENERIC: the identities of its keys */
} wframe;

/* Index slots: 16 bits of the hash, 16 bits of generation, 32 bits of
 * position + 1. A slot of another generation is empty, so starting a new
 * buffer clears nothing (only when the generation wraps), except that the
 * entries of a loaded dictionary carry SIDX_DICT_GEN and stay. */
#define SIDX_HASH 0xFFFF000000000000ull
#define SIDX_GEN_SHIFT 32
#define SIDX_GEN_MASK 0x0000FFFF00000000ull
/* The generation of a loaded dictionary's entries: live across buffers. */
#define SIDX_DICT_GEN SIDX_GEN_MASK

/* A map key's address and the string-table position its bytes had there.
 * Only a hint: a position is used after its entry is seen to hold the same
 * bytes as the key now does, so neither the caller reusing an address for
 * other bytes nor a new buffer (or sync frame) can make it wrong, and
 * nothing needs clearing. */
typedef struct key_memo_entry {
    const uint8_t *ptr;
    uint32_t pos;
} key_memo_entry;

/* The memo pays only for a caller that passes a key's bytes at the same
 * address each time. Its credit (key_memo_credit) starts at KEY_MEMO_CREDIT
 * with the tables (tersa_writer_reset_tables: each buffer and sync frame),
 * gains one for each key found, loses one for each key whose address the memo
 * has not seen: once spent, the tables stop using the memo, so that a caller
 * with fresh addresses pays for a bounded number of keys. */
#define KEY_MEMO_CREDIT 256

/* Direct-mapped: a document's distinct keys are few, and a miss costs only
 * the lookup the memo would have saved. */
#define KEY_MEMO_BITS 8
#define KEY_MEMO_SLOTS (1u << KEY_MEMO_BITS)

struct tersa_writer {
    const tersa_alloc *alloc;
    uint8_t *buf;
    size_t len, cap;
    /* Caller-supplied output (tersa_writer_set_output): while `out_block`,
     * buf is a block from out->grow and the writer's own buffer waits in
     * own_buf / own_cap. */
    const tersa_output *out;
    void *out_ctx;
    bool out_block;
    uint8_t *own_buf;
    size_t own_cap;
    tersa_error err;

    /* Tables, slots, registers and the loaded dictionary. Each string-table
     * entry keeps its hash, so that growing the index never reads the
     * strings again. */
    tersa_state st;
    uint64_t *sidx;      /* open addressing over the string table (see SIDX_*) */
    size_t sidx_cap;
    /* The table size at which the next new entry needs
     * tersa_writer_grow_strings (room in the table or the index), so that
     * a new string tests one bound; SIZE_MAX once the table is full. */
    size_t str_limit;
    uint64_t sidx_gen;   /* current generation, in place (<< SIDX_GEN_SHIFT) */
    hash_index shape_index;
    /* Map keys by address (writer.c, key_memo_find): where the key at an
     * address was last found in the string table. */
    key_memo_entry key_memo[KEY_MEMO_SLOTS];
    int32_t key_memo_credit;

    wframe *stack;
    size_t depth, stack_cap;
    uint32_t max_depth;
    /* The innermost open container's cursor, so that claiming a position is
     * a decrement and an add. cur_left is 0 at the top level and after an
     * error: next_slot then takes its slow path, which tells the cases apart. */
    tersa_slot *cur;
    size_t cur_left;
    size_t cur_step;      /* 1 in a shaped map (a slot per value), else 0 */

    uint32_t last_shape;  /* shape used or defined by the last map_begin */
    bool last_defined;    /* the last map_begin defined last_shape (did not find it in the table) */
    ts_day_memo ts_day;   /* the date of the last timestamp string (consecutive ones mostly share it) */
    uint64_t seed;        /* tersa_seed(): the strings and keys come from the caller's data */

    /* Distinct generic-map keys (keys.h). keywatch is set while the innermost
     * container is a generic map or a key is being recorded: only then do
     * items take the identity path. */
    tersa_kid_stack kids;
    uint32_t recording;   /* container keys whose items are being recorded */
    bool keywatch;
    bool cur_generic;     /* the innermost container is a generic map */

    uint32_t flags;
    bool started;
    bool in_frame;
    size_t top_values;   /* top-level values written (single) or in the open frame */
    /* The loaded dictionary (st.dict_*): its strings carry index slots
     * stamped SIDX_DICT_GEN, and its shapes' hashes are kept here to index
     * them again at each buffer. */
    uint64_t *dict_shape_hashes;
    size_t dict_shape_hashes_cap;
    size_t frame_start;
    const tersa_dict *dict;
    /* Sync frames (SPEC 2.3): the options, and the counts they are measured by. */
    uint64_t sync_every_frames, sync_every_bytes;
    uint64_t frames;          /* frames begun in this stream */
    uint64_t since_sync;      /* bytes of frames since the start of the last sync frame */
    bool want_sync;           /* the next frame is a sync frame */
    bool frame_synced;        /* the frame begun last is a sync frame */
    /* The map-definition template replayed since the tables were last reset
     * (writer_mapdef.c): its string entries and shape keys point into it, so
     * the writer holds a reference until the next reset. */
    tersa_mapdef *md_live;
    /* Borrowed strings (writer_index.c, tersa_writer_settle_borrowed):
     * entries from `settled` on may point at the caller's bytes, and do if
     * `lent` is set. `may_lend` is cleared for the rest of the tables (a
     * stream's, or once lend_credit is spent): the borrowed calls copy. */
    bool lent;
    bool may_lend;
    size_t settled;
    int64_t lend_credit;
};

/* ==========================================================================
 * Errors and buffer
 * ========================================================================== */

TERSA_NOINLINE_LOCAL bool fail(tersa_writer *w, tersa_code code, const char *message) {
    if (w->err.code == TERSA_OK) set_error(&w->err, code, w->len, message);
    w->cur_left = 0; /* every later item takes next_slot's slow path, which sees the error */
    return false;
}

/* writer_frames.c: grow into a block of the caller's output (tersa_output). */
bool tersa_writer_grow_output(tersa_writer *w, size_t need);

TERSA_NOINLINE_LOCAL bool grow(tersa_writer *w, size_t need) {
    /* Past own_max bytes, a caller-supplied output takes over. */
    if (w->out && (w->out_block || w->len >= w->out->own_max || need > w->out->own_max - w->len))
        return tersa_writer_grow_output(w, need);
    size_t ncap = w->cap ? w->cap : 256;
    while (ncap - w->len < need) {
        if (ncap > SIZE_MAX / 2) return fail(w, TERSA_ERR_NOMEM, "output too large");
        ncap *= 2;
    }
    uint8_t *p = (uint8_t *)mem_realloc(w->alloc, w->buf, w->cap, ncap);
    if (!p) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    w->buf = p;
    w->cap = ncap;
    return true;
}

/* Room for `n` more bytes. */
TERSA_INLINE bool reserve(tersa_writer *w, size_t n) {
    if (TERSA_LIKELY(w->cap - w->len >= n)) return true;
    return grow(w, n);
}

TERSA_INLINE void put_byte(tersa_writer *w, uint8_t b) { w->buf[w->len++] = b; }

/* Appends a varint. The caller has reserved room for a whole 9-byte varint
 * from here: the short forms store 8 bytes at once (what lies past the
 * varint is overwritten by what follows), which avoids a copy of variable
 * length. */
TERSA_INLINE void put_varint(tersa_writer *w, uint64_t v) { w->len += varint_put_room9(w->buf + w->len, v); }

TERSA_INLINE void put_bytes(tersa_writer *w, const void *p, size_t n) {
    copy_bytes(w->buf + w->len, (const uint8_t *)p, n);
    w->len += n;
}

/* ==========================================================================
 * The string-table index (writer_index.c)
 * ========================================================================== */

/* The index stops growing at this many slots: at load <= 1/2 it would
 * double again for the last 320 of the TERSA_MAX_STRINGS entries, which fit
 * at load 0.502 instead. */
#define SIDX_MAX_CAP (1u << 17)
_Static_assert(TERSA_MAX_STRINGS < SIDX_MAX_CAP, "the full index keeps a free slot");

/* Room for one more string: an entry and an index slot (load <= 1/2, or
 * the table's capacity in an index of SIDX_MAX_CAP slots). */
bool tersa_writer_grow_strings(tersa_writer *w);

/* w->str_limit for the current table and index. */
void tersa_writer_set_str_limit(tersa_writer *w);

TERSA_INLINE bool strings_full(const tersa_writer *w) { return TERSA_UNLIKELY(w->st.nstrs >= w->str_limit); }

TERSA_INLINE bool strings_have_room(tersa_writer *w) { return !strings_full(w) || tersa_writer_grow_strings(w); }

/* Equality of a table entry's n bytes with p's (n >= MIN_TABLE_LEN): below
 * 8 bytes by two overlapping loads, as hash_bytes reads them, not a loop. */
TERSA_INLINE bool entry_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    if (n >= 8) return bytes_equal(a, b, n);
    if (n >= 4) return load_le32(a) == load_le32(b) && load_le32(a + n - 4) == load_le32(b + n - 4);
    return a[0] == b[0] && a[1] == b[1] && a[n - 1] == b[n - 1];
}

/* Find `p` in the string table: its position, or TERSA_NO_INDEX with *empty
 * set to the index slot where it would go (valid until the next insertion or
 * growth). The index always has a free slot (load <= 1/2), so a lookup needs
 * no room; an insertion does (strings_have_room). */
TERSA_INLINE uint32_t str_find(const tersa_writer *w, const uint8_t *p, size_t n, uint64_t h, uint64_t **empty) {
    size_t mask = w->sidx_cap - 1, i = (size_t)h & mask;
    const uint64_t cur_gen = w->sidx_gen, *ix = w->sidx;
    for (;;) {
        uint64_t slot = ix[i];
        uint64_t gen = slot & SIDX_GEN_MASK;
        if (gen != cur_gen && gen != SIDX_DICT_GEN) break;
        if (((slot ^ h) & SIDX_HASH) == 0) {
            uint32_t pos = (uint32_t)slot - 1;
            const str_entry *e = &w->st.strs[pos];
            if (e->len == n && entry_equal(e->ptr, p, n)) return pos;
        }
        i = (i + 1) & mask;
    }
    *empty = &w->sidx[i];
    return TERSA_NO_INDEX;
}

/* Append an entry; `slot` (if not NULL) is where the index gets it;
 * `borrowed`: p is the caller's (lent until tersa_writer_settle_borrowed). */
TERSA_INLINE void add_string_entry_lent(tersa_writer *w, const uint8_t *p, size_t n, uint64_t h, uint64_t *slot,
                                        bool borrowed) {
    size_t i = w->st.nstrs;
    if (TERSA_UNLIKELY(i >= TERSA_MAX_STRINGS)) return;
    if (slot) *slot = (h & SIDX_HASH) | w->sidx_gen | (uint64_t)(i + 1);
    str_entry *e = &w->st.strs[i];
    e->ptr = p;
    e->len = n;
    e->hash = h;
    e->ascii = false;
    e->borrowed = borrowed;
    w->st.nstrs = i + 1;
}

/* Append an entry of stable bytes. */
TERSA_INLINE void add_string_entry(tersa_writer *w, const uint8_t *p, size_t n, uint64_t h, uint64_t *slot) {
    add_string_entry_lent(w, p, n, h, slot, false);
}

/* ==========================================================================
 * Map-definition templates (writer_mapdef.c)
 * ========================================================================== */

/* The state a buffer or sync frame starts with (SPEC 4): no string, shape or
 * register added since the tables were reset, and no template replayed.
 * Only here is a map definition's output a function of its keys, the
 * loaded dictionary and the writer's seed alone. */
TERSA_INLINE bool writer_pristine(const tersa_writer *w) {
    const tersa_state *st = &w->st;
    bool dict = st->dict_serial != 0;
    return st->nstrs == (dict ? st->dict_nstrs : 0) && st->nshapes == (dict ? st->dict_nshapes : 0) &&
           !st->has_last && !st->key_slot.has_str && st->last_ts == 0 && !w->md_live;
}

/* A template of the map definition just written by map_begin (from output
 * position len0, string entries from nstrs0, shape keys `keys` with hash h),
 * which started in a pristine state; NULL when the definition is too large
 * to keep or memory is short (the map itself is written either way). */
tersa_mapdef *tersa_writer_record_mapdef(tersa_writer *w, const tersa_key *keys, size_t count, uint64_t h, size_t len0,
                                         size_t nstrs0, bool validated);

/* writer.c: claim the position of a map about to open (next_slot and the depth limit). */
bool tersa_writer_claim_map(tersa_writer *w);

/* writer.c: add the shape of a map whose definition was just written and open it. */
bool tersa_writer_open_defined(tersa_writer *w, const tersa_key *keys, size_t count, uint64_t h);

/* Tables, slots and registers as at the start of a buffer (SPEC 4): at
 * tersa_writer_start and at every sync frame. */
bool tersa_writer_reset_tables(tersa_writer *w, const tersa_dict *dict);

/* writer.c: close every open container (an error or a new buffer can leave some open). */
void tersa_writer_release_frames(tersa_writer *w);

#endif
