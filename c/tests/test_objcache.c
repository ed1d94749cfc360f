/*
 * test_objcache.c - the core's caches of host objects (objcache.h), driven
 * as a binding drives them: handles are pointers to counted test objects, so
 * every handle stored is released exactly once, and a hit is always an
 * object with the bytes looked up. Shapes: the cache of key lists by their
 * bytes (and their templates) and the per-shape-index table.
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
        uint64_t h0 = hash_bytes(k, n, c.seed);
        for (size_t i = 0; i < n; i++) {
            k[i] ^= 1;
            same += hash_bytes(k, n, c.seed) == h0;
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

static void retain_handle(uintptr_t *h, void *arg) {
    (void)arg;
    ((obj *)*h)->refs++;
}

/* Shape `id` of a pool: 1-8 keys whose bytes depend on id past their heads
 * too (shapes that share a set and differ only there must not hit). */
static size_t shape_keys_of(uint64_t id, tersa_key *keys, char buf[][40]) {
    size_t n = 1 + (size_t)(id % 8);
    for (size_t i = 0; i < n; i++) {
        snprintf(buf[i], 40, "key%zu_%08llu", i, (unsigned long long)(id * 2654435761u % 100000000u));
        /* 13 to 32 bytes, or the last 1 to 7 digits: every branch of copying and comparing key bytes */
        size_t len = strlen(buf[i]), pad = (size_t)((id + i) % 20);
        memset(buf[i] + len, 'a' + (int)i, pad);
        keys[i].ptr = buf[i];
        keys[i].len = len + pad;
        if ((id + i) % 4 == 3) {
            keys[i].len = 1 + (size_t)((id / 4 + i) % 7);
            keys[i].ptr = buf[i] + len - keys[i].len;
        }
        keys[i].symbol = (id >> 3) & 1;
    }
    return n;
}

static void test_shapecache(void) {
    static tersa_shapecache c;
    memset(&c, 0, sizeof(c));
    tersa_key keys[TERSA_SHAPECACHE_MAX_KEYS + 1] = {{0}};
    char buf[TERSA_SHAPECACHE_MAX_KEYS + 1][40];
    size_t total = 0;
    long live0 = live_objects;

    /* What the cache admits. */
    CHECK(tersa_shapecache_hash(keys, 0, &total) == 0, "no keys: not cached");
    for (size_t i = 0; i <= TERSA_SHAPECACHE_MAX_KEYS; i++) {
        snprintf(buf[i], 40, "k%zu", i);
        keys[i] = (tersa_key){buf[i], strlen(buf[i]), false};
    }
    CHECK(tersa_shapecache_hash(keys, TERSA_SHAPECACHE_MAX_KEYS, &total) != 0, "the most keys admitted");
    CHECK(tersa_shapecache_hash(keys, TERSA_SHAPECACHE_MAX_KEYS + 1, &total) == 0, "one key more: not");
    static char big[TERSA_SHAPECACHE_MAX_BYTES + 1];
    memset(big, 'x', sizeof(big));
    tersa_key one = {big, TERSA_SHAPECACHE_MAX_BYTES, false};
    CHECK(tersa_shapecache_hash(&one, 1, &total) != 0 && total == TERSA_SHAPECACHE_MAX_BYTES, "the most bytes admitted");
    one.len++;
    CHECK(tersa_shapecache_hash(&one, 1, &total) == 0, "one byte more: not");

    /* Hits are exact, across kinds and the bytes past the heads. */
    size_t n = shape_keys_of(7, keys, buf);
    uint64_t h = tersa_shapecache_hash(keys, n, &total);
    CHECK(tersa_shapecache_get(&c, h, keys, n, 0) == NULL, "empty: miss");
    uintptr_t handles[TERSA_SHAPECACHE_MAX_KEYS];
    for (size_t i = 0; i < n; i++) handles[i] = (uintptr_t)obj_new(keys[i].ptr, keys[i].len, 1);
    tersa_shapeent *e = tersa_shapecache_put(&c, h, keys, n, total, 0, 5, handles, release_handle, NULL);
    for (size_t i = 0; e && i < n; i++) retain_handle(&e->keys[i], NULL);
    for (size_t i = 0; i < n; i++) obj_release((obj *)handles[i]);
    CHECK(e && tersa_shapecache_get(&c, h, keys, n, 0) == e && e->flags == 5 && e->n == n, "hit");
    /* The storing call is the shape's first; the template is due at its first use in the third call. */
    CHECK(e && !tersa_shapecache_recurs(e), "a second call: no template at a first use");
    CHECK(e && tersa_shapecache_recurs(e) && tersa_shapecache_recurs(e), "a third call and later: a template");
    CHECK(tersa_shapecache_get(&c, h, keys, n, 1) == NULL, "another kind: miss");
    char saved = buf[n - 1][keys[n - 1].len - 1];
    buf[n - 1][keys[n - 1].len - 1] = '#';
    CHECK(tersa_shapecache_get(&c, h, keys, n, 0) == NULL, "a byte past the heads differs: miss");
    buf[n - 1][keys[n - 1].len - 1] = saved;
    keys[0].symbol = !keys[0].symbol;
    CHECK(tersa_shapecache_get(&c, h, keys, n, 0) == NULL, "a symbol for a string: miss");
    keys[0].symbol = !keys[0].symbol;
    e->tmpl = (uintptr_t)obj_new("t", 1, 2);

    /* A pool larger than the cache, used at random against a model: every
     * hit has the keys looked up, the most recently stored shape always
     * hits, nothing is held past the cache's size, every handle is released once. */
    test_rng r = {0x5eed};
    size_t hits = 0, puts = 0;
    for (int step = 0; step < 200000; step++) {
        uint64_t id = rng_below(&r, 2 * TERSA_SHAPECACHE_SETS * TERSA_SHAPECACHE_WAYS);
        n = shape_keys_of(id, keys, buf);
        h = tersa_shapecache_hash(keys, n, &total);
        e = tersa_shapecache_get(&c, h, keys, n, (uint32_t)(id & 1));
        if (e) {
            hits++;
            const char *b = e->bytes;
            bool same = e->n == n;
            for (size_t i = 0; same && i < n; i++) {
                obj *o = (obj *)e->keys[i];
                same = o->len == keys[i].len && memcmp(o->bytes, keys[i].ptr, o->len) == 0 &&
                       memcmp(b, keys[i].ptr, keys[i].len) == 0;
                b += keys[i].len;
            }
            if (!same) {
                CHECK(false, "a hit with other keys");
                break;
            }
            if (!e->tmpl && (step & 1)) e->tmpl = (uintptr_t)obj_new("t", 1, 2);
            continue;
        }
        for (size_t i = 0; i < n; i++) handles[i] = (uintptr_t)obj_new(keys[i].ptr, keys[i].len, 1);
        e = tersa_shapecache_put(&c, h, keys, n, total, (uint32_t)(id & 1), 0, handles, release_handle, NULL);
        for (size_t i = 0; e && i < n; i++) retain_handle(&e->keys[i], NULL);
        for (size_t i = 0; i < n; i++) obj_release((obj *)handles[i]);
        puts++;
        if (!e || tersa_shapecache_get(&c, h, keys, n, (uint32_t)(id & 1)) != e) {
            CHECK(false, "the shape just stored misses");
            break;
        }
    }
    CHECK(hits > 10000 && puts > 10000, "both hits and evictions");
    size_t visited = 0, entries = 0;
    tersa_shapecache_each(&c, count_handle, &visited);
    for (size_t s = 0; s < TERSA_SHAPECACHE_SETS; s++)
        for (size_t w = 0; w < TERSA_SHAPECACHE_WAYS; w++) entries += c.ent[s][w].keys != NULL;
    CHECK(entries <= TERSA_SHAPECACHE_SETS * TERSA_SHAPECACHE_WAYS && entries > TERSA_SHAPECACHE_SETS, "bounded, and used");
    CHECK((long)visited == live_objects - live0, "every live handle visited, and only those");
    tersa_shapecache_each(&c, move_handle, NULL);
    tersa_shapecache_clear(&c, release_handle, NULL);
    CHECK(live_objects == live0, "every handle released exactly once");
    CHECK(tersa_shapecache_get(&c, h, keys, n, (uint32_t)(h & 1)) == NULL, "empty after clearing");
}

