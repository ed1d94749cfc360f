"""Map-definition templates: the first map of a buffer or sync frame, when
its key objects were seen before, is written by replaying a recording of its
definition. Every buffer must still be the reference encoder's bytes: single
messages, messages under a dictionary and without one in turn, streams with
sync frames, keys of every form (prefixes, timestamp forms, symbols, long
keys), checked maps (tersa.Map) and dicts whose keys are equal but other
objects. The cache keeps its key objects alive while it holds them and lets
them go when it replaces them."""

from __future__ import annotations

import gc
import random
import sys

import tersa
from conftest import SPEC

sys.path.insert(0, str(SPEC / "tools"))
import tersaref as P  # noqa: E402

from test_property import to_ref  # noqa: E402

# Key objects shared by every message, as a program's literal keys are.
SYM = tersa.Symbol("kind")
KEYSETS = [
    ("dev", "ts", "t", "h", "bat"),
    ("user_id", "user_name", "user_email", "u", ""),
    ("2024-05-01T10:00:00Z", "2024-05-01", "when", "1999-12-31T23:59:59.5+01:00"),
    ("id", SYM, "name", "name_long_enough_to_be_a_long_key_" * 3),
    ("e", "E", "s", "t", "p", "q", "m"),
    ("alpha", "beta"),
]

STRINGS = ["alpha", "user_name", "2024-05-01T10:00:07Z", "dev-1", "zz", "beta_x"]


def message(rng: random.Random, keys) -> dict:
    values = []
    for i, k in enumerate(keys):
        r = rng.randrange(6)
        if r == 0:
            values.append(str(k))  # the key's text again: a reference to its entry
        elif r == 1:
            values.append(str(k) + "_x")  # a prefix of the key register
        elif r == 2:
            values.append(rng.choice(STRINGS))
        elif r == 3:
            values.append(rng.randrange(-5, 10**6) / (1 if i % 2 else 100))
        elif r == 4:
            # A nested map of new keys sharing prefixes with the last key.
            values.append({str(keys[-1]) + "_more": True, "user_id": i})
        else:
            values.append(None)
    return dict(zip(keys, values))


def messages(n: int, seed: int) -> list:
    rng = random.Random(seed)
    return [message(rng, KEYSETS[rng.randrange(len(KEYSETS))]) for _ in range(n)]


def ref_dictionary() -> tuple[tersa.Dictionary, P.Dictionary]:
    strings = ["alpha", "user_name", "dev-1"]
    shapes = [["alpha", "beta"], ["id", "name"]]
    return tersa.Dictionary(strings, shapes), P.Dictionary(strings, shapes)


def test_messages_repeat_the_reference_bytes():
    msgs = messages(600, 1)
    for rnd in range(3):  # recorded on the second miss, replayed from then on
        for m in msgs:
            assert tersa.dumps(m) == P.encode(to_ref(m))


def test_messages_with_and_without_a_dictionary():
    d, pd = ref_dictionary()
    other, pother = tersa.Dictionary(["beta", "user_id"]), P.Dictionary(["beta", "user_id"], [])
    msgs = messages(400, 2)
    for rnd in range(3):
        for i, m in enumerate(msgs):
            which = (i + rnd) % 3
            if which == 0:
                assert tersa.dumps(m) == P.encode(to_ref(m))
            elif which == 1:
                assert tersa.dumps(m, dictionary=d) == P.encode(to_ref(m), pd)
            else:
                assert tersa.dumps(m, dictionary=other) == P.encode(to_ref(m), pother)


def test_first_map_after_other_items():
    """Templates apply only where the tables are as the buffer began."""
    msgs = messages(200, 3)
    for rnd in range(3):
        for m in msgs:
            for v in (["user_name", m], [m, m], {"wrap": m}, [1.5, m], tersa.Map([(1, m)])):
                assert tersa.dumps(v) == P.encode(to_ref(v))
            assert tersa.dumps(m) == P.encode(to_ref(m))


