/*
 * reader.c - the pull reader's items: decoding and validation (SPEC sections
 * 4-6, 10). Buffers, headers and stream frames are in reader_frames.c, the
 * check that generic-map keys are distinct in reader_keys.c.
 *
 * Every check happens in reading order, and every error is reported at the
 * offset of the innermost item's tag (SPEC 10), so that all implementations
 * report the same error for the same input.
 */
#include "reader_internal.h"
#include "reader_runs.h"

/* ==========================================================================
 * The string table
 * ========================================================================== */

/* Static, so that the string paths that call it keep their registers across
 * the call (the compiler sees what it clobbers). */
TERSA_NOINLINE static bool grow_strings(tersa_reader *r) {
    if (tersa_state_grow_strings(&r->st)) return true;
    return fail_at(r, TERSA_ERR_NOMEM, r->pos, "out of memory");
}

/* A decoded string enters the table (SPEC 4.1). */
TERSA_INLINE bool add_string(tersa_reader *r, const uint8_t *p, size_t n, bool ascii) {
    if (TERSA_UNLIKELY(r->st.nstrs == r->st.strs_cap) && r->st.nstrs < TERSA_MAX_STRINGS && !grow_strings(r))
        return false;
    tersa_state_append_string(&r->st, p, n, 0, ascii);
    return true;
}

#include "reader_memo.h"

/* ==========================================================================
 * Strings
 * ========================================================================== */

#include "reader_ascii.h"

TERSA_INLINE bool is_string_tag(uint8_t t) {
    return t < TAG_SHAPE0 || (t >= TAG_PFX0 && t < TAG_DEC0) || t == TAG_STR_LONG || t == TAG_REF8 || t == TAG_REF16 ||
           t == TAG_REF24 || t == TAG_PFX_LONG || t == TAG_TS_STR || t == TAG_TS_Z0 || t == TAG_TS_Z3;
}

static bool ts_seconds(tersa_reader *r, size_t at, int64_t *out) {
    uint64_t z;
    if (!read_varint(r, at, &z)) return false;
    int64_t d = unzigzag(z);
    /* The register is within the range, so an out-of-range delta cannot wrap. */
    if (d < TERSA_MIN_SECONDS - TERSA_MAX_SECONDS || d > TERSA_MAX_SECONDS - TERSA_MIN_SECONDS)
        FAIL(TERSA_ERR_INVALID_VALUE, at, "timestamp out of range");
    int64_t s = r->st.last_ts + d;
    if (s < TERSA_MIN_SECONDS || s > TERSA_MAX_SECONDS) FAIL(TERSA_ERR_INVALID_VALUE, at, "timestamp out of range");
    r->st.last_ts = s;
    *out = s;
    return true;
}

static bool read_offset(tersa_reader *r, size_t at, int32_t *out) {
    uint64_t z;
    if (!read_varint(r, at, &z)) return false;
    if (z > 2u * TERSA_MAX_OFFSET) FAIL(TERSA_ERR_INVALID_VALUE, at, "UTC offset out of range");
    *out = (int32_t)unzigzag(z);
    return true;
}

static const uint32_t pow10_u32[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                       1000000000};

static bool read_ts_string(tersa_reader *r, uint8_t t, size_t at, const uint8_t **out, size_t *outlen) {
    ts_parts ts;
    if (t == TAG_TS_Z0) {
        ts.variant = 0;
    } else if (t == TAG_TS_Z3) {
        ts.variant = 3;
    } else {
        if (!need(r, 1, at)) return false;
        uint8_t v = r->data[r->pos++];
        if ((v & 0x80) || (v & TSV_DIGITS) > 9 || v == 0 || v == 3 || ((v & TSV_DATE_ONLY) && v != TSV_DATE_ONLY))
            FAIL(TERSA_ERR_INVALID_VALUE, at, "invalid timestamp-string variant");
        ts.variant = v;
    }
    if (!ts_seconds(r, at, &ts.seconds)) return false;
    unsigned digits = ts.variant & TSV_DIGITS;
    ts.frac = 0;
    if (digits) {
        uint64_t f;
        if (!read_varint(r, at, &f)) return false;
        if (f >= pow10_u32[digits]) FAIL(TERSA_ERR_INVALID_VALUE, at, "fraction has too many digits");
        ts.frac = (uint32_t)f;
    }
    ts.offset = 0;
    if ((ts.variant & TSV_NUMERIC_OFFSET) && !read_offset(r, at, &ts.offset)) return false;
    if ((ts.variant & TSV_DATE_ONLY) && ts.seconds % 86400 != 0)
        FAIL(TERSA_ERR_INVALID_VALUE, at, "date is not at midnight");
    uint8_t *buf = (uint8_t *)tersa_arena_alloc(&r->st.mem, 40);
    if (!buf) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
    size_t n = tersa_ts_render(&ts, buf);
    if (!n) FAIL(TERSA_ERR_INVALID_VALUE, at, "local time outside years 0001-9999");
    *out = buf;
    *outlen = n;
    return true;
}

/* The string item of table entry i (i < nstrs). */
TERSA_INLINE void ref_item(tersa_reader *r, size_t i, tersa_slot *slot, tersa_item *item) {
    const str_entry *e = &r->st.strs[i];
    tersa_state_note_string(&r->st, slot, e->ptr, e->len);
    item->type = TERSA_STRING;
    item->v.str.ptr = (const char *)e->ptr;
    item->v.str.len = e->len;
    item->v.str.index = (uint32_t)i;
    item->flags = e->ascii ? TERSA_ITEM_ASCII : 0;
}

