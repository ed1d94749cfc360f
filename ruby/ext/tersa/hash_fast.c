/*
 * hash_fast.c - building small Hashes without re-hashing their keys, and
 * reading a Hash's pairs without a callback per pair.
 *
 * A decoded shaped map has keys known in advance (the shape's frozen,
 * interned Strings or Symbols), yet rb_hash_bulk_insert hashes every key
 * again for every map: with String keys that is most of the cost of decoding
 * a record. Instead, a per-shape template Hash is built once; each map is
 * rb_hash_dup of it (which copies the table, hashes and all) with the values
 * then stored in place.
 *
 * Storing in place needs the table's layout, which is not public. Ruby 3.0,
 * 3.1 and 3.2 keep a small Hash's pairs in an "ar_table" of 8 {key, value}
 * pairs that RHash points to, and a larger Hash's in an st_table (whose
 * struct is public, ruby/st.h) of {hash, key, record} entries; Ruby 3.3
 * moved the small table into the object. So this path is compiled
 * only for 3.0-3.2, checks itself once at load time against the public API
 * (tersa_rb_hash_fast stays false if anything disagrees), and every use checks
 * the template's flags, size and keys. Anything unexpected falls back to
 * rb_hash_bulk_insert, which is always correct.
 */
#include "common.h"

#include "hash_fast.h"

bool tersa_rb_hash_fast;


#if TERSA_AR_LAYOUT
static inline bool st_shape_ok(VALUE h, long n) {
    if (!(RBASIC(h)->flags & TERSA_RHASH_ST_TABLE_FLAG)) return false;
    const st_table *st = (const st_table *)((struct tersa_rhash *)h)->as.st;
    return st && (long)st->num_entries == n && st->entries_start == 0 && (long)st->entries_bound == n &&
           st->entries;
}

static inline bool ar_shape_ok(VALUE h, long n) {
    VALUE flags = RBASIC(h)->flags;
    if (flags & TERSA_RHASH_ST_TABLE_FLAG) return false;
    if ((long)((flags >> TERSA_AR_SIZE_SHIFT) & 0xF) != n || (long)((flags >> TERSA_AR_BOUND_SHIFT) & 0xF) != n)
        return false;
    return ((struct tersa_rhash *)h)->as.ar != NULL;
}
#endif


#if TERSA_AR_LAYOUT
bool tersa_rb_hash_st_pairs(VALUE h, VALUE *out, long n) {
    const st_table *st = (const st_table *)((struct tersa_rhash *)h)->as.st;
    if (!st || (long)st->num_entries != n) return false;
    if (n == 0) return true;
    if (!st->entries) return false;
    const tersa_st_entry *entries = (const tersa_st_entry *)st->entries;
    if ((long)(st->entries_bound - st->entries_start) == n) {
        /* n live entries in a range of n: none is deleted (most Hashes). */
        const tersa_st_entry *p = entries + st->entries_start, *end = p + n;
        for (; p < end; p++, out += 2) {
            out[0] = (VALUE)p->key;
            out[1] = (VALUE)p->record;
        }
        return true;
    }
    long got = 0;
    for (st_index_t i = st->entries_start; i < st->entries_bound; i++) {
        if (entries[i].hash == TERSA_ST_DELETED_HASH) continue;
        if (got == n) return false;
        out[2 * got] = (VALUE)entries[i].key;
        out[2 * got + 1] = (VALUE)entries[i].record;
        got++;
    }
    return got == n;
}
#endif

#if TERSA_AR_LAYOUT
/* The st_table type of an ordinary Hash (hash.c's objhash, which is not
 * exported), taken from one at load time. A compare_by_identity Hash has
 * another (identhash); no other table type holds String keys. */
static const struct st_hash_type *objhash_type;
#endif

bool tersa_rb_hash_may_repeat_keys(VALUE h) {
#if TERSA_AR_LAYOUT
    if (!tersa_rb_hash_fast) return true;
    if (!(RBASIC(h)->flags & TERSA_RHASH_ST_TABLE_FLAG)) return false;
    /* Checked: an ordinary Hash past 8 pairs was treated as a compare_by_identity
     * one, its keys checked for duplicates and UTF-8 again at every new shape. */
    const st_table *st = (const st_table *)((struct tersa_rhash *)h)->as.st;
    return !st || !objhash_type || st->type != objhash_type;
#else
    (void)h;
    return true;
#endif
}

/* Exported by libruby (3.0+) but declared only in its internal headers. */
VALUE rb_hash_new_with_size(st_index_t size);

