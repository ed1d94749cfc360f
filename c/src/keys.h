/*
 * keys.h - distinct keys in generic maps (SPEC 1), for the writer.
 *
 * A generic map's keys may be any values, containers included, and the data
 * model requires them pairwise distinct by Pith equality (floats by bits,
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
#ifndef PITH_KEYS_H
#define PITH_KEYS_H

#include "internal.h"

/** Identity type bytes: one per kind of value of the data model. */
enum {
    PITH_KID_NULL = 'n', PITH_KID_FALSE = 'F', PITH_KID_TRUE = 'T',
    PITH_KID_INT = 'i',      /* int64, 8 bytes */
    PITH_KID_UINT = 'u',     /* above INT64_MAX, 8 bytes */
    PITH_KID_BIG_POS = 'b', PITH_KID_BIG_NEG = 'B', /* length, minimal magnitude */
    PITH_KID_FLOAT = 'f',    /* 8 bytes of bits */
    PITH_KID_STRING = 's', PITH_KID_SYMBOL = 'y', PITH_KID_BINARY = 'x', /* length, bytes */
    PITH_KID_EXT = 'e',      /* type, length, bytes */
    PITH_KID_TIME = 't',     /* seconds, nanos, zone, offset */
    PITH_KID_ARRAY = 'A',    /* count, then the elements */
    PITH_KID_MAP = 'M',      /* count, the keys (kind, length, bytes), then the values */
    PITH_KID_GENERIC = 'G'   /* count, then key, value, ... */
};

typedef struct pith_kid_entry {
    uint64_t hash;
    size_t off, len; /* in pith_kid_stack.bytes */
} pith_kid_entry;

/** The identities of the keys of all open generic maps (one per writer). */
typedef struct pith_kid_stack {
    const pith_alloc *alloc;
    uint8_t *bytes;
    size_t len, cap;
    pith_kid_entry *ents;
    size_t nents, ents_cap;
} pith_kid_stack;

/** One open generic map's part of the stack. */
typedef struct pith_kid_map {
    size_t bytes_base;   /* stack length when the map opened */
    size_t ents_base;    /* its keys are ents[ents_base, nents) */
    uint32_t *index;     /* open addressing over its keys (entry + 1), once it has many */
    size_t index_cap;
} pith_kid_map;

void pith_kid_init(pith_kid_stack *k, const pith_alloc *alloc);
void pith_kid_free(pith_kid_stack *k);
/** Forget every identity (a new buffer); the caller releases its open maps first. */
void pith_kid_reset(pith_kid_stack *k);

/** Append identity bytes; false if memory ran out. */
bool pith_kid_append(pith_kid_stack *k, const void *p, size_t n);

/** Append a type byte and a 64-bit field (little-endian). */
bool pith_kid_append_word(pith_kid_stack *k, uint8_t type, uint64_t word);

/** Append a type byte, a length and bytes. */
bool pith_kid_append_bytes(pith_kid_stack *k, uint8_t type, const void *p, size_t n);

/** Start a map's part of the stack. */
void pith_kid_open(const pith_kid_stack *k, pith_kid_map *m);

/**
 * Add the identity bytes[off, len) as the next key of map `m`. Returns 1 if
 * added, 0 if an equal key is already there, -1 if memory ran out.
 */
int pith_kid_insert(pith_kid_stack *k, pith_kid_map *m, size_t off);

/** Close map `m`: drop its keys, and its identity bytes unless `keep_bytes`
 *  (an enclosing key is recording them). */
void pith_kid_close(pith_kid_stack *k, pith_kid_map *m, bool keep_bytes);

#endif /* PITH_KEYS_H */
