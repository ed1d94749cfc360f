// Tersa decoder (SPEC sections 2-6, 8-10). The hot state lives in module-level
// variables (as in msgpackr): V8 optimizes reads of module-level `let`
// bindings better than property loads on `this`. Every public entry point
// loads the state of its Decoder into them and stores it back afterwards, and
// saves/restores the previous state when called re-entrantly (for example
// from an extension's `read`).

import {
  DecodeError,
  DecodeErrorCode,
  DictionaryLike,
  Ext,
  Float64,
  Short,
  Tag,
  Timestamp,
  extByType,
  civilFromDays,
  MAX_SHAPES,
  MAX_STRINGS,
  MIN_SECONDS,
  MAX_SECONDS,
  MAX_OFFSET,
  REF8_BASE,
  REF16_BASE,
  REF24_BASE,
  SHAPE8_BASE,
  SHAPE16_BASE,
  FLAG_DICT,
  FLAG_STREAM,
  TSV_DATE_ONLY,
  TSV_NUMERIC_OFFSET,
  TSV_SPACE,
  DEFAULT_MAX_DEPTH,
  MAX_EXT_TYPE,
  EXT_APP_MAX,
  INT64_MIN,
  UINT64_MAX,
  Zone,
  HEX_BYTE,
} from './common.js';
import { MapBuilder, exactKeyTag, resetKeyIds } from './map-keys.js';
import { readWellKnown } from './well-known.js';
export { MapBuilder, exactKeyTag };
import { nestArray, nestShaped, nestGenericMap, suspendLevels, resumeLevels } from './decoder-deep.js';
import { StreamDecoder } from './stream-decoder.js';
import { checkOptions, dictionaryList, DECODER_OPTIONS } from './options.js';
import type { StreamOptions, StreamDecoderOptions, JoinResult } from './stream-decoder.js';
export { StreamDecoder };
export type { StreamOptions, StreamDecoderOptions, JoinResult };

export interface DecoderOptions {
  /** Dictionaries a buffer may name (SPEC section 8): one, or an array of them. */
  dictionaries?: DictionaryLike | readonly DictionaryLike[];
  /** Nesting limit (SPEC 5.7); default 1000. */
  maxDepth?: number;
  /**
   * Return `Float64` wrappers for floats a JS number cannot carry exactly:
   * integral floats (`2100.0`, `0.0`) and NaNs with non-canonical bits.
   * Default false: such floats decode to plain numbers (2100.0 becomes 2100).
   */
  exactFloats?: boolean;
  /**
   * `'auto'` (default): string-keyed maps decode to plain objects when a JS
   * object keeps their key order, else to `Map` (integer-like keys such as
   * "10" before "2", which objects would reorder); maps with other keys
   * (symbols, numbers, ...) always decode to `Map`. `'map'`: always `Map`.
   */
  maps?: 'auto' | 'map';
  /**
   * `'auto'` (default): UTC timestamps with whole milliseconds decode to
   * `Date`, others to `Timestamp`. `'timestamp'`: always `Timestamp`.
   */
  dates?: 'auto' | 'timestamp';
  /**
   * `'auto'` (default): integers in the safe range decode to numbers, others
   * to BigInt. `'bigint'`: every integer decodes to a BigInt.
   */
  integers?: 'auto' | 'bigint';
  /** Return binary values as views into the input instead of copies. Default false. */
  binaryViews?: boolean;
}

// ---------------------------------------------------------------------------
// State objects
// ---------------------------------------------------------------------------

/** @internal A slot (SPEC 4.3): the registers of one position in the data. */
export class Slot {
  s: string | null = null; // str register
  sl = 0; // its UTF-8 length
  ik = 0; // int register kind: 0 none, 1 a safe integer in i, 2 an int64 beyond it as ih (signed) * 2^32 + il
  i = 0;
  ih = 0;
  il = 0;
  dk = false; // dec register present
  dm = 0;
  de = 0;
}

function resetSlot(s: Slot): void {
  s.s = null;
  s.sl = 0;
  s.ik = 0;
  s.dk = false;
}

type Factory = (r: (s: Slot) => unknown, s: Slot[]) => unknown;

/** @internal Everything derived from a key sequence; shared across buffers and decoders. */
export class ShapeInfo {
  keys: (string | symbol)[];
  n: number;
  asObject: boolean;
  hasProto: boolean;
  factory: Factory | null = null;
  uses = 0; // close recurrences (see HOT_GAP)
  last = -HOT_GAP; // shapeClock at the last use
  constructor(keys: (string | symbol)[]) {
    this.keys = keys;
    this.n = keys.length;
    let allStrings = true;
    for (const k of keys) if (typeof k !== 'string') allStrings = false;
    this.hasProto = allStrings && keys.includes('__proto__');
    this.asObject = allStrings && objectKeepsOrder(keys as string[]);
  }
}

/** An entry of a buffer's shape table. */
class DShape {
  info: ShapeInfo;
  slots: Slot[];
  gen: number;
  constructor(info: ShapeInfo, g: number) {
    this.info = info;
    this.gen = g;
    const slots: Slot[] = [];
    for (let i = 0; i < info.n; i++) slots.push(new Slot());
    this.slots = slots;
  }
}

/** @internal */
export function objectKeepsOrder(keys: string[]): boolean {
  const o: Record<string, number> = Object.create(null);
  for (const k of keys) o[k] = 0;
  const got = Object.keys(o);
  for (let i = 0; i < keys.length; i++) if (got[i] !== keys[i]) return false;
  return true;
}

const infoCache = new Map<string, ShapeInfo>();
const INFO_CACHE_LIMIT = 4096;

function infoKey(keys: (string | symbol)[]): string {
  let s = '';
  for (const k of keys) {
    if (typeof k === 'string') s += k.length + ':' + k;
    else {
      const name = Symbol.keyFor(k)!;
      s += '$' + name.length + ':' + name;
    }
  }
  return s;
}

// Shapes whose keys total more than this many characters are not shared
// through infoCache: its key is the keys' text, and a one-byte reference can
// repeat a long key in shape after shape (hashing and holding it each time).
const INFO_CACHE_KEY_CHARS = 1024;

function getInfo(keys: (string | symbol)[]): ShapeInfo {
  let chars = 0;
  for (const k of keys) chars += typeof k === 'string' ? k.length : 0;
  if (chars > INFO_CACHE_KEY_CHARS) return new ShapeInfo(keys);
  const ck = infoKey(keys);
  let info = infoCache.get(ck);
  if (info === undefined) {
    if (infoCache.size >= INFO_CACHE_LIMIT) infoCache.clear();
    info = new ShapeInfo(keys);
    infoCache.set(ck, info);
  }
  return info;
}

let canEval = true;
try {
  canEval = new Function('return 1')() === 1;
} catch {
  canEval = false;
}
// A shape gets a compiled factory once it recurs closely: used again within
// HOT_GAP shaped maps, COMPILE_AFTER times. Shapes met once per buffer among
// hundreds of others (sparse records) would each get a function run too
// rarely to leave the interpreter, which costs more to build than it saves.
const COMPILE_AFTER = 2;
const HOT_GAP = 256;
let shapeClock = 0;

function compileFactory(info: ShapeInfo): Factory {
  const parts: string[] = [];
  const keys = info.keys as string[];
  for (let i = 0; i < keys.length; i++) {
    const k = JSON.stringify(keys[i]);
    // A literal "__proto__": v would set the prototype; a computed key defines
    // an own data property. Other keys stay literal, so V8 builds the object
    // from a boilerplate.
    parts.push((keys[i] === '__proto__' ? '[' + k + ']' : k) + ':r(s[' + i + '])');
  }
  // eslint-disable-next-line no-new-func
  return new Function('r', 's', 'return {' + parts.join(',') + '}') as Factory;
}

/** @internal Per-dictionary prepared tables, owned by a Decoder. */
export class DictState {
  strs: string[];
  lens: number[];
  shapes: DShape[];
  nstr: number;
  nshape: number;
  constructor(d: DictionaryLike) {
    this.strs = [];
    this.lens = [];
    for (const s of d.strings) {
      this.strs.push(s);
      this.lens.push(utf8Len(s));
    }
    this.nstr = this.strs.length;
    this.shapes = [];
    for (const keys of d.shapes) {
      this.shapes.push(new DShape(getInfo(keys.map((k) => (typeof k === 'symbol' ? Symbol.for(Symbol.keyFor(k)!) : k))), -1));
    }
    this.nshape = this.shapes.length;
  }
}

