/*
 * decode.c - loads(): the core's reader to Python objects (streams: streams.c).
 *
 * Part of _tersa.c, which includes it (one translation unit: the parts share
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
    uint8_t no_tmpl; /* make_template cannot serve these keys */
    PyObject *tmpl;  /* a dict of these keys (values None) whose table new dicts copy, or NULL */
    size_t tmpl_size; /* the bytes of that table */
    struct shapecache_ent *cent; /* the entry of the cache across calls that has these keys, if born == cborn */
    uint64_t cborn;
} sh_ent;

#define UNTRACKED_KEEP 262144 /* a pooled context keeps an array of at most this many (2 MB) of them */

typedef struct dec_ctx {
    tersa_reader *r;
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
    size_t ahead;             /* bytes open containers may still allocate ahead of their items (see AHEAD) */
    size_t floats;            /* floats made in this call, up to FLOAT_FREE_LIST */
    int defer_gc;             /* keep the containers out of the GC until the value is done (see dec_hold) */
    struct hash_group *groups; /* keys per Python hash value of a generic map (see dict_of_items) */
    size_t groups_cap;
    PyObject **untracked;     /* containers of the value being built, kept out of the GC until it is done */
    size_t nuntracked, untracked_cap;
    uint8_t large;            /* the last input was large (see pool_keep) */
} dec_ctx;

static dec_ctx *dec_ctx_new(void) {
    dec_ctx *d = PyMem_Calloc(1, sizeof(dec_ctx));
    if (!d) {
        PyErr_NoMemory();
        return NULL;
    }
    d->r = tersa_reader_new(NULL);
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
    tersa_reader_free(d->r);
    PyMem_Free(d->scache);
    PyMem_Free(d->shapes);
    PyMem_Free(d->kpool);
    PyMem_Free(d->lkeys);
    PyMem_Free(d->frames);
    PyMem_Free(d->groups);
    PyMem_Free(d->untracked);
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
    tersa_reader_set_max_depth(d->r, TERSA_DEFAULT_MAX_DEPTH);
    if (d->untracked_cap > UNTRACKED_KEEP) {
        PyMem_Free(d->untracked);
        d->untracked = NULL;
        d->untracked_cap = 0;
    }
    if (g_dec_pool || !pool_keep(&d->large, input_len) || d->scache_cap > 65536 || d->shapes_cap > 65536 ||
        d->kpool_cap > 65536 || d->lkeys_cap / 2 > 65536 || d->frames_cap > 4096 || d->groups_cap > 65536) {
        dec_ctx_free(d);
        return;
    }
    g_dec_pool = d;
}

NOINLINE static PyObject *dec_fail(dec_ctx *d) {
    raise_tersa_error(tersa_reader_error(d->r));
    return NULL;
}

/* --- garbage collection ------------------------------------------------------ */

/* Every container allocation counts towards CPython's next collection, and
 * each collection walks every tracked object of its generations: while a
 * large value is built, the young and then the older generations fill with
 * its finished containers and are walked again and again, most of all by
 * the full collections that its growth triggers. The containers of the value
 * being built are therefore kept untracked, each with a reference held here,
 * and all tracked when dec_value returns (whether it succeeds or not), so
 * the GC sees the value once, whole, as it would have in the end anyway.
 * Nothing else can reach them meanwhile, so no cycle can form through them.
 * Should the array not grow, the container simply stays tracked. Values of
 * a few kilobytes skip all this: no collection has time to walk them twice. */
#define GC_DEFER_MIN_BYTES 4096

#if TERSA_DICT_INTERNALS
/* CPython 3.11's GC header (Include/internal/pycore_gc.h), in front of every
 * GC object: a tracked object is linked into a generation's list. Checking
 * and unlinking inline, as _PyObject_GC_IS_TRACKED and _PyObject_GC_UNTRACK
 * do, spares two calls per container, which documents made of many small
 * lists feel. Tracking stays a call: it needs the GC's state. */
