/*
 * test_json.c - the CLI's JSON reader and writer (c/cli/json_read.c, json_write.c).
 *
 * Usage: test_json <repository root>
 *
 * Reader: every value kind, escapes, UTF-8 validation, errors with offset,
 * line and column, duplicate keys, depth, big integers, sequences. Writer:
 * every value kind and option, exact output, error paths, pretty printing.
 * Round trips: random documents and the seed corpus (bench/corpus/seed) written and
 * re-read give equal documents. Allocation failures at every step are
 * reported cleanly.
 */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            if (failures < 60) {                           \
                printf("FAIL %s:%d: ", __FILE__, __LINE__); \
                printf(__VA_ARGS__);                       \
                printf("\n");                              \
            }                                              \
            failures++;                                    \
        }                                                  \
    } while (0)

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint64_t bits_of(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

static double double_of(uint64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* ==========================================================================
 * Helpers
 * ========================================================================== */

/* Parse text (len bytes, from a heap copy without a terminator so that any
 * read past the end shows up under AddressSanitizer). */
static tersa_doc *read_n(const char *text, size_t len, const json_read_options *o, json_error *err,
                        bool seq) {
    char *copy = (char *)malloc(len ? len : 1);
    if (len) memcpy(copy, text, len);
    tersa_doc *d = seq ? json_read_seq(NULL, copy, len, o, err) : json_read(NULL, copy, len, o, err);
    /* Overwrite and free the caller's text: the document must not point into it. */
    memset(copy, 'X', len);
    free(copy);
    return d;
}

static tersa_doc *read_s(const char *text, json_error *err) {
    return read_n(text, strlen(text), NULL, err, false);
}

static const tersa_value *root(tersa_doc *d) { return tersa_doc_root(d, 0); }

/* Write v compactly (or with opts) into a NUL-terminated heap string; NULL
 * on failure with *err. */
static char *write_s(const tersa_value *v, const json_write_options *o, json_error *err) {
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

/* JSON text -> doc -> JSON text (compact). */
static void expect_rewrite(const char *in, const char *want) {
    json_error e;
    tersa_doc *d = read_s(in, &e);
    CHECK(d != NULL, "read %s: %s at %zu", in, d ? "" : e.message, e.offset);
    if (!d) return;
    char *s = write_s(root(d), NULL, &e);
    CHECK(s && strcmp(s, want) == 0, "rewrite %s: got %s, want %s", in, s ? s : e.message, want);
    free(s);
    tersa_doc_free(d);
}

static void expect_read_error(const char *in, size_t len, const char *message, size_t offset,
                              size_t line, size_t column) {
    json_error e;
    tersa_doc *d = read_n(in, len, NULL, &e, false);
    CHECK(d == NULL, "read %.40s should fail with %s", in, message);
    if (d) {
        tersa_doc_free(d);
        return;
    }
    CHECK(e.message && strcmp(e.message, message) == 0 && e.offset == offset &&
              (line == 0 || (e.line == line && e.column == column)),
          "read %.40s: got \"%s\" at %zu (%zu:%zu), want \"%s\" at %zu (%zu:%zu)", in, e.message,
          e.offset, e.line, e.column, message, offset, line, column);
}

#define READ_ERR(lit, msg, off) expect_read_error(lit, sizeof(lit) - 1, msg, off, 0, 0)
#define READ_ERR_LC(lit, msg, off, l, c) expect_read_error(lit, sizeof(lit) - 1, msg, off, l, c)

/* Value constructors for writer tests. */
static tersa_value mk(tersa_type t) {
    tersa_value v;
    memset(&v, 0, sizeof v);
    v.type = t;
    return v;
}
static tersa_value mk_int(int64_t i) {
    tersa_value v = mk(TERSA_INT);
    v.v.i = i;
    return v;
}
static tersa_value mk_float(double f) {
    tersa_value v = mk(TERSA_FLOAT);
    v.v.f = f;
    return v;
}
static tersa_value mk_str(tersa_type t, const char *s, size_t n) {
    tersa_value v = mk(t);
    v.v.str.ptr = s;
    v.v.str.len = n;
    return v;
}
static tersa_value mk_string(const char *s) { return mk_str(TERSA_STRING, s, strlen(s)); }
static tersa_value mk_bin(const void *p, size_t n) {
    tersa_value v = mk(TERSA_BINARY);
    v.v.bin.ptr = (const uint8_t *)p;
    v.v.bin.len = n;
    return v;
}
static tersa_value mk_array(tersa_value *items, size_t n) {
    tersa_value v = mk(TERSA_ARRAY);
    v.v.array.items = items;
    v.v.array.count = n;
    return v;
}
static tersa_value mk_map(tersa_type t, tersa_value *keys, tersa_value *values, size_t n) {
    tersa_value v = mk(t);
    v.v.map.keys = keys;
    v.v.map.values = values;
    v.v.map.count = n;
    return v;
}

static void expect_write(const tersa_value *v, const json_write_options *o, const char *want) {
    json_error e;
    char *s = write_s(v, o, &e);
    CHECK(s && strcmp(s, want) == 0, "write: got %s, want %s", s ? s : e.message, want);
    free(s);
}

static void expect_write_error(const tersa_value *v, const json_write_options *o, const char *want) {
    json_error e;
    tersa_buf b;
    tersa_buf_init(&b, NULL);
    tersa_buf_append(&b, "prefix", 6);
    bool ok = json_write(v, o, &b, &e);
    CHECK(!ok, "write should fail with %s, wrote %s", want, b.ptr);
    if (!ok) {
        CHECK(strcmp(e.message, want) == 0, "write error: got \"%s\", want \"%s\"", e.message, want);
        CHECK(b.len == 6 && memcmp(b.ptr, "prefix", 6) == 0 && b.ptr[6] == '\0',
              "output changed on error: %s", b.ptr);
    }
    tersa_buf_free(&b);
}

/* ==========================================================================
 * Reader
 * ========================================================================== */

static void test_read_scalars(void) {
    json_error e;
    struct {
        const char *text;
        tersa_type type;
        int64_t i;
    } ints[] = {
        {"0", TERSA_INT, 0},
        {"-0", TERSA_INT, 0},
        {"7", TERSA_INT, 7},
        {"-123", TERSA_INT, -123},
        {"9223372036854775807", TERSA_INT, INT64_MAX},
        {"-9223372036854775808", TERSA_INT, INT64_MIN},
        {"1000000000000000000", TERSA_INT, 1000000000000000000},
        {" \t\r\n42 \n", TERSA_INT, 42},
    };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        tersa_doc *d = read_s(ints[k].text, &e);
        CHECK(d && root(d)->type == ints[k].type && root(d)->v.i == ints[k].i, "int %s",
              ints[k].text);
        tersa_doc_free(d);
    }
    tersa_doc *d = read_s("9223372036854775808", &e);
    CHECK(d && root(d)->type == TERSA_UINT && root(d)->v.u == 9223372036854775808ull, "2^63");
    tersa_doc_free(d);
    d = read_s("18446744073709551615", &e);
    CHECK(d && root(d)->type == TERSA_UINT && root(d)->v.u == UINT64_MAX, "2^64-1");
    tersa_doc_free(d);
    d = read_s("10000000000000000000", &e);
    CHECK(d && root(d)->type == TERSA_UINT && root(d)->v.u == 10000000000000000000ull, "1e19");
    tersa_doc_free(d);

    /* Big integers: little-endian minimal magnitudes. */
    struct {
        const char *text;
        bool negative;
        const char *mag_hex;
    } bigs[] = {
        {"18446744073709551616", false, "000000000000000001"},
        {"-18446744073709551616", true, "000000000000000001"},
        {"-9223372036854775809", true, "0100000000000080"},
        {"-18446744073709551615", true, "ffffffffffffffff"},
        {"1000000000000000000000000000000", false, "00000040eaed7446d09c2c9f0c"},
        {"-1000000000000000000000000001", true, "010000e83c80d09f3c2e3b03"},
        {"340282366920938463463374607431768211456", false, "0000000000000000000000000000000001"},
    };
    for (size_t k = 0; k < sizeof bigs / sizeof bigs[0]; k++) {
        d = read_s(bigs[k].text, &e);
        bool ok = d && root(d)->type == TERSA_BIGINT && root(d)->v.big.negative == bigs[k].negative &&
                  root(d)->v.big.len * 2 == strlen(bigs[k].mag_hex);
        for (size_t i = 0; ok && i < root(d)->v.big.len; i++) {
            unsigned byte;
            sscanf(bigs[k].mag_hex + 2 * i, "%2x", &byte);
            ok = root(d)->v.big.mag[i] == byte;
        }
        CHECK(ok, "bigint %s", bigs[k].text);
        tersa_doc_free(d);
    }
    /* A 2000-digit integer: 10^1999, written back exactly. */
    {
        static char big[2100];
        big[0] = '1';
        memset(big + 1, '0', 1999);
        big[2000] = '\0';
        expect_rewrite(big, big);
        big[0] = '-';
        big[1] = '9';
        expect_rewrite(big, big);
    }

    /* Floats. */
    struct {
        const char *text;
        uint64_t bits;
    } floats[] = {
        {"1.5", 0x3ff8000000000000ull},   {"-0.0", 0x8000000000000000ull},
        {"0.0", 0},                       {"1e2", 0x4059000000000000ull},
        {"1E+2", 0x4059000000000000ull},  {"0.1", 0x3fb999999999999aull},
        {"1e-400", 0},                    {"-1e-400", 0x8000000000000000ull},
        {"5e-324", 1},                    {"1.7976931348623157e308", 0x7fefffffffffffffull},
        {"-0e0", 0x8000000000000000ull},  {"123456789012345678901234567890.5", 0x45f8ee90ff6c373eull},
    };
    for (size_t k = 0; k < sizeof floats / sizeof floats[0]; k++) {
        d = read_s(floats[k].text, &e);
        CHECK(d && root(d)->type == TERSA_FLOAT && bits_of(root(d)->v.f) == floats[k].bits,
              "float %s", floats[k].text);
        tersa_doc_free(d);
    }
    READ_ERR("1e400", "number out of range", 0);
    READ_ERR("[-1.8e308]", "number out of range", 1);

    d = read_s("[null,true,false]", &e);
    CHECK(d && root(d)->type == TERSA_ARRAY && root(d)->v.array.count == 3 &&
              root(d)->v.array.items[0].type == TERSA_NULL &&
              root(d)->v.array.items[1].type == TERSA_TRUE &&
              root(d)->v.array.items[2].type == TERSA_FALSE,
          "literals");
    tersa_doc_free(d);
}

static bool is_string(const tersa_value *v, const char *s, size_t n) {
    return v->type == TERSA_STRING && v->v.str.len == n && memcmp(v->v.str.ptr, s, n) == 0;
}

static void expect_string(const char *json, const char *want, size_t want_len) {
    json_error e;
    tersa_doc *d = read_s(json, &e);
    CHECK(d && is_string(root(d), want, want_len), "string %.60s", json);
    tersa_doc_free(d);
}

#define STR(json, lit) expect_string(json, lit, sizeof(lit) - 1)

static void test_read_strings(void) {
    STR("\"\"", "");
    STR("\"abc\"", "abc");
    STR("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t");
    STR("\"\\u0041\\u00e9\\u20AC\"", "A\xc3\xa9\xe2\x82\xac");
    STR("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80");
    STR("\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf");
    STR("\"\\u0000\"", "\0");
    STR("\"a\\u0000b\"", "a\0b");
    STR("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    STR("\"\x7f~\"", "\x7f~");
    STR("\"0123456789abcdefghij\\n0123456789abcdefghij\"",
        "0123456789abcdefghij\n0123456789abcdefghij");
    STR("\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80\"",
        "\xef\xbf\xbf\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80");

    /* Long strings with escapes at every alignment. */
    for (int gap = 1; gap < 20; gap++) {
        char json[8000], want[3000];
        size_t jn = 0, wn = 0;
        json[jn++] = '"';
        for (int i = 0; i < 1000; i++) {
            if (i % gap == 0) {
                memcpy(json + jn, "\\u00e9", 6);
                jn += 6;
                memcpy(want + wn, "\xc3\xa9", 2);
                wn += 2;
            } else {
                json[jn++] = (char)('a' + i % 26);
                want[wn++] = (char)('a' + i % 26);
            }
        }
        json[jn++] = '"';
        json[jn] = '\0';
        expect_string(json, want, wn);
    }
    /* Every ASCII character allowed raw. */
    {
        char json[200], want[200];
        size_t jn = 0, wn = 0;
        json[jn++] = '"';
        for (int c = 0x20; c < 0x80; c++) {
            if (c == '"' || c == '\\') {
                json[jn++] = '\\';
            }
            json[jn++] = (char)c;
            want[wn++] = (char)c;
        }
        json[jn++] = '"';
        json[jn] = '\0';
        expect_string(json, want, wn);
    }

    READ_ERR("\"\\ud800\"", "lone surrogate in \\u escape", 1);
    READ_ERR("\"\\udc00\"", "lone surrogate in \\u escape", 1);
    READ_ERR("\"ab\\ud800\\u0041\"", "lone surrogate in \\u escape", 3);
    READ_ERR("\"\\ud800x\"", "lone surrogate in \\u escape", 1);
    READ_ERR("\"\\ud800\\ud800\"", "lone surrogate in \\u escape", 1);
    READ_ERR("\"\\ud800\\uzzzz\"", "invalid \\u escape", 7);
    READ_ERR("\"\\x\"", "invalid escape", 1);
    READ_ERR("\"\\u12\"", "invalid \\u escape", 1);
    READ_ERR("\"\\u12", "invalid \\u escape", 1);
    READ_ERR("\"\\", "unterminated string", 2);
    READ_ERR("\"abc", "unterminated string", 4);
    READ_ERR("\"abc\\n", "unterminated string", 6);
    READ_ERR("\"a\x01\"", "control character in string", 2);
    READ_ERR("\"a\tb\"", "control character in string", 2);
    READ_ERR("\"a\nb\"", "control character in string", 2);
    READ_ERR("\"a\0b\"", "control character in string", 2);
    READ_ERR("\"\\n\x1f\"", "control character in string", 3);
    /* Strict UTF-8. */
    READ_ERR("\"\xc0\x80\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xc1\xbf\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xe0\x80\x80\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xed\xa0\x80\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xf0\x80\x80\x80\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xf4\x90\x80\x80\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xf5\x80\x80\x80\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xff\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"a\x80\"", "invalid UTF-8 in string", 2);
    READ_ERR("\"\xe2\x82\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xf0\x9f\x98\"", "invalid UTF-8 in string", 1);
    READ_ERR("\"\xe2\x82", "invalid UTF-8 in string", 1);
    READ_ERR("\"\\n\xe2\x28\xa1\"", "invalid UTF-8 in string", 3);
    READ_ERR("\"abcdefghijklmnop\xc3\"", "invalid UTF-8 in string", 17);
}

static void test_read_containers(void) {
    json_error e;
    tersa_doc *d = read_s("{\"a\":1,\"b\":[true,{\"c\":\"d\"},[]],\"e\":{}}", &e);
    CHECK(d != NULL, "nested: %s", d ? "" : e.message);
    if (d) {
        const tersa_value *m = root(d);
        CHECK(m->type == TERSA_MAP && m->v.map.count == 3, "map of 3");
        CHECK(is_string(&m->v.map.keys[0], "a", 1) && is_string(&m->v.map.keys[1], "b", 1) &&
                  is_string(&m->v.map.keys[2], "e", 1),
              "keys in document order");
        CHECK(m->v.map.values[0].type == TERSA_INT && m->v.map.values[0].v.i == 1, "a = 1");
        const tersa_value *b = &m->v.map.values[1];
        CHECK(b->type == TERSA_ARRAY && b->v.array.count == 3 &&
                  b->v.array.items[0].type == TERSA_TRUE && b->v.array.items[1].type == TERSA_MAP &&
                  b->v.array.items[1].v.map.count == 1 && b->v.array.items[2].type == TERSA_ARRAY &&
                  b->v.array.items[2].v.array.count == 0,
              "b");
        CHECK(m->v.map.values[2].type == TERSA_MAP && m->v.map.values[2].v.map.count == 0, "e = {}");
    }
    tersa_doc_free(d);

    expect_rewrite(" [ 1 , [ 2 , [ 3 ] ] , { \"k\" : [ ] } ] ", "[1,[2,[3]],{\"k\":[]}]");
    expect_rewrite("\n\t{\r\n\"x\"\n:\n\"y\"\n}\n", "{\"x\":\"y\"}");
    expect_rewrite("{\"a\":{\"a\":{\"a\":1}}}", "{\"a\":{\"a\":{\"a\":1}}}");

    /* A long array and a wide object. */
    {
        static char big[800000];
        size_t n = 0;
        big[n++] = '[';
        for (int i = 0; i < 100000; i++) n += (size_t)sprintf(big + n, "%s%d", i ? "," : "", i);
        big[n++] = ']';
        d = read_n(big, n, NULL, &e, false);
        CHECK(d && root(d)->v.array.count == 100000 && root(d)->v.array.items[99999].v.i == 99999,
              "100000 elements");
        tersa_doc_free(d);
        n = 0;
        big[n++] = '{';
        for (int i = 0; i < 20000; i++)
            n += (size_t)sprintf(big + n, "%s\"key%d\":%d", i ? "," : "", i, i);
        big[n++] = '}';
        d = read_n(big, n, NULL, &e, false);
        CHECK(d && root(d)->v.map.count == 20000 && is_string(&root(d)->v.map.keys[12345], "key12345", 8),
              "20000 keys");
        tersa_doc_free(d);
    }
}

static void test_read_duplicates(void) {
    READ_ERR("{\"a\":1,\"a\":2}", "duplicate key", 7);
    READ_ERR("{\"a\":1,\"b\":2,\"\\u0061\":3}", "duplicate key", 13);
    READ_ERR("[{\"x\":[],\"y\":{},\"x\":0}]", "duplicate key", 16);
    READ_ERR("{\"\":1,\"\":2}", "duplicate key", 6);
    expect_rewrite("{\"a\":{\"a\":1},\"b\":{\"a\":2}}", "{\"a\":{\"a\":1},\"b\":{\"a\":2}}");
    expect_rewrite("{\"a\":1,\"A\":2,\"a \":3,\"\\u0000a\":4}", "{\"a\":1,\"A\":2,\"a \":3,\"\\u0000a\":4}");
    /* A wide object (hashed check): the first repeat is reported. */
    for (int dup_at = 17; dup_at < 300; dup_at += 41) {
        char text[20000];
        size_t n = 0;
        size_t want = 0;
        text[n++] = '{';
        for (int i = 0; i < 300; i++) {
            if (i) text[n++] = ',';
            if (i == dup_at) want = n;
            n += (size_t)sprintf(text + n, "\"k%d\":%d", i == dup_at ? 5 : i, i);
        }
        text[n++] = '}';
        expect_read_error(text, n, "duplicate key", want, 0, 0);
    }
    /* json_first_duplicate directly, around the pairwise/hash threshold. */
    for (size_t n = 0; n < 40; n++) {
        tersa_value keys[40];
        char names[40][8];
        for (size_t i = 0; i < n; i++) {
            sprintf(names[i], "k%zu", i);
            keys[i] = mk_string(names[i]);
        }
        tersa_alloc const *a = NULL;
        tersa_buf tmp;
        tersa_buf_init(&tmp, NULL);
        a = tmp.alloc;
        CHECK(json_first_duplicate(keys, n, a) == n, "no duplicate among %zu", n);
        if (n >= 2) {
            keys[n - 1] = mk_string(names[(n - 1) / 2]);
            CHECK(json_first_duplicate(keys, n, a) == n - 1, "duplicate at the end of %zu", n);
        }
        tersa_buf_free(&tmp);
    }
}

static void test_read_depth(void) {
    static char deep[5000];
    json_error e;
    for (int i = 0; i < 1000; i++) deep[i] = '[';
    for (int i = 0; i < 1000; i++) deep[1000 + i] = ']';
    tersa_doc *d = read_n(deep, 2000, NULL, &e, false);
    CHECK(d != NULL, "1000 nested arrays (the default limit) are allowed");
    tersa_doc_free(d);
    /* 1001 levels: the 1001st container fails, at its bracket. */
    for (int i = 0; i < 1001; i++) deep[i] = '[';
    for (int i = 0; i < 1001; i++) deep[1001 + i] = ']';
    expect_read_error(deep, 2002, "nesting too deep", 1000, 1, 1001);

    json_read_options o = json_read_options_defaults();
    o.max_depth = 3;
    d = read_n("[[[1]]]", 7, &o, &e, false);
    CHECK(d != NULL, "depth 3 with max_depth 3");
    tersa_doc_free(d);
    d = read_n("[{\"a\":[{}]}]", 12, &o, &e, false);
    CHECK(d == NULL && strcmp(e.message, "nesting too deep") == 0 && e.offset == 7,
          "depth 4 with max_depth 3");
    tersa_doc_free(d);
    o.max_depth = 1;
    d = read_n("[1,2]", 5, &o, &e, false);
    CHECK(d != NULL, "flat array with max_depth 1");
    tersa_doc_free(d);
    d = read_n("7", 1, &o, &e, false);
    CHECK(d != NULL, "scalar with max_depth 1");
    tersa_doc_free(d);

    /* Very deep input with a raised limit: no recursion in the reader. */
    o.max_depth = 200000;
    static char very[400002];
    for (int i = 0; i < 200000; i++) very[i] = '[';
    for (int i = 0; i < 200000; i++) very[200000 + i] = ']';
    d = read_n(very, 400000, &o, &e, false);
    CHECK(d != NULL, "200000 nested arrays with max_depth 200000");
    tersa_doc_free(d);
}

static void test_read_errors(void) {
    READ_ERR_LC("", "unexpected end of input", 0, 1, 1);
    READ_ERR_LC("   ", "unexpected end of input", 3, 1, 4);
    READ_ERR_LC("[1,2,]", "unexpected character", 5, 1, 6);
    READ_ERR_LC("[1 2]", "expected ',' or ']'", 3, 1, 4);
    READ_ERR_LC("{\"a\" 1}", "expected ':'", 5, 1, 6);
    READ_ERR_LC("{\"a\":1 \"b\":2}", "expected ',' or '}'", 7, 1, 8);
    READ_ERR_LC("{1:2}", "expected a string key", 1, 1, 2);
    READ_ERR_LC("{\"a\":1,}", "expected a string key", 7, 1, 8);
    READ_ERR_LC("[1,\n  2,\n  x]", "unexpected character", 11, 3, 3);
    READ_ERR_LC("[\"\xc3\xa9\", x]", "unexpected character", 7, 1, 7);
    READ_ERR_LC("\xef\xbb\xbf[1,]", "unexpected character", 6, 1, 4);
    READ_ERR_LC("[1", "unexpected end of input", 2, 1, 3);
    READ_ERR_LC("[", "unexpected end of input", 1, 1, 2);
    READ_ERR_LC("{", "unexpected end of input", 1, 1, 2);
    READ_ERR_LC("{\"a\"", "unexpected end of input", 4, 1, 5);
    READ_ERR_LC("{\"a\":", "unexpected end of input", 5, 1, 6);
    READ_ERR_LC("{\"a\":1", "unexpected end of input", 6, 1, 7);
    READ_ERR("tru", "invalid literal", 0);
    READ_ERR("nul", "invalid literal", 0);
    READ_ERR("[fals]", "invalid literal", 1);
    READ_ERR("truex", "invalid literal", 0);
    READ_ERR("[null1]", "invalid literal", 1);
    READ_ERR("True", "unexpected character", 0);
    READ_ERR("01", "invalid number", 0);
    READ_ERR("[-01]", "invalid number", 1);
    READ_ERR("1.", "invalid number", 0);
    READ_ERR("1.e5", "invalid number", 0);
    READ_ERR("-", "invalid number", 0);
    READ_ERR("-a", "invalid number", 0);
    READ_ERR("[1e]", "invalid number", 1);
    READ_ERR("1e+", "invalid number", 0);
    READ_ERR("1.5.3", "invalid number", 0);
    READ_ERR("[1-2]", "invalid number", 1);
    READ_ERR("+1", "unexpected character", 0);
    READ_ERR(".5", "unexpected character", 0);
    READ_ERR("NaN", "unexpected character", 0);
    READ_ERR("Infinity", "unexpected character", 0);
    READ_ERR("'a'", "unexpected character", 0);
    READ_ERR("[1,\0]", "unexpected character", 3);
    READ_ERR("1 2", "unexpected content after the value", 2);
    READ_ERR("{} x", "unexpected content after the value", 3);
    READ_ERR("[]]", "unexpected content after the value", 2);
    READ_ERR("\"a\"\0", "unexpected content after the value", 3);
    READ_ERR("\xef\xbb", "unexpected character", 0);
    READ_ERR("\xc3\xa9", "unexpected character", 0);

    /* A BOM is skipped; the offsets still count it. */
    expect_rewrite("\xef\xbb\xbf{\"a\":[1]}", "{\"a\":[1]}");
    expect_rewrite("\xef\xbb\xbf 7 \n", "7");

    /* The length bounds the text: bytes after it are never looked at. */
    json_error e;
    tersa_doc *d = json_read(NULL, "[1]garbage", 3, NULL, &e);
    CHECK(d && root(d)->v.array.count == 1, "length bounds the text");
    tersa_doc_free(d);
    d = json_read(NULL, "\"abc\"def", 4, NULL, &e);
    CHECK(!d && strcmp(e.message, "unterminated string") == 0 && e.offset == 4,
          "unterminated at the length");
    tersa_doc_free(d);
}

static void test_read_seq(void) {
    json_error e;
    tersa_doc *d = read_n("1 [2] {\"a\":3}\n\"x\"", 17, NULL, &e, true);
    CHECK(d && tersa_doc_count(d) == 4 && tersa_doc_root(d, 0)->v.i == 1 &&
              tersa_doc_root(d, 1)->type == TERSA_ARRAY && tersa_doc_root(d, 2)->type == TERSA_MAP &&
              tersa_doc_root(d, 3)->type == TERSA_STRING,
          "sequence of 4");
    tersa_doc_free(d);
    d = read_n("{\"a\":1}\n{\"a\":2}\n", 16, NULL, &e, true);
    CHECK(d && tersa_doc_count(d) == 2, "JSON lines");
    tersa_doc_free(d);
    d = read_n("[1][2]", 6, NULL, &e, true);
    CHECK(d && tersa_doc_count(d) == 2, "concatenated");
    tersa_doc_free(d);
    d = read_n("", 0, NULL, &e, true);
    CHECK(d && tersa_doc_count(d) == 0, "empty sequence");
    tersa_doc_free(d);
    d = read_n(" \n\t ", 4, NULL, &e, true);
    CHECK(d && tersa_doc_count(d) == 0, "blank sequence");
    tersa_doc_free(d);
    d = read_n("\xef\xbb\xbf", 3, NULL, &e, true);
    CHECK(d && tersa_doc_count(d) == 0, "BOM-only sequence");
    tersa_doc_free(d);
    d = read_n("[1]\n[2", 6, NULL, &e, true);
    CHECK(!d && strcmp(e.message, "unexpected end of input") == 0 && e.offset == 6 && e.line == 2 &&
              e.column == 3,
          "error in the second text");
    tersa_doc_free(d);
    d = read_n("1 2x", 4, NULL, &e, true);
    CHECK(!d && strcmp(e.message, "unexpected character") == 0 && e.offset == 3, "1 2x");
    tersa_doc_free(d);
}

/* ==========================================================================
 * Writer
 * ========================================================================== */

static void test_write_scalars(void) {
    tersa_value v = mk(TERSA_NULL);
    expect_write(&v, NULL, "null");
    v = mk(TERSA_TRUE);
    expect_write(&v, NULL, "true");
    v = mk(TERSA_FALSE);
    expect_write(&v, NULL, "false");
    v = mk_int(0);
    expect_write(&v, NULL, "0");
    v = mk_int(-42);
    expect_write(&v, NULL, "-42");
    v = mk_int(INT64_MIN);
    expect_write(&v, NULL, "-9223372036854775808");
    v = mk_int(INT64_MAX);
    expect_write(&v, NULL, "9223372036854775807");
    v = mk(TERSA_UINT);
    v.v.u = UINT64_MAX;
    expect_write(&v, NULL, "18446744073709551615");

    /* Big integers, including zero chunks in the middle. */
    static const uint8_t two64[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t e27p1[12] = {0x01, 0x00, 0x00, 0xe8, 0x3c, 0x80, 0xd0, 0x9f, 0x3c, 0x2e, 0x3b, 0x03};
    static const uint8_t e30[13] = {0x00, 0x00, 0x00, 0x40, 0xea, 0xed, 0x74, 0x46, 0xd0, 0x9c, 0x2c, 0x9f, 0x0c};
    static const uint8_t padded[10] = {5, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    v = mk(TERSA_BIGINT);
    v.v.big.mag = two64;
    v.v.big.len = 9;
    expect_write(&v, NULL, "18446744073709551616");
    v.v.big.negative = true;
    expect_write(&v, NULL, "-18446744073709551616");
    v.v.big.negative = false;
    v.v.big.mag = e27p1;
    v.v.big.len = 12;
    expect_write(&v, NULL, "1000000000000000000000000001");
    v.v.big.mag = e30;
    v.v.big.len = 13;
    expect_write(&v, NULL, "1000000000000000000000000000000");
    v.v.big.mag = padded; /* leading zero bytes are tolerated */
    v.v.big.len = 10;
    expect_write(&v, NULL, "5");
    v.v.big.len = 0;
    v.v.big.negative = true;
    expect_write(&v, NULL, "0");

    /* Floats: shortest digits, always visibly a float. */
    struct {
        double d;
        const char *want;
    } floats[] = {
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {2100.0, "2100.0"},
        {1.5e-7, "1.5e-7"},
        {1e22, "1.0e+22"},
        {0.1, "0.1"},
        {0.1 + 0.2, "0.30000000000000004"},
        {1e16, "1.0e+16"},
        {9999000000000000.0, "9999000000000000.0"},
        {0.00001, "0.00001"},
        {0.000001, "1.0e-6"},
        {5e-324, "5.0e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {-37.7749, "-37.7749"},
        {123456.789, "123456.789"},
        {9007199254740993.0, "9007199254740992.0"},
    };
    for (size_t k = 0; k < sizeof floats / sizeof floats[0]; k++) {
        v = mk_float(floats[k].d);
        expect_write(&v, NULL, floats[k].want);
    }

    /* Non-finite floats. */
    tersa_value items[4] = {mk_int(1), mk_float(double_of(0x7FF8000000000000ull)),
                           mk_float(double_of(0x7FF0000000000000ull)),
                           mk_float(double_of(0xFFF0000000000000ull))};
    tersa_value arr = mk_array(items, 4);
    expect_write_error(&arr, NULL, "NaN is not a JSON number at $[1]");
    json_write_options o = json_write_options_defaults();
    o.nonfinite = JSON_NONFINITE_NULL;
    expect_write(&arr, &o, "[1,null,null,null]");
    o.nonfinite = JSON_NONFINITE_STRING;
    expect_write(&arr, &o, "[1,\"NaN\",\"Infinity\",\"-Infinity\"]");
    items[1] = mk_float(double_of(0xFFF0000000000001ull)); /* a NaN with a payload */
    expect_write(&arr, &o, "[1,\"NaN\",\"Infinity\",\"-Infinity\"]");
    o.nonfinite = JSON_NONFINITE_ERROR;
    items[1] = mk_int(2);
    expect_write_error(&arr, &o, "Infinity is not a JSON number at $[2]");
    items[2] = mk_int(3);
    expect_write_error(&arr, &o, "-Infinity is not a JSON number at $[3]");
}

static void test_write_strings(void) {
    tersa_value v = mk_str(TERSA_STRING, "\"\\\n\t\r\b\f\x01\x1f\x7f/", 11);
    expect_write(&v, NULL, "\"\\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001f\x7f/\"");
    v = mk_str(TERSA_STRING, "a\0b", 3);
    expect_write(&v, NULL, "\"a\\u0000b\"");
    v = mk_string("");
    expect_write(&v, NULL, "\"\"");
    v = mk_str(TERSA_STRING, NULL, 0);
    expect_write(&v, NULL, "\"\"");
    v = mk_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    expect_write(&v, NULL, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    json_write_options o = json_write_options_defaults();
    o.ascii = true;
    expect_write(&v, &o, "\"caf\\u00e9 \\u20ac \\ud83d\\ude00\"");
    v = mk_string("0123456789abcdef\"0123456789abcdef\xc3\xa9xyz");
    expect_write(&v, NULL, "\"0123456789abcdef\\\"0123456789abcdef\xc3\xa9xyz\"");
    expect_write(&v, &o, "\"0123456789abcdef\\\"0123456789abcdef\\u00e9xyz\"");

    /* Invalid UTF-8 is refused, with the path. */
    tersa_value keys[1] = {mk_string("name")};
    tersa_value vals[1] = {mk_str(TERSA_STRING, "ab\xff", 3)};
    tersa_value m = mk_map(TERSA_MAP, keys, vals, 1);
    expect_write_error(&m, NULL, "invalid UTF-8 in string at $.name");
    vals[0] = mk_str(TERSA_STRING, "\xed\xa0\x80", 3); /* a surrogate */
    expect_write_error(&m, NULL, "invalid UTF-8 in string at $.name");
    vals[0] = mk_str(TERSA_STRING, "abc\xe2\x82", 5); /* truncated at the end */
    expect_write_error(&m, NULL, "invalid UTF-8 in string at $.name");
}

static void test_write_other_types(void) {
    json_write_options o = json_write_options_defaults();

    /* Integers: decimal up to TERSA_MAX_DECIMAL_BYTES of magnitude, both ways. */
    {
        uint8_t *mag = (uint8_t *)malloc(TERSA_MAX_DECIMAL_BYTES + 1);
        memset(mag, 0xff, TERSA_MAX_DECIMAL_BYTES + 1);
        tersa_value big;
        memset(&big, 0, sizeof big);
        big.type = TERSA_BIGINT;
        big.v.big.mag = mag;
        big.v.big.len = TERSA_MAX_DECIMAL_BYTES + 1;
        expect_write_error(&big, &o, "integer too long to write in decimal (over 8192 bytes) at $");
        big.v.big.len = TERSA_MAX_DECIMAL_BYTES;
        tersa_buf out;
        tersa_buf_init(&out, NULL);
        json_error e;
        CHECK(json_write(&big, &o, &out, &e) && out.len == 19729, "decimal at the limit: %zu", out.len);
        json_error re;
        tersa_doc *d = read_n(out.ptr, out.len, NULL, &re, false);
        CHECK(d && root(d)->type == TERSA_BIGINT && root(d)->v.big.len == TERSA_MAX_DECIMAL_BYTES, "read back");
        tersa_doc_free(d);
        tersa_buf_append(&out, "9", 1);
        d = read_n(out.ptr, out.len, NULL, &re, false);
        CHECK(!d && strstr(re.message, "integer too long"), "one digit more: %s", d ? "accepted" : re.message);
        tersa_doc_free(d);
        tersa_buf_free(&out);
        free(mag);
    }

    /* Binary: RFC 4648 test vectors. */
    static const char *const b64[] = {"\"\"", "\"Zg==\"", "\"Zm8=\"", "\"Zm9v\"", "\"Zm9vYg==\"",
                                      "\"Zm9vYmE=\"", "\"Zm9vYmFy\""};
    o.binary = JSON_BINARY_BASE64;
    for (size_t n = 0; n <= 6; n++) {
        tersa_value v = mk_bin("foobar", n);
        expect_write(&v, &o, b64[n]);
    }
    tersa_value v = mk_bin("\x00\xff\x10", 3);
    o.binary = JSON_BINARY_HEX;
    expect_write(&v, &o, "\"00ff10\"");
    expect_write_error(&v, NULL, "binary value has no JSON form at $");

    /* Symbols. */
    v = mk_str(TERSA_SYMBOL, "sym", 3);
    expect_write_error(&v, NULL, "symbol has no JSON form at $");
    o.symbol = JSON_SYMBOL_STRING;
    expect_write(&v, &o, "\"sym\"");

    /* Timestamps. */
    v = mk(TERSA_TIME);
    v.v.time.seconds = 0;
    v.v.time.zone = TERSA_ZONE_UTC;
    expect_write_error(&v, NULL, "timestamp has no JSON form at $");
    o.time = JSON_TIME_ISO;
    expect_write(&v, &o, "\"1970-01-01T00:00:00Z\"");
    v.v.time.seconds = 1700000000;
    v.v.time.nanos = 500000000;
    v.v.time.zone = TERSA_ZONE_OFFSET;
    v.v.time.offset = -90;
    expect_write(&v, &o, "\"2023-11-14T20:43:20.5-01:30\"");
    v.v.time.zone = TERSA_ZONE_FLOATING;
    v.v.time.nanos = 123;
    expect_write(&v, &o, "\"2023-11-14T22:13:20.000000123\"");
    v.v.time.seconds = TERSA_MAX_SECONDS + 1;
    expect_write_error(&v, &o, "timestamp out of range at $");

    /* Extensions. */
    v = mk(TERSA_EXT);
    v.v.ext.type = 7;
    v.v.ext.ptr = (const uint8_t *)"\x01\x02\x03";
    v.v.ext.len = 3;
    expect_write_error(&v, NULL, "extension value has no JSON form at $");
    o.ext = JSON_EXT_OBJECT;
    expect_write(&v, &o, "{\"$ext\":{\"type\":7,\"data\":\"AQID\"}}");
    tersa_value items[2] = {mk_int(1), v};
    tersa_value arr = mk_array(items, 2);
    o.indent = 2;
    expect_write(&arr, &o,
                 "[\n  1,\n  {\n    \"$ext\": {\n      \"type\": 7,\n      \"data\": \"AQID\"\n    }\n  }\n]");
}

static void test_write_maps(void) {
    json_write_options o = json_write_options_defaults();
    tersa_value keys[4], vals[4];
    keys[0] = mk_string("a");
    keys[1] = mk_string("b c");
    vals[0] = mk_int(1);
    vals[1] = mk_float(2.5);
    tersa_value m = mk_map(TERSA_MAP, keys, vals, 2);
    expect_write(&m, NULL, "{\"a\":1,\"b c\":2.5}");
    m.type = TERSA_GENERIC_MAP; /* string keys only: written like a map */
    expect_write(&m, NULL, "{\"a\":1,\"b c\":2.5}");

    /* Non-string keys. */
    keys[0] = mk_int(1);
    expect_write_error(&m, NULL, "non-string map key has no JSON form at $[1]");
    o.keys = JSON_KEYS_STRING;
    expect_write(&m, &o, "{\"1\":1,\"b c\":2.5}");
    keys[0] = mk(TERSA_TRUE);
    expect_write(&m, &o, "{\"true\":1,\"b c\":2.5}");
    keys[0] = mk(TERSA_NULL);
    expect_write(&m, &o, "{\"null\":1,\"b c\":2.5}");
    keys[0] = mk_float(-1.5);
    expect_write(&m, &o, "{\"-1.5\":1,\"b c\":2.5}");
    keys[0] = mk_float(double_of(0x7FF8000000000000ull));
    expect_write_error(&m, &o, "NaN is not a JSON number at $[key #0]");
    o.nonfinite = JSON_NONFINITE_STRING;
    expect_write(&m, &o, "{\"NaN\":1,\"b c\":2.5}");
    keys[0] = mk_bin("foo", 3);
    expect_write_error(&m, &o, "binary value has no JSON form at $[key #0]");
    o.binary = JSON_BINARY_BASE64;
    expect_write(&m, &o, "{\"Zm9v\":1,\"b c\":2.5}");
    /* Symbol keys need both options. */
    keys[0] = mk_str(TERSA_SYMBOL, "s", 1);
    expect_write_error(&m, &o, "symbol map key has no JSON form at $.s");
    o.symbol = JSON_SYMBOL_STRING;
    expect_write(&m, &o, "{\"s\":1,\"b c\":2.5}");
    o.keys = JSON_KEYS_ERROR;
    expect_write_error(&m, &o, "symbol map key has no JSON form at $.s");
    o.keys = JSON_KEYS_STRING;
    /* Container and extension keys stay errors. */
    tersa_value inner[1] = {mk_int(0)};
    keys[0] = mk_array(inner, 1);
    expect_write_error(&m, &o, "a container cannot be a JSON object key at $[key #0]");
    keys[0] = mk(TERSA_EXT);
    o.ext = JSON_EXT_OBJECT;
    expect_write_error(&m, &o, "an extension value cannot be a JSON object key at $[key #0]");
    /* Keys that collide once converted. */
    keys[0] = mk_int(1);
    keys[1] = mk_string("1");
    expect_write_error(&m, &o, "two map keys become the same JSON string at $[\"1\"]");
    keys[1] = mk_int(-1);
    expect_write(&m, &o, "{\"1\":1,\"-1\":2.5}");
    /* Many converted keys (hashed check). */
    {
        tersa_value k[100], x[100];
        for (int i = 0; i < 100; i++) {
            k[i] = mk_int(i);
            x[i] = mk(TERSA_NULL);
        }
        tersa_value big = mk_map(TERSA_GENERIC_MAP, k, x, 100);
        json_error e;
        char *s = write_s(&big, &o, &e);
        CHECK(s && strncmp(s, "{\"0\":null,\"1\":null,", 19) == 0, "100 int keys");
        free(s);
        k[99] = mk_int(42);
        expect_write_error(&big, &o, "two map keys become the same JSON string at $[42]");
    }

    /* Paths. */
    tersa_value pic = mk_bin("x", 1);
    tersa_value ukeys[2] = {mk_string("name"), mk_string("pic")};
    tersa_value uvals[2] = {mk_string("x"), pic};
    tersa_value user = mk_map(TERSA_MAP, ukeys, uvals, 2);
    tersa_value list[2] = {mk(TERSA_NULL), user};
    tersa_value users = mk_array(list, 2);
    tersa_value rkeys[1] = {mk_string("users")};
    tersa_value rvals[1] = {users};
    tersa_value r = mk_map(TERSA_MAP, rkeys, rvals, 1);
    expect_write_error(&r, NULL, "binary value has no JSON form at $.users[1].pic");
    ukeys[1] = mk_string("the \"pic\"");
    expect_write_error(&r, NULL, "binary value has no JSON form at $.users[1][\"the \\\"pic\\\"\"]");
}

static void test_write_pretty(void) {
    json_error e;
    tersa_doc *d = read_s("{\"a\":[1,2],\"b\":{},\"c\":[],\"d\":{\"e\":[{\"f\":null}]}}", &e);
    CHECK(d != NULL, "pretty input");
    if (!d) return;
    json_write_options o = json_write_options_defaults();
    o.indent = 2;
    expect_write(root(d), &o,
                 "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": [],\n  \"d\": {\n"
                 "    \"e\": [\n      {\n        \"f\": null\n      }\n    ]\n  }\n}");
    o.indent = 4;
    tersa_value one = mk_int(1);
    tersa_value arr = mk_array(&one, 1);
    expect_write(&arr, &o, "[\n    1\n]");
    expect_write(&one, &o, "1");
    tersa_doc_free(d);

    /* Appends to what the buffer holds. */
    tersa_buf b;
    tersa_buf_init(&b, NULL);
    tersa_buf_append(&b, "x=", 2);
    CHECK(json_write(&arr, NULL, &b, &e) && strcmp(b.ptr, "x=[1]") == 0, "append");
    tersa_buf_free(&b);

    /* A very deep tree: the writer does not recurse. */
    enum { DEEP = 100000 };
    tersa_value *chain = (tersa_value *)calloc(DEEP, sizeof(tersa_value));
    for (int i = 0; i < DEEP; i++) chain[i] = i + 1 < DEEP ? mk_array(&chain[i + 1], 1) : mk_array(NULL, 0);
    char *s = write_s(&chain[0], NULL, &e);
    CHECK(s && strlen(s) == 2 * DEEP && s[DEEP - 1] == '[' && s[DEEP] == ']', "deep write");
    free(s);
    /* An error deep down names the whole path (truncated to fit). */
    chain[DEEP - 1] = mk(TERSA_SYMBOL);
    s = write_s(&chain[0], NULL, &e);
    CHECK(!s && strncmp(e.message, "symbol has no JSON form at $[0][0][0]", 37) == 0 &&
              strlen(e.message) < sizeof e.text,
          "deep error: %s", e.message);
    free(s);
    free(chain);
}

/* ==========================================================================
 * Round trips
 * ========================================================================== */

/* A random valid UTF-8 string into buf (arena of the doc). */
static tersa_value random_string(tersa_doc *doc) {
    char buf[128];
    size_t n = 0;
    size_t len = (size_t)(rng() % 20);
    for (size_t i = 0; i < len; i++) {
        uint64_t r = rng();
        unsigned kind = (unsigned)(r % 8);
        uint32_t cp;
        if (kind < 4) cp = 0x20 + (uint32_t)(r >> 8) % 0x5F;
        else if (kind == 4) cp = (uint32_t)(r >> 8) % 0x20; /* controls */
        else if (kind == 5) cp = 0x80 + (uint32_t)(r >> 8) % 0x780;
        else if (kind == 6) {
            cp = 0x800 + (uint32_t)(r >> 8) % 0xF800;
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = '"';
        } else cp = 0x10000 + (uint32_t)(r >> 8) % 0x100000;
        if (cp < 0x80) {
            buf[n++] = (char)cp;
        } else if (cp < 0x800) {
            buf[n++] = (char)(0xC0 | (cp >> 6));
            buf[n++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            buf[n++] = (char)(0xE0 | (cp >> 12));
            buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            buf[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            buf[n++] = (char)(0xF0 | (cp >> 18));
            buf[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            buf[n++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    tersa_value v = mk(TERSA_STRING);
    v.v.str.ptr = (const char *)tersa_doc_bytes(doc, buf, n);
    v.v.str.len = n;
    return v;
}

/* A random value of the JSON-expressible data model (what json_read can
 * produce), nested at most `depth` more levels. */
static tersa_value random_value(tersa_doc *doc, int depth) {
    uint64_t r = rng();
    unsigned kind = (unsigned)(r % (depth > 0 ? 12 : 9));
    tersa_value v;
    switch (kind) {
    case 0: return mk(TERSA_NULL);
    case 1: return mk((r >> 8) & 1 ? TERSA_TRUE : TERSA_FALSE);
    case 2: return mk_int((int64_t)rng() >> (rng() % 64));
    case 3:
        v = mk(TERSA_UINT);
        v.v.u = rng() | (1ull << 63);
        return v;
    case 4: {
        uint8_t mag[40];
        size_t len = 9 + (size_t)(rng() % 30);
        for (size_t i = 0; i < len; i++) mag[i] = (uint8_t)rng();
        if (mag[len - 1] == 0) mag[len - 1] = 1;
        v = mk(TERSA_BIGINT);
        v.v.big.negative = rng() & 1;
        v.v.big.mag = (const uint8_t *)tersa_doc_bytes(doc, mag, len);
        v.v.big.len = len;
        return v;
    }
    case 5: {
        uint64_t b;
        do b = rng();
        while ((b & 0x7FF0000000000000ull) == 0x7FF0000000000000ull);
        return mk_float(double_of(b));
    }
    case 6: return mk_float((double)(int64_t)(rng() % 2000000 - 1000000) / 1000.0);
    case 7:
    case 8: return random_string(doc);
    case 9:
    case 10: {
        size_t n = (size_t)(rng() % 6);
        tersa_value *items = tersa_doc_values(doc, n);
        for (size_t i = 0; i < n; i++) items[i] = random_value(doc, depth - 1);
        return mk_array(items, n);
    }
    default: {
        size_t n = (size_t)(rng() % 6);
        tersa_value *keys = tersa_doc_values(doc, n), *values = tersa_doc_values(doc, n);
        for (size_t i = 0; i < n; i++) {
            char name[32];
            int len = sprintf(name, "k%zu", i);
            keys[i] = (rng() % 2) ? random_string(doc) : mk(TERSA_STRING);
            if (keys[i].type == TERSA_STRING && keys[i].v.str.ptr == NULL) {
                keys[i].v.str.ptr = (const char *)tersa_doc_bytes(doc, name, (size_t)len);
                keys[i].v.str.len = (size_t)len;
            }
            /* Keep keys distinct: a random key that repeats becomes k<i>. */
            for (size_t j = 0; j < i; j++) {
                if (keys[j].v.str.len == keys[i].v.str.len &&
                    memcmp(keys[j].v.str.ptr, keys[i].v.str.ptr, keys[i].v.str.len) == 0) {
                    len = sprintf(name, "\x01k%zu", i);
                    keys[i].v.str.ptr = (const char *)tersa_doc_bytes(doc, name, (size_t)len);
                    keys[i].v.str.len = (size_t)len;
                    break;
                }
            }
            values[i] = random_value(doc, depth - 1);
        }
        return mk_map((rng() % 4) ? TERSA_MAP : TERSA_GENERIC_MAP, keys, values, n);
    }
    }
}

static void roundtrip(const tersa_value *v, const json_write_options *o, const char *what) {
    json_error e;
    char *s = write_s(v, o, &e);
    CHECK(s != NULL, "%s: write failed: %s", what, s ? "" : e.message);
    if (!s) return;
    tersa_doc *d = read_n(s, strlen(s), NULL, &e, false);
    CHECK(d != NULL, "%s: re-read failed: %s at %zu", what, d ? "" : e.message, e.offset);
    if (d) CHECK(tersa_value_equal(v, root(d)), "%s: not equal after a round trip: %.200s", what, s);
    tersa_doc_free(d);
    free(s);
}

static void test_roundtrip_random(void) {
    json_write_options pretty = json_write_options_defaults(), ascii = pretty;
    pretty.indent = 3;
    ascii.ascii = true;
    for (int i = 0; i < 3000; i++) {
        tersa_doc *doc = tersa_doc_new(NULL);
        tersa_value v = random_value(doc, 4);
        roundtrip(&v, NULL, "random");
        roundtrip(&v, &pretty, "random pretty");
        roundtrip(&v, &ascii, "random ascii");
        tersa_doc_free(doc);
    }
    printf("random round trips: 3000 documents x 3 layouts\n");
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = (char *)malloc(cap);
    for (;;) {
        if (n == cap) buf = (char *)realloc(buf, cap *= 2);
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void test_roundtrip_corpus(const char *root_dir) {
    static const char *const names[] = {"api", "config", "events", "geospatial", "media", "search",
                                        "social", "telemetry", "time", "transactions", "users"};
    json_write_options pretty = json_write_options_defaults();
    pretty.indent = 2;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/bench/corpus/seed/%s.json", root_dir, names[i]);
        size_t len;
        char *text = read_file(path, &len);
        CHECK(text != NULL, "cannot read %s", path);
        if (!text) continue;
        json_error e;
        tersa_doc *d = json_read(NULL, text, len, NULL, &e);
        CHECK(d != NULL, "%s: %s at %zu (%zu:%zu)", path, d ? "" : e.message, e.offset, e.line,
              e.column);
        free(text);
        if (!d) continue;
        roundtrip(root(d), NULL, names[i]);
        roundtrip(root(d), &pretty, names[i]);
        tersa_doc_free(d);
    }
    printf("seed corpus round trips: %zu files\n", sizeof names / sizeof names[0]);
}

/* ==========================================================================
 * Allocation failures
 * ========================================================================== */

typedef struct limit_ctx {
    long left;  /* allocations allowed before failing */
    long live;  /* outstanding blocks */
} limit_ctx;

static void *lim_malloc(void *ctx, size_t size) {
    limit_ctx *c = (limit_ctx *)ctx;
    if (c->left-- <= 0) return NULL;
    c->live++;
    return malloc(size);
}
static void *lim_realloc(void *ctx, void *p, size_t old_size, size_t new_size) {
    limit_ctx *c = (limit_ctx *)ctx;
    (void)old_size;
    if (c->left-- <= 0) return NULL;
    if (!p) c->live++;
    return realloc(p, new_size);
}
static void lim_free(void *ctx, void *p, size_t size) {
    limit_ctx *c = (limit_ctx *)ctx;
    (void)size;
    if (p) c->live--;
    free(p);
}

static void test_alloc_failures(void) {
    const char *text = "{\"a\":[1,2,{\"b\":\"x\\ny\"}],\"c\":123456789012345678901234567890,"
                       "\"d\":[[[[]]]],\"e\":{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,"
                       "\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,\"k10\":10,\"k11\":11,"
                       "\"k12\":12,\"k13\":13,\"k14\":14,\"k15\":15,\"k16\":16}}";
    bool succeeded = false;
    for (long limit = 0; limit < 200 && !succeeded; limit++) {
        limit_ctx c = {limit, 0};
        tersa_alloc a = {lim_malloc, lim_realloc, lim_free, &c};
        json_error e;
        tersa_doc *d = json_read(&a, text, strlen(text), NULL, &e);
        if (d) {
            succeeded = true;
            /* Now the writer, failing at each step. */
            bool wrote = false;
            for (long wl = 0; wl < 100 && !wrote; wl++) {
                limit_ctx wc = {wl, 0};
                tersa_alloc wa = {lim_malloc, lim_realloc, lim_free, &wc};
                tersa_buf b;
                tersa_buf_init(&b, &wa);
                json_write_options o = json_write_options_defaults();
                o.indent = 1;
                o.keys = JSON_KEYS_STRING;
                wrote = json_write(root(d), &o, &b, &e);
                CHECK(wrote || (strcmp(e.message, "out of memory") == 0 && b.failed),
                      "writer with %ld allocations: %s", wl, e.message);
                tersa_buf_free(&b);
                CHECK(wc.live == 0, "writer leaked %ld blocks", wc.live);
            }
            CHECK(wrote, "writer never succeeded");
            tersa_doc_free(d);
        } else {
            CHECK(strcmp(e.message, "out of memory") == 0, "reader with %ld allocations: %s", limit,
                  e.message);
        }
        CHECK(c.live == 0, "reader leaked %ld blocks with limit %ld", c.live, limit);
    }
    CHECK(succeeded, "reader never succeeded");
}

/* Output that leaves through a sink as it is made (tersa decode): the chunks
 * join to the same text, and an error after a flush keeps what went out. */
typedef struct collected {
    tersa_buf all;
    int calls;
    bool refuse;
} collected;

static bool collect(void *ctx, const char *ptr, size_t len) {
    collected *c = (collected *)ctx;
    c->calls++;
    return !c->refuse && tersa_buf_append(&c->all, ptr, len);
}

static void test_write_to_sink(void) {
    json_error e;
    /* Flushes happen when `out` must grow: strings of 300 bytes make it grow. */
    char text[2048];
    char s300[301];
    memset(s300, 's', 300);
    s300[300] = '\0';
    snprintf(text, sizeof text, "[\"%s\",{\"k\":[1,2,3,\"%s\"]},\"%s\",4.5,\"%s\"]", s300, s300, s300, s300);
    tersa_doc *d = read_s(text, &e);
    CHECK(d != NULL, "sink input");
    if (!d) return;
    tersa_buf whole;
    tersa_buf_init(&whole, NULL);
    CHECK(json_write(root(d), NULL, &whole, &e), "whole");
    for (size_t threshold = 0; threshold < 1400; threshold += 200) {
        collected c = {{0}, 0, false};
        tersa_buf_init(&c.all, NULL);
        json_sink sink = {collect, &c, threshold};
        tersa_buf out;
        tersa_buf_init(&out, NULL);
        CHECK(json_write_to(root(d), NULL, &out, &sink, &e), "write_to %zu", threshold);
        tersa_buf_append(&c.all, out.ptr, out.len);
        CHECK(c.all.len == whole.len && memcmp(c.all.ptr, whole.ptr, whole.len) == 0, "chunks join (%zu)", threshold);
        CHECK(threshold > whole.len / 2 || c.calls > 0, "flushed at %zu", threshold);
        tersa_buf_free(&out);
        tersa_buf_free(&c.all);
    }
    collected c = {{0}, 0, true};
    tersa_buf_init(&c.all, NULL);
    json_sink sink = {collect, &c, 0};
    tersa_buf out;
    tersa_buf_init(&out, NULL);
    CHECK(!json_write_to(root(d), NULL, &out, &sink, &e) && strcmp(e.message, "write failed") == 0, "sink refuses");
    tersa_buf_free(&out);
    tersa_buf_free(&c.all);

    /* A value JSON cannot hold after the first flush: the flushed text stays out. */
    tersa_value items[2] = {mk_int(1), mk_int(2)};
    items[0].type = TERSA_STRING;
    items[0].v.str.ptr = s300;
    items[0].v.str.len = 300;
    items[1].type = TERSA_BINARY;
    items[1].v.bin.ptr = (const uint8_t *)"\x01";
    items[1].v.bin.len = 1;
    tersa_value arr = mk_array(items, 2);
    collected c2 = {{0}, 0, false};
    tersa_buf_init(&c2.all, NULL);
    json_sink sink2 = {collect, &c2, 1};
    tersa_buf_init(&out, NULL);
    tersa_buf_append(&out, "prefix", 6);
    CHECK(!json_write_to(&arr, NULL, &out, &sink2, &e) && c2.calls > 0, "binary fails after a flush");
    tersa_buf_free(&out);
    tersa_buf_free(&c2.all);
    tersa_buf_free(&whole);
    tersa_doc_free(d);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        printf("usage: %s <repository root>\n", argv[0]);
        return 2;
    }
    test_read_scalars();
    test_read_strings();
    test_read_containers();
    test_read_duplicates();
    test_read_depth();
    test_read_errors();
    test_read_seq();
    test_write_scalars();
    test_write_strings();
    test_write_other_types();
    test_write_maps();
    test_write_pretty();
    test_write_to_sink();
    test_roundtrip_random();
    test_roundtrip_corpus(argv[1]);
    test_alloc_failures();
    if (failures) {
        printf("test_json: %d FAILED\n", failures);
        return 1;
    }
    printf("test_json: all passed\n");
    return 0;
}
