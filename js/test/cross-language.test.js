// Cross-language: buffers written by the C core's CLI decode in TypeScript and
// the reverse. The CLI is $TERSA_CLI or ../c/build/tersa; without it this test
// fails unless TERSA_SKIP_CLI=1.
//
// CLI interface used: `tersa encode [--stream]` (JSON on stdin -> Tersa on
// stdout), `tersa decode [--diag]` (Tersa on stdin -> one JSON text or diagnostic
// line per value on stdout; streams are recognised from the header),
// `tersa recode` (Tersa -> canonical Tersa).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Encoder, Decoder, StreamEncoder, diag, encode, EncodeError } from '../dist/esm/index.js';
import { ROOT, parseExactJSON, readMaybeXz, bytesToHex, modelJS, show } from './helpers.js';

const CLI = process.env.TERSA_CLI || path.join(ROOT, 'c', 'build', 'tersa');
const present = fs.existsSync(CLI);
const skip = !present && process.env.TERSA_SKIP_CLI === '1';

function cli(args, input) {
  const r = spawnSync(CLI, args, { input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${CLI} ${args.join(' ')} exited with ${r.status}: ${String(r.stderr).slice(0, 500)}`);
  return r.stdout;
}

test('the C CLI is available', { skip: skip ? `TERSA_SKIP_CLI=1 and no CLI at ${CLI}` : false }, () => {
  assert.ok(present, `no Tersa CLI at ${CLI}: build the C core (c/build/tersa), set TERSA_CLI, or set TERSA_SKIP_CLI=1 to skip the cross-language tests`);
});

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'spec', 'vectors', 'corpus', 'manifest.json'), 'utf8'));
const opts = { skip: !present ? `no CLI at ${CLI}` : false };

test('corpus: C encode and TS encode give identical bytes; each decodes the other', opts, () => {
  const enc = new Encoder();
  const dec = new Decoder({ exactFloats: true });
  for (const doc of manifest.documents) {
    const json = readMaybeXz(path.join(ROOT, doc.json));
    const value = parseExactJSON(json.toString('utf8'));
    const fromC = new Uint8Array(cli(['encode'], json));
    const fromTS = enc.encode(value);
    assert.equal(bytesToHex(fromC), bytesToHex(fromTS), `${doc.name}: encodings differ`);
    assert.equal(show(modelJS(dec.decode(fromC))), show(modelJS(value)), `${doc.name}: TS decode of C bytes`);
    const diagC = String(cli(['decode', '--diag'], fromTS)).replace(/\n$/, '');
    assert.equal(diagC, diag(dec.decode(fromTS)), `${doc.name}: C decode --diag of TS bytes`);
    const jsonC = parseExactJSON(String(cli(['decode'], fromTS)));
    assert.equal(show(modelJS(jsonC, true)), show(modelJS(value, true)), `${doc.name}: C decode to JSON of TS bytes`);
  }
});

test('values of every type: TS stream -> C (diag and canonical recode)', opts, async () => {
  const { Timestamp, Ext, Float64 } = await import('../dist/esm/index.js');
  const values = [
    null, true, false, 0, -8, 23, 24, -9, 2 ** 53 - 1, -(2n ** 63n), 2n ** 64n - 1n, 2n ** 64n, -(2n ** 200n),
    1.5, -0, NaN, Infinity, -Infinity, 5e-324, 0.1 + 0.2, new Float64(2100), Float64.fromBits(0x7ff4000000000001n), Math.fround(1.1),
    '', 'é', '😀', 'x'.repeat(500), '2025-04-16T09:23:47Z', '2025-04-16', '2025-04-16 09:23:47.123456+05:30',
    Symbol.for('active'), Uint8Array.of(0, 255), new Date(1744795427123), new Timestamp(1744795427, 5, 'offset', -330), new Timestamp(0, 0, 'floating'),
    new Ext(65279, Uint8Array.of(1)), [], {}, [{ id: 'usr_1', n: 1 }, { id: 'usr_2', n: 2 }],
    new Map([[1, 'a'], [new Float64(1), 'b'], [null, 'c'], [[1, 2], 'd']]), new Map([['10', 1], ['2', 2]]), { __proto__: null, k: 'v' },
  ];
  // single buffers
  for (const v of values) {
    const b = encode(v);
    const d = String(cli(['decode', '--diag'], b)).replace(/\n$/, '');
    assert.equal(d, diag(new Decoder({ exactFloats: true }).decode(b)), `diag of ${bytesToHex(b)}`);
    assert.equal(bytesToHex(new Uint8Array(cli(['recode'], b))), bytesToHex(b), `recode of ${bytesToHex(b)}`);
  }
  // one stream sharing tables
  const se = new StreamEncoder();
  const parts = [se.header(), ...values.map((v) => se.write(v))];
  const stream = Buffer.concat(parts);
  const lines = String(cli(['decode', '--diag'], stream)).replace(/\n$/, '').split('\n');
  assert.deepEqual(lines, values.map((v) => diag(new Decoder({ exactFloats: true }).decode(encode(v)))));
  assert.equal(bytesToHex(new Uint8Array(cli(['recode'], stream))), bytesToHex(stream), 'recode of the stream');
  void EncodeError;
});

test('JSON streams: C encode --stream decodes in TS', opts, () => {
  const dir = path.join(ROOT, 'bench', 'corpus', 'seed');
  const texts = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
  const fromC = new Uint8Array(cli(['encode', '--stream'], texts.join('\n')));
  const vals = new Decoder({ exactFloats: true }).decodeStream(fromC);
  assert.equal(show(vals.map((v) => modelJS(v))), show(texts.map((t) => modelJS(parseExactJSON(t)))));
  const ts = new Encoder().encodeStream(texts.map(parseExactJSON));
  assert.equal(bytesToHex(fromC), bytesToHex(ts), 'stream encodings differ');
});
