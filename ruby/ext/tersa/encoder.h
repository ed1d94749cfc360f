/*
 * encoder.h - the state of a Tersa::Encoder, shared by encoder_class.c (the
 * Ruby class, entry points), encoder_walk.c (values, the frame loop),
 * encoder_maps.c (how a map starts) and encoder_errors.c (paths and raisers).
 */
#ifndef TERSA_RB_ENCODER_H
#define TERSA_RB_ENCODER_H

#include "common.h"

#include <string.h>

#include "hash_fast.h"
#include "stack.h"

#include "shape_lookup.h"

enum { FRAME_ARRAY, FRAME_MAP, FRAME_GENERIC };

/* An open container (innermost last): where encoding is, for error paths and
 * cycle reports, and what comes next. Containers do not recurse on the
 * machine stack, so any depth max_depth allows costs only these frames. The
 * container is on the value stack at `base` (alive and pinned), a map's
 * {key, value} pairs right after it. */
typedef struct enc_frame {
    VALUE container;
    long index;     /* the current element or pair (-1 before the first) */
    long n;         /* elements or pairs */
    long base;
    uint32_t hooks; /* hook replacements standing for the container (under it on the
                       value stack), released when it closes */
    uint8_t kind;   /* FRAME_ARRAY, FRAME_MAP (shaped: values only), FRAME_GENERIC (key, value, ...) */
    bool at_value;  /* FRAME_GENERIC: the current pair's key is written */
} enc_frame;

/* The keys of a recent top-level map (one record per buffer: a few message
 * types taking turns), as identities, as the tersa_keys textual_keys made
 * of them, and the writer's map-definition template of them if it recorded
 * one (tersa_write_map_template; the entry's reference, released when the
 * entry is dropped). Valid only while no GC has run since they were taken
 * (top_gc): a collected key's address could be reused, a compaction may move
 * keys. Only keys a Hash keeps frozen (plain Strings, Symbols of an ordinary
 * Hash) are kept, so equal identities mean equal bytes. */
#define ENC_TOP_WAYS 16
#define ENC_TOP_KEYS 16
typedef struct enc_top_keys {
    uint32_t n; /* 0: empty */
    uint64_t h; /* tersa_shapes_hash of keys */
    VALUE keys[ENC_TOP_KEYS];
    tersa_key kbuf[ENC_TOP_KEYS];
    tersa_mapdef *md; /* or NULL */
} enc_top_keys;

/* What the shape lookup's entry of the same index stands for. */
typedef struct enc_shape_rec {
    uint32_t gen;   /* e->gen when `shape` was the writer's index of these keys */
    uint32_t shape;
    uint32_t koff;  /* the keys as tersa_keys at shape_keys + koff, or ENC_NO_KEYS */
} enc_shape_rec;
#define ENC_NO_KEYS UINT32_MAX

typedef struct tersa_rb_encoder {
    tersa_writer *w;
    VALUE stack_obj;
    tersa_rb_stack *stack;
    VALUE default_proc;
    VALUE dictionary;
    uint32_t max_depth;
    uint64_t sync_frames;    /* streams: a sync frame every N frames (0: only the first)... */
    uint64_t sync_bytes;     /* ...and once N bytes of frames followed the last one (0: never) */
    uint32_t hooks;          /* hook replacements being encoded, nested (they count as depth) */
    bool busy;
    bool streaming;
    bool stream_failed;      /* a value failed mid-frame: the stream's tables are unknown */
    size_t emitted;          /* the stream's bytes in the writer's output already handed out */
    VALUE output;            /* streams: also given each piece #write and #header return (nil: none) */
    /* Buffers whose output outgrows the writer's own buffer are written
     * straight into the String returned (see encoder_class.c, out_grow). */
    VALUE out_str;           /* a fresh String made before the walk for that (nil: none) */
    uint8_t *out_str_ptr;    /* its bytes, as the writer's block (compared, never read through here) */
    size_t out_hint;         /* the last such output's length plus slack (0: none yet) */
    bool out_set;            /* the writer uses out_output (buffers only, not streams) */
    /* A nested map's key objects (by identity) -> its record (shape_recs,
     * by entry index), only while no GC has run since the lookup was filled
     * (a collected key's address could be reused, a compaction may move
     * keys): the lookup does not mark its keys. A buffer keeps the lookup
     * of the one before: a record names its shape for the buffer it was
     * written in (gen), and the keys of a trusted map (frozen Strings and
     * Symbols: same identities, same bytes) as tersa_keys, so that a later
     * buffer defines the shape without reading the keys again. A stream
     * empties it at every frame (a sync frame starts the shape table again). */
    tersa_shapes shapes;
    struct enc_shape_rec *shape_recs;
    size_t shape_recs_cap;
    tersa_key *shape_keys;   /* parallel to the lookup's pool of stored keys */
    size_t shape_keys_cap;
    uint32_t gen;            /* counts buffers, frames and drops: a shape index is valid in one
                                (records, declared classes) */
    size_t gc_count;
    size_t top_gc;           /* rb_gc_count() when the entries of top were taken */
    enc_top_keys top[ENC_TOP_WAYS];
    uint32_t buf_shapes;     /* shapes the current buffer used (highest index + 1) */
    tersa_key *kbuf;
    size_t kbuf_cap;
    enc_frame *frames;       /* the open containers (see enc_frame) */
    size_t frames_cap;
} tersa_rb_encoder;

