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
  const h = days & (DATE_CACHE - 1);
  if (dcDays[h] === days) return dcText[h];
  const text = renderDate(days);
  dcDays[h] = days;
  dcText[h] = text;
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
  if (variant & TSV_DATE_ONLY) return dateText(Math.floor(local / 86400));
  // Timestamps of a document fall in few hours, which the fields of a record
  // take turns at: the characters of the date and hour of the last hours
  // rendered are cached by hour, and only minutes and seconds are new.
  const hour = Math.floor(local / 3600);
  const entry = hour & (HOUR_CACHE - 1);
  if (hourKey[entry] !== hour) newHour(local, hour, entry);
  const c = entry * 10;
  const rem = local - hour * 3600;
  const mm = (rem / 60) | 0;
  const ss = rem - mm * 60;
  const H = hourChars;
  if (variant === 0) {
    return fromCharCode(H[c], H[c + 1], H[c + 2], H[c + 3], 45, H[c + 4], H[c + 5], 45, H[c + 6], H[c + 7], 84, H[c + 8], H[c + 9], 58, TENS[mm], ONES[mm], 58, TENS[ss], ONES[ss], 90);
  }
  if (variant === 3) {
    const f1 = (frac / 100) | 0, f2 = frac - 100 * f1;
    return fromCharCode(H[c], H[c + 1], H[c + 2], H[c + 3], 45, H[c + 4], H[c + 5], 45, H[c + 6], H[c + 7], 84, H[c + 8], H[c + 9], 58, TENS[mm], ONES[mm], 58, TENS[ss], ONES[ss], 46, 48 + f1, TENS[f2], ONES[f2], 90);
  }
  // The other forms are written as bytes and made one flat string by one
  // native call: joining their parts with + built a tree of strings for each.
  const b = tsBytes;
  b[0] = H[c];
  b[1] = H[c + 1];
  b[2] = H[c + 2];
  b[3] = H[c + 3];
  b[4] = 45;
  b[5] = H[c + 4];
  b[6] = H[c + 5];
  b[7] = 45;
  b[8] = H[c + 6];
  b[9] = H[c + 7];
  b[10] = variant & TSV_SPACE ? 32 : 84;
  b[11] = H[c + 8];
  b[12] = H[c + 9];
  b[13] = 58;
  b[14] = TENS[mm];
  b[15] = ONES[mm];
  b[16] = 58;
  b[17] = TENS[ss];
  b[18] = ONES[ss];
  let n = 19;
  if (digits) {
    b[19] = 46;
    // frac < 10^9: int32 arithmetic, two digits per division
    let f = frac;
    let i = 19 + digits;
    if (digits & 1) {
      const q = (f / 10) | 0;
      b[i--] = 48 + f - q * 10;
      f = q;
    }
    for (; i > 19; i -= 2) {
      const q = (f / 100) | 0;
      const r = f - q * 100;
      b[i] = ONES[r];
      b[i - 1] = TENS[r];
      f = q;
    }
    n = 20 + digits;
  }
  if (variant & TSV_NUMERIC_OFFSET) {
    const a = offset < 0 ? -offset : offset;
    b[n] = offset < 0 ? 45 : 43;
    const oh = (a / 60) | 0;
    const om = a - oh * 60;
    b[n + 1] = TENS[oh];
    b[n + 2] = ONES[oh];
    b[n + 3] = 58;
    b[n + 4] = TENS[om];
    b[n + 5] = ONES[om];
    n += 6;
  } else b[n++] = 90;
  return latin1Of(b, n);
}

// The hour cache: for each entry, the hour (local seconds / 3600) it holds
// and the character codes of its date's digits (YYYYMMDD) and of its hour.
const HOUR_CACHE = 64;
const hourKey = new Float64Array(HOUR_CACHE).fill(NaN);
const hourChars = new Uint8Array(HOUR_CACHE * 10);

function newHour(local: number, hour: number, entry: number): void {
  const c = entry * 10;
  const days = Math.floor(local / 86400);
  const date = dateText(days);
  const hh = ((local - days * 86400) / 3600) | 0;
  const H = hourChars;
  H[c] = date.charCodeAt(0);
  H[c + 1] = date.charCodeAt(1);
  H[c + 2] = date.charCodeAt(2);
  H[c + 3] = date.charCodeAt(3);
  H[c + 4] = date.charCodeAt(5);
  H[c + 5] = date.charCodeAt(6);
  H[c + 6] = date.charCodeAt(8);
  H[c + 7] = date.charCodeAt(9);
  H[c + 8] = TENS[hh];
  H[c + 9] = ONES[hh];
  hourKey[entry] = hour;
}

// character codes of the two digits of 0..99
const TENS = new Uint8Array(100);
const ONES = new Uint8Array(100);
for (let i = 0; i < 100; i++) {
  TENS[i] = 48 + ((i / 10) | 0);
  ONES[i] = 48 + (i % 10);
}

// room for the longest form, YYYY-MM-DDThh:mm:ss.fffffffff+hh:mm
const tsBytes = new Uint8Array(40);

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
