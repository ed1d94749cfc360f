/*
 * internal.h - shared internals of the Tersa C core (not installed).
 */
#ifndef TERSA_INTERNAL_H
#define TERSA_INTERNAL_H

#include "tersa.h"
#include "tags.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "compiler.h"
#include "hash.h"

/* ==========================================================================
 * Tags (SPEC section 5.1)
 * ========================================================================== */

/* TAG_* and N_* come from SPEC 5.1's table through tags.h (generated); the
 * value ranges their short forms carry are here. */
enum {
    INT_MIN_SMALL = -8, INT_MAX_SMALL = 23, /* INT: tag - 0xA8 */
    DEC_EMIN = -12, DEC_EMAX = 3            /* DEC: exponent tag - 0xDC */
};

#define REF8_BASE 64u
#define REF16_BASE (REF8_BASE + 256u)
#define REF24_BASE (REF16_BASE + 65536u)
#define SHAPE8_BASE 32u
#define SHAPE16_BASE (SHAPE8_BASE + 256u)
#define MIN_TABLE_LEN 2u
#define MAX_PREFIX 127u

#define HEADER_MAGIC0 0xC1
#define HEADER_MAGIC1 0x70
#define FLAG_DICT 0x01
#define FLAG_STREAM 0x02

/* Timestamp-string variant bits (SPEC section 6). */
#define TSV_DIGITS 0x0F
#define TSV_NUMERIC_OFFSET 0x10
#define TSV_SPACE 0x20
#define TSV_DATE_ONLY 0x40

/* ==========================================================================
 * Prefix varints (SPEC section 3.1)
 * ========================================================================== */

/** Bytes needed for `v`. */
TERSA_INLINE unsigned varint_size(uint64_t v) {
    if (v < (1ull << 7)) return 1;
    if (v < (1ull << 14)) return 2;
    if (v < (1ull << 21)) return 3;
    if (v < (1ull << 28)) return 4;
    if (v < (1ull << 35)) return 5;
    if (v < (1ull << 42)) return 6;
    if (v < (1ull << 49)) return 7;
    if (v < (1ull << 56)) return 8;
    return 9;
}

/** The prefix-varint word of `v` below 2^56 (its low varint_size(v) bytes,
 *  little-endian, are the encoding). */
TERSA_INLINE uint64_t varint_word(uint64_t v, unsigned n) { return ((v << 1) | 1) << (n - 1); }

/** Write `v` at `p` (room for 9 bytes needed); returns bytes written. */
TERSA_INLINE unsigned varint_put(uint8_t *p, uint64_t v) {
    unsigned n = varint_size(v);
    if (n == 9) {
        p[0] = 0;
        store_le64(p + 1, v);
        return 9;
    }
    uint8_t tmp[8];
    store_le64(tmp, varint_word(v, n));
    memcpy(p, tmp, n);
    return n;
}

/** varint_put for appends, with room for 9 bytes whatever `v` is: the short
 *  forms store 8 bytes at once, leaving those past the varint undefined. */
TERSA_INLINE unsigned varint_put_room9(uint8_t *p, uint64_t v) {
    if (TERSA_LIKELY(v < (1ull << 7))) {
        p[0] = (uint8_t)((v << 1) | 1);
        return 1;
    }
    unsigned n = varint_size(v);
    if (n == 9) return varint_put(p, v);
    store_le64(p, varint_word(v, n));
    return n;
}

TERSA_INLINE uint64_t zigzag(int64_t s) {
    return ((uint64_t)s << 1) ^ (uint64_t)(s >> 63);
}

TERSA_INLINE int64_t unzigzag(uint64_t z) {
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

/* ==========================================================================
 * Arena: chunked bump allocator, stable pointers
 * ========================================================================== */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size;   /* usable bytes after the header */
    size_t used;
} arena_chunk;

typedef struct arena {
    const tersa_alloc *alloc;
    arena_chunk *head;   /* current chunk (a list of used chunks, newest first) */
    arena_chunk *free;   /* emptied chunks kept for reuse after a reset */
    size_t total;        /* bytes held from the allocator */
} arena;

