/*
 * streams.c - streams (SPEC 2.3): the Encoder and Decoder types,
 * loads_stream() and join_stream().
 *
 * Part of _tersa.c, which includes it (one translation unit: the parts share
 * its static helpers and inline across each other); not compiled alone.
 */

/* ==========================================================================
 * Encoder: a stream of values sharing tables (SPEC 2.3)
 * ========================================================================== */

typedef struct {
    PyObject_HEAD
    enc_ctx *e;
    PyObject *default_fn;
    PyObject *dictionary;
    PyObject *output; /* a binary file object the frames are written to, or NULL */
    uint32_t opt;
    uint32_t max_depth;
    size_t emitted;   /* bytes of the writer's buffer already returned */
    int started;
    int busy;
    int failed;
    /* sync() was called: handed to the writer just before the next frame,
     * since the writer forgets a request made while a frame is open (a
     * `default` calling sync()) when that frame ends. */
    int want_sync;
} EncoderObject;

/* sync_frames, sync_bytes: an int >= 0 (0: that rule is off). */
static int parse_sync_option(PyObject *o, const char *name, uint64_t *out) {
    *out = 0;
    if (!o || o == Py_None) return 0;
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int", name);
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow < 0 || (!overflow && v < 0)) {
        PyErr_Format(PyExc_ValueError, "%s must be >= 0", name);
        return -1;
    }
    /* Beyond 2^63 no stream reaches the count: the same as "very rarely". */
    *out = overflow ? (uint64_t)INT64_MAX : (uint64_t)v;
    return 0;
}

static PyObject *Encoder_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"output", "option", "default", "dictionary", "max_depth", "sync_frames", "sync_bytes", NULL};
    PyObject *output = NULL, *option = NULL, *dflt = NULL, *dictionary = NULL, *maxd = NULL, *sframes = NULL,
             *sbytes = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOOOOO:Encoder", kwlist, &output, &option, &dflt, &dictionary,
                                     &maxd, &sframes, &sbytes))
        return NULL;
    uint32_t opt, max_depth;
    uint64_t every_frames, every_bytes;
    if (parse_option(option, &opt) < 0 || parse_max_depth(maxd, &max_depth) < 0 ||
        parse_sync_option(sframes, "sync_frames", &every_frames) < 0 ||
        parse_sync_option(sbytes, "sync_bytes", &every_bytes) < 0)
        return NULL;
    if (dflt == Py_None) dflt = NULL;
    if (dflt && !PyCallable_Check(dflt)) {
        PyErr_SetString(PyExc_TypeError, "default must be callable");
        return NULL;
    }
    if (dictionary == Py_None) dictionary = NULL;
    if (dictionary && !PyObject_TypeCheck(dictionary, &DictionaryType)) {
        PyErr_SetString(PyExc_TypeError, "dictionary must be a tersa.Dictionary");
        return NULL;
    }
    if (output == Py_None) output = NULL;
    if (output) {
        int has_write = PyObject_HasAttrString(output, "write");
        if (!has_write) {
            PyErr_SetString(PyExc_TypeError, "output must be a binary file object (with a write method)");
            return NULL;
        }
    }
    EncoderObject *self = (EncoderObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->e = enc_ctx_new();
    if (!self->e) {
        Py_DECREF(self);
        return NULL;
    }
    tersa_writer_set_sync(self->e->w, every_frames, every_bytes);
    self->opt = opt;
    self->max_depth = max_depth;
    self->default_fn = Py_XNewRef(dflt);
    self->dictionary = Py_XNewRef(dictionary);
    self->output = Py_XNewRef(output);
    return (PyObject *)self;
}

static int Encoder_traverse(EncoderObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->default_fn);
    Py_VISIT(self->dictionary);
    Py_VISIT(self->output);
    return 0;
}

static int Encoder_clear(EncoderObject *self) {
    Py_CLEAR(self->default_fn);
    Py_CLEAR(self->output);
    return 0;
}

