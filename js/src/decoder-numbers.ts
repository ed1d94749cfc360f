// Numbers (SPEC 5.2): integers with the slot's int register (64-bit values
// as two 32-bit halves, as BigInt beyond 2^53), big integers, decimals with
// the dec register, and binary floats.

import { Float64, Short, Tag, INT64_MIN, UINT64_MAX, HEX_BYTE } from './common.js';
import { fail, srcView } from './decoder-state.js';
import type { DecoderState, Slot } from './decoder-state.js';
import { TWO53, POW10, POW2, varint, length, byte, unzigzag } from './decoder-input.js';

// Integers beyond 2^53 are handled as 32-bit halves (a signed high word),
// with one BigInt made for the result: BigInt arithmetic allocates for every
// operation (six per 64-bit id).
const TWO32 = 4294967296;
const int64Scratch = new BigInt64Array(1);
const uint64Scratch = new BigUint64Array(int64Scratch.buffer);
const halves = new Uint32Array(int64Scratch.buffer);
const LO = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HI = 1 - LO;

/** The int64 h * 2^32 + l (h signed, l unsigned) as a BigInt. */
function bigOf(h: number, l: number): bigint {
  halves[LO] = l;
  halves[HI] = h;
  return int64Scratch[0];
}

function varBigOf(rd: DecoderState, v: number): bigint {
  if (v < TWO53) return BigInt(v);
  halves[LO] = rd.varLo;
  halves[HI] = rd.varHi;
  return uint64Scratch[0];
}

/** Sets the slot's int register and returns the value of the int64 h * 2^32 + l. */
function int64Result(rd: DecoderState, slot: Slot, h: number, l: number): number | bigint {
  if (h >= -2097152 && h < 2097152) {
    const n = h * TWO32 + l;
    if (n >= -9007199254740991 && n <= 9007199254740991) {
      slot.ik = 1;
      slot.i = n;
      return rd.bigints ? BigInt(n) : n;
    }
  }
  slot.ik = 2;
  slot.ih = h;
  slot.il = l;
  return bigOf(h, l);
}

/** The halves of the last varint v. */
function splitVar(rd: DecoderState, v: number): void {
  if (v < TWO53) {
    rd.varHi = Math.floor(v / TWO32);
    rd.varLo = v - rd.varHi * TWO32;
  }
}

/**
 * An INT_POS or INT_NEG item (tag t) whose varint, at p, takes five to nine
 * bytes: sets the slot's int register and rd.pos and returns the value, when
 * the input holds the varint, it is minimal and the value is an int64;
 * otherwise undefined, and the caller reads the item through read(), which
 * reports the defect or takes the rare values (beyond int64, or 8-byte
 * varints beyond 2^53). 32-bit and 64-bit ids take this path: through
 * varint() and int64Result() each cost about twice as much.
 */
export function wideInt(rd: DecoderState, t: number, p: number, slot: Slot): number | bigint | undefined {
  const src = rd.src;
  const b0 = src[p];
  const w = (b0 | (src[p + 1] << 8) | (src[p + 2] << 16) | (src[p + 3] << 24)) >>> 0;
  if (b0 !== 0) {
    const L = 31 - Math.clz32(b0 & -b0) + 1; // 5..8: the caller saw b0 & 15 === 0
    if (p + L > rd.end) return undefined;
    let h = 0;
    for (let i = L - 1; i >= 4; i--) h = h * 256 + src[p + i];
    const v = (w >>> L) + h * POW2[32 - L];
    if (v < POW2[7 * (L - 1)] || v >= TWO53 - 24) return undefined;
    const n = t === Tag.INT_POS ? v + 24 : -9 - v;
    rd.pos = p + L;
    slot.ik = 1;
    slot.i = n;
    return n;
  }
  if (p + 9 > rd.end) return undefined;
  let h = (src[p + 5] | (src[p + 6] << 8) | (src[p + 7] << 16) | (src[p + 8] << 24)) >>> 0;
  if (h < 0x1000000) return undefined;
  // the value is at least 2^56: always a BigInt
  let l = (src[p + 1] | (src[p + 2] << 8) | (src[p + 3] << 16) | (src[p + 4] << 24)) >>> 0;
  l += t === Tag.INT_POS ? 24 : 9;
  if (l >= TWO32) {
    l -= TWO32;
    h++;
  }
  if (t === Tag.INT_POS) {
    if (h >= 0x80000000) return undefined;
  } else {
    if (h > 0x80000000 || (h === 0x80000000 && l !== 0)) return undefined;
    if (l === 0) h = -h;
    else {
      h = -h - 1;
      l = TWO32 - l;
    }
  }
  rd.pos = p + 9;
  slot.ik = 2;
  slot.ih = h;
  slot.il = l;
  return bigOf(h, l);
}

