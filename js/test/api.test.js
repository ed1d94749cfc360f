// API behaviour: type mappings, options, errors with paths, security, streams,
// dictionaries, extensions, entry points.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as tersa from '../dist/esm/index.js';
import { bytesToHex, hexToBytes, modelJS, show } from './helpers.js';

const {
  encode, decode, encodeStream, decodeStream, Encoder, Decoder, StreamEncoder, StreamDecoder,
  Dictionary, DecodeError, EncodeError, Timestamp, Ext, Float64, addExtension, removeExtension, diag,
} = tersa;

const rt = (v, opts) => decode(encode(v), opts);

test('numbers: integers, floats, -0, BigInt, unsafe integers', () => {
  assert.equal(rt(42), 42);
  assert.equal(rt(-9), -9);
  assert.equal(rt(1.5), 1.5);
  assert.ok(Object.is(rt(-0), -0), '-0 stays a float');
  assert.equal(bytesToHex(encode(-0)), 'c17010e300000080');
  assert.equal(rt(2 ** 53 - 1), 2 ** 53 - 1);
  // numbers beyond the safe range are floats (they already are in JS)
  assert.equal(diag(rt(2 ** 60, { exactFloats: true })), '1.152921504606847e+18');
  assert.equal(rt(2 ** 60), 2 ** 60);
  // BigInt: any size; small ones come back as numbers, large ones as BigInt
  assert.equal(rt(5n), 5);
  assert.equal(rt(2n ** 63n), 2n ** 63n);
  assert.equal(rt(-(2n ** 63n)), -(2n ** 63n));
  assert.equal(rt(2n ** 200n + 7n), 2n ** 200n + 7n);
  assert.equal(rt(-(2n ** 90n)), -(2n ** 90n));
  assert.equal(rt(12n, { integers: 'bigint' }), 12n);
  // integers are never rounded: INT_POS above 2^53 decodes to BigInt
  assert.equal(decode(encode(9007199254740993n)), 9007199254740993n);
  assert.ok(Number.isNaN(rt(NaN)));
  assert.equal(rt(Infinity), Infinity);
  assert.equal(rt(-Infinity), -Infinity);
  assert.equal(rt(0.1 + 0.2), 0.1 + 0.2);
  assert.equal(rt(5e-324), 5e-324);
  assert.equal(rt(1.7976931348623157e308), 1.7976931348623157e308);
});

test('arrays of numbers: every size, varint width and fallback in the middle', () => {
  // decimals whose mantissas take one to six varint bytes, around the 2^28, 2^32 and 2^35 edges
  const decs = [0.5, -1.25, 47.605063, -122.3251523, 26843.5455, 42949.67295, -42949.67296, 3435973.8367, 3435973.8368, 1234567890.1, -9876543.21];
  const ints = [0, 7, -8, 200, -300, 70000, 2 ** 31, -(2 ** 40), 2 ** 53 - 1];
  const others = ['x', null, NaN, Infinity, 2n ** 70n, 1.5e300, [1.5]];
  const pool = [...decs, ...ints, ...others];
  const r = (() => { let a = 7; return () => (a = (Math.imul(a, 1103515245) + 12345) >>> 0) / 4294967296; })();
  for (let k = 0; k < 400; k++) {
    const n = 2 + Math.floor(r() * 5);
    const a = [];
    for (let i = 0; i < n; i++) a.push(k % 3 === 0 ? pool[Math.floor(r() * pool.length)] : decs[Math.floor(r() * decs.length)] + (k % 5) * 0.001);
    const got = rt(a);
    assert.equal(got.length, n);
    for (let i = 0; i < n; i++) {
      const same = Object.is(got[i], a[i]) || (Array.isArray(a[i]) && got[i][0] === a[i][0]);
      if (!same) assert.fail(`[${a.map(String)}][${i}] decoded as ${String(got[i])}`);
    }
    // each element decodes as it does on its own
    for (let i = 0; i < n; i++) if (typeof a[i] === 'number') assert.ok(Object.is(got[i], rt(a[i])));
  }
  // truncated inside an element's varint: a typed error at that element
  const b = encode([47.605063, -122.3251523]);
  for (let cut = 4; cut < b.length; cut++) {
    assert.throws(() => decode(b.subarray(0, cut)), (e) => e instanceof DecodeError && (e.code === 'truncated' || e.code === 'length_exceeds_input'));
  }
});

