/*
 * test_objcache.c - the core's caches of host objects (objcache.h), driven
 * as a binding drives them: handles are pointers to counted test objects, so
 * every handle stored is released exactly once, and a hit is always an
 * object with the bytes looked up.
 */
#include "testutil.h"

#include "objcache.h"

#include <stdlib.h>
#include <string.h>

typedef struct obj {
    long refs;
    uint32_t kind;
    size_t len;
    char bytes[TERSA_LONG_STRING + 1];
} obj;

static long live_objects;

static obj *obj_new(const char *p, size_t len, uint32_t kind) {
    obj *o = calloc(1, sizeof(obj));
    o->refs = 1;
    o->kind = kind;
    o->len = len;
    memcpy(o->bytes, p, len);
    live_objects++;
    return o;
}

static void obj_release(obj *o) {
    if (!o) return;
    if (--o->refs == 0) {
        live_objects--;
        free(o);
    } else if (o->refs < 0) {
        fprintf(stderr, "released twice\n");
        abort();
    }
}

static void release_handle(uintptr_t *h, void *arg) {
    (void)arg;
    obj_release((obj *)*h);
}

static void count_handle(uintptr_t *h, void *arg) {
    (void)h;
    (*(size_t *)arg)++;
}

/* A moving collector: each object is copied and the handle rewritten. */
static void move_handle(uintptr_t *h, void *arg) {
    (void)arg;
    obj *o = (obj *)*h, *n = malloc(sizeof(obj));
    *n = *o;
    free(o);
    *h = (uintptr_t)n;
}

static const char *obj_bytes(uintptr_t h, uint32_t kind) {
    const obj *o = (const obj *)h;
    if (o->kind != kind) {
        fprintf(stderr, "bytes asked of a handle of another kind\n");
        abort();
    }
    return o->bytes;
}

/* The binding's lookup: the cached object (a new reference), else a new one stored. */
static obj *key_object(tersa_keycache *c, const char *p, size_t len, uint32_t kind, bool *hit) {
    tersa_keyslot *slot;
    uint64_t h;
    obj *o = (obj *)tersa_keycache_get(c, p, len, kind, obj_bytes, &slot, &h);
    *hit = o != NULL;
    if (o) {
        o->refs++;
        return o;
    }
    o = obj_new(p, len, kind);
    o->refs++; /* one for the cache */
    obj_release((obj *)tersa_keycache_put(slot, h, len, kind, (uintptr_t)o));
    return o;
}

static void random_key(test_rng *r, char *out, size_t *len, size_t pool) {
    /* Keys drawn from a pool of `pool` distinct ones, of every admitted length. */
    uint64_t id = rng_below(r, pool);
    size_t n = (size_t)(id % TERSA_LONG_STRING);
    for (size_t i = 0; i < n; i++) out[i] = (char)('a' + (id * 31 + i * 7) % 26);
    if (n >= 4) memcpy(out + n / 2 - 2, &id, 4 < n / 2 ? 4 : n / 2); /* distinct keys of one length */
    *len = n;
}

