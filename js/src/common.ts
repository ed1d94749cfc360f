// Shared definitions of the Tersa format (spec/SPEC.md): tags, limits, errors,
// value wrapper classes and the extension registry. Imported by both the
// encoder and the decoder entry points, so it must stay small.

/** Tag bytes and bases (SPEC section 5.1). */
export const enum Tag {
  REF0 = 0x00,
  STR0 = 0x40,
  SHAPE0 = 0x60,
  ARR0 = 0x80,
  MAPDEF0 = 0x90,
  INT0 = 0xa0,
  PFX0 = 0xc0,
  DEC0 = 0xd0,
  NULL = 0xe0,
  FALSE = 0xe1,
  TRUE = 0xe2,
  F32 = 0xe3,
  F64 = 0xe4,
  INT_POS = 0xe5,
  INT_NEG = 0xe6,
  INT_DELTA = 0xe7,
  DEC_X = 0xe8,
  DEC_DELTA = 0xe9,
  BIGINT_POS = 0xea,
  BIGINT_NEG = 0xeb,
  STR_LONG = 0xec,
  REF8 = 0xed,
  REF16 = 0xee,
  REF24 = 0xef,
  SHAPE8 = 0xf0,
  SHAPE16 = 0xf1,
  ARR_LONG = 0xf2,
  MAPDEF_LONG = 0xf3,
  MAP_GEN = 0xf4,
  PFX_LONG = 0xf5,
  BIN = 0xf6,
  EXT = 0xf7,
  SYMBOL = 0xf8,
  TIME = 0xf9,
  TS_STR = 0xfa,
  TS_Z0 = 0xfb,
  TS_Z3 = 0xfc,
  SYNC = 0xfd,
}

/** What the first tag of a range of short forms stands for (SPEC 5.2): INT0
 *  is the integer INT_MIN, DEC0 the decimal exponent DEC_EXP_MIN. */
export const enum Short {
  INT_MIN = -8,
  DEC_EXP_MIN = -12,
}

export const REF8_BASE = 64;
export const REF16_BASE = 320;
export const REF24_BASE = 65856;
export const SHAPE8_BASE = 32;
export const SHAPE16_BASE = 288;
export const MAX_STRINGS = REF24_BASE; // the indices REF..REF16 address (SPEC 4.1): no REF24 is ever valid
export const MAX_SHAPES = 65536;
export const MAX_PREFIX = 127;
export const DEFAULT_MAX_DEPTH = 1000;
export const MAX_EXT_TYPE = 0xffff;
/** Extension types above this are reserved for well-known types (SPEC 5.8). */
export const EXT_APP_MAX = 0xfeff;
export const MIN_SECONDS = -62135596800; // 0001-01-01T00:00:00Z
export const MAX_SECONDS = 253402300799; // 9999-12-31T23:59:59Z
export const MAX_OFFSET = 1439;
export const FLAG_DICT = 0x01;
export const FLAG_STREAM = 0x02;
export const TSV_NUMERIC_OFFSET = 0x10;
export const TSV_SPACE = 0x20;
export const TSV_DATE_ONLY = 0x40;

export const INT64_MIN = -(1n << 63n);
export const INT64_MAX = (1n << 63n) - 1n;
export const UINT64_MAX = (1n << 64n) - 1n;

/** The closed list of decode error codes (SPEC section 10). */
export type DecodeErrorCode =
  | 'truncated'
  | 'bad_magic'
  | 'unsupported_version'
  | 'bad_flags'
  | 'invalid_tag'
  | 'invalid_varint'
  | 'length_exceeds_input'
  | 'invalid_utf8'
  | 'bad_reference'
  | 'expected_string'
  | 'invalid_value'
  | 'duplicate_key'
  | 'depth_exceeded'
  | 'trailing_bytes'
  | 'unknown_dictionary'
  | 'out_of_sequence'
  | 'bad_sync';

/** Malformed input. `code` is the SPEC error name, `offset` the byte offset it names. */
class DecodeError extends Error {
  readonly code: DecodeErrorCode;
  readonly offset: number;
  /** Human-readable detail, without code and offset. */
  readonly detail: string;
  constructor(code: DecodeErrorCode, offset: number, detail = '') {
    super(`${code} at offset ${offset}${detail ? ': ' + detail : ''}`);
    this.name = 'DecodeError';
    this.code = code;
    this.offset = offset;
    this.detail = detail;
  }
}