/* Decode the string item with tag `t` at `at` (tag already consumed). */
TERSA_NOINLINE static bool read_string(tersa_reader *r, uint8_t t, size_t at, tersa_slot *slot, tersa_item *item) {
    const uint8_t *s = NULL;
    size_t n = 0;
    bool ascii;
    if (t < TAG_STR0 || t == TAG_REF8 || t == TAG_REF16 || t == TAG_REF24) {
        size_t i;
        if (t < TAG_STR0) {
            i = t;
        } else if (t == TAG_REF8) {
            if (!need(r, 1, at)) return false;
            i = REF8_BASE + r->data[r->pos];
            r->pos += 1;
        } else if (t == TAG_REF16) {
            if (!need(r, 2, at)) return false;
            i = REF16_BASE + (r->data[r->pos] | ((size_t)r->data[r->pos + 1] << 8));
            r->pos += 2;
        } else {
            if (!need(r, 3, at)) return false;
            i = REF24_BASE + (r->data[r->pos] | ((size_t)r->data[r->pos + 1] << 8) |
                              ((size_t)r->data[r->pos + 2] << 16));
            r->pos += 3;
        }
        if (TERSA_UNLIKELY(i >= r->st.nstrs)) FAIL(TERSA_ERR_BAD_REFERENCE, at, "string reference beyond the table");
        ref_item(r, i, slot, item);
        return true;
    }
    if ((t >= TAG_STR0 && t < TAG_SHAPE0) || t == TAG_STR_LONG) {
        if (t == TAG_STR_LONG) {
            if (!read_length(r, at, N_STR0, &n)) return false;
        } else {
            n = (size_t)(t - TAG_STR0);
            if (!need(r, n, at)) return false;
        }
        s = r->data + r->pos;
        if (TERSA_LIKELY(ascii_in(s, n, r->end - r->pos)))
            ascii = true;
        else if (TERSA_UNLIKELY(!tersa_utf8_valid(s, n, &ascii)))
            FAIL(TERSA_ERR_INVALID_UTF8, at, "string is not valid UTF-8");
        r->pos += n;
        if (r->copy_strings) {
            s = (const uint8_t *)tersa_arena_copy(&r->st.mem, s, n);
            if (!s) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
        }
    } else if ((t >= TAG_PFX0 && t < TAG_DEC0) || t == TAG_PFX_LONG) {
        if (!need(r, 1, at)) return false;
        uint8_t pb = r->data[r->pos++];
        if (t == TAG_PFX_LONG) {
            if (!read_length(r, at, N_PFX0, &n)) return false;
        } else {
            n = (size_t)(t - TAG_PFX0);
        }
        const uint8_t *base;
        size_t base_len;
        bool have;
        if (pb & 0x80) {
            have = r->st.has_last;
            base = r->st.last;
            base_len = r->st.last_len;
        } else {
            have = slot->has_str;
            base = slot->str;
            base_len = slot->str_len;
        }
        size_t L = pb & 0x7F;
        if (!have || L == 0 || L > base_len || (L < base_len && (base[L] & 0xC0) == 0x80))
            FAIL(TERSA_ERR_BAD_REFERENCE, at, "prefix does not fit its base string");
        if (!need(r, n, at)) return false;
        uint8_t *buf = (uint8_t *)tersa_arena_alloc(&r->st.mem, L + n);
        if (!buf) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
        memcpy(buf, base, L);
        if (n) memcpy(buf + L, r->data + r->pos, n);
        r->pos += n;
        n += L;
        s = buf;
        if (TERSA_LIKELY(ascii_exact(s, n)))
            ascii = true;
        else if (TERSA_UNLIKELY(!tersa_utf8_valid(s, n, &ascii))) FAIL(TERSA_ERR_INVALID_UTF8, at, "string is not valid UTF-8");
    } else {
        if (!read_ts_string(r, t, at, &s, &n)) return false;
        ascii = true;
    }
    uint32_t index = TERSA_NO_INDEX;
    if (n >= MIN_TABLE_LEN && r->st.nstrs < TERSA_MAX_STRINGS) {
        index = (uint32_t)r->st.nstrs;
        if (!add_string(r, s, n, ascii)) return false;
    }
    tersa_state_note_string(&r->st, slot, s, n);
    item->v.str.ptr = (const char *)s;
    item->v.str.len = n;
    item->v.str.index = index;
    item->flags = ascii ? TERSA_ITEM_ASCII : 0;
    return true;
}

/* A string item required at the current position (symbol names, map keys). */
static bool read_required_string(tersa_reader *r, tersa_slot *slot, tersa_item *item) {
    size_t at = r->pos;
    if (at >= r->end) FAIL(TERSA_ERR_TRUNCATED, at, "input ends before an item");
    uint8_t t = r->data[at];
    if (!is_string_tag(t)) FAIL(TERSA_ERR_EXPECTED_STRING, at, "a string item is required here");
    r->pos++;
    return read_string(r, t, at, slot, item);
}

/* ==========================================================================
 * Containers
 * ========================================================================== */

TERSA_NOINLINE static bool grow_stack(tersa_reader *r, size_t at) {
    if (!tersa_grow_array(r->alloc, (void **)&r->stack, &r->stack_cap, r->depth + 1, sizeof(rframe)))
        FAIL(TERSA_ERR_NOMEM, at, "out of memory");
    return true;
}

TERSA_INLINE bool push_frame(tersa_reader *r, uint8_t kind, tersa_slot *slot, size_t remaining, size_t at) {
    if (TERSA_UNLIKELY(r->depth == r->stack_cap) && !grow_stack(r, at)) return false;
    rframe *f = &r->stack[r->depth++];
    f->kind = kind;
    f->slot = slot;
    f->remaining = remaining;
    f->next = 0;
    f->tag_offset = at;
    f->keys = NULL;
    f->keys_cap = f->keys_used = 0;
    return true;
}

TERSA_INLINE bool check_depth(tersa_reader *r, size_t at) {
    if (TERSA_LIKELY(r->depth < r->max_depth)) return true;
    FAIL(TERSA_ERR_DEPTH_EXCEEDED, at, "nesting deeper than the limit");
}

/* Is keys[i] equal to an earlier key of a small shape (up to 16 keys)?
 * `seen` holds one bit per earlier key, chosen by its length and end bytes:
 * a key whose bit is clear equals none of them, so distinct keys are mostly
 * told apart without comparing them with each earlier key. */
