/*
 * encode_shapes.c - shaped maps: opening a dict's shape through the core's
 * shape lookup (key sequences by identity -> the writer's shape indices) and
 * its hints.
 *
 * Part of _tersa.c (included by encode.c at the place of its use): not compiled alone.
 */

/* The keys as the shape lookup reads them: their identities, in place. */
#define KEY_IDS(keys) ((const tersa_ident *)(keys))

/* After the writer refused a shape: put the first key that repeats an earlier
 * one (as a string or symbol of the same text) in the error's path. */
TERSA_NOINLINE static void enc_path_to_repeated_key(enc_ctx *e, PyObject *const *keys, size_t stride, Py_ssize_t n) {
    PyObject *seen = PySet_New(NULL);
    for (Py_ssize_t i = 0; seen && i < n; i++) {
        PyObject *k = keys[stride * (size_t)i];
        PyObject *id = Py_BuildValue("(OO)", Py_TYPE(k) == SymbolType ? Py_True : Py_False, k);
        int found = id ? PySet_Contains(seen, id) : -1;
        if (found == 0) found = PySet_Add(seen, id);
        Py_XDECREF(id);
        if (found != 0) {
            if (found > 0) enc_path_push(e, k, 0);
            break;
        }
    }
    Py_XDECREF(seen);
    PyErr_Clear();
}

/* Define a new shape's map with its keys (recording a template into
 * *record if record is not NULL and the writer offers one): 0, or -2 on
 * error. */
TERSA_INLINE int enc_map_define(enc_ctx *e, PyObject *const *keys, size_t stride, Py_ssize_t n, int checked,
                                tersa_mapdef **record) {
    tersa_key local[32];
    tersa_key *pk = n <= 32 ? local : PyMem_Malloc((size_t)n * sizeof(tersa_key));
    if (!pk) {
        PyErr_NoMemory();
        return -2;
    }
    const PyTypeObject *symbol_type = SymbolType;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = keys[stride * (size_t)i];
        if (TERSA_LIKELY(str_compact_ascii(k))) {
            pk[i].ptr = (const char *)(((PyASCIIObject *)k) + 1);
            pk[i].len = (size_t)PyUnicode_GET_LENGTH(k);
        } else if (TERSA_UNLIKELY(!(pk[i].ptr = str_utf8_other(k, &pk[i].len)))) {
            if (pk != local) PyMem_Free(pk);
            enc_fail(e, "str is not valid Unicode (it contains a surrogate)");
            enc_path_push(e, k, 0);
            return -2;
        }
        pk[i].symbol = Py_TYPE(k) == symbol_type;
    }
    bool ok = record ? tersa_write_map_begin_record(e->w, pk, (size_t)n, checked != 0, record)
              : checked ? tersa_write_map_begin(e->w, pk, (size_t)n)
                        : tersa_write_map_begin_utf8(e->w, pk, (size_t)n);
    if (pk != local) PyMem_Free(pk);
    if (TERSA_UNLIKELY(!ok)) {
        enc_writer_fail(e);
        if (tersa_writer_error(e->w)->code == TERSA_ERR_UNREPRESENTABLE) enc_path_to_repeated_key(e, keys, stride, n);
        return -2;
    }
    return 0;
}

/* After a map of keys the lookup did not hold opened: store its shape in
 * the lookup, if the lookup's policy keeps it (a shape the writer defined
 * may be left out; one it found is a repeat, always stored). The top-level
 * map of a buffer of one value (depth 1: its own frame) is not stored: in a
 * buffer of one message it is the only map, and its shape rarely comes
 * again deeper in a larger one. A stream's frames repeat their top-level
 * shapes, so theirs are. Returns as enc_map_open_slow. */
TERSA_INLINE Py_ssize_t enc_map_store(enc_ctx *e, uint64_t h, PyObject *const *keys, size_t stride, Py_ssize_t n) {
    if (e->depth == 1 && e->single) return -1;
    uint32_t shape = tersa_writer_last_defined_shape(e->w);
    if (TERSA_LIKELY(shape != TERSA_NO_INDEX)) {
        if (!tersa_shapes_keep_new(&e->shapes)) return -1;
        return tersa_shapes_add(&e->shapes, h, KEY_IDS(keys), stride, (size_t)n, shape);
    }
    shape = tersa_writer_last_shape(e->w); /* found by the writer: a repeat the lookup did not hold */
    if (shape == TERSA_NO_INDEX) return -1;
    int32_t ent = tersa_shapes_add(&e->shapes, h, KEY_IDS(keys), stride, (size_t)n, shape);
    if (ent >= 0) tersa_shapes_note_repeat(&e->shapes, ent);
    return ent;
}

