/*
 * inspect.c - the `pith inspect`, `pith stats` and `pith dict` commands.
 */
#include "inspect.h"

#include "fileio.h"
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void outf(pith_buf *out, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) pith_buf_append(out, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* ==========================================================================
 * Tag names
 * ========================================================================== */

static const char *form_name(uint8_t t) {
    if (t < 0x40) return "REF";
    if (t < 0x60) return "STR";
    if (t < 0x80) return "SHAPE";
    if (t < 0x90) return "ARR";
    if (t < 0xA0) return "MAPDEF";
    if (t < 0xC0) return "INT";
    if (t < 0xD0) return "PFX";
    if (t < 0xE0) return "DEC";
    static const char *const names[] = {
        "NULL", "FALSE", "TRUE", "F32", "F64", "INT_POS", "INT_NEG", "INT_DELTA", "DEC_X", "DEC_DELTA",
        "BIGINT_POS", "BIGINT_NEG", "STR_LONG", "REF8", "REF16", "REF24", "SHAPE8", "SHAPE16", "ARR_LONG",
        "MAPDEF_LONG", "MAP_GEN", "PFX_LONG", "BIN", "EXT", "SYMBOL", "TIME", "TS_STR", "TS_Z0", "TS_Z3",
        "reserved", "reserved", "reserved"};
    return names[t - 0xE0];
}

/* Append a short, escaped rendering of a string. */
static void short_string(pith_buf *out, const char *p, size_t n) {
    pith_value v;
    v.type = PITH_STRING;
    v.v.str.ptr = p;
    v.v.str.len = n > 60 ? 60 : n;
    while (v.v.str.len < n && v.v.str.len > 0 && ((unsigned char)p[v.v.str.len] & 0xC0) == 0x80) v.v.str.len--;
    pith_diag(&v, out);
    if (v.v.str.len < n) outf(out, "... (%zu bytes)", n);
}

static bool is_ref_tag(uint8_t t) { return t < 0x40 || t == 0xED || t == 0xEE || t == 0xEF; }

static void describe(pith_buf *out, const pith_item *it, const uint8_t *data) {
    uint8_t t = it->tag;
    switch (it->type) {
    case PITH_STRING:
    case PITH_SYMBOL:
        short_string(out, it->v.str.ptr, it->v.str.len);
        if ((t >= 0xC0 && t < 0xD0) || t == 0xF5) {
            uint8_t pb = data[it->offset + 1];
            outf(out, "  prefix %u of the %s string", pb & 0x7F, (pb & 0x80) ? "last" : "slot's");
        }
        if (it->v.str.index != PITH_NO_INDEX)
            outf(out, is_ref_tag(t) ? "  = string #%u" : "  -> string #%u", it->v.str.index);
        break;
    case PITH_MAP: {
        if (it->flags & PITH_ITEM_NEW_SHAPE) {
            if (it->v.map.shape != PITH_NO_INDEX)
                outf(out, "defines shape #%u:", it->v.map.shape);
            else
                outf(out, "shape (table full):");
        } else {
            outf(out, "shape #%u:", it->v.map.shape);
        }
        for (size_t i = 0; i < it->v.map.count && i < 8; i++) {
            pith_buf_append(out, " ", 1);
            if (it->v.map.keys[i].symbol) pith_buf_append(out, ":", 1);
            short_string(out, it->v.map.keys[i].ptr, it->v.map.keys[i].len);
        }
        if (it->v.map.count > 8) outf(out, " ... (%zu keys)", it->v.map.count);
        break;
    }
    case PITH_GENERIC_MAP:
        outf(out, "%zu pairs", it->v.map.count);
        break;
    case PITH_ARRAY:
        outf(out, "%zu elements", it->v.array.count);
        break;
    default: {
        pith_value v;
        memset(&v, 0, sizeof v);
        v.type = it->type;
        switch (it->type) {
        case PITH_INT: v.v.i = it->v.i; break;
        case PITH_UINT: v.v.u = it->v.u; break;
        case PITH_FLOAT: v.v.f = it->v.f; break;
        case PITH_TIME: v.v.time = it->v.time; break;
        case PITH_BIGINT:
            v.v.big.negative = it->v.big.negative;
            v.v.big.mag = it->v.big.mag;
            v.v.big.len = it->v.big.len;
            break;
        case PITH_BINARY:
            v.v.bin.ptr = it->v.bin.ptr;
            v.v.bin.len = it->v.bin.len > 24 ? 24 : it->v.bin.len;
            break;
        case PITH_EXT:
            v.v.ext.type = it->v.ext.type;
            v.v.ext.ptr = it->v.ext.ptr;
            v.v.ext.len = it->v.ext.len > 24 ? 24 : it->v.ext.len;
            break;
        default: break;
        }
        pith_diag(&v, out);
        if ((it->type == PITH_BINARY && it->v.bin.len > 24) || (it->type == PITH_EXT && it->v.ext.len > 24))
            outf(out, "... (%zu bytes)", it->type == PITH_BINARY ? it->v.bin.len : it->v.ext.len);
        if (t == 0xE7 || t == 0xE9) pith_buf_append(out, "  (delta)", 9);
    }
    }
}

/* Items per open container, to indent and to know where values end. */
typedef struct walk {
    size_t remaining[1100];
    size_t depth;
} walk;

static void walk_push(walk *w, const pith_item *it) {
    size_t n = it->type == PITH_ARRAY ? it->v.array.count
               : it->type == PITH_MAP ? it->v.map.count
               : it->type == PITH_GENERIC_MAP ? 2 * it->v.map.count
                                                : 0;
    if (w->depth) w->remaining[w->depth - 1]--;
    if (n && w->depth < 1100) w->remaining[w->depth++] = n;
    while (w->depth && w->remaining[w->depth - 1] == 0) w->depth--;
}

typedef bool (*item_fn)(void *ctx, const pith_item *it, size_t start, size_t end, size_t depth);

/* Read a whole buffer item by item; calls fn for each. */
static bool walk_buffer(const uint8_t *data, size_t len, const pith_dict *const *dicts, size_t ndicts, item_fn fn,
                        void *ctx, pith_buf *out, pith_error *err) {
    bool stream = len >= 3 && data[0] == 0xC1 && (data[2] & 0x02);
    pith_reader *r = pith_reader_new(NULL);
    bool ok = pith_reader_start(r, data, len, dicts, ndicts, stream ? PITH_READ_STREAM : 0);
    if (ok && len >= 3) {
        outf(out, "%06x  %02x %02x %02x%s  header: version %u%s%s\n", 0, data[0], data[1], data[2],
             (data[2] & 1) ? " + id" : "", data[2] >> 4, (data[2] & 2) ? ", stream" : "", (data[2] & 1) ? ", dictionary" : "");
    }
    bool more = true;
    while (ok) {
        if (stream) {
            size_t at = pith_reader_offset(r);
            ok = pith_reader_frame_begin(r, &more);
            if (!ok || !more) break;
            outf(out, "%06zx  frame of %zu bytes\n", at, (size_t)0 + (pith_reader_offset(r) - at));
        }
        walk w;
        w.depth = 0;
        do {
            pith_item it;
            size_t depth = w.depth;
            ok = pith_read(r, &it);
            if (!ok) break;
            ok = fn(ctx, &it, it.offset, pith_reader_offset(r), depth);
            walk_push(&w, &it);
        } while (ok && w.depth);
        if (!ok) break;
        ok = stream ? pith_reader_frame_end(r) : pith_reader_finish(r);
        if (!stream) break;
    }
    if (!ok) *err = *pith_reader_error(r);
    pith_reader_free(r);
    return ok;
}

/* ==========================================================================
 * inspect
 * ========================================================================== */

typedef struct inspect_ctx {
    pith_buf *out;
    const uint8_t *data;
} inspect_ctx;

static bool inspect_item(void *vctx, const pith_item *it, size_t start, size_t end, size_t depth) {
    inspect_ctx *c = (inspect_ctx *)vctx;
    pith_buf *out = c->out;
    char hex[40];
    size_t n = end - start, shown = n > 8 ? 8 : n, h = 0;
    for (size_t i = 0; i < shown; i++) h += (size_t)snprintf(hex + h, sizeof hex - h, "%02x ", c->data[start + i]);
    if (n > shown) h += (size_t)snprintf(hex + h, sizeof hex - h, "..");
    outf(out, "%06zx  %-26s%*s%-11s ", start, hex, (int)(2 * depth), "", form_name(it->tag));
    describe(out, it, c->data);
    pith_buf_append(out, "\n", 1);
    return true;
}

bool pith_cli_inspect(const uint8_t *data, size_t len, const pith_dict *const *dicts, size_t ndicts, pith_buf *out,
                      pith_error *err) {
    inspect_ctx c = {out, data};
    bool ok = walk_buffer(data, len, dicts, ndicts, inspect_item, &c, out, err);
    if (ok)
        outf(out, "%06zx  end (%zu bytes)\n", len, len);
    else
        outf(out, "%06zx  error: %s: %s\n", err->offset, pith_code_name(err->code), err->message);
    return ok;
}

/* ==========================================================================
 * stats
 * ========================================================================== */

enum {
    K_REF, K_STR, K_PFX, K_TS, K_SYMBOL, K_MAPDEF, K_SHAPE, K_GENMAP, K_ARRAY, K_INT_SMALL, K_INT, K_INT_DELTA,
    K_BIGINT, K_DEC, K_DEC_DELTA, K_F32, K_F64, K_CONST, K_BIN, K_EXT, K_TIME, K_COUNT
};
static const char *const kind_names[K_COUNT] = {
    "string references", "inline strings", "prefix strings", "timestamp strings", "symbols",
    "maps defining shapes (with keys)", "maps by shape", "generic maps", "arrays", "small integers",
    "integers", "integer deltas", "big integers", "decimal floats", "decimal deltas", "binary32 floats",
    "binary64 floats", "null and booleans", "binary", "extensions", "timestamps"};

typedef struct stats_ctx {
    size_t count[K_COUNT], bytes[K_COUNT];
    size_t shapes_defined, shape_refs, strings_new, string_bytes_new;
} stats_ctx;

static int kind_of(uint8_t t) {
    if (t < 0x40) return K_REF;
    if (t < 0x60) return K_STR;
    if (t < 0x80) return K_SHAPE;
    if (t < 0x90) return K_ARRAY;
    if (t < 0xA0) return K_MAPDEF;
    if (t < 0xC0) return K_INT_SMALL;
    if (t < 0xD0) return K_PFX;
    if (t < 0xE0) return K_DEC;
    switch (t) {
    case 0xE0: case 0xE1: case 0xE2: return K_CONST;
    case 0xE3: return K_F32;
    case 0xE4: return K_F64;
    case 0xE5: case 0xE6: return K_INT;
    case 0xE7: return K_INT_DELTA;
    case 0xE8: return K_DEC;
    case 0xE9: return K_DEC_DELTA;
    case 0xEA: case 0xEB: return K_BIGINT;
    case 0xEC: return K_STR;
    case 0xED: case 0xEE: case 0xEF: return K_REF;
    case 0xF0: case 0xF1: return K_SHAPE;
    case 0xF2: return K_ARRAY;
    case 0xF3: return K_MAPDEF;
    case 0xF4: return K_GENMAP;
    case 0xF5: return K_PFX;
    case 0xF6: return K_BIN;
    case 0xF7: return K_EXT;
    case 0xF8: return K_SYMBOL;
    case 0xF9: return K_TIME;
    default: return K_TS;
    }
}

static bool stats_item(void *vctx, const pith_item *it, size_t start, size_t end, size_t depth) {
    (void)depth;
    stats_ctx *c = (stats_ctx *)vctx;
    int k = kind_of(it->tag);
    c->count[k]++;
    c->bytes[k] += end - start;
    if (it->type == PITH_MAP) {
        if (it->flags & PITH_ITEM_NEW_SHAPE)
            c->shapes_defined++;
        else
            c->shape_refs++;
    }
    if ((it->type == PITH_STRING || it->type == PITH_SYMBOL) && it->v.str.index != PITH_NO_INDEX &&
        !is_ref_tag(it->tag)) {
        c->strings_new++;
        c->string_bytes_new += it->v.str.len;
    }
    return true;
}

bool pith_cli_stats(const uint8_t *data, size_t len, const pith_dict *const *dicts, size_t ndicts, pith_buf *out,
                    pith_error *err) {
    stats_ctx c;
    memset(&c, 0, sizeof c);
    pith_buf ignored;
    pith_buf_init(&ignored, NULL);
    bool ok = walk_buffer(data, len, dicts, ndicts, stats_item, &c, &ignored, err);
    pith_buf_free(&ignored);
    size_t header = len >= 3 ? ((data[2] & 1) ? 11 : 3) : len, total = header;
    for (int k = 0; k < K_COUNT; k++) total += c.bytes[k];
    outf(out, "%-36s %8s %10s %7s\n", "item kind", "count", "bytes", "share");
    outf(out, "%-36s %8s %10zu %6.1f%%\n", "header", "", header, 100.0 * (double)header / (double)(len ? len : 1));
    for (int k = 0; k < K_COUNT; k++)
        if (c.count[k])
            outf(out, "%-36s %8zu %10zu %6.1f%%\n", kind_names[k], c.count[k], c.bytes[k],
                 100.0 * (double)c.bytes[k] / (double)(len ? len : 1));
    outf(out, "%-36s %8s %10zu\n", "total", "", total);
    outf(out,
         "\ntables: %zu shapes defined, %zu maps by shape; %zu value strings tabled (%zu bytes; keys not counted), "
         "%zu references\n",
         c.shapes_defined, c.shape_refs, c.strings_new, c.string_bytes_new, c.count[K_REF]);
    if (!ok) outf(out, "decoding stopped: %s at %zu: %s\n", pith_code_name(err->code), err->offset, err->message);
    return ok;
}

/* ==========================================================================
 * dict build / show
 * ========================================================================== */

typedef struct counted {
    const char *ptr;        /* strings: the text (in a document); shapes: joined keys (owned) */
    size_t len;
    size_t count;
    const pith_value *keys; /* shapes: the keys of the first occurrence */
    size_t nkeys;
} counted;

typedef struct counter {
    counted *items;
    size_t n, cap;
} counter;

/* Linear lookup: dictionaries are built once, from samples. */
static counted *count_in(counter *c, const char *p, size_t n, bool own) {
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i].len == n && memcmp(c->items[i].ptr, p, n) == 0) return &c->items[i];
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->items = (counted *)realloc(c->items, c->cap * sizeof(counted));
    }
    counted *e = &c->items[c->n++];
    memset(e, 0, sizeof *e);
    if (own) {
        char *copy = (char *)malloc(n + 1);
        memcpy(copy, p, n);
        p = copy;
    }
    e->ptr = p;
    e->len = n;
    return e;
}