function utf8Len(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n++;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

// ---------------------------------------------------------------------------
// Module-level hot state
// ---------------------------------------------------------------------------

let src: Uint8Array = new Uint8Array(0);
let pos = 0;
let end = 0;
let strs: string[] = [];
let lens: number[] = [];
let nstr = 0;
let shapes: DShape[] = [];
let nshape = 0;
let gen = 0;
let lastStr: string | null = null;
let lastLen = 0;
let lastTs = 0;
let depth = 0;
// Containers nest by recursion this deep, then from an explicit stack
// (decoder-deep.ts): the stack this takes fits in any JavaScript engine's.
const RECURSION_DEPTH = 100;
let maxDepth = DEFAULT_MAX_DEPTH;
let keySlot = new Slot();
let exactFloats = false;
/** @internal */
export let mapsAlways = false;
let datesAlways = false;
let bigints = false;
let binaryViews = false;
// the last varint, when it was >= 2^53, as unsigned 32-bit halves
let varHi = 0;
let varLo = 0;
/** @internal */
export let lastExtType = 0; // the last extension value read, before any read() hook
/** @internal */
export let lastExtData: Uint8Array = new Uint8Array(0);
let active = false;
let memo: (MemoEntry[] | undefined)[] = [];

const TWO53 = 9007199254740992;
const POW2: number[] = [];
for (let i = 0; i <= 64; i++) POW2.push(Math.pow(2, i));
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
const fromCharCode = String.fromCharCode;
const textDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** @internal */
export function fail(code: DecodeErrorCode, at: number, msg?: string): never {
  throw new DecodeError(code, at, msg);
}

// ---------------------------------------------------------------------------
// Primitive fields
// ---------------------------------------------------------------------------

function varint(at: number): number {
  if (pos >= end) fail('truncated', at, 'input ends inside an item');
  const b = src[pos];
  if (b & 1) {
    pos++;
    return b >>> 1;
  }
  if (b & 2) {
    if (pos + 2 > end) fail('truncated', at, 'input ends inside a varint');
    const v = (b | (src[pos + 1] << 8)) >>> 2;
    pos += 2;
    if (v < 128) fail('invalid_varint', at, 'varint is not minimal');
    return v;
  }
  if (b & 4) {
    if (pos + 3 > end) fail('truncated', at, 'input ends inside a varint');
    const v = (b | (src[pos + 1] << 8) | (src[pos + 2] << 16)) >>> 3;
    pos += 3;
    if (v < 0x4000) fail('invalid_varint', at, 'varint is not minimal');
    return v;
  }
  if (b & 8) {
    if (pos + 4 > end) fail('truncated', at, 'input ends inside a varint');
    const v = ((b | (src[pos + 1] << 8) | (src[pos + 2] << 16) | (src[pos + 3] << 24)) >>> 4) & 0xfffffff;
    pos += 4;
    if (v < 0x200000) fail('invalid_varint', at, 'varint is not minimal');
    return v;
  }
  return varintLong(at, b);
}

function varintLong(at: number, b: number): number {
  const p = pos;
  if (b === 0) {
    if (p + 9 > end) fail('truncated', at, 'input ends inside a varint');
    const lo = (src[p + 1] | (src[p + 2] << 8) | (src[p + 3] << 16) | (src[p + 4] << 24)) >>> 0;
    const hi = (src[p + 5] | (src[p + 6] << 8) | (src[p + 7] << 16) | (src[p + 8] << 24)) >>> 0;
    pos = p + 9;
    if (hi < 0x1000000) fail('invalid_varint', at, 'varint is not minimal');
    varHi = hi;
    varLo = lo;
    return hi * 4294967296 + lo;
  }
  const L = 31 - Math.clz32(b & -b) + 1; // 3..8
  if (p + L > end) fail('truncated', at, 'input ends inside a varint');
  let v: number;
  if (L <= 4) {
    const w = (b | (src[p + 1] << 8) | (src[p + 2] << 16) | (L === 4 ? src[p + 3] << 24 : 0)) >>> 0;
    v = w >>> L;
  } else {
    const lo = (b | (src[p + 1] << 8) | (src[p + 2] << 16) | (src[p + 3] << 24)) >>> 0;
    let hi = 0;
    for (let i = L - 1; i >= 4; i--) hi = hi * 256 + src[p + i];
    v = (lo >>> L) + hi * POW2[32 - L];
    if (v >= TWO53) {
      varLo = ((hi << (32 - L)) | (lo >>> L)) >>> 0;
      varHi = hi >>> L;
    }
  }
  pos = p + L;
  if (v < POW2[7 * (L - 1)]) fail('invalid_varint', at, 'varint is not minimal');
  return v;
}

function length(at: number, bias: number): number {
  const n = varint(at) + bias;
  if (n > end - pos) fail('length_exceeds_input', at, 'length exceeds the remaining input');
  return n;
}

function byte(at: number): number {
  if (pos >= end) fail('truncated', at, 'input ends inside an item');
  return src[pos++];
}

function unzigzag(z: number): number {
  // exact for z < 2^53
  if (z < 0x80000000) return (z >>> 1) ^ -(z & 1);
  return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
}

// ---------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------

// Node's Buffer.prototype.utf8Slice decodes in C++ and replaces invalid
// sequences with U+FFFD; a result without U+FFFD is therefore exact, and one
// with it is re-checked by the validating decoder below. Other platforms use
// TextDecoder (fatal) for strings beyond the hand-decoded sizes.
const nodeUtf8Slice: ((this: Uint8Array, start: number, end: number) => string) | null = (() => {
  try {
    const B = (globalThis as { Buffer?: { prototype?: { utf8Slice?: unknown } } }).Buffer;
    const f = B?.prototype?.utf8Slice;
    if (typeof f !== 'function') return null;
    const g = f as (this: Uint8Array, start: number, end: number) => string;
    const probe = Uint8Array.of(0x61, 0xc3, 0xa9, 0xed, 0xa0, 0x80);
    if (g.call(probe, 0, 3) !== 'a\u00e9' || g.call(probe, 3, 6).indexOf('\ufffd') < 0) return null;
    return g;
  } catch {
    return null;
  }
})();

// ASCII strings are cut from a one-byte string that holds a window of the
// input (one native call per window instead of one per string). Strings of
// 13 or more characters are then V8 "sliced strings" that keep their window
// (at most WINDOW bytes) alive.
const nodeLatin1Slice: ((this: Uint8Array, start: number, end: number) => string) | null = (() => {
  const B = (globalThis as { Buffer?: { prototype?: { latin1Slice?: unknown } } }).Buffer;
  const f = B?.prototype?.latin1Slice;
  return typeof f === 'function' ? (f as (this: Uint8Array, start: number, end: number) => string) : null;
})();
const latin1Decoder = nodeLatin1Slice === null ? new TextDecoder('latin1') : null;
const WINDOW = 4096;
let win = '';
let dvSrc: Uint8Array | null = null;
let dv: DataView = new DataView(new ArrayBuffer(8));
let winSrc: Uint8Array | null = null;
let winStart = 0;
let winEnd = 0;

function asciiSlice(p: number, n: number): string {
  if (winSrc !== src || p < winStart || p + n > winEnd) {
    const len = src.length;
    let a: number, b: number;
    if (len <= 2 * WINDOW) {
      a = 0;
      b = len;
    } else {
      a = p;
      b = Math.min(len, p + (n > WINDOW ? n : WINDOW));
    }
    win = nodeLatin1Slice !== null ? nodeLatin1Slice.call(src, a, b) : latin1Decoder!.decode(src.subarray(a, b));
    winSrc = src;
    winStart = a;
    winEnd = b;
  }
  const o = p - winStart;
  return win.slice(o, o + n);
}

/** Decodes n bytes at pos (already bounds-checked) as UTF-8; advances pos. */
function utf8(n: number, at: number): string {
  const p = pos;
  pos = p + n;
  if (n <= 8) {
    switch (n) {
      case 0:
        return '';
      case 1: {
        const a = src[p];
        if (a < 0x80) return fromCharCode(a);
        break;
      }
      case 2: {
        const a = src[p], b = src[p + 1];
        if ((a | b) < 0x80) return fromCharCode(a, b);
        break;
      }
      case 3: {
        const a = src[p], b = src[p + 1], c = src[p + 2];
        if ((a | b | c) < 0x80) return fromCharCode(a, b, c);
        break;
      }
      case 4: {
        const a = src[p], b = src[p + 1], c = src[p + 2], d = src[p + 3];
        if ((a | b | c | d) < 0x80) return fromCharCode(a, b, c, d);
        break;
      }
      case 5: {
        const a = src[p], b = src[p + 1], c = src[p + 2], d = src[p + 3], e = src[p + 4];
        if ((a | b | c | d | e) < 0x80) return fromCharCode(a, b, c, d, e);
        break;
      }
      case 6: {
        const a = src[p], b = src[p + 1], c = src[p + 2], d = src[p + 3], e = src[p + 4], f = src[p + 5];
        if ((a | b | c | d | e | f) < 0x80) return fromCharCode(a, b, c, d, e, f);
        break;
      }
      case 7: {
        const a = src[p], b = src[p + 1], c = src[p + 2], d = src[p + 3], e = src[p + 4], f = src[p + 5], g = src[p + 6];
        if ((a | b | c | d | e | f | g) < 0x80) return fromCharCode(a, b, c, d, e, f, g);
        break;
      }
      case 8: {
        const a = src[p], b = src[p + 1], c = src[p + 2], d = src[p + 3], e = src[p + 4], f = src[p + 5], g = src[p + 6], h = src[p + 7];
        if ((a | b | c | d | e | f | g | h) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h);
        break;
      }
    }
    return utf8Short(p, n, at);
  }
  if (n <= 12) {
    // still below V8's sliced-string size: one call with every character
    const a = src[p], b = src[p + 1], c = src[p + 2], d = src[p + 3], e = src[p + 4], f = src[p + 5], g = src[p + 6], h = src[p + 7], i = src[p + 8];
    switch (n) {
      case 9:
        if ((a | b | c | d | e | f | g | h | i) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h, i);
        break;
      case 10: {
        const j = src[p + 9];
        if ((a | b | c | d | e | f | g | h | i | j) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h, i, j);
        break;
      }
      case 11: {
        const j = src[p + 9], k = src[p + 10];
        if ((a | b | c | d | e | f | g | h | i | j | k) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h, i, j, k);
        break;
      }
      default: {
        const j = src[p + 9], k = src[p + 10], l = src[p + 11];
        if ((a | b | c | d | e | f | g | h | i | j | k | l) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h, i, j, k, l);
      }
    }
    return nodeUtf8Slice !== null ? utf8Node(p, n, at) : utf8Short(p, n, at);
  }
  if (n <= 256) {
    // ASCII check four bytes at a time
    if (dvSrc !== src) {
      dvSrc = src;
      dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
    }
    let o = 0;
    const e4 = p + n - 3;
    let i = p;
    for (; i < e4; i += 4) o |= dv.getUint32(i, true);
    for (; i < p + n; i++) o |= src[i];
    if ((o & 0x80808080) === 0) return asciiSlice(p, n);
  }
  if (nodeUtf8Slice !== null) return utf8Node(p, n, at);
  if (n < 64) return utf8Short(p, n, at);
  try {
    return textDecoder.decode(src.subarray(p, p + n));
  } catch {
    return fail('invalid_utf8', at, 'string is not valid UTF-8');
  }
}

// A cache of short ASCII strings by their bytes (like msgpackr's key cache):
// map keys repeat from buffer to buffer, and a cached string costs a hash and
// a comparison instead of an allocation. Entries are verified byte by byte.
const CACHE_BITS = 12;
const cache: (string | undefined)[] = new Array(1 << CACHE_BITS).fill(undefined);

function cachedAscii(n: number, at: number): string {
  const p = pos;
  let h = n;
  for (let i = p; i < p + n; i++) h = (Math.imul(h, 31) + src[i]) | 0;
  h = (h ^ (h >>> 15)) & ((1 << CACHE_BITS) - 1);
  const c = cache[h];
  if (c !== undefined && c.length === n) {
    let i = 0;
    while (i < n && c.charCodeAt(i) === src[p + i]) i++;
    if (i === n) {
      pos = p + n;
      return c;
    }
  }
  const s = utf8(n, at);
  if (s.length === n) cache[h] = s;
  return s;
}

function utf8Node(p: number, n: number, at: number): string {
  const s = nodeUtf8Slice!.call(src, p, p + n);
  if (s.indexOf('\ufffd') === -1) return s;
  return utf8Short(p, n, at);
}

const codes: number[] = [];

/** Validating UTF-8 decoder for short strings. */
function utf8Short(p: number, n: number, at: number): string {
  const e = p + n;
  let k = 0;
  while (p < e) {
    const a = src[p++];
    if (a < 0x80) {
      codes[k++] = a;
      continue;
    }
    if (a >= 0xc2 && a < 0xe0) {
      if (p >= e) return badUtf8(at);
      const b = src[p++];
      if ((b & 0xc0) !== 0x80) return badUtf8(at);
      codes[k++] = ((a & 0x1f) << 6) | (b & 0x3f);
      continue;
    }
    if (a >= 0xe0 && a < 0xf0) {
      if (p + 1 >= e) return badUtf8(at);
      const b = src[p++], c = src[p++];
      if ((b & 0xc0) !== 0x80 || (c & 0xc0) !== 0x80) return badUtf8(at);
      const cp = ((a & 0x0f) << 12) | ((b & 0x3f) << 6) | (c & 0x3f);
      if (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000)) return badUtf8(at);
      codes[k++] = cp;
      continue;
    }
    if (a >= 0xf0 && a < 0xf5) {
      if (p + 2 >= e) return badUtf8(at);
      const b = src[p++], c = src[p++], d = src[p++];
      if ((b & 0xc0) !== 0x80 || (c & 0xc0) !== 0x80 || (d & 0xc0) !== 0x80) return badUtf8(at);
      const cp = ((a & 0x07) << 18) | ((b & 0x3f) << 12) | ((c & 0x3f) << 6) | (d & 0x3f);
      if (cp < 0x10000 || cp > 0x10ffff) return badUtf8(at);
      const u = cp - 0x10000;
      codes[k++] = 0xd800 | (u >> 10);
      codes[k++] = 0xdc00 | (u & 0x3ff);
      continue;
    }
    return badUtf8(at);
  }
  return codesToString(k);
}

