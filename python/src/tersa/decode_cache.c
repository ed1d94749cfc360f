/*
 * decode_cache.c - the decoder's caches of Python objects: the str of each
 * string-table index, and the key objects of shaped maps (interned key
 * strings, long keys by string-table index, the per-shape key objects and
 * dict templates), cached per buffer and across calls.
 *
 * Part of _tersa.c (included by decode.c at the place of its use): not compiled alone.
 */

/* The str of a string item. A string-table entry is created once per buffer
 * and every reference to it returns the same object. In a single loads()
 * call the cache borrows: every str this returns ends up held by the value
 * being built until the call returns (callers that drop one, like symbol
 * names, use make_str directly). A stream decoder's values outlive frames,
 * so its cache holds references (d->strong). */
TERSA_INLINE PyObject *dec_str(dec_ctx *d, const tersa_item *it) {
    uint32_t idx = it->v.str.index;
    if (idx == TERSA_NO_INDEX) return make_str(it->v.str.ptr, it->v.str.len, it->flags);
    PyObject *s = (PyObject *)tersa_slots_get(&d->strs, idx);
    if (s) {
        Py_INCREF(s);
        return s;
    }
    s = make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (TERSA_UNLIKELY(!s)) return NULL;
    if (TERSA_UNLIKELY(!tersa_slots_set(&d->strs, idx, (uintptr_t)s))) {
        Py_DECREF(s);
        return PyErr_NoMemory();
    }
    if (d->strong) Py_INCREF(s);
    return s;
}

/* Interned ASCII key strs by their bytes, across calls (objcache.h). */
static tersa_keycache g_keycache;

static const char *key_bytes(uintptr_t h, uint32_t kind) {
    (void)kind;
    return (const char *)PyUnicode_1BYTE_DATA((PyObject *)h);
}

/* An interned key object for a shape key. New reference. */
static PyObject *make_key(const tersa_key *k, uint32_t opt) {
    const char *p = k->ptr;
    size_t n = k->len;
    if (k->symbol && !(opt & OPT_SYMBOL_AS_STR)) return key_object(k);
    int ascii = 1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] >= 0x80) {
            ascii = 0;
            break;
        }
    /* Only ASCII: a cached str's one-byte data are then its UTF-8 bytes. */
    if (ascii && tersa_keycache_admits(n)) {
        tersa_keyslot *slot;
        uint64_t h;
        PyObject *hit = (PyObject *)tersa_keycache_get(&g_keycache, p, n, 0, key_bytes, &slot, &h);
        if (hit) return Py_NewRef(hit);
        PyObject *s = make_str(p, n, TERSA_ITEM_ASCII);
        if (!s) return NULL;
        PyUnicode_InternInPlace(&s);
        str_hash(s);
        PyObject *old = (PyObject *)tersa_keycache_put(slot, h, n, 0, (uintptr_t)Py_NewRef(s));
        Py_XDECREF(old);
        return s;
    }
    PyObject *s = PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "strict");
    if (!s) return NULL;
    PyUnicode_InternInPlace(&s);
    return s;
}

/* A long key by its string-table index (new reference), made once per call
 * or stream: a one-byte reference can repeat it in every new shape, and
 * decoding and interning it each time would cost time quadratic in the
 * input. */
TERSA_NOINLINE static PyObject *long_key(dec_ctx *d, const tersa_key *k, uint32_t index) {
    size_t slot = 2 * (size_t)index + (k->symbol && !(d->opt & OPT_SYMBOL_AS_STR));
    PyObject *cached = (PyObject *)tersa_slots_get(&d->lkeys, slot);
    if (cached) return Py_NewRef(cached);
    PyObject *key = make_key(k, d->opt);
    if (!key) return NULL;
    if (!tersa_slots_set(&d->lkeys, slot, (uintptr_t)key)) {
        Py_DECREF(key);
        return PyErr_NoMemory();
    }
    return Py_NewRef(key);
}

