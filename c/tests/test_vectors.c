/*
 * test_vectors.c - run every conformance vector of spec/vectors.
 *
 * Usage: test_vectors REPO_ROOT
 * Fails if the vector files are missing or empty.
 */
#include "testutil.h"

#include "fileio.h"
#include "json.h"
#include "xwellknown.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* ==========================================================================
 * Looking into parsed JSON
 * ========================================================================== */

static const tersa_value *member(const tersa_value *obj, const char *name) {
    if (!obj || obj->type != TERSA_MAP) return NULL;
    size_t n = strlen(name);
    for (size_t i = 0; i < obj->v.map.count; i++) {
        const tersa_value *k = &obj->v.map.keys[i];
        if (k->v.str.len == n && memcmp(k->v.str.ptr, name, n) == 0) return &obj->v.map.values[i];
    }
    return NULL;
}

static char *string_of(const tersa_value *v) {
    if (!v || v->type != TERSA_STRING) return NULL;
    char *s = (char *)malloc(v->v.str.len + 1);
    memcpy(s, v->v.str.ptr, v->v.str.len);
    s[v->v.str.len] = 0;
    return s;
}

static bool str_is(const tersa_value *v, const char *s) {
    return v && v->type == TERSA_STRING && v->v.str.len == strlen(s) && memcmp(v->v.str.ptr, s, v->v.str.len) == 0;
}

static int64_t int_of(const tersa_value *v) { return v && v->type == TERSA_INT ? v->v.i : -1; }

/* ==========================================================================
 * Extended JSON -> values (spec/vectors/README.md)
 * ========================================================================== */

/* Decimal text to a value (INT, UINT or BIGINT). */
static bool decimal_integer(tersa_doc *doc, const char *s, size_t n, tersa_value *out) {
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
            out->type = TERSA_UINT;
            out->v.u = u;
            return true;
        }
        if (!neg || u <= (1ull << 63)) {
            out->type = TERSA_INT;
            out->v.i = neg ? (u == (1ull << 63) ? INT64_MIN : -(int64_t)u) : (int64_t)u;
            return true;
        }
    }
    out->type = TERSA_BIGINT;
    out->v.big.negative = neg;
    out->v.big.mag = (const uint8_t *)tersa_doc_bytes(doc, mag, len);
    out->v.big.len = len;
    return true;
}

static bool diag_float(const tersa_value *text, double *out) {
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
        ok = tersa_parse_double(s, end, out) == end;
    }
    free(s);
    return ok;
}

static bool hex_bytes(tersa_doc *doc, const tersa_value *v, const uint8_t **ptr, size_t *len) {
    if (!v || v->type != TERSA_STRING) return false;
    uint8_t *b = hex_decode(v->v.str.ptr, v->v.str.len, len);
    if (!b) return false;
    *ptr = (const uint8_t *)tersa_doc_bytes(doc, b, *len);
    free(b);
    return true;
}

