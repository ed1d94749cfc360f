/*
 * inspect.h - the `tersa inspect`, `tersa stats` and `tersa dict` commands.
 */
#ifndef TERSA_CLI_INSPECT_H
#define TERSA_CLI_INSPECT_H

#include "tersa.h"

#include "fileio.h"

/** How inspect and stats read a buffer. */
typedef struct inspect_options {
    const tersa_dict *const *dicts; /**< dictionaries the buffer may name */
    size_t ndicts;
    uint32_t max_depth;            /**< 0: TERSA_DEFAULT_MAX_DEPTH */
} inspect_options;

/** Write an item-by-item view of a buffer (offsets, bytes, forms, values, table
 *  events) to `out` as it is made. False on a decode error (*err set; the view
 *  up to the error is written, then the error) or when `out` refused a write
 *  (err->code is TERSA_OK; see out->over_limit and out->failed). */
bool tersa_cli_inspect(const uint8_t *data, size_t len, const inspect_options *opts, limited_output *out,
                      tersa_error *err);

/** Read a buffer as inspect does, writing nothing: false and *err at its
 *  first defect. A cheap pass that reports a defect before the view. */
bool tersa_cli_check(const uint8_t *data, size_t len, const inspect_options *opts, tersa_error *err);

/** Write bytes by item kind and table use; false as for tersa_cli_inspect
 *  (after a decode error the counts up to it are written). */
bool tersa_cli_stats(const uint8_t *data, size_t len, const inspect_options *opts, limited_output *out,
                    tersa_error *err);

/** Build a dictionary from sample JSON files read with `max_depth` (0: the
 *  default); writes its serialization to `output` (or standard output).
 *  Returns the exit status. */
int tersa_cli_dict_build(const char *const *inputs, size_t ninputs, size_t min_count, size_t max_strings,
                        size_t max_shapes, uint32_t max_depth, const char *output);

/** Print a dictionary's id, strings and shapes. Returns the exit status. */
int tersa_cli_dict_show(const char *path);

#endif