static void test_keycache(void) {
    static tersa_keycache c;
    tersa_keycache_init(&c);
    CHECK(c.seed != 0, "seeded");
    CHECK(tersa_keycache_admits(0) && tersa_keycache_admits(TERSA_LONG_STRING - 1), "short keys admitted");
    CHECK(!tersa_keycache_admits(TERSA_LONG_STRING), "long keys go by string-table index");

    bool hit;
    obj *a = key_object(&c, "name", 4, 1, &hit);
    CHECK(!hit, "first sight misses");
    obj *b = key_object(&c, "name", 4, 1, &hit);
    CHECK(hit && a == b, "second sight is the same object");
    obj *s = key_object(&c, "name", 4, 2, &hit);
    CHECK(!hit && s != a, "another kind of the same bytes is another object");
    obj *e = key_object(&c, "", 0, 1, &hit);
    CHECK(!hit && e->len == 0, "the empty key");
    obj_release(key_object(&c, "", 0, 1, &hit));
    CHECK(hit, "the empty key hits");
    obj_release(a);
    obj_release(b);
    obj_release(s);
    obj_release(e);

    /* Many keys through a table that evicts: every hit has the bytes asked for. */
    test_rng r = {0x9e3779b97f4a7c15ull};
    size_t hits = 0, wrong = 0;
    for (int i = 0; i < 200000; i++) {
        char k[TERSA_LONG_STRING];
        size_t n;
        random_key(&r, k, &n, 3 * TERSA_KEYCACHE_SIZE);
        uint32_t kind = 1 + (uint32_t)rng_below(&r, 2);
        obj *o = key_object(&c, k, n, kind, &hit);
        hits += hit;
        if (o->len != n || o->kind != kind || memcmp(o->bytes, k, n) != 0) wrong++;
        obj_release(o);
    }
    CHECK(wrong == 0, "%zu lookups gave an object of other bytes", wrong);
    CHECK(hits > 20000 && hits < 200000, "a bounded table hits some and misses some: %zu hits", hits);

    /* One byte changed anywhere in a key changes its hash. */
    size_t same = 0;
    for (size_t n = 1; n < TERSA_LONG_STRING; n++) {
        char k[TERSA_LONG_STRING];
        memset(k, 'k', n);
        uint64_t h0 = tersa_keycache_hash(k, n, c.seed);
        for (size_t i = 0; i < n; i++) {
            k[i] ^= 1;
            same += tersa_keycache_hash(k, n, c.seed) == h0;
            k[i] ^= 1;
        }
    }
    CHECK(same == 0, "%zu one-byte changes kept the hash", same);

    obj_release(key_object(&c, "name", 4, 2, &hit)); /* present for the move below */
    size_t live = 0;
    tersa_keycache_each(&c, count_handle, &live);
    CHECK(live > 0 && live <= TERSA_KEYCACHE_SIZE && (long)live == live_objects,
          "the cache holds the only references: %zu live, %ld objects", live, live_objects);

    /* A moving collector rewrites the handles; lookups still verify by bytes. */
    tersa_keycache_each(&c, move_handle, NULL);
    obj *m = key_object(&c, "name", 4, 2, &hit);
    CHECK(hit && m->len == 4 && memcmp(m->bytes, "name", 4) == 0, "a moved object is found");
    obj_release(m);

    tersa_keycache_clear(&c, release_handle, NULL);
    CHECK(live_objects == 0, "clearing released every object: %ld left", live_objects);
    live = 0;
    tersa_keycache_each(&c, count_handle, &live);
    CHECK(live == 0, "empty after clearing");
    obj_release(key_object(&c, "name", 4, 1, &hit));
    CHECK(!hit, "a cleared cache misses");
    tersa_keycache_clear(&c, release_handle, NULL);
    CHECK(live_objects == 0, "no leak");
}

static void test_slots(void) {
    tersa_slots s = {0};
    CHECK(tersa_slots_get(&s, 0) == 0 && tersa_slots_get(&s, 1000000) == 0, "empty slots hold nothing");
    const size_t at[] = {0, 5, 255, 256, 300, 100000};
    const size_t n = sizeof(at) / sizeof(at[0]);
    for (size_t i = 0; i < n; i++) CHECK(tersa_slots_set(&s, at[i], (uintptr_t)obj_new("x", 1, 1)), "set");
    CHECK(s.hi == 100001 && s.cap > 100000 && tersa_slots_memsize(&s) == s.cap * sizeof(uintptr_t), "grown");
    for (size_t i = 0; i < n; i++) CHECK(tersa_slots_get(&s, at[i]) != 0, "slot %zu holds its handle", at[i]);
    CHECK(tersa_slots_get(&s, 1) == 0 && tersa_slots_get(&s, 99999) == 0 && tersa_slots_get(&s, s.cap + 7) == 0,
          "other slots are empty");
    CHECK(tersa_slots_reserve(&s, 10) && tersa_slots_get(&s, 5) != 0, "reserving keeps the slots");
    CHECK(!tersa_slots_reserve(&s, SIZE_MAX / 2), "an impossible size is refused");
    CHECK(tersa_slots_get(&s, 100000) != 0, "...and the slots are kept");
    size_t live = 0;
    tersa_slots_each(&s, count_handle, &live);
    CHECK(live == n, "each visits the live handles: %zu", live);

    size_t cap = s.cap;
    tersa_slots_clear(&s, release_handle, NULL);
    CHECK(live_objects == 0 && s.hi == 0 && s.cap == cap, "cleared, released, memory kept");
    for (size_t i = 0; i < n; i++) CHECK(tersa_slots_get(&s, at[i]) == 0, "slot %zu empty after clearing", at[i]);

    /* Borrowed handles (no release): clearing only forgets them. */
    obj *o = obj_new("y", 1, 1);
    CHECK(tersa_slots_set(&s, 7, (uintptr_t)o), "set");
    tersa_slots_clear(&s, NULL, NULL);
    CHECK(tersa_slots_get(&s, 7) == 0 && live_objects == 1, "forgotten, not released");
    obj_release(o);
    tersa_slots_free(&s);
    CHECK(s.v == NULL && s.cap == 0 && s.hi == 0, "freed");
    CHECK(tersa_slots_set(&s, 3, 1) && tersa_slots_get(&s, 3) == 1, "usable after freeing");
    tersa_slots_free(&s);
}

int main(void) {
    test_keycache();
    test_slots();
    return test_summary("test_objcache");
}
