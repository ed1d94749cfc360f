/*
 * errors.c - exception classes and raise helpers.
 */
#include "common.h"

#include <stdio.h>

VALUE eError, eEncodeError, eDecodeError;
static ID id_ivar_offset, id_ivar_code;

void tersa_rb_raise_decode_code(const char *code, size_t offset, const char *message) {
    VALUE msg = rb_sprintf("%s at byte offset %zu: %s", code, offset, message);
    VALUE exc = rb_exc_new_str(eDecodeError, msg);
    rb_ivar_set(exc, id_ivar_offset, SIZET2NUM(offset));
    rb_ivar_set(exc, id_ivar_code, ID2SYM(rb_intern(code)));
    rb_exc_raise(exc);
}

void tersa_rb_raise_decode(const tersa_error *err) {
    if (err->code == TERSA_ERR_NOMEM) rb_memerror();
    tersa_rb_raise_decode_code(tersa_code_name(err->code), err->offset, err->message ? err->message : "");
}

void tersa_rb_raise_writer(const tersa_writer *w, VALUE path) {
    const tersa_error *err = tersa_writer_error(w);
    if (err->code == TERSA_ERR_NOMEM) rb_memerror();
    if (NIL_P(path))
        rb_raise(eEncodeError, "%s", err->message ? err->message : "cannot encode");
    rb_raise(eEncodeError, "%s at %" PRIsVALUE, err->message ? err->message : "cannot encode", path);
}

void tersa_rb_init_errors(void) {
    eError = rb_define_class_under(mTersa, "Error", rb_eStandardError);
    eEncodeError = rb_define_class_under(mTersa, "EncodeError", eError);
    eDecodeError = rb_define_class_under(mTersa, "DecodeError", eError);
    id_ivar_offset = rb_intern("@offset");
    id_ivar_code = rb_intern("@code");
}
