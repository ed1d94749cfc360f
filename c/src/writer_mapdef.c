/*
 * writer_mapdef.c - map-definition templates (tersa.h): the bytes and table
 * effects of a map definition written in a pristine state, recorded once and
 * replayed without hashing, looking up or comparing the keys again.
 *
 * In a pristine state (writer_pristine) a definition's output and effects
 * depend only on its keys, the loaded dictionary (its strings come out as
 * references) and the writer's seed (the hashes kept with the entries):
 * - the bytes: the MAPDEF tag and each key as a reference to a dictionary
 *   string, inline, in the prefix form against the key register, in a
 *   timestamp form (which moves the timestamp register), or as a symbol;
 * - a string-table entry for each key it wrote in a non-reference form of
 *   MIN_TABLE_LEN bytes or more, in order;
 * - the key, `last` and timestamp registers as the last key left them;
 * - the shape, with fresh slots.
 * Replaying these in another pristine state with the same dictionary and
 * seed leaves the writer exactly as tersa_write_map_begin would have.
 */
#include "writer_internal.h"

typedef struct md_entry {
    const uint8_t *ptr; /* into the template */
    size_t len;
    uint64_t hash;
} md_entry;

struct tersa_mapdef {
    const tersa_alloc *alloc;
    size_t mem;             /* bytes of this block */
    uint32_t refs;
    bool validated;         /* recorded by a checked call: the keys are valid UTF-8 and distinct */
    uint32_t count, nentries, nbytes;
    uint64_t seed, dict_serial, shape_hash;
    int64_t last_ts;
    /* The key and `last` registers after the definition. */
    const uint8_t *key_str, *last;
    uint32_t key_str_len, last_len;
    bool key_has_str, has_last;
    tersa_key *keys;        /* the shape's keys: into this block, the dictionary or tersa_single_bytes */
    md_entry *entries;
    uint8_t *bytes;         /* the definition's output, then the entries' bytes */
};

#define MD_ALIGN(n) (((n) + 7) & ~(size_t)7)

/* Where register pointer p lies in the template: a key's bytes (p is then
 * one of `stable`, the keys' pointers in the writer, most often the last),
 * or elsewhere (a dictionary string, tersa_single_bytes), valid as long as
 * the template can apply. */
static const uint8_t *md_map(const tersa_key *stable, const tersa_mapdef *md, const uint8_t *p) {
    for (size_t i = md->count; i-- > 0;)
        if ((const uint8_t *)stable[i].ptr == p) return (const uint8_t *)md->keys[i].ptr;
    return p;
}

