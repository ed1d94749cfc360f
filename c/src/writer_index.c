/*
 * writer_index.c - the streaming writer's hash indexes over SPEC 4's tables:
 * the string-table index (generations, growth, the loaded dictionary's
 * entries) and the shape index, and their reset at each buffer and sync
 * frame. The lookups themselves are inline in writer_internal.h and writer.c.
 */
#include "writer_internal.h"

/* Settling (tersa_writer_settle_borrowed, below) visits every slot register
 * and shape key, however few strings were lent since the last settle: a
 * buffer pays at most about LEND_CREDIT visits (and SETTLE_BASE_COST for each
 * settle) before its borrowed calls copy instead. */
#define LEND_CREDIT 32768
#define SETTLE_BASE_COST 64

/* Entries an index of `cap` slots holds. */
static size_t index_limit(size_t cap) { return cap >= SIDX_MAX_CAP ? TERSA_MAX_STRINGS : cap / 2; }

void tersa_writer_set_str_limit(tersa_writer *w) {
    if (w->st.nstrs >= TERSA_MAX_STRINGS) {
        w->str_limit = SIZE_MAX; /* no entry is added any more */
        return;
    }
    size_t ix = index_limit(w->sidx_cap);
    w->str_limit = w->st.strs_cap < ix ? w->st.strs_cap : ix;
}

/* An index of at least `need` entries' room holding the first `indexed`
 * entries of the table, inserted in table order from their kept hashes (one
 * sequential pass over the entries): a loaded dictionary's come first, so
 * that no probe sequence leading to one passes a slot that the next buffer
 * will see as empty. */
static bool resize_string_index(tersa_writer *w, size_t need, size_t indexed) {
    size_t cap = w->sidx_cap ? w->sidx_cap : 256;
    while (index_limit(cap) < need) cap *= 2;
    if (cap == w->sidx_cap) return true;
    uint64_t *ix = (uint64_t *)mem_alloc(w->alloc, cap * sizeof(uint64_t));
    if (!ix) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    memset(ix, 0, cap * sizeof(uint64_t));
    size_t ndict = w->st.dict_serial ? w->st.dict_nstrs : 0;
    const str_entry *strs = w->st.strs;
    for (size_t pos = 0; pos < indexed; pos++) {
        uint64_t h = strs[pos].hash, gen = pos < ndict ? SIDX_DICT_GEN : w->sidx_gen;
        size_t i = (size_t)h & (cap - 1);
        while (ix[i]) i = (i + 1) & (cap - 1);
        ix[i] = (h & SIDX_HASH) | gen | (uint64_t)(pos + 1);
    }
    mem_free(w->alloc, w->sidx, w->sidx_cap * sizeof(uint64_t));
    w->sidx = ix;
    w->sidx_cap = cap;
    return true;
}

