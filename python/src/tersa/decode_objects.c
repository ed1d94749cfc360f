/*
 * decode_objects.c - str, float and int objects made directly, without the
 * generic constructors' calls and checks where the layout is known.
 *
 * Part of _tersa.c (included by decode.c at the place of its use): not compiled alone.
 */

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
/* A compact ASCII str, initialised as PyUnicode_New(n, 127) does, minus its
 * generic size and kind checks (3.11 layout). */
TERSA_INLINE PyObject *new_ascii(const char *p, size_t n) {
    PyASCIIObject *o = (PyASCIIObject *)PyObject_Malloc(sizeof(PyASCIIObject) + n + 1);
    if (TERSA_UNLIKELY(!o)) return PyErr_NoMemory();
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
TERSA_INLINE PyObject *new_ascii(const char *p, size_t n) {
    PyObject *s = PyUnicode_New((Py_ssize_t)n, 127);
    if (TERSA_LIKELY(s != NULL)) memcpy(PyUnicode_1BYTE_DATA(s), p, n);
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
TERSA_INLINE PyObject *new_float(double v) {
    PyFloatObject *o = (PyFloatObject *)PyObject_Malloc(sizeof(PyFloatObject));
    if (TERSA_UNLIKELY(!o)) return PyErr_NoMemory();
    Py_SET_TYPE(o, &PyFloat_Type);
    Py_SET_REFCNT(o, 1);
    o->ob_fval = v;
    return (PyObject *)o;
}

TERSA_INLINE PyObject *new_int(int64_t v) {
    if ((uint64_t)v + 5 <= 261) return PyLong_FromLong((long)v); /* the shared small ints */
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    /* The digit count without branches (integers of mixed sizes would
     * mispredict them). Room for two digits at least: obmalloc rounds the
     * one-digit size (28 bytes) up to the same 32, and the second digit is
     * then stored unconditionally (beyond ob_size, it is never read). */
    size_t top = (a >> 60) != 0;
    Py_ssize_t nd = 1 + (Py_ssize_t)((a >> 30) != 0) + (Py_ssize_t)top;
    PyLongObject *o = (PyLongObject *)PyObject_Malloc(offsetof(PyLongObject, ob_digit) + (2 + top) * sizeof(digit));
    if (TERSA_UNLIKELY(!o)) return PyErr_NoMemory();
    Py_SET_TYPE(o, &PyLong_Type);
    Py_SET_REFCNT(o, 1);
    Py_SET_SIZE(o, v < 0 ? -nd : nd);
    o->ob_digit[0] = (digit)(a & PyLong_MASK);
    o->ob_digit[1] = (digit)((a >> 30) & PyLong_MASK);
    if (top) o->ob_digit[2] = (digit)(a >> 60);
    return (PyObject *)o;
}
#else
#define new_float PyFloat_FromDouble
#define new_int PyLong_FromLongLong
#endif

TERSA_INLINE PyObject *make_str(const char *p, size_t n, uint32_t flags) {
    if (TERSA_LIKELY(flags & TERSA_ITEM_ASCII)) {
        if (n > 1) return new_ascii(p, n);
        if (n == 1) return PyUnicode_FromOrdinal((unsigned char)p[0]);
        return PyUnicode_New(0, 0);
    }
    return PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "strict");
}