/** A value that Tersa cannot represent. `path` locates it (`$`, `$[3].user`, ...). */
class EncodeError extends Error {
  path: string;
  readonly reason: string;
  constructor(reason: string, path = '$') {
    super(`${reason} at ${path}`);
    this.name = 'EncodeError';
    this.reason = reason;
    this.path = path;
  }
}

export type Zone = 'utc' | 'offset' | 'floating';

/**
 * A Tersa timestamp: `seconds` since 1970-01-01T00:00:00Z (for a floating time,
 * the wall clock read as if it were UTC), `nanos` 0..999,999,999, a zone and,
 * for zone `offset`, the UTC offset in minutes. Decoders return a `Date` for
 * UTC timestamps with whole milliseconds and a `Timestamp` otherwise.
 */
class Timestamp {
  readonly seconds: number;
  readonly nanos: number;
  readonly zone: Zone;
  readonly offset: number;
  constructor(seconds: number, nanos = 0, zone: Zone = 'utc', offset = 0) {
    this.seconds = seconds;
    this.nanos = nanos;
    this.zone = zone;
    this.offset = zone === 'offset' ? offset : 0;
  }
  static fromDate(d: Date): Timestamp {
    const ms = d.getTime();
    const s = Math.floor(ms / 1000);
    return new Timestamp(s, (ms - s * 1000) * 1e6, 'utc', 0);
  }
  /** The instant as a Date (milliseconds truncated toward the past). */
  toDate(): Date {
    return new Date(this.seconds * 1000 + Math.floor(this.nanos / 1e6));
  }
  equals(o: unknown): boolean {
    return (
      o instanceof Timestamp &&
      o.seconds === this.seconds &&
      o.nanos === this.nanos &&
      o.zone === this.zone &&
      o.offset === this.offset
    );
  }
}

/** An extension value whose type has no registered class. */
class Ext {
  readonly type: number;
  readonly data: Uint8Array;
  constructor(type: number, data: Uint8Array) {
    this.type = type;
    this.data = data;
  }
}

const f64buf = new Float64Array(1);
const f64u8 = new Uint8Array(f64buf.buffer);
const f64dv = new DataView(f64buf.buffer);

/**
 * A float that a plain JS number cannot carry exactly: an integral float
 * (`2100.0`, `0.0`, which a number would re-encode as an integer) or a NaN
 * whose bits are not the canonical quiet NaN. Decoders return these only with
 * the `exactFloats` option; encoders always accept them and write a float.
 */
class Float64 {
  readonly value: number;
  /** The IEEE 754 binary64 bit pattern. */
  readonly bits: bigint;
  constructor(value: number, bits?: bigint) {
    if (bits === undefined) {
      f64buf[0] = value;
      bits = Number.isNaN(value) ? 0x7ff8000000000000n : f64dv.getBigUint64(0, true);
    } else {
      f64dv.setBigUint64(0, bits, true);
      value = f64buf[0];
    }
    this.value = value;
    this.bits = bits;
  }
  static fromBits(bits: bigint): Float64 {
    return new Float64(0, BigInt.asUintN(64, bits));
  }
  valueOf(): number {
    return this.value;
  }
}

/** Bits of a double as a BigInt (for NaN payloads). */
export function float64Bits(v: number): bigint {
  f64buf[0] = v;
  return f64dv.getBigUint64(0, true);
}
export { f64u8 as _f64u8, f64dv as _f64dv };

/** Two lowercase hex digits per byte value. */
export const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Lowercase hex of bytes, two digits each. */
export function hexOf(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += HEX_BYTE[b[i]];
  return s;
}

// ---------------------------------------------------------------------------
// Extension registry
// ---------------------------------------------------------------------------

export interface Extension<T = any> {
  /** Extension type number, 0..65279 (0xFF00..0xFFFF are reserved for well-known types). */
  type: number;
  /** Instances of this class (exact constructor match) are written with `write`. */
  Class?: abstract new (...args: any[]) => T;
  write?: (value: T) => Uint8Array;
  read?: (data: Uint8Array) => T;
}

