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
TERSA_INLINE bool write_doubles_in(tersa_writer *w, tersa_slot *slot, const double *values, size_t n);
TERSA_NOINLINE_LOCAL bool write_double_tested(tersa_writer *w, tersa_slot *slot, double d);
TERSA_INLINE void write_double_trusted(tersa_writer *w, tersa_slot *slot, double d);

TERSA_INLINE bool slot_tests_decimals(const tersa_slot *slot) {
    return slot->bin < BIN_TRUSTED || slot->bin == BIN_RETEST;
}

/* tersa_write_double's body, inlined into each caller: a binding's
 * link-time optimizer inlines tersa_write_double into its loop only while the
 * library itself does not call it. */
TERSA_INLINE bool write_double_item(tersa_writer *w, double d) {
    tersa_slot *slot = next_slot(w);
    if (TERSA_UNLIKELY(w->keywatch)) {
        uint64_t bits;
        memcpy(&bits, &d, 8);
        return slot && write_double_in(w, slot, d) && key_word(w, TERSA_KID_FLOAT, bits);
    }
    /* write_double_in, with the tested path as the last call. */
    if (!slot || !reserve(w, 11)) return false;
    if (slot_tests_decimals(slot)) return write_double_tested(w, slot, d);
    write_double_trusted(w, slot, d);
    return true;
}

bool tersa_write_double(tersa_writer *w, double d) { return write_double_item(w, d); }

bool tersa_write_doubles(tersa_writer *w, const double *values, size_t n) {
    if (TERSA_UNLIKELY(!array_has_room(w, n))) {
        for (size_t i = 0; i < n; i++)
            if (!write_double_item(w, values[i])) return false;
        return true;
    }
    w->cur_left -= n;
    return write_doubles_in(w, w->cur, values, n);
}

/* A binary float (SPEC 7): binary32 when it holds d exactly, else
 * binary64. The caller reserved 9 bytes. */
TERSA_INLINE void put_binary_float(tersa_writer *w, double d) {
    uint8_t *o = w->buf + w->len;
    if (tersa_f32_exact(d)) {
        float f = (float)d;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        o[0] = TAG_F32;
        store_le32(o + 1, bits);
        w->len += 5;
    } else {
        uint64_t bits;
        memcpy(&bits, &d, 8);
        o[0] = TAG_F64;
        store_le64(o + 1, bits);
        w->len += 9;
    }
}

/* A float of a slot that tests for decimals, written in binary: no
 * decimal form, or a longer one (SPEC 7). Counts towards BIN_TRUSTED. */
TERSA_NOINLINE_LOCAL bool write_binary_tested(tersa_writer *w, tersa_slot *slot, double d) {
    unsigned bin = slot->bin;
    slot->bin = (uint8_t)(bin < BIN_RETEST ? bin + 1 : BIN_TRUSTED);
    put_binary_float(w, d);
    return true;
}

/* A varint of at most 8 bytes (below 2^56) whose size n is known. */
TERSA_INLINE void put_varint_sized(tersa_writer *w, uint64_t v, unsigned n) {
    store_le64(w->buf + w->len, varint_word(v, n));
    w->len += n;
}

/* A float d of a slot that tests for decimals, whose decimal form m * 10^e
 * was found (hinted: at the slot's dec_hint): that form if it is the
 * shortest (SPEC 7), else binary. The caller reserved 11 bytes. |m| < 10^15,
 * so every varint here takes at most 8 bytes. */
