/*
 * _tersa.c - the CPython binding of the Tersa C core.
 *
 * Encoding walks Python objects and drives the core's writer (which owns the
 * canonical encoding); decoding pulls items from the core's reader and builds
 * Python objects. Everything format-related stays in the core: the binding
 * only maps types, caches Python objects and reports errors. This file holds
 * what the parts share (options, errors, dictionaries) and the module; the
 * parts, included below as one translation unit: encode.c (dumps, with
 * encode_errors.c, encode_shapes.c and encode_other.c), decode.c (loads, with decode_ctx.c,
 * decode_gc.c, decode_objects.c, decode_cache.c, decode_scalars.c and
 * decode_generic.c), streams.c (Encoder, Decoder, loads_stream, join_stream).
 *
 * Caches (all bounded, all cleared or owned, none keyed by hash alone):
 *   - encode: per buffer, the shape index of a dict's key sequence, keyed by
 *     the identity of the key objects (strong references held, identity
 *     re-verified on every hit);
 *   - decode: per buffer, the str object of each string-table index (a
 *     reference returns the same object) and the key objects of each shape;
 *     across calls, the core's table of interned key strings compared by
 *     bytes (objcache.h: one per process, used under the GIL, which a
 *     free-threaded build re-enables on import since the module does not
 *     declare Py_mod_gil).
 *   - streams: both per-buffer caches live from frame to frame, as the
 *     tables do, and are dropped at each sync frame (SPEC 2.3), where the
 *     tables restart and the cached indices come to name other entries.
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
#if defined(__linux__) || defined(__APPLE__)
#include <pthread.h>
#endif

#include "tersa.h"
#include "compiler.h" /* the core's, shared with every C file of the project */
#include "objcache.h"  /* the core's caches of host objects (handles are PyObject pointers) */

#if PY_VERSION_HEX < 0x030A0000
#error "tersa needs CPython 3.10 or later"
#endif

/* CPython 3.11 dict internals (Include/internal/pycore_dict.h), mirrored to read
 * a dict's entry table in one pass and to build decoded dicts from a per-shape
 * template. Only for release builds of 3.11; other versions use the public API. */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_REF_DEBUG) && \
    !defined(TERSA_NO_DICT_INTERNALS)
#define TERSA_DICT_INTERNALS 1
typedef struct {
    Py_hash_t me_hash;
    PyObject *me_key;
    PyObject *me_value;
} tersa_dict_entry;
typedef struct {
    PyObject *me_key;
    PyObject *me_value;
} tersa_dict_uentry;
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size;
    uint8_t dk_log2_index_bytes;
    uint8_t dk_kind; /* 0 general, 1 unicode, 2 split */
    uint32_t dk_version;
    Py_ssize_t dk_usable;
    Py_ssize_t dk_nentries;
    char dk_indices[];
} tersa_dict_keys;
#define TERSA_DK_ENTRIES(dk) ((void *)((dk)->dk_indices + ((size_t)1 << (dk)->dk_log2_index_bytes)))
#define TERSA_DK_GENERAL 0
#define TERSA_DK_UNICODE 1
static size_t tersa_dk_size(const tersa_dict_keys *dk) {
    size_t es = dk->dk_kind == TERSA_DK_GENERAL ? sizeof(tersa_dict_entry) : sizeof(tersa_dict_uentry);
    return sizeof(tersa_dict_keys) + ((size_t)1 << dk->dk_log2_index_bytes) +
           ((((size_t)1 << dk->dk_log2_size) << 1) / 3) * es;
}
#else
#define TERSA_DICT_INTERNALS 0
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
#define OPT_SERIALIZE_NUMPY (1u << 6)       /* numpy arrays encode as nested arrays */
/* Decoding */
#define OPT_TIMESTAMP (1u << 8)             /* timestamps always decode to tersa.Timestamp */
#define OPT_SYMBOL_AS_STR (1u << 9)         /* symbols decode to plain str */
#define OPT_ENCODE_MASK 0x7Fu
#define OPT_DECODE_MASK 0x300u

#define PRESIZE_MAX 64   /* containers are pre-sized at most this much from their (claimed) count */
#define POOL_LARGE_BYTES (1u << 20) /* a context that handled more than this is large (see pool_keep) */
#define POOL_LARGE_MAX (4u << 20)   /* contexts that handled more than this are freed, not pooled */

/* ==========================================================================
 * Module globals
 * ========================================================================== */

