/*
 * objcache.c - the out-of-line half of objcache.h: seeding, visiting,
 * clearing and growing the caches of host objects.
 */
#include "internal.h"
#include "objcache.h"

void tersa_keycache_init(tersa_keycache *c) {
    memset(c->slot, 0, sizeof(c->slot));
    c->seed = tersa_seed();
}

void tersa_keycache_each(tersa_keycache *c, tersa_handle_fn fn, void *arg) {
    for (size_t i = 0; i < TERSA_KEYCACHE_SIZE; i++)
        if (c->slot[i].handle) fn(&c->slot[i].handle, arg);
}

void tersa_keycache_clear(tersa_keycache *c, tersa_handle_fn release, void *arg) {
    for (size_t i = 0; i < TERSA_KEYCACHE_SIZE; i++) {
        tersa_keyslot *s = &c->slot[i];
        if (!s->handle) continue;
        /* Emptied before the release: a release may run host code that decodes again. */
        uintptr_t h = s->handle;
        memset(s, 0, sizeof(*s));
        if (release) release(&h, arg);
    }
}

/* Grow a zero-filled array of `elem`-byte entries to hold index i, from
 * `first` entries (a power of two) when it has none. */
static bool reserve_zeroed(void **v, size_t *cap, size_t i, size_t first, size_t elem) {
    if (i < *cap) return true;
    if (i >= SIZE_MAX / 2 / elem) return false;
    size_t old = *cap;
    if (!tersa_grow_array(&tersa_default_alloc, v, cap, i < first ? first : i + 1, elem)) return false;
    memset((char *)*v + old * elem, 0, (*cap - old) * elem);
    return true;
}

bool tersa_slots_reserve(tersa_slots *s, size_t i) {
    return reserve_zeroed((void **)&s->v, &s->cap, i, 256, sizeof(uintptr_t));
}

void tersa_slots_each(tersa_slots *s, tersa_handle_fn fn, void *arg) {
    for (size_t i = 0; i < s->hi; i++)
        if (s->v[i]) fn(&s->v[i], arg);
}

void tersa_slots_clear(tersa_slots *s, tersa_handle_fn release, void *arg) {
    size_t hi = s->hi;
    s->hi = 0;
    if (!release) {
        if (hi) memset(s->v, 0, hi * sizeof(uintptr_t));
        return;
    }
    for (size_t i = 0; i < hi; i++) {
        uintptr_t h = s->v[i];
        if (!h) continue;
        s->v[i] = 0;
        release(&h, arg);
    }
}

void tersa_slots_free(tersa_slots *s) {
    mem_free(&tersa_default_alloc, s->v, s->cap * sizeof(uintptr_t));
    s->v = NULL;
    s->cap = s->hi = 0;
}

static inline tersa_shapeent *shape_set(tersa_shapecache *c, uint64_t hash) {
    return c->ent[hash & (TERSA_SHAPECACHE_SETS - 1)];
}

/* Copies a key's n bytes: most keys are short, and a memcpy call per key was
 * a fifth of storing a shape. */
static inline void copy_key(char *d, const char *p, size_t n) {
    if (n >= 8 && n <= 16) {
        uint64_t a = load_le64(p), b = load_le64(p + n - 8);
        store_le64(d, a);
        store_le64(d + n - 8, b);
    } else if (n >= 4 && n < 8) {
        uint32_t a = load_le32(p), b = load_le32(p + n - 4);
        store_le32(d, a);
        store_le32(d + n - 4, b);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++) d[i] = p[i];
    } else {
        memcpy(d, p, n);
    }
}

static size_t shape_block(size_t n, size_t total) { return n * (sizeof(uintptr_t) + sizeof(uint16_t)) + total + 1; }

/* Empties *e after taking what it held; the handles go to `release` from the copy. */
static void shape_release(tersa_shapeent *old, tersa_handle_fn release, void *arg) {
    if (!old->keys) return;
    if (release) {
        for (uint32_t i = 0; i < old->n; i++) release(&old->keys[i], arg);
        if (old->tmpl) release(&old->tmpl, arg);
    }
    mem_free(&tersa_default_alloc, old->keys, shape_block(old->n, old->total));
}

/* Stores the entry `fresh` (keys, lens and bytes filled) in place of its set's least recently used one. */
static tersa_shapeent *shape_store(tersa_shapecache *c, tersa_shapeent *fresh, uint64_t hash, size_t n, size_t total,
                                   uint32_t kind, uint32_t flags, tersa_handle_fn release, void *arg) {
    fresh->hash = hash;
    fresh->n = (uint32_t)n;
    fresh->total = (uint32_t)total;
    fresh->kind = kind;
    fresh->flags = flags;
    fresh->calls = 1;
    fresh->used = fresh->born = ++c->clock;
    tersa_shapeent *set = shape_set(c, hash), *victim = &set[0];
    for (int w = 1; w < TERSA_SHAPECACHE_WAYS; w++)
        if (set[w].used < victim->used) victim = &set[w];
    tersa_shapeent old = *victim;
    *victim = *fresh;
    /* After the swap: a release may run host code that decodes again. */
    shape_release(&old, release, arg);
    return victim;
}

