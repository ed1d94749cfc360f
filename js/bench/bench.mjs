// Tersa vs JSON, msgpackr (default and records), cbor-x and @msgpack/msgpack on
// the seed and large corpora: bytes per document, encode and decode docs/s,
// measured interleaved in one process (warm-up, then fixed time slices in
// rotation, median per codec), ratios and geometric means over the seed
// documents, and a correctness flag per row.
//
//   node bench/bench.mjs [--json OUT]
//   env: ONLY=tersa,json  EXCEPT=cbor-x  (codecs)  QUICK=1  SEED_ONLY=1  DOCS=api,twitter (documents)
//        CLOCK=cpu: time slices by process CPU time instead of wall time (steadier on a shared machine)
//        TERSA_DIST=dir: the tersa build to time (a dist directory with esm/index.js; default js/dist), to compare builds
//
//   node bench/bench.mjs --kinds [--json OUT]
//   The kinds corpus (bench/corpus/kinds/manifest.json, with bench/corpus/large): the same codecs,
//   read with a JSON parser that keeps integers beyond 2^53 as BigInt; per row bytes, rates and
//   exactness, with the known limits of each peer (KIND_LIMITS). Writes schema tersa-bench/1; exits
//   1 when a round trip is inexact and no known limit explains it.
//   env: KINDS_DOCS=bigints,canada  ONLY/EXCEPT  QUICK=1 / SMOKE=1 / BENCH_MODE=full|quick|smoke
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
let tersa;
try {
  tersa = await import(process.env.TERSA_DIST ? path.resolve(process.env.TERSA_DIST, 'esm', 'index.js') : '../dist/esm/index.js');
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

const pe = new tersa.Encoder();
const pd = new tersa.Decoder();
const packr = new Packr({ useRecords: false });
const records = new Packr({ useRecords: true });
const cbor = new CborEncoder();
const mpEnc = new msgpack.Encoder();
const mpDec = new msgpack.Decoder();

const ALL = {
  tersa: { enc: (d) => pe.encode(d), dec: (b) => pd.decode(b), size: (b) => b.length },
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

// ---------------------------------------------------------------------------
// Seed and large documents (the `js` section)
// ---------------------------------------------------------------------------

function seedMain() {
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
  const summary = { codecs: {}, tersa: {}, targets: {} };
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
    if (names.includes('tersa')) {
      console.log('\ntersa vs each peer (geometric mean over the seed documents of the per-document ratio)');
      console.log('  peer               size ratio   enc speed   dec speed   (size: tersa/peer, lower is better; speed: tersa/peer, higher is better)');
      for (const n of names.filter((x) => x !== 'tersa')) {
        const size = geomean(seed.map((d) => d.codecs.tersa.bytes / d.codecs[n].bytes));
        const enc = geomean(seed.map((d) => d.codecs.tersa.encPerSec / d.codecs[n].encPerSec));
        const dec = geomean(seed.map((d) => d.codecs.tersa.decPerSec / d.codecs[n].decPerSec));
        summary.tersa[n] = { sizeRatio: size, encSpeedRatio: enc, decSpeedRatio: dec };
        console.log(`  ${n.padEnd(18)} ${size.toFixed(3).padStart(10)} ${enc.toFixed(3).padStart(11)} ${dec.toFixed(3).padStart(11)}`);
      }
      console.log('\n  the same from the fastest slice of each codec (less sensitive to other load on the machine)');
      summary.tersaBest = {};
      for (const n of names.filter((x) => x !== 'tersa')) {
        const enc = geomean(seed.map((d) => d.codecs.tersa.encPerSecBest / d.codecs[n].encPerSecBest));
        const dec = geomean(seed.map((d) => d.codecs.tersa.decPerSecBest / d.codecs[n].decPerSecBest));
        summary.tersaBest[n] = { encSpeedRatio: enc, decSpeedRatio: dec };
        console.log(`  ${n.padEnd(18)} ${''.padStart(10)} ${enc.toFixed(3).padStart(11)} ${dec.toFixed(3).padStart(11)}`);
      }
      const peers = names.filter((x) => x !== 'tersa');
      if (peers.length) {
        const fastestEnc = peers.reduce((a, b) => (summary.codecs[a].geomeanEncPerSec >= summary.codecs[b].geomeanEncPerSec ? a : b));
        const fastestDec = peers.reduce((a, b) => (summary.codecs[a].geomeanDecPerSec >= summary.codecs[b].geomeanDecPerSec ? a : b));
        const t = summary.targets;
        if (summary.tersa['msgpackr-records']) t.size = { vs: 'msgpackr-records', ratio: summary.tersa['msgpackr-records'].sizeRatio, target: 0.65, met: summary.tersa['msgpackr-records'].sizeRatio <= 0.65 };
        t.encode = { vs: fastestEnc, ratio: summary.tersa[fastestEnc].encSpeedRatio, target: 1.1, met: summary.tersa[fastestEnc].encSpeedRatio >= 1.1 };
        t.decode = { vs: fastestDec, ratio: summary.tersa[fastestDec].decSpeedRatio, target: 1.25, met: summary.tersa[fastestDec].decSpeedRatio >= 1.25 };
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
          'integers, so some Tersa sizes here differ by a few bytes from the canonical encodings in `spec/vectors/corpus` ' +
          '(which the tests check with exact floats).',
      ],
      documents: results,
      summary,
    };
    fs.writeFileSync(jsonOut, JSON.stringify(report, null, 1) + '\n');
    console.log(`results written to ${jsonOut}`);
  }
  if (sink === 0.5) console.log(sink);
}

// ---------------------------------------------------------------------------
// Kinds corpus (the `kinds` section: bench/corpus/kinds and bench/corpus/large)
// ---------------------------------------------------------------------------

// What a peer cannot carry, by document feature (bench/corpus/kinds/manifest.json).
// A peer's failed or inexact round trip on a document with one of its features is
// reported with this reason and does not fail the run; any other one does, and
// Tersa is never excused.
const KIND_LIMITS = {
  json: {
    'int_beyond_2^53': 'JSON.stringify throws on BigInt (and JSON.parse would round the integer)',
    negative_zero: 'JSON.stringify writes -0 as 0',
  },
  msgpackr: {
    int_beyond_64_bits: 'BigInts beyond 64 bits need the useBigIntExtension option (a msgpackr-only extension)',
    negative_zero: 'packs -0 as the integer 0',
  },
  'msgpackr-records': {
    int_beyond_64_bits: 'BigInts beyond 64 bits need the useBigIntExtension option (a msgpackr-only extension)',
    negative_zero: 'packs -0 as the integer 0',
  },
  'cbor-x': {
    negative_zero: 'encodes -0 as the integer 0',
  },
  '@msgpack/msgpack': {
    'int_beyond_2^53': 'BigInt needs useBigInt64, which then decodes every 64-bit integer as BigInt (and stops at 64 bits)',
    negative_zero: 'encodes -0 as the integer 0',
    nesting_beyond_100: 'the Encoder refuses nesting beyond maxDepth, 100 by default',
  },
};

/** JSON.parse, except that integers beyond ±(2^53−1) become BigInts (JSON.parse rounds them). */
function parseJsonBig(text) {
  let i = 0;
  const n = text.length;
  const fail = (what) => {
    throw new SyntaxError(`JSON: ${what} at offset ${i}`);
  };
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else return;
    }
  };
  const string = () => {
    i++; // opening quote
    let out = '';
    let from = i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 34) {
        out += text.slice(from, i);
        i++;
        return out;
      }
      if (c === 92) {
        out += text.slice(from, i);
        const e = text[i + 1];
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          const m = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[e];
          if (m === undefined) fail('bad escape');
          out += m;
          i += 2;
        }
        from = i;
      } else if (c < 32) fail('control character in string');
      else i++;
    }
  };
  const NUM = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  const number = () => {
    NUM.lastIndex = i;
    const m = NUM.exec(text);
    if (!m) fail('bad number');
    i = NUM.lastIndex;
    const tok = m[0];
    if (m[1] || m[2] || tok.length < 16) return Number(tok);
    const big = BigInt(tok);
    return big > 9007199254740991n || big < -9007199254740991n ? big : Number(tok);
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o = {};
      ws();
      if (text[i] === '}') {
        i++;
        return o;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = string();
        ws();
        if (text[i++] !== ':') fail('expected :');
        const v = value();
        // an own data property even for "__proto__", as JSON.parse makes it
        if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
        else o[k] = v;
        ws();
        const d = text[i++];
        if (d === '}') return o;
        if (d !== ',') fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const a = [];
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        const d = text[i++];
        if (d === ']') return a;
        if (d !== ',') fail('expected , or ]');
      }
    }
    if (c === '"') return string();
    if (text.startsWith('true', i)) return (i += 4), true;
    if (text.startsWith('false', i)) return (i += 5), false;
    if (text.startsWith('null', i)) return (i += 4), null;
    return number();
  };
  const v = value();
  ws();
  if (i !== n) fail('trailing characters');
  return v;
}