static bool key_seen_small(const tersa_key *keys, size_t i, uint64_t *seen) {
    const tersa_key *k = &keys[i];
    uint32_t ends = k->len ? (uint32_t)(uint8_t)k->ptr[0] | (uint32_t)(uint8_t)k->ptr[k->len - 1] << 8 : 0;
    uint64_t bit = 1ull << (((ends | (uint32_t)k->len << 16) * 0x9E3779B1u) >> 26);
    if (!(*seen & bit)) {
        *seen |= bit;
        return false;
    }
    for (size_t j = 0; j < i; j++)
        if (keys[j].len == k->len && keys[j].symbol == k->symbol &&
            (k->len == 0 || (keys[j].ptr[0] == k->ptr[0] && memcmp(keys[j].ptr, k->ptr, k->len) == 0)))
            return true;
    return false;
}

/* Is keys[i] equal to an earlier key of a large shape? hashes[] holds each
 * key's string hash; bytes are compared only when hashes agree. The set holds
 * key indices by open addressing (cap = 2^k >= 2n). */
static bool key_seen(const tersa_key *keys, const uint64_t *hashes, size_t i, uint32_t *set, size_t cap) {
    size_t mask = cap - 1, h = (size_t)hash_mix(hashes[i], keys[i].symbol ? HASH_K2 : HASH_K1) & mask;
    for (; set[h]; h = (h + 1) & mask) {
        size_t j = set[h] - 1;
        const tersa_key *k = &keys[j];
        if (hashes[j] == hashes[i] && k->len == keys[i].len && k->symbol == keys[i].symbol &&
            (k->len == 0 || memcmp(k->ptr, keys[i].ptr, k->len) == 0))
            return true;
    }
    set[h] = (uint32_t)i + 1;
    return false;
}

TERSA_INLINE bool short_string_item(tersa_reader *r, uint8_t t, size_t at, tersa_slot *slot, tersa_item *item);

static bool read_mapdef(tersa_reader *r, uint8_t t, size_t at, tersa_item *item) {
    size_t n = 0;
    if (t == TAG_MAPDEF_LONG) {
        if (!read_length(r, at, N_MAPDEF0, &n)) return false;
    } else {
        n = (size_t)(t - TAG_MAPDEF0);
    }
    if (n > (r->end - r->pos) / 2) FAIL(TERSA_ERR_LENGTH_EXCEEDS_INPUT, at, "count exceeds the remaining input");
    tersa_key *keys = (tersa_key *)tersa_arena_alloc(&r->st.mem, n ? n * sizeof(tersa_key) : 1);
    uint32_t *key_strings = (uint32_t *)tersa_arena_alloc(&r->st.mem, n ? n * sizeof(uint32_t) : 1);
    if (!keys || !key_strings) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
    bool plain = !r->copy_strings;
    bool memo_miss = false;
    if (n - 1 < MEMO_KEYS && r->memo_misses) {
        const tersa_mapdef_memo *m = memo_find(r, n);
        if (m) {
            if (!memo_replay(r, m, n, keys, key_strings)) return false;
            goto shape;
        }
        r->memo_misses--;
        memo_miss = true;
    }
    size_t keys_at = r->pos;
    uint64_t *hashes = NULL;
    uint32_t *set = NULL;
    size_t set_cap = 0;
    uint64_t seen = 0;
    if (n > 16) {
        hashes = (uint64_t *)tersa_arena_alloc(&r->st.mem, n * sizeof(uint64_t));
        if (!hashes) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
        set_cap = 32;
        while (set_cap < 2 * n) set_cap *= 2;
        set = (uint32_t *)tersa_arena_alloc(&r->st.mem, set_cap * sizeof(uint32_t));
        if (!set) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
        memset(set, 0, set_cap * sizeof(uint32_t));
    }
    for (size_t i = 0; i < n; i++) {
        size_t kat = r->pos;
        if (kat >= r->end) FAIL(TERSA_ERR_TRUNCATED, kat, "input ends before an item");
        uint8_t kt = r->data[kat];
        bool symbol = kt == TAG_SYMBOL;
        tersa_item k;
        k.v.str.ptr = NULL; /* set on every path; gcc cannot tell through short_string_item */
        k.v.str.len = 0;
        k.v.str.index = TERSA_NO_INDEX;
        /* keys are mostly short strings inline or references to the first
         * entries (REF0..) or the next 256 (REF8): read those here rather
         * than through read_string's call */
        if (kt >= TAG_STR0 && kt < TAG_SHAPE0 && !r->copy_strings) {
            r->pos++;
            if (!short_string_item(r, kt, kat, &r->st.key_slot, &k)) return false;
        } else if (kt < TAG_STR0) {
            plain = false;
            r->pos++;
            if (TERSA_UNLIKELY(kt >= r->st.nstrs)) FAIL(TERSA_ERR_BAD_REFERENCE, kat, "string reference beyond the table");
            ref_item(r, kt, &r->st.key_slot, &k);
        } else if (kt == TAG_REF8) {
            plain = false;
            r->pos++;
            if (!need(r, 1, kat)) return false;
            size_t ref = REF8_BASE + r->data[r->pos++];
            if (TERSA_UNLIKELY(ref >= r->st.nstrs)) FAIL(TERSA_ERR_BAD_REFERENCE, kat, "string reference beyond the table");
            ref_item(r, ref, &r->st.key_slot, &k);
        } else if (symbol) {
            plain = false;
            r->pos++;
            if (!read_required_string(r, &r->st.key_slot, &k)) return false;
        } else {
            plain = false;
            if (!is_string_tag(kt)) FAIL(TERSA_ERR_EXPECTED_STRING, kat, "a map key must be a string or symbol");
            r->pos++;
            if (!read_string(r, kt, kat, &r->st.key_slot, &k)) return false;
        }
        keys[i].ptr = k.v.str.ptr;
        keys[i].len = k.v.str.len;
        keys[i].symbol = symbol;
        key_strings[i] = k.v.str.index;
        /* Small shapes compare their keys directly: hashing each key would
         * cost more than comparing the few of equal length. */
        if (set) hashes[i] = tersa_reader_string_hash(r, k.v.str.ptr, k.v.str.len, k.v.str.index);
        if (set ? key_seen(keys, hashes, i, set, set_cap) : key_seen_small(keys, i, &seen))
            FAIL(TERSA_ERR_DUPLICATE_KEY, kat, "key repeated in a shape");
    }
    if (plain && memo_miss) memo_store(r, keys_at, keys, n);
shape:;
    tersa_slot *slots = NULL;
    uint32_t index;
    if (!tersa_state_add_shape(&r->st, keys, key_strings, n, 0, &slots, &index))
        return fail_at(r, TERSA_ERR_NOMEM, r->pos, "out of memory");
    item->type = TERSA_MAP;
    item->flags = plain && n ? TERSA_ITEM_NEW_SHAPE | TERSA_ITEM_PLAIN_KEYS : TERSA_ITEM_NEW_SHAPE;
    item->v.map.count = n;
    item->v.map.shape = index;
    item->v.map.keys = keys;
    item->v.map.key_strings = key_strings;
    return n == 0 || push_frame(r, RFRAME_MAP, slots, n, at);
}

