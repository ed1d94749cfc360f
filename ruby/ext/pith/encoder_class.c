/*
 * encoder_class.c - Pith::Encoder and Pith.dump: Ruby objects -> the C writer.
 */
#include "encoder.h"

#include <string.h>

VALUE cEncoder;
static ID id_to_pith, id_call, id_utc_p, id_subsec, id_default, id_dictionary, id_max_depth, id_denominator,
    id_sync_frames, id_sync_bytes, id_negative_p;
static rb_ractor_local_key_t default_encoder_key;

/* ==========================================================================
 * State
 * ========================================================================== */

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
    pith_rb_enc_drop_shapes(e);
}

static void enc_free(void *p) {
    pith_rb_encoder *e = (pith_rb_encoder *)p;
    pith_writer_free(e->w);
    xfree(e->pool);
    xfree(e->kbuf);
    xfree(e->frames);
    xfree(e);
}

static size_t enc_memsize(const void *p) {
    const pith_rb_encoder *e = (const pith_rb_encoder *)p;
    size_t len = 0;
    if (e->w) pith_writer_data(e->w, &len);
    return sizeof(*e) + e->pool_cap * sizeof(VALUE) + e->kbuf_cap * sizeof(pith_key) +
           e->frames_cap * sizeof(enc_frame) + len;
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

/* Paths longer than twice this show their two ends. */
#define PATH_ENDS 32

static inline bool is_container(VALUE v) { return RB_TYPE_P(v, T_ARRAY) || RB_TYPE_P(v, T_HASH) || pith_rb_is_map(v); }

static int nested_pair(VALUE key, VALUE value, VALUE nested) {
    if (!is_container(key) && !is_container(value)) return ST_CONTINUE;
    *(bool *)nested = true;
    return ST_STOP;
}

/* Containers up to this many items, none a container, are shown whole in paths. */
#define LABEL_ITEMS 16

/* A map key as paths show it: inspected, but a nested or long container only
 * named, since inspect recurses as deep as the key goes. */
static VALUE key_label(VALUE key) {
    long n = 0;
    bool nested = false;
    if (RB_TYPE_P(key, T_ARRAY)) {
        n = RARRAY_LEN(key);
        for (long i = 0; i < n && i < LABEL_ITEMS && !nested; i++) nested = is_container(RARRAY_AREF(key, i));
    } else if (RB_TYPE_P(key, T_HASH)) {
        n = (long)RHASH_SIZE(key);
        if (n <= LABEL_ITEMS) rb_hash_foreach(key, nested_pair, (VALUE)&nested);
    } else if (pith_rb_is_map(key)) {
        VALUE pairs = pith_rb_map_pairs(key);
        n = NIL_P(pairs) ? 0 : RARRAY_LEN(pairs);
        for (long i = 0; i < n && i < LABEL_ITEMS && !nested; i++)
            nested = is_container(RARRAY_AREF(RARRAY_AREF(pairs, i), 0)) ||
                     is_container(RARRAY_AREF(RARRAY_AREF(pairs, i), 1));
    }
    if (nested || n > LABEL_ITEMS) return rb_sprintf("#<%" PRIsVALUE " of %ld>", rb_obj_class(key), n);
    return rb_inspect(key);
}

/* The path to the value being encoded inside `depth` open containers. */
static VALUE path_string(pith_rb_encoder *e, uint32_t depth) {
    VALUE s = rb_str_new_cstr("$");
    for (uint32_t i = 0; i < depth; i++) {
        if (depth > 2 * PATH_ENDS && i == PATH_ENDS) {
            rb_str_catf(s, "...(%u levels)...", depth - 2 * PATH_ENDS);
            i = depth - PATH_ENDS;
        }
        const enc_frame *f = &e->frames[i];
        if (f->kind == FRAME_ARRAY || f->index < 0)
            rb_str_catf(s, "[%ld]", f->index);
        else
            rb_str_catf(s, "[%" PRIsVALUE "]", key_label(e->stack->ptr[f->base + 1 + 2 * f->index]));
    }
    return s;
}

void pith_rb_enc_reset(pith_rb_encoder *e) {
    e->stack->len = 0;
    e->hooks = 0;
    e->busy = false;
}

void pith_rb_enc_fail_writer(pith_rb_encoder *e, uint32_t depth) {
    VALUE path = path_string(e, depth);
    pith_rb_enc_reset(e);
    pith_rb_raise_writer(e->w, path);
}

void pith_rb_enc_fail_value(pith_rb_encoder *e, uint32_t depth, const char *what, VALUE obj) {
    VALUE path = path_string(e, depth);
    VALUE klass = rb_obj_class(obj);
    pith_rb_enc_reset(e);
    rb_raise(eEncodeError, "%s %" PRIsVALUE " at %" PRIsVALUE, what, klass, path);
}

/* Call Ruby code (hooks, conversions); if it raises, reset and re-raise. */
static VALUE protected_call(pith_rb_encoder *e, VALUE (*fn)(VALUE), VALUE arg) {
    int state = 0;
    VALUE result = rb_protect(fn, arg, &state);
    if (state) {
        pith_rb_enc_reset(e);
        rb_jump_tag(state);
    }
    return result;
}

static VALUE to_utf8(VALUE str) { return rb_str_encode(str, rb_enc_from_encoding(pith_utf8), 0, Qnil); }

/* A String of another encoding as UTF-8; one that cannot be converted is an
 * EncodeError naming the encoding and the path, like any unsupported value. */
VALUE pith_rb_enc_to_utf8(pith_rb_encoder *e, VALUE str, uint32_t depth) {
    int state = 0;
    VALUE u = rb_protect(to_utf8, str, &state);
    if (!state) return u;
    VALUE err = rb_errinfo();
    if (!rb_obj_is_kind_of(err, rb_eEncodingError)) {
        pith_rb_enc_reset(e);
        rb_jump_tag(state);
    }
    rb_set_errinfo(Qnil);
    VALUE path = path_string(e, depth);
    pith_rb_enc_reset(e);
    rb_raise(eEncodeError, "cannot convert a %s String to UTF-8 (%" PRIsVALUE ") at %" PRIsVALUE,
             rb_enc_name(rb_enc_get(str)), rb_obj_as_string(err), path);
}

/* ==========================================================================
 * Values
 * ========================================================================== */

PITH_RB_NOINLINE static void encode_string(pith_rb_encoder *e, VALUE str, uint32_t depth) {
    int idx = RB_ENCODING_GET_INLINED(str);
    if (PITH_RB_LIKELY(idx == pith_utf8_index || idx == pith_usascii_index)) {
        int cr = ENC_CODERANGE(str);
        if (PITH_RB_UNLIKELY(cr != ENC_CODERANGE_7BIT && cr != ENC_CODERANGE_VALID)) {
            cr = rb_enc_str_coderange(str);
            if (cr == ENC_CODERANGE_BROKEN) pith_rb_enc_fail_value(e, depth, "invalid UTF-8 in", str);
        }
        CHECK_W(pith_write_string_utf8(e->w, RSTRING_PTR(str), (size_t)RSTRING_LEN(str)));
    } else if (idx == pith_binary_index) {
        CHECK_W(pith_write_binary(e->w, RSTRING_PTR(str), (size_t)RSTRING_LEN(str)));
    } else {
        VALUE u = pith_rb_enc_to_utf8(e, str, depth);
        CHECK_W(pith_write_string(e->w, RSTRING_PTR(u), (size_t)RSTRING_LEN(u)));
        RB_GC_GUARD(u);
    }
}

static void encode_symbol(pith_rb_encoder *e, VALUE sym, uint32_t depth) {
    VALUE s = rb_sym2str(sym);
    int idx = RB_ENCODING_GET_INLINED(s);
    if (PITH_RB_UNLIKELY(idx != pith_utf8_index && idx != pith_usascii_index)) s = pith_rb_enc_to_utf8(e, s, depth);
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
    if (!ok) pith_rb_enc_fail_writer(e, depth);
}

static void encode_time(pith_rb_encoder *e, VALUE t, uint32_t depth) {
    struct timespec ts = rb_time_timespec(t);
    /* Ruby keeps rational subseconds; anything finer than a nanosecond would be lost. */
    VALUE sub = rb_funcall(t, id_subsec, 0);
    if (!FIXNUM_P(sub)) {
        VALUE den = rb_funcall(sub, id_denominator, 0);
        if (!FIXNUM_P(den) || 1000000000L % FIX2LONG(den) != 0)
            pith_rb_enc_fail_value(e, depth, "sub-nanosecond precision in", t);
    }
    pith_timestamp p;
    p.seconds = (int64_t)ts.tv_sec;
    p.nanos = (uint32_t)ts.tv_nsec;
    if (RTEST(rb_funcall(t, id_utc_p, 0))) {
        p.zone = PITH_ZONE_UTC;
        p.offset = 0;
    } else {
        long off = NUM2LONG(rb_time_utc_offset(t));
        if (off % 60 != 0) pith_rb_enc_fail_value(e, depth, "a UTC offset with seconds in", t);
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
    else pith_rb_enc_fail_value(e, depth, "zone must be :utc, :offset or :floating in", t);
    long minutes = p.zone == PITH_ZONE_OFFSET ? NUM2LONG(off) : 0;
    if (minutes < -1439 || minutes > 1439) pith_rb_enc_fail_value(e, depth, "offset outside -1439..1439 minutes in", t);
    p.offset = (int16_t)minutes;
    CHECK_W(pith_write_timestamp(e->w, &p));
}

/* A cycle among the open containers and `container` (about to open at
 * `depth`): report the first repetition. Cycles are looked for only once the
 * nesting is too deep, which every cycle reaches, so deep data pays nothing. */
static void raise_if_cycle(pith_rb_encoder *e, uint32_t depth, VALUE container) {
    st_table *seen = st_init_numtable();
    for (uint32_t i = 0; i <= depth; i++) {
        VALUE c = i < depth ? e->frames[i].container : container;
        if (st_insert(seen, (st_data_t)c, 0)) {
            st_free_table(seen);
            pith_rb_enc_fail_value(e, i, "circular reference to a", c);
        }
    }
    st_free_table(seen);
}

void pith_rb_enc_too_deep(pith_rb_encoder *e, uint32_t depth, VALUE container) {
    raise_if_cycle(e, depth, container);
    VALUE path = path_string(e, depth);
    pith_rb_enc_reset(e);
    rb_raise(eEncodeError, "nesting deeper than %u at %" PRIsVALUE, e->max_depth, path);
}

/* Open an Array at `depth`; false if it is empty (then it is written whole). */
static inline bool open_array(pith_rb_encoder *e, VALUE ary, uint32_t depth, uint32_t hooks) {
    enc_frame *f = pith_rb_enc_frame_open(e, depth, ary);
    long n = RARRAY_LEN(ary);
    CHECK_W(pith_write_array_begin(e->w, (size_t)n));
    if (n == 0) {
        CHECK_W(pith_write_array_end(e->w));
        return false;
    }
    f->kind = FRAME_ARRAY;
    f->n = n;
    f->hooks = hooks;
    f->base = e->stack->len;
    pith_rb_stack_push(e->stack, ary);
    return true;
}

/* Close the container of frame `f` (at `depth`), releasing what stood for it. */
static inline void close_frame(pith_rb_encoder *e, enc_frame *f, uint32_t depth) {
    CHECK_W(f->kind == FRAME_ARRAY ? pith_write_array_end(e->w) : pith_write_map_end(e->w));
    e->stack->len = f->base - f->hooks;
    e->hooks -= f->hooks;
}

static VALUE call_to_pith(VALUE obj) { return rb_funcall(obj, id_to_pith, 0); }

typedef struct call_args {
    VALUE proc, arg;
} call_args;

static VALUE call_proc(VALUE p) {
    call_args *a = (call_args *)p;
    return rb_funcall(a->proc, id_call, 1, a->arg);
}

/* Write an object of another class, or return what a hook made of it
 * (pushed on the value stack and counted in e->hooks), to be written in its
 * place; Qundef when it is written. */
PITH_RB_NOINLINE static VALUE encode_other(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
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
    VALUE packer = pith_rb_ext_packer(klass, &type);
    if (!NIL_P(packer)) {
        call_args a = {packer, obj};
        pith_rb_enc_drop_shapes(e); /* Ruby code may run GC and move or free objects */
        VALUE bytes = protected_call(e, call_proc, (VALUE)&a);
        if (!RB_TYPE_P(bytes, T_STRING)) pith_rb_enc_fail_value(e, depth, "packer did not return a String for", obj);
        CHECK_W(pith_write_ext(e->w, type, RSTRING_PTR(bytes), (size_t)RSTRING_LEN(bytes)));
        RB_GC_GUARD(bytes);
        return Qundef;
    }
    if (klass == cExt) {
        VALUE data = rb_struct_aref(obj, INT2FIX(1));
        StringValue(data);
        CHECK_W(pith_write_ext(e->w, NUM2UINT(rb_struct_aref(obj, INT2FIX(0))), RSTRING_PTR(data),
                               (size_t)RSTRING_LEN(data)));
        return Qundef;
    }
    VALUE replacement = Qundef;
    if (rb_respond_to(obj, id_to_pith)) {
        pith_rb_enc_drop_shapes(e);
        replacement = protected_call(e, call_to_pith, obj);
    } else if (!NIL_P(e->default_proc)) {
        call_args a = {e->default_proc, obj};
        pith_rb_enc_drop_shapes(e);
        replacement = protected_call(e, call_proc, (VALUE)&a);
    }
    if (replacement == Qundef) pith_rb_enc_fail_value(e, depth, "unsupported type", obj);
    if (rb_obj_class(replacement) == klass && !RB_TYPE_P(replacement, T_HASH) && !RB_TYPE_P(replacement, T_ARRAY) &&
        !RB_TYPE_P(replacement, T_STRING))
        pith_rb_enc_fail_value(e, depth, "the hook returned another unsupported", obj);
    /* The replacement takes obj's place (and path), but a hook that returns
     * objects needing hooks again counts as nesting, or A -> B -> A loops. */
    if (depth + e->hooks + 1 > e->max_depth) pith_rb_enc_fail_value(e, depth, "hooks nest too deeply at", obj);
    pith_rb_stack_push(e->stack, replacement);
    e->hooks++;
    return replacement;
}

PITH_RB_NOINLINE static void encode_fixnum(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    CHECK_W(pith_write_int(e->w, FIX2LONG(obj)));
}

PITH_RB_NOINLINE static void encode_float(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    CHECK_W(pith_write_double(e->w, pith_rb_float_value(obj)));
}

PITH_RB_NOINLINE static void encode_special(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    if (NIL_P(obj)) CHECK_W(pith_write_null(e->w));
    else if (obj == Qtrue) CHECK_W(pith_write_bool(e->w, true));
    else if (obj == Qfalse) CHECK_W(pith_write_bool(e->w, false));
    else if (SYMBOL_P(obj)) encode_symbol(e, obj, depth);
    else pith_rb_enc_fail_value(e, depth, "unsupported type", obj);
}

/* Write obj if it is a value of its own (no container, no hook) and return
 * 0; else return its builtin type. The writers stay out of line, which keeps
 * the loops' registers few. */
static inline int write_scalar(pith_rb_encoder *e, VALUE obj, uint32_t depth) {
    if (FIXNUM_P(obj)) {
        encode_fixnum(e, obj, depth);
        return 0;
    }
    if (RB_FLONUM_P(obj)) {
        encode_float(e, obj, depth);
        return 0;
    }
    if (RB_SPECIAL_CONST_P(obj)) {
        encode_special(e, obj, depth);
        return 0;
    }
    int type = BUILTIN_TYPE(obj);
    switch (type) {
    case T_STRING:
        encode_string(e, obj, depth);
        return 0;
    case T_FLOAT:
        encode_float(e, obj, depth);
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

/* Write the items of the innermost open container `f` (its items are at
 * `depth`) up to one that is not a scalar, which goes to *obj, returning its
 * builtin type; 0 when the container has no items left. The writers touch
 * neither the value stack nor the frames, so pointers into them hold during
 * a run. */
static int write_items(pith_rb_encoder *e, enc_frame *f, uint32_t depth, VALUE *obj) {
    long n = f->n;
    int type;
    if (f->kind == FRAME_ARRAY) {
        VALUE ary = f->container;
        for (long i = f->index + 1; i < n; i++) {
            if (PITH_RB_UNLIKELY(i >= RARRAY_LEN(ary))) {
                pith_rb_enc_reset(e);
                rb_raise(eEncodeError, "array modified during encoding");
            }
            f->index = i;
            VALUE v = RARRAY_AREF(ary, i);
            if ((type = write_scalar(e, v, depth))) {
                *obj = v;
                return type;
            }
        }
        return 0;
    }
    const VALUE *pairs = e->stack->ptr + f->base + 1;
    if (f->kind == FRAME_MAP) {
        for (long i = f->index + 1; i < n; i++) {
            f->index = i;
            VALUE v = pairs[2 * i + 1];
            if ((type = write_scalar(e, v, depth))) {
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
 * until none is open (0) or an item needs more (a hook, a Pith::Map): then
 * its builtin type, the item in *obj and *depth updated. */
static int run_frames(pith_rb_encoder *e, uint32_t *depth_io, VALUE *obj) {
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
            depth += pith_rb_enc_open_map(e, item, true, depth, 0);
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
static void encode_root(pith_rb_encoder *e, VALUE obj) {
    uint32_t depth = 0;   /* open containers */
    uint32_t pending = 0; /* hook replacements standing for obj */
    int type = write_scalar(e, obj, depth);
    for (;;) {
        /* obj, inside `depth` containers, is a container or needs a hook (of that builtin type). */
        if (type) {
            bool opened;
            if (type == T_HASH) {
                opened = pith_rb_enc_open_map(e, obj, true, depth, pending);
            } else if (type == T_ARRAY) {
                opened = open_array(e, obj, depth, pending);
            } else if (pith_rb_is_map(obj)) {
                opened = pith_rb_enc_open_map(e, obj, false, depth, pending);
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
        if (PITH_RB_UNLIKELY(pending)) {
            e->hooks -= pending;
            e->stack->len -= pending;
            pending = 0;
        }
        if (!(type = run_frames(e, &depth, &obj))) return;
    }
}

/* ==========================================================================
 * Entry points
 * ========================================================================== */

static void begin(pith_rb_encoder *e, uint32_t flags) {
    const pith_dict *dict = NIL_P(e->dictionary) ? NULL : pith_rb_dict(e->dictionary);
    pith_writer_set_sync(e->w, e->sync_frames, e->sync_bytes);
    if (!pith_writer_start(e->w, dict, flags)) rb_memerror();
    pith_writer_set_max_depth(e->w, e->max_depth);
    pith_rb_enc_drop_shapes(e);
    e->gc_count = rb_gc_count();
}

/* Encode one value as a complete buffer and return it as a binary String. */
static VALUE encode_buffer(pith_rb_encoder *e, VALUE obj) {
    e->busy = true;
    e->streaming = false;
    begin(e, 0);
    encode_root(e, obj);
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
    pith_rb_enc_drop_shapes(e);
    uint32_t depth = 0;
    CHECK_W(pith_write_frame_begin(e->w));
    /* A sync frame starts the shape table again: cached indices name shapes
     * this frame has not written. Dropped above already, but for another
     * reason, which may go. */
    if (pith_writer_frame_synced(e->w)) pith_rb_enc_drop_shapes(e);
    encode_root(e, obj);
    CHECK_W(pith_write_frame_end(e->w));
    pith_writer_data(e->w, &e->stream_good_len);
    e->busy = false;
    return Qnil;
}

/* A sync option: nil or 0 (off), or a positive Integer. */
static uint64_t sync_option(VALUE v, const char *name) {
    if (NIL_P(v)) return 0;
    if (!RB_INTEGER_TYPE_P(v)) rb_raise(rb_eTypeError, "%s must be an Integer", name);
    if (RTEST(rb_funcall(v, id_negative_p, 0))) rb_raise(rb_eArgError, "%s must not be negative", name);
    return NUM2ULL(v);
}

/* Options are checked in full before any is applied: a bad one changes
 * nothing. The sync options only where streams are written (Encoder.new). */
static void apply_options(pith_rb_encoder *e, VALUE self, VALUE opts, bool streams) {
    if (NIL_P(opts)) return;
    ID ids[5] = {id_default, id_dictionary, id_max_depth, id_sync_frames, id_sync_bytes};
    VALUE vals[5] = {Qundef, Qundef, Qundef, Qundef, Qundef};
    rb_get_kwargs(opts, ids, 0, streams ? 5 : 3, vals);
    uint64_t sync_frames = vals[3] == Qundef ? e->sync_frames : sync_option(vals[3], "sync_frames");
    uint64_t sync_bytes = vals[4] == Qundef ? e->sync_bytes : sync_option(vals[4], "sync_bytes");
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
    e->sync_frames = sync_frames;
    e->sync_bytes = sync_bytes;
}

PITH_RB_NORETURN(static void raise_busy(void));
static void raise_busy(void) { rb_raise(eError, "encoder is in use (re-entered from a hook, or shared between threads?)"); }

/* call-seq: Pith::Encoder.new(default: nil, dictionary: nil, max_depth: 1000, sync_frames: 0, sync_bytes: 0)
 * Called again on an encoder, it takes the new options and starts a new stream. */
static VALUE enc_initialize(int argc, VALUE *argv, VALUE self) {
    VALUE opts;
    rb_scan_args(argc, argv, ":", &opts);
    pith_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    apply_options(e, self, opts, true);
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
    apply_options(c->e, c->self, c->opts, false);
    return c->stream ? push_frame(c->e, c->obj) : encode_buffer(c->e, c->obj);
}

static VALUE run_encode(encode_call *c) {
    int state = 0;
    VALUE v = rb_protect(encode_call_body, (VALUE)c, &state);
    if (state) {
        pith_rb_enc_reset(c->e);
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

/* call-seq: encoder.sync -> encoder
 * Make the next value's frame a sync frame, where a consumer can join the
 * stream (SPEC 2.3). The first frame of a stream always is one. Called from
 * a hook while a value is being appended, it is for the frame after that
 * value's: it only sets a flag of the writer, so it is safe while busy. */
static VALUE enc_sync(VALUE self) {
    pith_rb_encoder *e = get_encoder(self);
    /* A stream not begun yet starts with a sync frame anyway. */
    if (e->streaming) pith_writer_sync(e->w);
    return self;
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
    id_sync_frames = rb_intern("sync_frames");
    id_sync_bytes = rb_intern("sync_bytes");
    id_negative_p = rb_intern("negative?");
    default_encoder_key = rb_ractor_local_storage_value_newkey();

    cEncoder = rb_define_class_under(mPith, "Encoder", rb_cObject);
    rb_define_alloc_func(cEncoder, enc_alloc);
    rb_define_method(cEncoder, "initialize", enc_initialize, -1);
    rb_define_method(cEncoder, "encode", enc_encode, 1);
    rb_define_method(cEncoder, "<<", enc_push, 1);
    rb_define_method(cEncoder, "write", enc_push, 1);
    rb_define_method(cEncoder, "to_s", enc_to_s, 0);
    rb_define_method(cEncoder, "sync", enc_sync, 0);
    rb_define_method(cEncoder, "reset", enc_reset, 0);
    rb_define_module_function(mPith, "dump", pith_s_dump, -1);
}
