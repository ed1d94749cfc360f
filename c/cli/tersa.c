/*
 * tersa.c - the `tersa` command-line tool.
 */
#include "tersa.h"

#include "fileio.h"
#include "inspect.h"
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: tersa <command> [options] [INPUT]\n"
    "\n"
    "commands:\n"
    "  encode    JSON -> Tersa (canonical encoding)\n"
    "  decode    Tersa -> JSON (or --diag for the diagnostic notation)\n"
    "  recode    Tersa -> Tersa: decode any valid buffer and write it canonically\n"
    "  inspect   item-by-item view of a Tersa buffer with offsets and forms\n"
    "  stats     bytes by item kind and table use\n"
    "  dict      build a dictionary from sample JSON documents (dict build), or show one (dict show)\n"
    "  version   print the version\n"
    "\n"
    "INPUT is a file or '-' (standard input, the default); output goes to standard\n"
    "output unless -o FILE is given.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE     write to FILE\n"
    "  --stream              encode: the input is a sequence of JSON texts, write a stream\n"
    "                        decode: (streams are recognised from their header)\n"
    "  --dict FILE           a dictionary (as written by `tersa dict build`); may repeat\n"
    "  --max-depth N         nesting limit (default 1000); applies to every command\n"
    "                        that reads Tersa or JSON\n"
    "  --max-output BYTES    encode, decode, inspect and stats stop with an error\n"
    "                        rather than write more than BYTES, recode rather than\n"
    "                        re-encode more than BYTES of strings and keys (counted\n"
    "                        at each use); suffixes K, M, G (binary); 0: no limit.\n"
    "                        The default is 256 times the input's size, at least\n"
    "                        64 MiB: a few bytes of Tersa can stand for gigabytes\n"
    "                        of text\n"
    "decode options (values JSON cannot hold fail unless one of these says how):\n"
    "  --diag                write the diagnostic notation instead of JSON\n"
    "  --pretty              indent JSON by two spaces\n"
    "  --ascii               escape non-ASCII characters\n"
    "  --binary=base64|hex   binary values as strings\n"
    "  --time=iso            timestamps as ISO 8601 strings\n"
    "  --symbol=string       symbols as strings\n"
    "  --nonfinite=null|string  NaN and infinities\n"
    "  --ext=object          extension values as {\"$ext\": ...}, well-known ones as\n"
    "                        {\"$decimal\": \"1.00\"}, $date, $uuid, $time_of_day\n"
    "  --keys=string         non-string map keys as strings\n"
    "  --lossy               all of: --binary=base64 --time=iso --symbol=string\n"
    "                        --nonfinite=string --ext=object --keys=string\n"
    "dict build options (each top-level JSON value of the files is a sample):\n"
    "  --min-count N         keep strings and shapes found in at least N samples\n"
    "                        (default 2; 1 when there is a single sample)\n"
    "  --max-strings N       keep at most N strings (default 4096)\n"
    "  --max-shapes N        keep at most N shapes (default 1024)\n";

typedef struct cli {
    const char *command;
    const char *input;
    const char *output;
    bool stream;
    bool diag;
    uint32_t max_depth;
    size_t max_output;
    bool max_output_given;
    const char *dict_paths[16];
    size_t ndict_paths;
    const tersa_dict *dicts[16];
    size_t ndicts;
    json_write_options jopts;
    size_t min_count;
    size_t max_strings;
    size_t max_shapes;
    const char *inputs[256];
    size_t ninputs;
} cli;

static int die(const char *fmt, const char *arg) {
    fprintf(stderr, "tersa: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 1;
}

/* A decimal number up to `max`, with a binary K, M or G multiplier if
 * `suffixes`; nothing else may follow. */
static bool parse_number(const char *s, bool suffixes, uint64_t max, uint64_t *out) {
    uint64_t n = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n > (UINT64_MAX - 9) / 10) return false;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    if (p == s) return false;
    if (suffixes && *p) {
        unsigned shift = *p == 'K' || *p == 'k' ? 10 : *p == 'M' || *p == 'm' ? 20 : *p == 'G' || *p == 'g' ? 30 : 0;
        if (!shift || n > (UINT64_MAX >> shift)) return false;
        n <<= shift;
        p++;
    }
    if (*p || n > max) return false;
    *out = n;
    return true;
}

