/*
 * _pith.c - the CPython binding of the Pith C core.
 *
 * Encoding walks Python objects and drives the core's writer (which owns the
 * canonical encoding); decoding pulls items from the core's reader and builds
 * Python objects. Everything format-related stays in the core: this file only
 * maps types, caches Python objects and reports errors.
 *
 * Caches (all bounded, all cleared or owned, none keyed by hash alone):
 *   - encode: per buffer, the shape index of a dict's key sequence, keyed by
 *     the identity of the key objects (strong references held, identity
 *     re-verified on every hit);
 *   - decode: per buffer, the str object of each string-table index (a
 *     reference returns the same object) and the key objects of each shape;
 *     across calls, a small table of interned key strings compared by bytes.
 * Writers and readers are reused through a one-slot pool per kind: a nested
 * or concurrent call (a `default` callback calling dumps, another thread while
 * the GIL is released) finds the slot empty and uses a fresh context.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>

#include "pith.h"

#if PY_VERSION_HEX < 0x030A0000
#error "pith needs CPython 3.10 or later"
#endif

/* CPython 3.11 dict internals (Include/internal/pycore_dict.h), mirrored to read
 * a dict's entry table in one pass and to build decoded dicts from a per-shape
 * template. Only for release builds of 3.11; other versions use the public API. */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_REF_DEBUG) && \
    !defined(PITH_NO_DICT_INTERNALS)
#define PITH_DICT_INTERNALS 1
typedef struct {
    Py_hash_t me_hash;
    PyObject *me_key;
    PyObject *me_value;
} pith_dict_entry;
typedef struct {
    PyObject *me_key;
    PyObject *me_value;
} pith_dict_uentry;
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size;
    uint8_t dk_log2_index_bytes;
    uint8_t dk_kind; /* 0 general, 1 unicode, 2 split */
    uint32_t dk_version;
    Py_ssize_t dk_usable;
    Py_ssize_t dk_nentries;
    char dk_indices[];
} pith_dict_keys;
#define PITH_DK_ENTRIES(dk) ((void *)((dk)->dk_indices + ((size_t)1 << (dk)->dk_log2_index_bytes)))
#define PITH_DK_GENERAL 0
#define PITH_DK_UNICODE 1
static size_t pith_dk_size(const pith_dict_keys *dk) {
    size_t es = dk->dk_kind == PITH_DK_GENERAL ? sizeof(pith_dict_entry) : sizeof(pith_dict_uentry);
    return sizeof(pith_dict_keys) + ((size_t)1 << dk->dk_log2_index_bytes) +
           ((((size_t)1 << dk->dk_log2_size) << 1) / 3) * es;
}
#else
#define PITH_DICT_INTERNALS 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#define ALWAYS_INLINE static inline
#define NOINLINE
#endif

/* ==========================================================================
 * Options
 * ========================================================================== */

/* Encoding */
#define OPT_NAIVE_UTC (1u << 0)             /* naive datetimes are UTC, not floating */
#define OPT_PASSTHROUGH_DATETIME (1u << 1)  /* datetime goes to `default` */
#define OPT_PASSTHROUGH_SUBCLASS (1u << 2)  /* subclasses of str/int/float/dict/list/tuple go to `default` */
#define OPT_PASSTHROUGH_DATACLASS (1u << 3) /* dataclasses go to `default` */
#define OPT_PASSTHROUGH_ENUM (1u << 4)      /* enum members go to `default` */
#define OPT_PASSTHROUGH_UUID (1u << 5)      /* uuid.UUID goes to `default` */
/* Decoding */
#define OPT_TIMESTAMP (1u << 8)             /* timestamps always decode to pith.Timestamp */
#define OPT_SYMBOL_AS_STR (1u << 9)         /* symbols decode to plain str */
#define OPT_ENCODE_MASK 0x3Fu
#define OPT_DECODE_MASK 0x300u

#define MAX_DEPTH 1000
#define MAX_DECODE_DEPTH 10000 /* the highest max_depth a decoder accepts */
#define PRESIZE_MAX 64   /* containers are pre-sized at most this much from their (claimed) count */
#define KEYCACHE_SIZE 2048
#define KEYCACHE_MAX_LEN 64
#define POOL_RELEASE_BYTES (1u << 20) /* contexts that handled more than this are freed, not pooled */

/* ==========================================================================
 * Module globals
 * ========================================================================== */

static PyTypeObject *SymbolType, *ExtType, *TimestampType, *MapType;
static PyObject *DecodeError, *EncodeError;
static PyObject *g_offset_tz_fn, *g_build_dict_fn;
static PyObject *g_utc;
static PyObject *g_tz_offsets[2 * 1439 + 1];
static PyObject *g_enum_type, *g_uuid_type, *g_field_marker;
static PyObject *s_option, *s_default, *s_dictionary, *s_max_depth, *s_value, *s_utcoffset,
    *s_dataclass_fields, *s_field_type, *s_seconds, *s_nanos, *s_zone, *s_offset, *s_type, *s_data;

/* ==========================================================================
 * Small helpers
 * ========================================================================== */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int *y, int *m, int *d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t yy = (int64_t)yoe + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yy + (*m <= 2));
}

ALWAYS_INLINE uint64_t load64(const void *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

ALWAYS_INLINE uint32_t load32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The bytes p[0..n) (n <= 8) as a word, reading nothing outside them. */
ALWAYS_INLINE uint64_t load_upto8(const char *p, size_t n) {
    if (n >= 4) return (uint64_t)load32(p) | ((uint64_t)load32(p + n - 4) << 32);
    if (n == 0) return 0;
    const unsigned char *u = (const unsigned char *)p;
    return (uint64_t)u[0] | ((uint64_t)u[n >> 1] << 8) | ((uint64_t)u[n - 1] << 16);
}

/* memcmp(a, b, n) == 0 without a call for short strings. */
ALWAYS_INLINE int bytes_eq(const char *a, const char *b, size_t n) {
    if (n <= 8) return load_upto8(a, n) == load_upto8(b, n);
    if (n <= 16) return load64(a) == load64(b) && load64(a + n - 8) == load64(b + n - 8);
    return memcmp(a, b, n) == 0;
}

ALWAYS_INLINE Py_hash_t str_hash(PyObject *s) {
    Py_hash_t h = ((PyASCIIObject *)s)->hash;
    if (UNLIKELY(h == -1)) h = PyObject_Hash(s);
    return h;
}

/* Parse keyword arguments of a vectorcall: names[i] (interned) -> out[i] (borrowed). */
static int parse_kwargs(const char *fname, PyObject *kwnames, PyObject *const *kwvalues, PyObject *const *names,
                        PyObject **out, int nnames) {
    if (!kwnames) return 0;
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        int found = -1;
        for (int j = 0; j < nnames; j++)
            if (k == names[j]) {
                found = j;
                break;
            }
        if (found < 0) {
            for (int j = 0; j < nnames; j++) {
                int eq = PyUnicode_Compare(k, names[j]);
                if (eq == -1 && PyErr_Occurred()) return -1;
                if (eq == 0) {
                    found = j;
                    break;
                }
            }
        }
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, k);
            return -1;
        }
        out[found] = kwvalues[i];
    }
    return 0;
}

static int parse_option(PyObject *o, uint32_t *out) {
    if (!o || o == Py_None) {
        *out = 0;
        return 0;
    }
    if (!PyLong_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "option must be an int");
        return -1;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || (unsigned long)v & ~(unsigned long)(OPT_ENCODE_MASK | OPT_DECODE_MASK)) {
        PyErr_SetString(PyExc_ValueError, "option has unknown bits (use the pith.OPT_* flags)");
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int parse_max_depth(PyObject *o, uint32_t *out) {
    if (!o || o == Py_None) {
        *out = PITH_DEFAULT_MAX_DEPTH;
        return 0;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    /* Decoding recurses in C, about 200 bytes of stack per level: 10000
     * levels fit a 2 MiB thread stack (the main thread has 8 MiB). */
    if (v < 1 || v > MAX_DECODE_DEPTH) {
        PyErr_SetString(PyExc_ValueError, "max_depth must be in 1..10000");
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* ==========================================================================
 * Errors
 * ========================================================================== */

static void raise_decode_error(const char *code, size_t offset, const char *message) {
    PyObject *exc = PyObject_CallFunction(DecodeError, "ssn", message, code, (Py_ssize_t)offset);
    if (exc) {
        PyErr_SetObject(DecodeError, exc);
        Py_DECREF(exc);
    }
}

static void raise_pith_error(const pith_error *err) {
    if (err->code == PITH_ERR_NOMEM) {
        PyErr_NoMemory();
        return;
    }
    if (err->code == PITH_ERR_USAGE) {
        PyErr_Format(PyExc_SystemError, "pith: internal error (%s)", err->message ? err->message : "usage");
        return;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "%s at byte %zu", err->message ? err->message : pith_code_name(err->code),
             err->offset);
    raise_decode_error(pith_code_name(err->code), err->offset, msg);
}

/* ==========================================================================
 * Dictionary objects
 * ========================================================================== */

typedef struct {
    PyObject_HEAD
    pith_dict *dict;
} DictionaryObject;

static PyTypeObject DictionaryType;

/* A str for a pith_key, as a Symbol if it is one. */
static PyObject *key_object(const pith_key *k) {
    PyObject *s = PyUnicode_DecodeUTF8(k->ptr, (Py_ssize_t)k->len, "strict");
    if (!s || !k->symbol) return s;
    PyObject *sym = PyObject_CallOneArg((PyObject *)SymbolType, s);
    Py_DECREF(s);
    return sym;
}

/* UTF-8 of a str (Symbol included); NULL with ValueError for surrogates. */
static const char *str_utf8(PyObject *s, Py_ssize_t *len) {
    if (PyUnicode_IS_COMPACT_ASCII(s)) {
        *len = PyUnicode_GET_LENGTH(s);
        return (const char *)(((PyASCIIObject *)s) + 1);
    }
    return PyUnicode_AsUTF8AndSize(s, len);
}

/* A tuple of an iterable's items (new reference), or TypeError(msg) if `o`
 * is not iterable. A tuple because its items stay put and alive while C
 * code holds pointers into them, whatever Python code runs meanwhile. */
static PyObject *as_tuple(PyObject *o, const char *msg) {
    if (!PySequence_Check(o) && !Py_TYPE(o)->tp_iter) {
        PyErr_SetString(PyExc_TypeError, msg);
        return NULL;
    }
    return PySequence_Tuple(o);
}

static PyObject *Dictionary_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"strings", "shapes", NULL};
    PyObject *strings = NULL, *shapes = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:Dictionary", kwlist, &strings, &shapes)) return NULL;
    PyObject *sseq = NULL, *hseq = NULL, *keep = PyList_New(0);
    pith_key *skeys = NULL, *hkeys = NULL;
    size_t *hlens = NULL;
    PyObject *result = NULL;
    if (!keep) return NULL;
    if (strings == Py_None) strings = NULL;
    if (shapes == Py_None) shapes = NULL;
    if (strings && PyUnicode_Check(strings)) {
        PyErr_SetString(PyExc_TypeError, "strings must be an iterable of str, not a str");
        goto done;
    }
    sseq = strings ? as_tuple(strings, "strings must be iterable") : PyTuple_New(0);
    if (!sseq) goto done;
    hseq = shapes ? as_tuple(shapes, "shapes must be iterable") : PyTuple_New(0);
    if (!hseq) goto done;
    Py_ssize_t ns = PySequence_Fast_GET_SIZE(sseq), nh = PySequence_Fast_GET_SIZE(hseq);
    skeys = PyMem_Calloc((size_t)ns + 1, sizeof(pith_key));
    hlens = PyMem_Calloc((size_t)nh + 1, sizeof(size_t));
    if (!skeys || !hlens) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < ns; i++) {
        PyObject *s = PySequence_Fast_GET_ITEM(sseq, i);
        if (!PyUnicode_Check(s) || PyObject_TypeCheck(s, SymbolType)) {
            PyErr_SetString(PyExc_TypeError, "dictionary strings must be str (not Symbol)");
            goto done;
        }
        Py_ssize_t len;
        const char *p = str_utf8(s, &len);
        if (!p) goto done;
        skeys[i].ptr = p;
        skeys[i].len = (size_t)len;
        skeys[i].symbol = false;
    }
    size_t total = 0;
    for (Py_ssize_t i = 0; i < nh; i++) {
        PyObject *sh = as_tuple(PySequence_Fast_GET_ITEM(hseq, i), "each shape must be a sequence of keys");
        if (!sh) goto done;
        if (PyList_Append(keep, sh) < 0) {
            Py_DECREF(sh);
            goto done;
        }
        Py_DECREF(sh);
        hlens[i] = (size_t)PySequence_Fast_GET_SIZE(sh);
        total += hlens[i];
    }
    hkeys = PyMem_Calloc(total + 1, sizeof(pith_key));
    if (!hkeys) {
        PyErr_NoMemory();
        goto done;
    }
    size_t at = 0;
    for (Py_ssize_t i = 0; i < nh; i++) {
        PyObject *sh = PyList_GET_ITEM(keep, i);
        for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(sh); j++) {
            PyObject *k = PySequence_Fast_GET_ITEM(sh, j);
            if (!PyUnicode_Check(k)) {
                PyErr_SetString(PyExc_TypeError, "shape keys must be str or pith.Symbol");
                goto done;
            }
            Py_ssize_t len;
            const char *p = str_utf8(k, &len);
            if (!p) goto done;
            hkeys[at].ptr = p;
            hkeys[at].len = (size_t)len;
            hkeys[at].symbol = PyObject_TypeCheck(k, SymbolType) != 0;
            at++;
        }
    }
    pith_error err = {PITH_OK, 0, NULL};
    pith_dict *d = pith_dict_new(NULL, skeys, (size_t)ns, hkeys, hlens, (size_t)nh, &err);
    if (!d) {
        if (err.code == PITH_ERR_NOMEM) PyErr_NoMemory();
        else PyErr_Format(PyExc_ValueError, "invalid dictionary: %s", err.message ? err.message : "invalid");
        goto done;
    }
    DictionaryObject *self = (DictionaryObject *)type->tp_alloc(type, 0);
    if (!self) {
        pith_dict_free(d);
        goto done;
    }
    self->dict = d;
    result = (PyObject *)self;
done:
    PyMem_Free(skeys);
    PyMem_Free(hkeys);
    PyMem_Free(hlens);
    Py_XDECREF(sseq);
    Py_XDECREF(hseq);
    Py_DECREF(keep);
    return result;
}