typedef struct {
    uintptr_t next;
    uintptr_t prev; /* the low 2 bits are flags */
} tersa_gc_head;
#define TERSA_GC_HEAD(o) ((tersa_gc_head *)(o) - 1)
ALWAYS_INLINE int gc_is_tracked(PyObject *o) { return TERSA_GC_HEAD(o)->next != 0; }
/* o must be tracked. */
ALWAYS_INLINE void gc_untrack(PyObject *o) {
    tersa_gc_head *g = TERSA_GC_HEAD(o);
    tersa_gc_head *prev = (tersa_gc_head *)(g->prev & ~(uintptr_t)3);
    tersa_gc_head *next = (tersa_gc_head *)g->next;
    prev->next = (uintptr_t)next;
    next->prev = (next->prev & (uintptr_t)3) | (uintptr_t)prev;
    g->next = 0;
    g->prev &= 1; /* keeps only the finalized flag */
}
#else
#define gc_is_tracked PyObject_GC_IsTracked
#define gc_untrack PyObject_GC_UnTrack
#endif

NOINLINE static int dec_grow_untracked(dec_ctx *d) {
    size_t cap = d->untracked_cap ? d->untracked_cap * 2 : 256;
    PyObject **p = PyMem_Realloc(d->untracked, cap * sizeof(PyObject *));
    if (!p) return -1;
    d->untracked = p;
    d->untracked_cap = cap;
    return 0;
}

/* Hold untracked container o until the value is done: 0, or -1 if it is
 * not held (a small value, or the array cannot grow): then o must be
 * tracked now. */
ALWAYS_INLINE int dec_hold(dec_ctx *d, PyObject *o) {
    if (!d->defer_gc) return -1;
    if (UNLIKELY(d->nuntracked == d->untracked_cap) && dec_grow_untracked(d) < 0) return -1;
    d->untracked[d->nuntracked++] = Py_NewRef(o);
    return 0;
}

/* o: a tracked container just made. */
ALWAYS_INLINE void dec_untrack(dec_ctx *d, PyObject *o) {
    if (dec_hold(d, o) == 0) gc_untrack(o);
}

/* Track the containers untracked while building a value, and drop their
 * references (freeing those no longer part of anything). */
