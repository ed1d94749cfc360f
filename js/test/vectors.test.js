// Conformance: every vector of spec/vectors (valid, streams, must-fail, dictionaries).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as tersa from '../dist/esm/index.js';
import {
  VECTORS, vectorFiles, hexToBytes, bytesToHex, fromX, modelX, modelJS, loosen, show, vectorDictionaries,
} from './helpers.js';

const { encode, decode, encodeStream, decodeStream, joinStream, Encoder, Decoder, StreamDecoder, StreamEncoder, DecodeError, diag, Dictionary } = tersa;

const skipped = []; // vectors this runner cannot check, with the reason (must stay empty)
const counts = { valid: 0, stream: 0, join: 0, invalid: 0, dictionaries: 0, diag: 0 };

// The fields each kind of vector may have (spec/vectors/README.md). A field
// this runner does not know would be a check it does not make: it fails.
const FIELDS = {
  valid: ['name', 'hex', 'value', 'diag', 'canonical', 'canonical_hex', 'dictionary', 'note'],
  stream: ['name', 'hex', 'stream', 'values', 'diags', 'canonical', 'dictionary', 'sync_frames', 'sync_bytes', 'sync_before', 'note'],
  join: ['name', 'hex', 'join', 'joined_at', 'values', 'diags', 'dictionary', 'note'],
  fail: ['name', 'hex', 'error', 'offset', 'stream', 'join', 'dictionary', 'max_depth', 'note'],
};

function kindOf(v) {
  if ('error' in v) return 'fail';
  if (v.join) return 'join';
  if (v.stream) return 'stream';
  return 'valid';
}

function unknownFields(v) {
  const known = FIELDS[kindOf(v)];
  return Object.keys(v).filter((k) => !known.includes(k));
}

// Sizes of the pieces a stream is fed in: byte by byte, a few fixed sizes and random ones.
function* pieces(bytes, sizes) {
  let i = 0;
  let k = 0;
  while (i < bytes.length) {
    const n = sizes[k++ % sizes.length];
    yield bytes.subarray(i, i + n);
    i += n;
  }
}

let seed = 0x5eed;
function rnd(n) {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 8) % n;
}
function randomSizes() {
  return Array.from({ length: 16 }, () => 1 + rnd(7));
}

/** Feeds `bytes` to a StreamDecoder in pieces, collecting values after each. */
function feedAll(bytes, sizes, opts) {
  const sd = new StreamDecoder(opts);
  const out = [];
  for (const p of pieces(bytes, sizes)) {
    sd.feed(p);
    for (const x of sd) out.push(x);
  }
  sd.end();
  return { values: out, joinedAt: sd.joinedAt };
}

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
  // encode: whole stream (sync options; requested sync frames need the frame-by-frame API), and frame by frame
  const sync = { syncFrames: v.sync_frames, syncBytes: v.sync_bytes };
  const before = new Set(v.sync_before ?? []);
  if (before.size === 0) {
    const enc = bytesToHex(new Encoder({ dictionary: dict }).encodeStream(v.values.map(fromX), sync));
    if (enc !== v.hex) problems.push(`encode: got ${enc} want ${v.hex}`);
    const enc2 = bytesToHex(encodeStream(v.values.map(fromX), { dictionary: dict, ...sync }));
    if (enc2 !== v.hex) problems.push(`encodeStream(): got ${enc2} want ${v.hex}`);
  }
  const se = new StreamEncoder({ dictionary: dict, ...sync });
  const parts = [bytesToHex(se.header())];
  v.values.forEach((x, i) => {
    if (before.has(i)) se.sync();
    parts.push(bytesToHex(se.write(fromX(x))));
  });
  if (parts.join('') !== v.hex) problems.push(`frame-by-frame encode: got ${parts.join('')}`);
  // the header is written with the first frame unless taken
  const se2 = new StreamEncoder({ dictionary: dict, ...sync });
  const parts2 = v.values.map((x, i) => {
    if (before.has(i)) se2.sync();
    return bytesToHex(se2.write(fromX(x)));
  });
  if (v.values.length && parts2.join('') !== v.hex) problems.push(`encode without header(): got ${parts2.join('')}`);
  return problems;
}