def test_streams_with_sync_frames():
    d, pd = ref_dictionary()
    msgs = messages(300, 4)
    for sync in (None, 1, 2, 7):
        for dictionary, pdict in ((None, None), (d, pd)):
            for rnd in range(2):
                got = tersa.dumps_stream(msgs, sync_frames=sync, dictionary=dictionary)
                assert got == P.encode_stream(to_ref(msgs), pdict, sync_frames=sync or 0)
                # Interleaved with single messages, which share the cache.
                assert tersa.dumps(msgs[rnd]) == P.encode(to_ref(msgs[rnd]))


def test_encoder_object_frames():
    msgs = messages(200, 5)
    enc = tersa.Encoder(sync_frames=3)
    se = P.StreamEncoder(None, sync_frames=3)
    out, want = bytearray(enc.header()), bytearray(se.header())
    for i, m in enumerate(msgs * 2):
        if i % 50 == 17:
            enc.sync()
            se.sync()
        out += enc.write(m)
        want += se.frame(to_ref(m))
    assert bytes(out) == bytes(want)


def test_equal_keys_of_other_objects_and_mutated_dicts():
    msgs = messages(100, 6)
    for rnd in range(3):
        for m in msgs:
            # Equal keys, other objects (not interned): the ordinary path.
            copy = {"".join(list(k)) if type(k) is str else k: v for k, v in m.items()}
            assert tersa.dumps(copy) == tersa.dumps(m) == P.encode(to_ref(m))
    # One dict object changed between buffers: its keys are what count.
    d = dict(zip(KEYSETS[0], range(5)))
    for i in range(20):
        assert tersa.dumps(d) == P.encode(to_ref(d))
        if i % 3 == 0:
            d.pop(next(iter(d)))
            d[KEYSETS[1][i % 5]] = i
        elif i % 3 == 1:
            d = {k: v for k, v in reversed(list(d.items()))}


def test_checked_maps():
    """tersa.Map keys are checked; a template recorded unchecked is not used for them."""
    keys = KEYSETS[1]
    for rnd in range(4):
        m = dict(zip(keys, range(5)))
        mm = tersa.Map(list(zip(keys, range(5))))
        assert tersa.dumps(m) == tersa.dumps(mm) == P.encode(to_ref(m))
    bad = tersa.Map([(keys[0], 1), (keys[0], 2)])
    for rnd in range(3):
        try:
            tersa.dumps(bad)
        except tersa.EncodeError:
            pass
        else:
            raise AssertionError("a repeated key must fail")


def test_cache_holds_and_releases_its_keys():
    key_a, key_b = "".join(["templ", "ate_a"]), "".join(["templ", "ate_b"])
    msg = {key_a: 1, key_b: 2}
    before = sys.getrefcount(key_a)
    for _ in range(3):
        tersa.dumps(msg)
    held = sys.getrefcount(key_a)
    assert held == before + 1  # one strong reference from the cache
    # Many other shapes, each seen twice (recorded): the entry is replaced.
    # They stay alive, so that their key objects are at distinct addresses:
    # freed keys would come back at the same few addresses, whose identity
    # hashes fill the same few sets and might never reach key_a's.
    others = [{f"k{i}": 1, f"j{i}": 2} for i in range(3000)]
    for other in others:
        tersa.dumps(other)
        tersa.dumps(other)
    gc.collect()
    assert sys.getrefcount(key_a) == before
    assert tersa.dumps(msg) == P.encode(to_ref(msg))


def test_distinct_shapes_keep_the_bytes():
    rng = random.Random(7)
    for i in range(2000):
        keys = [f"f{rng.randrange(40)}" for _ in range(rng.randrange(1, 5))]
        m = {k: rng.randrange(100) for k in keys}
        assert tersa.dumps(m) == P.encode(to_ref(m))


def test_string_and_symbol_keys_of_one_text():
    """A string key and a symbol key of the same text share one string-table
    entry: the template must name its own copy of it, not the writer's."""
    sym = tersa.Symbol("name")
    for keys in (("name", sym, "id"), (sym, "name", "id")):
        for rnd in range(4):
            m = tersa.Map([(k, f"name_{rnd}_{i}") for i, k in enumerate(keys)])
            assert tersa.dumps(m) == P.encode(to_ref(m))
            # Other buffers in between reuse the writer's memory.
            assert tersa.dumps({f"other_{rnd}": "x" * 40}) == P.encode({f"other_{rnd}": "x" * 40})
