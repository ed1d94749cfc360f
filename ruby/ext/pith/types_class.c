/*
 * types_class.c - application extension types, Pith::Timestamp, Pith::Ext,
 * and Pith::Native.deep_copy.
 *
 * The registry is Ractor-local: each Ractor registers its own types, so no
 * mutable state is shared between Ractors.
 */
#include "common.h"

VALUE cTimestamp, cExt;
static rb_ractor_local_key_t registry_key;
static ID id_packer, id_unpacker;

/* The registry of the current Ractor: a Hash {Class => [type, packer], type => unpacker}. */
static VALUE registry(bool create) {
    VALUE reg;
    if (!rb_ractor_local_storage_value_lookup(registry_key, &reg) || NIL_P(reg)) {
        if (!create) return Qnil;
        reg = rb_hash_new();
        rb_ractor_local_storage_value_set(registry_key, reg);
    }
    return reg;
}

VALUE pith_rb_ext_packer(VALUE klass, uint32_t *type) {
    VALUE reg = registry(false);
    if (NIL_P(reg) || RHASH_SIZE(reg) == 0) return Qnil;
    VALUE entry = rb_hash_lookup2(reg, klass, Qnil);
    if (NIL_P(entry)) return Qnil;
    *type = NUM2UINT(RARRAY_AREF(entry, 0));
    return RARRAY_AREF(entry, 1);
}

bool pith_rb_has_unpackers(void) {
    VALUE reg = registry(false);
    return !NIL_P(reg) && RHASH_SIZE(reg) != 0;
}

VALUE pith_rb_ext_unpacker(uint32_t type) {
    VALUE reg = registry(false);
    if (NIL_P(reg)) return Qnil;
    return rb_hash_lookup2(reg, UINT2NUM(type), Qnil);
}

/*
 * call-seq: Pith.register_type(type, klass, packer:, unpacker:) -> nil
 *
 * Encode instances of +klass+ as extension +type+ (0..65535): +packer+ is
 * called with the object and returns a String of bytes; decoding calls
 * +unpacker+ with those bytes. Registrations are per Ractor.
 */
static VALUE pith_register_type(int argc, VALUE *argv, VALUE self) {
    VALUE type, klass, opts;
    rb_scan_args(argc, argv, "2:", &type, &klass, &opts);
    if (!RB_TYPE_P(klass, T_CLASS)) rb_raise(rb_eTypeError, "expected a Class, got %" PRIsVALUE, rb_obj_class(klass));
    unsigned long t = NUM2ULONG(type);
    if (t > PITH_MAX_EXT_TYPE) rb_raise(rb_eRangeError, "extension types are 0..65535, not %lu", t);
    VALUE ids[2] = {id_packer, id_unpacker}, procs[2] = {Qundef, Qundef};
    if (NIL_P(opts)) rb_raise(rb_eArgError, "missing keywords: packer, unpacker");
    rb_get_kwargs(opts, (ID *)ids, 2, 0, procs);
    for (int i = 0; i < 2; i++)
        if (!rb_respond_to(procs[i], rb_intern("call")))
            rb_raise(rb_eTypeError, "%s must respond to #call", i ? "unpacker" : "packer");
    VALUE reg = registry(true);
    VALUE entry = rb_ary_new_from_args(2, UINT2NUM((unsigned)t), procs[0]);
    rb_hash_aset(reg, klass, entry);
    rb_hash_aset(reg, UINT2NUM((unsigned)t), procs[1]);
    return Qnil;
}

/* ==========================================================================
 * Pith::Native.deep_copy - the "floor" of decoding: build the same objects
 * again (new Hash, Array and String for every node; keys, symbols and
 * immediates shared, as Pith's decoder shares keys).
 * ========================================================================== */

static VALUE deep_copy(VALUE obj, int depth);

static int copy_pair_slow(VALUE key, VALUE value, VALUE pairs) {
    rb_ary_push(pairs, key);
    rb_ary_push(pairs, deep_copy(value, 1));
    return ST_CONTINUE;
}

/* Pairs of the Hash being copied, gathered on the C stack (which the GC
 * scans) so no temporary Ruby object is made for them. */
typedef struct copy_pairs {
    VALUE *buf;
    long len;
    int depth;
} copy_pairs;

static int copy_pair(VALUE key, VALUE value, VALUE arg) {
    copy_pairs *p = (copy_pairs *)arg;
    p->buf[p->len++] = key;
    p->buf[p->len++] = deep_copy(value, p->depth + 1);
    return ST_CONTINUE;
}

#define COPY_STACK_PAIRS 64

static VALUE deep_copy(VALUE obj, int depth) {
    if (depth > 10000) rb_raise(rb_eArgError, "nesting too deep");
    if (RB_SPECIAL_CONST_P(obj)) return obj;
    switch (BUILTIN_TYPE(obj)) {
    case T_STRING: {
        VALUE s = rb_str_new(RSTRING_PTR(obj), RSTRING_LEN(obj));
        rb_enc_copy(s, obj);
        return s;
    }
    case T_ARRAY: {
        long n = RARRAY_LEN(obj);
        VALUE a = rb_ary_new_capa(n);
        for (long i = 0; i < n; i++) rb_ary_push(a, deep_copy(RARRAY_AREF(obj, i), depth + 1));
        return a;
    }
    case T_HASH: {
        long n = (long)RHASH_SIZE(obj);
        if (n > COPY_STACK_PAIRS) {
            VALUE h = rb_hash_new();
            VALUE pairs = rb_ary_new_capa(2 * n);
            rb_hash_foreach(obj, copy_pair_slow, pairs);
            rb_hash_bulk_insert(2 * n, RARRAY_CONST_PTR(pairs), h);
            RB_GC_GUARD(pairs);
            return h;
        }
        VALUE buf[2 * COPY_STACK_PAIRS];
        copy_pairs p = {buf, 0, depth};
        rb_hash_foreach(obj, copy_pair, (VALUE)&p);
        VALUE h = rb_hash_new();
        rb_hash_bulk_insert(p.len, buf, h);
        return h;
    }
    case T_FLOAT:
        return DBL2NUM(RFLOAT_VALUE(obj));
    default:
        return obj;
    }
}

static VALUE pith_deep_copy(VALUE self, VALUE obj) { return deep_copy(obj, 0); }

void pith_rb_init_types(void) {
    registry_key = rb_ractor_local_storage_value_newkey();
    id_packer = rb_intern("packer");
    id_unpacker = rb_intern("unpacker");
    rb_define_module_function(mPith, "register_type", pith_register_type, -1);

    /* A timestamp Ruby's Time cannot hold exactly: a floating (zone-less) wall
     * time. zone is :utc, :offset or :floating; offset is in minutes. */
    cTimestamp = rb_struct_define_under(mPith, "Timestamp", "seconds", "nanos", "zone", "offset", NULL);
    /* An extension value of a type with no registered unpacker. */
    cExt = rb_struct_define_under(mPith, "Ext", "type", "data", NULL);

    VALUE mNative = rb_define_module_under(mPith, "Native");
    rb_define_module_function(mNative, "deep_copy", pith_deep_copy, 1);
}
