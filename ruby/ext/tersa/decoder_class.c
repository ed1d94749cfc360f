/*
 * decoder_class.c - Tersa::Decoder and Tersa.load: the C pull reader -> Ruby objects.
 *
 * Allocation discipline: a decode creates the objects of the value and
 * nothing else. Keys are frozen, interned Strings (or Symbols) from a bounded
 * cache that outlives calls, so repeated keys cost no object. Children wait on
 * a GC-visible value stack and their container is created once complete, with
 * its exact size (counts in the input are only claims). Open containers are
 * frames on the heap, not calls: nesting costs no machine stack.
 */
#include "common.h"

#include "decoder.h"
#include "hash_fast.h"
#include "internal.h"
#include "reader_runs.h"
#include "key_cost.h"
#include "known_types.h"

#include <limits.h>
#include <ruby/version.h>

VALUE cDecoder;
static ID id_symbolize_keys, id_freeze, id_max_depth, id_dictionary, id_dictionaries, id_join, id_floating;
static rb_ractor_local_key_t default_decoder_key;

/* ==========================================================================
 * State
 * ========================================================================== */

static void mark_handle(uintptr_t *h, void *arg) {
    (void)arg;
    rb_gc_mark_movable((VALUE)*h);
}

static void move_handle(uintptr_t *h, void *arg) {
    (void)arg;
    *h = (uintptr_t)rb_gc_location((VALUE)*h);
}

static void dec_mark(void *p) {
    tersa_rb_decoder *d = (tersa_rb_decoder *)p;
    rb_gc_mark_movable(d->stack_obj);
    rb_gc_mark_movable(d->keys_obj);
    rb_gc_mark_movable(d->dictionaries);
    tersa_keycache_each(&d->keycache, mark_handle, NULL);
    if (d->shapecache) tersa_shapecache_each(d->shapecache, mark_handle, NULL);
}

static void dec_compact(void *p) {
    tersa_rb_decoder *d = (tersa_rb_decoder *)p;
    d->stack_obj = rb_gc_location(d->stack_obj);
    d->keys_obj = rb_gc_location(d->keys_obj);
    d->dictionaries = rb_gc_location(d->dictionaries);
    tersa_keycache_each(&d->keycache, move_handle, NULL);
    if (d->shapecache) tersa_shapecache_each(d->shapecache, move_handle, NULL);
}

static void dec_free(void *p) {
    tersa_rb_decoder *d = (tersa_rb_decoder *)p;
    tersa_reader_free(d->r);
    tersa_feed_free(d->feed);
    xfree(d->frames);
    tersa_shapetab_free(&d->shapes);
    if (d->shapecache) {
        tersa_shapecache_clear(d->shapecache, NULL, NULL);
        xfree(d->shapecache);
    }
    tersa_slots_free(&d->frozen);
    tersa_slots_free(&d->long_strings);
    tersa_slots_free(&d->long_keys);
    xfree(d->dicts);
    xfree(d);
}

static size_t dec_memsize(const void *p) {
    const tersa_rb_decoder *d = (const tersa_rb_decoder *)p;
    return sizeof(*d) + d->frames_cap * sizeof(build_frame) + d->shapes.cap * sizeof(tersa_shape) +
           tersa_slots_memsize(&d->frozen) + tersa_slots_memsize(&d->long_strings) +
           tersa_slots_memsize(&d->long_keys) + d->dicts_cap * sizeof(tersa_dict *) +
           (d->feed ? tersa_feed_capacity(d->feed) : 0) + (d->shapecache ? sizeof(tersa_shapecache) : 0);
}