function badUtf8(at: number): never {
  return fail('invalid_utf8', at, 'string is not valid UTF-8');
}

function codesToString(k: number): string {
  if (k <= 1024) {
    codes.length = k;
    return fromCharCode.apply(null, codes);
  }
  let s = '';
  for (let i = 0; i < k; i += 1024) s += fromCharCode.apply(null, codes.slice(i, Math.min(k, i + 1024)));
  return s;
}

/** @internal */
export function isStringTag(t: number): boolean {
  return t < Tag.SHAPE0 || (t >= Tag.PFX0 && t < Tag.DEC0) || (t >= Tag.STR_LONG && t <= Tag.REF24) || t === Tag.PFX_LONG || (t >= Tag.TS_STR && t <= Tag.TS_Z3);
}

function addString(s: string, n: number): void {
  if (n >= 2 && nstr < MAX_STRINGS) {
    strs[nstr] = s;
    lens[nstr] = n;
    nstr++;
  }
}

/** Decodes a string item whose tag t (at offset at) has been consumed. */
function readString(t: number, at: number, slot: Slot): string {
  let s: string;
  let n: number;
  if (t < Tag.STR0) return refString(t, at, slot);
  if (t < Tag.SHAPE0) {
    n = t - Tag.STR0;
    if (n > end - pos) fail('truncated', at, 'input ends inside a string');
    s = utf8(n, at);
  } else if (t >= Tag.PFX0 && t < Tag.DEC0) {
    return prefixString(t - Tag.PFX0, false, at, slot);
  } else {
    switch (t) {
      case Tag.STR_LONG:
        n = length(at, 32);
        s = utf8(n, at);
        break;
      case Tag.REF8:
        return refString(REF8_BASE + byte(at), at, slot);
      case Tag.REF16: {
        if (pos + 2 > end) fail('truncated', at, 'input ends inside an item');
        const i = REF16_BASE + (src[pos] | (src[pos + 1] << 8));
        pos += 2;
        return refString(i, at, slot);
      }
      case Tag.REF24: {
        if (pos + 3 > end) fail('truncated', at, 'input ends inside an item');
        const i = REF24_BASE + (src[pos] | (src[pos + 1] << 8) | (src[pos + 2] << 16));
        pos += 3;
        return refString(i, at, slot);
      }
      case Tag.PFX_LONG:
        return prefixString(-1, true, at, slot);
      default:
        s = tsString(t, at);
        n = s.length;
    }
  }
  addString(s, n);
  slot.s = s;
  slot.sl = n;
  lastStr = s;
  lastLen = n;
  return s;
}

function refString(i: number, at: number, slot: Slot): string {
  if (i >= nstr) fail('bad_reference', at, `string reference ${i} beyond the table`);
  const s = strs[i];
  const n = lens[i];
  slot.s = s;
  slot.sl = n;
  lastStr = s;
  lastLen = n;
  return s;
}

function prefixString(n: number, long: boolean, at: number, slot: Slot): string {
  const lb = byte(at);
  let base: string | null, baseLen: number;
  if (lb & 0x80) {
    base = lastStr;
    baseLen = lastLen;
  } else {
    base = slot.s;
    baseLen = slot.sl;
  }
  const L = lb & 0x7f;
  if (long) n = length(at, 16);
  if (base === null || L === 0 || L > baseLen) fail('bad_reference', at, 'prefix does not fit its base string');
  let head: string;
  if (baseLen === base.length) head = L === baseLen ? base : base.slice(0, L);
  else head = headBytes(base, L, at);
  if (n > end - pos) fail('truncated', at, 'input ends inside an item');
  const s = head + utf8(n, at);
  const total = L + n;
  addString(s, total);
  slot.s = s;
  slot.sl = total;
  lastStr = s;
  lastLen = total;
  return s;
}

/** The first L UTF-8 bytes of a non-ASCII string, which must end on a character boundary. */
function headBytes(base: string, L: number, at: number): string {
  let b = 0;
  for (let i = 0; i < base.length; i++) {
    const c = base.charCodeAt(i);
    let w: number;
    let units = 1;
    if (c < 0x80) w = 1;
    else if (c < 0x800) w = 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      w = 4;
      units = 2;
    } else w = 3;
    if (b + w > L) break;
    b += w;
    i += units - 1;
    if (b === L) return base.slice(0, i + 1);
  }
  return fail('bad_reference', at, 'prefix splits a UTF-8 sequence of its base');
}

// ---------------------------------------------------------------------------
// Timestamp strings and timestamps
// ---------------------------------------------------------------------------

const D2: string[] = [];
for (let i = 0; i < 100; i++) D2.push(i < 10 ? '0' + i : '' + i);
let cachedDay = NaN;
let cachedDate = '';
// character codes of the cached date "YYYY-MM-DD"
let dc0 = 0, dc1 = 0, dc2 = 0, dc3 = 0, dc5 = 0, dc6 = 0, dc8 = 0, dc9 = 0;