test('Float64: exact floats on demand', () => {
  const v = [new Float64(2100), new Float64(0), 2100, Float64.fromBits(0x7ff0000000000001n)];
  const b = encode(v);
  assert.deepEqual(decode(b).slice(0, 3), [2100, 0, 2100], 'default: plain numbers');
  const exact = decode(b, { exactFloats: true });
  assert.ok(exact[0] instanceof Float64 && exact[0].value === 2100);
  assert.ok(exact[1] instanceof Float64 && Object.is(exact[1].value, 0));
  assert.equal(exact[2], 2100);
  assert.equal(exact[3].bits, 0x7ff0000000000001n);
  assert.equal(bytesToHex(encode(exact)), bytesToHex(b), 're-encodes to the same bytes');
  assert.equal(+new Float64(1.25), 1.25);
});

test('strings: unicode, long strings, lone surrogates rejected', () => {
  for (const s of ['', 'a', 'é', '日本語', '😀 emoji', '\u0000\u007f', 'x'.repeat(100), 'ü'.repeat(1000), 'a😀'.repeat(5000), '\ufeffBOM', '\ufffd']) {
    assert.equal(rt(s), s);
    assert.equal(rt([s, s, s + '!', s]).join('|'), [s, s, s + '!', s].join('|'));
  }
  assert.throws(() => encode('a\ud800b'), (e) => e instanceof EncodeError && /surrogate/.test(e.message) && e.path === '$');
  assert.throws(() => encode({ x: ['ok', '\udc00'] }), (e) => e instanceof EncodeError && e.path === '$["x"][1]');
  assert.throws(() => encode('\ud800'.repeat(40)), EncodeError);
});

