/*
 * writer_frames.c - the streaming writer's output: its lifecycle, starting a
 * buffer (the header, SPEC 2.1) and stream frames with their sync frames
 * (SPEC 2.3).
 */
#include "writer_internal.h"

/* ==========================================================================
 * Lifecycle
 * ========================================================================== */

tersa_writer *tersa_writer_new(const tersa_alloc *alloc) {
    alloc = alloc_or_default(alloc);
    tersa_writer *w = (tersa_writer *)mem_alloc(alloc, sizeof(tersa_writer));
    if (!w) return NULL;
    memset(w, 0, sizeof(*w));
    w->alloc = alloc;
    w->max_depth = TERSA_DEFAULT_MAX_DEPTH;
    w->seed = tersa_seed();
    tersa_state_init(&w->st, alloc);
    tersa_kid_init(&w->kids, alloc);
    return w;
}

/* Back to the writer's own buffer, empty (the caller's block, if any, is no
 * longer the writer's: released or handed over). */
static void use_own_buffer(tersa_writer *w) {
    w->out_block = false;
    w->buf = w->own_buf;
    w->cap = w->own_cap;
    w->len = 0;
}

/* Back to the writer's own buffer, empty; a caller's block still held is released. */
static void drop_output_block(tersa_writer *w) {
    if (!w->out_block) return;
    w->out->release(w->out_ctx, w->buf);
    use_own_buffer(w);
}

/* Output changing hands where an open frame or container still refers to
 * its offsets (inside a buffer or a stream's frame) abandons the buffer: the
 * writer fails, so nothing later writes or patches through those offsets. */
static void abandon_if_open(tersa_writer *w) {
    if (w->err.code == TERSA_OK && (w->in_frame || w->depth != 0))
        fail(w, TERSA_ERR_USAGE, "output taken or replaced inside an open frame or container");
}

void tersa_writer_free(tersa_writer *w) {
    if (!w) return;
    const tersa_alloc *a = w->alloc;
    drop_output_block(w);
    tersa_writer_release_frames(w);
    tersa_kid_free(&w->kids);
    mem_free(a, w->buf, w->cap);
    tersa_state_free(&w->st);
    tersa_mapdef_release(w->md_live);
    mem_free(a, w->sidx, w->sidx_cap * sizeof(uint64_t));
    tersa_hash_index_free(a, &w->shape_index);
    mem_free(a, w->stack, w->stack_cap * sizeof(wframe));
    mem_free(a, w->dict_shape_hashes, w->dict_shape_hashes_cap * sizeof(uint64_t));
    mem_free(a, w, sizeof(*w));
}

void tersa_writer_set_max_depth(tersa_writer *w, uint32_t max_depth) { w->max_depth = max_depth; }

const tersa_error *tersa_writer_error(const tersa_writer *w) { return &w->err; }

const uint8_t *tersa_writer_data(const tersa_writer *w, size_t *len) {
    *len = w->len;
    return w->buf;
}

void tersa_writer_set_output(tersa_writer *w, const tersa_output *out, void *ctx) {
    if (w->out_block) abandon_if_open(w);
    drop_output_block(w);
    w->out = out;
    w->out_ctx = ctx;
}

uint8_t *tersa_writer_take_output(tersa_writer *w, size_t *len) {
    *len = 0;
    if (!w->out_block) return NULL;
    abandon_if_open(w);
    uint8_t *block = w->buf;
    *len = w->len;
    use_own_buffer(w);
    return block;
}

size_t tersa_output_block_hint(size_t len) {
    /* An item reserves at most 25 bytes more than it takes (a string's
     * header and varint room); 64 covers that, len / 64 a next output
     * slightly longer than this one. */
    size_t margin = len / 64 + 64;
    return len <= SIZE_MAX - margin ? len + margin : SIZE_MAX;
}

bool tersa_writer_grow_output(tersa_writer *w, size_t need) {
    if (need > SIZE_MAX - w->len) return fail(w, TERSA_ERR_NOMEM, "output too large");
    size_t cap = 0;
    uint8_t *p = w->out->grow(w->out_ctx, w->out_block ? w->buf : NULL, w->len, w->len + need, &cap);
    if (!p || cap < w->len + need) {
        /* The caller's block, if any, is gone or to be released: back to our own buffer. */
        bool ok = fail(w, TERSA_ERR_NOMEM, "out of memory");
        if (p || w->out_block) w->out->release(w->out_ctx, p ? p : w->buf);
        if (w->out_block) use_own_buffer(w);
        w->len = 0;
        return ok;
    }
    if (!w->out_block) {
        if (w->len) memcpy(p, w->buf, w->len);
        w->own_buf = w->buf;
        w->own_cap = w->cap;
        w->out_block = true;
    }
    w->buf = p;
    w->cap = cap;
    return true;
}