static void Dictionary_dealloc(DictionaryObject *self) {
    pith_dict_free(self->dict);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Dictionary_get_id(DictionaryObject *self, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(pith_dict_id(self->dict));
}

static PyObject *Dictionary_get_strings(DictionaryObject *self, void *c) {
    (void)c;
    size_t n = pith_dict_string_count(self->dict);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        pith_key k = pith_dict_string(self->dict, i);
        PyObject *s = key_object(&k);
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, s);
    }
    return t;
}

static PyObject *Dictionary_get_shapes(DictionaryObject *self, void *c) {
    (void)c;
    size_t n = pith_dict_shape_count(self->dict);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        size_t nk;
        const pith_key *keys = pith_dict_shape(self->dict, i, &nk);
        PyObject *sh = PyTuple_New((Py_ssize_t)nk);
        if (!sh) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, sh);
        for (size_t j = 0; j < nk; j++) {
            PyObject *k = key_object(&keys[j]);
            if (!k) {
                Py_CLEAR(t);
                break;
            }
            PyTuple_SET_ITEM(sh, (Py_ssize_t)j, k);
        }
    }
    return t;
}

static PyObject *Dictionary_serialize(DictionaryObject *self, PyObject *unused) {
    (void)unused;
    size_t len;
    const uint8_t *p = pith_dict_serialized(self->dict, &len);
    return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)len);
}

static PyObject *Dictionary_parse(PyObject *cls, PyObject *data) {
    Py_buffer view;
    if (PyUnicode_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "Dictionary.parse() expects bytes, bytearray or memoryview");
        return NULL;
    }
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    pith_error err = {PITH_OK, 0, NULL};
    pith_dict *d = pith_dict_parse(NULL, view.buf, (size_t)view.len, &err);
    PyBuffer_Release(&view);
    if (!d) {
        raise_pith_error(&err);
        return NULL;
    }
    DictionaryObject *self = (DictionaryObject *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (!self) {
        pith_dict_free(d);
        return NULL;
    }
    self->dict = d;
    return (PyObject *)self;
}

static PyObject *Dictionary_build(PyObject *cls, PyObject *args, PyObject *kwds) {
    PyObject *parts = PyObject_Call(g_build_dict_fn, args, kwds);
    if (!parts) return NULL;
    PyObject *r = PyObject_Call(cls, parts, NULL);
    Py_DECREF(parts);
    return r;
}

static PyObject *Dictionary_repr(DictionaryObject *self) {
    char buf[128];
    snprintf(buf, sizeof buf, "pith.Dictionary(id=0x%016llx, strings=%zu, shapes=%zu)",
             (unsigned long long)pith_dict_id(self->dict), pith_dict_string_count(self->dict),
             pith_dict_shape_count(self->dict));
    return PyUnicode_FromString(buf);
}

static Py_hash_t Dictionary_hash(DictionaryObject *self) {
    Py_hash_t h = (Py_hash_t)pith_dict_id(self->dict);
    return h == -1 ? -2 : h;
}

