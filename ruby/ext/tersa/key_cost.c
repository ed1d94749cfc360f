/*
 * key_cost.c - what putting decoded keys into a Ruby Hash would cost.
 *
 * Ruby hashes a String key in full for every Hash it enters and an Array or
 * Hash key element by element, and one reference byte can repeat a long
 * string in key after key: the decoder charges this work against a budget
 * (decoder_class.c, charge_hashing). Keys can also nest as deep as the input
 * allows, which Ruby's recursive #hash cannot take, so the walk reports the
 * depth too.
 */
#include "key_cost.h"

/* A container costs about as much as hashing this many bytes (a method call
 * and Ruby's recursion guard). */
#define CONTAINER_COST 64

static bool is_container(VALUE v) {
    if (RB_SPECIAL_CONST_P(v)) return false;
    switch (RB_BUILTIN_TYPE(v)) {
    case T_ARRAY:
    case T_HASH:
        return true;
    case T_OBJECT:
        return rb_obj_class(v) == cMap && !NIL_P(tersa_rb_map_pairs(v));
    default:
        return false;
    }
}

static size_t leaf_cost(VALUE v) { return RB_TYPE_P(v, T_STRING) ? (size_t)RSTRING_LEN(v) : 0; }

typedef struct walk {
    tersa_rb_stack *s;
    size_t cost;
    long level; /* of the children being pushed */
} walk;

/* Push a container child (with its level) on the reserved scratch, or count a leaf. */
static inline void visit(walk *w, VALUE child) {
    if (is_container(child)) {
        w->s->ptr[w->s->len++] = child;
        w->s->ptr[w->s->len++] = LONG2FIX(w->level);
    } else {
        w->cost += leaf_cost(child);
    }
}

static int visit_pair(VALUE key, VALUE value, VALUE arg) {
    visit((walk *)arg, key);
    visit((walk *)arg, value);
    return ST_CONTINUE;
}

size_t tersa_rb_keys_cost(tersa_rb_stack *s, long first, long n, long stride, uint32_t *depth) {
    long top = s->len, deepest = 0;
    walk w = {s, 0, 1};
    for (long i = 0; i < n; i++) {
        tersa_rb_stack_reserve(s, 2);
        w.level = 1;
        visit(&w, s->ptr[first + i * stride]);
        while (s->len > top) {
            /* The node stays on the stack (marked, pinned) while room for its
             * children is made, which may run the GC; then nothing allocates. */
            VALUE node = s->ptr[s->len - 2];
            long level = FIX2LONG(s->ptr[s->len - 1]);
            if (level > deepest) deepest = level;
            w.cost += CONTAINER_COST;
            w.level = level + 1;
            if (RB_TYPE_P(node, T_ARRAY)) {
                long len = RARRAY_LEN(node);
                tersa_rb_stack_reserve(s, 2 * len);
                s->len -= 2;
                for (long j = 0; j < len; j++) visit(&w, RARRAY_AREF(node, j));
            } else if (RB_TYPE_P(node, T_HASH)) {
                tersa_rb_stack_reserve(s, 4 * (long)RHASH_SIZE(node));
                s->len -= 2;
                rb_hash_foreach(node, visit_pair, (VALUE)&w);
            } else {
                VALUE pairs = tersa_rb_map_pairs(node);
                long len = RARRAY_LEN(pairs);
                tersa_rb_stack_reserve(s, 4 * len);
                s->len -= 2;
                for (long j = 0; j < len; j++) {
                    VALUE pair = RARRAY_AREF(pairs, j);
                    visit(&w, RARRAY_AREF(pair, 0));
                    visit(&w, RARRAY_AREF(pair, 1));
                }
            }
        }
    }
    s->len = top;
    *depth = (uint32_t)deepest;
    return w.cost;
}
