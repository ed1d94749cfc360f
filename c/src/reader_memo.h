/*
 * reader_memo.h - the reader's memo of map definitions, by their bytes.
 * Included by reader.c after add_string (the entry's layout is in
 * reader_internal.h: reader_frames.c frees the memo).
 *
 * A stream of small messages defines the same few shapes again in every
 * buffer. The keys of a definition written as short inline strings (a tag
 * of its length, then its bytes: no reference, no prefix, no symbol) depend
 * on nothing but those bytes, so once read and checked (UTF-8, duplicates,
 * bounds), the same bytes need only be compared, and what reading them did
 * to the reader's state replayed: each key of MIN_TABLE_LEN bytes or more
 * enters the string table (at the table's current end, unless it is full),
 * and the last key is the key slot's and the `last` register's string.
 *
 * Bounded: MEMO_SETS entries of MEMO_BYTES bytes each, direct-mapped by the
 * definition's key count and first eight bytes, replaced on a miss; made at
 * the reader's first plain definition, kept until the reader is freed.
 *
 * A buffer stops looking definitions up after MEMO_MISSES_PER_BUFFER misses
 * (each of which stores the definition if it is plain): the definitions that
 * recur are those of the buffers' first maps (one message per buffer), while
 * a buffer of many distinct shapes (sparse records) would pay a lookup, and
 * a copy, for each.
 */
#ifndef TERSA_READER_MEMO_H
#define TERSA_READER_MEMO_H

#include "reader_internal.h"

TERSA_INLINE tersa_mapdef_memo *memo_entry(tersa_mapdef_memo *m, uint64_t head, size_t n) {
    return &m[((head ^ n) * 0x9E3779B97F4A7C15ull) >> 58];
}

_Static_assert(MEMO_SETS == 64, "memo_entry takes the hash's top 6 bits");

/* a[0..n) == b[0..n) for n >= 8, whose first 8 bytes are known equal */
TERSA_INLINE bool memo_rest_eq(const uint8_t *a, const uint8_t *b, size_t n) {
    size_t i = 8;
    for (; i + 8 <= n; i += 8)
        if (load_le64(a + i) != load_le64(b + i)) return false;
    return i == n || load_le64(a + n - 8) == load_le64(b + n - 8);
}

/* The entry whose bytes are the input's at r->pos for a definition of n keys
 * (1 <= n <= MEMO_KEYS), or NULL. */
TERSA_INLINE const tersa_mapdef_memo *memo_find(tersa_reader *r, size_t n) {
    if (!r->memo || r->copy_strings || r->end - r->pos < 8) return NULL;
    const uint8_t *p = r->data + r->pos;
    uint64_t head = load_le64(p);
    const tersa_mapdef_memo *m = memo_entry(r->memo, head, n);
    if (!m->len || m->head != head || m->n != n || m->len > r->end - r->pos ||
        (m->len > 8 && !memo_rest_eq(m->bytes, p, m->len)))
        return NULL;
    return m;
}

/* Remember the plain definition of n keys (1 <= n <= MEMO_KEYS) just read:
 * its keys' bytes start at `at` and end at r->pos. Nothing if it does not fit
 * or memory runs out (the memo is only a shortcut). */
TERSA_NOINLINE_LOCAL void memo_store(tersa_reader *r, size_t at, const tersa_key *keys, size_t n) {
    size_t len = r->pos - at;
    if (len > MEMO_BYTES || r->end - at < 8) return;
    if (!r->memo) {
        r->memo = (tersa_mapdef_memo *)mem_alloc(r->alloc, MEMO_SETS * sizeof(tersa_mapdef_memo));
        if (!r->memo) return;
        /* an entry's other fields are read only once its len is set (a
         * reader made for one small buffer should not clear 13 KB) */
        for (size_t i = 0; i < MEMO_SETS; i++) r->memo[i].len = 0;
    }
    const uint8_t *p = r->data + at;
    uint64_t head = load_le64(p);
    tersa_mapdef_memo *m = memo_entry(r->memo, head, n);
    m->head = head;
    m->len = (uint16_t)len;
    m->n = (uint8_t)n;
    /* Valid UTF-8 is ASCII when no byte has its high bit set, and the tags
     * have it clear: mostly one test over all the bytes, a word at a time. */
    uint64_t high = 0;
    size_t j = 0;
    for (; j + 8 <= len; j += 8) high |= load_le64(p + j);
    for (; j < len; j++) high |= p[j];
    uint32_t ascii = (1u << n) - 1;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *k = (const uint8_t *)keys[i].ptr;
        m->off[i] = (uint8_t)(k - p);
        if (high & 0x8080808080808080ull) {
            uint8_t any = 0;
            for (size_t b = 0; b < keys[i].len; b++) any |= k[b];
            if (any & 0x80) ascii &= ~(1u << i);
        }
    }
    m->ascii = (uint16_t)ascii;
    memcpy(m->bytes, p, len);
}

/* Read the definition that memo entry m holds, at r->pos: its keys into
 * keys[] and key_strings[], with the state changes reading them makes. */
TERSA_INLINE bool memo_replay(tersa_reader *r, const tersa_mapdef_memo *m, size_t n, tersa_key *keys,
                              uint32_t *key_strings) {
    const uint8_t *p = r->data + r->pos;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *s = p + m->off[i];
        size_t len = (size_t)(s[-1] - TAG_STR0);
        keys[i].ptr = (const char *)s;
        keys[i].len = len;
        keys[i].symbol = false;
        r->pos = (size_t)(s - r->data) + len; /* where reading the key leaves it (an error's offset) */
        uint32_t index = TERSA_NO_INDEX;
        if (len >= MIN_TABLE_LEN && TERSA_LIKELY(r->st.nstrs < TERSA_MAX_STRINGS)) {
            index = (uint32_t)r->st.nstrs;
            if (!add_string(r, s, len, (m->ascii >> i) & 1)) return false;
        }
        key_strings[i] = index;
    }
    tersa_state_note_string(&r->st, &r->st.key_slot, (const uint8_t *)keys[n - 1].ptr, keys[n - 1].len);
    return true;
}

#endif
