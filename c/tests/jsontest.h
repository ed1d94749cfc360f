/*
 * jsontest.h - helpers the tests of the CLI's JSON layer share: reading text
 * (from a copy that is overwritten and freed, so that a document pointing
 * into it shows up), writing to a string, and tersa_value constructors.
 */
#ifndef TERSA_JSONTEST_H
#define TERSA_JSONTEST_H

#include "json.h"
#include "testutil.h"

#include <string.h>

/* Parse text (len bytes, from a heap copy without a terminator so that any
 * read past the end shows up under AddressSanitizer); seq: json_read_seq. */
tersa_doc *read_n(const char *text, size_t len, const json_read_options *o, json_error *err, bool seq);
tersa_doc *read_s(const char *text, json_error *err);
const tersa_value *root(tersa_doc *d);

/* Write v compactly (or with opts) into a NUL-terminated heap string; NULL
 * on failure with *err. */
char *write_s(const tersa_value *v, const json_write_options *o, json_error *err);

/* Value constructors (strings and arrays point at the caller's memory). */
tersa_value mk(tersa_type t);
tersa_value mk_int(int64_t i);
tersa_value mk_float(double f);
tersa_value mk_str(tersa_type t, const char *s, size_t n);
tersa_value mk_string(const char *s);
tersa_value mk_bin(const void *p, size_t n);
tersa_value mk_array(tersa_value *items, size_t n);
tersa_value mk_map(tersa_type t, tersa_value *keys, tersa_value *values, size_t n);

static inline uint64_t bits_of(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

static inline double double_of(uint64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}

#endif
