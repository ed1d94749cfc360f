// Regression tests for defects found by hostile-input testing: writes that
// cross the encoder's 64 KiB slab, containers mutated while they are encoded,
// map keys a JS Map would merge, nesting deeper than the JS stack, and what a
// new user runs into (transferred results, inputs that are not bytes, objects
// that are not maps).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import vm from 'node:vm';
import * as tersa from '../dist/esm/index.js';
import { HERE, bytesToHex, hexToBytes, modelJS, show, toX } from './helpers.js';

const { encode, decode, Encoder, Decoder, DecodeError, EncodeError, Float64, Timestamp, Ext, addExtension, removeExtension, diag, Decimal, CalendarDate, UUID, TimeOfDay } = tersa;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)] };
}

const python = spawnSync('python3', ['--version']).status === 0;

/** Canonical encodings (hex) by spec/tools/tersaref.py, or null without python3; runs in the background. */
function referenceEncodings(values) {
  if (!python) return Promise.resolve(null);
  const child = spawn('python3', [path.join(HERE, 'tersaref_encode_oracle.py')]);
  const out = [];
  const err = [];
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => err.push(d));
  child.stdin.end(values.map((v) => JSON.stringify(toX(v))).join('\n') + '\n');
  return new Promise((resolve, reject) => {
    child.on('close', (status) => {
      if (status !== 0) reject(new Error(`reference encoder exited with ${status}: ${Buffer.concat(err).toString().slice(0, 500)}`));
      else resolve(Buffer.concat(out).toString().trim().split('\n'));
    });
  });
}


// ---------------------------------------------------------------------------
// 1. Writes crossing the 64 KiB output slab
// ---------------------------------------------------------------------------

const SLAB = 65536;
const r0 = rng(7);
const ascii = (g, n) => Array.from({ length: n }, () => String.fromCharCode(97 + g.int(26))).join('');
const words = Array.from({ length: 40 }, (_, i) => ascii(r0, 1 + (i % 9)) + i);

const keySets = Array.from({ length: 300 }, (_, i) => {
  const n = r0.int(r0.pick([3, 20]));
  return Array.from({ length: n }, (_, j) => r0.pick(words) + j + (r0.int(6) ? '' : r0.pick(['é', '😀', ascii(r0, r0.int(70))])) + (i % 7));
});

/** Value kinds, each a generator of one item (of varied encodings) from a seeded source. */
const KINDS = {
  'small ints': (g) => g.int(32) - 8,
  'ints of every size': (g) => Math.floor((g.next() - 0.5) * Math.pow(2, g.int(54))),
  'bigints in the safe range': (g) => BigInt(g.int(1000) - 500) * BigInt(g.pick([1, 1, 100, 1e6])),
  'small bigints': () => 1n,
  'bigints in int64/uint64': (g) => BigInt.asIntN(64, BigInt(Math.floor(g.next() * 2 ** 53)) << BigInt(g.int(12))) * BigInt(g.pick([1, -1])) + (g.int(2) ? 2n ** 63n : 0n),
  'bigints beyond 64 bits': (g) => (2n ** BigInt(64 + g.int(200)) + BigInt(g.int(1e9))) * (g.int(2) ? 1n : -1n),
  'decimal floats': (g) => g.int(100000) / g.pick([10, 100, 1000, 1e6]) * (g.int(2) ? 1 : -1),
  'floats of every kind': (g) => g.pick([
    () => g.next() * 2 ** (g.int(200) - 100),
    () => Math.fround(g.next()),
    () => g.pick([NaN, Infinity, -Infinity, -0, 0.1 + 0.2, 5e-324, 1.7976931348623157e308]),
    () => new Float64(g.int(100000)),
    () => Float64.fromBits(0x7ff0000000000001n + BigInt(g.int(1000))),
    () => (2 ** 52 + g.int(1e6)) / 10, // decimal mantissas >= 2^51
  ])(),
  'strings of one byte': (g) => String.fromCharCode(32 + g.int(90)),
  'short strings': (g) => ascii(g, 2 + g.int(10)) + (g.int(4) ? '' : 'é'),
  'strings near 32 bytes': (g) => ascii(g, 29 + g.int(6)),
  'strings near 64 chars': (g) => ascii(g, 61 + g.int(6)) + (g.int(3) ? '' : '😀'),
  'long strings': (g) => ascii(g, 100 + g.int(300)) + (g.int(2) ? '' : 'ü€😀'.repeat(g.int(40))),
  'non-ASCII strings': (g) => Array.from({ length: 1 + g.int(30) }, () => g.pick(['é', '€', '😀', 'x', 'ß'])).join(''),
  'prefixed and repeated strings': (g) => g.pick(['user_' + g.int(100000), g.pick(words), 'https://example.com/' + ascii(g, g.int(40))]),
  'timestamp strings': (g) => new Date(g.int(2e12) * 1000 + g.int(1000)).toISOString().replace(g.int(2) ? '.000' : '', '') ,
  symbols: (g) => Symbol.for(g.pick(words) + g.int(50)),
  timestamps: (g) => g.int(2) ? new Date(g.int(4e12)) : new Timestamp(g.int(4e9), g.int(3) ? g.int(1e9) : 0, g.pick(['utc', 'offset', 'floating']), g.int(2878) - 1439),
  binary: (g) => Uint8Array.from({ length: g.int(g.pick([4, 40, 300])) }, () => g.int(256)),
  ext: (g) => new Ext(g.int(70000) % 65280, Uint8Array.from({ length: g.int(g.pick([4, 40, 200])) }, () => g.int(256))),
  'well-known values': (g) => g.pick([
    () => new Decimal(g.int(2) === 1, BigInt(g.int(1e9)) ** BigInt(g.pick([1, 2, 30])), g.int(2e6) - 1e6),
    () => CalendarDate.fromEpochDay(g.int(3652059) - 719162),
    () => new UUID(Uint8Array.from({ length: 16 }, () => g.int(256))),
    () => TimeOfDay.fromMicroseconds(g.int(86400000000)),
  ])(),
  'null and booleans': (g) => g.pick([null, true, false]),
  'objects (shapes and keys)': (g) => {
    const o = {};
    for (const k of g.pick(keySets)) o[k] = g.int(100);
    return o;
  },
  'Maps with symbol and generic keys': (g) => g.int(2)
    ? new Map([[Symbol.for(g.pick(words)), 1], [g.pick(words) + 'x', 2]])
    : new Map([[g.int(1000), 'a'], [ascii(g, 3), g.int(9)], [new Float64(g.int(9)), null]]),
  'nested arrays': (g) => [g.int(100), [ascii(g, 3), [g.next()]]],
};

