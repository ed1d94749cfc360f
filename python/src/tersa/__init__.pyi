import datetime
from typing import Any, Callable, Iterable, Iterator, Sequence, Tuple, Union, final
from .registry import DictionaryRegistry as DictionaryRegistry, UnknownDictionaryError as UnknownDictionaryError

_Buffer = Union[bytes, bytearray, memoryview]
_Dictionaries = Union["Dictionary", Sequence["Dictionary"], None]

__all__ = [
    "CORE_VERSION", "FORMAT_VERSION", "OPT_NAIVE_UTC", "OPT_PASSTHROUGH_DATACLASS", "OPT_PASSTHROUGH_DATETIME",
    "OPT_PASSTHROUGH_ENUM", "OPT_PASSTHROUGH_SUBCLASS", "OPT_PASSTHROUGH_UUID", "OPT_SERIALIZE_NUMPY", "OPT_SYMBOL_AS_STR",
    "OPT_TIMESTAMP",
    "ZONE_FLOATING", "ZONE_OFFSET", "ZONE_UTC", "DecodeError", "Decoder", "Dictionary", "EncodeError", "Encoder",
    "Ext", "Map", "Symbol", "Timestamp", "dumps", "dumps_stream", "join_stream", "loads", "loads_stream", "register_type", "unregister_type", "__version__",
]

__version__: str
CORE_VERSION: str
FORMAT_VERSION: int

OPT_NAIVE_UTC: int
OPT_PASSTHROUGH_DATETIME: int
OPT_PASSTHROUGH_SUBCLASS: int
OPT_PASSTHROUGH_DATACLASS: int
OPT_PASSTHROUGH_ENUM: int
OPT_PASSTHROUGH_UUID: int
OPT_SERIALIZE_NUMPY: int
OPT_TIMESTAMP: int
OPT_SYMBOL_AS_STR: int

ZONE_UTC: int
ZONE_OFFSET: int
ZONE_FLOATING: int

class DecodeError(ValueError):
    code: str
    offset: int
    def __init__(self, message: str, code: str = ..., offset: int = ...) -> None: ...

class EncodeError(TypeError):
    path: str
    def __init__(self, message: str, path: str = ...) -> None: ...

class Symbol(str): ...

class Ext:
    @property
    def type(self) -> int: ...
    @property
    def data(self) -> bytes: ...
    def __init__(self, type: int, data: bytes) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Timestamp:
    @property
    def seconds(self) -> int: ...
    @property
    def nanos(self) -> int: ...
    @property
    def zone(self) -> int: ...
    @property
    def offset(self) -> int: ...
    def __init__(self, seconds: int, nanos: int = ..., zone: int = ..., offset: int = ...) -> None: ...
    @property
    def tzinfo(self) -> datetime.tzinfo | None: ...
    def isoformat(self) -> str: ...
    def to_datetime(self) -> datetime.datetime: ...
    @classmethod
    def from_datetime(cls, value: datetime.datetime, nanos: int | None = ...) -> Timestamp: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Map:
    @property
    def pairs(self) -> Tuple[Tuple[Any, Any], ...]: ...
    def __init__(self, pairs: Iterable[Tuple[Any, Any]] | dict[Any, Any] = ...) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Tuple[Any, Any]]: ...
    def keys(self) -> list[Any]: ...
    def values(self) -> list[Any]: ...
    def items(self) -> list[Tuple[Any, Any]]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Dictionary:
    def __new__(cls, strings: Iterable[str] | None = ..., shapes: Iterable[Iterable[str]] | None = ...) -> Dictionary: ...
    @property
    def id(self) -> int: ...
    @property
    def strings(self) -> Tuple[str, ...]: ...
    @property
    def shapes(self) -> Tuple[Tuple[str, ...], ...]: ...
    def serialize(self) -> bytes: ...
    @classmethod
    def parse(cls, data: _Buffer, /) -> Dictionary: ...
    @classmethod
    def build(
        cls,
        samples: Iterable[Any],
        *,
        max_strings: int = ...,
        max_shapes: int = ...,
        min_count: int | None = ...,
    ) -> Dictionary: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def dumps(
    obj: Any,
    /,
    *,
    option: int | None = ...,
    default: Callable[[Any], Any] | None = ...,
    dictionary: Dictionary | None = ...,
    max_depth: int | None = ...,
) -> bytes: ...
def loads(
    data: _Buffer,
    /,
    *,
    option: int | None = ...,
    dictionaries: _Dictionaries = ...,
    max_depth: int | None = ...,
) -> Any: ...
def loads_stream(
    data: _Buffer,
    /,
    *,
    option: int | None = ...,
    dictionaries: _Dictionaries = ...,
    max_depth: int | None = ...,
    join: bool = ...,
) -> list[Any]: ...
def join_stream(
    data: _Buffer,
    /,
    *,
    option: int | None = ...,
    dictionaries: _Dictionaries = ...,
    max_depth: int | None = ...,
) -> Tuple[int | None, list[Any]]: ...
def register_type(
    type_id: int,
    cls: type,
    *,
    packer: Callable[[Any], bytes | bytearray | memoryview],
    unpacker: Callable[[bytes], Any],
) -> None: ...
def unregister_type(type_id: int) -> bool: ...
def dumps_stream(
    values: Iterable[Any],
    *,
    option: int | None = ...,
    default: Callable[[Any], Any] | None = ...,
    dictionary: Dictionary | None = ...,
    max_depth: int | None = ...,
    sync_frames: int | None = ...,
    sync_bytes: int | None = ...,
) -> bytes: ...

@final
class Encoder:
    def __new__(
        cls,
        *,
        output: Any = ...,
        option: int | None = ...,
        default: Callable[[Any], Any] | None = ...,
        dictionary: Dictionary | None = ...,
        max_depth: int | None = ...,
        sync_frames: int | None = ...,
        sync_bytes: int | None = ...,
    ) -> Encoder: ...
    def write(self, obj: Any, /) -> bytes: ...
    def header(self) -> bytes: ...
    def sync(self) -> None: ...

@final
class Decoder:
    def __new__(
        cls,
        *,
        option: int | None = ...,
        dictionaries: _Dictionaries = ...,
        max_depth: int | None = ...,
        join: bool = ...,
    ) -> Decoder: ...
    def feed(self, data: _Buffer, /) -> None: ...
    def close(self) -> None: ...
    @property
    def pending(self) -> int: ...
    @property
    def joined_at(self) -> int | None: ...
    def __iter__(self) -> Decoder: ...
    def __next__(self) -> Any: ...
