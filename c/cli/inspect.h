/*
 * inspect.h - the `pith inspect`, `pith stats` and `pith dict` commands.
 */
#ifndef PITH_CLI_INSPECT_H
#define PITH_CLI_INSPECT_H

#include "pith.h"

/** Append an item-by-item view of a buffer (offsets, bytes, forms, values, table
 *  events). On a decode error, the view up to the error is kept and *err set. */
bool pith_cli_inspect(const uint8_t *data, size_t len, const pith_dict *const *dicts, size_t ndicts, pith_buf *out,
                      pith_error *err);

/** Append bytes by item kind and table use. */
bool pith_cli_stats(const uint8_t *data, size_t len, const pith_dict *const *dicts, size_t ndicts, pith_buf *out,
                    pith_error *err);

/** Build a dictionary from sample JSON files; writes its serialization to
 *  `output` (or standard output). Returns the exit status. */
int pith_cli_dict_build(const char *const *inputs, size_t ninputs, size_t min_count, size_t max_strings,
                        const char *output);

/** Print a dictionary's id, strings and shapes. Returns the exit status. */
int pith_cli_dict_show(const char *path);

#endif
