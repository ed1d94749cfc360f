/*
 * timestamp_parse.h - reading timestamp strings (SPEC 6) into their fields,
 * inline: the writer tries every string that could be one, and a call with
 * its ts_parts passed through memory costs a quarter of a parse. timestamp.c
 * wraps it as tersa_ts_parse and tersa_ts_parse_memo. Not installed.
 */
#ifndef TERSA_TIMESTAMP_PARSE_H
#define TERSA_TIMESTAMP_PARSE_H

#include "internal.h"

TERSA_INLINE unsigned days_in_month(int64_t y, unsigned m) {
    static const unsigned char dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) return 29;
    return dim[m - 1];
}

/* ==========================================================================
 * Timestamp strings
 * ========================================================================== */

/* Eight bytes read as one word (little-endian: s[0] in the low byte), with
 * '0' removed from each byte: a byte holds a digit's value exactly when it
 * was an ASCII digit. */
#define ZEROS 0x3030303030303030ull
#define HIGH_NIBBLES 0xF0F0F0F0F0F0F0F0ull

/* Are the bytes of `x` (ASCII ^ '0') selected by `mask` all digits? A digit
 * leaves 0-9, which has no high nibble even after adding 6; masked, no byte
 * carries into the next. */
TERSA_INLINE bool all_digits(uint64_t x, uint64_t mask) {
    x &= mask;
    return ((x | (x + 0x0606060606060606ull)) & HIGH_NIBBLES) == 0;
}

/* Byte k of the result is 10 * x[k] + x[k + 1]: every two-digit field's
 * value lands in the byte of its first digit (x holds digit values, 0 in the
 * bytes between fields). */
TERSA_INLINE uint64_t pair_values(uint64_t x) { return x * 10 + (x >> 8); }

/* The value of the 8 digits in x (digit values, first digit low). */
TERSA_INLINE uint32_t eight_digits(uint64_t x) {
    x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFull;
    x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFull;
    return (uint32_t)((x * 10000 + (x >> 32)) & 0xFFFFFFFFull);
}

/* Days since 1970-01-01 of a valid date in years 1-9999 (Hinnant's
 * algorithm, which is tersa_days_from_civil's, on unsigned values). */
TERSA_INLINE int64_t days_from_date(unsigned y, unsigned m, unsigned d) {
    y -= m <= 2;
    unsigned era = y / 400, yoe = y - era * 400;
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int64_t)era * 146097 + (int64_t)doe - 719468;
}

/* The grammar, each field at a fixed place except the fraction's digits,
 * which end where the zone starts: "YYYY-MM-DD", or "YYYY-MM-DD" 'T' or ' '
 * "hh:mm:ss", then '.' and 1-9 digits optionally, then 'Z' or "+hh:mm" /
 * "-hh:mm" (not "-00:00"). The zone is found from the end: a last byte 'Z'
 * is one, else the zone is the last six bytes. */
/* The day count of the date "YYYY-MM-DD" that starts s (head: its first 8
 * bytes, tail: the last 2), or false if it is no valid date. */
TERSA_INLINE bool read_date(uint64_t head, uint32_t tail, int64_t *days) {
    /* Digits at 0-3 and 5-6, '-' at 4 and 7; then the day's two digits. */
    uint64_t date = head ^ ZEROS, dd = tail ^ 0x3030u;
    if ((date & 0xFF0000FF00000000ull) != (((uint64_t)('-' ^ '0') << 56) | ((uint64_t)('-' ^ '0') << 32)) ||
        !all_digits(date, 0x00FFFF00FFFFFFFFull) || !all_digits(dd, 0xFFFF))
        return false;
    uint64_t pv = pair_values(date & 0x00FFFF00FFFFFFFFull);
    unsigned y = (unsigned)(pv & 0xFF) * 100 + (unsigned)((pv >> 16) & 0xFF);
    unsigned mo = (unsigned)((pv >> 40) & 0xFF), d = (unsigned)(dd & 0xFF) * 10 + (unsigned)(dd >> 8);
    if (y < 1 || mo - 1 > 11 || d < 1) return false;
    if (d > 28 && d > days_in_month(y, mo)) return false;
    *days = days_from_date(y, mo, d);
    return true;
}

