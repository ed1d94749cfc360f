/*
 * encoder_maps.c - how the encoder starts a map (a Hash or a Tersa::Map): its
 * pairs onto the value stack, then the shape from the lookup, the checked or
 * trusted string keys, or a generic map.
 */
#include "encoder.h"

typedef struct collect_ctx {
    tersa_rb_stack *stack;
    long at;
} collect_ctx;

static int collect_pair(VALUE key, VALUE value, VALUE arg) {
    collect_ctx *c = (collect_ctx *)arg;
    c->stack->ptr[c->at++] = key;
    c->stack->ptr[c->at++] = value;
    return ST_CONTINUE;
}

#ifdef HAVE_RB_HASH_STLIKE_FOREACH
/* Exported by libruby but declared only in its internal headers. */
int rb_hash_stlike_foreach(VALUE hash, st_foreach_callback_func *func, st_data_t arg);

static int collect_st_pair(st_data_t key, st_data_t value, st_data_t arg) {
    return collect_pair((VALUE)key, (VALUE)value, (VALUE)arg);
}

static inline void collect_pairs(VALUE hash, collect_ctx *c) {
    rb_hash_stlike_foreach(hash, collect_st_pair, (st_data_t)c);
}
#else
static inline void collect_pairs(VALUE hash, collect_ctx *c) { rb_hash_foreach(hash, collect_pair, (VALUE)c); }
#endif

/* A key textual_keys does not take from its flags alone: a Symbol, a String
 * of a subclass, of another encoding or of unknown coderange; false if it is
 * neither a String nor a Symbol, or a binary String (a generic map). */
TERSA_NOINLINE static bool other_textual_key(tersa_rb_encoder *e, VALUE k, tersa_key *out, bool *plain,
                                               uint32_t depth) {
    bool symbol = false;
    if (SYMBOL_P(k)) {
        k = rb_sym2str(k);
        symbol = true;
    } else if (!RB_TYPE_P(k, T_STRING)) {
        return false;
    } else if (RBASIC_CLASS(k) != rb_cString) {
        *plain = false;
    }
    switch (tersa_rb_str_kind_of(RBASIC(k)->flags)) {
    case STR_TEXT:
        break;
    case STR_TEXT_SCAN:
        if (rb_enc_str_coderange(k) == ENC_CODERANGE_BROKEN)
            tersa_rb_enc_fail_value(e, depth, "invalid UTF-8 in a key of a", e->frames[depth].container);
        break;
    case STR_BINARY:
        if (!symbol) return false;
        k = tersa_rb_enc_to_utf8(e, k, depth); /* a binary Symbol's name, like any other encoding's */
        tersa_rb_stack_push(e->stack, k);
        *plain = false;
        break;
    default:
        k = tersa_rb_enc_to_utf8(e, k, depth);
        tersa_rb_stack_push(e->stack, k);
        *plain = false;
    }
    out->ptr = RSTRING_PTR(k);
    out->len = (size_t)RSTRING_LEN(k);
    out->symbol = symbol;
    return true;
}

/* Keys as tersa_keys when all are Strings or Symbols (else false). Converted
 * strings are pushed on the value stack to keep them alive. *plain is false
 * when a key is a converted String or an object of a String subclass (or
 * with a singleton class), which may define eql? and hash so that a Hash
 * holds two equal keys, and which a Hash does not freeze. */
static bool textual_keys(tersa_rb_encoder *e, long base, long n, bool *plain, uint32_t depth) {
    if ((size_t)n > e->kbuf_cap) {
        TERSA_RB_REALLOC_N(e->kbuf, tersa_key, n);
        e->kbuf_cap = (size_t)n;
    }
    *plain = true;
    tersa_key *out = e->kbuf;
    /* Held in locals: the stores into `out` (a size_t among them) may alias
     * them for the compiler, which would load them again for every key. */
    const VALUE *keys = e->stack->ptr + base;
    const VALUE string_class = rb_cString;
    for (long i = 0; i < n; i++) {
        VALUE k = keys[2 * i];
        if (TERSA_LIKELY(!RB_SPECIAL_CONST_P(k))) {
            VALUE flags = RBASIC(k)->flags;
            if (TERSA_LIKELY((flags & RUBY_T_MASK) == T_STRING && tersa_rb_str_kind_of(flags) == STR_TEXT &&
                               RBASIC_CLASS(k) == string_class)) {
                out[i].ptr = tersa_rb_str_mem(k, &out[i].len);
                out[i].symbol = false;
                continue;
            }
        }
        if (!other_textual_key(e, k, &out[i], plain, depth)) return false;
        keys = e->stack->ptr + base; /* a converted key was pushed: the value stack may have moved */
    }
    return true;
}

