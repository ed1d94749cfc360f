// Strings (SPEC 7): the one decision of a string's form, used for values,
// generic-map keys and shape definitions alike: a reference when the string
// is in the table, else a timestamp string when it has that grammar, else a
// prefix form when strictly smaller than the inline one, else inline.

import { MAX_STRINGS, Tag } from './common.js';
import { StrEntry } from './encoder-state.js';
import type { EncoderState, ESlot, EShape } from './encoder-state.js';
import { ensure, vlen, writeRef, writeVarint } from './encoder-output.js';
import { utf8At, utf8Long, commonPrefix, padded, copyBytes } from './encoder-utf8.js';
import { tsText } from './timestamp-text.js';
import { writeTsString } from './encoder-time.js';

/**
 * The entry of a string of two or more UTF-8 bytes (created if new), by a
 * Map lookup keyed by the string itself, whose hash V8 keeps in the string.
 * A direct-mapped front cache indexed by length and three characters missed
 * on rows of distinct values of one form (ids, dates, e-mail addresses),
 * whose equal lengths made each miss a full comparison of the texts.
 */
export function entryOf(st: EncoderState, s: string): StrEntry {
  return st.entries.get(s) ?? newEntry(st, s);
}

function newEntry(st: EncoderState, s: string): StrEntry {
  const e = new StrEntry();
  // once the table is full no string enters it: do not grow the map
  if (st.nstr < MAX_STRINGS) st.entries.set(s, e);
  return e;
}

/** The lowest index of the entry's string in the current table, or -1. */
export function tableIndex(st: EncoderState, e: StrEntry): number {
  return e.dict >= 0 ? e.dict : e.gen === st.gen ? e.idx : -1;
}

/**
 * Appends a string of >= 2 bytes that is not in the table to it. A string in
 * the table is always written as a reference: every index below MAX_STRINGS
 * has one of 1 to 3 bytes, never longer than the string inline (SPEC 7).
 */
export function addEntry(st: EncoderState, e: StrEntry): void {
  if (st.nstr < MAX_STRINGS) {
    e.gen = st.gen;
    e.idx = st.nstr;
    st.nstr++;
  }
}

/** The string (first UTF-16 unit c0, -1 when empty) becomes the slot's str register and the last string. */
function noteString(st: EncoderState, s: string, c0: number, slot: ESlot): void {
  slot.s = s;
  slot.c0 = c0;
  st.lastStr = s;
  st.lastC0 = c0;
}

/**
 * The longer common prefix of s (first UTF-16 unit c0) with the slot's str
 * register and with the last string (the last string only when longer:
 * SPEC 7's tie rule): its length in UTF-8 bytes in the low 8 bits, in
 * characters in the next 8, and 0x10000 for the last string. Callers ask
 * only when c0 is a register's first unit: any other string has no prefix.
 */
function prefixCandidate(st: EncoderState, s: string, c0: number, slot: ESlot): number {
  if (c0 < 0) return 0;
  const ss = slot.s;
  let r = 0;
  if (slot.c0 === c0) r = commonPrefix(s, ss!);
  if (st.lastC0 === c0) {
    const ls = st.lastStr!;
    // Both prefixes are prefixes of s, whose UTF-8 length grows with each
    // character: the last string has more bytes in common only with more
    // characters, so it must match s at the character where r ends.
    const k = (r >> 8) & 0xff;
    if (ls !== ss && (k === 0 || (k < ls.length && k < s.length && ls.charCodeAt(k) === s.charCodeAt(k)))) {
      const r2 = commonPrefix(s, ls);
      if ((r2 & 0xff) > (r & 0xff)) r = r2 | 0x10000;
    }
  }
  return r;
}

/**
 * Writes a string that is not referenced (the caller notes it in the
 * registers): the prefix form with the candidate `cand` (prefixCandidate's
 * result; 0: none) if strictly smaller, else inline. Its UTF-8 bytes are
 * src[b0, b0 + bl) when known (b0 a multiple of 4, srcW the same buffer as
 * words), else src is null. The bytes are written where the form puts
 * them: known bytes after the form is decided, others after a head sized
 * for one byte per character (the length of ASCII text), moved only when
 * the text is longer in UTF-8.
 */
