// Numbers (SPEC 5.2, 7): integers with the slot's int register (deltas,
// 64-bit values as two 32-bit halves), big integers, and floats in their
// shortest decimal or binary form with the slot's dec register and bin count.

import { INT64_MAX, INT64_MIN, UINT64_MAX, Tag, Short } from './common.js';
import type { Float64 } from './common.js';
import type { EncoderState, ESlot } from './encoder-state.js';
import { ensure, grow, vlen, vlenBig, writeVarint, writeVarintBig, zz, zzBig } from './encoder-output.js';
import { shortestDecimal, decM, decE, decGuessed } from './decimal.js';

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/** The tags of the integer 0 and of the decimal exponent 0 among the short forms. */
const INT_BASE = Tag.INT0 - Short.INT_MIN;
const DEC_BASE = Tag.DEC0 - Short.DEC_EXP_MIN;
const scratch = new ArrayBuffer(8);
const scratchU8 = new Uint8Array(scratch);
const scratchBig = new BigUint64Array(scratch);
const scratchU32 = new Uint32Array(scratch);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function writeInt(st: EncoderState, v: number, slot: ESlot): void {
  // v is a safe integer, not -0
  if (v >= -8 && v <= 23) {
    st.buf[st.pos++] = INT_BASE + v;
    slot.ik = 1;
    slot.i = v;
    return;
  }
  // |v| >= 2^28 + 24 (or <= -9 - 2^28): the absolute form has 5 or more
  // bytes; within 2^26 of an integer register the delta's zigzag is below
  // 2^27, at most 4 bytes: the delta form, in int32 arithmetic
  if (slot.ik === 1 && (v >= 268435480 || v <= -268435465)) {
    const d = v - slot.i;
    if (d < 67108864 && d > -67108864) {
      const di = d | 0;
      st.buf[st.pos++] = Tag.INT_DELTA;
      putVarint28(st, (di << 1) ^ (di >> 31));
      slot.i = v;
      return;
    }
  }
  const u = v > 0 ? v - 24 : -9 - v;
  const al = vlen(u);
  if (slot.ik === 1) {
    const d = v - slot.i;
    if (d > -4503599627370496 && d < 4503599627370496) {
      const z = zz(d);
      if (vlen(z) < al) {
        st.buf[st.pos++] = Tag.INT_DELTA;
        writeVarint(st, z);
        slot.i = v;
        return;
      }
    } else if (writeDelta64(st, hiOf(v), loOf(v), hiOf(slot.i), loOf(slot.i), al)) {
      slot.i = v;
      return;
    }
  } else if (slot.ik === 2) {
    if (writeDelta64(st, hiOf(v), loOf(v), slot.ih, slot.il, al)) {
      slot.ik = 1;
      slot.i = v;
      return;
    }
  }
  st.buf[st.pos++] = v > 0 ? Tag.INT_POS : Tag.INT_NEG;
  writeVarint(st, u);
  slot.ik = 1;
  slot.i = v;
}

// Integers beyond 2^53 are handled as two 32-bit halves (a signed high word
// for int64 values, unsigned for the magnitudes of varints): BigInt arithmetic
// allocates for every operation, and took three quarters of encoding arrays
// of 64-bit ids.
const TWO32 = 4294967296;

function hiOf(v: number): number {
  return Math.floor(v / TWO32);
}

function loOf(v: number): number {
  return v - Math.floor(v / TWO32) * TWO32;
}

/** Varint length of the unsigned 64-bit h * 2^32 + l. */
function vlen64(h: number, l: number): number {
  if (h === 0) return vlen(l);
  const bits = 64 - Math.clz32(h);
  return bits > 56 ? 9 : Math.ceil(bits / 7);
}