static const rb_data_type_t decoder_type = {
    .wrap_struct_name = "Tersa::Decoder",
    .function = {.dmark = dec_mark, .dfree = dec_free, .dsize = dec_memsize, .dcompact = dec_compact},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static VALUE dec_alloc(VALUE klass) {
    tersa_rb_decoder *d;
    VALUE self = TypedData_Make_Struct(klass, tersa_rb_decoder, &decoder_type, d);
    d->stack_obj = d->keys_obj = d->dictionaries = Qnil;
    d->max_depth = TERSA_DEFAULT_MAX_DEPTH;
    d->joined_at = SIZE_MAX;
    tersa_keycache_init(&d->keycache);
    d->r = tersa_reader_new(NULL);
    if (!d->r) rb_memerror();
    tersa_rb_stack *s;
    VALUE so = tersa_rb_stack_new(&s);
    RB_OBJ_WRITE(self, &d->stack_obj, so);
    d->stack = s;
    VALUE ko = tersa_rb_stack_new(&s);
    RB_OBJ_WRITE(self, &d->keys_obj, ko);
    d->keys = s;
    return self;
}

tersa_rb_decoder *tersa_rb_get_decoder(VALUE self) {
    return (tersa_rb_decoder *)rb_check_typeddata(self, &decoder_type);
}

#define get_decoder tersa_rb_get_decoder

void tersa_rb_dec_reset(tersa_rb_decoder *d) {
    d->stack->len = 0;
    d->input_lo = d->input_span = 0;
    d->keys->len = 0;
    d->busy = false;
    /* Shapes recorded so far pointed into `keys`; after an error a stream is over. */
    tersa_shapetab_clear(&d->shapes, NULL, NULL);
    d->stream_started = false;
}

#define reset tersa_rb_dec_reset

/* After an error: the call (or the whole stream) is over. */
void tersa_rb_dec_reset_after_error(VALUE self, tersa_rb_decoder *d) {
    (void)self;
    reset(d);
    tersa_rb_dec_drop_feed(d);
}

void tersa_rb_dec_drop_feed(tersa_rb_decoder *d) {
    if (d->feed) tersa_feed_reset(d->feed);
}

void tersa_rb_dec_fail(tersa_rb_decoder *d) {
    tersa_error err = *tersa_reader_error(d->r);
    reset(d);
    tersa_rb_raise_decode(&err);
}

#define fail_decode tersa_rb_dec_fail

/* ==========================================================================
 * Keys and strings
 * ========================================================================== */

static const char *key_bytes(uintptr_t h, uint32_t kind) {
    VALUE s = kind == KEY_SYMBOL ? rb_sym2str((VALUE)h) : (VALUE)h;
    return RSTRING_PTR(s);
}

/* A frozen key String (or Symbol), from the cache when seen before. */
static VALUE key_value(VALUE self, tersa_rb_decoder *d, const char *ptr, size_t len, bool symbol) {
    uint32_t kind = symbol ? KEY_SYMBOL : KEY_STRING;
    tersa_keyslot *slot = NULL;
    uint64_t h = 0;
    bool cached = tersa_keycache_admits(len);
    if (cached) {
        VALUE v = (VALUE)tersa_keycache_get(&d->keycache, ptr, len, kind, key_bytes, &slot, &h);
        if (v) return v;
    }
    /* Symbols made from data are dynamic (collectable), never immortal IDs. */
    VALUE v = kind == KEY_SYMBOL ? rb_str_intern(rb_enc_interned_str(ptr, (long)len, tersa_utf8))
                                 : rb_enc_interned_str(ptr, (long)len, tersa_utf8);
    if (cached) {
        tersa_keycache_put(slot, h, len, kind, (uintptr_t)v);
        RB_OBJ_WRITTEN(self, Qundef, v);
    }
    return v;
}

/* Strings of TERSA_LONG_STRING bytes or more that a reference can repeat
 * (SPEC 9) are made once per string-table index: Strings made from one share
 * the first one's bytes (copy-on-write) and keys are made once, so a small
 * input cannot demand a large heap or hash the same long bytes at every
 * shape. Shorter strings are cheaper copied. */

/* Set slot `slot` of a per-string-index cache (NoMemoryError if it cannot grow). */
static void index_cache_set(tersa_slots *slots, size_t slot, VALUE v) {
    if (!tersa_slots_set(slots, slot, (uintptr_t)v)) rb_memerror();
}

/* A long key by its string-table index, made once per call (stream). */
TERSA_NOINLINE static VALUE long_key_value(VALUE self, tersa_rb_decoder *d, const tersa_key *k, uint32_t index,
                                             bool symbol, tersa_rb_stack *stack) {
    size_t slot = 2 * (size_t)index + symbol;
    VALUE cached = (VALUE)tersa_slots_get(&d->long_keys, slot);
    if (cached) return cached;
    VALUE v = key_value(self, d, k->ptr, k->len, symbol);
    /* Shape keys live on d->keys already; keys of a once-used shape go with
     * their map, so those are kept here for the rest of the call. */
    if (stack != d->keys) tersa_rb_stack_push(d->keys, v);
    index_cache_set(&d->long_keys, slot, v);
    return v;
}

/* Building a Hash hashes its String keys in full, again for every Hash
 * (Ruby keeps no String hashes), and one reference byte can repeat a long
 * string as a key in map after map: a small input could take hours to
 * decode. So the key bytes hashed are counted against a budget of
 * HASH_BUDGET_PER_BYTE per input byte plus HASH_BUDGET_BASE (about 50 ms
 * of hashing). A key slot costs at least two input bytes (key and value),
 * so only keys over 512 bytes, repeated in many shapes or generic maps, can
 * reach it; JSON or MessagePack would have to repeat their bytes. */
#define HASH_BUDGET_PER_BYTE 256
#define HASH_BUDGET_BASE ((size_t)64 << 20)

void tersa_rb_dec_set_hash_budget(tersa_rb_decoder *d, size_t input_len) {
    size_t per = input_len > (SIZE_MAX - HASH_BUDGET_BASE) / HASH_BUDGET_PER_BYTE ? SIZE_MAX - HASH_BUDGET_BASE
                                                                                   : input_len * HASH_BUDGET_PER_BYTE;
    d->hash_budget = per + HASH_BUDGET_BASE;
}

TERSA_NORETURN(static void hash_budget_exceeded(tersa_rb_decoder *d, size_t at));
static void hash_budget_exceeded(tersa_rb_decoder *d, size_t at) {
    reset(d);
    tersa_rb_raise_decode_code("key_hashing_exceeded", at,
                              "map keys repeated by reference would take more hashing than the input allows");
}

static inline void charge_hashing(tersa_rb_decoder *d, size_t bytes, size_t at) {
    d->hashed += bytes;
    if (TERSA_UNLIKELY(d->hashed > d->hash_budget)) hash_budget_exceeded(d, at);
}

/* The bytes hashing shaped-map keys reads: Strings in full, Symbols by identity. */
static size_t text_keys_cost(const VALUE *keys, size_t n) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (RB_TYPE_P(keys[i], T_STRING)) total += (size_t)RSTRING_LEN(keys[i]);
    return total;
}

/* Push a map's key objects on `stack`; returns where they start. */
static size_t push_keys(VALUE self, tersa_rb_decoder *d, const tersa_item *it, tersa_rb_stack *stack) {
    size_t off = (size_t)stack->len;
    const uint32_t *indices = it->v.map.key_strings;
    for (size_t i = 0; i < it->v.map.count; i++) {
        const tersa_key *k = &it->v.map.keys[i];
        bool symbol = k->symbol || d->symbolize_keys;
        VALUE v = indices && k->len >= TERSA_LONG_STRING && indices[i] != TERSA_NO_INDEX
                      ? long_key_value(self, d, k, indices[i], symbol, stack)
                      : key_value(self, d, k->ptr, k->len, symbol);
        tersa_rb_stack_push(stack, v);
    }
    return off;
}

static tersa_shapecache *shape_cache(tersa_rb_decoder *d) {
    if (TERSA_UNLIKELY(!d->shapecache)) d->shapecache = ZALLOC(tersa_shapecache);
    return d->shapecache;
}

