// The keys of generic maps (MAP_GEN) as the decoder reads them: each key's
// identity by Tersa equality (SPEC 1), so that a repeated key is
// duplicate_key, and the object or Map the keys and values make.

import { Tag, Ext, Float64, Timestamp, float64Bits, hexOf } from './common.js';
import { fail } from './decoder-state.js';
import type { DecoderState } from './decoder-state.js';
import { isStringTag } from './decoder-strings.js';
import { objectKeepsOrder, defineOwn } from './decoder-shapes.js';

function isContainerTag(t: number): boolean {
  return (t >= Tag.SHAPE0 && t < Tag.INT0) || t === Tag.SHAPE8 || t === Tag.SHAPE16 || t === Tag.ARR_LONG || t === Tag.MAPDEF_LONG || t === Tag.MAP_GEN;
}

function isFloatTag(t: number): boolean {
  return (t >= Tag.DEC0 && t < Tag.NULL) || t === Tag.F32 || t === Tag.F64 || t === Tag.DEC_X || t === Tag.DEC_DELTA;
}

/**
 * A string that identifies a generic-map key by Tersa equality (SPEC 1):
 * strings by their text, extension values by the bytes read (whatever a
 * registered read() made of them), everything else as an item of a
 * container key. Floats are read exact here, as inside container keys.
 */
function keyIdentity(rd: DecoderState, t: number, k: unknown): string {
  if (isStringTag(t)) return 's' + (k as string);
  if (t === Tag.EXT) return 'e' + rd.lastExtType + ':' + hexOf(rd.lastExtData);
  return itemToken(k);
}

function timeIdentity(k: Date | Timestamp): string {
  if (k instanceof Date) return 'T' + Math.floor(k.getTime() / 1000) + ':' + (k.getTime() - Math.floor(k.getTime() / 1000) * 1000) * 1e6 + ':utc:0';
  return 'T' + k.seconds + ':' + k.nanos + ':' + k.zone + ':' + k.offset;
}

// Container keys are identified by the tokens of their items, where strings
// and inner containers are small numbers: a key holding a reference to a
// long string, or keys nested in keys, then cost time in proportion to their
// items rather than to their text. Both tables live for one decode call.
let idOfText: Map<string, number> | null = null;
let uniqueItems = 0; // a counter, not a random number: those could repeat
let idOfContainer: WeakMap<object, number> | null = null;

function textId(s: string): number {
  const m = (idOfText ??= new Map());
  let id = m.get(s);
  if (id === undefined) {
    id = m.size;
    m.set(s, id);
  }
  return id;
}

/** An item of a container key. Inside keys floats are read exact (Float64 for integral ones). */
function itemToken(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return 's' + textId(v);
    case 'boolean':
      return v ? 't' : 'F';
    case 'bigint':
      return 'I' + v.toString(16); // beyond the safe range, or all integers with integers: 'bigint'
    case 'number':
      return Number.isInteger(v) && !Object.is(v, -0) ? 'i' + v : 'f' + float64Bits(v).toString(16);
    case 'symbol':
      return 'y' + textId(Symbol.keyFor(v) ?? '');
  }
  if (v === null) return 'n';
  if (v instanceof Float64) return 'f' + v.bits.toString(16);
  if (v instanceof Uint8Array) return 'b' + hexOf(v);
  if (v instanceof Date || v instanceof Timestamp) return timeIdentity(v);
  if (v instanceof Ext) return 'e' + v.type + ':' + hexOf(v.data);
  if (isKeyContainer(v)) return 'c' + containerId(v);
  return 'u' + uniqueItems++; // an extension's own object: never a duplicate
}

function isKeyContainer(v: unknown): v is object {
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v) || v instanceof Map) return true;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** The items of a container key, in order (map entries as key, value). */
function keyItems(o: object): unknown[] {
  if (Array.isArray(o)) return o;
  const items: unknown[] = [];
  if (o instanceof Map) for (const [k, x] of o) items.push(k, x);
  else for (const k of Object.keys(o)) items.push(k, (o as Record<string, unknown>)[k]);
  return items;
}

