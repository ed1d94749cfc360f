/*
 * decoder_stream.c - the streams of a Tersa::Decoder (SPEC 2.3): a whole
 * stream buffer (#decode_stream, Tersa.load_stream) or bytes fed as they
 * arrive (#feed, #each, #finish); read from the header on, or joined at a
 * frame boundary (join: true), where the frames before the first sync frame
 * are skipped and that frame stands for the header.
 */
#include "decoder.h"

#include <string.h>

/* After the reader began a frame: a sync frame restarted the string and
 * shape tables, so the caches keyed by their indices would name the old
 * entries; and the first one tells a joining reader where it joined. */
static inline void frame_begun(tersa_rb_decoder *d) {
    if (TERSA_UNLIKELY(tersa_reader_frame_synced(d->r))) {
        tersa_rb_dec_drop_index_caches(d);
        if (d->joined_at == SIZE_MAX) tersa_reader_joined(d->r, &d->joined_at);
    }
}

static uint32_t stream_flags(const tersa_rb_decoder *d) { return d->join ? TERSA_READ_JOIN : TERSA_READ_STREAM; }

/* A whole stream buffer -> Array of values. */
VALUE tersa_rb_dec_stream_buffer(VALUE self, tersa_rb_decoder *d, VALUE str) {
    d->joined_at = SIZE_MAX;
    VALUE input = tersa_rb_dec_start_buffer(d, str, stream_flags(d));
    /* The values collect on the (marked) stack until the Array is made. */
    for (;;) {
        bool more;
        if (!tersa_reader_frame_begin(d->r, &more)) tersa_rb_dec_fail(d);
        if (!more) break;
        frame_begun(d);
        VALUE v = tersa_rb_dec_build(self, d);
        if (!tersa_reader_frame_end(d->r)) tersa_rb_dec_fail(d);
        tersa_rb_stack_push(d->stack, v);
    }
    VALUE out = rb_ary_new_from_values(d->stack->len, d->stack->ptr);
    tersa_rb_dec_reset(d);
    RB_GC_GUARD(input);
    return out;
}

/* call-seq: decoder.decode_stream(string) -> Array
 * Every value of a whole stream buffer, with this decoder's options (join:
 * the frames of a stream from a frame boundary on; then #joined_at). */
static VALUE dec_decode_stream(VALUE self, VALUE str) {
    tersa_rb_decoder *d = tersa_rb_get_decoder(self);
    if (d->busy) tersa_rb_dec_raise_busy();
    if (d->stream_started) rb_raise(eError, "decoder is reading a stream (call #reset first)");
    return tersa_rb_dec_run(self, d, str, tersa_rb_dec_stream_buffer, Qnil);
}

/* ==========================================================================
 * Feeding: bytes as they arrive, values as their frames complete
 * ========================================================================== */

/* call-seq: decoder.feed(bytes) -> decoder */
static VALUE dec_feed(VALUE self, VALUE bytes) {
    tersa_rb_decoder *d = tersa_rb_get_decoder(self);
    if (d->busy) tersa_rb_dec_raise_busy();
    StringValue(bytes);
    if (NIL_P(d->buffer)) {
        VALUE b = rb_str_buf_new(RSTRING_LEN(bytes));
        rb_enc_associate_index(b, tersa_binary_index);
        RB_OBJ_WRITE(self, &d->buffer, b);
    }
    rb_str_buf_cat(d->buffer, RSTRING_PTR(bytes), RSTRING_LEN(bytes));
    return self;
}

/* Drop decoded bytes from the front of the buffer once they dominate it. */
static void compact_buffer(tersa_rb_decoder *d) {
    long len = RSTRING_LEN(d->buffer);
    if (d->buf_pos < 65536 || d->buf_pos * 2 < (size_t)len) return;
    rb_str_modify(d->buffer);
    char *p = RSTRING_PTR(d->buffer);
    memmove(p, p + d->buf_pos, (size_t)len - d->buf_pos);
    rb_str_set_len(d->buffer, len - (long)d->buf_pos);
    d->buf_pos = 0;
}

/* The reader wants a pointer even for no bytes. */
static const uint8_t no_bytes[1];