NOINLINE static void dec_track_all(dec_ctx *d) {
    size_t n = d->nuntracked;
    d->nuntracked = 0;
    for (size_t i = 0; i < n; i++) {
        PyObject *o = d->untracked[i];
        if (!gc_is_tracked(o)) PyObject_GC_Track(o);
    }
    for (size_t i = 0; i < n; i++) Py_DECREF(d->untracked[i]);
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

/* Numbers as PyFloat_FromDouble and PyLong_FromLongLong make them, without
 * their calls and checks: on float- and int-dense documents they were a
 * tenth of the decode. Fresh memory, not the float free list (internal):
 * freed floats still go back to it. */
#define FLOAT_FREE_LIST 100 /* CPython's PyFloat_MAXFREELIST */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_REF_DEBUG) && \
    !defined(Py_TRACE_REFS) && PyLong_SHIFT == 30
ALWAYS_INLINE PyObject *new_float(double v) {
    PyFloatObject *o = (PyFloatObject *)PyObject_Malloc(sizeof(PyFloatObject));
    if (UNLIKELY(!o)) return PyErr_NoMemory();
    Py_SET_TYPE(o, &PyFloat_Type);
    Py_SET_REFCNT(o, 1);
    o->ob_fval = v;
    return (PyObject *)o;
}

ALWAYS_INLINE PyObject *new_int(int64_t v) {
    if ((uint64_t)v + 5 <= 261) return PyLong_FromLong((long)v); /* the shared small ints */
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    Py_ssize_t nd = a >> 60 ? 3 : a >> 30 ? 2 : 1;
    PyLongObject *o = (PyLongObject *)PyObject_Malloc(offsetof(PyLongObject, ob_digit) + (size_t)nd * sizeof(digit));
    if (UNLIKELY(!o)) return PyErr_NoMemory();
    Py_SET_TYPE(o, &PyLong_Type);
    Py_SET_REFCNT(o, 1);
    Py_SET_SIZE(o, v < 0 ? -nd : nd);
    o->ob_digit[0] = (digit)(a & PyLong_MASK);
    if (nd >= 2) o->ob_digit[1] = (digit)((a >> 30) & PyLong_MASK);
    if (nd == 3) o->ob_digit[2] = (digit)(a >> 60);
    return (PyObject *)o;
}
#else
#define new_float PyFloat_FromDouble
#define new_int PyLong_FromLongLong
#endif

ALWAYS_INLINE PyObject *make_str(const char *p, size_t n, uint32_t flags) {
    if (LIKELY(flags & TERSA_ITEM_ASCII)) {
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
ALWAYS_INLINE PyObject *dec_str(dec_ctx *d, const tersa_item *it) {
    uint32_t idx = it->v.str.index;
    if (idx == TERSA_NO_INDEX) return make_str(it->v.str.ptr, it->v.str.len, it->flags);
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

#include "decode_keys.c"


/* --- other scalars ---------------------------------------------------------- */

static PyObject *offset_tz(int minutes) {
    PyObject **slot = &g_tz_offsets[minutes + 1439];
    if (!*slot) {
        *slot = PyObject_CallFunction(g_offset_tz_fn, "i", minutes);
        if (!*slot) return NULL;
    }
    return *slot;
}

NOINLINE static PyObject *dec_time(dec_ctx *d, const tersa_timestamp *ts) {
    if ((d->opt & OPT_TIMESTAMP) || ts->nanos % 1000) {
        return PyObject_CallFunction((PyObject *)TimestampType, "LIii", (long long)ts->seconds, (int)ts->nanos,
                                     (int)ts->zone, ts->zone == TERSA_ZONE_OFFSET ? (int)ts->offset : 0);
    }
    int64_t local = ts->seconds + (ts->zone == TERSA_ZONE_OFFSET ? (int64_t)ts->offset * 60 : 0);
    int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
    int64_t sod = local - days * 86400;
    int y, m, dd;
    civil_from_days(days, &y, &m, &dd);
    PyObject *tz = Py_None;
    if (ts->zone == TERSA_ZONE_UTC) tz = g_utc;
    else if (ts->zone == TERSA_ZONE_OFFSET && !(tz = offset_tz(ts->offset))) return NULL;
    return PyDateTimeAPI->DateTime_FromDateAndTime(y, m, dd, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60),
                                                   (int)(ts->nanos / 1000), tz, PyDateTimeAPI->DateTimeType);
}

NOINLINE static PyObject *dec_bigint(const tersa_item *it) {
    PyObject *v = _PyLong_FromByteArray(it->v.big.mag, it->v.big.len, 1, 0);
    if (!v || !it->v.big.negative) return v;
    PyObject *neg = PyNumber_Negative(v);
    Py_DECREF(v);
    return neg;
}

NOINLINE static PyObject *dec_symbol(dec_ctx *d, const tersa_item *it) {
    if (d->opt & OPT_SYMBOL_AS_STR) return dec_str(d, it);
    PyObject *s = make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (!s) return NULL;
    PyObject *sym = PyObject_CallOneArg((PyObject *)SymbolType, s);
    Py_DECREF(s);
    return sym;
}

NOINLINE static PyObject *dec_ext(const tersa_item *it) {
    if (it->v.ext.type > TERSA_EXT_APP_MAX) return dec_known(it);
    if (g_ext_by_type && PyDict_GET_SIZE(g_ext_by_type)) {
        PyObject *key = PyLong_FromUnsignedLong(it->v.ext.type);
        if (!key) return NULL;
        PyObject *entry = PyDict_GetItemWithError(g_ext_by_type, key);
        Py_DECREF(key);
        if (entry) {
            /* The unpacker's exceptions pass through unchanged. */
            Py_INCREF(entry); /* an unpacker may unregister its own type */
            PyObject *data = PyBytes_FromStringAndSize((const char *)it->v.ext.ptr, (Py_ssize_t)it->v.ext.len);
            PyObject *r = data ? PyObject_CallOneArg(PyTuple_GET_ITEM(entry, 0), data) : NULL;
            Py_XDECREF(data);
            Py_DECREF(entry);
            return r;
        }
        if (PyErr_Occurred()) return NULL;
    }
    return PyObject_CallFunction((PyObject *)ExtType, "Iy#", (unsigned)it->v.ext.type, (const char *)it->v.ext.ptr,
                                 (Py_ssize_t)it->v.ext.len);
}

/* The scalars dec_scalar does not build inline. */
static PyObject *dec_other(dec_ctx *d, const tersa_item *it) {
    switch (it->type) {
    case TERSA_UINT:
        return PyLong_FromUnsignedLongLong(it->v.u);
    case TERSA_BIGINT:
        return dec_bigint(it);
    case TERSA_TIME:
        return dec_time(d, &it->v.time);
    case TERSA_BINARY:
        return PyBytes_FromStringAndSize((const char *)it->v.bin.ptr, (Py_ssize_t)it->v.bin.len);
    case TERSA_SYMBOL:
        return dec_symbol(d, it);
    case TERSA_EXT:
        return dec_ext(it);
    default:
        break;
    }
    PyErr_SetString(PyExc_SystemError, "tersa: unexpected item type");
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
    DF_PAIRS,     /* a shaped map that becomes a tersa.Map: its values (keys in kpool) */
    DF_GENERIC,   /* a generic map: its keys and values, alternately */
};

/* Keys are hashed by C code that recurses on nested tuples: a generic map
 * with a key nested deeper than this becomes a tersa.Map (no hashing). */
#define KEY_MAX_HEIGHT 64

typedef struct dframe {
    uint8_t kind;
    uint8_t as_key;  /* part of a map key: arrays become tuples, maps tersa.Map (hashable) */
    uint8_t keys;    /* which items are parts of keys: bit 0 the even ones, bit 1 the odd ones */
    uint8_t gc;      /* DF_TMPL: a value the GC tracks */
    uint8_t deep;    /* DF_GENERIC: a key nests deeper than KEY_MAX_HEIGHT */
    uint32_t height; /* as_key frames: 1 + the height of the highest container read in it */
    size_t n, i;     /* items expected, items read (DF_GENERIC: 2 per pair) */
    size_t claim;    /* bytes allocated ahead of the items (a list's slots, a dict's table) */
    PyObject *obj;   /* the list or dict; DF_PAIRS, DF_GENERIC: the list of items; DF_TMPL: NULL */
    union {
        size_t off;  /* DF_DICT, DF_PAIRS: the shape's key objects, kpool[off, off + n) */
        void *keys;  /* DF_TMPL: the key table being filled (a tersa_dict_keys) */
    } u;
} dframe;

/* Containers are allocated for their claimed counts (lists up to
 * PRESIZE_MAX, maps their shape's whole table) before their items are read.
 * Nested containers all claim the same remaining bytes: a few bytes per
 * level of references to a 4,096-key shape would otherwise allocate 100 KB
 * per level before the input runs out. The claims of the open containers
 * are bounded by AHEAD(input length); past it, containers grow with the
 * items actually read. A closed container returns its claim: its items
 * were read. */
#define AHEAD(len) ((len) < ((size_t)1 << 50) ? 32 * (len) + ((size_t)1 << 20) : (size_t)-1)

/* A marker dec_scalar returns for container items. */
static char dec_open_marker;
#define DEC_OPEN ((PyObject *)&dec_open_marker)

static PyObject *dec_other(dec_ctx *d, const tersa_item *it);

/* The object of a scalar item, DEC_OPEN for a container item, or NULL. The
 * commonest inline (the container loops). */
ALWAYS_INLINE PyObject *dec_scalar(dec_ctx *d, const tersa_item *it) {
    switch (it->type) {
    case TERSA_STRING:
        return dec_str(d, it);
    case TERSA_INT:
        return new_int(it->v.i);
    case TERSA_FLOAT:
        /* The first ones come from the float free list: memory the last
         * call's floats just left, still in cache. */
        if (d->floats < FLOAT_FREE_LIST) {
            d->floats++;
            return PyFloat_FromDouble(it->v.f);
        }
        return new_float(it->v.f);
    case TERSA_TRUE:
        Py_RETURN_TRUE;
    case TERSA_FALSE:
        Py_RETURN_FALSE;
    case TERSA_NULL:
        Py_RETURN_NONE;
    case TERSA_MAP:
    case TERSA_ARRAY:
    case TERSA_GENERIC_MAP:
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

#if TERSA_DICT_INTERNALS
/* A copy of template `tmpl`'s key table of `size` bytes (same keys, same
 * hashes, same order) whose values dec_value fills in; tmpl_dict attaches it
 * to a new dict. No lookups, no inserts. */
static tersa_dict_keys *tmpl_copy(PyObject *tmpl, size_t size) {
    const tersa_dict_keys *tk = (const tersa_dict_keys *)((PyDictObject *)tmpl)->ma_keys;
    tersa_dict_keys *k = PyObject_Malloc(size);
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
ALWAYS_INLINE int tmpl_store(tersa_dict_uentry *ep, size_t i, PyObject *v) {
    Py_INCREF(ep[i].me_key);
    ep[i].me_value = v;
    return PyType_IS_GC(Py_TYPE(v)) != 0;
}

static void tmpl_free(dframe *f) {
    tersa_dict_keys *k = f->u.keys;
    tersa_dict_uentry *ep = TERSA_DK_ENTRIES(k);
    for (size_t j = 0; j < f->i; j++) {
        Py_DECREF(ep[j].me_key);
        Py_DECREF(ep[j].me_value);
    }
    PyObject_Free(k);
}

ALWAYS_INLINE PyObject *tmpl_dict(dec_ctx *d, dframe *f) {
    PyObject *dict = PyDict_New();
    if (UNLIKELY(!dict)) {
        tmpl_free(f);
        return NULL;
    }
    PyDictObject *mp = (PyDictObject *)dict;
    ((tersa_dict_keys *)mp->ma_keys)->dk_refcnt--; /* the shared empty table it started with */
    mp->ma_keys = (PyDictKeysObject *)f->u.keys;
    mp->ma_used = (Py_ssize_t)f->n;
    if (f->gc && dec_hold(d, dict) < 0) PyObject_GC_Track(dict);
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
NOINLINE static int dec_open(dec_ctx *d, const tersa_item *it, int as_key) {
    if (UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) return -1;
    dframe *f = &d->frames[d->nframes];
    f->as_key = (uint8_t)as_key;
    f->keys = as_key ? 3 : 0;
    f->gc = f->deep = 0;
    f->height = 1;
    f->i = 0;
    f->obj = NULL;
    f->claim = 0;
    if (it->type == TERSA_ARRAY) {
        size_t n = it->v.array.count, room = n < PRESIZE_MAX ? n : PRESIZE_MAX;
        if (room * sizeof(PyObject *) > d->ahead) room = 0; /* grow with the items read */
        f->n = n;
        f->claim = room * sizeof(PyObject *);
        if (n == room && !as_key) {
            f->kind = DF_LIST;
            f->obj = PyList_New((Py_ssize_t)n);
        } else {
            f->kind = DF_LIST_LONG;
            f->obj = list_with_room(room ? room : 1);
        }
        if (f->obj && !as_key) dec_untrack(d, f->obj); /* (a key's list becomes a tuple) */
    } else if (it->type == TERSA_MAP) {
        int collide;
        PyObject *tmpl;
        Py_ssize_t off = shape_keys(d, it, &collide, &tmpl);
        if (UNLIKELY(off < 0)) return -1;
        f->n = it->v.map.count;
        f->u.off = (size_t)off;
        if (UNLIKELY(as_key || collide)) {
            f->kind = DF_PAIRS;
            f->obj = PyList_New(0);
        }
#if TERSA_DICT_INTERNALS
        else if (LIKELY(tmpl != NULL) && d->shapes[it->v.map.shape].tmpl_size <= d->ahead) {
            f->kind = DF_TMPL;
            f->claim = d->shapes[it->v.map.shape].tmpl_size;
            f->u.keys = tmpl_copy(tmpl, f->claim);
            if (!f->u.keys) return -1;
            d->ahead -= f->claim;
            d->nframes++;
            return 0;
        }
#endif
        else {
            /* (a table for n keys: about 48 bytes a key) */
            size_t room = f->n < PRESIZE_MAX ? f->n : PRESIZE_MAX;
            if (room * 48 > d->ahead) room = 0;
            f->kind = DF_DICT;
            f->claim = room * 48;
            f->obj = _PyDict_NewPresized((Py_ssize_t)room);
        }
    } else {
        f->kind = DF_GENERIC;
        f->keys = as_key ? 3 : 1; /* its keys always */
        f->n = 2 * it->v.map.count;
        f->obj = PyList_New(0);
    }
    if (UNLIKELY(!f->obj)) return -1;
    d->ahead -= f->claim;
    d->nframes++;
    return 0;
}

#if TERSA_DICT_INTERNALS
/* A map of a shape this buffer has used before, whose template serves (not
 * part of a key): the commonest container, pushed without a call. */
ALWAYS_INLINE dframe *dec_open_tmpl(dec_ctx *d, const sh_ent *sh, size_t n) {
    if (UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) return NULL;
    dframe *f = &d->frames[d->nframes];
    f->kind = DF_TMPL;
    f->as_key = f->keys = f->gc = 0;
    f->height = 1;
    f->i = 0;
    f->n = n;
    f->obj = NULL;
    f->claim = sh->tmpl_size;
    f->u.keys = tmpl_copy(sh->tmpl, sh->tmpl_size);
    if (UNLIKELY(!f->u.keys)) return NULL;
    d->ahead -= f->claim;
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
    f->claim = n * sizeof(PyObject *);
    f->obj = PyList_New((Py_ssize_t)n);
    if (UNLIKELY(!f->obj)) return NULL;
    dec_untrack(d, f->obj);
    d->ahead -= f->claim;
    d->nframes++;
    return f;
}

#include "decode_generic.c"

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
#if TERSA_DICT_INTERNALS
    case DF_TMPL:
        return tmpl_dict(d, f);
#endif
    case DF_DICT:
        if (gc_is_tracked(obj)) dec_untrack(d, obj);
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
    default: { /* DF_GENERIC: a dict, or a tersa.Map when it is a key or a dict cannot hold it */
        PyObject *const *items = ((PyListObject *)obj)->ob_item;
        size_t npairs = f->n / 2;
        r = NULL;
        if (!f->as_key && !f->deep && (r = dict_of_items(d, items, npairs)) && gc_is_tracked(r))
            dec_untrack(d, r);
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
#if TERSA_DICT_INTERNALS
        if (f->kind == DF_TMPL) {
            tmpl_free(f);
            continue;
        }
#endif
        Py_DECREF(f->obj);
    }
}

/* The array item `it` of a frame that is not part of a key, when it is a
 * list of at most PRESIZE_MAX scalars (coordinates, tags, rows of numbers):
 * read here without a frame, and returned (new reference). DEC_OPEN for a
 * longer array (nothing done), or when the list has a container item: then
 * the list has the frame it would have had, with that item (now in *it) in
 * progress. NULL on error. */
NOINLINE static PyObject *dec_leaf(dec_ctx *d, tersa_item *it) {
    size_t n = it->v.array.count;
    if (n > PRESIZE_MAX || n * sizeof(PyObject *) > d->ahead) return DEC_OPEN;
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (UNLIKELY(!list)) return NULL;
    dec_untrack(d, list);
    PyObject **items = ((PyListObject *)list)->ob_item;
    for (size_t j = 0; j < n; j++) {
        if (UNLIKELY(!tersa_read(d->r, it))) {
            Py_DECREF(list);
            return dec_fail(d);
        }
        PyObject *v = dec_scalar(d, it);
        if (v == DEC_OPEN) {
            if (UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) {
                Py_DECREF(list);
                return NULL;
            }
            dframe *f = &d->frames[d->nframes++];
            f->kind = DF_LIST;
            f->as_key = f->keys = 0;
            f->i = j;
            f->n = n;
            f->claim = n * sizeof(PyObject *);
            f->obj = list;
            d->ahead -= f->claim;
            return DEC_OPEN;
        }
        if (UNLIKELY(!v)) {
            Py_DECREF(list);
            return NULL;
        }
        items[j] = v;
    }
    return list;
}

/* Read one whole value (new reference), or NULL with the exception set.
 * Each turn runs the item loop of the innermost frame f: first it stores
 * `v`, a container just finished (NULL after a push), then reads items,
 * building the scalars inline, until a container item (pushed, and its loop
 * entered) or the frame's end (closed, and its parent's loop resumed). The
 * commonest containers, short lists and maps of a shape seen before, are
 * pushed inline. */
static PyObject *dec_value_run(dec_ctx *d) {
    tersa_item it;
    PyObject *v;
    dframe *f;
    size_t i, n;
    int r, was_key;
    uint32_t height;
    if (UNLIKELY(!tersa_read(d->r, &it))) return dec_fail(d);
    v = dec_scalar(d, &it);
    if (v != DEC_OPEN) return v;
    f = NULL;
    i = 0;
open: /* `it` is a container item, item i of frame f (NULL: the top level) */
    r = item_is_key(f, i);
open_known: /* r: whether it is part of a key */
    if (LIKELY(!r)) {
        if (it.type == TERSA_MAP) {
#if TERSA_DICT_INTERNALS
            uint32_t si = it.v.map.shape;
            if (si < d->shapes_cap && d->shapes[si].tmpl && d->shapes[si].tmpl_size <= d->ahead) {
                f = dec_open_tmpl(d, &d->shapes[si], it.v.map.count);
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
        } else if (it.type == TERSA_ARRAY && it.v.array.count <= PRESIZE_MAX &&
                   it.v.array.count * sizeof(PyObject *) <= d->ahead) {
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
#if TERSA_DICT_INTERNALS
    case DF_TMPL:
        goto tmpl_items;
#endif
    case DF_LIST_LONG:
        if (v) {
            if (UNLIKELY(list_long_store(f, i, v) < 0)) goto fail_at;
            i++;
        }
        for (; i < n; i++) {
            if (UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
            v = dec_scalar(d, &it);
            if (v == DEC_OPEN) {
                if (f->as_key) goto open_at;
                if (it.type != TERSA_ARRAY) goto open_at_plain;
                f->i = i;
                v = dec_leaf(d, &it);
                if (v == DEC_OPEN) goto open_top;
                if (UNLIKELY(!v)) goto fail;
            }
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
            if (UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
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
            if (UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
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
        if (UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
        v = dec_scalar(d, &it);
        if (v == DEC_OPEN) {
            if (it.type != TERSA_ARRAY) goto open_at_plain;
            f->i = i;
            v = dec_leaf(d, &it);
            if (v == DEC_OPEN) goto open_top;
            if (UNLIKELY(!v)) goto fail;
        }
        if (UNLIKELY(!v)) goto fail_at;
        items[i] = v;
    }
    f->i = i;
    v = f->obj;
    goto closed;
}
#if TERSA_DICT_INTERNALS
tmpl_items: {
    tersa_dict_uentry *ep = TERSA_DK_ENTRIES((tersa_dict_keys *)f->u.keys);
    int gc = f->gc;
    if (v) gc |= tmpl_store(ep, i++, v);
    for (; i < n; i++) {
        if (UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
        v = dec_scalar(d, &it);
        if (v == DEC_OPEN) {
            f->gc = (uint8_t)gc;
            if (it.type != TERSA_ARRAY) goto open_at_plain;
            f->i = i;
            v = dec_leaf(d, &it);
            if (v == DEC_OPEN) goto open_top;
            if (UNLIKELY(!v)) goto fail;
        }
        if (UNLIKELY(!v)) goto fail_at;
        gc |= tmpl_store(ep, i, v);
    }
    f->i = i;
    f->gc = (uint8_t)gc;
    v = tmpl_dict(d, f);
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
    d->ahead += f->claim;
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
open_top: /* `it`: the next item of the innermost frame, which is not part of a key */
    f = &d->frames[d->nframes - 1];
    i = f->i;
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

static PyObject *dec_value(dec_ctx *d) {
    d->floats = 0;
    d->defer_gc = d->ahead > AHEAD(GC_DEFER_MIN_BYTES); /* (ahead is AHEAD of the input's length here) */
    PyObject *v = dec_value_run(d);
    if (d->nuntracked) dec_track_all(d);
    return v;
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
static PyObject *names_loads_stream[4]; /* names_loads and "join" */

typedef struct {
    uint32_t opt;
    uint32_t max_depth;
    dict_list dicts;
} dec_args;

/* `join`: NULL where the function has no join argument, else where its value goes (NULL if not given). */
static int parse_dec_args(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          dec_args *a, PyObject **join) {
    PyObject *kw[4] = {NULL, NULL, NULL, NULL};
    a->opt = 0;
    a->max_depth = TERSA_DEFAULT_MAX_DEPTH;
    a->dicts.ptr = a->dicts.items;
    a->dicts.n = 0;
    a->dicts.seq = NULL;
    if (kwnames && parse_kwargs(fname, kwnames, args + nargs, join ? names_loads_stream : names_loads, kw, join ? 4 : 3) < 0)
        return -1;
    if (join) *join = kw[3];
    if (kw[0] && parse_option(kw[0], &a->opt) < 0) return -1;
    if (kw[2] && parse_max_depth(kw[2], &a->max_depth) < 0) return -1;
    if (kw[1] && dict_list_init(&a->dicts, kw[1]) < 0) return -1;
    return 0;
}

static PyObject *tersa_loads(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "loads() takes exactly 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    dec_args a;
    if (stack_guard("loads") < 0 || parse_dec_args("loads", args, nargs, kwnames, &a, NULL) < 0) return NULL;
    input_bytes in;
    if (input_get(args[0], &in) < 0) {
        dict_list_free(&a.dicts);
        return NULL;
    }
    PyObject *result = NULL;
    dec_ctx *d = dec_acquire();
    if (d) {
        d->opt = a.opt;
        d->ahead = AHEAD(in.len);
        if (a.max_depth != TERSA_DEFAULT_MAX_DEPTH) tersa_reader_set_max_depth(d->r, a.max_depth);
        if (!tersa_reader_start(d->r, in.ptr, in.len, a.dicts.ptr, a.dicts.n, 0)) {
            dec_fail(d);
        } else {
            result = dec_value(d);
            if (result && !tersa_reader_finish(d->r)) {
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
