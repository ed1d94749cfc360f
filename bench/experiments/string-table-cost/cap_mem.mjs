// Memory the encoder / decoder hold between calls: heapUsed + external after
// one call (gc'd), minus the same once the encoder / decoder is dropped; and
// the process's peak RSS. One build per process (BUILDS as cap_ab.mjs):
//   /usr/bin/time -f %M node --expose-gc cap_mem.mjs BUILD N
import { users } from '../../node/lib/users.mjs';
const [v, n] = [process.argv[2], Number(process.argv[3])];
const t = await import(`${process.env.BUILDS ?? '/tmp/tctools'}/js_${v}/dist/esm/index.js`);
const value = users(n);
const used = () => { gc(); gc(); const m = process.memoryUsage(); return m.heapUsed + m.external; };
const mb = (x) => (x / 1048576).toFixed(1);
let e = new t.Encoder();
const b = Uint8Array.from(e.encode(value));
const withE = used(); e = null; const encHeld = withE - used();
let d = new t.Decoder();
let back = d.decode(b); back = null;
const withD = used(); d = null; const decHeld = withD - used();
console.log(`users_${n} ${v} encoder_holds_MB ${mb(encHeld)} decoder_holds_MB ${mb(decHeld)}`);
