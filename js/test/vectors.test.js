// Conformance: every vector of spec/vectors (valid, streams, must-fail, dictionaries).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as pith from '../dist/esm/index.js';
import {
  VECTORS, vectorFiles, hexToBytes, bytesToHex, fromX, modelX, modelJS, loosen, show, vectorDictionaries,
} from './helpers.js';

const { encode, decode, Encoder, Decoder, StreamDecoder, StreamEncoder, DecodeError, diag, Dictionary } = pith;

const skipped = []; // vectors this runner cannot check, with the reason (must stay empty)
const counts = { valid: 0, stream: 0, invalid: 0, dictionaries: 0, diag: 0 };

function dictFor(v) {
  if (!v.dictionary) return null;
  const d = vectorDictionaries()[v.dictionary];
  if (!d) throw new Error(`vector ${v.name} names unknown dictionary ${v.dictionary}`);
  return d.dict;
}

const encoders = new Map();
const decoders = new Map();
function encoderFor(dict) {
  if (!encoders.has(dict)) encoders.set(dict, new Encoder({ dictionary: dict }));
  return encoders.get(dict);
}
function decoderFor(dict, opts = {}) {
  if (!decoders.has(dict)) decoders.set(dict, new Map());
  const m = decoders.get(dict);
  const key = JSON.stringify(opts);
  if (!m.has(key)) m.set(key, new Decoder({ dictionaries: dict ? [dict] : [], ...opts }));
  return m.get(key);
}

function checkValid(v) {
  const dict = dictFor(v);
  const bytes = hexToBytes(v.hex);
  const problems = [];
  // decode (exact floats) and compare with the expected value
  const exact = decoderFor(dict, { exactFloats: true }).decode(bytes);
  const want = modelX(v.value);
  if (show(modelJS(exact)) !== show(want)) problems.push(`decode: got ${show(modelJS(exact))} want ${show(want)}`);
  // default options: same value up to the number/float distinction
  const plain = decoderFor(dict).decode(bytes);
  if (show(modelJS(plain, true)) !== show(loosen(want))) problems.push(`default decode: got ${show(modelJS(plain, true))}`);
  // diagnostic notation
  if (v.diag !== undefined) {
    const d = diag(exact);
    if (d !== v.diag) problems.push(`diag: got ${d} want ${v.diag}`);
    else counts.diag++;
  }
  // encode the expected value: canonical bytes
  const target = v.canonical ? v.hex : v.canonical_hex;
  if (target === undefined) problems.push('non-canonical vector without canonical_hex');
  else {
    const got = bytesToHex(encoderFor(dict).encode(fromX(v.value)));
    if (got !== target) problems.push(`encode: got ${got} want ${target}`);
    // re-encoding the decoded value gives the same bytes
    const again = bytesToHex(encoderFor(dict).encode(exact));
    if (again !== target) problems.push(`re-encode of decoded value: got ${again} want ${target}`);
  }
  return problems;
}

function checkStream(v) {
  const dict = dictFor(v);
  const bytes = hexToBytes(v.hex);
  const problems = [];
  const got = decoderFor(dict, { exactFloats: true }).decodeStream(bytes);
  const want = v.values.map(modelX);
  if (show(got.map((x) => modelJS(x))) !== show(want)) problems.push(`decode: got ${show(got.map((x) => modelJS(x)))}`);
  // byte-by-byte feeding gives the same values
  const sd = new StreamDecoder({ dictionaries: dict ? [dict] : [], exactFloats: true });
  const fed = [];
  for (const b of bytes) {
    sd.feed(Uint8Array.of(b));
    for (const x of sd) fed.push(x);
  }
  sd.end();
  if (show(fed.map((x) => modelJS(x))) !== show(want)) problems.push('byte-by-byte decode differs');
  if (v.diags) {
    const d = got.map(diag);
    if (show(d) !== show(v.diags)) problems.push(`diags: got ${show(d)}`);
    else counts.diag += d.length;
  }
  // encode: whole stream, and frame by frame
  const enc = bytesToHex(new Encoder({ dictionary: dict }).encodeStream(v.values.map(fromX)));
  if (enc !== v.hex) problems.push(`encode: got ${enc} want ${v.hex}`);
  const se = new StreamEncoder({ dictionary: dict });
  const parts = [bytesToHex(se.header())];
  for (const x of v.values) parts.push(bytesToHex(se.write(fromX(x))));
  if (parts.join('') !== v.hex) problems.push(`frame-by-frame encode: got ${parts.join('')}`);
  return problems;
}