// ---------------------------------------------------------------------------
// One set of classes and one registry per JS realm
// ---------------------------------------------------------------------------
// A process may load this package more than once: through both `import`
// (dist/esm) and `require` (dist/cjs), or as copies nested in different
// dependencies. Each copy keeping its own classes and registry would make
// `instanceof DecodeError` false for another copy's errors, its Timestamps
// unencodable, and extensions registered through one copy unknown to the
// others. So the first copy loaded puts them on globalThis under a registered
// symbol, and every later copy uses those. The key carries RUNTIME_VERSION:
// bump it whenever anything kept there changes shape (fields, constructor
// arguments, methods or map contents that encoders and decoders rely on), so
// that copies that would misread each other's objects stay apart.

const RUNTIME_VERSION = 1;
const RUNTIME_KEY = Symbol.for(`tersa runtime v${RUNTIME_VERSION}`);

interface Runtime {
  readonly DecodeError: typeof DecodeError;
  readonly EncodeError: typeof EncodeError;
  readonly Timestamp: typeof Timestamp;
  readonly Ext: typeof Ext;
  readonly Float64: typeof Float64;
  readonly extByType: Map<number, Extension>;
  readonly extByClass: Map<Function, Extension>;
}

/** @internal What the first copy of the package put on globalThis under
 *  `key`, or `own` (with `first` called once) if this copy is the first. The
 *  property is read-only and hidden: a later copy cannot replace it and split
 *  the state. A non-extensible global object leaves each copy its own. */
export function sharedOnGlobal<T extends object>(key: symbol, own: T, first: () => void = () => {}): T {
  const g = globalThis as unknown as Record<symbol, T | undefined>;
  const found = g[key];
  if (found) return found;
  try {
    Object.defineProperty(g, key, { value: own, enumerable: false, writable: false, configurable: false });
  } catch {
    // A non-extensible global object: this copy keeps its own.
  }
  first();
  return own;
}

function sharedRuntime(): Runtime {
  return sharedOnGlobal<Runtime>(RUNTIME_KEY, Object.freeze({
    DecodeError, EncodeError, Timestamp, Ext, Float64,
    extByType: new Map<number, Extension>(),
    extByClass: new Map<Function, Extension>(),
  }));
}

const runtime = sharedRuntime();

// The exported names are the shared classes; the declarations above give
// them their names and types.
const SharedDecodeError = runtime.DecodeError;
type SharedDecodeError = DecodeError;
const SharedEncodeError = runtime.EncodeError;
type SharedEncodeError = EncodeError;
const SharedTimestamp = runtime.Timestamp;
type SharedTimestamp = Timestamp;
const SharedExt = runtime.Ext;
type SharedExt = Ext;
const SharedFloat64 = runtime.Float64;
type SharedFloat64 = Float64;
export {
  SharedDecodeError as DecodeError,
  SharedEncodeError as EncodeError,
  SharedTimestamp as Timestamp,
  SharedExt as Ext,
  SharedFloat64 as Float64,
};

/** @internal */
export const extByType = runtime.extByType;
/** @internal */
export const extByClass = runtime.extByClass;

/**
 * Registers an extension type, in the spirit of msgpackr: values whose
 * constructor is `Class` are encoded as `EXT(type, write(value))`, and
 * `EXT(type, bytes)` decodes to `read(bytes)`. Registration is global: shared
 * by every Encoder and Decoder of every copy of this package in the realm
 * (loaded by `import` or `require`).
 *
 * A type is one class's: adding the same `Class` under its type again
 * replaces `write` and `read`, but a type held by another class (or by a
 * read-only extension, when `Class` differs), or a `Class` held by another
 * type, throws a TypeError until `removeExtension`. Data written for one
 * class never decodes as another's.
 */
