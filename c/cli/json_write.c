/*
 * json_write.c - a tersa_value as JSON text.
 *
 * The tree is walked with an explicit stack rather than recursion: documents
 * may be deeper than the C stack is safe for (a reader's depth limit is the
 * application's choice), and the stack doubles as the JSON path that error
 * messages print.
 *
 * Output goes straight into the tersa_buf's memory after one capacity check
 * per token (the buffer's fields are public); the byte loops never call
 * functions.
 */
#include "json.h"

#include <stdio.h>
#include <string.h>

#include "compiler.h"
#include "digits.h"
#include "json_special.h"

/* ==========================================================================
 * Writer state and output
 * ========================================================================== */

typedef struct jw_frame {
    const tersa_value *v; /* an array or map being written */
    size_t i;            /* items started so far; the current one is i - 1 */
} jw_frame;

typedef struct jw {
    tersa_buf *out;
    json_write_options o;
    json_error *err;
    const tersa_alloc *alloc; /* out's allocator, also for temporary memory */
    const json_sink *sink;   /* NULL, or where `out` empties (never a scratch buffer) */
    tersa_buf *sink_buf;      /* the buffer that empties into sink */
    bool flushed;            /* some text already went to the sink */
    jw_frame *stack;
    size_t depth, cap;
} jw;

static TERSA_NOINLINE bool out_of_memory(jw *w) {
    w->out->failed = true;
    w->err->message = "out of memory";
    return false;
}

/* Make room for n more bytes plus the NUL that tersa_buf keeps after len. */
static TERSA_NOINLINE bool grow_out(jw *w, size_t n) {
    tersa_buf *b = w->out;
    if (b->failed) return out_of_memory(w);
    if (w->sink && b == w->sink_buf && b->len >= w->sink->threshold) {
        if (!w->sink->write(w->sink->ctx, b->ptr, b->len)) {
            w->err->message = "write failed";
            return false;
        }
        b->len = 0;
        w->flushed = true;
        if (b->ptr && b->cap - b->len > n) return true;
    }
    if (n > SIZE_MAX - 1 - b->len) return out_of_memory(w);
    size_t want = b->len + n + 1;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < want) {
        if (ncap > SIZE_MAX / 2) return out_of_memory(w);
        ncap *= 2;
    }
    char *p = b->ptr ? (char *)b->alloc->realloc(b->alloc->ctx, b->ptr, b->cap, ncap)
                     : (char *)b->alloc->malloc(b->alloc->ctx, ncap);
    if (!p) return out_of_memory(w);
    b->ptr = p;
    b->cap = ncap;
    return true;
}

TERSA_INLINE bool reserve(jw *w, size_t n) {
    tersa_buf *b = w->out;
    if (TERSA_LIKELY(b->ptr && b->cap - b->len > n)) return true;
    return grow_out(w, n);
}

/* Append; the caller has reserved. */
TERSA_INLINE void put(jw *w, const void *p, size_t n) {
    memcpy(w->out->ptr + w->out->len, p, n);
    w->out->len += n;
}

TERSA_INLINE void put_c(jw *w, char c) { w->out->ptr[w->out->len++] = c; }

TERSA_INLINE bool append(jw *w, const void *p, size_t n) {
    if (!reserve(w, n)) return false;
    put(w, p, n);
    return true;
}

#define APPEND_LIT(w, s) append((w), (s), sizeof(s) - 1)

/* A line break and the indentation of the given depth (pretty output only). */
static bool newline(jw *w, size_t depth) {
    if (!w->o.indent) return true;
    size_t n = (size_t)w->o.indent * depth;
    if (!reserve(w, n + 1)) return false;
    put_c(w, '\n');
    memset(w->out->ptr + w->out->len, ' ', n);
    w->out->len += n;
    return true;
}

/* ==========================================================================
 * Errors with a JSON path
 * ========================================================================== */

static bool is_identifier(const char *s, size_t n) {
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool alpha = (unsigned char)((c | 0x20) - 'a') < 26 || c == '_' || c == '$';
        if (!alpha && !(i > 0 && (unsigned)(c - '0') < 10u)) return false;
    }
    return true;
}