/* Do two of these keys collide in a Python dict? Only possible with symbol keys. */
static int keys_collide(PyObject *const *keys, size_t n, const tersa_key *pk) {
    int any_symbol = 0;
    for (size_t i = 0; i < n; i++) any_symbol |= pk[i].symbol;
    if (!any_symbol || n < 2) return 0;
    PyObject *set = PySet_New(NULL);
    if (!set) return -1;
    for (size_t i = 0; i < n; i++)
        if (PySet_Add(set, keys[i]) < 0) {
            Py_DECREF(set);
            return -1;
        }
    int collide = (size_t)PySet_GET_SIZE(set) != n;
    Py_DECREF(set);
    return collide;
}

/* A template dict for a shape's keys (see tmpl_copy), or NULL if it cannot serve. */
static PyObject *make_template(PyObject *const *keys, size_t n) {
#if TERSA_DICT_INTERNALS
    if (n == 0 || n > 4096) return NULL;
    for (size_t i = 0; i < n; i++)
        if (!PyUnicode_CheckExact(keys[i])) return NULL;
    PyObject *t = PyDict_New(); /* (a presized dict would have a general-kind table) */
    if (!t) return NULL;
    for (size_t i = 0; i < n; i++)
        if (PyDict_SetItem(t, keys[i], Py_None) < 0) {
            Py_DECREF(t);
            return NULL;
        }
    PyDictObject *mp = (PyDictObject *)t;
    tersa_dict_keys *dk = (tersa_dict_keys *)mp->ma_keys;
    if (mp->ma_values || dk->dk_kind != TERSA_DK_UNICODE || dk->dk_nentries != (Py_ssize_t)n ||
        mp->ma_used != (Py_ssize_t)n) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
#else
    (void)keys;
    (void)n;
    return NULL;
#endif
}

/* Across calls: the key objects and template of recently seen shapes, keyed
 * by the shapes' key bytes (compared in full on every hit). 2,048 entries: a
 * buffer of sparse records can hold a thousand shapes or more, and a cache
 * smaller than what recurs evicts every entry before its next use. */
#define SHAPECACHE_SETS 512 /* 4-way set-associative, LRU within a set */
#define SHAPECACHE_WAYS 4
#define SHAPECACHE_MAX_KEYS 64
#define SHAPECACHE_MAX_BYTES 2048

typedef struct shapecache_ent {
    uint64_t hash;
    uint32_t n;
    uint8_t collide;
    uint8_t sym_as_str;
    PyObject **keys;    /* n key objects (strong), then in the same block: */
    uint16_t *lens;     /*   n key lengths, high bit = symbol */
    char *bytes;        /*   the keys' bytes, concatenated */
    PyObject *tmpl;     /* template dict (strong) or NULL */
    uint64_t used;      /* LRU stamp */
    uint64_t born;      /* when the entry took these keys */
} shapecache_ent;

static shapecache_ent g_shapecache[SHAPECACHE_SETS][SHAPECACHE_WAYS];
static uint64_t g_shapecache_clock;

/* A probe hash of a key sequence: the key count, the total length and the
 * heads of three keys. It only picks the cache set: every hit is confirmed by
 * comparing all the bytes (shapecache_match). */
static uint64_t shape_hash(const tersa_key *keys, size_t n, size_t *total) {
    size_t t = 0;
    uint64_t lens = 0;
    for (size_t i = 0; i < n; i++) {
        t += keys[i].len;
        lens = lens * 31 + keys[i].len + ((uint64_t)keys[i].symbol << 20);
    }
    *total = t;
    const tersa_key *a = &keys[0], *b = &keys[n / 2], *c = &keys[n - 1];
    uint64_t h = (0x9E3779B97F4A7C15ull ^ n ^ (t << 16)) * 0xff51afd7ed558ccdull;
    h = (h ^ lens) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ load_upto8(a->ptr, a->len < 8 ? a->len : 8)) * 0xff51afd7ed558ccdull;
    h = (h ^ load_upto8(b->ptr, b->len < 8 ? b->len : 8)) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ load_upto8(c->ptr, c->len < 8 ? c->len : 8)) * 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static int shapecache_match(const shapecache_ent *c, uint64_t h, const tersa_key *keys, size_t n, int sym_as_str) {
    if (!c->keys || c->hash != h || c->n != n || c->sym_as_str != sym_as_str) return 0;
    const char *b = c->bytes;
    for (size_t i = 0; i < n; i++) {
        size_t len = c->lens[i] & 0x7FFF;
        if (len != keys[i].len || ((c->lens[i] >> 15) != keys[i].symbol) || !bytes_eq(b, keys[i].ptr, len))
            return 0;
        b += len;
    }
    return 1;
}

