/*
 * encoder_class.c - Pith::Encoder and Pith.dump: Ruby objects -> the C writer.
 */
#include "common.h"

#include "hash_fast.h"
#include "stack.h"

#include <string.h>

VALUE cEncoder;
static ID id_to_pith, id_call, id_utc_p, id_subsec, id_default, id_dictionary, id_max_depth, id_denominator;
static rb_ractor_local_key_t default_encoder_key;

/* ==========================================================================
 * State
 * ========================================================================== */

/* Shape cache: a hash's key objects (by identity) -> the writer's shape index.
 * Valid within one buffer (shape indices are per buffer) and only while no GC
 * has run since it was filled (a collected key's address could be reused). */
#define SHAPE_CACHE_BITS 8
#define SHAPE_CACHE (1 << SHAPE_CACHE_BITS)

typedef struct shape_entry {
    uint64_t sig;
    uint32_t gen;
    uint32_t n;
    uint32_t shape;
    uint32_t pool; /* offset of the keys in the pool */
} shape_entry;

typedef struct path_entry {
    VALUE container;
    VALUE key;   /* Qundef for arrays */
    long index;
} path_entry;

typedef struct pith_rb_encoder {
    pith_writer *w;
    VALUE stack_obj;
    pith_rb_stack *stack;
    VALUE default_proc;
    VALUE dictionary;
    uint32_t max_depth;
    uint32_t hooks;          /* hook replacements being encoded, nested (they count as depth) */
    bool busy;
    bool streaming;
    bool stream_failed;      /* a value failed mid-frame: the stream's tables are unknown */
    size_t stream_good_len;  /* the stream's bytes up to the last complete frame */
    uint32_t gen;
    size_t gc_count;
    shape_entry cache[SHAPE_CACHE];
    VALUE *pool;
    size_t pool_len, pool_cap;
    pith_key *kbuf;
    size_t kbuf_cap;
    path_entry *path;
    size_t path_cap;
} pith_rb_encoder;

static void enc_mark(void *p) {
    pith_rb_encoder *e = (pith_rb_encoder *)p;
    rb_gc_mark_movable(e->stack_obj);
    rb_gc_mark_movable(e->default_proc);
    rb_gc_mark_movable(e->dictionary);
}

static void enc_compact(void *p) {
    pith_rb_encoder *e = (pith_rb_encoder *)p;
    e->stack_obj = rb_gc_location(e->stack_obj);
    e->default_proc = rb_gc_location(e->default_proc);
    e->dictionary = rb_gc_location(e->dictionary);
    /* Cached key identities may have moved: forget them. */
    e->gen++;
}

static void enc_free(void *p) {
    pith_rb_encoder *e = (pith_rb_encoder *)p;
    pith_writer_free(e->w);
    xfree(e->pool);
    xfree(e->kbuf);
    xfree(e->path);
    xfree(e);
}

static size_t enc_memsize(const void *p) {
    const pith_rb_encoder *e = (const pith_rb_encoder *)p;
    size_t len = 0;
    if (e->w) pith_writer_data(e->w, &len);
    return sizeof(*e) + e->pool_cap * sizeof(VALUE) + e->kbuf_cap * sizeof(pith_key) + len;
}

