/*
 * dict_build.c - choosing a dictionary from sample values (SPEC section 8).
 *
 * One algorithm for every front end (the CLI, Ruby, Python; TypeScript mirrors
 * it), so that the same samples give the same dictionary, id included. A
 * dictionary pays for what recurs across buffers (repeats inside one buffer
 * are the string table's job), so a string of 2+ bytes (a value or a symbol
 * name) or a map shape counts once per sample it occurs in, in pre-order;
 * the strings in at least min_count samples are kept, most bytes saved first
 * (samples x length, then shorter, then by bytes), and the shapes in at least
 * min_count samples in the order first met.
 */
#include "internal.h"

typedef struct counted {
    uint8_t *ptr;     /* strings: the bytes; shapes: kind byte + 8-byte length + bytes per key */
    size_t len;
    size_t count;     /* samples it occurs in */
    size_t last;      /* the sample that counted it last (1-based) */
    uint64_t hash;
    size_t nkeys;     /* shapes */
} counted;

/* Distinct byte strings with their counts, in first-seen order: a hash index
 * over `items`, so that millions of distinct strings stay linear. */
typedef struct counter {
    counted *items;
    size_t n, cap;
    size_t *slots; /* index + 1 into items; 0 is empty */
    size_t nslots; /* a power of two, at least twice n */
} counter;

struct tersa_dict_builder {
    const tersa_alloc *alloc;
    size_t samples;
    counter strings, shapes;
    uint8_t *keybuf;
    size_t keybuf_cap;
    tersa_value const **stack;
    size_t stack_cap;
};

/* Index `items` afresh, in a table of at least `min_slots` (a power of two,
 * and at least twice the entries); after growth or reordering. */
static bool counter_reindex(const tersa_alloc *a, counter *c, size_t min_slots) {
    size_t nslots = min_slots;
    while (nslots < 2 * (c->n + 1)) nslots *= 2;
    size_t *slots = (size_t *)mem_alloc(a, nslots * sizeof(size_t));
    if (!slots) return false;
    memset(slots, 0, nslots * sizeof(size_t));
    for (size_t i = 0; i < c->n; i++) {
        size_t at = (size_t)c->items[i].hash & (nslots - 1);
        while (slots[at]) at = (at + 1) & (nslots - 1);
        slots[at] = i + 1;
    }
    mem_free(a, c->slots, c->nslots * sizeof(size_t));
    c->slots = slots;
    c->nslots = nslots;
    return true;
}

static bool counter_grow(const tersa_alloc *a, counter *c) {
    if (c->n == c->cap && !tersa_grow_array(a, (void **)&c->items, &c->cap, c->n + 1, sizeof(counted))) return false;
    return 2 * (c->n + 1) <= c->nslots || counter_reindex(a, c, c->nslots ? 2 * c->nslots : 512);
}

/* Count p[0..n) once for sample `sample`; the entry (new ones copy the
 * bytes), or NULL if memory ran out. */
static counted *count_one(const tersa_alloc *a, counter *c, const uint8_t *p, size_t n, size_t sample) {
    uint64_t h = hash_bytes(p, n, 0);
    size_t at = c->nslots ? (size_t)h & (c->nslots - 1) : 0;
    for (; c->nslots && c->slots[at]; at = (at + 1) & (c->nslots - 1)) {
        counted *e = &c->items[c->slots[at] - 1];
        if (e->hash == h && e->len == n && memcmp(e->ptr, p, n) == 0) {
            if (e->last != sample) e->count++;
            e->last = sample;
            return e;
        }
    }
    if (!counter_grow(a, c)) return NULL;
    uint8_t *copy = (uint8_t *)mem_alloc(a, n ? n : 1);
    if (!copy) return NULL;
    memcpy(copy, p, n);
    at = (size_t)h & (c->nslots - 1);
    while (c->slots[at]) at = (at + 1) & (c->nslots - 1);
    c->slots[at] = c->n + 1;
    counted *e = &c->items[c->n++];
    *e = (counted){copy, n, 1, sample, h, 0};
    return e;
}

static void counter_free(const tersa_alloc *a, counter *c) {
    for (size_t i = 0; i < c->n; i++) mem_free(a, c->items[i].ptr, c->items[i].len ? c->items[i].len : 1);
    mem_free(a, c->items, c->cap * sizeof(counted));
    mem_free(a, c->slots, c->nslots * sizeof(size_t));
    *c = (counter){0};
}

