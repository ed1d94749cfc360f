/*
 * hash.h - the one byte hash of the core and the bindings' caches: table
 * lookups compare bytes afterwards, so the hash only spreads. Needs only the
 * word loads, so the bindings' caches (objcache.h) use it without the rest of
 * the core's internals. Not installed.
 */
#ifndef TERSA_HASH_H
#define TERSA_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "bits.h"
#include "compiler.h"

TERSA_INLINE uint64_t hash_mix(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    tersa_u128 r = (tersa_u128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
    uint64_t x = (a ^ (b >> 29)) * 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 31) ^ b;
#endif
}

#define HASH_K0 0xa0761d6478bd642full
#define HASH_K1 0xe7037ed1a0b428dbull
#define HASH_K2 0x8ebc6af09c88c6e3ull

uint64_t tersa_hash_long(const uint8_t *p, size_t n, uint64_t seed);

/** A per-process random seed (never 0) for the hashes of tables whose keys
 *  come from outside: strings, shapes and map keys. Output never depends on
 *  it; it makes inputs that collide on purpose impractical to build. */
uint64_t tersa_seed(void);

TERSA_INLINE uint64_t hash_bytes(const void *data, size_t n, uint64_t seed) {
    const uint8_t *p = (const uint8_t *)data;
    uint64_t a, b;
    if (TERSA_LIKELY(n <= 16)) {
        if (n >= 8) {
            a = load_le64(p);
            b = load_le64(p + n - 8);
        } else if (n >= 4) {
            a = load_le32(p);
            b = load_le32(p + n - 4);
        } else if (n > 0) {
            a = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
            b = 0;
        } else {
            a = b = 0;
        }
        return hash_mix(a ^ HASH_K1, b ^ seed ^ (uint64_t)n * HASH_K2);
    }
    if (n <= 32) {
        uint64_t h = hash_mix(load_le64(p) ^ HASH_K1, load_le64(p + 8) ^ seed ^ (uint64_t)n * HASH_K2);
        return hash_mix(load_le64(p + n - 16) ^ HASH_K2, load_le64(p + n - 8) ^ h);
    }
    return tersa_hash_long(p, n, seed);
}

#endif
