// Items (SPEC 5): read() dispatches on the tag; arrays and generic maps
// are read here, shaped maps in decoder-shapes.ts.

import { Ext, Short, Tag, extByType, MAX_EXT_TYPE, EXT_APP_MAX, MAX_STRINGS, SHAPE8_BASE, SHAPE16_BASE, REF8_BASE } from './common.js';
import { fail, srcView, RECURSION_DEPTH } from './decoder-state.js';
import type { DecoderState, Slot } from './decoder-state.js';
import { varint, length, byte, TWO53, POW10 } from './decoder-input.js';
import { utf8 } from './decoder-utf8.js';
import { isStringTag, readString, prefixString, refString, ref16String } from './decoder-strings.js';
import { timestamp } from './decoder-time.js';
import { wideInt, intPos, intNeg, intDelta, bigInteger, decimal, f32, f64, scratchU32, scratchF32 } from './decoder-numbers.js';
import { shapeRef, mapDef } from './decoder-shapes.js';
import { MapBuilder, exactKeyTag } from './map-keys.js';
import { readWellKnown } from './well-known.js';
import { nestArray, nestGenericMap } from './decoder-deep.js';

/** The tag of the integer 0 among the short forms. */
const INT_BASE = Tag.INT0 - Short.INT_MIN;

/** Longest array whose scratch storage a decoder keeps between arrays. */
const SCRATCH_KEEP = 1 << 16;

/** An array of n items; the caller checked the depth before reading the count (SPEC 10 order). */
function array(rd: DecoderState, n: number, slot: Slot): unknown {
  if (rd.depth >= RECURSION_DEPTH) return nestArray(rd, n, slot, rd.depth);
  rd.depth++;
  let a: unknown[];
  const t0 = rd.src[rd.pos];
  // F32 through DEC_DELTA: binary floats, integers and decimals
  if (n === 2 && t0 === Tag.F64) {
    a = f64Pair(rd, slot);
  } else if (n > 1 && ((t0 >= Tag.INT0 && t0 < Tag.PFX0) || (t0 >= Tag.DEC0 && t0 < Tag.NULL) || (t0 >= Tag.F32 && t0 <= Tag.DEC_DELTA))) {
    const b = numbers(rd, n, slot);
    if (b !== null) a = b;
    else {
      // all numbers, in the scratch: a literal costs less than a slice and keeps them unboxed
      const sc = rd.nums;
      a = n === 2 ? [sc[0], sc[1]] : n === 3 ? [sc[0], sc[1], sc[2]] : [sc[0], sc[1], sc[2], sc[3]];
    }
  } else if (n > 4) {
    // A literal, which costs less than an empty slice (see numbers()): the
    // elements kind its site carries over cannot box strings or containers.
    a = [];
    for (let i = 0; i < n; i++) a.push(read(rd, slot));
  } else {
    // small arrays as literals: packed and exactly sized (elements are read left to right)
    switch (n) {
      case 0:
        a = [];
        break;
      case 1:
        a = [read(rd, slot)];
        break;
      case 2:
        a = [read(rd, slot), read(rd, slot)];
        break;
      case 3:
        a = [read(rd, slot), read(rd, slot), read(rd, slot)];
        break;
      default:
        a = [read(rd, slot), read(rd, slot), read(rd, slot), read(rd, slot)];
    }
  }
  rd.depth--;
  return a;
}

/**
 * An array of n items whose first item is a number (n > 1). The numbers at
 * its start go to the decoder's scratch array of unboxed doubles, and the
 * array is made by slicing it, at the end or at the first item that is not
 * such a number (the rest are pushed); arrays of two to four numbers
 * (coordinates, vectors) are made by a literal of the scratch values, which
 * costs less than a slice and keeps them unboxed as read() would not. An array made by a builtin has no V8
 * allocation site, whose state the decodes of other documents would set:
 * a site starts its arrays with the elements kind its earlier arrays ended
 * with (an array of floats after arrays of containers or BigInts boxes
 * every element), and V8 pretenures a site (allocates its objects in the
 * old generation, collected only by full collections of the whole heap)
 * once most of its objects survive a scavenge, as a large document's do
 * when a scavenge runs while it is read.
 */
