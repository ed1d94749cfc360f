// Timestamps (SPEC 6): TIME items as Dates or Timestamps, and timestamp
// strings rendered back to their text; both are deltas from the timestamp register.

import { Timestamp, civilFromDays, MIN_SECONDS, MAX_SECONDS, MAX_OFFSET, TSV_DATE_ONLY, TSV_NUMERIC_OFFSET, TSV_SPACE, Tag } from './common.js';
import type { Zone } from './common.js';
import { fail } from './decoder-state.js';
import type { DecoderState } from './decoder-state.js';
import { TWO53, POW10, byte, varint, unzigzag } from './decoder-input.js';
import { latin1Of } from './decoder-utf8.js';

const fromCharCode = String.fromCharCode;

const D2: string[] = [];
for (let i = 0; i < 100; i++) D2.push(i < 10 ? '0' + i : '' + i);

let cachedDay = NaN;
let cachedDate = '';

// character codes of the cached date "YYYY-MM-DD"
let dc0 = 0, dc1 = 0, dc2 = 0, dc3 = 0, dc5 = 0, dc6 = 0, dc8 = 0, dc9 = 0;

function tsSeconds(rd: DecoderState, at: number): number {
  const z = varint(rd, at);
  if (z >= TWO53) fail('invalid_value', at, 'timestamp out of range');
  const s = rd.lastTs + unzigzag(z);
  if (s < MIN_SECONDS || s > MAX_SECONDS) fail('invalid_value', at, 'timestamp out of range');
  rd.lastTs = s;
  return s;
}

const DATE_CACHE = 64;
const dcDays = new Float64Array(DATE_CACHE).fill(NaN);
const dcText: string[] = new Array(DATE_CACHE).fill('');

function dateText(days: number): string {
  if (days === cachedDay) return cachedDate;
  const h = days & (DATE_CACHE - 1);
  if (dcDays[h] === days) return setDate(days, dcText[h]);
  const text = renderDate(days);
  dcDays[h] = days;
  dcText[h] = text;
  return setDate(days, text);
}

function setDate(days: number, text: string): string {
  cachedDay = days;
  cachedDate = text;
  dc0 = text.charCodeAt(0);
  dc1 = text.charCodeAt(1);
  dc2 = text.charCodeAt(2);
  dc3 = text.charCodeAt(3);
  dc5 = text.charCodeAt(5);
  dc6 = text.charCodeAt(6);
  dc8 = text.charCodeAt(8);
  dc9 = text.charCodeAt(9);
  return text;
}

function renderDate(days: number): string {
  const ymd = civilFromDays(days);
  const y = Math.floor(ymd / 10000);
  const md = ymd - y * 10000;
  return (y < 1000 ? ('000' + y).slice(-4) : '' + y) + '-' + D2[Math.floor(md / 100)] + '-' + D2[md % 100];
}