/**
 * The id of a container key: the id of the text of its items' tokens. Keys
 * nest as deep as the input does, so the containers inside are identified
 * first, from an explicit stack; one met again inside itself (an object an
 * extension's read() made circular) is never a duplicate.
 */
function containerId(root: object): number {
  const cache = (idOfContainer ??= new WeakMap());
  const known = cache.get(root);
  if (known !== undefined) return known;
  const stack: object[] = [root];
  const opened = new Set<object>();
  while (stack.length > 0) {
    const o = stack[stack.length - 1];
    if (cache.has(o)) {
      stack.pop();
      continue;
    }
    const items = keyItems(o);
    if (!opened.has(o)) {
      opened.add(o);
      const before = stack.length;
      for (const x of items) if (isKeyContainer(x) && !cache.has(x) && !opened.has(x)) stack.push(x);
      if (stack.length > before) continue;
    }
    const pairs = !Array.isArray(o);
    let text = pairs ? 'm' : 'a';
    for (let i = 0; i < items.length; i++) {
      const x = items[i];
      let token: string;
      if (isKeyContainer(x)) {
        const id = cache.get(x);
        token = id !== undefined ? 'c' + id : 'u' + uniqueItems++;
      } else token = itemToken(x);
      text += (pairs && i & 1 ? ':' : ',') + token;
    }
    cache.set(o, textId(text));
    stack.pop();
  }
  return cache.get(root)!;
}

// Public in the .d.ts although internal: decoder.ts re-exports it, and
// stripInternal would leave that re-export dangling for TypeScript users.
/** Whether a generic-map key with this tag is read with exact floats (floats, and containers that may hold floats). */
export function exactKeyTag(t: number): boolean {
  return isFloatTag(t) || isContainerTag(t);
}

/**
 * The keys and values of a generic map as they are read, and the map they
 * make. Keys keep their exact value: a float key is read as with exactFloats,
 * so 1.0 and 1 stay distinct, and -0.0 becomes Float64(-0), since a JS Map
 * would merge it with 0 and 0.0. Public in the .d.ts, like exactKeyTag.
 */
export class MapBuilder {
  at: number;
  ks: unknown[] = [];
  vs: unknown[] = [];
  seen = new Set<string>();
  allStrings = true;
  /** Position and raw form of each extension key (used when read() results collide). */
  exts: (number | Ext)[] | null = null;
  constructor(at: number) {
    this.at = at;
  }

  /** Takes a key read from an item with tag t; fails on a key equal to an earlier one. */
  key(rd: DecoderState, t: number, k: unknown): void {
    if (k === 0 && 1 / (k as number) < 0) k = new Float64(-0);
    if (!isStringTag(t)) this.allStrings = false;
    const id = keyIdentity(rd, t, k);
    if (this.seen.has(id)) fail('duplicate_key', this.at, 'key repeated in a map');
    this.seen.add(id);
    if (t === Tag.EXT) (this.exts ??= []).push(this.ks.length, new Ext(rd.lastExtType, rd.lastExtData));
    this.ks.push(k);
  }

  result(rd: DecoderState): unknown {
    const ks = this.ks;
    const vs = this.vs;
    const n = ks.length;
    if (this.allStrings && !rd.mapsAlways && objectKeepsOrder(ks as string[])) {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) defineOwn(o, ks[i] as string, vs[i]);
      return o;
    }
    let m = new Map<unknown, unknown>();
    for (let i = 0; i < n; i++) m.set(ks[i], vs[i]);
    const exts = this.exts;
    if (m.size < n && exts !== null) {
      // An extension's read() gave a key that a JS Map takes for another
      // (a number, a string, a shared object): extension keys stay Ext then.
      for (let j = 0; j < exts.length; j += 2) ks[exts[j] as number] = exts[j + 1];
      m = new Map<unknown, unknown>();
      for (let i = 0; i < n; i++) m.set(ks[i], vs[i]);
    }
    return m;
  }
}

/** @internal Forgets the key identities of the last decode call. */
export function resetKeyIds(): void {
  idOfText = null;
  idOfContainer = null;
}
