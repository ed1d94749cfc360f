/*
 * tersa_harness.c - the C core's harness for spec/tools/crossfuzz.py.
 *
 * One JSON request per line on stdin, one JSON reply per line on stdout (the
 * protocol is described at the top of crossfuzz.py). Only the public API of
 * tersa.h is used, as a binding would use it: values arrive in the extended
 * JSON of spec/vectors/README.md and become tersa_value trees written with
 * tersa_write_value; whole buffers are decoded with tersa_decode; chunked
 * streams go through tersa_stream_scan, tersa_reader_feed_frame and the pull
 * reader, the way the Python and Ruby Decoder.feed are built. Every decoded
 * value is answered with its canonical re-encoding, so the languages are
 * compared on bytes.
 *
 *     c/build-asan/tersa_harness
 */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "tersa.h"
#include "json.h" /* tersa_parse_double */
#include "xwellknown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what) {
    fprintf(stderr, "tersa_harness: %s\n", what);
    exit(2);
}

/* ==========================================================================
 * A request's JSON tree, in an arena freed after the reply
 * ========================================================================== */

typedef struct block {
    struct block *next;
    size_t used, cap;
    unsigned char data[];
} block;

typedef struct arena {
    block *head;
} arena;

static void *arena_alloc(arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        block *b = (block *)malloc(sizeof(block) + cap);
        if (!b) die("out of memory");
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

static void arena_free(arena *a) {
    while (a->head) {
        block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

typedef enum jtype { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

/* J_NUM: its text; J_STR: its UTF-8 bytes; J_ARR: n items in kids;
 * J_OBJ: n pairs, kids[2i] the key (a J_STR) and kids[2i+1] the value. */
typedef struct jv {
    jtype t;
    size_t n;
    const char *s;
    struct jv *kids;
} jv;

typedef struct jparser {
    const char *p, *end;
    arena *mem;
    int depth;
} jparser;

#define JSON_MAX_DEPTH 5000

static void ws(jparser *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static size_t put_utf8(char *out, unsigned long c) {
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static bool hex4(jparser *j, unsigned long *out) {
    if (j->end - j->p < 4) return false;
    unsigned long c = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)j->p[i]);
        if (h < 0) return false;
        c = c << 4 | (unsigned long)h;
    }
    j->p += 4;
    *out = c;
    return true;
}

/* A JSON string (after its opening quote) to UTF-8 bytes; escaped surrogate
 * pairs are joined, a lone escaped surrogate is kept as its 3 bytes (not
 * UTF-8: the writer must then refuse the string). */
static bool jstring(jparser *j, jv *out) {
    /* Escapes only shrink: the raw length up to the closing quote bounds the bytes. */
    const char *q = j->p;
    while (q < j->end && *q != '"') q += *q == '\\' ? 2 : 1;
    char *buf = (char *)arena_alloc(j->mem, (size_t)(q - j->p) + 4);
    size_t n = 0;
    for (;;) {
        if (j->p >= j->end) return false;
        unsigned char c = (unsigned char)*j->p++;
        if (c == '"') break;
        if (c != '\\') {
            buf[n++] = (char)c;
            continue;
        }
        if (j->p >= j->end) return false;
        char e = *j->p++;
        unsigned long u;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u':
            if (!hex4(j, &u)) return false;
            if (u >= 0xD800 && u < 0xDC00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
                const char *save = j->p;
                unsigned long lo;
                j->p += 2;
                if (hex4(j, &lo) && lo >= 0xDC00 && lo < 0xE000)
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                else
                    j->p = save;
            }
            n += put_utf8(buf + n, u);
            break;
        default: return false;
        }
    }
    out->t = J_STR;
    out->s = buf;
    out->n = n;
    return true;
}

static bool jvalue(jparser *j, jv *out);

/* Items of an array or object, gathered in a growing vector, then moved to the arena. */
static bool jcontainer(jparser *j, jv *out, bool object) {
    char close = object ? '}' : ']';
    jv *items = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
    } else {
        for (;;) {
            if (n + 2 > cap) {
                cap = cap ? 2 * cap : 8;
                jv *bigger = (jv *)realloc(items, cap * sizeof(jv));
                if (!bigger) die("out of memory");
                items = bigger;
            }
            ws(j);
            if (object) {
                if (j->p >= j->end || *j->p++ != '"' || !jstring(j, &items[n++])) {
                    ok = false;
                    break;
                }
                ws(j);
                if (j->p >= j->end || *j->p++ != ':') {
                    ok = false;
                    break;
                }
            }
            if (!jvalue(j, &items[n++])) {
                ok = false;
                break;
            }
            ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == close) {
                j->p++;
                break;
            }
            ok = false;
            break;
        }
    }
    if (ok) {
        out->t = object ? J_OBJ : J_ARR;
        out->n = object ? n / 2 : n;
        out->kids = (jv *)arena_alloc(j->mem, (n ? n : 1) * sizeof(jv));
        if (n) memcpy(out->kids, items, n * sizeof(jv));
    }
    free(items);
    return ok;
}

