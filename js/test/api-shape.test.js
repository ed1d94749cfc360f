// The API shape shared with Ruby and Python (README "The API in each
// language"): stream encoders hand out each frame and the header once,
// options are checked by name, dictionaries given one way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as tersa from '../dist/esm/index.js';

const { encode, decode, encodeStream, decodeStream, joinStream, Encoder, Decoder, StreamEncoder, StreamDecoder, Dictionary, Ext, addExtension, removeExtension } = tersa;

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

test('dictionary ids print as 0x and 16 hex digits, in unknown_dictionary errors too', () => {
  const dict = new Dictionary(['admin'], []);
  const hex = '0x' + dict.id.toString(16).padStart(16, '0');
  assert.equal(String(dict), `Dictionary(id=${hex}, strings=1, shapes=0)`);
  const single = encode('admin', { dictionary: dict });
  const stream = encodeStream(['admin'], { dictionary: dict });
  const fed = () => { const sd = new StreamDecoder(); sd.feed(stream); [...sd]; };
  for (const run of [() => decode(single), () => decodeStream(stream), fed, () => decode(single, { dictionaries: new Dictionary(['xx'], []) })]) {
    assert.throws(run, (e) => e.code === 'unknown_dictionary' && e.message.includes(`dictionary ${hex} was not supplied`));
  }
});

test('a cycle is one line naming where it closes', () => {
  const a = [1, 2];
  const d = { x: [0, 0, 0, { b: a }] };
  a.push(d);
  assert.throws(() => encode({ a: d }), (e) => e.message === 'circular reference: the value at $["a"] contains itself at $["a"]["x"][3]["b"][2]' && e.path === '$["a"]["x"][3]["b"][2]');
  assert.throws(() => new StreamEncoder().write([a]), (e) => e.message === 'circular reference: the value at $[0] contains itself at $[0][2]["x"][3]["b"]');
  assert.throws(() => encode(a, { maxDepth: 100000 }), (e) => e.message === 'circular reference: the value at $ contains itself at $[2]["x"][3]["b"]');
});

test('addExtension: a type is one class\'s until removeExtension', () => {
  class Money { constructor(c) { this.c = c; } }
  class Other { constructor(x) { this.x = x; } }
  const write = (m) => Uint8Array.of(m.c);
  addExtension({ type: 4200, Class: Money, write, read: (b) => new Money(b[0]) });
  try {
    const bytes = encode(new Money(5));
    assert.throws(() => addExtension({ type: 4200, Class: Other, write: () => Uint8Array.of(0), read: () => new Other(0) }),
      (e) => e instanceof TypeError && e.message === 'extension type 4200 is registered to Money: removeExtension(4200) first');
    assert.throws(() => addExtension({ type: 4201, Class: Money, write, read: () => 0 }), /Money is registered as extension type 4200/);
    assert.throws(() => addExtension({ type: 4200, read: () => 0 }), TypeError, 'a read-only extension cannot take a class\'s type');
    assert.deepEqual(decode(bytes), new Money(5), 'the old mapping is intact');
    addExtension({ type: 4200, Class: Money, write, read: () => 'replaced' }); // the same class again: replaces
    assert.equal(decode(bytes), 'replaced');
    removeExtension(4200);
    assert.deepEqual(decode(bytes), new Ext(4200, Uint8Array.of(5)));
    assert.throws(() => encode(new Money(1)), /Money/);
    addExtension({ type: 4200, Class: Other, write: (o) => Uint8Array.of(o.x), read: (b) => new Other(b[0]) });
    assert.deepEqual(decode(encode(new Other(7))), new Other(7));
  } finally {
    removeExtension(4200);
  }
});

test('Dictionary.fromSamples limits are integers of at least 1, unknown options a TypeError', () => {
  const samples = [{ a: 'hello' }, { a: 'hello' }];
  assert.equal(Dictionary.fromSamples(samples, { maxStrings: 1, maxShapes: 1, minCount: 1 }).strings.length, 1);
  for (const opts of [{ maxStrings: 0 }, { maxShapes: 0 }, { minCount: 0 }, { maxStrings: -1 }, { minCount: -1 }]) {
    assert.throws(() => Dictionary.fromSamples(samples, opts), RangeError, JSON.stringify(opts));
  }
  assert.throws(() => Dictionary.fromSamples(samples, { maxStrings: 1.5 }), TypeError);
  assert.throws(() => Dictionary.fromSamples(samples, { max_strings: 1 }), TypeError);
});

// The same defect, the same code in every language (SPEC 10): every prefix of
// the valid vectors gets the reference codec's code and offset, decoded whole
// and fed byte by byte (Ruby and Python run the same check).
test('truncated input gets the reference codes and offsets', () => {
  const oracle = new URL('../../spec/tools/prefix_outcomes.py', import.meta.url).pathname;
  const lines = execFileSync('python3', [oracle], { maxBuffer: 1 << 28 }).toString().trim().split('\n');
  assert.ok(lines.length > 5000);
  const outcome = (run) => {
    try { run(); return 'ok'; } catch (e) { if (!(e instanceof tersa.DecodeError)) throw e; return `${e.code}@${e.offset}`; }
  };
  for (const line of lines) {
    const c = JSON.parse(line);
    const data = Buffer.from(c.hex, 'hex');
    const want = c.code === 'ok' ? 'ok' : `${c.code}@${c.offset}`;
    assert.equal(outcome(() => (c.stream ? decodeStream(data) : decode(data))), want, c.hex);
    if (!c.stream) continue;
    const sd = new StreamDecoder();
    assert.equal(outcome(() => { for (let i = 0; i < data.length; i++) { sd.feed(data.subarray(i, i + 1)); [...sd]; } sd.end(); }), want, 'fed: ' + c.hex);
  }
});
