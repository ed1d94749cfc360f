// Sync frames and joining a stream midway (SPEC 2.3): the out_of_sequence
// issue, late consumers fed in random pieces, sync frames on request, with
// dictionaries, and encodings compared with the reference codec.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as tersa from '../dist/esm/index.js';
import { HERE, bytesToHex, hexToBytes, modelJS, show, toX } from './helpers.js';

const { encode, encodeStream, decodeStream, joinStream, Encoder, Decoder, StreamEncoder, StreamDecoder, DecodeError, Dictionary, diag } = tersa;

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

const concat = (...parts) => Uint8Array.from(parts.flatMap((p) => [...p]));
const same = (got, want, msg) => assert.equal(show(got.map((x) => modelJS(x))), show(want.map((x) => modelJS(x))), msg);

/** The frames of a stream body: offset of the length varint, of the first byte, and of the end. */
function frames(body) {
  const out = [];
  let i = 0;
  while (i < body.length) {
    const b = body[i];
    const L = b === 0 ? 9 : 31 - Math.clz32(b & -b) + 1;
    let n = 0;
    for (let j = L - 1; j >= (L === 9 ? 1 : 0); j--) n = n * 256 + body[i + j];
    if (L < 9) n = Math.floor(n / 2 ** L);
    out.push({ at: i, first: i + L, end: i + L + n, sync: body[i + L] === 0xfd });
    i += L + n;
  }
  assert.equal(i, body.length, 'frames end with the body');
  return out;
}

const headerLength = (b) => (b[2] & 1 ? 11 : 3);

/** Messages of a few types whose fields repeat, step and share prefixes: everything a sync frame resets. */
function messages(count, seed) {
  const g = rng(seed);
  const out = [];
  let t = 1744795427;
  for (let i = 0; i < count; i++) {
    t += g.int(90);
    switch (g.int(5)) {
      case 0:
        out.push({ id: `usr_${g.int(500)}`, role: g.pick(['admin', 'user', 'guest']), n: 1000 + i, score: g.int(10000) / 100 });
        break;
      case 1:
        out.push({ event: g.pick(['login', 'logout', 'purchase']), at: new Date(t * 1000).toISOString().replace('.000', ''), tags: ['a' + g.int(9), 'bb'] });
        break;
      case 2:
        out.push([g.int(100000), -g.int(1000), (225 + g.int(10)) / 10, 'txt_' + 'x'.repeat(g.int(40))]);
        break;
      case 3:
        out.push({ [g.pick(['k1', 'k2', 'k3'])]: Symbol.for(g.pick(['on', 'off'])), nested: { id: `usr_${g.int(500)}`, deep: [null, true, { z: i }] } });
        break;
      default:
        out.push(g.pick(['admin', 'user', `usr_${g.int(500)}`, `2025-04-16T09:${String(g.int(60)).padStart(2, '0')}:00Z`]));
    }
  }
  return out;
}

/** Feeds bytes to a StreamDecoder in random pieces, checking joinedAt stays null until a value came. */
function feedRandom(bytes, opts, g) {
  const sd = new StreamDecoder(opts);
  const got = [];
  for (let i = 0; i < bytes.length; ) {
    const n = 1 + g.int(g.pick([4, 64, 2000]));
    sd.feed(bytes.subarray(i, i + n));
    i += n;
    for (const v of sd) got.push(v);
    if (got.length === 0 && opts.join) assert.ok(sd.joinedAt === null || sd.joinedAt >= 0);
  }
  sd.end();
  return { values: got, joinedAt: sd.joinedAt };
}

const python = spawnSync('python3', ['--version']).status === 0;

/** Requests to spec/tools/tersaref.py (tersaref_stream_oracle.py), or null without python3. */
function reference(t, requests) {
  if (!python) {
    t.diagnostic('python3 not available: comparison with the reference codec NOT run');
    return null;
  }
  const input = requests.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const out = spawnSync('python3', [path.join(HERE, 'tersaref_stream_oracle.py')], { input, maxBuffer: 1 << 28 });
  assert.equal(out.status, 0, String(out.stderr));
  return String(out.stdout).trim().split('\n').map((l) => JSON.parse(l));
}