export function intPos(rd: DecoderState, at: number, slot: Slot): number | bigint {
  const v = varint(rd, at);
  if (v < TWO53 - 24) {
    const n = v + 24;
    slot.ik = 1;
    slot.i = n;
    return rd.bigints ? BigInt(n) : n;
  }
  splitVar(rd, v);
  let l = rd.varLo + 24;
  let h = rd.varHi;
  if (l >= TWO32) {
    l -= TWO32;
    h++;
  }
  if (h >= TWO32) fail('invalid_value', at, 'integer out of range');
  if (h < 0x80000000) return int64Result(rd, slot, h, l);
  // beyond int64: the register keeps its value
  halves[LO] = l;
  halves[HI] = h;
  return uint64Scratch[0];
}

export function intNeg(rd: DecoderState, at: number, slot: Slot): number | bigint {
  const v = varint(rd, at);
  if (v < TWO53 - 9) {
    const n = -9 - v;
    slot.ik = 1;
    slot.i = n;
    return rd.bigints ? BigInt(n) : n;
  }
  splitVar(rd, v);
  // n = -(v + 9)
  let l = rd.varLo + 9;
  let h = rd.varHi;
  if (l >= TWO32) {
    l -= TWO32;
    h++;
  }
  if (h > 0x80000000 || (h === 0x80000000 && l !== 0)) fail('invalid_value', at, 'integer out of range');
  return l === 0 ? int64Result(rd, slot, -h, 0) : int64Result(rd, slot, -h - 1, TWO32 - l);
}

export function intDelta(rd: DecoderState, at: number, slot: Slot): number | bigint {
  if (slot.ik === 0) fail('bad_reference', at, 'integer delta without a previous integer');
  const z = varint(rd, at);
  if (slot.ik === 1 && z < TWO53) {
    const n = slot.i + unzigzag(z);
    if (n >= -9007199254740991 && n <= 9007199254740991) {
      slot.i = n;
      return rd.bigints ? BigInt(n) : n;
    }
  }
  splitVar(rd, z);
  // d = unzigzag(z) as halves
  const hh = rd.varHi >>> 1;
  const hl = ((rd.varLo >>> 1) | ((rd.varHi & 1) << 31)) >>> 0;
  let dh: number, dl: number;
  if (rd.varLo & 1) {
    dh = ~hh;
    dl = ~hl >>> 0;
  } else {
    dh = hh;
    dl = hl;
  }
  let rh: number, rl: number;
  if (slot.ik === 1) {
    rh = Math.floor(slot.i / TWO32);
    rl = slot.i - rh * TWO32;
  } else {
    rh = slot.ih;
    rl = slot.il;
  }
  let l = rl + dl;
  let h = rh + dh;
  if (l >= TWO32) {
    l -= TWO32;
    h++;
  }
  if (h < -2147483648 || h > 2147483647) fail('invalid_value', at, 'integer delta leaves int64');
  return int64Result(rd, slot, h, l);
}

export function bigInteger(rd: DecoderState, t: number, at: number): number | bigint {
  const n = length(rd, at, 0);
  const p = rd.pos;
  rd.pos += n;
  if (n === 0 || rd.src[p + n - 1] === 0) fail('invalid_value', at, 'big integer magnitude not minimal');
  // through hex: shifting in a byte at a time copies the number for each byte
  const digits: string[] = new Array(n);
  for (let i = 0; i < n; i++) digits[i] = HEX_BYTE[rd.src[p + n - 1 - i]];
  const mag = BigInt('0x' + digits.join(''));
  if (t === Tag.BIGINT_POS) {
    if (mag <= UINT64_MAX) fail('invalid_value', at, 'big integer fits a native form');
    return mag;
  }
  if (mag <= -INT64_MIN) fail('invalid_value', at, 'big integer fits a native form');
  return -mag;
}

