/*
 * test_vectors.c - run every conformance vector of spec/vectors.
 *
 * Usage: test_vectors REPO_ROOT
 * Fails if the vector files are missing or empty.
 */
#include "testutil.h"

#include "fileio.h"
#include "json.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ==========================================================================
 * Looking into parsed JSON
 * ========================================================================== */

static const pith_value *member(const pith_value *obj, const char *name) {
    if (!obj || obj->type != PITH_MAP) return NULL;
    size_t n = strlen(name);
    for (size_t i = 0; i < obj->v.map.count; i++) {
        const pith_value *k = &obj->v.map.keys[i];
        if (k->v.str.len == n && memcmp(k->v.str.ptr, name, n) == 0) return &obj->v.map.values[i];
    }
    return NULL;
}

static char *string_of(const pith_value *v) {
    if (!v || v->type != PITH_STRING) return NULL;
    char *s = (char *)malloc(v->v.str.len + 1);
    memcpy(s, v->v.str.ptr, v->v.str.len);
    s[v->v.str.len] = 0;
    return s;
}

static bool str_is(const pith_value *v, const char *s) {
    return v && v->type == PITH_STRING && v->v.str.len == strlen(s) && memcmp(v->v.str.ptr, s, v->v.str.len) == 0;
}

static int64_t int_of(const pith_value *v) { return v && v->type == PITH_INT ? v->v.i : -1; }

/* ==========================================================================
 * Extended JSON -> values (spec/vectors/README.md)
 * ========================================================================== */

/* Decimal text to a value (INT, UINT or BIGINT). */
static bool decimal_integer(pith_doc *doc, const char *s, size_t n, pith_value *out) {
    bool neg = n && s[0] == '-';
    size_t i = neg ? 1 : 0;
    uint8_t mag[512] = {0};
    size_t len = 1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        unsigned carry = (unsigned)(s[i] - '0');
        for (size_t j = 0; j < len; j++) {
            unsigned v = mag[j] * 10u + carry;
            mag[j] = (uint8_t)v;
            carry = v >> 8;
        }
        if (carry) {
            if (len == sizeof mag) return false;
            mag[len++] = (uint8_t)carry;
        }
    }
    while (len > 1 && mag[len - 1] == 0) len--;
    uint64_t u = 0;
    if (len <= 8) {
        for (size_t j = len; j > 0; j--) u = (u << 8) | mag[j - 1];
        if (!neg && u > (uint64_t)INT64_MAX) {
            out->type = PITH_UINT;
            out->v.u = u;
            return true;
        }
        if (!neg || u <= (1ull << 63)) {
            out->type = PITH_INT;
            out->v.i = neg ? (u == (1ull << 63) ? INT64_MIN : -(int64_t)u) : (int64_t)u;
            return true;
        }
    }
    out->type = PITH_BIGINT;
    out->v.big.negative = neg;
    out->v.big.mag = (const uint8_t *)pith_doc_bytes(doc, mag, len);
    out->v.big.len = len;
    return true;
}

static bool diag_float(const pith_value *text, double *out) {
    char *s = string_of(text);
    if (!s) return false;
    bool ok = true;
    if (strcmp(s, "NaN") == 0) {
        uint64_t bits = 0x7ff8000000000000ull;
        memcpy(out, &bits, 8);
    } else if (strncmp(s, "NaN(0x", 6) == 0) {
        uint64_t bits = strtoull(s + 6, NULL, 16);
        memcpy(out, &bits, 8);
    } else if (strcmp(s, "Infinity") == 0) {
        *out = 1.0 / 0.0;
    } else if (strcmp(s, "-Infinity") == 0) {
        *out = -1.0 / 0.0;
    } else {
        const char *end = s + strlen(s);
        ok = pith_parse_double(s, end, out) == end;
    }
    free(s);
    return ok;
}

static bool hex_bytes(pith_doc *doc, const pith_value *v, const uint8_t **ptr, size_t *len) {
    if (!v || v->type != PITH_STRING) return false;
    uint8_t *b = hex_decode(v->v.str.ptr, v->v.str.len, len);
    if (!b) return false;
    *ptr = (const uint8_t *)pith_doc_bytes(doc, b, *len);
    free(b);
    return true;
}

