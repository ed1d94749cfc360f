/*
 * stack.h - a GC-visible stack of VALUEs for the encoder and decoder.
 *
 * Values that are neither on the machine stack nor inside a Ruby object
 * (collected hash pairs, decoded children waiting for their container) live
 * here. The stack is a separate TypedData object that is *not* write-barrier
 * protected, so pushing needs no barrier, and its mark function pins every
 * live entry (they are short-lived and the C side keeps raw pointers).
 */
#ifndef TERSA_RB_STACK_H
#define TERSA_RB_STACK_H

#include "common.h"

typedef struct tersa_rb_stack {
    VALUE *ptr;
    long len, cap;
} tersa_rb_stack;

/** A new stack object; *out gets its C side. The owner must keep (mark) the object. */
VALUE tersa_rb_stack_new(tersa_rb_stack **out);

/** Make room for `n` more entries (len unchanged). */
void tersa_rb_stack_reserve(tersa_rb_stack *s, long n);

/** Append `n` slots set to Qnil; returns the index of the first. */
static inline long tersa_rb_stack_grow(tersa_rb_stack *s, long n) {
    if (TERSA_UNLIKELY(s->cap - s->len < n)) tersa_rb_stack_reserve(s, n);
    long base = s->len;
    for (long i = 0; i < n; i++) s->ptr[base + i] = Qnil;
    s->len += n;
    return base;
}

/** Like tersa_rb_stack_grow without setting the slots: the caller fills all
 *  `n` before anything can allocate (and so before the GC could mark them). */
static inline long tersa_rb_stack_grow_raw(tersa_rb_stack *s, long n) {
    if (TERSA_UNLIKELY(s->cap - s->len < n)) tersa_rb_stack_reserve(s, n);
    long base = s->len;
    s->len += n;
    return base;
}

static inline void tersa_rb_stack_push(tersa_rb_stack *s, VALUE v) {
    if (TERSA_UNLIKELY(s->len == s->cap)) tersa_rb_stack_reserve(s, 1);
    s->ptr[s->len++] = v;
}

#endif