function numbers(rd: DecoderState, n: number, slot: Slot): unknown[] | null {
  const src = rd.src;
  const sc = rd.nums;
  let b: unknown[] | null = null;
  const plainInts = !rd.bigints;
  for (let i = 0; i < n; i++) {
    // Binary floats (embeddings, measurements), integers of the short
    // forms, integers with varints of up to four bytes and decimals with
    // varints of up to five are read here: a call to read() per element
    // returns each as a boxed number, which was half of decoding an array
    // of F32s. NaN, infinities, exactFloats, bigints, other integers and
    // decimals and short input take read()'s path.
    const t = src[rd.pos];
    if (t >= Tag.INT0 && t < Tag.PFX0 && plainInts && rd.pos < rd.end) {
      const v = t - INT_BASE;
      slot.ik = 1;
      slot.i = v;
      if (b === null) sc[i] = v;
      else b.push(v);
      rd.pos++;
      continue;
    }
    const isInt = t >= Tag.INT_POS && t <= Tag.INT_DELTA && plainInts;
    const isDec = ((t >= Tag.DEC0 && t < Tag.NULL) || t === Tag.DEC_DELTA) && !rd.exactFloats;
    if ((isInt || isDec) && rd.pos + 5 <= rd.end) {
      // a varint of up to four bytes, five for decimals (minimal: else read() reports it)
      const p = rd.pos + 1;
      const b0 = src[p];
      let z = -1;
      let L = 0;
      if (b0 & 1) {
        z = b0 >>> 1;
        L = 1;
      } else if (b0 & 2) {
        z = (b0 | (src[p + 1] << 8)) >>> 2;
        L = 2;
        if (z < 0x80) z = -1;
      } else if (b0 & 4) {
        z = (b0 | (src[p + 1] << 8) | (src[p + 2] << 16)) >>> 3;
        L = 3;
        if (z < 0x4000) z = -1;
      } else if (b0 & 8) {
        z = ((b0 | (src[p + 1] << 8) | (src[p + 2] << 16) | (src[p + 3] << 24)) >>> 4) & 0xfffffff;
        L = 4;
        if (z < 0x200000) z = -1;
      } else if (b0 & 16 && isDec && rd.pos + 6 <= rd.end) {
        // decimals of up to ten digits (coordinates to 1e-7): z < 2^35
        z = ((b0 | (src[p + 1] << 8) | (src[p + 2] << 16) | (src[p + 3] << 24)) >>> 5) + src[p + 4] * 134217728;
        L = 5;
        if (z < 0x10000000) z = -1;
      }
      if (z >= 0 && isInt) {
        let v = -1;
        if (t === Tag.INT_POS) v = z + 24;
        else if (t === Tag.INT_NEG) v = -9 - z;
        else if (slot.ik === 1) {
          v = slot.i + ((z >>> 1) ^ -(z & 1));
          if (v < -9007199254740991 || v > 9007199254740991) z = -1;
        } else z = -1;
        if (z >= 0) {
          slot.ik = 1;
          slot.i = v;
          if (b === null) sc[i] = v;
          else b.push(v);
          rd.pos = p + L;
          continue;
        }
      } else if (z >= 0) {
        // decimals as decimal() reads them, for the mantissas a varint
        // of five bytes holds and deltas that stay below 2^53
        let e = 0;
        let m = 0;
        const d = z < 4294967296 ? (z >>> 1) ^ -(z & 1) : z % 2 === 1 ? -(z + 1) / 2 : z / 2;
        if (t !== Tag.DEC_DELTA) {
          e = t - (Tag.DEC0 - Short.DEC_EXP_MIN);
          m = d;
        } else if (slot.dk) {
          e = slot.de;
          m = slot.dm + d;
          if (m >= TWO53 || m <= -TWO53) z = -1;
        } else z = -1;
        if (z >= 0) {
          slot.dk = true;
          slot.dm = m;
          slot.de = e;
          const v = e >= 0 ? m * POW10[e] : m / POW10[-e];
          if (b === null) sc[i] = v;
          else b.push(v);
          rd.pos = p + L;
          continue;
        }
      }
    }
    if (t === Tag.F32 && !rd.exactFloats && rd.pos + 5 <= rd.end) {
      const bits = (rd.src[rd.pos + 1] | (rd.src[rd.pos + 2] << 8) | (rd.src[rd.pos + 3] << 16) | (rd.src[rd.pos + 4] << 24)) >>> 0;
      if ((bits & 0x7f800000) !== 0x7f800000) {
        scratchU32[0] = bits;
        if (b === null) sc[i] = scratchF32[0];
        else b.push(scratchF32[0]);
        rd.pos += 5;
        continue;
      }
    } else if (t === Tag.F64 && !rd.exactFloats && rd.pos + 9 <= rd.end) {
      const v = srcView(rd).getFloat64(rd.pos + 1, true);
      if (v - v === 0) {
        if (b === null) sc[i] = v;
        else b.push(v);
        rd.pos += 9;
        continue;
      }
    } else if ((t === Tag.INT_POS || t === Tag.INT_NEG) && plainInts && rd.pos + 5 <= rd.end && (src[rd.pos + 1] & 15) === 0) {
      // integers of five to nine varint bytes, tested after the floats
      // so that arrays of floats pay nothing for them
      const v = wideInt(rd, t, rd.pos + 1, slot);
      if (typeof v === 'number') {
        if (b === null) sc[i] = v;
        else b.push(v);
        continue;
      }
      if (v !== undefined) {
        if (b === null) b = sc.slice(0, i);
        b.push(v);
        continue;
      }
    }
    if (b === null) b = i === 0 ? [] : sc.slice(0, i);
    b.push(read(rd, slot));
  }
  if (b === null) {
    // Two to four numbers: array() makes them. This function's loop gets
    // code compiled on stack replacement during a long array, which later
    // calls enter at the loop's back edge; V8 did not discard it when code
    // after the loop that had no type feedback then (the literals, for
    // sizes no earlier array had) deoptimized, and every such array
    // deoptimized again (thousands of times per decode of kinds/mesh
    // after other documents).
    if (n <= 4) return null;
    b = sc.slice(0, n);
    // a scratch array grown by a long array gives its memory back
    if (n > SCRATCH_KEEP) sc.length = 0;
  }
  return b;
}

