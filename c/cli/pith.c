/*
 * pith.c - the `pith` command-line tool.
 */
#include "pith.h"

#include "fileio.h"
#include "inspect.h"
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: pith <command> [options] [INPUT]\n"
    "\n"
    "commands:\n"
    "  encode    JSON -> Pith (canonical encoding)\n"
    "  decode    Pith -> JSON (or --diag for the diagnostic notation)\n"
    "  recode    Pith -> Pith: decode any valid buffer and write it canonically\n"
    "  inspect   item-by-item view of a Pith buffer with offsets and forms\n"
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
    "  --dict FILE           a dictionary (as written by `pith dict build`); may repeat\n"
    "  --max-depth N         nesting limit (default 1000)\n"
    "decode options (values JSON cannot hold fail unless one of these says how):\n"
    "  --diag                write the diagnostic notation instead of JSON\n"
    "  --pretty              indent JSON by two spaces\n"
    "  --ascii               escape non-ASCII characters\n"
    "  --binary=base64|hex   binary values as strings\n"
    "  --time=iso            timestamps as ISO 8601 strings\n"
    "  --symbol=string       symbols as strings\n"
    "  --nonfinite=null|string  NaN and infinities\n"
    "  --ext=object          extension values as {\"$ext\": ...}\n"
    "  --keys=string         non-string map keys as strings\n"
    "  --lossy               all of: --binary=base64 --time=iso --symbol=string\n"
    "                        --nonfinite=string --ext=object --keys=string\n"
    "dict build options:\n"
    "  --min-count N         keep strings and shapes seen at least N times (default 2)\n"
    "  --max-strings N       keep at most N strings (default 4096)\n";

typedef struct cli {
    const char *command;
    const char *input;
    const char *output;
    bool stream;
    bool diag;
    uint32_t max_depth;
    const char *dict_paths[16];
    size_t ndict_paths;
    const pith_dict *dicts[16];
    size_t ndicts;
    json_write_options jopts;
    size_t min_count;
    size_t max_strings;
    const char *inputs[256];
    size_t ninputs;
} cli;

static int die(const char *fmt, const char *arg) {
    fprintf(stderr, "pith: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 1;
}

static bool option_value(const char *arg, const char *name, const char **value) {
    size_t n = strlen(name);
    if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
        *value = arg + n + 1;
        return true;
    }
    return false;
}

/* Parse arguments; returns 0 on success, the exit status otherwise. */
static int parse_args(cli *c, int argc, char **argv) {
    memset(c, 0, sizeof(*c));
    c->input = "-";
    c->min_count = 2;
    c->max_strings = 4096;
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
        } else if (strcmp(a, "--max-depth") == 0) {
            if (++i >= argc) return die("--max-depth needs a number", "");
            c->max_depth = (uint32_t)strtoul(argv[i], NULL, 10);
        } else if (option_value(a, "--max-depth", &v)) {
            c->max_depth = (uint32_t)strtoul(v, NULL, 10);
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
        } else if (option_value(a, "--min-count", &v)) {
            c->min_count = strtoul(v, NULL, 10);
        } else if (option_value(a, "--max-strings", &v)) {
            c->max_strings = strtoul(v, NULL, 10);
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
        pith_error err;
        pith_dict *d = pith_dict_parse(NULL, data, len, &err);
        free(data);
        if (!d) return die("not a Pith dictionary: %s", c->dict_paths[i]);
        c->dicts[c->ndicts++] = d;
    }
    return 0;
}

static int write_output(const cli *c, const void *data, size_t len) {
    FILE *f = c->output ? fopen(c->output, "wb") : stdout;
    if (!f) return die("cannot open %s for writing", c->output);
    int rc = write_all(f, data, len);
    if (c->output) rc |= fclose(f);
    if (rc) return die("write failed: %s", strerror(errno));
    return 0;
}

