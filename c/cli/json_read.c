/*
 * json_read.c - RFC 8259 JSON to a tersa_doc.
 *
 * The text is copied once into the document, NUL-padded. Every scanning loop
 * then runs without bounds checks: the NUL stops them all (it is neither
 * whitespace, a digit, nor allowed unescaped in a string), and only when a
 * loop stops on a NUL do we ask whether it is the end of the input or a NUL
 * inside it. Strings point into the copy, so the document owns them without a
 * copy per string (twice as fast on string-heavy input as copying each one,
 * for the price of keeping the text's bytes in the document); escaped strings
 * are decoded in place, which is safe because no escape is shorter than what
 * it decodes to.
 *
 * Containers are parsed without recursion: finished values wait on a value
 * stack until their container closes, then move into the document in one
 * piece. The depth limit therefore only guards the consumers of the tree.
 */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "json_special.h"

/* Zero bytes after the copied text: covers the 8-byte word reads of the
 * string scanner and the 4-byte look-ahead of \u escapes and literals. */
#define PAD 16

/* ==========================================================================
 * Allocation
 * ========================================================================== */

static void *std_malloc(void *ctx, size_t size) {
    (void)ctx;
    return malloc(size);
}
static void *std_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx;
    (void)old_size;
    return realloc(ptr, new_size);
}
static void std_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    free(ptr);
}
static const tersa_alloc std_alloc = {std_malloc, std_realloc, std_free, NULL};

/* Grow *ptr (cap elements of elem bytes) to hold at least need elements. */
static bool grow(const tersa_alloc *a, void **ptr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return false;
        ncap *= 2;
    }
    void *p = *ptr ? a->realloc(a->ctx, *ptr, *cap * elem, ncap * elem) : a->malloc(a->ctx, ncap * elem);
    if (!p) return false;
    *ptr = p;
    *cap = ncap;
    return true;
}

/* ==========================================================================
 * Character classes
 * ========================================================================== */

/* 1 for JSON whitespace. */
static const uint8_t ws_class[256] = {
    ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [' '] = 1,
};

/* Non-zero for bytes that end a plain run inside a string: '"', '\\',
 * controls (including the NUL sentinel) and non-ASCII. */
static const uint8_t str_special[256] = {
#define S8 1, 1, 1, 1, 1, 1, 1, 1
#define Z8 0, 0, 0, 0, 0, 0, 0, 0
    S8, S8, S8, S8,                          /* 0x00-0x1F */
    0, 0, 1, 0, 0, 0, 0, 0, Z8, Z8, Z8,      /* 0x20-0x3F: '"' */
    Z8, Z8, Z8, 0, 0, 0, 0, 1, 0, 0, 0,      /* 0x40-0x5F: '\\' */
    Z8, Z8, Z8, Z8,                          /* 0x60-0x7F */
    S8, S8, S8, S8, S8, S8, S8, S8,          /* 0x80-0xBF */
    S8, S8, S8, S8, S8, S8, S8, S8,          /* 0xC0-0xFF */
#undef S8
#undef Z8
};

