/*
 * json_special.h - the bytes a JSON string cannot hold as they are: '"',
 * '\\', controls, and (for the reader's UTF-8 check and the writer's ASCII
 * mode) anything non-ASCII. The reader and the writer skip eight plain bytes
 * at a time with swar_special.
 */
#ifndef TERSA_JSON_SPECIAL_H
#define TERSA_JSON_SPECIAL_H

#include <stdint.h>

#include "compiler.h"

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Non-zero if any of the 8 bytes of w is special. The usual has-zero-byte
 * tricks: a borrow can flag a byte falsely only above a byte flagged
 * rightly, so "any" is exact. */
TERSA_INLINE uint64_t swar_special(uint64_t w) {
    uint64_t q = w ^ (ONES * '"');
    uint64_t b = w ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b) | (w - ONES * 0x20) | w) & HIGHS;
}

#endif /* TERSA_JSON_SPECIAL_H */