function floatResult(rd: DecoderState, v: number): number | Float64 {
  if (rd.exactFloats && Number.isInteger(v) && !(v === 0 && 1 / v < 0)) return new Float64(v);
  return v;
}

export function decimal(rd: DecoderState, t: number, at: number, slot: Slot): number | Float64 {
  let e: number;
  let m: number;
  if (t === Tag.DEC_DELTA) {
    if (!slot.dk) fail('bad_reference', at, 'decimal delta without a previous decimal');
    const z = varint(rd, at);
    e = slot.de;
    if (z < TWO53) m = slot.dm + unzigzag(z);
    else m = TWO53; // |delta| >= 2^52 and the result must stay below 2^53: checked exactly below
    if (m >= TWO53 || m <= -TWO53 || z >= TWO53) {
      const zb = varBigOf(rd, z);
      const d = zb & 1n ? -((zb + 1n) >> 1n) : zb >> 1n;
      const mb = BigInt(slot.dm) + d;
      if (mb >= 9007199254740992n || mb <= -9007199254740992n) fail('invalid_value', at, 'decimal mantissa out of range');
      m = Number(mb);
    }
  } else {
    if (t === Tag.DEC_X) {
      let x = byte(rd, at);
      if (x >= 128) x -= 256;
      if (x < -22 || x > 22 || (x >= -12 && x <= 3)) fail('invalid_value', at, 'decimal exponent out of range');
      e = x;
    } else e = t - (Tag.DEC0 - Short.DEC_EXP_MIN);
    const z = varint(rd, at);
    if (z < 0x80000000) m = (z >>> 1) ^ -(z & 1);
    else if (z < TWO53) m = unzigzag(z);
    else {
      // |m| < 2^53 means z <= 2^54 - 2
      const vb = varBigOf(rd, z);
      if (vb > 18014398509481982n) fail('invalid_value', at, 'decimal mantissa out of range');
      m = Number(vb & 1n ? -((vb + 1n) >> 1n) : vb >> 1n);
    }
  }
  slot.dk = true;
  slot.dm = m;
  slot.de = e;
  const v = e >= 0 ? m * POW10[e] : m / POW10[-e];
  return rd.exactFloats ? floatResult(rd, v) : v;
}

const scratch = new ArrayBuffer(8);
export const scratchU32 = new Uint32Array(scratch);
export const scratchF32 = new Float32Array(scratch);
export const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function f32(rd: DecoderState, at: number): number | Float64 {
  if (rd.pos + 4 > rd.end) fail('truncated', at, 'input ends inside an item');
  const bits = (rd.src[rd.pos] | (rd.src[rd.pos + 1] << 8) | (rd.src[rd.pos + 2] << 16) | (rd.src[rd.pos + 3] << 24)) >>> 0;
  rd.pos += 4;
  if ((bits & 0x7f800000) === 0x7f800000 && bits & 0x007fffff) {
    // NaN: widen by bits so sign, payload and quiet bit survive
    const wide = (BigInt(bits & 0x80000000) << 32n) | (0x7ffn << 52n) | (BigInt(bits & 0x007fffff) << 29n);
    return nanResult(rd, wide);
  }
  scratchU32[0] = bits;
  const v = scratchF32[0];
  return rd.exactFloats ? floatResult(rd, v) : v;
}

export function f64(rd: DecoderState, at: number): number | Float64 {
  if (rd.pos + 8 > rd.end) fail('truncated', at, 'input ends inside an item');
  const p = rd.pos;
  rd.pos += 8;
  const dv = srcView(rd);
  const v = dv.getFloat64(p, true);
  if (v !== v) return nanResult(rd, dv.getBigUint64(p, true));
  return rd.exactFloats ? floatResult(rd, v) : v;
}

function nanResult(rd: DecoderState, bits: bigint): number | Float64 {
  if (rd.exactFloats && bits !== 0x7ff8000000000000n) return Float64.fromBits(bits);
  return NaN;
}
