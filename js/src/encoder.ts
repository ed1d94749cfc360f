// Tersa encoder: the canonical encoding of SPEC section 7. The Encoder class
// and the entry points; each Encoder owns one EncoderState (encoder-state.ts)
// that the writers (encoder-values.ts and the modules it uses) work on.

import { DictionaryLike, EncodeError, DEFAULT_MAX_DEPTH, FLAG_DICT } from './common.js';
import { locate } from './locate.js';
import { StreamEncoder } from './stream-encoder.js';
import { checkOptions, ENCODER_OPTIONS } from './options.js';
import { EncoderState, ESlot, StrEntry, ShapeNode, ShapeRegistry, Failure, resetSlot } from './encoder-state.js';
import { ensure, vlen, varintBytes } from './encoder-output.js';
import { findShape, stepShape } from './encoder-shapes.js';
import { writeValue, enumerableFree, ObjectProto } from './encoder-values.js';
export { StreamEncoder };
export type { StreamEncoderOptions, SyncOptions };
import type { StreamEncoderOptions, SyncOptions } from './stream-encoder.js';

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

/** The header (SPEC 2.1): magic C1 70, then version 1 in the high nibble with the flags. */
const MAGIC0 = 0xc1;
const MAGIC1 = 0x70;
const VERSION_BYTE = 0x10;

/** Past this many distinct strings, the string index is cleared at the start of a buffer. */
const ENTRY_LIMIT = 65536;
/** Past this many shapes, the registry keeps only the dictionary's at the start of a buffer. */
const SHAPE_LIMIT = 20000;

/** A reusable encoder: keeps its output slab, string index and shape registry between calls. */
export class Encoder {
  readonly options: Readonly<EncoderOptions>;
  /** @internal */ _st: EncoderState;
  /** @internal */ _dictStrs: readonly string[] = [];
  /** @internal */ _dictShapes = 0;
  /** @internal */ _dictStrings = 0;
  /** @internal */ _header: Uint8Array;
  /** @internal */ _busy = false;
  /** @internal */ _root = new ESlot();

  constructor(options: EncoderOptions = {}) {
    checkOptions(options, ENCODER_OPTIONS, 'encode');
    this.options = options;
    const st = (this._st = new EncoderState(options.maxDepth ?? DEFAULT_MAX_DEPTH, options.undefined === 'null', options.classInstances === 'map', !!options.dictionary));
    const d = options.dictionary ?? null;
    if (d) {
      this._dictStrs = d.strings;
      this._addDictEntries();
      this._dictStrings = d.strings.length;
      this._dictShapes = d.shapes.length;
      // dictionary shapes live in the registry with their fixed indices
      d.shapes.forEach((keys, i) => {
        findShape(st, keys.slice()).dictIdx = i;
      });
      this._header = new Uint8Array(11);
      this._header.set([MAGIC0, MAGIC1, VERSION_BYTE | FLAG_DICT]);
      let id = d.id;
      for (let i = 3; i < 11; i++) {
        this._header[i] = Number(id & 0xffn);
        id >>= 8n;
      }
    } else this._header = new Uint8Array([MAGIC0, MAGIC1, VERSION_BYTE]);
  }

  /** @internal */
  _addDictEntries(): void {
    const entries = this._st.entries;
    this._dictStrs.forEach((s, i) => {
      let e = entries.get(s);
      if (e === undefined) entries.set(s, (e = new StrEntry()));
      if (e.dict < 0) e.dict = i;
    });
  }

  /** @internal Prepares the state for a call: this call's bytes start at the slab's free space. */
  _enter(): EncoderState {
    const st = this._st;
    if (st.buf.length === 0) {
      // a slab whose ArrayBuffer was transferred (postMessage, structuredClone)
      // is detached: start a new one
      st.buf = new Uint8Array(0);
      st.view = new DataView(st.buf.buffer);
      st.pos = 0;
    }
    st.cap = st.buf.length;
    st.start = st.pos;
    st.protoClean = enumerableFree(ObjectProto);
    st.keyIds = null;
    return st;
  }

  /** @internal */
  _leave(st: EncoderState): void {
    st.lastLen = st.pos - st.start;
    // keep the slab aligned and hand out fresh space next time
    st.pos = (st.pos + 7) & ~7;
  }