function expectError(fn, code, offset) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof DecodeError, `not a DecodeError: ${e}`);
    assert.equal(`${e.code}@${e.offset}`, `${code}@${offset}`);
    return true;
  });
}

// ---------------------------------------------------------------------------
// The issue
// ---------------------------------------------------------------------------

test('a header and then a frame from the middle of a stream is out_of_sequence, never other values', () => {
  const values = [['aa', 'bb'], ['cc', 'aa']];
  const whole = encodeStream(values);
  const fr = frames(whole.subarray(3));
  assert.ok(fr[0].sync && !fr[1].sync, 'the first frame alone is a sync frame');
  const second = whole.subarray(3 + fr[1].at, 3 + fr[1].end);
  assert.equal(bytesToHex(second), '0b8242636300');
  const bad = concat([0xc1, 0x70, 0x12], second);
  // Before sync frames, this decoded as [["cc","cc"]]: REF 0 named the first string this reader had seen.
  expectError(() => decodeStream(bad), 'out_of_sequence', 4);
  for (const size of [1, 2, 3, bad.length]) {
    const sd = new StreamDecoder();
    const got = [];
    expectError(() => {
      for (let i = 0; i < bad.length; i += size) {
        sd.feed(bad.subarray(i, i + size));
        for (const v of sd) got.push(v);
      }
      sd.end();
    }, 'out_of_sequence', 4);
    assert.deepEqual(got, [], 'no value before the error');
    expectError(() => sd.next(), 'out_of_sequence', 4); // and it stays failed
  }
  // the whole stream still decodes; joined at its second frame there is nothing to decode
  assert.deepEqual(decodeStream(whole), values);
  assert.deepEqual(joinStream(second), { joinedAt: null, values: [] });
  assert.deepEqual(joinStream(whole.subarray(3)), { joinedAt: 0, values });
});

// ---------------------------------------------------------------------------
// Late consumers
// ---------------------------------------------------------------------------

/** Frame k is a sync frame by the rules of SPEC 2.3, recomputed from the frame sizes. */
function expectedSync(fr, { syncFrames = 0, syncBytes = 0 }, before = new Set()) {
  const out = [];
  let since = 0;
  fr.forEach((f, k) => {
    const s = k === 0 || before.has(k) || (syncFrames > 0 && k % syncFrames === 0) || (syncBytes > 0 && since >= syncBytes);
    since = (s ? 0 : since) + (f.end - f.at);
    out.push(s);
  });
  return out;
}

test('late consumers join a long stream fed in random pieces: the same as the whole-buffer join', (t) => {
  const values = messages(3000, 11);
  const g = rng(12);
  const requests = [];
  const cases = [];
  for (const opts of [{ syncFrames: 50 }, { syncBytes: 2000 }, { syncFrames: 64, syncBytes: 1500 }, { syncBytes: 1 }]) {
    const bytes = encodeStream(values, opts);
    requests.push({ values: values.map(toX), sync_frames: opts.syncFrames ?? 0, sync_bytes: opts.syncBytes ?? 0 });
    cases.push(bytes);
    same(decodeStream(bytes, { exactFloats: true }), values, 'read from the start');
    const body = bytes.subarray(3);
    const fr = frames(body);
    assert.deepEqual(fr.map((f) => f.sync), expectedSync(fr, opts), `sync frames where ${JSON.stringify(opts)} asks`);
    // join at every sync frame, the frames around them, and random boundaries
    const points = new Set([0, fr.length - 1, fr.length]);
    fr.forEach((f, k) => {
      if (f.sync && g.int(4) === 0) [k - 1, k, k + 1].forEach((x) => x >= 0 && x <= fr.length && points.add(x));
    });
    for (let i = 0; i < 20; i++) points.add(g.int(fr.length));
    for (const k of points) {
      const from = k < fr.length ? fr[k].at : body.length;
      const tail = body.subarray(from);
      let s = k;
      while (s < fr.length && !fr[s].sync) s++;
      const want = values.slice(s);
      const joinedAt = s < fr.length ? fr[s].at - from : null;
      const whole = joinStream(tail, { exactFloats: true });
      assert.equal(whole.joinedAt, joinedAt, `joined at frame ${k}`);
      same(whole.values, want, `joined at frame ${k}`);
      const fed = feedRandom(tail, { join: true, exactFloats: true }, g);
      assert.equal(fed.joinedAt, joinedAt, `fed, joined at frame ${k}`);
      same(fed.values, want, `fed, joined at frame ${k}`);
      // a header and the frames from a sync frame on make a stream of their own
      if (s < fr.length) same(decodeStream(concat(bytes.subarray(0, 3), body.subarray(fr[s].at)), { exactFloats: true }), want, `restarted at frame ${s}`);
    }
  }
  const ref = reference(t, requests);
  if (ref) cases.forEach((b, i) => assert.equal(bytesToHex(b), ref[i].hex, `${JSON.stringify(requests[i]).slice(-60)}: the reference encoding`));
});

