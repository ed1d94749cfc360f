/*
 * known_types.h - the well-known extension types (known_types.c) for the
 * encoder and the decoder.
 */
#ifndef TERSA_RB_KNOWN_TYPES_H
#define TERSA_RB_KNOWN_TYPES_H

#include "encoder.h"

extern VALUE cUUID, cTimeOfDay;

enum { WK_NONE, WK_WRITTEN, WK_IS_DATETIME };

/** Write obj if it is of a well-known type: WK_WRITTEN, WK_IS_DATETIME (a
 *  DateTime, which the caller writes as a timestamp) or WK_NONE. */
int tersa_rb_enc_well_known(tersa_rb_encoder *e, VALUE obj, VALUE klass, uint32_t depth);
/** A DateTime as a Time (offset and fraction kept). Runs Ruby code. */
VALUE tersa_rb_datetime_to_time(VALUE datetime);
/** A hint for an unsupported value of a type users expect to work, or NULL. */
const char *tersa_rb_unsupported_hint(VALUE obj);
/** The value of an EXT item of a reserved type (a const tersa_item *): raises
 *  DecodeError invalid_value for a payload or type v1 does not define. */
VALUE tersa_rb_well_known_value(VALUE item);

#endif