function writeNew(st: EncoderState, s: string, e: StrEntry | null, cand: number, src: Uint8Array | null, srcW: Uint32Array | null, b0: number, bl: number): void {
  const p0 = st.pos;
  const L = cand & 0xff;
  const flag = cand > 0xffff ? 0x80 : 0;
  if (src !== null) {
    if (L > 0 && prefixHead(bl - L) - L < inlineHead(bl)) {
      putPrefixHead(st, p0, bl - L, flag | L);
      st.pos += copyBytes(st, src, srcW!, b0, bl, L);
    } else {
      putInlineHead(st, p0, bl);
      st.pos += copyBytes(st, src, srcW!, b0, bl, 0);
    }
    if (e !== null) addEntry(st, e);
    return;
  }
  const len = s.length;
  if (L > 0) {
    const Lc = (cand >> 8) & 0xff;
    const sc = len - Lc;
    const ph = prefixHead(sc);
    st.pos = p0 + ph;
    const suf = sc < 64 ? utf8At(st, s, Lc) : utf8Long(st, s, Lc);
    const need = prefixHead(suf);
    // strictly smaller than inline: need + suf < inlineHead(L + suf) + L + suf
    if (need - L < inlineHead(L + suf)) {
      if (need !== ph) st.buf.copyWithin(p0 + need, p0 + ph, p0 + ph + suf);
      putPrefixHead(st, p0, suf, flag | L);
      st.pos = p0 + need + suf;
      if (e !== null) addEntry(st, e);
      return;
    }
  }
  const ih = inlineHead(len);
  st.pos = p0 + ih;
  const byteLen = len < 64 ? utf8At(st, s, 0) : utf8Long(st, s, 0);
  const need = inlineHead(byteLen);
  if (need !== ih) st.buf.copyWithin(p0 + need, p0 + ih, p0 + ih + byteLen);
  putInlineHead(st, p0, byteLen);
  st.pos = p0 + need + byteLen;
  if (e !== null) addEntry(st, e);
}

/** The bytes of an inline string's tag and length, for n bytes of UTF-8. */
function inlineHead(n: number): number {
  return n < 32 ? 1 : 1 + vlen(n - 32);
}

/** The bytes of a prefix form's tag, prefix byte and length, for a suffix of n bytes. */
function prefixHead(n: number): number {
  return n < 16 ? 2 : 2 + vlen(n - 16);
}

/** Writes an inline string's tag and length at p0; pos is then past them. */
function putInlineHead(st: EncoderState, p0: number, n: number): void {
  if (n < 32) {
    st.buf[p0] = Tag.STR0 + n;
    st.pos = p0 + 1;
  } else {
    st.buf[p0] = Tag.STR_LONG;
    st.pos = p0 + 1;
    writeVarint(st, n - 32);
  }
}

/** Writes a prefix form's tag, prefix byte pb and suffix length (n bytes) at p0; pos is then past them. */
function putPrefixHead(st: EncoderState, p0: number, n: number, pb: number): void {
  st.buf[p0 + 1] = pb;
  st.pos = p0 + 2;
  if (n < 16) st.buf[p0] = Tag.PFX0 + n;
  else {
    st.buf[p0] = Tag.PFX_LONG;
    writeVarint(st, n - 16);
  }
}

/**
 * Keeps the UTF-8 bytes of e's string s in the byte arena (up to 256 bytes;
 * longer ones are marked never kept), encoded at pos, where nothing is
 * written yet (capacity ensured).
 */
function keepText(st: EncoderState, e: StrEntry, s: string): void {
  const n = s.length < 64 ? utf8At(st, s, 0) : utf8Long(st, s, 0);
  if (n <= 256) keepBytes(st, e, st.pos, n);
  else e.boff = -2;
}

/** Copies the n bytes at p of the output into the byte arena as e's. */
function keepBytes(st: EncoderState, e: StrEntry, p: number, n: number): void {
  let a = st.arena;
  const at = st.arenaPos;
  if (at + n + 4 > a.length) {
    const b = new Uint8Array(Math.max(a.length * 2, at + n + 4));
    b.set(a.subarray(0, at));
    st.arena = a = b;
    st.arenaW = new Uint32Array(b.buffer);
  }
  const buf = st.buf;
  for (let i = 0; i < n; i++) a[at + i] = buf[p + i];
  e.boff = at;
  e.blen = n;
  st.arenaPos = (at + n + 3) & ~3;
}

