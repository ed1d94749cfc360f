/*
 * test_well_known.c - the well-known extension types (SPEC 5.8): the writers,
 * the payload parsers, the reader's checks (every must-fail rule, at the EXT
 * tag's offset), the text forms and the civil-date helpers.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t HDR[3] = {0xC1, 0x70, 0x10};

/* ==========================================================================
 * Helpers
 * ========================================================================== */

/* A buffer holding one EXT item of `type` with `payload`; returns its length. */
static size_t ext_buffer(uint8_t *out, uint32_t type, const uint8_t *payload, size_t n) {
    memcpy(out, HDR, 3);
    size_t k = 3;
    out[k++] = 0xF7;
    /* 65280..65535 take a 3-byte varint: (v << 3) | 0b100. */
    uint32_t word = (type << 3) | 4;
    out[k++] = (uint8_t)word;
    out[k++] = (uint8_t)(word >> 8);
    out[k++] = (uint8_t)(word >> 16);
    if (n < 128) {
        out[k++] = (uint8_t)(n << 1 | 1);
    } else {
        uint32_t w2 = (uint32_t)(n << 2) | 2; /* n < 2^14 */
        out[k++] = (uint8_t)w2;
        out[k++] = (uint8_t)(w2 >> 8);
    }
    memcpy(out + k, payload, n);
    return k + n;
}

/* Decoding `buf` fails with `code` at `offset`. */
static void expect_fail(const uint8_t *buf, size_t len, tersa_code code, size_t offset, const char *what) {
    tersa_error err;
    tersa_doc *d = tersa_decode(NULL, buf, len, NULL, &err);
    CHECK(!d && err.code == code && err.offset == offset, "%s: got %s@%zu", what,
          d ? "success" : tersa_code_name(err.code), d ? 0 : err.offset);
    tersa_doc_free(d);
}

static void expect_reserved_invalid(uint32_t type, const uint8_t *payload, size_t n, const char *what) {
    uint8_t buf[1200];
    size_t len = ext_buffer(buf, type, payload, n);
    expect_fail(buf, len, TERSA_ERR_INVALID_VALUE, 3, what);
}

/* Write one value with `fn` into a fresh single-value writer; the hex of the
 * buffer, or NULL with *code set. */
typedef bool (*write_fn)(tersa_writer *w, const void *arg);

static char *write_one(write_fn fn, const void *arg, tersa_code *code) {
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_writer_start(w, NULL, 0);
    char *hex = NULL;
    if (fn(w, arg)) {
        size_t len;
        const uint8_t *p = tersa_writer_data(w, &len);
        hex = hex_encode(p, len);
        *code = TERSA_OK;
    } else {
        *code = tersa_writer_error(w)->code;
    }
    tersa_writer_free(w);
    return hex;
}

static bool w_decimal(tersa_writer *w, const void *a) { return tersa_write_decimal(w, (const tersa_decimal *)a); }
static bool w_date(tersa_writer *w, const void *a) { return tersa_write_date(w, *(const int64_t *)a); }
static bool w_uuid(tersa_writer *w, const void *a) { return tersa_write_uuid(w, (const uint8_t *)a); }
static bool w_time(tersa_writer *w, const void *a) { return tersa_write_time_of_day(w, *(const uint64_t *)a); }

static void expect_hex(write_fn fn, const void *arg, const char *want, const char *what) {
    tersa_code code;
    char *hex = write_one(fn, arg, &code);
    CHECK(hex && strcmp(hex, want) == 0, "%s: want %s got %s (%s)", what, want, hex ? hex : "-",
          tersa_code_name(code));
    free(hex);
}

static void expect_write_error(write_fn fn, const void *arg, tersa_code want, const char *what) {
    tersa_code code;
    char *hex = write_one(fn, arg, &code);
    CHECK(!hex && code == want, "%s: want %s got %s", what, tersa_code_name(want), hex ? hex : tersa_code_name(code));
    free(hex);
}

/* The text form of a payload, or "" if tersa_well_known_text refuses it. */
static char *text_of(uint32_t type, const uint8_t *p, size_t n) {
    tersa_buf b;
    tersa_buf_init(&b, NULL);
    bool ok = tersa_well_known_text(type, p, n, &b);
    char *s = (char *)malloc(b.len + 1);
    memcpy(s, ok ? b.ptr : "", ok ? b.len : 0);
    s[ok ? b.len : 0] = 0;
    tersa_buf_free(&b);
    return s;
}