tersa_dict_builder *tersa_dict_builder_new(const tersa_alloc *alloc) {
    alloc = alloc_or_default(alloc);
    tersa_dict_builder *b = (tersa_dict_builder *)mem_alloc(alloc, sizeof *b);
    if (b) *b = (tersa_dict_builder){.alloc = alloc};
    return b;
}

void tersa_dict_builder_free(tersa_dict_builder *b) {
    if (!b) return;
    const tersa_alloc *a = b->alloc;
    counter_free(a, &b->strings);
    counter_free(a, &b->shapes);
    mem_free(a, b->keybuf, b->keybuf_cap);
    mem_free(a, (void *)b->stack, b->stack_cap * sizeof(*b->stack));
    mem_free(a, b, sizeof *b);
}

static bool is_key(const tersa_value *k) { return k->type == TERSA_STRING || k->type == TERSA_SYMBOL; }

/* A shaped map's keys as one unambiguous byte string. */
static bool count_shape(tersa_dict_builder *b, const tersa_value *map) {
    size_t need = 0, n = map->v.map.count;
    for (size_t i = 0; i < n; i++) {
        if (!is_key(&map->v.map.keys[i])) return true; /* not a shape: nothing to count */
        need += 9 + map->v.map.keys[i].v.str.len;
    }
    if (need > b->keybuf_cap && !tersa_grow_array(b->alloc, (void **)&b->keybuf, &b->keybuf_cap, need, 1)) return false;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const tersa_value *k = &map->v.map.keys[i];
        uint64_t len = k->v.str.len;
        b->keybuf[at++] = k->type == TERSA_SYMBOL ? 'y' : 's';
        memcpy(b->keybuf + at, &len, 8);
        at += 8;
        if (len) memcpy(b->keybuf + at, k->v.str.ptr, (size_t)len);
        at += (size_t)len;
    }
    counted *e = count_one(b->alloc, &b->shapes, b->keybuf ? b->keybuf : (const uint8_t *)"", at, b->samples);
    if (e) e->nkeys = n;
    return e != NULL;
}

bool tersa_dict_builder_add_value(tersa_dict_builder *b, const tersa_value *v) {
    /* Pre-order with a heap stack of containers still to visit: samples nest
     * as deep as their decoders allow. */
    size_t depth = 0;
    size_t *next = NULL, next_cap = 0;
    bool ok = true;
    size_t sample = ++b->samples;
    while (ok && v) {
        if ((v->type == TERSA_STRING || v->type == TERSA_SYMBOL) && v->v.str.len >= MIN_TABLE_LEN)
            ok = count_one(b->alloc, &b->strings, (const uint8_t *)v->v.str.ptr, v->v.str.len, sample) != NULL;
        else if (v->type == TERSA_MAP)
            ok = count_shape(b, v);
        bool container = v->type == TERSA_ARRAY || v->type == TERSA_MAP || v->type == TERSA_GENERIC_MAP;
        if (ok && container) {
            ok = tersa_grow_array(b->alloc, (void **)&b->stack, &b->stack_cap, depth + 1, sizeof(*b->stack)) &&
                 tersa_grow_array(b->alloc, (void **)&next, &next_cap, depth + 1, sizeof(size_t));
            if (!ok) break;
            b->stack[depth] = v;
            next[depth++] = 0;
        }
        v = NULL;
        while (depth) {
            const tersa_value *c = b->stack[depth - 1];
            size_t i = next[depth - 1];
            if (c->type == TERSA_ARRAY) {
                if (i < c->v.array.count) {
                    next[depth - 1]++;
                    v = &c->v.array.items[i];
                    break;
                }
            } else if (c->type == TERSA_MAP) {
                if (i < c->v.map.count) {
                    next[depth - 1]++;
                    v = &c->v.map.values[i];
                    break;
                }
            } else if (i < 2 * c->v.map.count) { /* generic map: each key, then its value */
                next[depth - 1]++;
                v = i % 2 ? &c->v.map.values[i / 2] : &c->v.map.keys[i / 2];
                break;
            }
            depth--;
        }
    }
    mem_free(b->alloc, next, next_cap * sizeof(size_t));
    return ok;
}