static bool from_xjson(pith_doc *doc, const pith_value *j, pith_value *out) {
    switch (j->type) {
    case PITH_NULL:
    case PITH_TRUE:
    case PITH_FALSE:
    case PITH_INT:
    case PITH_UINT:
    case PITH_STRING:
        *out = *j;
        return true;
    case PITH_ARRAY: {
        size_t n = j->v.array.count;
        out->type = PITH_ARRAY;
        out->v.array.items = pith_doc_values(doc, n);
        out->v.array.count = n;
        for (size_t i = 0; i < n; i++)
            if (!from_xjson(doc, &j->v.array.items[i], &out->v.array.items[i])) return false;
        return true;
    }
    case PITH_MAP:
        break;
    default:
        return false; /* plain JSON floats are not allowed in vectors */
    }
    if (j->v.map.count == 1 && j->v.map.keys[0].v.str.len && j->v.map.keys[0].v.str.ptr[0] == '$') {
        const pith_value *k = &j->v.map.keys[0], *x = &j->v.map.values[0];
        if (str_is(k, "$int")) return decimal_integer(doc, x->v.str.ptr, x->v.str.len, out);
        if (str_is(k, "$float")) {
            out->type = PITH_FLOAT;
            return diag_float(x, &out->v.f);
        }
        if (str_is(k, "$symbol")) {
            *out = *x;
            out->type = PITH_SYMBOL;
            return x->type == PITH_STRING;
        }
        if (str_is(k, "$binary")) {
            out->type = PITH_BINARY;
            return hex_bytes(doc, x, &out->v.bin.ptr, &out->v.bin.len);
        }
        if (str_is(k, "$time")) {
            out->type = PITH_TIME;
            out->v.time.seconds = int_of(member(x, "seconds"));
            out->v.time.nanos = (uint32_t)int_of(member(x, "nanos"));
            const pith_value *zone = member(x, "zone");
            out->v.time.zone = str_is(zone, "utc") ? PITH_ZONE_UTC : str_is(zone, "offset") ? PITH_ZONE_OFFSET
                                                                                           : PITH_ZONE_FLOATING;
            const pith_value *off = member(x, "offset");
            out->v.time.offset = off ? (int16_t)off->v.i : 0;
            return true;
        }
        if (str_is(k, "$ext")) {
            out->type = PITH_EXT;
            out->v.ext.type = (uint32_t)int_of(member(x, "type"));
            return hex_bytes(doc, member(x, "data"), &out->v.ext.ptr, &out->v.ext.len);
        }
        if (str_is(k, "$map")) {
            if (x->type != PITH_ARRAY) return false;
            size_t n = x->v.array.count;
            out->type = PITH_GENERIC_MAP;
            out->v.map.keys = pith_doc_values(doc, n);
            out->v.map.values = pith_doc_values(doc, n);
            out->v.map.count = n;
            for (size_t i = 0; i < n; i++) {
                const pith_value *pair = &x->v.array.items[i];
                if (pair->type != PITH_ARRAY || pair->v.array.count != 2) return false;
                if (!from_xjson(doc, &pair->v.array.items[0], &out->v.map.keys[i]) ||
                    !from_xjson(doc, &pair->v.array.items[1], &out->v.map.values[i]))
                    return false;
            }
            return true;
        }
        return false;
    }
    size_t n = j->v.map.count;
    out->type = PITH_MAP;
    out->v.map.keys = pith_doc_values(doc, n);
    out->v.map.values = pith_doc_values(doc, n);
    out->v.map.count = n;
    for (size_t i = 0; i < n; i++) {
        out->v.map.keys[i] = j->v.map.keys[i];
        if (!from_xjson(doc, &j->v.map.values[i], &out->v.map.values[i])) return false;
    }
    return true;
}

/* ==========================================================================
 * Dictionaries
 * ========================================================================== */

#define MAX_DICTS 32
static struct {
    char *name;
    pith_dict *dict;
} dicts[MAX_DICTS];
static size_t ndicts;

static pith_dict *find_dict(const pith_value *name) {
    for (size_t i = 0; name && i < ndicts; i++)
        if (str_is(name, dicts[i].name)) return dicts[i].dict;
    return NULL;
}

static pith_dict *generated_dict(size_t nstrings, size_t nshapes) {
    pith_key *strings = (pith_key *)calloc(nstrings + 1, sizeof(pith_key));
    pith_key *keys = (pith_key *)calloc(nshapes + 1, sizeof(pith_key));
    size_t *lens = (size_t *)calloc(nshapes + 1, sizeof(size_t));
    char *text = (char *)malloc(16 * (nstrings + nshapes) + 1);
    char *p = text;
    for (size_t i = 0; i < nstrings; i++) {
        int n = sprintf(p, "s%zu", i);
        strings[i] = (pith_key){p, (size_t)n, false};
        p += n;
    }
    for (size_t i = 0; i < nshapes; i++) {
        int n = sprintf(p, "k%zu", i);
        keys[i] = (pith_key){p, (size_t)n, false};
        lens[i] = 1;
        p += n;
    }
    pith_error err;
    pith_dict *d = pith_dict_new(NULL, strings, nstrings, keys, lens, nshapes, &err);
    free(strings);
    free(keys);
    free(lens);
    free(text);
    return d;
}

