// Runs inside the headless browser page that browser.test.js serves: checks
// every vector of spec/vectors and every corpus document with the ESM build,
// then posts a report to /report. It must not depend on Node: helpers.js
// imports node:fs, so the few conversions it needs are repeated here, in the
// form of spec/vectors/README.md.
import * as tersa from '/dist/esm/index.js';

const { Encoder, Decoder, StreamEncoder, DecodeError, Dictionary, Float64, Timestamp, Ext, Decimal, CalendarDate, UUID, TimeOfDay, diag } = tersa;

function hexToBytes(h) {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(i * 2, 2), 16);
  return out;
}

function bytesToHex(b) {
  let s = '';
  for (let i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
  return s;
}

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

function parseDiagFloat(s) {
  if (s === 'NaN') return Float64.fromBits(0x7ff8000000000000n);
  if (s.startsWith('NaN(0x')) return Float64.fromBits(BigInt('0x' + s.slice(6, -1)));
  if (s === 'Infinity') return new Float64(Infinity);
  if (s === '-Infinity') return new Float64(-Infinity);
  return new Float64(Number(s));
}

/** An xvalue as the JS value to encode (floats as Float64, so 2100.0 stays a float). */
function fromX(j) {
  if (j === null || typeof j !== 'object') return j;
  if (Array.isArray(j)) return j.map(fromX);
  const keys = Object.keys(j);
  if (keys.length === 1 && keys[0].startsWith('$')) {
    const x = j[keys[0]];
    switch (keys[0]) {
      case '$int': return BigInt(x);
      case '$float': return parseDiagFloat(x);
      case '$symbol': return Symbol.for(x);
      case '$binary': return hexToBytes(x);
      case '$time': return new Timestamp(x.seconds, x.nanos, x.zone, x.offset ?? 0);
      case '$ext': return new Ext(x.type, hexToBytes(x.data));
      case '$decimal': return Decimal.parse(x);
      case '$date': return CalendarDate.parse(x);
      case '$uuid': return UUID.parse(x);
      case '$time_of_day': return TimeOfDay.parse(x);
      case '$map': return new Map(x.map(([k, v]) => [fromX(k), fromX(v)]));
    }
  }
  const o = {};
  // defineProperty: a "__proto__" key must stay an own key
  for (const k of keys) Object.defineProperty(o, k, { value: fromX(j[k]), writable: true, enumerable: true, configurable: true });
  return o;
}

// Models: one comparable form for expected xvalues and decoded JS values.

function modelX(j) {
  if (j === null) return ['null'];
  if (typeof j === 'boolean') return ['bool', j];
  if (typeof j === 'string') return ['str', j];
  if (typeof j === 'number') return ['int', String(j)];
  if (Array.isArray(j)) return ['arr', ...j.map(modelX)];
  const keys = Object.keys(j);
  if (keys.length === 1 && keys[0].startsWith('$')) {
    const x = j[keys[0]];
    switch (keys[0]) {
      case '$int': return ['int', BigInt(x).toString()];
      case '$float': return ['float', parseDiagFloat(x).bits.toString(16)];
      case '$symbol': return ['sym', x];
      case '$binary': return ['bin', x];
      case '$time': return ['time', x.seconds, x.nanos, x.zone, x.zone === 'offset' ? x.offset : 0];
      case '$ext': return ['ext', x.type, x.data];
      case '$decimal': return ['decimal', Decimal.parse(x).toString()];
      case '$date': return ['date', CalendarDate.parse(x).toString()];
      case '$uuid': return ['uuid', UUID.parse(x).toString()];
      case '$time_of_day': return ['time_of_day', TimeOfDay.parse(x).toString()];
      case '$map': return ['map', ...x.map(([k, v]) => [modelX(k), modelX(v)])];
    }
  }
  return ['map', ...keys.map((k) => [['str', k], modelX(j[k])])];
}

/** The model of a value decoded with exactFloats. */
function modelJS(v) {
  switch (typeof v) {
    case 'string': return ['str', v];
    case 'boolean': return ['bool', v];
    case 'bigint': return ['int', v.toString()];
    case 'number':
      if (Number.isSafeInteger(v) && !Object.is(v, -0)) return ['int', String(v)];
      f64[0] = v;
      return ['float', u64[0].toString(16)];
    case 'symbol': return ['sym', Symbol.keyFor(v)];
    case 'undefined': return ['undefined'];
  }
  if (v === null) return ['null'];
  if (Array.isArray(v)) return ['arr', ...v.map(modelJS)];
  if (v instanceof Float64) return ['float', v.bits.toString(16)];
  if (v instanceof Uint8Array) return ['bin', bytesToHex(v)];
  if (v instanceof Date) {
    const ms = v.getTime();
    const s = Math.floor(ms / 1000);
    return ['time', s, (ms - s * 1000) * 1e6, 'utc', 0];
  }
  if (v instanceof Timestamp) return ['time', v.seconds, v.nanos, v.zone, v.zone === 'offset' ? v.offset : 0];
  if (v instanceof Ext) return ['ext', v.type, bytesToHex(v.data)];
  if (v instanceof Decimal) return ['decimal', v.toString()];
  if (v instanceof CalendarDate) return ['date', v.toString()];
  if (v instanceof UUID) return ['uuid', v.toString()];
  if (v instanceof TimeOfDay) return ['time_of_day', v.toString()];
  if (v instanceof Map) return ['map', ...[...v].map(([k, x]) => [modelJS(k), modelJS(x)])];
  return ['map', ...Object.keys(v).map((k) => [['str', k], modelJS(v[k])])];
}

const show = (m) => JSON.stringify(m);

async function getJSON(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`GET ${url}: ${r.status}`);
  return r.json();
}

