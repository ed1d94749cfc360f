"""Application extension types: tersa.register_type and unregister_type.

The two dicts are shared with the C extension, which reads them while
encoding (an instance of a registered class, exact type) and decoding (an
EXT item of a registered type); only this module changes them.
"""

import datetime
import importlib
import sys
from typing import Any, Callable, Dict, Tuple

from ._types import Ext, Map, Symbol, Timestamp

_BY_CLASS: Dict[type, Tuple[int, Callable[[Any], Any]]] = {}
_BY_TYPE: Dict[int, Tuple[Callable[[bytes], Any], type]] = {}
# The C module has no stub of its own (its public names are in __init__.pyi).
importlib.import_module("tersa._tersa")._set_extension_registry(_BY_CLASS, _BY_TYPE)

# Written by Tersa itself (data model or well-known types, SPEC 5.8): a
# registration would never be consulted, or would change their encoding.
# decimal and uuid are looked up only if loaded (a class of theirs cannot exist
# otherwise): importing tersa imports neither.
_OWN = (type(None), bool, int, float, str, bytes, bytearray, memoryview, list, tuple, dict, Symbol, Map, Timestamp,
        Ext, datetime.datetime, datetime.date, datetime.time)
_OWN_ELSEWHERE = (("decimal", "Decimal"), ("uuid", "UUID"))


def _written_by_tersa(cls: type) -> bool:
    if cls in _OWN:
        return True
    return any(cls is getattr(sys.modules.get(module), name, None) for module, name in _OWN_ELSEWHERE)
_APP_MAX = 0xFEFF  # 0xFF00..0xFFFF are the well-known types


def register_type(type_id: int, cls: type, *, packer: Callable[[Any], Any], unpacker: Callable[[bytes], Any]) -> None:
    """Write instances of `cls` (exactly that class) as extension `type_id`
    (0..65279): `packer(obj)` returns the bytes, and decoding calls
    `unpacker(data)` with them.

    A type is one class's: registering `cls` again under its type replaces
    the packer and unpacker, but a type held by another class, or `cls` under
    another type, raises ValueError until `unregister_type`, so data written
    for one class never decodes as another's (as in Ruby and TypeScript).
    """
    if not isinstance(type_id, int) or isinstance(type_id, bool):
        raise TypeError("an extension type is an int")
    if not 0 <= type_id <= 0xFFFF:
        raise ValueError(f"extension types are 0..65535, not {type_id}")
    if type_id > _APP_MAX:
        raise ValueError(f"extension types 0xFF00..0xFFFF (65280..65535) are reserved for well-known types; "
                         f"applications use 0..65279, not {type_id}")
    if not isinstance(cls, type):
        raise TypeError(f"expected a class, got {type(cls).__name__}")
    if _written_by_tersa(cls):
        raise TypeError(f"{cls.__name__} is written by Tersa itself: it cannot be an extension type")
    if not callable(packer) or not callable(unpacker):
        raise TypeError("packer and unpacker must be callable")
    held = _BY_TYPE.get(type_id)
    if held is not None and held[1] is not cls:
        raise ValueError(f"extension type {type_id} is registered to {held[1].__name__}: "
                         f"tersa.unregister_type({type_id}) first")
    other = _BY_CLASS.get(cls)
    if other is not None and other[0] != type_id:
        raise ValueError(f"{cls.__name__} is registered as extension type {other[0]}: "
                         f"tersa.unregister_type({other[0]}) first")
    _BY_CLASS[cls] = (type_id, packer)
    _BY_TYPE[type_id] = (unpacker, cls)


def unregister_type(type_id: int) -> bool:
    """Forget extension `type_id` and its class (True if it was registered):
    its data decodes to `tersa.Ext` again and the class is no longer encodable."""
    held = _BY_TYPE.pop(type_id, None)
    if held is None:
        return False
    _BY_CLASS.pop(held[1], None)
    return True
