/*
 * test_reader_memo.c - the reader's memo of map definitions (reader_memo.h):
 * a reader that has read many buffers (its memo holding their definitions)
 * reads every buffer, and every damaged copy of it, exactly as a fresh reader
 * does: the same items, map keys, key string-table indices, TERSA_ITEM_*
 * flags and strings (references into the table and prefixes of the last key
 * included), and the same error code and offset. Damaged copies are read
 * right after their intact buffer, in allocations of their exact size (ASan)
 * and as a shorter view of the intact bytes (the bytes past the end still
 * those of the known definition).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "reader_runs.h"

/* Keys that share heads, lengths and tails; below the table's minimum length;
 * non-ASCII; past the short string tags (32 bytes and more). */
static const char *const POOL[] = {
    "ab", "cd", "ef", "a", "b", "", "abcdefgh1", "abcdefgh2", "abcdefgh1x", "x", "y", ("\xc3\xa9" "1"),
    "\xe4\xb8\xad\xe6\x96\x87", "\xf0\x9f\x98\x80", "url_https://example.com/x/key", "url_https://example.com/x/kez",
    "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "long key of thirty-three bytes!!!",
};
#define NPOOL (sizeof POOL / sizeof POOL[0])

typedef struct {
    uint64_t h;
} sig;

static void mix(sig *s, const void *p, size_t n) {
    const uint8_t *b = (const uint8_t *)p;
    for (size_t i = 0; i < n; i++) s->h = (s->h ^ b[i]) * 0x100000001b3ull;
}
static void mix64(sig *s, uint64_t v) { mix(s, &v, sizeof v); }

static void mix_item(sig *s, const tersa_item *it) {
    mix64(s, it->type);
    mix64(s, it->tag);
    mix64(s, it->offset);
    mix64(s, it->flags);
    if (it->type == TERSA_STRING || it->type == TERSA_SYMBOL) {
        mix64(s, it->v.str.len);
        mix64(s, it->v.str.index);
        mix(s, it->v.str.ptr, it->v.str.len);
    } else if (it->type == TERSA_MAP) {
        mix64(s, it->v.map.count);
        mix64(s, it->v.map.shape);
        for (size_t i = 0; i < it->v.map.count; i++) {
            mix64(s, it->v.map.keys[i].len);
            mix64(s, it->v.map.keys[i].symbol);
            mix(s, it->v.map.keys[i].ptr, it->v.map.keys[i].len);
            mix64(s, it->v.map.key_strings ? it->v.map.key_strings[i] : 0xFFFFFFFEu);
        }
    } else if (it->type == TERSA_INT || it->type == TERSA_UINT || it->type == TERSA_FLOAT) {
        mix64(s, it->v.u);
    }
}

/* Every item of the buffer, then its outcome, by reader r. */
static uint64_t read_all(tersa_reader *r, const uint8_t *bytes, size_t len, const tersa_dict *dict, bool *ok_out) {
    sig s = {0xcbf29ce484222325ull};
    const tersa_dict *ds[1] = {dict};
    bool ok = tersa_reader_start(r, bytes, len, ds, dict ? 1 : 0, 0);
    size_t pending = ok ? 1 : 0;
    while (ok && pending) {
        tersa_item it;
        ok = tersa_read(r, &it);
        if (!ok) break;
        mix_item(&s, &it);
        pending = pending - 1 + child_items(&it);
    }
    if (ok) ok = tersa_reader_finish(r);
    const tersa_error *e = tersa_reader_error(r);
    mix64(&s, ok ? 0 : (uint64_t)e->code);
    mix64(&s, ok ? 0 : e->offset);
    *ok_out = ok;
    return s.h;
}

static uint64_t read_fresh(const uint8_t *bytes, size_t len, const tersa_dict *dict, bool *ok) {
    tersa_reader *r = tersa_reader_new(NULL);
    uint64_t h = read_all(r, bytes, len, dict, ok);
    tersa_reader_free(r);
    return h;
}

static void pick_keys(test_rng *g, tersa_key *keys, size_t n) {
    size_t order[NPOOL];
    for (size_t i = 0; i < NPOOL; i++) order[i] = i;
    for (size_t i = 0; i < n; i++) {
        size_t j = i + (size_t)rng_below(g, NPOOL - i);
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
        keys[i].ptr = POOL[order[i]];
        keys[i].len = strlen(POOL[order[i]]);
        keys[i].symbol = rng_below(g, 40) == 0;
    }
}

/* A record: its values are numbers, strings of the pool (references to the
 * keys, prefixes of them) and now and then a nested record. */