test('a joining decoder shows nothing and no offset until the first sync frame has arrived', () => {
  const values = messages(40, 3);
  const se = new StreamEncoder({ syncFrames: 10 });
  se.header();
  const parts = values.map((v) => se.write(v));
  const tail = concat(...parts.slice(3)); // frames 3..: the first sync frame is frame 10
  const sd = new StreamDecoder({ join: true });
  let offset = 0;
  for (let k = 3; k < 10; k++) {
    sd.feed(parts[k]);
    offset += parts[k].length;
    assert.equal([...sd].length, 0);
    assert.equal(sd.joinedAt, null);
  }
  sd.feed(parts[10].subarray(0, 2));
  assert.equal([...sd].length, 0);
  sd.feed(parts[10].subarray(2));
  assert.deepEqual([...sd], [values[10]]);
  assert.equal(sd.joinedAt, offset);
  assert.equal(joinStream(tail).joinedAt, offset);
});

test('frames skipped while joining are not kept in memory; one cut short is length_exceeds_input', () => {
  const big = new Uint8Array(1 << 20).fill(7);
  const stream = encodeStream(['start', big, 'after'], { syncFrames: 2 });
  const body = stream.subarray(3);
  const fr = frames(body);
  assert.deepEqual(fr.map((f) => f.sync), [true, false, true]);
  const tail = body.subarray(fr[1].at); // a consumer joining at the big frame, which is not a sync frame
  const sd = new StreamDecoder({ join: true });
  const got = [];
  for (let i = 0; i < tail.length; i += 4096) {
    sd.feed(tail.subarray(i, i + 4096));
    for (const v of sd) got.push(v);
    // the buffer is private: its size is the point here
    assert.ok(sd['buf'].length <= 65536, `buffered ${sd['buf'].length} bytes of a skipped frame`);
  }
  sd.end();
  assert.deepEqual(got, ['after']);
  assert.equal(sd.joinedAt, fr[2].at - fr[1].at);
  const g = rng(5);
  for (let i = 0; i < 3; i++) assert.deepEqual(feedRandom(tail, { join: true }, g), { values: ['after'], joinedAt: fr[2].at - fr[1].at });
  // cut short: the error names the skipped frame, fed whole or in pieces
  const short = tail.subarray(0, 100000);
  expectError(() => joinStream(short), 'length_exceeds_input', 0);
  const sd2 = new StreamDecoder({ join: true });
  sd2.feed(Uint8Array.of(0x03, 0xe0)); // a frame of one byte, skipped
  for (let i = 0; i < short.length; i += 777) {
    sd2.feed(short.subarray(i, i + 777));
    for (const _ of sd2);
  }
  expectError(() => sd2.end(), 'length_exceeds_input', 2);
  expectError(() => sd2.next(), 'length_exceeds_input', 2);
});

// ---------------------------------------------------------------------------
// Sync frames on request, options
// ---------------------------------------------------------------------------