void tersa_arena_init(arena *a, const tersa_alloc *alloc);
/** Empty the arena, keeping up to a few MiB of chunks for reuse (so a
 *  reused writer or reader allocates nothing in the steady state). */
void tersa_arena_reset(arena *a);
void tersa_arena_free(arena *a);
void *tersa_arena_alloc_slow(arena *a, size_t size);

TERSA_INLINE void *tersa_arena_alloc(arena *a, size_t size) {
    size = (size + 7) & ~(size_t)7;
    arena_chunk *c = a->head;
    if (TERSA_LIKELY(c && c->size - c->used >= size)) {
        void *p = (char *)(c + 1) + c->used;
        c->used += size;
        return p;
    }
    return tersa_arena_alloc_slow(a, size);
}

TERSA_INLINE void copy_bytes(uint8_t *dst, const uint8_t *src, size_t n);

TERSA_INLINE void *tersa_arena_copy(arena *a, const void *src, size_t len) {
    void *p = tersa_arena_alloc(a, len ? len : 1);
    if (p) copy_bytes((uint8_t *)p, (const uint8_t *)src, len);
    return p;
}

/* ==========================================================================
 * Allocator helpers
 * ========================================================================== */

extern const tersa_alloc tersa_default_alloc;

TERSA_INLINE const tersa_alloc *alloc_or_default(const tersa_alloc *a) {
    return a ? a : &tersa_default_alloc;
}

TERSA_INLINE void *mem_alloc(const tersa_alloc *a, size_t n) { return a->malloc(a->ctx, n); }
TERSA_INLINE void *mem_realloc(const tersa_alloc *a, void *p, size_t o, size_t n) {
    return a->realloc(a->ctx, p, o, n);
}
TERSA_INLINE void mem_free(const tersa_alloc *a, void *p, size_t n) {
    if (p) a->free(a->ctx, p, n);
}

/** Grow an array so it holds at least `need` elements of `elem` bytes. */
bool tersa_grow_array(const tersa_alloc *a, void **ptr, size_t *cap, size_t need, size_t elem);

/* Equality of two byte strings of length n, without a call for short ones. */
TERSA_INLINE bool bytes_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    if (n <= 16) {
        if (n >= 8) {
            uint64_t a0, b0, a1, b1;
            memcpy(&a0, a, 8);
            memcpy(&b0, b, 8);
            memcpy(&a1, a + n - 8, 8);
            memcpy(&b1, b + n - 8, 8);
            return a0 == b0 && a1 == b1;
        }
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i]) return false;
        return true;
    }
    return memcmp(a, b, n) == 0;
}

/* Copy n bytes; short copies (n <= 32, the common string) without a call,
 * using overlapping fixed-size moves that never read outside [src, src + n). */