test('timestamp-like strings stay strings', () => {
  for (const s of ['2025-04-16T09:23:47Z', '2025-04-16', '2025-04-16 09:23:47.123456+05:30', '2025-02-30', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999-23:59']) {
    assert.equal(rt(s), s);
  }
});

test('timestamp strings: hours that share a cache entry, before 1970, every form', () => {
  // hours 64 apart, days apart and years apart, in turns, in the forms the decoder renders
  // (Date.UTC reads years 0-99 as 1900-1999: year 1 is set with setUTCFullYear.)
  const year1 = new Date(0).setUTCFullYear(1, 0, 1);
  // the last day of year 9999 begins 6 hours before the latest value below (k * 61 s)
  const base = [Date.UTC(2024, 0, 21, 1, 13, 54), Date.UTC(2024, 0, 23, 17, 2, 5), Date.UTC(1969, 11, 31, 23, 59, 59), year1, Date.UTC(9999, 11, 31, 0, 0, 0)];
  const iso = (ms) => new Date(ms).toISOString().replace(/^\+0*(\d{4})/, '$1');
  const forms = [
    (ms) => iso(ms).slice(0, 19) + 'Z',
    (ms) => iso(ms).slice(0, 23) + 'Z',
    (ms) => iso(ms).slice(0, 19) + '.302426755Z',
    (ms) => iso(ms).slice(0, 19) + '.952135+01:00',
    (ms) => iso(ms).slice(0, 10) + ' ' + iso(ms).slice(11, 19) + 'Z',
    (ms) => iso(ms).slice(0, 10),
  ];
  const values = [];
  for (let k = 0; k < 300; k++) {
    const b = base[k % base.length];
    const ms = b + ((k * 7) % 5) * 64 * 3600000 * (k % 2 ? 1 : -1) * (b === year1 || b > Date.UTC(9000, 0) ? 0 : 1) + k * 61000;
    values.push(forms[k % forms.length](ms));
  }
  for (const y of ['0001', '1969', '1970', '9999']) assert.ok(values.some((v) => v.startsWith(y + '-')), `a value in year ${y}`);
  assert.ok(values.every((v) => /^\d{4}-/.test(v)), 'every value has a 4-digit year');
  assert.deepEqual(rt(values), values);
  assert.deepEqual(rt(values.map((v) => ({ at: v, other: v }))), values.map((v) => ({ at: v, other: v })));
});

test('binary, symbols, timestamps, extensions', () => {
  const bin = Uint8Array.of(0, 1, 255);
  assert.deepEqual(rt(bin), bin);
  assert.ok(rt(Buffer.from('hi')) instanceof Uint8Array);
  assert.equal(rt(Symbol.for('active')), Symbol.for('active'));
  assert.throws(() => encode(Symbol('local')), (e) => e instanceof EncodeError && /registered/.test(e.message));
  const d = new Date('2025-04-16T09:23:47.123Z');
  const back = rt(d);
  assert.ok(back instanceof Date && back.getTime() === d.getTime());
  assert.throws(() => encode(new Date(NaN)), EncodeError);
  const t = new Timestamp(1744795427, 123456789, 'offset', -300);
  assert.ok(rt(t).equals(t));
  const f = new Timestamp(1744795427, 0, 'floating');
  assert.ok(rt(f).equals(f));
  const u = rt(new Timestamp(1744795427, 5, 'utc'));
  assert.ok(u instanceof Timestamp && u.nanos === 5, 'nanoseconds a Date would lose give a Timestamp');
  assert.ok(rt(d, { dates: 'timestamp' }) instanceof Timestamp);
  assert.throws(() => encode(new Timestamp(253402300800)), EncodeError);
  assert.throws(() => encode(new Timestamp(0, 0, 'offset', 1440)), EncodeError);
  const ext = new Ext(7, Uint8Array.of(1, 2));
  const e2 = rt(ext);
  assert.ok(e2 instanceof Ext && e2.type === 7 && bytesToHex(e2.data) === '0102');
  assert.throws(() => encode(new Ext(65536, new Uint8Array(0))), EncodeError);
});

test('extension registry', () => {
  class Point {
    constructor(x, y) {
      this.x = x;
      this.y = y;
    }
  }
  addExtension({
    type: 42,
    Class: Point,
    write: (p) => Uint8Array.of(p.x, p.y),
    read: (b) => new Point(b[0], b[1]),
  });
  try {
    const v = rt({ a: new Point(3, 4), list: [new Point(1, 2)] });
    assert.ok(v.a instanceof Point && v.a.x === 3 && v.a.y === 4);
    assert.ok(v.list[0] instanceof Point);
    assert.equal(diag(new Point(1, 2)), "ext(42, h'0102')");
  } finally {
    removeExtension(42);
  }
  const raw = rt(new Ext(42, Uint8Array.of(9)));
  assert.ok(raw instanceof Ext, 'unregistered types decode to Ext');
  class Other {}
  assert.throws(() => encode({ o: new Other() }), (e) => e instanceof EncodeError && /Other/.test(e.message) && e.path === '$["o"]');
  assert.deepEqual(decode(encode(Object.assign(new Other(), { k: 1 }), { classInstances: 'map' })), { k: 1 });
});

test('unencodable values name their type and path', () => {
  const cases = [
    [{ a: [1, 2, { user: undefined }] }, '$["a"][2]["user"]', /undefined/],
    [[0, 1, 2, () => 1], '$[3]', /function/],
    [new Map([['k', Symbol('x')]]), '$["k"]', /registered/],
    [{ 'odd key': [new WeakMap()] }, '$["odd key"][0]', /WeakMap/],
  ];
  for (const [v, path, re] of cases) {
    assert.throws(() => encode(v), (e) => {
      assert.ok(e instanceof EncodeError, String(e));
      assert.equal(e.path, path);
      assert.match(e.message, re);
      return true;
    });
  }
  assert.deepEqual(decode(encode({ a: undefined }, { undefined: 'null' })), { a: null });
});

test('cycles and depth raise instead of overflowing the stack', () => {
  const a = { name: 'a', children: [] };
  a.children.push({ parent: a });
  assert.throws(() => encode(a), (e) => e instanceof EncodeError && /circular/.test(e.message) && e.path === '$["children"][0]["parent"]');
  const arr = [];
  arr.push(arr);
  assert.throws(() => encode(arr), (e) => e instanceof EncodeError && /circular/.test(e.message));
  let deep = [];
  for (let i = 0; i < 1500; i++) deep = [deep];
  assert.throws(() => encode(deep), (e) => e instanceof EncodeError && /deeper/.test(e.message));
  let ok = [];
  for (let i = 0; i < 999; i++) ok = [ok];
  assert.ok(decode(encode(ok)));
  assert.throws(() => encode(ok, { maxDepth: 10 }), EncodeError);
  // a shared (non-cyclic) object is fine
  const shared = { s: 1 };
  assert.deepEqual(rt([shared, shared]), [{ s: 1 }, { s: 1 }]);
  // decoding deep input: depth_exceeded, never a stack overflow
  const bytes = new Uint8Array(3 + 100000).fill(0x81);
  bytes.set([0xc1, 0x70, 0x10]);
  assert.throws(() => decode(bytes), (e) => e instanceof DecodeError && e.code === 'depth_exceeded' && e.offset === 1003);
  assert.throws(() => decode(bytes, { maxDepth: 100000 }), (e) => e instanceof DecodeError || e instanceof RangeError);
});

test('maps: objects, Maps, integer-like keys, __proto__', () => {
  assert.deepEqual(rt({ b: 1, a: 2 }), { b: 1, a: 2 });
  assert.deepEqual(Object.keys(rt({ b: 1, a: 2 })), ['b', 'a']);
  // Maps with string keys are shaped maps and decode to objects
  assert.deepEqual(rt(new Map([['x', 1]])), { x: 1 });
  assert.ok(rt(new Map([['x', 1]]), { maps: 'map' }) instanceof Map);
  // non-string keys keep a Map
  const m = new Map([[1, 'one'], [1.5, 'x'], [true, 't'], [null, 'n'], ['s', 's'], [Symbol.for('y'), 'y']]);
  const mb = rt(m);
  assert.ok(mb instanceof Map);
  assert.deepEqual([...mb.values()], [...m.values()]);
  assert.equal(mb.get(1), 'one');
  assert.equal(mb.get(1.5), 'x');
  // integral float keys stay distinct from integer keys
  const fk = rt(new Map([[1, 'int'], [new Float64(1), 'float']]));
  assert.equal(fk.size, 2);
  assert.equal(fk.get(1), 'int');
  // integer-like keys: an object would reorder them, so they decode to a Map in order
  const bytes = encode(new Map([['b', 1], ['10', 2], ['2', 3]]));
  const v = decode(bytes);
  assert.ok(v instanceof Map);
  assert.deepEqual([...v.keys()], ['b', '10', '2']);
  assert.equal(bytesToHex(encode(v)), bytesToHex(bytes), 're-encoding reproduces the bytes');
  // ... unless the object order is the same
  const o = decode(encode({ 1: 'a', 2: 'b', x: 'c' }));
  assert.ok(!(o instanceof Map));
  assert.deepEqual(Object.keys(o), ['1', '2', 'x']);
  // symbol keys
  const sm = rt(new Map([[Symbol.for('id'), 1]]));
  assert.ok(sm instanceof Map && sm.get(Symbol.for('id')) === 1);
});

test('__proto__, constructor and prototype never pollute', () => {
  const evil = hexToBytes('c17010' + '93' + '495f5f70726f746f5f5f' + '4b636f6e7374727563746f72' + '4970726f746f74797065' + '9142706f' + 'a9' + 'aa' + 'ab');
  for (let round = 0; round < 5; round++) {
    // repeated decodes go through the compiled object factory too
    const v = decode(evil);
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.ok(Object.hasOwn(v, '__proto__'));
    assert.deepEqual(Object.keys(v), ['__proto__', 'constructor', 'prototype']);
    assert.deepEqual(v.__proto__, { po: 1 });
    assert.equal(v.constructor, 2);
    assert.equal({}.po, undefined);
    assert.equal(Object.prototype.po, undefined);
  }
  // JSON.parse semantics survive a round trip
  const j = JSON.parse('{"__proto__": {"x": 1}, "a": 1}');
  const back = rt(j);
  assert.ok(Object.hasOwn(back, '__proto__'));
  assert.equal({}.x, undefined);
  // generic maps with string keys too
  const gen = hexToBytes('c17010f403495f5f70726f746f5f5f90');
  const g = decode(gen);
  assert.ok(Object.hasOwn(g, '__proto__') && Object.getPrototypeOf(g) === Object.prototype);
});

test('polluted Object.prototype does not leak into encodings', () => {
  Object.prototype.polluted = 1;
  try {
    assert.deepEqual(decode(encode({ a: 1 })), { a: 1 });
  } finally {
    delete Object.prototype.polluted;
  }
  const nullProto = Object.create(null);
  nullProto.k = 'v';
  assert.deepEqual(decode(encode(nullProto)), { k: 'v' });
});

test('DecodeError has code and offset', () => {
  assert.throws(() => decode(hexToBytes('c17010e0e0')), (e) => e instanceof DecodeError && e.code === 'trailing_bytes' && e.offset === 4);
  assert.throws(() => decode(new Uint8Array(0)), (e) => e.code === 'truncated' && e.offset === 0);
  assert.throws(() => decode(hexToBytes('c1701242')), (e) => e.code === 'bad_flags');
});

test('Encoder/Decoder reuse and independence of results', () => {
  const enc = new Encoder();
  const dec = new Decoder();
  const docs = [{ id: 'usr_1', n: 1 }, ['x', 'y'], { id: 'usr_2', n: 2 }];
  const bufs = docs.map((d) => enc.encode(d));
  // earlier results are not overwritten by later encodes
  assert.deepEqual(bufs.map((b) => dec.decode(b)), docs);
  for (let i = 0; i < 2000; i++) enc.encode({ i, s: 'filler'.repeat(i % 7) });
  assert.deepEqual(bufs.map((b) => dec.decode(b)), docs);
  // the same encodings as fresh encoders
  assert.deepEqual(bufs.map(bytesToHex), docs.map((d) => bytesToHex(encode(d))));
});

test('re-entrant use from extensions', () => {
  class Box {
    constructor(v) {
      this.v = v;
    }
  }
  addExtension({ type: 100, Class: Box, write: (b) => encode(b.v), read: (d) => new Box(decode(d)) });
  try {
    const v = rt({ a: 'shared', b: new Box({ a: 'shared', inner: [1, 2] }), c: 'shared' });
    assert.deepEqual(v.b.v, { a: 'shared', inner: [1, 2] });
    assert.equal(v.c, 'shared');
  } finally {
    removeExtension(100);
  }
});

test('streams: frames share tables; incremental decoding', () => {
  const values = [{ id: 'usr_1', role: 'admin' }, { id: 'usr_2', role: 'admin' }, 'admin', 1000, 1001];
  const all = encodeStream(values);
  assert.deepEqual(decodeStream(all), values);
  const se = new StreamEncoder();
  const chunks = values.map((v) => se.write(v));
  assert.equal(bytesToHex(Buffer.concat(chunks)), bytesToHex(all));
  const sd = new StreamDecoder();
  const got = [];
  for (const c of chunks) {
    sd.feed(c);
    for (const v of sd) got.push(v);
  }
  sd.end();
  assert.deepEqual(got, values);
  // truncated stream: end() reports where
  const sd2 = new StreamDecoder();
  sd2.feed(all.subarray(0, all.length - 1));
  assert.equal([...sd2].length, values.length - 1);
  assert.throws(() => sd2.end(), (e) => e instanceof DecodeError && e.code === 'length_exceeds_input');
  // single-value decoder rejects streams and vice versa
  assert.throws(() => decode(all), (e) => e.code === 'bad_flags');
  assert.throws(() => decodeStream(encode(1)), (e) => e.code === 'bad_flags');
  // a failed write poisons the stream encoder
  const se2 = new StreamEncoder();
  se2.write('a');
  assert.throws(() => se2.write([undefined]), EncodeError);
  assert.throws(() => se2.write('b'), /previous write failed/);
});

test('dictionaries: id, serialize/parse, fromSamples, mismatch', () => {
  const d = new Dictionary(['admin', 'user'], [['id', 'name', 'role']]);
  assert.equal(typeof d.id, 'bigint');
  const back = Dictionary.parse(d.serialize());
  assert.equal(back.id, d.id);
  assert.deepEqual(back.strings, d.strings);
  const v = [{ id: 1, name: 'x', role: 'admin' }];
  const b = encode(v, { dictionary: d });
  assert.ok(b.length < encode(v).length);
  assert.deepEqual(decode(b, { dictionaries: [d] }), v);
  assert.throws(() => decode(b), (e) => e.code === 'unknown_dictionary' && e.offset === 3);
  const other = new Dictionary(['admin']);
  assert.throws(() => decode(b, { dictionaries: [other] }), (e) => e.code === 'unknown_dictionary');
  assert.throws(() => new Dictionary(['a']), RangeError);
  assert.throws(() => new Dictionary(['ab', 'ab']), RangeError);
  assert.throws(() => new Dictionary([], [['a', 'a']]), RangeError);
  // built from samples
  const samples = [];
  for (let i = 0; i < 20; i++) samples.push({ id: i, status: i % 2 ? 'active' : 'inactive', currency: 'USD', tags: ['x', 'y'] });
  const sd = Dictionary.fromSamples(samples);
  assert.ok(sd.shapes.some((s) => s.join() === 'id,status,currency,tags'));
  assert.ok(sd.strings.includes('USD') && sd.strings.includes('active'));
  const one = { id: 99, status: 'active', currency: 'USD', tags: ['x', 'y'] };
  const small = encode(one, { dictionary: sd });
  assert.ok(small.length < encode(one).length / 2, `${small.length} vs ${encode(one).length}`);
  assert.deepEqual(decode(small, { dictionaries: [sd] }), one);
});

test('Dictionary.fromSamples builds what Ruby, Python and the CLI build from the same samples', () => {
  // The samples of ruby/test/test_dictionary.rb and python/tests/test_dictionary.py.
  const samples = [['AAPL', 'AAPL', 'AAPL', 'GOOG', 'GOOG'], { sym: 'AAPL', px: 1 }, { sym: 'MSFT', px: 2 },
    new Map([['sym', 'MSFT'], [Symbol.for('note'), Symbol.for('active')]]), Symbol.for('active')];
  const d = Dictionary.fromSamples(samples);
  assert.deepEqual(d.strings, ['active', 'AAPL', 'MSFT']); // in two samples each, most bytes saved first
  assert.deepEqual(d.shapes, [['sym', 'px']]);
  assert.equal(d.id, 0xeffd7698f9e92229n);
  assert.equal(Dictionary.fromSamples(samples, { minCount: 1 }).strings.length, 4);
  assert.deepEqual(Dictionary.fromSamples([samples[0]]).strings, ['AAPL', 'GOOG']); // one sample keeps everything
  // Equal savings and lengths (5 bytes): UTF-8 byte order (EE < F0), not UTF-16 order (D800 < E000).
  assert.deepEqual(Dictionary.fromSamples(['a\u{10000}', 'a\uE000b', 'a\u{10000}', 'a\uE000b']).strings,
    ['a\uE000b', 'a\u{10000}']);
});

test('diag notation', () => {
  assert.equal(diag([1, 1.5, 'a"b', null, true, Uint8Array.of(1), Symbol.for('s'), new Float64(2100), new Map([[1, 2]])]),
    '[1, 1.5, "a\\"b", null, true, h\'01\', sym("s"), 2100.0, {1: 2}]');
  assert.equal(diag(new Timestamp(0, 500000000, 'offset', 90)), 'time("1970-01-01T01:30:00.5+01:30")');
  assert.equal(diag(1e22), '1.0e+22');
});

test('entry points: ESM subpaths and CommonJS', async () => {
  const encOnly = await import('tersa/encode');
  const decOnly = await import('tersa/decode');
  assert.equal(typeof encOnly.encode, 'function');
  assert.equal(encOnly.decode, undefined);
  assert.equal(typeof decOnly.decode, 'function');
  assert.equal(decOnly.encode, undefined);
  assert.deepEqual(decOnly.decode(encOnly.encode({ a: [1, 'b'] })), { a: [1, 'b'] });
  const require = createRequire(import.meta.url);
  const cjs = require('tersa');
  assert.equal(typeof cjs.encode, 'function');
  assert.deepEqual(cjs.decode(cjs.encode({ x: 1 })), { x: 1 });
  assert.equal(typeof require('tersa/decode').Decoder, 'function');
  // the decode entry loads no encoder module, directly or through the modules it imports
  const fs = await import('node:fs');
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(new URL('../dist/esm/' + file, import.meta.url), 'utf8');
    for (const m of text.matchAll(/^(?:import|export)[^;]*? from '\.\/([\w-]+\.js)'/gm)) visit(m[1]);
  };
  visit('decode.js');
  assert.ok(seen.has('decoder-values.js'), 'the import walk reached the readers');
  assert.deepEqual([...seen].filter((f) => f.startsWith('encoder')), [], 'decode entry imports the encoder');
});