static void shapecache_clear_ent(shapecache_ent *c) {
    if (c->keys) {
        for (uint32_t i = 0; i < c->n; i++) Py_DECREF(c->keys[i]);
    }
    PyMem_Free(c->keys);
    Py_XDECREF(c->tmpl);
    memset(c, 0, sizeof(*c));
}

/* The entry now holding these keys, or NULL (caching is optional). */
static shapecache_ent *shapecache_put(uint64_t h, const tersa_key *keys, size_t n, size_t total, PyObject *const *objs,
                                      int collide, int sym_as_str) {
    shapecache_ent fresh;
    memset(&fresh, 0, sizeof(fresh));
    /* one block: what a miss allocates and an eviction frees is most of the cost of a shape seen once */
    fresh.keys = PyMem_Malloc(n * (sizeof(PyObject *) + sizeof(uint16_t)) + total + 1);
    if (!fresh.keys) return NULL;
    fresh.lens = (uint16_t *)(fresh.keys + n);
    fresh.bytes = (char *)(fresh.lens + n);
    char *b = fresh.bytes;
    for (size_t i = 0; i < n; i++) {
        fresh.lens[i] = (uint16_t)(keys[i].len | ((size_t)keys[i].symbol << 15));
        memcpy(b, keys[i].ptr, keys[i].len);
        b += keys[i].len;
        fresh.keys[i] = Py_NewRef(objs[i]);
    }
    fresh.hash = h;
    fresh.n = (uint32_t)n;
    fresh.collide = (uint8_t)collide;
    fresh.sym_as_str = (uint8_t)sym_as_str;
    fresh.used = fresh.born = ++g_shapecache_clock;
    shapecache_ent *set = g_shapecache[h & (SHAPECACHE_SETS - 1)], *victim = &set[0];
    for (int w = 1; w < SHAPECACHE_WAYS; w++)
        if (set[w].used < victim->used) victim = &set[w];
    shapecache_ent old = *victim;
    *victim = fresh;
    shapecache_clear_ent(&old); /* after the swap: decrefs may run arbitrary deallocators */
    return victim;
}

/* The template of shape entry sh, made on its second use (in this call, or
 * in a later one through the cache across calls): building it costs about
 * what filling one dict does, and most shapes of sparse records serve once.
 * 0, or -1 with an exception. */
TERSA_NOINLINE static int shape_template(dec_ctx *d, sh_ent *sh) {
    PyObject *t = make_template(d->kpool + sh->off, sh->n);
    if (!t) {
        if (PyErr_Occurred()) return -1;
        sh->no_tmpl = 1;
        return 0;
    }
    sh->tmpl = t; /* owned by the entry */
#if TERSA_DICT_INTERNALS
    sh->tmpl_size = tersa_dk_size((const tersa_dict_keys *)((PyDictObject *)t)->ma_keys);
#endif
    shapecache_ent *c = sh->cent;
    if (c && c->born == sh->cborn && !c->tmpl) c->tmpl = Py_NewRef(t);
    return 0;
}

/* Offset in kpool of the key objects of the map item `it`; *collide set when
 * the map cannot be a dict, *tmpl to its template (borrowed) or NULL. */
