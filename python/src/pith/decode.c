/*
 * decode.c - loads() and loads_stream(): the core's reader to Python objects.
 *
 * Part of _pith.c, which includes it (one translation unit: the parts share
 * its static helpers and inline across each other); not compiled alone.
 */

/* ==========================================================================
 * Decoding
 * ========================================================================== */

typedef struct {
    size_t off;      /* keys in kpool */
    uint32_t n;
    uint8_t set;
    uint8_t collide; /* two keys are equal in Python (a symbol and a string of one text) */
    PyObject *tmpl;  /* a dict of these keys (values None) whose table new dicts copy, or NULL */
} sh_ent;

typedef struct dec_ctx {
    pith_reader *r;
    uint32_t opt;
    int strong;               /* scache holds references (streams); else borrowed, see dec_str */
    PyObject **scache;        /* str object per string-table index */
    size_t scache_cap, scache_hi;
    sh_ent *shapes;           /* key objects per shape index */
    size_t shapes_cap, shapes_hi;
    PyObject **kpool;
    size_t kpool_used, kpool_cap;
    PyObject **lkeys;         /* long key objects per string-table index: [2i] str, [2i+1] Symbol */
    size_t lkeys_cap, lkeys_hi; /* slots covered, and 1 + the highest set */
    struct dframe *frames;    /* open containers, outermost first (see dec_value) */
    size_t nframes, frames_cap;
    struct hash_group *groups; /* keys per Python hash value of a generic map (see dict_of_items) */
    size_t groups_cap;
} dec_ctx;

static dec_ctx *dec_ctx_new(void) {
    dec_ctx *d = PyMem_Calloc(1, sizeof(dec_ctx));
    if (!d) {
        PyErr_NoMemory();
        return NULL;
    }
    d->r = pith_reader_new(NULL);
    if (!d->r) {
        PyMem_Free(d);
        PyErr_NoMemory();
        return NULL;
    }
    return d;
}

static void dec_ctx_clear(dec_ctx *d) {
    if (d->strong) {
        for (size_t i = 0; i < d->scache_hi; i++) Py_CLEAR(d->scache[i]);
    } else if (d->scache_hi) {
        memset(d->scache, 0, d->scache_hi * sizeof(PyObject *));
    }
    d->scache_hi = 0;
    for (size_t i = 0; i < d->kpool_used; i++) Py_DECREF(d->kpool[i]);
    d->kpool_used = 0;
    for (size_t i = 0; i < d->shapes_hi; i++) Py_XDECREF(d->shapes[i].tmpl);
    if (d->shapes_hi) memset(d->shapes, 0, d->shapes_hi * sizeof(sh_ent));
    d->shapes_hi = 0;
    for (size_t i = 0; i < d->lkeys_hi; i++) Py_CLEAR(d->lkeys[i]);
    d->lkeys_hi = 0;
}

static void dec_ctx_free(dec_ctx *d) {
    if (!d) return;
    dec_ctx_clear(d);
    pith_reader_free(d->r);
    PyMem_Free(d->scache);
    PyMem_Free(d->shapes);
    PyMem_Free(d->kpool);
    PyMem_Free(d->lkeys);
    PyMem_Free(d->frames);
    PyMem_Free(d->groups);
    PyMem_Free(d);
}

static dec_ctx *g_dec_pool;

static dec_ctx *dec_acquire(void) {
    dec_ctx *d = g_dec_pool;
    if (d) {
        g_dec_pool = NULL;
        return d;
    }
    return dec_ctx_new();
}

static void dec_release(dec_ctx *d, size_t input_len) {
    dec_ctx_clear(d);
    pith_reader_set_max_depth(d->r, PITH_DEFAULT_MAX_DEPTH);
    if (g_dec_pool || input_len > POOL_RELEASE_BYTES || d->scache_cap > 65536 || d->shapes_cap > 65536 ||
        d->kpool_cap > 65536 || d->lkeys_cap / 2 > 65536 || d->frames_cap > 4096 ||
        d->groups_cap > 65536) {
        dec_ctx_free(d);
        return;
    }
    g_dec_pool = d;
}

NOINLINE static PyObject *dec_fail(dec_ctx *d) {
    raise_pith_error(pith_reader_error(d->r));
    return NULL;
}

/* --- strings ------------------------------------------------------------- */

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
/* A compact ASCII str, initialised as PyUnicode_New(n, 127) does, minus its
 * generic size and kind checks (3.11 layout). */
ALWAYS_INLINE PyObject *new_ascii(const char *p, size_t n) {
    PyASCIIObject *o = (PyASCIIObject *)PyObject_Malloc(sizeof(PyASCIIObject) + n + 1);
    if (UNLIKELY(!o)) return PyErr_NoMemory();
    PyObject_Init((PyObject *)o, &PyUnicode_Type);
    o->length = (Py_ssize_t)n;
    o->hash = -1;
    memset(&o->state, 0, sizeof(o->state));
    o->state.kind = PyUnicode_1BYTE_KIND;
    o->state.compact = 1;
    o->state.ascii = 1;
    o->state.ready = 1;
    o->wstr = NULL;
    char *data = (char *)(o + 1);
    memcpy(data, p, n);
    data[n] = 0;
    return (PyObject *)o;
}
#else
ALWAYS_INLINE PyObject *new_ascii(const char *p, size_t n) {
    PyObject *s = PyUnicode_New((Py_ssize_t)n, 127);
    if (LIKELY(s != NULL)) memcpy(PyUnicode_1BYTE_DATA(s), p, n);
    return s;
}
#endif

ALWAYS_INLINE PyObject *make_str(const char *p, size_t n, uint32_t flags) {
    if (LIKELY(flags & PITH_ITEM_ASCII)) {
        if (n > 1) return new_ascii(p, n);
        if (n == 1) return PyUnicode_FromOrdinal((unsigned char)p[0]);
        return PyUnicode_New(0, 0);
    }
    return PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "strict");
}

/* Make a zero-filled per-index array of objects hold slot `slot`: 0, or -1
 * with MemoryError. */