static bool option_value(const char *arg, const char *name, const char **value) {
    size_t n = strlen(name);
    if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
        *value = arg + n + 1;
        return true;
    }
    return false;
}

/* `NAME VALUE` or `NAME=VALUE` at argv[*i]: 1 with *value set (and *i on
 * the value), 0 if argv[*i] is not this option, -1 if the value is missing. */
static int option_with_value(int argc, char **argv, int *i, const char *name, const char **value) {
    if (option_value(argv[*i], name, value)) return 1;
    if (strcmp(argv[*i], name) != 0) return 0;
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}

/* `NAME N` or `NAME=N` for a count at argv[*i]: false if argv[*i] is another
 * option; else true, with *out set, or *rc the exit status for a missing or
 * bad number. */
static bool count_option(int argc, char **argv, int *i, const char *name, size_t *out, int *rc) {
    const char *v;
    int has = option_with_value(argc, argv, i, name, &v);
    if (has == 0) return false;
    uint64_t n;
    if (has < 0 || !parse_number(v, false, SIZE_MAX, &n)) *rc = die("%s needs a number", name);
    else *out = (size_t)n;
    return true;
}

/* Parse arguments; returns 0 on success, the exit status otherwise. */
static int parse_args(cli *c, int argc, char **argv) {
    memset(c, 0, sizeof(*c));
    c->input = "-";
    c->min_count = 0; /* the core's default */
    c->max_strings = 0; /* the core's defaults */
    c->max_shapes = 0;
    if (argc < 2) {
        fputs(USAGE, stderr);
        return 2;
    }
    c->command = argv[1];
    int i = 2;
    if (strcmp(c->command, "dict") == 0) {
        if (argc < 3) return die("dict needs a subcommand: build or show", "");
        i = 3;
    }
    for (; i < argc; i++) {
        const char *a = argv[i], *v;
        int has, rc = 0;
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (++i >= argc) return die("%s needs a file name", a);
            c->output = argv[i];
        } else if (strcmp(a, "--stream") == 0) {
            c->stream = true;
        } else if (strcmp(a, "--diag") == 0) {
            c->diag = true;
        } else if (strcmp(a, "--pretty") == 0) {
            c->jopts.indent = 2;
        } else if (strcmp(a, "--ascii") == 0) {
            c->jopts.ascii = true;
        } else if (strcmp(a, "--dict") == 0) {
            if (++i >= argc) return die("--dict needs a file name", "");
            if (c->ndict_paths == 16) return die("too many dictionaries", "");
            c->dict_paths[c->ndict_paths++] = argv[i];
        } else if ((has = option_with_value(argc, argv, &i, "--max-depth", &v)) != 0) {
            if (has < 0) return die("--max-depth needs a number", "");
            uint64_t n;
            if (!parse_number(v, false, UINT32_MAX, &n) || n == 0)
                return die("--max-depth is a number from 1 to 4294967295, not '%s'", v);
            c->max_depth = (uint32_t)n;
        } else if ((has = option_with_value(argc, argv, &i, "--max-output", &v)) != 0) {
            if (has < 0) return die("--max-output needs a size", "");
            uint64_t n;
            if (!parse_number(v, true, SIZE_MAX, &n))
                return die("--max-output is a number of bytes (suffixes K, M, G; 0: no limit), not '%s'", v);
            c->max_output = (size_t)n;
            c->max_output_given = true;
        } else if (option_value(a, "--binary", &v)) {
            if (strcmp(v, "base64") == 0) c->jopts.binary = JSON_BINARY_BASE64;
            else if (strcmp(v, "hex") == 0) c->jopts.binary = JSON_BINARY_HEX;
            else return die("--binary is base64 or hex, not %s", v);
        } else if (option_value(a, "--time", &v)) {
            if (strcmp(v, "iso") != 0) return die("--time is iso, not %s", v);
            c->jopts.time = JSON_TIME_ISO;
        } else if (option_value(a, "--symbol", &v)) {
            if (strcmp(v, "string") != 0) return die("--symbol is string, not %s", v);
            c->jopts.symbol = JSON_SYMBOL_STRING;
        } else if (option_value(a, "--nonfinite", &v)) {
            if (strcmp(v, "null") == 0) c->jopts.nonfinite = JSON_NONFINITE_NULL;
            else if (strcmp(v, "string") == 0) c->jopts.nonfinite = JSON_NONFINITE_STRING;
            else return die("--nonfinite is null or string, not %s", v);
        } else if (option_value(a, "--ext", &v)) {
            if (strcmp(v, "object") != 0) return die("--ext is object, not %s", v);
            c->jopts.ext = JSON_EXT_OBJECT;
        } else if (option_value(a, "--keys", &v)) {
            if (strcmp(v, "string") != 0) return die("--keys is string, not %s", v);
            c->jopts.keys = JSON_KEYS_STRING;
        } else if (strcmp(a, "--lossy") == 0) {
            c->jopts.binary = JSON_BINARY_BASE64;
            c->jopts.time = JSON_TIME_ISO;
            c->jopts.symbol = JSON_SYMBOL_STRING;
            c->jopts.nonfinite = JSON_NONFINITE_STRING;
            c->jopts.ext = JSON_EXT_OBJECT;
            c->jopts.keys = JSON_KEYS_STRING;
        } else if (count_option(argc, argv, &i, "--min-count", &c->min_count, &rc) ||
                   count_option(argc, argv, &i, "--max-strings", &c->max_strings, &rc) ||
                   count_option(argc, argv, &i, "--max-shapes", &c->max_shapes, &rc)) {
            if (rc) return rc;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(USAGE, stdout);
            exit(0);
        } else if (a[0] == '-' && a[1] == '-') {
            return die("unknown option %s", a);
        } else {
            if (c->ninputs == 256) return die("too many inputs", "");
            c->inputs[c->ninputs++] = a;
        }
    }
    if (c->ninputs) c->input = c->inputs[0];
    return 0;
}

