// Shared helpers for the test suite: vector loading, extended JSON (xvalue)
// conversion, an exact JSON reader, and a normalized "model" of Tersa values
// used to compare decoded JS values with expected ones.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import * as tersa from '../dist/esm/index.js';

const { Float64, Timestamp, Ext, Dictionary, Decimal, CalendarDate, UUID, TimeOfDay } = tersa;

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '..', '..');
export const VECTORS = path.join(ROOT, 'spec', 'vectors');

export function hexToBytes(h) {
  if (h.length % 2) throw new Error('odd hex');
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(i * 2, 2), 16);
  return out;
}

export function bytesToHex(b) {
  let s = '';
  for (let i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
  return s;
}

/** Reads and parses a JSON vector file; throws if the vectors folder is missing or empty. */
export function vectorFiles(sub) {
  const dir = path.join(VECTORS, sub);
  if (!fs.existsSync(dir)) throw new Error(`vectors folder missing: ${dir}`);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  if (files.length === 0) throw new Error(`vectors folder empty: ${dir}`);
  return files.map((f) => ({ file: f, ...JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) }));
}

// ---------------------------------------------------------------------------
// Floats and bits
// ---------------------------------------------------------------------------

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

export function bitsOf(d) {
  f64[0] = d;
  return u64[0];
}

export function fromBits(b) {
  u64[0] = b;
  return f64[0];
}

/** Parses the float text of the diagnostic notation into a Float64 (exact bits). */
export function parseDiagFloat(s) {
  if (s === 'NaN') return Float64.fromBits(0x7ff8000000000000n);
  if (s.startsWith('NaN(0x')) return Float64.fromBits(BigInt('0x' + s.slice(6, -1)));
  if (s === 'Infinity') return new Float64(Infinity);
  if (s === '-Infinity') return new Float64(-Infinity);
  return new Float64(Number(s));
}

// ---------------------------------------------------------------------------
// JS values -> extended JSON (for the reference encoder)
// ---------------------------------------------------------------------------

/** A JS value as extended JSON (spec/vectors/README.md), for the reference encoder. */
export function toX(v) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isSafeInteger(v) && !Object.is(v, -0) ? v : { $float: tersa.diag(v) };
    case 'bigint':
      return { $int: v.toString() };
    case 'symbol':
      return { $symbol: Symbol.keyFor(v) };
  }
  if (v === null) return null;
  if (Array.isArray(v)) return v.map(toX);
  if (v instanceof Float64) return { $float: tersa.diag(v) };
  if (v instanceof Uint8Array) return { $binary: bytesToHex(v) };
  if (v instanceof Date) {
    const ms = v.getTime();
    const s = Math.floor(ms / 1000);
    return { $time: { seconds: s, nanos: (ms - s * 1000) * 1e6, zone: 'utc' } };
  }
  if (v instanceof Timestamp) return { $time: { seconds: v.seconds, nanos: v.nanos, zone: v.zone, ...(v.zone === 'offset' ? { offset: v.offset } : {}) } };
  if (v instanceof Ext) return { $ext: { type: v.type, data: bytesToHex(v.data) } };
  if (v instanceof Decimal) return { $decimal: v.toString() };
  if (v instanceof CalendarDate) return { $date: v.toString() };
  if (v instanceof UUID) return { $uuid: v.toString() };
  if (v instanceof TimeOfDay) return { $time_of_day: v.toString() };
  if (v instanceof Map) return { $map: [...v].map(([k, x]) => [toX(k), toX(x)]) };
  return { $map: Object.keys(v).map((k) => [k, toX(v[k])]) };
}

// ---------------------------------------------------------------------------
// Extended JSON -> JS values (for encoding)
// ---------------------------------------------------------------------------

function defineOwn(o, k, v) {
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
}

const INT_LIKE = /^-?(0|[1-9][0-9]*)$/;

