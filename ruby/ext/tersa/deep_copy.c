/*
 * deep_copy.c - Tersa::Native.deep_copy, the benchmark's "floor" for decoding:
 * the same objects built again from an existing value, with the decoder's own
 * means (template Hashes, shared keys, strings made with their coderange
 * known), so the gap between it and Tersa.load is the cost of reading the bytes.
 *
 * Like the decoder it does not recurse: an open container is its source and
 * the link to the enclosing one on the decoder's value stack, followed (for a
 * Hash) by the source pairs and then by the copies made so far.
 */
#include "decoder.h"

#include "hash_fast.h"

/* Hashes up to this size are built from a template, as decoded shapes are. */
#define TEMPLATE_MAX 64

typedef struct copy_call {
    VALUE self;
    tersa_rb_decoder *d;
    VALUE obj;
    size_t hashed, budget; /* the decoder's hashing account, restored afterwards */
} copy_call;

static int collect_pair(VALUE key, VALUE value, VALUE arg) {
    VALUE **out = (VALUE **)arg;
    *(*out)++ = key;
    *(*out)++ = value;
    return ST_CONTINUE;
}

/* A copy of a leaf, or Qundef for a non-empty Array or Hash. */
static VALUE copy_leaf(VALUE obj) {
    if (RB_SPECIAL_CONST_P(obj)) return obj;
    switch (BUILTIN_TYPE(obj)) {
    case T_STRING: {
        VALUE s = rb_str_new(RSTRING_PTR(obj), RSTRING_LEN(obj));
        RB_ENCODING_SET_INLINED(s, RB_ENCODING_GET_INLINED(obj));
        ENC_CODERANGE_SET(s, ENC_CODERANGE(obj));
        return s;
    }
    case T_ARRAY:
        return RARRAY_LEN(obj) ? Qundef : rb_ary_new();
    case T_HASH:
        return RHASH_SIZE(obj) ? Qundef : rb_hash_new();
    case T_FLOAT:
        return tersa_rb_float_new(tersa_rb_float_value(obj));
    default:
        return obj;
    }
}

/* The copy of the Hash `src` from its pairs and the copies of its values. */
static VALUE finish_hash(VALUE self, tersa_rb_decoder *d, long pairs, long copies, long n) {
    tersa_rb_stack *s = d->stack;
    if (n <= TEMPLATE_MAX && tersa_rb_hash_fast) {
        VALUE keys[TEMPLATE_MAX];
        for (long i = 0; i < n; i++) keys[i] = s->ptr[pairs + 2 * i];
        VALUE t = tersa_rb_template_for(self, d, keys, n, 0);
        VALUE h = t == Qundef ? Qundef : tersa_rb_hash_from_template(t, s->ptr + copies, n);
        if (h != Qundef) return h;
    }
    VALUE h = rb_hash_new();
    for (long i = 0; i < n; i++) rb_hash_aset(h, s->ptr[pairs + 2 * i], s->ptr[copies + i]);
    return h;
}

static VALUE copy_body(VALUE arg) {
    copy_call *c = (copy_call *)arg;
    tersa_rb_decoder *d = c->d;
    tersa_rb_stack *s = d->stack;
    long top = -1; /* where the innermost open container's entries start */
    VALUE obj = c->obj;
    for (;;) {
        VALUE v = copy_leaf(obj);
        if (v == Qundef) {
            /* Open it: source, link, and a Hash's pairs (read without running Ruby code). */
            long base = s->len;
            tersa_rb_stack_push(s, obj);
            tersa_rb_stack_push(s, LONG2FIX(top));
            if (RB_TYPE_P(obj, T_HASH)) {
                long n = (long)RHASH_SIZE(obj);
                long at = tersa_rb_stack_grow_raw(s, 2 * n);
                if (!tersa_rb_hash_pairs(obj, s->ptr + at, n)) {
                    VALUE *out = s->ptr + at;
                    rb_hash_foreach(obj, collect_pair, (VALUE)&out);
                }
            }
            top = base;
        }
        /* v (if any) is complete: it joins its container, which may be complete in turn. */
        for (;;) {
            if (top < 0) return v;
            VALUE src = s->ptr[top];
            bool hash = RB_TYPE_P(src, T_HASH);
            long n = hash ? (long)RHASH_SIZE(src) : RARRAY_LEN(src);
            long copies = top + 2 + (hash ? 2 * n : 0);
            if (v != Qundef) tersa_rb_stack_push(s, v);
            long done = s->len - copies;
            if (done < n) {
                obj = hash ? s->ptr[top + 2 + 2 * done + 1] : RARRAY_AREF(src, done);
                break;
            }
            v = hash ? finish_hash(c->self, d, top + 2, copies, n) : rb_ary_new_from_values(n, s->ptr + copies);
            long outer = FIX2LONG(s->ptr[top + 1]);
            s->len = top;
            top = outer;
        }
    }
}

static VALUE copy_ensure(VALUE arg) {
    copy_call *c = (copy_call *)arg;
    c->d->stack->len = 0;
    c->d->hashed = c->hashed;
    c->d->hash_budget = c->budget;
    c->d->busy = false;
    return Qnil;
}

/* call-seq: Tersa::Native.deep_copy(obj) -> copy (for the benchmark's floor row) */
static VALUE tersa_native_deep_copy(VALUE mod, VALUE obj) {
    VALUE self = tersa_rb_default_decoder();
    tersa_rb_decoder *d = tersa_rb_get_decoder(self);
    /* A copy of a value that exists has no input to bound its hashing. */
    copy_call c = {self, d, obj, d->hashed, d->hash_budget};
    d->hash_budget = SIZE_MAX;
    d->busy = true;
    d->stack->len = 0;
    VALUE copy = rb_ensure(copy_body, (VALUE)&c, copy_ensure, (VALUE)&c);
    RB_GC_GUARD(self);
    return copy;
}

void tersa_rb_init_deep_copy(void) {
    rb_define_module_function(rb_define_module_under(mTersa, "Native"), "deep_copy", tersa_native_deep_copy, 1);
}
