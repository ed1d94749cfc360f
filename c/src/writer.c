/*
 * writer.c - the streaming writer's items: canonical encoding (SPEC section
 * 7). Numbers are in writer_numbers.h (included here), the indexes that find
 * table entries in writer_index.c, the lifecycle, header and stream frames
 * in writer_frames.c.
 */
#include "writer_internal.h"
#include "timestamp_parse.h"

/* ==========================================================================
 * Positions and slots (SPEC 4.3)
 * ========================================================================== */

/* next_slot when the open container has no room left: an error, a full
 * container, or a top-level value. */
TERSA_NOINLINE static tersa_slot *next_slot_slow(tersa_writer *w) {
    if (w->err.code != TERSA_OK) return NULL;
    if (w->depth) {
        fail(w, TERSA_ERR_USAGE, "more items than the container's count");
        return NULL;
    }
    if (TERSA_UNLIKELY(!w->started)) {
        fail(w, TERSA_ERR_USAGE, "tersa_writer_start was not called");
        return NULL;
    }
    if (w->flags & TERSA_WRITE_STREAM) {
        if (!w->in_frame || w->top_values) {
            fail(w, TERSA_ERR_USAGE, "stream values must each be inside tersa_write_frame_begin/end");
            return NULL;
        }
    } else if (w->top_values) {
        fail(w, TERSA_ERR_USAGE, "a single-value buffer holds one top-level value");
        return NULL;
    }
    w->top_values++;
    return &w->st.root;
}

/* Claim the next position and return its slot, or NULL on misuse. */
TERSA_INLINE tersa_slot *next_slot(tersa_writer *w) {
    if (TERSA_LIKELY(w->cur_left)) {
        w->cur_left--;
        tersa_slot *s = w->cur;
        w->cur += w->cur_step;
        return s;
    }
    return next_slot_slow(w);
}

/* ==========================================================================
 * Distinct generic-map keys (keys.h)
 * ========================================================================== */

TERSA_INLINE void update_keywatch(tersa_writer *w) { w->keywatch = w->cur_generic || w->recording; }

/* Is the item just claimed a key of the innermost generic map? Its 2n
 * positions alternate key, value, so claiming a key leaves an odd count. */
TERSA_INLINE bool at_key(const tersa_writer *w) { return w->cur_generic && (w->cur_left & 1); }

/* The identity of a key starting at `start` is complete: add it to the
 * innermost generic map's keys. */
static bool key_complete(tersa_writer *w, size_t start) {
    int added = tersa_kid_insert(&w->kids, &w->stack[w->depth - 1].kids, start);
    if (added > 0) return true;
    if (added < 0) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    return fail(w, TERSA_ERR_UNREPRESENTABLE, "duplicate map key (two keys equal as Tersa values)");
}

/* A scalar item just written while keywatch is set: record its identity if
 * it is a key or part of one. The identity is the type byte, `fixed` (a
 * field of fixed width for the type), then unless n is SIZE_MAX a length and
 * n bytes. */
TERSA_NOINLINE static bool key_scalar(tersa_writer *w, uint8_t type, const void *fixed, size_t fixed_len, const void *p,
                                     size_t n) {
    bool starts = at_key(w);
    if (!starts && !w->recording) return true;
    size_t start = w->kids.len;
    bool ok = tersa_kid_append(&w->kids, &type, 1) && tersa_kid_append(&w->kids, fixed, fixed_len) &&
              (n == SIZE_MAX || tersa_kid_append_bytes(&w->kids, TERSA_KID_BINARY, p, n));
    if (!ok) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    return !starts || key_complete(w, start);
}

TERSA_NOINLINE static bool key_word(tersa_writer *w, uint8_t type, uint64_t word) {
    uint8_t b[8];
    store_le64(b, word);
    return key_scalar(w, type, b, 8, NULL, SIZE_MAX);
}

/* Identity hooks for the scalar writers: nothing unless keywatch is set. */
#define KEY_WORD(w, type, word) (TERSA_LIKELY(!(w)->keywatch) || key_word((w), (type), (uint64_t)(word)))
#define KEY_BYTES(w, type, p, n) (TERSA_LIKELY(!(w)->keywatch) || key_scalar((w), (type), NULL, 0, (p), (n)))

/* A container opening while keywatch is set: its header's identity, and
 * whether it starts a key (*starts) and where (*start). */
TERSA_NOINLINE static bool key_container(tersa_writer *w, uint8_t type, size_t count, const tersa_key *keys,
                                        bool *starts, size_t *start) {
    *starts = at_key(w);
    *start = w->kids.len;
    if (!*starts && !w->recording) return true;
    bool ok = tersa_kid_append_word(&w->kids, type, count);
    for (size_t i = 0; ok && keys && i < count; i++)
        ok = tersa_kid_append_bytes(&w->kids, keys[i].symbol ? TERSA_KID_SYMBOL : TERSA_KID_STRING, keys[i].ptr,
                                   keys[i].len);
    if (!ok) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    return true;
}

/* Close every open container: an error or a new buffer can leave some open. */
void tersa_writer_release_frames(tersa_writer *w) {
    for (size_t i = 0; i < w->depth; i++)
        if (w->stack[i].kind == FRAME_GENERIC) tersa_kid_close(&w->kids, &w->stack[i].kids, true);
    tersa_kid_reset(&w->kids);
    w->depth = 0;
    w->recording = 0;
    w->cur_generic = w->keywatch = false;
}

TERSA_NOINLINE static bool grow_stack(tersa_writer *w) {
    if (!tersa_grow_array(w->alloc, (void **)&w->stack, &w->stack_cap, w->depth + 1, sizeof(wframe)))
        return fail(w, TERSA_ERR_NOMEM, "out of memory");
    return true;
}

/* The frame of a container of `count` items (ends_key: it closes a recorded
 * generic-map key), its parent's position saved and the slot of its first
 * item current; NULL if the stack cannot grow. */
