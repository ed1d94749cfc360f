// Values: the item for each JS value (SPEC 5), arrays, plain objects and
// Maps as shaped maps, other Maps as generic maps, and extensions.

import { EXT_APP_MAX, MAX_EXT_TYPE, Tag, Ext, Float64, Timestamp, extByClass } from './common.js';
import { fail } from './encoder-state.js';
import type { EncoderState, ESlot } from './encoder-state.js';
import { ensure, writeVarint } from './encoder-output.js';
import { writeString } from './encoder-strings.js';
import { writeNumber, writeNumberRun, writeBigInt, writeFloatObject } from './encoder-numbers.js';
import { writeDate, writeTimestamp } from './encoder-time.js';
import { findShape, stepShape, shapeAt, sameKeys, symbolName, writeShapeHeader } from './encoder-shapes.js';
import { hasHiddenState } from './locate.js';
import { KeyIdentities } from './key-identity.js';
import { nest, ArrayLevel, ObjectLevel, MapLevel, GenericMapLevel } from './encoder-deep.js';

// Containers nest by recursion this deep, then from an explicit stack
// (encoder-deep.ts): the stack this takes fits in any JavaScript engine's.
const RECURSION_DEPTH = 100;

export function writeArray(st: EncoderState, a: unknown[], slot: ESlot): void {
  if (st.depth >= st.maxDepth) fail(st, a, 'nesting deeper than maxDepth');
  const n = a.length;
  ensure(st, 10);
  if (n < 16) st.buf[st.pos++] = Tag.ARR0 + n;
  else {
    st.buf[st.pos++] = Tag.ARR_LONG;
    writeVarint(st, n - 16);
  }
  if (st.depth >= RECURSION_DEPTH) return nest(st, new ArrayLevel(a, n, slot), st.depth);
  st.depth++;
  // runs of numbers are written by one call (too short a run does not pay for its setup)
  if (n < 8) for (let i = 0; i < n; i++) writeValue(st, a[i], slot);
  else {
    for (let i = 0; i < n; ) {
      const x = a[i];
      if (typeof x === 'number') i = writeNumberRun(st, a, i, n, slot);
      else {
        writeValue(st, x, slot);
        i++;
      }
    }
  }
  st.depth--;
}

export const ObjectProto = Object.prototype;

export function enumerableFree(o: object): boolean {
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
function writeObject(st: EncoderState, o: Record<string, unknown>, slot: ESlot, fast: boolean): void {
  if (st.depth >= st.maxDepth) fail(st, o, 'nesting deeper than maxDepth');
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
    if (fast) {
      // The keys' path in the registry. A new shape takes the keys of this
      // enumeration (a Proxy may list others the next time), kept in a reused array.
      let nd = st.registry.root;
      const kb = st.keyBuf;
      let nk = 0;
      for (const k in o) {
        nd = stepShape(nd, k);
        kb[nk++] = k;
      }
      sh = nd.shape ?? shapeAt(st, nd, kb.slice(0, nk));
    } else sh = findShape(st, Object.keys(o));
    slot.sh = sh;
  }
  const slots = writeShapeHeader(st, sh, o);
  const keys = sh.keys as string[];
  const n = keys.length;
  if (st.depth >= RECURSION_DEPTH) return nest(st, new ObjectLevel(o, keys, slots), st.depth);
  st.depth++;
  let i = 0;
  if (fast) {
    // The keys written are those of the header: a getter (or a Proxy) that
    // changes the keys makes for...in skip or add some, and the rest is read
    // by key, as JSON.stringify does (a deleted key reads as undefined).
    for (const k in o) {
      if (k !== keys[i]) break;
      writeValue(st, o[k], slots[i++]);
    }
  }
  for (; i < n; i++) writeValue(st, o[keys[i]], slots[i]);
  st.depth--;
}

function writeMap(st: EncoderState, m: Map<unknown, unknown>, slot: ESlot): void {
  if (st.depth >= st.maxDepth) fail(st, m, 'nesting deeper than maxDepth');
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
      sh = findShape(st, keys);
      slot.sh = sh;
    }
    const slots = writeShapeHeader(st, sh, m);
    if (st.depth >= RECURSION_DEPTH) return nest(st, new MapLevel(m, keys, slots), st.depth);
    st.depth++;
    // As for objects: the header's keys, each value read when it is written
    // (entries deleted meanwhile read as undefined, entries added are not written).
    let i = 0;
    for (const [k, v] of m) {
      if (k !== keys[i]) break;
      writeValue(st, v, slots[i++]);
    }
    for (; i < n; i++) writeValue(st, m.get(keys[i]), slots[i]);
    st.depth--;
    return;
  }
  // Keys that differ in JS may be equal in Tersa (1 and 1n, two Dates of one
  // instant, two Uint8Arrays with the same bytes): such a map cannot be written.
  const keys = [...m.keys()];
  const seen = new Set<string>();
  const ids = (st.keyIds ??= new KeyIdentities(st.instancesAsMaps));
  for (const k of keys) {
    const id = ids.of(k);
    if (id !== null) {
      if (seen.has(id)) fail(st, m, `duplicate key ${String(id).slice(1, 40)} (keys equal as Tersa values)`);
      seen.add(id);
    }
  }
  ensure(st, 10);
  st.buf[st.pos++] = Tag.MAP_GEN;
  writeVarint(st, keys.length);
  if (st.depth >= RECURSION_DEPTH) return nest(st, new GenericMapLevel(m, keys, slot), st.depth);
  st.depth++;
  // the keys checked above, each value read when it is written
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    writeValue(st, k, slot);
    writeValue(st, m.get(k), slot);
  }
  st.depth--;
}

