/*
 * encoder_walk.c - the object walk of Tersa::Encoder: Ruby values (scalars,
 * containers as frames, hooks for other objects) -> the C writer's calls.
 * encoder_class.c holds the Ruby class and the entry points around it.
 */
#include "encoder.h"

#include "declared_class.h"
#include "known_types.h"

static ID id_to_tersa, id_utc_p, id_subsec, id_denominator;

/* ==========================================================================
 * Hooks
 * ========================================================================== */

/* Call Ruby code (hooks, conversions); if it raises, reset and re-raise. */
static VALUE protected_call(tersa_rb_encoder *e, VALUE (*fn)(VALUE), VALUE arg) {
    int state = 0;
    VALUE result = rb_protect(fn, arg, &state);
    if (state) {
        tersa_rb_enc_reset(e);
        rb_jump_tag(state);
    }
    return result;
}

/* ==========================================================================
 * Values
 * ========================================================================== */

/* A String in another encoding than UTF-8, US-ASCII or binary (write_run
 * takes those): converted to UTF-8. */
TERSA_NOINLINE static void encode_converted_string(tersa_rb_encoder *e, VALUE str, uint32_t depth) {
    VALUE u = tersa_rb_enc_to_utf8(e, str, depth);
    CHECK_W(tersa_write_string(e->w, RSTRING_PTR(u), (size_t)RSTRING_LEN(u)));
    RB_GC_GUARD(u);
}

static void encode_symbol(tersa_rb_encoder *e, VALUE sym, uint32_t depth) {
    VALUE s = rb_sym2str(sym);
    int idx = RB_ENCODING_GET_INLINED(s);
    if (TERSA_UNLIKELY(idx != tersa_utf8_index && idx != tersa_usascii_index)) s = tersa_rb_enc_to_utf8(e, s, depth);
    CHECK_W(tersa_write_symbol(e->w, RSTRING_PTR(s), (size_t)RSTRING_LEN(s)));
    RB_GC_GUARD(s);
}

TERSA_NOINLINE static void encode_bignum(tersa_rb_encoder *e, VALUE big, uint32_t depth) {
    size_t n = rb_absint_size(big, NULL);
    uint8_t small[64];
    uint8_t *buf = n <= sizeof small ? small : TERSA_RB_ALLOC_N(uint8_t, n);
    int sign = rb_integer_pack(big, buf, n, 1, 0, INTEGER_PACK_LITTLE_ENDIAN);
    bool ok = tersa_write_bigint(e->w, sign < 0, buf, n);
    if (buf != small) xfree(buf);
    if (!ok) tersa_rb_enc_fail_writer(e, depth);
}

static void encode_time(tersa_rb_encoder *e, VALUE t, uint32_t depth) {
    struct timespec ts = rb_time_timespec(t);
    /* Ruby keeps rational subseconds; anything finer than a nanosecond would be lost. */
    VALUE sub = rb_funcall(t, id_subsec, 0);
    if (!FIXNUM_P(sub)) {
        VALUE den = rb_funcall(sub, id_denominator, 0);
        if (!FIXNUM_P(den) || 1000000000L % FIX2LONG(den) != 0)
            tersa_rb_enc_fail_value(e, depth, "sub-nanosecond precision in", t);
    }
    tersa_timestamp p;
    p.seconds = (int64_t)ts.tv_sec;
    p.nanos = (uint32_t)ts.tv_nsec;
    if (RTEST(rb_funcall(t, id_utc_p, 0))) {
        p.zone = TERSA_ZONE_UTC;
        p.offset = 0;
    } else {
        long off = NUM2LONG(rb_time_utc_offset(t));
        if (off % 60 != 0) tersa_rb_enc_fail_value(e, depth, "a UTC offset with seconds in", t);
        p.zone = TERSA_ZONE_OFFSET;
        p.offset = (int16_t)(off / 60);
    }
    CHECK_W(tersa_write_timestamp(e->w, &p));
}