TERSA_INLINE wframe *enter_frame(tersa_writer *w, uint8_t kind, bool ends_key, tersa_slot *slot, size_t count) {
    if (TERSA_UNLIKELY(w->depth == w->stack_cap) && !grow_stack(w)) return NULL;
    if (w->depth) {
        wframe *parent = &w->stack[w->depth - 1];
        parent->cur = w->cur;
        parent->left = w->cur_left;
    }
    wframe *f = &w->stack[w->depth++];
    f->kind = kind;
    f->ends_key = ends_key;
    w->cur = slot;
    w->cur_left = count;
    w->cur_step = kind == FRAME_MAP;
    return f;
}

/* push_frame for a generic map, or while keywatch is set. */
TERSA_NOINLINE static bool push_watched(tersa_writer *w, uint8_t kind, tersa_slot *slot, size_t count, uint8_t identity,
                                       const tersa_key *keys) {
    bool starts = false;
    size_t start = 0;
    if (w->keywatch && !key_container(w, identity, kind == FRAME_GENERIC ? count / 2 : count, keys, &starts, &start))
        return false;
    wframe *f = enter_frame(w, kind, starts, slot, count);
    if (!f) return false;
    f->key_start = start;
    if (starts) w->recording++;
    if (kind == FRAME_GENERIC) tersa_kid_open(&w->kids, &f->kids);
    w->cur_generic = kind == FRAME_GENERIC;
    update_keywatch(w);
    return true;
}

/* Open a container of `count` items. With keywatch set, its identity
 * (`identity`, then a shaped map's `keys`) is recorded if it is or is part
 * of a generic-map key. */
TERSA_INLINE bool push_frame(tersa_writer *w, uint8_t kind, tersa_slot *slot, size_t count, uint8_t identity,
                            const tersa_key *keys) {
    if (TERSA_UNLIKELY(w->keywatch) || TERSA_UNLIKELY(kind == FRAME_GENERIC))
        return push_watched(w, kind, slot, count, identity, keys);
    if (!enter_frame(w, kind, false, slot, count)) return false;
    return true;
}

/* ==========================================================================
 * Scalars
 * ========================================================================== */

bool tersa_write_null(tersa_writer *w) {
    if (!next_slot(w) || !reserve(w, 1)) return false;
    put_byte(w, TAG_NULL);
    return KEY_WORD(w, TERSA_KID_NULL, 0);
}

bool tersa_write_bool(tersa_writer *w, bool value) {
    if (!next_slot(w) || !reserve(w, 1)) return false;
    put_byte(w, value ? TAG_TRUE : TAG_FALSE);
    return KEY_WORD(w, value ? TERSA_KID_TRUE : TERSA_KID_FALSE, 0);
}

#include "writer_numbers.h"

/* ==========================================================================
 * Strings (SPEC 7, strings)
 * ========================================================================== */

/* Every table index has a REF..REF16 reference, of 1 to 3 bytes: never
 * longer than a string of MIN_TABLE_LEN or more bytes written inline, so a
 * string found in the table is always written as a reference (SPEC 7). */
_Static_assert(TERSA_MAX_STRINGS <= REF24_BASE && MIN_TABLE_LEN >= 2, "a reference must never be longer than the string");

/* The index of the lowest non-zero byte of x != 0 (the first of 8 bytes
 * loaded little-endian that differ). */
TERSA_INLINE size_t first_set_byte(uint64_t x) {
    uint32_t low = (uint32_t)x;
    return low ? ctz32(low) / 8 : 4 + ctz32((uint32_t)(x >> 32)) / 8;
}

TERSA_INLINE size_t common_prefix(const uint8_t *base, size_t base_len, const uint8_t *p, size_t n) {
    /* Prefixes of fewer than 2 bytes never pay: most candidates stop here. */
    if (base_len < 2 || n < 2 || base[0] != p[0] || base[1] != p[1]) return 0;
    size_t limit = base_len < n ? base_len : n;
    if (limit > MAX_PREFIX) limit = MAX_PREFIX;
    size_t i = 0;
    for (;;) {
        if (i + 8 > limit) {
            while (i < limit && base[i] == p[i]) i++;
            break;
        }
        uint64_t x = load_le64(base + i) ^ load_le64(p + i);
        if (x) {
            i += first_set_byte(x);
            break;
        }
        i += 8;
    }
    while (i > 0 && !utf8_boundary(p, n, i)) i--;
    return i;
}

/* The output position is read once and stored once: a byte store through
 * w->buf may alias w->len, so put_byte reloads it after each byte. */
TERSA_INLINE size_t ref_put(uint8_t *o, size_t i) {
    if (i < REF8_BASE) {
        o[0] = (uint8_t)(TAG_REF0 + i);
        return 1;
    }
    if (i < REF16_BASE) {
        o[0] = TAG_REF8;
        o[1] = (uint8_t)(i - REF8_BASE);
        return 2;
    }
    o[0] = TAG_REF16;
    o[1] = (uint8_t)(i - REF16_BASE);
    o[2] = (uint8_t)((i - REF16_BASE) >> 8);
    return 3;
}

TERSA_INLINE void put_ref(tersa_writer *w, size_t i) { w->len += ref_put(w->buf + w->len, i); }

TERSA_INLINE void put_ts(tersa_writer *w, const ts_parts *t) {
    uint8_t *o = w->buf + w->len, *start = o;
    if (t->variant == 0) {
        *o++ = TAG_TS_Z0;
    } else if (t->variant == 3) {
        *o++ = TAG_TS_Z3;
    } else {
        o[0] = TAG_TS_STR;
        o[1] = t->variant;
        o += 2;
    }
    o += varint_put_room9(o, zigzag(t->seconds - w->st.last_ts));
    w->st.last_ts = t->seconds;
    if (t->variant & TSV_DIGITS) o += varint_put_room9(o, t->frac);
    if (t->variant & TSV_NUMERIC_OFFSET) o += varint_put_room9(o, zigzag(t->offset));
    w->len += (size_t)(o - start);
}

