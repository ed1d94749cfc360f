// Compatibility with the JS peers: the same JS value through Tersa and through
// msgpackr, @msgpack/msgpack and cbor-x comes back as equal values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Packr } from 'msgpackr';
import { Encoder as CborEncoder } from 'cbor-x';
import * as msgpack from '@msgpack/msgpack';
import { encode, decode } from '../dist/esm/index.js';
import { ROOT, modelJS, show } from './helpers.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });
const records = new Packr({ useRecords: true });
const cbor = new CborEncoder({ mapsAsObjects: true });

const peers = {
  msgpackr: (v) => packr.unpack(packr.pack(v)),
  'msgpackr-records': (v) => records.unpack(records.pack(v)),
  '@msgpack/msgpack': (v) => msgpack.decode(msgpack.encode(v)),
  'cbor-x': (v) => cbor.decode(cbor.encode(v)),
};

const tersaRT = (v) => decode(encode(v));
const loose = (v) => show(modelJS(v, true));

const seedDir = path.join(ROOT, 'bench', 'corpus', 'seed');
const docs = fs.readdirSync(seedDir).filter((f) => f.endsWith('.json')).sort().map((f) => [f, JSON.parse(fs.readFileSync(path.join(seedDir, f), 'utf8'))]);

test('seed documents: Tersa and every peer round-trip to the same value', () => {
  for (const [name, doc] of docs) {
    const mine = tersaRT(doc);
    assert.deepStrictEqual(mine, doc, `${name}: Tersa round trip`);
    for (const [peer, rt] of Object.entries(peers)) assert.equal(loose(rt(doc)), loose(mine), `${name}: ${peer} differs from Tersa`);
  }
});

test('JSON-like edge values agree with the peers', () => {
  const values = [
    0, -1, 255, 65536, -2147483649, 2 ** 53 - 1, -(2 ** 53 - 1), 1.5, -0.25, 1e300, 5e-324, 0.1, 123456.789,
    '', 'ascii', 'ünïcödé', '😀', 'x'.repeat(70000), [], {}, [[[]]], { a: { b: { c: [1, { d: null }] } } },
    true, false, null, [1, 'a', null, true, 2.5], { 'key with spaces': 1, 'üñí': 2 },
  ];
  for (const v of values) {
    const mine = tersaRT(v);
    assert.equal(loose(mine), loose(v));
    for (const [peer, rt] of Object.entries(peers)) assert.equal(loose(rt(v)), loose(mine), `${peer}: ${JSON.stringify(v).slice(0, 60)}`);
  }
});

test('binary, Date and Map agree with msgpackr', () => {
  const p = new Packr({ useRecords: false, mapsAsObjects: false });
  const values = [Uint8Array.of(1, 2, 3), new Date(1744795427123), new Map([[1, 'a'], ['b', 2]]), new Map([['x', new Map([[true, null]])]])];
  for (const v of values) {
    const a = decode(encode(v), { maps: 'map' });
    const b = p.unpack(p.pack(v));
    assert.equal(loose(a), loose(b));
  }
  // BigInt within 64 bits
  const big = new Packr({ useBigIntExtension: true, largeBigIntToFloat: false });
  for (const v of [2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n - 1n]) {
    assert.equal(decode(encode(v)), big.unpack(big.pack(v)));
  }
});

test('Tersa is smaller than every peer on each seed document', () => {
  for (const [name, doc] of docs) {
    const mine = encode(doc).length;
    for (const [peer, size] of [['msgpackr-records', records.pack(doc).length], ['cbor-x', cbor.encode(doc).length], ['@msgpack/msgpack', msgpack.encode(doc).length], ['JSON', Buffer.byteLength(JSON.stringify(doc))]]) {
      assert.ok(mine < size, `${name}: Tersa ${mine} >= ${peer} ${size}`);
    }
  }
});
