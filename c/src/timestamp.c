/*
 * timestamp.c - civil calendar arithmetic and timestamp strings (SPEC 6).
 */
#include "timestamp_parse.h"

/* ==========================================================================
 * Calendar (proleptic Gregorian, days since 1970-01-01)
 * ========================================================================== */

/* Howard Hinnant's algorithms: exact for the whole int64 year range we use,
 * with floor division written out so negative years work. */
int64_t tersa_days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void tersa_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* ==========================================================================
 * Timestamp strings
 * ========================================================================== */

bool tersa_ts_parse(const uint8_t *s, size_t n, ts_parts *out) {
    ts_day_memo memo = {0, 0, 0};
    return ts_parse_memo(s, n, out, &memo);
}

bool tersa_ts_parse_memo(const uint8_t *s, size_t n, ts_parts *out, ts_day_memo *memo) {
    return ts_parse_memo(s, n, out, memo);
}

TERSA_INLINE uint8_t *put2(uint8_t *p, unsigned v) {
    p[0] = (uint8_t)('0' + v / 10);
    p[1] = (uint8_t)('0' + v % 10);
    return p + 2;
}

/* Date and time of day of a local second count, or false outside 0001-9999. */
static bool local_civil(int64_t local, int64_t *y, unsigned *mo, unsigned *d, unsigned *sod) {
    int64_t days = local / 86400, rem = local % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    tersa_civil_from_days(days, y, mo, d);
    *sod = (unsigned)rem;
    return *y >= 1 && *y <= 9999;
}

static uint8_t *put_date_time(uint8_t *p, int64_t y, unsigned mo, unsigned d, unsigned sod, char sep) {
    p = put2(p, (unsigned)(y / 100));
    p = put2(p, (unsigned)(y % 100));
    *p++ = '-';
    p = put2(p, mo);
    *p++ = '-';
    p = put2(p, d);
    if (!sep) return p;
    *p++ = (uint8_t)sep;
    p = put2(p, sod / 3600);
    *p++ = ':';
    p = put2(p, sod / 60 % 60);
    *p++ = ':';
    return put2(p, sod % 60);
}

static uint8_t *put_offset(uint8_t *p, int32_t offset) {
    *p++ = offset < 0 ? '-' : '+';
    unsigned a = (unsigned)(offset < 0 ? -offset : offset);
    p = put2(p, a / 60);
    *p++ = ':';
    return put2(p, a % 60);
}

size_t tersa_ts_render(const ts_parts *t, uint8_t out[40]) {
    int64_t y;
    unsigned mo, d, sod;
    if (!local_civil(t->seconds + (int64_t)t->offset * 60, &y, &mo, &d, &sod)) return 0;
    if (t->variant & TSV_DATE_ONLY) return (size_t)(put_date_time(out, y, mo, d, 0, 0) - out);
    uint8_t *p = put_date_time(out, y, mo, d, sod, (t->variant & TSV_SPACE) ? ' ' : 'T');
    unsigned digits = t->variant & TSV_DIGITS;
    if (digits) {
        *p++ = '.';
        uint32_t f = t->frac;
        for (unsigned i = digits; i > 0; i--) {
            p[i - 1] = (uint8_t)('0' + f % 10);
            f /= 10;
        }
        p += digits;
    }
    if (t->variant & TSV_NUMERIC_OFFSET)
        p = put_offset(p, t->offset);
    else
        *p++ = 'Z';
    return (size_t)(p - out);
}

size_t tersa_timestamp_iso(const tersa_timestamp *ts, char out[40]) {
    if (ts->seconds < TERSA_MIN_SECONDS || ts->seconds > TERSA_MAX_SECONDS || ts->nanos > 999999999u ||
        ts->zone > TERSA_ZONE_FLOATING)
        return 0;
    int32_t offset = ts->zone == TERSA_ZONE_OFFSET ? ts->offset : 0;
    int64_t y;
    unsigned mo, d, sod;
    if (!local_civil(ts->seconds + (int64_t)offset * 60, &y, &mo, &d, &sod)) return 0;
    uint8_t *o = (uint8_t *)out;
    uint8_t *p = put_date_time(o, y, mo, d, sod, 'T');
    if (ts->nanos) {
        uint8_t frac[9];
        uint32_t f = ts->nanos;
        for (int i = 8; i >= 0; i--) {
            frac[i] = (uint8_t)('0' + f % 10);
            f /= 10;
        }
        unsigned digits = 9;
        while (frac[digits - 1] == '0') digits--;
        *p++ = '.';
        memcpy(p, frac, digits);
        p += digits;
    }
    if (ts->zone == TERSA_ZONE_UTC)
        *p++ = 'Z';
    else if (ts->zone == TERSA_ZONE_OFFSET)
        p = put_offset(p, offset);
    *p = '\0';
    return (size_t)(p - o);
}
