/*
 * testutil.c - test harness helpers.
 */
#include "testutil.h"
#include "reader_runs.h"

#include <stdlib.h>
#include <string.h>

unsigned long test_checks, test_failures;

int test_summary(const char *name) {
    printf("%s: %lu checks, %lu failures\n", name, test_checks, test_failures);
    return test_failures ? 1 : 0;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

uint8_t *hex_decode(const char *hex, size_t hexlen, size_t *len) {
    if (hexlen % 2) return NULL;
    uint8_t *out = (uint8_t *)malloc(hexlen / 2 + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < hexlen / 2; i++) {
        int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
        if (a < 0 || b < 0) {
            free(out);
            return NULL;
        }
        out[i] = (uint8_t)(a * 16 + b);
    }
    *len = hexlen / 2;
    return out;
}

char *hex_encode(const uint8_t *p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    char *out = (char *)malloc(2 * n + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = 0;
    return out;
}

uint64_t rng_next(test_rng *r) {
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

uint64_t rng_below(test_rng *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

uint8_t *encode_value(const tersa_value *v, const tersa_dict *dict, size_t *len, tersa_error *err) {
    tersa_writer *w = tersa_writer_new(NULL);
    uint8_t *out = NULL;
    if (w && tersa_writer_start(w, dict, 0) && tersa_write_value(w, v) && tersa_writer_complete(w)) {
        const uint8_t *data = tersa_writer_data(w, len);
        out = (uint8_t *)malloc(*len ? *len : 1);
        if (out) memcpy(out, data, *len);
    } else if (w && err) {
        *err = *tersa_writer_error(w);
    }
    tersa_writer_free(w);
    return out;
}

char *diag_of(const tersa_value *v) {
    tersa_buf b;
    tersa_buf_init(&b, NULL);
    tersa_diag(v, &b);
    char *out = (char *)malloc(b.len + 1);
    if (out) {
        memcpy(out, b.ptr ? b.ptr : "", b.len);
        out[b.len] = 0;
    }
    tersa_buf_free(&b);
    return out;
}

/* One pass over a single-value buffer with the pull reader: every item's
 * type, tag, offset and number (or string bytes), then the outcome. With
 * `run` > 0, tersa_read_scalars takes the elements of every array in runs of
 * at most `run` items wherever it can, or with `leaves` tersa_read_leaves
 * (which takes strings too). */
typedef struct {
    char *log;
    size_t len, cap;
} item_log;

static void log_text(item_log *l, const char *s) {
    size_t n = strlen(s);
    if (l->len + n + 1 > l->cap) {
        l->cap = (l->len + n + 1) * 2;
        l->log = (char *)realloc(l->log, l->cap);
    }
    memcpy(l->log + l->len, s, n + 1);
    l->len += n;
}

static void log_item(item_log *l, const tersa_item *it) {
    char b[160];
    uint64_t bits = it->v.u;
    if (it->type == TERSA_STRING || it->type == TERSA_SYMBOL)
        snprintf(b, sizeof b, "%d/%02x@%zu:%.*s;", (int)it->type, it->tag, it->offset,
                 (int)(it->v.str.len < 64 ? it->v.str.len : 64), it->v.str.ptr);
    else if (it->type == TERSA_INT || it->type == TERSA_UINT || it->type == TERSA_FLOAT)
        snprintf(b, sizeof b, "%d/%02x@%zu:%llx;", (int)it->type, it->tag, it->offset, (unsigned long long)bits);
    else
        snprintf(b, sizeof b, "%d/%02x@%zu;", (int)it->type, it->tag, it->offset);
    log_text(l, b);
}

size_t child_items(const tersa_item *it) {
    if (it->type == TERSA_ARRAY) return it->v.array.count;
    if (it->type == TERSA_MAP) return it->v.map.count;
    if (it->type == TERSA_GENERIC_MAP) return 2 * it->v.map.count;
    return 0;
}

static char *pull_items(const uint8_t *bytes, size_t len, const tersa_dict *dict, uint32_t max_depth, size_t run,
                        bool leaves) {
    item_log l = {NULL, 0, 0};
    log_text(&l, "");
    tersa_reader *r = tersa_reader_new(NULL);
    if (max_depth) tersa_reader_set_max_depth(r, max_depth);
    const tersa_dict *ds[1] = {dict};
    bool ok = tersa_reader_start(r, bytes, len, ds, dict ? 1 : 0, 0);
    size_t pending = ok ? 1 : 0;
    while (ok && pending) {
        tersa_item it;
        ok = tersa_read(r, &it);
        if (!ok) break;
        log_item(&l, &it);
        pending--;
        size_t n = child_items(&it);
        pending += n;
        if (it.type == TERSA_ARRAY && run && n) {
            tersa_item items[8];
            size_t k;
            bool first = true;
            uint32_t flags = leaves ? TERSA_ITEM_SCALARS | TERSA_ITEM_STRINGS : TERSA_ITEM_SCALARS;
            do {
                ok = leaves ? tersa_read_leaves(r, items, run, &k) : tersa_read_scalars(r, items, run, &k);
                /* The flags promise a run exactly when one follows (or the
                 * first element is a scalar or string that fails to read). */
                if (first) CHECK(!ok || (k > 0) == !!(it.flags & flags), "run flags, offset %zu", it.offset);
                first = false;
                for (size_t i = 0; i < k; i++) log_item(&l, &items[i]);
                pending -= k;
            } while (ok && k == run && pending);
        }
    }
    if (ok) ok = tersa_reader_finish(r);
    char b[160];
    const tersa_error *e = tersa_reader_error(r);
    snprintf(b, sizeof b, "=> %s@%zu", ok ? "ok" : tersa_code_name(e->code), ok ? 0 : e->offset);
    log_text(&l, b);
    tersa_reader_free(r);
    return l.log;
}

/* tersa_read_scalars and tersa_read_leaves give exactly the items and
 * errors tersa_read does. */
void check_scalar_runs(const char *name, const uint8_t *bytes, size_t len, const tersa_dict *dict,
                              uint32_t max_depth) {
    char *one = pull_items(bytes, len, dict, max_depth, 0, false);
    for (int leaves = 0; leaves <= 1; leaves++) {
        for (size_t run = 1; run <= 8; run += 6) {
            char *runs = pull_items(bytes, len, dict, max_depth, run, leaves);
            CHECK(strcmp(one, runs) == 0, "%s: %s (runs of %zu) differs from tersa_read\n   one  %.300s\n   "
                  "runs %.300s", name, leaves ? "tersa_read_leaves" : "tersa_read_scalars", run, one, runs);
            free(runs);
        }
    }
    free(one);
}
