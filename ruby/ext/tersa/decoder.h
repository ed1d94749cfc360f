/*
 * decoder.h - the state of a Tersa::Decoder, shared by decoder_class.c (decoding),
 * decoder_stream.c (streams: whole buffers, feeding, joining) and deep_copy.c
 * (the benchmark's copy, which builds Hashes the same way).
 */
#ifndef TERSA_RB_DECODER_H
#define TERSA_RB_DECODER_H

#include "common.h"

#include "objcache.h"
#include "stack.h"

/* The kinds of key objects in the core's key cache (objcache.h). */
enum { KEY_STRING = 1, KEY_SYMBOL = 2 };

/* The kinds of shapes in the core's shape cache (objcache.h): what the key
 * objects of the same bytes depend on. */
enum { SHAPES_DECODED = 0, SHAPES_SYMBOLIZED = 1, SHAPES_COPIED = 2 /* deep_copy: the caller's own keys */ };

/* A binding flag of a shape-table entry: its next map makes the template:
 * one map of it was built (without one) in this call, or the shape cache says
 * enough calls met its keys (tersa_shapecache_recurs). */
#define SHAPE_SEEN 0x100

/* An open container of the value being built (decoder_class.c). Its
 * elements wait on the value stack from `values` on; a map's key objects are
 * on the keys stack at `koff`, or for a shape used once on the value stack
 * (from `base`, under the values). */
typedef struct build_frame {
    size_t left;   /* items still to read */
    long base;     /* value-stack length when the container opened */
    long values;   /* where its elements (generic maps: key, value, ...) start */
    size_t koff;
    size_t offset; /* the container item's offset, for errors */
    uint32_t shape; /* TERSA_MAP: its shape-table index */
    uint8_t kind;  /* TERSA_ARRAY, TERSA_MAP or TERSA_GENERIC_MAP */
    bool once;     /* TERSA_MAP: keys on the value stack */
} build_frame;

typedef struct tersa_rb_decoder {
    tersa_reader *r;
    VALUE stack_obj;    /* children waiting for their container */
    tersa_rb_stack *stack;
    VALUE keys_obj;     /* this call's shape keys (see `shapes`) and frozen strings */
    tersa_rb_stack *keys;
    build_frame *frames;    /* the open containers, innermost last: nesting costs heap, not machine stack */
    size_t frames_cap;
    tersa_shapetab shapes;  /* per shape index (objcache.h): off = offset of its keys on `keys` */
    /* Per string-table index (objcache.h); the objects live on `keys`, which
     * marks them (pinned), so these slots are never marked themselves. */
    tersa_slots frozen;      /* freeze: mode: one String per index */
    tersa_slots long_strings; /* long strings: the first String made per index, which
                                 references share (copy-on-write) */
    tersa_slots long_keys;   /* long keys: [2i] as String and [2i+1] as Symbol */
    size_t hashed;          /* key bytes Hashes had to hash this call (stream); see charge_hashing */
    size_t hash_budget;     /* ...and how many the input allows */
    VALUE dictionaries; /* Array of Tersa::Dictionary, or nil */
    const tersa_dict **dicts; /* ...as the reader takes them, for as long as it reads: a joining
                                reader looks its dictionary up at the first sync frame */
    size_t dicts_cap;
    /* The whole buffer being read, while it is: its first byte's address and
     * the last from which 24 bytes can be read, less the first (0, 0: none) */
    uintptr_t input_lo, input_span;
    tersa_feed *feed;   /* feed: bytes received and not yet decoded (NULL until the first) */
    size_t joined_at;   /* where the stream last read was joined (SIZE_MAX: not joined) */
    bool stream_started;
    bool join;          /* streams start at a frame boundary, without a header (SPEC 2.3) */
    bool symbolize_keys;
    bool freeze;
    bool busy;
    uint32_t max_depth;
    tersa_keycache keycache; /* key objects by their bytes, across calls (marked) */
    tersa_shapecache *shapecache; /* shapes by their key bytes, across calls (marked); NULL until used */
} tersa_rb_decoder;

/* A decoding body run by tersa_rb_dec_run. */
typedef VALUE (*tersa_rb_dec_body)(VALUE self, tersa_rb_decoder *d, VALUE arg);

/** The decoder of a Tersa::Decoder object (TypeError for anything else). */
tersa_rb_decoder *tersa_rb_get_decoder(VALUE self);

/** The current Ractor's default decoder, or a fresh one when it is busy. */
VALUE tersa_rb_default_decoder(void);

/** deep_copy: the template Hash for a Hash with these keys (made at the
 *  second Hash with them, as a shape's second map in a call, objcache.h), or
 *  Qundef when none serves; charges the hashing to `d`. */
VALUE tersa_rb_template_for(VALUE self, tersa_rb_decoder *d, const VALUE *keys, long n, size_t at);

/* decoder_class.c, for decoder_stream.c */

/** Run `body` with `opts` (Qnil, or options for this call only) applied;
 *  any exception leaves the decoder reset and usable, its stream over. */
VALUE tersa_rb_dec_run(VALUE self, tersa_rb_decoder *d, VALUE arg, tersa_rb_dec_body body, VALUE opts);
TERSA_NORETURN(void tersa_rb_dec_raise_busy(void));
/** Forget the call or stream being read (not its bytes: see tersa_rb_dec_reset_after_error). */
void tersa_rb_dec_reset(tersa_rb_decoder *d);
/** ...and the bytes fed: after an error the stream is over. */
void tersa_rb_dec_reset_after_error(VALUE self, tersa_rb_decoder *d);
/** Drop the bytes fed (the feed's storage too). */
void tersa_rb_dec_drop_feed(tersa_rb_decoder *d);
/** Raise the reader's error (resetting first). */
TERSA_NORETURN(void tersa_rb_dec_fail(tersa_rb_decoder *d));
/** The next value of the input; everything it made goes with it. */
VALUE tersa_rb_dec_build(VALUE self, tersa_rb_decoder *d);
/** The dictionaries for tersa_reader_start (they live until the next call), in *n how many. */
const tersa_dict *const *tersa_rb_dec_dicts(tersa_rb_decoder *d, size_t *n);
/** Start reading a whole buffer with these reader flags; returns the String the
 *  reader points into, which the caller keeps alive until the reader is done. */
VALUE tersa_rb_dec_start_buffer(tersa_rb_decoder *d, VALUE str, uint32_t flags);
/** A new call or stream: every cache of the last one dropped, hashing counted from 0. */
void tersa_rb_dec_new_generation(tersa_rb_decoder *d);
/** A sync frame began: drop the caches keyed by string- or shape-table index. */
void tersa_rb_dec_drop_index_caches(tersa_rb_decoder *d);
/** The key bytes Hashes may hash for `input_len` bytes of input. */
void tersa_rb_dec_set_hash_budget(tersa_rb_decoder *d, size_t input_len);

/* decoder_stream.c */
VALUE tersa_rb_dec_stream_buffer(VALUE self, tersa_rb_decoder *d, VALUE str);
void tersa_rb_init_decoder_stream(void);

#endif