function tsSeconds(at: number): number {
  const z = varint(at);
  if (z >= TWO53) fail('invalid_value', at, 'timestamp out of range');
  const s = lastTs + unzigzag(z);
  if (s < MIN_SECONDS || s > MAX_SECONDS) fail('invalid_value', at, 'timestamp out of range');
  lastTs = s;
  return s;
}

const DATE_CACHE = 64;
const dcDays = new Float64Array(DATE_CACHE).fill(NaN);
const dcText: string[] = new Array(DATE_CACHE).fill('');

function dateText(days: number): string {
  if (days === cachedDay) return cachedDate;
  const h = days & (DATE_CACHE - 1);
  if (dcDays[h] === days) return setDate(days, dcText[h]);
  const text = renderDate(days);
  dcDays[h] = days;
  dcText[h] = text;
  return setDate(days, text);
}

function setDate(days: number, text: string): string {
  cachedDay = days;
  cachedDate = text;
  dc0 = text.charCodeAt(0);
  dc1 = text.charCodeAt(1);
  dc2 = text.charCodeAt(2);
  dc3 = text.charCodeAt(3);
  dc5 = text.charCodeAt(5);
  dc6 = text.charCodeAt(6);
  dc8 = text.charCodeAt(8);
  dc9 = text.charCodeAt(9);
  return text;
}

function renderDate(days: number): string {
  const ymd = civilFromDays(days);
  const y = Math.floor(ymd / 10000);
  const md = ymd - y * 10000;
  return (y < 1000 ? ('000' + y).slice(-4) : '' + y) + '-' + D2[Math.floor(md / 100)] + '-' + D2[md % 100];
}

function tsString(t: number, at: number): string {
  let variant: number;
  if (t === Tag.TS_Z0) variant = 0;
  else if (t === Tag.TS_Z3) variant = 3;
  else {
    variant = byte(at);
    if (variant & 0x80 || (variant & 0x0f) > 9 || variant === 0 || variant === 3 || (variant & TSV_DATE_ONLY && variant !== TSV_DATE_ONLY)) {
      fail('invalid_value', at, 'invalid timestamp-string variant');
    }
  }
  const seconds = tsSeconds(at);
  const digits = variant & 0x0f;
  let frac = 0;
  if (digits) {
    frac = varint(at);
    if (frac >= POW10[digits]) fail('invalid_value', at, 'fraction has too many digits');
  }
  let offset = 0;
  if (variant & TSV_NUMERIC_OFFSET) {
    const z = varint(at);
    offset = z >= TWO53 ? MAX_OFFSET + 1 : unzigzag(z);
    if (offset < -MAX_OFFSET || offset > MAX_OFFSET) fail('invalid_value', at, 'offset out of range');
  }
  if (variant & TSV_DATE_ONLY && seconds % 86400 !== 0) fail('invalid_value', at, 'date is not at midnight');
  const local = seconds + offset * 60;
  if (local < MIN_SECONDS || local > MAX_SECONDS) fail('invalid_value', at, 'local time out of range');
  const days = Math.floor(local / 86400);
  const date = dateText(days);
  if (variant & TSV_DATE_ONLY) return date;
  const secs = local - days * 86400;
  const hh = Math.floor(secs / 3600);
  const rem = secs - hh * 3600;
  const mm = Math.floor(rem / 60);
  const ss = rem - mm * 60;
  if (variant === 0 || variant === 3) {
    // the common forms in one flat string: YYYY-MM-DDThh:mm:ss[.fff]Z
    const h1 = (hh / 10) | 0, m1 = (mm / 10) | 0, s1 = (ss / 10) | 0;
    if (variant === 0) {
      return fromCharCode(dc0, dc1, dc2, dc3, 45, dc5, dc6, 45, dc8, dc9, 84, 48 + h1, 48 + hh - 10 * h1, 58, 48 + m1, 48 + mm - 10 * m1, 58, 48 + s1, 48 + ss - 10 * s1, 90);
    }
    const f1 = (frac / 100) | 0, f2 = ((frac / 10) | 0) % 10;
    return fromCharCode(dc0, dc1, dc2, dc3, 45, dc5, dc6, 45, dc8, dc9, 84, 48 + h1, 48 + hh - 10 * h1, 58, 48 + m1, 48 + mm - 10 * m1, 58, 48 + s1, 48 + ss - 10 * s1, 46, 48 + f1, 48 + f2, 48 + (frac % 10), 90);
  }
  let text = date + (variant & TSV_SPACE ? ' ' : 'T') + D2[hh] + ':' + D2[mm] + ':' + D2[ss];
  if (digits) text += '.' + ('00000000' + frac).slice(-digits);
  if (variant & TSV_NUMERIC_OFFSET) {
    const a = offset < 0 ? -offset : offset;
    text += (offset < 0 ? '-' : '+') + D2[Math.floor(a / 60)] + ':' + D2[a % 60];
  } else text += 'Z';
  return text;
}

const ZONES: Zone[] = ['utc', 'offset', 'floating'];

function timestamp(at: number): Date | Timestamp {
  const flags = byte(at);
  const zone = flags >> 1;
  if (zone > 2) fail('invalid_value', at, 'invalid timestamp flags');
  const seconds = tsSeconds(at);
  let nanos = 0;
  if (flags & 1) {
    nanos = varint(at);
    if (nanos < 1 || nanos > 999999999) fail('invalid_value', at, 'nanoseconds out of range');
  }
  let offset = 0;
  if (zone === 1) {
    const z = varint(at);
    offset = z >= TWO53 ? MAX_OFFSET + 1 : unzigzag(z);
    if (offset < -MAX_OFFSET || offset > MAX_OFFSET) fail('invalid_value', at, 'offset out of range');
    const local = seconds + offset * 60;
    if (local < MIN_SECONDS || local > MAX_SECONDS) fail('invalid_value', at, 'local time out of range');
  }
  if (zone === 0 && !datesAlways && nanos % 1000000 === 0) return new Date(seconds * 1000 + nanos / 1000000);
  return new Timestamp(seconds, nanos, ZONES[zone], offset);
}

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

// Integers beyond 2^53 are handled as 32-bit halves (a signed high word),
// with one BigInt made for the result: BigInt arithmetic allocates for every
// operation (six per 64-bit id).
const TWO32 = 4294967296;
const int64Scratch = new BigInt64Array(1);
const uint64Scratch = new BigUint64Array(int64Scratch.buffer);
const halves = new Uint32Array(int64Scratch.buffer);
const LO = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HI = 1 - LO;

/** The int64 h * 2^32 + l (h signed, l unsigned) as a BigInt. */
function bigOf(h: number, l: number): bigint {
  halves[LO] = l;
  halves[HI] = h;
  return int64Scratch[0];
}

function varBigOf(v: number): bigint {
  if (v < TWO53) return BigInt(v);
  halves[LO] = varLo;
  halves[HI] = varHi;
  return uint64Scratch[0];
}

/** Sets the slot's int register and returns the value of the int64 h * 2^32 + l. */
function int64Result(slot: Slot, h: number, l: number): number | bigint {
  if (h >= -2097152 && h < 2097152) {
    const n = h * TWO32 + l;
    if (n >= -9007199254740991 && n <= 9007199254740991) {
      slot.ik = 1;
      slot.i = n;
      return bigints ? BigInt(n) : n;
    }
  }
  slot.ik = 2;
  slot.ih = h;
  slot.il = l;
  return bigOf(h, l);
}

/** The halves of the last varint v. */
function splitVar(v: number): void {
  if (v < TWO53) {
    varHi = Math.floor(v / TWO32);
    varLo = v - varHi * TWO32;
  }
}

function intPos(at: number, slot: Slot): number | bigint {
  const v = varint(at);
  if (v < TWO53 - 24) {
    const n = v + 24;
    slot.ik = 1;
    slot.i = n;
    return bigints ? BigInt(n) : n;
  }
  splitVar(v);
  let l = varLo + 24;
  let h = varHi;
  if (l >= TWO32) {
    l -= TWO32;
    h++;
  }
  if (h >= TWO32) fail('invalid_value', at, 'integer out of range');
  if (h < 0x80000000) return int64Result(slot, h, l);
  // beyond int64: the register keeps its value
  halves[LO] = l;
  halves[HI] = h;
  return uint64Scratch[0];
}

function intNeg(at: number, slot: Slot): number | bigint {
  const v = varint(at);
  if (v < TWO53 - 9) {
    const n = -9 - v;
    slot.ik = 1;
    slot.i = n;
    return bigints ? BigInt(n) : n;
  }
  splitVar(v);
  // n = -(v + 9)
  let l = varLo + 9;
  let h = varHi;
  if (l >= TWO32) {
    l -= TWO32;
    h++;
  }
  if (h > 0x80000000 || (h === 0x80000000 && l !== 0)) fail('invalid_value', at, 'integer out of range');
  return l === 0 ? int64Result(slot, -h, 0) : int64Result(slot, -h - 1, TWO32 - l);
}