/**
 * An array of two items whose first is an F64 (coordinates): two finite
 * F64s are read here, without numbers()' loop and its tests for the other
 * forms; anything else (NaN, infinities, exactFloats, short input, a
 * second item of another form) goes to numbers().
 */
function f64Pair(rd: DecoderState, slot: Slot): unknown[] {
  const p = rd.pos;
  if (p + 18 <= rd.end && rd.src[p + 9] === Tag.F64 && !rd.exactFloats) {
    const dv = srcView(rd);
    const x = dv.getFloat64(p + 1, true);
    const y = dv.getFloat64(p + 10, true);
    if (x - x === 0 && y - y === 0) {
      rd.pos = p + 18;
      return [x, y];
    }
  }
  const sc = rd.nums;
  return numbers(rd, 2, slot) ?? [sc[0], sc[1]];
}

function genericMap(rd: DecoderState, at: number, slot: Slot): unknown {
  // depth first: the tag's defect comes before its count's (SPEC 10, left to right)
  if (rd.depth >= rd.maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
  const n = length(rd, at, 0);
  if (2 * n > rd.end - rd.pos) fail('length_exceeds_input', at, 'count exceeds the remaining input');
  if (rd.depth >= RECURSION_DEPTH) return nestGenericMap(rd, n, at, slot, rd.depth);
  rd.depth++;
  const b = new MapBuilder(at);
  for (let i = 0; i < n; i++) {
    const t = rd.pos < rd.end ? rd.src[rd.pos] : -1;
    let k: unknown;
    if (exactKeyTag(t)) {
      const ef = rd.exactFloats;
      rd.exactFloats = true;
      try {
        k = read(rd, slot);
      } finally {
        rd.exactFloats = ef;
      }
    } else k = read(rd, slot);
    b.key(rd, t, k);
    b.vs.push(read(rd, slot));
  }
  rd.depth--;
  return b.result(rd);
}

/** Reads one item (containers below RECURSION_DEPTH recursively, deeper ones through decoder-deep.ts). */
export function read(rd: DecoderState, slot: Slot): unknown {
  const at = rd.pos;
  if (at >= rd.end) fail('truncated', at, 'input ends before an item');
  const t = rd.src[rd.pos++];
  if (t < 0x80) {
    if (t < Tag.STR0) {
      if (t >= rd.nstr) fail('bad_reference', at, `string reference ${t} beyond the table`);
      const s = rd.strs[t];
      slot.s = s;
      slot.sl = rd.lastLen = rd.lens[t];
      rd.lastStr = s;
      return s;
    }
    if (t < Tag.SHAPE0) {
      const n = t - Tag.STR0;
      if (n > rd.end - rd.pos) fail('truncated', at, 'input ends inside a string');
      const s = utf8(rd, n, at);
      if (n >= 2 && rd.nstr < MAX_STRINGS) {
        rd.strs[rd.nstr] = s;
        rd.lens[rd.nstr] = n;
        rd.nstr++;
      }
      slot.s = s;
      slot.sl = rd.lastLen = n;
      rd.lastStr = s;
      return s;
    }
    return shapeRef(rd, t - Tag.SHAPE0, at);
  }
  if (t < Tag.PFX0) {
    if (t < Tag.MAPDEF0) {
      const n = t - Tag.ARR0;
      if (rd.depth >= rd.maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
      if (n > rd.end - rd.pos) fail('length_exceeds_input', at, 'count exceeds the remaining input');
      return array(rd, n, slot);
    }
    if (t < Tag.INT0) return mapDef(rd, t - Tag.MAPDEF0, at);
    const v = t - INT_BASE;
    slot.ik = 1;
    slot.i = v;
    return rd.bigints ? BigInt(v) : v;
  }
  if (t < Tag.NULL) {
    if (t < Tag.DEC0) return prefixString(rd, t - Tag.PFX0, false, at, slot);
    return decimal(rd, t, at, slot);
  }
  switch (t) {
    case Tag.NULL:
      return null;
    case Tag.FALSE:
      return false;
    case Tag.TRUE:
      return true;
    case Tag.F32:
      return f32(rd, at);
    case Tag.F64:
      return f64(rd, at);
    case Tag.INT_POS:
      return intPos(rd, at, slot);
    case Tag.INT_NEG:
      return intNeg(rd, at, slot);
    case Tag.INT_DELTA:
      return intDelta(rd, at, slot);
    case Tag.DEC_X:
    case Tag.DEC_DELTA:
      return decimal(rd, t, at, slot);
    case Tag.BIGINT_POS:
    case Tag.BIGINT_NEG:
      return bigInteger(rd, t, at);
    // references beyond the first 64 strings (rows of many distinct
    // strings) without readString's second dispatch
    case Tag.REF8:
      return refString(rd, REF8_BASE + byte(rd, at), at, slot);
    case Tag.REF16:
      return ref16String(rd, at, slot);
    case Tag.STR_LONG:
    case Tag.REF24:
    case Tag.PFX_LONG:
    case Tag.TS_STR:
    case Tag.TS_Z0:
    case Tag.TS_Z3:
      return readString(rd, t, at, slot);
    case Tag.SHAPE8:
      return shapeRef(rd, SHAPE8_BASE + byte(rd, at), at);
    case Tag.SHAPE16: {
      if (rd.pos + 2 > rd.end) fail('truncated', at, 'input ends inside an item');
      const i = SHAPE16_BASE + (rd.src[rd.pos] | (rd.src[rd.pos + 1] << 8));
      rd.pos += 2;
      return shapeRef(rd, i, at);
    }
    case Tag.ARR_LONG:
      if (rd.depth >= rd.maxDepth) fail('depth_exceeded', at, 'nesting deeper than the limit');
      return array(rd, length(rd, at, 16), slot);
    case Tag.MAPDEF_LONG:
      return mapDef(rd, -1, at);
    case Tag.MAP_GEN:
      return genericMap(rd, at, slot);
    case Tag.BIN: {
      const n = length(rd, at, 0);
      const p = rd.pos;
      rd.pos += n;
      return rd.binaryViews ? rd.src.subarray(p, p + n) : rd.src.slice(p, p + n);
    }
    case Tag.EXT: {
      const type = varint(rd, at);
      if (type > MAX_EXT_TYPE) fail('invalid_value', at, 'extension type out of range');
      const n = length(rd, at, 0);
      const p = rd.pos;
      rd.pos += n;
      const data = rd.src.slice(p, p + n);
      rd.lastExtType = type;
      rd.lastExtData = data;
      if (type > EXT_APP_MAX) return readWellKnown(type, data, at);
      const ext = extByType.get(type);
      if (ext !== undefined && ext.read !== undefined) return ext.read(data);
      return new Ext(type, data);
    }
    case Tag.SYMBOL: {
      const sat = rd.pos;
      if (sat >= rd.end) fail('truncated', sat, 'input ends before an item');
      const st = rd.src[rd.pos++];
      if (!isStringTag(st)) fail('expected_string', sat, 'a symbol name must be a string');
      return Symbol.for(readString(rd, st, sat, slot));
    }
    case Tag.TIME:
      return timestamp(rd, at);
  }
  return fail('invalid_tag', at, `reserved tag 0x${t.toString(16)}`);
}