static PyTypeObject *SymbolType, *ExtType, *TimestampType, *MapType;
static PyObject *DecodeError, *EncodeError;
static PyObject *g_offset_tz_fn, *g_build_dict_fn;
static PyObject *g_utc;
static PyObject *g_tz_offsets[2 * 1439 + 1];
static PyObject *g_enum_type, *g_uuid_type, *g_uuid_unknown, *g_field_marker;
/* Application extension types (tersa.register_type, _extensions.py): the
 * dicts {class: (type, packer)} and {type: (unpacker, class)}, shared with
 * Python, which alone changes them. */
static PyObject *g_ext_by_class, *g_ext_by_type;
static PyObject *s_int, *s_is_safe, *s_decimal_module;
static PyObject *s_option, *s_default, *s_dictionary, *s_dictionaries, *s_max_depth, *s_join, *s_value, *s_utcoffset,
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

TERSA_INLINE Py_hash_t str_hash(PyObject *s) {
    Py_hash_t h = ((PyASCIIObject *)s)->hash;
    if (TERSA_UNLIKELY(h == -1)) h = PyObject_Hash(s);
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
        PyErr_SetString(PyExc_ValueError, "option has unknown bits (use the tersa.OPT_* flags)");
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* max_depth: any int >= 1 (None: the default). Encoding and decoding keep
 * their open containers on heap stacks, one small frame per level, so a
 * depth costs memory in proportion to the value (each level of a buffer
 * takes at least one byte of it) and never C stack: no upper bound is
 * needed. Values beyond 2^32 - 1 mean 2^32 - 1 (the core's counter). */
static int parse_max_depth(PyObject *o, uint32_t *out) {
    if (!o || o == Py_None) {
        *out = TERSA_DEFAULT_MAX_DEPTH;
        return 0;
    }
    if (!PyLong_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "max_depth must be an int");
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow < 0 || (!overflow && v < 1)) {
        PyErr_SetString(PyExc_ValueError, "max_depth must be at least 1");
        return -1;
    }
    *out = overflow || v > (long long)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    return 0;
}

/* Whether a context that has just handled `bytes` of a buffer goes back to
 * its pool. Growing the core's tables and buffers again cost a large call up
 * to a third of its time (a 1.2 MB buffer of long strings), so a context
 * grown by a large buffer is kept for the next one, up to POOL_LARGE_MAX; it
 * is dropped after the first call that is not large, so that what it holds
 * is not kept for small calls. *large: whether its last call was large. */
static int pool_keep(uint8_t *large, size_t bytes) {
    int now = bytes > POOL_LARGE_BYTES;
    if (bytes > POOL_LARGE_MAX || (*large && !now)) return 0;
    *large = (uint8_t)now;
    return 1;
}

/* ==========================================================================
 * C stack guard
 * ========================================================================== */

/* Encoding and decoding never recurse in C, but Python code they call (a
 * `default`, a tzinfo, a finalizer) may call them again, and each such
 * level takes C stack that Python's recursion limit does not bound in a
 * thread with a small stack. Every entry point checks that STACK_RESERVE
 * bytes of the thread's stack remain, and raises RecursionError if not. */
#define STACK_RESERVE (16 * 1024)

#if (defined(__linux__) || defined(__APPLE__)) && (defined(__GNUC__) || defined(__clang__))
static _Thread_local uintptr_t tl_stack_low; /* lowest usable address of this thread's stack; 1: unknown */

static uintptr_t thread_stack_low(void) {
#if defined(__APPLE__)
    pthread_t self = pthread_self();
    return (uintptr_t)pthread_get_stackaddr_np(self) - pthread_get_stacksize_np(self);
#else
    uintptr_t low = 1;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *addr;
        size_t size;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr) low = (uintptr_t)addr;
        pthread_attr_destroy(&attr);
    }
    return low;
#endif
}

static int stack_guard(const char *what) {
    uintptr_t here = (uintptr_t)__builtin_frame_address(0), low = tl_stack_low;
    if (TERSA_UNLIKELY(!low)) low = tl_stack_low = thread_stack_low();
    if (TERSA_LIKELY(here - low > STACK_RESERVE || low == 1 || here < low)) return 0;
    PyErr_Format(PyExc_RecursionError, "maximum recursion depth exceeded in %s (the thread's C stack is nearly full)",
                 what);
    return -1;
}
#else
static int stack_guard(const char *what) {
    (void)what;
    return 0;
}
#endif

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

static void raise_tersa_error(const tersa_error *err) {
    if (err->code == TERSA_ERR_NOMEM) {
        PyErr_NoMemory();
        return;
    }
    if (err->code == TERSA_ERR_USAGE) {
        PyErr_Format(PyExc_SystemError, "tersa: internal error (%s)", err->message ? err->message : "usage");
        return;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "%s at byte %zu", err->message ? err->message : tersa_code_name(err->code),
             err->offset);
    raise_decode_error(tersa_code_name(err->code), err->offset, msg);
}

