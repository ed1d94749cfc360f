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
 *     input; longer keys without an index are made each time, uncached;
 *   - a shape (a map's key list) is looked up by its key bytes in a cache of
 *     TERSA_SHAPECACHE_SETS x TERSA_SHAPECACHE_WAYS entries (least recently
 *     used replaced) that outlives calls and holds the key objects and the
 *     shape's template; shapes of more than TERSA_SHAPECACHE_MAX_KEYS keys or
 *     TERSA_SHAPECACHE_MAX_BYTES key bytes are not cached;
 *   - a template is made at a shape's second use in a call, or at its first
 *     use in the TERSA_SHAPECACHE_TEMPLATE_CALLS-th call that meets it (a
 *     count in the cache entry), never at its first use otherwise: making
 *     one costs about what building one map does, most shapes of sparse
 *     records serve one map per call, and the shapes of a stream of small
 *     messages serve one map per buffer;
 *   - per shape-table index, the key objects of a call (stream, until a sync
 *     frame) are made once and shared by the shape's maps (tersa_shapetab).
 */
#ifndef TERSA_OBJCACHE_H
#define TERSA_OBJCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bits.h"
#include "compiler.h"
#include "hash.h"
#include "reader_runs.h"
#include "tersa.h"

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

/**
 * The handle cached for this key (`len` admitted, `kind` the binding's), or
 * 0. `bytes` returns the UTF-8 bytes of a cached handle of that kind, which
 * are compared in full. On a miss, *slot and *hash are what
 * tersa_keycache_put takes.
 */
TERSA_INLINE uintptr_t tersa_keycache_get(tersa_keycache *c, const char *p, size_t len, uint32_t kind,
                                          const char *(*bytes)(uintptr_t handle, uint32_t kind), tersa_keyslot **slot,
                                          uint64_t *hash) {
    uint64_t h = hash_bytes(p, len, c->seed ^ kind);
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


/* ==========================================================================
 * Shapes by their key bytes, across calls
 * ========================================================================== */

/* 4,096 entries: a buffer of sparse records can hold a thousand shapes and
 * more, and a cache smaller than what recurs (with the shapes of the buffers
 * before it, and set conflicts) evicts entries before their next use. */
#define TERSA_SHAPECACHE_SETS 1024
#define TERSA_SHAPECACHE_WAYS 4
#define TERSA_SHAPECACHE_MAX_KEYS 64
#define TERSA_SHAPECACHE_MAX_BYTES 2048

typedef struct tersa_shapeent {
    uint64_t hash;
    uint32_t n;
    uint32_t kind;      /* the binding's: what else the key objects depend on (an option) */
    uint32_t flags;     /* the binding's, stored with the keys (e.g. two keys equal as host objects) */
    uint32_t total;     /* the key bytes */
    uint32_t calls;     /* the calls that met the shape (tersa_shapecache_recurs), saturating */
    uintptr_t *keys;    /* n handles (0: empty entry), then in the same block: */
    uint16_t *lens;     /*   n key lengths, high bit = symbol */
    char *bytes;        /*   the keys' bytes, concatenated */
    uintptr_t tmpl;     /* the shape's template, 0 until the rule above makes one */
    uint64_t used;      /* LRU stamp */
    uint64_t born;      /* when the entry took these keys: a link to it holds while born is unchanged */
} tersa_shapeent;

typedef struct tersa_shapecache {
    uint64_t clock;
    tersa_shapeent ent[TERSA_SHAPECACHE_SETS][TERSA_SHAPECACHE_WAYS];
} tersa_shapecache;

/* The bytes p[0..n) (n <= 8) as a word, reading nothing outside them. */
TERSA_INLINE uint64_t tersa_shapecache_upto8(const char *p, size_t n) {
    if (n >= 4) return (uint64_t)load_le32(p) | ((uint64_t)load_le32(p + n - 4) << 32);
    if (n == 0) return 0;
    const unsigned char *u = (const unsigned char *)p;
    return (uint64_t)u[0] | ((uint64_t)u[n >> 1] << 8) | ((uint64_t)u[n - 1] << 16);
}

/**
 * The hash of a key list the cache admits (in *total the key bytes), or 0
 * when it does not admit it (then nothing is looked up or stored). The key
 * count, the lengths, the total and the heads of three keys: cheap, and only
 * picks the set; every hit is confirmed by comparing all the bytes.
 */
TERSA_INLINE uint64_t tersa_shapecache_hash(const tersa_key *keys, size_t n, size_t *total) {
    if (n == 0 || n > TERSA_SHAPECACHE_MAX_KEYS) return 0;
    size_t t = 0;
    uint64_t lens = 0;
    for (size_t i = 0; i < n; i++) {
        if (keys[i].len > 0x7FFF) return 0;
        t += keys[i].len;
        lens = lens * 31 + keys[i].len + ((uint64_t)keys[i].symbol << 20);
    }
    if (t > TERSA_SHAPECACHE_MAX_BYTES) return 0;
    *total = t;
    const tersa_key *a = &keys[0], *b = &keys[n / 2], *c = &keys[n - 1];
    uint64_t h = (0x9E3779B97F4A7C15ull ^ n ^ ((uint64_t)t << 16)) * 0xff51afd7ed558ccdull;
    h = (h ^ lens) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ tersa_shapecache_upto8(a->ptr, a->len < 8 ? a->len : 8)) * 0xff51afd7ed558ccdull;
    h = (h ^ tersa_shapecache_upto8(b->ptr, b->len < 8 ? b->len : 8)) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ tersa_shapecache_upto8(c->ptr, c->len < 8 ? c->len : 8)) * 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

/* a[0..n) == b[0..n), without a call for short keys. */
TERSA_INLINE bool tersa_shapecache_bytes_eq(const char *a, const char *b, size_t n) {
    if (n >= 8) {
        if (n > 16) return memcmp(a, b, n) == 0;
        return load_le64(a) == load_le64(b) && load_le64(a + n - 8) == load_le64(b + n - 8);
    }
    if (n >= 4) return load_le32(a) == load_le32(b) && load_le32(a + n - 4) == load_le32(b + n - 4);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return false;
    return true;
}

TERSA_INLINE bool tersa_shapecache_matches(const tersa_shapeent *e, uint64_t h, const tersa_key *keys, size_t n,
                                           uint32_t kind) {
    if (!e->keys || e->hash != h || e->n != n || e->kind != kind) return false;
    const char *b = e->bytes;
    for (size_t i = 0; i < n; i++) {
        size_t len = e->lens[i] & 0x7FFF;
        if (len != keys[i].len || (e->lens[i] >> 15) != (unsigned)keys[i].symbol ||
            !tersa_shapecache_bytes_eq(b, keys[i].ptr, len))
            return false;
        b += len;
    }
    return true;
}

/* Entries stored by their definition's bytes (tersa_shapecache_put_raw)
 * carry this bit in their kind: their `bytes` are the definition's, tags
 * included, so only raw lookups may match them, and raw lookups match
 * nothing else. A shape met both ways takes two entries. */
#define TERSA_SHAPECACHE_RAW 0x80000000u

/**
 * The hash of a shape given by its definition's key bytes p[0..len) (a map
 * item with TERSA_ITEM_PLAIN_KEYS: the n keys, each a length tag then its
 * bytes), or 0 when the cache does not admit it. The count, the length and
 * four words spread over the bytes (the first, the last and two between, so
 * that shapes sharing their first and last keys still spread over the sets):
 * cheap, and only picks the set; every hit compares all the bytes.
 */
TERSA_INLINE uint64_t tersa_shapecache_hash_raw(const uint8_t *p, size_t len, size_t n) {
    if (n == 0 || n > TERSA_SHAPECACHE_MAX_KEYS || len > TERSA_SHAPECACHE_MAX_BYTES) return 0;
    uint64_t h = (0x9E3779B97F4A7C15ull ^ n ^ ((uint64_t)len << 16)) * 0xff51afd7ed558ccdull;
    if (len >= 8) {
        h = (h ^ load_le64(p)) * 0xc4ceb9fe1a85ec53ull;
        h = (h ^ load_le64(p + len - 8)) * 0xff51afd7ed558ccdull;
        h = (h ^ load_le64(p + (len - 8) / 3)) * 0xc4ceb9fe1a85ec53ull;
        h = (h ^ load_le64(p + 2 * (len - 8) / 3)) * 0xff51afd7ed558ccdull;
    } else {
        h = (h ^ tersa_shapecache_upto8((const char *)p, len)) * 0xc4ceb9fe1a85ec53ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

/** tersa_shapecache_get for a shape given by its definition's key bytes; `hash` from tersa_shapecache_hash_raw. */
TERSA_INLINE tersa_shapeent *tersa_shapecache_get_raw(tersa_shapecache *c, uint64_t hash, const uint8_t *p, size_t len,
                                                      size_t n, uint32_t kind) {
    tersa_shapeent *set = c->ent[hash & (TERSA_SHAPECACHE_SETS - 1)];
    kind |= TERSA_SHAPECACHE_RAW;
    for (int w = 0; w < TERSA_SHAPECACHE_WAYS; w++) {
        tersa_shapeent *e = &set[w];
        if (e->keys && e->hash == hash && e->n == n && e->kind == kind && e->total == len &&
            tersa_shapecache_bytes_eq(e->bytes, (const char *)p, len)) {
            e->used = ++c->clock;
            return e;
        }
    }
    return NULL;
}

/* The number of calls that must meet a shape before its first use in a call
 * makes its template: a shape each call uses once (sparse records, decoded
 * again) would pay for a template per map, while a shape that serves one map
 * per small buffer (a message stream) gains from one after a few buffers. */
#define TERSA_SHAPECACHE_TEMPLATE_CALLS 3

/** Counts one more call meeting entry e's shape (call it once per call, at the shape's first
 * sighting); true when the shape has met enough calls for that first use to make its template. */
TERSA_INLINE bool tersa_shapecache_recurs(tersa_shapeent *e) {
    if (e->calls < UINT32_MAX) e->calls++;
    return e->calls >= TERSA_SHAPECACHE_TEMPLATE_CALLS;
}

/** The entry holding these keys of this kind (its LRU stamp renewed), or NULL; `hash` from tersa_shapecache_hash. */
TERSA_INLINE tersa_shapeent *tersa_shapecache_get(tersa_shapecache *c, uint64_t hash, const tersa_key *keys, size_t n,
                                                  uint32_t kind) {
    tersa_shapeent *set = c->ent[hash & (TERSA_SHAPECACHE_SETS - 1)];
    for (int w = 0; w < TERSA_SHAPECACHE_WAYS; w++)
        if (tersa_shapecache_matches(&set[w], hash, keys, n, kind)) {
            set[w].used = ++c->clock;
            return &set[w];
        }
    return NULL;
}

/**
 * Store these keys and their objects (handles[0..n)) in place of the set's
 * least recently used entry, whose handles (keys, template) go to `release`
 * after the swap (NULL: none). Returns the entry, or NULL when out of memory
 * (nothing stored). A binding whose handles hold references takes one for
 * each stored key itself (the entry's keys[0..n)) after a successful put.
 */
tersa_shapeent *tersa_shapecache_put(tersa_shapecache *c, uint64_t hash, const tersa_key *keys, size_t n, size_t total,
                                     uint32_t kind, uint32_t flags, const uintptr_t *handles, tersa_handle_fn release,
                                     void *arg);

/** tersa_shapecache_put for a shape given by its definition's key bytes p[0..len) (see
 *  tersa_shapecache_hash_raw), with its keys as read (for their lengths). */
tersa_shapeent *tersa_shapecache_put_raw(tersa_shapecache *c, uint64_t hash, const uint8_t *p, size_t len,
                                         const tersa_key *keys, size_t n, uint32_t kind, uint32_t flags,
                                         const uintptr_t *handles, tersa_handle_fn release, void *arg);

/* A map item's shape as the shape cache looks it up: by its definition's
 * bytes where the reader marked its keys plain (TERSA_ITEM_PLAIN_KEYS: one
 * hash over the span, one byte comparison), else key by key. One rule for
 * every binding: tersa_shapecache_find, then tersa_shapecache_add on a miss. */
typedef struct tersa_shapequery {
    const tersa_key *keys;
    size_t n;
    const uint8_t *span; /* the definition's key bytes, or NULL: key by key */
    size_t total;        /* bytes of the span, or of the keys */
    uint64_t hash;       /* 0: the shape is not cached */
} tersa_shapequery;

/** The entry for map item it's shape of this kind, or NULL; fills *q for tersa_shapecache_add. */
TERSA_INLINE tersa_shapeent *tersa_shapecache_find(tersa_shapecache *c, const tersa_item *it, uint32_t kind,
                                                   tersa_shapequery *q) {
    size_t n = it->v.map.count;
    q->keys = it->v.map.keys;
    q->n = n;
    q->span = NULL;
    q->total = 0;
    if (it->flags & TERSA_ITEM_PLAIN_KEYS) {
        const tersa_key *last = &q->keys[n - 1];
        q->span = (const uint8_t *)q->keys[0].ptr - 1;
        q->total = (size_t)((const uint8_t *)last->ptr + last->len - q->span);
        q->hash = tersa_shapecache_hash_raw(q->span, q->total, n);
        return q->hash ? tersa_shapecache_get_raw(c, q->hash, q->span, q->total, n, kind) : NULL;
    }
    q->hash = tersa_shapecache_hash(q->keys, n, &q->total);
    return q->hash ? tersa_shapecache_get(c, q->hash, q->keys, n, kind) : NULL;
}

/** Store the shape a tersa_shapecache_find missed (q->hash != 0), as tersa_shapecache_put(_raw) does. */
TERSA_INLINE tersa_shapeent *tersa_shapecache_add(tersa_shapecache *c, const tersa_shapequery *q, uint32_t kind,
                                                  uint32_t flags, const uintptr_t *handles, tersa_handle_fn release,
                                                  void *arg) {
    return q->span ? tersa_shapecache_put_raw(c, q->hash, q->span, q->total, q->keys, q->n, kind, flags, handles,
                                              release, arg)
                   : tersa_shapecache_put(c, q->hash, q->keys, q->n, q->total, kind, flags, handles, release, arg);
}

/** Visit every live handle (keys and templates). */
void tersa_shapecache_each(tersa_shapecache *c, tersa_handle_fn fn, void *arg);

/** Empty it and free its memory, passing each live handle to `release` first (NULL: none). */
void tersa_shapecache_clear(tersa_shapecache *c, tersa_handle_fn release, void *arg);

/* ==========================================================================
 * Per shape-table index: where a call's key objects of each shape are
 * ========================================================================== */

enum {
    TERSA_SHAPE_COLLIDE = 1, /* two keys are one host key: the map cannot be the host's plain kind */
    TERSA_SHAPE_NO_TEMPLATE = 2, /* the binding cannot make a template for these keys */
};

typedef struct tersa_shape {
    size_t off;          /* the binding's: where it keeps this shape's key objects */
    uint32_t n;
    uint32_t gen;        /* valid while equal to the table's */
    uint32_t flags;      /* TERSA_SHAPE_* and the binding's own */
    uintptr_t tmpl;      /* the template (the binding decides whether it holds a reference), or 0 */
    size_t tmpl_size;    /* the binding's: e.g. the bytes of the template's table */
    tersa_shapeent *cent; /* the cache entry with these keys, while cent->born == cborn */
    uint64_t cborn;
} tersa_shape;

typedef struct tersa_shapetab {
    tersa_shape *v;
    size_t cap, hi;      /* entries from hi on are not valid */
    uint32_t gen;
} tersa_shapetab;

/** The shape at index i if set in this call (stream), else NULL. */
TERSA_INLINE tersa_shape *tersa_shapetab_get(tersa_shapetab *t, size_t i) {
    return i < t->hi && t->v[i].gen == t->gen ? &t->v[i] : NULL;
}

/** Make room for index i; false when out of memory. */
bool tersa_shapetab_reserve(tersa_shapetab *t, size_t i);

/** A fresh (zeroed, valid) entry at index i (a zeroed table is empty); NULL when out of memory. */
TERSA_INLINE tersa_shape *tersa_shapetab_set(tersa_shapetab *t, size_t i) {
    if (TERSA_UNLIKELY(i >= t->cap || !t->gen) && !tersa_shapetab_reserve(t, i)) return NULL;
    tersa_shape *s = &t->v[i];
    memset(s, 0, sizeof(*s));
    s->gen = t->gen;
    if (i >= t->hi) t->hi = i + 1;
    return s;
}


/** Visit the template handle of every valid entry that has one. */
void tersa_shapetab_each(tersa_shapetab *t, tersa_handle_fn fn, void *arg);

/** Invalidate every entry, passing each template to `release` first (NULL: none; then O(1)). */
void tersa_shapetab_clear(tersa_shapetab *t, tersa_handle_fn release, void *arg);

/** Free the memory (the templates are the binding's to release first). */
void tersa_shapetab_free(tersa_shapetab *t);

#endif