static void load_dictionaries(const char *root) {
    char path[4096];
    snprintf(path, sizeof path, "%s/spec/vectors/dictionaries.json", root);
    size_t len;
    uint8_t *text = read_file(path, &len);
    CHECK(text, "cannot read %s", path);
    if (!text) return;
    json_error jerr;
    pith_doc *doc = json_read(NULL, (const char *)text, len, NULL, &jerr);
    free(text);
    CHECK(doc, "%s: %s", path, jerr.message);
    if (!doc) return;
    const pith_value *all = member(pith_doc_root(doc, 0), "dictionaries");
    for (size_t i = 0; all && i < all->v.map.count && ndicts < MAX_DICTS; i++) {
        const pith_value *spec = &all->v.map.values[i];
        const pith_value *gen = member(spec, "generate");
        pith_dict *d = NULL;
        if (gen) {
            d = generated_dict((size_t)int_of(member(gen, "strings")), (size_t)int_of(member(gen, "shapes")));
        } else {
            const pith_value *ss = member(spec, "strings"), *sh = member(spec, "shapes");
            size_t nk = 0;
            for (size_t s = 0; s < sh->v.array.count; s++) nk += sh->v.array.items[s].v.array.count;
            pith_key *strings = (pith_key *)calloc(ss->v.array.count + 1, sizeof(pith_key));
            pith_key *keys = (pith_key *)calloc(nk + 1, sizeof(pith_key));
            size_t *lens = (size_t *)calloc(sh->v.array.count + 1, sizeof(size_t));
            for (size_t s = 0; s < ss->v.array.count; s++)
                strings[s] = (pith_key){ss->v.array.items[s].v.str.ptr, ss->v.array.items[s].v.str.len, false};
            size_t k = 0;
            pith_doc *tmp = pith_doc_new(NULL);
            for (size_t s = 0; s < sh->v.array.count; s++) {
                lens[s] = sh->v.array.items[s].v.array.count;
                for (size_t j = 0; j < lens[s]; j++) {
                    pith_value kv;
                    from_xjson(tmp, &sh->v.array.items[s].v.array.items[j], &kv);
                    keys[k++] = (pith_key){kv.v.str.ptr, kv.v.str.len, kv.type == PITH_SYMBOL};
                }
            }
            pith_error err;
            d = pith_dict_new(NULL, strings, ss->v.array.count, keys, lens, sh->v.array.count, &err);
            CHECK(d, "dictionary: %s", err.message);
            if (d) {
                size_t slen, hlen;
                const uint8_t *ser = pith_dict_serialized(d, &slen);
                uint8_t *want = hex_decode(member(spec, "serialized")->v.str.ptr, member(spec, "serialized")->v.str.len,
                                           &hlen);
                CHECK(want && hlen == slen && memcmp(want, ser, slen) == 0, "dictionary serialization differs");
                pith_dict *parsed = pith_dict_parse(NULL, ser, slen, &err);
                CHECK(parsed && pith_dict_id(parsed) == pith_dict_id(d), "dictionary parse");
                pith_dict_free(parsed);
                free(want);
            }
            pith_doc_free(tmp);
            free(strings);
            free(keys);
            free(lens);
        }
        char *name = string_of(&all->v.map.keys[i]);
        char *idhex = string_of(member(spec, "id"));
        CHECK(d && idhex && strtoull(idhex, NULL, 16) == pith_dict_id(d), "dictionary %s id: want %s got %016llx",
              name, idhex ? idhex : "?", d ? (unsigned long long)pith_dict_id(d) : 0ull);
        free(idhex);
        dicts[ndicts].name = name;
        dicts[ndicts].dict = d;
        ndicts++;
    }
    pith_doc_free(doc);
}

/* ==========================================================================
 * Running vectors
 * ========================================================================== */

static unsigned long vectors_run;

/* A stream vector's sync options (vectors README): `sync_before` lists the
 * values that get a sync frame on request. */
typedef struct sync_options {
    uint64_t frames, bytes;
    const pith_value *before;
} sync_options;

