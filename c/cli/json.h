/*
 * json.h - the JSON layer of the `tersa` command-line tool.
 *
 * json_read parses RFC 8259 JSON into a tersa_doc; json_write renders a
 * tersa_value as JSON. Neither keeps global state: both are safe to call from
 * any number of threads on distinct documents and buffers.
 *
 * Mapping (JSON -> Tersa):
 *   integer syntax (no '.', no exponent)  TERSA_INT if it fits int64, TERSA_UINT if
 *                                        it fits uint64, else TERSA_BIGINT (exact);
 *                                        -0 is TERSA_INT 0
 *   any other number                     TERSA_FLOAT, correctly rounded; a number
 *                                        beyond the double range is an error
 *   string                               TERSA_STRING (strict UTF-8, escapes decoded)
 *   object                               TERSA_MAP, string keys in document order;
 *                                        a repeated key is an error
 *   array / true / false / null          TERSA_ARRAY / TERSA_TRUE / TERSA_FALSE / TERSA_NULL
 *
 * Mapping (Tersa -> JSON): see json_write_options for the types JSON cannot hold.
 */
#ifndef TERSA_CLI_JSON_H
#define TERSA_CLI_JSON_H

#include "tersa.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Parse a decimal number (JSON number grammar) from [p, end) to the nearest
 * double (ties to even). Returns the end of the number, or NULL if the text
 * does not start with a JSON number. Thread-safe. (strtod.c)
 */
const char *tersa_parse_double(const char *p, const char *end, double *out);

/* ==========================================================================
 * Errors
 * ========================================================================== */

/**
 * A reader or writer error. `message` is English text without a trailing
 * period; it points to static storage or into this struct's `text`, so read it
 * through the struct that the failing call filled (copies of the struct keep a
 * pointer to the original's `text`).
 *
 * Reader errors locate the problem in the input: `offset` is a byte offset
 * from the start of the text given (a skipped BOM counts), `line` and `column`
 * are 1-based, `column` counting characters (UTF-8 code points) from the
 * start of the line. Writer errors have offset, line and column 0 and name the
 * JSON path of the offending value in the message (e.g. "$[3].user").
 */
typedef struct json_error {
    const char *message;
    size_t offset;
    size_t line;
    size_t column;
    char text[192];
} json_error;

/* ==========================================================================
 * Reader
 * ========================================================================== */

/** Reader options. All-zero (or a NULL pointer) means the defaults. */
typedef struct json_read_options {
    /** Containers may nest this deep (the top level is depth 0; a container
     *  at depth >= max_depth is an error, as in SPEC 5.7). 0 means
     *  TERSA_DEFAULT_MAX_DEPTH. */
    uint32_t max_depth;
} json_read_options;

/** The default reader options (all zero). */
static inline json_read_options json_read_options_defaults(void) {
    json_read_options o = {0};
    return o;
}

/**
 * Parse exactly one JSON text from [text, text + len) into a new document
 * with one root. A leading UTF-8 byte order mark is skipped; whitespace may
 * follow the value, anything else is an error. `text` need not be
 * NUL-terminated and may be freed as soon as this returns: the document holds
 * its own copy of every string. `alloc` (NULL: malloc) serves the document and
 * the parser's temporary memory. `opts` may be NULL. Returns NULL and fills
 * *err (which must not be NULL) on failure; free the result with
 * tersa_doc_free.
 */
tersa_doc *json_read(const tersa_alloc *alloc, const char *text, size_t len,
                    const json_read_options *opts, json_error *err);

/**
 * Like json_read for a sequence of JSON texts separated by optional
 * whitespace (JSON Lines, concatenated JSON): each becomes one root of the
 * document, in order. Empty input (or only whitespace) gives a document with
 * no roots.
 */
tersa_doc *json_read_seq(const tersa_alloc *alloc, const char *text, size_t len,
                        const json_read_options *opts, json_error *err);

/* ==========================================================================
 * Writer
 * ========================================================================== */

/** Floats JSON cannot hold (NaN, +-Infinity). */
typedef enum json_nonfinite_mode {
    JSON_NONFINITE_ERROR = 0, /**< fail */
    JSON_NONFINITE_NULL,      /**< write null */
    JSON_NONFINITE_STRING     /**< write "NaN", "Infinity", "-Infinity" (any NaN payload is "NaN") */
} json_nonfinite_mode;

/** Binary values. */
typedef enum json_binary_mode {
    JSON_BINARY_ERROR = 0,
    JSON_BINARY_BASE64, /**< a string, standard alphabet with padding (RFC 4648 section 4) */
    JSON_BINARY_HEX     /**< a string of lowercase hex digits */
} json_binary_mode;

