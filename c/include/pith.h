/*
 * pith.h - the Pith v1 C core.
 *
 * Pith is a schemaless binary serialization format (see spec/SPEC.md). This
 * library has no dependency beyond the C11 standard library and provides:
 *
 *   - a streaming writer that produces the canonical encoding,
 *   - a pull reader that yields one item at a time (for language bindings that
 *     build their own objects),
 *   - a small value tree (for tools and tests) with a diagnostic printer,
 *   - pre-shared dictionaries.
 *
 * Conventions
 *   - Every function that can fail returns false (or NULL) and records a
 *     pith_error in its object (or in an out-parameter). The library never
 *     prints and never aborts on bad input.
 *   - Objects (writers, readers, documents) are not thread-safe: use one per
 *     thread. Dictionaries are immutable after creation and may be shared by any
 *     number of threads, writers and readers.
 *   - All memory comes from the pith_alloc given at creation (NULL means the C
 *     library's malloc/realloc/free).
 *   - Strings are UTF-8 byte sequences with explicit lengths; they need not be
 *     NUL-terminated and may contain NUL.
 */
#ifndef PITH_H
#define PITH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Embedders that compile the core into their own module (language bindings)
 * may define PITH_API themselves, e.g. empty, to keep its symbols private. */
#ifndef PITH_API
#if defined(_WIN32) && defined(PITH_SHARED)
#  ifdef PITH_BUILDING
#    define PITH_API __declspec(dllexport)
#  else
#    define PITH_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define PITH_API __attribute__((visibility("default")))
#else
#  define PITH_API
#endif
#endif /* PITH_API */

#define PITH_VERSION_MAJOR 0
#define PITH_VERSION_MINOR 1
#define PITH_VERSION_PATCH 0
#define PITH_VERSION_STRING "0.1.0"

/** The format version this library reads and writes. */
#define PITH_FORMAT_VERSION 1

/* ==========================================================================
 * Errors
 * ========================================================================== */

/** Error codes. The decode errors are the closed list of SPEC section 10, in
 *  that order; the others are the library's own. */
typedef enum pith_code {
    PITH_OK = 0,
    PITH_ERR_TRUNCATED,            /**< input ends inside an item */
    PITH_ERR_BAD_MAGIC,            /**< not a Pith buffer */
    PITH_ERR_UNSUPPORTED_VERSION,  /**< format version other than 1 */
    PITH_ERR_BAD_FLAGS,            /**< reserved header flag, or stream/single mismatch */
    PITH_ERR_INVALID_TAG,          /**< reserved tag byte */
    PITH_ERR_INVALID_VARINT,       /**< varint longer than necessary */
    PITH_ERR_LENGTH_EXCEEDS_INPUT, /**< a length or count larger than what remains */
    PITH_ERR_INVALID_UTF8,         /**< a string that is not valid UTF-8 */
    PITH_ERR_BAD_REFERENCE,        /**< index beyond a table, bad prefix, missing register */
    PITH_ERR_EXPECTED_STRING,      /**< a non-string where a key or symbol name is required */
    PITH_ERR_INVALID_VALUE,        /**< a field outside its range */
    PITH_ERR_DUPLICATE_KEY,        /**< two equal keys in one map */
    PITH_ERR_DEPTH_EXCEEDED,       /**< nesting deeper than the limit */
    PITH_ERR_TRAILING_BYTES,       /**< bytes after the value */
    PITH_ERR_UNKNOWN_DICTIONARY,   /**< the buffer names a dictionary not supplied */
    PITH_ERR_OUT_OF_SEQUENCE,      /**< a stream whose first frame is not a sync frame */
    PITH_ERR_BAD_SYNC,             /**< a sync frame whose VF byte or dictionary id differs from the stream's */
    PITH_ERR_NOMEM,                /**< an allocation failed */
    PITH_ERR_UNREPRESENTABLE,      /**< encoding: a value Pith cannot hold (out of range, invalid UTF-8, ...) */
    PITH_ERR_USAGE                 /**< API misuse (wrong call order, count mismatch) */
} pith_code;

/** An error: code, a static English message, and for decode errors the byte
 *  offset of the item that failed (SPEC section 10). */
