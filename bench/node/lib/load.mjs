// A closed-loop HTTP load generator on undici: `connections` loops, each
// sending a GET, reading the whole body, decoding it and checking it, then
// sending the next, until `seconds` have passed and at least `minRequests`
// were sent, or `maxSeconds` have passed, or `maxRequests` were sent.
//
// Not autocannon: its response hook (requests[].onResponse) receives the
// body as a string built by `body += chunk` (autocannon 9,
// lib/pipelinedRequestsQueue.js), so every chunk is converted as UTF-8 and a
// binary body (MessagePack, Tersa) arrives corrupted and cannot be decoded;
// its public API offers no hook with the bytes. undici gives the body as
// Buffers, and its client is what Node's own fetch runs on.
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { quantile } from './plan.mjs';

let clockTick = null;
/** CPU seconds (user + system) used so far by process `pid` (Linux /proc). */
export function cpuSeconds(pid) {
  clockTick ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / clockTick; // utime, stime (fields 14, 15)
}

/**
 * check(body: Buffer) -> null when the body is right, else a reason (string).
 * Returns { requests, ok, seconds, rps, latency_ms: {p50, p90, p99, max}, bytes, errors: [first reasons] }.
 */
export async function load(pool, path, check, { connections, seconds, minRequests = 1, maxSeconds = seconds, maxRequests }) {
  const lat = new Float64Array(maxRequests);
  let sent = 0;
  let done = 0;
  let ok = 0;
  let bytes = 0;
  const errors = [];
  const fail = (why) => { if (errors.length < 5) errors.push(why); };
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const hardEnd = t0 + Math.max(seconds, maxSeconds) * 1000;
  const more = () => {
    const now = performance.now();
    return sent < maxRequests && now < hardEnd && (now < end || sent < minRequests);
  };
  async function loop() {
    while (more()) {
      sent++;
      const s = performance.now();
      try {
        const { statusCode, body } = await pool.request({ path, method: 'GET' });
        const buf = Buffer.from(await body.arrayBuffer());
        lat[done++] = performance.now() - s; // to the last byte of the body; decoding follows
        bytes += buf.length;
        if (statusCode !== 200) {
          fail(`HTTP ${statusCode}`);
          continue;
        }
        const why = check(buf);
        if (why) fail(why);
        else ok++;
      } catch (e) {
        lat[done++] = performance.now() - s;
        fail(`${e.name}: ${e.message}`);
      }
    }
  }
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - t0) / 1000;
  const sorted = lat.subarray(0, done).sort();
  return {
    requests: done, ok, seconds: elapsed, rps: ok / elapsed, bytes,
    latency_ms: { p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), p99: quantile(sorted, 0.99), max: sorted[done - 1] ?? null },
    errors,
  };
}
