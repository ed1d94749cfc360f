// A redis-server of our own for one benchmark program: 127.0.0.1, a free port,
// a temporary directory, no persistence. Started and stopped by the program;
// a server that does not answer PING fails the program.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createClient, RESP_TYPES } from 'redis';

const BIN = process.env.REDIS_SERVER || 'redis-server';

/** A port the kernel just gave out and took back (another process can race for it: start() retries). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A node-redis client whose string replies are Buffers (binary values come back byte for byte). */
export async function binaryClient(url) {
  const c = createClient({ url, socket: { reconnectStrategy: false } }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  c.on('error', () => {}); // a failed command rejects its promise; the event would only duplicate it
  await c.connect();
  return c;
}

async function startOnce(dir, port) {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no',
    '--protected-mode', 'yes', '--daemonize', 'no', '--loglevel', 'warning', '--logfile', ''];
  const child = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  process.on('exit', () => { if (exited === null) child.kill('SIGKILL'); });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, sig) => { exited = sig || code; resolve(); }));
  const spawnError = new Promise((resolve) => child.on('error', resolve));
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const err = await Promise.race([spawnError, new Promise((r) => setTimeout(r, 50, null))]);
    if (err) {
      throw new Error(err.code === 'ENOENT'
        ? `${BIN} not found: install the Debian package redis-server (bench/setup does)`
        : `${BIN} could not start: ${err.message}`);
    }
    if (exited !== null) return { ok: false, why: `${BIN} exited (${exited}): ${output.trim().split('\n').slice(-3).join(' | ')}` };
    try {
      const c = await binaryClient(url);
      const pong = await c.ping();
      const info = (await c.info('server')).toString();
      await c.close();
      if (pong.toString() === 'PONG') {
        const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
        const stop = async () => {
          if (exited === null) {
            child.kill('SIGTERM');
            await Promise.race([exit, new Promise((r) => setTimeout(r, 5000).unref())]);
            if (exited === null) child.kill('SIGKILL');
          }
        };
        return { ok: true, server: { url, port, version, pid: child.pid, stop } };
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      return { ok: false, why: `${BIN} did not answer PING on port ${port} within 10 s` };
    }
  }
}

/** Starts redis-server; returns { url, port, version, pid, stop() }. Throws if it cannot be started. */
export async function startRedis() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tersa-bench-redis-'));
  // a program ended by a signal (process.exit from its handler) skips stop()
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const why = [];
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      const r = await startOnce(dir, await freePort());
      if (r.ok) {
        const stop = r.server.stop;
        r.server.stop = async () => { await stop(); fs.rmSync(dir, { recursive: true, force: true }); };
        return r.server;
      }
      why.push(r.why);
    }
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw new Error(`redis-server did not start: ${why.join('; ')}`);
}