/* Append to a fixed buffer, truncating with "..." when full. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sput(sbuf *s, const char *p, size_t n) {
    for (size_t i = 0; i < n && s->len + 1 < s->cap; i++) s->p[s->len++] = p[i];
    s->p[s->len] = '\0';
}

static void sputs(sbuf *s, const char *p) { sput(s, p, strlen(p)); }

/* Record "<what> at <path>" for the value being written (or the map entry
 * whose key is being written). */
static TERSA_NOINLINE bool fail(jw *w, const char *what) {
    json_error *e = w->err;
    sbuf s = {e->text, 0, sizeof e->text};
    sputs(&s, what);
    sputs(&s, " at $");
    for (size_t d = 0; d < w->depth; d++) {
        const tersa_value *c = w->stack[d].v;
        size_t i = w->stack[d].i - 1;
        char num[32];
        if (c->type == TERSA_ARRAY) {
            snprintf(num, sizeof num, "[%zu]", i);
            sputs(&s, num);
            continue;
        }
        const tersa_value *k = &c->v.map.keys[i];
        if (k->type == TERSA_STRING || k->type == TERSA_SYMBOL) {
            if (is_identifier(k->v.str.ptr, k->v.str.len)) {
                sputs(&s, ".");
                sput(&s, k->v.str.ptr, k->v.str.len);
            } else {
                sputs(&s, "[\"");
                for (size_t j = 0; j < k->v.str.len; j++) {
                    char ch = k->v.str.ptr[j];
                    if (ch == '"' || ch == '\\') sputs(&s, "\\");
                    sput(&s, &ch, 1);
                }
                sputs(&s, "\"]");
            }
        } else if (k->type == TERSA_INT) {
            snprintf(num, sizeof num, "[%lld]", (long long)k->v.i);
            sputs(&s, num);
        } else if (k->type == TERSA_UINT) {
            snprintf(num, sizeof num, "[%llu]", (unsigned long long)k->v.u);
            sputs(&s, num);
        } else {
            snprintf(num, sizeof num, "[key #%zu]", i);
            sputs(&s, num);
        }
    }
    if (s.len + 1 >= s.cap && s.cap > 4) memcpy(s.p + s.cap - 4, "...", 4);
    e->message = e->text;
    return false;
}

/* ==========================================================================
 * Scalars
 * ========================================================================== */

static bool write_u64(jw *w, uint64_t u, bool neg) {
    char buf[24];
    char *p = u64_digits(u, buf + sizeof buf);
    if (neg) *--p = '-';
    return append(w, p, (size_t)(buf + sizeof buf - p));
}

/* A magnitude of any length up to TERSA_MAX_DECIMAL_BYTES, exactly, by the
 * core's conversion (quadratic in the length, hence its limit). */
static bool write_bigint(jw *w, bool neg, const uint8_t *mag, size_t len) {
    if (tersa_format_bigint(neg, mag, len, w->out)) return true;
    return w->out->failed ? out_of_memory(w) : fail(w, "integer too long to write in decimal (over 8192 bytes)");
}

TERSA_INLINE bool byte_special(unsigned char c) { return c < 0x20 || c >= 0x80 || c == '"' || c == '\\'; }

/* Length of the valid UTF-8 sequence at p (first byte >= 0x80, n bytes
 * available) and its code point, or 0. */