static bool jvalue(jparser *j, jv *out) {
    ws(j);
    if (j->p >= j->end) return false;
    memset(out, 0, sizeof *out);
    char c = *j->p;
    if (c == '{' || c == '[') {
        if (++j->depth > JSON_MAX_DEPTH) return false;
        j->p++;
        bool ok = jcontainer(j, out, c == '{');
        j->depth--;
        return ok;
    }
    if (c == '"') {
        j->p++;
        return jstring(j, out);
    }
    static const struct { const char *word; jtype t; } words[] = {
        {"null", J_NULL}, {"false", J_FALSE}, {"true", J_TRUE}};
    for (size_t i = 0; i < 3; i++) {
        size_t len = strlen(words[i].word);
        if ((size_t)(j->end - j->p) >= len && memcmp(j->p, words[i].word, len) == 0) {
            j->p += len;
            out->t = words[i].t;
            return true;
        }
    }
    const char *start = j->p;
    while (j->p < j->end && strchr("+-.0123456789eE", *j->p)) j->p++;
    if (j->p == start) return false;
    out->t = J_NUM;
    out->s = start;
    out->n = (size_t)(j->p - start);
    return true;
}

static const jv *jget(const jv *obj, const char *key) {
    if (!obj || obj->t != J_OBJ) return NULL;
    size_t len = strlen(key);
    for (size_t i = 0; i < obj->n; i++) {
        const jv *k = &obj->kids[2 * i];
        if (k->n == len && memcmp(k->s, key, len) == 0) return &obj->kids[2 * i + 1];
    }
    return NULL;
}

static bool jint(const jv *v, long long *out) {
    if (!v || v->t != J_NUM || v->n == 0 || v->n > 20) return false;
    char text[24];
    memcpy(text, v->s, v->n);
    text[v->n] = 0;
    char *end;
    *out = strtoll(text, &end, 10);
    return *end == 0;
}

static bool jis(const jv *v, const char *text) {
    return v && v->t == J_STR && v->n == strlen(text) && memcmp(v->s, text, v->n) == 0;
}

/* ==========================================================================
 * Extended JSON (spec/vectors/README.md) to a tersa_value tree
 * ========================================================================== */

/* Bytes that live as long as the document. tersa.h offers uninitialised arena
 * memory only as values, so byte buffers are carved out of those. */
static uint8_t *doc_bytes(tersa_doc *doc, size_t n) {
    uint8_t *out = (uint8_t *)tersa_doc_values(doc, n / sizeof(tersa_value) + 1);
    if (!out) die("out of memory");
    return out;
}