function dictionariesOf(file) {
  const out = {};
  for (const [name, d] of Object.entries(file.dictionaries)) {
    out[name] = d.generate
      ? Dictionary.generated(d.generate.strings, d.generate.shapes)
      : new Dictionary(d.strings.map(fromX), d.shapes.map((keys) => keys.map(fromX)));
    if (out[name].idHex !== d.id) throw new Error(`dictionary ${name}: id ${out[name].idHex}, want ${d.id}`);
  }
  return out;
}

/** Encodes stream values as the vector's encoder options say. */
function encodeStreamAs(v, dict, values) {
  const sync = { syncFrames: v.sync_frames, syncBytes: v.sync_bytes };
  if (!v.sync_before) return bytesToHex(new Encoder({ dictionary: dict }).encodeStream(values, sync));
  const before = new Set(v.sync_before);
  const se = new StreamEncoder({ dictionary: dict, ...sync });
  let hex = bytesToHex(se.header());
  values.forEach((x, i) => {
    if (before.has(i)) se.sync();
    hex += bytesToHex(se.write(x));
  });
  return hex;
}

function checkValid(v, dict) {
  const problems = [];
  const bytes = hexToBytes(v.hex);
  const dec = new Decoder({ dictionaries: dict ? [dict] : [], exactFloats: true });
  if (v.join) {
    const r = dec.joinStream(bytes);
    if (r.joinedAt !== v.joined_at) problems.push(`joinedAt ${r.joinedAt}, want ${v.joined_at}`);
    const got = show(r.values.map(modelJS));
    if (got !== show(v.values.map(modelX))) problems.push(`decoded ${got}`);
    return problems;
  }
  if (v.stream) {
    const values = dec.decodeStream(bytes);
    const got = show(values.map(modelJS));
    if (got !== show(v.values.map(modelX))) problems.push(`decoded ${got}`);
    const enc = encodeStreamAs(v, dict, v.values.map(fromX));
    if (enc !== v.hex) problems.push(`encoded ${enc}`);
    const again = encodeStreamAs(v, dict, values);
    if (again !== v.hex) problems.push(`re-encoded ${again}`);
    return problems;
  }
  const value = dec.decode(bytes);
  const got = show(modelJS(value));
  if (got !== show(modelX(v.value))) problems.push(`decoded ${got}`);
  if (v.diag !== undefined && diag(value) !== v.diag) problems.push(`diag ${diag(value)}`);
  const target = v.canonical ? v.hex : v.canonical_hex;
  const enc = bytesToHex(new Encoder({ dictionary: dict }).encode(fromX(v.value)));
  if (enc !== target) problems.push(`encoded ${enc}, want ${target}`);
  const again = bytesToHex(new Encoder({ dictionary: dict }).encode(value));
  if (again !== target) problems.push(`re-encoded ${again}, want ${target}`);
  return problems;
}