let roomy = null;

/** An encoder whose slab has room for many more buffers: its output never crosses a slab end. */
function roomyEncoder() {
  if (roomy === null || roomy.used > (1 << 22)) {
    roomy = { enc: new Encoder(), used: 0 };
    roomy.enc.encode(new Uint8Array(1 << 23)); // the slab grows to twice this: 8 MiB free behind it
  }
  return roomy;
}

function roomyEncode(v) {
  const r = roomyEncoder();
  const b = r.enc.encode(v).slice();
  r.used += b.length + 8;
  return b;
}

const CONTEXT = 20; // items written before a probe: the state it is written in (registers, tables, shapes)
const PROBE_EVERY = 40;

/** The offsets (from the slab end) at which to start an item of `size` bytes: all, sampled inside long items. */
function offsetsFor(size) {
  const out = [];
  for (let o = 1; o <= size + 24; o++) if (size <= 300 || o <= 100 || o >= size - 100 || o % 7 === 0) out.push(o);
  return out;
}

/** An array [BIN(L), ...context, item] whose BIN puts the item at `at`, and its expected encoding from `probe` (the same with an empty BIN). */
function placed(probe, context, item, at) {
  // probe: header (3), ARR_LONG of 22 items (2), BIN of 0 bytes (2), context, item
  const body = probe.subarray(7);
  const L = at - 3 - 2 - 4 - (probe.length - 7 - probe.itemSize);
  assert.ok(L >= 16384 && L < 1 << 21, 'a BIN of 3-byte length');
  const expected = new Uint8Array(9 + L + body.length);
  expected.set(probe.subarray(0, 5));
  expected[5] = 0xf6;
  const w = (L << 3) | 4; // a 3-byte varint
  expected[6] = w & 255;
  expected[7] = (w >> 8) & 255;
  expected[8] = (w >> 16) & 255;
  expected.set(body, 9 + L);
  return { value: [new Uint8Array(L), ...context, item], expected };
}

function sameBytes(got, expected, what) {
  if (Buffer.compare(got, expected) !== 0) {
    let at = 0;
    while (at < got.length && got[at] === expected[at]) at++;
    assert.fail(`${what}: ${got.length} bytes, expected ${expected.length}; first difference at ${at}`);
  }
}

test('values written across the 64 KiB slab end: every kind, every offset, same bytes as the reference', async (t) => {
  const kinds = Object.entries(KINDS).map(([name, gen]) => {
    const g = rng(name.length * 7919 + 1);
    return { name, vals: Array.from({ length: CONTEXT + 15 * PROBE_EVERY }, () => gen(g)) };
  });
  const pending = referenceEncodings(kinds.map((k) => k.vals));
  const decoder = new Decoder({ exactFloats: true });
  for (const { name, vals } of kinds) {
    for (let i = CONTEXT; i < vals.length; i += PROBE_EVERY) {
      const context = vals.slice(i - CONTEXT, i);
      const item = vals[i];
      const probe = roomyEncode([new Uint8Array(0), ...context, item]);
      probe.itemSize = probe.length - roomyEncode([new Uint8Array(0), ...context]).length;
      const model = show(modelJS([new Uint8Array(0), ...context, item]));
      for (const o of offsetsFor(probe.itemSize)) {
        // A fresh encoder's first buffer starts at offset 0 of a 64 KiB slab.
        const fresh = placed(probe, context, item, SLAB - o);
        const got = new Encoder().encode(fresh.value);
        sameBytes(got, fresh.expected, `${name}, item ${i} at ${o} bytes before the slab end`);
        const back = decoder.decode(got);
        back[0] = new Uint8Array(0);
        assert.equal(show(modelJS(back)), model, `${name}, item ${i} at ${o} bytes before the slab end: decode(encode(x)) differs from x`);
        // An encoder that has written the context before (strings it has met
        // in two buffers are copied as bytes) continues in the same slab.
        const warm = new Encoder();
        const first = warm.encode(context);
        const next = (first.byteOffset + first.length + 7) & ~7;
        const again = placed(probe, context, item, SLAB - o - next);
        sameBytes(warm.encode(again.value), again.expected, `${name}, item ${i} at ${o} bytes before the slab end, warm`);
      }
    }
  }
  const refs = await pending;
  if (refs === null) t.diagnostic('python3 not available: comparison with the reference encoder NOT run');
  else for (let k = 0; k < kinds.length; k++) assert.equal(bytesToHex(roomyEncode(kinds[k].vals)), refs[k], `${kinds[k].name}: the encoding differs from the reference encoder`);
});

test('arrays of BigInts crossing the slab end keep every item', () => {
  assert.equal(encode(Array(65530).fill(1n)).length, 65537);
  assert.equal(encode(Array(40000).fill(100n)).length, 80007);
  assert.deepEqual(decode(encode(Array(65530).fill(1n))), Array(65530).fill(1));
});

