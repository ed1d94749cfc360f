/*
 * diag.c - the diagnostic notation (spec/vectors/README.md).
 */
#include "internal.h"

#include <stdio.h>

#define APPEND_LIT(out, lit) tersa_buf_append((out), (lit), sizeof(lit) - 1)

/* A magnitude too long for decimal (TERSA_MAX_DECIMAL_BYTES), as -0x<hex>:
 * exact, and linear to write. */
static bool diag_bigint_hex(bool negative, const uint8_t *mag, size_t len, tersa_buf *out) {
    static const char digits[] = "0123456789abcdef";
    while (len && mag[len - 1] == 0) len--;
    bool ok = (!negative || APPEND_LIT(out, "-")) && APPEND_LIT(out, "0x");
    char chunk[256];
    size_t n = 0;
    for (size_t i = len; ok && i-- > 0;) {
        if (n == 0 && i == len - 1 && mag[i] < 16) {
            chunk[n++] = digits[mag[i]];
        } else {
            chunk[n++] = digits[mag[i] >> 4];
            chunk[n++] = digits[mag[i] & 15];
        }
        if (n >= sizeof chunk - 2 || i == 0) {
            ok = tersa_buf_append(out, chunk, n);
            n = 0;
        }
    }
    return ok;
}

bool tersa_format_bigint(bool negative, const uint8_t *mag, size_t len, tersa_buf *out) {
    while (len && mag[len - 1] == 0) len--;
    if (len == 0) return APPEND_LIT(out, "0");
    if (len > TERSA_MAX_DECIMAL_BYTES) return false;
    /* Schoolbook division by 10^9 on 32-bit limbs: quadratic, hence the limit. */
    size_t nlimbs = (len + 3) / 4;
    uint32_t *limbs = (uint32_t *)mem_alloc(out->alloc, nlimbs * sizeof(uint32_t));
    size_t maxchunks = nlimbs * 32 / 29 + 2; /* 10^9 > 2^29 */
    uint32_t *chunks = (uint32_t *)mem_alloc(out->alloc, maxchunks * sizeof(uint32_t));
    if (!limbs || !chunks) {
        mem_free(out->alloc, limbs, nlimbs * sizeof(uint32_t));
        mem_free(out->alloc, chunks, maxchunks * sizeof(uint32_t));
        out->failed = true;
        return false;
    }
    memset(limbs, 0, nlimbs * sizeof(uint32_t));
    for (size_t i = 0; i < len; i++) limbs[i / 4] |= (uint32_t)mag[i] << (8 * (i % 4));
    size_t nchunks = 0, top = nlimbs;
    while (top) {
        uint64_t rem = 0;
        for (size_t i = top; i > 0; i--) {
            uint64_t cur = (rem << 32) | limbs[i - 1];
            limbs[i - 1] = (uint32_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        chunks[nchunks++] = (uint32_t)rem;
        while (top && limbs[top - 1] == 0) top--;
    }
    bool ok = !negative || APPEND_LIT(out, "-");
    char tmp[16];
    int n = snprintf(tmp, sizeof tmp, "%u", chunks[nchunks - 1]);
    ok = ok && tersa_buf_append(out, tmp, (size_t)n);
    for (size_t i = nchunks - 1; ok && i > 0; i--) {
        n = snprintf(tmp, sizeof tmp, "%09u", chunks[i - 1]);
        ok = tersa_buf_append(out, tmp, (size_t)n);
    }
    mem_free(out->alloc, limbs, nlimbs * sizeof(uint32_t));
    mem_free(out->alloc, chunks, maxchunks * sizeof(uint32_t));
    return ok;
}

static bool diag_string(const char *p, size_t n, tersa_buf *out) {
    static const char hex[] = "0123456789abcdef";
    bool ok = APPEND_LIT(out, "\"");
    size_t run = 0;
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c != 0x7F && c != '"' && c != '\\') continue;
        ok = tersa_buf_append(out, p + run, i - run);
        run = i + 1;
        if (c == '"') {
            ok = ok && APPEND_LIT(out, "\\\"");
        } else if (c == '\\') {
            ok = ok && APPEND_LIT(out, "\\\\");
        } else {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            ok = ok && tersa_buf_append(out, esc, 6);
        }
    }
    return ok && tersa_buf_append(out, p + run, n - run) && APPEND_LIT(out, "\"");
}

static bool diag_hex(const uint8_t *p, size_t n, tersa_buf *out) {
    static const char hex[] = "0123456789abcdef";
    bool ok = APPEND_LIT(out, "h'");
    for (size_t i = 0; ok && i < n; i++) {
        char pair[2] = {hex[p[i] >> 4], hex[p[i] & 15]};
        ok = tersa_buf_append(out, pair, 2);
    }
    return ok && APPEND_LIT(out, "'");
}