static PyObject *Dictionary_richcompare(PyObject *a, PyObject *b, int op) {
    if (!PyObject_TypeCheck(b, &DictionaryType) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    size_t la, lb;
    const uint8_t *pa = pith_dict_serialized(((DictionaryObject *)a)->dict, &la);
    const uint8_t *pb = pith_dict_serialized(((DictionaryObject *)b)->dict, &lb);
    int eq = la == lb && memcmp(pa, pb, la) == 0;
    if ((op == Py_EQ) == eq) Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

static PyObject *Dictionary_reduce(DictionaryObject *self, PyObject *unused) {
    (void)unused;
    PyObject *data = Dictionary_serialize(self, NULL);
    if (!data) return NULL;
    PyObject *parse = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "parse");
    if (!parse) {
        Py_DECREF(data);
        return NULL;
    }
    return Py_BuildValue("(N(N))", parse, data);
}

static PyGetSetDef Dictionary_getset[] = {
    {"id", (getter)Dictionary_get_id, NULL, "The 64-bit dictionary id (FNV-1a of the serialization).", NULL},
    {"strings", (getter)Dictionary_get_strings, NULL, "The dictionary's strings, in table order.", NULL},
    {"shapes", (getter)Dictionary_get_shapes, NULL, "The dictionary's shapes (tuples of keys).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Dictionary_methods[] = {
    {"serialize", (PyCFunction)Dictionary_serialize, METH_NOARGS, "serialize($self, /)\n--\n\nThe dictionary's serialization (SPEC 8)."},
    {"parse", (PyCFunction)Dictionary_parse, METH_O | METH_CLASS, "parse($type, data, /)\n--\n\nA Dictionary from its serialization."},
    {"build", (PyCFunction)(void (*)(void))Dictionary_build, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "build(samples, *, max_strings=4096, max_shapes=1024, min_count=None)\n"
     "A Dictionary of the keys, shapes and repeated strings of sample values."},
    {"__reduce__", (PyCFunction)Dictionary_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DictionaryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pith.Dictionary",
    .tp_basicsize = sizeof(DictionaryObject),
    .tp_dealloc = (destructor)Dictionary_dealloc,
    .tp_repr = (reprfunc)Dictionary_repr,
    .tp_hash = (hashfunc)Dictionary_hash,
    .tp_richcompare = Dictionary_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Dictionary(strings=(), shapes=())\n--\n\n"
              "A pre-shared dictionary (SPEC section 8): strings and shapes that encoder\n"
              "and decoder agree on in advance. Immutable; share it freely.",
    .tp_methods = Dictionary_methods,
    .tp_getset = Dictionary_getset,
    .tp_new = Dictionary_new,
};

/* The dictionaries given as `dictionary=`: None, a Dictionary, or a sequence of them. */
typedef struct {
    const pith_dict *items[8];
    const pith_dict **ptr;
    size_t n;
    PyObject *seq;
} dict_list;

static int dict_list_init(dict_list *dl, PyObject *o) {
    dl->ptr = dl->items;
    dl->n = 0;
    dl->seq = NULL;
    if (!o || o == Py_None) return 0;
    if (PyObject_TypeCheck(o, &DictionaryType)) {
        dl->items[0] = ((DictionaryObject *)o)->dict;
        dl->n = 1;
        return 0;
    }
    /* A tuple: the caller's list could drop a Dictionary while it is in use. */
    dl->seq = as_tuple(o, "dictionary must be a pith.Dictionary or a sequence of them");
    if (!dl->seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(dl->seq);
    if (n > 8) {
        dl->ptr = PyMem_Malloc((size_t)n * sizeof(pith_dict *));
        if (!dl->ptr) {
            Py_CLEAR(dl->seq);
            PyErr_NoMemory();
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PySequence_Fast_GET_ITEM(dl->seq, i);
        if (!PyObject_TypeCheck(d, &DictionaryType)) {
            PyErr_SetString(PyExc_TypeError, "dictionary must be a pith.Dictionary or a sequence of them");
            if (dl->ptr != dl->items) PyMem_Free(dl->ptr);
            Py_CLEAR(dl->seq);
            return -1;
        }
        dl->ptr[i] = ((DictionaryObject *)d)->dict;
    }
    dl->n = (size_t)n;
    return 0;
}

static void dict_list_free(dict_list *dl) {
    if (dl->ptr != dl->items) PyMem_Free(dl->ptr);
    Py_CLEAR(dl->seq);
}

/* ==========================================================================
 * Encoding
 * ========================================================================== */

/* Shape cache entry: a dict key sequence (by identity) -> writer shape index.
 * Entries are appended (stable indices); sc_index hashes into them. Each key
 * position i of an entry has a hint, hints[off + i]: the entry (+1) of the
 * dict last seen as the value at that position, tried first next time. */
typedef struct {
    uint64_t hash;
    size_t off;      /* keys in the pool, hints at the same offset */
    uint32_t n;
    uint32_t shape;
} sc_ent;

#define HINT_ROOT 0                  /* hint_at: the root slot */
#define HINT_NONE ((size_t)-1)       /* hint_at: a scratch slot (uncached parent) */

/* A path component recorded while unwinding after an error. */
typedef struct {
    PyObject *key;   /* dict key (strong), or NULL for a list index */
    Py_ssize_t index;
} path_ent;

typedef struct enc_ctx {
    pith_writer *w;
    PyObject *default_fn;
    uint32_t opt;
    int depth;
    uint32_t empty_shape;   /* shape index of {} in this buffer */
    sc_ent *ents;           /* shape cache entries, in insertion order */
    size_t nents, ents_cap;
    uint32_t *sc_index;     /* open addressing: entry + 1, 0 = empty */
    size_t sc_cap;
    PyObject **pool;        /* keys of the entries (strong) */
    uint32_t *hints;        /* per key position: entry + 1 of the child dict last seen there */
    size_t pool_used, pool_cap;
    size_t hint_at;         /* where the next dict finds its hint: HINT_ROOT, HINT_NONE or 1 + hints index */
    uint32_t hint_root, hint_scratch;
    PyObject *err_msg;      /* pending EncodeError message */
    PyObject *err_cause;
    path_ent *path;
    size_t path_len, path_cap;
    PyObject *stack[MAX_DEPTH + 1]; /* containers being written (cycle diagnosis) */
} enc_ctx;

static int enc_value(enc_ctx *e, PyObject *o);

static enc_ctx *enc_ctx_new(void) {
    enc_ctx *e = PyMem_Calloc(1, sizeof(enc_ctx));
    if (!e) {
        PyErr_NoMemory();
        return NULL;
    }
    e->w = pith_writer_new(NULL);
    if (!e->w) {
        PyMem_Free(e);
        PyErr_NoMemory();
        return NULL;
    }
    e->empty_shape = PITH_NO_INDEX;
    return e;
}

/* Forget the shape cache (between buffers) and any error state. */
static void enc_ctx_clear(enc_ctx *e) {
    for (size_t i = 0; i < e->pool_used; i++) Py_DECREF(e->pool[i]);
    e->pool_used = 0;
    if (e->nents) memset(e->sc_index, 0, e->sc_cap * sizeof(uint32_t));
    e->nents = 0;
    e->hint_at = HINT_ROOT;
    e->hint_root = e->hint_scratch = 0;
    e->empty_shape = PITH_NO_INDEX;
    e->depth = 0;
    Py_CLEAR(e->err_msg);
    Py_CLEAR(e->err_cause);
    for (size_t i = 0; i < e->path_len; i++) Py_XDECREF(e->path[i].key);
    e->path_len = 0;
    e->default_fn = NULL;
}

static void enc_ctx_free(enc_ctx *e) {
    if (!e) return;
    enc_ctx_clear(e);
    pith_writer_free(e->w);
    PyMem_Free(e->ents);
    PyMem_Free(e->sc_index);
    PyMem_Free(e->pool);
    PyMem_Free(e->hints);
    PyMem_Free(e->path);
    PyMem_Free(e);
}

static enc_ctx *g_enc_pool;

static enc_ctx *enc_acquire(void) {
    enc_ctx *e = g_enc_pool;
    if (e) {
        g_enc_pool = NULL;
        return e;
    }
    return enc_ctx_new();
}

static void enc_release(enc_ctx *e, size_t bytes_written) {
    enc_ctx_clear(e);
    if (g_enc_pool || bytes_written > POOL_RELEASE_BYTES || e->sc_cap > 8192 || e->pool_cap > 16384) {
        enc_ctx_free(e);
        return;
    }
    g_enc_pool = e;
}

/* --- errors ------------------------------------------------------------- */

NOINLINE static int enc_fail(enc_ctx *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (!msg) return -1;
    Py_XSETREF(e->err_msg, msg);
    return -1;
}

NOINLINE static int enc_fail_type(enc_ctx *e, PyObject *o) {
    return enc_fail(e, "Type is not Pith serializable: %s", Py_TYPE(o)->tp_name);
}

NOINLINE static int enc_writer_fail(enc_ctx *e) {
    const pith_error *err = pith_writer_error(e->w);
    if (err->code == PITH_ERR_NOMEM) {
        PyErr_NoMemory();
        return -1;
    }
    return enc_fail(e, "%s", err->message ? err->message : pith_code_name(err->code));
}

NOINLINE static void enc_path_push(enc_ctx *e, PyObject *key, Py_ssize_t index) {
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
NOINLINE static void enc_raise(enc_ctx *e) {
    if (!e->err_msg) return; /* a Python exception is already set */
    PyErr_Clear();
    PyObject *parts = PyList_New(0);
    PyObject *dollar = PyUnicode_FromString("$");
    if (!parts || !dollar || PyList_Append(parts, dollar) < 0) goto fail;
    for (size_t i = e->path_len; i > 0; i--) {
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
        PyObject *msg = PyUnicode_FromFormat("%U at %U", e->err_msg, path);
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
    Py_XDECREF(parts);
    Py_XDECREF(dollar);
}

/* --- scalars ------------------------------------------------------------- */

ALWAYS_INLINE int enc_str(enc_ctx *e, PyObject *o) {
    const char *p;
    Py_ssize_t n;
    if (LIKELY(PyUnicode_IS_COMPACT_ASCII(o))) {
        p = (const char *)(((PyASCIIObject *)o) + 1);
        n = PyUnicode_GET_LENGTH(o);
    } else {
        p = PyUnicode_AsUTF8AndSize(o, &n);
        if (UNLIKELY(!p)) {
            PyErr_Clear();
            return enc_fail(e, "str is not valid Unicode (it contains a surrogate)");
        }
    }
    if (UNLIKELY(!pith_write_string_utf8(e->w, p, (size_t)n))) return enc_writer_fail(e);
    return 0;
}

NOINLINE static int enc_symbol(enc_ctx *e, PyObject *o) {
    Py_ssize_t n;
    const char *p = str_utf8(o, &n);
    if (!p) {
        PyErr_Clear();
        return enc_fail(e, "str is not valid Unicode (it contains a surrogate)");
    }
    if (!pith_write_symbol(e->w, p, (size_t)n)) return enc_writer_fail(e);
    return 0;
}

NOINLINE static int enc_bigint(enc_ctx *e, PyObject *o) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (!overflow) return pith_write_int(e->w, v) ? 0 : enc_writer_fail(e);
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (!(u == (unsigned long long)-1 && PyErr_Occurred())) return pith_write_uint(e->w, u) ? 0 : enc_writer_fail(e);
        PyErr_Clear();
    }
    /* Exact int first: a subclass's __neg__ or __index__ must not choose the bytes. */
    PyObject *exact = PyNumber_Index(o); /* an exact int (3.10+), without calling __index__ on int subclasses */
    if (!exact) return -1;
    if (!PyLong_CheckExact(exact)) {
        Py_DECREF(exact);
        return enc_fail(e, "int subclass %s did not give an exact int", Py_TYPE(o)->tp_name);
    }
    PyObject *mag = overflow < 0 ? PyNumber_Negative(exact) : Py_NewRef(exact);
    Py_DECREF(exact);
    if (!mag) return -1;
    int rc = -1;
    size_t nbits = _PyLong_NumBits(mag);
    if (nbits == (size_t)-1 && PyErr_Occurred()) goto done;
    size_t nbytes = (nbits + 7) / 8;
    unsigned char *buf = PyMem_Malloc(nbytes ? nbytes : 1);
    if (!buf) {
        PyErr_NoMemory();
        goto done;
    }
#if PY_VERSION_HEX >= 0x030D0000
    int r = _PyLong_AsByteArray((PyLongObject *)mag, buf, nbytes, 1, 0, 1);
#else
    int r = _PyLong_AsByteArray((PyLongObject *)mag, buf, nbytes, 1, 0);
#endif
    if (r == 0) rc = pith_write_bigint(e->w, overflow < 0, buf, nbytes) ? 0 : enc_writer_fail(e);
    PyMem_Free(buf);
done:
    Py_DECREF(mag);
    return rc;
}

ALWAYS_INLINE int enc_int(enc_ctx *e, PyObject *o) {
#if PY_VERSION_HEX < 0x030C0000
    Py_ssize_t size = Py_SIZE(o);
    if (LIKELY(size <= 1 && size >= -1)) {
        int64_t v = size ? (int64_t)((PyLongObject *)o)->ob_digit[0] : 0;
        if (size < 0) v = -v;
        return LIKELY(pith_write_int(e->w, v)) ? 0 : enc_writer_fail(e);
    }
#else
    if (PyUnstable_Long_IsCompact((PyLongObject *)o)) {
        return LIKELY(pith_write_int(e->w, (int64_t)PyUnstable_Long_CompactValue((PyLongObject *)o)))
                   ? 0
                   : enc_writer_fail(e);
    }
#endif
    return enc_bigint(e, o);
}

static int enc_dict(enc_ctx *e, PyObject *o);
static int enc_sequence(enc_ctx *e, PyObject *o, PyObject **items, Py_ssize_t n, int is_list);
NOINLINE static int enc_other(enc_ctx *e, PyObject *o);

/* One value: the common types inline (used in the container loops). `at` is
 * the shape hint slot for a dict in this position (see hint_slot); it is only
 * stored for values that may contain dicts. */
#define HINT_OF(ent, i) ((ent) >= 0 ? 1 + e->ents[(ent)].off + (size_t)(i) : HINT_NONE)

ALWAYS_INLINE int enc_fast_at(enc_ctx *e, PyObject *o, Py_ssize_t ent, Py_ssize_t i) {
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type) return enc_str(e, o);
    if (t == &PyLong_Type) return enc_int(e, o);
    if (t == &PyFloat_Type) return LIKELY(pith_write_double(e->w, PyFloat_AS_DOUBLE(o))) ? 0 : enc_writer_fail(e);
    if (t == &PyBool_Type) return LIKELY(pith_write_bool(e->w, o == Py_True)) ? 0 : enc_writer_fail(e);
    if (o == Py_None) return LIKELY(pith_write_null(e->w)) ? 0 : enc_writer_fail(e);
    if (i >= 0) e->hint_at = HINT_OF(ent, i); /* i < 0: keep hint_at (list elements) */
    if (t == &PyDict_Type) return enc_dict(e, o);
    if (t == &PyList_Type) return enc_sequence(e, o, NULL, PyList_GET_SIZE(o), 1);
    return enc_other(e, o);
}

ALWAYS_INLINE int enc_fast(enc_ctx *e, PyObject *o) { return enc_fast_at(e, o, -1, -1); }

/* --- containers --------------------------------------------------------- */

NOINLINE static int enc_depth_fail(enc_ctx *e, PyObject *o) {
    for (int i = 0; i < e->depth; i++)
        if (e->stack[i] == o) return enc_fail(e, "circular reference (%s)", Py_TYPE(o)->tp_name);
    return enc_fail(e, "nesting deeper than %d levels", MAX_DEPTH);
}

ALWAYS_INLINE int enc_enter(enc_ctx *e, PyObject *o) {
    if (UNLIKELY(e->depth >= MAX_DEPTH)) return enc_depth_fail(e, o);
    e->stack[e->depth++] = o;
    return 0;
}

static NOINLINE int enc_sequence(enc_ctx *e, PyObject *o, PyObject **items, Py_ssize_t n, int is_list) {
    if (enc_enter(e, o) < 0) return -1;
    if (UNLIKELY(!pith_write_array_begin(e->w, (size_t)n))) {
        e->depth--;
        return enc_writer_fail(e);
    }
    Py_INCREF(o);
    size_t at = e->hint_at; /* the elements share their list's hint */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (is_list && UNLIKELY(PyList_GET_SIZE(o) != n)) {
            enc_fail(e, "list changed size during encoding");
            goto fail;
        }
        PyObject *v = is_list ? PyList_GET_ITEM(o, i) : items[i];
        e->hint_at = at;
        if (UNLIKELY(enc_fast_at(e, v, -1, -1) < 0)) {
            enc_path_push(e, NULL, i);
            goto fail;
        }
    }
    Py_DECREF(o);
    e->depth--;
    if (UNLIKELY(!pith_write_array_end(e->w))) return enc_writer_fail(e);
    return 0;
fail:
    Py_DECREF(o);
    e->depth--;
    return -1;
}

ALWAYS_INLINE uint64_t id_hash(PyObject *const *keys, Py_ssize_t n) {
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

ALWAYS_INLINE uint32_t *hint_slot(enc_ctx *e, size_t at) {
    if (at == HINT_ROOT) return &e->hint_root;
    if (at == HINT_NONE) return &e->hint_scratch;
    return &e->hints[at - 1];
}

ALWAYS_INLINE int keys_same(PyObject *const *a, PyObject *const *b, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i == n;
}

/* After the writer refused a shape: put the first key that repeats an earlier
 * one (as a string or symbol of the same text) in the error's path. */
NOINLINE static void enc_path_to_repeated_key(enc_ctx *e, PyObject *const *keys, Py_ssize_t n) {
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
NOINLINE static Py_ssize_t enc_map_open_slow(enc_ctx *e, PyObject *const *keys, Py_ssize_t n, int checked) {
    if (n == 0) {
        if (e->empty_shape != PITH_NO_INDEX) {
            if (UNLIKELY(!pith_write_map_shape(e->w, e->empty_shape))) return enc_writer_fail(e), -2;
            return -1;
        }
        if (UNLIKELY(!pith_write_map_begin_utf8(e->w, NULL, 0))) return enc_writer_fail(e), -2;
        e->empty_shape = pith_writer_last_shape(e->w);
        return -1;
    }
    uint64_t h = id_hash(keys, n);
    if (e->sc_cap) {
        size_t mask = e->sc_cap - 1, j = (size_t)h & mask;
        for (uint32_t pos; (pos = e->sc_index[j]) != 0; j = (j + 1) & mask) {
            const sc_ent *s = &e->ents[pos - 1];
            if (s->hash == h && s->n == (uint32_t)n && keys_same(e->pool + s->off, keys, n)) {
                if (UNLIKELY(!pith_write_map_shape(e->w, s->shape))) return enc_writer_fail(e), -2;
                return (Py_ssize_t)pos - 1;
            }
        }
    }
    pith_key local[32];
    pith_key *pk = n <= 32 ? local : PyMem_Malloc((size_t)n * sizeof(pith_key));
    if (!pk) {
        PyErr_NoMemory();
        return -2;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = keys[i];
        Py_ssize_t len;
        const char *p = str_utf8(k, &len);
        if (UNLIKELY(!p)) {
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
    bool ok = checked ? pith_write_map_begin(e->w, pk, (size_t)n) : pith_write_map_begin_utf8(e->w, pk, (size_t)n);
    if (pk != local) PyMem_Free(pk);
    if (UNLIKELY(!ok)) {
        enc_writer_fail(e);
        if (pith_writer_error(e->w)->code == PITH_ERR_UNREPRESENTABLE) enc_path_to_repeated_key(e, keys, n);
        return -2;
    }
    uint32_t shape = pith_writer_last_shape(e->w);
    return shape != PITH_NO_INDEX ? sc_insert(e, h, keys, n, shape) : -1;
}

/* Open a shaped map: first the hint (the dict last seen in the same place),
 * then the slow path, which refreshes the hint. Returns as enc_map_open_slow. */
ALWAYS_INLINE Py_ssize_t enc_map_open(enc_ctx *e, size_t at, PyObject *const *keys, Py_ssize_t n, int checked) {
    uint32_t hint = *hint_slot(e, at);
    if (LIKELY(hint != 0 && hint <= e->nents)) {
        const sc_ent *s = &e->ents[hint - 1];
        if (s->n == (uint32_t)n && keys_same(e->pool + s->off, keys, n)) {
            if (UNLIKELY(!pith_write_map_shape(e->w, s->shape))) return enc_writer_fail(e), -2;
            return (Py_ssize_t)hint - 1;
        }
    }
    Py_ssize_t ent = enc_map_open_slow(e, keys, n, checked);
    if (ent >= 0) *hint_slot(e, at) = (uint32_t)ent + 1;
    return ent;
}

static int enc_dict_general(enc_ctx *e, PyObject *o);

static NOINLINE int enc_dict(enc_ctx *e, PyObject *o) {
    Py_ssize_t n = PyDict_GET_SIZE(o);
    PyObject *local[64];
    PyObject **keys = local, **vals;
    if (n > 32) {
        keys = PyMem_Malloc((size_t)n * 2 * sizeof(PyObject *));
        if (!keys) {
            PyErr_NoMemory();
            return -1;
        }
    }
    vals = keys + (n > 32 ? n : 32);
    Py_ssize_t i = 0;
    PyObject *k, *v;
    int textual = 1, owned = 0;
#if PITH_DICT_INTERNALS
    PyDictObject *mp = (PyDictObject *)o;
    const uint64_t version = mp->ma_version_tag;
    if (LIKELY(mp->ma_values == NULL)) {
        pith_dict_keys *dk = (pith_dict_keys *)mp->ma_keys;
        Py_ssize_t nent = dk->dk_nentries;
        if (LIKELY(dk->dk_kind == PITH_DK_UNICODE)) {
            /* all keys are exact str */
            const pith_dict_uentry *ep = PITH_DK_ENTRIES(dk);
            for (Py_ssize_t j = 0; j < nent; j++) {
                if (ep[j].me_value) {
                    keys[i] = ep[j].me_key;
                    vals[i++] = ep[j].me_value;
                }
            }
        } else {
            const pith_dict_entry *ep = PITH_DK_ENTRIES(dk);
            for (Py_ssize_t j = 0; j < nent; j++) {
                if (ep[j].me_value) {
                    PyTypeObject *kt = Py_TYPE(ep[j].me_key);
                    if (kt != &PyUnicode_Type && kt != SymbolType) textual = 0;
                    keys[i] = ep[j].me_key;
                    vals[i++] = ep[j].me_value;
                }
            }
        }
    } else
#endif
    {
        /* Portable path: hold references, so that Python code run while
         * encoding cannot free what is still to be written. */
        owned = 1;
        Py_ssize_t pos = 0;
        while (i < n && PyDict_Next(o, &pos, &k, &v)) {
            PyTypeObject *kt = Py_TYPE(k);
            if (kt != &PyUnicode_Type && kt != SymbolType) textual = 0;
            keys[i] = Py_NewRef(k);
            vals[i++] = Py_NewRef(v);
        }
        n = i;
    }
    int rc = -1;
    if (UNLIKELY(!textual)) {
        rc = enc_dict_general(e, o);
        goto done;
    }
    size_t at = e->hint_at;
    if (enc_enter(e, o) < 0) goto done;
    Py_ssize_t ent = enc_map_open(e, at, keys, n, 0);
    if (UNLIKELY(ent == -2)) {
        e->depth--;
        goto done;
    }
    Py_INCREF(o);
    for (i = 0; i < n; i++) {
        if (UNLIKELY(enc_fast_at(e, vals[i], ent, i) < 0)) {
#if PITH_DICT_INTERNALS
            /* a changed dict may have freed the borrowed key */
            if (!owned && mp->ma_version_tag != version) {
                enc_fail(e, "dict changed during encoding");
                goto fail;
            }
#endif
            enc_path_push(e, keys[i], 0);
            goto fail;
        }
        /* The values are borrowed: if Python code run while encoding (a
         * `default`, a tzinfo) changed this dict, stop before using them. */
#if PITH_DICT_INTERNALS
        if (UNLIKELY(!owned && mp->ma_version_tag != version)) {
            enc_fail(e, "dict changed during encoding");
            goto fail;
        }
#endif
    }
    Py_DECREF(o);
    e->depth--;
    if (UNLIKELY(!pith_write_map_end(e->w))) {
        enc_writer_fail(e);
        goto done;
    }
    rc = 0;
    goto done;
fail:
    Py_DECREF(o);
    e->depth--;
done:
    if (owned) {
        for (Py_ssize_t j = 0; j < n; j++) {
            Py_DECREF(keys[j]);
            Py_DECREF(vals[j]);
        }
    }
    if (keys != local) PyMem_Free(keys);
    return rc;
}

static int enc_default(enc_ctx *e, PyObject *o);

/* A map key as the value Pith will see (new reference), NULL on error. */
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
    if (PyObject_IsInstance(k, g_uuid_type) == 1 && !(e->opt & OPT_PASSTHROUGH_UUID)) return PyObject_Str(k);
    if (!e->default_fn) {
        enc_fail_type(e, k);
        return NULL;
    }
    PyObject *r = PyObject_CallOneArg(e->default_fn, k);
    if (!r) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb) PyException_SetTraceback(value, tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        Py_XSETREF(e->err_cause, value);
        enc_fail_type(e, k);
    }
    return r;
}

/* A map given as a sequence of (key, value) pairs (a dict's items, or a
 * pith.Map): convert the keys, then a shaped map if they all became strings,
 * else a generic map. Keys that Python holds apart may be equal as Pith
 * values (NaNs of one payload, str subclasses, enum members and their
 * values, the pairs of a Map): the writer refuses those. */
static int enc_pairs(enc_ctx *e, PyObject *o, PyObject *items) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    PyObject **pairs = PySequence_Fast_ITEMS(items);
    PyObject *ckeys = PyList_New(n);
    int rc = -1, textual = 1;
    if (!ckeys) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = pairs[i];
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            enc_fail(e, "map pairs must be (key, value) tuples");
            goto done;
        }
        PyObject *k = PyTuple_GET_ITEM(pair, 0);
        PyObject *ck = enc_convert_key(e, k);
        if (!ck) {
            enc_path_push(e, k, 0);
            goto done;
        }
        PyList_SET_ITEM(ckeys, i, ck);
        if (Py_TYPE(ck) != &PyUnicode_Type && Py_TYPE(ck) != SymbolType) textual = 0;
    }
    size_t at = e->hint_at;
    Py_ssize_t ent = -1;
    if (enc_enter(e, o) < 0) goto done;
    if (textual) {
        ent = enc_map_open(e, at, &PyList_GET_ITEM(ckeys, 0), n, 1);
        if (ent == -2) {
            e->depth--;
            goto done;
        }
    } else {
        if (UNLIKELY(!pith_write_generic_map_begin(e->w, (size_t)n))) {
            e->depth--;
            enc_writer_fail(e);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = pairs[i];
        e->hint_at = HINT_NONE;
        if (!textual && enc_value(e, PyList_GET_ITEM(ckeys, i)) < 0) {
            enc_path_push(e, PyTuple_GET_ITEM(pair, 0), 0);
            e->depth--;
            goto done;
        }
        e->hint_at = HINT_OF(ent, i);
        if (enc_value(e, PyTuple_GET_ITEM(pair, 1)) < 0) {
            enc_path_push(e, PyTuple_GET_ITEM(pair, 0), 0);
            e->depth--;
            goto done;
        }
    }
    e->depth--;
    if (UNLIKELY(!pith_write_map_end(e->w))) {
        enc_writer_fail(e);
        goto done;
    }
    rc = 0;
done:
    Py_DECREF(ckeys);
    return rc;
}

static int enc_dict_general(enc_ctx *e, PyObject *o) {
    PyObject *items = PyDict_Items(o);
    if (!items) return -1;
    int rc = enc_pairs(e, o, items);
    Py_DECREF(items);
    return rc;
}

/* A dict subclass in the order its items() gives: an OrderedDict moved
 * with move_to_end keeps its order apart from the underlying dict's. */
NOINLINE static int enc_dict_subclass(enc_ctx *e, PyObject *o) {
    PyObject *items = PyMapping_Items(o);
    if (!items) return -1;
    int rc = enc_pairs(e, o, items);
    Py_DECREF(items);
    return rc;
}

NOINLINE static int enc_map_object(enc_ctx *e, PyObject *o) {
    PyObject *pairs = PyObject_GetAttrString(o, "pairs");
    if (!pairs) return -1;
    PyObject *items = as_tuple(pairs, "Map.pairs must be a sequence");
    Py_DECREF(pairs);
    if (!items) return -1;
    Py_INCREF(o);
    int rc = enc_pairs(e, o, items);
    Py_DECREF(o);
    Py_DECREF(items);
    return rc;
}

NOINLINE static int enc_datetime(enc_ctx *e, PyObject *o) {
    int y = PyDateTime_GET_YEAR(o), mo = PyDateTime_GET_MONTH(o), d = PyDateTime_GET_DAY(o);
    int h = PyDateTime_DATE_GET_HOUR(o), mi = PyDateTime_DATE_GET_MINUTE(o), s = PyDateTime_DATE_GET_SECOND(o);
    int us = PyDateTime_DATE_GET_MICROSECOND(o);
    int64_t local = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + s;
    pith_timestamp ts;
    ts.nanos = (uint32_t)us * 1000u;
    ts.offset = 0;
    PyObject *tz = PyDateTime_DATE_GET_TZINFO(o);
    if (tz == g_utc) {
        ts.zone = PITH_ZONE_UTC;
        ts.seconds = local;
    } else if (tz == Py_None) {
        ts.zone = (e->opt & OPT_NAIVE_UTC) ? PITH_ZONE_UTC : PITH_ZONE_FLOATING;
        ts.seconds = local;
    } else {
        Py_INCREF(o);
        PyObject *off = PyObject_CallMethodOneArg(tz, s_utcoffset, o);
        Py_DECREF(o);
        if (!off) return -1;
        if (off == Py_None) {
            Py_DECREF(off);
            ts.zone = (e->opt & OPT_NAIVE_UTC) ? PITH_ZONE_UTC : PITH_ZONE_FLOATING;
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
            if (secs / 60 > PITH_MAX_OFFSET || secs / 60 < -PITH_MAX_OFFSET)
                return enc_fail(e, "datetime UTC offset beyond 23:59");
            ts.zone = PITH_ZONE_OFFSET;
            ts.offset = (int16_t)(secs / 60);
            ts.seconds = local - secs;
        }
    }
    if (!pith_write_timestamp(e->w, &ts)) return enc_writer_fail(e);
    return 0;
}

static int get_int_attr(PyObject *o, PyObject *name, long long *out) {
    PyObject *v = PyObject_GetAttr(o, name);
    if (!v) return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

NOINLINE static int enc_timestamp(enc_ctx *e, PyObject *o) {
    long long seconds, nanos, zone, offset;
    if (get_int_attr(o, s_seconds, &seconds) < 0 || get_int_attr(o, s_nanos, &nanos) < 0 ||
        get_int_attr(o, s_zone, &zone) < 0 || get_int_attr(o, s_offset, &offset) < 0)
        return -1;
    if (nanos < 0 || nanos > 999999999 || zone < 0 || zone > 2 || offset < -PITH_MAX_OFFSET ||
        offset > PITH_MAX_OFFSET)
        return enc_fail(e, "invalid pith.Timestamp fields");
    pith_timestamp ts = {(int64_t)seconds, (uint32_t)nanos, (int16_t)offset, (uint8_t)zone};
    if (!pith_write_timestamp(e->w, &ts)) return enc_writer_fail(e);
    return 0;
}

NOINLINE static int enc_ext(enc_ctx *e, PyObject *o) {
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
    if (type < 0 || type > PITH_MAX_EXT_TYPE) rc = enc_fail(e, "extension type outside 0..65535");
    else if (!pith_write_ext(e->w, (uint32_t)type, view.buf, (size_t)view.len)) rc = enc_writer_fail(e);
    PyBuffer_Release(&view);
    Py_DECREF(data);
    return rc;
}

NOINLINE static int enc_buffer(enc_ctx *e, PyObject *o) {
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        PyObject *b = PyObject_CallMethod(o, "tobytes", NULL);
        if (!b) return -1;
        int rc = pith_write_binary(e->w, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b)) ? 0 : enc_writer_fail(e);
        Py_DECREF(b);
        return rc;
    }
    int rc = pith_write_binary(e->w, view.buf, (size_t)view.len) ? 0 : enc_writer_fail(e);
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

static int enc_converted(enc_ctx *e, PyObject *o, PyObject *r) {
    /* The replacement of `o` (enum value, dataclass dict, default result) counts as a level. */
    if (!r) return -1;
    if (enc_enter(e, o) < 0) {
        Py_DECREF(r);
        return -1;
    }
    int rc = enc_value(e, r);
    e->depth--;
    Py_DECREF(r);
    return rc;
}

static int enc_default(enc_ctx *e, PyObject *o) {
    if (!e->default_fn) return enc_fail_type(e, o);
    if (enc_enter(e, o) < 0) return -1;
    PyObject *r = PyObject_CallOneArg(e->default_fn, o);
    e->depth--;
    if (!r) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb) PyException_SetTraceback(value, tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        Py_XSETREF(e->err_cause, value);
        return enc_fail_type(e, o);
    }
    return enc_converted(e, o, r);
}

static int enc_other_kept(enc_ctx *e, PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    uint32_t opt = e->opt;
    if (t == SymbolType) return enc_symbol(e, o);
    if (t == &PyTuple_Type) return enc_sequence(e, o, &PyTuple_GET_ITEM(o, 0), PyTuple_GET_SIZE(o), 0);
    if (PyDateTime_Check(o) && !(opt & OPT_PASSTHROUGH_DATETIME)) {
        if (t == PyDateTimeAPI->DateTimeType || !(opt & OPT_PASSTHROUGH_SUBCLASS)) return enc_datetime(e, o);
    }
    if (t == TimestampType) return enc_timestamp(e, o);
    if (t == ExtType) return enc_ext(e, o);
    if (t == MapType) return enc_map_object(e, o);
    if (t == &PyBytes_Type) {
        return pith_write_binary(e->w, PyBytes_AS_STRING(o), (size_t)PyBytes_GET_SIZE(o)) ? 0 : enc_writer_fail(e);
    }
    if (t == &PyByteArray_Type || t == &PyMemoryView_Type) return enc_buffer(e, o);
    if (!(opt & OPT_PASSTHROUGH_SUBCLASS)) {
        if (PyObject_IsInstance(o, g_enum_type) == 1 && !(opt & OPT_PASSTHROUGH_ENUM))
            return enc_converted(e, o, PyObject_GetAttr(o, s_value));
        if (PyUnicode_Check(o)) {
            if (PyObject_TypeCheck(o, SymbolType)) return enc_symbol(e, o);
            return enc_str(e, o);
        }
        if (PyLong_Check(o)) return enc_bigint(e, o);
        if (PyFloat_Check(o)) return pith_write_double(e->w, PyFloat_AS_DOUBLE(o)) ? 0 : enc_writer_fail(e);
        if (PyDict_Check(o)) return enc_dict_subclass(e, o);
        if (PyList_Check(o)) return enc_sequence(e, o, NULL, PyList_GET_SIZE(o), 1);
        if (PyTuple_Check(o)) return enc_sequence(e, o, &PyTuple_GET_ITEM(o, 0), PyTuple_GET_SIZE(o), 0);
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
    if (!(opt & OPT_PASSTHROUGH_UUID) && PyObject_IsInstance(o, g_uuid_type) == 1)
        return enc_converted(e, o, PyObject_Str(o));
    if (PyErr_Occurred()) return -1;
    return enc_default(e, o);
}

/* Values that are not of the common types may run Python code (a `default`,
 * a tzinfo, an enum's value, a dataclass field) that drops them from their
 * list or dict: hold a reference while they are used. */
NOINLINE static int enc_other(enc_ctx *e, PyObject *o) {
    Py_INCREF(o);
    int rc = enc_other_kept(e, o);
    Py_DECREF(o);
    return rc;
}

static int enc_value(enc_ctx *e, PyObject *o) { return enc_fast(e, o); }

/* Encode one top-level value with e (already started). 0 or -1 with the exception set. */
static int enc_top(enc_ctx *e, PyObject *o) {
    e->hint_at = HINT_ROOT;
    if (enc_value(e, o) < 0) {
        enc_raise(e);
        return -1;
    }
    return 0;
}

static PyObject *names_dumps[3];

static PyObject *pith_dumps(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "dumps() takes exactly 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    PyObject *kw[3] = {NULL, NULL, NULL};
    if (kwnames && parse_kwargs("dumps", kwnames, args + nargs, names_dumps, kw, 3) < 0) return NULL;
    uint32_t opt = 0;
    if (kw[0] && parse_option(kw[0], &opt) < 0) return NULL;
    const pith_dict *dict = NULL;
    if (kw[2] && kw[2] != Py_None) {
        if (!PyObject_TypeCheck(kw[2], &DictionaryType)) {
            PyErr_SetString(PyExc_TypeError, "dictionary must be a pith.Dictionary");
            return NULL;
        }
        dict = ((DictionaryObject *)kw[2])->dict;
    }
    PyObject *dflt = kw[1] == Py_None ? NULL : kw[1];
    if (dflt && !PyCallable_Check(dflt)) {
        PyErr_SetString(PyExc_TypeError, "default must be callable");
        return NULL;
    }
    enc_ctx *e = enc_acquire();
    if (!e) return NULL;
    e->opt = opt;
    e->default_fn = dflt;
    PyObject *result = NULL;
    size_t len = 0;
    Py_XINCREF(kw[2]); /* the dictionary must outlive the encoding */
    Py_XINCREF(dflt);
    if (!pith_writer_start(e->w, dict, 0)) {
        PyErr_NoMemory();
    } else if (enc_top(e, args[0]) == 0) {
        const uint8_t *data = pith_writer_data(e->w, &len);
        result = PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)len);
    }
    Py_XDECREF(dflt);
    Py_XDECREF(kw[2]);
    enc_release(e, len);
    return result;
}

/* ==========================================================================
 * Decoding
 * ========================================================================== */

typedef struct {
    size_t off;      /* keys in kpool */
    uint32_t n;
    uint8_t set;
    uint8_t collide; /* two keys are equal in Python (a symbol and a string of one text) */
    PyObject *tmpl;  /* a dict of these keys (values None) whose table new dicts copy, or NULL */
} sh_ent;

typedef struct dec_ctx {
    pith_reader *r;
    uint32_t opt;
    int strong;               /* scache holds references (streams); else borrowed, see dec_str */
    PyObject **scache;        /* str object per string-table index */
    size_t scache_cap, scache_hi;
    sh_ent *shapes;           /* key objects per shape index */
    size_t shapes_cap, shapes_hi;
    PyObject **kpool;
    size_t kpool_used, kpool_cap;
    PyObject **lkeys;         /* long key objects per string-table index: [2i] str, [2i+1] Symbol */
    size_t lkeys_cap, lkeys_hi; /* slots covered, and 1 + the highest set */
} dec_ctx;

static dec_ctx *dec_ctx_new(void) {
    dec_ctx *d = PyMem_Calloc(1, sizeof(dec_ctx));
    if (!d) {
        PyErr_NoMemory();
        return NULL;
    }
    d->r = pith_reader_new(NULL);
    if (!d->r) {
        PyMem_Free(d);
        PyErr_NoMemory();
        return NULL;
    }
    return d;
}

static void dec_ctx_clear(dec_ctx *d) {
    if (d->strong) {
        for (size_t i = 0; i < d->scache_hi; i++) Py_CLEAR(d->scache[i]);
    } else if (d->scache_hi) {
        memset(d->scache, 0, d->scache_hi * sizeof(PyObject *));
    }
    d->scache_hi = 0;
    for (size_t i = 0; i < d->kpool_used; i++) Py_DECREF(d->kpool[i]);
    d->kpool_used = 0;
    for (size_t i = 0; i < d->shapes_hi; i++) Py_XDECREF(d->shapes[i].tmpl);
    if (d->shapes_hi) memset(d->shapes, 0, d->shapes_hi * sizeof(sh_ent));
    d->shapes_hi = 0;
    for (size_t i = 0; i < d->lkeys_hi; i++) Py_CLEAR(d->lkeys[i]);
    d->lkeys_hi = 0;
}

static void dec_ctx_free(dec_ctx *d) {
    if (!d) return;
    dec_ctx_clear(d);
    pith_reader_free(d->r);
    PyMem_Free(d->scache);
    PyMem_Free(d->shapes);
    PyMem_Free(d->kpool);
    PyMem_Free(d->lkeys);
    PyMem_Free(d);
}

static dec_ctx *g_dec_pool;

static dec_ctx *dec_acquire(void) {
    dec_ctx *d = g_dec_pool;
    if (d) {
        g_dec_pool = NULL;
        return d;
    }
    return dec_ctx_new();
}

static void dec_release(dec_ctx *d, size_t input_len) {
    dec_ctx_clear(d);
    pith_reader_set_max_depth(d->r, PITH_DEFAULT_MAX_DEPTH);
    if (g_dec_pool || input_len > POOL_RELEASE_BYTES || d->scache_cap > 65536 || d->shapes_cap > 65536 ||
        d->kpool_cap > 65536 || d->lkeys_cap / 2 > 65536) {
        dec_ctx_free(d);
        return;
    }
    g_dec_pool = d;
}

NOINLINE static PyObject *dec_fail(dec_ctx *d) {
    raise_pith_error(pith_reader_error(d->r));
    return NULL;
}

static PyObject *dec_next(dec_ctx *d);
static PyObject *dec_item(dec_ctx *d, pith_item *it);
static PyObject *dec_map(dec_ctx *d, const pith_item *it);
static PyObject *dec_array(dec_ctx *d, size_t n);
static PyObject *dec_fail(dec_ctx *d);

/* --- strings ------------------------------------------------------------- */

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
/* A compact ASCII str, initialised as PyUnicode_New(n, 127) does, minus its
 * generic size and kind checks (3.11 layout). */
ALWAYS_INLINE PyObject *new_ascii(const char *p, size_t n) {
    PyASCIIObject *o = (PyASCIIObject *)PyObject_Malloc(sizeof(PyASCIIObject) + n + 1);
    if (UNLIKELY(!o)) return PyErr_NoMemory();
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
ALWAYS_INLINE PyObject *new_ascii(const char *p, size_t n) {
    PyObject *s = PyUnicode_New((Py_ssize_t)n, 127);
    if (LIKELY(s != NULL)) memcpy(PyUnicode_1BYTE_DATA(s), p, n);
    return s;
}
#endif

ALWAYS_INLINE PyObject *make_str(const char *p, size_t n, uint32_t flags) {
    if (LIKELY(flags & PITH_ITEM_ASCII)) {
        if (n > 1) return new_ascii(p, n);
        if (n == 1) return PyUnicode_FromOrdinal((unsigned char)p[0]);
        return PyUnicode_New(0, 0);
    }
    return PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "strict");
}

/* Make a zero-filled per-index array of objects hold slot `slot`: 0, or -1
 * with MemoryError. */
NOINLINE static int objects_cover(PyObject ***arr, size_t *cap, size_t slot) {
    if (slot < *cap) return 0;
    size_t n = *cap ? *cap : 256;
    while (n <= slot) n *= 2;
    PyObject **p = PyMem_Realloc(*arr, n * sizeof(PyObject *));
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    memset(p + *cap, 0, (n - *cap) * sizeof(PyObject *));
    *arr = p;
    *cap = n;
    return 0;
}

/* The str of a string item. A string-table entry is created once per buffer
 * and every reference to it returns the same object. In a single loads()
 * call the cache borrows: every str this returns ends up held by the value
 * being built until the call returns (callers that drop one, like symbol
 * names, use make_str directly). A stream decoder's values outlive frames,
 * so its cache holds references (d->strong). */
ALWAYS_INLINE PyObject *dec_str(dec_ctx *d, const pith_item *it) {
    uint32_t idx = it->v.str.index;
    if (idx == PITH_NO_INDEX) return make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (LIKELY(idx < d->scache_cap)) {
        PyObject *s = d->scache[idx];
        if (s) {
            Py_INCREF(s);
            return s;
        }
    } else if (objects_cover(&d->scache, &d->scache_cap, idx) < 0) {
        return NULL;
    }
    PyObject *s = make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (UNLIKELY(!s)) return NULL;
    if (d->strong) Py_INCREF(s);
    d->scache[idx] = s;
    if (idx >= d->scache_hi) d->scache_hi = idx + 1;
    return s;
}

/* Read and build the next value; the common scalars inline (used in the
 * container loops), everything else through dec_item. */
ALWAYS_INLINE PyObject *dec_fast(dec_ctx *d) {
    pith_item it;
    if (UNLIKELY(!pith_read(d->r, &it))) return dec_fail(d);
    switch (it.type) {
    case PITH_STRING:
        return dec_str(d, &it);
    case PITH_INT:
        return PyLong_FromLongLong(it.v.i);
    case PITH_FLOAT:
        return PyFloat_FromDouble(it.v.f);
    case PITH_TRUE:
        Py_RETURN_TRUE;
    case PITH_FALSE:
        Py_RETURN_FALSE;
    case PITH_NULL:
        Py_RETURN_NONE;
    case PITH_MAP:
        return dec_map(d, &it);
    case PITH_ARRAY:
        return dec_array(d, it.v.array.count);
    default:
        return dec_item(d, &it);
    }
}

/* --- keys ---------------------------------------------------------------- */

typedef struct {
    PyObject *obj;
    uint64_t hash;
} keycache_ent;

static keycache_ent g_keycache[KEYCACHE_SIZE];

ALWAYS_INLINE uint64_t key_hash(const char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        h = (h ^ load64(p + i)) * 0x100000001b3ull;
        h ^= h >> 31;
    }
    h = (h ^ load_upto8(p + i, n - i)) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* An interned key object for a shape key. New reference. */
static PyObject *make_key(const pith_key *k, uint32_t opt) {
    const char *p = k->ptr;
    size_t n = k->len;
    if (k->symbol && !(opt & OPT_SYMBOL_AS_STR)) return key_object(k);
    int ascii = 1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] >= 0x80) {
            ascii = 0;
            break;
        }
    if (ascii && n <= KEYCACHE_MAX_LEN) {
        uint64_t h = key_hash(p, n);
        keycache_ent *ent = &g_keycache[h & (KEYCACHE_SIZE - 1)];
        if (ent->obj && ent->hash == h && (size_t)PyUnicode_GET_LENGTH(ent->obj) == n &&
            bytes_eq((const char *)PyUnicode_1BYTE_DATA(ent->obj), p, n))
            return Py_NewRef(ent->obj);
        PyObject *s = make_str(p, n, PITH_ITEM_ASCII);
        if (!s) return NULL;
        PyUnicode_InternInPlace(&s);
        str_hash(s);
        Py_XSETREF(ent->obj, Py_NewRef(s));
        ent->hash = h;
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
NOINLINE static PyObject *long_key(dec_ctx *d, const pith_key *k, uint32_t index) {
    size_t slot = 2 * (size_t)index + (k->symbol && !(d->opt & OPT_SYMBOL_AS_STR));
    if (objects_cover(&d->lkeys, &d->lkeys_cap, slot) < 0) return NULL;
    if (d->lkeys[slot]) return Py_NewRef(d->lkeys[slot]);
    PyObject *key = make_key(k, d->opt);
    if (!key) return NULL;
    d->lkeys[slot] = Py_NewRef(key);
    if (slot >= d->lkeys_hi) d->lkeys_hi = slot + 1;
    return key;
}

/* Do two of these keys collide in a Python dict? Only possible with symbol keys. */
static int keys_collide(PyObject *const *keys, size_t n, const pith_key *pk) {
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

/* A template dict for a shape's keys (see dec_map), or NULL if it cannot serve. */
static PyObject *make_template(PyObject *const *keys, size_t n) {
#if PITH_DICT_INTERNALS
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
    pith_dict_keys *dk = (pith_dict_keys *)mp->ma_keys;
    if (mp->ma_values || dk->dk_kind != PITH_DK_UNICODE || dk->dk_nentries != (Py_ssize_t)n ||
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

/* Across calls: the key objects and template of recently seen shapes, keyed
 * by the shapes' key bytes (compared in full on every hit). */
#define SHAPECACHE_SETS 256 /* 4-way set-associative, LRU within a set */
#define SHAPECACHE_WAYS 4
#define SHAPECACHE_MAX_KEYS 64
#define SHAPECACHE_MAX_BYTES 2048

typedef struct {
    uint64_t hash;
    uint32_t n;
    uint8_t collide;
    uint8_t sym_as_str;
    uint16_t *lens;     /* n key lengths, high bit = symbol */
    char *bytes;        /* the keys' bytes, concatenated */
    PyObject **keys;    /* n key objects (strong) */
    PyObject *tmpl;     /* template dict (strong) or NULL */
    uint64_t used;      /* LRU stamp */
} shapecache_ent;

static shapecache_ent g_shapecache[SHAPECACHE_SETS][SHAPECACHE_WAYS];
static uint64_t g_shapecache_clock;

/* A probe hash of a key sequence: the key count, the total length and the
 * heads of three keys. It only picks the cache set: every hit is confirmed by
 * comparing all the bytes (shapecache_match). */
static uint64_t shape_hash(const pith_key *keys, size_t n, size_t *total) {
    size_t t = 0;
    uint64_t lens = 0;
    for (size_t i = 0; i < n; i++) {
        t += keys[i].len;
        lens = lens * 31 + keys[i].len + ((uint64_t)keys[i].symbol << 20);
    }
    *total = t;
    const pith_key *a = &keys[0], *b = &keys[n / 2], *c = &keys[n - 1];
    uint64_t h = (0x9E3779B97F4A7C15ull ^ n ^ (t << 16)) * 0xff51afd7ed558ccdull;
    h = (h ^ lens) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ load_upto8(a->ptr, a->len < 8 ? a->len : 8)) * 0xff51afd7ed558ccdull;
    h = (h ^ load_upto8(b->ptr, b->len < 8 ? b->len : 8)) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ load_upto8(c->ptr, c->len < 8 ? c->len : 8)) * 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static int shapecache_match(const shapecache_ent *c, uint64_t h, const pith_key *keys, size_t n, int sym_as_str) {
    if (!c->keys || c->hash != h || c->n != n || c->sym_as_str != sym_as_str) return 0;
    const char *b = c->bytes;
    for (size_t i = 0; i < n; i++) {
        size_t len = c->lens[i] & 0x7FFF;
        if (len != keys[i].len || ((c->lens[i] >> 15) != keys[i].symbol) || !bytes_eq(b, keys[i].ptr, len))
            return 0;
        b += len;
    }
    return 1;
}

static void shapecache_clear_ent(shapecache_ent *c) {
    if (c->keys) {
        for (uint32_t i = 0; i < c->n; i++) Py_DECREF(c->keys[i]);
    }
    PyMem_Free(c->keys);
    PyMem_Free(c->lens);
    PyMem_Free(c->bytes);
    Py_XDECREF(c->tmpl);
    memset(c, 0, sizeof(*c));
}

static void shapecache_put(uint64_t h, const pith_key *keys, size_t n, size_t total, PyObject *const *objs,
                           PyObject *tmpl, int collide, int sym_as_str) {
    shapecache_ent fresh;
    memset(&fresh, 0, sizeof(fresh));
    fresh.lens = PyMem_Malloc(n * sizeof(uint16_t) + 1);
    fresh.bytes = PyMem_Malloc(total + 1);
    fresh.keys = PyMem_Malloc(n * sizeof(PyObject *) + 1);
    if (!fresh.lens || !fresh.bytes || !fresh.keys) {
        PyMem_Free(fresh.lens);
        PyMem_Free(fresh.bytes);
        PyMem_Free(fresh.keys);
        return; /* caching is optional */
    }
    char *b = fresh.bytes;
    for (size_t i = 0; i < n; i++) {
        fresh.lens[i] = (uint16_t)(keys[i].len | ((size_t)keys[i].symbol << 15));
        memcpy(b, keys[i].ptr, keys[i].len);
        b += keys[i].len;
        fresh.keys[i] = Py_NewRef(objs[i]);
    }
    fresh.hash = h;
    fresh.n = (uint32_t)n;
    fresh.collide = (uint8_t)collide;
    fresh.sym_as_str = (uint8_t)sym_as_str;
    fresh.tmpl = Py_XNewRef(tmpl);
    fresh.used = ++g_shapecache_clock;
    shapecache_ent *set = g_shapecache[h & (SHAPECACHE_SETS - 1)], *victim = &set[0];
    for (int w = 1; w < SHAPECACHE_WAYS; w++)
        if (set[w].used < victim->used) victim = &set[w];
    shapecache_ent old = *victim;
    *victim = fresh;
    shapecache_clear_ent(&old); /* after the swap: decrefs may run arbitrary deallocators */
}

/* Offset in kpool of the key objects of the map item `it`; *collide set when
 * the map cannot be a dict, *tmpl to its template (borrowed) or NULL. */
static Py_ssize_t shape_keys(dec_ctx *d, const pith_item *it, int *collide, PyObject **tmpl) {
    uint32_t si = it->v.map.shape;
    if (LIKELY(si != PITH_NO_INDEX && si < d->shapes_cap && d->shapes[si].set)) {
        *collide = d->shapes[si].collide;
        *tmpl = d->shapes[si].tmpl;
        return (Py_ssize_t)d->shapes[si].off;
    }
    *tmpl = NULL;
    size_t n = it->v.map.count;
    int sym_as_str = (d->opt & OPT_SYMBOL_AS_STR) != 0;
    size_t total = 0;
    uint64_t h = 0;
    const shapecache_ent *hit = NULL;
    int cacheable = n > 0 && n <= SHAPECACHE_MAX_KEYS;
    if (cacheable) {
        for (size_t i = 0; i < n; i++)
            if (it->v.map.keys[i].len > 0x7FFF) cacheable = 0;
    }
    if (cacheable) {
        h = shape_hash(it->v.map.keys, n, &total);
        if (total > SHAPECACHE_MAX_BYTES) {
            cacheable = 0;
        } else {
            shapecache_ent *set = g_shapecache[h & (SHAPECACHE_SETS - 1)];
            for (int w = 0; w < SHAPECACHE_WAYS; w++)
                if (shapecache_match(&set[w], h, it->v.map.keys, n, sym_as_str)) {
                    set[w].used = ++g_shapecache_clock;
                    hit = &set[w];
                    break;
                }
        }
    }
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
    if (hit) {
        for (size_t i = 0; i < n; i++) d->kpool[d->kpool_used++] = Py_NewRef(hit->keys[i]);
        c = hit->collide;
        t = Py_XNewRef(hit->tmpl);
    } else {
        const uint32_t *indices = it->v.map.key_strings;
        for (size_t i = 0; i < n; i++) {
            const pith_key *pk = &it->v.map.keys[i];
            PyObject *k = indices && pk->len > KEYCACHE_MAX_LEN && indices[i] != PITH_NO_INDEX
                              ? long_key(d, pk, indices[i])
                              : make_key(pk, d->opt);
            if (!k) return -1;
            d->kpool[d->kpool_used++] = k;
        }
        c = keys_collide(d->kpool + off, n, it->v.map.keys);
        if (c < 0) return -1;
        if (!c) {
            t = make_template(d->kpool + off, n);
            if (!t && PyErr_Occurred()) return -1;
        }
        if (cacheable) shapecache_put(h, it->v.map.keys, n, total, d->kpool + off, t, c, sym_as_str);
    }
    *collide = c;
    if (si != PITH_NO_INDEX) {
        if (si >= d->shapes_cap) {
            size_t cap = d->shapes_cap ? d->shapes_cap : 64;
            while (cap <= si) cap *= 2;
            sh_ent *p = PyMem_Realloc(d->shapes, cap * sizeof(sh_ent));
            if (!p) {
                PyErr_NoMemory();
                return -1;
            }
            memset(p + d->shapes_cap, 0, (cap - d->shapes_cap) * sizeof(sh_ent));
            d->shapes = p;
            d->shapes_cap = cap;
        }
        d->shapes[si].off = off;
        d->shapes[si].n = (uint32_t)n;
        d->shapes[si].set = 1;
        d->shapes[si].collide = (uint8_t)c;
        d->shapes[si].tmpl = t; /* owned by the entry */
        *tmpl = t;
        if (si >= d->shapes_hi) d->shapes_hi = si + 1;
    } else {
        /* A shape the full table did not take: used for this map only. */
        Py_XDECREF(t);
        *tmpl = NULL;
    }
    return (Py_ssize_t)off;
}

/* --- containers ----------------------------------------------------------- */

static PyObject *dec_key(dec_ctx *d);

/* A Map of the key objects at kpool[off..] and the values that follow (decoded
 * as keys when `as_key`, so that the Map is hashable). */
NOINLINE static PyObject *dec_map_pairs(dec_ctx *d, Py_ssize_t off, size_t n, int as_key) {
    PyObject *pairs = PyList_New(0);
    if (!pairs) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *v = as_key ? dec_key(d) : dec_next(d);
        if (!v) goto fail;
        PyObject *pair = PyTuple_Pack(2, d->kpool[(size_t)off + i], v);
        Py_DECREF(v);
        if (!pair || PyList_Append(pairs, pair) < 0) {
            Py_XDECREF(pair);
            goto fail;
        }
        Py_DECREF(pair);
    }
    PyObject *m = PyObject_CallOneArg((PyObject *)MapType, pairs);
    Py_DECREF(pairs);
    return m;
fail:
    Py_DECREF(pairs);
    return NULL;
}

#if PITH_DICT_INTERNALS
/* A dict with the keys of template `tmpl` and the next n values: a copy of the
 * template's key table (same keys, same hashes, same order) with the values
 * filled in, attached to an empty dict. No lookups, no inserts. */
static PyObject *dec_map_template(dec_ctx *d, PyObject *tmpl, size_t n) {
    const pith_dict_keys *tk = (const pith_dict_keys *)((PyDictObject *)tmpl)->ma_keys;
    size_t size = pith_dk_size(tk);
    pith_dict_keys *k = PyObject_Malloc(size);
    if (!k) return PyErr_NoMemory();
    memcpy(k, tk, size);
    k->dk_refcnt = 1;
    k->dk_version = 0;
    pith_dict_uentry *ep = PITH_DK_ENTRIES(k);
    int gc = 0;
    size_t i = 0;
    for (; i < n; i++) {
        PyObject *v = dec_fast(d);
        if (UNLIKELY(!v)) goto fail;
        Py_INCREF(ep[i].me_key);
        ep[i].me_value = v;
        gc |= PyType_IS_GC(Py_TYPE(v));
    }
    PyObject *dict = PyDict_New();
    if (UNLIKELY(!dict)) goto fail;
    PyDictObject *mp = (PyDictObject *)dict;
    ((pith_dict_keys *)mp->ma_keys)->dk_refcnt--; /* the shared empty table it started with */
    mp->ma_keys = (PyDictKeysObject *)k;
    mp->ma_used = (Py_ssize_t)n;
    if (gc && !PyObject_GC_IsTracked(dict)) PyObject_GC_Track(dict);
    return dict;
fail:
    for (size_t j = 0; j < i; j++) {
        Py_DECREF(ep[j].me_key);
        Py_DECREF(ep[j].me_value);
    }
    PyObject_Free(k);
    return NULL;
}
#endif

static NOINLINE PyObject *dec_map(dec_ctx *d, const pith_item *it) {
    int collide;
    PyObject *tmpl;
    Py_ssize_t off = shape_keys(d, it, &collide, &tmpl);
    if (UNLIKELY(off < 0)) return NULL;
    size_t n = it->v.map.count;
#if PITH_DICT_INTERNALS
    if (LIKELY(tmpl != NULL)) return dec_map_template(d, tmpl, n);
#endif
    if (UNLIKELY(collide)) return dec_map_pairs(d, off, n, 0);
    PyObject *dict = _PyDict_NewPresized((Py_ssize_t)(n < PRESIZE_MAX ? n : PRESIZE_MAX));
    if (UNLIKELY(!dict)) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *v = dec_next(d);
        if (UNLIKELY(!v)) goto fail;
        PyObject *k = d->kpool[(size_t)off + i];
        int r = _PyDict_SetItem_KnownHash(dict, k, v, str_hash(k));
        Py_DECREF(v);
        if (UNLIKELY(r < 0)) goto fail;
    }
    return dict;
fail:
    Py_DECREF(dict);
    return NULL;
}

static NOINLINE PyObject *dec_array(dec_ctx *d, size_t n) {
    if (n <= PRESIZE_MAX) {
        PyObject *list = PyList_New((Py_ssize_t)n);
        if (UNLIKELY(!list)) return NULL;
        for (size_t i = 0; i < n; i++) {
            PyObject *v = dec_fast(d);
            if (UNLIKELY(!v)) {
                Py_DECREF(list);
                return NULL;
            }
            PyList_SET_ITEM(list, (Py_ssize_t)i, v);
        }
        return list;
    }
    /* A long array: grow with the elements actually read (the count is a claim). */
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    PyListObject *l = (PyListObject *)list;
    size_t cap = PRESIZE_MAX;
    l->ob_item = PyMem_Malloc(cap * sizeof(PyObject *));
    if (!l->ob_item) {
        Py_DECREF(list);
        return PyErr_NoMemory();
    }
    l->allocated = (Py_ssize_t)cap;
    for (size_t i = 0; i < n; i++) {
        if (i == cap) {
            size_t ncap = cap * 2 < n ? cap * 2 : n;
            PyObject **p = PyMem_Realloc(l->ob_item, ncap * sizeof(PyObject *));
            if (!p) {
                Py_DECREF(list);
                return PyErr_NoMemory();
            }
            l->ob_item = p;
            l->allocated = (Py_ssize_t)ncap;
            cap = ncap;
        }
        PyObject *v = dec_next(d);
        if (UNLIKELY(!v)) {
            Py_DECREF(list);
            return NULL;
        }
        l->ob_item[i] = v;
        Py_SET_SIZE(list, (Py_ssize_t)(i + 1));
    }
    return list;
}

static PyObject *dec_item(dec_ctx *d, pith_item *it);
static PyObject *dec_generic_map(dec_ctx *d, const pith_item *it, int as_key);

/* A map key: arrays become tuples and maps pith.Map, so that keys are hashable. */
static PyObject *dec_key(dec_ctx *d) {
    pith_item it;
    if (UNLIKELY(!pith_read(d->r, &it))) return dec_fail(d);
    if (it.type == PITH_ARRAY) {
        size_t n = it.v.array.count;
        PyObject *list = PyList_New(0);
        if (!list) return NULL;
        for (size_t i = 0; i < n; i++) {
            PyObject *v = dec_key(d);
            if (!v || PyList_Append(list, v) < 0) {
                Py_XDECREF(v);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(v);
        }
        PyObject *t = PyList_AsTuple(list);
        Py_DECREF(list);
        return t;
    }
    if (it.type == PITH_MAP) {
        int collide;
        PyObject *tmpl;
        Py_ssize_t off = shape_keys(d, &it, &collide, &tmpl);
        if (off < 0) return NULL;
        return dec_map_pairs(d, off, it.v.map.count, 1);
    }
    if (it.type == PITH_GENERIC_MAP) return dec_generic_map(d, &it, 1);
    return dec_item(d, &it);
}

/* A generic map: a dict, or a pith.Map when Python cannot hold its keys
 * apart (1, 1.0 and True) or when it is itself a key. */
static PyObject *dec_generic_map(dec_ctx *d, const pith_item *it, int as_key) {
    size_t n = it->v.map.count;
    PyObject *pairs = PyList_New(0);
    if (!pairs) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *k = dec_key(d);
        if (!k) goto fail;
        PyObject *v = as_key ? dec_key(d) : dec_next(d);
        if (!v) {
            Py_DECREF(k);
            goto fail;
        }
        PyObject *pair = PyTuple_Pack(2, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (!pair || PyList_Append(pairs, pair) < 0) {
            Py_XDECREF(pair);
            goto fail;
        }
        Py_DECREF(pair);
    }
    if (!as_key) {
        PyObject *dict = PyDict_New();
        if (!dict) goto fail;
        int ok = 1;
        for (size_t i = 0; i < n && ok; i++) {
            PyObject *pair = PyList_GET_ITEM(pairs, (Py_ssize_t)i);
            if (PyDict_SetItem(dict, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0) {
                if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
                    Py_DECREF(dict);
                    goto fail;
                }
                PyErr_Clear();
                ok = 0;
            }
        }
        if (ok && (size_t)PyDict_GET_SIZE(dict) == n) {
            Py_DECREF(pairs);
            return dict;
        }
        Py_DECREF(dict);
    }
    PyObject *m = PyObject_CallOneArg((PyObject *)MapType, pairs);
    Py_DECREF(pairs);
    return m;
fail:
    Py_DECREF(pairs);
    return NULL;
}

/* --- other scalars ---------------------------------------------------------- */

static PyObject *offset_tz(int minutes) {
    PyObject **slot = &g_tz_offsets[minutes + 1439];
    if (!*slot) {
        *slot = PyObject_CallFunction(g_offset_tz_fn, "i", minutes);
        if (!*slot) return NULL;
    }
    return *slot;
}

NOINLINE static PyObject *dec_time(dec_ctx *d, const pith_timestamp *ts) {
    if ((d->opt & OPT_TIMESTAMP) || ts->nanos % 1000) {
        return PyObject_CallFunction((PyObject *)TimestampType, "LIii", (long long)ts->seconds, (int)ts->nanos,
                                     (int)ts->zone, ts->zone == PITH_ZONE_OFFSET ? (int)ts->offset : 0);
    }
    int64_t local = ts->seconds + (ts->zone == PITH_ZONE_OFFSET ? (int64_t)ts->offset * 60 : 0);
    int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
    int64_t sod = local - days * 86400;
    int y, m, dd;
    civil_from_days(days, &y, &m, &dd);
    PyObject *tz = Py_None;
    if (ts->zone == PITH_ZONE_UTC) tz = g_utc;
    else if (ts->zone == PITH_ZONE_OFFSET && !(tz = offset_tz(ts->offset))) return NULL;
    return PyDateTimeAPI->DateTime_FromDateAndTime(y, m, dd, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60),
                                                   (int)(ts->nanos / 1000), tz, PyDateTimeAPI->DateTimeType);
}

NOINLINE static PyObject *dec_bigint(const pith_item *it) {
    PyObject *v = _PyLong_FromByteArray(it->v.big.mag, it->v.big.len, 1, 0);
    if (!v || !it->v.big.negative) return v;
    PyObject *neg = PyNumber_Negative(v);
    Py_DECREF(v);
    return neg;
}

NOINLINE static PyObject *dec_symbol(dec_ctx *d, const pith_item *it) {
    if (d->opt & OPT_SYMBOL_AS_STR) return dec_str(d, it);
    PyObject *s = make_str(it->v.str.ptr, it->v.str.len, it->flags);
    if (!s) return NULL;
    PyObject *sym = PyObject_CallOneArg((PyObject *)SymbolType, s);
    Py_DECREF(s);
    return sym;
}

NOINLINE static PyObject *dec_ext(const pith_item *it) {
    return PyObject_CallFunction((PyObject *)ExtType, "Iy#", (unsigned)it->v.ext.type, (const char *)it->v.ext.ptr,
                                 (Py_ssize_t)it->v.ext.len);
}

static PyObject *dec_item(dec_ctx *d, pith_item *it) {
    switch (it->type) {
    case PITH_STRING:
        return dec_str(d, it);
    case PITH_MAP:
        return dec_map(d, it);
    case PITH_INT:
        return PyLong_FromLongLong(it->v.i);
    case PITH_FLOAT:
        return PyFloat_FromDouble(it->v.f);
    case PITH_ARRAY:
        return dec_array(d, it->v.array.count);
    case PITH_TRUE:
        Py_RETURN_TRUE;
    case PITH_FALSE:
        Py_RETURN_FALSE;
    case PITH_NULL:
        Py_RETURN_NONE;
    case PITH_UINT:
        return PyLong_FromUnsignedLongLong(it->v.u);
    case PITH_BIGINT:
        return dec_bigint(it);
    case PITH_TIME:
        return dec_time(d, &it->v.time);
    case PITH_BINARY:
        return PyBytes_FromStringAndSize((const char *)it->v.bin.ptr, (Py_ssize_t)it->v.bin.len);
    case PITH_SYMBOL:
        return dec_symbol(d, it);
    case PITH_EXT:
        return dec_ext(it);
    case PITH_GENERIC_MAP:
        return dec_generic_map(d, it, 0);
    }
    PyErr_SetString(PyExc_SystemError, "pith: unknown item type");
    return NULL;
}

static PyObject *dec_next(dec_ctx *d) { return dec_fast(d); }

/* The bytes of a loads() argument. */
typedef struct {
    const char *ptr;
    size_t len;
    Py_buffer view;
    int has_view;
} input_bytes;

static int input_get(PyObject *o, input_bytes *in) {
    in->has_view = 0;
    if (PyBytes_CheckExact(o)) {
        in->ptr = PyBytes_AS_STRING(o);
        in->len = (size_t)PyBytes_GET_SIZE(o);
        return 0;
    }
    if (PyUnicode_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "expected bytes, bytearray or memoryview, not str");
        return -1;
    }
    if (PyObject_GetBuffer(o, &in->view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "expected bytes, bytearray or a contiguous memoryview, not %s",
                         Py_TYPE(o)->tp_name);
        }
        return -1;
    }
    in->has_view = 1;
    in->ptr = in->view.buf;
    in->len = (size_t)in->view.len;
    return 0;
}

