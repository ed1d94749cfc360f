/*
 * stack.c - the GC-visible VALUE stack (see stack.h).
 */
#include "stack.h"

static void stack_mark(void *p) {
    tersa_rb_stack *s = (tersa_rb_stack *)p;
    if (s->len) rb_gc_mark_locations(s->ptr, s->ptr + s->len);
}

static void stack_free(void *p) {
    tersa_rb_stack *s = (tersa_rb_stack *)p;
    xfree(s->ptr);
    xfree(s);
}

static size_t stack_memsize(const void *p) {
    const tersa_rb_stack *s = (const tersa_rb_stack *)p;
    return sizeof(*s) + (size_t)s->cap * sizeof(VALUE);
}

static const rb_data_type_t stack_type = {
    .wrap_struct_name = "Tersa::Stack",
    .function = {.dmark = stack_mark, .dfree = stack_free, .dsize = stack_memsize, .dcompact = NULL},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

VALUE tersa_rb_stack_new(tersa_rb_stack **out) {
    tersa_rb_stack *s;
    VALUE obj = TypedData_Make_Struct(rb_cObject, tersa_rb_stack, &stack_type, s);
    s->ptr = NULL;
    s->len = s->cap = 0;
    *out = s;
    return obj;
}

void tersa_rb_stack_reserve(tersa_rb_stack *s, long n) {
    long cap = s->cap ? s->cap : 256;
    while (cap - s->len < n) cap *= 2;
    if (cap != s->cap) {
        TERSA_RB_REALLOC_N(s->ptr, VALUE, cap);
        s->cap = cap;
    }
}
