/*
 * encode.c - dumps(): Python objects to the core's writer.
 *
 * Part of _tersa.c, which includes it (one translation unit: the parts share
 * its static helpers and inline across each other); not compiled alone.
 *
 * Encoding is iterative: each container being written, and each value being
 * replaced by a conversion (default, enum, dataclass, uuid), is a frame on a
 * heap stack (enc_ctx.frames), so that any allowed depth costs memory, never
 * C stack. The loop (enc_run) writes the common scalars inline and resumes
 * the innermost frame after each child.
 */

/* ==========================================================================
 * Encoding
 * ========================================================================== */

#include "shape_lookup.h"

#if defined(__GNUC__) || defined(__clang__)
#define TERSA_PREFETCH(p) __builtin_prefetch(p)
#else
#define TERSA_PREFETCH(p) ((void)0)
#endif

/* A pooled context whose shape lookup holds more than this is freed instead. */
#define SHAPES_BYTES_MAX (256u << 10)

/* The shape lookup (c/src/shape_lookup.h) finds a dict's keys, by identity,
 * with hints: each key position of an entry has one, the entry (+1) of the
 * dict last seen as the value at that position, tried first next time. An
 * identity it holds must name the same str while stored: the lookup holds
 * a reference to each key it stores (the hooks below, whose context is the
 * encoder's keys_lent flag), except in dumps until Python code may run
 * (keys_lent, see enc_settle): till then nothing can drop a key of the
 * value being encoded, as for lent strs. */
#define HINT_ROOT TERSA_SHAPES_HINT_ROOT /* hint_at: the root slot */
#define HINT_NONE TERSA_SHAPES_HINT_NONE /* hint_at: a scratch slot (uncached parent) */

static void shape_keys_retain(void *keys_lent, const tersa_ident *keys, size_t n) {
    if (*(const uint8_t *)keys_lent) return;
    for (size_t i = 0; i < n; i++) Py_INCREF((PyObject *)keys[i]);
}

static void shape_keys_release(void *keys_lent, const tersa_ident *keys, size_t n) {
    if (*(const uint8_t *)keys_lent) return;
    for (size_t i = 0; i < n; i++) Py_DECREF((PyObject *)keys[i]);
}

#include "encode_templates.c"

/* A path component recorded while unwinding after an error. */
typedef struct {
    PyObject *key;   /* dict key (strong), or NULL for a list index */
    Py_ssize_t index;
} path_ent;

/* What a frame writes. */
enum {
    EF_LIST,  /* a list (or subclass): its size is checked before each element */
    EF_TUPLE, /* a tuple (or subclass) */
    EF_DICT,  /* a dict whose keys are all str or Symbol: a shaped map of its values */
    EF_PAIRS, /* a map from (key, value) pairs: a dict of other keys, a dict subclass, a tersa.Map */
    EF_CONV,  /* a value replaced by a conversion: the replacement is its only item */
};

typedef struct {
    uint8_t kind;
    uint8_t owned;      /* EF_DICT: the keys and values in kvs are references held, not borrowed */
    uint8_t textual;    /* EF_PAIRS: the keys became strings (a shaped map: only values are written) */
    PyObject *obj;      /* the container or converted value (strong): cycle diagnosis, kept alive */
    PyObject *items;    /* EF_PAIRS: the pairs (list or tuple); EF_CONV: the replacement (strong) */
    Py_ssize_t n;       /* items to write (EF_PAIRS of a generic map: keys and values, 2 per pair) */
    Py_ssize_t i;       /* items started: on error, item i - 1 is in the path */
    union {
        size_t at;      /* EF_LIST, EF_TUPLE: the shape hint slot the elements share */
        size_t kv;      /* EF_DICT: kvs[kv] holds its key 0, kvs[kv + 1] value 0, ... (unless `ents`) */
    } u;
    union {
        uint64_t version; /* EF_DICT, borrowed: the dict's version tag when its entries were read */
        PyObject *ckeys;  /* EF_PAIRS: the keys as Tersa sees them (list, strong) */
    } v;
    size_t hint0;       /* EF_DICT, EF_PAIRS: the hint slot of the value of key 0, or HINT_NONE */
    PyObject **ents;    /* EF_DICT read in place: the dict's own entries, laid out as in kvs; else NULL */
} eframe;

