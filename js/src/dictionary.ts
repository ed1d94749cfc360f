// Pre-shared dictionaries (SPEC section 8).

import { DictionaryLike, Timestamp, Ext, Float64, fnv1a64, utf8Length, MAX_SHAPES, MAX_STRINGS } from './common.js';
import { encodeBody } from './encoder.js';
import { decodeBody } from './decoder.js';

export type Key = string | symbol;

const MAGIC = 'pith-dictionary-v1';

function keyId(k: Key): string {
  if (typeof k === 'string') return 's' + k;
  const name = Symbol.keyFor(k);
  if (name === undefined) throw new TypeError('dictionary symbol keys must be registered symbols (Symbol.for)');
  return 'y' + name;
}

export interface FromSamplesOptions {
  /** Most strings to keep (the most frequent first). Default 64: every reference then costs one byte. */
  maxStrings?: number;
  /** Most shapes to keep. Default 32: every shape reference then costs one byte. */
  maxShapes?: number;
  /** Minimum number of occurrences for a string or shape to be kept. Default 2. */
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
   * Builds a dictionary from sample values: the most frequent key sequences
   * of maps become shapes, and the most frequent strings (values, and keys of
   * maps whose shape was not kept) become strings.
   */
  static fromSamples(samples: Iterable<unknown>, options: FromSamplesOptions = {}): Dictionary {
    const maxStrings = options.maxStrings ?? 64;
    const maxShapes = options.maxShapes ?? 32;
    const minCount = options.minCount ?? 2;
    const shapeCount = new Map<string, { keys: Key[]; n: number; order: number }>();
    const maps: { id: string; keys: Key[] }[] = [];
    const strValues: string[] = [];
    // Values are walked in order (first use breaks ties between equal
    // counts) from an explicit stack, whatever their nesting; a container met
    // again inside itself is skipped.
    const open = new Set<object>();
    const walk = (root: unknown): void => {
      const stack: { container: object; items: unknown[]; i: number }[] = [];
      const visit = (v: unknown): void => {
        if (typeof v === 'string') {
          strValues.push(v);
          return;
        }
        if (typeof v !== 'object' || v === null || open.has(v)) return;
        if (v instanceof Uint8Array || v instanceof Date || v instanceof Timestamp || v instanceof Ext || v instanceof Float64) return;
        let items: unknown[];
        if (Array.isArray(v)) items = v;
        else if (v instanceof Map) {
          const keys = [...v.keys()];
          if (keys.every((k) => typeof k === 'string' || (typeof k === 'symbol' && Symbol.keyFor(k) !== undefined))) {
            noteMap(keys as Key[]);
            items = [...v.values()];
          } else items = [...keys, ...v.values()];
        } else {
          const keys = Object.keys(v);
          noteMap(keys);
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
    };
    const noteMap = (keys: Key[]): void => {
      const id = keys.map(keyId).map((x) => x.length + ':' + x).join('');
      let e = shapeCount.get(id);
      if (!e) shapeCount.set(id, (e = { keys, n: 0, order: shapeCount.size }));
      e.n++;
      maps.push({ id, keys });
    };
    for (const s of samples) walk(s);
    const shapes = [...shapeCount.values()]
      .filter((e) => e.n >= minCount && e.keys.length > 0)
      .sort((a, b) => b.n - a.n || a.order - b.order)
      .slice(0, maxShapes);
    const kept = new Set(shapes.map((e) => e.keys.map(keyId).map((x) => x.length + ':' + x).join('')));
    const strCount = new Map<string, { n: number; order: number }>();
    const note = (s: string): void => {
      if (utf8Length(s) < 2) return;
      let e = strCount.get(s);
      if (!e) strCount.set(s, (e = { n: 0, order: strCount.size }));
      e.n++;
    };
    for (const m of maps) if (!kept.has(m.id)) for (const k of m.keys) if (typeof k === 'string') note(k);
    for (const s of strValues) note(s);
    const strings = [...strCount.entries()]
      .filter(([, e]) => e.n >= minCount)
      .sort((a, b) => b[1].n - a[1].n || a[1].order - b[1].order)
      .slice(0, maxStrings)
      .map(([s]) => s);
    return new Dictionary(strings, shapes.map((e) => e.keys));
  }

  /** The serialization: the canonical encoding, without header, of ["pith-dictionary-v1", strings, shapes]. */
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

  /** Parses a serialized dictionary (which must be canonical). */
  static parse(bytes: Uint8Array): Dictionary {
    const v = decodeBody(bytes);
    const bad = (): never => {
      throw new TypeError('not a serialized Pith dictionary');
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