static int decode_error(const char *input, const pith_error *err) {
    fprintf(stderr, "pith: %s: %s at byte offset %zu: %s\n", input, pith_code_name(err->code), err->offset,
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
    pith_doc *doc = c->stream ? json_read_seq(NULL, (const char *)text, len, &ro, &jerr)
                              : json_read(NULL, (const char *)text, len, &ro, &jerr);
    free(text);
    if (!doc) {
        fprintf(stderr, "pith: %s: invalid JSON at line %zu, column %zu (byte %zu): %s\n", c->input, jerr.line,
                jerr.column, jerr.offset, jerr.message);
        return 1;
    }
    pith_writer *w = pith_writer_new(NULL);
    if (c->max_depth) pith_writer_set_max_depth(w, c->max_depth);
    const pith_dict *dict = c->ndicts ? c->dicts[0] : NULL;
    bool ok = pith_writer_start(w, dict, c->stream ? PITH_WRITE_STREAM : 0);
    for (size_t i = 0; ok && i < pith_doc_count(doc); i++) {
        if (c->stream) ok = pith_write_frame_begin(w);
        ok = ok && pith_write_value(w, pith_doc_root(doc, i));
        if (c->stream) ok = ok && pith_write_frame_end(w);
    }
    int rc;
    if (!ok) {
        rc = die("cannot encode: %s", pith_writer_error(w)->message);
    } else {
        size_t out_len;
        const uint8_t *out = pith_writer_data(w, &out_len);
        rc = write_output(c, out, out_len);
    }
    pith_writer_free(w);
    pith_doc_free(doc);
    return rc;
}

static pith_doc *decode_input(cli *c, uint8_t **data, size_t *len, int *rc) {
    *data = read_file(c->input, len);
    if (!*data) {
        *rc = die("cannot read %s", c->input);
        return NULL;
    }
    bool stream = *len >= 3 && ((*data)[2] & 0x02) && (*data)[0] == 0xC1;
    pith_decode_options o = {c->dicts, c->ndicts, c->max_depth, stream};
    pith_error err;
    pith_doc *doc = pith_decode(NULL, *data, *len, &o, &err);
    if (!doc) *rc = decode_error(c->input, &err);
    return doc;
}

static bool sink_to_file(void *ctx, const char *ptr, size_t len) { return write_all((FILE *)ctx, ptr, len) == 0; }

/* JSON text past this size is written as it is made: references can make a
 * document's JSON far larger than its Pith bytes, too large to hold. Below
 * it, a value JSON cannot hold leaves no partial output. */
#define DECODE_FLUSH_BYTES ((size_t)64 << 20)

static int cmd_decode(cli *c) {
    uint8_t *data;
    size_t len;
    int rc = 0;
    pith_doc *doc = decode_input(c, &data, &len, &rc);
    free(data);
    if (!doc) return rc;
    FILE *f = c->output ? fopen(c->output, "wb") : stdout;
    if (!f) {
        pith_doc_free(doc);
        return die("cannot open %s for writing", c->output);
    }
    json_sink sink = {sink_to_file, f, DECODE_FLUSH_BYTES};
    pith_buf out;
    pith_buf_init(&out, NULL);
    for (size_t i = 0; i < pith_doc_count(doc) && rc == 0; i++) {
        if (c->diag) {
            if (!pith_diag(pith_doc_root(doc, i), &out)) rc = die("out of memory", "");
        } else {
            json_error jerr;
            if (!json_write_to(pith_doc_root(doc, i), &c->jopts, &out, &sink, &jerr)) {
                fprintf(stderr, "pith: %s: cannot write as JSON: %s (see --lossy and the value options)\n", c->input,
                        jerr.message);
                rc = 1;
            }
        }
        pith_buf_append(&out, "\n", 1);
    }
    if (rc == 0 && write_all(f, out.ptr, out.len) != 0) rc = die("write failed: %s", strerror(errno));
    if (c->output && fclose(f) != 0 && rc == 0) rc = die("write failed: %s", strerror(errno));
    pith_buf_free(&out);
    pith_doc_free(doc);
    return rc;
}

static int cmd_recode(cli *c) {
    uint8_t *data;
    size_t len;
    int rc = 0;
    pith_doc *doc = decode_input(c, &data, &len, &rc);
    bool stream = doc && len >= 3 && (data[2] & 0x02);
    uint64_t dict_id = doc && len >= 11 && (data[2] & 0x01) ? ((uint64_t)data[3] | (uint64_t)data[4] << 8 |
                                                               (uint64_t)data[5] << 16 | (uint64_t)data[6] << 24 |
                                                               (uint64_t)data[7] << 32 | (uint64_t)data[8] << 40 |
                                                               (uint64_t)data[9] << 48 | (uint64_t)data[10] << 56)
                                                            : 0;
    free(data);
    if (!doc) return rc;
    const pith_dict *dict = NULL;
    for (size_t i = 0; dict_id && i < c->ndicts; i++)
        if (pith_dict_id(c->dicts[i]) == dict_id) dict = c->dicts[i];
    pith_writer *w = pith_writer_new(NULL);
    bool ok = pith_writer_start(w, dict, stream ? PITH_WRITE_STREAM : 0);
    for (size_t i = 0; ok && i < pith_doc_count(doc); i++) {
        if (stream) ok = pith_write_frame_begin(w);
        ok = ok && pith_write_value(w, pith_doc_root(doc, i));
        if (stream) ok = ok && pith_write_frame_end(w);
    }
    if (!ok) {
        rc = die("cannot encode: %s", pith_writer_error(w)->message);
    } else {
        size_t out_len;
        const uint8_t *out = pith_writer_data(w, &out_len);
        rc = write_output(c, out, out_len);
    }
    pith_writer_free(w);
    pith_doc_free(doc);
    return rc;
}

static int cmd_inspect(cli *c, bool stats) {
    size_t len;
    uint8_t *data = read_file(c->input, &len);
    if (!data) return die("cannot read %s", c->input);
    pith_buf out;
    pith_buf_init(&out, NULL);
    pith_error err;
    bool ok = stats ? pith_cli_stats(data, len, c->dicts, c->ndicts, &out, &err)
                    : pith_cli_inspect(data, len, c->dicts, c->ndicts, &out, &err);
    int rc = write_output(c, out.ptr, out.len);
    pith_buf_free(&out);
    free(data);
    if (!ok) return decode_error(c->input, &err);
    return rc;
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
        rc = pith_cli_dict_build(c.inputs, c.ninputs, c.min_count, c.max_strings, c.output);
    else if (strcmp(cmd, "dict") == 0 && strcmp(argv[2], "show") == 0)
        rc = pith_cli_dict_show(c.input);
    else if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
        printf("pith %s (format version %d)\n", PITH_VERSION_STRING, PITH_FORMAT_VERSION);
    else if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        fputs(USAGE, stdout);
    else {
        fprintf(stderr, "pith: unknown command %s\n\n%s", cmd, USAGE);
        rc = 2;
    }
    for (size_t i = 0; i < c.ndicts; i++) pith_dict_free((pith_dict *)c.dicts[i]);
    return rc;
}