test('numbers at the edges of the encoder fast paths (number runs, int and dec deltas, binary runs, int64/uint64 BigInts): the same bytes as the reference', async (t) => {
  const edges = [];
  for (const b of [0, 8, 23, 24, 2 ** 7, 2 ** 14, 2 ** 21, 2 ** 26, 2 ** 28, 2 ** 28 + 24, 2 ** 31, 2 ** 32, 2 ** 52]) for (const d of [-1, 0, 1]) edges.push(b + d, -b - d);
  edges.push(-0, 0.5, 2 ** 28 + 30, 2 ** 28 + 2 ** 26 + 25, 2 ** 40, 2 ** 40 + 2 ** 26 - 1, 2 ** 40 + 2 ** 26, 1.5, -(2 ** 40), -(2 ** 40) - 2 ** 26 + 1);
  const two = (k) => 2n ** BigInt(k);
  const bigs = [];
  for (const b of [two(53), two(63), two(64) - 2048n, two(64) - 3072n, two(64) - 1024n, two(64)]) for (const d of [-2n, -1n, 0n, 1n]) bigs.push(b + d, -b - d);
  const floats = [];
  for (let k = 0; k < 30; k++) floats.push(k / 10 + k / 1000, Math.PI * k, 1.5 + k);
  for (let k = 0; k < 24; k++) floats.push(Math.E * (k + 1)); // a run of binary floats: the bin count passes 4 and 19
  floats.push(1073741823 / 1e3, 1073741824 / 1e3, -1073741823 / 1e3, 0.05, (2 ** 27 + 5) / 1e2, 0.05, -(2 ** 27) / 1e2, 0.25);
  floats.push(NaN, 0.1, Infinity, 0.1, -Infinity, -0, 0.1, 3e-13, 123e-15, 4e-13, 1e21 + 0.5, 0.3, 2 ** -30, 0.7);
  const values = [
    floats,
    floats.flatMap((x, i) => [x, edges[i % edges.length]]),
    edges,
    [...edges].reverse(),
    bigs,
    [...bigs].reverse(),
    edges.flatMap((x, i) => [x, bigs[i % bigs.length]]),
    bigs.flatMap((x, i) => [x, edges[i % edges.length], 'x', edges[(i * 7) % edges.length]]),
  ];
  const refs = await referenceEncodings(values);
  for (const v of values) assert.equal(decode(encode(v)).length, v.length);
  if (refs === null) t.diagnostic('python3 not available: comparison with the reference encoder NOT run');
  else for (let k = 0; k < values.length; k++) assert.equal(bytesToHex(encode(values[k])), refs[k], `list ${k}: the encoding differs from the reference encoder`);
});

// ---------------------------------------------------------------------------
// 2. Containers mutated while they are encoded
// ---------------------------------------------------------------------------

// The rule (that of JSON.stringify): a container's keys (or length) are taken
// when its header is written; each value is read when it is written, so a
// key deleted meanwhile reads as undefined (EncodeError, or null with
// undefined: 'null') and keys added meanwhile are not written.

/** Encodes with undefined: 'null' and decodes; also checks that the default options raise EncodeError or agree. */
function mutated(make, opts = {}) {
  const strict = (() => {
    try {
      return { bytes: encode(make(), opts) };
    } catch (e) {
      assert.ok(e instanceof EncodeError, `not an EncodeError: ${e?.stack ?? e}`);
      return { error: e };
    }
  })();
  const bytes = encode(make(), { ...opts, undefined: 'null' });
  const value = decode(bytes, { maps: 'map' });
  if (strict.bytes) assert.equal(bytesToHex(strict.bytes), bytesToHex(bytes));
  return { value, strictError: strict.error ?? null };
}

const entries = (m) => [...m].map(([k, v]) => [k, v instanceof Map ? entries(v) : v]);

test('a getter that deletes a later key: the key is written with the value undefined', () => {
  const make = () => {
    const x = { a: 1, get b() { delete x.c; return 2; }, c: 3 };
    return x;
  };
  const { value, strictError } = mutated(make);
  assert.deepEqual(entries(value), [['a', 1], ['b', 2], ['c', null]]);
  assert.ok(strictError && /undefined/.test(strictError.message), String(strictError));
});

test('getters that add, delete or re-add keys of an object, on every encoder path', () => {
  const cases = {
    add: (x) => { x.z = 9; },
    'delete the last': (x) => { delete x.c; },
    're-add': (x) => { delete x.c; x.c = 7; },
    'delete an earlier': (x) => { delete x.a; },
  };
  const expect = {
    add: [['a', 1], ['b', 2], ['c', 3]],
    'delete the last': [['a', 1], ['b', 2], ['c', null]],
    're-add': [['a', 1], ['b', 2], ['c', 7]],
    'delete an earlier': [['a', 1], ['b', 2], ['c', 3]],
  };
  for (const [name, mutate] of Object.entries(cases)) {
    const plain = () => {
      const x = { a: 1, get b() { mutate(x); return 2; }, c: 3 };
      return x;
    };
    const bare = () => {
      const x = Object.create(null);
      x.a = 1;
      Object.defineProperty(x, 'b', { get() { mutate(x); return 2; }, enumerable: true, configurable: true });
      x.c = 3;
      return x;
    };
    class Point {
      constructor() {
        this.a = 1;
        Object.defineProperty(this, 'b', { get: () => { mutate(this); return 2; }, enumerable: true, configurable: true });
        this.c = 3;
      }
    }
    const makers = {
      plain,
      'null prototype': bare,
      // the second object meets the shape memo of its slot
      'after one of its shape': () => [{ a: 1, b: 2, c: 3 }, plain()],
      'class instance': () => new Point(),
    };
    for (const [how, make] of Object.entries(makers)) {
      const opts = how === 'class instance' ? { classInstances: 'map' } : {};
      let { value } = mutated(make, opts);
      if (Array.isArray(value)) value = value[1];
      assert.deepEqual(entries(value), expect[name], `${name}, ${how}`);
    }
  }
});

test('a Proxy whose keys change between enumerations', () => {
  let calls = 0;
  const target = { a: 1, b: 2, c: 3 };
  const p = new Proxy(target, {
    ownKeys: () => (calls++ === 0 ? ['a', 'b', 'c'] : ['a']),
  });
  const bytes = encode(p);
  assert.deepEqual(decode(bytes), { a: 1, b: 2, c: 3 });
});

