// Well-known extension types (SPEC 5.8): decimal, calendar date, UUID and
// time of day, carried as EXT items of the reserved types 0xFF00-0xFFFF. The
// classes here are what the decoder makes of those items and what the encoder
// writes as them; every payload a decoder reads is checked against the one
// canonical form, and any other is invalid_value at the EXT tag.

import { DecodeError, extByClass, daysFromCivil, civilFromDays, daysInMonth, sharedOnGlobal } from './common.js';

export const EXT_DECIMAL = 0xff00;
export const EXT_DATE = 0xff01;
export const EXT_UUID = 0xff02;
export const EXT_TIME_OF_DAY = 0xff03;

/** Limits of the decimal payload (SPEC 5.8). */
const MAX_EXPONENT = 999_999_999;
const MAX_COEFFICIENT_BYTES = 1024;
const COEFFICIENT_LIMIT = 1n << BigInt(8 * MAX_COEFFICIENT_BYTES);
/** Days since 1970-01-01 of 0001-01-01 and 9999-12-31. */
const MIN_DAY = -719_162;
const MAX_DAY = 2_932_896;
const MICROS_PER_DAY = 86_400_000_000;

function isInt(x: unknown, lo: number, hi: number): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= lo && x <= hi;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export type DecimalKind = 'finite' | 'infinity' | 'nan';

/**
 * An arbitrary-precision decimal: (-1)^negative x coefficient x 10^exponent,
 * or an infinity, or NaN. The representation is kept as given (Python's
 * `decimal.Decimal` does the same): 1.0 (coefficient 10, exponent -1) and
 * 1.00 are different values, and -0 is negative with coefficient 0.
 */
class Decimal {
  readonly negative: boolean;
  /** The digits as an integer, >= 0 and below 256^1024; 0n for infinities and NaN. */
  readonly coefficient: bigint;
  /** The power of ten, -999,999,999..999,999,999; 0 for infinities and NaN. */
  readonly exponent: number;
  readonly kind: DecimalKind;

  constructor(negative: boolean, coefficient: bigint | number, exponent = 0, kind: DecimalKind = 'finite') {
    if (typeof negative !== 'boolean') throw new TypeError('Decimal: negative must be a boolean');
    if (typeof coefficient === 'number') {
      if (!Number.isSafeInteger(coefficient)) throw new RangeError('Decimal: a number coefficient must be a safe integer (use a bigint)');
      coefficient = BigInt(coefficient);
    }
    if (typeof coefficient !== 'bigint') throw new TypeError('Decimal: coefficient must be a bigint');
    if (kind === 'finite') {
      if (coefficient < 0n) throw new RangeError('Decimal: coefficient must be >= 0 (the sign is `negative`)');
      if (coefficient >= COEFFICIENT_LIMIT) throw new RangeError('Decimal: coefficient longer than 1,024 bytes');
      if (!isInt(exponent, -MAX_EXPONENT, MAX_EXPONENT)) throw new RangeError('Decimal: exponent must be an integer within -999,999,999..999,999,999');
    } else if (kind === 'infinity' || kind === 'nan') {
      if (coefficient !== 0n || exponent !== 0) throw new RangeError(`Decimal: ${kind} has coefficient 0n and exponent 0`);
      if (kind === 'nan' && negative) throw new RangeError('Decimal: NaN has no sign');
    } else throw new TypeError("Decimal: kind must be 'finite', 'infinity' or 'nan'");
    this.negative = negative;
    this.coefficient = coefficient;
    this.exponent = exponent;
    this.kind = kind;
    Object.freeze(this);
  }

