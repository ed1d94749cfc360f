/*
 * reader_frames.c - the pull reader's input: its lifecycle, a buffer and its
 * header (SPEC 2.1), the end of the value, stream frames and sync frames
 * (SPEC 2.3) and the incremental scanning of a stream's frames.
 */
#include <stdio.h>
#include "reader_internal.h"

/* ==========================================================================
 * Lifecycle
 * ========================================================================== */

tersa_reader *tersa_reader_new(const tersa_alloc *alloc) {
    alloc = alloc_or_default(alloc);
    tersa_reader *r = (tersa_reader *)mem_alloc(alloc, sizeof(tersa_reader));
    if (!r) return NULL;
    memset(r, 0, sizeof(*r));
    r->alloc = alloc;
    r->max_depth = TERSA_DEFAULT_MAX_DEPTH;
    r->joined_at = SIZE_MAX;
    r->seed = tersa_seed();
    tersa_state_init(&r->st, alloc);
    return r;
}

static void pop_all(tersa_reader *r) {
    while (r->depth) pop_frame(r);
}

void tersa_reader_free(tersa_reader *r) {
    if (!r) return;
    const tersa_alloc *a = r->alloc;
    pop_all(r);
    tersa_state_free(&r->st);
    mem_free(a, r->stack, r->stack_cap * sizeof(rframe));
    if (r->memo) mem_free(a, r->memo, MEMO_SETS * sizeof(tersa_mapdef_memo));
    mem_free(a, r, sizeof(*r));
}

void tersa_reader_set_max_depth(tersa_reader *r, uint32_t max_depth) { r->max_depth = max_depth; }

const tersa_error *tersa_reader_error(const tersa_reader *r) { return &r->err; }

size_t tersa_reader_offset(const tersa_reader *r) { return r->base + r->pos; }

/* ==========================================================================
 * A buffer and its header
 * ========================================================================== */

/* Forget the last buffer: its tables (and the loaded dictionary, which the
 * next header names again or not), its error and its open containers. */
static void reset_state(tersa_reader *r) {
    pop_all(r);
    tersa_state_reset(&r->st, false);
    r->err.code = TERSA_OK;
    r->err.offset = 0;
    r->err.message = NULL;
    r->depth = 0;
    r->top_read = false;
    r->in_frame = false;
    r->memo_misses = MEMO_MISSES_PER_BUFFER;
    r->base = 0;
}

/* The VF byte at `at` and the dictionary id after it (a stream header's or a
 * joining reader's first sync frame's): checks them as SPEC 2.1 says and
 * loads the dictionary they name. `loaded` is the serial of the dictionary
 * whose tables the reader still holds. */
static bool take_header_fields(tersa_reader *r, size_t at, bool stream, uint64_t loaded) {
    if (at >= r->end) FAIL(TERSA_ERR_TRUNCATED, at, "input ends inside the header");
    uint8_t vf = r->data[at];
    if (vf >> 4 != TERSA_FORMAT_VERSION) FAIL(TERSA_ERR_UNSUPPORTED_VERSION, at, "unsupported format version");
    uint8_t hf = vf & 0x0F;
    if (hf & ~(FLAG_DICT | FLAG_STREAM)) FAIL(TERSA_ERR_BAD_FLAGS, at, "reserved header flag set");
    if (((hf & FLAG_STREAM) != 0) != stream)
        FAIL(TERSA_ERR_BAD_FLAGS, at, (hf & FLAG_STREAM) ? "buffer is a stream" : "buffer is not a stream");
    r->pos = at + 1;
    r->stream_vf = vf;
    r->stream_dict_id = 0;
    if (hf & FLAG_DICT) {
        if (r->end - r->pos < 8) FAIL(TERSA_ERR_TRUNCATED, at + 1, "input ends inside the dictionary id");
        uint64_t id = load_le64(r->data + r->pos);
        const tersa_dict *dict = NULL;
        for (size_t i = 0; i < r->ndicts; i++)
            if (r->dicts[i] && r->dicts[i]->id == id) dict = r->dicts[i];
        if (!dict) {
            /* The id, in the form every binding prints (0x and 16 hex digits), is
             * what the user needs to find the dictionary: the message names it. The
             * buffer is per thread, so the message stays valid after the reader. */
            static _Thread_local char msg[48];
            snprintf(msg, sizeof msg, "dictionary 0x%016llx was not supplied", (unsigned long long)id);
            FAIL(TERSA_ERR_UNKNOWN_DICTIONARY, at + 1, msg);
        }
        r->pos += 8;
        r->stream_dict_id = id;
        if (loaded == dict->serial) r->st.dict_serial = loaded;
        else if (!tersa_state_load_dictionary(&r->st, dict)) FAIL(TERSA_ERR_NOMEM, 3, "out of memory");
        /* The rest of the state was reset with the buffer (or is, at a sync frame). */
        tersa_state_use_dictionary(&r->st);
    }
    r->have_header = true;
    return true;
}

