// Pre-shared dictionaries (SPEC section 8).

import { checkOptions } from './options.js';
import { DictionaryLike, Timestamp, Ext, Float64, fnv1a64, utf8Length, MAX_SHAPES, MAX_STRINGS } from './common.js';
import { encodeBody } from './encoder.js';
import { decodeBody } from './decoder.js';

export type Key = string | symbol;

const MAGIC = 'tersa-dictionary-v1';

function keyId(k: Key): string {
  if (typeof k === 'string') return 's' + k;
  const name = Symbol.keyFor(k);
  if (name === undefined) throw new TypeError('dictionary symbol keys must be registered symbols (Symbol.for)');
  return 'y' + name;
}

/** Byte order of the UTF-8 encodings (UTF-16 order differs above U+FFFF). */
function compareUtf8(a: string, b: string): number {
  const x = utf8Encoder.encode(a), y = utf8Encoder.encode(b);
  for (let i = 0; i < x.length && i < y.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

const utf8Encoder = new TextEncoder();

const FROM_SAMPLES_OPTIONS: ReadonlySet<string> = new Set(['maxStrings', 'maxShapes', 'minCount']);

/** A limit of fromSamples: absent (the default), else an integer >= 1, as Ruby and Python check it. */
function atLeastOne(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new TypeError(`${name} must be an integer, got ${String(v)}`);
  if (v < 1) throw new RangeError(`${name} must be >= 1, got ${v}`);
  return v;
}

export interface FromSamplesOptions {
  /** Most strings to keep (most bytes saved first). Default 4096. */
  maxStrings?: number;
  /** Most shapes to keep (first met first). Default 1024. */
  maxShapes?: number;
  /** Samples a string or shape must occur in. Default 2, or 1 when there is a single sample. */
  minCount?: number;
}

/**
 * A list of strings and a list of shapes (key sequences) that encoder and
 * decoder agree on in advance. Its `id` is the FNV-1a-64 hash of its
 * serialization; buffers encoded with it carry the id, and a decoder must be
 * given the same dictionary to read them.
 */
export class Dictionary implements DictionaryLike {
  readonly strings: readonly string[];
  readonly shapes: readonly (readonly Key[])[];
  private _bytes: Uint8Array | null = null;
  private _id: bigint | null = null;

  constructor(strings: Iterable<string> = [], shapes: Iterable<Iterable<Key>> = []) {
    const ss = [...strings];
    const seen = new Set<string>();
    for (const s of ss) {
      if (typeof s !== 'string') throw new TypeError('dictionary strings must be strings');
      const n = utf8Length(s);
      if (n < 0) throw new TypeError('dictionary strings must be valid Unicode');
      if (n < 2) throw new RangeError(`dictionary string ${JSON.stringify(s)} is shorter than 2 bytes`);
      if (seen.has(s)) throw new RangeError(`dictionary string ${JSON.stringify(s)} is repeated`);
      seen.add(s);
    }
    const sh = [...shapes].map((k) => Object.freeze([...k]));
    const seenShapes = new Set<string>();
    for (const keys of sh) {
      const ids = keys.map(keyId);
      if (new Set(ids).size !== ids.length) throw new RangeError('a dictionary shape repeats a key');
      const id = ids.map((x) => x.length + ':' + x).join('');
      if (seenShapes.has(id)) throw new RangeError('a dictionary shape is repeated');
      seenShapes.add(id);
      for (const k of keys) if (typeof k === 'string' && utf8Length(k) < 0) throw new TypeError('dictionary keys must be valid Unicode');
    }
    if (ss.length > MAX_STRINGS || sh.length > MAX_SHAPES) throw new RangeError('dictionary too large');
    this.strings = Object.freeze(ss);
    this.shapes = Object.freeze(sh);
  }

  /** The synthetic dictionaries of the vector files: "s0".."s{n-1}" and shapes ["k0"].. ["k{m-1}"]. */
  static generated(strings: number, shapes: number): Dictionary {
    const s: string[] = [];
    for (let i = 0; i < strings; i++) s.push('s' + i);
    const k: string[][] = [];
    for (let i = 0; i < shapes; i++) k.push(['k' + i]);
    return new Dictionary(s, k);
  }

  /**
   * Builds a dictionary from sample values with the C core's algorithm (the
   * one of Ruby's `Tersa::Dictionary.build`, Python's `Dictionary.build` and
   * `tersa dict build`), so the same samples give the same dictionary and id:
   * a string of 2+ UTF-8 bytes (a value or a symbol's name) or a map's key
   * sequence counts once per sample it occurs in, in pre-order; the strings
   * in at least `minCount` samples are kept most bytes saved first (samples x
   * length, then shorter, then by UTF-8 bytes), the shapes in the order first
   * met.
   */
  static fromSamples(samples: Iterable<unknown>, options: FromSamplesOptions = {}): Dictionary {
    checkOptions(options, FROM_SAMPLES_OPTIONS, 'Dictionary.fromSamples');
    const list = [...samples];
    const maxStrings = atLeastOne('maxStrings', options.maxStrings, 4096);
    const maxShapes = atLeastOne('maxShapes', options.maxShapes, 1024);
    const minCount = atLeastOne('minCount', options.minCount, list.length > 1 ? 2 : 1);
    const strCount = new Map<string, { n: number; last: number; len: number }>();
    const shapeCount = new Map<string, { keys: Key[]; n: number; last: number }>();
    let sample = 0;
    const noteString = (s: string): void => {
      let e = strCount.get(s);
      if (!e) {
        const len = utf8Length(s);
        if (len < 2) return;
        strCount.set(s, (e = { n: 0, last: 0, len }));
      }
      if (e.last !== sample) e.n++;
      e.last = sample;
    };
    const noteShape = (keys: Key[]): void => {
      const id = keys.map(keyId).map((x) => x.length + ':' + x).join('');
      let e = shapeCount.get(id);
      if (!e) shapeCount.set(id, (e = { keys, n: 0, last: 0 }));
      if (e.last !== sample) e.n++;
      e.last = sample;
    };
    // Pre-order over what the encoder writes as items, with an explicit
    // stack whatever the nesting; a container met again inside itself is
    // skipped (the encoder refuses cycles).
    for (const root of list) {
      sample++;
      const open = new Set<object>();
      const stack: { container: object; items: unknown[]; i: number }[] = [];
      const visit = (v: unknown): void => {
        if (typeof v === 'string') return noteString(v);
        if (typeof v === 'symbol') {
          const name = Symbol.keyFor(v);
          if (name !== undefined) noteString(name);
          return;
        }
        if (typeof v !== 'object' || v === null || open.has(v)) return;
        if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Date || v instanceof Timestamp ||
            v instanceof Ext || v instanceof Float64) return;
        let items: unknown[];
        if (Array.isArray(v)) items = v;
        else if (v instanceof Map) {
          const keys = [...v.keys()];
          if (keys.every((k) => typeof k === 'string' || (typeof k === 'symbol' && Symbol.keyFor(k) !== undefined))) {
            noteShape(keys as Key[]);
            items = [...v.values()];
          } else {
            items = [];
            for (const [k, x] of v) items.push(k, x);
          }
        } else {
          const keys = Object.keys(v);
          noteShape(keys);
          items = keys.map((k) => (v as Record<string, unknown>)[k]);
        }
        open.add(v);
        stack.push({ container: v, items, i: 0 });
      };
      visit(root);
      while (stack.length > 0) {
        const top = stack[stack.length - 1];
        if (top.i < top.items.length) visit(top.items[top.i++]);
        else {
          open.delete(top.container);
          stack.pop();
        }
      }
    }
    const strings = [...strCount.entries()]
      .filter(([, e]) => e.n >= minCount)
      .sort(([a, x], [b, y]) => y.n * y.len - x.n * x.len || x.len - y.len || compareUtf8(a, b))
      .slice(0, maxStrings)
      .map(([s]) => s);
    const shapes = [...shapeCount.values()].filter((e) => e.n >= minCount).slice(0, maxShapes).map((e) => e.keys);
    return new Dictionary(strings, shapes);
  }

  /** The serialization: the canonical encoding, without header, of ["tersa-dictionary-v1", strings, shapes]. */
  serialize(): Uint8Array {
    if (this._bytes === null) this._bytes = encodeBody([MAGIC, this.strings, this.shapes]);
    return this._bytes.slice();
  }

  /** The 64-bit id (FNV-1a of the serialization). */
  get id(): bigint {
    if (this._id === null) {
      if (this._bytes === null) this._bytes = encodeBody([MAGIC, this.strings, this.shapes]);
      this._id = fnv1a64(this._bytes);
    }
    return this._id;
  }

  /** The id as 16 lowercase hex digits. */
  get idHex(): string {
    return this.id.toString(16).padStart(16, '0');
  }

  /** `Dictionary(id=0x…, strings=N, shapes=M)`: the id as every implementation prints it. */
  toString(): string {
    return `Dictionary(id=0x${this.idHex}, strings=${this.strings.length}, shapes=${this.shapes.length})`;
  }

  /** @internal Node's util.inspect (console.log) shows the same. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  /** Parses a serialized dictionary (which must be canonical). */
  static parse(bytes: Uint8Array): Dictionary {
    const v = decodeBody(bytes);
    const bad = (): never => {
      throw new TypeError('not a serialized Tersa dictionary');
    };
    if (!Array.isArray(v) || v.length !== 3 || v[0] !== MAGIC || !Array.isArray(v[1]) || !Array.isArray(v[2])) bad();
    for (const s of v[1]) if (typeof s !== 'string') bad();
    for (const k of v[2]) {
      if (!Array.isArray(k)) bad();
      for (const x of k) if (typeof x !== 'string' && typeof x !== 'symbol') bad();
    }
    const d = new Dictionary(v[1], v[2]);
    const mine = d.serialize();
    if (mine.length !== bytes.length || mine.some((b, i) => b !== bytes[i])) throw new TypeError('serialized dictionary is not canonical');
    return d;
  }
}
