// UTF-8 for the decoder: short ASCII strings by hand or from a cache,
// ASCII runs cut from a one-byte string of a window of the input, the rest
// through Node's native decoder or TextDecoder, with a validating fallback.

import { fail, srcView } from './decoder-state.js';
import type { DecoderState } from './decoder-state.js';

const fromCharCode = String.fromCharCode;

const textDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// Node's Buffer.prototype.utf8Slice decodes in C++ and replaces invalid
// sequences with U+FFFD; a result without U+FFFD is therefore exact, and one
// with it is re-checked by the validating decoder below. Other platforms use
// TextDecoder (fatal) for strings beyond the hand-decoded sizes.
const nodeUtf8Slice: ((this: Uint8Array, start: number, end: number) => string) | null = (() => {
  try {
    const B = (globalThis as { Buffer?: { prototype?: { utf8Slice?: unknown } } }).Buffer;
    const f = B?.prototype?.utf8Slice;
    if (typeof f !== 'function') return null;
    const g = f as (this: Uint8Array, start: number, end: number) => string;
    const probe = Uint8Array.of(0x61, 0xc3, 0xa9, 0xed, 0xa0, 0x80);
    if (g.call(probe, 0, 3) !== 'a\u00e9' || g.call(probe, 3, 6).indexOf('\ufffd') < 0) return null;
    return g;
  } catch {
    return null;
  }
})();

// ASCII strings are cut from a one-byte string that holds a window of the
// input (one native call per window instead of one per string). Strings of
// 13 or more characters are then V8 "sliced strings" that keep their window
// (at most WINDOW bytes) alive.
const nodeLatin1Slice: ((this: Uint8Array, start: number, end: number) => string) | null = (() => {
  const B = (globalThis as { Buffer?: { prototype?: { latin1Slice?: unknown } } }).Buffer;
  const f = B?.prototype?.latin1Slice;
  return typeof f === 'function' ? (f as (this: Uint8Array, start: number, end: number) => string) : null;
})();

const latin1Decoder = nodeLatin1Slice === null ? new TextDecoder('latin1') : null;
const WINDOW = 4096;

/** The first n bytes of b (Latin-1 or ASCII) as a flat string. */
export function latin1Of(b: Uint8Array, n: number): string {
  return nodeLatin1Slice !== null ? nodeLatin1Slice.call(b, 0, n) : latin1Decoder!.decode(b.subarray(0, n));
}

export function asciiSlice(rd: DecoderState, p: number, n: number): string {
  if (rd.winSrc !== rd.src || p < rd.winStart || p + n > rd.winEnd) {
    const len = rd.src.length;
    let a: number, b: number;
    if (len <= 2 * WINDOW) {
      a = 0;
      b = len;
    } else {
      a = p;
      b = Math.min(len, p + (n > WINDOW ? n : WINDOW));
    }
    rd.win = nodeLatin1Slice !== null ? nodeLatin1Slice.call(rd.src, a, b) : latin1Decoder!.decode(rd.src.subarray(a, b));
    rd.winSrc = rd.src;
    rd.winStart = a;
    rd.winEnd = b;
  }
  const o = p - rd.winStart;
  return rd.win.slice(o, o + n);
}

/** Inputs up to this many bytes test strings for ASCII without a DataView. */
const SMALL_INPUT = 4096;