test('one Decoder meets more message types, in turn, than its shape memo keeps', () => {
  // Keys sharing their first bytes, keys of under four bytes and keys that are
  // references to earlier values all reach the same shape-table index.
  const types = [];
  for (let t = 0; t < 40; t++) {
    if (t % 4 === 0) types.push({ ['user_' + t]: t, id: 'x' });
    else if (t % 4 === 1) types.push({ [String.fromCharCode(97 + (t % 26))]: t });
    else if (t % 4 === 2) types.push({ tag: 'k' + t, inner: { ['k' + t]: t } });
    else types.push({ ['user_' + t]: [t], ['user_' + (t + 1)]: null });
  }
  const bufs = types.map((v) => encode(v));
  const dec = new Decoder();
  for (let round = 0; round < 3; round++)
    for (let t = 0; t < types.length; t++) assert.deepEqual(dec.decode(bufs[t]), types[t], `type ${t}, round ${round}`);
});

test('a reused input buffer with new content decodes afresh', () => {
  const a = encode(['alpha-long-string', 'bravo-long-string']);
  const b = encode(['gamma-long-string', 'delta-long-string']);
  assert.equal(a.length, b.length);
  const buf = new Uint8Array(a.length);
  const dec = new Decoder();
  buf.set(a);
  assert.deepEqual(dec.decode(buf), ['alpha-long-string', 'bravo-long-string']);
  buf.set(b);
  assert.deepEqual(dec.decode(buf), ['gamma-long-string', 'delta-long-string']);
});