bool tersa_reader_start(tersa_reader *r, const void *data, size_t len, const tersa_dict *const *dicts,
                       size_t ndicts, uint32_t flags) {
    /* Unless this buffer names the loaded dictionary, its entries will be overwritten. */
    uint64_t loaded = r->st.dict_serial;
    reset_state(r);
    r->data = (const uint8_t *)data;
    r->pos = 0;
    r->end = r->total = len;
    if (flags & TERSA_READ_JOIN) flags |= TERSA_READ_STREAM;
    r->flags = flags;
    r->started = false;
    r->copy_strings = false;
    r->dicts = dicts;
    r->ndicts = dicts ? ndicts : 0;
    r->have_header = false;
    r->seen_frame = false;
    r->frame_synced = false;
    r->joined_at = SIZE_MAX;
    if (flags & (TERSA_READ_NO_HEADER | TERSA_READ_JOIN)) {
        /* A joining reader keeps the loaded dictionary's serial for its first sync frame. */
        if (flags & TERSA_READ_JOIN) r->st.dict_serial = loaded;
        r->started = true;
        return true;
    }
    const uint8_t *p = r->data;
    if (flags == 0 && len >= 3 && p[0] == HEADER_MAGIC0 && p[1] == HEADER_MAGIC1 &&
        p[2] == TERSA_FORMAT_VERSION << 4) {
        /* A plain buffer (no stream, no dictionary): what take_header_fields would find */
        r->pos = 3;
        r->stream_vf = p[2];
        r->stream_dict_id = 0;
        r->have_header = true;
        r->started = true;
        return true;
    }
    if ((len >= 1 && p[0] != HEADER_MAGIC0) || (len >= 2 && p[1] != HEADER_MAGIC1))
        FAIL(TERSA_ERR_BAD_MAGIC, 0, "not a Tersa buffer");
    if (len < 3) FAIL(TERSA_ERR_TRUNCATED, 0, "input ends inside the header");
    if (!take_header_fields(r, 2, (flags & TERSA_READ_STREAM) != 0, loaded)) return false;
    r->started = true;
    return true;
}

/* ==========================================================================
 * Ends and frames
 * ========================================================================== */

static bool value_complete(tersa_reader *r) {
    while (r->depth && r->stack[r->depth - 1].remaining == 0) pop_frame(r);
    return r->depth == 0 && r->top_read;
}

bool tersa_reader_finish(tersa_reader *r) {
    if (r->err.code != TERSA_OK) return false;
    if (!value_complete(r)) return fail_at(r, TERSA_ERR_USAGE, r->pos, "the value has not been read completely");
    if (r->pos != r->end) FAIL(TERSA_ERR_TRAILING_BYTES, r->pos, "bytes after the value");
    return true;
}

/* The state at a sync frame: as at the start of the buffer (SPEC 2.3). What
 * the arena holds (copied strings, shape keys, slots) belongs to the tables
 * being dropped, so it goes too: a long stream with sync frames stays bounded. */
static void reset_tables(tersa_reader *r) { tersa_state_reset(&r->st, true); }