static uint8_t *unhex(tersa_doc *doc, const jv *h, size_t *len) {
    if (!h || h->t != J_STR || h->n % 2) return NULL;
    *len = h->n / 2;
    uint8_t *out = doc_bytes(doc, *len);
    for (size_t i = 0; i < *len; i++) {
        int hi = hexval((unsigned char)h->s[2 * i]), lo = hexval((unsigned char)h->s[2 * i + 1]);
        if (hi < 0 || lo < 0) return NULL;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return out;
}

/* A decimal integer of any size: int64, uint64 or a big-integer magnitude. */
static bool x_int(tersa_doc *doc, const jv *text, tersa_value *out) {
    if (!text || text->t != J_STR || text->n == 0) return false;
    const char *s = text->s, *e = s + text->n;
    bool negative = *s == '-';
    if (negative) s++;
    if (s == e) return false;
    size_t cap = (size_t)(e - s) / 2 + 2;
    uint8_t *mag = doc_bytes(doc, cap);
    memset(mag, 0, cap);
    size_t len = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned carry = (unsigned)(*s - '0');
        for (size_t i = 0; i < len; i++) {
            unsigned x = mag[i] * 10u + carry;
            mag[i] = (uint8_t)x;
            carry = x >> 8;
        }
        if (carry) mag[len++] = (uint8_t)carry;
    }
    if (len <= 8) {
        uint64_t u = 0;
        for (size_t i = len; i-- > 0;) u = u << 8 | mag[i];
        if (!negative && u > (uint64_t)INT64_MAX) {
            out->type = TERSA_UINT;
            out->v.u = u;
            return true;
        }
        if (!negative || u <= (uint64_t)INT64_MAX + 1) {
            out->type = TERSA_INT;
            out->v.i = negative ? (int64_t)(0 - u) : (int64_t)u;
            return true;
        }
    }
    out->type = TERSA_BIGINT;
    out->v.big.negative = negative;
    out->v.big.mag = mag;
    out->v.big.len = len;
    return true;
}

static bool x_float(const jv *text, tersa_value *out) {
    if (!text || text->t != J_STR) return false;
    out->type = TERSA_FLOAT;
    uint64_t bits;
    if (jis(text, "NaN")) {
        bits = 0x7ff8000000000000ull;
    } else if (text->n > 7 && memcmp(text->s, "NaN(0x", 6) == 0) {
        bits = 0;
        for (size_t i = 6; i < text->n - 1; i++) {
            int h = hexval((unsigned char)text->s[i]);
            if (h < 0) return false;
            bits = bits << 4 | (uint64_t)h;
        }
    } else if (jis(text, "Infinity") || jis(text, "-Infinity")) {
        bits = text->s[0] == '-' ? 0xfff0000000000000ull : 0x7ff0000000000000ull;
    } else {
        const char *end = tersa_parse_double(text->s, text->s + text->n, &out->v.f);
        return end == text->s + text->n;
    }
    memcpy(&out->v.f, &bits, sizeof bits);
    return true;
}

static bool x_time(const jv *t, tersa_value *out) {
    long long seconds, nanos, offset = 0;
    const jv *zone = jget(t, "zone");
    if (!jint(jget(t, "seconds"), &seconds) || !jint(jget(t, "nanos"), &nanos)) return false;
    out->type = TERSA_TIME;
    out->v.time.seconds = seconds;
    out->v.time.nanos = (uint32_t)nanos;
    if (jis(zone, "utc")) {
        out->v.time.zone = TERSA_ZONE_UTC;
    } else if (jis(zone, "floating")) {
        out->v.time.zone = TERSA_ZONE_FLOATING;
    } else if (jis(zone, "offset") && jint(jget(t, "offset"), &offset)) {
        out->v.time.zone = TERSA_ZONE_OFFSET;
        out->v.time.offset = (int16_t)offset;
    } else {
        return false;
    }
    return true;
}

static bool x_value(tersa_doc *doc, const jv *x, tersa_value *out);

/* Maps are built as generic maps: tersa_write_value writes those whose keys
 * are all strings or symbols as shaped maps, which is the canonical form. */
