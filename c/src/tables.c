/*
 * tables.c - hash index and key helpers shared by the writer and reader.
 */
#include "tables.h"

bool tersa_hash_index_grow(const tersa_alloc *a, hash_index *h, size_t need) {
    /* Keep the load factor at or below 1/2 so probes stay short. */
    if (need * 2 <= h->cap) return true;
    size_t ncap = h->cap ? h->cap : 64;
    while (ncap < need * 2) {
        if (ncap > SIZE_MAX / 2 / sizeof(uint64_t)) return false;
        ncap *= 2;
    }
    uint64_t *hashes = (uint64_t *)mem_alloc(a, ncap * sizeof(uint64_t));
    uint32_t *positions = (uint32_t *)mem_alloc(a, ncap * sizeof(uint32_t));
    if (!hashes || !positions) {
        mem_free(a, hashes, ncap * sizeof(uint64_t));
        mem_free(a, positions, ncap * sizeof(uint32_t));
        return false;
    }
    memset(positions, 0, ncap * sizeof(uint32_t));
    hash_index old = *h;
    h->hashes = hashes;
    h->positions = positions;
    h->cap = ncap;
    h->used = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.positions[i]) tersa_hash_index_put(h, old.hashes[i], old.positions[i] - 1);
    tersa_hash_index_free(a, &old);
    return true;
}

void tersa_hash_index_clear(hash_index *h) {
    if (h->cap) memset(h->positions, 0, h->cap * sizeof(uint32_t));
    h->used = 0;
}

void tersa_hash_index_free(const tersa_alloc *a, hash_index *h) {
    mem_free(a, h->hashes, h->cap * sizeof(uint64_t));
    mem_free(a, h->positions, h->cap * sizeof(uint32_t));
    h->hashes = NULL;
    h->positions = NULL;
    h->cap = h->used = 0;
}

static bool key_equal(const tersa_key *a, const tersa_key *b) {
    return a->len == b->len && a->symbol == b->symbol && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

bool tersa_keys_have_duplicate(const tersa_alloc *a, const tersa_key *keys, size_t n, size_t *second) {
    if (n <= 16) {
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (key_equal(&keys[i], &keys[j])) {
                    *second = j;
                    return true;
                }
        return false;
    }
    hash_index h = {NULL, NULL, 0, 0};
    if (!tersa_hash_index_grow(a, &h, n)) {
        /* Out of memory for the check: fall back to the quadratic scan. */
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (key_equal(&keys[i], &keys[j])) {
                    *second = j;
                    return true;
                }
        return false;
    }
    bool dup = false;
    for (size_t j = 0; j < n && !dup; j++) {
        uint64_t hv = hash_bytes(keys[j].ptr, keys[j].len, tersa_seed() ^ keys[j].symbol);
        size_t mask = h.cap - 1, i = (size_t)hv & mask;
        while (h.positions[i]) {
            if (h.hashes[i] == hv && key_equal(&keys[h.positions[i] - 1], &keys[j])) {
                *second = j;
                dup = true;
                break;
            }
            i = (i + 1) & mask;
        }
        if (!dup) tersa_hash_index_put(&h, hv, (uint32_t)j);
    }
    tersa_hash_index_free(a, &h);
    return dup;
}
