/*
 * known_types.c - the well-known extension types (SPEC 5.8) as Python
 * objects: decimal.Decimal (decimal), datetime.date (date), uuid.UUID (uuid)
 * and naive datetime.time (time of day), both ways.
 *
 * decimal is imported when the decoder first meets a decimal; the encoder
 * knows Decimal once the application imported it (no Decimal exists before).
 *
 * Part of _tersa.c (included by encode.c before encode_other.c): not compiled alone.
 */

#define USEC_PER_DAY 86400000000ULL

static PyObject *g_decimal_type; /* decimal.Decimal, once known */

/* decimal.Decimal if the decimal module is loaded (import it with `load`);
 * NULL without an exception if it is not. */
static PyObject *decimal_type(int load) {
    if (g_decimal_type) return g_decimal_type;
    PyObject *mod = load ? PyImport_ImportModule("decimal") : PyImport_GetModule(s_decimal_module);
    if (!mod) {
        if (!load) PyErr_Clear();
        return NULL;
    }
    g_decimal_type = PyObject_GetAttrString(mod, "Decimal");
    Py_DECREF(mod);
    return g_decimal_type;
}

/* --- encoding ------------------------------------------------------------- */

/* The payload of a Decimal from its text (Decimal.__str__, whatever a
 * subclass does): "-1.50", "1E+10", "0E-7", "Infinity", "NaN", "sNaN12". */
TERSA_NOINLINE static int enc_decimal(enc_ctx *e, PyObject *o) {
    PyObject *text = ((PyTypeObject *)g_decimal_type)->tp_str(o);
    if (!text) return -1;
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(text, &n);
    if (!p) {
        Py_DECREF(text);
        return -1;
    }
    const char *start = p, *end = p + n;
    uint8_t coefficient[TERSA_DECIMAL_MAX_COEFFICIENT];
    tersa_decimal d;
    int negative = p < end && *p == '-';
    p += negative;
    int rc = 0;
    if (p < end && (*p == 'N' || *p == 's')) {
        if (*p == 's') rc = enc_fail(e, "a signalling NaN Decimal has no Tersa form");
        else if (end - p != 3) rc = enc_fail(e, "a NaN Decimal with a diagnostic payload has no Tersa form");
        else if (negative) rc = enc_fail(e, "a negative NaN Decimal has no Tersa form (Tersa's NaN has no sign)");
    }
    /* The core reads the text: digits, point, exponent, Infinity, NaN. */
    if (!rc && !tersa_decimal_parse(start, (size_t)n, &d, coefficient))
        rc = enc_fail(e, "a Decimal beyond Tersa's limits (an exponent within +-999,999,999, a coefficient of at "
                         "most 1,024 bytes, about 2,466 digits) has no Tersa form");
    Py_DECREF(text);
    if (rc < 0) return rc;
    return tersa_write_decimal(e->w, &d) ? 0 : enc_writer_fail(e);
}

TERSA_NOINLINE static int enc_date(enc_ctx *e, PyObject *o) {
    int64_t days = tersa_days_from_civil(PyDateTime_GET_YEAR(o), (unsigned)PyDateTime_GET_MONTH(o),
                                         (unsigned)PyDateTime_GET_DAY(o));
    return tersa_write_date(e->w, days) ? 0 : enc_writer_fail(e);
}

TERSA_NOINLINE static int enc_time_of_day(enc_ctx *e, PyObject *o) {
    if (PyDateTime_TIME_GET_TZINFO(o) != Py_None)
        return enc_fail(e, "an aware datetime.time has no Tersa form (Tersa's time of day has no zone)");
    uint64_t us = ((uint64_t)PyDateTime_TIME_GET_HOUR(o) * 3600 + (uint64_t)PyDateTime_TIME_GET_MINUTE(o) * 60 +
                   (uint64_t)PyDateTime_TIME_GET_SECOND(o)) *
                      1000000u +
                  (uint64_t)PyDateTime_TIME_GET_MICROSECOND(o);
    return tersa_write_time_of_day(e->w, us) ? 0 : enc_writer_fail(e);
}

TERSA_NOINLINE static int enc_uuid(enc_ctx *e, PyObject *o) {
    PyObject *v = PyObject_GetAttr(o, s_int);
    if (!v) return -1;
    uint8_t bytes[16];
    int rc = PyLong_Check(v) ? _PyLong_AsByteArray((PyLongObject *)v, bytes, 16, 0, 0) : -1;
    Py_DECREF(v);
    if (rc < 0) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            return enc_fail(e, "uuid.UUID.int is not a 128-bit unsigned int");
        }
        return -1;
    }
    return tersa_write_uuid(e->w, bytes) ? 0 : enc_writer_fail(e);
}

/* Write `o` if it is of a well-known type: 0 written, -1 error, 1 not one.
 * datetime.datetime was handled before (it is a date). */