static void input_release(input_bytes *in) {
    if (in->has_view) PyBuffer_Release(&in->view);
}

static PyObject *names_loads[3];

typedef struct {
    uint32_t opt;
    uint32_t max_depth;
    dict_list dicts;
} dec_args;

static int parse_dec_args(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          dec_args *a) {
    PyObject *kw[3] = {NULL, NULL, NULL};
    a->opt = 0;
    a->max_depth = PITH_DEFAULT_MAX_DEPTH;
    a->dicts.ptr = a->dicts.items;
    a->dicts.n = 0;
    a->dicts.seq = NULL;
    if (kwnames && parse_kwargs(fname, kwnames, args + nargs, names_loads, kw, 3) < 0) return -1;
    if (kw[0] && parse_option(kw[0], &a->opt) < 0) return -1;
    if (kw[2] && parse_max_depth(kw[2], &a->max_depth) < 0) return -1;
    if (kw[1] && dict_list_init(&a->dicts, kw[1]) < 0) return -1;
    return 0;
}

static PyObject *pith_loads(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "loads() takes exactly 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    dec_args a;
    if (parse_dec_args("loads", args, nargs, kwnames, &a) < 0) return NULL;
    input_bytes in;
    if (input_get(args[0], &in) < 0) {
        dict_list_free(&a.dicts);
        return NULL;
    }
    PyObject *result = NULL;
    dec_ctx *d = dec_acquire();
    if (d) {
        d->opt = a.opt;
        if (a.max_depth != PITH_DEFAULT_MAX_DEPTH) pith_reader_set_max_depth(d->r, a.max_depth);
        if (!pith_reader_start(d->r, in.ptr, in.len, a.dicts.ptr, a.dicts.n, 0)) {
            dec_fail(d);
        } else {
            result = dec_next(d);
            if (result && !pith_reader_finish(d->r)) {
                Py_CLEAR(result);
                dec_fail(d);
            }
        }
        dec_release(d, in.len);
    }
    input_release(&in);
    dict_list_free(&a.dicts);
    return result;
}