/* A shape's first map in this call (stream): its key objects taken from the
 * core's shape cache when an earlier call met the same keys, else made and
 * stored there; their offset on the keys stack. Out of line: the build loop
 * inlines shape_keys, and every container would pay for this code. */
TERSA_NOINLINE static size_t new_shape_keys(VALUE self, tersa_rb_decoder *d, const tersa_item *it) {
    uint32_t shape = it->v.map.shape;
    size_t n = it->v.map.count, off;
    uint32_t kind = d->symbolize_keys ? SHAPES_SYMBOLIZED : SHAPES_DECODED;
    tersa_shapequery q;
    tersa_shapeent *ent = tersa_shapecache_find(shape_cache(d), it, kind, &q);
    bool hit = ent != NULL;
    VALUE t = 0;
    if (hit) {
        /* Room first: growing the stack can run the GC, which may move the
         * entry's objects; nothing allocates between these reads and stores. */
        if (TERSA_UNLIKELY(d->keys->cap - d->keys->len < (long)n + 1)) tersa_rb_stack_reserve(d->keys, (long)n + 1);
        off = (size_t)d->keys->len;
        VALUE *dst = d->keys->ptr + off;
        for (size_t i = 0; i < n; i++) dst[i] = (VALUE)ent->keys[i];
        t = (VALUE)ent->tmpl;
        dst[n] = t; /* alive for this call, whatever the cache evicts */
        d->keys->len += (long)n + (t != 0);
    } else {
        off = push_keys(self, d, it, d->keys);
        if (q.hash) {
            const VALUE *keys = d->keys->ptr + off;
            /* (caching is optional: out of memory, the shape is not cached) */
            ent = tersa_shapecache_add(d->shapecache, &q, kind, 0, (const uintptr_t *)keys, NULL, NULL);
            if (ent)
                for (size_t i = 0; i < n; i++) RB_OBJ_WRITTEN(self, Qundef, keys[i]);
        }
    }
    tersa_shape *sh = tersa_shapetab_set(&d->shapes, shape);
    if (!sh) rb_memerror();
    sh->off = off;
    sh->n = (uint32_t)n;
    sh->tmpl = (uintptr_t)t;
    /* (a shape met in enough calls takes its template at its first map in this one: objcache.h) */
    sh->flags = hit && tersa_shapecache_recurs(ent) ? SHAPE_SEEN : 0;
    sh->cent = ent;
    sh->cborn = ent ? ent->born : 0;
    return off;
}

/* The offset on the keys stack of a shaped map's key objects; a shape's keys
 * are made or found once per call (once per stream) and then shared by its maps. */
static inline size_t shape_keys(VALUE self, tersa_rb_decoder *d, const tersa_item *it) {
    if (!(it->flags & TERSA_ITEM_NEW_SHAPE)) {
        const tersa_shape *sh = tersa_shapetab_get(&d->shapes, it->v.map.shape);
        if (sh) return sh->off;
    }
    return new_shape_keys(self, d, it);
}

/* Ruby 3.1 (without variable-width allocation) holds a String of up to 23
 * bytes in a 24-byte array inside the object. */
#if RUBY_API_VERSION_CODE >= 30100 && RUBY_API_VERSION_CODE < 30200 && !USE_RVARGC
#define EMBED_COPY 24
_Static_assert(sizeof(((struct RString *)0)->as.embed.ary) == EMBED_COPY, "embedded String layout");
#endif

static inline VALUE new_string(const tersa_rb_decoder *d, const tersa_item *it) {
    const char *p = it->v.str.ptr;
    long len = (long)it->v.str.len;
    VALUE s;
#ifdef EMBED_COPY
    /* A short string inside the input, with 24 bytes readable from its start,
     * is copied as three words: memcpy's call and its branches on the length
     * cost more than the String's other work (rows of a table are mostly
     * short strings of varied lengths). */
    if (len < EMBED_COPY && (uintptr_t)p - d->input_lo <= d->input_span && d->input_lo) {
        s = rb_str_new(NULL, len);
        char *dst = RSTRING(s)->as.embed.ary;
        uint64_t w[3];
        memcpy(w, p, sizeof(w));
        memcpy(dst, w, sizeof(w));
        dst[len] = '\0';
    } else
#endif
        s = rb_str_new(p, len);
    /* rb_utf8_str_new goes through rb_enc_associate_index's checks; the
     * index of UTF-8 fits the flags, and the reader already knows the coderange. */
    RB_ENCODING_SET_INLINED(s, tersa_utf8_index);
    ENC_CODERANGE_SET(s, (it->flags & TERSA_ITEM_ASCII) ? ENC_CODERANGE_7BIT : ENC_CODERANGE_VALID);
    return s;
}

TERSA_NOINLINE static VALUE long_string_value(tersa_rb_decoder *d, const tersa_item *it) {
    uint32_t i = it->v.str.index;
    VALUE first = (VALUE)tersa_slots_get(&d->long_strings, i);
    if (first) return rb_str_dup(first);
    VALUE s = new_string(d, it);
    /* Values handed out one by one (#each) may be changed before a later
     * frame repeats the string: then the copies come from a frozen String
     * sharing s's bytes (the root a first copy of s would make anyway). */
    VALUE keep = d->stream_started ? rb_str_new_frozen(s) : s;
    tersa_rb_stack_push(d->keys, keep); /* keeps it alive for this call (stream) */
    index_cache_set(&d->long_strings, i, keep);
    return s;
}

static inline VALUE string_value(tersa_rb_decoder *d, const tersa_item *it) {
    if (TERSA_UNLIKELY(d->freeze)) {
        uint32_t i = it->v.str.index;
        if (i != TERSA_NO_INDEX) {
            VALUE cached = (VALUE)tersa_slots_get(&d->frozen, i);
            if (cached) return cached;
        }
        VALUE v = rb_enc_interned_str(it->v.str.ptr, (long)it->v.str.len, tersa_utf8);
        if (i != TERSA_NO_INDEX) {
            tersa_rb_stack_push(d->keys, v); /* keeps it alive for this call */
            index_cache_set(&d->frozen, i, v);
        }
        return v;
    }
    if (TERSA_UNLIKELY(it->v.str.len >= TERSA_LONG_STRING) && it->v.str.index != TERSA_NO_INDEX)
        return long_string_value(d, it);
    return new_string(d, it);
}

