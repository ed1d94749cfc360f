/*
 * fileio.h - whole-file reading for the CLI, tests and benchmark.
 */
#ifndef PITH_FILEIO_H
#define PITH_FILEIO_H

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

#endif