/** An xvalue as the JS value to encode (floats as Float64, so 2100.0 stays a float). */
export function fromX(j) {
  if (j === null || typeof j === 'boolean' || typeof j === 'string') return j;
  if (typeof j === 'number') {
    if (!Number.isInteger(j)) throw new Error('plain JSON float in a vector');
    return j;
  }
  if (Array.isArray(j)) return j.map(fromX);
  const keys = Object.keys(j);
  if (keys.length === 1 && keys[0].startsWith('$')) {
    const x = j[keys[0]];
    switch (keys[0]) {
      case '$int':
        return BigInt(x);
      case '$float':
        return parseDiagFloat(x);
      case '$symbol':
        return Symbol.for(x);
      case '$binary':
        return hexToBytes(x);
      case '$time':
        return new Timestamp(x.seconds, x.nanos, x.zone, x.offset ?? 0);
      case '$ext':
        return new Ext(x.type, hexToBytes(x.data));
      case '$decimal':
        return Decimal.parse(x);
      case '$date':
        return CalendarDate.parse(x);
      case '$uuid':
        return UUID.parse(x);
      case '$time_of_day':
        return TimeOfDay.parse(x);
      case '$map':
        return new Map(x.map(([k, v]) => [fromX(k), fromX(v)]));
    }
  }
  const o = {};
  for (const k of keys) defineOwn(o, k, fromX(j[k]));
  return o;
}

// ---------------------------------------------------------------------------
// Models: a normalized, comparable form of a Tersa value
// ---------------------------------------------------------------------------

/** The model of an xvalue. */
export function modelX(j) {
  if (j === null) return ['null'];
  if (typeof j === 'boolean') return ['bool', j];
  if (typeof j === 'string') return ['str', j];
  if (typeof j === 'number') return ['int', String(j)];
  if (Array.isArray(j)) return ['arr', ...j.map(modelX)];
  const keys = Object.keys(j);
  if (keys.length === 1 && keys[0].startsWith('$')) {
    const x = j[keys[0]];
    switch (keys[0]) {
      case '$int':
        return ['int', BigInt(x).toString()];
      case '$float':
        return ['float', parseDiagFloat(x).bits.toString(16)];
      case '$symbol':
        return ['sym', x];
      case '$binary':
        return ['bin', x];
      case '$time':
        return ['time', x.seconds, x.nanos, x.zone, x.zone === 'offset' ? x.offset : 0];
      case '$ext':
        return ['ext', x.type, x.data];
      // Well-known values compare by their canonical text, which is exact
      // (a decimal's text keeps its coefficient and exponent).
      case '$decimal':
        return ['decimal', Decimal.parse(x).toString()];
      case '$date':
        return ['date', CalendarDate.parse(x).toString()];
      case '$uuid':
        return ['uuid', UUID.parse(x).toString()];
      case '$time_of_day':
        return ['time_of_day', TimeOfDay.parse(x).toString()];
      case '$map':
        return ['map', ...x.map(([k, v]) => [modelX(k), modelX(v)])];
    }
  }
  return ['map', ...keys.map((k) => [['str', k], modelX(j[k])])];
}

/**
 * The model of a decoded JS value. With `loose`, integral floats and ints
 * compare equal and NaN payloads are ignored (the default decode options).
 */
export function modelJS(v, loose = false) {
  switch (typeof v) {
    case 'string':
      return ['str', v];
    case 'boolean':
      return ['bool', v];
    case 'bigint':
      return ['int', v.toString()];
    case 'number':
      if (loose) return Number.isNaN(v) ? ['num', 'NaN'] : ['num', Object.is(v, -0) ? '-0' : String(v)];
      if (Number.isSafeInteger(v) && !Object.is(v, -0)) return ['int', String(v)];
      return ['float', bitsOf(v).toString(16)];
    case 'symbol':
      return ['sym', Symbol.keyFor(v)];
    case 'undefined':
      return ['undefined'];
  }
  if (v === null) return ['null'];
  if (Array.isArray(v)) return ['arr', ...v.map((x) => modelJS(x, loose))];
  if (v instanceof Float64) {
    if (loose) return Number.isNaN(v.value) ? ['num', 'NaN'] : ['num', Object.is(v.value, -0) ? '-0' : String(v.value)];
    return ['float', v.bits.toString(16)];
  }
  if (v instanceof Uint8Array) return ['bin', bytesToHex(v)];
  if (v instanceof Date) {
    const ms = v.getTime();
    const s = Math.floor(ms / 1000);
    return ['time', s, (ms - s * 1000) * 1e6, 'utc', 0];
  }
  if (v instanceof Timestamp) return ['time', v.seconds, v.nanos, v.zone, v.zone === 'offset' ? v.offset : 0];
  if (v instanceof Ext) return ['ext', v.type, bytesToHex(v.data)];
  if (v instanceof Decimal) return ['decimal', v.toString()];
  if (v instanceof CalendarDate) return ['date', v.toString()];
  if (v instanceof UUID) return ['uuid', v.toString()];
  if (v instanceof TimeOfDay) return ['time_of_day', v.toString()];
  if (v instanceof Map) return ['map', ...[...v].map(([k, x]) => [modelJS(k, loose), modelJS(x, loose)])];
  if (typeof v === 'object') return ['map', ...Object.keys(v).map((k) => [['str', k], modelJS(v[k], loose)])];
  throw new Error('no model for ' + typeof v);
}

