// Tersa decoder (SPEC sections 2-6, 8-10): the Decoder class and the entry
// points. Each Decoder owns one DecoderState (decoder-state.ts) that the
// readers (decoder-values.ts and the modules it uses) work on; a stream
// decoder has one of its own for the stream's tables.

import { DictionaryLike, FLAG_DICT, FLAG_STREAM, DEFAULT_MAX_DEPTH } from './common.js';
import { DecoderState, DictState, Slot, fail, resetSlot } from './decoder-state.js';
import { DShape } from './decoder-state.js';
import { varint } from './decoder-input.js';
import { read } from './decoder-values.js';
import { MapBuilder, exactKeyTag, resetKeyIds } from './map-keys.js';
import { StreamDecoder } from './stream-decoder.js';
import { checkOptions, dictionaryList, DECODER_OPTIONS } from './options.js';
import type { StreamOptions, StreamDecoderOptions, JoinResult } from './stream-decoder.js';
export { MapBuilder, exactKeyTag };
export { StreamDecoder };
export type { StreamOptions, StreamDecoderOptions, JoinResult };
export { DictState, Slot };

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

/** Parses the header at the start of src; returns the dictionary it names, or null. */
function header(rd: DecoderState, dicts: Map<bigint, DictState>, stream: boolean): DictState | null {
  const n = rd.src.length;
  if ((n >= 1 && rd.src[0] !== 0xc1) || (n >= 2 && rd.src[1] !== 0x70)) fail('bad_magic', 0, 'not a Tersa buffer');
  if (n < 3) fail('truncated', 0, 'input ends inside the header');
  const vf = rd.src[2];
  if (vf >> 4 !== 1) fail('unsupported_version', 2, `version ${vf >> 4}`);
  const flags = vf & 0x0f;
  if (flags & ~(FLAG_DICT | FLAG_STREAM)) fail('bad_flags', 2, 'reserved header flag set');
  // The flags byte precedes the dictionary id: its defects are reported first (SPEC 10).
  if (!(flags & FLAG_STREAM) !== !stream) fail('bad_flags', 2, stream ? 'not a stream buffer' : 'a stream buffer: use decodeStream');
  rd.pos = 3;
  let dict: DictState | null = null;
  if (flags & FLAG_DICT) {
    if (n < 11) fail('truncated', 3, 'input ends inside the dictionary id');
    let id = 0n;
    for (let i = 10; i >= 3; i--) id = (id << 8n) | BigInt(rd.src[i]);
    rd.pos = 11;
    dict = dicts.get(id) ?? null;
    if (dict === null) fail('unknown_dictionary', 3, `dictionary 0x${id.toString(16).padStart(16, '0')} was not supplied`);
  }
  return dict;
}

