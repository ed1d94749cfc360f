/*
 * test_borrowed.c - borrowed strings (tersa_write_string_utf8_borrowed,
 * tersa_write_string_array_borrowed): the same bytes as the copying calls in
 * buffers, streams and under a dictionary; a stream never keeps the caller's
 * bytes past a frame; a buffer's borrowed bytes may be freed once the next
 * buffer starts, or once tersa_writer_settle_borrowed has returned (ASan
 * reports any later read).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strings that exercise every string form: repeats (references), shared
 * prefixes (prefix forms against the slot and `last` registers), timestamps,
 * short inline strings, single bytes, non-ASCII, and long strings. */
#define POOL 48
typedef struct pool {
    char *bytes[POOL];
    size_t lens[POOL];
} pool;

static void pool_fill(pool *p, test_rng *g, unsigned variant) {
    static const char *const fixed[] = {"", "a", "ab", "id", "name", "2024-05-01T10:20:30Z", "2024-05-01T10:20:31.5Z",
                                        "caf\xc3\xa9", "\xe2\x82\xac\xe2\x82\xac", "user_0001", "user_0002", "user_0102"};
    size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
    for (size_t i = 0; i < POOL; i++) {
        char tmp[400];
        size_t n;
        if (i < nfixed) {
            n = strlen(fixed[i]);
            memcpy(tmp, fixed[i], n);
        } else {
            /* A shared stem (prefix forms), a variant tag, random tail; some long. */
            size_t tail = (size_t)rng_below(g, i % 5 == 0 ? 300 : 20);
            n = (size_t)snprintf(tmp, sizeof tmp, "https://example.org/items/%u/", variant);
            for (size_t j = 0; j < tail && n < sizeof tmp - 1; j++) tmp[n++] = (char)('a' + rng_below(g, 26));
        }
        p->bytes[i] = (char *)malloc(n ? n : 1);
        memcpy(p->bytes[i], tmp, n);
        p->lens[i] = n;
    }
}

static void pool_free(pool *p) {
    for (size_t i = 0; i < POOL; i++) free(p->bytes[i]);
}

/* One document over the pool: an array of maps (keys drawn from the pool, so
 * keys meet entries that values added), single strings and string arrays.
 * `borrow` picks the borrowed calls. */
static bool write_doc(tersa_writer *w, const pool *p, uint64_t seed, bool borrow) {
    test_rng g = {seed};
    size_t items = 40;
    if (!tersa_write_array_begin(w, items)) return false;
    for (size_t i = 0; i < items; i++) {
        size_t a = (size_t)rng_below(&g, POOL), b = (size_t)rng_below(&g, POOL);
        switch (rng_below(&g, 3)) {
        case 0:
            if (!(borrow ? tersa_write_string_utf8_borrowed(w, p->bytes[a], p->lens[a])
                         : tersa_write_string_utf8(w, p->bytes[a], p->lens[a])))
                return false;
            break;
        case 1: {
            const char *ptrs[12];
            size_t lens[12], n = (size_t)rng_below(&g, 12);
            for (size_t j = 0; j < n; j++) {
                size_t k = (size_t)rng_below(&g, POOL);
                ptrs[j] = p->bytes[k];
                lens[j] = p->lens[k];
            }
            if (!(borrow ? tersa_write_string_array_borrowed(w, ptrs, lens, n) : tersa_write_string_array(w, ptrs, lens, n)))
                return false;
            break;
        }
        default: {
            if (a == b || p->lens[a] == 0 || p->lens[b] == 0) b = (a + 1) % POOL;
            if (a == b || (p->lens[a] == p->lens[b] && memcmp(p->bytes[a], p->bytes[b], p->lens[a]) == 0)) a = 3, b = 4;
            tersa_key keys[2] = {{p->bytes[a], p->lens[a], false}, {p->bytes[b], p->lens[b], false}};
            if (!tersa_write_map_begin_utf8(w, keys, 2)) return false;
            for (size_t j = 0; j < 2; j++) {
                size_t k = (size_t)rng_below(&g, POOL);
                if (!(borrow ? tersa_write_string_utf8_borrowed(w, p->bytes[k], p->lens[k])
                             : tersa_write_string_utf8(w, p->bytes[k], p->lens[k])))
                    return false;
            }
            if (!tersa_write_map_end(w)) return false;
        }
        }
    }
    return tersa_write_array_end(w);
}

