/*
 * decode_generic.c - generic maps: a dict of their pairs, or a tersa.Map when a
 * dict cannot hold them (keys Python considers equal, unhashable, or too many
 * of one hash value).
 *
 * Part of _tersa.c (included by decode.c at the place of its use): not compiled alone.
 */

/* A tersa.Map of the pairs (items[0], items[1]), (items[2], items[3]), ... */
static PyObject *map_of_items(PyObject *const *items, size_t npairs) {
    PyObject *pairs = PyTuple_New((Py_ssize_t)npairs);
    if (!pairs) return NULL;
    for (size_t j = 0; j < npairs; j++) {
        PyObject *pair = PyTuple_Pack(2, items[2 * j], items[2 * j + 1]);
        if (!pair) {
            Py_DECREF(pairs);
            return NULL;
        }
        PyTuple_SET_ITEM(pairs, (Py_ssize_t)j, pair);
    }
    PyObject *m = PyObject_CallOneArg((PyObject *)MapType, pairs);
    Py_DECREF(pairs);
    return m;
}

/* A dict of a generic map's pairs costs time quadratic in the number of keys
 * that share one Python hash value (each insert compares with all of them),
 * and ints, floats and tuples of them hash predictably: the multiples of
 * 2^61-1 all hash to 0. A generic map with more than KEY_GROUP_MAX keys of
 * one hash becomes a tersa.Map (no hashing), which bounds the work at
 * KEY_GROUP_MAX comparisons per key. No natural data comes near it (floats
 * share a hash at most 34 at a time: the powers 2^(61k)). */
#define KEY_GROUP_MAX 64

typedef struct hash_group {
    Py_hash_t hash;
    size_t count; /* 0: empty slot */
} hash_group;

/* The seed of the hash_group table's slots, random per process: the keys
 * come from whoever wrote the buffer, so they must not be able to choose
 * hash values that collide in this table too. */
static uint64_t g_group_seed;

TERSA_INLINE size_t group_slot(Py_hash_t h, size_t mask) {
    uint64_t x = (uint64_t)h ^ g_group_seed;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (size_t)x & mask;
}

/* An empty table for n keys (load at most 1/2), or -1 with MemoryError. */
static int groups_reset(dec_ctx *d, size_t n, size_t *mask) {
    size_t cap = 64;
    while (cap < 2 * n) cap *= 2;
    if (cap > d->groups_cap) {
        hash_group *p = PyMem_Realloc(d->groups, cap * sizeof(hash_group));
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        d->groups = p;
        d->groups_cap = cap;
    }
    memset(d->groups, 0, cap * sizeof(hash_group));
    *mask = cap - 1;
    return 0;
}

/* How many keys so far have hash h, this one included. */
TERSA_INLINE size_t groups_add(dec_ctx *d, size_t mask, Py_hash_t h) {
    size_t i = group_slot(h, mask);
    while (d->groups[i].count && d->groups[i].hash != h) i = (i + 1) & mask;
    d->groups[i].hash = h;
    return ++d->groups[i].count;
}

/* A dict of the generic map's pairs, or NULL without an exception when a
 * dict cannot hold them: keys that Python considers equal (1, 1.0 and True)
 * or cannot hash, or more than KEY_GROUP_MAX keys of one hash value. */
static PyObject *dict_of_items(dec_ctx *d, PyObject *const *items, size_t npairs) {
    size_t mask = 0;
    int count = npairs > KEY_GROUP_MAX; /* fewer keys cannot exceed it */
    if (count && groups_reset(d, npairs, &mask) < 0) return NULL;
    PyObject *dict = _PyDict_NewPresized((Py_ssize_t)npairs); /* pairs read, not claimed */
    if (!dict) return NULL;
    for (size_t j = 0; j < npairs; j++) {
        PyObject *k = items[2 * j];
        Py_hash_t h = PyObject_Hash(k);
        if (h == -1) goto fail;
        if (count && groups_add(d, mask, h) > KEY_GROUP_MAX) goto cannot;
        if (_PyDict_SetItem_KnownHash(dict, k, items[2 * j + 1], h) < 0) goto fail;
    }
    if ((size_t)PyDict_GET_SIZE(dict) == npairs) return dict;
cannot:
    Py_DECREF(dict);
    return NULL;
fail:
    Py_DECREF(dict);
    if (PyErr_ExceptionMatches(PyExc_TypeError)) PyErr_Clear();
    return NULL;
}
