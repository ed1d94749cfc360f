// Tersa encoder: the canonical encoding of SPEC section 7. Like the decoder, it
// keeps its hot state in module-level variables, loaded from and stored back
// into an Encoder on every call.

import {
  utf8Length,
  DictionaryLike,
  EncodeError,
  Ext,
  Float64,
  Timestamp,
  extByClass,
  DEFAULT_MAX_DEPTH,
  MAX_EXT_TYPE,
  EXT_APP_MAX,
  MAX_OFFSET,
  MAX_SECONDS,
  MAX_SHAPES,
  MAX_STRINGS,
  MIN_SECONDS,
  REF8_BASE,
  REF16_BASE,
  REF24_BASE,
  SHAPE8_BASE,
  SHAPE16_BASE,
  INT64_MAX,
  INT64_MIN,
  UINT64_MAX,
  TSV_NUMERIC_OFFSET,
  FLAG_DICT,
} from './common.js';
import { locate, hasHiddenState } from './locate.js';
import { shortestDecimal, decM, decE } from './decimal.js';
import { tsParse, tsVariant, tsSec, tsFrac, tsOff } from './timestamp-text.js';
import { KeyIdentities } from './key-identity.js';
import { StreamEncoder } from './stream-encoder.js';
import { checkOptions, ENCODER_OPTIONS } from './options.js';
export { StreamEncoder };
export type { StreamEncoderOptions, SyncOptions };
import type { StreamEncoderOptions, SyncOptions } from './stream-encoder.js';
import { nest, ArrayLevel, ObjectLevel, MapLevel, GenericMapLevel, suspendLevels, resumeLevels } from './encoder-deep.js';

export interface EncoderOptions {
  /** Pre-shared dictionary (SPEC 8); the buffer then carries its id. */
  dictionary?: DictionaryLike | null;
  /** Nesting limit (SPEC 5.7); default 1000. Deeper values (and cycles) raise EncodeError. */
  maxDepth?: number;
  /** `'error'` (default): `undefined` raises EncodeError. `'null'`: it is written as null. */
  undefined?: 'error' | 'null';
  /**
   * Objects whose prototype is neither `Object.prototype` nor `null`, with no
   * registered extension: `'error'` (default) raises EncodeError; `'map'`
   * writes their own enumerable string-keyed properties as a map.
   */
  classInstances?: 'error' | 'map';
}

// ---------------------------------------------------------------------------
// State objects
// ---------------------------------------------------------------------------

/**
 * What the encoder knows about one distinct string, persistent across the
 * buffers of an Encoder: whether it is in the current buffer's string table
 * (`gen` is the buffer's generation) and at which lowest index.
 */
class StrEntry {
  gen = -1;
  idx = -1;
  dict = -1; // index in the encoder's dictionary, or -1
  /** UTF-8 bytes, kept once the string has been written in two buffers (copying them beats re-encoding). */
  bytes: Uint8Array | null = null;
  words: Uint32Array | null = null; // the same bytes, padded, as 32-bit words
}

/** @internal */
export class ESlot {
  s: string | null = null; // str register
  se: StrEntry | null = null; // its entry (null for strings of one byte)
  ik = 0; // int register: 0 none, 1 a safe integer in i, 2 an int64 beyond it as ih (signed) * 2^32 + il
  i = 0;
  ih = 0;
  il = 0;
  dk = false; // dec register
  dm = 0;
  de = 0;
  bin = 0; // binary floats since the last decimal (SPEC 4.3)
  sh: EShape | null = null; // memo: the shape of the last map written in this slot
}

function resetSlot(s: ESlot): void {
  s.s = null;
  s.se = null;
  s.ik = 0;
  s.dk = false;
  s.bin = 0;
}

/** A key sequence, persistent across buffers in one Encoder; `gen === gen` means "in this buffer's table at idx". */
class EShape {
  keys: (string | symbol)[];
  n: number;
  slots: ESlot[];
  gen = -1;
  idx = -1;
  dictIdx = -1;
  // MAPDEF acceleration for all-string keys (null: use the general path)
  kent: (StrEntry | null)[] | null = null; // entries, valid for kepoch
  kepoch = -1;
  kbytes: Uint8Array[] | null = null; // UTF-8 of each key
  kwords: Uint32Array[] | null = null; // ... as padded 32-bit words
  kpfx: Int32Array | null = null; // key i > 0: common prefix bytes with key i-1
  kblock: Uint8Array | null = null; // the encoding of keys 1.. when none is in the table
  kblockw: Uint32Array | null = null;
  plain = false; // all keys strings, none timestamp-like
  evicted = false; // pruned from the registry
  constructor(keys: (string | symbol)[]) {
    this.keys = keys;
    this.n = keys.length;
    this.slots = [];
    for (let i = 0; i < keys.length; i++) this.slots.push(new ESlot());
    let plain = true;
    for (const k of keys) if (typeof k !== 'string' || utf8Length(k) < 0 || (k.length >= 10 && k.length <= 35 && tsParse(k))) plain = false;
    if (plain) {
      this.plain = true;
      const n = keys.length;
      this.kbytes = (keys as string[]).map((k) => padded(textEncoder.encode(k)));
      this.kwords = this.kbytes.map((b) => new Uint32Array(b.buffer));
      this.kpfx = new Int32Array(n);
      for (let i = 1; i < n; i++) {
        this.kpfx[i] = commonPrefix(keys[i] as string, keys[i - 1] as string);
      }
      const parts: number[] = [];
      for (let i = 1; i < n; i++) {
        const b = this.kbytes[i];
        const L = this.kpfx[i];
        const suf = b.length - L;
        const pfxSize = 2 + (suf < 16 ? 0 : vlen(suf - 16)) + suf;
        const inlineSize = (b.length < 32 ? 1 : 1 + vlen(b.length - 32)) + b.length;
        if (L > 0 && pfxSize < inlineSize) {
          if (suf < 16) parts.push(0xc0 + suf, L);
          else parts.push(0xf5, L, ...varintBytes(suf - 16));
          for (let j = L; j < b.length; j++) parts.push(b[j]);
        } else {
          if (b.length < 32) parts.push(0x40 + b.length);
          else parts.push(0xec, ...varintBytes(b.length - 32));
          for (let j = 0; j < b.length; j++) parts.push(b[j]);
        }
      }
      this.kblock = padded(Uint8Array.from(parts));
      this.kblockw = new Uint32Array(this.kblock.buffer);
    }
  }
}

/**
 * An Encoder's shapes, by first key: a short list is searched linearly (keys
 * compare by pointer); a list past BUCKET_LINEAR shapes also gets an index
 * by the text of all its keys, since records whose many shapes share a first
 * key ("id") would otherwise search the whole list for every map.
 */
class ShapeBucket {
  list: EShape[] = [];
  byText: Map<string, EShape> | null = null;
}

const BUCKET_LINEAR = 16;

/** @internal */
export class ShapeRegistry {
  buckets = new Map<string | symbol, ShapeBucket>();
  empty: EShape | null = null;
  count = 0;
}

// ---------------------------------------------------------------------------
// Module-level hot state
// ---------------------------------------------------------------------------

let buf: Uint8Array = new Uint8Array(0);
let view: DataView = new DataView(buf.buffer);
let start = 0;
let pos = 0;
let cap = 0;
let entries = new Map<string, StrEntry>(); // per Encoder: every string met (bounded)
let epoch = 0; // changes whenever an Encoder's entries map is cleared
let nstr = 0;
let gen = 0; // buffer generation, for shapes
let nshape = 0;
let registry = new ShapeRegistry();
let lastStr: string | null = null;
let lastTs = 0;
let depth = 0;
// Containers nest by recursion this deep, then from an explicit stack
// (encoder-deep.ts): the stack this takes fits in any JavaScript engine's.
const RECURSION_DEPTH = 100;
let maxDepth = DEFAULT_MAX_DEPTH;
let keySlot = new ESlot();
let undefinedAsNull = false;
let instancesAsMaps = false;
let hasDict = false;
let failValue: unknown = undefined;
let keyIds: KeyIdentities | null = null; // of the generic-map keys met in this call
let failReason = '';