static void encode_timestamp_struct(tersa_rb_encoder *e, VALUE t, uint32_t depth) {
    tersa_timestamp p;
    p.seconds = NUM2LL(rb_struct_aref(t, INT2FIX(0)));
    p.nanos = NUM2UINT(rb_struct_aref(t, INT2FIX(1)));
    VALUE zone = rb_struct_aref(t, INT2FIX(2));
    VALUE off = rb_struct_aref(t, INT2FIX(3));
    if (zone == ID2SYM(rb_intern("utc"))) p.zone = TERSA_ZONE_UTC;
    else if (zone == ID2SYM(rb_intern("offset"))) p.zone = TERSA_ZONE_OFFSET;
    else if (zone == ID2SYM(rb_intern("floating"))) p.zone = TERSA_ZONE_FLOATING;
    else tersa_rb_enc_fail_value(e, depth, "zone must be :utc, :offset or :floating in", t);
    long minutes = p.zone == TERSA_ZONE_OFFSET ? NUM2LONG(off) : 0;
    if (minutes < -1439 || minutes > 1439) tersa_rb_enc_fail_value(e, depth, "offset outside -1439..1439 minutes in", t);
    p.offset = (int16_t)minutes;
    CHECK_W(tersa_write_timestamp(e->w, &p));
}

/* Open an Array at `depth`; false if it is empty (then it is written whole). */
static inline bool open_array(tersa_rb_encoder *e, VALUE ary, uint32_t depth, uint32_t hooks) {
    enc_frame *f = tersa_rb_enc_frame_open(e, depth, ary);
    long n = RARRAY_LEN(ary);
    CHECK_W(tersa_write_array_begin(e->w, (size_t)n));
    if (n == 0) {
        CHECK_W(tersa_write_array_end(e->w));
        return false;
    }
    f->kind = FRAME_ARRAY;
    f->n = n;
    f->hooks = hooks;
    f->base = e->stack->len;
    tersa_rb_stack_push(e->stack, ary);
    return true;
}

/* Close the container of frame `f` (at `depth`), releasing what stood for it. */
static inline void close_frame(tersa_rb_encoder *e, enc_frame *f, uint32_t depth) {
    CHECK_W(f->kind == FRAME_ARRAY ? tersa_write_array_end(e->w) : tersa_write_map_end(e->w));
    e->stack->len = f->base - f->hooks;
    e->hooks -= f->hooks;
}

static VALUE call_to_tersa(VALUE obj) { return rb_funcall(obj, id_to_tersa, 0); }

/* Write an object of another class, or return what a hook made of it
 * (pushed on the value stack and counted in e->hooks), to be written in its
 * place; Qundef when it is written. */
TERSA_NOINLINE static VALUE encode_other(tersa_rb_encoder *e, VALUE obj, uint32_t depth) {
    VALUE klass = rb_obj_class(obj);
    if (klass == rb_cTime || rb_obj_is_kind_of(obj, rb_cTime)) {
        encode_time(e, obj, depth);
        return Qundef;
    }
    if (klass == cTimestamp) {
        encode_timestamp_struct(e, obj, depth);
        return Qundef;
    }
    uint32_t type;
    VALUE packer = tersa_rb_ext_packer(klass, &type);
    if (!NIL_P(packer)) {
        tersa_rb_call_args a = {packer, obj};
        tersa_rb_enc_drop_shapes(e); /* Ruby code may run GC and move or free objects */
        VALUE bytes = protected_call(e, tersa_rb_call_proc, (VALUE)&a);
        if (!RB_TYPE_P(bytes, T_STRING)) tersa_rb_enc_fail_value(e, depth, "packer did not return a String for", obj);
        CHECK_W(tersa_write_ext(e->w, type, RSTRING_PTR(bytes), (size_t)RSTRING_LEN(bytes)));
        RB_GC_GUARD(bytes);
        return Qundef;
    }
    if (klass == cExt) {
        VALUE data = rb_struct_aref(obj, INT2FIX(1));
        StringValue(data);
        CHECK_W(tersa_write_ext(e->w, NUM2UINT(rb_struct_aref(obj, INT2FIX(0))), RSTRING_PTR(data),
                               (size_t)RSTRING_LEN(data)));
        return Qundef;
    }
    switch (tersa_rb_enc_well_known(e, obj, klass, depth)) {
    case WK_WRITTEN:
        return Qundef;
    case WK_IS_DATETIME:
        tersa_rb_enc_drop_shapes(e);
        encode_time(e, protected_call(e, tersa_rb_datetime_to_time, obj), depth);
        return Qundef;
    default:
        break;
    }
    VALUE replacement = Qundef;
    if (rb_respond_to(obj, id_to_tersa)) {
        tersa_rb_enc_drop_shapes(e);
        replacement = protected_call(e, call_to_tersa, obj);
    } else if (!NIL_P(e->default_proc)) {
        tersa_rb_call_args a = {e->default_proc, obj};
        tersa_rb_enc_drop_shapes(e);
        replacement = protected_call(e, tersa_rb_call_proc, (VALUE)&a);
    }
    if (replacement == Qundef) {
        const char *hint = tersa_rb_unsupported_hint(obj);
        if (hint) tersa_rb_enc_fail_value_hint(e, depth, "unsupported type", obj, hint);
        tersa_rb_enc_fail_value(e, depth, "unsupported type", obj);
    }
    if (rb_obj_class(replacement) == klass && !RB_TYPE_P(replacement, T_HASH) && !RB_TYPE_P(replacement, T_ARRAY) &&
        !RB_TYPE_P(replacement, T_STRING))
        tersa_rb_enc_fail_value(e, depth, "the hook returned another unsupported", obj);
    /* The replacement takes obj's place (and path), but a hook that returns
     * objects needing hooks again counts as nesting, or A -> B -> A loops. */
    if (depth + e->hooks + 1 > e->max_depth) tersa_rb_enc_fail_value(e, depth, "hooks nest too deeply at", obj);
    tersa_rb_stack_push(e->stack, replacement);
    e->hooks++;
    return replacement;
}

