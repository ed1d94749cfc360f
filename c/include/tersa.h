/*
 * tersa.h - the Tersa v1 C core.
 *
 * Tersa is a schemaless binary serialization format (see spec/SPEC.md). This
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
 *     tersa_error in its object (or in an out-parameter). The library never
 *     prints and never aborts on bad input.
 *   - Objects (writers, readers, documents) are not thread-safe: use one per
 *     thread. Dictionaries are immutable after creation and may be shared by any
 *     number of threads, writers and readers.
 *   - All memory comes from the tersa_alloc given at creation (NULL means the C
 *     library's malloc/realloc/free).
 *   - Strings are UTF-8 byte sequences with explicit lengths; they need not be
 *     NUL-terminated and may contain NUL.
 */
#ifndef TERSA_H
#define TERSA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Embedders that compile the core into their own module (language bindings)
 * may define TERSA_API themselves, e.g. empty, to keep its symbols private. */
#ifndef TERSA_API
#if defined(_WIN32) && defined(TERSA_SHARED)
#  ifdef TERSA_BUILDING
#    define TERSA_API __declspec(dllexport)
#  else
#    define TERSA_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define TERSA_API __attribute__((visibility("default")))
#else
#  define TERSA_API
#endif
#endif /* TERSA_API */

#define TERSA_VERSION_MAJOR 0
#define TERSA_VERSION_MINOR 1
#define TERSA_VERSION_PATCH 0
#define TERSA_VERSION_STRING "0.1.0"

/** The format version this library reads and writes. */
#define TERSA_FORMAT_VERSION 1

/* ==========================================================================
 * Errors
 * ========================================================================== */

/** Error codes. The decode errors are the closed list of SPEC section 10, in
 *  that order; the others are the library's own. */
typedef enum tersa_code {
    TERSA_OK = 0,
    TERSA_ERR_TRUNCATED,            /**< input ends inside an item */
    TERSA_ERR_BAD_MAGIC,            /**< not a Tersa buffer */
    TERSA_ERR_UNSUPPORTED_VERSION,  /**< format version other than 1 */
    TERSA_ERR_BAD_FLAGS,            /**< reserved header flag, or stream/single mismatch */
    TERSA_ERR_INVALID_TAG,          /**< reserved tag byte */
    TERSA_ERR_INVALID_VARINT,       /**< varint longer than necessary */
    TERSA_ERR_LENGTH_EXCEEDS_INPUT, /**< a length or count larger than what remains */
    TERSA_ERR_INVALID_UTF8,         /**< a string that is not valid UTF-8 */
    TERSA_ERR_BAD_REFERENCE,        /**< index beyond a table, bad prefix, missing register */
    TERSA_ERR_EXPECTED_STRING,      /**< a non-string where a key or symbol name is required */
    TERSA_ERR_INVALID_VALUE,        /**< a field outside its range */
    TERSA_ERR_DUPLICATE_KEY,        /**< two equal keys in one map */
    TERSA_ERR_DEPTH_EXCEEDED,       /**< nesting deeper than the limit */
    TERSA_ERR_TRAILING_BYTES,       /**< bytes after the value */
    TERSA_ERR_UNKNOWN_DICTIONARY,   /**< the buffer names a dictionary not supplied */
    TERSA_ERR_OUT_OF_SEQUENCE,      /**< a stream whose first frame is not a sync frame */
    TERSA_ERR_BAD_SYNC,             /**< a sync frame whose VF byte or dictionary id differs from the stream's */
    TERSA_ERR_NOMEM,                /**< an allocation failed */
    TERSA_ERR_UNREPRESENTABLE,      /**< encoding: a value Tersa cannot hold (out of range, invalid UTF-8, ...) */
    TERSA_ERR_USAGE                 /**< API misuse (wrong call order, count mismatch) */
} tersa_code;

/** An error: code, an English message (static, except unknown_dictionary's,
 *  which names the id and stays valid until that thread's next such error),
 *  and for decode errors the byte offset of the item that failed (SPEC 10). */
typedef struct tersa_error {
    tersa_code code;
    size_t offset;
    const char *message;
} tersa_error;

/** The SPEC name of a code ("truncated", "bad_magic", ...), or "ok", "nomem",
 *  "unrepresentable", "usage". Never NULL. Thread-safe. */
TERSA_API const char *tersa_code_name(tersa_code code);

/** The code whose SPEC name is `name` (length `len`), or TERSA_OK if none. */
TERSA_API tersa_code tersa_code_from_name(const char *name, size_t len);

/* ==========================================================================
 * Allocation
 * ========================================================================== */

/** Custom allocator. `realloc` and `free` receive the old size so that pools
 *  and accounting allocators need no headers. All three are required. */
