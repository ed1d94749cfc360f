/*
 * dict.c - pre-shared dictionaries (SPEC section 8).
 */
#include "tables.h"

#include <stdatomic.h>

static const char DICT_MAGIC[] = "tersa-dictionary-v1";

static uint64_t fnv1a64(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void tersa_dict_free(tersa_dict *dict) {
    if (!dict) return;
    const tersa_alloc *a = dict->alloc;
    tersa_arena_free(&dict->mem);
    mem_free(a, dict, sizeof(*dict));
}

static bool invalid(tersa_error *err, const char *message) {
    if (err) set_error(err, TERSA_ERR_INVALID_VALUE, 0, message);
    return false;
}

/* Copy and check the contents; serialize; compute the id. */
static bool dict_fill(tersa_dict *d, const tersa_key *strings, size_t nstrings, const tersa_key *shape_keys,
                      const size_t *shape_lens, size_t nshapes, tersa_error *err) {
    if (nstrings > TERSA_MAX_STRINGS || nshapes > TERSA_MAX_SHAPES) return invalid(err, "dictionary too large");
    size_t nkeys = 0;
    for (size_t i = 0; i < nshapes; i++) {
        if (shape_lens[i] > SIZE_MAX - nkeys) return invalid(err, "dictionary too large");
        nkeys += shape_lens[i];
    }
    d->strings = (tersa_key *)tersa_arena_alloc(&d->mem, (nstrings + 1) * sizeof(tersa_key));
    d->shape_keys = (tersa_key *)tersa_arena_alloc(&d->mem, (nkeys + 1) * sizeof(tersa_key));
    d->shape_offsets = (size_t *)tersa_arena_alloc(&d->mem, (nshapes + 1) * sizeof(size_t));
    if (!d->strings || !d->shape_keys || !d->shape_offsets) {
        if (err) set_error(err, TERSA_ERR_NOMEM, 0, "out of memory");
        return false;
    }
    hash_index seen = {NULL, NULL, 0, 0};
    bool ok = tersa_hash_index_grow(d->alloc, &seen, nstrings + nshapes + 1);
    for (size_t i = 0; ok && i < nstrings; i++) {
        const tersa_key *k = &strings[i];
        bool ascii;
        if (k->len < MIN_TABLE_LEN) ok = invalid(err, "dictionary strings must be at least 2 bytes long");
        else if (k->symbol) ok = invalid(err, "dictionary strings are strings, not symbols");
        else if (!tersa_utf8_valid((const uint8_t *)k->ptr, k->len, &ascii)) ok = invalid(err, "dictionary string is not valid UTF-8");
        if (!ok) break;
        uint64_t h = hash_bytes(k->ptr, k->len, tersa_seed());
        size_t mask = seen.cap - 1, j = (size_t)h & mask;
        for (; seen.positions[j]; j = (j + 1) & mask) {
            const tersa_key *o = &d->strings[seen.positions[j] - 1];
            if (seen.hashes[j] == h && o->len == k->len && memcmp(o->ptr, k->ptr, k->len) == 0) {
                ok = invalid(err, "dictionary strings repeat");
                break;
            }
        }
        if (!ok) break;
        d->strings[i].ptr = (const char *)tersa_arena_copy(&d->mem, k->ptr, k->len);
        d->strings[i].len = k->len;
        d->strings[i].symbol = false;
        if (!d->strings[i].ptr) ok = false;
        else tersa_hash_index_put(&seen, h, (uint32_t)i);
    }
    d->nstrings = nstrings;
    tersa_hash_index_clear(&seen);
    size_t off = 0;
    for (size_t i = 0; ok && i < nshapes; i++) {
        d->shape_offsets[i] = off;
        const tersa_key *src = shape_keys + off;
        tersa_key *dst = d->shape_keys + off;
        size_t n = shape_lens[i];
        for (size_t j = 0; ok && j < n; j++) {
            bool ascii;
            if (!tersa_utf8_valid((const uint8_t *)src[j].ptr, src[j].len, &ascii)) {
                ok = invalid(err, "dictionary key is not valid UTF-8");
                break;
            }
            dst[j].ptr = (const char *)tersa_arena_copy(&d->mem, src[j].ptr, src[j].len);
            dst[j].len = src[j].len;
            dst[j].symbol = src[j].symbol;
            if (!dst[j].ptr) ok = false;
        }
        size_t second;
        if (ok && tersa_keys_have_duplicate(d->alloc, dst, n, &second)) ok = invalid(err, "dictionary shape repeats a key");
        if (!ok) break;
        uint64_t h = hash_keys(dst, n, tersa_seed());
        size_t mask = seen.cap - 1, j = (size_t)h & mask;
        for (; seen.positions[j]; j = (j + 1) & mask) {
            size_t o = seen.positions[j] - 1;
            size_t on = d->shape_offsets[o + 1] - d->shape_offsets[o];
            if (seen.hashes[j] == h && on == n && keys_equal(d->shape_keys + d->shape_offsets[o], dst, n)) {
                ok = invalid(err, "dictionary shapes repeat");
                break;
            }
        }
        if (!ok) break;
        off += n;
        d->shape_offsets[i + 1] = off;
        tersa_hash_index_put(&seen, h, (uint32_t)i);
    }
    if (nshapes == 0) d->shape_offsets[0] = 0;
    d->nshapes = nshapes;
    tersa_hash_index_free(d->alloc, &seen);
    if (!ok) {
        if (err && err->code == TERSA_OK) set_error(err, TERSA_ERR_NOMEM, 0, "out of memory");
        return false;
    }

    /* The serialization is the canonical encoding of the dictionary array. */
    tersa_writer *w = tersa_writer_new(d->alloc);
    if (!w) {
        if (err) set_error(err, TERSA_ERR_NOMEM, 0, "out of memory");
        return false;
    }
    ok = tersa_writer_start(w, NULL, TERSA_WRITE_NO_HEADER) && tersa_write_array_begin(w, 3) &&
         tersa_write_string_utf8(w, DICT_MAGIC, sizeof(DICT_MAGIC) - 1) && tersa_write_array_begin(w, nstrings);
    for (size_t i = 0; ok && i < nstrings; i++)
        ok = tersa_write_string_utf8(w, d->strings[i].ptr, d->strings[i].len);
    ok = ok && tersa_write_array_end(w) && tersa_write_array_begin(w, nshapes);
    for (size_t i = 0; ok && i < nshapes; i++) {
        size_t n = d->shape_offsets[i + 1] - d->shape_offsets[i];
        const tersa_key *keys = d->shape_keys + d->shape_offsets[i];
        ok = tersa_write_array_begin(w, n);
        for (size_t j = 0; ok && j < n; j++)
            ok = keys[j].symbol ? tersa_write_symbol(w, keys[j].ptr, keys[j].len)
                                : tersa_write_string_utf8(w, keys[j].ptr, keys[j].len);
        ok = ok && tersa_write_array_end(w);
    }
    ok = ok && tersa_write_array_end(w) && tersa_write_array_end(w);
    if (ok) {
        size_t len;
        const uint8_t *data = tersa_writer_data(w, &len);
        d->serialized = (uint8_t *)tersa_arena_copy(&d->mem, data, len);
        d->serialized_len = len;
        ok = d->serialized != NULL;
        if (ok) d->id = fnv1a64(d->serialized, len);
    }
    if (!ok && err) *err = *tersa_writer_error(w);
    tersa_writer_free(w);
    return ok;
}

static atomic_uint_fast64_t serial_counter;

uint64_t tersa_dict_next_serial(void) { return (uint64_t)atomic_fetch_add(&serial_counter, 1) + 1; }

static tersa_dict *dict_alloc(const tersa_alloc *alloc, tersa_error *err) {
    alloc = alloc_or_default(alloc);
    tersa_dict *d = (tersa_dict *)mem_alloc(alloc, sizeof(tersa_dict));
    if (!d) {
        if (err) set_error(err, TERSA_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    memset(d, 0, sizeof(*d));
    d->alloc = alloc;
    d->serial = tersa_dict_next_serial();
    tersa_arena_init(&d->mem, alloc);
    return d;
}

tersa_dict *tersa_dict_new(const tersa_alloc *alloc, const tersa_key *strings, size_t nstrings,
                         const tersa_key *shape_keys, const size_t *shape_lens, size_t nshapes, tersa_error *err) {
    if (err) set_error(err, TERSA_OK, 0, NULL);
    tersa_dict *d = dict_alloc(alloc, err);
    if (!d) return NULL;
    if (!dict_fill(d, strings, nstrings, shape_keys, shape_lens, nshapes, err)) {
        tersa_dict_free(d);
        return NULL;
    }
    return d;
}

/* Read the next item into *item, requiring `type`. */
static bool expect(tersa_reader *r, tersa_item *item, tersa_type type, tersa_error *err) {
    if (!tersa_read(r, item)) {
        if (err) *err = *tersa_reader_error(r);
        return false;
    }
    if (item->type != type) {
        if (err) set_error(err, TERSA_ERR_INVALID_VALUE, item->offset, "not a Tersa dictionary");
        return false;
    }
    return true;
}

/* The next item, an array of *n entries: room for n + 1 entries of `elem`
 * bytes (NULL if it is no array or memory runs out). */
static void *expect_array(tersa_reader *r, tersa_item *item, tersa_error *err, const tersa_alloc *alloc, size_t elem,
                          size_t *n) {
    if (!expect(r, item, TERSA_ARRAY, err)) return NULL;
    *n = item->v.array.count;
    return mem_alloc(alloc, (*n + 1) * elem);
}

tersa_dict *tersa_dict_parse(const tersa_alloc *alloc, const void *data, size_t len, tersa_error *err) {
    if (err) set_error(err, TERSA_OK, 0, NULL);
    alloc = alloc_or_default(alloc);
    tersa_reader *r = tersa_reader_new(alloc);
    if (!r) {
        if (err) set_error(err, TERSA_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    tersa_key *strings = NULL, *keys = NULL;
    size_t *lens = NULL;
    size_t nstrings = 0, nshapes = 0, nkeys = 0, keys_cap = 0;
    tersa_dict *d = NULL;
    tersa_item it;
    bool ok = tersa_reader_start(r, data, len, NULL, 0, TERSA_READ_NO_HEADER) && expect(r, &it, TERSA_ARRAY, err);
    ok = ok && it.v.array.count == 3 && expect(r, &it, TERSA_STRING, err) &&
         it.v.str.len == sizeof(DICT_MAGIC) - 1 && memcmp(it.v.str.ptr, DICT_MAGIC, it.v.str.len) == 0;
    ok = ok && (strings = (tersa_key *)expect_array(r, &it, err, alloc, sizeof *strings, &nstrings)) != NULL;
    for (size_t i = 0; ok && i < nstrings; i++) {
        ok = expect(r, &it, TERSA_STRING, err);
        if (ok) strings[i] = (tersa_key){it.v.str.ptr, it.v.str.len, false};
    }
    ok = ok && (lens = (size_t *)expect_array(r, &it, err, alloc, sizeof *lens, &nshapes)) != NULL;
    for (size_t i = 0; ok && i < nshapes; i++) {
        ok = expect(r, &it, TERSA_ARRAY, err);
        if (!ok) break;
        lens[i] = it.v.array.count;
        for (size_t j = 0; ok && j < lens[i]; j++) {
            ok = tersa_read(r, &it);
            if (!ok) {
                if (err) *err = *tersa_reader_error(r);
                break;
            }
            if (it.type != TERSA_STRING && it.type != TERSA_SYMBOL) {
                ok = invalid(err, "not a Tersa dictionary");
                break;
            }
            if (!tersa_grow_array(alloc, (void **)&keys, &keys_cap, nkeys + 1, sizeof(tersa_key))) {
                ok = false;
                break;
            }
            keys[nkeys++] = (tersa_key){it.v.str.ptr, it.v.str.len, it.type == TERSA_SYMBOL};
        }
    }
    if (ok && !tersa_reader_finish(r)) {
        if (err) *err = *tersa_reader_error(r);
        ok = false;
    }
    if (ok) {
        d = dict_alloc(alloc, err);
        if (d && !dict_fill(d, strings, nstrings, keys, lens, nshapes, err)) {
            tersa_dict_free(d);
            d = NULL;
        }
        /* A serialization is canonical; anything else would give another id. */
        if (d && (d->serialized_len != len || memcmp(d->serialized, data, len) != 0)) {
            invalid(err, "dictionary serialization is not canonical");
            tersa_dict_free(d);
            d = NULL;
        }
    } else if (err && err->code == TERSA_OK) {
        set_error(err, TERSA_ERR_INVALID_VALUE, 0, "not a Tersa dictionary");
    }
    mem_free(alloc, strings, (nstrings + 1) * sizeof(tersa_key));
    mem_free(alloc, lens, (nshapes + 1) * sizeof(size_t));
    mem_free(alloc, keys, keys_cap * sizeof(tersa_key));
    tersa_reader_free(r);
    return d;
}

uint64_t tersa_dict_id(const tersa_dict *dict) { return dict->id; }

const uint8_t *tersa_dict_serialized(const tersa_dict *dict, size_t *len) {
    *len = dict->serialized_len;
    return dict->serialized;
}

size_t tersa_dict_string_count(const tersa_dict *dict) { return dict->nstrings; }

size_t tersa_dict_shape_count(const tersa_dict *dict) { return dict->nshapes; }

tersa_key tersa_dict_string(const tersa_dict *dict, size_t i) { return dict->strings[i]; }

const tersa_key *tersa_dict_shape(const tersa_dict *dict, size_t i, size_t *nkeys) {
    *nkeys = dict->shape_offsets[i + 1] - dict->shape_offsets[i];
    return dict->shape_keys + dict->shape_offsets[i];
}
