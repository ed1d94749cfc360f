/*
 * shape_lookup.c - the identity -> shape lookup's growth, bounds and
 * clearing (the lookups themselves are inline in shape_lookup.h).
 */
#include "shape_lookup.h"

#include <string.h>

#include "internal.h"

/* The index of a lookup without entries: one slot, of no generation (tags
 * start at 1), never written. */
static uint32_t no_index[1];

void tersa_shapes_init(tersa_shapes *s, const tersa_alloc *alloc, const tersa_shape_hooks *hooks, bool hints) {
    memset(s, 0, sizeof *s);
    s->index = no_index;
    s->alloc = alloc_or_default(alloc);
    if (hooks) s->hooks = *hooks;
    s->with_hints = hints;
    s->tag = 1;
}

static void release_keys(tersa_shapes *s) {
    if (s->pool_used && s->hooks.release) s->hooks.release(s->hooks.ctx, s->pool, s->pool_used);
    s->pool_used = 0;
}

static void free_tables(tersa_shapes *s) {
    mem_free(s->alloc, s->ents, (size_t)s->ents_cap * sizeof *s->ents);
    if (s->mask) mem_free(s->alloc, s->index, ((size_t)s->mask + 1) * sizeof *s->index);
    mem_free(s->alloc, s->pool, s->pool_cap * sizeof *s->pool);
    if (s->hints) mem_free(s->alloc, s->hints, s->hints_cap * sizeof *s->hints);
    s->ents = NULL;
    s->index = no_index;
    s->pool = NULL;
    s->hints = NULL;
    s->ents_cap = s->mask = 0;
    s->pool_cap = s->hints_cap = 0;
    s->nents = 0;
}

void tersa_shapes_free(tersa_shapes *s) {
    release_keys(s);
    free_tables(s);
}

void tersa_shapes_clear_slow(tersa_shapes *s) {
    release_keys(s);
    s->nents = 0;
    if (++s->tag == 0x10000) {
        /* The tags wrapped: slots of 65,535 generations ago would read as current. */
        if (s->mask) memset(s->index, 0, ((size_t)s->mask + 1) * sizeof *s->index);
        s->tag = 1;
    }
}

/* Index slots for the current generation's entries, twice as many as they
 * may become before the next growth: probes stay short and always end at
 * a slot of another generation. */
static bool grow_index(tersa_shapes *s, uint32_t want) {
    size_t slots = s->mask ? (size_t)s->mask + 1 : 64;
    while (slots < 2 * (size_t)want) slots *= 2;
    uint32_t *t = (uint32_t *)mem_alloc(s->alloc, slots * sizeof *t);
    if (!t) return false;
    memset(t, 0, slots * sizeof *t);
    uint32_t mask = (uint32_t)slots - 1, tag = s->tag << 16;
    for (uint32_t i = 0; i < s->nents; i++) {
        uint32_t j = (uint32_t)(s->ents[i].hash >> 40) & mask;
        while (t[j] >> 16 == s->tag) j = (j + 1) & mask;
        t[j] = tag | (i + 1);
    }
    if (s->mask) mem_free(s->alloc, s->index, ((size_t)s->mask + 1) * sizeof *s->index);
    s->index = t;
    s->mask = mask;
    return true;
}

static bool grow_pool(tersa_shapes *s, size_t need) {
    size_t cap = s->pool_cap ? s->pool_cap : 256;
    while (cap < need) cap *= 2; /* need <= TERSA_SHAPES_POOL_MAX, a power of 2: so is cap */
    if (s->with_hints && s->hints_cap < cap) {
        uint32_t *q = (uint32_t *)mem_realloc(s->alloc, s->hints, s->hints_cap * sizeof *q, cap * sizeof *q);
        if (!q) return false;
        s->hints = q;
        s->hints_cap = cap;
    }
    tersa_ident *p = (tersa_ident *)mem_realloc(s->alloc, s->pool, s->pool_cap * sizeof *p, cap * sizeof *p);
    if (!p) return false;
    s->pool = p;
    s->pool_cap = cap;
    return true;
}

int32_t tersa_shapes_add_slow(tersa_shapes *s, uint64_t h, const tersa_ident *keys, size_t stride, size_t n,
                              uint32_t shape) {
    if (n > TERSA_SHAPES_POOL_MAX) return -1;
    if (s->nents == TERSA_SHAPES_MAX || s->pool_used + n > TERSA_SHAPES_POOL_MAX) {
        /* Full: start again rather than keep the first shapes forever. */
        uint32_t root = s->hint_root, scratch = s->hint_scratch, defined = s->defined, repeated = s->repeated;
        tersa_shapes_clear(s);
        s->hint_root = root;
        s->hint_scratch = scratch;
        s->defined = defined;
        s->repeated = repeated;
    }
    if (s->nents == s->ents_cap) {
        uint32_t cap = s->ents_cap ? s->ents_cap * 2 : 64;
        tersa_shape_entry *p = (tersa_shape_entry *)mem_realloc(s->alloc, s->ents, (size_t)s->ents_cap * sizeof *p,
                                                                (size_t)cap * sizeof *p);
        if (!p) return -1;
        s->ents = p;
        s->ents_cap = cap;
    }
    if (2 * ((size_t)s->nents + 1) > (size_t)s->mask + 1 && !grow_index(s, s->nents + 1)) return -1;
    if (s->pool_used + n > s->pool_cap && !grow_pool(s, s->pool_used + n)) return -1;
    return tersa_shapes_store(s, h, keys, stride, n, shape);
}

size_t tersa_shapes_memsize(const tersa_shapes *s) {
    size_t bytes = (size_t)s->ents_cap * sizeof *s->ents + s->pool_cap * sizeof *s->pool;
    if (s->mask) bytes += ((size_t)s->mask + 1) * sizeof *s->index;
    if (s->hints) bytes += s->hints_cap * sizeof *s->hints;
    return bytes;
}

bool tersa_shapes_note_buffer(tersa_shapes *s, uint32_t used) {
    if (used > s->peak) s->peak = used;
    if (s->peak <= 256 || (uint64_t)used * 16 >= s->peak) {
        s->small_runs = 0;
        return false;
    }
    if (++s->small_runs < TERSA_SHAPES_SMALL_RUNS) return false;
    s->peak = used;
    s->small_runs = 0;
    return true;
}

bool tersa_shapes_end_buffer(tersa_shapes *s, uint32_t used) {
    tersa_shapes_clear(s);
    if (!tersa_shapes_note_buffer(s, used)) return false;
    free_tables(s);
    return true;
}
