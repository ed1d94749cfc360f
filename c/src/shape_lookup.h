/*
 * shape_lookup.h - the encode side's identity -> shape lookup, shared by the
 * Ruby and Python bindings: a map's key objects, by identity, to the index
 * of the shape the writer gave those keys in the current buffer.
 *
 * Not installed, not part of tersa.h: the bindings compile the core with
 * their own sources and include this header from c/src. The lookup never
 * dereferences a key; it stores identities (an object's address or handle
 * as a tersa_ident) and compares them. What makes an identity mean the same
 * object from the moment it was added until it is found is the binding's
 * business, through the hooks:
 *   - retain / release (optional): called with keys entering and leaving
 *     the lookup; a binding whose objects are reference counted holds a
 *     reference to each (then an address cannot be reused by another key
 *     while it is stored);
 *   - tersa_shapes_clear: a binding whose collector may free or move
 *     unreferenced keys clears the lookup whenever a collection may have
 *     run, or marks the keys tersa_shapes_keys lists.
 * Shape indices are per buffer, and a stream's sync frame starts them
 * again: the binding clears the lookup at each of those too.
 *
 * Policy (one for every binding): a hash table of at most
 * TERSA_SHAPES_MAX entries and TERSA_SHAPES_POOL_MAX stored keys, indexed by
 * open addressing on a hash of the identities (tersa_shapes_hash; a hit is
 * confirmed key by key). An entry that would pass
 * either bound empties the table first (its entries are released) and then
 * goes in: the memory is bounded whatever the document, and a document of
 * fewer shapes than the bound finds every shape it repeats. Clearing is
 * O(1) apart from releasing keys: index slots carry a generation tag, and
 * slots of an older generation read as empty.
 *
 * Optional, for a binding whose writer says whether a map defined its
 * shape (tersa_writer_last_defined_shape): leaving out shapes that are not
 * seen again. Storing a shape costs about as much as looking it up, and in
 * a document of many shapes most may occur once. A binding asks
 * tersa_shapes_keep_new before storing a shape the writer just defined, and
 * stores every shape the writer found (a repeat the lookup missed), noting
 * it with tersa_shapes_note_repeat, as it notes each entry it finds. Once a
 * buffer has defined TERSA_SHAPES_KEEP_MIN shapes, new ones are kept only
 * while at least one in TERSA_SHAPES_KEEP_RATIO of them was seen again.
 * The choice is deterministic and changes only the cost of a lookup: the
 * writer finds a shape left out by its keys.
 *
 * Optional hints (for an encoder that walks values in a loop and knows
 * where it is): one per stored key position, the entry + 1 of the map last
 * seen as the value at that position, plus a root slot and a scratch slot.
 * A hint is only a guess; it is confirmed like any other entry.
 *
 * Thread safety: none. A lookup belongs to one encoder, used by one thread
 * at a time.
 */
#ifndef TERSA_SHAPE_LOOKUP_H
#define TERSA_SHAPE_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "tersa.h"

/** A key's identity. May alias the binding's own object pointers (PyObject *,
 *  VALUE), so that the binding's arrays of keys are read in place. */
#if defined(__GNUC__) || defined(__clang__)
typedef uintptr_t __attribute__((may_alias)) tersa_ident;
#else
typedef uintptr_t tersa_ident;
#endif

/** The bounds (see the policy above). Index slots keep an entry + 1 in
 *  16 bits, so TERSA_SHAPES_MAX stays below 65,536. */
#define TERSA_SHAPES_MAX 4096u
#define TERSA_SHAPES_POOL_MAX 65536u

/** Hint slots other than a stored key position (see tersa_shapes_hint). */
#define TERSA_SHAPES_HINT_ROOT ((size_t)0)
#define TERSA_SHAPES_HINT_NONE ((size_t)-1)