/* Keep the registers and (for strings of 2+ bytes) the table pointing at
 * a stable copy of a string just written in a non-reference form, or at p
 * itself when `borrow` (the caller lends p's bytes until the next
 * tersa_writer_settle_borrowed: tersa_write_string_utf8_borrowed). Every
 * pointer to lent bytes starts at a borrowed entry's, so that settling can
 * find and move them all: a full table, which takes no entry, gets a copy.
 * `islot` is the index slot for a new entry (NULL: none, the string is
 * already in the table at a lower index or is shorter than 2 bytes). */
TERSA_INLINE bool keep_string(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, uint64_t h,
                             uint64_t *islot, const uint8_t **stable, bool borrow) {
    const uint8_t *s;
    if (n >= MIN_TABLE_LEN) {
        borrow = borrow && TERSA_LIKELY(w->st.nstrs < TERSA_MAX_STRINGS);
        s = borrow ? p : (const uint8_t *)tersa_arena_copy(&w->st.mem, p, n);
        if (TERSA_UNLIKELY(!s)) return fail(w, TERSA_ERR_NOMEM, "out of memory");
        if (borrow) w->lent = true;
        add_string_entry_lent(w, s, n, h, islot, borrow);
    } else {
        s = n ? &tersa_single_bytes[p[0]] : tersa_single_bytes;
    }
    tersa_state_note_string(&w->st, slot, s, n);
    if (stable) *stable = s;
    return true;
}

/* Could a prefix of `base` save bytes for p (2 shared bytes at least)? */
TERSA_INLINE bool prefix_candidate(const uint8_t *base, size_t base_len, const uint8_t *p) {
    return base_len >= 2 && base[0] == p[0] && base[1] == p[1];
}

/* Timestamp strings, prefix strings and long strings. */
TERSA_NOINLINE static bool write_str_slow(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, uint64_t h,
                                         uint64_t *islot, const uint8_t **stable, bool borrow) {
    /* A timestamp form: tag, variant, three varints of which the last may
     * start 16 bytes in; a prefix or inline form: 2 bytes, a varint, n bytes. */
    if (!reserve(w, 25 + n)) return false;
    ts_parts ts;
    if (n >= 10 && n <= 35 && p[4] == '-' && ts_parse_memo(p, n, &ts, &w->ts_day)) {
        put_ts(w, &ts);
        return keep_string(w, slot, p, n, h, islot, stable, borrow);
    }
    size_t inline_size = (n < N_STR0 ? 1 : 1 + varint_size(n - N_STR0)) + n;
    size_t best = 0;
    uint8_t base_flag = 0;
    if (slot->has_str) best = common_prefix(slot->str, slot->str_len, p, n);
    if (w->st.has_last) {
        size_t l = common_prefix(w->st.last, w->st.last_len, p, n);
        if (l > best) {
            best = l;
            base_flag = 0x80;
        }
    }
    size_t suffix = n - best;
    size_t pfx_size = best ? (suffix < N_PFX0 ? 2 : 2 + varint_size(suffix - N_PFX0)) + suffix : SIZE_MAX;
    uint8_t *o = w->buf + w->len, *start = o;
    const uint8_t *body = p;
    size_t body_len = n;
    if (pfx_size < inline_size) {
        o[1] = (uint8_t)(base_flag | best);
        if (suffix < N_PFX0) {
            o[0] = (uint8_t)(TAG_PFX0 + suffix);
            o += 2;
        } else {
            o[0] = TAG_PFX_LONG;
            o += 2;
            o += varint_put_room9(o, suffix - N_PFX0);
        }
        body = p + best;
        body_len = suffix;
    } else if (n < N_STR0) {
        *o++ = (uint8_t)(TAG_STR0 + n);
    } else {
        *o++ = TAG_STR_LONG;
        o += varint_put_room9(o, n - N_STR0);
    }
    copy_bytes(o, body, body_len);
    w->len += (size_t)(o - start) + body_len;
    return keep_string(w, slot, p, n, h, islot, stable, borrow);
}

/* A string of MIN_TABLE_LEN bytes or more that is not in the table (h its
 * hash, islot the index slot str_find left), written in `slot`. */
TERSA_INLINE bool write_new_str_b(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, uint64_t h,
                                  uint64_t *islot, const uint8_t **stable, bool borrow) {
    /* A new entry follows: room for it, and its index slot found again if
     * the index grew. */
    if (strings_full(w)) {
        if (!tersa_writer_grow_strings(w)) return false;
        str_find(w, p, n, h, &islot);
    }
    /* Anything but a short plain string that no register shares a prefix with. */
    if (n >= N_STR0 || (n >= 10 && p[4] == '-') || (slot->has_str && prefix_candidate(slot->str, slot->str_len, p)) ||
        (w->st.has_last && prefix_candidate(w->st.last, w->st.last_len, p)))
        return write_str_slow(w, slot, p, n, h, islot, stable, borrow);
    if (!reserve(w, 1 + N_STR0)) return false;
    uint8_t *o = w->buf + w->len;
    o[0] = (uint8_t)(TAG_STR0 + n);
    copy_bytes(o + 1, p, n);
    w->len += 1 + n;
    return keep_string(w, slot, p, n, h, islot, stable, borrow);
}

/* write_new_str_b of a string the writer copies. */
TERSA_INLINE bool write_new_str(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, uint64_t h,
                                uint64_t *islot, const uint8_t **stable) {
    return write_new_str_b(w, slot, p, n, h, islot, stable, false);
}