typedef struct enc_ctx {
    tersa_writer *w;
    PyObject *default_fn;
    uint32_t opt;
    uint32_t max_depth;     /* frames allowed (containers and conversions) */
    uint32_t empty_shape;   /* shape index of {} in this buffer */
    tersa_shapes shapes;    /* key sequences by identity -> the writer's shape indices, and hints */
    size_t hint_at;         /* where the next dict finds its hint: HINT_ROOT, HINT_NONE or a tersa_shapes_hint_at */
    PyObject *err_msg;      /* pending EncodeError message */
    PyObject *err_cause;
    /* A cycle: frames[cycle_open] is the value that contains itself, the
     * frame at cycle_close (or the one being opened) repeats it; the path
     * ends there, and cycle_mark is path_len once the frames above
     * cycle_open had pushed theirs (the rest of the path leads to it). */
    size_t cycle_open, cycle_close, cycle_mark;
    int cycle;
    path_ent *path;
    size_t path_len, path_cap;
    eframe *frames;         /* open frames, outermost first */
    size_t depth, frames_cap;
    size_t room;            /* min(max_depth, frames_cap): below it, a frame is pushed without more checks */
    PyObject **kvs;         /* the keys and values of EF_DICT frames not read in place, a stack of their own */
    size_t kv_used, kv_cap;
    uint8_t large;          /* the last buffer was large (see pool_keep) */
    uint8_t single;         /* dumps: one value per buffer (not a stream's frames, whose shapes carry on) */
    uint8_t tpl_try;        /* no shaped map opened since the shapes were forgotten: the lookup is empty, a template may apply */
    uint8_t keys_lent;      /* the shape lookup holds its keys without references (dumps until enc_settle) */
    enc_tpls tpl;           /* map-definition templates by key identity (encode_templates.c) */
    PyObject *out;          /* dumps: the bytes object a large output is written into (out_grow), or NULL */
} enc_ctx;

#include "encode_output.c"

static enc_ctx *enc_ctx_new(void) {
    enc_ctx *e = PyMem_Calloc(1, sizeof(enc_ctx));
    if (!e) {
        PyErr_NoMemory();
        return NULL;
    }
    e->w = tersa_writer_new(NULL);
    if (!e->w) {
        PyMem_Free(e);
        PyErr_NoMemory();
        return NULL;
    }
    e->empty_shape = TERSA_NO_INDEX;
    e->tpl_try = 1;
    e->max_depth = TERSA_DEFAULT_MAX_DEPTH;
    const tersa_shape_hooks hooks = {shape_keys_retain, shape_keys_release, &e->keys_lent};
    tersa_shapes_init(&e->shapes, NULL, &hooks, true);
    return e;
}

/* Forget the shape cache: between buffers, and at a stream's sync frames,
 * where the writer's shape table starts again and the cached indices would
 * name other shapes. */
static void enc_shapes_forget(enc_ctx *e) {
    tersa_shapes_clear(&e->shapes);
    e->hint_at = HINT_ROOT;
    e->empty_shape = TERSA_NO_INDEX;
    e->tpl_try = 1;
}

/* Drop a failed encode's message, cause and path. */
TERSA_NOINLINE static void enc_clear_error(enc_ctx *e) {
    Py_CLEAR(e->err_msg);
    Py_CLEAR(e->err_cause);
    for (size_t i = 0; i < e->path_len; i++) Py_XDECREF(e->path[i].key);
    e->path_len = 0;
}

/* Forget the shape cache (between buffers) and any error state. */
TERSA_INLINE void enc_ctx_clear(enc_ctx *e) {
    enc_shapes_forget(e);
    if (TERSA_UNLIKELY(e->err_msg || e->err_cause || e->path_len)) enc_clear_error(e);
    e->cycle = 0;
    e->default_fn = NULL;
}

static void enc_ctx_free(enc_ctx *e) {
    if (!e) return;
    enc_ctx_clear(e);
    enc_tpl_free(&e->tpl);
    tersa_writer_free(e->w);
    tersa_shapes_free(&e->shapes);
    PyMem_Free(e->path);
    PyMem_Free(e->frames);
    PyMem_Free(e->kvs);
    PyMem_Free(e);
}

static enc_ctx *g_enc_pool;

/* The map templates of the last context dropped below, which the next new
 * one takes over: a template holds none of its writer's state but the
 * seed, which every writer of the process shares (the writer checks it). */
static enc_tpls g_enc_tpl_kept;

static enc_ctx *enc_acquire(void) {
    enc_ctx *e = g_enc_pool;
    if (e) {
        g_enc_pool = NULL;
        return e;
    }
    e = enc_ctx_new();
    if (e) tersa_writer_set_output(e->w, &dumps_output, e);
    if (e && g_enc_tpl_kept.sets) {
        e->tpl = g_enc_tpl_kept;
        memset(&g_enc_tpl_kept, 0, sizeof(g_enc_tpl_kept));
    }
    return e;
}

/* Tables grown by a buffer of many shapes cost their size at every start
 * (the writer clears its shape index whole): a context that has since
 * served a run of buffers needing a small part of them (tersa_shapes_end_buffer)
 * is dropped for a fresh one. */
static void enc_release(enc_ctx *e, size_t bytes_written) {
    uint32_t used = tersa_shapes_count(&e->shapes);
    bool renew = tersa_shapes_end_buffer(&e->shapes, used);
    enc_ctx_clear(e);
    /* The lookup's tables grow only while it stores shapes: a buffer that
     * stored none left them as the last check found them. */
    if (g_enc_pool || !pool_keep(&e->large, bytes_written) || (used && tersa_shapes_memsize(&e->shapes) > SHAPES_BYTES_MAX) ||
        e->frames_cap > 4096 || e->kv_cap > 65536 || renew) {
        if (!g_enc_tpl_kept.sets) {
            g_enc_tpl_kept = e->tpl;
            memset(&e->tpl, 0, sizeof(e->tpl));
        }
        enc_ctx_free(e);
        return;
    }
    g_enc_pool = e;
}