/** Loosens an exact model (floats become numbers) for comparison with a default decode. */
export function loosen(m) {
  switch (m[0]) {
    case 'int': {
      const n = BigInt(m[1]);
      if (n >= -(2n ** 53n) + 1n && n <= 2n ** 53n - 1n) return ['num', String(Number(n))];
      return m;
    }
    case 'float': {
      const d = fromBits(BigInt('0x' + m[1]));
      return Number.isNaN(d) ? ['num', 'NaN'] : ['num', Object.is(d, -0) ? '-0' : String(d)];
    }
    case 'arr':
      return ['arr', ...m.slice(1).map(loosen)];
    case 'map':
      return ['map', ...m.slice(1).map(([k, v]) => [loosen(k), loosen(v)])];
    default:
      return m;
  }
}

export const show = (m) => JSON.stringify(m);

// ---------------------------------------------------------------------------
// Dictionaries of the vector files
// ---------------------------------------------------------------------------

let dictCache = null;

export function vectorDictionaries() {
  if (dictCache) return dictCache;
  const file = path.join(VECTORS, 'dictionaries.json');
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  dictCache = {};
  for (const [name, d] of Object.entries(j.dictionaries)) {
    const dict = d.generate
      ? Dictionary.generated(d.generate.strings, d.generate.shapes)
      : new Dictionary(d.strings.map(fromX), d.shapes.map((keys) => keys.map(fromX)));
    dictCache[name] = { dict, spec: d };
  }
  return dictCache;
}

// ---------------------------------------------------------------------------
// Exact JSON reader (for the corpora)
// ---------------------------------------------------------------------------

/**
 * Parses JSON keeping what JSON.parse loses: integers beyond 2^53 (BigInt),
 * floats that look integral (`2100.0` becomes Float64), and key order of
 * objects with integer-like keys (those become Map).
 */
export function parseExactJSON(text) {
  let i = 0;
  const ws = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const pairs = [];
      ws();
      if (text[i] === '}') {
        i++;
      } else {
        for (;;) {
          ws();
          const k = str();
          ws();
          if (text[i++] !== ':') throw new Error('expected : at ' + i);
          const v = value();
          pairs.push([k, v]);
          ws();
          const d = text[i++];
          if (d === '}') break;
          if (d !== ',') throw new Error('expected , at ' + i);
        }
      }
      if (pairs.some(([k]) => INT_LIKE.test(k))) {
        // objects would reorder integer-like keys: keep them in a Map unless the order survives
        const o = Object.create(null);
        for (const [k] of pairs) o[k] = 0;
        const ks = Object.keys(o);
        if (ks.some((k, j) => k !== pairs[j][0])) return new Map(pairs);
      }
      const o = {};
      for (const [k, v] of pairs) defineOwn(o, k, v);
      return o;
    }
    if (c === '[') {
      i++;
      const a = [];
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        const d = text[i++];
        if (d === ']') return a;
        if (d !== ',') throw new Error('expected , at ' + i);
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!m) throw new Error('bad JSON at ' + i);
    i += m[0].length;
    if (m[2] === undefined && m[3] === undefined) {
      const n = BigInt(m[0]);
      if (n >= -(2n ** 53n) + 1n && n <= 2n ** 53n - 1n) return Number(n);
      return n;
    }
    const d = Number(m[0]);
    return Number.isInteger(d) || Object.is(d, -0) ? new Float64(d) : d;
  };
  const str = () => {
    if (text[i] !== '"') throw new Error('expected string at ' + i);
    let j = i + 1;
    while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    const s = JSON.parse(text.slice(i, j + 1));
    i = j + 1;
    return s;
  };
  const v = value();
  ws();
  if (i !== text.length) throw new Error('trailing JSON');
  return v;
}

export function readMaybeXz(file) {
  if (file.endsWith('.xz')) return execFileSync('xz', ['-dc', file], { maxBuffer: 1 << 30 });
  return fs.readFileSync(file);
}