bool tersa_writer_grow_strings(tersa_writer *w) {
    size_t n = w->st.nstrs;
    if (n == w->st.strs_cap && n < TERSA_MAX_STRINGS && !tersa_state_grow_strings(&w->st))
        return fail(w, TERSA_ERR_NOMEM, "out of memory");
    /* Every entry is indexed (entries stop at TERSA_MAX_STRINGS). */
    if (!resize_string_index(w, n < TERSA_MAX_STRINGS ? n + 1 : TERSA_MAX_STRINGS, n)) return false;
    tersa_writer_set_str_limit(w);
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
    /* No entry is indexed yet: the index is sized for them all at once. */
    ok = ok && resize_string_index(w, w->st.nstrs, 0);
    for (size_t i = 0; ok && i < w->st.nstrs; i++) {
        str_entry *e = &w->st.strs[i];
        e->hash = hash_bytes(e->ptr, e->len, w->seed);
        uint64_t *slot = NULL;
        str_find(w, e->ptr, e->len, e->hash, &slot);
        *slot = (e->hash & SIDX_HASH) | SIDX_DICT_GEN | (uint64_t)(i + 1);
    }
    w->sidx_gen = gen;
    if (!ok) {
        clear_string_index(w);
        tersa_state_reset(&w->st, false);
        tersa_writer_set_str_limit(w);
        return fail(w, TERSA_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < w->st.nshapes; i++) {
        shape *s = &w->st.shapes[i];
        s->hash = w->dict_shape_hashes[i] = hash_keys(s->keys, s->nkeys, w->seed);
    }
    return true;
}

bool tersa_writer_reset_tables(tersa_writer *w, const tersa_dict *dict) {
    /* The replayed template's entries and keys go with the tables. */
    if (TERSA_UNLIKELY(w->md_live)) {
        tersa_mapdef_release(w->md_live);
        w->md_live = NULL;
    }
    /* str_find needs an index to probe from the first string on. */
    if (TERSA_UNLIKELY(!w->sidx_cap) && !tersa_writer_grow_strings(w)) return false;
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
    tersa_writer_set_str_limit(w);
    w->last_shape = TERSA_NO_INDEX;
    w->key_memo_credit = KEY_MEMO_CREDIT;
    w->lent = false;
    w->may_lend = !(w->flags & TERSA_WRITE_STREAM);
    w->lend_credit = LEND_CREDIT;
    if (dict) {
        if (!keep && !load_dictionary(w, dict)) return false;
        /* The dictionary's shapes: indexed again (their slots are empty). */
        if (!tersa_hash_index_grow(w->alloc, &w->shape_index, w->st.dict_nshapes))
            return fail(w, TERSA_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < w->st.dict_nshapes; i++) tersa_hash_index_put(&w->shape_index, w->dict_shape_hashes[i], (uint32_t)i);
    }
    w->settled = w->st.nstrs;
    return true;
}

/* ==========================================================================
 * Borrowed strings: settling (tersa_writer_settle_borrowed)
 * ========================================================================== */

/* A lent string's bytes moved to the arena: `from` (the caller's) -> `to`. */
typedef struct lent_move {
    const uint8_t *from, *to;
    size_t len;
} lent_move;

typedef struct lent_moves {
    lent_move *m;
    size_t mask;
    uintptr_t lo, hi; /* every `from` is in [lo, hi] */
} lent_moves;

TERSA_INLINE size_t move_bucket(const lent_moves *mv, const void *p) {
    return (size_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 32) & mv->mask;
}

/* The move recorded for bytes lent at p, or the empty bucket where it goes. */
TERSA_INLINE lent_move *move_of(const lent_moves *mv, const void *p) {
    size_t i = move_bucket(mv, p);
    while (mv->m[i].from && mv->m[i].from != p) i = (i + 1) & mv->mask;
    return &mv->m[i];
}

/* Where the bytes lent at p now are, or NULL when p is not a moved string's start. */
TERSA_INLINE const uint8_t *moved_to(const lent_moves *mv, const void *p) {
    if ((uintptr_t)p < mv->lo || (uintptr_t)p > mv->hi) return NULL;
    const lent_move *m = move_of(mv, p);
    return m->from ? m->to : NULL;
}

TERSA_INLINE void move_register(const lent_moves *mv, tersa_slot *s) {
    if (!s->has_str) return;
    const uint8_t *to = moved_to(mv, s->str);
    if (to) s->str = to;
}

/* Copy every borrowed entry from `from` on into the arena (entries lent at
 * one address share the copy of the longest: registers read at most that
 * many bytes from their start). False when out of memory. */
static bool copy_lent_entries(tersa_writer *w, lent_moves *mv, size_t from) {
    str_entry *strs = w->st.strs;
    for (size_t i = from; i < w->st.nstrs; i++) {
        str_entry *e = &strs[i];
        if (!e->borrowed) continue;
        e->borrowed = false;
        lent_move *m = move_of(mv, e->ptr);
        if (m->from && m->len >= e->len) {
            e->ptr = m->to;
            continue;
        }
        const uint8_t *to = (const uint8_t *)tersa_arena_copy(&w->st.mem, e->ptr, e->len);
        if (!to) return fail(w, TERSA_ERR_NOMEM, "out of memory");
        m->from = e->ptr;
        m->to = to;
        m->len = e->len;
        if ((uintptr_t)e->ptr < mv->lo) mv->lo = (uintptr_t)e->ptr;
        if ((uintptr_t)e->ptr > mv->hi) mv->hi = (uintptr_t)e->ptr;
        e->ptr = to;
    }
    return true;
}

/* Point every register and shape key that starts at a moved string at its
 * copy: the root's and the keys' slots, `last`, every shape's slots and
 * keys, and the slot under each open container's cursor (a map of a shape
 * the full shape table did not take has slots of its own). The number of
 * registers and keys visited. */
static size_t move_pointers(tersa_writer *w, const lent_moves *mv) {
    tersa_state *st = &w->st;
    move_register(mv, &st->root);
    move_register(mv, &st->key_slot);
    if (st->has_last) {
        const uint8_t *to = moved_to(mv, st->last);
        if (to) st->last = to;
    }
    size_t visits = 3;
    for (size_t i = 0; i < st->nshapes; i++) {
        shape *sh = &st->shapes[i];
        for (size_t k = 0; k < sh->nkeys; k++) move_register(mv, &sh->slots[k]);
        visits += sh->nkeys;
        /* A dictionary's keys are its own; the others are in the arena. */
        if (i < st->dict_nshapes && st->dict_serial) continue;
        tersa_key *keys = (tersa_key *)(uintptr_t)sh->keys;
        for (size_t k = 0; k < sh->nkeys; k++) {
            const uint8_t *to = keys[k].len >= MIN_TABLE_LEN ? moved_to(mv, keys[k].ptr) : NULL;
            if (to) keys[k].ptr = (const char *)to;
        }
        visits += sh->nkeys;
    }
    for (size_t d = 0; d < w->depth; d++) {
        bool inner = d + 1 == w->depth;
        tersa_slot *cur = inner ? w->cur : w->stack[d].cur;
        size_t left = inner ? w->cur_left : w->stack[d].left;
        /* A map's cursor is the next value's slot (none past its last). */
        if (w->stack[d].kind != FRAME_MAP || left) move_register(mv, cur);
    }
    return visits + w->depth;
}

TERSA_NOINLINE static bool settle_lent(tersa_writer *w) {
    w->lent = false;
    size_t from = w->settled, nlent = 0;
    for (size_t i = from; i < w->st.nstrs; i++) nlent += w->st.strs[i].borrowed;
    w->settled = w->st.nstrs;
    if (!nlent) return true;
    size_t cap = 8;
    while (cap < nlent * 2) cap *= 2;
    lent_moves mv = {(lent_move *)mem_alloc(w->alloc, cap * sizeof(lent_move)), cap - 1, UINTPTR_MAX, 0};
    if (!mv.m) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    memset(mv.m, 0, cap * sizeof(lent_move));
    bool ok = copy_lent_entries(w, &mv, from);
    size_t visits = ok ? move_pointers(w, &mv) : 0;
    mem_free(w->alloc, mv.m, cap * sizeof(lent_move));
    w->lend_credit -= (int64_t)(visits + SETTLE_BASE_COST);
    if (w->lend_credit <= 0) w->may_lend = false;
    return ok;
}

bool tersa_writer_settle_borrowed(tersa_writer *w) {
    if (TERSA_LIKELY(!w->lent)) return w->err.code == TERSA_OK;
    return w->err.code == TERSA_OK && settle_lent(w);
}
