/*
 * test_mapdef.c - map-definition templates (tersa_write_map_begin_record,
 * tersa_write_map_template): every buffer written with templates replayed
 * must equal, byte for byte, the same buffer written by a writer that never
 * uses them; a template applies only at a pristine point under its own
 * dictionary and validation; its memory is bounded and released.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counting_alloc.h"
#include "testutil.h"

/* Key sets that exercise each form a key can take in a definition. */
static const char *const SET_PLAIN[] = {"id", "user", "x", "name", "score"};
static const char *const SET_PREFIX[] = {"user_id", "user_name", "user_email", "u", ""};
static const char *const SET_TS[] = {"2024-05-01T10:00:00Z", "2024-05-01", "when", "1999-12-31T23:59:59.5+01:00"};
static const char *const SET_DICT[] = {"alpha", "beta", "gamma", "delta"};
/* A string and a symbol of the same text share one string-table entry. */
static const char *const SET_SAME[] = {"name", "name", "id"};
static const char *const SET_DICT_SHAPE[] = {"id", "user"}; /* a dictionary shape: written as a reference there */

typedef struct keyset {
    const char *const *names;
    size_t n;
    int symbol_at; /* index of a symbol key, or -1 */
} keyset;

static const keyset SETS[] = {
    {SET_PLAIN, 5, -1},
    {SET_PREFIX, 5, 2},
    {SET_TS, 4, -1},
    {SET_DICT, 4, 1},
    {SET_DICT_SHAPE, 2, -1},
    {SET_SAME, 3, 1},
    {SET_SAME, 3, 0},
};
#define NSETS (sizeof(SETS) / sizeof(SETS[0]))

static size_t keys_of(const keyset *s, tersa_key *k) {
    for (size_t i = 0; i < s->n; i++) {
        k[i].ptr = s->names[i];
        k[i].len = strlen(s->names[i]);
        k[i].symbol = (int)i == s->symbol_at;
    }
    return s->n;
}

/* How a map is opened: plainly, recording into *slot, or replaying *slot. */
typedef struct opener {
    tersa_mapdef **slot; /* NULL: plain */
    bool checked;
    int replays, records, declined;
} opener;

static bool open_map(tersa_writer *w, opener *o, const tersa_key *k, size_t n) {
    if (!o || !o->slot) return o && o->checked ? tersa_write_map_begin(w, k, n) : tersa_write_map_begin_utf8(w, k, n);
    if (*o->slot) {
        int r = tersa_write_map_template(w, *o->slot, o->checked);
        if (r > 0) {
            o->replays++;
            return true;
        }
        if (r < 0) return false;
        o->declined++;
    }
    tersa_mapdef *md = NULL;
    if (!tersa_write_map_begin_record(w, k, n, o->checked, &md)) return false;
    if (md) {
        tersa_mapdef_release(*o->slot);
        *o->slot = md;
        o->records++;
    }
    return true;
}

/* A message: a map of the set's keys whose values read the registers and
 * tables the definition left (strings equal to or sharing a prefix with the
 * keys, a timestamp string, a nested map of the same keys). */
static bool write_message(tersa_writer *w, opener *o, const keyset *s, int variant, int depth) {
    tersa_key k[8];
    size_t n = keys_of(s, k);
    if (!(depth ? (o && o->checked ? tersa_write_map_begin(w, k, n) : tersa_write_map_begin_utf8(w, k, n))
                : open_map(w, o, k, n)))
        return false;
    for (size_t i = 0; i < n; i++) {
        char buf[64];
        bool ok;
        switch ((i + (size_t)variant) % 5) {
        case 0: ok = tersa_write_string(w, k[i].ptr, k[i].len); break;
        case 1:
            snprintf(buf, sizeof buf, "%s_%d", k[i].ptr, variant);
            ok = tersa_write_string(w, buf, strlen(buf));
            break;
        case 2: ok = tersa_write_string(w, "2024-05-01T10:00:07Z", 20); break;
        case 3: ok = depth < 1 ? write_message(w, o, s, variant + 1, depth + 1) : tersa_write_int(w, variant); break;
        default:
            if (depth == 0) {
                /* A map of new keys that share prefixes with the key registers. */
                char k0[64], k1[64];
                snprintf(k0, sizeof k0, "%s_more", k[n - 1].ptr);
                snprintf(k1, sizeof k1, "%s%d", k[0].ptr, variant % 3);
                tersa_key nk[2] = {{k0, strlen(k0), false}, {k1, strlen(k1), false}};
                ok = tersa_write_map_begin(w, nk, 2) && tersa_write_bool(w, true) && tersa_write_string(w, k0, strlen(k0)) &&
                     tersa_write_map_end(w);
            } else {
                ok = tersa_write_int(w, (int64_t)i * 1000 + variant);
            }
            break;
        }
        if (!ok) return false;
    }
    return tersa_write_map_end(w);
}