test('arrays shortened or lengthened while they are encoded', () => {
  const shrink = () => {
    const arr = [{ get a() { arr.length = 1; return 1; } }, 2, 3];
    return arr;
  };
  const grow = () => {
    const arr = [{ get a() { arr.push(4, 5); return 1; } }, 2, 3];
    return arr;
  };
  const s = mutated(shrink);
  assert.deepEqual(s.value, [new Map([['a', 1]]), null, null]);
  assert.ok(s.strictError);
  assert.deepEqual(mutated(grow).value, [new Map([['a', 1]]), 2, 3]);
});

test('Maps with string keys mutated while they are encoded', () => {
  const make = (mutate) => () => {
    const m = new Map([['a', { get x() { mutate(m); return 1; } }], ['b', 2], ['c', 3]]);
    return m;
  };
  assert.deepEqual(entries(mutated(make((m) => m.delete('c'))).value), [['a', [['x', 1]]], ['b', 2], ['c', null]]);
  assert.deepEqual(entries(mutated(make((m) => m.set('z', 9))).value), [['a', [['x', 1]]], ['b', 2], ['c', 3]]);
  assert.deepEqual(entries(mutated(make((m) => { m.delete('b'); m.set('b', 5); })).value), [['a', [['x', 1]]], ['b', 5], ['c', 3]]);
  assert.deepEqual(entries(mutated(make((m) => m.clear())).value), [['a', [['x', 1]]], ['b', null], ['c', null]]);
});

test('generic Maps mutated while they are encoded', () => {
  const make = (mutate) => () => {
    const m = new Map([[1, { get x() { mutate(m); return 1; } }], [2, 2], [3, 3]]);
    return m;
  };
  assert.deepEqual(entries(mutated(make((m) => m.delete(3))).value), [[1, [['x', 1]]], [2, 2], [3, null]]);
  assert.deepEqual(entries(mutated(make((m) => m.set(4, 4))).value), [[1, [['x', 1]]], [2, 2], [3, 3]]);
  // a key equal (as a Tersa value) to one already there is not written either
  assert.deepEqual(entries(mutated(make((m) => m.set(2n, 4))).value), [[1, [['x', 1]]], [2, 2], [3, 3]]);
  assert.deepEqual(entries(mutated(make((m) => m.clear())).value), [[1, [['x', 1]]], [2, null], [3, null]]);
});

test('an extension writer that mutates the container being encoded', () => {
  class Token {}
  let onWrite = () => {};
  addExtension({ type: 77, Class: Token, write: () => { onWrite(); return Uint8Array.of(1); }, read: () => 'token' });
  try {
    const obj = () => {
      const o = { a: new Token(), b: 2, c: 3 };
      onWrite = () => { delete o.c; o.z = 1; };
      return o;
    };
    assert.deepEqual(entries(mutated(obj).value), [['a', 'token'], ['b', 2], ['c', null]]);
    const arr = () => {
      const a = [new Token(), 2, 3];
      onWrite = () => a.splice(1);
      return a;
    };
    assert.deepEqual(mutated(arr).value, ['token', null, null]);
    const map = () => {
      const m = new Map([[1, new Token()], [2, 2]]);
      onWrite = () => { m.delete(2); m.set(3, 3); };
      return m;
    };
    assert.deepEqual(entries(mutated(map).value), [[1, 'token'], [2, null]]);
  } finally {
    removeExtension(77);
  }
});

// ---------------------------------------------------------------------------
// 3. Map keys a JS Map would merge
// ---------------------------------------------------------------------------

test('-0.0, 0.0 and 0 are three distinct keys, each decoded exactly and re-encoded to the same bytes', () => {
  for (const exactFloats of [false, true]) {
    for (const [hex, canonical] of [
      ['c17010f405a8a0e300000080a1', true], // {0: -8, -0.0: -7}
      ['c17010f405e300000080a1dc01a2', true], // {-0.0: -7, 0.0: -6}
      ['c17010f407e300000080a1a8a2dc01a3', true], // {-0.0: -7, 0: -6, 0.0: -5}
      ['c17010f405e300000080a1e300000000a2', false], // 0.0 as F32
      ['c17010f405e40000000000000080a1a8a2', false], // -0.0 as F64
    ]) {
      const m = decode(hexToBytes(hex), { exactFloats });
      assert.ok(m instanceof Map, hex);
      const n = hexToBytes(hex)[4] >> 1;
      assert.equal(m.size, n, `${hex}: ${m.size} keys`);
      const negZero = [...m.keys()].find((k) => k instanceof Float64 && Object.is(k.value, -0));
      assert.ok(negZero, `${hex}: the -0.0 key is a Float64`);
      assert.equal(negZero.bits, 0x8000000000000000n);
      const again = encode(m);
      if (canonical) assert.equal(bytesToHex(again), hex, `${hex} re-encodes`);
      assert.equal(diag(decode(again, { exactFloats })), diag(m), hex);
    }
  }
  // the same keys in a map nested as a key stay distinct too
  const inner = 'c17010f403f405e300000080a1a8a2e0'; // {{-0.0: -7, 0: -6}: null}
  const k = [...decode(hexToBytes(inner)).keys()][0];
  assert.equal(k.size, 2);
  assert.equal(bytesToHex(encode(decode(hexToBytes(inner)))), inner);
});

test('NaN keys with different payloads, 1 and 1.0, big integers and floats stay distinct keys', () => {
  const keys = [
    Float64.fromBits(0x7ff8000000000000n), Float64.fromBits(0x7ff8000000000001n), Float64.fromBits(0xfff8000000000000n),
    Float64.fromBits(0x7ff0000000000001n), 1, new Float64(1), 1n << 70n, new Float64(2 ** 70), new Float64(-0), new Float64(0), 0,
    Infinity, -Infinity, 2 ** 53, 2n ** 53n, 'a', Symbol.for('a'), true, null,
  ];
  const m = new Map(keys.map((k, i) => [k, i]));
  assert.equal(m.size, keys.length);
  const bytes = encode(m);
  for (const opts of [{}, { exactFloats: true }, { integers: 'bigint' }]) {
    const back = decode(bytes, opts);
    assert.equal(back.size, keys.length, JSON.stringify(opts));
    assert.deepEqual([...back.values()], keys.map((_, i) => opts.integers ? BigInt(i) : i));
    assert.equal(bytesToHex(encode(back)), bytesToHex(bytes), JSON.stringify(opts));
  }
});

