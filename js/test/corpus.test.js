// Corpora: each document of spec/vectors/corpus/manifest.json, parsed exactly,
// encodes to the committed canonical bytes, and those bytes decode back to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { Encoder, Decoder, decode } from '../dist/esm/index.js';
import { ROOT, VECTORS, parseExactJSON, readMaybeXz, bytesToHex, modelJS, show } from './helpers.js';

const manifestFile = path.join(VECTORS, 'corpus', 'manifest.json');

test('corpus manifest exists and lists documents', () => {
  assert.ok(fs.existsSync(manifestFile), `missing ${manifestFile}`);
  const m = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  assert.ok(m.documents.length > 0);
});

const manifest = fs.existsSync(manifestFile) ? JSON.parse(fs.readFileSync(manifestFile, 'utf8')) : { documents: [] };
const enc = new Encoder();
const dec = new Decoder({ exactFloats: true });

for (const doc of manifest.documents) {
  test(`corpus ${doc.kind}/${doc.name}`, () => {
    const json = readMaybeXz(path.join(ROOT, doc.json)).toString('utf8');
    const want = readMaybeXz(path.join(ROOT, doc.tersa));
    assert.equal(want.length, doc.tersa_bytes, 'committed .tersa size differs from the manifest');
    assert.equal(crypto.createHash('sha256').update(want).digest('hex'), doc.tersa_sha256, 'committed .tersa hash differs');
    const value = parseExactJSON(json);
    const got = enc.encode(value);
    if (got.length !== want.length || Buffer.compare(Buffer.from(got), want) !== 0) {
      let i = 0;
      while (i < got.length && got[i] === want[i]) i++;
      assert.fail(`encoding differs at byte ${i} (got ${got.length} bytes, want ${want.length}):\n got ${bytesToHex(got.subarray(i, i + 32))}\nwant ${bytesToHex(want.subarray(i, i + 32))}`);
    }
    // decode the committed bytes: the same value (exact floats), and re-encode
    const back = dec.decode(new Uint8Array(want));
    assert.equal(show(modelJS(back)), show(modelJS(value)), 'decoded value differs');
    assert.equal(Buffer.compare(Buffer.from(enc.encode(back)), want), 0, 're-encoding the decoded value differs');
    // default options decode too
    decode(new Uint8Array(want));
  });
}