const POW2: number[] = [];
for (let i = 0; i <= 64; i++) POW2.push(Math.pow(2, i));
const textEncoder = new TextEncoder();
const scratch = new ArrayBuffer(8);
const scratchU8 = new Uint8Array(scratch);
const scratchBig = new BigUint64Array(scratch);
const scratchU32 = new Uint32Array(scratch);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

class Failure extends Error {}

function fail(value: unknown, reason: string): never {
  failValue = value;
  failReason = reason;
  throw new Failure(reason);
}

// ---------------------------------------------------------------------------
// Output buffer
// ---------------------------------------------------------------------------

const SLAB = 65536;

function grow(n: number): void {
  const used = pos - start;
  const size = Math.max(SLAB, (used + n) * 2);
  const nb = new Uint8Array(size);
  nb.set(buf.subarray(start, pos), 0);
  buf = nb;
  view = new DataView(nb.buffer);
  cap = size;
  start = 0;
  pos = used;
}

function ensure(n: number): void {
  if (pos + n > cap) grow(n);
}

function vlen(v: number): number {
  // v < 2^53
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  if (v < 0x800000000) return 5;
  if (v < 0x40000000000) return 6;
  if (v < 0x2000000000000) return 7;
  return 8; // < 2^56 covers every safe integer
}

/** Writes a varint of v < 2^53 (capacity ensured by the caller). */
function writeVarint(v: number): void {
  if (v < 0x80) {
    buf[pos++] = (v << 1) | 1;
    return;
  }
  if (v < 0x4000) {
    const w = (v << 2) | 2;
    buf[pos] = w;
    buf[pos + 1] = w >>> 8;
    pos += 2;
    return;
  }
  if (v < 0x200000) {
    const w = (v << 3) | 4;
    buf[pos] = w;
    buf[pos + 1] = w >>> 8;
    buf[pos + 2] = w >>> 16;
    pos += 3;
    return;
  }
  if (v < 0x10000000) {
    const w = ((v << 4) | 8) >>> 0;
    buf[pos] = w;
    buf[pos + 1] = w >>> 8;
    buf[pos + 2] = w >>> 16;
    buf[pos + 3] = w >>> 24;
    pos += 4;
    return;
  }
  // L >= 5: W = v * 2^L + 2^(L-1) = vhi * 2^32 + (vlo * 2^L + 2^(L-1)), vlo = v mod 2^(32-L)
  const L = vlen(v);
  const m = POW2[32 - L];
  const vhi = Math.floor(v / m);
  const wlo = (v - vhi * m) * POW2[L] + POW2[L - 1];
  buf[pos] = wlo;
  buf[pos + 1] = wlo >>> 8;
  buf[pos + 2] = wlo >>> 16;
  buf[pos + 3] = wlo >>> 24;
  let r = vhi;
  for (let i = 4; i < L; i++) {
    buf[pos + i] = r;
    r = Math.floor(r / 256);
  }
  pos += L;
}

function writeVarintBig(v: bigint): void {
  if (v < 9007199254740992n) return writeVarint(Number(v));
  ensure(9);
  if (v < 1n << 56n) {
    const w = (v << 8n) | 0x80n;
    for (let i = 0n; i < 8n; i++) buf[pos++] = Number((w >> (8n * i)) & 0xffn);
  } else {
    buf[pos++] = 0;
    for (let i = 0n; i < 8n; i++) buf[pos++] = Number((v >> (8n * i)) & 0xffn);
  }
}

function vlenBig(v: bigint): number {
  if (v < 9007199254740992n) return vlen(Number(v));
  return v < 1n << 56n ? 8 : 9;
}

// ---------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------

/** Writes s[from..] as UTF-8 at pos (capacity ensured); returns the byte count. */
function utf8At(s: string, from: number): number {
  const p0 = pos;
  const n = s.length;
  // optimistic ASCII copy, without a branch per character
  let acc = 0;
  const out = buf;
  const d = p0 - from;
  for (let i = from; i < n; i++) {
    const c = s.charCodeAt(i);
    out[d + i] = c;
    acc |= c;
  }
  if (acc < 0x80) return n - from;
  let p = p0;
  for (let i = from; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) buf[p++] = c;
    else if (c < 0x800) {
      buf[p++] = 0xc0 | (c >> 6);
      buf[p++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const c2 = s.charCodeAt(i + 1);
      if (c >= 0xdc00 || !(c2 >= 0xdc00 && c2 <= 0xdfff)) fail(s, 'string is not valid Unicode (lone surrogate)');
      i++;
      const cp = 0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00);
      buf[p++] = 0xf0 | (cp >> 18);
      buf[p++] = 0x80 | ((cp >> 12) & 0x3f);
      buf[p++] = 0x80 | ((cp >> 6) & 0x3f);
      buf[p++] = 0x80 | (cp & 0x3f);
    } else {
      buf[p++] = 0xe0 | (c >> 12);
      buf[p++] = 0x80 | ((c >> 6) & 0x3f);
      buf[p++] = 0x80 | (c & 0x3f);
    }
  }
  return p - p0;
}

const hasIsWellFormed = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function';

function utf8Long(s: string, from: number): number {
  if (hasIsWellFormed ? !s.isWellFormed() : utf8Length(s) < 0) fail(s, 'string is not valid Unicode (lone surrogate)');
  const r = textEncoder.encodeInto(from === 0 ? s : s.slice(from), buf.subarray(pos));
  return r.written;
}

let pfxChars = 0;

/** UTF-8 length of the common prefix of a and b, capped at 127 bytes, on a character boundary; sets pfxChars. */
function commonPrefix(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  let bytes = 0;
  let i = 0;
  for (; i < n; i++) {
    const c = a.charCodeAt(i);
    if (c !== b.charCodeAt(i)) break;
    if (c < 0x80) {
      if (bytes === 127) break;
      bytes++;
    } else if (c < 0x800) {
      if (bytes + 2 > 127) break;
      bytes += 2;
    } else if (c >= 0xd800 && c < 0xdc00) {
      if (i + 1 >= n || a.charCodeAt(i + 1) !== b.charCodeAt(i + 1) || bytes + 4 > 127) break;
      i++;
      bytes += 4;
    } else {
      if (bytes + 3 > 127) break;
      bytes += 3;
    }
  }
  pfxChars = i;
  return bytes;
}

function writeRef(i: number): void {
  if (i < REF8_BASE) buf[pos++] = i;
  else if (i < REF16_BASE) {
    buf[pos++] = 0xed;
    buf[pos++] = i - REF8_BASE;
  } else if (i < REF24_BASE) {
    const w = i - REF16_BASE;
    buf[pos++] = 0xee;
    buf[pos++] = w;
    buf[pos++] = w >>> 8;
  } else {
    const w = i - REF24_BASE;
    buf[pos++] = 0xef;
    buf[pos++] = w;
    buf[pos++] = w >>> 8;
    buf[pos++] = w >>> 16;
  }
}

/**
 * A direct-mapped front cache for `entries`, indexed by a cheap hash of
 * length and three characters and verified by string equality: cheaper than
 * a Map lookup when strings recur.
 */
const FC_BITS = 12;
const FC_MASK = (1 << FC_BITS) - 1;
let fcStr: (string | undefined)[] = [];
let fcEnt: (StrEntry | undefined)[] = [];

function entryOf(s: string): StrEntry {
  const n = s.length;
  const h = (n * 0x9e37 + s.charCodeAt(0) * 0x2f + s.charCodeAt(n >> 1) * 0x61 + s.charCodeAt(n - 1) * 0x3b5) & FC_MASK;
  if (fcStr[h] === s) return fcEnt[h]!;
  return entrySlow(s, h);
}

function entrySlow(s: string, h: number): StrEntry {
  let e = entries.get(s);
  if (e === undefined) {
    e = new StrEntry();
    // once the table is full no string enters it: do not grow the map
    if (nstr >= MAX_STRINGS) return e;
    entries.set(s, e);
  }
  fcStr[h] = s;
  fcEnt[h] = e;
  return e;
}