typedef struct tersa_shape_hooks {
    /** Keys entering the lookup (NULL: nothing to do). */
    void (*retain)(void *ctx, const tersa_ident *keys, size_t n);
    /** Keys leaving it, each once for each retain (NULL: nothing to do). */
    void (*release)(void *ctx, const tersa_ident *keys, size_t n);
    void *ctx;
} tersa_shape_hooks;

typedef struct tersa_shape_entry {
    uint64_t hash;
    uint32_t off;   /* its keys: pool[off, off + n); its hints at the same offsets */
    uint32_t n;
    uint32_t shape; /* the writer's shape index */
    uint32_t seen;  /* noted as a repeat (tersa_shapes_note_repeat) */
} tersa_shape_entry;

/** The lookup. Its fields are read by the inline functions below only. */
typedef struct tersa_shapes {
    tersa_shape_entry *ents;
    uint32_t nents, ents_cap;
    uint32_t *index;    /* tag << 16 | (entry + 1); a slot of another tag is empty */
    uint32_t mask;      /* index slots - 1 (0: no index yet, `index` is one static empty slot) */
    uint32_t tag;       /* the current generation, 1..65535 */
    tersa_ident *pool;  /* the stored keys */
    uint32_t *hints;    /* per stored key (NULL without hints) */
    size_t pool_used, pool_cap, hints_cap;
    uint32_t hint_root, hint_scratch;
    bool with_hints;
    uint32_t peak;       /* the most shapes a buffer used since the tables were sized */
    uint32_t small_runs; /* buffers in a row that used a small part of that */
    uint32_t defined;    /* since the last clear: shapes the writer defined (tersa_shapes_keep_new) */
    uint32_t repeated;   /* and of those, the ones noted as seen again */
    tersa_shape_hooks hooks;
    const tersa_alloc *alloc;
} tersa_shapes;

/** An empty lookup (alloc NULL: malloc; hooks NULL: none). Allocates nothing
 *  until the first tersa_shapes_add. */
void tersa_shapes_init(tersa_shapes *s, const tersa_alloc *alloc, const tersa_shape_hooks *hooks, bool hints);
/** Release every key and free the tables; the lookup can be initialized again. */
void tersa_shapes_free(tersa_shapes *s);
void tersa_shapes_clear_slow(tersa_shapes *s);

/** Forget every entry (and hint), releasing the keys: between buffers, at
 *  sync frames, when an identity may have stopped meaning its object. */
TERSA_INLINE void tersa_shapes_clear(tersa_shapes *s) {
    if (s->nents | s->pool_used) tersa_shapes_clear_slow(s);
    s->hint_root = s->hint_scratch = 0;
    s->defined = s->repeated = 0;
}

/** The policy for shapes seen once (see above). */
#define TERSA_SHAPES_KEEP_MIN 64u
#define TERSA_SHAPES_KEEP_RATIO 4u

/** The writer defined a new shape: whether to store it. */
TERSA_INLINE bool tersa_shapes_keep_new(tersa_shapes *s) {
    s->defined++;
    return s->defined < TERSA_SHAPES_KEEP_MIN || (uint64_t)s->repeated * TERSA_SHAPES_KEEP_RATIO >= s->defined;
}

/** Entry `ent` (a valid entry index) holds a shape seen again: found by
 *  tersa_shapes_find, or stored after the writer found it. Repeats count
 *  only once the choice depends on them (so that a lookup of few shapes
 *  pays one compare). */
TERSA_INLINE void tersa_shapes_note_repeat(tersa_shapes *s, int32_t ent) {
    if (s->defined < TERSA_SHAPES_KEEP_MIN - 1) return;
    tersa_shape_entry *e = &s->ents[ent];
    if (!e->seen) {
        e->seen = 1;
        s->repeated++;
    }
}

/** The hash of n keys keys[0], keys[stride], ... (stride 2 reads keys
 *  interleaved with values): the sum of every identity, which tells apart
 *  shapes that differ anywhere (records with optional fields), plus the last
 *  key rotated. Additions, no multiplication per key: a hit is confirmed key
 *  by key anyway, and a hash over fewer keys cost more in chains of shapes
 *  that agree on them (records differing in one middle field) than it saved. */