/* A whole buffer: one message, or (arrayed) a string then the message,
 * where no template applies. */
static uint8_t *write_buffer(tersa_writer *w, opener *o, const tersa_dict *d, const keyset *s, int variant, bool arrayed,
                             size_t *len) {
    bool ok = tersa_writer_start(w, d, 0);
    if (ok && arrayed) ok = tersa_write_array_begin(w, 2) && tersa_write_string(w, "id", 2);
    ok = ok && write_message(w, o, s, variant, 0);
    if (ok && arrayed) ok = tersa_write_array_end(w);
    CHECK(ok && tersa_writer_complete(w), "buffer written (%s)", tersa_writer_error(w)->message);
    const uint8_t *p = tersa_writer_data(w, len);
    uint8_t *copy = malloc(*len);
    memcpy(copy, p, *len);
    return copy;
}

static tersa_dict *make_dict(int which) {
    tersa_key strings[3] = {{"beta", 4, false}, {"user_name", 9, false}, {"other", 5, false}};
    tersa_key shape[2] = {{"id", 2, false}, {"user", 4, false}};
    size_t lens[1] = {2};
    tersa_error err;
    tersa_dict *d = tersa_dict_new(NULL, strings, which ? 3 : 2, shape, lens, 1, &err);
    CHECK(d != NULL, "dictionary built");
    return d;
}

/* Single buffers, templates kept across them, against a plain writer. */
static void test_single(bool checked) {
    tersa_writer *w = tersa_writer_new(NULL), *plain = tersa_writer_new(NULL);
    tersa_dict *d1 = make_dict(0), *d2 = make_dict(1);
    const tersa_dict *dicts[3] = {NULL, d1, d2};
    tersa_mapdef *slots[NSETS][3] = {{NULL}};
    int replays = 0;
    for (int round = 0; round < 60; round++) {
        size_t si = (size_t)round % NSETS, di = (size_t)(round / 4) % 3;
        bool arrayed = round % 7 == 6;
        opener o = {&slots[si][di], checked, 0, 0, 0};
        /* Each set's template is tried under every dictionary, including the
         * wrong one (slot di2 of another dictionary): it must decline. */
        size_t di2 = (di + 1 + (size_t)round % 2) % 3;
        if (slots[si][di2] && !arrayed) {
            CHECK(tersa_writer_start(w, dicts[di], 0), "start");
            CHECK(tersa_write_map_template(w, slots[si][di2], checked) == 0, "a template of another dictionary declines");
        }
        size_t n1, n2;
        uint8_t *a = write_buffer(w, &o, dicts[di], &SETS[si], round, arrayed, &n1);
        uint8_t *b = write_buffer(plain, NULL, dicts[di], &SETS[si], round, arrayed, &n2);
        CHECK(n1 == n2 && memcmp(a, b, n1) == 0, "round %d (set %zu, dictionary %zu%s): same bytes", round, si, di,
              arrayed ? ", not pristine" : "");
        if (arrayed) CHECK(o.replays == 0 && o.records == 0, "no template applies after a string");
        replays += o.replays;
        free(a);
        free(b);
    }
    CHECK(replays >= 20, "templates replayed (%d)", replays);
    for (size_t i = 0; i < NSETS; i++)
        for (size_t j = 0; j < 3; j++) tersa_mapdef_release(slots[i][j]);
    tersa_writer_free(w);
    tersa_writer_free(plain);
    tersa_dict_free(d1);
    tersa_dict_free(d2);
}

/* A checked call never replays a template an unchecked one recorded; an
 * unchecked call replays either. */
