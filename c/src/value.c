/*
 * value.c - the value tree: documents, decoding into a tree, writing a tree.
 */
#include "internal.h"

struct tersa_doc {
    const tersa_alloc *alloc;
    arena mem;
    tersa_value *roots;
    size_t count;
    size_t cap;
    size_t joined_at;     /* SIZE_MAX unless a joining decode met a sync frame */
};

/* ==========================================================================
 * Documents
 * ========================================================================== */

tersa_doc *tersa_doc_new(const tersa_alloc *alloc) {
    alloc = alloc_or_default(alloc);
    tersa_doc *doc = (tersa_doc *)mem_alloc(alloc, sizeof(tersa_doc));
    if (!doc) return NULL;
    doc->alloc = alloc;
    tersa_arena_init(&doc->mem, alloc);
    doc->roots = NULL;
    doc->count = doc->cap = 0;
    doc->joined_at = SIZE_MAX;
    return doc;
}

bool tersa_doc_joined(const tersa_doc *doc, size_t *offset) {
    if (offset) *offset = doc->joined_at;
    return doc->joined_at != SIZE_MAX;
}

void tersa_doc_free(tersa_doc *doc) {
    if (!doc) return;
    tersa_arena_free(&doc->mem);
    mem_free(doc->alloc, doc->roots, doc->cap * sizeof(tersa_value));
    mem_free(doc->alloc, doc, sizeof(tersa_doc));
}

tersa_value *tersa_doc_values(tersa_doc *doc, size_t n) {
    if (n > SIZE_MAX / sizeof(tersa_value)) return NULL;
    tersa_value *v = (tersa_value *)tersa_arena_alloc(&doc->mem, n ? n * sizeof(tersa_value) : 1);
    if (v && n) memset(v, 0, n * sizeof(tersa_value));
    return v;
}

void *tersa_doc_bytes(tersa_doc *doc, const void *src, size_t len) {
    return tersa_arena_copy(&doc->mem, src, len);
}

size_t tersa_doc_count(const tersa_doc *doc) { return doc->count; }

tersa_value *tersa_doc_root(const tersa_doc *doc, size_t i) {
    return i < doc->count ? &doc->roots[i] : NULL;
}

bool tersa_doc_push(tersa_doc *doc, const tersa_value *value) {
    if (!tersa_grow_array(doc->alloc, (void **)&doc->roots, &doc->cap, doc->count + 1, sizeof(tersa_value)))
        return false;
    doc->roots[doc->count++] = *value;
    return true;
}

/* ==========================================================================
 * Equality
 * ========================================================================== */