/** Writes the varint of the unsigned 64-bit h * 2^32 + l (capacity ensured). */
function writeVarint64(st: EncoderState, h: number, l: number): void {
  if (h < 0x200000) return writeVarint(st, h * TWO32 + l);
  if (h < 0x1000000) st.buf[st.pos++] = 0x80; // 8 bytes: the value shifted left by 8
  else st.buf[st.pos++] = 0; // 9 bytes: the value as is
  st.buf[st.pos++] = l;
  st.buf[st.pos++] = l >>> 8;
  st.buf[st.pos++] = l >>> 16;
  st.buf[st.pos++] = l >>> 24;
  st.buf[st.pos++] = h;
  st.buf[st.pos++] = h >>> 8;
  st.buf[st.pos++] = h >>> 16;
  if (h >= 0x1000000) st.buf[st.pos++] = h >>> 24;
}

/**
 * Writes INT_DELTA for v - r (int64 values as signed high and unsigned low
 * words) if the delta fits int64 and is strictly smaller than an absolute form
 * of `al` varint bytes.
 */
function writeDelta64(st: EncoderState, vh: number, vl: number, rh: number, rl: number, al: number): boolean {
  let dl = vl - rl;
  let dh = vh - rh;
  if (dl < 0) {
    dl += TWO32;
    dh--;
  }
  if (dh < -2147483648 || dh > 2147483647) return false;
  // zigzag: (d << 1) ^ (d >> 63)
  let zh = ((dh << 1) | (dl >>> 31)) >>> 0;
  let zl = (dl << 1) >>> 0;
  if (dh < 0) {
    zh = ~zh >>> 0;
    zl = ~zl >>> 0;
  }
  if (vlen64(zh, zl) >= al) return false;
  ensure(st, 10);
  st.buf[st.pos++] = Tag.INT_DELTA;
  writeVarint64(st, zh, zl);
  return true;
}

export function writeBigInt(st: EncoderState, v: bigint, slot: ESlot): void {
  ensure(st, 12);
  if (v >= -9007199254740991n && v <= 9007199254740991n) return writeInt(st, Number(v), slot);
  if (v >= INT64_MIN && v <= UINT64_MAX) {
    scratchBig[0] = v; // v mod 2^64
    const lo = scratchU32[littleEndian ? 0 : 1];
    const hi = scratchU32[littleEndian ? 1 : 0];
    // the magnitude field: v - 24, or -9 - v = ~v - 8 (|v| > 2^53: no wrap)
    let uh: number, ul: number;
    if (v > 0n) {
      uh = hi;
      ul = lo - 24;
    } else {
      uh = ~hi >>> 0;
      ul = (~lo >>> 0) - 8;
    }
    if (ul < 0) {
      ul += TWO32;
      uh--;
    }
    const al = vlen64(uh, ul);
    const signed = v <= INT64_MAX;
    let done = false;
    if (signed && slot.ik !== 0) {
      done = slot.ik === 1 ? writeDelta64(st, hi | 0, lo, hiOf(slot.i), loOf(slot.i), al) : writeDelta64(st, hi | 0, lo, slot.ih, slot.il, al);
    }
    if (!done) {
      st.buf[st.pos++] = v > 0n ? Tag.INT_POS : Tag.INT_NEG;
      writeVarint64(st, uh, ul);
    }
    if (signed) {
      slot.ik = 2;
      slot.ih = hi | 0;
      slot.il = lo;
    }
    return;
  }
  // through hex: shifting out a byte at a time copies the number for each byte
  let hexText = (v < 0n ? -v : v).toString(16);
  if (hexText.length & 1) hexText = '0' + hexText;
  const bytes: number[] = new Array(hexText.length >> 1);
  for (let i = 0, j = hexText.length - 2; j >= 0; i++, j -= 2) bytes[i] = parseInt(hexText.slice(j, j + 2), 16);
  ensure(st, bytes.length + 12);
  st.buf[st.pos++] = v > 0n ? Tag.BIGINT_POS : Tag.BIGINT_NEG;
  writeVarint(st, bytes.length);
  for (const b of bytes) st.buf[st.pos++] = b;
}

