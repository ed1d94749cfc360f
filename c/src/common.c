/*
 * common.c - allocator, arena, hashing, UTF-8 validation, error names.
 */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* getentropy */
#endif
#include "internal.h"

#include <stdatomic.h>
#include <time.h>
#if defined(__linux__) || defined(__FreeBSD__) || defined(__OpenBSD__)
#include <unistd.h>
#define TERSA_HAVE_GETENTROPY 1
#elif defined(__APPLE__)
#include <sys/random.h>
#define TERSA_HAVE_GETENTROPY 1
#endif

/* ==========================================================================
 * Default allocator
 * ========================================================================== */

static void *default_malloc(void *ctx, size_t size) {
    (void)ctx;
    return malloc(size);
}

static void *default_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx;
    (void)old_size;
    return realloc(ptr, new_size);
}

static void default_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    free(ptr);
}

const tersa_alloc tersa_default_alloc = {default_malloc, default_realloc, default_free, NULL};

bool tersa_grow_array(const tersa_alloc *a, void **ptr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return false;
        ncap *= 2;
    }
    void *p = mem_realloc(a, *ptr, *cap * elem, ncap * elem);
    if (!p) return false;
    *ptr = p;
    *cap = ncap;
    return true;
}

/* ==========================================================================
 * Arena
 * ========================================================================== */

#define ARENA_FIRST_CHUNK 4096u
#define ARENA_MAX_CHUNK (1u << 20)
#define ARENA_RETAIN (4u << 20)

void tersa_arena_init(arena *a, const tersa_alloc *alloc) {
    a->alloc = alloc;
    a->head = NULL;
    a->free = NULL;
    a->total = 0;
}

void *tersa_arena_alloc_slow(arena *a, size_t size) {
    /* A kept chunk first, if one is large enough. */
    for (arena_chunk **pp = &a->free; *pp; pp = &(*pp)->next) {
        arena_chunk *c = *pp;
        if (c->size >= size) {
            *pp = c->next;
            c->used = size;
            c->next = a->head;
            a->head = c;
            return c + 1;
        }
    }
    /* Chunks double up to a cap so that small documents stay small and large
     * ones take few allocations; a request larger than the cap gets its own. */
    size_t want = a->head ? a->head->size * 2 : ARENA_FIRST_CHUNK;
    if (want > ARENA_MAX_CHUNK) want = ARENA_MAX_CHUNK;
    if (want < size) want = size;
    if (want > SIZE_MAX - sizeof(arena_chunk)) return NULL;
    arena_chunk *c = (arena_chunk *)mem_alloc(a->alloc, sizeof(arena_chunk) + want);
    if (!c) return NULL;
    c->size = want;
    c->used = size;
    c->next = a->head;
    a->head = c;
    a->total += sizeof(arena_chunk) + want;
    return c + 1;
}

void tersa_arena_reset(arena *a) {
    /* A lone chunk (a small buffer's) stays the head: the next buffer's first
     * allocation then takes no trip through the free list. Held memory
     * stays bounded: the chunk is at most ARENA_RETAIN bytes, the free list
     * holds at most ARENA_RETAIN more. */
    arena_chunk *lone = a->head;
    if (lone && !lone->next && lone->size <= ARENA_RETAIN) {
        lone->used = 0;
        return;
    }
    size_t kept = 0;
    for (arena_chunk *c = a->free; c; c = c->next) kept += c->size;
    arena_chunk *c = a->head;
    while (c) {
        arena_chunk *next = c->next;
        if (kept + c->size <= ARENA_RETAIN) {
            c->used = 0;
            c->next = a->free;
            a->free = c;
            kept += c->size;
        } else {
            a->total -= sizeof(arena_chunk) + c->size;
            mem_free(a->alloc, c, sizeof(arena_chunk) + c->size);
        }
        c = next;
    }
    a->head = NULL;
}

void tersa_arena_free(arena *a) {
    arena_chunk *lists[2] = {a->head, a->free};
    for (int i = 0; i < 2; i++) {
        arena_chunk *c = lists[i];
        while (c) {
            arena_chunk *next = c->next;
            mem_free(a->alloc, c, sizeof(arena_chunk) + c->size);
            c = next;
        }
    }
    a->head = a->free = NULL;
    a->total = 0;
}

/* ==========================================================================
 * Hashing
 * ========================================================================== */

uint64_t tersa_hash_long(const uint8_t *p, size_t n, uint64_t seed) {
    uint64_t h = seed ^ HASH_K0 ^ (uint64_t)n;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        h = hash_mix(load_le64(p + i) ^ HASH_K1, load_le64(p + i + 8) ^ h);
    uint64_t a = load_le64(p + n - 16), b = load_le64(p + n - 8);
    return hash_mix(a ^ HASH_K2, b ^ h);
}

#ifdef TERSA_FIXED_SEED
/* A build for measuring (-DTERSA_FIXED_SEED=<nonzero integer>, off by
 * default): every process hashes with the same seed, so that instruction
 * counts repeat from run to run. Such a build gives up the per-process seed's
 * protection against inputs chosen to collide: never ship it. */
uint64_t tersa_seed(void) { return hash_mix((uint64_t)(TERSA_FIXED_SEED) ^ HASH_K0, HASH_K1) | 1; }
#else
static _Atomic uint64_t seed_value;