#include "encode_errors.c"

/* --- scalars ------------------------------------------------------------- */

/* Strs are lent to the writer (tersa_write_string_utf8_borrowed): its table
 * and registers may point at a str's own bytes instead of a copy. A lent str
 * must stay alive and unchanged until the loan ends, which holds while no
 * Python code runs: nothing else can drop a str the value being encoded
 * holds. So before each point where Python code may run (a `default`, a
 * packer, a property or attribute read, a tzinfo, an allocation of a
 * tracked object, which may collect garbage and run finalizers) and before
 * dropping a replacement the encoder owns (a conversion's result, a map's
 * pairs: enc_run's close), enc_settle ends the loans; the writer then copies
 * what it still holds. The end of dumps needs none: the next
 * tersa_writer_start ends them, and a stream's writer never borrows.
 * The keys of the shape lookup are lent the same way in dumps (keys_lent):
 * the lookup takes a reference to each key it holds at the first settle. */
TERSA_NOINLINE static void enc_keep_keys(enc_ctx *e) {
    size_t n;
    const tersa_ident *keys = tersa_shapes_keys(&e->shapes, &n);
    e->keys_lent = 0;
    shape_keys_retain(&e->keys_lent, keys, n);
}

/* Ends the loans (strs and keys): false if the writer failed. */
TERSA_INLINE bool enc_end_loans(enc_ctx *e) {
    if (TERSA_UNLIKELY(e->keys_lent)) enc_keep_keys(e);
    return tersa_writer_settle_borrowed(e->w);
}

TERSA_INLINE int enc_settle(enc_ctx *e) { return TERSA_LIKELY(enc_end_loans(e)) ? 0 : enc_writer_fail(e); }

/* PyUnicode_IS_COMPACT_ASCII with the two flags tested at once: one test
 * and branch per str instead of two. The mask is the state word with only
 * those two bits set (a constant once compiled). */
TERSA_INLINE uint32_t str_state_word(const PyASCIIObject *a) {
    uint32_t w = 0;
    memcpy(&w, &a->state, sizeof(a->state) < sizeof(w) ? sizeof(a->state) : sizeof(w));
    return w;
}

/* The masked tests need the state to fit the word and a compiler that
 * folds the mask to a constant; otherwise CPython's macro. */
#if defined(__GNUC__) || defined(__clang__)
#define STR_STATE_IN_WORD (sizeof(((PyASCIIObject *)0)->state) <= sizeof(uint32_t))
#else
#define STR_STATE_IN_WORD 0
#endif

/* The state word with only the compact and ascii bits set. */
TERSA_INLINE uint32_t str_compact_ascii_mask(void) {
    PyASCIIObject flags;
    memset(&flags, 0, sizeof(flags));
    flags.state.compact = 1;
    flags.state.ascii = 1;
    return str_state_word(&flags);
}

TERSA_INLINE int str_compact_ascii(PyObject *o) {
    if (STR_STATE_IN_WORD) {
        uint32_t mask = str_compact_ascii_mask();
        return (str_state_word((const PyASCIIObject *)o) & mask) == mask;
    }
    return PyUnicode_IS_COMPACT_ASCII(o);
}

/* Both strs compact ASCII (one test of their flags together). */
TERSA_INLINE int str_pair_compact_ascii(PyObject *a, PyObject *b) {
    if (STR_STATE_IN_WORD) {
        uint32_t mask = str_compact_ascii_mask();
        return (str_state_word((const PyASCIIObject *)a) & str_state_word((const PyASCIIObject *)b) & mask) == mask;
    }
    return PyUnicode_IS_COMPACT_ASCII(a) && PyUnicode_IS_COMPACT_ASCII(b);
}

/* The UTF-8 of a str that is not compact ASCII, or NULL (a surrogate; no
 * exception left set). */
TERSA_NOINLINE static const char *str_utf8_other(PyObject *v, size_t *len) {
    Py_ssize_t n = 0;
    const char *p = PyUnicode_AsUTF8AndSize(v, &n);
    if (!p) PyErr_Clear();
    *len = (size_t)n;
    return p;
}

/* A str's UTF-8, lent (`lend`: its bytes stay until enc_settle) or copied. */
TERSA_INLINE int enc_str_lent(enc_ctx *e, PyObject *o, const bool lend) {
    const char *p;
    Py_ssize_t n;
    if (TERSA_LIKELY(str_compact_ascii(o))) {
        p = (const char *)(((PyASCIIObject *)o) + 1);
        n = PyUnicode_GET_LENGTH(o);
    } else {
        p = PyUnicode_AsUTF8AndSize(o, &n);
        if (TERSA_UNLIKELY(!p)) {
            PyErr_Clear();
            return enc_fail(e, "str is not valid Unicode (it contains a surrogate)");
        }
    }
    bool ok = lend ? tersa_write_string_utf8_borrowed(e->w, p, (size_t)n) : tersa_write_string_utf8(e->w, p, (size_t)n);
    return TERSA_LIKELY(ok) ? 0 : enc_writer_fail(e);
}