test('sync() makes the next frame a sync frame, and only that one', (t) => {
  const values = ['admin', { id: 'usr_1', n: 1000 }, { id: 'usr_2', n: 1001 }, 'admin', { id: 'usr_3', n: 1002 }, 'admin'];
  const se = new StreamEncoder();
  const head = se.header();
  const parts = [];
  values.forEach((v, i) => {
    if (i === 0 || i === 3) assert.equal(se.sync(), se); // chainable; at the first frame it changes nothing
    if (i === 3) se.sync(); // twice is once
    parts.push(se.write(v));
  });
  const fr = frames(concat(...parts));
  assert.deepEqual(fr.map((f) => f.sync), [true, false, false, true, false, false]);
  const all = concat(head, ...parts);
  assert.deepEqual(decodeStream(all), values);
  // state is reset at the sync frame: 'admin' is written inline again, not as a reference
  assert.equal(bytesToHex(parts[3]), bytesToHex(concat([0x11, 0xfd, 0x12], encode('admin').subarray(3))));
  assert.deepEqual(joinStream(concat(...parts.slice(1))), { joinedAt: parts[1].length + parts[2].length, values: values.slice(3) });
  const ref = reference(t, [{ values: values.map(toX), sync_before: [3] }]);
  if (ref) assert.equal(bytesToHex(all), ref[0].hex);
});

test('sync options: checked, given to Encoder.encodeStream or to the Encoder', () => {
  for (const bad of [-1, 1.5, NaN, Infinity, '2', 2n]) {
    assert.throws(() => new StreamEncoder({ syncFrames: bad }), RangeError, String(bad));
    assert.throws(() => encodeStream([1], { syncBytes: bad }), RangeError, String(bad));
  }
  const values = messages(30, 9);
  const want = bytesToHex(encodeStream(values, { syncFrames: 4, syncBytes: 100 }));
  assert.equal(bytesToHex(new Encoder().encodeStream(values, { syncFrames: 4, syncBytes: 100 })), want);
  assert.equal(bytesToHex(new Encoder({ syncFrames: 4, syncBytes: 100 }).encodeStream(values)), want);
  assert.equal(bytesToHex(new Encoder({ syncFrames: 4 }).encodeStream(values, { syncBytes: 100 })), want);
  // 0 and undefined are off: only the first frame is a sync frame
  for (const opts of [{}, { syncFrames: 0, syncBytes: 0 }, { syncFrames: undefined }]) {
    const fr = frames(encodeStream(values, opts).subarray(3));
    assert.deepEqual(fr.map((f) => f.sync), values.map((_, i) => i === 0), JSON.stringify(opts));
  }
  // an encoder reused for single buffers and streams keeps them apart
  const enc = new Encoder();
  const one = bytesToHex(enc.encode(values[0]));
  enc.encodeStream(values, { syncFrames: 3 });
  assert.equal(bytesToHex(enc.encode(values[0])), one);
});

test('random streams and sync options: the same bytes as the reference encoder; every join as the reference reads it', (t) => {
  const g = rng(77);
  const requests = [];
  const ours = [];
  for (let i = 0; i < 40; i++) {
    const values = messages(1 + g.int(60), 100 + i);
    const opts = { syncFrames: g.pick([0, 1, 2, 3, 7]), syncBytes: g.pick([0, 0, 1, 16, 64, 300]) };
    const before = [...new Set(Array.from({ length: g.int(4) }, () => g.int(values.length)))];
    const se = new StreamEncoder(opts);
    const parts = [se.header()];
    values.forEach((v, k) => {
      if (before.includes(k)) se.sync();
      parts.push(se.write(v));
    });
    const bytes = concat(...parts);
    requests.push({ values: values.map(toX), sync_frames: opts.syncFrames, sync_bytes: opts.syncBytes, sync_before: before });
    ours.push({ bytes, values });
    const fr = frames(bytes.subarray(3));
    assert.deepEqual(fr.map((f) => f.sync), expectedSync(fr, opts, new Set(before)));
    if (before.length === 0) assert.equal(bytesToHex(encodeStream(values, opts)), bytesToHex(bytes));
  }
  const ref = reference(t, requests);
  if (!ref) return;
  ours.forEach((o, i) => assert.equal(bytesToHex(o.bytes), ref[i].hex, `stream ${i}`));
  // joins at every frame boundary, against the reference's join
  const joins = [];
  const tails = [];
  for (const o of ours) {
    const body = o.bytes.subarray(3);
    for (const f of frames(body)) {
      tails.push(body.subarray(f.at));
      joins.push({ join: bytesToHex(body.subarray(f.at)) });
    }
  }
  const refJoins = reference(t, joins);
  tails.forEach((t, i) => {
    const r = joinStream(t, { exactFloats: true });
    assert.equal(r.joinedAt, refJoins[i].joined_at);
    assert.equal(show(r.values.map(diag)), show(refJoins[i].diags));
  });
});

