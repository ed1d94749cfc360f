/*
 * types_class.c - application extension types, Tersa::Timestamp and Tersa::Ext.
 *
 * The registry is Ractor-local: each Ractor registers its own types, so no
 * mutable state is shared between Ractors.
 */
#include "common.h"

VALUE cTimestamp, cExt;
static rb_ractor_local_key_t registry_key;
static ID id_packer, id_unpacker;

/* The registry of the current Ractor: a Hash {Class => [type, packer], type => [unpacker, Class]}. */
static VALUE registry(bool create) {
    VALUE reg;
    if (!rb_ractor_local_storage_value_lookup(registry_key, &reg) || NIL_P(reg)) {
        if (!create) return Qnil;
        reg = rb_hash_new();
        rb_ractor_local_storage_value_set(registry_key, reg);
    }
    return reg;
}

VALUE tersa_rb_ext_packer(VALUE klass, uint32_t *type) {
    VALUE reg = registry(false);
    if (NIL_P(reg) || RHASH_SIZE(reg) == 0) return Qnil;
    VALUE entry = rb_hash_lookup2(reg, klass, Qnil);
    if (NIL_P(entry)) return Qnil;
    *type = NUM2UINT(RARRAY_AREF(entry, 0));
    return RARRAY_AREF(entry, 1);
}

bool tersa_rb_has_unpackers(void) {
    VALUE reg = registry(false);
    return !NIL_P(reg) && RHASH_SIZE(reg) != 0;
}

VALUE tersa_rb_ext_unpacker(uint32_t type) {
    VALUE reg = registry(false);
    if (NIL_P(reg)) return Qnil;
    VALUE entry = rb_hash_lookup2(reg, UINT2NUM(type), Qnil);
    return NIL_P(entry) ? Qnil : RARRAY_AREF(entry, 0);
}

/*
 * call-seq: Tersa.register_type(type, klass, packer:, unpacker:) -> nil
 *
 * Encode instances of +klass+ as extension +type+ (0..65279; 0xFF00..0xFFFF
 * are the well-known types of SPEC 5.8): +packer+ is
 * called with the object and returns a String of bytes; decoding calls
 * +unpacker+ with those bytes. Registrations are per Ractor.
 *
 * A type or a class is registered once: registering +klass+ again under the
 * same type replaces its packer and unpacker, but a type held by another
 * class, or a class held by another type, raises ArgumentError (call
 * Tersa.unregister_type first). Data written for one class is never read
 * back as another's.
 */
static VALUE tersa_register_type(int argc, VALUE *argv, VALUE self) {
    VALUE type, klass, opts;
    rb_scan_args(argc, argv, "2:", &type, &klass, &opts);
    if (!RB_TYPE_P(klass, T_CLASS)) rb_raise(rb_eTypeError, "expected a Class, got %" PRIsVALUE, rb_obj_class(klass));
    unsigned long t = NUM2ULONG(type);
    if (t > TERSA_MAX_EXT_TYPE) rb_raise(rb_eRangeError, "extension types are 0..65535, not %lu", t);
    if (t > TERSA_EXT_APP_MAX)
        rb_raise(rb_eArgError,
                 "extension types 0xFF00..0xFFFF (65280..65535) are reserved for well-known types; "
                 "applications use 0..65279, not %lu",
                 t);
    VALUE ids[2] = {id_packer, id_unpacker}, procs[2] = {Qundef, Qundef};
    if (NIL_P(opts)) rb_raise(rb_eArgError, "missing keywords: packer, unpacker");
    rb_get_kwargs(opts, (ID *)ids, 2, 0, procs);
    for (int i = 0; i < 2; i++)
        if (!rb_respond_to(procs[i], rb_intern("call")))
            rb_raise(rb_eTypeError, "%s must respond to #call", i ? "unpacker" : "packer");
    VALUE reg = registry(true);
    VALUE by_type = rb_hash_lookup2(reg, UINT2NUM((unsigned)t), Qnil);
    if (!NIL_P(by_type) && RARRAY_AREF(by_type, 1) != klass)
        rb_raise(rb_eArgError, "extension type %lu is registered to %" PRIsVALUE ": Tersa.unregister_type(%lu) first", t,
                 RARRAY_AREF(by_type, 1), t);
    VALUE by_class = rb_hash_lookup2(reg, klass, Qnil);
    if (!NIL_P(by_class) && NUM2ULONG(RARRAY_AREF(by_class, 0)) != t)
        rb_raise(rb_eArgError, "%" PRIsVALUE " is registered as extension type %lu: Tersa.unregister_type(%lu) first",
                 klass, NUM2ULONG(RARRAY_AREF(by_class, 0)), NUM2ULONG(RARRAY_AREF(by_class, 0)));
    rb_hash_aset(reg, klass, rb_ary_new_from_args(2, UINT2NUM((unsigned)t), procs[0]));
    rb_hash_aset(reg, UINT2NUM((unsigned)t), rb_ary_new_from_args(2, procs[1], klass));
    return Qnil;
}

/*
 * call-seq: Tersa.unregister_type(type) -> true or false
 *
 * Forget extension +type+ and its class (true if it was registered): its
 * data decodes to Tersa::Ext again, and the class is no longer encodable.
 */
static VALUE tersa_unregister_type(VALUE self, VALUE type) {
    VALUE reg = registry(false);
    if (NIL_P(reg)) return Qfalse;
    VALUE entry = rb_hash_delete(reg, UINT2NUM(NUM2UINT(type)));
    if (NIL_P(entry)) return Qfalse;
    rb_hash_delete(reg, RARRAY_AREF(entry, 1));
    return Qtrue;
}

void tersa_rb_init_types(void) {
    registry_key = rb_ractor_local_storage_value_newkey();
    id_packer = rb_intern("packer");
    id_unpacker = rb_intern("unpacker");
    rb_define_module_function(mTersa, "register_type", tersa_register_type, -1);
    rb_define_module_function(mTersa, "unregister_type", tersa_unregister_type, 1);

    /* A timestamp Ruby's Time cannot hold exactly: a floating (zone-less) wall
     * time. zone is :utc, :offset or :floating; offset is in minutes. */
    cTimestamp = rb_struct_define_under(mTersa, "Timestamp", "seconds", "nanos", "zone", "offset", NULL);
    /* An extension value of a type with no registered unpacker. */
    cExt = rb_struct_define_under(mTersa, "Ext", "type", "data", NULL);
}
