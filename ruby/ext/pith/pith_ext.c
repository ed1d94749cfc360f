/*
 * pith_ext.c - the extension's entry point.
 */
#include "common.h"

#include "declared_class.h"
#include "hash_fast.h"

VALUE mPith;
rb_encoding *pith_utf8, *pith_binary, *pith_usascii;
int pith_utf8_index, pith_binary_index, pith_usascii_index;

/* The empty asm keeps the calls from becoming tail calls, which would drop
 * these frames from the stacks a leak checker sees. */
void *pith_rb_xalloc(size_t n, size_t size) {
    void *p = ruby_xmalloc2(n, size);
#if defined(__GNUC__)
    __asm__ volatile("" : "+r"(p));
#endif
    return p;
}

void *pith_rb_xrealloc(void *ptr, size_t n, size_t size) {
    void *p = ruby_xrealloc2(ptr, n, size);
#if defined(__GNUC__)
    __asm__ volatile("" : "+r"(p));
#endif
    return p;
}

RUBY_FUNC_EXPORTED void Init_pith(void) {
#ifdef HAVE_RB_EXT_RACTOR_SAFE
    rb_ext_ractor_safe(true);
#endif
    mPith = rb_define_module("Pith");
    pith_utf8 = rb_utf8_encoding();
    pith_binary = rb_ascii8bit_encoding();
    pith_usascii = rb_usascii_encoding();
    pith_utf8_index = rb_utf8_encindex();
    pith_binary_index = rb_ascii8bit_encindex();
    pith_usascii_index = rb_usascii_encindex();
    pith_rb_init_errors();
    pith_rb_init_types();
    pith_rb_init_map();
    pith_rb_init_dictionary();
    pith_rb_init_encoder();
    pith_rb_init_decoder();
    pith_rb_init_deep_copy();
    pith_rb_init_declared();
    pith_rb_init_hash_fast();
}