/** The lowest index of the entry's string in the current table, or -1. */
function tableIndex(e: StrEntry): number {
  return e.dict >= 0 ? e.dict : e.gen === gen ? e.idx : -1;
}

/** Appends a string of >= 2 bytes, whose lowest index so far is idx (or -1), to the table. */
function addEntry(e: StrEntry, idx: number): void {
  if (nstr < MAX_STRINGS) {
    if (idx < 0) {
      e.gen = gen;
      e.idx = nstr;
    }
    nstr++;
  }
}

function writeString(s: string, slot: ESlot): void {
  const len = s.length;
  let e: StrEntry | null;
  let idx: number;
  ensure(len * 3 + 16);
  const c0 = len > 0 ? s.charCodeAt(0) : 0;
  if (len >= 2 || c0 >= 0x80) {
    const h = (len * 0x9e37 + c0 * 0x2f + s.charCodeAt(len >> 1) * 0x61 + s.charCodeAt(len - 1) * 0x3b5) & FC_MASK;
    e = fcStr[h] === s ? fcEnt[h]! : entrySlow(s, h);
    idx = tableIndex(e);
    if (idx >= 0 && (idx < REF24_BASE || !isTwoBytes(s))) {
      writeRef(idx);
      slot.s = s;
      slot.se = e;
      lastStr = s;
      return;
    }
    if (len >= 10 && len <= 35 && s.charCodeAt(4) === 45 && tsParse(s)) {
      writeTsString();
      addEntry(e, idx);
      slot.s = s;
      slot.se = e;
      lastStr = s;
      return;
    }
  } else {
    e = null;
    idx = -1;
  }
  // prefix candidates
  let L = 0;
  let Lc = 0;
  let flag = 0;
  const ss = slot.s;
  if (len > 0) {
    if (ss !== null && ss.charCodeAt(0) === c0) {
      L = commonPrefix(s, ss);
      Lc = pfxChars;
    }
    const ls = lastStr;
    if (ls !== null && ls !== ss && ls.charCodeAt(0) === c0) {
      const l2 = commonPrefix(s, ls);
      if (l2 > L) {
        L = l2;
        Lc = pfxChars;
        flag = 0x80;
      }
    }
  }
  const p0 = pos;
  let byteLen: number;
  if (L > 0) {
    // Write the suffix where a short PFX form puts it, then decide.
    pos = p0 + 2;
    const suf = e !== null && e.bytes !== null ? copyBytes(e.bytes, e.words!, L) : len - Lc < 64 ? utf8At(s, Lc) : utf8Long(s, Lc);
    byteLen = L + suf;
    if (finishPrefix(p0, suf, byteLen, flag | L)) {
      if (e !== null) addEntry(e, idx);
      slot.s = s;
      slot.se = e;
      lastStr = s;
      return;
    }
  }
  // inline
  pos = p0 + 1;
  if (e !== null && e.bytes !== null) byteLen = copyBytes(e.bytes, e.words!, 0);
  else {
    byteLen = len < 64 ? utf8At(s, 0) : utf8Long(s, 0);
    // written in an earlier buffer too: keep the bytes
    if (e !== null && e.gen !== -1 && byteLen <= 256) {
      e.bytes = padded(buf.subarray(p0 + 1, p0 + 1 + byteLen));
      e.words = new Uint32Array(e.bytes.buffer);
    }
  }
  finishInline(p0, byteLen);
  if (e !== null) addEntry(e, idx);
  slot.s = s;
  slot.se = e;
  lastStr = s;
}

/**
 * With the suffix written at p0 + 2: if the prefix form is strictly smaller
 * than the inline one, completes it and returns true.
 */
function finishPrefix(p0: number, suf: number, byteLen: number, pb: number): boolean {
  const pfxSize = 2 + (suf < 16 ? 0 : vlen(suf - 16)) + suf;
  const inlineSize = (byteLen < 32 ? 1 : 1 + vlen(byteLen - 32)) + byteLen;
  if (pfxSize >= inlineSize) return false;
  if (suf < 16) {
    buf[p0] = 0xc0 + suf;
    buf[p0 + 1] = pb;
    pos = p0 + 2 + suf;
  } else {
    const vl = vlen(suf - 16);
    buf.copyWithin(p0 + 2 + vl, p0 + 2, p0 + 2 + suf);
    buf[p0] = 0xf5;
    buf[p0 + 1] = pb;
    pos = p0 + 2;
    writeVarint(suf - 16);
    pos = p0 + 2 + vl + suf;
  }
  return true;
}

/** With the bytes written at p0 + 1: writes the inline tag (moving the bytes for STR_LONG). */
function finishInline(p0: number, byteLen: number): void {
  if (byteLen < 32) {
    buf[p0] = 0x40 + byteLen;
    pos = p0 + 1 + byteLen;
  } else {
    const vl = vlen(byteLen - 32);
    buf.copyWithin(p0 + 1 + vl, p0 + 1, p0 + 1 + byteLen);
    buf[p0] = 0xec;
    pos = p0 + 1;
    writeVarint(byteLen - 32);
    pos = p0 + 1 + vl + byteLen;
  }
}

/** A copy of b whose buffer is padded to whole 32-bit words (see copyBytes). */
function padded(b: Uint8Array): Uint8Array {
  const n = b.length;
  const out = new Uint8Array(new ArrayBuffer((n + 3) & ~3), 0, n);
  out.set(b);
  return out;
}

/**
 * Copies b[from..] (b from `padded`) to pos: whole strings four bytes at a
 * time (up to 3 bytes of padding land past the end, inside the capacity the
 * caller ensured, and are overwritten next).
 */
function copyBytes(b: Uint8Array, w: Uint32Array, from: number): number {
  const n = b.length - from;
  if (from === 0) {
    const m = w.length;
    const v = view;
    const p = pos;
    for (let j = 0; j < m; j++) v.setUint32(p + 4 * j, w[j], littleEndian);
  } else {
    const out = buf;
    const d = pos - from;
    for (let i = from; i < b.length; i++) out[d + i] = b[i];
  }
  return n;
}

/** Writes the keys of a MAPDEF whose shape is `plain`: the same rules as writeString, with cached work. */
function writePlainKeys(sh: EShape): void {
  if (sh.kepoch !== epoch) {
    const keys = sh.keys as string[];
    const kent: (StrEntry | null)[] = [];
    for (const k of keys) kent.push(k.length >= 2 || (k.length === 1 && k.charCodeAt(0) >= 0x80) ? entryOf(k) : null);
    sh.kent = kent;
    sh.kepoch = epoch;
  }
  const n = sh.n;
  if (n === 0) return;
  writeKey(sh, 0);
  if (n === 1) return;
  // Keys 1.. depend only on the key before them when none is in the table:
  // their encoding is then one precomputed block.
  const kent = sh.kent!;
  let absent = true;
  for (let i = 1; i < n; i++) {
    const e = kent[i];
    if (e !== null && tableIndex(e) >= 0) {
      absent = false;
      break;
    }
  }
  if (absent) {
    const blk = sh.kblock!;
    ensure(blk.length + 8);
    pos += copyBytes(blk, sh.kblockw!, 0);
    for (let i = 1; i < n; i++) {
      const e = kent[i];
      if (e !== null) addEntry(e, -1);
    }
    const last = sh.keys[n - 1] as string;
    keySlot.s = last;
    keySlot.se = kent[n - 1];
    lastStr = last;
    return;
  }
  for (let i = 1; i < n; i++) writeKey(sh, i);
}