static bool write_record(tersa_writer *w, test_rng *g, int depth) {
    static const size_t counts[] = {1, 2, 3, 5, 7, 14, 15, 16, 17};
    tersa_key keys[20];
    size_t n = counts[rng_below(g, sizeof counts / sizeof counts[0])];
    pick_keys(g, keys, n);
    if (!tersa_write_map_begin(w, keys, n)) return false;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = rng_below(g, 8);
        bool ok;
        if (k < 3) {
            const char *s = POOL[rng_below(g, NPOOL)];
            ok = tersa_write_string(w, s, strlen(s));
        } else if (k == 3) {
            char b[48];
            const char *s = keys[rng_below(g, n)].ptr;
            snprintf(b, sizeof b, "%s!", s);
            ok = tersa_write_string(w, b, strlen(b));
        } else if (k == 4 && depth < 2) {
            ok = write_record(w, g, depth + 1);
        } else {
            ok = tersa_write_int(w, (int64_t)rng_below(g, 1000) - 10);
        }
        if (!ok) return false;
    }
    return tersa_write_map_end(w);
}

static uint8_t *message(tersa_writer *w, test_rng *g, const tersa_dict *dict, size_t *len) {
    if (!tersa_writer_start(w, dict, 0)) return NULL;
    bool ok;
    if (rng_below(g, 3) == 0) {
        /* strings before the records move the string table's indices */
        ok = tersa_write_array_begin(w, 3) && tersa_write_string(w, "zz", 2) && write_record(w, g, 0) &&
             write_record(w, g, 0) && tersa_write_array_end(w);
    } else {
        ok = write_record(w, g, 0);
    }
    if (!ok || !tersa_writer_complete(w)) return NULL;
    const uint8_t *data = tersa_writer_data(w, len);
    uint8_t *out = (uint8_t *)malloc(*len);
    if (out) memcpy(out, data, *len);
    return out;
}

/* The warm reader reads `bytes` as a fresh one does. */
static void same_as_fresh(tersa_reader *warm, const uint8_t *bytes, size_t len, const tersa_dict *dict,
                          const char *what, size_t at) {
    bool ok_w, ok_f;
    uint64_t hw = read_all(warm, bytes, len, dict, &ok_w);
    uint64_t hf = read_fresh(bytes, len, dict, &ok_f);
    CHECK(hw == hf && ok_w == ok_f, "%s at %zu (of %zu): warm reader %s, fresh %s (error %s@%zu)", what, at, len,
          ok_w ? "ok" : "failed", ok_f ? "ok" : "failed", tersa_code_name(tersa_reader_error(warm)->code),
          tersa_reader_error(warm)->offset);
}

static void run(const tersa_dict *dict, uint64_t seed, int messages, int min_plain) {
    test_rng g = {seed};
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_reader *warm = tersa_reader_new(NULL);
    size_t plain = 0;
    for (int m = 0; m < messages; m++) {
        size_t len;
        uint8_t *data = message(w, &g, dict, &len);
        CHECK(data != NULL, "encode");
        if (!data) break;
        same_as_fresh(warm, data, len, dict, "intact", 0);
        same_as_fresh(warm, data, len, dict, "intact again", 0);
        tersa_item it;
        tersa_reader_start(warm, data, len, &dict, dict ? 1 : 0, 0);
        if (tersa_read(warm, &it) && (it.flags & TERSA_ITEM_PLAIN_KEYS)) plain++;
        if (m % 6 == 0) {
            for (size_t cut = 0; cut < len; cut++) {
                uint8_t *copy = (uint8_t *)malloc(cut ? cut : 1);
                memcpy(copy, data, cut);
                read_all(warm, data, len, dict, &(bool){0});
                same_as_fresh(warm, copy, cut, dict, "cut (own allocation)", cut);
                read_all(warm, data, len, dict, &(bool){0});
                same_as_fresh(warm, data, cut, dict, "cut (same memory)", cut);
                free(copy);
            }
            static const uint8_t subs[] = {0xFF, 0x80, 0xC3, 0x41, 0x42, 0x43, 0x00, 0x92, 0xF3};
            for (size_t i = 3; i < len; i++)
                for (size_t k = 0; k <= sizeof subs; k++) {
                    uint8_t *copy = (uint8_t *)malloc(len);
                    memcpy(copy, data, len);
                    copy[i] = k < sizeof subs ? subs[k] : data[i - 1]; /* the last: a key's byte repeated */
                    read_all(warm, data, len, dict, &(bool){0});
                    same_as_fresh(warm, copy, len, dict, "byte replaced", i);
                    free(copy);
                }
        }
        free(data);
    }
    CHECK(plain >= (size_t)min_plain, "messages that open with a map of plain keys: %zu of %d", plain, messages);
    tersa_reader_free(warm);
    tersa_writer_free(w);
}

int main(void) {
    run(NULL, 0x5eed, 240, 60);
    /* A dictionary's strings shift the indices the definitions' keys take,
     * and its shape is one the messages define. */
    tersa_key strs[4] = {{"ab", 2, false}, {"cd", 2, false}, {"zz", 2, false}, {"k1", 2, false}};
    tersa_key shape[2] = {{"ab", 2, false}, {"cd", 2, false}};
    size_t shape_len = 2;
    tersa_dict *d = tersa_dict_new(NULL, strs, 4, shape, &shape_len, 1, NULL);
    CHECK(d != NULL, "dictionary");
    if (d) run(d, 0xd1c7, 120, 12);
    tersa_dict_free(d);
    return test_summary("test_reader_memo");
}