static int load_dicts(cli *c) {
    for (size_t i = 0; i < c->ndict_paths; i++) {
        size_t len;
        uint8_t *data = read_file(c->dict_paths[i], &len);
        if (!data) return die("cannot read dictionary %s", c->dict_paths[i]);
        tersa_error err;
        tersa_dict *d = tersa_dict_parse(NULL, data, len, &err);
        free(data);
        if (!d) return die("not a Tersa dictionary: %s", c->dict_paths[i]);
        c->dicts[c->ndicts++] = d;
    }
    return 0;
}

/* ==========================================================================
 * Output
 * ========================================================================== */

/* What a command writes is bounded by default: the text a buffer stands for
 * is not bounded by its bytes (a one-byte reference repeats a string of any
 * length, indentation grows with depth), so a few megabytes could otherwise
 * fill a disk. Legitimate output stays well below the bound: the JSON of the
 * benchmark corpus is at most 8 times its Tersa bytes (18 times indented), the
 * inspect view at most 46 times (about 50 bytes per one-byte item), and the
 * floor keeps every small input clear of it. */
#define DEFAULT_OUTPUT_FACTOR 256
#define DEFAULT_OUTPUT_FLOOR ((size_t)64 << 20)

static size_t output_limit(const cli *c, size_t input_len) {
    if (c->max_output_given) return c->max_output;
    if (input_len > SIZE_MAX / DEFAULT_OUTPUT_FACTOR) return 0;
    size_t n = input_len * DEFAULT_OUTPUT_FACTOR;
    return n > DEFAULT_OUTPUT_FLOOR ? n : DEFAULT_OUTPUT_FLOOR;
}