function intDelta(at: number, slot: Slot): number | bigint {
  if (slot.ik === 0) fail('bad_reference', at, 'integer delta without a previous integer');
  const z = varint(at);
  if (slot.ik === 1 && z < TWO53) {
    const n = slot.i + unzigzag(z);
    if (n >= -9007199254740991 && n <= 9007199254740991) {
      slot.i = n;
      return bigints ? BigInt(n) : n;
    }
  }
  splitVar(z);
  // d = unzigzag(z) as halves
  const hh = varHi >>> 1;
  const hl = ((varLo >>> 1) | ((varHi & 1) << 31)) >>> 0;
  let dh: number, dl: number;
  if (varLo & 1) {
    dh = ~hh;
    dl = ~hl >>> 0;
  } else {
    dh = hh;
    dl = hl;
  }
  let rh: number, rl: number;
  if (slot.ik === 1) {
    rh = Math.floor(slot.i / TWO32);
    rl = slot.i - rh * TWO32;
  } else {
    rh = slot.ih;
    rl = slot.il;
  }
  let l = rl + dl;
  let h = rh + dh;
  if (l >= TWO32) {
    l -= TWO32;
    h++;
  }
  if (h < -2147483648 || h > 2147483647) fail('invalid_value', at, 'integer delta leaves int64');
  return int64Result(slot, h, l);
}

function bigInteger(t: number, at: number): number | bigint {
  const n = length(at, 0);
  const p = pos;
  pos += n;
  if (n === 0 || src[p + n - 1] === 0) fail('invalid_value', at, 'big integer magnitude not minimal');
  // through hex: shifting in a byte at a time copies the number for each byte
  const digits: string[] = new Array(n);
  for (let i = 0; i < n; i++) digits[i] = HEX_BYTE[src[p + n - 1 - i]];
  const mag = BigInt('0x' + digits.join(''));
  if (t === Tag.BIGINT_POS) {
    if (mag <= UINT64_MAX) fail('invalid_value', at, 'big integer fits a native form');
    return mag;
  }
  if (mag <= -INT64_MIN) fail('invalid_value', at, 'big integer fits a native form');
  return -mag;
}

function floatResult(v: number): number | Float64 {
  if (exactFloats && Number.isInteger(v) && !(v === 0 && 1 / v < 0)) return new Float64(v);
  return v;
}

function decimal(t: number, at: number, slot: Slot): number | Float64 {
  let e: number;
  let m: number;
  if (t === Tag.DEC_DELTA) {
    if (!slot.dk) fail('bad_reference', at, 'decimal delta without a previous decimal');
    const z = varint(at);
    e = slot.de;
    if (z < TWO53) m = slot.dm + unzigzag(z);
    else m = TWO53; // |delta| >= 2^52 and the result must stay below 2^53: checked exactly below
    if (m >= TWO53 || m <= -TWO53 || z >= TWO53) {
      const zb = varBigOf(z);
      const d = zb & 1n ? -((zb + 1n) >> 1n) : zb >> 1n;
      const mb = BigInt(slot.dm) + d;
      if (mb >= 9007199254740992n || mb <= -9007199254740992n) fail('invalid_value', at, 'decimal mantissa out of range');
      m = Number(mb);
    }
  } else {
    if (t === Tag.DEC_X) {
      let x = byte(at);
      if (x >= 128) x -= 256;
      if (x < -22 || x > 22 || (x >= -12 && x <= 3)) fail('invalid_value', at, 'decimal exponent out of range');
      e = x;
    } else e = t - (Tag.DEC0 - Short.DEC_EXP_MIN);
    const z = varint(at);
    if (z < 0x80000000) m = (z >>> 1) ^ -(z & 1);
    else if (z < TWO53) m = unzigzag(z);
    else {
      // |m| < 2^53 means z <= 2^54 - 2
      const vb = varBigOf(z);
      if (vb > 18014398509481982n) fail('invalid_value', at, 'decimal mantissa out of range');
      m = Number(vb & 1n ? -((vb + 1n) >> 1n) : vb >> 1n);
    }
  }
  slot.dk = true;
  slot.dm = m;
  slot.de = e;
  const v = e >= 0 ? m * POW10[e] : m / POW10[-e];
  return exactFloats ? floatResult(v) : v;
}

function f32(at: number): number | Float64 {
  if (pos + 4 > end) fail('truncated', at, 'input ends inside an item');
  const bits = (src[pos] | (src[pos + 1] << 8) | (src[pos + 2] << 16) | (src[pos + 3] << 24)) >>> 0;
  pos += 4;
  if ((bits & 0x7f800000) === 0x7f800000 && bits & 0x007fffff) {
    // NaN: widen by bits so sign, payload and quiet bit survive
    const wide = (BigInt(bits & 0x80000000) << 32n) | (0x7ffn << 52n) | (BigInt(bits & 0x007fffff) << 29n);
    return nanResult(wide);
  }
  scratchU32[0] = bits;
  const v = scratchF32[0];
  return exactFloats ? floatResult(v) : v;
}
const scratch = new ArrayBuffer(8);
const scratchU32 = new Uint32Array(scratch);
const scratchF32 = new Float32Array(scratch);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function f64(at: number): number | Float64 {
  if (pos + 8 > end) fail('truncated', at, 'input ends inside an item');
  const p = pos;
  pos += 8;
  if (dvSrc !== src) {
    dvSrc = src;
    dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  }
  const v = dv.getFloat64(p, true);
  if (v !== v) return nanResult(dv.getBigUint64(p, true));
  return exactFloats ? floatResult(v) : v;
}

function nanResult(bits: bigint): number | Float64 {
  if (exactFloats && bits !== 0x7ff8000000000000n) return Float64.fromBits(bits);
  return NaN;
}

// ---------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------

/** An array of n items; the caller checked the depth before reading the count (SPEC 10 order). */
function array(n: number, at: number, slot: Slot): unknown {
  if (depth >= RECURSION_DEPTH) return nestArray(n, slot, depth);
  depth++;
  let a: unknown[];
  // small arrays as literals: packed and exactly sized (elements are read left to right)
  switch (n) {
    case 0:
      a = [];
      break;
    case 1:
      a = [read(slot)];
      break;
    case 2:
      a = [read(slot), read(slot)];
      break;
    case 3:
      a = [read(slot), read(slot), read(slot)];
      break;
    case 4:
      a = [read(slot), read(slot), read(slot), read(slot)];
      break;
    default:
      a = [];
      for (let i = 0; i < n; i++) {
        // Binary floats (embeddings, measurements) are read here: a call to
        // read() per element returns each as a boxed number, which was half of
        // decoding an array of F32s. NaN, infinities, exactFloats and short
        // input take read()'s path.
        const t = src[pos];
        if (t === Tag.F32 && !exactFloats && pos + 5 <= end) {
          const bits = (src[pos + 1] | (src[pos + 2] << 8) | (src[pos + 3] << 16) | (src[pos + 4] << 24)) >>> 0;
          if ((bits & 0x7f800000) !== 0x7f800000) {
            scratchU32[0] = bits;
            a.push(scratchF32[0]);
            pos += 5;
            continue;
          }
        } else if (t === Tag.F64 && !exactFloats && pos + 9 <= end) {
          if (dvSrc !== src) {
            dvSrc = src;
            dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
          }
          const v = dv.getFloat64(pos + 1, true);
          if (v - v === 0) {
            a.push(v);
            pos += 9;
            continue;
          }
        }
        a.push(read(slot));
      }
  }
  depth--;
  return a;
}