/* Decode a whole stream buffer into a list of values. */
static PyObject *pith_loads_stream(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "loads_stream() takes exactly 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    dec_args a;
    if (parse_dec_args("loads_stream", args, nargs, kwnames, &a) < 0) return NULL;
    input_bytes in;
    if (input_get(args[0], &in) < 0) {
        dict_list_free(&a.dicts);
        return NULL;
    }
    PyObject *result = PyList_New(0);
    dec_ctx *d = result ? dec_acquire() : NULL;
    if (d) {
        d->opt = a.opt;
        if (a.max_depth != PITH_DEFAULT_MAX_DEPTH) pith_reader_set_max_depth(d->r, a.max_depth);
        if (!pith_reader_start(d->r, in.ptr, in.len, a.dicts.ptr, a.dicts.n, PITH_READ_STREAM)) {
            dec_fail(d);
            Py_CLEAR(result);
        } else {
            for (;;) {
                bool more;
                if (!pith_reader_frame_begin(d->r, &more)) {
                    dec_fail(d);
                    Py_CLEAR(result);
                    break;
                }
                if (!more) break;
                PyObject *v = dec_next(d);
                if (!v || !pith_reader_frame_end(d->r) || PyList_Append(result, v) < 0) {
                    if (v && !PyErr_Occurred()) dec_fail(d);
                    Py_XDECREF(v);
                    Py_CLEAR(result);
                    break;
                }
                Py_DECREF(v);
            }
        }
        dec_release(d, in.len);
    } else {
        Py_CLEAR(result);
    }
    input_release(&in);
    dict_list_free(&a.dicts);
    return result;
}