function checkJoin(v) {
  const dict = dictFor(v);
  const bytes = hexToBytes(v.hex);
  const problems = [];
  const want = show(v.values.map(modelX));
  const opts = { dictionaries: dict ? [dict] : [], exactFloats: true };
  const r = decoderFor(dict, { exactFloats: true }).joinStream(bytes);
  if (r.joinedAt !== v.joined_at) problems.push(`joinStream: joinedAt ${r.joinedAt}, want ${v.joined_at}`);
  if (show(r.values.map((x) => modelJS(x))) !== want) problems.push(`joinStream: got ${show(r.values.map((x) => modelJS(x)))}`);
  const r2 = joinStream(bytes, opts);
  if (r2.joinedAt !== v.joined_at || show(r2.values.map((x) => modelJS(x))) !== want) problems.push('joinStream() function differs');
  const vals = decodeStream(bytes, { ...opts, join: true });
  if (show(vals.map((x) => modelJS(x))) !== want) problems.push('decodeStream(join: true) differs');
  for (const sizes of [[1], [3], randomSizes()]) {
    const fed = feedAll(bytes, sizes, { ...opts, join: true });
    if (fed.joinedAt !== v.joined_at) problems.push(`fed in pieces of ${sizes}: joinedAt ${fed.joinedAt}`);
    if (show(fed.values.map((x) => modelJS(x))) !== want) problems.push(`fed in pieces of ${sizes}: values differ`);
  }
  if (v.diags) {
    const d = r.values.map(diag);
    if (show(d) !== show(v.diags)) problems.push(`diags: got ${show(d)}`);
    else counts.diag += d.length;
  }
  return problems;
}

for (const f of vectorFiles('valid')) {
  test(`valid/${f.file}: ${f.description}`, () => {
    assert.ok(f.vectors.length > 0, 'no vectors in file');
    const failures = [];
    for (const v of f.vectors) {
      const kind = kindOf(v);
      let problems;
      try {
        const unknown = unknownFields(v);
        if (unknown.length) {
          skipped.push(`${f.file}: ${v.name}: fields ${unknown.join(', ')}`);
          problems = [`fields this runner does not check: ${unknown.join(', ')}`];
        } else if (kind === 'fail') problems = ['a must-fail vector among the valid ones'];
        else problems = kind === 'join' ? checkJoin(v) : kind === 'stream' ? checkStream(v) : checkValid(v);
      } catch (e) {
        problems = [`threw ${e?.stack ?? e}`];
      }
      if (problems.length) failures.push(`${v.name} (${v.hex.slice(0, 80)}):\n    ${problems.join('\n    ')}`);
      else counts[kind]++;
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
      if (v.join) new Decoder(opts).joinStream(bytes);
      else if (v.stream) new Decoder(opts).decodeStream(bytes);
      else new Decoder(opts).decode(bytes);
    } else {
      // streams fed in pieces, then end()
      feedAll(bytes, mode, { ...opts, join: !!v.join });
    }
  } catch (e) {
    if (!(e instanceof DecodeError)) return `threw a ${e?.constructor?.name}: ${e?.stack ?? e}`;
    if (e.code !== v.error || e.offset !== v.offset) return `${mode === 'whole' ? mode : 'fed in pieces of ' + mode}: got ${e.code}@${e.offset}, want ${v.error}@${v.offset}`;
    return null;
  }
  return `${mode === 'whole' ? mode : 'fed in pieces of ' + mode}: decoded without error, want ${v.error}@${v.offset}`;
}

for (const f of vectorFiles('invalid')) {
  test(`invalid/${f.file}: ${f.description}`, () => {
    assert.ok(f.vectors.length > 0, 'no vectors in file');
    const failures = [];
    for (const v of f.vectors) {
      const unknown = unknownFields(v);
      let p = null;
      if (kindOf(v) !== 'fail') p = 'not a must-fail vector';
      else if (unknown.length) {
        skipped.push(`${f.file}: ${v.name}: fields ${unknown.join(', ')}`);
        p = `fields this runner does not check: ${unknown.join(', ')}`;
      } else {
        p = decodeFail(v, 'whole');
        if (v.stream || v.join) for (const sizes of [[1], [3], randomSizes()]) p ??= decodeFail(v, sizes);
      }
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
  t.diagnostic(`checked: ${counts.valid} valid, ${counts.stream} stream, ${counts.join} join, ${counts.invalid} must-fail, ${counts.dictionaries} dictionaries, ${counts.diag} diag renderings`);
  if (skipped.length) t.diagnostic(`NOT checked (${skipped.length}):\n${skipped.join('\n')}`);
  else t.diagnostic('unchecked vectors: none');
  assert.equal(skipped.length, 0);
  assert.ok(counts.valid > 0 && counts.stream > 0 && counts.join > 0 && counts.invalid > 0, 'a kind of vector was not checked');
});
