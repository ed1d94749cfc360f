/*
 * well_known.c - the well-known extension types (SPEC 5.8): decimal, date,
 * uuid and time of day, carried as EXT items of the reserved types
 * 0xFF00-0xFFFF. One payload checker serves the reader (which rejects invalid
 * payloads when it reads the EXT item), the value writer and the parsers.
 */
#include "internal.h"

#include <stdio.h>

#define APPEND_LIT(out, lit) tersa_buf_append((out), (lit), sizeof(lit) - 1)

#define MAX_EXPONENT 999999999
#define MAX_COEFFICIENT TERSA_DECIMAL_MAX_COEFFICIENT
#define MIN_DAYS (-719162)  /* 0001-01-01 */
#define MAX_DAYS 2932896    /* 9999-12-31 */
#define MICROS_PER_DAY 86400000000ull

/* A payload is a bounded byte string: a varint its end cuts short, or a
 * longer one than necessary, is the payload's defect (invalid_value), not the
 * input's. */
static bool payload_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out) {
    if (*pos >= n) return false;
    const uint8_t first = p[*pos];
    unsigned len = first ? ctz32(first) + 1 : 9;
    if (n - *pos < len) return false;
    uint64_t v = 0, min;
    if (len == 9) {
        for (unsigned i = 8; i > 0; i--) v = (v << 8) | p[*pos + i];
        min = 1ull << 56;
    } else {
        for (unsigned i = len; i > 0; i--) v = (v << 8) | p[*pos + i - 1];
        v >>= len;
        min = len > 1 ? 1ull << (7 * (len - 1)) : 0;
    }
    if (v < min) return false;
    *pos += len;
    *out = v;
    return true;
}

/* A single varint filling the whole payload. */
static bool whole_varint(const uint8_t *p, size_t n, uint64_t *out) {
    size_t pos = 0;
    return payload_varint(p, n, &pos, out) && pos == n;
}

bool tersa_decimal_of_ext(const uint8_t *p, size_t n, tersa_decimal *out) {
    if (n == 0 || p[0] > TERSA_DECIMAL_NAN) return false;
    out->kind = (tersa_decimal_kind)p[0];
    out->exponent = 0;
    out->coefficient = p + n;
    out->coefficient_len = 0;
    if (p[0] >= TERSA_DECIMAL_INF) return n == 1;
    size_t pos = 1;
    uint64_t z;
    if (!payload_varint(p, n, &pos, &z)) return false;
    const int64_t e = unzigzag(z);
    if (e < -MAX_EXPONENT || e > MAX_EXPONENT) return false;
    const size_t len = n - pos;
    if (len > MAX_COEFFICIENT || (len && p[pos] == 0)) return false;
    out->exponent = (int32_t)e;
    out->coefficient = p + pos;
    out->coefficient_len = len;
    return true;
}

bool tersa_date_of_ext(const uint8_t *p, size_t n, int64_t *days) {
    uint64_t z;
    if (!whole_varint(p, n, &z)) return false;
    const int64_t d = unzigzag(z);
    if (d < MIN_DAYS || d > MAX_DAYS) return false;
    *days = d;
    return true;
}

bool tersa_time_of_day_of_ext(const uint8_t *p, size_t n, uint64_t *microseconds) {
    uint64_t v;
    if (!whole_varint(p, n, &v) || v >= MICROS_PER_DAY) return false;
    *microseconds = v;
    return true;
}

const char *tersa_well_known_check(uint32_t type, const uint8_t *p, size_t n) {
    tersa_decimal d;
    int64_t days;
    uint64_t micros;
    switch (type) {
    case TERSA_EXT_DECIMAL:
        return tersa_decimal_of_ext(p, n, &d) ? NULL : "invalid decimal payload";
    case TERSA_EXT_DATE:
        return tersa_date_of_ext(p, n, &days) ? NULL : "invalid date payload";
    case TERSA_EXT_UUID:
        return n == 16 ? NULL : "a uuid payload is 16 bytes";
    case TERSA_EXT_TIME_OF_DAY:
        return tersa_time_of_day_of_ext(p, n, &micros) ? NULL : "invalid time-of-day payload";
    default:
        return type > TERSA_EXT_APP_MAX ? "reserved extension type not defined in version 1" : NULL;
    }
}

