// Mode, sizes and timing shared by redis.mjs and http.mjs; the result file.
import fs from 'node:fs';

export const MODE = process.env.BENCH_MODE || (process.env.SMOKE === '1' ? 'smoke' : process.env.QUICK === '1' ? 'quick' : 'full');
if (!['full', 'quick', 'smoke'].includes(MODE)) throw new Error(`BENCH_MODE=${MODE}: expected full, quick or smoke`);

// slice_ms/rounds: encode and decode timing (redis.mjs). http (http.mjs), per
// format, size and round: a load of `seconds` that goes on until at least
// min_requests have been sent but never past max_seconds, with at most
// max_requests; warm_s: a warm-up load before the first round (sizes under 10k:
// above, the request that checks the whole body warms up enough).
const PLANS = {
  full: { sizes: [10, 100, 1000, 10000, 100000], slice_ms: 50, rounds: 5,
    http: { seconds: 1.5, warm_s: 0.5, rounds: 2, connections: 10, min_requests: 3, max_seconds: 15, max_requests: 200000 } },
  quick: { sizes: [10, 100, 1000, 10000, 100000], slice_ms: 15, rounds: 3,
    http: { seconds: 0.6, warm_s: 0.25, rounds: 1, connections: 10, min_requests: 2, max_seconds: 8, max_requests: 100000 } },
  smoke: { sizes: [10, 100], slice_ms: 2, rounds: 1,
    http: { seconds: 0.2, warm_s: 0.05, rounds: 1, connections: 4, min_requests: 1, max_seconds: 5, max_requests: 2000 } },
};

export const PLAN = structuredClone(PLANS[MODE]);
// USERS_SIZES=10,1000 runs other sizes (by hand; the runner never sets it).
if (process.env.USERS_SIZES) {
  PLAN.sizes = process.env.USERS_SIZES.split(',').map((s) => Number(s.trim()));
  if (PLAN.sizes.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error(`USERS_SIZES=${process.env.USERS_SIZES}: expected counts`);
}

export const docName = (n) => `users_${n}`;

// Concurrent requests per load. A 10k-record body takes the server tens of
// milliseconds and a 100k one hundreds: with autocannon's default of 10
// connections, a load would wait seconds for the requests queued behind its
// time limit, and the latency measured would be the queue's.
export const connectionsFor = (n) => (n >= 100000 ? 1 : n >= 10000 ? 2 : PLAN.http.connections);

/** The OUT of `--json OUT`, or null. */
export function jsonOut() {
  const i = process.argv.indexOf('--json');
  if (i < 0) return null;
  const out = process.argv[i + 1];
  if (!out) throw new Error('--json needs a file name');
  return out;
}

export function writeResult(result) {
  const out = jsonOut();
  if (out) fs.writeFileSync(out, JSON.stringify(result, null, 1));
}

export const median = (a) => {
  const b = [...a].sort((x, y) => x - y);
  const m = b.length >> 1;
  return b.length % 2 ? b[m] : (b[m - 1] + b[m]) / 2;
};

/** Value at quantile q (0..1) of an ascending array, nearest rank. */
export const quantile = (sorted, q) => sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

let sink = 0;
/** Runs fn for about `ms` (and at least once) in growing batches; returns nanoseconds per call. */
export function slice(fn, ms) {
  let n = 0;
  let batch = 1;
  const limit = BigInt(Math.round(ms * 1e6));
  const t0 = process.hrtime.bigint();
  let el;
  for (;;) {
    for (let i = 0; i < batch; i++) sink ^= fn() ? 1 : 0;
    n += batch;
    el = process.hrtime.bigint() - t0;
    if (el >= limit) break;
    if (batch < 64) batch *= 2;
  }
  return Number(el) / n;
}
export const sinkValue = () => sink;

export function shuffle(a) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