static bool sync_requested(const sync_options *so, size_t i) {
    for (size_t k = 0; so->before && k < so->before->v.array.count; k++)
        if ((size_t)so->before->v.array.items[k].v.i == i) return true;
    return false;
}

static uint8_t *encode_all(const pith_value *values, size_t n, bool stream, const pith_dict *dict,
                           const sync_options *so, size_t *len, pith_error *err) {
    pith_writer *w = pith_writer_new(NULL);
    pith_writer_set_sync(w, so->frames, so->bytes);
    bool ok = pith_writer_start(w, dict, stream ? PITH_WRITE_STREAM : 0);
    for (size_t i = 0; ok && i < n; i++) {
        if (stream && sync_requested(so, i)) pith_writer_sync(w);
        if (stream) ok = pith_write_frame_begin(w);
        ok = ok && pith_write_value(w, &values[i]);
        if (stream) ok = ok && pith_write_frame_end(w);
    }
    uint8_t *out = NULL;
    if (ok) {
        const uint8_t *data = pith_writer_data(w, len);
        out = (uint8_t *)malloc(*len + 1);
        memcpy(out, data, *len);
    } else {
        *err = *pith_writer_error(w);
    }
    pith_writer_free(w);
    return out;
}

static void run_valid(const char *file, const pith_value *vec) {
    char *name = string_of(member(vec, "name"));
    bool join = member(vec, "join") && member(vec, "join")->type == PITH_TRUE;
    bool stream = join || (member(vec, "stream") && member(vec, "stream")->type == PITH_TRUE);
    const pith_dict *dict = find_dict(member(vec, "dictionary"));
    CHECK(!member(vec, "dictionary") || dict, "%s: %s: unknown dictionary", file, name);
    size_t len;
    const pith_value *hexv = member(vec, "hex");
    uint8_t *bytes = hex_decode(hexv->v.str.ptr, hexv->v.str.len, &len);

    pith_doc *tmp = pith_doc_new(NULL);
    const pith_value *xs = stream ? member(vec, "values") : member(vec, "value");
    size_t n = stream ? xs->v.array.count : 1;
    pith_value *want = pith_doc_values(tmp, n);
    bool built = true;
    for (size_t i = 0; i < n; i++) built &= from_xjson(tmp, stream ? &xs->v.array.items[i] : xs, &want[i]);
    CHECK(built, "%s: %s: cannot read the expected value", file, name);

    const pith_dict *ds[1] = {dict};
    pith_decode_options o = {ds, dict ? 1 : 0, 0, stream && !join, join};
    pith_error err;
    pith_doc *got = pith_decode(NULL, bytes ? bytes : (const uint8_t *)"", len, &o, &err);
    CHECK(got, "%s: %s: decode failed: %s at %zu", file, name, pith_code_name(err.code), err.offset);
    if (got && join) {
        const pith_value *want_at = member(vec, "joined_at");
        size_t at;
        bool joined = pith_doc_joined(got, &at);
        CHECK(want_at && (want_at->type == PITH_NULL ? !joined : joined && (int64_t)at == want_at->v.i),
              "%s: %s: joined_at", file, name);
    }
    if (got && built) {
        CHECK(pith_doc_count(got) == n, "%s: %s: %zu values", file, name, pith_doc_count(got));
        const pith_value *diags = stream ? member(vec, "diags") : member(vec, "diag");
        for (size_t i = 0; i < n && i < pith_doc_count(got); i++) {
            CHECK(pith_value_equal(pith_doc_root(got, i), &want[i]), "%s: %s: decoded value differs", file, name);
            char *d = diag_of(pith_doc_root(got, i));
            char *wd = string_of(stream ? &diags->v.array.items[i] : diags);
            CHECK(d && wd && strcmp(d, wd) == 0, "%s: %s: diag\n   want %.200s\n   got  %.200s", file, name, wd, d);
            free(d);
            free(wd);
        }
    }
    pith_doc_free(got);

    const pith_value *canon = member(vec, "canonical");
    const pith_value *expected_hex = canon && canon->type == PITH_TRUE ? hexv : member(vec, "canonical_hex");
    if (join) { /* a join has no encoding of its own: its frames come from a stream vector */
        pith_doc_free(tmp);
        free(bytes);
        free(name);
        vectors_run++;
        return;
    }
    const pith_value *sf = member(vec, "sync_frames"), *sb = member(vec, "sync_bytes");
    sync_options so = {sf ? (uint64_t)sf->v.i : 0, sb ? (uint64_t)sb->v.i : 0, member(vec, "sync_before")};
    size_t elen;
    uint8_t *enc = built ? encode_all(want, n, stream, dict, &so, &elen, &err) : NULL;
    CHECK(enc, "%s: %s: encode failed: %s", file, name, built ? err.message : "no value");
    if (enc) {
        char *h = hex_encode(enc, elen);
        CHECK(expected_hex->v.str.len == 2 * elen && memcmp(h, expected_hex->v.str.ptr, 2 * elen) == 0,
              "%s: %s: canonical bytes differ\n   want %.*s\n   got  %.200s", file, name,
              (int)(expected_hex->v.str.len < 200 ? expected_hex->v.str.len : 200), expected_hex->v.str.ptr, h);
        free(h);
        free(enc);
    }
    pith_doc_free(tmp);
    free(bytes);
    free(name);
    vectors_run++;
}