function shapeRef(i: number, at: number): unknown {
  if (depth >= maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
  if (i >= nshape) fail('bad_reference', at, `shape reference ${i} beyond the table`);
  const shape = shapes[i];
  if (shape.gen !== gen) {
    for (const s of shape.slots) resetSlot(s);
    shape.gen = gen;
  }
  if (shape.info.n > end - pos) fail('length_exceeds_input', at, 'shape has more values than input remains');
  return depth < RECURSION_DEPTH ? mapValues(shape.info, shape.slots) : nestShaped(shape.info, shape.slots, depth);
}

const keyBuf: (string | symbol)[] = [];

// Bounds of the MAPDEF memo: at most 1024 x 16 entries of at most 512 key bytes (8 MiB).
// Each index keeps the shapes of as many message types: a decoder that meets
// more types than that, in turn, misses every time, so the bound is set well
// above the number of message types a service usually rotates through.
const MEMO_INDICES = 1024;
const MEMO_PER_INDEX = 16;
const MEMO_RAW_MAX = 512;
const keyOffs: number[] = [];
const keyKinds: number[] = [];
const keyLens: number[] = [];
let keyKind = 0; // of the last key read: -1 inline string, >= 0 reference index, -2 other

/**
 * Per-decoder memo of the MAPDEFs met at one shape-table index: the shape
 * info, and the raw bytes of the key items when those were only inline
 * strings and references, so that a byte-identical MAPDEF (the common case
 * when messages of one type are decoded one after another) skips decoding
 * its keys.
 */
class MemoEntry {
  info: ShapeInfo;
  n: number;
  /** rawWords[0], or -1 when raw is null or shorter than 4 bytes: a candidate filter of one comparison. */
  head = -1;
  raw: Uint8Array | null = null;
  rawWords: Uint32Array | null = null;
  kinds: number[] = [];
  lens: number[] = [];
  constructor(info: ShapeInfo) {
    this.info = info;
    this.n = info.n;
  }
}

function readKey(kat: number): string | symbol {
  if (kat >= end) fail('truncated', kat, 'input ends before an item');
  let kt = src[pos++];
  if (kt < Tag.STR0) {
    keyKind = kt;
    return refString(kt, kat, keySlot);
  }
  if (kt < Tag.SHAPE0) {
    keyKind = -1;
    const kn = kt - Tag.STR0;
    if (kn > end - pos) fail('truncated', kat, 'input ends inside a string');
    const ks = cachedAscii(kn, kat);
    if (kn >= 2 && nstr < MAX_STRINGS) {
      strs[nstr] = ks;
      lens[nstr] = kn;
      nstr++;
    }
    keySlot.s = ks;
    keySlot.sl = lastLen = kn;
    lastStr = ks;
    return ks;
  }
  if (kt === Tag.SYMBOL) {
    const sat = pos;
    if (sat >= end) fail('truncated', sat, 'input ends before an item');
    kt = src[pos++];
    if (!isStringTag(kt)) fail('expected_string', sat, 'a symbol name must be a string');
    keyKind = -2;
    return Symbol.for(readString(kt, sat, keySlot));
  }
  if (!isStringTag(kt)) fail('expected_string', kat, 'a map key must be a string or symbol');
  // A prefix key is context-free within a MAPDEF when its base is the key
  // before it (both registers then hold that key): mapDef marks it -1 then.
  keyKind = kt >= Tag.PFX0 && kt < Tag.DEC0 ? -3 : -2;
  return readString(kt, kat, keySlot);
}

/** The fast path of mapDef: a memo entry whose raw key bytes match; applies their state updates. */
function matchRaw(cands: MemoEntry[], n: number): MemoEntry | null {
  const start = pos;
  const avail = end - start;
  if (dvSrc !== src) {
    dvSrc = src;
    dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  }
  const head = avail >= 4 ? dv.getUint32(start, littleEndian) : -2;
  for (let c = 0; c < cands.length; c++) {
    const e = cands[c];
    if (e.n !== n || (e.head !== head && e.head !== -1)) continue;
    const raw = e.raw;
    if (raw === null) continue;
    const R = raw.length;
    if (R > avail) continue;
    // compare four bytes at a time (rawWords is raw, padded, in native order)
    const w = e.rawWords!;
    const R4 = R & ~3;
    let j = 0;
    while (j < R4 && dv.getUint32(start + j, littleEndian) === w[j >> 2]) j += 4;
    if (j < R4) continue;
    while (j < R && src[start + j] === raw[j]) j++;
    if (j !== R) continue;
    const kinds = e.kinds;
    const keys = e.info.keys as string[];
    let ok = true;
    for (let k = 0; k < n; k++) {
      const r = kinds[k];
      if (r >= 0 && (r >= nstr || strs[r] !== keys[k])) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    const lns = e.lens;
    for (let k = 0; k < n; k++) {
      if (kinds[k] === -1 && lns[k] >= 2 && nstr < MAX_STRINGS) {
        strs[nstr] = keys[k];
        lens[nstr] = lns[k];
        nstr++;
      }
    }
    if (n > 0) {
      keySlot.s = lastStr = keys[n - 1];
      keySlot.sl = lastLen = lns[n - 1];
    }
    pos = start + R;
    if (c > 0) {
      cands[c] = cands[0];
      cands[0] = e;
    }
    return e;
  }
  return null;
}

/** Fails with duplicate_key at the first key (of the first `count`) that repeats an earlier one. */
function checkDuplicateKeys(keys: (string | symbol)[], offs: number[], count: number): void {
  if (count > 16) {
    const seen = new Set<string | symbol>();
    for (let j = 0; j < count; j++) {
      if (seen.has(keys[j])) fail('duplicate_key', offs[j], 'key repeated in a shape');
      seen.add(keys[j]);
    }
    return;
  }
  for (let j = 1; j < count; j++) {
    const k = keys[j];
    for (let i = 0; i < j; i++) if (keys[i] === k) fail('duplicate_key', offs[j], 'key repeated in a shape');
  }
}

function mapDef(n: number, at: number): unknown {
  if (depth >= maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
  if (n < 0) n = length(at, 16);
  if (2 * n > end - pos) fail('length_exceeds_input', at, 'count exceeds the remaining input');
  const idx = nshape;
  const cands = memo[idx];
  let info: ShapeInfo | undefined;
  const hit = cands !== undefined ? matchRaw(cands, n) : null;
  if (hit !== null) info = hit.info;
  else {
    const small = n <= 16;
    const keys = small ? keyBuf : new Array<string | symbol>(n);
    const offs = small ? keyOffs : new Array<number>(n);
    const kinds = small ? keyKinds : new Array<number>(n);
    const klens = small ? keyLens : new Array<number>(n);
    const start = pos;
    let i = 0;
    try {
      for (; i < n; i++) {
        const kat = pos;
        offs[i] = kat;
        keys[i] = readKey(kat);
        kinds[i] = keyKind === -3 ? (i > 0 ? -1 : -2) : keyKind;
        klens[i] = lastLen;
      }
    } catch (e) {
      // a duplicate among the keys before the failing one is the first defect
      checkDuplicateKeys(keys, offs, i);
      throw e;
    }
    // Shape info: the per-decoder memo (recent shapes defined at this table
    // index), then the global cache.
    let entry: MemoEntry | undefined;
    if (cands !== undefined) {
      for (let c = 0; c < cands.length; c++) {
        const x = cands[c];
        if (x.info.n === n && sameKeys(x.info.keys, keys, n)) {
          entry = x;
          if (c > 0) {
            cands[c] = cands[0];
            cands[0] = x;
          }
          break;
        }
      }
    }
    if (entry === undefined) {
      // memo entries were checked when created; a new key sequence is checked here
      checkDuplicateKeys(keys, offs, n);
      entry = new MemoEntry(getInfo(keys.slice(0, n)));
      if (idx < MEMO_INDICES) {
        if (cands === undefined) memo[idx] = [entry];
        else {
          if (cands.length >= MEMO_PER_INDEX) cands.pop();
          cands.unshift(entry);
        }
      }
    }
    info = entry.info;
    let plain = pos - start <= MEMO_RAW_MAX;
    for (let k = 0; k < n && plain; k++) if (kinds[k] === -2) plain = false;
    if (plain) {
      const R = pos - start;
      const padded = new Uint8Array((R + 3) & ~3);
      padded.set(src.subarray(start, pos));
      entry.raw = padded.subarray(0, R);
      entry.rawWords = new Uint32Array(padded.buffer);
      entry.head = R >= 4 ? entry.rawWords[0] : -1;
      entry.kinds = kinds.slice(0, n);
      entry.lens = klens.slice(0, n);
    } else {
      entry.raw = null;
      entry.head = -1;
    }
  }
  let slots: Slot[];
  if (nshape < MAX_SHAPES) {
    let shape = shapes[idx];
    if (shape === undefined || shape.gen === gen) {
      // a table entry from an unrelated earlier decode is recycled below
      shape = new DShape(info, gen);
      shapes[idx] = shape;
    } else {
      shape.info = info;
      shape.gen = gen;
      const sl = shape.slots;
      if (sl.length < n) for (let i = sl.length; i < n; i++) sl.push(new Slot());
      else if (sl.length > n) sl.length = n;
      for (let i = 0; i < n; i++) resetSlot(sl[i]);
    }
    nshape++;
    slots = shape.slots;
  } else {
    slots = [];
    for (let i = 0; i < n; i++) slots.push(new Slot());
  }
  return depth < RECURSION_DEPTH ? mapValues(info, slots) : nestShaped(info, slots, depth);
}

function sameKeys(a: (string | symbol)[], b: (string | symbol)[], n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Counts a use of a shape without a factory; true once it has recurred closely enough to compile one. */
function hot(info: ShapeInfo): boolean {
  const t = ++shapeClock;
  if (t - info.last < HOT_GAP) info.uses++;
  info.last = t;
  return info.uses > COMPILE_AFTER;
}

function mapValues(info: ShapeInfo, slots: Slot[]): unknown {
  depth++;
  let out: unknown;
  if (info.asObject && !mapsAlways) {
    const f = info.factory;
    if (f !== null) out = f(read, slots);
    else if (hot(info) && canEval) {
      info.factory = compileFactory(info);
      out = info.factory(read, slots);
    } else {
      const keys = info.keys as string[];
      const o: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        const v = read(slots[i]);
        if (k === '__proto__') defineOwn(o, k, v);
        else o[k] = v;
      }
      out = o;
    }
  } else {
    const keys = info.keys;
    const m = new Map<unknown, unknown>();
    for (let i = 0; i < keys.length; i++) m.set(keys[i], read(slots[i]));
    out = m;
  }
  depth--;
  return out;
}

/** A data property even for "__proto__" (whose assignment would set the prototype). */
export function defineOwn(o: object, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
}

/** @internal The shaped map of these values (all read), as mapValues builds it. */
export function shapedValue(info: ShapeInfo, values: unknown[]): unknown {
  const keys = info.keys;
  if (info.asObject && !mapsAlways) {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      if (k === '__proto__') defineOwn(o, k, values[i]);
      else o[k] = values[i];
    }
    return o;
  }
  const m = new Map<unknown, unknown>();
  for (let i = 0; i < keys.length; i++) m.set(keys[i], values[i]);
  return m;
}

/** @internal For decoder-deep.ts, which keeps the nesting depth of the levels it decodes. */
export function setDepth(d: number): void {
  depth = d;
}

/** @internal The tag of the next item, or -1 at the end of the input. */
export function nextTag(): number {
  return pos < end ? src[pos] : -1;
}

/** @internal Sets exactFloats; returns the previous setting. */
export function setExactFloats(on: boolean): boolean {
  const was = exactFloats;
  exactFloats = on;
  return was;
}

function genericMap(at: number, slot: Slot): unknown {
  // depth first: the tag's defect comes before its count's (SPEC 10, left to right)
  if (depth >= maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
  const n = length(at, 0);
  if (2 * n > end - pos) fail('length_exceeds_input', at, 'count exceeds the remaining input');
  if (depth >= RECURSION_DEPTH) return nestGenericMap(n, at, slot, depth);
  depth++;
  const b = new MapBuilder(at);
  for (let i = 0; i < n; i++) {
    const t = pos < end ? src[pos] : -1;
    let k: unknown;
    if (exactKeyTag(t)) {
      const ef = exactFloats;
      exactFloats = true;
      try {
        k = read(slot);
      } finally {
        exactFloats = ef;
      }
    } else k = read(slot);
    b.key(t, k);
    b.vs.push(read(slot));
  }
  depth--;
  return b.result();
}

// ---------------------------------------------------------------------------
// Items
// ---------------------------------------------------------------------------

/** @internal Reads one item (containers below RECURSION_DEPTH recursively, deeper ones through decoder-deep.ts). */
export function read(slot: Slot): unknown {
  const at = pos;
  if (at >= end) fail('truncated', at, 'input ends before an item');
  const t = src[pos++];
  if (t < 0x80) {
    if (t < Tag.STR0) {
      if (t >= nstr) fail('bad_reference', at, `string reference ${t} beyond the table`);
      const s = strs[t];
      slot.s = s;
      slot.sl = lastLen = lens[t];
      lastStr = s;
      return s;
    }
    if (t < Tag.SHAPE0) {
      const n = t - Tag.STR0;
      if (n > end - pos) fail('truncated', at, 'input ends inside a string');
      const s = utf8(n, at);
      if (n >= 2 && nstr < MAX_STRINGS) {
        strs[nstr] = s;
        lens[nstr] = n;
        nstr++;
      }
      slot.s = s;
      slot.sl = lastLen = n;
      lastStr = s;
      return s;
    }
    return shapeRef(t - Tag.SHAPE0, at);
  }
  if (t < Tag.PFX0) {
    if (t < Tag.MAPDEF0) {
      const n = t - Tag.ARR0;
      if (depth >= maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
      if (n > end - pos) fail('length_exceeds_input', at, 'count exceeds the remaining input');
      return array(n, at, slot);
    }
    if (t < Tag.INT0) return mapDef(t - Tag.MAPDEF0, at);
    const v = t - (Tag.INT0 - Short.INT_MIN);
    slot.ik = 1;
    slot.i = v;
    return bigints ? BigInt(v) : v;
  }
  if (t < Tag.NULL) {
    if (t < Tag.DEC0) return prefixString(t - Tag.PFX0, false, at, slot);
    return decimal(t, at, slot);
  }
  switch (t) {
    case Tag.NULL:
      return null;
    case Tag.FALSE:
      return false;
    case Tag.TRUE:
      return true;
    case Tag.F32:
      return f32(at);
    case Tag.F64:
      return f64(at);
    case Tag.INT_POS:
      return intPos(at, slot);
    case Tag.INT_NEG:
      return intNeg(at, slot);
    case Tag.INT_DELTA:
      return intDelta(at, slot);
    case Tag.DEC_X:
    case Tag.DEC_DELTA:
      return decimal(t, at, slot);
    case Tag.BIGINT_POS:
    case Tag.BIGINT_NEG:
      return bigInteger(t, at);
    case Tag.STR_LONG:
    case Tag.REF8:
    case Tag.REF16:
    case Tag.REF24:
    case Tag.PFX_LONG:
    case Tag.TS_STR:
    case Tag.TS_Z0:
    case Tag.TS_Z3:
      return readString(t, at, slot);
    case Tag.SHAPE8:
      return shapeRef(SHAPE8_BASE + byte(at), at);
    case Tag.SHAPE16: {
      if (pos + 2 > end) fail('truncated', at, 'input ends inside an item');
      const i = SHAPE16_BASE + (src[pos] | (src[pos + 1] << 8));
      pos += 2;
      return shapeRef(i, at);
    }
    case Tag.ARR_LONG:
      if (depth >= maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
      return array(length(at, 16), at, slot);
    case Tag.MAPDEF_LONG:
      return mapDef(-1, at);
    case Tag.MAP_GEN:
      return genericMap(at, slot);
    case Tag.BIN: {
      const n = length(at, 0);
      const p = pos;
      pos += n;
      return binaryViews ? src.subarray(p, p + n) : src.slice(p, p + n);
    }
    case Tag.EXT: {
      const type = varint(at);
      if (type > MAX_EXT_TYPE) fail('invalid_value', at, 'extension type out of range');
      const n = length(at, 0);
      const p = pos;
      pos += n;
      const data = src.slice(p, p + n);
      lastExtType = type;
      lastExtData = data;
      if (type > EXT_APP_MAX) return readWellKnown(type, data, at);
      const ext = extByType.get(type);
      if (ext !== undefined && ext.read !== undefined) return ext.read(data);
      return new Ext(type, data);
    }
    case Tag.SYMBOL: {
      const sat = pos;
      if (sat >= end) fail('truncated', sat, 'input ends before an item');
      const st = src[pos++];
      if (!isStringTag(st)) fail('expected_string', sat, 'a symbol name must be a string');
      return Symbol.for(readString(st, sat, slot));
    }
    case Tag.TIME:
      return timestamp(at);
  }
  return fail('invalid_tag', at, `reserved tag 0x${t.toString(16)}`);
}

// ---------------------------------------------------------------------------
// Buffers
// ---------------------------------------------------------------------------

interface Saved {
  src: Uint8Array;
  pos: number;
  end: number;
  strs: string[];
  lens: number[];
  nstr: number;
  shapes: DShape[];
  nshape: number;
  gen: number;
  lastStr: string | null;
  lastLen: number;
  lastTs: number;
  depth: number;
  maxDepth: number;
  keySlot: Slot;
  exactFloats: boolean;
  mapsAlways: boolean;
  datesAlways: boolean;
  bigints: boolean;
  binaryViews: boolean;
  memo: (MemoEntry[] | undefined)[];
  levels: ReturnType<typeof suspendLevels>;
}

function save(): Saved {
  return { src, pos, end, strs, lens, nstr, shapes, nshape, gen, lastStr, lastLen, lastTs, depth, maxDepth, keySlot, exactFloats, mapsAlways, datesAlways, bigints, binaryViews, memo, levels: suspendLevels() };
}

function restore(s: Saved): void {
  ({ src, pos, end, strs, lens, nstr, shapes, nshape, gen, lastStr, lastLen, lastTs, depth, maxDepth, keySlot, exactFloats, mapsAlways, datesAlways, bigints, binaryViews, memo } = s);
  resumeLevels(s.levels);
}

/** Parses the header at the start of src for a single-value or a stream decoder; returns flags. */
function header(dicts: Map<bigint, DictState>, stream: boolean): { flags: number; dict: DictState | null } {
  const n = src.length;
  if ((n >= 1 && src[0] !== 0xc1) || (n >= 2 && src[1] !== 0x70)) fail('bad_magic', 0, 'not a Tersa buffer');
  if (n < 3) fail('truncated', 0, 'input ends inside the header');
  const vf = src[2];
  if (vf >> 4 !== 1) fail('unsupported_version', 2, `version ${vf >> 4}`);
  const flags = vf & 0x0f;
  if (flags & ~(FLAG_DICT | FLAG_STREAM)) fail('bad_flags', 2, 'reserved header flag set');
  // The flags byte precedes the dictionary id: its defects are reported first (SPEC 10).
  if (!(flags & FLAG_STREAM) !== !stream) fail('bad_flags', 2, stream ? 'not a stream buffer' : 'a stream buffer: use decodeStream');
  pos = 3;
  let dict: DictState | null = null;
  if (flags & FLAG_DICT) {
    if (n < 11) fail('truncated', 3, 'input ends inside the dictionary id');
    let id = 0n;
    for (let i = 10; i >= 3; i--) id = (id << 8n) | BigInt(src[i]);
    pos = 11;
    dict = dicts.get(id) ?? null;
    if (dict === null) fail('unknown_dictionary', 3, `dictionary 0x${id.toString(16).padStart(16, '0')} was not supplied`);
  }
  return { flags, dict };
}

function startTables(d: Decoder, dict: DictState | null, ks: Slot): void {
  gen++;
  if (dict !== null) {
    strs = dict.strs;
    lens = dict.lens;
    nstr = dict.nstr;
    shapes = dict.shapes;
    nshape = dict.nshape;
  } else {
    strs = d._strs;
    lens = d._lens;
    nstr = 0;
    shapes = d._shapes;
    nshape = 0;
  }
  lastStr = null;
  lastLen = 0;
  lastTs = 0;
  depth = 0;
  resetSlot(ks);
  keySlot = ks;
}

/** @internal */
export function asBytes(input: Uint8Array | ArrayBuffer | ArrayLike<number>): Uint8Array {
  if (input instanceof Uint8Array) {
    // subclasses such as Buffer have a slice() that does not copy
    return input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  }
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  const tag = Object.prototype.toString.call(input);
  if (tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]') return new Uint8Array(input as unknown as ArrayBuffer);
  if (Array.isArray(input)) {
    const out = Uint8Array.from(input as number[]);
    for (let i = 0; i < out.length; i++) {
      const b = (input as unknown[])[i];
      if (b !== out[i]) throw new TypeError(`Tersa input must be bytes: element ${i} of the array is not an integer 0..255`);
    }
    return out;
  }
  const what = input === null ? 'null' : typeof input === 'object' ? `${(input as object).constructor?.name ?? 'object'}` : typeof input;
  throw new TypeError(`Tersa input must be a Uint8Array, an ArrayBuffer or a view of one, not ${what}`);
}

/** A reusable decoder: keeps its tables' storage and shape memo between calls. */
export class Decoder {
  readonly options: Readonly<DecoderOptions>;
  /** @internal */ _strs: string[] = [];
  /** @internal */ _lens: number[] = [];
  /** @internal */ _shapes: DShape[] = [];
  /** @internal */ _memo: (MemoEntry[] | undefined)[] = [];
  /** @internal */ _dicts = new Map<bigint, DictState>();
  /** @internal */ _maxDepth: number;

  constructor(options: DecoderOptions = {}) {
    checkOptions(options, DECODER_OPTIONS, 'decode');
    this.options = options;
    this._maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    for (const d of dictionaryList(options.dictionaries)) this._dicts.set(d.id, new DictState(d));
  }

  /** @internal */
  _enter(): Saved | null {
    const saved = active ? save() : null;
    active = true;
    winSrc = null; // the input may be a reused buffer with new content (a DataView needs no reset)
    const o = this.options;
    maxDepth = this._maxDepth;
    exactFloats = !!o.exactFloats;
    mapsAlways = o.maps === 'map';
    datesAlways = o.dates === 'timestamp';
    bigints = o.integers === 'bigint';
    binaryViews = !!o.binaryViews;
    memo = this._memo;
    return saved;
  }

  /** @internal */
  _leave(saved: Saved | null): void {
    src = EMPTY;
    if (saved) restore(saved);
    else {
      active = false;
      resetKeyIds();
      lastExtData = EMPTY;
    }
  }

  /** @internal */ _busy = false;
  /** @internal */ _root = new Slot();
  /** @internal */ _keySlot = new Slot();

  /** Decodes a single-value buffer. */
  decode(input: Uint8Array | ArrayBuffer): any {
    // A nested call on the same decoder (from an extension's read) gets its own tables.
    if (this._busy) return new Decoder(this.options).decode(input);
    this._busy = true;
    const saved = this._enter();
    try {
      src = asBytes(input);
      pos = 0;
      end = src.length;
      const { dict } = header(this._dicts, false);
      startTables(this, dict, this._keySlot);
      const root = this._root;
      resetSlot(root);
      const v = read(root);
      if (pos !== end) fail('trailing_bytes', pos, 'bytes after the value');
      return v;
    } finally {
      this._busy = false;
      // do not keep the strings of a huge buffer alive
      if (this._strs.length > 65536) {
        this._strs = [];
        this._lens = [];
      }
      if (this._shapes.length > 65536) this._shapes = [];
      this._leave(saved);
    }
  }

  /**
   * Decodes a whole stream buffer into the array of its values. With
   * `join: true` the input is frames from a frame boundary on, without a
   * header (SPEC 2.3 "Joining a stream"): see `joinStream`.
   */
  decodeStream(input: Uint8Array | ArrayBuffer, options?: StreamOptions): any[] {
    return this._frames(input, !!options?.join).values;
  }

  /**
   * Decodes frames that start at a frame boundary of a stream, without its
   * header: frames before the first sync frame are skipped. `joinedAt` is the
   * offset of that sync frame's length varint, or null if none came.
   */
  joinStream(input: Uint8Array | ArrayBuffer): JoinResult {
    return this._frames(input, true);
  }

  /** @internal */
  _frames(input: Uint8Array | ArrayBuffer, join: boolean): JoinResult {
    const sd = new StreamDecoder(this, { join });
    sd.feed(asBytes(input));
    const values = [...sd];
    sd.end();
    return { joinedAt: sd.joinedAt, values };
  }
}

const EMPTY = new Uint8Array(0);

// ---------------------------------------------------------------------------
// Stream frames: the hooks of stream-decoder.ts into the hot state
// ---------------------------------------------------------------------------

/** @internal The decoder state a stream carries from frame to frame (SPEC 4). */
export interface StreamState {
  strs: string[];
  lens: number[];
  nstr: number;
  shapes: DShape[];
  nshape: number;
  gen: number;
  lastStr: string | null;
  lastLen: number;
  lastTs: number;
  keySlot: Slot;
  root: Slot;
}

/**
 * @internal The start-of-buffer state (SPEC 2.3: a sync frame restores it):
 * `st` reset in place, or a new state. The stream's tables are its own, not
 * the Decoder's or the dictionary's, since other buffers decoded in between
 * must not touch them.
 */
export function syncStreamState(st: StreamState | null, dict: DictState | null): StreamState {
  // above every generation the stream's shapes carry: their slots reset on first use
  const g = (gen = Math.max(gen, st === null ? 0 : st.gen) + 1);
  const ns = dict === null ? 0 : dict.nstr;
  const nsh = dict === null ? 0 : dict.nshape;
  if (st === null) {
    return {
      strs: dict === null ? [] : dict.strs.slice(0, ns),
      lens: dict === null ? [] : dict.lens.slice(0, ns),
      nstr: ns,
      shapes: dict === null ? [] : dict.shapes.slice(0, nsh).map((s) => new DShape(s.info, g)),
      nshape: nsh,
      gen: g,
      lastStr: null,
      lastLen: 0,
      lastTs: 0,
      keySlot: new Slot(),
      root: new Slot(),
    };
  }
  // Entries past the dictionary's are dropped, not just hidden: a long-lived
  // stream then holds no more than one stretch between sync frames needs.
  st.strs.length = st.lens.length = st.nstr = ns;
  st.shapes.length = st.nshape = nsh;
  st.gen = g;
  st.lastStr = null;
  st.lastLen = 0;
  st.lastTs = 0;
  resetSlot(st.keySlot);
  resetSlot(st.root);
  return st;
}

/** @internal The length varint of the frame at `at` (SPEC 3.1 errors); `framePos()` is then just past it. */
export function frameLength(input: Uint8Array, at: number, limit: number): number {
  src = input;
  pos = at;
  end = limit;
  return varint(at);
}

/** @internal */
export function framePos(): number {
  return pos;
}

/** @internal Decodes the item filling input[from, to) in the stream's state. Between `_enter` and `_leave`. */
export function readFrame(st: StreamState, input: Uint8Array, from: number, to: number): unknown {
  src = input;
  pos = from;
  end = to;
  strs = st.strs;
  lens = st.lens;
  nstr = st.nstr;
  shapes = st.shapes;
  nshape = st.nshape;
  gen = st.gen;
  lastStr = st.lastStr;
  lastLen = st.lastLen;
  lastTs = st.lastTs;
  keySlot = st.keySlot;
  depth = 0;
  const v = read(st.root);
  if (pos !== end) fail('trailing_bytes', pos, 'bytes after the value in its frame');
  st.nstr = nstr;
  st.nshape = nshape;
  st.lastStr = lastStr;
  st.lastLen = lastLen;
  st.lastTs = lastTs;
  return v;
}

let defaultDecoder: Decoder | null = null;

/** Decodes a single-value Tersa buffer. */
export function decode(input: Uint8Array | ArrayBuffer, options?: DecoderOptions): any {
  if (options === undefined) return (defaultDecoder ??= new Decoder()).decode(input);
  return new Decoder(options).decode(input);
}

/** Decodes a stream buffer into the array of its values; `join: true`: frames joined midway (`joinStream`). */
export function decodeStream(input: Uint8Array | ArrayBuffer, options?: StreamDecoderOptions): any[] {
  return (options === undefined ? (defaultDecoder ??= new Decoder()) : new Decoder(options)).decodeStream(input, options);
}

/** Decodes the frames of a stream from a frame boundary on, without its header (SPEC 2.3 "Joining a stream"). */
export function joinStream(input: Uint8Array | ArrayBuffer, options?: DecoderOptions): JoinResult {
  return (options === undefined ? (defaultDecoder ??= new Decoder()) : new Decoder(options)).joinStream(input);
}

/** @internal Decodes a canonical body without header (dictionary serialization, SPEC 8). */
export function decodeBody(input: Uint8Array): any {
  const d = new Decoder();
  const saved = d._enter();
  try {
    src = input;
    pos = 0;
    end = input.length;
    startTables(d, null, new Slot());
    const v = read(new Slot());
    if (pos !== end) fail('trailing_bytes', pos, 'bytes after the value');
    return v;
  } finally {
    d._leave(saved);
  }
}