/* A shape reference to index i (tag and index bytes consumed). */
static bool read_shape_ref(tersa_reader *r, size_t i, size_t at, tersa_item *item) {
    if (TERSA_UNLIKELY(i >= r->st.nshapes)) FAIL(TERSA_ERR_BAD_REFERENCE, at, "shape reference beyond the table");
    const shape *sh = &r->st.shapes[i];
    if (sh->nkeys > r->end - r->pos) FAIL(TERSA_ERR_LENGTH_EXCEEDS_INPUT, at, "shape has more values than bytes remain");
    item->type = TERSA_MAP;
    item->v.map.count = sh->nkeys;
    item->v.map.shape = (uint32_t)i;
    item->v.map.keys = sh->keys;
    item->v.map.key_strings = sh->key_strings;
    return sh->nkeys == 0 || push_frame(r, RFRAME_MAP, sh->slots, sh->nkeys, at);
}

/* ==========================================================================
 * The item reader
 * ========================================================================== */

/* The slot of the next item, after closing finished containers. *parent is
 * the index of the enclosing frame (an index: reading the item may grow the
 * stack and move it), or SIZE_MAX at the top level. */
TERSA_INLINE tersa_slot *claim_slot(tersa_reader *r, size_t *parent) {
    if (TERSA_LIKELY(r->depth)) {
        rframe *f = &r->stack[r->depth - 1];
        if (TERSA_LIKELY(f->remaining)) {
            f->remaining--;
            if (f->kind == RFRAME_MAP) {
                *parent = SIZE_MAX; /* only generic maps need their frame back */
                return f->slot + f->next++;
            }
            *parent = f->kind == RFRAME_GENERIC ? r->depth - 1 : SIZE_MAX;
            return f->slot;
        }
    }
    while (r->depth && r->stack[r->depth - 1].remaining == 0) pop_frame(r);
    if (TERSA_LIKELY(r->depth)) {
        rframe *f = &r->stack[r->depth - 1];
        f->remaining--;
        *parent = f->kind == RFRAME_GENERIC ? r->depth - 1 : SIZE_MAX;
        if (f->kind == RFRAME_MAP) return f->slot + f->next++;
        return f->slot;
    }
    *parent = SIZE_MAX;
    if (r->top_read) return NULL;
    r->top_read = true;
    return &r->st.root;
}

/* The scalar tags tersa_read_scalars takes besides F64 and INT, which it
 * tests first: DEC, INT_POS/NEG/DELTA, F32, DEC_X/DEC_DELTA, null and
 * booleans (SPEC 5.1). */
TERSA_INLINE bool is_other_run_scalar(uint8_t t) {
    return (uint8_t)(t - TAG_DEC0) < N_DEC0 || t == TAG_F32 || t == TAG_INT_POS || t == TAG_INT_NEG ||
           t == TAG_INT_DELTA || t == TAG_DEC_X || t == TAG_DEC_DELTA || t == TAG_NULL || t == TAG_TRUE ||
           t == TAG_FALSE;
}

/* TERSA_ITEM_SCALARS or TERSA_ITEM_STRINGS for an array whose elements (n > 0) start here. */
TERSA_INLINE uint32_t scalars_flag(const tersa_reader *r) {
    if (r->pos >= r->end) return 0;
    uint8_t t = r->data[r->pos];
    if (t == TAG_F64 || (uint8_t)(t - TAG_INT0) < N_INT0 || is_other_run_scalar(t)) return TERSA_ITEM_SCALARS;
    return is_string_tag(t) ? TERSA_ITEM_STRINGS : 0;
}

/* An array of 0-15 items counted in its tag (tag consumed). */
TERSA_INLINE bool small_array_item(tersa_reader *r, uint8_t t, size_t at, tersa_slot *slot, tersa_item *item) {
    if (!check_depth(r, at)) return false;
    size_t n = (size_t)(t - TAG_ARR0);
    if (n > r->end - r->pos) FAIL(TERSA_ERR_LENGTH_EXCEEDS_INPUT, at, "count exceeds the remaining input");
    item->type = TERSA_ARRAY;
    item->v.array.count = n;
    if (n && !push_frame(r, RFRAME_ARRAY, slot, n, at)) return false;
    if (n) item->flags = scalars_flag(r);
    return true;
}

/* A decimal float counted in its tag (DEC, tag consumed). */
TERSA_INLINE bool dec_item(tersa_reader *r, uint8_t t, size_t at, tersa_slot *slot, tersa_item *item) {
    uint64_t z;
    if (!read_varint(r, at, &z)) return false;
    int64_t m = unzigzag(z);
    if (m >= (1LL << 53) || m <= -(1LL << 53)) FAIL(TERSA_ERR_INVALID_VALUE, at, "decimal mantissa out of range");
    int e = (int)(t - TAG_DEC0) + DEC_EMIN;
    slot->dec_m = m;
    slot->dec_e = (int8_t)e;
    slot->has_dec = 1;
    item->type = TERSA_FLOAT;
    item->v.f = tersa_double_of_decimal(m, e);
    return true;
}

