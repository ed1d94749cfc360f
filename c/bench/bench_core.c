/*
 * bench_core.c - throughput of the C core on the seed and large documents.
 *
 * Usage: tersa_bench REPO_ROOT [SECONDS_PER_CASE]
 *
 * Documents: bench/corpus/seed, bench/corpus/large and bench/corpus/kinds.
 * ONLY=name,name limits the run to those documents.
 *
 * For each document (parsed once from JSON into a value tree):
 *   encode   tersa_writer_start + tersa_write_value (what a binding does)
 *   pull     tersa_reader_start + tersa_skip: every item decoded and validated,
 *            no objects built (the floor under a binding's decoder)
 *   tree     tersa_decode into a value tree (allocation included)
 * Rates are documents per second and MB/s of the Tersa bytes and of the
 * compact-JSON-equivalent bytes (JSON size / time), so that formats of
 * different sizes compare on the same data.
 */
#define _POSIX_C_SOURCE 200809L
#include "tersa.h"

#include "fileio.h"
#include "json.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct doc_case {
    char name[64];
    tersa_doc *doc;
    uint8_t *bytes;
    size_t len;
    size_t json_len; /* compact JSON */
} doc_case;

static volatile size_t sink;

/* Run `op` repeatedly for about `seconds`; returns operations per second. */
#define MEASURE(seconds, op)                                         \
    ({                                                               \
        size_t iters = 0, batch = 1;                                 \
        double start = now(), elapsed = 0;                           \
        while (elapsed < (seconds)) {                                \
            for (size_t b_ = 0; b_ < batch; b_++) { op; }            \
            iters += batch;                                          \
            elapsed = now() - start;                                 \
            if (elapsed < (seconds) / 20) batch *= 2;                \
        }                                                            \
        (double)iters / elapsed;                                     \
    })

static bool load(doc_case *c, const char *path, const char *name) {
    size_t len;
    uint8_t *text = read_file(path, &len);
    if (!text) return false;
    json_error jerr;
    c->doc = json_read(NULL, (const char *)text, len, NULL, &jerr);
    free(text);
    if (!c->doc) return false;
    snprintf(c->name, sizeof c->name, "%s", name);
    tersa_buf compact;
    tersa_buf_init(&compact, NULL);
    json_write(tersa_doc_root(c->doc, 0), NULL, &compact, &jerr);
    c->json_len = compact.len;
    tersa_buf_free(&compact);
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_writer_start(w, NULL, 0);
    tersa_write_value(w, tersa_doc_root(c->doc, 0));
    const uint8_t *data = tersa_writer_data(w, &c->len);
    c->bytes = (uint8_t *)malloc(c->len);
    memcpy(c->bytes, data, c->len);
    tersa_writer_free(w);
    return true;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static size_t list_dir(const char *dir, const char *suffix, char **out, size_t max) {
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < max;) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        if (l > s && strcmp(e->d_name + l - s, suffix) == 0) out[n++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    qsort(out, n, sizeof(char *), by_name);
    return n;
}

#define MAX_CASES 96

static bool wanted(const char *only, const char *name) {
    if (!only || !*only) return true;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        if (l == n && strncmp(p, name, n) == 0) return true;
        p += l + (comma ? 1 : 0);
    }
    return false;
}

/* Load the documents of bench/corpus/<sub> ending in `suffix`; returns how many. */
static size_t load_dir(doc_case *cases, size_t room, const char *root, const char *sub, const char *suffix,
                       const char *only) {
    char dir[4096], path[8192], *names[MAX_CASES];
    snprintf(dir, sizeof dir, "%s/bench/corpus/%s", root, sub);
    size_t n = list_dir(dir, suffix, names, MAX_CASES), got = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        names[i][strlen(names[i]) - strlen(suffix)] = 0;
        if (got < room && wanted(only, names[i]) && load(&cases[got], path, names[i])) got++;
        free(names[i]);
    }
    return got;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    double seconds = argc > 2 ? atof(argv[2]) : 0.5;
    doc_case cases[MAX_CASES];
    size_t ncases = 0, nseed = 0;
    const char *only = getenv("ONLY");
    ncases += load_dir(cases + ncases, MAX_CASES - ncases, root, "seed", ".json", only);
    nseed = ncases;
    ncases += load_dir(cases + ncases, MAX_CASES - ncases, root, "large", ".json.xz", only);
    ncases += load_dir(cases + ncases, MAX_CASES - ncases, root, "kinds", ".json", only);
    ncases += load_dir(cases + ncases, MAX_CASES - ncases, root, "kinds", ".json.xz", only);
    if (ncases == 0) {
        fprintf(stderr, "no documents under %s/bench/corpus\n", root);
        return 1;
    }

    tersa_writer *w = tersa_writer_new(NULL);
    tersa_reader *r = tersa_reader_new(NULL);
    printf("%-14s %8s %8s | %11s %9s %9s | %11s %9s %9s | %11s %9s\n", "document", "json B", "tersa B", "encode/s",
           "MB/s", "json MB/s", "pull/s", "MB/s", "json MB/s", "tree/s", "json MB/s");
    double gm_enc = 0, gm_pull = 0, gm_tree = 0;
    size_t seed_bytes = 0, seed_json = 0;
    for (size_t i = 0; i < ncases; i++) {
        doc_case *c = &cases[i];
        const tersa_value *root_value = tersa_doc_root(c->doc, 0);
        double enc = MEASURE(seconds, {
            tersa_writer_start(w, NULL, 0);
            tersa_write_value(w, root_value);
            size_t l;
            tersa_writer_data(w, &l);
            sink += l;
        });
        double pull = MEASURE(seconds, {
            tersa_reader_start(r, c->bytes, c->len, NULL, 0, 0);
            tersa_skip(r);
            sink += tersa_reader_finish(r);
        });
        double tree = MEASURE(seconds, {
            tersa_error err;
            tersa_doc *d = tersa_decode(NULL, c->bytes, c->len, NULL, &err);
            sink += tersa_doc_count(d);
            tersa_doc_free(d);
        });
        printf("%-14s %8zu %8zu | %11.0f %9.1f %9.1f | %11.0f %9.1f %9.1f | %11.0f %9.1f\n", c->name, c->json_len,
               c->len, enc, enc * (double)c->len / 1e6, enc * (double)c->json_len / 1e6, pull,
               pull * (double)c->len / 1e6, pull * (double)c->json_len / 1e6, tree,
               tree * (double)c->json_len / 1e6);
        if (i < nseed) {
            gm_enc += log(enc);
            gm_pull += log(pull);
            gm_tree += log(tree);
            seed_bytes += c->len;
            seed_json += c->json_len;
        }
        if (i + 1 == nseed) {
            double k = (double)nseed;
            printf("%-14s %8.0f %8.0f | %11.0f %9s %9s | %11.0f %9s %9s | %11.0f\n", "seed (geomean)",
                   (double)seed_json / k, (double)seed_bytes / k, exp(gm_enc / k), "", "", exp(gm_pull / k), "", "",
                   exp(gm_tree / k));
        }
    }
    tersa_writer_free(w);
    tersa_reader_free(r);
    for (size_t i = 0; i < ncases; i++) {
        tersa_doc_free(cases[i].doc);
        free(cases[i].bytes);
    }
    return 0;
}
