/*
 * decode.c - loads(): the core's reader to Python objects (streams: streams.c).
 * The item loop and its container frames are here; the context, garbage
 * collection, object constructors, caches, other scalars and generic maps
 * are in the decode_*.c files included below, in the order they use each
 * other.
 *
 * Part of _tersa.c, which includes it (one translation unit: the parts share
 * its static helpers and inline across each other); not compiled alone.
 */

/* ==========================================================================
 * Decoding
 * ========================================================================== */

#include "reader_runs.h" /* the core's runs of an array's leaves (internal) */

#include "decode_ctx.c"
#include "decode_gc.c"
#include "decode_objects.c"
#include "decode_cache.c"
#include "decode_scalars.c"

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
TERSA_INLINE PyObject *dec_scalar(dec_ctx *d, const tersa_item *it) {
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
TERSA_INLINE int list_long_store(dframe *f, size_t i, PyObject *v) {
    PyListObject *l = (PyListObject *)f->obj;
    if (TERSA_UNLIKELY((Py_ssize_t)i == l->allocated)) {
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

/* Lists of numbers (vectors, coordinates, series) take their elements from
 * the reader in runs: one call for up to SCALAR_RUN numbers, booleans and
 * nulls instead of one per element; lists that open with a string (rows of
 * a table, lists of tags: TERSA_ITEM_STRINGS) take strings in their runs
 * too (tersa_read_leaves). */
enum { SCALAR_RUN = 32 };

/* Elements i.. of a list of n: the run of leaves that comes next, stored in
 * `items` (a DF_LIST's or dec_leaf's storage), or appended to the
 * DF_LIST_LONG list of frame `f` when items is NULL. Returns the new i, or
 * SIZE_MAX with the exception set (the elements not stored stay NULL). */
TERSA_INLINE size_t dec_run(dec_ctx *d, PyObject **items, dframe *f, size_t i, size_t n, bool strings) {
    tersa_item run[SCALAR_RUN];
    size_t k;
    do {
        size_t max = n - i < SCALAR_RUN ? n - i : SCALAR_RUN;
        if (TERSA_UNLIKELY(!(strings ? tersa_read_leaves(d->r, run, max, &k) : tersa_read_scalars(d->r, run, max, &k)))) {
            dec_fail(d);
            return SIZE_MAX;
        }
        for (size_t j = 0; j < k; j++) {
            PyObject *v = dec_scalar(d, &run[j]);
            if (TERSA_UNLIKELY(!v)) return SIZE_MAX;
            if (items)
                items[i] = v;
            else if (TERSA_UNLIKELY(list_long_store(f, i, v) < 0))
                return SIZE_MAX;
            i++;
        }
    } while (k == SCALAR_RUN && i < n);
    return i;
}

/* Out of line, so that the runs of numbers compile as before. */
TERSA_NOINLINE static size_t dec_string_run(dec_ctx *d, PyObject **items, dframe *f, size_t i, size_t n) {
    return dec_run(d, items, f, i, n, true);
}

/* The run of an array just opened with flags `flags` (TERSA_ITEM_SCALARS or
 * TERSA_ITEM_STRINGS, tested by the caller). */
TERSA_INLINE size_t dec_first_run(dec_ctx *d, uint32_t flags, PyObject **items, dframe *f, size_t n) {
    if (TERSA_LIKELY(flags & TERSA_ITEM_SCALARS)) return dec_run(d, items, f, 0, n, false);
    return dec_string_run(d, items, f, 0, n);
}

#define RUN_FLAGS (TERSA_ITEM_SCALARS | TERSA_ITEM_STRINGS)

TERSA_INLINE int dict_store(dec_ctx *d, dframe *f, size_t i, PyObject *v) {
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
TERSA_INLINE int tmpl_store(tersa_dict_uentry *ep, size_t i, PyObject *v) {
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

TERSA_INLINE PyObject *tmpl_dict(dec_ctx *d, dframe *f) {
    PyObject *dict = PyDict_New();
    if (TERSA_UNLIKELY(!dict)) {
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

TERSA_NOINLINE static int dec_grow_frames(dec_ctx *d) {
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
TERSA_INLINE int item_is_key(const dframe *p, size_t i) { return p && ((p->keys >> (i & 1)) & 1); }

/* Push the frame of container item `it` (empty ones too: closing builds the
 * object), with `as_key` if it is part of a map key (a generic map's key, or
 * inside one). Short arrays are pushed inline by dec_value. */
TERSA_NOINLINE static int dec_open(dec_ctx *d, const tersa_item *it, int as_key) {
    if (TERSA_UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) return -1;
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
        if (TERSA_UNLIKELY(off < 0)) return -1;
        f->n = it->v.map.count;
        f->u.off = (size_t)off;
        if (TERSA_UNLIKELY(as_key || collide)) {
            f->kind = DF_PAIRS;
            f->obj = PyList_New(0);
        }
#if TERSA_DICT_INTERNALS
        else if (TERSA_LIKELY(tmpl != NULL) && d->shapes.v[it->v.map.shape].tmpl_size <= d->ahead) {
            f->kind = DF_TMPL;
            f->claim = d->shapes.v[it->v.map.shape].tmpl_size;
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
    if (TERSA_UNLIKELY(!f->obj)) return -1;
    d->ahead -= f->claim;
    d->nframes++;
    return 0;
}

#if TERSA_DICT_INTERNALS
/* A map of a shape this buffer has used before, whose template serves (not
 * part of a key): the commonest container, pushed without a call. */
TERSA_INLINE dframe *dec_open_tmpl(dec_ctx *d, const tersa_shape *sh, size_t n) {
    if (TERSA_UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) return NULL;
    dframe *f = &d->frames[d->nframes];
    f->kind = DF_TMPL;
    f->as_key = f->keys = f->gc = 0;
    f->height = 1;
    f->i = 0;
    f->n = n;
    f->obj = NULL;
    f->claim = sh->tmpl_size;
    f->u.keys = tmpl_copy((PyObject *)sh->tmpl, sh->tmpl_size);
    if (TERSA_UNLIKELY(!f->u.keys)) return NULL;
    d->ahead -= f->claim;
    d->nframes++;
    return f;
}
#endif

/* A list of n <= PRESIZE_MAX elements, not part of a key: pushed without a
 * call. */
TERSA_INLINE dframe *dec_open_list(dec_ctx *d, size_t n) {
    if (TERSA_UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) return NULL;
    dframe *f = &d->frames[d->nframes];
    f->kind = DF_LIST;
    f->as_key = f->keys = 0;
    f->i = 0;
    f->n = n;
    f->claim = n * sizeof(PyObject *);
    f->obj = PyList_New((Py_ssize_t)n);
    if (TERSA_UNLIKELY(!f->obj)) return NULL;
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
        if (TERSA_LIKELY(!f->as_key)) return obj;
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
TERSA_NOINLINE static void dec_unwind(dec_ctx *d) {
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
TERSA_NOINLINE static PyObject *dec_leaf(dec_ctx *d, tersa_item *it) {
    size_t n = it->v.array.count;
    if (n > PRESIZE_MAX || n * sizeof(PyObject *) > d->ahead) return DEC_OPEN;
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (TERSA_UNLIKELY(!list)) return NULL;
    dec_untrack(d, list);
    PyObject **items = ((PyListObject *)list)->ob_item;
    size_t j = it->flags & TERSA_ITEM_SCALARS   ? dec_run(d, items, NULL, 0, n, false)
               : it->flags & TERSA_ITEM_STRINGS ? dec_string_run(d, items, NULL, 0, n)
                                                : 0;
    if (TERSA_UNLIKELY(j == SIZE_MAX)) {
        Py_DECREF(list);
        return NULL;
    }
    for (; j < n; j++) {
        if (TERSA_UNLIKELY(!tersa_read(d->r, it))) {
            Py_DECREF(list);
            return dec_fail(d);
        }
        PyObject *v = dec_scalar(d, it);
        if (v == DEC_OPEN) {
            if (TERSA_UNLIKELY(d->nframes == d->frames_cap) && dec_grow_frames(d) < 0) {
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
        if (TERSA_UNLIKELY(!v)) {
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
    if (TERSA_UNLIKELY(!tersa_read(d->r, &it))) return dec_fail(d);
    v = dec_scalar(d, &it);
    if (v != DEC_OPEN) return v;
    f = NULL;
    i = 0;
open: /* `it` is a container item, item i of frame f (NULL: the top level) */
    r = item_is_key(f, i);
open_known: /* r: whether it is part of a key */
    if (TERSA_LIKELY(!r)) {
        if (it.type == TERSA_MAP) {
#if TERSA_DICT_INTERNALS
            const tersa_shape *sh = tersa_shapetab_get(&d->shapes, it.v.map.shape);
            if (sh && sh->tmpl && sh->tmpl_size <= d->ahead) {
                f = dec_open_tmpl(d, sh, it.v.map.count);
                if (TERSA_UNLIKELY(!f)) goto fail;
                i = 0;
                n = f->n;
                v = NULL;
                goto tmpl_items;
            }
#endif
            if (it.v.map.count == 0) {
                /* No frame: the next item of its parent. */
                v = PyDict_New();
                if (TERSA_UNLIKELY(!v)) goto fail;
                if (!f) return v;
                goto resume;
            }
        } else if (it.type == TERSA_ARRAY && it.v.array.count <= PRESIZE_MAX &&
                   it.v.array.count * sizeof(PyObject *) <= d->ahead) {
            f = dec_open_list(d, it.v.array.count);
            if (TERSA_UNLIKELY(!f)) goto fail;
            i = 0;
            n = f->n;
            v = NULL;
            goto list_items;
        }
    }
    if (TERSA_UNLIKELY(dec_open(d, &it, r) < 0)) goto fail;
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
            if (TERSA_UNLIKELY(list_long_store(f, i, v) < 0)) goto fail_at;
            i++;
        } else if (i == 0 && (it.flags & RUN_FLAGS) && !f->as_key) {
            /* `it` is the array just opened */
            i = dec_first_run(d, it.flags, NULL, f, f->n);
            if (TERSA_UNLIKELY(i == SIZE_MAX)) {
                i = 0;
                goto fail;
            }
        }
        for (; i < n; i++) {
            if (TERSA_UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
            v = dec_scalar(d, &it);
            if (v == DEC_OPEN) {
                if (f->as_key) goto open_at;
                if (it.type != TERSA_ARRAY) goto open_at_plain;
                f->i = i;
                v = dec_leaf(d, &it);
                if (v == DEC_OPEN) goto open_top;
                if (TERSA_UNLIKELY(!v)) goto fail;
            }
            if (TERSA_UNLIKELY(!v)) goto fail_at;
            if (TERSA_UNLIKELY(list_long_store(f, i, v) < 0)) goto fail_at;
        }
        goto complete;
    case DF_DICT:
        if (v) {
            if (TERSA_UNLIKELY(dict_store(d, f, i, v) < 0)) goto fail_at;
            i++;
        }
        for (; i < n; i++) {
            if (TERSA_UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
            v = dec_scalar(d, &it);
            if (v == DEC_OPEN) goto open_at;
            if (TERSA_UNLIKELY(!v)) goto fail_at;
            if (TERSA_UNLIKELY(dict_store(d, f, i, v) < 0)) goto fail_at;
        }
        goto complete;
    default: /* DF_PAIRS, DF_GENERIC */
        if (v) {
            r = PyList_Append(f->obj, v);
            Py_DECREF(v);
            if (TERSA_UNLIKELY(r < 0)) goto fail_at;
            i++;
        }
        for (; i < n; i++) {
            if (TERSA_UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
            v = dec_scalar(d, &it);
            if (v == DEC_OPEN) goto open_at;
            if (TERSA_UNLIKELY(!v)) goto fail_at;
            r = PyList_Append(f->obj, v);
            Py_DECREF(v);
            if (TERSA_UNLIKELY(r < 0)) goto fail_at;
        }
        goto complete;
    }
list_items: {
    PyObject **items = ((PyListObject *)f->obj)->ob_item;
    if (v) {
        items[i++] = v;
    } else if (i == 0 && (it.flags & RUN_FLAGS)) { /* `it` is the array just opened */
        i = dec_first_run(d, it.flags, items, NULL, n);
        if (TERSA_UNLIKELY(i == SIZE_MAX)) {
            i = 0;
            goto fail;
        }
    }
    for (; i < n; i++) {
        if (TERSA_UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
        v = dec_scalar(d, &it);
        if (v == DEC_OPEN) {
            if (it.type != TERSA_ARRAY) goto open_at_plain;
            f->i = i;
            v = dec_leaf(d, &it);
            if (v == DEC_OPEN) goto open_top;
            if (TERSA_UNLIKELY(!v)) goto fail;
        }
        if (TERSA_UNLIKELY(!v)) goto fail_at;
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
        if (TERSA_UNLIKELY(!tersa_read(d->r, &it))) goto fail_read;
        v = dec_scalar(d, &it);
        if (v == DEC_OPEN) {
            f->gc = (uint8_t)gc;
            if (it.type != TERSA_ARRAY) goto open_at_plain;
            f->i = i;
            v = dec_leaf(d, &it);
            if (v == DEC_OPEN) goto open_top;
            if (TERSA_UNLIKELY(!v)) goto fail;
        }
        if (TERSA_UNLIKELY(!v)) goto fail_at;
        gc |= tmpl_store(ep, i, v);
    }
    f->i = i;
    f->gc = (uint8_t)gc;
    v = tmpl_dict(d, f);
    if (TERSA_UNLIKELY(!v)) {
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
    if (TERSA_UNLIKELY(!v)) {
        d->nframes--;
        goto fail;
    }
    if (TERSA_UNLIKELY(was_key) && d->nframes > 1) {
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
    if (stack_guard("loads") < 0) return NULL;
    if (TERSA_LIKELY(!kwnames)) {
        /* loads(data), the common call: no keyword to parse */
        a.opt = 0;
        a.max_depth = TERSA_DEFAULT_MAX_DEPTH;
        a.dicts.ptr = a.dicts.items;
        a.dicts.n = 0;
        a.dicts.seq = NULL;
    } else if (parse_dec_args("loads", args, nargs, kwnames, &a, NULL) < 0) {
        return NULL;
    }
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
