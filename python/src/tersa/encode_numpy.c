/*
 * encode_numpy.c - numpy values: scalars (numpy.integer, numpy.floating,
 * numpy.bool_) always, as the int, float or bool they hold; arrays with
 * OPT_SERIALIZE_NUMPY, as nested arrays of their elements, read from the
 * array's memory (a float32 element is a double the writer stores as F32,
 * exactly). Arrays of other kinds (object, complex, datetime64, strings) and
 * long doubles have no exact Tersa form and raise EncodeError.
 *
 * numpy is never imported here: a numpy object exists only once the
 * application imported numpy, and its type's name starts with "numpy.".
 *
 * Part of _tersa.c (included by encode.c before encode_other.c): not compiled alone.
 */

static int enc_converted(enc_ctx *e, PyObject *o, PyObject *r);

static PyObject *g_np_integer, *g_np_floating, *g_np_bool, *g_np_ndarray, *g_np_longdouble, *g_np_float64;

/* numpy's types from the loaded module: 0, or -1 with an exception. */
static int numpy_types(void) {
    if (g_np_ndarray) return 0;
    PyObject *name = PyUnicode_FromString("numpy");
    PyObject *np = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    if (!np) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "tersa: a numpy object, but numpy is not loaded");
        return -1;
    }
    PyObject *t[6];
    const char *names[6] = {"integer", "floating", "bool_", "longdouble", "float64", "ndarray"};
    int i;
    for (i = 0; i < 6; i++)
        if (!(t[i] = PyObject_GetAttrString(np, names[i]))) break;
    Py_DECREF(np);
    if (i < 6) {
        while (i--) Py_DECREF(t[i]);
        return -1;
    }
    g_np_integer = t[0];
    g_np_floating = t[1];
    g_np_bool = t[2];
    g_np_longdouble = t[3];
    g_np_float64 = t[4];
    g_np_ndarray = t[5]; /* last: it marks the set complete */
    return 0;
}

/* The dtype's kind letter and item size; -1 with an exception. */
static int dtype_of(PyObject *arr, char *kind, Py_ssize_t *itemsize, PyObject **dtype) {
    *dtype = PyObject_GetAttrString(arr, "dtype");
    if (!*dtype) return -1;
    PyObject *k = PyObject_GetAttrString(*dtype, "kind");
    PyObject *n = k ? PyObject_GetAttrString(*dtype, "itemsize") : NULL;
    const char *ks = k && PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
    *kind = ks ? ks[0] : 0;
    *itemsize = n ? PyLong_AsSsize_t(n) : -1;
    Py_XDECREF(k);
    Py_XDECREF(n);
    return (*itemsize < 0 && PyErr_Occurred()) || !ks ? -1 : 0;
}

/* One element at p of the buffer format letter f, itemsize n. */
static bool write_element(tersa_writer *w, const char *p, char f, Py_ssize_t n) {
    switch (f) {
    case '?': return tersa_write_bool(w, *p != 0);
    case 'f': {
        float x;
        memcpy(&x, p, 4);
        return tersa_write_double(w, (double)x);
    }
    case 'd': {
        double x;
        memcpy(&x, p, 8);
        return tersa_write_double(w, x);
    }
    default: break;
    }
    uint64_t u;
    switch (n) {
    case 1: u = *(const uint8_t *)p; break;
    case 2: { uint16_t x; memcpy(&x, p, 2); u = x; break; }
    case 4: { uint32_t x; memcpy(&x, p, 4); u = x; break; }
    default: memcpy(&u, p, 8); break;
    }
    if (f == 'b' || f == 'h' || f == 'i' || f == 'l' || f == 'q') {
        /* Sign-extend the n-byte integer (right shifts are arithmetic: see dtoa.c). */
        unsigned shift = 64 - 8 * (unsigned)n;
        return tersa_write_int(w, (int64_t)(u << shift) >> shift);
    }
    return tersa_write_uint(w, u);
}

/* The elements of dimension `dim` on, at p. */
static bool write_dims(tersa_writer *w, const Py_buffer *v, int dim, const char *p, char f) {
    Py_ssize_t n = v->shape[dim], stride = v->strides[dim];
    if (!tersa_write_array_begin(w, (size_t)n)) return false;
    for (Py_ssize_t i = 0; i < n; i++, p += stride) {
        if (dim + 1 < v->ndim ? !write_dims(w, v, dim + 1, p, f) : !write_element(w, p, f, v->itemsize)) return false;
    }
    return tersa_write_array_end(w);
}