NOINLINE static int objects_cover(PyObject ***arr, size_t *cap, size_t slot) {
    if (slot < *cap) return 0;
    size_t n = *cap ? *cap : 256;
    while (n <= slot) n *= 2;
    PyObject **p = PyMem_Realloc(*arr, n * sizeof(PyObject *));
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    memset(p + *cap, 0, (n - *cap) * sizeof(PyObject *));
    *arr = p;
    *cap = n;
    return 0;
}

/* The str of a string item. A string-table entry is created once per buffer
 * and every reference to it returns the same object. In a single loads()
 * call the cache borrows: every str this returns ends up held by the value
 * being built until the call returns (callers that drop one, like symbol
 * names, use make_str directly). A stream decoder's values outlive frames,
 * so its cache holds references (d->strong). */
ALWAYS_INLINE PyObject *dec_str(dec_ctx *d, const pith_item *it) {
    uint32_t idx = it->v.str.index;
    if (idx == PITH_NO_INDEX) return make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (LIKELY(idx < d->scache_cap)) {
        PyObject *s = d->scache[idx];
        if (s) {
            Py_INCREF(s);
            return s;
        }
    } else if (objects_cover(&d->scache, &d->scache_cap, idx) < 0) {
        return NULL;
    }
    PyObject *s = make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (UNLIKELY(!s)) return NULL;
    if (d->strong) Py_INCREF(s);
    d->scache[idx] = s;
    if (idx >= d->scache_hi) d->scache_hi = idx + 1;
    return s;
}

/* --- keys ---------------------------------------------------------------- */

typedef struct {
    PyObject *obj;
    uint64_t hash;
} keycache_ent;

static keycache_ent g_keycache[KEYCACHE_SIZE];

ALWAYS_INLINE uint64_t key_hash(const char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        h = (h ^ load64(p + i)) * 0x100000001b3ull;
        h ^= h >> 31;
    }
    h = (h ^ load_upto8(p + i, n - i)) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* An interned key object for a shape key. New reference. */