/* Open the output (-o FILE or standard output), bounded for an input of input_len bytes. */
static int open_output(const cli *c, size_t input_len, limited_output *o) {
    memset(o, 0, sizeof *o);
    o->file = c->output ? fopen(c->output, "wb") : stdout;
    if (!o->file) return die("cannot open %s for writing", c->output);
    o->limit = output_limit(c, input_len);
    return 0;
}

/* "<what> <limit> bytes, the ... limit; how to change it". Returns the exit status. */
static int limit_error(const cli *c, const char *what, size_t limit) {
    fprintf(stderr, "tersa: %s: %s %zu bytes, ", c->input, what, limit);
    if (c->max_output_given)
        fputs("the limit --max-output set", stderr);
    else
        fprintf(stderr, "the default limit (%d times the input's size, at least %zu MiB)", DEFAULT_OUTPUT_FACTOR,
                DEFAULT_OUTPUT_FLOOR >> 20);
    fputs("; --max-output BYTES raises the limit, --max-output 0 removes it\n", stderr);
    return 1;
}

/* The exit status of output that stopped: past the limit, or a failed write. */
static int output_error(const cli *c, const limited_output *o) {
    if (!o->over_limit) return die("write failed: %s", strerror(errno));
    return limit_error(c, "the output exceeds", o->limit);
}

static int close_output(const cli *c, limited_output *o, int rc) {
    if (c->output && fclose(o->file) != 0 && rc == 0) rc = die("write failed: %s", strerror(errno));
    return rc;
}

/* Write a whole result made in memory. */
static int write_output(const cli *c, size_t input_len, const void *data, size_t len) {
    limited_output o;
    int rc = open_output(c, input_len, &o);
    if (rc) return rc;
    if (!limited_write(&o, data, len)) rc = output_error(c, &o);
    return close_output(c, &o, rc);
}

static int decode_error(const char *input, const tersa_error *err) {
    fprintf(stderr, "tersa: %s: %s at byte offset %zu: %s\n", input, tersa_code_name(err->code), err->offset,
            err->message ? err->message : "");
    return 1;
}

/* ==========================================================================
 * Commands
 * ========================================================================== */

static int cmd_encode(cli *c) {
    size_t len;
    uint8_t *text = read_file(c->input, &len);
    if (!text) return die("cannot read %s", c->input);
    json_error jerr;
    json_read_options ro = {c->max_depth};
    tersa_doc *doc = c->stream ? json_read_seq(NULL, (const char *)text, len, &ro, &jerr)
                              : json_read(NULL, (const char *)text, len, &ro, &jerr);
    free(text);
    if (!doc) {
        fprintf(stderr, "tersa: %s: invalid JSON at line %zu, column %zu (byte %zu): %s\n", c->input, jerr.line,
                jerr.column, jerr.offset, jerr.message);
        return 1;
    }
    tersa_writer *w = tersa_writer_new(NULL);
    if (c->max_depth) tersa_writer_set_max_depth(w, c->max_depth);
    const tersa_dict *dict = c->ndicts ? c->dicts[0] : NULL;
    bool ok = tersa_writer_start(w, dict, c->stream ? TERSA_WRITE_STREAM : 0);
    for (size_t i = 0; ok && i < tersa_doc_count(doc); i++) {
        if (c->stream) ok = tersa_write_frame_begin(w);
        ok = ok && tersa_write_value(w, tersa_doc_root(doc, i));
        if (c->stream) ok = ok && tersa_write_frame_end(w);
    }
    int rc;
    if (!ok) {
        rc = die("cannot encode: %s", tersa_writer_error(w)->message);
    } else {
        size_t out_len;
        const uint8_t *out = tersa_writer_data(w, &out_len);
        rc = write_output(c, len, out, out_len);
    }
    tersa_writer_free(w);
    tersa_doc_free(doc);
    return rc;
}