  /**
   * Reads Python's decimal text: `[+-]digits[.digits][e[+-]digits]`,
   * `[+-]Infinity` (or `Inf`), `NaN`, any letter case, surrounding blanks
   * ignored. Trailing zeros stay: `Decimal.parse('1.50').exponent` is -2.
   */
  static parse(text: string): Decimal {
    const s = String(text).trim();
    const m = /^([+-])?(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))(?:[eE]([+-]?[0-9]+))?$/.exec(s);
    if (m === null) {
      const special = /^([+-])?(inf|infinity|nan)$/i.exec(s);
      if (special === null) throw new SyntaxError(`Decimal.parse: not a decimal: ${JSON.stringify(String(text).slice(0, 60))}`);
      const negative = special[1] === '-';
      if (special[2].toLowerCase() === 'nan') {
        if (negative) throw new RangeError('Decimal.parse: -NaN has no Tersa form (NaN has no sign)');
        return new Decimal(false, 0n, 0, 'nan');
      }
      return new Decimal(negative, 0n, 0, 'infinity');
    }
    const whole = m[2] ?? '';
    const fraction = m[3] ?? m[4] ?? '';
    // The exponent text may be long ("1e-0000000005"): read it as a BigInt.
    const e = (m[5] === undefined ? 0n : BigInt(m[5])) - BigInt(fraction.length);
    if (e < BigInt(-MAX_EXPONENT) || e > BigInt(MAX_EXPONENT)) throw new RangeError('Decimal.parse: exponent outside -999,999,999..999,999,999');
    return new Decimal(m[1] === '-', BigInt(whole + fraction), Number(e));
  }

  /** Python's `str(Decimal)`: plain notation unless the exponent is positive or the value very small. */
  toString(): string {
    const sign = this.negative ? '-' : '';
    if (this.kind === 'infinity') return sign + 'Infinity';
    if (this.kind === 'nan') return 'NaN';
    const digits = this.coefficient.toString();
    const e = this.exponent;
    const left = e + digits.length; // digits left of the point in plain notation
    const dot = e <= 0 && left > -6 ? left : 1;
    let text: string;
    if (dot <= 0) text = '0.' + '0'.repeat(-dot) + digits;
    else if (dot >= digits.length) text = digits + '0'.repeat(dot - digits.length);
    else text = digits.slice(0, dot) + '.' + digits.slice(dot);
    if (left !== dot) text += 'E' + (left - dot >= 0 ? '+' : '') + (left - dot);
    return sign + text;
  }

  toJSON(): string {
    return this.toString();
  }

  /** Same representation (1.0 and 1.00 differ, as they do on the wire). */
  equals(o: unknown): boolean {
    return (
      o instanceof SharedDecimal &&
      o.kind === this.kind &&
      o.negative === this.negative &&
      o.coefficient === this.coefficient &&
      o.exponent === this.exponent
    );
  }
}

/** A date of the proleptic Gregorian calendar, years 1..9999, without a time or zone. */
class CalendarDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;

  constructor(year: number, month: number, day: number) {
    if (!isInt(year, 1, 9999)) throw new RangeError('CalendarDate: year must be an integer 1..9999');
    if (!isInt(month, 1, 12)) throw new RangeError('CalendarDate: month must be an integer 1..12');
    if (!isInt(day, 1, daysInMonth(year, month))) throw new RangeError(`CalendarDate: ${year}-${pad(month, 2)} has no day ${day}`);
    this.year = year;
    this.month = month;
    this.day = day;
    Object.freeze(this);
  }

  /** Reads `YYYY-MM-DD`. */
  static parse(text: string): CalendarDate {
    const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(String(text));
    if (m === null) throw new SyntaxError(`CalendarDate.parse: not YYYY-MM-DD: ${JSON.stringify(String(text).slice(0, 60))}`);
    return new CalendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
  }

  /** The date `days` after 1970-01-01. */
  static fromEpochDay(days: number): CalendarDate {
    if (!isInt(days, MIN_DAY, MAX_DAY)) throw new RangeError('CalendarDate: day number outside years 1..9999');
    const ymd = civilFromDays(days);
    return new SharedCalendarDate(Math.floor(ymd / 10000), Math.floor(ymd / 100) % 100, ymd % 100);
  }

  /** The UTC calendar date of a `Date`. */
  static fromDate(date: Date): CalendarDate {
    const ms = date.getTime();
    if (Number.isNaN(ms)) throw new RangeError('CalendarDate.fromDate: invalid Date');
    return SharedCalendarDate.fromEpochDay(Math.floor(ms / 86_400_000));
  }

  /** Days since 1970-01-01 (negative before). */
  toEpochDay(): number {
    return daysFromCivil(this.year, this.month, this.day);
  }

  /** Midnight UTC of this date. */
  toDate(): Date {
    return new Date(this.toEpochDay() * 86_400_000);
  }

  toString(): string {
    return pad(this.year, 4) + '-' + pad(this.month, 2) + '-' + pad(this.day, 2);
  }

  toJSON(): string {
    return this.toString();
  }

  equals(o: unknown): boolean {
    return o instanceof SharedCalendarDate && o.year === this.year && o.month === this.month && o.day === this.day;
  }
}

const HEX = /^[0-9a-f]{32}$/i;