test('extension keys whose read() results collide with other keys decode as Ext', () => {
  addExtension({ type: 9, read: (d) => d[0] }); // a number, like the integer keys
  try {
    const hex = 'c17010f405f7130301e0a9e1'; // {ext(9, h'01'): null, 1: false}
    const m = decode(hexToBytes(hex));
    assert.equal(m.size, 2);
    const [k0, k1] = [...m.keys()];
    assert.ok(k0 instanceof Ext && k0.type === 9 && k0.data[0] === 1, String(k0));
    assert.equal(k1, 1);
    assert.equal(bytesToHex(encode(m)), hex);
    // without a collision the hook's value is the key
    assert.deepEqual([...decode(hexToBytes('c17010f403f7130301e0')).keys()], [1]);
  } finally {
    removeExtension(9);
  }
  addExtension({ type: 9, read: () => 'a' }); // a string, like a string key
  try {
    const m = decode(hexToBytes('c17010f405f7130301e04161e1')); // {ext(9, h'01'): null, "a": false}
    assert.ok(m instanceof Map && m.size === 2, diag(m));
  } finally {
    removeExtension(9);
  }
});

// ---------------------------------------------------------------------------
// 4. Nesting deeper than the JavaScript stack
// ---------------------------------------------------------------------------

// Runs in a child process with a small stack (300 KiB; Node's default is
// 984 KiB), so that passing shows the depth reached does not depend on it.
const DEEP_CHILD = String.raw`
import { encode, decode, DecodeError, EncodeError } from ${JSON.stringify(new URL('../dist/esm/index.js', import.meta.url).href)};
const fails = [];
const check = (ok, what) => { if (!ok) fails.push(what); };

// Each kind wraps a value in one more container; seg is the path step into it.
const KINDS = {
  arrays: { wrap: (x) => [x], seg: '[0]' },
  'arrays with a sibling': { wrap: (x) => [x, 7], seg: '[0]' },
  'shaped maps': { wrap: (x) => ({ a: x }), seg: '["a"]' },
  'shaped maps with a sibling': { wrap: (x) => ({ a: x, b: 1 }), seg: '["a"]' },
  'generic maps': { wrap: (x) => new Map([[1, x]]), seg: '[1]' },
  mixed: { wrap: (x, i) => [[x], { k: x }, new Map([[i % 3, x]]), new Map([[Symbol.for('s'), x]]), new Map([[x, i]])][i % 5], seg: null },
  'keys in keys': { wrap: (x, i) => new Map([[x, i]]), seg: null },
};

function build(kind, levels, innermost = []) {
  let v = innermost;
  const segs = [];
  for (let i = 1; i < levels; i++) {
    v = kind.wrap(v, i);
    segs.push(kind.seg);
  }
  return { value: v, path: kind.seg === null ? null : '$' + segs.join('') };
}

/** The number of nested containers, walking down the first item of each (a Map's first key if it is a container). */
function levelsOf(v) {
  let n = 0;
  for (;;) {
    n++;
    let next;
    if (Array.isArray(v)) next = v[0];
    else if (v instanceof Map) {
      const [k, x] = v.size ? [...v][0] : [];
      next = typeof k === 'object' ? k : x;
    } else next = Object.values(v)[0];
    if (typeof next !== 'object' || next === null) return n;
    v = next;
  }
}

// The innermost container's offset: where a BIN in its place starts (a BIN
// changes no encoder state, so everything before it is the same).
const MARK = Uint8Array.from({ length: 24 }, (_, i) => (i * 89 + 17) & 255);
function innermostOffset(kind, levels) {
  const b = Buffer.from(encode(build(kind, levels, MARK).value, { maxDepth: levels }));
  return b.indexOf(Buffer.from(MARK)) - 2;
}
const sizes = JSON.parse(process.argv[1]);
for (const [name, kind] of Object.entries(KINDS)) {
  for (const levels of sizes[name] ?? sizes.default) {
    const what = name + ' x ' + levels;
    const { value, path } = build(kind, levels);
    let bytes;
    try {
      bytes = encode(value, { maxDepth: levels });
    } catch (e) {
      fails.push(what + ': encode threw ' + String(e).slice(0, 200));
      continue;
    }
    let back;
    try {
      back = decode(bytes, { maxDepth: levels, exactFloats: true });
    } catch (e) {
      fails.push(what + ': decode threw ' + String(e).slice(0, 200));
      continue;
    }
    check(levelsOf(back) === levels, what + ': decoded ' + levelsOf(back) + ' levels');
    check(Buffer.compare(encode(back, { maxDepth: levels }), bytes) === 0, what + ': re-encoding differs');
    check(levelsOf(decode(bytes, { maxDepth: 10 * levels })) === levels, what + ': with a larger maxDepth');
    // one level more than allowed
    try {
      decode(bytes, { maxDepth: levels - 1 });
      fails.push(what + ': decode with maxDepth ' + (levels - 1) + ' succeeded');
    } catch (e) {
      const at = innermostOffset(kind, levels);
      check(e instanceof DecodeError && e.code === 'depth_exceeded' && e.offset === at, what + ': decode one level too deep: ' + String(e).slice(0, 200) + ' expected offset ' + at);
    }
    try {
      encode(value, { maxDepth: levels - 1 });
      fails.push(what + ': encode with maxDepth ' + (levels - 1) + ' succeeded');
    } catch (e) {
      check(e instanceof EncodeError && /deeper/.test(e.message) && (path === null || e.path === path), what + ': encode one level too deep: ' + e.name + ' ' + String(e.message).slice(0, 100) + ' path of ' + String(e.path).length + ' chars');
    }
  }
}

// cycles are still found, at any maxDepth
for (const maxDepth of [1000, 100000]) {
  const a = { name: 'a', children: [] };
  a.children.push({ parent: a });
  try {
    encode(a, { maxDepth });
    fails.push('cycle encoded');
  } catch (e) {
    check(e instanceof EncodeError && /circular/.test(e.message) && e.path === '$["children"][0]["parent"]', 'cycle: ' + String(e).slice(0, 200));
  }
  const m = new Map();
  m.set(1, [m]);
  try {
    encode(m, { maxDepth });
    fails.push('cycle through a Map encoded');
  } catch (e) {
    check(e instanceof EncodeError && /circular/.test(e.message) && e.path === '$[1][0]', 'cycle through a Map: ' + String(e).slice(0, 200));
  }
}
process.stdout.write(JSON.stringify(fails));
`;

