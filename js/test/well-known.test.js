// Well-known extension types (SPEC 5.8): Decimal, CalendarDate, UUID and
// TimeOfDay round trips, their limits, payload validation, the reserved
// extension range, Python's decimal text, and bytes shared with the
// reference codec and the C CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import * as tersa from '../dist/esm/index.js';
import { HERE, ROOT, bytesToHex, hexToBytes, toX } from './helpers.js';

const {
  encode, decode, encodeStream, decodeStream, Encoder, DecodeError, EncodeError, Ext, diag,
  addExtension, removeExtension, Decimal, CalendarDate, UUID, TimeOfDay,
  EXT_DECIMAL, EXT_DATE, EXT_UUID, EXT_TIME_OF_DAY,
} = tersa;

const python = spawnSync('python3', ['--version']).status === 0;

function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)] };
}

/** Random decimal texts of every form Python's Decimal reads. */
function decimalTexts(n, seed) {
  const g = rng(seed);
  const digits = (k) => Array.from({ length: k }, () => String(g.int(10))).join('');
  const out = [];
  for (let i = 0; i < n; i++) {
    const sign = g.pick(['', '', '-', '+']);
    const whole = g.int(4) ? digits(g.int(g.pick([3, 20, 60]))) : '';
    const frac = g.int(2) ? '.' + digits(g.int(g.pick([3, 12]))) : '';
    const body = whole === '' && frac.length < 2 ? '0' + frac : whole + frac;
    const exp = g.int(3) ? '' : g.pick(['e', 'E']) + g.pick(['', '+', '-']) + String(g.int(g.pick([10, 30, 2000])));
    out.push(sign + (body === '' || body === '.' ? '0' : body) + exp);
  }
  return out;
}