function writeKey(sh: EShape, i: number): void {
  const keys = sh.keys as string[];
  const kent = sh.kent!;
  const kbytes = sh.kbytes!;
  const kwords = sh.kwords!;
  const kpfx = sh.kpfx!;
  const s = keys[i];
  const e = kent[i];
  const bytes = kbytes[i];
  const byteLen = bytes.length;
  ensure(byteLen + 16);
  let idx = -1;
  if (e !== null) {
    idx = tableIndex(e);
    if (idx >= 0 && (idx < REF24_BASE || byteLen !== 2)) {
      writeRef(idx);
      keySlot.s = s;
      keySlot.se = e;
      lastStr = s;
      return;
    }
  }
  let L: number;
  let flag = 0;
  if (i > 0) {
    // both registers hold key i-1
    L = kpfx[i];
  } else {
    L = 0;
    const ss = keySlot.s;
    if (ss !== null && s.length > 0) {
      L = commonPrefix(s, ss);
    }
    if (lastStr !== null && lastStr !== ss && s.length > 0) {
      const l2 = commonPrefix(s, lastStr);
      if (l2 > L) {
        L = l2;
        flag = 0x80;
      }
    }
  }
  const p0 = pos;
  let done = false;
  if (L > 0) {
    pos = p0 + 2;
    const suf = copyBytes(bytes, kwords[i], L);
    done = finishPrefix(p0, suf, byteLen, flag | L);
  }
  if (!done) {
    pos = p0 + 1;
    copyBytes(bytes, kwords[i], 0);
    finishInline(p0, byteLen);
  }
  if (e !== null) addEntry(e, idx);
  keySlot.s = s;
  keySlot.se = e;
  lastStr = s;
}

function isTwoBytes(s: string): boolean {
  if (s.length === 2) return s.charCodeAt(0) < 0x80 && s.charCodeAt(1) < 0x80;
  return s.length === 1 && s.charCodeAt(0) >= 0x80 && s.charCodeAt(0) < 0x800;
}

// ---------------------------------------------------------------------------
// Timestamp strings
// ---------------------------------------------------------------------------

function zz(d: number): number {
  return d >= 0 ? d * 2 : -d * 2 - 1;
}

function writeTsString(): void {
  const v = tsVariant;
  if (v === 0) buf[pos++] = 0xfb;
  else if (v === 3) buf[pos++] = 0xfc;
  else {
    buf[pos++] = 0xfa;
    buf[pos++] = v;
  }
  writeVarint(zz(tsSec - lastTs));
  lastTs = tsSec;
  if (v & 0x0f) writeVarint(tsFrac);
  if (v & TSV_NUMERIC_OFFSET) writeVarint(zz(tsOff));
}

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

function writeInt(v: number, slot: ESlot): void {
  // v is a safe integer, not -0
  if (v >= -8 && v <= 23) {
    buf[pos++] = 0xa8 + v;
    slot.ik = 1;
    slot.i = v;
    return;
  }
  const u = v > 0 ? v - 24 : -9 - v;
  const al = vlen(u);
  if (slot.ik === 1) {
    const d = v - slot.i;
    if (d > -4503599627370496 && d < 4503599627370496) {
      const z = zz(d);
      if (vlen(z) < al) {
        buf[pos++] = 0xe7;
        writeVarint(z);
        slot.i = v;
        return;
      }
    } else if (writeDelta64(hiOf(v), loOf(v), hiOf(slot.i), loOf(slot.i), al)) {
      slot.i = v;
      return;
    }
  } else if (slot.ik === 2) {
    if (writeDelta64(hiOf(v), loOf(v), slot.ih, slot.il, al)) {
      slot.ik = 1;
      slot.i = v;
      return;
    }
  }
  buf[pos++] = v > 0 ? 0xe5 : 0xe6;
  writeVarint(u);
  slot.ik = 1;
  slot.i = v;
}

// Integers beyond 2^53 are handled as two 32-bit halves (a signed high word
// for int64 values, unsigned for the magnitudes of varints): BigInt arithmetic
// allocates for every operation, and took three quarters of encoding arrays
// of 64-bit ids.
const TWO32 = 4294967296;

function hiOf(v: number): number {
  return Math.floor(v / TWO32);
}

function loOf(v: number): number {
  return v - Math.floor(v / TWO32) * TWO32;
}

/** Varint length of the unsigned 64-bit h * 2^32 + l. */
function vlen64(h: number, l: number): number {
  if (h === 0) return vlen(l);
  const bits = 64 - Math.clz32(h);
  return bits > 56 ? 9 : Math.ceil(bits / 7);
}

/** Writes the varint of the unsigned 64-bit h * 2^32 + l (capacity ensured). */
function writeVarint64(h: number, l: number): void {
  if (h < 0x200000) return writeVarint(h * TWO32 + l);
  if (h < 0x1000000) buf[pos++] = 0x80; // 8 bytes: the value shifted left by 8
  else buf[pos++] = 0; // 9 bytes: the value as is
  buf[pos++] = l;
  buf[pos++] = l >>> 8;
  buf[pos++] = l >>> 16;
  buf[pos++] = l >>> 24;
  buf[pos++] = h;
  buf[pos++] = h >>> 8;
  buf[pos++] = h >>> 16;
  if (h >= 0x1000000) buf[pos++] = h >>> 24;
}

/**
 * Writes INT_DELTA for v - r (int64 values as signed high and unsigned low
 * words) if the delta fits int64 and is strictly smaller than an absolute form
 * of `al` varint bytes.
 */
function writeDelta64(vh: number, vl: number, rh: number, rl: number, al: number): boolean {
  let dl = vl - rl;
  let dh = vh - rh;
  if (dl < 0) {
    dl += TWO32;
    dh--;
  }
  if (dh < -2147483648 || dh > 2147483647) return false;
  // zigzag: (d << 1) ^ (d >> 63)
  let zh = ((dh << 1) | (dl >>> 31)) >>> 0;
  let zl = (dl << 1) >>> 0;
  if (dh < 0) {
    zh = ~zh >>> 0;
    zl = ~zl >>> 0;
  }
  if (vlen64(zh, zl) >= al) return false;
  ensure(10);
  buf[pos++] = 0xe7;
  writeVarint64(zh, zl);
  return true;
}

function writeBigInt(v: bigint, slot: ESlot): void {
  ensure(12);
  if (v >= -9007199254740991n && v <= 9007199254740991n) return writeInt(Number(v), slot);
  if (v >= INT64_MIN && v <= UINT64_MAX) {
    scratchBig[0] = v; // v mod 2^64
    const lo = scratchU32[littleEndian ? 0 : 1];
    const hi = scratchU32[littleEndian ? 1 : 0];
    // the magnitude field: v - 24, or -9 - v = ~v - 8 (|v| > 2^53: no wrap)
    let uh: number, ul: number;
    if (v > 0n) {
      uh = hi;
      ul = lo - 24;
    } else {
      uh = ~hi >>> 0;
      ul = (~lo >>> 0) - 8;
    }
    if (ul < 0) {
      ul += TWO32;
      uh--;
    }
    const al = vlen64(uh, ul);
    const signed = v <= INT64_MAX;
    let done = false;
    if (signed && slot.ik !== 0) {
      done = slot.ik === 1 ? writeDelta64(hi | 0, lo, hiOf(slot.i), loOf(slot.i), al) : writeDelta64(hi | 0, lo, slot.ih, slot.il, al);
    }
    if (!done) {
      buf[pos++] = v > 0n ? 0xe5 : 0xe6;
      writeVarint64(uh, ul);
    }
    if (signed) {
      slot.ik = 2;
      slot.ih = hi | 0;
      slot.il = lo;
    }
    return;
  }
  // through hex: shifting out a byte at a time copies the number for each byte
  let hexText = (v < 0n ? -v : v).toString(16);
  if (hexText.length & 1) hexText = '0' + hexText;
  const bytes: number[] = new Array(hexText.length >> 1);
  for (let i = 0, j = hexText.length - 2; j >= 0; i++, j -= 2) bytes[i] = parseInt(hexText.slice(j, j + 2), 16);
  ensure(bytes.length + 12);
  buf[pos++] = v > 0n ? 0xea : 0xeb;
  writeVarint(bytes.length);
  for (const b of bytes) buf[pos++] = b;
}

/**
 * Floats (SPEC 7). The slot's `bin` count (SPEC 4.3) says whether the decimal
 * form is a candidate at all: after four binary floats in a row only one float
 * in 16 is tested, so float data measured to full precision costs a
 * fround and a copy per value.
 */