uint8_t tersa_rb_str_kind[(RUBY_ENCODING_INLINE_MAX + 1) * 4];

static void init_str_kinds(void) {
    for (int enc = 0; enc <= RUBY_ENCODING_INLINE_MAX; enc++) {
        for (int cr = 0; cr < 4; cr++) {
            uint8_t kind = STR_OTHER;
            if (enc == tersa_utf8_index || enc == tersa_usascii_index) {
                /* Valid UTF-8 is known from the coderange; else a scan (which sets it). */
                int known = cr * RUBY_ENC_CODERANGE_7BIT;
                kind = known == ENC_CODERANGE_7BIT || known == ENC_CODERANGE_VALID ? STR_TEXT : STR_TEXT_SCAN;
            } else if (enc == tersa_binary_index) {
                kind = STR_BINARY;
            }
            tersa_rb_str_kind[enc * 4 + cr] = kind;
        }
    }
}

/* Arrays up to this long whose items are all taken by write_run are written
 * inside the run that meets them (canada: 111k Arrays of two floats). Their
 * items are checked first, which costs more than a frame of its own beyond
 * a few items (csv_table's rows of 17 Strings). */
#define LEAF_MAX 8

/* Taken by write_run as one item (a leaf Array aside). */
static inline bool run_takes(VALUE x) {
    if (RB_SPECIAL_CONST_P(x)) return FIXNUM_P(x) || RB_FLONUM_P(x) || NIL_P(x) || x == Qtrue || x == Qfalse;
    VALUE flags = RBASIC(x)->flags;
    switch (flags & RUBY_T_MASK) {
    case T_FLOAT:
        return true;
    case T_STRING:
        return tersa_rb_str_kind_of(flags) != STR_OTHER;
    default:
        return false;
    }
}

/* A short Array of items run_takes, whose frame would open at `depth`. */
static inline bool leaf_array(tersa_rb_encoder *e, VALUE ary, uint32_t depth) {
    long n = RARRAY_LEN(ary);
    if (n > LEAF_MAX || depth + e->hooks >= e->max_depth) return false;
    const VALUE *p = RARRAY_CONST_PTR_TRANSIENT(ary);
    for (long i = 0; i < n; i++)
        if (!run_takes(p[i])) return false;
    return true;
}

/* Arrays of up to FLOAT_LEAF_MAX Floats (coordinates, vectors, rows of
 * readings) are written by one tersa_write_double_array call, without the
 * writer's container frame. */
#define FLOAT_LEAF_MAX 64

/* If ary is a non-empty Array of at most FLOAT_LEAF_MAX Floats within the
 * depth limit, write it and return 1 (-1 if the writer failed); else 0. Out
 * of write_run's loop, whose other items need neither the buffer nor the call. */
TERSA_NOINLINE static int write_float_leaf(tersa_rb_encoder *e, VALUE ary, uint32_t depth) {
    double floats[FLOAT_LEAF_MAX];
    long n = RARRAY_LEN(ary);
    if (n == 0 || n > FLOAT_LEAF_MAX || depth + e->hooks >= e->max_depth) return 0;
    const VALUE *p = RARRAY_CONST_PTR_TRANSIENT(ary);
    for (long i = 0; i < n; i++) {
        VALUE x = p[i];
        if (!RB_FLOAT_TYPE_P(x)) return 0;
        floats[i] = tersa_rb_float_value(x);
    }
    return tersa_write_double_array(e->w, floats, (size_t)n) ? 1 : -1;
}

