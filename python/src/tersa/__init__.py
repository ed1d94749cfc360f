"""Tersa: a compact, fast, schemaless binary serialization format.

    >>> import tersa
    >>> data = tersa.dumps({"id": 1, "tags": ["a", "b"]})
    >>> tersa.loads(data)
    {'id': 1, 'tags': ['a', 'b']}

See the package README for the type mapping, options and error codes.
"""

from ._types import (
    ZONE_FLOATING,
    ZONE_OFFSET,
    ZONE_UTC,
    DecodeError,
    EncodeError,
    Ext,
    Map,
    Symbol,
    Timestamp,
)
from ._tersa import (
    CORE_VERSION,
    FORMAT_VERSION,
    OPT_NAIVE_UTC,
    OPT_PASSTHROUGH_DATACLASS,
    OPT_PASSTHROUGH_DATETIME,
    OPT_PASSTHROUGH_ENUM,
    OPT_PASSTHROUGH_SUBCLASS,
    OPT_PASSTHROUGH_UUID,
    OPT_SERIALIZE_NUMPY,
    OPT_SYMBOL_AS_STR,
    OPT_TIMESTAMP,
    Decoder,
    Dictionary,
    Encoder,
    dumps,
    join_stream,
    loads,
    loads_stream,
)
from .registry import DictionaryRegistry, UnknownDictionaryError
from ._extensions import register_type, unregister_type

__version__ = "0.1.0"


def dumps_stream(values, *, option=0, default=None, dictionary=None, max_depth=None, sync_frames=0,
                 sync_bytes=0) -> bytes:
    """Serialize an iterable of values as one Tersa stream (SPEC 2.3).

    The first frame is a sync frame; with sync_frames=N so is every N-th frame,
    with sync_bytes=B a frame once B bytes of frames followed the last sync
    frame's start: places where a consumer can join the stream.
    """
    enc = Encoder(option=option, default=default, dictionary=dictionary, max_depth=max_depth,
                  sync_frames=sync_frames, sync_bytes=sync_bytes)
    parts = [enc.write(v) for v in values]
    return b"".join(parts) if parts else enc.header()


__all__ = [
    "CORE_VERSION",
    "FORMAT_VERSION",
    "OPT_NAIVE_UTC",
    "OPT_PASSTHROUGH_DATACLASS",
    "OPT_PASSTHROUGH_DATETIME",
    "OPT_PASSTHROUGH_ENUM",
    "OPT_PASSTHROUGH_SUBCLASS",
    "OPT_PASSTHROUGH_UUID",
    "OPT_SERIALIZE_NUMPY",
    "OPT_SYMBOL_AS_STR",
    "OPT_TIMESTAMP",
    "ZONE_FLOATING",
    "ZONE_OFFSET",
    "ZONE_UTC",
    "DecodeError",
    "Decoder",
    "Dictionary",
    "EncodeError",
    "Encoder",
    "Ext",
    "Map",
    "Symbol",
    "Timestamp",
    "dumps",
    "dumps_stream",
    "join_stream",
    "loads",
    "loads_stream",
    "register_type",
    "unregister_type",
    "__version__",
]
