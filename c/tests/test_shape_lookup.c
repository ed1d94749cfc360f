/*
 * test_shape_lookup.c - the encode side's identity -> shape lookup
 * (src/shape_lookup.h): finding, the bounds, clearing by generation, hints,
 * the policy for shapes seen once, the retain/release hooks, the sizing rule, and a random run against a
 * model of the policy.
 */
#include "shape_lookup.h"

#include <stdlib.h>
#include <string.h>

#include "counting_alloc.h"
#include "testutil.h"

/* Identities are multiples of 8 (as object addresses are); the hooks count
 * references per identity. */
#define IDS 4096
static long refs[IDS];
static long retained, released;

static void hook_retain(void *ctx, const tersa_ident *keys, size_t n) {
    (void)ctx;
    for (size_t i = 0; i < n; i++) refs[keys[i] / 8 % IDS]++;
    retained += (long)n;
}

static void hook_release(void *ctx, const tersa_ident *keys, size_t n) {
    (void)ctx;
    for (size_t i = 0; i < n; i++) refs[keys[i] / 8 % IDS]--;
    released += (long)n;
}

static const tersa_shape_hooks hooks = {hook_retain, hook_release, NULL};

static bool all_released(void) {
    for (size_t i = 0; i < IDS; i++)
        if (refs[i]) return false;
    return true;
}

static int32_t find(const tersa_shapes *s, const tersa_ident *k, size_t n) {
    return tersa_shapes_find(s, tersa_shapes_hash(k, 1, n), k, 1, n);
}

static int32_t add(tersa_shapes *s, const tersa_ident *k, size_t n, uint32_t shape) {
    return tersa_shapes_add(s, tersa_shapes_hash(k, 1, n), k, 1, n, shape);
}

static void test_basics(void) {
    counting c = {0, 0};
    tersa_alloc a = counting_alloc(&c);
    tersa_shapes s;
    tersa_shapes_init(&s, &a, &hooks, true);
    CHECK(c.live == 0, "init allocates nothing (%zu bytes)", c.live);
    tersa_ident ab[] = {8, 16}, ba[] = {16, 8}, abc[] = {8, 16, 24}, none[1] = {0};
    CHECK(find(&s, ab, 2) == -1, "empty lookup finds nothing");
    int32_t e_ab = add(&s, ab, 2, 7), e_empty = add(&s, none, 0, 9);
    CHECK(e_ab >= 0 && e_empty >= 0 && e_ab != e_empty, "added (%d, %d)", e_ab, e_empty);
    CHECK(find(&s, ab, 2) == e_ab && tersa_shapes_shape(&s, e_ab) == 7, "found a, b");
    CHECK(find(&s, none, 0) == e_empty && tersa_shapes_shape(&s, e_empty) == 9, "found the empty shape");
    CHECK(find(&s, ba, 2) == -1, "order matters");
    CHECK(find(&s, abc, 3) == -1 && find(&s, abc, 1) == -1, "a longer or shorter sequence is another shape");
    /* Keys interleaved with values (stride 2) hash and compare as the same keys. */
    tersa_ident pairs[] = {8, 1000, 16, 2000};
    CHECK(tersa_shapes_hash(pairs, 2, 2) == tersa_shapes_hash(ab, 1, 2), "stride 2 hashes the keys only");
    CHECK(tersa_shapes_find(&s, tersa_shapes_hash(pairs, 2, 2), pairs, 2, 2) == e_ab, "found through stride 2");
    CHECK(retained == 2 && refs[1] == 1 && refs[2] == 1, "keys retained once each (%ld)", retained);
    size_t nkeys;
    const tersa_ident *keys = tersa_shapes_keys(&s, &nkeys);
    CHECK(nkeys == 2 && keys[0] == 8 && keys[1] == 16, "the stored keys are listed for marking");
    CHECK(tersa_shapes_count(&s) == 2 && tersa_shapes_memsize(&s) == c.live, "count and memsize (%zu, %zu)",
          tersa_shapes_memsize(&s), c.live);
    tersa_shapes_clear(&s);
    CHECK(all_released() && released == 2, "clear releases every key");
    CHECK(find(&s, ab, 2) == -1 && find(&s, none, 0) == -1 && tersa_shapes_count(&s) == 0, "clear forgets");
    CHECK(add(&s, ba, 2, 3) >= 0 && find(&s, ba, 2) >= 0 && find(&s, ab, 2) == -1, "usable after a clear");
    tersa_shapes_free(&s);
    CHECK(all_released() && c.live == 0, "free releases the keys and the memory (%zu bytes left)", c.live);
    retained = released = 0;
}

