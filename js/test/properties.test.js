// Randomized properties: round trips of random values of every type, and
// random mutations of valid buffers that must only ever raise DecodeError
// (checked against the Python reference decoder when python3 is available).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as tersa from '../dist/esm/index.js';
import { HERE, ROOT, bytesToHex, modelJS, show, vectorFiles, hexToBytes } from './helpers.js';

const { encode, decode, decodeStream, joinStream, encodeStream, Encoder, Decoder, DecodeError, EncodeError, Timestamp, Ext, Float64, diag, Decimal, CalendarDate, UUID, TimeOfDay } = tersa;

const SEED = Number(process.env.TERSA_SEED ?? 20250416);
const N = Number(process.env.TERSA_FUZZ ?? 3000);

/** Asserts equal strings, reporting only the neighbourhood of the first difference. */
function sameText(a, b, msg) {
  if (a === b) return;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  assert.fail(`${msg}: first difference at ${i}:\n got  …${a.slice(Math.max(0, i - 80), i + 80)}\n want …${b.slice(Math.max(0, i - 80), i + 80)}`);
}

function mulberry32(a) {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeGen(seed) {
  const r = mulberry32(seed);
  const int = (n) => Math.floor(r() * n);
  const pick = (a) => a[int(a.length)];
  const words = ['id', 'name', 'user', 'user_id', 'usr_1', 'usr_2', 'admin', 'USD', 'é', 'über', '日本', '😀', '__proto__', 'constructor', '10', '2', '-1', 'a'.repeat(40), '', 'x', 'status', 'created_at'];
  const f64 = new Float64Array(1);
  const u32 = new Uint32Array(f64.buffer);
  const str = () => {
    switch (int(8)) {
      case 0:
      case 1:
        return pick(words);
      case 2: {
        // timestamp-like (sometimes invalid)
        const y = String(1 + int(9999)).padStart(4, '0');
        const mo = String(1 + int(13)).padStart(2, '0');
        const d = String(1 + int(31)).padStart(2, '0');
        const base = `${y}-${mo}-${d}`;
        if (r() < 0.3) return base;
        const t = `${String(int(25)).padStart(2, '0')}:${String(int(60)).padStart(2, '0')}:${String(int(61)).padStart(2, '0')}`;
        const frac = r() < 0.5 ? '' : '.' + String(int(1e9)).padStart(9, '0').slice(0, 1 + int(9));
        const zone = pick(['Z', '+05:30', '-08:00', '+00:00', '-00:00', '+23:59', '']);
        return base + pick(['T', ' ']) + t + frac + zone;
      }
      case 3:
        return pick(words) + '_' + int(1000);
      case 4: {
        let s = '';
        const n = int(40);
        for (let i = 0; i < n; i++) s += String.fromCodePoint(pick([0x20 + int(95), 0x80 + int(0x700), 0x800 + int(0xd000), 0x10000 + int(0xfffff)]));
        return s;
      }
      case 5:
        return 'prefix/shared/path/' + int(50);
      case 6:
        return 'x'.repeat(int(300));
      default:
        return String.fromCharCode(...Array.from({ length: int(20) }, () => 0x20 + int(95)));
    }
  };
  const num = () => {
    switch (int(12)) {
      case 0:
        return int(32) - 8;
      case 1:
        return int(2 ** 31) - 2 ** 30;
      case 2:
        return Math.floor((r() - 0.5) * 2 ** 54);
      case 3:
        return Math.round(r() * 1e6) / 100;
      case 4:
        return (r() - 0.5) * 10 ** (int(60) - 30);
      case 5:
        return pick([0, -0, NaN, Infinity, -Infinity, 5e-324, 2 ** -1074 * 3, 1.7976931348623157e308, 0.1, 0.3, 1e22, 1e23, 2 ** 53]);
      case 6:
        u32[0] = int(2 ** 32);
        u32[1] = int(2 ** 32);
        return Number.isNaN(f64[0]) ? Float64.fromBits(BigInt.asUintN(64, (BigInt(u32[1]) << 32n) | BigInt(u32[0]))) : f64[0];
      case 7:
        return new Float64(pick([0, 1, 2100, -5, 1e15, 2 ** 60]));
      case 8:
        return pick([2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n - 1n, 2n ** 64n, -(2n ** 63n) - 1n, 2n ** 200n, -(3n ** 100n), 12345n]);
      case 9:
        return Math.fround(r() * 1000);
      case 10:
        return 1000 + int(20); // deltas
      default:
        return Math.round(r() * 1e4) / 1e4;
    }
  };
  const wellKnown = () => {
    switch (int(4)) {
      case 0:
        if (r() < 0.1) return Decimal.parse(pick(['NaN', 'Infinity', '-Infinity']));
        return new Decimal(r() < 0.5, BigInt(int(2 ** 40)) ** BigInt(int(4)) - (r() < 0.5 ? 1n : 0n), int(41) - 20);
      case 1:
        return CalendarDate.fromEpochDay(int(2932896 + 719163) - 719162);
      case 2:
        return new UUID(Uint8Array.from({ length: 16 }, () => int(256)));
      default:
        return TimeOfDay.fromMicroseconds(int(86400000000));
    }
  };
  const scalar = () => {
    switch (int(13)) {
      case 0:
        return null;
      case 1:
        return r() < 0.5;
      case 2:
      case 3:
        return num();
      case 4:
      case 5:
      case 6:
        return str();
      case 7:
        return Symbol.for(pick(words));
      case 8:
        return Uint8Array.from({ length: int(20) }, () => int(256));
      case 9: {
        const zone = pick(['utc', 'offset', 'floating']);
        const off = zone === 'offset' ? int(2879) - 1439 : 0;
        let s = int(253402300799 + 62135596800) - 62135596800;
        if (zone === 'offset') s = Math.min(Math.max(s, -62135596800 - off * 60), 253402300799 - off * 60);
        return new Timestamp(s, r() < 0.5 ? 0 : int(1e9), zone, off);
      }
      case 10:
        return new Date(int(2 ** 42) - 2 ** 41);
      case 11:
        return new Ext(int(65280), Uint8Array.from({ length: int(8) }, () => int(256)));
      default:
        return wellKnown();
    }
  };
  const value = (depth) => {
    if (depth > 5 || r() < 0.45) return scalar();
    switch (int(4)) {
      case 0: {
        const n = int(r() < 0.9 ? 6 : 40);
        return Array.from({ length: n }, () => value(depth + 1));
      }
      case 1:
      case 2: {
        const o = {};
        const n = int(r() < 0.9 ? 6 : 20);
        for (let i = 0; i < n; i++) Object.defineProperty(o, pick(words), { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        return o;
      }
      default: {
        const m = new Map();
        const n = int(6);
        for (let i = 0; i < n; i++) m.set(r() < 0.5 ? scalar() : value(depth + 1), value(depth + 1));
        return m;
      }
    }
  };
  return { value, r, int };
}

test(`random values round-trip (seed ${SEED}, ${N} values)`, () => {
  const g = makeGen(SEED);
  const enc = new Encoder();
  const dec = new Decoder({ exactFloats: true });
  let checked = 0;
  let unencodable = 0;
  for (let i = 0; i < N; i++) {
    const v = g.value(0);
    let b;
    try {
      b = enc.encode(v);
    } catch (e) {
      // the only unencodable random values: Maps whose distinct JS keys are equal Tersa values
      assert.ok(e instanceof EncodeError && /duplicate key/.test(e.message), `value ${i}: ${e}`);
      unencodable++;
      continue;
    }
    const back = dec.decode(b);
    sameText(show(modelJS(back)), show(modelJS(v)), `value ${i} (seed ${SEED}) differs after a round trip`);
    sameText(bytesToHex(enc.encode(back)), bytesToHex(b), `value ${i}: re-encoding differs`);
    decode(b); // default options too
    checked++;
  }
  assert.ok(checked > N * 0.9, `${unencodable} unencodable of ${N}`);
});

test('random values as a stream', () => {
  const g = makeGen(SEED + 1);
  const vals = [];
  while (vals.length < 200) {
    const v = g.value(1);
    try {
      encode(v);
      vals.push(v);
    } catch {
      /* skip */
    }
  }
  const b = encodeStream(vals);
  const back = decodeStream(b, { exactFloats: true });
  sameText(show(back.map((x) => modelJS(x))), show(vals.map((x) => modelJS(x))), 'stream round trip');
});

function seedBuffers() {
  const out = [];
  for (const f of vectorFiles('valid')) for (const v of f.vectors) out.push({ bytes: hexToBytes(v.hex), stream: !!v.stream, join: !!v.join, dictionary: v.dictionary });
  const g = makeGen(SEED + 2);
  for (let i = 0; i < 200; i++) {
    try {
      out.push({ bytes: encode(g.value(0)).slice(), stream: false });
    } catch {
      /* skip */
    }
  }
  const dir = path.join(ROOT, 'spec', 'vectors', 'corpus', 'seed');
  for (const f of fs.readdirSync(dir)) out.push({ bytes: new Uint8Array(fs.readFileSync(path.join(dir, f))), stream: false });
  return out.filter((x) => !x.dictionary);
}

function mutate(b, g) {
  const out = Array.from(b);
  const k = 1 + g.int(3);
  for (let j = 0; j < k; j++) {
    const op = g.int(5);
    const at = g.int(out.length + 1);
    if (op === 0 && out.length) out[Math.min(at, out.length - 1)] = g.int(256);
    else if (op === 1 && out.length) out[Math.min(at, out.length - 1)] ^= 1 << g.int(8);
    else if (op === 2) out.splice(at, 0, g.int(256));
    else if (op === 3 && out.length) out.splice(Math.min(at, out.length - 1), 1 + g.int(4));
    else out.length = Math.min(out.length, at);
  }
  return Uint8Array.from(out);
}

function ours(bytes, stream, join) {
  try {
    if (join) {
      const r = joinStream(bytes, { exactFloats: true });
      return { ok: r.values.map(diag), at: r.joinedAt };
    }
    const vals = stream ? decodeStream(bytes, { exactFloats: true }) : [decode(bytes, { exactFloats: true })];
    return { ok: vals.map(diag) };
  } catch (e) {
    if (!(e instanceof DecodeError)) throw new Error(`not a DecodeError: ${e?.stack ?? e}`);
    return { err: e.code, off: e.offset };
  }
}

const MUTANTS = Number(process.env.TERSA_MUTANTS ?? 6000);

test(`mutated buffers only raise DecodeError (${MUTANTS} mutants), and agree with the reference decoder`, (t) => {
  const g = makeGen(SEED + 3);
  const seeds = seedBuffers();
  const cases = [];
  for (let i = 0; i < MUTANTS; i++) {
    const s = seeds[g.int(seeds.length)];
    const bytes = mutate(s.bytes, g);
    // CPU time of this process: a loaded machine stretches wall time, not this.
    const t0 = process.cpuUsage();
    const res = ours(bytes, s.stream, s.join);
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000;
    assert.ok(ms < 2000, `decoding took ${ms} ms of CPU: ${bytesToHex(bytes)}`);
    cases.push({ bytes, stream: s.stream, join: s.join, res });
  }
  const errs = cases.filter((c) => c.res.err).length;
  t.diagnostic(`${errs} of ${cases.length} mutants rejected, ${cases.length - errs} still valid`);
  // differential check against spec/tools/tersaref.py
  const py = spawnSync('python3', ['--version']);
  if (py.status !== 0) {
    t.diagnostic('python3 not available: reference comparison NOT run');
    return;
  }
  const input = cases.map((c) => JSON.stringify({ hex: bytesToHex(c.bytes), stream: c.stream, join: c.join })).join('\n') + '\n';
  const out = spawnSync('python3', [path.join(HERE, 'tersaref_oracle.py')], { input, maxBuffer: 1 << 28 });
  assert.equal(out.status, 0, String(out.stderr));
  const lines = String(out.stdout).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, cases.length);
  const diffs = [];
  for (let i = 0; i < cases.length; i++) {
    const a = cases[i].res;
    const b = lines[i];
    if (b.err === 'recursion') continue;
    if (JSON.stringify(a) !== JSON.stringify(b)) diffs.push(`${bytesToHex(cases[i].bytes).slice(0, 200)}${cases[i].stream ? ' (stream)' : cases[i].join ? ' (join)' : ''}: ours ${JSON.stringify(a).slice(0, 300)} reference ${JSON.stringify(b).slice(0, 300)}`);
  }
  assert.deepEqual(diffs.slice(0, 20), [], `${diffs.length} differences from the reference decoder`);
});