/* Write one string item in `slot` (SPEC 7, strings); on success *stable
 * points at bytes that live as long as this buffer's encoding (shape keys).
 * `known_hash`, if not NULL, is hash_bytes(p, n, w->seed), already computed;
 * `borrow`: a new entry may point at p (keep_string). */
TERSA_INLINE bool write_str_item_hb(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, const uint8_t **stable,
                                   const uint64_t *known_hash, bool borrow) {
    if (TERSA_LIKELY(n >= MIN_TABLE_LEN)) {
        uint64_t h = known_hash ? *known_hash : hash_bytes(p, n, w->seed), *islot = NULL;
        uint32_t found = str_find(w, p, n, h, &islot);
        if (found == TERSA_NO_INDEX) return write_new_str_b(w, slot, p, n, h, islot, stable, borrow);
        if (!reserve(w, 3)) return false;
        put_ref(w, found);
        const str_entry *e = &w->st.strs[found];
        tersa_state_note_string(&w->st, slot, e->ptr, e->len);
        if (stable) *stable = e->ptr;
        return true;
    }
    if (!reserve(w, 1 + N_STR0)) return false;
    uint8_t *o = w->buf + w->len;
    o[0] = (uint8_t)(TAG_STR0 + n);
    copy_bytes(o + 1, p, n);
    w->len += 1 + n;
    return keep_string(w, slot, p, n, 0, NULL, stable, false);
}

/* write_str_item_hb of a string the writer copies. */
TERSA_INLINE bool write_str_item_h(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, const uint8_t **stable,
                                  const uint64_t *known_hash) {
    return write_str_item_hb(w, slot, p, n, stable, known_hash, false);
}

TERSA_INLINE bool write_str_item(tersa_writer *w, tersa_slot *slot, const uint8_t *p, size_t n, const uint8_t **stable) {
    return write_str_item_hb(w, slot, p, n, stable, NULL, false);
}

static bool check_utf8(tersa_writer *w, const char *ptr, size_t len, bool *ascii) {
    if (tersa_utf8_valid((const uint8_t *)ptr, len, ascii)) return true;
    return fail(w, TERSA_ERR_UNREPRESENTABLE, "string is not valid UTF-8");
}

/* A string value whose UTF-8 is known to be valid (borrow: keep_string). */
TERSA_INLINE bool write_string_value(tersa_writer *w, const char *ptr, size_t len, bool borrow) {
    tersa_slot *slot = next_slot(w);
    return slot && write_str_item_hb(w, slot, (const uint8_t *)ptr, len, NULL, NULL, borrow) &&
           KEY_BYTES(w, TERSA_KID_STRING, ptr, len);
}

/* Whether the borrowed calls lend (tersa_writer_reset_tables sets it: not
 * in a stream, whose tables outlive each frame's call; cleared once
 * settling has cost its credit). */
TERSA_INLINE bool may_borrow(const tersa_writer *w) { return w->may_lend; }

bool tersa_write_string_utf8(tersa_writer *w, const char *ptr, size_t len) {
    return write_string_value(w, ptr, len, false);
}

bool tersa_write_string_utf8_borrowed(tersa_writer *w, const char *ptr, size_t len) {
    return write_string_value(w, ptr, len, may_borrow(w));
}

bool tersa_write_string(tersa_writer *w, const char *ptr, size_t len) {
    bool ascii;
    return check_utf8(w, ptr, len, &ascii) && write_string_value(w, ptr, len, false);
}

bool tersa_write_symbol(tersa_writer *w, const char *ptr, size_t len) {
    bool ascii;
    if (!check_utf8(w, ptr, len, &ascii)) return false;
    tersa_slot *slot = next_slot(w);
    if (!slot || !reserve(w, 1)) return false;
    put_byte(w, TAG_SYMBOL);
    return write_str_item(w, slot, (const uint8_t *)ptr, len, NULL) && KEY_BYTES(w, TERSA_KID_SYMBOL, ptr, len);
}

/* ==========================================================================
 * Binary, extensions, timestamps
 * ========================================================================== */

bool tersa_write_binary(tersa_writer *w, const void *ptr, size_t len) {
    if (!next_slot(w) || !reserve(w, 10 + len)) return false;
    put_byte(w, TAG_BIN);
    put_varint(w, len);
    put_bytes(w, ptr, len);
    return KEY_BYTES(w, TERSA_KID_BINARY, ptr, len);
}

bool tersa_writer_fail(tersa_writer *w, tersa_code code, const char *message) { return fail(w, code, message); }

bool tersa_write_ext(tersa_writer *w, uint32_t type, const void *ptr, size_t len) {
    if (type > TERSA_MAX_EXT_TYPE) return fail(w, TERSA_ERR_UNREPRESENTABLE, "extension type above 65535");
    /* Only well_known.c writes reserved types, so that their payloads are valid. */
    if (type > TERSA_EXT_APP_MAX)
        return fail(w, TERSA_ERR_USAGE, "extension types 0xFF00-0xFFFF are reserved for the well-known types");
    return tersa_write_ext_unchecked(w, type, ptr, len);
}

bool tersa_write_ext_unchecked(tersa_writer *w, uint32_t type, const void *ptr, size_t len) {
    if (!next_slot(w) || !reserve(w, 20 + len)) return false;
    put_byte(w, TAG_EXT);
    put_varint(w, type);
    put_varint(w, len);
    put_bytes(w, ptr, len);
    if (TERSA_LIKELY(!w->keywatch)) return true;
    uint8_t t[4];
    store_le32(t, type);
    return key_scalar(w, TERSA_KID_EXT, t, 4, ptr, len);
}