/* Shapes that agree on the count and the first, middle and last keys share
 * a hash: the keys tell them apart. */
static void test_collisions(void) {
    tersa_shapes s;
    tersa_shapes_init(&s, NULL, NULL, false);
    tersa_ident k[5] = {8, 16, 24, 32, 40};
    int32_t ent[50];
    for (uint32_t i = 0; i < 50; i++) {
        k[1] = 8 * (100 + i);
        ent[i] = add(&s, k, 5, i);
    }
    for (uint32_t i = 0; i < 50; i++) {
        k[1] = 8 * (100 + i);
        int32_t e = find(&s, k, 5);
        CHECK(e == ent[i] && tersa_shapes_shape(&s, e) == i, "colliding shape %u", i);
    }
    k[1] = 8 * 99;
    CHECK(find(&s, k, 5) == -1, "a colliding shape not added");
    tersa_shapes_free(&s);
}

/* Past TERSA_SHAPES_MAX entries or TERSA_SHAPES_POOL_MAX keys the lookup
 * starts again; more keys than that are never stored. */
static void test_bounds(void) {
    tersa_shapes s;
    tersa_shapes_init(&s, NULL, &hooks, false);
    tersa_ident k[2];
    for (uint32_t i = 0; i <= TERSA_SHAPES_MAX; i++) {
        k[0] = 8 * (i + 1);
        k[1] = 8;
        CHECK(add(&s, k, 2, i) >= 0, "added %u", i);
        CHECK(tersa_shapes_count(&s) <= TERSA_SHAPES_MAX, "bounded count");
    }
    CHECK(tersa_shapes_count(&s) == 1, "the entry past the bound started again (%u)", tersa_shapes_count(&s));
    k[0] = 8 * (TERSA_SHAPES_MAX + 1);
    CHECK(find(&s, k, 2) >= 0, "the newest shape is found");
    k[0] = 8;
    CHECK(find(&s, k, 2) == -1, "the oldest is gone");
    CHECK(retained - released == 2, "only the newest entry's keys are held (%ld)", retained - released);

    tersa_shapes_clear(&s);
    size_t big = TERSA_SHAPES_POOL_MAX / 3 + 1;
    tersa_ident *many = malloc((TERSA_SHAPES_POOL_MAX + 1) * sizeof *many);
    for (size_t i = 0; i <= TERSA_SHAPES_POOL_MAX; i++) many[i] = 8 * (i % IDS) + 8 * IDS * (i / IDS);
    for (uint32_t i = 0; i < 3; i++) {
        many[0] = 8 * (i + 1);
        CHECK(add(&s, many, big, i) >= 0, "wide shape %u", i);
    }
    CHECK(tersa_shapes_count(&s) == 1, "the third wide shape started again (%u)", tersa_shapes_count(&s));
    CHECK(find(&s, many, big) >= 0, "the last wide shape is found");
    long before = retained;
    CHECK(add(&s, many, TERSA_SHAPES_POOL_MAX + 1, 5) == -1, "more keys than the pool holds are not stored");
    CHECK(retained == before && find(&s, many, big) >= 0, "and nothing changed");
    free(many);
    tersa_shapes_free(&s);
    CHECK(all_released() && retained == released, "balanced after the bounds");
    retained = released = 0;
}

/* Clearing is a new generation: after the 16-bit tags wrap, no slot of an
 * old generation reads as current. */
static void test_generations(void) {
    tersa_shapes s;
    tersa_shapes_init(&s, NULL, NULL, false);
    tersa_ident k[3] = {8, 16, 24};
    bool ok = true;
    for (uint32_t g = 0; g < 140000 && ok; g++) {
        k[0] = 8 * (1 + g % 3);
        ok = find(&s, k, 3) == -1 && add(&s, k, 3, g) >= 0 && find(&s, k, 3) >= 0;
        k[0] = 8 * (1 + (g + 1) % 3);
        ok = ok && find(&s, k, 3) == -1;
        tersa_shapes_clear(&s);
    }
    CHECK(ok, "each generation sees only its own entries");
    /* Entries of exactly 65,535 generations ago (the same tag) stay
     * forgotten. (Clearing an empty lookup starts no generation.) */
    tersa_ident one = 8 * 5000;
    tersa_ident many[100];
    for (uint32_t i = 0; i < 100; i++) {
        many[i] = 8 * (1000 + i);
        add(&s, &many[i], 1, i);
    }
    for (uint32_t g = 0; g < 3 * 65536; g++) {
        tersa_shapes_clear(&s);
        add(&s, &one, 1, 0);
        int found = 0;
        for (uint32_t i = 1; i < 100; i += 9) found += find(&s, &many[i], 1) >= 0;
        if (found) {
            CHECK(!found, "%d old entries found after %u clears", found, g + 1);
            break;
        }
    }
    tersa_shapes_free(&s);
}

