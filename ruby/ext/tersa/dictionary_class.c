/*
 * dictionary_class.c - Tersa::Dictionary: pre-shared strings and shapes.
 *
 * A dictionary is immutable once built, so its objects are frozen and
 * shareable between Ractors.
 */
#include "common.h"

VALUE cDictionary;

static void dict_free(void *p) { tersa_dict_free((tersa_dict *)p); }

static size_t dict_memsize(const void *p) {
    size_t len = 0;
    if (p) tersa_dict_serialized((const tersa_dict *)p, &len);
    return len * 4;
}

static const rb_data_type_t dict_type = {
    .wrap_struct_name = "Tersa::Dictionary",
    .function = {.dmark = NULL, .dfree = dict_free, .dsize = dict_memsize, .dcompact = NULL},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED | RUBY_TYPED_FROZEN_SHAREABLE,
};

const tersa_dict *tersa_rb_dict(VALUE dictionary) {
    if (!rb_typeddata_is_kind_of(dictionary, &dict_type))
        rb_raise(rb_eTypeError, "expected a Tersa::Dictionary, got %" PRIsVALUE, rb_obj_class(dictionary));
    return (const tersa_dict *)RTYPEDDATA_DATA(dictionary);
}

static VALUE wrap(tersa_dict *d) {
    VALUE obj = TypedData_Wrap_Struct(cDictionary, &dict_type, d);
    rb_obj_freeze(obj);
    return obj;
}

/* A String or Symbol as an owned, frozen UTF-8 String (converted if needed):
 * later Ruby code cannot change or free what the C arrays point at. */
static VALUE owned_text(VALUE k, const char *what, bool *symbol) {
    *symbol = false;
    if (SYMBOL_P(k)) {
        k = rb_sym2str(k);
        *symbol = true;
    } else if (!RB_TYPE_P(k, T_STRING)) {
        rb_raise(rb_eTypeError, "dictionary %s must be Strings%s, got %" PRIsVALUE, what,
                 what[0] == 'k' ? " or Symbols" : "", rb_obj_class(k));
    }
    if (ENCODING_GET(k) != tersa_utf8_index && ENCODING_GET(k) != tersa_usascii_index)
        return rb_str_export_to_enc(k, tersa_utf8);
    return rb_str_new_frozen(k);
}

/*
 * call-seq: Tersa::Dictionary.new(strings: [], shapes: []) -> dictionary
 *
 * +strings+: Strings (each at least 2 bytes, distinct); +shapes+: Arrays of
 * String or Symbol keys (distinct shapes, no repeated key).
 */
static VALUE dict_s_new(int argc, VALUE *argv, VALUE klass) {
    VALUE opts;
    rb_scan_args(argc, argv, ":", &opts);
    ID ids[2] = {rb_intern("strings"), rb_intern("shapes")};
    VALUE vals[2] = {Qundef, Qundef};
    if (!NIL_P(opts)) rb_get_kwargs(opts, ids, 0, 2, vals);
    VALUE strings = vals[0] == Qundef ? rb_ary_new() : rb_Array(vals[0]);
    VALUE shapes = vals[1] == Qundef ? rb_ary_new() : rb_Array(vals[1]);

    /* First everything is copied into objects this call owns (user code such
     * as #to_a or #to_str runs only here), then read with no Ruby code. */
    VALUE texts = rb_ary_new(), symbols = rb_ary_new(), lens_ary = rb_ary_new();
    long ns = RARRAY_LEN(strings);
    for (long i = 0; i < ns && i < RARRAY_LEN(strings); i++) {
        VALUE s = RARRAY_AREF(strings, i);
        if (SYMBOL_P(s)) rb_raise(rb_eTypeError, "dictionary strings must be Strings");
        bool symbol;
        rb_ary_push(texts, owned_text(s, "strings", &symbol));
        rb_ary_push(symbols, Qfalse);
    }
    ns = RARRAY_LEN(texts);
    for (long i = 0; i < RARRAY_LEN(shapes); i++) {
        VALUE shape = rb_Array(RARRAY_AREF(shapes, i));
        long n = 0;
        for (long j = 0; j < RARRAY_LEN(shape); j++, n++) {
            bool symbol;
            rb_ary_push(texts, owned_text(RARRAY_AREF(shape, j), "keys", &symbol));
            rb_ary_push(symbols, symbol ? Qtrue : Qfalse);
        }
        rb_ary_push(lens_ary, LONG2NUM(n));
    }
    long nsh = RARRAY_LEN(lens_ary), total = RARRAY_LEN(texts);
    VALUE keys_buf = 0, lens_buf = 0;
    tersa_key *keys = ALLOCV_N(tersa_key, keys_buf, total + 1);
    size_t *lens = ALLOCV_N(size_t, lens_buf, nsh + 1);
    for (long i = 0; i < total; i++) {
        VALUE t = RARRAY_AREF(texts, i);
        keys[i].ptr = RSTRING_PTR(t);
        keys[i].len = (size_t)RSTRING_LEN(t);
        keys[i].symbol = RARRAY_AREF(symbols, i) == Qtrue;
    }
    for (long i = 0; i < nsh; i++) lens[i] = (size_t)NUM2LONG(RARRAY_AREF(lens_ary, i));
    tersa_error err;
    tersa_dict *d = tersa_dict_new(NULL, keys, (size_t)ns, keys + ns, lens, (size_t)nsh, &err);
    ALLOCV_END(keys_buf);
    ALLOCV_END(lens_buf);
    RB_GC_GUARD(texts);
    if (!d) {
        if (err.code == TERSA_ERR_NOMEM) rb_memerror();
        rb_raise(rb_eArgError, "invalid dictionary: %s", err.message);
    }
    return wrap(d);
}

