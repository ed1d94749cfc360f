/*
 * xwellknown.c - text forms of the well-known types to EXT payloads (see
 * xwellknown.h). Strict: each form is parsed exactly as the vectors write it.
 */
#include "xwellknown.h"

#include <string.h>

static size_t put_varint(uint8_t *p, uint64_t v) {
    unsigned n = 1;
    while (n < 9 && v >> (7 * n)) n++;
    if (n == 9) {
        p[0] = 0;
        for (unsigned i = 0; i < 8; i++) p[1 + i] = (uint8_t)(v >> (8 * i));
        return 9;
    }
    uint64_t word = ((v << 1) | 1) << (n - 1);
    for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(word >> (8 * i));
    return n;
}

static uint64_t zigzag(int64_t s) { return ((uint64_t)s << 1) ^ (uint64_t)(s >> 63); }

static bool digits(const char *s, size_t n, unsigned *out) {
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return true;
}

uint32_t x_well_known_type(const char *tag, size_t len) {
    static const struct { const char *name; uint32_t type; } tags[] = {
        {"$decimal", TERSA_EXT_DECIMAL}, {"$date", TERSA_EXT_DATE},
        {"$uuid", TERSA_EXT_UUID}, {"$time_of_day", TERSA_EXT_TIME_OF_DAY}};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (strlen(tags[i].name) == len && memcmp(tags[i].name, tag, len) == 0) return tags[i].type;
    return 0;
}

/* [-]digits[.digits][E(+|-)digits], Infinity, -Infinity, NaN. */
static size_t decimal_payload(const char *s, size_t n, uint8_t *out) {
    bool neg = n && s[0] == '-';
    const char *p = s + neg, *end = s + n;
    if ((size_t)(end - p) == 8 && memcmp(p, "Infinity", 8) == 0) {
        out[0] = neg ? TERSA_DECIMAL_NEG_INF : TERSA_DECIMAL_INF;
        return 1;
    }
    if (!neg && n == 3 && memcmp(s, "NaN", 3) == 0) {
        out[0] = TERSA_DECIMAL_NAN;
        return 1;
    }
    uint8_t be[1024 + 1];        /* the coefficient, big-endian, right-aligned */
    size_t len = 0;              /* its bytes in use, at the end of be */
    int64_t frac = 0, exp = 0;
    bool any = false, point = false;
    for (; p < end && ((*p >= '0' && *p <= '9') || (*p == '.' && !point)); p++) {
        if (*p == '.') {
            point = true;
            continue;
        }
        any = true;
        frac += point;
        unsigned carry = (unsigned)(*p - '0');
        for (size_t i = 0; i < len; i++) {
            unsigned v = be[sizeof be - 1 - i] * 10u + carry;
            be[sizeof be - 1 - i] = (uint8_t)v;
            carry = v >> 8;
        }
        if (carry) {
            if (len == sizeof be) return 0;
            be[sizeof be - 1 - len++] = (uint8_t)carry;
        }
    }
    if (!any) return 0;
    if (p < end) {
        if (*p++ != 'E' || p == end || (*p != '+' && *p != '-')) return 0;
        bool eneg = *p++ == '-';
        if (p == end || end - p > 10) return 0;
        for (; p < end; p++) {
            if (*p < '0' || *p > '9') return 0;
            exp = exp * 10 + (*p - '0');
        }
        if (eneg) exp = -exp;
    }
    exp -= frac;
    if (len > 1024 || exp < -999999999 || exp > 999999999) return 0;
    out[0] = neg ? TERSA_DECIMAL_NEGATIVE : TERSA_DECIMAL_FINITE;
    size_t k = 1 + put_varint(out + 1, zigzag(exp));
    memcpy(out + k, be + sizeof be - len, len);
    return k + len;
}

size_t x_well_known_payload(uint32_t type, const char *s, size_t n, uint8_t out[X_WELL_KNOWN_MAX]) {
    unsigned y, m, d, h, mi, sec, us = 0;
    switch (type) {
    case TERSA_EXT_DECIMAL:
        return decimal_payload(s, n, out);
    case TERSA_EXT_DATE:
        if (n != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4, &y) || !digits(s + 5, 2, &m) ||
            !digits(s + 8, 2, &d) || y < 1 || m < 1 || m > 12 || d < 1 || d > 31)
            return 0;
        return put_varint(out, zigzag(tersa_days_from_civil(y, m, d)));
    case TERSA_EXT_UUID: {
        static const char hex[] = "0123456789abcdef";
        if (n != 36) return 0;
        size_t k = 0;
        for (size_t i = 0; i < 36; i++) {
            if (i == 8 || i == 13 || i == 18 || i == 23) {
                if (s[i] != '-') return 0;
                continue;
            }
            const char *c = memchr(hex, s[i], 16);
            if (!c || !s[i]) return 0;
            out[k / 2] = (uint8_t)(k % 2 ? out[k / 2] | (c - hex) : (c - hex) << 4);
            k++;
        }
        return 16;
    }
    case TERSA_EXT_TIME_OF_DAY:
        if ((n != 8 && n != 15) || s[2] != ':' || s[5] != ':' || !digits(s, 2, &h) || !digits(s + 3, 2, &mi) ||
            !digits(s + 6, 2, &sec) || h > 23 || mi > 59 || sec > 59 ||
            (n == 15 && (s[8] != '.' || !digits(s + 9, 6, &us) || us == 0)))
            return 0;
        return put_varint(out, ((uint64_t)(h * 3600 + mi * 60 + sec)) * 1000000u + us);
    default:
        return 0;
    }
}