/* Decode one buffer and return the top-level item's text form ("" if none). */
static char *decoded_text(const char *hex) {
    size_t len;
    uint8_t *buf = hex_decode(hex, strlen(hex), &len);
    tersa_error err;
    tersa_doc *d = tersa_decode(NULL, buf, len, NULL, &err);
    char *s = NULL;
    if (d && tersa_doc_root(d, 0)->type == TERSA_EXT) {
        const tersa_value *v = tersa_doc_root(d, 0);
        s = text_of(v->v.ext.type, v->v.ext.ptr, v->v.ext.len);
    }
    tersa_doc_free(d);
    free(buf);
    if (!s) s = (char *)calloc(1, 1);
    return s;
}

/* ==========================================================================
 * Civil dates
 * ========================================================================== */

static void test_civil(void) {
    static const struct { int64_t y; unsigned m, d; int64_t days; } cases[] = {
        {1, 1, 1, -719162}, {1969, 12, 31, -1}, {1970, 1, 1, 0}, {2000, 2, 29, 11016},
        {2000, 3, 1, 11017}, {1900, 3, 1, -25508}, {9999, 12, 31, 2932896}, {0, 12, 31, -719163},
        {-4713, 11, 24, -2440588}, {10000, 1, 1, 2932897}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t days = tersa_days_from_civil(cases[i].y, cases[i].m, cases[i].d);
        CHECK(days == cases[i].days, "days_from_civil %lld-%u-%u = %lld", (long long)cases[i].y, cases[i].m,
              cases[i].d, (long long)days);
        int64_t y;
        unsigned m, d;
        tersa_civil_from_days(cases[i].days, &y, &m, &d);
        CHECK(y == cases[i].y && m == cases[i].m && d == cases[i].d, "civil_from_days %lld",
              (long long)cases[i].days);
    }
    /* Every day of years 1..9999 round-trips and follows the day before it. */
    int64_t py = 0;
    unsigned pm = 12, pd = 31;
    unsigned long bad = 0;
    for (int64_t days = -719162; days <= 2932896; days++) {
        int64_t y;
        unsigned m, d;
        tersa_civil_from_days(days, &y, &m, &d);
        bool next = (y == py && m == pm && d == pd + 1) || (y == py && m == pm + 1 && d == 1) ||
                    (y == py + 1 && m == 1 && d == 1 && pm == 12 && pd == 31);
        if (!next || tersa_days_from_civil(y, m, d) != days) bad++;
        py = y, pm = m, pd = d;
    }
    CHECK(bad == 0, "%lu days of years 1..9999 do not round-trip", bad);
    CHECK(py == 9999 && pm == 12 && pd == 31, "the last day");
}

/* ==========================================================================
 * Writers
 * ========================================================================== */

/* tersa_write_decimal's cases: the buffer written, or (hex NULL) the error. */
static const uint8_t c10[] = {10}, c100[] = {100}, padded[] = {0, 0, 100}, c256[] = {1, 0};
static const struct {
    tersa_decimal d;
    const char *hex;
    tersa_code error;
    const char *what;
} decimal_cases[] = {
    {{TERSA_DECIMAL_FINITE, -1, c10, 1}, "c17010f704f8070700030a", 0, "1.0"},
    {{TERSA_DECIMAL_FINITE, -2, c100, 1}, "c17010f704f80707000764", 0, "1.00"},
    {{TERSA_DECIMAL_FINITE, -2, padded, 3}, "c17010f704f80707000764", 0, "leading zero bytes are dropped"},
    {{TERSA_DECIMAL_NEGATIVE, 0, NULL, 0}, "c17010f704f807050101", 0, "-0"},
    {{TERSA_DECIMAL_FINITE, 0, padded, 2}, "c17010f704f807050001", 0, "zero given as zero bytes"},
    {{TERSA_DECIMAL_FINITE, 0, c256, 2}, "c17010f704f8070900010100", 0, "256"},
    {{TERSA_DECIMAL_INF, 77, c10, 1}, "c17010f704f8070302", 0, "infinity ignores the other fields"},
    {{TERSA_DECIMAL_NEG_INF, 0, NULL, 5}, "c17010f704f8070303", 0, "-infinity ignores a NULL coefficient's length"},
    {{TERSA_DECIMAL_NAN, 0, NULL, 0}, "c17010f704f8070304", 0, "NaN"},
    {{TERSA_DECIMAL_FINITE, 999999998, c10, 1}, "c17010f704f8070f00907fb2e60e0a", 0,
     "1.0E+999999999: exponent 999999998"},
    /* Limits and usage. */
    {{TERSA_DECIMAL_FINITE, 1000000000, c10, 1}, NULL, TERSA_ERR_UNREPRESENTABLE, "exponent 1000000000"},
    {{TERSA_DECIMAL_NEGATIVE, -1000000000, c10, 1}, NULL, TERSA_ERR_UNREPRESENTABLE, "exponent -1000000000"},
    {{(tersa_decimal_kind)5, 0, NULL, 0}, NULL, TERSA_ERR_USAGE, "kind 5"},
    {{TERSA_DECIMAL_FINITE, 0, NULL, 3}, NULL, TERSA_ERR_USAGE, "NULL coefficient with a length"},
};

