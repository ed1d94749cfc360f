// Section 7, Redis: arrays of user records (lib/users.mjs) at 10 ... 100k
// items stored in a redis-server of our own as JSON, MessagePack (msgpackr,
// plain and with records) and Tersa: bytes per value, MEMORY USAGE per key,
// encode and decode time per array (from and to the bytes Redis holds).
//
//   node bench/node/redis.mjs [--json OUT]
//   env: BENCH_MODE=full|quick|smoke (or QUICK=1 / SMOKE=1), USERS_SIZES=10,1000
//
// Exits 1 if redis-server cannot be started or a value does not come back
// exactly (after writing OUT, with "correct": false on that row).
import crypto from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { CODECS, CODEC_NAMES, versions } from './lib/codecs.mjs';
import { startRedis, binaryClient } from './lib/redis-server.mjs';
import { users } from './lib/users.mjs';
import { MODE, PLAN, docName, median, slice, shuffle, writeResult } from './lib/plan.mjs';

const log = (s) => process.stderr.write(`${s}\n`);
// Ended by a signal (the runner's time limit, ^C): exit so that the exit
// handlers stop the servers and remove the temporary directories.
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(1));

async function main() {
  const redis = await startRedis();
  log(`redis-server ${redis.version} on 127.0.0.1:${redis.port}`);
  let client;
  try {
    client = await binaryClient(redis.url);
    return await measure(client, redis);
  } finally {
    if (client) await client.close().catch(() => {});
    await redis.stop();
  }
}

async function measure(client, redis) {
  const all = users(Math.max(...PLAN.sizes));
  const codecs = Object.fromEntries(CODEC_NAMES.map((n) => [n, CODECS[n].make()]));
  const cases = []; // { n, value, codec, stored (Buffer from GET), row }
  const documents = [];
  const arrays = [];
  for (const n of PLAN.sizes) {
    const value = all.slice(0, n);
    const json = JSON.stringify(value);
    arrays.push({ document: docName(n), items: n, json_bytes: Buffer.byteLength(json), sha256: crypto.createHash('sha256').update(json).digest('hex').slice(0, 16) });
    for (const name of CODEC_NAMES) {
      const row = { document: docName(n), group: 'redis', codec: name, items: n, correct: false };
      documents.push(row);
      const c = codecs[name];
      let bytes;
      try {
        bytes = c.encode(value);
        row.bytes = bytes.length;
        if (!isDeepStrictEqual(c.decode(bytes), value)) {
          row.error = 'decode(encode(users)) differs from users';
          continue;
        }
      } catch (e) {
        row.error = `${e.name}: ${e.message}`.slice(0, 200);
        continue;
      }
      const key = `users:${name}:${n}`;
      await client.set(key, bytes);
      row.redis_bytes = await client.memoryUsage(key, { SAMPLES: 0 });
      const stored = await client.get(key);
      if (!Buffer.isBuffer(stored) || !stored.equals(bytes)) {
        row.error = 'GET returned other bytes than SET stored';
        continue;
      }
      if (!isDeepStrictEqual(c.decode(stored), value)) {
        row.error = 'decode(GET) differs from users';
        continue;
      }
      row.correct = true;
      cases.push({ n, value, codec: c, stored, row });
    }
  }

  // Warm-up round (discarded), then rounds in which every (array, codec,
  // operation) runs for one time slice in a shuffled order.
  const times = new Map(cases.map((k) => [k, { encode: [], decode: [] }]));
  const pairs = cases.flatMap((k) => [[k, 'encode'], [k, 'decode']]);
  for (let round = 0; round <= PLAN.rounds; round++) {
    for (const [k, op] of shuffle([...pairs])) {
      const fn = op === 'encode' ? () => k.codec.encode(k.value) : () => k.codec.decode(k.stored);
      const ns = slice(fn, PLAN.slice_ms);
      if (round > 0) times.get(k)[op].push(ns);
    }
    if (round > 0) log(`round ${round}/${PLAN.rounds}`);
  }
  for (const k of cases) {
    const t = times.get(k);
    const enc = median(t.encode);
    const dec = median(t.decode);
    Object.assign(k.row, {
      encode_ms: enc / 1e6, decode_ms: dec / 1e6, encode_per_s: 1e9 / enc, decode_per_s: 1e9 / dec,
      bytes_per_item: k.row.bytes / k.n, redis_bytes_per_item: k.row.redis_bytes / k.n,
    });
  }
  const info = (await client.info('memory')).toString();
  return {
    schema: 'tersa-bench/1',
    runtime: `Node.js ${process.version}`,
    libraries: { ...versions(), 'redis-server': redis.version },
    mode: MODE,
    params: { sizes: PLAN.sizes, slice_ms: PLAN.slice_ms, rounds: PLAN.rounds },
    allocator: /mem_allocator:(\S+)/.exec(info)?.[1] ?? null,
    codecs: Object.fromEntries(CODEC_NAMES.map((n) => [n, CODECS[n].about])),
    arrays,
    documents,
  };
}

try {
  const result = await main();
  writeResult(result);
  const bad = result.documents.filter((d) => !d.correct);
  for (const d of result.documents) {
    log(`${d.document.padEnd(12)} ${d.codec.padEnd(17)} ${String(d.bytes ?? '-').padStart(9)} B  redis ${String(d.redis_bytes ?? '-').padStart(9)} B  ` +
      `encode ${d.encode_ms?.toFixed(3) ?? '-'} ms  decode ${d.decode_ms?.toFixed(3) ?? '-'} ms${d.correct ? '' : `  FAILED: ${d.error}`}`);
  }
  process.exitCode = bad.length ? 1 : 0;
} catch (e) {
  log(`redis.mjs: ${e.stack || e}`);
  process.exitCode = 1;
}