/* ==========================================================================
 * Encoder: a stream of values sharing tables (SPEC 2.3)
 * ========================================================================== */

typedef struct {
    PyObject_HEAD
    enc_ctx *e;
    PyObject *default_fn;
    PyObject *dictionary;
    uint32_t opt;
    size_t emitted;   /* bytes of the writer's buffer already returned */
    int started;
    int busy;
    int failed;
} EncoderObject;

static PyObject *Encoder_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"option", "default", "dictionary", NULL};
    PyObject *option = NULL, *dflt = NULL, *dictionary = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOO:Encoder", kwlist, &option, &dflt, &dictionary)) return NULL;
    uint32_t opt;
    if (parse_option(option, &opt) < 0) return NULL;
    if (dflt == Py_None) dflt = NULL;
    if (dflt && !PyCallable_Check(dflt)) {
        PyErr_SetString(PyExc_TypeError, "default must be callable");
        return NULL;
    }
    if (dictionary == Py_None) dictionary = NULL;
    if (dictionary && !PyObject_TypeCheck(dictionary, &DictionaryType)) {
        PyErr_SetString(PyExc_TypeError, "dictionary must be a pith.Dictionary");
        return NULL;
    }
    EncoderObject *self = (EncoderObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->e = enc_ctx_new();
    if (!self->e) {
        Py_DECREF(self);
        return NULL;
    }
    self->opt = opt;
    self->default_fn = Py_XNewRef(dflt);
    self->dictionary = Py_XNewRef(dictionary);
    return (PyObject *)self;
}