static bool x_map(tersa_doc *doc, const jv *x, bool pairs, tersa_value *out) {
    size_t n = x->n;
    out->type = TERSA_GENERIC_MAP;
    out->v.map.count = n;
    out->v.map.keys = tersa_doc_values(doc, n);
    out->v.map.values = tersa_doc_values(doc, n);
    if (!out->v.map.keys || !out->v.map.values) die("out of memory");
    for (size_t i = 0; i < n; i++) {
        if (pairs) {
            const jv *pair = &x->kids[i];
            if (pair->t != J_ARR || pair->n != 2 || !x_value(doc, &pair->kids[0], &out->v.map.keys[i]) ||
                !x_value(doc, &pair->kids[1], &out->v.map.values[i]))
                return false;
        } else {
            out->v.map.keys[i].type = TERSA_STRING;
            out->v.map.keys[i].v.str.ptr = x->kids[2 * i].s;
            out->v.map.keys[i].v.str.len = x->kids[2 * i].n;
            if (!x_value(doc, &x->kids[2 * i + 1], &out->v.map.values[i])) return false;
        }
    }
    return true;
}

static bool x_value(tersa_doc *doc, const jv *x, tersa_value *out) {
    memset(out, 0, sizeof *out);
    switch (x->t) {
    case J_NULL: out->type = TERSA_NULL; return true;
    case J_FALSE: out->type = TERSA_FALSE; return true;
    case J_TRUE: out->type = TERSA_TRUE; return true;
    case J_NUM: {
        long long i;
        if (!jint(x, &i)) return false;
        out->type = TERSA_INT;
        out->v.i = i;
        return true;
    }
    case J_STR:
        out->type = TERSA_STRING;
        out->v.str.ptr = x->s;
        out->v.str.len = x->n;
        return true;
    case J_ARR:
        out->type = TERSA_ARRAY;
        out->v.array.count = x->n;
        out->v.array.items = tersa_doc_values(doc, x->n);
        if (!out->v.array.items) die("out of memory");
        for (size_t i = 0; i < x->n; i++)
            if (!x_value(doc, &x->kids[i], &out->v.array.items[i])) return false;
        return true;
    case J_OBJ: break;
    }
    if (x->n != 1 || x->kids[0].n == 0 || x->kids[0].s[0] != '$') return x_map(doc, x, false, out);
    const jv *tag = &x->kids[0], *arg = &x->kids[1];
    size_t len;
    if (jis(tag, "$int")) return x_int(doc, arg, out);
    if (jis(tag, "$float")) return x_float(arg, out);
    if (jis(tag, "$symbol") && arg->t == J_STR) {
        out->type = TERSA_SYMBOL;
        out->v.str.ptr = arg->s;
        out->v.str.len = arg->n;
        return true;
    }
    if (jis(tag, "$binary")) {
        out->type = TERSA_BINARY;
        out->v.bin.ptr = unhex(doc, arg, &len);
        out->v.bin.len = len;
        return out->v.bin.ptr != NULL;
    }
    if (jis(tag, "$ext")) {
        long long type;
        if (!jint(jget(arg, "type"), &type) || type < 0 || type > 0xFFFFFFFFll) return false;
        out->type = TERSA_EXT;
        out->v.ext.type = (uint32_t)type;
        out->v.ext.ptr = unhex(doc, jget(arg, "data"), &len);
        out->v.ext.len = len;
        return out->v.ext.ptr != NULL;
    }
    if (jis(tag, "$time")) return x_time(arg, out);
    if (jis(tag, "$map") && arg->t == J_ARR) return x_map(doc, arg, true, out);
    uint32_t wk = x_well_known_type(tag->s, tag->n);
    if (wk && arg->t == J_STR) {
        uint8_t payload[X_WELL_KNOWN_MAX];
        len = x_well_known_payload(wk, arg->s, arg->n, payload);
        out->type = TERSA_EXT;
        out->v.ext.type = wk;
        out->v.ext.ptr = (const uint8_t *)tersa_doc_bytes(doc, payload, len);
        out->v.ext.len = len;
        return len > 0 && out->v.ext.ptr != NULL;
    }
    return false;
}

/* ==========================================================================
 * Replies
 * ========================================================================== */

static tersa_buf reply;
static tersa_writer *writer;

static void put(const char *s) {
    if (!tersa_buf_append(&reply, s, strlen(s))) die("out of memory");
}

