/*
 * test_timestamps.c - tersa_ts_parse, which reads the fields of a timestamp
 * string as words, against a byte-at-a-time reading of the same grammar
 * (SPEC 6): both must accept the same strings and give the same parts.
 * Strings come from every form with random fields (some out of range), then
 * bytes replaced, inserted, removed, or the string cut short. Each is parsed
 * without a memo and with one kept across all strings (tersa_ts_parse_memo),
 * as the writer keeps it; half the strings reuse the previous one's date.
 */
#include "internal.h"
#include "testutil.h"

#include <stdio.h>
#include <string.h>

static bool is_digit(uint8_t c) { return (unsigned)(c - '0') < 10; }

static int two_digits(const uint8_t *s) {
    if (!is_digit(s[0]) || !is_digit(s[1])) return -1;
    return (s[0] - '0') * 10 + (s[1] - '0');
}

static bool leap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

/* The grammar read left to right, one byte at a time. */
static bool reference_parse(const uint8_t *s, size_t n, ts_parts *out) {
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (n < 10 || n > 35 || s[4] != '-' || s[7] != '-') return false;
    int y_hi = two_digits(s), y_lo = two_digits(s + 2), mo = two_digits(s + 5), d = two_digits(s + 8);
    if (y_hi < 0 || y_lo < 0 || mo < 1 || mo > 12 || d < 1) return false;
    int64_t y = y_hi * 100 + y_lo;
    if (y < 1 || d > dim[mo - 1] + (mo == 2 && leap(y))) return false;
    int64_t days = tersa_days_from_civil(y, (unsigned)mo, (unsigned)d);
    if (n == 10) {
        out->variant = TSV_DATE_ONLY;
        out->seconds = days * 86400;
        out->frac = 0;
        out->offset = 0;
        return true;
    }
    if (n < 20 || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':') return false;
    int hh = two_digits(s + 11), mi = two_digits(s + 14), ss = two_digits(s + 17);
    if (hh < 0 || hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 59) return false;
    uint8_t variant = s[10] == ' ' ? TSV_SPACE : 0;
    size_t i = 19;
    uint32_t frac = 0;
    if (s[i] == '.') {
        size_t start = ++i;
        while (i < n && is_digit(s[i]) && i - start < 10) frac = frac * 10 + (uint32_t)(s[i++] - '0');
        size_t digits = i - start;
        if (digits == 0 || digits > 9) return false;
        variant |= (uint8_t)digits;
    }
    int32_t offset = 0;
    if (i + 1 == n && s[i] == 'Z') {
        /* UTC */
    } else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh = two_digits(s + i + 1), om = two_digits(s + i + 4);
        if (oh < 0 || oh > 23 || om < 0 || om > 59) return false;
        offset = oh * 60 + om;
        if (s[i] == '-') {
            if (offset == 0) return false;
            offset = -offset;
        }
        variant |= TSV_NUMERIC_OFFSET;
    } else {
        return false;
    }
    int64_t seconds = days * 86400 + hh * 3600 + mi * 60 + ss - (int64_t)offset * 60;
    if (seconds < TERSA_MIN_SECONDS || seconds > TERSA_MAX_SECONDS) return false;
    out->variant = variant;
    out->seconds = seconds;
    out->frac = frac;
    out->offset = offset;
    return true;
}

/* A timestamp string of a random form; fields mostly in range. */
static size_t random_timestamp(test_rng *r, char *buf, const char *previous) {
    static const unsigned years[] = {1, 9999, 1970, 2000, 2024, 1900, 2100, 0};
    unsigned y = rng_below(r, 4) ? (unsigned)rng_below(r, 10000) : years[rng_below(r, 8)];
    unsigned mo = rng_below(r, 8) ? 1 + (unsigned)rng_below(r, 12) : (unsigned)rng_below(r, 100);
    unsigned d = rng_below(r, 8) ? 1 + (unsigned)rng_below(r, 31) : (unsigned)rng_below(r, 100);
    size_t n = (size_t)snprintf(buf, 64, "%04u-%02u-%02u", y, mo, d);
    if (previous[0] && rng_below(r, 2)) memcpy(buf, previous, 10);
    if (rng_below(r, 5) == 0) return n;
    unsigned hh = (unsigned)rng_below(r, rng_below(r, 8) ? 24 : 100);
    unsigned mi = (unsigned)rng_below(r, rng_below(r, 8) ? 60 : 100);
    unsigned ss = (unsigned)rng_below(r, rng_below(r, 8) ? 60 : 100);
    n += (size_t)snprintf(buf + n, 64, "%c%02u:%02u:%02u", rng_below(r, 4) ? 'T' : ' ', hh, mi, ss);
    if (rng_below(r, 2)) {
        unsigned digits = 1 + (unsigned)rng_below(r, 10);
        buf[n++] = '.';
        for (unsigned i = 0; i < digits; i++) buf[n++] = (char)('0' + rng_below(r, 10));
    }
    unsigned zone = (unsigned)rng_below(r, 8);
    if (zone < 4) {
        buf[n++] = 'Z';
    } else if (zone < 7) {
        unsigned oh = (unsigned)rng_below(r, rng_below(r, 8) ? 24 : 100);
        unsigned om = rng_below(r, 4) ? 0 : (unsigned)rng_below(r, rng_below(r, 8) ? 60 : 100);
        n += (size_t)snprintf(buf + n, 64, "%c%02u:%02u", rng_below(r, 2) ? '+' : '-', oh, om);
    }
    buf[n] = 0;
    return n;
}

