/*
 * tersa_ext.c - the extension's entry point.
 */
#include "common.h"

#include "declared_class.h"
#include "hash_fast.h"

VALUE mTersa;
rb_encoding *tersa_utf8, *tersa_binary, *tersa_usascii;
int tersa_utf8_index, tersa_binary_index, tersa_usascii_index;

/* The empty asm keeps the calls from becoming tail calls, which would drop
 * these frames from the stacks a leak checker sees. */
void *tersa_rb_xalloc(size_t n, size_t size) {
    void *p = ruby_xmalloc2(n, size);
#if defined(__GNUC__)
    __asm__ volatile("" : "+r"(p));
#endif
    return p;
}

void *tersa_rb_xrealloc(void *ptr, size_t n, size_t size) {
    void *p = ruby_xrealloc2(ptr, n, size);
#if defined(__GNUC__)
    __asm__ volatile("" : "+r"(p));
#endif
    return p;
}

static ID id_call;

VALUE tersa_rb_call_proc(VALUE args) {
    const tersa_rb_call_args *a = (const tersa_rb_call_args *)args;
    return rb_funcall(a->proc, id_call, 1, a->arg);
}

RUBY_FUNC_EXPORTED void Init_tersa(void) {
#ifdef HAVE_RB_EXT_RACTOR_SAFE
    rb_ext_ractor_safe(true);
#endif
    mTersa = rb_define_module("Tersa");
    id_call = rb_intern("call");
    tersa_utf8 = rb_utf8_encoding();
    tersa_binary = rb_ascii8bit_encoding();
    tersa_usascii = rb_usascii_encoding();
    tersa_utf8_index = rb_utf8_encindex();
    tersa_binary_index = rb_ascii8bit_encindex();
    tersa_usascii_index = rb_usascii_encindex();
    tersa_rb_init_errors();
    tersa_rb_init_types();
    tersa_rb_init_map();
    tersa_rb_init_dictionary();
    tersa_rb_init_encoder();
    tersa_rb_init_decoder();
    tersa_rb_init_deep_copy();
    tersa_rb_init_known_types();
    tersa_rb_init_declared();
    tersa_rb_init_hash_fast();
}
