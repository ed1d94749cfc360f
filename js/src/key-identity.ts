// Tersa equality of the keys of a generic map being encoded (SPEC 1): keys
// that are different in JS may be equal as Tersa values (1 and 1n, two Dates
// of one instant, two Uint8Arrays or arrays with the same content), and a
// map with two equal keys cannot be written. Each key gets an identity text,
// equal for equal keys.

import { Ext, Float64, Timestamp, extByClass, float64Bits, hexOf } from './common.js';

/**
 * Identities for the keys met in one encode call. Inside container keys,
 * strings and containers are small numbers (ids of their text), so a key
 * costs time in proportion to its items, and containers are identified from
 * an explicit stack, innermost first, whatever their nesting.
 */
export class KeyIdentities {
  private texts = new Map<string, number>();
  private containers = new WeakMap<object, number>();
  private unique = 0; // identities that must equal no other (a random number could repeat)

  constructor(private readonly instancesAsMaps: boolean) {}

  /** The identity of a key, or null for a value that is never equal to another (or that fails when written). */
  of(k: unknown): string | null {
    if (typeof k === 'string') return 's' + k;
    if (typeof k === 'symbol') return 'y' + Symbol.keyFor(k);
    return this.container(k) ? 'c' + this.containerId(k) : this.leaf(k);
  }

  private textId(s: string): number {
    let id = this.texts.get(s);
    if (id === undefined) {
      id = this.texts.size;
      this.texts.set(s, id);
    }
    return id;
  }

  private leaf(k: unknown): string | null {
    switch (typeof k) {
      case 'string':
        return 's' + this.textId(k);
      case 'symbol':
        return 'y' + this.textId(Symbol.keyFor(k) ?? '');
      case 'number':
        if (Number.isSafeInteger(k) && (k !== 0 || 1 / k > 0)) return 'i' + k;
        return 'f' + (k !== k ? '7ff8000000000000' : float64Bits(k).toString(16));
      case 'bigint':
        return 'i' + k;
      case 'boolean':
        return k ? 't' : 'F';
      case 'undefined':
        return 'n';
    }
    if (k === null) return 'n';
    if (k instanceof Float64) return 'f' + k.bits.toString(16);
    if (k instanceof Uint8Array) return 'b' + hexOf(k);
    if (k instanceof Date) {
      const ms = k.getTime();
      const sec = Math.floor(ms / 1000);
      return 'T' + sec + ':' + (ms - sec * 1000) * 1e6 + ':utc:0';
    }
    if (k instanceof Timestamp) return 'T' + k.seconds + ':' + k.nanos + ':' + k.zone + ':' + (k.zone === 'offset' ? k.offset : 0);
    if (k instanceof Ext) return 'e' + k.type + ':' + hexOf(k.data);
    const c = (k as { constructor?: unknown }).constructor;
    const ext = typeof c === 'function' ? extByClass.get(c) : undefined;
    if (ext !== undefined && ext.write) {
      try {
        return 'e' + ext.type + ':' + hexOf(ext.write(k));
      } catch {
        return null; // the write itself fails later, with its own message
      }
    }
    return null;
  }

  /** Whether k is written as an array or a map (the encoder's rules). */
  private container(k: unknown): k is object {
    if (typeof k !== 'object' || k === null) return false;
    if (Array.isArray(k) || k instanceof Map) return true;
    const p = Object.getPrototypeOf(k);
    if (p === Object.prototype || p === null) return true;
    if (!this.instancesAsMaps || k instanceof Uint8Array || k instanceof Date || k instanceof Float64 || k instanceof Timestamp || k instanceof Ext) return false;
    const c = (k as { constructor?: unknown }).constructor;
    return typeof c === 'function' && !extByClass.has(c);
  }

  /** The items of a container, in order (map entries as key, value). */
  private items(o: object): unknown[] {
    if (Array.isArray(o)) return o;
    const items: unknown[] = [];
    if (o instanceof Map) for (const [k, x] of o) items.push(k, x);
    else for (const k of Object.keys(o)) items.push(k, (o as Record<string, unknown>)[k]);
    return items;
  }

  /**
   * The id of a container: the id of the text of its items' identities. The
   * containers inside are identified first; one met again inside itself (a
   * cycle, which fails when written) equals nothing.
   */
  private containerId(root: object): number {
    const known = this.containers.get(root);
    if (known !== undefined) return known;
    const stack: object[] = [root];
    const opened = new Set<object>();
    while (stack.length > 0) {
      const o = stack[stack.length - 1];
      if (this.containers.has(o)) {
        stack.pop();
        continue;
      }
      const items = this.items(o);
      if (!opened.has(o)) {
        opened.add(o);
        const before = stack.length;
        for (const x of items) if (this.container(x) && !this.containers.has(x) && !opened.has(x)) stack.push(x);
        if (stack.length > before) continue;
      }
      const pairs = !Array.isArray(o);
      let text = pairs ? 'm' : 'a';
      for (let i = 0; i < items.length; i++) {
        const x = items[i];
        let id: string | null;
        if (this.container(x)) {
          const c = this.containers.get(x);
          id = c !== undefined ? 'c' + c : null;
        } else id = this.leaf(x);
        text += (pairs && i & 1 ? ':' : ',') + (id ?? 'u' + this.unique++);
      }
      this.containers.set(o, this.textId(text));
      stack.pop();
    }
    return this.containers.get(root)!;
  }
}