/* The fields of a sync frame whose SYNC byte is at `at`, then the reset. */
static bool take_sync(tersa_reader *r, size_t at) {
    if (!r->have_header) {
        uint64_t loaded = r->st.dict_serial;
        r->st.dict_serial = 0;
        if (!take_header_fields(r, at + 1, true, loaded)) return false;
    } else {
        if (at + 1 >= r->end) FAIL(TERSA_ERR_TRUNCATED, at + 1, "input ends inside the sync frame");
        if (r->data[at + 1] != r->stream_vf) FAIL(TERSA_ERR_BAD_SYNC, at + 1, "sync frame flags differ from the stream's");
        r->pos = at + 2;
        if (r->stream_vf & FLAG_DICT) {
            if (r->end - r->pos < 8) FAIL(TERSA_ERR_TRUNCATED, at + 2, "input ends inside the dictionary id");
            if (load_le64(r->data + r->pos) != r->stream_dict_id)
                FAIL(TERSA_ERR_BAD_SYNC, at + 2, "sync frame names another dictionary");
            r->pos += 8;
        }
    }
    reset_tables(r);
    return true;
}

bool tersa_reader_frame_begin(tersa_reader *r, bool *more) {
    if (r->err.code != TERSA_OK) return false;
    if (!r->started || !(r->flags & TERSA_READ_STREAM) || r->in_frame)
        return fail_at(r, TERSA_ERR_USAGE, r->pos, "not between frames of a stream");
    for (;;) {
        if (r->pos == r->total) {
            *more = false;
            return true;
        }
        size_t at = r->pos;
        size_t n = 0;
        if (!read_length(r, at, 0, &n)) return false;
        if (n == 0) FAIL(TERSA_ERR_INVALID_VALUE, at, "empty stream frame");
        r->end = r->pos + n;
        r->frame_synced = r->data[r->pos] == TAG_SYNC;
        if (r->frame_synced) {
            if (!r->have_header) r->joined_at = r->base + at;
            if (!take_sync(r, r->pos)) return false;
        } else if (!r->have_header) {
            /* A joining reader before its first sync frame: nothing to decode yet. */
            r->pos = r->end;
            r->end = r->total;
            continue;
        } else if (!r->seen_frame) {
            FAIL(TERSA_ERR_OUT_OF_SEQUENCE, r->pos, "the stream's first frame is not a sync frame");
        }
        r->seen_frame = true;
        r->in_frame = true;
        r->top_read = false;
        *more = true;
        return true;
    }
}

bool tersa_reader_frame_synced(const tersa_reader *r) { return r->frame_synced; }

bool tersa_reader_joined(const tersa_reader *r, size_t *offset) {
    if (offset) *offset = r->joined_at;
    return r->joined_at != SIZE_MAX;
}

bool tersa_reader_frame_end(tersa_reader *r) {
    if (r->err.code != TERSA_OK) return false;
    if (!r->in_frame || !value_complete(r))
        return fail_at(r, TERSA_ERR_USAGE, r->pos, "the frame's value has not been read completely");
    if (r->pos != r->end) FAIL(TERSA_ERR_TRAILING_BYTES, r->pos, "bytes after the value in its frame");
    r->in_frame = false;
    r->end = r->total;
    return true;
}

bool tersa_reader_feed_frame(tersa_reader *r, const void *frame, size_t len, size_t base, bool *has_value) {
    if (r->err.code != TERSA_OK) return false;
    if (!r->started || !(r->flags & TERSA_READ_STREAM) || r->in_frame)
        return fail_at(r, TERSA_ERR_USAGE, r->pos, "not between frames of a stream");
    /* Frames come from transient buffers: keep copies of what later frames use. */
    r->copy_strings = true;
    r->data = (const uint8_t *)frame;
    r->base = base;
    r->pos = 0;
    r->end = r->total = len;
    if (len == 0) return fail_at(r, TERSA_ERR_USAGE, 0, "empty frame data");
    bool more;
    if (!tersa_reader_frame_begin(r, &more)) return false;
    *has_value = more;
    if (more && r->end != len) FAIL(TERSA_ERR_TRAILING_BYTES, r->end, "bytes after the frame");
    return true;
}