TERSA_INLINE void copy_bytes(uint8_t *dst, const uint8_t *src, size_t n) {
    if (n > 32) {
        memcpy(dst, src, n);
    } else if (n >= 16) {
        uint64_t a, b, c, d;
        memcpy(&a, src, 8);
        memcpy(&b, src + 8, 8);
        memcpy(&c, src + n - 16, 8);
        memcpy(&d, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + 8, &b, 8);
        memcpy(dst + n - 16, &c, 8);
        memcpy(dst + n - 8, &d, 8);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else {
        for (size_t i = 0; i < n; i++) dst[i] = src[i];
    }
}

/* ==========================================================================
 * UTF-8
 * ========================================================================== */

/** Validate UTF-8 (RFC 3629). Sets *ascii when all bytes are < 0x80. */
bool tersa_utf8_valid(const uint8_t *p, size_t n, bool *ascii);

TERSA_INLINE bool utf8_boundary(const uint8_t *s, size_t len, size_t i) {
    return i == len || (s[i] & 0xC0) != 0x80;
}

/* ==========================================================================
 * Slots and registers (SPEC section 4.3)
 * ========================================================================== */

typedef struct tersa_slot {
    const uint8_t *str;   /* bytes of the last string item, stable for the buffer */
    uint32_t str_len;
    uint8_t has_str;
    uint8_t has_int;
    uint8_t has_dec;
    int8_t dec_e;
    int64_t int_val;
    int64_t dec_m;
    uint8_t bin;          /* writers only: binary floats since the last decimal (SPEC 4.3) */
    int8_t dec_hint;      /* writers only: exponent of the last non-zero decimal, tried first */
} tersa_slot;

/* The bin count (SPEC 4.3, 7): a slot tests floats for a decimal form while
 * its count is below BIN_TRUSTED or equal to BIN_RETEST; BIN_TRUSTED follows
 * BIN_RETEST. */
enum { BIN_TRUSTED = 4, BIN_RETEST = 19 };

/** Bytes of the 256 one-byte strings (registers point here for short strings). */
extern const uint8_t tersa_single_bytes[256];

/* ==========================================================================
 * Decimal floats and timestamps
 * ========================================================================== */

/** If `d` has a decimal form (SPEC 7: shortest digits, at most 15, |e| <= 22),
 *  store it and return true. -0.0, NaN and infinities have none. */
bool tersa_decimal_of_double(double d, int64_t *m, int *e);

/** 10^0 .. 10^22, every one exact in binary64. */
extern const double tersa_powers_of_ten[23];

/** d * 10^k for |k| <= 22: one correctly rounded operation on exact operands. */
TERSA_INLINE double tersa_scale_by_ten(double d, int k) {
    return k >= 0 ? d * tersa_powers_of_ten[k] : d / tersa_powers_of_ten[-k];
}

/** d / 10^k for |k| <= 22, likewise. */
TERSA_INLINE double tersa_unscale_by_ten(double n, int k) {
    return k >= 0 ? n / tersa_powers_of_ten[k] : n * tersa_powers_of_ten[-k];
}

/** The decimal form of d (as tersa_decimal_of_double) if it has at most -*e
 * decimals (-22 <= *e <= 22): then true, with *m and *e set; false when it
 * needs more, or when d has no decimal form. One scaling and one check: the
 * cheap first try when a slot's floats have (at most) the same number of
 * decimals.
 *
 * d = N * 10^e with |N| < 10^15 rounding to d is d's shortest representation
 * once the trailing zeros of N move into e: any other decimal that rounds to d
 * and has no more digits is a multiple of 10^e, so it differs from N * 10^e by
 * at least 10^e, more than an ulp of d (at most 0.23 * 10^e here). */
TERSA_INLINE bool tersa_decimal_at_exponent(double d, int *e, int64_t *m) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    int ex = *e;
    double a = fabs(d);
    double x = tersa_scale_by_ten(a, -ex);
    /* Also false for NaN and infinities; zeros fail below (v = 0). */
    if (!(x < 1e15)) return false;
    int64_t v = (int64_t)(x + 0.5);
    if (v == 0 || tersa_unscale_by_ten((double)v, -ex) != a) return false;
    /* Trailing zeros by the divisibility test (v * inverse of 5 modulo 2^64,
     * rotated right by one, is v / 10 exactly when 10 divides v): no division. */
    uint64_t u = (uint64_t)v;
    for (;;) {
        uint64_t q = u * 0xcccccccccccccccdull;
        q = (q >> 1) | (q << 63);
        if (q > 1844674407370955161ull) break;
        u = q;
        ex++;
    }
    if (ex > 22) return false;
    int64_t negative = (int64_t)(bits >> 63);
    *m = ((int64_t)u ^ -negative) + negative;
    *e = ex;
    return true;
}

/** The shortest decimal of a finite double as an integer significand without
 *  trailing zeros (0 for +-0.0) and *exp10: |d| = s * 10^exp10. */
uint64_t tersa_shortest_decimal(double d, int *exp10);

/** The value of a decimal (|m| < 2^53, |e| <= 22): one correctly rounded operation. */
double tersa_double_of_decimal(int64_t m, int e);

