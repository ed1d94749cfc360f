// Harness of the TypeScript package for spec/tools/crossfuzz.py: one JSON
// request per line on stdin, one JSON reply per line on stdout (protocol: the
// top of crossfuzz.py). It uses the built package (js/dist, `make js`), as the
// tests do. Values arrive as the extended JSON of spec/vectors/README.md and
// are built with the exact wrapper types (Float64 for every float, BigInt for
// integers beyond 2^53, Timestamp, Ext, Symbol.for, Map for other maps);
// decoding uses the options under which every value re-encodes exactly
// (exactFloats, dates: 'timestamp'), and decoded values are answered with
// their canonical re-encoding by this package.
//
//   node js/test/support/harness.mjs
import readline from 'node:readline';
import * as tersa from '../../dist/esm/index.js';

const { Float64, Timestamp, Ext, DecodeError, EncodeError } = tersa;
const DECODE_OPTIONS = { exactFloats: true, dates: 'timestamp' };

function hexToBytes(h) {
  return Uint8Array.from(Buffer.from(h, 'hex'));
}

function hex(b) {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
}

function parseFloatText(s) {
  if (s === 'NaN') return Float64.fromBits(0x7ff8000000000000n);
  if (s.startsWith('NaN(0x')) return Float64.fromBits(BigInt('0x' + s.slice(6, -1)));
  if (s === 'Infinity') return new Float64(Infinity);
  if (s === '-Infinity') return new Float64(-Infinity);
  return new Float64(Number(s));
}

function defineOwn(o, k, v) {
  // A plain assignment of "__proto__" would set the prototype, not a key.
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
}

function fromX(j) {
  if (j === null || typeof j === 'boolean' || typeof j === 'string') return j;
  if (typeof j === 'number') {
    if (!Number.isInteger(j)) throw new Error('plain JSON float in an xvalue');
    return j;
  }
  if (Array.isArray(j)) return j.map(fromX);
  const keys = Object.keys(j);
  if (keys.length === 1 && keys[0].startsWith('$')) {
    const x = j[keys[0]];
    switch (keys[0]) {
      case '$int':
        return BigInt(x);
      case '$float':
        return parseFloatText(x);
      case '$symbol':
        return Symbol.for(x);
      case '$binary':
        return hexToBytes(x);
      case '$time':
        return new Timestamp(x.seconds, x.nanos, x.zone, x.offset ?? 0);
      case '$ext':
        return new Ext(x.type, hexToBytes(x.data));
      case '$decimal':
        return tersa.Decimal.parse(x);
      case '$date':
        return tersa.CalendarDate.parse(x);
      case '$uuid':
        return tersa.UUID.parse(x);
      case '$time_of_day':
        return tersa.TimeOfDay.parse(x);
      case '$map':
        return new Map(x.map(([k, v]) => [fromX(k), fromX(v)]));
      default:
        throw new Error('unknown xvalue tag ' + keys[0]);
    }
  }
  const o = {};
  for (const k of keys) defineOwn(o, k, fromX(j[k]));
  return o;
}

function decodeError(e) {
  return { error: e.code, offset: e.offset };
}

// Feed `data` to a StreamDecoder in pieces of the given sizes (the last size
// repeats), taking the completed values after every piece, then end().
function chunked(data, pieces, join = false) {
  const dec = new tersa.StreamDecoder(join ? { ...DECODE_OPTIONS, join } : DECODE_OPTIONS);
  const values = [];
  try {
    for (let at = 0, i = 0; at < data.length; i++) {
      const size = pieces[Math.min(i, pieces.length - 1)];
      dec.feed(data.subarray(at, at + size));
      at += size;
      for (const v of dec) values.push(hex(tersa.encode(v)));
    }
    dec.end();
  } catch (e) {
    if (e instanceof DecodeError) return { values, ...decodeError(e) };
    throw e;
  }
  return join ? { values, joined_at: dec.joinedAt } : { values };
}

// A StreamEncoder with the sync-frame options of the request (SPEC 2.3).
// Unknown options would be ignored silently, so their absence is detected by
// the missing sync() that comes with them.
function encodeStream(req) {
  const wants = req.sync_frames !== undefined || req.sync_bytes !== undefined || req.sync_before !== undefined;
  if (wants && typeof tersa.StreamEncoder.prototype.sync !== 'function') {
    return { unsupported: 'StreamEncoder has no sync options (no sync())' };
  }
  const enc = new tersa.StreamEncoder({ syncFrames: req.sync_frames ?? 0, syncBytes: req.sync_bytes ?? 0 });
  const before = new Set(req.sync_before ?? []);
  const parts = req.values.map((x, i) => {
    if (before.has(i)) enc.sync();
    return Buffer.from(enc.write(fromX(x)));
  });
  return { hex: (parts.length ? Buffer.concat(parts) : Buffer.from(enc.header())).toString('hex') };
}