function runDeep(sizes) {
  const r = spawnSync(process.execPath, ['--stack-size=300', '--input-type=module', '-e', DEEP_CHILD, JSON.stringify(sizes)], { maxBuffer: 1 << 24 });
  assert.equal(r.status, 0, `child exited with ${r.status}: ${String(r.stderr).slice(0, 2000)}`);
  return JSON.parse(String(r.stdout));
}

test('10,000 and 100,000 levels encode and decode with a small stack; maxDepth + 1 levels fail at the container', () => {
  assert.deepEqual(runDeep({ default: [10_000, 100_000], 'keys in keys': [10_000, 30_000] }), []);
});

test('depth limits at the boundary of the recursion (levels 90..110) and tiny limits', () => {
  const sizes = [];
  for (let n = 90; n <= 110; n++) sizes.push(n);
  sizes.push(2, 3, 64, 1000);
  assert.deepEqual(runDeep({ default: sizes }), []);
});

test('array keys equal beyond any depth are duplicates on encode, as on decode', () => {
  for (const levels of [10, 70, 200, 5000]) {
    const deep = () => {
      let v = [1];
      for (let i = 1; i < levels; i++) v = [v];
      return v;
    };
    assert.throws(() => encode(new Map([[deep(), 1], [deep(), 2]]), { maxDepth: levels + 2 }), (e) => e instanceof EncodeError && /duplicate key/.test(e.message), `${levels} levels`);
    const other = deep();
    let inner = other;
    while (Array.isArray(inner[0])) inner = inner[0];
    inner[0] = 2;
    const bytes = encode(new Map([[deep(), 1], [other, 2]]), { maxDepth: levels + 2 });
    assert.equal(decode(bytes, { maxDepth: levels + 2 }).size, 2);
  }
});

test('diag and Dictionary.fromSamples take values of any nesting', () => {
  const N = 100_000;
  let v = 'deep';
  for (let i = 0; i < N; i++) v = [v];
  assert.equal(diag(v), '['.repeat(N) + '"deep"' + ']'.repeat(N));
  let o = { k: 'leaf', n: 1 };
  for (let i = 0; i < N; i++) o = { k: 'node', n: o };
  const d = tersa.Dictionary.fromSamples([o, o, v]);
  assert.deepEqual(d.shapes, [['k', 'n']]);
  assert.deepEqual(d.strings, ['leaf', 'node']); // in two samples each; 'deep' in one
  // a container met again inside itself is skipped, as before
  const c = { k: 'a', self: null };
  c.self = c;
  assert.deepEqual(tersa.Dictionary.fromSamples([c, c]).shapes, [['k', 'self']]);
});

test('extensions that encode and decode deep values from inside deep values', () => {
  class Boxed {
    constructor(inner) {
      this.inner = inner;
    }
  }
  const deep = (levels, leaf) => {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = [v, i];
    return v;
  };
  addExtension({ type: 78, Class: Boxed, write: (b) => encode(b.inner, { maxDepth: 5000 }), read: (d) => new Boxed(decode(d, { maxDepth: 5000 })) });
  try {
    const value = deep(300, new Boxed(deep(400, 'in')));
    const bytes = encode(value, { maxDepth: 5000 });
    const back = decode(bytes, { maxDepth: 5000 });
    let v = back;
    for (let i = 299; i >= 0; i--) {
      assert.equal(v[1], i);
      v = v[0];
    }
    assert.ok(v instanceof Boxed);
    v = v.inner;
    for (let i = 399; i >= 0; i--) {
      assert.equal(v[1], i);
      v = v[0];
    }
    assert.equal(v, 'in');
    assert.equal(bytesToHex(encode(back, { maxDepth: 5000 })), bytesToHex(bytes));
  } finally {
    removeExtension(78);
  }
});

// ---------------------------------------------------------------------------
// Transfers, inputs that are not bytes, objects that are not maps
// ---------------------------------------------------------------------------

test('transferring a result\'s buffer detaches the slab: later encodes start a new one', () => {
  const enc = new Encoder();
  for (const encodeOne of [(v) => encode(v), (v) => enc.encode(v)]) {
    const first = encodeOne({ a: 1, b: 'text' });
    const want = bytesToHex(first);
    const moved = structuredClone(first.buffer, { transfer: [first.buffer] });
    assert.equal(first.length, 0, 'the view is detached');
    assert.ok(moved.byteLength >= want.length / 2);
    const again = encodeOne({ a: 1, b: 'text' });
    assert.equal(bytesToHex(again), want);
    // a copy owns exactly its bytes and transfers alone
    const own = encodeOne([1, 2, 3]).slice();
    assert.equal(own.buffer.byteLength, own.length);
    assert.deepEqual(decode(structuredClone(own.buffer, { transfer: [own.buffer] })), [1, 2, 3]);
    assert.deepEqual(decode(encodeOne('after')), 'after');
  }
});