/** True if `d` converts to binary32 and back unchanged (NaN: never). */
TERSA_INLINE bool tersa_f32_exact(double d) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    /* A binary32 significand ends 29 bits above a binary64 one: with any of
     * those low bits set, no float holds d. One test settles most doubles. */
    if (bits & 0x1FFFFFFFu) return false;
    if (d != d) return false;
    if (isinf(d)) return true;
    /* Converting an out-of-range double to float is undefined behaviour. */
    if (d > FLT_MAX || d < -FLT_MAX) return false;
    return (double)(float)d == d;
}

/** Widen binary32 bits to a double, keeping NaN payloads bit for bit. */
double tersa_widen_f32(uint32_t bits);

/** A parsed timestamp string (SPEC section 6). */
typedef struct ts_parts {
    uint8_t variant;
    int64_t seconds;   /* UTC */
    uint32_t frac;     /* fraction digits as an integer */
    int32_t offset;    /* minutes */
} ts_parts;

/** Parse a timestamp-like string; false if it is not one (SPEC 6 grammar and ranges). */
bool tersa_ts_parse(const uint8_t *s, size_t n, ts_parts *out);

/** The last valid date ("YYYY-MM-DD") a parse read and its day count, so that
 *  strings of the same day skip reading it again. A zeroed memo holds none. */
typedef struct ts_day_memo {
    uint64_t head;  /* the date's first 8 bytes */
    uint32_t tail;  /* its last 2 */
    int64_t days;   /* since 1970-01-01 */
} ts_day_memo;

/** tersa_ts_parse, taking the date's day count from *memo when it holds the
 *  same date, and leaving the date read in *memo. */
bool tersa_ts_parse_memo(const uint8_t *s, size_t n, ts_parts *out, ts_day_memo *memo);

/** Render; returns the length written to `out` (at most 35 bytes), or 0 if
 *  the local time is outside years 0001-9999. */
size_t tersa_ts_render(const ts_parts *p, uint8_t out[40]);

/* ==========================================================================
 * Well-known extension types (well_known.c, SPEC 5.8)
 * ========================================================================== */

/** NULL if `type` is an application type or a reserved type whose payload is
 *  valid; otherwise why not (the reader reports it as invalid_value). */
const char *tersa_well_known_check(uint32_t type, const uint8_t *p, size_t n);
/** Write a reserved EXT item from its payload, checked first (UNREPRESENTABLE). */
bool tersa_write_well_known_payload(tersa_writer *w, uint32_t type, const uint8_t *p, size_t n);
/** "decimal", "date", "uuid", "time_of_day", or NULL for other types. */
const char *tersa_well_known_name(uint32_t type);

/** writer.c: put the writer in its error state (returns false). */
bool tersa_writer_fail(tersa_writer *w, tersa_code code, const char *message);
/** writer.c: an EXT item of any type 0..65535, without the reserved-type check. */
bool tersa_write_ext_unchecked(tersa_writer *w, uint32_t type, const void *ptr, size_t len);

/* ==========================================================================
 * Dictionaries
 * ========================================================================== */

struct tersa_dict {
    const tersa_alloc *alloc;
    arena mem;
    tersa_key *strings;
    size_t nstrings;
    tersa_key *shape_keys;
    size_t *shape_offsets; /* nshapes + 1 entries into shape_keys */
    size_t nshapes;
    uint8_t *serialized;
    size_t serialized_len;
    uint64_t id;
    /* Unique among all dictionaries a process creates (never 0): writers and
     * readers keep a dictionary's tables loaded between buffers and know
     * them by this, which a new dictionary at a freed one's address cannot
     * fake. */
    uint64_t serial;
};

/** A new dictionary serial (thread-safe). */
uint64_t tersa_dict_next_serial(void);

/* ==========================================================================
 * Errors
 * ========================================================================== */

TERSA_INLINE void set_error(tersa_error *e, tersa_code code, size_t offset, const char *message) {
    e->code = code;
    e->offset = offset;
    e->message = message;
}

#endif /* TERSA_INTERNAL_H */
