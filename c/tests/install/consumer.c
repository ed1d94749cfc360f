/*
 * consumer.c - a program built against the installed library, as its users
 * build theirs: only <pith.h> and pkg-config's flags. It encodes a value,
 * checks the canonical bytes and decodes them back.
 */
#include <pith.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    pith_writer *w = pith_writer_new(NULL);
    pith_key keys[2] = {{"id", 2, false}, {"price", 5, false}};
    bool ok = w && pith_writer_start(w, NULL, 0) && pith_write_map_begin(w, keys, 2) && pith_write_int(w, 7) &&
              pith_write_double(w, 101.25) && pith_write_map_end(w);
    size_t len = 0;
    const uint8_t *data = ok ? pith_writer_data(w, &len) : NULL;
    /* header C1 70 10, MAPDEF of keys "id" and "price", INT 7, DEC e-2 with
     * mantissa 10125 (zigzag 20250, a 3-byte varint) */
    static const uint8_t expected[] = {0xC1, 0x70, 0x10, 0x92, 0x42, 'i',  'd',  0x45, 'p',
                                       'r',  'i',  'c',  'e',  0xAF, 0xDA, 0xD4, 0x78, 0x02};
    if (!ok || len != sizeof expected || memcmp(data, expected, len) != 0) {
        fprintf(stderr, "consumer: unexpected encoding (%zu bytes)\n", len);
        return 1;
    }
    pith_reader *r = pith_reader_new(NULL);
    pith_item it;
    ok = r && pith_reader_start(r, data, len, NULL, 0, 0) && pith_read(r, &it) && it.type == PITH_MAP &&
         pith_read(r, &it) && it.type == PITH_INT && pith_read(r, &it) && it.type == PITH_FLOAT &&
         pith_reader_finish(r);
    if (!ok) {
        fprintf(stderr, "consumer: decode failed\n");
        return 1;
    }
    pith_reader_free(r);
    pith_writer_free(w);
    puts("consumer: ok");
    return 0;
}