static void test_shapetab(void) {
    tersa_shapetab t;
    memset(&t, 0, sizeof(t));
    long live0 = live_objects;
    CHECK(tersa_shapetab_get(&t, 0) == NULL, "a zeroed table is empty");
    tersa_shape *s = tersa_shapetab_set(&t, 100);
    CHECK(s && tersa_shapetab_get(&t, 100) == s && tersa_shapetab_get(&t, 99) == NULL, "set");
    s->off = 42;
    s->tmpl = (uintptr_t)obj_new("t", 1, 2);
    tersa_shapetab_set(&t, 3)->off = 7;
    size_t visited = 0;
    tersa_shapetab_each(&t, count_handle, &visited);
    CHECK(visited == 1 && tersa_shapetab_get(&t, 100)->off == 42, "templates visited");
    tersa_shapetab_clear(&t, release_handle, NULL);
    CHECK(live_objects == live0, "the template released");
    CHECK(tersa_shapetab_get(&t, 100) == NULL && tersa_shapetab_get(&t, 3) == NULL, "cleared");
    s = tersa_shapetab_set(&t, 3);
    CHECK(s && s->off == 0 && s->tmpl == 0 && tersa_shapetab_get(&t, 100) == NULL, "a fresh entry, the others still cleared");
    /* Many generations, across the tags' wrap: no stale entry looks valid. */
    bool stale = false;
    t.gen = UINT32_MAX - 5;
    for (int g = 0; g < 12; g++) {
        tersa_shapetab_set(&t, (size_t)g)->off = (size_t)g;
        tersa_shapetab_clear(&t, NULL, NULL);
        for (size_t i = 0; i < 16; i++) stale |= tersa_shapetab_get(&t, i) != NULL;
        tersa_shapetab_set(&t, 15);
        t.hi = t.cap; /* every entry below cap is examined */
        for (size_t i = 0; i < 15; i++) stale |= tersa_shapetab_get(&t, i) != NULL;
        tersa_shapetab_clear(&t, NULL, NULL);
    }
    CHECK(!stale && t.gen != 0, "no stale entry across the wrap");
    /* An entry set 2^32 - 1 generations ago carries the tag the wrap restarts from. */
    tersa_shapetab_clear(&t, NULL, NULL);
    t.gen = 1;
    tersa_shapetab_set(&t, 5)->off = 5;
    t.gen = UINT32_MAX; /* the clears in between */
    tersa_shapetab_clear(&t, NULL, NULL);
    tersa_shapetab_set(&t, 7);
    CHECK(t.gen == 1 && tersa_shapetab_get(&t, 5) == NULL, "the wrap forgets every entry");
    tersa_shapetab_free(&t);
    CHECK(t.v == NULL && t.cap == 0, "freed");
}

int main(void) {
    test_keycache();
    test_slots();
    test_shapecache();
    test_shapetab();
    return test_summary("test_objcache");
}