static size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp) {
    unsigned c = p[0];
    if (c < 0xC2) return 0;
    if (c < 0xE0) {
        if (n < 2 || (p[1] & 0xC0) != 0x80) return 0;
        *cp = ((c & 0x1Fu) << 6) | (p[1] & 0x3Fu);
        return 2;
    }
    if (c < 0xF0) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0)) return 0;
        *cp = ((c & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if ((c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90)) return 0;
        *cp = ((c & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
        return 4;
    }
    return 0;
}

static const char hex_digits[] = "0123456789abcdef";

TERSA_INLINE void put_u_escape(jw *w, uint32_t u) {
    char e[6] = {'\\', 'u', hex_digits[(u >> 12) & 15], hex_digits[(u >> 8) & 15],
                 hex_digits[(u >> 4) & 15], hex_digits[u & 15]};
    put(w, e, 6);
}

static bool write_string(jw *w, const char *str, size_t len) {
    if (len == 0) return APPEND_LIT(w, "\"\""); /* str may be NULL */
    const unsigned char *p = (const unsigned char *)str, *end = p + len;
    if (!reserve(w, len + 2)) return false; /* exact when nothing needs escaping */
    put_c(w, '"');
    while (p < end) {
        const unsigned char *run = p;
        while (end - p >= 8) {
            uint64_t x;
            memcpy(&x, p, 8);
            if (swar_special(x)) break;
            p += 8;
        }
        while (p < end && !byte_special(*p)) p++;
        if (p > run) {
            if (!reserve(w, (size_t)(p - run))) return false;
            put(w, run, (size_t)(p - run));
        }
        if (p == end) break;
        if (!reserve(w, 12)) return false;
        unsigned char c = *p;
        if (c >= 0x80) {
            uint32_t cp;
            size_t n = utf8_decode(p, (size_t)(end - p), &cp);
            if (!n) return fail(w, "invalid UTF-8 in string");
            if (!w->o.ascii) {
                put(w, p, n);
            } else if (cp < 0x10000) {
                put_u_escape(w, cp);
            } else {
                cp -= 0x10000;
                put_u_escape(w, 0xD800 + (cp >> 10));
                put_u_escape(w, 0xDC00 + (cp & 0x3FF));
            }
            p += n;
            continue;
        }
        char e[2] = {'\\', 0};
        switch (c) {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\n': e[1] = 'n'; break;
        case '\t': e[1] = 't'; break;
        case '\r': e[1] = 'r'; break;
        case '\b': e[1] = 'b'; break;
        case '\f': e[1] = 'f'; break;
        default: break;
        }
        if (e[1])
            put(w, e, 2);
        else
            put_u_escape(w, c);
        p++;
    }
    if (!reserve(w, 1)) return false;
    put_c(w, '"');
    return true;
}

static bool write_base64(jw *w, const uint8_t *p, size_t n) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n > (SIZE_MAX - 3) / 4 * 3) return out_of_memory(w);
    if (!reserve(w, (n + 2) / 3 * 4 + 2)) return false;
    char *o = w->out->ptr + w->out->len;
    *o++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t t = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = alphabet[t >> 18];
        *o++ = alphabet[(t >> 12) & 63];
        *o++ = alphabet[(t >> 6) & 63];
        *o++ = alphabet[t & 63];
    }
    if (n - i == 1) {
        uint32_t t = (uint32_t)p[i] << 16;
        *o++ = alphabet[t >> 18];
        *o++ = alphabet[(t >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (n - i == 2) {
        uint32_t t = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        *o++ = alphabet[t >> 18];
        *o++ = alphabet[(t >> 12) & 63];
        *o++ = alphabet[(t >> 6) & 63];
        *o++ = '=';
    }
    *o++ = '"';
    w->out->len = (size_t)(o - w->out->ptr);
    return true;
}

static bool write_hex(jw *w, const uint8_t *p, size_t n) {
    if (n > (SIZE_MAX - 3) / 2) return out_of_memory(w);
    if (!reserve(w, 2 * n + 2)) return false;
    char *o = w->out->ptr + w->out->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        *o++ = hex_digits[p[i] >> 4];
        *o++ = hex_digits[p[i] & 15];
    }
    *o++ = '"';
    w->out->len = (size_t)(o - w->out->ptr);
    return true;
}

static bool write_float(jw *w, double d) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    if ((bits & 0x7FF0000000000000ull) != 0x7FF0000000000000ull) {
        /* The diagnostic layout is valid JSON and always reads back as a
         * float: a '.' or an exponent in every finite value. */
        if (!tersa_diag_double(d, w->out)) return out_of_memory(w);
        return true;
    }
    bool nan = (bits & 0x000FFFFFFFFFFFFFull) != 0;
    const char *name = nan ? "NaN" : (bits >> 63) ? "-Infinity" : "Infinity";
    switch (w->o.nonfinite) {
    case JSON_NONFINITE_NULL:
        return APPEND_LIT(w, "null");
    case JSON_NONFINITE_STRING:
        return append(w, "\"", 1) && append(w, name, strlen(name)) && append(w, "\"", 1);
    default:
        return fail(w, nan ? "NaN is not a JSON number" : (bits >> 63) ? "-Infinity is not a JSON number"
                                                                      : "Infinity is not a JSON number");
    }
}

static bool write_ext_object(jw *w, const tersa_value *v);
static bool write_well_known(jw *w, const tersa_value *v, bool as_key);