static void test_writers(void) {
    for (size_t i = 0; i < sizeof decimal_cases / sizeof decimal_cases[0]; i++) {
        if (decimal_cases[i].hex)
            expect_hex(w_decimal, &decimal_cases[i].d, decimal_cases[i].hex, decimal_cases[i].what);
        else
            expect_write_error(w_decimal, &decimal_cases[i].d, decimal_cases[i].error, decimal_cases[i].what);
    }
    tersa_decimal d;
    uint8_t big[1026];
    memset(big, 0xFF, sizeof big);
    d = (tersa_decimal){TERSA_DECIMAL_FINITE, 0, big, 1025};
    expect_write_error(w_decimal, &d, TERSA_ERR_UNREPRESENTABLE, "coefficient of 1,025 bytes");
    big[0] = 0;
    d = (tersa_decimal){TERSA_DECIMAL_FINITE, 0, big, 1025};
    tersa_code code;
    char *hex = write_one(w_decimal, &d, &code);
    CHECK(hex && strlen(hex) == 2 * (3 + 1 + 3 + 2 + 1 + 1 + 1024), "1,024 bytes after a leading zero byte: %s",
          tersa_code_name(code));
    free(hex);

    int64_t days = -719162;
    expect_hex(w_date, &days, "c17010f70cf807079c93af", "date 0001-01-01");
    days = 2932896;
    expect_hex(w_date, &days, "c17010f70cf8070908149805", "date 9999-12-31");
    days = -1;
    expect_hex(w_date, &days, "c17010f70cf8070303", "date 1969-12-31");
    days = -719163;
    expect_write_error(w_date, &days, TERSA_ERR_UNREPRESENTABLE, "date before 0001-01-01");
    days = 2932897;
    expect_write_error(w_date, &days, TERSA_ERR_UNREPRESENTABLE, "date after 9999-12-31");

    uint8_t u[16];
    memset(u, 0xFF, 16);
    expect_hex(w_uuid, u, "c17010f714f80721ffffffffffffffffffffffffffffffff", "uuid max");
    expect_write_error(w_uuid, NULL, TERSA_ERR_USAGE, "uuid NULL");

    uint64_t us = 0;
    expect_hex(w_time, &us, "c17010f71cf8070301", "00:00:00");
    us = 86399999999ull;
    expect_hex(w_time, &us, "c17010f71cf8070de0ffd7750705", "23:59:59.999999");
    us = 86400000000ull;
    expect_write_error(w_time, &us, TERSA_ERR_UNREPRESENTABLE, "24:00:00");

    /* tersa_write_ext keeps the reserved range to the writers above. */
    tersa_writer *w = tersa_writer_new(NULL);
    static const uint32_t reserved[] = {0xFF00, 0xFF03, 0xFF04, 0xFFFF};
    for (size_t i = 0; i < 4; i++) {
        tersa_writer_start(w, NULL, 0);
        CHECK(!tersa_write_ext(w, reserved[i], "", 0) && tersa_writer_error(w)->code == TERSA_ERR_USAGE,
              "tersa_write_ext(0x%x) is a usage error", reserved[i]);
    }
    tersa_writer_start(w, NULL, 0);
    CHECK(tersa_write_ext(w, TERSA_EXT_APP_MAX, "x", 1), "tersa_write_ext(0xFEFF)");
    tersa_writer_start(w, NULL, 0);
    CHECK(!tersa_write_ext(w, 65536, "", 0) && tersa_writer_error(w)->code == TERSA_ERR_UNREPRESENTABLE,
          "tersa_write_ext(65536)");

    /* Well-known values inside containers share nothing with their neighbours. */
    tersa_writer_start(w, NULL, 0);
    bool ok = tersa_write_array_begin(w, 3) && tersa_write_date(w, 0) && tersa_write_uuid(w, u) &&
              tersa_write_time_of_day(w, 1) && tersa_write_array_end(w);
    size_t len;
    const uint8_t *p = tersa_writer_data(w, &len);
    hex = ok ? hex_encode(p, len) : NULL;
    CHECK(hex && strcmp(hex, "c17010" "83" "f70cf8070301" "f714f80721ffffffffffffffffffffffffffffffff" "f71cf8070303") == 0,
          "array of well-known values: %s", hex ? hex : "failed");
    free(hex);
    tersa_writer_free(w);
}

