/*
 * encoder_class.c - Tersa::Encoder and Tersa.dump: the Ruby class (state, GC
 * hooks, options) and the entry points around the object walk (encoder_walk.c).
 */
#include "encoder.h"

VALUE cEncoder;
static ID id_call, id_default, id_dictionary, id_max_depth, id_sync_frames, id_sync_bytes, id_negative_p, id_output,
    id_write;
static rb_ractor_local_key_t default_encoder_key;

/* ==========================================================================
 * State
 * ========================================================================== */

static void enc_mark(void *p) {
    tersa_rb_encoder *e = (tersa_rb_encoder *)p;
    rb_gc_mark_movable(e->stack_obj);
    rb_gc_mark_movable(e->default_proc);
    rb_gc_mark_movable(e->dictionary);
    rb_gc_mark_movable(e->output);
    rb_gc_mark(e->out_str); /* pinned: the writer may hold its bytes */
}

static void enc_compact(void *p) {
    tersa_rb_encoder *e = (tersa_rb_encoder *)p;
    e->stack_obj = rb_gc_location(e->stack_obj);
    e->default_proc = rb_gc_location(e->default_proc);
    e->dictionary = rb_gc_location(e->dictionary);
    e->output = rb_gc_location(e->output);
    /* Cached key identities may have moved: forget them. */
    tersa_rb_enc_drop_shapes(e);
}

static void enc_free(void *p) {
    tersa_rb_encoder *e = (tersa_rb_encoder *)p;
    tersa_rb_enc_drop_top(e);
    tersa_writer_free(e->w);
    tersa_shapes_free(&e->shapes);
    xfree(e->shape_recs);
    xfree(e->shape_keys);
    xfree(e->kbuf);
    xfree(e->frames);
    xfree(e);
}

static size_t enc_memsize(const void *p) {
    const tersa_rb_encoder *e = (const tersa_rb_encoder *)p;
    size_t len = 0;
    if (e->w) tersa_writer_data(e->w, &len);
    return sizeof(*e) + tersa_shapes_memsize(&e->shapes) + e->shape_recs_cap * sizeof(enc_shape_rec) +
           e->shape_keys_cap * sizeof(tersa_key) + e->kbuf_cap * sizeof(tersa_key) +
           e->frames_cap * sizeof(enc_frame) + len;
}

