// In-process A/B of the three js builds (string-table cap 2^20, 65,856, 65,536)
// on users(n) (bench/node/lib/users.mjs): bytes, min ms of encode and decode over alternating rounds, and
// JSON.stringify / JSON.parse as the reference, all in one process. BUILDS/js_{base,65856,65536}
// hold js/ built (tsc -p tsconfig.esm.json) with each MAX_STRINGS.
//   node --max-old-space-size=12000 cap_ab.mjs N ROUNDS
import { users } from '../../node/lib/users.mjs';
import { createHash } from 'node:crypto';
const n = Number(process.argv[2]);
const rounds = Number(process.argv[3] ?? 5);
const builds = {};
for (const v of ['base', '65856', '65536']) builds[v] = await import(`${process.env.BUILDS ?? '/tmp/tctools'}/js_${v}/dist/esm/index.js`);
const value = users(n);
const res = {};
const bytes = {};
for (const [v, t] of Object.entries(builds)) {
  const e = new t.Encoder(); const d = new t.Decoder();
  const b = e.encode(value);
  bytes[v] = b;
  res[v] = { enc: Infinity, dec: Infinity, e, d, b: Uint8Array.from(b) };
}
res.json = { enc: Infinity, dec: Infinity };
const js = JSON.stringify(value);
for (let r = 0; r < rounds; r++) {
  for (const v of ['base', '65856', '65536']) {
    const x = res[v];
    let t0 = performance.now(); x.e.encode(value); let t = performance.now() - t0; if (t < x.enc) x.enc = t;
    t0 = performance.now(); x.d.decode(x.b); t = performance.now() - t0; if (t < x.dec) x.dec = t;
  }
  let t0 = performance.now(); JSON.stringify(value); let t = performance.now() - t0; if (t < res.json.enc) res.json.enc = t;
  t0 = performance.now(); JSON.parse(js); t = performance.now() - t0; if (t < res.json.dec) res.json.dec = t;
}
for (const v of ['base', '65856', '65536', 'json']) {
  const x = res[v];
  const len = v === 'json' ? Buffer.byteLength(js) : x.b.length;
  const h = v === 'json' ? '' : createHash('sha256').update(x.b).digest('hex').slice(0, 12);
  console.log(`users_${n} ${v.padEnd(6)} bytes ${len} ${h} enc_ms ${x.enc.toFixed(2)} dec_ms ${x.dec.toFixed(2)}`);
}