static bool same_output(tersa_writer *a, tersa_writer *b) {
    size_t la, lb;
    const uint8_t *da = tersa_writer_data(a, &la), *db = tersa_writer_data(b, &lb);
    return la == lb && memcmp(da, db, la) == 0;
}

/* Buffers one after another on the same writers, with and without a
 * dictionary; each buffer's pool is freed once the next buffer has started,
 * so a table entry left pointing at it would be a use after free. */
static void test_buffers(void) {
    tersa_key dstrings[] = {{"name", 4, false}, {"user_0001", 9, false}, {"https://example.org/items/1/", 28, false}};
    tersa_key dshape[] = {{"id", 2, false}, {"name", 4, false}};
    size_t dshape_len = 2;
    tersa_error err;
    tersa_dict *dict = tersa_dict_new(NULL, dstrings, 3, dshape, &dshape_len, 1, &err);
    CHECK(dict != NULL, "dictionary");
    tersa_writer *copying = tersa_writer_new(NULL), *borrowing = tersa_writer_new(NULL);
    test_rng g = {7};
    pool *last = NULL;
    for (unsigned round = 0; round < 60; round++) {
        const tersa_dict *d = round % 3 == 2 ? dict : NULL;
        bool ok = tersa_writer_start(copying, d, 0) && tersa_writer_start(borrowing, d, 0);
        if (last) { /* the last buffer has ended: its bytes may go */
            pool_free(last);
            free(last);
        }
        pool *p = (pool *)malloc(sizeof(pool));
        pool_fill(p, &g, round % 4);
        uint64_t seed = rng_next(&g);
        ok = ok && write_doc(copying, p, seed, false) && write_doc(borrowing, p, seed, true);
        CHECK(ok && same_output(copying, borrowing), "buffer %u: borrowed strings give the same bytes", round);
        last = p;
    }
    pool_free(last);
    free(last);
    tersa_writer_free(copying);
    tersa_writer_free(borrowing);
    tersa_dict_free(dict);
}

/* In a stream the tables carry on from frame to frame: each frame's strings
 * are in memory freed after the frame, and the next frame's equal strings
 * must still be found (as references) exactly as by a copying writer. */
static void test_stream(void) {
    tersa_writer *copying = tersa_writer_new(NULL), *borrowing = tersa_writer_new(NULL);
    bool ok = tersa_writer_start(copying, NULL, TERSA_WRITE_STREAM) && tersa_writer_start(borrowing, NULL, TERSA_WRITE_STREAM);
    test_rng g = {11};
    for (unsigned frame = 0; ok && frame < 20; frame++) {
        pool p;
        test_rng pg = {99}; /* every frame's pool has the same strings, in fresh memory */
        pool_fill(&p, &pg, 1);
        uint64_t seed = rng_next(&g);
        ok = tersa_write_frame_begin(copying) && write_doc(copying, &p, seed, false) && tersa_write_frame_end(copying) &&
             tersa_write_frame_begin(borrowing) && write_doc(borrowing, &p, seed, true) && tersa_write_frame_end(borrowing);
        /* Overwrite before freeing: a kept pointer would now see other bytes. */
        for (size_t i = 0; i < POOL; i++) memset(p.bytes[i], '#', p.lens[i]);
        pool_free(&p);
    }
    CHECK(ok && same_output(copying, borrowing), "stream: borrowed strings are copied, the same bytes");
    tersa_writer_free(copying);
    tersa_writer_free(borrowing);
}

/* A copy of p's strings at new addresses. */
static pool *pool_clone(const pool *p) {
    pool *c = (pool *)malloc(sizeof(pool));
    for (size_t i = 0; i < POOL; i++) {
        c->bytes[i] = (char *)malloc(p->lens[i] ? p->lens[i] : 1);
        memcpy(c->bytes[i], p->bytes[i], p->lens[i]);
        c->lens[i] = p->lens[i];
    }
    return c;
}

/* Pools overwritten by pool_replace and kept (not freed) until the round ends. */
#define GRAVE_MAX 4096
static pool *g_grave[GRAVE_MAX];
static size_t g_grave_n;
static bool g_grave_keep;