/* A String write_run would write with tersa_write_string_utf8 as it is. */
static inline bool plain_utf8(VALUE x) {
    if (RB_SPECIAL_CONST_P(x)) return false;
    VALUE flags = RBASIC(x)->flags;
    return (flags & RUBY_T_MASK) == T_STRING && tersa_rb_str_kind_of(flags) == STR_TEXT;
}

/* Arrays of up to STRING_LEAF_MAX UTF-8 Strings (rows of a table, tags,
 * names) are written by one tersa_write_string_array call, which starts the
 * string-table lookups of the whole row together so that their cache misses
 * overlap, and needs no container frame. */
#define STRING_LEAF_MAX 64

/* If ary is a non-empty Array of at most STRING_LEAF_MAX Strings that
 * write_run would write with tersa_write_string_utf8 as they are, within the
 * depth limit, write it and return 1 (-1 if the writer failed); else 0. */
TERSA_NOINLINE static int write_string_leaf(tersa_rb_encoder *e, VALUE ary, uint32_t depth) {
    const char *ptrs[STRING_LEAF_MAX];
    size_t lens[STRING_LEAF_MAX];
    long n = RARRAY_LEN(ary);
    if (n == 0 || n > STRING_LEAF_MAX || depth + e->hooks >= e->max_depth) return 0;
    const VALUE *p = RARRAY_CONST_PTR_TRANSIENT(ary);
    for (long i = 0; i < n; i++) {
        VALUE x = p[i];
        if (!plain_utf8(x)) return 0;
        ptrs[i] = tersa_rb_str_mem(x, &lens[i]);
    }
    return tersa_write_string_array(e->w, ptrs, lens, (size_t)n) ? 1 : -1;
}

/* A failure in write_run at item `i` of its run (*index = first + i for the
 * path), or inside a leaf Array there (`leaf`, else Qfalse) at its item `j`.
 * `bad` is an invalid String, or Qundef for the writer's error. */
TERSA_NORETURN(TERSA_NOINLINE static void run_fail(tersa_rb_encoder *e, uint32_t depth, long *index, long first,
                                                       long i, VALUE leaf, long j, VALUE bad));
static void run_fail(tersa_rb_encoder *e, uint32_t depth, long *index, long first, long i, VALUE leaf, long j,
                     VALUE bad) {
    *index = first + i;
    if (leaf != Qfalse) {
        tersa_rb_enc_frame_open(e, depth, leaf)->index = j;
        depth++;
    }
    if (bad != Qundef) tersa_rb_enc_fail_value(e, depth, "invalid UTF-8 in", bad);
    tersa_rb_enc_fail_writer(e, depth);
}

#define RUN_FAIL(bad)                                                                        \
    (outer ? run_fail(e, depth, index, first, outer_n - outer_left, leaf, n - left, (bad))   \
           : run_fail(e, depth, index, first, n - left, Qfalse, 0, (bad)))
#define RUN_CHECK(call)                                                        \
    do {                                                                       \
        if (TERSA_UNLIKELY(!(call))) RUN_FAIL(Qundef);                       \
    } while (0)

/* Write the leading items of v[0], v[step], v[2 * step], ... (n of them;
 * step 2: a map's values among its {key, value} pairs, so that a run of
 * scalar values pays one call, not one each) that need no call into Ruby: Integers
 * in a Fixnum, Floats, nil, true, false, UTF-8 (or US-ASCII) and binary
 * Strings, and short Arrays of those (leaf_array), written whole without a
 * frame; returns how many. The writers of floats are inlined here and only
 * here (a second call site makes the link-time optimizer keep them out of
 * line), so a leaf Array's items go through the same loop, and a run of
 * items pays one call: a call per item was a large part of writing a float.
 * `first` is the index of v[0] in its container, for paths in errors, which
 * set *index. Nothing here allocates or runs Ruby code, so v and a leaf's
 * items stay valid. */
