/*
 * state.c - the tables, slots and registers of SPEC section 4 and their
 * update rules, shared by the writer and the reader (see state.h).
 */
#include "state.h"

void tersa_state_init(tersa_state *st, const tersa_alloc *alloc) {
    memset(st, 0, sizeof(*st));
    st->alloc = alloc;
    tersa_arena_init(&st->mem, alloc);
}

void tersa_state_free(tersa_state *st) {
    const tersa_alloc *a = st->alloc;
    tersa_arena_free(&st->mem);
    mem_free(a, st->strs, st->strs_cap * sizeof(str_entry));
    mem_free(a, st->shapes, st->shapes_cap * sizeof(shape));
    mem_free(a, st->dict_slots, st->dict_slots_cap * sizeof(tersa_slot));
    memset(st, 0, sizeof(*st));
}

void tersa_state_use_dictionary(tersa_state *st) {
    bool dict = st->dict_serial != 0;
    st->nstrs = dict ? st->dict_nstrs : 0;
    st->nshapes = dict ? st->dict_nshapes : 0;
    if (dict && st->dict_slots_n) memset(st->dict_slots, 0, st->dict_slots_n * sizeof(tersa_slot));
}

void tersa_state_reset(tersa_state *st, bool keep_dictionary) {
    tersa_arena_reset(&st->mem);
    if (!keep_dictionary) st->dict_serial = 0;
    tersa_state_use_dictionary(st);
    memset(&st->root, 0, sizeof(st->root));
    memset(&st->key_slot, 0, sizeof(st->key_slot));
    st->has_last = false;
    st->last_ts = 0;
}

bool tersa_state_grow_strings(tersa_state *st) {
    return tersa_grow_array(st->alloc, (void **)&st->strs, &st->strs_cap, st->nstrs + 1, sizeof(str_entry));
}

bool tersa_state_load_dictionary(tersa_state *st, const tersa_dict *dict) {
    st->dict_serial = 0;
    st->nstrs = st->nshapes = 0;
    size_t ns = dict->nshapes, nslots = dict->shape_offsets[ns];
    if (!tersa_grow_array(st->alloc, (void **)&st->strs, &st->strs_cap, dict->nstrings, sizeof(str_entry)) ||
        !tersa_grow_array(st->alloc, (void **)&st->shapes, &st->shapes_cap, ns, sizeof(shape)) ||
        !tersa_grow_array(st->alloc, (void **)&st->dict_slots, &st->dict_slots_cap, nslots, sizeof(tersa_slot)))
        return false;
    for (size_t i = 0; i < dict->nstrings; i++) {
        const tersa_key *k = &dict->strings[i];
        bool ascii;
        tersa_utf8_valid((const uint8_t *)k->ptr, k->len, &ascii);
        tersa_state_append_string(st, (const uint8_t *)k->ptr, k->len, 0, ascii);
    }
    for (size_t i = 0; i < ns; i++) {
        size_t off = dict->shape_offsets[i];
        shape *s = &st->shapes[i];
        s->keys = dict->shape_keys + off;
        s->key_strings = NULL;
        s->slots = st->dict_slots + off;
        s->nkeys = dict->shape_offsets[i + 1] - off;
        s->hash = 0;
    }
    if (nslots) memset(st->dict_slots, 0, nslots * sizeof(tersa_slot));
    st->nshapes = ns;
    st->dict_slots_n = nslots;
    st->dict_nstrs = st->nstrs;
    st->dict_nshapes = ns;
    st->dict_serial = dict->serial;
    return true;
}

bool tersa_state_grow_shapes(tersa_state *st) {
    return tersa_grow_array(st->alloc, (void **)&st->shapes, &st->shapes_cap, st->nshapes + 1, sizeof(shape));
}