/* Any value but an array or map. */
static bool write_scalar(jw *w, const tersa_value *v) {
    switch (v->type) {
    case TERSA_NULL:
        return APPEND_LIT(w, "null");
    case TERSA_FALSE:
        return APPEND_LIT(w, "false");
    case TERSA_TRUE:
        return APPEND_LIT(w, "true");
    case TERSA_INT:
        return v->v.i < 0 ? write_u64(w, 0 - (uint64_t)v->v.i, true) : write_u64(w, (uint64_t)v->v.i, false);
    case TERSA_UINT:
        return write_u64(w, v->v.u, false);
    case TERSA_BIGINT:
        return write_bigint(w, v->v.big.negative, v->v.big.mag, v->v.big.len);
    case TERSA_FLOAT:
        return write_float(w, v->v.f);
    case TERSA_STRING:
        return write_string(w, v->v.str.ptr, v->v.str.len);
    case TERSA_SYMBOL:
        if (w->o.symbol != JSON_SYMBOL_STRING) return fail(w, "symbol has no JSON form");
        return write_string(w, v->v.str.ptr, v->v.str.len);
    case TERSA_BINARY:
        if (w->o.binary == JSON_BINARY_BASE64) return write_base64(w, v->v.bin.ptr, v->v.bin.len);
        if (w->o.binary == JSON_BINARY_HEX) return write_hex(w, v->v.bin.ptr, v->v.bin.len);
        return fail(w, "binary value has no JSON form");
    case TERSA_TIME: {
        if (w->o.time != JSON_TIME_ISO) return fail(w, "timestamp has no JSON form");
        char iso[40];
        size_t n = tersa_timestamp_iso(&v->v.time, iso);
        if (!n) return fail(w, "timestamp out of range");
        return append(w, "\"", 1) && append(w, iso, n) && append(w, "\"", 1);
    }
    case TERSA_EXT:
        if (v->v.ext.type > TERSA_EXT_APP_MAX && v->v.ext.type <= TERSA_MAX_EXT_TYPE) return write_well_known(w, v, false);
        if (w->o.ext != JSON_EXT_OBJECT) return fail(w, "extension value has no JSON form");
        return write_ext_object(w, v);
    default:
        return fail(w, "value of unknown type");
    }
}

/* {"$ext": {"type": n, "data": "<base64>"}}, laid out like any object. */
static bool write_ext_object(jw *w, const tersa_value *v) {
    const char *colon = w->o.indent ? ": " : ":";
    size_t cl = strlen(colon);
    size_t d = w->depth;
    return APPEND_LIT(w, "{") && newline(w, d + 1) && APPEND_LIT(w, "\"$ext\"") &&
           append(w, colon, cl) && APPEND_LIT(w, "{") && newline(w, d + 2) &&
           APPEND_LIT(w, "\"type\"") && append(w, colon, cl) && write_u64(w, v->v.ext.type, false) &&
           APPEND_LIT(w, ",") && newline(w, d + 2) && APPEND_LIT(w, "\"data\"") &&
           append(w, colon, cl) && write_base64(w, v->v.ext.ptr, v->v.ext.len) &&
           newline(w, d + 1) && APPEND_LIT(w, "}") && newline(w, d) && APPEND_LIT(w, "}");
}

/* A well-known value (SPEC 5.8): with ext = JSON_EXT_OBJECT as
 * {"$decimal": "1.00"} (and "$date", "$uuid", "$time_of_day"), the vectors'
 * extended JSON; as a key (keys = JSON_KEYS_STRING), its text alone. */
static bool write_well_known(jw *w, const tersa_value *v, bool as_key) {
    static const char *const names[] = {"\"$decimal\"", "\"$date\"", "\"$uuid\"", "\"$time_of_day\""};
    const uint32_t type = v->v.ext.type;
    if (!as_key && w->o.ext != JSON_EXT_OBJECT)
        return fail(w, "well-known value (decimal, date, uuid, time of day) has no JSON form");
    if (type - TERSA_EXT_DECIMAL >= sizeof names / sizeof names[0]) return fail(w, "reserved extension type");
    tersa_buf text;
    tersa_buf_init(&text, w->alloc);
    if (!tersa_well_known_text(type, v->v.ext.ptr, v->v.ext.len, &text)) {
        bool nomem = text.failed;
        tersa_buf_free(&text);
        return nomem ? out_of_memory(w) : fail(w, "invalid well-known payload");
    }
    const char *colon = w->o.indent ? ": " : ":";
    const size_t d = w->depth;
    bool ok = as_key ? write_string(w, text.ptr, text.len)
                     : APPEND_LIT(w, "{") && newline(w, d + 1) && append(w, names[type - TERSA_EXT_DECIMAL],
                                                                            strlen(names[type - TERSA_EXT_DECIMAL])) &&
                           append(w, colon, strlen(colon)) && write_string(w, text.ptr, text.len) &&
                           newline(w, d) && APPEND_LIT(w, "}");
    tersa_buf_free(&text);
    return ok;
}

