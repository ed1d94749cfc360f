/*
 * objcache.h - the decoder-side caches of host objects that the Ruby and
 * Python bindings both keep: key objects by their bytes, and objects per
 * string-table index. Internal to the project (not in tersa.h): the bindings
 * compile the core's sources and include this header.
 *
 * Ownership. The core stores handles (uintptr_t: a Ruby VALUE, a PyObject *)
 * and never dereferences them; 0 is "empty". The binding makes the objects,
 * decides whether a stored handle holds a reference, and visits the live
 * handles (tersa_keycache_each, tersa_slots_each, the release callbacks of
 * the clearing calls) to mark, move or release them. The core's memory is
 * freed by tersa_slots_free; a tersa_keycache allocates nothing.
 *
 * Thread safety: none inside. A cache has one user at a time, whom the
 * binding guarantees (Ruby: one per decoder, which is busy-flagged and lives
 * in one Ractor; Python: the GIL).
 *
 * Policy (one for every binding):
 *   - a key of fewer than TERSA_LONG_STRING bytes is cached by its bytes in
 *     a direct-mapped table of TERSA_KEYCACHE_SIZE entries that outlives
 *     calls, verified byte for byte on every hit;
 *   - a string or key of TERSA_LONG_STRING bytes or more that has a
 *     string-table index is made once per call (per stream, until a sync
 *     frame) and shared by index: one reference byte can repeat it, and
 *     making or hashing it again each time would cost time quadratic in the
 *     input; longer keys without an index are made each time, uncached.
 */
#ifndef TERSA_OBJCACHE_H
#define TERSA_OBJCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bits.h"
#include "compiler.h"

/* A power of two. Sparse records can hold a thousand distinct keys and more;
 * a table smaller than what recurs evicts every key before its next use. */
#define TERSA_KEYCACHE_SIZE 4096
#define TERSA_LONG_STRING 64

/** Visits one live handle; may rewrite it (a moving GC) or release it. */
typedef void (*tersa_handle_fn)(uintptr_t *handle, void *arg);

/* ==========================================================================
 * Key objects by their bytes
 * ========================================================================== */

typedef struct tersa_keyslot {
    uint64_t hash;
    uintptr_t handle; /* 0: empty */
    uint32_t len;
    uint32_t kind;    /* the binding's: e.g. a String or a Symbol made from the same bytes */
} tersa_keyslot;

typedef struct tersa_keycache {
    uint64_t seed;
    tersa_keyslot slot[TERSA_KEYCACHE_SIZE];
} tersa_keycache;

/** Empty, with a per-process seed (inputs that collide on purpose only cost misses). */
void tersa_keycache_init(tersa_keycache *c);

/** Visit every live handle. */
void tersa_keycache_each(tersa_keycache *c, tersa_handle_fn fn, void *arg);

/** Empty it, passing each live handle to `release` first (NULL: none). */
void tersa_keycache_clear(tersa_keycache *c, tersa_handle_fn release, void *arg);

/** Does the cache take keys of `len` bytes? */
TERSA_INLINE bool tersa_keycache_admits(size_t len) { return len < TERSA_LONG_STRING; }

TERSA_INLINE uint64_t tersa_keycache_mix(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    tersa_u128 r = (tersa_u128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
    uint64_t x = (a ^ (b >> 29)) * 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 31) ^ b;
#endif
}