bool tersa_write_timestamp(tersa_writer *w, const tersa_timestamp *ts) {
    if (ts->seconds < TERSA_MIN_SECONDS || ts->seconds > TERSA_MAX_SECONDS)
        return fail(w, TERSA_ERR_UNREPRESENTABLE, "timestamp outside years 0001-9999");
    if (ts->nanos > 999999999u) return fail(w, TERSA_ERR_UNREPRESENTABLE, "nanoseconds above 999999999");
    if (ts->zone > TERSA_ZONE_FLOATING) return fail(w, TERSA_ERR_UNREPRESENTABLE, "invalid timestamp zone");
    if (ts->zone == TERSA_ZONE_OFFSET) {
        if (ts->offset < -TERSA_MAX_OFFSET || ts->offset > TERSA_MAX_OFFSET)
            return fail(w, TERSA_ERR_UNREPRESENTABLE, "UTC offset beyond 23:59");
        int64_t local = ts->seconds + (int64_t)ts->offset * 60;
        if (local < TERSA_MIN_SECONDS || local > TERSA_MAX_SECONDS)
            return fail(w, TERSA_ERR_UNREPRESENTABLE, "local time outside years 0001-9999");
    }
    if (!next_slot(w) || !reserve(w, 2 + 9 + 5 + 9)) return false;
    put_byte(w, TAG_TIME);
    put_byte(w, (uint8_t)((ts->nanos ? 1 : 0) | (ts->zone << 1)));
    put_varint(w, zigzag(ts->seconds - w->st.last_ts));
    w->st.last_ts = ts->seconds;
    if (ts->nanos) put_varint(w, ts->nanos);
    if (ts->zone == TERSA_ZONE_OFFSET) put_varint(w, zigzag(ts->offset));
    if (TERSA_LIKELY(!w->keywatch)) return true;
    uint8_t t[15];
    store_le64(t, (uint64_t)ts->seconds);
    store_le32(t + 8, ts->nanos);
    t[12] = ts->zone;
    int16_t off = ts->zone == TERSA_ZONE_OFFSET ? ts->offset : 0;
    t[13] = (uint8_t)(uint16_t)off;
    t[14] = (uint8_t)((uint16_t)off >> 8);
    return key_scalar(w, TERSA_KID_TIME, t, 15, NULL, SIZE_MAX);
}

/* ==========================================================================
 * Containers
 * ========================================================================== */

TERSA_INLINE bool check_depth(tersa_writer *w) {
    if (TERSA_LIKELY(w->depth < w->max_depth)) return true;
    return fail(w, TERSA_ERR_DEPTH_EXCEEDED, "nesting deeper than the limit");
}

/* An array's tag and count (SPEC 5.4); the caller reserved 10 bytes. */
TERSA_INLINE void put_array_head(tersa_writer *w, size_t n) {
    if (n < N_ARR0) {
        put_byte(w, (uint8_t)(TAG_ARR0 + n));
    } else {
        put_byte(w, TAG_ARR_LONG);
        put_varint(w, n - N_ARR0);
    }
}

bool tersa_write_double_array(tersa_writer *w, const double *values, size_t n) {
    if (TERSA_UNLIKELY(w->keywatch)) { /* a generic-map key, or part of one: the frame records it */
        if (!tersa_write_array_begin(w, n)) return false;
        for (size_t i = 0; i < n; i++)
            if (!write_double_item(w, values[i])) return false;
        return tersa_write_array_end(w);
    }
    tersa_slot *slot = next_slot(w);
    if (!slot || !check_depth(w) || !reserve(w, 10)) return false;
    put_array_head(w, n);
    /* The elements of an array are in the array's own slot (SPEC 4.3). */
    return write_doubles_in(w, slot, values, n);
}

/* Strings whose index slots tersa_write_string_array requests at once. */
#define STRING_ARRAY_BLOCK 64

TERSA_INLINE bool write_string_array(tersa_writer *w, const char *const *ptrs, const size_t *lens, size_t n, bool borrow) {
    if (TERSA_UNLIKELY(w->keywatch)) { /* a generic-map key, or part of one: the frame records it */
        if (!tersa_write_array_begin(w, n)) return false;
        for (size_t i = 0; i < n; i++)
            if (!write_string_value(w, ptrs[i], lens[i], borrow)) return false;
        return tersa_write_array_end(w);
    }
    tersa_slot *slot = next_slot(w);
    if (!slot || !check_depth(w) || !reserve(w, 10)) return false;
    put_array_head(w, n);
    uint64_t hashes[STRING_ARRAY_BLOCK];
    for (size_t start = 0; start < n; start += STRING_ARRAY_BLOCK) {
        size_t end = n - start < STRING_ARRAY_BLOCK ? n : start + STRING_ARRAY_BLOCK;
        /* Read once per block: the hash of a long string is a call. */
        const uint64_t *sidx = w->sidx, seed = w->seed;
        size_t mask = w->sidx_cap - 1;
        for (size_t i = start; i < end; i++) {
            if (lens[i] < MIN_TABLE_LEN) continue;
            uint64_t h = hash_bytes((const uint8_t *)ptrs[i], lens[i], seed);
            hashes[i - start] = h;
#if defined(__GNUC__) || defined(__clang__)
            __builtin_prefetch(&sidx[(size_t)h & mask]);
#endif
        }
        /* The elements of an array are in the array's own slot (SPEC 4.3). */
        for (size_t i = start; i < end; i++)
            if (!write_str_item_hb(w, slot, (const uint8_t *)ptrs[i], lens[i], NULL, &hashes[i - start], borrow))
                return false;
    }
    return true;
}

bool tersa_write_string_array(tersa_writer *w, const char *const *ptrs, const size_t *lens, size_t n) {
    return write_string_array(w, ptrs, lens, n, false);
}

bool tersa_write_string_array_borrowed(tersa_writer *w, const char *const *ptrs, const size_t *lens, size_t n) {
    return write_string_array(w, ptrs, lens, n, may_borrow(w));
}

bool tersa_write_array_begin(tersa_writer *w, size_t count) {
    tersa_slot *slot = next_slot(w);
    if (!slot || !check_depth(w) || !reserve(w, 10)) return false;
    put_array_head(w, count);
    return push_frame(w, FRAME_ARRAY, slot, count, TERSA_KID_ARRAY, NULL);
}