function writeFloat(d: number, slot: ESlot): void {
  ensure(10);
  const c = slot.bin;
  if (c >= 4 && c !== 19) {
    slot.bin = c + 1;
    if (d !== d) return writeF64Bits(0x7ff8000000000000n);
    return Math.fround(d) === d ? writeF32(d) : writeF64(d);
  }
  if (d === d && d !== Infinity && d !== -Infinity) {
    let has = true;
    let m = 0;
    let e = 0;
    if (d === 0) has = 1 / d > 0;
    else {
      has = shortestDecimal(d, slot.dk && slot.de < 0 && slot.de >= -22 ? -slot.de : 0);
      m = decM;
      e = decE;
    }
    if (has) {
      const hasReg = slot.dk && slot.de === e;
      if (m >= 2251799813685248 || m <= -2251799813685248 || (hasReg && (slot.dm >= 2251799813685248 || slot.dm <= -2251799813685248))) {
        if (!hasReg) {
          // |m| >= 2^51: the mantissa varint has 8 bytes
          const decSize = (e >= -12 && e <= 3 ? 1 : 2) + 8;
          if (Math.fround(d) === d) return writeBinary32(d, slot);
          if (decSize > 9) return writeBinary64(d, slot);
        }
        // zigzag values reach 2^54: exact arithmetic in BigInt
        return writeDecimalBig(d, m, e, slot, hasReg);
      }
      const z = zz(m);
      const decSize = (e >= -12 && e <= 3 ? 1 : 2) + vlen(z);
      let best = decSize;
      let useDelta = false;
      let dz = 0;
      if (hasReg) {
        dz = zz(m - slot.dm);
        if (1 + vlen(dz) < best) {
          best = 1 + vlen(dz);
          useDelta = true;
        }
      }
      if (best > 5 && Math.fround(d) === d) return writeBinary32(d, slot);
      if (best > 9) return writeBinary64(d, slot);
      if (useDelta) {
        buf[pos++] = 0xe9;
        writeVarint(dz);
      } else if (e >= -12 && e <= 3) {
        buf[pos++] = 0xdc + e;
        writeVarint(z);
      } else {
        buf[pos++] = 0xe8;
        buf[pos++] = e & 0xff;
        writeVarint(z);
      }
      slot.dk = true;
      slot.dm = m;
      slot.de = e;
      slot.bin = 0;
      return;
    }
    if (Math.fround(d) === d) return writeBinary32(d, slot);
    return writeBinary64(d, slot);
  }
  slot.bin = c === 19 ? 4 : c + 1;
  if (d !== d) return writeF64Bits(0x7ff8000000000000n);
  writeF32(d); // infinities are exact in binary32
}

/** An F32 item in a slot: counts toward the slot's `bin` (19 is followed by 4). */
function writeBinary32(d: number, slot: ESlot): void {
  const c = slot.bin;
  slot.bin = c === 19 ? 4 : c + 1;
  writeF32(d);
}

function writeBinary64(d: number, slot: ESlot): void {
  const c = slot.bin;
  slot.bin = c === 19 ? 4 : c + 1;
  writeF64(d);
}

function zzBig(v: bigint): bigint {
  return v >= 0n ? v << 1n : (-v << 1n) - 1n;
}

/** writeFloat for mantissas of 2^51 or more (their zigzag form exceeds 2^53). */
function writeDecimalBig(d: number, m: number, e: number, slot: ESlot, hasReg: boolean): void {
  const zb = zzBig(BigInt(m));
  let best = (e >= -12 && e <= 3 ? 1 : 2) + vlenBig(zb);
  let dzb = -1n;
  if (hasReg) {
    const c = zzBig(BigInt(m) - BigInt(slot.dm));
    if (1 + vlenBig(c) < best) {
      best = 1 + vlenBig(c);
      dzb = c;
    }
  }
  if (best > 5 && Math.fround(d) === d) return writeBinary32(d, slot);
  if (best > 9) return writeBinary64(d, slot);
  if (dzb >= 0n) {
    buf[pos++] = 0xe9;
    writeVarintBig(dzb);
  } else {
    if (e >= -12 && e <= 3) buf[pos++] = 0xdc + e;
    else {
      buf[pos++] = 0xe8;
      buf[pos++] = e & 0xff;
    }
    writeVarintBig(zb);
  }
  slot.dk = true;
  slot.dm = m;
  slot.de = e;
  slot.bin = 0;
}

function writeF32(d: number): void {
  buf[pos] = 0xe3;
  view.setFloat32(pos + 1, d, true);
  pos += 5;
}

function writeF64(d: number): void {
  buf[pos] = 0xe4;
  view.setFloat64(pos + 1, d, true);
  pos += 9;
}

function writeF64Bits(bits: bigint): void {
  scratchBig[0] = bits;
  writeScratch64();
}

function writeScratch64(): void {
  buf[pos++] = 0xe4;
  if (littleEndian) {
    buf[pos++] = scratchU8[0];
    buf[pos++] = scratchU8[1];
    buf[pos++] = scratchU8[2];
    buf[pos++] = scratchU8[3];
    buf[pos++] = scratchU8[4];
    buf[pos++] = scratchU8[5];
    buf[pos++] = scratchU8[6];
    buf[pos++] = scratchU8[7];
  } else for (let i = 7; i >= 0; i--) buf[pos++] = scratchU8[i];
}

function writeFloatObject(f: Float64, slot: ESlot): void {
  const v = f.value;
  if (v !== v) {
    ensure(10);
    const bits = f.bits;
    // F32 is never chosen for a NaN (SPEC 7)
    const c = slot.bin;
    slot.bin = c === 19 ? 4 : c + 1;
    return writeF64Bits(bits);
  }
  writeFloat(v, slot);
}

function writeNumber(v: number, slot: ESlot): void {
  if (Number.isSafeInteger(v) && (v !== 0 || 1 / v > 0)) {
    ensure(10);
    writeInt(v, slot);
  } else writeFloat(v, slot);
}

// ---------------------------------------------------------------------------
// Timestamps
// ---------------------------------------------------------------------------