/* A str in the value being encoded (or held by a frame): lent. */
TERSA_INLINE int enc_str(enc_ctx *e, PyObject *o) { return enc_str_lent(e, o, true); }


TERSA_NOINLINE static int enc_symbol(enc_ctx *e, PyObject *o) {
    Py_ssize_t n;
    const char *p = str_utf8(o, &n);
    if (!p) {
        PyErr_Clear();
        return enc_fail(e, "str is not valid Unicode (it contains a surrogate)");
    }
    if (!tersa_write_symbol(e->w, p, (size_t)n)) return enc_writer_fail(e);
    return 0;
}

TERSA_NOINLINE static int enc_bigint(enc_ctx *e, PyObject *o) {
#if PY_VERSION_HEX < 0x030C0000 && PyLong_SHIFT == 30
    /* Three digits up to 2^64 (64-bit ids, hashes) without the calls below.
     * Here rather than inline in enc_int: the loops that inline it stay as
     * small as before. */
    Py_ssize_t size = Py_SIZE(o);
    if ((size == 3 || size == -3) && ((PyLongObject *)o)->ob_digit[2] < 16) {
        const digit *dg = ((PyLongObject *)o)->ob_digit;
        uint64_t a = (uint64_t)dg[0] | ((uint64_t)dg[1] << 30) | ((uint64_t)dg[2] << 60);
        if (size > 0)
            return (a >> 63 ? tersa_write_uint(e->w, a) : tersa_write_int(e->w, (int64_t)a)) ? 0 : enc_writer_fail(e);
        if (a <= (uint64_t)1 << 63) return tersa_write_int(e->w, (int64_t)(0 - a)) ? 0 : enc_writer_fail(e);
    }
#endif
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (!overflow) return tersa_write_int(e->w, v) ? 0 : enc_writer_fail(e);
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (!(u == (unsigned long long)-1 && PyErr_Occurred())) return tersa_write_uint(e->w, u) ? 0 : enc_writer_fail(e);
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
    if (r == 0) rc = tersa_write_bigint(e->w, overflow < 0, buf, nbytes) ? 0 : enc_writer_fail(e);
    PyMem_Free(buf);
done:
    Py_DECREF(mag);
    return rc;
}

TERSA_INLINE int enc_int(enc_ctx *e, PyObject *o) {
#if PY_VERSION_HEX < 0x030C0000
    Py_ssize_t size = Py_SIZE(o);
    if (TERSA_LIKELY(size <= 1 && size >= -1)) {
        int64_t v = size ? (int64_t)((PyLongObject *)o)->ob_digit[0] : 0;
        if (size < 0) v = -v;
        return TERSA_LIKELY(tersa_write_int(e->w, v)) ? 0 : enc_writer_fail(e);
    }
#if PyLong_SHIFT == 30
    /* Two digits (60 bits): timestamps in seconds or milliseconds, most ids. */
    if (size == 2 || size == -2) {
        const digit *dg = ((PyLongObject *)o)->ob_digit;
        int64_t v = (int64_t)dg[0] | ((int64_t)dg[1] << 30);
        if (size < 0) v = -v;
        return TERSA_LIKELY(tersa_write_int(e->w, v)) ? 0 : enc_writer_fail(e);
    }
#endif
#else
    if (PyUnstable_Long_IsCompact((PyLongObject *)o)) {
        return TERSA_LIKELY(tersa_write_int(e->w, (int64_t)PyUnstable_Long_CompactValue((PyLongObject *)o)))
                   ? 0
                   : enc_writer_fail(e);
    }
#endif
    return enc_bigint(e, o);
}

/* The common scalars, written inline by the container loops: 0 written, -1
 * error, 1 not one of them. */
TERSA_INLINE int enc_scalar(enc_ctx *e, PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type) return enc_str(e, o);
    if (t == &PyLong_Type) return enc_int(e, o);
    if (t == &PyFloat_Type) return TERSA_LIKELY(tersa_write_double(e->w, PyFloat_AS_DOUBLE(o))) ? 0 : enc_writer_fail(e);
    if (t == &PyBool_Type) return TERSA_LIKELY(tersa_write_bool(e->w, o == Py_True)) ? 0 : enc_writer_fail(e);
    if (o == Py_None) return TERSA_LIKELY(tersa_write_null(e->w)) ? 0 : enc_writer_fail(e);
    return 1;
}

/* The shape hint slot of the value at key position i of the shape lookup's
 * entry ent. */
#define HINT_OF(ent, i) tersa_shapes_hint_at(&e->shapes, (int32_t)(ent), (size_t)(i))

#include "encode_shapes.c"


/* --- frames --------------------------------------------------------------- */

/* Too deep: a cycle when `o` (about to open at e->depth) is already open.
 * Reported at its first repetition, which is where the cycle closes: the
 * path stops there (not max_depth levels down). */