static void run_fail(const pith_value *vec) {
    char *name = string_of(member(vec, "name"));
    bool stream = member(vec, "stream") && member(vec, "stream")->type == PITH_TRUE;
    bool join = member(vec, "join") && member(vec, "join")->type == PITH_TRUE;
    const pith_dict *dict = find_dict(member(vec, "dictionary"));
    const pith_value *hexv = member(vec, "hex");
    size_t len;
    uint8_t *bytes = hex_decode(hexv->v.str.ptr, hexv->v.str.len, &len);
    const pith_dict *ds[1] = {dict};
    const pith_value *md = member(vec, "max_depth");
    pith_decode_options o = {ds, dict ? 1 : 0, md ? (uint32_t)md->v.i : 0, stream, join};
    pith_error err;
    pith_doc *got = pith_decode(NULL, bytes ? bytes : (const uint8_t *)"", len, &o, &err);
    char *code = string_of(member(vec, "error"));
    int64_t offset = int_of(member(vec, "offset"));
    CHECK(!got && strcmp(pith_code_name(err.code), code) == 0 && (int64_t)err.offset == offset,
          "invalid: %s: want %s@%lld, got %s@%zu", name, code, (long long)offset,
          got ? "success" : pith_code_name(err.code), got ? 0 : err.offset);
    pith_doc_free(got);
    free(code);
    free(bytes);
    free(name);
    vectors_run++;
}

static void run_file(const char *path, bool valid) {
    size_t len;
    uint8_t *text = read_file(path, &len);
    CHECK(text, "cannot read %s", path);
    if (!text) return;
    json_error jerr;
    json_read_options ro = {2000};
    pith_doc *doc = json_read(NULL, (const char *)text, len, &ro, &jerr);
    free(text);
    CHECK(doc, "%s: %s at %zu", path, jerr.message, jerr.offset);
    if (!doc) return;
    const pith_value *vectors = member(pith_doc_root(doc, 0), "vectors");
    CHECK(vectors && vectors->v.array.count > 0, "%s: no vectors", path);
    for (size_t i = 0; vectors && i < vectors->v.array.count; i++) {
        if (valid)
            run_valid(path, &vectors->v.array.items[i]);
        else
            run_fail(&vectors->v.array.items[i]);
    }
    pith_doc_free(doc);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    load_dictionaries(root);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/spec/vectors/valid", root);
    DIR *d = opendir(dir);
    CHECK(d, "the vectors directory %s is missing", dir);
    char *files[256];
    size_t nfiles = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0 && nfiles < 256) {
            files[nfiles] = (char *)malloc(strlen(dir) + n + 2);
            sprintf(files[nfiles++], "%s/%s", dir, e->d_name);
        }
    }
    if (d) closedir(d);
    qsort(files, nfiles, sizeof(char *), by_name);
    CHECK(nfiles > 0, "no vector files in %s", dir);
    for (size_t i = 0; i < nfiles; i++) {
        run_file(files[i], true);
        free(files[i]);
    }
    unsigned long valid_run = vectors_run;
    char invalid[4096];
    snprintf(invalid, sizeof invalid, "%s/spec/vectors/invalid/invalid.json", root);
    run_file(invalid, false);
    printf("%lu valid and %lu must-fail vectors\n", valid_run, vectors_run - valid_run);
    CHECK(valid_run >= 300 && vectors_run - valid_run >= 100, "too few vectors ran");
    for (size_t i = 0; i < ndicts; i++) {
        pith_dict_free(dicts[i].dict);
        free(dicts[i].name);
    }
    return test_summary("test_vectors");
}