  /** @internal Starts fresh tables for a buffer (or a stream). */
  _newTables(): void {
    const st = this._st;
    if (st.entries.size > ENTRY_LIMIT) {
      st.entries.clear();
      st.arenaPos = 0;
      this._addDictEntries();
      st.newEpoch();
    }
    if (st.registry.count > SHAPE_LIMIT) this._pruneRegistry();
    st.newTables(this._dictStrings, this._dictShapes);
  }

  /** Drops every shape but the dictionary's (shapes still memoized in slots are marked evicted). */
  private _pruneRegistry(): void {
    const fresh = new ShapeRegistry();
    const stack: ShapeNode[] = [this._st.registry.root];
    while (stack.length > 0) {
      const nd = stack.pop()!;
      const sh = nd.shape;
      if (sh !== null) {
        if (sh.dictIdx >= 0) {
          let at = fresh.root;
          for (const k of sh.keys) at = stepShape(at, k);
          at.shape = sh;
        } else sh.evicted = true;
      }
      if (nd.node !== null) stack.push(nd.node);
      if (nd.next !== null) for (const x of nd.next.values()) stack.push(x);
    }
    fresh.count = this._dictShapes;
    this._st.registry = fresh;
  }

  /** @internal Writes one value at pos; throws EncodeError with a path on failure. */
  _value(value: unknown, root: ESlot): void {
    const st = this._st;
    try {
      writeValue(st, value, root);
    } catch (e) {
      st.levels = null;
      if (e instanceof Failure) {
        const where = locate(value, st.failValue, st.maxDepth, st.instancesAsMaps);
        st.failValue = undefined;
        if (where && where.cycle !== null) throw new EncodeError(`circular reference: the value at ${where.cycle} contains itself`, where.path);
        throw new EncodeError(st.failReason, where ? where.path : '$');
      }
      throw e;
    }
  }

  /** Encodes one value as a single-value buffer. The result is a view of an internal slab that is never rewritten. */
  encode(value: unknown): Uint8Array {
    if (this._busy) return new Encoder(this.options).encode(value);
    this._busy = true;
    const st = this._enter();
    try {
      this._newTables();
      const h = this._header;
      ensure(st, h.length + 16);
      for (let i = 0; i < h.length; i++) st.buf[st.pos++] = h[i];
      resetSlot(this._root);
      this._value(value, this._root);
      return st.buf.subarray(st.start, st.pos);
    } catch (e) {
      st.pos = st.start;
      throw e;
    } finally {
      this._busy = false;
      this._leave(st);
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

/** @internal What a stream keeps between frames besides its Encoder's state: the top-level slot. */
export interface StreamTables {
  root: ESlot;
}

/**
 * @internal Encodes `value` as one stream frame: the length varint, then
 * `mark` (a sync frame's FD, VF byte and dictionary id) if given, then the
 * item; `head` (the stream header) goes in front when given. A sync frame
 * starts from the start-of-buffer state (SPEC 2.3); any other frame
 * continues from the state the last frame left in `e`, which belongs to
 * the stream alone.
 */
export function encodeFrame(e: Encoder, t: StreamTables, mark: Uint8Array | null, head: Uint8Array | null, value: unknown): Uint8Array {
  const st = e._enter();
  try {
    if (mark !== null) {
      e._newTables();
      resetSlot(t.root);
    } else st.depth = 0;
    e._value(value, t.root);
    const m = mark === null ? 0 : mark.length;
    const n = st.pos - st.start + m;
    const h = head === null ? 0 : head.length;
    const vl = vlen(n);
    const out = new Uint8Array(h + vl + n);
    if (head !== null) out.set(head, 0);
    out.set(varintBytes(n), h);
    if (mark !== null) out.set(mark, h + vl);
    out.set(st.buf.subarray(st.start, st.pos), h + vl + m);
    return out;
  } finally {
    st.pos = st.start; // the slab space is reused
    e._leave(st);
  }
}

/** @internal A stream's top-level slot; `encodeFrame` resets it at each sync frame. */
export function newStreamTables(): StreamTables {
  return { root: new ESlot() };
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
  const st = e._enter();
  try {
    e._newTables();
    e._value(value, new ESlot());
    return st.buf.slice(st.start, st.pos);
  } finally {
    e._leave(st);
  }
}