/* Start the stream whose first `len` bytes are at `p`: read its header, or
 * for a joining decoder nothing (its first sync frame will stand for the
 * header). False while the header is incomplete. */
static bool start_stream(tersa_rb_decoder *d, const uint8_t *p, size_t len) {
    size_t size = 0;
    if (!d->join) {
        tersa_error err;
        tersa_scan s = tersa_stream_scan(p, len, true, &size, &err);
        if (s == TERSA_SCAN_NEED_MORE) return false;
        if (s == TERSA_SCAN_ERROR) tersa_rb_raise_decode(&err);
    }
    size_t nd;
    const tersa_dict *const *dicts = tersa_rb_dec_dicts(d, &nd);
    tersa_reader_set_max_depth(d->r, d->max_depth);
    if (!tersa_reader_start(d->r, d->join ? no_bytes : p, size, dicts, nd, stream_flags(d))) tersa_rb_dec_fail(d);
    tersa_rb_dec_new_generation(d);
    d->stream_started = true;
    d->joined_at = SIZE_MAX;
    d->stream_offset = size;
    d->buf_pos += size;
    return true;
}

/* The next complete value, or Qundef when more bytes are needed. */
static VALUE next_value(VALUE self, tersa_rb_decoder *d, VALUE unused) {
    (void)unused;
    /* The reader points into the buffer while unpackers may run: hold it on
     * the machine stack, which pins it against compaction, and let nothing
     * else touch it (feed and friends refuse while busy). */
    VALUE buffer = d->buffer;
    if (NIL_P(buffer)) return Qundef;
    for (;;) {
        const uint8_t *p = (const uint8_t *)RSTRING_PTR(buffer) + d->buf_pos;
        size_t len = (size_t)RSTRING_LEN(buffer) - d->buf_pos, size;
        if (!d->stream_started) {
            if (!start_stream(d, p, len)) return Qundef;
            continue;
        }
        tersa_error err;
        tersa_scan s = tersa_stream_scan(p, len, false, &size, &err);
        if (s == TERSA_SCAN_NEED_MORE) return Qundef;
        if (s == TERSA_SCAN_ERROR) {
            err.offset += d->stream_offset;
            tersa_rb_raise_decode(&err);
        }
        d->busy = true;
        d->stack->len = 0;
        tersa_rb_dec_set_hash_budget(d, d->stream_offset + size);
        bool has_value;
        if (!tersa_reader_feed_frame(d->r, p, size, d->stream_offset, &has_value)) tersa_rb_dec_fail(d);
        VALUE v = Qundef;
        if (has_value) {
            /* Keys of earlier frames stay valid unless this is a sync frame:
             * the reader copied what later frames use. */
            frame_begun(d);
            v = tersa_rb_dec_build(self, d);
            if (!tersa_reader_frame_end(d->r)) tersa_rb_dec_fail(d);
        }
        /* else a joining decoder skipped a frame before its first sync frame */
        d->busy = false;
        d->stream_offset += size;
        d->buf_pos += size;
        compact_buffer(d);
        if (has_value) {
            RB_GC_GUARD(buffer);
            return v;
        }
    }
}

/* call-seq: decoder.each { |obj| ... } -> decoder;  decoder.each -> Enumerator
 * Yields every complete value fed so far. An error ends the stream (#reset,
 * or new bytes after #reset, to start another). */
static VALUE dec_each(VALUE self) {
    RETURN_ENUMERATOR(self, 0, 0);
    tersa_rb_decoder *d = tersa_rb_get_decoder(self);
    if (d->busy) tersa_rb_dec_raise_busy();
    for (;;) {
        VALUE v = tersa_rb_dec_run(self, d, Qnil, next_value, Qnil);
        if (v == Qundef) break;
        rb_yield(v);
    }
    return self;
}

/* The bytes left must be nothing: else raise what decoding the stream as one
 * buffer would (a header or frame that stops early), so that feeding and
 * finishing fail as Tersa.load_stream does. Qtrue if whole frames are left,
 * which is no error of the stream. */