static uint64_t seed_entropy(void) {
    uint64_t x = 0;
#ifdef TERSA_HAVE_GETENTROPY
    if (getentropy(&x, sizeof(x)) != 0) x = 0;
#endif
    /* Without an entropy source: addresses (ASLR) and the clock. */
    int local;
    x ^= (uint64_t)(uintptr_t)&local ^ ((uint64_t)(uintptr_t)&seed_value << 17) ^ (uint64_t)time(NULL) * HASH_K2 ^
         (uint64_t)clock() * HASH_K1;
    return hash_mix(x ^ HASH_K0, HASH_K1) | 1;
}

uint64_t tersa_seed(void) {
    uint64_t s = atomic_load_explicit(&seed_value, memory_order_relaxed);
    if (TERSA_LIKELY(s)) return s;
    uint64_t fresh = seed_entropy(), expected = 0;
    /* Racing threads agree on whichever seed was stored first. */
    if (!atomic_compare_exchange_strong(&seed_value, &expected, fresh)) return expected;
    return fresh;
}
#endif

/* ==========================================================================
 * UTF-8 validation
 * ========================================================================== */

bool tersa_utf8_valid(const uint8_t *p, size_t n, bool *ascii) {
    size_t i = 0;
    /* Fast path: eight bytes at a time while they are ASCII. */
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080ull) break;
        i += 8;
    }
    while (i < n && p[i] < 0x80) i++;
    if (i == n) {
        *ascii = true;
        return true;
    }
    *ascii = false;
    while (i < n) {
        uint8_t c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c < 0xC2) return false; /* continuation byte or overlong 2-byte lead */
        if (c < 0xE0) {
            if (i + 1 >= n || (p[i + 1] & 0xC0) != 0x80) return false;
            i += 2;
            continue;
        }
        if (c < 0xF0) {
            if (i + 2 >= n) return false;
            uint8_t c1 = p[i + 1];
            if ((c1 & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80) return false;
            if (c == 0xE0 && c1 < 0xA0) return false; /* overlong */
            if (c == 0xED && c1 >= 0xA0) return false; /* surrogate */
            i += 3;
            continue;
        }
        if (c < 0xF5) {
            if (i + 3 >= n) return false;
            uint8_t c1 = p[i + 1];
            if ((c1 & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80 || (p[i + 3] & 0xC0) != 0x80)
                return false;
            if (c == 0xF0 && c1 < 0x90) return false; /* overlong */
            if (c == 0xF4 && c1 >= 0x90) return false; /* above U+10FFFF */
            i += 4;
            continue;
        }
        return false;
    }
    return true;
}

const uint8_t tersa_single_bytes[256] = {
#define R16(b) b+0,b+1,b+2,b+3,b+4,b+5,b+6,b+7,b+8,b+9,b+10,b+11,b+12,b+13,b+14,b+15
    R16(0), R16(16), R16(32), R16(48), R16(64), R16(80), R16(96), R16(112),
    R16(128), R16(144), R16(160), R16(176), R16(192), R16(208), R16(224), R16(240)
#undef R16
};

/* ==========================================================================
 * Error names
 * ========================================================================== */

static const char *const code_names[] = {
    "ok", "truncated", "bad_magic", "unsupported_version", "bad_flags", "invalid_tag",
    "invalid_varint", "length_exceeds_input", "invalid_utf8", "bad_reference",
    "expected_string", "invalid_value", "duplicate_key", "depth_exceeded",
    "trailing_bytes", "unknown_dictionary", "out_of_sequence", "bad_sync", "nomem", "unrepresentable", "usage",
};

const char *tersa_code_name(tersa_code code) {
    if ((unsigned)code < sizeof(code_names) / sizeof(code_names[0])) return code_names[code];
    return "unknown";
}

tersa_code tersa_code_from_name(const char *name, size_t len) {
    for (size_t i = 1; i < sizeof(code_names) / sizeof(code_names[0]); i++)
        if (strlen(code_names[i]) == len && memcmp(code_names[i], name, len) == 0) return (tersa_code)i;
    return TERSA_OK;
}

/* ==========================================================================
 * Output buffer
 * ========================================================================== */

void tersa_buf_init(tersa_buf *b, const tersa_alloc *alloc) {
    b->ptr = NULL;
    b->len = b->cap = 0;
    b->alloc = alloc_or_default(alloc);
    b->failed = false;
}

void tersa_buf_free(tersa_buf *b) {
    mem_free(b->alloc, b->ptr, b->cap);
    b->ptr = NULL;
    b->len = b->cap = 0;
}

bool tersa_buf_append(tersa_buf *b, const void *data, size_t len) {
    if (b->failed) return false;
    if (b->cap - b->len < len + 1) {
        size_t ncap = b->cap ? b->cap : 64;
        while (ncap - b->len < len + 1) {
            if (ncap > SIZE_MAX / 2) {
                b->failed = true;
                return false;
            }
            ncap *= 2;
        }
        char *p = (char *)mem_realloc(b->alloc, b->ptr, b->cap, ncap);
        if (!p) {
            b->failed = true;
            return false;
        }
        b->ptr = p;
        b->cap = ncap;
    }
    if (len) memcpy(b->ptr + b->len, data, len);
    b->len += len;
    b->ptr[b->len] = '\0'; /* convenient for printing; not counted in len */
    return true;
}