/** Writes a string value or key in `slot`. */
export function writeString(st: EncoderState, s: string, slot: ESlot): void {
  const len = s.length;
  let e: StrEntry | null = null;
  ensure(st, len * 3 + 16);
  const c0 = len > 0 ? s.charCodeAt(0) : -1;
  if (len >= 2 || c0 >= 0x80) {
    e = st.entries.get(s) ?? newEntry(st, s);
    const idx = tableIndex(st, e);
    if (idx >= 0) {
      writeRef(st, idx);
      noteString(st, s, c0, slot);
      return;
    }
    if (len >= 10 && len <= 35) {
      let t = e.ts;
      if (t === undefined) t = e.ts = tsText(s);
      if (t !== null) {
        writeTsString(st, t);
        addEntry(st, e);
        noteString(st, s, c0, slot);
        return;
      }
    }
  }
  const cand = c0 === slot.c0 || c0 === st.lastC0 ? prefixCandidate(st, s, c0, slot) : 0;
  // written in an earlier buffer too: from now on its bytes are copied, whatever the form
  if (e !== null && e.boff === -1 && e.gen !== -1) keepText(st, e, s);
  if (e !== null && e.boff >= 0) writeNew(st, s, e, cand, st.arena, st.arenaW, e.boff, e.blen);
  else writeNew(st, s, e, cand, null, null, 0, 0);
  noteString(st, s, c0, slot);
}

/**
 * Writes the keys of a MAPDEF whose shape is `plain` (string keys, none
 * timestamp-like) with writeString's decision, from the shape's cached
 * entries, bytes and prefix lengths.
 */
export function writePlainKeys(st: EncoderState, sh: EShape): void {
  if (sh.kepoch !== st.epoch) {
    const keys = sh.keys as string[];
    const kent: (StrEntry | null)[] = [];
    for (const k of keys) kent.push(k.length >= 2 || (k.length === 1 && k.charCodeAt(0) >= 0x80) ? entryOf(st, k) : null);
    sh.kent = kent;
    sh.kepoch = st.epoch;
  }
  const n = sh.n;
  if (n === 0) return;
  writeKey(st, sh, 0);
  if (n === 1) return;
  // Keys 1.. depend only on the key before them when none is in the table:
  // their encoding is then the same block every time.
  const kent = sh.kent!;
  let absent = true;
  for (let i = 1; i < n; i++) {
    const e = kent[i];
    if (e !== null && tableIndex(st, e) >= 0) {
      absent = false;
      break;
    }
  }
  const blk = sh.kblock;
  if (absent && blk !== null) {
    ensure(st, blk.length + 8);
    st.pos += copyBytes(st, blk, sh.kblockw!, 0, blk.length, 0);
    for (let i = 1; i < n; i++) {
      const e = kent[i];
      if (e !== null) addEntry(st, e);
    }
    noteString(st, sh.keys[n - 1] as string, sh.kc0![n - 1], st.keySlot);
    return;
  }
  const p = st.pos;
  for (let i = 1; i < n; i++) writeKey(st, sh, i);
  if (absent) {
    sh.kblock = padded(st.buf.subarray(p, st.pos));
    sh.kblockw = new Uint32Array(sh.kblock.buffer);
  }
}

function writeKey(st: EncoderState, sh: EShape, i: number): void {
  const s = (sh.keys as string[])[i];
  const e = sh.kent![i];
  const bytes = sh.kbytes![i];
  const byteLen = bytes.length;
  const c0 = sh.kc0![i];
  const slot = st.keySlot;
  ensure(st, byteLen + 16);
  if (e !== null) {
    const idx = tableIndex(st, e);
    if (idx >= 0) {
      writeRef(st, idx);
      noteString(st, s, c0, slot);
      return;
    }
  }
  // key i > 0: both registers hold key i-1, and the candidate is its prefix with it, in bytes (known bytes need no character count)
  const cand = i > 0 ? sh.kpfx![i] : c0 === slot.c0 || c0 === st.lastC0 ? prefixCandidate(st, s, c0, slot) : 0;
  writeNew(st, s, e, cand, bytes, sh.kwords![i], 0, byteLen);
  noteString(st, s, c0, slot);
}