/* end_container with keywatch set: close the key set, finish a key. */
TERSA_NOINLINE static bool end_watched(tersa_writer *w) {
    wframe *f = &w->stack[w->depth - 1];
    bool ends_key = f->ends_key;
    if (ends_key) w->recording--;
    if (f->kind == FRAME_GENERIC) tersa_kid_close(&w->kids, &f->kids, w->recording > 0 || ends_key);
    w->cur_generic = false;
    if (--w->depth) {
        const wframe *parent = &w->stack[w->depth - 1];
        w->cur = parent->cur;
        w->cur_left = parent->left;
        w->cur_step = parent->kind == FRAME_MAP;
        w->cur_generic = parent->kind == FRAME_GENERIC;
    }
    update_keywatch(w);
    return !ends_key || key_complete(w, f->key_start);
}

static bool end_container(tersa_writer *w, bool map) {
    if (w->err.code != TERSA_OK) return false;
    if (w->depth == 0) return fail(w, TERSA_ERR_USAGE, "no open container");
    wframe *f = &w->stack[w->depth - 1];
    if ((f->kind == FRAME_ARRAY) == map) return fail(w, TERSA_ERR_USAGE, "closing the wrong kind of container");
    if (w->cur_left) return fail(w, TERSA_ERR_USAGE, "fewer items than the container's count");
    /* Without keywatch this container is no generic map and no key, and nothing records. */
    if (TERSA_UNLIKELY(w->keywatch)) return end_watched(w);
    if (--w->depth) {
        const wframe *parent = &w->stack[w->depth - 1];
        w->cur = parent->cur;
        w->cur_left = parent->left;
        w->cur_step = parent->kind == FRAME_MAP;
        if (TERSA_UNLIKELY(parent->kind == FRAME_GENERIC)) w->cur_generic = w->keywatch = true;
    }
    return true;
}

bool tersa_write_array_end(tersa_writer *w) { return end_container(w, false); }

bool tersa_write_map_end(tersa_writer *w) { return end_container(w, true); }

/* A new shape, with its slots, entered in the shape index too. */
TERSA_INLINE bool add_shape(tersa_writer *w, const tersa_key *keys, size_t n, uint64_t h, tersa_slot **slots) {
    uint32_t index;
    if (((w->shape_index.used + 1) * 2 > w->shape_index.cap &&
         !tersa_hash_index_grow(w->alloc, &w->shape_index, w->shape_index.used + 1)) ||
        !tersa_state_add_shape(&w->st, keys, NULL, n, h, slots, &index))
        return fail(w, TERSA_ERR_NOMEM, "out of memory");
    if (index != TERSA_NO_INDEX) tersa_hash_index_put(&w->shape_index, h, index);
    return true;
}

static bool put_shape_ref(tersa_writer *w, size_t id) {
    if (!reserve(w, 3)) return false;
    if (id < SHAPE8_BASE) {
        put_byte(w, (uint8_t)(TAG_SHAPE0 + id));
    } else if (id < SHAPE16_BASE) {
        put_byte(w, TAG_SHAPE8);
        put_byte(w, (uint8_t)(id - SHAPE8_BASE));
    } else {
        put_byte(w, TAG_SHAPE16);
        put_byte(w, (uint8_t)(id - SHAPE16_BASE));
        put_byte(w, (uint8_t)((id - SHAPE16_BASE) >> 8));
    }
    w->last_shape = (uint32_t)id;
    w->last_defined = false;
    return push_frame(w, FRAME_MAP, w->st.shapes[id].slots, w->st.shapes[id].nkeys, TERSA_KID_MAP, w->st.shapes[id].keys);
}

/* keys_equal for a shape index hit, which is almost always equal: short
 * keys compared without a call. */
TERSA_INLINE bool shape_keys_equal(const tersa_key *a, const tersa_key *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        size_t len = a[i].len;
        if (len != b[i].len || a[i].symbol != b[i].symbol) return false;
        if (len >= MIN_TABLE_LEN ? !entry_equal((const uint8_t *)a[i].ptr, (const uint8_t *)b[i].ptr, len)
                                 : len && a[i].ptr[0] != b[i].ptr[0])
            return false;
    }
    return true;
}

/* Keys hashed once: a new shape's keys go through the string table with the
 * hashes its lookup computed (up to this many keys; more are hashed again). */
#define MAP_KEY_HASHES 16

TERSA_INLINE size_t key_memo_slot(const void *p) {
    return (size_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> (64 - KEY_MEMO_BITS));
}

/* The hash of a map key of MIN_TABLE_LEN bytes or more (not a symbol), and
 * its string-table position or TERSA_NO_INDEX if not known. A key seen before
 * at the same address is taken from the entry it was found at when that entry
 * still holds its bytes: that entry's hash is the key's, and the table holds
 * each string once. Only then is hashing and probing for it saved. */
TERSA_INLINE uint64_t key_memo_find(const tersa_writer *w, const uint8_t *p, size_t n, uint32_t *pos, int32_t *score,
                                    const uint8_t **entry) {
    const key_memo_entry *m = &w->key_memo[key_memo_slot(p)];
    if (m->ptr == p) {
        if (m->pos < w->st.nstrs) {
            const str_entry *e = &w->st.strs[m->pos];
            if (e->len == n && entry_equal(e->ptr, p, n)) {
                *pos = m->pos;
                *entry = e->ptr;
                ++*score;
                return e->hash;
            }
        }
    } else {
        --*score;
    }
    *pos = TERSA_NO_INDEX;
    return hash_bytes(p, n, w->seed);
}

TERSA_INLINE void key_memo_note(tersa_writer *w, const uint8_t *p, uint32_t pos) {
    key_memo_entry *m = &w->key_memo[key_memo_slot(p)];
    m->ptr = p;
    m->pos = pos;
}