TERSA_INLINE bool ts_parse_memo(const uint8_t *s, size_t n, ts_parts *out, ts_day_memo *memo) {
    /* Shortest form "YYYY-MM-DD" (10), longest "YYYY-MM-DDThh:mm:ss.fffffffff+hh:mm" (35). */
    if (n < 10 || n > 35) return false;
    /* The separator and the zone's first byte first, from single bytes:
     * strings that only begin like a date ("2024-01-21 01:13:54", a local
     * time without zone) stop here, before any field is read. */
    if (n != 10) {
        uint8_t sep = s[10], last = s[n - 1], sign = s[n - 6];
        if (n < 20 || (sep != 'T' && sep != ' ') ||
            (last != 'Z' && (n < 25 || (sign != '+' && sign != '-'))))
            return false;
    }
    uint64_t head = load_le64(s);
    uint32_t tail = (uint32_t)s[8] | (uint32_t)s[9] << 8;
    int64_t days;
    /* A memo's head is never 0: a date holds '-'. */
    if (head == memo->head && tail == memo->tail) {
        days = memo->days;
    } else {
        if (!read_date(head, tail, &days)) return false;
        memo->head = head;
        memo->tail = tail;
        memo->days = days;
    }
    if (n == 10) {
        out->variant = TSV_DATE_ONLY;
        out->seconds = days * 86400;
        out->frac = 0;
        out->offset = 0;
        return true; /* years 0001-9999 at UTC midnight are always in range */
    }
    uint8_t sep = s[10];
    /* "hh:mm:ss" at 11; the three values land in bytes 0, 3 and 6, where
     * one add carries into bit 7 of each byte exactly when the value is out
     * of range (hours above 23, minutes or seconds above 59). */
    uint64_t tm = load_le64(s + 11) ^ ZEROS;
    if ((tm & 0x0000FF0000FF0000ull) != (((uint64_t)(':' ^ '0') << 40) | ((uint64_t)(':' ^ '0') << 16)) ||
        !all_digits(tm, 0xFFFF00FFFF00FFFFull))
        return false;
    uint64_t tv = pair_values(tm & 0xFFFF00FFFF00FFFFull) & 0x00FF0000FF0000FFull;
    if ((tv + ((uint64_t)(128 - 60) << 48 | (uint64_t)(128 - 60) << 24 | (128 - 24))) & 0x0080000080000080ull)
        return false;
    int64_t seconds = days * 86400 + (int64_t)((unsigned)(tv & 0xFF) * 3600 + (unsigned)((tv >> 24) & 0xFF) * 60 +
                                               (unsigned)(tv >> 48));
    uint8_t variant = sep == ' ' ? TSV_SPACE : 0;
    int32_t offset = 0;
    size_t zone = n - 1;
    if (s[zone] != 'Z') {
        /* "+hh:mm" as the last six bytes, read with the two before them
         * (n >= 25 and the sign were checked above). */
        zone = n - 6;
        uint64_t z = load_le64(s + n - 8) ^ ZEROS;
        uint8_t sign = s[zone];
        if ((uint8_t)(z >> 40) != (':' ^ '0') || !all_digits(z, 0xFFFF00FFFF000000ull)) return false;
        uint64_t zv = pair_values(z & 0xFFFF00FFFF000000ull);
        unsigned oh = (unsigned)((zv >> 24) & 0xFF), om = (unsigned)((zv >> 48) & 0xFF);
        if (oh > 23 || om > 59) return false;
        offset = (int32_t)(oh * 60 + om);
        if (sign == '-') {
            if (offset == 0) return false; /* "-00:00" has no packed form */
            offset = -offset;
        }
        variant |= TSV_NUMERIC_OFFSET;
        /* Local years 0001-9999 may lie outside them in UTC; with 'Z' they cannot. */
        seconds -= (int64_t)offset * 60;
        if (seconds < TERSA_MIN_SECONDS || seconds > TERSA_MAX_SECONDS) return false;
    }
    uint32_t frac = 0;
    if (zone != 19) {
        /* '.' and 1-9 digits, which end at the zone; the last (up to) eight
         * read as one word whose bytes before the fraction become zeros. */
        size_t digits = zone - 20;
        if (zone < 21 || digits > 9 || s[19] != '.') return false;
        size_t k = digits > 8 ? 8 : digits;
        uint64_t x = (load_le64(s + zone - 8) ^ ZEROS) & (~0ull << (8 * (8 - k)));
        if (!all_digits(x, ~0ull)) return false;
        frac = eight_digits(x);
        if (digits == 9) {
            unsigned first = (unsigned)(s[20] - '0');
            if (first > 9) return false;
            frac += first * 100000000u;
        }
        variant |= (uint8_t)digits;
    }
    out->variant = variant;
    out->seconds = seconds;
    out->frac = frac;
    out->offset = offset;
    return true;
}

#endif