static PyObject *make_key(const pith_key *k, uint32_t opt) {
    const char *p = k->ptr;
    size_t n = k->len;
    if (k->symbol && !(opt & OPT_SYMBOL_AS_STR)) return key_object(k);
    int ascii = 1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] >= 0x80) {
            ascii = 0;
            break;
        }
    if (ascii && n <= KEYCACHE_MAX_LEN) {
        uint64_t h = key_hash(p, n);
        keycache_ent *ent = &g_keycache[h & (KEYCACHE_SIZE - 1)];
        if (ent->obj && ent->hash == h && (size_t)PyUnicode_GET_LENGTH(ent->obj) == n &&
            bytes_eq((const char *)PyUnicode_1BYTE_DATA(ent->obj), p, n))
            return Py_NewRef(ent->obj);
        PyObject *s = make_str(p, n, PITH_ITEM_ASCII);
        if (!s) return NULL;
        PyUnicode_InternInPlace(&s);
        str_hash(s);
        Py_XSETREF(ent->obj, Py_NewRef(s));
        ent->hash = h;
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
NOINLINE static PyObject *long_key(dec_ctx *d, const pith_key *k, uint32_t index) {
    size_t slot = 2 * (size_t)index + (k->symbol && !(d->opt & OPT_SYMBOL_AS_STR));
    if (objects_cover(&d->lkeys, &d->lkeys_cap, slot) < 0) return NULL;
    if (d->lkeys[slot]) return Py_NewRef(d->lkeys[slot]);
    PyObject *key = make_key(k, d->opt);
    if (!key) return NULL;
    d->lkeys[slot] = Py_NewRef(key);
    if (slot >= d->lkeys_hi) d->lkeys_hi = slot + 1;
    return key;
}

/* Do two of these keys collide in a Python dict? Only possible with symbol keys. */
static int keys_collide(PyObject *const *keys, size_t n, const pith_key *pk) {
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
#if PITH_DICT_INTERNALS
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
    pith_dict_keys *dk = (pith_dict_keys *)mp->ma_keys;
    if (mp->ma_values || dk->dk_kind != PITH_DK_UNICODE || dk->dk_nentries != (Py_ssize_t)n ||
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
 * by the shapes' key bytes (compared in full on every hit). */
#define SHAPECACHE_SETS 256 /* 4-way set-associative, LRU within a set */
#define SHAPECACHE_WAYS 4
#define SHAPECACHE_MAX_KEYS 64
#define SHAPECACHE_MAX_BYTES 2048

typedef struct {
    uint64_t hash;
    uint32_t n;
    uint8_t collide;
    uint8_t sym_as_str;
    uint16_t *lens;     /* n key lengths, high bit = symbol */
    char *bytes;        /* the keys' bytes, concatenated */
    PyObject **keys;    /* n key objects (strong) */
    PyObject *tmpl;     /* template dict (strong) or NULL */
    uint64_t used;      /* LRU stamp */
} shapecache_ent;

static shapecache_ent g_shapecache[SHAPECACHE_SETS][SHAPECACHE_WAYS];
static uint64_t g_shapecache_clock;

/* A probe hash of a key sequence: the key count, the total length and the
 * heads of three keys. It only picks the cache set: every hit is confirmed by
 * comparing all the bytes (shapecache_match). */
static uint64_t shape_hash(const pith_key *keys, size_t n, size_t *total) {
    size_t t = 0;
    uint64_t lens = 0;
    for (size_t i = 0; i < n; i++) {
        t += keys[i].len;
        lens = lens * 31 + keys[i].len + ((uint64_t)keys[i].symbol << 20);
    }
    *total = t;
    const pith_key *a = &keys[0], *b = &keys[n / 2], *c = &keys[n - 1];
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

static int shapecache_match(const shapecache_ent *c, uint64_t h, const pith_key *keys, size_t n, int sym_as_str) {
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
    PyMem_Free(c->lens);
    PyMem_Free(c->bytes);
    Py_XDECREF(c->tmpl);
    memset(c, 0, sizeof(*c));
}

static void shapecache_put(uint64_t h, const pith_key *keys, size_t n, size_t total, PyObject *const *objs,
                           PyObject *tmpl, int collide, int sym_as_str) {
    shapecache_ent fresh;
    memset(&fresh, 0, sizeof(fresh));
    fresh.lens = PyMem_Malloc(n * sizeof(uint16_t) + 1);
    fresh.bytes = PyMem_Malloc(total + 1);
    fresh.keys = PyMem_Malloc(n * sizeof(PyObject *) + 1);
    if (!fresh.lens || !fresh.bytes || !fresh.keys) {
        PyMem_Free(fresh.lens);
        PyMem_Free(fresh.bytes);
        PyMem_Free(fresh.keys);
        return; /* caching is optional */
    }
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
    fresh.tmpl = Py_XNewRef(tmpl);
    fresh.used = ++g_shapecache_clock;
    shapecache_ent *set = g_shapecache[h & (SHAPECACHE_SETS - 1)], *victim = &set[0];
    for (int w = 1; w < SHAPECACHE_WAYS; w++)
        if (set[w].used < victim->used) victim = &set[w];
    shapecache_ent old = *victim;
    *victim = fresh;
    shapecache_clear_ent(&old); /* after the swap: decrefs may run arbitrary deallocators */
}

/* Offset in kpool of the key objects of the map item `it`; *collide set when
 * the map cannot be a dict, *tmpl to its template (borrowed) or NULL. */
static Py_ssize_t shape_keys(dec_ctx *d, const pith_item *it, int *collide, PyObject **tmpl) {
    uint32_t si = it->v.map.shape;
    if (LIKELY(si != PITH_NO_INDEX && si < d->shapes_cap && d->shapes[si].set)) {
        *collide = d->shapes[si].collide;
        *tmpl = d->shapes[si].tmpl;
        return (Py_ssize_t)d->shapes[si].off;
    }
    *tmpl = NULL;
    size_t n = it->v.map.count;
    int sym_as_str = (d->opt & OPT_SYMBOL_AS_STR) != 0;
    size_t total = 0;
    uint64_t h = 0;
    const shapecache_ent *hit = NULL;
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
    if (hit) {
        for (size_t i = 0; i < n; i++) d->kpool[d->kpool_used++] = Py_NewRef(hit->keys[i]);
        c = hit->collide;
        t = Py_XNewRef(hit->tmpl);
    } else {
        const uint32_t *indices = it->v.map.key_strings;
        for (size_t i = 0; i < n; i++) {
            const pith_key *pk = &it->v.map.keys[i];
            PyObject *k = indices && pk->len > KEYCACHE_MAX_LEN && indices[i] != PITH_NO_INDEX
                              ? long_key(d, pk, indices[i])
                              : make_key(pk, d->opt);
            if (!k) return -1;
            d->kpool[d->kpool_used++] = k;
        }
        c = keys_collide(d->kpool + off, n, it->v.map.keys);
        if (c < 0) return -1;
        if (!c) {
            t = make_template(d->kpool + off, n);
            if (!t && PyErr_Occurred()) return -1;
        }
        if (cacheable) shapecache_put(h, it->v.map.keys, n, total, d->kpool + off, t, c, sym_as_str);
    }
    *collide = c;
    if (si != PITH_NO_INDEX) {
        if (si >= d->shapes_cap) {
            size_t cap = d->shapes_cap ? d->shapes_cap : 64;
            while (cap <= si) cap *= 2;
            sh_ent *p = PyMem_Realloc(d->shapes, cap * sizeof(sh_ent));
            if (!p) {
                PyErr_NoMemory();
                return -1;
            }
            memset(p + d->shapes_cap, 0, (cap - d->shapes_cap) * sizeof(sh_ent));
            d->shapes = p;
            d->shapes_cap = cap;
        }
        d->shapes[si].off = off;
        d->shapes[si].n = (uint32_t)n;
        d->shapes[si].set = 1;
        d->shapes[si].collide = (uint8_t)c;
        d->shapes[si].tmpl = t; /* owned by the entry */
        *tmpl = t;
        if (si >= d->shapes_hi) d->shapes_hi = si + 1;
    } else {
        /* A shape the full table did not take: used for this map only. */
        Py_XDECREF(t);
        *tmpl = NULL;
    }
    return (Py_ssize_t)off;
}

/* --- other scalars ---------------------------------------------------------- */

static PyObject *offset_tz(int minutes) {
    PyObject **slot = &g_tz_offsets[minutes + 1439];
    if (!*slot) {
        *slot = PyObject_CallFunction(g_offset_tz_fn, "i", minutes);
        if (!*slot) return NULL;
    }
    return *slot;
}

NOINLINE static PyObject *dec_time(dec_ctx *d, const pith_timestamp *ts) {
    if ((d->opt & OPT_TIMESTAMP) || ts->nanos % 1000) {
        return PyObject_CallFunction((PyObject *)TimestampType, "LIii", (long long)ts->seconds, (int)ts->nanos,
                                     (int)ts->zone, ts->zone == PITH_ZONE_OFFSET ? (int)ts->offset : 0);
    }
    int64_t local = ts->seconds + (ts->zone == PITH_ZONE_OFFSET ? (int64_t)ts->offset * 60 : 0);
    int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
    int64_t sod = local - days * 86400;
    int y, m, dd;
    civil_from_days(days, &y, &m, &dd);
    PyObject *tz = Py_None;
    if (ts->zone == PITH_ZONE_UTC) tz = g_utc;
    else if (ts->zone == PITH_ZONE_OFFSET && !(tz = offset_tz(ts->offset))) return NULL;
    return PyDateTimeAPI->DateTime_FromDateAndTime(y, m, dd, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60),
                                                   (int)(ts->nanos / 1000), tz, PyDateTimeAPI->DateTimeType);
}

NOINLINE static PyObject *dec_bigint(const pith_item *it) {
    PyObject *v = _PyLong_FromByteArray(it->v.big.mag, it->v.big.len, 1, 0);
    if (!v || !it->v.big.negative) return v;
    PyObject *neg = PyNumber_Negative(v);
    Py_DECREF(v);
    return neg;
}

NOINLINE static PyObject *dec_symbol(dec_ctx *d, const pith_item *it) {
    if (d->opt & OPT_SYMBOL_AS_STR) return dec_str(d, it);
    PyObject *s = make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (!s) return NULL;
    PyObject *sym = PyObject_CallOneArg((PyObject *)SymbolType, s);
    Py_DECREF(s);
    return sym;
}

NOINLINE static PyObject *dec_ext(const pith_item *it) {
    return PyObject_CallFunction((PyObject *)ExtType, "Iy#", (unsigned)it->v.ext.type, (const char *)it->v.ext.ptr,
                                 (Py_ssize_t)it->v.ext.len);
}

/* The scalars dec_scalar does not build inline. */
static PyObject *dec_other(dec_ctx *d, const pith_item *it) {
    switch (it->type) {
    case PITH_UINT:
        return PyLong_FromUnsignedLongLong(it->v.u);
    case PITH_BIGINT:
        return dec_bigint(it);
    case PITH_TIME:
        return dec_time(d, &it->v.time);
    case PITH_BINARY:
        return PyBytes_FromStringAndSize((const char *)it->v.bin.ptr, (Py_ssize_t)it->v.bin.len);
    case PITH_SYMBOL:
        return dec_symbol(d, it);
    case PITH_EXT:
        return dec_ext(it);
    default:
        break;
    }
    PyErr_SetString(PyExc_SystemError, "pith: unexpected item type");
    return NULL;
}

/* --- containers ------------------------------------------------------------ */

/* Decoding is iterative: each open container is a frame on a heap stack
 * (dec_ctx.frames), so that any depth the reader allows costs memory, never
 * C stack. The loop (dec_value) reads the items of the innermost frame,
 * builds the common scalars inline and pushes a frame for each container. */
enum {
    DF_LIST,      /* a list of at most PRESIZE_MAX elements, allocated up front (never part of a key) */
    DF_LIST_LONG, /* a longer list, grown with the elements actually read (its count is a claim),
                     or the list of a tuple (part of a key) */
    DF_TMPL,      /* a dict whose key table is a copy of its shape's template (see make_template) */
    DF_DICT,      /* a dict of a shape's keys (in kpool), filled with their known hashes */
    DF_PAIRS,     /* a shaped map that becomes a pith.Map: its values (keys in kpool) */
    DF_GENERIC,   /* a generic map: its keys and values, alternately */
};

/* Keys are hashed by C code that recurses on nested tuples: a generic map
 * with a key nested deeper than this becomes a pith.Map (no hashing). */
#define KEY_MAX_HEIGHT 64

typedef struct dframe {
    uint8_t kind;
    uint8_t as_key;  /* part of a map key: arrays become tuples, maps pith.Map (hashable) */
    uint8_t keys;    /* which items are parts of keys: bit 0 the even ones, bit 1 the odd ones */
    uint8_t gc;      /* DF_TMPL: a value the GC tracks */
    uint8_t deep;    /* DF_GENERIC: a key nests deeper than KEY_MAX_HEIGHT */
    uint32_t height; /* as_key frames: 1 + the height of the highest container read in it */
    size_t n, i;     /* items expected, items read (DF_GENERIC: 2 per pair) */
    PyObject *obj;   /* the list or dict; DF_PAIRS, DF_GENERIC: the list of items; DF_TMPL: NULL */
    union {
        size_t off;  /* DF_DICT, DF_PAIRS: the shape's key objects, kpool[off, off + n) */
        void *keys;  /* DF_TMPL: the key table being filled (a pith_dict_keys) */
    } u;
} dframe;

/* A marker dec_scalar returns for container items. */
static char dec_open_marker;
#define DEC_OPEN ((PyObject *)&dec_open_marker)

static PyObject *dec_other(dec_ctx *d, const pith_item *it);

/* The object of a scalar item, DEC_OPEN for a container item, or NULL. The
 * commonest inline (the container loops). */
ALWAYS_INLINE PyObject *dec_scalar(dec_ctx *d, const pith_item *it) {
    switch (it->type) {
    case PITH_STRING:
        return dec_str(d, it);
    case PITH_INT:
        return PyLong_FromLongLong(it->v.i);
    case PITH_FLOAT:
        return PyFloat_FromDouble(it->v.f);
    case PITH_TRUE:
        Py_RETURN_TRUE;
    case PITH_FALSE:
        Py_RETURN_FALSE;
    case PITH_NULL:
        Py_RETURN_NONE;
    case PITH_MAP:
    case PITH_ARRAY:
    case PITH_GENERIC_MAP:
        return DEC_OPEN;
    default:
        return dec_other(d, it);
    }
}

/* A list with room for `cap` elements and none yet. */
static PyObject *list_with_room(size_t cap) {
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    PyListObject *l = (PyListObject *)list;
    l->ob_item = PyMem_Malloc(cap * sizeof(PyObject *));
    if (!l->ob_item) {
        Py_DECREF(list);
        return PyErr_NoMemory();
    }
    l->allocated = (Py_ssize_t)cap;
    return list;
}

/* Append v (stolen) as element i of a DF_LIST_LONG list, growing it up to
 * the claimed count. */
ALWAYS_INLINE int list_long_store(dframe *f, size_t i, PyObject *v) {
    PyListObject *l = (PyListObject *)f->obj;
    if (UNLIKELY((Py_ssize_t)i == l->allocated)) {
        size_t cap = i * 2 < f->n ? i * 2 : f->n;
        PyObject **p = PyMem_Realloc(l->ob_item, cap * sizeof(PyObject *));
        if (!p) {
            Py_DECREF(v);
            PyErr_NoMemory();
            return -1;
        }
        l->ob_item = p;
        l->allocated = (Py_ssize_t)cap;
    }
    l->ob_item[i] = v;
    Py_SET_SIZE(l, (Py_ssize_t)i + 1);
    return 0;
}

ALWAYS_INLINE int dict_store(dec_ctx *d, dframe *f, size_t i, PyObject *v) {
    PyObject *k = d->kpool[f->u.off + i];
    int r = _PyDict_SetItem_KnownHash(f->obj, k, v, str_hash(k));
    Py_DECREF(v);
    return r;
}

#if PITH_DICT_INTERNALS
/* A copy of template `tmpl`'s key table (same keys, same hashes, same order)
 * whose values dec_value fills in; tmpl_dict attaches it to a new dict. No
 * lookups, no inserts. */
static pith_dict_keys *tmpl_copy(PyObject *tmpl) {
    const pith_dict_keys *tk = (const pith_dict_keys *)((PyDictObject *)tmpl)->ma_keys;
    size_t size = pith_dk_size(tk);
    pith_dict_keys *k = PyObject_Malloc(size);
    if (!k) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(k, tk, size);
    k->dk_refcnt = 1;
    k->dk_version = 0;
    return k;
}

/* Store v (stolen) as value i; returns whether the GC tracks it. */
ALWAYS_INLINE int tmpl_store(pith_dict_uentry *ep, size_t i, PyObject *v) {
    Py_INCREF(ep[i].me_key);
    ep[i].me_value = v;
    return PyType_IS_GC(Py_TYPE(v)) != 0;
}

static void tmpl_free(dframe *f) {
    pith_dict_keys *k = f->u.keys;
    pith_dict_uentry *ep = PITH_DK_ENTRIES(k);
    for (size_t j = 0; j < f->i; j++) {
        Py_DECREF(ep[j].me_key);
        Py_DECREF(ep[j].me_value);
    }
    PyObject_Free(k);
}

static PyObject *tmpl_dict(dframe *f) {
    PyObject *dict = PyDict_New();
    if (UNLIKELY(!dict)) {
        tmpl_free(f);
        return NULL;
    }
    PyDictObject *mp = (PyDictObject *)dict;
    ((pith_dict_keys *)mp->ma_keys)->dk_refcnt--; /* the shared empty table it started with */
    mp->ma_keys = (PyDictKeysObject *)f->u.keys;
    mp->ma_used = (Py_ssize_t)f->n;
    if (f->gc && !PyObject_GC_IsTracked(dict)) PyObject_GC_Track(dict);
    return dict;
}
#endif

NOINLINE static int dec_grow_frames(dec_ctx *d) {
    size_t cap = d->frames_cap ? d->frames_cap * 2 : 64;
    dframe *p = PyMem_Realloc(d->frames, cap * sizeof(dframe));
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    d->frames = p;
    d->frames_cap = cap;
    return 0;
}

/* Is item i of frame p (NULL: the top level) part of a map key? */
ALWAYS_INLINE int item_is_key(const dframe *p, size_t i) { return p && ((p->keys >> (i & 1)) & 1); }

/* Push the frame of container item `it` (empty ones too: closing builds the
 * object), with `as_key` if it is part of a map key (a generic map's key, or
 * inside one). Short arrays are pushed inline by dec_value. */
NOINLINE static int dec_open(dec_ctx *d, const pith_item *it, int as_key) {
    if (UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) return -1;
    dframe *f = &d->frames[d->nframes];
    f->as_key = (uint8_t)as_key;
    f->keys = as_key ? 3 : 0;
    f->gc = f->deep = 0;
    f->height = 1;
    f->i = 0;
    f->obj = NULL;
    if (it->type == PITH_ARRAY) {
        f->n = it->v.array.count;
        if (f->n <= PRESIZE_MAX && !as_key) {
            f->kind = DF_LIST;
            f->obj = PyList_New((Py_ssize_t)f->n);
        } else {
            f->kind = DF_LIST_LONG;
            f->obj = list_with_room(f->n < PRESIZE_MAX ? (f->n ? f->n : 1) : PRESIZE_MAX);
        }
    } else if (it->type == PITH_MAP) {
        int collide;
        PyObject *tmpl;
        Py_ssize_t off = shape_keys(d, it, &collide, &tmpl);
        if (UNLIKELY(off < 0)) return -1;
        f = &d->frames[d->nframes]; /* (shape_keys does not move frames; kept explicit) */
        f->n = it->v.map.count;
        f->u.off = (size_t)off;
        if (UNLIKELY(as_key || collide)) {
            f->kind = DF_PAIRS;
            f->obj = PyList_New(0);
        }
#if PITH_DICT_INTERNALS
        else if (LIKELY(tmpl != NULL)) {
            f->kind = DF_TMPL;
            f->u.keys = tmpl_copy(tmpl);
            if (!f->u.keys) return -1;
            d->nframes++;
            return 0;
        }
#endif
        else {
            f->kind = DF_DICT;
            f->obj = _PyDict_NewPresized((Py_ssize_t)(f->n < PRESIZE_MAX ? f->n : PRESIZE_MAX));
        }
    } else {
        f->kind = DF_GENERIC;
        f->keys = as_key ? 3 : 1; /* its keys always */
        f->n = 2 * it->v.map.count;
        f->obj = PyList_New(0);
    }
    if (UNLIKELY(!f->obj)) return -1;
    d->nframes++;
    return 0;
}

#if PITH_DICT_INTERNALS
/* A map of a shape this buffer has used before, whose template serves (not
 * part of a key): the commonest container, pushed without a call. */
ALWAYS_INLINE dframe *dec_open_tmpl(dec_ctx *d, PyObject *tmpl, size_t n) {
    if (UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) return NULL;
    dframe *f = &d->frames[d->nframes];
    f->kind = DF_TMPL;
    f->as_key = f->keys = f->gc = 0;
    f->height = 1;
    f->i = 0;
    f->n = n;
    f->obj = NULL;
    f->u.keys = tmpl_copy(tmpl);
    if (UNLIKELY(!f->u.keys)) return NULL;
    d->nframes++;
    return f;
}
#endif

/* A list of n <= PRESIZE_MAX elements, not part of a key: pushed without a
 * call. */
ALWAYS_INLINE dframe *dec_open_list(dec_ctx *d, size_t n) {
    if (UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) return NULL;
    dframe *f = &d->frames[d->nframes];
    f->kind = DF_LIST;
    f->as_key = f->keys = 0;
    f->i = 0;
    f->n = n;
    f->obj = PyList_New((Py_ssize_t)n);
    if (UNLIKELY(!f->obj)) return NULL;
    d->nframes++;
    return f;
}

/* A pith.Map of the pairs (items[0], items[1]), (items[2], items[3]), ... */
static PyObject *map_of_items(PyObject *const *items, size_t npairs) {
    PyObject *pairs = PyTuple_New((Py_ssize_t)npairs);
    if (!pairs) return NULL;
    for (size_t j = 0; j < npairs; j++) {
        PyObject *pair = PyTuple_Pack(2, items[2 * j], items[2 * j + 1]);
        if (!pair) {
            Py_DECREF(pairs);
            return NULL;
        }
        PyTuple_SET_ITEM(pairs, (Py_ssize_t)j, pair);
    }
    PyObject *m = PyObject_CallOneArg((PyObject *)MapType, pairs);
    Py_DECREF(pairs);
    return m;
}

/* A dict of a generic map's pairs costs time quadratic in the number of keys
 * that share one Python hash value (each insert compares with all of them),
 * and ints, floats and tuples of them hash predictably: the multiples of
 * 2^61-1 all hash to 0. A generic map with more than KEY_GROUP_MAX keys of
 * one hash becomes a pith.Map (no hashing), which bounds the work at
 * KEY_GROUP_MAX comparisons per key. No natural data comes near it (floats
 * share a hash at most 34 at a time: the powers 2^(61k)). */
#define KEY_GROUP_MAX 64

typedef struct hash_group {
    Py_hash_t hash;
    size_t count; /* 0: empty slot */
} hash_group;

/* The seed of the hash_group table's slots, random per process: the keys
 * come from whoever wrote the buffer, so they must not be able to choose
 * hash values that collide in this table too. */
static uint64_t g_group_seed;

ALWAYS_INLINE size_t group_slot(Py_hash_t h, size_t mask) {
    uint64_t x = (uint64_t)h ^ g_group_seed;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (size_t)x & mask;
}

/* An empty table for n keys (load at most 1/2), or -1 with MemoryError. */
static int groups_reset(dec_ctx *d, size_t n, size_t *mask) {
    size_t cap = 64;
    while (cap < 2 * n) cap *= 2;
    if (cap > d->groups_cap) {
        hash_group *p = PyMem_Realloc(d->groups, cap * sizeof(hash_group));
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        d->groups = p;
        d->groups_cap = cap;
    }
    memset(d->groups, 0, cap * sizeof(hash_group));
    *mask = cap - 1;
    return 0;
}

/* How many keys so far have hash h, this one included. */
ALWAYS_INLINE size_t groups_add(dec_ctx *d, size_t mask, Py_hash_t h) {
    size_t i = group_slot(h, mask);
    while (d->groups[i].count && d->groups[i].hash != h) i = (i + 1) & mask;
    d->groups[i].hash = h;
    return ++d->groups[i].count;
}

/* A dict of the generic map's pairs, or NULL without an exception when a
 * dict cannot hold them: keys that Python considers equal (1, 1.0 and True)
 * or cannot hash, or more than KEY_GROUP_MAX keys of one hash value. */
static PyObject *dict_of_items(dec_ctx *d, PyObject *const *items, size_t npairs) {
    size_t mask = 0;
    int count = npairs > KEY_GROUP_MAX; /* fewer keys cannot exceed it */
    if (count && groups_reset(d, npairs, &mask) < 0) return NULL;
    PyObject *dict = _PyDict_NewPresized((Py_ssize_t)npairs); /* pairs read, not claimed */
    if (!dict) return NULL;
    for (size_t j = 0; j < npairs; j++) {
        PyObject *k = items[2 * j];
        Py_hash_t h = PyObject_Hash(k);
        if (h == -1) goto fail;
        if (count && groups_add(d, mask, h) > KEY_GROUP_MAX) goto cannot;
        if (_PyDict_SetItem_KnownHash(dict, k, items[2 * j + 1], h) < 0) goto fail;
    }
    if ((size_t)PyDict_GET_SIZE(dict) == npairs) return dict;
cannot:
    Py_DECREF(dict);
    return NULL;
fail:
    Py_DECREF(dict);
    if (PyErr_ExceptionMatches(PyExc_TypeError)) PyErr_Clear();
    return NULL;
}

/* The finished object of the innermost frame f, which passes its references
 * to it (or drops them on failure). */
static PyObject *dec_close(dec_ctx *d, dframe *f) {
    PyObject *obj = f->obj, *r;
    switch (f->kind) {
    case DF_LIST:
    case DF_LIST_LONG:
        if (LIKELY(!f->as_key)) return obj;
        r = PyList_AsTuple(obj);
        Py_DECREF(obj);
        return r;
#if PITH_DICT_INTERNALS
    case DF_TMPL:
        return tmpl_dict(f);
#endif
    case DF_DICT:
        return obj;
    case DF_PAIRS: {
        /* keys from kpool, values from the list */
        size_t n = f->n;
        PyObject *pairs = PyTuple_New((Py_ssize_t)n);
        for (size_t j = 0; pairs && j < n; j++) {
            PyObject *pair = PyTuple_Pack(2, d->kpool[f->u.off + j], PyList_GET_ITEM(obj, (Py_ssize_t)j));
            if (!pair) Py_CLEAR(pairs);
            else PyTuple_SET_ITEM(pairs, (Py_ssize_t)j, pair);
        }
        r = pairs ? PyObject_CallOneArg((PyObject *)MapType, pairs) : NULL;
        Py_XDECREF(pairs);
        Py_DECREF(obj);
        return r;
    }
    default: { /* DF_GENERIC: a dict, or a pith.Map when it is a key or a dict cannot hold it */
        PyObject *const *items = ((PyListObject *)obj)->ob_item;
        size_t npairs = f->n / 2;
        r = NULL;
        if (!f->as_key && !f->deep) r = dict_of_items(d, items, npairs);
        if (!r && !PyErr_Occurred()) r = map_of_items(items, npairs);
        Py_DECREF(obj);
        return r;
    }
    }
}

/* After an error: drop every open frame. */
NOINLINE static void dec_unwind(dec_ctx *d) {
    while (d->nframes) {
        dframe *f = &d->frames[--d->nframes];
#if PITH_DICT_INTERNALS
        if (f->kind == DF_TMPL) {
            tmpl_free(f);
            continue;
        }
#endif
        Py_DECREF(f->obj);
    }
}

/* Read one whole value (new reference), or NULL with the exception set.
 * Each turn runs the item loop of the innermost frame f: first it stores
 * `v`, a container just finished (NULL after a push), then reads items,
 * building the scalars inline, until a container item (pushed, and its loop
 * entered) or the frame's end (closed, and its parent's loop resumed). The
 * commonest containers, short lists and maps of a shape seen before, are
 * pushed inline. */
static PyObject *dec_value(dec_ctx *d) {
    pith_item it;
    PyObject *v;
    dframe *f;
    size_t i, n;
    int r, was_key;
    uint32_t height;
    if (UNLIKELY(!pith_read(d->r, &it))) return dec_fail(d);
    v = dec_scalar(d, &it);
    if (v != DEC_OPEN) return v;
    f = NULL;
    i = 0;
open: /* `it` is a container item, item i of frame f (NULL: the top level) */
    r = item_is_key(f, i);
open_known: /* r: whether it is part of a key */
    if (LIKELY(!r)) {
        if (it.type == PITH_MAP) {
#if PITH_DICT_INTERNALS
            uint32_t si = it.v.map.shape;
            if (si < d->shapes_cap && d->shapes[si].tmpl) {
                f = dec_open_tmpl(d, d->shapes[si].tmpl, it.v.map.count);
                if (UNLIKELY(!f)) goto fail;
                i = 0;
                n = f->n;
                v = NULL;
                goto tmpl_items;
            }
#endif
            if (it.v.map.count == 0) {
                /* No frame: the next item of its parent. */
                v = PyDict_New();
                if (UNLIKELY(!v)) goto fail;
                if (!f) return v;
                goto resume;
            }
        } else if (it.type == PITH_ARRAY && it.v.array.count <= PRESIZE_MAX) {
            f = dec_open_list(d, it.v.array.count);
            if (UNLIKELY(!f)) goto fail;
            i = 0;
            n = f->n;
            v = NULL;
            goto list_items;
        }
    }
    if (UNLIKELY(dec_open(d, &it, r) < 0)) goto fail;
    f = &d->frames[d->nframes - 1];
    v = NULL;
resume: /* f: the innermost frame; v: its next item if not NULL */
    i = f->i;
    n = f->n;
    switch (f->kind) {
    case DF_LIST:
        goto list_items;
#if PITH_DICT_INTERNALS
    case DF_TMPL:
        goto tmpl_items;
#endif
    case DF_LIST_LONG:
        if (v) {
            if (UNLIKELY(list_long_store(f, i, v) < 0)) goto fail_at;
            i++;
        }
        for (; i < n; i++) {
            if (UNLIKELY(!pith_read(d->r, &it))) goto fail_read;
            v = dec_scalar(d, &it);
            if (v == DEC_OPEN) goto open_at;
            if (UNLIKELY(!v)) goto fail_at;
            if (UNLIKELY(list_long_store(f, i, v) < 0)) goto fail_at;
        }
        goto complete;
    case DF_DICT:
        if (v) {
            if (UNLIKELY(dict_store(d, f, i, v) < 0)) goto fail_at;
            i++;
        }
        for (; i < n; i++) {
            if (UNLIKELY(!pith_read(d->r, &it))) goto fail_read;
            v = dec_scalar(d, &it);
            if (v == DEC_OPEN) goto open_at;
            if (UNLIKELY(!v)) goto fail_at;
            if (UNLIKELY(dict_store(d, f, i, v) < 0)) goto fail_at;
        }
        goto complete;
    default: /* DF_PAIRS, DF_GENERIC */
        if (v) {
            r = PyList_Append(f->obj, v);
            Py_DECREF(v);
            if (UNLIKELY(r < 0)) goto fail_at;
            i++;
        }
        for (; i < n; i++) {
            if (UNLIKELY(!pith_read(d->r, &it))) goto fail_read;
            v = dec_scalar(d, &it);
            if (v == DEC_OPEN) goto open_at;
            if (UNLIKELY(!v)) goto fail_at;
            r = PyList_Append(f->obj, v);
            Py_DECREF(v);
            if (UNLIKELY(r < 0)) goto fail_at;
        }
        goto complete;
    }
list_items: {
    PyObject **items = ((PyListObject *)f->obj)->ob_item;
    if (v) items[i++] = v;
    for (; i < n; i++) {
        if (UNLIKELY(!pith_read(d->r, &it))) goto fail_read;
        v = dec_scalar(d, &it);
        if (v == DEC_OPEN) goto open_at_plain;
        if (UNLIKELY(!v)) goto fail_at;
        items[i] = v;
    }
    f->i = i;
    v = f->obj;
    goto closed;
}
#if PITH_DICT_INTERNALS
tmpl_items: {
    pith_dict_uentry *ep = PITH_DK_ENTRIES((pith_dict_keys *)f->u.keys);
    int gc = f->gc;
    if (v) gc |= tmpl_store(ep, i++, v);
    for (; i < n; i++) {
        if (UNLIKELY(!pith_read(d->r, &it))) goto fail_read;
        v = dec_scalar(d, &it);
        if (v == DEC_OPEN) {
            f->gc = (uint8_t)gc;
            goto open_at_plain;
        }
        if (UNLIKELY(!v)) goto fail_at;
        gc |= tmpl_store(ep, i, v);
    }
    f->i = i;
    f->gc = (uint8_t)gc;
    v = tmpl_dict(f);
    if (UNLIKELY(!v)) {
        d->nframes--;
        goto fail;
    }
    goto closed;
}
#endif
complete:
    f->i = i;
    was_key = f->as_key;
    height = f->height;
    v = dec_close(d, f);
    if (UNLIKELY(!v)) {
        d->nframes--;
        goto fail;
    }
    if (UNLIKELY(was_key) && d->nframes > 1) {
        dframe *p = f - 1;
        if (p->as_key) {
            if (height + 1 > p->height) p->height = height + 1;
        } else if (height > KEY_MAX_HEIGHT) {
            p->deep = 1; /* p is a generic map, and v its key */
        }
    }
closed: /* v: the object of f, which is done */
    if (--d->nframes == 0) return v;
    f--; /* frames move only when one is pushed */
    goto resume;
open_at:
    f->i = i;
    goto open;
open_at_plain: /* from a frame that is not part of a key */
    f->i = i;
    r = 0;
    goto open_known;
fail_read:
    f->i = i;
    dec_fail(d);
    goto fail;
fail_at:
    f->i = i;
fail:
    dec_unwind(d);
    return NULL;
}



/* The bytes of a loads() argument. */
typedef struct {
    const char *ptr;
    size_t len;
    Py_buffer view;
    int has_view;
} input_bytes;

static int input_get(PyObject *o, input_bytes *in) {
    in->has_view = 0;
    if (PyBytes_CheckExact(o)) {
        in->ptr = PyBytes_AS_STRING(o);
        in->len = (size_t)PyBytes_GET_SIZE(o);
        return 0;
    }
    if (PyUnicode_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "expected bytes, bytearray or memoryview, not str");
        return -1;
    }
    if (PyObject_GetBuffer(o, &in->view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "expected bytes, bytearray or a contiguous memoryview, not %s",
                         Py_TYPE(o)->tp_name);
        }
        return -1;
    }
    in->has_view = 1;
    in->ptr = in->view.buf;
    in->len = (size_t)in->view.len;
    return 0;
}

static void input_release(input_bytes *in) {
    if (in->has_view) PyBuffer_Release(&in->view);
}

static PyObject *names_loads[3];

typedef struct {
    uint32_t opt;
    uint32_t max_depth;
    dict_list dicts;
} dec_args;

static int parse_dec_args(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          dec_args *a) {
    PyObject *kw[3] = {NULL, NULL, NULL};
    a->opt = 0;
    a->max_depth = PITH_DEFAULT_MAX_DEPTH;
    a->dicts.ptr = a->dicts.items;
    a->dicts.n = 0;
    a->dicts.seq = NULL;
    if (kwnames && parse_kwargs(fname, kwnames, args + nargs, names_loads, kw, 3) < 0) return -1;
    if (kw[0] && parse_option(kw[0], &a->opt) < 0) return -1;
    if (kw[2] && parse_max_depth(kw[2], &a->max_depth) < 0) return -1;
    if (kw[1] && dict_list_init(&a->dicts, kw[1]) < 0) return -1;
    return 0;
}

static PyObject *pith_loads(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "loads() takes exactly 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    dec_args a;
    if (stack_guard("loads") < 0 || parse_dec_args("loads", args, nargs, kwnames, &a) < 0) return NULL;
    input_bytes in;
    if (input_get(args[0], &in) < 0) {
        dict_list_free(&a.dicts);
        return NULL;
    }
    PyObject *result = NULL;
    dec_ctx *d = dec_acquire();
    if (d) {
        d->opt = a.opt;
        if (a.max_depth != PITH_DEFAULT_MAX_DEPTH) pith_reader_set_max_depth(d->r, a.max_depth);
        if (!pith_reader_start(d->r, in.ptr, in.len, a.dicts.ptr, a.dicts.n, 0)) {
            dec_fail(d);
        } else {
            result = dec_value(d);
            if (result && !pith_reader_finish(d->r)) {
                Py_CLEAR(result);
                dec_fail(d);
            }
        }
        dec_release(d, in.len);
    }
    input_release(&in);
    dict_list_free(&a.dicts);
    return result;
}

/* Decode a whole stream buffer into a list of values. */
static PyObject *pith_loads_stream(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "loads_stream() takes exactly 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    dec_args a;
    if (stack_guard("loads_stream") < 0 || parse_dec_args("loads_stream", args, nargs, kwnames, &a) < 0) return NULL;
    input_bytes in;
    if (input_get(args[0], &in) < 0) {
        dict_list_free(&a.dicts);
        return NULL;
    }
    PyObject *result = PyList_New(0);
    dec_ctx *d = result ? dec_acquire() : NULL;
    if (d) {
        d->opt = a.opt;
        if (a.max_depth != PITH_DEFAULT_MAX_DEPTH) pith_reader_set_max_depth(d->r, a.max_depth);
        if (!pith_reader_start(d->r, in.ptr, in.len, a.dicts.ptr, a.dicts.n, PITH_READ_STREAM)) {
            dec_fail(d);
            Py_CLEAR(result);
        } else {
            for (;;) {
                bool more;
                if (!pith_reader_frame_begin(d->r, &more)) {
                    dec_fail(d);
                    Py_CLEAR(result);
                    break;
                }
                if (!more) break;
                PyObject *v = dec_value(d);
                if (!v || !pith_reader_frame_end(d->r) || PyList_Append(result, v) < 0) {
                    if (v && !PyErr_Occurred()) dec_fail(d);
                    Py_XDECREF(v);
                    Py_CLEAR(result);
                    break;
                }
                Py_DECREF(v);
            }
        }
        dec_release(d, in.len);
    } else {
        Py_CLEAR(result);
    }
    input_release(&in);
    dict_list_free(&a.dicts);
    return result;
}