/* Store the keys (kbuf) of a map that defined or found `shape` in the
 * lookup, with its record; `trusted` keys are kept as tersa_keys too. The
 * records grow first: an entry never lacks one, even if growing raises. */
static void remember_shape(tersa_rb_encoder *e, uint64_t h, long base, long n, uint32_t shape, bool trusted) {
    /* The new entry's index is the count now, or 0 if the lookup empties first. */
    size_t next = tersa_shapes_count(&e->shapes);
    if (next >= e->shape_recs_cap) {
        size_t cap = e->shape_recs_cap ? 2 * e->shape_recs_cap : 64;
        while (cap <= next) cap *= 2;
        TERSA_RB_REALLOC_N(e->shape_recs, enc_shape_rec, cap);
        e->shape_recs_cap = cap;
    }
    int32_t ent = tersa_shapes_add(&e->shapes, h, (const tersa_ident *)(e->stack->ptr + base), 2, (size_t)n, shape);
    if (ent < 0) return;
    enc_shape_rec *rec = &e->shape_recs[ent];
    rec->gen = e->gen;
    rec->shape = shape;
    rec->koff = ENC_NO_KEYS;
    if (!trusted) return;
    size_t used;
    tersa_shapes_keys(&e->shapes, &used);
    if (used > e->shape_keys_cap) {
        size_t cap = e->shape_keys_cap ? 2 * e->shape_keys_cap : 256;
        while (cap < used) cap *= 2;
        TERSA_RB_REALLOC_N(e->shape_keys, tersa_key, cap);
        e->shape_keys_cap = cap;
    }
    rec->koff = (uint32_t)(used - (size_t)n);
    memcpy(e->shape_keys + rec->koff, e->kbuf, (size_t)n * sizeof(tersa_key));
}

/* Copy the pairs of `container` (a Hash, or a Tersa::Map when `hash` is false)
 * onto the value stack; returns how many. */
TERSA_ALWAYS_INLINE static inline long push_pairs(tersa_rb_encoder *e, VALUE container, bool hash, uint32_t depth) {
    if (!hash) {
        VALUE pairs = tersa_rb_map_pairs(container);
        if (NIL_P(pairs)) tersa_rb_enc_fail_value(e, depth, "uninitialized", container);
        long n = RARRAY_LEN(pairs);
        long at = tersa_rb_stack_grow_raw(e->stack, 2 * n);
        for (long i = 0; i < n; i++) {
            VALUE pair = RARRAY_AREF(pairs, i);
            e->stack->ptr[at + 2 * i] = RARRAY_AREF(pair, 0);
            e->stack->ptr[at + 2 * i + 1] = RARRAY_AREF(pair, 1);
        }
        return n;
    }
    long n = tersa_rb_hash_size(container);
    /* The iteration below fills every slot and cannot allocate. */
    long at = tersa_rb_stack_grow_raw(e->stack, 2 * n);
    if (!tersa_rb_hash_pairs(container, e->stack->ptr + at, n)) {
        collect_ctx c = {e->stack, at};
        collect_pairs(container, &c);
        if (TERSA_UNLIKELY(c.at != at + 2 * n)) {
            tersa_rb_enc_reset(e);
            rb_raise(eEncodeError, "hash modified during encoding");
        }
    }
    return n;
}

/* Open a Hash (or a Tersa::Map) at `depth`; false if it is empty (then it
 * is written whole). `lookup`: whether the shape lookup is tried and filled. */