// ---------------------------------------------------------------------------
// Dictionaries
// ---------------------------------------------------------------------------

test('dictionaries: sync frames carry the id, restore the preloaded tables, and a joining reader needs the dictionary', (t) => {
  const dict = new Dictionary(['admin', 'user', 'usr_'], [['id', 'role', 'n']]);
  const other = new Dictionary(['admin'], []);
  const values = [];
  for (let i = 0; i < 12; i++) values.push({ id: `usr_${i}`, role: i % 3 ? 'user' : 'admin', n: 1000 + i }, i % 2 ? 'admin' : 'usr_x');
  const bytes = encodeStream(values, { dictionary: dict, syncFrames: 5 });
  const hl = headerLength(bytes);
  assert.equal(hl, 11);
  const body = bytes.subarray(hl);
  const fr = frames(body);
  for (const f of fr.filter((x) => x.sync)) {
    assert.equal(bytesToHex(body.subarray(f.first, f.first + 10)), 'fd13' + bytesToHex(bytes.subarray(3, 11)), 'SYNC, VF, the id');
  }
  assert.deepEqual(decodeStream(bytes, { dictionaries: [dict] }), values);
  // a dictionary shape's slots are empty again after a sync frame: n is written whole, not as a delta
  const f10 = fr[10];
  assert.deepEqual(values[10], { id: 'usr_5', role: 'user', n: 1005 });
  assert.equal(bytesToHex(body.subarray(f10.first + 10, f10.end)), bytesToHex(encode(values[10], { dictionary: dict }).subarray(11)));
  const ref = reference(t, [{ values: values.map(toX), sync_frames: 5, dictionary: { strings: dict.strings, shapes: dict.shapes.map((s) => s.map(toX)) } }]);
  if (ref) assert.equal(bytesToHex(bytes), ref[0].hex);
  // joining: with the dictionary, without it, with another one
  const tail = body.subarray(fr[3].at);
  const r = joinStream(tail, { dictionaries: [other, dict] });
  assert.deepEqual(r, { joinedAt: fr[5].at - fr[3].at, values: values.slice(5) });
  assert.deepEqual(decodeStream(tail, { dictionaries: [dict], join: true }), values.slice(5));
  const idAt = fr[5].first - fr[3].at + 2;
  expectError(() => joinStream(tail), 'unknown_dictionary', idAt);
  expectError(() => joinStream(tail, { dictionaries: [other] }), 'unknown_dictionary', idAt);
  // a sync frame naming another dictionary: bad_sync at its id, from the start and when joined
  const forged = Uint8Array.from(bytes);
  const s15 = hl + fr[15].first;
  forged.set(hexToBytes(other.idHex).reverse(), s15 + 2);
  expectError(() => decodeStream(forged, { dictionaries: [dict, other] }), 'bad_sync', s15 + 2);
  expectError(() => joinStream(forged.subarray(hl + fr[3].at), { dictionaries: [dict, other] }), 'bad_sync', s15 + 2 - hl - fr[3].at);
  // ... and one whose VF byte differs (no DICT): bad_sync at the VF byte
  forged.set(bytes.subarray(s15 + 2, s15 + 10), s15 + 2);
  forged[s15 + 1] = 0x12;
  expectError(() => decodeStream(forged, { dictionaries: [dict] }), 'bad_sync', s15 + 1);
  // a stream without DICT is read without the dictionary, also when joined
  const plain = encodeStream(['admin', 'admin'], { syncFrames: 1 });
  assert.deepEqual(joinStream(plain.subarray(3), { dictionaries: [dict] }), { joinedAt: 0, values: ['admin', 'admin'] });
});
