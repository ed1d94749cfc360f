/*
 * consumer.c - a program built against the installed library, as its users
 * build theirs: only <tersa.h> and pkg-config's flags. It encodes a value,
 * checks the canonical bytes and decodes them back.
 */
#include <tersa.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    tersa_writer *w = tersa_writer_new(NULL);
    tersa_key keys[2] = {{"id", 2, false}, {"price", 5, false}};
    bool ok = w && tersa_writer_start(w, NULL, 0) && tersa_write_map_begin(w, keys, 2) && tersa_write_int(w, 7) &&
              tersa_write_double(w, 101.25) && tersa_write_map_end(w);
    size_t len = 0;
    const uint8_t *data = ok ? tersa_writer_data(w, &len) : NULL;
    /* header C1 70 10, MAPDEF of keys "id" and "price", INT 7, DEC e-2 with
     * mantissa 10125 (zigzag 20250, a 3-byte varint) */
    static const uint8_t expected[] = {0xC1, 0x70, 0x10, 0x92, 0x42, 'i',  'd',  0x45, 'p',
                                       'r',  'i',  'c',  'e',  0xAF, 0xDA, 0xD4, 0x78, 0x02};
    if (!ok || len != sizeof expected || memcmp(data, expected, len) != 0) {
        fprintf(stderr, "consumer: unexpected encoding (%zu bytes)\n", len);
        return 1;
    }
    tersa_reader *r = tersa_reader_new(NULL);
    tersa_item it;
    ok = r && tersa_reader_start(r, data, len, NULL, 0, 0) && tersa_read(r, &it) && it.type == TERSA_MAP &&
         tersa_read(r, &it) && it.type == TERSA_INT && tersa_read(r, &it) && it.type == TERSA_FLOAT &&
         tersa_reader_finish(r);
    if (!ok) {
        fprintf(stderr, "consumer: decode failed\n");
        return 1;
    }
    tersa_reader_free(r);
    tersa_writer_free(w);
    puts("consumer: ok");
    return 0;
}
