// tersa/express over real HTTP: an Express app listening on a loopback port,
// driven by fetch (undici), so bodies, status codes and headers are what a
// client on the wire sees.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import express from 'express';
import { decode, decodeStream, encode, encodeStream, Dictionary, DecodeError } from 'tersa';
import { parser, send, respond, MEDIA_TYPE, TersaBodyError } from 'tersa/express';

const require = createRequire(import.meta.url);
const LIMIT = 1024;
const STOCK = new Dictionary(['AAPL', 'MSFT'], [['symbol', 'price']]);

let server;
let base;
const seen = []; // what the /next route's error handler received

before(async () => {
  const app = express();
  app.set('env', 'test'); // Express's error handler then logs no stacks for the expected 500
  const strict = parser({ limit: LIMIT });
  // The Tersa parser first, then Express's own: each leaves the other's type alone.
  app.post('/echo', strict, express.json(), (req, res) => {
    respond(req, res, { body: req.body ?? null, contentType: req.get('content-type') ?? null });
  });
  app.post('/raw', strict, (req, res) => {
    res.status(201);
    send(res, req.body);
  });
  app.post('/parts', strict, (req, res) => {
    send(res, { body: req.body ?? null, stream: req.tersaStream ?? null });
  });
  app.get('/value', (req, res) => {
    respond(req, res, { id: 'usr_1', n: 1.5, tags: ['a', 'b'] });
  });
  app.get('/unencodable', (req, res) => {
    send(res, { f: () => 1 });
  });
  app.post('/dict', parser({ decoder: { dictionaries: [STOCK] } }), (req, res) => {
    send(res, req.body, { dictionary: STOCK });
  });
  app.post('/async', parser({
    decode: async (bytes) => ({ decoded: decode(bytes), length: bytes.length }),
    decodeStream: async (bytes) => decodeStream(bytes).reverse(),
  }), (req, res) => {
    send(res, req.body ?? req.tersaStream);
  });
  app.post('/next', parser({ limit: LIMIT, errors: 'next' }), (req, res) => {
    send(res, req.body);
  });
  app.use((err, req, res, next) => {
    if (req.path !== '/next') return next(err);
    seen.push(err);
    res.status(err.status).type('text/plain').send(`handled ${err.type}`);
  });
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => {
  server.closeAllConnections();
  server.close(resolve);
}));

const post = (path, body, headers = {}) =>
  fetch(base + path, { method: 'POST', body, headers: { 'content-type': MEDIA_TYPE, ...headers } });

async function tersaBody(res) {
  assert.equal(res.headers.get('content-type'), MEDIA_TYPE);
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.equal(Number(res.headers.get('content-length')), bytes.length);
  return decode(bytes);
}

test('a Tersa body is decoded into req.body and answered in Tersa when Accept asks for it', async () => {
  const value = { id: 'usr_1', big: 2n ** 70n, bin: new Uint8Array([0, 1, 255]), at: new Date('2025-04-16T09:23:47Z'), nested: [{ a: 1 }, null, true] };
  const res = await post('/echo', encode(value), { accept: MEDIA_TYPE });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('vary'), /\bAccept\b/);
  assert.deepEqual(await tersaBody(res), { body: value, contentType: MEDIA_TYPE });
});

test('the response helper keeps the status set before it', async () => {
  const value = { ok: [1, 2.5, 'x'] };
  const res = await post('/raw', encode(value));
  assert.equal(res.status, 201);
  assert.deepEqual(await tersaBody(res), value);
});

