/*
 * map_class.c - Tersa::Map, the map a Ruby Hash cannot hold (lib/tersa/map.rb
 * has its methods): the C side makes one from decoded pairs and reads its
 * pairs for the encoder.
 */
#include "common.h"

VALUE cMap;
static ID id_pairs, id_lookup;

/* As Tersa::Map.new makes it, without computing the keys' identities (the
 * reader has checked the keys are distinct) and without running Ruby code:
 * frozen, with frozen pairs and String keys, and an empty lookup cell. */
VALUE tersa_rb_map_new(const VALUE *pairs, long n) {
    VALUE list = rb_ary_new_capa(n);
    for (long i = 0; i < n; i++) {
        VALUE key = pairs[2 * i];
        if (RB_TYPE_P(key, T_STRING) && rb_obj_class(key) == rb_cString) rb_obj_freeze(key);
        rb_ary_push(list, rb_obj_freeze(rb_assoc_new(key, pairs[2 * i + 1])));
    }
    VALUE map = rb_obj_alloc(cMap);
    rb_ivar_set(map, id_pairs, rb_obj_freeze(list));
    rb_ivar_set(map, id_lookup, rb_ary_new_capa(1));
    return rb_obj_freeze(map);
}

VALUE tersa_rb_map_pairs(VALUE map) {
    VALUE pairs = rb_attr_get(map, id_pairs);
    if (!RB_TYPE_P(pairs, T_ARRAY)) return Qnil;
    for (long i = 0; i < RARRAY_LEN(pairs); i++) {
        VALUE pair = RARRAY_AREF(pairs, i);
        if (!RB_TYPE_P(pair, T_ARRAY) || RARRAY_LEN(pair) != 2) return Qnil;
    }
    return pairs;
}

void tersa_rb_init_map(void) {
    id_pairs = rb_intern("@pairs");
    id_lookup = rb_intern("@lookup");
    cMap = rb_define_class_under(mTersa, "Map", rb_cObject);
}
