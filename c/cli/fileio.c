/*
 * fileio.c - whole-file reading and size-limited writing for the CLI, tests
 * and benchmark.
 */
#define _POSIX_C_SOURCE 200809L
#include "fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint8_t *read_stream(FILE *f, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = (uint8_t *)malloc(cap + 1);
    if (!buf) return NULL;
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            if (ferror(f)) {
                free(buf);
                return NULL;
            }
            break;
        }
        uint8_t *nb = (uint8_t *)realloc(buf, cap * 2 + 1);
        if (!nb) {
            free(buf);
            return NULL;
        }
        buf = nb;
        cap *= 2;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static int has_suffix(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

uint8_t *read_file(const char *path, size_t *len) {
    if (strcmp(path, "-") == 0) return read_stream(stdin, len);
    if (has_suffix(path, ".xz")) {
        /* No compression library dependency: the xz tool is on every target machine. */
        size_t cmdlen = strlen(path) * 4 + 32;
        char *cmd = (char *)malloc(cmdlen);
        if (!cmd) return NULL;
        char *p = cmd + sprintf(cmd, "xz -dc -- '");
        for (const char *s = path; *s; s++) {
            if (*s == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *s;
            }
        }
        strcpy(p, "'");
        FILE *f = popen(cmd, "r");
        free(cmd);
        if (!f) return NULL;
        uint8_t *data = read_stream(f, len);
        int status = pclose(f);
        if (status != 0) {
            free(data);
            errno = EIO;
            return NULL;
        }
        return data;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *data = read_stream(f, len);
    fclose(f);
    return data;
}

int write_all(FILE *f, const void *data, size_t len) {
    return fwrite(data, 1, len, f) == len && fflush(f) == 0 ? 0 : -1;
}

bool limited_write(limited_output *o, const void *data, size_t len) {
    if (o->over_limit || o->failed) return false;
    if (o->limit && len > o->limit - o->written) {
        o->over_limit = true;
        return false;
    }
    if (len && write_all(o->file, data, len) != 0) {
        o->failed = true;
        return false;
    }
    o->written += len;
    return true;
}
