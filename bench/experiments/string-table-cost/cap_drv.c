/* cap_drv FILE.json REPS: C core encode (tersa_write_value) and decode
 * (tersa_decode to a document, and tersa_skip) of one document: bytes, the
 * least thread CPU time of REPS runs, and the peak bytes the writer, the
 * reader and tersa_decode allocate. Built once per value of TERSA_MAX_STRINGS
 * (a copy of c/ with the constant changed), from that copy's c/ directory:
 *   gcc -O2 -DNDEBUG -std=gnu11 -Iinclude -Isrc -Icli -o drv PATH/cap_drv.c \
 *       src/*.c cli/json_read.c cli/fileio.c cli/strtod.c -lm */
#include "tersa.h"
#include "fileio.h"
#include "json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef struct { size_t live, peak; } counting;
static void *cm(void *c_, size_t n){counting*c=c_;c->live+=n;if(c->live>c->peak)c->peak=c->live;return malloc(n);}
static void *cr(void *c_, void *p,size_t o,size_t n){counting*c=c_;c->live+=n-o;if(c->live>c->peak)c->peak=c->live;return realloc(p,n);}
static void cf(void *c_, void *p,size_t n){counting*c=c_;c->live-=n;free(p);}
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int argc, char **argv) {
    size_t len; uint8_t *text = read_file(argv[1], &len);
    json_error jerr;
    tersa_doc *doc = json_read(NULL, (const char *)text, len, NULL, &jerr);
    int k = atoi(argv[2]);
    counting wc = {0,0}; tersa_alloc wa = {cm, cr, cf, &wc};
    tersa_writer *w = tersa_writer_new(&wa);
    size_t out = 0; const uint8_t *d = NULL;
    double enc = 1e30, dec = 1e30, skip = 1e30;
    for (int i = 0; i < k; i++) {
        double t0 = now();
        tersa_writer_start(w, NULL, 0);
        if (!tersa_write_value(w, tersa_doc_root(doc, 0))) { fprintf(stderr, "encode failed\n"); return 1; }
        d = tersa_writer_data(w, &out);
        double t = now() - t0; if (t < enc) enc = t;
    }
    uint8_t *buf = malloc(out); memcpy(buf, d, out);
    size_t wpeak = wc.peak;
    tersa_writer_free(w);
    counting rc = {0,0}; tersa_alloc ra = {cm, cr, cf, &rc};
    tersa_reader *r = tersa_reader_new(&ra);
    for (int i = 0; i < k; i++) {
        double t0 = now();
        if (!(tersa_reader_start(r, buf, out, NULL, 0, 0) && tersa_skip(r))) { fprintf(stderr, "skip failed\n"); return 1; }
        double t = now() - t0; if (t < skip) skip = t;
    }
    size_t rpeak = rc.peak;
    counting dc = {0,0}; tersa_alloc da = {cm, cr, cf, &dc};
    for (int i = 0; i < k; i++) {
        tersa_error err;
        double t0 = now();
        tersa_doc *back = tersa_decode(&da, buf, out, NULL, &err);
        double t = now() - t0; if (t < dec) dec = t;
        if (!back) { fprintf(stderr, "decode failed\n"); return 1; }
        tersa_doc_free(back);
    }
    printf("bytes %zu enc_ms %.3f skip_ms %.3f dec_ms %.3f writer_peak %zu skip_peak %zu decode_peak %zu\n",
           out, enc/1e6, skip/1e6, dec/1e6, wpeak, rpeak, dc.peak);
    return 0;
}