typedef struct pith_error {
    pith_code code;
    size_t offset;
    const char *message;
} pith_error;

/** The SPEC name of a code ("truncated", "bad_magic", ...), or "ok", "nomem",
 *  "unrepresentable", "usage". Never NULL. Thread-safe. */
PITH_API const char *pith_code_name(pith_code code);

/** The code whose SPEC name is `name` (length `len`), or PITH_OK if none. */
PITH_API pith_code pith_code_from_name(const char *name, size_t len);

/* ==========================================================================
 * Allocation
 * ========================================================================== */

/** Custom allocator. `realloc` and `free` receive the old size so that pools
 *  and accounting allocators need no headers. All three are required. */
typedef struct pith_alloc {
    void *(*malloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} pith_alloc;

/* ==========================================================================
 * Common types
 * ========================================================================== */

/** A map key of a shape: a string or a symbol name (UTF-8). */
typedef struct pith_key {
    const char *ptr;
    size_t len;
    bool symbol;
} pith_key;

/** Timestamp zones (SPEC section 1). */
typedef enum pith_zone {
    PITH_ZONE_UTC = 0,      /**< an instant in UTC */
    PITH_ZONE_OFFSET = 1,   /**< an instant with a UTC offset in minutes */
    PITH_ZONE_FLOATING = 2  /**< a wall-clock time with no zone */
} pith_zone;

/** A timestamp. `seconds` counts from 1970-01-01T00:00:00Z (for floating
 *  timestamps, as if the wall clock were UTC); the instant and the local time
 *  must lie within years 0001-9999. */
typedef struct pith_timestamp {
    int64_t seconds;
    uint32_t nanos;     /**< 0..999999999 */
    int16_t offset;     /**< minutes east of UTC, -1439..1439; PITH_ZONE_OFFSET only */
    uint8_t zone;       /**< a pith_zone */
} pith_timestamp;

/** Render a timestamp as ISO 8601 text: the local wall time, the fraction
 *  without trailing zeros (none if zero), then "Z" (UTC), "+hh:mm"/"-hh:mm"
 *  (offset) or nothing (floating). Writes at most 36 bytes plus a NUL and
 *  returns the length, or 0 if the timestamp is out of range. Thread-safe. */
PITH_API size_t pith_timestamp_iso(const pith_timestamp *ts, char out[40]);

#define PITH_MIN_SECONDS (-62135596800LL) /**< 0001-01-01T00:00:00Z */
#define PITH_MAX_SECONDS 253402300799LL   /**< 9999-12-31T23:59:59Z */
#define PITH_MAX_OFFSET 1439              /**< minutes */
#define PITH_MAX_EXT_TYPE 65535u
#define PITH_DEFAULT_MAX_DEPTH 1000u
#define PITH_MAX_STRINGS (1u << 20)
#define PITH_MAX_SHAPES (1u << 16)
/** A string or shape index that means "none". */
#define PITH_NO_INDEX UINT32_MAX

/* ==========================================================================
 * Dictionaries (SPEC section 8)
 * ========================================================================== */

typedef struct pith_dict pith_dict;

/**
 * Create a dictionary from strings and shapes. The shapes are given as one
 * array of keys (`shape_keys`) cut into `nshapes` shapes of `shape_lens[i]`
 * keys each. The contents are copied; the caller keeps ownership of its
 * arrays. Fails (NULL, *err set to PITH_ERR_INVALID_VALUE) if a string is
 * shorter than 2 bytes, strings or shapes repeat, a shape repeats a key, or a
 * string is not valid UTF-8. The result is immutable and thread-safe; free it
 * with pith_dict_free once no writer or reader uses it.
 */
PITH_API pith_dict *pith_dict_new(const pith_alloc *alloc,
                                  const pith_key *strings, size_t nstrings,
                                  const pith_key *shape_keys, const size_t *shape_lens,
                                  size_t nshapes, pith_error *err);

/** Create a dictionary from its serialization (SPEC section 8), as written by
 *  pith_dict_serialize. NULL and *err on malformed input. */
PITH_API pith_dict *pith_dict_parse(const pith_alloc *alloc, const void *data, size_t len,
                                    pith_error *err);

/** The dictionary's 64-bit id (FNV-1a of its serialization). */
PITH_API uint64_t pith_dict_id(const pith_dict *dict);

/** The dictionary's serialization; valid while the dictionary lives. */
PITH_API const uint8_t *pith_dict_serialized(const pith_dict *dict, size_t *len);

/** Number of strings / shapes, and access to them (valid while the dictionary lives). */
PITH_API size_t pith_dict_string_count(const pith_dict *dict);
PITH_API size_t pith_dict_shape_count(const pith_dict *dict);
PITH_API pith_key pith_dict_string(const pith_dict *dict, size_t i);
PITH_API const pith_key *pith_dict_shape(const pith_dict *dict, size_t i, size_t *nkeys);

/** Free a dictionary. NULL is allowed. */
PITH_API void pith_dict_free(pith_dict *dict);

/* ==========================================================================
 * Writer (encoder)
 * ========================================================================== */

typedef struct pith_writer pith_writer;

/** pith_writer_start flag: write a stream (SPEC 2.3); values go in frames. */
#define PITH_WRITE_STREAM (1u << 0)
/** pith_writer_start flag: write no header (used for dictionary serializations). */
#define PITH_WRITE_NO_HEADER (1u << 1)

/** Create a writer. NULL only if allocation fails. A writer can encode any
 *  number of buffers one after another (pith_writer_start), reusing its memory. */
PITH_API pith_writer *pith_writer_new(const pith_alloc *alloc);

/** Free a writer and its output buffer. NULL is allowed. */
PITH_API void pith_writer_free(pith_writer *w);

/**
 * Begin a new buffer: discard previous output, tables and registers, then
 * write the header. `dict` (may be NULL) must outlive this buffer's encoding.
 * `flags` combines PITH_WRITE_*. Returns false on allocation failure.
 */
PITH_API bool pith_writer_start(pith_writer *w, const pith_dict *dict, uint32_t flags);

/** Limit container nesting (default PITH_DEFAULT_MAX_DEPTH). Writing deeper
 *  fails with PITH_ERR_DEPTH_EXCEEDED. */
PITH_API void pith_writer_set_max_depth(pith_writer *w, uint32_t max_depth);

/**
 * Value writers. Each writes one item in the current position: the top level,
 * the next element of an open array, or the next value (or, in a generic map,
 * key then value) of an open map. They return false on failure, after which
 * the writer is in an error state until the next pith_writer_start.
 */
PITH_API bool pith_write_null(pith_writer *w);
PITH_API bool pith_write_bool(pith_writer *w, bool value);
PITH_API bool pith_write_int(pith_writer *w, int64_t value);
PITH_API bool pith_write_uint(pith_writer *w, uint64_t value);
/** An integer of any size: `mag` holds the magnitude, little-endian, `len`
 *  bytes (leading zero bytes allowed). Values in the native range are written
 *  in their native form. */
PITH_API bool pith_write_bigint(pith_writer *w, bool negative, const uint8_t *mag, size_t len);
PITH_API bool pith_write_double(pith_writer *w, double value);
/** A string. It is checked to be valid UTF-8 (PITH_ERR_UNREPRESENTABLE if not). */
PITH_API bool pith_write_string(pith_writer *w, const char *ptr, size_t len);
/** A string the caller guarantees to be valid UTF-8 (not checked). */
PITH_API bool pith_write_string_utf8(pith_writer *w, const char *ptr, size_t len);
/** A symbol (its name is checked to be valid UTF-8). */
PITH_API bool pith_write_symbol(pith_writer *w, const char *ptr, size_t len);
PITH_API bool pith_write_binary(pith_writer *w, const void *ptr, size_t len);
/** An extension value; `type` must be <= PITH_MAX_EXT_TYPE. */
PITH_API bool pith_write_ext(pith_writer *w, uint32_t type, const void *ptr, size_t len);
/** A timestamp; fields out of range fail with PITH_ERR_UNREPRESENTABLE. */
PITH_API bool pith_write_timestamp(pith_writer *w, const pith_timestamp *ts);

/** Open an array of exactly `count` elements; close it with pith_write_array_end. */
PITH_API bool pith_write_array_begin(pith_writer *w, size_t count);
PITH_API bool pith_write_array_end(pith_writer *w);

/**
 * Open a map whose keys are all strings or symbols, given up front in order
 * (they must be distinct; key strings are checked to be valid UTF-8). Then
 * write exactly `count` values and call pith_write_map_end. The keys need only
 * live until this call returns.
 */
PITH_API bool pith_write_map_begin(pith_writer *w, const pith_key *keys, size_t count);
/** Like pith_write_map_begin for keys the caller guarantees to be valid UTF-8 and distinct. */
PITH_API bool pith_write_map_begin_utf8(pith_writer *w, const pith_key *keys, size_t count);
PITH_API bool pith_write_map_end(pith_writer *w);

/**
 * The shape-table index that the last pith_write_map_begin* call used or
 * defined in this buffer, or PITH_NO_INDEX (the table was full). Bindings
 * that can recognise a repeated key sequence cheaply (by object identity) keep
 * this index and later call pith_write_map_shape instead of hashing the keys.
 * Indices are valid until the next pith_writer_start.
 */
PITH_API uint32_t pith_writer_last_shape(const pith_writer *w);

/**
 * Open a map of a shape already in this buffer's table (an index returned by
 * pith_writer_last_shape since the last pith_writer_start). Exactly as
 * canonical as pith_write_map_begin with that shape's keys. Then write the
 * shape's number of values and call pith_write_map_end. An unknown index
 * fails with PITH_ERR_USAGE.
 */
PITH_API bool pith_write_map_shape(pith_writer *w, uint32_t shape);

/** Number of keys of a shape in this buffer's table (0 if the index is unknown). */
PITH_API size_t pith_writer_shape_size(const pith_writer *w, uint32_t shape);

/**
 * Open a generic map (keys of any type) of `count` pairs: then write key,
 * value, key, value, ... and call pith_write_map_end. The caller is
 * responsible for the keys being distinct. Maps whose keys are all strings or
 * symbols must use pith_write_map_begin to be canonical.
 */
PITH_API bool pith_write_generic_map_begin(pith_writer *w, size_t count);

/**
 * In a stream, bracket each top-level value (one frame). pith_write_frame_begin
 * decides whether the frame is a sync frame (SPEC 2.3): the first frame of a
 * stream always is, later ones as pith_writer_set_sync and pith_writer_sync ask.
 * A sync frame resets the tables, so shape indices from pith_writer_last_shape
 * are stale after it (see pith_writer_frame_synced).
 */
PITH_API bool pith_write_frame_begin(pith_writer *w);
PITH_API bool pith_write_frame_end(pith_writer *w);

/**
 * Sync frames for the streams this writer writes: frame k (counted from 0) is a
 * sync frame when `every_frames` divides k, and a frame is one once at least
 * `every_bytes` bytes of frames (length prefixes included) have been written
 * since the start of the last sync frame. 0 turns a rule off (the default).
 * The setting stays for later pith_writer_start calls.
 */
PITH_API void pith_writer_set_sync(pith_writer *w, uint64_t every_frames, uint64_t every_bytes);

/** Make the next frame a sync frame, so that a consumer can join the stream there. */
PITH_API void pith_writer_sync(pith_writer *w);

/**
 * Whether the frame begun last is a sync frame. Callers that keep shape
 * indices (pith_writer_last_shape) or other per-table-index caches across
 * frames must drop them when this is true after pith_write_frame_begin.
 */
PITH_API bool pith_writer_frame_synced(const pith_writer *w);

/**
 * In a stream, between frames: forget the output written so far (the caller
 * has taken it with pith_writer_data); tables and registers are kept, so the
 * next frames still refer to earlier values. Lets a long-lived stream encoder
 * hand out each frame without its output buffer growing for ever.
 */
PITH_API bool pith_writer_discard_output(pith_writer *w);
#define PITH_HAVE_WRITER_DISCARD_OUTPUT 1

/** The bytes written so far (valid until the next call on the writer), and their length. */
PITH_API const uint8_t *pith_writer_data(const pith_writer *w, size_t *len);

/** True when a complete buffer has been written (no container or frame open). */
PITH_API bool pith_writer_complete(const pith_writer *w);

/** The writer's error (code PITH_OK if none). */
PITH_API const pith_error *pith_writer_error(const pith_writer *w);

/* ==========================================================================
 * Reader (pull decoder)
 * ========================================================================== */

typedef struct pith_reader pith_reader;

/** Item types yielded by pith_read. */
typedef enum pith_type {
    PITH_NULL = 0,
    PITH_FALSE,
    PITH_TRUE,
    PITH_INT,        /**< v.i: a value in int64 range */
    PITH_UINT,       /**< v.u: a value above INT64_MAX */
    PITH_BIGINT,     /**< v.big: magnitude >= 2^64 or value < -2^63 */
    PITH_FLOAT,      /**< v.f */
    PITH_STRING,     /**< v.str */
    PITH_SYMBOL,     /**< v.str: the symbol's name */
    PITH_BINARY,     /**< v.bin */
    PITH_EXT,        /**< v.ext */
    PITH_TIME,       /**< v.time */
    PITH_ARRAY,      /**< v.array.count elements follow */
    PITH_MAP,        /**< v.map: count values follow (keys in v.map.keys) */
    PITH_GENERIC_MAP /**< v.map.count (key, value) pairs follow */
} pith_type;

/** pith_item flag: the string is all ASCII. */
#define PITH_ITEM_ASCII (1u << 0)
/** pith_item flag: this map defined its shape here (a MAPDEF item). */
#define PITH_ITEM_NEW_SHAPE (1u << 1)

/** One decoded item. Pointers stay valid until the reader is restarted or
 *  freed, and, for strings that came from the input, as long as the input. */
typedef struct pith_item {
    pith_type type;
    uint8_t tag;      /**< the tag byte (for inspection) */
    uint32_t flags;   /**< PITH_ITEM_* */
    size_t offset;    /**< offset of the tag byte in the buffer */
    union {
        int64_t i;
        uint64_t u;
        double f;
        struct {
            const char *ptr;
            size_t len;
            uint32_t index; /**< string-table index, or PITH_NO_INDEX if not tabled */
        } str;
        struct {
            const uint8_t *ptr;
            size_t len;
        } bin;
        struct {
            bool negative;
            const uint8_t *mag; /**< little-endian magnitude, last byte non-zero */
            size_t len;
        } big;
        struct {
            uint32_t type;
            const uint8_t *ptr;
            size_t len;
        } ext;
        pith_timestamp time;
        struct {
            size_t count;
        } array;
        struct {
            size_t count;
            uint32_t shape;       /**< shape-table index; PITH_NO_INDEX for a generic
                                       map or a shape the full table did not take */
            const pith_key *keys; /**< the shape's keys (PITH_MAP only) */
            /** Parallel to keys: each key's string-table index (PITH_NO_INDEX
             *  if untabled), or NULL for a dictionary's shapes. Equal indices
             *  mean equal strings, so a binding can convert a key once per
             *  index: many shapes can repeat one long key by reference. */
            const uint32_t *key_strings;
        } map;
    } v;
} pith_item;

/** pith_reader_start flag: the buffer is a stream (SPEC 2.3). */
#define PITH_READ_STREAM (1u << 0)
/** pith_reader_start flag: the buffer has no header (dictionary serializations). */
#define PITH_READ_NO_HEADER (1u << 1)
/**
 * pith_reader_start flag: join a stream midway (SPEC 2.3 "Joining a stream").
 * The data starts at a frame boundary, without a header; frames before the
 * first sync frame are skipped, and that frame supplies the version, flags and
 * dictionary id. Implies PITH_READ_STREAM.
 */
#define PITH_READ_JOIN (1u << 2)

/** Create a reader. NULL only if allocation fails. Reusable across buffers. */
PITH_API pith_reader *pith_reader_new(const pith_alloc *alloc);
PITH_API void pith_reader_free(pith_reader *r);

/** Limit container nesting (default PITH_DEFAULT_MAX_DEPTH). */
PITH_API void pith_reader_set_max_depth(pith_reader *r, uint32_t max_depth);

/**
 * Begin decoding `data` (which must outlive the decoding and every item read
 * from it). Reads the header; `dicts` are the dictionaries the buffer may
 * name (any may be NULL; the array must outlive the decoding, since the sync
 * frames of a joined stream name their dictionary later). With PITH_READ_STREAM the buffer must be a stream,
 * without it a single value. Returns false with the error set on failure.
 */
PITH_API bool pith_reader_start(pith_reader *r, const void *data, size_t len,
                                const pith_dict *const *dicts, size_t ndicts, uint32_t flags);

/**
 * Read the next item, in pre-order: a container item is followed by its
 * elements (for maps: the values, or for generic maps key, value, ...). The
 * caller knows from the counts when each container ends.
 */
PITH_API bool pith_read(pith_reader *r, pith_item *item);

/** Skip the next item and everything inside it. */
PITH_API bool pith_skip(pith_reader *r);

/** After a single value: check that nothing follows (PITH_ERR_TRAILING_BYTES). */
PITH_API bool pith_reader_finish(pith_reader *r);

/**
 * In a stream: move to the next frame. Sets *more to false (and returns true)
 * at the end of the stream. After reading the frame's value, call
 * pith_reader_frame_end, which checks the value filled its frame. A sync
 * frame resets the tables first (see pith_reader_frame_synced); a joining
 * reader skips the frames before its first sync frame here.
 */
PITH_API bool pith_reader_frame_begin(pith_reader *r, bool *more);
PITH_API bool pith_reader_frame_end(pith_reader *r);

/**
 * Whether the frame begun last is a sync frame. Callers that keep caches by
 * string- or shape-table index across frames must drop them when this is true
 * after pith_reader_frame_begin (or pith_reader_feed_frame): the indices now
 * name other entries.
 */
PITH_API bool pith_reader_frame_synced(const pith_reader *r);

/**
 * For a joining reader (PITH_READ_JOIN): whether it has met a sync frame, and
 * in *offset (may be NULL) the stream offset of that frame's length prefix.
 */
PITH_API bool pith_reader_joined(const pith_reader *r, size_t *offset);

/** Current offset in the buffer. */
PITH_API size_t pith_reader_offset(const pith_reader *r);

/** The error (code PITH_OK if none). */
PITH_API const pith_error *pith_reader_error(const pith_reader *r);

/* ==========================================================================
 * Incremental streams (for feed-style APIs)
 * ========================================================================== */

/** Result of pith_stream_scan. */
typedef enum pith_scan {
    PITH_SCAN_NEED_MORE = 0, /**< not enough bytes yet */
    PITH_SCAN_READY,         /**< a header or a whole frame is available */
    PITH_SCAN_ERROR          /**< malformed; see *err */
} pith_scan;

/**
 * Look at the start of `data`: if `header` is true, for a stream header (11 or
 * 3 bytes); otherwise for one frame. On READY, *size is the number of bytes the
 * header or frame takes (for a frame: its length prefix plus its body).
 */
PITH_API pith_scan pith_stream_scan(const void *data, size_t len, bool header, size_t *size,
                                    pith_error *err);

/**
 * Decode a stream whose bytes arrive piece by piece: start the reader on the
 * header bytes alone (pith_reader_start with PITH_READ_STREAM), then hand it
 * each complete frame (as found by pith_stream_scan, length prefix included)
 * with pith_reader_feed_frame before reading its value and calling
 * pith_reader_frame_end. `base` is the frame's offset in the stream, used for
 * error offsets. *has_value is false when a joining reader skipped the frame
 * (it precedes the first sync frame): then read nothing and feed the next.
 * A joining reader is started with PITH_READ_JOIN on zero bytes instead of a header. The reader copies what later frames may need, so each
 * frame's bytes need only live until the next pith_reader_feed_frame.
 */
PITH_API bool pith_reader_feed_frame(pith_reader *r, const void *frame, size_t len, size_t base, bool *has_value);

/* ==========================================================================
 * Value tree
 * ========================================================================== */

typedef struct pith_value pith_value;
typedef struct pith_doc pith_doc;

/** A node of a value tree. Nodes live in their document's arena.
 *  pith_decode gives every map of one shape the same `keys` array; treat
 *  decoded keys as read-only (build new arrays to change them). */
struct pith_value {
    pith_type type;
    union {
        int64_t i;
        uint64_t u;
        double f;
        struct { const char *ptr; size_t len; } str;           /* STRING, SYMBOL */
        struct { const uint8_t *ptr; size_t len; } bin;        /* BINARY */
        struct { bool negative; const uint8_t *mag; size_t len; } big;
        struct { uint32_t type; const uint8_t *ptr; size_t len; } ext;
        pith_timestamp time;
        struct { pith_value *items; size_t count; } array;
        struct { pith_value *keys; pith_value *values; size_t count; } map; /* MAP and GENERIC_MAP */
    } v;
};

/** Create an empty document (an arena for values). NULL on allocation failure. */
PITH_API pith_doc *pith_doc_new(const pith_alloc *alloc);
PITH_API void pith_doc_free(pith_doc *doc);

/** Allocate `n` zeroed values / copy `len` bytes into the document's arena. NULL on failure. */
PITH_API pith_value *pith_doc_values(pith_doc *doc, size_t n);
PITH_API void *pith_doc_bytes(pith_doc *doc, const void *src, size_t len);

/** The document's top-level values (one for a single buffer, any number for a stream). */
PITH_API size_t pith_doc_count(const pith_doc *doc);
PITH_API pith_value *pith_doc_root(const pith_doc *doc, size_t i);
/** Append a top-level value (copied) to the document. */
PITH_API bool pith_doc_push(pith_doc *doc, const pith_value *value);

/** Decoding options for pith_decode. */
typedef struct pith_decode_options {
    const pith_dict *const *dicts; /**< dictionaries the buffer may name */
    size_t ndicts;
    uint32_t max_depth;           /**< 0: PITH_DEFAULT_MAX_DEPTH */
    bool stream;                  /**< the buffer is a stream */
    bool join;                    /**< frames of a stream joined midway (PITH_READ_JOIN) */
} pith_decode_options;

/** After a joining pith_decode: whether a sync frame was met, and in *offset
 *  (may be NULL) the offset of its length prefix. */
PITH_API bool pith_doc_joined(const pith_doc *doc, size_t *offset);

/**
 * Decode a whole buffer into a new document (strings are copied, so `data`
 * may be freed afterwards). `opts` may be NULL. Returns NULL and *err on
 * failure.
 */
PITH_API pith_doc *pith_decode(const pith_alloc *alloc, const void *data, size_t len,
                               const pith_decode_options *opts, pith_error *err);

/* --------------------------------------------------------------------------
 * Building a dictionary from samples (SPEC section 8)
 *
 * Every front end (the CLI, Ruby, Python) builds dictionaries here, so the
 * same samples give the same dictionary and id everywhere. A dictionary pays
 * for what recurs across buffers, so each string of 2+ bytes (string values
 * and symbol names) and each map shape counts once per sample (value) it
 * occurs in, in pre-order; the strings in at least min_count samples are
 * kept, most bytes saved first (samples x length, then shorter, then by
 * bytes), up to max_strings; the shapes in at least min_count samples, in the
 * order first met, up to max_shapes. A builder is not thread-safe.
 * -------------------------------------------------------------------------- */

typedef struct pith_dict_builder pith_dict_builder;

/** Defaults of pith_dict_build_options (a zero field takes its default). */
#define PITH_DICT_BUILD_MIN_COUNT 2
#define PITH_DICT_BUILD_MAX_STRINGS 4096
#define PITH_DICT_BUILD_MAX_SHAPES 1024

/** What pith_dict_builder_finish keeps; zero-initialise for the defaults. */
typedef struct pith_dict_build_options {
    size_t min_count;   /**< samples a string or shape must occur in (0: PITH_DICT_BUILD_MIN_COUNT,
                             or 1 if only one sample was added) */
    size_t max_strings; /**< at most this many strings (0: PITH_DICT_BUILD_MAX_STRINGS) */
    size_t max_shapes;  /**< at most this many shapes (0: PITH_DICT_BUILD_MAX_SHAPES) */
} pith_dict_build_options;

/** A new, empty builder (NULL if allocation fails). Free with pith_dict_builder_free. */
PITH_API pith_dict_builder *pith_dict_builder_new(const pith_alloc *alloc);
/** Count one sample value (copying what it counts; the value may be freed
 *  afterwards). False only if memory ran out. */
PITH_API bool pith_dict_builder_add_value(pith_dict_builder *b, const pith_value *value);
/** Count an encoded sample (a buffer, or a stream whose every value is a
 *  sample; without a dictionary), as bindings do with their own encoder's
 *  output. False and *err if it does not decode. */
PITH_API bool pith_dict_builder_add_buffer(pith_dict_builder *b, const void *data, size_t len, pith_error *err);
/** The dictionary of the samples counted so far (free with pith_dict_free);
 *  `opts` may be NULL. The builder stays usable. NULL and *err on failure. */
PITH_API pith_dict *pith_dict_builder_finish(pith_dict_builder *b, const pith_dict_build_options *opts,
                                             pith_error *err);
/** Free a builder. NULL is allowed. */
PITH_API void pith_dict_builder_free(pith_dict_builder *b);

/** Write a value with a writer (at its current position). Generic maps whose
 *  keys are all strings or symbols are written as shaped maps. */
PITH_API bool pith_write_value(pith_writer *w, const pith_value *value);

/** Structural equality of the data model (floats by bit pattern, map order matters). */
PITH_API bool pith_value_equal(const pith_value *a, const pith_value *b);

/* ==========================================================================
 * Diagnostic notation (spec/vectors/README.md)
 * ========================================================================== */

/** A growable output buffer used by the printers. */
typedef struct pith_buf {
    char *ptr;
    size_t len;
    size_t cap;
    const pith_alloc *alloc;
    bool failed; /**< an allocation failed; contents are incomplete */
} pith_buf;

PITH_API void pith_buf_init(pith_buf *b, const pith_alloc *alloc);
PITH_API void pith_buf_free(pith_buf *b);
PITH_API bool pith_buf_append(pith_buf *b, const void *data, size_t len);

/** Append the diagnostic notation of `value` to `out`. */
PITH_API bool pith_diag(const pith_value *value, pith_buf *out);

/** Append a float in diagnostic notation (shortest round-trip digits). */
PITH_API bool pith_diag_double(double d, pith_buf *out);

/** The longest big-integer magnitude, in bytes (about 19,700 digits), that
 *  pith_format_bigint writes in decimal: the conversion takes time quadratic
 *  in the length (8 KiB: milliseconds; 200 KiB: seconds), so longer ones are
 *  refused, as CPython refuses int-to-str beyond 4,300 digits. */
#define PITH_MAX_DECIMAL_BYTES 8192

/** Append the decimal digits of an integer given as a little-endian magnitude
 *  of `len` bytes, with a leading '-' if `negative` and non-zero. Returns
 *  false with `out` unchanged if the magnitude (without high zero bytes) is
 *  longer than PITH_MAX_DECIMAL_BYTES, or with out->failed set if memory ran
 *  out. pith_diag writes longer ones in hexadecimal (`0x…`). */
PITH_API bool pith_format_bigint(bool negative, const uint8_t *mag, size_t len, pith_buf *out);

/* ==========================================================================
 * Numbers
 * ========================================================================== */

/**
 * The shortest decimal that rounds to `d` (fewest significant digits, then
 * closest): writes its digits (no leading or trailing zeros) to `digits` and
 * returns their count (1..17), with d = +-digits * 10^(*exp10). `d` must be
 * finite and non-zero. Thread-safe.
 */
PITH_API int pith_shortest_digits(double d, char digits[17], int *exp10);

/**
 * Parse a decimal number (JSON number grammar) from [p, end) to the nearest
 * double (ties to even). Returns the end of the number, or NULL if the text
 * does not start with a JSON number. Thread-safe.
 */
PITH_API const char *pith_parse_double(const char *p, const char *end, double *out);

#ifdef __cplusplus
}
#endif

#endif /* PITH_H */