/**
 * Floats (SPEC 7). The slot's `bin` count (SPEC 4.3) says whether the decimal
 * form is a candidate at all: after four binary floats in a row only one float
 * in 16 is tested, so float data measured to full precision costs a
 * fround and a copy per value.
 */
function writeFloat(st: EncoderState, d: number, slot: ESlot): void {
  ensure(st, 10);
  const c = slot.bin;
  if (c >= 4 && c !== 19) {
    slot.bin = c + 1;
    if (d !== d) return writeF64Bits(st, 0x7ff8000000000000n);
    return Math.fround(d) === d ? writeF32(st, d) : writeF64(st, d);
  }
  if (d === d && d !== Infinity && d !== -Infinity) {
    let has = true;
    let m = 0;
    let e = 0;
    if (d === 0) has = 1 / d > 0;
    else {
      has = shortestDecimal(d, slot.dg);
      m = decM;
      e = decE;
      // the next guess: this one while it holds, else this float's decimals
      if (!decGuessed) slot.dg = has && e < 0 ? -e : 0;
    }
    if (has) {
      const hasReg = slot.dk && slot.de === e;
      if (m >= 2251799813685248 || m <= -2251799813685248 || (hasReg && (slot.dm >= 2251799813685248 || slot.dm <= -2251799813685248))) {
        if (!hasReg) {
          // |m| >= 2^51: the mantissa varint has 8 bytes
          const decSize = (e >= -12 && e <= 3 ? 1 : 2) + 8;
          if (Math.fround(d) === d) return writeBinary32(st, d, slot);
          if (decSize > 9) return writeBinary64(st, d, slot);
        }
        // zigzag values reach 2^54: exact arithmetic in BigInt
        return writeDecimalBig(st, d, m, e, slot, hasReg);
      }
      const z = zz(m);
      const decSize = (e >= -12 && e <= 3 ? 1 : 2) + vlen(z);
      let best = decSize;
      let useDelta = false;
      let dz = 0;
      if (hasReg) {
        dz = zz(m - slot.dm);
        if (1 + vlen(dz) < best) {
          best = 1 + vlen(dz);
          useDelta = true;
        }
      }
      if (best > 5 && Math.fround(d) === d) return writeBinary32(st, d, slot);
      if (best > 9) return writeBinary64(st, d, slot);
      if (useDelta) {
        st.buf[st.pos++] = Tag.DEC_DELTA;
        writeVarint(st, dz);
      } else if (e >= -12 && e <= 3) {
        st.buf[st.pos++] = DEC_BASE + e;
        writeVarint(st, z);
      } else {
        st.buf[st.pos++] = Tag.DEC_X;
        st.buf[st.pos++] = e & 0xff;
        writeVarint(st, z);
      }
      slot.dk = true;
      slot.dm = m;
      slot.de = e;
      slot.bin = 0;
      return;
    }
    if (Math.fround(d) === d) return writeBinary32(st, d, slot);
    return writeBinary64(st, d, slot);
  }
  slot.bin = c === 19 ? 4 : c + 1;
  if (d !== d) return writeF64Bits(st, 0x7ff8000000000000n);
  writeF32(st, d); // infinities are exact in binary32
}

/** An F32 item in a slot: counts toward the slot's `bin` (19 is followed by 4). */
function writeBinary32(st: EncoderState, d: number, slot: ESlot): void {
  const c = slot.bin;
  slot.bin = c === 19 ? 4 : c + 1;
  writeF32(st, d);
}

function writeBinary64(st: EncoderState, d: number, slot: ESlot): void {
  const c = slot.bin;
  slot.bin = c === 19 ? 4 : c + 1;
  writeF64(st, d);
}

