// A redis-server of the test's own (127.0.0.1, a free port, a temporary
// directory, no persistence) and the smallest binary-safe client the
// dictionary registry needs: GET, SET, FLUSHDB over RESP. The registry takes
// any store with get/set; this keeps the package free of a Redis dependency.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export class RespClient {
  constructor(port) {
    this.port = port;
    this.buf = Buffer.alloc(0);
    this.waiting = [];
  }

  async connect() {
    this.sock = net.createConnection({ host: '127.0.0.1', port: this.port });
    await new Promise((resolve, reject) => {
      this.sock.once('connect', resolve);
      this.sock.once('error', reject);
    });
    this.sock.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.drain();
    });
    this.sock.on('error', (e) => { for (const w of this.waiting.splice(0)) w.reject(e); });
    return this;
  }

  // One reply from the front of the buffer: [value, bytes used], or null if incomplete.
  parse(at) {
    const eol = this.buf.indexOf('\r\n', at);
    if (eol < 0) return null;
    const line = this.buf.toString('latin1', at + 1, eol);
    const type = String.fromCharCode(this.buf[at]);
    if (type === '+') return [line, eol + 2];
    if (type === '-') return [new Error(line), eol + 2];
    if (type === ':') return [Number(line), eol + 2];
    if (type === '$') {
      const n = Number(line);
      if (n < 0) return [null, eol + 2];
      if (this.buf.length < eol + 2 + n + 2) return null;
      return [new Uint8Array(this.buf.subarray(eol + 2, eol + 2 + n)), eol + 2 + n + 2];
    }
    throw new Error(`unexpected RESP reply type ${type}`);
  }

  drain() {
    while (this.waiting.length > 0) {
      const r = this.parse(0);
      if (!r) return;
      this.buf = this.buf.subarray(r[1]);
      const w = this.waiting.shift();
      if (r[0] instanceof Error) w.reject(r[0]);
      else w.resolve(r[0]);
    }
  }

  command(...args) {
    const parts = [Buffer.from(`*${args.length}\r\n`)];
    for (const a of args) {
      const b = typeof a === 'string' ? Buffer.from(a) : Buffer.from(a.buffer, a.byteOffset, a.byteLength);
      parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.sock.write(Buffer.concat(parts));
    });
  }

  get(key) { return this.command('GET', key); }
  set(key, value) { return this.command('SET', key, value); }
  flushdb() { return this.command('FLUSHDB'); }
  close() { this.sock.destroy(); }
}

export async function startRedis() {
  const bin = process.env.REDIS_SERVER || 'redis-server';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tersa-test-redis-'));
  const port = await freePort();
  const proc = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' });
  const failed = new Promise((_, reject) => {
    proc.once('error', (e) => reject(new Error(`${bin} did not start (${e.code}): install Debian's redis-server (make deps-js does)`)));
    proc.once('exit', (code) => reject(new Error(`${bin} exited with ${code}`)));
  });
  const stop = () => {
    proc.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const c = await Promise.race([new RespClient(port).connect(), failed]);
      const pong = await c.command('PING');
      c.close();
      if (pong === 'PONG') return { port, stop };
    } catch (e) {
      if (Date.now() > deadline || !/ECONNREFUSED/.test(e.message)) {
        stop();
        throw e;
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