static void mutate(test_rng *r, char *buf, size_t *n) {
    static const char alphabet[] = "0123456789-:T Z.+x/\xc3\x80";
    unsigned kind = (unsigned)rng_below(r, 4);
    size_t len = *n;
    if (kind == 0 && len) {
        buf[rng_below(r, len)] = alphabet[rng_below(r, sizeof alphabet - 1)];
    } else if (kind == 1 && len < 40) {
        size_t at = (size_t)rng_below(r, len + 1);
        memmove(buf + at + 1, buf + at, len - at);
        buf[at] = alphabet[rng_below(r, sizeof alphabet - 1)];
        *n = len + 1;
    } else if (kind == 2 && len) {
        size_t at = (size_t)rng_below(r, len);
        memmove(buf + at, buf + at + 1, len - at - 1);
        *n = len - 1;
    } else if (len) {
        *n = (size_t)rng_below(r, len);
    }
}

static ts_day_memo memo;

static void check_same(const char *buf, size_t n, unsigned long *accepted) {
    /* Exactly n bytes in a block of their own, so that reading past them
     * shows under a sanitizer. */
    uint8_t *s = (uint8_t *)malloc(n ? n : 1);
    memcpy(s, buf, n);
    ts_parts want = {0}, got = {0}, memo_got = {0};
    bool w = reference_parse(s, n, &want), g = tersa_ts_parse(s, n, &got);
    bool m = tersa_ts_parse_memo(s, n, &memo_got, &memo);
    CHECK(w == g && w == m, "\"%.*s\": reference %d, tersa_ts_parse %d, with the memo %d", (int)n, buf, w, g, m);
    if (w && g && m) {
        CHECK(want.variant == got.variant && want.seconds == got.seconds && want.frac == got.frac &&
                  want.offset == got.offset,
              "\"%.*s\": parts differ", (int)n, buf);
        CHECK(want.variant == memo_got.variant && want.seconds == memo_got.seconds && want.frac == memo_got.frac &&
                  want.offset == memo_got.offset,
              "\"%.*s\": parts differ with the memo", (int)n, buf);
        (*accepted)++;
    }
    free(s);
}

int main(void) {
    test_rng r = {0x7e57a11ce5ull};
    unsigned long accepted = 0, cases = 0;
    char buf[80], previous[16] = "";
    for (int i = 0; i < 300000; i++) {
        size_t n = random_timestamp(&r, buf, previous);
        memcpy(previous, buf, 10);
        check_same(buf, n, &accepted);
        cases++;
        for (unsigned m = (unsigned)rng_below(&r, 3); m > 0; m--) {
            mutate(&r, buf, &n);
            check_same(buf, n, &accepted);
            cases++;
        }
    }
    /* Both sides of every range: the first and last days of each month,
     * leap years, and the extreme offsets. */
    static const char *edges[] = {
        "0001-01-01", "9999-12-31", "0000-01-01", "2024-02-29", "2023-02-29", "1900-02-29", "2000-02-29",
        "2024-04-30", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00", "0001-01-01T00:00:00+23:59",
        "9999-12-31T23:59:59-23:59", "2024-01-01T00:00:00-00:00", "2024-01-01T00:00:00+00:00",
        "2024-01-01T24:00:00Z", "2024-01-01T23:60:00Z", "2024-01-01T23:59:60Z", "2024-01-01T00:00:00.Z",
        "2024-01-01T00:00:00.123456789Z", "2024-01-01T00:00:00.1234567890Z", "2024-01-01 00:00:00.5+01:00",
        "2024-01-01T00:00:00", "2024-01-01T00:00:00.123", "2024-01-01T00:00:00ZZ", "2024-01-01T00:00:00+0100",
        /* Rejected from the separator and zone bytes alone, or just past them. */
        "2024-01-21 01:13:54", "2024-01-21T03:13:54.401", "2024-01-21x01:13:54Z", "2024-01-21T01:13:54*01:00",
        "2024-01-21T01:13:54+01", "2024-01-21T01:13:54.1+01:00Z", "2024-01-21T01:13:5+01:00", "2024-01-2101:13:54Z",
        "2024-01-21T01:13:54.123456789+01:00", "2024-01-21T01:13:54.1234567891+01:00", "2024-01-21T01:13:54.+01:00",
    };
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) check_same(edges[i], strlen(edges[i]), &accepted);
    CHECK(accepted > cases / 4, "only %lu of %lu strings accepted: the generator is off", accepted, cases);
    printf("%lu strings, %lu timestamps\n", cases, accepted);
    return test_summary("test_timestamps");
}
