/*
 * encoder_errors.c - the encoder's errors: the path to the value that
 * failed, and the raisers (each resets the encoder first, so it stays usable).
 */
#include "encoder.h"

/* Paths longer than twice this show their two ends. */
#define PATH_ENDS 32

static inline bool is_container(VALUE v) { return RB_TYPE_P(v, T_ARRAY) || RB_TYPE_P(v, T_HASH) || tersa_rb_is_map(v); }

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
    } else if (tersa_rb_is_map(key)) {
        VALUE pairs = tersa_rb_map_pairs(key);
        n = NIL_P(pairs) ? 0 : RARRAY_LEN(pairs);
        for (long i = 0; i < n && i < LABEL_ITEMS && !nested; i++)
            nested = is_container(RARRAY_AREF(RARRAY_AREF(pairs, i), 0)) ||
                     is_container(RARRAY_AREF(RARRAY_AREF(pairs, i), 1));
    }
    if (nested || n > LABEL_ITEMS) return rb_sprintf("#<%" PRIsVALUE " of %ld>", rb_obj_class(key), n);
    return rb_inspect(key);
}

/* The path to the value being encoded inside `depth` open containers. */
static VALUE path_string(tersa_rb_encoder *e, uint32_t depth) {
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

void tersa_rb_enc_reset(tersa_rb_encoder *e) {
    e->stack->len = 0;
    e->hooks = 0;
    e->busy = false;
}

void tersa_rb_enc_fail_writer(tersa_rb_encoder *e, uint32_t depth) {
    VALUE path = path_string(e, depth);
    tersa_rb_enc_reset(e);
    tersa_rb_raise_writer(e->w, path);
}

void tersa_rb_enc_fail_value(tersa_rb_encoder *e, uint32_t depth, const char *what, VALUE obj) {
    VALUE path = path_string(e, depth);
    VALUE klass = rb_obj_class(obj);
    tersa_rb_enc_reset(e);
    rb_raise(eEncodeError, "%s %" PRIsVALUE " at %" PRIsVALUE, what, klass, path);
}

void tersa_rb_enc_fail_value_hint(tersa_rb_encoder *e, uint32_t depth, const char *what, VALUE obj, const char *hint) {
    VALUE path = path_string(e, depth);
    VALUE klass = rb_obj_class(obj);
    tersa_rb_enc_reset(e);
    rb_raise(eEncodeError, "%s %" PRIsVALUE " at %" PRIsVALUE " (%s)", what, klass, path, hint);
}

static VALUE to_utf8(VALUE str) { return rb_str_encode(str, rb_enc_from_encoding(tersa_utf8), 0, Qnil); }

/* A String of another encoding as UTF-8; one that cannot be converted is an
 * EncodeError naming the encoding and the path, like any unsupported value. */
VALUE tersa_rb_enc_to_utf8(tersa_rb_encoder *e, VALUE str, uint32_t depth) {
    int state = 0;
    VALUE u = rb_protect(to_utf8, str, &state);
    if (!state) return u;
    VALUE err = rb_errinfo();
    if (!rb_obj_is_kind_of(err, rb_eEncodingError)) {
        tersa_rb_enc_reset(e);
        rb_jump_tag(state);
    }
    rb_set_errinfo(Qnil);
    VALUE path = path_string(e, depth);
    tersa_rb_enc_reset(e);
    rb_raise(eEncodeError, "cannot convert a %s String to UTF-8 (%" PRIsVALUE ") at %" PRIsVALUE,
             rb_enc_name(rb_enc_get(str)), rb_obj_as_string(err), path);
}

/* A cycle among the open containers and `container` (about to open at
 * `depth`): report the first repetition, in one line that names the value
 * and where it comes back (the wording Python and TypeScript use).
 * Cycles are looked for only once the nesting is too deep, which every
 * cycle reaches, so deep data pays nothing. */
static void raise_if_cycle(tersa_rb_encoder *e, uint32_t depth, VALUE container) {
    st_table *seen = st_init_numtable();
    for (uint32_t i = 0; i <= depth; i++) {
        VALUE c = i < depth ? e->frames[i].container : container;
        st_data_t first = i;
        if (st_lookup(seen, (st_data_t)c, &first)) {
            st_free_table(seen);
            VALUE at = path_string(e, (uint32_t)first), closes = path_string(e, i);
            tersa_rb_enc_reset(e);
            rb_raise(eEncodeError, "circular reference: the value at %" PRIsVALUE " contains itself at %" PRIsVALUE, at, closes);
        }
        st_insert(seen, (st_data_t)c, (st_data_t)i);
    }
    st_free_table(seen);
}

void tersa_rb_enc_too_deep(tersa_rb_encoder *e, uint32_t depth, VALUE container) {
    raise_if_cycle(e, depth, container);
    VALUE path = path_string(e, depth);
    tersa_rb_enc_reset(e);
    rb_raise(eEncodeError, "nesting deeper than %u at %" PRIsVALUE, e->max_depth, path);
}

