/*
 * state.h - the decoder state of SPEC section 4, one for both directions.
 *
 * Encoder and decoder must build the same string table, shape table, slots
 * and buffer-wide registers from the same items, so both embed one
 * tersa_state and change it only through the functions below. Each adds its
 * own lookups on top: the writer indexes the tables by hash (writer_index.c), the
 * reader reads them by position.
 */
#ifndef TERSA_STATE_H
#define TERSA_STATE_H

#include "tables.h"

typedef struct tersa_state {
    const tersa_alloc *alloc;
    arena mem;            /* one buffer's string copies, shape keys and slots */
    str_entry *strs;      /* the string table, in index order (SPEC 4.1) */
    size_t nstrs, strs_cap;
    shape *shapes;        /* the shape table (SPEC 4.2) */
    size_t nshapes, shapes_cap;

    tersa_slot root, key_slot; /* the top level's slot and the generic-map keys' (SPEC 4.3) */
    const uint8_t *last;  /* the `last` register: the last string item (SPEC 4.4) */
    uint32_t last_len;
    bool has_last;
    int64_t last_ts;      /* the timestamp register (SPEC 4.4) */

    /* The dictionary whose tables stay loaded between buffers: its strings are
     * strs[0, dict_nstrs), its shapes shapes[0, dict_nshapes) with their slots
     * end to end in dict_slots. A buffer that names it again only empties
     * those slots. */
    uint64_t dict_serial; /* 0: none loaded */
    size_t dict_nstrs, dict_nshapes;
    tersa_slot *dict_slots;
    size_t dict_slots_n, dict_slots_cap;
} tersa_state;

void tersa_state_init(tersa_state *st, const tersa_alloc *alloc);
void tersa_state_free(tersa_state *st);

/** The state at the start of a buffer or at a sync frame (SPEC 2.3, 4): the
 *  tables hold the loaded dictionary's entries if `keep_dictionary`, else
 *  nothing (the dictionary is then forgotten); every slot and register is
 *  empty. The arena's contents go with the entries they belonged to. */
void tersa_state_reset(tersa_state *st, bool keep_dictionary);

/** The tables as a buffer naming the loaded dictionary starts them: its
 *  entries only, its shapes' slots empty (part of tersa_state_reset, for a
 *  state already reset). */
void tersa_state_use_dictionary(tersa_state *st);

/** Load a dictionary's strings and shapes as the first table entries (SPEC 8),
 *  where they stay for every buffer that names it. Entries carry no hash
 *  (0); a writer adds them. False when out of memory (the state then holds
 *  no dictionary and empty tables). */
bool tersa_state_load_dictionary(tersa_state *st, const tersa_dict *dict);

/** Grow the string table for one more entry; false when out of memory. */
bool tersa_state_grow_strings(tersa_state *st);

/** Append a string-table entry: stable bytes, their hash (0 if not computed)
 *  and whether they are ASCII. A full table (TERSA_MAX_STRINGS) takes no
 *  more entries, as SPEC 4.1 says; the caller has made room otherwise. */
TERSA_INLINE void tersa_state_append_string(tersa_state *st, const uint8_t *p, size_t n, uint64_t hash, bool ascii) {
    if (TERSA_UNLIKELY(st->nstrs >= TERSA_MAX_STRINGS)) return;
    str_entry *e = &st->strs[st->nstrs++];
    e->ptr = p;
    e->len = n;
    e->hash = hash;
    e->ascii = ascii;
    e->borrowed = false;
}

/** A string item was read or written in `slot`: the slot's and the `last`
 *  registers now hold its (stable) bytes. */
TERSA_INLINE void tersa_state_note_string(tersa_state *st, tersa_slot *slot, const uint8_t *s, size_t n) {
    slot_set_str(slot, s, n);
    st->last = s;
    st->last_len = slot->str_len;
    st->has_last = true;
}

/** Grow the shape table for one more entry; false when out of memory. */
bool tersa_state_grow_shapes(tersa_state *st);

/** A map of a new shape: fresh (empty) slots for its `n` values in *slots,
 *  and the shape appended to the table unless it is full (*index is its
 *  position, or TERSA_NO_INDEX). `key_strings` (reader) and `hash` (writer)
 *  are kept with the shape. False when out of memory. */
TERSA_INLINE bool tersa_state_add_shape(tersa_state *st, const tersa_key *keys, const uint32_t *key_strings, size_t n,
                                       uint64_t hash, tersa_slot **slots, uint32_t *index) {
    tersa_slot *s = (tersa_slot *)tersa_arena_alloc(&st->mem, n ? n * sizeof(tersa_slot) : 1);
    if (!s) return false;
    if (n) memset(s, 0, n * sizeof(tersa_slot));
    *slots = s;
    *index = TERSA_NO_INDEX;
    if (st->nshapes >= TERSA_MAX_SHAPES) return true; /* a full table gives fresh slots only */
    if (TERSA_UNLIKELY(st->nshapes >= st->shapes_cap) && !tersa_state_grow_shapes(st)) return false;
    shape *sh = &st->shapes[st->nshapes];
    sh->keys = keys;
    sh->key_strings = key_strings;
    sh->slots = s;
    sh->nkeys = n;
    sh->hash = hash;
    *index = (uint32_t)st->nshapes++;
    return true;
}

#endif /* TERSA_STATE_H */
