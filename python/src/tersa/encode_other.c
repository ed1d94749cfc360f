/*
 * encode_other.c - values other than the common scalars, dicts and lists: maps
 * from (key, value) pairs, datetimes, timestamps, extensions, buffers, and
 * conversions (enum, dataclass, default); the well-known types are in
 * known_types.c, numpy values in encode_numpy.c.
 *
 * Part of _tersa.c (included by encode.c at the place of its use): not compiled alone.
 */

/* A map key as the value Tersa will see (new reference), NULL on error. */
static PyObject *enc_convert_key(enc_ctx *e, PyObject *k) {
    PyTypeObject *t = Py_TYPE(k);
    if (t == &PyUnicode_Type || t == SymbolType || t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type ||
        k == Py_None || t == &PyBytes_Type || t == &PyTuple_Type || t == TimestampType || t == ExtType || t == MapType ||
        PyDateTime_Check(k) || PyByteArray_Check(k) || PyMemoryView_Check(k))
        return Py_NewRef(k);
    if (!(e->opt & OPT_PASSTHROUGH_SUBCLASS)) {
        if (PyObject_IsInstance(k, g_enum_type) == 1 && !(e->opt & OPT_PASSTHROUGH_ENUM)) {
                return PyObject_GetAttr(k, s_value);
        }
        if (PyUnicode_Check(k)) return PyObject_Str(k);
        if (PyLong_Check(k)) return PyNumber_Index(k);
        if (PyFloat_Check(k)) return PyFloat_FromDouble(PyFloat_AS_DOUBLE(k));
        if (PyTuple_Check(k) || PyBytes_Check(k)) return Py_NewRef(k);
    } else if (PyObject_IsInstance(k, g_enum_type) == 1 && !(e->opt & OPT_PASSTHROUGH_ENUM)) {
        return PyObject_GetAttr(k, s_value);
    }
    if (is_known_key(e, k)) return Py_NewRef(k);
    PyObject *np;
    int rc = numpy_scalar(k, &np);
    if (rc <= 0) return rc < 0 ? NULL : np;
    if (!e->default_fn) {
        enc_fail_type(e, k);
        return NULL;
    }
    PyObject *r = PyObject_CallOneArg(e->default_fn, k);
    if (!r) {
        enc_take_cause(e);
        enc_fail_type(e, k);
    }
    return r;
}

/* A map given as (key, value) pairs (steals `items`, a list or tuple no other
 * code changes): the keys converted first, then a shaped map if they all
 * became strings, else a generic map. Keys that Python holds apart may be
 * equal as Tersa values (NaNs of one payload, str subclasses, enum members and
 * their values, the pairs of a Map): the writer refuses those. */
static int enc_open_pairs(enc_ctx *e, PyObject *o, PyObject *items) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    PyObject **pairs = PySequence_Fast_ITEMS(items);
    PyObject *ckeys = PyList_New(n);
    int textual = 1;
    if (!ckeys) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = pairs[i];
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            enc_fail(e, "map pairs must be (key, value) tuples");
            goto fail;
        }
        PyObject *k = PyTuple_GET_ITEM(pair, 0);
        PyObject *ck = enc_convert_key(e, k);
        if (!ck) {
            enc_path_push(e, k, 0);
            goto fail;
        }
        PyList_SET_ITEM(ckeys, i, ck);
        if (Py_TYPE(ck) != &PyUnicode_Type && Py_TYPE(ck) != SymbolType) textual = 0;
    }
    size_t at = e->hint_at;
    eframe *f = enc_push(e, o, EF_PAIRS);
    if (!f) goto fail;
    f->items = items;
    f->v.ckeys = ckeys;
    f->textual = (uint8_t)textual;
    f->n = textual ? n : 2 * n;
    f->hint0 = HINT_NONE;
    if (textual) {
        Py_ssize_t ent = enc_map_open(e, at, &PyList_GET_ITEM(ckeys, 0), 1, n, 1);
        if (ent == -2) {
            enc_pop(e);
            return -1;
        }
        f->hint0 = HINT_OF(ent, 0);
    } else if (TERSA_UNLIKELY(!tersa_write_generic_map_begin(e->w, (size_t)n))) {
        enc_pop(e);
        return enc_writer_fail(e);
    }
    return 0;
fail:
    Py_XDECREF(ckeys);
    Py_DECREF(items);
    return -1;
}