static void collect(const pith_value *v, counter *strings, counter *shapes, pith_buf *keybuf) {
    switch (v->type) {
    case PITH_STRING:
        if (v->v.str.len >= 2) count_in(strings, v->v.str.ptr, v->v.str.len, false)->count++;
        break;
    case PITH_ARRAY:
        for (size_t i = 0; i < v->v.array.count; i++) collect(&v->v.array.items[i], strings, shapes, keybuf);
        break;
    case PITH_MAP: {
        keybuf->len = 0;
        for (size_t i = 0; i < v->v.map.count; i++) {
            /* Length-prefixed: the joined form is unambiguous whatever the keys contain. */
            char lenbuf[24];
            int ln = snprintf(lenbuf, sizeof lenbuf, "%zu:", v->v.map.keys[i].v.str.len);
            pith_buf_append(keybuf, lenbuf, (size_t)ln);
            pith_buf_append(keybuf, v->v.map.keys[i].v.str.ptr, v->v.map.keys[i].v.str.len);
        }
        counted *e = count_in(shapes, keybuf->ptr ? keybuf->ptr : "", keybuf->len, true);
        if (e->count++ == 0) {
            e->keys = v->v.map.keys;
            e->nkeys = v->v.map.count;
        }
        for (size_t i = 0; i < v->v.map.count; i++) collect(&v->v.map.values[i], strings, shapes, keybuf);
        break;
    }
    default:
        break;
    }
}