/* ==========================================================================
 * Dictionary objects
 * ========================================================================== */

typedef struct {
    PyObject_HEAD
    tersa_dict *dict;
} DictionaryObject;

static PyTypeObject DictionaryType;

/* A str for a tersa_key, as a Symbol if it is one. */
static PyObject *key_object(const tersa_key *k) {
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
    tersa_key *skeys = NULL, *hkeys = NULL;
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
    skeys = PyMem_Calloc((size_t)ns + 1, sizeof(tersa_key));
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
    hkeys = PyMem_Calloc(total + 1, sizeof(tersa_key));
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
                PyErr_SetString(PyExc_TypeError, "shape keys must be str or tersa.Symbol");
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
    tersa_error err = {TERSA_OK, 0, NULL};
    tersa_dict *d = tersa_dict_new(NULL, skeys, (size_t)ns, hkeys, hlens, (size_t)nh, &err);
    if (!d) {
        if (err.code == TERSA_ERR_NOMEM) PyErr_NoMemory();
        else PyErr_Format(PyExc_ValueError, "invalid dictionary: %s", err.message ? err.message : "invalid");
        goto done;
    }
    DictionaryObject *self = (DictionaryObject *)type->tp_alloc(type, 0);
    if (!self) {
        tersa_dict_free(d);
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
    tersa_dict_free(self->dict);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Dictionary_get_id(DictionaryObject *self, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(tersa_dict_id(self->dict));
}

static PyObject *Dictionary_get_strings(DictionaryObject *self, void *c) {
    (void)c;
    size_t n = tersa_dict_string_count(self->dict);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        tersa_key k = tersa_dict_string(self->dict, i);
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
    size_t n = tersa_dict_shape_count(self->dict);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; t && i < n; i++) {
        size_t nk;
        const tersa_key *keys = tersa_dict_shape(self->dict, i, &nk);
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
    const uint8_t *p = tersa_dict_serialized(self->dict, &len);
    return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)len);
}

/* A Dictionary of class `cls` owning `d` (freed on failure). */
static PyObject *dictionary_object(PyObject *cls, tersa_dict *d) {
    DictionaryObject *self = (DictionaryObject *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (!self) {
        tersa_dict_free(d);
        return NULL;
    }
    self->dict = d;
    return (PyObject *)self;
}

static PyObject *Dictionary_parse(PyObject *cls, PyObject *data) {
    Py_buffer view;
    if (PyUnicode_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "Dictionary.parse() expects bytes, bytearray or memoryview");
        return NULL;
    }
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    tersa_error err = {TERSA_OK, 0, NULL};
    tersa_dict *d = tersa_dict_parse(NULL, view.buf, (size_t)view.len, &err);
    PyBuffer_Release(&view);
    if (!d) {
        raise_tersa_error(&err);
        return NULL;
    }
    return dictionary_object(cls, d);
}

/* The C core's builder over the samples' encodings (the one Ruby and the CLI
 * use), so that the same samples give the same dictionary in every language. */
static PyObject *Dictionary_build(PyObject *cls, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"samples", "max_strings", "max_shapes", "min_count", NULL};
    PyObject *samples, *min_count_obj = Py_None;
    Py_ssize_t max_strings = TERSA_DICT_BUILD_MAX_STRINGS, max_shapes = TERSA_DICT_BUILD_MAX_SHAPES, min_count = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$nnO:build", kwlist, &samples, &max_strings, &max_shapes,
                                     &min_count_obj))
        return NULL;
    if (min_count_obj != Py_None && (min_count = PyLong_AsSsize_t(min_count_obj)) == -1 && PyErr_Occurred())
        return NULL;
    if (max_strings < 1 || max_shapes < 1 || min_count < 0 || (min_count_obj != Py_None && min_count < 1)) {
        PyErr_SetString(PyExc_ValueError, "max_strings and max_shapes must be >= 1, min_count >= 1 or None");
        return NULL;
    }
    PyObject *buffers = PyObject_CallOneArg(g_build_dict_fn, samples);
    if (!buffers) return NULL;
    tersa_dict_builder *b = tersa_dict_builder_new(NULL);
    tersa_error err = {TERSA_OK, 0, NULL};
    tersa_dict *d = NULL;
    bool ok = b != NULL;
    if (!ok) PyErr_NoMemory();
    for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(buffers); i++) {
        PyObject *item = PyList_GET_ITEM(buffers, i);
        ok = tersa_dict_builder_add_buffer(b, PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item), &err);
        if (!ok) raise_tersa_error(&err);
    }
    if (ok) {
        tersa_dict_build_options opts = {(size_t)min_count, (size_t)max_strings, (size_t)max_shapes};
        d = tersa_dict_builder_finish(b, &opts, &err);
        if (!d) raise_tersa_error(&err);
    }
    tersa_dict_builder_free(b);
    Py_DECREF(buffers);
    if (!d) return NULL;
    return dictionary_object(cls, d);
}