/* ==========================================================================
 * Writing
 * ========================================================================== */

bool tersa_write_well_known_payload(tersa_writer *w, uint32_t type, const uint8_t *p, size_t n) {
    const char *why = tersa_well_known_check(type, p, n);
    if (why) return tersa_writer_fail(w, TERSA_ERR_UNREPRESENTABLE, why);
    return tersa_write_ext_unchecked(w, type, p, n);
}

bool tersa_write_decimal(tersa_writer *w, const tersa_decimal *d) {
    if (!d || (unsigned)d->kind > TERSA_DECIMAL_NAN ||
        (d->kind <= TERSA_DECIMAL_NEGATIVE && d->coefficient_len && !d->coefficient))
        return tersa_writer_fail(w, TERSA_ERR_USAGE, "tersa_write_decimal: bad kind or NULL coefficient");
    uint8_t payload[1 + 9 + MAX_COEFFICIENT];
    payload[0] = (uint8_t)d->kind;
    if (d->kind >= TERSA_DECIMAL_INF) return tersa_write_ext_unchecked(w, TERSA_EXT_DECIMAL, payload, 1);
    const uint8_t *c = d->coefficient;
    size_t len = d->coefficient_len;
    while (len && c[0] == 0) c++, len--;
    if (d->exponent < -MAX_EXPONENT || d->exponent > MAX_EXPONENT)
        return tersa_writer_fail(w, TERSA_ERR_UNREPRESENTABLE, "decimal exponent beyond +-999999999");
    if (len > MAX_COEFFICIENT)
        return tersa_writer_fail(w, TERSA_ERR_UNREPRESENTABLE, "decimal coefficient longer than 1024 bytes");
    size_t n = 1 + varint_put(payload + 1, zigzag(d->exponent));
    if (len) memcpy(payload + n, c, len);
    return tersa_write_ext_unchecked(w, TERSA_EXT_DECIMAL, payload, n + len);
}

bool tersa_write_date(tersa_writer *w, int64_t days_since_epoch) {
    if (days_since_epoch < MIN_DAYS || days_since_epoch > MAX_DAYS)
        return tersa_writer_fail(w, TERSA_ERR_UNREPRESENTABLE, "date outside years 0001-9999");
    uint8_t payload[9];
    unsigned n = varint_put(payload, zigzag(days_since_epoch));
    return tersa_write_ext_unchecked(w, TERSA_EXT_DATE, payload, n);
}

bool tersa_write_uuid(tersa_writer *w, const uint8_t bytes[16]) {
    if (!bytes) return tersa_writer_fail(w, TERSA_ERR_USAGE, "tersa_write_uuid: NULL bytes");
    return tersa_write_ext_unchecked(w, TERSA_EXT_UUID, bytes, 16);
}

bool tersa_write_time_of_day(tersa_writer *w, uint64_t microseconds) {
    if (microseconds >= MICROS_PER_DAY)
        return tersa_writer_fail(w, TERSA_ERR_UNREPRESENTABLE, "time of day at or after 24:00:00");
    uint8_t payload[9];
    unsigned n = varint_put(payload, microseconds);
    return tersa_write_ext_unchecked(w, TERSA_EXT_TIME_OF_DAY, payload, n);
}

/* ==========================================================================
 * Text forms (spec/vectors/README.md: $decimal, $date, $uuid, $time_of_day)
 * ========================================================================== */