/** writeFloat for mantissas of 2^51 or more (their zigzag form exceeds 2^53). */
function writeDecimalBig(st: EncoderState, d: number, m: number, e: number, slot: ESlot, hasReg: boolean): void {
  const zb = zzBig(BigInt(m));
  let best = (e >= -12 && e <= 3 ? 1 : 2) + vlenBig(zb);
  let dzb = -1n;
  if (hasReg) {
    const c = zzBig(BigInt(m) - BigInt(slot.dm));
    if (1 + vlenBig(c) < best) {
      best = 1 + vlenBig(c);
      dzb = c;
    }
  }
  if (best > 5 && Math.fround(d) === d) return writeBinary32(st, d, slot);
  if (best > 9) return writeBinary64(st, d, slot);
  if (dzb >= 0n) {
    st.buf[st.pos++] = Tag.DEC_DELTA;
    writeVarintBig(st, dzb);
  } else {
    if (e >= -12 && e <= 3) st.buf[st.pos++] = DEC_BASE + e;
    else {
      st.buf[st.pos++] = Tag.DEC_X;
      st.buf[st.pos++] = e & 0xff;
    }
    writeVarintBig(st, zb);
  }
  slot.dk = true;
  slot.dm = m;
  slot.de = e;
  slot.bin = 0;
}

function writeF32(st: EncoderState, d: number): void {
  st.buf[st.pos] = Tag.F32;
  st.view.setFloat32(st.pos + 1, d, true);
  st.pos += 5;
}

function writeF64(st: EncoderState, d: number): void {
  st.buf[st.pos] = Tag.F64;
  st.view.setFloat64(st.pos + 1, d, true);
  st.pos += 9;
}

function writeF64Bits(st: EncoderState, bits: bigint): void {
  scratchBig[0] = bits;
  writeScratch64(st);
}

function writeScratch64(st: EncoderState): void {
  st.buf[st.pos++] = Tag.F64;
  if (littleEndian) {
    st.buf[st.pos++] = scratchU8[0];
    st.buf[st.pos++] = scratchU8[1];
    st.buf[st.pos++] = scratchU8[2];
    st.buf[st.pos++] = scratchU8[3];
    st.buf[st.pos++] = scratchU8[4];
    st.buf[st.pos++] = scratchU8[5];
    st.buf[st.pos++] = scratchU8[6];
    st.buf[st.pos++] = scratchU8[7];
  } else for (let i = 7; i >= 0; i--) st.buf[st.pos++] = scratchU8[i];
}

export function writeFloatObject(st: EncoderState, f: Float64, slot: ESlot): void {
  const v = f.value;
  if (v !== v) {
    ensure(st, 10);
    const bits = f.bits;
    // F32 is never chosen for a NaN (SPEC 7)
    const c = slot.bin;
    slot.bin = c === 19 ? 4 : c + 1;
    return writeF64Bits(st, bits);
  }
  writeFloat(st, v, slot);
}

/** The varint length of w < 2^28. */
function varintLen28(w: number): number {
  return w < 0x80 ? 1 : w < 0x4000 ? 2 : w < 0x200000 ? 3 : 4;
}

/** The varint length of w < 2^35. */
function varintLen35(w: number): number {
  return w < 0x80 ? 1 : w < 0x4000 ? 2 : w < 0x200000 ? 3 : w < 0x10000000 ? 4 : 5;
}

/** The 5-byte varint of 2^28 <= w < 2^32: w * 2^5 + 2^4, in uint32 arithmetic. */
function putVarint5(st: EncoderState, w: number): void {
  st.pos = putVarint35At(st.buf, st.pos, w);
}

/** A varint of w < 2^28 by its length, without writeVarint's call and general path (larger values: writeVarint). */
function putVarint28(st: EncoderState, w: number): void {
  if (w < 0x10000000) st.pos = putVarint28At(st.buf, st.pos, w);
  else writeVarint(st, w);
}