/* A non-negative integer above the tag's range (INT_POS, tag consumed). */
TERSA_INLINE bool int_pos_item(tersa_reader *r, size_t at, tersa_slot *slot, tersa_item *item) {
    uint64_t v;
    if (!read_varint(r, at, &v)) return false;
    if (v > UINT64_MAX - (INT_MAX_SMALL + 1)) FAIL(TERSA_ERR_INVALID_VALUE, at, "integer out of range");
    v += INT_MAX_SMALL + 1;
    if (v <= (uint64_t)INT64_MAX) {
        item->type = TERSA_INT;
        item->v.i = (int64_t)v;
        slot->int_val = (int64_t)v;
        slot->has_int = 1;
    } else {
        item->type = TERSA_UINT;
        item->v.u = v;
    }
    return true;
}

/* A negative integer below the tag's range (INT_NEG, tag consumed). */
TERSA_INLINE bool int_neg_item(tersa_reader *r, size_t at, tersa_slot *slot, tersa_item *item) {
    uint64_t v;
    if (!read_varint(r, at, &v)) return false;
    if (v > (1ull << 63) + (INT_MIN_SMALL - 1)) /* -9 - v must stay >= -2^63 */
        FAIL(TERSA_ERR_INVALID_VALUE, at, "integer out of range");
    int64_t n = (int64_t)(INT_MIN_SMALL - 1) - (int64_t)v;
    item->type = TERSA_INT;
    item->v.i = n;
    slot->int_val = n;
    slot->has_int = 1;
    return true;
}

/* An integer as the difference from its slot's last one (INT_DELTA, tag consumed). */
TERSA_INLINE bool int_delta_item(tersa_reader *r, size_t at, tersa_slot *slot, tersa_item *item) {
    if (!slot->has_int) FAIL(TERSA_ERR_BAD_REFERENCE, at, "integer delta without a previous integer");
    uint64_t z;
    if (!read_varint(r, at, &z)) return false;
    int64_t d = unzigzag(z), reg = slot->int_val;
    if ((d > 0 && reg > INT64_MAX - d) || (d < 0 && reg < INT64_MIN - d))
        FAIL(TERSA_ERR_INVALID_VALUE, at, "integer delta overflows int64");
    item->type = TERSA_INT;
    item->v.i = reg + d;
    slot->int_val = reg + d;
    return true;
}

_Static_assert(TAG_FALSE - TAG_NULL == TERSA_FALSE - TERSA_NULL && TAG_TRUE - TAG_NULL == TERSA_TRUE - TERSA_NULL,
               "null, false and true map to their item types by offset");

