// DictionaryRegistry against a real redis-server started here: publish by id,
// fetch on first use, typed errors for ids the store does not have.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tersa from '../dist/esm/index.js';
import { RespClient, startRedis } from './support/redis.js';

const { Dictionary, DictionaryRegistry, UnknownDictionaryError, DecodeError, dictionaryId, encode, StreamEncoder } = tersa;

const STOCK = new Dictionary(['AAPL', 'MSFT', 'GOOG'], [['symbol', 'price', 'volume'], ['0', '1', '2']]);
const RECORD = { symbol: 'MSFT', price: 411.22, volume: 1234567 };
const hex = (id) => id.toString(16).padStart(16, '0');

let server;
let client;
const opened = [];

before(async () => {
  server = await startRedis();
  client = await new RespClient(server.port).connect();
  await client.flushdb();
});

after(() => {
  for (const c of opened) c.close();
  client?.close();
  server?.stop();
});

class CountingStore {
  constructor(c) { this.c = c; this.gets = 0; }
  get(key) { this.gets++; return this.c.get(key); }
  set(key, value) { return this.c.set(key, value); }
}

async function consumer(prefix) {
  const c = await new RespClient(server.port).connect();
  opened.push(c);
  const store = new CountingStore(c);
  return [new DictionaryRegistry(store, { prefix }), store];
}

test('a consumer fetches an unknown id once, then decodes', async () => {
  const prefix = 'test:fetch:';
  const producer = new DictionaryRegistry(client, { prefix });
  assert.equal(await producer.publish(STOCK), STOCK.id);
  assert.deepEqual(await client.get(producer.key(STOCK.id)), STOCK.serialize());
  const bytes = encode(RECORD, { dictionary: STOCK });
  const [reg, store] = await consumer(prefix);
  assert.equal(reg.cached(STOCK.id), false);
  const results = await Promise.all([reg.decode(bytes), reg.decode(bytes), reg.decode(bytes)]);
  for (const r of results) assert.deepEqual(r, RECORD);
  assert.equal(store.gets, 1);
  assert.equal(reg.cached(STOCK.id), true);
  assert.equal((await reg.fetch(STOCK.id)).id, STOCK.id);
});

test('one record with the dictionary takes at most the 26 bytes of int-keyed MessagePack', async () => {
  const prefix = 'test:single:';
  await new DictionaryRegistry(client, { prefix }).publish(STOCK);
  const record = { 0: 'AAPL', 1: 150.25, 2: 1234567 };
  const bytes = encode(new Map([['0', 'AAPL'], ['1', 150.25], ['2', 1234567]]), { dictionary: STOCK });
  assert.ok(bytes.length <= 26, `${bytes.length} bytes`);
  assert.equal(dictionaryId(bytes), STOCK.id);
  const [reg] = await consumer(prefix);
  assert.deepEqual({ ...(await reg.decode(bytes)) }, record);
});

test('an id the store lacks is a typed error, and a later publish is found', async () => {
  const prefix = 'test:missing:';
  const bytes = encode(RECORD, { dictionary: STOCK });
  const [reg] = await consumer(prefix);
  await assert.rejects(reg.decode(bytes), (e) => {
    assert.ok(e instanceof UnknownDictionaryError);
    assert.ok(e instanceof DecodeError);
    assert.equal(e.code, 'unknown_dictionary');
    assert.equal(e.offset, 3);
    assert.equal(e.dictionaryId, STOCK.id);
    assert.equal(e.key, prefix + hex(STOCK.id));
    assert.match(e.message, new RegExp(hex(STOCK.id)));
    return true;
  });
  assert.equal(reg.cached(STOCK.id), false);
  await new DictionaryRegistry(client, { prefix }).publish(STOCK);
  assert.deepEqual(await reg.decode(bytes), RECORD);
});

test('an entry that is not that dictionary is refused', async () => {
  const prefix = 'test:wrong:';
  const other = new Dictionary(['TSLA'], [['symbol', 'price', 'volume']]);
  const [reg] = await consumer(prefix);
  await client.set(reg.key(STOCK.id), other.serialize());
  await assert.rejects(reg.fetch(STOCK.id), (e) => e instanceof UnknownDictionaryError && e.message.includes(hex(other.id)));
  await client.set(reg.key(STOCK.id), 'not a dictionary');
  await assert.rejects(reg.decode(encode(RECORD, { dictionary: STOCK })), (e) => e instanceof UnknownDictionaryError && /not a serialized dictionary/.test(e.message));
  const text = new DictionaryRegistry({ get: async (k) => Buffer.from(await client.get(k)).toString('latin1'), set: () => {} }, { prefix });
  await assert.rejects(text.fetch(STOCK.id), (e) => e instanceof UnknownDictionaryError && /returned text/.test(e.message));
  assert.equal(reg.cached(STOCK.id), false);
});

test('buffers without a dictionary never touch the store', async () => {
  const [reg, store] = await consumer('test:none:');
  assert.deepEqual(await reg.decode(encode(RECORD)), RECORD);
  assert.equal(dictionaryId(encode(RECORD)), null);
  await assert.rejects(reg.decode(new TextEncoder().encode('{"json": 1}')), DecodeError);
  await assert.rejects(reg.decode(Uint8Array.of(0xc1, 0x70, 0x11, 0x01)), DecodeError); // DICT flag, id cut short
  assert.equal(store.gets, 0);
});

test('streams and joined streams', async () => {
  const prefix = 'test:stream:';
  await new DictionaryRegistry(client, { prefix }).publish(STOCK);
  const records = Array.from({ length: 50 }, (_, i) => ({ symbol: ['AAPL', 'MSFT', 'GOOG'][i % 3], price: 100 + i / 4, volume: i * 1000 }));
  const enc = new StreamEncoder({ dictionary: STOCK, syncFrames: 10 });
  const stream = Buffer.concat([enc.header(), ...records.map((r) => enc.write(r))]);
  const [reg] = await consumer(prefix);
  assert.deepEqual(await reg.decodeStream(stream), records);
  // A late subscriber: frames from the 13th on, no header; it joins at frame 20.
  const frames = [];
  for (let pos = 11; pos < stream.length;) {
    const n = stream[pos] >> 1; // one-byte length prefixes: these frames are short
    frames.push(stream.subarray(pos, pos + 1 + n));
    pos += 1 + n;
  }
  assert.equal(frames.length, 50);
  const tail = new Uint8Array(Buffer.concat(frames.slice(13)));
  const [fresh, store] = await consumer(prefix);
  assert.equal(dictionaryId(tail, true), STOCK.id);
  assert.deepEqual(await fresh.decodeStream(tail, { join: true }), records.slice(20));
  const joined = await fresh.joinStream(tail);
  assert.equal(joined.joinedAt, frames.slice(13, 20).reduce((a, f) => a + f.length, 0));
  assert.deepEqual(joined.values, records.slice(20));
  assert.equal(store.gets, 1);
  assert.equal(dictionaryId(new Uint8Array(Buffer.concat(frames.slice(13, 20))), true), null);
});

test('the store must have get and set', () => {
  assert.throws(() => new DictionaryRegistry({}), TypeError);
});