/* enc_map_open_slow for the first map of keys since the shapes were
 * forgotten (a buffer's, a sync frame's), when the lookup is empty: opened by a template
 * if one applies, else defined, recording a template if the cache asks for
 * one (encode_templates.c). Apart, so that the path every new shape takes
 * stays as it was. */
TERSA_NOINLINE static Py_ssize_t enc_map_open_first(enc_ctx *e, PyObject *const *keys, size_t stride, Py_ssize_t n,
                                                    int checked) {
    e->tpl_try = 0;
    uint64_t h = tersa_shapes_hash(KEY_IDS(keys), stride, (size_t)n);
    bool record = false;
    /* The writer tells whether a template applies here (and records none
     * where it would not). */
    if (n <= ENC_TPL_KEYS) {
        int r = enc_tpl_open(&e->tpl, h, e->w, keys, stride, n, checked, &record);
        if (r < 0) return enc_writer_fail(e), -2;
        if (r > 0) return enc_map_store(e, h, keys, stride, n);
    }
    tersa_mapdef *md = NULL;
    if (enc_map_define(e, keys, stride, n, checked, record ? &md : NULL) < 0) return -2;
    if (md) enc_tpl_store(&e->tpl, h, keys, stride, n, md);
    return enc_map_store(e, h, keys, stride, n);
}

/* Open a shaped map whose keys (str or Symbol objects) are keys[0],
 * keys[stride], ... (stride 2: interleaved with the values), without
 * the hint: the lookup, else define the shape and store it. Returns the
 * lookup's entry, -1 (not stored) or -2 (error). */
TERSA_NOINLINE static Py_ssize_t enc_map_open_slow(enc_ctx *e, PyObject *const *keys, size_t stride, Py_ssize_t n,
                                                   int checked) {
    if (n == 0) {
        if (e->empty_shape != TERSA_NO_INDEX) {
            if (TERSA_UNLIKELY(!tersa_write_map_shape(e->w, e->empty_shape))) return enc_writer_fail(e), -2;
            return -1;
        }
        if (TERSA_UNLIKELY(!tersa_write_map_begin_utf8(e->w, NULL, 0))) return enc_writer_fail(e), -2;
        e->empty_shape = tersa_writer_last_shape(e->w);
        return -1;
    }
    uint64_t h = tersa_shapes_hash(KEY_IDS(keys), stride, (size_t)n);
    int32_t found = tersa_shapes_find(&e->shapes, h, KEY_IDS(keys), stride, (size_t)n);
    if (found >= 0) {
        tersa_shapes_note_repeat(&e->shapes, found);
        if (TERSA_UNLIKELY(!tersa_write_map_shape(e->w, tersa_shapes_shape(&e->shapes, found)))) return enc_writer_fail(e), -2;
        return found;
    }
    if (enc_map_define(e, keys, stride, n, checked, NULL) < 0) return -2;
    return enc_map_store(e, h, keys, stride, n);
}

/* Open a shaped map: first the hint (the dict last seen in the same place),
 * then the slow path, which refreshes the hint. Returns as enc_map_open_slow. */
TERSA_INLINE Py_ssize_t enc_map_open(enc_ctx *e, size_t at, PyObject *const *keys, size_t stride, Py_ssize_t n,
                                      int checked) {
    int32_t ent = tersa_shapes_hinted(&e->shapes, *tersa_shapes_hint(&e->shapes, at), KEY_IDS(keys), stride, (size_t)n);
    if (TERSA_LIKELY(ent >= 0)) {
        if (TERSA_UNLIKELY(!tersa_write_map_shape(e->w, tersa_shapes_shape(&e->shapes, ent)))) return enc_writer_fail(e), -2;
        return ent;
    }
    Py_ssize_t slow = TERSA_UNLIKELY(e->tpl_try) && n ? enc_map_open_first(e, keys, stride, n, checked)
                                                      : enc_map_open_slow(e, keys, stride, n, checked);
    if (slow >= 0) *tersa_shapes_hint(&e->shapes, at) = (uint32_t)slow + 1;
    return slow;
}