static void Encoder_dealloc(EncoderObject *self) {
    PyObject_GC_UnTrack(self);
    enc_ctx_free(self->e);
    Py_CLEAR(self->default_fn);
    Py_CLEAR(self->dictionary);
    Py_CLEAR(self->output);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Start the stream (the writer then holds its header) unless it has begun. */
static int encoder_start(EncoderObject *self) {
    if (self->started) return 0;
    if (!tersa_writer_start(self->e->w, self->dictionary ? ((DictionaryObject *)self->dictionary)->dict : NULL,
                            TERSA_WRITE_STREAM)) {
        PyErr_NoMemory();
        return -1;
    }
    self->started = 1;
    self->emitted = 0;
    return 0;
}

/* Hand out what the writer holds beyond what was handed out before, as
 * bytes, also written to `output` when given. A frame the output refused is
 * lost to the reader while the tables keep it, so the stream cannot go on:
 * the caller marks it failed when this returns NULL. */
static PyObject *encoder_emit(EncoderObject *self) {
    tersa_writer *w = self->e->w;
    size_t len;
    const uint8_t *data = tersa_writer_data(w, &len);
    PyObject *out = PyBytes_FromStringAndSize((const char *)data + self->emitted, (Py_ssize_t)(len - self->emitted));
    if (!out) return NULL;
    /* The stream's tables stay; its output need not. */
    if (tersa_writer_discard_output(w)) len = 0;
    self->emitted = len;
    if (!self->output) return out;
    PyObject *r = PyObject_CallMethod(self->output, "write", "O", out);
    if (!r) {
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(r);
    return out;
}

static PyObject *Encoder_write(EncoderObject *self, PyObject *obj) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.write() called re-entrantly");
        return NULL;
    }
    if (self->failed) {
        PyErr_SetString(PyExc_ValueError, "this Encoder failed on an earlier value; start a new stream");
        return NULL;
    }
    if (stack_guard("Encoder.write") < 0) return NULL;
    enc_ctx *e = self->e;
    tersa_writer *w = e->w;
    if (encoder_start(self) < 0) return NULL;
    self->busy = 1;
    e->opt = self->opt;
    e->max_depth = self->max_depth;
    e->default_fn = self->default_fn;
    PyObject *result = NULL;
    if (self->want_sync) {
        tersa_writer_sync(w);
        self->want_sync = 0;
    }
    int begun = tersa_write_frame_begin(w);
    /* A sync frame restarts the writer's shape table: the cached indices are stale. */
    if (begun && tersa_writer_frame_synced(w)) enc_shapes_forget(e);
    if (!begun) {
        enc_writer_fail(e);
        enc_raise(e);
    } else if (enc_top(e, obj) == 0) {
        if (!tersa_write_frame_end(w)) {
            enc_writer_fail(e);
            enc_raise(e);
        } else {
            result = encoder_emit(self);
        }
    }
    if (!result) self->failed = 1;
    /* Keep the shape cache (the stream's shapes persist until a sync frame); drop error state. */
    Py_CLEAR(e->err_msg);
    Py_CLEAR(e->err_cause);
    for (size_t i = 0; i < e->path_len; i++) Py_XDECREF(e->path[i].key);
    e->path_len = 0;
    e->default_fn = NULL;
    self->busy = 0;
    return result;
}

static PyObject *Encoder_header(EncoderObject *self, PyObject *unused) {
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.header() called re-entrantly");
        return NULL;
    }
    /* Once handed out (here or by the first write) the header is not repeated:
     * every piece returned belongs to the stream exactly once. */
    if (self->started) {
        PyErr_SetString(PyExc_ValueError, "the stream's header was already written");
        return NULL;
    }
    if (encoder_start(self) < 0) return NULL;
    self->busy = 1;
    PyObject *result = encoder_emit(self);
    self->busy = 0;
    if (!result) self->failed = 1;
    return result;
}

static PyObject *Encoder_sync(EncoderObject *self, PyObject *unused) {
    (void)unused;
    self->want_sync = 1;
    Py_RETURN_NONE;
}