function writeTime(value: unknown, seconds: number, nanos: number, zone: number, offset: number): void {
  if (!Number.isInteger(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) fail(value, 'timestamp out of range (years 0001-9999)');
  if (!Number.isInteger(nanos) || nanos < 0 || nanos > 999999999) fail(value, 'timestamp nanoseconds out of range');
  if (zone === 1) {
    if (!Number.isInteger(offset) || offset < -MAX_OFFSET || offset > MAX_OFFSET) fail(value, 'timestamp offset out of range');
    const local = seconds + offset * 60;
    if (local < MIN_SECONDS || local > MAX_SECONDS) fail(value, 'timestamp local time out of range');
  }
  ensure(32);
  buf[pos++] = 0xf9;
  buf[pos++] = (nanos ? 1 : 0) | (zone << 1);
  writeVarint(zz(seconds - lastTs));
  lastTs = seconds;
  if (nanos) writeVarint(nanos);
  if (zone === 1) writeVarint(zz(offset));
}

function writeDate(d: Date): void {
  const ms = d.getTime();
  if (ms !== ms) fail(d, 'invalid Date');
  const s = Math.floor(ms / 1000);
  writeTime(d, s, (ms - s * 1000) * 1000000, 0, 0);
}

function writeTimestamp(t: Timestamp): void {
  const zone = t.zone === 'utc' ? 0 : t.zone === 'offset' ? 1 : t.zone === 'floating' ? 2 : -1;
  if (zone < 0) fail(t, `unknown timestamp zone ${String(t.zone)}`);
  writeTime(t, t.seconds, t.nanos, zone, t.offset);
}

// ---------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------

function writeArray(a: unknown[], slot: ESlot): void {
  if (depth >= maxDepth) fail(a, 'nesting deeper than maxDepth');
  const n = a.length;
  ensure(10);
  if (n < 16) buf[pos++] = 0x80 + n;
  else {
    buf[pos++] = 0xf2;
    writeVarint(n - 16);
  }
  if (depth >= RECURSION_DEPTH) return nest(new ArrayLevel(a, n, slot), depth);
  depth++;
  for (let i = 0; i < n; i++) writeValue(a[i], slot);
  depth--;
}

function sameKeys(a: (string | symbol)[], b: (string | symbol)[], n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The persistent shape for a key sequence (created if new). */
function findShape(keys: (string | symbol)[]): EShape {
  const n = keys.length;
  if (n === 0) return (registry.empty ??= newShape(keys));
  const k0 = keys[0];
  let bucket = registry.buckets.get(k0);
  if (bucket === undefined) {
    bucket = new ShapeBucket();
    registry.buckets.set(k0, bucket);
  }
  const list = bucket.list;
  const byText = bucket.byText;
  if (byText === null) {
    for (let i = 0; i < list.length; i++) {
      const sh = list[i];
      if (sh.n === n && sameKeys(sh.keys, keys, n)) return sh;
    }
    const sh = newShape(keys);
    list.push(sh);
    if (list.length > BUCKET_LINEAR) {
      const index = new Map<string, EShape>();
      for (const x of list) {
        const t = keysText(x.keys);
        if (t !== null) index.set(t, x);
      }
      bucket.byText = index;
    }
    return sh;
  }
  const t = keysText(keys);
  if (t !== null) {
    let sh = byText.get(t);
    if (sh === undefined) {
      sh = newShape(keys);
      byText.set(t, sh);
      list.push(sh);
    }
    return sh;
  }
  // symbol keys: not indexed
  for (let i = 0; i < list.length; i++) {
    const sh = list[i];
    if (sh.n === n && sameKeys(sh.keys, keys, n)) return sh;
  }
  const sh = newShape(keys);
  list.push(sh);
  return sh;
}

function newShape(keys: (string | symbol)[]): EShape {
  registry.count++;
  return new EShape(keys.slice());
}

/** The keys as one string (each length-prefixed), or null if one is a symbol. */
function keysText(keys: (string | symbol)[]): string | null {
  let t = '';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (typeof k !== 'string') return null;
    t += k.length + ':' + k;
  }
  return t;
}

/** Writes the shape header (SHAPE ref or MAPDEF with keys); returns the slots for the values. */
function writeShapeHeader(sh: EShape, owner: unknown): ESlot[] {
  ensure(10);
  if (sh.gen !== gen) {
    if (sh.dictIdx >= 0 && hasDict) {
      sh.gen = gen;
      sh.idx = sh.dictIdx;
      const sl = sh.slots;
      for (let i = 0; i < sl.length; i++) resetSlot(sl[i]);
    } else {
      if (sh.evicted) {
        // a memo may hold a shape pruned from the registry: use the registry's
        const canon = findShape(sh.keys);
        if (canon.gen === gen) return writeShapeHeader(canon, owner);
        sh = canon;
      }
      const n = sh.n;
      if (n < 16) buf[pos++] = 0x90 + n;
      else {
        buf[pos++] = 0xf3;
        writeVarint(n - 16);
      }
      if (sh.plain) writePlainKeys(sh);
      else {
        const keys = sh.keys;
        for (let i = 0; i < n; i++) {
          const k = keys[i];
          if (typeof k === 'string') writeString(k, keySlot);
          else {
            ensure(1);
            buf[pos++] = 0xf8;
            writeString(symbolName(k, owner), keySlot);
          }
        }
      }
      if (nshape >= MAX_SHAPES) {
        const fresh: ESlot[] = [];
        for (let i = 0; i < n; i++) fresh.push(new ESlot());
        return fresh;
      }
      sh.gen = gen;
      sh.idx = nshape++;
      const sl = sh.slots;
      for (let i = 0; i < n; i++) resetSlot(sl[i]);
      return sl;
    }
  }
  const i = sh.idx;
  if (i < SHAPE8_BASE) buf[pos++] = 0x60 + i;
  else if (i < SHAPE16_BASE) {
    buf[pos++] = 0xf0;
    buf[pos++] = i - SHAPE8_BASE;
  } else {
    const w = i - SHAPE16_BASE;
    buf[pos++] = 0xf1;
    buf[pos++] = w;
    buf[pos++] = w >>> 8;
  }
  return sh.slots;
}

const ObjectProto = Object.prototype;
let protoClean = true; // Object.prototype has no enumerable properties (checked per call)

function enumerableFree(o: object): boolean {
  // eslint-disable-next-line no-unreachable-loop
  for (const _ in o) return false;
  return true;
}

/**
 * Plain objects. When the object's prototype is a clean Object.prototype (or
 * null), `for...in` lists exactly its own enumerable string keys, in
 * Object.keys order, and V8 loads `o[k]` inside it through the enum cache,
 * without a lookup: the keys are checked against the slot's last shape in one
 * pass, then the values are written in a second.
 */
function writeObject(o: Record<string, unknown>, slot: ESlot, fast: boolean): void {
  if (depth >= maxDepth) fail(o, 'nesting deeper than maxDepth');
  let sh = slot.sh;
  if (fast && sh !== null) {
    const keys = sh.keys;
    const n = sh.n;
    let i = 0;
    for (const k in o) {
      if (i >= n || k !== keys[i]) {
        i = -1;
        break;
      }
      i++;
    }
    if (i !== n) sh = null;
  } else sh = null;
  if (sh === null) {
    sh = findShape(Object.keys(o));
    slot.sh = sh;
  }
  const slots = writeShapeHeader(sh, o);
  const keys = sh.keys as string[];
  const n = keys.length;
  if (depth >= RECURSION_DEPTH) return nest(new ObjectLevel(o, keys, slots), depth);
  depth++;
  let i = 0;
  if (fast) {
    // The keys written are those of the header: a getter (or a Proxy) that
    // changes the keys makes for...in skip or add some, and the rest is read
    // by key, as JSON.stringify does (a deleted key reads as undefined).
    for (const k in o) {
      if (k !== keys[i]) break;
      writeValue(o[k], slots[i++]);
    }
  }
  for (; i < n; i++) writeValue(o[keys[i]], slots[i]);
  depth--;
}

function symbolName(s: symbol, owner: unknown): string {
  const name = Symbol.keyFor(s);
  if (name === undefined) fail(owner === undefined ? s : owner, 'symbol is not registered (use Symbol.for(name))');
  return name;
}

function writeMap(m: Map<unknown, unknown>, slot: ESlot): void {
  if (depth >= maxDepth) fail(m, 'nesting deeper than maxDepth');
  let shaped = true;
  for (const k of m.keys()) {
    if (typeof k !== 'string' && (typeof k !== 'symbol' || Symbol.keyFor(k) === undefined)) {
      shaped = false;
      break;
    }
  }
  if (shaped) {
    const keys = [...m.keys()] as (string | symbol)[];
    const n = keys.length;
    let sh = slot.sh;
    if (sh === null || sh.n !== n || !sameKeys(sh.keys, keys, n)) {
      sh = findShape(keys);
      slot.sh = sh;
    }
    const slots = writeShapeHeader(sh, m);
    if (depth >= RECURSION_DEPTH) return nest(new MapLevel(m, keys, slots), depth);
    depth++;
    // As for objects: the header's keys, each value read when it is written
    // (entries deleted meanwhile read as undefined, entries added are not written).
    let i = 0;
    for (const [k, v] of m) {
      if (k !== keys[i]) break;
      writeValue(v, slots[i++]);
    }
    for (; i < n; i++) writeValue(m.get(keys[i]), slots[i]);
    depth--;
    return;
  }
  // Keys that differ in JS may be equal in Tersa (1 and 1n, two Dates of one
  // instant, two Uint8Arrays with the same bytes): such a map cannot be written.
  const keys = [...m.keys()];
  const seen = new Set<string>();
  const ids = (keyIds ??= new KeyIdentities(instancesAsMaps));
  for (const k of keys) {
    const id = ids.of(k);
    if (id !== null) {
      if (seen.has(id)) fail(m, `duplicate key ${String(id).slice(1, 40)} (keys equal as Tersa values)`);
      seen.add(id);
    }
  }
  ensure(10);
  buf[pos++] = 0xf4;
  writeVarint(keys.length);
  if (depth >= RECURSION_DEPTH) return nest(new GenericMapLevel(m, keys, slot), depth);
  depth++;
  // the keys checked above, each value read when it is written
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    writeValue(k, slot);
    writeValue(m.get(k), slot);
  }
  depth--;
}

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