/* Every item but the commonest few (tersa_read handles those inline). */
TERSA_NOINLINE static bool read_item(tersa_reader *r, uint8_t t, size_t at, tersa_slot *slot, tersa_item *item) {
    switch (t >> 4) {
    case 0x0: case 0x1: case 0x2: case 0x3: /* REF */
    case 0x4: case 0x5:                     /* STR */
    case 0xC:                               /* PFX */
        item->type = TERSA_STRING;
        if (!read_string(r, t, at, slot, item)) return false;
        break;
    case 0x6: case 0x7: /* SHAPE */
        if (!check_depth(r, at) || !read_shape_ref(r, (size_t)(t - TAG_SHAPE0), at, item)) return false;
        break;
    case 0x8: /* ARR */
        if (!small_array_item(r, t, at, slot, item)) return false;
        break;
    case 0x9: /* MAPDEF */
        if (!check_depth(r, at)) return false;
        if (!read_mapdef(r, t, at, item)) return false;
        break;
    case 0xA: case 0xB: { /* INT */
        int64_t v = (int64_t)t - TAG_INT0 + INT_MIN_SMALL;
        slot->int_val = v;
        slot->has_int = 1;
        item->type = TERSA_INT;
        item->v.i = v;
        break;
    }
    case 0xD: /* DEC */
        if (!dec_item(r, t, at, slot, item)) return false;
        break;
    default:
        switch (t) {
        case TAG_NULL:
            item->type = TERSA_NULL;
            break;
        case TAG_FALSE:
            item->type = TERSA_FALSE;
            break;
        case TAG_TRUE:
            item->type = TERSA_TRUE;
            break;
        case TAG_F32:
            if (!need(r, 4, at)) return false;
            item->type = TERSA_FLOAT;
            item->v.f = tersa_widen_f32(load_le32(r->data + r->pos));
            r->pos += 4;
            break;
        case TAG_F64: {
            if (!need(r, 8, at)) return false;
            uint64_t bits = load_le64(r->data + r->pos);
            r->pos += 8;
            item->type = TERSA_FLOAT;
            memcpy(&item->v.f, &bits, 8);
            break;
        }
        case TAG_INT_POS:
            if (!int_pos_item(r, at, slot, item)) return false;
            break;
        case TAG_INT_NEG:
            if (!int_neg_item(r, at, slot, item)) return false;
            break;
        case TAG_INT_DELTA:
            if (!int_delta_item(r, at, slot, item)) return false;
            break;
        case TAG_DEC_X: case TAG_DEC_DELTA: {
            int e;
            int64_t m;
            uint64_t z;
            if (t == TAG_DEC_DELTA) {
                if (!slot->has_dec) FAIL(TERSA_ERR_BAD_REFERENCE, at, "decimal delta without a previous decimal");
                if (!read_varint(r, at, &z)) return false;
                int64_t d = unzigzag(z);
                /* |dec_m| < 2^53, so a delta beyond 2^54 leaves the range and a smaller one cannot overflow. */
                if (d > (1LL << 54) || d < -(1LL << 54)) FAIL(TERSA_ERR_INVALID_VALUE, at, "decimal mantissa out of range");
                m = slot->dec_m + d;
                e = slot->dec_e;
            } else {
                if (!need(r, 1, at)) return false;
                e = (int8_t)r->data[r->pos++];
                if (e < -22 || e > 22 || (e >= DEC_EMIN && e <= DEC_EMAX))
                    FAIL(TERSA_ERR_INVALID_VALUE, at, "decimal exponent out of range");
                if (!read_varint(r, at, &z)) return false;
                m = unzigzag(z);
            }
            if (m >= (1LL << 53) || m <= -(1LL << 53)) FAIL(TERSA_ERR_INVALID_VALUE, at, "decimal mantissa out of range");
            slot->dec_m = m;
            slot->dec_e = (int8_t)e;
            slot->has_dec = 1;
            item->type = TERSA_FLOAT;
            item->v.f = tersa_double_of_decimal(m, e);
            break;
        }
        case TAG_BIGINT_POS: case TAG_BIGINT_NEG: {
            size_t n = 0;
            if (!read_length(r, at, 0, &n)) return false;
            const uint8_t *mag = r->data + r->pos;
            r->pos += n;
            if (n == 0 || mag[n - 1] == 0) FAIL(TERSA_ERR_INVALID_VALUE, at, "big integer magnitude not minimal");
            bool negative = t == TAG_BIGINT_NEG;
            /* Positive must need more than 8 bytes; negative must exceed 2^63. */
            if (n <= 8) {
                uint64_t u = 0;
                for (size_t i = n; i > 0; i--) u = (u << 8) | mag[i - 1];
                if (!negative || u <= (1ull << 63)) FAIL(TERSA_ERR_INVALID_VALUE, at, "big integer fits a native form");
            }
            if (r->copy_strings) {
                mag = (const uint8_t *)tersa_arena_copy(&r->st.mem, mag, n);
                if (!mag) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
            }
            item->type = TERSA_BIGINT;
            item->v.big.negative = negative;
            item->v.big.mag = mag;
            item->v.big.len = n;
            break;
        }
        case TAG_SHAPE8:
            if (!check_depth(r, at) || !need(r, 1, at)) return false;
            r->pos += 1;
            if (!read_shape_ref(r, SHAPE8_BASE + r->data[r->pos - 1], at, item)) return false;
            break;
        case TAG_SHAPE16:
            if (!check_depth(r, at) || !need(r, 2, at)) return false;
            r->pos += 2;
            if (!read_shape_ref(r, SHAPE16_BASE + (r->data[r->pos - 2] | ((size_t)r->data[r->pos - 1] << 8)), at,
                                item))
                return false;
            break;
        case TAG_STR_LONG: case TAG_REF8: case TAG_REF16: case TAG_REF24: case TAG_PFX_LONG:
        case TAG_TS_STR: case TAG_TS_Z0: case TAG_TS_Z3:
            item->type = TERSA_STRING;
            if (!read_string(r, t, at, slot, item)) return false;
            break;
        case TAG_ARR_LONG: {
            if (!check_depth(r, at)) return false;
            size_t n = 0;
            if (!read_length(r, at, N_ARR0, &n)) return false;
            item->type = TERSA_ARRAY;
            item->v.array.count = n;
            if (!push_frame(r, RFRAME_ARRAY, slot, n, at)) return false;
            if (n) item->flags = scalars_flag(r);
            break;
        }
        case TAG_MAPDEF_LONG:
            if (!check_depth(r, at)) return false;
            if (!read_mapdef(r, t, at, item)) return false;
            break;
        case TAG_MAP_GEN: {
            if (!check_depth(r, at)) return false;
            size_t n = 0;
            if (!read_length(r, at, 0, &n)) return false;
            if (n > (r->end - r->pos) / 2) FAIL(TERSA_ERR_LENGTH_EXCEEDS_INPUT, at, "count exceeds the remaining input");
            item->type = TERSA_GENERIC_MAP;
            item->v.map.count = n;
            item->v.map.shape = TERSA_NO_INDEX;
            item->v.map.keys = NULL;
            item->v.map.key_strings = NULL;
            if (n && !push_frame(r, RFRAME_GENERIC, slot, 2 * n, at)) return false;
            break;
        }
        case TAG_BIN: {
            size_t n = 0;
            if (!read_length(r, at, 0, &n)) return false;
            const uint8_t *p = r->data + r->pos;
            r->pos += n;
            if (r->copy_strings) {
                p = (const uint8_t *)tersa_arena_copy(&r->st.mem, p, n);
                if (!p) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
            }
            item->type = TERSA_BINARY;
            item->v.bin.ptr = p;
            item->v.bin.len = n;
            break;
        }
        case TAG_EXT: {
            uint64_t type;
            if (!read_varint(r, at, &type)) return false;
            if (type > TERSA_MAX_EXT_TYPE) FAIL(TERSA_ERR_INVALID_VALUE, at, "extension type out of range");
            size_t n = 0;
            if (!read_length(r, at, 0, &n)) return false;
            const uint8_t *p = r->data + r->pos;
            if (TERSA_UNLIKELY(type > TERSA_EXT_APP_MAX)) {
                const char *why = tersa_well_known_check((uint32_t)type, p, n);
                if (why) FAIL(TERSA_ERR_INVALID_VALUE, at, why);
            }
            r->pos += n;
            if (r->copy_strings) {
                p = (const uint8_t *)tersa_arena_copy(&r->st.mem, p, n);
                if (!p) FAIL(TERSA_ERR_NOMEM, at, "out of memory");
            }
            item->type = TERSA_EXT;
            item->v.ext.type = (uint32_t)type;
            item->v.ext.ptr = p;
            item->v.ext.len = n;
            break;
        }
        case TAG_SYMBOL:
            if (!read_required_string(r, slot, item)) return false;
            item->type = TERSA_SYMBOL;
            item->tag = t;
            item->offset = r->base + at;
            break;
        case TAG_TIME: {
            if (!need(r, 1, at)) return false;
            uint8_t f = r->data[r->pos++];
            unsigned zone = f >> 1;
            if (zone > TERSA_ZONE_FLOATING) FAIL(TERSA_ERR_INVALID_VALUE, at, "invalid timestamp flags");
            tersa_timestamp *ts = &item->v.time;
            if (!ts_seconds(r, at, &ts->seconds)) return false;
            ts->nanos = 0;
            if (f & 1) {
                uint64_t ns;
                if (!read_varint(r, at, &ns)) return false;
                if (ns == 0 || ns > 999999999u) FAIL(TERSA_ERR_INVALID_VALUE, at, "nanoseconds out of range");
                ts->nanos = (uint32_t)ns;
            }
            ts->offset = 0;
            ts->zone = (uint8_t)zone;
            if (zone == TERSA_ZONE_OFFSET) {
                int32_t off;
                if (!read_offset(r, at, &off)) return false;
                int64_t local = ts->seconds + (int64_t)off * 60;
                if (local < TERSA_MIN_SECONDS || local > TERSA_MAX_SECONDS)
                    FAIL(TERSA_ERR_INVALID_VALUE, at, "local time outside years 0001-9999");
                ts->offset = (int16_t)off;
            }
            item->type = TERSA_TIME;
            break;
        }
        default:
            FAIL(TERSA_ERR_INVALID_TAG, at, "reserved tag");
        }
    }
    return true;
}