static PyMethodDef Encoder_methods[] = {
    {"write", (PyCFunction)Encoder_write, METH_O,
     "write($self, obj, /)\n--\n\nThe next value of the stream as one frame: the bytes to append (the first\n"
     "piece of a stream starts with its header, unless header() took it), also\n"
     "written to output= when given."},
    {"header", (PyCFunction)Encoder_header, METH_NOARGS,
     "header($self, /)\n--\n\nThe stream header alone (to output= if given), before any frame: later writes\n"
     "do not repeat it. ValueError once the header was written."},
    {"sync", (PyCFunction)Encoder_sync, METH_NOARGS,
     "sync($self, /)\n--\n\nMake the next frame a sync frame (SPEC 2.3): it and the frames after it depend on\n"
     "nothing before it, so a consumer can join the stream there."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject EncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tersa.Encoder",
    .tp_basicsize = sizeof(EncoderObject),
    .tp_dealloc = (destructor)Encoder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Encoder(*, output=None, option=0, default=None, dictionary=None, max_depth=1000, sync_frames=0, "
              "sync_bytes=0)\n--\n\n"
              "Encodes a stream of values that share string and shape tables (SPEC 2.3), one\n"
              "frame per write(), returned or written to output (a binary file object). The\n"
              "first frame is a sync frame; so is every sync_frames-th frame, a frame once\n"
              "sync_bytes bytes of frames followed the last sync frame's start, and the frame\n"
              "after sync() (0: that rule is off).",
    .tp_traverse = (traverseproc)Encoder_traverse,
    .tp_clear = (inquiry)Encoder_clear,
    .tp_methods = Encoder_methods,
    .tp_new = Encoder_new,
};

/* ==========================================================================
 * Decoder: incremental stream decoding
 * ========================================================================== */

typedef struct {
    PyObject_HEAD
    dec_ctx *d;
    PyObject *dictionary;   /* as given (kept alive) */
    dict_list dicts;
    uint32_t max_depth;
    tersa_feed *feed;       /* bytes received and not yet consumed */
    unsigned char header[11];
    int header_done;        /* a joining decoder has no header: set from the start */
    int join;
    int busy;
    PyObject *failed;       /* the DecodeError that broke the stream */
} DecoderObject;

static PyObject *Decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"option", "dictionaries", "max_depth", "join", NULL};
    PyObject *option = NULL, *dictionary = NULL, *maxd = NULL;
    int join = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOp:Decoder", kwlist, &option, &dictionary, &maxd, &join))
        return NULL;
    uint32_t opt, max_depth;
    if (parse_option(option, &opt) < 0 || parse_max_depth(maxd, &max_depth) < 0) return NULL;
    DecoderObject *self = (DecoderObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->dicts.ptr = self->dicts.items;
    if (dict_list_init(&self->dicts, dictionary) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->dictionary = Py_XNewRef(dictionary);
    self->d = dec_ctx_new();
    self->feed = tersa_feed_new(NULL);
    if (!self->d || !self->feed) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        Py_DECREF(self);
        return NULL;
    }
    self->d->strong = 1; /* values are handed out frame by frame; later frames may refer to their strings */
    self->d->opt = opt;
    self->max_depth = max_depth;
    tersa_reader_set_max_depth(self->d->r, max_depth);
    if (join) {
        /* Started on no bytes: each frame comes through tersa_reader_feed_frame, and the
         * first sync frame supplies what a header would (self->dicts stays put: the
         * reader looks the dictionary up then). */
        if (!tersa_reader_start(self->d->r, "", 0, self->dicts.ptr, self->dicts.n, TERSA_READ_JOIN)) {
            dec_fail(self->d);
            Py_DECREF(self);
            return NULL;
        }
        self->join = 1;
        self->header_done = 1;
    }
    return (PyObject *)self;
}

static int Decoder_traverse(DecoderObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->dictionary);
    Py_VISIT(self->failed);
    return 0;
}

static void Decoder_dealloc(DecoderObject *self) {
    PyObject_GC_UnTrack(self);
    dec_ctx_free(self->d);
    dict_list_free(&self->dicts);
    Py_CLEAR(self->dictionary);
    Py_CLEAR(self->failed);
    tersa_feed_free(self->feed);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Decoder_feed(DecoderObject *self, PyObject *data) {
    input_bytes in;
    if (input_get(data, &in) < 0) return NULL;
    if (self->busy) {
        input_release(&in);
        PyErr_SetString(PyExc_RuntimeError, "Decoder used re-entrantly");
        return NULL;
    }
    bool ok = tersa_feed_append(self->feed, in.ptr, in.len);
    input_release(&in);
    if (!ok) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* A failed value leaves the stream's tables part-way through a frame, so
 * every later call must fail too: with the DecodeError itself, or for any
 * other exception (MemoryError, an error from a tzinfo) with a DecodeError
 * "stream_broken" whose cause is that exception, raised from the next call. */
static PyObject *Decoder_fail(DecoderObject *self) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && PyObject_IsInstance(value, DecodeError) == 1) {
        Py_XSETREF(self->failed, Py_NewRef(value));
    } else if (value) {
        PyObject *broken = PyObject_CallFunction(DecodeError, "ssn",
                                                 "the stream broke on an earlier error (see __cause__)",
                                                 "stream_broken", (Py_ssize_t)tersa_feed_offset(self->feed));
        if (broken) {
            PyException_SetCause(broken, Py_NewRef(value));
            Py_XSETREF(self->failed, broken);
        } else {
            PyErr_Clear();
        }
    }
    PyErr_Restore(type, value, tb);
    return NULL;
}