static bool from_xjson(tersa_doc *doc, const tersa_value *j, tersa_value *out) {
    switch (j->type) {
    case TERSA_NULL:
    case TERSA_TRUE:
    case TERSA_FALSE:
    case TERSA_INT:
    case TERSA_UINT:
    case TERSA_STRING:
        *out = *j;
        return true;
    case TERSA_ARRAY: {
        size_t n = j->v.array.count;
        out->type = TERSA_ARRAY;
        out->v.array.items = tersa_doc_values(doc, n);
        out->v.array.count = n;
        for (size_t i = 0; i < n; i++)
            if (!from_xjson(doc, &j->v.array.items[i], &out->v.array.items[i])) return false;
        return true;
    }
    case TERSA_MAP:
        break;
    default:
        return false; /* plain JSON floats are not allowed in vectors */
    }
    if (j->v.map.count == 1 && j->v.map.keys[0].v.str.len && j->v.map.keys[0].v.str.ptr[0] == '$') {
        const tersa_value *k = &j->v.map.keys[0], *x = &j->v.map.values[0];
        if (str_is(k, "$int")) return decimal_integer(doc, x->v.str.ptr, x->v.str.len, out);
        if (str_is(k, "$float")) {
            out->type = TERSA_FLOAT;
            return diag_float(x, &out->v.f);
        }
        if (str_is(k, "$symbol")) {
            *out = *x;
            out->type = TERSA_SYMBOL;
            return x->type == TERSA_STRING;
        }
        if (str_is(k, "$binary")) {
            out->type = TERSA_BINARY;
            return hex_bytes(doc, x, &out->v.bin.ptr, &out->v.bin.len);
        }
        if (str_is(k, "$time")) {
            out->type = TERSA_TIME;
            out->v.time.seconds = int_of(member(x, "seconds"));
            out->v.time.nanos = (uint32_t)int_of(member(x, "nanos"));
            const tersa_value *zone = member(x, "zone");
            out->v.time.zone = str_is(zone, "utc") ? TERSA_ZONE_UTC : str_is(zone, "offset") ? TERSA_ZONE_OFFSET
                                                                                           : TERSA_ZONE_FLOATING;
            const tersa_value *off = member(x, "offset");
            out->v.time.offset = off ? (int16_t)off->v.i : 0;
            return true;
        }
        if (str_is(k, "$ext")) {
            out->type = TERSA_EXT;
            out->v.ext.type = (uint32_t)int_of(member(x, "type"));
            return hex_bytes(doc, member(x, "data"), &out->v.ext.ptr, &out->v.ext.len);
        }
        uint32_t wk = x_well_known_type(k->v.str.ptr, k->v.str.len);
        if (wk) {
            uint8_t payload[X_WELL_KNOWN_MAX];
            size_t n = x->type == TERSA_STRING ? x_well_known_payload(wk, x->v.str.ptr, x->v.str.len, payload) : 0;
            out->type = TERSA_EXT;
            out->v.ext.type = wk;
            out->v.ext.ptr = (const uint8_t *)tersa_doc_bytes(doc, payload, n);
            out->v.ext.len = n;
            return n > 0;
        }
        if (str_is(k, "$map")) {
            if (x->type != TERSA_ARRAY) return false;
            size_t n = x->v.array.count;
            out->type = TERSA_GENERIC_MAP;
            out->v.map.keys = tersa_doc_values(doc, n);
            out->v.map.values = tersa_doc_values(doc, n);
            out->v.map.count = n;
            for (size_t i = 0; i < n; i++) {
                const tersa_value *pair = &x->v.array.items[i];
                if (pair->type != TERSA_ARRAY || pair->v.array.count != 2) return false;
                if (!from_xjson(doc, &pair->v.array.items[0], &out->v.map.keys[i]) ||
                    !from_xjson(doc, &pair->v.array.items[1], &out->v.map.values[i]))
                    return false;
            }
            return true;
        }
        return false;
    }
    size_t n = j->v.map.count;
    out->type = TERSA_MAP;
    out->v.map.keys = tersa_doc_values(doc, n);
    out->v.map.values = tersa_doc_values(doc, n);
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
    tersa_dict *dict;
} dicts[MAX_DICTS];
static size_t ndicts;

static tersa_dict *find_dict(const tersa_value *name) {
    for (size_t i = 0; name && i < ndicts; i++)
        if (str_is(name, dicts[i].name)) return dicts[i].dict;
    return NULL;
}