typedef struct tersa_alloc {
    void *(*malloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} tersa_alloc;

/* ==========================================================================
 * Common types
 * ========================================================================== */

/** A map key of a shape: a string or a symbol name (UTF-8). */
typedef struct tersa_key {
    const char *ptr;
    size_t len;
    bool symbol;
} tersa_key;

/** Timestamp zones (SPEC section 1). */
typedef enum tersa_zone {
    TERSA_ZONE_UTC = 0,      /**< an instant in UTC */
    TERSA_ZONE_OFFSET = 1,   /**< an instant with a UTC offset in minutes */
    TERSA_ZONE_FLOATING = 2  /**< a wall-clock time with no zone */
} tersa_zone;

/** A timestamp. `seconds` counts from 1970-01-01T00:00:00Z (for floating
 *  timestamps, as if the wall clock were UTC); the instant and the local time
 *  must lie within years 0001-9999. */
typedef struct tersa_timestamp {
    int64_t seconds;
    uint32_t nanos;     /**< 0..999999999 */
    int16_t offset;     /**< minutes east of UTC, -1439..1439; TERSA_ZONE_OFFSET only */
    uint8_t zone;       /**< a tersa_zone */
} tersa_timestamp;

/** Render a timestamp as ISO 8601 text: the local wall time, the fraction
 *  without trailing zeros (none if zero), then "Z" (UTC), "+hh:mm"/"-hh:mm"
 *  (offset) or nothing (floating). Writes at most 36 bytes plus a NUL and
 *  returns the length, or 0 if the timestamp is out of range. Thread-safe. */
TERSA_API size_t tersa_timestamp_iso(const tersa_timestamp *ts, char out[40]);

#define TERSA_MIN_SECONDS (-62135596800LL) /**< 0001-01-01T00:00:00Z */
#define TERSA_MAX_SECONDS 253402300799LL   /**< 9999-12-31T23:59:59Z */
#define TERSA_MAX_OFFSET 1439              /**< minutes */
#define TERSA_MAX_EXT_TYPE 65535u
#define TERSA_DEFAULT_MAX_DEPTH 1000u
#define TERSA_MAX_STRINGS 65856u /**< string-table capacity (SPEC 4.1): the indices REF..REF16 address */
#define TERSA_MAX_SHAPES (1u << 16)
/** A string or shape index that means "none". */
#define TERSA_NO_INDEX UINT32_MAX

/* ==========================================================================
 * Dictionaries (SPEC section 8)
 * ========================================================================== */

typedef struct tersa_dict tersa_dict;

/**
 * Create a dictionary from strings and shapes. The shapes are given as one
 * array of keys (`shape_keys`) cut into `nshapes` shapes of `shape_lens[i]`
 * keys each. The contents are copied; the caller keeps ownership of its
 * arrays. Fails (NULL, *err set to TERSA_ERR_INVALID_VALUE) if a string is
 * shorter than 2 bytes, strings or shapes repeat, a shape repeats a key, or a
 * string is not valid UTF-8. The result is immutable and thread-safe; free it
 * with tersa_dict_free once no writer or reader uses it.
 */
TERSA_API tersa_dict *tersa_dict_new(const tersa_alloc *alloc,
                                  const tersa_key *strings, size_t nstrings,
                                  const tersa_key *shape_keys, const size_t *shape_lens,
                                  size_t nshapes, tersa_error *err);

/** Create a dictionary from its serialization (SPEC section 8), as written by
 *  tersa_dict_serialize. NULL and *err on malformed input. */
TERSA_API tersa_dict *tersa_dict_parse(const tersa_alloc *alloc, const void *data, size_t len,
                                    tersa_error *err);

/** The dictionary's 64-bit id (FNV-1a of its serialization). */
TERSA_API uint64_t tersa_dict_id(const tersa_dict *dict);

/** The dictionary's serialization; valid while the dictionary lives. */
TERSA_API const uint8_t *tersa_dict_serialized(const tersa_dict *dict, size_t *len);

/** Number of strings / shapes, and access to them (valid while the dictionary lives). */
TERSA_API size_t tersa_dict_string_count(const tersa_dict *dict);
TERSA_API size_t tersa_dict_shape_count(const tersa_dict *dict);
TERSA_API tersa_key tersa_dict_string(const tersa_dict *dict, size_t i);
TERSA_API const tersa_key *tersa_dict_shape(const tersa_dict *dict, size_t i, size_t *nkeys);

/** Free a dictionary. NULL is allowed. */
TERSA_API void tersa_dict_free(tersa_dict *dict);

/* ==========================================================================
 * Writer (encoder)
 * ========================================================================== */

typedef struct tersa_writer tersa_writer;

/** tersa_writer_start flag: write a stream (SPEC 2.3); values go in frames. */
#define TERSA_WRITE_STREAM (1u << 0)
/** tersa_writer_start flag: write no header (used for dictionary serializations). */
#define TERSA_WRITE_NO_HEADER (1u << 1)

/** Create a writer. NULL only if allocation fails. A writer can encode any
 *  number of buffers one after another (tersa_writer_start), reusing its memory. */
TERSA_API tersa_writer *tersa_writer_new(const tersa_alloc *alloc);

/** Free a writer and its output buffer. NULL is allowed. */
TERSA_API void tersa_writer_free(tersa_writer *w);

/**
 * Begin a new buffer: discard previous output, tables and registers, then
 * write the header. `dict` (may be NULL) must outlive this buffer's encoding.
 * `flags` combines TERSA_WRITE_*. Returns false on allocation failure.
 */
TERSA_API bool tersa_writer_start(tersa_writer *w, const tersa_dict *dict, uint32_t flags);

/** Limit container nesting (default TERSA_DEFAULT_MAX_DEPTH). Writing deeper
 *  fails with TERSA_ERR_DEPTH_EXCEEDED. */
TERSA_API void tersa_writer_set_max_depth(tersa_writer *w, uint32_t max_depth);

/**
 * Value writers. Each writes one item in the current position: the top level,
 * the next element of an open array, or the next value (or, in a generic map,
 * key then value) of an open map. They return false on failure, after which
 * the writer is in an error state until the next tersa_writer_start.
 */
TERSA_API bool tersa_write_null(tersa_writer *w);
TERSA_API bool tersa_write_bool(tersa_writer *w, bool value);
TERSA_API bool tersa_write_int(tersa_writer *w, int64_t value);
TERSA_API bool tersa_write_uint(tersa_writer *w, uint64_t value);
/** An integer of any size: `mag` holds the magnitude, little-endian, `len`
 *  bytes (leading zero bytes allowed). Values in the native range are written
 *  in their native form. */
TERSA_API bool tersa_write_bigint(tersa_writer *w, bool negative, const uint8_t *mag, size_t len);
TERSA_API bool tersa_write_double(tersa_writer *w, double value);
/** An array of `n` floats: the same bytes and state as tersa_write_array_begin(w, n),
 *  tersa_write_double for each value and tersa_write_array_end, in one call
 *  without a container frame (vectors, coordinates, series). `values` may be
 *  NULL when n is 0; the writer does not keep it. */
TERSA_API bool tersa_write_double_array(tersa_writer *w, const double *values, size_t n);
/** A string. It is checked to be valid UTF-8 (TERSA_ERR_UNREPRESENTABLE if not). */
TERSA_API bool tersa_write_string(tersa_writer *w, const char *ptr, size_t len);
/** A string the caller guarantees to be valid UTF-8 (not checked). */
TERSA_API bool tersa_write_string_utf8(tersa_writer *w, const char *ptr, size_t len);
/** The next `n` elements of the innermost open array (or, in any other place,
 *  the next `n` items): the same bytes and state as tersa_write_double (or
 *  tersa_write_int) for each, in one call (long arrays of numbers). */
TERSA_API bool tersa_write_doubles(tersa_writer *w, const double *values, size_t n);
TERSA_API bool tersa_write_ints(tersa_writer *w, const int64_t *values, size_t n);
/** An array of `n` strings the caller guarantees to be valid UTF-8 (not
 *  checked), string i at ptrs[i], lens[i] bytes: the same bytes and state as
 *  tersa_write_array_begin(w, n), tersa_write_string_utf8 for each and
 *  tersa_write_array_end, in one call without a container frame (rows of
 *  strings). The string-table lookups of up to 64 strings at a time are
 *  started together, so that their cache misses overlap. */
TERSA_API bool tersa_write_string_array(tersa_writer *w, const char *const *ptrs, const size_t *lens, size_t n);
/**
 * Borrowed strings: the same bytes and state as tersa_write_string_utf8 and
 * tersa_write_string_array, but the writer may keep pointing at the caller's
 * bytes instead of copying each new string (2 bytes or more, not yet in the
 * string table) into its own memory.
 *
 * Ownership: the caller lends every ptr[0..len) passed here, and guarantees
 * that it stays valid and unchanged until the loan ends, which is at the
 * first of: tersa_writer_settle_borrowed (which copies what is still lent),
 * the next tersa_writer_start, or tersa_writer_free on this writer
 * (tersa_writer_data and the error may be read before that). A string freed,
 * moved or modified while lent may make later strings come out as references
 * to the wrong string, or be read after it is freed. A binding whose host
 * code can run during an encoding (callbacks, conversions, a garbage
 * collector) and free or change strings already written calls
 * tersa_writer_settle_borrowed before each such point; for bytes it does not
 * control even that long, it uses tersa_write_string_utf8.
 * In a stream (TERSA_WRITE_STREAM) the tables outlive each frame's call, so
 * these copy exactly as tersa_write_string_utf8 does; they also copy once
 * settling has cost a buffer more than lending saves (many settles over
 * many shapes). A map-definition template (tersa_write_map_template) never
 * holds a borrowed string.
 * UTF-8 is not checked, as for tersa_write_string_utf8. NULL ptr only with
 * len 0. Not thread-safe on one writer, like every writer call.
 */
TERSA_API bool tersa_write_string_utf8_borrowed(tersa_writer *w, const char *ptr, size_t len);
TERSA_API bool tersa_write_string_array_borrowed(tersa_writer *w, const char *const *ptrs, const size_t *lens, size_t n);
/**
 * End the loan of every string lent to `w` so far (the borrowed calls above):
 * the writer copies their bytes into its own memory and moves every pointer
 * it holds to them (string table, slot registers, shape keys), so that the
 * caller may free or change them from now on; the loan of strings lent later
 * runs until the next settle. The output does not change.
 * Cheap when nothing was lent since the last settle (one test), so a binding
 * may call it before every point where host code can run. Allocates (the
 * copies in the writer's arena, a temporary map); false when out of memory or
 * when the writer already holds an error (the writer then holds the error,
 * and the loans end only at tersa_writer_start or tersa_writer_free).
 * Not thread-safe on one writer, like every writer call.
 */
TERSA_API bool tersa_writer_settle_borrowed(tersa_writer *w);
/** A symbol (its name is checked to be valid UTF-8). */
TERSA_API bool tersa_write_symbol(tersa_writer *w, const char *ptr, size_t len);
TERSA_API bool tersa_write_binary(tersa_writer *w, const void *ptr, size_t len);
/** An application extension value; `type` must be <= TERSA_EXT_APP_MAX
 *  (above TERSA_MAX_EXT_TYPE: TERSA_ERR_UNREPRESENTABLE; a reserved type
 *  0xFF00-0xFFFF: TERSA_ERR_USAGE, since only the well-known writers below
 *  write those, with valid payloads). */
TERSA_API bool tersa_write_ext(tersa_writer *w, uint32_t type, const void *ptr, size_t len);
/** A timestamp; fields out of range fail with TERSA_ERR_UNREPRESENTABLE. */
TERSA_API bool tersa_write_timestamp(tersa_writer *w, const tersa_timestamp *ts);

/** Open an array of exactly `count` elements; close it with tersa_write_array_end. */
TERSA_API bool tersa_write_array_begin(tersa_writer *w, size_t count);
TERSA_API bool tersa_write_array_end(tersa_writer *w);

/**
 * Open a map whose keys are all strings or symbols, given up front in order
 * (they must be distinct; key strings are checked to be valid UTF-8). Then
 * write exactly `count` values and call tersa_write_map_end. The keys need only
 * live until this call returns.
 */
TERSA_API bool tersa_write_map_begin(tersa_writer *w, const tersa_key *keys, size_t count);
/** Like tersa_write_map_begin for keys the caller guarantees to be valid UTF-8 and distinct. */
TERSA_API bool tersa_write_map_begin_utf8(tersa_writer *w, const tersa_key *keys, size_t count);
TERSA_API bool tersa_write_map_end(tersa_writer *w);

/**
 * The shape-table index that the last tersa_write_map_begin* call used or
 * defined in this buffer, or TERSA_NO_INDEX (the table was full). Bindings
 * that can recognise a repeated key sequence cheaply (by object identity) keep
 * this index and later call tersa_write_map_shape instead of hashing the keys.
 * Indices are valid until the next tersa_writer_start.
 */
TERSA_API uint32_t tersa_writer_last_shape(const tersa_writer *w);

/**
 * tersa_writer_last_shape if the shaped map opened last (by
 * tersa_write_map_begin* or a template) defined that shape; TERSA_NO_INDEX
 * if it referred to a shape already in this buffer's table (found by its
 * keys, or given to tersa_write_map_shape) or the table was full. A binding that caches shapes by identity
 * can leave out shapes that are not seen again, and store one when the
 * writer finds it.
 */
TERSA_API uint32_t tersa_writer_last_defined_shape(const tersa_writer *w);

/**
 * Open a map of a shape already in this buffer's table (an index returned by
 * tersa_writer_last_shape since the last tersa_writer_start). Exactly as
 * canonical as tersa_write_map_begin with that shape's keys. Then write the
 * shape's number of values and call tersa_write_map_end. An unknown index
 * fails with TERSA_ERR_USAGE.
 */
TERSA_API bool tersa_write_map_shape(tersa_writer *w, uint32_t shape);

/** Number of keys of a shape in this buffer's table (0 if the index is unknown). */
TERSA_API size_t tersa_writer_shape_size(const tersa_writer *w, uint32_t shape);

/**
 * Map-definition templates: the first map of a buffer (or of a sync frame)
 * defines its shape with all its keys, which costs the most of a small
 * message. A binding that recognises the same key sequence cheaply (by object
 * identity) across buffers records the definition once and replays it.
 *
 * A template owns copies of everything it names (key bytes, their hashes
 * under the process's hash seed) apart from the dictionary's strings, so any
 * writer of the process may replay it, also after the recording writer is
 * freed. It is replayed only where it writes the same bytes as
 * tersa_write_map_begin: at a point where no string, shape or register has
 * been added since the buffer or sync frame began, under the same loaded
 * dictionary (or none), and, for a checked call, only if it was recorded by
 * one. Templates are reference-counted (not atomically: use them from the
 * thread that uses the writer); the writer keeps a reference to the one it
 * replayed until its tables are next reset, so the caller may release its
 * own at any time. Their size is bounded (TERSA_MAPDEF_MAX_KEYS keys,
 * TERSA_MAPDEF_MAX_BYTES bytes of definition): larger maps record none.
 */
typedef struct tersa_mapdef tersa_mapdef;
#define TERSA_MAPDEF_MAX_KEYS 64
#define TERSA_MAPDEF_MAX_BYTES 2048

/**
 * tersa_write_map_begin (checked) or tersa_write_map_begin_utf8 (not), which
 * also sets *record to a new template (one reference, the caller's) if it
 * defined the shape at a point where templates apply, else to NULL.
 */
TERSA_API bool tersa_write_map_begin_record(tersa_writer *w, const tersa_key *keys, size_t count, bool checked,
                                            tersa_mapdef **record);

/**
 * Open a map by replaying a template, with the bytes and table effects of
 * tersa_write_map_begin (checked) or _utf8 with its keys. Returns 1 when
 * done (then write the values as after tersa_write_map_begin;
 * tersa_writer_last_shape names the shape), 0 when the template does not
 * apply here (nothing written: open the map the ordinary way), -1 on error
 * (see tersa_writer_error).
 */
TERSA_API int tersa_write_map_template(tersa_writer *w, tersa_mapdef *md, bool checked);

/** Whether a template could apply at this point (a cheap test before looking one up). */
TERSA_API bool tersa_writer_template_point(const tersa_writer *w);

/** Drop a reference to a template (NULL is ignored). */
TERSA_API void tersa_mapdef_release(tersa_mapdef *md);

/**
 * Open a generic map (keys of any type) of `count` pairs: then write key,
 * value, key, value, ... and call tersa_write_map_end. The caller is
 * responsible for the keys being distinct. Maps whose keys are all strings or
 * symbols must use tersa_write_map_begin to be canonical.
 */
TERSA_API bool tersa_write_generic_map_begin(tersa_writer *w, size_t count);

/**
 * In a stream, bracket each top-level value (one frame). tersa_write_frame_begin
 * decides whether the frame is a sync frame (SPEC 2.3): the first frame of a
 * stream always is, later ones as tersa_writer_set_sync and tersa_writer_sync ask.
 * A sync frame resets the tables, so shape indices from tersa_writer_last_shape
 * are stale after it (see tersa_writer_frame_synced).
 */
TERSA_API bool tersa_write_frame_begin(tersa_writer *w);
TERSA_API bool tersa_write_frame_end(tersa_writer *w);

/**
 * Sync frames for the streams this writer writes: frame k (counted from 0) is a
 * sync frame when `every_frames` divides k, and a frame is one once at least
 * `every_bytes` bytes of frames (length prefixes included) have been written
 * since the start of the last sync frame. 0 turns a rule off (the default).
 * The setting stays for later tersa_writer_start calls.
 */
TERSA_API void tersa_writer_set_sync(tersa_writer *w, uint64_t every_frames, uint64_t every_bytes);

/** Make the next frame a sync frame, so that a consumer can join the stream there. */
TERSA_API void tersa_writer_sync(tersa_writer *w);

/**
 * Whether the frame begun last is a sync frame. Callers that keep shape
 * indices (tersa_writer_last_shape) or other per-table-index caches across
 * frames must drop them when this is true after tersa_write_frame_begin.
 */
TERSA_API bool tersa_writer_frame_synced(const tersa_writer *w);

/**
 * In a stream, between frames: forget the output written so far (the caller
 * has taken it with tersa_writer_data); tables and registers are kept, so the
 * next frames still refer to earlier values. Lets a long-lived stream encoder
 * hand out each frame without its output buffer growing for ever.
 */
TERSA_API bool tersa_writer_discard_output(tersa_writer *w);

/** The bytes written so far (valid until the next call on the writer), and their length. */
TERSA_API const uint8_t *tersa_writer_data(const tersa_writer *w, size_t *len);

/**
 * Output memory the caller supplies (tersa_writer_set_output): lets a binding
 * write a large output straight into the object it returns (a bytes object,
 * a string) instead of copying it out of the writer's buffer.
 *
 * The writer's own buffer serves the outputs it holds without growing past
 * `own_max` bytes (cheap for many small ones: it is reused; it may already
 * be larger). When an output needs more, the writer calls `grow`, and from then on writes only into blocks `grow`
 * returns, until the output is taken (tersa_writer_take_output) or released.
 *
 * grow(ctx, old, len, need, &cap): a block of at least `need` bytes (more is
 * allowed: *cap says how many). `old` is NULL for the first block of an
 * output (the writer then copies its `len` bytes there itself), else the
 * block grow returned last, whose first `len` bytes the new block must hold
 * (as realloc does). NULL on failure: the writer then fails with
 * TERSA_ERR_NOMEM and never touches `old` again except to pass it to
 * `release` (a grow that has already freed it can make release a no-op).
 * release(ctx, block): the writer drops a block it holds without handing it
 * over: at tersa_writer_start, tersa_writer_set_output and tersa_writer_free
 * (after a failure, the caller can instead take the block and free it).
 * Neither callback may call the writer.
 */
typedef struct tersa_output {
    uint8_t *(*grow)(void *ctx, uint8_t *old, size_t len, size_t need, size_t *cap);
    void (*release)(void *ctx, uint8_t *block);
    size_t own_max;
} tersa_output;

/** A binding's tersa_output.own_max: outputs up to this many bytes are best
 *  written into the writer's own buffer (reused from call to call) and copied
 *  out; larger ones into the object returned, saving the copy. */
#define TERSA_OUTPUT_OWN_MAX (8u << 10)

/** The size of a first block (tersa_output.grow's *cap) that holds an output
 *  as long as one of `len` bytes without a second block: `len` plus the room
 *  the writer reserves past its last item, plus a margin for a slightly
 *  longer output. SIZE_MAX when that overflows. Thread-safe. */
TERSA_API size_t tersa_output_block_hint(size_t len);

/** Use `out` (NULL: none, the writer's own buffer only) for the outputs of
 *  the next buffers, with `ctx` passed to its callbacks. `out` and `ctx` must
 *  stay valid while set. A block held from the last output is released first;
 *  if that block holds an unfinished buffer or frame, the writer fails
 *  (TERSA_ERR_USAGE) until the next tersa_writer_start. */
TERSA_API void tersa_writer_set_output(tersa_writer *w, const tersa_output *out, void *ctx);

/** After an output written into a block from tersa_output.grow: that block,
 *  now the caller's, and the output's length in *len (len must not be NULL;
 *  0 with NULL); the writer returns to its own (empty) buffer. NULL when the
 *  output is in the writer's own buffer (read it with tersa_writer_data) or
 *  there is none. Taken inside an open frame or container, the unfinished
 *  buffer is abandoned: the writer fails (TERSA_ERR_USAGE) until the next
 *  tersa_writer_start. */
TERSA_API uint8_t *tersa_writer_take_output(tersa_writer *w, size_t *len);

/** True when a complete buffer has been written (no container or frame open). */
TERSA_API bool tersa_writer_complete(const tersa_writer *w);

/** The writer's error (code TERSA_OK if none). */
TERSA_API const tersa_error *tersa_writer_error(const tersa_writer *w);

/* ==========================================================================
 * Well-known extension types (SPEC 5.8)
 *
 * Decimal, date, uuid and time of day travel as EXT items of the reserved
 * types below; applications use 0..TERSA_EXT_APP_MAX. The reader checks the
 * payload of a reserved type when it reads the EXT item (TERSA_ERR_INVALID_VALUE
 * at the EXT tag), so an item of type TERSA_EXT with a reserved v.ext.type
 * always holds a valid payload, which the *_of_ext functions parse. Every
 * function here is thread-safe apart from the writer it is given.
 * ========================================================================== */

#define TERSA_EXT_APP_MAX      0xFEFFu /**< the highest application extension type */
#define TERSA_EXT_DECIMAL      0xFF00u
#define TERSA_EXT_DATE         0xFF01u
#define TERSA_EXT_UUID         0xFF02u
#define TERSA_EXT_TIME_OF_DAY  0xFF03u

/** Decimal kinds: the payload's first byte. */
typedef enum tersa_decimal_kind {
    TERSA_DECIMAL_FINITE = 0,   /**< +coefficient x 10^exponent (zero included) */
    TERSA_DECIMAL_NEGATIVE = 1, /**< -coefficient x 10^exponent (-0 included) */
    TERSA_DECIMAL_INF = 2,
    TERSA_DECIMAL_NEG_INF = 3,
    TERSA_DECIMAL_NAN = 4       /**< no sign, no payload */
} tersa_decimal_kind;

/** An arbitrary-precision decimal. Trailing zeros are kept: 1.0 is
 *  (coefficient 10, exponent -1), 1.00 is (100, -2). `coefficient` is
 *  big-endian unsigned, `coefficient_len` bytes (0 for zero; may be NULL
 *  then); for the kinds INF, NEG_INF and NAN the other fields are ignored. */
typedef struct tersa_decimal {
    tersa_decimal_kind kind;
    int32_t exponent;             /**< -999999999..999999999 */
    const uint8_t *coefficient;   /**< at most 1024 bytes once leading zero bytes are dropped */
    size_t coefficient_len;
} tersa_decimal;

/** Write a decimal. Leading zero bytes of the coefficient are dropped; an
 *  exponent or coefficient out of range fails with TERSA_ERR_UNREPRESENTABLE,
 *  an unknown kind or a NULL coefficient with a non-zero length with
 *  TERSA_ERR_USAGE. The coefficient need only live until the call returns. */
TERSA_API bool tersa_write_decimal(tersa_writer *w, const tersa_decimal *d);
/** Write a date: days since 1970-01-01, proleptic Gregorian, within
 *  -719162 (0001-01-01) .. 2932896 (9999-12-31), else TERSA_ERR_UNREPRESENTABLE. */
TERSA_API bool tersa_write_date(tersa_writer *w, int64_t days_since_epoch);
/** Write a uuid: 16 bytes in RFC 9562 order (the text form's hex digits in order). */
TERSA_API bool tersa_write_uuid(tersa_writer *w, const uint8_t bytes[16]);
/** Write a time of day: microseconds since midnight, below 86400000000
 *  (else TERSA_ERR_UNREPRESENTABLE). No zone, no leap second. */
TERSA_API bool tersa_write_time_of_day(tersa_writer *w, uint64_t microseconds);

/** The longest decimal coefficient a payload carries, in bytes (SPEC 9). */
#define TERSA_DECIMAL_MAX_COEFFICIENT 1024

/**
 * Parse a decimal's text into a tersa_decimal for tersa_write_decimal: an
 * optional sign, digits with an optional point, an optional exponent
 * ([eE][+-]digits); or "Infinity", "-Infinity", "NaN". Python's str(Decimal)
 * and Ruby's BigDecimal#to_s ("-0.125e1") are such texts. The coefficient is
 * every digit (leading zeros dropped), the exponent the written one minus the
 * digits after the point, so "1.00" is (100, -2) and "0.1e1" (1, 0). The
 * coefficient's big-endian bytes go to `coefficient`, which out->coefficient
 * then points at. Returns false if the text is anything else, or if the value
 * is beyond the payload's limits (an exponent beyond +-999,999,999, a
 * coefficient over TERSA_DECIMAL_MAX_COEFFICIENT bytes). Thread-safe.
 */
TERSA_API bool tersa_decimal_parse(const char *text, size_t len, tersa_decimal *out,
                                   uint8_t coefficient[TERSA_DECIMAL_MAX_COEFFICIENT]);

/**
 * Parse the payload of a TERSA_EXT_DECIMAL item (`p`, `n`: the item's v.ext).
 * out->coefficient points into `p`. Returns false if the payload breaks SPEC
 * 5.8 (which cannot happen for an item the reader handed out).
 */
TERSA_API bool tersa_decimal_of_ext(const uint8_t *p, size_t n, tersa_decimal *out);
/** Parse a TERSA_EXT_DATE payload into days since 1970-01-01; false if invalid. */
TERSA_API bool tersa_date_of_ext(const uint8_t *p, size_t n, int64_t *days);
/** Parse a TERSA_EXT_TIME_OF_DAY payload into microseconds since midnight; false if invalid.
 *  (A TERSA_EXT_UUID payload is its 16 bytes as they are.) */
TERSA_API bool tersa_time_of_day_of_ext(const uint8_t *p, size_t n, uint64_t *microseconds);

/** Days since 1970-01-01 of year `y` (|y| < 2^40; year 0 is 1 BC), month `m`
 *  (1..12) and day `d` (1..31) in the proleptic Gregorian calendar. Nothing is
 *  checked: an invalid date gives a meaningless count. Thread-safe. */
TERSA_API int64_t tersa_days_from_civil(int64_t y, unsigned m, unsigned d);
/** The inverse of tersa_days_from_civil: year, month (1..12) and day (1..31)
 *  of a day count (|days| < 2^50); no pointer may be NULL. Thread-safe. */
TERSA_API void tersa_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/* ==========================================================================
 * Reader (pull decoder)
 * ========================================================================== */

typedef struct tersa_reader tersa_reader;

/** Item types yielded by tersa_read. */
typedef enum tersa_type {
    TERSA_NULL = 0,
    TERSA_FALSE,
    TERSA_TRUE,
    TERSA_INT,        /**< v.i: a value in int64 range */
    TERSA_UINT,       /**< v.u: a value above INT64_MAX */
    TERSA_BIGINT,     /**< v.big: magnitude >= 2^64 or value < -2^63 */
    TERSA_FLOAT,      /**< v.f */
    TERSA_STRING,     /**< v.str */
    TERSA_SYMBOL,     /**< v.str: the symbol's name */
    TERSA_BINARY,     /**< v.bin */
    TERSA_EXT,        /**< v.ext */
    TERSA_TIME,       /**< v.time */
    TERSA_ARRAY,      /**< v.array.count elements follow */
    TERSA_MAP,        /**< v.map: count values follow (keys in v.map.keys) */
    TERSA_GENERIC_MAP /**< v.map.count (key, value) pairs follow */
} tersa_type;

/** tersa_item flag: the string is all ASCII. */
#define TERSA_ITEM_ASCII (1u << 0)
/** tersa_item flag: this map defined its shape here (a MAPDEF item). */
#define TERSA_ITEM_NEW_SHAPE (1u << 1)
/** tersa_item flag: this array's first element is a number, a boolean or
 *  null, so tersa_read_scalars will take a run of elements. */
#define TERSA_ITEM_SCALARS (1u << 2)

/** One decoded item. Pointers stay valid until the reader is restarted or
 *  freed, and, for strings that came from the input, as long as the input. */
typedef struct tersa_item {
    tersa_type type;
    uint8_t tag;      /**< the tag byte (for inspection) */
    uint32_t flags;   /**< TERSA_ITEM_* */
    size_t offset;    /**< offset of the tag byte in the buffer */
    union {
        int64_t i;
        uint64_t u;
        double f;
        struct {
            const char *ptr;
            size_t len;
            uint32_t index; /**< string-table index, or TERSA_NO_INDEX if not tabled */
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
        tersa_timestamp time;
        struct {
            size_t count;
        } array;
        struct {
            size_t count;
            uint32_t shape;       /**< shape-table index; TERSA_NO_INDEX for a generic
                                       map or a shape the full table did not take */
            const tersa_key *keys; /**< the shape's keys (TERSA_MAP only) */
            /** Parallel to keys: each key's string-table index (TERSA_NO_INDEX
             *  if untabled), or NULL for a dictionary's shapes. Equal indices
             *  mean equal strings, so a binding can convert a key once per
             *  index: many shapes can repeat one long key by reference. */
            const uint32_t *key_strings;
        } map;
    } v;
} tersa_item;

/** tersa_reader_start flag: the buffer is a stream (SPEC 2.3). */
#define TERSA_READ_STREAM (1u << 0)
/** tersa_reader_start flag: the buffer has no header (dictionary serializations). */
#define TERSA_READ_NO_HEADER (1u << 1)
/**
 * tersa_reader_start flag: join a stream midway (SPEC 2.3 "Joining a stream").
 * The data starts at a frame boundary, without a header; frames before the
 * first sync frame are skipped, and that frame supplies the version, flags and
 * dictionary id. Implies TERSA_READ_STREAM.
 */
#define TERSA_READ_JOIN (1u << 2)

/** Create a reader. NULL only if allocation fails. Reusable across buffers. */
TERSA_API tersa_reader *tersa_reader_new(const tersa_alloc *alloc);
TERSA_API void tersa_reader_free(tersa_reader *r);

/** Limit container nesting (default TERSA_DEFAULT_MAX_DEPTH). */
TERSA_API void tersa_reader_set_max_depth(tersa_reader *r, uint32_t max_depth);

/**
 * Begin decoding `data` (which must outlive the decoding and every item read
 * from it). Reads the header; `dicts` are the dictionaries the buffer may
 * name (any may be NULL; the array must outlive the decoding, since the sync
 * frames of a joined stream name their dictionary later). With TERSA_READ_STREAM the buffer must be a stream,
 * without it a single value. Returns false with the error set on failure.
 */
TERSA_API bool tersa_reader_start(tersa_reader *r, const void *data, size_t len,
                                const tersa_dict *const *dicts, size_t ndicts, uint32_t flags);

/**
 * Read the next item, in pre-order: a container item is followed by its
 * elements (for maps: the values, or for generic maps key, value, ...). The
 * caller knows from the counts when each container ends.
 */
TERSA_API bool tersa_read(tersa_reader *r, tersa_item *item);

/**
 * Read a run of scalar elements of the array being read: up to `max` items,
 * stopping before the first element that is not a number (INT, UINT, FLOAT),
 * a boolean or null, and at the array's end. The items are exactly those
 * tersa_read would return one by one, with the same checks and state updates;
 * the run only saves the per-item call. *count is the number read (0 when the
 * next item is no such scalar or the innermost open container is not an
 * array; an array item with TERSA_ITEM_SCALARS starts with a run of at
 * least one). Returns false with the error set, *count then holding the items
 * read before the bad one. Not thread-safe (the reader is one decoding).
 */
TERSA_API bool tersa_read_scalars(tersa_reader *r, tersa_item *items, size_t max, size_t *count);

/** Skip the next item and everything inside it. */
TERSA_API bool tersa_skip(tersa_reader *r);

/** After a single value: check that nothing follows (TERSA_ERR_TRAILING_BYTES). */
TERSA_API bool tersa_reader_finish(tersa_reader *r);

/**
 * In a stream: move to the next frame. Sets *more to false (and returns true)
 * at the end of the stream. After reading the frame's value, call
 * tersa_reader_frame_end, which checks the value filled its frame. A sync
 * frame resets the tables first (see tersa_reader_frame_synced); a joining
 * reader skips the frames before its first sync frame here.
 */
TERSA_API bool tersa_reader_frame_begin(tersa_reader *r, bool *more);
TERSA_API bool tersa_reader_frame_end(tersa_reader *r);

/**
 * Whether the frame begun last is a sync frame. Callers that keep caches by
 * string- or shape-table index across frames must drop them when this is true
 * after tersa_reader_frame_begin (or tersa_reader_feed_frame): the indices now
 * name other entries.
 */
TERSA_API bool tersa_reader_frame_synced(const tersa_reader *r);

/**
 * For a joining reader (TERSA_READ_JOIN): whether it has met a sync frame, and
 * in *offset (may be NULL) the stream offset of that frame's length prefix.
 */
TERSA_API bool tersa_reader_joined(const tersa_reader *r, size_t *offset);

/** Current offset in the buffer. */
TERSA_API size_t tersa_reader_offset(const tersa_reader *r);

/** The error (code TERSA_OK if none). */
TERSA_API const tersa_error *tersa_reader_error(const tersa_reader *r);

/* ==========================================================================
 * Incremental streams (for feed-style APIs)
 * ========================================================================== */

/** Result of tersa_stream_scan. */
typedef enum tersa_scan {
    TERSA_SCAN_NEED_MORE = 0, /**< not enough bytes yet */
    TERSA_SCAN_READY,         /**< a header or a whole frame is available */
    TERSA_SCAN_ERROR          /**< malformed; see *err */
} tersa_scan;

/**
 * Look at the start of `data`: if `header` is true, for a stream header (11 or
 * 3 bytes); otherwise for one frame. On READY, *size is the number of bytes the
 * header or frame takes (for a frame: its length prefix plus its body).
 */
TERSA_API tersa_scan tersa_stream_scan(const void *data, size_t len, bool header, size_t *size,
                                    tersa_error *err);

/**
 * Decode a stream whose bytes arrive piece by piece: start the reader on the
 * header bytes alone (tersa_reader_start with TERSA_READ_STREAM), then hand it
 * each complete frame (as found by tersa_stream_scan, length prefix included)
 * with tersa_reader_feed_frame before reading its value and calling
 * tersa_reader_frame_end. `base` is the frame's offset in the stream, used for
 * error offsets. *has_value is false when a joining reader skipped the frame
 * (it precedes the first sync frame): then read nothing and feed the next.
 * A joining reader is started with TERSA_READ_JOIN on zero bytes instead of a header. The reader copies what later frames may need, so each
 * frame's bytes need only live until the next tersa_reader_feed_frame.
 */
TERSA_API bool tersa_reader_feed_frame(tersa_reader *r, const void *frame, size_t len, size_t base, bool *has_value);

/**
 * A feed buffer: the bytes of a stream as they arrive, in pieces of any size,
 * handed out as whole headers and frames (tersa_stream_scan) to a reader
 * started and fed as described above. Both bindings' feed-style decoders keep
 * one. Its growth policy is fixed: a power of two from 4 KiB, at least 1.5
 * times the bytes it must hold; consumed bytes are dropped only when a new
 * piece does not fit; above 64 KiB it shrinks once a quarter of it suffices.
 * One feed is used by one thread at a time; none of these functions keeps a
 * pointer to its arguments. `f` is never NULL unless stated.
 */
typedef struct tersa_feed tersa_feed;

/** A new, empty feed at stream offset 0 (alloc NULL: malloc). NULL only if allocation fails. */
TERSA_API tersa_feed *tersa_feed_new(const tersa_alloc *alloc);

/** Free a feed and its bytes. NULL is a no-op. */
TERSA_API void tersa_feed_free(tersa_feed *f);

/** Drop every byte and release the storage: the feed is as new (offset 0). */
TERSA_API void tersa_feed_reset(tersa_feed *f);

/**
 * Append `len` bytes (copied; `data` may be NULL when len is 0). False only if
 * memory runs out, and then the feed is unchanged. May move the pending bytes:
 * pointers from tersa_feed_next and tersa_feed_pending are valid until the
 * next append or reset.
 */
TERSA_API bool tersa_feed_append(tersa_feed *f, const void *data, size_t len);

/**
 * The bytes fed and not yet consumed, their count in *len. Never NULL (a
 * valid pointer to no bytes when *len is 0).
 */
TERSA_API const uint8_t *tersa_feed_pending(const tersa_feed *f, size_t *len);

/** The stream offset of the first pending byte (the bytes consumed so far). */
TERSA_API size_t tersa_feed_offset(const tersa_feed *f);

/** The bytes the feed holds allocated (for memory accounting). */
TERSA_API size_t tersa_feed_capacity(const tersa_feed *f);

/**
 * Look for the header (`header` true) or the next whole frame at the start of
 * the pending bytes, as tersa_stream_scan does. On READY, *data and *size are
 * its bytes (the frame's length prefix included), valid until the next
 * append; nothing is consumed (tersa_feed_consume does). On ERROR, *err's
 * offset is in the stream.
 */
TERSA_API tersa_scan tersa_feed_next(const tersa_feed *f, bool header, const uint8_t **data, size_t *size,
                                     tersa_error *err);

/** Consume `size` pending bytes (at most tersa_feed_pending's *len): they leave the buffer. */
TERSA_API void tersa_feed_consume(tersa_feed *f, size_t size);

/**
 * Whether the stream may end here: true if no bytes remain after the first
 * `skip` pending bytes (a header the caller checked itself, else 0). False
 * with *err set otherwise: code TERSA_OK if whole frames remain unread (the
 * caller's mistake, not the stream's), else the error decoding those bytes as
 * one buffer gives (TERSA_ERR_TRUNCATED inside a length prefix,
 * TERSA_ERR_LENGTH_EXCEEDS_INPUT for a frame cut short, or the prefix's own
 * error), its offset in the stream.
 */
TERSA_API bool tersa_feed_at_end(const tersa_feed *f, size_t skip, tersa_error *err);

/* ==========================================================================
 * Value tree
 * ========================================================================== */

typedef struct tersa_value tersa_value;
typedef struct tersa_doc tersa_doc;

/** A node of a value tree. Nodes live in their document's arena.
 *  tersa_decode gives every map of one shape the same `keys` array; treat
 *  decoded keys as read-only (build new arrays to change them). */
struct tersa_value {
    tersa_type type;
    union {
        int64_t i;
        uint64_t u;
        double f;
        struct { const char *ptr; size_t len; } str;           /* STRING, SYMBOL */
        struct { const uint8_t *ptr; size_t len; } bin;        /* BINARY */
        struct { bool negative; const uint8_t *mag; size_t len; } big;
        struct { uint32_t type; const uint8_t *ptr; size_t len; } ext;
        tersa_timestamp time;
        struct { tersa_value *items; size_t count; } array;
        struct { tersa_value *keys; tersa_value *values; size_t count; } map; /* MAP and GENERIC_MAP */
    } v;
};

/** Create an empty document (an arena for values). NULL on allocation failure. */
TERSA_API tersa_doc *tersa_doc_new(const tersa_alloc *alloc);
TERSA_API void tersa_doc_free(tersa_doc *doc);

/** Allocate `n` zeroed values / copy `len` bytes into the document's arena. NULL on failure. */
TERSA_API tersa_value *tersa_doc_values(tersa_doc *doc, size_t n);
TERSA_API void *tersa_doc_bytes(tersa_doc *doc, const void *src, size_t len);

/** The document's top-level values (one for a single buffer, any number for a stream). */
TERSA_API size_t tersa_doc_count(const tersa_doc *doc);
TERSA_API tersa_value *tersa_doc_root(const tersa_doc *doc, size_t i);
/** Append a top-level value (copied) to the document. */
TERSA_API bool tersa_doc_push(tersa_doc *doc, const tersa_value *value);

/** Decoding options for tersa_decode. */
typedef struct tersa_decode_options {
    const tersa_dict *const *dicts; /**< dictionaries the buffer may name */
    size_t ndicts;
    uint32_t max_depth;           /**< 0: TERSA_DEFAULT_MAX_DEPTH */
    bool stream;                  /**< the buffer is a stream */
    bool join;                    /**< frames of a stream joined midway (TERSA_READ_JOIN) */
} tersa_decode_options;

/** After a joining tersa_decode: whether a sync frame was met, and in *offset
 *  (may be NULL) the offset of its length prefix. */
TERSA_API bool tersa_doc_joined(const tersa_doc *doc, size_t *offset);

/**
 * Decode a whole buffer into a new document (strings are copied, so `data`
 * may be freed afterwards). `opts` may be NULL. Returns NULL and *err on
 * failure.
 */
TERSA_API tersa_doc *tersa_decode(const tersa_alloc *alloc, const void *data, size_t len,
                               const tersa_decode_options *opts, tersa_error *err);

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

typedef struct tersa_dict_builder tersa_dict_builder;

/** Defaults of tersa_dict_build_options (a zero field takes its default). */
#define TERSA_DICT_BUILD_MIN_COUNT 2
#define TERSA_DICT_BUILD_MAX_STRINGS 4096
#define TERSA_DICT_BUILD_MAX_SHAPES 1024

/** What tersa_dict_builder_finish keeps; zero-initialise for the defaults. */
typedef struct tersa_dict_build_options {
    size_t min_count;   /**< samples a string or shape must occur in (0: TERSA_DICT_BUILD_MIN_COUNT,
                             or 1 if only one sample was added) */
    size_t max_strings; /**< at most this many strings (0: TERSA_DICT_BUILD_MAX_STRINGS) */
    size_t max_shapes;  /**< at most this many shapes (0: TERSA_DICT_BUILD_MAX_SHAPES) */
} tersa_dict_build_options;

/** A new, empty builder (NULL if allocation fails). Free with tersa_dict_builder_free. */
TERSA_API tersa_dict_builder *tersa_dict_builder_new(const tersa_alloc *alloc);
/** Count one sample value (copying what it counts; the value may be freed
 *  afterwards). False only if memory ran out. */
TERSA_API bool tersa_dict_builder_add_value(tersa_dict_builder *b, const tersa_value *value);
/** Count an encoded sample (a buffer, or a stream whose every value is a
 *  sample; without a dictionary), as bindings do with their own encoder's
 *  output. False and *err if it does not decode. */
TERSA_API bool tersa_dict_builder_add_buffer(tersa_dict_builder *b, const void *data, size_t len, tersa_error *err);
/** The dictionary of the samples counted so far (free with tersa_dict_free);
 *  `opts` may be NULL. The builder stays usable. NULL and *err on failure. */
TERSA_API tersa_dict *tersa_dict_builder_finish(tersa_dict_builder *b, const tersa_dict_build_options *opts,
                                             tersa_error *err);
/** Free a builder. NULL is allowed. */
TERSA_API void tersa_dict_builder_free(tersa_dict_builder *b);

/** Write a value with a writer (at its current position). Generic maps whose
 *  keys are all strings or symbols are written as shaped maps. A TERSA_EXT
 *  value of a reserved type (0xFF00-0xFFFF) is a well-known value, as
 *  tersa_decode gives it: its payload is checked against SPEC 5.8 and an
 *  invalid one fails with TERSA_ERR_UNREPRESENTABLE. */
TERSA_API bool tersa_write_value(tersa_writer *w, const tersa_value *value);

/** Structural equality of the data model (floats by bit pattern, map order matters). */
TERSA_API bool tersa_value_equal(const tersa_value *a, const tersa_value *b);

/* ==========================================================================
 * Diagnostic notation (spec/vectors/README.md)
 * ========================================================================== */

/** A growable output buffer used by the printers. */
typedef struct tersa_buf {
    char *ptr;
    size_t len;
    size_t cap;
    const tersa_alloc *alloc;
    bool failed; /**< an allocation failed; contents are incomplete */
} tersa_buf;

TERSA_API void tersa_buf_init(tersa_buf *b, const tersa_alloc *alloc);
TERSA_API void tersa_buf_free(tersa_buf *b);
TERSA_API bool tersa_buf_append(tersa_buf *b, const void *data, size_t len);

/** Append the diagnostic notation of `value` to `out`. */
TERSA_API bool tersa_diag(const tersa_value *value, tersa_buf *out);

/** Append a float in diagnostic notation (shortest round-trip digits). */
TERSA_API bool tersa_diag_double(double d, tersa_buf *out);

/** The longest big-integer magnitude, in bytes (about 19,700 digits), that
 *  tersa_format_bigint writes in decimal: the conversion takes time quadratic
 *  in the length (8 KiB: milliseconds; 200 KiB: seconds), so longer ones are
 *  refused, as CPython refuses int-to-str beyond 4,300 digits. */
#define TERSA_MAX_DECIMAL_BYTES 8192

/** Append the decimal digits of an integer given as a little-endian magnitude
 *  of `len` bytes, with a leading '-' if `negative` and non-zero. Returns
 *  false with `out` unchanged if the magnitude (without high zero bytes) is
 *  longer than TERSA_MAX_DECIMAL_BYTES, or with out->failed set if memory ran
 *  out. tersa_diag writes longer ones in hexadecimal (`0x…`). */
TERSA_API bool tersa_format_bigint(bool negative, const uint8_t *mag, size_t len, tersa_buf *out);

/**
 * Append the text form of a well-known value (SPEC 5.8; the `$decimal`,
 * `$date`, `$uuid` and `$time_of_day` texts of spec/vectors/README.md), given
 * its EXT type and payload: a decimal as the General Decimal Arithmetic
 * to-scientific-string (Python's str(Decimal): "1.00", "-0", "1E+10",
 * "Infinity", "NaN"), a date as YYYY-MM-DD, a uuid as lowercase
 * 8-4-4-4-12 hex, a time of day as HH:MM:SS or HH:MM:SS.ffffff. Returns false
 * if the type is not a well-known one or the payload is invalid, or with
 * out->failed set if memory ran out. Thread-safe apart from `out`.
 */
TERSA_API bool tersa_well_known_text(uint32_t type, const uint8_t *p, size_t n, tersa_buf *out);

/* ==========================================================================
 * Numbers
 * ========================================================================== */

/**
 * The shortest decimal that rounds to `d` (fewest significant digits, then
 * closest): writes its digits (no leading or trailing zeros) to `digits` and
 * returns their count (1..17), with d = +-digits * 10^(*exp10). `d` must be
 * finite and non-zero. Thread-safe.
 */
TERSA_API int tersa_shortest_digits(double d, char digits[17], int *exp10);

#ifdef __cplusplus
}
#endif

#endif /* TERSA_H */
