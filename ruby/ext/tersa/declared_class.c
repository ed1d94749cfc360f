/*
 * declared_class.c - classes declared with Tersa.register_class (lib/tersa/declared.rb
 * checks the arguments and calls Tersa::Native.declare_class).
 *
 * An instance of a declared class is written as a map whose keys are the
 * declared names, in order, and whose values are what the readers return:
 * exactly the bytes of Tersa.dump of the equivalent Hash. The values go on
 * the encoder's value stack as the pairs of a shaped map, so the encoder's
 * own loop writes them (nested objects, Arrays and Hashes included) and no
 * Hash is built. The keys are known when the class is declared, so their
 * shape index in the current buffer is kept with the declaration and the
 * keys are hashed once per buffer, not once per object.
 *
 * Declarations are Ractor-local, like register_type's: a Hash {Class =>
 * declaration} per Ractor. Only the instance's own class is looked up
 * (subclasses declare themselves).
 */
#include "declared_class.h"

#include <string.h>

static rb_ractor_local_key_t declared_key;
/* Set once any Ractor declares a class: until then the encoder pays nothing. */
static volatile bool any_declared;
static ID id_compare_by_identity;

typedef struct declared {
    VALUE klass;
    long n;
    VALUE *keys;    /* the map's keys as given (frozen Strings or Symbols), for error paths */
    ID *readers;
    tersa_key *kbuf; /* the keys' UTF-8 bytes (copies in `bytes`) */
    char *bytes;
    /* The keys' shape index in the buffer one encoder is writing: valid while
     * that encoder, its writer, its shape generation (bumped at every buffer
     * and sync frame) and its GC count are unchanged. An encoder freed and
     * another made at its address starts after the collection that freed it,
     * so with a higher GC count. */
    const tersa_rb_encoder *enc;
    const tersa_writer *w;
    uint32_t gen;
    size_t gc_count;
    uint32_t shape;
} declared;

static void declared_mark(void *p) {
    declared *d = (declared *)p;
    rb_gc_mark_movable(d->klass);
    for (long i = 0; i < d->n; i++) rb_gc_mark_movable(d->keys[i]);
}

static void declared_compact(void *p) {
    declared *d = (declared *)p;
    d->klass = rb_gc_location(d->klass);
    for (long i = 0; i < d->n; i++) d->keys[i] = rb_gc_location(d->keys[i]);
}

static void declared_free(void *p) {
    declared *d = (declared *)p;
    xfree(d->keys);
    xfree(d->readers);
    xfree(d->kbuf);
    xfree(d->bytes);
    xfree(d);
}

static size_t declared_memsize(const void *p) {
    const declared *d = (const declared *)p;
    size_t bytes = 0;
    for (long i = 0; i < d->n; i++) bytes += d->kbuf[i].len;
    return sizeof(*d) + (size_t)d->n * (sizeof(VALUE) + sizeof(ID) + sizeof(tersa_key)) + bytes;
}