/** Starts a buffer's tables (SPEC 4.1): the dictionary's, or empty ones in the Decoder's storage. */
function startTables(rd: DecoderState, d: Decoder, dict: DictState | null): void {
  rd.gen++;
  if (dict !== null) {
    rd.strs = dict.strs;
    rd.lens = dict.lens;
    rd.nstr = dict.nstr;
    rd.shapes = dict.shapes;
    rd.nshape = dict.nshape;
  } else {
    rd.strs = d._strs;
    rd.lens = d._lens;
    rd.nstr = 0;
    rd.shapes = d._shapes;
    rd.nshape = 0;
  }
  rd.lastStr = null;
  rd.lastLen = 0;
  rd.lastTs = 0;
  rd.depth = 0;
  resetSlot(rd.keySlot);
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

/** Decode calls under way (an extension's read may decode): the key identities of map-keys.ts live as long as the outermost. */
let active = 0;

/** A reusable decoder: keeps its tables' storage and shape memo between calls. */
export class Decoder {
  readonly options: Readonly<DecoderOptions>;
  /** @internal */ _strs: string[] = [];
  /** @internal */ _lens: number[] = [];
  /** @internal */ _shapes: DShape[] = [];
  /** @internal */ _dicts = new Map<bigint, DictState>();
  /** @internal */ _st: DecoderState;
  /** @internal */ _busy = false;
  /** @internal */ _root = new Slot();

  constructor(options: DecoderOptions = {}) {
    checkOptions(options, DECODER_OPTIONS, 'decode');
    this.options = options;
    for (const d of dictionaryList(options.dictionaries)) this._dicts.set(d.id, new DictState(d));
    this._st = this._newState();
  }

  /** @internal A state with this decoder's options (its own, or a stream's). */
  _newState(): DecoderState {
    const o = this.options;
    const rd = new DecoderState();
    rd.maxDepth = o.maxDepth ?? DEFAULT_MAX_DEPTH;
    rd.exactFloats = !!o.exactFloats;
    rd.mapsAlways = o.maps === 'map';
    rd.datesAlways = o.dates === 'timestamp';
    rd.bigints = o.integers === 'bigint';
    rd.binaryViews = !!o.binaryViews;
    if (rd !== this._st && this._st !== undefined) rd.memo = this._st.memo;
    return rd;
  }

  /** @internal Around every call that reads with a state of this decoder. */
  _enter(rd: DecoderState): void {
    active++;
    rd.winSrc = null; // the input may be a reused buffer with new content (a DataView needs no reset)
  }

  /** @internal */
  _leave(rd: DecoderState): void {
    // hold nothing of the input
    rd.src = EMPTY;
    rd.lastExtData = EMPTY;
    rd.dvSrc = rd.winSrc = null;
    rd.dv = EMPTY_VIEW;
    rd.win = '';
    rd.levels = null;
    if (--active === 0) resetKeyIds();
  }

  /** Decodes a single-value buffer. */
  decode(input: Uint8Array | ArrayBuffer): any {
    // A nested call on the same decoder (from an extension's read) gets its own tables.
    if (this._busy) return new Decoder(this.options).decode(input);
    this._busy = true;
    const rd = this._st;
    this._enter(rd);
    try {
      rd.src = asBytes(input);
      rd.pos = 0;
      rd.end = rd.src.length;
      const dict = header(rd, this._dicts, false);
      startTables(rd, this, dict);
      const root = this._root;
      resetSlot(root);
      const v = read(rd, root);
      if (rd.pos !== rd.end) fail('trailing_bytes', rd.pos, 'bytes after the value');
      return v;
    } finally {
      this._busy = false;
      // do not keep the strings of a huge buffer alive
      if (this._strs.length > 65536) {
        this._strs = [];
        this._lens = [];
      }
      if (this._shapes.length > 65536) this._shapes = [];
      this._leave(rd);
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
const EMPTY_VIEW = new DataView(new ArrayBuffer(8));

// ---------------------------------------------------------------------------
// Stream frames: the hooks of stream-decoder.ts
// ---------------------------------------------------------------------------

/**
 * @internal The start-of-buffer state (SPEC 2.3: a sync frame restores it)
 * in a stream's own state (`first`: its first sync frame): its tables are
 * its own, not the Decoder's or the dictionary's, since other buffers
 * decoded in between must not touch them.
 */
export function syncStreamState(rd: DecoderState, root: Slot, dict: DictState | null, first: boolean): void {
  // a new generation: the slots of the stream's shapes reset on first use
  const g = ++rd.gen;
  const ns = dict === null ? 0 : dict.nstr;
  const nsh = dict === null ? 0 : dict.nshape;
  if (first) {
    rd.strs = dict === null ? [] : dict.strs.slice(0, ns);
    rd.lens = dict === null ? [] : dict.lens.slice(0, ns);
    rd.shapes = dict === null ? [] : dict.shapes.slice(0, nsh).map((s) => new DShape(s.info, g));
  }
  // Entries past the dictionary's are dropped, not just hidden: a long-lived
  // stream then holds no more than one stretch between sync frames needs.
  rd.strs.length = rd.lens.length = rd.nstr = ns;
  rd.shapes.length = rd.nshape = nsh;
  rd.lastStr = null;
  rd.lastLen = 0;
  rd.lastTs = 0;
  resetSlot(rd.keySlot);
  resetSlot(root);
}

/** @internal The length varint of the frame at `at` (SPEC 3.1 errors); `rd.pos` is then just past it. */
export function frameLength(rd: DecoderState, input: Uint8Array, at: number, limit: number): number {
  rd.src = input;
  rd.pos = at;
  rd.end = limit;
  return varint(rd, at);
}

/** @internal Decodes the item filling input[from, to) in the stream's state. Between `_enter` and `_leave`. */
export function readFrame(rd: DecoderState, root: Slot, input: Uint8Array, from: number, to: number): unknown {
  rd.src = input;
  rd.pos = from;
  rd.end = to;
  rd.depth = 0;
  const v = read(rd, root);
  if (rd.pos !== rd.end) fail('trailing_bytes', rd.pos, 'bytes after the value in its frame');
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
  const rd = d._st;
  d._enter(rd);
  try {
    rd.src = input;
    rd.pos = 0;
    rd.end = input.length;
    startTables(rd, d, null);
    const v = read(rd, new Slot());
    if (rd.pos !== rd.end) fail('trailing_bytes', rd.pos, 'bytes after the value');
    return v;
  } finally {
    d._leave(rd);
  }
}
