/*
 * objcache.c - the out-of-line half of objcache.h: seeding, visiting,
 * clearing and growing the caches of host objects.
 */
#include "internal.h"
#include "objcache.h"

void tersa_keycache_init(tersa_keycache *c) {
    memset(c->slot, 0, sizeof(c->slot));
    c->seed = tersa_seed();
}

void tersa_keycache_each(tersa_keycache *c, tersa_handle_fn fn, void *arg) {
    for (size_t i = 0; i < TERSA_KEYCACHE_SIZE; i++)
        if (c->slot[i].handle) fn(&c->slot[i].handle, arg);
}

void tersa_keycache_clear(tersa_keycache *c, tersa_handle_fn release, void *arg) {
    for (size_t i = 0; i < TERSA_KEYCACHE_SIZE; i++) {
        tersa_keyslot *s = &c->slot[i];
        if (!s->handle) continue;
        /* Emptied before the release: a release may run host code that decodes again. */
        uintptr_t h = s->handle;
        memset(s, 0, sizeof(*s));
        if (release) release(&h, arg);
    }
}

bool tersa_slots_reserve(tersa_slots *s, size_t i) {
    if (i < s->cap) return true;
    if (i >= SIZE_MAX / 2 / sizeof(uintptr_t)) return false;
    size_t n = s->cap ? s->cap * 2 : 256;
    while (n <= i) n *= 2;
    uintptr_t *p = (uintptr_t *)mem_realloc(&tersa_default_alloc, s->v, s->cap * sizeof(uintptr_t), n * sizeof(uintptr_t));
    if (!p) return false;
    memset(p + s->cap, 0, (n - s->cap) * sizeof(uintptr_t));
    s->v = p;
    s->cap = n;
    return true;
}

void tersa_slots_each(tersa_slots *s, tersa_handle_fn fn, void *arg) {
    for (size_t i = 0; i < s->hi; i++)
        if (s->v[i]) fn(&s->v[i], arg);
}

void tersa_slots_clear(tersa_slots *s, tersa_handle_fn release, void *arg) {
    size_t hi = s->hi;
    s->hi = 0;
    if (!release) {
        if (hi) memset(s->v, 0, hi * sizeof(uintptr_t));
        return;
    }
    for (size_t i = 0; i < hi; i++) {
        uintptr_t h = s->v[i];
        if (!h) continue;
        s->v[i] = 0;
        release(&h, arg);
    }
}

void tersa_slots_free(tersa_slots *s) {
    mem_free(&tersa_default_alloc, s->v, s->cap * sizeof(uintptr_t));
    s->v = NULL;
    s->cap = s->hi = 0;
}