for (const f of vectorFiles('valid')) {
  test(`valid/${f.file}: ${f.description}`, () => {
    assert.ok(f.vectors.length > 0, 'no vectors in file');
    const failures = [];
    for (const v of f.vectors) {
      let problems;
      try {
        problems = v.stream ? checkStream(v) : checkValid(v);
      } catch (e) {
        problems = [`threw ${e?.stack ?? e}`];
      }
      if (problems.length) failures.push(`${v.name} (${v.hex.slice(0, 80)}):\n    ${problems.join('\n    ')}`);
      else counts[v.stream ? 'stream' : 'valid']++;
    }
    assert.deepEqual(failures, [], `${failures.length} of ${f.vectors.length} vectors failed:\n${failures.join('\n')}`);
  });
}

function decodeFail(v, mode) {
  const dict = dictFor(v);
  const opts = { dictionaries: dict ? [dict] : [], maxDepth: v.max_depth ?? 1000 };
  const bytes = hexToBytes(v.hex);
  try {
    if (mode === 'whole') {
      if (v.stream) new Decoder(opts).decodeStream(bytes);
      else new Decoder(opts).decode(bytes);
    } else {
      // streams fed in small chunks, then end()
      const sd = new StreamDecoder(opts);
      for (let i = 0; i < bytes.length; i += 3) {
        sd.feed(bytes.subarray(i, i + 3));
        for (const _ of sd);
      }
      sd.end();
    }
  } catch (e) {
    if (!(e instanceof DecodeError)) return `threw a ${e?.constructor?.name}: ${e?.stack ?? e}`;
    if (e.code !== v.error || e.offset !== v.offset) return `${mode}: got ${e.code}@${e.offset}, want ${v.error}@${v.offset}`;
    return null;
  }
  return `${mode}: decoded without error, want ${v.error}@${v.offset}`;
}

for (const f of vectorFiles('invalid')) {
  test(`invalid/${f.file}: ${f.description}`, () => {
    assert.ok(f.vectors.length > 0, 'no vectors in file');
    const failures = [];
    for (const v of f.vectors) {
      const p = decodeFail(v, 'whole') ?? (v.stream ? decodeFail(v, 'chunked') : null);
      if (p) failures.push(`${v.name} (${v.hex.slice(0, 60)}): ${p}`);
      else counts.invalid++;
    }
    assert.deepEqual(failures, [], `${failures.length} of ${f.vectors.length} vectors failed:\n${failures.join('\n')}`);
  });
}

test('dictionaries.json: ids and serializations', () => {
  const file = path.join(VECTORS, 'dictionaries.json');
  assert.ok(fs.existsSync(file), 'dictionaries.json missing');
  const all = vectorDictionaries();
  assert.ok(Object.keys(all).length > 0, 'no dictionaries');
  const failures = [];
  for (const [name, { dict, spec }] of Object.entries(all)) {
    if (dict.idHex !== spec.id) failures.push(`${name}: id ${dict.idHex}, want ${spec.id}`);
    if (spec.serialized !== undefined) {
      const ser = bytesToHex(dict.serialize());
      if (ser !== spec.serialized) failures.push(`${name}: serialized ${ser}, want ${spec.serialized}`);
      const back = Dictionary.parse(hexToBytes(spec.serialized));
      if (back.idHex !== spec.id) failures.push(`${name}: parsed id ${back.idHex}`);
    }
    if (!failures.length) counts.dictionaries++;
  }
  assert.deepEqual(failures, []);
});

test('vector summary', (t) => {
  t.diagnostic(`checked: ${counts.valid} valid, ${counts.stream} stream, ${counts.invalid} must-fail, ${counts.dictionaries} dictionaries, ${counts.diag} diag renderings`);
  if (skipped.length) t.diagnostic(`NOT checked (${skipped.length}):\n${skipped.join('\n')}`);
  else t.diagnostic('unchecked vectors: none');
  assert.equal(skipped.length, 0);
  assert.ok(counts.valid > 0 && counts.invalid > 0, 'no vectors were checked');
});