TERSA_NOINLINE static int enc_depth_fail(enc_ctx *e, PyObject *o) {
    int open = 0;
    for (size_t i = 0; i < e->depth && !open; i++) open = e->frames[i].obj == o;
    if (!open) return enc_fail(e, "nesting deeper than %lu levels", (unsigned long)e->max_depth);
    for (size_t j = 1; j <= e->depth; j++) {
        PyObject *oj = j < e->depth ? e->frames[j].obj : o;
        for (size_t k = 0; k < j; k++) {
            if (e->frames[k].obj != oj) continue;
            /* A conversion (default, a dataclass, an enum) that gives back its input. */
            if (e->frames[k].kind == EF_CONV && j == k + 1)
                return enc_fail(e, "%s converted to itself (default or a conversion returned its input)",
                                Py_TYPE(oj)->tp_name);
            e->cycle = 1;
            e->cycle_open = k;
            e->cycle_close = j;
            return enc_fail(e, "circular reference: the value at ");
        }
    }
    return enc_fail(e, "circular reference: the value at ");
}

TERSA_NOINLINE static int enc_grow(void **arr, size_t *cap, size_t need, size_t size) {
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    if (n > (size_t)PY_SSIZE_T_MAX / size) {
        PyErr_NoMemory();
        return -1;
    }
    void *p = PyMem_Realloc(*arr, n * size);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *arr = p;
    *cap = n;
    return 0;
}

static void enc_set_room(enc_ctx *e) { e->room = e->max_depth < e->frames_cap ? e->max_depth : e->frames_cap; }

/* Past `room`: too deep ("circular reference" if `o` is already open), or
 * more frames. */
TERSA_NOINLINE static int enc_make_room(enc_ctx *e, PyObject *o) {
    if (e->depth >= e->max_depth) return enc_depth_fail(e, o);
    if (enc_grow((void **)&e->frames, &e->frames_cap, e->depth + 1, sizeof(eframe)) < 0) return -1;
    enc_set_room(e);
    return 0;
}

/* Enter `o`: a new frame of `kind` holding a reference to it, or NULL. The
 * opener sets the fields its kind uses (and `items`, `ckeys` for EF_PAIRS
 * and EF_CONV). */
TERSA_INLINE eframe *enc_push(enc_ctx *e, PyObject *o, uint8_t kind) {
    if (TERSA_UNLIKELY(e->depth >= e->room) && enc_make_room(e, o) < 0) return NULL;
    eframe *f = &e->frames[e->depth++];
    f->kind = kind;
    f->obj = Py_NewRef(o);
    f->i = 0;
    return f;
}

/* Leave the innermost frame, dropping what it holds. */
TERSA_INLINE void enc_pop(enc_ctx *e) {
    eframe *f = &e->frames[--e->depth];
    if (f->kind == EF_DICT) {
        if (TERSA_UNLIKELY(f->owned)) {
            for (Py_ssize_t j = 0; j < 2 * f->n; j++) Py_DECREF(e->kvs[f->u.kv + (size_t)j]);
        }
        e->kv_used = f->u.kv; /* what it was when the frame opened, in place or not */
    } else if (f->kind >= EF_PAIRS) {
        Py_DECREF(f->items);
        if (f->kind == EF_PAIRS) Py_DECREF(f->v.ckeys);
    }
    Py_DECREF(f->obj);
}

/* A list or tuple (or subclass) of n elements. */
TERSA_INLINE int enc_open_seq(enc_ctx *e, PyObject *o, uint8_t kind, Py_ssize_t n) {
    eframe *f = enc_push(e, o, kind);
    if (TERSA_UNLIKELY(!f)) return -1;
    f->n = n;
    f->u.at = e->hint_at; /* the elements share their list's hint */
    if (TERSA_UNLIKELY(!tersa_write_array_begin(e->w, (size_t)n))) {
        enc_pop(e);
        return enc_writer_fail(e);
    }
    return 0;
}

static int enc_open_pairs(enc_ctx *e, PyObject *o, PyObject *items);

/* Room in kvs for the keys and values of a dict of n entries. */
TERSA_INLINE int enc_kv_room(enc_ctx *e, Py_ssize_t n) {
    if (TERSA_LIKELY(e->kv_cap - e->kv_used >= 2 * (size_t)n)) return 0;
    return enc_grow((void **)&e->kvs, &e->kv_cap, e->kv_used + 2 * (size_t)n, sizeof(PyObject *));
}

/* A dict (exact type): a shaped map if its keys are all str or Symbol, else
 * the pairs of a generic map. The keys and values are read where they are,
 * key i then value i: in the dict's own entry table when it holds only str
 * keys and no deleted entries (the common case: no copy), else gathered into
 * kvs in that layout. */
