/*
 * digits.h - decimal digits two at a time, for the float text (dtoa.c) and
 * the CLI's JSON writer. Not installed.
 */
#ifndef TERSA_DIGITS_H
#define TERSA_DIGITS_H

#include <stdint.h>
#include <string.h>

#include "compiler.h"

/* "00" "01" ... "99". */
static const char digit_pairs[200] = {
#define D10(t) t,'0', t,'1', t,'2', t,'3', t,'4', t,'5', t,'6', t,'7', t,'8', t,'9'
    D10('0'), D10('1'), D10('2'), D10('3'), D10('4'),
    D10('5'), D10('6'), D10('7'), D10('8'), D10('9')
#undef D10
};

/* The decimal digits of u written backwards from `end` (up to 20 bytes
 * before it); returns where they start. */
TERSA_INLINE char *u64_digits(uint64_t u, char *end) {
    char *p = end;
    while (u >= 100) {
        unsigned d = (unsigned)(u % 100);
        u /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * d, 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    return p;
}

#endif /* TERSA_DIGITS_H */