/* ==========================================================================
 * Building values
 * ========================================================================== */


typedef struct build_ctx {
    VALUE self;
    tersa_rb_decoder *d;
} build_ctx;

/* A template Hash for these keys, or Qundef (then the caller builds the
 * Hash key by key). */
static VALUE make_template(tersa_rb_decoder *d, const VALUE *keys, long n, size_t at) {
    charge_hashing(d, text_keys_cost(keys, (size_t)n), at);
    VALUE t = tersa_rb_hash_template(keys, n);
    return tersa_rb_template_matches(t, keys, n) ? t : Qundef;
}

/* The template of shape `sh` for a map with its keys, or Qundef. Made by
 * the core's rule (objcache.h: at the shape's second map in this call, or at
 * its first in a call the shape cache counts as recurring), kept alive for
 * the call on the keys stack and by the shape cache across calls. */
static VALUE shape_template(VALUE self, tersa_rb_decoder *d, tersa_shape *sh, const VALUE *keys, long n, size_t at) {
    if (sh->tmpl) return (VALUE)sh->tmpl;
    if (sh->flags & TERSA_SHAPE_NO_TEMPLATE) return Qundef;
    if (!(sh->flags & SHAPE_SEEN)) {
        sh->flags |= SHAPE_SEEN;
        return Qundef;
    }
    VALUE t = make_template(d, keys, n, at);
    if (t == Qundef) {
        sh->flags |= TERSA_SHAPE_NO_TEMPLATE;
        return Qundef;
    }
    tersa_rb_stack_push(d->keys, t);
    sh->tmpl = (uintptr_t)t;
    tersa_shapeent *e = sh->cent;
    if (e && e->born == sh->cborn && !e->tmpl) {
        e->tmpl = (uintptr_t)t;
        RB_OBJ_WRITTEN(self, Qundef, t);
    }
    return t;
}

VALUE tersa_rb_template_for(VALUE self, tersa_rb_decoder *d, const VALUE *keys, long n, size_t at) {
    if (n <= 0 || n > TERSA_SHAPECACHE_MAX_KEYS) return Qundef;
    tersa_key k[TERSA_SHAPECACHE_MAX_KEYS];
    for (long i = 0; i < n; i++) {
        VALUE s = keys[i];
        bool symbol = RB_SYMBOL_P(s);
        if (symbol) s = rb_sym2str(s);
        else if (!RB_TYPE_P(s, T_STRING)) return Qundef;
        k[i] = (tersa_key){RSTRING_PTR(s), (size_t)RSTRING_LEN(s), symbol};
    }
    size_t total = 0;
    uint64_t h = tersa_shapecache_hash(k, (size_t)n, &total);
    if (!h) return Qundef;
    tersa_shapeent *e = tersa_shapecache_get(shape_cache(d), h, k, (size_t)n, SHAPES_COPIED);
    if (!e) {
        if (tersa_shapecache_put(d->shapecache, h, k, (size_t)n, total, SHAPES_COPIED, 0, (const uintptr_t *)keys, NULL,
                                 NULL))
            for (long i = 0; i < n; i++) RB_OBJ_WRITTEN(self, Qundef, keys[i]);
        return Qundef;
    }
    /* The same bytes may be other objects (a String and its copy): a template serves its own keys only. */
    for (long i = 0; i < n; i++)
        if ((VALUE)e->keys[i] != keys[i]) return Qundef;
    if (e->tmpl) return (VALUE)e->tmpl;
    uint64_t born = e->born;
    VALUE t = make_template(d, keys, n, at);
    /* (making it can run the GC, not the cache: e is still the entry) */
    if (t != Qundef && e->born == born) {
        e->tmpl = (uintptr_t)t;
        RB_OBJ_WRITTEN(self, Qundef, t);
    }
    return t;
}

static VALUE build_ext(build_ctx *c, const tersa_item *it) {
    if (it->v.ext.type > TERSA_EXT_APP_MAX) {
        /* Loading date or bigdecimal and building their values runs Ruby code. */
        int state = 0;
        VALUE v = rb_protect(tersa_rb_well_known_value, (VALUE)it, &state);
        if (state) {
            reset(c->d);
            rb_jump_tag(state);
        }
        return v;
    }
    VALUE data = rb_enc_str_new((const char *)it->v.ext.ptr, (long)it->v.ext.len, tersa_binary);
    if (c->d->freeze) rb_obj_freeze(data);
    VALUE unpacker = tersa_rb_ext_unpacker(it->v.ext.type);
    if (NIL_P(unpacker)) return rb_struct_new(cExt, UINT2NUM(it->v.ext.type), data);
    tersa_rb_call_args a = {unpacker, data};
    int state = 0;
    VALUE v = rb_protect(tersa_rb_call_proc, (VALUE)&a, &state);
    if (state) {
        reset(c->d);
        rb_jump_tag(state);
    }
    return v;
}

static VALUE build_time(const tersa_item *it) {
    const tersa_timestamp *t = &it->v.time;
    if (t->zone == TERSA_ZONE_FLOATING)
        return rb_struct_new(cTimestamp, LL2NUM(t->seconds), UINT2NUM(t->nanos), ID2SYM(id_floating), Qnil);
    struct timespec ts;
    ts.tv_sec = (time_t)t->seconds;
    ts.tv_nsec = (long)t->nanos;
    return rb_time_timespec_new(&ts, t->zone == TERSA_ZONE_UTC ? INT_MAX - 1 : t->offset * 60);
}