static tersa_dict *generated_dict(size_t nstrings, size_t nshapes) {
    tersa_key *strings = (tersa_key *)calloc(nstrings + 1, sizeof(tersa_key));
    tersa_key *keys = (tersa_key *)calloc(nshapes + 1, sizeof(tersa_key));
    size_t *lens = (size_t *)calloc(nshapes + 1, sizeof(size_t));
    char *text = (char *)malloc(16 * (nstrings + nshapes) + 1);
    char *p = text;
    for (size_t i = 0; i < nstrings; i++) {
        int n = sprintf(p, "s%zu", i);
        strings[i] = (tersa_key){p, (size_t)n, false};
        p += n;
    }
    for (size_t i = 0; i < nshapes; i++) {
        int n = sprintf(p, "k%zu", i);
        keys[i] = (tersa_key){p, (size_t)n, false};
        lens[i] = 1;
        p += n;
    }
    tersa_error err;
    tersa_dict *d = tersa_dict_new(NULL, strings, nstrings, keys, lens, nshapes, &err);
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
    tersa_doc *doc = json_read(NULL, (const char *)text, len, NULL, &jerr);
    free(text);
    CHECK(doc, "%s: %s", path, jerr.message);
    if (!doc) return;
    const tersa_value *all = member(tersa_doc_root(doc, 0), "dictionaries");
    for (size_t i = 0; all && i < all->v.map.count && ndicts < MAX_DICTS; i++) {
        const tersa_value *spec = &all->v.map.values[i];
        const tersa_value *gen = member(spec, "generate");
        tersa_dict *d = NULL;
        if (gen) {
            d = generated_dict((size_t)int_of(member(gen, "strings")), (size_t)int_of(member(gen, "shapes")));
        } else {
            const tersa_value *ss = member(spec, "strings"), *sh = member(spec, "shapes");
            size_t nk = 0;
            for (size_t s = 0; s < sh->v.array.count; s++) nk += sh->v.array.items[s].v.array.count;
            tersa_key *strings = (tersa_key *)calloc(ss->v.array.count + 1, sizeof(tersa_key));
            tersa_key *keys = (tersa_key *)calloc(nk + 1, sizeof(tersa_key));
            size_t *lens = (size_t *)calloc(sh->v.array.count + 1, sizeof(size_t));
            for (size_t s = 0; s < ss->v.array.count; s++)
                strings[s] = (tersa_key){ss->v.array.items[s].v.str.ptr, ss->v.array.items[s].v.str.len, false};
            size_t k = 0;
            tersa_doc *tmp = tersa_doc_new(NULL);
            for (size_t s = 0; s < sh->v.array.count; s++) {
                lens[s] = sh->v.array.items[s].v.array.count;
                for (size_t j = 0; j < lens[s]; j++) {
                    tersa_value kv;
                    from_xjson(tmp, &sh->v.array.items[s].v.array.items[j], &kv);
                    keys[k++] = (tersa_key){kv.v.str.ptr, kv.v.str.len, kv.type == TERSA_SYMBOL};
                }
            }
            tersa_error err;
            d = tersa_dict_new(NULL, strings, ss->v.array.count, keys, lens, sh->v.array.count, &err);
            CHECK(d, "dictionary: %s", err.message);
            if (d) {
                size_t slen, hlen;
                const uint8_t *ser = tersa_dict_serialized(d, &slen);
                uint8_t *want = hex_decode(member(spec, "serialized")->v.str.ptr, member(spec, "serialized")->v.str.len,
                                           &hlen);
                CHECK(want && hlen == slen && memcmp(want, ser, slen) == 0, "dictionary serialization differs");
                tersa_dict *parsed = tersa_dict_parse(NULL, ser, slen, &err);
                CHECK(parsed && tersa_dict_id(parsed) == tersa_dict_id(d), "dictionary parse");
                tersa_dict_free(parsed);
                free(want);
            }
            tersa_doc_free(tmp);
            free(strings);
            free(keys);
            free(lens);
        }
        char *name = string_of(&all->v.map.keys[i]);
        char *idhex = string_of(member(spec, "id"));
        CHECK(d && idhex && strtoull(idhex, NULL, 16) == tersa_dict_id(d), "dictionary %s id: want %s got %016llx",
              name, idhex ? idhex : "?", d ? (unsigned long long)tersa_dict_id(d) : 0ull);
        free(idhex);
        dicts[ndicts].name = name;
        dicts[ndicts].dict = d;
        ndicts++;
    }
    tersa_doc_free(doc);
}

/* ==========================================================================
 * Running vectors
 * ========================================================================== */

static unsigned long vectors_run;

/* A stream vector's sync options (vectors README): `sync_before` lists the
 * values that get a sync frame on request. */
typedef struct sync_options {
    uint64_t frames, bytes;
    const tersa_value *before;
} sync_options;

static bool sync_requested(const sync_options *so, size_t i) {
    for (size_t k = 0; so->before && k < so->before->v.array.count; k++)
        if ((size_t)so->before->v.array.items[k].v.i == i) return true;
    return false;
}

static uint8_t *encode_all(const tersa_value *values, size_t n, bool stream, const tersa_dict *dict,
                           const sync_options *so, size_t *len, tersa_error *err) {
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_writer_set_sync(w, so->frames, so->bytes);
    bool ok = tersa_writer_start(w, dict, stream ? TERSA_WRITE_STREAM : 0);
    for (size_t i = 0; ok && i < n; i++) {
        if (stream && sync_requested(so, i)) tersa_writer_sync(w);
        if (stream) ok = tersa_write_frame_begin(w);
        ok = ok && tersa_write_value(w, &values[i]);
        if (stream) ok = ok && tersa_write_frame_end(w);
    }
    uint8_t *out = NULL;
    if (ok) {
        const uint8_t *data = tersa_writer_data(w, len);
        out = (uint8_t *)malloc(*len + 1);
        memcpy(out, data, *len);
    } else {
        *err = *tersa_writer_error(w);
    }
    tersa_writer_free(w);
    return out;
}

