/*
 * writer_index.c - the streaming writer's hash indexes over SPEC 4's tables:
 * the string-table index (generations, growth, the loaded dictionary's
 * entries) and the shape index, and their reset at each buffer and sync
 * frame. The lookups themselves are inline in writer_internal.h and writer.c.
 */
#include "writer_internal.h"

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
    if (dict) {
        if (!keep && !load_dictionary(w, dict)) return false;
        /* The dictionary's shapes: indexed again (their slots are empty). */
        if (!tersa_hash_index_grow(w->alloc, &w->shape_index, w->st.dict_nshapes))
            return fail(w, TERSA_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < w->st.dict_nshapes; i++) tersa_hash_index_put(&w->shape_index, w->dict_shape_hashes[i], (uint32_t)i);
    }
    return true;
}