TERSA_INLINE int enc_open_dict(enc_ctx *e, PyObject *o) {
    Py_ssize_t n = PyDict_GET_SIZE(o);
    PyObject **kv = NULL, **ents = NULL;
    Py_ssize_t i = 0;
    int textual = 1, owned = 0;
    uint64_t version = 0;
#if TERSA_DICT_INTERNALS
    PyDictObject *mp = (PyDictObject *)o;
    version = mp->ma_version_tag;
    if (TERSA_LIKELY(mp->ma_values == NULL)) {
        tersa_dict_keys *dk = (tersa_dict_keys *)mp->ma_keys;
        Py_ssize_t nent = dk->dk_nentries;
        if (TERSA_LIKELY(dk->dk_kind == TERSA_DK_UNICODE && nent == n)) {
            /* All keys exact str, no deleted entry (a deletion leaves a NULL
             * entry counted in dk_nentries but not in ma_used). */
            tersa_dict_uentry *ep = TERSA_DK_ENTRIES(dk);
            ents = kv = (PyObject **)ep;
            i = n;
            /* The values' headers (type, str kind and length) are read one
             * after another below: their cache misses overlap now. */
            for (PyObject *const *v = kv + 1, *const *end = kv + 2 * n; v < end; v += 2) TERSA_PREFETCH(*v);
        } else {
            if (enc_kv_room(e, n) < 0) return -1;
            kv = e->kvs + e->kv_used;
            if (dk->dk_kind == TERSA_DK_UNICODE) {
                const tersa_dict_uentry *ep = TERSA_DK_ENTRIES(dk);
                for (Py_ssize_t j = 0; j < nent; j++) {
                    if (ep[j].me_value) {
                        kv[2 * i] = ep[j].me_key;
                        kv[2 * i++ + 1] = ep[j].me_value;
                    }
                }
            } else {
                const tersa_dict_entry *ep = TERSA_DK_ENTRIES(dk);
                for (Py_ssize_t j = 0; j < nent; j++) {
                    if (ep[j].me_value) {
                        PyTypeObject *kt = Py_TYPE(ep[j].me_key);
                        if (kt != &PyUnicode_Type && kt != SymbolType) textual = 0;
                        kv[2 * i] = ep[j].me_key;
                        kv[2 * i++ + 1] = ep[j].me_value;
                    }
                }
            }
        }
    } else
#endif
    {
        /* Portable path: hold references, so that Python code run while
         * encoding cannot free what is still to be written. */
        if (enc_kv_room(e, n) < 0) return -1;
        kv = e->kvs + e->kv_used;
        owned = 1;
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (i < n && PyDict_Next(o, &pos, &k, &v)) {
            PyTypeObject *kt = Py_TYPE(k);
            if (kt != &PyUnicode_Type && kt != SymbolType) textual = 0;
            kv[2 * i] = Py_NewRef(k);
            kv[2 * i++ + 1] = Py_NewRef(v);
        }
    }
    n = i;
    if (TERSA_UNLIKELY(!textual)) {
        if (owned) {
            for (Py_ssize_t j = 0; j < 2 * n; j++) Py_DECREF(kv[j]);
        }
        if (enc_settle(e) < 0) return -1; /* PyDict_Items allocates tracked objects */
        PyObject *items = PyDict_Items(o); /* a new list: no other code holds it */
        return items ? enc_open_pairs(e, o, items) : -1;
    }
    size_t at = e->hint_at;
    size_t kv_at = e->kv_used;
    eframe *f = enc_push(e, o, EF_DICT);
    if (TERSA_UNLIKELY(!f)) {
        if (owned) {
            for (Py_ssize_t j = 0; j < 2 * n; j++) Py_DECREF(kv[j]);
        }
        return -1;
    }
    f->u.kv = kv_at;
    f->ents = ents;
    f->n = n;
    f->owned = (uint8_t)owned;
    f->v.version = version;
    if (!ents) e->kv_used = kv_at + 2 * (size_t)n;
    Py_ssize_t ent = enc_map_open(e, at, kv, 2, n, 0);
    if (TERSA_UNLIKELY(ent == -2)) {
        enc_pop(e);
        return -1;
    }
    f->hint0 = HINT_OF(ent, 0);
    return 0;
}

/* EF_DICT frame f's keys and values: key i at [2i], its value at [2i + 1]. */
TERSA_INLINE PyObject **dict_kv(const enc_ctx *e, const eframe *f) { return f->ents ? f->ents : e->kvs + f->u.kv; }

#include "known_types.c"
#include "encode_numpy.c"
#include "encode_other.c"

/* --- the loop ------------------------------------------------------------- */

/* After an error: close every frame, recording the path from the innermost
 * out. A frame's item i - 1 is where the error happened, except in the
 * innermost frame when `own` is 0 (the error is the frame's own: a list that
 * changed size, a dict that changed). Conversions add no path component. */
TERSA_NOINLINE static void enc_unwind(enc_ctx *e, int own) {
    while (e->depth) {
        eframe *f = &e->frames[e->depth - 1];
        /* A cycle's path ends where it closes: the frames from there on add nothing. */
        int past_cycle = e->cycle && e->depth - 1 >= e->cycle_close;
        if (own && f->i > 0 && !past_cycle) {
            switch (f->kind) {
            case EF_LIST:
            case EF_TUPLE:
                enc_path_push(e, NULL, f->i - 1);
                break;
            case EF_DICT:
#if TERSA_DICT_INTERNALS
                /* a changed dict may have freed the borrowed key */
                if (!f->owned && ((PyDictObject *)f->obj)->ma_version_tag != f->v.version) {
                    enc_fail(e, "dict changed during encoding");
                    break;
                }
#endif
                enc_path_push(e, dict_kv(e, f)[2 * (f->i - 1)], 0);
                break;
            case EF_PAIRS: {
                Py_ssize_t pair = f->textual ? f->i - 1 : (f->i - 1) >> 1;
                enc_path_push(e, PyTuple_GET_ITEM(PySequence_Fast_ITEMS(f->items)[pair], 0), 0);
                break;
            }
            default:
                break;
            }
        }
        if (e->cycle && e->depth - 1 == e->cycle_open) e->cycle_mark = e->path_len;
        own = 1;
        enc_pop(e);
    }
}

