/*
 * reader_runs.h - an array's leaf items in runs, for the bindings' decoders
 * (internal: the Ruby and Python extensions compile the core's sources).
 */
#ifndef TERSA_READER_RUNS_H
#define TERSA_READER_RUNS_H

#include "tersa.h"

/* tersa_item flag (beside tersa.h's): this array's first element is a
 * string, so tersa_read_leaves will take a run of elements. */
#define TERSA_ITEM_STRINGS (1u << 3)

/* tersa_read_scalars, with strings too: a run takes the innermost array's
 * next elements while they are numbers, booleans, nulls or strings, with
 * tersa_read's checks and state updates (and its errors), up to `max`. An
 * array of strings (rows of a table, lists of tags) costs one call per run
 * instead of one per element. */
/* tersa_item flag of a map of a new shape: every key is a string of 0-31
 * bytes written inline (one tag byte of its length, then its bytes; no
 * reference, no prefix, no symbol), and the keys point into the input, one
 * after the other. The definition's key bytes, keys[0].ptr - 1 up to the end
 * of the last key, then name the keys by themselves, whatever the reader's
 * state: a binding can look its key objects up by those bytes alone
 * (tersa_shapecache_get_raw). */
#define TERSA_ITEM_PLAIN_KEYS (1u << 4)

bool tersa_read_leaves(tersa_reader *r, tersa_item *items, size_t max, size_t *count);

#endif /* TERSA_READER_RUNS_H */