function checkFail(v, dict) {
  const dec = new Decoder({ dictionaries: dict ? [dict] : [], maxDepth: v.max_depth ?? 1000 });
  const bytes = hexToBytes(v.hex);
  try {
    if (v.join) dec.joinStream(bytes);
    else if (v.stream) dec.decodeStream(bytes);
    else dec.decode(bytes);
  } catch (e) {
    if (!(e instanceof DecodeError)) return [`threw ${e?.stack ?? e}`];
    if (e.code !== v.error || e.offset !== v.offset) return [`${e.code}@${e.offset}, want ${v.error}@${v.offset}`];
    return [];
  }
  return [`decoded without error, want ${v.error}@${v.offset}`];
}

/** Committed canonical encodings of whole documents: decode exactly, re-encode to the same bytes. */
async function checkCorpus(doc) {
  const r = await fetch(`/corpus/${doc.kind}/${doc.name}.tersa`);
  if (!r.ok) return [`GET: ${r.status}`];
  const bytes = new Uint8Array(await r.arrayBuffer());
  if (bytes.length !== doc.tersa_bytes) return [`${bytes.length} bytes, manifest says ${doc.tersa_bytes}`];
  const value = new Decoder({ exactFloats: true }).decode(bytes);
  const again = new Encoder().encode(value);
  if (bytesToHex(again) !== bytesToHex(bytes)) {
    let i = 0;
    while (i < again.length && again[i] === bytes[i]) i++;
    return [`re-encoding differs at byte ${i} of ${bytes.length}`];
  }
  return [];
}

async function run() {
  const started = performance.now();
  const index = await getJSON('/vectors/index.json');
  const dicts = dictionariesOf(await getJSON('/vectors/dictionaries.json'));
  const counts = { valid: 0, stream: 0, join: 0, fail: 0, corpus: 0 };
  const failures = [];
  for (const file of index.files) {
    const { vectors } = await getJSON(`/vectors/${file}`);
    for (const v of vectors) {
      const kind = 'error' in v ? 'fail' : v.join ? 'join' : v.stream ? 'stream' : 'valid';
      let problems;
      try {
        const dict = v.dictionary ? dicts[v.dictionary] : null;
        if (v.dictionary && !dict) throw new Error(`unknown dictionary ${v.dictionary}`);
        problems = kind === 'fail' ? checkFail(v, dict) : checkValid(v, dict);
      } catch (e) {
        problems = [`threw ${e?.stack ?? e}`];
      }
      if (problems.length) failures.push(`${file}: ${v.name}: ${problems.join('; ')}`);
      else counts[kind]++;
    }
  }
  const vectorsDone = performance.now();
  for (const doc of index.corpus) {
    let problems;
    try {
      problems = await checkCorpus(doc);
    } catch (e) {
      problems = [`threw ${e?.stack ?? e}`];
    }
    if (problems.length) failures.push(`corpus ${doc.kind}/${doc.name}: ${problems.join('; ')}`);
    else counts.corpus++;
  }
  const ms = { vectors: Math.round(vectorsDone - started), corpus: Math.round(performance.now() - vectorsDone) };
  return { counts, failures, ms, userAgent: navigator.userAgent };
}

let report;
try {
  report = await run();
} catch (e) {
  report = { fatal: String(e?.stack ?? e) };
}
await fetch('/report', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(report) });