test('decode accepts ArrayBuffer and Buffer; binaryViews', () => {
  const b = encode({ bin: Uint8Array.of(1, 2, 3) });
  assert.deepEqual(decode(b.slice().buffer), { bin: Uint8Array.of(1, 2, 3) });
  assert.deepEqual(decode(Buffer.from(b)), { bin: Uint8Array.of(1, 2, 3) });
  const view = decode(b, { binaryViews: true }).bin;
  assert.equal(view.buffer, b.buffer);
  // binaries decoded from a Buffer are copies, not views
  const src = Buffer.from(b);
  const copy = decode(src).bin;
  src.fill(0);
  assert.deepEqual(copy, Uint8Array.of(1, 2, 3));
});

test('model of decoded values matches input across types', () => {
  const v = { n: null, t: true, i: -123456789, big: 2n ** 64n, f: 3.25, s: 'str', sym: Symbol.for('k'), bin: Uint8Array.of(9), arr: [[], {}], ts: new Timestamp(1, 2, 'floating'), ext: new Ext(1, Uint8Array.of(1)) };
  assert.equal(show(modelJS(rt(v, { exactFloats: true }))), show(modelJS(v)));
});

// One reference byte can repeat a long key in shape after shape. The buffer is
// the first map as encode writes it, then maps i > 0 as their canonical bytes
// (MAPDEF2, reference 0, "f%04x", 1, null). Decoding once kept every shape's
// keys as text in a global cache (1 MiB each): 400 shapes took 16 s, so a
// regression here is a hang, not a slow test.
test('security: a long key repeated by many shapes decodes in linear time', { timeout: 60_000 }, () => {
  const longKey = 'k'.repeat(1 << 20);
  const maps = 2000;
  const first = encode([{ [longKey]: 1, f0000: null }, ...new Array(maps - 1).fill(0)]);
  let end = -1;
  for (let i = 0; i + 1 < first.length; i++) if (first[i] === 0xa9 && first[i + 1] === 0xe0) { end = i + 2; break; }
  const tail = (i) => [0x92, 0x00, 0x45, ...new TextEncoder().encode('f' + i.toString(16).padStart(4, '0')), 0xa9, 0xe0];
  const bytes = [...first.subarray(0, end)];
  for (let i = 1; i < maps; i++) bytes.push(...tail(i));
  const value = decode(Uint8Array.from(bytes));
  assert.equal(value.length, maps);
  assert.deepEqual(Object.keys(value[maps - 1]), [longKey, 'f07cf']);
});