static const rb_data_type_t encoder_type = {
    .wrap_struct_name = "Tersa::Encoder",
    .function = {.dmark = enc_mark, .dfree = enc_free, .dsize = enc_memsize, .dcompact = enc_compact},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static VALUE enc_alloc(VALUE klass) {
    tersa_rb_encoder *e;
    VALUE self = TypedData_Make_Struct(klass, tersa_rb_encoder, &encoder_type, e);
    e->default_proc = Qnil;
    e->dictionary = Qnil;
    e->output = Qnil;
    e->out_str = Qnil;
    e->stack_obj = Qnil;
    e->max_depth = TERSA_DEFAULT_MAX_DEPTH;
    e->w = tersa_writer_new(NULL);
    if (!e->w) rb_memerror();
    tersa_shapes_init(&e->shapes, NULL, NULL, false);
    tersa_rb_stack *s;
    VALUE stack = tersa_rb_stack_new(&s);
    RB_OBJ_WRITE(self, &e->stack_obj, stack);
    e->stack = s;
    return self;
}

static inline tersa_rb_encoder *get_encoder(VALUE self) {
    /* rb_check_typeddata's test without its call; it raises for anything else. */
    if (TERSA_LIKELY(RB_TYPE_P(self, T_DATA) && RTYPEDDATA_P(self) && RTYPEDDATA_TYPE(self) == &encoder_type))
        return (tersa_rb_encoder *)RTYPEDDATA_DATA(self);
    return (tersa_rb_encoder *)rb_check_typeddata(self, &encoder_type);
}

/* ==========================================================================
 * Entry points
 * ========================================================================== */

static void begin(tersa_rb_encoder *e, uint32_t flags) {
    const tersa_dict *dict = NIL_P(e->dictionary) ? NULL : tersa_rb_dict(e->dictionary);
    tersa_writer_set_sync(e->w, e->sync_frames, e->sync_bytes);
    if (!tersa_writer_start(e->w, dict, flags)) rb_memerror();
    tersa_writer_set_max_depth(e->w, e->max_depth);
    tersa_rb_enc_new_buffer(e);
}

/* rb_str_new makes binary Strings (encoding index 0) on every Ruby this
 * builds for; checked once at load time, else rb_enc_str_new. */
static bool str_new_is_binary;

static inline VALUE binary_string(const uint8_t *data, size_t len) {
    if (TERSA_LIKELY(str_new_is_binary)) return rb_str_new((const char *)data, (long)len);
    return rb_enc_str_new((const char *)data, (long)len, tersa_binary);
}

/* The writer clears its whole shape index at every start, and that index
 * keeps the size the busiest buffer needed: after a buffer of thousands of
 * shapes, every small buffer paid for clearing it (16 KB for 1,300 shapes,
 * more than encoding a small record). A writer that has since served a run
 * of buffers using a small part of it is replaced by a fresh one, and the
 * shape lookup's tables go with it (tersa_shapes_note_buffer: the rule of
 * tersa_shapes_end_buffer, without emptying the lookup buffers share here). */
static void note_buffer_shapes(tersa_rb_encoder *e) {
    if (!tersa_shapes_note_buffer(&e->shapes, e->buf_shapes)) return;
    tersa_shapes_free(&e->shapes);
    tersa_shapes_init(&e->shapes, NULL, NULL, false);
    xfree(e->shape_recs);
    e->shape_recs = NULL;
    e->shape_recs_cap = 0;
    xfree(e->shape_keys);
    e->shape_keys = NULL;
    e->shape_keys_cap = 0;
    e->gen++;
    tersa_writer *fresh = tersa_writer_new(NULL);
    if (!fresh) return; /* keep the old one: slower, not wrong */
    tersa_rb_enc_drop_top(e); /* templates belong to their writer */
    tersa_writer_free(e->w);
    e->w = fresh;
    e->out_set = false;
}

/* tersa_output.grow. Nothing here may allocate Ruby objects or run the GC:
 * the walk reads Arrays' items in place while the writer grows its output.
 * So the String is made before the walk (make_out_str, sized by the last
 * large output) and only handed over here while it is large enough; past
 * it, the output goes to a malloc'd block (copied into a String at the end,
 * as the writer's own buffer is). The String is unreachable from Ruby and
 * marked (pinned) through e->out_str, so its bytes stay put and unshared. */
static uint8_t *out_grow(void *ctx, uint8_t *old, size_t len, size_t need, size_t *cap) {
    tersa_rb_encoder *e = ctx;
    if (!old && e->out_str_ptr && (size_t)rb_str_capacity(e->out_str) >= need) {
        *cap = (size_t)rb_str_capacity(e->out_str);
        return e->out_str_ptr;
    }
    size_t want = need <= SIZE_MAX / 2 ? 2 * need : need;
    uint8_t *p;
    if (old && old != e->out_str_ptr) {
        p = realloc(old, want);
    } else {
        p = malloc(want);
        if (p && old) memcpy(p, old, len);
    }
    if (!p) return NULL;
    if (old == e->out_str_ptr) e->out_str_ptr = NULL; /* the String is left unused */
    *cap = want;
    return p;
}

static void out_release(void *ctx, uint8_t *block) {
    tersa_rb_encoder *e = ctx;
    if (block != e->out_str_ptr) free(block);
}

static const tersa_output out_output = {out_grow, out_release, TERSA_OUTPUT_OWN_MAX};

/* Before the walk: a String for an output as large as the last large one,
 * unless the one made for the last call went unused and is large enough. */
static void make_out_str(tersa_rb_encoder *e, VALUE self) {
    /* A block a failed call left with the writer goes first, told apart
     * from the String's bytes while out_str_ptr still names them. */
    size_t unused;
    uint8_t *held = tersa_writer_take_output(e->w, &unused);
    if (held && held != e->out_str_ptr) free(held);
    e->out_str_ptr = NULL;
    if (e->out_hint <= TERSA_OUTPUT_OWN_MAX || !str_new_is_binary) {
        /* No large output expected: a String kept from before would only hold memory. */
        if (!NIL_P(e->out_str)) RB_OBJ_WRITE(self, &e->out_str, Qnil);
        return;
    }
    if (NIL_P(e->out_str) || (size_t)rb_str_capacity(e->out_str) < e->out_hint) {
        RB_OBJ_WRITE(self, &e->out_str, Qnil);
        VALUE str = rb_str_buf_new((long)e->out_hint);
        RB_OBJ_WRITE(self, &e->out_str, str);
    }
    e->out_str_ptr = (uint8_t *)RSTRING_PTR(e->out_str);
}

/* Encode one value as a complete buffer and return it as a binary String. */
static VALUE encode_buffer(tersa_rb_encoder *e, VALUE self, VALUE obj) {
    e->busy = true;
    e->streaming = false;
    e->buf_shapes = 0;
    if (TERSA_UNLIKELY(!e->out_set)) {
        tersa_writer_set_output(e->w, &out_output, e);
        e->out_set = true;
    }
    make_out_str(e, self);
    begin(e, 0);
    tersa_rb_enc_encode_root(e, obj);
    size_t len;
    VALUE out;
    uint8_t *block = tersa_writer_take_output(e->w, &len);
    if (!block) {
        const uint8_t *data = tersa_writer_data(e->w, &len);
        out = binary_string(data, len);
        if (len <= TERSA_OUTPUT_OWN_MAX) e->out_hint = 0;
    } else if (block == e->out_str_ptr) {
        out = e->out_str;
        rb_str_set_len(out, (long)len);
        /* Sized for the last large output: a much smaller one gives back the rest. */
        if ((size_t)rb_str_capacity(out) - len > len / 8 + 4096) rb_str_resize(out, (long)len);
        RB_OBJ_WRITE(self, &e->out_str, Qnil);
        e->out_str_ptr = NULL;
        e->out_hint = tersa_output_block_hint(len);
    } else {
        out = rb_str_new((const char *)block, (long)len);
        free(block);
        e->out_hint = tersa_output_block_hint(len);
    }
    note_buffer_shapes(e);
    e->busy = false;
    return out;
}

/* Start a stream (its header is then in the writer's output) unless one is open. */
static void stream_start(tersa_rb_encoder *e) {
    if (e->streaming) return;
    if (e->out_set) {
        /* Streams hand out pieces of the writer's own buffer. */
        tersa_writer_set_output(e->w, NULL, NULL);
        e->out_set = false;
    }
    begin(e, TERSA_WRITE_STREAM);
    e->streaming = true;
    e->stream_failed = false;
    e->emitted = 0;
}

/* What the writer wrote since the last piece handed out; the output it held
 * is dropped (the stream's tables stay), so a long stream's memory does not
 * grow with its bytes. */
static VALUE take_output(tersa_rb_encoder *e) {
    size_t len;
    const uint8_t *data = tersa_writer_data(e->w, &len);
    VALUE piece = binary_string(data + e->emitted, len - e->emitted);
    if (tersa_writer_discard_output(e->w)) len = 0;
    e->emitted = len;
    return piece;
}

/* Append one frame to the stream; returns it (with the header, if not given out yet). */
static VALUE push_frame(tersa_rb_encoder *e, VALUE obj) {
    stream_start(e);
    e->busy = true;
    /* Ruby code ran since the last value: key objects may have changed. */
    tersa_rb_enc_drop_shapes(e);
    uint32_t depth = 0;
    CHECK_W(tersa_write_frame_begin(e->w));
    /* A sync frame starts the shape table again: cached indices name shapes
     * this frame has not written. Dropped above already, but for another
     * reason, which may go. */
    if (tersa_writer_frame_synced(e->w)) tersa_rb_enc_drop_shapes(e);
    tersa_rb_enc_encode_root(e, obj);
    CHECK_W(tersa_write_frame_end(e->w));
    VALUE piece = take_output(e);
    e->busy = false;
    return piece;
}

/* Give a piece to the output, if any. A piece the output refused is missing
 * from the stream while the tables count it: the stream takes no more values. */
static VALUE emit(tersa_rb_encoder *e, VALUE piece) {
    if (NIL_P(e->output)) return piece;
    e->stream_failed = true;
    rb_funcall(e->output, id_write, 1, piece);
    e->stream_failed = false;
    return piece;
}

/* A sync option: nil or 0 (off), or a positive Integer. */
static uint64_t sync_option(VALUE v, const char *name) {
    if (NIL_P(v)) return 0;
    if (!RB_INTEGER_TYPE_P(v)) rb_raise(rb_eTypeError, "%s must be an Integer", name);
    if (RTEST(rb_funcall(v, id_negative_p, 0))) rb_raise(rb_eArgError, "%s must not be negative", name);
    return NUM2ULL(v);
}

/* Options are checked in full before any is applied: a bad one changes
 * nothing. The sync options only where streams are written (Encoder.new). */
static void apply_options(tersa_rb_encoder *e, VALUE self, VALUE opts, bool streams) {
    if (NIL_P(opts)) return;
    ID ids[6] = {id_default, id_dictionary, id_max_depth, id_sync_frames, id_sync_bytes, id_output};
    VALUE vals[6] = {Qundef, Qundef, Qundef, Qundef, Qundef, Qundef};
    rb_get_kwargs(opts, ids, 0, streams ? 6 : 3, vals);
    if (vals[5] != Qundef && !NIL_P(vals[5]) && !rb_respond_to(vals[5], id_write))
        rb_raise(rb_eTypeError, "output: must respond to #write (an IO)");
    uint64_t sync_frames = vals[3] == Qundef ? e->sync_frames : sync_option(vals[3], "sync_frames");
    uint64_t sync_bytes = vals[4] == Qundef ? e->sync_bytes : sync_option(vals[4], "sync_bytes");
    if (vals[0] != Qundef && !NIL_P(vals[0]) && !rb_respond_to(vals[0], id_call))
        rb_raise(rb_eTypeError, "default: must respond to #call");
    if (vals[1] != Qundef && !NIL_P(vals[1])) tersa_rb_dict(vals[1]);
    long d = -1;
    if (vals[2] != Qundef) {
        d = NUM2LONG(vals[2]);
        if (d < 1 || d > 100000) rb_raise(rb_eArgError, "max_depth must be 1..100000");
    }
    if (vals[0] != Qundef) RB_OBJ_WRITE(self, &e->default_proc, vals[0]);
    if (vals[1] != Qundef) RB_OBJ_WRITE(self, &e->dictionary, vals[1]);
    if (d > 0) e->max_depth = (uint32_t)d;
    if (vals[5] != Qundef) RB_OBJ_WRITE(self, &e->output, vals[5]);
    e->sync_frames = sync_frames;
    e->sync_bytes = sync_bytes;
}

TERSA_NORETURN(static void raise_busy(void));
static void raise_busy(void) { rb_raise(eError, "encoder is in use (re-entered from a hook, or shared between threads?)"); }

/* call-seq: Tersa::Encoder.new(default: nil, dictionary: nil, max_depth: 1000, sync_frames: 0, sync_bytes: 0, output: nil)
 * Called again on an encoder, it takes the new options and starts a new stream. */
static VALUE enc_initialize(int argc, VALUE *argv, VALUE self) {
    VALUE opts;
    rb_scan_args(argc, argv, ":", &opts);
    tersa_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    apply_options(e, self, opts, true);
    e->streaming = false;
    return self;
}

/* Run an encoding body; any exception (ours, a hook's, NoMemoryError) leaves
 * the encoder usable. A stream whose frame failed takes no more values
 * until #reset. */
typedef struct encode_call {
    VALUE self;
    tersa_rb_encoder *e;
    VALUE obj;
    bool stream;
    VALUE opts; /* Qnil, or options for this call only */
} encode_call;

static VALUE encode_call_body(VALUE p) {
    encode_call *c = (encode_call *)p;
    if (!NIL_P(c->opts)) apply_options(c->e, c->self, c->opts, false); /* a call per encode otherwise */
    return c->stream ? push_frame(c->e, c->obj) : encode_buffer(c->e, c->self, c->obj);
}

static VALUE run_encode(encode_call *c) {
    int state = 0;
    VALUE v = rb_protect(encode_call_body, (VALUE)c, &state);
    if (state) {
        tersa_rb_enc_reset(c->e);
        if (c->stream) c->e->stream_failed = true;
        else c->e->streaming = false;
        rb_jump_tag(state);
    }
    return v;
}

/* call-seq: encoder.encode(obj) -> String  (one complete buffer; the encoder is reusable) */
static VALUE enc_encode(VALUE self, VALUE obj) {
    tersa_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    encode_call c = {self, e, obj, false, Qnil};
    return run_encode(&c);
}

/* call-seq: encoder.write(obj) -> String
 * Append obj to the stream as one frame and return that frame's bytes (the
 * stream's first piece starts with its header, unless #header gave it out);
 * also written to output: when given. */
static VALUE enc_write(VALUE self, VALUE obj) {
    tersa_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    if (e->streaming && e->stream_failed)
        rb_raise(eEncodeError, "an earlier value of this stream failed to encode: call #reset to start a new stream");
    encode_call c = {self, e, obj, true, Qnil};
    return emit(e, run_encode(&c));
}

/* call-seq: encoder.header -> String
 * The stream's header alone, before any frame (also written to output:);
 * the writes that follow do not repeat it. Raises Tersa::Error once the
 * header was given out (here or by the first #write) in this stream. */
static VALUE enc_header(VALUE self) {
    tersa_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    if (e->streaming) rb_raise(eError, "the stream's header was already written");
    stream_start(e);
    return emit(e, take_output(e));
}

/* call-seq: encoder.sync -> encoder
 * Make the next value's frame a sync frame, where a consumer can join the
 * stream (SPEC 2.3). The first frame of a stream always is one. Called from
 * a hook while a value is being appended, it is for the frame after that
 * value's: it only sets a flag of the writer, so it is safe while busy. */
static VALUE enc_sync(VALUE self) {
    tersa_rb_encoder *e = get_encoder(self);
    /* A stream not begun yet starts with a sync frame anyway. */
    if (e->streaming) tersa_writer_sync(e->w);
    return self;
}

/* call-seq: encoder.reset -> encoder  (start a new stream) */
static VALUE enc_reset(VALUE self) {
    tersa_rb_encoder *e = get_encoder(self);
    if (e->busy) raise_busy();
    e->streaming = false;
    e->stream_failed = false;
    return self;
}

/* The current Ractor's default encoder, or a fresh one when it is busy
 * (a hook calling Tersa.dump). */
static VALUE default_encoder(void) {
    VALUE enc;
    if (!rb_ractor_local_storage_value_lookup(default_encoder_key, &enc) || NIL_P(enc)) {
        enc = enc_alloc(cEncoder);
        rb_ractor_local_storage_value_set(default_encoder_key, enc);
    }
    if (get_encoder(enc)->busy) enc = enc_alloc(cEncoder);
    return enc;
}

static VALUE run_encode_value(VALUE p) { return run_encode((encode_call *)p); }

/*
 * call-seq: Tersa.dump(obj, default: nil, dictionary: nil, max_depth: 1000) -> String
 *
 * Encode +obj+ canonically. Returns a binary (ASCII-8BIT) String.
 */
static VALUE tersa_s_dump(int argc, VALUE *argv, VALUE mod) {
    VALUE obj, opts = Qnil;
    if (argc == 1 && !rb_keyword_given_p()) obj = argv[0];
    else rb_scan_args(argc, argv, "1:", &obj, &opts);
    VALUE self = default_encoder();
    tersa_rb_encoder *e = get_encoder(self);
    encode_call c = {self, e, obj, false, opts};
    if (NIL_P(opts)) return run_encode(&c);
    /* Options apply to this call only; restore them whatever happens. */
    VALUE saved_default = e->default_proc, saved_dict = e->dictionary;
    uint32_t saved_depth = e->max_depth;
    int state = 0;
    VALUE out = rb_protect(run_encode_value, (VALUE)&c, &state);
    RB_OBJ_WRITE(self, &e->default_proc, saved_default);
    RB_OBJ_WRITE(self, &e->dictionary, saved_dict);
    e->max_depth = saved_depth;
    if (state) rb_jump_tag(state);
    return out;
}

void tersa_rb_init_encoder(void) {
    id_call = rb_intern("call");
    id_default = rb_intern("default");
    id_dictionary = rb_intern("dictionary");
    id_max_depth = rb_intern("max_depth");
    id_sync_frames = rb_intern("sync_frames");
    id_sync_bytes = rb_intern("sync_bytes");
    id_negative_p = rb_intern("negative?");
    id_output = rb_intern("output");
    id_write = rb_intern("write");
    default_encoder_key = rb_ractor_local_storage_value_newkey();
    str_new_is_binary = rb_enc_get_index(rb_str_new(NULL, 0)) == tersa_binary_index;
    tersa_rb_init_encoder_walk();

    cEncoder = rb_define_class_under(mTersa, "Encoder", rb_cObject);
    rb_define_alloc_func(cEncoder, enc_alloc);
    rb_define_method(cEncoder, "initialize", enc_initialize, -1);
    rb_define_method(cEncoder, "encode", enc_encode, 1);
    rb_define_method(cEncoder, "write", enc_write, 1);
    rb_define_method(cEncoder, "header", enc_header, 0);
    rb_define_method(cEncoder, "sync", enc_sync, 0);
    rb_define_method(cEncoder, "reset", enc_reset, 0);
    rb_define_module_function(mTersa, "dump", tersa_s_dump, -1);
}
