/*
 * keys.c - distinct keys in generic maps (see keys.h).
 */
#include "keys.h"

/* Maps with up to this many keys compare against each earlier key. */
#define KID_SCAN_MAX 8

void tersa_kid_init(tersa_kid_stack *k, const tersa_alloc *alloc) {
    memset(k, 0, sizeof(*k));
    k->alloc = alloc;
}

void tersa_kid_free(tersa_kid_stack *k) {
    mem_free(k->alloc, k->bytes, k->cap);
    mem_free(k->alloc, k->ents, k->ents_cap * sizeof(tersa_kid_entry));
    k->bytes = NULL;
    k->ents = NULL;
    k->len = k->cap = k->nents = k->ents_cap = 0;
}

void tersa_kid_reset(tersa_kid_stack *k) { k->len = k->nents = 0; }

bool tersa_kid_append(tersa_kid_stack *k, const void *p, size_t n) {
    if (k->cap - k->len < n) {
        size_t ncap = k->cap ? k->cap : 256;
        while (ncap - k->len < n) {
            if (ncap > SIZE_MAX / 2) return false;
            ncap *= 2;
        }
        uint8_t *b = (uint8_t *)mem_realloc(k->alloc, k->bytes, k->cap, ncap);
        if (!b) return false;
        k->bytes = b;
        k->cap = ncap;
    }
    if (n) memcpy(k->bytes + k->len, p, n);
    k->len += n;
    return true;
}

bool tersa_kid_append_word(tersa_kid_stack *k, uint8_t type, uint64_t word) {
    uint8_t b[9];
    b[0] = type;
    store_le64(b + 1, word);
    return tersa_kid_append(k, b, 9);
}

bool tersa_kid_append_bytes(tersa_kid_stack *k, uint8_t type, const void *p, size_t n) {
    return tersa_kid_append_word(k, type, (uint64_t)n) && tersa_kid_append(k, p, n);
}

void tersa_kid_open(const tersa_kid_stack *k, tersa_kid_map *m) {
    m->bytes_base = k->len;
    m->ents_base = k->nents;
    m->index = NULL;
    m->index_cap = 0;
}

static bool kid_equal(const tersa_kid_stack *k, const tersa_kid_entry *a, const tersa_kid_entry *b) {
    return a->hash == b->hash && a->len == b->len && memcmp(k->bytes + a->off, k->bytes + b->off, a->len) == 0;
}

/* Rebuild m's index for at least `need` keys (load <= 1/2). */
static bool kid_reindex(tersa_kid_stack *k, tersa_kid_map *m, size_t need) {
    size_t cap = 32;
    while (cap < need * 2) {
        if (cap > SIZE_MAX / 2 / sizeof(uint32_t)) return false;
        cap *= 2;
    }
    uint32_t *ix = (uint32_t *)mem_alloc(k->alloc, cap * sizeof(uint32_t));
    if (!ix) return false;
    memset(ix, 0, cap * sizeof(uint32_t));
    for (size_t e = m->ents_base; e < k->nents; e++) {
        size_t i = (size_t)k->ents[e].hash & (cap - 1);
        while (ix[i]) i = (i + 1) & (cap - 1);
        ix[i] = (uint32_t)(e - m->ents_base + 1);
    }
    mem_free(k->alloc, m->index, m->index_cap * sizeof(uint32_t));
    m->index = ix;
    m->index_cap = cap;
    return true;
}

int tersa_kid_insert(tersa_kid_stack *k, tersa_kid_map *m, size_t off) {
    tersa_kid_entry e;
    e.off = off;
    e.len = k->len - off;
    /* Seeded: the keys may come from whoever supplied the data. */
    e.hash = hash_bytes(k->bytes + off, e.len, tersa_seed());
    size_t count = k->nents - m->ents_base;
    if (count > UINT32_MAX - 2) return -1;
    if (count < KID_SCAN_MAX) {
        for (size_t j = m->ents_base; j < k->nents; j++)
            if (kid_equal(k, &k->ents[j], &e)) return 0;
    } else {
        if ((count + 1) * 2 > m->index_cap && !kid_reindex(k, m, count + 1)) return -1;
        size_t mask = m->index_cap - 1, i = (size_t)e.hash & mask;
        for (; m->index[i]; i = (i + 1) & mask)
            if (kid_equal(k, &k->ents[m->ents_base + m->index[i] - 1], &e)) return 0;
        m->index[i] = (uint32_t)(count + 1);
    }
    if (!tersa_grow_array(k->alloc, (void **)&k->ents, &k->ents_cap, k->nents + 1, sizeof(tersa_kid_entry))) return -1;
    k->ents[k->nents++] = e;
    return 1;
}

void tersa_kid_close(tersa_kid_stack *k, tersa_kid_map *m, bool keep_bytes) {
    mem_free(k->alloc, m->index, m->index_cap * sizeof(uint32_t));
    m->index = NULL;
    m->index_cap = 0;
    k->nents = m->ents_base;
    if (!keep_bytes) k->len = m->bytes_base;
}