/* A scalar item as its Ruby object. */
static VALUE build_scalar(build_ctx *c, const tersa_item *it) {
    tersa_rb_decoder *d = c->d;
    switch (it->type) {
    case TERSA_NULL:
        return Qnil;
    case TERSA_TRUE:
        return Qtrue;
    case TERSA_FALSE:
        return Qfalse;
    case TERSA_UINT:
        return ULL2NUM(it->v.u);
    case TERSA_BIGINT:
        return rb_integer_unpack(it->v.big.mag, it->v.big.len, 1, 0,
                                 INTEGER_PACK_LITTLE_ENDIAN | (it->v.big.negative ? INTEGER_PACK_NEGATIVE : 0));
    case TERSA_SYMBOL:
        return rb_str_intern(rb_enc_interned_str(it->v.str.ptr, (long)it->v.str.len, tersa_utf8));
    case TERSA_BINARY: {
        VALUE s = rb_enc_str_new((const char *)it->v.bin.ptr, (long)it->v.bin.len, tersa_binary);
        if (d->freeze) rb_obj_freeze(s);
        return s;
    }
    case TERSA_EXT: {
        VALUE v = build_ext(c, it);
        if (d->freeze) rb_obj_freeze(v);
        return v;
    }
    case TERSA_TIME: {
        VALUE v = build_time(it);
        if (d->freeze) rb_obj_freeze(v);
        return v;
    }
    default:
        rb_raise(eError, "unknown item type");
    }
}

/* Open the container item `it` as frame `depth` (growing the frames). Its
 * elements follow in the input; a map's keys are made now. */
static void open_container(build_ctx *c, const tersa_item *it, size_t depth) {
    tersa_rb_decoder *d = c->d;
    if (TERSA_UNLIKELY(depth == d->frames_cap)) {
        size_t cap = d->frames_cap ? d->frames_cap * 2 : 32;
        TERSA_RB_REALLOC_N(d->frames, build_frame, cap);
        d->frames_cap = cap;
    }
    build_frame *f = &d->frames[depth];
    f->kind = (uint8_t)it->type;
    f->offset = it->offset;
    f->base = d->stack->len;
    f->once = false;
    if (it->type == TERSA_ARRAY) {
        f->left = it->v.array.count;
    } else if (it->type == TERSA_MAP) {
        f->left = it->v.map.count;
        /* A shape the full table did not take is used once: its keys wait on
         * the value stack, under the values, and go with them. */
        f->once = it->v.map.shape == TERSA_NO_INDEX;
        f->shape = it->v.map.shape;
        f->koff = f->once ? push_keys(c->self, d, it, d->stack) : shape_keys(c->self, d, it);
    } else {
        f->left = 2 * it->v.map.count;
    }
    f->values = d->stack->len;
}

static VALUE close_generic_map(build_ctx *c, const build_frame *f);

/* Arrays that fit in the object (pairs of coordinates, short vectors) are
 * filled in place: rb_ary_new_from_values takes its general path through the
 * transient heap's checks and a write barrier per element (about 70
 * instructions for a pair, most of canada's arrays); here an array holding
 * objects pays one bulk barrier. Used only if the probe at load finds this
 * Ruby's embedded layout (small_arrays_checked). */
static bool small_arrays_in_place;

static inline bool small_array_fits(long n) { return small_arrays_in_place && n <= RARRAY_EMBED_LEN_MAX; }

static VALUE new_small_array(const VALUE *p, long n) {
    VALUE a = rb_ary_new_capa(n);
    VALUE *dst = (VALUE *)RARRAY(a)->as.ary;
    VALUE objects = 0;
    for (long i = 0; i < n; i++) {
        dst[i] = p[i];
        objects |= !RB_SPECIAL_CONST_P(p[i]); /* Integers in a Fixnum, flonums, nil, true, false need no barrier */
    }
    RBASIC(a)->flags = (RBASIC(a)->flags & ~(VALUE)RARRAY_EMBED_LEN_MASK) | ((VALUE)n << RARRAY_EMBED_LEN_SHIFT);
    /* One bulk write barrier for the elements (hash_fast.h). */
    if (objects) rb_gc_writebarrier_remember(a);
    return a;
}

/* Arrays of 0 to RARRAY_EMBED_LEN_MAX elements come out of rb_ary_new_capa
 * embedded, and filled in place read back as rb_ary_new_from_values' do. */
static bool small_arrays_checked(void) {
    VALUE items[RARRAY_EMBED_LEN_MAX];
    for (long i = 0; i < RARRAY_EMBED_LEN_MAX; i++) items[i] = rb_str_new_cstr("tersa-probe");
    for (long n = 0; n <= RARRAY_EMBED_LEN_MAX; n++) {
        VALUE a = rb_ary_new_capa(n);
        if (!RB_FL_ANY_RAW(a, RARRAY_EMBED_FLAG) || RARRAY_LEN(a) != 0) return false;
        small_arrays_in_place = true;
        VALUE b = new_small_array(items, n);
        small_arrays_in_place = false;
        if (!RB_FL_ANY_RAW(b, RARRAY_EMBED_FLAG) || RARRAY_LEN(b) != n || !rb_equal(b, rb_ary_new_from_values(n, items)))
            return false;
        for (long i = 0; i < n; i++)
            if (rb_ary_entry(b, i) != items[i] || RARRAY_CONST_PTR(b)[i] != items[i]) return false;
        rb_ary_push(b, Qnil); /* it grows out of the object like any Array */
        if (RARRAY_LEN(b) != n + 1 || rb_ary_entry(b, n) != Qnil) return false;
        RB_GC_GUARD(a);
    }
    RB_GC_GUARD(items[0]);
    return true;
}

