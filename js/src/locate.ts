// Where an encoding failed, as a path for EncodeError ($[3]["user"],
// $["a"]["odd key"], as Ruby and Python write it): the value is walked again, in encoding order, from an
// explicit stack (a failing value may be nested as deep as maxDepth allows).

import { Ext, Float64, Timestamp, extByClass } from './common.js';

export interface Location {
  path: string;
  /** For a circular reference: the path of the container it refers to. */
  cycle: string | null;
}

function pathKey(k: unknown): string {
  if (typeof k === 'string') return '[' + JSON.stringify(k) + ']';
  if (typeof k === 'number' || typeof k === 'bigint') return '[' + String(k) + ']';
  if (typeof k === 'symbol') return '[' + String(k) + ']';
  return '[<key>]';
}

// Built-in objects whose contents are internal slots, not own properties: as
// maps they would be written as `{}` or as a few stray properties. Checked by
// their toString tag, which also holds for objects of other realms.
const HIDDEN_STATE = new Set([
  'Set', 'WeakSet', 'WeakMap', 'WeakRef', 'FinalizationRegistry', 'ArrayBuffer', 'SharedArrayBuffer', 'DataView',
  'Int8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array',
  'BigInt64Array', 'BigUint64Array', 'Promise', 'RegExp', 'Error', 'Number', 'String', 'Boolean', 'Symbol', 'BigInt',
  'Map Iterator', 'Set Iterator', 'Array Iterator', 'String Iterator', 'RegExp String Iterator', 'Generator', 'AsyncGenerator',
  'Date', 'Map', 'Arguments', 'Blob', 'File', 'URL', 'URLSearchParams', 'Headers', 'AbortSignal', 'MessagePort',
]);
const objectToString = Object.prototype.toString;

export function hasHiddenState(v: object): boolean {
  const tag = objectToString.call(v);
  return HIDDEN_STATE.has(tag.slice(8, -1));
}

function isContainer(v: object, instancesAsMaps: boolean): boolean {
  if (Array.isArray(v) || v instanceof Map) return true;
  const c = (v as { constructor?: unknown }).constructor;
  if (c === Object || (c === undefined && Object.getPrototypeOf(v) === null)) return true;
  if (v instanceof Uint8Array || v instanceof Date || v instanceof Float64 || v instanceof Timestamp || v instanceof Ext) return false;
  if (typeof c === 'function' && extByClass.has(c)) return false;
  return instancesAsMaps && !hasHiddenState(v);
}

/** A container being walked: its items (and their paths) in encoding order. */
class Level {
  i = 0;
  constructor(
    readonly container: object,
    readonly path: string,
    readonly items: unknown[],
    readonly paths: (i: number) => string,
  ) {}
}

/**
 * The path of the first circular reference, of the first container nested
 * `limit` deep, or of the first occurrence of `target` (a value or a key
 * that is not a container); null if none is met.
 */
export function locate(root: unknown, target: unknown, limit: number, instancesAsMaps: boolean): Location | null {
  const open = new Map<object, string>(); // the containers enclosing the current item, with their paths
  const stack: Level[] = [];
  // visits one item: returns its location if the search ends there, else stacks it if it is a container
  const visit = (v: unknown, path: string): Location | null => {
    const isObj = typeof v === 'object' && v !== null;
    if (isObj) {
      const at = open.get(v);
      if (at !== undefined) return { path, cycle: at };
    }
    const container = isObj && isContainer(v, instancesAsMaps);
    if (!container) return v === target ? { path, cycle: null } : null;
    if (stack.length >= limit) return { path, cycle: null };
    let level: Level;
    if (Array.isArray(v)) level = new Level(v, path, v, (i) => path + '[' + i + ']');
    else if (v instanceof Map) {
      // key, value, key, value...
      const items: unknown[] = [];
      const labels: string[] = [];
      for (const [k, x] of v) {
        items.push(k, x);
        labels.push(path + '<key ' + pathKey(k) + '>', path + pathKey(k));
      }
      level = new Level(v, path, items, (i) => labels[i]);
    } else {
      const keys = Object.keys(v as object);
      for (const k of keys) if (k === target) return { path: path + pathKey(k) + ' (key)', cycle: null };
      const items = keys.map((k) => (v as Record<string, unknown>)[k]);
      level = new Level(v as object, path, items, (i) => path + pathKey(keys[i]));
    }
    open.set(v as object, path);
    stack.push(level);
    return null;
  };
  const first = visit(root, '$');
  if (first !== null) return first;
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.i < top.items.length) {
      const i = top.i++;
      const found = visit(top.items[i], top.paths(i));
      if (found !== null) return found;
    } else {
      open.delete(top.container);
      stack.pop();
    }
  }
  return null;
}
