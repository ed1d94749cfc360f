/*
 * inspect.c - the `tersa inspect`, `tersa stats` and `tersa dict` commands.
 */
#include "inspect.h"

#include "fileio.h"
#include "json.h"
#include "tags.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void outf(tersa_buf *out, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) tersa_buf_append(out, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Append a short, escaped rendering of a string. */
static void short_string(tersa_buf *out, const char *p, size_t n) {
    tersa_value v;
    v.type = TERSA_STRING;
    v.v.str.ptr = p;
    v.v.str.len = n > 60 ? 60 : n;
    while (v.v.str.len < n && v.v.str.len > 0 && ((unsigned char)p[v.v.str.len] & 0xC0) == 0x80) v.v.str.len--;
    tersa_diag(&v, out);
    if (v.v.str.len < n) outf(out, "... (%zu bytes)", n);
}

static bool is_ref_tag(uint8_t t) { return t < TAG_STR0 || t == TAG_REF8 || t == TAG_REF16 || t == TAG_REF24; }

static void describe(tersa_buf *out, const tersa_item *it, const uint8_t *data) {
    uint8_t t = it->tag;
    switch (it->type) {
    case TERSA_STRING:
    case TERSA_SYMBOL:
        short_string(out, it->v.str.ptr, it->v.str.len);
        if ((t >= TAG_PFX0 && t < TAG_PFX0 + N_PFX0) || t == TAG_PFX_LONG) {
            uint8_t pb = data[it->offset + 1];
            outf(out, "  prefix %u of the %s string", pb & 0x7F, (pb & 0x80) ? "last" : "slot's");
        }
        if (it->v.str.index != TERSA_NO_INDEX)
            outf(out, is_ref_tag(t) ? "  = string #%u" : "  -> string #%u", it->v.str.index);
        break;
    case TERSA_MAP: {
        if (it->flags & TERSA_ITEM_NEW_SHAPE) {
            if (it->v.map.shape != TERSA_NO_INDEX)
                outf(out, "defines shape #%u:", it->v.map.shape);
            else
                outf(out, "shape (table full):");
        } else {
            outf(out, "shape #%u:", it->v.map.shape);
        }
        for (size_t i = 0; i < it->v.map.count && i < 8; i++) {
            tersa_buf_append(out, " ", 1);
            if (it->v.map.keys[i].symbol) tersa_buf_append(out, ":", 1);
            short_string(out, it->v.map.keys[i].ptr, it->v.map.keys[i].len);
        }
        if (it->v.map.count > 8) outf(out, " ... (%zu keys)", it->v.map.count);
        break;
    }
    case TERSA_GENERIC_MAP:
        outf(out, "%zu pairs", it->v.map.count);
        break;
    case TERSA_ARRAY:
        outf(out, "%zu elements", it->v.array.count);
        break;
    default: {
        const bool well_known = it->type == TERSA_EXT && it->v.ext.type > TERSA_EXT_APP_MAX;
        tersa_value v;
        memset(&v, 0, sizeof v);
        v.type = it->type;
        switch (it->type) {
        case TERSA_INT: v.v.i = it->v.i; break;
        case TERSA_UINT: v.v.u = it->v.u; break;
        case TERSA_FLOAT: v.v.f = it->v.f; break;
        case TERSA_TIME: v.v.time = it->v.time; break;
        case TERSA_BIGINT:
            v.v.big.negative = it->v.big.negative;
            v.v.big.mag = it->v.big.mag;
            v.v.big.len = it->v.big.len;
            break;
        case TERSA_BINARY:
            v.v.bin.ptr = it->v.bin.ptr;
            v.v.bin.len = it->v.bin.len > 24 ? 24 : it->v.bin.len;
            break;
        case TERSA_EXT:
            /* Well-known values (reserved types) print whole, as decimal("1.00") etc. */
            v.v.ext.type = it->v.ext.type;
            v.v.ext.ptr = it->v.ext.ptr;
            v.v.ext.len = it->v.ext.len > 24 && !well_known ? 24 : it->v.ext.len;
            break;
        default: break;
        }
        tersa_diag(&v, out);
        if ((it->type == TERSA_BINARY && it->v.bin.len > 24) || (it->type == TERSA_EXT && it->v.ext.len > 24 && !well_known))
            outf(out, "... (%zu bytes)", it->type == TERSA_BINARY ? it->v.bin.len : it->v.ext.len);
        if (t == TAG_INT_DELTA || t == TAG_DEC_DELTA) tersa_buf_append(out, "  (delta)", 9);
    }
    }
}

