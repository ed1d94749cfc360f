// The decoder's state (SPEC 4): one DecoderState per Decoder (and one per
// stream) holds the input and its cursor, the string and shape tables, the
// top-level and key slots, the last and timestamp registers and the options
// the readers look at. Every reader takes it as its first argument, as the
// reference codec's Decoder holds its State.

import { DecodeError, DEFAULT_MAX_DEPTH, utf8Length } from './common.js';
import type { DecodeErrorCode, DictionaryLike } from './common.js';
import { getInfo } from './decoder-shapes.js';
import type { ShapeInfo, MemoEntry } from './decoder-shapes.js';

// Containers nest by recursion this deep, then from an explicit stack
// (decoder-deep.ts): the stack this takes fits in any JavaScript engine's.
export const RECURSION_DEPTH = 100;

/** A slot (SPEC 4.3): the registers of one position in the data. */
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
  // the last prefix-form string made in this slot and its head (its first
  // phl bytes, ASCII); a base equal to it (=== compares text, at once when it
  // is the same string) has the same head
  ps: string | null = null;
  ph = '';
  phl = 0;
}

export function resetSlot(s: Slot): void {
  s.s = null;
  s.sl = 0;
  s.ik = 0;
  s.dk = false;
}

/** An entry of a buffer's shape table. */
export class DShape {
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

/** Per-dictionary prepared tables, owned by a Decoder. */
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
      this.lens.push(utf8Length(s));
    }
    this.nstr = this.strs.length;
    this.shapes = [];
    for (const keys of d.shapes) {
      this.shapes.push(new DShape(getInfo(keys.map((k) => (typeof k === 'symbol' ? Symbol.for(Symbol.keyFor(k)!) : k))), -1));
    }
    this.nshape = this.shapes.length;
  }
}

/** A container whose header is read (decoder-deep.ts): `next()` reads one item, `take()` receives it, `value()` builds the container. */
export interface Level {
  left: number;
  next(rd: DecoderState): unknown;
  take(rd: DecoderState, v: unknown): void;
  value(rd: DecoderState): unknown;
}

const EMPTY = new Uint8Array(0);

export class DecoderState {
  // the input: the item being read is in src[pos, end)
  src: Uint8Array = EMPTY;
  pos = 0;
  end = 0;
  // the tables (SPEC 4.1, 4.2): the Decoder's storage, a dictionary's, or a stream's
  strs: string[] = [];
  lens: number[] = []; // UTF-8 length of each string
  nstr = 0;
  shapes: DShape[] = [];
  nshape = 0;
  gen = 0; // buffer generation: a shape table entry of another one has stale slots
  // registers (SPEC 4.3)
  lastStr: string | null = null;
  lastLen = 0;
  lastTs = 0;
  keySlot = new Slot();
  depth = 0;
  levels: Level[] | null = null; // the explicit stack of decoder-deep.ts, while it reads
  /** Scratch of decoder-values.ts' array(): numbers only, so V8 keeps them as unboxed doubles. */
  nums: number[] = [0.5];
  /** Recent shapes defined at each shape table index (decoder-shapes.ts), kept across buffers. */
  memo: (MemoEntry[] | undefined)[] = [];
  // options
  maxDepth = DEFAULT_MAX_DEPTH;
  exactFloats = false;
  mapsAlways = false;
  datesAlways = false;
  bigints = false;
  binaryViews = false;
  // the last varint, when it was >= 2^53, as unsigned 32-bit halves
  varHi = 0;
  varLo = 0;
  // the last extension value read, before any read() hook (generic-map key identity)
  lastExtType = 0;
  lastExtData: Uint8Array = EMPTY;
  // views of src: a DataView, and a one-byte string of a window of it (decoder-utf8.ts)
  dvSrc: Uint8Array | null = null;
  dv: DataView = new DataView(new ArrayBuffer(8));
  win = '';
  winSrc: Uint8Array | null = null;
  winStart = 0;
  winEnd = 0;
}

/** A DataView over rd.src, made once per input buffer (the readers of binary floats and of ASCII runs share it). */
export function srcView(rd: DecoderState): DataView {
  if (rd.dvSrc !== rd.src) {
    rd.dvSrc = rd.src;
    rd.dv = new DataView(rd.src.buffer, rd.src.byteOffset, rd.src.byteLength);
  }
  return rd.dv;
}

export function fail(code: DecodeErrorCode, at: number, msg?: string): never {
  throw new DecodeError(code, at, msg);
}