/**
 * null when b is exactly a, else the first difference with its path. Stricter
 * than isDeepStrictEqual: key order counts; numbers compare with Object.is
 * (-0 is not 0, NaN is NaN); a number is not a BigInt; a plain object is not a Map.
 */
function exactDiff(a, b, where = '$') {
  if (typeof a !== typeof b) return `${where}: ${typeof b} instead of ${typeof a}`;
  if (typeof a === 'number') return Object.is(a, b) ? null : `${where}: ${b} instead of ${Object.is(a, -0) ? '-0' : a}`;
  if (a === null || typeof a !== 'object') return a === b ? null : `${where}: ${String(b).slice(0, 40)} instead of ${String(a).slice(0, 40)}`;
  if (b === null) return `${where}: null instead of an object`;
  if (Array.isArray(a)) {
    if (!Array.isArray(b)) return `${where}: ${b.constructor?.name} instead of Array`;
    if (a.length !== b.length) return `${where}: ${b.length} items instead of ${a.length}`;
    for (let k = 0; k < a.length; k++) {
      const d = exactDiff(a[k], b[k], `${where}[${k}]`);
      if (d) return d;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(b);
  if (Array.isArray(b) || (proto !== Object.prototype && proto !== null)) return `${where}: ${b.constructor?.name} instead of a plain object`;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return `${where}: ${kb.length} keys instead of ${ka.length}`;
  for (let k = 0; k < ka.length; k++) {
    if (ka[k] !== kb[k]) return `${where}: key ${JSON.stringify(kb[k])} instead of ${JSON.stringify(ka[k])} at position ${k}`;
    const d = exactDiff(a[ka[k]], b[ka[k]], `${where}.${ka[k]}`);
    if (d) return d;
  }
  return null;
}

/** A small deterministic PRNG (mulberry32) for the shuffled order of each round. */
function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function kindsMode() {
  const m = process.env.BENCH_MODE;
  if (m === 'full' || m === 'quick' || m === 'smoke') return m;
  return process.env.SMOKE === '1' ? 'smoke' : process.env.QUICK === '1' ? 'quick' : 'full';
}

/** Encodes and decodes every item of a document once per codec: rows (bytes, exactness), and the exact cases to time. */
function kindsCheck(d, rows) {
  const cases = [];
  for (const n of names) {
    const codec = ALL[n];
    const row = { document: d.name, group: d.group, codec: n, correct: false };
    const excuse = n === 'tersa' ? null : Object.entries(KIND_LIMITS[n] ?? {}).filter(([f]) => d.features.includes(f)).map(([, why]) => why);
    try {
      // a copy of each buffer: some encoders return views into a buffer they reuse
      const payloads = d.items.map((x) => {
        const b = codec.enc(x);
        return typeof b === 'string' ? b : Uint8Array.prototype.slice.call(b);
      });
      row.bytes = payloads.reduce((s, b) => s + codec.size(b), 0);
      let diff = null;
      for (let k = 0; k < d.items.length && !diff; k++) {
        diff = exactDiff(d.items[k], codec.dec(payloads[k]), d.per_record ? `$[${k}]` : '$');
      }
      row.correct = diff === null;
      if (diff) row.diff = diff;
      else cases.push({ n, row, payloads, enc: [], dec: [] });
    } catch (err) {
      row.error = `${err?.name ?? 'Error'}: ${String(err?.message ?? err).split('\n')[0].slice(0, 160)}`;
    }
    if (!row.correct && excuse?.length) row.expected = excuse.join('; ');
    rows.push(row);
  }
  return cases;
}

/** The timed calls of one document: [[case, samples, fn], ...], two per exact codec. */
function kindsJobs(d, cases) {
  const items = d.items;
  const single = items.length === 1;
  const jobs = [];
  for (const c of cases) {
    const codec = ALL[c.n];
    const p = c.payloads;
    const x0 = items[0];
    const p0 = p[0];
    jobs.push([c, c.enc, single ? () => codec.enc(x0) : () => {
      let last;
      for (let k = 0; k < items.length; k++) last = codec.enc(items[k]);
      return last;
    }]);
    jobs.push([c, c.dec, single ? () => codec.dec(p0) : () => {
      let last;
      for (let k = 0; k < p.length; k++) last = codec.dec(p[k]);
      return last;
    }]);
  }
  return jobs;
}

/**
 * A warm-up round (plan.warm ms per pair), then plan.rounds rounds; each
 * round visits every document and, per document, runs every (codec,
 * operation) pair once in a shuffled order for plan.slice ms; the rate is the
 * median over the rounds. The rounds visit all the documents (rather than one
 * document after another, as in Ruby and Python) because V8 optimizes a
 * codec's functions for everything they have run so far: measured after a
 * round over every document, each codec runs its optimized code.
 */
function kindsTime(perDoc, plan, t0) {
  for (let r = 0; r <= plan.rounds; r++) {
    perDoc.forEach((jobs, index) => {
      const rand = prng(r * 7919 + index);
      for (let k = jobs.length - 1; k > 0; k--) {
        const j = Math.floor(rand() * (k + 1));
        [jobs[k], jobs[j]] = [jobs[j], jobs[k]];
      }
      for (const [, into, fn] of jobs) {
        const ns = slice(fn, r === 0 ? plan.warm : plan.slice);
        if (r > 0) into.push(ns);
      }
    });
    console.error(`  round ${r}/${plan.rounds}${r === 0 ? ' (warm-up)' : ''} done (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  for (const jobs of perDoc) {
    for (const [c] of jobs) {
      c.row.encode_per_s = 1e9 / median(c.enc);
      c.row.decode_per_s = 1e9 / median(c.dec);
    }
  }
}

function kindsMain() {
  const mode = kindsMode();
  // rounds after the warm-up round; ms per (codec, operation) pair in a round and in the warm-up round
  const plan = {
    full: { rounds: 4, slice: 40, warm: 150 },
    quick: { rounds: 2, slice: 12, warm: 40 },
    smoke: { rounds: 1, slice: 3, warm: 1 },
  }[mode];
  const dir = path.join(ROOT, 'bench', 'corpus', 'kinds');
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const want = list(process.env.KINDS_DOCS) ?? (mode === 'smoke' ? manifest.smoke : null);
  let entries = manifest.documents;
  if (want) {
    const unknown = want.filter((w) => !entries.some((d) => d.name === w));
    if (unknown.length) {
      console.error(`KINDS_DOCS: unknown document(s) ${unknown.join(', ')}`);
      return 2;
    }
    entries = entries.filter((d) => want.includes(d.name));
  }
  const t0 = Date.now();
  console.error(`js kinds: ${mode} run, ${entries.length} documents, codecs ${names.join(' ')}, ${plan.rounds} rounds + warm-up, ${plan.slice} ms slices`);

  const rows = [];
  const docs = [];
  const jobs = [];
  for (const e of entries) {
    const file = path.join(dir, e.file);
    const text = file.endsWith('.xz')
      ? execFileSync('xz', ['-dc', file], { maxBuffer: 1 << 30 }).toString('utf8')
      : fs.readFileSync(file, 'utf8');
    const value = parseJsonBig(text);
    if (!e.features.includes('int_beyond_2^53')) {
      // the parser must agree with JSON.parse wherever JSON.parse is exact
      const d = exactDiff(JSON.parse(text), value);
      if (d) throw new Error(`${e.name}: parseJsonBig differs from JSON.parse: ${d}`);
    }
    const doc = { ...e, items: e.per_record ? value : [value] };
    const cases = kindsCheck(doc, rows);
    jobs.push(kindsJobs(doc, cases));
    docs.push(e);
    console.error(`  ${e.name}: checked (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  kindsTime(jobs, plan, t0);

  printKinds(docs, rows);
  const failures = rows.filter((r) => !r.correct && (r.codec === 'tersa' || !r.expected));
  if (jsonOut) {
    const out = {
      schema: 'tersa-bench/1',
      runtime: `Node.js ${process.version}`,
      libraries: kindsLibraries(),
      mode,
      notes: [
        `${mode} run: a warm-up round (${plan.warm} ms per pair) then ${plan.rounds} rounds; each round visits every document and runs every (codec, operation) pair once, shuffled, for ${plan.slice} ms; the rate is the median over the rounds. (Rounds visit all the documents so that V8 has optimized each codec for all of them before any is measured.)`,
        'Documents are read with a JSON parser that gives a BigInt for every integer beyond ±(2^53−1) (JSON.parse would round it) and a number ' +
          'otherwise, so integral floats such as `20.0` are plain numbers (JavaScript has one number type): exactness is what JavaScript can tell ' +
          '(Object.is for numbers, so -0 is not 0; BigInt is not number; key order counts; a Map is not an object).',
        `${docs.filter((d) => d.per_record).map((d) => d.name).join(', ') || 'Per-record documents'}: each record encoded and decoded as its own buffer; bytes are the sum.`,
      ],
      limits: Object.fromEntries(Object.entries(KIND_LIMITS).filter(([n]) => names.includes(n))),
      documents: rows,
    };
    fs.writeFileSync(jsonOut, JSON.stringify(out, null, 1) + '\n');
  }
  console.error(`js kinds: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (failures.length) {
    for (const f of failures) console.error(`NOT EXACT: ${f.document} ${f.codec}: ${f.error ?? f.diff}`);
    return 1;
  }
  return 0;
}

function kindsLibraries() {
  const version = (p) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(ROOT, 'js', 'node_modules', p, 'package.json'), 'utf8')).version;
    } catch {
      return '?';
    }
  };
  const own = JSON.parse(fs.readFileSync(path.join(ROOT, 'js', 'package.json'), 'utf8')).version;
  const v = { tersa: `${own} (js/dist)`, json: `V8 ${process.versions.v8}`, msgpackr: version('msgpackr'), 'msgpackr-records': version('msgpackr'),
    'cbor-x': version('cbor-x'), '@msgpack/msgpack': version('@msgpack/msgpack') };
  return Object.fromEntries(names.map((n) => [n, v[n]]));
}

function printKinds(docs, rows) {
  const get = (d, c) => rows.find((r) => r.document === d && r.codec === c);
  console.log('\nkinds: tersa ÷ peer, encode / decode rate (higher is better for tersa); ✗ inexact, – not measured');
  console.log('  ' + 'document'.padEnd(16) + names.filter((n) => n !== 'tersa').map((n) => n.slice(0, 17).padStart(18)).join(''));
  for (const d of docs) {
    const p = get(d.name, 'tersa');
    const cells = names.filter((n) => n !== 'tersa').map((n) => {
      const r = get(d.name, n);
      if (!r.correct) return (r.expected ? '✗ (limit)' : '✗').padStart(18);
      if (!p?.encode_per_s) return '–'.padStart(18);
      return `${(p.encode_per_s / r.encode_per_s).toFixed(2)} / ${(p.decode_per_s / r.decode_per_s).toFixed(2)}`.padStart(18);
    });
    console.log('  ' + d.name.padEnd(16) + cells.join(''));
  }
}

if (process.argv.includes('--kinds')) process.exitCode = kindsMain();
else seedMain();