/* Items left in each open container, to indent and to know where values
 * end. On the heap: the reader allows whatever depth the caller chose. */
typedef struct walk {
    size_t *remaining;
    size_t depth, cap;
} walk;

/* Account for an item just read; false if memory ran out. */
static bool walk_push(walk *w, const tersa_item *it) {
    size_t n = it->type == TERSA_ARRAY ? it->v.array.count
               : it->type == TERSA_MAP ? it->v.map.count
               : it->type == TERSA_GENERIC_MAP ? 2 * it->v.map.count
                                                : 0;
    if (w->depth) w->remaining[w->depth - 1]--;
    if (n) {
        if (w->depth == w->cap) {
            size_t ncap = w->cap ? 2 * w->cap : 64;
            size_t *bigger = (size_t *)realloc(w->remaining, ncap * sizeof(size_t));
            if (!bigger) return false;
            w->remaining = bigger;
            w->cap = ncap;
        }
        w->remaining[w->depth++] = n;
    }
    while (w->depth && w->remaining[w->depth - 1] == 0) w->depth--;
    return true;
}

/* Called for each item; false stops the walk. */
typedef bool (*item_fn)(void *ctx, const tersa_item *it, size_t start, size_t end, size_t depth);

/* Read a whole buffer item by item, calling fn for each, after appending a
 * header line to `header` (if not NULL). False on a decode error (*err set)
 * or when fn stopped the walk (err->code TERSA_OK). */
static bool walk_buffer(const uint8_t *data, size_t len, const inspect_options *opts, item_fn fn, void *ctx,
                        tersa_buf *header, tersa_error *err) {
    bool stream = len >= 3 && data[0] == 0xC1 && (data[2] & 0x02);
    tersa_reader *r = tersa_reader_new(NULL);
    if (!r) {
        *err = (tersa_error){TERSA_ERR_NOMEM, 0, "out of memory"};
        return false;
    }
    if (opts->max_depth) tersa_reader_set_max_depth(r, opts->max_depth);
    bool ok = tersa_reader_start(r, data, len, opts->dicts, opts->ndicts, stream ? TERSA_READ_STREAM : 0);
    if (ok && len >= 3 && header) {
        outf(header, "%06x  %02x %02x %02x%s  header: version %u%s%s\n", 0, data[0], data[1], data[2],
             (data[2] & 1) ? " + id" : "", data[2] >> 4, (data[2] & 2) ? ", stream" : "", (data[2] & 1) ? ", dictionary" : "");
    }
    bool stopped = false, nomem = false, more = true;
    size_t nomem_at = 0;
    walk w = {NULL, 0, 0};
    while (ok) {
        if (stream) {
            size_t at = tersa_reader_offset(r);
            ok = tersa_reader_frame_begin(r, &more);
            if (!ok || !more) break;
            if (header) {
                size_t framed = 0;
                tersa_error scan_err;
                tersa_stream_scan(data + at, len - at, false, &framed, &scan_err);
                outf(header, "%06zx  %sframe of %zu bytes%s\n", at, tersa_reader_frame_synced(r) ? "sync " : "", framed,
                     tersa_reader_frame_synced(r) ? " (tables and registers reset)" : "");
            }
        }
        w.depth = 0;
        do {
            tersa_item it;
            size_t depth = w.depth;
            ok = tersa_read(r, &it);
            if (!ok) break;
            if (!fn(ctx, &it, it.offset, tersa_reader_offset(r), depth)) {
                stopped = true;
                ok = false;
            } else if (!walk_push(&w, &it)) {
                nomem = true;
                nomem_at = it.offset;
                ok = false;
            }
        } while (ok && w.depth);
        if (!ok) break;
        ok = stream ? tersa_reader_frame_end(r) : tersa_reader_finish(r);
        if (!stream) break;
    }
    if (nomem)
        *err = (tersa_error){TERSA_ERR_NOMEM, nomem_at, "out of memory"};
    else if (stopped)
        *err = (tersa_error){TERSA_OK, 0, NULL};
    else if (!ok)
        *err = *tersa_reader_error(r);
    free(w.remaining);
    tersa_reader_free(r);
    return ok;
}