static void run_valid(const char *file, const tersa_value *vec) {
    char *name = string_of(member(vec, "name"));
    bool join = member(vec, "join") && member(vec, "join")->type == TERSA_TRUE;
    bool stream = join || (member(vec, "stream") && member(vec, "stream")->type == TERSA_TRUE);
    const tersa_dict *dict = find_dict(member(vec, "dictionary"));
    CHECK(!member(vec, "dictionary") || dict, "%s: %s: unknown dictionary", file, name);
    size_t len;
    const tersa_value *hexv = member(vec, "hex");
    uint8_t *bytes = hex_decode(hexv->v.str.ptr, hexv->v.str.len, &len);

    tersa_doc *tmp = tersa_doc_new(NULL);
    const tersa_value *xs = stream ? member(vec, "values") : member(vec, "value");
    size_t n = stream ? xs->v.array.count : 1;
    tersa_value *want = tersa_doc_values(tmp, n);
    bool built = true;
    for (size_t i = 0; i < n; i++) built &= from_xjson(tmp, stream ? &xs->v.array.items[i] : xs, &want[i]);
    CHECK(built, "%s: %s: cannot read the expected value", file, name);

    const tersa_dict *ds[1] = {dict};
    tersa_decode_options o = {ds, dict ? 1 : 0, 0, stream && !join, join};
    tersa_error err;
    tersa_doc *got = tersa_decode(NULL, bytes ? bytes : (const uint8_t *)"", len, &o, &err);
    CHECK(got, "%s: %s: decode failed: %s at %zu", file, name, tersa_code_name(err.code), err.offset);
    if (!stream) check_scalar_runs(name, bytes ? bytes : (const uint8_t *)"", len, dict, 0);
    if (got && join) {
        const tersa_value *want_at = member(vec, "joined_at");
        size_t at;
        bool joined = tersa_doc_joined(got, &at);
        CHECK(want_at && (want_at->type == TERSA_NULL ? !joined : joined && (int64_t)at == want_at->v.i),
              "%s: %s: joined_at", file, name);
    }
    if (got && built) {
        CHECK(tersa_doc_count(got) == n, "%s: %s: %zu values", file, name, tersa_doc_count(got));
        const tersa_value *diags = stream ? member(vec, "diags") : member(vec, "diag");
        for (size_t i = 0; i < n && i < tersa_doc_count(got); i++) {
            CHECK(tersa_value_equal(tersa_doc_root(got, i), &want[i]), "%s: %s: decoded value differs", file, name);
            char *d = diag_of(tersa_doc_root(got, i));
            char *wd = string_of(stream ? &diags->v.array.items[i] : diags);
            CHECK(d && wd && strcmp(d, wd) == 0, "%s: %s: diag\n   want %.200s\n   got  %.200s", file, name, wd, d);
            free(d);
            free(wd);
        }
    }
    tersa_doc_free(got);

    const tersa_value *canon = member(vec, "canonical");
    const tersa_value *expected_hex = canon && canon->type == TERSA_TRUE ? hexv : member(vec, "canonical_hex");
    if (join) { /* a join has no encoding of its own: its frames come from a stream vector */
        tersa_doc_free(tmp);
        free(bytes);
        free(name);
        vectors_run++;
        return;
    }
    const tersa_value *sf = member(vec, "sync_frames"), *sb = member(vec, "sync_bytes");
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
    tersa_doc_free(tmp);
    free(bytes);
    free(name);
    vectors_run++;
}

static void run_fail(const tersa_value *vec) {
    char *name = string_of(member(vec, "name"));
    bool stream = member(vec, "stream") && member(vec, "stream")->type == TERSA_TRUE;
    bool join = member(vec, "join") && member(vec, "join")->type == TERSA_TRUE;
    const tersa_dict *dict = find_dict(member(vec, "dictionary"));
    const tersa_value *hexv = member(vec, "hex");
    size_t len;
    uint8_t *bytes = hex_decode(hexv->v.str.ptr, hexv->v.str.len, &len);
    const tersa_dict *ds[1] = {dict};
    const tersa_value *md = member(vec, "max_depth");
    tersa_decode_options o = {ds, dict ? 1 : 0, md ? (uint32_t)md->v.i : 0, stream, join};
    tersa_error err;
    tersa_doc *got = tersa_decode(NULL, bytes ? bytes : (const uint8_t *)"", len, &o, &err);
    if (!stream && !join) check_scalar_runs(name, bytes ? bytes : (const uint8_t *)"", len, dict, md ? (uint32_t)md->v.i : 0);
    char *code = string_of(member(vec, "error"));
    int64_t offset = int_of(member(vec, "offset"));
    CHECK(!got && strcmp(tersa_code_name(err.code), code) == 0 && (int64_t)err.offset == offset,
          "invalid: %s: want %s@%lld, got %s@%zu", name, code, (long long)offset,
          got ? "success" : tersa_code_name(err.code), got ? 0 : err.offset);
    tersa_doc_free(got);
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
    tersa_doc *doc = json_read(NULL, (const char *)text, len, &ro, &jerr);
    free(text);
    CHECK(doc, "%s: %s at %zu", path, jerr.message, jerr.offset);
    if (!doc) return;
    const tersa_value *vectors = member(tersa_doc_root(doc, 0), "vectors");
    CHECK(vectors && vectors->v.array.count > 0, "%s: no vectors", path);
    for (size_t i = 0; vectors && i < vectors->v.array.count; i++) {
        if (valid)
            run_valid(path, &vectors->v.array.items[i]);
        else
            run_fail(&vectors->v.array.items[i]);
    }
    tersa_doc_free(doc);
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
        tersa_dict_free(dicts[i].dict);
        free(dicts[i].name);
    }
    return test_summary("test_vectors");
}