static PyObject *Decoder_iternext(DecoderObject *self) {
    if (self->failed) {
        PyErr_SetObject(DecodeError, self->failed);
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Decoder used re-entrantly");
        return NULL;
    }
    if (stack_guard("Decoder") < 0) return NULL;
    dec_ctx *d = self->d;
    tersa_feed *feed = self->feed;
    const uint8_t *p;
    size_t size;
    tersa_error err = {TERSA_OK, 0, NULL};
    if (!self->header_done) {
        tersa_scan s = tersa_feed_next(feed, true, &p, &size, &err);
        if (s == TERSA_SCAN_NEED_MORE) return NULL;
        if (s == TERSA_SCAN_ERROR) {
            raise_tersa_error(&err);
            return Decoder_fail(self);
        }
        /* The reader keeps the header's bytes; the feed may move them. */
        memcpy(self->header, p, size);
        if (!tersa_reader_start(d->r, self->header, size, self->dicts.ptr, self->dicts.n, TERSA_READ_STREAM)) {
            dec_fail(d);
            return Decoder_fail(self);
        }
        self->header_done = 1;
        tersa_feed_consume(feed, size);
    }
    for (;;) {
        tersa_scan s = tersa_feed_next(feed, false, &p, &size, &err);
        if (s == TERSA_SCAN_NEED_MORE) return NULL;
        if (s == TERSA_SCAN_ERROR) {
            raise_tersa_error(&err);
            return Decoder_fail(self);
        }
        bool has_value = false;
        if (!tersa_reader_feed_frame(d->r, p, size, tersa_feed_offset(feed), &has_value)) {
            dec_fail(d);
            return Decoder_fail(self);
        }
        if (has_value) break;
        /* A joining decoder skipped a frame before its first sync frame. */
        tersa_feed_consume(feed, size);
    }
    self->busy = 1;
    /* The string and shape tables restarted: the caches by index are stale. */
    if (tersa_reader_frame_synced(d->r)) dec_ctx_clear(d);
    d->ahead = AHEAD(size);
    PyObject *v = dec_value(d);
    if (v && !tersa_reader_frame_end(d->r)) {
        Py_CLEAR(v);
        dec_fail(d);
    }
    self->busy = 0;
    if (!v) return Decoder_fail(self);
    tersa_feed_consume(feed, size);
    return v;
}

static PyObject *Decoder_close(DecoderObject *self, PyObject *unused) {
    (void)unused;
    if (self->failed) {
        PyErr_SetObject(DecodeError, self->failed);
        return NULL;
    }
    size_t avail, skip = 0;
    const uint8_t *p = tersa_feed_pending(self->feed, &avail);
    if (!self->header_done) {
        /* What there is of the header: the reader checks its fields in order,
         * so a wrong version or flags byte is reported before a missing id. */
        if (!tersa_reader_start(self->d->r, p, avail, self->dicts.ptr, self->dicts.n, TERSA_READ_STREAM)) {
            dec_fail(self->d);
            return Decoder_fail(self);
        }
        skip = (avail >= 3 && (p[2] & 0x01)) ? 11 : 3;
    }
    tersa_error err;
    if (tersa_feed_at_end(self->feed, skip, &err)) Py_RETURN_NONE;
    if (err.code == TERSA_OK) {
        PyErr_SetString(PyExc_ValueError, "close() with whole frames not yet read (iterate the decoder first)");
        return NULL;
    }
    raise_tersa_error(&err);
    return Decoder_fail(self);
}

static PyObject *Decoder_iter(PyObject *self) { return Py_NewRef(self); }

static PyObject *Decoder_get_pending(DecoderObject *self, void *c) {
    (void)c;
    size_t len;
    tersa_feed_pending(self->feed, &len);
    return PyLong_FromSize_t(len);
}

static PyMethodDef Decoder_methods[] = {
    {"feed", (PyCFunction)Decoder_feed, METH_O,
     "feed($self, data, /)\n--\n\nAppend received bytes (bytes, bytearray or memoryview); iterate the decoder\n"
     "for the values they complete."},
    {"close", (PyCFunction)Decoder_close, METH_NOARGS,
     "close($self, /)\n--\n\nCheck that the stream ended cleanly (DecodeError if a header or frame is incomplete)."},
    {NULL, NULL, 0, NULL},
};

/* Where a joining reader met its first sync frame (the offset of the frame's length), else None. */
static PyObject *joined_offset(const tersa_reader *r) {
    size_t at;
    if (!tersa_reader_joined(r, &at)) Py_RETURN_NONE;
    return PyLong_FromSize_t(at);
}