/* ==========================================================================
 * inspect
 * ========================================================================== */

/* The view leaves in pieces of about this size. */
#define INSPECT_FLUSH_BYTES ((size_t)64 << 10)
/* Nesting is shown by indentation up to this depth; deeper items show their
 * depth as a number in the same width, so that no line grows with depth. */
#define INDENT_LEVELS 32

typedef struct inspect_ctx {
    tersa_buf *out;
    const uint8_t *data;
    limited_output *o;
} inspect_ctx;

/* Hand the view so far to the output; false if it refused. */
static bool flush_view(inspect_ctx *c) {
    if (c->out->failed) {
        errno = ENOMEM;
        c->o->failed = true;
        return false;
    }
    bool ok = limited_write(c->o, c->out->ptr, c->out->len);
    c->out->len = 0;
    return ok;
}

static bool inspect_item(void *vctx, const tersa_item *it, size_t start, size_t end, size_t depth) {
    inspect_ctx *c = (inspect_ctx *)vctx;
    tersa_buf *out = c->out;
    char hex[40], indent[2 * INDENT_LEVELS + 24];
    size_t n = end - start, shown = n > 8 ? 8 : n, h = 0;
    for (size_t i = 0; i < shown; i++) h += (size_t)snprintf(hex + h, sizeof hex - h, "%02x ", c->data[start + i]);
    if (n > shown) h += (size_t)snprintf(hex + h, sizeof hex - h, "..");
    if (depth <= INDENT_LEVELS)
        snprintf(indent, sizeof indent, "%*s", (int)(2 * depth), "");
    else
        snprintf(indent, sizeof indent, "%*s%-10zu", 2 * INDENT_LEVELS - 10, "depth ", depth);
    outf(out, "%06zx  %-26s%s%-11s ", start, hex, indent, tersa_tag_name(it->tag));
    describe(out, it, c->data);
    tersa_buf_append(out, "\n", 1);
    return out->len < INSPECT_FLUSH_BYTES || flush_view(c);
}

bool tersa_cli_inspect(const uint8_t *data, size_t len, const inspect_options *opts, limited_output *o,
                      tersa_error *err) {
    tersa_buf out;
    tersa_buf_init(&out, NULL);
    inspect_ctx c = {&out, data, o};
    bool ok = walk_buffer(data, len, opts, inspect_item, &c, &out, err);
    if (ok)
        outf(&out, "%06zx  end (%zu bytes)\n", len, len);
    else if (err->code != TERSA_OK)
        outf(&out, "%06zx  error: %s: %s\n", err->offset, tersa_code_name(err->code), err->message);
    bool written = (ok || err->code != TERSA_OK) && flush_view(&c);
    if (ok && !written) *err = (tersa_error){TERSA_OK, 0, NULL};
    tersa_buf_free(&out);
    return ok && written;
}

static bool accept_item(void *ctx, const tersa_item *it, size_t start, size_t end, size_t depth) {
    (void)ctx, (void)it, (void)start, (void)end, (void)depth;
    return true;
}

bool tersa_cli_check(const uint8_t *data, size_t len, const inspect_options *opts, tersa_error *err) {
    return walk_buffer(data, len, opts, accept_item, NULL, NULL, err);
}

/* ==========================================================================
 * stats
 * ========================================================================== */

enum {
    K_REF, K_STR, K_PFX, K_TS, K_SYMBOL, K_MAPDEF, K_SHAPE, K_GENMAP, K_ARRAY, K_INT_SMALL, K_INT, K_INT_DELTA,
    K_BIGINT, K_DEC, K_DEC_DELTA, K_F32, K_F64, K_CONST, K_BIN, K_EXT, K_WELL_KNOWN, K_TIME, K_COUNT
};
static const char *const kind_names[K_COUNT] = {
    "string references", "inline strings", "prefix strings", "timestamp strings", "symbols",
    "maps defining shapes (with keys)", "maps by shape", "generic maps", "arrays", "small integers",
    "integers", "integer deltas", "big integers", "decimal floats", "decimal deltas", "binary32 floats",
    "binary64 floats", "null and booleans", "binary", "extensions", "well-known values",
    "timestamps"};

