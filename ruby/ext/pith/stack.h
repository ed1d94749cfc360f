/*
 * stack.h - a GC-visible stack of VALUEs for the encoder and decoder.
 *
 * Values that are neither on the machine stack nor inside a Ruby object
 * (collected hash pairs, decoded children waiting for their container) live
 * here. The stack is a separate TypedData object that is *not* write-barrier
 * protected, so pushing needs no barrier, and its mark function pins every
 * live entry (they are short-lived and the C side keeps raw pointers).
 */
#ifndef PITH_RB_STACK_H
#define PITH_RB_STACK_H

#include "common.h"

typedef struct pith_rb_stack {
    VALUE *ptr;
    long len, cap;
} pith_rb_stack;

/** A new stack object; *out gets its C side. The owner must keep (mark) the object. */
VALUE pith_rb_stack_new(pith_rb_stack **out);

/** Make room for `n` more entries (len unchanged). */
void pith_rb_stack_reserve(pith_rb_stack *s, long n);

/** Append `n` slots set to Qnil; returns the index of the first. */
static inline long pith_rb_stack_grow(pith_rb_stack *s, long n) {
    if (PITH_RB_UNLIKELY(s->cap - s->len < n)) pith_rb_stack_reserve(s, n);
    long base = s->len;
    for (long i = 0; i < n; i++) s->ptr[base + i] = Qnil;
    s->len += n;
    return base;
}

/** Like pith_rb_stack_grow without setting the slots: the caller fills all
 *  `n` before anything can allocate (and so before the GC could mark them). */
static inline long pith_rb_stack_grow_raw(pith_rb_stack *s, long n) {
    if (PITH_RB_UNLIKELY(s->cap - s->len < n)) pith_rb_stack_reserve(s, n);
    long base = s->len;
    s->len += n;
    return base;
}

static inline void pith_rb_stack_push(pith_rb_stack *s, VALUE v) {
    if (PITH_RB_UNLIKELY(s->len == s->cap)) pith_rb_stack_reserve(s, 1);
    s->ptr[s->len++] = v;
}

#endif
