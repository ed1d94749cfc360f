// Timestamp-like strings (SPEC 6) as the encoder reads them: whether a
// string matches the grammar, and its variant, seconds, fraction and offset.

import { daysFromCivil, daysInMonth, MAX_SECONDS, MIN_SECONDS, TSV_DATE_ONLY, TSV_NUMERIC_OFFSET, TSV_SPACE } from './common.js';

/** A timestamp-like string's fields, as tsParse reads them. */
export class TsText {
  constructor(
    readonly variant: number,
    readonly sec: number,
    readonly frac: number,
    readonly off: number,
  ) {}
}

/** The fields of s if it is timestamp-like (SPEC 6), else null. */
export function tsText(s: string): TsText | null {
  return s.charCodeAt(4) === 45 && tsParse(s) ? new TsText(tsVariant, tsSec, tsFrac, tsOff) : null;
}

/** The fields of the last string tsParse accepted. */
export let tsVariant = 0;
export let tsSec = 0;
export let tsFrac = 0;
export let tsOff = 0;
let tsDateKey = -1;
let tsDateDays = 0;

function d2(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  if (a < 0 || a > 9 || b < 0 || b > 9) return -1;
  return a * 10 + b;
}

/** Parses a timestamp-like string (SPEC 6) into tsVariant/tsSec/tsFrac/tsOff. */
export function tsParse(s: string): boolean {
  const len = s.length;
  const y1 = d2(s, 0), y2 = d2(s, 2);
  if (y1 < 0 || y2 < 0 || s.charCodeAt(7) !== 45) return false;
  const y = y1 * 100 + y2;
  const mo = d2(s, 5), d = d2(s, 8);
  if (mo < 0 || d < 0) return false;
  // timestamps of one document share dates: the last date's day number is kept
  const key = y * 10000 + mo * 100 + d;
  let days: number;
  if (key === tsDateKey) days = tsDateDays;
  else {
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return false;
    days = daysFromCivil(y, mo, d);
    tsDateKey = key;
    tsDateDays = days;
  }
  if (len === 10) {
    tsVariant = TSV_DATE_ONLY;
    tsSec = days * 86400;
    tsFrac = 0;
    tsOff = 0;
    return true; // years 0001..9999 are all in range
  }
  if (len < 20) return false;
  const sep = s.charCodeAt(10);
  let variant = 0;
  if (sep === 32) variant = TSV_SPACE;
  else if (sep !== 84) return false;
  const hh = d2(s, 11), mi = d2(s, 14), ss = d2(s, 17);
  if (s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || hh < 0 || mi < 0 || ss < 0 || hh > 23 || mi > 59 || ss > 59) return false;
  let i = 19;
  let frac = 0;
  let digits = 0;
  if (s.charCodeAt(i) === 46) {
    i++;
    while (i < len) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      frac = frac * 10 + c;
      digits++;
      i++;
    }
    if (digits < 1 || digits > 9) return false;
  }
  variant |= digits;
  let offset = 0;
  const z = s.charCodeAt(i);
  if (z === 90) {
    if (i + 1 !== len) return false;
  } else if (z === 43 || z === 45) {
    if (i + 6 !== len || s.charCodeAt(i + 3) !== 58) return false;
    const oh = d2(s, i + 1), om = d2(s, i + 4);
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return false;
    offset = oh * 60 + om;
    if (z === 45) {
      if (offset === 0) return false;
      offset = -offset;
    }
    variant |= TSV_NUMERIC_OFFSET;
  } else return false;
  const sec = days * 86400 + hh * 3600 + mi * 60 + ss - offset * 60;
  if (sec < MIN_SECONDS || sec > MAX_SECONDS) return false;
  tsVariant = variant;
  tsSec = sec;
  tsFrac = frac;
  tsOff = offset;
  return true;
}