static bool same_bytes(const void *a, size_t alen, const void *b, size_t blen) {
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* A walk's stack of `elem`-byte entries, which starts in the caller's array
 * `local`, doubled: the entries move to the heap, and a heap stack outgrown
 * is freed. NULL when memory runs out (a heap stack freed then too). */
static void *grow_local_stack(const tersa_alloc *a, void *stack, const void *local, size_t *cap, size_t elem) {
    void *bigger = mem_alloc(a, 2 * *cap * elem);
    if (bigger) memcpy(bigger, stack, *cap * elem);
    if (stack != local) mem_free(a, stack, *cap * elem);
    *cap *= 2;
    return bigger;
}

static bool is_container(tersa_type t) { return t == TERSA_ARRAY || t == TERSA_MAP || t == TERSA_GENERIC_MAP; }

/* Equality of everything but the elements of containers (their counts only). */
static bool shallow_equal(const tersa_value *a, const tersa_value *b) {
    tersa_type ta = a->type, tb = b->type;
    /* A generic map and a shaped map holding the same pairs are the same value. */
    if (ta == TERSA_GENERIC_MAP) ta = TERSA_MAP;
    if (tb == TERSA_GENERIC_MAP) tb = TERSA_MAP;
    if (ta != tb) return false;
    switch (ta) {
    case TERSA_NULL:
    case TERSA_FALSE:
    case TERSA_TRUE:
        return true;
    case TERSA_INT:
        return a->v.i == b->v.i;
    case TERSA_UINT:
        return a->v.u == b->v.u;
    case TERSA_FLOAT: {
        uint64_t x, y;
        memcpy(&x, &a->v.f, 8);
        memcpy(&y, &b->v.f, 8);
        return x == y;
    }
    case TERSA_BIGINT:
        return a->v.big.negative == b->v.big.negative &&
               same_bytes(a->v.big.mag, a->v.big.len, b->v.big.mag, b->v.big.len);
    case TERSA_STRING:
    case TERSA_SYMBOL:
        return same_bytes(a->v.str.ptr, a->v.str.len, b->v.str.ptr, b->v.str.len);
    case TERSA_BINARY:
        return same_bytes(a->v.bin.ptr, a->v.bin.len, b->v.bin.ptr, b->v.bin.len);
    case TERSA_EXT:
        return a->v.ext.type == b->v.ext.type &&
               same_bytes(a->v.ext.ptr, a->v.ext.len, b->v.ext.ptr, b->v.ext.len);
    case TERSA_TIME:
        return a->v.time.seconds == b->v.time.seconds && a->v.time.nanos == b->v.time.nanos &&
               a->v.time.zone == b->v.time.zone &&
               (a->v.time.zone != TERSA_ZONE_OFFSET || a->v.time.offset == b->v.time.offset);
    case TERSA_ARRAY:
        return a->v.array.count == b->v.array.count;
    case TERSA_MAP:
        return a->v.map.count == b->v.map.count;
    default:
        return false;
    }
}

typedef struct eq_step {
    const tersa_value *a, *b; /* containers of equal counts */
    size_t next, count;      /* maps: keys and values interleaved */
} eq_step;

/* Iterative, like tersa_write_value: trees are as deep as their decoder
 * allowed. If memory for the stack runs out the trees are reported unequal,
 * as equality could not be shown. */
bool tersa_value_equal(const tersa_value *a, const tersa_value *b) {
    const tersa_alloc *al = &tersa_default_alloc;
    eq_step local[32];
    eq_step *stack = local;
    size_t depth = 0, cap = 32;
    bool equal = true;
    while (a) {
        if (!shallow_equal(a, b)) {
            equal = false;
            break;
        }
        if (is_container(a->type)) {
            size_t count = a->type == TERSA_ARRAY ? a->v.array.count : 2 * a->v.map.count;
            if (depth == cap && !(stack = grow_local_stack(al, stack, local, &cap, sizeof *stack))) {
                equal = false;
                break;
            }
            stack[depth++] = (eq_step){a, b, 0, count};
        }
        /* The next pair: the first not yet compared in the innermost open container. */
        a = b = NULL;
        while (depth) {
            eq_step *top = &stack[depth - 1];
            if (top->next == top->count) {
                depth--;
                continue;
            }
            size_t i = top->next++;
            if (top->a->type == TERSA_ARRAY) {
                a = &top->a->v.array.items[i];
                b = &top->b->v.array.items[i];
            } else if (i % 2 == 0) {
                a = &top->a->v.map.keys[i / 2];
                b = &top->b->v.map.keys[i / 2];
            } else {
                a = &top->a->v.map.values[i / 2];
                b = &top->b->v.map.values[i / 2];
            }
            break;
        }
    }
    if (stack != local) mem_free(al, stack, cap * sizeof(eq_step));
    return equal;
}

/* ==========================================================================
 * Decoding into a tree
 * ========================================================================== */

/* Decoding into a tree is iterative: nesting is bounded by max_depth, but
 * stack frames are not bounded by anything we control (sanitizers, small
 * thread stacks), so the only stack is an explicit one on the heap. Nodes
 * collect on a scratch stack and move to the arena when their container is
 * complete: counts in the input are claims, and allocating them up front would
 * let nested containers claim the same bytes over and over. */
typedef struct bframe {
    size_t node;   /* scratch index of the container */
    size_t start;  /* scratch index of its first child */
    size_t need;   /* children it takes */
} bframe;

typedef struct tree_builder {
    tersa_reader *r;
    tersa_doc *doc;
    const char **copies;   /* per string-table index: the doc's copy (shared by references) */
    size_t ncopies;
    size_t copies_hi;      /* copies[copies_hi..] are empty: what a sync frame must clear */
    /* Per shape-table index: the key nodes every map of that shape shares.
     * Sharing is what keeps a one-byte SHAPE item from costing a fresh copy
     * of all its keys, which would let small inputs demand large trees. */
    tersa_value **shape_keys;
    size_t shape_keys_cap;
    size_t shape_keys_hi;  /* shape_keys[shape_keys_hi..] are empty */
    tersa_value *scratch;
    size_t nscratch, scratch_cap;
    bframe *frames;
    size_t nframes, frames_cap;
} tree_builder;

static const char *copy_indexed(tree_builder *b, const char *ptr, size_t len, uint32_t i) {
    if (i != TERSA_NO_INDEX && i < b->ncopies && b->copies[i]) return b->copies[i];
    const char *p = (const char *)tersa_arena_copy(&b->doc->mem, ptr, len);
    if (p && i != TERSA_NO_INDEX && i < b->ncopies) {
        b->copies[i] = p;
        if (i >= b->copies_hi) b->copies_hi = (size_t)i + 1;
    }
    return p;
}

static const char *copy_string(tree_builder *b, const tersa_item *it) {
    return copy_indexed(b, it->v.str.ptr, it->v.str.len, it->v.str.index);
}

static tersa_value *copy_keys(tree_builder *b, const tersa_item *it) {
    size_t n = it->v.map.count;
    tersa_value *keys = tersa_doc_values(b->doc, n);
    if (!keys) return NULL;
    for (size_t i = 0; i < n; i++) {
        const tersa_key *k = &it->v.map.keys[i];
        keys[i].type = k->symbol ? TERSA_SYMBOL : TERSA_STRING;
        /* Keys share the copy of their table string, as references do. */
        uint32_t index = it->v.map.key_strings ? it->v.map.key_strings[i] : TERSA_NO_INDEX;
        keys[i].v.str.ptr = copy_indexed(b, k->ptr, k->len, index);
        keys[i].v.str.len = k->len;
        if (!keys[i].v.str.ptr) return NULL;
    }
    return keys;
}

/* The key nodes of a shaped map: built once per shape, then shared. */
static tersa_value *shared_shape_keys(tree_builder *b, const tersa_item *it) {
    uint32_t s = it->v.map.shape;
    /* A shape the full table did not take was spelled out in the input. */
    if (s == TERSA_NO_INDEX || it->v.map.count == 0) return copy_keys(b, it);
    if (s >= b->shape_keys_cap) {
        size_t old = b->shape_keys_cap;
        if (!tersa_grow_array(b->doc->alloc, (void **)&b->shape_keys, &b->shape_keys_cap, (size_t)s + 1,
                        sizeof(tersa_value *)))
            return NULL;
        memset(b->shape_keys + old, 0, (b->shape_keys_cap - old) * sizeof(tersa_value *));
    }
    if (!b->shape_keys[s]) {
        b->shape_keys[s] = copy_keys(b, it);
        if (s >= b->shape_keys_hi) b->shape_keys_hi = (size_t)s + 1;
    }
    return b->shape_keys[s];
}

/* Turn an item into a node; containers get their children later. */
static bool node_of(tree_builder *b, const tersa_item *it, tersa_value *out, size_t *children) {
    out->type = it->type;
    *children = 0;
    switch (it->type) {
    case TERSA_NULL:
    case TERSA_FALSE:
    case TERSA_TRUE:
        return true;
    case TERSA_INT:
        out->v.i = it->v.i;
        return true;
    case TERSA_UINT:
        out->v.u = it->v.u;
        return true;
    case TERSA_FLOAT:
        out->v.f = it->v.f;
        return true;
    case TERSA_STRING:
    case TERSA_SYMBOL:
        out->v.str.ptr = copy_string(b, it);
        out->v.str.len = it->v.str.len;
        return out->v.str.ptr != NULL;
    case TERSA_BINARY:
        out->v.bin.ptr = (const uint8_t *)tersa_arena_copy(&b->doc->mem, it->v.bin.ptr, it->v.bin.len);
        out->v.bin.len = it->v.bin.len;
        return out->v.bin.ptr != NULL;
    case TERSA_BIGINT:
        out->v.big.negative = it->v.big.negative;
        out->v.big.mag = (const uint8_t *)tersa_arena_copy(&b->doc->mem, it->v.big.mag, it->v.big.len);
        out->v.big.len = it->v.big.len;
        return out->v.big.mag != NULL;
    case TERSA_EXT:
        out->v.ext.type = it->v.ext.type;
        out->v.ext.ptr = (const uint8_t *)tersa_arena_copy(&b->doc->mem, it->v.ext.ptr, it->v.ext.len);
        out->v.ext.len = it->v.ext.len;
        return out->v.ext.ptr != NULL;
    case TERSA_TIME:
        out->v.time = it->v.time;
        return true;
    case TERSA_ARRAY:
        out->v.array.items = NULL;
        out->v.array.count = *children = it->v.array.count;
        return true;
    case TERSA_MAP: {
        size_t n = it->v.map.count;
        tersa_value *keys = shared_shape_keys(b, it);
        if (!keys) return false;
        out->v.map.keys = keys;
        out->v.map.values = NULL;
        out->v.map.count = *children = n;
        return true;
    }
    case TERSA_GENERIC_MAP:
        out->v.map.keys = out->v.map.values = NULL;
        out->v.map.count = it->v.map.count;
        *children = 2 * it->v.map.count;
        return true;
    }
    return false;
}

/* Move a complete container's children from the scratch stack to the arena. */
static bool close_container(tree_builder *b, const bframe *f) {
    tersa_value *node = &b->scratch[f->node];
    const tersa_value *kids = b->scratch + f->start;
    size_t n = f->need;
    if (node->type == TERSA_ARRAY) {
        node->v.array.items = tersa_doc_values(b->doc, n);
        if (!node->v.array.items) return false;
        memcpy(node->v.array.items, kids, n * sizeof(tersa_value));
    } else if (node->type == TERSA_MAP) {
        node->v.map.values = tersa_doc_values(b->doc, n);
        if (!node->v.map.values) return false;
        memcpy(node->v.map.values, kids, n * sizeof(tersa_value));
    } else {
        size_t pairs = n / 2;
        node->v.map.keys = tersa_doc_values(b->doc, pairs);
        node->v.map.values = tersa_doc_values(b->doc, pairs);
        if (!node->v.map.keys || !node->v.map.values) return false;
        for (size_t i = 0; i < pairs; i++) {
            node->v.map.keys[i] = kids[2 * i];
            node->v.map.values[i] = kids[2 * i + 1];
        }
    }
    b->nscratch = f->start;
    return true;
}

/* Read one whole value into *out. */
static bool build(tree_builder *b, tersa_value *out) {
    const tersa_alloc *a = b->doc->alloc;
    size_t base = b->nscratch, base_frames = b->nframes;
    do {
        tersa_item it;
        if (!tersa_read(b->r, &it)) return false;
        if (b->nscratch == b->scratch_cap &&
            !tersa_grow_array(a, (void **)&b->scratch, &b->scratch_cap, b->nscratch + 1, sizeof(tersa_value)))
            return false;
        size_t children;
        size_t index = b->nscratch;
        if (!node_of(b, &it, &b->scratch[index], &children)) return false;
        b->nscratch++;
        if (children) {
            if (b->nframes == b->frames_cap &&
                !tersa_grow_array(a, (void **)&b->frames, &b->frames_cap, b->nframes + 1, sizeof(bframe)))
                return false;
            b->frames[b->nframes++] = (bframe){index, index + 1, children};
        }
        while (b->nframes > base_frames) {
            const bframe *f = &b->frames[b->nframes - 1];
            if (b->nscratch - f->start < f->need) break;
            if (!close_container(b, f)) return false;
            b->nframes--;
        }
    } while (b->nframes > base_frames);
    *out = b->scratch[base];
    b->nscratch = base;
    return true;
}

tersa_doc *tersa_decode(const tersa_alloc *alloc, const void *data, size_t len, const tersa_decode_options *opts,
                      tersa_error *err) {
    tersa_decode_options none = {NULL, 0, 0, false, false};
    if (!opts) opts = &none;
    alloc = alloc_or_default(alloc);
    set_error(err, TERSA_OK, 0, NULL);
    tersa_doc *doc = tersa_doc_new(alloc);
    tersa_reader *r = tersa_reader_new(alloc);
    /* References share their first copy: at most one slot per possible string. */
    size_t ncopies = len / 3 + 1;
    if (ncopies > TERSA_MAX_STRINGS) ncopies = TERSA_MAX_STRINGS;
    const char **copies = (const char **)mem_alloc(alloc, ncopies * sizeof(char *));
    bool ok = doc && r && copies;
    if (!ok) {
        set_error(err, TERSA_ERR_NOMEM, 0, "out of memory");
    } else {
        memset(copies, 0, ncopies * sizeof(char *));
        if (opts->max_depth) tersa_reader_set_max_depth(r, opts->max_depth);
        tree_builder b = {r, doc, copies, ncopies, 0, NULL, 0, 0, NULL, 0, 0, NULL, 0, 0};
        uint32_t flags = opts->join ? TERSA_READ_JOIN : opts->stream ? TERSA_READ_STREAM : 0;
        ok = tersa_reader_start(r, data, len, opts->dicts, opts->ndicts, flags);
        if (ok && (opts->stream || opts->join)) {
            bool more = true;
            while (ok) {
                ok = tersa_reader_frame_begin(r, &more);
                if (!ok || !more) break;
                if (tersa_reader_frame_synced(r)) {
                    /* The table indices these caches are keyed by name other entries now. */
                    memset(b.copies, 0, b.copies_hi * sizeof(char *));
                    b.copies_hi = 0;
                    if (b.shape_keys_hi) memset(b.shape_keys, 0, b.shape_keys_hi * sizeof(tersa_value *));
                    b.shape_keys_hi = 0;
                }
                tersa_value v;
                ok = build(&b, &v) && tersa_reader_frame_end(r) && tersa_doc_push(doc, &v);
            }
        } else if (ok) {
            tersa_value v;
            ok = build(&b, &v) && tersa_reader_finish(r) && tersa_doc_push(doc, &v);
        }
        if (ok) tersa_reader_joined(r, &doc->joined_at);
        if (!ok) {
            *err = *tersa_reader_error(r);
            if (err->code == TERSA_OK) set_error(err, TERSA_ERR_NOMEM, 0, "out of memory");
        }
        mem_free(alloc, b.scratch, b.scratch_cap * sizeof(tersa_value));
        mem_free(alloc, b.frames, b.frames_cap * sizeof(bframe));
        mem_free(alloc, b.shape_keys, b.shape_keys_cap * sizeof(tersa_value *));
    }
    mem_free(alloc, copies, ncopies * sizeof(char *));
    tersa_reader_free(r);
    if (!ok) {
        tersa_doc_free(doc);
        return NULL;
    }
    return doc;
}

/* ==========================================================================
 * Writing a tree
 * ========================================================================== */

static bool all_keys_textual(const tersa_value *v) {
    for (size_t i = 0; i < v->v.map.count; i++)
        if (v->v.map.keys[i].type != TERSA_STRING && v->v.map.keys[i].type != TERSA_SYMBOL) return false;
    return true;
}

static bool write_scalar(tersa_writer *w, const tersa_value *v) {
    switch (v->type) {
    case TERSA_NULL:
        return tersa_write_null(w);
    case TERSA_FALSE:
        return tersa_write_bool(w, false);
    case TERSA_TRUE:
        return tersa_write_bool(w, true);
    case TERSA_INT:
        return tersa_write_int(w, v->v.i);
    case TERSA_UINT:
        return tersa_write_uint(w, v->v.u);
    case TERSA_BIGINT:
        return tersa_write_bigint(w, v->v.big.negative, v->v.big.mag, v->v.big.len);
    case TERSA_FLOAT:
        return tersa_write_double(w, v->v.f);
    case TERSA_STRING:
        return tersa_write_string(w, v->v.str.ptr, v->v.str.len);
    case TERSA_SYMBOL:
        return tersa_write_symbol(w, v->v.str.ptr, v->v.str.len);
    case TERSA_BINARY:
        return tersa_write_binary(w, v->v.bin.ptr, v->v.bin.len);
    case TERSA_EXT:
        if (v->v.ext.type > TERSA_EXT_APP_MAX && v->v.ext.type <= TERSA_MAX_EXT_TYPE)
            return tersa_write_well_known_payload(w, v->v.ext.type, v->v.ext.ptr, v->v.ext.len);
        return tersa_write_ext(w, v->v.ext.type, v->v.ext.ptr, v->v.ext.len);
    case TERSA_TIME:
        return tersa_write_timestamp(w, &v->v.time);
    default:
        return false;
    }
}

/* Open a container; *children is how many values follow (generic maps: keys
 * and values interleaved). */
static bool open_container(tersa_writer *w, const tersa_value *v, size_t *children) {
    if (v->type == TERSA_ARRAY) {
        *children = v->v.array.count;
        return tersa_write_array_begin(w, v->v.array.count);
    }
    size_t n = v->v.map.count;
    if (!all_keys_textual(v)) {
        *children = 2 * n;
        return tersa_write_generic_map_begin(w, n);
    }
    tersa_key stack_keys[16] = {{NULL, 0, false}};
    tersa_key *keys = stack_keys;
    const tersa_alloc *a = &tersa_default_alloc;
    if (n > 16 && !(keys = (tersa_key *)mem_alloc(a, n * sizeof(tersa_key)))) return false;
    for (size_t i = 0; i < n; i++) {
        keys[i].ptr = v->v.map.keys[i].v.str.ptr;
        keys[i].len = v->v.map.keys[i].v.str.len;
        keys[i].symbol = v->v.map.keys[i].type == TERSA_SYMBOL;
    }
    bool ok = tersa_write_map_begin(w, keys, n);
    if (keys != stack_keys) mem_free(a, keys, n * sizeof(tersa_key));
    *children = n;
    return ok;
}

/* The i-th value to write inside container v. */
static const tersa_value *child(const tersa_value *v, size_t i, bool shaped) {
    if (v->type == TERSA_ARRAY) return &v->v.array.items[i];
    if (shaped) return &v->v.map.values[i];
    return (i & 1) ? &v->v.map.values[i / 2] : &v->v.map.keys[i / 2];
}

typedef struct wstep {
    const tersa_value *v;
    size_t next, count;
    bool shaped;
} wstep;

/* Iterative for the same reason as decoding: the writer bounds the depth,
 * nothing bounds a stack frame's size. */
bool tersa_write_value(tersa_writer *w, const tersa_value *v) {
    if (!is_container(v->type)) return write_scalar(w, v);
    const tersa_alloc *a = &tersa_default_alloc;
    wstep local[32];
    wstep *stack = local;
    size_t depth = 0, cap = 32;
    bool ok = true;
    size_t count;
    ok = open_container(w, v, &count);
    if (ok) stack[depth++] = (wstep){v, 0, count, v->type != TERSA_ARRAY && all_keys_textual(v)};
    while (ok && depth) {
        wstep *top = &stack[depth - 1];
        if (top->next == top->count) {
            ok = top->v->type == TERSA_ARRAY ? tersa_write_array_end(w) : tersa_write_map_end(w);
            depth--;
            continue;
        }
        const tersa_value *c = child(top->v, top->next++, top->shaped);
        if (!is_container(c->type)) {
            ok = write_scalar(w, c);
            continue;
        }
        if (depth == cap && !(stack = grow_local_stack(a, stack, local, &cap, sizeof *stack))) {
            ok = false;
            break;
        }
        ok = open_container(w, c, &count);
        if (ok) stack[depth++] = (wstep){c, 0, count, c->type != TERSA_ARRAY && all_keys_textual(c)};
    }
    if (stack != local) mem_free(a, stack, cap * sizeof(wstep));
    return ok;
}
