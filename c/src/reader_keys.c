/*
 * reader_keys.c - the pull reader's check that the scalar keys of a generic
 * map are distinct (SPEC 1), and the cached string hashes it and the shape
 * check compare keys by.
 */
#include "reader_internal.h"

/* The hash of a string that may be a table entry, each entry hashed once:
 * a one-byte reference can repeat a long string as a key at every map, and
 * hashing it anew each time would make small inputs cost quadratic time. */
uint64_t tersa_reader_string_hash(tersa_reader *r, const char *ptr, size_t len, uint32_t index) {
    if (index == TERSA_NO_INDEX || index >= r->st.nstrs) return hash_bytes(ptr, len, r->seed) | 1;
    str_entry *e = &r->st.strs[index];
    if (!e->hash) e->hash = hash_bytes(e->ptr, e->len, r->seed) | 1;
    return e->hash;
}

/* ==========================================================================
 * Generic-map duplicate keys (SPEC 1: scalar keys MUST be distinct)
 * ========================================================================== */

static bool gkey_equal(const gkey *a, const gkey *b) {
    return a->hash == b->hash && a->type == b->type && a->word == b->word && a->word2 == b->word2 &&
           a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

/* Record the key `item` of generic-map frame `f`; false with duplicate_key if seen. */
bool tersa_reader_note_generic_key(tersa_reader *r, rframe *f, const tersa_item *item) {
    gkey k;
    memset(&k, 0, sizeof(k));
    k.type = (uint8_t)item->type;
    switch (item->type) {
    case TERSA_ARRAY:
    case TERSA_MAP:
    case TERSA_GENERIC_MAP:
        return true; /* container keys: hosts compare those themselves (SPEC 1, MAY) */
    case TERSA_INT:
        k.word = (uint64_t)item->v.i;
        break;
    case TERSA_UINT:
        k.word = item->v.u;
        break;
    case TERSA_FLOAT:
        memcpy(&k.word, &item->v.f, 8);
        break;
    case TERSA_STRING:
    case TERSA_SYMBOL:
        k.ptr = (const uint8_t *)item->v.str.ptr;
        k.len = item->v.str.len;
        k.word = tersa_reader_string_hash(r, item->v.str.ptr, item->v.str.len, item->v.str.index);
        break;
    case TERSA_BINARY:
        k.ptr = item->v.bin.ptr;
        k.len = item->v.bin.len;
        break;
    case TERSA_BIGINT:
        k.ptr = item->v.big.mag;
        k.len = item->v.big.len;
        k.word2 = item->v.big.negative;
        break;
    case TERSA_EXT:
        k.ptr = item->v.ext.ptr;
        k.len = item->v.ext.len;
        k.word2 = item->v.ext.type;
        break;
    case TERSA_TIME:
        k.word = (uint64_t)item->v.time.seconds;
        k.word2 = ((uint64_t)item->v.time.nanos << 32) | ((uint64_t)item->v.time.zone << 16) |
                  (uint16_t)(item->v.time.zone == TERSA_ZONE_OFFSET ? item->v.time.offset : 0);
        break;
    default:
        break;
    }
    /* Strings carry their (cached) hash in word; other kinds are hashed here. */
    uint64_t bytes_hash = item->type == TERSA_STRING || item->type == TERSA_SYMBOL ? k.word : hash_bytes(k.ptr, k.len, k.word ^ r->seed);
    k.hash = hash_mix(bytes_hash ^ k.type, k.word2 ^ HASH_K2);
    k.used = 1;
    if ((f->keys_used + 1) * 2 > f->keys_cap) {
        size_t cap = f->keys_cap ? f->keys_cap * 2 : 4;
        gkey *t = (gkey *)mem_alloc(r->alloc, cap * sizeof(gkey));
        if (!t) FAIL(TERSA_ERR_NOMEM, f->tag_offset, "out of memory");
        memset(t, 0, cap * sizeof(gkey));
        for (size_t j = 0; j < f->keys_cap; j++) {
            if (!f->keys[j].used) continue;
            size_t h = (size_t)f->keys[j].hash & (cap - 1);
            while (t[h].used) h = (h + 1) & (cap - 1);
            t[h] = f->keys[j];
        }
        mem_free(r->alloc, f->keys, f->keys_cap * sizeof(gkey));
        f->keys = t;
        f->keys_cap = cap;
    }
    size_t mask = f->keys_cap - 1, i = (size_t)k.hash & mask;
    for (; f->keys[i].used; i = (i + 1) & mask)
        if (gkey_equal(&f->keys[i], &k)) FAIL(TERSA_ERR_DUPLICATE_KEY, f->tag_offset, "key repeated in a map");
    f->keys[i] = k;
    f->keys_used++;
    return true;
}