function handle(req) {
  switch (req.op) {
    case 'hello':
      return { impl: 'js', node: process.version };
    case 'encode':
      return { hex: hex(tersa.encode(fromX(req.value))) };
    case 'encode_stream':
      return encodeStream(req);
    case 'decode': {
      let v;
      try {
        v = tersa.decode(hexToBytes(req.hex), DECODE_OPTIONS);
      } catch (e) {
        if (e instanceof DecodeError) return decodeError(e);
        throw e;
      }
      return { hex: hex(tersa.encode(v)) };
    }
    case 'decode_stream': {
      let vs;
      try {
        vs = tersa.decodeStream(hexToBytes(req.hex), DECODE_OPTIONS);
      } catch (e) {
        if (e instanceof DecodeError) return decodeError(e);
        throw e;
      }
      return { values: vs.map((v) => hex(tersa.encode(v))) };
    }
    case 'decode_stream_chunks':
      return chunked(hexToBytes(req.hex), req.pieces);
    case 'join_stream': {
      if (typeof tersa.joinStream !== 'function') return { unsupported: 'no joinStream' };
      let r;
      try {
        r = tersa.joinStream(hexToBytes(req.hex), DECODE_OPTIONS);
      } catch (e) {
        if (e instanceof DecodeError) return decodeError(e);
        throw e;
      }
      return { joined_at: r.joinedAt, values: r.values.map((v) => hex(tersa.encode(v))) };
    }
    case 'join_stream_chunks':
      if (!('joinedAt' in new tersa.StreamDecoder())) return { unsupported: 'StreamDecoder cannot join' };
      return chunked(hexToBytes(req.hex), req.pieces, true);
    default:
      return { unsupported: 'unknown op ' + JSON.stringify(req.op) };
  }
}

function reply(req) {
  try {
    return handle(req);
  } catch (e) {
    if (e instanceof EncodeError) return { encode_error: String(e.message) };
    return { crash: `${e && e.name}: ${e && e.message}`, trace: String(e && e.stack).slice(0, 2000) };
  }
}

if (process.env.NODE_TEST_CONTEXT) {
  // Under `node --test` (which runs every file of a folder it is given, with
  // a stdin that never closes) answer a few requests whose replies are known
  // instead of waiting for a fuzzer.
  const { test } = await import('node:test');
  const assert = (await import('node:assert/strict')).default;
  test('crossfuzz harness: replies of the line protocol', () => {
    assert.deepEqual(reply({ op: 'decode', hex: 'c17010fd' }), { error: 'invalid_tag', offset: 3 });
    // 0.0, -0.0 and 1.0 stay three keys, 1 a fourth (bytes from spec/tools/tersaref.py).
    const x = { $map: [[{ $float: '0.0' }, 1], [{ $float: '-0.0' }, 2], [{ $float: '1.0' }, 3], [1, 4]] };
    const enc = reply({ op: 'encode', value: x });
    assert.equal(enc.hex, 'c17010f409dc01a9e300000080aadc05aba9ac');
    assert.deepEqual(reply({ op: 'decode', hex: enc.hex }), enc);
    const stream = reply({ op: 'encode_stream', values: ['abc', 'abc', { $int: '18446744073709551616' }] });
    const whole = reply({ op: 'decode_stream', hex: stream.hex });
    assert.equal(whole.values.length, 3);
    assert.deepEqual(reply({ op: 'decode_stream_chunks', hex: stream.hex, pieces: [1] }), whole);
    const cut = stream.hex.slice(0, -2);
    const partial = reply({ op: 'decode_stream_chunks', hex: cut, pieces: [2, 1] });
    assert.deepEqual(partial.values, whole.values.slice(0, 2));
    assert.deepEqual(reply({ op: 'decode_stream', hex: cut }), { error: partial.error, offset: partial.offset });
  });
} else {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    process.stdout.write(JSON.stringify(reply(JSON.parse(line))) + '\n');
  }
}