typedef struct stats_ctx {
    size_t count[K_COUNT], bytes[K_COUNT];
    size_t shapes_defined, shape_refs, strings_new, string_bytes_new;
} stats_ctx;

static int kind_of(uint8_t t) {
    if (t < TAG_STR0) return K_REF;
    if (t < TAG_SHAPE0) return K_STR;
    if (t < TAG_ARR0) return K_SHAPE;
    if (t < TAG_MAPDEF0) return K_ARRAY;
    if (t < TAG_INT0) return K_MAPDEF;
    if (t < TAG_PFX0) return K_INT_SMALL;
    if (t < TAG_DEC0) return K_PFX;
    if (t < TAG_NULL) return K_DEC;
    switch (t) {
    case TAG_NULL: case TAG_FALSE: case TAG_TRUE: return K_CONST;
    case TAG_F32: return K_F32;
    case TAG_F64: return K_F64;
    case TAG_INT_POS: case TAG_INT_NEG: return K_INT;
    case TAG_INT_DELTA: return K_INT_DELTA;
    case TAG_DEC_X: return K_DEC;
    case TAG_DEC_DELTA: return K_DEC_DELTA;
    case TAG_BIGINT_POS: case TAG_BIGINT_NEG: return K_BIGINT;
    case TAG_STR_LONG: return K_STR;
    case TAG_REF8: case TAG_REF16: case TAG_REF24: return K_REF;
    case TAG_SHAPE8: case TAG_SHAPE16: return K_SHAPE;
    case TAG_ARR_LONG: return K_ARRAY;
    case TAG_MAPDEF_LONG: return K_MAPDEF;
    case TAG_MAP_GEN: return K_GENMAP;
    case TAG_PFX_LONG: return K_PFX;
    case TAG_BIN: return K_BIN;
    case TAG_EXT: return K_EXT;
    case TAG_SYMBOL: return K_SYMBOL;
    case TAG_TIME: return K_TIME;
    default: return K_TS;
    }
}

static bool stats_item(void *vctx, const tersa_item *it, size_t start, size_t end, size_t depth) {
    (void)depth;
    stats_ctx *c = (stats_ctx *)vctx;
    int k = it->type == TERSA_EXT && it->v.ext.type > TERSA_EXT_APP_MAX ? K_WELL_KNOWN : kind_of(it->tag);
    c->count[k]++;
    c->bytes[k] += end - start;
    if (it->type == TERSA_MAP) {
        if (it->flags & TERSA_ITEM_NEW_SHAPE)
            c->shapes_defined++;
        else
            c->shape_refs++;
    }
    if ((it->type == TERSA_STRING || it->type == TERSA_SYMBOL) && it->v.str.index != TERSA_NO_INDEX &&
        !is_ref_tag(it->tag)) {
        c->strings_new++;
        c->string_bytes_new += it->v.str.len;
    }
    return true;
}

bool tersa_cli_stats(const uint8_t *data, size_t len, const inspect_options *opts, limited_output *o,
                    tersa_error *err) {
    stats_ctx c;
    memset(&c, 0, sizeof c);
    bool ok = walk_buffer(data, len, opts, stats_item, &c, NULL, err);
    tersa_buf buf, *out = &buf;
    tersa_buf_init(out, NULL);
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
    if (!ok) outf(out, "decoding stopped: %s at %zu: %s\n", tersa_code_name(err->code), err->offset, err->message);
    inspect_ctx view = {out, data, o};
    bool written = flush_view(&view);
    if (ok && !written) *err = (tersa_error){TERSA_OK, 0, NULL};
    tersa_buf_free(out);
    return ok && written;
}

/* ==========================================================================
 * dict build / show
 * ========================================================================== */