static void put_hex(const uint8_t *p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    char chunk[512];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        chunk[k++] = digits[p[i] >> 4];
        chunk[k++] = digits[p[i] & 15];
        if (k == sizeof chunk) {
            if (!tersa_buf_append(&reply, chunk, k)) die("out of memory");
            k = 0;
        }
    }
    if (k && !tersa_buf_append(&reply, chunk, k)) die("out of memory");
}

/* A message as a JSON string; the library's messages are plain ASCII. */
static void put_text(const char *s) {
    put("\"");
    for (; *s; s++) {
        char c[2] = {*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 ? '?' : *s, 0};
        put(c);
    }
    put("\"");
}

static void put_error(const tersa_error *e) {
    char num[32];
    put("\"error\":");
    put_text(tersa_code_name(e->code));
    snprintf(num, sizeof num, ",\"offset\":%zu", e->offset);
    put(num);
}

/* The canonical single-value encoding of `v`, as a hex JSON string. */
static bool put_encoding(const tersa_value *v) {
    size_t len;
    if (!tersa_writer_start(writer, NULL, 0) || !tersa_write_value(writer, v)) return false;
    const uint8_t *out = tersa_writer_data(writer, &len);
    put("\"");
    put_hex(out, len);
    put("\"");
    return true;
}

/* Where a joining decoder met its first sync frame (SPEC 2.3), or null. */
static void put_joined(bool joined, size_t at) {
    char num[48];
    snprintf(num, sizeof num, joined ? "\"joined_at\":%zu" : "\"joined_at\":null", at);
    put(num);
}

static void put_encode_error(void) {
    put("\"encode_error\":");
    put_text(tersa_writer_error(writer)->message);
}

/* ==========================================================================
 * Chunked streams: tersa_stream_scan, tersa_reader_feed_frame, tersa_read
 * ========================================================================== */

/* `len` bytes copied into the document (never NULL). */
static const void *copy_bytes(tersa_doc *doc, const void *p, size_t len) {
    const void *out = len ? tersa_doc_bytes(doc, p, len) : "";
    if (!out) die("out of memory");
    return out;
}

static void item_to_node(tersa_doc *doc, const tersa_item *it, tersa_value *node) {
    memset(node, 0, sizeof *node);
    node->type = it->type;
    size_t n;
    switch (it->type) {
    case TERSA_NULL: case TERSA_FALSE: case TERSA_TRUE: break;
    case TERSA_INT: node->v.i = it->v.i; break;
    case TERSA_UINT: node->v.u = it->v.u; break;
    case TERSA_FLOAT: node->v.f = it->v.f; break;
    case TERSA_TIME: node->v.time = it->v.time; break;
    case TERSA_BIGINT:
        node->v.big.negative = it->v.big.negative;
        node->v.big.mag = (const uint8_t *)copy_bytes(doc, it->v.big.mag, it->v.big.len);
        node->v.big.len = it->v.big.len;
        break;
    case TERSA_STRING: case TERSA_SYMBOL:
        node->v.str.ptr = (const char *)copy_bytes(doc, it->v.str.ptr, it->v.str.len);
        node->v.str.len = it->v.str.len;
        break;
    case TERSA_BINARY:
        node->v.bin.ptr = (const uint8_t *)copy_bytes(doc, it->v.bin.ptr, it->v.bin.len);
        node->v.bin.len = it->v.bin.len;
        break;
    case TERSA_EXT:
        node->v.ext.type = it->v.ext.type;
        node->v.ext.ptr = (const uint8_t *)copy_bytes(doc, it->v.ext.ptr, it->v.ext.len);
        node->v.ext.len = it->v.ext.len;
        break;
    case TERSA_ARRAY:
        n = it->v.array.count;
        node->v.array.count = n;
        node->v.array.items = tersa_doc_values(doc, n);
        if (!node->v.array.items) die("out of memory");
        break;
    case TERSA_MAP: case TERSA_GENERIC_MAP:
        n = it->v.map.count;
        node->v.map.count = n;
        node->v.map.keys = tersa_doc_values(doc, n);
        node->v.map.values = tersa_doc_values(doc, n);
        if (!node->v.map.keys || !node->v.map.values) die("out of memory");
        for (size_t i = 0; it->type == TERSA_MAP && i < n; i++) {
            const tersa_key *k = &it->v.map.keys[i];
            node->v.map.keys[i].type = k->symbol ? TERSA_SYMBOL : TERSA_STRING;
            node->v.map.keys[i].v.str.ptr = (const char *)copy_bytes(doc, k->ptr, k->len);
            node->v.map.keys[i].v.str.len = k->len;
        }
        break;
    }
}