/* Bytes that may not directly follow a number (they would extend it). */
static const uint8_t num_tail[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
    ['7'] = 1, ['8'] = 1, ['9'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1, ['+'] = 1,
    ['-'] = 1,
};

TERSA_INLINE bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Length of the valid UTF-8 sequence starting with a non-ASCII byte at p, or
 * 0 (RFC 3629: no overlongs, surrogates or code points above U+10FFFF). The
 * padding makes the look-ahead safe; a NUL fails it. */
TERSA_INLINE size_t utf8_seq(const unsigned char *p) {
    unsigned c = p[0];
    if (c < 0xC2) return 0;
    if (c < 0xE0) return (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        unsigned c1 = p[1];
        if ((c1 & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && c1 < 0xA0) return 0; /* overlong */
        if (c == 0xED && c1 >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (c < 0xF5) {
        unsigned c1 = p[1];
        if ((c1 & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && c1 < 0x90) return 0; /* overlong */
        if (c == 0xF4 && c1 >= 0x90) return 0; /* above U+10FFFF */
        return 4;
    }
    return 0;
}

TERSA_INLINE int hex_digit(unsigned char c) {
    if ((unsigned)(c - '0') < 10u) return c - '0';
    c |= 0x20;
    if ((unsigned)(c - 'a') < 6u) return c - 'a' + 10;
    return -1;
}

/* Four hex digits, or -1. */
TERSA_INLINE long hex4(const unsigned char *p) {
    int a = hex_digit(p[0]), b = hex_digit(p[1]), c = hex_digit(p[2]), d = hex_digit(p[3]);
    if ((a | b | c | d) < 0) return -1;
    return (long)((a << 12) | (b << 8) | (c << 4) | d);
}

/* ==========================================================================
 * Parser state
 * ========================================================================== */

typedef struct jr_frame {
    size_t start;  /* first slot of this container's items on the value stack */
    size_t kstart; /* first slot of its key offsets (objects) */
    bool object;
} jr_frame;

typedef struct jr {
    const tersa_alloc *alloc;
    tersa_doc *doc;
    const char *text;   /* the caller's text, for line and column */
    const char *base;   /* the document's NUL-padded copy of the text */
    const char *end;    /* base + len */
    uint32_t max_depth;
    json_error *err;

    tersa_value *vals; /* finished values of open containers (objects: key, value, ...) */
    size_t nvals, cvals;
    size_t *koffs;    /* offsets of the keys of open objects, for duplicate errors */
    size_t nkoffs, ckoffs;
    jr_frame *frames; /* open containers */
    size_t nframes, cframes;
    uint32_t *limbs;  /* big-integer scratch */
    size_t climbs;
    uint8_t *magbuf;
    size_t cmagbuf;
} jr;

/* Record an error at byte offset `at` of the text; computes line and
 * column from the caller's text (the copy may already be unescaped). */
static TERSA_NOINLINE void set_error(jr *r, size_t at, const char *message) {
    json_error *e = r->err;
    e->message = message;
    e->offset = at;
    size_t line = 1, col = 1;
    const unsigned char *t = (const unsigned char *)r->text;
    size_t i = 0;
    if (at >= 3 && t[0] == 0xEF && t[1] == 0xBB && t[2] == 0xBF) i = 3;
    for (; i < at; i++) {
        if (t[i] == '\n') {
            line++;
            col = 1;
        } else if ((t[i] & 0xC0) != 0x80) {
            col++;
        }
    }
    e->line = line;
    e->column = col;
}

TERSA_INLINE size_t off(const jr *r, const char *p) { return (size_t)(p - r->base); }

static TERSA_NOINLINE const char *fail(jr *r, const char *p, const char *message) {
    set_error(r, off(r, p), message);
    return NULL;
}

static TERSA_NOINLINE const char *nomem(jr *r, const char *p) {
    return fail(r, p, "out of memory");
}

TERSA_INLINE const char *skip_ws(const char *p) {
    while (ws_class[(unsigned char)*p]) p++;
    return p;
}

/* ==========================================================================
 * Strings
 * ========================================================================== */

/* Decode in place from the first escape at p (inside a string that began
 * at s); returns the position after the closing quote. */
static TERSA_NOINLINE const char *parse_escaped(jr *r, const char *s, const char *p, tersa_value *v) {
    char *d = (char *)(uintptr_t)p; /* our own copy: writable */
    for (;;) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (!swar_special(w)) {
            /* d <= p: the word is loaded before it is stored. */
            memcpy(d, &w, 8);
            d += 8;
            p += 8;
            continue;
        }
        unsigned char c = (unsigned char)*p;
        if (!str_special[c]) {
            *d++ = *p++;
            continue;
        }
        if (c == '"') {
            v->type = TERSA_STRING;
            v->v.str.ptr = s;
            v->v.str.len = (size_t)(d - s);
            return p + 1;
        }
        if (c >= 0x80) {
            size_t n = utf8_seq((const unsigned char *)p);
            if (!n) return fail(r, p, "invalid UTF-8 in string");
            for (size_t i = 0; i < n; i++) d[i] = p[i];
            d += n;
            p += n;
            continue;
        }
        if (c != '\\')
            return fail(r, p, p >= r->end ? "unterminated string" : "control character in string");
        const char *esc = p;
        switch (p[1]) {
        case '"': *d++ = '"'; p += 2; continue;
        case '\\': *d++ = '\\'; p += 2; continue;
        case '/': *d++ = '/'; p += 2; continue;
        case 'b': *d++ = '\b'; p += 2; continue;
        case 'f': *d++ = '\f'; p += 2; continue;
        case 'n': *d++ = '\n'; p += 2; continue;
        case 'r': *d++ = '\r'; p += 2; continue;
        case 't': *d++ = '\t'; p += 2; continue;
        case 'u': break;
        default:
            if (p + 1 >= r->end) return fail(r, p + 1, "unterminated string");
            return fail(r, p, "invalid escape");
        }
        long cp = hex4((const unsigned char *)p + 2);
        if (cp < 0) return fail(r, p, "invalid \\u escape");
        p += 6;
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            /* UTF-16 surrogates: only a high one followed by a low one. */
            if (cp >= 0xDC00 || p[0] != '\\' || p[1] != 'u')
                return fail(r, esc, "lone surrogate in \\u escape");
            long lo = hex4((const unsigned char *)p + 2);
            if (lo < 0) return fail(r, p, "invalid \\u escape");
            if (lo < 0xDC00 || lo > 0xDFFF) return fail(r, esc, "lone surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        }
        if (cp < 0x80) {
            *d++ = (char)cp;
        } else if (cp < 0x800) {
            *d++ = (char)(0xC0 | (cp >> 6));
            *d++ = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            *d++ = (char)(0xE0 | (cp >> 12));
            *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *d++ = (char)(0x80 | (cp & 0x3F));
        } else {
            *d++ = (char)(0xF0 | (cp >> 18));
            *d++ = (char)(0x80 | ((cp >> 12) & 0x3F));
            *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *d++ = (char)(0x80 | (cp & 0x3F));
        }
    }
}

/* p is at the opening quote. */
TERSA_INLINE const char *parse_string(jr *r, const char *p, tersa_value *v) {
    const char *s = ++p;
    for (;;) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (TERSA_LIKELY(!swar_special(w))) {
            p += 8;
            continue;
        }
        while (!str_special[(unsigned char)*p]) p++;
        unsigned char c = (unsigned char)*p;
        if (TERSA_LIKELY(c == '"')) {
            v->type = TERSA_STRING;
            v->v.str.ptr = s;
            v->v.str.len = (size_t)(p - s);
            return p + 1;
        }
        if (c >= 0x80) {
            size_t n = utf8_seq((const unsigned char *)p);
            if (!n) return fail(r, p, "invalid UTF-8 in string");
            p += n;
            continue;
        }
        if (c == '\\') return parse_escaped(r, s, p, v);
        return fail(r, p, p >= r->end ? "unterminated string" : "control character in string");
    }
}

/* ==========================================================================
 * Numbers
 * ========================================================================== */

/* The digits of the largest magnitude of TERSA_MAX_DECIMAL_BYTES bytes: 65,536 bits. */
#define TERSA_MAX_DECIMAL_DIGITS 19729

/* An integer of nd > 19 decimal digits at ds: TERSA_UINT if it fits 64 bits
 * (and is positive), else TERSA_BIGINT with its little-endian magnitude.
 * Schoolbook base-10^9 conversion: quadratic in the digit count, so callers
 * stop at TERSA_MAX_DECIMAL_DIGITS. */
static TERSA_NOINLINE bool parse_big(jr *r, const char *ds, size_t nd, bool neg, tersa_value *v) {
    size_t maxl = nd / 9 + 2;
    if (!grow(r->alloc, (void **)&r->limbs, &r->climbs, maxl, sizeof(uint32_t))) return false;
    uint32_t *l = r->limbs;
    size_t nl = 0;
    size_t first = nd % 9 ? nd % 9 : 9;
    for (size_t i = 0; i < nd;) {
        size_t take = i == 0 ? first : 9;
        uint32_t chunk = 0, scale = 1;
        for (size_t j = 0; j < take; j++) {
            chunk = chunk * 10 + (uint32_t)(ds[i + j] - '0');
            scale *= 10;
        }
        i += take;
        uint64_t carry = chunk;
        for (size_t k = 0; k < nl; k++) {
            uint64_t t = (uint64_t)l[k] * scale + carry;
            l[k] = (uint32_t)t;
            carry = t >> 32;
        }
        if (carry) l[nl++] = (uint32_t)carry;
    }
    size_t nbytes = nl * 4;
    if (!grow(r->alloc, (void **)&r->magbuf, &r->cmagbuf, nbytes, 1)) return false;
    for (size_t k = 0; k < nl; k++) {
        r->magbuf[4 * k] = (uint8_t)l[k];
        r->magbuf[4 * k + 1] = (uint8_t)(l[k] >> 8);
        r->magbuf[4 * k + 2] = (uint8_t)(l[k] >> 16);
        r->magbuf[4 * k + 3] = (uint8_t)(l[k] >> 24);
    }
    while (nbytes && r->magbuf[nbytes - 1] == 0) nbytes--;
    if (!neg && nbytes <= 8) { /* 10^19 <= value < 2^64 */
        uint64_t u = 0;
        for (size_t k = nbytes; k-- > 0;) u = (u << 8) | r->magbuf[k];
        v->type = TERSA_UINT;
        v->v.u = u;
        return true;
    }
    uint8_t *mag = (uint8_t *)tersa_doc_bytes(r->doc, r->magbuf, nbytes);
    if (!mag) return false;
    v->type = TERSA_BIGINT;
    v->v.big.negative = neg;
    v->v.big.mag = mag;
    v->v.big.len = nbytes;
    return true;
}

/* p is at '-' or a digit. */
TERSA_INLINE const char *parse_number(jr *r, const char *p, tersa_value *v) {
    const char *s = p;
    bool neg = *p == '-';
    p += neg;
    const char *ds = p;
    uint64_t u = 0;
    if (*p == '0') {
        p++;
    } else if (is_digit(*p)) {
        do {
            u = u * 10 + (uint64_t)(*p - '0');
            p++;
        } while (is_digit(*p));
    } else {
        return fail(r, s, "invalid number");
    }
    size_t nd = (size_t)(p - ds);
    if (*p == '.' || *p == 'e' || *p == 'E') {
        double d;
        const char *q = tersa_parse_double(s, r->end, &d);
        if (!q) return fail(r, s, "invalid number");
        uint64_t bits;
        memcpy(&bits, &d, 8);
        if ((bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull)
            return fail(r, s, "number out of range");
        v->type = TERSA_FLOAT;
        v->v.f = d;
        p = q;
    } else if (TERSA_LIKELY(nd <= 19)) { /* u is exact */
        if (!neg) {
            if (u <= (uint64_t)INT64_MAX) {
                v->type = TERSA_INT;
                v->v.i = (int64_t)u;
            } else {
                v->type = TERSA_UINT;
                v->v.u = u;
            }
        } else if (u <= (uint64_t)INT64_MAX) {
            v->type = TERSA_INT;
            v->v.i = -(int64_t)u; /* -0 is 0 */
        } else if (u == (uint64_t)INT64_MAX + 1) {
            v->type = TERSA_INT;
            v->v.i = INT64_MIN;
        } else {
            uint8_t mag[8];
            size_t n = 0;
            for (uint64_t t = u; t; t >>= 8) mag[n++] = (uint8_t)t;
            uint8_t *m = (uint8_t *)tersa_doc_bytes(r->doc, mag, n);
            if (!m) return nomem(r, s);
            v->type = TERSA_BIGINT;
            v->v.big.negative = true;
            v->v.big.mag = m;
            v->v.big.len = n;
        }
    } else if (nd > TERSA_MAX_DECIMAL_DIGITS) {
        /* decimal to binary is quadratic in the digits: the limit that
         * tersa_format_bigint keeps for the way back */
        return fail(r, s, "integer too long (over 19,729 digits)");
    } else if (!parse_big(r, ds, nd, neg, v)) {
        return nomem(r, s);
    }
    if (TERSA_UNLIKELY(num_tail[(unsigned char)*p])) return fail(r, s, "invalid number");
    return p;
}

/* ==========================================================================
 * Containers
 * ========================================================================== */

typedef struct dup_slot {
    uint64_t hash;
    size_t index;
} dup_slot;

static uint64_t key_hash(const char *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    if (n) memcpy(&w, p, n);
    h = (h ^ w) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

TERSA_INLINE bool key_eq(const tersa_value *a, const tersa_value *b) {
    return a->v.str.len == b->v.str.len &&
           (a->v.str.len == 0 || memcmp(a->v.str.ptr, b->v.str.ptr, a->v.str.len) == 0);
}

size_t json_first_duplicate(const tersa_value *keys, size_t n, const tersa_alloc *alloc) {
    if (n <= 16) {
        /* Pairwise is cheaper than hashing at this size; lengths rarely match. */
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (key_eq(&keys[i], &keys[j])) return j;
        return n;
    }
    size_t cap = 32;
    while (cap < 2 * n) cap *= 2;
    if (cap > SIZE_MAX / sizeof(dup_slot)) return SIZE_MAX;
    dup_slot *t = (dup_slot *)alloc->malloc(alloc->ctx, cap * sizeof(dup_slot));
    if (!t) return SIZE_MAX;
    for (size_t i = 0; i < cap; i++) t[i].index = SIZE_MAX;
    size_t found = n;
    for (size_t j = 0; j < n && found == n; j++) {
        uint64_t h = key_hash(keys[j].v.str.ptr, keys[j].v.str.len);
        size_t at = (size_t)h & (cap - 1);
        while (t[at].index != SIZE_MAX) {
            if (t[at].hash == h && key_eq(&keys[t[at].index], &keys[j])) {
                found = j;
                break;
            }
            at = (at + 1) & (cap - 1);
        }
        t[at].hash = h;
        t[at].index = j;
    }
    alloc->free(alloc->ctx, t, cap * sizeof(dup_slot));
    return found;
}

/* Move the open container's items from the value stack into the document. */
static bool close_container(jr *r, const char *p, tersa_value *v) {
    jr_frame *f = &r->frames[r->nframes - 1];
    size_t n = r->nvals - f->start;
    const tersa_value *items = n ? r->vals + f->start : NULL; /* vals is NULL until first used */
    if (!f->object) {
        tersa_value *a = tersa_doc_values(r->doc, n);
        if (!a) return nomem(r, p), false;
        if (n) memcpy(a, items, n * sizeof(tersa_value));
        v->type = TERSA_ARRAY;
        v->v.array.items = a;
        v->v.array.count = n;
    } else {
        n /= 2;
        tersa_value *keys = tersa_doc_values(r->doc, n);
        tersa_value *values = tersa_doc_values(r->doc, n);
        if (!keys || !values) return nomem(r, p), false;
        for (size_t i = 0; i < n; i++) {
            keys[i] = items[2 * i];
            values[i] = items[2 * i + 1];
        }
        if (n > 1) {
            size_t dup = json_first_duplicate(keys, n, r->alloc);
            if (dup == SIZE_MAX) return nomem(r, p), false;
            if (dup < n) {
                set_error(r, r->koffs[f->kstart + dup], "duplicate key");
                return false;
            }
        }
        v->type = TERSA_MAP;
        v->v.map.keys = keys;
        v->v.map.values = values;
        v->v.map.count = n;
        r->nkoffs = f->kstart;
    }
    r->nvals = f->start;
    r->nframes--;
    return true;
}

TERSA_INLINE bool push_value(jr *r, const tersa_value *v) {
    if (TERSA_UNLIKELY(r->nvals == r->cvals) &&
        !grow(r->alloc, (void **)&r->vals, &r->cvals, r->nvals + 1, sizeof(tersa_value)))
        return false;
    r->vals[r->nvals++] = *v;
    return true;
}

static bool open_container(jr *r, const char *p, bool object) {
    if (r->nframes >= r->max_depth) return fail(r, p, "nesting too deep"), false;
    if (r->nframes == r->cframes &&
        !grow(r->alloc, (void **)&r->frames, &r->cframes, r->nframes + 1, sizeof(jr_frame)))
        return nomem(r, p), false;
    jr_frame *f = &r->frames[r->nframes++];
    f->start = r->nvals;
    f->kstart = r->nkoffs;
    f->object = object;
    return true;
}

/* ==========================================================================
 * Values
 * ========================================================================== */

/* Parse one JSON value starting at (or after whitespace before) p into *out;
 * returns the position after it. */
static const char *parse_value(jr *r, const char *p, tersa_value *out) {
    tersa_value v;
    memset(&v, 0, sizeof v);

value:
    p = skip_ws(p);
    switch (*p) {
    case '"':
        p = parse_string(r, p, &v);
        if (!p) return NULL;
        goto have_value;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        p = parse_number(r, p, &v);
        if (!p) return NULL;
        goto have_value;
    case '{':
        if (!open_container(r, p, true)) return NULL;
        p = skip_ws(p + 1);
        if (*p == '}') {
            p++;
            if (!close_container(r, p, &v)) return NULL;
            goto have_value;
        }
        goto key;
    case '[':
        if (!open_container(r, p, false)) return NULL;
        p = skip_ws(p + 1);
        if (*p == ']') {
            p++;
            if (!close_container(r, p, &v)) return NULL;
            goto have_value;
        }
        goto value;
    case 't':
        if (memcmp(p, "true", 4) != 0) return fail(r, p, "invalid literal");
        v.type = TERSA_TRUE;
        p += 4;
        goto literal;
    case 'f':
        if (memcmp(p, "false", 5) != 0) return fail(r, p, "invalid literal");
        v.type = TERSA_FALSE;
        p += 5;
        goto literal;
    case 'n':
        if (memcmp(p, "null", 4) != 0) return fail(r, p, "invalid literal");
        v.type = TERSA_NULL;
        p += 4;
        goto literal;
    default:
        if (p >= r->end) return fail(r, p, "unexpected end of input");
        return fail(r, p, "unexpected character");
    }

literal:
    /* "truex" is one bad token, not "true" followed by junk. */
    if ((unsigned char)((*p | 0x20) - 'a') < 26 || is_digit(*p))
        return fail(r, p - (v.type == TERSA_FALSE ? 5 : 4), "invalid literal");

have_value:
    if (r->nframes == 0) {
        *out = v;
        return p;
    }
    if (!push_value(r, &v)) return nomem(r, p);

    /* After a value inside a container: ',' or the closing bracket. */
    for (;;) {
        p = skip_ws(p);
        jr_frame *f = &r->frames[r->nframes - 1];
        if (*p == ',') {
            p++;
            if (f->object) goto key;
            goto value;
        }
        if (*p == (f->object ? '}' : ']')) {
            p++;
            if (!close_container(r, p, &v)) return NULL;
            if (r->nframes == 0) {
                *out = v;
                return p;
            }
            if (!push_value(r, &v)) return nomem(r, p);
            continue;
        }
        if (p >= r->end) return fail(r, p, "unexpected end of input");
        return fail(r, p, f->object ? "expected ',' or '}'" : "expected ',' or ']'");
    }

key:
    p = skip_ws(p);
    if (*p != '"') {
        if (p >= r->end) return fail(r, p, "unexpected end of input");
        return fail(r, p, "expected a string key");
    }
    if (r->nkoffs == r->ckoffs &&
        !grow(r->alloc, (void **)&r->koffs, &r->ckoffs, r->nkoffs + 1, sizeof(size_t)))
        return nomem(r, p);
    r->koffs[r->nkoffs++] = off(r, p);
    p = parse_string(r, p, &v);
    if (!p) return NULL;
    if (!push_value(r, &v)) return nomem(r, p);
    p = skip_ws(p);
    if (*p != ':') {
        if (p >= r->end) return fail(r, p, "unexpected end of input");
        return fail(r, p, "expected ':'");
    }
    p++;
    goto value;
}

/* ==========================================================================
 * Entry points
 * ========================================================================== */

static tersa_doc *read_any(const tersa_alloc *alloc, const char *text, size_t len,
                          const json_read_options *opts, json_error *err, bool seq) {
    jr r;
    memset(&r, 0, sizeof r);
    memset(err, 0, sizeof *err);
    r.alloc = alloc ? alloc : &std_alloc;
    r.err = err;
    r.text = text;
    r.max_depth = opts && opts->max_depth ? opts->max_depth : TERSA_DEFAULT_MAX_DEPTH;

    tersa_doc *doc = tersa_doc_new(alloc);
    if (!doc) {
        err->message = "out of memory";
        err->line = err->column = 1;
        return NULL;
    }
    r.doc = doc;

    /* The copy is carved out of value storage because that is the document
     * allocation that comes zeroed: the padding must be NUL. */
    if (len > SIZE_MAX - PAD - sizeof(tersa_value)) goto oom;
    char *base = (char *)tersa_doc_values(doc, (len + PAD + sizeof(tersa_value) - 1) / sizeof(tersa_value));
    if (!base) goto oom;
    if (len) memcpy(base, text, len);
    r.base = base;
    r.end = base + len;

    const char *p = base;
    if (len >= 3 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB &&
        (unsigned char)p[2] == 0xBF)
        p += 3;

    bool ok = true;
    for (;;) {
        p = skip_ws(p);
        if (seq && p >= r.end) break;
        tersa_value v;
        p = parse_value(&r, p, &v);
        if (!p) {
            ok = false;
            break;
        }
        if (!tersa_doc_push(doc, &v)) {
            nomem(&r, p);
            ok = false;
            break;
        }
        if (!seq) {
            p = skip_ws(p);
            if (p < r.end) {
                fail(&r, p, "unexpected content after the value");
                ok = false;
            }
            break;
        }
    }

    const tersa_alloc *a = r.alloc;
    if (r.vals) a->free(a->ctx, r.vals, r.cvals * sizeof(tersa_value));
    if (r.koffs) a->free(a->ctx, r.koffs, r.ckoffs * sizeof(size_t));
    if (r.frames) a->free(a->ctx, r.frames, r.cframes * sizeof(jr_frame));
    if (r.limbs) a->free(a->ctx, r.limbs, r.climbs * sizeof(uint32_t));
    if (r.magbuf) a->free(a->ctx, r.magbuf, r.cmagbuf);
    if (!ok) {
        tersa_doc_free(doc);
        return NULL;
    }
    return doc;

oom:
    tersa_doc_free(doc);
    err->message = "out of memory";
    err->line = err->column = 1;
    return NULL;
}

tersa_doc *json_read(const tersa_alloc *alloc, const char *text, size_t len,
                    const json_read_options *opts, json_error *err) {
    return read_any(alloc, text, len, opts, err, false);
}

tersa_doc *json_read_seq(const tersa_alloc *alloc, const char *text, size_t len,
                        const json_read_options *opts, json_error *err) {
    return read_any(alloc, text, len, opts, err, true);
}