/* ==========================================================================
 * Parsers and the reader's checks
 * ========================================================================== */

static void test_parsers(void) {
    const uint8_t ok1[] = {0x01, 0x03, 0x01, 0x00}; /* -256E-1 */
    tersa_decimal d;
    CHECK(tersa_decimal_of_ext(ok1, 4, &d) && d.kind == TERSA_DECIMAL_NEGATIVE && d.exponent == -1 &&
              d.coefficient == ok1 + 2 && d.coefficient_len == 2,
          "decimal -25.6");
    const uint8_t zero[] = {0x00, 0x01};
    CHECK(tersa_decimal_of_ext(zero, 2, &d) && d.kind == TERSA_DECIMAL_FINITE && d.coefficient_len == 0, "0");
    const uint8_t nan[] = {0x04};
    CHECK(tersa_decimal_of_ext(nan, 1, &d) && d.kind == TERSA_DECIMAL_NAN, "NaN");

    static const struct { const char *hex; const char *what; } bad_decimals[] = {
        {"", "empty"}, {"05", "kind 5"}, {"0501", "kind 5 with exponent"}, {"ff", "kind 255"},
        {"0200", "infinity with a byte"}, {"0300", "-infinity with a byte"}, {"0401", "NaN with a byte"},
        {"00", "no exponent"}, {"01", "negative without exponent"}, {"000100", "zero as a zero byte"},
        {"00010001", "leading zero byte"}, {"000200", "exponent varint not minimal"}, {"0002", "exponent cut short"},
        {"001080b2e60e01", "exponent 1000000000"}, {"00f07fb2e60e01", "exponent -1000000000"},
        {"0000feffffffffffffff01", "exponent int64 max"}};
    for (size_t i = 0; i < sizeof bad_decimals / sizeof bad_decimals[0]; i++) {
        size_t n;
        uint8_t *p = hex_decode(bad_decimals[i].hex, strlen(bad_decimals[i].hex), &n);
        CHECK(p && !tersa_decimal_of_ext(p, n, &d), "decimal_of_ext accepts %s", bad_decimals[i].what);
        if (p) expect_reserved_invalid(TERSA_EXT_DECIMAL, p, n, bad_decimals[i].what);
        free(p);
    }
    uint8_t big[1 + 1 + 1025];
    big[0] = 0;
    big[1] = 0x01;
    memset(big + 2, 0x11, 1025);
    CHECK(!tersa_decimal_of_ext(big, sizeof big, &d), "coefficient of 1,025 bytes");
    expect_reserved_invalid(TERSA_EXT_DECIMAL, big, sizeof big, "coefficient of 1,025 bytes");
    CHECK(tersa_decimal_of_ext(big, sizeof big - 1, &d) && d.coefficient_len == 1024, "coefficient of 1,024 bytes");

    int64_t days;
    const uint8_t dmin[] = {0x9c, 0x93, 0xaf}, dmax[] = {0x08, 0x14, 0x98, 0x05};
    CHECK(tersa_date_of_ext(dmin, 3, &days) && days == -719162, "date min");
    CHECK(tersa_date_of_ext(dmax, 4, &days) && days == 2932896, "date max");
    static const char *const bad_dates[] = {"" /* empty */, "0814980501" /* a byte after the varint */,
                                            "0200" /* varint not minimal */, "02" /* varint cut short */,
                                            "28149805" /* 10000-01-01 */, "ac93af" /* 0000-12-31 */};
    for (size_t i = 0; i < sizeof bad_dates / sizeof bad_dates[0]; i++) {
        size_t n;
        uint8_t *p = hex_decode(bad_dates[i], strlen(bad_dates[i]), &n);
        CHECK(!tersa_date_of_ext(p ? p : dmin, n, &days), "date_of_ext accepts %s", bad_dates[i]);
        expect_reserved_invalid(TERSA_EXT_DATE, p ? p : dmin, n, bad_dates[i]);
        free(p);
    }

    uint64_t us;
    const uint8_t tmax[] = {0xe0, 0xff, 0xd7, 0x75, 0x07, 0x05};
    CHECK(tersa_time_of_day_of_ext(tmax, 6, &us) && us == 86399999999ull, "time max");
    const uint8_t tday[] = {0x20, 0x00, 0xd8, 0x75, 0x07, 0x05}; /* 86400000000 */
    CHECK(!tersa_time_of_day_of_ext(tday, 6, &us), "time 86400000000");
    expect_reserved_invalid(TERSA_EXT_TIME_OF_DAY, tday, 6, "time 86400000000");
    const uint8_t ttrail[] = {0x01, 0x00};
    CHECK(!tersa_time_of_day_of_ext(ttrail, 2, &us) && !tersa_time_of_day_of_ext(ttrail, 0, &us), "time trailing/empty");
    expect_reserved_invalid(TERSA_EXT_TIME_OF_DAY, ttrail, 2, "time with a trailing byte");
    expect_reserved_invalid(TERSA_EXT_TIME_OF_DAY, ttrail, 0, "time empty");

    uint8_t u[17] = {0};
    expect_reserved_invalid(TERSA_EXT_UUID, u, 15, "uuid of 15 bytes");
    expect_reserved_invalid(TERSA_EXT_UUID, u, 17, "uuid of 17 bytes");
    expect_reserved_invalid(TERSA_EXT_UUID, u, 0, "uuid empty");
    expect_reserved_invalid(0xFF04, u, 0, "reserved type 0xff04");
    expect_reserved_invalid(0xFFFF, u, 3, "reserved type 0xffff");

    /* The offset is the EXT tag's, wherever the item is; the EXT length is checked first. */
    uint8_t buf[64];
    size_t len = ext_buffer(buf + 2, TERSA_EXT_UUID, u, 15) + 2; /* its header bytes are overwritten: */
    memcpy(buf, HDR, 3);
    buf[3] = 0x82;
    buf[4] = 0xE0;
    expect_fail(buf, len, TERSA_ERR_INVALID_VALUE, 5, "uuid of 15 bytes in an array");
    len = ext_buffer(buf, TERSA_EXT_UUID, u, 16);
    expect_fail(buf, len - 1, TERSA_ERR_LENGTH_EXCEEDS_INPUT, 3, "uuid payload longer than the input");

    /* Valid payloads reach the caller as they are, through the pull reader too. */
    len = ext_buffer(buf, TERSA_EXT_TIME_OF_DAY, tmax, 6);
    tersa_reader *r = tersa_reader_new(NULL);
    tersa_item it;
    CHECK(tersa_reader_start(r, buf, len, NULL, 0, 0) && tersa_read(r, &it) && it.type == TERSA_EXT &&
              it.v.ext.type == TERSA_EXT_TIME_OF_DAY && it.v.ext.len == 6 && it.offset == 3 &&
              tersa_time_of_day_of_ext(it.v.ext.ptr, it.v.ext.len, &us) && us == 86399999999ull &&
              tersa_reader_finish(r),
          "pull reader");
    len = ext_buffer(buf, TERSA_EXT_TIME_OF_DAY, tday, 6);
    CHECK(tersa_reader_start(r, buf, len, NULL, 0, 0) && !tersa_skip(r) &&
              tersa_reader_error(r)->code == TERSA_ERR_INVALID_VALUE && tersa_reader_error(r)->offset == 3,
          "tersa_skip checks the payload too");
    tersa_reader_free(r);
}

