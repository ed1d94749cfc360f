// Section 7, HTTP: the user arrays stored in a redis-server of our own in each
// format, served by an Express server in its own process (server.mjs), loaded
// from this process over loopback by a closed-loop undici client
// (lib/load.mjs) that decodes and checks every body it receives. Per format,
// array size and server mode (raw: the stored bytes; api: decoded and encoded
// again): requests per second, latency percentiles, bytes per response and
// the server's and this client's CPU time per request.
//
//   node bench/node/http.mjs [--json OUT]
//   env: BENCH_MODE=full|quick|smoke (or QUICK=1 / SMOKE=1), USERS_SIZES=10,1000
//
// Exits 1 if redis-server or the HTTP server cannot be started, or a response
// is missing, fails or decodes to other records (after writing OUT).
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Pool } from 'undici';
import { CODECS, CODEC_NAMES, versions } from './lib/codecs.mjs';
import { load, cpuSeconds } from './lib/load.mjs';
import { MODE, PLAN, connectionsFor, docName, shuffle, writeResult } from './lib/plan.mjs';
import { startRedis, binaryClient } from './lib/redis-server.mjs';
import { users } from './lib/users.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER_MODES = ['raw', 'api'];
const log = (s) => process.stderr.write(`${s}\n`);
// Ended by a signal (the runner's time limit, ^C): exit so that the exit
// handlers stop the servers and remove the temporary directories.
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(1));

/** Starts server.mjs; resolves { port, pid, child, stop() } once it prints its port; rejects if it exits or stays silent. */
function startServer(redisUrl) {
  const child = spawn(process.execPath, [path.join(HERE, 'server.mjs'), redisUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-2000); });
  const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve(sig || code)));
  process.on('exit', () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { stop(); reject(new Error(`server.mjs did not listen within 20 s: ${stderr.trim()}`)); }, 20_000);
    exited.then((why) => { clearTimeout(timer); reject(new Error(`server.mjs exited (${why}) before listening: ${stderr.trim()}`)); });
    child.on('error', (e) => { clearTimeout(timer); reject(new Error(`server.mjs could not start: ${e.message}`)); });
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      try {
        const { port } = JSON.parse(line);
        resolve({ port, pid: child.pid, child, stop, stderr: () => stderr });
      } catch {
        stop();
        reject(new Error(`server.mjs printed ${JSON.stringify(line.slice(0, 200))} instead of its port`));
      }
    });
  });
}

