// The API shape shared with Ruby and Python (README "The API in each
// language"): stream encoders hand out each frame and the header once,
// options are checked by name, dictionaries given one way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tersa from '../dist/esm/index.js';

const { encode, decode, encodeStream, decodeStream, joinStream, Encoder, Decoder, StreamEncoder, StreamDecoder, Dictionary } = tersa;

const VALUES = [{ id: 1, name: 'a' }, { id: 2, name: 'b' }, ['x', 'x']];
const concat = (parts) => Buffer.concat(parts.map((p) => Buffer.from(p)));

test('stream encoder: the pieces written concatenate to the stream', () => {
  const se = new StreamEncoder();
  const pieces = VALUES.map((v) => se.write(v));
  assert.deepEqual([...pieces[0].subarray(0, 3)], [0xc1, 0x70, 0x12]);
  assert.notEqual(pieces[1][0], 0xc1);
  assert.deepEqual(concat(pieces), Buffer.from(encodeStream(VALUES)));
});

test('stream encoder: header() is taken once, before any frame', () => {
  const se = new StreamEncoder();
  const head = se.header();
  assert.deepEqual([...head], [0xc1, 0x70, 0x12]);
  const frames = VALUES.map((v) => se.write(v));
  assert.deepEqual(concat([head, ...frames]), Buffer.from(encodeStream(VALUES)));
  assert.throws(() => se.header(), /header/);
  const late = new StreamEncoder();
  const first = late.write(1);
  assert.throws(() => late.header(), /header/);
  assert.deepEqual(concat([first, late.write(2)]), Buffer.from(encodeStream([1, 2])), 'still a working stream');
});

test('stream encoder: output receives every piece (a function or a writer)', () => {
  const got = [];
  const se = new StreamEncoder({ output: (b) => got.push(b) });
  const returned = VALUES.map((v) => se.write(v));
  assert.deepEqual(concat(got), Buffer.from(encodeStream(VALUES)));
  assert.deepEqual(concat(returned), concat(got));

  const dict = new Dictionary(['admin'], []);
  const sink = { parts: [], write(b) { this.parts.push(b); } };
  const withHeader = new StreamEncoder({ output: sink, dictionary: dict });
  assert.equal(withHeader.header().length, 11);
  withHeader.write('admin');
  assert.deepEqual(decodeStream(concat(sink.parts), { dictionaries: dict }), ['admin']);

  assert.throws(() => new StreamEncoder({ output: 42 }), TypeError);
  const failing = new StreamEncoder({ output: () => { throw new Error('disk full'); } });
  assert.throws(() => failing.write(1), /disk full/);
  assert.throws(() => failing.write(2), /previous write failed/);
});

test('unknown options are a TypeError, with a hint for the other direction', () => {
  const dict = new Dictionary(['admin'], []);
  const bytes = encode('admin', { dictionary: dict });
  assert.throws(() => decode(bytes, { dictionary: dict }), (e) => e instanceof TypeError && /dictionaries/.test(e.message));
  assert.throws(() => encode(1, { dictionaries: [dict] }), (e) => e instanceof TypeError && /'dictionaries'/.test(e.message));
  assert.throws(() => encode(1, { maxdepth: 3 }), TypeError);
  assert.throws(() => new Decoder({ exactfloats: true }), TypeError);
  assert.throws(() => new StreamDecoder({ joins: true }), TypeError);
  assert.throws(() => new Encoder({ output: () => {} }), TypeError, 'output belongs to StreamEncoder');
  assert.throws(() => decode(bytes, 'dictionaries'), TypeError);
  // An option given as undefined counts as absent.
  assert.equal(decode(encode(1, { dictionary: undefined }), { maxDepth: undefined }), 1);
});

test('dictionaries: one Dictionary or an array of them, in every decode entry point', () => {
  const dict = new Dictionary(['admin', 'user'], [['id', 'role']]);
  const other = new Dictionary(['zz'], []);
  const bytes = encode({ id: 1, role: 'admin' }, { dictionary: dict });
  assert.deepEqual(decode(bytes, { dictionaries: dict }), { id: 1, role: 'admin' });
  assert.deepEqual(decode(bytes, { dictionaries: [other, dict] }), { id: 1, role: 'admin' });
  const stream = encodeStream(['user', 'admin'], { dictionary: dict });
  assert.deepEqual(decodeStream(stream, { dictionaries: dict }), ['user', 'admin']);
  assert.deepEqual(joinStream(stream.subarray(11), { dictionaries: dict }).values, ['user', 'admin']);
  const sd = new StreamDecoder({ dictionaries: dict });
  sd.feed(stream);
  assert.deepEqual([...sd], ['user', 'admin']);
  assert.throws(() => decode(bytes, { dictionaries: 'admin' }), TypeError);
});
