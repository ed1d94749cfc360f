/*
 * encode_shapes.c - shaped maps: the shape cache (key sequences by identity ->
 * the writer's shape indices) and its hints.
 *
 * Part of _tersa.c (included by encode.c at the place of its use): not compiled alone.
 */

TERSA_INLINE uint64_t id_hash(PyObject *const *keys, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uintptr_t)keys[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return h;
}

static int sc_grow(enc_ctx *e) {
    size_t cap = e->sc_cap ? e->sc_cap * 2 : 64;
    uint32_t *t = PyMem_Calloc(cap, sizeof(uint32_t));
    if (!t) return -1;
    for (size_t i = 0; i < e->nents; i++) {
        size_t j = (size_t)e->ents[i].hash & (cap - 1);
        while (t[j]) j = (j + 1) & (cap - 1);
        t[j] = (uint32_t)i + 1;
    }
    PyMem_Free(e->sc_index);
    e->sc_index = t;
    e->sc_cap = cap;
    return 0;
}

/* Remember that `keys` (by identity) is shape `shape`; returns the entry or
 * -1 if it could not be cached (caching is optional). */
static Py_ssize_t sc_insert(enc_ctx *e, uint64_t h, PyObject *const *keys, Py_ssize_t n, uint32_t shape) {
    if (e->nents >= 65536) return -1;
    if ((e->nents + 1) * 2 > e->sc_cap && sc_grow(e) < 0) return -1;
    if (e->nents == e->ents_cap) {
        size_t cap = e->ents_cap ? e->ents_cap * 2 : 64;
        sc_ent *p = PyMem_Realloc(e->ents, cap * sizeof(sc_ent));
        if (!p) return -1;
        e->ents = p;
        e->ents_cap = cap;
    }
    if (e->pool_used + (size_t)n > e->pool_cap) {
        size_t cap = e->pool_cap ? e->pool_cap : 256;
        while (cap < e->pool_used + (size_t)n) cap *= 2;
        PyObject **p = PyMem_Realloc(e->pool, cap * sizeof(PyObject *));
        if (!p) return -1;
        e->pool = p;
        uint32_t *q = PyMem_Realloc(e->hints, cap * sizeof(uint32_t));
        if (!q) return -1; /* (pool_cap unchanged: the larger pool is simply not used yet) */
        e->hints = q;
        e->pool_cap = cap;
    }
    size_t off = e->pool_used;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(keys[i]);
        e->pool[off + (size_t)i] = keys[i];
        e->hints[off + (size_t)i] = 0;
    }
    e->pool_used += (size_t)n;
    size_t idx = e->nents++;
    e->ents[idx].hash = h;
    e->ents[idx].off = off;
    e->ents[idx].n = (uint32_t)n;
    e->ents[idx].shape = shape;
    size_t mask = e->sc_cap - 1, j = (size_t)h & mask;
    while (e->sc_index[j]) j = (j + 1) & mask;
    e->sc_index[j] = (uint32_t)idx + 1;
    return (Py_ssize_t)idx;
}

TERSA_INLINE uint32_t *hint_slot(enc_ctx *e, size_t at) {
    if (at == HINT_ROOT) return &e->hint_root;
    if (at == HINT_NONE) return &e->hint_scratch;
    return &e->hints[at - 1];
}

TERSA_INLINE int keys_same(PyObject *const *a, PyObject *const *b, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i == n;
}

/* After the writer refused a shape: put the first key that repeats an earlier
 * one (as a string or symbol of the same text) in the error's path. */
TERSA_NOINLINE static void enc_path_to_repeated_key(enc_ctx *e, PyObject *const *keys, Py_ssize_t n) {
    PyObject *seen = PySet_New(NULL);
    for (Py_ssize_t i = 0; seen && i < n; i++) {
        PyObject *id = Py_BuildValue("(OO)", Py_TYPE(keys[i]) == SymbolType ? Py_True : Py_False, keys[i]);
        int found = id ? PySet_Contains(seen, id) : -1;
        if (found == 0) found = PySet_Add(seen, id);
        Py_XDECREF(id);
        if (found != 0) {
            if (found > 0) enc_path_push(e, keys[i], 0);
            break;
        }
    }
    Py_XDECREF(seen);
    PyErr_Clear();
}