static const rb_data_type_t declared_type = {
    .wrap_struct_name = "Tersa::DeclaredClass",
    .function = {.dmark = declared_mark, .dfree = declared_free, .dsize = declared_memsize, .dcompact = declared_compact},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

/* The current Ractor's declarations, or Qnil when it has none and `create` is false. */
static VALUE registry(bool create) {
    VALUE reg;
    if (!rb_ractor_local_storage_value_lookup(declared_key, &reg) || NIL_P(reg)) {
        if (!create) return Qnil;
        reg = rb_hash_new();
        rb_funcall(reg, id_compare_by_identity, 0);
        rb_ractor_local_storage_value_set(declared_key, reg);
    }
    return reg;
}

/* ==========================================================================
 * Encoding
 * ========================================================================== */

static bool open_declared(tersa_rb_encoder *e, declared *d, VALUE obj, uint32_t depth, uint32_t hooks) {
    long n = d->n;
    tersa_rb_enc_frame_open(e, depth, obj);
    long self = e->stack->len;
    tersa_rb_stack_push(e->stack, obj);
    /* Every slot holds a VALUE (nil) before any reader runs: they may run the GC. */
    long base = tersa_rb_stack_grow(e->stack, 2 * n);
    for (long i = 0; i < n; i++) e->stack->ptr[base + 2 * i] = d->keys[i];
    for (long i = 0; i < n; i++) {
        /* An exception leaves through the encode call's rb_protect, which resets the encoder. */
        VALUE v = rb_funcallv(obj, d->readers[i], 0, NULL);
        e->stack->ptr[base + 2 * i + 1] = v;
    }
    if (d->enc == e && d->w == e->w && d->gen == e->gen && d->gc_count == e->gc_count) {
        CHECK_W(tersa_write_map_shape(e->w, d->shape));
    } else {
        /* Keys checked distinct and valid UTF-8 when the class was declared. */
        CHECK_W(tersa_write_map_begin_utf8(e->w, d->kbuf, (size_t)n));
        uint32_t shape = tersa_rb_enc_note_shape(e);
        if (shape != TERSA_NO_INDEX) {
            d->enc = e;
            d->w = e->w;
            d->gen = e->gen;
            d->gc_count = e->gc_count;
            d->shape = shape;
        }
    }
    return tersa_rb_enc_map_frame(e, &e->frames[depth], FRAME_MAP, n, hooks, self, depth);
}

bool tersa_rb_enc_declared(tersa_rb_encoder *e, VALUE obj, uint32_t depth, uint32_t hooks, bool *opened) {
    if (!any_declared) return false;
    VALUE reg = registry(false);
    if (NIL_P(reg)) return false;
    VALUE spec = rb_hash_lookup2(reg, rb_obj_class(obj), Qundef);
    if (spec == Qundef) return false;
    /* A reader may declare the class again: this declaration stays alive until obj is opened. */
    *opened = open_declared(e, (declared *)RTYPEDDATA_DATA(spec), obj, depth, hooks);
    RB_GC_GUARD(spec);
    return true;
}

/* ==========================================================================
 * Declaring
 * ========================================================================== */

/* The text of a key (a String or a Symbol), which must be valid UTF-8. */
static VALUE key_text(VALUE key, bool *symbol) {
    *symbol = SYMBOL_P(key);
    VALUE s = *symbol ? rb_sym2str(key) : key;
    if (!RB_TYPE_P(s, T_STRING)) rb_raise(rb_eTypeError, "keys must be Strings or Symbols, not %" PRIsVALUE, rb_obj_class(key));
    int idx = RB_ENCODING_GET(s);
    if ((idx != tersa_utf8_index && idx != tersa_usascii_index) || rb_enc_str_coderange(s) == ENC_CODERANGE_BROKEN)
        rb_raise(rb_eArgError, "key %" PRIsVALUE " is not valid UTF-8", rb_inspect(key));
    return s;
}

/*
 * call-seq: Tersa::Native.declare_class(klass, keys, readers) -> nil
 *
 * Write instances of +klass+ as maps of +keys+ (Strings or Symbols, distinct
 * Tersa values) to the values of the +readers+ (Symbols, called without
 * arguments), in order. Tersa.register_class checks and normalizes its
 * arguments, then calls this.
 */
static VALUE native_declare_class(VALUE mod, VALUE klass, VALUE keys, VALUE readers) {
    if (!RB_TYPE_P(klass, T_CLASS)) rb_raise(rb_eTypeError, "expected a Class, got %" PRIsVALUE, rb_obj_class(klass));
    Check_Type(keys, T_ARRAY);
    Check_Type(readers, T_ARRAY);
    long n = RARRAY_LEN(keys);
    if (RARRAY_LEN(readers) != n) rb_raise(rb_eArgError, "%ld keys but %ld readers", n, RARRAY_LEN(readers));

    declared *d;
    VALUE spec = TypedData_Make_Struct(rb_cObject, declared, &declared_type, d);
    d->klass = klass;
    d->keys = TERSA_RB_ALLOC_N(VALUE, n ? n : 1);
    for (long i = 0; i < n; i++) d->keys[i] = Qnil;
    d->readers = TERSA_RB_ALLOC_N(ID, n ? n : 1);
    d->kbuf = TERSA_RB_ALLOC_N(tersa_key, n ? n : 1);
    memset(d->kbuf, 0, sizeof(tersa_key) * (size_t)(n ? n : 1)); /* memsize reads every entry, filled or not */
    d->n = n; /* marked from here on: every key is nil or set */
    size_t total = 0;
    for (long i = 0; i < n; i++) {
        bool symbol;
        total += (size_t)RSTRING_LEN(key_text(RARRAY_AREF(keys, i), &symbol));
    }
    d->bytes = TERSA_RB_ALLOC_N(char, total ? total : 1);
    size_t at = 0;
    for (long i = 0; i < n; i++) {
        VALUE key = RARRAY_AREF(keys, i), reader = RARRAY_AREF(readers, i);
        if (!SYMBOL_P(reader)) rb_raise(rb_eTypeError, "readers must be Symbols, not %" PRIsVALUE, rb_obj_class(reader));
        bool symbol;
        VALUE text = key_text(key, &symbol);
        size_t len = (size_t)RSTRING_LEN(text);
        if (at + len > total) rb_raise(rb_eArgError, "keys changed while being declared");
        memcpy(d->bytes + at, RSTRING_PTR(text), len);
        d->kbuf[i].ptr = d->bytes + at;
        d->kbuf[i].len = len;
        d->kbuf[i].symbol = symbol;
        at += len;
        for (long j = 0; j < i; j++)
            if (d->kbuf[j].symbol == symbol && d->kbuf[j].len == len && memcmp(d->kbuf[j].ptr, d->kbuf[i].ptr, len) == 0)
                rb_raise(rb_eArgError, "key %" PRIsVALUE " appears twice", rb_inspect(key));
        RB_OBJ_WRITE(spec, &d->keys[i], symbol ? key : rb_str_new_frozen(key));
        d->readers[i] = rb_sym2id(reader);
    }
    RB_OBJ_WRITE(spec, &d->klass, klass);
    rb_hash_aset(registry(true), klass, spec);
    any_declared = true;
    return Qnil;
}

/* call-seq: Tersa::Native.undeclare_class(klass) -> true or false (whether it was declared) */
static VALUE native_undeclare_class(VALUE mod, VALUE klass) {
    VALUE reg = registry(false);
    if (NIL_P(reg)) return Qfalse;
    return NIL_P(rb_hash_delete(reg, klass)) ? Qfalse : Qtrue;
}

/* call-seq: Tersa::Native.declared_class(klass) -> [keys, readers] or nil */
static VALUE native_declared_class(VALUE mod, VALUE klass) {
    VALUE reg = registry(false);
    VALUE spec = NIL_P(reg) ? Qundef : rb_hash_lookup2(reg, klass, Qundef);
    if (spec == Qundef) return Qnil;
    declared *d = (declared *)RTYPEDDATA_DATA(spec);
    VALUE keys = rb_ary_new_from_values(d->n, d->keys), readers = rb_ary_new_capa(d->n);
    for (long i = 0; i < d->n; i++) rb_ary_push(readers, ID2SYM(d->readers[i]));
    return rb_assoc_new(keys, readers);
}

void tersa_rb_init_declared(void) {
    declared_key = rb_ractor_local_storage_value_newkey();
    id_compare_by_identity = rb_intern("compare_by_identity");
    VALUE native = rb_define_module_under(mTersa, "Native");
    rb_define_module_function(native, "declare_class", native_declare_class, 3);
    rb_define_module_function(native, "undeclare_class", native_undeclare_class, 1);
    rb_define_module_function(native, "declared_class", native_declared_class, 1);
}
