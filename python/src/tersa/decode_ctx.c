/*
 * decode_ctx.c - the decoding context: the core's reader, the per-buffer
 * caches (decode_cache.c) and the open containers (decode.c), pooled
 * across loads() calls, and the error it raises.
 *
 * Part of _tersa.c (included by decode.c at the place of its use): not compiled alone.
 */

#define UNTRACKED_KEEP 262144 /* a pooled context keeps an array of at most this many (2 MB) of them */

typedef struct dec_ctx {
    tersa_reader *r;
    uint32_t opt;
    int strong;               /* strs holds references (streams); else borrowed, see dec_str */
    tersa_slots strs;         /* str object per string-table index (objcache.h) */
    tersa_shapetab shapes;    /* per shape index (objcache.h): off = its keys in kpool, tmpl (strong) */
    PyObject **kpool;
    size_t kpool_used, kpool_cap;
    tersa_slots lkeys;        /* long key objects per string-table index: [2i] str, [2i+1] Symbol (strong) */
    struct dframe *frames;    /* open containers, outermost first (see dec_value) */
    size_t nframes, frames_cap;
    size_t ahead;             /* bytes open containers may still allocate ahead of their items (see AHEAD) */
    size_t floats;            /* floats made in this call, up to FLOAT_FREE_LIST */
    int defer_gc;             /* keep the containers out of the GC until the value is done (see dec_hold) */
    struct hash_group *groups; /* keys per Python hash value of a generic map (see dict_of_items) */
    size_t groups_cap;
    PyObject **untracked;     /* containers of the value being built, kept out of the GC until it is done */
    size_t nuntracked, untracked_cap;
    uint8_t large;            /* the last input was large (see pool_keep) */
} dec_ctx;

static dec_ctx *dec_ctx_new(void) {
    dec_ctx *d = PyMem_Calloc(1, sizeof(dec_ctx));
    if (!d) {
        PyErr_NoMemory();
        return NULL;
    }
    d->r = tersa_reader_new(NULL);
    if (!d->r) {
        PyMem_Free(d);
        PyErr_NoMemory();
        return NULL;
    }
    return d;
}

static void release_handle(uintptr_t *h, void *arg) {
    (void)arg;
    Py_DECREF((PyObject *)*h);
}

/* The emptiness tests come first: a small message fills no string slot and
 * no long key, and a call each would cost more than the rest of the clearing. */
static void dec_ctx_clear(dec_ctx *d) {
    if (d->strs.hi) tersa_slots_clear(&d->strs, d->strong ? release_handle : NULL, NULL);
    for (size_t i = 0; i < d->kpool_used; i++) Py_DECREF(d->kpool[i]);
    d->kpool_used = 0;
    if (d->shapes.hi) tersa_shapetab_clear(&d->shapes, release_handle, NULL);
    if (d->lkeys.hi) tersa_slots_clear(&d->lkeys, release_handle, NULL);
}

static void dec_ctx_free(dec_ctx *d) {
    if (!d) return;
    dec_ctx_clear(d);
    tersa_reader_free(d->r);
    tersa_slots_free(&d->strs);
    tersa_shapetab_free(&d->shapes);
    PyMem_Free(d->kpool);
    tersa_slots_free(&d->lkeys);
    PyMem_Free(d->frames);
    PyMem_Free(d->groups);
    PyMem_Free(d->untracked);
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
    tersa_reader_set_max_depth(d->r, TERSA_DEFAULT_MAX_DEPTH);
    if (d->untracked_cap > UNTRACKED_KEEP) {
        PyMem_Free(d->untracked);
        d->untracked = NULL;
        d->untracked_cap = 0;
    }
    if (g_dec_pool || !pool_keep(&d->large, input_len) || d->strs.cap > 65536 || d->shapes.cap > 65536 ||
        d->kpool_cap > 65536 || d->lkeys.cap / 2 > 65536 || d->frames_cap > 4096 || d->groups_cap > 65536) {
        dec_ctx_free(d);
        return;
    }
    g_dec_pool = d;
}

TERSA_NOINLINE static PyObject *dec_fail(dec_ctx *d) {
    raise_tersa_error(tersa_reader_error(d->r));
    return NULL;
}
