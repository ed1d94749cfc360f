/*
 * test_json_read.c - the CLI's JSON reader (c/cli/json_read.c): every value
 * kind, escapes, UTF-8 validation, errors with offset, line and column,
 * duplicate keys, depth, big integers, sequences.
 */
#include "jsontest.h"

#include <stdio.h>
#include <stdlib.h>

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
    static const struct {
        const char *text;
        size_t roots;
        const char *what;
    } counts[] = {
        {"{\"a\":1}\n{\"a\":2}\n", 2, "JSON lines"},
        {"[1][2]", 2, "concatenated"},
        {"", 0, "empty sequence"},
        {" \n\t ", 0, "blank sequence"},
        {"\xef\xbb\xbf", 0, "BOM-only sequence"},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        d = read_n(counts[i].text, strlen(counts[i].text), NULL, &e, true);
        CHECK(d && tersa_doc_count(d) == counts[i].roots, "%s", counts[i].what);
        tersa_doc_free(d);
    }
    d = read_n("[1]\n[2", 6, NULL, &e, true);
    CHECK(!d && strcmp(e.message, "unexpected end of input") == 0 && e.offset == 6 && e.line == 2 &&
              e.column == 3,
          "error in the second text");
    tersa_doc_free(d);
    d = read_n("1 2x", 4, NULL, &e, true);
    CHECK(!d && strcmp(e.message, "unexpected character") == 0 && e.offset == 3, "1 2x");
    tersa_doc_free(d);
}


int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    test_read_scalars();
    test_read_strings();
    test_read_containers();
    test_read_duplicates();
    test_read_depth();
    test_read_errors();
    test_read_seq();
    return test_summary("test_json_read");
}