static PyObject *Decoder_get_joined_at(DecoderObject *self, void *c) {
    (void)c;
    if (!self->join) Py_RETURN_NONE;
    return joined_offset(self->d->r);
}

static PyGetSetDef Decoder_getset[] = {
    {"pending", (getter)Decoder_get_pending, NULL, "Bytes received but not yet decoded.", NULL},
    {"joined_at", (getter)Decoder_get_joined_at, NULL,
     "join=True: the offset in the bytes fed of the first sync frame (its length prefix), where\n"
     "decoding started; None before it arrives, and for a decoder that reads a stream from its header.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tersa.Decoder",
    .tp_basicsize = sizeof(DecoderObject),
    .tp_dealloc = (destructor)Decoder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Decoder(*, option=0, dictionaries=None, max_depth=1000, join=False)\n--\n\n"
              "Decodes a stream incrementally: feed() bytes as they arrive, iterate for the\n"
              "values completed so far, close() at the end. join=True joins a stream midway\n"
              "(SPEC 2.3): the bytes start at a frame boundary, without a header, and frames\n"
              "before the first sync frame are skipped (see joined_at).",
    .tp_traverse = (traverseproc)Decoder_traverse,
    .tp_iter = Decoder_iter,
    .tp_iternext = (iternextfunc)Decoder_iternext,
    .tp_methods = Decoder_methods,
    .tp_getset = Decoder_getset,
    .tp_new = Decoder_new,
};

/* ==========================================================================
 * loads_stream, join_stream: whole buffers
 * ========================================================================== */

/* The values of a whole stream buffer (join: frames from a frame boundary on,
 * without a header), and in *joined_at where a join started (None if no sync
 * frame came). */
static PyObject *stream_values(const input_bytes *in, const dec_args *a, int join, PyObject **joined_at) {
    PyObject *result = PyList_New(0);
    dec_ctx *d = result ? dec_acquire() : NULL;
    if (!d) {
        Py_XDECREF(result);
        return NULL;
    }
    d->opt = a->opt;
    d->ahead = AHEAD(in->len);
    if (a->max_depth != TERSA_DEFAULT_MAX_DEPTH) tersa_reader_set_max_depth(d->r, a->max_depth);
    if (!tersa_reader_start(d->r, in->ptr, in->len, a->dicts.ptr, a->dicts.n, join ? TERSA_READ_JOIN : TERSA_READ_STREAM)) {
        dec_fail(d);
        Py_CLEAR(result);
    }
    while (result) {
        bool more;
        if (!tersa_reader_frame_begin(d->r, &more)) {
            dec_fail(d);
            Py_CLEAR(result);
            break;
        }
        if (!more) break;
        /* The string and shape tables restarted: the caches by index are stale. */
        if (tersa_reader_frame_synced(d->r)) dec_ctx_clear(d);
        PyObject *v = dec_value(d);
        if (!v || !tersa_reader_frame_end(d->r) || PyList_Append(result, v) < 0) {
            if (v && !PyErr_Occurred()) dec_fail(d);
            Py_XDECREF(v);
            Py_CLEAR(result);
            break;
        }
        Py_DECREF(v);
    }
    if (result && joined_at && !(*joined_at = joined_offset(d->r))) Py_CLEAR(result);
    dec_release(d, in->len);
    return result;
}

/* loads_stream(data, ...) (with join=) and join_stream(data, ...), which
 * also answers where the join started. */
static PyObject *whole_stream(const char *name, bool join_stream, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly 1 positional argument (%zd given)", name, nargs);
        return NULL;
    }
    dec_args a;
    PyObject *join_arg = NULL;
    if (stack_guard(name) < 0 || parse_dec_args(name, args, nargs, kwnames, &a, join_stream ? NULL : &join_arg) < 0)
        return NULL;
    int join = join_stream ? 1 : join_arg ? PyObject_IsTrue(join_arg) : 0;
    input_bytes in;
    if (join < 0 || input_get(args[0], &in) < 0) {
        dict_list_free(&a.dicts);
        return NULL;
    }
    PyObject *joined_at = NULL;
    PyObject *values = stream_values(&in, &a, join, join_stream ? &joined_at : NULL);
    input_release(&in);
    dict_list_free(&a.dicts);
    if (!values || !join_stream) return values;
    return Py_BuildValue("(NN)", joined_at, values);
}

static PyObject *tersa_loads_stream(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    return whole_stream("loads_stream", false, args, nargs, kwnames);
}

static PyObject *tersa_join_stream(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    return whole_stream("join_stream", true, args, nargs, kwnames);
}