/** @internal Writes one item (containers below RECURSION_DEPTH recursively, deeper ones through encoder-deep.ts). */
export function writeValue(v: unknown, slot: ESlot): void {
  switch (typeof v) {
    case 'string':
      return writeString(v, slot);
    case 'number':
      return writeNumber(v, slot);
    case 'object':
      if (v === null) {
        ensure(1);
        buf[pos++] = 0xe0;
        return;
      }
      return writeObjectValue(v, slot);
    case 'boolean':
      ensure(1);
      buf[pos++] = v ? 0xe2 : 0xe1;
      return;
    case 'bigint':
      return writeBigInt(v, slot);
    case 'symbol':
      ensure(1);
      buf[pos++] = 0xf8;
      return writeString(symbolName(v, undefined), slot);
    case 'undefined':
      if (undefinedAsNull) {
        ensure(1);
        buf[pos++] = 0xe0;
        return;
      }
      return fail(v, 'undefined is not a Tersa value (option undefined: "null" writes null)');
  }
  fail(v, `unsupported type ${typeof v}`);
}

function writeObjectValue(v: object, slot: ESlot): void {
  const proto = Object.getPrototypeOf(v);
  if (proto === ObjectProto) return writeObject(v as Record<string, unknown>, slot, protoClean);
  if (proto === null) return writeObject(v as Record<string, unknown>, slot, true);
  if (Array.isArray(v)) return writeArray(v, slot);
  const c = (v as { constructor?: unknown }).constructor;
  if (v instanceof Uint8Array) {
    const n = v.length;
    ensure(n + 10);
    buf[pos++] = 0xf6;
    writeVarint(n);
    buf.set(v, pos);
    pos += n;
    return;
  }
  if (c === Map) return writeMap(v as Map<unknown, unknown>, slot);
  if (c === Date) return writeDate(v as Date);
  if (c === Float64) return writeFloatObject(v as Float64, slot);
  if (c === Timestamp) return writeTimestamp(v as Timestamp);
  if (c === Ext) {
    const t = (v as Ext).type;
    if (t > EXT_APP_MAX && t <= MAX_EXT_TYPE) fail(v, `extension type ${t} is reserved for well-known types (SPEC 5.8): write a Decimal, CalendarDate, UUID or TimeOfDay`);
    return writeExt(v, t, (v as Ext).data);
  }
  const ext = typeof c === 'function' ? extByClass.get(c) : undefined;
  if (ext !== undefined) {
    let data: Uint8Array;
    try {
      data = ext.write!(v);
    } catch (e) {
      return fail(v, `extension ${ext.type} write failed: ${(e as Error)?.message ?? e}`);
    }
    if (!(data instanceof Uint8Array)) fail(v, `extension ${ext.type} write did not return a Uint8Array`);
    return writeExt(v, ext.type, data);
  }
  if (v instanceof Map) return writeMap(v as Map<unknown, unknown>, slot);
  if (v instanceof Date) return writeDate(v);
  if (instancesAsMaps && typeof c === 'function' && !hasHiddenState(v)) return writeObject(v as Record<string, unknown>, slot, false);
  if (c === Set) fail(v, 'unsupported type Set (Tersa has no set type: encode an array, [...set])');
  const name = typeof c === 'function' && c.name ? c.name : 'object';
  if (instancesAsMaps) fail(v, `unsupported type ${name} (its contents are not properties: register an extension)`);
  fail(v, `unsupported type ${name} (register an extension, or option classInstances: "map")`);
}

function writeExt(v: unknown, type: number, data: Uint8Array): void {
  if (!Number.isInteger(type) || type < 0 || type > MAX_EXT_TYPE) fail(v, 'extension type out of range 0..65535');
  ensure(data.length + 20);
  buf[pos++] = 0xf7;
  writeVarint(type);
  writeVarint(data.length);
  buf.set(data, pos);
  pos += data.length;
}

// ---------------------------------------------------------------------------
// Encoder classes
// ---------------------------------------------------------------------------

/** @internal */
export interface StreamTables {
  gen: number;
  nstr: number;
  nshape: number;
  lastStr: string | null;
  lastTs: number;
  keySlot: ESlot;
  root: ESlot;
}

let active = false;

function snapshot(): unknown[] {
  return [buf, view, start, pos, cap, entries, fcStr, fcEnt, epoch, nstr, gen, nshape, registry, lastStr, lastTs, depth, maxDepth, keySlot, undefinedAsNull, instancesAsMaps, hasDict, protoClean, keyIds, suspendLevels()];
}

function restoreSnapshot(s: unknown[]): void {
  let levels: unknown;
  [buf, view, start, pos, cap, entries, fcStr, fcEnt, epoch, nstr, gen, nshape, registry, lastStr, lastTs, depth, maxDepth, keySlot, undefinedAsNull, instancesAsMaps, hasDict, protoClean, keyIds, levels] = s as [
    Uint8Array, DataView, number, number, number, Map<string, StrEntry>, (string | undefined)[], (StrEntry | undefined)[], number, number, number, number, ShapeRegistry, string | null, number, number, number, ESlot, boolean, boolean, boolean, boolean, KeyIdentities | null, unknown,
  ];
  resumeLevels(levels as ReturnType<typeof suspendLevels>);
}

/** @internal For encoder-deep.ts, which keeps the nesting depth of the levels it writes. */
export function setDepth(d: number): void {
  depth = d;
}

let genCounter = 0;
let epochCounter = 0;
const ENTRY_LIMIT = 65536;

/** A reusable encoder: keeps its output slab, string index and shape registry between calls. */
export class Encoder {
  readonly options: Readonly<EncoderOptions>;
  /** @internal */ _buf: Uint8Array = new Uint8Array(0);
  /** @internal */ _view: DataView = new DataView(new ArrayBuffer(0));
  /** @internal */ _pos = 0;
  /** @internal */ _entries = new Map<string, StrEntry>();
  /** @internal */ _fcStr: (string | undefined)[] = new Array(1 << FC_BITS).fill(undefined);
  /** @internal */ _fcEnt: (StrEntry | undefined)[] = new Array(1 << FC_BITS).fill(undefined);
  /** @internal */ _epoch = ++epochCounter;
  /** @internal */ _dictStrs: readonly string[] = [];
  /** @internal */ _registry = new ShapeRegistry();
  /** @internal */ _dictShapes = 0;
  /** @internal */ _dictStrings = 0;
  /** @internal */ _header: Uint8Array;
  /** @internal */ _busy = false;
  /** @internal */ _root = new ESlot();
  /** @internal */ _keySlot = new ESlot();

  /** @internal */ _hasDict: boolean;
  /** @internal */ _maxDepth: number;
  /** @internal */ _undefinedAsNull: boolean;
  /** @internal */ _instancesAsMaps: boolean;

  constructor(options: EncoderOptions = {}) {
    checkOptions(options, ENCODER_OPTIONS, 'encode');
    this.options = options;
    this._hasDict = !!options.dictionary;
    this._maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this._undefinedAsNull = options.undefined === 'null';
    this._instancesAsMaps = options.classInstances === 'map';
    const d = options.dictionary ?? null;
    if (d) {
      this._dictStrs = d.strings;
      this._addDictEntries();
      this._dictStrings = d.strings.length;
      this._dictShapes = d.shapes.length;
      // dictionary shapes live in the registry with their fixed indices
      const saved = registry;
      registry = this._registry;
      try {
        d.shapes.forEach((keys, i) => {
          findShape(keys.slice()).dictIdx = i;
        });
      } finally {
        registry = saved;
      }
      this._header = new Uint8Array(11);
      this._header.set([0xc1, 0x70, 0x10 | FLAG_DICT]);
      let id = d.id;
      for (let i = 3; i < 11; i++) {
        this._header[i] = Number(id & 0xffn);
        id >>= 8n;
      }
    } else this._header = new Uint8Array([0xc1, 0x70, 0x10]);
  }