/** Forget the top-level maps' keys and templates (see enc_top_keys). */
static inline void tersa_rb_enc_drop_top(tersa_rb_encoder *e) {
    for (int i = 0; i < ENC_TOP_WAYS; i++) {
        e->top[i].n = 0;
        tersa_mapdef_release(e->top[i].md);
        e->top[i].md = NULL;
    }
}

/** Forget every shape the lookup holds (see tersa_rb_encoder.shapes). */
static inline void tersa_rb_enc_drop_shapes(tersa_rb_encoder *e) {
    tersa_shapes_clear(&e->shapes);
    e->gen++;
}

/** A new buffer: shape indices of earlier ones are stale; identities stay
 *  valid unless a GC ran. */
static inline void tersa_rb_enc_new_buffer(tersa_rb_encoder *e) {
    e->gen++;
    size_t gc = rb_gc_count();
    if (TERSA_UNLIKELY(gc != e->gc_count)) {
        tersa_shapes_clear(&e->shapes);
        e->gc_count = gc;
    }
}

/* Reset after an error (the encoder stays usable); the raisers reset first. */
void tersa_rb_enc_reset(tersa_rb_encoder *e);
TERSA_NORETURN(void tersa_rb_enc_fail_writer(tersa_rb_encoder *e, uint32_t depth));
TERSA_NORETURN(void tersa_rb_enc_fail_value(tersa_rb_encoder *e, uint32_t depth, const char *what, VALUE obj));
/** tersa_rb_enc_fail_value with a hint after the path: what to do instead. */
TERSA_NORETURN(void tersa_rb_enc_fail_value_hint(tersa_rb_encoder *e, uint32_t depth, const char *what, VALUE obj,
                                                    const char *hint));
TERSA_NORETURN(void tersa_rb_enc_too_deep(tersa_rb_encoder *e, uint32_t depth, VALUE container));
/** A String of another encoding as UTF-8 (EncodeError naming the path if it cannot be). */
VALUE tersa_rb_enc_to_utf8(tersa_rb_encoder *e, VALUE str, uint32_t depth);

/* A writer call that failed raises the writer's error at the current path
 * (uses the `e` and `depth` in scope). */
#define CHECK_W(call)                                  \
    do {                                               \
        if (TERSA_UNLIKELY(!(call))) tersa_rb_enc_fail_writer(e, depth); \
    } while (0)

/* What the writers can take of a String, from its flags word alone (the
 * encoding index and the coderange; tersa_rb_str_kind is filled at load time
 * from the actual encoding indices): one load and one table lookup instead
 * of comparisons against three encodings and two coderanges. */
enum { STR_OTHER, STR_TEXT, STR_TEXT_SCAN, STR_BINARY };
extern uint8_t tersa_rb_str_kind[(RUBY_ENCODING_INLINE_MAX + 1) * 4];