/** Every value each class can take at its limits, and ordinary ones. */
function samples() {
  return [
    Decimal.parse('0'), Decimal.parse('-0'), Decimal.parse('1.0'), Decimal.parse('1.00'), Decimal.parse('-12.345'),
    Decimal.parse('0E+3'), Decimal.parse('1E-7'), Decimal.parse('Infinity'), Decimal.parse('-Infinity'), Decimal.parse('NaN'),
    new Decimal(false, 1n, 999_999_999), new Decimal(true, 1n, -999_999_999),
    new Decimal(false, (1n << 8192n) - 1n, 0), new Decimal(false, 1n << 8184n, -5),
    // coefficients around 6 bytes, where the encoder and decoder change method
    new Decimal(false, (1n << 48n) - 1n, 2), new Decimal(true, 1n << 48n, -2), new Decimal(false, (1n << 40n) + 1n, 0), new Decimal(false, (1n << 56n) - 1n, 0),
    new CalendarDate(1, 1, 1), new CalendarDate(9999, 12, 31), new CalendarDate(1970, 1, 1), new CalendarDate(1969, 12, 31),
    new CalendarDate(2000, 2, 29), new CalendarDate(2024, 2, 29),
    new UUID(new Uint8Array(16)), new UUID(new Uint8Array(16).fill(255)), UUID.parse('6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
    new TimeOfDay(0), new TimeOfDay(23, 59, 59, 999_999), new TimeOfDay(12, 30), new TimeOfDay(0, 0, 0, 1),
  ];
}

test('each well-known value round-trips to an equal value and the same bytes, alone, nested and in a stream', () => {
  const values = samples();
  const enc = new Encoder();
  for (const v of values) {
    const b = enc.encode(v);
    const back = decode(b);
    assert.equal(back.constructor, v.constructor, `${v}: decoded as ${back?.constructor?.name}`);
    assert.ok(back.equals(v), `${v}: decoded as ${back}`);
    assert.equal(back.toString(), v.toString());
    assert.equal(bytesToHex(enc.encode(back)), bytesToHex(b), `${v}: re-encoding differs`);
    // EXT (F7), the type as a 3-byte varint, then the payload's length
    assert.equal(b[3], 0xf7);
  }
  const nested = { list: values, byKey: new Map(values.map((v, i) => [v, i])) };
  const back = decode(encode(nested));
  assert.equal(bytesToHex(encode(back)), bytesToHex(encode(nested)));
  assert.deepEqual([...back.byKey.values()], values.map((_, i) => i));
  const stream = decodeStream(encodeStream(values));
  assert.deepEqual(stream.map(String), values.map(String));
});

test('the payloads are the ones SPEC 5.8 gives', () => {
  const payload = (v) => {
    const b = encode(v);
    // header (3) + F7 + type varint (3 bytes for 0xFF00..0xFFFF) + length varint (1 byte below 128)
    const type = ((b[4] | (b[5] << 8) | (b[6] << 16)) >> 3);
    return { type, hex: bytesToHex(b.subarray(8)), n: b[7] >> 1 };
  };
  assert.deepEqual(payload(Decimal.parse('1.5')), { type: EXT_DECIMAL, hex: '00030f', n: 3 }); // k 0, zigzag(-1) = 1, c 15
  assert.deepEqual(payload(Decimal.parse('-0')), { type: EXT_DECIMAL, hex: '01' + '01', n: 2 }); // k 1, e 0, no coefficient
  assert.deepEqual(payload(Decimal.parse('256')), { type: EXT_DECIMAL, hex: '00010100', n: 4 });
  assert.deepEqual(payload(Decimal.parse('-Infinity')), { type: EXT_DECIMAL, hex: '03', n: 1 });
  assert.deepEqual(payload(Decimal.parse('NaN')), { type: EXT_DECIMAL, hex: '04', n: 1 });
  assert.deepEqual(payload(new CalendarDate(1970, 1, 1)), { type: EXT_DATE, hex: '01', n: 1 });
  assert.deepEqual(payload(new CalendarDate(1969, 12, 31)), { type: EXT_DATE, hex: '03', n: 1 }); // zigzag(-1)
  assert.deepEqual(payload(UUID.parse('00112233-4455-6677-8899-aabbccddeeff')), { type: EXT_UUID, hex: '00112233445566778899aabbccddeeff', n: 16 });
  assert.deepEqual(payload(new TimeOfDay(0, 0, 0, 1)), { type: EXT_TIME_OF_DAY, hex: '03', n: 1 });
});

test('diagnostic notation', () => {
  assert.equal(diag(Decimal.parse('-1.50')), 'decimal("-1.50")');
  assert.equal(diag(new CalendarDate(5, 6, 7)), 'date("0005-06-07")');
  assert.equal(diag(UUID.parse('6BA7B810-9DAD-11D1-80B4-00C04FD430C8')), 'uuid("6ba7b810-9dad-11d1-80b4-00c04fd430c8")');
  assert.equal(diag(new TimeOfDay(7, 8, 9, 120)), 'time_of_day("07:08:09.000120")');
  assert.equal(diag([new TimeOfDay(7), new Map([[new CalendarDate(2020, 1, 2), 1]])]), '[time_of_day("07:00:00"), {date("2020-01-02"): 1}]');
});

test("Decimal: toString is Python's str(Decimal) and parse reads what Python's Decimal reads", { skip: python ? false : 'python3 not available' }, () => {
  const texts = [
    ...decimalTexts(3000, 11),
    '0', '-0', '0.0', '0E-7', '0E+7', '1E+6', '1000000', '0.000001', '0.0000001', '123E-10', '-5E-7', '.5', '5.', '+.5e-3',
    'Infinity', '-Infinity', 'inf', '-INF', 'nan', 'NaN', '  7.25 ', '1e999999999', '1e-999999999', '12345678901234567890123456789E-40',
  ];
  const py = spawnSync('python3', ['-c', [
    'import sys, decimal',
    'for line in sys.stdin.read().split("\\n")[:-1]:',
    '    d = decimal.Decimal(line)',
    '    sign, digits, exp = d.as_tuple()',
    '    print(str(d) + " " + str(sign) + " " + "".join(map(str, digits)) + " " + str(exp))',
  ].join('\n')], { input: texts.join('\n') + '\n', maxBuffer: 1 << 26 });
  assert.equal(py.status, 0, String(py.stderr));
  const lines = String(py.stdout).trim().split('\n');
  assert.equal(lines.length, texts.length);
  for (let i = 0; i < texts.length; i++) {
    const [str, sign, digits, exp] = lines[i].split(' ');
    const d = Decimal.parse(texts[i]);
    assert.equal(d.toString(), str, `str of ${JSON.stringify(texts[i])}`);
    assert.equal(d.negative, sign === '1', `sign of ${texts[i]}`);
    if (exp === 'F') assert.equal(d.kind, 'infinity');
    else if (exp === 'n') assert.equal(d.kind, 'nan');
    else {
      assert.equal(d.kind, 'finite');
      assert.equal(d.coefficient, BigInt(digits), `coefficient of ${texts[i]}`);
      assert.equal(d.exponent, Number(exp), `exponent of ${texts[i]}`);
    }
    assert.ok(Decimal.parse(str).equals(d), `${str} reads back as ${texts[i]}`);
  }
});

test('Decimal: limits and malformed input', () => {
  assert.equal(new Decimal(false, 1n, 999_999_999).toString(), '1E+999999999');
  assert.throws(() => new Decimal(false, 1n, 1_000_000_000), RangeError);
  assert.throws(() => new Decimal(false, 1n, -1_000_000_000), RangeError);
  assert.throws(() => new Decimal(false, 1n, 0.5), RangeError);
  assert.throws(() => Decimal.parse('1e1000000000'), RangeError);
  assert.throws(() => Decimal.parse('1.5e-999999999'), RangeError); // coefficient 15, exponent -1,000,000,000
  assert.equal(new Decimal(false, (1n << 8192n) - 1n, 0).coefficient.toString(16).length, 2048); // 1,024 bytes
  assert.throws(() => new Decimal(false, 1n << 8192n, 0), RangeError);
  assert.throws(() => new Decimal(false, -1n, 0), RangeError);
  assert.throws(() => new Decimal(true, 0n, 0, 'nan'), RangeError);
  assert.throws(() => new Decimal(false, 5n, 0, 'infinity'), RangeError);
  assert.throws(() => new Decimal(false, 1n, 0, 'other'), TypeError);
  assert.throws(() => new Decimal(0, 1n, 0), TypeError);
  assert.throws(() => Decimal.parse('-NaN'), RangeError);
  for (const bad of ['', '-', '1.2.3', '1e', 'e5', '0x10', 'sNaN', 'NaN12', '1_000', 'Infinite', '1 2']) assert.throws(() => Decimal.parse(bad), SyntaxError, bad);
  assert.equal(new Decimal(false, 42, -1).coefficient, 42n);
  assert.throws(() => new Decimal(false, 2 ** 60, 0), RangeError);
  const d = Decimal.parse('1.50');
  assert.ok(Object.isFrozen(d));
  assert.equal(JSON.stringify({ d }), '{"d":"1.50"}');
  assert.ok(!d.equals(Decimal.parse('1.5')));
});

test('CalendarDate, UUID and TimeOfDay: limits, text forms and helpers', () => {
  assert.throws(() => new CalendarDate(0, 12, 31), RangeError);
  assert.throws(() => new CalendarDate(10000, 1, 1), RangeError);
  assert.throws(() => new CalendarDate(2023, 2, 29), RangeError);
  assert.throws(() => new CalendarDate(1900, 2, 29), RangeError);
  assert.throws(() => new CalendarDate(2024, 13, 1), RangeError);
  assert.throws(() => CalendarDate.parse('2024-1-01'), SyntaxError);
  assert.equal(CalendarDate.fromEpochDay(-719_162).toString(), '0001-01-01');
  assert.equal(CalendarDate.fromEpochDay(2_932_896).toString(), '9999-12-31');
  assert.throws(() => CalendarDate.fromEpochDay(-719_163), RangeError);
  assert.throws(() => CalendarDate.fromEpochDay(2_932_897), RangeError);
  assert.equal(new CalendarDate(2024, 3, 1).toEpochDay(), 19_783);
  assert.equal(CalendarDate.fromDate(new Date('2024-03-01T23:59:59.999Z')).toString(), '2024-03-01');
  assert.equal(CalendarDate.fromDate(new Date('1969-12-31T00:00:00.001Z')).toString(), '1969-12-31');
  assert.equal(new CalendarDate(50, 6, 15).toDate().toISOString(), '0050-06-15T00:00:00.000Z');
  assert.equal(JSON.stringify(new CalendarDate(2024, 3, 1)), '"2024-03-01"');

  const text = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';
  for (const form of [text, text.toUpperCase(), text.replace(/-/g, ''), `{${text}}`, `urn:uuid:${text}`]) assert.equal(UUID.parse(form).toString(), text, form);
  for (const bad of ['6ba7b810-9dad-11d1-80b4-00c04fd430c', '6ba7b8109dad-11d1-80b4-00c04fd430c8', 'g'.repeat(32), '']) assert.throws(() => UUID.parse(bad), SyntaxError, bad);
  assert.throws(() => new UUID(new Uint8Array(15)), RangeError);
  assert.throws(() => new UUID([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 256]), RangeError);
  const bytes = Uint8Array.from({ length: 16 }, (_, i) => i);
  const u = new UUID(bytes);
  bytes[0] = 99; // the UUID keeps its own copy
  assert.equal(u.toString(), '00010203-0405-0607-0809-0a0b0c0d0e0f');

  assert.equal(new TimeOfDay(23, 59, 59, 999_999).toMicroseconds(), 86_399_999_999);
  assert.equal(TimeOfDay.fromMicroseconds(86_399_999_999).toString(), '23:59:59.999999');
  assert.throws(() => TimeOfDay.fromMicroseconds(86_400_000_000), RangeError);
  assert.throws(() => new TimeOfDay(24), RangeError);
  assert.throws(() => new TimeOfDay(23, 59, 60), RangeError); // no leap second
  assert.throws(() => new TimeOfDay(1, 2, 3, 1_000_000), RangeError);
  assert.equal(TimeOfDay.parse('07:05').toString(), '07:05:00');
  assert.equal(TimeOfDay.parse('07:05:09.5').microsecond, 500_000);
  assert.equal(TimeOfDay.parse('07:05:09.000001').toString(), '07:05:09.000001');
  for (const bad of ['7:05', '07:05:09.1234567', '07:05:09+01:00', '24:00:00', '']) assert.throws(() => TimeOfDay.parse(bad), bad === '24:00:00' ? RangeError : SyntaxError, bad);
});

/** The prefix varint (SPEC 3.1) of v < 2^49, in hex. */
function varintHex(v) {
  let n = 1;
  while (v >= 2 ** (7 * n)) n++;
  const w = v * 2 ** n + 2 ** (n - 1);
  return bytesToHex(Uint8Array.from({ length: n }, (_, i) => Math.floor(w / 256 ** i) % 256));
}
const zigzag = (s) => (s >= 0 ? 2 * s : -2 * s - 1);

/** A buffer holding [1, EXT(type, payload)]: the EXT tag is at offset 5. */
function extInArray(type, payloadHex) {
  return hexToBytes('c1701082a1f7' + varintHex(type) + varintHex(payloadHex.length / 2) + payloadHex);
}

/** Payloads that break SPEC 5.8: [type, payload hex, what]. */
function malformed() {
  return [
    [EXT_DECIMAL, '', 'empty'],
    [EXT_DECIMAL, '05', 'kind 5'],
    [EXT_DECIMAL, '0200', 'a byte after +Infinity'],
    [EXT_DECIMAL, '04ff', 'a byte after NaN'],
    [EXT_DECIMAL, '00', 'no exponent'],
    [EXT_DECIMAL, '000200', 'exponent as a 2-byte varint of 0'],
    [EXT_DECIMAL, '000001', 'coefficient with a leading zero byte'],
    [EXT_DECIMAL, '00' + varintHex(zigzag(1e9)) + '01', 'exponent 1,000,000,000'],
    [EXT_DECIMAL, '01' + varintHex(zigzag(-1e9)) + '01', 'exponent -1,000,000,000'],
    [EXT_DECIMAL, '00' + varintHex(0) + '01'.repeat(1025), 'coefficient of 1,025 bytes'],
    [EXT_DECIMAL, '0002', 'a 2-byte exponent cut short'],
    [EXT_DATE, '', 'empty'],
    [EXT_DATE, '0100', 'a byte after the day'],
    [EXT_DATE, '0200', 'day 0 as a 2-byte varint'],
    [EXT_DATE, varintHex(zigzag(2_932_897)), 'day 2,932,897 (10000-01-01)'],
    [EXT_DATE, varintHex(zigzag(-719_163)), 'day -719,163 (0000-12-31)'],
    [EXT_UUID, '00'.repeat(15), '15 bytes'],
    [EXT_UUID, '00'.repeat(17), '17 bytes'],
    [EXT_TIME_OF_DAY, '', 'empty'],
    [EXT_TIME_OF_DAY, '0300', 'a byte after the time'],
    [0xff04, '', 'a reserved type version 1 does not define'],
    [0xffff, '01', 'the last reserved type'],
    [EXT_TIME_OF_DAY, varintHex(86_400_000_000), 'time of day 24:00, the first value past the range'],
  ];
}

test('payloads other than the canonical ones are invalid_value at the EXT tag', () => {
  for (const [type, hex, what] of malformed()) {
    const b = extInArray(type, hex);
    assert.throws(() => decode(b), (e) => e instanceof DecodeError && e.code === 'invalid_value' && e.offset === 5, `${what}: ${bytesToHex(b)}`);
  }
  assert.equal(decode(extInArray(EXT_TIME_OF_DAY, varintHex(86_399_999_999)))[1].toString(), '23:59:59.999999');
  // the limits themselves decode
  assert.equal(decode(extInArray(EXT_DATE, varintHex(zigzag(-719_162))))[1].toString(), '0001-01-01');
  assert.equal(decode(extInArray(EXT_DECIMAL, '01' + varintHex(zigzag(-999_999_999)) + 'ff'.repeat(1024)))[1].exponent, -999_999_999);
  // the EXT item's own length is checked first
  const short = extInArray(EXT_UUID, '00'.repeat(16)).subarray(0, 20);
  assert.throws(() => decode(short), (e) => e.code === 'length_exceeds_input');
});

test('the reserved range: addExtension refuses it, Ext values in it do not encode, removeExtension leaves it', () => {
  assert.throws(() => addExtension({ type: 0xff00, read: (b) => b }), (e) => e instanceof RangeError && /0xFF00\.\.0xFFFF/.test(e.message) && /65280\.\.65535/.test(e.message));
  assert.throws(() => addExtension({ type: 65535, read: (b) => b }), RangeError);
  assert.throws(() => addExtension({ type: 65536, read: (b) => b }), /0\.\.65279/);
  assert.throws(() => addExtension({ type: 7, Class: Decimal, write: () => new Uint8Array(0) }), (e) => e instanceof TypeError && /well-known/.test(e.message));
  removeExtension(EXT_DECIMAL);
  assert.equal(diag(decode(encode(Decimal.parse('2.5')))), 'decimal("2.5")');
  for (const t of [0xff00, 0xff02, 0xffff]) assert.throws(() => encode([new Ext(t, new Uint8Array(16))]), (e) => e instanceof EncodeError && /reserved/.test(e.message) && e.path === '$[0]');
  assert.equal(bytesToHex(encode(new Ext(65279, Uint8Array.of(1)))), 'c17010f7fcf70703' + '01');
  addExtension({ type: 65279, read: (b) => 'app:' + bytesToHex(b) });
  try {
    assert.equal(decode(encode(new Ext(65279, Uint8Array.of(1)))), 'app:01');
  } finally {
    removeExtension(65279);
  }
});

test('a Set is an EncodeError that says what to do', () => {
  for (const opts of [{}, { classInstances: 'map' }]) {
    assert.throws(() => encode({ tags: new Set(['a']) }, opts), (e) => e instanceof EncodeError && /Set/.test(e.message) && /\[\.\.\.set\]/.test(e.message) && e.path === '$["tags"]');
  }
});

test('map keys: well-known keys are equal when their values are (1.0 and 1.00 are not)', () => {
  const m = new Map([[Decimal.parse('1.0'), 'a'], [Decimal.parse('1.00'), 'b'], [new CalendarDate(2020, 1, 1), 'c'], [new TimeOfDay(1), 'd']]);
  const back = decode(encode(m));
  assert.deepEqual([...back.keys()].map(String), ['1.0', '1.00', '2020-01-01', '01:00:00']);
  assert.throws(() => encode(new Map([[Decimal.parse('1.0'), 1], [Decimal.parse('1.0'), 2]])), (e) => e instanceof EncodeError && /duplicate key/.test(e.message));
  assert.throws(() => encode(new Map([[UUID.parse('6ba7b810-9dad-11d1-80b4-00c04fd430c8'), 1], [UUID.parse('6BA7B8109DAD11D180B400C04FD430C8'), 2]])), /duplicate key/);
  // a buffer with two equal well-known keys is duplicate_key
  const one = bytesToHex(encode(new Map([[new CalendarDate(2020, 1, 1), 1]])));
  const two = one.replace(/^c17010f403/, 'c17010f405') + one.slice(one.indexOf('f7'));
  assert.throws(() => decode(hexToBytes(two)), (e) => e.code === 'duplicate_key');
});

test('the same bytes as the reference encoder (spec/tools/tersaref.py) for random well-known values', { skip: python ? false : 'python3 not available' }, () => {
  const g = rng(5);
  const values = [];
  for (let i = 0; i < 400; i++) {
    values.push(g.pick([
      () => new Decimal(g.int(2) === 1, BigInt(g.int(1e9)) ** BigInt(g.pick([0, 1, 2, 40, 250])), g.int(2e9 - 1) - 999_999_999),
      () => Decimal.parse(g.pick(['NaN', 'Infinity', '-Infinity', '-0', '0E-5'])),
      () => CalendarDate.fromEpochDay(g.int(3_652_059) - 719_162),
      () => new UUID(Uint8Array.from({ length: 16 }, () => g.int(256))),
      () => TimeOfDay.fromMicroseconds(g.int(86_400_000_000)),
    ])());
  }
  values.push(...samples());
  const all = [values, Object.fromEntries(values.slice(0, 50).map((v, i) => ['k' + i, v]))];
  const input = [...values, ...all].map((v) => JSON.stringify(toX(v))).join('\n') + '\n';
  const out = spawnSync('python3', [path.join(HERE, 'tersaref_encode_oracle.py')], { input, maxBuffer: 1 << 26 });
  assert.equal(out.status, 0, String(out.stderr).slice(0, 500));
  const refs = String(out.stdout).trim().split('\n');
  [...values, ...all].forEach((v, i) => assert.equal(bytesToHex(encode(v)), refs[i], `${i}: ${v}`));
});

test('the typings: a strict TypeScript consumer (without skipLibCheck) uses the classes from both builds', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tersa-types-'));
  try {
    const dist = path.join(HERE, '..', 'dist');
    const esmFile = path.join(dir, 'use.ts');
    fs.writeFileSync(esmFile, [
      `import { encode, decode, Decimal, CalendarDate, UUID, TimeOfDay, type DecimalKind, EXT_DECIMAL } from ${JSON.stringify(path.join(dist, 'esm', 'index.js'))};`,
      "const d: Decimal = Decimal.parse('1.5');",
      'const kind: DecimalKind = d.kind;',
      'const c: bigint = d.coefficient;',
      'const back = decode(encode([d, new CalendarDate(2020, 1, 2), UUID.parse(\'6ba7b810-9dad-11d1-80b4-00c04fd430c8\'), new TimeOfDay(1)])) as unknown[];',
      'const e: number = back[0] instanceof Decimal ? back[0].exponent : EXT_DECIMAL;',
      'export const out = [kind, c, e];',
      '',
    ].join('\n'));
    const cjsFile = path.join(dir, 'use.cts');
    fs.writeFileSync(cjsFile, [
      `import tersa = require(${JSON.stringify(path.join(dist, 'cjs', 'index.js'))});`,
      "const t: tersa.TimeOfDay = tersa.TimeOfDay.parse('07:30');",
      'export const out = t.toMicroseconds();',
      '',
    ].join('\n'));
    const tsc = path.join(HERE, '..', 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--skipLibCheck', 'false', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', path.join(HERE, '..', 'node_modules', '@types'), esmFile, cjsFile]);
    assert.equal(r.status, 0, String(r.stdout) + String(r.stderr));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// The C CLI: $TERSA_CLI or ../c/build/tersa, as in cross-language.test.js.
const CLI = process.env.TERSA_CLI || path.join(ROOT, 'c', 'build', 'tersa');
const cliPresent = fs.existsSync(CLI);

function cli(args, input) {
  const r = spawnSync(CLI, args, { input, maxBuffer: 1 << 26 });
  return { status: r.status, out: String(r.stdout), err: String(r.stderr) };
}

test('the C CLI reads the TypeScript bytes as the same values and recodes them to the same bytes', {
  skip: cliPresent ? false : `no CLI at ${CLI} (cross-language.test.js fails for that unless TERSA_SKIP_CLI=1)`,
}, () => {
  const values = samples();
  for (const v of values) {
    const b = encode(v);
    const d = cli(['decode', '--diag'], b);
    assert.equal(d.status, 0, `${CLI} decode --diag of ${v}: ${d.err}`);
    assert.equal(d.out.replace(/\n$/, ''), diag(v), `C diag of ${bytesToHex(b)}`);
    const r = spawnSync(CLI, ['recode'], { input: b });
    assert.equal(r.status, 0, String(r.stderr));
    assert.equal(bytesToHex(new Uint8Array(r.stdout)), bytesToHex(b), `recode of ${v}`);
  }
  const stream = encodeStream(values);
  const lines = cli(['decode', '--diag'], stream).out.replace(/\n$/, '').split('\n');
  assert.deepEqual(lines, values.map(diag));
  // and C rejects what TypeScript rejects, at the same offset
  for (const [type, hex, what] of malformed()) {
    const c = cli(['decode', '--diag'], extInArray(type, hex));
    assert.notEqual(c.status, 0, `C decoded ${what}`);
    assert.match(c.err, /invalid_value at byte offset 5\b/, `C on ${what}`);
  }
});