static int by_savings(const void *a, const void *b) {
    const counted *x = (const counted *)a, *y = (const counted *)b;
    size_t sx = x->count * x->len, sy = y->count * y->len;
    if (sx != sy) return sx > sy ? -1 : 1;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return memcmp(x->ptr, y->ptr, x->len);
}

int pith_cli_dict_build(const char *const *inputs, size_t ninputs, size_t min_count, size_t max_strings,
                        const char *output) {
    if (ninputs == 0) {
        fprintf(stderr, "pith: dict build needs sample JSON files\n");
        return 2;
    }
    pith_doc **docs = (pith_doc **)calloc(ninputs, sizeof(pith_doc *));
    counter strings = {NULL, 0, 0}, shapes = {NULL, 0, 0};
    pith_buf keybuf;
    pith_buf_init(&keybuf, NULL);
    int rc = 0;
    for (size_t i = 0; i < ninputs && rc == 0; i++) {
        size_t len;
        uint8_t *text = read_file(inputs[i], &len);
        if (!text) {
            fprintf(stderr, "pith: cannot read %s\n", inputs[i]);
            rc = 1;
            break;
        }
        json_error jerr;
        docs[i] = json_read_seq(NULL, (const char *)text, len, NULL, &jerr);
        free(text);
        if (!docs[i]) {
            fprintf(stderr, "pith: %s: invalid JSON at line %zu: %s\n", inputs[i], jerr.line, jerr.message);
            rc = 1;
            break;
        }
        for (size_t r = 0; r < pith_doc_count(docs[i]); r++) collect(pith_doc_root(docs[i], r), &strings, &shapes, &keybuf);
    }
    pith_dict *dict = NULL;
    if (rc == 0) {
        qsort(strings.items, strings.n, sizeof(counted), by_savings);
        size_t nkeep = 0;
        pith_key *skeys = (pith_key *)calloc(strings.n + 1, sizeof(pith_key));
        for (size_t i = 0; i < strings.n && nkeep < max_strings; i++)
            if (strings.items[i].count >= min_count)
                skeys[nkeep++] = (pith_key){strings.items[i].ptr, strings.items[i].len, false};
        size_t nshapes = 0, nk = 0;
        for (size_t i = 0; i < shapes.n; i++) nk += shapes.items[i].nkeys;
        pith_key *kkeys = (pith_key *)calloc(nk + 1, sizeof(pith_key));
        size_t *lens = (size_t *)calloc(shapes.n + 1, sizeof(size_t));
        nk = 0;
        for (size_t i = 0; i < shapes.n; i++) {
            counted *e = &shapes.items[i];
            if (e->count < min_count) continue;
            for (size_t j = 0; j < e->nkeys; j++)
                kkeys[nk++] = (pith_key){e->keys[j].v.str.ptr, e->keys[j].v.str.len, false};
            lens[nshapes++] = e->nkeys;
        }
        pith_error err;
        dict = pith_dict_new(NULL, skeys, nkeep, kkeys, lens, nshapes, &err);
        if (!dict) {
            fprintf(stderr, "pith: cannot build the dictionary: %s\n", err.message);
            rc = 1;
        } else {
            size_t len;
            const uint8_t *ser = pith_dict_serialized(dict, &len);
            FILE *f = output ? fopen(output, "wb") : stdout;
            if (!f || write_all(f, ser, len) != 0) {
                fprintf(stderr, "pith: cannot write the dictionary\n");
                rc = 1;
            }
            if (f && output) fclose(f);
            fprintf(stderr, "pith: dictionary %016llx: %zu strings, %zu shapes, %zu bytes\n",
                    (unsigned long long)pith_dict_id(dict), nkeep, nshapes, len);
        }
        free(skeys);
        free(kkeys);
        free(lens);
    }
    pith_dict_free(dict);
    for (size_t i = 0; i < ninputs; i++) pith_doc_free(docs[i]);
    free(docs);
    for (size_t i = 0; i < shapes.n; i++) free((char *)shapes.items[i].ptr);
    free(strings.items);
    free(shapes.items);
    pith_buf_free(&keybuf);
    return rc;
}