static void test_validation(void) {
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_mapdef *md = NULL;
    size_t n;
    opener o = {&md, false, 0, 0, 0};
    free(write_buffer(w, &o, NULL, &SETS[0], 0, false, &n));
    CHECK(md && o.records == 1, "recorded unchecked");
    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_write_map_template(w, md, true) == 0, "a checked call declines an unchecked template");
    opener c = {&md, true, 0, 0, 0};
    free(write_buffer(w, &c, NULL, &SETS[0], 0, false, &n));
    CHECK(c.declined == 1 && c.records == 1, "the checked call recorded its own");
    opener u = {&md, false, 0, 0, 0};
    free(write_buffer(w, &u, NULL, &SETS[0], 0, false, &n));
    CHECK(u.replays == 1, "an unchecked call replays a checked template");
    /* A writer in error, or a point past the first map: no replay. */
    tersa_writer_start(w, NULL, 0);
    CHECK(!tersa_write_map_end(w), "misuse sets an error");
    CHECK(tersa_write_map_template(w, md, false) == 0 && !tersa_writer_template_point(w), "an error declines");
    tersa_writer_start(w, NULL, TERSA_WRITE_STREAM);
    CHECK(tersa_write_frame_begin(w) && tersa_writer_template_point(w), "a sync frame is a template point");
    CHECK(tersa_write_map_template(w, md, false) == 1, "replayed in a frame");
    CHECK(!tersa_writer_template_point(w) && tersa_write_map_template(w, md, false) == 0, "only once per point");
    tersa_mapdef_release(md);
    tersa_writer_free(w);
}

/* Streams: templates replay at sync frames only; the other frames write
 * shape references. Compared with a plain writer frame by frame. */
static void test_stream(void) {
    for (int every = 1; every <= 4; every++) {
        for (int with_dict = 0; with_dict < 2; with_dict++) {
            tersa_dict *d = with_dict ? make_dict(1) : NULL;
            tersa_writer *w = tersa_writer_new(NULL), *plain = tersa_writer_new(NULL);
            tersa_writer_set_sync(w, (uint64_t)every, 0);
            tersa_writer_set_sync(plain, (uint64_t)every, 0);
            tersa_mapdef *slots[NSETS] = {NULL};
            int replays = 0;
            for (int buffer = 0; buffer < 3; buffer++) {
                bool ok = tersa_writer_start(w, d, TERSA_WRITE_STREAM) && tersa_writer_start(plain, d, TERSA_WRITE_STREAM);
                for (int f = 0; ok && f < 12; f++) {
                    size_t si = (size_t)(f / 3 + buffer) % NSETS;
                    opener o = {&slots[si], false, 0, 0, 0};
                    if (f == 5) tersa_writer_sync(w), tersa_writer_sync(plain);
                    ok = tersa_write_frame_begin(w) && write_message(w, &o, &SETS[si], f, 0) && tersa_write_frame_end(w) &&
                         tersa_write_frame_begin(plain) && write_message(plain, NULL, &SETS[si], f, 0) &&
                         tersa_write_frame_end(plain);
                    CHECK(o.replays == 0 || tersa_writer_frame_synced(w), "replayed only in a sync frame");
                    replays += o.replays;
                }
                size_t n1, n2;
                const uint8_t *a = tersa_writer_data(w, &n1), *b = tersa_writer_data(plain, &n2);
                CHECK(ok && n1 == n2 && memcmp(a, b, n1) == 0, "stream (sync every %d, dictionary %d, buffer %d): same bytes",
                      every, with_dict, buffer);
            }
            CHECK(replays > 0, "templates replayed in the stream (every %d)", every);
            for (size_t i = 0; i < NSETS; i++) tersa_mapdef_release(slots[i]);
            tersa_writer_free(w);
            tersa_writer_free(plain);
            tersa_dict_free(d);
        }
    }
}

/* Lifetime: the caller's reference may go right after a replay (the writer
 * holds its own until its tables reset); bounded sizes; every byte freed. */
