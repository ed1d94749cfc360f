// The output slab and the integer encodings every writer uses (SPEC 3.1
// varints, zigzag, table references).

import { REF8_BASE, REF16_BASE, Tag } from './common.js';
import { EncoderState } from './encoder-state.js';

const TWO32 = 4294967296;
const TWO_NEG32 = 1 / 4294967296;

const SLAB = 65536;

/**
 * Moves this call's bytes to a larger slab. A call that has written half as
 * much as the last call is taken to be as large as it: the slab then has room
 * for one and a half times the last call at once (each growth copies what
 * was written). Every slab is at most about three times what this call has
 * written, so a small call after a large one allocates nothing large.
 */
export function grow(st: EncoderState, n: number): void {
  const used = st.pos - st.start;
  let size = Math.max(SLAB, (used + n) * 2);
  const last = st.lastLen;
  if (used + n >= last >>> 1) size = Math.max(size, last + (last >>> 1) + 1024);
  const nb = new Uint8Array(size);
  nb.set(st.buf.subarray(st.start, st.pos), 0);
  st.buf = nb;
  st.view = new DataView(nb.buffer);
  st.cap = size;
  st.start = 0;
  st.pos = used;
}

export function ensure(st: EncoderState, n: number): void {
  if (st.pos + n > st.cap) grow(st, n);
}

export function vlen(v: number): number {
  // v < 2^53
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  if (v < 0x800000000) return 5;
  if (v < 0x40000000000) return 6;
  if (v < 0x2000000000000) return 7;
  return 8; // < 2^56 covers every safe integer
}

/** Writes a varint of v < 2^53 (capacity ensured by the caller). */
export function writeVarint(st: EncoderState, v: number): void {
  if (v < 0x80) {
    st.buf[st.pos++] = (v << 1) | 1;
    return;
  }
  if (v < 0x4000) {
    const w = (v << 2) | 2;
    st.buf[st.pos] = w;
    st.buf[st.pos + 1] = w >>> 8;
    st.pos += 2;
    return;
  }
  if (v < 0x200000) {
    const w = (v << 3) | 4;
    st.buf[st.pos] = w;
    st.buf[st.pos + 1] = w >>> 8;
    st.buf[st.pos + 2] = w >>> 16;
    st.pos += 3;
    return;
  }
  if (v < 0x10000000) {
    const w = ((v << 4) | 8) >>> 0;
    st.buf[st.pos] = w;
    st.buf[st.pos + 1] = w >>> 8;
    st.buf[st.pos + 2] = w >>> 16;
    st.buf[st.pos + 3] = w >>> 24;
    st.pos += 4;
    return;
  }
  // L >= 5: W = v * 2^L + 2^(L-1) as two 32-bit words, from v's words
  // hi * 2^32 + lo: scaling by a power of two is exact, so the bytes come
  // from shifts of the two words, without a division per byte
  const L = vlen(v);
  const hi = Math.floor(v * TWO_NEG32);
  const lo = v - hi * TWO32;
  const wlo = (lo << L) | (1 << (L - 1));
  const whi = (hi << L) | (lo >>> (32 - L));
  const buf = st.buf;
  const p = st.pos;
  buf[p] = wlo;
  buf[p + 1] = wlo >>> 8;
  buf[p + 2] = wlo >>> 16;
  buf[p + 3] = wlo >>> 24;
  buf[p + 4] = whi;
  if (L > 5) {
    buf[p + 5] = whi >>> 8;
    if (L > 6) {
      buf[p + 6] = whi >>> 16;
      if (L > 7) buf[p + 7] = whi >>> 24;
    }
  }
  st.pos = p + L;
}

export function writeVarintBig(st: EncoderState, v: bigint): void {
  if (v < 9007199254740992n) return writeVarint(st, Number(v));
  ensure(st, 9);
  if (v < 1n << 56n) {
    const w = (v << 8n) | 0x80n;
    for (let i = 0n; i < 8n; i++) st.buf[st.pos++] = Number((w >> (8n * i)) & 0xffn);
  } else {
    st.buf[st.pos++] = 0;
    for (let i = 0n; i < 8n; i++) st.buf[st.pos++] = Number((v >> (8n * i)) & 0xffn);
  }
}

export function vlenBig(v: bigint): number {
  if (v < 9007199254740992n) return vlen(Number(v));
  return v < 1n << 56n ? 8 : 9;
}

export function zz(d: number): number {
  return d >= 0 ? d * 2 : -d * 2 - 1;
}

export function zzBig(v: bigint): bigint {
  return v >= 0n ? v << 1n : (-v << 1n) - 1n;
}

export function writeRef(st: EncoderState, i: number): void {
  if (i < REF8_BASE) st.buf[st.pos++] = Tag.REF0 + i;
  else if (i < REF16_BASE) {
    st.buf[st.pos++] = Tag.REF8;
    st.buf[st.pos++] = i - REF8_BASE;
  } else {
    // below MAX_STRINGS = REF24_BASE: no REF24 is ever written
    const w = i - REF16_BASE;
    st.buf[st.pos++] = Tag.REF16;
    st.buf[st.pos++] = w;
    st.buf[st.pos++] = w >>> 8;
  }
}

let scratch: EncoderState | null = null;

/** The varint of n < 2^53 as bytes. */
export function varintBytes(n: number): Uint8Array {
  const st = (scratch ??= new EncoderState());
  st.buf = new Uint8Array(9);
  st.pos = 0;
  writeVarint(st, n);
  return st.buf.subarray(0, st.pos);
}
