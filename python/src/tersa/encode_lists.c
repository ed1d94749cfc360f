/*
 * encode_lists.c - lists of scalars written without a frame: float and str
 * lists by one core call each, runs of numbers inside other lists.
 *
 * Part of _tersa.c, included by encode.c (it uses enc_ctx, the frames and
 * enc_scalar); not compiled alone.
 */

/* Lists of up to FLOAT_LIST_MAX floats (coordinates, vectors, rows of
 * readings) are written by one tersa_write_double_array call, without the
 * writer's container frame. */
#define FLOAT_LIST_MAX 64

/* If `list` (n > 0 items, the first a float) holds floats only, write it:
 * 0, or -1 with the error pending; 1 if it holds anything else. */
TERSA_NOINLINE static int enc_float_list(enc_ctx *e, PyObject *list, Py_ssize_t n) {
    double floats[FLOAT_LIST_MAX];
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *v = PyList_GET_ITEM(list, j);
        if (Py_TYPE(v) != &PyFloat_Type) return 1;
        floats[j] = PyFloat_AS_DOUBLE(v);
    }
    return TERSA_LIKELY(tersa_write_double_array(e->w, floats, (size_t)n)) ? 0 : enc_writer_fail(e);
}

/* Lists of up to STR_LIST_MAX strs (rows of a table, tags) are written by
 * one tersa_write_string_array call, which overlaps their string-table
 * lookups. */
#define STR_LIST_MAX 64

/* If `list` (n > 0 items, the first a str) holds strs only, write it: 0, or
 * -1 with the error pending; 1 if it holds anything else or a str without
 * UTF-8 (a surrogate: the item-by-item path reports it where it is). */
TERSA_NOINLINE static int enc_str_list(enc_ctx *e, PyObject *list, Py_ssize_t n) {
    const char *ptrs[STR_LIST_MAX];
    size_t lens[STR_LIST_MAX];
    PyObject *const *items = ((PyListObject *)list)->ob_item;
    Py_ssize_t j = 0;
    /* No Python code runs in the loops: the items stay where they are.
     * Two compact ASCII strs per step, their flags tested at once; from the
     * first pair that is not, one item at a time. */
    for (; j + 1 < n; j += 2) {
        PyObject *a = items[j], *b = items[j + 1];
        if (Py_TYPE(a) != &PyUnicode_Type || Py_TYPE(b) != &PyUnicode_Type || !str_pair_compact_ascii(a, b)) break;
        ptrs[j] = (const char *)(((PyASCIIObject *)a) + 1);
        ptrs[j + 1] = (const char *)(((PyASCIIObject *)b) + 1);
        lens[j] = (size_t)PyUnicode_GET_LENGTH(a);
        lens[j + 1] = (size_t)PyUnicode_GET_LENGTH(b);
    }
    for (; j < n; j++) {
        PyObject *v = items[j];
        if (Py_TYPE(v) != &PyUnicode_Type) return 1;
        if (TERSA_LIKELY(str_compact_ascii(v))) {
            ptrs[j] = (const char *)(((PyASCIIObject *)v) + 1);
            lens[j] = (size_t)PyUnicode_GET_LENGTH(v);
        } else if (!(ptrs[j] = str_utf8_other(v, &lens[j]))) {
            return 1;
        }
    }
    return TERSA_LIKELY(tersa_write_string_array_borrowed(e->w, ptrs, lens, (size_t)n)) ? 0 : enc_writer_fail(e);
}

/* Numbers written together by tersa_write_doubles / tersa_write_ints. */
#define NUMBER_RUN_MAX 64

/* The exact int o as an int64 if it is one (|o| < 2^63, and 3 digits at
 * most below 3.12): 1, else 0. */
TERSA_INLINE int int64_of(PyObject *o, int64_t *v) {
#if PY_VERSION_HEX < 0x030C0000 && PyLong_SHIFT == 30
    Py_ssize_t size = Py_SIZE(o);
    const digit *dg = ((PyLongObject *)o)->ob_digit;
    /* Zero or one digit (|o| < 2^30: indices, counts) first, without the
     * switch's jump. */
    if (TERSA_LIKELY((size_t)(size + 1) <= 2)) {
        int64_t d = size ? (int64_t)dg[0] : 0;
        *v = size < 0 ? -d : d;
        return 1;
    }
    uint64_t a;
    switch (size < 0 ? -size : size) {
    case 2:
        a = (uint64_t)dg[0] | ((uint64_t)dg[1] << 30);
        break;
    case 3:
        if (dg[2] >= 8) return 0; /* 2^63 or more */
        a = (uint64_t)dg[0] | ((uint64_t)dg[1] << 30) | ((uint64_t)dg[2] << 60);
        break;
    default:
        return 0;
    }
    *v = size < 0 ? -(int64_t)a : (int64_t)a;
    return 1;
#else
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *v = (int64_t)x;
    return 1;
#endif
}