/* A new entry's block for n keys and `bytes` key bytes (one block: what a
 * miss allocates and an eviction frees is most of the cost of a shape seen
 * once), with its key lengths and handles set; false when out of memory. */
static bool shape_fill(tersa_shapeent *fresh, const tersa_key *keys, size_t n, size_t bytes,
                       const uintptr_t *handles) {
    memset(fresh, 0, sizeof(*fresh));
    fresh->keys = (uintptr_t *)mem_alloc(&tersa_default_alloc, shape_block(n, bytes));
    if (!fresh->keys) return false;
    fresh->lens = (uint16_t *)(fresh->keys + n);
    fresh->bytes = (char *)(fresh->lens + n);
    for (size_t i = 0; i < n; i++) {
        fresh->lens[i] = (uint16_t)(keys[i].len | ((size_t)keys[i].symbol << 15));
        fresh->keys[i] = handles[i];
    }
    return true;
}

tersa_shapeent *tersa_shapecache_put_raw(tersa_shapecache *c, uint64_t hash, const uint8_t *p, size_t len,
                                         const tersa_key *keys, size_t n, uint32_t kind, uint32_t flags,
                                         const uintptr_t *handles, tersa_handle_fn release, void *arg) {
    tersa_shapeent fresh;
    if (!shape_fill(&fresh, keys, n, len, handles)) return NULL;
    memcpy(fresh.bytes, p, len);
    return shape_store(c, &fresh, hash, n, len, kind | TERSA_SHAPECACHE_RAW, flags, release, arg);
}

tersa_shapeent *tersa_shapecache_put(tersa_shapecache *c, uint64_t hash, const tersa_key *keys, size_t n, size_t total,
                                     uint32_t kind, uint32_t flags, const uintptr_t *handles, tersa_handle_fn release,
                                     void *arg) {
    tersa_shapeent fresh;
    if (!shape_fill(&fresh, keys, n, total, handles)) return NULL;
    char *b = fresh.bytes;
    for (size_t i = 0; i < n; i++) {
        copy_key(b, keys[i].ptr, keys[i].len);
        b += keys[i].len;
    }
    return shape_store(c, &fresh, hash, n, total, kind, flags, release, arg);
}

void tersa_shapecache_each(tersa_shapecache *c, tersa_handle_fn fn, void *arg) {
    for (size_t s = 0; s < TERSA_SHAPECACHE_SETS; s++)
        for (size_t w = 0; w < TERSA_SHAPECACHE_WAYS; w++) {
            tersa_shapeent *e = &c->ent[s][w];
            if (!e->keys) continue;
            for (uint32_t i = 0; i < e->n; i++) fn(&e->keys[i], arg);
            if (e->tmpl) fn(&e->tmpl, arg);
        }
}

void tersa_shapecache_clear(tersa_shapecache *c, tersa_handle_fn release, void *arg) {
    for (size_t s = 0; s < TERSA_SHAPECACHE_SETS; s++)
        for (size_t w = 0; w < TERSA_SHAPECACHE_WAYS; w++) {
            tersa_shapeent old = c->ent[s][w];
            if (!old.keys) continue;
            memset(&c->ent[s][w], 0, sizeof(old));
            shape_release(&old, release, arg);
        }
}

bool tersa_shapetab_reserve(tersa_shapetab *t, size_t i) {
    if (TERSA_UNLIKELY(!t->gen)) t->gen = 1; /* zeroed entries carry tag 0 */
    return reserve_zeroed((void **)&t->v, &t->cap, i, 64, sizeof(tersa_shape));
}

void tersa_shapetab_each(tersa_shapetab *t, tersa_handle_fn fn, void *arg) {
    for (size_t i = 0; i < t->hi; i++)
        if (t->v[i].gen == t->gen && t->v[i].tmpl) fn(&t->v[i].tmpl, arg);
}

void tersa_shapetab_clear(tersa_shapetab *t, tersa_handle_fn release, void *arg) {
    size_t hi = t->hi;
    t->hi = 0;
    if (release)
        for (size_t i = 0; i < hi; i++) {
            tersa_shape *s = &t->v[i];
            if (s->gen != t->gen || !s->tmpl) continue;
            /* Emptied before the release: a release may run host code that decodes again. */
            uintptr_t h = s->tmpl;
            s->tmpl = 0;
            release(&h, arg);
        }
    if (++t->gen == 0) {
        /* The tags wrapped: no old entry may look valid again. */
        if (t->cap) memset(t->v, 0, t->cap * sizeof(tersa_shape));
        t->gen = 1;
    }
}

void tersa_shapetab_free(tersa_shapetab *t) {
    mem_free(&tersa_default_alloc, t->v, t->cap * sizeof(tersa_shape));
    t->v = NULL;
    t->cap = t->hi = 0;
}