/* The container of frame `f`, whose elements are all on the value stack; pops them. */
static VALUE close_container(build_ctx *c, const build_frame *f) {
    tersa_rb_decoder *d = c->d;
    long n = d->stack->len - f->values;
    VALUE v;
    if (f->kind == TERSA_ARRAY) {
        v = small_array_fits(n) ? new_small_array(d->stack->ptr + f->values, n)
                                : rb_ary_new_from_values(n, d->stack->ptr + f->values);
    } else if (f->kind == TERSA_MAP) {
        /* Keys and values are read here: building the elements may have moved the stacks. */
        const VALUE *keys = (f->once ? d->stack : d->keys)->ptr + f->koff, *values = d->stack->ptr + f->values;
        v = Qundef;
        if (n && tersa_rb_hash_fast && !f->once) {
            /* (the entry is this frame's unless a child redefined the index: its keys are elsewhere) */
            tersa_shape *sh = tersa_shapetab_get(&d->shapes, f->shape);
            VALUE t = sh && sh->off == f->koff ? shape_template(c->self, d, sh, keys, n, f->offset) : Qundef;
            if (t != Qundef) v = tersa_rb_hash_from_template(t, values, n);
        }
        if (v == Qundef) {
            charge_hashing(d, text_keys_cost(keys, (size_t)n), f->offset);
            v = tersa_rb_hash_build(keys, values, n);
        }
        /* symbolize_keys can make two keys one ("a" and :a): the option asked
         * for it, and no Tersa::Map could hold two equal Symbols. */
        if (TERSA_UNLIKELY(d->symbolize_keys) && (long)RHASH_SIZE(v) != n) {
            tersa_error err = {TERSA_ERR_DUPLICATE_KEY, f->offset, "keys that symbolize_keys makes equal"};
            reset(d);
            tersa_rb_raise_decode(&err);
        }
    } else {
        return close_generic_map(c, f);
    }
    d->stack->len = f->base;
    if (d->freeze) rb_obj_freeze(v);
    return v;
}

/* A generic map: a Hash, unless its keys are distinct Tersa values that
 * Ruby's Hash would merge ("a" and "a".b, 0.0 and -0.0, two Times of one
 * instant in different zones, [0.0] and [-0.0]) or keys nested so deep that
 * Ruby would hash them by deep recursion: then a Tersa::Map, which compares
 * keys by their Tersa encoding. */
static VALUE close_generic_map(build_ctx *c, const build_frame *f) {
    tersa_rb_decoder *d = c->d;
    long n = (d->stack->len - f->values) / 2;
    uint32_t depth;
    charge_hashing(d, tersa_rb_keys_cost(d->stack, f->values, n, 2, &depth), f->offset);
    VALUE v = Qundef;
    if (depth <= TERSA_RB_HASHABLE_DEPTH) {
        VALUE hash = rb_hash_new();
        if (n) rb_hash_bulk_insert(2 * n, d->stack->ptr + f->values, hash);
        if ((long)RHASH_SIZE(hash) == n) v = hash;
    }
    /* The pairs are read again: Ruby's #hash methods ran, but nothing pushed. */
    if (v == Qundef) v = tersa_rb_map_new(d->stack->ptr + f->values, n);
    d->stack->len = f->base;
    if (d->freeze) rb_obj_freeze(v);
    return v;
}

/* The array of frame `f` has just opened with a number, boolean or null
 * (TERSA_ITEM_SCALARS): its leading scalars come from the reader in runs (one
 * call for many elements). True if that completed the array. */
static bool read_scalar_run(build_ctx *c, build_frame *f) {
    tersa_rb_decoder *d = c->d;
    enum { RUN = 32 };
    tersa_item items[RUN];
    size_t k;
    do {
        if (TERSA_UNLIKELY(!tersa_read_scalars(d->r, items, RUN, &k))) fail_decode(d);
        tersa_rb_stack *s = d->stack;
        if (TERSA_UNLIKELY(s->cap - s->len < (long)k)) tersa_rb_stack_reserve(s, (long)k);
        /* Each value is on the stack before the next conversion can allocate. */
        for (size_t i = 0; i < k; i++) {
            const tersa_item *it = &items[i];
            VALUE v = it->type == TERSA_FLOAT ? tersa_rb_float_new(it->v.f)
                      : it->type == TERSA_INT ? LL2NUM(it->v.i)
                                              : build_scalar(c, it);
            s->ptr[s->len++] = v;
        }
        f->left -= k;
    } while (k == RUN && f->left);
    return f->left == 0;
}

/* The same for an array that opened with a string (TERSA_ITEM_STRINGS: rows
 * of a table, lists of tags), whose runs take strings too. Out of line, so
 * that the runs of numbers above compile as before. */
TERSA_NOINLINE static bool read_string_run(build_ctx *c, build_frame *f) {
    tersa_rb_decoder *d = c->d;
    enum { RUN = 32 };
    tersa_item items[RUN];
    size_t k;
    do {
        if (TERSA_UNLIKELY(!tersa_read_leaves(d->r, items, RUN, &k))) fail_decode(d);
        tersa_rb_stack *s = d->stack;
        if (TERSA_UNLIKELY(s->cap - s->len < (long)k)) tersa_rb_stack_reserve(s, (long)k);
        for (size_t i = 0; i < k; i++) {
            const tersa_item *it = &items[i];
            VALUE v = it->type == TERSA_STRING  ? string_value(d, it)
                      : it->type == TERSA_FLOAT ? tersa_rb_float_new(it->v.f)
                      : it->type == TERSA_INT   ? LL2NUM(it->v.i)
                                                : build_scalar(c, it);
            s->ptr[s->len++] = v;
        }
        f->left -= k;
    } while (k == RUN && f->left);
    return f->left == 0;
}

/* The next value in the input. Containers do not recurse: each open one is a
 * frame on the decoder's heap and its elements wait on the value stack, so
 * any depth the reader allows costs no machine stack. */