test('content negotiation: Tersa only when Accept prefers it to JSON', async () => {
  const expected = { id: 'usr_1', n: 1.5, tags: ['a', 'b'] };
  const cases = [
    [undefined, 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['text/html', 'json'], // neither acceptable: JSON rather than a 406
    [MEDIA_TYPE, 'tersa'],
    ['application/*', 'json'],
    [`application/json;q=0.5, ${MEDIA_TYPE}`, 'tersa'],
    [`${MEDIA_TYPE};q=0.2, application/json`, 'json'],
    [`application/json;q=0.9, ${MEDIA_TYPE};q=1`, 'tersa'],
    [`*/*;q=0.1, ${MEDIA_TYPE}`, 'tersa'],
  ];
  for (const [accept, want] of cases) {
    const res = await fetch(base + '/value', { headers: accept === undefined ? {} : { accept } });
    assert.equal(res.status, 200, String(accept));
    assert.match(res.headers.get('vary'), /\bAccept\b/, String(accept));
    if (want === 'tersa') {
      assert.deepEqual(await tersaBody(res), expected, String(accept));
    } else {
      assert.match(res.headers.get('content-type'), /^application\/json/, String(accept));
      assert.deepEqual(await res.json(), expected, String(accept));
    }
  }
});

test('a malformed body is a 400 naming the DecodeError code and offset', async () => {
  const good = encode({ list: ['a', 'b', 'c'], n: 12345 });
  const stream = encodeStream([{ a: 1 }, { a: 2 }]);
  const bodies = [good.subarray(0, good.length - 3), Uint8Array.of(0x00, 0x01, 0x02), Uint8Array.of(0xc1), stream.subarray(0, stream.length - 1)];
  for (const body of bodies) {
    let expected;
    try { body === bodies[3] ? decodeStream(body) : decode(body); } catch (e) { expected = e; }
    assert.ok(expected instanceof DecodeError);
    const res = await post('/raw', body);
    assert.equal(res.status, 400);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    assert.deepEqual(await res.json(), { error: 'invalid_body', message: expected.message, code: expected.code, offset: expected.offset });
  }
  // in Tersa to a client that prefers it
  const res = await post('/raw', bodies[0], { accept: MEDIA_TYPE });
  assert.equal(res.status, 400);
  assert.match(res.headers.get('vary'), /\bAccept\b/);
  const body = await tersaBody(res);
  let expected;
  try { decode(bodies[0]); } catch (e) { expected = e; }
  assert.deepEqual(body, { error: 'invalid_body', message: expected.message, code: expected.code, offset: expected.offset });
});

test('a body over the limit is a 413, whether its length is declared or chunked', async () => {
  const big = encode('x'.repeat(LIMIT * 4));
  let res = await post('/raw', big);
  assert.equal(res.status, 413);
  assert.deepEqual(await res.json(), { error: 'body_too_large', message: `request body over ${LIMIT} bytes`, limit: LIMIT });

  const chunks = [big.subarray(0, 700), big.subarray(700, 1400), big.subarray(1400)];
  const stream = new ReadableStream({
    pull(controller) {
      const c = chunks.shift();
      if (c) controller.enqueue(c); else controller.close();
    },
  });
  res = await fetch(base + '/raw', { method: 'POST', body: stream, duplex: 'half', headers: { 'content-type': MEDIA_TYPE } });
  assert.equal(res.status, 413);
  assert.equal((await res.json()).error, 'body_too_large');

  // exactly at the limit is accepted, chunked too
  let n = LIMIT;
  while (encode('y'.repeat(n)).length > LIMIT) n--;
  const atLimit = encode('y'.repeat(n));
  assert.equal(atLimit.length, LIMIT);
  res = await post('/raw', atLimit);
  assert.equal(res.status, 201);
  assert.equal(await tersaBody(res), 'y'.repeat(n));
  const parts = [atLimit.subarray(0, 500), atLimit.subarray(500)];
  res = await fetch(base + '/raw', {
    method: 'POST', duplex: 'half', headers: { 'content-type': MEDIA_TYPE },
    body: new ReadableStream({ pull(c) { const p = parts.shift(); if (p) c.enqueue(p); else c.close(); } }),
  });
  assert.equal(res.status, 201);
  assert.equal(await tersaBody(res), 'y'.repeat(n));
});

test('a stream body is decoded into req.tersaStream; an empty body sets nothing', async () => {
  const values = [{ a: 1 }, 'two', [3n ** 45n]];
  let res = await post('/parts', encodeStream(values));
  assert.deepEqual(await tersaBody(res), { body: null, stream: values });
  res = await post('/parts', encode(values));
  assert.deepEqual(await tersaBody(res), { body: values, stream: null });
  res = await post('/parts', new Uint8Array(0));
  assert.deepEqual(await tersaBody(res), { body: null, stream: null });
});

test('the connection keeps serving after a refused body', async () => {
  for (let i = 0; i < 3; i++) {
    assert.equal((await post('/raw', new Uint8Array(LIMIT + 1))).status, 413);
    const res = await post('/raw', encode({ i }));
    assert.deepEqual(await tersaBody(res), { i });
  }
});

test('other content types and bodiless requests are left alone', async () => {
  let res = await fetch(base + '/echo', { method: 'POST', body: JSON.stringify({ a: [1, 2] }), headers: { 'content-type': 'application/json' } });
  assert.deepEqual(await res.json(), { body: { a: [1, 2] }, contentType: 'application/json' });

  // bytes that are not Tersa, under another type: not parsed, so no 400
  res = await fetch(base + '/echo', { method: 'POST', body: 'plain text', headers: { 'content-type': 'text/plain' } });
  assert.deepEqual(await res.json(), { body: null, contentType: 'text/plain' });

  res = await fetch(base + '/echo', { method: 'POST', body: Uint8Array.of(1, 2, 3), headers: { 'content-type': 'application/octet-stream' } });
  assert.deepEqual(await res.json(), { body: null, contentType: 'application/octet-stream' });

  // the media type with parameters and in another case is still Tersa
  res = await post('/echo', encode([1, 2]), { 'content-type': 'Application/VND.Tersa; charset=binary' });
  assert.deepEqual(await res.json(), { body: [1, 2], contentType: 'Application/VND.Tersa; charset=binary' });
});

test('a compressed body is a 415', async () => {
  const res = await post('/raw', encode({ a: 1 }), { 'content-encoding': 'gzip' });
  assert.equal(res.status, 415);
  assert.equal((await res.json()).error, 'unsupported_encoding');
});

test('decoder options reach the decoder: a dictionary-encoded body', async () => {
  const record = { symbol: 'MSFT', price: 411.22 };
  const bytes = encode(record, { dictionary: STOCK });
  const res = await post('/dict', bytes);
  assert.equal(res.status, 200);
  const out = new Uint8Array(await res.arrayBuffer());
  assert.deepEqual(decode(out, { dictionaries: [STOCK] }), record);

  // the same bytes where the parser holds no dictionary
  const refused = await post('/raw', bytes);
  assert.equal(refused.status, 400);
  const body = await refused.json();
  assert.equal(body.error, 'invalid_body');
  assert.equal(body.code, 'unknown_dictionary');
  assert.equal(body.offset, 3);
});

test('decode and decodeStream functions replace the decoder, and may be asynchronous', async () => {
  const bytes = encode({ a: 'b' });
  let res = await post('/async', bytes);
  assert.deepEqual(await tersaBody(res), { decoded: { a: 'b' }, length: bytes.length });
  res = await post('/async', encodeStream([1, 2, 3]));
  assert.deepEqual(await tersaBody(res), [3, 2, 1]);
});

test("errors: 'next' hands a TersaBodyError to the application's error handler", async () => {
  seen.length = 0;
  let res = await post('/next', Uint8Array.of(0xff));
  assert.equal(res.status, 400);
  assert.equal(await res.text(), 'handled entity.parse.failed');
  res = await post('/next', new Uint8Array(LIMIT + 1));
  assert.equal(res.status, 413);
  assert.equal(await res.text(), 'handled entity.too.large');
  assert.equal(seen.length, 2);
  const [bad, big] = seen;
  assert.ok(bad instanceof TersaBodyError);
  assert.equal(bad.status, 400);
  assert.ok(bad.cause instanceof DecodeError);
  assert.equal(bad.body.error, 'invalid_body');
  assert.equal(bad.body.code, bad.cause.code);
  assert.equal(bad.body.offset, bad.cause.offset);
  assert.ok(big instanceof TersaBodyError);
  assert.equal(big.status, 413);
  assert.equal(big.cause, undefined);
});

test('an unencodable response value is a 500 from Express, nothing half-sent', async () => {
  const res = await fetch(base + '/unencodable');
  assert.equal(res.status, 500);
  assert.notEqual(res.headers.get('content-type'), MEDIA_TYPE);
});

test('limit accepts byte counts and sizes with units, and refuses nonsense', () => {
  assert.equal(typeof parser({ limit: 0 }), 'function');
  assert.equal(typeof parser({ limit: '1.5mb' }), 'function');
  for (const limit of ['ten', '-1kb', -1, NaN, '5tb']) {
    assert.throws(() => parser({ limit }), TypeError, String(limit));
  }
});

test('tersa/express loads through require too, sharing DecodeError and TersaBodyError with the import', () => {
  const cjs = require('tersa/express');
  assert.equal(cjs.MEDIA_TYPE, MEDIA_TYPE);
  assert.equal(cjs.TersaBodyError, TersaBodyError);
  assert.equal(typeof cjs.parser, 'function');
  assert.equal(require('tersa').DecodeError, DecodeError);
  assert.match(require.resolve('tersa/express'), /dist[\\/]cjs[\\/]express\.js$/);
});