/**
 * Writes one item (containers below RECURSION_DEPTH recursively, deeper ones
 * through encoder-deep.ts). The kinds are tested as `typeof v === '...'`
 * comparisons, which V8 compiles to type checks: `switch (typeof v)` calls
 * the Typeof builtin for every item.
 */
export function writeValue(st: EncoderState, v: unknown, slot: ESlot): void {
  if (typeof v === 'number') return writeNumber(st, v, slot);
  if (typeof v === 'string') return writeString(st, v, slot);
  if (typeof v === 'object') {
    if (v === null) {
      ensure(st, 1);
      st.buf[st.pos++] = Tag.NULL;
      return;
    }
    return writeObjectValue(st, v, slot);
  }
  if (typeof v === 'boolean') {
    ensure(st, 1);
    st.buf[st.pos++] = v ? Tag.TRUE : Tag.FALSE;
    return;
  }
  if (typeof v === 'bigint') return writeBigInt(st, v, slot);
  if (typeof v === 'symbol') {
    ensure(st, 1);
    st.buf[st.pos++] = Tag.SYMBOL;
    return writeString(st, symbolName(st, v, undefined), slot);
  }
  if (typeof v === 'undefined') {
    if (st.undefinedAsNull) {
      ensure(st, 1);
      st.buf[st.pos++] = Tag.NULL;
      return;
    }
    return fail(st, v, 'undefined is not a Tersa value (option undefined: "null" writes null)');
  }
  fail(st, v, `unsupported type ${typeof v}`);
}

function writeObjectValue(st: EncoderState, v: object, slot: ESlot): void {
  if (Array.isArray(v)) return writeArray(st, v, slot);
  const proto = Object.getPrototypeOf(v);
  if (proto === ObjectProto) return writeObject(st, v as Record<string, unknown>, slot, st.protoClean);
  if (proto === null) return writeObject(st, v as Record<string, unknown>, slot, true);
  const c = (v as { constructor?: unknown }).constructor;
  if (v instanceof Uint8Array) {
    const n = v.length;
    ensure(st, n + 10);
    st.buf[st.pos++] = Tag.BIN;
    writeVarint(st, n);
    st.buf.set(v, st.pos);
    st.pos += n;
    return;
  }
  if (c === Map) return writeMap(st, v as Map<unknown, unknown>, slot);
  if (c === Date) return writeDate(st, v as Date);
  if (c === Float64) return writeFloatObject(st, v as Float64, slot);
  if (c === Timestamp) return writeTimestamp(st, v as Timestamp);
  if (c === Ext) {
    const t = (v as Ext).type;
    if (t > EXT_APP_MAX && t <= MAX_EXT_TYPE) fail(st, v, `extension type ${t} is reserved for well-known types (SPEC 5.8): write a Decimal, CalendarDate, UUID or TimeOfDay`);
    return writeExt(st, v, t, (v as Ext).data);
  }
  const ext = typeof c === 'function' ? extByClass.get(c) : undefined;
  if (ext !== undefined) {
    let data: Uint8Array;
    try {
      data = ext.write!(v);
    } catch (e) {
      return fail(st, v, `extension ${ext.type} write failed: ${(e as Error)?.message ?? e}`);
    }
    if (!(data instanceof Uint8Array)) fail(st, v, `extension ${ext.type} write did not return a Uint8Array`);
    return writeExt(st, v, ext.type, data);
  }
  if (v instanceof Map) return writeMap(st, v as Map<unknown, unknown>, slot);
  if (v instanceof Date) return writeDate(st, v);
  if (st.instancesAsMaps && typeof c === 'function' && !hasHiddenState(v)) return writeObject(st, v as Record<string, unknown>, slot, false);
  if (c === Set) fail(st, v, 'unsupported type Set (Tersa has no set type: encode an array, [...set])');
  const name = typeof c === 'function' && c.name ? c.name : 'object';
  if (st.instancesAsMaps) fail(st, v, `unsupported type ${name} (its contents are not properties: register an extension)`);
  fail(st, v, `unsupported type ${name} (register an extension, or option classInstances: "map")`);
}

function writeExt(st: EncoderState, v: unknown, type: number, data: Uint8Array): void {
  if (!Number.isInteger(type) || type < 0 || type > MAX_EXT_TYPE) fail(st, v, 'extension type out of range 0..65535');
  ensure(st, data.length + 20);
  st.buf[st.pos++] = Tag.EXT;
  writeVarint(st, type);
  writeVarint(st, data.length);
  st.buf.set(data, st.pos);
  st.pos += data.length;
}