/* ==========================================================================
 * Text forms, diagnostic notation, values
 * ========================================================================== */

/* Payloads and their canonical text forms (SPEC 5.8): decoding gives the text,
 * and tersa_decimal_parse reads a decimal's text back as its payload. */
static const struct {
    const char *hex, *text;
} canonical[] = {
        {"c17010f704f807050001", "0"},
        {"c17010f704f807050101", "-0"},
        {"c17010f704f80705000b", "0.000"},
        {"c17010f704f8070700030a", "1.0"},
        {"c17010f704f80709000b3039", "12.345"},
        {"c17010f704f80707001b0c", "0.0000012"},   /* c=12, e=-7: adjusted -6, plain */
        {"c17010f704f80707001f0c", "1.2E-7"},      /* c=12, e=-8: adjusted -7 */
        {"c17010f704f80705000d", "0E+3"},          /* zero with exponent 3 */
        {"c17010f704f807070003ff", "25.5"},        /* c=255, e=-1 */
        {"c17010f704f80707002901", "1E+10"},
        {"c17010f704f80709010909c4", "-2.500E+5"}, /* c=2500, e=2: not plain */
        {"c17010f704f8070f00907fb2e60e0a", "1.0E+999999999"},
        {"c17010f704f8070302", "Infinity"},
        {"c17010f704f8070303", "-Infinity"},
        {"c17010f704f8070304", "NaN"},
        {"c17010f70cf807079c93af", "0001-01-01"},
        {"c17010f70cf8070908149805", "9999-12-31"},
        {"c17010f70cf8070303", "1969-12-31"},
        {"c17010f714f8072100112233445566778899aabbccddeeff", "00112233-4455-6677-8899-aabbccddeeff"},
        {"c17010f71cf8070301", "00:00:00"},
        {"c17010f71cf8070de0ffd7750705", "23:59:59.999999"},
        {"c17010f71cf8070303", "00:00:00.000001"},
};

