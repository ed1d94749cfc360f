"""Tersa as a kombu serializer (and so for Celery, which serializes through kombu).

    import tersa.kombu
    tersa.kombu.register()                      # once per process, before publishing
    producer.publish(body, serializer="tersa")
    Consumer(channel, queues, accept=["tersa"])  # or accept=[tersa.kombu.CONTENT_TYPE]

Messages carry the content type ``application/vnd.tersa`` with the content
encoding ``binary``: kombu hands the body to ``loads`` as bytes, untouched.
Importing this module does not import kombu; ``register`` does.
"""

from __future__ import annotations

from . import dumps, loads

NAME = "tersa"
CONTENT_TYPE = "application/vnd.tersa"
CONTENT_ENCODING = "binary"


def register(name: str = NAME) -> None:
    """Register the serializer with kombu under ``name`` (default ``"tersa"``).

    Registering again replaces the entry, so calling it twice is harmless.
    """
    from kombu import serialization

    serialization.register(name, dumps, loads, content_type=CONTENT_TYPE, content_encoding=CONTENT_ENCODING)
