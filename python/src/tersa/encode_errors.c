/*
 * encode_errors.c - dumps' errors: the pending EncodeError message and cause,
 * the path recorded while unwinding, and the exception raised from them.
 *
 * Part of _tersa.c (included by encode.c at the place of its use): not compiled alone.
 */

/* --- errors ------------------------------------------------------------- */

TERSA_NOINLINE static int enc_fail(enc_ctx *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (!msg) return -1;
    Py_XSETREF(e->err_msg, msg);
    return -1;
}

/* The pending exception (a default= or packer that raised), with its
 * traceback, becomes the __cause__ of the EncodeError to come. */
TERSA_NOINLINE static void enc_take_cause(enc_ctx *e) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb) PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    Py_XSETREF(e->err_cause, value);
}

TERSA_NOINLINE static int enc_fail_type(enc_ctx *e, PyObject *o) {
    if (PyAnySet_Check(o))
        return enc_fail(e, "Type is not Tersa serializable: %s (Tersa has no set type: encode a list, "
                           "e.g. sorted(s), or pass default=)", Py_TYPE(o)->tp_name);
    return enc_fail(e, "Type is not Tersa serializable: %s", Py_TYPE(o)->tp_name);
}

TERSA_NOINLINE static int enc_writer_fail(enc_ctx *e) {
    const tersa_error *err = tersa_writer_error(e->w);
    if (err->code == TERSA_ERR_NOMEM) {
        PyErr_NoMemory();
        return -1;
    }
    return enc_fail(e, "%s", err->message ? err->message : tersa_code_name(err->code));
}

TERSA_NOINLINE static void enc_path_push(enc_ctx *e, PyObject *key, Py_ssize_t index) {
    if (!e->err_msg) return; /* only EncodeErrors carry a path */
    if (e->path_len == e->path_cap) {
        size_t cap = e->path_cap ? e->path_cap * 2 : 16;
        path_ent *p = PyMem_Realloc(e->path, cap * sizeof(path_ent));
        if (!p) return;
        e->path = p;
        e->path_cap = cap;
    }
    Py_XINCREF(key);
    e->path[e->path_len].key = key;
    e->path[e->path_len].index = index;
    e->path_len++;
}

/* Turn a pending error into an EncodeError "<message> at <path>". */
TERSA_NOINLINE static void enc_raise(enc_ctx *e) {
    if (!e->err_msg) return; /* a Python exception is already set */
    PyErr_Clear();
    PyObject *parts = PyList_New(0);
    PyObject *dollar = PyUnicode_FromString("$");
    PyObject *ancestor = NULL; /* a cycle: the path of the value that contains itself */
    if (!parts || !dollar || PyList_Append(parts, dollar) < 0) goto fail;
    for (size_t i = e->path_len; i > 0; i--) {
        if (e->cycle && !ancestor && i == e->cycle_mark) {
            PyObject *empty = PyUnicode_FromString("");
            ancestor = empty ? PyUnicode_Join(empty, parts) : NULL;
            Py_XDECREF(empty);
            if (!ancestor) goto fail;
        }
        path_ent *p = &e->path[i - 1];
        PyObject *part;
        if (!p->key) {
            part = PyUnicode_FromFormat("[%zd]", p->index);
        } else if (PyUnicode_Check(p->key)) {
            PyObject *esc1 = PyObject_CallMethod(p->key, "replace", "ss", "\\", "\\\\");
            PyObject *esc = esc1 ? PyObject_CallMethod(esc1, "replace", "ss", "\"", "\\\"") : NULL;
            Py_XDECREF(esc1);
            part = esc ? PyUnicode_FromFormat("[\"%U\"]", esc) : NULL;
            Py_XDECREF(esc);
        } else {
            part = PyUnicode_FromFormat("[%R]", p->key);
        }
        if (!part || PyList_Append(parts, part) < 0) {
            Py_XDECREF(part);
            goto fail;
        }
        Py_DECREF(part);
    }
    {
        PyObject *empty = PyUnicode_FromString("");
        PyObject *path = empty ? PyUnicode_Join(empty, parts) : NULL;
        Py_XDECREF(empty);
        if (!path) goto fail;
        if (e->cycle && !ancestor) ancestor = Py_NewRef(path);
        PyObject *msg = e->cycle ? PyUnicode_FromFormat("%U%U contains itself at %U", e->err_msg, ancestor, path)
                                 : PyUnicode_FromFormat("%U at %U", e->err_msg, path);
        PyObject *exc = msg ? PyObject_CallFunction(EncodeError, "OO", msg, path) : NULL;
        Py_XDECREF(msg);
        Py_DECREF(path);
        if (!exc) goto fail;
        if (e->err_cause) {
            Py_INCREF(e->err_cause);
            PyException_SetCause(exc, e->err_cause);
        }
        PyErr_SetObject(EncodeError, exc);
        Py_DECREF(exc);
    }
fail:
    e->cycle = 0;
    Py_XDECREF(ancestor);
    Py_XDECREF(parts);
    Py_XDECREF(dollar);
}
