/*
 * test_deep.c - the value tree at any allowed depth on a small stack.
 *
 * tersa_decode, tersa_write_value, tersa_value_equal, tersa_diag and the JSON
 * reader and writer take nesting as deep as the application allows; none of
 * them may need stack in proportion to it. Every check runs in a thread whose
 * stack is far smaller than DEPTH recursive frames would need.
 */
#define _POSIX_C_SOURCE 200809L
#include "json.h"
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH 100000u
#define SMALL_STACK ((size_t)256 << 10)

/* Innermost first: a chain of one-element containers around `leaf`, cycling
 * through arrays, shaped maps and generic maps (an integer key). */
static tersa_value *deep_value(tersa_doc *doc, int64_t leaf) {
    tersa_value *v = tersa_doc_values(doc, 1);
    v->type = TERSA_INT;
    v->v.i = leaf;
    for (unsigned d = 0; d < DEPTH; d++) {
        tersa_value *c = tersa_doc_values(doc, 1);
        switch (d % 3) {
        case 0:
            c->type = TERSA_ARRAY;
            c->v.array.items = v;
            c->v.array.count = 1;
            break;
        case 1: {
            tersa_value *k = tersa_doc_values(doc, 1);
            k->type = TERSA_STRING;
            k->v.str.ptr = "k";
            k->v.str.len = 1;
            c->type = TERSA_MAP;
            c->v.map.keys = k;
            c->v.map.values = v;
            c->v.map.count = 1;
            break;
        }
        default: {
            tersa_value *k = tersa_doc_values(doc, 1);
            k->type = TERSA_INT;
            k->v.i = 7;
            c->type = TERSA_GENERIC_MAP;
            c->v.map.keys = k;
            c->v.map.values = v;
            c->v.map.count = 1;
            break;
        }
        }
        v = c;
    }
    return v;
}

/* The diagnostic notation deep_value must print, built without recursion. */
static char *expected_diag(int64_t leaf) {
    tersa_buf b;
    tersa_buf_init(&b, NULL);
    for (unsigned d = DEPTH; d-- > 0;) {
        static const char *const open[3] = {"[", "{\"k\": ", "{7: "};
        tersa_buf_append(&b, open[d % 3], strlen(open[d % 3]));
    }
    char num[32];
    int n = snprintf(num, sizeof num, "%lld", (long long)leaf);
    tersa_buf_append(&b, num, (size_t)n);
    for (unsigned d = 0; d < DEPTH; d++) tersa_buf_append(&b, d % 3 == 0 ? "]" : "}", 1);
    return b.ptr;
}

static void test_tree(void) {
    tersa_doc *doc = tersa_doc_new(NULL);
    tersa_value *a = deep_value(doc, 1), *b = deep_value(doc, 1), *c = deep_value(doc, 2);
    CHECK(tersa_value_equal(a, b), "equal deep trees");
    CHECK(!tersa_value_equal(a, c), "deep trees that differ at the leaf");

    tersa_buf out;
    tersa_buf_init(&out, NULL);
    char *want = expected_diag(1);
    CHECK(tersa_diag(a, &out) && out.len == strlen(want) && memcmp(out.ptr, want, out.len) == 0, "tersa_diag deep");
    free(want);
    tersa_buf_free(&out);

    /* Encode and decode at the limit, and one level past it. */
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_writer_set_max_depth(w, DEPTH);
    CHECK(tersa_writer_start(w, NULL, 0) && tersa_write_value(w, a), "write deep: %s", tersa_writer_error(w)->message);
    size_t len;
    const uint8_t *bytes = tersa_writer_data(w, &len);
    tersa_decode_options o = {NULL, 0, DEPTH, false, false};
    tersa_error err;
    tersa_doc *back = tersa_decode(NULL, bytes, len, &o, &err);
    CHECK(back && tersa_value_equal(tersa_doc_root(back, 0), a), "decode deep: %s", err.message);
    tersa_doc_free(back);
    o.max_depth = DEPTH - 1;
    back = tersa_decode(NULL, bytes, len, &o, &err);
    CHECK(!back && err.code == TERSA_ERR_DEPTH_EXCEEDED, "decode one level too deep");
    tersa_doc_free(back);
    tersa_writer_free(w);

    /* The JSON layer: the same tree without generic maps. */
    tersa_buf json;
    tersa_buf_init(&json, NULL);
    json_error jerr;
    tersa_value *arrays = tersa_doc_values(doc, 1);
    arrays->type = TERSA_NULL;
    for (unsigned d = 0; d < DEPTH; d++) {
        tersa_value *p = tersa_doc_values(doc, 1);
        p->type = TERSA_ARRAY;
        p->v.array.items = arrays;
        p->v.array.count = 1;
        arrays = p;
    }
    CHECK(json_write(arrays, NULL, &json, &jerr), "json_write deep: %s", jerr.message);
    json_read_options ro = {DEPTH};
    tersa_doc *parsed = json_read(NULL, json.ptr, json.len, &ro, &jerr);
    CHECK(parsed && tersa_value_equal(tersa_doc_root(parsed, 0), arrays), "json_read deep: %s", jerr.message);
    tersa_doc_free(parsed);
    tersa_buf_free(&json);
    tersa_doc_free(doc);
}

static void *run(void *arg) {
    (void)arg;
    test_tree();
    return NULL;
}

int main(void) {
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, SMALL_STACK);
    CHECK(pthread_create(&t, &attr, run, NULL) == 0, "thread");
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    return test_summary("test_deep");
}