static bool is_decimal_buffer(const char *hex) { return strncmp(hex, "c17010f704f807", 14) == 0; }

static void test_text(void) {
    for (size_t i = 0; i < sizeof canonical / sizeof canonical[0]; i++) {
        char *s = decoded_text(canonical[i].hex);
        CHECK(strcmp(s, canonical[i].text) == 0, "%s: want %s got %s", canonical[i].hex, canonical[i].text, s);
        free(s);
    }
    const uint8_t x[] = {1, 2};
    char *s = text_of(0x1234, x, 2);
    CHECK(s[0] == 0, "text of an application type");
    free(s);
    s = text_of(TERSA_EXT_UUID, x, 2);
    CHECK(s[0] == 0, "text of an invalid payload");
    free(s);

    /* A value built by hand with an invalid reserved payload: the diagnostic
     * notation shows its bytes, and tersa_write_value refuses it. */
    tersa_value v;
    memset(&v, 0, sizeof v);
    v.type = TERSA_EXT;
    v.v.ext.type = TERSA_EXT_DATE;
    v.v.ext.ptr = x;
    v.v.ext.len = 2;
    s = diag_of(&v);
    CHECK(strcmp(s, "ext(65281, h'0102')") == 0, "diag of an invalid payload: %s", s);
    free(s);
    size_t len;
    tersa_error err;
    uint8_t *b = encode_value(&v, NULL, &len, &err);
    CHECK(!b && err.code == TERSA_ERR_UNREPRESENTABLE, "tersa_write_value with an invalid payload");
    free(b);
    const uint8_t day[] = {0x03};
    v.v.ext.ptr = day;
    v.v.ext.len = 1;
    s = diag_of(&v);
    CHECK(strcmp(s, "date(\"1969-12-31\")") == 0, "diag of a date: %s", s);
    free(s);
    b = encode_value(&v, NULL, &len, &err);
    char *hex = b ? hex_encode(b, len) : NULL;
    CHECK(hex && strcmp(hex, "c17010f70cf8070303") == 0, "tersa_write_value of a date: %s", hex ? hex : err.message);
    free(hex);
    free(b);

    /* The longest coefficient prints all its 2,467 digits. */
    uint8_t payload[2 + 1024];
    payload[0] = TERSA_DECIMAL_NEGATIVE;
    payload[1] = 0x01;
    memset(payload + 2, 0xFF, 1024);
    s = text_of(TERSA_EXT_DECIMAL, payload, sizeof payload);
    /* 2^8192 - 1, checked against Python's str(2**8192 - 1). */
    CHECK(strlen(s) == 1 + 2467 && s[0] == '-' && strncmp(s + 1, "109074813561941592946298424473", 30) == 0 &&
              strcmp(s + strlen(s) - 30, "587661997186505665475715792895") == 0,
          "a coefficient of 1,024 bytes");
    free(s);
}

