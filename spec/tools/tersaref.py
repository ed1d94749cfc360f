"""Tersa v1 reference codec.

Written for exactness and readability, not speed: it is the executable companion
of spec/SPEC.md and the generator of spec/vectors. When this file and the SPEC
disagree, the SPEC is right and this file has a bug.

This module holds the state, the encoder and the decoder (SPEC 4, 5, 7);
tersaref_model.py the data model, tag constants, errors, primitive fields,
timestamp strings and well-known types, tersaref_diag.py the diagnostic
notation and the vector files' extended JSON. Import this module: it
re-exports both.

Data model in Python:
    None, bool, int (any size), float, str, bytes (binary), list (array),
    dict (map with str/Symbol keys, insertion order) or Map (any keys),
    Symbol, Timestamp, Ext; the well-known extension types (SPEC 5.8) are
    decimal.Decimal, datetime.date (not datetime), uuid.UUID and naive
    datetime.time.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


from tersaref_model import *  # noqa: F401,F403 (data model, constants, errors, fields, timestamps, well-known types)
from tersaref_diag import *  # noqa: F401,F403 (diagnostic notation, extended JSON)


# --------------------------------------------------------------------------
# Codec state shared by encoder and decoder (SPEC "State")
# --------------------------------------------------------------------------


class Slot:
    __slots__ = ("str", "int", "dec", "bin")

    def __init__(self):
        self.str = None   # bytes of the last string item in this slot
        self.int = None   # last integer item in int64 range
        self.dec = None   # (m, e) of the last decimal float item
        self.bin = 0      # encoders only: binary floats since the last decimal (SPEC 4.3)


class Shape:
    __slots__ = ("keys", "slots")

    def __init__(self, keys):
        self.keys = keys  # tuple of (is_symbol, bytes)
        self.slots = [Slot() for _ in keys]


@dataclass
class Dictionary:
    """Pre-shared table contents. `strings`: list of str; `shapes`: list of
    lists of keys (str or Symbol)."""
    strings: list
    shapes: list

    def __post_init__(self):
        encoded = [s.encode("utf-8") for s in self.strings]
        if any(len(b) < MIN_TABLE_LEN for b in encoded) or len(set(encoded)) != len(encoded):
            raise TersaError("dictionary strings must be distinct and at least 2 bytes long")
        shapes = [tuple(key_of(k) for k in keys) for keys in self.shapes]
        if len(set(shapes)) != len(shapes) or any(len(set(k)) != len(k) for k in shapes):
            raise TersaError("dictionary shapes must be distinct and free of duplicate keys")
        if len(encoded) > MAX_STRINGS or len(shapes) > MAX_SHAPES:
            raise TersaError("dictionary too large")

    @classmethod
    def generated(cls, strings: int, shapes: int) -> "Dictionary":
        """The synthetic dictionaries of the vector files ("generate")."""
        return cls([f"s{i}" for i in range(strings)], [[f"k{i}"] for i in range(shapes)])

    def encode(self) -> bytes:
        body = ["tersa-dictionary-v1", list(self.strings),
                [list(s) for s in self.shapes]]
        return encode(body, header=False)

    @property
    def id(self) -> int:
        return fnv1a64(self.encode())


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & UINT64_MAX
    return h


def key_of(k):
    if isinstance(k, Symbol):
        return (True, k.name.encode("utf-8"))
    return (False, k.encode("utf-8"))


class State:
    def __init__(self, dictionary: Dictionary | None):
        self.strings: list[bytes] = []
        self.string_index: dict[bytes, int] = {}   # encoder only: first index
        self.shapes: list[Shape] = []
        self.shape_index: dict[tuple, int] = {}     # encoder only
        self.root = Slot()
        self.key_slot = Slot()
        self.last_str: bytes | None = None
        self.last_ts = 0
        if dictionary is not None:
            for s in dictionary.strings:
                b = s.encode("utf-8")
                self.add_string(b)
            for keys in dictionary.shapes:
                self.add_shape(tuple(key_of(k) for k in keys))

    def add_string(self, b: bytes):
        if len(b) >= MIN_TABLE_LEN and len(self.strings) < MAX_STRINGS:
            self.string_index.setdefault(b, len(self.strings))
            self.strings.append(b)

    def add_shape(self, keys: tuple) -> Shape:
        shape = Shape(keys)
        if len(self.shapes) < MAX_SHAPES:
            self.shape_index.setdefault(keys, len(self.shapes))
            self.shapes.append(shape)
        return shape

    def note_string(self, slot: Slot, b: bytes):
        slot.str = b
        self.last_str = b


# --------------------------------------------------------------------------
# Encoder (canonical policy, SPEC "Canonical encoding")
# --------------------------------------------------------------------------


def common_prefix(a: bytes, b: bytes) -> int:
    n = 0
    limit = min(len(a), len(b), MAX_PREFIX)
    while n < limit and a[n] == b[n]:
        n += 1
    while n > 0 and not utf8_char_boundary(b, n):
        n -= 1
    return n


class Encoder:
    def __init__(self, dictionary: Dictionary | None = None, max_depth=DEFAULT_MAX_DEPTH):
        self.st = State(dictionary)
        self.dictionary = dictionary
        self.max_depth = max_depth
        self.out = bytearray()

    def header(self, flags=0):
        if self.dictionary is not None:
            flags |= FLAG_DICT
        self.out += MAGIC + bytes([(VERSION << 4) | flags])
        if self.dictionary is not None:
            self.out += self.dictionary.id.to_bytes(8, "little")

    # -- strings -----------------------------------------------------------
    def string_item(self, b: bytes, slot: Slot):
        st = self.st
        inline = (1 if len(b) < N_STR0 else 1 + varint_len(len(b) - N_STR0)) + len(b)
        i = st.string_index.get(b) if len(b) >= MIN_TABLE_LEN else None
        if i is not None:  # at most 3 bytes, never more than the inline form of 2+ bytes
            self.ref(i)
            st.note_string(slot, st.strings[i])
            return
        ts = parse_ts_string(b)
        if ts is not None:
            self.ts_string(*ts)
        else:
            best, base_flag = 0, 0
            if slot.str is not None:
                best = common_prefix(slot.str, b)
            if st.last_str is not None:
                n = common_prefix(st.last_str, b)
                if n > best:
                    best, base_flag = n, 0x80
            suffix = b[best:]
            pfx = 2 + (0 if len(suffix) < N_PFX0 else varint_len(len(suffix) - N_PFX0)) + len(suffix)
            if best > 0 and pfx < inline:
                if len(suffix) < N_PFX0:
                    self.out += bytes([PFX0 + len(suffix), base_flag | best])
                else:
                    self.out += bytes([PFX_LONG, base_flag | best]) + varint(len(suffix) - N_PFX0)
                self.out += suffix
            elif len(b) < N_STR0:
                self.out += bytes([STR0 + len(b)]) + b
            else:
                self.out += bytes([STR_LONG]) + varint(len(b) - N_STR0) + b
        st.add_string(b)
        st.note_string(slot, b)

    def ref(self, i: int):
        if i < REF8_BASE:
            self.out.append(REF0 + i)
        elif i < REF16_BASE:
            self.out += bytes([REF8, i - REF8_BASE])
        else:  # every index of the table (MAX_STRINGS == REF24_BASE)
            self.out += bytes([REF16]) + (i - REF16_BASE).to_bytes(2, "little")

    def ts_delta(self, seconds: int) -> bytes:
        d = seconds - self.st.last_ts
        self.st.last_ts = seconds
        return varint(zigzag(d))

    def ts_string(self, variant, seconds, frac, digits, offset):
        if variant == 0:
            self.out.append(TS_Z0)
        elif variant == 3:
            self.out.append(TS_Z3)
        else:
            self.out += bytes([TS_STR, variant])
        self.out += self.ts_delta(seconds)
        if digits:
            self.out += varint(frac)
        if variant & TSV_NUMERIC_OFFSET:
            self.out += varint(zigzag(offset))

    # -- numbers -----------------------------------------------------------
    def integer(self, n: int, slot: Slot):
        if SMALLINT_MIN <= n <= SMALLINT_MAX:
            self.out.append(SMALLINT0 + n - SMALLINT_MIN)
        elif INT64_MIN <= n <= UINT64_MAX:
            if n > 0:
                absolute = bytes([INT_POS]) + varint(n - (SMALLINT_MAX + 1))
            else:
                absolute = bytes([INT_NEG]) + varint((SMALLINT_MIN - 1) - n)
            enc = absolute
            if slot.int is not None and n <= INT64_MAX and INT64_MIN <= n - slot.int <= INT64_MAX:
                delta = bytes([INT_DELTA]) + varint(zigzag(n - slot.int))
                if len(delta) < len(absolute):
                    enc = delta
            self.out += enc
        else:
            mag = abs(n)
            data = mag.to_bytes((mag.bit_length() + 7) // 8, "little")
            self.out += bytes([BIGINT_POS if n > 0 else BIGINT_NEG]) + varint(len(data)) + data
        if INT64_MIN <= n <= INT64_MAX:
            slot.int = n

    def float_(self, d: float, slot: Slot):
        cands = []  # (size, order, bytes, dec)
        tested = slot.bin < BIN_TRUSTED or slot.bin == BIN_RETEST
        dec = shortest_decimal(d) if tested else None
        if dec is not None:
            m, e = dec
            if DEC_EMIN <= e <= DEC_EMAX:
                b = bytes([DEC0 + e - DEC_EMIN]) + varint(zigzag(m))
            else:
                b = bytes([DEC_X, e & 0xFF]) + varint(zigzag(m))
            cands.append((len(b), 0, b, dec))
            if slot.dec is not None and slot.dec[1] == e:
                b = bytes([DEC_DELTA]) + varint(zigzag(m - slot.dec[0]))
                cands.append((len(b), 1, b, dec))
        if is_f32_exact(d):
            cands.append((5, 2, bytes([F32]) + struct.pack("<f", d), None))
        cands.append((9, 3, bytes([F64]) + struct.pack("<d", d), None))
        _, _, b, dec = min(cands, key=lambda c: (c[0], c[1]))
        self.out += b
        if dec is not None:
            slot.dec = dec
            slot.bin = 0
        else:
            slot.bin = slot.bin + 1 if slot.bin < BIN_RETEST else BIN_TRUSTED

    # -- values ------------------------------------------------------------
    def value(self, v, slot: Slot, depth: int):
        out = self.out
        if v is None:
            out.append(NULL)
        elif v is True:
            out.append(TRUE)
        elif v is False:
            out.append(FALSE)
        elif isinstance(v, int):
            self.integer(v, slot)
        elif isinstance(v, float):
            self.float_(v, slot)
        elif isinstance(v, str):
            self.string_item(v.encode("utf-8"), slot)
        elif isinstance(v, Symbol):
            out.append(SYMBOL)
            self.string_item(v.name.encode("utf-8"), slot)
        elif isinstance(v, (bytes, bytearray)):
            out += bytes([BIN]) + varint(len(v)) + bytes(v)
        elif isinstance(v, Timestamp):
            self.timestamp(v)
        elif isinstance(v, Ext):
            if not 0 <= v.type <= MAX_APP_EXT_TYPE:
                raise EncodeError("extension type out of range (0xFF00-0xFFFF are the well-known types)")
            out += bytes([EXT]) + varint(v.type) + varint(len(v.data)) + v.data
        elif is_well_known(v):
            typ, payload = well_known_payload(v)
            out += bytes([EXT]) + varint(typ) + varint(len(payload)) + payload
        elif isinstance(v, (list, tuple)):
            if depth >= self.max_depth:
                raise EncodeError("depth exceeded")
            n = len(v)
            out += bytes([ARR0 + n]) if n < N_ARR0 else bytes([ARR_LONG]) + varint(n - N_ARR0)
            for x in v:
                self.value(x, slot, depth + 1)
        elif isinstance(v, (dict, Map)):
            if depth >= self.max_depth:
                raise EncodeError("depth exceeded")
            pairs = list(v.items()) if isinstance(v, dict) else v.pairs
            if all(isinstance(k, (str, Symbol)) for k, _ in pairs):
                self.shaped_map(pairs, depth)
                return
            out += bytes([MAP_GEN]) + varint(len(pairs))
            for k, x in pairs:
                self.value(k, slot, depth + 1)
                self.value(x, slot, depth + 1)
        else:
            raise EncodeError(f"unsupported type {type(v).__name__}")

    def shaped_map(self, pairs: list, depth: int):
        st = self.st
        keys = tuple(key_of(k) for k, _ in pairs)
        i = st.shape_index.get(keys)
        if i is not None:
            if i < SHAPE8_BASE:
                self.out.append(SHAPE0 + i)
            elif i < SHAPE16_BASE:
                self.out += bytes([SHAPE8, i - SHAPE8_BASE])
            else:
                self.out += bytes([SHAPE16]) + (i - SHAPE16_BASE).to_bytes(2, "little")
            shape = st.shapes[i]
        else:
            n = len(keys)
            self.out += bytes([MAPDEF0 + n]) if n < N_MAPDEF0 else bytes([MAPDEF_LONG]) + varint(n - N_MAPDEF0)
            for is_sym, kb in keys:
                if is_sym:
                    self.out.append(SYMBOL)
                self.string_item(kb, st.key_slot)
            shape = st.add_shape(keys)
        for slot, (_, x) in zip(shape.slots, pairs):
            self.value(x, slot, depth + 1)

    def timestamp(self, t: Timestamp):
        if not MIN_SECONDS <= t.seconds <= MAX_SECONDS or not 0 <= t.nanos <= 999_999_999:
            raise EncodeError("timestamp out of range")
        if t.zone == ZONE_OFFSET:
            if not -MAX_OFFSET <= t.offset <= MAX_OFFSET:
                raise EncodeError("offset out of range")
            if not MIN_SECONDS <= t.seconds + t.offset * 60 <= MAX_SECONDS:
                raise EncodeError("timestamp out of range")
        flags = (1 if t.nanos else 0) | (t.zone << 1)
        self.out += bytes([TIME, flags]) + self.ts_delta(t.seconds)
        if t.nanos:
            self.out += varint(t.nanos)
        if t.zone == ZONE_OFFSET:
            self.out += varint(zigzag(t.offset))

    def encode_value(self, v) -> bytes:
        start = len(self.out)
        self.value(v, self.st.root, 0)
        return bytes(self.out[start:])


def encode(v, dictionary: Dictionary | None = None, header=True) -> bytes:
    e = Encoder(dictionary)
    if header:
        e.header()
    e.encode_value(v)
    return bytes(e.out)


class StreamEncoder:
    """Frames of one stream (SPEC 2.3), with sync frames where the options ask.

    sync_frames=N: frame k (from 0) is a sync frame when k % N == 0.
    sync_bytes=B: a frame is a sync frame once at least B bytes of frames have been
    written since the start of the last sync frame. sync(): the next frame is one.
    The first frame always is.
    """

    def __init__(self, dictionary: Dictionary | None = None, sync_frames=0, sync_bytes=0):
        self.e = Encoder(dictionary)
        self.dictionary = dictionary
        self.sync_frames, self.sync_bytes = sync_frames, sync_bytes
        self.frames = 0
        self.since_sync = 0
        self.want_sync = True

    def header(self) -> bytes:
        self.e.header(FLAG_STREAM)
        h = bytes(self.e.out)
        self.e.out.clear()
        return h

    def sync(self):
        self.want_sync = True

    def frame(self, v) -> bytes:
        e = self.e
        sync = (self.want_sync
                or (self.sync_frames and self.frames % self.sync_frames == 0)
                or (self.sync_bytes and self.since_sync >= self.sync_bytes))
        e.out.clear()
        if sync:
            e.st = State(self.dictionary)
            e.header(FLAG_STREAM)
            del e.out[:2]            # the sync marker replaces the magic
            e.out[0:0] = bytes([SYNC])
        e.encode_value(v)
        body = bytes(e.out)
        e.out.clear()
        framed = varint(len(body)) + body
        self.since_sync = (0 if sync else self.since_sync) + len(framed)
        self.frames += 1
        self.want_sync = False
        return framed


def encode_stream(values, dictionary: Dictionary | None = None, sync_frames=0, sync_bytes=0,
                  sync_before=()) -> bytes:
    """sync_before: indices of values that get a sync frame on request."""
    se = StreamEncoder(dictionary, sync_frames, sync_bytes)
    out = bytearray(se.header())
    for i, v in enumerate(values):
        if i in sync_before:
            se.sync()
        out += se.frame(v)
    return bytes(out)


# --------------------------------------------------------------------------
# Decoder (SPEC "Decoding" and "Errors")
# --------------------------------------------------------------------------


def check_utf8(b: bytes, offset: int):
    try:
        b.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise DecodeError("invalid_utf8", offset, "string is not valid UTF-8")


class Decoder:
    def __init__(self, data: bytes, dictionaries=(), max_depth=DEFAULT_MAX_DEPTH):
        self.data = bytes(data)
        self.pos = 0
        self.end = len(self.data)   # reads stop here (a stream frame's end)
        self.max_depth = max_depth
        self.dictionaries = {d.id: d for d in dictionaries}
        self.flags = 0
        self.st = None

    # -- primitive readers --------------------------------------------------
    def need(self, n: int, at: int):
        if self.pos + n > self.end:
            raise DecodeError("truncated", at, "input ends inside an item")

    def byte(self, at: int) -> int:
        self.need(1, at)
        b = self.data[self.pos]
        self.pos += 1
        return b

    def fixed(self, n: int, at: int) -> bytes:
        self.need(n, at)
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def varint(self, at: int) -> int:
        first = self.byte(at)
        if first == 0:
            n = int.from_bytes(self.fixed(8, at), "little")
            if n < 1 << 56:
                raise DecodeError("invalid_varint", at, "varint is not minimal")
            return n
        length = (first & -first).bit_length()
        rest = self.fixed(length - 1, at)
        n = int.from_bytes(bytes([first]) + rest, "little") >> length
        if length > 1 and n < 1 << (7 * (length - 1)):
            raise DecodeError("invalid_varint", at, "varint is not minimal")
        return n

    def length(self, at: int, bias: int = 0) -> int:
        """A byte length or an element count: never more than what remains."""
        n = self.varint(at) + bias
        if n > self.end - self.pos:
            raise DecodeError("length_exceeds_input", at, "length exceeds the remaining input")
        return n

    # -- header ------------------------------------------------------------
    def header(self, stream: bool):
        if self.data[:2] != MAGIC[:len(self.data[:2])]:
            raise DecodeError("bad_magic", 0, "not a Tersa buffer")
        if len(self.data) < 3:
            raise DecodeError("truncated", 0, "input ends inside the header")
        self.pos = 2
        self.vf_and_dictionary(stream, 2)

    def vf_and_dictionary(self, stream: bool, at: int):
        """The VF byte at self.pos and the dictionary id it announces; sets the state."""
        vf = self.byte(at)
        if vf >> 4 != VERSION:
            raise DecodeError("unsupported_version", at, f"version {vf >> 4}")
        self.flags = vf & 0x0F
        if self.flags & ~(FLAG_DICT | FLAG_STREAM):
            raise DecodeError("bad_flags", at, "reserved header flag set")
        # The flags byte comes before the dictionary id: its defects first (SPEC 10).
        if bool(self.flags & FLAG_STREAM) != stream:
            raise DecodeError("bad_flags", at, "not a stream buffer" if stream else "stream buffer: use decode_stream")
        self.vf = vf
        self.dictionary_id = None
        dictionary = None
        if self.flags & FLAG_DICT:
            did = int.from_bytes(self.fixed(8, at + 1), "little")
            dictionary = self.dictionaries.get(did)
            if dictionary is None:
                raise DecodeError("unknown_dictionary", at + 1, f"dictionary {did:016x} not supplied")
            self.dictionary_id = did
        self.dictionary = dictionary
        self.st = State(dictionary)

    def sync_frame(self, at: int):
        """The fields after a frame's SYNC byte at `at`: they must repeat the stream's."""
        self.pos = at + 1
        vf = self.byte(at + 1)
        if vf != self.vf:
            raise DecodeError("bad_sync", at + 1, "sync frame flags differ from the stream's")
        if self.flags & FLAG_DICT:
            did = int.from_bytes(self.fixed(8, at + 2), "little")
            if did != self.dictionary_id:
                raise DecodeError("bad_sync", at + 2, "sync frame names another dictionary")
        self.st = State(self.dictionary)

    # -- items -------------------------------------------------------------
    def value(self, slot: Slot, depth: int):
        at = self.pos
        if at >= self.end:
            raise DecodeError("truncated", at, "input ends before an item")
        t = self.data[at]
        self.pos += 1
        if is_string_tag(t):
            return self.string_item(t, at, slot).decode("utf-8")
        if SHAPE0 <= t < ARR0 or t in (SHAPE8, SHAPE16, MAPDEF_LONG) or MAPDEF0 <= t < SMALLINT0:
            return self.shaped_map(t, at, depth)
        if ARR0 <= t < MAPDEF0 or t == ARR_LONG:
            self.check_depth(depth, at)
            n = t - ARR0 if t != ARR_LONG else self.length(at, N_ARR0)
            if t != ARR_LONG and n > self.end - self.pos:
                raise DecodeError("length_exceeds_input", at, "count exceeds the remaining input")
            return [self.value(slot, depth + 1) for _ in range(n)]
        if SMALLINT0 <= t < PFX0:
            n = t - SMALLINT0 + SMALLINT_MIN
            slot.int = n
            return n
        if DEC0 <= t < NULL or t in (DEC_X, DEC_DELTA):
            if t == DEC_DELTA:
                if slot.dec is None:
                    raise DecodeError("bad_reference", at, "decimal delta without a previous decimal")
                m, e = slot.dec[0] + unzigzag(self.varint(at)), slot.dec[1]
            else:
                if t == DEC_X:
                    e = self.byte(at)
                    e = e - 256 if e >= 128 else e
                    if not -22 <= e <= 22 or DEC_EMIN <= e <= DEC_EMAX:
                        raise DecodeError("invalid_value", at, "decimal exponent out of range")
                else:
                    e = t - DEC0 + DEC_EMIN
                m = unzigzag(self.varint(at))
            if abs(m) >= 1 << 53:
                raise DecodeError("invalid_value", at, "decimal mantissa out of range")
            slot.dec = (m, e)
            return decimal_to_float(m, e)
        if t == NULL:
            return None
        if t == FALSE:
            return False
        if t == TRUE:
            return True
        if t == F32:
            return widen_f32(int.from_bytes(self.fixed(4, at), "little"))
        if t == F64:
            return struct.unpack("<d", self.fixed(8, at))[0]
        if t in (INT_POS, INT_NEG, INT_DELTA):
            if t == INT_DELTA and slot.int is None:
                raise DecodeError("bad_reference", at, "integer delta without a previous integer")
            v = self.varint(at)
            if t == INT_POS:
                if v > UINT64_MAX - (SMALLINT_MAX + 1):
                    raise DecodeError("invalid_value", at, "integer out of range")
                n = v + SMALLINT_MAX + 1
            elif t == INT_NEG:
                n = SMALLINT_MIN - 1 - v
                if n < INT64_MIN:
                    raise DecodeError("invalid_value", at, "integer out of range")
            else:
                n = slot.int + unzigzag(v)
                if not INT64_MIN <= n <= INT64_MAX:
                    raise DecodeError("invalid_value", at, "integer delta overflows int64")
            if n <= INT64_MAX:
                slot.int = n
            return n
        if t in (BIGINT_POS, BIGINT_NEG):
            n = self.length(at)
            mag = int.from_bytes(self.fixed(n, at), "little")
            if n == 0 or self.data[self.pos - 1] == 0:
                raise DecodeError("invalid_value", at, "big integer magnitude not minimal")
            if (t == BIGINT_POS and mag <= UINT64_MAX) or (t == BIGINT_NEG and mag <= -INT64_MIN):
                raise DecodeError("invalid_value", at, "big integer fits a native form")
            return mag if t == BIGINT_POS else -mag
        if t == MAP_GEN:
            self.check_depth(depth, at)
            n = self.length(at)
            if 2 * n > self.end - self.pos:
                raise DecodeError("length_exceeds_input", at, "count exceeds the remaining input")
            pairs, seen = [], set()
            for _ in range(n):
                k = self.value(slot, depth + 1)
                if diag(k) in seen:
                    raise DecodeError("duplicate_key", at, "key repeated in a map")
                seen.add(diag(k))
                pairs.append((k, self.value(slot, depth + 1)))
            return self.generic_map(pairs)
        if t == BIN:
            n = self.length(at)
            return self.fixed(n, at)
        if t == EXT:
            typ = self.varint(at)
            if typ > MAX_EXT_TYPE:
                raise DecodeError("invalid_value", at, "extension type out of range")
            n = self.length(at)
            data = self.fixed(n, at)
            if typ <= MAX_APP_EXT_TYPE:
                return Ext(typ, data)
            try:
                return well_known_value(typ, data)
            except ValueError as e:
                raise DecodeError("invalid_value", at, str(e)) from None
        if t == SYMBOL:
            return Symbol(self.string_after_symbol(slot).decode("utf-8"))
        if t == TIME:
            return self.timestamp(at)
        raise DecodeError("invalid_tag", at, f"reserved tag 0x{t:02x}")

    def check_depth(self, depth: int, at: int):
        if depth >= self.max_depth:
            raise DecodeError("depth_exceeded", at, "nesting deeper than the limit")

    def string_after_symbol(self, slot: Slot) -> bytes:
        at = self.pos
        if at >= self.end:
            raise DecodeError("truncated", at, "input ends before an item")
        t = self.data[at]
        if not is_string_tag(t):
            raise DecodeError("expected_string", at, "a string item is required here")
        self.pos += 1
        return self.string_item(t, at, slot)

    def string_item(self, t: int, at: int, slot: Slot) -> bytes:
        st = self.st
        if t < STR0 or t in (REF8, REF16, REF24):
            if t < STR0:
                i = t
            elif t == REF8:
                i = REF8_BASE + self.byte(at)
            elif t == REF16:
                i = REF16_BASE + int.from_bytes(self.fixed(2, at), "little")
            else:
                i = REF24_BASE + int.from_bytes(self.fixed(3, at), "little")
            if i >= len(st.strings):
                raise DecodeError("bad_reference", at, f"string reference {i} beyond table")
            b = st.strings[i]
            st.note_string(slot, b)
            return b
        if STR0 <= t < SHAPE0 or t == STR_LONG:
            n = t - STR0 if t != STR_LONG else self.length(at, N_STR0)
            b = self.fixed(n, at)
            check_utf8(b, at)
        elif PFX0 <= t < DEC0 or t == PFX_LONG:
            lb = self.byte(at)
            base = st.last_str if lb & 0x80 else slot.str
            plen = lb & 0x7F
            if t == PFX_LONG:
                n = self.length(at, N_PFX0)
            else:
                n = t - PFX0
            if base is None or plen > len(base) or plen == 0 or not utf8_char_boundary(base, plen):
                raise DecodeError("bad_reference", at, "prefix does not fit its base string")
            suffix = self.fixed(n, at)
            b = base[:plen] + suffix
            check_utf8(b, at)
        else:
            b = self.ts_string(t, at)
        st.add_string(b)
        st.note_string(slot, b)
        return b

    def ts_seconds(self, at: int) -> int:
        s = self.st.last_ts + unzigzag(self.varint(at))
        if not MIN_SECONDS <= s <= MAX_SECONDS:
            raise DecodeError("invalid_value", at, "timestamp out of range")
        self.st.last_ts = s
        return s

    def ts_string(self, t: int, at: int) -> bytes:
        if t == TS_Z0:
            variant = 0
        elif t == TS_Z3:
            variant = 3
        else:
            variant = self.byte(at)
            if variant & 0x80 or (variant & 0x0F) > 9 or variant in (0, 3) \
                    or (variant & TSV_DATE_ONLY and variant != TSV_DATE_ONLY):
                raise DecodeError("invalid_value", at, "invalid timestamp-string variant")
        seconds = self.ts_seconds(at)
        digits = variant & 0x0F
        frac = self.varint(at) if digits else 0
        if frac >= 10 ** digits and digits:
            raise DecodeError("invalid_value", at, "fraction has too many digits")
        offset = 0
        if variant & TSV_NUMERIC_OFFSET:
            offset = unzigzag(self.varint(at))
            if not -MAX_OFFSET <= offset <= MAX_OFFSET:
                raise DecodeError("invalid_value", at, "offset out of range")
        if variant & TSV_DATE_ONLY and seconds % 86400:
            raise DecodeError("invalid_value", at, "date is not at midnight")
        text = render_ts_string(variant, seconds, frac, offset)
        if text is None:
            raise DecodeError("invalid_value", at, "local time out of range")
        return text

    def timestamp(self, at: int) -> Timestamp:
        flags = self.byte(at)
        zone = flags >> 1
        if zone > ZONE_FLOATING:
            raise DecodeError("invalid_value", at, "invalid timestamp flags")
        seconds = self.ts_seconds(at)
        nanos = 0
        if flags & 1:
            nanos = self.varint(at)
            if not 1 <= nanos <= 999_999_999:
                raise DecodeError("invalid_value", at, "nanoseconds out of range")
        offset = 0
        if zone == ZONE_OFFSET:
            offset = unzigzag(self.varint(at))
            if not -MAX_OFFSET <= offset <= MAX_OFFSET:
                raise DecodeError("invalid_value", at, "offset out of range")
            if not MIN_SECONDS <= seconds + offset * 60 <= MAX_SECONDS:
                raise DecodeError("invalid_value", at, "local time out of range")
        return Timestamp(seconds, nanos, zone, offset)

    def shaped_map(self, t: int, at: int, depth: int):
        st = self.st
        self.check_depth(depth, at)
        if SHAPE0 <= t < ARR0 or t in (SHAPE8, SHAPE16):
            if t == SHAPE8:
                i = SHAPE8_BASE + self.byte(at)
            elif t == SHAPE16:
                i = SHAPE16_BASE + int.from_bytes(self.fixed(2, at), "little")
            else:
                i = t - SHAPE0
            if i >= len(st.shapes):
                raise DecodeError("bad_reference", at, f"shape reference {i} beyond table")
            shape = st.shapes[i]
            if len(shape.keys) > self.end - self.pos:
                raise DecodeError("length_exceeds_input", at, "shape has more values than input remains")
        else:
            n = t - MAPDEF0 if t != MAPDEF_LONG else self.length(at, N_MAPDEF0)
            if 2 * n > self.end - self.pos:
                raise DecodeError("length_exceeds_input", at, "count exceeds the remaining input")
            keys = []
            seen = set()
            for _ in range(n):
                kat = self.pos
                if kat >= self.end:
                    raise DecodeError("truncated", kat, "input ends before an item")
                kt = self.data[kat]
                is_sym = kt == SYMBOL
                if is_sym:
                    self.pos += 1
                    kb = self.string_after_symbol(st.key_slot)
                else:
                    if not is_string_tag(kt):
                        raise DecodeError("expected_string", kat, "a map key must be a string or symbol")
                    self.pos += 1
                    kb = self.string_item(kt, kat, st.key_slot)
                if (is_sym, kb) in seen:
                    raise DecodeError("duplicate_key", kat, "key repeated in a shape")
                seen.add((is_sym, kb))
                keys.append((is_sym, kb))
            shape = st.add_shape(tuple(keys))
        out = {}
        for (is_sym, kb), slot in zip(shape.keys, shape.slots):
            k = Symbol(kb.decode("utf-8")) if is_sym else kb.decode("utf-8")
            out[k] = self.value(slot, depth + 1)
        return out

    def generic_map(self, pairs):
        if all(isinstance(k, (str, Symbol)) for k, _ in pairs):
            return dict(pairs)
        return Map(pairs)

    # -- top level ---------------------------------------------------------
    def decode(self):
        self.header(stream=False)
        v = self.value(self.st.root, 0)
        if self.pos != len(self.data):
            raise DecodeError("trailing_bytes", self.pos, "bytes after the value")
        return v

    def decode_stream(self):
        self.header(stream=True)
        return self.frames()

    def join_stream(self):
        """Frames from a frame boundary, without a header: skip to the first sync frame.

        Returns (offset of that frame's length, values from it on), or (None, []).
        """
        self.pos = 0
        while self.pos < len(self.data):
            start = self.pos
            n = self.length(start)
            if n == 0:
                raise DecodeError("invalid_value", start, "empty stream frame")
            if self.data[self.pos] == SYNC:
                at = self.pos
                self.end = self.pos + n
                self.pos = at + 1
                self.vf_and_dictionary(True, at + 1)
                self.end = len(self.data)
                self.pos = start
                return start, self.frames()
            self.pos += n
        return None, []

    def frames(self):
        values = []
        first = True
        while self.pos < len(self.data):
            at = self.pos
            n = self.length(at)
            if n == 0:
                raise DecodeError("invalid_value", at, "empty stream frame")
            self.end = self.pos + n
            if self.data[self.pos] == SYNC:
                self.sync_frame(self.pos)
            elif first:
                raise DecodeError("out_of_sequence", self.pos,
                                  "the stream's first frame is not a sync frame")
            first = False
            v = self.value(self.st.root, 0)
            if self.pos != self.end:
                raise DecodeError("trailing_bytes", self.pos, "bytes after the value in its frame")
            self.end = len(self.data)
            values.append(v)
        return values


def is_string_tag(t: int) -> bool:
    return (t < SHAPE0 or t in (STR_LONG, REF8, REF16, REF24, PFX_LONG, TS_STR, TS_Z0, TS_Z3)
            or PFX0 <= t < DEC0)


def decode(data: bytes, dictionaries=(), max_depth=DEFAULT_MAX_DEPTH):
    return Decoder(data, dictionaries, max_depth).decode()


def decode_stream(data: bytes, dictionaries=(), max_depth=DEFAULT_MAX_DEPTH):
    return Decoder(data, dictionaries, max_depth).decode_stream()


def join_stream(data: bytes, dictionaries=(), max_depth=DEFAULT_MAX_DEPTH):
    """Decode frames that start at a frame boundary mid-stream (SPEC 2.3 "Joining")."""
    return Decoder(data, dictionaries, max_depth).join_stream()