/* A string of 0-31 bytes inline after its tag (t in STR0.., tag consumed,
 * strings not copied). */
TERSA_INLINE bool short_string_item(tersa_reader *r, uint8_t t, size_t at, tersa_slot *slot, tersa_item *item) {
    size_t n = (size_t)(t - TAG_STR0);
    if (TERSA_UNLIKELY(r->end - r->pos < n)) FAIL(TERSA_ERR_TRUNCATED, at, "input ends inside an item");
    const uint8_t *s = r->data + r->pos;
    bool ascii;
    if (TERSA_LIKELY(ascii_in(s, n, r->end - r->pos)))
        ascii = true;
    else if (TERSA_UNLIKELY(!tersa_utf8_valid(s, n, &ascii)))
        FAIL(TERSA_ERR_INVALID_UTF8, at, "string is not valid UTF-8");
    r->pos += n;
    uint32_t index = TERSA_NO_INDEX;
    if (n >= MIN_TABLE_LEN && TERSA_LIKELY(r->st.nstrs < TERSA_MAX_STRINGS)) {
        index = (uint32_t)r->st.nstrs;
        if (!add_string(r, s, n, ascii)) return false;
    }
    tersa_state_note_string(&r->st, slot, s, n);
    item->type = TERSA_STRING;
    item->v.str.ptr = (const char *)s;
    item->v.str.len = n;
    item->v.str.index = index;
    item->flags = ascii ? TERSA_ITEM_ASCII : 0;
    return true;
}

/* A reference by REF8 or REF16 (tag consumed). */
TERSA_INLINE bool ref_8_16_item(tersa_reader *r, uint8_t t, size_t at, tersa_slot *slot, tersa_item *item) {
    size_t k = t == TAG_REF8 ? 1 : 2;
    if (TERSA_UNLIKELY(r->end - r->pos < k)) FAIL(TERSA_ERR_TRUNCATED, at, "input ends inside an item");
    const uint8_t *p = r->data + r->pos;
    size_t i = t == TAG_REF8 ? REF8_BASE + p[0] : REF16_BASE + (p[0] | ((size_t)p[1] << 8));
    r->pos += k;
    if (TERSA_UNLIKELY(i >= r->st.nstrs)) FAIL(TERSA_ERR_BAD_REFERENCE, at, "string reference beyond the table");
    ref_item(r, i, slot, item);
    return true;
}

bool tersa_read(tersa_reader *r, tersa_item *item) {
    if (TERSA_UNLIKELY(!r->started || r->err.code != TERSA_OK)) {
        if (r->err.code != TERSA_OK) return false;
        return fail_at(r, TERSA_ERR_USAGE, r->pos, "reader not started");
    }
    size_t parent;
    tersa_slot *slot = claim_slot(r, &parent);
    if (TERSA_UNLIKELY(!slot)) return fail_at(r, TERSA_ERR_USAGE, r->pos, "the value has been read completely");
    size_t at = r->pos;
    if (TERSA_UNLIKELY(at >= r->end)) FAIL(TERSA_ERR_TRUNCATED, at, "input ends before an item");
    uint8_t t = r->data[at];
    r->pos = at + 1;
    item->tag = t;
    item->offset = r->base + at;
    item->flags = 0;
    /* The commonest items inline: short references, short strings, small ints. */
    if (t < TAG_STR0) {
        if (TERSA_UNLIKELY(t >= r->st.nstrs)) FAIL(TERSA_ERR_BAD_REFERENCE, at, "string reference beyond the table");
        ref_item(r, t, slot, item);
    } else if (t < TAG_SHAPE0 && !r->copy_strings) {
        if (!short_string_item(r, t, at, slot, item)) return false;
    } else if (t < TAG_INT0) {
        /* arrays counted in their tag (canada's pairs), else shapes and map definitions */
        if ((uint8_t)(t - TAG_ARR0) < N_ARR0 ? !small_array_item(r, t, at, slot, item) : !read_item(r, t, at, slot, item))
            return false;
    } else if (t < TAG_PFX0) {
        int64_t v = (int64_t)t - TAG_INT0 + INT_MIN_SMALL;
        slot->int_val = v;
        slot->has_int = 1;
        item->type = TERSA_INT;
        item->v.i = v;
    } else if (t == TAG_F64 && TERSA_LIKELY(r->end - r->pos >= 8)) {
        /* Raw doubles are most items of float-dense data (canada.json). */
        uint64_t bits = load_le64(r->data + r->pos);
        r->pos += 8;
        item->type = TERSA_FLOAT;
        memcpy(&item->v.f, &bits, 8);
    } else if (t == TAG_REF16 || t == TAG_REF8) {
        /* References past the first 64 entries: most strings of documents
         * with thousands of distinct values (csv_table). */
        if (!ref_8_16_item(r, t, at, slot, item)) return false;
    } else if (t < TAG_DEC0) {
        /* prefix strings */
        item->type = TERSA_STRING;
        if (!read_string(r, t, at, slot, item)) return false;
    } else if (t < TAG_NULL) {
        /* decimals (prices, readings), then the literals and larger integers
         * of small records (tiny_messages: a few of each per message) */
        if (!dec_item(r, t, at, slot, item)) return false;
    } else if (t <= TAG_TRUE) {
        item->type = (tersa_type)(t - TAG_NULL);
    } else if (t == TAG_INT_POS) {
        if (!int_pos_item(r, at, slot, item)) return false;
    } else if (!read_item(r, t, at, slot, item)) {
        return false;
    }
    /* A generic map's keys sit at odd remaining counts; its last key cannot
     * repeat a later one, so a one-pair map (or the last pair) records nothing. */
    if (TERSA_UNLIKELY(parent != SIZE_MAX) && (r->stack[parent].remaining & 1) &&
        (r->stack[parent].remaining > 1 || r->stack[parent].keys_used))
        return tersa_reader_note_generic_key(r, &r->stack[parent], item);
    return true;
}

