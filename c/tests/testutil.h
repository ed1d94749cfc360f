/*
 * testutil.h - tiny test harness: checks that count failures and keep going.
 */
#ifndef TERSA_TESTUTIL_H
#define TERSA_TESTUTIL_H

#include "tersa.h"

#include <stdio.h>

extern unsigned long test_checks, test_failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        test_checks++;                                                     \
        if (!(cond)) {                                                     \
            test_failures++;                                               \
            if (test_failures <= 50) {                                     \
                fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                              \
                fputc('\n', stderr);                                       \
            }                                                              \
        }                                                                  \
    } while (0)

/** Print a summary; returns the process exit status. */
int test_summary(const char *name);

/** Hex text to bytes (malloc'ed); NULL on bad hex. */
uint8_t *hex_decode(const char *hex, size_t hexlen, size_t *len);

/** Bytes to lowercase hex (malloc'ed, NUL-terminated). */
char *hex_encode(const uint8_t *p, size_t n);

/** A small deterministic PRNG (xorshift64*). */
typedef struct test_rng { uint64_t s; } test_rng;
uint64_t rng_next(test_rng *r);
uint64_t rng_below(test_rng *r, uint64_t n);

/** Encode one value (single buffer) with a fresh writer; malloc'ed bytes or NULL. */
uint8_t *encode_value(const tersa_value *v, const tersa_dict *dict, size_t *len, tersa_error *err);

/** Diagnostic notation of a value (malloc'ed). */
char *diag_of(const tersa_value *v);

/* How many items follow an item as its contents: an array's or map's
 * values, a generic map's keys and values (0 for any other item). */
size_t child_items(const tersa_item *it);

/** Read a single-value buffer item by item with tersa_read, then again with
 *  tersa_read_scalars taking array elements in runs: CHECK that both give the
 *  same items and the same outcome (error code and offset). */
void check_scalar_runs(const char *name, const uint8_t *bytes, size_t len, const tersa_dict *dict, uint32_t max_depth);

#endif
