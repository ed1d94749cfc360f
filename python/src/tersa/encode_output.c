/*
 * encode_output.c - where dumps writes its output (included by encode.c
 * after enc_ctx): outputs up to TERSA_OUTPUT_OWN_MAX in the pooled writer's
 * own buffer, copied into their bytes object; larger ones straight into the
 * bytes object dumps returns, shrunk to fit at the end (the core's
 * tersa_output callbacks).
 */

/* The length of the last output dumps wrote into its bytes object: the first
 * block's size for the next (kept across pooled contexts, which a large
 * output often renews). */
static size_t g_out_hint;

/* tersa_output.grow: the bytes object e->out, created or resized to at least
 * `need` bytes: twice that, or for the first block the last output's length
 * if that is enough. Exactly that length: outputs of one size then take
 * blocks of one size, which malloc serves again from the heap (a larger
 * block would cross its adaptive mmap threshold, set by the last free, and
 * be mapped afresh, page faults included, at every call). */
static uint8_t *out_grow(void *ctx, uint8_t *old, size_t len, size_t need, size_t *cap) {
    enc_ctx *e = ctx;
    (void)len;
    size_t want = need <= (size_t)PY_SSIZE_T_MAX / 2 ? 2 * need : need;
    if (want > (size_t)PY_SSIZE_T_MAX - sizeof(PyBytesObject)) return NULL;
    if (!old) {
        /* The last output's length may be far more than this one needs:
         * without the memory for it, this one is not refused. */
        if (g_out_hint >= need && g_out_hint <= (size_t)PY_SSIZE_T_MAX - sizeof(PyBytesObject)) {
            e->out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)g_out_hint);
            if (e->out) {
                *cap = g_out_hint;
                return (uint8_t *)PyBytes_AS_STRING(e->out);
            }
            PyErr_Clear();
        }
        e->out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)want);
    } else if (_PyBytes_Resize(&e->out, (Py_ssize_t)want) < 0) {
        e->out = NULL; /* freed by _PyBytes_Resize */
    }
    if (!e->out) {
        PyErr_Clear(); /* the writer's TERSA_ERR_NOMEM raises MemoryError */
        return NULL;
    }
    *cap = want;
    return (uint8_t *)PyBytes_AS_STRING(e->out);
}

static void out_release(void *ctx, uint8_t *block) {
    (void)block;
    Py_CLEAR(((enc_ctx *)ctx)->out);
}

static const tersa_output dumps_output = {out_grow, out_release, TERSA_OUTPUT_OWN_MAX};