/* The item that ends a run failed: the run's items so far are counted. */
TERSA_NOINLINE static bool run_failed(rframe *f, size_t k, size_t *count) {
    f->remaining -= k;
    *count = k;
    return false;
}

/* tersa_read_scalars, and with `strings` tersa_read_leaves. */
TERSA_INLINE bool read_run(tersa_reader *r, tersa_item *items, size_t max, size_t *count, bool strings) {
    *count = 0;
    if (TERSA_UNLIKELY(!r->started || r->err.code != TERSA_OK)) {
        if (r->err.code != TERSA_OK) return false;
        return fail_at(r, TERSA_ERR_USAGE, r->pos, "reader not started");
    }
    if (!r->depth) return true;
    rframe *f = &r->stack[r->depth - 1];
    if (f->kind != RFRAME_ARRAY) return true;
    size_t n = f->remaining < max ? f->remaining : max, k = 0;
    tersa_slot *slot = f->slot;
    while (k < n) {
        size_t at = r->pos;
        if (at >= r->end) break; /* tersa_read reports it */
        uint8_t t = r->data[at];
        tersa_item *item = &items[k];
        item->tag = t;
        item->offset = r->base + at;
        item->flags = 0;
        if (t == TAG_F64 && TERSA_LIKELY(r->end - at > 8)) {
            uint64_t bits = load_le64(r->data + at + 1);
            r->pos = at + 9;
            item->type = TERSA_FLOAT;
            memcpy(&item->v.f, &bits, 8);
        } else if ((uint8_t)(t - TAG_INT0) < N_INT0) {
            int64_t v = (int64_t)t - TAG_INT0 + INT_MIN_SMALL;
            r->pos = at + 1;
            slot->int_val = v;
            slot->has_int = 1;
            item->type = TERSA_INT;
            item->v.i = v;
        } else if ((uint8_t)(t - TAG_INT_POS) < 3) {
            /* INT_POS, INT_NEG, INT_DELTA: ids, counts and series of larger integers */
            r->pos = at + 1;
            if (!(t == TAG_INT_POS   ? int_pos_item(r, at, slot, item)
                  : t == TAG_INT_NEG ? int_neg_item(r, at, slot, item)
                                     : int_delta_item(r, at, slot, item)))
                return run_failed(f, k, count);
        } else if ((uint8_t)(t - TAG_DEC0) < N_DEC0) {
            /* decimals counted in their tag: prices, readings */
            r->pos = at + 1;
            if (!dec_item(r, t, at, slot, item)) return run_failed(f, k, count);
        } else if (strings && t < TAG_STR0) {
            r->pos = at + 1;
            if (TERSA_UNLIKELY(t >= r->st.nstrs)) {
                fail_at(r, TERSA_ERR_BAD_REFERENCE, at, "string reference beyond the table");
                return run_failed(f, k, count);
            }
            ref_item(r, t, slot, item);
        } else if (strings && t < TAG_SHAPE0 && !r->copy_strings) {
            r->pos = at + 1;
            if (!short_string_item(r, t, at, slot, item)) return run_failed(f, k, count);
        } else if (strings && (t == TAG_REF16 || t == TAG_REF8)) {
            r->pos = at + 1;
            if (!ref_8_16_item(r, t, at, slot, item)) return run_failed(f, k, count);
        } else if (strings && is_string_tag(t)) { /* the less common forms */
            r->pos = at + 1;
            item->type = TERSA_STRING;
            if (!read_string(r, t, at, slot, item)) return run_failed(f, k, count);
        } else if (!is_other_run_scalar(t)) {
            break;
        } else if (r->pos = at + 1, !read_item(r, t, at, slot, item)) {
            return run_failed(f, k, count);
        }
        k++;
    }
    f->remaining -= k;
    *count = k;
    return true;
}

bool tersa_read_scalars(tersa_reader *r, tersa_item *items, size_t max, size_t *count) {
    return read_run(r, items, max, count, false);
}

bool tersa_read_leaves(tersa_reader *r, tersa_item *items, size_t max, size_t *count) {
    return read_run(r, items, max, count, true);
}

bool tersa_skip(tersa_reader *r) {
    size_t pending = 1;
    tersa_item item;
    while (pending) {
        if (!tersa_read(r, &item)) return false;
        pending--;
        if (item.type == TERSA_ARRAY)
            pending += item.v.array.count;
        else if (item.type == TERSA_MAP)
            pending += item.v.map.count;
        else if (item.type == TERSA_GENERIC_MAP)
            pending += 2 * item.v.map.count;
    }
    return true;
}