/* The hex of a buffer holding the decimal parsed from `text`, or NULL if it
 * does not parse. */
static char *parsed_decimal_hex(const char *text) {
    uint8_t coefficient[TERSA_DECIMAL_MAX_COEFFICIENT];
    tersa_decimal d;
    if (!tersa_decimal_parse(text, strlen(text), &d, coefficient)) return NULL;
    tersa_writer *w = tersa_writer_new(NULL);
    size_t len;
    const uint8_t *b;
    char *hex = tersa_writer_start(w, NULL, 0) && tersa_write_decimal(w, &d) && (b = tersa_writer_data(w, &len))
                    ? hex_encode(b, len)
                    : NULL;
    tersa_writer_free(w);
    return hex;
}

static void expect_parsed(const char *text, const char *want) {
    char *hex = parsed_decimal_hex(text);
    CHECK(hex && strcmp(hex, want) == 0, "parse %s: want %s got %s", text, want, hex ? hex : "(refused)");
    free(hex);
}

static void test_decimal_parse(void) {
    for (size_t i = 0; i < sizeof canonical / sizeof canonical[0]; i++)
        if (is_decimal_buffer(canonical[i].hex)) expect_parsed(canonical[i].text, canonical[i].hex);
    static const struct { const char *hex, *text; } cases[] = {
        /* Ruby's BigDecimal#to_s forms and other spellings of canonical values */
        {"c17010f704f80707002901", "0.1e11"},
        {"c17010f704f80709010909c4", "-2500e2"},
        {"c17010f704f807070003ff", "+25.5"},
        {"c17010f704f807070003ff", "255E-1"},
        {"c17010f704f80705000d", "0e3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_parsed(cases[i].text, cases[i].hex);
    static const char *const refused[] = {"", "-", "+", ".", "1e", "1e+", "1e-x", "abc", "1.2.3", "-NaN", "nan",
                                          " 1", "1 ", "Infinityx", "1e1000000000", "1e-1000000000",
                                          "0.1e-999999999", "1e99999999999999999999"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char *hex = parsed_decimal_hex(refused[i]);
        CHECK(!hex, "parse \"%s\" should be refused, got %s", refused[i], hex);
        free(hex);
    }
    /* The longest coefficient: its 2,467 digits read back as the same 1,024
     * bytes; one more digit's worth (x 10^3 is beyond 2^8192) is refused. */
    uint8_t payload[2 + 1024];
    payload[0] = TERSA_DECIMAL_FINITE;
    payload[1] = 0x01;
    memset(payload + 2, 0xFF, 1024);
    char *text = text_of(TERSA_EXT_DECIMAL, payload, sizeof payload);
    uint8_t coefficient[TERSA_DECIMAL_MAX_COEFFICIENT];
    tersa_decimal d;
    CHECK(tersa_decimal_parse(text, strlen(text), &d, coefficient) && d.coefficient_len == 1024 &&
              memcmp(d.coefficient, payload + 2, 1024) == 0 && d.exponent == 0,
          "the longest coefficient reads back");
    size_t n = strlen(text);
    char *longer = (char *)malloc(n + 4);
    memcpy(longer, text, n);
    memcpy(longer + n, "000", 4);
    CHECK(!tersa_decimal_parse(longer, n + 3, &d, coefficient), "a coefficient over 1,024 bytes is refused");
    free(longer);
    free(text);
}

int main(void) {
    test_civil();
    test_writers();
    test_parsers();
    test_text();
    test_decimal_parse();
    return test_summary("test_well_known");
}
