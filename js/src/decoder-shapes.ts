// Shapes (SPEC 4.2, 5.4): what is derived from a key sequence (shared
// across decoders, with a compiled object factory for hot shapes), MAPDEF
// items with a per-decoder memo of recent definitions matched by their raw
// bytes, shape references, and the object or Map of a shaped map's values.

import { MAX_SHAPES, MAX_STRINGS, REF8_BASE, REF16_BASE, Tag } from './common.js';
import { fail, DShape, Slot, resetSlot, RECURSION_DEPTH } from './decoder-state.js';
import type { DecoderState } from './decoder-state.js';
import { byte, length } from './decoder-input.js';
import { isStringTag, readString, refString } from './decoder-strings.js';
import { cachedAscii } from './decoder-utf8.js';
import { read } from './decoder-values.js';
import { nestShaped } from './decoder-deep.js';

type Factory = (r: (rd: DecoderState, s: Slot) => unknown, rd: DecoderState, s: Slot[]) => unknown;

/** Everything derived from a key sequence; shared across buffers and decoders. */
export class ShapeInfo {
  keys: (string | symbol)[];
  n: number;
  asObject: boolean;
  /** Some key is a property of Object.prototype ("__proto__", "constructor", ...). */
  inherited: boolean;
  factory: Factory | null = null;
  uses = 0; // close recurrences (see HOT_GAP)
  last = -HOT_GAP; // shapeClock at the last use
  constructor(keys: (string | symbol)[]) {
    this.keys = keys;
    this.n = keys.length;
    let allStrings = true;
    for (const k of keys) if (typeof k !== 'string') allStrings = false;
    this.inherited = allStrings && keys.some((k) => (k as string) in Object.prototype);
    this.asObject = allStrings && objectKeepsOrder(keys as string[]);
  }
}

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

export function getInfo(keys: (string | symbol)[]): ShapeInfo {
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
  const keys = info.keys as string[];
  // Keys that Object.prototype has are defined by a literal: an assignment
  // to "__proto__" sets the prototype, and one to a property that frozen
  // intrinsics made read-only fails.
  if (keys.some((k) => k in Object.prototype)) {
    const parts: string[] = [];
    // A literal "__proto__": v would set the prototype too; a computed key
    // defines an own data property.
    for (let i = 0; i < keys.length; i++) {
      const k = JSON.stringify(keys[i]);
      parts.push((keys[i] === '__proto__' ? '[' + k + ']' : k) + ':r(d,s[' + i + '])');
    }
    // eslint-disable-next-line no-new-func
    return new Function('r', 'd', 's', 'return {' + parts.join(',') + '}') as Factory;
  }
  // A constructor whose prototype is Object.prototype makes plain objects
  // (same prototype, own enumerable data properties in key order) sized
  // for their keys. An object literal would make them too, but from an
  // allocation site, which V8 switches to allocating in the old generation
  // once enough of its objects survive a scavenge (a large document read
  // while one runs); every decode then pays for full collections.
  const body: string[] = [];
  for (let i = 0; i < keys.length; i++) body.push('this[' + JSON.stringify(keys[i]) + ']=r(d,s[' + i + ']);');
  // eslint-disable-next-line no-new-func
  const C = new Function('r', 'd', 's', body.join('')) as unknown as new (r: unknown, d: DecoderState, s: Slot[]) => object;
  C.prototype = Object.prototype;
  return (r, d, s) => new C(r, d, s);
}

