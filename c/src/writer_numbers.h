/*
 * writer_numbers.h - the writer's number items (SPEC 7, integers and
 * floats): integers absolute or as a delta from the slot's register, and
 * doubles as short decimals, binary32 or binary64 by the slot's state.
 * Included by writer.c only, after the slot and key helpers it uses
 * (next_slot, key_word, the KEY_* macros): its functions stay static, so
 * they inline into writer.c's array writers (tersa_write_double_array).
 */
#ifndef TERSA_WRITER_NUMBERS_H
#define TERSA_WRITER_NUMBERS_H

/* v - r, if it fits in int64 (the INT_DELTA condition of SPEC 7). */
TERSA_INLINE bool int_difference(int64_t v, int64_t r, int64_t *diff) {
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_sub_overflow(v, r, diff);
#else
    if (r >= 0 ? v < INT64_MIN + r : v > INT64_MAX + r) return false;
    *diff = v - r;
    return true;
#endif
}

/* Inline in each writer of integers: the arrays of them (indices, ids,
 * counters) are where their cost shows. */
TERSA_INLINE bool write_int_in(tersa_writer *w, tersa_slot *slot, int64_t v) {
    if (!reserve(w, 10)) return false;
    uint8_t *o = w->buf + w->len;
    if (v >= INT_MIN_SMALL && v <= INT_MAX_SMALL) {
        o[0] = (uint8_t)(TAG_INT0 + (v - INT_MIN_SMALL));
        w->len += 1;
    } else {
        uint8_t tag;
        uint64_t body;
        if (v > 0) {
            tag = TAG_INT_POS;
            body = (uint64_t)v - (INT_MAX_SMALL + 1);
        } else {
            tag = TAG_INT_NEG;
            body = (uint64_t)(-(v - (INT_MIN_SMALL - 1))); /* -9 - v, without overflow */
        }
        int64_t diff;
        if (slot->has_int && int_difference(v, slot->int_val, &diff)) {
            uint64_t z = zigzag(diff);
            if (varint_size(z) < varint_size(body)) {
                tag = TAG_INT_DELTA;
                body = z;
            }
        }
        o[0] = tag;
        w->len += 1 + varint_put_room9(o + 1, body);
    }
    slot->int_val = v;
    slot->has_int = 1;
    return true;
}

bool tersa_write_int(tersa_writer *w, int64_t value) {
    tersa_slot *slot = next_slot(w);
    if (TERSA_UNLIKELY(w->keywatch)) return slot && write_int_in(w, slot, value) && key_word(w, TERSA_KID_INT, (uint64_t)value);
    return slot && write_int_in(w, slot, value);
}

static bool write_uint_in(tersa_writer *w, tersa_slot *slot, uint64_t value) {
    if (value <= (uint64_t)INT64_MAX) return write_int_in(w, slot, (int64_t)value);
    if (!reserve(w, 10)) return false;
    put_byte(w, TAG_INT_POS);
    put_varint(w, value - (INT_MAX_SMALL + 1));
    return true; /* beyond int64: the register is unchanged */
}

/* An open array with room for n more elements, no generic-map key being
 * recorded: its elements all go in its slot, w->cur. */
TERSA_INLINE bool array_has_room(const tersa_writer *w, size_t n) {
    return !w->keywatch && !w->cur_step && w->cur_left >= n && w->depth;
}

bool tersa_write_ints(tersa_writer *w, const int64_t *values, size_t n) {
    if (TERSA_UNLIKELY(!array_has_room(w, n))) {
        for (size_t i = 0; i < n; i++)
            if (!tersa_write_int(w, values[i])) return false;
        return true;
    }
    w->cur_left -= n;
    tersa_slot *slot = w->cur;
    for (size_t i = 0; i < n; i++)
        if (!write_int_in(w, slot, values[i])) return false;
    return true;
}

bool tersa_write_uint(tersa_writer *w, uint64_t value) {
    tersa_slot *slot = next_slot(w);
    if (TERSA_UNLIKELY(w->keywatch))
        return slot && write_uint_in(w, slot, value) &&
               key_word(w, value <= (uint64_t)INT64_MAX ? TERSA_KID_INT : TERSA_KID_UINT, value);
    return slot && write_uint_in(w, slot, value);
}