/* The hash of an admitted key (fewer than TERSA_LONG_STRING bytes): every byte counts. */
TERSA_INLINE uint64_t tersa_keycache_hash(const char *p, size_t n, uint64_t seed) {
    uint64_t a, b;
    if (TERSA_LIKELY(n <= 16)) {
        if (n >= 8) {
            a = load_le64(p);
            b = load_le64(p + n - 8);
        } else if (n >= 4) {
            a = load_le32(p);
            b = load_le32(p + n - 4);
        } else if (n > 0) {
            a = ((uint64_t)(uint8_t)p[0] << 16) | ((uint64_t)(uint8_t)p[n >> 1] << 8) | (uint8_t)p[n - 1];
            b = 0;
        } else {
            a = b = 0;
        }
        return tersa_keycache_mix(a ^ 0xe7037ed1a0b428dbull, b ^ seed ^ (uint64_t)n * 0x8ebc6af09c88c6e3ull);
    }
    uint64_t h = seed ^ (uint64_t)n * 0x8ebc6af09c88c6e3ull;
    size_t i = 0;
    for (; i + 16 < n; i += 16) h = tersa_keycache_mix(load_le64(p + i) ^ 0xa0761d6478bd642full, load_le64(p + i + 8) ^ h);
    return tersa_keycache_mix(load_le64(p + n - 16) ^ 0xe7037ed1a0b428dbull, load_le64(p + n - 8) ^ h);
}

/**
 * The handle cached for this key (`len` admitted, `kind` the binding's), or
 * 0. `bytes` returns the UTF-8 bytes of a cached handle of that kind, which
 * are compared in full. On a miss, *slot and *hash are what
 * tersa_keycache_put takes.
 */
TERSA_INLINE uintptr_t tersa_keycache_get(tersa_keycache *c, const char *p, size_t len, uint32_t kind,
                                          const char *(*bytes)(uintptr_t handle, uint32_t kind), tersa_keyslot **slot,
                                          uint64_t *hash) {
    uint64_t h = tersa_keycache_hash(p, len, c->seed ^ kind);
    tersa_keyslot *s = &c->slot[h & (TERSA_KEYCACHE_SIZE - 1)];
    *slot = s;
    *hash = h;
    if (s->hash == h && s->len == len && s->kind == kind && s->handle && memcmp(bytes(s->handle, kind), p, len) == 0)
        return s->handle;
    return 0;
}

/** Store `handle` for the key looked up; returns the handle it replaces (0 if none), for the binding to release. */
TERSA_INLINE uintptr_t tersa_keycache_put(tersa_keyslot *s, uint64_t hash, size_t len, uint32_t kind, uintptr_t handle) {
    uintptr_t old = s->handle;
    s->hash = hash;
    s->len = (uint32_t)len;
    s->kind = kind;
    s->handle = handle;
    return old;
}

/* ==========================================================================
 * Handles per index (string-table index, or 2 * index + kind)
 * ========================================================================== */

typedef struct tersa_slots {
    uintptr_t *v; /* cap entries, 0 = empty; all empty from hi on */
    size_t cap, hi;
} tersa_slots;

TERSA_INLINE uintptr_t tersa_slots_get(const tersa_slots *s, size_t i) { return i < s->cap ? s->v[i] : 0; }

/** Make room for index i (the slots stay as they were); false when out of memory. */
bool tersa_slots_reserve(tersa_slots *s, size_t i);

/** Set slot i (reserved first if need be); false when out of memory (nothing stored). */
TERSA_INLINE bool tersa_slots_set(tersa_slots *s, size_t i, uintptr_t handle) {
    if (TERSA_UNLIKELY(i >= s->cap) && !tersa_slots_reserve(s, i)) return false;
    s->v[i] = handle;
    if (i >= s->hi) s->hi = i + 1;
    return true;
}

/** Visit every live handle. */
void tersa_slots_each(tersa_slots *s, tersa_handle_fn fn, void *arg);

/** Empty every slot (keeping the memory), passing each live handle to `release` first (NULL: none). */
void tersa_slots_clear(tersa_slots *s, tersa_handle_fn release, void *arg);

/** Free the memory (the handles are the binding's to release first). */
void tersa_slots_free(tersa_slots *s);

/** The bytes the slots hold. */
TERSA_INLINE size_t tersa_slots_memsize(const tersa_slots *s) { return s->cap * sizeof(uintptr_t); }

#endif