static const rb_data_type_t encoder_type = {
    .wrap_struct_name = "Pith::Encoder",
    .function = {.dmark = enc_mark, .dfree = enc_free, .dsize = enc_memsize, .dcompact = enc_compact},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static VALUE enc_alloc(VALUE klass) {
    pith_rb_encoder *e;
    VALUE self = TypedData_Make_Struct(klass, pith_rb_encoder, &encoder_type, e);
    e->default_proc = Qnil;
    e->dictionary = Qnil;
    e->stack_obj = Qnil;
    e->max_depth = PITH_DEFAULT_MAX_DEPTH;
    e->w = pith_writer_new(NULL);
    if (!e->w) rb_memerror();
    pith_rb_stack *s;
    VALUE stack = pith_rb_stack_new(&s);
    RB_OBJ_WRITE(self, &e->stack_obj, stack);
    e->stack = s;
    return self;
}

static pith_rb_encoder *get_encoder(VALUE self) {
    return (pith_rb_encoder *)rb_check_typeddata(self, &encoder_type);
}

/* ==========================================================================
 * Errors (state is reset before raising, so the encoder stays usable)
 * ========================================================================== */

static VALUE path_string(pith_rb_encoder *e, uint32_t depth) {
    VALUE s = rb_str_new_cstr("$");
    for (uint32_t i = 0; i < depth; i++) {
        if (e->path[i].key == Qundef)
            rb_str_catf(s, "[%ld]", e->path[i].index);
        else
            rb_str_catf(s, "[%" PRIsVALUE "]", rb_inspect(e->path[i].key));
    }
    return s;
}

static void reset(pith_rb_encoder *e) {
    e->stack->len = 0;
    e->hooks = 0;
    e->busy = false;
}

PITH_RB_NORETURN(static void fail_writer(pith_rb_encoder *e, uint32_t depth));
static void fail_writer(pith_rb_encoder *e, uint32_t depth) {
    VALUE path = path_string(e, depth);
    reset(e);
    pith_rb_raise_writer(e->w, path);
}

PITH_RB_NORETURN(static void fail_value(pith_rb_encoder *e, uint32_t depth, const char *what, VALUE obj));
static void fail_value(pith_rb_encoder *e, uint32_t depth, const char *what, VALUE obj) {
    VALUE path = path_string(e, depth);
    VALUE klass = rb_obj_class(obj);
    reset(e);
    rb_raise(eEncodeError, "%s %" PRIsVALUE " at %" PRIsVALUE, what, klass, path);
}

#define CHECK_W(call)                                  \
    do {                                               \
        if (PITH_RB_UNLIKELY(!(call))) fail_writer(e, depth); \
    } while (0)

/* Call Ruby code (hooks, conversions); if it raises, reset and re-raise. */
static VALUE protected_call(pith_rb_encoder *e, VALUE (*fn)(VALUE), VALUE arg) {
    int state = 0;
    VALUE result = rb_protect(fn, arg, &state);
    if (state) {
        reset(e);
        rb_jump_tag(state);
    }
    return result;
}

static VALUE to_utf8(VALUE str) { return rb_str_encode(str, rb_enc_from_encoding(pith_utf8), 0, Qnil); }

/* A String of another encoding as UTF-8; one that cannot be converted is an
 * EncodeError naming the encoding and the path, like any unsupported value. */
static VALUE convert_to_utf8(pith_rb_encoder *e, VALUE str, uint32_t depth) {
    int state = 0;
    VALUE u = rb_protect(to_utf8, str, &state);
    if (!state) return u;
    VALUE err = rb_errinfo();
    if (!rb_obj_is_kind_of(err, rb_eEncodingError)) {
        reset(e);
        rb_jump_tag(state);
    }
    rb_set_errinfo(Qnil);
    VALUE path = path_string(e, depth);
    reset(e);
    rb_raise(eEncodeError, "cannot convert a %s String to UTF-8 (%" PRIsVALUE ") at %" PRIsVALUE,
             rb_enc_name(rb_enc_get(str)), rb_obj_as_string(err), path);
}

/* ==========================================================================
 * Values
 * ========================================================================== */

static void encode_value(pith_rb_encoder *e, VALUE obj, uint32_t depth);

PITH_RB_NOINLINE static void encode_string(pith_rb_encoder *e, VALUE str, uint32_t depth) {
    int idx = RB_ENCODING_GET_INLINED(str);
    if (PITH_RB_LIKELY(idx == pith_utf8_index || idx == pith_usascii_index)) {
        int cr = ENC_CODERANGE(str);
        if (PITH_RB_UNLIKELY(cr != ENC_CODERANGE_7BIT && cr != ENC_CODERANGE_VALID)) {
            cr = rb_enc_str_coderange(str);
            if (cr == ENC_CODERANGE_BROKEN) fail_value(e, depth, "invalid UTF-8 in", str);
        }
        CHECK_W(pith_write_string_utf8(e->w, RSTRING_PTR(str), (size_t)RSTRING_LEN(str)));
    } else if (idx == pith_binary_index) {
        CHECK_W(pith_write_binary(e->w, RSTRING_PTR(str), (size_t)RSTRING_LEN(str)));
    } else {
        VALUE u = convert_to_utf8(e, str, depth);
        CHECK_W(pith_write_string(e->w, RSTRING_PTR(u), (size_t)RSTRING_LEN(u)));
        RB_GC_GUARD(u);
    }
}

static void encode_symbol(pith_rb_encoder *e, VALUE sym, uint32_t depth) {
    VALUE s = rb_sym2str(sym);
    int idx = RB_ENCODING_GET_INLINED(s);
    if (PITH_RB_UNLIKELY(idx != pith_utf8_index && idx != pith_usascii_index)) s = convert_to_utf8(e, s, depth);
    CHECK_W(pith_write_symbol(e->w, RSTRING_PTR(s), (size_t)RSTRING_LEN(s)));
    RB_GC_GUARD(s);
}

PITH_RB_NOINLINE static void encode_bignum(pith_rb_encoder *e, VALUE big, uint32_t depth) {
    size_t n = rb_absint_size(big, NULL);
    uint8_t small[64];
    uint8_t *buf = n <= sizeof small ? small : PITH_RB_ALLOC_N(uint8_t, n);
    int sign = rb_integer_pack(big, buf, n, 1, 0, INTEGER_PACK_LITTLE_ENDIAN);
    bool ok = pith_write_bigint(e->w, sign < 0, buf, n);
    if (buf != small) xfree(buf);
    if (!ok) fail_writer(e, depth);
}

static void encode_time(pith_rb_encoder *e, VALUE t, uint32_t depth) {
    struct timespec ts = rb_time_timespec(t);
    /* Ruby keeps rational subseconds; anything finer than a nanosecond would be lost. */
    VALUE sub = rb_funcall(t, id_subsec, 0);
    if (!FIXNUM_P(sub)) {
        VALUE den = rb_funcall(sub, id_denominator, 0);
        if (!FIXNUM_P(den) || 1000000000L % FIX2LONG(den) != 0)
            fail_value(e, depth, "sub-nanosecond precision in", t);
    }
    pith_timestamp p;
    p.seconds = (int64_t)ts.tv_sec;
    p.nanos = (uint32_t)ts.tv_nsec;
    if (RTEST(rb_funcall(t, id_utc_p, 0))) {
        p.zone = PITH_ZONE_UTC;
        p.offset = 0;
    } else {
        long off = NUM2LONG(rb_time_utc_offset(t));
        if (off % 60 != 0) fail_value(e, depth, "a UTC offset with seconds in", t);
        p.zone = PITH_ZONE_OFFSET;
        p.offset = (int16_t)(off / 60);
    }
    CHECK_W(pith_write_timestamp(e->w, &p));
}

static void encode_timestamp_struct(pith_rb_encoder *e, VALUE t, uint32_t depth) {
    pith_timestamp p;
    p.seconds = NUM2LL(rb_struct_aref(t, INT2FIX(0)));
    p.nanos = NUM2UINT(rb_struct_aref(t, INT2FIX(1)));
    VALUE zone = rb_struct_aref(t, INT2FIX(2));
    VALUE off = rb_struct_aref(t, INT2FIX(3));
    if (zone == ID2SYM(rb_intern("utc"))) p.zone = PITH_ZONE_UTC;
    else if (zone == ID2SYM(rb_intern("offset"))) p.zone = PITH_ZONE_OFFSET;
    else if (zone == ID2SYM(rb_intern("floating"))) p.zone = PITH_ZONE_FLOATING;
    else fail_value(e, depth, "zone must be :utc, :offset or :floating in", t);
    long minutes = p.zone == PITH_ZONE_OFFSET ? NUM2LONG(off) : 0;
    if (minutes < -1439 || minutes > 1439) fail_value(e, depth, "offset outside -1439..1439 minutes in", t);
    p.offset = (int16_t)minutes;
    CHECK_W(pith_write_timestamp(e->w, &p));
}

/* Grow the path (depth-indexed) for error messages and cycle detection. */
static inline void path_enter(pith_rb_encoder *e, uint32_t depth, VALUE container) {
    if (PITH_RB_UNLIKELY(depth >= e->path_cap)) {
        size_t cap = e->path_cap ? e->path_cap * 2 : 64;
        while (cap <= depth) cap *= 2;
        PITH_RB_REALLOC_N(e->path, path_entry, cap);
        e->path_cap = cap;
    }
    if (PITH_RB_UNLIKELY(depth >= 32)) {
        /* Deep nesting is where cycles show up; a linear check there costs nothing elsewhere. */
        for (uint32_t i = 0; i < depth; i++)
            if (e->path[i].container == container) fail_value(e, depth, "circular reference to a", container);
    }
    if (PITH_RB_UNLIKELY(depth + e->hooks >= e->max_depth)) {
        VALUE path = path_string(e, depth);
        reset(e);
        rb_raise(eEncodeError, "nesting deeper than %u at %" PRIsVALUE, e->max_depth, path);
    }
    e->path[depth].container = container;
    e->path[depth].key = Qundef;
    e->path[depth].index = 0;
}

/* Containers and hooks stay out of line so that encode_value, which every
 * scalar goes through, keeps a small frame. */
PITH_RB_NOINLINE static void encode_array(pith_rb_encoder *e, VALUE ary, uint32_t depth) {
    path_enter(e, depth, ary);
    long n = RARRAY_LEN(ary);
    CHECK_W(pith_write_array_begin(e->w, (size_t)n));
    for (long i = 0; i < n; i++) {
        if (PITH_RB_UNLIKELY(i >= RARRAY_LEN(ary))) {
            reset(e);
            rb_raise(eEncodeError, "array modified during encoding");
        }
        e->path[depth].index = i;
        encode_value(e, RARRAY_AREF(ary, i), depth + 1);
    }
    CHECK_W(pith_write_array_end(e->w));
}

typedef struct collect_ctx {
    pith_rb_stack *stack;
    long at;
} collect_ctx;

static int collect_pair(VALUE key, VALUE value, VALUE arg) {
    collect_ctx *c = (collect_ctx *)arg;
    c->stack->ptr[c->at++] = key;
    c->stack->ptr[c->at++] = value;
    return ST_CONTINUE;
}

#ifdef HAVE_RB_HASH_STLIKE_FOREACH
/* Exported by libruby but declared only in its internal headers. */
int rb_hash_stlike_foreach(VALUE hash, st_foreach_callback_func *func, st_data_t arg);

static int collect_st_pair(st_data_t key, st_data_t value, st_data_t arg) {
    return collect_pair((VALUE)key, (VALUE)value, (VALUE)arg);
}

static inline void collect_pairs(VALUE hash, collect_ctx *c) {
    rb_hash_stlike_foreach(hash, collect_st_pair, (st_data_t)c);
}
#else
static inline void collect_pairs(VALUE hash, collect_ctx *c) { rb_hash_foreach(hash, collect_pair, (VALUE)c); }
#endif

/* The signature of a key sequence by identity, from its length and its first,
 * middle and last keys: a hit is confirmed key by key anyway, and hashing
 * every key cost as much as that confirmation. Shapes that agree on all
 * four share a cache entry and take turns in it. */
static inline uint64_t keys_signature(const VALUE *pairs, long n) {
    if (n == 0) return 0x9e3779b97f4a7c15ull;
    uint64_t first = (uint64_t)pairs[0] >> 3, middle = (uint64_t)pairs[2 * (n >> 1)] >> 3,
             last = (uint64_t)pairs[2 * (n - 1)] >> 3;
    uint64_t sig = (uint64_t)n + first + ((middle << 21) | (middle >> 43)) + ((last << 42) | (last >> 22));
    return sig * 0x9e3779b97f4a7c15ull;
}

/* Keys as pith_keys when all are Strings or Symbols (else false). Converted
 * strings are pushed on the value stack to keep them alive. */
static bool textual_keys(pith_rb_encoder *e, long base, long n, bool *converted, uint32_t depth) {
    if ((size_t)n > e->kbuf_cap) {
        PITH_RB_REALLOC_N(e->kbuf, pith_key, n);
        e->kbuf_cap = (size_t)n;
    }
    *converted = false;
    for (long i = 0; i < n; i++) {
        VALUE k = e->stack->ptr[base + 2 * i];
        bool symbol = false;
        if (SYMBOL_P(k)) {
            k = rb_sym2str(k);
            symbol = true;
        } else if (!RB_TYPE_P(k, T_STRING)) {
            return false;
        }
        int idx = RB_ENCODING_GET_INLINED(k);
        if (idx == pith_binary_index && !symbol) return false; /* a binary key: a generic map */
        if (idx != pith_utf8_index && idx != pith_usascii_index) {
            k = convert_to_utf8(e, k, depth);
            pith_rb_stack_push(e->stack, k);
            *converted = true;
        } else if (ENC_CODERANGE(k) != ENC_CODERANGE_7BIT && ENC_CODERANGE(k) != ENC_CODERANGE_VALID &&
                   rb_enc_str_coderange(k) == ENC_CODERANGE_BROKEN) {
            fail_value(e, depth, "invalid UTF-8 in a key of a", e->path[depth].container);
        }
        e->kbuf[i].ptr = RSTRING_PTR(k);
        e->kbuf[i].len = (size_t)RSTRING_LEN(k);
        e->kbuf[i].symbol = symbol;
    }
    return true;
}

static void cache_store(pith_rb_encoder *e, shape_entry *entry, uint64_t sig, long base, long n, uint32_t shape) {
    if (e->pool_len + (size_t)n > e->pool_cap) {
        size_t cap = e->pool_cap ? e->pool_cap * 2 : 1024;
        while (cap < e->pool_len + (size_t)n) cap *= 2;
        PITH_RB_REALLOC_N(e->pool, VALUE, cap);
        e->pool_cap = cap;
    }
    for (long i = 0; i < n; i++) e->pool[e->pool_len + (size_t)i] = e->stack->ptr[base + 2 * i];
    entry->sig = sig;
    entry->gen = e->gen;
    entry->n = (uint32_t)n;
    entry->shape = shape;
    entry->pool = (uint32_t)e->pool_len;
    e->pool_len += (size_t)n;
}

PITH_RB_NOINLINE static void encode_hash(pith_rb_encoder *e, VALUE hash, uint32_t depth) {
    path_enter(e, depth, hash);
    long n = (long)RHASH_SIZE(hash);
    /* The iteration below fills every slot and cannot allocate. */
    long base = pith_rb_stack_grow_raw(e->stack, 2 * n);
    if (!pith_rb_hash_pairs(hash, e->stack->ptr + base, n)) {
        collect_ctx c = {e->stack, base};
        collect_pairs(hash, &c);
        if (PITH_RB_UNLIKELY(c.at != base + 2 * n)) {
            reset(e);
            rb_raise(eEncodeError, "hash modified during encoding");
        }
    }

    uint64_t sig = keys_signature(e->stack->ptr + base, n);
    shape_entry *entry = &e->cache[sig >> (64 - SHAPE_CACHE_BITS)];
    bool hit = entry->gen == e->gen && entry->sig == sig && entry->n == (uint32_t)n;
    if (hit) {
        const VALUE *keys = e->pool + entry->pool;
        for (long i = 0; i < n && hit; i++) hit = keys[i] == e->stack->ptr[base + 2 * i];
        if (hit && PITH_RB_UNLIKELY(rb_gc_count() != e->gc_count)) {
            /* A collection may have freed and reused addresses: start over. */
            e->gen++;
            e->gc_count = rb_gc_count();
            hit = false;
        }
    }
    if (hit) {
        CHECK_W(pith_write_map_shape(e->w, entry->shape));
    } else {
        bool converted;
        if (textual_keys(e, base, n, &converted, depth)) {
            /* The checked form verifies UTF-8 and distinct keys: needed for
             * converted keys, and for a compare_by_identity Hash, which can
             * hold equal keys (only an ordinary small Hash surely cannot). */
            bool trusted = !converted && !pith_rb_hash_may_repeat_keys(hash);
            CHECK_W(trusted ? pith_write_map_begin_utf8(e->w, e->kbuf, (size_t)n)
                            : pith_write_map_begin(e->w, e->kbuf, (size_t)n));
            uint32_t shape = pith_writer_last_shape(e->w);
            if (shape != PITH_NO_INDEX && !converted) cache_store(e, entry, sig, base, n, shape);
        } else {
            CHECK_W(pith_write_generic_map_begin(e->w, (size_t)n));
            for (long i = 0; i < n; i++) {
                e->path[depth].index = i;
                e->path[depth].key = e->stack->ptr[base + 2 * i];
                encode_value(e, e->stack->ptr[base + 2 * i], depth + 1);
                encode_value(e, e->stack->ptr[base + 2 * i + 1], depth + 1);
            }
            CHECK_W(pith_write_map_end(e->w));
            e->stack->len = base;
            return;
        }
    }
    for (long i = 0; i < n; i++) {
        e->path[depth].index = i;
        e->path[depth].key = e->stack->ptr[base + 2 * i];
        encode_value(e, e->stack->ptr[base + 2 * i + 1], depth + 1);
    }
    CHECK_W(pith_write_map_end(e->w));
    e->stack->len = base;
}

static VALUE call_to_pith(VALUE obj) { return rb_funcall(obj, id_to_pith, 0); }

typedef struct call_args {
    VALUE proc, arg;
} call_args;

static VALUE call_proc(VALUE p) {
    call_args *a = (call_args *)p;
    return rb_funcall(a->proc, id_call, 1, a->arg);
}

PITH_RB_NOINLINE static void encode_other(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    VALUE klass = rb_obj_class(obj);
    if (klass == rb_cTime || rb_obj_is_kind_of(obj, rb_cTime)) {
        encode_time(e, obj, depth);
        return;
    }
    if (klass == cTimestamp) {
        encode_timestamp_struct(e, obj, depth);
        return;
    }
    uint32_t type;
    VALUE packer = pith_rb_ext_packer(klass, &type);
    if (!NIL_P(packer)) {
        call_args a = {packer, obj};
        e->gen++; /* Ruby code may run GC and move or free objects */
        VALUE bytes = protected_call(e, call_proc, (VALUE)&a);
        if (!RB_TYPE_P(bytes, T_STRING)) fail_value(e, depth, "packer did not return a String for", obj);
        CHECK_W(pith_write_ext(e->w, type, RSTRING_PTR(bytes), (size_t)RSTRING_LEN(bytes)));
        RB_GC_GUARD(bytes);
        return;
    }
    if (klass == cExt) {
        VALUE data = rb_struct_aref(obj, INT2FIX(1));
        StringValue(data);
        CHECK_W(pith_write_ext(e->w, NUM2UINT(rb_struct_aref(obj, INT2FIX(0))), RSTRING_PTR(data),
                               (size_t)RSTRING_LEN(data)));
        return;
    }
    VALUE replacement = Qundef;
    if (rb_respond_to(obj, id_to_pith)) {
        e->gen++;
        replacement = protected_call(e, call_to_pith, obj);
    } else if (!NIL_P(e->default_proc)) {
        call_args a = {e->default_proc, obj};
        e->gen++;
        replacement = protected_call(e, call_proc, (VALUE)&a);
    }
    if (replacement == Qundef) fail_value(e, depth, "unsupported type", obj);
    if (rb_obj_class(replacement) == klass && !RB_TYPE_P(replacement, T_HASH) && !RB_TYPE_P(replacement, T_ARRAY) &&
        !RB_TYPE_P(replacement, T_STRING))
        fail_value(e, depth, "the hook returned another unsupported", obj);
    /* The replacement takes obj's place (and path), but a hook that returns
     * objects needing hooks again counts as nesting, or A -> B -> A loops. */
    if (depth + e->hooks + 1 > e->max_depth) fail_value(e, depth, "hooks nest too deeply at", obj);
    pith_rb_stack_push(e->stack, replacement);
    e->hooks++;
    encode_value(e, replacement, depth);
    e->hooks--;
    e->stack->len--;
}

PITH_RB_NOINLINE static void encode_fixnum(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    CHECK_W(pith_write_int(e->w, FIX2LONG(obj)));
}

PITH_RB_NOINLINE static void encode_float(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    CHECK_W(pith_write_double(e->w, RFLOAT_VALUE(obj)));
}

PITH_RB_NOINLINE static void encode_special(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    if (NIL_P(obj)) CHECK_W(pith_write_null(e->w));
    else if (obj == Qtrue) CHECK_W(pith_write_bool(e->w, true));
    else if (obj == Qfalse) CHECK_W(pith_write_bool(e->w, false));
    else if (SYMBOL_P(obj)) encode_symbol(e, obj, depth);
    else fail_value(e, depth, "unsupported type", obj);
}

/* encode_value only dispatches, with every case a tail call to a function of
 * its own: it then needs no stack frame, where inlining the cases made it
 * save and restore six registers for every value. */
static void encode_value(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    if (FIXNUM_P(obj)) return encode_fixnum(e, obj, depth);
    if (RB_FLONUM_P(obj)) return encode_float(e, obj, depth);
    if (RB_SPECIAL_CONST_P(obj)) return encode_special(e, obj, depth);
    switch (BUILTIN_TYPE(obj)) {
    case T_STRING:
        return encode_string(e, obj, depth);
    case T_HASH:
        return encode_hash(e, obj, depth);
    case T_ARRAY:
        return encode_array(e, obj, depth);
    case T_FLOAT:
        return encode_float(e, obj, depth);
    case T_BIGNUM:
        return encode_bignum(e, obj, depth);
    case T_SYMBOL:
        return encode_symbol(e, obj, depth);
    default:
        return encode_other(e, obj, depth);
    }
}

/* ==========================================================================
 * Entry points
 * ========================================================================== */

static void begin(pith_rb_encoder *e, uint32_t flags) {
    const pith_dict *dict = NIL_P(e->dictionary) ? NULL : pith_rb_dict(e->dictionary);
    if (!pith_writer_start(e->w, dict, flags)) rb_memerror();
    pith_writer_set_max_depth(e->w, e->max_depth);
    e->gen++;
    e->pool_len = 0;
    e->gc_count = rb_gc_count();
}

/* Encode one value as a complete buffer and return it as a binary String. */
static VALUE encode_buffer(pith_rb_encoder *e, VALUE obj) {
    e->busy = true;
    e->streaming = false;
    begin(e, 0);
    encode_value(e, obj, 0);
    size_t len;
    const uint8_t *data = pith_writer_data(e->w, &len);
    VALUE out = rb_enc_str_new((const char *)data, (long)len, pith_binary);
    e->busy = false;
    return out;
}

/* Append one frame to the stream. */
static VALUE push_frame(pith_rb_encoder *e, VALUE obj) {
    if (!e->streaming) {
        begin(e, PITH_WRITE_STREAM);
        e->streaming = true;
        e->stream_failed = false;
        pith_writer_data(e->w, &e->stream_good_len);
    }
    e->busy = true;
    /* Ruby code ran since the last value: key objects may have changed. */
    e->gen++;
    uint32_t depth = 0;
    CHECK_W(pith_write_frame_begin(e->w));
    encode_value(e, obj, 0);
    CHECK_W(pith_write_frame_end(e->w));
    pith_writer_data(e->w, &e->stream_good_len);
    e->busy = false;
    return Qnil;
}

/* Options are checked in full before any is applied: a bad one changes nothing. */
static void apply_options(pith_rb_encoder *e, VALUE self, VALUE opts) {
    if (NIL_P(opts)) return;
    ID ids[3] = {id_default, id_dictionary, id_max_depth};
    VALUE vals[3] = {Qundef, Qundef, Qundef};
    rb_get_kwargs(opts, ids, 0, 3, vals);
    if (vals[0] != Qundef && !NIL_P(vals[0]) && !rb_respond_to(vals[0], id_call))
        rb_raise(rb_eTypeError, "default: must respond to #call");
    if (vals[1] != Qundef && !NIL_P(vals[1])) pith_rb_dict(vals[1]);
    long d = -1;
    if (vals[2] != Qundef) {
        d = NUM2LONG(vals[2]);
        if (d < 1 || d > 100000) rb_raise(rb_eArgError, "max_depth must be 1..100000");
    }
    if (vals[0] != Qundef) RB_OBJ_WRITE(self, &e->default_proc, vals[0]);
    if (vals[1] != Qundef) RB_OBJ_WRITE(self, &e->dictionary, vals[1]);
    if (d > 0) e->max_depth = (uint32_t)d;
}

PITH_RB_NORETURN(static void raise_busy(void));
static void raise_busy(void) { rb_raise(eError, "encoder is in use (re-entered from a hook, or shared between threads?)"); }

/* call-seq: Pith::Encoder.new(default: nil, dictionary: nil, max_depth: 1000)
 * Called again on an encoder, it takes the new options and starts a new stream. */
static VALUE enc_initialize(int argc, VALUE *argv, VALUE self) {
    VALUE opts;
    rb_scan_args(argc, argv, ":", &opts);
    pith_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    apply_options(e, self, opts);
    e->streaming = false;
    return self;
}

/* Run an encoding body; any exception (ours, a hook's, NoMemoryError) leaves
 * the encoder usable. A stream whose frame failed keeps its complete frames
 * (#to_s) but takes no more values until #reset. */
typedef struct encode_call {
    VALUE self;
    pith_rb_encoder *e;
    VALUE obj;
    bool stream;
    VALUE opts; /* Qnil, or options for this call only */
} encode_call;

static VALUE encode_call_body(VALUE p) {
    encode_call *c = (encode_call *)p;
    apply_options(c->e, c->self, c->opts);
    return c->stream ? push_frame(c->e, c->obj) : encode_buffer(c->e, c->obj);
}

static VALUE run_encode(encode_call *c) {
    int state = 0;
    VALUE v = rb_protect(encode_call_body, (VALUE)c, &state);
    if (state) {
        reset(c->e);
        if (c->stream) c->e->stream_failed = true;
        else c->e->streaming = false;
        rb_jump_tag(state);
    }
    return v;
}

/* call-seq: encoder.encode(obj) -> String  (one complete buffer; the encoder is reusable) */
static VALUE enc_encode(VALUE self, VALUE obj) {
    pith_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    encode_call c = {self, e, obj, false, Qnil};
    return run_encode(&c);
}

/* call-seq: encoder << obj -> encoder  (append obj to a stream of values sharing tables) */
static VALUE enc_push(VALUE self, VALUE obj) {
    pith_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    if (e->streaming && e->stream_failed)
        rb_raise(eEncodeError, "an earlier value of this stream failed to encode: call #reset to start a new stream");
    encode_call c = {self, e, obj, true, Qnil};
    run_encode(&c);
    return self;
}

/* call-seq: encoder.to_s -> String  (the stream so far: header and every complete frame) */
static VALUE enc_to_s(VALUE self) {
    pith_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    if (!e->streaming) {
        begin(e, PITH_WRITE_STREAM);
        e->streaming = true;
        e->stream_failed = false;
        pith_writer_data(e->w, &e->stream_good_len);
    }
    size_t len;
    const uint8_t *data = pith_writer_data(e->w, &len);
    return rb_enc_str_new((const char *)data, (long)e->stream_good_len, pith_binary);
}

/* call-seq: encoder.reset -> encoder  (start a new stream) */
static VALUE enc_reset(VALUE self) {
    pith_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    e->streaming = false;
    e->stream_failed = false;
    return self;
}

/* The current Ractor's default encoder, or a fresh one when it is busy
 * (a hook calling Pith.dump). */
static VALUE default_encoder(void) {
    VALUE enc;
    if (!rb_ractor_local_storage_value_lookup(default_encoder_key, &enc) || NIL_P(enc)) {
        enc = enc_alloc(cEncoder);
        rb_ractor_local_storage_value_set(default_encoder_key, enc);
    }
    if (get_encoder(enc)->busy) enc = enc_alloc(cEncoder);
    return enc;
}

static VALUE run_encode_value(VALUE p) { return run_encode((encode_call *)p); }

/*
 * call-seq: Pith.dump(obj, default: nil, dictionary: nil, max_depth: 1000) -> String
 *
 * Encode +obj+ canonically. Returns a binary (ASCII-8BIT) String.
 */
static VALUE pith_s_dump(int argc, VALUE *argv, VALUE mod) {
    VALUE obj, opts;
    rb_scan_args(argc, argv, "1:", &obj, &opts);
    VALUE self = default_encoder();
    pith_rb_encoder *e = get_encoder(self);
    encode_call c = {self, e, obj, false, opts};
    if (NIL_P(opts)) return run_encode(&c);
    /* Options apply to this call only; restore them whatever happens. */
    VALUE saved_default = e->default_proc, saved_dict = e->dictionary;
    uint32_t saved_depth = e->max_depth;
    int state = 0;
    VALUE out = rb_protect(run_encode_value, (VALUE)&c, &state);
    RB_OBJ_WRITE(self, &e->default_proc, saved_default);
    RB_OBJ_WRITE(self, &e->dictionary, saved_dict);
    e->max_depth = saved_depth;
    if (state) rb_jump_tag(state);
    return out;
}

void pith_rb_init_encoder(void) {
    id_to_pith = rb_intern("to_pith");
    id_call = rb_intern("call");
    id_utc_p = rb_intern("utc?");
    id_subsec = rb_intern("subsec");
    id_denominator = rb_intern("denominator");
    id_default = rb_intern("default");
    id_dictionary = rb_intern("dictionary");
    id_max_depth = rb_intern("max_depth");
    default_encoder_key = rb_ractor_local_storage_value_newkey();

    cEncoder = rb_define_class_under(mPith, "Encoder", rb_cObject);
    rb_define_alloc_func(cEncoder, enc_alloc);
    rb_define_method(cEncoder, "initialize", enc_initialize, -1);
    rb_define_method(cEncoder, "encode", enc_encode, 1);
    rb_define_method(cEncoder, "<<", enc_push, 1);
    rb_define_method(cEncoder, "write", enc_push, 1);
    rb_define_method(cEncoder, "to_s", enc_to_s, 0);
    rb_define_method(cEncoder, "reset", enc_reset, 0);
    rb_define_module_function(mPith, "dump", pith_s_dump, -1);
}