/**
 * Writes a number. The common cases are decided here without further calls:
 * small integers, floats in a run of binary ones, and decimals found by the
 * slot's guess of decimals (see shortestDecimal) whose mantissa is below
 * 2^30, tested in int32 arithmetic, with the trailing zeros stripped by
 * integer division by 10 (a multiplication in V8's code), where the general
 * search divides doubles in a dependent chain and returns through module
 * variables. The rest goes to writeInt and writeFloat, which decide the same
 * way.
 */
export function writeNumber(st: EncoderState, v: number, slot: ESlot): void {
  if (st.pos + 10 > st.cap) grow(st, 10);
  // Object.is(v, -0) compiles to a test of the bits (1 / v, a division per zero)
  if (Number.isSafeInteger(v) && !Object.is(v, -0)) {
    if (v >= -8 && v <= 23) {
      st.buf[st.pos++] = INT_BASE + v;
      slot.ik = 1;
      slot.i = v;
      return;
    }
    // |v| < 2^26 after an integer register of the same range: the absolute
    // and delta forms are both below 2^28, in int32 arithmetic
    if (v < 67108864 && v > -67108864 && slot.ik === 1) {
      const r = slot.i;
      if (r < 67108864 && r > -67108864) {
        const u = v > 0 ? v - 24 : -9 - v;
        const d = v - r;
        const z = (d << 1) ^ (d >> 31);
        if (varintLen28(z) < varintLen28(u)) {
          st.buf[st.pos++] = Tag.INT_DELTA;
          putVarint28(st, z);
        } else {
          st.buf[st.pos++] = v > 0 ? Tag.INT_POS : Tag.INT_NEG;
          putVarint28(st, u);
        }
        slot.i = v;
        return;
      }
    }
    // |v| < 2^32 after no register or an integer register of that range:
    // the absolute form's magnitude is below 2^32 and the delta's zigzag
    // below 2^34, both at most 5 bytes
    if (v < 4294967296 && v > -4294967296 && slot.ik !== 2) {
      const u = v > 0 ? v - 24 : -9 - v;
      const al = varintLen35(u);
      if (slot.ik === 1) {
        const r = slot.i;
        if (r < 4294967296 && r > -4294967296) {
          const d = v - r;
          const z = d >= 0 ? d * 2 : -d * 2 - 1;
          if (varintLen35(z) < al) {
            // shorter than 5 bytes: below 2^28
            st.buf[st.pos++] = Tag.INT_DELTA;
            putVarint28(st, z);
            slot.i = v;
            return;
          }
        } else return writeInt(st, v, slot);
      }
      st.buf[st.pos++] = v > 0 ? Tag.INT_POS : Tag.INT_NEG;
      if (al < 5) putVarint28(st, u);
      else putVarint5(st, u);
      slot.ik = 1;
      slot.i = v;
      return;
    }
    return writeInt(st, v, slot);
  }
  const c = slot.bin;
  if (c >= 4 && c !== 19) {
    if (v !== v) return writeFloat(st, v, slot);
    slot.bin = c + 1;
    return Math.fround(v) === v ? writeF32(st, v) : writeF64(st, v);
  }
  const g = slot.dg;
  if (g > 0) {
    // the integer nearest v * 10^g is the decimal of that scale if it gives v back (NaN and infinities do not)
    const p = POW10[g];
    const r = Math.round(v * p);
    if (r / p === v && r < 1073741824 && r > -1073741824) {
      let m = r | 0;
      let e = -g;
      let q = (m / 10) | 0;
      while (q * 10 === m && e < 0) {
        m = q;
        e++;
        q = (m / 10) | 0;
      }
      if (e < 0) {
        // its forms: |m| < 2^30, so at most 7 bytes (F64 never wins) and a delta below 2^53 from a register below 2^51
        const z = (m << 1) ^ (m >> 31);
        let best = (e >= -12 ? 1 : 2) + (z < 0x10000000 ? varintLen28(z) : 5);
        let w = z;
        let tag = e >= -12 ? DEC_BASE + e : Tag.DEC_X;
        if (slot.dk && slot.de === e) {
          const dd = m - slot.dm;
          if (dd < 134217728 && dd > -134217728) {
            // int32 zigzag, below 2^28
            const di = dd | 0;
            const dz = (di << 1) ^ (di >> 31);
            if (1 + varintLen28(dz) < best) {
              best = 1 + varintLen28(dz);
              w = dz;
              tag = Tag.DEC_DELTA;
            }
          } else {
            const dm = slot.dm;
            if (dm >= 2251799813685248 || dm <= -2251799813685248) return writeFloat(st, v, slot);
            const dz = zz(dd);
            if (1 + vlen(dz) < best) {
              best = 1 + vlen(dz);
              w = dz;
              tag = Tag.DEC_DELTA;
            }
          }
        }
        if (best > 5 && Math.fround(v) === v) return writeBinary32(st, v, slot);
        st.buf[st.pos++] = tag;
        if (tag === Tag.DEC_X) st.buf[st.pos++] = e & 0xff;
        putVarint28(st, w);
        slot.dk = true;
        slot.dm = m;
        slot.de = e;
        slot.bin = 0;
        return;
      }
    }
  }
  writeFloat(st, v, slot);
}