TERSA_NOINLINE static long write_run(tersa_rb_encoder *e, const VALUE *v, long n, long step, long *index,
                                       long first, uint32_t depth) {
    /* The item at v is number n - left (from 0) of the n: a pointer and a
     * count down, as cheap per item as an index for step 1. Inside a leaf
     * Array, the run's item (the Array), count, items left and step. */
    const VALUE *outer = NULL;
    long outer_n = 0, outer_left = 0, outer_step = 0;
    VALUE leaf = Qfalse;
    long left = n;
    for (;; v += step, left--) {
    again:
        if (TERSA_UNLIKELY(left <= 0)) {
            if (!outer) break;
            RUN_CHECK(tersa_write_array_end(e->w));
            v = outer;
            n = outer_n;
            left = outer_left;
            step = outer_step;
            outer = NULL;
            leaf = Qfalse;
            continue;
        }
        VALUE x = *v;
        double d;
        if (FIXNUM_P(x)) {
            RUN_CHECK(tersa_write_int(e->w, FIX2LONG(x)));
            continue;
        } else if (RB_FLONUM_P(x)) {
            d = tersa_rb_float_value(x);
        } else if (RB_SPECIAL_CONST_P(x)) {
            if (NIL_P(x)) RUN_CHECK(tersa_write_null(e->w));
            else if (x == Qtrue || x == Qfalse) RUN_CHECK(tersa_write_bool(e->w, x == Qtrue));
            else break;
            continue;
        } else {
            VALUE flags = RBASIC(x)->flags;
            int kind = tersa_rb_str_kind_of(flags);
            if (TERSA_LIKELY((flags & RUBY_T_MASK) == T_STRING && kind == STR_TEXT)) {
                size_t len;
                const char *p = tersa_rb_str_mem(x, &len);
                RUN_CHECK(tersa_write_string_utf8(e->w, p, len));
                continue;
            }
            switch (flags & RUBY_T_MASK) {
            case T_FLOAT:
                d = tersa_rb_float_value(x);
                break;
            case T_STRING:
                if (kind == STR_TEXT_SCAN) {
                    if (rb_enc_str_coderange(x) == ENC_CODERANGE_BROKEN) RUN_FAIL(x);
                    RUN_CHECK(tersa_write_string_utf8(e->w, RSTRING_PTR(x), (size_t)RSTRING_LEN(x)));
                } else if (kind == STR_BINARY) {
                    RUN_CHECK(tersa_write_binary(e->w, RSTRING_PTR(x), (size_t)RSTRING_LEN(x)));
                } else {
                    goto stop;
                }
                continue;
            case T_ARRAY: {
                if (outer) goto stop;
                if (RARRAY_LEN(x)) {
                    VALUE head = RARRAY_CONST_PTR_TRANSIENT(x)[0];
                    int done = RB_FLOAT_TYPE_P(head) ? write_float_leaf(e, x, depth)
                               : plain_utf8(head)    ? write_string_leaf(e, x, depth)
                                                     : 0;
                    if (done > 0) continue;
                    if (TERSA_UNLIKELY(done < 0)) RUN_FAIL(Qundef);
                }
                if (!leaf_array(e, x, depth)) goto stop;
                RUN_CHECK(tersa_write_array_begin(e->w, (size_t)RARRAY_LEN(x)));
                outer = v;
                outer_n = n;
                outer_left = left;
                outer_step = step;
                leaf = x;
                v = RARRAY_CONST_PTR_TRANSIENT(x);
                n = RARRAY_LEN(x);
                left = n;
                step = 1;
                goto again;
            }
            default:
                goto stop;
            }
        }
        RUN_CHECK(tersa_write_double(e->w, d));
    }
stop:
    return n - left;
}

#undef RUN_FAIL
#undef RUN_CHECK

/* A single map value of its own kind: runs in maps are short, and one item
 * through write_run costs more than through this small writer. */
TERSA_NOINLINE static void encode_literal(tersa_rb_encoder *e, VALUE v, uint32_t depth) {
    CHECK_W(NIL_P(v) ? tersa_write_null(e->w) : tersa_write_bool(e->w, v == Qtrue));
}

/* Write obj if it is a scalar write_run does not take (a Symbol, a Bignum,
 * a String to convert) and return 0; else return its builtin type (a
 * container, or an object for a hook). */
