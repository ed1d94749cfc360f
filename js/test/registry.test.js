// One registry and one set of classes however the package is loaded: this
// process loads the built package by its name through both `import` (dist/esm)
// and `require` (dist/cjs), as an application and one of its dependencies may.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const esm = await import('tersa');
const cjs = require('tersa');
const esmEncode = await import('tersa/encode');
const cjsDecode = require('tersa/decode');

test('the two loads are distinct module instances', () => {
  // Otherwise the tests below would pass without checking anything.
  assert.notEqual(esm.encode, cjs.encode);
  assert.notEqual(esm.Decoder, cjs.Decoder);
  assert.match(require.resolve('tersa'), /dist[\\/]cjs[\\/]index\.js$/);
});

test('the error and value classes are the same objects', () => {
  for (const name of ['DecodeError', 'EncodeError', 'Timestamp', 'Ext', 'Float64']) {
    assert.equal(typeof esm[name], 'function', name);
    assert.equal(esm[name], cjs[name], `${name} differs between import and require`);
    assert.equal(esm[name].name, name);
  }
  assert.equal(esmEncode.EncodeError, cjs.EncodeError);
  assert.equal(cjsDecode.DecodeError, esm.DecodeError);
});

test('a DecodeError from either load is an instance of the other load\'s class', () => {
  for (const [from, to] of [[esm, cjs], [cjs, esm]]) {
    assert.throws(() => from.decode(Uint8Array.of(1, 2, 3, 4)), to.DecodeError);
    assert.throws(() => from.decode(Uint8Array.of(1, 2, 3, 4)), from.DecodeError);
    assert.throws(() => new from.Decoder().decode(Uint8Array.of(1, 2, 3, 4)), (e) => e instanceof to.DecodeError && e.code === 'bad_magic');
  }
});

test('an EncodeError from either load is an instance of the other load\'s class', () => {
  class Unregistered {}
  for (const [from, to] of [[esm, cjs], [cjs, esm]]) {
    assert.throws(() => from.encode(new Unregistered()), to.EncodeError);
    assert.throws(() => from.encode(new Unregistered()), from.EncodeError);
  }
});

test('values built by one load are encoded by the other', () => {
  const vals = (p) => [new p.Timestamp(1700000000, 5, 'offset', 60), new p.Ext(7, Uint8Array.of(1, 2)), new p.Float64(2100)];
  for (const [from, to] of [[esm, cjs], [cjs, esm]]) {
    const bytes = to.encode(vals(from));
    assert.deepEqual(bytes, from.encode(vals(from)));
    const back = from.decode(bytes, { exactFloats: true });
    assert.ok(back[0] instanceof to.Timestamp && back[0].equals(vals(to)[0]));
    assert.ok(back[1] instanceof to.Ext);
    assert.ok(back[2] instanceof to.Float64 && back[2].value === 2100);
  }
});

test('an extension registered through one load is known to the other', () => {
  class Point {
    constructor(x, y) {
      this.x = x;
      this.y = y;
    }
  }
  const write = (p) => Uint8Array.of(p.x, p.y);
  const read = (d) => new Point(d[0], d[1]);
  for (const [from, to] of [[esm, cjs], [cjs, esm]]) {
    from.addExtension({ type: 4242, Class: Point, write, read });
    try {
      const bytes = to.encode({ p: new Point(3, 4) });
      assert.deepEqual(bytes, from.encode({ p: new Point(3, 4) }));
      const back = to.decode(bytes);
      assert.ok(back.p instanceof Point, 'decoded without the registered read()');
      assert.deepEqual([back.p.x, back.p.y], [3, 4]);
      assert.equal(to.diag(new Point(3, 4)), from.diag(new Point(3, 4)));
    } finally {
      to.removeExtension(4242);
    }
    // removed through the other load: gone for both
    assert.throws(() => from.encode(new Point(1, 2)), from.EncodeError);
    assert.ok(from.decode(to.encode(new to.Ext(4242, Uint8Array.of(1, 2)))) instanceof from.Ext);
  }
});

test('the shared state is kept on globalThis under versioned registered symbols', () => {
  const keys = Object.getOwnPropertySymbols(globalThis).filter((s) => /^tersa /.test(Symbol.keyFor(s) ?? ''));
  const names = keys.map((k) => Symbol.keyFor(k)).sort();
  assert.equal(names.length, 2, `symbols: ${names}`);
  assert.match(names[0], /^tersa runtime v\d+$/);
  assert.match(names[1], /^tersa well-known v\d+$/);
  const shared = globalThis[Symbol.for(names[0])];
  assert.equal(shared.DecodeError, esm.DecodeError);
  assert.equal(shared.Timestamp, cjs.Timestamp);
  const known = globalThis[Symbol.for(names[1])];
  assert.equal(known.Decimal, esm.Decimal);
  assert.equal(known.UUID, cjs.UUID);
  for (const k of keys) {
    // not enumerable, not replaceable: a later copy cannot split the registry again
    assert.equal(Object.getOwnPropertyDescriptor(globalThis, k).enumerable, false);
    assert.throws(() => { 'use strict'; globalThis[k] = {}; }, TypeError);
  }
});