/* The format letter of a native-order buffer of a type write_element knows, or 0. */
static char native_format(const char *fmt, Py_ssize_t itemsize) {
    if (!fmt) return 'B';
    if (*fmt == '@' || *fmt == '=' || (*fmt == '<' && PY_LITTLE_ENDIAN)) fmt++;
    if (!fmt[0] || fmt[1] || !strchr("?bBhHiIlLqQfd", fmt[0])) return 0;
    if ((fmt[0] == 'f' && itemsize != 4) || (fmt[0] == 'd' && itemsize != 8)) return 0;
    return fmt[0];
}

TERSA_NOINLINE static int enc_ndarray(enc_ctx *e, PyObject *o) {
    char kind;
    Py_ssize_t itemsize;
    PyObject *dtype;
    if (dtype_of(o, &kind, &itemsize, &dtype) < 0) {
        Py_XDECREF(dtype);
        return -1;
    }
    if (!strchr("biuf", kind) || !kind || (kind == 'f' && itemsize > 8)) {
        int rc = enc_fail(e, "a numpy array of dtype %S has no Tersa form (bool, int, uint and float up to 64 bits have)",
                          dtype);
        Py_DECREF(dtype);
        return rc;
    }
    Py_DECREF(dtype);
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) < 0) return -1;
    char f = native_format(view.format, view.itemsize);
    if (!f) {
        /* Another byte order or float16: numpy converts its elements. */
        PyBuffer_Release(&view);
        return enc_converted(e, o, PyObject_CallMethod(o, "tolist", NULL));
    }
    if (e->depth + (size_t)view.ndim > e->max_depth) {
        PyBuffer_Release(&view);
        return enc_depth_fail(e, o);
    }
    bool ok = view.ndim == 0 ? write_element(e->w, view.buf, f, view.itemsize) : write_dims(e->w, &view, 0, view.buf, f);
    PyBuffer_Release(&view);
    return ok ? 0 : enc_writer_fail(e);
}

/* An instance of a numpy type or of a subclass of one. */
static int is_numpy(PyObject *o) {
    for (PyTypeObject *t = Py_TYPE(o); t; t = t->tp_base)
        if (strncmp(t->tp_name, "numpy.", 6) == 0) return 1;
    return 0;
}

/* A numpy bool, integer or float (not a long double) as the Python bool, int
 * or float it holds: 0 with *out set, 1 if `o` is none of those, -1 error. */
static int numpy_scalar(PyObject *o, PyObject **out) {
    if (!is_numpy(o)) return PyErr_Occurred() ? -1 : 1;
    if (numpy_types() < 0) return -1;
    if (PyObject_IsInstance(o, g_np_bool) == 1) {
        int b = PyObject_IsTrue(o);
        if (b < 0) return -1;
        *out = Py_NewRef(b ? Py_True : Py_False);
        return 0;
    }
    if (PyObject_IsInstance(o, g_np_integer) == 1) return (*out = PyNumber_Index(o)) ? 0 : -1;
    if (PyObject_IsInstance(o, g_np_floating) == 1 &&
        !(g_np_longdouble != g_np_float64 && PyObject_IsInstance(o, g_np_longdouble) == 1)) {
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        return (*out = PyFloat_FromDouble(d)) ? 0 : -1;
    }
    return PyErr_Occurred() ? -1 : 1;
}

/* Write `o` if it is a numpy value this binding takes: 0 written, -1 error,
 * 1 not one (left to `default`). */
static int enc_numpy(enc_ctx *e, PyObject *o) {
    PyObject *v;
    int rc = numpy_scalar(o, &v);
    if (rc < 0) return -1;
    if (rc == 0) {
        if (PyFloat_CheckExact(v)) rc = tersa_write_double(e->w, PyFloat_AS_DOUBLE(v)) ? 0 : enc_writer_fail(e);
        else if (PyBool_Check(v)) rc = tersa_write_bool(e->w, v == Py_True) ? 0 : enc_writer_fail(e);
        else rc = enc_bigint(e, v);
        Py_DECREF(v);
        return rc;
    }
    if (!is_numpy(o)) return PyErr_Occurred() ? -1 : 1;
    if (PyObject_IsInstance(o, g_np_longdouble) == 1 && g_np_longdouble != g_np_float64)
        return enc_fail(e, "numpy.longdouble has no exact Tersa form (convert it to float)");
    if (PyObject_IsInstance(o, g_np_ndarray) == 1) {
        if (e->opt & OPT_SERIALIZE_NUMPY) return enc_ndarray(e, o);
        if (!e->default_fn)
            return enc_fail(e, "Type is not Tersa serializable: numpy.ndarray (pass option=tersa.OPT_SERIALIZE_NUMPY)");
    }
    return PyErr_Occurred() ? -1 : 1;
}