static int Encoder_traverse(EncoderObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->default_fn);
    Py_VISIT(self->dictionary);
    return 0;
}

static int Encoder_clear(EncoderObject *self) {
    Py_CLEAR(self->default_fn);
    return 0;
}

static void Encoder_dealloc(EncoderObject *self) {
    PyObject_GC_UnTrack(self);
    enc_ctx_free(self->e);
    Py_CLEAR(self->default_fn);
    Py_CLEAR(self->dictionary);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Encoder_encode(EncoderObject *self, PyObject *obj) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.encode() called re-entrantly");
        return NULL;
    }
    if (self->failed) {
        PyErr_SetString(PyExc_ValueError, "this Encoder failed on an earlier value; start a new stream");
        return NULL;
    }
    enc_ctx *e = self->e;
    pith_writer *w = e->w;
    if (!self->started) {
        if (!pith_writer_start(w, self->dictionary ? ((DictionaryObject *)self->dictionary)->dict : NULL,
                               PITH_WRITE_STREAM))
            return PyErr_NoMemory();
        self->started = 1;
        self->emitted = 0;
    }
    self->busy = 1;
    e->opt = self->opt;
    e->default_fn = self->default_fn;
    PyObject *result = NULL;
    if (!pith_write_frame_begin(w)) {
        enc_writer_fail(e);
        enc_raise(e);
    } else if (enc_top(e, obj) == 0) {
        if (!pith_write_frame_end(w)) {
            enc_writer_fail(e);
            enc_raise(e);
        } else {
            size_t len;
            const uint8_t *data = pith_writer_data(w, &len);
            result = PyBytes_FromStringAndSize((const char *)data + self->emitted, (Py_ssize_t)(len - self->emitted));
#ifdef PITH_HAVE_WRITER_DISCARD_OUTPUT
            /* The stream's tables stay; its output need not. */
            if (result && pith_writer_discard_output(w)) len = 0;
#endif
            self->emitted = len;
        }
    }
    if (!result) self->failed = 1;
    /* Keep the shape cache (the stream's shapes persist); drop error state. */
    Py_CLEAR(e->err_msg);
    Py_CLEAR(e->err_cause);
    for (size_t i = 0; i < e->path_len; i++) Py_XDECREF(e->path[i].key);
    e->path_len = 0;
    e->depth = 0;
    e->default_fn = NULL;
    self->busy = 0;
    return result;
}

static PyObject *Encoder_header(EncoderObject *self, PyObject *unused) {
    (void)unused;
    /* The stream header alone (what encode() prepends to the first value). */
    const pith_dict *dict = self->dictionary ? ((DictionaryObject *)self->dictionary)->dict : NULL;
    unsigned char h[11] = {0xC1, 0x70, (unsigned char)(0x10 | 0x02 | (dict ? 0x01 : 0))};
    size_t n = 3;
    if (dict) {
        uint64_t id = pith_dict_id(dict);
        for (int i = 0; i < 8; i++) h[3 + i] = (unsigned char)(id >> (8 * i));
        n = 11;
    }
    return PyBytes_FromStringAndSize((const char *)h, (Py_ssize_t)n);
}

static PyMethodDef Encoder_methods[] = {
    {"encode", (PyCFunction)Encoder_encode, METH_O,
     "encode($self, obj, /)\n--\n\nThe next value of the stream as bytes to append: the first call returns the\n"
     "stream header followed by the first frame, later calls one frame each."},
    {"header", (PyCFunction)Encoder_header, METH_NOARGS, "header($self, /)\n--\n\nThe stream header (for a stream of zero values)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject EncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pith.Encoder",
    .tp_basicsize = sizeof(EncoderObject),
    .tp_dealloc = (destructor)Encoder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Encoder(*, option=0, default=None, dictionary=None)\n--\n\n"
              "Encodes a stream of values that share string and shape tables (SPEC 2.3).",
    .tp_traverse = (traverseproc)Encoder_traverse,
    .tp_clear = (inquiry)Encoder_clear,
    .tp_methods = Encoder_methods,
    .tp_new = Encoder_new,
};

/* ==========================================================================
 * Decoder: incremental stream decoding
 * ========================================================================== */

typedef struct {
    PyObject_HEAD
    dec_ctx *d;
    PyObject *dictionary;   /* as given (kept alive) */
    dict_list dicts;
    uint32_t max_depth;
    char *buf;              /* bytes received and not yet consumed: buf[start..len) */
    size_t start, len, cap;
    size_t base;            /* stream offset of buf[start] */
    unsigned char header[11];
    int header_done;
    int busy;
    PyObject *failed;       /* the DecodeError that broke the stream */
} DecoderObject;

static PyObject *Decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"option", "dictionary", "max_depth", NULL};
    PyObject *option = NULL, *dictionary = NULL, *maxd = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOO:Decoder", kwlist, &option, &dictionary, &maxd)) return NULL;
    uint32_t opt, max_depth;
    if (parse_option(option, &opt) < 0 || parse_max_depth(maxd, &max_depth) < 0) return NULL;
    DecoderObject *self = (DecoderObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->dicts.ptr = self->dicts.items;
    if (dict_list_init(&self->dicts, dictionary) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->dictionary = Py_XNewRef(dictionary);
    self->d = dec_ctx_new();
    if (!self->d) {
        Py_DECREF(self);
        return NULL;
    }
    self->d->strong = 1; /* values are handed out frame by frame; later frames may refer to their strings */
    self->d->opt = opt;
    self->max_depth = max_depth;
    pith_reader_set_max_depth(self->d->r, max_depth);
    return (PyObject *)self;
}

static int Decoder_traverse(DecoderObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->dictionary);
    Py_VISIT(self->failed);
    return 0;
}