/* The key memo pays where keys repeat in maps of new shapes: in a buffer of
 * many shapes. Before this many, a buffer neither reads nor writes it. */
#define KEY_MEMO_MIN_SHAPES 64

/* The credit (KEY_MEMO_CREDIT: writer_internal.h) is capped, so that a long
 * run of keys found cannot pay for an unbounded run of misses later. */
#define KEY_MEMO_CREDIT_MAX 4096

/* hash_keys of a map's keys; the first MAP_KEY_HASHES keys' own hashes go to
 * kept[] and, for keys the string table takes, their positions (if the memo
 * knows them) to pos[]. The leading keys the memo knows (*lead of them) are
 * written as the references a definition writes for them, from `refs` on
 * (*refs_len bytes: room the caller reserved past the output's end, taken
 * only if the map defines its shape), their entries' bytes to entry[]. */
TERSA_INLINE uint64_t hash_map_keys(tersa_writer *w, const tersa_key *keys, size_t n, uint64_t *kept, uint32_t *pos,
                                    const uint8_t **entry, uint8_t *refs, size_t *refs_len, size_t *lead) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    int32_t score = 0;
    size_t nlead = 0, nref = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = (const uint8_t *)keys[i].ptr;
        size_t len = keys[i].len;
        uint64_t kh;
        if (i < MAP_KEY_HASHES) {
            pos[i] = TERSA_NO_INDEX;
            kh = !keys[i].symbol && len >= MIN_TABLE_LEN ? key_memo_find(w, p, len, &pos[i], &score, &entry[i])
                                                          : hash_bytes(p, len, w->seed ^ keys[i].symbol);
            kept[i] = kh;
            if (nlead == i && pos[i] != TERSA_NO_INDEX) {
                nref += ref_put(refs + nref, pos[i]);
                nlead++;
            }
        } else {
            kh = hash_bytes(p, len, w->seed ^ keys[i].symbol);
        }
        h = hash_mix(h ^ kh, HASH_K1);
    }
    int32_t credit = w->key_memo_credit + score;
    w->key_memo_credit = credit < KEY_MEMO_CREDIT_MAX ? credit : KEY_MEMO_CREDIT_MAX;
    *refs_len = nref;
    *lead = nlead;
    return h;
}

/* Add the shape of a map whose definition was just written, and open it. */
TERSA_INLINE bool open_defined(tersa_writer *w, const tersa_key *keys, size_t count, uint64_t h) {
    tersa_slot *slots = NULL;
    size_t before = w->st.nshapes;
    if (!add_shape(w, keys, count, h, &slots)) return false;
    w->last_shape = w->st.nshapes > before ? (uint32_t)before : TERSA_NO_INDEX;
    w->last_defined = true;
    return push_frame(w, FRAME_MAP, slots, count, TERSA_KID_MAP, keys);
}

bool tersa_writer_open_defined(tersa_writer *w, const tersa_key *keys, size_t count, uint64_t h) {
    return open_defined(w, keys, count, h);
}

bool tersa_writer_claim_map(tersa_writer *w) { return next_slot(w) && check_depth(w); }

/* map_begin with the key memo used or not: a constant, so that each copy
 * has only its own path. */
