/*
 * common.h - declarations shared by the Ruby binding files.
 */
#ifndef PITH_RB_COMMON_H
#define PITH_RB_COMMON_H

#include <ruby.h>
#include <ruby/encoding.h>
#include <ruby/ractor.h>

#include "pith.h"

#if defined(__GNUC__)
#  define PITH_RB_NORETURN(x) x __attribute__((noreturn))
#  define PITH_RB_NOINLINE __attribute__((noinline))
#  define PITH_RB_ALWAYS_INLINE __attribute__((always_inline))
#  define PITH_RB_LIKELY(x) __builtin_expect(!!(x), 1)
#  define PITH_RB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#  define PITH_RB_NORETURN(x) x
#  define PITH_RB_NOINLINE
#  define PITH_RB_ALWAYS_INLINE
#  define PITH_RB_LIKELY(x) (x)
#  define PITH_RB_UNLIKELY(x) (x)
#endif

/* The binding's own heap memory (Ruby's allocator, so GC pressure counts it).
 * Out-of-line wrappers rather than ALLOC_N/REALLOC_N so that a leak report
 * can tell memory the binding owns (allocated under these frames) from the
 * memory of Ruby objects the binding creates (test/memcheck.rb). */
PITH_RB_NOINLINE void *pith_rb_xalloc(size_t n, size_t size);
PITH_RB_NOINLINE void *pith_rb_xrealloc(void *ptr, size_t n, size_t size);
#define PITH_RB_ALLOC_N(type, n) ((type *)pith_rb_xalloc((n), sizeof(type)))
#define PITH_RB_REALLOC_N(var, type, n) ((var) = (type *)pith_rb_xrealloc((var), (n), sizeof(type)))

/* Floats without a call for flonums (most doubles): Ruby 3.1's DBL2NUM and
 * RFLOAT_VALUE are out-of-line functions (a PLT call per float). Both follow
 * Ruby's internal rb_float_new_inline and rb_float_flonum_value. */
static inline VALUE pith_rb_float_new(double d) {
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

static inline double pith_rb_float_value(VALUE v) {
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

/* Classes and modules (set once by Init_pith, read-only afterwards). */
extern VALUE mPith, cEncoder, cDecoder, cDictionary, eError, eEncodeError, eDecodeError, cTimestamp, cExt, cMap;
extern rb_encoding *pith_utf8, *pith_binary, *pith_usascii;
extern int pith_utf8_index, pith_binary_index, pith_usascii_index;

/* Raise helpers: they never return. */
PITH_RB_NORETURN(void pith_rb_raise_decode(const pith_error *err));
/** A DecodeError with a code of the binding's own (not SPEC 10's list). */
PITH_RB_NORETURN(void pith_rb_raise_decode_code(const char *code, size_t offset, const char *message));
PITH_RB_NORETURN(void pith_rb_raise_encode(const char *fmt, ...));
PITH_RB_NORETURN(void pith_rb_raise_writer(const pith_writer *w, VALUE path));

/* Dictionaries held by Ruby objects. */
const pith_dict *pith_rb_dict(VALUE dictionary);

/* Extension types (Ractor-local registry). Qnil if none. */
VALUE pith_rb_ext_packer(VALUE klass, uint32_t *type);
VALUE pith_rb_ext_unpacker(uint32_t type);
bool pith_rb_has_unpackers(void);

/* Pith::Map (map_class.c, lib/pith/map.rb). */
/** A new Pith::Map of the n {key, value} pairs at `pairs`, which must be distinct Pith values. */
VALUE pith_rb_map_new(const VALUE *pairs, long n);
/** The Array of [key, value] pairs of a Pith::Map, or Qnil if it holds none (not initialized). */
VALUE pith_rb_map_pairs(VALUE map);

/* Init functions of each file. */
void pith_rb_init_errors(void);
void pith_rb_init_encoder(void);
void pith_rb_init_decoder(void);
void pith_rb_init_dictionary(void);
void pith_rb_init_types(void);
void pith_rb_init_map(void);
void pith_rb_init_deep_copy(void);

#endif
