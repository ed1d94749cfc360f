// String items (SPEC 5.3, 7): inline strings, references to the string
// table, prefix forms on the slot's or the last string, and timestamp
// strings; each new string of two or more bytes is appended to the table.

import { MAX_STRINGS, REF8_BASE, REF16_BASE, REF24_BASE, Tag } from './common.js';
import { fail } from './decoder-state.js';
import type { DecoderState, Slot } from './decoder-state.js';
import { byte, length } from './decoder-input.js';
import { utf8 } from './decoder-utf8.js';
import { tsString } from './decoder-time.js';

export function isStringTag(t: number): boolean {
  return t < Tag.SHAPE0 || (t >= Tag.PFX0 && t < Tag.DEC0) || (t >= Tag.STR_LONG && t <= Tag.REF24) || t === Tag.PFX_LONG || (t >= Tag.TS_STR && t <= Tag.TS_Z3);
}

function addString(rd: DecoderState, s: string, n: number): void {
  if (n >= 2 && rd.nstr < MAX_STRINGS) {
    rd.strs[rd.nstr] = s;
    rd.lens[rd.nstr] = n;
    rd.nstr++;
  }
}

/** Decodes a string item whose tag t (at offset at) has been consumed. */
export function readString(rd: DecoderState, t: number, at: number, slot: Slot): string {
  let s: string;
  let n: number;
  if (t < Tag.STR0) return refString(rd, t, at, slot);
  if (t < Tag.SHAPE0) {
    n = t - Tag.STR0;
    if (n > rd.end - rd.pos) fail('truncated', at, 'input ends inside a string');
    s = utf8(rd, n, at);
  } else if (t >= Tag.PFX0 && t < Tag.DEC0) {
    return prefixString(rd, t - Tag.PFX0, false, at, slot);
  } else {
    switch (t) {
      case Tag.STR_LONG:
        n = length(rd, at, 32);
        s = utf8(rd, n, at);
        break;
      case Tag.REF8:
        return refString(rd, REF8_BASE + byte(rd, at), at, slot);
      case Tag.REF16:
        return ref16String(rd, at, slot);
      case Tag.REF24: {
        if (rd.pos + 3 > rd.end) fail('truncated', at, 'input ends inside an item');
        const i = REF24_BASE + (rd.src[rd.pos] | (rd.src[rd.pos + 1] << 8) | (rd.src[rd.pos + 2] << 16));
        rd.pos += 3;
        return refString(rd, i, at, slot);
      }
      case Tag.PFX_LONG:
        return prefixString(rd, -1, true, at, slot);
      default:
        s = tsString(rd, t, at);
        n = s.length;
    }
  }
  addString(rd, s, n);
  slot.s = s;
  slot.sl = n;
  rd.lastStr = s;
  rd.lastLen = n;
  return s;
}

/** The string of a REF16 item whose tag (at `at`) has been read. */
export function ref16String(rd: DecoderState, at: number, slot: Slot): string {
  if (rd.pos + 2 > rd.end) fail('truncated', at, 'input ends inside an item');
  const i = REF16_BASE + (rd.src[rd.pos] | (rd.src[rd.pos + 1] << 8));
  rd.pos += 2;
  return refString(rd, i, at, slot);
}

export function refString(rd: DecoderState, i: number, at: number, slot: Slot): string {
  if (i >= rd.nstr) fail('bad_reference', at, `string reference ${i} beyond the table`);
  const s = rd.strs[i];
  const n = rd.lens[i];
  slot.s = s;
  slot.sl = n;
  rd.lastStr = s;
  rd.lastLen = n;
  return s;
}

export function prefixString(rd: DecoderState, n: number, long: boolean, at: number, slot: Slot): string {
  const lb = byte(rd, at);
  let base: string | null, baseLen: number;
  if (lb & 0x80) {
    base = rd.lastStr;
    baseLen = rd.lastLen;
  } else {
    base = slot.s;
    baseLen = slot.sl;
  }
  const L = lb & 0x7f;
  if (long) n = length(rd, at, 16);
  if (base === null || L === 0 || L > baseLen) fail('bad_reference', at, 'prefix does not fit its base string');
  let head: string;
  if (baseLen === base.length) {
    // A string made here is a tree of its head and tail: slicing it again
    // would first copy it into one flat string. The head it was made from is
    // flat, and serves the next prefix of the same string that fits in it.
    if (L === baseLen) head = base;
    else if (base === slot.ps && L <= slot.phl) head = L === slot.phl ? slot.ph : slot.ph.slice(0, L);
    else head = base.slice(0, L);
  } else head = headBytes(base, L, at);
  if (n > rd.end - rd.pos) fail('truncated', at, 'input ends inside an item');
  const s = head + utf8(rd, n, at);
  const total = L + n;
  if (baseLen === base.length) {
    slot.ps = s;
    slot.ph = head;
    slot.phl = L;
  }
  addString(rd, s, total);
  slot.s = s;
  slot.sl = total;
  rd.lastStr = s;
  rd.lastLen = total;
  return s;
}

/** The first L UTF-8 bytes of a non-ASCII string, which must end on a character boundary. */
function headBytes(base: string, L: number, at: number): string {
  let b = 0;
  for (let i = 0; i < base.length; i++) {
    const c = base.charCodeAt(i);
    let w: number;
    let units = 1;
    if (c < 0x80) w = 1;
    else if (c < 0x800) w = 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      w = 4;
      units = 2;
    } else w = 3;
    if (b + w > L) break;
    b += w;
    i += units - 1;
    if (b === L) return base.slice(0, i + 1);
  }
  return fail('bad_reference', at, 'prefix splits a UTF-8 sequence of its base');
}