/* ==========================================================================
 * Map keys
 * ========================================================================== */

/* Whether a key of this type can be written under the options; sets the
 * error if not. */
static bool key_allowed(jw *w, const tersa_value *k) {
    switch (k->type) {
    case TERSA_STRING:
        return true;
    case TERSA_ARRAY:
    case TERSA_MAP:
    case TERSA_GENERIC_MAP:
        return fail(w, "a container cannot be a JSON object key");
    case TERSA_EXT:
        if (k->v.ext.type > TERSA_EXT_APP_MAX && w->o.keys == JSON_KEYS_STRING) return true;
        return fail(w, "an extension value cannot be a JSON object key");
    case TERSA_SYMBOL:
        if (w->o.keys != JSON_KEYS_STRING || w->o.symbol != JSON_SYMBOL_STRING)
            return fail(w, "symbol map key has no JSON form");
        return true;
    default:
        if (w->o.keys != JSON_KEYS_STRING) return fail(w, "non-string map key has no JSON form");
        return true;
    }
}

/* A key as a JSON string (key_allowed said yes). */
static bool write_key(jw *w, const tersa_value *k) {
    if (k->type == TERSA_STRING || k->type == TERSA_SYMBOL) return write_string(w, k->v.str.ptr, k->v.str.len);
    if (k->type == TERSA_EXT) return write_well_known(w, k, true);
    size_t mark = w->out->len;
    if (!write_scalar(w, k)) return false;
    if (w->out->ptr[mark] == '"') return true; /* binary, time, "NaN": already a string */
    /* Numbers and literals need no escaping: just quote them. */
    if (!reserve(w, 2)) return false;
    char *s = w->out->ptr + mark;
    memmove(s + 1, s, w->out->len - mark);
    *s = '"';
    w->out->len++;
    put_c(w, '"');
    return true;
}

/* Before writing the map on top of the stack: every key must be writable,
 * and keys converted to strings must not collide. */
static bool check_keys(jw *w) {
    jw_frame *f = &w->stack[w->depth - 1];
    const tersa_value *m = f->v;
    size_t n = m->v.map.count;
    bool converted = false;
    for (size_t i = 0; i < n; i++) {
        const tersa_value *k = &m->v.map.keys[i];
        if (TERSA_LIKELY(k->type == TERSA_STRING)) continue;
        f->i = i + 1; /* so that an error names this entry */
        if (!key_allowed(w, k)) return false;
        converted = true;
    }
    f->i = 0;
    if (!converted || n < 2) return true;

    /* Render every key as it will be written and look for repeats. */
    tersa_buf scratch;
    tersa_buf_init(&scratch, w->alloc);
    tersa_buf *saved = w->out;
    size_t *ends = (size_t *)w->alloc->malloc(w->alloc->ctx, n * sizeof(size_t));
    tersa_value *keys = (tersa_value *)w->alloc->malloc(w->alloc->ctx, n * sizeof(tersa_value));
    bool ok = ends && keys;
    w->out = &scratch;
    for (size_t i = 0; ok && i < n; i++) {
        f->i = i + 1;
        ok = write_key(w, &m->v.map.keys[i]);
        if (ok) ends[i] = scratch.len;
    }
    w->out = saved;
    if (ok) {
        for (size_t i = 0; i < n; i++) {
            size_t start = i ? ends[i - 1] : 0;
            memset(&keys[i], 0, sizeof keys[i]);
            keys[i].type = TERSA_STRING;
            keys[i].v.str.ptr = scratch.ptr + start;
            keys[i].v.str.len = ends[i] - start;
        }
        size_t dup = json_first_duplicate(keys, n, w->alloc);
        if (dup == SIZE_MAX) {
            ok = out_of_memory(w);
        } else if (dup < n) {
            f->i = dup + 1;
            ok = fail(w, "two map keys become the same JSON string");
        }
    } else if (!ends || !keys || scratch.failed) {
        ok = out_of_memory(w);
    }
    if (ends) w->alloc->free(w->alloc->ctx, ends, n * sizeof(size_t));
    if (keys) w->alloc->free(w->alloc->ctx, keys, n * sizeof(tersa_value));
    tersa_buf_free(&scratch);
    f->i = 0;
    return ok;
}