static PyObject *Dictionary_repr(DictionaryObject *self) {
    char buf[128];
    snprintf(buf, sizeof buf, "tersa.Dictionary(id=0x%016llx, strings=%zu, shapes=%zu)",
             (unsigned long long)tersa_dict_id(self->dict), tersa_dict_string_count(self->dict),
             tersa_dict_shape_count(self->dict));
    return PyUnicode_FromString(buf);
}

static Py_hash_t Dictionary_hash(DictionaryObject *self) {
    Py_hash_t h = (Py_hash_t)tersa_dict_id(self->dict);
    return h == -1 ? -2 : h;
}

static PyObject *Dictionary_richcompare(PyObject *a, PyObject *b, int op) {
    if (!PyObject_TypeCheck(b, &DictionaryType) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    size_t la, lb;
    const uint8_t *pa = tersa_dict_serialized(((DictionaryObject *)a)->dict, &la);
    const uint8_t *pb = tersa_dict_serialized(((DictionaryObject *)b)->dict, &lb);
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
     "A Dictionary of the shapes and strings that recur across sample values: each counts once per\n"
     "sample it occurs in, kept when in min_count samples (default 2, 1 for a single sample); the\n"
     "C core's builder, so Ruby and the CLI build the same dictionary from the same samples."},
    {"__reduce__", (PyCFunction)Dictionary_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DictionaryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tersa.Dictionary",
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

/* The dictionaries given as `dictionaries=`: None, a Dictionary, or a sequence of them. */
typedef struct {
    const tersa_dict *items[8];
    const tersa_dict **ptr;
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
    dl->seq = as_tuple(o, "dictionaries must be a tersa.Dictionary or a sequence of them");
    if (!dl->seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(dl->seq);
    if (n > 8) {
        dl->ptr = PyMem_Malloc((size_t)n * sizeof(tersa_dict *));
        if (!dl->ptr) {
            Py_CLEAR(dl->seq);
            PyErr_NoMemory();
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PySequence_Fast_GET_ITEM(dl->seq, i);
        if (!PyObject_TypeCheck(d, &DictionaryType)) {
            PyErr_SetString(PyExc_TypeError, "dictionaries must be a tersa.Dictionary or a sequence of them");
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

#include "encode.c"
#include "decode.c"
#include "streams.c"

/* ==========================================================================
 * Module
 * ========================================================================== */

static PyObject *set_extension_registry(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *by_class, *by_type;
    if (!PyArg_ParseTuple(args, "O!O!:_set_extension_registry", &PyDict_Type, &by_class, &PyDict_Type, &by_type))
        return NULL;
    Py_XSETREF(g_ext_by_class, Py_NewRef(by_class));
    Py_XSETREF(g_ext_by_type, Py_NewRef(by_type));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"_set_extension_registry", set_extension_registry, METH_VARARGS, NULL},
    {"dumps", (PyCFunction)(void (*)(void))tersa_dumps, METH_FASTCALL | METH_KEYWORDS,
     "dumps(obj, /, *, option=0, default=None, dictionary=None, max_depth=1000) -> bytes\n--\n\n"
     "Serialize obj to Tersa bytes (the canonical encoding)."},
    {"loads", (PyCFunction)(void (*)(void))tersa_loads, METH_FASTCALL | METH_KEYWORDS,
     "loads(data, /, *, option=0, dictionaries=None, max_depth=1000)\n--\n\n"
     "Deserialize one Tersa value from bytes, bytearray or memoryview."},
    {"loads_stream", (PyCFunction)(void (*)(void))tersa_loads_stream, METH_FASTCALL | METH_KEYWORDS,
     "loads_stream(data, /, *, option=0, dictionaries=None, max_depth=1000, join=False) -> list\n--\n\n"
     "Deserialize a complete Tersa stream (SPEC 2.3) into the list of its values. join=True:\n"
     "data starts at a frame boundary of a stream, without a header; frames before the\n"
     "first sync frame are skipped (join_stream() also tells where decoding started)."},
    {"join_stream", (PyCFunction)(void (*)(void))tersa_join_stream, METH_FASTCALL | METH_KEYWORDS,
     "join_stream(data, /, *, option=0, dictionaries=None, max_depth=1000) -> tuple\n--\n\n"
     "Join a stream midway (SPEC 2.3): data is frames from a frame boundary on, without a\n"
     "header. Returns (joined_at, values): the offset in data of the first sync frame\n"
     "(None if none came) and the values from it on."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef tersa_module = {
    PyModuleDef_HEAD_INIT, "tersa._tersa", "The Tersa C core binding.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

#define INTERN(var, text)                                   \
    do {                                                    \
        if (!((var) = PyUnicode_InternFromString(text))) goto fail; \
    } while (0)

PyMODINIT_FUNC PyInit__tersa(void) {
    PyObject *m = NULL, *types = NULL, *tmp = NULL;
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI) return NULL;
    if (!g_keycache.seed) tersa_keycache_init(&g_keycache); /* once per process: entries outlive a re-import */
    INTERN(s_option, "option");
    INTERN(s_default, "default");
    INTERN(s_dictionary, "dictionary");
    INTERN(s_dictionaries, "dictionaries");
    INTERN(s_max_depth, "max_depth");
    INTERN(s_join, "join");
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
    INTERN(s_int, "int");
    INTERN(s_is_safe, "is_safe");
    INTERN(s_decimal_module, "decimal");
    names_dumps[0] = s_option;
    names_dumps[1] = s_default;
    names_dumps[2] = s_dictionary;
    names_dumps[3] = s_max_depth;
    names_loads[0] = s_option;
    names_loads[1] = s_dictionaries;
    names_loads[2] = s_max_depth;
    for (int i = 0; i < 3; i++) names_loads_stream[i] = names_loads[i];
    names_loads_stream[3] = s_join;

    types = PyImport_ImportModule("tersa._types");
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
    GET(g_build_dict_fn, "_sample_buffers");
#undef GET
    tmp = PyImport_ImportModule("enum");
    if (!tmp || !(g_enum_type = PyObject_GetAttrString(tmp, "Enum"))) goto fail;
    Py_CLEAR(tmp);
    tmp = PyImport_ImportModule("os");
    {
        PyObject *seed = tmp ? PyObject_CallMethod(tmp, "urandom", "i", (int)sizeof(g_group_seed)) : NULL;
        if (!seed || !PyBytes_Check(seed) || PyBytes_GET_SIZE(seed) != (Py_ssize_t)sizeof(g_group_seed)) {
            Py_XDECREF(seed);
            goto fail;
        }
        memcpy(&g_group_seed, PyBytes_AS_STRING(seed), sizeof(g_group_seed));
        Py_DECREF(seed);
    }
    Py_CLEAR(tmp);
    tmp = PyImport_ImportModule("uuid");
    if (!tmp || !(g_uuid_type = PyObject_GetAttrString(tmp, "UUID"))) goto fail;
    {
        PyObject *safe = PyObject_GetAttrString(tmp, "SafeUUID");
        g_uuid_unknown = safe ? PyObject_GetAttrString(safe, "unknown") : NULL;
        Py_XDECREF(safe);
        if (!g_uuid_unknown) goto fail;
    }
    Py_CLEAR(tmp);
    tmp = PyImport_ImportModule("dataclasses");
    if (!tmp || !(g_field_marker = PyObject_GetAttrString(tmp, "_FIELD"))) goto fail;
    Py_CLEAR(tmp);
    g_utc = PyDateTime_TimeZone_UTC;
    Py_INCREF(g_utc);

    if (PyType_Ready(&DictionaryType) < 0 || PyType_Ready(&EncoderType) < 0 || PyType_Ready(&DecoderType) < 0)
        goto fail;
    m = PyModule_Create(&tersa_module);
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
    OPT("OPT_SERIALIZE_NUMPY", OPT_SERIALIZE_NUMPY)
    OPT("OPT_TIMESTAMP", OPT_TIMESTAMP)
    OPT("OPT_SYMBOL_AS_STR", OPT_SYMBOL_AS_STR)
#undef OPT
    if (PyModule_AddStringConstant(m, "CORE_VERSION", TERSA_VERSION_STRING) < 0) goto fail;
    if (PyModule_AddIntConstant(m, "FORMAT_VERSION", TERSA_FORMAT_VERSION) < 0) goto fail;
    Py_DECREF(types);
    return m;
fail:
    Py_XDECREF(tmp);
    Py_XDECREF(types);
    Py_XDECREF(m);
    return NULL;
}
