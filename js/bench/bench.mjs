// Pith vs JSON, msgpackr (default and records), cbor-x and @msgpack/msgpack on
// the seed and large corpora: bytes per document, encode and decode docs/s,
// measured interleaved in one process (warm-up, then fixed time slices in
// rotation, median per codec), ratios and geometric means over the seed
// documents, and a correctness flag per row.
//
//   node bench/bench.mjs [--json OUT]
//   env: ONLY=pith,json  EXCEPT=cbor-x  (codecs)  QUICK=1  SEED_ONLY=1  DOCS=api,twitter (documents)
//        CLOCK=cpu: time slices by process CPU time instead of wall time (steadier on a shared machine)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import os from 'node:os';
import { Packr } from 'msgpackr';
import { Encoder as CborEncoder } from 'cbor-x';
import * as msgpack from '@msgpack/msgpack';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
let pith;
try {
  pith = await import('../dist/esm/index.js');
} catch {
  console.error('js/dist is missing: run `npm run build` first');
  process.exit(1);
}

const QUICK = process.env.QUICK === '1';
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null;
const list = (s) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : null);
const ONLY = list(process.env.ONLY);
const EXCEPT = list(process.env.EXCEPT) ?? [];

// ---------------------------------------------------------------------------
// Codecs (each gets its own reusable instance, as an application would)
// ---------------------------------------------------------------------------

const pe = new pith.Encoder();
const pd = new pith.Decoder();
const packr = new Packr({ useRecords: false });
const records = new Packr({ useRecords: true });
const cbor = new CborEncoder();
const mpEnc = new msgpack.Encoder();
const mpDec = new msgpack.Decoder();

const ALL = {
  pith: { enc: (d) => pe.encode(d), dec: (b) => pd.decode(b), size: (b) => b.length },
  json: { enc: (d) => JSON.stringify(d), dec: (s) => JSON.parse(s), size: (s) => Buffer.byteLength(s) },
  msgpackr: { enc: (d) => packr.pack(d), dec: (b) => packr.unpack(b), size: (b) => b.length },
  'msgpackr-records': { enc: (d) => records.pack(d), dec: (b) => records.unpack(b), size: (b) => b.length },
  'cbor-x': { enc: (d) => cbor.encode(d), dec: (b) => cbor.decode(b), size: (b) => b.length },
  '@msgpack/msgpack': { enc: (d) => mpEnc.encode(d), dec: (b) => mpDec.decode(b), size: (b) => b.length },
};
const names = Object.keys(ALL).filter((n) => (!ONLY || ONLY.includes(n)) && !EXCEPT.includes(n));
if (names.length === 0) {
  console.error(`no codecs selected; known: ${Object.keys(ALL).join(', ')}`);
  process.exit(1);
}

// ---------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------

const docs = [];
const seedDir = path.join(ROOT, 'bench', 'corpus', 'seed');
for (const f of fs.readdirSync(seedDir).filter((f) => f.endsWith('.json')).sort()) {
  docs.push({ name: f.replace(/\.json$/, ''), kind: 'seed', value: JSON.parse(fs.readFileSync(path.join(seedDir, f), 'utf8')) });
}
if (process.env.SEED_ONLY !== '1') {
  const largeDir = path.join(ROOT, 'bench', 'corpus', 'large');
  for (const f of fs.readdirSync(largeDir).filter((f) => f.endsWith('.json.xz')).sort()) {
    const text = execFileSync('xz', ['-dc', path.join(largeDir, f)], { maxBuffer: 1 << 30 }).toString('utf8');
    docs.push({ name: f.replace(/\.json\.xz$/, ''), kind: 'large', value: JSON.parse(text) });
  }
}

const DOCS = list(process.env.DOCS);
if (DOCS) for (let i = docs.length - 1; i >= 0; i--) if (!DOCS.includes(docs[i].name)) docs.splice(i, 1);

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

let sink = 0;
const CPU = process.env.CLOCK === 'cpu';
/** Runs fn for about `ms` milliseconds; returns nanoseconds per call (wall time, or CPU time with CLOCK=cpu). */
function slice(fn, ms) {
  let n = 0;
  let batch = 1;
  const c0 = CPU ? process.cpuUsage() : null;
  const t0 = process.hrtime.bigint();
  const limit = BigInt(Math.round(ms * 1e6));
  let el;
  for (;;) {
    for (let i = 0; i < batch; i++) sink ^= typeof fn() === 'object' ? 1 : 0;
    n += batch;
    el = process.hrtime.bigint() - t0;
    if (el >= limit) break;
    if (batch < 64) batch *= 2;
  }
  if (CPU) {
    const c = process.cpuUsage(c0);
    return ((c.user + c.system) * 1000) / n;
  }
  return Number(el) / n;
}