static inline int tersa_rb_str_kind_of(VALUE flags) {
    const int cr_shift = __builtin_ctz(RUBY_ENC_CODERANGE_7BIT);
    /* Ruby 3.x keeps the encoding index right above the coderange: one shift. */
    if (RUBY_ENCODING_SHIFT == cr_shift + 2 && RUBY_ENC_CODERANGE_MASK == 3 << cr_shift)
        return tersa_rb_str_kind[(flags >> cr_shift) & ((RUBY_ENCODING_INLINE_MAX << 2) | 3)];
    unsigned enc = (unsigned)((flags & RUBY_ENCODING_MASK) >> RUBY_ENCODING_SHIFT);
    unsigned cr = (unsigned)((flags & RUBY_ENC_CODERANGE_MASK) >> cr_shift);
    return tersa_rb_str_kind[enc * 4 + cr];
}

/* A String's bytes and length from one read of its embedded flag:
 * RSTRING_PTR and RSTRING_LEN each test it again, and RSTRING_PTR also tests
 * the pointer for NULL (a fake string's; its length is then 0). */
static inline const char *tersa_rb_str_mem(VALUE s, size_t *len) {
    const char *p;
    long n;
    RSTRING_GETMEM(s, p, n);
    *len = (size_t)n;
    return p;
}

/* A Tersa::Map (or an instance of a subclass). */
static inline bool tersa_rb_is_map(VALUE obj) {
    return RB_TYPE_P(obj, T_OBJECT) && (rb_obj_class(obj) == cMap || rb_obj_is_kind_of(obj, cMap));
}

/* The frame of `container`, opening at `depth` (checked against max_depth). */
static inline enc_frame *tersa_rb_enc_frame_open(tersa_rb_encoder *e, uint32_t depth, VALUE container) {
    if (TERSA_UNLIKELY(depth >= e->frames_cap)) {
        size_t cap = e->frames_cap ? e->frames_cap * 2 : 64;
        while (cap <= depth) cap *= 2;
        TERSA_RB_REALLOC_N(e->frames, enc_frame, cap);
        e->frames_cap = cap;
    }
    if (TERSA_UNLIKELY(depth + e->hooks >= e->max_depth)) tersa_rb_enc_too_deep(e, depth, container);
    enc_frame *f = &e->frames[depth];
    f->container = container;
    f->kind = FRAME_ARRAY; /* until a map knows its kind: paths show indices */
    f->index = -1;
    f->at_value = true;
    return f;
}

/* Counts the shape the map just begun defined or used (if any) among the
 * buffer's shapes; returns it, or TERSA_NO_INDEX. */
TERSA_INLINE uint32_t tersa_rb_enc_note_shape(tersa_rb_encoder *e) {
    uint32_t shape = tersa_writer_last_shape(e->w);
    if (shape != TERSA_NO_INDEX && shape >= e->buf_shapes) e->buf_shapes = shape + 1;
    return shape;
}

/* After a map's header: an empty map ends here (false: nothing to encode, its
 * value-stack entries from `self` on released); otherwise frame `f` becomes
 * the open map of `n` pairs (true). */
TERSA_INLINE bool tersa_rb_enc_map_frame(tersa_rb_encoder *e, enc_frame *f, uint8_t kind, long n, uint32_t hooks,
                                         long self, uint32_t depth) {
    if (n == 0) {
        CHECK_W(tersa_write_map_end(e->w));
        e->stack->len = self;
        return false;
    }
    f->kind = kind;
    f->n = n;
    f->hooks = hooks;
    f->base = self;
    f->at_value = true;
    return true;
}

/** Open a Hash (or a Tersa::Map when `hash` is false) at `depth`, `hooks`
 *  replacements standing for it; false if it is empty (then it is written whole). */
bool tersa_rb_enc_open_map(tersa_rb_encoder *e, VALUE container, bool hash, uint32_t depth, uint32_t hooks);
/** Encode one value into the writer (begun by the caller): the object walk. */
void tersa_rb_enc_encode_root(tersa_rb_encoder *e, VALUE obj);
void tersa_rb_init_encoder_walk(void);

/** tersa_rb_enc_open_map for a Hash inside a container (depth > 0), no hook standing for it. */
bool tersa_rb_enc_open_nested_hash(tersa_rb_encoder *e, VALUE hash, uint32_t depth);

#endif
