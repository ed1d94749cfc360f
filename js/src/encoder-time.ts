// Timestamps (SPEC 6): TIME items for Dates and Timestamps, and the
// timestamp-string forms of strings with the timestamp grammar; both are
// deltas from the timestamp register.

import { MAX_OFFSET, MAX_SECONDS, MIN_SECONDS, TSV_NUMERIC_OFFSET, Tag } from './common.js';
import type { Timestamp } from './common.js';
import { fail } from './encoder-state.js';
import type { EncoderState } from './encoder-state.js';
import { ensure, writeVarint, zz } from './encoder-output.js';
import type { TsText } from './timestamp-text.js';

/** Writes a timestamp-like string, of fields t, as TS_STR, TS_Z0 or TS_Z3 (capacity ensured). */
export function writeTsString(st: EncoderState, t: TsText): void {
  const v = t.variant;
  if (v === 0) st.buf[st.pos++] = Tag.TS_Z0;
  else if (v === 3) st.buf[st.pos++] = Tag.TS_Z3;
  else {
    st.buf[st.pos++] = Tag.TS_STR;
    st.buf[st.pos++] = v;
  }
  writeVarint(st, zz(t.sec - st.lastTs));
  st.lastTs = t.sec;
  if (v & 0x0f) writeVarint(st, t.frac);
  if (v & TSV_NUMERIC_OFFSET) writeVarint(st, zz(t.off));
}

function writeTime(st: EncoderState, value: unknown, seconds: number, nanos: number, zone: number, offset: number): void {
  if (!Number.isInteger(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) fail(st, value, 'timestamp out of range (years 0001-9999)');
  if (!Number.isInteger(nanos) || nanos < 0 || nanos > 999999999) fail(st, value, 'timestamp nanoseconds out of range');
  if (zone === 1) {
    if (!Number.isInteger(offset) || offset < -MAX_OFFSET || offset > MAX_OFFSET) fail(st, value, 'timestamp offset out of range');
    const local = seconds + offset * 60;
    if (local < MIN_SECONDS || local > MAX_SECONDS) fail(st, value, 'timestamp local time out of range');
  }
  ensure(st, 32);
  st.buf[st.pos++] = Tag.TIME;
  st.buf[st.pos++] = (nanos ? 1 : 0) | (zone << 1);
  writeVarint(st, zz(seconds - st.lastTs));
  st.lastTs = seconds;
  if (nanos) writeVarint(st, nanos);
  if (zone === 1) writeVarint(st, zz(offset));
}

export function writeDate(st: EncoderState, d: Date): void {
  const ms = d.getTime();
  if (ms !== ms) fail(st, d, 'invalid Date');
  const s = Math.floor(ms / 1000);
  writeTime(st, d, s, (ms - s * 1000) * 1000000, 0, 0);
}

export function writeTimestamp(st: EncoderState, t: Timestamp): void {
  const zone = t.zone === 'utc' ? 0 : t.zone === 'offset' ? 1 : t.zone === 'floating' ? 2 : -1;
  if (zone < 0) fail(st, t, `unknown timestamp zone ${String(t.zone)}`);
  writeTime(st, t, t.seconds, t.nanos, zone, t.offset);
}