function warm(fn, ms) {
  const t0 = Date.now();
  for (let i = 0; i < 20 || Date.now() - t0 < ms; i++) {
    sink ^= typeof fn() === 'object' ? 1 : 0;
    if (Date.now() - t0 > 10000) break;
  }
}

const median = (a) => {
  const b = [...a].sort((x, y) => x - y);
  const m = b.length >> 1;
  return b.length % 2 ? b[m] : (b[m - 1] + b[m]) / 2;
};
const geomean = (a) => Math.exp(a.reduce((s, x) => s + Math.log(x), 0) / a.length);

const cfg = {
  seed: { warm: QUICK ? 150 : 300, slice: QUICK ? 8 : 25, rounds: QUICK ? 3 : 9 },
  large: { warm: QUICK ? 100 : 600, slice: QUICK ? 60 : 250, rounds: QUICK ? 1 : 5 },
};

const results = [];
const t0 = Date.now();
// Global warm-up: every codec runs over every seed document first, so that
// the first document measured does not pay for any codec's JIT warm-up.
{
  const seedDocs = docs.filter((d) => d.kind === 'seed');
  const inputs = new Map();
  for (const n of names) inputs.set(n, seedDocs.map((d) => ALL[n].enc(d.value)));
  const until = Date.now() + (QUICK ? 300 : 1500) * names.length;
  while (Date.now() < until) {
    for (const n of names) {
      const ins = inputs.get(n);
      for (let i = 0; i < seedDocs.length; i++) {
        for (let k = 0; k < 20; k++) {
          sink ^= typeof ALL[n].enc(seedDocs[i].value) === 'object' ? 1 : 0;
          sink ^= typeof ALL[n].dec(ins[i]) === 'object' ? 1 : 0;
        }
      }
    }
  }
}
for (const doc of docs) {
  const c = cfg[doc.kind];
  const rows = {};
  for (const n of names) {
    const codec = ALL[n];
    const encoded = codec.enc(doc.value);
    const copy = typeof encoded === 'string' ? encoded : Uint8Array.prototype.slice.call(encoded);
    let ok;
    try {
      ok = isDeepStrictEqual(codec.dec(copy), doc.value);
    } catch (e) {
      ok = false;
    }
    rows[n] = { codec: n, bytes: codec.size(encoded), ok, input: copy, enc: [], dec: [] };
  }
  // warm-up (at least `warm` ms and 20 calls, so the JIT has settled), then
  // rounds in rotation (the starting codec rotates each round)
  for (const n of names) {
    warm(() => ALL[n].enc(doc.value), c.warm / 2);
    warm(() => ALL[n].dec(rows[n].input), c.warm / 2);
  }
  for (let r = 0; r < c.rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const n = names[(k + r) % names.length];
      rows[n].enc.push(slice(() => ALL[n].enc(doc.value), c.slice));
      rows[n].dec.push(slice(() => ALL[n].dec(rows[n].input), c.slice));
    }
  }
  const out = { name: doc.name, kind: doc.kind, codecs: {} };
  for (const n of names) {
    const row = rows[n];
    out.codecs[n] = {
      bytes: row.bytes,
      encNs: median(row.enc),
      decNs: median(row.dec),
      encPerSec: 1e9 / median(row.enc),
      decPerSec: 1e9 / median(row.dec),
      // the fastest slice: on a shared, noisy machine a steadier estimate than the median
      encPerSecBest: 1e9 / Math.min(...row.enc),
      decPerSecBest: 1e9 / Math.min(...row.dec),
      ok: row.ok,
    };
  }
  results.push(out);
  printDoc(out);
}

function fmt(n) {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(n >= 10 ? 1 : 2);
}

function printDoc(d) {
  console.log(`\n${d.kind}/${d.name}`);
  console.log('  codec               bytes      enc/s      dec/s   ok');
  for (const [n, r] of Object.entries(d.codecs)) {
    console.log(`  ${n.padEnd(18)} ${String(r.bytes).padStart(8)} ${fmt(r.encPerSec).padStart(10)} ${fmt(r.decPerSec).padStart(10)}   ${r.ok ? 'yes' : 'NO'}`);
  }
}

// ---------------------------------------------------------------------------
// Summary over the seed documents
// ---------------------------------------------------------------------------

