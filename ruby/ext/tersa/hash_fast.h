/*
 * hash_fast.h - building small Hashes without re-hashing their keys (see hash_fast.c).
 */
#ifndef TERSA_RB_HASH_FAST_H
#define TERSA_RB_HASH_FAST_H

#include "common.h"

/** True when the fast path is compiled in and passed its load-time self-check. */
extern bool tersa_rb_hash_fast;

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

/** Copy the `n` {key, value} pairs of `h` into `out` (2n VALUEs) in order,
 *  reading the table directly; false (nothing promised about `out`) when the
 *  layout is not the known one or does not hold exactly n pairs: then use
 *  rb_hash_foreach. Runs no Ruby code and cannot raise. */
bool tersa_rb_hash_pairs(VALUE h, VALUE *out, long n);

/** RHASH_SIZE without a call into libruby where the layout is known. */
long tersa_rb_hash_size(VALUE h);

void tersa_rb_init_hash_fast(void);

#endif