/* Pairs interleaved on the machine stack (seen and pinned by the GC) for
 * rb_hash_bulk_insert, which skips rb_hash_aset's per-pair update callback. */
#define BULK_MAX 16

VALUE tersa_rb_hash_build(const VALUE *keys, const VALUE *values, long n) {
    /* Sized once: growing an ar table into an st table past 8 pairs rebuilds it. */
    VALUE h = rb_hash_new_with_size((st_index_t)n);
    if (n <= BULK_MAX) {
        VALUE pairs[2 * BULK_MAX];
        for (long i = 0; i < n; i++) {
            pairs[2 * i] = keys[i];
            pairs[2 * i + 1] = values[i];
        }
        if (n) rb_hash_bulk_insert(2 * n, pairs, h);
        RB_GC_GUARD(pairs[0]);
        return h;
    }
    for (long i = 0; i < n; i++) rb_hash_aset(h, keys[i], values[i]);
    return h;
}

VALUE tersa_rb_hash_template(const VALUE *keys, long n) {
    VALUE t = rb_hash_new();
    for (long i = 0; i < n; i++) rb_hash_aset(t, keys[i], Qnil);
    return rb_obj_freeze(t);
}

bool tersa_rb_template_matches(VALUE template, const VALUE *keys, long n) {
#if TERSA_AR_LAYOUT
    if (!tersa_rb_hash_fast || !RB_TYPE_P(template, T_HASH)) return false;
    if (n <= 8) {
        if (!ar_shape_ok(template, n)) return false;
        const tersa_ar_pair *pairs = ((struct tersa_rhash *)template)->as.ar;
        for (long i = 0; i < n; i++)
            if (pairs[i].key != keys[i]) return false;
        return true;
    }
    if (!st_shape_ok(template, n)) return false;
    const tersa_st_entry *entries = (const tersa_st_entry *)((const st_table *)((struct tersa_rhash *)template)->as.st)->entries;
    for (long i = 0; i < n; i++)
        if ((VALUE)entries[i].key != keys[i]) return false;
    return true;
#else
    (void)template;
    (void)keys;
    (void)n;
    return false;
#endif
}

VALUE tersa_rb_hash_from_template(VALUE template, const VALUE *values, long n) {
#if TERSA_AR_LAYOUT
    VALUE h = rb_hash_dup(template);
    /* No allocation between here and the last store: the table cannot move.
     * The values are stored raw and the Hash gets one bulk write barrier
     * (rb_gc_writebarrier_remember, as Array's bulk copies do) when any of
     * them is an object: a barrier call per value cost about a third of
     * filling a record. */
    VALUE objects = 0;
    if (n <= 8) {
        if (TERSA_UNLIKELY(!ar_shape_ok(h, n))) return Qundef;
        tersa_ar_pair *pairs = ((struct tersa_rhash *)h)->as.ar;
        for (long i = 0; i < n; i++) {
            pairs[i].val = values[i];
            objects |= !RB_SPECIAL_CONST_P(values[i]);
        }
    } else {
        if (TERSA_UNLIKELY(!st_shape_ok(h, n))) return Qundef;
        tersa_st_entry *entries = (tersa_st_entry *)((st_table *)((struct tersa_rhash *)h)->as.st)->entries;
        for (long i = 0; i < n; i++) {
            entries[i].record = (st_data_t)values[i];
            objects |= !RB_SPECIAL_CONST_P(values[i]);
        }
    }
    if (objects) rb_gc_writebarrier_remember(h);
    return h;
#else
    (void)template;
    (void)values;
    (void)n;
    return Qundef;
#endif
}

#if TERSA_AR_LAYOUT
static int collect_for_check(VALUE key, VALUE value, VALUE arg) {
    VALUE *out = (VALUE *)arg;
    long at = (long)out[0]++;
    out[1 + 2 * at] = key;
    out[2 + 2 * at] = value;
    return ST_CONTINUE;
}

/* tersa_rb_hash_pairs agrees with rb_hash_foreach on h (size at most 24). */
static bool pairs_agree(VALUE h) {
    long n = (long)RHASH_SIZE(h);
    VALUE direct[48], iterated[49];
    iterated[0] = 0;
    rb_hash_foreach(h, collect_for_check, (VALUE)iterated);
    if (!tersa_rb_hash_pairs(h, direct, n) || (long)iterated[0] != n) return false;
    for (long i = 0; i < 2 * n; i++)
        if (direct[i] != iterated[1 + i]) return false;
    return true;
}
#endif

