// Diagnostic notation (spec/vectors/README.md), for JS values as this
// library decodes them: safe-integer numbers (not -0) and BigInts are
// integers, other numbers and Float64 are floats.

import { Ext, Float64, Timestamp, civilFromDays, extByClass, float64Bits, hexOf } from './common.js';
import { wellKnownDiag } from './well-known.js';

/** Shortest round-trip digits of a finite non-zero |d|: value = digits × 10^e. */
export function shortestDigits(d: number): { digits: string; e: number } {
  const t = String(Math.abs(d));
  const ei = t.indexOf('e');
  const mant = ei < 0 ? t : t.slice(0, ei);
  let e = ei < 0 ? 0 : +t.slice(ei + 1);
  const dot = mant.indexOf('.');
  let digits = dot < 0 ? mant : mant.slice(0, dot) + mant.slice(dot + 1);
  if (dot >= 0) e -= mant.length - dot - 1;
  digits = digits.replace(/^0+/, '');
  const stripped = digits.replace(/0+$/, '');
  e += digits.length - stripped.length;
  return { digits: stripped, e };
}

export function diagFloat(d: number, bits?: bigint): string {
  if (d !== d) {
    const b = bits ?? float64Bits(d);
    return b === 0x7ff8000000000000n ? 'NaN' : 'NaN(0x' + b.toString(16).padStart(16, '0') + ')';
  }
  if (d === Infinity) return 'Infinity';
  if (d === -Infinity) return '-Infinity';
  if (d === 0) return 1 / d < 0 ? '-0.0' : '0.0';
  const { digits, e } = shortestDigits(d);
  const point = digits.length + e;
  let text: string;
  if (point >= -4 && point <= 16) {
    if (point <= 0) text = '0.' + '0'.repeat(-point) + digits;
    else if (point >= digits.length) text = digits + '0'.repeat(point - digits.length) + '.0';
    else text = digits.slice(0, point) + '.' + digits.slice(point);
  } else {
    const exp = point - 1;
    text = digits[0] + '.' + (digits.slice(1) || '0') + 'e' + (exp >= 0 ? '+' : '-') + Math.abs(exp);
  }
  return (d < 0 ? '-' : '') + text;
}

export function diagString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c < 0x20 || c === 0x7f) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += s[i];
  }
  return out + '"';
}

const p2 = (n: number): string => (n < 10 ? '0' : '') + n;

export function diagTime(seconds: number, nanos: number, zone: string, offset: number): string {
  const local = seconds + (zone === 'offset' ? offset * 60 : 0);
  const days = Math.floor(local / 86400);
  const secs = local - days * 86400;
  const ymd = civilFromDays(days);
  const y = Math.floor(ymd / 10000);
  let s = String(y).padStart(4, '0') + '-' + p2(Math.floor(ymd / 100) % 100) + '-' + p2(ymd % 100);
  s += 'T' + p2(Math.floor(secs / 3600)) + ':' + p2(Math.floor(secs / 60) % 60) + ':' + p2(secs % 60);
  if (nanos) s += '.' + String(nanos).padStart(9, '0').replace(/0+$/, '');
  if (zone === 'utc') s += 'Z';
  else if (zone === 'offset') {
    const a = Math.abs(offset);
    s += (offset < 0 ? '-' : '+') + p2(Math.floor(a / 60)) + ':' + p2(a % 60);
  }
  return 'time("' + s + '")';
}

/** A value to render, as opposed to text to append (see diag). */
class Item {
  constructor(readonly v: unknown) {}
}

/**
 * Renders a value in the diagnostic notation. Containers are expanded from an
 * explicit stack of pieces (text, or items still to render), so a value
 * renders whatever its nesting.
 */
export function diag(v: unknown): string {
  let out = '';
  const todo: (string | Item)[] = [new Item(v)];
  while (todo.length > 0) {
    const next = todo.pop()!;
    if (typeof next === 'string') {
      out += next;
      continue;
    }
    const x = next.v;
    const pieces = containerPieces(x);
    if (pieces === null) out += diagLeaf(x);
    else for (let i = pieces.length - 1; i >= 0; i--) todo.push(pieces[i]);
  }
  return out;
}

/** The pieces of a container's rendering, in order; null for a value that is not a container. */
function containerPieces(v: unknown): (string | Item)[] | null {
  if (typeof v !== 'object' || v === null) return null;
  const pieces: (string | Item)[] = [];
  const list = (open: string, close: string, entries: [unknown, unknown][] | unknown[], pairs: boolean): (string | Item)[] => {
    pieces.push(open);
    entries.forEach((e, i) => {
      if (i > 0) pieces.push(', ');
      if (pairs) {
        const [k, x] = e as [unknown, unknown];
        pieces.push(new Item(k), ': ', new Item(x));
      } else pieces.push(new Item(e));
    });
    pieces.push(close);
    return pieces;
  };
  if (Array.isArray(v)) return list('[', ']', v, false);
  if (v instanceof Map) return list('{', '}', [...v], true);
  if (v instanceof Float64 || v instanceof Uint8Array || v instanceof Date || v instanceof Timestamp || v instanceof Ext) return null;
  const c = (v as object).constructor;
  const ext = typeof c === 'function' ? extByClass.get(c) : undefined;
  if (ext && ext.write) return null;
  return list('{', '}', Object.keys(v).map((k) => [k, (v as Record<string, unknown>)[k]]), true);
}

function diagLeaf(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return diagString(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'number':
      return Number.isSafeInteger(v) && !(v === 0 && 1 / v < 0) ? String(v) : diagFloat(v);
    case 'symbol':
      return 'sym(' + diagString(Symbol.keyFor(v) ?? v.description ?? '') + ')';
    case 'undefined':
      return 'undefined';
  }
  if (v === null) return 'null';
  if (v instanceof Float64) return diagFloat(v.value, v.bits);
  if (v instanceof Uint8Array) return "h'" + hexOf(v) + "'";
  if (v instanceof Date) {
    const ms = v.getTime();
    const s = Math.floor(ms / 1000);
    return diagTime(s, (ms - s * 1000) * 1e6, 'utc', 0);
  }
  if (v instanceof Timestamp) return diagTime(v.seconds, v.nanos, v.zone, v.offset);
  if (v instanceof Ext) return 'ext(' + v.type + ", h'" + hexOf(v.data) + "')";
  const known = wellKnownDiag(v as object);
  if (known !== null) return known;
  const c = (v as object).constructor;
  const ext = typeof c === 'function' ? extByClass.get(c) : undefined;
  return 'ext(' + ext!.type + ", h'" + hexOf(ext!.write!(v)) + "')";
}
