/*
 * jsontest.c - helpers the tests of the CLI's JSON layer share (jsontest.h).
 */
#include "jsontest.h"

#include <stdlib.h>

tersa_doc *read_n(const char *text, size_t len, const json_read_options *o, json_error *err,
                        bool seq) {
    char *copy = (char *)malloc(len ? len : 1);
    if (len) memcpy(copy, text, len);
    tersa_doc *d = seq ? json_read_seq(NULL, copy, len, o, err) : json_read(NULL, copy, len, o, err);
    /* Overwrite and free the caller's text: the document must not point into it. */
    memset(copy, 'X', len);
    free(copy);
    return d;
}

tersa_doc *read_s(const char *text, json_error *err) {
    return read_n(text, strlen(text), NULL, err, false);
}

const tersa_value *root(tersa_doc *d) { return tersa_doc_root(d, 0); }

char *write_s(const tersa_value *v, const json_write_options *o, json_error *err) {
    tersa_buf b;
    tersa_buf_init(&b, NULL);
    if (!json_write(v, o, &b, err)) {
        tersa_buf_free(&b);
        return NULL;
    }
    char *s = (char *)malloc(b.len + 1);
    memcpy(s, b.ptr, b.len);
    s[b.len] = '\0';
    tersa_buf_free(&b);
    return s;
}

tersa_value mk(tersa_type t) {
    tersa_value v;
    memset(&v, 0, sizeof v);
    v.type = t;
    return v;
}
tersa_value mk_int(int64_t i) {
    tersa_value v = mk(TERSA_INT);
    v.v.i = i;
    return v;
}
tersa_value mk_float(double f) {
    tersa_value v = mk(TERSA_FLOAT);
    v.v.f = f;
    return v;
}
tersa_value mk_str(tersa_type t, const char *s, size_t n) {
    tersa_value v = mk(t);
    v.v.str.ptr = s;
    v.v.str.len = n;
    return v;
}
tersa_value mk_string(const char *s) { return mk_str(TERSA_STRING, s, strlen(s)); }
tersa_value mk_bin(const void *p, size_t n) {
    tersa_value v = mk(TERSA_BINARY);
    v.v.bin.ptr = (const uint8_t *)p;
    v.v.bin.len = n;
    return v;
}
tersa_value mk_array(tersa_value *items, size_t n) {
    tersa_value v = mk(TERSA_ARRAY);
    v.v.array.items = items;
    v.v.array.count = n;
    return v;
}
tersa_value mk_map(tersa_type t, tersa_value *keys, tersa_value *values, size_t n) {
    tersa_value v = mk(t);
    v.v.map.keys = keys;
    v.v.map.values = values;
    v.v.map.count = n;
    return v;
}