export function tsString(rd: DecoderState, t: number, at: number): string {
  let variant: number;
  if (t === Tag.TS_Z0) variant = 0;
  else if (t === Tag.TS_Z3) variant = 3;
  else {
    variant = byte(rd, at);
    if (variant & 0x80 || (variant & 0x0f) > 9 || variant === 0 || variant === 3 || (variant & TSV_DATE_ONLY && variant !== TSV_DATE_ONLY)) {
      fail('invalid_value', at, 'invalid timestamp-string variant');
    }
  }
  const seconds = tsSeconds(rd, at);
  const digits = variant & 0x0f;
  let frac = 0;
  if (digits) {
    frac = varint(rd, at);
    if (frac >= POW10[digits]) fail('invalid_value', at, 'fraction has too many digits');
  }
  let offset = 0;
  if (variant & TSV_NUMERIC_OFFSET) {
    const z = varint(rd, at);
    offset = z >= TWO53 ? MAX_OFFSET + 1 : unzigzag(z);
    if (offset < -MAX_OFFSET || offset > MAX_OFFSET) fail('invalid_value', at, 'offset out of range');
  }
  if (variant & TSV_DATE_ONLY && seconds % 86400 !== 0) fail('invalid_value', at, 'date is not at midnight');
  const local = seconds + offset * 60;
  if (local < MIN_SECONDS || local > MAX_SECONDS) fail('invalid_value', at, 'local time out of range');
  const days = Math.floor(local / 86400);
  const date = dateText(days);
  if (variant & TSV_DATE_ONLY) return date;
  const secs = local - days * 86400;
  const hh = Math.floor(secs / 3600);
  const rem = secs - hh * 3600;
  const mm = Math.floor(rem / 60);
  const ss = rem - mm * 60;
  if (variant === 0 || variant === 3) {
    // the common forms in one flat string: YYYY-MM-DDThh:mm:ss[.fff]Z
    const h1 = (hh / 10) | 0, m1 = (mm / 10) | 0, s1 = (ss / 10) | 0;
    if (variant === 0) {
      return fromCharCode(dc0, dc1, dc2, dc3, 45, dc5, dc6, 45, dc8, dc9, 84, 48 + h1, 48 + hh - 10 * h1, 58, 48 + m1, 48 + mm - 10 * m1, 58, 48 + s1, 48 + ss - 10 * s1, 90);
    }
    const f1 = (frac / 100) | 0, f2 = ((frac / 10) | 0) % 10;
    return fromCharCode(dc0, dc1, dc2, dc3, 45, dc5, dc6, 45, dc8, dc9, 84, 48 + h1, 48 + hh - 10 * h1, 58, 48 + m1, 48 + mm - 10 * m1, 58, 48 + s1, 48 + ss - 10 * s1, 46, 48 + f1, 48 + f2, 48 + (frac % 10), 90);
  }
  // The other forms are written as bytes and made one flat string by one
  // native call: joining their parts with + built a tree of strings for each.
  const b = tsBytes;
  b[0] = dc0;
  b[1] = dc1;
  b[2] = dc2;
  b[3] = dc3;
  b[4] = 45;
  b[5] = dc5;
  b[6] = dc6;
  b[7] = 45;
  b[8] = dc8;
  b[9] = dc9;
  b[10] = variant & TSV_SPACE ? 32 : 84;
  twoDigits(b, 11, hh);
  b[13] = 58;
  twoDigits(b, 14, mm);
  b[16] = 58;
  twoDigits(b, 17, ss);
  let n = 19;
  if (digits) {
    b[19] = 46;
    let f = frac;
    for (let i = 19 + digits; i > 19; i--) {
      const q = Math.floor(f / 10);
      b[i] = 48 + f - q * 10;
      f = q;
    }
    n = 20 + digits;
  }
  if (variant & TSV_NUMERIC_OFFSET) {
    const a = offset < 0 ? -offset : offset;
    b[n] = offset < 0 ? 45 : 43;
    const oh = Math.floor(a / 60);
    twoDigits(b, n + 1, oh);
    b[n + 3] = 58;
    twoDigits(b, n + 4, a - oh * 60);
    n += 6;
  } else b[n++] = 90;
  return latin1Of(b, n);
}

// room for the longest form, YYYY-MM-DDThh:mm:ss.fffffffff+hh:mm
const tsBytes = new Uint8Array(40);

function twoDigits(b: Uint8Array, at: number, v: number): void {
  const t = (v / 10) | 0;
  b[at] = 48 + t;
  b[at + 1] = 48 + v - 10 * t;
}

const ZONES: Zone[] = ['utc', 'offset', 'floating'];

export function timestamp(rd: DecoderState, at: number): Date | Timestamp {
  const flags = byte(rd, at);
  const zone = flags >> 1;
  if (zone > 2) fail('invalid_value', at, 'invalid timestamp flags');
  const seconds = tsSeconds(rd, at);
  let nanos = 0;
  if (flags & 1) {
    nanos = varint(rd, at);
    if (nanos < 1 || nanos > 999999999) fail('invalid_value', at, 'nanoseconds out of range');
  }
  let offset = 0;
  if (zone === 1) {
    const z = varint(rd, at);
    offset = z >= TWO53 ? MAX_OFFSET + 1 : unzigzag(z);
    if (offset < -MAX_OFFSET || offset > MAX_OFFSET) fail('invalid_value', at, 'offset out of range');
    const local = seconds + offset * 60;
    if (local < MIN_SECONDS || local > MAX_SECONDS) fail('invalid_value', at, 'local time out of range');
  }
  if (zone === 0 && !rd.datesAlways && nanos % 1000000 === 0) return new Date(seconds * 1000 + nanos / 1000000);
  return new Timestamp(seconds, nanos, ZONES[zone], offset);
}