/* A dict subclass in the order its items() gives: an OrderedDict moved
 * with move_to_end keeps its order apart from the underlying dict's. A
 * tuple of them, since items() may return a list other code changes. */
TERSA_NOINLINE static int enc_open_dict_subclass(enc_ctx *e, PyObject *o) {
    PyObject *items = PyMapping_Items(o);
    if (!items) return -1;
    PyObject *t = PySequence_Tuple(items);
    Py_DECREF(items);
    return t ? enc_open_pairs(e, o, t) : -1;
}

TERSA_NOINLINE static int enc_open_map_object(enc_ctx *e, PyObject *o) {
    PyObject *pairs = PyObject_GetAttrString(o, "pairs");
    if (!pairs) return -1;
    PyObject *items = as_tuple(pairs, "Map.pairs must be a sequence");
    Py_DECREF(pairs);
    return items ? enc_open_pairs(e, o, items) : -1;
}

/* --- other values --------------------------------------------------------- */

TERSA_NOINLINE static int enc_datetime(enc_ctx *e, PyObject *o) {
    int y = PyDateTime_GET_YEAR(o), mo = PyDateTime_GET_MONTH(o), d = PyDateTime_GET_DAY(o);
    int h = PyDateTime_DATE_GET_HOUR(o), mi = PyDateTime_DATE_GET_MINUTE(o), s = PyDateTime_DATE_GET_SECOND(o);
    int us = PyDateTime_DATE_GET_MICROSECOND(o);
    int64_t local = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + s;
    tersa_timestamp ts;
    ts.nanos = (uint32_t)us * 1000u;
    ts.offset = 0;
    PyObject *tz = PyDateTime_DATE_GET_TZINFO(o);
    if (tz == g_utc) {
        ts.zone = TERSA_ZONE_UTC;
        ts.seconds = local;
    } else if (tz == Py_None) {
        ts.zone = (e->opt & OPT_NAIVE_UTC) ? TERSA_ZONE_UTC : TERSA_ZONE_FLOATING;
        ts.seconds = local;
    } else {
        Py_INCREF(o);
        PyObject *off = PyObject_CallMethodOneArg(tz, s_utcoffset, o);
        Py_DECREF(o);
        if (!off) return -1;
        if (off == Py_None) {
            Py_DECREF(off);
            ts.zone = (e->opt & OPT_NAIVE_UTC) ? TERSA_ZONE_UTC : TERSA_ZONE_FLOATING;
            ts.seconds = local;
        } else {
            if (!PyDelta_Check(off)) {
                Py_DECREF(off);
                return enc_fail(e, "tzinfo.utcoffset() did not return a timedelta");
            }
            int64_t secs = (int64_t)PyDateTime_DELTA_GET_DAYS(off) * 86400 + PyDateTime_DELTA_GET_SECONDS(off);
            int usecs = PyDateTime_DELTA_GET_MICROSECONDS(off);
            Py_DECREF(off);
            if (usecs || secs % 60) return enc_fail(e, "datetime UTC offset is not a whole number of minutes");
            if (secs / 60 > TERSA_MAX_OFFSET || secs / 60 < -TERSA_MAX_OFFSET)
                return enc_fail(e, "datetime UTC offset beyond 23:59");
            ts.zone = TERSA_ZONE_OFFSET;
            ts.offset = (int16_t)(secs / 60);
            ts.seconds = local - secs;
        }
    }
    if (!tersa_write_timestamp(e->w, &ts)) return enc_writer_fail(e);
    return 0;
}

static int get_int_attr(PyObject *o, PyObject *name, long long *out) {
    PyObject *v = PyObject_GetAttr(o, name);
    if (!v) return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

TERSA_NOINLINE static int enc_timestamp(enc_ctx *e, PyObject *o) {
    long long seconds, nanos, zone, offset;
    if (get_int_attr(o, s_seconds, &seconds) < 0 || get_int_attr(o, s_nanos, &nanos) < 0 ||
        get_int_attr(o, s_zone, &zone) < 0 || get_int_attr(o, s_offset, &offset) < 0)
        return -1;
    if (nanos < 0 || nanos > 999999999 || zone < 0 || zone > 2 || offset < -TERSA_MAX_OFFSET ||
        offset > TERSA_MAX_OFFSET)
        return enc_fail(e, "invalid tersa.Timestamp fields");
    tersa_timestamp ts = {(int64_t)seconds, (uint32_t)nanos, (int16_t)offset, (uint8_t)zone};
    if (!tersa_write_timestamp(e->w, &ts)) return enc_writer_fail(e);
    return 0;
}

TERSA_NOINLINE static int enc_ext(enc_ctx *e, PyObject *o) {
    long long type;
    if (get_int_attr(o, s_type, &type) < 0) return -1;
    PyObject *data = PyObject_GetAttr(o, s_data);
    if (!data) return -1;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(data);
        return -1;
    }
    int rc = 0;
    if (type < 0 || type > TERSA_MAX_EXT_TYPE) rc = enc_fail(e, "extension type outside 0..65535");
    else if (!tersa_write_ext(e->w, (uint32_t)type, view.buf, (size_t)view.len)) rc = enc_writer_fail(e);
    PyBuffer_Release(&view);
    Py_DECREF(data);
    return rc;
}