TERSA_NOINLINE static int write_other(tersa_rb_encoder *e, VALUE obj, uint32_t depth) {
    if (RB_SPECIAL_CONST_P(obj)) {
        if (!SYMBOL_P(obj)) tersa_rb_enc_fail_value(e, depth, "unsupported type", obj);
        encode_symbol(e, obj, depth);
        return 0;
    }
    int type = BUILTIN_TYPE(obj);
    switch (type) {
    case T_STRING:
        encode_converted_string(e, obj, depth);
        return 0;
    case T_BIGNUM:
        encode_bignum(e, obj, depth);
        return 0;
    case T_SYMBOL:
        encode_symbol(e, obj, depth);
        return 0;
    default:
        return type;
    }
}


TERSA_NORETURN(static void array_modified(tersa_rb_encoder *e));
static void array_modified(tersa_rb_encoder *e) {
    tersa_rb_enc_reset(e);
    rb_raise(eEncodeError, "array modified during encoding");
}

/* Worth a call of write_run: taken by it, unless it is a String in another
 * encoding, a Symbol or an Array that is no leaf. An Array whose first item
 * write_run does not take (records, rows of containers) is no leaf of any
 * kind, and write_run's entry and exit cost more than that test. */
static inline bool run_item(VALUE x) {
    if (RB_SPECIAL_CONST_P(x)) return true;
    int t = BUILTIN_TYPE(x);
    if (t == T_ARRAY) return RARRAY_LEN(x) == 0 || run_takes(RARRAY_AREF(x, 0));
    return t == T_STRING || t == T_FLOAT;
}

/* Write obj if it is a value of its own (no container, no hook) and return
 * 0; else return its builtin type. */
static inline int write_scalar(tersa_rb_encoder *e, VALUE obj, uint32_t depth) {
    long index;
    if (run_item(obj) && write_run(e, &obj, 1, 1, &index, 0, depth)) return 0;
    return write_other(e, obj, depth);
}

/* Write obj if write_other takes it and return 0, else return its builtin
 * type without a call (containers, objects for hooks). */
static inline int write_other_or_type(tersa_rb_encoder *e, VALUE obj, uint32_t depth) {
    if (!RB_SPECIAL_CONST_P(obj)) {
        int t = BUILTIN_TYPE(obj);
        if (t != T_STRING && t != T_BIGNUM && t != T_SYMBOL) return t;
    }
    return write_other(e, obj, depth);
}

/* Write the items of `ary` from `i` on (up to n), in frame `f` at `depth`,
 * up to one that is not a scalar: returns its index and *type (n and 0 when
 * there is none). An Array's items are read in place, so no GC may run
 * meanwhile: write_run cannot allocate, and the pointer is taken again after
 * write_other. */
TERSA_ALWAYS_INLINE static inline long write_array_items(tersa_rb_encoder *e, enc_frame *f, VALUE ary, long i,
                                                           long n, uint32_t depth, int *type) {
    for (; i < n; i++) {
        long len = RARRAY_LEN(ary);
        if (TERSA_UNLIKELY(i >= len)) array_modified(e);
        VALUE x = RARRAY_AREF(ary, i);
        if (run_item(x)) {
            i += write_run(e, RARRAY_CONST_PTR_TRANSIENT(ary) + i, (len < n ? len : n) - i, 1, &f->index, i, depth);
            if (i >= n) break;
            if (TERSA_UNLIKELY(i >= RARRAY_LEN(ary))) array_modified(e);
            x = RARRAY_AREF(ary, i);
        }
        f->index = i;
        if ((*type = write_other_or_type(e, x, depth))) return i;
    }
    *type = 0;
    return n;
}

/* Write the items of the innermost open container `f` (its items are at
 * `depth`) up to one that is not a scalar, which goes to *obj, returning its
 * builtin type; 0 when the container has no items left. The writers touch
 * neither the value stack nor the frames, so pointers into them hold during
 * a run. */