/** Decodes n bytes at pos (already bounds-checked) as UTF-8; advances pos. */
export function utf8(rd: DecoderState, n: number, at: number): string {
  const p = rd.pos;
  rd.pos = p + n;
  if (n <= 8) {
    switch (n) {
      case 0:
        return '';
      case 1: {
        const a = rd.src[p];
        if (a < 0x80) return fromCharCode(a);
        break;
      }
      case 2: {
        const a = rd.src[p], b = rd.src[p + 1];
        if ((a | b) < 0x80) return fromCharCode(a, b);
        break;
      }
      case 3: {
        const a = rd.src[p], b = rd.src[p + 1], c = rd.src[p + 2];
        if ((a | b | c) < 0x80) return fromCharCode(a, b, c);
        break;
      }
      case 4: {
        const a = rd.src[p], b = rd.src[p + 1], c = rd.src[p + 2], d = rd.src[p + 3];
        if ((a | b | c | d) < 0x80) return fromCharCode(a, b, c, d);
        break;
      }
      case 5: {
        const a = rd.src[p], b = rd.src[p + 1], c = rd.src[p + 2], d = rd.src[p + 3], e = rd.src[p + 4];
        if ((a | b | c | d | e) < 0x80) return fromCharCode(a, b, c, d, e);
        break;
      }
      case 6: {
        const a = rd.src[p], b = rd.src[p + 1], c = rd.src[p + 2], d = rd.src[p + 3], e = rd.src[p + 4], f = rd.src[p + 5];
        if ((a | b | c | d | e | f) < 0x80) return fromCharCode(a, b, c, d, e, f);
        break;
      }
      case 7: {
        const a = rd.src[p], b = rd.src[p + 1], c = rd.src[p + 2], d = rd.src[p + 3], e = rd.src[p + 4], f = rd.src[p + 5], g = rd.src[p + 6];
        if ((a | b | c | d | e | f | g) < 0x80) return fromCharCode(a, b, c, d, e, f, g);
        break;
      }
      case 8: {
        const a = rd.src[p], b = rd.src[p + 1], c = rd.src[p + 2], d = rd.src[p + 3], e = rd.src[p + 4], f = rd.src[p + 5], g = rd.src[p + 6], h = rd.src[p + 7];
        if ((a | b | c | d | e | f | g | h) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h);
        break;
      }
    }
    return utf8Short(rd, p, n, at);
  }
  if (n <= 12) {
    // still below V8's sliced-string size: one call with every character
    const a = rd.src[p], b = rd.src[p + 1], c = rd.src[p + 2], d = rd.src[p + 3], e = rd.src[p + 4], f = rd.src[p + 5], g = rd.src[p + 6], h = rd.src[p + 7], i = rd.src[p + 8];
    switch (n) {
      case 9:
        if ((a | b | c | d | e | f | g | h | i) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h, i);
        break;
      case 10: {
        const j = rd.src[p + 9];
        if ((a | b | c | d | e | f | g | h | i | j) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h, i, j);
        break;
      }
      case 11: {
        const j = rd.src[p + 9], k = rd.src[p + 10];
        if ((a | b | c | d | e | f | g | h | i | j | k) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h, i, j, k);
        break;
      }
      default: {
        const j = rd.src[p + 9], k = rd.src[p + 10], l = rd.src[p + 11];
        if ((a | b | c | d | e | f | g | h | i | j | k | l) < 0x80) return fromCharCode(a, b, c, d, e, f, g, h, i, j, k, l);
      }
    }
    return nodeUtf8Slice !== null ? utf8Node(rd, p, n, at) : utf8Short(rd, p, n, at);
  }
  if (n <= 256) {
    // ASCII check four bytes per step: through the input's DataView in a
    // large buffer, byte by byte in a small one, where making the DataView
    // (once per buffer) costs more than the test itself (a message queue's
    // decoder meets a new buffer per message).
    const src = rd.src;
    let o = 0;
    const e4 = p + n - 3;
    let i = p;
    if (src.length > SMALL_INPUT) {
      const dv = srcView(rd);
      for (; i < e4; i += 4) o |= dv.getUint32(i, true);
    } else {
      for (; i < e4; i += 4) o |= src[i] | src[i + 1] | src[i + 2] | src[i + 3];
    }
    for (; i < p + n; i++) o |= src[i];
    if ((o & 0x80808080) === 0) return asciiSlice(rd, p, n);
  }
  if (nodeUtf8Slice !== null) return utf8Node(rd, p, n, at);
  if (n < 64) return utf8Short(rd, p, n, at);
  try {
    return textDecoder.decode(rd.src.subarray(p, p + n));
  } catch {
    return fail('invalid_utf8', at, 'string is not valid UTF-8');
  }
}