/* What host code may do once the writer has settled: overwrite every string
 * lent so far, then free it (at once, so that ASan sees a later read; or at
 * the end of the round when g_grave_keep, so that a later read sees '#'
 * whatever malloc reuses), and go on with equal strings at new addresses. */
static pool *pool_replace(pool *p) {
    pool *c = pool_clone(p);
    for (size_t i = 0; i < POOL; i++) memset(p->bytes[i], '#', p->lens[i]);
    if (g_grave_keep && g_grave_n < GRAVE_MAX) {
        g_grave[g_grave_n++] = p;
    } else {
        pool_free(p);
        free(p);
    }
    return c;
}

static void grave_empty(void) {
    for (size_t i = 0; i < g_grave_n; i++) {
        pool_free(g_grave[i]);
        free(g_grave[i]);
    }
    g_grave_n = 0;
}

/* Strings made during a document (fresh: not in the table yet, most sharing
 * a prefix with a register), each lent once and then treated like the pool
 * (fresh_drop at each settle). */
#define FRESH_MAX 8192
static char *g_fresh[FRESH_MAX];
static size_t g_fresh_lens[FRESH_MAX], g_fresh_n;

static const char *fresh_string(test_rng *g, size_t *len) {
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "https://example.org/items/%u/%u", (unsigned)rng_below(g, 3),
                     (unsigned)rng_below(g, 100000));
    char *f = (char *)malloc((size_t)n);
    memcpy(f, tmp, (size_t)n);
    if (g_fresh_n < FRESH_MAX) {
        g_fresh[g_fresh_n] = f;
        g_fresh_lens[g_fresh_n++] = (size_t)n;
    }
    *len = (size_t)n;
    return f;
}

/* Overwrite the fresh strings, then free them (now, or at the round's end
 * with the pools: g_grave_keep). */
static void fresh_drop(bool now) {
    for (size_t i = 0; i < g_fresh_n; i++) memset(g_fresh[i], '#', g_fresh_lens[i]);
    if (!now) return;
    for (size_t i = 0; i < g_fresh_n; i++) free(g_fresh[i]);
    g_fresh_n = 0;
}

/* write_doc's items, nested one level deeper (maps of arrays of strings),
 * with the borrowing writer settling at random points, inside open arrays
 * and maps, each settle followed by pool_replace: every table entry, slot
 * register, `last` and shape key that pointed at lent bytes must have moved
 * to the writer's copy (references found, prefix forms and shape lookups as
 * with a copying writer; ASan sees any read of the freed pools). */
static bool write_doc_settling(tersa_writer *w, pool **pp, uint64_t seed, bool borrow, unsigned settle_one_in,
                               unsigned *settles) {
    test_rng g = {seed};
    size_t items = 60;
#define SETTLE_POINT()                                                                   \
    do {                                                                                 \
        if (rng_below(&g, settle_one_in) == 0 && borrow) {                               \
            if (!tersa_writer_settle_borrowed(w)) return false;                         \
            *pp = pool_replace(*pp);                                                     \
            fresh_drop(!g_grave_keep);                                                   \
            ++*settles;                                                                  \
        }                                                                                \
    } while (0)
    if (!tersa_write_array_begin(w, 2 * items)) return false; /* a map and a string each */
    for (size_t i = 0; i < items; i++) {
        const pool *p = *pp;
        size_t a = (size_t)rng_below(&g, POOL), b = (size_t)rng_below(&g, POOL);
        if (a == b || p->lens[a] == 0 || p->lens[b] == 0) b = (a + 1) % POOL;
        if (a == b || (p->lens[a] == p->lens[b] && memcmp(p->bytes[a], p->bytes[b], p->lens[a]) == 0)) a = 3, b = 4;
        tersa_key keys[2] = {{p->bytes[a], p->lens[a], false}, {p->bytes[b], p->lens[b], false}};
        if (!tersa_write_map_begin_utf8(w, keys, 2)) return false;
        for (size_t j = 0; j < 2; j++) {
            SETTLE_POINT();
            size_t n = (size_t)rng_below(&g, 6);
            if (!tersa_write_array_begin(w, n)) return false;
            for (size_t k = 0; k < n; k++) {
                SETTLE_POINT();
                size_t s = (size_t)rng_below(&g, POOL), len = 0;
                p = *pp;
                const char *str = rng_below(&g, 2) ? fresh_string(&g, &len) : (len = p->lens[s], p->bytes[s]);
                if (!(borrow ? tersa_write_string_utf8_borrowed(w, str, len) : tersa_write_string_utf8(w, str, len)))
                    return false;
            }
            if (!tersa_write_array_end(w)) return false;
        }
        if (!tersa_write_map_end(w)) return false;
        SETTLE_POINT();
        p = *pp;
        size_t s = (size_t)rng_below(&g, POOL);
        if (!(borrow ? tersa_write_string_utf8_borrowed(w, p->bytes[s], p->lens[s])
                     : tersa_write_string_utf8(w, p->bytes[s], p->lens[s])))
            return false;
    }
#undef SETTLE_POINT
    return tersa_write_array_end(w);
}