typedef struct bframe {
    tersa_value *node;
    size_t next, total;
} bframe;

/* One value from the pull reader into a tree, with a heap stack: values are
 * as deep as the reader allows. */
static bool read_tree(tersa_reader *r, tersa_doc *doc, tersa_value *root) {
    bframe *stack = NULL;
    size_t depth = 0, cap = 0;
    tersa_value *dst = root;
    bool ok = true;
    for (;;) {
        tersa_item it;
        if (!tersa_read(r, &it)) {
            ok = false;
            break;
        }
        item_to_node(doc, &it, dst);
        size_t total = it.type == TERSA_ARRAY ? it.v.array.count
                       : it.type == TERSA_MAP ? it.v.map.count
                       : it.type == TERSA_GENERIC_MAP ? 2 * it.v.map.count : 0;
        if (total) {
            if (depth == cap) {
                cap = cap ? 2 * cap : 64;
                bframe *bigger = (bframe *)realloc(stack, cap * sizeof(bframe));
                if (!bigger) die("out of memory");
                stack = bigger;
            }
            stack[depth++] = (bframe){dst, 0, total};
        }
        while (depth && stack[depth - 1].next == stack[depth - 1].total) depth--;
        if (!depth) break;
        bframe *f = &stack[depth - 1];
        size_t i = f->next++;
        tersa_value *c = f->node;
        dst = c->type == TERSA_ARRAY ? &c->v.array.items[i]
              : c->type == TERSA_MAP ? &c->v.map.values[i]
              : i % 2 ? &c->v.map.values[i / 2] : &c->v.map.keys[i / 2];
    }
    free(stack);
    return ok;
}

typedef struct feeder {
    tersa_reader *r;
    uint8_t *buf;
    size_t start, len, cap;
    size_t base; /* stream offset of buf[start] */
    bool header_done; /* a joining reader has no header: true from the start */
    uint8_t header[16]; /* the reader keeps pointing at the header it started on */
    size_t nvalues;
    bool unwritable; /* a decoded value the writer refuses (SPEC 1 lets decoders accept equal container keys) */
} feeder;

static bool emit_value(feeder *f, const tersa_value *v) {
    put(f->nvalues++ ? "," : "");
    f->unwritable = !put_encoding(v);
    return !f->unwritable;
}

/* Decode every complete header or frame buffered so far. */
static bool feed_drain(feeder *f, tersa_doc *doc, tersa_error *err) {
    for (;;) {
        const uint8_t *p = f->buf + f->start;
        size_t avail = f->len - f->start, size;
        tersa_scan s = tersa_stream_scan(p, avail, !f->header_done, &size, err);
        if (s == TERSA_SCAN_NEED_MORE) return true;
        if (s == TERSA_SCAN_ERROR) {
            err->offset += f->base;
            return false;
        }
        if (!f->header_done) {
            memcpy(f->header, p, size);
            if (!tersa_reader_start(f->r, f->header, size, NULL, 0, TERSA_READ_STREAM)) {
                *err = *tersa_reader_error(f->r);
                return false;
            }
            f->header_done = true;
        } else {
            tersa_value v;
            bool has_value;
            if (!tersa_reader_feed_frame(f->r, p, size, f->base, &has_value) ||
                (has_value && (!read_tree(f->r, doc, &v) || !tersa_reader_frame_end(f->r)))) {
                *err = *tersa_reader_error(f->r);
                return false;
            }
            if (has_value && !emit_value(f, &v)) return false;
        }
        f->start += size;
        f->base += size;
    }
}

/* The end of the input: what is left is a cut header or frame. Whole-buffer
 * decoding reports a cut header as decoding those bytes alone would, a cut
 * frame length as truncated and a frame longer than the rest as
 * length_exceeds_input, both at the frame's start. */