/** The varint of w < 2^28 at buf[pos] (capacity ensured); returns the position after it. */
function putVarint28At(buf: Uint8Array, pos: number, w: number): number {
  if (w < 0x80) {
    buf[pos] = (w << 1) | 1;
    return pos + 1;
  }
  if (w < 0x4000) {
    buf[pos] = (w << 2) | 2;
    buf[pos + 1] = w >>> 6;
    return pos + 2;
  }
  if (w < 0x200000) {
    buf[pos] = (w << 3) | 4;
    buf[pos + 1] = w >>> 5;
    buf[pos + 2] = w >>> 13;
    return pos + 3;
  }
  buf[pos] = (w << 4) | 8;
  buf[pos + 1] = w >>> 4;
  buf[pos + 2] = w >>> 12;
  buf[pos + 3] = w >>> 20;
  return pos + 4;
}

/**
 * Writes the numbers a[i], a[i + 1], ... of one array slot up to the first
 * element that is not a number; returns its index. The common cases are
 * decided as writeNumber decides them, with the output position and the
 * int register in locals and without a call per element: integers below
 * 2^26 in magnitude (after no integer register or one in that range),
 * integers within 2^26 of the register beyond 2^28, floats in a run of
 * binary ones, and decimals of the slot's guessed scale with mantissas below
 * 2^30 whose delta from the dec register (if any) is below 2^27. The other
 * numbers go through writeNumber.
 */