static Py_ssize_t shape_keys(dec_ctx *d, const tersa_item *it, int *collide, PyObject **tmpl) {
    uint32_t si = it->v.map.shape;
    if (TERSA_LIKELY(si != TERSA_NO_INDEX && si < d->shapes_cap && d->shapes[si].set)) {
        sh_ent *sh = &d->shapes[si];
        if (!sh->tmpl && !sh->collide && !sh->no_tmpl && shape_template(d, sh) < 0) return -1;
        *collide = sh->collide;
        *tmpl = sh->tmpl;
        return (Py_ssize_t)sh->off;
    }
    *tmpl = NULL;
    size_t n = it->v.map.count;
    int sym_as_str = (d->opt & OPT_SYMBOL_AS_STR) != 0;
    size_t total = 0;
    uint64_t h = 0;
    shapecache_ent *hit = NULL;
    int cacheable = n > 0 && n <= SHAPECACHE_MAX_KEYS;
    if (cacheable) {
        for (size_t i = 0; i < n; i++)
            if (it->v.map.keys[i].len > 0x7FFF) cacheable = 0;
    }
    if (cacheable) {
        h = shape_hash(it->v.map.keys, n, &total);
        if (total > SHAPECACHE_MAX_BYTES) {
            cacheable = 0;
        } else {
            shapecache_ent *set = g_shapecache[h & (SHAPECACHE_SETS - 1)];
            for (int w = 0; w < SHAPECACHE_WAYS; w++)
                if (shapecache_match(&set[w], h, it->v.map.keys, n, sym_as_str)) {
                    set[w].used = ++g_shapecache_clock;
                    hit = &set[w];
                    break;
                }
        }
    }
    if (d->kpool_used + n > d->kpool_cap) {
        size_t cap = d->kpool_cap ? d->kpool_cap : 256;
        while (cap < d->kpool_used + n) cap *= 2;
        PyObject **p = PyMem_Realloc(d->kpool, cap * sizeof(PyObject *));
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        d->kpool = p;
        d->kpool_cap = cap;
    }
    size_t off = d->kpool_used;
    int c;
    PyObject *t = NULL;
    shapecache_ent *cent = hit;
    if (hit) {
        for (size_t i = 0; i < n; i++) d->kpool[d->kpool_used++] = Py_NewRef(hit->keys[i]);
        c = hit->collide;
        t = Py_XNewRef(hit->tmpl);
    } else {
        const uint32_t *indices = it->v.map.key_strings;
        for (size_t i = 0; i < n; i++) {
            const tersa_key *pk = &it->v.map.keys[i];
            PyObject *k = indices && pk->len >= TERSA_LONG_STRING && indices[i] != TERSA_NO_INDEX
                              ? long_key(d, pk, indices[i])
                              : make_key(pk, d->opt);
            if (!k) return -1;
            d->kpool[d->kpool_used++] = k;
        }
        c = keys_collide(d->kpool + off, n, it->v.map.keys);
        if (c < 0) return -1;
        if (cacheable) cent = shapecache_put(h, it->v.map.keys, n, total, d->kpool + off, c, sym_as_str);
    }
    *collide = c;
    if (si == TERSA_NO_INDEX) {
        /* A shape the full table did not take: used for this map only. */
        Py_XDECREF(t);
        return (Py_ssize_t)off;
    }
    if (si >= d->shapes_cap) {
        size_t cap = d->shapes_cap ? d->shapes_cap : 64;
        while (cap <= si) cap *= 2;
        sh_ent *p = PyMem_Realloc(d->shapes, cap * sizeof(sh_ent));
        if (!p) {
            Py_XDECREF(t);
            PyErr_NoMemory();
            return -1;
        }
        memset(p + d->shapes_cap, 0, (cap - d->shapes_cap) * sizeof(sh_ent));
        d->shapes = p;
        d->shapes_cap = cap;
    }
    sh_ent *sh = &d->shapes[si];
    sh->off = off;
    sh->n = (uint32_t)n;
    sh->set = 1;
    sh->collide = (uint8_t)c;
    sh->cent = cent;
    sh->cborn = cent ? cent->born : 0;
    sh->tmpl = t; /* owned by the entry */
#if TERSA_DICT_INTERNALS
    sh->tmpl_size = t ? tersa_dk_size((const tersa_dict_keys *)((PyDictObject *)t)->ma_keys) : 0;
#endif
    if (si >= d->shapes_hi) d->shapes_hi = si + 1;
    /* Keys met in an earlier call: a shape that recurs. */
    if (hit && !t && !c && shape_template(d, sh) < 0) return -1;
    *tmpl = sh->tmpl;
    return (Py_ssize_t)off;
}