TERSA_ALWAYS_INLINE static inline bool open_map(tersa_rb_encoder *e, VALUE container, bool hash, uint32_t depth,
                                                uint32_t hooks, bool lookup) {
    enc_frame *f = tersa_rb_enc_frame_open(e, depth, container);
    long self = e->stack->len;
    tersa_rb_stack_push(e->stack, container);
    long base = self + 1;
    long n = push_pairs(e, container, hash, depth);

    /* The keys, interleaved with the values, read in place as identities.
     * A top-level map opens in a lookup emptied for its buffer or frame, and
     * is most often the only map there (one record per message): it is neither
     * looked up nor stored, which costs nothing but a miss on a nested map
     * with the same key objects (the writer still finds its shape by bytes). */
    uint64_t h = 0;
    int32_t ent = -1;
    if (lookup) {
        h = tersa_shapes_hash((const tersa_ident *)(e->stack->ptr + base), 2, (size_t)n);
        ent = tersa_shapes_find(&e->shapes, h, (const tersa_ident *)(e->stack->ptr + base), 2, (size_t)n);
    }
    if (ent >= 0 && TERSA_UNLIKELY(rb_gc_count() != e->gc_count)) {
        /* A collection may have freed and reused addresses: start over. */
        tersa_rb_enc_drop_shapes(e);
        e->gc_count = rb_gc_count();
        ent = -1;
    }
    uint8_t kind = FRAME_MAP;
    enc_top_keys *top = NULL;
    if (!lookup && hash && n > 0 && n <= ENC_TOP_KEYS) {
        size_t gc = rb_gc_count();
        if (TERSA_UNLIKELY(gc != e->top_gc)) {
            tersa_rb_enc_drop_top(e);
            e->top_gc = gc;
        }
        const VALUE *keys = e->stack->ptr + base;
        h = tersa_shapes_hash((const tersa_ident *)keys, 2, (size_t)n);
        top = &e->top[(h >> 40) & (ENC_TOP_WAYS - 1)];
        if (top->n == (uint32_t)n && top->h == h) {
            long i = 0;
            while (i < n && top->keys[i] == keys[2 * i]) i++;
            if (i == n) {
                int r = 0;
                if (top->md && tersa_writer_template_point(e->w)) {
                    r = tersa_write_map_template(e->w, top->md, false);
                    if (TERSA_UNLIKELY(r < 0)) tersa_rb_enc_fail_writer(e, depth);
                }
                if (r == 0) {
                    tersa_mapdef *md = NULL;
                    CHECK_W(tersa_write_map_begin_record(e->w, top->kbuf, (size_t)n, false, &md));
                    if (md) {
                        tersa_mapdef_release(top->md);
                        top->md = md;
                    }
                }
                tersa_rb_enc_note_shape(e);
                return tersa_rb_enc_map_frame(e, f, FRAME_MAP, n, hooks, self, depth);
            }
        }
    }
    enc_shape_rec *rec = ent >= 0 ? &e->shape_recs[ent] : NULL;
    if (rec && rec->gen == e->gen) {
        CHECK_W(tersa_write_map_shape(e->w, rec->shape));
    } else if (rec && rec->koff != ENC_NO_KEYS) {
        /* Keys of an earlier buffer, trusted then: the same frozen objects. */
        CHECK_W(tersa_write_map_begin_utf8(e->w, e->shape_keys + rec->koff, (size_t)n));
        uint32_t shape = tersa_rb_enc_note_shape(e);
        if (shape != TERSA_NO_INDEX) {
            rec->gen = e->gen;
            rec->shape = shape;
        }
    } else {
        bool plain;
        if (textual_keys(e, base, n, &plain, depth)) {
            /* Keys are distinct and valid UTF-8 without a check only when they
             * are plain Strings and Symbols of an ordinary Hash: a
             * compare_by_identity Hash (st table), a String subclass's own
             * eql? or a Tersa::Map (whose keys differ as Tersa values, maybe not
             * once converted) can repeat a key. */
            bool trusted = plain && hash && !tersa_rb_hash_may_repeat_keys(container);
            tersa_mapdef *md = NULL;
            if (top && trusted) CHECK_W(tersa_write_map_begin_record(e->w, e->kbuf, (size_t)n, false, &md));
            else CHECK_W(trusted ? tersa_write_map_begin_utf8(e->w, e->kbuf, (size_t)n)
                                 : tersa_write_map_begin(e->w, e->kbuf, (size_t)n));
            uint32_t shape = tersa_rb_enc_note_shape(e);
            if (top && trusted) {
                const VALUE *keys = e->stack->ptr + base;
                for (long i = 0; i < n; i++) top->keys[i] = keys[2 * i];
                memcpy(top->kbuf, e->kbuf, (size_t)n * sizeof(tersa_key));
                top->h = h;
                top->n = (uint32_t)n;
                tersa_mapdef_release(top->md);
                top->md = md;
            }
            if (shape != TERSA_NO_INDEX && plain && lookup) {
                if (rec) {
                    /* Stored by an earlier buffer without its keys. */
                    rec->gen = e->gen;
                    rec->shape = shape;
                } else {
                    remember_shape(e, h, base, n, shape, trusted);
                }
            }
        } else {
            CHECK_W(tersa_write_generic_map_begin(e->w, (size_t)n));
            kind = FRAME_GENERIC;
        }
    }
    return tersa_rb_enc_map_frame(e, f, kind, n, hooks, self, depth);
}

bool tersa_rb_enc_open_map(tersa_rb_encoder *e, VALUE container, bool hash, uint32_t depth, uint32_t hooks) {
    return open_map(e, container, hash, depth, hooks, depth != 0);
}

bool tersa_rb_enc_open_nested_hash(tersa_rb_encoder *e, VALUE hash, uint32_t depth) {
    return open_map(e, hash, true, depth, 0, true);
}