static int enc_known(enc_ctx *e, PyObject *o) {
    uint32_t opt = e->opt;
    PyTypeObject *t = Py_TYPE(o);
    int exact_or_sub = !(opt & OPT_PASSTHROUGH_SUBCLASS);
    if (!(opt & OPT_PASSTHROUGH_DATETIME)) {
        if (t == PyDateTimeAPI->DateType || (exact_or_sub && PyDate_Check(o) && !PyDateTime_Check(o)))
            return enc_date(e, o);
        if (t == PyDateTimeAPI->TimeType || (exact_or_sub && PyTime_Check(o))) return enc_time_of_day(e, o);
    }
    if (!(opt & OPT_PASSTHROUGH_UUID) && (t == (PyTypeObject *)g_uuid_type || (exact_or_sub && PyObject_IsInstance(o, g_uuid_type) == 1)))
        return enc_uuid(e, o);
    PyObject *dec = decimal_type(0);
    if (dec && (t == (PyTypeObject *)dec || (exact_or_sub && PyObject_IsInstance(o, dec) == 1))) return enc_decimal(e, o);
    return PyErr_Occurred() ? -1 : 1;
}

/* A map key of a well-known type stays what it is (a generic map's key). */
static int is_known_key(enc_ctx *e, PyObject *k) {
    if (!(e->opt & OPT_PASSTHROUGH_DATETIME) && (PyDate_Check(k) || PyTime_Check(k))) return 1;
    if (!(e->opt & OPT_PASSTHROUGH_UUID) && PyObject_IsInstance(k, g_uuid_type) == 1) return 1;
    PyObject *dec = decimal_type(0);
    return dec && PyObject_IsInstance(k, dec) == 1;
}

/* --- decoding ------------------------------------------------------------- */

static PyObject *dec_invalid(const tersa_item *it, const char *what) {
    raise_decode_error("invalid_value", it->offset, what);
    return NULL;
}

static PyObject *dec_decimal(const tersa_item *it) {
    tersa_decimal d;
    if (!tersa_decimal_of_ext(it->v.ext.ptr, it->v.ext.len, &d)) return dec_invalid(it, "invalid decimal payload");
    PyObject *type = decimal_type(1);
    if (!type) return NULL;
    PyObject *text;
    if (d.kind == TERSA_DECIMAL_NAN) text = PyUnicode_FromString("NaN");
    else if (d.kind == TERSA_DECIMAL_INF) text = PyUnicode_FromString("Infinity");
    else if (d.kind == TERSA_DECIMAL_NEG_INF) text = PyUnicode_FromString("-Infinity");
    else {
        PyObject *c = d.coefficient_len ? _PyLong_FromByteArray(d.coefficient, d.coefficient_len, 0, 0)
                                        : PyLong_FromLong(0);
        if (!c) return NULL;
        text = PyUnicode_FromFormat("%s%SE%d", d.kind == TERSA_DECIMAL_NEGATIVE ? "-" : "", c, (int)d.exponent);
        Py_DECREF(c);
    }
    if (!text) return NULL;
    PyObject *v = PyObject_CallOneArg(type, text);
    Py_DECREF(text);
    return v;
}

static PyObject *dec_date(const tersa_item *it) {
    int64_t days, y;
    unsigned m, dd;
    if (!tersa_date_of_ext(it->v.ext.ptr, it->v.ext.len, &days)) return dec_invalid(it, "invalid date payload");
    tersa_civil_from_days(days, &y, &m, &dd);
    return PyDateTimeAPI->Date_FromDate((int)y, (int)m, (int)dd, PyDateTimeAPI->DateType);
}

/* A uuid.UUID built as its pickle support does (object.__setattr__ of its
 * slots), without running UUID.__init__'s argument checks. */
static PyObject *dec_uuid(const tersa_item *it) {
    if (it->v.ext.len != 16) return dec_invalid(it, "a uuid payload is 16 bytes");
    PyObject *value = _PyLong_FromByteArray(it->v.ext.ptr, 16, 0, 0);
    if (!value) return NULL;
    PyTypeObject *t = (PyTypeObject *)g_uuid_type;
    PyObject *u = t->tp_alloc(t, 0);
    if (!u || PyObject_GenericSetAttr(u, s_int, value) < 0 || PyObject_GenericSetAttr(u, s_is_safe, g_uuid_unknown) < 0)
        Py_CLEAR(u);
    Py_DECREF(value);
    return u;
}

static PyObject *dec_time_of_day(const tersa_item *it) {
    uint64_t us;
    if (!tersa_time_of_day_of_ext(it->v.ext.ptr, it->v.ext.len, &us) || us >= USEC_PER_DAY)
        return dec_invalid(it, "invalid time-of-day payload");
    uint64_t s = us / 1000000u;
    return PyDateTimeAPI->Time_FromTime((int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60), (int)(us % 1000000u),
                                        Py_None, PyDateTimeAPI->TimeType);
}

/* The value of an EXT item of a reserved type (the reader checked its payload). */
TERSA_NOINLINE static PyObject *dec_known(const tersa_item *it) {
    switch (it->v.ext.type) {
    case TERSA_EXT_DECIMAL: return dec_decimal(it);
    case TERSA_EXT_DATE: return dec_date(it);
    case TERSA_EXT_UUID: return dec_uuid(it);
    case TERSA_EXT_TIME_OF_DAY: return dec_time_of_day(it);
    default: return dec_invalid(it, "reserved extension type with no meaning in Tersa 1");
    }
}
