"""tersa.kombu: a producer and a consumer, each on its own connection,
exchanging Tersa messages through a real broker started on loopback.

The broker is redis-server through kombu's redis transport. The
message-queue benchmark (bench/queue) uses nats-server, but kombu has no NATS
transport; Redis is a broker kombu (and Celery) supports natively, and the
registry tests already start one (support/redis_server.py).
"""

from __future__ import annotations

import datetime

import pytest
from kombu import Connection, Consumer, Exchange, Producer, Queue
from kombu.exceptions import ContentDisallowed
from kombu.exceptions import DecodeError as KombuDecodeError

import tersa
import tersa.kombu
from support.redis_server import redis_server

# Values JSON would lose (bytes, a big int, a symbol, a timestamp, non-string keys) come back exactly.
MESSAGES = [
    {"id": 1, "symbol": "MSFT", "price": 411.22, "tags": ["a", "b"]},
    {"blob": b"\x00\xffbinary", "big": 2**100, "sym": tersa.Symbol("side"),
     "at": datetime.datetime(2025, 4, 16, 9, 23, 47, 123456, tzinfo=datetime.timezone.utc), 7: [None, True, -0.0]},
    [],
    "a string alone",
]


@pytest.fixture(scope="module")
def broker():
    tersa.kombu.register()
    with redis_server() as port:
        yield f"redis://127.0.0.1:{port}/0"


@pytest.fixture()
def queue(request):
    name = "tersa-" + request.node.name.replace("[", "-").replace("]", "")
    return Queue(name, Exchange(name, type="direct"), routing_key=name)


def publish(url, queue, bodies, **kwargs):
    with Connection(url) as conn:
        producer = Producer(conn.channel(), exchange=queue.exchange, routing_key=queue.routing_key)
        for body in bodies:
            producer.publish(body, declare=[queue], **kwargs)


def consume(url, queue, count, accept):
    """The first `count` messages on the queue, in order, as (body, message),
    or (exception, message) for those the consumer could not decode."""
    received = []

    def on_message(body, message):
        received.append((body, message))
        message.ack()

    def on_decode_error(message, exc):
        received.append((exc, message))
        message.ack()

    with Connection(url) as conn:
        with Consumer(conn.channel(), queues=[queue], callbacks=[on_message], accept=accept,
                      on_decode_error=on_decode_error):
            while len(received) < count:
                conn.drain_events(timeout=10)
    return received


def test_registered_with_kombu():
    from kombu.serialization import registry

    tersa.kombu.register()
    assert registry.type_to_name[tersa.kombu.CONTENT_TYPE] == "tersa"
    assert registry.name_to_type["tersa"] == "application/vnd.tersa"


def test_producer_to_consumer(broker, queue):
    publish(broker, queue, MESSAGES, serializer="tersa")
    received = consume(broker, queue, len(MESSAGES), accept=["tersa"])
    assert [body for body, _ in received] == MESSAGES
    for (body, message), sent in zip(received, MESSAGES):
        assert message.content_type == "application/vnd.tersa"
        assert message.content_encoding == "binary"
        # The bytes on the wire are the Tersa encoding itself.
        assert message.body == tersa.dumps(sent)
    assert isinstance(received[1][0]["sym"], tersa.Symbol)


def test_accept_by_content_type(broker, queue):
    publish(broker, queue, [{"n": 1}], serializer="tersa")
    [(body, _)] = consume(broker, queue, 1, accept=["application/vnd.tersa"])
    assert body == {"n": 1}


def test_consumer_that_does_not_accept_tersa_refuses_it(broker, queue):
    publish(broker, queue, [{"n": 1}], serializer="tersa")
    [(error, message)] = consume(broker, queue, 1, accept=["json"])
    assert isinstance(error, ContentDisallowed)
    assert message.content_type == "application/vnd.tersa"


def test_corrupt_body_is_a_decode_error(broker, queue):
    """A body of the media type that is not Tersa reaches the consumer as kombu's
    DecodeError wrapping tersa's (with its code)."""
    publish(broker, queue, [b"\x00not tersa"], content_type=tersa.kombu.CONTENT_TYPE,
            content_encoding=tersa.kombu.CONTENT_ENCODING)
    [(error, _)] = consume(broker, queue, 1, accept=["tersa"])
    assert isinstance(error, KombuDecodeError)
    [cause] = error.args
    assert isinstance(cause, tersa.DecodeError) and (cause.code, cause.offset) == ("bad_magic", 0)
