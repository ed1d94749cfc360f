/*
 * dictionary_class.c - Pith::Dictionary: pre-shared strings and shapes.
 *
 * A dictionary is immutable once built, so its objects are frozen and
 * shareable between Ractors.
 */
#include "common.h"

VALUE cDictionary;

static void dict_free(void *p) { pith_dict_free((pith_dict *)p); }

static size_t dict_memsize(const void *p) {
    size_t len = 0;
    if (p) pith_dict_serialized((const pith_dict *)p, &len);
    return len * 4;
}

static const rb_data_type_t dict_type = {
    .wrap_struct_name = "Pith::Dictionary",
    .function = {.dmark = NULL, .dfree = dict_free, .dsize = dict_memsize, .dcompact = NULL},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED | RUBY_TYPED_FROZEN_SHAREABLE,
};

const pith_dict *pith_rb_dict(VALUE dictionary) {
    if (!rb_typeddata_is_kind_of(dictionary, &dict_type))
        rb_raise(rb_eTypeError, "expected a Pith::Dictionary, got %" PRIsVALUE, rb_obj_class(dictionary));
    return (const pith_dict *)RTYPEDDATA_DATA(dictionary);
}

static VALUE wrap(pith_dict *d) {
    VALUE obj = TypedData_Wrap_Struct(cDictionary, &dict_type, d);
    rb_obj_freeze(obj);
    return obj;
}

/* A String or Symbol as a key: UTF-8 bytes, converted if needed. */
static pith_key key_of(VALUE k, const char *what) {
    bool symbol = false;
    if (SYMBOL_P(k)) {
        k = rb_sym2str(k);
        symbol = true;
    } else if (!RB_TYPE_P(k, T_STRING)) {
        rb_raise(rb_eTypeError, "dictionary %s must be Strings%s, got %" PRIsVALUE, what,
                 what[0] == 'k' ? " or Symbols" : "", rb_obj_class(k));
    }
    if (ENCODING_GET(k) != pith_utf8_index && ENCODING_GET(k) != pith_usascii_index)
        k = rb_str_export_to_enc(k, pith_utf8);
    pith_key key = {RSTRING_PTR(k), (size_t)RSTRING_LEN(k), symbol};
    return key;
}

/*
 * call-seq: Pith::Dictionary.new(strings: [], shapes: []) -> dictionary
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
    /* Keep converted strings alive while the C arrays point at them. */
    VALUE keep = rb_ary_new();
    long ns = RARRAY_LEN(strings), nsh = RARRAY_LEN(shapes), nk = 0;
    for (long i = 0; i < nsh; i++) nk += RARRAY_LEN(rb_Array(RARRAY_AREF(shapes, i)));
    pith_key *skeys = PITH_RB_ALLOC_N(pith_key, ns + 1);
    pith_key *kkeys = PITH_RB_ALLOC_N(pith_key, nk + 1);
    size_t *lens = PITH_RB_ALLOC_N(size_t, nsh + 1);
    long k = 0;
    for (long i = 0; i < ns; i++) {
        VALUE s = RARRAY_AREF(strings, i);
        if (SYMBOL_P(s)) rb_raise(rb_eTypeError, "dictionary strings must be Strings");
        skeys[i] = key_of(s, "strings");
        rb_ary_push(keep, s);
    }
    for (long i = 0; i < nsh; i++) {
        VALUE shape = rb_Array(RARRAY_AREF(shapes, i));
        rb_ary_push(keep, shape);
        lens[i] = (size_t)RARRAY_LEN(shape);
        for (long j = 0; j < RARRAY_LEN(shape); j++) kkeys[k++] = key_of(RARRAY_AREF(shape, j), "keys");
    }
    pith_error err;
    pith_dict *d = pith_dict_new(NULL, skeys, (size_t)ns, kkeys, lens, (size_t)nsh, &err);
    xfree(skeys);
    xfree(kkeys);
    xfree(lens);
    RB_GC_GUARD(keep);
    if (!d) {
        if (err.code == PITH_ERR_NOMEM) rb_memerror();
        rb_raise(rb_eArgError, "invalid dictionary: %s", err.message);
    }
    return wrap(d);
}

/* call-seq: Pith::Dictionary.load(bytes) -> dictionary  (a serialization from #to_s) */
static VALUE dict_s_load(VALUE klass, VALUE bytes) {
    StringValue(bytes);
    pith_error err;
    pith_dict *d = pith_dict_parse(NULL, RSTRING_PTR(bytes), (size_t)RSTRING_LEN(bytes), &err);
    RB_GC_GUARD(bytes);
    if (!d) {
        if (err.code == PITH_ERR_NOMEM) rb_memerror();
        rb_raise(eDecodeError, "not a Pith dictionary: %s", err.message);
    }
    return wrap(d);
}

/* The 64-bit id carried in buffers encoded with this dictionary. */
static VALUE dict_id(VALUE self) { return ULL2NUM(pith_dict_id(pith_rb_dict(self))); }

/* The serialization (binary String), for Pith::Dictionary.load. */
static VALUE dict_to_s(VALUE self) {
    size_t len;
    const uint8_t *data = pith_dict_serialized(pith_rb_dict(self), &len);
    return rb_enc_str_new((const char *)data, (long)len, pith_binary);
}

static VALUE key_value(pith_key k) {
    VALUE s = rb_enc_str_new(k.ptr, (long)k.len, pith_utf8);
    return k.symbol ? rb_str_intern(s) : rb_str_freeze(s);
}

static VALUE dict_strings(VALUE self) {
    const pith_dict *d = pith_rb_dict(self);
    size_t n = pith_dict_string_count(d);
    VALUE out = rb_ary_new_capa((long)n);
    for (size_t i = 0; i < n; i++) rb_ary_push(out, key_value(pith_dict_string(d, i)));
    return out;
}

static VALUE dict_shapes(VALUE self) {
    const pith_dict *d = pith_rb_dict(self);
    size_t n = pith_dict_shape_count(d);
    VALUE out = rb_ary_new_capa((long)n);
    for (size_t i = 0; i < n; i++) {
        size_t nk;
        const pith_key *keys = pith_dict_shape(d, i, &nk);
        VALUE shape = rb_ary_new_capa((long)nk);
        for (size_t j = 0; j < nk; j++) rb_ary_push(shape, key_value(keys[j]));
        rb_ary_push(out, shape);
    }
    return out;
}

void pith_rb_init_dictionary(void) {
    cDictionary = rb_define_class_under(mPith, "Dictionary", rb_cObject);
    rb_undef_alloc_func(cDictionary);
    rb_define_singleton_method(cDictionary, "new", dict_s_new, -1);
    rb_define_singleton_method(cDictionary, "load", dict_s_load, 1);
    rb_define_method(cDictionary, "id", dict_id, 0);
    rb_define_method(cDictionary, "to_s", dict_to_s, 0);
    rb_define_method(cDictionary, "strings", dict_strings, 0);
    rb_define_method(cDictionary, "shapes", dict_shapes, 0);
}