async function main() {
  const redis = await startRedis();
  log(`redis-server ${redis.version} on 127.0.0.1:${redis.port}`);
  let client;
  let server;
  let pool;
  try {
    client = await binaryClient(redis.url);
    const all = users(Math.max(...PLAN.sizes));
    const arrays = new Map(PLAN.sizes.map((n) => [n, all.slice(0, n)]));
    const writers = Object.fromEntries(CODEC_NAMES.map((c) => [c, CODECS[c].make()]));
    for (const [n, value] of arrays) {
      for (const c of CODEC_NAMES) await client.set(`users:${c}:${n}`, writers[c].encode(value));
    }
    server = await startServer(redis.url);
    log(`server.mjs (Express) on 127.0.0.1:${server.port}, pid ${server.pid}`);
    const h = PLAN.http;
    pool = new Pool(`http://127.0.0.1:${server.port}`, { connections: h.connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const readers = Object.fromEntries(CODEC_NAMES.map((c) => [c, CODECS[c].make()]));
    const documents = [];
    for (const [n, value] of arrays) {
      for (const mode of SERVER_MODES) {
        const rows = new Map();
        for (const codec of CODEC_NAMES) {
          const row = { document: docName(n), group: mode, codec, items: n, connections: connectionsFor(n), correct: false, runs: [] };
          rows.set(codec, row);
          documents.push(row);
          // Once per format and size, the whole decoded body against the records.
          const res = await pool.request({ path: `/${mode}/${codec}/${n}`, method: 'GET' });
          const body = Buffer.from(await res.body.arrayBuffer());
          row.bytes = body.length;
          row.content_type = res.headers['content-type'];
          try {
            if (res.statusCode !== 200) row.error = `HTTP ${res.statusCode}`;
            else if (!isDeepStrictEqual(readers[codec].decode(body), value)) row.error = 'the decoded body differs from the records';
          } catch (e) {
            row.error = `decode failed: ${e.message}`.slice(0, 200);
          }
        }
        // Rounds; in each, every format once in a shuffled order (see PLAN.http
        // for the warm-up).
        const last = value[n - 1].userId;
        for (let round = 0; round < h.rounds; round++) {
          for (const codec of shuffle([...CODEC_NAMES])) {
            const row = rows.get(codec);
            if (row.error) continue;
            const dec = readers[codec];
            const check = (buf) => {
              const v = dec.decode(buf);
              return Array.isArray(v) && v.length === n && v[n - 1].userId === last ? null : 'the decoded body is not the records';
            };
            const p = `/${mode}/${codec}/${n}`;
            const connections = connectionsFor(n);
            if (round === 0 && n < 10000) await load(pool, p, check, { connections, seconds: h.warm_s, maxRequests: h.max_requests });
            const s0 = cpuSeconds(server.pid);
            const c0 = process.cpuUsage();
            const r = await load(pool, p, check, {
              connections, seconds: h.seconds, minRequests: h.min_requests, maxSeconds: h.max_seconds, maxRequests: h.max_requests,
            });
            const c1 = process.cpuUsage(c0);
            r.server_cpu_s = cpuSeconds(server.pid) - s0;
            r.client_cpu_s = (c1.user + c1.system) / 1e6;
            row.runs.push(r);
          }
        }
        for (const row of rows.values()) {
          if (row.error) continue;
          summarize(row);
          log(`${row.document.padEnd(12)} ${mode} ${row.codec.padEnd(17)} ${row.rps.toFixed(0).padStart(7)} req/s  p50 ${row.p50_ms.toFixed(2)} ms  p99 ${row.p99_ms.toFixed(2)} ms  ` +
            `${row.bytes} B${row.correct ? '' : `  FAILED: ${row.error}`}`);
        }
      }
    }
    return {
      schema: 'tersa-bench/1',
      runtime: `Node.js ${process.version}`,
      libraries: { ...versions(), 'redis-server': redis.version },
      mode: MODE,
      params: { sizes: PLAN.sizes, ...h, server_modes: SERVER_MODES },
      codecs: Object.fromEntries(CODEC_NAMES.map((c) => [c, CODECS[c].about])),
      load_generator: 'undici Pool, closed loop (lib/load.mjs): each connection sends the next GET after decoding the previous body',
      documents,
    };
  } finally {
    if (pool) await pool.close().catch(() => {});
    if (server) await server.stop();
    if (client) await client.close().catch(() => {});
    await redis.stop();
  }
}

/** Rates over all rounds together; latency percentiles over all their requests. */
function summarize(row) {
  const sum = (k) => row.runs.reduce((s, r) => s + r[k], 0);
  const requests = sum('requests');
  const ok = sum('ok');
  const seconds = sum('seconds');
  row.requests = requests;
  row.seconds = seconds;
  row.rps = ok / seconds;
  // Percentiles of the pooled runs are approximated by the request-weighted
  // mean of each run's (one run in quick and smoke modes).
  const w = (q) => row.runs.reduce((s, r) => s + (r.latency_ms[q] ?? 0) * r.requests, 0) / Math.max(requests, 1);
  row.p50_ms = w('p50');
  row.p90_ms = w('p90');
  row.p99_ms = w('p99');
  row.server_cpu_ms_per_request = (sum('server_cpu_s') * 1000) / Math.max(requests, 1);
  row.client_cpu_ms_per_request = (sum('client_cpu_s') * 1000) / Math.max(requests, 1);
  const errors = row.runs.flatMap((r) => r.errors);
  if (requests === 0) row.error = 'no request completed';
  else if (ok !== requests) row.error = `${requests - ok} of ${requests} responses failed: ${errors[0]}`;
  else row.correct = true;
  row.runs = row.runs.map((r) => ({ requests: r.requests, seconds: +r.seconds.toFixed(3), rps: +r.rps.toFixed(1), p50: r.latency_ms.p50, p99: r.latency_ms.p99 }));
}

try {
  const result = await main();
  writeResult(result);
  const bad = result.documents.filter((d) => !d.correct);
  for (const d of bad) log(`FAILED ${d.group} ${d.document} ${d.codec}: ${d.error}`);
  process.exitCode = bad.length ? 1 : 0;
} catch (e) {
  log(`http.mjs: ${e.stack || e}`);
  process.exitCode = 1;
}