static void test_settle(void) {
    tersa_writer *copying = tersa_writer_new(NULL), *borrowing = tersa_writer_new(NULL);
    test_rng g = {23};
    unsigned settles = 0;
    for (unsigned round = 0; round < 40; round++) {
        pool *pc = (pool *)malloc(sizeof(pool));
        test_rng pg = {1000 + round};
        pool_fill(pc, &pg, round % 3);
        pool *pb = pool_clone(pc);
        uint64_t seed = rng_next(&g);
        unsigned one_in = 1u + round % 8;
        g_grave_keep = round % 2 == 0;
        bool ok = tersa_writer_start(copying, NULL, 0) && tersa_writer_start(borrowing, NULL, 0) &&
                  write_doc_settling(copying, &pc, seed, false, one_in, &settles) &&
                  write_doc_settling(borrowing, &pb, seed, true, one_in, &settles);
        CHECK(ok && same_output(copying, borrowing), "settle round %u: the same bytes as a copying writer", round);
        /* The strings lent since the last settle point, then nothing: true both times. */
        CHECK(tersa_writer_settle_borrowed(borrowing) && tersa_writer_settle_borrowed(borrowing),
              "settle round %u: settling again", round);
        fresh_drop(true);
        grave_empty();
        pool_free(pb);
        free(pb);
        pool_free(pc);
        free(pc);
    }
    CHECK(settles > 1000, "settle points were reached (%u)", settles);
    /* A writer holding an error does not settle. */
    CHECK(tersa_writer_start(borrowing, NULL, 0) && tersa_write_string_utf8_borrowed(borrowing, "abc", 3) &&
              !tersa_write_null(borrowing) && !tersa_writer_settle_borrowed(borrowing),
          "settle after an error is false");
    tersa_writer_free(copying);
    tersa_writer_free(borrowing);
}

/* One string lent, settled and overwritten: the next equal string is a
 * reference to it, and a string sharing its prefix takes the prefix form,
 * from the writer's copy. */
static void test_settle_simple(void) {
    tersa_writer *w = tersa_writer_new(NULL), *c = tersa_writer_new(NULL);
    char *lent = (char *)malloc(9);
    memcpy(lent, "user_0001", 9);
    bool ok = tersa_writer_start(w, NULL, 0) && tersa_write_array_begin(w, 3) &&
              tersa_write_string_utf8_borrowed(w, lent, 9) && tersa_writer_settle_borrowed(w);
    memset(lent, 'x', 9);
    free(lent);
    ok = ok && tersa_write_string_utf8(w, "user_0001", 9) && tersa_write_string_utf8(w, "user_0002", 9) &&
         tersa_write_array_end(w);
    ok = ok && tersa_writer_start(c, NULL, 0) && tersa_write_array_begin(c, 3) &&
         tersa_write_string_utf8(c, "user_0001", 9) && tersa_write_string_utf8(c, "user_0001", 9) &&
         tersa_write_string_utf8(c, "user_0002", 9) && tersa_write_array_end(c);
    CHECK(ok && same_output(w, c), "settle: a reference and a prefix form from the copy");
    tersa_writer_free(w);
    tersa_writer_free(c);
}

int main(void) {
    test_buffers();
    test_stream();
    test_settle_simple();
    test_settle();
    return test_summary("test_borrowed");
}