export function writeNumberRun(st: EncoderState, a: unknown[], i: number, n: number, slot: ESlot): number {
  let buf = st.buf;
  let view = st.view;
  let pos = st.pos;
  let cap = st.cap;
  let ik = slot.ik;
  let r = slot.i;
  for (; i < n; i++) {
    const v = a[i];
    if (typeof v !== 'number') break;
    if (pos + 10 > cap) {
      st.pos = pos;
      grow(st, 10);
      buf = st.buf;
      view = st.view;
      pos = st.pos;
      cap = st.cap;
    }
    if (!Number.isInteger(v)) {
      const c = slot.bin;
      if (c >= 4 && c !== 19) {
        if (v === v) {
          slot.bin = c + 1;
          if (Math.fround(v) === v) {
            buf[pos] = Tag.F32;
            view.setFloat32(pos + 1, v, true);
            pos += 5;
          } else {
            buf[pos] = Tag.F64;
            view.setFloat64(pos + 1, v, true);
            pos += 9;
          }
          continue;
        }
      } else {
        const g = slot.dg;
        if (g > 0) {
          // writeNumber's decimal of the guessed scale, when its mantissa is below 2^30 and its register (if any) close
          const p = POW10[g];
          const rd = Math.round(v * p);
          if (rd / p === v && rd < 1073741824 && rd > -1073741824) {
            let m = rd | 0;
            let e = -g;
            let q = (m / 10) | 0;
            while (q * 10 === m && e < 0) {
              m = q;
              e++;
              q = (m / 10) | 0;
            }
            if (e < 0) {
              const z = (m << 1) ^ (m >> 31);
              let best = (e >= -12 ? 1 : 2) + (z < 0x10000000 ? varintLen28(z) : 5);
              let w = z;
              let tag = e >= -12 ? DEC_BASE + e : Tag.DEC_X;
              let fits = true;
              if (slot.dk && slot.de === e) {
                const dd = m - slot.dm;
                if (dd < 134217728 && dd > -134217728) {
                  const di = dd | 0;
                  const dz = (di << 1) ^ (di >> 31);
                  if (1 + varintLen28(dz) < best) {
                    best = 1 + varintLen28(dz);
                    w = dz;
                    tag = Tag.DEC_DELTA;
                  }
                } else fits = false;
              }
              if (fits && (best <= 5 || Math.fround(v) !== v)) {
                buf[pos++] = tag;
                if (tag === Tag.DEC_X) buf[pos++] = e & 0xff;
                pos = w < 0x10000000 ? putVarint28At(buf, pos, w) : putVarint35At(buf, pos, w);
                slot.dk = true;
                slot.dm = m;
                slot.de = e;
                slot.bin = 0;
                continue;
              }
            }
          }
        }
      }
    } else if ((v | 0) === v && v < 67108864 && v > -67108864 && (v !== 0 || 1 / v > 0)) {
      if (v >= -8 && v <= 23) {
        buf[pos++] = INT_BASE + v;
        ik = 1;
        r = v;
        continue;
      }
      const u = v > 0 ? v - 24 : -9 - v;
      if (ik === 0) {
        buf[pos++] = v > 0 ? Tag.INT_POS : Tag.INT_NEG;
        pos = putVarint28At(buf, pos, u);
        ik = 1;
        r = v;
        continue;
      }
      if (ik === 1 && r < 67108864 && r > -67108864) {
        const d = v - r;
        const z = (d << 1) ^ (d >> 31);
        if (varintLen28(z) < varintLen28(u)) {
          buf[pos++] = Tag.INT_DELTA;
          pos = putVarint28At(buf, pos, z);
        } else {
          buf[pos++] = v > 0 ? Tag.INT_POS : Tag.INT_NEG;
          pos = putVarint28At(buf, pos, u);
        }
        r = v;
        continue;
      }
    } else if (ik === 1 && (v >= 268435480 || v <= -268435465) && Number.isSafeInteger(v)) {
      // as writeInt: the absolute form has 5 or more bytes, a delta within 2^26 at most 4
      const d = v - r;
      if (d < 67108864 && d > -67108864) {
        const di = d | 0;
        buf[pos++] = Tag.INT_DELTA;
        pos = putVarint28At(buf, pos, (di << 1) ^ (di >> 31));
        r = v;
        continue;
      }
    }
    st.pos = pos;
    slot.ik = ik;
    slot.i = r;
    writeNumber(st, v, slot);
    buf = st.buf;
    view = st.view;
    pos = st.pos;
    cap = st.cap;
    ik = slot.ik;
    r = slot.i;
  }
  st.pos = pos;
  slot.ik = ik;
  slot.i = r;
  return i;
}

/** The 5-byte varint of 2^28 <= w < 2^32 at buf[pos]; returns the position after it. */
function putVarint35At(buf: Uint8Array, pos: number, w: number): number {
  buf[pos] = (w << 5) | 16;
  buf[pos + 1] = w >>> 3;
  buf[pos + 2] = w >>> 11;
  buf[pos + 3] = w >>> 19;
  buf[pos + 4] = w >>> 27;
  return pos + 5;
}
