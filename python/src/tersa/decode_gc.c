/*
 * decode_gc.c - the containers of a value being built are kept out of
 * CPython's garbage collector until the value is done.
 *
 * Part of _tersa.c (included by decode.c at the place of its use): not compiled alone.
 */

/* Every container allocation counts towards CPython's next collection, and
 * each collection walks every tracked object of its generations: while a
 * large value is built, the young and then the older generations fill with
 * its finished containers and are walked again and again, most of all by
 * the full collections that its growth triggers. The containers of the value
 * being built are therefore kept untracked, each with a reference held here,
 * and all tracked when dec_value returns (whether it succeeds or not), so
 * the GC sees the value once, whole, as it would have in the end anyway.
 * Nothing else can reach them meanwhile, so no cycle can form through them.
 * Should the array not grow, the container simply stays tracked. Values of
 * a few kilobytes skip all this: no collection has time to walk them twice. */
#define GC_DEFER_MIN_BYTES 4096

#if TERSA_DICT_INTERNALS
/* CPython 3.11's GC header (Include/internal/pycore_gc.h), in front of every
 * GC object: a tracked object is linked into a generation's list. Checking
 * and unlinking inline, as _PyObject_GC_IS_TRACKED and _PyObject_GC_UNTRACK
 * do, spares two calls per container, which documents made of many small
 * lists feel. Tracking stays a call: it needs the GC's state. */
typedef struct {
    uintptr_t next;
    uintptr_t prev; /* the low 2 bits are flags */
} tersa_gc_head;
#define TERSA_GC_HEAD(o) ((tersa_gc_head *)(o) - 1)
TERSA_INLINE int gc_is_tracked(PyObject *o) { return TERSA_GC_HEAD(o)->next != 0; }
/* o must be tracked. */
TERSA_INLINE void gc_untrack(PyObject *o) {
    tersa_gc_head *g = TERSA_GC_HEAD(o);
    tersa_gc_head *prev = (tersa_gc_head *)(g->prev & ~(uintptr_t)3);
    tersa_gc_head *next = (tersa_gc_head *)g->next;
    prev->next = (uintptr_t)next;
    next->prev = (next->prev & (uintptr_t)3) | (uintptr_t)prev;
    g->next = 0;
    g->prev &= 1; /* keeps only the finalized flag */
}
#else
#define gc_is_tracked PyObject_GC_IsTracked
#define gc_untrack PyObject_GC_UnTrack
#endif

TERSA_NOINLINE static int dec_grow_untracked(dec_ctx *d) {
    size_t cap = d->untracked_cap ? d->untracked_cap * 2 : 256;
    PyObject **p = PyMem_Realloc(d->untracked, cap * sizeof(PyObject *));
    if (!p) return -1;
    d->untracked = p;
    d->untracked_cap = cap;
    return 0;
}

/* Hold untracked container o until the value is done: 0, or -1 if it is
 * not held (a small value, or the array cannot grow): then o must be
 * tracked now. */
TERSA_INLINE int dec_hold(dec_ctx *d, PyObject *o) {
    if (!d->defer_gc) return -1;
    if (TERSA_UNLIKELY(d->nuntracked == d->untracked_cap) && dec_grow_untracked(d) < 0) return -1;
    d->untracked[d->nuntracked++] = Py_NewRef(o);
    return 0;
}

/* o: a tracked container just made. */
TERSA_INLINE void dec_untrack(dec_ctx *d, PyObject *o) {
    if (dec_hold(d, o) == 0) gc_untrack(o);
}

/* Track the containers untracked while building a value, and drop their
 * references (freeing those no longer part of anything). */
TERSA_NOINLINE static void dec_track_all(dec_ctx *d) {
    size_t n = d->nuntracked;
    d->nuntracked = 0;
    for (size_t i = 0; i < n; i++) {
        PyObject *o = d->untracked[i];
        if (!gc_is_tracked(o)) PyObject_GC_Track(o);
    }
    for (size_t i = 0; i < n; i++) Py_DECREF(d->untracked[i]);
}