bool tersa_write_bigint(tersa_writer *w, bool negative, const uint8_t *mag, size_t len) {
    tersa_slot *slot = next_slot(w);
    if (!slot) return false;
    while (len && mag[len - 1] == 0) len--;
    if (len <= 8) {
        uint64_t u = 0;
        for (size_t i = len; i > 0; i--) u = (u << 8) | mag[i - 1];
        if (!negative)
            return write_uint_in(w, slot, u) && KEY_WORD(w, u <= (uint64_t)INT64_MAX ? TERSA_KID_INT : TERSA_KID_UINT, u);
        if (u <= (1ull << 63)) {
            int64_t v = u == (1ull << 63) ? INT64_MIN : -(int64_t)u;
            return write_int_in(w, slot, v) && KEY_WORD(w, TERSA_KID_INT, v);
        }
    }
    if (!reserve(w, 10 + len)) return false;
    put_byte(w, negative ? TAG_BIGINT_NEG : TAG_BIGINT_POS);
    put_varint(w, len);
    put_bytes(w, mag, len);
    return KEY_BYTES(w, negative ? TERSA_KID_BIG_NEG : TERSA_KID_BIG_POS, mag, len);
}

TERSA_INLINE bool write_double_in(tersa_writer *w, tersa_slot *slot, double d);

/* tersa_write_double's body, inlined into each caller: a binding's
 * link-time optimizer inlines tersa_write_double into its loop only while the
 * library itself does not call it. */
TERSA_INLINE bool write_double_item(tersa_writer *w, double d) {
    tersa_slot *slot = next_slot(w);
    if (!slot || !write_double_in(w, slot, d)) return false;
    if (TERSA_LIKELY(!w->keywatch)) return true;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return key_word(w, TERSA_KID_FLOAT, bits);
}

bool tersa_write_double(tersa_writer *w, double d) { return write_double_item(w, d); }

bool tersa_write_doubles(tersa_writer *w, const double *values, size_t n) {
    if (TERSA_UNLIKELY(!array_has_room(w, n))) {
        for (size_t i = 0; i < n; i++)
            if (!write_double_item(w, values[i])) return false;
        return true;
    }
    w->cur_left -= n;
    tersa_slot *slot = w->cur;
    for (size_t i = 0; i < n; i++)
        if (!write_double_in(w, slot, values[i])) return false;
    return true;
}

TERSA_INLINE bool write_double_in(tersa_writer *w, tersa_slot *slot, double d) {
    if (!reserve(w, 11)) return false;
    unsigned bin = slot->bin;
    int64_t m;
    int e = slot->dec_hint;
    bool hinted = false;
    if ((bin < BIN_TRUSTED || bin == BIN_RETEST) &&
        ((hinted = tersa_decimal_at_exponent(d, &e, &m)) || tersa_decimal_of_double(d, &m, &e))) {
        uint64_t z = zigzag(m);
        bool in_tag = e >= DEC_EMIN && e <= DEC_EMAX;
        /* Each size a sum with a constant: a select between the two, added
         * to varint_size's chain, GCC -O3 evaluates for all nine outcomes of
         * the chain ahead of time. */
        size_t abs_size = in_tag ? 1u + varint_size(z) : 2u + varint_size(z);
        size_t size = abs_size;
        bool delta = false;
        uint64_t dz = 0;
        if (slot->has_dec && slot->dec_e == e) {
            dz = zigzag(m - slot->dec_m);
            if (1 + varint_size(dz) < abs_size) {
                delta = true;
                size = 1 + varint_size(dz);
            }
        }
        /* Ties favour the decimal forms (SPEC 7: earliest candidate). */
        if (size <= 5 || (size <= 9 && !tersa_f32_exact(d))) {
            if (delta) {
                put_byte(w, TAG_DEC_DELTA);
                put_varint(w, dz);
            } else {
                if (in_tag) {
                    put_byte(w, (uint8_t)(TAG_DEC0 + (e - DEC_EMIN)));
                } else {
                    put_byte(w, TAG_DEC_X);
                    put_byte(w, (uint8_t)(int8_t)e);
                }
                put_varint(w, z);
            }
            slot->dec_m = m;
            slot->dec_e = (int8_t)e;
            slot->has_dec = 1;
            slot->bin = 0;
            /* The hint keeps the most decimals the slot needed: values with
             * fewer pass through it too. Zero says nothing about them. */
            if (!hinted && m) slot->dec_hint = (int8_t)e;
            return true;
        }
    }
    slot->bin = (uint8_t)(bin < BIN_RETEST ? bin + 1 : BIN_TRUSTED);
    if (tersa_f32_exact(d)) {
        float f = (float)d;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        uint8_t *o = w->buf + w->len;
        o[0] = TAG_F32;
        store_le32(o + 1, bits);
        w->len += 5;
    } else {
        uint64_t bits;
        memcpy(&bits, &d, 8);
        uint8_t *o = w->buf + w->len;
        o[0] = TAG_F64;
        store_le64(o + 1, bits);
        w->len += 9;
    }
    return true;
}

#endif