static void feed_close(feeder *f, tersa_error *err) {
    const uint8_t *p = f->buf + f->start;
    size_t avail = f->len - f->start;
    if (!f->header_done) {
        tersa_doc *doc = tersa_decode(NULL, p, avail, &(tersa_decode_options){.stream = true}, err);
        if (doc) die("a cut stream header decoded");
        return;
    }
    if (!avail) return;
    size_t need = p[0] ? (size_t)__builtin_ctz(p[0]) + 1 : 9;
    err->code = avail < need ? TERSA_ERR_TRUNCATED : TERSA_ERR_LENGTH_EXCEEDS_INPUT;
    err->offset = f->base;
}

static void op_chunks(const uint8_t *data, size_t len, const jv *pieces, bool join) {
    feeder f = {0};
    tersa_error err = {TERSA_OK, 0, NULL};
    size_t mark = reply.len;
    tersa_doc *doc = tersa_doc_new(NULL);
    f.r = tersa_reader_new(NULL);
    if (!doc || !f.r || !pieces || pieces->t != J_ARR || pieces->n == 0) die("bad chunks request");
    bool ok = true;
    if (join) {
        ok = tersa_reader_start(f.r, NULL, 0, NULL, 0, TERSA_READ_STREAM | TERSA_READ_JOIN);
        if (!ok) err = *tersa_reader_error(f.r);
        f.header_done = true;
    }
    put("{\"values\":[");
    for (size_t at = 0, i = 0; ok && at < len; i++) {
        long long size;
        if (!jint(&pieces->kids[i < pieces->n ? i : pieces->n - 1], &size) || size < 1) die("bad piece size");
        size_t take = (size_t)size < len - at ? (size_t)size : len - at;
        if (f.start == f.len) f.start = f.len = 0;
        if (f.len + take > f.cap) {
            f.cap = 2 * (f.len + take);
            f.buf = (uint8_t *)realloc(f.buf, f.cap);
            if (!f.buf) die("out of memory");
        }
        memcpy(f.buf + f.len, data + at, take);
        f.len += take;
        at += take;
        ok = feed_drain(&f, doc, &err);
    }
    if (ok) feed_close(&f, &err);
    if (f.unwritable) {
        reply.len = mark;
        put("{");
        put_encode_error();
        put("}");
        goto done;
    }
    put("]");
    if (join && err.code == TERSA_OK) {
        size_t at = 0;
        bool joined = tersa_reader_joined(f.r, &at);
        put(",");
        put_joined(joined, at);
    }
    if (err.code != TERSA_OK) {
        put(",");
        put_error(&err);
    }
    put("}");
done:
    free(f.buf);
    tersa_reader_free(f.r);
    tersa_doc_free(doc);
}

/* ==========================================================================
 * Requests
 * ========================================================================== */

/* The request's sync-frame options (SPEC 2.3) on the writer; false if malformed. */
static bool sync_options(const jv *req) {
    long long frames = 0, bytes = 0;
    const jv *f = jget(req, "sync_frames"), *b = jget(req, "sync_bytes");
    if ((f && (!jint(f, &frames) || frames < 0)) || (b && (!jint(b, &bytes) || bytes < 0))) return false;
    tersa_writer_set_sync(writer, (uint64_t)frames, (uint64_t)bytes);
    return true;
}

static bool sync_before(const jv *req, size_t i) {
    const jv *list = jget(req, "sync_before");
    long long k;
    for (size_t j = 0; list && list->t == J_ARR && j < list->n; j++)
        if (jint(&list->kids[j], &k) && k >= 0 && (size_t)k == i) return true;
    return false;
}