static int write_items(tersa_rb_encoder *e, enc_frame *f, uint32_t depth, VALUE *obj) {
    long n = f->n;
    int type;
    if (f->kind == FRAME_ARRAY) {
        long i = write_array_items(e, f, f->container, f->index + 1, n, depth, &type);
        if (type) *obj = RARRAY_AREF(f->container, i);
        return type;
    }
    const VALUE *pairs = e->stack->ptr + f->base + 1;
    if (f->kind == FRAME_MAP) {
        for (long i = f->index + 1; i < n; i++) {
            VALUE v = pairs[2 * i + 1];
            /* Integers and UTF-8 Strings, most map values, call their writer
             * directly (a wrapper's call cost as much as the dispatch); the
             * frame's index, for the path of an error, is stored only if
             * one fails. */
            if (FIXNUM_P(v)) {
                if (TERSA_UNLIKELY(!tersa_write_int(e->w, FIX2LONG(v)))) {
                    f->index = i;
                    tersa_rb_enc_fail_writer(e, depth);
                }
                continue;
            }
            if (plain_utf8(v)) {
                size_t len;
                const char *p = tersa_rb_str_mem(v, &len);
                if (TERSA_UNLIKELY(!tersa_write_string_utf8(e->w, p, len))) {
                    f->index = i;
                    tersa_rb_enc_fail_writer(e, depth);
                }
                continue;
            }
            f->index = i;
            if (v == Qnil || v == Qtrue || v == Qfalse) {
                encode_literal(e, v, depth);
                continue;
            }
            if (run_item(v)) {
                /* This value and the scalar values after it, in one call;
                 * the value it stops at is none of write_run's. */
                long k = write_run(e, &pairs[2 * i + 1], n - i, 2, &f->index, i, depth);
                if (k) {
                    i += k;
                    if (i >= n) break;
                    v = pairs[2 * i + 1];
                    f->index = i;
                }
            }
            if ((type = write_other_or_type(e, v, depth))) {
                *obj = v;
                return type;
            }
        }
        return 0;
    }
    for (;;) {
        VALUE v;
        if (f->at_value) {
            long i = ++f->index;
            if (i >= n) return 0;
            v = pairs[2 * i];
            f->at_value = false;
        } else {
            v = pairs[2 * f->index + 1];
            f->at_value = true;
        }
        if ((type = write_scalar(e, v, depth))) {
            *obj = v;
            return type;
        }
    }
}

/* Write the items of the open containers, innermost first, opening the
 * Arrays and Hashes met on the way and closing the finished containers,
 * until none is open (0) or an item needs more (a hook, a Tersa::Map): then
 * its builtin type, the item in *obj and *depth updated. */
static int run_frames(tersa_rb_encoder *e, uint32_t *depth_io, VALUE *obj) {
    uint32_t depth = *depth_io;
    int type = 0;
    while (depth) {
        enc_frame *f = &e->frames[depth - 1];
        VALUE item;
        type = write_items(e, f, depth, &item);
        if (!type) {
            close_frame(e, f, depth - 1);
            depth--;
        } else if (type == T_ARRAY) {
            depth += open_array(e, item, depth, 0);
        } else if (type == T_HASH) {
            depth += tersa_rb_enc_open_nested_hash(e, item, depth);
        } else {
            *obj = item;
            break;
        }
    }
    *depth_io = depth;
    return type;
}

/* Encode one value. A container opens a frame and its items are written by
 * the same loop, so nesting costs heap (e->frames), never machine stack. */
void tersa_rb_enc_encode_root(tersa_rb_encoder *e, VALUE obj) {
    uint32_t depth = 0;   /* open containers */
    uint32_t pending = 0; /* hook replacements standing for obj */
    int type = write_scalar(e, obj, depth);
    for (;;) {
        /* obj, inside `depth` containers, is a container or needs a hook (of that builtin type). */
        if (type) {
            bool opened;
            if (type == T_HASH) {
                opened = tersa_rb_enc_open_map(e, obj, true, depth, pending);
            } else if (type == T_ARRAY) {
                opened = open_array(e, obj, depth, pending);
            } else if (tersa_rb_enc_declared(e, obj, depth, pending, &opened)) {
                /* a declared class (never a Tersa::Map): the map of its attributes */
            } else if (tersa_rb_is_map(obj)) {
                opened = tersa_rb_enc_open_map(e, obj, false, depth, pending);
            } else {
                VALUE replacement = encode_other(e, obj, depth);
                if (replacement != Qundef) {
                    obj = replacement;
                    pending++;
                    type = write_scalar(e, obj, depth);
                    continue;
                }
                opened = false;
            }
            if (opened) {
                depth++;
                pending = 0;
            }
        }
        if (TERSA_UNLIKELY(pending)) {
            e->hooks -= pending;
            e->stack->len -= pending;
            pending = 0;
        }
        if (!(type = run_frames(e, &depth, &obj))) return;
    }
}

void tersa_rb_init_encoder_walk(void) {
    id_to_tersa = rb_intern("to_tersa");
    id_utc_p = rb_intern("utc?");
    id_subsec = rb_intern("subsec");
    id_denominator = rb_intern("denominator");
    init_str_kinds();
}
