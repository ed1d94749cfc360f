/*
 * writer.c - the streaming writer: canonical encoding (SPEC section 7).
 */
#include "keys.h"
#include "state.h"

/* ==========================================================================
 * State
 * ========================================================================== */

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

struct tersa_writer {
    const tersa_alloc *alloc;
    uint8_t *buf;
    size_t len, cap;
    tersa_error err;

    /* Tables, slots, registers and the loaded dictionary. Each string-table
     * entry keeps its hash, so that growing the index never reads the
     * strings again. */
    tersa_state st;
    uint64_t *sidx;      /* open addressing over the string table (see SIDX_*) */
    size_t sidx_cap, sidx_used;
    uint64_t sidx_gen;   /* current generation, in place (<< SIDX_GEN_SHIFT) */
    hash_index shape_index;

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
};

/* ==========================================================================
 * Errors and buffer
 * ========================================================================== */

TERSA_NOINLINE static bool fail(tersa_writer *w, tersa_code code, const char *message) {
    if (w->err.code == TERSA_OK) set_error(&w->err, code, w->len, message);
    w->cur_left = 0; /* every later item takes next_slot's slow path, which sees the error */
    return false;
}

TERSA_NOINLINE static bool grow(tersa_writer *w, size_t need) {
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
 * Lifecycle
 * ========================================================================== */

tersa_writer *tersa_writer_new(const tersa_alloc *alloc) {
    alloc = alloc_or_default(alloc);
    tersa_writer *w = (tersa_writer *)mem_alloc(alloc, sizeof(tersa_writer));
    if (!w) return NULL;
    memset(w, 0, sizeof(*w));
    w->alloc = alloc;
    w->max_depth = TERSA_DEFAULT_MAX_DEPTH;
    w->seed = tersa_seed();
    tersa_state_init(&w->st, alloc);
    tersa_kid_init(&w->kids, alloc);
    return w;
}

static void release_frames(tersa_writer *w);

void tersa_writer_free(tersa_writer *w) {
    if (!w) return;
    const tersa_alloc *a = w->alloc;
    release_frames(w);
    tersa_kid_free(&w->kids);
    mem_free(a, w->buf, w->cap);
    tersa_state_free(&w->st);
    mem_free(a, w->sidx, w->sidx_cap * sizeof(uint64_t));
    tersa_hash_index_free(a, &w->shape_index);
    mem_free(a, w->stack, w->stack_cap * sizeof(wframe));
    mem_free(a, w->dict_shape_hashes, w->dict_shape_hashes_cap * sizeof(uint64_t));
    mem_free(a, w, sizeof(*w));
}

void tersa_writer_set_max_depth(tersa_writer *w, uint32_t max_depth) { w->max_depth = max_depth; }

const tersa_error *tersa_writer_error(const tersa_writer *w) { return &w->err; }

const uint8_t *tersa_writer_data(const tersa_writer *w, size_t *len) {
    *len = w->len;
    return w->buf;
}

bool tersa_writer_complete(const tersa_writer *w) {
    if (!w->started || w->err.code != TERSA_OK || w->depth != 0) return false;
    if (w->flags & TERSA_WRITE_STREAM) return !w->in_frame;
    return w->top_values == 1;
}

/* Room for one more string: an entry and an index slot at load <= 1/2. */
TERSA_NOINLINE static bool grow_strings(tersa_writer *w) {
    if (w->st.nstrs == w->st.strs_cap && !tersa_state_grow_strings(&w->st))
        return fail(w, TERSA_ERR_NOMEM, "out of memory");
    if ((w->sidx_used + 1) * 2 > w->sidx_cap) {
        size_t cap = w->sidx_cap ? w->sidx_cap * 2 : 256;
        uint64_t *ix = (uint64_t *)mem_alloc(w->alloc, cap * sizeof(uint64_t));
        if (!ix) return fail(w, TERSA_ERR_NOMEM, "out of memory");
        memset(ix, 0, cap * sizeof(uint64_t));
        /* Dictionary entries go in first, so that no probe sequence leading
         * to one passes a slot that the next buffer will see as empty. */
        for (int pass = 0; pass < 2; pass++) {
            uint64_t gen = pass == 0 ? SIDX_DICT_GEN : w->sidx_gen;
            if (pass == 1 && gen == SIDX_DICT_GEN) break; /* loading the dictionary */
            for (size_t j = 0; j < w->sidx_cap; j++) {
                uint64_t slot = w->sidx[j];
                if ((slot & SIDX_GEN_MASK) != gen) continue;
                /* The slot keeps only the hash's high bits; the entry has all of it. */
                const str_entry *e = &w->st.strs[(uint32_t)slot - 1];
                size_t i = (size_t)e->hash & (cap - 1);
                while (ix[i]) i = (i + 1) & (cap - 1);
                ix[i] = slot;
            }
        }
        mem_free(w->alloc, w->sidx, w->sidx_cap * sizeof(uint64_t));
        w->sidx = ix;
        w->sidx_cap = cap;
    }
    return true;
}

TERSA_INLINE bool strings_have_room(tersa_writer *w) {
    return TERSA_LIKELY(w->st.nstrs < w->st.strs_cap && (w->sidx_used + 1) * 2 <= w->sidx_cap) || grow_strings(w);
}

/* Find `p` in the string table: its position, or TERSA_NO_INDEX with *empty
 * set to the index slot where it would go (valid until the next insertion). */
TERSA_INLINE uint32_t str_find(const tersa_writer *w, const uint8_t *p, size_t n, uint64_t h, uint64_t **empty) {
    size_t mask = w->sidx_cap - 1, i = (size_t)h & mask;
    for (;;) {
        uint64_t slot = w->sidx[i];
        uint64_t gen = slot & SIDX_GEN_MASK;
        if (gen != w->sidx_gen && gen != SIDX_DICT_GEN) break;
        if (((slot ^ h) & SIDX_HASH) == 0) {
            uint32_t pos = (uint32_t)slot - 1;
            const str_entry *e = &w->st.strs[pos];
            if (e->len == n && bytes_equal(e->ptr, p, n)) return pos;
        }
        i = (i + 1) & mask;
    }
    *empty = &w->sidx[i];
    return TERSA_NO_INDEX;
}

/* Append an entry; `slot` (if not NULL) is where the index gets it. */
TERSA_INLINE void add_string_entry(tersa_writer *w, const uint8_t *p, size_t n, uint64_t h, uint64_t *slot) {
    if (TERSA_UNLIKELY(w->st.nstrs >= TERSA_MAX_STRINGS)) return;
    if (slot) {
        *slot = (h & SIDX_HASH) | w->sidx_gen | (uint64_t)(w->st.nstrs + 1);
        w->sidx_used++;
    }
    tersa_state_append_string(&w->st, p, n, h, false);
}

/* A new shape, with its slots, entered in the shape index too. */
static bool add_shape(tersa_writer *w, const tersa_key *keys, size_t n, uint64_t h, tersa_slot **slots) {
    uint32_t index;
    if (!tersa_hash_index_grow(w->alloc, &w->shape_index, w->shape_index.used + 1) ||
        !tersa_state_add_shape(&w->st, keys, NULL, n, h, slots, &index))
        return fail(w, TERSA_ERR_NOMEM, "out of memory");
    if (index != TERSA_NO_INDEX) tersa_hash_index_put(&w->shape_index, h, index);
    return true;
}

/* Empty the shape index. A buffer of many shapes leaves a large index: when
 * the last buffer's shapes fill a small part of it (small messages after a
 * large document), their own buckets are found again from their hashes and
 * emptied, so starting a buffer costs what the last one used, not what the
 * largest one did. */
static void clear_shape_index(tersa_writer *w) {
    hash_index *ix = &w->shape_index;
    if (ix->used * 16 >= ix->cap) {
        tersa_hash_index_clear(ix);
        return;
    }
    size_t mask = ix->cap - 1;
    for (size_t s = 0; s < w->st.nshapes; s++) {
        size_t i = (size_t)w->st.shapes[s].hash & mask;
        while (ix->positions[i] != s + 1) i = (i + 1) & mask;
        ix->positions[i] = 0;
    }
    ix->used = 0;
}

/* Forget every index slot (a loaded dictionary's too). */
static void clear_string_index(tersa_writer *w) {
    if (w->sidx_cap) memset(w->sidx, 0, w->sidx_cap * sizeof(uint64_t));
    w->st.dict_serial = 0;
}

/* Load a dictionary into the tables (tersa_state_load_dictionary), then
 * index its strings, which are distinct: each gets a slot of the dictionary's
 * generation, and its shapes' hashes. */
static bool load_dictionary(tersa_writer *w, const tersa_dict *dict) {
    bool ok = tersa_state_load_dictionary(&w->st, dict) &&
              tersa_grow_array(w->alloc, (void **)&w->dict_shape_hashes, &w->dict_shape_hashes_cap, dict->nshapes,
                               sizeof(uint64_t));
    uint64_t gen = w->sidx_gen;
    w->sidx_gen = SIDX_DICT_GEN;
    w->sidx_used = 0;
    for (size_t i = 0; ok && i < w->st.nstrs; i++) {
        ok = strings_have_room(w); /* may move the table */
        if (!ok) break;
        str_entry *e = &w->st.strs[i];
        e->hash = hash_bytes(e->ptr, e->len, w->seed);
        uint64_t *slot = NULL;
        str_find(w, e->ptr, e->len, e->hash, &slot);
        *slot = (e->hash & SIDX_HASH) | SIDX_DICT_GEN | (uint64_t)(i + 1);
        w->sidx_used++;
    }
    w->sidx_gen = gen;
    if (!ok) {
        clear_string_index(w);
        tersa_state_reset(&w->st, false);
        w->sidx_used = 0;
        return fail(w, TERSA_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < w->st.nshapes; i++) {
        shape *s = &w->st.shapes[i];
        s->hash = w->dict_shape_hashes[i] = hash_keys(s->keys, s->nkeys, w->seed);
    }
    return true;
}

/* Tables, slots and registers as at the start of a buffer (SPEC 4): at
 * tersa_writer_start and at every sync frame. */
static bool reset_state(tersa_writer *w, const tersa_dict *dict) {
    w->sidx_gen = (w->sidx_gen + (1ull << SIDX_GEN_SHIFT)) & SIDX_GEN_MASK;
    if (w->sidx_gen == 0 || w->sidx_gen == SIDX_DICT_GEN) {
        /* Generation 0 is what fresh memory holds, the last one marks the
         * dictionary's entries: clear, then start over at 1. */
        clear_string_index(w);
        w->sidx_gen = 1ull << SIDX_GEN_SHIFT;
    }
    bool keep = dict && w->st.dict_serial == dict->serial;
    if (!keep && w->st.dict_serial) clear_string_index(w); /* another dictionary's entries */
    clear_shape_index(w);
    tersa_state_reset(&w->st, keep);
    w->sidx_used = w->st.nstrs;
    w->last_shape = TERSA_NO_INDEX;
    if (dict) {
        if (!keep && !load_dictionary(w, dict)) return false;
        /* The dictionary's shapes: indexed again (their slots are empty). */
        if (!tersa_hash_index_grow(w->alloc, &w->shape_index, w->st.dict_nshapes))
            return fail(w, TERSA_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < w->st.dict_nshapes; i++) tersa_hash_index_put(&w->shape_index, w->dict_shape_hashes[i], (uint32_t)i);
    }
    return true;
}

bool tersa_writer_start(tersa_writer *w, const tersa_dict *dict, uint32_t flags) {
    w->len = 0;
    w->err.code = TERSA_OK;
    w->err.offset = 0;
    w->err.message = NULL;
    release_frames(w);
    w->cur_left = 0;
    w->flags = flags;
    w->in_frame = false;
    w->top_values = 0;
    w->dict = dict;
    w->started = true;
    w->frames = w->since_sync = 0;
    w->want_sync = true;
    w->frame_synced = false;
    if (!reset_state(w, dict)) return false;
    if (flags & TERSA_WRITE_NO_HEADER) return true;
    if (!reserve(w, 11)) return false;
    put_byte(w, HEADER_MAGIC0);
    put_byte(w, HEADER_MAGIC1);
    put_byte(w, (uint8_t)((TERSA_FORMAT_VERSION << 4) | (dict ? FLAG_DICT : 0) |
                          ((flags & TERSA_WRITE_STREAM) ? FLAG_STREAM : 0)));
    if (dict) {
        store_le64(w->buf + w->len, dict->id);
        w->len += 8;
    }
    return true;
}

/* ==========================================================================
 * Positions and slots (SPEC 4.3)
 * ========================================================================== */

/* next_slot when the open container has no room left: an error, a full
 * container, or a top-level value. */
TERSA_NOINLINE static tersa_slot *next_slot_slow(tersa_writer *w) {
    if (w->err.code != TERSA_OK) return NULL;
    if (w->depth) {
        fail(w, TERSA_ERR_USAGE, "more items than the container's count");
        return NULL;
    }
    if (TERSA_UNLIKELY(!w->started)) {
        fail(w, TERSA_ERR_USAGE, "tersa_writer_start was not called");
        return NULL;
    }
    if (w->flags & TERSA_WRITE_STREAM) {
        if (!w->in_frame || w->top_values) {
            fail(w, TERSA_ERR_USAGE, "stream values must each be inside tersa_write_frame_begin/end");
            return NULL;
        }
    } else if (w->top_values) {
        fail(w, TERSA_ERR_USAGE, "a single-value buffer holds one top-level value");
        return NULL;
    }
    w->top_values++;
    return &w->st.root;
}

/* Claim the next position and return its slot, or NULL on misuse. */
TERSA_INLINE tersa_slot *next_slot(tersa_writer *w) {
    if (TERSA_LIKELY(w->cur_left)) {
        w->cur_left--;
        tersa_slot *s = w->cur;
        w->cur += w->cur_step;
        return s;
    }
    return next_slot_slow(w);
}

/* ==========================================================================
 * Distinct generic-map keys (keys.h)
 * ========================================================================== */

TERSA_INLINE void update_keywatch(tersa_writer *w) { w->keywatch = w->cur_generic || w->recording; }

/* Is the item just claimed a key of the innermost generic map? Its 2n
 * positions alternate key, value, so claiming a key leaves an odd count. */
TERSA_INLINE bool at_key(const tersa_writer *w) { return w->cur_generic && (w->cur_left & 1); }

/* The identity of a key starting at `start` is complete: add it to the
 * innermost generic map's keys. */
static bool key_complete(tersa_writer *w, size_t start) {
    int added = tersa_kid_insert(&w->kids, &w->stack[w->depth - 1].kids, start);
    if (added > 0) return true;
    if (added < 0) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    return fail(w, TERSA_ERR_UNREPRESENTABLE, "duplicate map key (two keys equal as Tersa values)");
}

/* A scalar item just written while keywatch is set: record its identity if
 * it is a key or part of one. The identity is the type byte, `fixed` (a
 * field of fixed width for the type), then unless n is SIZE_MAX a length and
 * n bytes. */
TERSA_NOINLINE static bool key_scalar(tersa_writer *w, uint8_t type, const void *fixed, size_t fixed_len, const void *p,
                                     size_t n) {
    bool starts = at_key(w);
    if (!starts && !w->recording) return true;
    size_t start = w->kids.len;
    bool ok = tersa_kid_append(&w->kids, &type, 1) && tersa_kid_append(&w->kids, fixed, fixed_len) &&
              (n == SIZE_MAX || tersa_kid_append_bytes(&w->kids, TERSA_KID_BINARY, p, n));
    if (!ok) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    return !starts || key_complete(w, start);
}

TERSA_NOINLINE static bool key_word(tersa_writer *w, uint8_t type, uint64_t word) {
    uint8_t b[8];
    store_le64(b, word);
    return key_scalar(w, type, b, 8, NULL, SIZE_MAX);
}

/* Identity hooks for the scalar writers: nothing unless keywatch is set. */
#define KEY_WORD(w, type, word) (TERSA_LIKELY(!(w)->keywatch) || key_word((w), (type), (uint64_t)(word)))
#define KEY_BYTES(w, type, p, n) (TERSA_LIKELY(!(w)->keywatch) || key_scalar((w), (type), NULL, 0, (p), (n)))

/* A container opening while keywatch is set: its header's identity, and
 * whether it starts a key (*starts) and where (*start). */
TERSA_NOINLINE static bool key_container(tersa_writer *w, uint8_t type, size_t count, const tersa_key *keys,
                                        bool *starts, size_t *start) {
    *starts = at_key(w);
    *start = w->kids.len;
    if (!*starts && !w->recording) return true;
    bool ok = tersa_kid_append_word(&w->kids, type, count);
    for (size_t i = 0; ok && keys && i < count; i++)
        ok = tersa_kid_append_bytes(&w->kids, keys[i].symbol ? TERSA_KID_SYMBOL : TERSA_KID_STRING, keys[i].ptr,
                                   keys[i].len);
    if (!ok) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    return true;
}

/* Close every open container: an error or a new buffer can leave some open. */
static void release_frames(tersa_writer *w) {
    for (size_t i = 0; i < w->depth; i++)
        if (w->stack[i].kind == FRAME_GENERIC) tersa_kid_close(&w->kids, &w->stack[i].kids, true);
    tersa_kid_reset(&w->kids);
    w->depth = 0;
    w->recording = 0;
    w->cur_generic = w->keywatch = false;
}

TERSA_NOINLINE static bool grow_stack(tersa_writer *w) {
    if (!tersa_grow_array(w->alloc, (void **)&w->stack, &w->stack_cap, w->depth + 1, sizeof(wframe)))
        return fail(w, TERSA_ERR_NOMEM, "out of memory");
    return true;
}

/* push_frame for a generic map, or while keywatch is set. */
TERSA_NOINLINE static bool push_watched(tersa_writer *w, uint8_t kind, tersa_slot *slot, size_t count, uint8_t identity,
                                       const tersa_key *keys) {
    bool starts = false;
    size_t start = 0;
    if (w->keywatch && !key_container(w, identity, kind == FRAME_GENERIC ? count / 2 : count, keys, &starts, &start))
        return false;
    if (TERSA_UNLIKELY(w->depth == w->stack_cap) && !grow_stack(w)) return false;
    if (w->depth) {
        wframe *parent = &w->stack[w->depth - 1];
        parent->cur = w->cur;
        parent->left = w->cur_left;
    }
    wframe *f = &w->stack[w->depth++];
    f->kind = kind;
    f->ends_key = starts;
    f->key_start = start;
    w->cur = slot;
    w->cur_left = count;
    w->cur_step = kind == FRAME_MAP;
    if (starts) w->recording++;
    if (kind == FRAME_GENERIC) tersa_kid_open(&w->kids, &f->kids);
    w->cur_generic = kind == FRAME_GENERIC;
    update_keywatch(w);
    return true;
}

/* Open a container of `count` items. With keywatch set, its identity
 * (`identity`, then a shaped map's `keys`) is recorded if it is or is part
 * of a generic-map key. */
TERSA_INLINE bool push_frame(tersa_writer *w, uint8_t kind, tersa_slot *slot, size_t count, uint8_t identity,
                            const tersa_key *keys) {
    if (TERSA_UNLIKELY(w->keywatch) || TERSA_UNLIKELY(kind == FRAME_GENERIC))
        return push_watched(w, kind, slot, count, identity, keys);
    if (TERSA_UNLIKELY(w->depth == w->stack_cap) && !grow_stack(w)) return false;
    if (w->depth) {
        wframe *parent = &w->stack[w->depth - 1];
        parent->cur = w->cur;
        parent->left = w->cur_left;
    }
    wframe *f = &w->stack[w->depth++];
    f->kind = kind;
    f->ends_key = false;
    w->cur = slot;
    w->cur_left = count;
    w->cur_step = kind == FRAME_MAP;
    return true;
}

/* ==========================================================================
 * Scalars
 * ========================================================================== */

bool tersa_write_null(tersa_writer *w) {
    if (!next_slot(w) || !reserve(w, 1)) return false;
    put_byte(w, TAG_NULL);
    return KEY_WORD(w, TERSA_KID_NULL, 0);
}

bool tersa_write_bool(tersa_writer *w, bool value) {
    if (!next_slot(w) || !reserve(w, 1)) return false;
    put_byte(w, value ? TAG_TRUE : TAG_FALSE);
    return KEY_WORD(w, value ? TERSA_KID_TRUE : TERSA_KID_FALSE, 0);
}

static bool write_int_in(tersa_writer *w, tersa_slot *slot, int64_t v) {
    if (!reserve(w, 10)) return false;
    if (v >= INT_MIN_SMALL && v <= INT_MAX_SMALL) {
        put_byte(w, (uint8_t)(TAG_INT0 + (v - INT_MIN_SMALL)));
    } else {
        uint8_t tag;
        uint64_t body;
        if (v > 0) {
            tag = TAG_INT_POS;
            body = (uint64_t)v - (INT_MAX_SMALL + 1);
        } else {
            tag = TAG_INT_NEG;
            body = (uint64_t)(-(v - (INT_MIN_SMALL - 1))); /* -9 - v, without overflow */
        }
        if (slot->has_int) {
            int64_t r = slot->int_val;
            bool fits = r >= 0 ? v >= INT64_MIN + r : v <= INT64_MAX + r;
            if (fits) {
                uint64_t z = zigzag(v - r);
                if (varint_size(z) < varint_size(body)) {
                    tag = TAG_INT_DELTA;
                    body = z;
                }
            }
        }
        put_byte(w, tag);
        put_varint(w, body);
    }
    slot->int_val = v;
    slot->has_int = 1;
    return true;
}

bool tersa_write_int(tersa_writer *w, int64_t value) {
    tersa_slot *slot = next_slot(w);
    if (TERSA_UNLIKELY(w->keywatch)) return slot && write_int_in(w, slot, value) && key_word(w, TERSA_KID_INT, (uint64_t)value);
    return slot && write_int_in(w, slot, value);
}

static bool write_uint_in(tersa_writer *w, tersa_slot *slot, uint64_t value) {
    if (value <= (uint64_t)INT64_MAX) return write_int_in(w, slot, (int64_t)value);
    if (!reserve(w, 10)) return false;
    put_byte(w, TAG_INT_POS);
    put_varint(w, value - (INT_MAX_SMALL + 1));
    return true; /* beyond int64: the register is unchanged */
}

bool tersa_write_uint(tersa_writer *w, uint64_t value) {
    tersa_slot *slot = next_slot(w);
    if (TERSA_UNLIKELY(w->keywatch))
        return slot && write_uint_in(w, slot, value) &&
               key_word(w, value <= (uint64_t)INT64_MAX ? TERSA_KID_INT : TERSA_KID_UINT, value);
    return slot && write_uint_in(w, slot, value);
}

bool tersa_write_bigint(tersa_writer *w, bool negative, const uint8_t *mag, size_t len) {
    tersa_slot *slot = next_slot(w);
    if (!slot) return false;
    while (len && mag[len - 1] == 0) len--;
    if (len <= 8) {
        uint64_t u = 0;
        for (size_t i = len; i > 0; i--) u = (u << 8) | mag[i - 1];
        if (!negative)
            return write_uint_in(w, slot, u) && KEY_WORD(w, u <= (uint64_t)INT64_MAX ? TERSA_KID_INT : TERSA_KID_UINT, u);
        if (u <= (1ull << 63)) {
            int64_t v = u == (1ull << 63) ? INT64_MIN : -(int64_t)u;
            return write_int_in(w, slot, v) && KEY_WORD(w, TERSA_KID_INT, v);
        }
    }
    if (!reserve(w, 10 + len)) return false;
    put_byte(w, negative ? TAG_BIGINT_NEG : TAG_BIGINT_POS);
    put_varint(w, len);
    put_bytes(w, mag, len);
    return KEY_BYTES(w, negative ? TERSA_KID_BIG_NEG : TERSA_KID_BIG_POS, mag, len);
}

static bool write_double_in(tersa_writer *w, tersa_slot *slot, double d);

bool tersa_write_double(tersa_writer *w, double d) {
    tersa_slot *slot = next_slot(w);
    if (!slot || !write_double_in(w, slot, d)) return false;
    if (TERSA_LIKELY(!w->keywatch)) return true;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return key_word(w, TERSA_KID_FLOAT, bits);
}

static bool write_double_in(tersa_writer *w, tersa_slot *slot, double d) {
    if (!reserve(w, 11)) return false;
    unsigned bin = slot->bin;
    int64_t m;
    int e = slot->dec_hint;
    bool hinted = false;
    if ((bin < BIN_TRUSTED || bin == BIN_RETEST) &&
        ((hinted = tersa_decimal_at_exponent(d, &e, &m)) || tersa_decimal_of_double(d, &m, &e))) {
        uint64_t z = zigzag(m);
        bool in_tag = e >= DEC_EMIN && e <= DEC_EMAX;
        size_t abs_size = (in_tag ? 1u : 2u) + varint_size(z);
        size_t size = abs_size;
        bool delta = false;
        uint64_t dz = 0;
        if (slot->has_dec && slot->dec_e == e) {
            dz = zigzag(m - slot->dec_m);
            if (1 + varint_size(dz) < abs_size) {
                delta = true;
                size = 1 + varint_size(dz);
            }
        }
        /* Ties favour the decimal forms (SPEC 7: earliest candidate). */
        if (size <= 5 || (size <= 9 && !tersa_f32_exact(d))) {
            if (delta) {
                put_byte(w, TAG_DEC_DELTA);
                put_varint(w, dz);
            } else {
                if (in_tag) {
                    put_byte(w, (uint8_t)(TAG_DEC0 + (e - DEC_EMIN)));
                } else {
                    put_byte(w, TAG_DEC_X);
                    put_byte(w, (uint8_t)(int8_t)e);
                }
                put_varint(w, z);
            }
            slot->dec_m = m;
            slot->dec_e = (int8_t)e;
            slot->has_dec = 1;
            slot->bin = 0;
            /* The hint keeps the most decimals the slot needed: values with
             * fewer pass through it too. Zero says nothing about them. */
            if (!hinted && m) slot->dec_hint = (int8_t)e;
            return true;
        }
    }
    slot->bin = (uint8_t)(bin < BIN_RETEST ? bin + 1 : BIN_TRUSTED);
    if (tersa_f32_exact(d)) {
        float f = (float)d;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        put_byte(w, TAG_F32);
        store_le32(w->buf + w->len, bits);
        w->len += 4;
    } else {
        uint64_t bits;
        memcpy(&bits, &d, 8);
        put_byte(w, TAG_F64);
        store_le64(w->buf + w->len, bits);
        w->len += 8;
    }
    return true;
}

/* ==========================================================================
 * Strings (SPEC 7, strings)
 * ========================================================================== */

TERSA_INLINE size_t ref_size(size_t i) {
    return i < REF8_BASE ? 1 : i < REF16_BASE ? 2 : i < REF24_BASE ? 3 : 4;
}

TERSA_INLINE size_t common_prefix(const uint8_t *base, size_t base_len, const uint8_t *p, size_t n) {
    /* Prefixes of fewer than 2 bytes never pay: most candidates stop here. */
    if (base_len < 2 || n < 2 || base[0] != p[0] || base[1] != p[1]) return 0;
    size_t limit = base_len < n ? base_len : n;
    if (limit > MAX_PREFIX) limit = MAX_PREFIX;
    size_t i = 0;
    while (i + 8 <= limit) {
        uint64_t a, b;
        memcpy(&a, base + i, 8);
        memcpy(&b, p + i, 8);
        if (a != b) break;
        i += 8;
    }
    while (i < limit && base[i] == p[i]) i++;
    while (i > 0 && !utf8_boundary(p, n, i)) i--;
    return i;
}

static void put_ref(tersa_writer *w, size_t i) {
    if (i < REF8_BASE) {
        put_byte(w, (uint8_t)(TAG_REF0 + i));
    } else if (i < REF16_BASE) {
        put_byte(w, TAG_REF8);
        put_byte(w, (uint8_t)(i - REF8_BASE));
    } else if (i < REF24_BASE) {
        put_byte(w, TAG_REF16);
        put_byte(w, (uint8_t)(i - REF16_BASE));
        put_byte(w, (uint8_t)((i - REF16_BASE) >> 8));
    } else {
        size_t v = i - REF24_BASE;
        put_byte(w, TAG_REF24);
        put_byte(w, (uint8_t)v);
        put_byte(w, (uint8_t)(v >> 8));
        put_byte(w, (uint8_t)(v >> 16));
    }
}

static void put_ts(tersa_writer *w, const ts_parts *t) {
    if (t->variant == 0) {
        put_byte(w, TAG_TS_Z0);
    } else if (t->variant == 3) {
        put_byte(w, TAG_TS_Z3);
    } else {
        put_byte(w, TAG_TS_STR);
        put_byte(w, t->variant);
    }
    put_varint(w, zigzag(t->seconds - w->st.last_ts));
    w->st.last_ts = t->seconds;
    if (t->variant & TSV_DIGITS) put_varint(w, t->frac);
    if (t->variant & TSV_NUMERIC_OFFSET) put_varint(w, zigzag(t->offset));
}

/* Keep the registers and (for strings of 2+ bytes) the table pointing at
 * a stable copy of a string just written in a non-reference form. `slot` is
 * the index slot for a new entry (NULL: none, the string is already in the
 * table at a lower index or is shorter than 2 bytes). */
TERSA_INLINE bool keep_string(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, uint64_t h,
                             uint64_t *islot, const uint8_t **stable) {
    const uint8_t *s;
    if (n >= MIN_TABLE_LEN) {
        s = (const uint8_t *)tersa_arena_copy(&w->st.mem, p, n);
        if (TERSA_UNLIKELY(!s)) return fail(w, TERSA_ERR_NOMEM, "out of memory");
        add_string_entry(w, s, n, h, islot);
    } else {
        s = n ? &tersa_single_bytes[p[0]] : tersa_single_bytes;
    }
    tersa_state_note_string(&w->st, slot, s, n);
    if (stable) *stable = s;
    return true;
}

/* Could a prefix of `base` save bytes for p (2 shared bytes at least)? */
TERSA_INLINE bool prefix_candidate(const uint8_t *base, size_t base_len, const uint8_t *p) {
    return base_len >= 2 && base[0] == p[0] && base[1] == p[1];
}

/* Timestamp strings, prefix strings and long strings. */
TERSA_NOINLINE static bool write_str_slow(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, uint64_t h,
                                         uint64_t *islot, const uint8_t **stable) {
    size_t inline_size = (n < N_STR0 ? 1 : 1 + varint_size(n - N_STR0)) + n;
    /* A timestamp form: tag, variant, three varints of which the last may
     * start 16 bytes in; a prefix or inline form: 2 bytes, a varint, n bytes. */
    if (!reserve(w, 25 + n)) return false;
    ts_parts ts;
    if (n >= 10 && n <= 35 && p[4] == '-' && tersa_ts_parse(p, n, &ts)) {
        put_ts(w, &ts);
        return keep_string(w, slot, p, n, h, islot, stable);
    }
    size_t best = 0;
    uint8_t base_flag = 0;
    if (slot->has_str) best = common_prefix(slot->str, slot->str_len, p, n);
    if (w->st.has_last) {
        size_t l = common_prefix(w->st.last, w->st.last_len, p, n);
        if (l > best) {
            best = l;
            base_flag = 0x80;
        }
    }
    size_t suffix = n - best;
    size_t pfx_size = best ? (suffix < N_PFX0 ? 2 : 2 + varint_size(suffix - N_PFX0)) + suffix : SIZE_MAX;
    if (pfx_size < inline_size) {
        if (suffix < N_PFX0) {
            put_byte(w, (uint8_t)(TAG_PFX0 + suffix));
            put_byte(w, (uint8_t)(base_flag | best));
        } else {
            put_byte(w, TAG_PFX_LONG);
            put_byte(w, (uint8_t)(base_flag | best));
            put_varint(w, suffix - N_PFX0);
        }
        put_bytes(w, p + best, suffix);
    } else if (n < N_STR0) {
        put_byte(w, (uint8_t)(TAG_STR0 + n));
        put_bytes(w, p, n);
    } else {
        put_byte(w, TAG_STR_LONG);
        put_varint(w, n - N_STR0);
        put_bytes(w, p, n);
    }
    return keep_string(w, slot, p, n, h, islot, stable);
}

/* Write one string item in `slot` (SPEC 7, strings); on success *stable
 * points at bytes that live as long as this buffer's encoding (shape keys).
 * `known_hash`, if not NULL, is hash_bytes(p, n, w->seed), already computed. */
TERSA_INLINE bool write_str_item_h(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, const uint8_t **stable,
                                  const uint64_t *known_hash) {
    uint64_t h = 0, *islot = NULL;
    if (TERSA_LIKELY(n >= MIN_TABLE_LEN)) {
        if (!strings_have_room(w)) return false;
        h = known_hash ? *known_hash : hash_bytes(p, n, w->seed);
        uint32_t found = str_find(w, p, n, h, &islot);
        if (found != TERSA_NO_INDEX) {
            /* A reference is used unless it would be longer than the string. */
            if (TERSA_LIKELY(found < REF16_BASE || ref_size(found) <= (n < N_STR0 ? 1 : 1 + varint_size(n - N_STR0)) + n)) {
                if (!reserve(w, 4)) return false;
                put_ref(w, found);
                const str_entry *e = &w->st.strs[found];
                tersa_state_note_string(&w->st, slot, e->ptr, e->len);
                if (stable) *stable = e->ptr;
                return true;
            }
            islot = NULL; /* written again, but the index keeps the lowest position */
        }
        /* Anything but a short plain string that no register shares a prefix with. */
        if (n >= N_STR0 || (n >= 10 && p[4] == '-') || (slot->has_str && prefix_candidate(slot->str, slot->str_len, p)) ||
            (w->st.has_last && prefix_candidate(w->st.last, w->st.last_len, p)))
            return write_str_slow(w, slot, p, n, h, islot, stable);
    }
    if (!reserve(w, 1 + N_STR0)) return false;
    put_byte(w, (uint8_t)(TAG_STR0 + n));
    put_bytes(w, p, n);
    return keep_string(w, slot, p, n, h, islot, stable);
}

TERSA_INLINE bool write_str_item(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, const uint8_t **stable) {
    return write_str_item_h(w, slot, p, n, stable, NULL);
}

static bool check_utf8(tersa_writer *w, const char *ptr, size_t len, bool *ascii) {
    if (tersa_utf8_valid((const uint8_t *)ptr, len, ascii)) return true;
    return fail(w, TERSA_ERR_UNREPRESENTABLE, "string is not valid UTF-8");
}

bool tersa_write_string_utf8(tersa_writer *w, const char *ptr, size_t len) {
    tersa_slot *slot = next_slot(w);
    return slot && write_str_item(w, slot, (const uint8_t *)ptr, len, NULL) &&
           KEY_BYTES(w, TERSA_KID_STRING, ptr, len);
}

bool tersa_write_string(tersa_writer *w, const char *ptr, size_t len) {
    bool ascii;
    if (!check_utf8(w, ptr, len, &ascii)) return false;
    tersa_slot *slot = next_slot(w);
    return slot && write_str_item(w, slot, (const uint8_t *)ptr, len, NULL) &&
           KEY_BYTES(w, TERSA_KID_STRING, ptr, len);
}

bool tersa_write_symbol(tersa_writer *w, const char *ptr, size_t len) {
    bool ascii;
    if (!check_utf8(w, ptr, len, &ascii)) return false;
    tersa_slot *slot = next_slot(w);
    if (!slot || !reserve(w, 1)) return false;
    put_byte(w, TAG_SYMBOL);
    return write_str_item(w, slot, (const uint8_t *)ptr, len, NULL) && KEY_BYTES(w, TERSA_KID_SYMBOL, ptr, len);
}

/* ==========================================================================
 * Binary, extensions, timestamps
 * ========================================================================== */

bool tersa_write_binary(tersa_writer *w, const void *ptr, size_t len) {
    if (!next_slot(w) || !reserve(w, 10 + len)) return false;
    put_byte(w, TAG_BIN);
    put_varint(w, len);
    put_bytes(w, ptr, len);
    return KEY_BYTES(w, TERSA_KID_BINARY, ptr, len);
}

bool tersa_writer_fail(tersa_writer *w, tersa_code code, const char *message) { return fail(w, code, message); }

bool tersa_write_ext(tersa_writer *w, uint32_t type, const void *ptr, size_t len) {
    if (type > TERSA_MAX_EXT_TYPE) return fail(w, TERSA_ERR_UNREPRESENTABLE, "extension type above 65535");
    /* Only well_known.c writes reserved types, so that their payloads are valid. */
    if (type > TERSA_EXT_APP_MAX)
        return fail(w, TERSA_ERR_USAGE, "extension types 0xFF00-0xFFFF are reserved for the well-known types");
    return tersa_write_ext_unchecked(w, type, ptr, len);
}

bool tersa_write_ext_unchecked(tersa_writer *w, uint32_t type, const void *ptr, size_t len) {
    if (!next_slot(w) || !reserve(w, 20 + len)) return false;
    put_byte(w, TAG_EXT);
    put_varint(w, type);
    put_varint(w, len);
    put_bytes(w, ptr, len);
    if (TERSA_LIKELY(!w->keywatch)) return true;
    uint8_t t[4];
    store_le32(t, type);
    return key_scalar(w, TERSA_KID_EXT, t, 4, ptr, len);
}

bool tersa_write_timestamp(tersa_writer *w, const tersa_timestamp *ts) {
    if (ts->seconds < TERSA_MIN_SECONDS || ts->seconds > TERSA_MAX_SECONDS)
        return fail(w, TERSA_ERR_UNREPRESENTABLE, "timestamp outside years 0001-9999");
    if (ts->nanos > 999999999u) return fail(w, TERSA_ERR_UNREPRESENTABLE, "nanoseconds above 999999999");
    if (ts->zone > TERSA_ZONE_FLOATING) return fail(w, TERSA_ERR_UNREPRESENTABLE, "invalid timestamp zone");
    if (ts->zone == TERSA_ZONE_OFFSET) {
        if (ts->offset < -TERSA_MAX_OFFSET || ts->offset > TERSA_MAX_OFFSET)
            return fail(w, TERSA_ERR_UNREPRESENTABLE, "UTC offset beyond 23:59");
        int64_t local = ts->seconds + (int64_t)ts->offset * 60;
        if (local < TERSA_MIN_SECONDS || local > TERSA_MAX_SECONDS)
            return fail(w, TERSA_ERR_UNREPRESENTABLE, "local time outside years 0001-9999");
    }
    if (!next_slot(w) || !reserve(w, 2 + 9 + 5 + 9)) return false;
    put_byte(w, TAG_TIME);
    put_byte(w, (uint8_t)((ts->nanos ? 1 : 0) | (ts->zone << 1)));
    put_varint(w, zigzag(ts->seconds - w->st.last_ts));
    w->st.last_ts = ts->seconds;
    if (ts->nanos) put_varint(w, ts->nanos);
    if (ts->zone == TERSA_ZONE_OFFSET) put_varint(w, zigzag(ts->offset));
    if (TERSA_LIKELY(!w->keywatch)) return true;
    uint8_t t[15];
    store_le64(t, (uint64_t)ts->seconds);
    store_le32(t + 8, ts->nanos);
    t[12] = ts->zone;
    int16_t off = ts->zone == TERSA_ZONE_OFFSET ? ts->offset : 0;
    t[13] = (uint8_t)(uint16_t)off;
    t[14] = (uint8_t)((uint16_t)off >> 8);
    return key_scalar(w, TERSA_KID_TIME, t, 15, NULL, SIZE_MAX);
}

/* ==========================================================================
 * Containers
 * ========================================================================== */

TERSA_INLINE bool check_depth(tersa_writer *w) {
    if (TERSA_LIKELY(w->depth < w->max_depth)) return true;
    return fail(w, TERSA_ERR_DEPTH_EXCEEDED, "nesting deeper than the limit");
}

bool tersa_write_array_begin(tersa_writer *w, size_t count) {
    tersa_slot *slot = next_slot(w);
    if (!slot || !check_depth(w) || !reserve(w, 10)) return false;
    if (count < N_ARR0) {
        put_byte(w, (uint8_t)(TAG_ARR0 + count));
    } else {
        put_byte(w, TAG_ARR_LONG);
        put_varint(w, count - N_ARR0);
    }
    return push_frame(w, FRAME_ARRAY, slot, count, TERSA_KID_ARRAY, NULL);
}

/* end_container with keywatch set: close the key set, finish a key. */
TERSA_NOINLINE static bool end_watched(tersa_writer *w) {
    wframe *f = &w->stack[w->depth - 1];
    bool ends_key = f->ends_key;
    if (ends_key) w->recording--;
    if (f->kind == FRAME_GENERIC) tersa_kid_close(&w->kids, &f->kids, w->recording > 0 || ends_key);
    w->cur_generic = false;
    if (--w->depth) {
        const wframe *parent = &w->stack[w->depth - 1];
        w->cur = parent->cur;
        w->cur_left = parent->left;
        w->cur_step = parent->kind == FRAME_MAP;
        w->cur_generic = parent->kind == FRAME_GENERIC;
    }
    update_keywatch(w);
    return !ends_key || key_complete(w, f->key_start);
}

static bool end_container(tersa_writer *w, bool map) {
    if (w->err.code != TERSA_OK) return false;
    if (w->depth == 0) return fail(w, TERSA_ERR_USAGE, "no open container");
    wframe *f = &w->stack[w->depth - 1];
    if ((f->kind == FRAME_ARRAY) == map) return fail(w, TERSA_ERR_USAGE, "closing the wrong kind of container");
    if (w->cur_left) return fail(w, TERSA_ERR_USAGE, "fewer items than the container's count");
    /* Without keywatch this container is no generic map and no key, and nothing records. */
    if (TERSA_UNLIKELY(w->keywatch)) return end_watched(w);
    if (--w->depth) {
        const wframe *parent = &w->stack[w->depth - 1];
        w->cur = parent->cur;
        w->cur_left = parent->left;
        w->cur_step = parent->kind == FRAME_MAP;
        if (TERSA_UNLIKELY(parent->kind == FRAME_GENERIC)) w->cur_generic = w->keywatch = true;
    }
    return true;
}

bool tersa_write_array_end(tersa_writer *w) { return end_container(w, false); }

bool tersa_write_map_end(tersa_writer *w) { return end_container(w, true); }

static bool put_shape_ref(tersa_writer *w, size_t id) {
    if (!reserve(w, 3)) return false;
    if (id < SHAPE8_BASE) {
        put_byte(w, (uint8_t)(TAG_SHAPE0 + id));
    } else if (id < SHAPE16_BASE) {
        put_byte(w, TAG_SHAPE8);
        put_byte(w, (uint8_t)(id - SHAPE8_BASE));
    } else {
        put_byte(w, TAG_SHAPE16);
        put_byte(w, (uint8_t)(id - SHAPE16_BASE));
        put_byte(w, (uint8_t)((id - SHAPE16_BASE) >> 8));
    }
    w->last_shape = (uint32_t)id;
    return push_frame(w, FRAME_MAP, w->st.shapes[id].slots, w->st.shapes[id].nkeys, TERSA_KID_MAP, w->st.shapes[id].keys);
}

/* Keys hashed once: a new shape's keys go through the string table with the
 * hashes its lookup computed (up to this many keys; more are hashed again). */
#define MAP_KEY_HASHES 16

static bool map_begin(tersa_writer *w, const tersa_key *keys, size_t count, bool checked) {
    if (!next_slot(w) || !check_depth(w)) return false;
    uint64_t key_hash[MAP_KEY_HASHES];
    uint64_t h = hash_keys_keeping(keys, count, w->seed, key_hash, MAP_KEY_HASHES);
    const hash_index *ix = &w->shape_index;
    if (ix->cap) {
        size_t mask = ix->cap - 1, i = (size_t)h & mask;
        for (uint32_t pos; (pos = ix->positions[i]) != 0; i = (i + 1) & mask) {
            const shape *s = &w->st.shapes[pos - 1];
            if (ix->hashes[i] == h && s->nkeys == count && keys_equal(s->keys, keys, count))
                return put_shape_ref(w, pos - 1);
        }
    }
    /* A new shape: define it with its keys. */
    if (checked) {
        for (size_t i = 0; i < count; i++) {
            bool ascii;
            if (!check_utf8(w, keys[i].ptr, keys[i].len, &ascii)) return false;
        }
        size_t second;
        if (tersa_keys_have_duplicate(w->alloc, keys, count, &second))
            return fail(w, TERSA_ERR_UNREPRESENTABLE, "duplicate map key");
    }
    tersa_key *copy = (tersa_key *)tersa_arena_alloc(&w->st.mem, count ? count * sizeof(tersa_key) : 1);
    if (!copy || !reserve(w, 10)) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    if (count < N_MAPDEF0) {
        put_byte(w, (uint8_t)(TAG_MAPDEF0 + count));
    } else {
        put_byte(w, TAG_MAPDEF_LONG);
        put_varint(w, count - N_MAPDEF0);
    }
    for (size_t i = 0; i < count; i++) {
        const uint8_t *stable;
        if (keys[i].symbol) {
            if (!reserve(w, 1)) return false;
            put_byte(w, TAG_SYMBOL);
        }
        /* A symbol's name is hashed with the plain seed by the string table. */
        const uint64_t *known = i < MAP_KEY_HASHES && !keys[i].symbol ? &key_hash[i] : NULL;
        if (!write_str_item_h(w, &w->st.key_slot, (const uint8_t *)keys[i].ptr, keys[i].len, &stable, known))
            return false;
        copy[i].ptr = (const char *)stable;
        copy[i].len = keys[i].len;
        copy[i].symbol = keys[i].symbol;
    }
    tersa_slot *slots = NULL;
    size_t before = w->st.nshapes;
    if (!add_shape(w, copy, count, h, &slots)) return false;
    w->last_shape = w->st.nshapes > before ? (uint32_t)before : TERSA_NO_INDEX;
    return push_frame(w, FRAME_MAP, slots, count, TERSA_KID_MAP, copy);
}

uint32_t tersa_writer_last_shape(const tersa_writer *w) { return w->last_shape; }

size_t tersa_writer_shape_size(const tersa_writer *w, uint32_t index) {
    return index < w->st.nshapes ? w->st.shapes[index].nkeys : 0;
}

bool tersa_write_map_shape(tersa_writer *w, uint32_t index) {
    if (w->err.code == TERSA_OK && index >= w->st.nshapes) return fail(w, TERSA_ERR_USAGE, "unknown shape index");
    if (!next_slot(w) || !check_depth(w)) return false;
    return put_shape_ref(w, index);
}

bool tersa_write_map_begin(tersa_writer *w, const tersa_key *keys, size_t count) {
    return map_begin(w, keys, count, true);
}

bool tersa_write_map_begin_utf8(tersa_writer *w, const tersa_key *keys, size_t count) {
    return map_begin(w, keys, count, false);
}

bool tersa_write_generic_map_begin(tersa_writer *w, size_t count) {
    tersa_slot *slot = next_slot(w);
    if (!slot || !check_depth(w) || !reserve(w, 10)) return false;
    if (count > SIZE_MAX / 2) return fail(w, TERSA_ERR_UNREPRESENTABLE, "map too large");
    put_byte(w, TAG_MAP_GEN);
    put_varint(w, count);
    return push_frame(w, FRAME_GENERIC, slot, count * 2, TERSA_KID_GENERIC, NULL);
}

/* ==========================================================================
 * Stream frames
 * ========================================================================== */

bool tersa_writer_discard_output(tersa_writer *w) {
    if (w->err.code != TERSA_OK) return false;
    if (!w->started || !(w->flags & TERSA_WRITE_STREAM) || w->in_frame || w->depth)
        return fail(w, TERSA_ERR_USAGE, "output can only be discarded between frames of a stream");
    w->len = 0; /* nothing refers to earlier output: strings and keys live in the arena */
    return true;
}

void tersa_writer_set_sync(tersa_writer *w, uint64_t every_frames, uint64_t every_bytes) {
    w->sync_every_frames = every_frames;
    w->sync_every_bytes = every_bytes;
}

void tersa_writer_sync(tersa_writer *w) { w->want_sync = true; }

bool tersa_writer_frame_synced(const tersa_writer *w) { return w->frame_synced; }

bool tersa_write_frame_begin(tersa_writer *w) {
    if (w->err.code != TERSA_OK) return false;
    if (!w->started || !(w->flags & TERSA_WRITE_STREAM)) return fail(w, TERSA_ERR_USAGE, "not writing a stream");
    if (w->in_frame) return fail(w, TERSA_ERR_USAGE, "frame already open");
    bool sync = w->want_sync || (w->sync_every_frames && w->frames % w->sync_every_frames == 0) ||
                (w->sync_every_bytes && w->since_sync >= w->sync_every_bytes);
    w->frame_start = w->len;
    w->frame_synced = sync;
    w->want_sync = false; /* a request made inside this frame is for the next */
    if (sync) {
        if (!reset_state(w, w->dict) || !reserve(w, 10)) return false;
        put_byte(w, TAG_SYNC);
        put_byte(w, (uint8_t)((TERSA_FORMAT_VERSION << 4) | FLAG_STREAM | (w->dict ? FLAG_DICT : 0)));
        if (w->dict) {
            store_le64(w->buf + w->len, w->dict->id);
            w->len += 8;
        }
    }
    w->in_frame = true;
    w->top_values = 0;
    return true;
}

bool tersa_write_frame_end(tersa_writer *w) {
    if (w->err.code != TERSA_OK) return false;
    if (!w->in_frame || w->depth || w->top_values != 1)
        return fail(w, TERSA_ERR_USAGE, "a frame holds exactly one complete value");
    size_t body = w->len - w->frame_start;
    unsigned n = varint_size(body);
    if (!reserve(w, n)) return false;
    memmove(w->buf + w->frame_start + n, w->buf + w->frame_start, body);
    varint_put(w->buf + w->frame_start, body);
    w->len += n;
    w->in_frame = false;
    w->since_sync = (w->frame_synced ? 0 : w->since_sync) + n + body;
    w->frames++;
    return true;
}