TERSA_INLINE uint64_t tersa_shapes_hash(const tersa_ident *keys, size_t stride, size_t n) {
    if (n == 0) return 0x9e3779b97f4a7c15ull;
    uint64_t sum = (uint64_t)n, sum2 = 0;
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        sum += (uint64_t)keys[stride * i];
        sum2 += (uint64_t)keys[stride * (i + 1)];
    }
    if (i < n) sum += (uint64_t)keys[stride * i];
    sum += sum2;
    uint64_t last = (uint64_t)keys[stride * (n - 1)];
    return ((sum >> 3) + ((last << 39) | (last >> 25))) * 0x9e3779b97f4a7c15ull;
}

/* The index slot where hash h starts probing (the product's high bits are its best). */
TERSA_INLINE uint32_t tersa_shapes_slot(const tersa_shapes *s, uint64_t h) { return (uint32_t)(h >> 40) & s->mask; }

/** Whether entry `ent` (a valid entry index) holds exactly these keys. */
TERSA_INLINE bool tersa_shapes_same(const tersa_shapes *s, uint32_t ent, const tersa_ident *keys, size_t stride,
                                    size_t n) {
    const tersa_shape_entry *e = &s->ents[ent];
    if (e->n != (uint32_t)n) return false;
    const tersa_ident *p = s->pool + e->off;
    size_t i = 0;
    while (i < n && p[i] == keys[stride * i]) i++;
    return i == n;
}

/** The entry holding these keys, or -1. */
TERSA_INLINE int32_t tersa_shapes_find(const tersa_shapes *s, uint64_t h, const tersa_ident *keys, size_t stride,
                                       size_t n) {
    /* (Before the first entry the index is one slot of no generation.) */
    for (uint32_t j = tersa_shapes_slot(s, h);; j = (j + 1) & s->mask) {
        uint32_t slot = s->index[j];
        if ((slot >> 16) != s->tag) return -1;
        uint32_t ent = (slot & 0xffff) - 1;
        if (s->ents[ent].hash == h && tersa_shapes_same(s, ent, keys, stride, n)) return (int32_t)ent;
    }
}

/* tersa_shapes_add's second half, with room for the entry known. */
TERSA_INLINE int32_t tersa_shapes_store(tersa_shapes *s, uint64_t h, const tersa_ident *keys, size_t stride, size_t n,
                                        uint32_t shape) {
    tersa_ident *p = s->pool + s->pool_used;
    if (s->with_hints) {
        uint32_t *hints = s->hints + s->pool_used;
        for (size_t i = 0; i < n; i++) {
            p[i] = keys[stride * i];
            hints[i] = 0;
        }
    } else {
        for (size_t i = 0; i < n; i++) p[i] = keys[stride * i];
    }
    if (s->hooks.retain && n) s->hooks.retain(s->hooks.ctx, p, n);
    uint32_t ent = s->nents++;
    tersa_shape_entry *e = &s->ents[ent];
    e->hash = h;
    e->off = (uint32_t)s->pool_used;
    e->n = (uint32_t)n;
    e->shape = shape;
    e->seen = 0;
    s->pool_used += n;
    uint32_t j = tersa_shapes_slot(s, h);
    while (s->index[j] >> 16 == s->tag) j = (j + 1) & s->mask;
    s->index[j] = s->tag << 16 | (ent + 1);
    return (int32_t)ent;
}

int32_t tersa_shapes_add_slow(tersa_shapes *s, uint64_t h, const tersa_ident *keys, size_t stride, size_t n,
                              uint32_t shape);

/** Store these keys as shape `shape` (keys not in the lookup); returns the
 *  entry, or -1 if they are not stored (more keys than the pool holds, or an
 *  allocation failed: storing is optional). May empty the lookup first (see
 *  the policy), which invalidates every entry index obtained before. */