test('inputs that are not bytes are TypeErrors', () => {
  const bad = ['hello', null, undefined, 42, {}, { length: 4 }, [0xc1, 0x70, 0x10, 300], [0xc1, 0x70, 0x10, 'e0'], [0xc1, 0x70, 0x10, 1.5]];
  const dec = new Decoder();
  for (const input of bad) {
    assert.throws(() => decode(input), TypeError, show(input));
    assert.throws(() => dec.decode(input), TypeError, show(input));
    assert.throws(() => tersa.decodeStream(input), TypeError, show(input));
    assert.throws(() => new tersa.StreamDecoder().feed(input), TypeError, show(input));
  }
  // byte containers of every kind still decode
  const bytes = encode({ x: [1, 'two'] });
  for (const input of [bytes, Buffer.from(bytes), bytes.slice().buffer, new DataView(bytes.slice().buffer), Array.from(bytes)]) {
    assert.deepEqual(decode(input), { x: [1, 'two'] });
  }
});

test('classInstances: "map" refuses objects whose contents are not properties', () => {
  class Point {
    constructor() {
      this.x = 1;
      this.y = 2;
    }
  }
  assert.deepEqual(decode(encode(new Point(), { classInstances: 'map' })), { x: 1, y: 2 });
  const refused = [new Set([1, 2]), new WeakMap(), new Int32Array([1]), new Float64Array(2), new ArrayBuffer(4), /re/, new Error('e'),
    Promise.resolve(1), Object(3), new (class extends Set {})([1]), vm.runInNewContext('new Set([1])'), vm.runInNewContext('new Map([["a", 1]])')];
  for (const v of refused) {
    for (const where of [v, { inside: [v] }]) {
      assert.throws(() => encode(where, { classInstances: 'map' }), (e) => e instanceof EncodeError && /unsupported type/.test(e.reason), show(v));
    }
  }
  assert.throws(() => encode({ s: new Set() }, { classInstances: 'map' }), (e) => e.path === '$["s"]');
});

test('64-bit integers around 2^53, 2^63 and 2^64 in one slot (absolute and delta forms) decode to their values', () => {
  const edges = [0n, 1n, -1n, 23n, 24n, -9n, -10n];
  for (const b of [52n, 53n, 54n, 62n, 63n, 64n]) for (const d of [-2n, -1n, 0n, 1n]) edges.push((1n << b) + d, -((1n << b) + d));
  const values = edges.filter((v) => v >= -(1n << 63n) && v < 1n << 64n);
  const g = rng(7);
  for (let i = 0; i < 400; i++) values.push(BigInt.asIntN(64, (BigInt(g.int(2 ** 30)) << 34n) ^ BigInt(g.int(2 ** 30))) * (i % 3 === 0 ? 1n : -1n));
  const asJs = (v) => (v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v);
  const want = values.map(asJs);
  for (const order of [want, [...want].reverse()]) {
    const bytes = encode(order);
    assert.deepEqual(decode(bytes), order);
    assert.deepEqual(decode(bytes, { integers: 'bigint' }), order.map((v) => BigInt(v)));
    assert.equal(bytesToHex(encode(decode(bytes))), bytesToHex(bytes));
  }
});

test('arrays of binary floats decode on the array fast path exactly as read() would', () => {
  const f32s = [0.1875, -0.0, 3.4028234663852886e38, 1.401298464324817e-45, -2.5, 16777216];
  const f64s = [0.1 + 0.2, -1e-300, 5e-324, 1.7976931348623157e308, 2 / 3];
  const specials = [NaN, Infinity, -Infinity];
  for (const arr of [[...f32s, ...f64s, ...specials, 7, 'x'], [...specials, ...f32s], Array.from({ length: 40 }, (_, i) => i / 3 + 0.5)]) {
    const back = tersa.decode(tersa.encode(arr));
    assert.equal(back.length, arr.length);
    arr.forEach((x, i) => assert.ok(Object.is(back[i], x), `element ${i}: ${back[i]} vs ${x}`));
  }
  // exactFloats keeps integral binary floats apart from integers (read()'s path).
  const exact = tersa.decode(tersa.encode([0.5, 3.4028234663852886e38, 0.25, 0.125, 1.5, 2.5]), { exactFloats: true });
  assert.ok(exact[1] instanceof tersa.Float64 && exact[1].value === 3.4028234663852886e38 && exact[0] === 0.5);
  // A buffer cut inside a float of a long array is truncated where read() says.
  const b = tersa.encode(Array.from({ length: 20 }, (_, i) => i + 0.1));
  for (let cut = b.length - 8; cut < b.length; cut++) {
    assert.throws(() => tersa.decode(b.subarray(0, cut)), (e) => e.code === 'truncated');
  }
});

test('pairs whose first item is an F64 (coordinates) decode exactly as read() would', () => {
  const f64 = [0.1 + 0.2, -1e-300, 5e-324, 1.7976931348623157e308, -0.1 - 0.2];
  const others = [NaN, Infinity, -Infinity, -0.0, 0.5, 7, 2 ** 40, 1.5e-7, 'x', null, [1.25, 2.5]];
  const pairs = [];
  for (const x of [...f64, NaN, Infinity]) for (const y of [...f64, ...others]) pairs.push([x, y]);
  for (const p of pairs) {
    const bytes = tersa.encode(p);
    const back = tersa.decode(bytes);
    assert.equal(back.length, 2);
    assert.ok(Object.is(back[0], p[0]) && (typeof p[1] === 'object' ? assert.deepEqual(back[1], p[1]) ?? true : Object.is(back[1], p[1])), `${p} -> ${back}`);
    // a buffer cut anywhere inside the pair is truncated
    for (let cut = 4; cut < bytes.length; cut++) assert.throws(() => tersa.decode(bytes.subarray(0, cut)), (e) => e.code === 'truncated' || e.code === 'length_exceeds_input');
  }
  // many pairs in one buffer, and exactFloats (read()'s path, Float64 for integral floats)
  const all = tersa.decode(tersa.encode(pairs));
  pairs.forEach((p, i) => assert.ok(Object.is(all[i][0], p[0]), `pair ${i}`));
  const exact = tersa.decode(tersa.encode([0.1 + 0.2, 2 ** 60 + 2 ** 20]), { exactFloats: true });
  assert.ok(exact[0] === 0.1 + 0.2 && exact[1] instanceof tersa.Float64 && exact[1].value === 2 ** 60 + 2 ** 20);
});

