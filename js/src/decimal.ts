// The decimal form of a float (SPEC 7): its shortest representation when
// that has at most 15 significant digits and an exponent within -22..22.

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
const scratchF64 = new Float64Array(1);
const scratchU32 = new Uint32Array(scratchF64.buffer);
const HIGH_WORD = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** The mantissa and exponent shortestDecimal found, and whether at the scale guessed. */
export let decM = 0;
export let decE = 0;
export let decGuessed = false;

// P10[j + 8]: the double nearest 10^j, j = -8..38, to find a float's decimal exponent
const P10: number[] = [];
for (let j = -8; j <= 38; j++) P10.push(Number('1e' + j));

/**
 * Shortest decimal (SPEC 7) of a finite non-zero double with at most 15
 * significant digits (|m| < 10^15) and -22 <= e <= 22, into decM/decE.
 * Integers and numbers of up to four decimals are tried directly (money,
 * percentages, short readings); the rest by the SPEC's one-multiplication
 * test at k = 14 - j, with j found from the binary exponent.
 */
export function shortestDecimal(d: number, guess: number): boolean {
  const a = d < 0 ? -d : d;
  if (guess > 0) {
    // A guess of `guess` decimals (the slot's recent floats had that many):
    // if a * 10^guess rounds to an integer m < 10^15 that gives back a, m is
    // the only such decimal of that scale, so m without its trailing zeros is
    // the shortest (a value with no decimals takes the integer path below).
    const p = POW10[guess];
    let m = Math.round(a * p);
    if (m / p === a && m < 1e15) {
      let e = -guess;
      let q = m / 10;
      while (Math.floor(q) === q && e < 0) {
        m = q;
        e++;
        q = m / 10;
      }
      if (e < 0) {
        decM = d < 0 ? -m : m;
        decE = e;
        decGuessed = true;
        return true;
      }
    }
  }
  decGuessed = false;
  if (a < 1e11 && a >= 1e-7) {
    if (Number.isInteger(a)) {
      let m = a;
      let e = 0;
      while (m % 10 === 0) {
        m /= 10;
        e++;
      }
      decM = d < 0 ? -m : m;
      decE = e;
      return true;
    }
    if (Math.round(a * 1e4) / 1e4 === a) {
      const k = Math.round(a * 100) / 100 === a ? (Math.round(a * 10) / 10 === a ? 1 : 2) : Math.round(a * 1000) / 1000 === a ? 3 : 4;
      const m = Math.round(a * POW10[k]);
      decM = d < 0 ? -m : m;
      decE = -k;
      return true;
    }
  }
  let k: number;
  if (a < 1e-7) k = 22;
  else {
    if (a >= 1e37) return false;
    scratchF64[0] = a;
    // 10^j <= a < 10^(j+1): floor(E log10 2) for 2^E <= a is j or j - 1
    let j = Math.floor(((scratchU32[HIGH_WORD] >>> 20) - 1023) * 0.3010299956639812);
    if (a >= P10[j + 9]) j++;
    k = 14 - j;
    if (k > 22) k = 22;
  }
  let m: number;
  let back: number;
  if (k >= 0) {
    m = Math.round(a * POW10[k]);
    back = m / POW10[k];
  } else {
    if (k < -22) return false;
    m = Math.round(a / POW10[-k]);
    back = m * POW10[-k];
  }
  if (back !== a || m > 1e15) return false;
  // trailing zeros into the exponent (at most 15: 8 + 4 + 2 + 1)
  let e = -k;
  let q = m / 1e8;
  if (Math.floor(q) === q) {
    m = q;
    e += 8;
  }
  q = m / 1e4;
  if (Math.floor(q) === q) {
    m = q;
    e += 4;
  }
  q = m / 100;
  if (Math.floor(q) === q) {
    m = q;
    e += 2;
  }
  q = m / 10;
  if (Math.floor(q) === q) {
    m = q;
    e += 1;
  }
  if (e > 22) return false;
  decM = d < 0 ? -m : m;
  decE = e;
  return true;
}