static tersa_doc *decode_input(cli *c, uint8_t **data, size_t *len, int *rc) {
    *data = read_file(c->input, len);
    if (!*data) {
        *rc = die("cannot read %s", c->input);
        return NULL;
    }
    bool stream = *len >= 3 && ((*data)[2] & 0x02) && (*data)[0] == 0xC1;
    tersa_decode_options o = {c->dicts, c->ndicts, c->max_depth, stream, false};
    tersa_error err;
    tersa_doc *doc = tersa_decode(NULL, *data, *len, &o, &err);
    if (!doc) *rc = decode_error(c->input, &err);
    return doc;
}

static bool sink_to_output(void *ctx, const char *ptr, size_t len) {
    return limited_write((limited_output *)ctx, ptr, len);
}

/* JSON text past this size is written as it is made: references can make a
 * document's JSON far larger than its Tersa bytes, too large to hold. Below
 * it, a value JSON cannot hold leaves no partial output. */
#define DECODE_FLUSH_BYTES ((size_t)64 << 20)

typedef struct diag_frame {
    const tersa_value *container;
    size_t next, count; /* maps: keys and values interleaved */
} diag_frame;

/* The diagnostic notation of tersa_diag, handed to `o` whenever `out` holds
 * `flush_at` bytes: the text can be far larger than the document. Containers
 * are walked with a heap stack, as deep as the decoder allowed. */
static bool write_diag(const tersa_value *v, tersa_buf *out, limited_output *o, size_t flush_at) {
    diag_frame *stack = NULL;
    size_t depth = 0, cap = 0;
    bool ok = true;
    while (ok) {
        if (v->type == TERSA_ARRAY || v->type == TERSA_MAP || v->type == TERSA_GENERIC_MAP) {
            bool array = v->type == TERSA_ARRAY;
            if (depth == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                diag_frame *bigger = (diag_frame *)realloc(stack, ncap * sizeof(diag_frame));
                if (!bigger) {
                    out->failed = true;
                    break;
                }
                stack = bigger;
                cap = ncap;
            }
            stack[depth++] = (diag_frame){v, 0, array ? v->v.array.count : 2 * v->v.map.count};
            ok = tersa_buf_append(out, array ? "[" : "{", 1);
        } else {
            ok = tersa_diag(v, out);
        }
        if (ok && out->len >= flush_at) {
            ok = limited_write(o, out->ptr, out->len);
            out->len = 0;
        }
        /* The next value: close finished containers, write separators. */
        v = NULL;
        while (ok && depth) {
            diag_frame *f = &stack[depth - 1];
            bool array = f->container->type == TERSA_ARRAY;
            if (f->next == f->count) {
                ok = tersa_buf_append(out, array ? "]" : "}", 1);
                depth--;
                continue;
            }
            size_t i = f->next++;
            if (array) {
                ok = i == 0 || tersa_buf_append(out, ", ", 2);
                v = &f->container->v.array.items[i];
            } else if (i % 2 == 0) {
                ok = i == 0 || tersa_buf_append(out, ", ", 2);
                v = &f->container->v.map.keys[i / 2];
            } else {
                ok = tersa_buf_append(out, ": ", 2);
                v = &f->container->v.map.values[i / 2];
            }
            break;
        }
        if (!v) break;
    }
    free(stack);
    return ok && !out->failed;
}