test('integers of five- to nine-byte varints decode on the array fast path exactly as read() would', () => {
  const T53 = 2 ** 53;
  const wide = [2 ** 28, 2 ** 31, 2 ** 32 - 1, 2 ** 35 + 7, T53 - 25, T53 - 24, T53 - 1, -(2 ** 28) - 9, -(2 ** 40), -(T53 - 1),
    2n ** 53n + 1n, 2n ** 56n, 2n ** 56n + 123n, 2n ** 63n - 1n, -(2n ** 63n), -(2n ** 56n) - 5n, 2n ** 64n - 1n, 2n ** 63n, 2n ** 64n + 5n];
  // runs of ids (written as deltas from the slot's register) after wide values
  const ids = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? 1448531349167323874n + BigInt(i) : 2216221679 + i * 1000));
  for (const arr of [wide, [...wide].reverse(), ids, [7, 'x', ...wide, null]]) {
    const back = tersa.decode(tersa.encode(arr));
    assert.equal(back.length, arr.length);
    arr.forEach((x, i) => {
      // one value in a map: read()'s path
      const alone = tersa.decode(tersa.encode({ v: x })).v;
      assert.ok(Object.is(back[i], alone) || (typeof alone === 'bigint' && back[i] === alone), `element ${i}: ${back[i]} vs ${alone}`);
      assert.ok(back[i] === x || (typeof x === 'bigint' && back[i] === Number(x) && Number.isSafeInteger(back[i])), `element ${i}: ${back[i]} vs ${x}`);
    });
    const big = tersa.decode(tersa.encode(arr), { integers: 'bigint' });
    arr.forEach((x, i) => assert.equal(big[i], typeof x === 'bigint' ? x : x === null || typeof x === 'string' ? x : BigInt(x)));
  }
  // A buffer cut inside a wide integer of a long array is truncated where read() says.
  const b = tersa.encode(Array.from({ length: 8 }, () => 2n ** 60n + 3n));
  for (let cut = b.length - 9; cut < b.length; cut++) {
    assert.throws(() => tersa.decode(b.subarray(0, cut)), (e) => e.code === 'truncated');
  }
});

// Frozen intrinsics (SES lockdown, `Object.freeze(Object.prototype)`) make
// assignments to inherited names such as "constructor" throw: every path that
// builds a decoded object (a shape used once, one used often enough for its
// compiled factory, a generic map) must define those keys as own properties.
const FROZEN_CHILD = String.raw`
import { encode, decode, Encoder } from ${JSON.stringify(new URL('../dist/esm/index.js', import.meta.url).href)};
Object.freeze(Object.prototype);
const fails = [];
const keysets = [['constructor', 'a'], ['toString', 'valueOf', 'x'], ['__proto__', 'hasOwnProperty'], ['id', 'constructor']];
for (const keys of keysets) {
  const make = (i) => { const o = {}; for (const k of keys) Object.defineProperty(o, k, { value: i, writable: true, enumerable: true, configurable: true }); return o; };
  const docs = [make(1), Array.from({ length: 600 }, (_, i) => make(i)), new Map([[1, make(2)]])];
  for (const doc of docs) {
    try {
      const got = decode(encode(doc));
      const objs = Array.isArray(got) ? got : got instanceof Map ? [...got.values()] : [got];
      for (const o of objs) {
        if (Object.getPrototypeOf(o) !== Object.prototype) fails.push(keys + ': prototype');
        else if (JSON.stringify(Object.keys(o)) !== JSON.stringify(keys) || !keys.every((k) => Object.hasOwn(o, k))) fails.push(keys + ': keys ' + Object.keys(o));
      }
    } catch (e) {
      fails.push(keys + ': ' + e);
    }
  }
}
process.stdout.write(JSON.stringify(fails));
`;

test('objects with keys Object.prototype has decode under frozen intrinsics', () => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', FROZEN_CHILD], { maxBuffer: 1 << 24 });
  assert.equal(r.status, 0, `child exited with ${r.status}: ${String(r.stderr).slice(0, 2000)}`);
  assert.deepEqual(JSON.parse(String(r.stdout)), []);
});

test('strings in prefix form copied from an Encoder\'s kept bytes: the same bytes as a fresh Encoder\'s, call after call', () => {
  // every prefix length mod 4 (the copy goes by words from the next boundary),
  // characters of 1 to 4 UTF-8 bytes on both sides of the prefix's end, a
  // prefix capped at 127 bytes, and strings too long to keep
  const bases = ['abcdefghijklmnopqrstuvwxyz0123456789', 'éüñçàèìòùâêîôûäëïöü', '日本語のテキストです日本語のテキスト', '😀😁😂🤣😃😄😅😆', 'ab😀cdé日f'];
  const values = [];
  for (const b of bases) {
    const cps = Array.from(b);
    for (let cut = 1; cut < cps.length; cut += 1) {
      const head = cps.slice(0, cut).join('');
      values.push({ s: head + '|x' + cut, t: head + 'é' + cut });
    }
  }
  values.push({ s: 'p'.repeat(200) + 'a', t: 'p'.repeat(200) + 'b' }, { s: 'q'.repeat(300) + 'é', t: 'q'.repeat(300) + '日' });
  const value = { rows: values, again: values.map((v) => v.s) };
  const e = new Encoder();
  const want = bytesToHex(new Encoder().encode(value));
  for (let k = 0; k < 3; k++) assert.equal(bytesToHex(e.encode(value)), want, `call ${k + 1}`);
  assert.deepEqual(decode(e.encode(value)), value);
});