#include "encode_lists.c"

/* The next item of a tersa.Map or dict-items frame, and the hint slot for it. */
TERSA_INLINE PyObject *pairs_item(enc_ctx *e, const eframe *f, Py_ssize_t i, size_t *at) {
    if (f->textual) {
        *at = f->hint0 == HINT_NONE ? HINT_NONE : f->hint0 + (size_t)i;
        return PyTuple_GET_ITEM(PySequence_Fast_ITEMS(f->items)[i], 1);
    }
    *at = HINT_NONE;
    if (!(i & 1)) return PyList_GET_ITEM(f->v.ckeys, i >> 1);
    return PyTuple_GET_ITEM(PySequence_Fast_ITEMS(f->items)[i >> 1], 1);
}

/* Encode `o` and everything in it: 0, or -1 with the error pending (see
 * enc_raise). Containers and conversions push frames; the loop of the
 * innermost frame writes its scalars inline and descends into its next
 * other item (`value`), or closes the frame and resumes its parent. A frame
 * just opened is entered directly; a resumed one through the switch. */
static int enc_run(enc_ctx *e, PyObject *o) {
    eframe *f;
    Py_ssize_t i, n;
    size_t at;
    int s = enc_scalar(e, o);
    if (s <= 0) return s;
value: /* o: any value but the inline scalars */
    if (Py_TYPE(o) == &PyDict_Type) {
        if (TERSA_UNLIKELY(enc_open_dict(e, o) < 0)) goto fail;
        f = &e->frames[e->depth - 1];
        if (TERSA_LIKELY(f->kind == EF_DICT)) goto dict;
        goto resume_top;
    }
    if (Py_TYPE(o) == &PyList_Type) {
        if (TERSA_UNLIKELY(enc_open_seq(e, o, EF_LIST, PyList_GET_SIZE(o)) < 0)) goto fail;
        f = &e->frames[e->depth - 1];
        goto list;
    }
    if (TERSA_UNLIKELY(enc_other(e, o) < 0)) goto fail;
    if (!e->depth) return 0;
resume_top:
    f = &e->frames[e->depth - 1];
resume:
    switch (f->kind) {
    case EF_LIST:
        goto list;
    case EF_TUPLE:
        goto tuple;
    case EF_DICT:
#if TERSA_DICT_INTERNALS
        /* The values are borrowed: if Python code run while encoding (a
         * `default`, a tzinfo) changed this dict, stop before using them. */
        if (TERSA_UNLIKELY(!f->owned && ((PyDictObject *)f->obj)->ma_version_tag != f->v.version)) {
            enc_fail(e, "dict changed during encoding");
            goto fail_own;
        }
#endif
        goto dict;
    case EF_PAIRS:
        goto pairs;
    default: /* EF_CONV */
        if (f->i == 0) {
            f->i = 1;
            o = f->items;
            s = enc_scalar(e, o);
            if (s > 0) goto value;
            if (s < 0) goto fail;
        }
        goto close;
    }
list:
    for (i = f->i, n = f->n; i < n;) {
        if (TERSA_UNLIKELY(PyList_GET_SIZE(f->obj) != n)) {
            f->i = i;
            enc_fail(e, "list changed size during encoding");
            goto fail_own;
        }
        o = PyList_GET_ITEM(f->obj, i++);
        s = enc_scalar(e, o);
        if (TERSA_LIKELY(s == 0)) continue;
        f->i = i;
        if (TERSA_UNLIKELY(s < 0)) goto fail;
        at = f->u.at;
        if (Py_TYPE(o) == &PyList_Type && (s = enc_leaf_list(e, &o, at)) <= 0) {
            if (TERSA_UNLIKELY(s < 0)) goto fail;
            continue;
        }
        e->hint_at = at;
        goto value;
    }
    f->i = i;
    if (TERSA_UNLIKELY(!tersa_write_array_end(e->w))) goto fail_close;
    goto close;
tuple:
    for (i = f->i, n = f->n; i < n;) {
        o = PyTuple_GET_ITEM(f->obj, i++);
        s = enc_scalar(e, o);
        if (TERSA_LIKELY(s == 0)) continue;
        f->i = i;
        if (TERSA_UNLIKELY(s < 0)) goto fail;
        at = f->u.at;
        if (Py_TYPE(o) == &PyList_Type && (s = enc_leaf_list(e, &o, at)) <= 0) {
            if (TERSA_UNLIKELY(s < 0)) goto fail;
            continue;
        }
        e->hint_at = at;
        goto value;
    }
    f->i = i;
    if (TERSA_UNLIKELY(!tersa_write_array_end(e->w))) goto fail_close;
    goto close;
dict: {
    PyObject **kv = dict_kv(e, f);
    for (i = f->i, n = f->n; i < n;) {
        o = kv[2 * i++ + 1];
        s = enc_scalar(e, o);
        if (TERSA_LIKELY(s == 0)) continue;
        f->i = i;
        if (TERSA_UNLIKELY(s < 0)) goto fail;
        at = f->hint0 == HINT_NONE ? HINT_NONE : f->hint0 + (size_t)i - 1;
        if (Py_TYPE(o) == &PyList_Type && (s = enc_leaf_list(e, &o, at)) <= 0) {
            if (TERSA_UNLIKELY(s < 0)) goto fail;
            continue;
        }
        e->hint_at = at;
        goto value;
    }
    f->i = i;
    if (TERSA_UNLIKELY(!tersa_write_map_end(e->w))) goto fail_close;
    goto close;
}
pairs:
    for (i = f->i, n = f->n; i < n;) {
        o = pairs_item(e, f, i++, &at);
        s = enc_scalar(e, o);
        if (TERSA_LIKELY(s == 0)) continue;
        f->i = i;
        if (TERSA_UNLIKELY(s < 0)) goto fail;
        if (Py_TYPE(o) == &PyList_Type && (s = enc_leaf_list(e, &o, at)) <= 0) {
            if (TERSA_UNLIKELY(s < 0)) goto fail;
            continue;
        }
        e->hint_at = at;
        goto value;
    }
    f->i = i;
    if (TERSA_UNLIKELY(!tersa_write_map_end(e->w))) goto fail_close;
close:
    /* A conversion's result or a map's pairs may hold the last reference to
     * strs lent to the writer. */
    if (TERSA_UNLIKELY(f->kind >= EF_PAIRS) && TERSA_UNLIKELY(!enc_end_loans(e))) goto fail_close;
    enc_pop(e);
    if (!e->depth) return 0;
    f--; /* the parent (frames move only when one is pushed) */
    goto resume;
fail_close: /* the innermost frame is complete: its parent's item is in the path */
    enc_writer_fail(e);
    enc_pop(e);
    enc_unwind(e, 1);
    return -1;
fail_own:
    enc_unwind(e, 0);
    return -1;
fail:
    enc_unwind(e, 1);
    return -1;
}