TERSA_INLINE bool write_decimal_or_binary(tersa_writer *w, tersa_slot *slot, double d, int64_t m, int e,
                                          bool hinted) {
    uint64_t z = zigzag(m);
    unsigned zn = varint_size(z);
    bool in_tag = e >= DEC_EMIN && e <= DEC_EMAX;
    unsigned size = zn + 2 - (unsigned)in_tag;
    uint64_t dz = 0;
    unsigned dzn = 0;
    if (slot->has_dec && slot->dec_e == e) {
        dz = zigzag(m - slot->dec_m);
        dzn = varint_size(dz);
        /* Ties favour the absolute form (SPEC 7: earliest candidate). */
        if (1 + dzn >= size) dzn = 0;
        else size = 1 + dzn;
    }
    /* Ties favour the decimal forms over binary32. */
    if (size <= 5 || (size <= 9 && !tersa_f32_exact(d))) {
        if (dzn) {
            put_byte(w, TAG_DEC_DELTA);
            put_varint_sized(w, dz, dzn);
        } else {
            if (in_tag) {
                put_byte(w, (uint8_t)(TAG_DEC0 + (e - DEC_EMIN)));
            } else {
                put_byte(w, TAG_DEC_X);
                put_byte(w, (uint8_t)(int8_t)e);
            }
            put_varint_sized(w, z, zn);
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
    return write_binary_tested(w, slot, d);
}

/* write_double_tested when d has no decimal form at the slot's hint: the
 * full search. Apart, so that write_double_tested calls nothing but this,
 * as its last act, and needs no registers saved. */
TERSA_NOINLINE_LOCAL bool write_double_searched(tersa_writer *w, tersa_slot *slot, double d) {
    int64_t m;
    int e;
    if (tersa_decimal_of_double(d, &m, &e)) return write_decimal_or_binary(w, slot, d, m, e, false);
    return write_binary_tested(w, slot, d);
}

/* A float of a slot that tests for decimals (its bin count below
 * BIN_TRUSTED or at BIN_RETEST). The caller reserved 11 bytes. */
TERSA_INLINE bool write_double_tested_in(tersa_writer *w, tersa_slot *slot, double d) {
    int64_t m;
    int e = slot->dec_hint;
    if (tersa_decimal_at_exponent(d, &e, &m)) return write_decimal_or_binary(w, slot, d, m, e, true);
    return write_double_searched(w, slot, d);
}

/* The decimal path and the binary path of a trusted slot are compiled
 * apart, in functions of their own, so that each keeps its own registers:
 * together, the binary path paid for the decimal path's. This one calls
 * nothing but as its last act, and needs no registers saved. */
TERSA_NOINLINE_LOCAL bool write_double_tested(tersa_writer *w, tersa_slot *slot, double d) {
    return write_double_tested_in(w, slot, d);
}

/* The floats of values[i..n) in a slot that tests for decimals, up to the
 * first after which it does not: the index after the last written, or
 * SIZE_MAX if the buffer cannot grow. */
TERSA_NOINLINE_LOCAL size_t write_doubles_tested(tersa_writer *w, tersa_slot *slot, const double *values, size_t i,
                                                 size_t n) {
    do {
        if (!reserve(w, 11)) return SIZE_MAX;
        write_double_tested_in(w, slot, values[i++]);
    } while (i < n && slot_tests_decimals(slot));
    return i;
}

/* A trusted slot writes binary floats untested; its count (below
 * BIN_RETEST here) reaches BIN_RETEST after BIN_RETEST - BIN_TRUSTED of them. */
TERSA_INLINE void write_double_trusted(tersa_writer *w, tersa_slot *slot, double d) {
    slot->bin = (uint8_t)(slot->bin + 1);
    put_binary_float(w, d);
}

TERSA_INLINE bool write_double_in(tersa_writer *w, tersa_slot *slot, double d) {
    if (!reserve(w, 11)) return false;
    if (slot_tests_decimals(slot)) return write_double_tested(w, slot, d);
    write_double_trusted(w, slot, d);
    return true;
}

/* Floats left in an array from which a trusted slot writes them in one
 * batch: shorter runs (coordinate pairs and triples) take the inline loop,
 * which a batch's own loop made slower. */
enum { TRUSTED_RUN_MIN = 8 };

/* The floats of values[i..n) that a trusted slot writes before its next
 * test, in one batch: the index after the last written, or SIZE_MAX if the
 * buffer cannot grow. */
TERSA_NOINLINE_LOCAL size_t write_doubles_trusted_run(tersa_writer *w, tersa_slot *slot, const double *values,
                                                      size_t i, size_t n) {
    size_t run = (size_t)(BIN_RETEST - slot->bin);
    if (run > n - i) run = n - i;
    if (!reserve(w, 9 * run)) return SIZE_MAX;
    slot->bin = (uint8_t)(slot->bin + run);
    uint8_t *o = w->buf + w->len, *start = o;
    /* put_binary_float with the output position in a register: a store
     * through w->buf may alias w->len. */
    for (size_t end = i + run; i < end; i++) {
        double d = values[i];
        if (tersa_f32_exact(d)) {
            float f = (float)d;
            uint32_t bits;
            memcpy(&bits, &f, 4);
            o[0] = TAG_F32;
            store_le32(o + 1, bits);
            o += 5;
        } else {
            uint64_t bits;
            memcpy(&bits, &d, 8);
            o[0] = TAG_F64;
            store_le64(o + 1, bits);
            o += 9;
        }
    }
    w->len += (size_t)(o - start);
    return i;
}

/* The floats of an array of TRUSTED_RUN_MIN or more, all in one slot:
 * apart, so that the short arrays' loop stays as it was. */
TERSA_NOINLINE_LOCAL bool write_doubles_long(tersa_writer *w, tersa_slot *slot, const double *values, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (slot_tests_decimals(slot)) {
            i = write_doubles_tested(w, slot, values, i, n);
        } else if (n - i >= TRUSTED_RUN_MIN) {
            i = write_doubles_trusted_run(w, slot, values, i, n);
        } else {
            if (!reserve(w, 9)) return false;
            write_double_trusted(w, slot, values[i++]);
        }
        if (i == SIZE_MAX) return false;
    }
    return true;
}

/* The floats of an array, all in one slot. */
TERSA_INLINE bool write_doubles_in(tersa_writer *w, tersa_slot *slot, const double *values, size_t n) {
    if (n >= TRUSTED_RUN_MIN) return write_doubles_long(w, slot, values, n);
    size_t i = 0;
    while (i < n) {
        if (slot_tests_decimals(slot)) {
            i = write_doubles_tested(w, slot, values, i, n);
            if (i == SIZE_MAX) return false;
        } else {
            if (!reserve(w, 9)) return false;
            write_double_trusted(w, slot, values[i++]);
        }
    }
    return true;
}

#endif
