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

/* Across calls: the key objects and template of recently seen shapes, by
 * their key bytes (the core's shape cache, objcache.h; it holds a reference
 * to each). One per process, used under the GIL. Its kind: the option that
 * changes the key objects made from the same bytes. */
static tersa_shapecache g_shapecache;

/* The template of shape sh, made by the core's rule (objcache.h: at its
 * second map in this call, or at its first in a call the cache across calls
 * counts as recurring). 0, or -1 with an exception. */
TERSA_NOINLINE static int shape_template(dec_ctx *d, tersa_shape *sh) {
    PyObject *t = make_template(d->kpool + sh->off, sh->n);
    if (!t) {
        if (PyErr_Occurred()) return -1;
        sh->flags |= TERSA_SHAPE_NO_TEMPLATE;
        return 0;
    }
    sh->tmpl = (uintptr_t)t; /* owned by the entry */
#if TERSA_DICT_INTERNALS
    sh->tmpl_size = tersa_dk_size((const tersa_dict_keys *)((PyDictObject *)t)->ma_keys);
#endif
    tersa_shapeent *c = sh->cent;
    if (c && c->born == sh->cborn && !c->tmpl) c->tmpl = (uintptr_t)Py_NewRef(t);
    return 0;
}

/* Offset in kpool of the key objects of the map item `it`; *collide set when
 * the map cannot be a dict, *tmpl to its template (borrowed) or NULL. */
static Py_ssize_t shape_keys(dec_ctx *d, const tersa_item *it, int *collide, PyObject **tmpl) {
    uint32_t si = it->v.map.shape;
    tersa_shape *sh = tersa_shapetab_get(&d->shapes, si);
    if (TERSA_LIKELY(sh != NULL)) {
        if (!sh->tmpl && !(sh->flags & (TERSA_SHAPE_COLLIDE | TERSA_SHAPE_NO_TEMPLATE)) && shape_template(d, sh) < 0)
            return -1;
        *collide = (sh->flags & TERSA_SHAPE_COLLIDE) != 0;
        *tmpl = (PyObject *)sh->tmpl;
        return (Py_ssize_t)sh->off;
    }
    *tmpl = NULL;
    size_t n = it->v.map.count;
    uint32_t kind = (d->opt & OPT_SYMBOL_AS_STR) != 0;
    tersa_shapequery q;
    tersa_shapeent *hit = tersa_shapecache_find(&g_shapecache, it, kind, &q);
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
    tersa_shapeent *cent = hit;
    if (hit) {
        for (size_t i = 0; i < n; i++) d->kpool[d->kpool_used++] = Py_NewRef((PyObject *)hit->keys[i]);
        c = (hit->flags & TERSA_SHAPE_COLLIDE) != 0;
        t = Py_XNewRef((PyObject *)hit->tmpl);
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
        /* (caching is optional: out of memory, the shape is not cached) */
        if (q.hash) {
            cent = tersa_shapecache_add(&g_shapecache, &q, kind, c ? TERSA_SHAPE_COLLIDE : 0,
                                        (const uintptr_t *)(d->kpool + off), release_handle, NULL);
            if (cent)
                for (size_t i = 0; i < n; i++) Py_INCREF((PyObject *)cent->keys[i]);
        }
    }
    *collide = c;
    if (si == TERSA_NO_INDEX) {
        /* A shape the full table did not take: used for this map only. */
        Py_XDECREF(t);
        return (Py_ssize_t)off;
    }
    sh = tersa_shapetab_set(&d->shapes, si);
    if (!sh) {
        Py_XDECREF(t);
        PyErr_NoMemory();
        return -1;
    }
    sh->off = off;
    sh->n = (uint32_t)n;
    sh->flags = c ? TERSA_SHAPE_COLLIDE : 0;
    sh->cent = cent;
    sh->cborn = cent ? cent->born : 0;
    sh->tmpl = (uintptr_t)t; /* owned by the entry */
#if TERSA_DICT_INTERNALS
    sh->tmpl_size = t ? tersa_dk_size((const tersa_dict_keys *)((PyDictObject *)t)->ma_keys) : 0;
#endif
    /* Keys met in enough calls: a shape that recurs (objcache.h). */
    if (hit && tersa_shapecache_recurs(hit) && !t && !c && shape_template(d, sh) < 0) return -1;
    *tmpl = (PyObject *)sh->tmpl;
    return (Py_ssize_t)off;
}
