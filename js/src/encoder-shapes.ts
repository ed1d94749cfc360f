// Shapes (SPEC 4.2, 5.4): the registry of an Encoder's key sequences, and
// the header of a shaped map: a reference to a shape of this buffer, or a
// MAPDEF whose keys are written with the string rules.

import { MAX_SHAPES, SHAPE8_BASE, SHAPE16_BASE, Tag } from './common.js';
import { EShape, ESlot, ShapeNode, resetSlot, fail } from './encoder-state.js';
import type { EncoderState } from './encoder-state.js';
import { ensure, writeVarint } from './encoder-output.js';
import { writeString, writePlainKeys } from './encoder-strings.js';

/** Whether the first n keys are the same; compared from the last, since key sequences that share a first key tend to share the next ones too. */
export function sameKeys(a: (string | symbol)[], b: (string | symbol)[], n: number): boolean {
  for (let i = n - 1; i >= 0; i--) if (a[i] !== b[i]) return false;
  return true;
}

/** The registry node reached from `nd` by key `k` (created if new). */
export function stepShape(nd: ShapeNode, k: string | symbol): ShapeNode {
  if (nd.key === k) return nd.node!;
  const next = nd.next;
  if (next !== null) {
    const x = next.get(k);
    if (x !== undefined) return x;
  }
  const x = new ShapeNode();
  if (nd.node === null) {
    nd.key = k;
    nd.node = x;
  } else (nd.next ??= new Map()).set(k, x);
  return x;
}

/** The persistent shape for a key sequence (created if new). */
export function findShape(st: EncoderState, keys: (string | symbol)[]): EShape {
  let nd = st.registry.root;
  for (let i = 0; i < keys.length; i++) nd = stepShape(nd, keys[i]);
  return (nd.shape ??= newShape(st, keys));
}

/** Creates the shape of the keys that lead to `nd`, `keys`. */
export function shapeAt(st: EncoderState, nd: ShapeNode, keys: (string | symbol)[]): EShape {
  st.registry.count++;
  return (nd.shape = new EShape(keys));
}

function newShape(st: EncoderState, keys: (string | symbol)[]): EShape {
  st.registry.count++;
  return new EShape(keys.slice());
}

/** Writes the shape header (SHAPE ref or MAPDEF with keys); returns the slots for the values. */
export function writeShapeHeader(st: EncoderState, sh: EShape, owner: unknown): ESlot[] {
  ensure(st, 10);
  if (sh.gen !== st.gen) {
    if (sh.dictIdx >= 0 && st.hasDict) {
      sh.gen = st.gen;
      sh.idx = sh.dictIdx;
      const sl = sh.slots;
      for (let i = 0; i < sl.length; i++) resetSlot(sl[i]);
    } else {
      if (sh.evicted) {
        // a memo may hold a shape pruned from the registry: use the registry's
        const canon = findShape(st, sh.keys);
        if (canon.gen === st.gen) return writeShapeHeader(st, canon, owner);
        sh = canon;
      }
      const n = sh.n;
      if (n < 16) st.buf[st.pos++] = Tag.MAPDEF0 + n;
      else {
        st.buf[st.pos++] = Tag.MAPDEF_LONG;
        writeVarint(st, n - 16);
      }
      if (sh.plain) writePlainKeys(st, sh);
      else {
        const keys = sh.keys;
        for (let i = 0; i < n; i++) {
          const k = keys[i];
          if (typeof k === 'string') writeString(st, k, st.keySlot);
          else {
            ensure(st, 1);
            st.buf[st.pos++] = Tag.SYMBOL;
            writeString(st, symbolName(st, k, owner), st.keySlot);
          }
        }
      }
      if (st.nshape >= MAX_SHAPES) {
        const fresh: ESlot[] = [];
        for (let i = 0; i < n; i++) fresh.push(new ESlot());
        return fresh;
      }
      sh.gen = st.gen;
      sh.idx = st.nshape++;
      const sl = sh.slots;
      for (let i = 0; i < n; i++) resetSlot(sl[i]);
      return sl;
    }
  }
  const i = sh.idx;
  if (i < SHAPE8_BASE) st.buf[st.pos++] = Tag.SHAPE0 + i;
  else if (i < SHAPE16_BASE) {
    st.buf[st.pos++] = Tag.SHAPE8;
    st.buf[st.pos++] = i - SHAPE8_BASE;
  } else {
    const w = i - SHAPE16_BASE;
    st.buf[st.pos++] = Tag.SHAPE16;
    st.buf[st.pos++] = w;
    st.buf[st.pos++] = w >>> 8;
  }
  return sh.slots;
}

/** The name of a registered symbol: Tersa symbols are named (Symbol.for). */
export function symbolName(st: EncoderState, s: symbol, owner: unknown): string {
  const name = Symbol.keyFor(s);
  if (name === undefined) fail(st, owner === undefined ? s : owner, 'symbol is not registered (use Symbol.for(name))');
  return name;
}
