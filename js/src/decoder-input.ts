// The decoder's primitive fields (SPEC 3.1): varints with their minimality
// checks, lengths against the remaining input, single bytes, zigzag.

import { fail } from './decoder-state.js';
import type { DecoderState } from './decoder-state.js';

export const TWO53 = 9007199254740992;
export const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
export const POW2: number[] = [];
for (let i = 0; i <= 64; i++) POW2.push(Math.pow(2, i));

export function varint(rd: DecoderState, at: number): number {
  if (rd.pos >= rd.end) fail('truncated', at, 'input ends inside an item');
  const b = rd.src[rd.pos];
  if (b & 1) {
    rd.pos++;
    return b >>> 1;
  }
  if (b & 2) {
    if (rd.pos + 2 > rd.end) fail('truncated', at, 'input ends inside a varint');
    const v = (b | (rd.src[rd.pos + 1] << 8)) >>> 2;
    rd.pos += 2;
    if (v < 128) fail('invalid_varint', at, 'varint is not minimal');
    return v;
  }
  if (b & 4) {
    if (rd.pos + 3 > rd.end) fail('truncated', at, 'input ends inside a varint');
    const v = (b | (rd.src[rd.pos + 1] << 8) | (rd.src[rd.pos + 2] << 16)) >>> 3;
    rd.pos += 3;
    if (v < 0x4000) fail('invalid_varint', at, 'varint is not minimal');
    return v;
  }
  if (b & 8) {
    if (rd.pos + 4 > rd.end) fail('truncated', at, 'input ends inside a varint');
    const v = ((b | (rd.src[rd.pos + 1] << 8) | (rd.src[rd.pos + 2] << 16) | (rd.src[rd.pos + 3] << 24)) >>> 4) & 0xfffffff;
    rd.pos += 4;
    if (v < 0x200000) fail('invalid_varint', at, 'varint is not minimal');
    return v;
  }
  return varintLong(rd, at, b);
}

function varintLong(rd: DecoderState, at: number, b: number): number {
  const p = rd.pos;
  if (b === 0) {
    if (p + 9 > rd.end) fail('truncated', at, 'input ends inside a varint');
    const lo = (rd.src[p + 1] | (rd.src[p + 2] << 8) | (rd.src[p + 3] << 16) | (rd.src[p + 4] << 24)) >>> 0;
    const hi = (rd.src[p + 5] | (rd.src[p + 6] << 8) | (rd.src[p + 7] << 16) | (rd.src[p + 8] << 24)) >>> 0;
    rd.pos = p + 9;
    if (hi < 0x1000000) fail('invalid_varint', at, 'varint is not minimal');
    rd.varHi = hi;
    rd.varLo = lo;
    return hi * 4294967296 + lo;
  }
  const L = 31 - Math.clz32(b & -b) + 1; // 3..8
  if (p + L > rd.end) fail('truncated', at, 'input ends inside a varint');
  let v: number;
  if (L <= 4) {
    const w = (b | (rd.src[p + 1] << 8) | (rd.src[p + 2] << 16) | (L === 4 ? rd.src[p + 3] << 24 : 0)) >>> 0;
    v = w >>> L;
  } else {
    const lo = (b | (rd.src[p + 1] << 8) | (rd.src[p + 2] << 16) | (rd.src[p + 3] << 24)) >>> 0;
    let hi = 0;
    for (let i = L - 1; i >= 4; i--) hi = hi * 256 + rd.src[p + i];
    v = (lo >>> L) + hi * POW2[32 - L];
    if (v >= TWO53) {
      rd.varLo = ((hi << (32 - L)) | (lo >>> L)) >>> 0;
      rd.varHi = hi >>> L;
    }
  }
  rd.pos = p + L;
  if (v < POW2[7 * (L - 1)]) fail('invalid_varint', at, 'varint is not minimal');
  return v;
}

export function length(rd: DecoderState, at: number, bias: number): number {
  const n = varint(rd, at) + bias;
  if (n > rd.end - rd.pos) fail('length_exceeds_input', at, 'length exceeds the remaining input');
  return n;
}

export function byte(rd: DecoderState, at: number): number {
  if (rd.pos >= rd.end) fail('truncated', at, 'input ends inside an item');
  return rd.src[rd.pos++];
}

export function unzigzag(z: number): number {
  // exact for z < 2^53
  if (z < 0x80000000) return (z >>> 1) ^ -(z & 1);
  return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
}
