"""tersa.DictionaryRegistry against a real redis-server (redis-py as the
client): publish by id, fetch on first use, typed errors for ids the store
does not have. The server is started on a free port by
support/redis_server.py; a missing redis-server fails the tests."""

from __future__ import annotations

import pickle

import pytest
import redis

import tersa
from support.redis_server import redis_server
from tersa.registry import dictionary_id

STOCK = tersa.Dictionary(strings=["AAPL", "MSFT", "GOOG"], shapes=[["symbol", "price", "volume"], ["0", "1", "2"]])
RECORD = {"symbol": "MSFT", "price": 411.22, "volume": 1234567}


@pytest.fixture(scope="module")
def server():
    with redis_server() as port:
        yield port


class CountingStore:
    """Counts the store's reads, to see what the cache saves."""

    def __init__(self, client):
        self.client = client
        self.gets = 0

    def get(self, key):
        self.gets += 1
        return self.client.get(key)

    def set(self, key, value):
        return self.client.set(key, value)


@pytest.fixture()
def client(server, request):
    c = redis.Redis(host="127.0.0.1", port=server)
    c.flushdb()
    yield c
    c.close()


@pytest.fixture()
def prefix(request):
    return f"test:{request.node.name}:"


def consumer(server, prefix):
    store = CountingStore(redis.Redis(host="127.0.0.1", port=server))
    return tersa.DictionaryRegistry(store, prefix=prefix), store


def test_consumer_fetches_an_unknown_id_once(server, client, prefix):
    producer = tersa.DictionaryRegistry(client, prefix=prefix)
    assert producer.publish(STOCK) == STOCK.id
    assert client.get(producer.key(STOCK.id)) == STOCK.serialize()
    data = tersa.dumps(RECORD, dictionary=STOCK)
    reg, store = consumer(server, prefix)
    assert not reg.cached(STOCK.id)
    for _ in range(3):
        assert reg.loads(data) == RECORD
    assert store.gets == 1
    assert reg.cached(STOCK.id)
    assert reg.fetch(STOCK.id) == STOCK


def test_single_record_with_the_dictionary_fits_in_msgpack_int_keyed_size(server, client, prefix):
    tersa.DictionaryRegistry(client, prefix=prefix).publish(STOCK)
    record = {"0": "AAPL", "1": 150.25, "2": 1234567}
    data = tersa.dumps(record, dictionary=STOCK)
    assert len(data) <= 26
    assert dictionary_id(data) == STOCK.id
    assert consumer(server, prefix)[0].loads(data) == record


def test_an_id_the_store_lacks_is_a_typed_error(server, client, prefix):
    data = tersa.dumps(RECORD, dictionary=STOCK)
    reg, _ = consumer(server, prefix)
    with pytest.raises(tersa.UnknownDictionaryError) as info:
        reg.loads(data)
    err = info.value
    assert isinstance(err, tersa.DecodeError)
    assert (err.code, err.offset, err.dictionary_id) == ("unknown_dictionary", 3, STOCK.id)
    assert err.key == f"{prefix}{STOCK.id:016x}"
    assert f"0x{STOCK.id:016x}" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert (type(again), again.code, again.dictionary_id, again.key) == (tersa.UnknownDictionaryError, err.code, err.dictionary_id, err.key)
    assert not reg.cached(STOCK.id)
    # published later: the next attempt finds it (misses are not cached)
    tersa.DictionaryRegistry(client, prefix=prefix).publish(STOCK)
    assert reg.loads(data) == RECORD


def test_an_entry_that_is_not_that_dictionary_is_refused(server, client, prefix):
    other = tersa.Dictionary(strings=["TSLA"], shapes=[["symbol", "price", "volume"]])
    reg, _ = consumer(server, prefix)
    client.set(reg.key(STOCK.id), other.serialize())
    with pytest.raises(tersa.UnknownDictionaryError, match=f"0x{other.id:016x}"):
        reg.fetch(STOCK.id)
    client.set(reg.key(STOCK.id), b"not a dictionary")
    with pytest.raises(tersa.UnknownDictionaryError, match="not a serialized dictionary"):
        reg.loads(tersa.dumps(RECORD, dictionary=STOCK))
    assert not reg.cached(STOCK.id)
    # a client that decodes responses to text cannot carry a dictionary: said so, not mis-decoded
    tersa.DictionaryRegistry(client, prefix=prefix).publish(STOCK)
    class TextStore(CountingStore):
        def get(self, key):
            return self.client.get(key).decode("latin-1")

    text = tersa.DictionaryRegistry(TextStore(client), prefix=prefix)
    with pytest.raises(tersa.UnknownDictionaryError, match="returned text"):
        text.fetch(STOCK.id)


def test_buffers_without_a_dictionary_never_touch_the_store(server, prefix):
    reg, store = consumer(server, prefix)
    assert reg.loads(tersa.dumps(RECORD)) == RECORD
    assert dictionary_id(tersa.dumps(RECORD)) is None
    with pytest.raises(tersa.DecodeError):
        reg.loads(b'{"json": 1}')
    with pytest.raises(tersa.DecodeError):
        reg.loads(b"\xc1\x70\x11\x01")  # DICT flag, id cut short
    assert store.gets == 0


def test_streams_and_joined_streams(server, client, prefix):
    tersa.DictionaryRegistry(client, prefix=prefix).publish(STOCK)
    records = [{"symbol": ["AAPL", "MSFT", "GOOG"][i % 3], "price": 100 + i / 4, "volume": i * 1000} for i in range(50)]
    enc = tersa.Encoder(dictionary=STOCK, sync_frames=10)
    stream = b"".join(enc.write(r) for r in records)
    reg, _ = consumer(server, prefix)
    assert reg.loads_stream(stream) == records
    # A late subscriber: frames from the 13th on, no header; it joins at frame 20.
    frames, pos = [], 11  # after magic, VF and id
    while pos < len(stream):
        n = stream[pos] >> 1  # one-byte length prefixes: these frames are short
        frames.append(stream[pos:pos + 1 + n])
        pos += 1 + n
    assert len(frames) == 50
    tail = b"".join(frames[13:])
    fresh, store = consumer(server, prefix)
    assert dictionary_id(tail, join=True) == STOCK.id
    assert fresh.loads_stream(tail, join=True) == records[20:]
    offset, values = fresh.join_stream(tail)
    assert (offset, values) == (sum(len(f) for f in frames[13:20]), records[20:])
    assert store.gets == 1
    assert dictionary_id(b"".join(frames[13:20]), join=True) is None


def test_the_store_must_have_get_and_set():
    with pytest.raises(TypeError):
        tersa.DictionaryRegistry(object())
