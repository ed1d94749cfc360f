/*
 * test_corpus.c - the seed and large corpora encode to exactly their
 * committed canonical bytes (spec/vectors/corpus) and decode back exactly.
 *
 * Usage: test_corpus REPO_ROOT
 */
#include "testutil.h"

#include "fileio.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

static const tersa_value *member(const tersa_value *obj, const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; obj && obj->type == TERSA_MAP && i < obj->v.map.count; i++) {
        const tersa_value *k = &obj->v.map.keys[i];
        if (k->v.str.len == n && memcmp(k->v.str.ptr, name, n) == 0) return &obj->v.map.values[i];
    }
    return NULL;
}

static char *path_of(const char *root, const tersa_value *rel) {
    char *p = (char *)malloc(strlen(root) + rel->v.str.len + 2);
    sprintf(p, "%s/%.*s", root, (int)rel->v.str.len, rel->v.str.ptr);
    return p;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    char manifest[4096];
    snprintf(manifest, sizeof manifest, "%s/spec/vectors/corpus/manifest.json", root);
    size_t len;
    uint8_t *text = read_file(manifest, &len);
    CHECK(text, "cannot read %s", manifest);
    if (!text) return test_summary("test_corpus");
    json_error jerr;
    tersa_doc *m = json_read(NULL, (const char *)text, len, NULL, &jerr);
    free(text);
    const tersa_value *docs = member(tersa_doc_root(m, 0), "documents");
    CHECK(docs && docs->v.array.count >= 14, "manifest lists the eleven seed and three large documents");
    size_t seed_total = 0, seed_count = 0;
    for (size_t i = 0; docs && i < docs->v.array.count; i++) {
        const tersa_value *d = &docs->v.array.items[i];
        char *json_path = path_of(root, member(d, "json")), *tersa_path = path_of(root, member(d, "tersa"));
        const tersa_value *name = member(d, "name"), *kind = member(d, "kind");
        size_t jlen, plen;
        uint8_t *jtext = read_file(json_path, &jlen);
        uint8_t *want = read_file(tersa_path, &plen);
        CHECK(jtext && want, "cannot read %s or %s", json_path, tersa_path);
        tersa_doc *jdoc = jtext ? json_read(NULL, (const char *)jtext, jlen, NULL, &jerr) : NULL;
        CHECK(jdoc, "%s: %s", json_path, jerr.message);
        if (jdoc && want) {
            tersa_error err;
            size_t elen;
            uint8_t *got = encode_value(tersa_doc_root(jdoc, 0), NULL, &elen, &err);
            CHECK(got && elen == plen && memcmp(got, want, plen) == 0, "%.*s: canonical bytes differ (%zu vs %zu)",
                  (int)name->v.str.len, name->v.str.ptr, elen, plen);
            tersa_doc *back = tersa_decode(NULL, want, plen, NULL, &err);
            check_scalar_runs(json_path, want, plen, NULL, 0);
            CHECK(back && tersa_value_equal(tersa_doc_root(back, 0), tersa_doc_root(jdoc, 0)),
                  "%.*s: decoding the canonical bytes does not give the document back", (int)name->v.str.len,
                  name->v.str.ptr);
            printf("%-8.*s %-14.*s json %8zu  tersa %8zu  (%.3f)\n", (int)kind->v.str.len, kind->v.str.ptr,
                   (int)name->v.str.len, name->v.str.ptr, jlen, plen, (double)plen / (double)jlen);
            if (kind->v.str.len == 4 && memcmp(kind->v.str.ptr, "seed", 4) == 0) {
                seed_total += plen;
                seed_count++;
            }
            tersa_doc_free(back);
            free(got);
        }
        tersa_doc_free(jdoc);
        free(jtext);
        free(want);
        free(json_path);
        free(tersa_path);
    }
    if (seed_count) printf("seed average: %.1f bytes\n", (double)seed_total / (double)seed_count);
    CHECK(seed_count == 11, "eleven seed documents");
    tersa_doc_free(m);
    return test_summary("test_corpus");
}