/* limbs (little-endian, base 2^32, *n of them) = limbs * mul + add */
static bool limbs_mul_add(uint32_t *limbs, size_t *n, size_t cap, uint32_t mul, uint32_t add) {
    uint64_t carry = add;
    for (size_t i = 0; i < *n; i++) {
        uint64_t x = (uint64_t)limbs[i] * mul + carry;
        limbs[i] = (uint32_t)x;
        carry = x >> 32;
    }
    if (carry) {
        if (*n == cap) return false;
        limbs[(*n)++] = (uint32_t)carry;
    }
    return true;
}

bool tersa_decimal_parse(const char *text, size_t len, tersa_decimal *out, uint8_t coefficient[MAX_COEFFICIENT]) {
    static const uint32_t pow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
    const char *s = text, *end = text + len;
    bool negative = s < end && (*s == '-' || *s == '+') ? *s++ == '-' : false;
    out->coefficient = coefficient;
    out->coefficient_len = 0;
    out->exponent = 0;
    if ((size_t)(end - s) == 8 && memcmp(s, "Infinity", 8) == 0) {
        out->kind = negative ? TERSA_DECIMAL_NEG_INF : TERSA_DECIMAL_INF;
        return true;
    }
    if ((size_t)(end - s) == 3 && memcmp(s, "NaN", 3) == 0 && s == text) {
        out->kind = TERSA_DECIMAL_NAN;
        return true;
    }
    out->kind = negative ? TERSA_DECIMAL_NEGATIVE : TERSA_DECIMAL_FINITE;
    /* The coefficient in base-2^32 limbs, fed 9 digits at a time. */
    uint32_t limbs[MAX_COEFFICIENT / 4 + 1];
    size_t nlimbs = 0, ndigits = 0, after_point = 0;
    uint32_t chunk = 0, chunk_digits = 0;
    bool point = false;
    for (; s < end; s++) {
        if (*s == '.' && !point) {
            point = true;
            continue;
        }
        if ((unsigned)(*s - '0') > 9) break;
        ndigits++;
        after_point += point;
        if (chunk == 0 && nlimbs == 0 && *s == '0') continue; /* leading zeros */
        chunk = chunk * 10 + (uint32_t)(*s - '0');
        if (++chunk_digits == 9) {
            if (!limbs_mul_add(limbs, &nlimbs, sizeof limbs / 4, pow10[9], chunk)) return false;
            chunk = chunk_digits = 0;
        }
    }
    if (ndigits == 0) return false;
    if (chunk_digits && !limbs_mul_add(limbs, &nlimbs, sizeof limbs / 4, pow10[chunk_digits], chunk)) return false;
    int64_t e = 0;
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = s < end && (*s == '-' || *s == '+') ? *s++ == '-' : false;
        if (s == end) return false;
        for (; s < end && (unsigned)(*s - '0') <= 9; s++)
            if ((e = e * 10 + (*s - '0')) > 4 * (int64_t)MAX_EXPONENT) return false;
        if (eneg) e = -e;
    }
    if (s != end) return false;
    e -= (int64_t)after_point;
    if (e < -MAX_EXPONENT || e > MAX_EXPONENT) return false;
    out->exponent = (int32_t)e;
    /* Big-endian bytes without leading zeros. */
    size_t n = 0;
    for (size_t i = nlimbs; i-- > 0;)
        for (int b = 3; b >= 0; b--) {
            uint8_t byte = (uint8_t)(limbs[i] >> (8 * b));
            if (n == 0 && byte == 0) continue;
            if (n == MAX_COEFFICIENT) return false;
            coefficient[n++] = byte;
        }
    out->coefficient_len = n;
    return true;
}