bool tersa_writer_complete(const tersa_writer *w) {
    if (!w->started || w->err.code != TERSA_OK || w->depth != 0) return false;
    if (w->flags & TERSA_WRITE_STREAM) return !w->in_frame;
    return w->top_values == 1;
}

/* ==========================================================================
 * Buffers
 * ========================================================================== */

bool tersa_writer_start(tersa_writer *w, const tersa_dict *dict, uint32_t flags) {
    drop_output_block(w);
    w->len = 0;
    w->err.code = TERSA_OK;
    w->err.offset = 0;
    w->err.message = NULL;
    /* Most buffers end with every container closed and no key identity kept. */
    if (TERSA_UNLIKELY(w->depth || w->recording || w->keywatch || w->cur_generic || w->kids.len || w->kids.nents))
        tersa_writer_release_frames(w);
    w->cur_left = 0;
    w->flags = flags;
    w->in_frame = false;
    w->top_values = 0;
    w->dict = dict;
    w->started = true;
    w->frames = w->since_sync = 0;
    w->want_sync = true;
    w->frame_synced = false;
    if (!tersa_writer_reset_tables(w, dict)) return false;
    if (flags & TERSA_WRITE_NO_HEADER) return true;
    if (!reserve(w, 11)) return false;
    put_byte(w, HEADER_MAGIC0);
    put_byte(w, HEADER_MAGIC1);
    put_byte(w, (uint8_t)((TERSA_FORMAT_VERSION << 4) | (dict ? FLAG_DICT : 0) |
                          ((flags & TERSA_WRITE_STREAM) ? FLAG_STREAM : 0)));
    if (dict) {
        store_le64(w->buf + w->len, dict->id);
        w->len += 8;
    }
    return true;
}

/* ==========================================================================
 * Stream frames
 * ========================================================================== */

bool tersa_writer_discard_output(tersa_writer *w) {
    if (w->err.code != TERSA_OK) return false;
    if (!w->started || !(w->flags & TERSA_WRITE_STREAM) || w->in_frame || w->depth)
        return fail(w, TERSA_ERR_USAGE, "output can only be discarded between frames of a stream");
    w->len = 0; /* nothing refers to earlier output: strings and keys live in the arena */
    return true;
}

void tersa_writer_set_sync(tersa_writer *w, uint64_t every_frames, uint64_t every_bytes) {
    w->sync_every_frames = every_frames;
    w->sync_every_bytes = every_bytes;
}

void tersa_writer_sync(tersa_writer *w) { w->want_sync = true; }

bool tersa_writer_frame_synced(const tersa_writer *w) { return w->frame_synced; }

bool tersa_write_frame_begin(tersa_writer *w) {
    if (w->err.code != TERSA_OK) return false;
    if (!w->started || !(w->flags & TERSA_WRITE_STREAM)) return fail(w, TERSA_ERR_USAGE, "not writing a stream");
    if (w->in_frame) return fail(w, TERSA_ERR_USAGE, "frame already open");
    bool sync = w->want_sync || (w->sync_every_frames && w->frames % w->sync_every_frames == 0) ||
                (w->sync_every_bytes && w->since_sync >= w->sync_every_bytes);
    w->frame_start = w->len;
    w->frame_synced = sync;
    w->want_sync = false; /* a request made inside this frame is for the next */
    if (sync) {
        if (!tersa_writer_reset_tables(w, w->dict) || !reserve(w, 10)) return false;
        put_byte(w, TAG_SYNC);
        put_byte(w, (uint8_t)((TERSA_FORMAT_VERSION << 4) | FLAG_STREAM | (w->dict ? FLAG_DICT : 0)));
        if (w->dict) {
            store_le64(w->buf + w->len, w->dict->id);
            w->len += 8;
        }
    }
    w->in_frame = true;
    w->top_values = 0;
    return true;
}

bool tersa_write_frame_end(tersa_writer *w) {
    if (w->err.code != TERSA_OK) return false;
    if (!w->in_frame || w->depth || w->top_values != 1)
        return fail(w, TERSA_ERR_USAGE, "a frame holds exactly one complete value");
    size_t body = w->len - w->frame_start;
    unsigned n = varint_size(body);
    if (!reserve(w, n)) return false;
    memmove(w->buf + w->frame_start + n, w->buf + w->frame_start, body);
    varint_put(w->buf + w->frame_start, body);
    w->len += n;
    w->in_frame = false;
    w->since_sync = (w->frame_synced ? 0 : w->since_sync) + n + body;
    w->frames++;
    return true;
}
