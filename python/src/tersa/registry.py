"""Dictionaries distributed by id through a shared store, the way a schema
registry works: a producer publishes its dictionary once, and a consumer that
meets a buffer naming an id it does not hold fetches it by that id, then
decodes.

    >>> registry = DictionaryRegistry(redis.Redis())   # any object with get/set
    >>> registry.publish(dictionary)                    # producer
    >>> data = tersa.dumps(record, dictionary=dictionary)
    >>> registry.loads(data)                            # consumer: fetches once

The store is injected (anything with ``get(key)`` and ``set(key, value)`` on
bytes: a redis-py client, a dict wrapper around a KV bucket), so the package
depends on no client. A dictionary's id is the hash of its serialization
(SPEC 8), so an entry never changes meaning: fetched dictionaries are cached
for the registry's life, and an entry whose id differs from the key it was
stored under is refused. Misses are not cached: the producer may publish after
the consumer looked.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Protocol, Tuple, Union

# From the package, which binds these before it imports this module (the
# extension's names are typed by the package's stub).
from . import DecodeError, Dictionary, join_stream, loads, loads_stream

__all__ = ["DictionaryRegistry", "DictionaryStore", "UnknownDictionaryError"]

_Buffer = Union[bytes, bytearray, memoryview]

PREFIX = "tersa:dictionary:"
_MAGIC = b"\xc1\x70"
_FLAG_DICT = 0x01
_SYNC = 0xFD


class DictionaryStore(Protocol):
    """What the registry needs of a store: bytes (or None) by key, and set."""

    def get(self, key: str, /) -> Any: ...

    def set(self, key: str, value: bytes, /) -> Any: ...


class UnknownDictionaryError(DecodeError):
    """A buffer names a dictionary that neither the registry's cache nor its
    store holds, or the store's entry is not that dictionary. A DecodeError
    with code "unknown_dictionary" at offset 3, like the decoder's own, plus
    ``dictionary_id`` (int) and ``key`` (the store key looked up)."""

    def __init__(self, message: str, dictionary_id: int = 0, key: str = ""):
        super().__init__(message, "unknown_dictionary", 3)
        self.dictionary_id = dictionary_id
        self.key = key

    def __reduce__(self) -> Any:
        return (type(self), (self.args[0] if self.args else "", self.dictionary_id, self.key))


class DictionaryRegistry:
    """Publishes dictionaries under their ids and fetches them on first use."""

    def __init__(self, store: DictionaryStore, prefix: str = PREFIX):
        if not (callable(getattr(store, "get", None)) and callable(getattr(store, "set", None))):
            raise TypeError("store must have get(key) and set(key, value)")
        self.store = store
        self.prefix = prefix
        self._cache: Dict[int, Dictionary] = {}
        self._by_header: Dict[bytes, Dictionary] = {}
        self._lock = threading.Lock()

    def key(self, dictionary_id: int) -> str:
        """The store key of an id: the prefix and 16 lowercase hex digits."""
        return f"{self.prefix}{dictionary_id:016x}"

    def publish(self, dictionary: Dictionary) -> int:
        """Stores the dictionary under its id (and caches it); returns the id."""
        self.store.set(self.key(dictionary.id), dictionary.serialize())
        with self._lock:
            self._cache[dictionary.id] = dictionary
        return dictionary.id

    def cached(self, dictionary_id: int) -> bool:
        with self._lock:
            return dictionary_id in self._cache

    def fetch(self, dictionary_id: int) -> Dictionary:
        """The dictionary with this id, from the cache or else the store."""
        hit = self._cache.get(dictionary_id)  # a dict read is atomic: only inserts take the lock
        if hit is not None:
            return hit
        key = self.key(dictionary_id)
        data = self.store.get(key)
        if data is None:
            raise UnknownDictionaryError(f"dictionary 0x{dictionary_id:016x} is not in the store (key {key})",
                                         dictionary_id, key)
        if isinstance(data, str):  # a client that decodes responses as text cannot carry dictionaries
            raise UnknownDictionaryError(f"the store returned text for {key}: give the registry a client that returns bytes",
                                         dictionary_id, key)
        try:
            dictionary = Dictionary.parse(bytes(data))
        except (ValueError, TypeError) as e:
            raise UnknownDictionaryError(f"the store's entry {key} is not a serialized dictionary ({e})",
                                         dictionary_id, key) from e
        if dictionary.id != dictionary_id:
            raise UnknownDictionaryError(
                f"the store's entry {key} holds dictionary 0x{dictionary.id:016x}, not 0x{dictionary_id:016x}",
                dictionary_id, key)
        with self._lock:
            return self._cache.setdefault(dictionary_id, dictionary)

    def dictionary_for(self, data: _Buffer, *, join: bool = False) -> Optional[Dictionary]:
        """The dictionary a buffer (join: frames from a frame boundary) names,
        fetched if needed; None when it names none."""
        did = dictionary_id(data, join=join)
        return None if did is None else self.fetch(did)

    def loads(self, data: _Buffer, **options: Any) -> Any:
        """tersa.loads with the dictionary the buffer names."""
        # A header naming a dictionary is 11 bytes that determine it: known
        # headers skip parsing (a consumer calls this for every message).
        head = data[:11] if isinstance(data, bytes) else bytes(data[:11])
        d = self._by_header.get(head)
        if d is None:
            did = dictionary_id(data)
            if did is None:
                return loads(data, **options)
            d = self.fetch(did)
            self._by_header[head] = d
        return loads(data, dictionaries=d, **options) if options else loads(data, dictionaries=d)

    def loads_stream(self, data: _Buffer, *, join: bool = False, **options: Any) -> List[Any]:
        """tersa.loads_stream with the dictionary the stream names (join=True:
        in its first sync frame)."""
        d = self.dictionary_for(data, join=join)
        if d is None:
            return loads_stream(data, join=join, **options)
        return loads_stream(data, join=join, **options, dictionaries=d)

    def join_stream(self, data: _Buffer, **options: Any) -> Tuple[Optional[int], List[Any]]:
        """tersa.join_stream with the dictionary of the first sync frame."""
        d = self.dictionary_for(data, join=True)
        return join_stream(data, **options) if d is None else join_stream(data, **options, dictionaries=d)


def dictionary_id(data: _Buffer, *, join: bool = False) -> Optional[int]:
    """The dictionary id a buffer's header names (SPEC 2.1), or with join=True
    the one in the first sync frame of frames taken from a frame boundary
    (SPEC 2.3); None when it names none or the bytes are too malformed to say,
    in which case decoding reports what is wrong with them."""
    b = data if not isinstance(data, memoryview) or data.format == "B" else data.cast("B")
    if not join:
        # inline: a consumer calls this for every message
        if len(b) >= 11 and b[0] == 0xC1 and b[1] == 0x70 and b[2] & _FLAG_DICT:
            return int.from_bytes(b[3:11], "little")
        return None
    pos = 0
    while pos < len(b):
        v = _varint(b, pos)
        if v is None or v[0] == 0:
            return None
        n, length = v
        pos += length
        if pos + n > len(b):
            return None
        if b[pos] == _SYNC:
            return _header_id(b, pos + 1)
        pos += n
    return None


def _header_id(b: _Buffer, vf_at: int) -> Optional[int]:
    if len(b) < vf_at + 9 or not b[vf_at] & _FLAG_DICT:
        return None
    return int.from_bytes(b[vf_at + 1:vf_at + 9], "little")


def _varint(b: _Buffer, pos: int) -> Optional[Tuple[int, int]]:
    """A prefix varint (SPEC 3.1) at pos: (value, length), or None if cut short."""
    first = b[pos]
    length = 9 if first == 0 else (first & -first).bit_length()
    if pos + length > len(b):
        return None
    if length == 9:
        return int.from_bytes(b[pos + 1:pos + 9], "little"), 9
    return int.from_bytes(b[pos:pos + length], "little") >> length, length
