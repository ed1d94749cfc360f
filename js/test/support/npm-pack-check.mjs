// Run from a fresh project that installed the packed tarball (make
// test-npm-pack): the package as a user gets it, through import and require,
// with one set of classes and one extension registry across both, and
// tersa/express serving a plain node:http server (Express is no dependency).
import assert from 'node:assert/strict';
import http from 'node:http';
import { createRequire } from 'node:module';
import * as esm from 'tersa';
import * as esmExpress from 'tersa/express';

const require = createRequire(import.meta.url);
const cjs = require('tersa');
const cjsExpress = require('tersa/express');

assert.match(require.resolve('tersa'), /node_modules[\\/]tersa[\\/]dist[\\/]cjs[\\/]index\.js$/);

const value = { id: 'usr_1', n: [1, 2.5, -(3n ** 50n)], bin: new Uint8Array([1, 2]), at: new Date('2025-04-16T09:23:47Z') };
assert.deepEqual(cjs.decode(esm.encode(value)), value);
assert.deepEqual(esm.decode(cjs.encode(value)), value);

// One DecodeError class: an error thrown by either build is an instance of both.
for (const [thrower, name] of [[cjs.decode, 'require'], [esm.decode, 'import']]) {
  try {
    thrower(Uint8Array.of(0xff));
    assert.fail(`${name}: decode accepted garbage`);
  } catch (e) {
    assert.ok(e instanceof esm.DecodeError && e instanceof cjs.DecodeError, `${name}: DecodeError differs across builds`);
  }
}
assert.equal(cjs.DecodeError, esm.DecodeError);
assert.equal(cjsExpress.TersaBodyError, esmExpress.TersaBodyError);

// One extension registry: registered through import, used through require.
class Point { constructor(x, y) { this.x = x; this.y = y; } }
esm.addExtension({ type: 7, Class: Point, write: (p) => Uint8Array.of(p.x, p.y), read: (b) => new Point(b[0], b[1]) });
const p = cjs.decode(cjs.encode(new Point(3, 4)));
assert.ok(p instanceof Point);
assert.deepEqual([p.x, p.y], [3, 4]);
cjs.removeExtension(7);

// tersa/express: parser and send on node:http, over a loopback connection.
const { parser, send, MEDIA_TYPE } = cjsExpress;
const parse = parser({ limit: 64 });
const server = http.createServer((req, res) => {
  parse(req, res, (err) => {
    if (err) { res.statusCode = 500; res.end(String(err)); return; }
    send(res, { got: req.body });
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/`;
try {
  const res = await fetch(url, { method: 'POST', body: esm.encode({ a: [1, 'b'] }), headers: { 'content-type': MEDIA_TYPE } });
  assert.equal(res.headers.get('content-type'), MEDIA_TYPE);
  assert.deepEqual(esm.decode(new Uint8Array(await res.arrayBuffer())), { got: { a: [1, 'b'] } });
  const bad = await fetch(url, { method: 'POST', body: Uint8Array.of(0xff), headers: { 'content-type': MEDIA_TYPE } });
  assert.equal(bad.status, 400);
  const big = await fetch(url, { method: 'POST', body: new Uint8Array(65), headers: { 'content-type': MEDIA_TYPE } });
  assert.equal(big.status, 413);
} finally {
  server.closeAllConnections();
  server.close();
}

const pkg = require('tersa/package.json');
console.log(`npm pack: ${pkg.name} ${pkg.version} installed, import and require share classes and registry, tersa/express serves`);