const seed = results.filter((d) => d.kind === 'seed');
const summary = { codecs: {}, pith: {}, targets: {} };
if (seed.length) {
  for (const n of names) {
    summary.codecs[n] = {
      avgBytes: seed.reduce((s, d) => s + d.codecs[n].bytes, 0) / seed.length,
      geomeanBytes: geomean(seed.map((d) => d.codecs[n].bytes)),
      geomeanEncPerSec: geomean(seed.map((d) => d.codecs[n].encPerSec)),
      geomeanDecPerSec: geomean(seed.map((d) => d.codecs[n].decPerSec)),
      allOk: seed.every((d) => d.codecs[n].ok),
    };
  }
  console.log('\nseed documents (geometric means over ' + seed.length + ' documents)');
  console.log('  codec              avg bytes      enc/s      dec/s   all ok');
  for (const [n, s] of Object.entries(summary.codecs)) {
    console.log(`  ${n.padEnd(18)} ${fmt(s.avgBytes).padStart(9)} ${fmt(s.geomeanEncPerSec).padStart(10)} ${fmt(s.geomeanDecPerSec).padStart(10)}   ${s.allOk ? 'yes' : 'NO'}`);
  }
  if (names.includes('pith')) {
    console.log('\npith vs each peer (geometric mean over the seed documents of the per-document ratio)');
    console.log('  peer               size ratio   enc speed   dec speed   (size: pith/peer, lower is better; speed: pith/peer, higher is better)');
    for (const n of names.filter((x) => x !== 'pith')) {
      const size = geomean(seed.map((d) => d.codecs.pith.bytes / d.codecs[n].bytes));
      const enc = geomean(seed.map((d) => d.codecs.pith.encPerSec / d.codecs[n].encPerSec));
      const dec = geomean(seed.map((d) => d.codecs.pith.decPerSec / d.codecs[n].decPerSec));
      summary.pith[n] = { sizeRatio: size, encSpeedRatio: enc, decSpeedRatio: dec };
      console.log(`  ${n.padEnd(18)} ${size.toFixed(3).padStart(10)} ${enc.toFixed(3).padStart(11)} ${dec.toFixed(3).padStart(11)}`);
    }
    console.log('\n  the same from the fastest slice of each codec (less sensitive to other load on the machine)');
    summary.pithBest = {};
    for (const n of names.filter((x) => x !== 'pith')) {
      const enc = geomean(seed.map((d) => d.codecs.pith.encPerSecBest / d.codecs[n].encPerSecBest));
      const dec = geomean(seed.map((d) => d.codecs.pith.decPerSecBest / d.codecs[n].decPerSecBest));
      summary.pithBest[n] = { encSpeedRatio: enc, decSpeedRatio: dec };
      console.log(`  ${n.padEnd(18)} ${''.padStart(10)} ${enc.toFixed(3).padStart(11)} ${dec.toFixed(3).padStart(11)}`);
    }
    const peers = names.filter((x) => x !== 'pith');
    if (peers.length) {
      const fastestEnc = peers.reduce((a, b) => (summary.codecs[a].geomeanEncPerSec >= summary.codecs[b].geomeanEncPerSec ? a : b));
      const fastestDec = peers.reduce((a, b) => (summary.codecs[a].geomeanDecPerSec >= summary.codecs[b].geomeanDecPerSec ? a : b));
      const t = summary.targets;
      if (summary.pith['msgpackr-records']) t.size = { vs: 'msgpackr-records', ratio: summary.pith['msgpackr-records'].sizeRatio, target: 0.65, met: summary.pith['msgpackr-records'].sizeRatio <= 0.65 };
      t.encode = { vs: fastestEnc, ratio: summary.pith[fastestEnc].encSpeedRatio, target: 1.1, met: summary.pith[fastestEnc].encSpeedRatio >= 1.1 };
      t.decode = { vs: fastestDec, ratio: summary.pith[fastestDec].decSpeedRatio, target: 1.25, met: summary.pith[fastestDec].decSpeedRatio >= 1.25 };
      console.log('\ntargets (issue 5)');
      if (t.size) console.log(`  size   ${t.size.ratio.toFixed(3)} x msgpackr-records   (target <= 0.65)  ${t.size.met ? 'met' : 'NOT met'}`);
      console.log(`  encode ${t.encode.ratio.toFixed(3)} x ${fastestEnc} (fastest peer)   (target >= 1.1)  ${t.encode.met ? 'met' : 'NOT met'}`);
      console.log(`  decode ${t.decode.ratio.toFixed(3)} x ${fastestDec} (fastest peer)   (target >= 1.25)  ${t.decode.met ? 'met' : 'NOT met'}`);
    }
  }
}

console.log(`\n${QUICK ? 'QUICK run, ' : ''}${CPU ? 'CPU-time clock, ' : ''}${((Date.now() - t0) / 1000).toFixed(0)} s; node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
if (jsonOut) {
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: os.cpus()[0]?.model,
    quick: QUICK,
    clock: CPU ? 'cpu' : 'wall',
    config: cfg,
    codecs: names,
    notes: [
      'Documents are read with JSON.parse, as a Node.js application would: integral floats (`2100.0`) become JS ' +
        'integers, so some Pith sizes here differ by a few bytes from the canonical encodings in `spec/vectors/corpus` ' +
        '(which the tests check with exact floats).',
    ],
    documents: results,
    summary,
  };
  fs.writeFileSync(jsonOut, JSON.stringify(report, null, 1) + '\n');
  console.log(`results written to ${jsonOut}`);
}
if (sink === 0.5) console.log(sink);