static void test_lifetime_and_bounds(void) {
    counting c = {0, 0};
    tersa_alloc a = counting_alloc(&c);
    tersa_writer *w = tersa_writer_new(&a), *plain = tersa_writer_new(NULL);
    tersa_mapdef *md = NULL;
    size_t n1, n2;
    opener o = {&md, false, 0, 0, 0};
    free(write_buffer(w, &o, NULL, &SETS[1], 0, false, &n1));
    CHECK(tersa_writer_start(w, NULL, 0), "start");
    CHECK(tersa_write_map_template(w, md, false) == 1, "replayed");
    tersa_mapdef_release(md); /* the writer's reference keeps the keys alive */
    md = NULL;
    tersa_key k[8];
    size_t nk = keys_of(&SETS[1], k);
    bool ok = true;
    for (size_t i = 0; i < nk; i++) ok = ok && tersa_write_string(w, k[i].ptr, k[i].len);
    ok = ok && tersa_write_map_end(w);
    CHECK(ok, "values after a released template");
    const uint8_t *p = tersa_writer_data(w, &n1);
    uint8_t *got = malloc(n1);
    memcpy(got, p, n1);
    tersa_writer_start(plain, NULL, 0);
    ok = tersa_write_map_begin_utf8(plain, k, nk);
    for (size_t i = 0; i < nk; i++) ok = ok && tersa_write_string(plain, k[i].ptr, k[i].len);
    ok = ok && tersa_write_map_end(plain);
    p = tersa_writer_data(plain, &n2);
    CHECK(ok && n1 == n2 && memcmp(got, p, n1) == 0, "same bytes after the caller released the template");
    free(got);

    /* Thousands of distinct first-map shapes: each recorded, replaced and
     * released; live memory stays what one buffer needs. */
    size_t base = 0;
    for (int i = 0; i < 5000; i++) {
        char name[2][16];
        snprintf(name[0], sizeof name[0], "k%d", i);
        snprintf(name[1], sizeof name[1], "v%d", i * 7);
        tersa_key ks[2] = {{name[0], strlen(name[0]), false}, {name[1], strlen(name[1]), false}};
        tersa_mapdef *rec = NULL;
        ok = tersa_writer_start(w, NULL, 0) && tersa_write_map_begin_record(w, ks, 2, false, &rec) &&
             tersa_write_null(w) && tersa_write_null(w) && tersa_write_map_end(w);
        CHECK(ok && rec, "recorded shape %d", i);
        tersa_mapdef_release(md);
        md = rec;
        if (i == 100) base = c.live;
        /* Longer names make slightly larger templates, nothing more. */
        if (i > 100 && c.live > base + 64) {
            CHECK(false, "memory grows with distinct shapes (%zu > %zu + 64 at %d)", c.live, base, i);
            break;
        }
    }
    tersa_mapdef_release(md);
    md = NULL;

    /* Too many keys, or too many bytes: no template; the map is written. */
    tersa_key many[TERSA_MAPDEF_MAX_KEYS + 1];
    char names[TERSA_MAPDEF_MAX_KEYS + 1][8];
    for (size_t i = 0; i <= TERSA_MAPDEF_MAX_KEYS; i++) {
        snprintf(names[i], sizeof names[i], "m%zu", i);
        many[i].ptr = names[i];
        many[i].len = strlen(names[i]);
        many[i].symbol = false;
    }
    CHECK(tersa_writer_start(w, NULL, 0) && tersa_write_map_begin_record(w, many, TERSA_MAPDEF_MAX_KEYS + 1, false, &md) &&
              md == NULL,
          "no template above the key limit");
    static char big[TERSA_MAPDEF_MAX_BYTES];
    memset(big, 'b', sizeof big);
    tersa_key large = {big, sizeof big, false};
    CHECK(tersa_writer_start(w, NULL, 0) && tersa_write_map_begin_record(w, &large, 1, false, &md) && md == NULL,
          "no template above the byte limit");
    CHECK(tersa_writer_start(w, NULL, 0) && tersa_write_map_begin_record(w, many, TERSA_MAPDEF_MAX_KEYS, false, &md) &&
              md != NULL,
          "a template at the key limit");
    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_write_map_template(w, md, false) == 1, "replayed at the limit");
    tersa_mapdef_release(md); /* the writer's reference is the last one */
    tersa_writer_free(w);
    CHECK(c.live == 0, "everything freed (%zu bytes left)", c.live);
    tersa_writer_free(plain);
}

/* A template outlives the writer that recorded it (a binding may hand it to
 * the next writer): replayed by another writer after the first is freed, it
 * names none of the first writer's memory (ASan), and the values after it
 * read the key registers (strings sharing the keys' prefixes). */
static void test_other_writer(void) {
    for (size_t si = 0; si < NSETS; si++) {
        tersa_writer *w1 = tersa_writer_new(NULL);
        tersa_mapdef *md = NULL;
        opener o = {&md, false, 0, 0, 0};
        size_t n1, n2;
        for (int round = 0; round < 2; round++) free(write_buffer(w1, &o, NULL, &SETS[si], round, false, &n1));
        tersa_writer_free(w1);
        if (!md) continue; /* a dictionary shape: nothing recorded without its dictionary */
        tersa_writer *w2 = tersa_writer_new(NULL), *plain = tersa_writer_new(NULL);
        o.replays = 0;
        for (int round = 2; round < 5; round++) {
            uint8_t *a = write_buffer(w2, &o, NULL, &SETS[si], round, false, &n1);
            uint8_t *b = write_buffer(plain, NULL, NULL, &SETS[si], round, false, &n2);
            CHECK(n1 == n2 && memcmp(a, b, n1) == 0, "set %zu round %d: a template from a freed writer, same bytes", si,
                  round);
            free(a);
            free(b);
        }
        CHECK(o.replays == 3, "set %zu replayed by the second writer (%d)", si, o.replays);
        tersa_mapdef_release(md);
        tersa_writer_free(w2);
        tersa_writer_free(plain);
    }
}