static int cmd_decode(cli *c) {
    uint8_t *data;
    size_t len;
    int rc = 0;
    tersa_doc *doc = decode_input(c, &data, &len, &rc);
    free(data);
    if (!doc) return rc;
    limited_output o;
    if ((rc = open_output(c, len, &o)) != 0) {
        tersa_doc_free(doc);
        return rc;
    }
    /* Under a small limit, text over it is never written at all. */
    size_t flush_at = o.limit && o.limit < DECODE_FLUSH_BYTES ? o.limit + 1 : DECODE_FLUSH_BYTES;
    json_sink sink = {sink_to_output, &o, flush_at};
    tersa_buf out;
    tersa_buf_init(&out, NULL);
    for (size_t i = 0; i < tersa_doc_count(doc) && rc == 0; i++) {
        bool ok;
        json_error jerr;
        if (c->diag)
            ok = write_diag(tersa_doc_root(doc, i), &out, &o, flush_at);
        else
            ok = json_write_to(tersa_doc_root(doc, i), &c->jopts, &out, &sink, &jerr);
        if (ok) ok = tersa_buf_append(&out, "\n", 1);
        if (ok) continue;
        if (o.over_limit || o.failed) {
            rc = output_error(c, &o);
        } else if (out.failed) {
            rc = die("out of memory", "");
        } else {
            fprintf(stderr, "tersa: %s: cannot write as JSON: %s (see --lossy and the value options)\n", c->input,
                    jerr.message);
            rc = 1;
        }
    }
    if (rc == 0 && !limited_write(&o, out.ptr, out.len)) rc = output_error(c, &o);
    rc = close_output(c, &o, rc);
    tersa_buf_free(&out);
    tersa_doc_free(doc);
    return rc;
}

typedef struct text_frame {
    const tersa_value *container;
    size_t next, count;
} text_frame;

/* The bytes of strings, symbols and shaped-map keys that writing a tree
 * reads, counting each use: a decoded tree shares what references and shapes
 * repeat, but the writer hashes and checks the bytes again at every use, so
 * a few megabytes of input can stand for terabytes of work. Stops counting
 * past `stop_at`; SIZE_MAX if memory ran out. */
static size_t text_to_encode(const tersa_value *v, size_t total, size_t stop_at) {
    text_frame *stack = NULL;
    size_t depth = 0, cap = 0;
    while (v && total <= stop_at) {
        size_t count = 0;
        if (v->type == TERSA_STRING || v->type == TERSA_SYMBOL) {
            total += v->v.str.len;
        } else if (v->type == TERSA_ARRAY) {
            count = v->v.array.count;
        } else if (v->type == TERSA_MAP) {
            count = v->v.map.count;
            for (size_t i = 0; i < count; i++) total += v->v.map.keys[i].v.str.len;
        } else if (v->type == TERSA_GENERIC_MAP) {
            count = 2 * v->v.map.count;
        }
        if (count) {
            if (depth == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                text_frame *bigger = (text_frame *)realloc(stack, ncap * sizeof(text_frame));
                if (!bigger) {
                    total = SIZE_MAX;
                    break;
                }
                stack = bigger;
                cap = ncap;
            }
            stack[depth++] = (text_frame){v, 0, count};
        }
        v = NULL;
        while (depth) {
            text_frame *f = &stack[depth - 1];
            if (f->next == f->count) {
                depth--;
                continue;
            }
            size_t i = f->next++;
            const tersa_value *m = f->container;
            v = m->type == TERSA_ARRAY ? &m->v.array.items[i]
                : m->type == TERSA_MAP ? &m->v.map.values[i]
                : (i & 1)             ? &m->v.map.values[i / 2]
                                      : &m->v.map.keys[i / 2];
            break;
        }
    }
    free(stack);
    return total;
}