static void op_encode(const jv *req, const jv *values, bool stream) {
    tersa_doc *doc = tersa_doc_new(NULL);
    if (!doc) die("out of memory");
    size_t n = stream ? values->n : 1;
    tersa_value *v = tersa_doc_values(doc, n);
    if (!v) die("out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!x_value(doc, stream ? &values->kids[i] : values, &v[i])) {
            put("{\"crash\":\"not an xvalue\"}");
            tersa_doc_free(doc);
            return;
        }
    }
    bool ok = tersa_writer_start(writer, NULL, stream ? TERSA_WRITE_STREAM : 0);
    if (ok && stream && !sync_options(req)) {
        put("{\"crash\":\"bad sync options\"}");
        tersa_doc_free(doc);
        return;
    }
    for (size_t i = 0; ok && i < n; i++) {
        if (stream && sync_before(req, i)) tersa_writer_sync(writer);
        ok = (!stream || tersa_write_frame_begin(writer)) && tersa_write_value(writer, &v[i]) &&
             (!stream || tersa_write_frame_end(writer));
    }
    put("{");
    if (ok) {
        size_t len;
        const uint8_t *out = tersa_writer_data(writer, &len);
        put("\"hex\":\"");
        put_hex(out, len);
        put("\"");
    } else {
        put_encode_error();
    }
    put("}");
    tersa_doc_free(doc);
}

static void op_decode(const uint8_t *data, size_t len, bool stream, bool join) {
    tersa_error err;
    tersa_decode_options opts = {.stream = stream, .join = join};
    tersa_doc *doc = tersa_decode(NULL, data, len, &opts, &err);
    put("{");
    if (!doc) {
        put_error(&err);
    } else {
        size_t mark = reply.len, at = 0;
        bool ok = true;
        if (join) {
            bool joined = tersa_doc_joined(doc, &at);
            put_joined(joined, at);
            put(",");
        }
        put(stream ? "\"values\":[" : "\"hex\":");
        for (size_t i = 0; ok && i < tersa_doc_count(doc); i++) {
            put(i ? "," : "");
            ok = put_encoding(tersa_doc_root(doc, i));
        }
        if (ok) {
            put(stream ? "]" : "");
        } else {
            reply.len = mark;
            put_encode_error();
        }
    }
    put("}");
    tersa_doc_free(doc);
}

static void handle(const jv *req) {
    const jv *op = jget(req, "op");
    if (jis(op, "hello")) {
        put("{\"impl\":\"c\",\"core\":\"" TERSA_VERSION_STRING "\"}");
        return;
    }
    if (jis(op, "encode") && jget(req, "value")) {
        op_encode(req, jget(req, "value"), false);
        return;
    }
    const jv *values = jget(req, "values");
    if (jis(op, "encode_stream") && values && values->t == J_ARR) {
        op_encode(req, values, true);
        return;
    }
    if (!jis(op, "decode") && !jis(op, "decode_stream") && !jis(op, "join_stream") &&
        !jis(op, "decode_stream_chunks") && !jis(op, "join_stream_chunks")) {
        put("{\"unsupported\":\"unknown op\"}");
        return;
    }
    tersa_doc *scratch = tersa_doc_new(NULL);
    size_t len = 0;
    const uint8_t *data = scratch ? unhex(scratch, jget(req, "hex"), &len) : NULL;
    if (!data)
        put("{\"crash\":\"bad request\"}");
    else if (jis(op, "decode"))
        op_decode(data, len, false, false);
    else if (jis(op, "decode_stream") || jis(op, "join_stream"))
        op_decode(data, len, true, jis(op, "join_stream"));
    else
        op_chunks(data, len, jget(req, "pieces"), jis(op, "join_stream_chunks"));
    tersa_doc_free(scratch);
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    writer = tersa_writer_new(NULL);
    if (!writer) die("out of memory");
    tersa_buf_init(&reply, NULL);
    while ((n = getline(&line, &cap, stdin)) > 0) {
        arena mem = {NULL};
        jparser j = {line, line + n, &mem, 0};
        jv req;
        reply.len = 0;
        if (jvalue(&j, &req) && req.t == J_OBJ)
            handle(&req);
        else
            put("{\"crash\":\"request is not a JSON object\"}");
        put("\n");
        fwrite(reply.ptr, 1, reply.len, stdout);
        fflush(stdout);
        arena_free(&mem);
    }
    free(line);
    tersa_buf_free(&reply);
    tersa_writer_free(writer);
    return 0;
}
