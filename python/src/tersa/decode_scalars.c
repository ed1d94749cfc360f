/*
 * decode_scalars.c - the scalars the item loop does not build inline:
 * unsigned and big integers, timestamps, binary, symbols and extensions.
 *
 * Part of _tersa.c (included by decode.c at the place of its use): not compiled alone.
 */

static PyObject *offset_tz(int minutes) {
    PyObject **slot = &g_tz_offsets[minutes + 1439];
    if (!*slot) {
        *slot = PyObject_CallFunction(g_offset_tz_fn, "i", minutes);
        if (!*slot) return NULL;
    }
    return *slot;
}

TERSA_NOINLINE static PyObject *dec_time(dec_ctx *d, const tersa_timestamp *ts) {
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

TERSA_NOINLINE static PyObject *dec_bigint(const tersa_item *it) {
    PyObject *v = _PyLong_FromByteArray(it->v.big.mag, it->v.big.len, 1, 0);
    if (!v || !it->v.big.negative) return v;
    PyObject *neg = PyNumber_Negative(v);
    Py_DECREF(v);
    return neg;
}

TERSA_NOINLINE static PyObject *dec_symbol(dec_ctx *d, const tersa_item *it) {
    if (d->opt & OPT_SYMBOL_AS_STR) return dec_str(d, it);
    PyObject *s = make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (!s) return NULL;
    PyObject *sym = PyObject_CallOneArg((PyObject *)SymbolType, s);
    Py_DECREF(s);
    return sym;
}

TERSA_NOINLINE static PyObject *dec_ext(const tersa_item *it) {
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
