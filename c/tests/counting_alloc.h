/*
 * counting_alloc.h - a tersa_alloc that counts live bytes and their peak.
 *
 * The randomized tests and the fuzz target bound what decoding may allocate by
 * a multiple of the input's size; this allocator measures it.
 */
#ifndef TERSA_COUNTING_ALLOC_H
#define TERSA_COUNTING_ALLOC_H

#include "tersa.h"

#include <stdlib.h>

typedef struct counting {
    size_t live, peak;
} counting;

static inline void *counting_malloc(void *ctx, size_t n) {
    counting *c = (counting *)ctx;
    c->live += n;
    if (c->live > c->peak) c->peak = c->live;
    return malloc(n);
}

static inline void *counting_realloc(void *ctx, void *p, size_t o, size_t n) {
    counting *c = (counting *)ctx;
    c->live += n - o;
    if (c->live > c->peak) c->peak = c->live;
    return realloc(p, n);
}

static inline void counting_free(void *ctx, void *p, size_t n) {
    counting *c = (counting *)ctx;
    c->live -= n;
    free(p);
}

/* An allocator that counts into *c (which starts at zero). */
static inline tersa_alloc counting_alloc(counting *c) {
    tersa_alloc a = {counting_malloc, counting_realloc, counting_free, c};
    return a;
}

#endif
