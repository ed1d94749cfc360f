/*
 * common.h - declarations shared by the Ruby binding files.
 */
#ifndef TERSA_RB_COMMON_H
#define TERSA_RB_COMMON_H

#include <ruby.h>
#include <ruby/encoding.h>
#include <ruby/ractor.h>

#include "tersa.h"
#include "compiler.h" /* the core's, shared with every C file of the project */

/* The binding's own heap memory (Ruby's allocator, so GC pressure counts it).
 * Out-of-line wrappers rather than ALLOC_N/REALLOC_N so that a leak report
 * can tell memory the binding owns (allocated under these frames) from the
 * memory of Ruby objects the binding creates (test/memcheck.rb). */
TERSA_NOINLINE void *tersa_rb_xalloc(size_t n, size_t size);
TERSA_NOINLINE void *tersa_rb_xrealloc(void *ptr, size_t n, size_t size);
#define TERSA_RB_ALLOC_N(type, n) ((type *)tersa_rb_xalloc((n), sizeof(type)))
#define TERSA_RB_REALLOC_N(var, type, n) ((var) = (type *)tersa_rb_xrealloc((var), (n), sizeof(type)))

/* A callable and its one argument, for rb_protect: tersa_rb_call_proc((VALUE)&args)
 * is proc.call(arg) (packers, unpackers, default procs). */
typedef struct tersa_rb_call_args {
    VALUE proc, arg;
} tersa_rb_call_args;
VALUE tersa_rb_call_proc(VALUE args);

/* Floats without a call for flonums (most doubles): Ruby 3.1's DBL2NUM and
 * RFLOAT_VALUE are out-of-line functions (a PLT call per float). Both follow
 * Ruby's internal rb_float_new_inline and rb_float_flonum_value. */
static inline VALUE tersa_rb_float_new(double d) {
#if USE_FLONUM
    union {
        double d;
        VALUE v;
    } t;
    t.d = d;
    int bits = (int)((VALUE)(t.v >> 60) & 0x7);
    if (t.v != 0x3000000000000000 && !((bits - 3) & ~0x01)) return (((t.v << 3) | (t.v >> 61)) & ~(VALUE)0x01) | 0x02;
    if (t.v == 0) return 0x8000000000000002; /* +0.0 */
#endif
    return rb_float_new_in_heap(d);
}

static inline double tersa_rb_float_value(VALUE v) {
#if USE_FLONUM
    if (RB_FLONUM_P(v)) {
        if (v == (VALUE)0x8000000000000002) return 0.0;
        union {
            double d;
            VALUE v;
        } t;
        VALUE x = (2 - (v >> 63)) | (v & ~(VALUE)0x03);
        t.v = (x >> 3) | (x << 61);
        return t.d;
    }
#endif
    return rb_float_value(v);
}

/* Classes and modules (set once by Init_tersa, read-only afterwards). */
extern VALUE mTersa, cEncoder, cDecoder, cDictionary, eError, eEncodeError, eDecodeError, cTimestamp, cExt, cMap;
extern rb_encoding *tersa_utf8, *tersa_binary, *tersa_usascii;
extern int tersa_utf8_index, tersa_binary_index, tersa_usascii_index;

/* Raise helpers: they never return. */
TERSA_NORETURN(void tersa_rb_raise_decode(const tersa_error *err));
/** A DecodeError with a code of the binding's own (not SPEC 10's list). */
TERSA_NORETURN(void tersa_rb_raise_decode_code(const char *code, size_t offset, const char *message));
TERSA_NORETURN(void tersa_rb_raise_writer(const tersa_writer *w, VALUE path));

/* Dictionaries held by Ruby objects. */
const tersa_dict *tersa_rb_dict(VALUE dictionary);

/* Extension types (Ractor-local registry). Qnil if none. */
VALUE tersa_rb_ext_packer(VALUE klass, uint32_t *type);
VALUE tersa_rb_ext_unpacker(uint32_t type);
bool tersa_rb_has_unpackers(void);

/* Tersa::Map (map_class.c, lib/tersa/map.rb). */
/** A new Tersa::Map of the n {key, value} pairs at `pairs`, which must be distinct Tersa values. */
VALUE tersa_rb_map_new(const VALUE *pairs, long n);
/** The Array of [key, value] pairs of a Tersa::Map, or Qnil if it holds none (not initialized). */
VALUE tersa_rb_map_pairs(VALUE map);

/* Init functions of each file. */
void tersa_rb_init_errors(void);
void tersa_rb_init_encoder(void);
void tersa_rb_init_decoder(void);
void tersa_rb_init_dictionary(void);
void tersa_rb_init_types(void);
void tersa_rb_init_map(void);
void tersa_rb_init_deep_copy(void);
void tersa_rb_init_known_types(void);

#endif
