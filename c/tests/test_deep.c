/*
 * test_deep.c - the value tree at any allowed depth on a small stack.
 *
 * pith_decode, pith_write_value, pith_value_equal, pith_diag and the JSON
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
static pith_value *deep_value(pith_doc *doc, int64_t leaf) {
    pith_value *v = pith_doc_values(doc, 1);
    v->type = PITH_INT;
    v->v.i = leaf;
    for (unsigned d = 0; d < DEPTH; d++) {
        pith_value *c = pith_doc_values(doc, 1);
        switch (d % 3) {
        case 0:
            c->type = PITH_ARRAY;
            c->v.array.items = v;
            c->v.array.count = 1;
            break;
        case 1: {
            pith_value *k = pith_doc_values(doc, 1);
            k->type = PITH_STRING;
            k->v.str.ptr = "k";
            k->v.str.len = 1;
            c->type = PITH_MAP;
            c->v.map.keys = k;
            c->v.map.values = v;
            c->v.map.count = 1;
            break;
        }
        default: {
            pith_value *k = pith_doc_values(doc, 1);
            k->type = PITH_INT;
            k->v.i = 7;
            c->type = PITH_GENERIC_MAP;
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
    pith_buf b;
    pith_buf_init(&b, NULL);
    for (unsigned d = DEPTH; d-- > 0;) {
        static const char *const open[3] = {"[", "{\"k\": ", "{7: "};
        pith_buf_append(&b, open[d % 3], strlen(open[d % 3]));
    }
    char num[32];
    int n = snprintf(num, sizeof num, "%lld", (long long)leaf);
    pith_buf_append(&b, num, (size_t)n);
    for (unsigned d = 0; d < DEPTH; d++) pith_buf_append(&b, d % 3 == 0 ? "]" : "}", 1);
    return b.ptr;
}

static void test_tree(void) {
    pith_doc *doc = pith_doc_new(NULL);
    pith_value *a = deep_value(doc, 1), *b = deep_value(doc, 1), *c = deep_value(doc, 2);
    CHECK(pith_value_equal(a, b), "equal deep trees");
    CHECK(!pith_value_equal(a, c), "deep trees that differ at the leaf");

    pith_buf out;
    pith_buf_init(&out, NULL);
    char *want = expected_diag(1);
    CHECK(pith_diag(a, &out) && out.len == strlen(want) && memcmp(out.ptr, want, out.len) == 0, "pith_diag deep");
    free(want);
    pith_buf_free(&out);

    /* Encode and decode at the limit, and one level past it. */
    pith_writer *w = pith_writer_new(NULL);
    pith_writer_set_max_depth(w, DEPTH);
    CHECK(pith_writer_start(w, NULL, 0) && pith_write_value(w, a), "write deep: %s", pith_writer_error(w)->message);
    size_t len;
    const uint8_t *bytes = pith_writer_data(w, &len);
    pith_decode_options o = {NULL, 0, DEPTH, false, false};
    pith_error err;
    pith_doc *back = pith_decode(NULL, bytes, len, &o, &err);
    CHECK(back && pith_value_equal(pith_doc_root(back, 0), a), "decode deep: %s", err.message);
    pith_doc_free(back);
    o.max_depth = DEPTH - 1;
    back = pith_decode(NULL, bytes, len, &o, &err);
    CHECK(!back && err.code == PITH_ERR_DEPTH_EXCEEDED, "decode one level too deep");
    pith_doc_free(back);
    pith_writer_free(w);

    /* The JSON layer: the same tree without generic maps. */
    pith_buf json;
    pith_buf_init(&json, NULL);
    json_error jerr;
    pith_value *arrays = pith_doc_values(doc, 1);
    arrays->type = PITH_NULL;
    for (unsigned d = 0; d < DEPTH; d++) {
        pith_value *p = pith_doc_values(doc, 1);
        p->type = PITH_ARRAY;
        p->v.array.items = arrays;
        p->v.array.count = 1;
        arrays = p;
    }
    CHECK(json_write(arrays, NULL, &json, &jerr), "json_write deep: %s", jerr.message);
    json_read_options ro = {DEPTH};
    pith_doc *parsed = json_read(NULL, json.ptr, json.len, &ro, &jerr);
    CHECK(parsed && pith_value_equal(pith_doc_root(parsed, 0), arrays), "json_read deep: %s", jerr.message);
    pith_doc_free(parsed);
    pith_buf_free(&json);
    pith_doc_free(doc);
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