static VALUE build(build_ctx *c) {
    tersa_rb_decoder *d = c->d;
    size_t depth = 0; /* open containers */
    for (;;) {
        tersa_item it;
        VALUE v;
        if (TERSA_UNLIKELY(!tersa_read(d->r, &it))) fail_decode(d);
        switch (it.type) {
        case TERSA_STRING:
            v = string_value(d, &it);
            break;
        case TERSA_INT:
            v = LL2NUM(it.v.i);
            break;
        case TERSA_FLOAT:
            v = tersa_rb_float_new(it.v.f);
            break;
        case TERSA_MAP:
        case TERSA_ARRAY:
        case TERSA_GENERIC_MAP:
            open_container(c, &it, depth);
            if (d->frames[depth].left && (it.flags & TERSA_ITEM_SCALARS    ? !read_scalar_run(c, &d->frames[depth])
                                          : it.flags & TERSA_ITEM_STRINGS ? !read_string_run(c, &d->frames[depth])
                                                                          : true)) {
                depth++;
                continue;
            }
            v = close_container(c, &d->frames[depth]);
            break;
        default:
            v = build_scalar(c, &it);
            break;
        }
        /* v is complete: it joins its container, which may be complete in turn. */
        for (;;) {
            if (depth == 0) return v;
            build_frame *f = &d->frames[depth - 1];
            tersa_rb_stack_push(d->stack, v);
            if (--f->left) break;
            v = close_container(c, f);
            depth--;
        }
    }
}

/* ==========================================================================
 * Entry points
 * ========================================================================== */

VALUE tersa_rb_dec_build(VALUE self, tersa_rb_decoder *d) {
    build_ctx c = {self, d};
    return build(&c);
}

const tersa_dict *const *tersa_rb_dec_dicts(tersa_rb_decoder *d, size_t *n) {
    size_t nd = NIL_P(d->dictionaries) ? 0 : (size_t)RARRAY_LEN(d->dictionaries);
    if (nd > d->dicts_cap) {
        TERSA_RB_REALLOC_N(d->dicts, const tersa_dict *, nd);
        d->dicts_cap = nd;
    }
    /* The Array is frozen and marked and dictionaries never change, so the
     * pointers hold until the option changes, which ends any stream. */
    for (size_t i = 0; i < nd; i++) d->dicts[i] = tersa_rb_dict(RARRAY_AREF(d->dictionaries, (long)i));
    *n = nd;
    return d->dicts;
}

void tersa_rb_dec_drop_index_caches(tersa_rb_decoder *d) {
    tersa_shapetab_clear(&d->shapes, NULL, NULL);
    /* Only these caches kept what `keys` holds alive. */
    d->keys->len = 0;
    tersa_slots_clear(&d->frozen, NULL, NULL);
    tersa_slots_clear(&d->long_strings, NULL, NULL);
    tersa_slots_clear(&d->long_keys, NULL, NULL);
}

void tersa_rb_dec_new_generation(tersa_rb_decoder *d) {
    tersa_rb_dec_drop_index_caches(d);
    d->hashed = 0;
}

VALUE tersa_rb_dec_start_buffer(tersa_rb_decoder *d, VALUE str, uint32_t flags) {
    StringValue(str);
    /* Unpackers run Ruby code, which could modify the input under the reader:
     * then decode a frozen view (no Ruby code runs otherwise). */
    VALUE input = OBJ_FROZEN(str) || !tersa_rb_has_unpackers() ? str : rb_str_new_frozen(str);
    size_t nd;
    const tersa_dict *const *dicts = tersa_rb_dec_dicts(d, &nd);
    d->busy = true;
    d->stack->len = 0;
    tersa_rb_dec_new_generation(d);
    tersa_rb_dec_set_hash_budget(d, (size_t)RSTRING_LEN(input));
    tersa_reader_set_max_depth(d->r, d->max_depth);
    if (!tersa_reader_start(d->r, RSTRING_PTR(input), (size_t)RSTRING_LEN(input), dicts, nd, flags)) fail_decode(d);
    if (RSTRING_LEN(input) >= 24) {
        d->input_lo = (uintptr_t)RSTRING_PTR(input);
        d->input_span = (uintptr_t)RSTRING_LEN(input) - 24;
    }
    return input;
}

static VALUE decode_buffer(VALUE self, tersa_rb_decoder *d, VALUE str) {
    VALUE input = tersa_rb_dec_start_buffer(d, str, 0);
    build_ctx c = {self, d};
    VALUE v = build(&c);
    if (!tersa_reader_finish(d->r)) fail_decode(d);
    reset(d);
    RB_GC_GUARD(input);
    return v;
}

/* Options are checked in full before any is applied: a bad one changes
 * nothing. `join:` only where a stream is read. */
static void apply_options(VALUE self, tersa_rb_decoder *d, VALUE opts, bool streams) {
    if (NIL_P(opts)) return;
    /* One spelling per direction in every language: encoding takes one
     * `dictionary:`, decoding `dictionaries:`. */
    if (rb_hash_lookup2(opts, ID2SYM(id_dictionary), Qundef) != Qundef)
        rb_raise(rb_eArgError, "decoding takes dictionaries: (a Tersa::Dictionary or an Array of them), not dictionary:");
    ID ids[5] = {id_symbolize_keys, id_freeze, id_max_depth, id_dictionaries, id_join};
    VALUE vals[5] = {Qundef, Qundef, Qundef, Qundef, Qundef};
    rb_get_kwargs(opts, ids, 0, streams ? 5 : 4, vals);
    long depth = -1;
    if (vals[2] != Qundef) {
        depth = NUM2LONG(vals[2]);
        if (depth < 1 || depth > 100000) rb_raise(rb_eArgError, "max_depth must be 1..100000");
    }
    VALUE list = Qundef;
    if (vals[3] != Qundef) list = NIL_P(vals[3]) ? Qnil : rb_ary_dup(rb_Array(vals[3]));
    if (list != Qundef && !NIL_P(list)) {
        for (long i = 0; i < RARRAY_LEN(list); i++) tersa_rb_dict(RARRAY_AREF(list, i));
        rb_obj_freeze(list); /* our own copy: the caller's Array stays as it was */
    }
    if (vals[0] != Qundef) d->symbolize_keys = RTEST(vals[0]);
    if (vals[1] != Qundef) d->freeze = RTEST(vals[1]);
    if (depth > 0) d->max_depth = (uint32_t)depth;
    if (list != Qundef) RB_OBJ_WRITE(self, &d->dictionaries, list);
    if (vals[4] != Qundef) d->join = RTEST(vals[4]);
}