export function shapeRef(rd: DecoderState, i: number, at: number): unknown {
  if (rd.depth >= rd.maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
  if (i >= rd.nshape) fail('bad_reference', at, `shape reference ${i} beyond the table`);
  const shape = rd.shapes[i];
  if (shape.gen !== rd.gen) {
    const sl = shape.slots;
    for (let k = 0; k < shape.info.n; k++) resetSlot(sl[k]);
    shape.gen = rd.gen;
  }
  if (shape.info.n > rd.end - rd.pos) fail('length_exceeds_input', at, 'shape has more values than input remains');
  return rd.depth < RECURSION_DEPTH ? mapValues(rd, shape.info, shape.slots) : nestShaped(rd, shape.info, shape.slots, rd.depth);
}

const keyBuf: (string | symbol)[] = [];

// Bounds of the MAPDEF memo: at most 2048 x 16 entries of at most 512 key bytes (16 MiB).
// Each index keeps the shapes of as many message types: a decoder that meets
// more types than that, in turn, misses every time, so the bound is set well
// above the number of message types a service usually rotates through. The
// indices cover documents of records that each define their own shape
// (kinds/sparse_records defines 1,283).
const MEMO_INDICES = 2048;
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
export class MemoEntry {
  info: ShapeInfo;
  n: number;
  /** rawWords[0], or -1 when raw is null or shorter than 4 bytes: a candidate filter of one comparison. */
  head = -1;
  raw: Uint8Array | null = null;
  rawWords: Uint32Array | null = null;
  kinds: number[] = [];
  lens: number[] = [];
  /** The positions of the keys that are references (checked against the table) and of the inline keys the table appends. */
  refs: number[] = [];
  adds: number[] = [];
  constructor(info: ShapeInfo) {
    this.info = info;
    this.n = info.n;
  }
}

function readKey(rd: DecoderState, kat: number): string | symbol {
  if (kat >= rd.end) fail('truncated', kat, 'input ends before an item');
  let kt = rd.src[rd.pos++];
  if (kt < Tag.STR0) {
    keyKind = kt;
    return refString(rd, kt, kat, rd.keySlot);
  }
  if (kt < Tag.SHAPE0) {
    keyKind = -1;
    const kn = kt - Tag.STR0;
    if (kn > rd.end - rd.pos) fail('truncated', kat, 'input ends inside a string');
    const ks = cachedAscii(rd, kn, kat);
    if (kn >= 2 && rd.nstr < MAX_STRINGS) {
      rd.strs[rd.nstr] = ks;
      rd.lens[rd.nstr] = kn;
      rd.nstr++;
    }
    rd.keySlot.s = ks;
    rd.keySlot.sl = rd.lastLen = kn;
    rd.lastStr = ks;
    return ks;
  }
  if (kt === Tag.SYMBOL) {
    const sat = rd.pos;
    if (sat >= rd.end) fail('truncated', sat, 'input ends before an item');
    kt = rd.src[rd.pos++];
    if (!isStringTag(kt)) fail('expected_string', sat, 'a symbol name must be a string');
    keyKind = -2;
    return Symbol.for(readString(rd, kt, sat, rd.keySlot));
  }
  if (!isStringTag(kt)) fail('expected_string', kat, 'a map key must be a string or symbol');
  // Longer references are context-free too (the memo compares their bytes
  // and checks the table entry), so records whose keys sit beyond the first
  // 64 strings still match the memo.
  if (kt === Tag.REF8) {
    const i = REF8_BASE + byte(rd, kat);
    keyKind = i;
    return refString(rd, i, kat, rd.keySlot);
  }
  if (kt === Tag.REF16) {
    if (rd.pos + 2 > rd.end) fail('truncated', kat, 'input ends inside an item');
    const i = REF16_BASE + (rd.src[rd.pos] | (rd.src[rd.pos + 1] << 8));
    rd.pos += 2;
    keyKind = i;
    return refString(rd, i, kat, rd.keySlot);
  }
  // A prefix key is context-free within a MAPDEF when its base is the key
  // before it (both registers then hold that key): mapDef marks it -1 then.
  keyKind = kt >= Tag.PFX0 && kt < Tag.DEC0 ? -3 : -2;
  return readString(rd, kt, kat, rd.keySlot);
}

/** The four bytes at p as a little-endian unsigned word. */
function word(b: Uint8Array, p: number): number {
  return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
}

/** The fast path of mapDef: a memo entry whose raw key bytes match; applies their state updates. */
function matchRaw(rd: DecoderState, cands: MemoEntry[], n: number): MemoEntry | null {
  const start = rd.pos;
  const avail = rd.end - start;
  // Words are read byte by byte, not through a DataView: a message queue's
  // decoder meets a new buffer per message, and making a DataView of each
  // cost more than the whole comparison.
  const src = rd.src;
  const head = avail >= 4 ? word(src, start) : -2;
  for (let c = 0; c < cands.length; c++) {
    const e = cands[c];
    if (e.n !== n || (e.head !== head && e.head !== -1)) continue;
    const raw = e.raw;
    if (raw === null) continue;
    const R = raw.length;
    if (R > avail) continue;
    // compare four bytes at a time (rawWords: raw as little-endian words)
    const w = e.rawWords!;
    const R4 = R & ~3;
    let j = 0;
    while (j < R4 && word(src, start + j) === w[j >> 2]) j += 4;
    if (j < R4) continue;
    while (j < R && rd.src[start + j] === raw[j]) j++;
    if (j !== R) continue;
    const kinds = e.kinds;
    const keys = e.info.keys as string[];
    const refs = e.refs;
    let ok = true;
    for (let q = 0; q < refs.length; q++) {
      const k = refs[q];
      const r = kinds[k];
      if (r >= rd.nstr || rd.strs[r] !== keys[k]) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    const lns = e.lens;
    const adds = e.adds;
    for (let q = 0; q < adds.length && rd.nstr < MAX_STRINGS; q++) {
      const k = adds[q];
      rd.strs[rd.nstr] = keys[k];
      rd.lens[rd.nstr] = lns[k];
      rd.nstr++;
    }
    if (n > 0) {
      rd.keySlot.s = rd.lastStr = keys[n - 1];
      rd.keySlot.sl = rd.lastLen = lns[n - 1];
    }
    rd.pos = start + R;
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

export function mapDef(rd: DecoderState, n: number, at: number): unknown {
  if (rd.depth >= rd.maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
  if (n < 0) n = length(rd, at, 16);
  if (2 * n > rd.end - rd.pos) fail('length_exceeds_input', at, 'count exceeds the remaining input');
  const idx = rd.nshape;
  const cands = rd.memo[idx];
  let info: ShapeInfo | undefined;
  const hit = cands !== undefined ? matchRaw(rd, cands, n) : null;
  if (hit !== null) info = hit.info;
  else {
    const small = n <= 16;
    const keys = small ? keyBuf : new Array<string | symbol>(n);
    const offs = small ? keyOffs : new Array<number>(n);
    const kinds = small ? keyKinds : new Array<number>(n);
    const klens = small ? keyLens : new Array<number>(n);
    const start = rd.pos;
    let i = 0;
    try {
      for (; i < n; i++) {
        const kat = rd.pos;
        offs[i] = kat;
        keys[i] = readKey(rd, kat);
        kinds[i] = keyKind === -3 ? (i > 0 ? -1 : -2) : keyKind;
        klens[i] = rd.lastLen;
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
        if (cands === undefined) rd.memo[idx] = [entry];
        else {
          if (cands.length >= MEMO_PER_INDEX) cands.pop();
          cands.unshift(entry);
        }
      }
    }
    info = entry.info;
    let plain = rd.pos - start <= MEMO_RAW_MAX;
    for (let k = 0; k < n && plain; k++) if (kinds[k] === -2) plain = false;
    if (plain) {
      const R = rd.pos - start;
      entry.raw = rd.src.slice(start, rd.pos);
      const words = new Uint32Array(R >> 2);
      for (let j = 0; j < words.length; j++) words[j] = word(rd.src, start + 4 * j);
      entry.rawWords = words;
      entry.head = R >= 4 ? words[0] : -1;
      entry.kinds = kinds.slice(0, n);
      entry.lens = klens.slice(0, n);
      const refs: number[] = [];
      const adds: number[] = [];
      for (let k = 0; k < n; k++) {
        if (kinds[k] >= 0) refs.push(k);
        else if (klens[k] >= 2) adds.push(k);
      }
      entry.refs = refs;
      entry.adds = adds;
    } else {
      entry.raw = null;
      entry.head = -1;
    }
  }
  let slots: Slot[];
  if (rd.nshape < MAX_SHAPES) {
    let shape = rd.shapes[idx];
    if (shape === undefined || shape.gen === rd.gen) {
      // a table entry from an unrelated earlier decode is recycled below
      shape = new DShape(info, rd.gen);
      rd.shapes[idx] = shape;
    } else {
      shape.info = info;
      shape.gen = rd.gen;
      // Slots beyond n are kept (unused): message types of different sizes
      // that take turns at an index would otherwise drop and remake them.
      const sl = shape.slots;
      for (let i = sl.length; i < n; i++) sl.push(new Slot());
      for (let i = 0; i < n; i++) resetSlot(sl[i]);
    }
    rd.nshape++;
    slots = shape.slots;
  } else {
    slots = [];
    for (let i = 0; i < n; i++) slots.push(new Slot());
  }
  return rd.depth < RECURSION_DEPTH ? mapValues(rd, info, slots) : nestShaped(rd, info, slots, rd.depth);
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

function mapValues(rd: DecoderState, info: ShapeInfo, slots: Slot[]): unknown {
  rd.depth++;
  let out: unknown;
  if (info.asObject && !rd.mapsAlways) {
    const f = info.factory;
    if (f !== null) out = f(read, rd, slots);
    else if (hot(info) && canEval) {
      info.factory = compileFactory(info);
      out = info.factory(read, rd, slots);
    } else {
      const keys = info.keys as string[];
      const o: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        const v = read(rd, slots[i]);
        if (info.inherited && k in Object.prototype) defineOwn(o, k, v);
        else o[k] = v;
      }
      out = o;
    }
  } else {
    const keys = info.keys;
    const m = new Map<unknown, unknown>();
    for (let i = 0; i < keys.length; i++) m.set(keys[i], read(rd, slots[i]));
    out = m;
  }
  rd.depth--;
  return out;
}

/**
 * An own data property even for a key that Object.prototype has: assigning
 * "__proto__" would set the prototype, and assigning a property that frozen
 * intrinsics made read-only ("constructor", "toString" after a lockdown) throws.
 */
export function defineOwn(o: object, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
}

/** The shaped map of these values (all read), as mapValues builds it. */
export function shapedValue(rd: DecoderState, info: ShapeInfo, values: unknown[]): unknown {
  const keys = info.keys;
  if (info.asObject && !rd.mapsAlways) {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      if (info.inherited && k in Object.prototype) defineOwn(o, k, values[i]);
      else o[k] = values[i];
    }
    return o;
  }
  const m = new Map<unknown, unknown>();
  for (let i = 0; i < keys.length; i++) m.set(keys[i], values[i]);
  return m;
}
