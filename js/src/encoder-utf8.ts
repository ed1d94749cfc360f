// UTF-8 for the encoder: JS strings written into the output slab, common
// prefixes measured in UTF-8 bytes, and cached byte copies.

import { utf8Length } from './common.js';
import { fail } from './encoder-state.js';
import type { EncoderState } from './encoder-state.js';

const textEncoder = new TextEncoder();
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Writes s[from..] as UTF-8 at st.pos (capacity ensured); returns the byte count. */
export function utf8At(st: EncoderState, s: string, from: number): number {
  const p0 = st.pos;
  const n = s.length;
  // optimistic ASCII copy, without a branch per character
  let acc = 0;
  const out = st.buf;
  const d = p0 - from;
  for (let i = from; i < n; i++) {
    const c = s.charCodeAt(i);
    out[d + i] = c;
    acc |= c;
  }
  if (acc < 0x80) return n - from;
  let p = p0;
  for (let i = from; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) out[p++] = c;
    else if (c < 0x800) {
      out[p++] = 0xc0 | (c >> 6);
      out[p++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const c2 = s.charCodeAt(i + 1);
      if (c >= 0xdc00 || !(c2 >= 0xdc00 && c2 <= 0xdfff)) fail(st, s, 'string is not valid Unicode (lone surrogate)');
      i++;
      const cp = 0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00);
      out[p++] = 0xf0 | (cp >> 18);
      out[p++] = 0x80 | ((cp >> 12) & 0x3f);
      out[p++] = 0x80 | ((cp >> 6) & 0x3f);
      out[p++] = 0x80 | (cp & 0x3f);
    } else {
      out[p++] = 0xe0 | (c >> 12);
      out[p++] = 0x80 | ((c >> 6) & 0x3f);
      out[p++] = 0x80 | (c & 0x3f);
    }
  }
  return p - p0;
}

const hasIsWellFormed = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function';

export function utf8Long(st: EncoderState, s: string, from: number): number {
  if (hasIsWellFormed ? !s.isWellFormed() : utf8Length(s) < 0) fail(st, s, 'string is not valid Unicode (lone surrogate)');
  const r = textEncoder.encodeInto(from === 0 ? s : s.slice(from), st.buf.subarray(st.pos));
  return r.written;
}

/**
 * The common prefix of a and b, capped at 127 bytes, on a character
 * boundary: its UTF-8 length in the low 8 bits, its length in characters
 * (at most 127) in the next 8.
 */
export function commonPrefix(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  // ASCII characters are one byte each: their run is measured without a byte count
  const m = n < 127 ? n : 127;
  let i = 0;
  for (; i < m; i++) {
    const c = a.charCodeAt(i);
    if (c !== b.charCodeAt(i) || c >= 0x80) break;
  }
  if (i === m || a.charCodeAt(i) !== b.charCodeAt(i)) return i | (i << 8);
  let bytes = i;
  for (; i < n; i++) {
    const c = a.charCodeAt(i);
    if (c !== b.charCodeAt(i)) break;
    if (c < 0x80) {
      if (bytes === 127) break;
      bytes++;
    } else if (c < 0x800) {
      if (bytes + 2 > 127) break;
      bytes += 2;
    } else if (c >= 0xd800 && c < 0xdc00) {
      if (i + 1 >= n || a.charCodeAt(i + 1) !== b.charCodeAt(i + 1) || bytes + 4 > 127) break;
      i++;
      bytes += 4;
    } else {
      if (bytes + 3 > 127) break;
      bytes += 3;
    }
  }
  return bytes | (i << 8);
}

/** A copy of b whose buffer is padded to whole 32-bit words (see copyBytes). */
export function padded(b: Uint8Array): Uint8Array {
  const n = b.length;
  const out = new Uint8Array(new ArrayBuffer((n + 3) & ~3), 0, n);
  out.set(b);
  return out;
}

/**
 * Copies the UTF-8 bytes b[b0 + from, b0 + n) (b0 a multiple of 4, words
 * the same buffer as 32-bit words) to pos; returns n - from. Bytes go one at
 * a time up to a word boundary of b, then four at a time: up to 3 bytes past
 * the end land inside the capacity the caller ensured, and are overwritten
 * next.
 */
export function copyBytes(st: EncoderState, b: Uint8Array, words: Uint32Array, b0: number, n: number, from: number): number {
  const v = st.view;
  let p = st.pos;
  let i = b0 + from;
  const end = b0 + n;
  if ((i & 3) !== 0) {
    const out = st.buf;
    while ((i & 3) !== 0 && i < end) out[p++] = b[i++];
  }
  const w0 = i >> 2;
  const m = (end - i + 3) >> 2;
  for (let j = 0; j < m; j++) v.setUint32(p + 4 * j, words[w0 + j], littleEndian);
  return n - from;
}