/* Encode one top-level value with e (already started). 0 or -1 with the exception set. */
static int enc_top(enc_ctx *e, PyObject *o) {
    e->hint_at = HINT_ROOT;
    enc_set_room(e);
    tersa_writer_set_max_depth(e->w, e->max_depth);
    if (enc_run(e, o) < 0) {
        enc_raise(e);
        return -1;
    }
    return 0;
}

static PyObject *names_dumps[4];

static PyObject *tersa_dumps(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "dumps() takes exactly 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    PyObject *kw[4] = {NULL, NULL, NULL, NULL};
    if (kwnames && parse_kwargs("dumps", kwnames, args + nargs, names_dumps, kw, 4) < 0) return NULL;
    uint32_t opt = 0, max_depth = TERSA_DEFAULT_MAX_DEPTH;
    if (kw[0] && parse_option(kw[0], &opt) < 0) return NULL;
    if (kw[3] && parse_max_depth(kw[3], &max_depth) < 0) return NULL;
    const tersa_dict *dict = NULL;
    if (kw[2] && kw[2] != Py_None) {
        if (!PyObject_TypeCheck(kw[2], &DictionaryType)) {
            PyErr_SetString(PyExc_TypeError, "dictionary must be a tersa.Dictionary");
            return NULL;
        }
        dict = ((DictionaryObject *)kw[2])->dict;
    }
    PyObject *dflt = kw[1] == Py_None ? NULL : kw[1];
    if (dflt && !PyCallable_Check(dflt)) {
        PyErr_SetString(PyExc_TypeError, "default must be callable");
        return NULL;
    }
    if (stack_guard("dumps") < 0) return NULL;
    enc_ctx *e = enc_acquire();
    if (!e) return NULL;
    e->opt = opt;
    e->max_depth = max_depth;
    e->default_fn = dflt;
    e->single = 1;
    e->keys_lent = 1; /* (the lookup is empty: enc_release cleared it) */
    PyObject *result = NULL;
    size_t len = 0;
    Py_XINCREF(kw[2]); /* the dictionary must outlive the encoding */
    Py_XINCREF(dflt);
    if (!tersa_writer_start(e->w, dict, 0)) {
        PyErr_NoMemory();
    } else if (enc_top(e, args[0]) == 0) {
        if (tersa_writer_take_output(e->w, &len)) {
            result = e->out;
            e->out = NULL;
            g_out_hint = tersa_output_block_hint(len);
            if (_PyBytes_Resize(&result, (Py_ssize_t)len) < 0) result = NULL;
        } else {
            const uint8_t *data = tersa_writer_data(e->w, &len);
            result = PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)len);
        }
    } else {
        size_t unused;
        if (tersa_writer_take_output(e->w, &unused)) Py_CLEAR(e->out); /* a failed encode's bytes */
    }
    Py_XDECREF(dflt);
    Py_XDECREF(kw[2]);
    enc_release(e, len);
    return result;
}
