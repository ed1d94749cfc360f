/*
 * fileio.h - whole-file reading and size-limited writing for the CLI, tests
 * and benchmark.
 */
#ifndef TERSA_FILEIO_H
#define TERSA_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Read all of `f` into a new malloc'ed buffer (NUL-terminated, not counted in
 *  *len). NULL on failure, with errno set. */
uint8_t *read_stream(FILE *f, size_t *len);

/** Read a file; "-" means standard input. A name ending in ".xz" is
 *  decompressed through the `xz` program. NULL on failure. */
uint8_t *read_file(const char *path, size_t *len);

/** Write all bytes to `f`; 0 on success, -1 on failure. */
int write_all(FILE *f, const void *data, size_t len);

/**
 * Output that stops at a size limit. Small inputs can describe enormous
 * output (a one-byte reference repeats a long string), so what a command
 * writes is bounded, and the bound is checked as the output is produced.
 */
typedef struct limited_output {
    FILE *file;
    size_t limit;    /**< the most bytes to write in all; 0 means no limit */
    size_t written;  /**< bytes written so far */
    bool over_limit; /**< a write was refused: it would have passed the limit */
    bool failed;     /**< the file refused a write (see errno) */
} limited_output;

/** Write all of `data`, or nothing of it if that would take the total past
 *  the limit. False after a refusal or a failed write. */
bool limited_write(limited_output *o, const void *data, size_t len);

#endif