TERSA_INLINE int32_t tersa_shapes_add(tersa_shapes *s, uint64_t h, const tersa_ident *keys, size_t stride, size_t n,
                                      uint32_t shape) {
    /* The tables never grow past the bounds, so one test covers room and bounds. */
    if (TERSA_UNLIKELY(s->nents == s->ents_cap || 2 * ((size_t)s->nents + 1) > (size_t)s->mask + 1 ||
                       s->pool_used + n > s->pool_cap))
        return tersa_shapes_add_slow(s, h, keys, stride, n, shape);
    return tersa_shapes_store(s, h, keys, stride, n, shape);
}

/** The writer's shape index of entry `ent`. */
TERSA_INLINE uint32_t tersa_shapes_shape(const tersa_shapes *s, int32_t ent) { return s->ents[ent].shape; }

/** A hint: the entry + 1 last seen at hint slot `at` (0 if none, or a stale
 *  value; confirm it with tersa_shapes_hinted). `at` is
 *  TERSA_SHAPES_HINT_ROOT, TERSA_SHAPES_HINT_NONE (a scratch slot) or a
 *  value of tersa_shapes_hint_at. Only with hints. */
TERSA_INLINE uint32_t *tersa_shapes_hint(tersa_shapes *s, size_t at) {
    if (at == TERSA_SHAPES_HINT_ROOT) return &s->hint_root;
    if (at == TERSA_SHAPES_HINT_NONE) return &s->hint_scratch;
    return &s->hints[at - 1];
}

/** The hint slot of the value at key position i of entry `ent` (ent -1:
 *  TERSA_SHAPES_HINT_NONE). Slots stay valid across tersa_shapes_add (the
 *  hint arrays never shrink while in use), but after a clear they belong to
 *  other entries: harmless, since hints are confirmed. */
TERSA_INLINE size_t tersa_shapes_hint_at(const tersa_shapes *s, int32_t ent, size_t i) {
    return ent >= 0 ? 1 + (size_t)s->ents[ent].off + i : TERSA_SHAPES_HINT_NONE;
}

/** Hint value h (from tersa_shapes_hint) confirmed for these keys: its entry, or -1. */
TERSA_INLINE int32_t tersa_shapes_hinted(const tersa_shapes *s, uint32_t h, const tersa_ident *keys, size_t stride,
                                         size_t n) {
    if (h != 0 && h <= s->nents && tersa_shapes_same(s, h - 1, keys, stride, n)) return (int32_t)h - 1;
    return -1;
}

/** The stored keys (for a binding that marks them): *n of them. */
TERSA_INLINE const tersa_ident *tersa_shapes_keys(const tersa_shapes *s, size_t *n) {
    *n = s->pool_used;
    return s->pool;
}

/** Entries stored now. */
TERSA_INLINE uint32_t tersa_shapes_count(const tersa_shapes *s) { return s->nents; }

/** Bytes the tables hold (for memory accounting). */
size_t tersa_shapes_memsize(const tersa_shapes *s);

/** At the end of a buffer that used `used` shapes: the lookup's tables keep
 *  the size the busiest buffer needed, and so does the writer's shape index
 *  (cleared whole at every start). After TERSA_SHAPES_SMALL_RUNS buffers in
 *  a row using under 1/16 of that peak (when over 256), the lookup frees its
 *  tables (they grow again on use) and returns true: the binding may replace
 *  its writer too. Clears the lookup. */
#define TERSA_SHAPES_SMALL_RUNS 32
bool tersa_shapes_end_buffer(tersa_shapes *s, uint32_t used);

/** The same rule for a binding that keeps its lookup across buffers: notes
 *  that a buffer used `used` shapes and returns true when the binding should
 *  replace its writer and free the lookup's tables (tersa_shapes_free, then
 *  tersa_shapes_init); clears and frees nothing itself. */
bool tersa_shapes_note_buffer(tersa_shapes *s, uint32_t used);

#endif /* TERSA_SHAPE_LOOKUP_H */