export function addExtension<T>(ext: Extension<T>): void {
  if (Number.isInteger(ext.type) && ext.type > EXT_APP_MAX && ext.type <= MAX_EXT_TYPE) {
    throw new RangeError('extension types 0xFF00..0xFFFF (65280..65535) are reserved for well-known types (SPEC 5.8); applications use 0..65279');
  }
  if (!Number.isInteger(ext.type) || ext.type < 0 || ext.type > EXT_APP_MAX) {
    throw new RangeError('extension type must be an integer 0..65279');
  }
  const taken = ext.Class ? extByClass.get(ext.Class) : undefined;
  if (taken !== undefined && taken.type > EXT_APP_MAX) {
    throw new TypeError(`${ext.Class!.name} is a well-known type (extension type 0x${taken.type.toString(16)}, SPEC 5.8): it cannot be registered`);
  }
  const old = extByType.get(ext.type);
  if (old !== undefined && old.Class !== ext.Class) {
    const holder = old.Class ? old.Class.name || 'a class' : 'an extension without a Class';
    throw new TypeError(`extension type ${ext.type} is registered to ${holder}: removeExtension(${ext.type}) first`);
  }
  if (taken !== undefined && taken.type !== ext.type) {
    throw new TypeError(`${ext.Class!.name || 'this class'} is registered as extension type ${taken.type}: removeExtension(${taken.type}) first`);
  }
  if (old && old.Class) extByClass.delete(old.Class);
  extByType.set(ext.type, ext);
  if (ext.Class) {
    if (!ext.write) throw new TypeError('an extension with a Class needs a write function');
    extByClass.set(ext.Class, ext);
  }
}

export function removeExtension(type: number): void {
  const old = extByType.get(type);
  if (old) {
    extByType.delete(type);
    if (old.Class) extByClass.delete(old.Class);
  }
}

// ---------------------------------------------------------------------------
// Calendar helpers (proleptic Gregorian), exact for the Tersa range
// ---------------------------------------------------------------------------

export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor((y >= 0 ? y : y - 399) / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Returns y * 10000 + m * 100 + d. */
export function civilFromDays(z: number): number {
  z += 719468;
  const era = Math.floor((z >= 0 ? z : z - 146096) / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return (y + (m <= 2 ? 1 : 0)) * 10000 + m * 100 + d;
}

export function daysInMonth(y: number, m: number): number {
  if (m === 2) return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** FNV-1a 64-bit hash (SPEC section 8). */
export function fnv1a64(data: Uint8Array): bigint {
  // 64-bit arithmetic with four 16-bit limbs, to avoid BigInt per byte.
  let h0 = 0x2325, h1 = 0x8422, h2 = 0x9ce4, h3 = 0xcbf2;
  for (let i = 0; i < data.length; i++) {
    h0 ^= data[i];
    // multiply by 0x100000001b3 = 2^40 + 0x1b3
    const a0 = h0 * 0x1b3, a1 = h1 * 0x1b3, a2 = h2 * 0x1b3, a3 = h3 * 0x1b3;
    // + (h << 40): h0 << 8 lands in limb 2 (carrying into 3), h1 << 8 in limb 3
    let t0 = a0;
    let t1 = a1 + (t0 >>> 16);
    t0 &= 0xffff;
    let t2 = a2 + (h0 << 8) + (t1 >>> 16);
    t1 &= 0xffff;
    let t3 = a3 + (h1 << 8) + (t2 >>> 16);
    t2 &= 0xffff;
    t3 &= 0xffff;
    h0 = t0; h1 = t1; h2 = t2; h3 = t3;
  }
  return (BigInt(h3) << 48n) | (BigInt(h2) << 32n) | (BigInt(h1) << 16n) | BigInt(h0);
}

/** A dictionary as the encoder and decoder need it (see Dictionary in ./dictionary). */
export interface DictionaryLike {
  readonly id: bigint;
  readonly strings: readonly string[];
  readonly shapes: readonly (readonly (string | symbol)[])[];
}

/** The name of a registered symbol, for Tersa's symbol type. */
export function symbolName(s: symbol): string | undefined {
  return Symbol.keyFor(s);
}

/** UTF-8 length of a JS string, or -1 if it holds a lone surrogate. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdfff) {
      if (c >= 0xdc00) return -1;
      const c2 = s.charCodeAt(i + 1);
      if (!(c2 >= 0xdc00 && c2 <= 0xdfff)) return -1;
      i++;
      n += 4;
    } else n += 3;
  }
  return n;
}
