// The formats of the Redis and HTTP scenarios, each as bytes in and bytes out
// (what Redis stores and a socket carries): encode(value) -> Buffer,
// decode(Buffer) -> value. Each codec keeps one reusable instance per
// direction, as an application would; decoders never share state with
// encoders, so every stored value must be self-contained.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Packr, Unpackr } from 'msgpackr';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '..', '..', '..');

// Tersa is loaded from a copy of js/dist/esm taken when the first process of a
// run starts (its children get the copy through TERSA_JS_DIST): `npm run build`
// in js/ empties dist/ first, and a build during a run would otherwise break
// it or mix two builds in one report.
function tersaDist() {
  if (process.env.TERSA_JS_DIST) return process.env.TERSA_JS_DIST;
  const src = path.join(ROOT, 'js/dist/esm');
  if (!fs.existsSync(path.join(src, 'index.js'))) {
    throw new Error('js/dist is missing: build the TypeScript package first (make js, or cd js && npm run build)');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tersa-bench-js-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(src, dir, { recursive: true, preserveTimestamps: true });
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n'); // the .js files are ES modules
  process.env.TERSA_JS_DIST = dir;
  return dir;
}
const TERSA_DIST = tersaDist();
const TERSA_BUILT = fs.statSync(path.join(TERSA_DIST, 'index.js')).mtime;
const tersa = await import(pathToFileURL(path.join(TERSA_DIST, 'index.js')).href);

const asBuffer = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);

/** name => { contentType, make() -> { encode, decode } }: make() gives fresh instances (one set per process). */
export const CODECS = {
  json: {
    contentType: 'application/json',
    about: 'JSON.stringify to a UTF-8 Buffer / JSON.parse of its text',
    make: () => ({
      encode: (v) => Buffer.from(JSON.stringify(v)),
      decode: (b) => JSON.parse(b.toString('utf8')),
    }),
  },
  msgpackr: {
    contentType: 'application/msgpack',
    about: 'msgpackr Packr({useRecords: false}).pack / Unpackr.unpack',
    make: () => {
      const p = new Packr({ useRecords: false });
      const u = new Unpackr({ useRecords: false });
      return { encode: (v) => p.pack(v), decode: (b) => u.unpack(b) };
    },
  },
  'msgpackr-records': {
    contentType: 'application/msgpack',
    about: 'msgpackr Packr({useRecords: true}): record definitions inline in each value (no shared structures), decoded by a separate Unpackr',
    make: () => {
      const p = new Packr({ useRecords: true });
      const u = new Unpackr({ useRecords: true });
      return { encode: (v) => p.pack(v), decode: (b) => u.unpack(b) };
    },
  },
  tersa: {
    contentType: 'application/x-tersa',
    about: 'Tersa Encoder.encode / Decoder.decode from js/dist (one of each, reused)',
    make: () => {
      const e = new tersa.Encoder();
      const d = new tersa.Decoder();
      return { encode: (v) => asBuffer(e.encode(v)), decode: (b) => d.decode(b) };
    },
  },
};

export const CODEC_NAMES = Object.keys(CODECS);

/** Library versions for the report. */
export function versions() {
  // read from node_modules: some packages do not export their package.json
  const v = (name) => JSON.parse(fs.readFileSync(path.join(HERE, '..', 'node_modules', name, 'package.json'), 'utf8')).version;
  const tersaPkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'js/package.json'), 'utf8'));
  return {
    tersa: `${tersaPkg.version} (js/dist, built ${TERSA_BUILT.toISOString().slice(0, 16).replace('T', ' ')} UTC)`,
    msgpackr: v('msgpackr'),
    redis: v('redis'),
    express: v('express'),
    undici: v('undici'),
  };
}