tersa_mapdef *tersa_writer_record_mapdef(tersa_writer *w, const tersa_key *keys, size_t count, uint64_t h, size_t len0,
                                         size_t nstrs0, bool validated) {
    /* A full table leaves keys in the arena outside it, which the template cannot name. */
    if (w->err.code != TERSA_OK || w->st.nstrs >= TERSA_MAX_STRINGS) return NULL;
    size_t nbytes = w->len - len0, nent = w->st.nstrs - nstrs0, sbytes = 0;
    for (size_t j = 0; j < nent; j++) sbytes += w->st.strs[nstrs0 + j].len;
    if (count > TERSA_MAPDEF_MAX_KEYS || nbytes + sbytes > TERSA_MAPDEF_MAX_BYTES) return NULL;
    size_t head = MD_ALIGN(sizeof(tersa_mapdef)), keys_at = head, ent_at = keys_at + count * sizeof(tersa_key),
           bytes_at = ent_at + nent * sizeof(md_entry), mem = bytes_at + nbytes + sbytes;
    uint8_t *block = (uint8_t *)mem_alloc(w->alloc, mem);
    if (!block) return NULL; /* only the replay is lost */
    tersa_mapdef *md = (tersa_mapdef *)block;
    memset(md, 0, sizeof(*md));
    md->alloc = w->alloc;
    md->mem = mem;
    md->refs = 1;
    md->validated = validated;
    md->count = (uint32_t)count;
    md->nentries = (uint32_t)nent;
    md->nbytes = (uint32_t)nbytes;
    md->seed = w->seed;
    md->dict_serial = w->st.dict_serial;
    md->shape_hash = h;
    md->last_ts = w->st.last_ts;
    md->keys = (tersa_key *)(block + keys_at);
    md->entries = (md_entry *)(block + ent_at);
    md->bytes = block + bytes_at;
    memcpy(md->bytes, w->buf + len0, nbytes);
    uint8_t *s = md->bytes + nbytes;
    for (size_t j = 0; j < nent; j++) {
        const str_entry *e = &w->st.strs[nstrs0 + j];
        memcpy(s, e->ptr, e->len);
        md->entries[j].ptr = s;
        md->entries[j].len = e->len;
        md->entries[j].hash = e->hash;
        s += e->len;
    }
    /* Each key adds at most one entry, in key order: a key whose bytes are
     * the next entry's is that entry. A key may also be a reference to an
     * entry an earlier key of this definition added (a string and a symbol
     * of the same text share one entry): it points at that entry's copy.
     * Every other key is a reference to a dictionary string or a single
     * byte, which outlive the template's use. No key may keep a pointer
     * into the writer's arena, which the next buffer reuses. */
    size_t j = 0;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *kp = (const uint8_t *)keys[i].ptr;
        md->keys[i] = keys[i];
        if (j < nent && kp == w->st.strs[nstrs0 + j].ptr) {
            md->keys[i].ptr = (const char *)md->entries[j++].ptr;
            continue;
        }
        for (size_t e = j; e-- > 0;)
            if (kp == w->st.strs[nstrs0 + e].ptr) {
                md->keys[i].ptr = (const char *)md->entries[e].ptr;
                break;
            }
    }
    if (j != nent) { /* not the definition this was called for */
        mem_free(w->alloc, block, mem);
        return NULL;
    }
    const tersa_slot *ks = &w->st.key_slot;
    md->key_has_str = ks->has_str;
    md->key_str = ks->has_str ? md_map(keys, md, ks->str) : NULL;
    md->key_str_len = ks->str_len;
    md->has_last = w->st.has_last;
    md->last = w->st.has_last ? md_map(keys, md, w->st.last) : NULL;
    md->last_len = w->st.last_len;
    return md;
}

bool tersa_writer_template_point(const tersa_writer *w) { return w->err.code == TERSA_OK && writer_pristine(w); }

int tersa_write_map_template(tersa_writer *w, tersa_mapdef *md, bool checked) {
    if (w->err.code != TERSA_OK || md->seed != w->seed || md->dict_serial != w->st.dict_serial ||
        (checked && !md->validated) || !writer_pristine(w))
        return 0;
    if (!tersa_writer_claim_map(w) || !reserve(w, md->nbytes)) return -1;
    put_bytes(w, md->bytes, md->nbytes);
    for (uint32_t j = 0; j < md->nentries; j++) {
        const md_entry *e = &md->entries[j];
        uint64_t *islot = NULL;
        if (!strings_have_room(w)) return -1;
        /* In a pristine state under the template's dictionary its keys are new. */
        if (str_find(w, e->ptr, e->len, e->hash, &islot) != TERSA_NO_INDEX)
            return fail(w, TERSA_ERR_USAGE, "map template does not match the string table"), -1;
        add_string_entry(w, e->ptr, e->len, e->hash, islot);
    }
    tersa_slot *ks = &w->st.key_slot;
    if (md->key_has_str) {
        ks->str = md->key_str;
        ks->str_len = md->key_str_len;
        ks->has_str = 1;
    }
    w->st.last = md->last;
    w->st.last_len = md->last_len;
    w->st.has_last = md->has_last;
    w->st.last_ts = md->last_ts;
    md->refs++;
    w->md_live = md;
    return tersa_writer_open_defined(w, md->keys, md->count, md->shape_hash) ? 1 : -1;
}

void tersa_mapdef_release(tersa_mapdef *md) {
    if (md && --md->refs == 0) mem_free(md->alloc, md, md->mem);
}