int pith_cli_dict_show(const char *path) {
    size_t len;
    uint8_t *data = read_file(path, &len);
    if (!data) {
        fprintf(stderr, "pith: cannot read %s\n", path);
        return 1;
    }
    pith_error err;
    pith_dict *d = pith_dict_parse(NULL, data, len, &err);
    free(data);
    if (!d) {
        fprintf(stderr, "pith: %s is not a Pith dictionary: %s\n", path, err.message);
        return 1;
    }
    pith_buf out;
    pith_buf_init(&out, NULL);
    outf(&out, "id %016llx: %zu strings, %zu shapes\n", (unsigned long long)pith_dict_id(d), pith_dict_string_count(d),
         pith_dict_shape_count(d));
    for (size_t i = 0; i < pith_dict_string_count(d); i++) {
        pith_key k = pith_dict_string(d, i);
        outf(&out, "string #%zu ", i);
        short_string(&out, k.ptr, k.len);
        pith_buf_append(&out, "\n", 1);
    }
    for (size_t i = 0; i < pith_dict_shape_count(d); i++) {
        size_t n;
        const pith_key *keys = pith_dict_shape(d, i, &n);
        outf(&out, "shape #%zu", i);
        for (size_t j = 0; j < n; j++) {
            pith_buf_append(&out, " ", 1);
            if (keys[j].symbol) pith_buf_append(&out, ":", 1);
            short_string(&out, keys[j].ptr, keys[j].len);
        }
        pith_buf_append(&out, "\n", 1);
    }
    int rc = write_all(stdout, out.ptr, out.len);
    pith_buf_free(&out);
    pith_dict_free(d);
    return rc ? 1 : 0;
}
