/*
 * keys.h - distinct keys in generic maps (SPEC 1), for the writer.
 *
 * A generic map's keys may be any values, containers included, and the data
 * model requires them pairwise distinct by Tersa equality (floats by bits,
 * strings by bytes, containers element by element), which a host's own
 * equality does not give (two NaN objects with the same bits, 0.0 and -0.0,
 * a string and a binary of the same bytes). The writer therefore reduces each
 * key to its *identity*: the value in a form that does not depend on the
 * encoder state (a type byte and the value's bytes, in pre-order with counts,
 * so that it is unambiguous), and keeps the identities of the keys of every
 * open generic map in a set.
 *
 * Identities live in one byte stack: a key's identity is appended while the
 * key is written (a container key over all its items) and stays until its map
 * closes, unless an enclosing key is being recorded, in which case the bytes
 * are part of that key's identity too.
 */
#ifndef TERSA_KEYS_H
#define TERSA_KEYS_H

#include "internal.h"

/** Identity type bytes: one per kind of value of the data model. */
enum {
    TERSA_KID_NULL = 'n', TERSA_KID_FALSE = 'F', TERSA_KID_TRUE = 'T',
    TERSA_KID_INT = 'i',      /* int64, 8 bytes */
    TERSA_KID_UINT = 'u',     /* above INT64_MAX, 8 bytes */
    TERSA_KID_BIG_POS = 'b', TERSA_KID_BIG_NEG = 'B', /* length, minimal magnitude */
    TERSA_KID_FLOAT = 'f',    /* 8 bytes of bits */
    TERSA_KID_STRING = 's', TERSA_KID_SYMBOL = 'y', TERSA_KID_BINARY = 'x', /* length, bytes */
    TERSA_KID_EXT = 'e',      /* type, length, bytes */
    TERSA_KID_TIME = 't',     /* seconds, nanos, zone, offset */
    TERSA_KID_ARRAY = 'A',    /* count, then the elements */
    TERSA_KID_MAP = 'M',      /* count, the keys (kind, length, bytes), then the values */
    TERSA_KID_GENERIC = 'G'   /* count, then key, value, ... */
};

typedef struct tersa_kid_entry {
    uint64_t hash;
    size_t off, len; /* in tersa_kid_stack.bytes */
} tersa_kid_entry;

/** The identities of the keys of all open generic maps (one per writer). */
typedef struct tersa_kid_stack {
    const tersa_alloc *alloc;
    uint8_t *bytes;
    size_t len, cap;
    tersa_kid_entry *ents;
    size_t nents, ents_cap;
} tersa_kid_stack;

/** One open generic map's part of the stack. */
typedef struct tersa_kid_map {
    size_t bytes_base;   /* stack length when the map opened */
    size_t ents_base;    /* its keys are ents[ents_base, nents) */
    uint32_t *index;     /* open addressing over its keys (entry + 1), once it has many */
    size_t index_cap;
} tersa_kid_map;

void tersa_kid_init(tersa_kid_stack *k, const tersa_alloc *alloc);
void tersa_kid_free(tersa_kid_stack *k);
/** Forget every identity (a new buffer); the caller releases its open maps first. */
void tersa_kid_reset(tersa_kid_stack *k);

/** Append identity bytes; false if memory ran out. */
bool tersa_kid_append(tersa_kid_stack *k, const void *p, size_t n);

/** Append a type byte and a 64-bit field (little-endian). */
bool tersa_kid_append_word(tersa_kid_stack *k, uint8_t type, uint64_t word);

/** Append a type byte, a length and bytes. */
bool tersa_kid_append_bytes(tersa_kid_stack *k, uint8_t type, const void *p, size_t n);

/** Start a map's part of the stack. */
void tersa_kid_open(const tersa_kid_stack *k, tersa_kid_map *m);

/**
 * Add the identity bytes[off, len) as the next key of map `m`. Returns 1 if
 * added, 0 if an equal key is already there, -1 if memory ran out.
 */
int tersa_kid_insert(tersa_kid_stack *k, tersa_kid_map *m, size_t off);

/** Close map `m`: drop its keys, and its identity bytes unless `keep_bytes`
 *  (an enclosing key is recording them). */
void tersa_kid_close(tersa_kid_stack *k, tersa_kid_map *m, bool keep_bytes);

#endif /* TERSA_KEYS_H */