static VALUE check_finished(VALUE self, tersa_rb_decoder *d, VALUE unused) {
    (void)self, (void)unused;
    VALUE buffer = d->buffer;
    /* Nothing fed is an empty input: no stream without its header, no frames when joining. */
    const uint8_t *p = NIL_P(buffer) ? no_bytes : (const uint8_t *)RSTRING_PTR(buffer) + d->buf_pos;
    size_t len = NIL_P(buffer) ? 0 : (size_t)RSTRING_LEN(buffer) - d->buf_pos;
    if (!d->stream_started && !start_stream(d, p, len)) {
        /* An incomplete header: the reader tells which field it stops in. */
        size_t nd;
        const tersa_dict *const *dicts = tersa_rb_dec_dicts(d, &nd);
        if (!tersa_reader_start(d->r, p, len, dicts, nd, TERSA_READ_STREAM)) tersa_rb_dec_fail(d);
        tersa_error err = {TERSA_ERR_TRUNCATED, 0, "input ends inside the header"};
        tersa_rb_raise_decode(&err);
    }
    if (NIL_P(buffer)) return Qnil;
    p = (const uint8_t *)RSTRING_PTR(buffer) + d->buf_pos;
    len = (size_t)RSTRING_LEN(buffer) - d->buf_pos;
    if (!len) return Qnil;
    tersa_error err;
    size_t size;
    tersa_scan s = tersa_stream_scan(p, len, false, &size, &err);
    if (s == TERSA_SCAN_READY) return Qtrue;
    if (s == TERSA_SCAN_NEED_MORE) {
        /* A length prefix is 1 to 9 bytes, told by its first byte's trailing zeros (SPEC 3.1). */
        size_t prefix = 1;
        while (prefix < 9 && !(p[0] & (1u << (prefix - 1)))) prefix++;
        err.code = len >= prefix ? TERSA_ERR_LENGTH_EXCEEDS_INPUT : TERSA_ERR_TRUNCATED;
        err.offset = 0;
        err.message = len >= prefix ? "length exceeds the remaining input" : "input ends inside a frame length";
    }
    err.offset += d->stream_offset;
    tersa_rb_raise_decode(&err);
}

/* call-seq: decoder.finish -> decoder
 * Declare the stream complete: raises DecodeError if it stopped inside the
 * header or a frame (the error Tersa.load_stream gives for those bytes). */
static VALUE dec_finish(VALUE self) {
    tersa_rb_decoder *d = tersa_rb_get_decoder(self);
    if (d->busy) tersa_rb_dec_raise_busy();
    /* Raised here, not in the body, so that the stream stays as it is. */
    if (tersa_rb_dec_run(self, d, Qnil, check_finished, Qnil) == Qtrue)
        rb_raise(eError, "#finish before #each has read every complete frame");
    return self;
}

/* call-seq: decoder.reset -> decoder  (forget the stream: a new one may start) */
static VALUE dec_reset(VALUE self) {
    tersa_rb_decoder *d = tersa_rb_get_decoder(self);
    if (d->busy) tersa_rb_dec_raise_busy();
    tersa_rb_dec_reset(d);
    RB_OBJ_WRITE(self, &d->buffer, Qnil);
    d->joined_at = SIZE_MAX;
    return self;
}

/* call-seq: decoder.joined_at -> Integer or nil
 * A joining decoder's first sync frame: the offset of its length prefix in
 * the bytes of the stream read last (fed since the last #reset, or given to
 * #decode_stream). nil until one came, and for decoders that do not join. */
static VALUE dec_joined_at(VALUE self) {
    tersa_rb_decoder *d = tersa_rb_get_decoder(self);
    return d->joined_at == SIZE_MAX ? Qnil : SIZET2NUM(d->joined_at);
}

void tersa_rb_init_decoder_stream(void) {
    rb_define_method(cDecoder, "decode_stream", dec_decode_stream, 1);
    rb_define_method(cDecoder, "feed", dec_feed, 1);
    rb_define_method(cDecoder, "<<", dec_feed, 1);
    rb_define_method(cDecoder, "each", dec_each, 0);
    rb_define_method(cDecoder, "reset", dec_reset, 0);
    rb_define_method(cDecoder, "finish", dec_finish, 0);
    rb_define_method(cDecoder, "joined_at", dec_joined_at, 0);
}
