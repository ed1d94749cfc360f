/*
 * key_cost.h - what putting decoded keys into a Ruby Hash would cost (key_cost.c).
 */
#ifndef TERSA_RB_KEY_COST_H
#define TERSA_RB_KEY_COST_H

#include "common.h"

#include "stack.h"

/* Ruby hashes and compares Array and Hash keys by recursion on the machine
 * and VM stacks (a Fiber with the smallest stacks holds about 170 levels).
 * Keys nested deeper than this go into a Tersa::Map instead of a Hash. */
#define TERSA_RB_HASHABLE_DEPTH 32

/**
 * The work of hashing the keys at s->ptr[first + i * stride] (i < n) in a
 * Hash: String bytes, plus a fixed cost per container in them. *depth gets
 * the deepest nesting among them (0: no containers). Walks without recursion,
 * using `s` past its length as scratch (restored on return).
 */
size_t tersa_rb_keys_cost(tersa_rb_stack *s, long first, long n, long stride, uint32_t *depth);

#endif