/** Symbols. */
typedef enum json_symbol_mode {
    JSON_SYMBOL_ERROR = 0,
    JSON_SYMBOL_STRING /**< the name, as a string */
} json_symbol_mode;

/** Timestamps. */
typedef enum json_time_mode {
    JSON_TIME_ERROR = 0,
    JSON_TIME_ISO /**< a string from tersa_timestamp_iso */
} json_time_mode;

/** Extension values. */
typedef enum json_ext_mode {
    JSON_EXT_ERROR = 0,
    /** {"$ext": {"type": n, "data": "<base64>"}}; a well-known value (SPEC 5.8) as
     *  {"$decimal": "1.00"}, {"$date": "2025-04-16"}, {"$uuid": "..."} or
     *  {"$time_of_day": "08:00:00"} (the vectors' extended JSON) */
    JSON_EXT_OBJECT
} json_ext_mode;

/** Map keys that are not strings. */
typedef enum json_keys_mode {
    JSON_KEYS_ERROR = 0,
    /** Write the key as a JSON string: a symbol key as its name (this also
     *  needs symbol = JSON_SYMBOL_STRING), any other scalar as the text it
     *  would have as a value under these options (1 -> "1", true -> "true",
     *  binary -> its base64 or hex text; a well-known value -> its text, e.g.
     *  "1.00" or "2025-04-16"). Container keys and application ext keys remain
     *  errors, and so do two keys of one map that become the same string. */
    JSON_KEYS_STRING
} json_keys_mode;

/** Writer options. All-zero (or a NULL pointer) means: compact output,
 *  UTF-8 kept as is, and an error for every value JSON cannot hold. */
typedef struct json_write_options {
    unsigned indent; /**< > 0: one member per line, indented by this many spaces per level */
    bool ascii;      /**< escape every non-ASCII character as \uXXXX (surrogate pairs above U+FFFF) */
    json_nonfinite_mode nonfinite;
    json_binary_mode binary;
    json_symbol_mode symbol;
    json_time_mode time;
    json_ext_mode ext;
    json_keys_mode keys;
} json_write_options;

/** The default writer options (all zero). */
static inline json_write_options json_write_options_defaults(void) {
    json_write_options o = {0};
    return o;
}

/**
 * Append the JSON text of `v` to `out` (no trailing newline). Integers of any
 * size are written exactly; floats with their shortest round-trip digits, in
 * a form every JSON reader sees as a float (`2100.0`, `-0.0`, `1.5e-7`,
 * `1.0e+22`: the diagnostic-notation layout). Strings are escaped minimally
 * (`"`, `\`, control characters) and must be valid UTF-8. A generic map
 * whose keys are all strings is written like a map.
 *
 * Values JSON cannot hold fail unless `opts` says how to write them. On
 * failure returns false, fills *err (which must not be NULL) and leaves `out`
 * as it was; on allocation failure `out->failed` is also set. `opts` may be
 * NULL. Temporary memory comes from `out`'s allocator.
 */
bool json_write(const tersa_value *v, const json_write_options *opts, tersa_buf *out,
                json_error *err);

/**
 * Where json_write_to hands text it has written: `write` gets each chunk in
 * order and returns false to stop (json_write_to then fails with "write
 * failed"). A value's JSON can be far larger than its Tersa bytes (a
 * reference repeats a long string), so large output leaves as it is made.
 */
typedef struct json_sink {
    bool (*write)(void *ctx, const char *ptr, size_t len);
    void *ctx;
    size_t threshold; /**< flush once this many bytes wait in `out` */
} json_sink;

/**
 * Like json_write, but whenever `out` holds `sink->threshold` bytes they go
 * to the sink and `out` is emptied; what remains at the end stays in `out`.
 * On failure after a flush, the flushed text is already out (the caller
 * reports the error after partial output); before any flush, `out` is left
 * as it was.
 */
bool json_write_to(const tersa_value *v, const json_write_options *opts, tersa_buf *out, const json_sink *sink,
                   json_error *err);

/* ==========================================================================
 * Shared by json_read.c and json_write.c (not for other callers)
 * ========================================================================== */

/**
 * The index of the first of `keys` (TERSA_STRING values) that repeats an
 * earlier one, `n` if all differ, or SIZE_MAX if temporary memory from
 * `alloc` (not NULL) ran out. Linear time on average.
 */
size_t json_first_duplicate(const tersa_value *keys, size_t n, const tersa_alloc *alloc);

#ifdef __cplusplus
}
#endif

#endif /* TERSA_CLI_JSON_H */
