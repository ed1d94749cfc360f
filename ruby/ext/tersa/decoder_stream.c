/*
 * decoder_stream.c - the streams of a Tersa::Decoder (SPEC 2.3): a whole
 * stream buffer (#decode_stream, Tersa.load_stream) or bytes fed as they
 * arrive (#feed, #each, #finish); read from the header on, or joined at a
 * frame boundary (join: true), where the frames before the first sync frame
 * are skipped and that frame stands for the header.
 */
#include "decoder.h"

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
    if (!d->feed && !(d->feed = tersa_feed_new(NULL))) rb_memerror();
    if (!tersa_feed_append(d->feed, RSTRING_PTR(bytes), (size_t)RSTRING_LEN(bytes))) rb_memerror();
    return self;
}

/* The reader wants a pointer even for no bytes. */
static const uint8_t no_bytes[1];

/* Start the stream: read its header from the feed, or
 * for a joining decoder nothing (its first sync frame will stand for the
 * header). False while the header is incomplete. */
static bool start_stream(tersa_rb_decoder *d) {
    const uint8_t *p = no_bytes;
    size_t size = 0;
    if (!d->join) {
        tersa_error err;
        tersa_scan s = d->feed ? tersa_feed_next(d->feed, true, &p, &size, &err) : TERSA_SCAN_NEED_MORE;
        if (s == TERSA_SCAN_NEED_MORE) return false;
        if (s == TERSA_SCAN_ERROR) tersa_rb_raise_decode(&err);
    }
    size_t nd;
    const tersa_dict *const *dicts = tersa_rb_dec_dicts(d, &nd);
    tersa_reader_set_max_depth(d->r, d->max_depth);
    if (!tersa_reader_start(d->r, p, size, dicts, nd, stream_flags(d))) tersa_rb_dec_fail(d);
    tersa_rb_dec_new_generation(d);
    d->stream_started = true;
    d->joined_at = SIZE_MAX;
    if (d->feed) tersa_feed_consume(d->feed, size);
    return true;
}

/* The next complete value, or Qundef when more bytes are needed. */
static VALUE next_value(VALUE self, tersa_rb_decoder *d, VALUE unused) {
    (void)unused;
    /* The reader points into the feed while unpackers may run: nothing else
     * may append to it (feed and friends refuse while busy). */
    if (!d->feed) return Qundef;
    if (!d->stream_started && !start_stream(d)) return Qundef;
    for (;;) {
        const uint8_t *p;
        size_t size, at = tersa_feed_offset(d->feed);
        tersa_error err;
        tersa_scan s = tersa_feed_next(d->feed, false, &p, &size, &err);
        if (s == TERSA_SCAN_NEED_MORE) return Qundef;
        if (s == TERSA_SCAN_ERROR) tersa_rb_raise_decode(&err);
        d->busy = true;
        d->stack->len = 0;
        tersa_rb_dec_set_hash_budget(d, at + size);
        bool has_value;
        if (!tersa_reader_feed_frame(d->r, p, size, at, &has_value)) tersa_rb_dec_fail(d);
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
        tersa_feed_consume(d->feed, size);
        if (has_value) return v;
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
    if (!d->stream_started && !start_stream(d)) {
        /* An incomplete header (nothing fed is an empty input): the reader
         * tells which field it stops in. */
        size_t nd, len = 0;
        const uint8_t *p = d->feed ? tersa_feed_pending(d->feed, &len) : no_bytes;
        const tersa_dict *const *dicts = tersa_rb_dec_dicts(d, &nd);
        if (!tersa_reader_start(d->r, p, len, dicts, nd, TERSA_READ_STREAM)) tersa_rb_dec_fail(d);
        tersa_error err = {TERSA_ERR_TRUNCATED, 0, "input ends inside the header"};
        tersa_rb_raise_decode(&err);
    }
    tersa_error err;
    if (!d->feed || tersa_feed_at_end(d->feed, 0, &err)) return Qnil;
    if (err.code == TERSA_OK) return Qtrue;
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
    tersa_rb_dec_drop_feed(d);
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
