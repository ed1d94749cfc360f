/*
 * hash_fast.h - building small Hashes without re-hashing their keys, and
 * reading a Hash's pairs in place (see hash_fast.c).
 */
#ifndef TERSA_RB_HASH_FAST_H
#define TERSA_RB_HASH_FAST_H

#include "common.h"

/** Exported by libruby (gc.c) but declared only in its internal headers: the
 *  bulk write barrier (the object is rescanned at the next marking if it is
 *  old, or black while marking incrementally), used after storing several
 *  references into an object without RB_OBJ_WRITE, as Array's bulk copies do. */
void rb_gc_writebarrier_remember(VALUE obj);

/** True when the fast path is compiled in and passed its load-time self-check. */
extern bool tersa_rb_hash_fast;

#include <ruby/version.h>

#if RUBY_API_VERSION_MAJOR == 3 && RUBY_API_VERSION_MINOR <= 2 && SIZEOF_VALUE == 8
#  define TERSA_AR_LAYOUT 1
#else
#  define TERSA_AR_LAYOUT 0
#endif

#if TERSA_AR_LAYOUT
/* The layout of internal/hash.h in Ruby 3.0-3.2. */
typedef struct tersa_ar_pair {
    VALUE key;
    VALUE val;
} tersa_ar_pair;

struct tersa_rhash {
    struct RBasic basic;
    union {
        void *st;
        tersa_ar_pair *ar;
    } as;
    const VALUE ifnone;
    VALUE hint;
};

#define TERSA_RHASH_ST_TABLE_FLAG RUBY_FL_USER3
#define TERSA_AR_SIZE_SHIFT (RUBY_FL_USHIFT + 4)
#define TERSA_AR_BOUND_SHIFT (RUBY_FL_USHIFT + 8)

/* st.c's entry: unchanged since the st rewrite of Ruby 2.4. */
typedef struct tersa_st_entry {
    st_index_t hash;
    st_data_t key;
    st_data_t record;
} tersa_st_entry;

/* st.c marks a deleted entry by its hash (RESERVED_HASH_VAL); ar tables clear the key. */
#define TERSA_ST_DELETED_HASH (~(st_index_t)0)
#endif

/* An st table's pairs (tersa_rb_hash_pairs), out of line: large Hashes only. */
bool tersa_rb_hash_st_pairs(VALUE h, VALUE *out, long n);


/** A new Hash of keys[i] => values[i], built pair by pair (keys hashed). `keys`
 *  and `values` must stay reachable (they are read after allocations). */
VALUE tersa_rb_hash_build(const VALUE *keys, const VALUE *values, long n);

/** A frozen Hash of `keys` with nil values, to copy maps from. */
VALUE tersa_rb_hash_template(const VALUE *keys, long n);

/** True if `template` can serve maps with exactly these keys, in this order. */
bool tersa_rb_template_matches(VALUE template, const VALUE *keys, long n);

/** A new Hash with the template's keys and `values`, or Qundef (then use rb_hash_bulk_insert). */
VALUE tersa_rb_hash_from_template(VALUE template, const VALUE *values, long n);

/** False only when `h` surely holds no two equal keys: an ordinary (AR-table)
 *  Hash on a Ruby whose layout is known. A compare_by_identity Hash, which can
 *  hold equal Strings, always has an st table. */
bool tersa_rb_hash_may_repeat_keys(VALUE h);

/*
 * The encoder walks every Hash it writes, and rb_hash_stlike_foreach costs a
 * callback per pair plus iteration bookkeeping on each of them. The tables
 * are read in place instead, in insertion order, skipping deleted entries
 * exactly as the iterators do. Inline: a call per Hash cost a tenth of
 * reading a small one.
 */

/** Copy the `n` {key, value} pairs of `h` into `out` (2n VALUEs) in order,
 *  reading the table directly; false (nothing promised about `out`) when the
 *  layout is not the known one or does not hold exactly n pairs: then use
 *  rb_hash_foreach. Runs no Ruby code and cannot raise. */
static inline bool tersa_rb_hash_pairs(VALUE h, VALUE *out, long n) {
#if TERSA_AR_LAYOUT
    if (!tersa_rb_hash_fast) return false;
    VALUE flags = RBASIC(h)->flags;
    if (flags & TERSA_RHASH_ST_TABLE_FLAG) return tersa_rb_hash_st_pairs(h, out, n);
    const tersa_ar_pair *pairs = ((struct tersa_rhash *)h)->as.ar;
    long bound = (long)((flags >> TERSA_AR_BOUND_SHIFT) & 0xF), got = 0;
    if (!pairs) return n == 0;
    if (bound > 8) return false;
    if (bound == n && (long)((flags >> TERSA_AR_SIZE_SHIFT) & 0xF) == n) {
        /* n live pairs among the first n: none is deleted (most Hashes). */
        for (long i = 0; i < n; i++) {
            out[2 * i] = pairs[i].key;
            out[2 * i + 1] = pairs[i].val;
        }
        return true;
    }
    for (long i = 0; i < bound; i++) {
        if (pairs[i].key == Qundef) continue;
        if (got == n) return false;
        out[2 * got] = pairs[i].key;
        out[2 * got + 1] = pairs[i].val;
        got++;
    }
    return got == n;
#else
    (void)h;
    (void)out;
    (void)n;
    return false;
#endif
}

/** RHASH_SIZE without a call into libruby where the layout is known. */
static inline long tersa_rb_hash_size(VALUE h) {
#if TERSA_AR_LAYOUT
    if (tersa_rb_hash_fast) {
        VALUE flags = RBASIC(h)->flags;
        if (!(flags & TERSA_RHASH_ST_TABLE_FLAG)) return (long)((flags >> TERSA_AR_SIZE_SHIFT) & 0xF);
        const st_table *st = (const st_table *)((struct tersa_rhash *)h)->as.st;
        if (st) return (long)st->num_entries;
    }
#endif
    return (long)RHASH_SIZE(h);
}

void tersa_rb_init_hash_fast(void);

#endif