TERSA_NOINLINE static int enc_buffer(enc_ctx *e, PyObject *o) {
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        PyObject *b = PyObject_CallMethod(o, "tobytes", NULL);
        if (!b) return -1;
        int rc = tersa_write_binary(e->w, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b)) ? 0 : enc_writer_fail(e);
        Py_DECREF(b);
        return rc;
    }
    int rc = tersa_write_binary(e->w, view.buf, (size_t)view.len) ? 0 : enc_writer_fail(e);
    PyBuffer_Release(&view);
    return rc;
}

/* A dataclass instance as a dict of its fields (not ClassVar/InitVar), in order. */
static PyObject *dataclass_dict(PyObject *o, PyObject *fields) {
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    Py_ssize_t pos = 0;
    PyObject *name, *field;
    while (PyDict_Next(fields, &pos, &name, &field)) {
        PyObject *ft = PyObject_GetAttr(field, s_field_type);
        if (!ft) goto fail;
        int is_field = ft == g_field_marker;
        Py_DECREF(ft);
        if (!is_field) continue;
        PyObject *v = PyObject_GetAttr(o, name);
        if (!v) goto fail;
        int r = PyDict_SetItem(d, name, v);
        Py_DECREF(v);
        if (r < 0) goto fail;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* `o` replaced by `r` (an enum's value, a dataclass's dict, a numpy array's
 * list, what `default` returned; steals r): a frame of its own, so that the
 * replacement counts as a level and a conversion that returns its input
 * ends as a circular reference. */
static int enc_converted(enc_ctx *e, PyObject *o, PyObject *r) {
    if (!r) return -1;
    eframe *f = enc_push(e, o, EF_CONV);
    if (!f) {
        Py_DECREF(r);
        return -1;
    }
    f->items = r;
    f->n = 1;
    return 0;
}

static int enc_default(enc_ctx *e, PyObject *o) {
    if (!e->default_fn) return enc_fail_type(e, o);
    if (e->depth >= e->max_depth) return enc_depth_fail(e, o);
    PyObject *r = PyObject_CallOneArg(e->default_fn, o);
    if (!r) {
        enc_take_cause(e);
        return enc_fail_type(e, o);
    }
    return enc_converted(e, o, r);
}

/* An instance of a class given to tersa.register_type: EXT(type, packer(o)).
 * A packer that raises, or returns no bytes, fails like `default`. */
TERSA_NOINLINE static int enc_registered(enc_ctx *e, PyObject *o, PyObject *entry) {
    long type = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    Py_INCREF(entry); /* a packer may unregister its own type */
    PyObject *data = PyObject_CallOneArg(PyTuple_GET_ITEM(entry, 1), o);
    Py_DECREF(entry);
    if (!data) {
        enc_take_cause(e);
        return enc_fail(e, "the packer of extension type %ld raised for %s", type, Py_TYPE(o)->tp_name);
    }
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        int rc = enc_fail(e, "the packer of extension type %ld returned %s, not bytes", type, Py_TYPE(data)->tp_name);
        Py_DECREF(data);
        return rc;
    }
    int rc = tersa_write_ext(e->w, (uint32_t)type, view.buf, (size_t)view.len) ? 0 : enc_writer_fail(e);
    PyBuffer_Release(&view);
    Py_DECREF(data);
    return rc;
}

/* Any value but the common scalars, dicts and lists: written, or opened as a
 * frame. */
static int enc_other_kept(enc_ctx *e, PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    uint32_t opt = e->opt;
    if (TERSA_UNLIKELY(g_ext_by_class != NULL && PyDict_GET_SIZE(g_ext_by_class) != 0)) {
        if (enc_settle(e) < 0) return -1; /* a metaclass's __hash__, a packer */
        PyObject *entry = PyDict_GetItemWithError(g_ext_by_class, (PyObject *)t);
        if (entry) return enc_registered(e, o, entry);
        if (PyErr_Occurred()) return -1;
    }
    /* Without Python code (encode.c, enc_settle): */
    if (t == SymbolType) return enc_symbol(e, o);
    if (t == &PyTuple_Type) return enc_open_seq(e, o, EF_TUPLE, PyTuple_GET_SIZE(o));
    if (t == &PyBytes_Type) {
        return tersa_write_binary(e->w, PyBytes_AS_STRING(o), (size_t)PyBytes_GET_SIZE(o)) ? 0 : enc_writer_fail(e);
    }
    if (t == PyDateTimeAPI->DateTimeType && !(opt & OPT_PASSTHROUGH_DATETIME)) {
        PyObject *tz = PyDateTime_DATE_GET_TZINFO(o);
        if (tz == g_utc || tz == Py_None) return enc_datetime(e, o);
    }
    /* Anything else may run Python code. */
    if (enc_settle(e) < 0) return -1;
    if (PyDateTime_Check(o) && !(opt & OPT_PASSTHROUGH_DATETIME)) {
        if (t == PyDateTimeAPI->DateTimeType || !(opt & OPT_PASSTHROUGH_SUBCLASS)) return enc_datetime(e, o);
    }
    if (t == TimestampType) return enc_timestamp(e, o);
    if (t == ExtType) return enc_ext(e, o);
    if (t == MapType) return enc_open_map_object(e, o);
    if (t == &PyByteArray_Type || t == &PyMemoryView_Type) return enc_buffer(e, o);
    int rc = enc_known(e, o);
    if (rc <= 0) return rc;
    if ((rc = enc_numpy(e, o)) <= 0) return rc;
    if (!(opt & OPT_PASSTHROUGH_SUBCLASS)) {
        if (PyObject_IsInstance(o, g_enum_type) == 1 && !(opt & OPT_PASSTHROUGH_ENUM))
            return enc_converted(e, o, PyObject_GetAttr(o, s_value));
        if (PyUnicode_Check(o)) {
            if (PyObject_TypeCheck(o, SymbolType)) return enc_symbol(e, o);
            /* Copied: Python code run by the checks above (a __class__
             * property) may have left enc_other the last reference. */
            return enc_str_lent(e, o, false);
        }
        if (PyLong_Check(o)) return enc_bigint(e, o);
        if (PyFloat_Check(o)) return tersa_write_double(e->w, PyFloat_AS_DOUBLE(o)) ? 0 : enc_writer_fail(e);
        if (PyDict_Check(o)) return enc_open_dict_subclass(e, o);
        if (PyList_Check(o)) return enc_open_seq(e, o, EF_LIST, PyList_GET_SIZE(o));
        if (PyTuple_Check(o)) return enc_open_seq(e, o, EF_TUPLE, PyTuple_GET_SIZE(o));
        if (PyBytes_Check(o) || PyByteArray_Check(o)) return enc_buffer(e, o);
    } else if (PyObject_IsInstance(o, g_enum_type) == 1 && !(opt & OPT_PASSTHROUGH_ENUM)) {
        return enc_converted(e, o, PyObject_GetAttr(o, s_value));
    }
    if (!(opt & OPT_PASSTHROUGH_DATACLASS)) {
        PyObject *fields = PyObject_GetAttr((PyObject *)t, s_dataclass_fields);
        if (fields) {
            PyObject *d = PyDict_Check(fields) ? dataclass_dict(o, fields) : NULL;
            Py_DECREF(fields);
            if (d) return enc_converted(e, o, d);
            if (PyErr_Occurred()) return -1;
        } else {
            PyErr_Clear();
        }
    }
    if (PyErr_Occurred()) return -1;
    return enc_default(e, o);
}

/* Values that are not of the common types may run Python code (a `default`,
 * a tzinfo, an enum's value, a dataclass field) that drops them from their
 * list or dict: hold a reference while they are used. */
TERSA_NOINLINE static int enc_other(enc_ctx *e, PyObject *o) {
    Py_INCREF(o);
    int rc = enc_other_kept(e, o);
    Py_DECREF(o);
    return rc;
}
