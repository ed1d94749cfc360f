// Arrays of user records, the payload of the Redis/Express scenario:
// {userId (UUID v4), username, email, birthdate, registeredAt, lastLogin},
// the three dates as ISO-8601 strings with milliseconds (what JSON gives for a
// Date). Deterministic: the same seed and count give the same array on every
// machine, and the first n records of a larger array are the n-record array.

const FIRST = [
  'james', 'mary', 'robert', 'patricia', 'john', 'jennifer', 'michael', 'linda', 'david', 'elizabeth',
  'william', 'barbara', 'richard', 'susan', 'joseph', 'jessica', 'thomas', 'sarah', 'charles', 'karen',
  'amelia', 'noah', 'olivia', 'liam', 'emma', 'mateo', 'sofia', 'lucas', 'chloe', 'hiroshi',
  'yuki', 'aarav', 'priya', 'wei', 'mei', 'omar', 'fatima', 'ivan', 'olga', 'jonas',
];
const LAST = [
  'smith', 'johnson', 'williams', 'brown', 'jones', 'garcia', 'miller', 'davis', 'rodriguez', 'martinez',
  'hernandez', 'lopez', 'gonzalez', 'wilson', 'anderson', 'thomas', 'taylor', 'moore', 'jackson', 'martin',
  'lee', 'perez', 'thompson', 'white', 'harris', 'sanchez', 'clark', 'ramirez', 'lewis', 'robinson',
  'tanaka', 'sato', 'patel', 'kumar', 'chen', 'wang', 'haddad', 'petrov', 'novak', 'berg',
];
const DOMAINS = ['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'proton.me', 'icloud.com', 'example.org', 'mail.test'];
const SEPARATORS = ['.', '_', '', '-'];

const DAY = 86_400_000;
const BIRTH_FROM = Date.UTC(1950, 0, 1);
const BIRTH_TO = Date.UTC(2007, 11, 31);
const REGISTERED_FROM = Date.UTC(2015, 0, 1);
const REGISTERED_TO = Date.UTC(2025, 5, 30);
const LOGIN_TO = Date.UTC(2025, 11, 31);

/** sfc32: a small, fast generator with a 128-bit state; returns uint32s. */
function sfc32(seed) {
  let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = seed >>> 0;
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function uuid4(next) {
  const b = new Uint8Array(16);
  for (let i = 0; i < 16; i += 4) {
    const x = next();
    b[i] = x & 255; b[i + 1] = (x >>> 8) & 255; b[i + 2] = (x >>> 16) & 255; b[i + 3] = x >>> 24;
  }
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => HEX[x]).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** An integer in [lo, hi) from two draws (53 bits: millisecond ranges need more than 32). */
function between(next, lo, hi) {
  const u = (next() * 2 ** 21 + (next() >>> 11)) / 2 ** 53;
  return lo + Math.floor(u * (hi - lo));
}

const pick = (next, list) => list[next() % list.length];

/** `count` user records; seed 15 (the number) unless given. */
export function users(count, seed = 15) {
  const next = sfc32(seed);
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const first = pick(next, FIRST);
    const last = pick(next, LAST);
    const sep = pick(next, SEPARATORS);
    const num = next() % 3 === 0 ? '' : String(next() % 1000);
    const registered = between(next, REGISTERED_FROM, REGISTERED_TO);
    out[i] = {
      userId: uuid4(next),
      username: `${first}${sep}${last}${num}`,
      email: `${first}.${last}${num}@${pick(next, DOMAINS)}`,
      birthdate: new Date(between(next, BIRTH_FROM, BIRTH_TO)).toISOString(),
      registeredAt: new Date(registered).toISOString(),
      lastLogin: new Date(between(next, registered + DAY, LOGIN_TO)).toISOString(),
    };
  }
  return out;
}