/** A UUID: 16 bytes in RFC 9562 order (the text form's hex digits in order). */
class UUID {
  /** A copy of the bytes given; always 16 long. */
  readonly bytes: Uint8Array;

  constructor(bytes: ArrayLike<number>) {
    if (bytes == null || bytes.length !== 16) throw new RangeError('UUID: needs exactly 16 bytes');
    const own = new Uint8Array(16);
    for (let i = 0; i < 16; i++) {
      if (!isInt(bytes[i], 0, 255)) throw new RangeError('UUID: bytes must be integers 0..255');
      own[i] = bytes[i];
    }
    this.bytes = own;
    Object.freeze(this);
  }

  /**
   * Reads the text form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (either case),
   * also without hyphens, in braces or after `urn:uuid:`, as Python's
   * `uuid.UUID` does.
   */
  static parse(text: string): UUID {
    let s = String(text).trim();
    if (/^urn:uuid:/i.test(s)) s = s.slice(9);
    else if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)) s = s.replace(/-/g, '');
    if (!HEX.test(s)) throw new SyntaxError(`UUID.parse: not a UUID: ${JSON.stringify(String(text).slice(0, 60))}`);
    const b = new Uint8Array(16);
    for (let i = 0; i < 16; i++) b[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
    return new SharedUUID(b);
  }

  /** Lowercase `8-4-4-4-12` hex. */
  toString(): string {
    let s = '';
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
      s += (this.bytes[i] < 16 ? '0' : '') + this.bytes[i].toString(16);
    }
    return s;
  }

  toJSON(): string {
    return this.toString();
  }

  equals(o: unknown): boolean {
    if (!(o instanceof SharedUUID)) return false;
    for (let i = 0; i < 16; i++) if (o.bytes[i] !== this.bytes[i]) return false;
    return true;
  }
}

/** A wall-clock time within a day, to the microsecond, without a date or zone. */
class TimeOfDay {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly microsecond: number;

  constructor(hour: number, minute = 0, second = 0, microsecond = 0) {
    if (!isInt(hour, 0, 23)) throw new RangeError('TimeOfDay: hour must be an integer 0..23');
    if (!isInt(minute, 0, 59)) throw new RangeError('TimeOfDay: minute must be an integer 0..59');
    if (!isInt(second, 0, 59)) throw new RangeError('TimeOfDay: second must be an integer 0..59 (no leap second)');
    if (!isInt(microsecond, 0, 999_999)) throw new RangeError('TimeOfDay: microsecond must be an integer 0..999,999');
    this.hour = hour;
    this.minute = minute;
    this.second = second;
    this.microsecond = microsecond;
    Object.freeze(this);
  }

  /** Reads `HH:MM`, `HH:MM:SS` or `HH:MM:SS.f` with 1 to 6 fraction digits. */
  static parse(text: string): TimeOfDay {
    const m = /^([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,6}))?)?$/.exec(String(text));
    if (m === null) throw new SyntaxError(`TimeOfDay.parse: not HH:MM:SS[.ffffff]: ${JSON.stringify(String(text).slice(0, 60))}`);
    return new SharedTimeOfDay(Number(m[1]), Number(m[2]), Number(m[3] ?? 0), Number((m[4] ?? '').padEnd(6, '0')));
  }

  /** The time `us` microseconds after midnight. */
  static fromMicroseconds(us: number): TimeOfDay {
    if (!isInt(us, 0, MICROS_PER_DAY - 1)) throw new RangeError('TimeOfDay: microseconds must be an integer 0..86,399,999,999');
    const s = Math.floor(us / 1e6);
    return new SharedTimeOfDay(Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60, us % 1e6);
  }

  /** Microseconds since midnight. */
  toMicroseconds(): number {
    return ((this.hour * 60 + this.minute) * 60 + this.second) * 1e6 + this.microsecond;
  }

  /** Python's `time.isoformat()`: `HH:MM:SS`, with `.ffffff` when the microseconds are not 0. */
  toString(): string {
    const s = pad(this.hour, 2) + ':' + pad(this.minute, 2) + ':' + pad(this.second, 2);
    return this.microsecond === 0 ? s : s + '.' + pad(this.microsecond, 6);
  }

  toJSON(): string {
    return this.toString();
  }

  equals(o: unknown): boolean {
    return o instanceof SharedTimeOfDay && o.toMicroseconds() === this.toMicroseconds();
  }
}

// ---------------------------------------------------------------------------
// Payloads
// ---------------------------------------------------------------------------