static void test_hints(void) {
    tersa_shapes s;
    tersa_shapes_init(&s, NULL, NULL, true);
    tersa_ident outer[] = {8, 16}, inner[] = {24, 32, 40}, other[] = {48};
    int32_t eo = add(&s, outer, 2, 0);
    size_t at = tersa_shapes_hint_at(&s, eo, 1); /* the value of key 16 */
    CHECK(*tersa_shapes_hint(&s, at) == 0, "a new entry's hints are empty");
    CHECK(tersa_shapes_hint_at(&s, -1, 1) == TERSA_SHAPES_HINT_NONE, "no entry: the scratch slot");
    int32_t ei = add(&s, inner, 3, 1);
    *tersa_shapes_hint(&s, at) = (uint32_t)ei + 1;
    *tersa_shapes_hint(&s, TERSA_SHAPES_HINT_ROOT) = (uint32_t)eo + 1;
    for (uint32_t i = 0; i < 200; i++) {
        tersa_ident k = 8 * (100 + i);
        add(&s, &k, 1, 2 + i); /* the hint arrays grow */
    }
    CHECK(tersa_shapes_hinted(&s, *tersa_shapes_hint(&s, at), inner, 1, 3) == ei, "hint confirmed after growth");
    CHECK(tersa_shapes_hinted(&s, *tersa_shapes_hint(&s, at), other, 1, 1) == -1, "hint for other keys refused");
    CHECK(tersa_shapes_hinted(&s, *tersa_shapes_hint(&s, TERSA_SHAPES_HINT_ROOT), outer, 1, 2) == eo, "root hint");
    uint32_t stale = *tersa_shapes_hint(&s, at);
    tersa_shapes_clear(&s);
    CHECK(*tersa_shapes_hint(&s, TERSA_SHAPES_HINT_ROOT) == 0, "clear empties the root hint");
    CHECK(tersa_shapes_hinted(&s, stale, inner, 1, 3) == -1, "a hint of an older generation is refused");
    add(&s, other, 1, 9);
    add(&s, outer, 2, 10);
    CHECK(tersa_shapes_hinted(&s, stale, inner, 1, 3) == -1, "even when its entry index is in use again");
    tersa_shapes_free(&s);
}

/* The policy for shapes seen once: every new shape is kept until
 * TERSA_SHAPES_KEEP_MIN were defined, then only while one in
 * TERSA_SHAPES_KEEP_RATIO was seen again; repeats count once per entry, from
 * the last shape before that minimum on; a clear starts the count again. */
static void test_keep_policy(void) {
    tersa_shapes s;
    tersa_shapes_init(&s, NULL, NULL, false);
    for (uint32_t i = 0; i < TERSA_SHAPES_KEEP_MIN - 1; i++) {
        tersa_ident k = 8 * (1 + i);
        CHECK(tersa_shapes_keep_new(&s), "kept before the minimum (%u)", i);
        int32_t ent = add(&s, &k, 1, i);
        tersa_shapes_note_repeat(&s, ent); /* counted only for the last one: the next new shape's choice */
    }
    CHECK(s.repeated == 1, "repeats before the minimum are not counted (%u)", s.repeated);
    CHECK(!tersa_shapes_keep_new(&s), "one repeat: the next new shape is left out");
    tersa_ident k0 = 8;
    int32_t e0 = find(&s, &k0, 1);
    CHECK(e0 >= 0, "an early entry is still found");
    tersa_shapes_note_repeat(&s, e0);
    tersa_shapes_note_repeat(&s, e0);
    CHECK(s.repeated == 2, "an entry's repeats count once (%u)", s.repeated);
    /* defined is now KEEP_MIN: two repeats are too few */
    uint32_t defined = s.defined, more = 0;
    while (tersa_shapes_keep_new(&s)) more++;
    CHECK(more == 0 && s.defined == defined + 1, "two repeats in %u shapes: left out (%u)", s.defined, more);
    for (uint32_t i = 0; i < 30; i++) {
        tersa_ident k = 8 * (1 + i);
        tersa_shapes_note_repeat(&s, find(&s, &k, 1));
    }
    CHECK(s.repeated == 31, "thirty-one entries repeated (%u)", s.repeated);
    CHECK(tersa_shapes_keep_new(&s), "more than a quarter repeated: kept again");
    tersa_shapes_clear(&s);
    CHECK(s.defined == 0 && s.repeated == 0, "a clear starts the count again");
    tersa_shapes_free(&s);
}

