/*
 * xwellknown.h - the extended-JSON text forms of the well-known types
 * ({"$decimal": ...}, "$date", "$uuid", "$time_of_day"; spec/vectors/README.md)
 * as EXT payloads, for the vector runner and the crossfuzz harness. Uses only
 * tersa.h, as a binding would.
 */
#ifndef TERSA_XWELLKNOWN_H
#define TERSA_XWELLKNOWN_H

#include "tersa.h"

/** Room for any well-known payload: kind byte, exponent varint, coefficient. */
#define X_WELL_KNOWN_MAX 1040

/** The reserved extension type of an xvalue tag ("$decimal", ...), or 0 if
 *  the tag is not a well-known one. */
uint32_t x_well_known_type(const char *tag, size_t len);

/** The payload of the text form `s` (`n` bytes) of a well-known `type` into
 *  `out` (X_WELL_KNOWN_MAX bytes); its length, or 0 if the text is malformed
 *  or out of range (no well-known payload is empty). */
size_t x_well_known_payload(uint32_t type, const char *s, size_t n, uint8_t out[X_WELL_KNOWN_MAX]);

#endif