/* Open a shaped map whose keys (str or Symbol objects) are `keys`, without
 * the hint: hash lookup, else define the shape and cache it. Returns the cache
 * entry, -1 (not cached) or -2 (error). */
TERSA_NOINLINE static Py_ssize_t enc_map_open_slow(enc_ctx *e, PyObject *const *keys, Py_ssize_t n, int checked) {
    if (n == 0) {
        if (e->empty_shape != TERSA_NO_INDEX) {
            if (TERSA_UNLIKELY(!tersa_write_map_shape(e->w, e->empty_shape))) return enc_writer_fail(e), -2;
            return -1;
        }
        if (TERSA_UNLIKELY(!tersa_write_map_begin_utf8(e->w, NULL, 0))) return enc_writer_fail(e), -2;
        e->empty_shape = tersa_writer_last_shape(e->w);
        return -1;
    }
    uint64_t h = id_hash(keys, n);
    if (e->sc_cap) {
        size_t mask = e->sc_cap - 1, j = (size_t)h & mask;
        for (uint32_t pos; (pos = e->sc_index[j]) != 0; j = (j + 1) & mask) {
            const sc_ent *s = &e->ents[pos - 1];
            if (s->hash == h && s->n == (uint32_t)n && keys_same(e->pool + s->off, keys, n)) {
                if (TERSA_UNLIKELY(!tersa_write_map_shape(e->w, s->shape))) return enc_writer_fail(e), -2;
                return (Py_ssize_t)pos - 1;
            }
        }
    }
    tersa_key local[32];
    tersa_key *pk = n <= 32 ? local : PyMem_Malloc((size_t)n * sizeof(tersa_key));
    if (!pk) {
        PyErr_NoMemory();
        return -2;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = keys[i];
        Py_ssize_t len;
        const char *p = str_utf8(k, &len);
        if (TERSA_UNLIKELY(!p)) {
            PyErr_Clear();
            if (pk != local) PyMem_Free(pk);
            enc_fail(e, "str is not valid Unicode (it contains a surrogate)");
            enc_path_push(e, k, 0);
            return -2;
        }
        pk[i].ptr = p;
        pk[i].len = (size_t)len;
        pk[i].symbol = Py_TYPE(k) == SymbolType;
    }
    bool ok = checked ? tersa_write_map_begin(e->w, pk, (size_t)n) : tersa_write_map_begin_utf8(e->w, pk, (size_t)n);
    if (pk != local) PyMem_Free(pk);
    if (TERSA_UNLIKELY(!ok)) {
        enc_writer_fail(e);
        if (tersa_writer_error(e->w)->code == TERSA_ERR_UNREPRESENTABLE) enc_path_to_repeated_key(e, keys, n);
        return -2;
    }
    uint32_t shape = tersa_writer_last_shape(e->w);
    return shape != TERSA_NO_INDEX ? sc_insert(e, h, keys, n, shape) : -1;
}

/* Open a shaped map: first the hint (the dict last seen in the same place),
 * then the slow path, which refreshes the hint. Returns as enc_map_open_slow. */
TERSA_INLINE Py_ssize_t enc_map_open(enc_ctx *e, size_t at, PyObject *const *keys, Py_ssize_t n, int checked) {
    uint32_t hint = *hint_slot(e, at);
    if (TERSA_LIKELY(hint != 0 && hint <= e->nents)) {
        const sc_ent *s = &e->ents[hint - 1];
        if (s->n == (uint32_t)n && keys_same(e->pool + s->off, keys, n)) {
            if (TERSA_UNLIKELY(!tersa_write_map_shape(e->w, s->shape))) return enc_writer_fail(e), -2;
            return (Py_ssize_t)hint - 1;
        }
    }
    Py_ssize_t ent = enc_map_open_slow(e, keys, n, checked);
    if (ent >= 0) *hint_slot(e, at) = (uint32_t)ent + 1;
    return ent;
}