// A cache of short ASCII strings by their bytes (like msgpackr's key cache):
// map keys repeat from buffer to buffer, and a cached string costs a hash and
// a comparison instead of an allocation. Entries are verified byte by byte.
const CACHE_BITS = 12;
const cache: (string | undefined)[] = new Array(1 << CACHE_BITS).fill(undefined);

export function cachedAscii(rd: DecoderState, n: number, at: number): string {
  const p = rd.pos;
  let h = n;
  for (let i = p; i < p + n; i++) h = (Math.imul(h, 31) + rd.src[i]) | 0;
  h = (h ^ (h >>> 15)) & ((1 << CACHE_BITS) - 1);
  const c = cache[h];
  if (c !== undefined && c.length === n) {
    let i = 0;
    while (i < n && c.charCodeAt(i) === rd.src[p + i]) i++;
    if (i === n) {
      rd.pos = p + n;
      return c;
    }
  }
  const s = utf8(rd, n, at);
  if (s.length === n) cache[h] = s;
  return s;
}

function utf8Node(rd: DecoderState, p: number, n: number, at: number): string {
  const s = nodeUtf8Slice!.call(rd.src, p, p + n);
  if (s.indexOf('\ufffd') === -1) return s;
  return utf8Short(rd, p, n, at);
}

const codes: number[] = [];

/** Validating UTF-8 decoder for short strings. */
export function utf8Short(rd: DecoderState, p: number, n: number, at: number): string {
  const e = p + n;
  let k = 0;
  while (p < e) {
    const a = rd.src[p++];
    if (a < 0x80) {
      codes[k++] = a;
      continue;
    }
    if (a >= 0xc2 && a < 0xe0) {
      if (p >= e) return badUtf8(at);
      const b = rd.src[p++];
      if ((b & 0xc0) !== 0x80) return badUtf8(at);
      codes[k++] = ((a & 0x1f) << 6) | (b & 0x3f);
      continue;
    }
    if (a >= 0xe0 && a < 0xf0) {
      if (p + 1 >= e) return badUtf8(at);
      const b = rd.src[p++], c = rd.src[p++];
      if ((b & 0xc0) !== 0x80 || (c & 0xc0) !== 0x80) return badUtf8(at);
      const cp = ((a & 0x0f) << 12) | ((b & 0x3f) << 6) | (c & 0x3f);
      if (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000)) return badUtf8(at);
      codes[k++] = cp;
      continue;
    }
    if (a >= 0xf0 && a < 0xf5) {
      if (p + 2 >= e) return badUtf8(at);
      const b = rd.src[p++], c = rd.src[p++], d = rd.src[p++];
      if ((b & 0xc0) !== 0x80 || (c & 0xc0) !== 0x80 || (d & 0xc0) !== 0x80) return badUtf8(at);
      const cp = ((a & 0x07) << 18) | ((b & 0x3f) << 12) | ((c & 0x3f) << 6) | (d & 0x3f);
      if (cp < 0x10000 || cp > 0x10ffff) return badUtf8(at);
      const u = cp - 0x10000;
      codes[k++] = 0xd800 | (u >> 10);
      codes[k++] = 0xdc00 | (u & 0x3ff);
      continue;
    }
    return badUtf8(at);
  }
  return codesToString(k);
}

function badUtf8(at: number): never {
  return fail('invalid_utf8', at, 'string is not valid UTF-8');
}

function codesToString(k: number): string {
  if (k <= 1024) {
    codes.length = k;
    return fromCharCode.apply(null, codes);
  }
  let s = '';
  for (let i = 0; i < k; i += 1024) s += fromCharCode.apply(null, codes.slice(i, Math.min(k, i + 1024)));
  return s;
}