/* The General Decimal Arithmetic to-scientific-string (Python's str(Decimal)). */
static bool decimal_text(const tersa_decimal *d, tersa_buf *out) {
    static const char *const special[] = {"Infinity", "-Infinity", "NaN"};
    if (d->kind >= TERSA_DECIMAL_INF) {
        const char *s = special[d->kind - TERSA_DECIMAL_INF];
        return tersa_buf_append(out, s, strlen(s));
    }
    uint8_t le[MAX_COEFFICIENT];
    for (size_t i = 0; i < d->coefficient_len; i++) le[i] = d->coefficient[d->coefficient_len - 1 - i];
    tersa_buf digits;
    tersa_buf_init(&digits, out->alloc);
    /* 1,024 bytes is within TERSA_MAX_DECIMAL_BYTES: this fails only for memory. */
    if (!tersa_format_bigint(false, le, d->coefficient_len, &digits)) {
        tersa_buf_free(&digits);
        out->failed = true;
        return false;
    }
    const char *D = digits.ptr;
    const int64_t nd = (int64_t)digits.len, e = d->exponent, adjusted = e + nd - 1;
    bool ok = d->kind == TERSA_DECIMAL_NEGATIVE ? APPEND_LIT(out, "-") : true;
    if (e <= 0 && adjusted >= -6) {
        const int64_t point = nd + e; /* digits before the point */
        if (e == 0) {
            ok = ok && tersa_buf_append(out, D, (size_t)nd);
        } else if (point > 0) {
            ok = ok && tersa_buf_append(out, D, (size_t)point) && APPEND_LIT(out, ".") &&
                 tersa_buf_append(out, D + point, (size_t)(nd - point));
        } else {
            ok = ok && APPEND_LIT(out, "0.");
            for (int64_t i = 0; ok && i < -point; i++) ok = APPEND_LIT(out, "0");
            ok = ok && tersa_buf_append(out, D, (size_t)nd);
        }
    } else {
        char exp[24];
        int m = snprintf(exp, sizeof exp, "E%c%lld", adjusted >= 0 ? '+' : '-',
                         (long long)(adjusted >= 0 ? adjusted : -adjusted));
        ok = ok && tersa_buf_append(out, D, 1) && (nd == 1 || (APPEND_LIT(out, ".") &&
                                                               tersa_buf_append(out, D + 1, (size_t)nd - 1))) &&
             tersa_buf_append(out, exp, (size_t)m);
    }
    tersa_buf_free(&digits);
    return ok;
}

const char *tersa_well_known_name(uint32_t type) {
    switch (type) {
    case TERSA_EXT_DECIMAL: return "decimal";
    case TERSA_EXT_DATE: return "date";
    case TERSA_EXT_UUID: return "uuid";
    case TERSA_EXT_TIME_OF_DAY: return "time_of_day";
    default: return NULL;
    }
}

bool tersa_well_known_text(uint32_t type, const uint8_t *p, size_t n, tersa_buf *out) {
    char tmp[48];
    int m = 0;
    switch (type) {
    case TERSA_EXT_DECIMAL: {
        tersa_decimal d;
        return tersa_decimal_of_ext(p, n, &d) && decimal_text(&d, out);
    }
    case TERSA_EXT_DATE: {
        int64_t days, y;
        unsigned mo, dd;
        if (!tersa_date_of_ext(p, n, &days)) return false;
        tersa_civil_from_days(days, &y, &mo, &dd);
        m = snprintf(tmp, sizeof tmp, "%04lld-%02u-%02u", (long long)y, mo, dd);
        break;
    }
    case TERSA_EXT_UUID: {
        static const char hex[] = "0123456789abcdef";
        if (n != 16) return false;
        for (size_t i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) tmp[m++] = '-';
            tmp[m++] = hex[p[i] >> 4];
            tmp[m++] = hex[p[i] & 15];
        }
        break;
    }
    case TERSA_EXT_TIME_OF_DAY: {
        uint64_t us;
        if (!tersa_time_of_day_of_ext(p, n, &us)) return false;
        const unsigned s = (unsigned)(us / 1000000), frac = (unsigned)(us % 1000000);
        m = snprintf(tmp, sizeof tmp, "%02u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
        if (frac) m += snprintf(tmp + m, sizeof tmp - (size_t)m, ".%06u", frac);
        break;
    }
    default:
        return false;
    }
    return tersa_buf_append(out, tmp, (size_t)m);
}