  /** @internal */
  _addDictEntries(): void {
    this._dictStrs.forEach((s, i) => {
      let e = this._entries.get(s);
      if (e === undefined) this._entries.set(s, (e = new StrEntry()));
      if (e.dict < 0) e.dict = i;
    });
  }

  /** @internal Loads this encoder's state into the module; returns the previous state when re-entered. */
  _enter(): unknown[] | null {
    const saved = active ? snapshot() : null;
    active = true;
    if (this._buf.length === 0) {
      // a slab whose ArrayBuffer was transferred (postMessage, structuredClone)
      // is detached: start a new one
      this._buf = new Uint8Array(0);
      this._view = new DataView(this._buf.buffer);
      this._pos = 0;
    }
    buf = this._buf;
    view = this._view;
    cap = buf.length;
    pos = this._pos;
    start = pos;
    entries = this._entries;
    fcStr = this._fcStr;
    fcEnt = this._fcEnt;
    epoch = this._epoch;
    hasDict = this._hasDict;
    registry = this._registry;
    maxDepth = this._maxDepth;
    undefinedAsNull = this._undefinedAsNull;
    instancesAsMaps = this._instancesAsMaps;
    protoClean = enumerableFree(ObjectProto);
    keyIds = null;
    return saved;
  }

  /** @internal */
  _leave(saved: unknown[] | null): void {
    this._buf = buf;
    this._view = view;
    // keep the slab aligned and hand out fresh space next time
    this._pos = (pos + 7) & ~7;
    if (saved) restoreSnapshot(saved);
    else active = false;
  }

  /** @internal Starts fresh tables for a buffer (or a stream). */
  _newTables(): void {
    gen = ++genCounter;
    if (this._entries.size > ENTRY_LIMIT) {
      this._entries.clear();
      this._fcStr.fill(undefined);
      this._fcEnt.fill(undefined);
      this._addDictEntries();
      entries = this._entries;
      epoch = this._epoch = ++epochCounter;
    }
    if (this._registry.count > 20000) this._pruneRegistry();
    nstr = this._dictStrings;
    nshape = this._dictShapes;
    lastStr = null;
    lastTs = 0;
    depth = 0;
    keySlot = this._keySlot;
    resetSlot(keySlot);
  }

  /** Drops every shape but the dictionary's (shapes still memoized in slots are marked evicted). */
  private _pruneRegistry(): void {
    const old = this._registry;
    const fresh = new ShapeRegistry();
    const keep = (sh: EShape): boolean => {
      if (sh.dictIdx >= 0) return true;
      sh.evicted = true;
      return false;
    };
    if (old.empty !== null && keep(old.empty)) fresh.empty = old.empty;
    for (const [k, bucket] of old.buckets) {
      const list = bucket.list.filter(keep);
      if (list.length === 0) continue;
      const b = new ShapeBucket();
      b.list = list;
      fresh.buckets.set(k, b);
    }
    fresh.count = this._dictShapes;
    if (registry === old) registry = fresh;
    this._registry = fresh;
  }

  /** @internal Writes one value at pos; throws EncodeError with a path on failure. */
  _value(value: unknown, root: ESlot): void {
    try {
      writeValue(value, root);
    } catch (e) {
      if (e instanceof Failure) {
        const where = locate(value, failValue, maxDepth, instancesAsMaps);
        failValue = undefined;
        if (where && where.cycle !== null) throw new EncodeError(`circular reference: the value at ${where.cycle} contains itself`, where.path);
        throw new EncodeError(failReason, where ? where.path : '$');
      }
      throw e;
    }
  }

  /** Encodes one value as a single-value buffer. The result is a view of an internal slab that is never rewritten. */
  encode(value: unknown): Uint8Array {
    if (this._busy) return new Encoder(this.options).encode(value);
    this._busy = true;
    const saved = this._enter();
    try {
      this._newTables();
      const h = this._header;
      ensure(h.length + 16);
      for (let i = 0; i < h.length; i++) buf[pos++] = h[i];
      resetSlot(this._root);
      this._value(value, this._root);
      return buf.subarray(start, pos);
    } catch (e) {
      pos = start;
      throw e;
    } finally {
      this._busy = false;
      this._leave(saved);
    }
  }

  /**
   * Encodes a sequence of values as one stream buffer (SPEC 2.3), with sync
   * frames where `sync` (or this encoder's options) ask.
   */
  encodeStream(values: Iterable<unknown>, sync?: SyncOptions): Uint8Array {
    const se = new StreamEncoder(sync ? { ...this.options, ...sync } : this.options);
    const parts: Uint8Array[] = [se.header()];
    for (const v of values) parts.push(se.write(v));
    return concat(parts);
  }
}

function varintBytes(n: number): Uint8Array {
  const save = buf, savePos = pos;
  buf = new Uint8Array(9);
  pos = 0;
  writeVarint(n);
  const out = buf.subarray(0, pos);
  buf = save;
  pos = savePos;
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * @internal Encodes `value` as one stream frame: the length varint, then
 * `mark` (a sync frame's FD, VF byte and dictionary id) if given, then the
 * item; `head` (the stream header) goes in front when given. A sync frame
 * starts from the start-of-buffer state (SPEC 2.3), which `t` then holds;
 * any other frame continues from `t`.
 */
export function encodeFrame(e: Encoder, t: StreamTables, mark: Uint8Array | null, head: Uint8Array | null, value: unknown): Uint8Array {
  const saved = e._enter();
  try {
    if (mark !== null) {
      // _newTables may drop a grown string index: after a sync frame nothing refers to it
      e._newTables();
      t.gen = gen;
      t.keySlot = keySlot;
      resetSlot(t.root);
    } else {
      gen = t.gen;
      nstr = t.nstr;
      nshape = t.nshape;
      lastStr = t.lastStr;
      lastTs = t.lastTs;
      keySlot = t.keySlot;
      depth = 0;
    }
    e._value(value, t.root);
    t.nstr = nstr;
    t.nshape = nshape;
    t.lastStr = lastStr;
    t.lastTs = lastTs;
    const m = mark === null ? 0 : mark.length;
    const n = pos - start + m;
    const h = head === null ? 0 : head.length;
    const vl = vlen(n);
    const out = new Uint8Array(h + vl + n);
    if (head !== null) out.set(head, 0);
    out.set(varintBytes(n), h);
    if (mark !== null) out.set(mark, h + vl);
    out.set(buf.subarray(start, pos), h + vl + m);
    return out;
  } finally {
    pos = start; // the slab space is reused
    e._leave(saved);
  }
}

/** @internal A stream's tables between frames; `encodeFrame` fills it at the first (sync) frame. */
export function newStreamTables(): StreamTables {
  return { gen: -1, nstr: 0, nshape: 0, lastStr: null, lastTs: 0, keySlot: new ESlot(), root: new ESlot() };
}

let defaultEncoder: Encoder | null = null;

/** Encodes a value as a canonical single-value Tersa buffer. */
export function encode(value: unknown, options?: EncoderOptions): Uint8Array {
  if (options === undefined) return (defaultEncoder ??= new Encoder()).encode(value);
  return new Encoder(options).encode(value);
}

/** Encodes values as a canonical stream buffer; `syncFrames` and `syncBytes` place sync frames (SPEC 2.3). */
export function encodeStream(values: Iterable<unknown>, options?: StreamEncoderOptions): Uint8Array {
  return new Encoder(options).encodeStream(values);
}

/** @internal Canonical encoding without header (dictionary serialization, SPEC 8). */
export function encodeBody(value: unknown): Uint8Array {
  const e = new Encoder();
  const saved = e._enter();
  try {
    e._newTables();
    e._value(value, new ESlot());
    return buf.slice(start, pos);
  } finally {
    e._leave(saved);
  }
}