#if TERSA_AR_LAYOUT
/* objhash_type from a Hash of 24 Strings, once a compare_by_identity Hash of
 * as many is seen to have another type; false if they do not differ. */
static bool find_objhash_type(void) {
    VALUE h = rb_hash_new(), ident = rb_hash_new();
    rb_funcall(ident, rb_intern("compare_by_identity"), 0);
    for (long i = 0; i < 24; i++) {
        VALUE k = rb_str_freeze(rb_sprintf("tersa-type-%ld", i));
        rb_hash_aset(h, k, Qtrue);
        rb_hash_aset(ident, k, Qtrue);
    }
    if (!(RBASIC(h)->flags & TERSA_RHASH_ST_TABLE_FLAG) || !(RBASIC(ident)->flags & TERSA_RHASH_ST_TABLE_FLAG))
        return false;
    const st_table *st = (const st_table *)((struct tersa_rhash *)h)->as.st;
    const st_table *id = (const st_table *)((struct tersa_rhash *)ident)->as.st;
    if (!st || !id || !st->type || st->type == id->type) return false;
    objhash_type = st->type;
    RB_GC_GUARD(h);
    RB_GC_GUARD(ident);
    return true;
}
#endif

/* Build maps of every small size both ways and compare with the public API;
 * read Hashes with deleted entries and compare with rb_hash_foreach. */
static bool self_check(void) {
#if TERSA_AR_LAYOUT
    for (long n = 1; n <= 24; n++) {
        VALUE keys[24], values[24];
        for (long i = 0; i < n; i++) {
            keys[i] = rb_str_freeze(rb_sprintf("tersa-check-%ld", i));
            values[i] = LONG2FIX(i * 7 + 1);
        }
        VALUE t = tersa_rb_hash_template(keys, n);
        if (n <= 8 ? !ar_shape_ok(t, n) : !st_shape_ok(t, n)) return false;
        VALUE h = tersa_rb_hash_from_template(t, values, n);
        if (h == Qundef || OBJ_FROZEN(h) || (long)RHASH_SIZE(h) != n) return false;
        for (long i = 0; i < n; i++)
            if (rb_hash_aref(h, keys[i]) != values[i] || rb_hash_aref(t, keys[i]) != Qnil) return false;
        VALUE ks = rb_funcall(h, rb_intern("keys"), 0), vs = rb_funcall(h, rb_intern("values"), 0);
        for (long i = 0; i < n; i++)
            if (RARRAY_AREF(ks, i) != keys[i] || RARRAY_AREF(vs, i) != values[i]) return false;
        /* The copy is an ordinary Hash: it can grow past the template. */
        rb_hash_aset(h, rb_str_new_cstr("tersa-check-extra"), Qtrue);
        if ((long)RHASH_SIZE(h) != n + 1 || (long)RHASH_SIZE(t) != n) return false;
        RB_GC_GUARD(t);
    }
    /* tersa_rb_hash_pairs answers only once everything else checked out. */
    tersa_rb_hash_fast = true;
    find_objhash_type(); /* if it fails, every st table may repeat keys */
    for (long n = 0; n <= 24; n++) {
        VALUE h = rb_hash_new();
        for (long i = 0; i < n; i++) rb_hash_aset(h, rb_sprintf("tersa-pairs-%ld", i), LONG2FIX(i));
        bool ok = pairs_agree(h);
        /* Deleted entries (first, middle, last) are skipped. */
        for (long i = 0; ok && i < n; i += 3) {
            rb_hash_delete(h, rb_sprintf("tersa-pairs-%ld", i));
            ok = pairs_agree(h);
        }
        VALUE probe[2 * 25]; /* room for every pair the probe's wrong size asks for */
        if (ok && n > 0) ok = !tersa_rb_hash_pairs(h, probe, (long)RHASH_SIZE(h) + 1); /* a wrong size is refused */
        if (!ok) {
            tersa_rb_hash_fast = false;
            return false;
        }
        RB_GC_GUARD(h);
    }
    return true;
#else
    return false;
#endif
}

void tersa_rb_init_hash_fast(void) {
    tersa_rb_hash_fast = false;
    tersa_rb_hash_fast = self_check();
    /* Tersa::Native::FAST_HASH tells tests and benchmarks which path runs. */
    rb_define_const(rb_define_module_under(mTersa, "Native"), "FAST_HASH", tersa_rb_hash_fast ? Qtrue : Qfalse);
}
