/*
 * declared_class.h - classes declared with Tersa.register_class: the encoder
 * writes an instance as the map of its declared attributes, read from its
 * readers, with no Hash in between (declared_class.c).
 */
#ifndef TERSA_RB_DECLARED_CLASS_H
#define TERSA_RB_DECLARED_CLASS_H

#include "encoder.h"

/**
 * If obj's class is declared in the current Ractor, write obj as the map of
 * its declared attributes and return true: *opened is then true when a frame
 * was opened at `depth` for its values (the encoder's loop writes them and
 * closes it, releasing the `hooks` replacements that stood for obj), false
 * when the map was written whole (no attributes). False, with nothing done,
 * for an object of any other class. A reader that raises propagates its
 * exception unchanged (the encoding is abandoned).
 */
bool tersa_rb_enc_declared(tersa_rb_encoder *e, VALUE obj, uint32_t depth, uint32_t hooks, bool *opened);

void tersa_rb_init_declared(void);

#endif