/** Appends a prefix varint (SPEC 3.1) of v < 2^53. */
function pushVarint(out: number[], v: number): void {
  let n = 1;
  while (n < 8 && v >= 2 ** (7 * n)) n++;
  out.push((v % 2 ** (8 - n)) * 2 ** n + 2 ** (n - 1));
  let rest = Math.floor(v / 2 ** (8 - n));
  for (let i = 1; i < n; i++) {
    out.push(rest % 256);
    rest = Math.floor(rest / 256);
  }
}

function zigzag(s: number): number {
  return s >= 0 ? 2 * s : -2 * s - 1;
}

function unzigzag(z: number): number {
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

let varintEnd = 0;

/**
 * The minimal varint at p[i], or -1 for none (cut short, longer than needed,
 * or above 2^42, which is beyond every field of these payloads); the byte
 * after it goes to varintEnd.
 */
function readVarint(p: Uint8Array, i: number): number {
  if (i >= p.length) return -1;
  const b = p[i];
  if (b === 0) return -1;
  const n = 32 - Math.clz32(b & -b); // trailing zero bits + 1
  if (n > 6 || i + n > p.length) return -1;
  let w = 0;
  for (let j = n - 1; j >= 0; j--) w = w * 256 + p[i + j];
  const v = Math.floor(w / 2 ** n);
  if (n > 1 && v < 2 ** (7 * (n - 1))) return -1;
  varintEnd = i + n;
  return v;
}

function reverseFrom(a: number[], from: number): void {
  for (let i = from, j = a.length - 1; i < j; i++, j--) {
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

function decimalPayload(d: Decimal): Uint8Array {
  if (d.kind === 'infinity') return Uint8Array.of(d.negative ? 3 : 2);
  if (d.kind === 'nan') return Uint8Array.of(4);
  const out: number[] = [d.negative ? 1 : 0];
  pushVarint(out, zigzag(d.exponent));
  const c = d.coefficient;
  if (c <= 0xffffffffffffn) {
    // up to 6 bytes in a number, without the text of a BigInt
    let v = Number(c);
    const from = out.length;
    for (; v > 0; v = Math.floor(v / 256)) out.push(v % 256);
    reverseFrom(out, from);
  } else {
    let hex = c.toString(16);
    if (hex.length & 1) hex = '0' + hex;
    for (let i = 0; i < hex.length; i += 2) out.push(parseInt(hex.slice(i, i + 2), 16));
  }
  return Uint8Array.from(out);
}

function datePayload(d: CalendarDate): Uint8Array {
  const out: number[] = [];
  pushVarint(out, zigzag(d.toEpochDay()));
  return Uint8Array.from(out);
}

function uuidPayload(u: UUID): Uint8Array {
  return u.bytes.slice();
}

function timeOfDayPayload(t: TimeOfDay): Uint8Array {
  const out: number[] = [];
  pushVarint(out, t.toMicroseconds());
  return Uint8Array.from(out);
}

function invalid(at: number, what: string): never {
  throw new DecodeError('invalid_value', at, what);
}

function readDecimal(p: Uint8Array, at: number): Decimal {
  if (p.length === 0) invalid(at, 'decimal: empty payload');
  const k = p[0];
  if (k >= 2) {
    if (k > 4) invalid(at, `decimal: kind ${k}`);
    if (p.length !== 1) invalid(at, 'decimal: bytes after the kind of an infinity or NaN');
    return k === 4 ? new SharedDecimal(false, 0n, 0, 'nan') : new SharedDecimal(k === 3, 0n, 0, 'infinity');
  }
  const z = readVarint(p, 1);
  if (z < 0) invalid(at, 'decimal: exponent is not a minimal varint');
  const e = unzigzag(z);
  if (e < -MAX_EXPONENT || e > MAX_EXPONENT) invalid(at, 'decimal: exponent out of range');
  const from = varintEnd;
  const n = p.length - from;
  if (n > MAX_COEFFICIENT_BYTES) invalid(at, 'decimal: coefficient longer than 1,024 bytes');
  if (n > 0 && p[from] === 0) invalid(at, 'decimal: coefficient with a leading zero byte');
  let c = 0n;
  if (n > 0 && n <= 6) {
    let v = 0;
    for (let i = from; i < p.length; i++) v = v * 256 + p[i];
    c = BigInt(v);
  } else if (n > 0) {
    let hex = '0x';
    for (let i = from; i < p.length; i++) hex += (p[i] < 16 ? '0' : '') + p[i].toString(16);
    c = BigInt(hex);
  }
  return new SharedDecimal(k === 1, c, e);
}

function readDate(p: Uint8Array, at: number): CalendarDate {
  const z = readVarint(p, 0);
  if (z < 0 || varintEnd !== p.length) invalid(at, 'date: payload is not one minimal varint');
  const days = unzigzag(z);
  if (days < MIN_DAY || days > MAX_DAY) invalid(at, 'date: outside years 1..9999');
  return SharedCalendarDate.fromEpochDay(days);
}

function readUUID(p: Uint8Array, at: number): UUID {
  if (p.length !== 16) invalid(at, `uuid: ${p.length} bytes, not 16`);
  return new SharedUUID(p);
}

function readTimeOfDay(p: Uint8Array, at: number): TimeOfDay {
  const us = readVarint(p, 0);
  if (us < 0 || varintEnd !== p.length) invalid(at, 'time of day: payload is not one minimal varint');
  if (us >= MICROS_PER_DAY) invalid(at, 'time of day: not below 24:00');
  return SharedTimeOfDay.fromMicroseconds(us);
}

/**
 * @internal The value of an EXT item of a reserved type (> EXT_APP_MAX),
 * whose tag is at offset `at`; a payload that is not the canonical one, or a
 * reserved type without a meaning, is invalid_value there.
 */
export function readWellKnown(type: number, data: Uint8Array, at: number): unknown {
  switch (type) {
    case EXT_DECIMAL:
      return readDecimal(data, at);
    case EXT_DATE:
      return readDate(data, at);
    case EXT_UUID:
      return readUUID(data, at);
    case EXT_TIME_OF_DAY:
      return readTimeOfDay(data, at);
  }
  return invalid(at, `extension type 0x${type.toString(16)} is reserved (SPEC 5.8)`);
}

// ---------------------------------------------------------------------------
// One set of classes per JS realm
// ---------------------------------------------------------------------------
// As with the classes in common.ts: every copy of the package loaded in a
// realm uses the first copy's classes, so that a Decimal made through one
// copy encodes through another and `instanceof` holds across them. The first
// copy also enters the classes into the shared extension registry (by class:
// the encoder, map-key identities and diag then treat them as extensions).
// Bump the version in the key when the classes change shape.

const WELL_KNOWN_KEY = Symbol.for('tersa well-known v1');

interface WellKnownClasses {
  readonly Decimal: typeof Decimal;
  readonly CalendarDate: typeof CalendarDate;
  readonly UUID: typeof UUID;
  readonly TimeOfDay: typeof TimeOfDay;
}

function sharedClasses(): WellKnownClasses {
  return sharedOnGlobal<WellKnownClasses>(WELL_KNOWN_KEY, Object.freeze({ Decimal, CalendarDate, UUID, TimeOfDay }), () => {
    extByClass.set(Decimal, { type: EXT_DECIMAL, Class: Decimal, write: decimalPayload });
    extByClass.set(CalendarDate, { type: EXT_DATE, Class: CalendarDate, write: datePayload });
    extByClass.set(UUID, { type: EXT_UUID, Class: UUID, write: uuidPayload });
    extByClass.set(TimeOfDay, { type: EXT_TIME_OF_DAY, Class: TimeOfDay, write: timeOfDayPayload });
  });
}

const classes = sharedClasses();
const SharedDecimal = classes.Decimal;
type SharedDecimal = Decimal;
const SharedCalendarDate = classes.CalendarDate;
type SharedCalendarDate = CalendarDate;
const SharedUUID = classes.UUID;
type SharedUUID = UUID;
const SharedTimeOfDay = classes.TimeOfDay;
type SharedTimeOfDay = TimeOfDay;
export {
  SharedDecimal as Decimal,
  SharedCalendarDate as CalendarDate,
  SharedUUID as UUID,
  SharedTimeOfDay as TimeOfDay,
};


/** @internal The diagnostic notation of a well-known value, or null for any other value. */
export function wellKnownDiag(v: object): string | null {
  if (v instanceof SharedDecimal) return 'decimal("' + v.toString() + '")';
  if (v instanceof SharedCalendarDate) return 'date("' + v.toString() + '")';
  if (v instanceof SharedUUID) return 'uuid("' + v.toString() + '")';
  if (v instanceof SharedTimeOfDay) return 'time_of_day("' + v.toString() + '")';
  return null;
}
