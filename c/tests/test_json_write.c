/*
 * test_json_write.c - the CLI's JSON writer (c/cli/json_write.c): every value
 * kind and option, exact output, error paths, pretty printing, output
 * through a sink.
 */
#include "jsontest.h"

#include <stdio.h>
#include <stdlib.h>

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
    (void)argc;
    (void)argv;
    test_write_scalars();
    test_write_strings();
    test_write_other_types();
    test_write_maps();
    test_write_pretty();
    test_write_to_sink();
    return test_summary("test_json_write");
}