int tersa_cli_dict_build(const char *const *inputs, size_t ninputs, size_t min_count, size_t max_strings,
                        size_t max_shapes, uint32_t max_depth, const char *output) {
    if (ninputs == 0) {
        fprintf(stderr, "tersa: dict build needs sample JSON files\n");
        return 2;
    }
    tersa_dict_builder *builder = tersa_dict_builder_new(NULL);
    json_read_options ro = {max_depth};
    int rc = builder ? 0 : 1;
    if (!builder) fprintf(stderr, "tersa: out of memory\n");
    for (size_t i = 0; i < ninputs && rc == 0; i++) {
        size_t len;
        uint8_t *text = read_file(inputs[i], &len);
        if (!text) {
            fprintf(stderr, "tersa: cannot read %s\n", inputs[i]);
            rc = 1;
            break;
        }
        json_error jerr;
        tersa_doc *doc = json_read_seq(NULL, (const char *)text, len, &ro, &jerr);
        free(text);
        if (!doc) {
            fprintf(stderr, "tersa: %s: invalid JSON at line %zu: %s\n", inputs[i], jerr.line, jerr.message);
            rc = 1;
            break;
        }
        for (size_t r = 0; r < tersa_doc_count(doc) && rc == 0; r++) {
            if (!tersa_dict_builder_add_value(builder, tersa_doc_root(doc, r))) {
                fprintf(stderr, "tersa: out of memory\n");
                rc = 1;
            }
        }
        tersa_doc_free(doc);
    }
    tersa_dict *dict = NULL;
    if (rc == 0) {
        tersa_error err;
        tersa_dict_build_options opts = {min_count, max_strings, max_shapes};
        dict = tersa_dict_builder_finish(builder, &opts, &err);
        if (!dict) {
            fprintf(stderr, "tersa: cannot build the dictionary: %s\n", err.message);
            rc = 1;
        } else {
            size_t len;
            const uint8_t *ser = tersa_dict_serialized(dict, &len);
            FILE *f = output ? fopen(output, "wb") : stdout;
            if (!f || write_all(f, ser, len) != 0) {
                fprintf(stderr, "tersa: cannot write the dictionary\n");
                rc = 1;
            }
            if (f && output) fclose(f);
            fprintf(stderr, "tersa: dictionary 0x%016llx: %zu strings, %zu shapes, %zu bytes\n",
                    (unsigned long long)tersa_dict_id(dict), tersa_dict_string_count(dict),
                    tersa_dict_shape_count(dict), len);
        }
    }
    tersa_dict_free(dict);
    tersa_dict_builder_free(builder);
    return rc;
}

int tersa_cli_dict_show(const char *path) {
    size_t len;
    uint8_t *data = read_file(path, &len);
    if (!data) {
        fprintf(stderr, "tersa: cannot read %s\n", path);
        return 1;
    }
    tersa_error err;
    tersa_dict *d = tersa_dict_parse(NULL, data, len, &err);
    free(data);
    if (!d) {
        fprintf(stderr, "tersa: %s is not a Tersa dictionary: %s\n", path, err.message);
        return 1;
    }
    tersa_buf out;
    tersa_buf_init(&out, NULL);
    outf(&out, "id 0x%016llx: %zu strings, %zu shapes\n", (unsigned long long)tersa_dict_id(d), tersa_dict_string_count(d),
         tersa_dict_shape_count(d));
    for (size_t i = 0; i < tersa_dict_string_count(d); i++) {
        tersa_key k = tersa_dict_string(d, i);
        outf(&out, "string #%zu ", i);
        short_string(&out, k.ptr, k.len);
        tersa_buf_append(&out, "\n", 1);
    }
    for (size_t i = 0; i < tersa_dict_shape_count(d); i++) {
        size_t n;
        const tersa_key *keys = tersa_dict_shape(d, i, &n);
        outf(&out, "shape #%zu", i);
        for (size_t j = 0; j < n; j++) {
            tersa_buf_append(&out, " ", 1);
            if (keys[j].symbol) tersa_buf_append(&out, ":", 1);
            short_string(&out, keys[j].ptr, keys[j].len);
        }
        tersa_buf_append(&out, "\n", 1);
    }
    int rc = write_all(stdout, out.ptr, out.len);
    tersa_buf_free(&out);
    tersa_dict_free(d);
    return rc ? 1 : 0;
}