static int cmd_recode(cli *c) {
    uint8_t *data;
    size_t len;
    int rc = 0;
    tersa_doc *doc = decode_input(c, &data, &len, &rc);
    bool stream = doc && len >= 3 && (data[2] & 0x02);
    uint64_t dict_id = doc && len >= 11 && (data[2] & 0x01) ? ((uint64_t)data[3] | (uint64_t)data[4] << 8 |
                                                               (uint64_t)data[5] << 16 | (uint64_t)data[6] << 24 |
                                                               (uint64_t)data[7] << 32 | (uint64_t)data[8] << 40 |
                                                               (uint64_t)data[9] << 48 | (uint64_t)data[10] << 56)
                                                            : 0;
    free(data);
    if (!doc) return rc;
    /* Re-encoding is bounded like decoding: by the text the document stands for. */
    size_t limit = output_limit(c, len), text = 0;
    for (size_t i = 0; limit && i < tersa_doc_count(doc) && text <= limit; i++)
        text = text_to_encode(tersa_doc_root(doc, i), text, limit);
    if (limit && text > limit) {
        tersa_doc_free(doc);
        return text == SIZE_MAX ? die("out of memory", "")
                                : limit_error(c, "the strings and keys to re-encode, counted at each use, exceed", limit);
    }
    const tersa_dict *dict = NULL;
    for (size_t i = 0; dict_id && i < c->ndicts; i++)
        if (tersa_dict_id(c->dicts[i]) == dict_id) dict = c->dicts[i];
    tersa_writer *w = tersa_writer_new(NULL);
    if (c->max_depth) tersa_writer_set_max_depth(w, c->max_depth);
    bool ok = tersa_writer_start(w, dict, stream ? TERSA_WRITE_STREAM : 0);
    for (size_t i = 0; ok && i < tersa_doc_count(doc); i++) {
        if (stream) ok = tersa_write_frame_begin(w);
        ok = ok && tersa_write_value(w, tersa_doc_root(doc, i));
        if (stream) ok = ok && tersa_write_frame_end(w);
    }
    if (!ok) {
        rc = die("cannot encode: %s", tersa_writer_error(w)->message);
    } else {
        size_t out_len;
        const uint8_t *out = tersa_writer_data(w, &out_len);
        rc = write_output(c, len, out, out_len);
    }
    tersa_writer_free(w);
    tersa_doc_free(doc);
    return rc;
}

static int cmd_inspect(cli *c, bool stats) {
    size_t len;
    uint8_t *data = read_file(c->input, &len);
    if (!data) return die("cannot read %s", c->input);
    limited_output o;
    int rc = open_output(c, len, &o);
    if (rc) {
        free(data);
        return rc;
    }
    tersa_error err;
    inspect_options io = {c->dicts, c->ndicts, c->max_depth};
    /* The view of a defective buffer can be long (each one-byte item takes a
     * line): the defect is reported before it. */
    bool reported = !stats && !tersa_cli_check(data, len, &io, &err);
    if (reported) rc = decode_error(c->input, &err);
    bool ok = stats ? tersa_cli_stats(data, len, &io, &o, &err) : tersa_cli_inspect(data, len, &io, &o, &err);
    if (o.over_limit || o.failed)
        rc = output_error(c, &o);
    else if (!ok && !reported)
        rc = decode_error(c->input, &err);
    free(data);
    return close_output(c, &o, rc);
}

int main(int argc, char **argv) {
    cli c;
    int rc = parse_args(&c, argc, argv);
    if (rc) return rc;
    if ((rc = load_dicts(&c)) != 0) return rc;
    const char *cmd = c.command;
    if (strcmp(cmd, "encode") == 0) rc = cmd_encode(&c);
    else if (strcmp(cmd, "decode") == 0) rc = cmd_decode(&c);
    else if (strcmp(cmd, "recode") == 0) rc = cmd_recode(&c);
    else if (strcmp(cmd, "inspect") == 0) rc = cmd_inspect(&c, false);
    else if (strcmp(cmd, "stats") == 0) rc = cmd_inspect(&c, true);
    else if (strcmp(cmd, "dict") == 0 && strcmp(argv[2], "build") == 0)
        rc = tersa_cli_dict_build(c.inputs, c.ninputs, c.min_count, c.max_strings, c.max_shapes, c.max_depth, c.output);
    else if (strcmp(cmd, "dict") == 0 && strcmp(argv[2], "show") == 0)
        rc = tersa_cli_dict_show(c.input);
    else if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
        printf("tersa %s (format version %d)\n", TERSA_VERSION_STRING, TERSA_FORMAT_VERSION);
    else if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        fputs(USAGE, stdout);
    else {
        fprintf(stderr, "tersa: unknown command %s\n\n%s", cmd, USAGE);
        rc = 2;
    }
    for (size_t i = 0; i < c.ndicts; i++) tersa_dict_free((tersa_dict *)c.dicts[i]);
    return rc;
}