/* ==========================================================================
 * Tree walk
 * ========================================================================== */

static bool push(jw *w, const tersa_value *v) {
    if (w->depth == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 32;
        if (ncap > SIZE_MAX / sizeof(jw_frame)) return out_of_memory(w);
        jw_frame *s = w->stack ? (jw_frame *)w->alloc->realloc(w->alloc->ctx, w->stack,
                                                               w->cap * sizeof(jw_frame),
                                                               ncap * sizeof(jw_frame))
                               : (jw_frame *)w->alloc->malloc(w->alloc->ctx, ncap * sizeof(jw_frame));
        if (!s) return out_of_memory(w);
        w->stack = s;
        w->cap = ncap;
    }
    w->stack[w->depth].v = v;
    w->stack[w->depth].i = 0;
    w->depth++;
    return true;
}

static bool write_tree(jw *w, const tersa_value *v) {
    const char *colon = w->o.indent ? ": " : ":";
    size_t colon_len = w->o.indent ? 2 : 1;
    for (;;) {
        /* Write v, or open it. */
        switch (v->type) {
        case TERSA_ARRAY:
            if (v->v.array.count == 0) {
                if (!APPEND_LIT(w, "[]")) return false;
                break;
            }
            if (!push(w, v) || !APPEND_LIT(w, "[")) return false;
            break;
        case TERSA_MAP:
        case TERSA_GENERIC_MAP:
            if (v->v.map.count == 0) {
                if (!APPEND_LIT(w, "{}")) return false;
                break;
            }
            if (!push(w, v) || !check_keys(w) || !APPEND_LIT(w, "{")) return false;
            break;
        default:
            if (!write_scalar(w, v)) return false;
            break;
        }

        /* Find the next value: close finished containers, write separators
         * and keys. */
        for (;;) {
            if (w->depth == 0) return true;
            jw_frame *f = &w->stack[w->depth - 1];
            const tersa_value *c = f->v;
            bool array = c->type == TERSA_ARRAY;
            size_t count = array ? c->v.array.count : c->v.map.count;
            if (f->i == count) {
                w->depth--;
                if (!newline(w, w->depth) || !append(w, array ? "]" : "}", 1)) return false;
                continue;
            }
            size_t i = f->i++;
            if (i > 0 && !APPEND_LIT(w, ",")) return false;
            if (!newline(w, w->depth)) return false;
            if (array) {
                v = &c->v.array.items[i];
            } else {
                if (!write_key(w, &c->v.map.keys[i]) || !append(w, colon, colon_len)) return false;
                v = &c->v.map.values[i];
            }
            break;
        }
    }
}

bool json_write(const tersa_value *v, const json_write_options *opts, tersa_buf *out,
                json_error *err) {
    return json_write_to(v, opts, out, NULL, err);
}

bool json_write_to(const tersa_value *v, const json_write_options *opts, tersa_buf *out, const json_sink *sink,
                   json_error *err) {
    jw w;
    memset(&w, 0, sizeof w);
    memset(err, 0, sizeof *err);
    w.out = out;
    w.sink = sink;
    w.sink_buf = out;
    if (opts) w.o = *opts;
    w.err = err;
    w.alloc = out->alloc;
    size_t start = out->len;
    if (out->failed) return out_of_memory(&w);
    bool ok = write_tree(&w, v) && reserve(&w, 0);
    if (w.stack) w.alloc->free(w.alloc->ctx, w.stack, w.cap * sizeof(jw_frame));
    if (!ok && !w.flushed) out->len = start; /* leave out as it was */
    if (out->ptr) out->ptr[out->len] = '\0';
    return ok;
}
