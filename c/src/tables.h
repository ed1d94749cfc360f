/*
 * tables.h - string and shape tables shared by the writer and the reader.
 */
#ifndef TERSA_TABLES_H
#define TERSA_TABLES_H

#include "internal.h"

/** One string-table entry: stable bytes (input, arena or dictionary). */
typedef struct str_entry {
    const uint8_t *ptr;
    size_t len;
    uint64_t hash; /* hash_bytes(ptr, len, seed) | 1 once needed, 0 before */
    bool ascii;
    bool borrowed; /* writer: ptr is the caller's (tersa_write_string_utf8_borrowed) until settled */
} str_entry;

/** One shape: its keys and its slots (both in an arena or a dictionary). */
typedef struct shape {
    const tersa_key *keys;
    const uint32_t *key_strings; /* per key string-table index; NULL for a dictionary's */
    tersa_slot *slots;
    size_t nkeys;
    uint64_t hash; /* writers: hash_keys of the keys, to find its index bucket again */
} shape;

/** Open-addressing index from a 64-bit hash to a table position (+1; 0 = empty). */
typedef struct hash_index {
    uint64_t *hashes;
    uint32_t *positions;
    size_t cap;  /* power of two, or 0 */
    size_t used;
} hash_index;

bool tersa_hash_index_grow(const tersa_alloc *a, hash_index *h, size_t need);
void tersa_hash_index_clear(hash_index *h);
void tersa_hash_index_free(const tersa_alloc *a, hash_index *h);

/** Insert (position + 1 stored); the caller has checked the key is absent. */
TERSA_INLINE void tersa_hash_index_put(hash_index *h, uint64_t hash, uint32_t position) {
    size_t mask = h->cap - 1, i = (size_t)hash & mask;
    while (h->positions[i]) i = (i + 1) & mask;
    h->hashes[i] = hash;
    h->positions[i] = position + 1;
    h->used++;
}

/** Registers of a slot point at a string's first bytes; prefixes need at most
 *  128 of them (127 to copy and one to check the UTF-8 boundary). */
#define REG_BYTES 128u

TERSA_INLINE void slot_set_str(tersa_slot *s, const uint8_t *p, size_t n) {
    s->str = p;
    s->str_len = n < REG_BYTES ? (uint32_t)n : REG_BYTES;
    s->has_str = 1;
}

/** Hash of a key sequence (kinds and bytes, in order); the first `nkept`
 *  keys' own hashes go to kept[] (kept may be NULL when nkept is 0). */
TERSA_INLINE uint64_t hash_keys_keeping(const tersa_key *keys, size_t n, uint64_t seed, uint64_t *kept, size_t nkept) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        uint64_t kh = hash_bytes(keys[i].ptr, keys[i].len, seed ^ keys[i].symbol);
        if (i < nkept) kept[i] = kh;
        h = hash_mix(h ^ kh, HASH_K1);
    }
    return h;
}

/** Hash of a key sequence (kinds and bytes, in order). */
TERSA_INLINE uint64_t hash_keys(const tersa_key *keys, size_t n, uint64_t seed) {
    return hash_keys_keeping(keys, n, seed, NULL, 0);
}

TERSA_INLINE bool keys_equal(const tersa_key *a, const tersa_key *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (a[i].len != b[i].len || a[i].symbol != b[i].symbol ||
            (a[i].len && memcmp(a[i].ptr, b[i].ptr, a[i].len) != 0))
            return false;
    }
    return true;
}

/** True if two keys of a shape are equal (O(n^2) for small shapes, hashed for large). */
bool tersa_keys_have_duplicate(const tersa_alloc *a, const tersa_key *keys, size_t n, size_t *second);

#endif /* TERSA_TABLES_H */