/* The builder is freed by rb_ensure, whatever a sample raises. */
typedef struct build_args {
    tersa_dict_builder *builder;
    VALUE buffers;
    tersa_dict_build_options opts;
    tersa_dict *dict;
    tersa_error err;
    long failed; /* index of the buffer that did not decode, or -1 */
} build_args;

static VALUE build_body(VALUE p) {
    build_args *a = (build_args *)p;
    long n = RARRAY_LEN(a->buffers);
    for (long i = 0; i < n; i++) {
        VALUE b = rb_ary_entry(a->buffers, i);
        StringValue(b);
        if (!tersa_dict_builder_add_buffer(a->builder, RSTRING_PTR(b), (size_t)RSTRING_LEN(b), &a->err)) {
            a->failed = i;
            return Qnil;
        }
        RB_GC_GUARD(b);
    }
    a->dict = tersa_dict_builder_finish(a->builder, &a->opts, &a->err);
    return Qnil;
}

static VALUE build_ensure(VALUE p) {
    tersa_dict_builder_free(((build_args *)p)->builder);
    return Qnil;
}

/*
 * call-seq: Tersa::Dictionary.build_from_buffers(buffers, min_count, max_strings, max_shapes) -> dictionary
 *
 * The C core's dictionary builder over encoded samples (Tersa.dump output, one
 * sample each); Tersa::Dictionary.build calls it. A count of 0 takes the core's
 * default.
 */
static VALUE dict_s_build_from_buffers(VALUE klass, VALUE buffers, VALUE min_count, VALUE max_strings,
                                       VALUE max_shapes) {
    (void)klass;
    Check_Type(buffers, T_ARRAY);
    build_args a = {.buffers = buffers, .failed = -1};
    a.opts.min_count = NUM2SIZET(min_count);
    a.opts.max_strings = NUM2SIZET(max_strings);
    a.opts.max_shapes = NUM2SIZET(max_shapes);
    a.builder = tersa_dict_builder_new(NULL);
    if (!a.builder) rb_raise(rb_eNoMemError, "out of memory");
    rb_ensure(build_body, (VALUE)&a, build_ensure, (VALUE)&a);
    if (a.failed >= 0) rb_raise(eDecodeError, "sample %ld is not a Tersa buffer: %s", a.failed, a.err.message);
    if (!a.dict) rb_raise(rb_eArgError, "cannot build the dictionary: %s", a.err.message);
    return wrap(a.dict);
}

/* call-seq: Tersa::Dictionary.load(bytes) -> dictionary  (a serialization from #to_s) */
static VALUE dict_s_load(VALUE klass, VALUE bytes) {
    StringValue(bytes);
    tersa_error err;
    tersa_dict *d = tersa_dict_parse(NULL, RSTRING_PTR(bytes), (size_t)RSTRING_LEN(bytes), &err);
    RB_GC_GUARD(bytes);
    if (!d) {
        if (err.code == TERSA_ERR_NOMEM) rb_memerror();
        rb_raise(eDecodeError, "not a Tersa dictionary: %s", err.message);
    }
    return wrap(d);
}

/* The 64-bit id carried in buffers encoded with this dictionary. */
static VALUE dict_id(VALUE self) { return ULL2NUM(tersa_dict_id(tersa_rb_dict(self))); }

/* The serialization (binary String), for Tersa::Dictionary.load. */
static VALUE dict_to_s(VALUE self) {
    size_t len;
    const uint8_t *data = tersa_dict_serialized(tersa_rb_dict(self), &len);
    return rb_enc_str_new((const char *)data, (long)len, tersa_binary);
}

static VALUE key_value(tersa_key k) {
    VALUE s = rb_enc_str_new(k.ptr, (long)k.len, tersa_utf8);
    return k.symbol ? rb_str_intern(s) : rb_str_freeze(s);
}

static VALUE dict_strings(VALUE self) {
    const tersa_dict *d = tersa_rb_dict(self);
    size_t n = tersa_dict_string_count(d);
    VALUE out = rb_ary_new_capa((long)n);
    for (size_t i = 0; i < n; i++) rb_ary_push(out, key_value(tersa_dict_string(d, i)));
    return out;
}

static VALUE dict_shapes(VALUE self) {
    const tersa_dict *d = tersa_rb_dict(self);
    size_t n = tersa_dict_shape_count(d);
    VALUE out = rb_ary_new_capa((long)n);
    for (size_t i = 0; i < n; i++) {
        size_t nk;
        const tersa_key *keys = tersa_dict_shape(d, i, &nk);
        VALUE shape = rb_ary_new_capa((long)nk);
        for (size_t j = 0; j < nk; j++) rb_ary_push(shape, key_value(keys[j]));
        rb_ary_push(out, shape);
    }
    return out;
}

void tersa_rb_init_dictionary(void) {
    cDictionary = rb_define_class_under(mTersa, "Dictionary", rb_cObject);
    rb_undef_alloc_func(cDictionary);
    rb_define_singleton_method(cDictionary, "new", dict_s_new, -1);
    rb_define_singleton_method(cDictionary, "load", dict_s_load, 1);
    rb_define_singleton_method(cDictionary, "build_from_buffers", dict_s_build_from_buffers, 4);
    rb_define_method(cDictionary, "id", dict_id, 0);
    rb_define_method(cDictionary, "to_s", dict_to_s, 0);
    rb_define_method(cDictionary, "strings", dict_strings, 0);
    rb_define_method(cDictionary, "shapes", dict_shapes, 0);
}