/* Where the writer finds a key through its memo of key addresses (buffers of
 * many shapes), the output must not depend on where the caller keeps the
 * key's bytes: at one address per name (found there again), at fresh
 * addresses (never found), or in one scratch buffer rewritten for every map
 * (the same address holding other bytes). */
enum { MEMO_NAMES = 48, MEMO_MAPS = 400, MEMO_MAX_KEYS = 20 };
enum { AT_STABLE, AT_FRESH, AT_SCRATCH };

static uint8_t *write_many_shapes(tersa_writer *w, const tersa_dict *d, int where, size_t *len) {
    static char names[MEMO_NAMES][16];
    for (int i = 0; i < MEMO_NAMES; i++) snprintf(names[i], sizeof names[i], i % 7 == 3 ? "x%d" : "field_%d", i);
    names[5][0] = 'q', names[5][1] = 0; /* a one-byte key: no string-table entry */
    static char scratch[MEMO_MAX_KEYS][16];
    char *fresh = malloc((size_t)MEMO_MAPS * MEMO_MAX_KEYS * 16), *next = fresh;
    bool ok = fresh && tersa_writer_start(w, d, 0) && tersa_write_array_begin(w, MEMO_MAPS);
    uint32_t rng = 12345;
    for (int m = 0; ok && m < MEMO_MAPS; m++) {
        tersa_key k[MEMO_MAX_KEYS];
        size_t n = 0;
        for (int i = 0; i < MEMO_NAMES && n < MEMO_MAX_KEYS; i++) {
            rng = rng * 1103515245u + 12345u;
            if ((rng >> 16) % 4 != 0 && i > 2) continue; /* optional fields: a new shape most of the time */
            if (i >= MEMO_NAMES - 8 && m < MEMO_MAPS / 2) continue; /* first met once the memo is in use */
            const char *name = names[i];
            size_t nl = strlen(name);
            if (where == AT_FRESH) {
                memcpy(next, name, nl);
                name = next;
                next += 16;
            } else if (where == AT_SCRATCH) {
                memcpy(scratch[n], name, nl);
                name = scratch[n];
            }
            k[n].ptr = name;
            k[n].len = nl;
            k[n].symbol = m % 50 == 7 && i == 4;
            n++;
        }
        ok = tersa_write_map_begin_utf8(w, k, n);
        for (size_t i = 0; ok && i < n; i++) ok = tersa_write_int(w, (int64_t)i);
        ok = ok && tersa_write_map_end(w);
    }
    ok = ok && tersa_write_array_end(w);
    free(fresh);
    CHECK(ok && tersa_writer_complete(w), "many shapes written (%s)", tersa_writer_error(w)->message);
    const uint8_t *p = tersa_writer_data(w, len);
    uint8_t *copy = malloc(*len);
    memcpy(copy, p, *len);
    return copy;
}

static void test_key_addresses(void) {
    tersa_dict *dict = make_dict(1);
    for (int with_dict = 0; with_dict < 2; with_dict++) {
        const tersa_dict *d = with_dict ? dict : NULL;
        tersa_writer *ref_w = tersa_writer_new(NULL), *w = tersa_writer_new(NULL);
        size_t ref_len, len;
        uint8_t *ref = write_many_shapes(ref_w, d, AT_FRESH, &ref_len);
        tersa_decode_options opts = {&d, d ? 1 : 0, 0, false, false};
        tersa_error err;
        tersa_doc *doc = tersa_decode(NULL, ref, ref_len, &opts, &err);
        CHECK(doc != NULL && tersa_doc_root(doc, 0)->v.array.count == MEMO_MAPS, "the reference decodes");
        tersa_doc_free(doc);
        /* The same writer across buffers and ways: what one buffer left in
         * the memo must not leak into the next. */
        static const int order[] = {AT_STABLE, AT_SCRATCH, AT_STABLE, AT_FRESH, AT_STABLE, AT_SCRATCH};
        for (size_t r = 0; r < sizeof order / sizeof order[0]; r++) {
            uint8_t *out = write_many_shapes(w, d, order[r], &len);
            CHECK(len == ref_len && memcmp(out, ref, len) == 0, "dict %d, round %zu (way %d): bytes differ from the reference",
                  with_dict, r, order[r]);
            free(out);
        }
        free(ref);
        tersa_writer_free(ref_w);
        tersa_writer_free(w);
    }
    tersa_dict_free(dict);
}

int main(void) {
    test_single(false);
    test_single(true);
    test_validation();
    test_stream();
    test_lifetime_and_bounds();
    test_other_writer();
    test_key_addresses();
    return test_summary("test_mapdef");
}