TERSA_INLINE bool map_begin_memo(tersa_writer *w, const tersa_key *keys, size_t count, bool checked, const bool memo) {
    if (!next_slot(w) || !check_depth(w)) return false;
    uint64_t key_hash[MAP_KEY_HASHES];
    uint32_t key_pos[MAP_KEY_HASHES];
    const uint8_t *key_entry[MAP_KEY_HASHES];
    size_t tag_len = 0, lead = 0, lead_len = 0;
    uint64_t h;
    if (memo) {
        tag_len = count < N_MAPDEF0 ? 1 : 1 + varint_size(count - N_MAPDEF0);
        /* The definition's tag, then the references of its leading keys. */
        if (!reserve(w, tag_len + 3 * MAP_KEY_HASHES)) return false;
        h = hash_map_keys(w, keys, count, key_hash, key_pos, key_entry, w->buf + w->len + tag_len, &lead_len, &lead);
    } else {
        h = hash_keys_keeping(keys, count, w->seed, key_hash, MAP_KEY_HASHES);
    }
    const hash_index *ix = &w->shape_index;
    if (ix->cap) {
        size_t mask = ix->cap - 1, i = (size_t)h & mask;
        for (uint32_t pos; (pos = ix->positions[i]) != 0; i = (i + 1) & mask) {
            const shape *s = &w->st.shapes[pos - 1];
            if (ix->hashes[i] == h && s->nkeys == count && shape_keys_equal(s->keys, keys, count))
                return put_shape_ref(w, pos - 1);
        }
    }
    /* A new shape: define it with its keys. */
    if (checked) {
        for (size_t i = 0; i < count; i++) {
            bool ascii;
            if (!check_utf8(w, keys[i].ptr, keys[i].len, &ascii)) return false;
        }
        size_t second;
        if (tersa_keys_have_duplicate(w->alloc, keys, count, &second))
            return fail(w, TERSA_ERR_UNREPRESENTABLE, "duplicate map key");
    }
    tersa_key *copy = (tersa_key *)tersa_arena_alloc(&w->st.mem, count ? count * sizeof(tersa_key) : 1);
    /* Room reserved for the leading references is still there: reserve
     * does not move the output when it has room. */
    if (!copy || !reserve(w, memo ? tag_len + lead_len : 10)) return fail(w, TERSA_ERR_NOMEM, "out of memory");
    if (count < N_MAPDEF0) {
        put_byte(w, (uint8_t)(TAG_MAPDEF0 + count));
    } else {
        put_byte(w, TAG_MAPDEF_LONG);
        if (memo)
            varint_put(w->buf + w->len, count - N_MAPDEF0); /* exactly: the references follow */
        else
            put_varint(w, count - N_MAPDEF0);
    }
    if (memo) w->len += tag_len - 1 + lead_len;
    /* Keys already in the string table (most of them) are written as
     * references here; only the registers of the last of a run of them are
     * set, since no reference reads them. Every other key, and the registers
     * before it, takes write_str_item_h. */
    const uint8_t *run_ptr = NULL;
    size_t run_len = 0;
    for (size_t i = 0; memo && i < lead; i++) {
        copy[i].ptr = (const char *)key_entry[i];
        copy[i].len = keys[i].len;
        copy[i].symbol = false;
    }
    if (memo && lead) {
        run_ptr = key_entry[lead - 1];
        run_len = keys[lead - 1].len;
    }
    for (size_t i = lead; i < count; i++) {
        size_t n = keys[i].len;
        const uint8_t *kp = (const uint8_t *)keys[i].ptr;
        copy[i].len = n;
        copy[i].symbol = keys[i].symbol;
        bool tabled = i < MAP_KEY_HASHES && !keys[i].symbol && n >= MIN_TABLE_LEN;
        uint64_t *islot = NULL;
        if (TERSA_LIKELY(tabled)) {
            uint32_t found = memo ? key_pos[i] : TERSA_NO_INDEX;
            if (found == TERSA_NO_INDEX && (found = str_find(w, kp, n, key_hash[i], &islot)) != TERSA_NO_INDEX &&
                memo)
                key_memo_note(w, kp, found);
            if (found != TERSA_NO_INDEX) {
                if (!reserve(w, 3)) return false;
                put_ref(w, found);
                run_ptr = w->st.strs[found].ptr;
                run_len = n;
                copy[i].ptr = (const char *)run_ptr;
                continue;
            }
        }
        if (run_ptr) {
            tersa_state_note_string(&w->st, &w->st.key_slot, run_ptr, run_len);
            run_ptr = NULL;
        }
        const uint8_t *stable;
        if (TERSA_LIKELY(tabled)) {
            /* Not in the table: the slot its lookup found takes it. */
            size_t added = w->st.nstrs;
            if (!write_new_str(w, &w->st.key_slot, kp, n, key_hash[i], islot, &stable)) return false;
            if (memo && w->st.nstrs > added) key_memo_note(w, kp, (uint32_t)added);
        } else {
            if (keys[i].symbol) {
                if (!reserve(w, 1)) return false;
                put_byte(w, TAG_SYMBOL);
            }
            /* A symbol's name is hashed with the plain seed by the string table. */
            const uint64_t *known = i < MAP_KEY_HASHES && !keys[i].symbol ? &key_hash[i] : NULL;
            if (!write_str_item_h(w, &w->st.key_slot, kp, n, &stable, known)) return false;
        }
        copy[i].ptr = (const char *)stable;
    }
    if (run_ptr) tersa_state_note_string(&w->st, &w->st.key_slot, run_ptr, run_len);
    return open_defined(w, copy, count, h);
}

static bool map_begin(tersa_writer *w, const tersa_key *keys, size_t count, bool checked) {
    if (w->st.nshapes < KEY_MEMO_MIN_SHAPES) return map_begin_memo(w, keys, count, checked, false);
    return w->key_memo_credit > 0 ? map_begin_memo(w, keys, count, checked, true)
                                  : map_begin_memo(w, keys, count, checked, false);
}

uint32_t tersa_writer_last_shape(const tersa_writer *w) { return w->last_shape; }

uint32_t tersa_writer_last_defined_shape(const tersa_writer *w) {
    return w->last_defined ? w->last_shape : TERSA_NO_INDEX;
}

size_t tersa_writer_shape_size(const tersa_writer *w, uint32_t index) {
    return index < w->st.nshapes ? w->st.shapes[index].nkeys : 0;
}

bool tersa_write_map_shape(tersa_writer *w, uint32_t index) {
    if (w->err.code == TERSA_OK && index >= w->st.nshapes) return fail(w, TERSA_ERR_USAGE, "unknown shape index");
    if (!next_slot(w) || !check_depth(w)) return false;
    return put_shape_ref(w, index);
}

bool tersa_write_map_begin(tersa_writer *w, const tersa_key *keys, size_t count) {
    return map_begin(w, keys, count, true);
}

bool tersa_write_map_begin_utf8(tersa_writer *w, const tersa_key *keys, size_t count) {
    return map_begin(w, keys, count, false);
}

bool tersa_write_map_begin_record(tersa_writer *w, const tersa_key *keys, size_t count, bool checked,
                                  tersa_mapdef **record) {
    *record = NULL;
    size_t len0 = w->len, nstrs0 = w->st.nstrs, nshapes0 = w->st.nshapes;
    bool pristine = count && count <= TERSA_MAPDEF_MAX_KEYS && w->err.code == TERSA_OK && writer_pristine(w);
    if (!map_begin(w, keys, count, checked)) return false;
    /* A definition appended its shape; a reference (a dictionary's shape) did not. */
    if (pristine && w->last_shape == nshapes0) {
        const shape *s = &w->st.shapes[nshapes0];
        *record = tersa_writer_record_mapdef(w, s->keys, count, s->hash, len0, nstrs0, checked);
    }
    return true;
}

bool tersa_write_generic_map_begin(tersa_writer *w, size_t count) {
    tersa_slot *slot = next_slot(w);
    if (!slot || !check_depth(w) || !reserve(w, 10)) return false;
    if (count > SIZE_MAX / 2) return fail(w, TERSA_ERR_UNREPRESENTABLE, "map too large");
    put_byte(w, TAG_MAP_GEN);
    put_varint(w, count);
    return push_frame(w, FRAME_GENERIC, slot, count * 2, TERSA_KID_GENERIC, NULL);
}
