/*
 * bits.h - word arithmetic for the core and the number conversions:
 * little-endian loads and stores, bit counts, the 64x64->128-bit product.
 * Needs only the compiler hints, so dtoa.c and the CLI's strtod.c use it
 * without the rest of the core's internals. Not installed.
 */
#ifndef TERSA_BITS_H
#define TERSA_BITS_H

#include <stdint.h>
#include <string.h>

#include "compiler.h"

#if defined(__SIZEOF_INT128__)
/* __extension__ keeps -Wpedantic quiet about the GNU 128-bit type. */
__extension__ typedef unsigned __int128 tersa_u128;
#endif

/* The format is little-endian: a big-endian host swaps what it loads and stores. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#  define TERSA_LE64(v) __builtin_bswap64(v)
#  define TERSA_LE32(v) __builtin_bswap32(v)
#else
#  define TERSA_LE64(v) (v)
#  define TERSA_LE32(v) (v)
#endif

TERSA_INLINE uint64_t load_le64(const void *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return TERSA_LE64(v);
}

TERSA_INLINE uint32_t load_le32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return TERSA_LE32(v);
}

TERSA_INLINE void store_le64(void *p, uint64_t v) {
    v = TERSA_LE64(v);
    memcpy(p, &v, 8);
}

TERSA_INLINE void store_le32(void *p, uint32_t v) {
    v = TERSA_LE32(v);
    memcpy(p, &v, 4);
}

/* Trailing zero bits of x != 0. */
TERSA_INLINE unsigned ctz32(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctz(x);
#else
    unsigned n = 0;
    while (!(x & 1)) { x >>= 1; n++; }
    return n;
#endif
}

/* Leading zero bits of x != 0. */
TERSA_INLINE int clz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(x);
#else
    int n = 0;
    while (!(x & (1ull << 63))) { x <<= 1; n++; }
    return n;
#endif
}

/* High and low halves of a * b. */
#if defined(__SIZEOF_INT128__)
TERSA_INLINE uint64_t mul_64x64(uint64_t a, uint64_t b, uint64_t *lo) {
    tersa_u128 p = (tersa_u128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
}
#else
TERSA_INLINE uint64_t mul_64x64(uint64_t a, uint64_t b, uint64_t *lo) {
    /* Four 32x32 products; the middle sum cannot overflow 64 bits because
     * each term is below 2^64 - 2^33 + 1 and the carries are 32-bit. */
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
#endif

#endif /* TERSA_BITS_H */