// Inputs a review found slow or crashing (each took seconds to minutes, or
// threw a TypeError/RangeError, before its fix).
test('security: container keys holding a long referenced string', { timeout: 60_000 }, () => {
  const long = 'x'.repeat(1 << 20);
  const value = [long, ...Array.from({ length: 64 }, () => new Map([[[long], null]]))];
  const back = decode(encode(value));
  assert.equal(back.length, 65);
  assert.deepEqual([...back[64].keys()][0], [long]);
  // equal container keys are still one key twice: {[1]: null, [1]: true}
  assert.throws(() => decode(hexToBytes('c17010f40581a9e081a9e2')), (e) => e instanceof DecodeError && e.code === 'duplicate_key');
});

test('security: big integers and large shapes decode in linear time', { timeout: 60_000 }, () => {
  const big = (1n << 1_600_000n) - 1n;
  assert.equal(decode(encode(big)), big);
  assert.equal(decode(encode(-big)), -big);
  const wide = {};
  for (let i = 0; i < 80_000; i++) wide['k' + i] = i & 7;
  const back = decode(encode(wide));
  assert.equal(Object.keys(back).length, 80_000);
  assert.equal(back.k79999, 79_999 & 7);
});

test('extension keys are compared by their bytes, whatever read() returns', () => {
  addExtension({ type: 5, read: (d) => d.length });
  try {
    assert.deepEqual(decode(hexToBytes('c17010f403f70b0341e0')), new Map([[1, null]]));
    assert.throws(() => decode(hexToBytes('c17010f405f70b0341e0f70b0341e1')), (e) => e instanceof DecodeError && e.code === 'duplicate_key');
  } finally {
    removeExtension(5);
  }
});

test('depth is checked before a container count', () => {
  for (const hex of ['c1701081f4ffff', 'c1701081f2ffff', 'c170108191ffff']) {
    assert.throws(() => decode(hexToBytes(hex), { maxDepth: 1 }), (e) => e instanceof DecodeError && e.code === 'depth_exceeded' && e.offset === 4, hex);
  }
});

test('keys nested in keys encode in linear time', () => {
  let v = 1;
  for (let i = 0; i < 30; i++) v = new Map([[v, 1]]);
  const bytes = encode(v);
  assert.ok(bytes.length < 200);
  assert.deepEqual(encode(decode(bytes)), bytes);
});

test('a maxDepth beyond the JavaScript stack is the limit that holds', () => {
  const bytes = new Uint8Array([0xc1, 0x70, 0x10, ...new Array(19_999).fill(0x81), 0x80]);
  let v = decode(bytes, { maxDepth: 1_000_000 });
  let levels = 1;
  for (; v.length === 1; v = v[0]) levels++;
  assert.equal(levels, 20_000);
  assert.deepEqual(v, []);
  assert.throws(() => decode(bytes, { maxDepth: 19_999 }), (e) => e instanceof DecodeError && e.code === 'depth_exceeded' && e.offset === bytes.length - 1);
});