bool tersa_dict_builder_add_buffer(tersa_dict_builder *b, const void *data, size_t len, tersa_error *err) {
    const uint8_t *p = (const uint8_t *)data;
    tersa_decode_options opts = {0};
    opts.stream = len >= 3 && (p[2] & FLAG_STREAM);
    tersa_doc *doc = tersa_decode(b->alloc, data, len, &opts, err);
    if (!doc) return false;
    bool ok = true;
    /* Each value of a stream is a sample, as each buffer is. */
    for (size_t i = 0; ok && i < tersa_doc_count(doc); i++) ok = tersa_dict_builder_add_value(b, tersa_doc_root(doc, i));
    tersa_doc_free(doc);
    if (!ok && err) *err = (tersa_error){TERSA_ERR_NOMEM, 0, "out of memory"};
    return ok;
}

static int by_savings(const void *x, const void *y) {
    const counted *a = (const counted *)x, *b = (const counted *)y;
    /* count x len cannot overflow: both are bounded by the bytes counted. */
    size_t sa = a->count * a->len, sb = b->count * b->len;
    if (sa != sb) return sa > sb ? -1 : 1;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return memcmp(a->ptr, b->ptr, a->len);
}

tersa_dict *tersa_dict_builder_finish(tersa_dict_builder *b, const tersa_dict_build_options *opts, tersa_error *err) {
    /* One sample: everything in it recurs as often as it can. */
    size_t min_count = opts && opts->min_count ? opts->min_count : b->samples > 1 ? TERSA_DICT_BUILD_MIN_COUNT : 1;
    size_t max_strings = opts && opts->max_strings ? opts->max_strings : TERSA_DICT_BUILD_MAX_STRINGS;
    size_t max_shapes = opts && opts->max_shapes ? opts->max_shapes : TERSA_DICT_BUILD_MAX_SHAPES;
    const tersa_alloc *a = b->alloc;
    counter *strings = &b->strings, *shapes = &b->shapes;
    /* Sorting reorders the entries under the hash index, which is rebuilt
     * for later samples. The order is total: finishing twice gives the same
     * dictionary. */
    if (strings->n) qsort(strings->items, strings->n, sizeof(counted), by_savings);
    bool indexed = counter_reindex(a, strings, 512);
    size_t nk_all = 0;
    for (size_t i = 0; i < shapes->n; i++) nk_all += shapes->items[i].nkeys;
    tersa_key *skeys = (tersa_key *)mem_alloc(a, (strings->n + 1) * sizeof(tersa_key));
    tersa_key *kkeys = (tersa_key *)mem_alloc(a, (nk_all + 1) * sizeof(tersa_key));
    size_t *lens = (size_t *)mem_alloc(a, (shapes->n + 1) * sizeof(size_t));
    tersa_dict *dict = NULL;
    if (!skeys || !kkeys || !lens || !indexed) {
        if (err) *err = (tersa_error){TERSA_ERR_NOMEM, 0, "out of memory"};
    } else {
        size_t ns = 0, nsh = 0;
        for (size_t i = 0; i < strings->n && ns < max_strings; i++)
            if (strings->items[i].count >= min_count)
                skeys[ns++] = (tersa_key){(const char *)strings->items[i].ptr, strings->items[i].len, false};
        size_t nk = 0;
        for (size_t i = 0; i < shapes->n && nsh < max_shapes; i++) {
            const counted *e = &shapes->items[i];
            if (e->count < min_count) continue;
            const uint8_t *p = e->ptr;
            for (size_t j = 0; j < e->nkeys; j++) {
                uint64_t len;
                memcpy(&len, p + 1, 8);
                kkeys[nk++] = (tersa_key){(const char *)p + 9, (size_t)len, p[0] == 'y'};
                p += 9 + len;
            }
            lens[nsh++] = e->nkeys;
        }
        dict = tersa_dict_new(a, skeys, ns, kkeys, lens, nsh, err);
    }
    mem_free(a, skeys, (strings->n + 1) * sizeof(tersa_key));
    mem_free(a, kkeys, (nk_all + 1) * sizeof(tersa_key));
    mem_free(a, lens, (shapes->n + 1) * sizeof(size_t));
    return dict;
}