static void Decoder_dealloc(DecoderObject *self) {
    PyObject_GC_UnTrack(self);
    dec_ctx_free(self->d);
    dict_list_free(&self->dicts);
    Py_CLEAR(self->dictionary);
    Py_CLEAR(self->failed);
    PyMem_Free(self->buf);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Make room for `more` bytes after buf[len): what the new bytes must not
 * overwrite is buf[start..len), the bytes not yet consumed (consumed frames
 * are not needed: the reader copies what later frames refer to). The pending
 * bytes move to the front, and the buffer is sized to at least 1.5 times what
 * it must then hold: a third of it stays free, so the bytes moved are at most
 * three times the bytes fed. A buffer much larger than that shrinks, so that
 * one large frame does not pin its size for the rest of the stream. */
static int feed_make_room(DecoderObject *self, size_t more) {
    size_t pending = self->len - self->start;
    if (more > (size_t)PY_SSIZE_T_MAX / 2 - pending) {
        PyErr_NoMemory();
        return -1;
    }
    size_t need = pending + more, want = 4096;
    while (want < need + need / 2) want *= 2;
    if (self->start && pending) memmove(self->buf, self->buf + self->start, pending);
    self->start = 0;
    self->len = pending;
    if (want > self->cap || (self->cap > (1u << 16) && want < self->cap / 4)) {
        char *p = PyMem_Realloc(self->buf, want);
        if (!p) {
            if (want > self->cap) {
                PyErr_NoMemory();
                return -1;
            }
        } else {
            self->buf = p;
            self->cap = want;
        }
    }
    return 0;
}

static PyObject *Decoder_feed(DecoderObject *self, PyObject *data) {
    input_bytes in;
    if (input_get(data, &in) < 0) return NULL;
    if (self->busy) {
        input_release(&in);
        PyErr_SetString(PyExc_RuntimeError, "Decoder used re-entrantly");
        return NULL;
    }
    if (in.len > self->cap - self->len && feed_make_room(self, in.len) < 0) {
        input_release(&in);
        return NULL;
    }
    if (in.len) memcpy(self->buf + self->len, in.ptr, in.len);
    self->len += in.len;
    input_release(&in);
    Py_RETURN_NONE;
}

/* A failed value leaves the stream's tables part-way through a frame, so
 * every later call must fail too: with the DecodeError itself, or for any
 * other exception (MemoryError, an error from a tzinfo) with a DecodeError
 * "stream_broken" whose cause is that exception, raised from the next call. */
static PyObject *Decoder_fail(DecoderObject *self) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && PyObject_IsInstance(value, DecodeError) == 1) {
        Py_XSETREF(self->failed, Py_NewRef(value));
    } else if (value) {
        PyObject *broken = PyObject_CallFunction(DecodeError, "ssn",
                                                 "the stream broke on an earlier error (see __cause__)",
                                                 "stream_broken", (Py_ssize_t)self->base);
        if (broken) {
            PyException_SetCause(broken, Py_NewRef(value));
            Py_XSETREF(self->failed, broken);
        } else {
            PyErr_Clear();
        }
    }
    PyErr_Restore(type, value, tb);
    return NULL;
}

static PyObject *Decoder_iternext(DecoderObject *self) {
    if (self->failed) {
        PyErr_SetObject(DecodeError, self->failed);
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Decoder used re-entrantly");
        return NULL;
    }
    dec_ctx *d = self->d;
    const char *p = self->buf + self->start;
    size_t avail = self->len - self->start;
    size_t size;
    pith_error err = {PITH_OK, 0, NULL};
    if (!self->header_done) {
        pith_scan s = pith_stream_scan(p, avail, true, &size, &err);
        if (s == PITH_SCAN_NEED_MORE) return NULL;
        if (s == PITH_SCAN_ERROR) {
            err.offset += self->base;
            raise_pith_error(&err);
            return Decoder_fail(self);
        }
        memcpy(self->header, p, size);
        if (!pith_reader_start(d->r, self->header, size, self->dicts.ptr, self->dicts.n, PITH_READ_STREAM)) {
            dec_fail(d);
            return Decoder_fail(self);
        }
        self->header_done = 1;
        self->start += size;
        self->base += size;
        p += size;
        avail -= size;
    }
    pith_scan s = pith_stream_scan(p, avail, false, &size, &err);
    if (s == PITH_SCAN_NEED_MORE) return NULL;
    if (s == PITH_SCAN_ERROR) {
        err.offset += self->base;
        raise_pith_error(&err);
        return Decoder_fail(self);
    }
    self->busy = 1;
    PyObject *v = NULL;
    if (!pith_reader_feed_frame(d->r, p, size, self->base)) {
        dec_fail(d);
    } else {
        v = dec_next(d);
        if (v && !pith_reader_frame_end(d->r)) {
            Py_CLEAR(v);
            dec_fail(d);
        }
    }
    self->busy = 0;
    if (!v) return Decoder_fail(self);
    self->start += size;
    self->base += size;
    return v;
}

static PyObject *Decoder_close(DecoderObject *self, PyObject *unused) {
    (void)unused;
    if (self->failed) {
        PyErr_SetObject(DecodeError, self->failed);
        return NULL;
    }
    const char *p = self->buf ? self->buf + self->start : "";
    size_t avail = self->len - self->start;
    if (!self->header_done) {
        /* A stream needs at least its header. */
        pith_error err = {PITH_OK, 0, NULL};
        size_t size;
        if (pith_stream_scan(p, avail, true, &size, &err) == PITH_SCAN_ERROR) {
            raise_pith_error(&err);
            return Decoder_fail(self);
        }
        raise_decode_error("truncated", avail >= 3 ? 3 : 0, "the stream ends inside its header");
        return Decoder_fail(self);
    }
    if (avail) {
        /* An incomplete frame: its length prefix is cut short, or claims more than remains. */
        unsigned n = (unsigned char)p[0] ? (unsigned)__builtin_ctz((unsigned char)p[0]) + 1 : 9;
        if (avail < n) raise_decode_error("truncated", self->base, "the stream ends inside a frame length");
        else raise_decode_error("length_exceeds_input", self->base, "the last frame is longer than the stream");
        return Decoder_fail(self);
    }
    Py_RETURN_NONE;
}

static PyObject *Decoder_iter(PyObject *self) { return Py_NewRef(self); }

static PyObject *Decoder_get_pending(DecoderObject *self, void *c) {
    (void)c;
    return PyLong_FromSize_t(self->len - self->start);
}

static PyMethodDef Decoder_methods[] = {
    {"feed", (PyCFunction)Decoder_feed, METH_O,
     "feed($self, data, /)\n--\n\nAppend received bytes (bytes, bytearray or memoryview); iterate the decoder\n"
     "for the values they complete."},
    {"close", (PyCFunction)Decoder_close, METH_NOARGS,
     "close($self, /)\n--\n\nCheck that the stream ended cleanly (DecodeError if a header or frame is incomplete)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Decoder_getset[] = {
    {"pending", (getter)Decoder_get_pending, NULL, "Bytes received but not yet decoded.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pith.Decoder",
    .tp_basicsize = sizeof(DecoderObject),
    .tp_dealloc = (destructor)Decoder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Decoder(*, option=0, dictionary=None, max_depth=1000)\n--\n\n"
              "Decodes a stream incrementally: feed() bytes as they arrive, iterate for the\n"
              "values completed so far, close() at the end.",
    .tp_traverse = (traverseproc)Decoder_traverse,
    .tp_iter = Decoder_iter,
    .tp_iternext = (iternextfunc)Decoder_iternext,
    .tp_methods = Decoder_methods,
    .tp_getset = Decoder_getset,
    .tp_new = Decoder_new,
};

/* ==========================================================================
 * Module
 * ========================================================================== */

static PyMethodDef module_methods[] = {
    {"dumps", (PyCFunction)(void (*)(void))pith_dumps, METH_FASTCALL | METH_KEYWORDS,
     "dumps(obj, /, *, option=0, default=None, dictionary=None) -> bytes\n--\n\n"
     "Serialize obj to Pith bytes (the canonical encoding)."},
    {"loads", (PyCFunction)(void (*)(void))pith_loads, METH_FASTCALL | METH_KEYWORDS,
     "loads(data, /, *, option=0, dictionary=None, max_depth=1000)\n--\n\n"
     "Deserialize one Pith value from bytes, bytearray or memoryview."},
    {"loads_stream", (PyCFunction)(void (*)(void))pith_loads_stream, METH_FASTCALL | METH_KEYWORDS,
     "loads_stream(data, /, *, option=0, dictionary=None, max_depth=1000) -> list\n--\n\n"
     "Deserialize a complete Pith stream (SPEC 2.3) into the list of its values."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef pith_module = {
    PyModuleDef_HEAD_INIT, "pith._pith", "The Pith C core binding.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

#define INTERN(var, text)                                   \
    do {                                                    \
        if (!((var) = PyUnicode_InternFromString(text))) goto fail; \
    } while (0)

PyMODINIT_FUNC PyInit__pith(void) {
    PyObject *m = NULL, *types = NULL, *tmp = NULL;
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI) return NULL;
    INTERN(s_option, "option");
    INTERN(s_default, "default");
    INTERN(s_dictionary, "dictionary");
    INTERN(s_max_depth, "max_depth");
    INTERN(s_value, "value");
    INTERN(s_utcoffset, "utcoffset");
    INTERN(s_dataclass_fields, "__dataclass_fields__");
    INTERN(s_field_type, "_field_type");
    INTERN(s_seconds, "seconds");
    INTERN(s_nanos, "nanos");
    INTERN(s_zone, "zone");
    INTERN(s_offset, "offset");
    INTERN(s_type, "type");
    INTERN(s_data, "data");
    names_dumps[0] = s_option;
    names_dumps[1] = s_default;
    names_dumps[2] = s_dictionary;
    names_loads[0] = s_option;
    names_loads[1] = s_dictionary;
    names_loads[2] = s_max_depth;

    types = PyImport_ImportModule("pith._types");
    if (!types) goto fail;
#define GET(var, name)                                         \
    do {                                                       \
        if (!((var) = (void *)PyObject_GetAttrString(types, name))) goto fail; \
    } while (0)
    GET(SymbolType, "Symbol");
    GET(ExtType, "Ext");
    GET(TimestampType, "Timestamp");
    GET(MapType, "Map");
    GET(DecodeError, "DecodeError");
    GET(EncodeError, "EncodeError");
    GET(g_offset_tz_fn, "_offset_tz");
    GET(g_build_dict_fn, "_build_dictionary");
#undef GET
    tmp = PyImport_ImportModule("enum");
    if (!tmp || !(g_enum_type = PyObject_GetAttrString(tmp, "Enum"))) goto fail;
    Py_CLEAR(tmp);
    tmp = PyImport_ImportModule("uuid");
    if (!tmp || !(g_uuid_type = PyObject_GetAttrString(tmp, "UUID"))) goto fail;
    Py_CLEAR(tmp);
    tmp = PyImport_ImportModule("dataclasses");
    if (!tmp || !(g_field_marker = PyObject_GetAttrString(tmp, "_FIELD"))) goto fail;
    Py_CLEAR(tmp);
    g_utc = PyDateTime_TimeZone_UTC;
    Py_INCREF(g_utc);

    if (PyType_Ready(&DictionaryType) < 0 || PyType_Ready(&EncoderType) < 0 || PyType_Ready(&DecoderType) < 0)
        goto fail;
    m = PyModule_Create(&pith_module);
    if (!m) goto fail;
    if (PyModule_AddObjectRef(m, "Dictionary", (PyObject *)&DictionaryType) < 0 ||
        PyModule_AddObjectRef(m, "Encoder", (PyObject *)&EncoderType) < 0 ||
        PyModule_AddObjectRef(m, "Decoder", (PyObject *)&DecoderType) < 0)
        goto fail;
#define OPT(name, value)                                            \
    if (PyModule_AddIntConstant(m, name, (long)(value)) < 0) goto fail;
    OPT("OPT_NAIVE_UTC", OPT_NAIVE_UTC)
    OPT("OPT_PASSTHROUGH_DATETIME", OPT_PASSTHROUGH_DATETIME)
    OPT("OPT_PASSTHROUGH_SUBCLASS", OPT_PASSTHROUGH_SUBCLASS)
    OPT("OPT_PASSTHROUGH_DATACLASS", OPT_PASSTHROUGH_DATACLASS)
    OPT("OPT_PASSTHROUGH_ENUM", OPT_PASSTHROUGH_ENUM)
    OPT("OPT_PASSTHROUGH_UUID", OPT_PASSTHROUGH_UUID)
    OPT("OPT_TIMESTAMP", OPT_TIMESTAMP)
    OPT("OPT_SYMBOL_AS_STR", OPT_SYMBOL_AS_STR)
#undef OPT
    if (PyModule_AddStringConstant(m, "CORE_VERSION", PITH_VERSION_STRING) < 0) goto fail;
    if (PyModule_AddIntConstant(m, "FORMAT_VERSION", PITH_FORMAT_VERSION) < 0) goto fail;
    Py_DECREF(types);
    return m;
fail:
    Py_XDECREF(tmp);
    Py_XDECREF(types);
    Py_XDECREF(m);
    return NULL;
}