static void test_sizing(void) {
    tersa_shapes s;
    tersa_shapes_init(&s, NULL, NULL, false);
    tersa_ident k = 8;
    add(&s, &k, 1, 0);
    CHECK(!tersa_shapes_end_buffer(&s, 1000), "a busy buffer");
    CHECK(tersa_shapes_count(&s) == 0, "end_buffer clears");
    bool renewed = false;
    int at = -1;
    for (int i = 0; i < 40 && !renewed; i++) {
        add(&s, &k, 1, 0);
        renewed = tersa_shapes_end_buffer(&s, 10);
        if (renewed) at = i;
    }
    CHECK(at == TERSA_SHAPES_SMALL_RUNS - 1, "renewed after a run of small buffers (%d)", at);
    CHECK(tersa_shapes_memsize(&s) == 0, "and its tables freed");
    CHECK(add(&s, &k, 1, 4) >= 0 && find(&s, &k, 1) >= 0, "usable after");
    for (int i = 0; i < 100; i++) CHECK(!tersa_shapes_end_buffer(&s, 10), "small buffers under a small peak");
    CHECK(!tersa_shapes_end_buffer(&s, 1000), "busy");
    for (int i = 0; i < 20; i++) tersa_shapes_end_buffer(&s, 10);
    CHECK(!tersa_shapes_end_buffer(&s, 100), "a buffer of 1/10 of the peak breaks the run");
    for (int i = 0; i < TERSA_SHAPES_SMALL_RUNS - 1; i++) CHECK(!tersa_shapes_end_buffer(&s, 10), "run again");
    CHECK(tersa_shapes_end_buffer(&s, 10), "renewed after a full run");
    tersa_shapes_free(&s);
}

/* Random adds, finds and clears over a small universe of shapes, against a
 * model of the policy: a list of the current generation's entries, emptied
 * when an entry would pass a bound. */
#define UNIVERSE 6000
static void test_random(void) {
    test_rng r = {0x5eed};
    static tersa_ident keys[UNIVERSE][8];
    static size_t len[UNIVERSE];
    static int32_t model[UNIVERSE]; /* shape index stored for shape u, -1 */
    for (size_t u = 0; u < UNIVERSE; u++) {
        /* distinct sequences: the first key names the shape; shape 0 has no keys */
        len[u] = u ? 1 + (size_t)rng_below(&r, 7) : 0;
        for (size_t i = 0; i < len[u]; i++) keys[u][i] = 8 * (1 + rng_below(&r, 64));
        if (len[u]) keys[u][0] = 8 * (64 + u);
    }
    tersa_shapes s;
    tersa_shapes_init(&s, NULL, &hooks, true);
    for (size_t u = 0; u < UNIVERSE; u++) model[u] = -1;
    uint32_t count = 0;
    size_t pool = 0;
    unsigned long mismatches = 0;
    for (int step = 0; step < 300000; step++) {
        size_t u = (size_t)rng_below(&r, step % 50000 < 25000 ? 300 : UNIVERSE);
        int32_t e = find(&s, keys[u], len[u]);
        int32_t want = model[u];
        if ((e >= 0 ? (int32_t)tersa_shapes_shape(&s, e) : -1) != want) mismatches++;
        if (e < 0) {
            if (count == TERSA_SHAPES_MAX || pool + len[u] > TERSA_SHAPES_POOL_MAX) {
                for (size_t v = 0; v < UNIVERSE; v++) model[v] = -1;
                count = 0;
                pool = 0;
            }
            if (add(&s, keys[u], len[u], (uint32_t)step) >= 0) {
                model[u] = step;
                count++;
                pool += len[u];
            }
        }
        if (rng_below(&r, 20000) == 0) {
            tersa_shapes_clear(&s);
            for (size_t v = 0; v < UNIVERSE; v++) model[v] = -1;
            count = 0;
            pool = 0;
        }
        if (tersa_shapes_count(&s) != count) mismatches++;
    }
    CHECK(mismatches == 0, "the lookup follows the model (%lu mismatches)", mismatches);
    CHECK(retained - released == (long)pool, "exactly the stored keys are held");
    tersa_shapes_free(&s);
    CHECK(all_released(), "all released");
}

int main(void) {
    test_basics();
    test_collisions();
    test_bounds();
    test_generations();
    test_hints();
    test_keep_policy();
    test_sizing();
    test_random();
    return test_summary("test_shape_lookup");
}
