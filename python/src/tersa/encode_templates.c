/*
 * encode_templates.c - map-definition templates (tersa_write_map_template)
 * kept across buffers, found by the identities of a map's keys.
 *
 * The first map of a buffer (a message) or of a sync frame defines its
 * shape with every key, which the shape lookup cannot spare: it starts empty
 * at those points. The writer records that definition once and replays it
 * on a later buffer; this cache finds the recording again by the key objects.
 *
 * The rule that keeps the bytes identical: an entry holds a strong reference
 * to each of its keys, so while it is stored its identities name the same
 * str (or Symbol) objects, whose text, and so whose bytes and kind, cannot
 * change. Only the key objects and their order are compared, never the dict
 * that holds them (which may change or be gone). Everything else a
 * definition depends on (the point in the buffer, the dictionary, whether
 * the keys were validated) the writer checks at each replay, and declines
 * otherwise.
 *
 * ENC_TPL_SETS sets of two ways, chosen by the identity hash; a hit makes
 * the other way the next to be replaced. A shape is recorded on its second
 * miss in its set (`ghost` remembers the first), so that buffers of ever-new
 * shapes allocate no templates, and the sets only once one is recorded. Entries are released on replacement and
 * with their context (enc_ctx_free: the pooled context of dumps, or a
 * stream encoder's); a template the writer is replaying stays alive through
 * the writer's own reference.
 *
 * Part of _tersa.c (included by encode.c): not compiled alone.
 */

#define ENC_TPL_SETS 32
#define ENC_TPL_KEYS 16

typedef struct enc_tpl {
    tersa_mapdef *md; /* NULL: an empty way */
    Py_ssize_t n;
    PyObject *keys[ENC_TPL_KEYS]; /* strong */
} enc_tpl;

typedef struct enc_tpl_set {
    enc_tpl way[2];
    uint8_t next; /* the way replaced next */
} enc_tpl_set;

/* The sets (allocated at the first recording) and, per set, the high half of
 * the identity hash of the last shape that missed there unrecorded. */
typedef struct enc_tpls {
    enc_tpl_set *sets;
    uint32_t ghost[ENC_TPL_SETS];
} enc_tpls;

static void enc_tpl_clear(enc_tpl *t) {
    tersa_mapdef *md = t->md;
    if (!md) return;
    t->md = NULL;
    for (Py_ssize_t i = 0; i < t->n; i++) Py_DECREF(t->keys[i]);
    t->n = 0;
    tersa_mapdef_release(md);
}

static void enc_tpl_free(enc_tpls *c) {
    enc_tpl_set *sets = c->sets;
    if (!sets) return;
    c->sets = NULL;
    for (size_t s = 0; s < ENC_TPL_SETS; s++) {
        enc_tpl_clear(&sets[s].way[0]);
        enc_tpl_clear(&sets[s].way[1]);
    }
    PyMem_Free(sets);
}

TERSA_INLINE bool enc_tpl_same(const enc_tpl *t, PyObject *const *keys, size_t stride, Py_ssize_t n) {
    if (!t->md || t->n != n) return false;
    for (Py_ssize_t i = 0; i < n; i++)
        if (t->keys[i] != keys[stride * (size_t)i]) return false;
    return true;
}

TERSA_INLINE size_t enc_tpl_set_of(uint64_t h) { return (size_t)(h >> 59) & (ENC_TPL_SETS - 1); }

/* Open the map of these keys (identity hash h) by a template if one applies:
 * 1 done, 0 not (*record is then whether to record one), -1 writer error.
 * The caller has checked n <= ENC_TPL_KEYS. */
static int enc_tpl_open(enc_tpls *c, uint64_t h, tersa_writer *w, PyObject *const *keys, size_t stride, Py_ssize_t n,
                        int checked, bool *record) {
    size_t at = enc_tpl_set_of(h);
    bool stale = false;
    if (c->sets) {
        enc_tpl_set *s = &c->sets[at];
        for (int i = 0; i < 2; i++) {
            if (!enc_tpl_same(&s->way[i], keys, stride, n)) continue;
            int r = tersa_write_map_template(w, s->way[i].md, checked != 0);
            if (r != 0) {
                s->next = (uint8_t)(i ^ 1);
                return r;
            }
            stale = true; /* recorded under another dictionary or unchecked: record this one too */
        }
    }
    uint32_t tag = (uint32_t)(h >> 32) | 1; /* never 0, the empty ghost */
    *record = stale || c->ghost[at] == tag;
    c->ghost[at] = *record ? 0 : tag;
    return 0;
}

/* Keep a template just recorded for these keys (identity hash h). */
static void enc_tpl_store(enc_tpls *c, uint64_t h, PyObject *const *keys, size_t stride, Py_ssize_t n,
                          tersa_mapdef *md) {
    if (!c->sets) {
        /* Not zeroed whole: an empty way is one without a template. */
        c->sets = PyMem_Malloc(ENC_TPL_SETS * sizeof(enc_tpl_set));
        if (!c->sets) {
            tersa_mapdef_release(md); /* no cache: no gain, no loss */
            return;
        }
        for (size_t i = 0; i < ENC_TPL_SETS; i++) {
            c->sets[i].way[0].md = c->sets[i].way[1].md = NULL;
            c->sets[i].next = 0;
        }
    }
    enc_tpl_set *s = &c->sets[enc_tpl_set_of(h)];
    enc_tpl *t = &s->way[s->next];
    enc_tpl_clear(t);
    for (Py_ssize_t i = 0; i < n; i++) {
        t->keys[i] = keys[stride * (size_t)i];
        Py_INCREF(t->keys[i]);
    }
    t->n = n;
    t->md = md;
    s->next ^= 1;
}
