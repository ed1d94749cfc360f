/*
 * reader_ascii.h - whether a string's bytes are all ASCII (then valid UTF-8,
 * and the bindings make their one-byte strings from them directly), tested
 * without a branch on the string's length where the input allows.
 * Included by reader.c.
 */
#ifndef TERSA_READER_ASCII_H
#define TERSA_READER_ASCII_H

#include "reader_internal.h"

/* True for an all-ASCII string of at most 16 bytes, without a call. */
TERSA_INLINE bool short_ascii(const uint8_t *s, size_t n) {
    uint64_t a, b;
    if (n >= 8) {
        if (n > 16) return false;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        a = x;
        b = y;
    } else {
        a = n ? s[0] | ((uint64_t)s[n >> 1] << 8) | ((uint64_t)s[n - 1] << 16) : 0;
        b = 0;
    }
    return ((a | b) & 0x8080808080808080ull) == 0;
}

/* Is s[0..n) all ASCII? Reads those bytes only: a word at a time, the last
 * word overlapping. */
TERSA_INLINE bool ascii_exact(const uint8_t *s, size_t n) {
    if (n < 8) return short_ascii(s, n);
    uint64_t high = load_le64(s + n - 8);
    for (size_t i = 0; i + 8 < n; i += 8) high |= load_le64(s + i);
    return (high & 0x8080808080808080ull) == 0;
}

/* ascii_window + 32 - n: 0x80 at the first n of 32 positions, 0 after. */
static const uint8_t ascii_window[64] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

/* The high bits of the 32 bytes at p, those selected by mask window w. */
TERSA_INLINE uint64_t high_bits32(const uint8_t *p, const uint8_t *w) {
    return (load_le64(p) & load_le64(w)) | (load_le64(p + 8) & load_le64(w + 8)) |
           (load_le64(p + 16) & load_le64(w + 16)) | (load_le64(p + 24) & load_le64(w + 24));
}

/* Is the string s[0..n) all ASCII? `room`: the bytes readable from s (at
 * least n). With 32 bytes of room, a string of up to 32 bytes is tested in
 * one pass over 32 bytes masked to its length, and a longer one 32 bytes at
 * a time, then its last 32: no branch on its length, whose mispredictions
 * (strings of every length in turn) cost more than the few loads. */
TERSA_INLINE bool ascii_in(const uint8_t *s, size_t n, size_t room) {
    if (TERSA_UNLIKELY(room < 32)) return ascii_exact(s, n);
    if (n <= 32) return high_bits32(s, ascii_window + 32 - n) == 0;
    uint64_t high = 0;
    const uint8_t *last = s + n - 32;
    for (; s < last; s += 32) high |= high_bits32(s, ascii_window);
    return (high | high_bits32(last, ascii_window)) == 0;
}

#endif
