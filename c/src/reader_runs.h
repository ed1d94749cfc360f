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
bool tersa_read_leaves(tersa_reader *r, tersa_item *items, size_t max, size_t *count);

#endif /* TERSA_READER_RUNS_H */