/* A run of floats, or of ints of 64 bits, from items[i] (one of them) of an
 * open array's n items: written by one call, at most NUMBER_RUN_MAX. The
 * count written (0: items[i] is an int beyond 64 bits), or -1 with the
 * error pending. No Python code runs meanwhile: the items stay as read. */
TERSA_NOINLINE static Py_ssize_t enc_number_run(enc_ctx *e, PyObject *const *items, Py_ssize_t i, Py_ssize_t n) {
    Py_ssize_t end = n - i > NUMBER_RUN_MAX ? i + NUMBER_RUN_MAX : n, j = i;
    if (Py_TYPE(items[i]) == &PyFloat_Type) {
        double v[NUMBER_RUN_MAX];
        for (; j < end && Py_TYPE(items[j]) == &PyFloat_Type; j++) v[j - i] = PyFloat_AS_DOUBLE(items[j]);
        return TERSA_LIKELY(tersa_write_doubles(e->w, v, (size_t)(j - i))) ? j - i : enc_writer_fail(e);
    }
    int64_t v[NUMBER_RUN_MAX];
    for (; j < end && Py_TYPE(items[j]) == &PyLong_Type && int64_of(items[j], &v[j - i]); j++) {
    }
    if (j == i) return 0;
    return TERSA_LIKELY(tersa_write_ints(e->w, v, (size_t)(j - i))) ? j - i : enc_writer_fail(e);
}

/* Is items[i] (i < n) the first of a run for enc_number_run: a float or a
 * small int (below 2^60, or 2^30 from 3.12) followed by another of its type? */
TERSA_INLINE int number_run_at(PyObject *const *items, Py_ssize_t i, Py_ssize_t n) {
    PyObject *o = items[i];
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyFloat_Type) return i + 1 < n && Py_TYPE(items[i + 1]) == t;
#if PY_VERSION_HEX < 0x030C0000
    return t == &PyLong_Type && (size_t)(Py_SIZE(o) + 2) <= 4 && i + 1 < n && Py_TYPE(items[i + 1]) == t;
#else
    return t == &PyLong_Type && PyUnstable_Long_IsCompact((PyLongObject *)o) && i + 1 < n && Py_TYPE(items[i + 1]) == t;
#endif
}

/* A list item whose own items are all inline scalars (coordinates, tags, rows
 * of numbers): written here, without a frame (0). At its first other item
 * the list gets the frame it would have had, with that item in progress,
 * and *o becomes that item (1: the caller opens it, with hint slot `at`, the
 * list's). A list at the depth limit is left to the caller (1, *o
 * unchanged). -1: an error, with the list's frame pushed if the error is in
 * one of its items. No Python code runs while the scalars are written, so
 * the list cannot change meanwhile. */
TERSA_INLINE int enc_leaf_list(enc_ctx *e, PyObject **o, size_t at) {
    PyObject *list = *o;
    if (TERSA_UNLIKELY(e->depth >= e->max_depth)) return 1;
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n && n <= FLOAT_LIST_MAX && Py_TYPE(PyList_GET_ITEM(list, 0)) == &PyFloat_Type) {
        int s = enc_float_list(e, list, n);
        if (s <= 0) return s;
    } else if (n && n <= STR_LIST_MAX && Py_TYPE(PyList_GET_ITEM(list, 0)) == &PyUnicode_Type) {
        int s = enc_str_list(e, list, n);
        if (s <= 0) return s;
    }
    if (TERSA_UNLIKELY(!tersa_write_array_begin(e->w, (size_t)n))) return enc_writer_fail(e);
    PyObject *const *items = ((PyListObject *)list)->ob_item;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *v = items[j];
        int s;
        if (number_run_at(items, j, n)) {
            Py_ssize_t r = enc_number_run(e, items, j, n);
            if (TERSA_LIKELY(r > 0)) {
                j += r - 1;
                continue;
            }
            s = r < 0 ? -1 : enc_scalar(e, v);
        } else {
            s = enc_scalar(e, v);
        }
        if (TERSA_LIKELY(s == 0)) continue;
        eframe *f = enc_push(e, list, EF_LIST);
        if (TERSA_UNLIKELY(!f)) return -1;
        f->n = n;
        f->u.at = at;
        f->i = j + 1;
        if (s < 0) return -1;
        *o = v;
        return 1;
    }
    if (TERSA_UNLIKELY(!tersa_write_array_end(e->w))) return enc_writer_fail(e);
    return 0;
}