/* Any value but an array or map. */
static bool diag_scalar(const tersa_value *v, tersa_buf *out) {
    char tmp[48];
    int n;
    switch (v->type) {
    case TERSA_NULL:
        return APPEND_LIT(out, "null");
    case TERSA_FALSE:
        return APPEND_LIT(out, "false");
    case TERSA_TRUE:
        return APPEND_LIT(out, "true");
    case TERSA_INT:
        n = snprintf(tmp, sizeof tmp, "%lld", (long long)v->v.i);
        return tersa_buf_append(out, tmp, (size_t)n);
    case TERSA_UINT:
        n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v->v.u);
        return tersa_buf_append(out, tmp, (size_t)n);
    case TERSA_BIGINT:
        return tersa_format_bigint(v->v.big.negative, v->v.big.mag, v->v.big.len, out) ||
               (!out->failed && diag_bigint_hex(v->v.big.negative, v->v.big.mag, v->v.big.len, out));
    case TERSA_FLOAT:
        return tersa_diag_double(v->v.f, out);
    case TERSA_STRING:
        return diag_string(v->v.str.ptr, v->v.str.len, out);
    case TERSA_SYMBOL:
        return APPEND_LIT(out, "sym(") && diag_string(v->v.str.ptr, v->v.str.len, out) && APPEND_LIT(out, ")");
    case TERSA_BINARY:
        return diag_hex(v->v.bin.ptr, v->v.bin.len, out);
    case TERSA_EXT: {
        /* Well-known values print as name("text"); an invalid payload (a
         * value built by hand) falls back to the raw form, so nothing is hidden. */
        const char *name = tersa_well_known_name(v->v.ext.type);
        if (name && !tersa_well_known_check(v->v.ext.type, v->v.ext.ptr, v->v.ext.len))
            return tersa_buf_append(out, name, strlen(name)) && APPEND_LIT(out, "(\"") &&
                   tersa_well_known_text(v->v.ext.type, v->v.ext.ptr, v->v.ext.len, out) && APPEND_LIT(out, "\")");
        n = snprintf(tmp, sizeof tmp, "ext(%u, ", (unsigned)v->v.ext.type);
        return tersa_buf_append(out, tmp, (size_t)n) && diag_hex(v->v.ext.ptr, v->v.ext.len, out) &&
               APPEND_LIT(out, ")");
    }
    case TERSA_TIME: {
        char iso[40];
        size_t len = tersa_timestamp_iso(&v->v.time, iso);
        return APPEND_LIT(out, "time(\"") && tersa_buf_append(out, iso, len) && APPEND_LIT(out, "\")");
    }
    default:
        return false;
    }
}

typedef struct diag_step {
    const tersa_value *container;
    size_t next, count; /* maps: keys and values interleaved */
} diag_step;

/* Iterative: a tree is as deep as its decoder allowed, and no stack frame
 * may be spent per level. */
bool tersa_diag(const tersa_value *v, tersa_buf *out) {
    if (v->type != TERSA_ARRAY && v->type != TERSA_MAP && v->type != TERSA_GENERIC_MAP) return diag_scalar(v, out);
    const tersa_alloc *a = out->alloc;
    diag_step *stack = NULL;
    size_t depth = 0, cap = 0;
    bool ok = true;
    while (ok && v) {
        if (v->type == TERSA_ARRAY || v->type == TERSA_MAP || v->type == TERSA_GENERIC_MAP) {
            bool array = v->type == TERSA_ARRAY;
            if (!tersa_grow_array(a, (void **)&stack, &cap, depth + 1, sizeof(diag_step))) {
                out->failed = true;
                ok = false;
                break;
            }
            stack[depth++] = (diag_step){v, 0, array ? v->v.array.count : 2 * v->v.map.count};
            ok = tersa_buf_append(out, array ? "[" : "{", 1);
        } else {
            ok = diag_scalar(v, out);
        }
        /* The next value: close finished containers, write separators. */
        v = NULL;
        while (ok && depth) {
            diag_step *top = &stack[depth - 1];
            bool array = top->container->type == TERSA_ARRAY;
            if (top->next == top->count) {
                ok = array ? APPEND_LIT(out, "]") : APPEND_LIT(out, "}");
                depth--;
                continue;
            }
            size_t i = top->next++;
            if (array) {
                ok = i == 0 || APPEND_LIT(out, ", ");
                v = &top->container->v.array.items[i];
            } else if (i % 2 == 0) {
                ok = i == 0 || APPEND_LIT(out, ", ");
                v = &top->container->v.map.keys[i / 2];
            } else {
                ok = APPEND_LIT(out, ": ");
                v = &top->container->v.map.values[i / 2];
            }
            break;
        }
    }
    mem_free(a, stack, cap * sizeof(diag_step));
    return ok;
}