void tersa_rb_dec_raise_busy(void) {
    rb_raise(eError, "decoder is in use (re-entered from an unpacker, or shared between threads?)");
}

/* call-seq: Tersa::Decoder.new(symbolize_keys: false, freeze: false, max_depth: 1000, dictionaries: nil, join: false)
 * Called again on a decoder, it takes the new options and forgets any stream. */
static VALUE dec_initialize(int argc, VALUE *argv, VALUE self) {
    VALUE opts;
    rb_scan_args(argc, argv, ":", &opts);
    tersa_rb_decoder *d = get_decoder(self);
    if (d->busy) tersa_rb_dec_raise_busy();
    apply_options(self, d, opts, true);
    reset(d);
    tersa_rb_dec_drop_feed(d);
    d->joined_at = SIZE_MAX;
    return self;
}

typedef struct decode_call {
    VALUE self;
    tersa_rb_decoder *d;
    VALUE arg;
    tersa_rb_dec_body body;
    VALUE opts;
} decode_call;

static VALUE decode_call_body(VALUE p) {
    decode_call *c = (decode_call *)p;
    apply_options(c->self, c->d, c->opts, c->body != decode_buffer);
    return c->body(c->self, c->d, c->arg);
}

VALUE tersa_rb_dec_run(VALUE self, tersa_rb_decoder *d, VALUE arg, tersa_rb_dec_body body, VALUE opts) {
    decode_call c = {self, d, arg, body, opts};
    int state = 0;
    VALUE v = rb_protect(decode_call_body, (VALUE)&c, &state);
    if (state) {
        tersa_rb_dec_reset_after_error(self, d);
        rb_jump_tag(state);
    }
    return v;
}

/* call-seq: decoder.decode(string) -> object */
static VALUE dec_decode(VALUE self, VALUE str) {
    tersa_rb_decoder *d = get_decoder(self);
    if (d->busy) tersa_rb_dec_raise_busy();
    if (d->stream_started) rb_raise(eError, "decoder is reading a stream (call #reset first)");
    return tersa_rb_dec_run(self, d, str, decode_buffer, Qnil);
}

VALUE tersa_rb_default_decoder(void) {
    VALUE dec;
    if (!rb_ractor_local_storage_value_lookup(default_decoder_key, &dec) || NIL_P(dec)) {
        dec = dec_alloc(cDecoder);
        rb_ractor_local_storage_value_set(default_decoder_key, dec);
    }
    if (get_decoder(dec)->busy) dec = dec_alloc(cDecoder);
    return dec;
}

typedef struct load_call {
    VALUE self;
    tersa_rb_decoder *d;
    VALUE str, opts;
    tersa_rb_dec_body body;
} load_call;

static VALUE load_call_body(VALUE p) {
    load_call *c = (load_call *)p;
    return tersa_rb_dec_run(c->self, c->d, c->str, c->body, c->opts);
}

static VALUE load_with(int argc, VALUE *argv, bool stream) {
    VALUE str, opts;
    rb_scan_args(argc, argv, "1:", &str, &opts);
    VALUE self = tersa_rb_default_decoder();
    tersa_rb_decoder *d = get_decoder(self);
    load_call c = {self, d, str, opts, stream ? tersa_rb_dec_stream_buffer : decode_buffer};
    if (NIL_P(opts)) return load_call_body((VALUE)&c);
    /* Options apply to this call only; restore them whatever happens. */
    bool sym = d->symbolize_keys, frz = d->freeze, join = d->join;
    uint32_t depth = d->max_depth;
    VALUE dicts = d->dictionaries;
    int state = 0;
    VALUE v = rb_protect(load_call_body, (VALUE)&c, &state);
    d->symbolize_keys = sym;
    d->freeze = frz;
    d->join = join;
    d->max_depth = depth;
    RB_OBJ_WRITE(self, &d->dictionaries, dicts);
    if (state) rb_jump_tag(state);
    return v;
}

/*
 * call-seq: Tersa.load(string, symbolize_keys: false, freeze: false, max_depth: 1000, dictionary: nil) -> object
 */
static VALUE tersa_s_load(int argc, VALUE *argv, VALUE mod) { return load_with(argc, argv, false); }

/*
 * call-seq: Tersa.load_stream(string, join: false, **options) -> Array
 * Every value of a complete stream buffer (as written by Tersa::Encoder#<<),
 * or with join: true of the frames of a stream from a frame boundary on.
 */
static VALUE tersa_s_load_stream(int argc, VALUE *argv, VALUE mod) { return load_with(argc, argv, true); }

void tersa_rb_init_decoder(void) {
    id_symbolize_keys = rb_intern("symbolize_keys");
    id_freeze = rb_intern("freeze");
    id_max_depth = rb_intern("max_depth");
    id_dictionary = rb_intern("dictionary");
    id_dictionaries = rb_intern("dictionaries");
    id_join = rb_intern("join");
    id_floating = rb_intern("floating");
    default_decoder_key = rb_ractor_local_storage_value_newkey();
    small_arrays_in_place = small_arrays_checked();

    cDecoder = rb_define_class_under(mTersa, "Decoder", rb_cObject);
    rb_define_alloc_func(cDecoder, dec_alloc);
    rb_define_method(cDecoder, "initialize", dec_initialize, -1);
    rb_define_method(cDecoder, "decode", dec_decode, 1);
    rb_define_module_function(mTersa, "load", tersa_s_load, -1);
    rb_define_module_function(mTersa, "load_stream", tersa_s_load_stream, -1);
    tersa_rb_init_decoder_stream();
}
